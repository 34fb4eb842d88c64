"""One fact file by URI, for `muninn read` and `recall_read` alike. The server's own wording for a URI
it cannot read as a file (INVALID_URI, INVALID_ARGUMENT, its paths) is for neither a person nor an
agent: they are told what the URI was and where to find a file URI instead."""

from __future__ import annotations

from muninn.core.client import OpenViking
from muninn.core.errors import AuthError, NotFound, ServerBadReply, ServerBusy, ServerDown, ServerError, ServerSlow
from muninn.plugins.search.types import SearchError


def read_file(client: OpenViking, uri: str, *, lister: str, finder: str) -> str:
    """The file's text. `lister`: how the caller lists a folder (`muninn ls`, `recall_list`); `finder`:
    where file URIs come from, for the caller."""
    try:
        return client.read(uri)
    except (NotFound, ServerDown, ServerSlow, ServerBadReply, AuthError, ServerBusy):
        raise
    except ServerError as exc:
        if client.is_folder(uri):
            raise SearchError(f"{uri} is a folder, not a file", fix=f"list it with `{lister} {uri}`") from None
        if exc.status is None or exc.status >= 500:
            raise       # the server failed, not the URI: its own sentence (exit 5)
        raise SearchError(f"{uri} is not a file muninn can read", fix=f"give a file URI from {finder}") from None
