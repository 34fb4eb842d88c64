"""`muninn doctor` through the real entry point on the classes issue 20 names: `sources:` (unknown kind,
missing path, bad options), secret files' permissions, and an external server or embedding endpoint
(checked at its URL, never "run muninn up")."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import free_port

from muninn import cli
from muninn.core import registry
from muninn.core.hookspecs import hookimpl


@pytest.fixture
def doctor(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """`muninn --config CFG doctor --json` as a shell runs it: (exit code, {check name: check})."""

    def run(cfg: Path) -> tuple[int, dict[str, dict]]:
        monkeypatch.setattr(sys, "argv", ["muninn", "--config", str(cfg), "doctor", "--json"])
        with pytest.raises(SystemExit) as ended:
            cli.main()
        out = capsys.readouterr()
        assert "Traceback" not in out.err
        return int(ended.value.code or 0), {c["name"]: c for c in json.loads(out.out)["checks"]}

    return run


def _config(tmp_path: Path, **data: Any) -> Path:
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump(data))
    return cfg


def _sources(checks: dict[str, dict]) -> list[dict]:
    return [c for n, c in checks.items() if n.startswith("source")]


class OutsideSource:
    """A source kind an outside plugin registers: doctor must know it as any built-in."""

    kind = "wiki"

    class Options:
        @staticmethod
        def model_validate(data: Any) -> Any:
            return data


class OutsidePlugin:
    @hookimpl
    def register_sources(self, register) -> None:
        register(OutsideSource)


# (source entry, expected level, words the detail or fix holds)
SOURCE_CASES = [
    ({"kind": "notes", "path": "notes"}, "ok", ["notes"]),
    ({"kind": "notes", "path": "NOPE"}, "fail", ["does not exist", "fix `path:`"]),
    ({"kind": "notes", "path": "~/definitely-not-here-muninn"}, "fail", ["does not exist"]),
    ({"kind": "note", "path": "notes"}, "fail", ["unknown source kind 'note'", "notes"]),
    ({"kind": "Notes", "path": "notes"}, "fail", ["unknown source kind"]),
    ({"kind": "wiki", "path": "notes"}, "fail", ["unknown source kind 'wiki'", "plugin"]),
    ({"kind": "tasks", "path": "tasks.db", "options": {"bogus": 1}}, "fail", ["options", "bogus"]),
    ({"kind": "repo", "path": "notes", "options": {"ref": ["not", "a", "string"]}}, "fail", ["options.ref"]),
    ({"kind": "tasks", "path": "tasks.db"}, "ok", ["tasks.db"]),
    ({"kind": "secrets", "path": "secrets.yaml"}, "ok", ["secrets.yaml"]),
]


@pytest.mark.parametrize("entry, level, words", SOURCE_CASES,
                         ids=[f"{e['kind']}:{e['path']}:{lv}" for e, lv, _ in SOURCE_CASES])
def test_each_source_is_checked(doctor, tmp_path: Path, entry: dict, level: str, words: list[str]) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "tasks.db").write_bytes(b"")
    (tmp_path / "secrets.yaml").write_text("[]\n")
    os.chmod(tmp_path / "secrets.yaml", 0o600)
    cfg = _config(tmp_path, sources=[{**entry, "area": "viking://resources/a"}])
    code, checks = doctor(cfg)
    (line,) = _sources(checks)
    assert line["level"] == level, line
    said = f"{line['detail']} {line['fix']}"
    for word in words:
        assert word in said, said
    if level == "fail":
        assert code == 1 and line["fix"]
        assert str(cfg) in line["detail"] or "options" in line["detail"]   # where to look


def test_a_kind_an_outside_plugin_registers_is_known(doctor, tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    plugin = OutsidePlugin()
    registry.add(plugin, name="outside-wiki")
    try:
        _, checks = doctor(_config(tmp_path, sources=[{"kind": "wiki", "path": "notes",
                                                       "area": "viking://resources/wiki"}]))
    finally:
        registry.remove(plugin)
    assert [c["level"] for c in _sources(checks)] == ["ok"]


def test_every_source_gets_its_own_line(doctor, tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    cfg = _config(tmp_path, sources=[
        {"kind": "notes", "path": "notes", "area": "viking://resources/a"},
        {"kind": "nope", "path": "notes", "area": "viking://resources/b"},
        {"kind": "notes", "path": "gone", "area": "viking://resources/c"},
    ])
    _, checks = doctor(cfg)
    assert [c["level"] for c in _sources(checks)] == ["ok", "fail", "fail"]
    line = next(i for i, text in enumerate(cfg.read_text().splitlines(), 1) if "resources/b" in text)
    assert f"{cfg}:{line}: unknown source kind 'nope'" in _sources(checks)[1]["detail"]   # the entry's line


def test_no_sources_is_a_warning_with_the_entry_to_add(doctor, tmp_path: Path) -> None:
    _, checks = doctor(_config(tmp_path, server={"port": free_port()}))
    (line,) = _sources(checks)
    assert line["level"] == "warn" and "kind: notes" in line["fix"]


# (mode, level): a file group or others may read (or write) is a warning with `chmod 600 PATH`.
MODES = [(0o600, "ok"), (0o400, "ok"), (0o640, "warn"), (0o644, "warn"), (0o604, "warn"), (0o660, "warn"),
         (0o666, "warn"), (0o620, "warn"), (0o700, "ok"), (0o755, "warn")]
# Every place a secret file can be named.
PLACES = ["vault.files", "guard.secret_files", "export.secret_files", "secrets source"]


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("mode, level", MODES, ids=[f"{m:o}" for m, _ in MODES])
def test_secret_files_readable_by_others_are_a_warning(doctor, tmp_path: Path, place: str, mode: int,
                                                        level: str) -> None:
    name = "my secrets.yaml" if place != "guard.secret_files" else ".env"
    secret = tmp_path / name
    secret.write_text("[]\n" if name.endswith(".yaml") else "TOKEN=x\n")
    os.chmod(secret, mode)
    data: dict[str, Any] = {
        "vault.files": {"vault": {"files": [name]}},
        "guard.secret_files": {"guard": {"secret_files": [name]}},
        "export.secret_files": {"export": {"secret_files": [name]}},
        "secrets source": {"sources": [{"kind": "secrets", "path": name, "area": "viking://resources/vault"}]},
    }[place]
    code, checks = doctor(_config(tmp_path, **data))
    line = checks[f"secret file {secret}"]
    assert line["level"] == level, line
    assert f"{mode:03o}" in line["detail"]
    if level == "warn":
        assert line["fix"] == f"chmod 600 '{secret}'" if " " in name else line["fix"] == f"chmod 600 {secret}"
    else:
        assert line["fix"] == ""


def _muninn_up_suggested(checks: dict[str, dict]) -> list[str]:
    return [n for n, c in checks.items() if "muninn up" in c["fix"]]


# (server.url, embed.url): which parts are external. Both point at ports where nothing answers.
@pytest.mark.parametrize("server_external, embed_external", [(True, False), (True, True), (False, True)])
def test_an_external_endpoint_is_checked_at_its_url_not_started(doctor, tmp_path: Path, server_external: bool,
                                                                 embed_external: bool) -> None:
    server_url = f"http://127.0.0.1:{free_port()}"
    embed_url = f"http://127.0.0.1:{free_port()}"
    cfg = _config(tmp_path, server={"url": server_url} if server_external else {"port": free_port()},
                  embed={"url": embed_url} if embed_external else {"port": free_port()})
    code, checks = doctor(cfg)
    assert code == 1
    server = next(c for n, c in checks.items() if n.startswith("server at "))
    embed = next(c for n, c in checks.items() if n.startswith("embed at "))
    if server_external:
        assert _muninn_up_suggested(checks) == []
        assert server_url in server["fix"] and "this host reaches it" in server["fix"]
        assert checks["openviking-server"]["level"] == "ok" and server_url in checks["openviking-server"]["detail"]
    else:
        assert "muninn up" in server["fix"]   # the local stack: `up` is the fix
    if embed_external:
        assert embed_url in embed["fix"] and "muninn up" not in embed["fix"]


def test_the_local_stack_still_says_muninn_up(doctor, tmp_path: Path) -> None:
    """The control: nothing external, so `muninn up` is the fix for both parts."""
    _, checks = doctor(_config(tmp_path, server={"port": free_port()}, embed={"port": free_port()}))
    assert {n.split(" at ")[0] for n in _muninn_up_suggested(checks)} >= {"server", "embed"}
