"""The OpenViking client layer: the SDK's HTTP client, with every server error turned into one
sentence that says which key, which URI, and what to do.

Every reply's shape is checked here. The SDK turns a 200 whose body is not JSON into `{}` (so `ls`
would say an area is empty and a search would drop its vector stage silently): a response hook
refuses such a body, and each method checks that the result has the type it needs. A cut
connection, a 5xx, a timeout and a malformed reply are all ServerError (exit 5), one sentence each.

muninn talks to OpenViking only over HTTP and imports nothing from the server package.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from openviking_sdk import SyncHTTPClient
from openviking_sdk import errors as ov_errors

from muninn.core import credentials
from muninn.core.config import Settings
from muninn.core.errors import AuthError, NotFound, ServerBadReply, ServerBusy, ServerDown, ServerError, ServerSlow

VECTORS_ONLY = {"processing_mode": "vectors_only"}


class _BadReply(Exception):
    """A successful status with a body that is not a JSON object (or has no result): raised inside
    the SDK's request (a response hook) so the SDK cannot turn it into `{}`; `_call` makes it a
    ServerError."""

    def __init__(self, status: int, body: bytes) -> None:
        text = _brief(body.decode(errors="replace"))
        super().__init__(f"HTTP {status} with a body that is not a JSON object or has no result: {text!r}")


def _brief(text: str, limit: int = 160) -> str:
    """Server text inside our one sentence: one line, cut short (an HTML error page is many lines)."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[:limit] + "…"


def _json_object(status: int, body: bytes) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except ValueError:
        raise _BadReply(status, body) from None
    if not isinstance(data, dict):
        raise _BadReply(status, body)
    return data


# Endpoints whose answer is the result itself: the SDK reads a null there as an empty listing,
# an empty text or a batch with nothing confirmed, so it is refused before the SDK sees it.
_RESULT_REQUIRED = ("/api/v1/fs/ls", "/api/v1/content/read", "/api/v1/content/batch-write",
                    "/api/v1/search/find", "/api/v1/search/grep", "/api/v1/search/glob")


async def _require_json(response: httpx.Response) -> None:
    if response.is_success:
        await response.aread()
        data = _json_object(response.status_code, response.content)
        if response.request.url.path in _RESULT_REQUIRED and data.get("result") is None:
            raise _BadReply(response.status_code, response.content)


@dataclass(frozen=True)
class Entry:
    uri: str
    is_dir: bool
    size: int | None = None
    modified: str | None = None   # the server's modTime: with size, what an incremental walk compares

    @property
    def stamp(self) -> str | None:
        """What the listing says about a file: unchanged size and modTime mean unchanged content
        (None for a listing without modTime: such a file is always read)."""
        return f"{self.size}:{self.modified}" if self.modified is not None else None


class OpenViking:
    """One identity (a root key or a user key) talking to one server."""

    def __init__(self, url: str, api_key: str, key_name: str = "api key", timeout: float = 60.0,
                 headers: dict[str, str] | None = None) -> None:
        """`headers`: sent with every call (a trusted-mode server reads the caller's identity from them)."""
        self.url = url.rstrip("/")
        self.key_name = key_name
        self.timeout = timeout
        self._api_key = api_key
        self._headers = dict(headers or {})
        self._sdk = SyncHTTPClient(url=self.url, api_key=api_key, timeout=timeout, extra_headers=self._headers,
                                   event_hooks={"response": [_require_json]})
        self._http = httpx.Client(base_url=self.url, headers={"X-API-Key": api_key, **self._headers},
                                  timeout=timeout)
        self._ready = False

    # --- construction from settings ---

    @classmethod
    def root(cls, settings: Settings) -> OpenViking:
        ring = credentials.for_server(settings)
        key = ring.require(credentials.root_key_name(),
                           fix=f"store that server's root key with `muninn server key --url {settings.server.url}`"
                           if settings.server.url else "run `muninn up` to create the local stack")
        return cls(settings.server.base_url, key, key_name=credentials.root_key_name(),
                   timeout=settings.server.timeout)

    @classmethod
    def user(cls, settings: Settings, account: str | None = None, user: str | None = None) -> OpenViking:
        account = account or settings.openviking.account
        user = user or settings.openviking.user
        name = credentials.user_key_name(account, user)
        ring = credentials.for_server(settings)
        key = ring.require(name, fix="run `muninn up` (the CLI's own user) or `muninn policy apply` "
                                     "(the readers in policy.yaml)")
        return cls(settings.server.base_url, key, key_name=name, timeout=settings.server.timeout)

    def with_timeout(self, timeout: float) -> OpenViking:
        """The same identity with another per-call limit (a search's vector call has its own)."""
        return OpenViking(self.url, self._api_key, key_name=self.key_name, timeout=timeout, headers=self._headers)

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
            with self._transport(what, uri):
                if not self._ready:
                    self._sdk.initialize()
                    self._ready = True
                return fn(*args, **kwargs)
        except _BadReply as exc:
            raise self._bad(what, uri, str(exc)) from None
        except ov_errors.NotFoundError:
            raise NotFound(f"{what}: {uri} does not exist on {self.url}", status=404, uri=uri) from None
        except (ov_errors.UnauthenticatedError, ov_errors.PermissionDeniedError) as exc:
            raise self._auth(what, uri, str(exc)) from None
        except ov_errors.ConflictError as exc:
            raise ServerBusy(f"{what}{f' {uri}' if uri else ''} refused by {self.url}: {_brief(exc.message)}",
                             uri=uri, fix="another write is still being indexed there; retry in a minute") from None
        except ov_errors.OpenVikingError as exc:
            raise ServerError(f"{what}{f' {uri}' if uri else ''} failed: {_brief(exc.message)} ({exc.code})",
                              uri=uri, code=exc.code) from None

    @contextmanager
    def _transport(self, what: str, uri: str | None) -> Iterator[None]:
        """httpx's transport failures as sentences, for the SDK's calls and the REST ones alike."""
        try:
            yield
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise self._down(exc) from None
        except httpx.TimeoutException:
            raise self._slow(what, uri) from None
        except httpx.TransportError as exc:
            raise self._cut(what, uri, exc) from None

    def _down(self, exc: Exception) -> ServerDown:
        return ServerDown(f"OpenViking is not reachable at {self.url}",
                          fix="start it with `muninn up`, or check server.url / server.port in muninn.yaml")

    def _slow(self, what: str, uri: str | None) -> ServerSlow:
        return ServerSlow(f"{what}{f' {uri}' if uri else ''} timed out waiting for {self.url}",
                           uri=uri, fix="the server is busy or stuck: see its log (`muninn status`), then retry")

    def _cut(self, what: str, uri: str | None, exc: Exception) -> ServerError:
        return ServerError(f"the connection to {self.url} broke during {what}{f' {uri}' if uri else ''} "
                           f"({type(exc).__name__})", uri=uri,
                           fix="the server stopped or restarted: rerun once `muninn status` says it is healthy; "
                               "a rerun of sync converges")

    def _bad(self, what: str, uri: str | None, detail: str) -> ServerBadReply:
        return ServerBadReply(f"{self.url} answered {what}{f' {uri}' if uri else ''} with a malformed reply: {detail}",
                           uri=uri, fix="check that server.url points at OpenViking (not a proxy page) and see "
                                        "the server log")

    def _expect(self, what: str, uri: str | None, value: Any, *types: type) -> Any:
        """The result the SDK unpacked, if it has a type this call can use: never read a wrong
        shape as an empty answer."""
        if not isinstance(value, types):
            raise self._bad(what, uri, f"expected {' or '.join(t.__name__ for t in types)}, "
                                       f"got {_brief(repr(value), 80)}")
        return value

    def _auth(self, what: str, uri: str | None, detail: str) -> AuthError:
        where = f" on {uri}" if uri else ""
        return AuthError(f"{what}{where} refused for key {self.key_name!r}: {_brief(detail)}",
                         uri=uri, fix="check the key in the keyring and the ACLs in policy.yaml")

    def _rest(self, method: str, path: str, what: str, uri: str | None = None, **kwargs) -> Any:
        """For the few endpoints the SDK lacks or shapes differently."""
        with self._transport(what, uri):
            resp = self._http.request(method, path, **kwargs)
        if resp.status_code in (401, 403):
            raise self._auth(what, uri, resp.text)
        if resp.status_code == 404:
            raise NotFound(f"{what}: {uri or path} does not exist on {self.url}", status=404, uri=uri)
        if resp.status_code >= 400:
            raise ServerError(f"{what} failed with HTTP {resp.status_code}: {_brief(resp.text)}",
                              status=resp.status_code, uri=uri)
        try:
            body = _json_object(resp.status_code, resp.content)
        except _BadReply as exc:
            raise self._bad(what, uri, str(exc)) from None
        return body.get("result", body)

    # --- health and admin ---

    def health(self, timeout: float = 5.0) -> dict[str, Any]:
        with self._transport("health", None):
            resp = self._http.get("/health", timeout=timeout)
        try:
            return _json_object(resp.status_code, resp.content)
        except _BadReply as exc:
            raise self._bad("health", None, str(exc)) from None

    def create_account(self, account: str, admin_user: str) -> str:
        """Returns the admin user's key."""
        result = self._call("create account", None, self._sdk.admin_create_account, account, admin_user)
        return self._key(result, "create account")

    def list_accounts(self) -> list[dict[str, Any]]:
        accounts = self._expect("list accounts", None, self._call("list accounts", None, self._sdk.admin_list_accounts),
                                list)
        return [a for a in accounts if isinstance(a, dict)]

    def account_exists(self, account: str) -> bool:
        return account in {a.get("account_id") for a in self.list_accounts()}

    def register_user(self, account: str, user: str, role: str = "user") -> str:
        result = self._call("register user", None, self._sdk.admin_register_user, account, user, role)
        return self._key(result, "register user")

    def list_users(self, account: str) -> list[str]:
        users = self._expect("list users", None, self._call("list users", None, self._sdk.admin_list_users, account),
                             list)
        return [u.get("user_id") for u in users if isinstance(u, dict)]

    def regenerate_key(self, account: str, user: str) -> str:
        result = self._call("regenerate key", None, self._sdk.admin_regenerate_key, account, user)
        return self._key(result, "regenerate key")

    def _key(self, result: Any, what: str) -> str:
        key = self._expect(what, None, result, dict).get("user_key")
        return self._expect(what, None, key, str)

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
        result = self._call("batch write", root_uri, self._sdk.batch_write, root_uri, ops, wait=wait,
                            options=VECTORS_ONLY)
        # A reply without a dict must not confirm the batch (sync records what is confirmed).
        return self._expect("batch write", root_uri, result, dict)

    def read(self, uri: str, offset: int = 0, limit: int = -1) -> str:
        return self._expect("read", uri, self._call("read", uri, self._sdk.read, uri, offset=offset, limit=limit), str)

    def rm(self, uri: str, recursive: bool = False) -> None:
        self._call("rm", uri, self._sdk.rm, uri, recursive=recursive)

    def ls(self, uri: str) -> list[Entry]:
        """One folder, not recursive: recursive listings were seen to stop silently part-way."""
        raw = self._expect("ls", uri, self._call("ls", uri, self._sdk.ls, uri, simple=False, recursive=False,
                                                 node_limit=100_000), list, dict)
        items = raw if isinstance(raw, list) else raw.get("items", raw.get("entries"))
        items = self._expect("ls", uri, items, list)
        out = []
        for item in items:
            if isinstance(item, str):
                out.append(Entry(uri=item, is_dir=item.endswith("/")))
            elif not isinstance(item, dict) or not isinstance(item.get("uri"), str):
                raise self._bad("ls", uri, f"an entry without a uri: {_brief(repr(item), 80)}")
            else:
                out.append(Entry(uri=item["uri"].rstrip("/"), is_dir=bool(item.get("isDir", item.get("is_dir"))),
                                 size=item.get("size"), modified=item.get("modTime")))
        return out

    def is_folder(self, uri: str) -> bool:
        """Whether `uri` lists as a folder: what a read the server refused was given instead of a file."""
        try:
            self.ls(uri)
        except ServerError:
            return False
        return True

    def walk(self, uri: str, into: Callable[[str], bool] | None = None) -> Iterator[Entry]:
        """Every file under `uri`, folder by folder; a folder `into` refuses is not listed (a reader's walk
        passes over a nested area it may not read instead of failing on the server's refusal)."""
        stack = [uri.rstrip("/")]
        while stack:
            for entry in self.ls(stack.pop()):
                if entry.is_dir:
                    if into is None or into(entry.uri):
                        stack.append(entry.uri)
                else:
                    yield entry

    # --- search ---

    def find(self, query: str, target_uri: str = "", limit: int = 20,
             score_threshold: float | None = None) -> list[dict[str, Any]]:
        options = {"score_threshold": score_threshold} if score_threshold is not None else None
        result = self._call("find", target_uri or None, self._sdk.find, query, target_uri=target_uri,
                            limit=limit, options=options)
        result = self._expect("find", target_uri or None, result, dict)
        return list(self._expect("find", target_uri or None, result.get("resources", []), list))

    def grep(self, uri: str, pattern: str, case_insensitive: bool = True, limit: int = 256) -> list[dict]:
        result = self._call("grep", uri, self._sdk.grep, uri, pattern, case_insensitive=case_insensitive,
                            node_limit=limit)
        result = self._expect("grep", uri, result, dict, list)
        return list(self._expect("grep", uri, result.get("matches", []), list) if isinstance(result, dict) else result)

    def glob(self, pattern: str, uri: str = "viking://resources", limit: int = 256) -> list[str]:
        result = self._expect("glob", uri, self._call("glob", uri, self._sdk.glob, pattern, uri=uri, node_limit=limit),
                              dict, list)
        return list(self._expect("glob", uri, result.get("matches", []), list) if isinstance(result, dict) else result)

    def wait(self, timeout: float = 900.0) -> None:
        """Block until the server's queues drain (indexing is asynchronous). Large imports take
        minutes on 2 cores, longer than any sensible per-request timeout, hence its own."""
        self._rest("POST", "/api/v1/system/wait", "wait for indexing", json={}, timeout=timeout)

    def reindex(self, uri: str, force: bool = True, timeout: float = 3600.0) -> dict[str, Any]:
        """Re-embed everything under `uri` with the server's configured model, and wait for it."""
        return self._expect("reindex", uri, self._rest("POST", "/api/v1/content/reindex", "reindex", uri,
                                                         json={"uri": uri, "force": force, "wait": True},
                                                         timeout=timeout), dict)

    # --- ACLs ---

    def acl_get(self, uri: str) -> dict[str, Any]:
        return self._call("acl get", uri, self._sdk.acl_get, uri)

    def acl_set(self, uri: str, entries: list[dict[str, str]], mode: str = "restricted") -> dict[str, Any]:
        return self._call("acl set", uri, self._sdk.acl_set, uri, entries, acl_mode=mode)

    def enable_acl(self, account: str) -> None:
        self._rest("PATCH", f"/api/v1/admin/accounts/{account}/configuration", "enable ACLs",
                   json={"settings": {"acl": {"enabled": True}}})
