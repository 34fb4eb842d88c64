"""The file formats the docs show are read by the loaders that own them: an example that drifted from its
format fails here (docs/vault.md: secrets and inventory YAML; docs/evals.md: both question files)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from muninn.core import inventory_file, secrets_file
from muninn.core.errors import ConfigError
from muninn.evals import sealed
from muninn.evals.lab.corpora import questions

DOCS = Path(__file__).resolve().parents[1] / "docs"
_YAML = re.compile(r"^```yaml\n(.*?)^```", re.M | re.S)


def examples(page: str) -> list[str]:
    return _YAML.findall((DOCS / page).read_text())


def _write(tmp_path: Path, text: str, name: str = "file.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    path.chmod(0o600)
    return path


def test_the_secrets_example_loads(tmp_path: Path) -> None:
    text = next(t for t in examples("vault.md") if "id: grafana-admin" in t)
    [entry] = secrets_file.load_files([_write(tmp_path, text)])
    assert entry.entry.id == "grafana-admin" and entry.entry.requires == ["vpn"] and not entry.entry.in_file


def test_the_inventory_example_loads(tmp_path: Path) -> None:
    text = next(t for t in examples("vault.md") if "id: ops-cluster" in t)
    entries = inventory_file.load_files([_write(tmp_path, text)])
    assert set(entries) == {"ops-cluster", "aws-ops-prod", "vpn"}
    assert entries["vpn"].entry.is_prerequisite and entries["vpn"].entry.fix_sentence() == "connect the VPN and retry"


def test_the_sealed_set_example_loads(tmp_path: Path) -> None:
    text = next(t for t in examples("evals.md") if "expect:" in t)
    qs, digest = sealed.load_set(_write(tmp_path, text))
    assert qs.name == "ops" and qs.questions[0].category == "runbook" and len(digest) == 64


def test_the_corpus_set_example_loads(tmp_path: Path) -> None:
    text = next(t for t in examples("evals.md") if "corpus:" in t)
    qs = questions.load(_write(tmp_path, text))
    assert qs.corpus == "debian-handbook" and qs.questions[0].answer == "/var/spool/cron/crontabs/user"


@pytest.mark.parametrize("page, marker, edit", [
    ("vault.md", "id: grafana-admin", lambda t: t.replace("  service: grafana", "  servce: grafana")),
    ("vault.md", "id: ops-cluster", lambda t: t.replace("  kind: cluster", "  knd: cluster")),
    ("evals.md", "expect:", lambda t: t.replace("    expect:", "    expected:")),
    ("evals.md", "corpus:", lambda t: t.replace("    answer:", "    answr:")),
])
def test_a_drifted_example_is_refused(tmp_path: Path, page: str, marker: str, edit) -> None:
    text = edit(next(t for t in examples(page) if marker in t))
    path = _write(tmp_path, text)
    loader = {"id: grafana-admin": lambda: secrets_file.load_files([path]),
              "id: ops-cluster": lambda: inventory_file.load_files([path]),
              "expect:": lambda: sealed.load_set(path),
              "corpus:": lambda: questions.load(path)}[marker]
    with pytest.raises(ConfigError):
        loader()


def test_muninn_eval_reads_the_documented_question_file_and_names_a_drifted_line(tmp_path: Path) -> None:
    """Through the real CLI (rough edge 10): the file docs/evals.md shows is what `muninn eval --set FILE`
    reads. A drifted one is exit 2 with its file and line before any key or server is asked for; the
    intact one gets past the file (here to the keyring, which this bare workspace does not hold)."""
    import subprocess
    import sys

    text = next(t for t in examples("evals.md") if "expect:" in t)
    env = {"MUNINN_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "XDG_DATA_HOME": str(tmp_path / "xdg"),
           "PYTHON_KEYRING_BACKEND": "keyrings.alt.file.PlaintextKeyring"}

    def run(body: str) -> subprocess.CompletedProcess:
        path = _write(tmp_path, body, "questions.yaml")
        return subprocess.run([sys.executable, "-m", "muninn", "eval", "--set", str(path), "--json"],
                              capture_output=True, text=True, env=env, timeout=120)

    drifted = run(text.replace("    expect:", "    expected:"))
    assert drifted.returncode == 2 and f"{tmp_path / 'questions.yaml'}:4:" in drifted.stderr, drifted.stderr
    intact = run(text)
    assert intact.returncode == 4 and "keyring" in intact.stderr, intact.stderr
