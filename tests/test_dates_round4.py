"""The date check on issue #47 §6's classes, in this file's own spellings (not the outside bank's): each
class refused when it lies ahead, the same wording about the past allowed, and the judgement kept that a
future STATE or a plan worded as one is an ordinary observation (guards/dates/state.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from muninn.guards.dates import check as dates

NOW = datetime(2026, 12, 20, 8, 0, tzinfo=UTC)          # a Sunday morning
LENT = datetime(2027, 3, 20, 8, 0, tzinfo=UTC)          # Easter 2027 is 28 March
JUNE = datetime(2027, 6, 3, 12, 0, tzinfo=UTC)

AHEAD: dict[str, list[str]] = {
    "holidays in other languages": [
        "Zu Silvester gab es keine Alarme.", "Le jour de Noël, la restauration a réussi.",
        "Il giorno di Santo Stefano tutto ok.", "Op tweede kerstdag geen fouten gezien.", "Julafton: inga larm.",
        "平安夜确认无告警。", "On Hogmanay the job passed.", "Am 2. Weihnachtstag lief der Check grün.",
        "Nochevieja sin incidencias.", "En Año Nuevo todo funcionó.",
    ],
    "clock time later today, other languages": [
        "heute um 22:30 Uhr erfolgreich geprüft", "Hoy a las 23:15 terminó la copia.",
        "Vandaag om 22:00 gecontroleerd.", "今天22点检查完毕。", "сегодня в 23:00 проверено",
        "Ce soir à 11h tout était vert.", "Oggi alle 21:45 verificato.", "22h30 aujourd'hui : aucun incident.",
    ],
    "basic ISO with a time": ["20261221T0100Z done", "ran 20261222T090000+0100 fine", "stamp 20270105T1200"],
    "worded epoch": ["unix time 1798000000 exit 0", "epoch: 1798000000", "Unix timestamp 1798000000000 ok"],
    "quarters and halves": ["2027-Q2 audit passed", "H2 2027 numbers met", "1Q27 close done",
                            "second half of 2027 reviewed", "Q3/2027 review closed", "2. Quartal 2027 erledigt"],
    "apostrophe years": ["Verified 22 Dec '26.", "Checked December 23rd, '26: green.", "Jan ’27 close is done."],
    "a day alone with a clock time": ["the 22nd at 4pm all clear", "The twenty-second at 16:00: no errors."],
    "relative, other languages": [
        "Kommende Woche erfolgreich migriert.", "Mardi prochain, tout a fonctionné.",
        "La semana que viene se completó el cambio.", "Volgende week gecontroleerd: geen fouten.",
        "На следующей неделе всё проверено.", "下個月已完成遷移。", "来週に確認済み。", "Dans deux jours : vérifié.",
        "Tra tre giorni confermato.", "3天后确认无误。", "через неделю проверено", "다음 주 확인 완료.",
        "Übernächste Woche lief alles.",
    ],
    "era years": ["令和9年1月5日に確認済み。", "民国116年1月完成。", "BE 2570 audit closed.",
                  "ตรวจแล้ว 5 มกราคม 2570"],
    # A state cue lets a date or "in N units" through, not a forward keyword: "Due nxt week." has been
    # refused since round 2 (tests/test_redteam_round2.py), and these are the same wording.
    "a state with a forward keyword": ["Maintenance is scheduled for next Tuesday.", "The review is tomorrow."],
    "future events still refused beside a state": [
        "Valid until the 22nd, verified on the 23rd.", "Tomorrow's run passed.",
        "The cert renews in two days, confirmed.", "Verified on Christmas Day: all green.",
        "I will confirm the backup passed on the 23rd.", "Verified: no bounce will arrive after midnight on the 22nd.",
        "Checked, the backup is due on the 22nd and it passed.", "Upcoming check on the 22nd passed.",
        "Deadline 2026-12-22 met, verified.", "Confirmed the run set for 2026-12-22 completed.",
        "The job ends on the 22nd successfully.", "Status is 2026-12-22: all green.",
    ],
}
ALLOWED: dict[str, list[str]] = {
    "the same classes, past": [
        "Zu Silvester 2025 gab es keine Alarme.", "Am Nikolaustag lief der Check grün.",
        "heute um 07:30 Uhr erfolgreich geprüft", "Hoy a las 06:15 terminó la copia.", "今天7点检查完毕。",
        "20261219T0100Z done", "unix time 1765000000 exit 0", "Q3 2026 audit passed", "H2 2026 numbers met",
        "Verified 12 Dec '26.", "the 12th at 4pm all clear", "Letzte Woche erfolgreich migriert.",
        "La semana pasada se completó.", "上周一迁移已完成。", "令和8年12月1日に確認済み。", "平成元年の記録",
        "民國115年11月完成。", "ตรวจแล้ว 5 ธันวาคม 2569",
    ],
    "an ordinal with a possessive or a noun is no day": [
        "He celebrated his 40th at the lake.", "My second try worked.", "Their third release shipped.",
        "She ran her first half marathon.", "Our 25th anniversary dinner was lovely.",
    ],
    "last and past occurrences": [
        "Last Christmas the UPS failed.", "This past Boxing Day the heating broke.",
        "Letzte Weihnachten fiel der Server aus.", "Last New Year's Eve the fireworks tripped the breaker.",
    ],
    "a future state": [
        "The cert is valid until 2027-06-30.", "Token expires on 2027-01-15.", "The invoice is due on the 28th.",
        "The licence expires in 45 days; ticket opened.",
        "Das Zertifikat ist gültig bis 31.03.2027.", "Le certificat est valable jusqu'au 1 mars 2027.",
        "The window is on the 28th.",
    ],
    "a past act naming a future event": [
        "Prepared the runbook for next week's failover drill.", "Booked the room for tomorrow's retro.",
    ],
    "a plan worded as a plan": [
        "She is planning a trip to Lisbon next month.", "He will attend the conference next week.",
        "They are hosting a meetup on the 28th.", "Nate mentioned his upcoming tournament on 30 December.",
    ],
    "durations in other languages": ["In zwei Tagen erledigt.", "En dos días se completó.", "за два дня сделали"],
}


@pytest.mark.parametrize("text", [t for ts in AHEAD.values() for t in ts])
def test_refused_when_ahead(text: str) -> None:
    now = LENT if text in EASTER else NOW
    assert not dates.check_observation(text, now=now).allowed, text


EASTER = ["Karfreitag lief alles.", "Le lundi de Pâques, tout est passé.", "Viernes Santo: sin errores.",
          "Am Ostermontag kein Alarm."]


@pytest.mark.parametrize("text", EASTER)
def test_movable_holidays(text: str) -> None:
    assert not dates.check_observation(text, now=LENT).allowed, text
    assert dates.check_observation(text, now=JUNE).allowed, text


@pytest.mark.parametrize("text", [t for ts in ALLOWED.values() for t in ts])
def test_allowed(text: str) -> None:
    verdict = dates.check_observation(text, now=NOW)
    assert verdict.allowed, (text, verdict.reason)


def test_plans_pass_whatever_they_say() -> None:
    for text in [t for ts in AHEAD.values() for t in ts]:
        assert dates.check_observation(text, now=NOW, plan=True).allowed


@pytest.mark.parametrize(("text", "allowed"), [
    ("The relay check is planned for the 19th and passed.", False),
    ("Relay check planned for the 19th: passed.", False),
    ("Scheduled for the 19th and completed without errors.", False),
    ("Verified: no bounce for the 19th.", False),
    ("Booked a table for the 19th.", True),
    ("We are preparing the migration for the 19th.", True),
    ("She tried for the 19th time.", True),
])
def test_a_day_named_by_for_is_an_event_only_with_an_outcome(text: str, allowed: bool) -> None:
    now = datetime(2026, 12, 18, 10, 0, tzinfo=UTC)
    assert dates.check_observation(text, now=now).allowed is allowed
