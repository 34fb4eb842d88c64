"""Where in the source a redaction was: the note's own file and line, for `muninn redact review`.

A fact's text is cut from its source, not copied whole: a note's section is its lines in order,
with blank lines, front matter and other sections left out, and a field may add words of its own
(a lead line, `In: A › B`, a code fence around a repository file). So a hit's line in the fact is
not its line in the note. It is found again by the text: the lines of the field that occur in the
source are placed, in order, on source lines that hold them, over the shortest stretch of the source
(a section is cut from one stretch of its note); the hit's line is known when every such shortest
placement puts it on the same source line (a section copied twice in one note is not). Failing
that, the hit's own text on exactly one source line names it. Otherwise the line is unknown (None,
shown as `line ?`): a wrong number would send the owner to the wrong place.

The source file is the source's folder (or the folder of its file) joined with the fact's
`source_path`, when that is a file there: notes, repository files (read from the working tree,
which may differ from the exported ref), inventory, secrets and observation logs. A task row
(`roadmap.db#tasks/12`) or a name whose secret was redacted has no file: line unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

Origin = tuple[str, int, int]   # (unredacted field text, hit start, hit end)


@dataclass
class SourceFiles:
    """One export run's source root, with each source file's lines read once."""

    root: Path
    _lines: dict[str, list[str] | None] = field(default_factory=dict)
    _placed: dict[tuple[str, str], list[dict[int, int]]] = field(default_factory=dict)

    @classmethod
    def for_path(cls, path: Path) -> SourceFiles:
        return cls(path if path.is_dir() else path.parent)

    def file(self, source_path: str) -> Path | None:
        """The file a fact came from, when it is a readable file inside the root."""
        if not source_path:
            return None
        root = self.root.resolve()
        candidate = (self.root / source_path).resolve()
        return candidate if candidate.is_relative_to(root) and candidate.is_file() else None

    def lines(self, source_path: str) -> list[str] | None:
        if source_path not in self._lines:
            found = self.file(source_path)
            try:
                self._lines[source_path] = found.read_text(encoding="utf-8").splitlines() if found else None
            except (OSError, UnicodeDecodeError):
                self._lines[source_path] = None
        return self._lines[source_path]

    def where(self, source_path: str, origin: Origin | None) -> tuple[str, int | None]:
        """(the source file as the owner names it, the hit's 1-based line there or None)."""
        found = self.file(source_path)
        shown = str(found) if found else source_path
        lines = self.lines(source_path) if origin is not None else None
        if lines is None or origin is None:
            return shown, None
        # A field with several hits is placed once.
        key = (source_path, origin[0])
        if key not in self._placed:
            self._placed[key] = _tightest(lines, origin[0].split("\n"))
        return shown, line_of(lines, *origin, placed=self._placed[key])


def line_of(source: list[str], text: str, start: int, end: int,
            placed: list[dict[int, int]] | None = None) -> int | None:
    """The 1-based source line holding the hit at text[start:end], or None when it is not certain.
    `placed`: `_tightest(source, text's lines)`, when the caller has it already."""
    at = text.count("\n", 0, start)
    if placed is None:
        placed = _tightest(source, text.split("\n"))
    places = {p[at] for p in placed if at in p}
    if len(places) == 1:
        return places.pop() + 1
    hit = text[start:end]
    holding = [i for i, line in enumerate(source) if hit and hit in line]
    return holding[0] + 1 if len(holding) == 1 else None


def _tightest(source: list[str], field_lines: list[str]) -> list[dict[int, int]]:
    """The in-order placements of the field's lines found in the source (field line index -> source
    line index) that span the fewest source lines: a section is cut from one stretch of its note. One
    placement per start of the first line, each next line on the nearest source line after."""
    candidates: dict[int, list[int]] = {}
    for i, line in enumerate(field_lines):
        wanted = line.strip()
        if wanted and (where := [j for j, s in enumerate(source) if wanted in s]):
            candidates[i] = where
    if not candidates:
        return []
    order = sorted(candidates)
    placements: list[dict[int, int]] = []
    for first in candidates[order[0]]:
        placed = {order[0]: first}
        pos = first
        for i in order[1:]:
            pos = next((j for j in candidates[i] if j > pos), -1)
            if pos < 0:
                break
            placed[i] = pos
        else:
            placements.append(placed)
    if not placements:
        return []
    span = min(p[order[-1]] - p[order[0]] for p in placements)
    return [p for p in placements if p[order[-1]] - p[order[0]] == span]
