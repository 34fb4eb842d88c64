"""A reference to a vault secret written in a note in place of its value: `{{secret:ID}}`.

`muninn secret move` writes it; the exporter renders it as `<vault secret ID>` before redaction, a form no
pattern rule or leak-gate check reads as a credential (the raw reference, `secret:` plus an id, looks
like a labelled secret to them). An agent that reads the fact asks `recall_secret_show ID` for how to use it.
"""

from __future__ import annotations

import re

REF = re.compile(r"\{\{secret:([A-Za-z0-9][A-Za-z0-9._-]*)\}\}")


def reference(secret_id: str) -> str:
    return f"{{{{secret:{secret_id}}}}}"


def render(text: str) -> str:
    """The text as a fact shows it: every reference as `<vault secret ID>`."""
    return REF.sub(lambda m: f"<vault secret {m.group(1)}>", text) if "{{secret:" in text else text
