"""What a hit shows of its fact (doc.snippet): the passage that answers, without the title said again, a
command whole, within a bound; and what the whole file hides stays hidden in it."""

from __future__ import annotations

from pathlib import Path

from muninn.export import sources as export_sources
from muninn.export.facts import render, unique_paths
from muninn.plugins.search import doc as docmod
from muninn.plugins.search import query
from muninn.plugins.search.pipeline import _cut, _hit
from muninn.plugins.search.types import Candidate

WINDOW = 800      # rerank.passage_window's default
FILLER = "".join(f"Paragraph {i} says something about the hypervisor in general, at some length here.\n\n"
                 for i in range(14))
SECTION = ("# Installing a Xen domU\n\nThis section explains how Xen guests are created on a Debian host.\n\n"
           + FILLER + "Once these choices are made, we can create the image for our future Xen domU:\n\n```\n"
           "# xen-create-image --hostname testxen --dhcp --dir /srv/testxen --size=2G --dist=bullseye --role=udev\n"
           "```\n\n" + FILLER)


def _exported(tmp_path: Path, text: str) -> docmod.Doc:
    """The fact file the notes exporter writes for a one-section note, parsed as search reads it."""
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "xen.md").write_text(text, encoding="utf-8")
    facts = unique_paths(export_sources.build("notes", tmp_path / "notes", None).facts())
    fact = next(f for f in facts if "create the image" in f.body)
    return docmod.parse(f"viking://resources/notes/{fact.path}.md", render(fact).text)


def _snippet(d: docmod.Doc, question: str) -> str:
    return docmod.snippet(d, terms=query.analyse(question).terms, window=WINDOW)


def test_a_snippet_starts_at_the_answer_and_keeps_its_command_whole(tmp_path: Path) -> None:
    d = _exported(tmp_path, SECTION)
    snip = _snippet(d, "which command creates the image of a new xen domU")
    command = "# xen-create-image --hostname testxen --dhcp --dir /srv/testxen --size=2G --dist=bullseye --role=udev"
    assert command in snip.splitlines()
    assert snip.startswith("… ") and "Once these choices are made" in snip
    assert d.title not in snip                   # the hit carries its title; the lead and heading say it again
    assert len(snip) <= docmod.SNIPPET_CHARS + 2


def test_a_short_fact_is_shown_without_its_lead_and_heading(tmp_path: Path) -> None:
    d = _exported(tmp_path, "# Create the image\n\nTo create the image, run `xen-create-image`.\n")
    assert _snippet(d, "create the image") == "To create the image, run `xen-create-image`."


def test_a_command_that_does_not_fit_is_left_out_not_cut() -> None:
    prose = "To set the domain up, read this first. " * 8
    d = docmod.parse("viking://resources/notes/x.md", f"{prose}\n\n```\nxl create /etc/xen/{'a' * 120}.cfg\n```\n")
    snip = docmod.snippet(d, chars=360)
    assert "xl create" not in snip and snip.endswith("…")


def test_a_secret_deep_in_a_long_file_is_hidden_in_its_snippet() -> None:
    """A file no export wrote: the key id sits at the top, the secret deep in it, where the snippet starts."""
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz9k2LmQ"
    text = ("# AWS\n\nAKIAIOSFODNN7ABCDEFG\n\n" + FILLER + f"The rotation secret for the backup bucket:\n{secret}\n\n"
            + FILLER)
    d = docmod.parse("viking://resources/notes/aws.md", text)
    hit = _cut(_hit(Candidate(uri=d.uri), d), d, query.analyse("rotation secret backup bucket").terms, WINDOW)
    assert "rotation secret for the backup bucket" in hit.snippet
    assert secret not in hit.snippet and "[REDACTED:undeclared-secret]" in hit.snippet


def test_a_snippet_can_start_at_the_table_row_that_answers() -> None:
    """Within what the reranker read (its window), a row is a start of its own."""
    rows = "".join(f"| `tool{i}` | `cmd{i}` | does thing number {i} of many |\n" for i in range(9))
    table = "| exim command | postfix command | description |\n| --- | --- | --- |\n" + rows
    body = ("Mail queue commands compared.\n\n" + table
            + "| `exim4 -Mrm` | `postsuper -d` | remove one message by its queue ID |\n")
    d = docmod.parse("viking://resources/notes/mail.md", body)
    snip = _snippet(d, "postfix command to remove one message from the queue")
    assert snip.startswith("… | `exim4 -Mrm` | `postsuper -d` | remove one message by its queue ID |")
    assert "| --- |" not in snip
