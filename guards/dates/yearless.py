"""Dates written without a year, read as the nearest such day to the moment of writing (guards/dates/check.py
refuses the observation when that day lies ahead). The seed's own incident: "no bounce arrived after
midnight UTC on the 19th", written fourteen hours before the 19th.

Classes read, each in the view the check gives (as written, NFKC, look-alikes resolved):
- a day and a month name, either order, in any language dateparser's locales spell a month in
  (`19 December`, `Dec 19`, `December the 19th`, `the 19th of December`, `am 19. Dezember`,
  `le 19 décembre`, `19 декабря`), and CJK (`12月19日`, `12월 19일`), when no year follows;
- a day of the month alone after a word that places something on a day or a weekday (`on the 19th`, `by the 3rd`,
  `until the twenty-first`, `Saturday the 19th`, `Sat 19th`, `Saturday 19,`, German `am 19.`), not when a noun
  follows (`the 19th floor`, `the 3rd attempt`); with a weekday, the day that falls on it, or the plain reading
  if that is earlier;
- a day and a month in numbers where they are placed as a day or come with a time (`on 19/12`, `12/19 at
  23:00`, `am 19.12.`, `Sat 19/12`, ISO's `--12-19`), not `3/4 of the hosts`, `12/19 tests passed` or a version
  (`runs on 3.11`). `19/12` and `12/19` read one way; `12/11` reads both, and is refused only when both
  readings lie ahead (no setting names a locale's order, and a false refusal loses a true observation);
- CJK numerals for the month and day (`十二月十九日`); digits of any script come as ASCII in the check's
  second view (`١٩ ديسمبر`, `१९ December`);
- holidays with a fixed day or Easter's (`on Christmas Day`, `New Year's Eve`, `Halloween`, `Good Friday`);
- a clock time today (`at 23:00 tonight`, `today at 9pm`, `this evening at 21:30 UTC`), in the zone the
  text names, else the host's own (the agent writes on this host).

"Nearest that makes sense for a report": a day and month is read in last year, this year and next, a day
alone in last month, this month and next; a report speaks of the past, so the latest day not after now
counts unless the next one is `PAST_FAVOUR` times nearer. "On the 19th" written on the 18th is tomorrow;
"since the 2nd" written on the 18th is this month's 2nd; "May 19" written in December is last May.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from dateutil.easter import easter

Found = tuple[str, datetime, bool]      # as written, the moment it means, date-only?
# A report speaks of the past: the day ahead counts only when it is this many times nearer than the day
# behind (evals/results/dates.md measures 1 to 4 on LoCoMo, the sample notes and observation logs).
PAST_FAVOUR = 3

_ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
             "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth").split()
_ORDINAL = {w: i for i, w in enumerate(_ORDINALS, start=1)}
_ORDINAL.update({f"twenty-{w}": 20 + i for i, w in enumerate(_ORDINALS[:9], start=1)})
_ORDINAL.update({f"twenty {w}": 20 + i for i, w in enumerate(_ORDINALS[:9], start=1)})
_ORDINAL.update({"thirtieth": 30, "thirty-first": 31, "thirty first": 31})
_ORDINAL_WORDS = "|".join(sorted(_ORDINAL, key=len, reverse=True)).replace(" ", r"\s+")
_NUM_DAY = r"(?:0?[1-9]|[12]\d|3[01])"
_DAY = rf"(?:{_NUM_DAY}(?:st|nd|rd|th|er|e|º|\.)?|{_ORDINAL_WORDS})"
# A month's name: letters, and the vowel signs Indic and Thai scripts write them with (`दिसंबर`, `ডিসেম্বর`),
# which are marks, not letters, to `re`.
LETTER = "(?:[^\\W\\d_]|[\u0300-\u036f\u0900-\u0dff\u0e00-\u0e7f])"
_WORD = rf"{LETTER}{{3,16}}(?!{LETTER})\.?"
_NO_YEAR = r"(?!,?\s*(?:de\s+|of\s+)?'?\d{2,4}\b)(?![\w:/-]\d)"
_DAY_MONTH = re.compile(rf"\b(?:the\s+)?(?P<d>{_DAY})\s+(?:of\s+|de\s+)?(?P<m>{_WORD}){_NO_YEAR}", re.I)
_MONTH_DAY = re.compile(rf"\b(?P<m>{_WORD})\s+(?:the\s+)?(?P<d>{_DAY})(?![\w])(?!\.\d){_NO_YEAR}", re.I)
_CJK = re.compile(r"(?<![年년\d])\s*(?P<m>1[0-2]|0?[1-9])\s*[月월]\s*(?P<d>3[01]|[12]\d|0?[1-9])\s*[日号일]")
# Chinese and Japanese numerals for a month or day (`十二月十九日`), read as digits before `_CJK`.
_CJK_NUMBER = re.compile(r"[一二三四五六七八九十]{1,3}(?=\s*[月日号])")
_CJK_DIGIT = {c: i for i, c in enumerate("一二三四五六七八九", start=1)}


def _cjk_number(m: re.Match[str]) -> str:
    tens, _, ones = m.group(0).rpartition("十")
    if "十" not in m.group(0):
        return str(_CJK_DIGIT.get(ones, 0)) if len(ones) == 1 else m.group(0)
    value = (_CJK_DIGIT.get(tens, 0) if tens else 1) * 10 + (_CJK_DIGIT.get(ones, 0) if ones else 0)
    return str(value) if len(tens) <= 1 and len(ones) <= 1 else m.group(0)


_WEEKDAYS = ("monday tuesday wednesday thursday friday saturday sunday montag dienstag mittwoch donnerstag freitag "
             "samstag sonntag").split()
_WEEKDAY_ABBR = "mon tue tues wed thu thur thurs fri sat sun".split()
_WEEKDAY = "|".join(sorted(_WEEKDAYS + _WEEKDAY_ABBR, key=len, reverse=True))
# A day alone, after a word that puts something on a day or a weekday ("Saturday the 19th", "Sat 19th"); a
# following noun makes it a count ("the 3rd try").
_ON_DAY = re.compile(
    rf"\b(?:on|by|until|till|til|before|after|since|from|through|thru|due|as\s+of|starting|during|into"
    rf"|(?:for|at)(?=\s+the\s+\d)"
    rf"|(?P<wd>{_WEEKDAY})\.?,?)\s+(?:the\s+)?"
    rf"(?P<d>{_NUM_DAY}(?:st|nd|rd|th)|{_ORDINAL_WORDS})\b(?!-)", re.I)
# A weekday and a bare day number that ends the phrase or comes with a time: "Saturday 19", "Sat. 19,",
# "Sat 19 at 02:00"; not "Sat 3 people" (a count), "Sat 19 Dec" (the month form reads it) or "Sat 19.12" (numeric).
_CLOCK_AFTER = r"\s+(?:at\s+|um\s+|à\s+|@\s*)?(?:(?:[01]?\d|2[0-3])[:h][0-5]\d|(?:1[0-2]|0?[1-9])\s*[ap]\.?m\b\.?)"
_WEEKDAY_NUMBER = re.compile(
    rf"\b(?P<wd>{_WEEKDAY})\.?,?\s+(?P<d>{_NUM_DAY})(?![\d/]|[.,:-]\d)"
    rf"(?=[ \t]*(?:[,;:)!?]|\.(?!\d)|$)|[ \t]+(?:and|but)\b|{_CLOCK_AFTER})", re.I | re.M)
# A day alone in German, its number ending in a dot: "am 19.", "bis zum 20." (not "am 19. Dezember", the month form's).
_GERMAN_DAY = re.compile(rf"\b(?:am|vom|zum|bis\s+zum|ab\s+dem|seit\s+dem)\s+(?P<d>{_NUM_DAY})\.(?!\d|\.\d)", re.I)
# A day and a month in numbers, no year. Read only where the numbers are placed as a day: after a word that
# places something on a day or a weekday (`on 19/12`, `am 19.12.`, `Sat 19/12`), or with a time after them
# (`12/19 at 23:00`, `19.12. 18:30`). `/` reads both orders, `.` and `-` day first (`-` only with a time).
# `3/4 of the hosts`, `12/19 tests passed`, `runs on 3.11`, `on 22.04. Next…` (a version ending a sentence) stay.
_PLACE_WORDS = ("on until till til before after since from through thru due starting dated ending "
                "am vom bis zum ab seit le du au el del hasta desde il dal op tot vanaf sinds до في").split()
# Where a German (or Russian) `19.12` needs no final dot.
_DOT_PLACE_WORDS = frozenset(("am", "vom", "bis", "zum", "bis zum", "до"))
_NUMERIC = re.compile(
    rf"(?:\b(?P<ctx>(?:bis\s+zum|as\s+of|{'|'.join(_PLACE_WORDS)}|{_WEEKDAY}))\.?,?\s+|(?<![\w/.:,-]))"
    r"(?P<a>\d{1,2})(?P<s>[/.-])(?P<b>\d{1,2})(?P<dot>\.)?(?![\d/]|[.,-]\d)"
    rf"(?P<clock>{_CLOCK_AFTER}\b)?", re.I)
# A day alone with a clock time after it: "the 20th at 03:00", "the 3rd @ 9pm" (a possessive before it
# makes it a count: "her 30th at 8pm" is a birthday party).
_DAY_AT_CLOCK = re.compile(
    rf"(?<!\w)(?<!her\s)(?<!his\s)(?<!my\s)(?<!our\s)(?<!their\s)(?<!your\s)(?<!its\s)"
    rf"(?:the\s+)?(?P<d>{_NUM_DAY}(?:st|nd|rd|th)|{_ORDINAL_WORDS}),?{_CLOCK_AFTER}", re.I)
_APOSTROPHE_HINT = re.compile(r"['’‘`´]\d\d(?!\d)")
# A year written with an apostrophe: "Dec 20 '26", "20 December '26", "Dec '26".
_APOSTROPHE_YEAR = re.compile(
    rf"\b(?:(?:the\s+)?(?P<d1>{_DAY})\s+(?:of\s+)?(?P<m1>{_WORD})|(?P<m2>{_WORD})(?:\s+(?:the\s+)?(?P<d2>{_DAY}))?)"
    r",?\s*['’‘`´](?P<y>\d{2})(?![\w'’])", re.I)
_ISO_NO_YEAR = re.compile(r"(?<![\w-])--(?P<m>0[1-9]|1[0-2])-(?P<d>0[1-9]|[12]\d|3[01])(?![\w-])")
# Nouns an ordinal counts ("the 19th floor", "after the 3rd attempt"): then it is no day of the month.
_COUNTED = frozenset("floor floors time times attempt attempts try tries retry retries run runs round rounds place "
                     "step steps item items line lines row rows column page pages chapter section percentile "
                     "century anniversary birthday generation edition version release iteration node host server "
                     "one ones person user call calls request requests reboot restart level grade inning lap "
                     "of".split())
_OF_MONTH = re.compile(r"\s+of\s+(?:this|the|that)\s+month\b", re.I)   # "on the 19th of this month": a day
_NEXT_WORD = re.compile(r"\s*([^\W\d_]+)")
# Holidays by the day they fall on, in the languages their names are written in: a fixed day (month, day),
# or Easter's (Western) shifted by days, or Thanksgiving's rule. Orthodox Christmas is 7 January.
_FIXED: dict[tuple[int, int], str] = {
    (12, 24): "christmas eve|xmas eve|heiligabend|heiliger abend|heiligen abend|nochebuena|veille de noël|"
              "réveillon de noël|vigilia di natale|la vigilia|kerstavond|julafton|juleaften|julaften|jouluaatto|"
              "wigilia|wigilię|štědrý den|véspera de natal|noite de natal|평안의 밤|크리스마스 이브|平安夜|"
              "クリスマスイブ|クリスマス・イブ",
    (12, 25): "christmas day|christmas|xmas|weihnachten|weihnachtstag|erster weihnachtstag|1. weihnachtstag|"
              "noël|jour de noël|navidad|día de navidad|natale|giorno di natale|dia de natal|kerstmis|kerstdag|"
              "eerste kerstdag|juldagen|juledag|første juledag|joulupäivä|boże narodzenie|圣诞节|聖誕節|圣诞|聖誕|"
              "クリスマス|크리스마스|성탄절",
    (12, 26): "boxing day|st stephen's day|st. stephen's day|saint stephen's day|stephen's day|zweiter weihnachtstag|"
              "2. weihnachtstag|stephanstag|stefanitag|santo stefano|sant esteve|san esteban|tweede kerstdag|"
              "annandag jul|annandagen|anden juledag|andre juledag|tapaninpäivä|drugi dzień świąt|"
              "lá fhéile stiofáin|saint-étienne",
    (12, 31): "new year's eve|new years eve|silvester|sylvester|silvesterabend|nochevieja|saint-sylvestre|"
              "la saint sylvestre|réveillon du nouvel an|san silvestro|oudejaarsavond|oudjaar|nyårsafton|"
              "nytårsaften|nyttårsaften|uudenvuodenaatto|sylwester|hogmanay|大晦日|跨年夜",
    (1, 1): "new year's day|new years day|neujahr|neujahrstag|jour de l'an|nouvel an|año nuevo|capodanno|"
            "dia de ano novo|ano novo|nieuwjaarsdag|nieuwjaar|nyårsdagen|nytårsdag|uudenvuodenpäivä|nowy rok|"
            "новый год|元旦|元日|새해 첫날",
    (1, 6): "epiphany|heilige drei könige|dreikönigstag|épiphanie|día de reyes|epifania|befana|driekoningen|"
            "trettondedag jul|trettondagen|loppiainen|trzech króli",
    (1, 7): "orthodox christmas|рождество христово|рождество",
    (2, 14): "valentine's day|valentines day|valentinstag|saint-valentin|san valentín|san valentino|"
             "valentijnsdag|alla hjärtans dag|walentynki|情人节|情人節|バレンタインデー|밸런타인데이",
    (3, 17): "st patrick's day|st. patrick's day|saint patrick's day|paddy's day|lá fhéile pádraig",
    (5, 1): "may day|tag der arbeit|maifeiertag|fête du travail|primero de mayo|día del trabajo|primo maggio|"
            "festa dei lavoratori|dia do trabalhador|dag van de arbeid|första maj|vappu|święto pracy|"
            "первомай|劳动节|勞動節",
    (7, 4): "independence day|fourth of july|4th of july",
    (7, 14): "bastille day|fête nationale",
    (8, 15): "assumption day|mariä himmelfahrt|ferragosto|assomption|asunción|assunzione|maria-tenhemelopneming|"
             "wniebowzięcie",
    (10, 3): "tag der deutschen einheit",
    (10, 31): "halloween|reformationstag",
    (11, 1): "all saints' day|all saints day|allerheiligen|toussaint|todos los santos|ognissanti|"
             "dia de todos os santos|alla helgons dag|pyhäinpäivä|wszystkich świętych",
    (11, 11): "armistice day|veterans day|remembrance day|martinstag|st. martin's day|saint-martin|"
              "sint-maarten|光棍节",
    (12, 6): "nikolaustag|st. nicholas day|saint nicholas day|saint-nicolas|san nicolás|sinterklaas",
    (12, 8): "immaculate conception|inmaculada concepción|immacolata|mariä empfängnis",
}
_EASTER: dict[int, str] = {
    -48: "rosenmontag|carnival monday",
    -47: "shrove tuesday|mardi gras|pancake day|faschingsdienstag|fastnachtsdienstag|martes de carnaval|"
         "martedì grasso|carnaval|karneval|carnevale",
    -46: "ash wednesday|aschermittwoch|mercredi des cendres|miércoles de ceniza|mercoledì delle ceneri|"
         "aswoensdag|askonsdag|popielec",
    -7: "palm sunday|palmsonntag|rameaux|domingo de ramos|domenica delle palme|palmzondag|palmesøndag",
    -3: "maundy thursday|holy thursday|gründonnerstag|jeudi saint|jueves santo|giovedì santo|witte donderdag|"
        "skärtorsdag|skærtorsdag|wielki czwartek",
    -2: "good friday|karfreitag|vendredi saint|viernes santo|venerdì santo|sexta-feira santa|goede vrijdag|"
        "långfredag|langfredag|pitkäperjantai|wielki piątek|受难日|聖金曜日",
    -1: "holy saturday|karsamstag|sábado santo|sabato santo|stille zaterdag|påskafton|wielka sobota",
    0: "easter sunday|easter|ostersonntag|ostern|pâques|dimanche de pâques|pascua|domingo de pascua|pasqua|"
       "páscoa|pasen|paaszondag|påskdagen|påsk|påske|pääsiäinen|wielkanoc|复活节|復活節|イースター|부활절",
    1: "easter monday|ostermontag|lundi de pâques|lunes de pascua|pasquetta|lunedì dell'angelo|"
       "tweede paasdag|paasmaandag|annandag påsk|anden påskedag|poniedziałek wielkanocny",
    39: "ascension day|christi himmelfahrt|ascension|ascensión|ascensione|hemelvaartsdag|kristi himmelsfärdsdag|"
        "wniebowstąpienie",
    49: "pentecost|whit sunday|whitsunday|pfingsten|pfingstsonntag|pentecôte|pentecostés|pentecoste|pinksteren|"
        "pingstdagen|pinse|zielone świątki",
    50: "whit monday|pfingstmontag|lundi de pentecôte|lunes de pentecostés|lunedì di pentecoste|"
        "tweede pinksterdag|pinsemandag",
    60: "corpus christi|fronleichnam|fête-dieu|jueves de corpus",
}
_HOLIDAYS: dict[str, tuple[int, int] | str] = {}
for _day_of, _names in _FIXED.items():
    _HOLIDAYS.update({n: _day_of for n in _names.split("|")})
for _shift, _names in _EASTER.items():
    _HOLIDAYS.update({n: f"easter{_shift:+d}" for n in _names.split("|")})
_HOLIDAYS.update({n: "thanksgiving" for n in ("thanksgiving", "thanksgiving day")})


def _holiday_key(name: str) -> str:
    return re.sub(r"[.'’\s-]", "", name.lower())


_HOLIDAY_KEYS = {_holiday_key(n): rule for n, rule in _HOLIDAYS.items()}


def _holiday_name(name: str) -> str:
    pattern = re.escape(name).replace(r"\ ", r"[\s-]*").replace("'", "['’]?").replace(r"\.", r"\.?")
    pattern = pattern.replace(r"\-", r"[\s-]*")
    # Scripts written without spaces (`平安夜にバックアップ`) have no word boundary to look for.
    if any("\u3040" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af" for c in name):
        return pattern
    return rf"(?<!\w){pattern}(?!\w)"


_HOLIDAY = re.compile("(?:" + "|".join(_holiday_name(h) for h in sorted(_HOLIDAYS, key=len, reverse=True)) + ")"
                      r"(?!\s*,?\s*\d{4})", re.I)
# Three hundred names in one alternation are slow when tried at every position: it is tried only
# where a word starts that begins a name (or, for scripts without spaces, where its first character is).
_HOLIDAY_FIRST = frozenset(re.split(r"[\s'’.-]", h)[0] for h in _HOLIDAYS if h.isascii() or " " in h or
                           not any("\u3040" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af" for c in h))
_HOLIDAY_CJK_FIRST = frozenset(h[0] for h in _HOLIDAYS if h[0] >= "\u3040")
_WORD_START = re.compile(r"(?<!\w)\w+")


def _holidays_in(text: str) -> Iterator[re.Match[str]]:
    for w in _WORD_START.finditer(text):
        if w.group(0).lower() in _HOLIDAY_FIRST and (m := _HOLIDAY.match(text, w.start())):
            yield m
    if any(c in _HOLIDAY_CJK_FIRST for c in text):
        for i, c in enumerate(text):
            if c in _HOLIDAY_CJK_FIRST and (m := _HOLIDAY.match(text, i)):
                yield m


# "last Christmas", "this past Easter", "letzte Weihnachten": the one behind, whichever is nearer.
_PAST_WORD = re.compile(r"(?:last|past|previous|letzte[nmrs]?|vergangene[nmrs]?|dernier|dernière|pasad[oa]|"
                        r"scors[oa]|passat[oa]|vorig[e]?|förra|прошл\w+)\s+$", re.I)
_HOLIDAY_YEAR = re.compile(r"\s*(?:day|eve)?\s*,?\s*(?:of\s+)?'?\d{2,4}\b", re.I)
_CLOCK = r"(?P<h>2[0-3]|[01]?\d)(?:[:.h](?P<mi>[0-5]\d))?(?!\d)\s*(?P<ap>[ap]\.?m\.?)?"
_ZONE = r"(?:\s*(?P<z>UTC|GMT|Z)\b)?"
_TODAY = r"(?:tonight|today|this\s+(?:evening|afternoon|morning))"
_LATER_TODAY = re.compile(rf"\bat\s+{_CLOCK}{_ZONE}\s+{_TODAY}\b|\b{_TODAY}\s+at\s+"
                          + (_CLOCK + _ZONE).replace(">", "2>"), re.I)
# The same in other languages, either order, a word or two apart in one clause: "aujourd'hui à 21h00",
# "à 21h00 aujourd'hui", "heute um 21 Uhr", "hoy a las 21:00", "stasera alle 21", "vandaag om 21:00",
# "сегодня в 21:00", "今天21点", "今夜21時". An evening word makes a morning hour the evening's.
_EVENING = (r"ce\s+soir|heute\s+abend|heute\s+nacht|esta\s+noche|stasera|questa\s+sera|hoje\s+[àa]\s+noite|"
            r"esta\s+noite|vanavond|vannacht|сегодня\s+вечером|вечером|今晚|今夜|今晩|오늘\s*밤")
_FOREIGN_TODAY = (rf"{_EVENING}|aujourd['’]\s?hui|cet\s+apr[eè]s-midi|heute(?:\s+nachmittag)?|hoy|esta\s+tarde|"
                  r"oggi(?:\s+pomeriggio)?|hoje|vandaag|vanmiddag|сегодня|今天|今日|本日|오늘")
_FOREIGN_CLOCK = (r"(?P<h>2[0-3]|[01]?\d)\s*(?:[:：hH]\s*(?P<mi>[0-5]\d)?|\s*uhr(?:\s*(?P<mi2>[0-5]\d))?|"
                  r"\s*heures?|\s*[点點時时시](?:\s*(?P<mi3>[0-5]?\d)\s*[分분])?(?P<half>半)?)(?!\d)")
_CLOCK_PREP = r"(?:(?:à|a\s+las|a\s+la|alle|às|as|um|gegen|vers|om|в|о|at)\s+)?"
_WORDS_BETWEEN = r"(?:[\s,]+[^\W\d][\w'’-]*){0,2}?[\s,]*"
_TODAY_HINT = re.compile(_FOREIGN_TODAY, re.I)
_LATER_TODAY_FOREIGN = re.compile(
    rf"(?<!\w)(?P<today>{_FOREIGN_TODAY})(?:\s*(?:的|の|に|は)?\s*(?:晚上|下午|夜)?){_WORDS_BETWEEN}{_CLOCK_PREP}"
    rf"{_FOREIGN_CLOCK}"
    rf"|(?<![\w:]){_FOREIGN_CLOCK.replace('(?P<', '(?P<x')}{_WORDS_BETWEEN}(?P<xtoday>{_FOREIGN_TODAY})(?!\w)",
    re.I)
_NOT_MONTHS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun "
    "and for since from until version release build ago set the day days may".split()
    # English possessives and pronouns some locale spells a month as ("her" is September in one): "her 30th"
    # is a birthday, "her first steps" a count.
    + "her his its our their your my him she they them this that these those one each every any".split())


_VERBS = frozenset({"may", "march"})   # English months that are verbs too: a lower-case one before a number


@functools.cache
def _month_numbers() -> dict[str, int]:
    """Every month name and abbreviation dateparser's locales spell, lower case -> its month (a name
    two locales give different months is left out: it names no month for sure)."""
    from dateparser.data import language_order
    from dateparser.languages.loader import default_loader

    months = ("january february march april may june july august september october november december").split()
    out: dict[str, int] = {}
    clash: set[str] = set()
    first = ["en", "de", "fr", "es", "it", "nl", "pt"]     # their names win a clash with a rarer locale's
    settled: set[str] = set()
    for lang in [*first, *(x for x in language_order if x not in first)]:
        info = default_loader.get_locale(lang).info
        for n, month in enumerate(months, start=1):
            for name in info.get(month, []):
                key = name.lower().strip(".")
                if len(key) < 3 or (key in settled and lang not in first):
                    continue
                if out.get(key, n) != n:
                    clash.add(key)
                out[key] = n
                if lang in first:
                    settled.add(key)
    out = {k: v for k, v in out.items() if k not in clash and k not in _NOT_MONTHS}
    out["may"] = 5        # the month, when a day stands beside it ("19 May", "May 19th")
    return out


def _day_number(text: str) -> int | None:
    word = " ".join(text.lower().rstrip(".").split())
    if word in _ORDINAL:
        return _ORDINAL[word]
    digits = re.match(r"\d+", word)
    return int(digits.group(0)) if digits else None


def _safe(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def nearest(candidates: list[date], now: datetime) -> datetime | None:
    """The reading a report means, at 00:00 UTC: the nearest past day (today included), unless the next
    day ahead is nearer by more than `PAST_FAVOUR` times (distances to each day's midday)."""
    days = sorted(datetime.combine(d, time(), UTC) for d in candidates)
    past = [d for d in days if d <= now]
    ahead = [d for d in days if d > now]
    if not past or not ahead:
        return (past or ahead or [None])[-1 if past else 0]
    before, after = past[-1], ahead[0]
    gap = lambda d: abs(d + timedelta(hours=12) - now)  # noqa: E731
    return after if gap(after) * PAST_FAVOUR < gap(before) else before


def _month_day(m: int, d: int, now: datetime) -> datetime | None:
    return nearest([x for y in (now.year - 1, now.year, now.year + 1) if (x := _safe(y, m, d))], now)


def _day_alone(d: int, now: datetime) -> datetime | None:
    # Two months back: on 2 March, "the 30th" behind is January's (February has none).
    months = [(now.year + (now.month - 1 + k) // 12, (now.month - 1 + k) % 12 + 1) for k in (-2, -1, 0, 1)]
    return nearest([x for y, m in months if (x := _safe(y, m, d))], now)


def _weekday_day(d: int, weekday: str, now: datetime) -> datetime | None:
    """A day beside its weekday: the nearest such day that falls on it, or the plain reading if that is
    earlier (a wrong weekday is a slip as often as the day is)."""
    plain = _day_alone(d, now)
    key = weekday.lower().rstrip(".,")
    names = [w[:3] for w in _WEEKDAYS[:7]]
    german = [w[:3] for w in _WEEKDAYS[7:]]
    wanted = names.index(key[:3]) if key[:3] in names else german.index(key[:3]) if key[:3] in german else None
    if wanted is None:
        return plain
    months = [(now.year + (now.month - 1 + k) // 12, (now.month - 1 + k) % 12 + 1) for k in (-3, -2, -1, 0, 1)]
    fitting = [x for y, m in months if (x := _safe(y, m, d)) and x.weekday() == wanted]
    read = nearest(fitting, now) if fitting else None
    return min((x for x in (plain, read) if x is not None), default=None)


def _numeric(m: re.Match[str], now: datetime) -> datetime | None:
    ctx = " ".join((m.group("ctx") or "").lower().split())
    if not ctx and not m.group("clock"):
        return None
    if m.group("s") == "-" and not m.group("clock"):
        return None                 # `12-19` is a range as often
    if m.group("s") == "/" and re.match(r"\s+of\b", m.string[m.end():]):
        return None                 # "on 2/3 of the nodes": a fraction
    weekday = bool(ctx) and re.fullmatch(_WEEKDAY, ctx) is not None
    # Elsewhere a dotted pair is a version (`3.11`, `22.04`) unless a final dot follows and the sentence goes
    # on: "on 19.12. the alerts stopped", not "running on 22.04. Next".
    sentence_goes_on = m.group("dot") and re.match(r"(?:,|\s+[a-z])", m.string[m.end():])
    if m.group("s") == "." and not (m.group("clock") or weekday or ctx in _DOT_PLACE_WORDS or sentence_goes_on):
        return None
    if ctx and len(ctx) <= 4 and ctx in _WEEKDAY_ABBR and not m.group("ctx")[0].isupper():
        return None                 # "sat", "sun" lower case are words
    a, b = int(m.group("a")), int(m.group("b"))
    orders = [(b, a), (a, b)] if m.group("s") == "/" else [(b, a)]
    readings = [x for mo, d in orders if 1 <= mo <= 12 and (x := _month_day(mo, d, now)) is not None]
    return min(readings, default=None)     # both orders read: refused only when each lies ahead


def _holiday(rule: tuple[int, int] | str, now: datetime, past: bool = False) -> datetime | None:
    """The nearest day the holiday falls on (see `nearest`); with `past` ("last Christmas"), the one behind."""
    years = (now.year - 1, now.year, now.year + 1)
    if isinstance(rule, tuple):
        days = [x for y in years if (x := _safe(y, *rule))]
    elif rule == "thanksgiving":      # the fourth Thursday of November
        days = [date(y, 11, 1) + timedelta(days=(3 - date(y, 11, 1).weekday()) % 7 + 21) for y in years]
    else:
        days = [easter(y) + timedelta(days=int(rule[6:] or 0)) for y in years]
    if past:
        behind = [d for d in days if datetime.combine(d, time(), UTC) <= now]
        return datetime.combine(max(behind), time(), UTC) if behind else None
    return nearest(days, now)


def _later_today(m: re.Match[str], now: datetime, local: tzinfo) -> datetime | None:
    h, mi, ap, z = (next((m.group(g) for g in (f"{name}", f"{name}2") if g in m.groupdict() and m.group(g)), None)
                    for name in ("h", "mi", "ap", "z"))
    if h is None:
        return None
    hour = int(h) % 12 + (12 if ap and ap.lower().startswith("p") else 0) if ap else int(h)
    if not ap and hour < 12 and re.search(r"tonight|evening|afternoon", m.group(0), re.I):
        hour += 12            # "at 9 tonight" is 21:00
    zone = UTC if z else local
    today = now.astimezone(zone).date()
    return datetime.combine(today, time(hour, int(mi or 0)), zone).astimezone(UTC)


def _later_today_foreign(m: re.Match[str], now: datetime, local: tzinfo) -> datetime:
    g = {k.removeprefix("x"): v for k, v in m.groupdict().items() if v is not None}
    hour = int(g["h"])
    minute = 30 if g.get("half") else int(g.get("mi") or g.get("mi2") or g.get("mi3") or 0)
    if hour < 12 and re.fullmatch(_EVENING, g["today"], re.I):
        hour += 12        # "ce soir à 9h" is 21:00
    return datetime.combine(now.astimezone(local).date(), time(hour, minute), local).astimezone(UTC)


def yearless_times(text: str, now: datetime, local: tzinfo | None = None) -> Iterator[Found]:
    """Each date without a year in `text`, read as the nearest such day to `now` (see the module)."""
    months = _month_numbers()
    for pattern in (_DAY_MONTH, _MONTH_DAY):
        for m in pattern.finditer(text):
            if pattern is _MONTH_DAY and m.group("m").lower() in _VERBS and not m.group("m")[0].isupper():
                continue      # "we may 20 times", "march 3 miles": a verb before a count
            month, day = months.get(m.group("m").lower().rstrip(".")), _day_number(m.group("d"))
            if month and day and (moment := _month_day(month, day, now)) is not None:
                yield m.group(0), moment, True
    cjk = _CJK_NUMBER.sub(_cjk_number, text) if "月" in text else text
    for m in _CJK.finditer(cjk):
        if cjk[:m.start()].rstrip()[-1:] in ("年", "년") or cjk[:m.start()].rstrip()[-1:].isdigit():
            continue          # the year is there: guards/dates/grammar.py reads it
        if (moment := _month_day(int(m.group("m")), int(m.group("d")), now)) is not None:
            yield m.group(0).strip(), moment, True
    for m in (*_ON_DAY.finditer(text), *_WEEKDAY_NUMBER.finditer(text)):
        wd = m.group("wd")
        if wd and wd.lower() in _WEEKDAY_ABBR and not wd[0].isupper():
            continue          # "we sat 3rd", "sun 19": a lower-case abbreviation is a word
        after = _NEXT_WORD.match(text, m.end())
        if after and text[m.end():after.start(1)].strip() == "" and after.group(1).lower() in _COUNTED \
                and not _OF_MONTH.match(text, m.end()):
            continue          # "the 19th floor", "after the 3rd attempt": a count, not a day
        if m.re is _ON_DAY and after and text[m.end():after.start(1)].strip() in ("", "of") \
                and after.group(1).lower().rstrip(".") in months:
            continue          # "Sat 19th Dec": the month form reads it, with its year if one follows
        day = _day_number(m.group("d"))
        moment = (_weekday_day(day, wd, now) if wd else _day_alone(day, now)) if day else None
        if moment is not None:
            yield m.group(0), moment, True
    for m in _GERMAN_DAY.finditer(text):
        after = _NEXT_WORD.match(text, m.end())
        if after and (after.group(1).lower().rstrip(".") in months or after.group(1).lower() in _COUNTED):
            continue          # "am 19. Dezember": the month form reads it
        if re.match(r"\s*\d", text[m.end():]):
            continue
        if (moment := _day_alone(int(m.group("d")), now)) is not None:
            yield m.group(0), moment, True
    for m in _NUMERIC.finditer(text):
        if (moment := _numeric(m, now)) is not None:
            yield m.group(0).strip(), moment, True
    for m in _DAY_AT_CLOCK.finditer(text):
        if (day := _day_number(m.group("d"))) and (moment := _day_alone(day, now)) is not None:
            yield m.group(0), moment, True
    for m in _APOSTROPHE_YEAR.finditer(text) if _APOSTROPHE_HINT.search(text) else ():
        month = months.get((m.group("m1") or m.group("m2")).lower().rstrip("."))
        day = _day_number(m.group("d1") or m.group("d2") or "1")
        if month and day and (found := _safe(2000 + int(m.group("y")), month, day)):
            yield m.group(0), datetime.combine(found, time(), UTC), True
    for m in _ISO_NO_YEAR.finditer(text):
        if (moment := _month_day(int(m.group("m")), int(m.group("d")), now)) is not None:
            yield m.group(0), moment, True
    for m in _holidays_in(text):
        if _HOLIDAY_YEAR.match(text, m.end()):
            continue          # "Christmas Day 2025": a year is given
        rule = _HOLIDAY_KEYS.get(_holiday_key(m.group(0)))
        past = _PAST_WORD.search(text[max(0, m.start() - 24):m.start()]) is not None
        if rule is not None and (moment := _holiday(rule, now, past)) is not None:
            yield m.group(0), moment, True
    zone = local or datetime.now().astimezone().tzinfo or UTC
    for m in _LATER_TODAY_FOREIGN.finditer(text) if _TODAY_HINT.search(text) else ():
        yield m.group(0), _later_today_foreign(m, now, zone), False
    for m in _LATER_TODAY.finditer(text):
        if (moment := _later_today(m, now, zone)) is not None:
            yield m.group(0), moment, False

