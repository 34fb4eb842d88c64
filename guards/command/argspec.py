"""Allow-list specs for a tool's command line, and the parser that judges argv against one.

A spec states every option a proof may use with its arity, and every verb. The parser reads
the words the way the tool's own option parser does (the `style`), so a flag's value can never
be mistaken for the verb: with an arity known for every accepted option and every other option
refused, `kubectl --username get delete pod x` cannot smuggle `delete` in as the verb.

Spellings, per style:
- "gnu" (getopt_long): `--name`, `--name=value`, `-x`, `-xVALUE`, clustered switches `-abc`.
- "pflag" (Go cobra) and "argparse" (aws, az, gcloud): as gnu, and `-x=value` means value.
- "curl": as gnu, except that curl has no `--name=value` (it reads it as an unknown option).
- "goflag" (Go's flag, vault): `-name`, `--name`, `-name=value`; no clusters.
- "single" (openssl): `-name` and `-name value`, no clusters, no `=`.
Long options must be spelled in full: the tools accept unambiguous prefixes (curl takes
`--data-r` for `--data-raw`), so anything but an exact name on the list is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from muninn.guards.command.shell_words import Word

Check = Callable[[str], str | None]          # a value's validator: None, or what is wrong
ArgsCheck = Callable[[list[Word]], str | None]


class Refused(ValueError):
    """One sentence saying which word is not allowed and why."""


@dataclass(frozen=True)
class Flag:
    value: Check | None = None   # None: a switch without a value
    text: bool = False           # the value may hold an injected "$VARIABLE" (a header, a user)


@dataclass(frozen=True)
class Verb:
    flags: Mapping[str, Flag] = field(default_factory=dict)
    args: ArgsCheck | None = None    # the words after the verb; None: there must be none


@dataclass
class Parsed:
    verb: tuple[str, ...]
    options: dict[str, list[str]]     # option -> its values ("" for a switch), in order
    args: list[Word]


@dataclass(frozen=True)
class Tool:
    name: str
    style: str
    flags: Mapping[str, Flag] = field(default_factory=dict)      # allowed before and after the verb
    verbs: Mapping[tuple[str, ...], Verb] = field(default_factory=dict)   # () for a tool without verbs
    require: Callable[[Parsed], str | None] | None = None   # a check across options and arguments


# --- value validators ---------------------------------------------------------------------------
def matches(pattern: str, what: str) -> Check:
    compiled = re.compile(pattern)

    def check(value: str) -> str | None:
        return None if compiled.fullmatch(value) else f"{value!r} is not {what}"
    return check


def one_of(*choices: str) -> Check:
    def check(value: str) -> str | None:
        return None if value in choices else f"{value!r} is not one of {', '.join(choices)}"
    return check


NAME = matches(r"[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,252}", "a plain name")
INT = matches(r"[0-9]{1,6}", "a whole number")
NUMBER = matches(r"[0-9]{1,6}(?:\.[0-9]{1,3})?", "a number")
HOST = matches(r"[A-Za-z0-9][A-Za-z0-9.-]{0,252}|\[?[0-9A-Fa-f:.]+\]?", "a host name or address")
PATH = matches(r"[A-Za-z0-9_./][A-Za-z0-9_./@+-]{0,1023}", "a plain file path")
SWITCH = Flag()


def value(check: Check, *, text: bool = False) -> Flag:
    return Flag(check, text)


def names(*words: str, check: Check = NAME) -> ArgsCheck:
    """Positional words after the verb: at most len(words) (the labels in messages), each `check`."""
    def args(given: list[Word]) -> str | None:
        if len(given) > len(words):
            return f"at most {len(words)} argument(s) ({', '.join(words)}), not {len(given)}"
        for label, word in zip(words, given, strict=False):
            problem = check(word.text)
            if problem:
                return f"{label}: {problem}"
        return None
    return args


def exactly(*checks: tuple[str, Check]) -> ArgsCheck:
    def args(given: list[Word]) -> str | None:
        if len(given) != len(checks):
            return f"expects {len(checks)} argument(s): {', '.join(label for label, _ in checks)}"
        for (label, check), word in zip(checks, given, strict=True):
            problem = check(word.text)
            if problem:
                return f"{label}: {problem}"
        return None
    return args


# --- the parser -------------------------------------------------------------------------------------
def _take_value(tool: Tool, name: str, flag: Flag, joined: str | None, words: Sequence[Word], i: int,
                options: dict[str, list[str]]) -> int:
    """Record option `name`'s value (joined, or the next word); return the index of the last word used."""
    assert flag.value is not None
    if joined is None:
        if i + 1 >= len(words):
            raise Refused(f"{name} needs a value")
        word = words[i + 1]
        i += 1
        if word.text.startswith("-"):
            raise Refused(f"{name} {word.text!r}: a value that starts with '-' is refused (parsers disagree on it)")
        tainted, text = word.tainted, word.text
    else:
        tainted, text = False, joined
    if tainted and not flag.text:
        raise Refused(f"{name} may not take a $VARIABLE (only header, user and token values may)")
    problem = flag.value(text)
    if problem:
        raise Refused(f"{name}: {problem}")
    options.setdefault(name, []).append(text)
    return i


def read_option(tool: Tool, flags: Mapping[str, Flag], words: Sequence[Word], i: int,
            options: dict[str, list[str]]) -> int:
    text = words[i].text
    style = tool.style
    long_form = text.startswith("--") or style in ("goflag", "single")
    if long_form:
        name, eq, joined = text.partition("=")
        if style == "goflag" and name.startswith("--"):
            name = name[1:]
        if eq and style in ("curl", "single"):
            raise Refused(f"{text!r}: {tool.name} does not read --option=value; give the value as the next word")
        flag = flags.get(name)
        if flag is None:
            raise Refused(f"option {name} is not on the {tool.name} allow-list (options are matched by their "
                          "full name; prefixes and other spellings are refused)")
        if flag.value is None:
            if eq:
                raise Refused(f"{name} is a switch: {text!r} is refused")
            options.setdefault(name, []).append("")
            return i
        return _take_value(tool, name, flag, joined if eq else None, words, i, options)
    for j in range(1, len(text)):
        name = "-" + text[j]
        flag = flags.get(name)
        if flag is None:
            raise Refused(f"option {name} (in {text!r}) is not on the {tool.name} allow-list")
        if flag.value is None:
            options.setdefault(name, []).append("")
            continue
        rest = text[j + 1:]
        if rest.startswith("=") and style in ("pflag", "argparse"):
            rest = rest[1:]
        return _take_value(tool, name, flag, rest if rest else None, words, i, options)
    return i


def parse(tool: Tool, words: Sequence[Word]) -> Parsed:
    """Judge the words after the tool's name. Raises Refused with one sentence."""
    options: dict[str, list[str]] = {}
    positional: list[Word] = []
    verb: tuple[str, ...] | None = () if () in tool.verbs else None
    i = 0
    while i < len(words):
        word = words[i]
        if word.text.startswith("-") and word.text != "-" and not word.tainted:
            if word.text == "--":
                raise Refused("'--' is refused: it changes how the rest of the line is read")
            extra = tool.verbs[verb].flags if verb is not None else {}
            i = read_option(tool, {**tool.flags, **extra}, words, i, options) + 1
            continue
        if word.tainted:
            raise Refused(f"{word.text!r}: a $VARIABLE may only be the value of a header, user or token option")
        if verb is None:
            positional.append(word)
            so_far = tuple(w.text for w in positional)
            if so_far in tool.verbs and not any(len(v) > len(so_far) and v[:len(so_far)] == so_far
                                                for v in tool.verbs):
                verb, positional = so_far, []
            elif not any(v[:len(so_far)] == so_far for v in tool.verbs):
                known = sorted(" ".join(v) for v in tool.verbs)
                raise Refused(f"{tool.name} {' '.join(so_far)} is not on the read-only list: {', '.join(known)}")
        else:
            positional.append(word)
        i += 1
    if verb is None:
        so_far = tuple(w.text for w in positional)
        if so_far not in tool.verbs:
            raise Refused(f"{tool.name} {' '.join(so_far) or '(nothing)'}: no read-only verb given")
        verb, positional = so_far, []
    spec = tool.verbs[verb]
    if positional:
        if spec.args is None:
            raise Refused(f"{' '.join((tool.name, *verb))} takes no arguments, got {positional[0].text!r}")
        problem = spec.args(positional)
    else:
        problem = spec.args([]) if spec.args else None
    if problem:
        raise Refused(f"{' '.join((tool.name, *verb))}: {problem}")
    parsed = Parsed(verb, options, positional)
    problem = tool.require(parsed) if tool.require else None
    if problem:
        raise Refused(f"{tool.name}: {problem}")
    return parsed
