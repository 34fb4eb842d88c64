"""What does OpenViking embed for a fact file? Measured, not read off the docs.

    python -m muninn.evals.lab.corpora.embed_probe EXPORT_DIR [--sample 40]

1. Token budget, over every fact file under EXPORT_DIR, with the sidecar's own tokenizer: how many
   of its `embed.max_tokens` word pieces the front matter and the lead line take, and how many
   facts lose part of their body past the cut. (The output still labels the lead line `context line`,
   the name evals/results/corpora.md quotes.)
2. Which text the stored vector is: a sample of the files is written into a fresh account, then
   OpenViking `find` is asked with four candidate texts of each file. The score it returns for that
   file is the cosine between the stored vector and the query's vector; a score of 1.000 names the
   text that was embedded.
"""

from __future__ import annotations

import argparse
import json
import statistics
import uuid
from pathlib import Path

from tokenizers import Tokenizer

from muninn.core import config
from muninn.core.client import OpenViking
from muninn.export.facts import parse_front_matter
from muninn.plugins.embed.model import model_path


def split_file(text: str) -> dict[str, str]:
    """The candidate texts of one rendered fact file."""
    meta, rest = parse_front_matter(text)
    head, _, body = rest.partition("\n\n")          # the lead line, then the body
    front = text[: len(text) - len(rest)]
    crumb = str(meta.get("breadcrumb") or "")
    return {"whole file": text, "front matter": front, "context line": head, "body": body.strip(),
            "no front matter": rest, "breadcrumb + body": f"{crumb}\n{body.strip()}"}


def token_budget(files: list[Path], tok: Tokenizer, window: int) -> dict[str, float]:
    front, ctx, body, cut, lost, parts = [], [], [], 0, [], 0
    for f in files:
        p = split_file(f.read_text())
        n_front = len(tok.encode(p["front matter"]).ids)
        n_ctx = len(tok.encode(p["context line"]).ids)
        n_body = len(tok.encode(p["body"]).ids)
        front.append(n_front)
        ctx.append(n_ctx)
        body.append(n_body)
        room = max(window - n_front - n_ctx, 0)
        if n_body > room:
            cut += 1
            lost.append((n_body - room) / max(n_body, 1))
        parts += "(part " in p["front matter"]
    n = max(len(files), 1)
    return {"files": len(files), "window": window, "front matter tokens (median)": statistics.median(front),
            "context line tokens (median)": statistics.median(ctx), "body tokens (median)": statistics.median(body),
            "body tokens left for the body (median)": window - statistics.median(front) - statistics.median(ctx),
            "share of facts whose body is cut": round(cut / n, 3),
            "body share lost when cut (median)": round(statistics.median(lost), 3) if lost else 0.0,
            "share of facts that are part-N splits": round(parts / n, 3)}


def stored_text(files: list[Path], settings: config.Settings) -> dict[str, dict[str, float]]:
    """Per candidate text: the median and min score `find` gives the file when asked with it."""
    root = OpenViking.root(settings)
    account = f"probe{uuid.uuid4().hex[:8]}"
    try:
        key = root.create_account(account, "owner")
    finally:
        root.close()
    area = f"viking://resources/probe/{account}"
    scores: dict[str, list[float]] = {}
    with OpenViking(settings.server.base_url, key, key_name=account) as client:
        client.ensure_dir("viking://resources/probe")
        client.ensure_dir(area)
        names = {f"{area}/f{i:03d}.md": f.read_text() for i, f in enumerate(files)}
        client.batch_write(area, names, wait=True)
        client.wait()
        for uri, text in names.items():
            for label, q in split_file(text).items():
                if label in ("front matter", "context line") or not q.strip():
                    continue
                got = {str(h.get("uri", "")).rstrip("/"): float(h.get("score", 0.0))
                       for h in client.find(q, target_uri=area, limit=len(names))}
                scores.setdefault(label, []).append(got.get(uri, 0.0))
    return {k: {"median": round(statistics.median(v), 4), "min": round(min(v), 4), "n": len(v)}
            for k, v in scores.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("exports", type=Path, help="a folder of fact files (what `muninn export` wrote)")
    ap.add_argument("--sample", type=int, default=40)
    ap.add_argument("--budget-only", action="store_true", help="only the token budget (no server needed)")
    args = ap.parse_args()
    settings = config.load()
    files = sorted(p for p in args.exports.rglob("*.md") if not any(s.startswith(".") for s in p.parts))
    tok = Tokenizer.from_file(str(model_path(settings.embed) / "tokenizer.json"))
    tok.no_truncation()
    out = {"model": settings.embed.model, "budget": token_budget(files, tok, settings.embed.max_tokens)}
    step = max(len(files) // args.sample, 1)
    if not args.budget_only:
        out["find score by query text (1.000 = the stored text)"] = stored_text(files[::step][: args.sample],
                                                                                settings)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
