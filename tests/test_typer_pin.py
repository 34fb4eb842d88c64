"""muninn/cli.py and muninn/core/edge.py patch typer's private parts. pyproject pins typer to the minor
they fit; these checks fail on the typer in use when that pin or those parts drift apart."""

from __future__ import annotations

import importlib
import importlib.metadata
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
# (module, attribute path) of every private name the two modules use.
PRIVATE = [
    ("typer.core", "_TyperParameter.display_type"),
    ("typer.core", "HAS_RICH"),
    ("typer._click.exceptions", "UsageError"),
    ("typer._click.exceptions", "NoArgsIsHelpError"),
    ("typer._click.exceptions", "ClickException"),
    ("typer._click.utils", "PacifyFlushWrapper"),
    ("typer._click", "Command"),
]


def typer_pin() -> Requirement:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (pin,) = [Requirement(d) for d in deps if Requirement(d).name == "typer"]
    return pin


def test_typer_is_pinned_below_the_next_minor() -> None:
    pin = typer_pin()
    assert pin.specifier, "typer needs an upper bound: its private parts change between minors"
    lowest = min(Version(s.version) for s in pin.specifier if s.operator in (">=", "=="))
    nxt = Version(f"{lowest.major}.{lowest.minor + 1}")
    assert not pin.specifier.contains(nxt)


def test_the_typer_in_use_is_inside_the_pin() -> None:
    assert typer_pin().specifier.contains(importlib.metadata.version("typer"))


def test_every_private_name_the_patches_use_is_there() -> None:
    missing = []
    for module, path in PRIVATE:
        obj: object = importlib.import_module(module)
        for part in path.split("."):
            if not hasattr(obj, part):
                missing.append(f"{module}.{path}")
                break
            obj = getattr(obj, part)
    assert missing == []


def test_the_list_names_what_the_sources_import() -> None:
    """Every `typer._click` / `typer.core._` name in cli.py and edge.py is in PRIVATE."""
    text = (ROOT / "muninn/cli.py").read_text() + (ROOT / "muninn/core/edge.py").read_text()
    for needle in ("_TyperParameter", "display_type", "PacifyFlushWrapper", "HAS_RICH", "typer._click"):
        assert needle in text
        assert any(needle in f"{m}.{p}" for m, p in PRIVATE), needle
