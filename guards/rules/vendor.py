"""Other prefixed tokens seen in ops notes: GitLab, OpenAI, Anthropic, npm, PyPI, SendGrid,
HashiCorp Vault, Hugging Face, DigitalOcean."""

from __future__ import annotations

import re

from muninn.guards.rules import Rule


class VendorToken(Rule):
    name = "vendor-token"
    patterns = (
        re.compile(
            r"(?:gl(?:pat|dt|ft|soat|rt|cbt)-[A-Za-z0-9_-]{20,}|sk-(?:proj-|ant-[a-z0-9]+-)?[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{36}"
            r"|pypi-[A-Za-z0-9_-]{50,}|SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}|hv[sbr]\.[A-Za-z0-9_-]{24,}"
            r"|hf_[A-Za-z0-9]{30,}|do[po]_v1_[a-f0-9]{64})"
        ),
    )
    boundary = True
    triggers = ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "sk-", "npm_", "pypi-", "sg.", "hvs.",
                "hvb.", "hvr.", "hf_", "_v1_")
