"""Markdown as GitHub renders it: cmark-gfm (GitHub's own parser, through cmarkgfm) with GitHub's extensions
(tables, autolinks, strikethrough, tag filter), raw HTML kept so the test sees any that got through. What a
reader gets is read back from the HTML: elements, link targets, code spans, table cells and text."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

import pytest

cmarkgfm = pytest.importorskip("cmarkgfm")


@dataclass
class Rendered:
    html: str
    tags: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)  # every href and src
    code: list[str] = field(default_factory=list)  # the text of each <code> element
    rows: list[list[str]] = field(default_factory=list)  # each table row's cells, as text
    text: str = ""  # everything a reader sees, tags removed
    prose: str = ""  # the text outside code spans: where GitHub turns @names, #12 and bare URLs into links

    def linked_text(self) -> list[str]:
        return [href for href in self.links]


class _Reader(HTMLParser):
    def __init__(self, out: Rendered):
        super().__init__(convert_charrefs=True)
        self.out = out
        self.in_code = 0
        self.cell: list[str] | None = None
        self.row: list[str] | None = None
        self.code_text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.out.tags.append(tag)
        self.out.links += [v for k, v in attrs if k in ("href", "src") and v]
        if tag == "code":
            self.in_code += 1
            self.code_text = []
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag):
        if tag == "code" and self.in_code:
            self.in_code -= 1
            self.out.code.append("".join(self.code_text))
        elif tag in ("td", "th") and self.cell is not None and self.row is not None:
            self.row.append("".join(self.cell))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.out.rows.append(self.row)
            self.row = None

    def handle_data(self, data):
        self.out.text += data
        if self.in_code:
            self.code_text.append(data)
        else:
            self.out.prose += data
        if self.cell is not None:
            self.cell.append(data)


def render(markdown: str) -> Rendered:
    from cmarkgfm.cmark import Options

    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    out = Rendered(html)
    _Reader(out).feed(html)
    return out
