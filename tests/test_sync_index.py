"""Sync keeps the syncing reader's keyword index current through the after-sync hook."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from muninn.core import config, credentials
from muninn.export import sync
from muninn.plugins.search import keyword

pytestmark = pytest.mark.integration


def test_sync_indexes_written_facts_and_forgets_pruned_ones(stack, tmp_path: Path) -> None:
    account, client = stack.new_account("idx")
    ring = credentials.for_server(stack.settings)
    ring.set(credentials.user_key_name(account, "owner"), client._api_key)
    cfg = {**yaml.safe_load(stack.config_path.read_text()), "openviking": {"account": account, "user": "owner"}}
    (tmp_path / "muninn.yaml").write_text(yaml.safe_dump(cfg))
    settings = config.load(tmp_path / "muninn.yaml")
    src = tmp_path / "facts"
    src.mkdir()
    (src / "wireguard.md").write_text("# Office tunnel\nwg-quick up office brings the WireGuard tunnel back.\n")
    (src / "pihole.md").write_text("# Resolver\nPi-hole upstreams are pinned in setupVars.conf.\n")
    area = "viking://resources/idx"

    sync.sync(client, src, area, settings=settings)
    db = settings.paths.search_index()
    index = keyword.KeywordIndex(db)
    try:
        hits = index.candidates("WireGuard tunnel", area, 5)
        assert hits and hits[0].uri == f"{area}/wireguard.md"
    finally:
        index.close()

    (src / "wireguard.md").unlink()
    sync.sync(client, src, area, prune=True, settings=settings)
    index = keyword.KeywordIndex(db)
    try:
        assert not [h for h in index.candidates("WireGuard tunnel", area, 5) if h.uri.endswith("wireguard.md")]
        assert index.candidates("setupVars", area, 5)[0].uri == f"{area}/pihole.md"
    finally:
        index.close()
