"""Every relative link in README.md, docs/*.md and evals/results/*.md resolves (file, and heading anchor where
one is given), and every `evals/results/...` path they name exists: the figures the docs point at are there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
         *sorted((ROOT / "evals" / "results").glob("*.md"))]
_FENCED = re.compile(r"^```.*?^```", re.M | re.S)
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_RESULTS = re.compile(r"evals/results/[A-Za-z0-9_./<>-]*[A-Za-z0-9_/>]")
_HEADING = re.compile(r"^#{1,6} (.+?)\s*#*$", re.M)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for m in _HEADING.finditer(_FENCED.sub("", text)):
        base = slug(m[1])
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def broken(page: Path, text: str) -> list[str]:
    """Each link or results path in `text` (the content of `page`) that does not resolve."""
    prose = _FENCED.sub("", text)
    problems = []
    for target in _LINK.findall(prose):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):     # https:, mailto:, viking:
            continue
        path, _, anchor = target.partition("#")
        if not path:
            if anchor not in anchors(text):
                problems.append(f"{page.name}: {target}: no heading {target}")
            continue
        file = (page.parent / path).resolve()
        if not file.exists():
            problems.append(f"{page.name}: {target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text()):
            problems.append(f"{page.name}: {target}: no heading #{anchor} in {file.name}")
    for mention in _RESULTS.findall(prose):
        if "<" not in mention and not (ROOT / mention).exists():
            problems.append(f"{page.name}: {mention}: not in evals/results")
    return problems


def test_there_are_pages_to_check() -> None:
    names = {p.name for p in PAGES}
    assert {"README.md", "configuration.md", "security.md", "search.md", "nightly.md", "deployment.md",
            "openviking.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_link_resolves(page: Path) -> None:
    assert broken(page, page.read_text()) == []


def test_the_docs_link_to_their_figures() -> None:
    # The measurements live in evals/results; the pages that discuss them must link there.
    for name in ("search.md", "security.md", "evals.md", "nightly.md", "deployment.md"):
        assert "../evals/results/" in (ROOT / "docs" / name).read_text(), name


@pytest.mark.parametrize("text, expected", [
    ("see [x](nowhere.md)", "no such file"),
    ("see [x](security.md#no-such-heading)", "no heading"),
    ("see [x](#also-missing)", "no heading"),
    ("figures in `evals/results/never-measured.md`", "not in evals/results"),
    ("see [x](../evals/results/nothing.md)", "no such file"),
])
def test_a_broken_link_is_found(text: str, expected: str) -> None:
    page = ROOT / "docs" / "example.md"
    assert any(expected in p for p in broken(page, "# Example\n\n" + text))


@pytest.mark.parametrize("text", [
    "see [x](security.md#the-mcp-guard) and [y](configuration.md#searchrerank)",
    "see [x](#example) and [site](https://pypi.org/project/openviking/)",
    "```bash\n[not a link](nowhere.md)\n```",
    "one run per size: `evals/results/nightly-<N>.md`",
])
def test_a_good_link_passes(text: str) -> None:
    assert broken(ROOT / "docs" / "example.md", "# Example\n\n" + text) == []


@pytest.mark.parametrize("heading, anchor", [
    ("What `exec` closes around its pipes", "what-exec-closes-around-its-pipes"),
    ("Policy: one file, three uses", "policy-one-file-three-uses"),
    ("search.rerank", "searchrerank"),
    ("Not caught, on purpose or by limit", "not-caught-on-purpose-or-by-limit"),
])
def test_slug_is_githubs(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor
