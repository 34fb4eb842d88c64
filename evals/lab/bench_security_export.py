"""Measure export redaction per class of issue 16 §2, and its false redactions on ordinary prose.

Run: `.venv/bin/python -m muninn.evals.lab.bench_security_export [--values 200]`. Writes
evals/results/security_export.md. Random values are drawn with a fixed seed, so reruns agree.

Per class: how many cases, how many the export redactor hid, and how many the leak gate flagged
(where the gate applies). False redactions: the export redactor (every form, the normalised and
folded views, cut prefixes, all rules) over ordinary English (the example notes, README.md, a few
Debian documents and git release notes) with the example secrets plus the random values known,
against the redactor configured as before issue 16 (raw values only, no views, without the two
new rules). Every redaction on that prose is a false one: none of it holds a value.
"""

from __future__ import annotations

import argparse
import random
import string
import subprocess
import tempfile
import time
from pathlib import Path

import yaml

from muninn.evals import lab
from muninn.evals.lab.security_cases import (
    FALSE_POSITIVES,
    OVERLAPS,
    PROSE_CASES,
    SHELL_CASES,
    SHELL_PRINTERS,
    SPLITS,
    random_values,
)
from muninn.export import pipeline
from muninn.export.sync import local_files
from muninn.export.sync_gate import SyncGate
from muninn.guards.gate.leak_gate import LeakGate
from muninn.guards.known import forms, secret_values
from muninn.guards.redact.mask import mask_bytes, masking_redactor
from muninn.guards.redact.patterns import PatternScanner
from muninn.guards.redact.redactor import ENCODINGS, Redactor
from muninn.guards.rules import all_rules

ROOT = lab.REPO
RESULTS = ROOT / "evals" / "results" / "security_export.md"
# README.md and docs/*.md: the manual that was all README until issue 30 moved most of it to docs/.
PROSE_FILES = [*sorted((ROOT / "examples" / "notes").rglob("*.md")), ROOT / "README.md",
               *sorted((ROOT / "docs").glob("*.md")),
               Path("/usr/share/common-licenses/GPL-3"), Path("/usr/share/common-licenses/Apache-2.0"),
               Path("/usr/share/doc/dpkg/spec/triggers.txt"),
               *sorted(Path("/usr/share/doc/git/RelNotes").glob("2.4*.txt"))]


def _bash_forms(value: str) -> list[str]:
    script = "; ".join(f"({s})" for s in SHELL_PRINTERS.values())
    done = subprocess.run(["bash", "-c", script, "_", value], capture_output=True, text=True, check=True)
    return [line for line in done.stdout.splitlines() if line]


def _row(rows: list[tuple], name: str, cases: int, hidden: int, gated: int | str = "–") -> None:
    rows.append((name, cases, hidden, gated))


def measure(n: int) -> tuple[list[tuple], dict[str, object]]:
    rng = random.Random(16)
    known = random_values(n, rng)
    redactor = Redactor(known, patterns=False, encodings=ENCODINGS, views=True)
    gate = LeakGate(known)
    masker = masking_redactor(known)
    rows: list[tuple] = []

    cases = hidden = gated = masked = 0
    for value in known:
        for form in forms.forms_of(value, ENCODINGS):
            text = f"out: {form} end"
            cases += 1
            hidden += form not in redactor.redact(text).text
            gated += bool(gate.scan(text))
        for printed in _bash_forms(value):
            cases += 1
            hidden += "[REDACTED:" in redactor.redact(printed).text
            gated += bool(gate.scan(printed))
            masked += b"[REDACTED:" in mask_bytes(masker, [printed.encode()])
    _row(rows, "encoded and shell-quoted forms (table + bash printf %q, declare -p, ${v@Q}, set)", cases, hidden,
         gated)
    bash_cases = 4 * n

    cases = hidden = gated = 0
    for value, secret_id in known.items():
        for _, split in SPLITS:
            text = f"the value {split(value)} here"
            cases += 1
            hidden += f"[REDACTED:{secret_id}]" in redactor.redact(text).text
            gated += bool(gate.scan(text))
    _row(rows, f"split forms ({len(SPLITS)} ways: markup, zero-width, soft hyphen, wraps, full-width)", cases,
         hidden, gated)

    cases = hidden = 0
    for value in known:
        if value.replace(" ", "").isalpha():
            continue
        for keep in range(forms_min := 6, len(value)):
            for tail in ("", "…", "\nnext"):
                cases += 1
                hidden += value[:keep] not in redactor.redact(f"title: {value[:keep]}{tail}").text
    _row(rows, f"cut prefixes (≥{forms_min} characters kept at an end, `…` or a line end)", cases, hidden)

    cases = hidden = gated = 0
    pairs = list(OVERLAPS)
    for _ in range(n):
        a = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(12))
        k = rng.randint(2, 10)
        b = a[-k:] + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(8))
        pairs.append(({a: "a", b: "b"}, f"x {a}{b[k:]} y"))
    for pair, text in pairs:
        cases += 1
        out = Redactor(pair, patterns=False).redact(text).text
        hidden += all(v[i:i + 3] not in out for v in pair for i in range(len(v) - 2))
        gated += {f.secret_id for f in LeakGate(pair).scan(text)} == set(pair.values())
    _row(rows, "overlapping known values", cases, hidden, gated)

    cases = hidden = gated = 0
    for value in known:
        base = forms.fold(value)
        for variant in (value, value.lower(), value.upper(), base, f"{base[:3]}-{base[3:]}", f"{base[:3]}_{base[3:]}",
                        value.replace(" ", "-")):
            path = f"notes/runbooks/{variant.replace('/', '-')}/rollback.md"
            cases += 1
            hidden += base not in forms.fold(redactor.redact_path(path))
            gated += bool(gate.scan_path(path))
    _row(rows, "paths: case, slug and separator variants in a name", cases, hidden, gated)

    with tempfile.TemporaryDirectory() as tmp:
        e2e = _export_names(Path(tmp), dict(list(known.items())[:40]))
    _row(rows, "paths end to end: file, folder, heading, title → export → every path, id, ledger", *e2e)

    rules = PatternScanner(rules=list(all_rules().values()), use_ds=False)
    caught = sum(any(s in t[x.start:x.end] for x in rules.scan(t)) for t, s in SHELL_CASES)
    _row(rows, "command-line passwords (sshpass, mysql, docker login, redis-cli, htpasswd, env)", len(SHELL_CASES),
         caught)
    caught = sum(any(s in t[x.start:x.end] for x in rules.scan(t)) for t, s in PROSE_CASES)
    _row(rows, "passwords in prose and other languages", len(PROSE_CASES), caught)
    new = PatternScanner(rules=[all_rules()["shell-password"], all_rules()["prose-password"]], use_ds=False)
    _row(rows, "… their false-positive table (ordinary sentences; hidden = wrongly redacted)", len(FALSE_POSITIVES),
         sum(bool(new.scan(t)) for t in FALSE_POSITIVES))

    declared = [v for v in known if len(v) >= 6]
    hints = ["summer", "bluefish", "Tuesday", "kestrel", "orange", "STAGING"]
    _row(rows, "declared values kept (random ≥ 6 characters, phrases)", len(declared),
         sum(secret_values.is_declared_secret(v) for v in declared))
    _row(rows, "declared hint words left alone (hidden = wrongly kept)", len(hints),
         sum(secret_values.is_declared_secret(v) for v in hints))

    with tempfile.TemporaryDirectory() as tmp:
        _row(rows, "sync re-gate: hand-added, edited, leaky text, leaky name (refused by name)",
             *_sync_cases(Path(tmp)))
    return rows, {"values": n, "bash_printed": bash_cases, **prose_false_redactions(known)}


def _export_names(tmp: Path, known: dict[str, str]) -> tuple[int, int, int]:
    notes = tmp / "notes"
    body = "Ordinary text about rotating credentials.\n" * 4
    for i, value in enumerate(known):
        name = value.replace("/", "-")
        for path, text in (   # a file name, a folder name, a heading
                (notes / "a" / f"{i}-{name}.md", f"# Doc {i}\n\n{body}"),
                (notes / f"{name}-{i}" / "readme.md", f"# Readme {i}\n\n{body}"),
                (notes / f"h{i}.md", f"# Intro {i}\n\n{body}\n## Rotate {value}\n\n{body}")):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    secrets = tmp / "secrets.yaml"
    secrets.write_text(yaml.safe_dump([{"id": sid, "value": value} for value, sid in known.items()]))
    pipeline.run("notes", notes, tmp / "out", [secrets])
    everything = "\n".join([p.relative_to(tmp / "out").as_posix() for p in (tmp / "out").rglob("*")]
                           + [p.read_text() for p in (tmp / "out").rglob("*") if p.is_file()])
    folded = forms.fold(everything)
    leaked = sum(forms.fold(v) in folded for v in known)
    gate = LeakGate(secret_values.collect([secrets]))
    return 3 * len(known), 3 * len(known) - 3 * leaked, "clean" if gate.check_tree(tmp / "out").clean else "FLAGGED"


def _sync_cases(tmp: Path) -> tuple[int, int, str]:
    notes = tmp / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nRestart the worker.\n")
    secrets = tmp / "s.yaml"
    secrets.write_text('- id: tok\n  value: "Zq7#kP2x"\n')
    out = tmp / "out"
    changes = {"hand.md": "# hand\n", "leaky.md": "# x\n\nZq7#kP2x\n", "zq7-kp2x.md": "# x\n"}
    cases = refused = 0
    gate = SyncGate.from_known(secret_values.collect([secrets]))
    for name, text in [*changes.items(), ("edit", None)]:
        pipeline.run("notes", notes, out, [secrets])
        for extra in changes:
            (out / extra).unlink(missing_ok=True)
        if text is None:
            (out / "a.md").write_text((out / "a.md").read_text() + "edited\n")
        else:
            (out / name).write_text(text)
        cases += 1
        refused += bool(gate.refused(out, local_files(out)))
    pipeline.run("notes", notes, out, [secrets])
    for extra in changes:
        (out / extra).unlink(missing_ok=True)
    clean = "0 refused when untouched" if not gate.refused(out, local_files(out)) else "REFUSED CLEAN"
    return cases, refused, clean


def prose_false_redactions(known: dict[str, str]) -> dict[str, object]:
    known = {**known, **secret_values.collect([ROOT / "examples" / "secrets.yaml"])}
    files = [p for p in PROSE_FILES if p.is_file()]
    docs = [p.read_text(errors="replace") for p in files]
    old_rules = [r for name, r in all_rules().items() if name not in ("shell-password", "prose-password")]
    before = Redactor({v: i for v, i in known.items() if secret_values.is_secretish(v)},
                      scanner=PatternScanner(rules=old_rules))
    after = Redactor(known, patterns=True, encodings=ENCODINGS, views=True)
    by_kind: dict[str, int] = {}
    where: list[str] = []
    times = {}
    for name, r in (("before", before), ("after", after)):
        start = time.perf_counter()
        for path, doc in zip(files, docs, strict=True):
            for line_no, line in enumerate(doc.splitlines(), 1):
                for h in r.redact(line).hits:
                    key = f"{name}:{h.rule if h.kind == 'pattern' else 'value/' + h.rule}"
                    by_kind[key] = by_kind.get(key, 0) + 1
                    if name == "after":
                        where.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{line_no} "
                                     f"({h.rule})")
        times[name] = time.perf_counter() - start
    size = sum(len(d.encode()) for d in docs)
    return {"files": len(files), "bytes": size, "lines": sum(d.count("\n") + 1 for d in docs), "by_kind": by_kind,
            "where": where, "seconds": times}


def export_cost(facts: int = 1500, values: int = 10_000) -> list[str]:
    """The price of the new checks: export of a synthetic task record (evals/bench_export.py) with
    the guards built as before issue 16 (raw values only, no views) and as now, alternated twice."""
    import shutil

    from muninn.evals.bench_export import build_record
    from muninn.export import sources

    root = Path(tempfile.mkdtemp(prefix="muninn-sec-cost-"))
    db, secrets = build_record(root, facts, values, random.Random(11))
    known = secret_values.collect([secrets])
    start = time.perf_counter()
    before = pipeline.Guards(redactor=Redactor(known, patterns=True), gate=LeakGate(known, encodings=("raw",)),
                             known=len(known))
    built = {"before": time.perf_counter() - start}
    start = time.perf_counter()
    now = pipeline.Guards.from_files([secrets])
    built["now"] = time.perf_counter() - start
    runs: dict[str, list[float]] = {"before": [], "now": []}
    for name, guards in (("before", before), ("now", now)) * 2:
        shutil.rmtree(root / "out", ignore_errors=True)
        start = time.perf_counter()
        report = pipeline.write_facts("tasks", db, sources.build("tasks", db, None).facts(), root / "out", guards)
        runs[name].append(report.facts / (time.perf_counter() - start))
    shutil.rmtree(root, ignore_errors=True)
    return [f"| {label} | {built[name]:.1f} s | {max(runs[name]):.0f} facts/s |" for name, label in
            (("before", "raw values, no views (as before issue 16)"), ("now", "every form, views, cut prefixes"))]


def write(rows: list[tuple], meta: dict[str, object]) -> str:
    lines = ["# Export security (issue 16 §2): cases per class, caught, false redactions", "",
             "Written by `.venv/bin/python -m muninn.evals.lab.bench_security_export` "
             f"({meta['values']} random values, fixed seed; a quarter are declared phrases). The same case tables "
             "drive tests/test_redact_forms.py and tests/test_export_security.py.", "",
             "| class | cases | hidden by export | flagged by the gate |", "|---|---:|---:|---:|"]
    lines += [f"| {name} | {cases} | {hidden} | {gated} |" for name, cases, hidden, gated in rows]
    by_kind = meta["by_kind"]
    lines += ["", f"## False redactions on ordinary prose ({meta['files']} files, {meta['bytes'] / 1000:.0f} KB, "
              f"{meta['lines']} lines)", "",
              "Example notes (examples/notes), README.md and docs/*.md, GPL-3 and Apache-2.0 "
              "(/usr/share/common-licenses), "
              "dpkg's triggers.txt and git 2.4x release notes (/usr/share/doc). Known: every value above plus "
              "examples/secrets.yaml. None of this text holds a value, so every redaction is a false one.", "",
              "| redactor | redactions | by rule |", "|---|---:|---|"]
    for name, label in (("before", "before issue 16 (raw values, no views, old rules)"),
                        ("after", "export now (all forms, views, cut prefixes, new rules)")):
        kinds = {k.split(":", 1)[1]: v for k, v in by_kind.items() if k.startswith(name + ":")}
        detail = ", ".join(f"{k}: {v}" for k, v in sorted(kinds.items())) or "–"
        lines.append(f"| {label} | {sum(kinds.values())} | {detail} |")
    lines += ["", "What the misses above are (by design, docs/security.md \"Redaction and the leak gate\"): "
              "a cut prefix "
              "that is lower-case letters only (`mnwwxo` reads as a word) or that ends in a space before the cut; "
              "a value with fewer than 5 letters and digits (`qO_~k9` folds to `qok9`), which is not searched for in "
              "paths. The leak gate has no cut-prefix check: a prefix is not the value."]
    seconds = meta["seconds"]
    lines += ["", f"Time over the prose, line by line: before {seconds['before']:.2f} s, "
              f"now {seconds['after']:.2f} s (the views are pure Python; the machine is shared).", ""]
    if meta.get("cost"):
        lines += ["## Cost in export", "",
                  f"Synthetic task record of `evals/bench_export.py`, {meta['cost_facts']} facts, 10,000 known values "
                  f"(~6 needles a value in every form); best of two runs each. Load average while measuring: "
                  f"{meta['load']}: on this shared 2-core machine the absolute numbers are pessimistic, the ratio is "
                  "the result.", "", "| guards | build | export + redaction + gate |", "|---|---:|---:|",
                  *meta["cost"], ""]
    if meta["where"]:
        lines += ["Where the current redactor fired (file:line, rule):", ""]
        lines += [f"- {w}" for w in meta["where"][:40]]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--values", type=int, default=200)
    ap.add_argument("--cost-facts", type=int, default=1500, help="facts for the export cost rows (0: skip)")
    args = ap.parse_args()
    rows, meta = measure(args.values)
    if args.cost_facts:
        import os

        meta["cost"] = export_cost(args.cost_facts)
        meta["cost_facts"] = args.cost_facts
        meta["load"] = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    text = write(rows, meta)
    RESULTS.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
