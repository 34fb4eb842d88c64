"""The sync split benchmark (evals/lab/bench_sync_split.py): its clock of server calls and its report, then a
smoke run at 20 facts against real stacks. No time is asserted (issue 19); the figures live in
evals/results/sync-split.md."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest
from conftest import free_port

from muninn.core.client import OpenViking
from muninn.core.errors import ServerDown
from muninn.evals.lab.bench_sync_split import SERVER_ROWS, CallClock, Row, Run, render


@pytest.mark.parametrize("call, kind", [
    (lambda c: c.ls("viking://resources/x"), "server: ls"),                 # through the SDK (_call)
    (lambda c: c.mkdir("viking://resources/x"), "server: mkdir"),
    (lambda c: c.wait(timeout=5), "server: wait for indexing"),             # through plain HTTP (_rest)
    (lambda c: list(c.walk("viking://resources/x")), "server: ls"),         # walk lists through the same door
])
def test_the_clock_sees_every_server_call_even_a_failed_one(call, kind: str) -> None:
    clock = CallClock()
    with OpenViking(f"http://127.0.0.1:{free_port()}", "key", timeout=5) as client:
        clock.watch(client)
        with pytest.raises(ServerDown):
            call(client)
    assert dict(clock.calls) == {kind: 1}
    assert clock.server_seconds() == clock.seconds[kind] > 0


def test_the_clock_times_a_wrapped_part_and_keeps_it_apart_from_server_calls() -> None:
    clock = CallClock()
    slow = clock.timed("gate", lambda x, *, y: time.sleep(0.01) or x + y)
    assert slow(1, y=2) == 3 and slow(0, y=0) == 0
    assert clock.calls["gate"] == 2 and clock.seconds["gate"] >= 0.02
    assert clock.server_seconds() == 0


def _row(key: str, seconds: list[float], count: int = 100, **parts: float) -> Row:
    runs = [Run(s, (1.0, 2.0), cpu={"muninn (this process)": 1.0, "openviking-server": 2.0},
                parts={**parts, "(all server calls)": sum(parts.values())}) for s in seconds]
    return Row(key, f"what {key}", count, runs)


def test_the_report_derives_the_split_and_ratios_from_the_medians() -> None:
    rows = [_row("embed", [10.0, 20.0, 30.0]), _row("null", [1.0], count=2000),
            _row("muninn-real", [300.0, 200.0, 400.0], **{"server: batch write": 250.0}),
            _row("direct-real", [100.0, 100.0, 100.0]),
            _row("muninn-null", [60.0, 50.0, 70.0], **{"server: batch write": 40.0}),
            _row("direct-null", [40.0, 40.0, 40.0])]
    text = render(rows, {"facts": 100, "mb": 0.1, "known": 10, "chars": 500, "model": "m"}, "cmd", "now")
    table = [line for line in text.splitlines() if re.match(r"\| \d \|", line)]
    assert len(table) == 2 + len(SERVER_ROWS) + len(SERVER_ROWS)   # six rows, then four CPU rows
    assert "| 3 | what muninn-real | 300.0 (runs: 300.0, 200.0, 400.0) | 0.3 files/s | " in text
    assert "| embedding, as it runs in a muninn sync | 240.0 |" in text          # 300 − 60
    assert "| the embedder alone, for these 100 texts | 20.0 |" in text           # 100 texts at 5/s
    assert "| muninn's layer on top, null embedder | 20.0 |" in text               # 60 − 40
    assert "| of which in muninn's process, outside server calls | 20.0 |" in text  # 60 − 40 clocked
    assert "| ratio muninn / direct, real sidecar | 3.00x |" in text
    assert "| ratio muninn / direct, null embedder | 1.50x |" in text
    assert "1.0 → 2.0; 1.0 → 2.0; 1.0 → 2.0" in text


@pytest.mark.integration
def test_smoke_at_20_facts_measures_a_muninn_row_and_a_direct_row(tmp_path) -> None:
    # Two stacks, not four: muninn's sync with the real sidecar, OpenViking fed directly with the null
    # embedder. Between them they take both paths and both embedders; the split's arithmetic over all six
    # rows is the report test's above.
    out = tmp_path / "sync-split.md"
    run = subprocess.run([sys.executable, "-m", "muninn.evals.lab.bench_sync_split", "--facts", "20", "--known", "50",
                          "--rows", "muninn-real", "direct-null", "--out", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    text = out.read_text()
    rows = [line for line in text.splitlines() if re.match(r"\| [1-6] \| ", line)][:4]
    assert len(rows) == 4
    assert "embedder alone" in rows[0] and "null embedder alone" in rows[1]
    for line in rows[2:]:
        assert "20 files counted back" in line, line
        assert re.search(r"find [1-9]\d* hits", line), line
    muninn_real, direct_null = rows[2:]
    assert "muninn sync" in muninn_real and "20 written, 0 missing after wait" in muninn_real, muninn_real
    assert "FLOOR" in direct_null and re.search(r"OpenViking asked for [1-9][\d,]* vectors", direct_null), direct_null
    assert "OpenViking's own work (no embedding cost)" in text
    assert "ratio muninn / direct, null embedder" not in text        # a row it needs did not run
