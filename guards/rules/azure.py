"""Azure storage account keys, SAS signatures and client secrets (`xxx8Q~…`)."""

from __future__ import annotations

import re

from muninn.guards.rules import Rule


class AzureKey(Rule):
    name = "azure-key"
    patterns = (
        re.compile(r"AccountKey=(?P<secret>[A-Za-z0-9+/=]{40,})"),
        re.compile(r"[?&]sig=(?P<secret>[A-Za-z0-9%+/=]{20,})"),
        re.compile(r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}"),
    )
    triggers = ("accountkey=", "sig=", "q~")
