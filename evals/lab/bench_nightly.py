"""Benchmark the night and the agent's day on the demo corpus: `muninn nightly` per job, cold (the first
night exports and syncs everything) and warm (nothing changed), and how long after `recall_remember`
returns a fact is findable by keywords (recall_search with its identifier, through the guarded MCP
server) and by vectors (OpenViking's own `find` as the reader).

Run: `.venv/bin/python -m muninn.evals.lab.bench_nightly [TRIALS] [--record N]`. Starts its own stack in a
temporary workspace on free ports (the examples/ corpus and policy, plus examples/notes as a git repository
for the snapshot job), stops it, and writes evals/results/nightly.md.

`--record N` is the same workspace at size: its `tasks` source is bench_export's synthetic seed-shaped
record of N facts (tasks, observations and mistakes) instead of examples/tasks.db, and the record's known
values are `export.secret_files`. Only the two nights are run; it writes evals/results/nightly-N.md.

`--facts N [--trials T]` times the backup at size: the demo workspace (policy applied, vault synced) where
the agent raven has written N facts straight into its own area, which is what a backup holds (files no
export wrote). Each trial: `backup create`, `backup verify` (the drill), the facts deleted on the server,
`backup restore --all` (every fact written back and every reader's index and vectors refreshed). Medians
and sizes go into evals/results/nightly.md, section "At N facts: backup, restore, drill".
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
import uuid
from pathlib import Path
from typing import Any

import yaml

from muninn.core import config, paths
from muninn.core import policy as policy_mod
from muninn.evals import bench_export, lab
from muninn.evals.benchutil import free_port, pct
from muninn.plugins.stack import lifecycle, policy_apply

ROOT = lab.REPO
OUT = ROOT / "evals" / "results" / "nightly.md"


RECORD_KNOWN = 1000   # known values in the record's secrets file, as bench_scale has them


def with_record(cfg: dict[str, Any], db: Path, secrets: Path) -> dict[str, Any]:
    """The config with its `tasks` source reading `db`, and `secrets` among the known values."""
    tasks = [s for s in cfg["sources"] if s["kind"] == "tasks"]
    if len(tasks) != 1:
        raise ValueError(f"expected one tasks source, found {len(tasks)}")
    tasks[0]["path"] = str(db)
    export = cfg.setdefault("export", {})
    export["secret_files"] = [*export.get("secret_files", []), str(secrets)]
    return cfg


def _workspace(tmp: Path, record: int = 0, timeout: int | None = None) -> Path:
    shutil.copytree(ROOT / "examples", tmp / "examples")
    repo = tmp / "repo"
    shutil.copytree(ROOT / "examples" / "notes", repo)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@x"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "notes"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)
    cfg = yaml.safe_load((tmp / "examples" / "muninn.yaml").read_text())
    if record:
        (tmp / "record").mkdir()
        cfg = with_record(cfg, *bench_export.build_record(tmp / "record", record, RECORD_KNOWN, random.Random(13)))
    cfg["sources"].append({"kind": "repo", "path": str(repo), "area": "viking://resources/repos", "name": "notes"})
    cfg.update({"home": str(tmp / "home"), "server": {"port": free_port(), "venv": str(paths.server_venv()),
                           # as bench_guard: on 2 shared cores a batch write at size can wait minutes
                           **({"timeout": timeout or 600} if record or timeout else {})},
                "embed": {"port": free_port()}, "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"}})
    path = tmp / "examples" / "muninn.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _night(cfg: Path) -> list[dict[str, Any]]:
    """One `muninn nightly --json` as cron runs it; each job's seconds from its report, and the wall clock."""
    load = os.getloadavg()[0]
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), "nightly", "--json"],
                          capture_output=True, text=True, env=dict(os.environ))
    total = time.perf_counter() - t
    try:
        jobs = json.loads(proc.stdout)["jobs"]
    except (ValueError, KeyError):
        print(f"[nightly] no JSON report (exit {proc.returncode}): {proc.stderr[-2000:]}", file=sys.stderr)
        jobs = []
    return [{"name": r["name"], "status": r["status"], "seconds": r["seconds"], "detail": r["detail"]}
            for r in jobs] + [{"name": "(whole run)", "status": f"exit {proc.returncode}", "seconds": round(total, 2),
                               "detail": f"load {load:.2f} at its start"}]


def _restore(cfg: Path, settings: Any) -> list[dict[str, Any]]:
    """The latest backup put back whole over the same server (`--all --replace`: every held file written
    again, every reader's index and vectors refreshed), then the drill; seconds each, and what it said."""
    latest = sorted(settings.paths.backups.glob("muninn-backup-*"))[-1]   # the names sort by time
    out = []
    for name, args in (("backup restore --all --replace", ["backup", "restore", str(latest), "--all", "--replace"]),
                       ("backup verify", ["backup", "verify"])):
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), *args, "--json"],
                              capture_output=True, text=True, env=dict(os.environ))
        said = proc.stdout if proc.returncode == 0 else proc.stderr
        try:
            data = json.loads(proc.stdout)
            said = (f"{data['files']} file(s) written, {len(data['local'])} local" if "files" in data else
                    f"{data['members']} member(s) checked, {len(data['problems'])} problem(s), {data['bytes']} bytes")
        except (ValueError, KeyError):
            pass
        out.append({"name": name, "status": f"exit {proc.returncode}", "seconds": round(time.perf_counter() - t, 2),
                    "detail": said.strip()[:160]})
    return out


def _findable(cfg: Path, settings: Any, trials: int) -> list[dict[str, float]]:
    import anyio
    from mcp import Client, StdioServerParameters

    from muninn.core.client import OpenViking

    pol = policy_mod.load_for(settings)
    raven = pol.profile("raven")
    area = raven.remember_to or ""
    params = StdioServerParameters(command=sys.executable, args=["-m", "muninn", "--config", str(cfg), "mcp",
                                                                 "--profile", "raven"], env=dict(os.environ))
    rows: list[dict[str, float]] = []

    async def main() -> None:
        async with Client(params, read_timeout_seconds=300) as client:
            with OpenViking.user(settings, raven.account, raven.user) as ov:
                for _ in range(trials):
                    token = f"QX{uuid.uuid4().hex[:6].upper()}"
                    t0 = time.perf_counter()
                    wrote = await client.call_tool("recall_remember", {
                        "title": f"batch queue {token} stalled",
                        "text": f"Batch queue {token} stalled after the nightly import; restarting the "
                                f"consumer on app07 drained it in four minutes."})
                    returned = time.perf_counter() - t0
                    uri = wrote.structured_content["uri"]
                    keyword_at = vector_at = None
                    while (keyword_at is None or vector_at is None) and time.perf_counter() - t0 < 180:
                        now = time.perf_counter() - t0
                        if keyword_at is None:
                            hit = await client.call_tool("recall_search", {"query": token, "k": 5})
                            if uri in [h["uri"] for h in hit.structured_content["hits"]]:
                                keyword_at = now
                        if vector_at is None:
                            found = ov.find(f"batch queue {token} stalled after the nightly import",
                                            target_uri=area, limit=50)
                            if uri in [r.get("uri") for r in found]:
                                vector_at = now
                        await anyio.sleep(0.2)
                    rows.append({"returned": returned, "keyword": keyword_at if keyword_at is not None else -1,
                                 "vector": vector_at if vector_at is not None else -1})

    anyio.run(main)
    return rows


WORDS = ("boiler", "valve", "restic", "snapshot", "router", "firmware", "zfs", "scrub", "vpn", "certificate",
         "grafana", "alert", "backup", "disk", "queue", "consumer", "dns", "lease", "printer", "toner")


def fact(i: int, rng: random.Random) -> str:
    """One seed-shaped fact the agent wrote: a title, an identifier, a dated sentence."""
    a, b, c = rng.sample(WORDS, 3)
    return (f"# {a.title()} and the {b}\nOBS-{i:05d}. On {1 + i % 28} November the {a} {b} was checked after "
            f"the {c} alert; it held, and the note says what to look at first next time.\n")


def _cli_json(cfg: Path, *args: str) -> tuple[float, int, dict[str, Any], str]:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), *args, "--json"],
                          capture_output=True, text=True, env=dict(os.environ))
    seconds = time.perf_counter() - t
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        data = {}
    return seconds, proc.returncode, data, proc.stderr.strip()[-300:]


def _step(trial: int, name: str, row: dict[str, Any]) -> None:
    """Each step as it ends, on stderr: a run stopped part-way still leaves what it measured."""
    print(json.dumps({"trial": trial, "step": name, "at": time.strftime("%H:%M:%S"),
                      "load": os.getloadavg()[0], **row}), file=sys.stderr, flush=True)


def backup_times(cfg: Path, settings: Any, facts: int, trials: int) -> list[dict[str, Any]]:
    """Per trial: create, restore (after the facts were deleted on the server) and the drill."""
    from muninn.core.client import OpenViking
    from muninn.plugins.access.vault import Vault

    Vault(settings).sync()
    raven = policy_mod.load_for(settings).profile("raven")
    folder = f"{raven.remember_to}/bench"
    rng = random.Random(7)
    with OpenViking.user(settings, raven.account, raven.user).with_timeout(900) as ov, \
            OpenViking.user(settings).with_timeout(900) as admin:   # deleting a folder needs `manage`
        t = time.perf_counter()
        ov.ensure_dir(folder)
        for start in range(0, facts, 500):
            ov.batch_write(folder, {f"{folder}/{i:05d}.md": fact(i, rng)
                                    for i in range(start, min(start + 500, facts))}, wait=False)
        ov.wait()
        _step(-1, "written", {"facts": facts, "seconds": round(time.perf_counter() - t, 1)})
        rows = []
        for n in range(trials):
            # The drill right after its backup, the long restore last: a run cut short still has both.
            row: dict[str, Any] = {}
            row["create"], code, made, err = _cli_json(cfg, "backup", "create")
            if code != 0 or "path" not in made:
                raise SystemExit(f"backup create exit {code}: {err}")
            row.update(bytes=made["bytes"], held=sum(made["areas"].values()))
            _step(n, "create", row)
            row["verify"], code, drill, err = _cli_json(cfg, "backup", "verify", made["path"])
            row.update(verify_exit=code, members=drill.get("members", 0), problems=len(drill.get("problems", [])))
            _step(n, "verify", row)
            admin.rm(folder, recursive=True)
            admin.wait()
            row["restore"], code, put, err = _cli_json(cfg, "backup", "restore", made["path"], "--all")
            row.update(restore_exit=code, written=put.get("files", 0), restore_said=err)
            _step(n, "restore", row)
            rows.append(row)
    return rows


def write_backup_times(facts: int, rows: list[dict[str, Any]], load: tuple[float, float], uptime: str) -> str:
    """The section "At N facts: backup, restore, drill" of nightly.md (an earlier one of that size replaced)."""
    med = {k: statistics.median(r[k] for r in rows) for k in ("create", "restore", "verify", "bytes")}
    title = f"{AT_SIZE.strip()} {facts:,} facts: backup, restore, drill"
    lines = [title, "",
             f"`nice -n 10 python -m muninn.evals.lab.bench_nightly --facts {facts} --trials {len(rows)}` "
             f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores shared with other "
             f"work; 1-minute load average {load[0]:.2f} at the start, {load[1]:.2f} at the end; `uptime` during "
             f"the run: `{uptime}`). The demo workspace with {facts:,} facts the agent raven wrote straight into "
             "its own area (what a backup holds: no export wrote them). Each trial: `backup create`, `backup "
             "verify` (the drill), the facts deleted on the server, `backup restore --all` (every fact written "
             "back, read back, and every reader's keyword index and search vectors refreshed). Seconds are wall "
             "clock of the CLI, start-up included.", "",
             "| | median s | trials s |", "| --- | ---: | --- |"]
    for k, name in (("create", "backup create"), ("restore", "backup restore --all"), ("verify", "backup verify")):
        lines.append(f"| {name} | {med[k]:.2f} | {', '.join(f'{r[k]:.2f}' for r in rows)} |")
    first = rows[0]
    lines += ["", f"Backup size: {med['bytes'] / 1e6:.2f} MB median ({int(med['bytes']):,} bytes), sealed; "
              f"{first['held']:,} server file(s) held; the drill checked {first['members']:,} member(s) with "
              f"{sum(r['problems'] for r in rows)} problem(s) over all trials; the restore wrote "
              f"{first['written']:,} file(s) (exit {first['restore_exit']}).", ""]
    return "\n".join(lines)


def _put_section(text: str, section: str) -> str:
    head = section.split("\n", 1)[0]
    if head in text:
        start = text.index(head)
        rest = text.find(AT_SIZE, start + 1)
        return text[:start] + section + (text[rest:] if rest >= 0 else "")
    return text.rstrip("\n") + "\n\n" + section if text.strip() else section


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trials", type=int, nargs="?", default=5)
    parser.add_argument("--record", type=int, default=0, help="facts in the synthetic tasks source (0: the demo's)")
    parser.add_argument("--facts", type=int, default=0, help="time backup, restore and the drill with N facts")
    parser.add_argument("--trials", type=int, dest="facts_trials", default=3, help="trials for --facts")
    args = parser.parse_args()
    if args.facts:
        return facts_main(args.facts, args.facts_trials)
    tmp = Path(tempfile.mkdtemp(prefix="muninn-bench-nightly-"))
    server_venv = paths.server_venv()
    os.environ["XDG_DATA_HOME"] = str(tmp / "xdg")
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyrings.alt.file.PlaintextKeyring"
    os.environ["MUNINN_SERVER_VENV"] = str(server_venv)
    cfg = _workspace(tmp, args.record)
    os.environ["MUNINN_CONFIG"] = str(cfg)
    settings = config.load(cfg)
    load = os.getloadavg()[0]
    lifecycle.up(settings, say=lambda m: None, config_file=cfg)
    try:
        assert policy_apply.apply(settings, policy_mod.load_for(settings), say=lambda m: None).ok
        cold = _night(cfg)
        print(json.dumps(cold), file=sys.stderr, flush=True)
        warm = _night(cfg)
        warm += _restore(cfg, settings)
        remembered = [] if args.record else _findable(cfg, settings, args.trials)
    finally:
        lifecycle.down(settings, say=lambda m: None)
    if args.record:
        out = OUT.with_name(f"nightly-{args.record}.md")
        out.write_text(write_record(args.record, cold, warm, (load, os.getloadavg()[0])))
    else:
        write(cold, warm, remembered, load)
        out = OUT
    print(out.read_text())


def write_record(size: int, cold: list[dict], warm: list[dict], load: tuple[float, float]) -> str:
    """The two nights at size, per job: seconds, status and what each job said."""
    lines = [f"# `muninn nightly` at {size:,} facts, sources configured", "",
             f"`nice -n 10 python -m muninn.evals.lab.bench_nightly --record {size}` "
             f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, 1-minute load "
             f"average {load[0]:.2f} at the start, {load[1]:.2f} at the end). The demo workspace (policy, vault, "
             f"inventory, notes, observations, examples/notes as a git repository) with its `tasks` source the "
             f"synthetic record of {size:,} facts. First night: refresh exports and syncs everything. Next night: "
             "nothing changed.", "",
             "| job | first night s | status | next night s | status | first night said | next night said |",
             "| --- | ---: | --- | ---: | --- | --- | --- |"]
    second = {r["name"]: r for r in warm}
    cold = cold + [{"name": r["name"], "seconds": 0.0, "status": "-", "detail": "(after the next night only)"}
                   for r in warm if r["name"] not in {c["name"] for c in cold}]
    for r in cold:
        n = second.get(r["name"], {})
        said = [str(x.get("detail", "")).replace("|", "/")[:160] for x in (r, n)]
        lines.append(f"| {r['name']} | {r['seconds']:.2f} | {r['status']} | {n.get('seconds', 0):.2f} | "
                     f"{n.get('status', '-')} | {said[0]} | {said[1]} |")
    return "\n".join(lines) + "\n"


def _ms(values: list[float]) -> str:
    ok = [v for v in values if v >= 0]
    if not ok:
        return "never (180 s)"
    missed = len(values) - len(ok)
    return (f"{statistics.median(ok):.2f} s median, {pct(ok, .95):.2f} s p95, max {max(ok):.2f} s"
            + (f" ({missed} not found in 180 s)" if missed else ""))


def write(cold: list[dict], warm: list[dict], remembered: list[dict], load: float) -> None:
    lines = ["# Nightly and the agent's day: measured", "",
             f"`python -m muninn.evals.lab.bench_nightly` on {platform.node()} ({os.cpu_count()} cores, load average "
             f"{load:.1f} at start), its own stack on free ports, the demo corpus (examples/: notes, tasks.db, "
             "observations, secrets, inventory; examples/notes also as a git repository for `snapshot`).", "",
             "## `muninn nightly`, per job", "",
             "Cold: the first night (refresh exports and syncs every source). Warm: the next run, nothing changed.",
             "", "| job | cold s | status | warm s | status |", "| --- | ---: | --- | ---: | --- |"]
    by_name = {r["name"]: r for r in cold}
    for w in warm:      # the warm run's list also holds the restore and the drill, run after it only
        r = by_name.get(w["name"], {"name": w["name"], "seconds": 0.0, "status": "-"})
        lines.append(f"| {r['name']} | {r['seconds']:.2f} | {r['status']} | {w.get('seconds', 0):.2f} | "
                     f"{w.get('status', '')} |")
    lines += ["", "Details of the warm run (what each job said):", ""]
    lines += [f"- `{r['name']}`: {r['detail'][:220]}" for r in warm if r["detail"]]
    lines += ["", f"## After `recall_remember`: findable when ({len(remembered)} facts, raven through stdio MCP)", "",
              "Seconds from sending `recall_remember` until the fact is a hit. Keywords: `recall_search` with the "
              "fact's identifier (keyword route, raven's own index, updated by the remember call itself). Vectors: "
              "OpenViking `find` with the fact's sentence as raven (the server indexes the file asynchronously).",
              "", "| | time |", "| --- | --- |",
              f"| `recall_remember` returns | {_ms([r['returned'] for r in remembered])} |",
              f"| found by keywords | {_ms([r['keyword'] for r in remembered])} |",
              f"| found by vectors | {_ms([r['vector'] for r in remembered])} |", "",
              "Both are polled every 0.2 s, the first poll as soon as the call returns: a time equal to the "
              "return time means the fact was a hit at the first poll. The nightly exit 1 is `verify`'s findings: "
              "the demo inventory's hosts and VPN do not exist on this machine.", ""]
    OUT.write_text("\n".join(lines) + kept_at_size(OUT))


AT_SIZE = "\n## At "   # the at-size section(s), written from `--record` runs by hand: a demo run keeps them


def kept_at_size(path: Path) -> str:
    text = path.read_text() if path.is_file() else ""
    return text[text.index(AT_SIZE):] if AT_SIZE in text else ""


def facts_main(facts: int, trials: int) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="muninn-bench-backup-"))
    server_venv = paths.server_venv()   # the shared one: resolved before XDG_DATA_HOME moves
    os.environ["XDG_DATA_HOME"] = str(tmp / "xdg")
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyrings.alt.file.PlaintextKeyring"
    os.environ["MUNINN_SERVER_VENV"] = str(server_venv)
    cfg = _workspace(tmp, timeout=600)
    os.environ["MUNINN_CONFIG"] = str(cfg)
    settings = config.load(cfg)
    load = os.getloadavg()[0]
    lifecycle.up(settings, say=lambda m: None, config_file=cfg)
    try:
        assert policy_apply.apply(settings, policy_mod.load_for(settings), say=lambda m: None).ok
        rows = backup_times(cfg, settings, facts, trials)
        uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    finally:
        lifecycle.down(settings, say=lambda m: None)
    section = write_backup_times(facts, rows, (load, os.getloadavg()[0]), uptime)
    OUT.write_text(_put_section(OUT.read_text() if OUT.is_file() else "", section))
    print(section)


if __name__ == "__main__":
    main()
