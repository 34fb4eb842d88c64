"""Two writers of one sync manifest, for real (separate processes): under `locked()` no update is
lost, a reader never sees half-written JSON, and no temp file is left behind. A damaged manifest is
one sentence, exit 2."""

from __future__ import annotations

import json
import multiprocessing as mp
import stat
from pathlib import Path

import pytest

from muninn.core.errors import ConfigError, ExitCode
from muninn.export.sync import Manifest

HEADER = {"server": "s", "identity": "i", "to": "viking://resources/a"}


def _writer(path: str, name: str, n: int) -> None:
    for i in range(n):
        m = Manifest(Path(path), HEADER)
        with m.locked():
            m.files[f"{name}-{i}.md"] = "h"
            m.save()


def _reader(path: str, n: int, bad: mp.Value) -> None:
    for _ in range(n):
        try:
            json.loads(Path(path).read_text())
        except FileNotFoundError:
            continue
        except ValueError:
            bad.value += 1


@pytest.mark.parametrize("writers", [2, 4])
def test_concurrent_writers_lose_nothing_and_readers_see_whole_files(tmp_path: Path, writers: int) -> None:
    path = tmp_path / "m.json"
    bad = mp.Value("i", 0)
    procs = [mp.Process(target=_writer, args=(str(path), f"w{k}", 40)) for k in range(writers)]
    procs.append(mp.Process(target=_reader, args=(str(path), 2000, bad)))
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    files = Manifest(path, HEADER).files
    assert len(files) == writers * 40 and bad.value == 0
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize("text", ["", "{", "[1, 2]", '{"files": 3}', "\x00\x00"])
def test_a_damaged_manifest_is_one_sentence(tmp_path: Path, text: str) -> None:
    path = tmp_path / "m.json"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        Manifest(path, HEADER)
    assert err.value.exit_code == ExitCode.BAD_INPUT and str(path) in str(err.value) and "\n" not in str(err.value)
