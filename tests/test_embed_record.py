"""The workspace's record of its embedding model survives the format stamp and keeps other keys."""

import json

from muninn.core import embed_record, format_file, upgrade


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
