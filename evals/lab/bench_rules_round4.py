"""Round-4 redaction rules on ordinary text: every hit of the rules issue 47 §2 added (password hashes,
webhook URLs, recovery codes, expect's send, YAML block scalars, table credentials, the apposition after
"passphrase,") on the three Debian manuals and the prose set is a false redaction, listed to be judged.
With `--tree ROOT`, also the text files under ROOT's docs/ and examples/ (the project's own prose; they
quote rule examples, so judge the listed hits), and the leak gate's drops on each corpus after redaction.

Run: `.venv/bin/python -m muninn.evals.lab.bench_rules_round4 [--debs DIR] [--tree ROOT]` (the manuals as
bench_undeclared.py fetches them). Prints a markdown table and the hits.
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path

from muninn.evals.lab.bench_undeclared import fetch_debs, manual_texts
from muninn.guards.gate.leak_gate import LeakGate
from muninn.guards.redact.redactor import Redactor

_TEXT = frozenset((".md", ".txt", ".jsonl", ".json", ".yaml", ".yml", ".toml", ".sh", ".py", ".cfg", ".ini", ""))
NEW = ("password-hash", "webhook-url", "recovery-code", "expect-send", "yaml-block-secret", "table-credential",
       "prose-password")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--debs", type=Path, default=Path(tempfile.gettempdir()) / "muninn-undeclared-debs")
    parser.add_argument("--tree", type=Path, help="also read ROOT/docs and ROOT/examples")
    args = parser.parse_args()
    export = Redactor.for_facts({})
    gate = LeakGate({})
    with tempfile.TemporaryDirectory() as work:
        texts = manual_texts(fetch_debs(args.debs), Path(work))
        for sub in ("docs", "examples") if args.tree else ():
            texts[sub] = [(str(p.relative_to(args.tree)), p.read_text(errors="replace"))
                          for p in sorted((args.tree / sub).rglob("*")) if p.is_file() and p.suffix in _TEXT]
        print("| text | files | characters | " + " | ".join(NEW) + " | gate drops |")
        print("|---|---:|---:|" + "---:|" * (len(NEW) + 1))
        listed = []
        for corpus, files in texts.items():
            counts: Counter[str] = Counter()
            drops = 0
            for name, text in files:
                out = export.redact(text)
                drops += bool(gate.scan(out.text))
                for h in out.hits:
                    if h.kind == "pattern" and h.secret_id in NEW:
                        counts[h.secret_id] += 1
                        line = text.count("\n", 0, h.start) + 1
                        listed.append(f"| {corpus} | `{name}:{line}` | {h.secret_id} | `{text[h.start:h.end][:50]}` |")
            size = sum(len(t) for _, t in files)
            print(f"| {corpus} | {len(files)} | {size:,} | " + " | ".join(str(counts[n]) for n in NEW)
                  + f" | {drops} |")
        print("\n| text | where | rule | redacted |\n|---|---|---|---|")
        print("\n".join(listed) or "| - | - | - | - |")


if __name__ == "__main__":
    main()
