"""A file's bytes -> the text its language reads: what the checks must look at.

Git and diffs carry bytes; Sentinel decodes them as UTF-8. Python decodes a source file by the
encoding it declares on its first or second line (PEP 263, ``# -*- coding: latin-1 -*-``), and
that declaration wins even over valid UTF-8: a file declaring ``utf-7`` whose bytes read
``+AGUAdgBhAGw-(data)`` runs ``eval(data)``, and ``+AAo-`` is a line break. So a Python file that
declares an encoding is checked as Python decodes it, and its change's lines are rewritten to
match; a file that cannot be decoded as it declares (or as UTF-8, when it declares nothing) is
reported once as not checked — never checked and reported both.

A declared encoding that turns bytes into line breaks git does not see (``+AAo-`` in UTF-7)
would put the decoded code on lines the diff does not number: such a file is refused as hostile
input rather than checked on the wrong lines.
"""

from __future__ import annotations

from sentinel.errors import InputError
from sentinel.models import FileChange

NOT_UTF8 = "not UTF-8 text"
_UTF8_NAMES = frozenset({"utf-8", "utf_8", "utf8"})


def _declares(head: bytes) -> bool:
    """Cheap test before tokenize: can the first two lines hold a coding declaration at all?"""
    return b"coding" in head and b"#" in head


def _first_two_lines(data: bytes) -> bytes:
    end = data.find(b"\n")
    if end >= 0:
        second = data.find(b"\n", end + 1)
        end = second if second >= 0 else len(data)
    return data[:end if end >= 0 else 256][:1024]


def declared_encoding(data: bytes) -> str | None:
    """The encoding a Python source declares (PEP 263, as Python reads it), None when it declares
    none or UTF-8. Raises ValueError for a declaration Python refuses (an unknown codec, a BOM that
    contradicts it): Python would not run such a file."""
    head = _first_two_lines(data)
    if not _declares(head):
        return None
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(head + b"\n").readline)
    except SyntaxError as exc:
        raise ValueError(str(exc.msg if hasattr(exc, "msg") else exc)) from None
    return None if encoding.replace("-sig", "") in _UTF8_NAMES else encoding


def decode_source(data: bytes, language: str) -> tuple[str | None, str | None, str | None]:
    """(text, the declared encoding it was decoded with or None for UTF-8, None) — or
    (None, None, why it cannot be read)."""
    if b"\0" in data[:8000]:
        return None, None, "binary content"
    if language == "python":
        try:
            encoding = declared_encoding(data)
        except ValueError as exc:
            return None, None, f"declares an encoding Python refuses ({exc})"
        if encoding is not None:
            try:
                return strip_bom(data.decode(encoding)), encoding, None
            except (UnicodeDecodeError, LookupError):
                return None, None, f"not {encoding} text, as it declares"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, None, f"{NOT_UTF8} (invalid byte at offset {exc.start})"
    return strip_bom(text), None, None


def strip_bom(text: str) -> str:
    """A byte order mark starting a file is not part of its text (Python drops it before tokenizing, so
    would `ast.parse` of the text with it refuse the whole file and skip every syntax-based rule)."""
    return text[1:] if text.startswith("\ufeff") else text


def recode_change(fc: FileChange, data: bytes, text: str, encoding: str) -> None:
    """Rewrite the change's added and context lines (decoded from the diff as UTF-8) from `text`, the
    file's bytes `data` decoded by its declared `encoding`, at the same git line numbers."""
    lines = text.split("\n")
    if len(lines) - 1 != data.count(b"\n"):
        raise InputError(_HIDDEN_BREAKS.format(path=_shown(fc.path), encoding=encoding))
    for table in (fc.added, fc.context):
        for n in list(table):
            if 0 < n <= len(lines):
                value = lines[n - 1]
                table[n] = value[:-1] if value.endswith("\r") else value
    fc.unreadable = None


_HIDDEN_BREAKS = ("{path} declares the encoding {encoding}, which turns some of its bytes into line breaks git does "
                  "not count: refusing to check it on lines the diff does not number")


def recode_diff_lines(fc: FileChange) -> None:
    """For a Python file whose first lines the diff shows (a new file, an edit near the top): decode
    what the diff shows as the file declares. Lines the diff does not show are not known anyway."""
    known = {**fc.context, **fc.added}
    if 1 not in known:
        return
    head = "\n".join(known.get(n, "") for n in (1, 2)).encode("utf-8", "surrogateescape")
    try:
        encoding = declared_encoding(head + b"\n")
    except ValueError as exc:
        fc.unreadable = f"declares an encoding Python refuses ({exc})"
        return
    if encoding is None:
        return
    out: dict[int, dict[int, str]] = {}
    for name, table in (("added", fc.added), ("context", fc.context)):
        decoded = {}
        for n, value in table.items():
            raw = value.encode("utf-8", "surrogateescape")
            try:
                line = raw.decode(encoding)
            except (UnicodeDecodeError, LookupError):
                fc.unreadable = f"not {encoding} text, as it declares"
                return
            if "\n" in line:
                raise InputError(_HIDDEN_BREAKS.format(path=_shown(fc.path), encoding=encoding))
            decoded[n] = line
        out[name] = decoded
    fc.added.update(out["added"])
    fc.context.update(out["context"])
    fc.unreadable = None


def _shown(path: str) -> str:
    from sentinel.redact import display_path

    return display_path(path)
