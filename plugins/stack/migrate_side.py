"""The second stack of a migration: an embedding sidecar serving the new model and an openviking-server
over the copy of the data, on free ports, started with lifecycle's own pieces.

Two settings differ from `muninn up`'s server, both OpenViking's own:
- `embedding.allow_metadata_override`: the copy's collection is signed with the old model, and the
  server refuses to start on it (EmbeddingRebuildRequiredError) unless told that the width is the same
  and the vectors will be rebuilt; the forced reindex then rebuilds every one.
- `auth_mode: trusted`: in api_key mode the root key may call admin routes only, never
  `content/reindex`, and a reader's own key sees only its own tree. Trusted mode lets the root key act as
  each account's admin (X-OpenViking-Account/User/Role), on 127.0.0.1 only; identity auto-registration
  is off (flush interval 0) so no user is added to the copy. `up` serves the copy in api_key mode again.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import httpx

from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.errors import ExitCode, StackError
from muninn.plugins.stack import lifecycle
from muninn.plugins.stack import migrate_state as st

EMBED_MARKER, SERVER_MARKER = "muninn.plugins.embed", "openviking-server"


def _free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def side_settings(settings: Settings, state: st.State) -> Settings:
    """The workspace's settings with the new model and the second stack's ports."""
    if not state.server_port:
        state.server_port = _free_port(settings.server.host)
    if not state.embed_port:
        state.embed_port = _free_port(settings.embed.host)
    embed = settings.embed.model_copy(update={"model": state.to, "model_name": state.to_name, "url": None,
                                              "port": state.embed_port, "query_prompt": None,
                                              "passage_prompt": None})
    server = settings.server.model_copy(update={"port": state.server_port, "url": None})
    return settings.model_copy(update={"embed": embed, "server": server})


def _conf(settings: Settings, side: Settings) -> dict:
    conf = lifecycle.ov_conf(side)
    conf["storage"]["workspace"] = str(st.side_data(settings))
    conf["server"].update({"auth_mode": "trusted", "trusted_identity_flush_interval_seconds": 0})
    conf["embedding"]["allow_metadata_override"] = True
    return conf


def running(state: st.State, name: str) -> bool:
    return lifecycle._ours(state.pids.get(name), EMBED_MARKER if name == "embed" else SERVER_MARKER)


def start(settings: Settings, state: st.State, say: lifecycle.Say, config_file: Path | None = None) -> Settings:
    """Both processes, reused when a killed run left them up. Returns the side's settings."""
    side = side_settings(settings, state)
    root = st.folder(settings)
    logs = root / "logs"
    if not (running(state, "embed") and lifecycle.healthy(side.embed.base_url)):
        _check_port(side.embed.host, side.embed.port)
        cmd = [sys.executable, "-m", EMBED_MARKER, "--host", side.embed.host, "--port", str(side.embed.port)]
        if config_file:
            cmd += ["--config", str(Path(config_file).resolve())]
        env = {**os.environ, "MUNINN_EMBED__MODEL": state.to, "MUNINN_EMBED__MODEL_NAME": state.to_name}
        say(f"migrate: starting a sidecar with {state.to} on {side.embed.base_url}...")
        proc = lifecycle._spawn(cmd, logs / "embed.log", env, root)
        state.pids["embed"] = proc.pid
        st.save(settings, state)
        lifecycle._wait_healthy("the migration's embedding sidecar", side.embed.base_url, proc, logs / "embed.log",
                                timeout=180)
    _check_width(settings, side)
    if not (running(state, "server") and lifecycle.healthy(side.server.base_url)):
        _check_port(side.server.host, side.server.port)
        conf = root / "ov.conf"
        conf.write_text(json.dumps(_conf(settings, side), indent=2))
        env = {**os.environ, lifecycle.ROOT_KEY_ENV: lifecycle.root_key(settings)}
        say(f"migrate: starting a second openviking-server over the copy on {side.server.base_url}...")
        log = logs / "server.log"
        proc = lifecycle._spawn([str(lifecycle.install_server(settings, say)), "--config", str(conf)], log, env, root)
        state.pids["server"] = proc.pid
        st.save(settings, state)
        lifecycle._wait_healthy("the migration's openviking-server", side.server.base_url, proc, log,
                                timeout=settings.server.start_timeout)
    return side


def stop(state: st.State, name: str | None = None) -> None:
    """The second stack's processes (or one of them), only if they are still the ones it started."""
    for part in ([name] if name else ["server", "embed"]):
        if running(state, part):
            lifecycle._terminate(state.pids[part])
        state.pids.pop(part, None)


def _check_port(host: str, port: int) -> None:
    if lifecycle.port_busy(host, port):
        raise StackError(f"port {port} on {host}, kept for the migration's second stack, is in use",
                         fix="stop what listens there, or run `muninn embed migrate --abort` and migrate again")


class WidthMismatch(StackError):
    exit_code = ExitCode.MODEL_MISMATCH


def _check_width(settings: Settings, side: Settings) -> None:
    """Both models must write vectors of embed.dimensions: the copy keeps its collection."""
    reply = httpx.post(f"{side.embed.base_url}/v1/embeddings", timeout=120,
                       json={"input": ["width"], "model": side.embed.model_name}).json()
    width = len(reply["data"][0]["embedding"])
    if width != settings.embed.dimensions:
        raise WidthMismatch(f"{side.embed.model} writes {width}-wide vectors, the workspace's collection is "
                         f"{settings.embed.dimensions}-wide; migrate supports models of the same width",
                         fix="choose a 384-wide model (e5-small-v2, bge-small, MiniLM-L6), or sync into a new "
                             "workspace")


def root_client(settings: Settings, side: Settings) -> OpenViking:
    return OpenViking(side.server.base_url, lifecycle.root_key(settings), key_name="root (migration)",
                      timeout=settings.server.timeout)


def as_admin(settings: Settings, side: Settings, account: str, user: str) -> OpenViking:
    """The root key acting as `account`'s admin on the trusted second server."""
    headers = {"X-OpenViking-Account": account, "X-OpenViking-User": user, "X-OpenViking-Role": "admin"}
    return OpenViking(side.server.base_url, lifecycle.root_key(settings), key_name=f"root as {account}/{user}",
                      timeout=settings.server.timeout, headers=headers)
