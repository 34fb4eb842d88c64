"""AWS access key ids, and secret keys next to their usual names."""

from __future__ import annotations

import re

from muninn.guards.rules import Rule, register


@register
class AwsKey(Rule):
    name = "aws-key"
    patterns = (
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|A3T[A-Z0-9])[A-Z0-9]{16}\b"),
        re.compile(r"(?i)aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?(?P<secret>[A-Za-z0-9/+=]{40})\b"),
    )
    triggers = ("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "a3t", "aws")
