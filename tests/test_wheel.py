"""The wheel ships the product and leaves the lab out: built from this checkout, offline, and then
imported on its own, with the checkout nowhere on the path.

The lab (evals/lab: benchmarks, probes, the corpora harness) runs from a checkout; tests/test_layout.py
keeps every shipped module from importing it, this file keeps the build from packing it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("muninn/evals/sealed.py", "muninn/evals/report.py", "muninn/evals/demo.py", "muninn/evals/bench.py",
           "muninn/evals/cli.py", "muninn/evals/bench_cli.py", "muninn/evals/questions/ops.yaml", "muninn/cli.py",
           "muninn/plugins/search/skills/observation-log/SKILL.md")


def _checkout_copy(dest: Path) -> Path:
    """Tracked and untracked-but-not-ignored files: the build's build/ and egg-info stay out of the checkout."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # CI runs on a clean clone: the wheel is built from what git tracks, never from a stray file.
    assert shutil.which("git") is not None and (ROOT / ".git").exists(), "needs a git checkout to copy from"
    src = _checkout_copy(tmp_path_factory.mktemp("src"))
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                    "-q", ".", "-w", str(out)], cwd=src, check=True, capture_output=True, timeout=300)
    (built,) = out.glob("muninn-*.whl")
    return built


def lab_entries(names: list[str]) -> list[str]:
    return [n for n in names if n.startswith("muninn/evals/lab/") or n == "muninn/evals/lab.py"]


def test_the_wheel_has_no_lab_module(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert lab_entries(names) == []
    assert not [n for n in names if n.startswith("muninn/evals/results/")], "results are not shipped"


def test_the_wheel_has_what_ships(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert [s for s in SHIPPED if s not in names] == []


def test_the_lab_check_sees_a_lab_module() -> None:
    """The check above can fail: a name list with one lab module in it is caught."""
    assert lab_entries(["muninn/evals/sealed.py", "muninn/evals/lab/corpora/harness.py"]) == \
        ["muninn/evals/lab/corpora/harness.py"]


def test_the_installed_wheel_runs_every_command_without_the_lab(wheel: Path, tmp_path: Path) -> None:
    """Installed alone (its dependencies from this venv), every command's part imports, the shipped skill and
    question sets are found, and the lab is absent."""
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target", str(target),
                    str(wheel)], check=True, capture_output=True, timeout=300)
    # This venv's editable install finds muninn.* in the checkout: its finder is taken off first, so what
    # imports is the wheel alone, as on a machine that installed it.
    code = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in f.__module__]; "
            "import importlib.util as u, muninn, muninn.cli as c; c.all_commands(); "
            "from muninn.evals import sealed; from muninn.nightly import skills_install as si; "
            "print(','.join(si.packaged()), (sealed.QUESTIONS_DIR / 'ops.yaml').is_file()); "
            "print(muninn.__file__); print(u.find_spec('muninn.evals.lab'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(target), "HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr[-2000:]
    skills, questions, where, lab = out.stdout.split()[-4:]
    assert Path(where).is_relative_to(target)
    assert lab == "None"
    assert (skills, questions) == ("observation-log", "True")   # the data the commands read came along
