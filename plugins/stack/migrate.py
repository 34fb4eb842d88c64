"""`muninn embed migrate --to MODEL`: re-embed the workspace's server data with another model, losing
nothing that lives only on the server (readers' direct writes, observations, accounts and keys).

copy (server stopped for the copy only) -> second stack over the copy -> reindex every account's trees
-> carry what the old server got meanwhile -> stop the old server, carry the last writes, verify ->
switch folders, record the model, `up`. Each step is recorded in migrate_state, so a killed run resumes;
until the switch the old data is only read, and `muninn up` keeps working on the old model.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from muninn.core import embed_record, format_file
from muninn.core.config import EmbedSettings, Settings
from muninn.core.errors import ConfigError, ExitCode, MuninnError
from muninn.plugins.stack import lifecycle, migrate_verify
from muninn.plugins.stack import migrate_state as st
from muninn.plugins.stack import migrate_steps as steps


class MigrateError(MuninnError):
    """The migration cannot go on as asked; the old data is untouched."""

    exit_code = ExitCode.MODEL_MISMATCH


@dataclass
class Summary:
    old: str
    new: str
    files: int = 0
    vectors: int = 0
    trees: int = 0
    carried: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    searched: int = 0
    backup: str = ""
    config: str = ""          # what happened to muninn.yaml's embed.model, or what to set
    aborted: bool = False


def model_name(model: str) -> str:
    """What OpenViking signs the vectors with: the id's last part (e5-small-v2, all-MiniLM-L6-v2)."""
    return model.rstrip("/").split("/")[-1]


def check_model(model: str) -> None:
    """A model the sidecar can load here, or one sentence saying how to get it."""
    from muninn.core.extras import MissingExtra
    from muninn.plugins.embed import fetch
    from muninn.plugins.embed import model as model_mod

    try:
        model_mod.model_path(EmbedSettings(model=model))
    except (fetch.FetchError, MissingExtra):
        raise       # not fetched yet (exit 6, its fix names `muninn models fetch`) or an extra missing
    except MuninnError:
        raise ConfigError(f"--to {model} is not a model muninn can load here",
                          fix="name a packaged model (BAAI/bge-small-en-v1.5, sentence-transformers/all-MiniLM-L6-v2), "
                              "one fetched with `muninn models fetch intfloat/e5-small-v2` or `muninn models fetch "
                              "NAME`, or a local model folder") from None


def _old_model(settings: Settings) -> tuple[str, str]:
    rec = format_file.recorded(settings.workspace)
    if rec and rec.model != settings.embed.model:
        raise MigrateError(f"the workspace's vectors were made with {rec.model} (format.json) but embed.model is "
                           f"{settings.embed.model}",
                           fix=f"set embed.model: {rec.model} and embed.model_name: {rec.model_name} in muninn.yaml, "
                               "then migrate")
    return settings.embed.model, settings.embed.model_name


def start(settings: Settings, to: str | None) -> st.State:
    """The migration in progress, or a new one to `to`."""
    state = st.load(settings)
    if state is not None:
        if to and to != state.to:
            raise ConfigError(f"a migration to {state.to} is in progress, not to {to}",
                              fix="rerun `muninn embed migrate` to finish it, or `muninn embed migrate --abort`")
        return state
    if not to:
        raise ConfigError("no migration is in progress and --to was not given",
                          fix="name the model: `muninn embed migrate --to intfloat/e5-small-v2`")
    if settings.server.url or settings.embed.url:
        raise MigrateError("migrate re-embeds the stack muninn runs; server.url or embed.url points elsewhere",
                           fix="re-embed that server where it runs, or unset server.url and embed.url")
    old, old_name = _old_model(settings)
    if to == old:
        raise MigrateError(f"the workspace's vectors are already made with {to}", fix="nothing to migrate")
    check_model(to)
    if not st.data(settings).is_dir():
        raise MigrateError(f"there is no server data at {st.data(settings)} to migrate",
                           fix=f"set embed.model: {to} and run `muninn up`: a new workspace needs no migration")
    return st.State(to=to, to_name=model_name(to), old=old, old_name=old_name,
                    started=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))


def run(settings: Settings, to: str | None, say: lifecycle.Say, config_file: Path | None = None) -> Summary:
    state = start(settings, to)
    summary = Summary(old=state.old, new=state.to)
    if state.phase == "copy":
        st.copy(settings, state, say, config_file)
        state.phase = "side"
        st.save(settings, state)
    if state.phase in ("side", "reindex", "catch-up"):
        side = steps.start_side(settings, state, say, config_file)
        state.phase = "reindex" if state.phase == "side" else state.phase
        st.save(settings, state)
        if state.phase == "reindex":
            steps.reindex(settings, side, state, say)
            state.phase = "catch-up"
            st.save(settings, state)
        _catch_up(settings, side, state, summary, say, config_file)
        state.phase = "switch"
        st.save(settings, state)
    summary.files, summary.vectors, summary.trees = state.files, state.vectors, len(state.trees)
    summary.searched = state.searched
    _switch(settings, state, summary, say, config_file)
    return summary


def _catch_up(settings: Settings, side: Settings, state: st.State, summary: Summary, say: lifecycle.Say,
              config_file: Path | None) -> None:
    """Carry while the old server answers, then stop it and carry the last writes; verify before the switch."""
    _add(summary, steps.carry(settings, side, state, say))
    lifecycle.stop_server(settings, say)
    if changed := steps.system_changed(settings, state):
        say(f"migrate: {len(changed)} account or user list(s) changed on the old server; copying them")
        steps.stop_side(state, "server")
        steps.copy_system(settings, state, changed)
        st.save(settings, state)
        side = steps.start_side(settings, state, say, config_file)
    _add(summary, steps.carry(settings, side, state, say))
    say("migrate: verifying the copy (same files in every tree, a search in each)...")
    verified = migrate_verify.verify(settings, side, state)
    state.searched = verified.searched
    if not verified.ok:
        lifecycle.up(settings, say=say, config_file=config_file)     # the old server answers again
        raise MigrateError(f"the re-embedded copy does not match the old data: {migrate_verify.describe(verified)}",
                           fix=f"rerun `muninn embed migrate` to carry and verify again; the second server's log "
                               f"is {st.folder(settings) / 'logs' / 'server.log'}")
    steps.stop_side(state)
    st.save(settings, state)


def _add(summary: Summary, carried: steps.Carried) -> None:
    summary.carried += carried.written
    summary.removed += carried.removed


def _switch(settings: Settings, state: st.State, summary: Summary, say: lifecycle.Say,
            config_file: Path | None) -> None:
    """Idempotent: a run killed between two of these steps redoes only what is left."""
    steps.stop_side(state)
    lifecycle.down(settings, say=say)
    data, new = st.data(settings), st.side_data(settings)
    if not state.backup:
        state.backup = st.backup_name(data.parent, state.old)
        st.save(settings, state)
    backup = data.with_name(state.backup)
    if new.is_dir():
        if data.is_dir():
            data.rename(backup)
        new.rename(data)
    embed_record.record(settings.workspace, state.to, state.to_name)
    summary.backup = str(backup)
    summary.config = _config(settings, state)
    lifecycle.up(_new_settings(settings, state), say=say, config_file=config_file)
    shutil.rmtree(st.folder(settings), ignore_errors=True)


def _new_settings(settings: Settings, state: st.State) -> Settings:
    embed = settings.embed.model_copy(update={"model": state.to, "model_name": state.to_name,
                                              "query_prompt": None, "passage_prompt": None})
    return settings.model_copy(update={"embed": embed})


_MODEL_LINE = re.compile(r"^(\s+)(model|model_name):\s*\S.*$")


def _config(settings: Settings, state: st.State) -> str:
    """muninn.yaml's embed.model and embed.model_name rewritten when the file sets them; else what to set."""
    set_to = f"embed.model: {state.to} and embed.model_name: {state.to_name}"
    if any(os.environ.get(f"MUNINN_EMBED__{k}") for k in ("MODEL", "MODEL_NAME")):
        return f"MUNINN_EMBED__MODEL is set in the environment: set it to {state.to} (and {set_to})"
    path = settings.source_file
    if path is None or not Path(path).is_file():
        return f"no muninn.yaml sets the model: format.json now records {state.to}; set {set_to} if you write one"
    lines = Path(path).read_text().splitlines(keepends=True)
    block, found = False, {}
    for i, line in enumerate(lines):
        if not line.startswith((" ", "\t")) and line.strip():
            block = line.rstrip().startswith("embed:")
        elif block and (m := _MODEL_LINE.match(line.rstrip("\n"))):
            value = state.to if m.group(2) == "model" else state.to_name
            lines[i] = f"{m.group(1)}{m.group(2)}: {value}\n"
            found[m.group(2)] = (i, m.group(1))
    if "model" not in found:
        return f"{path} does not set embed.model: format.json now records {state.to}; set {set_to} there"
    if "model_name" not in found:       # the name is part of the vectors' identity: it moves with the model
        i, indent = found["model"]
        lines.insert(i + 1, f"{indent}model_name: {state.to_name}\n")
    Path(path).write_text("".join(lines))
    return f"{path}: {set_to}"


def abort(settings: Settings, say: lifecycle.Say, config_file: Path | None = None) -> bool:
    """Stop the second stack and remove everything the migration made; False when none was in progress."""
    state = st.load(settings)
    if state is None and not st.folder(settings).exists():
        return False
    if state is not None and state.phase == "switch" and not st.data(settings).is_dir():
        raise MigrateError("the switch has begun: the old data is already moved aside",
                           fix="rerun `muninn embed migrate` to finish it")
    if state is not None:
        steps.stop_side(state)
    shutil.rmtree(st.folder(settings), ignore_errors=True)
    say(f"migrate: aborted; {st.folder(settings)} removed, the workspace's data is as it was")
    if not lifecycle.healthy(settings.server.base_url) and state is not None and state.phase in ("catch-up", "switch"):
        lifecycle.up(settings, say=say, config_file=config_file)     # the catch-up had stopped it
    return True
