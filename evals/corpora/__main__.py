"""`python -m muninn.evals.corpora`: build the corpora, check their questions, run the harness.

    python -m muninn.evals.corpora check [CORPUS ...]     answers unique in each converted tree
    python -m muninn.evals.corpora run [CORPUS ...] --out evals/results

`run` needs the stack up (`muninn up`; MUNINN_CONFIG names it) and writes corpora.md (the tables),
corpora.json (every rank) and corpora.png under --out. Exit 2 on a question set that fails its
check, 4/5 on keyring or server errors (the product's codes).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from muninn.core import config
from muninn.core.errors import ExitCode, MuninnError
from muninn.evals.corpora import harness, report, sources
from muninn.evals.corpora import questions as qmod


def _check(names: list[str], cache: Path | None) -> int:
    bad = 0
    for name in names:
        built = sources.build(name, cache)
        problems = qmod.check(built.tree, built.questions) if built.tree else []
        print(f"{name}: {built.origin}; {len(built.questions.questions)} questions, "
              f"{'ok' if not problems else f'{len(problems)} problem(s)'}")
        for p in problems:
            print(f"  {p}")
        bad += len(problems)
    return ExitCode.BAD_INPUT if bad else ExitCode.OK


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m muninn.evals.corpora", description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["check", "run"])
    ap.add_argument("corpora", nargs="*",
                    help=f"default: {' '.join(sources.DEFAULT)}; all: {' '.join(sources.CORPORA)}")
    ap.add_argument("--cache", type=Path, help="downloads and converted trees (default ~/.cache/muninn/corpora)")
    ap.add_argument("--out", type=Path, default=Path("evals/results"), help="where corpora.md/.json/.png go")
    ap.add_argument("--work", type=Path, help="export folders and keyword indexes (default <cache>/work)")
    ap.add_argument("--variants", nargs="+", choices=list(harness.VARIANTS), help="default: all")
    args = ap.parse_args(argv)
    names = args.corpora or sources.DEFAULT
    try:
        if args.command == "check":
            return _check(names, args.cache)
        if code := _check(names, args.cache):
            return code
        settings = config.load()
        cache = args.cache or sources.cache_dir()
        built = {n: sources.build(n, cache) for n in names}
        runs = harness.run(settings, built, args.work or cache / "work", say=lambda m: print(m, file=sys.stderr),
                           variants=args.variants)
    except MuninnError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return getattr(exc, "exit_code", 1)
    text = report.table(runs)
    report.write_markdown(runs, args.out / "corpora.md", "python -m muninn.evals.corpora run " + " ".join(names))
    report.write_json(runs, args.out / "corpora.json")
    report.plot(runs, args.out / "corpora.png")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
