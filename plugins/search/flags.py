"""The stage switches as CLI flags and MCP parameters, generated from the registered stages: a new switch
appears in `muninn search`, `muninn eval` and (when it is offered to agents) recall_search at once."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, Field, create_model

from muninn.plugins.search.pipeline import stage_switches

Switches = dict[str, bool | None]
# Read once: the flags are made when a command module is imported.
SWITCHES = stage_switches()


def switch_flags(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give a typer command one `--no-<name>` flag per stage switch, in place of its `switches`
    parameter; the command receives `switches={name: False or None}` (None: as configured)."""
    import typer

    hints = typing.get_type_hints(command)
    params = []
    for p in inspect.signature(command).parameters.values():
        if p.name != "switches":
            params.append(p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=hints.get(p.name, p.annotation)))
            continue
        params += [inspect.Parameter(_param(s.name), inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                                     default=typer.Option(False, f"--no-{s.name}", help=s.help)) for s in SWITCHES]

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> Any:
        switches = {s.name: False if kwargs.pop(_param(s.name)) else None for s in SWITCHES}
        return command(**kwargs, switches=switches)

    wrapper.__signature__ = inspect.Signature(params)    # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return wrapper


def _param(name: str) -> str:
    return "no_" + name.replace("-", "_")


def agent_params(base: type[BaseModel]) -> type[BaseModel]:
    """`base` plus one optional boolean per switch offered to agents (`Switch.agent`)."""
    fields: dict[str, Any] = {s.name: (bool | None, Field(None, description=f"False: {s.help}"))
                              for s in SWITCHES if s.agent}
    return create_model(base.__name__, __base__=base, **fields) if fields else base


def agent_switches(params: BaseModel) -> Switches:
    """The switches an agent's call set, by name."""
    values: Mapping[str, Any] = params.model_dump()
    return {s.name: values.get(s.name) for s in SWITCHES if s.agent}
