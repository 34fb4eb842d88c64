"""Which embedding model a workspace's stored vectors were made with, kept in `<home>/format.json`
under "embed", and so which model the workspace embeds with. OpenViking refuses to start on another model's
vectors, so a workspace keeps its model until the owner migrates (`muninn embed migrate`), whatever a newer
muninn's default is. `upgrade._stamp` keeps this key when it rewrites the format.

Where muninn.yaml names no `embed.model`, `config.load` takes it from here (`in_use`): the recorded model;
else, for a workspace from before e5-small-v2 became the default (an earlier format, or a server data
folder with no record), the earlier default; else the default (muninn.core.embed_profiles).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from muninn.core import atomic, format_file
from muninn.core import embed_profiles as profiles
from muninn.core.errors import ExitCode, MuninnError
from muninn.core.workspace import Workspace

if TYPE_CHECKING:
    from muninn.core.config import EmbedSettings, Settings

# The workspace format from which a new workspace embeds with embed_profiles.DEFAULT (muninn.core.upgrade's
# step of that number records the model of every workspace made before).
DEFAULT_SINCE = 7


@dataclass(frozen=True)
class EmbedRecord:
    model: str          # embed.model as it was when the vectors were made
    model_name: str     # embed.model_name: part of OpenViking's vector identity
    at: str             # when it was recorded (ISO, UTC)


def recorded(home: Path) -> EmbedRecord | None:
    """The workspace's model, or None when nothing is recorded yet (or the record is unreadable:
    the format check names a damaged format.json)."""
    embed = format_file.format_data(home).get("embed")
    if not isinstance(embed, dict) or not isinstance(embed.get("model"), str):
        return None
    return EmbedRecord(embed["model"], str(embed.get("model_name") or ""), str(embed.get("at") or ""))


def record(home: Path, model: str, model_name: str) -> EmbedRecord:
    """Record the model the workspace's vectors are made with, keeping format.json's other keys."""
    at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    data = format_file.format_data(home)
    if "format" not in data:     # never a format file that `read_format` would call damaged
        if (fmt := format_file.unstamped_format(home)) is None:
            # A new workspace starts in the current format, which only the upgrade steps know; one of them
            # records the model, so upgrade imports this module and this one imports it only here.
            from muninn.core import upgrade

            fmt = upgrade.current()
        data["format"] = fmt
    data["embed"] = {"model": model, "model_name": model_name, "at": at}
    atomic.write_text(Workspace(home).format_file, json.dumps(data) + "\n")
    return EmbedRecord(model, model_name, at)


class ModelMismatch(MuninnError):
    """embed.model names another model than the one the workspace's vectors were made with."""

    exit_code = ExitCode.MODEL_MISMATCH


def _earlier(home: Path) -> bool:
    """Made before DEFAULT_SINCE: a format file below it, or a server data folder that nothing recorded."""
    # read_format's fix for a damaged file names the current format, which only the upgrade steps know; one
    # of them records the model, so upgrade imports this module and this one imports it only here.
    from muninn.core.upgrade import read_format

    fmt = read_format(home)
    return (fmt is not None and fmt < DEFAULT_SINCE) or Workspace(home).server_data.is_dir()


def in_use(home: Path, embed: EmbedSettings) -> tuple[str, str]:
    """The model and model_name this workspace embeds with: muninn.yaml's where it names them, else the
    record's, else the earlier default's for a workspace from before the default changed, else the default's."""
    said = embed.model_fields_set
    rec = recorded(home)
    earlier = rec is None and _earlier(home)
    if "model" in said:
        model = embed.model
    else:
        model = rec.model if rec else profiles.EARLIER_DEFAULT if earlier else profiles.DEFAULT
    if "model_name" in said:
        name = embed.model_name
    elif rec is not None and rec.model == model:
        name = rec.model_name or profiles.model_name_of(model)
    elif earlier:
        name = profiles.EARLIER_NAME    # embed.model_name's default then, whatever the model
    else:
        name = profiles.model_name_of(model)
    return model, name


def describe(model: str, model_name: str) -> str:
    return model if model_name == profiles.model_name_of(model) else f"{model} (model_name {model_name})"


def mismatch(settings: Settings) -> ModelMismatch | None:
    """The error for an embed.model other than the recorded one, or None when they agree (or nothing is
    recorded)."""
    rec = recorded(settings.workspace)
    embed = settings.embed
    if rec is None or (rec.model, rec.model_name or profiles.model_name_of(rec.model)) == (embed.model,
                                                                                          embed.model_name):
        return None
    configured, theirs = describe(embed.model, embed.model_name), describe(rec.model, rec.model_name)
    return ModelMismatch(
        f"embed.model is {configured} but this workspace's vectors were made with {theirs}, and OpenViking "
        "refuses to start on another model's vectors",
        fix=f"re-embed them with `muninn embed migrate --to {embed.model}`, or set embed.model back to "
            f"{rec.model} (or remove it from muninn.yaml: a workspace's recorded model is its default)")
