"""How well guards/command/risky.py tells risky shell commands from ordinary ones.

    python -m muninn.evals.lab.risky_commands [--write]

Three sets: the hand-written ORDINARY and RISKY lists of risky_cases.py, and the Bash commands recorded in
the repo (examples/observations.jsonl, the hook payloads of tests/ and evals/lab/), labelled by hand below.
Prints precision, recall, the false positives on ordinary work and the misses; --write puts the table in
evals/results/risky_commands.md.
"""

from __future__ import annotations

import argparse
import ast
import json
import time
from pathlib import Path

from muninn.evals.lab.risky_cases import HELD_OUT_ORDINARY, HELD_OUT_RISKY, ORDINARY, RISKY
from muninn.guards.command.risky import classify

ROOT = Path(__file__).resolve().parents[2]
RESULT = ROOT / "evals" / "results" / "risky_commands.md"
# The recorded commands that act; every other recorded command only reads (checked by hand).
RECORDED_RISKY = {"git push origin main", "sudo apt-get install -y jq"}


def recorded() -> list[str]:
    """Bash commands of the observation example and of the hook payloads the tests and the lab send."""
    found: list[str] = []
    for line in (ROOT / "examples" / "observations.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row.get("tool") == "Bash" and isinstance(row.get("input"), str):
            found.append(row["input"])
    for path in [*sorted((ROOT / "tests").glob("test_*.py")), *sorted((ROOT / "evals" / "lab").glob("*.py"))]:
        text = path.read_text()
        if "tool_input" not in text and "_payload(" not in text:
            continue
        for node in ast.walk(ast.parse(text)):
            # {"command": "..."} inside a tool_input, and _payload(command="...") in test_observe.py
            if isinstance(node, ast.Dict):
                for k, v in zip(node.keys, node.values, strict=True):
                    if isinstance(k, ast.Constant) and k.value == "command" and isinstance(v, ast.Constant) \
                            and isinstance(v.value, str):
                        found.append(v.value)
            if isinstance(node, ast.keyword) and node.arg == "command" and isinstance(node.value, ast.Constant) \
                    and isinstance(node.value.value, str) and path.name.startswith("test_observe"):
                found.append(node.value.value)
    return sorted(set(found))


def measure(held_out: bool = False) -> dict:
    """One split: the lists written with the classifier (and the recorded commands), or the held-out ones."""
    if held_out:
        sets = {"ordinary (held out)": [(c, False) for c in HELD_OUT_ORDINARY],
                "risky (held out)": [(c, True) for c in HELD_OUT_RISKY]}
    else:
        sets = {"ordinary (hand-written)": [(c, False) for c in ORDINARY],
                "risky (hand-written)": [(c, True) for c in RISKY],
                "recorded in the repo": [(c, c in RECORDED_RISKY) for c in recorded()]}
    out: dict = {"sets": {}, "fp": [], "fn": []}
    tp = fp = fn = tn = 0
    spent = []
    for name, cases in sets.items():
        flagged = 0
        for command, risky in cases:
            t = time.perf_counter()
            risk = classify(command)
            spent.append(time.perf_counter() - t)
            flagged += risk is not None
            if risk is not None and risky:
                tp += 1
            elif risk is not None:
                fp += 1
                out["fp"].append((command, risk.why))
            elif risky:
                fn += 1
                out["fn"].append(command)
            else:
                tn += 1
        out["sets"][name] = (len(cases), flagged)
    spent.sort()
    out.update(tp=tp, fp_n=fp, fn_n=fn, tn=tn, precision=tp / max(tp + fp, 1), recall=tp / max(tp + fn, 1),
               fp_rate=fp / max(fp + tn, 1), median_us=spent[len(spent) // 2] * 1e6,
               p95_us=spent[int(len(spent) * 0.95)] * 1e6)
    return out


def _numbers(r: dict) -> str:
    return (f"precision {r['precision']:.3f} ({r['tp']} of {r['tp'] + r['fp_n']} called risky are), recall "
            f"{r['recall']:.3f} ({r['tp']} of {r['tp'] + r['fn_n']} risky found); false positives on ordinary "
            f"work: {r['fp_n']} of {r['fp_n'] + r['tn']} ({100 * r['fp_rate']:.1f} %)")


def render(r: dict, h: dict) -> str:
    rows = "\n".join(f"| {name} | {n} | {flagged} |" for x in (r, h) for name, (n, flagged) in x["sets"].items())
    fps = "\n".join(f"- `{c}`: {why}" for x in (r, h) for c, why in x["fp"]) or "- none"
    fns = "\n".join(f"- `{c}`" for x in (r, h) for c in x["fn"]) or "- none"
    return f"""# Risky shell commands: the classifier's precision and recall

`python -m muninn.evals.lab.risky_commands --write` (guards/command/risky.py over evals/lab/risky_cases.py
and the Bash commands recorded in the repo). The hook that asks memory before a risky command
(plugins/mcp/risky_hook.py) acts only on what this calls risky; a false positive costs one search
(informs, never blocks), a miss costs the reminder.

| set | commands | called risky |
| --- | ---: | ---: |
{rows}

- Lists written together with the classifier (so tuned on: an upper bound) and the recorded commands:
  {_numbers(r)}.
- Held out (HELD_OUT_* in risky_cases.py, written after the classifier was frozen, never tuned against):
  {_numbers(h)}. These are the numbers to expect on new work.
- classify() per command: median {r['median_us']:.0f} µs, p95 {r['p95_us']:.0f} µs (one process, warm).

What "ordinary" holds: a day of operations work that only looks (files, repos, clusters, services,
databases, clouds, HTTP GETs, `terraform plan`, `psql -c 'select…'`), plus the everyday local writes a
session makes without a second thought (`git commit`, `mkdir -p`, `pip install -r`, `docker build`,
`rm /tmp/x`, `echo > /tmp/out`): calling those risky would make the hook noise. What counts as risky:
writes outside the project (system paths, devices, remote state), deletes, restarts, deploys and
publishes (including a plain `git push` and `make deploy`), credential changes, and any of them under
sudo, in a chain, a pipeline, a substitution, `bash -c`, `ssh HOST CMD`, `kubectl exec --` or `find -exec`.

False positives (all sets):
{fps}

Misses (all sets):
{fns}

Known limits: a script's or a Makefile target's content is not read (only its name: `deploy.sh`,
`make deploy`); SQL in a file passed with `psql -f` counts as risky unread; `pip install`/`npm ci` and
`docker compose up` are ordinary development here, `apt install` is risky (it changes the machine).
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true")
    text = render(measure(), measure(held_out=True))
    if parser.parse_args().write:
        RESULT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
