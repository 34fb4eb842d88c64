"""GitHub tokens: classic (`ghp_` and friends) and fine-grained (`github_pat_`)."""

from __future__ import annotations

import re

from muninn.guards.rules import Rule


class GitHubToken(Rule):
    name = "github-token"
    patterns = (re.compile(r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),)
    boundary = True
    triggers = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")
