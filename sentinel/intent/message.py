"""Commit message / PR body handling: git's comment stripping and masking of quoted text.

Masking replaces text that is not the author's own assertion (code spans, fenced blocks, quotes,
block quotes, URLs, trailers) with spaces of the same length, so claim patterns never match inside
it and the positions of everything else (line numbers in findings) stay those of the message.
"""

from __future__ import annotations

import re

from sentinel.intent import lazy_re

MESSAGE_PATH = "COMMIT_MSG"  # pseudo-path of findings about the message

_FENCE = lazy_re(r"^[ \t]{0,3}(```+|~~~+)[^\n]*\n.*?(?:^[ \t]{0,3}\1[ \t]*$|\Z)", re.M | re.S)
_CODE_SPAN = lazy_re(r"(`+)(?!`).+?(?<!`)\1(?!`)")
# Straight double quotes and typographic quotes; single quotes only when they clearly open and close
# a quotation (not an apostrophe as in "it's").
_QUOTES = lazy_re(r"\"[^\"\n]{1,300}\"|\u201c[^\u201d\n]{1,300}\u201d|\u2018[^\u2019\n]{1,300}\u2019"
                     r"|(?<![\w'])'[^'\n]{1,300}'(?![\w'])")
_BLOCKQUOTE = lazy_re(r"^[ \t]*>.*$", re.M)
_URL = lazy_re(r"\b(?:https?|ftp)://\S+")
# Trailers (Signed-off-by:, Co-authored-by:, Reviewed-by:...) are attributions, not claims.
_TRAILER = lazy_re(r"^[A-Z][A-Za-z0-9-]*-by:.*$|^(?:Change-Id|Cc|Bug|Link|Ref|Refs):.*$", re.M)
_INDENTED_CODE = lazy_re(r"(?:^(?: {4}|\t)[^\n]*\n?)+", re.M)


def clean_commit_message(text: str, comment_char: str = "#") -> str:
    """What git keeps of an edited message (cleanup=strip): comment lines and the scissors section removed.

    Comment lines become empty lines instead of disappearing so that line numbers in findings are the
    lines of the file the author is editing.
    """
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    out: list[str] = []
    scissors = f"{comment_char} ------------------------ >8 ------------------------"
    for line in lines:
        if line.rstrip() == scissors:
            break
        out.append("" if comment_char and line.startswith(comment_char) else line.rstrip())
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out)


def _blank(match: re.Match) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def mask_message(text: str) -> str:
    """The message with quoted/code/URL/trailer text replaced by spaces (same length, same lines)."""
    if not text:
        return ""
    text = text.replace("\r\n", "\n")
    # Each pattern runs (and is compiled) only when its marker is in the text at all.
    if "```" in text or "~~~" in text:
        text = _FENCE.sub(_blank, text)
    if "\n    " in text or "\n\t" in text:
        text = _INDENTED_CODE.sub(_indented_code, text)
    if "`" in text:
        text = _CODE_SPAN.sub(_blank, text)
    if "://" in text:
        text = _URL.sub(_blank, text)
    if any(q in text for q in "\"'\u201c\u2018"):
        text = _QUOTES.sub(_blank, text)
    if ">" in text:
        text = _BLOCKQUOTE.sub(_blank, text)
    if ":" in text:
        text = _TRAILER.sub(_blank, text)
    return text


def _indented_code(match: re.Match) -> str:
    # Markdown treats 4-space indented lines as code only after a blank line; a list item's
    # continuation is also indented, so keep indented bullets and prose that follows prose.
    block = match.group(0)
    if re.search(r"^\s*(?:[-*+]|\d+[.)])\s", block, re.M):
        return block
    start = match.start()
    before = match.string[:start]
    if before and not before.endswith("\n\n") and before.strip():
        return block
    return _blank(match)


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1
