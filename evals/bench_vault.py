"""Benchmarks for the vault side: stream masking throughput and verify sweep wall time.

    python -m muninn.evals.bench_vault [--mb 16] [--entries 200] [--out evals/results/vault.md]

1. Masking: 1,000 secret values (raw + base64 + URL forms) over MB of log-like text with values
   sprinkled in, fed to `StreamMasker` in 64 KiB reads (what `secret exec` does per pipe), and
   checked: no value may survive.
2. Verify: a sweep of N inventory entries whose proof command is a fake `kubectl` that answers
   after 50 ms (a stand-in for a network round trip), at several parallel bounds, plus a run where
   10% of the entries are global-state (serial lane). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import random
import string
import tempfile
import time
from pathlib import Path

import yaml

from muninn.core import config
from muninn.guards.redact.mask import StreamMasker, masking_redactor
from muninn.guards.redact.redactor import ENCODINGS

CHUNK = 65536


def _values(n: int, rng: random.Random) -> dict[str, str]:
    alphabet = string.ascii_letters + string.digits + "-_/+="
    return {"".join(rng.choice(alphabet) for _ in range(rng.randint(16, 48))): f"secret-{i}" for i in range(n)}


def _text(values: list[str], mb: float, rng: random.Random) -> bytes:
    words = ["INFO", "request", "completed", "in", "12ms", "user=alice", "GET", "/api/v1/items", "status=200",
             "pod/web-7c9f", "Ready", "node-1", "ü", "trace_id=5f2a"]
    out: list[str] = []
    size = 0
    target = int(mb * 1024 * 1024)
    while size < target:
        line = " ".join(rng.choice(words) for _ in range(12))
        if rng.random() < 0.02:
            line += f" token={rng.choice(values)}"
        out.append(line)
        size += len(line) + 1
    return ("\n".join(out) + "\n").encode()


def bench_masking(mb: float, n_values: int = 1000) -> list[dict]:
    rng = random.Random(1)
    known = _values(n_values, rng)
    data = _text(list(known), mb, rng)
    rows = []
    for encodings in (("raw",), ("raw", "base64", "url"), ENCODINGS):
        started = time.perf_counter()
        redactor = masking_redactor(known, encodings)
        build = time.perf_counter() - started
        masker = StreamMasker(redactor)
        started = time.perf_counter()
        out = [masker.feed(data[i:i + CHUNK]) for i in range(0, len(data), CHUNK)]
        out.append(masker.flush())
        elapsed = time.perf_counter() - started
        masked = b"".join(out)
        leaked = sum(1 for v in known if v.encode() in masked)
        rows.append({"encodings": "+".join(encodings), "needles": len(redactor), "build_s": build,
                     "mb": len(data) / 1e6, "seconds": elapsed, "mb_s": len(data) / 1e6 / elapsed,
                     "hits": len(masker.hits), "leaked": leaked, "mode": "StreamMasker"})
        # The redactor alone over the same 64 KiB pieces (no hold-back, no decoding): the streaming overhead.
        text = data.decode()
        started = time.perf_counter()
        hits = sum(len(redactor.redact_values(text[i:i + CHUNK]).hits) for i in range(0, len(text), CHUNK))
        elapsed = time.perf_counter() - started
        rows.append({"encodings": "+".join(encodings), "needles": len(redactor), "build_s": build,
                     "mb": len(data) / 1e6, "seconds": elapsed, "mb_s": len(data) / 1e6 / elapsed,
                     "hits": hits, "leaked": "-", "mode": "redact_values only"})
    return rows


FAKE_KUBECTL = """#!/usr/bin/env bash
sleep 0.05
echo "NAME STATUS"; echo "node-1 Ready"
"""


def bench_verify(entries: int, bounds: list[int]) -> list[dict]:
    from muninn.plugins.access import sweep

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        fakebin = root / "bin"
        fakebin.mkdir()
        (fakebin / "kubectl").write_text(FAKE_KUBECTL)
        (fakebin / "kubectl").chmod(0o755)
        env = {**os.environ, "PATH": f"{fakebin}:/usr/bin:/bin"}
        for serial_share in (0.0, 0.1):
            inv = [{"id": f"c{i:03d}", "kind": "cluster", "verify": f"kubectl --context c{i} get nodes",
                    "global_state": i < entries * serial_share} for i in range(entries)]
            (root / "inventory.yaml").write_text(yaml.safe_dump(inv))
            cfg = root / "muninn.yaml"
            cfg.write_text(yaml.safe_dump({"home": str(root / "ws"), "inventory": {"files": ["inventory.yaml"]}}))
            settings = config.load(cfg)
            items = sweep.plan(settings)
            for bound in bounds:
                started = time.perf_counter()
                results = sweep.run(settings, items, parallel=bound, env=env, store=False)
                elapsed = time.perf_counter() - started
                ok = sum(r.status == "ok" for r in results)
                rows.append({"entries": entries, "serial": int(entries * serial_share), "parallel": bound,
                             "seconds": elapsed, "ok": ok})
    return rows


def render(mask_rows: list[dict], verify_rows: list[dict]) -> str:
    lines = ["## Stream masking (1,000 values, 64 KiB reads)", "",
             "| mode | encodings | needles | build (s) | MB | seconds | MB/s | hits | values leaked |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in mask_rows:
        lines.append(f"| {r['mode']} | {r['encodings']} | {r['needles']} | {r['build_s']:.2f} | {r['mb']:.1f} "
                     f"| {r['seconds']:.2f} | {r['mb_s']:.1f} | {r['hits']} | {r['leaked']} |")
    lines += ["", "## Verify sweep (fake kubectl answering after 50 ms)", "",
              "| entries | serial (global state) | parallel bound | wall (s) | ok |",
              "| ---: | ---: | ---: | ---: | ---: |"]
    for r in verify_rows:
        lines.append(f"| {r['entries']} | {r['serial']} | {r['parallel']} | {r['seconds']:.2f} | {r['ok']} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=16)
    parser.add_argument("--entries", type=int, default=200)
    parser.add_argument("--bounds", default="1,4,8,16")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    table = render(bench_masking(args.mb), bench_verify(args.entries, [int(b) for b in args.bounds.split(",")]))
    print(table)
    if args.out:
        args.out.write_text(f"# Vault benchmarks\n\nMachine: {os.cpu_count()} cores. "
                            f"`python -m muninn.evals.bench_vault --mb {args.mb:g} --entries {args.entries}`\n\n"
                            + table)


if __name__ == "__main__":
    main()
