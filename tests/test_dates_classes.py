"""The date check by the classes of issue #32 §3, each generated (many cases a class), each beside its
past half: the same wording of a day before NOW must stay allowed, and the future wording marked as a
plan is allowed too. Counts per class are pinned in test_the_classes_are_large and reported in
evals/results/security_mcp.md."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from muninn.guards.dates import check as dates
from muninn.guards.known.forms import skeleton

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
FUTURE_DAYS = [date(2027, 3, 1), date(2027, 1, 15), date(2026, 12, 24), date(2028, 10, 5), date(2031, 7, 9)]
PAST_DAYS = [date(2026, 3, 1), date(2025, 1, 15), date(2025, 12, 24), date(2024, 10, 5), date(2019, 7, 9)]
SENTENCES = ["Verified: the backup ran {}.", "{} - restore confirmed", "Checked the queue ({}), all green",
             "status ok; {}"]


def numeric(d: date) -> list[str]:
    """Year-first with every separator, two-digit years, month and year."""
    out = [f"{d:%Y}{s}{d:%m}{s}{d:%d}" for s in "_: ./-"]
    out += [f"{d.year}{s}{d.month}{s}{d.day}" for s in "_:."]
    out += [f"{d:%Y} - {d:%m} - {d:%d}", f"{d:%d}.{d:%m}.{d:%y}", f"{d:%d}-{d:%m}-{d:%y}", f"{d:%m}/{d:%d}/{d:%y}"]
    out += [f"{d:%m}/{d:%Y}", f"{d.month}/{d:%Y}", f"{d:%m}.{d:%Y}", f"{d:%m}-{d:%Y}"]
    return out


def week_and_ordinal(d: date) -> list[str]:
    y, w, wd = d.isocalendar()
    n = d.timetuple().tm_yday
    return [f"{y}-W{w:02d}", f"{y}W{w:02d}", f"{y}-W{w:02d}-{wd}", f"{y}W{w:02d}{wd}", f"KW {w}/{y}", f"KW{w}/{y}",
            f"week {w} of {y}", f"Week {w}, {y}", f"wk {w} {y}", f"CW {w}/{y}", f"semaine {w} {y}",
            f"{d.year}-{n:03d}", f"day {n} of {d.year}"]


def epochs(d: date) -> list[str]:
    s = int(datetime.combine(d, datetime.min.time(), UTC).timestamp()) + 3600
    return [f"ts={s}", f"ts: {s}", f'"expires": {s}', f"expires={s}000", f"exp: {s}", f"created_at={s}",
            f"expiresAt: {s}000", f'{{"timestamp": {s}}}', f"not_after={s}", f"@{s}", f"deadline: {s}",
            f"start_time={s}", f"valid_until: {s}.5"]


MONTHS = {  # March in other languages and scripts, as dateparser's locales spell it
    "fr": "mars", "de": "März", "es": "marzo", "it": "marzo", "nl": "maart", "pt": "março", "ru": "марта",
    "uk": "березня", "pl": "marca", "cs": "března", "tr": "Mart", "fi": "maaliskuuta", "el": "Μαρτίου",
    "sv": "mars", "hu": "március", "ro": "martie", "bg": "март", "ar": "مارس", "he": "מרץ", "id": "Maret",
}


def foreign(d: date) -> list[str]:
    month = {1: "January", 3: "March", 10: "October", 7: "July", 12: "December"}[d.month]
    out = []
    if d.month == 3:
        out += [f"{d.day} {name} {d.year}" for name in MONTHS.values()]
    out += [f"{d.year}年{d.month}月{d.day}日", f"{d.year}年{d.month}月", f"{d.year} 年 {d.month} 月 {d.day} 日",
            f"{d.year}년 {d.month}월 {d.day}일", f"{d.year}년 {d.month}월", f"{d.day} {month} {d.year}"]
    return out


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


_LOOKALIKE: dict[str, list[str]] = {}
for _ch, _ascii in skeleton().items():
    _LOOKALIKE.setdefault(_ascii, []).append(_ch)
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e", "\u2063"]


def disguised_words() -> list[str]:
    """`tomorrow` with one letter replaced by each of its look-alikes, full width, and split invisibly."""
    word = "tomorrow"
    out = [word[:i] + alike + word[i + 1:] for i, c in enumerate(word) for alike in _LOOKALIKE.get(c, [])[:6]]
    out += [_fullwidth(word), _fullwidth("Tomorrow"), _fullwidth("next week")]
    out += [word[:i] + z + word[i:] for i in range(1, len(word)) for z in INVISIBLE[:3]]
    return list(dict.fromkeys(out))


def disguised(d: date) -> list[str]:
    iso = f"{d:%Y-%m-%d}"
    out = [iso[:i] + z + iso[i:] for i in range(1, len(iso)) for z in INVISIBLE]
    out += [_fullwidth(iso), _fullwidth(f"{d:%Y/%m/%d}"), iso.replace("-", "\u2011"), iso.replace("-", "\uff0d")]
    return out


RELATIVE = [
    "in three more days", "in 3 more days", "in two more weeks", "in a few more hours", "within the next two days",
    "within 48 hours", "the coming week", "the coming weekend", "this coming month", "the upcoming sprint",
    "the coming Monday", "coming Friday", "in the coming weeks", "a week from Monday", "two days from Friday",
    "a week from next Tuesday", "three days from tomorrow", "overmorrow", "the day after tomorrow", "T+3d",
    "T+72h", "T + 2 days", "D+1", "D+3", "now+2d", "завтра", "послезавтра", "明天", "后天", "明日", "내일",
    "αύριο", "jutro", "zítra", "holnap", "yarın", "huomenna", "imorgon", "besok",
]
PAST_RELATIVE = [
    "three more days passed before it cleared", "Three days later it cleared.", "The coming of the new VPN went fine.",
    "a week ago Monday", "T-3d checklist done", "D-1 rehearsal done", "We waited two more days.",
    "The restore finished within 2 hours.", "Comingsoon.example.com answered.",
]

CLASSES = {
    "numeric (any separator, two-digit year, month/year)": (numeric, True),
    "ISO week and ordinal day": (week_and_ordinal, True),
    "epoch seconds and milliseconds, labelled": (epochs, True),
    "month names in other languages and scripts, CJK": (foreign, True),
    "zero-width and full-width ISO dates": (disguised, True),
}
FUTURE_CASES = [(cls, text) for cls, (make, _) in CLASSES.items() for d in FUTURE_DAYS for text in make(d)]
PAST_CASES = [(cls, text) for cls, (make, _) in CLASSES.items() for d in PAST_DAYS for text in make(d)]


def test_the_classes_are_large() -> None:
    per_class = {cls: sum(1 for c, _ in FUTURE_CASES if c == cls) for cls in CLASSES}
    assert all(n >= 50 for n in per_class.values()), per_class
    assert len(disguised_words()) >= 40 and len(RELATIVE) >= 35


@pytest.mark.parametrize(("cls", "written"), FUTURE_CASES)
def test_a_future_date_of_each_class_is_refused(cls: str, written: str) -> None:
    for sentence in SENTENCES:
        decision = dates.check_observation(sentence.format(written), now=NOW)
        assert not decision.allowed, (cls, sentence.format(written))
    assert dates.check_observation(SENTENCES[0].format(written), plan=True, now=NOW).allowed


@pytest.mark.parametrize(("cls", "written"), PAST_CASES)
def test_the_same_wording_of_a_past_day_is_allowed(cls: str, written: str) -> None:
    for sentence in SENTENCES:
        decision = dates.check_observation(sentence.format(written), now=NOW)
        assert decision.allowed, (cls, sentence.format(written), decision.reason)


@pytest.mark.parametrize("word", disguised_words())
def test_a_disguised_tomorrow_is_refused(word: str) -> None:
    decision = dates.check_observation(f"Verified: the cert rotates {word}.", now=NOW)
    assert not decision.allowed, ascii(word)


@pytest.mark.parametrize("wording", RELATIVE)
def test_relative_wording_ahead_is_refused(wording: str) -> None:
    for sentence in ("Status: green; the window opens {}.", "{} the reindex is complete", "Checked: {}"):
        assert not dates.check_observation(sentence.format(wording), now=NOW).allowed, sentence.format(wording)
    assert dates.check_observation(f"Reindex {wording}", plan=True, now=NOW).allowed


@pytest.mark.parametrize("text", PAST_RELATIVE)
def test_relative_wording_of_the_past_is_allowed(text: str) -> None:
    decision = dates.check_observation(text, now=NOW)
    assert decision.allowed, decision.reason


# Real tool output: every number that is not a labelled time stays a number.
TOOL_OUTPUT = [
    "id=1803520000 order=1803520000123 pid 1803520", "Call +1 415 555 1234 or 4155551234 (on-call)",
    "resourceVersion: \"1803520000\"", "uid: 2027a1b2-0301-4c3d-9e8f-202703010000", "nginx 1.27.3 -> 1.29.10",
    "commit eb20880817d3b5e59bb79cf69c81ce9e7a2d3bb1", "sha256:20270301aa", "10.20.27.3 answered", "port 2027 open",
    "helm v3.12.30 installed", "build 2025.03.1 of the calver tool", "size 1803520000 bytes", "ticket INC-2027-060",
    "Nov 30 11:59:01 vm1 systemd[2027]: Started backup.service.", "web-7d4b9c-x2 1/1 Running 0 5d",
    "format=1803520000", "chat: 1803520000", "repeat=1803520000",
]


@pytest.mark.parametrize("text", TOOL_OUTPUT)
def test_numbers_in_tool_output_are_not_dates(text: str) -> None:
    decision = dates.check_observation(text, now=NOW)
    assert decision.allowed, decision.reason

