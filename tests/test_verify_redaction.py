"""What `verify` returns is redacted: a proof's output reaches the reason (an `ok` quotes its last
line), so the reason, stored and returned, passes the redactor (known values, then patterns). And a
proof that would select a secret with an output-shaping option never runs (the guard's class)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from muninn.core import config
from muninn.plugins.access import sweep
from muninn.plugins.access.results import ResultStore
from muninn.plugins.access.vault import Vault

FAKEBIN = Path(__file__).parent / "fakebin"
KNOWN = "Prx-9vQ2mZxL4vB7nK1pR6w"          # a vault value the proof is not given
PATTERN = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9Lm3Tw8V"   # an AWS secret key's shape, in no vault


@pytest.fixture
def settings(tmp_path: Path, isolated_keyring: Path):
    (tmp_path / "inventory.yaml").write_text(yaml.safe_dump([
        {"id": "leaky", "kind": "service", "verify": "curl -sf https://leak.example.com/status"},
        {"id": "proxy-password", "kind": "cloud", "verify": "gcloud config list --format 'value(proxy.password)'"},
        {"id": "override", "kind": "service",
         "verify": "curl -sf -H 'X-HTTP-Method-Override: DELETE' https://ok.example.com/items/7"},
    ]))
    (tmp_path / "secrets.yaml").write_text(yaml.safe_dump([{"id": "corp-proxy", "value": KNOWN}]))
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "ws"), "vault": {"files": ["secrets.yaml"]},
                                   "inventory": {"files": ["inventory.yaml"]},
                                   "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"},
                                   "verify": {"parallel": 2, "timeout": 10}}))
    s = config.load(cfg)
    Vault.open(s).sync()
    return s


@pytest.fixture
def swept(settings, tmp_path: Path):
    # The value reaches the fake from a file: a variable holding a vault value never reaches a child.
    (tmp_path / "leak-value").write_text(KNOWN)
    env = {**os.environ, "PATH": f"{FAKEBIN}:/usr/bin:/bin", "LEAK_VALUE_FILE": str(tmp_path / "leak-value"),
           "LEAK_PATTERN": PATTERN}
    return {r.id: r for r in sweep.run(settings, sweep.plan(settings), env=env)}


def test_a_reason_quoting_output_is_redacted(swept) -> None:
    leaky = swept["leaky"]
    assert leaky.status == "ok" and "proxy: user=ops" in leaky.reason      # the line is still there to read
    assert KNOWN not in leaky.reason and "[REDACTED:corp-proxy]" in leaky.reason
    assert PATTERN not in leaky.reason


def test_what_is_stored_for_show_is_redacted_too(swept, settings) -> None:
    store = ResultStore.open(settings)
    try:
        stored = store.last("inventory", "leaky")
    finally:
        store.close()
    assert stored is not None and "[REDACTED:corp-proxy]" in stored.reason
    text = json.dumps(stored.as_dict())
    assert KNOWN not in text and PATTERN not in text


@pytest.mark.parametrize("entry", ["proxy-password", "override"])
def test_the_issues_proofs_never_run(swept, entry: str) -> None:
    assert swept[entry].status == "skipped" and swept[entry].reason.startswith("guard refused")


def test_the_pattern_is_replaced_not_cut(swept) -> None:
    assert "aws_secret_access_key=[REDACTED" in swept["leaky"].reason, swept["leaky"].reason
