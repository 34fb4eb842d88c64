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

