"""Add an entry to a hand-written YAML file by inserting text, so every comment and every other line stays
as its owner wrote it (muninn has no round-trip YAML library; `secret add` appends the same way).

The places to insert at are found on the composed node tree (its marks are line and column). After the
edit the whole file is loaded again and must equal the old data plus exactly the new entries: a layout
this cannot insert into is refused by the caller, with nothing written.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml


@dataclass(frozen=True)
class Insert:
    line: int            # 0-based line the text goes in front of (or into, with `column`)
    text: str
    column: int | None = None   # None: whole lines before `line`; else inside that line, at this column


def root(text: str) -> yaml.MappingNode | None:
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    return node if isinstance(node, yaml.MappingNode) else None


def value_of(mapping: yaml.MappingNode, key: str) -> yaml.Node | None:
    return next((v for k, v in mapping.value if isinstance(k, yaml.ScalarNode) and k.value == key), None)


def _after(lines: list[str], node: yaml.Node, indent: int) -> int:
    """The line after `node` ends, past the comment lines under it indented deeper than `indent` (they
    belong to it, as init's continuation comments do)."""
    end = node.end_mark
    at = end.line + 1 if end.column > 0 else end.line
    while at < len(lines) and lines[at].lstrip().startswith("#") and len(lines[at]) - len(lines[at].lstrip()) > indent:
        at += 1
    return at


def append_item(lines: list[str], seq: yaml.SequenceNode, item: str) -> Insert | None:
    """`- item` after the last item of a block sequence (None: a flow or empty sequence)."""
    if seq.flow_style or not seq.value:
        return None
    dash = seq.start_mark.column
    return Insert(_after(lines, seq.value[-1], dash), f"{' ' * dash}- {item}\n")


def add_key(lines: list[str], mapping: yaml.MappingNode, key: str, value: str) -> Insert | None:
    """`key: value` at the end of a mapping, in its own style (None: an empty block mapping)."""
    if mapping.flow_style:
        end = mapping.end_mark      # just after the closing brace
        before = "".join(lines[:end.line]) + lines[end.line][:end.column - 1]
        sep = "" if before.rstrip().endswith(("{", ",")) else ", "   # `{}` or a trailing comma
        return Insert(end.line, f"{sep}{key}: {value}", column=end.column - 1)
    if not mapping.value:
        return None
    last_key, last_value = mapping.value[-1]
    indent = last_key.start_mark.column
    return Insert(_after(lines, last_value, indent), f"{' ' * indent}{key}: {value}\n")


def apply(text: str, inserts: list[Insert]) -> str:
    """`text` with every insert made, the last in the file first so the earlier positions still hold."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    for ins in sorted(inserts, key=lambda i: (i.line, i.column if i.column is not None else -1), reverse=True):
        if ins.column is None:
            lines[ins.line:ins.line] = [ins.text]
        else:
            line = lines[ins.line]
            lines[ins.line] = line[:ins.column] + ins.text + line[ins.column:]
    return "".join(lines)
