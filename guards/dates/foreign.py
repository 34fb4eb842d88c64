"""Wording in other languages that can only point after the moment it is written in, by class (words.py
holds English and the other languages' "tomorrow"):

- "next" with a weekday or a period: `nächsten Montag`, `kommende Woche`, `la semaine prochaine`, `lundi
  prochain`, `el próximo lunes`, `la semana que viene`, `la settimana prossima`, `próxima semana`, `volgende
  week`, `на следующей неделе`, `в следующий понедельник`, `下周一`, `下個月`, `来週`, `来月`, `다음 주`;
- an amount ahead: `in zwei Tagen`, `dans 3 jours`, `dentro de dos días`, `tra due giorni`, `daqui a 2 dias`,
  `over twee dagen`, `через два дня`, `2日後`, `3天后`, `2일 후`.

An amount ahead is a duration after a word that says how long something took ("in zwei Tagen erledigt",
"за два дня"): the same judgement as English "finished in 3 hours". dateparser reads most of these, but
returns a point for a duration and needs one language per call (evals/results/dates.md measures it);
here only the direction matters, so a table of forward words does it in one pass.
"""

from __future__ import annotations

import re

_WEEKDAYS = {
    "de": "montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonnabend|sonntag",
    "fr": "lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche",
    "es": "lunes|martes|mi[eé]rcoles|jueves|viernes|s[aá]bado|domingo",
    "it": "luned[iì]|marted[iì]|mercoled[iì]|gioved[iì]|venerd[iì]|sabato|domenica",
    "pt": "segunda(?:-feira)?|ter[cç]a(?:-feira)?|quarta(?:-feira)?|quinta(?:-feira)?|sexta(?:-feira)?|s[aá]bado|"
          "domingo",
    "nl": "maandag|dinsdag|woensdag|donderdag|vrijdag|zaterdag|zondag",
    "ru": "понедельник|вторник|сред[ау]|четверг|пятниц[ау]|суббот[ау]|воскресенье",
}
_PERIODS = {
    "de": "woche|monat|jahr|wochenende|quartal|sprint",
    "fr": "semaine|mois|ann[ée]e|an|week-end|trimestre",
    "es": "semana|mes|a[nñ]o|fin\\s+de\\s+semana|trimestre",
    "it": "settimana|mese|anno|fine\\s+settimana|weekend|trimestre",
    "pt": "semana|m[eê]s|ano|fim\\s+de\\s+semana|trimestre",
    "nl": "week|maand|jaar|weekend|kwartaal",
    "ru": "недел[еюяи]|месяц[еа]?|год[уа]?|квартал[еа]?|выходны[ех]",
}
_NEXT = {
    "de": r"(?:n[aä]chste[nmrs]?|kommende[nmrs]?|[uü]bern[aä]chste[nmrs]?)\s+(?:{w}|{p})",
    "fr": r"(?:{w}|{p})\s+prochaine?s?|prochaine?s?\s+(?:{w}|{p})|(?:{w}|{p})\s+(?:qui\s+vient|à\s+venir)",
    "es": r"(?:pr[oó]xim[oa]s?|siguiente)\s+(?:{w}|{p})|(?:{w}|{p})\s+(?:que\s+viene|pr[oó]xim[oa])",
    "it": r"(?:prossim[oa]|il\s+prossimo|la\s+prossima)\s+(?:{w}|{p})|(?:{w}|{p})\s+prossim[oa]",
    "pt": r"pr[oó]xim[oa]s?\s+(?:{w}|{p})|(?:{w}|{p})\s+(?:que\s+vem|pr[oó]xim[oa])",
    "nl": r"(?:volgende|komende|aanstaande)\s+(?:{w}|{p})",
    "ru": r"(?:следующ(?:ий|ую|ей|ем|его|ая|ее|ие)|будущ(?:ей|ий|ую|ем|ем))\s+(?:в\s+)?(?:{w}|{p})",
}
_NUMBERS = (r"\d+(?:[.,]\d+)?|ein(?:e[mnr]?)?|zwei|drei|vier|f[uü]nf|sechs|sieben|acht|zehn|un[e]?|deux|trois|"
            r"quatre|cinq|six|sept|huit|dix|uno?|una|dos|tres|cuatro|cinco|seis|siete|ocho|diez|due|tre|"
            r"quattro|cinque|sette|otto|dieci|um|uma|duas|dois|tr[eê]s|quatro|een|twee|drie|vier|vijf|zes|"
            r"zeven|acht|tien|одн[уиа]|один|два|две|три|четыре|пять|шесть|семь|десять|несколько|пару")
# Each language's "in" with its own units: English "in 2 minutes" is words.py's, with its duration cues.
_IN_UNITS = {
    r"in": r"tage?n|stunden?|wochen?|monate?n|jahre?n|minuten",
    r"dans": r"jours?|heures?|semaines?|mois|ans|ann[ée]es?|minutes?",
    r"dentro\s+de": r"d[ií]as?|horas?|semanas?|meses|mes|a[nñ]os?|minutos?",
    r"tra|fra": r"giorni|giorno|ore|ora|settimane|settimana|mesi|mese|anni|anno|minuti",
    r"daqui\s+a": r"dias?|horas?|semanas?|m[eê]s(?:es)?|anos?|minutos?",
    r"over": r"dagen|dag|uur|weken|maanden|maand|jaar|minuten",
    r"через": r"дн(?:я|ей|ь)|день|час(?:а|ов)?|недел(?:ю|и|ь)|месяц(?:а|ев)?|год(?:а)?|лет|минут[уы]?",
}
# Russian says "через неделю" (in a week) without a number.
_IN = re.compile(
    r"(?<!\w)(?:" + "|".join(rf"(?:{prep})\s+(?:etwa\s+|environ\s+|unos\s+|около\s+)?(?:(?:{_NUMBERS})\s*"
                              rf"){'?' if prep == 'через' else ''}(?:{units})" for prep, units in _IN_UNITS.items())
    + r")(?!\w)", re.I)
# The amount before the word: Chinese, Japanese, Korean ("3天后", "2日後", "2週間後", "2일 후").
_CJK_IN = re.compile(r"(?:\d+|[一二两兩三四五六七八九十]+)\s*"
                     r"(?:天|日|小时|小時|时间|時間|周|週|週間|个月|個月|か月|ヶ月|年|분|시간|일|주|달|개월)\s*"
                     r"(?:后|後|以后|以後|之后|之後|후|뒤)")
_CJK_NEXT = re.compile(r"下(?:周|週|星期|礼拜|禮拜|个|個)[一二三四五六日天]?|下个?月|下個月|明年|来週|来月|来年|翌週|"
                       r"다음\s*(?:주|달|해)|내년")
# A word that makes the amount a duration: how long it took ("in zwei Tagen erledigt", "за три дня").
_DURATION = re.compile(
    r"(?<!\w)(?:erledigt|geschafft|fertig|gedauert|dauerte|gebraucht|brauchte|behoben|repariert|gel[oö]st|"
    r"termin[ée]e?s?|fini[es]?|r[ée]solue?s?|pris|fait|tard[oó]|termin[oó]|complet[oó]|completad[oa]|resuelto|"
    r"hecho|finito|completat[oa]|risolt[oa]|ci\s+sono\s+voluti|conclu[ií]d[oa]|feito|klaar|opgelost|"
    r"duurde|за|ушло|заняло|починили|сделали|solo|nur|seulement|alleen|только)(?!\w)", re.I)
_CUE_WINDOW = 4


def _phrase(lang: str) -> str:
    return _NEXT[lang].format(w=_WEEKDAYS[lang], p=_PERIODS[lang])


_NEXT_ANY = re.compile(r"(?<!\w)(?:" + "|".join(_phrase(lang) for lang in _NEXT) + r")(?!\w)", re.I)


def _is_duration(text: str, start: int, end: int) -> bool:
    before = re.split(r"[.;:!?\n]", text[:start])[-1].split()[-_CUE_WINDOW:]
    after = re.split(r"[,.;:!?\n]", text[end:])[0].split()[:_CUE_WINDOW]
    return bool(_DURATION.search(" ".join(before + after)))


# The words every "next" phrase holds: the long alternation runs only on a text that has one.
_NEXT_HINT = re.compile(r"n[aä]chste|kommende|prochain|pr[oó]xim|siguiente|que\s+vi[e]ne|prossim|que\s+vem|volgende|"
                        r"komende|aanstaande|следующ|будущ|qui\s+vient|à\s+venir", re.I)


def foreign_matches(text: str) -> list[re.Match[str]]:
    """Wording of the classes above."""
    out = [*(_NEXT_ANY.finditer(text) if _NEXT_HINT.search(text) else ()), *_CJK_NEXT.finditer(text),
           *_CJK_IN.finditer(text)]
    return out + [m for m in _IN.finditer(text) if not _is_duration(text, m.start(), m.end())]
