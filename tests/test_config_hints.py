"""A mistyped key gets the nearest known key at its place, and a YAML error says what usually fixes it:
through the real entry point, by class of mistake, each still exit 2 with the file and line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from muninn.core import yamlfile
from muninn.core.config import Settings

# (muninn.yaml, line, the key as named, the suggestion or None): a typo at each depth of the file.
TYPOS = [
    ("serch:\n  k: 3\n", 1, "serch", "search"),                                        # a section
    ("server:\n  port: 1933\n  prot: 1\n", 3, "server.prot", "port"),                 # a key of a section
    ("search:\n  rerank:\n    modle: x\n", 3, "search.rerank.modle", "model"),         # a nested section
    ("sources:\n  - {kind: notes, path: n, area: viking://resources/x, optons: {}}\n", 2, "sources.0.optons",
     "options"),                                                                          # an entry of a list
    ("embed:\n  treads: 2\n", 2, "embed.treads", "threads"),
    ("search:\n  rerank:\n    enabeld: false\n", 3, "search.rerank.enabeld", "enabled"),
    ("colour: red\n", 1, "colour", None),                                                 # nothing near: no guess
    ("server:\n  certificate: x\n", 2, "server.certificate", None),
]


@pytest.mark.parametrize("text, line, key, near", TYPOS, ids=[t[2] for t in TYPOS])
def test_an_unknown_key_names_the_nearest_known_one(run_muninn, tmp_path: Path, text: str, line: int, key: str,
                                                    near: str | None) -> None:
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(text)
    ended = run_muninn(["--config", str(cfg), "doctor"])
    err = " ".join(ended.stderr.split())
    assert ended.exit_code == 2 and f"{cfg}:{line}: {key}: unknown key" in err
    assert (f"did you mean `{near}`?" in err) if near else "did you mean" not in err
    assert "Traceback" not in ended.stderr


# (muninn.yaml, line, words of the fix): the YAML mistakes a hand-edited file makes.
YAML_MISTAKES = [
    ("server:\n\tport: 1\n", 2, "tabs"),
    ("server:\n  host: a: b\n", 2, "quote the value"),
    ("server:\n  port: [1\n", 3, "close the bracket"),
    ('server:\n  host: "x\n', 3, "close the quote"),
    ("server:\n  host: *x\n", 2, "alias"),
    ("server:\n  host: @x\n", 2, "must be quoted"),
    ("server:\n  port: 1\n bad: 2\n", 3, "indent"),
]


@pytest.mark.parametrize("text, line, fix", YAML_MISTAKES, ids=[m[2] for m in YAML_MISTAKES])
def test_a_yaml_error_says_what_usually_fixes_it(run_muninn, tmp_path: Path, text: str, line: int, fix: str) -> None:
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(text)
    ended = run_muninn(["--config", str(cfg), "doctor"])
    err = " ".join(ended.stderr.split())
    assert ended.exit_code == 2 and f"{cfg}:{line}: not valid YAML" in err and fix in err
    assert "Traceback" not in ended.stderr


def test_the_installed_command_says_it_too(tmp_path: Path) -> None:
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text("search:\n  rerank:\n    modle: x\n")
    env = {**os.environ, "MUNINN_HOME": str(tmp_path / "home")}
    out = subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), "doctor"], capture_output=True,
                         text=True, env=env)
    assert out.returncode == 2 and "did you mean `model`?" in " ".join(out.stderr.split())


def test_every_section_of_the_settings_is_reachable_for_a_suggestion() -> None:
    """The walk follows every nested model of Settings (sections, list entries): a key with its last letter
    changed finds that key wherever it sits."""
    missed, seen = [], 0
    stack: list[tuple[tuple, type]] = [((), Settings)]
    while stack:
        loc, model = stack.pop()
        for name, info in model.model_fields.items():
            typo = name[:-1] + ("x" if name[-1] != "x" else "y")
            seen += 1
            if typo not in model.model_fields and yamlfile.suggest(Settings, (*loc, typo)) != name:
                missed.append(".".join(map(str, (*loc, name))))
            if (inner := yamlfile._inner(model, name)) is not None:
                entry = (0,) if "list[" in str(info.annotation) else ()
                stack.append(((*loc, name, *entry), inner))
    assert seen > 100 and len(missed) <= 3, missed    # a two-letter key one letter off another may tie
