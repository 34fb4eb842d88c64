"""`muninn doctor`: are the reranker's weights there? Missing weights are a warning, not a
failure: searches still work by fusion, and say so in every result."""

from __future__ import annotations

from muninn.core.checks import Check
from muninn.core.config import Settings
from muninn.plugins.search import keyword, rerank


def reranker_weights(settings: Settings) -> list[Check]:
    cfg = settings.search.rerank
    if not cfg.enabled:
        return [Check("reranker", "ok", "switched off (search.rerank.enabled: false)")]
    problems: list[str] = []
    damaged: list[rerank.RerankDamaged] = []
    for model in [cfg.model, *cfg.fallbacks]:
        try:
            where = rerank.resolve(model)
        except rerank.RerankUnavailable as exc:
            problems.append(exc.message)
            if isinstance(exc, rerank.RerankDamaged):
                damaged.append(exc)
            continue
        detail = f"{model} -> {where}"
        if problems:
            detail += f" (fallback: {'; '.join(problems)})"
        # Absent weights are the normal offline case; fetched weights that changed are the owner's to fix.
        if damaged:
            return [Check("reranker", "warn", detail, "; ".join(d.fix or "" for d in damaged))]
        return [Check("reranker", "ok", detail)]
    return [Check("reranker", "warn", f"{'; '.join(problems)}; searches fall back to fusion order "
                         "and say so", rerank._FIX)]


def keyword_index(settings: Settings) -> list[Check]:
    path = settings.paths.search_index()
    if path.exists():
        # Every page, not only the header: a damaged index would otherwise answer "nothing found".
        if problem := keyword.quick_check(path):
            return [Check("keyword index", "fail", f"{path} is damaged ({problem}): searches run vector-only",
                          "run `muninn search-index --rebuild`")]
        return [Check("keyword index", "ok", f"{path} (quick_check ok)")]
    return [Check("keyword index", "warn", f"{path} missing: searches run vector-only and say so",
                         "run `muninn search-index`")]


def second_model(settings: Settings) -> list[Check]:
    """The second embedder (embed.second_model): are its weights here, and does the running sidecar serve it?"""
    second = settings.embed.second if settings.search.second_weight else None
    if second is None:
        why = "embed.url is an outside endpoint" if settings.embed.url else "search.second_weight 0 or " \
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
