"""Dates without a year: refusals on ordinary text and catches on future ones, for each `PAST_FAVOUR`.

Run: `.venv/bin/python -m muninn.evals.lab.bench_dates_yearless`. The ordinary corpora are
bench_dates.py's (the sample notes, the sample observation log, generated tool output, LoCoMo dev turns,
each checked against the moment it was written). The future set is generated: each yearless wording of
a day 1 to 6 days after the moment of writing, in past-tense report sentences (what the seed's agent
wrote), at 60 moments through a year. A refusal on an ordinary text whose grammar does not speak of the
future (bench_dates._FUTURE_GRAMMAR) is a false refusal candidate.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from muninn.evals.lab import bench_dates
from muninn.guards.dates import check as dates
from muninn.guards.dates import yearless as date_yearless

FAVOURS = (1.0, 2.0, 3.0, 4.0, 6.0)
_REPORTS = ("No bounce arrived after midnight UTC {w}.", "The migration finished {w}; I verified every host.",
            "Checked {w}: the certificate was renewed and the alert cleared.", "The backup ran {w} without errors.")


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 11 <= n % 100 <= 13 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def future_set(seed: int = 7) -> list[tuple[str, datetime]]:
    rng = random.Random(seed)
    out: list[tuple[str, datetime]] = []
    start = datetime(2026, 1, 3, tzinfo=UTC)
    for k in range(60):
        now = start + timedelta(days=6 * k, hours=rng.randint(0, 23))
        day = (now + timedelta(days=rng.randint(1, 6))).date()
        for w in (f"on the {_ordinal(day.day)}", f"on {day:%d %B}", f"on {day:%b} {day.day}",
                  f"on {day:%B} the {_ordinal(day.day)}", f"{day.month}月{day.day}日"):
            out.append((rng.choice(_REPORTS).format(w=w), now))
    return out


def refusals(texts: list[tuple[str, datetime]], *, plain_only: bool) -> int:
    return sum(1 for text, now in texts if not dates.check_observation(text, now=now).allowed
               and (not plain_only or not bench_dates._FUTURE_GRAMMAR.search(text)))


def main() -> None:
    now = datetime.now(UTC)
    corpora = {"examples/notes": list(bench_dates.notes(now)), "observations": list(bench_dates.observations()),
               "tool output": list(bench_dates.tool_output(now))}
    if bench_dates.LOCOMO.exists():
        corpora["LoCoMo dev turns"] = list(bench_dates.locomo())
    future = future_set()
    print("| PAST_FAVOUR | " + " | ".join(f"{k} refused (plain)" for k in corpora) + " | future yearless caught |")
    print("|---|" + "---:|" * (len(corpora) + 1))
    for favour in FAVOURS:
        date_yearless.PAST_FAVOUR = favour
        cells = [f"{refusals(t, plain_only=False)} ({refusals(t, plain_only=True)})" for t in corpora.values()]
        caught = refusals(future, plain_only=False)
        print(f"| {favour:g} | " + " | ".join(cells) + f" | {caught} / {len(future)} |")


if __name__ == "__main__":
    main()
