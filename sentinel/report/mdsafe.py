"""Untrusted text as GitHub-flavoured Markdown that renders as the literal text it is.

Paths, messages, code and recall text come from the change under review. Code goes in code spans: GitHub
links no URL, mentions no one and cross-references no issue inside them, and shows their content as it is, so
a redacted line reads exactly as in the terminal and SARIF (``GITHUB_TOKEN = "ghp_***"``). A span's fence is
longer than any run of backticks in its content, so no content can close it. Prose (a message, a reason) is
escaped instead: HTML and Markdown syntax become character references, and a zero-width space breaks what
GitHub would turn into a link, a mention or a cross-reference. The parts of our own messages that quote code
between backticks are code spans, not literal backticks.

Inside HTML blocks (``<summary>``) GitHub parses no Markdown at all: there :func:`code_html` is used.
"""

from __future__ import annotations

import html
import re

from sentinel.lazyre import lazy_compile
from sentinel.redact import redact

TEXT_WIDTH = 500
CODE_WIDTH = 300

# After html.escape: characters Markdown (GFM) would act on, as numeric character references.
_MD_SPECIAL = {c: f"&#{ord(c)};" for c in "\\`*_[]|~$"}
_MD_RE = lazy_compile("[" + re.escape("".join(_MD_SPECIAL)) + "]")
_CONTROL = lazy_compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_MENTION = lazy_compile(r"@(?=[A-Za-z0-9])")
# What GitHub turns into links or cross-references in plain text: a zero-width space breaks each.
_AUTOLINK = lazy_compile(r"(?i)(?<=[a-z])(?=://)|(?<=\bwww)(?=\.)|(?<=#)(?=\d)|(?<=\bgh)(?=-\d)")
ZWSP = "\u200b"
_ZWSP_REF = "&#8203;"
_BACKTICKS = lazy_compile(r"`+")
# In a table row, cmark-gfm takes a backslash and the next character as one escaped character before it splits
# cells at the pipes: a backslash right before an escaped pipe would free that pipe to end the cell.
_BACKSLASH_BEFORE_PIPE = lazy_compile(r"\\(?=\|)")


def one_line(text: str, width: int) -> str:
    """Redacted, on one line, no control characters, at most `width` characters."""
    text = redact(text or "")
    text = _CONTROL.sub(" ", text.replace("\r\n", " ").replace("\n", " ").replace("\t", "    "))
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def escape(text: str, mentions: bool = True, width: int = TEXT_WIDTH) -> str:
    """Untrusted prose as inert inline Markdown: one line, no HTML, no Markdown syntax, no @mentions, no links."""
    text = one_line(text, width)
    if mentions:
        # A zero-width space before '://', after 'www' or '#' stops GitHub from linking a URL or
        # cross-referencing an issue named in the text (inserted before escaping adds entities).
        text = _AUTOLINK.sub(ZWSP, text)
    # Quotes stay as they are: no escaped text ever goes into an attribute value.
    text = _MD_RE.sub(lambda m: _MD_SPECIAL[m.group()], html.escape(text, quote=False))
    if mentions:
        # ... and one after '@' from notifying a user or team.
        text = _MENTION.sub("@" + _ZWSP_REF, text)
    return text


def code_span(text: str, width: int = CODE_WIDTH, table: bool = False) -> str:
    """Untrusted code as an inline code span (empty text: ""). `table`: the span sits in a table cell, where
    a pipe would end the cell: it is escaped as GFM specifies, and shows as a pipe."""
    body = one_line((text or "").strip(), width).strip()
    if not body:
        return ""
    if table and "|" in body:
        body = _BACKSLASH_BEFORE_PIPE.sub("\\\\" + ZWSP, body).replace("|", "\\|")
    longest = max((len(m.group()) for m in _BACKTICKS.finditer(body)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if body[0] == "`" or body[-1] == "`" else ""  # CommonMark strips one space each side
    return f"{fence}{pad}{body}{pad}{fence}"


def code_html(text: str, width: int = CODE_WIDTH) -> str:
    """Untrusted code inside an HTML block (``<summary>``), where GitHub renders no Markdown and links nothing."""
    body = escape((text or "").strip(), mentions=False, width=width)
    return f"<code>{body.replace('  ', '&nbsp; ')}</code>" if body else ""


def inline(text: str, width: int = TEXT_WIDTH, table: bool = False) -> str:
    """One of our messages (which quote code between backticks, CommonMark-style) as Markdown: the quoted parts
    as code spans, the rest as escaped prose. A backtick run with no equal run to close it is shown literally."""
    text = one_line(text, width)
    out: list[str] = []
    pos = 0
    runs = list(_BACKTICKS.finditer(text))
    i = 0
    while i < len(runs):
        opening = runs[i]
        closing = next((j for j in range(i + 1, len(runs)) if len(runs[j].group()) == len(opening.group())), None)
        if closing is None:
            i += 1
            continue
        out.append(escape(text[pos:opening.start()], width=len(text) + 1))
        content = text[opening.end():runs[closing].start()]
        out.append(code_span(content, width=len(text) + 1, table=table) or escape(opening.group() * 2))
        pos = runs[closing].end()
        i = closing + 1
    out.append(escape(text[pos:], width=len(text) + 1))
    return "".join(out)


def shown_text(markdown: str) -> str:
    """Roughly what a reader of the rendered Markdown sees: character references decoded, zero-width spaces and
    table-pipe escapes gone. For checking that a rendered report shows no secret."""
    return html.unescape(_BACKSLASH_BEFORE_PIPE.sub("", markdown)).replace(ZWSP, "")
