"""A corpus's question set: each question says how to tell that a hit is the right section.

    questions: [{id, kind, question, answer | files | expect}]

- `answer`: a substring of the right section's text (the documentation corpora);
- `files`: the source files the right facts come from (a LoCoMo turn is one source file);
- `expect`: substrings of the right fact's path or source path (the sample corpus's ops set).

The answer is checked against the converted notes tree before any search: it must occur exactly once,
so that "the fact holding it" is one fact and not a guess. After export, the gold of a question is the
fact file whose body holds the answer; a question whose answer the exporter cut in two has no gold and
fails the run loudly instead of counting as a miss.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from muninn.core import yamlfile
from muninn.evals import lab

Kind = Literal["identifier", "howto", "vocabulary", "buried", "near-duplicate", "conversation", "ops"]
QUESTIONS_DIR = lab.EVALS / "questions"


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    kind: Kind
    question: str = Field(min_length=3)
    answer: str | None = Field(None, min_length=4, description="a substring of exactly one section of the corpus")
    files: list[str] | None = Field(None, min_length=1, description="source files (relative) of the right facts")
    expect: list[str] | None = Field(None, min_length=1, description="substrings of a right fact's path")
    label: str = Field("", description="a finer class for the report, e.g. LoCoMo's category")

    @model_validator(mode="after")
    def one_gold(self) -> Question:
        if sum(x is not None for x in (self.answer, self.files, self.expect)) != 1:
            raise ValueError("give exactly one of answer, files, expect")
        return self


class QuestionSet(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    corpus: str
    questions: list[Question] = Field(min_length=1)


def load(path: Path) -> QuestionSet:
    doc = yamlfile.load(path)
    qs = doc.validate(QuestionSet)
    seen: set[str] = set()
    for i, q in enumerate(qs.questions):
        if q.id in seen:
            raise doc.error_at(("questions", i, "id"), f"duplicate question id {q.id!r}")
        seen.add(q.id)
    return qs


def norm(text: str) -> str:
    """Whitespace-insensitive text: manuals wrap sentences across lines, and the exporter may re-join them."""
    return " ".join(text.split())


def occurrences(tree: Path, answers: list[str]) -> dict[str, list[str]]:
    """answer -> the notes files (relative) that hold it, with how many times when more than once."""
    texts = {p.relative_to(tree).as_posix(): norm(p.read_text(encoding="utf-8")) for p in sorted(tree.rglob("*.md"))}
    out: dict[str, list[str]] = {}
    for a in answers:
        out[a] = [f"{rel} (x{n})" if n > 1 else rel for rel, t in texts.items() if (n := t.count(norm(a)))]
    return out


def check(tree: Path, qs: QuestionSet) -> list[str]:
    """One line per answer that is not a unique substring of the tree; [] when every answer is."""
    found = occurrences(tree, [q.answer for q in qs.questions if q.answer])
    problems = []
    for q in qs.questions:
        if q.answer is None:
            continue
        where = found[q.answer]
        if len(where) != 1 or "(x" in where[0]:
            problems.append(f"{q.id}: answer {q.answer!r} occurs in {where or 'no file'}")
    return problems
