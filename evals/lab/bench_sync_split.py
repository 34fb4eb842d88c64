"""Where sync's time goes, and its floor (issue 19, "Sync").

Run: `python -m muninn.evals.lab.bench_sync_split [--facts N] [--repeat R] [--embed-texts K] [--out FILE]`.
Writes evals/results/sync-split.md (or FILE) and nothing else: every server run is a fresh stack in a
temporary workspace on free ports, removed at the end.

At N facts shaped like the seed's (bench_export's record, exported, redacted and gated with --known values):
1. the embedder alone: the texts the sidecar embeds for those files (`factfile.embed_text`), in-process,
   by the product's model with the sidecar's batching; and the null embedder alone over HTTP;
2. `muninn sync` as the CLI runs it (gate, batches, wait, walk and count, after-sync hooks), real sidecar;
3. the same against the null embedder (null_embedder.py): OpenViking's work plus muninn's with embedding
   taken out. A floor, not a quality setup: its vectors mean nothing;
4. OpenViking fed the same files directly (its SDK's add_resource of a copy of the tree, vectors only,
   then wait until processed), with the real sidecar and with the null embedder;
5. muninn's own part: time in muninn's sync outside server calls (CallClock), and the CPU seconds each
   process used in each window (this process, openviking-server with its children, the embedder).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import httpx
import psutil
import yaml

from muninn.core import config, credentials, factfile, paths, registry
from muninn.core.client import OpenViking
from muninn.core.config import EmbedSettings, Settings
from muninn.evals import bench_export, lab
from muninn.evals.benchutil import free_port
from muninn.export import pipeline
from muninn.export.sync import local_files, remote_files, sync
from muninn.export.sync_gate import SyncGate
from muninn.plugins.stack import lifecycle

RESULTS = lab.RESULTS / "sync-split.md"
AREA = "viking://resources/record"


def say(message: str) -> None:
    print(f"[sync-split] {time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)


@dataclass
class Run:
    seconds: float
    load: tuple[float, float]
    cpu: dict[str, float] = field(default_factory=dict)     # process -> CPU seconds in the window
    parts: dict[str, float] = field(default_factory=dict)   # inside muninn's sync: part -> seconds
    detail: str = ""


@dataclass
class Row:
    key: str
    what: str
    count: int            # files or texts: what the rate divides
    runs: list[Run] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(r.seconds for r in self.runs)

    def median_run(self) -> Run:
        return sorted(self.runs, key=lambda r: r.seconds)[(len(self.runs) - 1) // 2]


class CallClock:
    """Seconds spent inside each kind of call, keyed by what the call is ("batch write", "ls", "gate").

    `watch(client)` wraps the client instance's two doors to the server (`_call` through the SDK, `_rest`
    for plain HTTP), so the time in muninn's own code is the whole window minus what the clock holds."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: Counter[str] = Counter()

    def timed(self, key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[key] += time.perf_counter() - t
                self.calls[key] += 1
        return run

    def watch(self, client: OpenViking) -> OpenViking:
        call, rest = client._call, client._rest
        client._call = lambda what, *a, **k: self.timed(f"server: {what}", call)(what, *a, **k)  # type: ignore[method-assign]
        client._rest = (lambda method, path, what, *a, **k:  # type: ignore[method-assign]
                        self.timed(f"server: {what}", rest)(method, path, what, *a, **k))
        return client

    def server_seconds(self) -> float:
        return sum(s for k, s in self.seconds.items() if k.startswith("server: "))


def cpu_now(pids: dict[str, int]) -> dict[str, float]:
    """CPU seconds so far of each named process with its children, and of this process."""
    out = {"muninn (this process)": time.process_time()}
    for name, pid in pids.items():
        try:
            root = psutil.Process(pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            continue
        total = 0.0
        for proc in procs:
            try:
                times = proc.cpu_times()   # children_*: those that already ended and were reaped
                total += times.user + times.system + times.children_user + times.children_system
            except psutil.Error:
                pass
        out[name] = total
    return out


@contextmanager
def window(pids: dict[str, int]) -> Iterator[Run]:
    """A timed window: seconds, the 1-minute load average at both ends, CPU seconds by process."""
    load0, cpu0 = os.getloadavg()[0], cpu_now(pids)
    run = Run(0.0, (load0, load0))
    t = time.perf_counter()
    yield run
    run.seconds = time.perf_counter() - t
    cpu1 = cpu_now(pids)
    run.cpu = {k: cpu1[k] - cpu0.get(k, 0.0) for k in cpu1}
    run.load = (load0, os.getloadavg()[0])


# --- the record, the embedders, the stacks -------------------------------------------------------------

def record(root: Path, facts: int, known: int) -> tuple[Path, Path]:
    """bench_export's seed-shaped record, exported, redacted and gated: (fact folder, secrets YAML)."""
    root.mkdir(parents=True)
    db, secrets = bench_export.build_record(root, facts, known, random.Random(11))
    out = root / "out"
    pipeline.run("tasks", db, out, [secrets])
    return out, secrets


def embed_alone(texts: list[str]) -> tuple[Run, str]:
    from muninn.plugins.embed.model import load

    settings = EmbedSettings()
    model, _ = load(settings)
    batch = settings.batch_size

    def encode(chunk: list[str]) -> None:
        model.encode(chunk, batch_size=batch, normalize_embeddings=True, convert_to_numpy=True,
                     show_progress_bar=False)

    encode(texts[:2])   # the first pass allocates
    with window({}) as run:
        for i in range(0, len(texts), batch):
            encode(texts[i:i + batch])
    return run, f"{settings.model}, batches of {batch}"


@contextmanager
def null_endpoint(root: Path, dim: int) -> Iterator[tuple[str, int]]:
    """The null embedder in a process of its own on a free port: (base URL, pid)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with (root / f"null-embedder-{port}.log").open("w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "muninn.evals.lab.null_embedder", "--port", str(port),
                                 "--dim", str(dim)], stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while not lifecycle.healthy(url, timeout=1.0):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the null embedder did not start (exit {proc.poll()}); log {log.name}")
                time.sleep(0.2)
            yield url, proc.pid
        finally:
            proc.terminate()
            proc.wait(10)


def null_alone(url: str, texts: list[str]) -> Run:
    """The null embedder's own cost over HTTP, one text per request as OpenViking sends them."""
    with httpx.Client(base_url=url, timeout=60) as http, window({}) as run:
        for text in texts:
            http.post("/v1/embeddings", json={"input": text}).raise_for_status()
    return run


def texts_served(url: str) -> tuple[int, int]:
    stats = httpx.get(f"{url}/stats", timeout=10).json()
    return stats["requests"], stats["texts"]


@contextmanager
def fresh_stack(work: Path, venv: Path, secrets: Path,
                embed_url: str | None) -> Iterator[tuple[Settings, dict[str, int]]]:
    """`muninn up` in a workspace of its own on free ports; yields the settings and the pids it started."""
    work.mkdir(parents=True)
    cfg = work / "muninn.yaml"
    # A long call timeout: on a shared 2-core machine a batch write can wait minutes for the server.
    base: dict[str, Any] = {"home": str(work / "home"), "server": {"port": free_port(), "venv": str(venv),
                                                                   "timeout": 3600},
                            "embed": {"port": free_port()} | ({"url": embed_url} if embed_url else {}),
                            "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"},
                            "export": {"secret_files": [str(secrets)]}}
    cfg.write_text(yaml.safe_dump(base))
    settings = config.load(cfg)
    lifecycle.up(settings, say=lambda m: None, config_file=cfg)
    try:
        state = json.loads((settings.paths.stack / "stack.json").read_text())
        names = {"server": "openviking-server", "embed": "embedding sidecar"}
        yield settings, {names[k]: v["pid"] for k, v in state.items() if v.get("pid")}
    finally:
        lifecycle.down(settings, say=lambda m: None)


def probe(settings: Settings, sample: str) -> tuple[int, int]:
    """After the window: files counted back under the area, and find hits there for one fact's text."""
    with OpenViking.user(settings) as client:
        return len(remote_files(client, AREA)), len(client.find(sample, target_uri=AREA, limit=5))


# --- the timed runs ------------------------------------------------------------------------------------

def muninn_sync(settings: Settings, out: Path, pids: dict[str, int]) -> Run:
    """What `muninn sync DIR --to AREA` does (export/cli.py sync_cmd), with every part clocked."""
    clock = CallClock()
    with OpenViking.user(settings) as client, window(pids) as run:
        gate = clock.timed("gate: load known values", SyncGate.from_settings)(settings)
        gate.check = clock.timed("gate: check every file (twice: the CLI, then sync)", gate.check)  # type: ignore[method-assign]
        gate.check([(out, local_files(out))])   # the CLI gates before it connects, and sync gates again
        clock.watch(client)
        with mock.patch.object(registry, "after_sync", clock.timed("after-sync hooks", registry.after_sync)):
            report = sync(client, out, AREA, batch_size=settings.export.batch_size,
                          manifest_dir=settings.paths.sync_manifests, settings=settings, gate=gate)
    run.parts = dict(clock.seconds)
    run.parts["muninn's own code: read, hash, manifest, batch"] = run.seconds - sum(clock.seconds.values())
    run.parts["(all server calls)"] = clock.server_seconds()
    calls = ", ".join(f"{k.removeprefix('server: ')} x{n}" for k, n in sorted(clock.calls.items())
                      if k.startswith("server: "))
    run.detail = f"{report.written:,} written, {report.missing_after_wait} missing after wait; calls: {calls}"
    return run


def direct_feed(settings: Settings, tree: Path, pids: dict[str, int]) -> Run:
    """OpenViking's own SDK: add_resource of the folder (zipped and uploaded), vectors only as muninn asks, then
    wait until processed."""
    from openviking_sdk import SyncHTTPClient

    name = credentials.user_key_name(settings.openviking.account, settings.openviking.user)
    key = credentials.for_server(settings).require(name, fix="`muninn up` creates it")
    sdk = SyncHTTPClient(url=settings.server.base_url, api_key=key, timeout=3600)
    sdk.initialize()
    try:
        with window(pids) as run:
            sdk.add_resource(str(tree), to=AREA, wait=False, options={"processing_mode": "vectors_only"})
            sdk.wait_processed()
    finally:
        sdk.close()
    return run


SERVER_ROWS = {
    "muninn-real": "muninn sync, product defaults (the real embedding sidecar)",
    "direct-real": "OpenViking fed the same files directly (add_resource, vectors only, wait), real sidecar",
    "muninn-null": "muninn sync, null embedder: FLOOR measurement, not a quality setup",
    "direct-null": "OpenViking fed the same files directly, null embedder: FLOOR, not a quality setup",
}


def server_run(key: str, work: Path, venv: Path, secrets: Path, out: Path, tree: Path, sample: str) -> Run:
    null = key.endswith("-null")
    with null_endpoint(work.parent, EmbedSettings().dimensions) if null else _nothing() as endpoint:
        url, extra = (endpoint[0], {"null embedder": endpoint[1]}) if endpoint else (None, {})
        with fresh_stack(work, venv, secrets, url) as (settings, pids):
            pids |= extra
            served = texts_served(url) if url else (0, 0)
            run = (muninn_sync(settings, out, pids) if key.startswith("muninn-")
                   else direct_feed(settings, tree, pids))
            if url:
                requests, texts = (a - b for a, b in zip(texts_served(url), served, strict=True))
                run.detail += f"; OpenViking asked for {texts:,} vectors in {requests:,} requests"
            counted, hits = probe(settings, sample)
    run.detail = "; ".join(x for x in (f"{counted:,} files counted back, find {hits} hits",
                                        run.detail.lstrip("; ")) if x)
    return run


@contextmanager
def _nothing() -> Iterator[None]:
    yield None


def measure(facts: int, known: int, repeat: int, embed_texts: int | None,
            only: list[str]) -> tuple[list[Row], dict[str, Any]]:
    venv = paths.server_venv()   # the shared one (~1.3 GB): resolved before XDG_DATA_HOME moves
    root = Path(tempfile.mkdtemp(prefix="muninn-sync-split-"))
    os.environ["XDG_DATA_HOME"] = str(root / "xdg")   # an isolated keyring file
    try:
        say(f"building and exporting {facts:,} facts")
        out, secrets = record(root / "record", facts, known)
        local = local_files(out)
        tree = root / "direct" / "record"   # the fact files alone, without the export ledger
        for rel, data in local.items():
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            (tree / rel).write_bytes(data)
        texts = [factfile.embed_text(data.decode("utf-8")) for data in local.values()][:embed_texts]
        sample = texts[len(texts) // 2][:300]
        info = {"facts": len(local), "mb": sum(map(len, local.values())) / 1e6, "known": known,
                "chars": statistics.median(map(len, texts))}
        rows = [Row("embed", f"embedder alone: {len(texts):,} texts (`factfile.embed_text` of each fact file), "
                             "in-process", len(texts)),
                Row("null", "null embedder alone over HTTP, one text per request", min(len(texts), 2000))]
        rows += [Row(key, what, len(local)) for key, what in SERVER_ROWS.items() if key in only]
        by_key = {r.key: r for r in rows}
        for i in range(repeat):
            say(f"round {i + 1}/{repeat}: embedder alone, {len(texts):,} texts")
            run, info["model"] = embed_alone(texts)
            by_key["embed"].runs.append(run)
            with null_endpoint(root, EmbedSettings().dimensions) as (url, _):
                by_key["null"].runs.append(null_alone(url, texts[:2000]))
            for key in (k for k in SERVER_ROWS if k in only):
                say(f"round {i + 1}/{repeat}: {key}, {len(local):,} facts")
                by_key[key].runs.append(server_run(key, root / f"{key}-{i}", venv, secrets, out, tree, sample))
                say(f"{key}: {by_key[key].runs[-1].seconds:.1f} s; {by_key[key].runs[-1].detail}")
        return rows, info
    finally:
        shutil.rmtree(root, ignore_errors=True)


# --- the report ----------------------------------------------------------------------------------------

def _secs(row: Row) -> str:
    if len(row.runs) == 1:
        return f"{row.median:.1f}"
    return f"{row.median:.1f} (runs: {', '.join(f'{r.seconds:.1f}' for r in row.runs)})"


def _loads(row: Row) -> str:
    return "; ".join(f"{a:.1f} → {b:.1f}" for a, b in (r.load for r in row.runs))


def render(rows: list[Row], info: dict[str, Any], command: str, started: str) -> str:
    by = {r.key: r for r in rows}
    n = info["facts"]
    lines = ["# Where sync's time goes, and its floor", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
             f"openviking server {config.ServerSettings().version}. Run {started}. Command: `{command}`.", "",
             f"Record: {n:,} facts shaped like the seed's task database (`bench_export.build_record`), exported, "
             f"redacted and gated with {info['known']:,} known values: {info['mb']:.1f} MB of fact files, the "
             f"median embedded text {info['chars']:.0f} characters. Embedding model: {info['model']}. Each server "
             "row ran in a fresh stack (its own workspace, free ports). Seconds are written-to-searchable "
             "(the whole sync, or add_resource until the server's queues drained); the load average is the "
             "1-minute one at the start and end of each run.", "",
             "| # | what | seconds (median) | per second | load avg start → end | detail |",
             "| --- | --- | --- | --- | --- | --- |"]
    for i, row in enumerate(rows, 1):
        unit = "texts" if row.key in ("embed", "null") else "files"
        detail = row.median_run().detail or (info["model"] if row.key == "embed" else "")
        lines.append(f"| {i} | {row.what} | {_secs(row)} | {row.count / row.median:,.1f} {unit}/s | "
                     f"{_loads(row)} | {detail} |")
    m = {r.key: r.median for r in rows}
    no = {r.key: i for i, r in enumerate(rows, 1)}
    clocked = {k: by[k].median_run() for k in ("muninn-real", "muninn-null") if k in by}
    split = [  # (part, rows it needs, seconds or ratio, how it is read)
        ("embedding, as it runs in a muninn sync", ("muninn-real", "muninn-null"),
         lambda: f"{m['muninn-real'] - m['muninn-null']:.1f}", "row {muninn-real} − row {muninn-null}: what the "
         "real sidecar adds"),
        (f"the embedder alone, for these {n:,} texts", ("embed",),
         lambda: f"{n / (by['embed'].count / m['embed']):.1f}", "row {embed}, scaled to " + f"{n:,} texts"),
        ("OpenViking's own work (no embedding cost)", ("direct-null",), lambda: f"{m['direct-null']:.1f}",
         "row {direct-null}"),
        ("muninn's layer on top, null embedder", ("muninn-null", "direct-null"),
         lambda: f"{m['muninn-null'] - m['direct-null']:.1f}", "row {muninn-null} − row {direct-null}"),
        ("of which in muninn's process, outside server calls", ("muninn-null",),
         lambda: f"{clocked['muninn-null'].seconds - clocked['muninn-null'].parts['(all server calls)']:.1f}",
         "row {muninn-null}, clocked"),
        ("ratio muninn / direct, real sidecar", ("muninn-real", "direct-real"),
         lambda: f"{m['muninn-real'] / m['direct-real']:.2f}x", "row {muninn-real} / row {direct-real}"),
        ("ratio muninn / direct, null embedder", ("muninn-null", "direct-null"),
         lambda: f"{m['muninn-null'] / m['direct-null']:.2f}x", "row {muninn-null} / row {direct-null}"),
    ]
    lines += ["", f"## The split at {n:,} facts (medians)", "", "| part | seconds | how it is read |",
              "| --- | --- | --- |"]
    lines += [f"| {part} | {value()} | {how.format(**no)} |" for part, need, value, how in split
              if all(k in by for k in need)]
    if clocked:
        runs = list(clocked.values())
        lines += ["", "## Inside muninn's sync (the median run of each muninn row)", "",
                  "| part | " + " | ".join(f"{k}, s" for k in clocked) + " |",
                  "| --- |" + " --- |" * len(clocked)]
        for part in sorted({p for r in runs for p in r.parts}, key=lambda p: (p.startswith("("), p)):
            lines.append(f"| {part} | " + " | ".join(f"{r.parts.get(part, 0):.2f}" for r in runs) + " |")
        lines.append("| (the whole sync) | " + " | ".join(f"{r.seconds:.2f}" for r in runs) + " |")
    lines += ["", "## CPU seconds by process in each window (median run)", "",
              "| # | row | muninn (this process) | openviking-server and its children | embedder |",
              "| --- | --- | --- | --- | --- |"]
    for i, row in enumerate(rows[2:], 3):
        cpu = row.median_run().cpu
        embedder = cpu.get("embedding sidecar", cpu.get("null embedder", 0.0))
        lines.append(f"| {i} | {row.key} | {cpu.get('muninn (this process)', 0):.1f} | "
                     f"{cpu.get('openviking-server', 0):.1f} | {embedder:.1f} |")
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=5600)
    parser.add_argument("--known", type=int, default=10000, help="known secret values the export and gate use")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of every row (medians are reported)")
    parser.add_argument("--embed-texts", type=int, default=None,
                        help="embed only the first K texts in row 1 (the split scales its rate to all)")
    parser.add_argument("--rows", nargs="+", choices=list(SERVER_ROWS), default=list(SERVER_ROWS),
                        help="which server rows to run (the split shows what the rows run allow)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    rows, info = measure(args.facts, args.known, args.repeat, args.embed_texts, args.rows)
    command = " ".join(["python -m muninn.evals.lab.bench_sync_split", *sys.argv[1:]])
    text = render(rows, info, command, started)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
