"""One validated settings object, read from one `muninn.yaml`.

Precedence: `--config FILE`, then `$MUNINN_CONFIG`, then `<XDG config>/muninn/muninn.yaml`;
a missing default file means defaults. `MUNINN_<SECTION>__<KEY>=value` overrides one key
(e.g. `MUNINN_SERVER__PORT=2933`). Credentials never live here: they are in the OS keyring.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from muninn.core import paths, yamlfile
from muninn.core.errors import ConfigError


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ServerSettings(Section):
    """The OpenViking server that `muninn up` runs, or an external one when `url` is set."""

    url: str | None = Field(None, description="An external server; `muninn up` then leaves the server alone")
    host: str = "127.0.0.1"
    port: int = Field(1933, ge=1, le=65535)
    version: str = Field("0.5.2", description="openviking release installed into the server venv")
    venv: Path | None = Field(None, description="Server venv (default: <XDG data>/muninn/server-venv)")
    command: str | None = Field(None, description="An openviking-server binary to use instead of the venv's")
    start_timeout: float = Field(90.0, gt=0, description="Seconds to wait for /health after start")

    @property
    def base_url(self) -> str:
        return (self.url or f"http://{self.host}:{self.port}").rstrip("/")


class EmbedSettings(Section):
    """The embedding sidecar: an OpenAI-compatible /v1/embeddings over a local model."""

    host: str = "127.0.0.1"
    port: int = Field(8765, ge=1, le=65535)
    model: str | None = Field(None, description="Local model path; default is the packaged all-MiniLM-L6-v2")
    model_name: str = Field("all-MiniLM-L6-v2", description="The name reported to clients")
    dimensions: int = Field(384, gt=0)
    threads: int = Field(1, ge=1, description="torch threads per request (1 was fastest on 2 busy cores)")
    batch_size: int = Field(32, ge=1)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"


class AccountSettings(Section):
    """Which OpenViking account and user the CLI acts as (keys are in the keyring)."""

    account: str = "muninn"
    user: str = "owner"


class KeyringSettings(Section):
    backend: str | None = Field(
        None,
        description="keyring backend class, e.g. keyrings.alt.file.PlaintextKeyring for headless hosts "
        "(only base64 on disk). Default: $PYTHON_KEYRING_BACKEND, else the OS keyring.",
    )


class Settings(Section):
    home: Path | None = Field(None, description="Workspace (default: $MUNINN_HOME or <XDG data>/muninn)")
    server: ServerSettings = Field(default_factory=ServerSettings)
    embed: EmbedSettings = Field(default_factory=EmbedSettings)
    openviking: AccountSettings = Field(default_factory=AccountSettings)
    keyring: KeyringSettings = Field(default_factory=KeyringSettings)
    source_file: Path | None = Field(None, exclude=True)

    @property
    def workspace(self) -> Path:
        return (self.home or paths.home()).expanduser()

    @property
    def server_venv(self) -> Path:
        return (self.server.venv or paths.server_venv()).expanduser()


def _env_overrides(environ: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in environ.items():
        if not name.startswith("MUNINN_") or "__" not in name:
            continue
        keys = name[len("MUNINN_"):].lower().split("__")
        node = out
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = value
    return out


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def load(path: Path | str | None = None, environ: dict[str, str] | None = None) -> Settings:
    """Load and validate settings. An explicit path must exist; the default one may not."""
    environ = dict(os.environ if environ is None else environ)
    explicit = path is not None or "MUNINN_CONFIG" in environ
    file = Path(path).expanduser() if path is not None else paths.default_config_file()
    if file.exists():
        doc = yamlfile.load(file)
        data = doc.data or {}
        if not isinstance(data, dict):
            raise ConfigError("expected a mapping of sections at the top level", path=str(file), line=1)
    elif explicit:
        raise ConfigError("config file not found", path=str(file), fix="create it or drop --config")
    else:
        doc = yamlfile.Document(path=file, data={})
        data = {}
    settings = doc.validate(Settings, _merge(data, _env_overrides(environ)))
    settings.source_file = file if file.exists() else None
    return settings
