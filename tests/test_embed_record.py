"""The workspace's record of its embedding model survives the format stamp and keeps other keys."""

import json
from pathlib import Path

import yaml

from muninn.core import config, embed_record, format_file, upgrade
from muninn.core.workspace import Workspace


def test_a_workspace_without_a_record_has_none(tmp_path):
    assert format_file.recorded(tmp_path) is None
    (tmp_path / "format.json").write_text("not json")
    assert format_file.recorded(tmp_path) is None


def test_the_record_keeps_the_format_and_the_format_keeps_the_record(tmp_path):
    upgrade.ensure(tmp_path, say=print)              # a new workspace: stamped at the current format
    rec = embed_record.record(tmp_path, "BAAI/bge-small-en-v1.5", "bge-small-en-v1.5")
    data = json.loads((tmp_path / "format.json").read_text())
    assert data["format"] == upgrade.current()
    assert data["embed"]["model"] == "BAAI/bge-small-en-v1.5"
    upgrade._stamp(tmp_path, upgrade.current())     # a later format rewrites the stamp
    again = format_file.recorded(tmp_path)
    assert again == rec
    assert format_file.read_format(tmp_path) == upgrade.current()


def test_a_record_written_before_any_stamp_leaves_a_readable_format(tmp_path):
    new = tmp_path / "new"                          # no workspace yet: it starts in the current format
    embed_record.record(new, "intfloat/e5-small-v2", "e5-small-v2")
    assert format_file.read_format(new) == upgrade.current()
    old = tmp_path / "old"                          # a workspace from before format files: still format 0
    (old / "exports").mkdir(parents=True)
    embed_record.record(old, "BAAI/bge-small-en-v1.5", "bge-small-en-v1.5")
    assert format_file.read_format(old) == 0
    assert format_file.recorded(old).model == "BAAI/bge-small-en-v1.5"


def test_a_command_reads_format_json_once_and_sees_another_writer(tmp_path, monkeypatch):
    home = tmp_path / "home"
    upgrade.ensure(home, say=print)
    embed_record.record(home, "BAAI/bge-small-en-v1.5", "bge-small-en-v1.5")
    format_file._seen.clear()                       # a new process
    reads = []
    read_text = Path.read_text

    def counted(self: Path, *args, **kwargs) -> str:
        reads.extend([self] if self.name == "format.json" else [])
        return read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counted)
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(home)}))
    # What `muninn up` asks: the settings, the upgrade check, the model check, the record.
    settings = config.load(cfg, environ={})
    upgrade.ensure(home, say=print, settings=settings)
    assert embed_record.mismatch(settings) is None and format_file.recorded(home).model == settings.embed.model
    assert format_file.read_format(home) == upgrade.current() and len(reads) == 1
    file = Workspace(home).format_file                 # another process rewrites it: read again
    file.write_text(json.dumps({"format": 1, "embed": {"model": "x"}}) + "\n")
    assert format_file.read_format(home) == 1 and format_file.recorded(home).model == "x" and len(reads) == 2
