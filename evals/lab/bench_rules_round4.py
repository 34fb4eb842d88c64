"""Round-4 redaction rules on ordinary text: every hit of the rules issue 47 §2 added (password hashes,
webhook URLs, recovery codes, expect's send, YAML block scalars, table credentials, the apposition after
"passphrase,") on the three Debian manuals and the prose set is a false redaction, listed to be judged.

Run: `.venv/bin/python -m muninn.evals.lab.bench_rules_round4 [--debs DIR]` (the manuals as
bench_undeclared.py fetches them). Prints a markdown table and the hits.
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path

from muninn.evals.lab.bench_undeclared import fetch_debs, manual_texts
from muninn.guards.redact.redactor import Redactor

NEW = ("password-hash", "webhook-url", "recovery-code", "expect-send", "yaml-block-secret", "table-credential",
       "prose-password")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--debs", type=Path, default=Path(tempfile.gettempdir()) / "muninn-undeclared-debs")
    args = parser.parse_args()
    export = Redactor.for_facts({})
    with tempfile.TemporaryDirectory() as work:
        texts = manual_texts(fetch_debs(args.debs), Path(work))
        print("| text | files | characters | " + " | ".join(NEW) + " |")
        print("|---|---:|---:|" + "---:|" * len(NEW))
        listed = []
        for corpus, files in texts.items():
            counts: Counter[str] = Counter()
            for name, text in files:
                for h in export.redact(text).hits:
                    if h.kind == "pattern" and h.secret_id in NEW:
                        counts[h.secret_id] += 1
                        line = text.count("\n", 0, h.start) + 1
                        listed.append(f"| {corpus} | `{name}:{line}` | {h.secret_id} | `{text[h.start:h.end][:50]}` |")
            size = sum(len(t) for _, t in files)
            print(f"| {corpus} | {len(files)} | {size:,} | " + " | ".join(str(counts[n]) for n in NEW) + " |")
        print("\n| text | where | rule | redacted |\n|---|---|---|---|")
        print("\n".join(listed) or "| - | - | - | - |")


if __name__ == "__main__":
    main()
