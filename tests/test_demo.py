"""`muninn demo` end to end on the test stack: what `make demo` runs on the default ports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(scope="module")
def demo_config(stack, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """The sample's config on the test stack, its exports in a folder of their own."""
    tmp_path = tmp_path_factory.mktemp("demo")
    cfg = yaml.safe_load((EXAMPLES / "muninn.yaml").read_text())
    cfg["guard"]["policy"] = str(EXAMPLES / cfg["guard"]["policy"])
    cfg["vault"]["files"] = [str(EXAMPLES / f) for f in cfg["vault"]["files"]]
    cfg["inventory"]["files"] = [str(EXAMPLES / f) for f in cfg["inventory"]["files"]]
    for source in cfg["sources"]:
        source["path"] = str(EXAMPLES / source["path"])
    base = yaml.safe_load(stack.config_path.read_text())
    cfg.update({k: base[k] for k in ("home", "server", "embed", "keyring")})
    cfg["export"] = {"out": str(tmp_path / "exports")}
    path = tmp_path / "muninn.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path, cfg


def test_demo_runs_end_to_end_and_leaks_nothing(stack, demo_config: tuple[Path, dict]) -> None:
    path, _ = demo_config
    out = stack.cli("--config", str(path), "demo", timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    text = out.stdout + out.stderr
    assert "demo done: hit@4" in text
    assert "viking://resources/" in text and "log" in text.lower()  # the guarded search printed hits
    for line in text.splitlines():  # a hit's breadcrumb does not repeat its title
        parts = [p.strip() for p in line.split(" › ")]
        assert len(parts) < 2 or parts[-1] != parts[-2], line
    entries = yaml.safe_load((EXAMPLES / "secrets.yaml").read_text())
    values = [e["value"] for e in entries if "value" in e]
    values += [v for e in entries for v in (e.get("parts") or {}).values() if len(str(v)) >= 10]
    assert values and not [v for v in values if v in text]

    again = stack.cli("--config", str(path), "eval", "--json", "--label", "again", timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    summary = json.loads(again.stdout)
    assert summary["questions"] == 24 and summary["hit@4"] >= 18
    assert "→" in again.stderr or "no question changed rank" in again.stderr  # compared with the demo's run
    assert summary["regressed"] is None


def test_eval_as_a_reader_through_the_guard(stack, demo_config: tuple[Path, dict], tmp_path: Path) -> None:
    path, _ = demo_config
    # Every third question of the sealed set: the demo test runs all 24 directly.
    qs = yaml.safe_load((EXAMPLES.parent / "evals" / "questions" / "ops.yaml").read_text())
    qs["name"], qs["questions"] = "guarded-look", qs["questions"][::3]
    qset = tmp_path / "guarded-look.yaml"
    qset.write_text(yaml.safe_dump(qs))
    direct = stack.cli("--config", str(path), "eval", "--set", str(qset), "--json", timeout=600)
    assert direct.returncode == 0, direct.stderr[-2000:]
    summary = json.loads(direct.stdout)
    # As a reader, through a real MCP client and the guard: the owner reads every area, so the same
    # questions land on the same files.
    guarded = stack.cli("--config", str(path), "eval", "--set", str(qset), "--json", "--profile", "owner",
                        timeout=600)
    assert guarded.returncode == 0, guarded.stderr[-2000:]
    as_owner = json.loads(guarded.stdout)
    assert as_owner["set"].endswith("@owner") and as_owner["questions"] == summary["questions"] == 8
    assert as_owner["hit@4"] == summary["hit@4"] >= 6


def test_eval_exits_16_when_it_loses_to_the_last_run(stack, demo_config: tuple[Path, dict], tmp_path: Path) -> None:
    path, cfg = demo_config
    # A set of its own (so the stack's ops history is untouched) with one question nothing answers:
    # no run of it can be perfect, so a perfect "last run" is always better.
    qs = yaml.safe_load((EXAMPLES.parent / "evals" / "questions" / "ops.yaml").read_text())
    qs["name"], qs["questions"] = "gate-test", qs["questions"][:3]
    qs["questions"].append({"id": "unanswerable", "question": "what colour is the moon's second door",
                            "expect": ["no/such/file.md"]})
    qset = tmp_path / "gate-test.yaml"
    qset.write_text(yaml.safe_dump(qs))
    first = stack.cli("--config", str(path), "eval", "--set", str(qset), "--json", "--save", timeout=600)
    assert first.returncode == 0, first.stderr[-2000:]          # nothing to lose to yet
    (run,) = (Path(cfg["home"]) / "evals").glob("gate-test-*.json")
    best = json.loads(run.read_text())
    for o in best["outcomes"]:
        o["rank"] = 1
    (run.parent / "gate-test-29991231T235959.json").write_text(json.dumps(best))     # sorts last
    lost = stack.cli("--config", str(path), "eval", "--set", str(qset), "--json", timeout=600)
    assert lost.returncode == 16, lost.stderr[-2000:]
    assert "lost to its last run" in lost.stderr and "MRR fell from 1.000" in lost.stderr
    assert "Traceback" not in lost.stderr and json.loads(lost.stdout)["regressed"]
    allowed = stack.cli("--config", str(path), "eval", "--set", str(qset), "--json", "--max-drop", "25",
                        "--max-mrr-drop", "1", timeout=600)
    assert allowed.returncode == 0, allowed.stderr[-2000:]


def test_a_json_run_is_not_kept_unless_saved(stack, demo_config: tuple[Path, dict], tmp_path: Path) -> None:
    """`eval --json | jq` is a look, not a baseline: it leaves the history as it was; --save keeps it."""
    path, cfg = demo_config
    qs = yaml.safe_load((EXAMPLES.parent / "evals" / "questions" / "ops.yaml").read_text())
    qs["name"], qs["questions"] = "json-look", qs["questions"][:3]
    qset = tmp_path / "json-look.yaml"
    qset.write_text(yaml.safe_dump(qs))
    runs = Path(cfg["home"]) / "evals"

    def kept() -> list[Path]:
        return sorted(runs.glob("json-look-*.json"))

    for args, count in ((["--json"], 0), (["--json"], 0), (["--json", "--save"], 1), ([], 2),
                        (["--json", "--no-save"], 2)):
        done = stack.cli("--config", str(path), "eval", "--set", str(qset), *args, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        if "--json" in args:
            assert json.loads(done.stdout)["questions"] == 3
        assert len(kept()) == count, (args, kept())
