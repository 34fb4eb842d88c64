import stat
from pathlib import Path

import pytest

from muninn.core import credentials, paths
from muninn.core.errors import CredentialError

FILE = "keyrings.alt.file.PlaintextKeyring"


def test_store_read_back_and_list_names(isolated_keyring: Path) -> None:
    ring = credentials.Keyring(FILE)
    ring.set("openviking:a:b", "k1-secret-value")
    ring.set("openviking:root", "k2-secret-value")
    assert ring.get("openviking:a:b") == "k1-secret-value"
    assert ring.names() == ["openviking:a:b", "openviking:root"]
    ring.delete("openviking:a:b")
    assert ring.names() == ["openviking:root"]
    assert ring.get("openviking:a:b") is None
    assert ring.is_plaintext


def test_missing_key_is_loud_and_names_the_fix(isolated_keyring: Path) -> None:
    ring = credentials.Keyring(FILE)
    with pytest.raises(CredentialError, match="no key named 'openviking:x:y'"):
        ring.require("openviking:x:y", fix="run muninn up")


@pytest.mark.parametrize("backend", ["keyring.backends.fail.Keyring", "no.such.Backend"])
def test_unusable_backend_fails_loudly(isolated_keyring: Path, backend: str) -> None:
    with pytest.raises(CredentialError) as info:
        credentials.Keyring(backend)
    assert "backend" in str(info.value)
    assert info.value.exit_code == 4


def test_private_file_is_0600(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "key.txt"
    paths.private_file(path, "material")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text() == "material"
