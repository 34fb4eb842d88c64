"""`settings.paths` owns every path of a workspace and the one rule for paths in muninn.yaml."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from muninn.core import config
from muninn.core.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]

# (property, where it is under <home> by default, the muninn.yaml key that overrides it)
PATHS = [
    ("format_file", "format.json", None),
    ("stack", "stack", None),
    ("sync_manifests", "sync", None),
    ("exports", "exports", ("export", "out")),
    ("search_indexes", "search", None),
    ("audit_log", "audit/mcp.jsonl", ("guard", "audit_log")),
    ("access_log", "logs/access.jsonl", None),
    ("nightly_reports", "nightly", None),
    ("evals", "evals", None),
    ("vault_store", "vault/vault.sqlite", ("vault", "store")),
    ("verify_results", "verify/results.sqlite", ("verify", "results")),
]


def _settings(tmp_path: Path, doc: dict) -> config.Settings:
    cfg = tmp_path / "conf" / "muninn.yaml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(yaml.safe_dump(doc))
    return config.load(cfg)


@pytest.mark.parametrize("prop, default, key", PATHS, ids=[p[0] for p in PATHS])
def test_every_path_lives_under_home_and_follows_home_key(tmp_path: Path, prop: str, default: str, key) -> None:
    s = _settings(tmp_path, {"home": str(tmp_path / "ws")})
    assert getattr(s.paths, prop) == tmp_path / "ws" / default


@pytest.mark.parametrize("prop, default, key", [p for p in PATHS if p[2]], ids=[p[0] for p in PATHS if p[2]])
@pytest.mark.parametrize("written, expected", [
    ("rel/x", "conf/rel/x"),          # relative to muninn.yaml, not to the current directory
    ("../up/x", "conf/../up/x"),
    ("/abs/x", "/abs/x"),
])
def test_an_override_is_relative_to_muninn_yaml(tmp_path: Path, prop: str, default: str, key, written: str,
                                                expected: str) -> None:
    s = _settings(tmp_path, {key[0]: {key[1]: written}})
    want = Path(expected) if expected.startswith("/") else tmp_path / expected
    assert getattr(s.paths, prop) == want


def test_search_index_is_per_identity_unless_overridden(tmp_path: Path) -> None:
    s = _settings(tmp_path, {"home": str(tmp_path / "ws"), "openviking": {"account": "acme", "user": "raven"}})
    assert s.paths.search_index() == tmp_path / "ws/search/acme.raven.sqlite"
    assert s.paths.search_index("acme", "owner") == tmp_path / "ws/search/acme.owner.sqlite"
    s = _settings(tmp_path, {"search": {"index": "idx.sqlite"}})
    assert s.paths.search_index() == tmp_path / "conf/idx.sqlite"


@pytest.mark.parametrize("written, expected",
                         [("p.yaml", "conf/p.yaml"), ("~/p.yaml", "~/p.yaml"), ("/p.yaml", "/p.yaml")])
def test_policy_path_follows_the_same_rule(tmp_path: Path, written: str, expected: str) -> None:
    s = _settings(tmp_path, {"guard": {"policy": written}})
    want = Path(expected).expanduser() if expected[0] in "~/" else tmp_path / expected
    assert s.paths.policy == want


def test_without_a_file_relative_paths_stay_relative_to_the_current_directory() -> None:
    ws = Workspace(Path("/h"))
    assert ws.resolve("a/b") == Path("a/b") and ws.resolve("/a") == Path("/a")
    assert ws.resolve("~/a") == Path.home() / "a"


def test_known_secret_files_is_the_union_of_every_place_that_names_one(tmp_path: Path) -> None:
    s = _settings(tmp_path, {
        "vault": {"files": ["vault.yaml", "shared.env"]},
        "guard": {"secret_files": ["guard.env", "shared.env"]},
        "export": {"secret_files": ["export.txt"]},
        "sources": [{"kind": "secrets", "path": "src-secrets.yaml", "area": "viking://resources/s"},
                    {"kind": "notes", "path": "notes", "area": "viking://resources/n"}],
    })
    conf = tmp_path / "conf"
    assert s.paths.known_secret_files([Path("cli.env")]) == [
        conf / "vault.yaml", conf / "shared.env", conf / "guard.env", conf / "export.txt",
        conf / "src-secrets.yaml", Path("cli.env")]


def test_no_part_spells_a_workspace_path_itself() -> None:
    spelled = re.compile(r"""(workspace|(?<!Path\.)home\(\)|\.home)\s*/\s*["']""")
    folders = ("muninn", "export", "guards", "plugins", "nightly", "evals")
    offenders = [f"{p.relative_to(ROOT)}:{n}" for folder in folders
                 for p in (ROOT / folder).rglob("*.py") if p.name != "workspace.py"
                 for n, line in enumerate(p.read_text().splitlines(), 1) if spelled.search(line)]
    assert offenders == []
    # The check itself catches the old spellings, and leaves the user's own home alone.
    assert spelled.search('folder = settings.workspace / "sync"') and spelled.search('paths.home() / "sync"')
    assert not spelled.search('Path.home() / ".cache"')
