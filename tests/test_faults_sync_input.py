"""`muninn sync` refuses any file that is not a whole fact file, by name, before touching the server:
the class is every way a file can be written half or by hand (factfile.problem)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from muninn.core import factfile
from muninn.core.errors import ExitCode

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
FACT = factfile.render(factfile.FactFile(id="n/a.md#x", source="notes", kind="section", title="X",
                                          body="## X\n\nRestart the resolver with systemctl.", lead="Note X.",
                                          breadcrumb=("A", "X"), source_path="a.md")).text


@pytest.mark.parametrize(("text", "why"), [
    ("", "empty"),
    ("   \n\n", "empty"),
    ("# Just markdown\n\nNo front matter.\n", "no-front-matter"),
    ("---\n[not, a, mapping]\n---\nbody\n", "no-front-matter"),
    ("---\nid: x\n---\nbody\n", "missing-keys:source,kind"),
    (FACT.replace("source: notes\n", ""), "missing-keys:source"),
    (FACT[: len(FACT) // 2], "no-front-matter"),                 # cut inside the front matter
    (FACT[: FACT.index("systemctl")], "content-hash-mismatch"),   # cut mid-body: the hash no longer adds up
    (FACT[: FACT.index("---\n", 4) + 4], "content-hash-mismatch"),  # front matter only
    (FACT.replace("resolver", "resolvers"), "content-hash-mismatch"),
    (FACT.replace("content_hash: ", "content_hash: 0"), "content-hash-mismatch"),
])
def test_problem_names_why_a_file_is_not_a_fact(text: str, why: str) -> None:
    assert (factfile.problem(text) or "").startswith(why)


def test_a_rendered_fact_is_a_fact() -> None:
    assert factfile.problem(FACT) is None


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("sync-input")
    cfg = root / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"server": {"port": 1}}))   # nothing listens: the refusal must come first
    out = root / "out"
    done = subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), "export", "notes",
                           str(EXAMPLES / "notes"), "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return cfg, out


def _sync(cfg: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), "sync", str(out), "--to",
                           "viking://resources/notes"], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("damage", "why"), [
    ("truncate-0", "empty"),
    ("truncate-half", "content-hash-mismatch"),
    ("strip-front-matter", "no-front-matter"),
    ("drop-key", "missing-keys:kind"),
    ("new-empty-file", "empty"),
])
def test_muninn_sync_refuses_a_damaged_fact_file_by_name(exported: tuple[Path, Path], tmp_path: Path,
                                                         damage: str, why: str) -> None:
    cfg, original = exported
    out = tmp_path / "out"
    shutil.copytree(original, out)
    victim = sorted(out.rglob("*.md"))[3]
    text = victim.read_text()
    if damage == "truncate-0":
        victim.write_text("")
    elif damage == "truncate-half":
        victim.write_text(text[: len(text) // 2])
    elif damage == "strip-front-matter":
        victim.write_text(factfile.split_front_matter(text)[1])
    elif damage == "drop-key":
        victim.write_text(text.replace("kind: ", "kinds: ", 1))
    else:
        victim = out / "zero.md"
        victim.write_text("")
    done = _sync(cfg, out)
    lines = [ln for ln in done.stderr.strip().splitlines() if ln.strip()]
    assert done.returncode == ExitCode.LEAK_GATE_DROPPED, done.stderr
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert victim.name in lines[0] and f"not-a-fact-file:{why}" in lines[0] and "nothing uploaded" in lines[0]
    # Repaired (the export's own copy back), the gate lets it through; what stops it then is that
    # this test has no server and no key (exit 4 or 5), never the gate.
    shutil.rmtree(out)
    shutil.copytree(original, out)
    again = _sync(cfg, out)
    assert again.returncode in (ExitCode.KEYRING, ExitCode.SERVER), again.stderr
    assert "not-a-fact-file" not in again.stderr and "Traceback" not in again.stderr
