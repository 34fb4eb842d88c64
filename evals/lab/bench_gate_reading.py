"""The leak gate's guess reading of undeclared secrets (issue 47 §2): who catches each case, drops on
ordinary text, and speed.

Run: `.venv/bin/python -m muninn.evals.lab.bench_gate_reading [--trees DIR]`. Prints markdown for
evals/results/security_round4.md.

- Cases: evals/lab/undeclared_cases.py and the round-4 shapes of tests/test_rules_round4.py. *Redactor*:
  the secret is gone from what export writes (`Redactor.for_facts({})`); *gate*: `LeakGate({})` flags the
  secret's line in the text as written.
- Ordinary text: the prose set of bench_security_export.py, the sample notes and files under examples/,
  the repo's README and docs, and the manuals and conversations the corpus harness converted to notes
  (`~/.cache/muninn/corpora/trees`: Debian Reference, Debian Administrator's Handbook, PostgreSQL, Apache
  httpd, LoCoMo); dpkg's `*.md5sums` and pip `RECORD` files. A drop is any gate finding on the redacted text.
- Speed: the reading alone (`gate_undeclared.findings`) over the two Debian manuals, guess cache cold,
  best of three; and the whole gate (`LeakGate({}).scan`, no known values) the same way.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from collections import Counter
from pathlib import Path

from muninn.evals import lab
from muninn.evals.lab.bench_security_export import PROSE_FILES
from muninn.evals.lab.bench_undeclared import digest_texts
from muninn.evals.lab.undeclared_cases import cases
from muninn.guards.gate import gate_undeclared
from muninn.guards.gate.leak_gate import LeakGate
from muninn.guards.redact.redactor import Redactor

ROOT = lab.REPO
TREES = Path.home() / ".cache" / "muninn" / "corpora" / "trees"
MANUALS = ("debian-reference", "debian-handbook", "postgresql", "apache-httpd", "locomo-30")


def round4_cases() -> list[tuple[str, str, str]]:
    spec = importlib.util.spec_from_file_location("rules_round4", ROOT / "tests" / "test_rules_round4.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [("round-4", text, secret) for text, secret in module.CASES.values()]


def _gate_reads(gate: LeakGate, text: str, secret: str) -> bool:
    starts = {text.count("\n", 0, i) + 1 for i in range(len(text)) if text.startswith(secret, i)}
    return any(f.line in starts for f in gate.scan(text))


def tally(export: Redactor) -> dict[str, Counter[str]]:
    gate = LeakGate({})
    out: dict[str, Counter[str]] = {k: Counter() for k in ("both", "redactor only", "gate only", "neither")}
    for cls, text, secret in cases() + round4_cases():
        redactor = secret not in export.redact(text).text
        flagged = _gate_reads(gate, text, secret)
        key = "both" if redactor and flagged else "redactor only" if redactor else "gate only" if flagged \
            else "neither"
        out[key][cls] += 1
    return out


def control_sets(trees: Path) -> dict[str, list[Path]]:
    examples = sorted(p for p in (ROOT / "examples").rglob("*")
                      if p.is_file() and p.suffix in (".md", ".yaml", ".jsonl"))
    sets = {"prose set": [p for p in PROSE_FILES if p.is_file()], "examples/": examples,
            "README + docs/": [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]}
    for name in MANUALS:
        if (trees / name).is_dir():
            sets[name] = sorted(p for p in (trees / name).rglob("*") if p.is_file())
    for name, files in digest_texts().items():   # base64 and hex digests by the thousand
        sets[name] = [Path(p) for p, _ in files]
    return sets


def drops(export: Redactor, files: list[Path]) -> tuple[int, int, list[str]]:
    gate = LeakGate({})
    chars, listed = 0, []
    for path in files:
        text = path.read_text(errors="replace")
        chars += len(text)
        found = gate.scan(export.redact(text).text)
        if found:
            listed.append(f"{path.name}: {sorted({(f.reason, f.line) for f in found})[:5]}")
    return len(files), chars, listed


def speed(texts: list[str], read) -> float:
    best = float("inf")
    for _ in range(3):
        gate_undeclared.guesses.cache_clear()
        start = time.perf_counter()
        for text in texts:
            read(text)
        best = min(best, time.perf_counter() - start)
    return sum(map(len, texts)) / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=Path, default=TREES)
    args = parser.parse_args()
    export = Redactor.for_facts({})
    counts = tally(export)
    classes = sorted({c for by in counts.values() for c in by})
    print("| class | both | redactor only | gate only | neither |\n|---|---:|---:|---:|---:|")
    for c in classes:
        print(f"| {c} | " + " | ".join(str(counts[k][c]) for k in counts) + " |")
    print("| **all** | " + " | ".join(str(sum(counts[k].values())) for k in counts) + " |\n")
    print("| ordinary text | files | characters | files dropped |\n|---|---:|---:|---:|")
    listed_all = []
    for name, files in control_sets(args.trees).items():
        n, chars, listed = drops(export, files)
        listed_all += listed
        print(f"| {name} | {n} | {chars:,} | {len(listed)} |")
    print("", *listed_all, sep="\n")
    debian = [p.read_text(errors="replace") for name in MANUALS[:2] if (args.trees / name).is_dir()
              for p in sorted((args.trees / name).rglob("*")) if p.is_file()]
    gate = LeakGate({})
    print(f"\nDebian manuals, {sum(map(len, debian)):,} characters: the guess reading "
          f"{speed(debian, gate_undeclared.findings) / 1e6:.2f} M chars/s, the whole gate "
          f"{speed(debian, gate.scan) / 1e6:.2f} M chars/s")


if __name__ == "__main__":
    main()
