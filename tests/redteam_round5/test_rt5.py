"""Red team, round 5: one test per case of evals/lab/redteam5_cases.py, through the real entry points.

Every test asserts the SECURE outcome (an attack blocked) or the ORDINARY one (a control untouched). A case
that got through is `xfail(strict=True, reason="ATTACK SUCCEEDED: ...")` and a control falsely hit is
`xfail(strict=True, reason="FALSE POSITIVE: ...")`: the suite stays green while the hole is open and turns
red (XPASS) once it is fixed, so the marker must then be removed. The markers match the last recorded pass
(evals/results/security_redteam5.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _rt5_markers import FALSE_POSITIVES, THROUGH

from muninn.evals.lab import redteam4, redteam5
from muninn.evals.lab.redteam5_cases import Case, cases


@pytest.fixture(scope="module")
def _lab_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, redteam4.Lab]]:
    root = tmp_path_factory.mktemp("rt5")
    with redteam4.environment(root):
        yield root, redteam4.Lab(root)


@pytest.fixture
def lab(_lab_root: tuple[Path, redteam4.Lab]) -> Iterator[redteam4.Lab]:
    root, lab_ = _lab_root
    with redteam4.environment(root):      # after conftest's per-test `isolated` changed MUNINN_HOME
        yield lab_


def _param(case: Case) -> object:
    marks = []
    if case.id in THROUGH:
        marks.append(pytest.mark.xfail(strict=True, raises=AssertionError,
                                       reason=f"ATTACK SUCCEEDED: {THROUGH[case.id]}"))
    if case.id in FALSE_POSITIVES:
        marks.append(pytest.mark.xfail(strict=True, raises=AssertionError,
                                       reason=f"FALSE POSITIVE: {FALSE_POSITIVES[case.id]}"))
    return pytest.param(case, id=case.id, marks=marks)


def _of(klass: str, control: bool) -> list[object]:
    return [_param(c) for c in cases() if c.klass == klass and c.control == control]


def _blocked(lab: redteam4.Lab, case: Case) -> None:
    hit, detail = redteam5.PROBES[case.klass](lab, case)
    assert not hit, f"got through: {detail}"


def _untouched(lab: redteam4.Lab, case: Case) -> None:
    hit, detail = redteam5.PROBES[case.klass](lab, case)
    assert not hit, f"falsely hit: {detail}"


@pytest.mark.parametrize("case", _of('undeclared', control=False))
def test_undeclared_attack(lab: redteam4.Lab, case: Case) -> None:
    """An undeclared secret in a note never reaches what export writes."""
    _blocked(lab, case)


@pytest.mark.parametrize("case", _of('undeclared', control=True))
def test_undeclared_control(lab: redteam4.Lab, case: Case) -> None:
    _untouched(lab, case)


@pytest.mark.parametrize("case", _of('known', control=False))
def test_known_attack(lab: redteam4.Lab, case: Case) -> None:
    """A known value in an encoded form is redacted in notes and restored files."""
    _blocked(lab, case)


@pytest.mark.parametrize("case", _of('known', control=True))
def test_known_control(lab: redteam4.Lab, case: Case) -> None:
    _untouched(lab, case)


@pytest.mark.parametrize("case", _of('hook', control=False))
def test_hook_attack(lab: redteam4.Lab, case: Case) -> None:
    """No field of a hook payload carries a value into the observation log."""
    _blocked(lab, case)


@pytest.mark.parametrize("case", _of('hook', control=True))
def test_hook_control(lab: redteam4.Lab, case: Case) -> None:
    _untouched(lab, case)


@pytest.mark.parametrize("case", _of('exec', control=False))
def test_exec_attack(lab: redteam4.Lab, case: Case) -> None:
    """Secret exec masks the value in every form a stream can take."""
    _blocked(lab, case)


@pytest.mark.parametrize("case", _of('exec', control=True))
def test_exec_control(lab: redteam4.Lab, case: Case) -> None:
    _untouched(lab, case)


@pytest.mark.parametrize("case", _of('dates', control=False))
def test_dates_attack(lab: redteam4.Lab, case: Case) -> None:
    """An observation dated after now is refused."""
    _blocked(lab, case)


@pytest.mark.parametrize("case", _of('dates', control=True))
def test_dates_control(lab: redteam4.Lab, case: Case) -> None:
    _untouched(lab, case)


@pytest.mark.parametrize("case", _of('mcp', control=False))
def test_mcp_attack(lab: redteam4.Lab, case: Case) -> None:
    """The MCP guard confines URIs, keeps the label, and redacts outputs."""
    _blocked(lab, case)


@pytest.mark.parametrize("case", _of('mcp', control=True))
def test_mcp_control(lab: redteam4.Lab, case: Case) -> None:
    _untouched(lab, case)


def test_bank_is_well_formed() -> None:
    """Unique ids; every attack that is judged by what comes out names what must not come out."""
    from muninn.evals.lab import redteam5_cases

    redteam5_cases._check()
