"""Which embedding model a workspace's stored vectors were made with, kept in `<home>/format.json` under
"embed", and so which model the workspace embeds with. OpenViking refuses to start on another model's vectors,
so a workspace keeps its model until the owner migrates (`muninn embed migrate`), whatever a newer muninn's
default is.

This module writes the record, says when embed.model disagrees with it, and owns the upgrade step that records
the model of a workspace made before the default changed (registered like any part's step, through the
`register_upgrades` hook). Reading the record is muninn.core.format_file's (`recorded`); where muninn.yaml
names no `embed.model`, `config.load` takes the recorded one.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from muninn.core import embed_profiles as profiles
from muninn.core import format_file, upgrade
from muninn.core.errors import ExitCode, MuninnError
from muninn.core.format_file import EmbedRecord
from muninn.core.hookspecs import hookimpl

if TYPE_CHECKING:
    from muninn.core.config import Settings


def record(home: Path, model: str, model_name: str) -> EmbedRecord:
    """Record the model the workspace's vectors are made with, keeping format.json's other keys."""
    at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    data = format_file.format_data(home)
    if "format" not in data:     # never a format file that `read_format` would call damaged
        fmt = format_file.unstamped_format(home)
        data["format"] = upgrade.current() if fmt is None else fmt    # a new workspace starts in the current one
    data["embed"] = {"model": model, "model_name": model_name, "at": at}
    format_file.write(home, data)
    return EmbedRecord(model, model_name, at)


class ModelMismatch(MuninnError):
    """embed.model names another model than the one the workspace's vectors were made with."""

    exit_code = ExitCode.MODEL_MISMATCH


def describe(model: str, model_name: str) -> str:
    return model if model_name == profiles.model_name_of(model) else f"{model} (model_name {model_name})"


def mismatch(settings: Settings) -> ModelMismatch | None:
    """The error for an embed.model other than the recorded one, or None when they agree (or nothing is
    recorded)."""
    rec = format_file.recorded(settings.workspace)
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


def _record_the_embedder(settings: Settings) -> None:
    # The settings were resolved before this step, for a workspace of an earlier format: what muninn.yaml
    # names, else the earlier default. Recorded, so no later command flips the model under the vectors.
    record(settings.workspace, settings.embed.model, settings.embed.model_name)


STEP = upgrade.Step(profiles.DEFAULT_SINCE, "a new workspace embeds with intfloat/e5-small-v2; this one keeps the "
                    "model its vectors were made with, recorded in format.json", apply_settings=_record_the_embedder,
                    pending=lambda home: format_file.recorded(home) is None)


@hookimpl
def register_upgrades(register: Callable[[Any], Any]) -> None:
    register(STEP)
