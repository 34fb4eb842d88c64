from pathlib import Path

import pytest

from muninn.core import config
from muninn.core.errors import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "muninn.yaml"
    path.write_text(text)
    return path


def test_defaults_without_a_file(tmp_path: Path) -> None:
    settings = config.load(environ={"XDG_CONFIG_HOME": str(tmp_path)})
    assert settings.server.base_url == "http://127.0.0.1:1933"
    assert settings.embed.dimensions == 384
    assert settings.source_file is None


def test_file_and_env_override(tmp_path: Path) -> None:
    path = write(tmp_path, "server:\n  port: 2000\nembed:\n  threads: 2\n")
    settings = config.load(path, environ={"MUNINN_SERVER__PORT": "2001"})
    assert settings.server.port == 2001
    assert settings.embed.threads == 2
    assert settings.source_file == path


@pytest.mark.parametrize(
    "text, line, needle",
    [
        ("server:\n  port: 1933\n  prot: 1\n", 3, "server.prot: unknown key"),
        ("server:\n  port: not-a-number\n", 2, "server.port"),
        ("embed:\n  threads: 0\n", 2, "embed.threads"),
        ("server:\n  port: [1\n", 3, "not valid YAML"),
        ("- just\n- a list\n", 1, "mapping"),
    ],
)
def test_bad_config_names_file_line_and_key(tmp_path: Path, text: str, line: int, needle: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        config.load(path, environ={})
    message = str(info.value)
    assert message.startswith(f"{path}:{line}")
    assert needle in message
    assert info.value.exit_code == 2


def test_explicit_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        config.load(tmp_path / "nope.yaml", environ={})


def test_config_from_muninn_config_env(tmp_path: Path) -> None:
    path = write(tmp_path, "openviking:\n  account: lab\n")
    settings = config.load(environ={"MUNINN_CONFIG": str(path)})
    assert settings.openviking.account == "lab"
