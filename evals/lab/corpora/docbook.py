"""DocBook HTML (the Debian Administrator's Handbook, the PostgreSQL manual, the Debian Reference), and the
Apache httpd manual's own XSLT pages, to a markdown notes tree, as a user's own converter would write it:
one file per HTML page, in a folder per chapter, headings kept.

    python -m muninn.evals.lab.corpora.docbook SRC_HTML_DIR OUT_DIR [--pages GLOB ...] [--chapters SLUG ...]
        [--skip GLOB ...] [--recursive]

Only the page's own text is kept: navigation bars, tables of contents, index anchors and banners
are what a person would delete by hand; a tip or warning box keeps its text with its label, and a
footnote goes in parentheses where it is cited. Section numbers ("9.5.1.") are dropped from headings, since
nobody asks for a section by its number. The page's top heading becomes `#`, and deeper ones keep
their distance below it, so the notes exporter's breadcrumb is the book's own.
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import textwrap
from pathlib import Path

from bs4 import BeautifulSoup, NavigableString, Tag
from markdownify import MarkdownConverter

# What is navigation, not content, in the two DocBook stylesheets (publican and DocBook XSL) and in the
# httpd manual's (menus, language lists, the quick-view sidebar, "back to top" and permalink marks).
_NOISE = ["div#banner", "p#title", "ul.docnav", "div.toc", "a.indexterm", "div.navheader", "div.navfooter",
          "div.titlepage div.author", "div.legalnotice", "p.title.toc", "div.list-of-tables", "div.list-of-figures",
          "div#page-header", "div.up", "div#path", "div.toplang", "div.bottomlang", "div#quickview", "div.top",
          "div#footer", "a.permalink", "button", "script", "div#comments_section", "noscript"]
_NUMBER = re.compile(r"^\s*(?:Chapter\s+|Appendix\s+)?[0-9A-Z]+(?:\.[0-9]+)*\.\s+")
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_ADMONITIONS = ("tip", "note", "warning", "caution", "important")
# The book's own index page, whatever its language suffix (index.html, index.en.html).
_BOOK_INDEX = re.compile(r"index(?:\.[A-Za-z_-]+)?\.html")


class _Markdown(MarkdownConverter):
    """markdownify with fenced code blocks: the exporter's splitter never cuts inside a fence."""

    def convert_pre(self, el, text, *args, **kwargs):  # type: ignore[no-untyped-def]
        code = el.get_text().strip("\n")
        return f"\n\n```\n{code}\n```\n\n"


def clean_title(text: str) -> str:
    return _NUMBER.sub("", " ".join(text.split())).strip()


def _unbox_admonitions(body: Tag) -> None:
    """DocBook XSL draws a tip or warning as a two-cell table (icon, then text); a person keeps the
    text with its label ("**Tip:** ...") and drops the frame, which would otherwise read as a table."""
    for box in body.select(", ".join(f"div.{a} > table[summary]" for a in _ADMONITIONS)):
        cells = box.find_all("td")
        label = box.get("summary", "")
        content = cells[-1] if cells else None
        if content is None:
            box.decompose()
            continue
        content.name = "div"
        content.attrs = {}
        first = content.find("p")
        prefix = BeautifulSoup(f"<strong>{label}:</strong> ", "html.parser")
        (first or content).insert(0, prefix)
        box.replace_with(content)


def _inline_footnotes(body: Tag) -> None:
    """A footnote's text in parentheses where it is cited: at the page's end it would land in the last
    section, far from the sentence it belongs to."""
    for mark in body.select('a.footnote[href^="#ftn."]'):
        note = body.find(id=mark["href"][1:])
        if not isinstance(note, Tag):
            mark.decompose()
            continue
        for back in note.select("a.para"):
            back.decompose()
        text = " ".join("".join(map(str, part.children)).strip() for part in note.find_all("p") or [note])
        before = mark.previous_sibling
        if isinstance(before, NavigableString):
            before.replace_with(before.rstrip())
        mark.replace_with(BeautifulSoup(f"<span> ({text})</span>", "html.parser").span)
    for block in body.select("div.footnotes"):
        block.decompose()


def _tex_quotes(body: Tag) -> None:
    """The httpd manual quotes prose TeX-style (``name''); beside a code span the two backticks would
    make a line start with a code fence, and every fence after it would flip. Plain quotes, outside code."""
    for text in body.find_all(string=re.compile(r"``|''")):
        if not text.find_parent(["pre", "code"]):
            text.replace_with(text.replace("``", '"').replace("''", '"'))


def _line_examples(body: Tag) -> None:
    """The httpd manual writes many examples as one `<code>` with a `<br>` a line, inside a paragraph;
    as inline code they would lose their lines and a `# comment` line would read as a heading."""
    for code in body.select("div.example > p > code"):
        for br in code.find_all("br"):
            after = br.next_sibling
            # The source's own newline after a <br> already breaks the line.
            br.replace_with("" if isinstance(after, NavigableString) and after.lstrip(" \t\xa0").startswith("\n")
                            else "\n")
        lines = textwrap.dedent(code.get_text().replace("\xa0", " ")).strip("\n").splitlines()
        pre = BeautifulSoup("<pre></pre>", "html.parser").pre
        pre.string = "\n".join(line.rstrip() for line in lines)
        code.replace_with(pre)


def page_markdown(html: str) -> tuple[str, str]:
    """(title, markdown) of one page; the markdown starts with `# title`."""
    soup = BeautifulSoup(html, "html.parser")
    body = soup.body or soup
    for selector in _NOISE:
        for el in body.select(selector):
            el.decompose()
    _unbox_admonitions(body)
    _inline_footnotes(body)
    _tex_quotes(body)
    _line_examples(body)
    heads = [h for h in body.find_all(_HEADINGS) if isinstance(h, Tag)]
    if not heads:
        return "", ""
    top = min(int(h.name[1]) for h in heads)
    title = ""
    for h in heads:
        level = int(h.name[1]) - top + 1
        text = clean_title(h.get_text(" "))
        title = title or text
        h.replace_with(soup.new_string(f"\n\n{'#' * min(level, 6)} {text}\n\n"))
    # No escaping: a person writes pg_dump in their notes, not pg\\_dump.
    md = _Markdown(heading_style="ATX", bullets="-", strip=["img", "a"], escape_underscores=False,
                   escape_asterisks=False, escape_misc=False).convert_soup(body)
    md = re.sub(r"[ \t]+\n", "\n", md)
    md = re.sub(r"\n{3,}", "\n\n", md).strip()
    # The heading strings were inserted as text: markdownify escapes nothing in them but may indent.
    md = re.sub(r"^[ \t]+(#{1,6} )", r"\1", md, flags=re.M)
    start = md.find("# ")
    return title, (md[start:] if start >= 0 else md) + "\n"


def chapter_of(html: str) -> str:
    """The chapter a page belongs to, from its `up` link; "" when the page is a chapter itself (its
    `up` is the book's index), so a chapter's first page lands beside its sections."""
    m = (re.search(r'<link rel="up" href="([^"]*)" title="([^"]+)"', html)            # publican
         or re.search(r'<a accesskey="u" href="([^"]*)" title="([^"]+)"', html))      # DocBook XSL
    if m:
        return clean_title(m.group(2)) if not _BOOK_INDEX.fullmatch(m.group(1)) else ""
    # The httpd manual's breadcrumb bar: Apache > HTTP Server > Documentation > Version 2.4 > chapter;
    # a page with no step after the version is a chapter of its own.
    bar = BeautifulSoup(html, "html.parser").select("div#path a") if '<div id="path">' in html else []
    return clean_title(bar[4].get_text(" ")) if len(bar) > 4 else ""


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "page"


def convert(src: Path, out: Path, pages: list[str] | None = None, chapters: list[str] | None = None,
            skip: list[str] | None = None, recursive: bool = False) -> list[Path]:
    """Every matching `*.html` page in `src` (and its subfolders when `recursive`) to
    `out/<chapter>/<page>.md`; returns the files written. `pages` and `skip` are globs of the path below
    `src` (a file name for a flat book), `chapters` chapter folder names (slugs); either of the first two
    keeps a page, `skip` drops it."""
    written: list[Path] = []
    for page in sorted(src.rglob("*.html") if recursive else src.glob("*.html")):
        rel = page.relative_to(src).as_posix()
        if any(fnmatch.fnmatch(rel, p) for p in skip or ()):
            continue
        html = page.read_text(encoding="utf-8")
        title, md = page_markdown(html)
        if not title or len(md) < 200:        # index, legal notice, empty chapter stubs
            continue
        chapter = chapter_of(html) or title
        if (pages or chapters) and not (any(fnmatch.fnmatch(rel, p) for p in pages or ())
                                        or slug(chapter) in (chapters or ())):
            continue
        target = out / slug(chapter) / f"{slug(page.stem)}.md"
        if target in written:
            raise ValueError(f"{rel} and an earlier page both convert to {target}: skip one of them")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(md, encoding="utf-8")
        written.append(target)
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--pages", nargs="*", help="file name globs to keep (default: every page)")
    ap.add_argument("--chapters", nargs="*", help="chapter folder names to keep (default: every chapter)")
    ap.add_argument("--skip", nargs="*", help="path globs to drop")
    ap.add_argument("--recursive", action="store_true", help="also read the subfolders' pages")
    args = ap.parse_args()
    files = convert(args.src, args.out, args.pages, args.chapters, args.skip, args.recursive)
    print(f"{len(files)} pages -> {args.out}")


if __name__ == "__main__":
    main()
