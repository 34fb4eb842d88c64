"""The local stack: OpenViking's server and muninn's embedding sidecar on 127.0.0.1.

Everything lives under `<workspace>/stack`: ov.conf, the server's data, logs, and `stack.json`
with the PIDs we started. `down` stops exactly those PIDs (after checking they are still ours),
so a stack started by someone else on the same ports is never touched.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx
import psutil

from muninn.core import accounts, credentials, embed_record, extras, format_file, upgrade
from muninn.core import embed_profiles as profiles
from muninn.core import embed_prompts as prompts
from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.errors import StackError
from muninn.plugins.embed import fetch
from muninn.plugins.stack import probe as stack_probe

ROOT_KEY_ENV = "MUNINN_OV_ROOT_KEY"
BREAKER_RESET_S = 15.0
Say = Callable[[str], None]


@dataclass
class Component:
    name: str
    url: str                       # what was checked
    pid: int | None = None         # a process this workspace started; never for an external server.url
    running: bool = False
    healthy: bool = False          # the server: /health and a real `find` both answered
    detail: str = ""
    latency_ms: float | None = None   # of /health
    find_ms: float | None = None      # the server: a real `find` through the embedding sidecar
    breaker: str = ""                 # the server: OpenViking's embedding circuit breaker (probe.py)


def _state_file(settings: Settings) -> Path:
    return settings.paths.stack / "stack.json"


def _read_state(settings: Settings) -> dict[str, dict]:
    try:
        return json.loads(_state_file(settings).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def _write_state(settings: Settings, state: dict[str, dict]) -> None:
    path = _state_file(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state, indent=2))


def log_tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return "(no log)"


# --- the server venv ---------------------------------------------------------------------------

def server_binary(settings: Settings) -> Path:
    if settings.server.command:
        return Path(settings.server.command)
    return settings.server_venv / "bin" / "openviking-server"


def install_server(settings: Settings, say: Say = print) -> Path:
    """Create OpenViking's own venv on first use (its pins clash with the MCP SDK muninn uses)."""
    binary = server_binary(settings)
    if binary.exists():
        return binary
    if settings.server.command:
        raise StackError(f"server.command {binary} does not exist", fix="fix server.command in muninn.yaml")
    venv = settings.server_venv
    say(f"Creating OpenViking's venv at {venv} (first use only; ~1.3 GB, a few minutes)...")
    log = venv.parent / "server-venv-install.log"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as fh:
        steps = [
            [sys._base_executable, "-m", "venv", str(venv)],  # type: ignore[attr-defined]
            [str(venv / "bin" / "pip"), "install", "--disable-pip-version-check", "-q",
             f"openviking=={settings.server.version}"],
        ]
        for cmd in steps:
            if subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT).returncode != 0:
                raise StackError(f"installing openviking {settings.server.version} failed; log: {log}\n"
                                 + log_tail(log))
    if not binary.exists():
        raise StackError(f"openviking installed but {binary} is missing; log: {log}")
    say(f"OpenViking {settings.server.version} installed.")
    return binary


# --- health and processes -------------------------------------------------------------------------

def healthy(url: str, timeout: float = 2.0) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def _served_model(url: str) -> str | None:
    """The model name a running sidecar reports on /health (None when it does not say)."""
    try:
        return httpx.get(f"{url}/health", timeout=2.0).json().get("model")
    except (httpx.HTTPError, ValueError, AttributeError):
        return None


def port_busy(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def _ours(pid: int | None, marker: str) -> bool:
    """Alive, and still the process we started (PIDs get reused)."""
    if not pid:
        return False
    try:
        proc = psutil.Process(pid)
        return proc.status() != psutil.STATUS_ZOMBIE and marker in " ".join(proc.cmdline())
    except psutil.Error:
        return False


def _spawn(cmd: list[str], log: Path, env: dict[str, str], cwd: Path) -> subprocess.Popen:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as fh:
        # A new session: `down` can signal the whole group, and a Ctrl-C in the shell doesn't reach it.
        return subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, cwd=cwd, start_new_session=True)


def _wait_healthy(name: str, url: str, proc: subprocess.Popen, log: Path, timeout: float,
                  known: dict[str, tuple[str, str]] | None = None) -> None:
    """`known`: a marker in the log -> (what it means, how to fix it), for failures worth a sentence."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log_tail(log)
            for marker, (meaning, fix) in (known or {}).items():
                if marker in tail:
                    raise StackError(f"{name} refused to start: {meaning} (log {log})", fix=fix)
            raise StackError(f"{name} exited with code {proc.returncode} during start-up; log {log}:\n" + tail)
        if healthy(url, timeout=1.0):
            return
        time.sleep(0.3)
    _terminate(proc.pid)
    raise StackError(f"{name} did not become healthy at {url} within {timeout:.0f}s; log {log}:\n"
                     + log_tail(log))


def _server_failures(settings: Settings) -> dict[str, tuple[str, str]]:
    rec = format_file.recorded(settings.workspace)
    made_with = (f"the workspace records {embed_record.describe(rec.model, rec.model_name)}" if rec else
                 "nothing recorded it")
    return {"EmbeddingRebuildRequiredError": (
        f"its stored vectors were made by another embedding model than embed.model "
        f"({embed_record.describe(settings.embed.model, settings.embed.model_name)}; {made_with})",
        "set embed.model and embed.model_name to the model those vectors were made with (muninn's default "
        f"before e5-small-v2: {profiles.EARLIER_DEFAULT}), or re-embed them with "
        f"`muninn embed migrate --to {settings.embed.model}`")}


def _terminate(pid: int, grace: float = 10.0) -> None:
    try:
        os.killpg(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


# --- ov.conf ---------------------------------------------------------------------------------------

def ov_conf(settings: Settings) -> dict:
    """Vectors only, no VLM, embeddings from the sidecar. The root key comes from the environment
    (`$VAR` is expanded by the server), so it is never written to disk."""
    return {
        "storage": {"workspace": str(settings.paths.server_data)},
        "server": {"host": settings.server.host, "port": settings.server.port,
                   "auth_mode": "api_key", "root_api_key": f"${ROOT_KEY_ENV}"},
        "embedding": {
            "dense": {
                "provider": "openai", "model": settings.embed.model_name,
                "api_base": f"{settings.embed.base_url}/v1", "api_key": "local-sidecar",
                "dimension": settings.embed.dimensions, "input": "text",
                # Only for a prompted model: these are part of OpenViking's vector identity.
                **({"query_param": "query", "document_param": "passage"}
                   if prompts.for_settings(settings.embed) or settings.embed.provider == "voyage" else {}),
            },
            # The sidecar is local: after its restart, searches need not wait out OpenViking's
            # default 60 s breaker (it doubles on each failed probe, up to the max).
            "circuit_breaker": {"reset_timeout": BREAKER_RESET_S, "max_reset_timeout": 120.0},
        },
    }


def root_key(settings: Settings, create: bool = False) -> str:
    ring = credentials.for_server(settings)
    key = ring.get(credentials.root_key_name())
    if key:
        return key
    if not create:
        raise StackError(f"no OpenViking root key for {settings.server.base_url} in the keyring",
                         fix=f"store it with `muninn server key --url {settings.server.url}`" if settings.server.url
                         else "run `muninn up` once to create it")
    key = secrets.token_urlsafe(32)
    ring.set(credentials.root_key_name(), key)
    return key


# --- up / down / status ----------------------------------------------------------------------------

def status(settings: Settings, probe: bool = True) -> list[Component]:
    """Each part, checked at its URL with the latency seen. `probe`: also a real `find` (what a
    search needs), which the server must pass to count as healthy. The limit is search.timeout."""
    state = _read_state(settings)
    out = []
    for name, url, marker in (("embed", settings.embed.base_url, "muninn.plugins.embed"),
                              ("server", settings.server.base_url, "openviking-server")):
        external = name == "server" and bool(settings.server.url)
        pid = None if external else state.get(name, {}).get("pid")
        comp = Component(name=name, url=url, pid=pid, running=_ours(pid, marker))
        seen = stack_probe.health(url, settings.search.timeout if probe else 2.0)
        comp.healthy, comp.latency_ms = seen.ok, seen.latency_ms
        if external:
            comp.detail = "external (server.url): not started or stopped by muninn"
        elif comp.healthy and not comp.running:
            comp.detail = "answering, but not started by this workspace"
        elif comp.running and not comp.healthy:
            comp.detail = f"process running but {seen.detail}"
        elif not comp.running and pid:
            comp.detail = "stale PID file (process gone)"
        if name == "embed" and settings.embed.forwards:
            comp.detail = "; ".join(x for x in (comp.detail, forwarding(settings)) if x)
        if name == "server" and comp.healthy and probe:
            found = stack_probe.find(settings)
            comp.healthy, comp.find_ms, comp.breaker = found.ok, found.latency_ms, found.breaker
            said = f"find {found.latency_ms:g} ms" if found.ok else found.detail
            comp.detail = "; ".join(x for x in (comp.detail, said, f"embedding breaker {found.breaker}") if x)
        out.append(comp)
    return out


def up(settings: Settings, say: Say = print, config_file: Path | None = None) -> list[Component]:
    """Start what is not running. Running twice is a no-op; a busy port is one clear sentence."""
    if settings.server.url:
        say(f"server.url is set ({settings.server.url}): muninn does not manage that server.")
    _settle_the_model(settings, say)
    state = _read_state(settings)
    root = settings.paths.stack
    env = dict(os.environ)
    components = {c.name: c for c in status(settings, probe=False)}

    embed = components["embed"]
    if settings.embed.url:
        say(f"embed.url is set ({settings.embed.url}): muninn does not manage that endpoint.")
    elif embed.running and embed.healthy:
        if (served := _served_model(embed.url)) not in (None, settings.embed.model_name):
            # Reused, it would embed the new vectors with the model it was started with.
            raise StackError(f"the embedding sidecar running at {embed.url} (pid {embed.pid}) serves {served}, "
                             f"not embed.model_name {settings.embed.model_name}",
                             fix="run `muninn down`, then `muninn up`")
        say(f"embed: already running (pid {embed.pid}) at {embed.url}")
    else:
        if settings.embed.forwards:
            _provider_key(settings, env, say)
        elif not extras.installed("ml"):
            # Before the spawn: the sidecar would die on its first import with a traceback in its log.
            extras.require("ml", what="the local embedding sidecar (or set embed.url to an endpoint)")
        if settings.embed.model in fetch.WHEELED and not settings.embed.forwards:
            fetch.fetch(settings.embed.model, say)      # once, as the server's venv is installed once
        if port_busy(settings.embed.host, settings.embed.port):
            raise StackError(f"port {settings.embed.port} on {settings.embed.host} is in use by another process",
                             fix="stop it or set embed.port in muninn.yaml")
        cmd = [sys.executable, "-m", "muninn.plugins.embed", "--host", settings.embed.host,
               "--port", str(settings.embed.port)]
        if config_file:
            cmd += ["--config", str(Path(config_file).resolve())]
        log = root / "logs" / "embed.log"
        say(f"embed: starting the door to {settings.embed.provider} at {settings.embed.upstream} on {embed.url}..."
            if settings.embed.forwards else f"embed: starting on {embed.url} (model load takes ~10 s)...")
        proc = _spawn(cmd, log, env, root)
        state["embed"] = {"pid": proc.pid, "started": time.time()}
        _write_state(settings, state)
        _wait_healthy("embedding sidecar", embed.url, proc, log, timeout=180)
        say(f"embed: healthy (pid {proc.pid})")

    server = components["server"]
    if settings.server.url:
        pass
    elif server.running and server.healthy:
        say(f"server: already running (pid {server.pid}) at {server.url}")
    else:
        if port_busy(settings.server.host, settings.server.port):
            raise StackError(f"port {settings.server.port} on {settings.server.host} is in use by another process",
                             fix="stop it or set server.port in muninn.yaml")
        binary = install_server(settings, say)
        conf = root / "ov.conf"
        conf.parent.mkdir(parents=True, exist_ok=True)
        conf.write_text(json.dumps(ov_conf(settings), indent=2))
        env[ROOT_KEY_ENV] = root_key(settings, create=True)
        log = root / "logs" / "server.log"
        say(f"server: starting openviking-server on {server.url}...")
        proc = _spawn([str(binary), "--config", str(conf)], log, env, root)
        state["server"] = {"pid": proc.pid, "started": time.time()}
        _write_state(settings, state)
        _wait_healthy("openviking-server", server.url, proc, log, timeout=settings.server.start_timeout,
                      known=_server_failures(settings))
        say(f"server: healthy (pid {proc.pid})")
    if not settings.server.url:
        ensured = ensure_default_user(settings)
        say(f"account {ensured.account}/{ensured.user}: {ensured.action} (key {ensured.key_name!r} in keyring)")
    wait_for_find(settings, say)
    return status(settings)


def _provider_key(settings: Settings, env: dict[str, str], say: Say) -> None:
    """The provider's key reaches the door as an environment variable only: never ov.conf, never a file."""
    from muninn.plugins.embed.forward import KEY_ENV, KEY_NAME

    env.pop(KEY_ENV, None)
    key = credentials.for_home(settings).get(KEY_NAME)
    if key:
        env[KEY_ENV] = key
    else:
        say(f"embed: no key for {settings.embed.upstream} in the keyring (`muninn embed key` stores one); "
            "the door calls it without one")


def _settle_the_model(settings: Settings, say: Say) -> None:
    """Before anything starts: a server data folder that does not exist yet will hold the configured model's
    vectors, so that model is recorded; one that exists must be the recorded model's (else exit 20)."""
    home = settings.workspace
    upgrade.ensure(home, say, settings)     # a caller that is not the CLI: the record needs a format file
    if settings.server.url or settings.paths.server_data.exists():
        if refused := embed_record.mismatch(settings):
            raise refused
    else:
        embed_record.record(home, settings.embed.model, settings.embed.model_name)


def wait_for_find(settings: Settings, say: Say = print) -> float:
    """Healthy means a search works: a real `find` must pass through the server and the sidecar.
    After the sidecar was down, OpenViking's circuit breaker refuses finds for 60 s and more while
    /health says ok, so wait for it (up to server.start_timeout). Returns the find's milliseconds."""
    deadline = time.monotonic() + settings.server.start_timeout
    said = ""
    while True:
        found = stack_probe.find(settings)
        if not found.tried:
            say(f"search: not probed: {found.detail}")
            return 0.0
        if found.ok:
            say(f"search: a real find answered in {found.latency_ms:g} ms (embedding breaker closed)")
            return found.latency_ms or 0.0
        if time.monotonic() >= deadline:
            raise StackError(f"OpenViking at {settings.server.base_url} answers /health but {found.detail} "
                             f"(embedding breaker {found.breaker}) after {settings.server.start_timeout:g} s",
                             fix=f"see the server log {stack_probe.server_log(settings) or '(external)'} and "
                                 "`muninn status`; raise server.start_timeout if the breaker is still open")
        if found.breaker.split(",")[0] != said:   # once per state, not per countdown second
            say(f"search: waiting for a real find to pass (embedding breaker {found.breaker})...")
            said = found.breaker.split(",")[0]
        time.sleep(2.0)


def ensure_default_user(settings: Settings) -> accounts.Ensured:
    """The CLI's own identity (`openviking.account`/`openviking.user`), with a working key."""
    ring = credentials.for_server(settings)
    with OpenViking(settings.server.base_url, root_key(settings), key_name=credentials.root_key_name()) as root:
        return accounts.ensure_user(root, ring, settings.openviking.account, settings.openviking.user)


def down(settings: Settings, say: Say = print) -> int:
    """Stop exactly the processes this workspace started. Returns how many were stopped."""
    state = _read_state(settings)
    stopped = 0
    for name, marker in (("server", "openviking-server"), ("embed", "muninn.plugins.embed")):
        pid = state.get(name, {}).get("pid")
        if _ours(pid, marker):
            say(f"{name}: stopping pid {pid}")
            _terminate(pid)
            stopped += 1
        elif pid:
            say(f"{name}: pid {pid} is gone (stale PID file removed)")
        state.pop(name, None)
    _write_state(settings, state)
    return stopped


def stop_server(settings: Settings, say: Say = print) -> bool:
    """Stop only the server this workspace started (its sidecar keeps serving). True if one was stopped."""
    state = _read_state(settings)
    pid = state.get("server", {}).get("pid")
    if not _ours(pid, "openviking-server"):
        return False
    say(f"server: stopping pid {pid}")
    _terminate(pid)
    state.pop("server", None)
    _write_state(settings, state)
    return True


def forwarding(settings: Settings) -> str:
    """What the door forwards to, and the billed tokens against the cap."""
    from muninn.core import billing

    return (f"door to {settings.embed.provider} at {settings.embed.upstream}; "
            f"{billing.for_settings(settings).usage().describe()}")


def as_dicts(components: list[Component]) -> list[dict]:
    return [asdict(c) for c in components]
