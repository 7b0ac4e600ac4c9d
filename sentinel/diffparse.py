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


# unidiff's line types (its LINE_TYPE_* constants, inlined: importing them costs the hook path).
_ADDED, _REMOVED, _CONTEXT = "+", "-", " "


# A diff this large is parsed in parts on several processes (first adoption, vendored trees).
PARALLEL_PARSE_BYTES = 4_000_000


def parse_diff(text: str, source: str = "diff") -> ChangeSet:
    """Parse a unified diff. Raises InputError naming the problem on malformed input."""
    from sentinel import parallel

    parts = [text]
    if len(text) >= PARALLEL_PARSE_BYTES and parallel.can_fork():
        parts = split_at_files(text, min(parallel.available_cpus(), parallel.MAX_JOBS))
    files = [fc for part in parallel.map_forked(lambda part: _parse_files(part, source), parts) for fc in part]
    if not files and text.strip():
        if _looks_like_diff_attempt(text):
            raise InputError(f"malformed diff ({source}): no file sections could be parsed")
        raise InputError(f"input is not a unified diff ({source}): expected 'diff --git' or '---'/'+++' headers")
    return ChangeSet(files=files, source=source)


def split_at_files(text: str, parts: int) -> list[str]:
    """Cut a git diff into about `parts` pieces of similar size, only where a file's section
    starts ("diff --git" at the start of a line: hunk lines always begin with ' ', '+', '-' or
    a backslash, so that text cannot occur inside a hunk)."""
    if parts < 2:
        return [text]
    out: list[str] = []
    start = 0
    step = len(text) // parts
    while len(out) < parts - 1:
        cut = text.find("\ndiff --git ", start + step)
        if cut < 0:
            break
        out.append(text[start:cut + 1])
        start = cut + 1
    out.append(text[start:])
    return out


def _parse_files(text: str, source: str) -> list[FileChange]:
    from unidiff import PatchSet
    from unidiff.errors import UnidiffParseError

    try:
        patch = PatchSet(text)
    except UnidiffParseError as exc:
        raise InputError(f"malformed diff ({source}): {exc}") from None

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
        added, context, removed, crlf = fc.added, fc.context, fc.removed, fc.crlf_lines
        for h in pf:
            fc.hunks.append(Hunk(h.source_start, h.source_length, h.target_start, h.target_length,
                                 (h.section_header or "").strip()))
            for line in h:  # the hot loop of a large diff: plain attribute reads, no properties
                kind = line.line_type
                if kind == _ADDED:
                    value = line.value
                    if value[-1:] == "\n":
                        value = value[:-1]
                    if value[-1:] == "\r":
                        value = value[:-1]
                        crlf.add(line.target_line_no)
                    added[line.target_line_no] = value
                elif kind == _CONTEXT:
                    context[line.target_line_no] = line.value.rstrip("\r\n")
                elif kind == _REMOVED:
                    removed.append((line.source_line_no, line.value.rstrip("\r\n")))
        fc.language = detect_language(path, added.get(1))
        if added and _has_surrogates("\n".join(added.values())):
            fc.unreadable = "not UTF-8 text"
        files.append(fc)
    return files


def _has_surrogates(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _looks_like_diff_attempt(text: str) -> bool:
    head = text[:4096]
    return any(m in head for m in ("diff --git", "\n+++ ", "\n--- ", "@@ ")) or head.startswith(("--- ", "+++ "))
