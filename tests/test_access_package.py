"""plugins/access is one package: no import hidden inside a function, one way to run a child with secrets."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from muninn.core.errors import MuninnError
from muninn.plugins.access import vault
from muninn.plugins.access.injection import Secrets

ACCESS = Path(__file__).resolve().parents[1] / "plugins" / "access"
MODULES = sorted(ACCESS.glob("*.py"))


def _calls(tree: ast.AST, name: str) -> list[int]:
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call)
            and (getattr(n.func, "id", None) == name or getattr(n.func, "attr", None) == name)]


# plugin.py is the registry's way in: it defers the package's heavy modules to the hook that needs them,
# since every command (the observe hook on each tool call among them) loads every plugin.
@pytest.mark.parametrize("path", [p for p in MODULES if p.name != "plugin.py"], ids=lambda p: p.name)
def test_no_function_local_imports(path: Path) -> None:
    # A local import was how vault and inventory hid their loop with verify; inside one package none is needed.
    tree = ast.parse(path.read_text())
    for func in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
        local = [n.lineno for n in ast.walk(func) if isinstance(n, ast.Import | ast.ImportFrom)]
        assert not local, f"{path.name}:{local}: import inside {func.name}()"


@pytest.mark.parametrize("path", [p for p in MODULES if p.name not in ("injection.py", "runner.py")],
                         ids=lambda p: p.name)
def test_only_injection_runs_a_masked_child(path: Path) -> None:
    """secret exec, access exec and the sweep all go through injection.run: nobody else calls the runner."""
    tree = ast.parse(path.read_text())
    assert not _calls(tree, "run_masked"), f"{path.name} calls run_masked directly"
    assert not _calls(tree, "Popen") and not _calls(tree, "subprocess.run"), f"{path.name} starts a process"


@pytest.mark.parametrize("caller", ["vault.py", "inventory.py", "sweep.py"])
def test_every_runner_caller_uses_the_shared_piece(caller: str) -> None:
    tree = ast.parse((ACCESS / caller).read_text())
    shared = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
              and n.func.attr == "run" and getattr(n.func.value, "id", None) == "injection"]
    assert shared, f"{caller} does not run through injection.run"


@pytest.mark.parametrize("old", ["muninn.plugins.vault", "muninn.plugins.inventory", "muninn.plugins.verify"])
def test_the_three_old_packages_are_gone(old: str) -> None:
    assert importlib.util.find_spec(old) is None


@pytest.mark.parametrize("module", ["score", "query_words", "_FIELDS"])
def test_scoring_is_not_part_of_the_vault_api(module: str) -> None:
    assert not hasattr(vault, module)


@pytest.mark.parametrize("kw", [{"stdin": True}, {"env_name": "TOKEN"}])
def test_one_secrets_options_refuse_several_secrets(kw: dict) -> None:
    with pytest.raises(MuninnError, match="one secret"):
        Secrets(None, ()).prepare(["a", "b"], **kw)


def test_no_vault_means_nothing_injected_and_nothing_masked() -> None:
    prepared = Secrets(None, ()).prepare([])
    assert prepared.env == {} and prepared.stdin is None and prepared.mask("plain text") == "plain text"
