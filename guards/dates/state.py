"""A future date an observation may state: the judgement that keeps ordinary write-ups recordable.

An observation reports an EVENT that happened. It may also report a STATE seen now that names a later
day: "it is valid until 2027-03-01", "the certificate expires in 30 days", "the invoice is due on the
20th", "the upgrade is scheduled for next Monday"; or a past act that names a future event as its object:
"prepared the slides for tomorrow's review". Neither claims the later day has come, so neither is refused.
A future EVENT reported as having happened still is: "verified on the 20th", "no bounce arrived after
midnight on the 19th", "the cert renews in two days, confirmed", "tomorrow's run passed".

So a date or a forward word is let through only when the words right before it make it the end of a state
or the object of a preparation: one of the state cues below, ending where the date begins (at most an
"on"/"the"/"for" between). A cue further away does not count: "valid until the 20th, verified on the 21st"
still refuses the 21st. Labelled epoch fields (`expires=`, `valid_until:`) stay refused: a machine field
is what a forged log line would carry, and the check has always read them as claims.
"""

from __future__ import annotations

import re

# Ends a state at the date ("valid until", "expires on", "due by", "scheduled for", "gültig bis", ...).
_STATE = (
    r"(?:valid|good|active|supported|locked|reserved|retained|booked|effective)\s+(?:until|till|through|thru|to)"
    r"|valid\s+from|expir(?:es|ing|y|ation)(?:\s+date)?|due|deadline|scheduled|rescheduled|planned|postponed"
    r"|deferred|moved|pushed|set\s+for|slated|booked|lapses|runs\s+out|ends"
    r"|g[uü]ltig\s+bis|l[aä]uft\s+(?:bis|am)|f[aä]llig(?:\s+am)?|geplant(?:\s+f[uü]r)?|verschoben\s+auf"
    r"|valable\s+jusqu['’]?(?:au|à)|expire|pr[ée]vue?s?|[ée]ch[ée]ance|v[aá]lid[oa]\s+hasta|vence|caduca"
    r"|previst[oa]|programad[oa]|valid[oa]\s+fino\s+a[l]?|scade|scadenza|pianificat[oa]|geldig\s+tot"
    r"|verloopt|gepland|действител[ен]\w*\s+до|истекает|запланирован\w*|有效期至|到期|预定|予定|期限"
)
# A past act whose object is a future event: "for tomorrow's review", "ahead of next week's audit".
_FOR = r"(?:for|ahead\s+of|in\s+preparation\s+for|to\s+prepare\s+for|f[uü]r|pour|para|per|voor)"
_LINK = r"(?:\s+(?:on|at|by|for|in|until|till|the|am|le|el|il|op|de|del|au))*\s*[:=]?\s*"
_BEFORE = re.compile(rf"(?:(?<!\w)(?P<state>{_STATE}){_LINK}|(?<!\w){_FOR}\s+(?:the\s+)?)$", re.I)
_CLAUSE = re.compile(r"[.;!?\n]")
# A plan worded as a plan, in the clause before the date ("is planning an art show for next month", "will
# attend a conference next week", "his upcoming opening on 20 June"): no claim that it happened, so like a
# state it is recorded; but not when a past act stands between the plan word and the date ("will confirm the
# backup passed on the 20th" still claims the 20th).
_PLAN = re.compile(
    r"(?<!\w)(?:will|shall|['’]ll|going\s+to|plans?\s+to|planning|hop(?:es|ing)\s+to|intends?\s+to|"
    r"wants?\s+to|(?:is|are|am)\s+(?:(?:also|still|now|currently|busy)\s+)?(?:preparing|organi[sz]ing|hosting|attending|participating|considering|"
    r"thinking\s+(?:of|about)|getting\s+ready)|upcoming|looking\s+forward|excited\s+(?:about|for)|"
    r"werde[nt]?|wird|vais|vont|va\s+a|voy\s+a|vamos\s+a|vou|vai|zal|zullen|собира\w+|планиру\w+|将|予定)(?!\w)",
    re.I)
_CLAIM = re.compile(r"(?<!\w)(?:\w+ed|was|were|ran|passed|went|came|saw|had|did|got|found|done|held|showed|shown|"
                    r"broke|failed|fell|rose|began|begun|won|lost|sent|wrote|read|been|green|fine|ok|okay|"
                    r"success\w*|succeeded|met|clean|complete|worked|no\s+(?:errors?|alerts?|issues?|bounces?|"
                    r"incidents?|failures?))(?!\w)", re.I)
# Verbs that report speech: "Nate mentioned his upcoming tournament on 30 December" claims nothing about it.
# After the date only an outcome makes it an event ("organizing a show next month to showcase works aimed
# at ..." holds a participle, not an outcome).
_OUTCOME = re.compile(r"(?<!\w)(?:passed|went|ran|green|fine|ok|okay|success\w*|succeeded|met|clean|completed?|"
                      r"finished|done|verified|confirmed|worked|held|failed|resolved|fixed|arrived|happened|"
                      r"no\s+(?:errors?|alerts?|issues?|bounces?|incidents?|failures?))(?!\w)", re.I)
_REPORTING = frozenset("mentioned said told shared talked discussed explained added noted asked replied".split())
# A past act coordinated after the object ("prepared the slides for tomorrow's review and sent them round")
# belongs to the same subject; any other claim after the date in its sentence ("due on the 20th and it
# passed", "set for 2026-12-20 completed", "for the 20th's run: passed") makes it an event.
_SAME_SUBJECT = re.compile(r"\s+(?:and|then)\s+(?=(?!(?:passed|succeeded|completed|finished|verified|confirmed|"
                           r"worked|failed|resolved|fixed|arrived|happened)\b)(?:\w+ed|sent|wrote|took|gave|made|put|"
                           r"left)\b)", re.I)


def _claims(text: str) -> bool:
    return any(m.group(0).lower() not in _REPORTING for m in _CLAIM.finditer(text))


def stated(text: str, start: int, end: int, states: bool = True) -> bool:
    """Whether the date or forward word at text[start:end] ends a state, or names (as a possessive, "for
    tomorrow's review") the future event a past act prepared for: "checked for tomorrow" names none; or
    stands in a plan worded as a plan. Without `states`, a state cue does not count (a forward keyword:
    "Due nxt week." stays refused). A claim after it in its sentence makes it an event whatever came before."""
    after = _SAME_SUBJECT.split(_CLAUSE.split(text[end:end + 160])[0])[0]
    if _OUTCOME.search(after):
        return False
    if re.match(r"(?:for|at)\s", text[start:end], re.I):
        # "booked a table for the 19th": what an act was for, an event only with an outcome on either side
        # ("Verified: no bounce for the 19th").
        return not _OUTCOME.search(_CLAUSE.split(text[max(0, start - 160):start])[-1])
    clause = _CLAUSE.split(text[max(0, start - 160):start])[-1]
    if _PLAN.search(clause) and not _claims(_PLAN.sub(" ", clause)):
        return True
    m = _BEFORE.search(clause[-60:])
    if m is None:
        return False
    if m.group("state"):
        return states
    return bool(re.match(r"['’]s(?!\w)", text[end:end + 3])) or text[start:end].rstrip().endswith(("'s", "’s"))
