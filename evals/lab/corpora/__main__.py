"""`python -m muninn.evals.lab.corpora`: build the corpora, check their questions, run the harness.

    python -m muninn.evals.lab.corpora check [CORPUS ...]     answers unique in each converted tree
    python -m muninn.evals.lab.corpora run [CORPUS ...] --out evals/results
    python -m muninn.evals.lab.corpora report RUN.json ... --out evals/results   (merge runs made apart)

`run` needs the stack up (`muninn up`; MUNINN_CONFIG names it) and writes corpora.md (the tables),
corpora.json (every rank) and corpora.png under --out; it exits 1 when the defaults lose to the best single
retriever or plain baseline (dense with each --baselines model, BM25) at hit@4 or hit@10 on any corpus by more
than one question (the gate). Exit 2 on a question set that fails its check, 4/5 on keyring or server errors, 6
when a baseline's model is not on disk (the product's codes; the sentence says how to fetch it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from muninn.core import config
from muninn.core.errors import ExitCode, MuninnError
from muninn.evals.lab.corpora import baselines, harness, report, sources
from muninn.evals.lab.corpora import questions as qmod


def _check(names: list[str], cache: Path | None, options: dict | None = None) -> tuple[int, dict[str, sources.Built]]:
    """Build each corpus and check its answers; (exit code, the built corpora)."""
    bad = 0
    out = {}
    for name in names:
        built = out[name] = sources.build(name, cache, options)
        problems = qmod.check(built.tree, built.questions) if built.tree else []
        verdict = "ok" if not problems else f"{len(problems)} problem(s)"
        print(f"{name}: {built.origin}; {len(built.questions.questions)} questions, {verdict}", flush=True)
        for p in problems:
            print(f"  {p}")
        bad += len(problems)
    return (ExitCode.BAD_INPUT if bad else ExitCode.OK), out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m muninn.evals.lab.corpora", description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["check", "run", "report"])
    ap.add_argument("corpora", nargs="*",
                    help=f"default: {' '.join(sources.DEFAULT)}; all: {' '.join(sources.CORPORA)}")
    ap.add_argument("--cache", type=Path, help="downloads and converted trees (default ~/.cache/muninn/corpora)")
    ap.add_argument("--out", type=Path, default=Path("evals/results"), help="where corpora.md/.json/.png go")
    ap.add_argument("--work", type=Path, help="export folders and keyword indexes (default <cache>/work)")
    # Named without their leading dashes here ("no-rerank"): argparse would read "--no-rerank" as an option.
    bare = {v.lstrip("-"): v for v in harness.VARIANTS}
    ap.add_argument("--variants", nargs="+", choices=list(bare), help="default: all")
    ap.add_argument("--trace", type=Path, help="also record every question's candidates and scores here "
                    "(CORPUS.jsonl), for `python -m muninn.evals.lab.corpora.replay`")
    ap.add_argument("--sample", type=int, help="at most this many questions per corpus, evenly spaced (the "
                    "report says how many ran)")
    ap.add_argument("--option", action="append", default=[], metavar="KIND.OPTION=VALUE",
                    help="an exporter option for every source of that kind, as muninn.yaml would set it "
                    "(e.g. notes.max_chars=800); the report names it")
    ap.add_argument("--baselines", nargs="+", default=list(baselines.DEFAULT_MODELS), metavar="MODEL",
                    help=f"a plain dense baseline with each (known: {' '.join(baselines.MODELS)}, or any "
                    f"embed.model value); default: {' '.join(baselines.DEFAULT_MODELS)}")
    args = ap.parse_args(argv)
    if args.command == "report":
        runs = [r for f in args.corpora for r in report.read_json(Path(f))]
        report.write_all(runs, args.out, "python -m muninn.evals.lab.corpora run " + " ".join(r.name for r in runs))
        print(report.table(runs))
        return ExitCode.CHECK_FAILED if report.gate(runs) else ExitCode.OK
    names = args.corpora or sources.DEFAULT
    command = "python -m muninn.evals.lab.corpora run " + " ".join(names + [f"--option {o}" for o in args.option]
                                                                   + ["--baselines", *args.baselines])
    try:
        cache = args.cache or sources.cache_dir()
        code, built = _check(names, cache, sources.parse_options(args.option))
        if code or args.command == "check":
            return code
        settings = config.load()
        if args.sample:
            for b in built.values():
                qs = b.questions.questions
                step = max(len(qs) / args.sample, 1.0)
                b.questions.questions = [qs[int(i * step)] for i in range(min(args.sample, len(qs)))]
        runs = harness.run(settings, built, args.work or cache / "work", say=lambda m: print(m, file=sys.stderr),
                           variants=[bare[v] for v in args.variants or bare], trace_dir=args.trace,
                           on_done=lambda so_far: report.write_all(so_far, args.out, command),
                           dense_models=args.baselines)
    except MuninnError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return getattr(exc, "exit_code", ExitCode.CHECK_FAILED)
    print(report.table(runs))
    # The find issue's gate: the defaults at least as good as the best single retriever or plain baseline.
    return ExitCode.CHECK_FAILED if report.gate(runs) else ExitCode.OK


if __name__ == "__main__":
    sys.exit(main())
