"""The OpenViking client layer: the SDK's HTTP client, with every server error turned into one
sentence that says which key, which URI, and what to do.

muninn talks to OpenViking only over HTTP and imports nothing from the server package.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
from openviking_sdk import SyncHTTPClient
from openviking_sdk import errors as ov_errors

from muninn.core import credentials
from muninn.core.config import Settings
from muninn.core.errors import AuthError, NotFound, ServerDown, ServerError

VECTORS_ONLY = {"processing_mode": "vectors_only"}


@dataclass(frozen=True)
class Entry:
    uri: str
    is_dir: bool
    size: int | None = None
    modified: str | None = None   # the server's modTime: with size, what an incremental walk compares


class OpenViking:
    """One identity (a root key or a user key) talking to one server."""

    def __init__(self, url: str, api_key: str, key_name: str = "api key", timeout: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.key_name = key_name
        self._api_key = api_key
        self._sdk = SyncHTTPClient(url=self.url, api_key=api_key, timeout=timeout)
        self._http = httpx.Client(base_url=self.url, headers={"X-API-Key": api_key}, timeout=timeout)
        self._ready = False

    # --- construction from settings ---

    @classmethod
    def root(cls, settings: Settings) -> OpenViking:
        ring = credentials.Keyring(settings.keyring.backend)
        key = ring.require(credentials.root_key_name(), fix="run `muninn up` to create the local stack")
        return cls(settings.server.base_url, key, key_name=credentials.root_key_name())

    @classmethod
    def user(cls, settings: Settings, account: str | None = None, user: str | None = None) -> OpenViking:
        account = account or settings.openviking.account
        user = user or settings.openviking.user
        name = credentials.user_key_name(account, user)
        ring = credentials.Keyring(settings.keyring.backend)
        key = ring.require(name, fix="run `muninn up` (the CLI's own user) or `muninn policy apply` "
                                     "(the readers in policy.yaml)")
        return cls(settings.server.base_url, key, key_name=name)

    def close(self) -> None:
        if self._ready:
            self._sdk.close()
        self._http.close()

    def __enter__(self) -> OpenViking:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- error translation: the one place server errors become sentences ---

    def _call(self, what: str, uri: str | None, fn, /, *args, **kwargs) -> Any:
        try:
            if not self._ready:
                self._sdk.initialize()
                self._ready = True
            return fn(*args, **kwargs)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise self._down(exc) from None
        except httpx.TimeoutException:
            raise self._slow(what, uri) from None
        except ov_errors.NotFoundError:
            raise NotFound(f"{what}: {uri} does not exist on {self.url}", status=404, uri=uri) from None
        except (ov_errors.UnauthenticatedError, ov_errors.PermissionDeniedError) as exc:
            raise self._auth(what, uri, str(exc)) from None
        except ov_errors.OpenVikingError as exc:
            raise ServerError(f"{what}{f' {uri}' if uri else ''} failed: {exc.message} ({exc.code})",
                              uri=uri) from None

    def _down(self, exc: Exception) -> ServerDown:
        return ServerDown(f"OpenViking is not reachable at {self.url}",
                          fix="start it with `muninn up`, or check server.url / server.port in muninn.yaml")

    def _slow(self, what: str, uri: str | None) -> ServerError:
        return ServerError(f"{what}{f' {uri}' if uri else ''} timed out waiting for {self.url}",
                           uri=uri, fix="the server is busy or stuck: see its log (`muninn status`), then retry")

    def _auth(self, what: str, uri: str | None, detail: str) -> AuthError:
        where = f" on {uri}" if uri else ""
        return AuthError(f"{what}{where} refused for key {self.key_name!r}: {detail}",
                         uri=uri, fix="check the key in the keyring and the ACLs in policy.yaml")

    def _rest(self, method: str, path: str, what: str, uri: str | None = None, **kwargs) -> Any:
        """For the few endpoints the SDK lacks or shapes differently."""
        try:
            resp = self._http.request(method, path, **kwargs)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise self._down(exc) from None
        except httpx.TimeoutException:
            raise self._slow(what, uri) from None
        if resp.status_code in (401, 403):
            raise self._auth(what, uri, resp.text[:200])
        if resp.status_code == 404:
            raise NotFound(f"{what}: {uri or path} does not exist on {self.url}", status=404, uri=uri)
        if resp.status_code >= 400:
            raise ServerError(f"{what} failed with HTTP {resp.status_code}: {resp.text[:300]}",
                              status=resp.status_code, uri=uri)
        body = resp.json()
        return body.get("result", body) if isinstance(body, dict) else body

    # --- health and admin ---

    def health(self) -> dict[str, Any]:
        try:
            resp = self._http.get("/health", timeout=5)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise self._down(exc) from None
        return resp.json()

    def create_account(self, account: str, admin_user: str) -> str:
        """Returns the admin user's key."""
        result = self._call("create account", None, self._sdk.admin_create_account, account, admin_user)
        return result["user_key"]

    def list_accounts(self) -> list[dict[str, Any]]:
        accounts = self._call("list accounts", None, self._sdk.admin_list_accounts)
        return [a for a in accounts if isinstance(a, dict)] if isinstance(accounts, list) else []

    def account_exists(self, account: str) -> bool:
        return account in {a.get("account_id") for a in self.list_accounts()}

    def register_user(self, account: str, user: str, role: str = "user") -> str:
        result = self._call("register user", None, self._sdk.admin_register_user, account, user, role)
        return result["user_key"]

    def list_users(self, account: str) -> list[str]:
        users = self._call("list users", None, self._sdk.admin_list_users, account)
        return [u.get("user_id") for u in users] if isinstance(users, list) else []

    def regenerate_key(self, account: str, user: str) -> str:
        result = self._call("regenerate key", None, self._sdk.admin_regenerate_key, account, user)
        return result["user_key"]

    # --- filesystem ---

    def mkdir(self, uri: str) -> None:
        self._call("mkdir", uri, self._sdk.mkdir, uri)

    def ensure_dir(self, uri: str) -> None:
        try:
            self.mkdir(uri)
        except ServerError as exc:
            if "exist" not in str(exc).lower():
                raise

    def write(self, uri: str, content: str, mode: str = "replace", wait: bool = False) -> dict[str, Any]:
        return self._call("write", uri, self._sdk.write, uri, content, mode=mode, wait=wait,
                          options=VECTORS_ONLY)

    def batch_write(self, root_uri: str, files: dict[str, str], mode: str = "replace",
                    wait: bool = True) -> dict[str, Any]:
        ops = [{"uri": uri, "content": content, "mode": mode} for uri, content in files.items()]
        return self._call("batch write", root_uri, self._sdk.batch_write, root_uri, ops, wait=wait,
                          options=VECTORS_ONLY)

    def read(self, uri: str, offset: int = 0, limit: int = -1) -> str:
        return self._call("read", uri, self._sdk.read, uri, offset=offset, limit=limit)

    def rm(self, uri: str, recursive: bool = False) -> None:
        self._call("rm", uri, self._sdk.rm, uri, recursive=recursive)

    def ls(self, uri: str) -> list[Entry]:
        """One folder, not recursive: recursive listings were seen to stop silently part-way."""
        raw = self._call("ls", uri, self._sdk.ls, uri, simple=False, recursive=False, node_limit=100_000)
        items = raw if isinstance(raw, list) else raw.get("items", raw.get("entries", []))
        out = []
        for item in items:
            if isinstance(item, str):
                out.append(Entry(uri=item, is_dir=item.endswith("/")))
            else:
                out.append(Entry(uri=item["uri"].rstrip("/"), is_dir=bool(item.get("isDir", item.get("is_dir"))),
                                 size=item.get("size"), modified=item.get("modTime")))
        return out

    def walk(self, uri: str) -> Iterator[Entry]:
        """Every file under `uri`, folder by folder."""
        stack = [uri.rstrip("/")]
        while stack:
            for entry in self.ls(stack.pop()):
                if entry.is_dir:
                    stack.append(entry.uri)
                else:
                    yield entry

    # --- search ---

    def find(self, query: str, target_uri: str = "", limit: int = 20,
             score_threshold: float | None = None) -> list[dict[str, Any]]:
        options = {"score_threshold": score_threshold} if score_threshold is not None else None
        result = self._call("find", target_uri or None, self._sdk.find, query, target_uri=target_uri,
                            limit=limit, options=options)
        return list(result.get("resources", [])) if isinstance(result, dict) else []

    def grep(self, uri: str, pattern: str, case_insensitive: bool = True, limit: int = 256) -> list[dict]:
        result = self._call("grep", uri, self._sdk.grep, uri, pattern, case_insensitive=case_insensitive,
                            node_limit=limit)
        return list(result.get("matches", [])) if isinstance(result, dict) else list(result or [])

    def glob(self, pattern: str, uri: str = "viking://resources", limit: int = 256) -> list[str]:
        result = self._call("glob", uri, self._sdk.glob, pattern, uri=uri, node_limit=limit)
        return list(result.get("matches", [])) if isinstance(result, dict) else list(result or [])

    def wait(self, timeout: float = 900.0) -> None:
        """Block until the server's queues drain (indexing is asynchronous). Large imports take
        minutes on 2 cores, longer than any sensible per-request timeout, hence its own."""
        self._rest("POST", "/api/v1/system/wait", "wait for indexing", json={}, timeout=timeout)

    # --- ACLs ---

    def acl_get(self, uri: str) -> dict[str, Any]:
        return self._call("acl get", uri, self._sdk.acl_get, uri)

    def acl_set(self, uri: str, entries: list[dict[str, str]], mode: str = "restricted") -> dict[str, Any]:
        return self._call("acl set", uri, self._sdk.acl_set, uri, entries, acl_mode=mode)

    def enable_acl(self, account: str) -> None:
        self._rest("PATCH", f"/api/v1/admin/accounts/{account}/configuration", "enable ACLs",
                   json={"settings": {"acl": {"enabled": True}}})
