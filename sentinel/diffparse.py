"""Unified diff text -> typed ChangeSet, with a linear parser made for what git prints."""

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


_HUNK = None


def _hunk_re():
    global _HUNK
    if _HUNK is None:
        import re
        _HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)")
    return _HUNK


def _header_path(value: str) -> str:
    """The path of a '--- '/'+++ ' line: up to a tab (timestamps follow one), quoted or not."""
    return value.split("\t", 1)[0]


def _git_header_paths(rest: str) -> tuple[str | None, str | None]:
    """(a-side, b-side) of 'diff --git A B'. The common case names one path twice, which is cut
    exactly even when the path itself contains ' b/' (a directory named 'Plan b'); otherwise
    quoted paths, then the last ' b/' (renames say their paths again in 'rename from/to')."""
    n = len(rest)
    if n % 2 == 1 and rest[n // 2] == " ":
        left, right = rest[: n // 2], rest[n // 2 + 1:]
        if left[2:] == right[2:] and left[:2] in ("a/", '"a') and right[:2] in ("b/", '"b'):
            return left, right
    if rest.startswith('"'):
        end = rest.find('" ', 1)
        while end > 0 and rest[end - 1] == "\\":
            end = rest.find('" ', end + 1)
        if end > 0:
            return rest[: end + 1], rest[end + 2:]
    cut = rest.rfind(" b/")
    if cut < 0:
        cut = rest.rfind(' "b/')
    if cut > 0:
        return rest[:cut], rest[cut + 1:]
    return None, None


class _Lines:
    """The lines of a text without their "\\n" (a "\\r" stays), one at a time, with one line of lookahead."""

    __slots__ = ("_it", "_ahead", "number")

    def __init__(self, text: str):
        import io

        self._it = iter(io.StringIO(text, newline="\n"))
        self._ahead: str | None = None
        self.number = 0

    def _read(self) -> str | None:
        line = next(self._it, None)
        if line is None:
            return None
        return line[:-1] if line[-1:] == "\n" else line

    def next(self) -> str | None:
        if self._ahead is not None:
            line, self._ahead = self._ahead, None
        else:
            line = self._read()
        if line is not None:
            self.number += 1
        return line

    def peek(self) -> str | None:
        if self._ahead is None:
            self._ahead = self._read()
        return self._ahead


class _File:
    """One file section while it is being read."""

    __slots__ = ("src", "tgt", "git_src", "git_tgt", "binary", "new", "deleted", "rename", "copy", "fc")

    def __init__(self) -> None:
        self.src = self.tgt = self.git_src = self.git_tgt = None
        self.binary = self.new = self.deleted = self.rename = self.copy = False
        self.fc = FileChange(path="", old_path=None, status=FileStatus.MODIFIED, language="unknown")

    def finish(self) -> FileChange | None:
        src = self.src if self.src is not None else self.git_src
        tgt = self.tgt if self.tgt is not None else self.git_tgt
        if src is None and tgt is None:
            return None
        path = _strip_prefix(tgt if tgt and tgt != _DEV_NULL else src)
        old = _strip_prefix(src) if src and src != _DEV_NULL else None
        fc = self.fc
        if self.binary:
            status = FileStatus.BINARY
        elif self.copy:
            status = FileStatus.COPIED
        elif src == _DEV_NULL or self.new:
            status = FileStatus.ADDED
        elif tgt == _DEV_NULL or self.deleted:
            status = FileStatus.DELETED
        elif self.rename or (old is not None and old != path):
            status = FileStatus.RENAMED
        else:
            status = FileStatus.MODIFIED
        fc.path, fc.old_path, fc.status, fc.is_binary = path, old if old != path else None, status, self.binary
        fc.language = detect_language(path, fc.added.get(1))
        if fc.added and _has_surrogates("\n".join(fc.added.values())):
            fc.unreadable = "not UTF-8 text"
        return fc


def _parse_files(text: str, source: str) -> list[FileChange]:
    """A purpose-built, linear parser for what `git diff` prints (and plain unified diffs).

    Lines that mean nothing to it are skipped outside hunks (mail headers, a format-patch
    signature), as patch(1) and git apply skip them; inside a hunk the header's line counts rule,
    and a hunk that ends early, or a hunk-like line right after a complete hunk (code the counts
    would hide from the checks), is a malformed diff naming the line."""
    # Line by line from a stream rather than one list of every line: a 600K-line diff would hold a
    # second copy of itself as strings while it is parsed.
    lines = _Lines(text)
    files: list[FileChange] = []
    cur: _File | None = None
    in_header = False  # between 'diff --git' and the first hunk: '---'/'+++' restate the paths
    after_hunk = False
    hunk_re = _hunk_re()

    def bad(n: int, why: str) -> InputError:
        return InputError(f"malformed diff ({source}): line {n}: {why}")

    def close() -> None:
        if cur is not None:
            fc = cur.finish()
            if fc is not None:
                files.append(fc)

    while True:
        line = lines.next()
        if line is None:
            break
        i = lines.number
        head = line[:1]
        if head == "@":
            m = hunk_re.match(line)
            if m is None:
                if line.startswith("@@"):
                    raise bad(i, f"malformed hunk header {line[:80]!r}")
            else:
                if cur is None:
                    raise bad(i, "a hunk before any file header")
                s_start, s_len = int(m.group(1)), int(m.group(2) or 1) if m.group(2) != "0" else 0
                t_start, t_len = int(m.group(3)), int(m.group(4) or 1) if m.group(4) != "0" else 0
                if max(s_start, t_start, s_len, t_len) > 2_000_000_000:
                    raise bad(i, "a hunk header with absurd line numbers")
                fc = cur.fc
                fc.hunks.append(Hunk(s_start, s_len, t_start, t_len, m.group(5).strip()))
                added, context, removed, crlf = fc.added, fc.context, fc.removed, fc.crlf_lines
                s_no, t_no = s_start, t_start
                s_left, t_left = s_len, t_len
                at = i
                while s_left > 0 or t_left > 0:
                    body = lines.next()
                    if body is None:
                        raise bad(lines.number, f"the hunk at line {at} ends early "
                                                f"({s_left} old and {t_left} new line(s) missing)")
                    i = lines.number
                    kind = body[:1]
                    if kind == "+" and t_left > 0:
                        value = body[1:]
                        if value[-1:] == "\r":
                            value = value[:-1]
                            crlf.add(t_no)
                        added[t_no] = value
                        t_no += 1
                        t_left -= 1
                    elif kind == "-" and s_left > 0:
                        removed.append((s_no, body[1:].rstrip("\r")))
                        s_no += 1
                        s_left -= 1
                    elif (kind == " " or body in ("", "\r")) and s_left > 0 and t_left > 0:
                        context[t_no] = body[1:].rstrip("\r")
                        s_no += 1
                        t_no += 1
                        s_left -= 1
                        t_left -= 1
                    elif kind == "\\":
                        continue  # "\ No newline at end of file"
                    else:
                        raise bad(i, f"unexpected {body[:40]!r} inside a hunk ({s_left} old and {t_left} new "
                                     "line(s) still expected)")
                in_header, after_hunk = False, True
                continue
        if line.startswith("diff --git "):
            close()
            cur = _File()
            cur.git_src, cur.git_tgt = _git_header_paths(line[11:])
            in_header, after_hunk = True, False
            continue
        if head == "-" and line.startswith("--- ") and (lines.peek() or "").startswith("+++ "):
            if not in_header:  # a plain unified diff: each '---'/'+++' pair starts a file
                close()
                cur = _File()
            cur.src, cur.tgt = _header_path(line[4:]), _header_path(lines.next()[4:])
            in_header, after_hunk = True, False
            continue
        if head == "\\":
            continue  # "\ No newline at end of file" after the last line of a hunk
        if after_hunk and head in ("+", "-", " ") and line != "-- ":
            # More hunk lines than the header counted: git apply calls this a corrupt patch, and the
            # checks would never see them. ("-- " opens a format-patch signature.)
            raise bad(i, f"{line[:40]!r} follows a complete hunk (the hunk header counts fewer lines)")
        if cur is not None and in_header:
            if line.startswith("new file mode "):
                cur.new = True
            elif line.startswith("deleted file mode "):
                cur.deleted = True
            elif line.startswith("rename from "):
                cur.rename, cur.git_src = True, "a/" + line[12:] if not line[12:].startswith('"') else line[12:]
            elif line.startswith("rename to "):
                cur.rename, cur.git_tgt = True, "b/" + line[10:] if not line[10:].startswith('"') else line[10:]
            elif line.startswith("copy from "):
                cur.copy, cur.git_src = True, "a/" + line[10:] if not line[10:].startswith('"') else line[10:]
            elif line.startswith("copy to "):
                cur.copy, cur.git_tgt = True, "b/" + line[8:] if not line[8:].startswith('"') else line[8:]
            elif line.startswith(("Binary files ", "GIT binary patch")):
                cur.binary = True
                if line.startswith("Binary files ") and cur.git_src is None and cur.src is None:
                    pair = line[13:].rsplit(" differ", 1)[0].split(" and ", 1)
                    if len(pair) == 2:
                        cur.src, cur.tgt = pair
                in_header = False
        elif line.startswith("Binary files ") and line.endswith(" differ"):
            # A binary file of a plain diff (`diff -ru`): no 'diff --git' line before it.
            close()
            cur = _File()
            cur.binary = True
            pair = line[13:-7].split(" and ", 1)
            cur.src, cur.tgt = pair[0], pair[-1]
            in_header = after_hunk = False
            continue
        after_hunk = False
    close()
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
