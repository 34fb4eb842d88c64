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
from muninn.guards import dates
from muninn.guards.date_words import SKEW

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
            measure("examples/observations.jsonl", list(observations()), args.show)]
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
