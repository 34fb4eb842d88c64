"""muninn without its `ml` extra: the CLI starts, `init`, `doctor` and `export` work, and a command that needs
the extra says which one in one sentence (exit 17). The extra is hidden from a real subprocess by a
sitecustomize on PYTHONPATH that sets each of its modules to None in sys.modules: `import torch` then
raises ModuleNotFoundError and `importlib.util.find_spec` answers None, as on a machine without them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from muninn.core import extras
from muninn.core.errors import ExitCode

ROOT = Path(__file__).resolve().parents[1]


def hidden_modules() -> list[str]:
    """What a plain `pip install muninn` lacks: the extra's own modules and every installed module no
    distribution of the base install provides (numpy, huggingface_hub, scipy, ... which the extra brings)."""
    keep = {"pip", "setuptools", "pkg_resources", "wheel", "muninn", "pytest", "_pytest"}
    found = {m for m, dists in extras._providers().items()
             if not m.startswith("_") and m not in keep and "muninn" not in dists and not extras.base_provides(m)}
    return sorted(found | set(extras.MODULES))


@pytest.fixture
def no_ml(tmp_path: Path) -> dict[str, str]:
    """The environment of a process that cannot import anything the base install does not bring."""
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in hidden_modules()))
    env = {**os.environ, "PYTHONPATH": str(blocker), "PYTHON_KEYRING_BACKEND": "keyrings.alt.file.PlaintextKeyring"}
    env.pop("MUNINN_DEBUG", None)
    return env


def _muninn(env: dict[str, str], cwd: Path, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "muninn", *argv], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_the_blocker_really_hides_the_extra(no_ml: dict[str, str], tmp_path: Path) -> None:
    # What the extra drags in is hidden too: a real base-only install (uv tool install .) lacks these.
    assert {"numpy", "huggingface_hub", "safetensors"} <= set(hidden_modules())
    assert not {"yaml", "typer", "httpx", "pydantic", "keyring", "detect_secrets", "mcp"} & set(hidden_modules())
    code = f"import importlib.util as u\nfor m in {[*extras.MODULES, 'numpy', 'huggingface_hub']!r}:\n"
    code += "    assert u.find_spec(m) is None, m\n"
    code += "try:\n    import torch\nexcept ModuleNotFoundError:\n    print('blocked')\n"
    out = subprocess.run([sys.executable, "-c", code], env=no_ml, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "blocked"


def test_help_init_doctor_and_export_work_without_the_extra(no_ml: dict[str, str], tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "mqtt.md").write_text("# MQTT\n\n## Restart\n\nRestart the broker with systemctl restart mosquitto.\n")
    assert "init" in _muninn(no_ml, tmp_path, "--help").stdout
    cfg = tmp_path / "cfg" / "muninn.yaml"
    proc = _muninn(no_ml, tmp_path, "--config", str(cfg), "init", "--notes", str(notes), "--yes")
    assert proc.returncode == 0 and proc.stdout.rstrip().endswith("doctor"), proc.stderr
    proc = _muninn(no_ml, tmp_path, "--config", str(cfg), "doctor", "--json")
    assert proc.returncode in (0, 1), proc.stderr
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    assert checks["embedding model"]["level"] == "fail"
    assert "muninn[ml]" in checks["embedding model"]["fix"]
    assert all(c["level"] == "ok" for n, c in checks.items() if n.startswith(("config", "source", "guard policy")))
    proc = _muninn(no_ml, tmp_path, "--config", str(cfg), "export", "all", "--json")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("argv", [["embed", "serve", "--port", "1"], ["bench", "--quick"], ["up"]])
def test_a_command_that_needs_the_extra_says_which(no_ml: dict[str, str], tmp_path: Path, argv: list[str]) -> None:
    home = tmp_path / "home"
    (tmp_path / "muninn.yaml").write_text(f"home: {home}\nembed:\n  port: 1\n")
    proc = _muninn(no_ml, tmp_path, "--config", str(tmp_path / "muninn.yaml"), *argv)
    assert proc.returncode == ExitCode.MISSING_EXTRA, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'muninn[ml]'" in lines[0], proc.stderr


@pytest.mark.parametrize("module", [*extras.MODULES, "torch.nn", "transformers.models.bert"])
def test_any_module_of_the_extra_missing_anywhere_is_exit_17(run_muninn, monkeypatch: pytest.MonkeyPatch,
                                                             module: str) -> None:
    """Whatever command imports it, wherever: the edge names the extra, not a bug."""
    from muninn.plugins.stack import doctor

    def needs(_settings):
        raise ModuleNotFoundError(f"No module named {module!r}", name=module)

    monkeypatch.setattr(doctor, "run", needs)
    ended = run_muninn(["doctor"])
    code, err = ended.exit_code, ended.stderr
    assert code == ExitCode.MISSING_EXTRA
    assert err.count("\n") == 1 and "muninn[ml]" in err and module.split(".")[0] in err


@pytest.mark.parametrize("module", ["yaml", "muninn.plugins.nope", "some_typo_module"])
def test_any_other_missing_module_is_still_a_bug(run_muninn, monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    from muninn.plugins.stack import doctor

    def needs(_settings):
        raise ModuleNotFoundError(f"No module named {module!r}", name=module)

    monkeypatch.setattr(doctor, "run", needs)
    ended = run_muninn(["doctor"])
    code, err = ended.exit_code, ended.stderr
    assert code == ExitCode.INTERNAL and "muninn[ml]" not in err


def test_the_table_covers_the_ml_extra_in_pyproject() -> None:
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["ml"]
    dists = {re.split(r"[<>=!~ ;\[]", d, maxsplit=1)[0] for d in extra}
    assert {d.replace("-", "_") for d in dists} <= set(extras.MODULES), dists
    # And nothing the base install needs is on it: the CLI must start without the extra.
    base = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert not {re.split(r"[<>=!~ ;\[]", d, maxsplit=1)[0].replace("-", "_") for d in base} & set(extras.MODULES)


def test_the_doctor_table_keeps_the_extra_in_brackets(no_ml: dict[str, str], tmp_path: Path) -> None:
    """The plain table (a pipe) prints the fix as written: rich markup would eat `[ml]`."""
    proc = _muninn(no_ml, tmp_path, "doctor")
    line = next(x for x in proc.stdout.splitlines() if x.startswith("embedding model"))
    assert "pip install 'muninn[ml]'" in line, line
