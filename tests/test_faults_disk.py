"""Disk faults during export, injected for real: a small tmpfs that fills up, and a folder
bind-mounted read-only, each in a private mount namespace (`unshare -m`; chmod does not stop root).

Each asserts one sentence, exit 12 (WRITE_FAILED), no traceback, no 0-byte or half-written fact
file, and that a rerun after the fault is gone converges to a complete export that sync accepts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from muninn.core.errors import ExitCode

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                                reason="needs root and unshare for a private mount namespace")

# Runs inside `unshare -m`: mounts, runs the real CLI, and reports what it saw as JSON, because
# the mounts (and a tmpfs's files) vanish with the namespace.
HELPER = r'''
import json, subprocess, sys
from pathlib import Path
from muninn.core import factfile
from muninn.export.sync import local_files
from muninn.export.sync_gate import SyncGate

fault, mnt, notes, cfg = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4]
cli = [sys.executable, "-m", "muninn", "--config", cfg]
out = mnt / "out"

def sh(*cmd):
    subprocess.run(cmd, check=True)

def export():
    return subprocess.run([*cli, "export", "notes", notes, "--out", str(out)], capture_output=True, text=True)

def state():
    files = sorted(out.rglob("*.md")) if out.is_dir() else []
    return {"files": len(files), "empty": [str(f) for f in files if f.stat().st_size == 0],
            "broken": [str(f) for f in files if factfile.problem(f.read_text(errors="replace"))],
            "temps": [str(f) for f in out.rglob("*.tmp")] if out.is_dir() else [],
            "bytes": {str(f): f.read_text() for f in files}}

def run(p):
    return {"rc": p.returncode, "stderr": p.stderr}

report = {}
if fault == "full":
    sh("mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(mnt))
    report["fault"] = run(export())
    report["after_fault"] = state()
    sh("mount", "-o", "remount,size=16m", str(mnt))   # the fault is gone
elif fault == "readonly":
    report["first"] = run(export())
    report["before"] = state()
    Path(notes, "notes", "ssh-config.md").write_text("# SSH config\n\nChanged while the folder was read-only.\n")
    sh("mount", "--bind", str(mnt), str(mnt))
    sh("mount", "-o", "remount,bind,ro", str(mnt))
    report["fault"] = run(export())
    report["after_fault"] = state()
    sh("umount", str(mnt))
elif fault == "readonly-new":
    sh("mount", "--bind", str(mnt), str(mnt))
    sh("mount", "-o", "remount,bind,ro", str(mnt))
    report["fault"] = run(export())
    report["after_fault"] = state()
    sh("umount", str(mnt))
report["rerun"] = run(export())
report["converged"] = state()
report["gate_refused"] = [d.path for d in SyncGate.from_known({}).refused(out, local_files(out))]
print(json.dumps(report))
'''


def _run(tmp_path: Path, fault: str) -> dict:
    notes = tmp_path / "notes"
    shutil.copytree(EXAMPLES / "notes", notes)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"server": {"port": 1}}))
    helper = tmp_path / "helper.py"
    helper.write_text(HELPER)
    done = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable, str(helper), fault,
                           str(mnt), str(notes), str(cfg)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _one_sentence(stderr: str) -> str:
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    assert "Traceback" not in stderr and len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize(("fault", "cause"), [
    ("full", "the disk is full"),
    ("readonly", "read-only file system"),
    ("readonly-new", "read-only file system"),
])
def test_export_write_fault_is_one_sentence_and_leaves_nothing_half_written(tmp_path: Path, fault: str,
                                                                            cause: str) -> None:
    report = _run(tmp_path, fault)
    assert report["fault"]["rc"] == ExitCode.WRITE_FAILED
    line = _one_sentence(report["fault"]["stderr"])
    assert cause in line and "could not write" in line and "rerun" in line
    after = report["after_fault"]
    assert after["empty"] == [] and after["broken"] == [] and after["temps"] == []
    if fault == "readonly":
        assert after["bytes"] == report["before"]["bytes"]      # the old export is intact
    if fault == "full":
        assert after["files"] > 0                               # it failed part-way, not before starting
    # Convergence: once the fault is gone a rerun writes everything and sync's gate accepts it all.
    assert report["rerun"]["rc"] == 0, report["rerun"]["stderr"]
    done = report["converged"]
    assert done["files"] > after["files"] or fault == "readonly"
    assert done["empty"] == [] and done["broken"] == [] and done["temps"] == []
    assert report["gate_refused"] == []
