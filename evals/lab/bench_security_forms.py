"""Measure the forms of a declared value (issue 31 §5-7) per class: cases, hidden by export, flagged
by the leak gate, masked in a child's output.

Run: `.venv/bin/python -m muninn.evals.lab.bench_security_forms`. Prints a markdown table (pasted into
evals/results/security_export.md and security_exec.md) and the misses, if any, by case name.

Hidden: the export redactor (`Redactor.for_facts` without patterns) leaves neither the value nor
any form the leak gate finds in its output. Flagged: the gate finds the value in the input.
Masked: the exec masker's output no longer holds the form (JSON writers only: a stream has no views).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable

from muninn.evals.lab import forms_cases
from muninn.evals.lab.forms_cases import Case
from muninn.guards.gate.leak_gate import LeakGate
from muninn.guards.redact.mask import mask_bytes, masking_redactor
from muninn.guards.redact.redactor import ENCODINGS, Redactor, marker

CLASSES: dict[str, tuple[str, Callable[[dict[str, str]], Iterable[Case]]]] = {
    "dumps": ("dumps tools print (14 layouts of xxd, hexdump, od) × UTF-8/UTF-16 LE/BE × 5 alignments",
              forms_cases.dump_cases),
    "encodings": ("encodings and byte spellings (base85, ascii85, uuencode, byte arrays, \\x/octal strings, "
                  "UTF-16 base64/hex, code points)", forms_cases.encoding_cases),
    "terminal": ("terminal codes inside a value (9 sequences × 6 ESC spellings × every position; overstrike)",
                 forms_cases.terminal_cases),
    "markup": ("markup that hides characters (HTML comments, long ones, tags; markdown links) × every position",
               forms_cases.markup_cases),
    "case": ("values that are not ASCII in another case, decomposed, transliterated (27 letters)",
             forms_cases.case_cases),
    "look-alike": ("look-alike letters, every pair of Unicode's table both ways, and I/l/1, O/0",
                   lambda vals: forms_cases.lookalike_cases()),
    "json": ("JSON writers (Python both ways, node, perl JSON::PP, Go, .NET, PHP)",
             lambda vals: forms_cases.json_writer_cases()),
}


def hidden(redactor: Redactor, gate: LeakGate, case: Case) -> bool:
    """Something was redacted, and the output holds no known value in any form the gate reads (a
    case's value may be another's look-alike or spelling: either id may name the span)."""
    out = redactor.redact(case.text).text
    return "[REDACTED:" in out and case.value not in out and not gate.scan(out)


def measure(only: Iterable[str] = CLASSES) -> tuple[list[tuple], dict[str, list[str]]]:
    vals = forms_cases.values()
    rows: list[tuple] = []
    misses: dict[str, list[str]] = {}
    for klass in only:
        label, cases_of = CLASSES[klass]
        cases = list(cases_of(vals))
        known = {v: f"f{i:03d}" for i, v in enumerate(dict.fromkeys(c.value for c in cases))}
        redactor = Redactor(known, patterns=False, encodings=ENCODINGS, views=True)
        gate = LeakGate(known, patterns=False)
        masker = masking_redactor(known) if klass == "json" else None
        n_hidden = n_gated = n_masked = 0
        missed: Counter[str] = Counter()
        start = time.perf_counter()
        for case in cases:
            h = hidden(redactor, gate, case)
            g = bool(gate.scan(case.text))
            n_hidden += h
            n_gated += g
            if masker is not None:
                n_masked += marker(known[case.value]).encode() in mask_bytes(masker, [case.text.encode()])
            if not h or not g:
                missed[f"{case.name.split(' @')[0]}{'' if h else ' [export]'}{'' if g else ' [gate]'}"] += 1
        rows.append((label, len(cases), n_hidden, n_gated, n_masked if masker else "–",
                     time.perf_counter() - start))
        misses[klass] = [f"{n} × {name}" for name, n in missed.most_common()]
    return rows, misses


def write(rows: list[tuple], misses: dict[str, list[str]]) -> str:
    lines = ["| class | cases | hidden by export | flagged by the gate | masked by exec |", "|---|---:|---:|---:|---:|"]
    lines += [f"| {label} | {n} | {h} | {g} | {m} |" for label, n, h, g, m, _ in rows]
    by = defaultdict(list)
    for klass, names in misses.items():
        by[klass] = names
    for klass, names in by.items():
        if names:
            lines += ["", f"Misses in {klass}:", *[f"- {n}" for n in names[:60]]]
    lines += ["", "Seconds per class: " + ", ".join(f"{label.split(' (')[0]} {s:.1f}" for label, *_, s in rows)]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=list(CLASSES), choices=list(CLASSES))
    args = ap.parse_args()
    print("tools:", forms_cases.tool_report())
    rows, misses = measure(args.only)
    print(write(rows, misses))


if __name__ == "__main__":
    main()
