"""Measure the date check's refusals on ordinary text, and dateparser's, on the same texts.

Run: `.venv/bin/python -m muninn.evals.lab.bench_dates [--show N]`. Corpora, each text checked against
the moment it was written:

- examples/notes: every paragraph of the sample notes, now = the run's time (they were written before);
- examples/observations.jsonl: each record's input and output, now = its `ts`;
- LoCoMo dev (/work/shared/datasets/locomo-dev): every turn, now = its session's date and time.

Two checkers: muninn's (guards.dates.check_observation) and dateparser alone
(`search_dates`, PREFER_DATES_FROM=past, RELATIVE_BASE=now; a text is refused when any date it
finds lies after now + the clock skew). LoCoMo turns are chat, not past-tense notes: a turn such as
"I'm going camping next month" is a plan and is rightly refused. So refusals are split by whether
the turn speaks of the future in its grammar (will, 'll, going to, gonna, plan to, can't wait, soon);
the ones that do not are the candidates for false refusals, printed with --show for reading.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from muninn.evals import lab
from muninn.guards.dates import check as dates
from muninn.guards.dates.words import SKEW

ROOT = lab.REPO
LOCOMO = Path("/work/shared/datasets/locomo-dev")
_FUTURE_GRAMMAR = re.compile(r"\b(?:will|won't|shall|\w+'ll|going\s+to|gonna|plan(?:ning)?\s+to|planned|"
                             r"can't\s+wait|looking\s+forward|hope\s+to|soon|upcoming|about\s+to)\b", re.I)


def notes(now: datetime) -> Iterator[tuple[str, datetime]]:
    for path in sorted((ROOT / "examples" / "notes").rglob("*.md")):
        for para in re.split(r"\n\s*\n", path.read_text()):
            if para.strip():
                yield para, now


def observations() -> Iterator[tuple[str, datetime]]:
    for line in (ROOT / "examples" / "observations.jsonl").read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            yield f"{row.get('input', '')}\n{row.get('output', '')}", dates.parse_when(row["ts"])


def locomo() -> Iterator[tuple[str, datetime]]:
    import dateparser

    for path in sorted(LOCOMO.glob("*.json")):
        conv = json.loads(path.read_text())
        for key, turns in conv.items():
            if not re.fullmatch(r"session_\d+", key) or not isinstance(turns, list):
                continue
            when = dateparser.parse(conv[f"{key}_date_time"], settings={"RETURN_AS_TIMEZONE_AWARE": False})
            assert when is not None, conv[f"{key}_date_time"]
            for turn in turns:
                yield turn["text"], when.replace(tzinfo=UTC)


def tool_output(now: datetime, per_form: int = 200, seed: int = 32) -> Iterator[tuple[str, datetime]]:
    """Generated lines of real tool output, every time in them before `now`, with the numbers tool output
    is full of: 10- and 13-digit ids, phone numbers, versions, addresses, resource versions, PIDs."""
    import random
    import uuid
    from datetime import timedelta

    rng = random.Random(seed)

    def ago() -> datetime:
        return now - timedelta(seconds=rng.randint(60, 365 * 86400))

    def digits(n: int) -> str:
        return str(rng.randint(10 ** (n - 1), 10 ** n - 1))

    forms = [
        lambda t: f"web-{digits(10)}-x7k2p   1/1     Running   {rng.randint(0, 9)}          {rng.randint(1, 90)}d",
        lambda t: f"{t:%b %d %H:%M:%S} ops-vm1 systemd[{rng.randint(1, 99999)}]: Started backup.service.",
        lambda t: f"{t:%Y-%m-%dT%H:%M:%S}+0000 ops-vm1 kernel: eth0: link up (id {digits(10)})",
        lambda t: f'10.2.{rng.randint(0, 255)}.{rng.randint(1, 254)} - - [{t:%d/%b/%Y:%H:%M:%S} +0000] "GET '
                  f'/api/v1/orders/{digits(10)} HTTP/1.1" 200 {rng.randint(100, 99999)}',
        lambda t: json.dumps({"ts": int(t.timestamp()), "level": "info", "msg": "job done", "id": int(digits(10)),
                              "request_id": digits(13), "duration_ms": rng.randint(1, 9999)}),
        lambda t: json.dumps({"timestamp": int(t.timestamp() * 1000), "order": digits(13), "user": digits(10)}),
        lambda t: f"Call the on-call at +1 {digits(3)} {digits(3)} {digits(4)} or {digits(10)}; ticket {digits(10)}.",
        lambda t: f"resourceVersion: \"{digits(10)}\"\nuid: {uuid.UUID(int=rng.getrandbits(128))}\n"
                  f"creationTimestamp: \"{t:%Y-%m-%dT%H:%M:%SZ}\"",
        lambda t: f"Upgraded nginx {rng.randint(1, 2)}.{rng.randint(10, 29)}.{rng.randint(0, 30)} -> "
                  f"{rng.randint(1, 2)}.{rng.randint(10, 29)}.{rng.randint(10, 39)}, "
                  f"helm v3.{rng.randint(10, 17)}.{rng.randint(0, 9)}",
        lambda t: f"commit {rng.getrandbits(160):040x}\nDate:   {t:%a %b %d %H:%M:%S %Y} +0000\n\n"
                  f"    fix build {digits(10)}",
        lambda t: f"trace {uuid.UUID(int=rng.getrandbits(128))} span {rng.getrandbits(64):016x} "
                  f"sha256:{rng.getrandbits(256):064x}",
        lambda t: f"i-0{rng.getrandbits(64):016x}  t3.medium  running  {t:%Y-%m-%dT%H:%M:%S}.000Z  vpc-{digits(8)}",
        lambda t: f"pid {digits(7)} exited; core dumped at offset {digits(10)} ({digits(13)} bytes read)",
        lambda t: f"CONTAINER ID   IMAGE          CREATED       STATUS\n{rng.getrandbits(48):012x}   "
                  f"postgres:16.{rng.randint(0, 9)}   {rng.randint(2, 9)} weeks ago   Up {rng.randint(2, 9)} days",
        lambda t: f"Build #{digits(5)} finished at {t:%H:%M} on {t:%d.%m.%Y}; artifact {digits(10)}.tar.gz, "
                  f"size {digits(10)} bytes",
        lambda t: f"{t:%Y-%m-%d %H:%M:%S},{rng.randint(0, 999):03d} INFO  [worker-{rng.randint(1, 64)}] "
                  f"processed batch {digits(10)} in {rng.randint(1, 900)} ms",
        lambda t: f"Mem: {digits(8)} {digits(8)} {digits(7)}  Swap: 0 0 0  uptime {rng.randint(1, 400)} days",
    ]
    for form in forms:
        for _ in range(per_form):
            yield form(ago()), now


def dateparser_refuses(text: str, now: datetime) -> bool:
    from dateparser.search import search_dates

    found = search_dates(text, languages=["en"], settings={
        "RELATIVE_BASE": now.replace(tzinfo=None), "PREFER_DATES_FROM": "past", "RETURN_AS_TIMEZONE_AWARE": False})
    return any(moment.replace(tzinfo=UTC) > now + SKEW for _, moment in found or [])


def measure(name: str, texts: list[tuple[str, datetime]], show: int) -> dict:
    ours, theirs, plain_ours, plain_theirs, shown = 0, 0, 0, 0, 0
    ms_ours = ms_theirs = 0.0
    for text, now in texts:
        started = time.perf_counter()
        refused = not dates.check_observation(text, now=now).allowed
        ms_ours += (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        dp = dateparser_refuses(text, now)
        ms_theirs += (time.perf_counter() - started) * 1000
        plain = not _FUTURE_GRAMMAR.search(text)
        ours += refused
        theirs += dp
        plain_ours += refused and plain
        plain_theirs += dp and plain
        if refused and plain and shown < show:
            shown += 1
            print(f"  [{name}] {dates.check_observation(text, now=now).reason[:90]}\n      {text[:160]!r}")
    n = len(texts)
    return {"corpus": name, "texts": n, "ours": ours, "ours_plain": plain_ours, "dateparser": theirs,
            "dateparser_plain": plain_theirs, "ms_ours": ms_ours / n, "ms_dateparser": ms_theirs / n}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--show", type=int, default=0, help="print this many refused texts per corpus")
    args = parser.parse_args()
    now = datetime.now(UTC)
    rows = [measure("examples/notes (paragraphs)", list(notes(now)), args.show),
            measure("examples/observations.jsonl", list(observations()), args.show),
            measure("tool output (generated: kubectl, journalctl, logs, ids, phones)", list(tool_output(now)),
                    args.show)]
    if LOCOMO.exists():
        rows.append(measure("LoCoMo dev turns", list(locomo()), args.show))
    print("| corpus | texts | muninn refuses | of which no future grammar | dateparser refuses "
          "| of which no future grammar | ms/text muninn | ms/text dateparser |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['corpus']} | {r['texts']} | {r['ours']} ({r['ours'] / r['texts']:.1%}) | {r['ours_plain']} "
              f"| {r['dateparser']} ({r['dateparser'] / r['texts']:.1%}) | {r['dateparser_plain']} "
              f"| {r['ms_ours']:.2f} | {r['ms_dateparser']:.2f} |")


if __name__ == "__main__":
    main()
