"""The steps of `muninn embed migrate` between the copy and the verify, in the order they run.

The second stack: an embedding sidecar serving the new model and an openviking-server over the copy of
the data, on free ports, started with lifecycle's own pieces. Two settings differ from `muninn up`'s
server, both OpenViking's own:
- `embedding.allow_metadata_override`: the copy's collection is signed with the old model, and the
  server refuses to start on it (EmbeddingRebuildRequiredError) unless told that the width is the same
  and the vectors will be rebuilt; the forced reindex then rebuilds every one.
- `auth_mode: trusted`: in api_key mode the root key may call admin routes only, never
  `content/reindex`, and a reader's own key sees only its own tree. Trusted mode lets the root key act as
  each account's admin (X-OpenViking-Account/User/Role), on 127.0.0.1 only; identity auto-registration
  is off (flush interval 0) so no user is added to the copy. `up` serves the copy in api_key mode again.

Reindex: every account's trees re-embedded with OpenViking's own `POST /content/reindex`. Accounts come
from the server's account list (the copy holds every account, whoever made it), so an account made by
hand, not by policy.yaml, is re-embedded too. One reindex call per tree, each waited for: a tree is the
unit of progress and of resuming (the state records each tree once done).

Catch-up: what the old server got after the copy (a reader's direct write, a remembered observation, a
sync), carried into the copy through the second server's API, so it is embedded with the new model. The
old data folder is the record: a content file whose size or modification time differs from the copy's
(or from what was carried since) is written again, a new one is written, a removed one is removed. The
last pass runs with the old server stopped, so nothing can land after it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.errors import ExitCode, NotFound, ServerError, StackError
from muninn.plugins.stack import lifecycle
from muninn.plugins.stack import migrate_state as st

# --- The second stack: a sidecar for the new model and an openviking-server over the copy

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


def start_side(settings: Settings, state: st.State, say: lifecycle.Say, config_file: Path | None = None) -> Settings:
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
        if settings.embed.forwards:     # the door for the new model: the same provider, asked for that model
            env["MUNINN_EMBED__UPSTREAM_MODEL"] = state.to
            lifecycle._provider_key(settings, env, say)
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


def stop_side(state: st.State, name: str | None = None) -> None:
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


# --- Reindex: every account's trees re-embedded on the second server

BUSY_RETRY_S = 3.0


def admin_user(root: OpenViking, account: str) -> str | None:
    users = root.list_users(account)
    return users[0] if users else None


def trees(settings: Settings, side: Settings) -> list[list[str]]:
    """[account, uri] for each top-level tree: every entry of viking://resources, every folder of
    viking://agent, and viking://user (every user's memories and resources)."""
    out: list[list[str]] = []
    with root_client(settings, side) as root:
        accounts = sorted(a["account_id"] for a in root.list_accounts() if a.get("account_id"))
        for account in accounts:
            user = admin_user(root, account)
            if user is None:
                continue
            with as_admin(settings, side, account, user) as client:
                for top in ("viking://resources", "viking://agent"):
                    out += [[account, e.uri] for e in sorted(client.ls(top), key=lambda e: e.uri)
                            if (e.is_dir or top == "viking://resources") and not _hidden(e.uri)]
                out.append([account, "viking://user"])
    return out


def _hidden(uri: str) -> bool:
    return uri.rsplit("/", 1)[-1].startswith(".")


def files_in(settings: Settings, account: str, uri: str) -> int:
    prefix = f"{account}/{uri.removeprefix('viking://')}"
    return sum(1 for rel, _ in st.content_files(st.side_data(settings))
               if rel == prefix or rel.startswith(prefix + "/"))


def reindex(settings: Settings, side: Settings, state: st.State, say: lifecycle.Say) -> None:
    if not state.trees:
        state.trees = trees(settings, side)
        st.save(settings, state)
    users: dict[str, str | None] = {}
    with root_client(settings, side) as root:
        for account in {a for a, _ in state.trees}:
            users[account] = admin_user(root, account)
    total = len(state.trees)
    for n, (account, uri) in enumerate(state.trees, 1):
        if [account, uri] in state.done:
            continue
        count = files_in(settings, account, uri)
        say(f"migrate: [{n}/{total}] {account} {uri}: re-embedding {count} file(s) with {state.to}...")
        with as_admin(settings, side, account, users[account] or "") as client:
            reply = _reindex_tree(client, uri)
        embedding = (reply.get("queue_status") or {}).get("Embedding") or {}
        failed = int(reply.get("failed_records") or 0) + int(embedding.get("error_count") or 0)
        if failed:
            raise ServerError(f"OpenViking's reindex of {account} {uri} failed for {failed} record(s): "
                              f"{'; '.join(map(str, embedding.get('errors') or reply.get('warnings') or []))[:300]}",
                              fix=f"see {st.folder(settings) / 'logs'}, then rerun `muninn embed migrate` "
                                  "(done trees are kept)")
        state.done.append([account, uri])
        state.files += count
        state.vectors += int(embedding.get("processed") or 0)
        st.save(settings, state)


def _reindex_tree(client: OpenViking, uri: str) -> dict:
    """A reindex of a killed run may still be going on the second server: wait for it, then run ours
    (a forced reindex of a tree already re-embedded only does the work again)."""
    while True:
        try:
            return client.reindex(uri, force=True)
        except ServerError as exc:
            if exc.status != 409 and "in progress" not in str(exc):
                raise
        time.sleep(BUSY_RETRY_S)


# --- Catch-up: what the old server got after the copy, carried into it

@dataclass
class Carried:
    written: list[str] = field(default_factory=list)    # account/uri
    removed: list[str] = field(default_factory=list)


def pending(settings: Settings, state: st.State) -> tuple[dict[str, list[int]], list[str]]:
    """(changed or new files with their stamps, removed files) in the old data since the copy."""
    now = st.stamps(st.data(settings))
    known = {**state.copied, **state.carried}
    changed = {rel: stamp for rel, stamp in now.items() if known.get(rel) != stamp}
    removed = [rel for rel in known if rel not in now]
    return changed, removed


def carry(settings: Settings, side: Settings, state: st.State, say: lifecycle.Say) -> Carried:
    changed, removed = pending(settings, state)
    done = Carried()
    if not changed and not removed:
        return done
    say(f"migrate: carrying {len(changed)} write(s) and {len(removed)} removal(s) made on the old server "
        "since the copy...")
    old = st.data(settings)
    clients: dict[str, object] = {}
    with root_client(settings, side) as root:
        for rel in sorted({*changed, *removed}):
            account, uri = st.uri_of(rel)
            if account not in clients:
                clients[account] = as_admin(settings, side, account, admin_user(root, account) or "")
            client = clients[account]
            if rel in changed:
                _write(client, uri, (old / "viking" / rel).read_text())
                state.carried[rel] = changed[rel]
                done.written.append(f"{account}/{uri}")
            else:
                with contextlib.suppress(NotFound):
                    client.rm(uri)
                state.carried.pop(rel, None)
                state.copied.pop(rel, None)
                done.removed.append(f"{account}/{uri}")
            st.save(settings, state)
    for client in clients.values():
        client.wait()
        client.close()
    return done


def _write(client, uri: str, text: str) -> None:
    """A new file's folders are made first; `replace` of a file that is not there yet is a `create`."""
    parts = uri.removeprefix("viking://").split("/")
    for depth in range(2, len(parts)):
        client.ensure_dir("viking://" + "/".join(parts[:depth]))
    try:
        client.write(uri, text, mode="replace")
    except ServerError as exc:
        if isinstance(exc, NotFound) or "not found" in str(exc).lower() or "exist" in str(exc).lower():
            client.write(uri, text, mode="create")
        else:
            raise


def system_changed(settings: Settings, state: st.State) -> list[str]:
    """Account, user and group lists the old server changed since the copy (a key minted, a reader added)."""
    now = st.system_files(st.data(settings))
    return sorted(rel for rel in {*now, *state.system} if now.get(rel) != state.system.get(rel))


def copy_system(settings: Settings, state: st.State, changed: list[str]) -> None:
    """With both servers stopped: the old lists replace the copy's (no vectors live in them)."""
    old, new = st.data(settings), st.side_data(settings)
    for rel in changed:
        source = old / rel
        if source.exists():
            (new / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, new / rel)
        else:
            (new / rel).unlink(missing_ok=True)
    state.system = st.system_files(old)
