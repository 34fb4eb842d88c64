"""The fact file's one owner: render -> parse -> render gives the same bytes, over awkward values of
every field, and the legacy shapes other writers left behind still read."""

from __future__ import annotations

import datetime as dt
import itertools

import pytest

from muninn.core import factfile
from muninn.core.factfile import CONTEXT_MARKER, FactFile, parse, render

AWKWARD = ["plain", "a: b", "key: value: more", "it's", '"double"', "'single'", "back\\slash", "tab\there",
           "line\nbreak", "two\n\nparagraphs", "  padded  ", "émoji 😀 ünïcode", "日本語", "yes", "null", "~", "123",
           "2025-03-04", "-dash", "[x]", "{a}", "#hash", "x #y", "@at", "!tag", "*star", "&amp", "|pipe", ">gt",
           "?", "---", "a\n---\nb", "\x85nel", "u\u2028sep", "\ufeffbom", "x\x00y", "A › B", "a > b",
           "<!-- context -->", ""]
BODIES = ["", "one line", "# Heading\n\nText with: colons and \"quotes\".", "a\n\n\nb", "```\ncode: here\n---\n```",
          "ends with marker\n<!-- context -->", "<!-- context: a lookalike -->\nafter", "  indented first line",
          "---\nlooks: like front matter\n---", "unicode ✓ › é"]
CONTEXTS = ["", "Alice: before\nBob: (this turn)\nAlice: after", "Runbook › Section", "x\n<!-- context -->\ny"]


def _file(title: str = "t", body: str = "b", context: str = "", **kw) -> FactFile:
    base = dict(id=f"notes/{title}", source="notes", kind="section", title=title, body=body, lead=f"Lead {title}",
                context=context, project=title or None, date="2025-05-14", tags=(title, "x"), breadcrumb=(),
                source_path=title)
    return FactFile(**(base | kw))


def _round_trip(ff: FactFile) -> None:
    first = render(ff)
    again = render(parse(first.text))
    assert again.text == first.text
    assert again.content_hash == first.content_hash == parse(first.text).content_hash


@pytest.mark.parametrize("value", AWKWARD)
def test_every_text_field_round_trips(value: str) -> None:
    ff = _file(value, breadcrumb=("Doc", value) if value else ())
    _round_trip(ff)
    back = parse(render(ff).text)
    assert back.id == f"notes/{value}" and back.project == (value or None) and back.source_path == value
    assert back.tags == (value, "x") and back.date == "2025-05-14"


@pytest.mark.parametrize("body, context", list(itertools.product(BODIES, CONTEXTS)))
def test_bodies_and_context_round_trip(body: str, context: str) -> None:
    ff = _file(body=body, context=context)
    _round_trip(ff)
    back = parse(render(ff).text)
    # The fact keeps its text (a marker lookalike inside it is escaped, not a cut) and the context its own.
    assert back.body.replace("&lt;!--", "<!--") == body.strip()
    assert back.context.replace("&lt;!--", "<!--") == context.strip()
    assert (CONTEXT_MARKER in render(ff).text) == bool(context.strip())


@pytest.mark.parametrize("lead", ["", "one line", "two\nlines", "  spaced   out  ", "colon: in lead"])
def test_the_lead_is_one_line(lead: str) -> None:
    ff = _file(lead=lead)
    _round_trip(ff)
    assert parse(render(ff).text).lead == " ".join(lead.split())


@pytest.mark.parametrize("extra", [{}, {"written_by": "raven", "trust": "untrusted"},
                                   {"observed_at": "2026-01-02T03:04:05+00:00", "note": "a: b\nc"}])
def test_extra_keys_round_trip_after_the_known_ones(extra: dict) -> None:
    ff = _file(extra=extra)
    _round_trip(ff)
    text = render(ff).text
    assert parse(text).extra == extra
    head = text.split("---\n")[1]
    assert head.index("source_path:") < min((head.index(f"{k}:") for k in extra), default=len(head))


def test_the_breadcrumb_is_split_on_its_separator_and_the_legacy_one() -> None:
    assert factfile.crumbs("A › B › C") == ("A", "B", "C")
    assert factfile.crumbs("conversation 26 > session 3") == ("conversation 26", "session 3")
    assert factfile.crumbs("a > b › c") == ("a > b", "c")          # the current separator wins
    assert factfile.crumbs(["x", 1]) == ("x", "1") and factfile.crumbs(None) == ()


@pytest.mark.parametrize("value, want", [
    ("2025-05-14", dt.datetime(2025, 5, 14, tzinfo=dt.UTC)),
    ("2025-05-14T09:30:00Z", dt.datetime(2025, 5, 14, 9, 30, tzinfo=dt.UTC)),
    ("2025-05-14T11:30:00+02:00", dt.datetime(2025, 5, 14, 9, 30, tzinfo=dt.UTC)),
    (dt.date(2025, 5, 14), dt.datetime(2025, 5, 14, tzinfo=dt.UTC)),
    (dt.datetime(2025, 5, 14, 9, 30), dt.datetime(2025, 5, 14, 9, 30, tzinfo=dt.UTC)),
    ("14 May 2025", None), ("", None), (None, None), ("1.31", None),
])
def test_dates_with_and_without_a_time_of_day(value: object, want: dt.datetime | None) -> None:
    assert factfile.parse_date(value) == want


@pytest.mark.parametrize("value", [dt.date(2025, 5, 14), dt.datetime(2025, 5, 14, 9, 30, tzinfo=dt.UTC),
                                   dt.datetime(2025, 5, 14, 11, 30, tzinfo=dt.timezone(dt.timedelta(hours=2)))])
def test_a_written_date_reads_back_as_the_same_moment(value: dt.date) -> None:
    moment = value if isinstance(value, dt.datetime) else dt.datetime(value.year, value.month, value.day,
                                                                     tzinfo=dt.UTC)
    assert factfile.parse_date(factfile.format_date(value)) == moment


def test_a_file_the_old_remember_tool_wrote_reads_its_date_from_observed_at() -> None:
    old = ("---\nkind: observation\nwritten_by: raven\ntrust: untrusted\nobserved_at: 2026-10-18T14:00:00+00:00\n"
           "recorded_at: 2026-10-18T14:01:00+00:00\ntags: [dns]\n---\n"
           "Observation by raven (agent), 2026-10-18 14:00 UTC: resolver flaps\n\nresolver flaps again\n")
    ff = parse(old)
    assert factfile.parse_date(ff.date) == dt.datetime(2026, 10, 18, 14, tzinfo=dt.UTC)
    assert ff.body == "resolver flaps again" and ff.lead.startswith("Observation by raven")
    assert ff.extra["written_by"] == "raven" and ff.tags == ("dns",)


@pytest.mark.parametrize("text", ["no front matter at all\n", "---\nnot: [closed\n---\nbody\n",
                                  "---\n- a list\n---\nx\n", "---\nkey: v\n", ""])
def test_plain_and_broken_files_parse_to_their_text(text: str) -> None:
    ff = parse(text)
    assert ff.id == "" and ff.date is None and ff.body == text.strip()
