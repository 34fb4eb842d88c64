"""Red team, round 5: round 4's drivers (evals/lab/redteam4.py) over the bank of evals/lab/redteam5_cases.py.

    .venv/bin/python -m muninn.evals.lab.redteam5 [--json] [--class undeclared ...] [--list] [--corpora]
                                                  [--write-markers tests/redteam_round5/_rt5_markers.py]

The same entry points, probes and verdicts as round 4 (see that module's docstring); one channel more for
known values: "two notes", the pieces of a value in two notes of one tree, through when every piece comes
out of export.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from muninn.evals.lab import redteam4
from muninn.evals.lab.redteam4 import CLASSES, Lab, Outcome, corpus_controls, gate_alone, opened, summary
from muninn.evals.lab.redteam5_cases import Case, cases


def probe_known(lab_: Lab, case: Case) -> tuple[bool, str]:
    if case.payload["channel"] != "two notes":
        return redteam4.probe_known(lab_, case)
    from muninn.export import pipeline
    from muninn.guards.known import secret_values

    base = lab_.fresh("notes")
    notes, out = base / "notes", base / "out"
    notes.mkdir(parents=True)
    for i, form in enumerate(case.payload["forms"]):
        (notes / f"part-{i + 1}.md").write_text(f"# Part {i + 1}\n\n{form}\n")
    report = pipeline.run("notes", notes, out, known=secret_values.known(lab_.settings))
    seen = [json.dumps(asdict(report), default=str, ensure_ascii=False)]
    seen += [p.read_text(errors="replace") for p in sorted(out.rglob("*")) if p.is_file()]
    written = "\n".join(seen)
    left = [s for s in case.secrets if s in written]
    return len(left) == len(case.secrets), f"left: {len(left)} of {len(case.secrets)} pieces"


PROBES: dict[str, Callable[[Lab, Case], tuple[bool, str]]] = {**redteam4.PROBES, "known": probe_known}


def run_case(lab_: Lab, case: Case) -> Outcome:
    hit, detail = PROBES[case.klass](lab_, case)
    alone = gate_alone(case) if case.klass == "undeclared" else None
    return Outcome(case.klass, case.name, case.control, hit, detail, alone)


def markers(outcomes: list[Outcome]) -> str:
    """tests/redteam_round5/_rt5_markers.py: which cases are strict xfails, with what came out."""
    text = redteam4.markers(outcomes).replace("muninn.evals.lab.redteam4", "muninn.evals.lab.redteam5")
    return "# ruff: noqa: E501  (details quote what came out, escapes included)\n" + text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="one JSON object: per class counts, and every outcome")
    ap.add_argument("--class", dest="classes", action="append", choices=CLASSES)
    ap.add_argument("--list", action="store_true", help="print every outcome, not only the counts")
    ap.add_argument("--corpora", action="store_true",
                    help="also count false hits on LoCoMo's reports (dates) and git's release notes (export)")
    ap.add_argument("--write-markers", type=Path, metavar="FILE",
                    help="write the xfail markers of tests/redteam_round5 (_rt5_markers.py) from this run")
    args = ap.parse_args()
    chosen = [c for c in cases() if not args.classes or c.klass in args.classes]
    with opened() as lab_:
        outcomes = [run_case(lab_, c) for c in chosen]
        corpora: dict[str, Any] = corpus_controls(lab_) if args.corpora else {}
    counts = summary(outcomes)
    if args.write_markers:
        args.write_markers.write_text(markers(outcomes))
    if args.json:
        print(json.dumps({"classes": counts, "corpora": corpora, "outcomes": [asdict(o) for o in outcomes]},
                         indent=1, ensure_ascii=False))
        return
    print(f"{'class':<12}{'cases':>6}{'through':>9}{'controls':>10}{'falsely hit':>13}")
    for klass, c in counts.items():
        print(f"{klass:<12}{c['cases']:>6}{c['through']:>9}{c['controls']:>10}{c['falsely_hit']:>13}")
    if "undeclared" in counts:
        u = counts["undeclared"]
        print(f"leak gate alone on the undeclared notes: missed {u['gate_alone_missed']} of {u['cases']}, "
              f"flagged {u['gate_alone_dropped_controls']} of {u['controls']} controls")
    for name, c in corpora.items():
        print(f"{name}: {c['falsely_hit']} of {c['texts']} falsely hit")
    if args.list:
        for o in outcomes:
            if o.hit:
                print(f"  {'FALSE POSITIVE' if o.control else 'THROUGH'} {o.klass}:{o.name}: {o.detail}")


if __name__ == "__main__":
    main()
