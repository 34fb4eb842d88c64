"""`sync all` reads each fact file once and gates it once, gates every area before any upload, and
uploads exactly the bytes it gated: a file changed on disk after the gate does not go up."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from muninn.core import config
from muninn.export import pipeline, sync
from muninn.export.sync_gate import SyncGate

pytestmark = pytest.mark.integration
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_sync_all_reads_and_gates_each_file_once_and_uploads_what_it_gated(
        stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    account, client = stack.new_account("reads")
    cfg = {**yaml.safe_load(stack.config_path.read_text()), "openviking": {"account": account, "user": "owner"},
           "home": str(tmp_path / "home"),
           "sources": [{"kind": "notes", "path": str(EXAMPLES / "notes"), "area": "viking://resources/notes"},
                       {"kind": "inventory", "path": str(EXAMPLES / "inventory.yaml"),
                        "area": "viking://resources/ops"}]}
    (tmp_path / "muninn.yaml").write_text(yaml.safe_dump(cfg))
    settings = config.load(tmp_path / "muninn.yaml")
    pipeline.run_all(settings)
    notes = pipeline.area_dir(settings, "viking://resources/notes")
    changed = sorted(notes.rglob("*.md"))[0]

    events: list[str] = []
    reads: Counter[str] = Counter()
    gated: dict[str, bytes] = {}
    gates: Counter[str] = Counter()
    real_read, real_refused, real_write = sync.local_files, SyncGate.refused, client.batch_write

    def read(src: Path) -> dict[str, bytes]:
        out = real_read(src)
        reads.update(f"{src}/{rel}" for rel in out)
        return out

    def refused(self: SyncGate, root: Path, local: dict[str, bytes]) -> Any:
        events.append("gate")
        gates.update(f"{root}/{rel}" for rel in local)
        gated.update({f"{root}/{rel}": data for rel, data in local.items()})
        found = real_refused(self, root, local)
        if root == notes:      # after the gate, before any upload: the disk changes under the sync
            changed.write_text(changed.read_text() + "\nedited after the gate\n")
        return found

    uploaded: dict[str, str] = {}

    def batch_write(to_uri: str, files: dict[str, str], **kw: Any) -> Any:
        events.append("upload")
        uploaded.update(files)
        return real_write(to_uri, files, **kw)

    monkeypatch.setattr(sync, "local_files", read)
    monkeypatch.setattr(SyncGate, "refused", refused)
    monkeypatch.setattr(client, "batch_write", batch_write)
    try:
        reports = sync.sync_all(client, settings)
    finally:
        client.close()

    assert set(reports) == {"viking://resources/notes", "viking://resources/ops"}
    assert reads and set(reads.values()) == {1}, reads.most_common(3)
    assert gates == reads
    assert "upload" in events and "gate" not in events[events.index("upload"):]
    local = {f"{root}/{rel}": f"{area}/{rel}" for area in reports
             for root in [pipeline.area_dir(settings, area)] for rel in real_read(root)}
    assert {local[f]: gated[f].decode() for f in gated} == uploaded
    assert "edited after the gate" not in uploaded[local[str(changed)]]
