"""A LoCoMo conversation as a user's notes tree: one turn per file, who spoke and when in its heading.

    python -m muninn.evals.lab.corpora.locomo_notes CONV.json OUT_DIR

This writes SOURCE files only, the way a chat-export tool would, and never fact files: the product's
notes exporter turns them into facts. One turn per file (not one session per file with turns as
sections) because a turn is shorter than the exporter's smallest section (`min_chars`), so turns
as sections would be merged into their session and a question could not name its turn.

The session date goes where the notes exporter reads a date: the front matter `date`. It is also
in the heading, as a person would write it ("Caroline, 8 May 2023"), so that the text itself says
when, whatever the exporter does with dates.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
from pathlib import Path

from muninn.evals.lab.corpora.questions import Question, QuestionSet

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def session_date(raw: str) -> dt.datetime:
    # "1:56 pm on 8 May, 2023"
    return dt.datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y")


def turn_file(dia_id: str) -> str:
    """`D3:12` -> `session-03/turn-012.md`: sorted the way the conversation ran."""
    session, turn = (int(x) for x in re.fullmatch(r"D(\d+):(\d+)", dia_id).groups())  # type: ignore[union-attr]
    return f"session-{session:02d}/turn-{turn:03d}.md"


def convert(conv: dict, out: Path) -> list[Path]:
    written = []
    sessions = sorted(int(m.group(1)) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))
    for n in sessions:
        when = session_date(conv[f"session_{n}_date_time"])
        for t in conv[f"session_{n}"]:
            text = t["text"]
            if t.get("blip_caption"):
                text += f" [shares a photo: {t['blip_caption']}]"
            heading = f"# {t['speaker']}, {when:%-d %B %Y} at {when:%-I:%M %p} (session {n})"
            target = out / turn_file(t["dia_id"])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f"---\ndate: {when:%Y-%m-%d}\n---\n{heading}\n\n{text}\n", encoding="utf-8")
            written.append(target)
    return written


def questions(conv: dict, name: str) -> QuestionSet:
    """Categories 1-4 with evidence; a question is found when any of its evidence turns is."""
    qs = []
    for i, q in enumerate(conv["qa"]):
        ids = sorted({e for ev in q.get("evidence", []) for e in re.findall(r"D\d+:\d+", ev)})
        if q.get("category") in CATEGORIES and ids:
            qs.append(Question(id=f"q{i:03d}", kind="conversation", question=q["question"],
                               files=[turn_file(e) for e in ids], label=CATEGORIES[q["category"]]))
    return QuestionSet(name=name, corpus=name, questions=qs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("conversation", type=Path)
    ap.add_argument("out", type=Path)
    args = ap.parse_args()
    files = convert(json.loads(args.conversation.read_text()), args.out)
    print(f"{len(files)} turns -> {args.out}")


if __name__ == "__main__":
    main()
