"""Which embedding model a workspace uses: e5-small-v2 for a new workspace, recorded at its first `muninn up`;
the model its vectors were made with for an earlier one (bge-small unless muninn.yaml said otherwise), kept
through the upgrade; an explicit embed.model always wins, and one other than the recorded model stops
`muninn up` before anything starts (exit 20). The keyword weight follows the model unless it is set.
The stack cases run the real openviking-server and sidecar (tests/conftest.py own_stack)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import own_stack

from muninn.core import config, embed_record, format_file, upgrade
from muninn.core import embed_profiles as profiles
from muninn.core.errors import ExitCode
from muninn.core.workspace import Workspace

BGE, E5, MINILM = profiles.BGE, profiles.E5, profiles.MINILM
EARLIER = profiles.DEFAULT_SINCE - 1


def _load(tmp: Path, embed: dict | None = None, search: dict | None = None, environ: dict | None = None):
    cfg = tmp / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp / "home"), **({"embed": embed} if embed else {}),
                                   **({"search": search} if search else {})}))
    return config.load(cfg, environ=environ or {})


def _earlier_workspace(home: Path, data: bool = True) -> None:
    """A workspace as the muninn before e5 left it: a format file of the format before, no record."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "format.json").write_text(json.dumps({"format": EARLIER, "at": "2026-12-01T00:00:00+00:00"}) + "\n")
    if data:
        Workspace(home).server_data.mkdir(parents=True)


# --- which model, without a server ----------------------------------------------------------------------

@pytest.mark.parametrize("state, model, name, weight", [
    ("new", E5, "e5-small-v2", 1.0),                              # no workspace yet
    ("new, stamped", E5, "e5-small-v2", 1.0),                     # stamped at the current format, no stack yet
    ("earlier", BGE, "bge-small-en-v1.5", 2.0),                   # format before e5, with a data folder
    ("earlier, no data", BGE, "bge-small-en-v1.5", 2.0),          # format before e5, never started
    ("data, no record", BGE, "bge-small-en-v1.5", 2.0),           # current format, data nothing recorded
    ("recorded MiniLM", MINILM, "all-MiniLM-L6-v2", 2.0),
])
def test_an_unset_model_is_the_workspaces(tmp_path, state, model, name, weight) -> None:
    home = tmp_path / "home"
    if state == "new, stamped":
        upgrade.ensure(home, say=print)
    elif state.startswith("earlier"):
        _earlier_workspace(home, data=state == "earlier")
    elif state == "data, no record":
        upgrade.ensure(home, say=print)
        Workspace(home).server_data.mkdir(parents=True)
    elif state == "recorded MiniLM":
        upgrade.ensure(home, say=print)
        embed_record.record(home, MINILM, "all-MiniLM-L6-v2")
    s = _load(tmp_path)
    assert (s.embed.model, s.embed.model_name, s.ranking.keyword_weight) == (model, name, weight)


@pytest.mark.parametrize("how", ["file", "environment"])
def test_an_explicit_model_wins_over_the_record_and_is_named_a_mismatch(tmp_path, how) -> None:
    home = tmp_path / "home"
    upgrade.ensure(home, say=print)
    embed_record.record(home, BGE, "bge-small-en-v1.5")
    s = (_load(tmp_path, embed={"model": E5}) if how == "file" else
         _load(tmp_path, environ={"MUNINN_EMBED__MODEL": E5}))
    assert (s.embed.model, s.embed.model_name, s.ranking.keyword_weight) == (E5, "e5-small-v2", 1.0)
    refused = embed_record.mismatch(s)
    assert refused is not None and refused.exit_code == ExitCode.MODEL_MISMATCH
    assert E5 in refused.message and BGE in refused.message and "refuses to start" in refused.message
    assert f"muninn embed migrate --to {E5}" in refused.fix and f"set embed.model back to {BGE}" in refused.fix
    assert embed_record.mismatch(_load(tmp_path)) is None       # unset: the recorded model, no mismatch


def test_the_keyword_weight_follows_the_model_unless_it_is_set(tmp_path) -> None:
    assert _load(tmp_path, embed={"model": BGE}).ranking.keyword_weight == 2.0
    assert _load(tmp_path, embed={"model": E5}).ranking.keyword_weight == 1.0
    assert _load(tmp_path, embed={"model": str(tmp_path / "my-model")}).ranking.keyword_weight == 2.0
    assert _load(tmp_path, embed={"model": E5}, search={"keyword_weight": 3}).ranking.keyword_weight == 3.0
    assert _load(tmp_path, embed={"model": BGE}, search={"keyword_weight": 1}).ranking.keyword_weight == 1.0
    env = {"MUNINN_SEARCH__KEYWORD_WEIGHT": "0.5"}
    assert _load(tmp_path, embed={"model": BGE}, environ=env).ranking.keyword_weight == 0.5
    # Built directly (the lab, tests), the same rule with the field default's model.
    assert config.Settings(embed={"model": BGE}).ranking.keyword_weight == 2.0
    assert config.Settings().ranking.keyword_weight == 1.0


def test_an_earlier_local_folder_keeps_the_name_its_vectors_carry(tmp_path) -> None:
    # Before e5, embed.model_name defaulted to bge's name whatever the model: that name is the vectors'.
    _earlier_workspace(tmp_path / "home")
    s = _load(tmp_path, embed={"model": str(tmp_path / "my-model")})
    assert (s.embed.model_name, s.ranking.keyword_weight) == ("bge-small-en-v1.5", 2.0)
    assert _load(tmp_path, embed={"model": str(tmp_path / "my-model"), "model_name": "mine"}).embed.model_name == "mine"
    # A new workspace's local folder is named by its folder.
    assert config.Settings(embed={"model": str(tmp_path / "my-model")}).embed.model_name == "my-model"


@pytest.mark.parametrize("embed, recorded", [({}, BGE), ({"model": E5, "model_name": "e5-small-v2"}, E5)])
def test_the_upgrade_records_what_an_earlier_workspace_embedded_with(tmp_path, embed, recorded) -> None:
    home = tmp_path / "home"
    _earlier_workspace(home)
    s = _load(tmp_path, embed=embed)
    upgrade.ensure(home, say=print, settings=s)
    assert format_file.read_format(home) == upgrade.current()
    assert format_file.recorded(home).model == recorded
    assert _load(tmp_path).embed.model == recorded        # the next command, whatever muninn.yaml says later


# --- with the real server ---------------------------------------------------------------------------------

def _cli(stack, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "muninn", *args], capture_output=True, text=True,
                          env=stack.env, timeout=timeout)


def _config(stack, embed: dict | None) -> None:
    cfg = yaml.safe_load(stack.config_path.read_text())
    cfg["embed"] = {"port": cfg["embed"]["port"], **(embed or {})}
    stack.config_path.write_text(yaml.safe_dump(cfg))


def _ov_model(stack) -> str:
    return json.loads((stack.settings.paths.stack / "ov.conf").read_text())["embedding"]["dense"]["model"]


def _running(stack) -> dict:
    state = stack.settings.paths.stack / "stack.json"
    return json.loads(state.read_text()) if state.exists() else {}


@pytest.mark.integration
def test_a_new_workspace_embeds_with_e5_recorded_at_up(tmp_path) -> None:
    with own_stack(tmp_path) as stack:
        rec = format_file.recorded(stack.settings.workspace)
        assert (rec.model, rec.model_name) == (E5, "e5-small-v2")
        dense = json.loads((stack.settings.paths.stack / "ov.conf").read_text())["embedding"]["dense"]
        assert (dense["model"], dense["query_param"], dense["document_param"]) == ("e5-small-v2", "query", "passage")
        doctor = _cli(stack, "doctor", "--json")
        check = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "embedding model")
        assert check["level"] == "ok" and E5 in check["detail"] and "recorded" in check["detail"]


@pytest.mark.integration
def test_an_earlier_workspace_stays_bge_and_a_configured_other_model_starts_nothing(tmp_path) -> None:
    with own_stack(tmp_path, extra={"embed": {"model": BGE}}) as stack:
        home = stack.settings.workspace
        assert _ov_model(stack) == "bge-small-en-v1.5"
        assert _cli(stack, "down").returncode == 0
        # As the muninn before e5 left it: the format before, no record, muninn.yaml naming no model.
        (home / "format.json").write_text(json.dumps({"format": EARLIER}) + "\n")
        _config(stack, None)
        up = _cli(stack, "up")
        # The server started on its bge vectors: the model did not flip under them.
        assert up.returncode == 0, up.stderr
        assert format_file.recorded(home).model == BGE and _ov_model(stack) == "bge-small-en-v1.5"
        assert format_file.read_format(home) == upgrade.current()
        assert _cli(stack, "down").returncode == 0

        _config(stack, {"model": E5})
        refused = _cli(stack, "up")
        assert refused.returncode == ExitCode.MODEL_MISMATCH, refused.stderr
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1 and E5 in lines[0] and BGE in lines[0], refused.stderr
        assert f"muninn embed migrate --to {E5}" in lines[0] and "Traceback" not in refused.stderr
        assert not any(part.get("pid") for part in _running(stack).values())      # nothing was started
        assert format_file.recorded(home).model == BGE
        doctor = _cli(stack, "doctor", "--json")
        check = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "embedding model")
        assert check["level"] == "fail" and E5 in check["detail"] and "embed migrate" in check["fix"]

        # What the refusal spares: told the vectors are e5's, the real server refuses bge's, in one sentence.
        embed_record.record(home, E5, "e5-small-v2")
        started = _cli(stack, "up")
        assert started.returncode == ExitCode.STACK, started.stderr
        assert "another embedding model" in started.stderr and "Traceback" not in started.stderr
        assert f"muninn embed migrate --to {E5}" in started.stderr
        embed_record.record(home, BGE, "bge-small-en-v1.5")
        _config(stack, None)
        # The e5 sidecar that up started still runs: reused, it would embed bge's vectors with e5.
        reused = _cli(stack, "up")
        assert reused.returncode == ExitCode.STACK and "serves e5-small-v2" in reused.stderr, reused.stderr
        assert "muninn down" in reused.stderr
        assert _cli(stack, "down").returncode == 0
        assert _cli(stack, "up").returncode == 0            # back on its own model: the server answers

