"""Unified diff text -> typed ChangeSet, parsed with unidiff."""

from __future__ import annotations

from sentinel.errors import InputError
from sentinel.languages import detect_language
from sentinel.models import ChangeSet, FileChange, FileStatus, Hunk

_DEV_NULL = "/dev/null"


def decode_diff(data: bytes) -> str:
    """Decode diff bytes without losing anything: bytes that are not UTF-8 survive as
    surrogates, so the file they belong to can be reported as not UTF-8 instead of the
    whole diff being rejected."""
    return data.decode("utf-8", "surrogateescape")


def _strip_prefix(path: str) -> str:
    if path.startswith('"') and path.endswith('"') and len(path) >= 2:
        path = _unquote_c_style(path[1:-1])
    if path.startswith(("a/", "b/")):
        return path[2:]
    return path


def _unquote_c_style(text: str) -> str:
    """git quotes unusual paths C-style ("caf\\303\\251.py"); undo that."""
    raw = text.encode("utf-8", "surrogateescape").decode("unicode_escape").encode("latin-1")
    return raw.decode("utf-8", "surrogateescape")


def _status(pf, header: str) -> FileStatus:
    if pf.is_binary_file:
        return FileStatus.BINARY
    if "\ncopy from " in header or header.startswith("copy from "):
        return FileStatus.COPIED
    if pf.source_file == _DEV_NULL or "\nnew file mode" in header:
        return FileStatus.ADDED
    if pf.target_file == _DEV_NULL or "\ndeleted file mode" in header:
        return FileStatus.DELETED
    if pf.is_rename or "\nrename from " in header:
        return FileStatus.RENAMED
    return FileStatus.MODIFIED


def parse_diff(text: str, source: str = "diff") -> ChangeSet:
    """Parse a unified diff. Raises InputError naming the problem on malformed input."""
    from unidiff import PatchSet
    from unidiff.errors import UnidiffParseError

    try:
        patch = PatchSet(text)
    except UnidiffParseError as exc:
        raise InputError(f"malformed diff ({source}): {exc}") from None
    if not patch and text.strip() and _looks_like_diff_attempt(text):
        raise InputError(f"malformed diff ({source}): no file sections could be parsed")
    if not patch and text.strip() and not _looks_like_diff_attempt(text):
        raise InputError(f"input is not a unified diff ({source}): expected 'diff --git' or '---'/'+++' headers")

    files: list[FileChange] = []
    for pf in patch:
        header = "\n" + "".join(pf.patch_info or [])
        status = _status(pf, header)
        target = pf.target_file
        source_path = pf.source_file
        path = _strip_prefix(target if target and target != _DEV_NULL else source_path)
        old = _strip_prefix(source_path) if source_path and source_path != _DEV_NULL else None
        if status is FileStatus.BINARY:
            # unidiff leaves binary paths as "a/x"/"b/x" too; for deletions the target is /dev/null.
            path = _strip_prefix(pf.path)
        fc = FileChange(path=path, old_path=old if old != path else None, status=status,
                        language="unknown", is_binary=pf.is_binary_file)
        first_line = None
        for h in pf:
            fc.hunks.append(Hunk(h.source_start, h.source_length, h.target_start, h.target_length,
                                 (h.section_header or "").strip()))
            for line in h:
                if line.is_added:
                    value = line.value
                    if value.endswith("\n"):
                        value = value[:-1]
                    if value.endswith("\r"):
                        value = value[:-1]
                        fc.crlf_lines.add(line.target_line_no)
                    fc.added[line.target_line_no] = value
                    if line.target_line_no == 1:
                        first_line = value
                elif line.is_context:
                    fc.context[line.target_line_no] = line.value.rstrip("\r\n")
                elif line.is_removed:
                    fc.removed.append((line.source_line_no, line.value.rstrip("\r\n")))
        fc.language = detect_language(path, first_line)
        if any(_has_surrogates(v) for v in fc.added.values()):
            fc.unreadable = "not UTF-8 text"
        files.append(fc)
    return ChangeSet(files=files, source=source)


def _has_surrogates(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _looks_like_diff_attempt(text: str) -> bool:
    head = text[:4096]
    return any(m in head for m in ("diff --git", "\n+++ ", "\n--- ", "@@ ")) or head.startswith(("--- ", "+++ "))
