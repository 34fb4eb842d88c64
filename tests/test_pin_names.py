"""An inventory entry is pinned by every name it declares (its id, name and aliases, whole words, any case),
as the owner writes them in a question: "bastion", "platform cluster", "jump01.example.com" (seed 000);
never by a tag or a word inside another."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from muninn.plugins.search import doc as doc_mod
from muninn.plugins.search import ranking

INVENTORY = Path(__file__).resolve().parents[1] / "examples" / "inventory.yaml"


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> dict[str, doc_mod.Doc]:
    out = tmp_path_factory.mktemp("inv")
    done = subprocess.run([sys.executable, "-m", "muninn", "export", "inventory", str(INVENTORY), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    found = {}
    for path in out.rglob("*.md"):
        d = doc_mod.parse(f"viking://resources/inv/{path.relative_to(out)}", path.read_text())
        found[d.meta["id"].split("/", 1)[1]] = d
    return found


def _pinned(docs: dict[str, doc_mod.Doc], query: str) -> set[str]:
    return {entry for entry, d in docs.items() if ranking.named(query, d)}


@pytest.mark.parametrize("query, entry", [
    ("how do I get onto the bastion?", "jump-host"),
    ("Bastion refuses my key", "jump-host"),
    ("ssh to jump01.example.com times out", "jump-host"),
    ("which key for jump01.example.com?", "jump-host"),
    ("I could not reach jump01.example.com.", "jump-host"),
    ("is the platform cluster up", "ops-cluster"),
    ("Platform Cluster argocd sync failed", "ops-cluster"),
    ("ops-cluster-prod nodes not ready", "ops-cluster"),
    ("wireguard handshake fails", "vpn"),
    ("jump-host", "jump-host"),                    # ids still do
    ("grafana dashboard missing", "grafana"),
])
def test_every_declared_name_pins_its_entry(docs: dict[str, doc_mod.Doc], query: str, entry: str) -> None:
    assert entry in _pinned(docs, query), (query, _pinned(docs, query))


@pytest.mark.parametrize("query", [
    "linux kernel upgrade notes",           # a tag of the jump host, not a name
    "critical alerts this week",            # a tag of several entries
    "the platform team's clusters",         # words of an alias, not the alias
    "bastions in general",                  # inside another word
    "curl https://jump01.example.com-old/", # a longer name
    "kubernetes upgrade",                   # a tag of the cluster
])
def test_tags_and_parts_of_words_pin_nothing(docs: dict[str, doc_mod.Doc], query: str) -> None:
    assert _pinned(docs, query) == set(), (query, _pinned(docs, query))
