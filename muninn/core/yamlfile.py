"""YAML loading that remembers where each value came from, so errors name the file and line.

Every YAML file muninn reads (muninn.yaml, policy.yaml, secrets and inventory files) goes
through `load`, and every validation error goes through `error_at`.
"""

from __future__ import annotations

import difflib
import re
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeVar

import yaml
from pydantic import AfterValidator, BaseModel, ValidationError

from muninn.core.errors import ConfigError

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _entry_id(value: str) -> str:
    if not _ID.match(value):
        raise ValueError("an id is letters, digits, '.', '_' or '-', starting with a letter or digit")
    return value


# The `id` of an entry in a hand-edited YAML list (secrets, inventory): safe in file names and env names.
EntryId = Annotated[str, AfterValidator(_entry_id)]

Loc = tuple[str | int, ...]
M = TypeVar("M", bound=BaseModel)


# libyaml when present: the pure-Python loader took seconds on a 10,000-entry secrets file.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class Document:
    """Parsed YAML plus a map from key paths to 1-based line numbers.

    The line map is built only when an error needs it: composing the node tree costs as much as
    parsing again, and valid files (nearly all of them) never need it."""

    path: Path
    data: Any
    text: str | None = None
    _lines: dict[Loc, int] | None = field(default=None, repr=False)

    @property
    def lines(self) -> dict[Loc, int]:
        if self._lines is None:
            self._lines = {}
            if self.text:
                node = yaml.compose(self.text, Loader=_Loader)
                if node is not None:
                    _walk(node, (), self._lines)
        return self._lines

    def line(self, loc: Sequence[str | int]) -> int | None:
        """The line of the deepest node on `loc` that exists (a missing key points at its parent)."""
        lines = self.lines
        loc = tuple(loc)
        while loc:
            if loc in lines:
                return lines[loc]
            loc = loc[:-1]
        return lines.get((), None)

    def error_at(self, loc: Sequence[str | int], message: str, fix: str | None = None) -> ConfigError:
        key = ".".join(str(p) for p in loc) or None
        return ConfigError(message, path=str(self.path), line=self.line(loc), key=key, fix=fix)

    def validate(self, model: type[M], data: Any = None, base: Loc = (),
                 blame: Callable[[Loc], str | None] | None = None, context: dict[str, Any] | None = None) -> M:
        """Validate `data` (default: the whole document) and turn the first error into a ConfigError.
        `blame(loc)`: the environment variable that set the value at `loc`, if one did; the error then
        names the variable, not a line of a file that does not hold the value. `context`: pydantic's
        validation context."""
        try:
            # Only when asked: a plugin's options class may be a duck-typed model_validate without it.
            extra = {"context": context} if context is not None else {}
            return model.model_validate(self.data if data is None else data, **extra)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = base + tuple(err["loc"])
            var = blame(loc) if blame is not None else None
            if var is not None:
                dotted = ".".join(str(p) for p in loc)
                raise ConfigError(f"{dotted}: {_explain(err)}", key=var,
                                  fix=f"fix or unset ${var}: MUNINN_<SECTION>__<KEY> wins over the file") from None
            raise self.error_at(loc, _explain(err, model)) from None


def _explain(err: dict[str, Any], model: type[BaseModel] | None = None) -> str:
    kind = err.get("type", "")
    if kind == "missing":
        return "required key is missing"
    if kind == "extra_forbidden":
        near = suggest(model, tuple(err["loc"])) if model is not None else None
        hint = f"did you mean `{near}`? " if near else ""
        page = getattr(model, "reference_page", "docs/configuration.md")
        return f"unknown key ({hint}check the spelling against the reference in {page})"
    got = err.get("input")
    shown = repr(got) if not isinstance(got, dict | list) else type(got).__name__
    return f"{err['msg']} (got {shown})"


def suggest(model: type[BaseModel], loc: Loc) -> str | None:
    """The known key nearest the unknown one at `loc` (`prot` -> `port`), or None when none is near."""
    known = _keys_at(model, loc[:-1])
    near = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.6) if loc and known else []
    return near[0] if near else None


def _keys_at(model: Any, loc: Loc) -> list[str]:
    """The keys the model accepts at `loc` (a section, a list entry), following nested models."""
    for part in loc:
        model = _inner(model, part)
        if model is None:
            return []
    fields = getattr(model, "model_fields", None)
    return list(fields) if isinstance(fields, dict) else []


class _Named:
    """A mapping of names to `model` (policy.yaml's `readers:`): the next part of a location is a name."""

    def __init__(self, model: Any) -> None:
        self.model = model


def _inner(model: Any, part: str | int) -> Any:
    if isinstance(model, _Named):
        return model.model
    fields = getattr(model, "model_fields", None)
    if isinstance(part, int) or not isinstance(fields, dict):
        return _model_in(model) if isinstance(part, int) else None
    info = fields.get(part)
    if info is None:
        return None
    if typing.get_origin(info.annotation) is dict and (inner := _model_in(info.annotation)) is not None:
        return _Named(inner)
    return _model_in(info.annotation)


def _model_in(annotation: Any) -> Any:
    """The model an annotation holds: itself, or inside Optional, list[...] or a mapping's values."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in reversed(typing.get_args(annotation)):
        if (found := _model_in(arg)) is not None:
            return found
    return None


# A YAML parser's problem -> what usually fixes it, for a reader who edits YAML by hand.
_YAML_FIXES = (
    ("mapping values are not allowed", "quote the value: it holds `: ` (e.g. `key: \"a: b\"`)"),
    ("could not find expected ':'", "write each entry as `key: value`, or close the quote or bracket opened above"),
    ("did not find expected key", "line the keys of one section up at the same indent"),
    ("expected <block end>", "line the keys of one section up at the same indent"),
    ("found undefined alias", "a value starting with `*` is read as an alias: quote it"),
    ("did not find expected ','", "close the bracket or brace opened above, or quote the value"),
    ("found unexpected end of stream", "close the quote opened above"),
)


def yaml_fix(problem: str, line: str = "") -> str:
    """What usually fixes `problem`, the parser's words, found on `line`, the text of that line."""
    if "\t" in line[: len(line) - len(line.lstrip())] or "'\\t'" in problem:
        return "YAML does not allow tabs: indent with spaces"
    value = line.split(": ", 1)[-1].strip().lstrip("- ")
    if "cannot start any token" in problem and value[:1] in ("@", "`"):
        return "a value starting with `@` or a backtick must be quoted"
    for needle, fix in _YAML_FIXES:
        if needle in problem:
            return fix
    return "check the indentation (spaces, no tabs) and quote values holding `: `, ` #`, `[`, `{` or `*`"


def _walk(node: yaml.Node, loc: Loc, lines: dict[Loc, int]) -> None:
    lines[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            lines[(*loc, key)] = key_node.start_mark.line + 1
            _walk(value_node, (*loc, key), lines)
            lines[(*loc, key)] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*loc, i), lines)


def parse(text: str, path: Path | str = "<string>") -> Document:
    path = Path(path)
    try:
        data = yaml.load(text, Loader=_Loader)  # a safe loader: C or Python
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = str(exc.problem or exc)
        text_lines = text.splitlines()
        at = text_lines[line - 1] if line and line <= len(text_lines) else ""
        raise ConfigError(f"not valid YAML: {problem}", path=str(path), line=line,
                          fix=yaml_fix(problem, at)) from None
    return Document(path=path, data=data, text=text)


def load(path: Path | str) -> Document:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("file not found", path=str(path)) from None
    except UnicodeDecodeError:
        raise ConfigError("not UTF-8 text", path=str(path)) from None
    return parse(text, path)


@dataclass
class Entry:
    """One validated entry of a list-of-entries file (secrets, inventory), and where it stands."""

    value: Any
    path: Path
    line: int | None
    doc: Document
    loc: Loc


def load_entries(paths: Sequence[Path] | Any, model: type[BaseModel], top_key: str, what: str) -> list[Entry]:
    """Entries of every file (a top-level list, or `<top_key>: [...]`), each validated with `model`,
    `id`s unique across all files. The first problem raises, naming file and line."""
    out: list[Entry] = []
    seen: dict[str, Entry] = {}
    for path in paths:
        doc = load(path)
        data, base = doc.data, ()
        if isinstance(data, dict) and set(data) == {top_key}:
            data, base = data[top_key] or [], (top_key,)
        if data is None:
            continue
        if not isinstance(data, list):
            raise ConfigError(f"expected a list of {top_key} entries (or `{top_key}: [...]`)", path=str(path), line=1)
        for i, raw in enumerate(data):
            loc: Loc = (*base, i)
            if not isinstance(raw, dict):
                raise doc.error_at(loc, f"an entry must be a mapping with {what}")
            entry = Entry(doc.validate(model, raw, base=loc), Path(path), doc.line(loc), doc, loc)
            key = str(entry.value.id)
            if key in seen:
                first = seen[key]
                raise doc.error_at((*loc, "id"), f"duplicate id {key!r} (first at {first.path}:{first.line})",
                                   fix=f"ids must be unique across all {top_key} files")
            seen[key] = entry
            out.append(entry)
    return out
