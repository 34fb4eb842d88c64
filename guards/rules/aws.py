"""AWS access key ids. Secret access keys have no shape of their own; the labelled rule takes
`aws_secret_access_key = …` and the value pass takes known ones."""

from __future__ import annotations

import re

from muninn.guards.rules import Rule


class AwsKey(Rule):
    name = "aws-key"
    patterns = (re.compile(r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])"),)
    triggers = ("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "a3t")
    boundary = True
