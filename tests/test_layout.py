"""The import boundaries of README's "What runs where", enforced by walking every module's AST.

    core ← guards ← {export, plugins/search, plugins/access, plugins/stack} ← plugins/mcp ← {nightly, evals} ← cli
    ← evals/lab

The lab (evals/lab: benchmarks, probes, the corpora harness) sits above everything: only tests and the
lab import the lab, and the wheel leaves it out (tests/test_wheel.py).

A part imports itself and the layers below it, never a sibling: export and search meet only in
core (sync announces what it wrote through the registry's after_sync hook). plugins/ holds rooms
only (a loose module there belongs to no part): search, access, mcp and "stack", which is
plugins/stack (the local stack's lifecycle and probe, `muninn init`, `muninn doctor` (its checks
come from every part through the registry, so it imports none of them), `muninn ls` and `muninn
policy`, the home's file modes, the keyring-scope step) and its embedding sidecar plugins/embed,
all of which talk to the server and nothing above. nightly/jobs holds one module per registered
job, beside the nightly services it calls. muninn.core.registry names the built-in plugin modules
as strings, not imports, and muninn.commands the command groups: each knows its kind without
importing a part.

No product module reaches itself through its imports, function-local and TYPE_CHECKING ones counted
(test_no_import_loop_in_the_product): a local import may keep start-up light, never break a loop.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("muninn", "guards", "export", "plugins", "nightly", "evals")

# Folder or file (relative to the repo) → part; the longest matching prefix wins.
PARTS = {
    "muninn": "core",
    "muninn/core": "core",
    "muninn/cli.py": "cli",
    "muninn/__main__.py": "cli",
    "guards": "guards",
    "export": "export",
    "plugins/__init__.py": "stack",
    "plugins/stack": "stack",
    "plugins/embed": "stack",
    "plugins/search": "search",
    "plugins/access": "access",
    "plugins/mcp": "mcp",
    "nightly": "nightly",
    "nightly/jobs": "nightly",
    "evals": "evals",
    "evals/lab": "lab",
}
# Lowest first. A part may import its own layer's part (itself) and every part in a lower layer.
LAYERS = [{"core"}, {"guards"}, {"export", "search", "access", "stack"}, {"mcp"}, {"nightly", "evals"}, {"cli"},
          {"lab"}]
_RANK = {part: i for i, layer in enumerate(LAYERS) for part in layer}


def part_of_path(rel: str) -> str | None:
    """The part a repo-relative path (file or module path) belongs to."""
    best = max((p for p in PARTS if rel in (p, p.removesuffix(".py")) or rel.startswith(p + "/")), key=len,
               default=None)
    return PARTS[best] if best else None


def part_of_module(name: str) -> str | None:
    """muninn.core.x → core, muninn.plugins.search.keyword → search, muninn.cli → cli; None outside muninn."""
    bits = name.split(".")
    if bits[0] != "muninn":
        return None
    if len(bits) == 1 or bits[1] in ("core", "cli", "__main__"):
        return part_of_path("/".join(bits))
    return part_of_path("/".join(bits[1:]))


def may_import(source: str, target: str) -> bool:
    return target == source or _RANK[target] < _RANK[source]


def _module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    bits = list(rel.parts)
    if bits[-1] == "__init__":
        bits = bits[:-1]
    return ".".join(bits if bits[0] == "muninn" else ["muninn", *bits])


def imported(root: Path, path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import in the file, function-local and relative ones included."""
    tree = ast.parse(path.read_text())
    package = _module_name(root, path).rsplit(".", 1)[0] if path.name != "__init__.py" else _module_name(root, path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            # `from muninn.plugins import search` imports muninn.plugins.search: judge each name.
            out += [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return out


def violations(root: Path) -> list[str]:
    found = []
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.py")) if (root / folder).is_dir() else []:
            rel = str(path.relative_to(root))
            source = part_of_path(rel)
            if source is None:
                found.append(f"{rel}: belongs to no part (add it to PARTS)")
                continue
            for line, name in imported(root, path):
                target = part_of_module(name)
                if target is not None and not may_import(source, target):
                    found.append(f"{rel}:{line}: {source} may not import {name} ({target})")
    return found


def test_every_module_imports_only_its_own_part_and_the_layers_below() -> None:
    assert violations(ROOT) == []


def test_every_part_is_in_a_layer_and_every_folder_in_a_part() -> None:
    assert set(PARTS.values()) == set(_RANK)
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            assert part_of_path(str(path.relative_to(ROOT))) is not None, path


# (file planted in an otherwise empty tree, its import, allowed?)
PLANTED = [
    ("export/x.py", "from muninn.plugins.search import keyword", False),    # export and search meet only in core
    ("plugins/search/x.py", "from muninn.export import sync", False),
    ("plugins/search/x.py", "from muninn.plugins import access", False),    # the `from package import part` form
    ("plugins/access/x.py", "from ..search import keyword", False),         # a relative import that leaves its part
    ("plugins/access/x.py", "from .store import Store", True),
    ("plugins/search/x.py", "def f():\n    from muninn.plugins.stack.doctor import run", False),  # function-local
    ("plugins/stack/lifecycle.py", "from muninn.plugins.mcp import server", False),
    ("guards/x.py", "import muninn.export.sync", False),
    ("muninn/core/x.py", "from muninn.guards import redact", False),
    ("muninn/core/x.py", "from muninn.core import config", True),
    ("plugins/mcp/x.py", "from muninn.plugins.search.pipeline import Searcher", True),
    ("plugins/mcp/x.py", "from muninn.nightly import runner", False),
    ("nightly/x.py", "from muninn.evals import sealed", False),
    ("evals/x.py", "from muninn.plugins.mcp import server", True),
    ("nightly/x.py", "from muninn import cli", False),                      # nothing imports the CLI
    ("plugins/embed/x.py", "from muninn.plugins.stack import up", True),    # embed is part of stack
    ("plugins/access/x.py", "from muninn.plugins.search import keyword", False),  # peers meet only below
    ("plugins/access/x.py", "from muninn.plugins.mcp.session import GuardSession", False),
    ("plugins/mcp/x.py", "from muninn.plugins.access.vault import Vault", True),
    ("plugins/stack/doctor.py", "from muninn.plugins.search import doctor_check", False),
    # Only tests and the lab import the lab.
    ("evals/x.py", "from muninn.evals.lab import locomo", False),
    ("evals/x.py", "from .lab.corpora import harness", False),                 # relative, into the lab
    ("evals/x.py", "def f():\n    import muninn.evals.lab.null_embedder", False),  # function-local
    ("evals/x.py", "from muninn.evals import lab", False),                     # the package itself
    ("muninn/cli.py", "from muninn.evals.lab.corpora import replay", False),
    ("plugins/search/x.py", "from muninn.evals.lab import bench_search", False),
    ("nightly/x.py", "from muninn.evals.lab.bench_nightly import run", False),
    ("evals/lab/x.py", "from muninn.evals.lab.corpora import harness", True),
    ("evals/lab/corpora/x.py", "from . import trace", True),
    ("evals/lab/x.py", "from muninn.evals import sealed", True),
    ("evals/lab/x.py", "from muninn.plugins.search.keyword import KeywordIndex", True),
    ("evals/lab/x.py", "from muninn import cli", True),
    # The rooms: plugins/ holds packages only; stack and nightly/jobs keep their layers and the lab rule.
    ("plugins/x.py", "import json", False),                                   # a loose module: no part
    ("plugins/stack/x.py", "from muninn.plugins.embed import fetch", True),     # embed is part of stack
    ("plugins/stack/x.py", "from muninn.plugins.access.vault import Vault", False),
    ("plugins/stack/x.py", "from muninn.nightly.jobs import refresh", False),
    ("plugins/embed/x.py", "from muninn.plugins.search import keyword", False),
    ("plugins/stack/x.py", "from muninn.evals.lab import bench_stack", False),
    ("nightly/jobs/x.py", "from muninn.plugins.mcp import server", True),
    ("nightly/jobs/x.py", "from .. import backup", True),                      # a job calls the services beside
    ("nightly/jobs/x.py", "from muninn.evals.lab.bench_nightly import run", False),
    ("nightly/jobs/x.py", "from muninn.evals import sealed", False),
    ("muninn/commands.py", "from muninn.plugins.stack import cli", False),    # names the groups, imports none
]


@pytest.mark.parametrize(("rel", "code", "allowed"), PLANTED,
                         ids=[f"{r}:{c.splitlines()[-1].strip()}" for r, c, _ in PLANTED])
def test_the_rule_catches_a_planted_violation(tmp_path: Path, rel: str, code: str, allowed: bool) -> None:
    target = tmp_path / rel
    target.parent.mkdir(parents=True)
    target.write_text(code + "\n")
    found = violations(tmp_path)
    assert (found == []) is allowed, found


def test_every_registered_job_has_its_own_module_in_nightly_jobs() -> None:
    code = ("import json; from muninn.core import registry; "
            "print(json.dumps({n: f.__module__ for n, f in registry.jobs().items()}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules = json.loads(out.stdout)
    assert modules and all(m.startswith("muninn.nightly.jobs.") for m in modules.values()), modules
    assert len(set(modules.values())) == len(modules), modules


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


def test_no_test_imports_the_tests_folder_as_a_package() -> None:
    """`make test` runs pytest with tests/ (not the checkout) on sys.path: `from tests.x import y` works in
    a worktree started with `python -m pytest` and fails collection in CI. Shared helpers are imported as
    `from conftest import …` or `from test_other import …`."""
    bad = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            bad += [f"{path.name}: {n}" for n in names if n == "tests" or n.startswith("tests.")]
    assert bad == []


def _graph(root: Path, folders: tuple[str, ...] = FOLDERS) -> dict[str, set[str]]:
    """Module → the product modules it imports: every import at any depth of the file (function-local and
    TYPE_CHECKING ones too), relative ones resolved. Importing a.b.c runs the packages a and a.b first, so they
    count as well, except a module's own packages (they are running already when it is imported). The lab
    is left out: only tests and the lab import it."""
    files = [p for folder in folders for p in (root / folder).rglob("*.py") if (root / folder).is_dir()]
    modules = {_module_name(root, p): p for p in files if not str(p.relative_to(root)).startswith("evals/lab")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for _, imp in imported(root, path):
            bits = imp.split(".")
            found = [m for m in (".".join(bits[:i]) for i in range(len(bits), 1, -1)) if m in modules]
            # The module named (`from a.b import c`: a.b.c when it is one, else a.b), then its packages.
            targets |= {m for i, m in enumerate(found) if i == 0 or not name.startswith(m + ".")}
        graph[name] = targets - {name}
    return graph


def import_loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan): each is an import loop."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    loops: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                loops.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return loops


def test_no_import_loop_in_the_product() -> None:
    """No module of the product reaches itself through its imports, a function-local or TYPE_CHECKING one
    included: an import hidden in a function to break a loop is a loop all the same. The usual way out is to
    move a function to the module that owns its data (format_file reads format.json; config.load, not a
    validator, reads the workspace; search's state carries a protocol of its services, not the Searcher; the
    skills-drift job owns the approved-skills file its installer writes)."""
    assert import_loops(_graph(ROOT)) == []


def _plant(root: Path, files: dict[str, str]) -> dict[str, set[str]]:
    for rel, code in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(code + "\n")
    return _graph(root)


def test_the_loop_check_sees_a_type_checking_loop(tmp_path: Path) -> None:
    graph = _plant(tmp_path, {
        "plugins/search/state.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                   "    from muninn.plugins.search.pipeline import Searcher",
        "plugins/search/pipeline.py": "from muninn.plugins.search.stages.cap import Cap",
        "plugins/search/stages/cap.py": "from muninn.plugins.search.state import SearchState",
        "plugins/search/types.py": ""})
    assert import_loops(graph) == [["muninn.plugins.search.pipeline", "muninn.plugins.search.stages.cap",
                                    "muninn.plugins.search.state"]]


# (files planted in an empty tree, the loop the check must name)
PLANTED_LOOPS = [
    ({"muninn/core/a.py": "from muninn.core import b",                      # function-local, across two folders
      "muninn/core/b.py": "def f():\n    from muninn.guards.deep.c import x",
      "guards/deep/c.py": "from muninn.core.a import y"},
     ["muninn.core.a", "muninn.core.b", "muninn.guards.deep.c"]),
    ({"guards/redact/x.py": "from . import y",                              # relative, in a nested room
      "guards/redact/y.py": "def f():\n    from .x import g"},
     ["muninn.guards.redact.x", "muninn.guards.redact.y"]),
    ({"nightly/backup/__init__.py": "from muninn.nightly import plugin",   # through a package's __init__
      "nightly/backup/parts.py": "",
      "nightly/plugin.py": "def f():\n    from muninn.nightly.backup.parts import P"},
     ["muninn.nightly.backup", "muninn.nightly.plugin"]),
    ({"evals/x.py": "import muninn.evals.y",                                # the `import a.b` form
      "evals/y.py": "import muninn.evals.x as x"},
     ["muninn.evals.x", "muninn.evals.y"]),
]


@pytest.mark.parametrize(("files", "loop"), PLANTED_LOOPS, ids=["local", "relative", "package", "import"])
def test_the_loop_check_sees_a_planted_loop(tmp_path: Path, files: dict[str, str], loop: list[str]) -> None:
    assert import_loops(_plant(tmp_path, files)) == [loop]


def test_the_loop_check_leaves_a_module_and_its_own_package_alone(tmp_path: Path) -> None:
    graph = _plant(tmp_path, {"nightly/jobs/__init__.py": "from muninn.core.config import Settings",
                              "nightly/jobs/backup.py": "from muninn.nightly.jobs import JobResult",
                              "nightly/jobs/mirror.py": "from muninn.nightly.jobs.backup import run",
                              "evals/lab/x.py": "from muninn.evals import y",
                              "evals/y.py": "def f():\n    from muninn.evals.lab import x"})
    assert import_loops(graph) == []


def test_stages_holds_only_stages_and_no_stage_file_shares_a_helper_name() -> None:
    """Every module of stages/ defines a stage (name, switch, applies, run); none is named like a module
    of plugins/search, so `stages/cap.py` and `search/cap.py` cannot both exist."""
    stages = ROOT / "plugins" / "search" / "stages"
    helpers = {p.stem for p in (ROOT / "plugins" / "search").glob("*.py")}
    bad = []
    for path in sorted(stages.glob("*.py")):
        if path.name == "__init__.py":
            continue
        if path.stem in helpers:
            bad.append(f"{path.name}: shares its name with plugins/search/{path.name}")
        classes = [n for n in ast.parse(path.read_text()).body if isinstance(n, ast.ClassDef)]
        is_stage = any({"name", "switch"} <= {t.id for a in c.body if isinstance(a, ast.Assign) for t in a.targets
                                               if isinstance(t, ast.Name)}
                       and {"applies", "run"} <= {f.name for f in c.body if isinstance(f, ast.FunctionDef)}
                       for c in classes)
        if not is_stage:
            bad.append(f"{path.name}: defines no stage")
    assert bad == []


# guards/ holds rooms, each named by the question it answers, and the plugin module that registers the rules.
# room -> the other rooms of guards it may import. The gate imports only the forms table of known/: it is
# the independent second reader, so none of the redactor's matching code (redact/, rules/, undeclared/).
GUARD_ROOMS: dict[str, set[str]] = {
    "known": {"command", "undeclared"},   # which values are secret, and their forms (key words, field stems)
    "redact": {"known", "rules"},         # how text is redacted and a stream masked
    "rules": {"undeclared"},              # the redaction rules, an outside plugin's API (`Rule`)
    "undeclared": {"rules"},              # is this an undeclared secret?
    "gate": {"known"},                    # the leak gate: its own code by design
    "command": set(),                     # may this proof command run?
    "policy": {"known"},                  # what may an agent reach, and how is what it reads labelled?
    "dates": {"known"},                   # can this observation's dates be true now?
}
GUARD_MODULES = {"__init__.py", "plugin.py"}


def _guard_room(name: str) -> str | None:
    bits = name.split(".")
    return bits[2] if bits[:2] == ["muninn", "guards"] and len(bits) > 2 and bits[2] in GUARD_ROOMS else None


def room_violations(root: Path) -> list[str]:
    found = []
    guards = root / "guards"
    for path in sorted(guards.glob("*.py")) if guards.is_dir() else []:
        if path.name not in GUARD_MODULES:
            found.append(f"guards/{path.name}: a loose module (guards/ holds rooms; put it in the room it answers)")
    for path in sorted(p for p in guards.iterdir() if p.is_dir() and p.name != "__pycache__") if guards.is_dir() \
            else []:
        if path.name not in GUARD_ROOMS:
            found.append(f"guards/{path.name}/: not a room of GUARD_ROOMS")
    for room, allowed in GUARD_ROOMS.items():
        for path in sorted((guards / room).rglob("*.py")) if (guards / room).is_dir() else []:
            for line, name in imported(root, path):
                target = _guard_room(name)
                if target not in (None, room) and target not in allowed:
                    found.append(f"{path.relative_to(root)}:{line}: guards/{room} may not import {name}")
    return found


def test_guards_holds_rooms_and_each_room_imports_only_its_own_list() -> None:
    assert room_violations(ROOT) == []
    assert {p.name for p in (ROOT / "guards").iterdir() if p.is_dir() and p.name != "__pycache__"} == set(GUARD_ROOMS)


ROOM_PLANTED = [
    ("guards/x.py", "import re", False),                                          # a loose module
    ("guards/gate/x.py", "from muninn.guards.known.forms import forms_of", True),  # the shared forms table
    ("guards/gate/x.py", "from muninn.guards.redact import patterns", False),      # the gate is independent
    ("guards/gate/x.py", "def f():\n    from muninn.guards.rules import Rule", False),
    ("guards/gate/x.py", "from muninn.guards import undeclared", False),
    ("guards/command/x.py", "from muninn.guards.known import forms", False),
    ("guards/redact/x.py", "from muninn.guards.known import secret_values", True),
    ("guards/stray/x.py", "import re", False),                                    # a room nobody named
]


@pytest.mark.parametrize(("rel", "code", "allowed"), ROOM_PLANTED,
                         ids=[f"{r}:{c.splitlines()[-1].strip()}" for r, c, _ in ROOM_PLANTED])
def test_the_room_rule_catches_a_planted_violation(tmp_path: Path, rel: str, code: str, allowed: bool) -> None:
    target = tmp_path / rel
    target.parent.mkdir(parents=True)
    target.write_text(code + "\n")
    found = room_violations(tmp_path)
    assert (found == []) is allowed, found
