from pathlib import Path

import pytest

from muninn.core.errors import ConfigError
from muninn.evals import sealed

SET = """name: tiny
questions:
  - id: q1
    question: which log viewer do we use
    expect: [notes/tools.md]
  - id: q2
    question: how do I roll back the database upgrade
    expect: [db-upgrade]
  - id: q3
    question: a question nothing answers
    expect: [nowhere]
"""


def fake_search(ranked: dict[str, list[str]]):
    def search(query: str, k: int) -> list[dict]:
        return [{"uri": u} for u in ranked.get(query, [])][:k]
    return search


def test_ranks_hits_and_mrr(tmp_path: Path) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(SET)
    search = fake_search({
        "which log viewer do we use": ["viking://resources/notes/tools.md"],
        "how do I roll back the database upgrade": ["viking://x/a.md", "viking://x/db-upgrade/rollback.md"],
    })
    run = sealed.run(path, search, k=4, label="base")
    assert [o.rank for o in run.outcomes] == [1, 2, None]
    assert run.hits_at(4) == 2 and run.hits_at(1) == 1
    assert run.mrr() == pytest.approx((1 + 0.5) / 3)


def test_several_at_once_give_the_outcomes_of_one_at_a_time(tmp_path: Path) -> None:
    import threading
    import time

    path = tmp_path / "set.yaml"
    path.write_text(SET)
    threads: set[str] = set()
    ranked = fake_search({"which log viewer do we use": ["viking://resources/notes/tools.md"],
                          "how do I roll back the database upgrade": ["viking://x/a.md", "viking://x/db-upgrade/r.md"]})

    def slow_first(query: str, k: int) -> list[dict]:
        threads.add(threading.current_thread().name)
        if query.startswith("which"):   # the first question answers last: its outcome still comes first
            time.sleep(0.2)
        return ranked(query, k)

    seen: list[str] = []
    one = sealed.run(path, ranked, k=4)
    many = sealed.run(path, slow_first, k=4, workers=3, progress=lambda total, q: seen.append(q))
    assert [(o.id, o.rank, o.top) for o in many.outcomes] == [(o.id, o.rank, o.top) for o in one.outcomes]
    assert seen == [o.question for o in one.outcomes] and len(threads) > 1


def test_compare_is_sealed_only_for_the_same_set(tmp_path: Path) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(SET)
    before = sealed.run(path, fake_search({}), label="before")
    after = sealed.run(path, fake_search({"which log viewer do we use": ["notes/tools.md"]}), label="after")
    ok, changes = sealed.compare(before, after)
    assert ok
    assert [c.verdict for c in changes] == ["better", "same", "same"]
    saved = sealed.save(after, tmp_path / "runs")
    assert sealed.load_run(saved).summary() == after.summary()
    path.write_text(SET.replace("which log viewer", "what log viewer"))
    edited = sealed.run(path, fake_search({}))
    assert sealed.compare(after, edited)[0] is False


def test_plot_writes_a_png(tmp_path: Path) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(SET)
    runs = [sealed.run(path, fake_search({}), label=str(i)) for i in range(3)]
    png = sealed.plot(runs, tmp_path / "plot.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("text, needle", [
    ("name: x\nquestions:\n  - id: a\n    question: q\n", "questions.0.expect"),
    ("name: x\nquestions:\n  - {id: a, question: q, expect: [e]}\n  - {id: a, question: r, expect: [e]}\n",
     "duplicate question id 'a'"),
])
def test_bad_question_set_names_the_line(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=needle) as info:
        sealed.load_set(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("before, after, max_drop, max_mrr, lost", [
    ([1, 2, None], [1, 2, None], 0, 0.02, ""),                  # the same run never regresses
    ([1, 2, None], [1, 1, 1], 0, 0.02, ""),                     # better is not a loss
    ([1, 2, None], [1, None, None], 0, 0.02, "hit@4 fell from 2 to 1"),
    ([1, 2, None], [1, None, None], 1, 1.0, ""),                # within the allowed drop
    ([1, 1, None], [1, 3, None], 0, 0.02, "MRR fell from 0.667 to 0.444"),   # same hits, worse ranks
    ([1, 1, None], [1, 3, None], 0, 0.5, ""),
    ([1, 1, 1], [None, None, None], 0, 0.02, "hit@4 fell from 3 to 0 (allowed drop 0); MRR fell"),
])
def test_the_gate_says_what_was_lost_beyond_the_allowed_drop(tmp_path: Path, before, after, max_drop, max_mrr,
                                                             lost) -> None:
    from muninn.evals import report

    path = tmp_path / "set.yaml"
    path.write_text(SET)
    qs = ["which log viewer do we use", "how do I roll back the database upgrade", "a question nothing answers"]
    expect = ["viking://r/notes/tools.md", "viking://r/db-upgrade/a.md", "viking://r/nowhere.md"]

    def ranked(ranks: list[int | None]) -> dict[str, list[str]]:
        return {q: ([f"viking://r/other{i}.md" for i in range(r - 1)] + [e]) if r else []
                for q, e, r in zip(qs, expect, ranks, strict=True)}

    prev = sealed.run(path, fake_search(ranked(before)), k=4)
    cur = sealed.run(path, fake_search(ranked(after)), k=4)
    why = report.regression(prev, cur, max_drop, max_mrr)
    assert why.startswith(lost) if lost else why == ""
