"""Text made safe to store, cache, print or post: the one path every output takes.

Untrusted text (file paths, code lines, commit messages) reaches terminals, JSON, SARIF, PR
comments and the experience memory. Before it goes anywhere:

* :func:`display_path` writes a path the way git quotes it (``"caf\\351.py"``): bytes that are
  not UTF-8 (carried as surrogates, see ``sentinel.diffparse.decode_diff``), control characters,
  quotes and bidi overrides as escapes, so every output can encode it and nothing can drive a
  terminal or reorder what a reader sees;
* :func:`display_text` does the same for any other text.
"""

from __future__ import annotations

import re

# Characters no output may carry raw: C0/C1 controls (ANSI escapes start with \x1b), DEL, bidi
# embeddings/overrides/isolates, line and paragraph separators, and lone surrogates (bytes that
# were not UTF-8).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_KEEP_NEWLINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_C_NAMES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r",
            '"': '\\"', "\\": "\\\\"}
_PATH_UNSAFE = re.compile('["\\\\\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]')


def _octal(ch: str) -> str:
    """git's escape of one character: the octal bytes of its UTF-8 form (a surrogate is one raw byte)."""
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the original byte
        return f"\\{code - 0xDC00:03o}"
    return "".join(f"\\{b:03o}" for b in ch.encode("utf-8", "surrogatepass"))


def display_path(path: str) -> str:
    """A repository path as git shows it: as is when plain, else C-quoted with escapes (the same
    quoting `git diff` uses, with valid non-ASCII UTF-8 kept readable, as core.quotepath=false does)."""
    if not _PATH_UNSAFE.search(path):
        return path
    return '"' + _PATH_UNSAFE.sub(lambda m: _C_NAMES.get(m.group(), None) or _octal(m.group()), path) + '"'


def _visible(m: re.Match) -> str:
    ch = m.group()
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    if ch in ("\t", "\n", "\r"):
        return _C_NAMES[ch]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def display_text(text: str, multiline: bool = False) -> str:
    """Text with every character no output may carry raw written as an escape (\\x1b, \\u202e,
    \\xe9 for a byte that was not UTF-8); newlines kept when `multiline`."""
    if text.isascii() and text.isprintable():
        return text
    return (_UNSAFE_KEEP_NEWLINES if multiline else _UNSAFE).sub(_visible, text)
