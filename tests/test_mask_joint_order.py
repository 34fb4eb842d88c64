"""A value written half to stdout and half to stderr is masked whichever half the two reader threads
deliver first (guards/redact/mask.py JointMasker): the order of arrival is a race, so each is tried."""

from __future__ import annotations

import io
from itertools import permutations

import pytest

from muninn.guards.redact.mask import JointMasker
from muninn.guards.redact.redactor import ENCODINGS, Redactor

VALUE = "Pelican-Torch-6610x"
# (stream, bytes) pieces as a child writes them; every order of arrival is fed.
WRITES = {
    "half to each": [(0, b"Pelican-T"), (1, b"orch-6610x"), (0, b"\n")],
    "thirds": [(0, b"Pelic"), (1, b"an-Torch"), (0, b"-6610x\n")],
    "halves beside other output": [(0, b"build ok\nPelican-"), (1, b"Torch-6610x"), (1, b"\nwarning: none\n")],
}


def _arrivals(pieces: list[tuple[int, bytes]]) -> list[list[tuple[int, bytes]]]:
    """Every order the two readers can deliver: a pipe keeps its own order, the two pipes interleave."""
    keep = [o for o in permutations(pieces)
            if all([p for p in o if p[0] == s] == [p for p in pieces if p[0] == s] for s in (0, 1))]
    return [list(o) for o in dict.fromkeys(keep)]


def _mask(pieces: list[tuple[int, bytes]]) -> tuple[bytes, bytes]:
    out, err = io.BytesIO(), io.BytesIO()
    masker = JointMasker(Redactor({VALUE: "vpn"}, patterns=False, encodings=ENCODINGS, views=True), [out, err])
    for stream, data in pieces:
        masker.feed(stream, data)
    masker.finish(0)
    masker.finish(1)
    return out.getvalue(), err.getvalue()


@pytest.mark.parametrize("case", sorted(WRITES))
def test_a_split_value_is_masked_in_every_order_of_arrival(case: str) -> None:
    for order in _arrivals(WRITES[case]):
        out, err = _mask(order)
        both = out + err
        assert b"[REDACTED:vpn]" in both, order
        for piece in (b"Pelican", b"6610x", b"Torch"):
            assert piece not in out and piece not in err, (order, out, err)


def test_ordinary_output_of_two_streams_is_untouched_in_any_order() -> None:
    pieces = [(0, b"Pelican and Torch "), (1, b"went to 6610 Main St.\n"), (0, b"done\n")]
    for order in _arrivals(pieces):
        out, err = _mask(order)
        assert out == b"".join(d for s, d in order if s == 0) and err == b"".join(d for s, d in order if s == 1)
