"""The sealed eval: a fixed question set run through the same search path before and after a change.

A question set is YAML: `questions: [{id, question, expect: [substring of a hit's uri or source path]}]`.
A run records each question's rank of the first expected hit, and the set's sha256. Runs are only
compared when the hashes match: editing the questions unseals the set, and the comparison says so.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from muninn.core import yamlfile

SearchFn = Callable[[str, int], Sequence[dict[str, Any]]]
QUESTIONS_DIR = Path(__file__).resolve().parent / "questions"


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    question: str
    expect: list[str] = Field(min_length=1, description="substrings of an expected hit's uri or source path")
    category: str = "general"


class QuestionSet(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    description: str = ""
    questions: list[Question] = Field(min_length=1)


@dataclass
class Outcome:
    id: str
    question: str
    rank: int | None  # 1-based rank of the first expected hit, None if not in the returned list
    top: list[str]


@dataclass
class EvalRun:
    set_name: str
    set_sha256: str
    k: int
    started: float
    label: str
    outcomes: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0

    def hits_at(self, k: int) -> int:
        return sum(1 for o in self.outcomes if o.rank is not None and o.rank <= k)

    def mrr(self) -> float:
        return sum(1 / o.rank for o in self.outcomes if o.rank) / max(1, len(self.outcomes))

    def summary(self) -> dict[str, Any]:
        n = len(self.outcomes)
        return {"set": self.set_name, "label": self.label, "questions": n, "k": self.k,
                f"hit@{self.k}": self.hits_at(self.k), "hit@1": self.hits_at(1),
                "mrr": round(self.mrr(), 3), "seconds": round(self.seconds, 2)}


def load_set(path: Path) -> tuple[QuestionSet, str]:
    doc = yamlfile.load(path)
    qs = doc.validate(QuestionSet)
    ids = [q.id for q in qs.questions]
    if len(ids) != len(set(ids)):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise doc.error_at(("questions",), f"duplicate question id {dup!r}")
    return qs, hashlib.sha256(path.read_bytes()).hexdigest()


def _matches(hit: dict[str, Any], expect: list[str]) -> bool:
    hay = " ".join(str(hit.get(key) or "") for key in ("uri", "source", "source_path", "title"))
    return any(e in hay for e in expect)


def run(path: Path, search: SearchFn, k: int = 4, label: str = "",
        progress: Callable[[int, str], None] | None = None, workers: int = 1) -> EvalRun:
    """`progress(total, question)` is called as each question is answered, in the set's order. `workers`
    questions are asked at once (`search` must then be safe to call from threads); the outcomes are those of
    one at a time."""
    from muninn.plugins.search import batch

    qs, digest = load_set(path)
    result = EvalRun(set_name=qs.name, set_sha256=digest, k=k, started=time.time(), label=label)
    t0 = time.perf_counter()
    answers = batch.in_order(lambda q: list(search(q.question, k)), qs.questions, workers)
    for q, hits in zip(qs.questions, answers, strict=True):
        if progress:
            progress(len(qs.questions), q.question)
        rank = next((i for i, h in enumerate(hits, 1) if _matches(h, q.expect)), None)
        result.outcomes.append(Outcome(q.id, q.question, rank, [h.get("uri", "") for h in hits]))
    result.seconds = time.perf_counter() - t0
    return result


# --- history ----------------------------------------------------------------------------------------

def save(run_: EvalRun, runs_dir: Path) -> Path:
    runs_dir.mkdir(parents=True, exist_ok=True)
    path = runs_dir / f"{run_.set_name}-{time.strftime('%Y%m%dT%H%M%S', time.gmtime(run_.started))}.json"
    path.write_text(json.dumps(asdict(run_), indent=1))
    return path


def load_run(path: Path) -> EvalRun:
    data = json.loads(path.read_text())
    outcomes = [Outcome(**o) for o in data.pop("outcomes")]
    return EvalRun(**data, outcomes=outcomes)


def history(runs_dir: Path, set_name: str) -> list[EvalRun]:
    return [load_run(p) for p in sorted(runs_dir.glob(f"{set_name}-*.json"))]


@dataclass
class Change:
    id: str
    before: int | None
    after: int | None

    @property
    def verdict(self) -> str:
        b, a = self.before or 10_000, self.after or 10_000
        return "same" if a == b else ("better" if a < b else "worse")


def compare(before: EvalRun, after: EvalRun) -> tuple[bool, list[Change]]:
    """(sealed, per-question changes). sealed is False when the question set changed in between."""
    prev = {o.id: o.rank for o in before.outcomes}
    changes = [Change(o.id, prev.get(o.id), o.rank) for o in after.outcomes]
    return before.set_sha256 == after.set_sha256, changes


def plot(runs: list[EvalRun], path: Path) -> Path:
    """hit@1, hit@k and MRR across runs: easier to read than a table once there are more than three."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r.label}\n{time.strftime('%m-%d %H:%M', time.gmtime(r.started))}".strip() for r in runs]
    n = [max(1, len(r.outcomes)) for r in runs]
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(runs) + 2), 3.6))
    xs = range(len(runs))
    width = 0.27
    ax.bar([x - width for x in xs], [r.hits_at(1) / c for r, c in zip(runs, n, strict=True)], width, label="hit@1")
    ax.bar(list(xs), [r.hits_at(r.k) / c for r, c in zip(runs, n, strict=True)], width,
           label=f"hit@{runs[-1].k}")
    ax.bar([x + width for x in xs], [r.mrr() for r in runs], width, label="MRR")
    ax.set_xticks(list(xs), labels, rotation=20, ha="right")
    ax.set_ylim(0, 1.2)
    ax.set_title(f"sealed eval: {runs[-1].set_name} ({len(runs[-1].outcomes)} questions)")
    ax.legend(loc="upper center", ncol=3, frameon=False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
