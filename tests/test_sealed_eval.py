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
