"""Known values' forms on ordinary text (issue 47 §1/§5, round 4): false redactions and speed.

Every value hit on ordinary text is a false redaction: the docs, examples/, the prose set of
tests/test_redact_prose.py and the three Debian manuals (as bench_undeclared.py fetches them), read by
export redaction (`Redactor.for_facts`), the leak gate and exec masking, with the example vault's values
and 30 random ones. Speed: export redaction over the manuals, exec masking over 4.2 MB of log lines in
64 KB reads (as evals/results/mask_views.md measured it), in CPU seconds. Run it before and after a
change to compare.

Run: `.venv/bin/python -m muninn.evals.lab.bench_known_forms [--debs DIR] [--runs 3]`.
"""

from __future__ import annotations

import argparse
import base64
import importlib.util
import random
import statistics
import string
import sys
import tempfile
import time
from pathlib import Path

from muninn.evals.lab.bench_undeclared import fetch_debs, manual_texts
from muninn.guards.gate.leak_gate import KNOWN_VALUE, LeakGate
from muninn.guards.known import secret_values
from muninn.guards.redact.mask import JointMasker, mask_bytes, masking_redactor
from muninn.guards.redact.redactor import Redactor

ROOT = Path(__file__).resolve().parents[2]


def known_values() -> dict[str, str]:
    rng = random.Random(47)
    known = dict(secret_values.collect([ROOT / "examples/secrets.yaml"]))
    for i in range(30):
        known["".join(rng.choice(string.ascii_letters + string.digits) for _ in range(20))] = f"random-{i}"
    return known


def prose() -> list[tuple[str, str]]:
    spec = importlib.util.spec_from_file_location("prose_cases", ROOT / "tests/test_redact_prose.py")
    assert spec and spec.loader
    sys.path.insert(0, str(ROOT / "tests"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [(f"prose:{k}", v) for k, v in module.PROSE.items()]


def corpora(debs: Path, work: Path) -> dict[str, list[tuple[str, str]]]:
    out = {"docs": [(str(p.relative_to(ROOT)), p.read_text()) for p in sorted((ROOT / "docs").glob("*.md"))],
           "examples": [(str(p.relative_to(ROOT)), p.read_text()) for p in sorted((ROOT / "examples").rglob("*"))
                        if p.is_file() and p.suffix in (".md", ".yaml", ".jsonl") and p.name != "secrets.yaml"],
           "prose": prose()}
    out.update(manual_texts(fetch_debs(debs), work))
    return out


def log_lines() -> bytes:
    return "".join(f"2026-12-07T10:{i % 60:02d}:{i % 59:02d}Z INFO worker[{i % 17}] processed job {i} in {i % 997} ms "
                   f"from 10.0.{i % 255}.{i % 13}\n" for i in range(60_000)).encode()


def spelled_lines() -> str:
    """Ordinary text the round-4 pass-3 readers look at (issue 47): number lists, bit strings, NATO words,
    `xxd -e` dumps and base64 blobs, none of them a value: what the new views cost where they do work."""
    rows = []
    for i in range(4000):
        rows += [f"latency ms: {' '.join(str((i * 7 + k * 13) % 997) for k in range(12))}",
                 f"mask {' '.join(f'{(i + k) % 256:08b}' for k in range(6))} for subnet {i % 255}",
                 "callsign Alpha Bravo Charlie Delta Echo Foxtrot, then Tango Uniform seven niner",
                 f"00000000: {i:08x} 6c6c6568 77202c6f 646c726f  helloworld{i % 10}",
                 f'"blob": "{base64.b64encode(f"line {i} of an ordinary log message here".encode()).decode()}"']
    return "\n".join(rows) + "\n"


class _Sink:
    def write(self, data: bytes) -> None:
        pass

    def flush(self) -> None:
        pass


def two_streams(masker, chunks: list[bytes]) -> None:
    """Exec masking with stdout and stderr to two places: the joint masker, reads alternating."""
    joint = JointMasker(masker, [_Sink(), _Sink()])
    for i, chunk in enumerate(chunks):
        joint.feed(i % 2, chunk)
    joint.finish(0)
    joint.finish(1)


def timed(fn, runs: int) -> float:
    """Median CPU seconds of this process (the machine is shared: wall time measures the neighbours)."""
    times = []
    for _ in range(runs):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--debs", type=Path, default=Path(tempfile.gettempdir()) / "muninn-undeclared-debs")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    known = known_values()
    export = Redactor.for_facts(known)
    gate = LeakGate(known, patterns=False)
    masker = masking_redactor(known)
    with tempfile.TemporaryDirectory() as work:
        texts = corpora(args.debs, Path(work))
    print("| text | files | characters | export value hits | gate known-value findings | exec masked spans |")
    print("|---|---:|---:|---:|---:|---:|")
    listed = []
    for corpus, files in texts.items():
        hits = found = masked = 0
        for name, text in files:
            value_hits = [h for h in export.redact(text).hits if h.kind == "value"]
            hits += len(value_hits)
            listed += [f"export {name}: {h.rule} `{text[h.start:h.end][:40]}`" for h in value_hits]
            findings = [f for f in gate.scan(text) if f.reason == KNOWN_VALUE]
            found += len(findings)
            listed += [f"gate {name}:{f.line} {f.secret_id}" for f in findings]
            out = mask_bytes(masker, [text.encode()])
            masked += out.count(b"[REDACTED:") - text.count("[REDACTED:")
        print(f"| {corpus} | {len(files)} | {sum(len(t) for _, t in files):,} | {hits} | {found} | {masked} |")
    print("\n".join(listed) or "(no value hit)")
    manuals = [t for c in ("debian-handbook", "postgresql-doc-15", "nginx-doc") for _, t in texts[c]]
    size = sum(len(t.encode()) for t in manuals) / 1e6
    export_s = timed(lambda: [export.redact(t) for t in manuals], args.runs)
    gate_s = timed(lambda: [gate.scan(t) for t in manuals], args.runs)
    logs = log_lines()
    chunks = [logs[i:i + 65536] for i in range(0, len(logs), 65536)]
    mask_s = timed(lambda: mask_bytes(masker, chunks), args.runs)
    two_s = timed(lambda: two_streams(masker, chunks), args.runs)
    spelled = spelled_lines()
    spelled_chunks = [spelled.encode()[i:i + 65536] for i in range(0, len(spelled.encode()), 65536)]
    spelled_export_s = timed(lambda: export.redact(spelled), args.runs)
    spelled_mask_s = timed(lambda: mask_bytes(masker, spelled_chunks), args.runs)
    false_spelled = len([h for h in export.redact(spelled).hits if h.kind == "value"])
    masked_spelled = mask_bytes(masker, spelled_chunks).count(b"[REDACTED:")
    print(f"\nexport redaction, manuals ({size:.1f} MB): {export_s:.2f} CPU s, {size / export_s:.1f} MB/s")
    print(f"leak gate (values only), manuals: {gate_s:.2f} CPU s, {size / gate_s:.1f} MB/s")
    print(f"exec masking, log lines ({len(logs) / 1e6:.1f} MB, 64 KB reads): {mask_s:.2f} CPU s, "
          f"{len(logs) / 1e6 / mask_s:.1f} MB/s")
    print(f"exec masking, two streams (joint masker, reads alternating): {two_s:.2f} CPU s, "
          f"{len(logs) / 1e6 / two_s:.1f} MB/s")
    print(f"spelled-out lines ({len(spelled) / 1e6:.1f} MB: numbers, bits, NATO, xxd -e, base64): export "
          f"{spelled_export_s:.2f} CPU s ({false_spelled} value hits), exec masking {spelled_mask_s:.2f} CPU s "
          f"({masked_spelled} masked)")


if __name__ == "__main__":
    main()
