"""A bad `MUNINN_<SECTION>__<KEY>` override is named by its variable, never blamed on a line of muninn.yaml
(which may not even hold that section); a bad value in the file is still named by its line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

YAML = "# muninn.yaml\n\nserver:\n  url: null\n\nopenviking:\n  account: home\n"

BAD_OVERRIDES = [
    ("MUNINN_SERVER__PORT", "abc", "server.port"),
    ("MUNINN_SERVER__PORT", "99999", "server.port"),
    ("MUNINN_SEARCH__KK", "3", "search.kk"),             # a section the file does not have
    ("MUNINN_NOPE__X", "1", "nope"),                     # a section muninn does not have
    ("MUNINN_SERVER__TIMEOUT", "-1", "server.timeout"),
    ("MUNINN_OPENVIKING__ACCOUNT__DEEP", "x", "openviking.account"),
    ("MUNINN_EMBED__POOLING", "max", "embed.pooling"),
]


def _status(cfg: Path | None, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MUNINN_") or "__" not in k}
    args = ["--config", str(cfg)] if cfg else []
    return subprocess.run([sys.executable, "-m", "muninn", *args, "status"], capture_output=True, text=True,
                          env={**base, **env}, timeout=60)


@pytest.mark.parametrize("var, value, key", BAD_OVERRIDES)
@pytest.mark.parametrize("with_file", [True, False])
def test_the_variable_is_named_not_a_line(tmp_path: Path, var: str, value: str, key: str, with_file: bool) -> None:
    cfg = tmp_path / "muninn.yaml"
    if with_file:
        cfg.write_text(YAML)
    done = _status(cfg if with_file else None, **{var: value})
    assert done.returncode == 2, done.stderr
    first = done.stderr.strip().splitlines()[0]
    assert first.startswith(f"error: {var}: {key}"), first
    assert "muninn.yaml:" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("text, line, key", [
    (YAML.replace("url: null", "port: abc"), 4, "server.port"),
    (YAML + "search:\n  kk: 3\n", 9, "search.kk"),
])
def test_a_bad_value_in_the_file_still_names_its_line_beside_a_good_override(
        tmp_path: Path, text: str, line: int, key: str) -> None:
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(text)
    done = _status(cfg, MUNINN_EMBED__PORT="8766")
    assert done.returncode == 2
    assert f"{cfg}:{line}: {key}" in done.stderr, done.stderr
    assert "MUNINN_EMBED__PORT" not in done.stderr
