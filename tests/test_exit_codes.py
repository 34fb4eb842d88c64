"""docs/cli.md's "Exit codes" table and `ExitCode` are one contract: same codes, same meanings, one row each;
the README links that table and holds no copy of it."""

import re
from pathlib import Path

import pytest

from muninn.core.errors import ExitCode, MuninnError

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "docs" / "cli.md"
_ROW = re.compile(r"^\| (\d+) \| (.+?) \|$")


def table_rows(text: str) -> list[tuple[int, str]]:
    """The (code, meaning) rows of the table under `## Exit codes`, in order."""
    section = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    return [(int(m[1]), m[2]) for line in section.splitlines() if (m := _ROW.match(line.strip()))]


def mismatches(rows: list[tuple[int, str]]) -> list[str]:
    problems = []
    codes = [code for code, _ in rows]
    problems += [f"code {c} has {codes.count(c)} rows" for c in sorted(set(codes)) if codes.count(c) > 1]
    table = dict(rows)
    for member in ExitCode:
        if member.value not in table:
            problems.append(f"{member.name} ({member.value}) has no row in docs/cli.md")
        elif table[member.value] != member.meaning:
            problems.append(f"{member.name}: docs/cli.md says {table[member.value]!r}, the enum {member.meaning!r}")
    problems += [f"docs/cli.md row {c} is not an ExitCode" for c in table if c not in set(ExitCode)]
    return problems


def test_the_table_equals_the_enum() -> None:
    rows = table_rows(TABLE.read_text())
    assert rows, "no rows found under '## Exit codes'"
    assert mismatches(rows) == []



def test_the_readme_links_the_table_and_keeps_no_copy() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "(docs/cli.md#exit-codes)" in readme
    assert table_rows(readme) == []

def test_no_two_members_share_a_code_or_a_meaning() -> None:
    # IntEnum would silently alias a reused value: count declared names against members.
    assert len(ExitCode.__members__) == len(list(ExitCode))
    assert len({m.meaning for m in ExitCode}) == len(ExitCode)


@pytest.mark.parametrize("edit, expected", [
    (lambda rows: rows[:-1], "has no row in docs/cli.md"),
    (lambda rows: [*rows, rows[1]], "has 2 rows"),
    (lambda rows: [*rows, (99, "made up")], "is not an ExitCode"),
    (lambda rows: [(c, m + " (edited)") if c == 7 else (c, m) for c, m in rows], "docs/cli.md says"),
])
def test_the_check_catches_a_drifted_table(edit, expected: str) -> None:
    rows = edit(table_rows(TABLE.read_text()))
    assert any(expected in p for p in mismatches(rows))


def _error_classes(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_error_classes(sub)]
    return out


def test_every_error_class_uses_a_member() -> None:
    import muninn.cli

    muninn.cli.all_commands()  # imports every part, so every error class is defined

    classes = [MuninnError, *_error_classes(MuninnError)]
    assert len(classes) > 10
    for cls in classes:
        assert isinstance(cls.exit_code, ExitCode), f"{cls.__module__}.{cls.__name__}.exit_code = {cls.exit_code!r}"
