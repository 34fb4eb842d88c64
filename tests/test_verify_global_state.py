"""The verify sweep's machine-wide switches are put back (issue 50 §7): an inventory entry that runs
`az account set` or `gcloud config set project` before its proof leaves the owner's subscription and project
as they were, also when the proof fails; a setting that was unset is unset again; and two sweeps in two
processes never interleave their switches (a lock across processes)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from muninn.core import config
from muninn.plugins.access import global_state, sweep

FAKEBIN = Path(__file__).parent / "fakebin"


@pytest.fixture
def settings(tmp_path: Path):
    (tmp_path / "inventory.yaml").write_text(yaml.safe_dump([
        {"id": "sub-a", "kind": "cluster", "access": ["az account set --subscription sub-ok-a"],
         "verify": "az account show --subscription sub-ok-a"},
        {"id": "sub-gone", "kind": "cluster", "access": ["az account set --subscription sub-ok-b"],
         "verify": "az account show --subscription sub-gone"},
        {"id": "gke", "kind": "cluster", "access": ["gcloud config set project prod-7731"],
         "verify": "gcloud config get-value project"},
    ]))
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "ws"), "inventory": {"files": ["inventory.yaml"]},
                                   "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"},
                                   "verify": {"parallel": 2, "timeout": 5, "sandbox": "off"}}))
    return config.load(cfg)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    az, gcloud = tmp_path / "az-state", tmp_path / "gcloud-state"
    az.write_text("sub-home\n")
    gcloud.write_text("account=me@example.com\n")          # no project set
    return {**os.environ, "PATH": f"{FAKEBIN}:/usr/bin:/bin", "FAKE_AZ_STATE": str(az),
            "FAKE_GCLOUD_STATE": str(gcloud), "FAKE_LOG": str(tmp_path / "calls.log")}


def test_switches_are_put_back_after_the_lane_even_when_a_proof_fails(settings, env) -> None:
    results = {r.id: r for r in sweep.run(settings, sweep.plan(settings), env=env, store=False)}
    assert results["sub-a"].status == "ok" and results["sub-gone"].status != "ok"
    assert results["gke"].status == "ok" and "prod-7731" in results["gke"].reason
    assert Path(env["FAKE_AZ_STATE"]).read_text().strip() == "sub-home"
    assert Path(env["FAKE_GCLOUD_STATE"]).read_text() == "account=me@example.com\n"     # project unset again
    assert not [r for r in results.values() if r.kind == "global-state"]


def test_a_switch_that_cannot_be_set_back_is_said(settings, env, tmp_path) -> None:
    Path(env["FAKE_AZ_STATE"]).write_text("sub-unknown-to-az\n")        # az refuses to select it again
    results = sweep.run(settings, sweep.plan(settings), env=env, store=False)
    lost = [r for r in results if r.kind == "global-state"]
    assert len(lost) == 1 and lost[0].status == "error" and "not set back" in lost[0].reason


def test_the_lane_lock_holds_across_processes(settings, env, tmp_path) -> None:
    lock = settings.paths.home / "locks" / "global-state"
    marker = tmp_path / "order"
    code = (f"import time\nfrom pathlib import Path\nfrom muninn.plugins.access import global_state\n"
            f"with global_state.locked(Path({str(lock)!r})):\n"
            f"    Path({str(marker)!r}).open('a').write('other-in\\n'); time.sleep(1.5)\n"
            f"    Path({str(marker)!r}).open('a').write('other-out\\n')\n")
    other = subprocess.Popen([sys.executable, "-c", code])
    while not marker.exists():
        time.sleep(0.05)
    with global_state.locked(lock):
        marker.open("a").write("this-in\n")
    other.wait(timeout=30)
    assert marker.read_text().split() == ["other-in", "other-out", "this-in"]


def test_only_switched_settings_are_read(settings) -> None:
    scripts = [i.script for i in sweep.plan(settings)]
    assert global_state.switched(scripts) == {("az", "subscription"), ("gcloud", "project")}
