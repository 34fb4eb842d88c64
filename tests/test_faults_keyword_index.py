"""A damaged keyword index, damaged for real on disk: search carries on vector-only and says which
file and which repair; `doctor` fails it with PRAGMA quick_check; `search-index` names the repair
and `search-index --rebuild` always repairs, after which search answers from keywords again."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from faultserver import State, serve

from muninn.core import config, credentials
from muninn.core.errors import ExitCode
from muninn.plugins.search import doctor_check, keyword

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
AREA = "viking://resources/notes"
QUERY = "INC-1049"     # an identifier: routed to the keyword index


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    page = int.from_bytes(data[16:18], "big")
    if how == "truncate-0":
        path.write_bytes(b"")
    elif how == "truncate-half":
        path.write_bytes(data[: len(data) // 2])
    elif how == "truncate-mid-page":
        path.write_bytes(data[: len(data) - page // 2])
    elif how == "garbage":
        path.write_bytes(bytes((i * 37 + 11) % 256 for i in range(len(data))))
    elif how == "header-only":
        path.write_bytes(data[:100])
    elif how == "zeroed-pages":
        # Same size and a sound header: only reading the pages shows the damage.
        path.write_bytes(data[:page] + bytes(len(data) - page))
    else:
        raise AssertionError(how)


DAMAGE = ("truncate-0", "truncate-half", "truncate-mid-page", "garbage", "header-only", "zeroed-pages")


@pytest.fixture
def stack(tmp_path: Path, isolated_keyring: Path) -> Iterator[tuple[Path, Path, State]]:
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "muninn", "export", "notes", str(EXAMPLES / "notes"), "--out",
                           str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    files = {f"{AREA}/{p.relative_to(out).as_posix()}": p.read_text() for p in out.rglob("*.md")}
    with serve() as (url, state):
        state.files.update(files)
        cfg = tmp_path / "muninn.yaml"
        cfg.write_text(yaml.safe_dump({"server": {"url": url, "timeout": 10}, "embed": {"port": 1},
                                       "search": {"rerank": {"enabled": False}}}))
        s = config.load(cfg)
        credentials.for_server(s).set(
            credentials.user_key_name(s.openviking.account, s.openviking.user), "test-key")
        index = s.paths.search_index()
        keyword.index_facts(index, files)
        yield cfg, index, state


def cli(cfg: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), *args], capture_output=True,
                          text=True, timeout=180)


def _search(cfg: Path) -> dict:
    done = cli(cfg, "search", QUERY, "--json")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)


def test_the_sound_index_answers_from_keywords(stack) -> None:
    cfg, index, _ = stack
    result = _search(cfg)
    assert result["hits"] and "1049" in json.dumps(result["hits"][0])
    assert not any("keyword" in w for w in result["warnings"])
    assert keyword.quick_check(index) is None


@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_index_is_named_and_repaired(stack, how: str) -> None:
    cfg, index, _ = stack
    _damage(index, how)
    # doctor reads every page: the damage is a failure, with the repair
    [check] = doctor_check.keyword_index(config.load(cfg))
    assert check.level == "fail" and str(index) in check.detail and "--rebuild" in check.fix
    # search carries on from vectors and says which file is damaged and how to repair it
    result = _search(cfg)
    warning = next(w for w in result["warnings"] if "keyword" in w)
    assert str(index) in warning and "search-index --rebuild" in warning
    assert all(h["uri"].startswith(AREA + "/") for h in result["hits"])
    # a plain refresh refuses with one sentence instead of a traceback
    plain = cli(cfg, "search-index")
    lines = [ln for ln in plain.stderr.strip().splitlines() if ln.strip()]
    assert plain.returncode == ExitCode.SEARCH_CONTRACT and len(lines) == 1 and "Traceback" not in plain.stderr
    assert "--rebuild" in lines[0] and str(index) in lines[0]
    # --rebuild moves it aside and builds anew; then keywords answer again, without a warning
    rebuilt = cli(cfg, "search-index", "--rebuild", "--json")
    assert rebuilt.returncode == 0, rebuilt.stderr
    report = json.loads(rebuilt.stdout)
    assert report["indexed"] > 0 and Path(report["moved_aside"]).exists()
    # the embedding sidecar is down here (port 1): the index still counts, the missing head start is said
    assert report["vectors_embedded"] is None and "search vectors not filled" in rebuilt.stderr
    assert "Traceback" not in rebuilt.stderr
    assert keyword.quick_check(index) is None
    assert doctor_check.keyword_index(config.load(cfg))[0].level == "ok"
    again = _search(cfg)
    assert again["hits"] and "1049" in json.dumps(again["hits"][0])
    assert not any("keyword" in w for w in again["warnings"])
