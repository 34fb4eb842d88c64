"""The import boundaries of README's "What runs where", enforced by walking every module's AST."""

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PARTS = {"muninn/core": "core", "guards": "guards", "export": "export", "plugins": "plugins",
         "evals": "evals", "nightly": "nightly"}
# Who may import whom: core ← guards ← export, plugins ← nightly, evals ← cli.
ALLOWED = {
    "core": {"core"},
    "guards": {"core", "guards"},
    "export": {"core", "guards", "export"},
    "plugins": {"core", "guards", "plugins"},
    "nightly": {"core", "guards", "export", "plugins", "nightly"},
    "evals": {"core", "guards", "export", "plugins", "evals"},
}


def _part_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "muninn" or len(parts) < 2:
        return None
    return "cli" if parts[1] == "cli" else parts[1]


def _modules() -> list[tuple[str, Path]]:
    out = []
    for folder, part in PARTS.items():
        out += [(part, p) for p in (ROOT / folder).rglob("*.py")]
    return out


@pytest.mark.parametrize("part, path", _modules(), ids=lambda v: str(v).replace(str(ROOT) + "/", ""))
def test_imports_flow_one_way(part: str, path: Path) -> None:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            target = _part_of(name)
            if target is None:
                continue
            assert target != "cli", f"{path}: nothing imports the CLI ({name})"
            assert target in ALLOWED[part], f"{path}: {part} may not import {name}"


def test_namespace_maps_folders_and_leaks_nothing_generic(tmp_path: Path) -> None:
    spec = importlib.util.find_spec("muninn.export")
    assert spec is not None and Path(spec.origin).parent == ROOT / "export"
    # From a neutral directory, none of the folder names is importable on its own.
    names = "('export', 'guards', 'plugins', 'evals', 'nightly')"
    code = f"import importlib.util as u; print([n for n in {names} if u.find_spec(n)])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.strip() == "[]"


def test_help_is_fast_to_import() -> None:
    """`muninn --help` must not import torch or sentence-transformers."""
    code = "import sys, muninn.cli; print(','.join(m for m in ('torch','sentence_transformers') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
