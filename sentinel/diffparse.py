"""Unified diff text -> typed ChangeSet: git's format read as strictly as `git apply` reads it.

A diff is the gate's input, and whoever writes it may want code to slip through. So the parser
is exact where git is exact and refuses everything else, naming the line:

* file sections: ``diff --git`` headers (paths with spaces, `` b/`` inside a name, C-quoted
  names with escapes), git's extended headers (modes, renames, copies, ``index``), ``---``/``+++``
  (a trailing tab or timestamp after a name, ``/dev/null``), binary markers and ``GIT binary
  patch`` data; plain ``diff -u`` sections (``---``/``+++`` only) too;
* hunks are read by their counts: every line a hunk announces must be there (a diff that ends
  early is truncated), and a line that would add or remove code after a complete hunk is an
  error, not something to skip (``git apply`` would silently drop it, a reviewer would read it);
* paths are carried faithfully (bytes that are not UTF-8 survive as surrogates, see
  :func:`decode_diff`); a path with a NUL, an absolute path or a ``..`` component is refused —
  no tool would create one, and a path that leaves the repository is an attack;
* line numbers above :data:`MAX_LINE_NUMBER` are absurd input, refused before anything is
  allocated for them.

Text before the first file section (a commit message, mail headers) and the ``-- `` signature of
``git format-patch`` are skipped; blank lines between sections too. One pass, linear time,
memory for the lines kept and little else.
"""

from __future__ import annotations

import re
from itertools import islice, repeat
from operator import itemgetter

from sentinel.errors import InputError
from sentinel.languages import detect_language
from sentinel.lazyre import lazy_compile
from sentinel.linemap import LineMap
from sentinel.models import ChangeSet, FileChange, FileStatus, Hunk

_DEV_NULL = "/dev/null"
NOT_UTF8 = "not UTF-8 text"  # sentinel.sourcetext.NOT_UTF8: the engine reads such a file again, as it declares

# No source file has ten million lines; a hunk header that says so is hostile or broken, and
# the checks would have to allocate for every line up to it.
MAX_LINE_NUMBER = 10_000_000

# ASCII digits only (\d also takes other scripts' digits), and few enough for int() to stay cheap.
_HUNK = lazy_compile(r"@@ -([0-9]{1,12})(?:,([0-9]{1,12}))? \+([0-9]{1,12})(?:,([0-9]{1,12}))? @@(.*)\Z", re.S)
# git's extended header lines (gitdiff.c): the value after the keyword is a path or a mode.
_EXTENDED = ("old mode ", "new mode ", "deleted file mode ", "new file mode ", "copy from ", "copy to ",
             "rename from ", "rename to ", "rename old ", "rename new ", "similarity index ",
             "dissimilarity index ", "index ")
# What diff(1) and other tools print between file sections: harmless, never applied.
_BETWEEN_SECTIONS = ("Only in ", "Common subdirectories: ", "Index: ", "=====")
# ASCII whitespace only, what bytes.isspace() takes (str.isspace() also takes \x1c-\x1f and U+2028).
_ASCII_BLANK = lazy_compile(r"[ \t\n\r\x0b\x0c]*")
_C_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def decode_diff(data: bytes) -> str:
    """Decode diff bytes without losing anything: bytes that are not UTF-8 survive as
    surrogates, so the file they belong to can be reported as not UTF-8 instead of the
    whole diff being rejected, and a non-UTF-8 path still names the file git knows."""
    return data.decode("utf-8", "surrogateescape")


class _Malformed(Exception):
    """A problem at a line of the diff (1-based); parse_diff turns it into an InputError."""

    def __init__(self, line: int, problem: str):
        super().__init__(problem)
        self.line = line
        self.problem = problem


def _excerpt(text: str) -> str:
    """A line of the diff, quoted, shortened and made safe to print (it may be hostile)."""
    from sentinel.redact import display_text

    shown = text if len(text) <= 60 else text[:57] + "..."
    return f"'{display_text(shown)}'"


# --- paths ----------------------------------------------------------------------------------------

def unquote_c_style(quoted: str, line: int = 0) -> tuple[str, int]:
    """git's C-style quoted name at the start of `quoted` ('"a/caf\\303\\251.py" ...') ->
    (the name, how many characters the quoted form took). Raises _Malformed."""
    out = bytearray()
    i, n = 1, len(quoted)
    while i < n:
        ch = quoted[i]
        if ch == '"':
            return out.decode("utf-8", "surrogateescape"), i + 1
        if ch != "\\":
            j = i
            while j < n and quoted[j] not in '"\\':
                j += 1
            out += quoted[i:j].encode("utf-8", "surrogateescape")
            i = j
            continue
        esc = quoted[i + 1:i + 2]
        if esc in _C_ESCAPES:
            out.append(_C_ESCAPES[esc])
            i += 2
        elif len(quoted) >= i + 4 and "0" <= esc <= "3" and all("0" <= c <= "7" for c in quoted[i + 2:i + 4]):
            out.append(int(quoted[i + 1:i + 4], 8))
            i += 4
        else:
            raise _Malformed(line, f"bad escape in quoted path {_excerpt(quoted)}")
    raise _Malformed(line, f"unterminated quoted path {_excerpt(quoted)}")


def _name(value: str, line: int, strip: str | None) -> str | None:
    """A path as git writes it after ---/+++ or rename from/to: quoted or not, maybe followed by a tab
    and a timestamp; None for /dev/null. `strip`: the prefix to remove ("a/" or "b/") when present."""
    if value.startswith('"'):
        name, used = unquote_c_style(value, line)
        rest = value[used:]
        if rest and not rest.startswith("\t") and rest.strip():
            raise _Malformed(line, f"text after a quoted path: {_excerpt(value)}")
    else:
        name = value.split("\t", 1)[0]  # git ends a name holding a space with a tab; diff(1) adds a date
    if name == _DEV_NULL:
        return None
    if strip and name.startswith(strip):
        name = name[len(strip):]
    return _valid_path(name, line)


def _valid_path(name: str, line: int) -> str:
    if not name:
        raise _Malformed(line, "empty path")
    if "\0" in name:
        raise _Malformed(line, f"path contains a NUL byte: {_excerpt(name)}")
    if name.startswith("/") or (len(name) > 2 and name[1] == ":" and name[2] in "/\\"):
        raise _Malformed(line, f"absolute path {_excerpt(name)}: a diff names files inside the repository")
    parts = name.replace("\\", "/").split("/")
    if ".." in parts:
        raise _Malformed(line, f"path {_excerpt(name)} leaves the repository ('..')")
    return name


def _git_header_names(rest: str, line: int) -> tuple[str | None, str | None]:
    """The two names of 'diff --git <a> <b>'. Unquoted names may contain spaces and ' b/': git's
    own rule applies — without a rename the two names are the same, so the line splits where
    both halves match. (None, None) when that is ambiguous (a rename: its headers name the files)."""
    if rest.startswith('"'):
        a, used = unquote_c_style(rest, line)
        if rest[used:used + 1] != " ":
            raise _Malformed(line, f"bad diff --git header: {_excerpt(rest)}")
        b_part = rest[used + 1:]
        b = unquote_c_style(b_part, line)[0] if b_part.startswith('"') else b_part
        return _strip(a, "a/"), _strip(b, "b/")
    if rest.endswith('"'):
        i = rest.find(' "')
        if i > 0:
            b, used = unquote_c_style(rest[i + 1:], line)
            if i + 1 + used == len(rest):
                return _strip(rest[:i], "a/"), _strip(b, "b/")
    # Same name on both sides: "a/NAME b/NAME", len(rest) == 2 * len(NAME) + 5.
    if rest.startswith("a/") and (len(rest) - 5) % 2 == 0:
        half = (len(rest) - 5) // 2
        a, b = rest[2:2 + half], rest[half + 5:]
        if a == b and rest[2 + half:half + 5] == " b/":
            return a, b
    if len(rest) % 2 == 1:  # no prefixes (diff.noprefix): "NAME NAME"
        half = len(rest) // 2
        if rest[:half] == rest[half + 1:] and rest[half] == " ":
            return rest[:half], rest[:half]
    return None, None


def _strip(name: str, prefix: str) -> str:
    return name[len(prefix):] if name.startswith(prefix) else name


# --- the parser -----------------------------------------------------------------------------------

class _Section:
    """One file's section while it is being read."""

    __slots__ = ("start", "git", "header_a", "header_b", "old", "new", "old_seen", "new_seen", "status", "binary",
                 "rename_from", "rename_to", "copy", "fc")

    def __init__(self, start: int, git: bool):
        self.start = start
        self.git = git  # opened by "diff --git" (extended headers may follow)
        self.header_a: str | None = None
        self.header_b: str | None = None
        self.old: str | None = None  # names from ---/+++ (None: /dev/null)
        self.new: str | None = None
        self.old_seen = self.new_seen = False
        self.status: FileStatus | None = None
        self.binary = False
        self.rename_from: str | None = None
        self.rename_to: str | None = None
        self.copy = False
        self.fc: FileChange | None = None  # created with the first hunk


def _iter_lines(text: str, chunk: int = 1 << 20):
    """The lines of `text`, split at "\n" only (git's line terminator; a final "\n" ends the last line
    rather than starting an empty one), a block at a time: no list of every line of a large diff."""
    pos, n = 0, len(text)
    while pos < n:
        end = text.find("\n", min(pos + chunk, n - 1))
        if end < 0:
            yield from text[pos:].split("\n")
            return
        yield from text[pos:end].split("\n")
        pos = end + 1


def _iter_byte_lines(data: bytes, start: int = 0, stop: int | None = None, chunk: int = 1 << 20):
    """The lines of ``data[start:stop]`` as :func:`_iter_lines` gives them, decoded a block at a time
    (surrogateescape, as :func:`decode_diff`): the whole diff is never one string, so a single wide
    character (an emoji, a byte that is not UTF-8) cannot make all of it take 4 bytes a character.
    Blocks end at "\n", which no multi-byte UTF-8 sequence contains."""
    n = len(data) if stop is None else stop
    pos = start
    while pos < n:
        end = data.find(b"\n", min(pos + chunk, n - 1), n)
        if end < 0:
            yield from data[pos:n].decode("utf-8", "surrogateescape").split("\n")
            return
        yield from data[pos:end].decode("utf-8", "surrogateescape").split("\n")
        pos = end + 1


class ChunkLines:
    """The lines of a diff arriving in blocks of bytes (git's output read as it is written), as
    :func:`_iter_byte_lines` gives the lines of the whole: each block is cut after its last "\n" and
    decoded up to there (the rest waits for the next block), so the text is the same however git's
    writes happen to fall. Remembers the first bytes and whether anything but ASCII whitespace came,
    which parse_diff asks about a diff that has no file sections."""

    HEAD = 4096

    def __init__(self, blocks):
        self.blocks = blocks
        self.head = b""
        self.blank = True
        self.cr = False  # has a "\r" been handed out yet? (a whole tree without one skips a scan of every line)

    def __iter__(self):
        tail = b""
        for block in self.blocks:
            if len(self.head) < self.HEAD:
                self.head += block[:self.HEAD - len(self.head)]
            if self.blank and block.strip():
                self.blank = False
            data = tail + block if tail else block
            cut = data.rfind(b"\n")
            if cut < 0:
                tail = data
                continue
            if not self.cr and b"\r" in data[:cut]:
                self.cr = True
            yield from data[:cut].decode("utf-8", "surrogateescape").split("\n")
            tail = data[cut + 1:]
        if tail:
            self.cr = self.cr or b"\r" in tail
            yield tail.decode("utf-8", "surrogateescape")


_AFTER_KIND = itemgetter(slice(1, None))  # a hunk line without its '+', '-' or ' '
_KIND = itemgetter(0)  # its '+', '-' or ' ' (IndexError for an empty line)
_RUN = 4096  # lines taken at once: fast, and a bounded copy


class _Parser:
    def __init__(self, first_line: int = 1, on_file=None):
        self.files: list[FileChange] = []
        self.on_file = on_file  # called with each file as its section ends
        self.lineno = first_line - 1
        self.sec: _Section | None = None
        # Hunk state: lines still expected on each side, next line numbers, where it started.
        self.old_left = self.new_left = 0
        self.old_no = self.new_no = 0
        self.hunk_line = 0
        self.in_hunk = False
        self.skipping = False  # format-patch signature or binary patch data: until the next section
        self.last_kind = ""  # '+', '-' or ' ' of the previous hunk line (for "\ No newline")
        self.last_cr = False  # that line ended in "\r" before its "\n"
        self.cr_seen = lambda: True  # could a line read so far hold a "\r"? (set by feed_all from its input)

    def fail(self, problem: str, line: int | None = None):
        raise _Malformed(self.lineno if line is None else line, problem)

    def feed_all(self, text: str | bytes | ChunkLines, start: int = 0, stop: int | None = None) -> list[FileChange]:
        # A plain diff's section starts with "--- x", "+++ y" and a hunk header (as for git apply: a pair
        # of such lines without a hunk after them is prose, e.g. in a commit message before the diff).
        minus: str | None = None
        plus: str | None = None
        if isinstance(text, ChunkLines):
            lines = iter(text)
            self.cr_seen = lambda: text.cr
        else:
            lines = _iter_byte_lines(text, start, stop) if isinstance(text, bytes) else _iter_lines(text)
            cr = (b"\r" if isinstance(text, bytes) else "\r") in text
            self.cr_seen = lambda: cr
        for raw in lines:
            self.lineno += 1
            if raw.startswith("@@@") and not self.in_hunk:
                self.fail("combined diff (a merge shown with -c/--cc) is not supported: diff the merge against "
                          "one of its parents")
            if minus is not None:
                if plus is None and raw.startswith("+++ "):
                    plus = raw
                    continue
                if plus is not None and raw.startswith("@@ -"):
                    self._plain_section(minus, plus)
                    minus = plus = None
                    self._start_hunk(raw)
                    continue
                if self.sec is not None or self.files:
                    what = "a hunk header after '---'/'+++'" if plus is not None else "a '+++' line after '---'"
                    self.fail(f"expected {what}, got {_excerpt(raw)}")
                minus = plus = None  # prose before the first section
            if self.in_hunk:
                if self.old_left <= 0 and self.new_left > 1 and raw[:1] == "+":
                    self._added_run(raw, lines)
                else:
                    self._hunk_line(raw)
            else:
                minus = self._between(raw)
        if minus is not None and (self.sec is not None or self.files):
            self.fail("diff ends inside the header of a file section")
        if self.in_hunk:
            self.fail(f"the hunk here ends early ({self.old_left} old and {self.new_left} new line(s) missing): "
                      "the diff is truncated", self.hunk_line)
        self._close()
        return self.files

    # -- outside hunks ---------------------------------------------------------------------------
    def _between(self, raw: str) -> str | None:
        """A line outside any hunk; returns it when it is a '--- ' line the next line decides."""
        if self.skipping:
            if not (raw.startswith("diff --git ") or raw.startswith("From ")):
                return None
            self.skipping = False
        if raw.startswith("diff --git "):
            self._open_git(raw[len("diff --git "):])
            return None
        sec = self.sec
        if sec is not None and sec.git and sec.fc is None:
            return self._git_header_line(raw, sec)
        if raw.startswith("@@"):
            if sec is None:
                self.fail("a hunk before any file header")
            self._start_hunk(raw)
            return None
        if raw.startswith("\\") and sec is not None and self.last_kind:
            self._no_newline(raw)
            return None
        if raw.startswith("--- "):
            return raw
        if raw.startswith("Binary files ") and raw.endswith(" differ"):
            self._close()  # diff -r's line for a binary file: a section of its own
            self.sec = _Section(self.lineno, git=False)
            self.sec.header_a = self.sec.header_b = self._binary_name(raw)
            self.sec.binary = True
            return None
        if sec is None and not self.files:
            return None  # preamble: commit message, mail headers, diffstat
        if raw == "-- ":
            self.skipping = True  # git format-patch's signature ("-- \n2.43.0")
            return None
        if raw == "" or raw.startswith(_BETWEEN_SECTIONS):
            return None
        if raw.startswith("diff "):
            self._close()  # "diff -ru a/x b/x": the ---/+++ lines that follow name the files
            return None
        if sec is not None and sec.fc is None:
            self.fail(f"expected a hunk header ('@@ ...') after the '+++' line, got {_excerpt(raw)}")
        self.fail(f"{_excerpt(raw)} follows a complete hunk (the hunk header counts fewer lines than follow "
                  "it, or the diff was edited by hand)")

    def _git_header_line(self, raw: str, sec: _Section) -> None:
        """A line of a 'diff --git' section before its first hunk."""
        if not sec.old_seen:
            if raw.startswith("--- "):
                sec.old, sec.old_seen = _name(raw[4:], self.lineno, "a/"), True
                return None
            if self._extended(raw, sec):
                return None
            if raw.startswith("Binary files ") and raw.endswith(" differ"):
                sec.binary = True
                return None
            if raw == "GIT binary patch":
                sec.binary = self.skipping = True  # base85 data up to the next section: never code
                return None
            if raw.startswith("@@"):
                self.fail("hunk without '---'/'+++' lines in its file section")
            if raw == "" or raw == "-- ":
                self.skipping = raw == "-- "
                self._close()  # a section of headers only (mode change, rename, empty file)
                return None
            self.fail(f"unexpected line in the header of the file section at line {sec.start}: {_excerpt(raw)}")
        if not sec.new_seen:
            if raw.startswith("+++ "):
                sec.new, sec.new_seen = _name(raw[4:], self.lineno, "b/"), True
                return None
            self.fail("'---' line without a '+++' line after it", self.lineno - 1)
        if raw.startswith("@@"):
            self._start_hunk(raw)
            return None
        self.fail(f"expected a hunk header ('@@ ...') after the '+++' line, got {_excerpt(raw)}")

    def _binary_name(self, raw: str) -> str:
        body = raw[len("Binary files "):-len(" differ")]
        left, _, right = body.partition(" and ")
        name = right if right and right != _DEV_NULL else left
        return _valid_path(_strip(_strip(name, "b/"), "a/"), self.lineno)

    # -- file sections -------------------------------------------------------------------------
    def _open_git(self, rest: str) -> None:
        self._close()
        sec = self.sec = _Section(self.lineno, git=True)
        a, b = _git_header_names(rest, self.lineno)
        sec.header_a = _valid_path(a, self.lineno) if a else None
        sec.header_b = _valid_path(b, self.lineno) if b else None

    def _extended(self, raw: str, sec: _Section) -> bool:
        for key in _EXTENDED:
            if raw.startswith(key):
                value = raw[len(key):]
                if key == "new file mode ":
                    sec.status = FileStatus.ADDED
                elif key == "deleted file mode ":
                    sec.status = FileStatus.DELETED
                elif key in ("rename from ", "rename old ", "copy from "):
                    sec.rename_from = _name(value, self.lineno, None)
                    sec.copy = key == "copy from "
                elif key in ("rename to ", "rename new ", "copy to "):
                    sec.rename_to = _name(value, self.lineno, None)
                return True
        return False

    def _plain_section(self, minus: str, plus: str) -> None:
        """A plain unified diff's section: '--- old' and '+++ new' (no 'diff --git' line) before the
        hunk header on the current line."""
        self._close()
        sec = self.sec = _Section(self.lineno - 2, git=False)
        sec.old, sec.old_seen = _name(minus[4:], self.lineno - 2, "a/"), True
        sec.new, sec.new_seen = _name(plus[4:], self.lineno - 1, "b/"), True

    def _file_change(self) -> FileChange:
        """The FileChange of the open section (created with its first hunk, or when it closes)."""
        sec = self.sec
        if sec.fc is not None:
            return sec.fc
        new = sec.new if sec.new_seen else (sec.rename_to or sec.header_b)
        old = sec.old if sec.old_seen else (sec.rename_from or sec.header_a)
        if sec.status is FileStatus.DELETED or (sec.new_seen and sec.new is None):
            status, path = FileStatus.DELETED, old
        elif sec.status is FileStatus.ADDED or (sec.old_seen and sec.old is None):
            status, path = FileStatus.ADDED, new
        elif sec.rename_from is not None or sec.rename_to is not None:
            status, path = (FileStatus.COPIED if sec.copy else FileStatus.RENAMED), new
            old = sec.rename_from or old
        else:
            status, path = FileStatus.MODIFIED, new or old
        if not path:
            self.fail("cannot tell which file this section changes (no '+++' line, no rename headers, and "
                      "the names of its 'diff --git' line are ambiguous)", sec.start)
        if sec.binary:
            status = FileStatus.BINARY
        old_path = old if old and old != path and status in (FileStatus.RENAMED, FileStatus.COPIED) else None
        sec.fc = FileChange(path=path, old_path=old_path, status=status, language="unknown", is_binary=sec.binary)
        return sec.fc

    def _close(self) -> None:
        sec = self.sec
        if sec is None:
            return
        if sec.new_seen and sec.fc is None and not sec.binary:
            self.fail("file section without a hunk after its '+++' line", sec.start)
        fc = self._file_change()
        self.sec = None
        self.last_kind = ""
        for first in (fc.added, fc.context):
            if first.get(1, "").startswith("\ufeff"):
                first[1] = first[1][1:]  # a byte order mark is not text (see sentinel.sourcetext.strip_bom)
        fc.language = detect_language(fc.path, fc.added.get(1))
        if fc.language == "python" and (1 in fc.added or 1 in fc.context):
            from sentinel.sourcetext import recode_diff_lines

            recode_diff_lines(fc)  # a declared encoding (PEP 263) is how Python reads the file
        if fc.added and fc.unreadable is None and _has_surrogates(fc.added):
            fc.unreadable = NOT_UTF8
        fc.added = LineMap.shrink(fc.added)  # a file added whole: one string, not a dict of lines
        self.files.append(fc)
        if self.on_file is not None:
            self.on_file(fc)

    # -- hunks ---------------------------------------------------------------------------------
    def _start_hunk(self, raw: str) -> None:
        m = _HUNK.match(raw)
        if m is None:
            self.fail(f"malformed hunk header {_excerpt(raw)}")
        old_start, old_len, new_start, new_len = (int(m.group(i)) if m.group(i) is not None else 1
                                                  for i in (1, 2, 3, 4))
        if max(old_start + old_len, new_start + new_len) > MAX_LINE_NUMBER:
            self.fail(f"hunk header {_excerpt(raw)} reaches beyond line {MAX_LINE_NUMBER:,}: no file that long "
                      "can be checked")
        fc = self._file_change()
        if fc.hunks:
            prev = fc.hunks[-1]
            if new_start < prev.target_start + prev.target_length or \
                    old_start < prev.source_start + prev.source_length:
                self.fail(f"hunk {_excerpt(raw)} overlaps or precedes the hunk before it")
        fc.hunks.append(Hunk(old_start, old_len, new_start, new_len, m.group(5).strip()))
        self.old_left, self.new_left = old_len, new_len
        # A side of length 0 is numbered by the line before it ("@@ -0,0 +1,3 @@"); it has no lines.
        self.old_no, self.new_no = old_start, new_start
        self.hunk_line = self.lineno
        self.in_hunk = old_len > 0 or new_len > 0
        self.last_kind = ""

    def _hunk_line(self, raw: str) -> None:
        kind = raw[:1]
        fc = self.sec.fc
        value = raw[1:]
        cr = value[-1:] == "\r"
        if cr:
            value = value[:-1]  # a CRLF line ending (unless "\ No newline" follows: see _no_newline)
        if kind == "+":
            if self.new_left <= 0:
                self._overrun(raw)
            fc.added[self.new_no] = value
            if cr:
                fc.crlf_lines.add(self.new_no)
            self.new_no += 1
            self.new_left -= 1
        elif kind == " " or not raw:  # an empty line is an empty context line (trailing space stripped)
            if self.new_left <= 0 or self.old_left <= 0:
                self._overrun(raw)
            fc.context[self.new_no] = value
            self.new_no += 1
            self.old_no += 1
            self.new_left -= 1
            self.old_left -= 1
            kind = " "
        elif kind == "-":
            if self.old_left <= 0:
                self._overrun(raw)
            fc.removed.append((self.old_no, value))
            self.old_no += 1
            self.old_left -= 1
        elif kind == "\\":
            self._no_newline(raw)
            return
        else:
            self.fail(f"unexpected line inside the hunk that starts at line {self.hunk_line}: {_excerpt(raw)} "
                      f"({self.old_left} old and {self.new_left} new line(s) still expected)")
        self.last_kind, self.last_cr = kind, cr
        if self.old_left <= 0 and self.new_left <= 0:
            self.in_hunk = False

    def _added_run(self, first: str, lines) -> None:
        """The next lines of a hunk that only adds lines, `first` the next one: up to _RUN of the lines it still
        announces are taken from `lines` at once and, when each is a '+' line, stored in one step (a whole
        tree staged for its first check is hundreds of thousands of them). Otherwise they go through
        _hunk_line one by one, which stops at the same line with the same error: the hunk cannot end before
        the last of them, since no line but a '+' line counts on an all-added side."""
        want = min(self.new_left, _RUN)
        batch = [first]
        batch.extend(islice(lines, want - 1))
        try:
            kinds = "".join(map(_KIND, batch))  # each line's first character, in C (an empty line has none)
        except IndexError:
            kinds = ""
        if len(batch) != want or kinds.count("+") != want:
            self._hunk_line(first)
            for raw in batch[1:]:
                self.lineno += 1
                self._hunk_line(raw)
            return
        fc = self.sec.fc
        start = self.new_no
        values = list(map(_AFTER_KIND, batch))
        del batch
        crlf = [i for i, value in enumerate(values, start) if value[-1:] == "\r"] \
            if self.cr_seen() and any(map(str.endswith, values, repeat("\r"))) else None
        if crlf:
            for i in crlf:
                values[i - start] = values[i - start][:-1]  # CRLF line endings (see _hunk_line)
            fc.crlf_lines.update(crlf)
        fc.added.update(zip(range(start, start + want), values))
        self.lineno += want - 1
        self.new_no += want
        self.new_left -= want
        self.last_kind, self.last_cr = "+", bool(crlf) and crlf[-1] == start + want - 1
        if self.new_left <= 0:
            self.in_hunk = False  # the old side is empty: the hunk is complete

    def _no_newline(self, raw: str) -> None:
        """'\\ No newline at end of file': the line before has no line ending, so a "\r" it ends with
        is its own (a lone CR, a line break for Python), not half of a CRLF."""
        if self.last_kind not in ("+", "-", " "):
            self.fail(f"{_excerpt(raw)} is not after a line of a hunk")
        if self.last_cr and self.last_kind in ("+", " "):
            n, fc = self.new_no - 1, self.sec.fc
            fc.crlf_lines.discard(n)
            target = fc.added if self.last_kind == "+" else fc.context
            target[n] += "\r"
        self.last_kind = "\\"

    def _overrun(self, raw: str) -> None:
        self.fail(f"line {_excerpt(raw)} is beyond what the hunk at line {self.hunk_line} announces "
                  f"({self.old_left} old and {self.new_left} new line(s) left)")


def _has_surrogates(lines: dict[int, str]) -> bool:
    """Does a line hold a lone surrogate (a byte that is not UTF-8)? A few thousand lines at a time, in C:
    joining lines neither makes nor removes one, strict UTF-8 refuses every surrogate, paired or not, and
    one wide character widens only its block, not a copy of the whole file."""
    values = iter(lines.values())
    while True:
        block = list(islice(values, _RUN))
        if not block:
            return False
        text = "".join(block)
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                return True


def parse_diff(text: str | bytes | ChunkLines, source: str = "diff", on_file=None) -> ChangeSet:
    """Parse a unified diff, as text, as the bytes git wrote (decoded a block at a time: the cheaper
    in memory) or as :class:`ChunkLines` (read while git writes it); `on_file` is called with each file
    as its section ends. Raises InputError naming the line and the problem on malformed input.

    One process reads the whole diff: cut at file sections and read by forked workers, a whole tree's
    diff (637K lines) took longer, since the lines a worker read come back pickled and are unpickled here
    (0.27 s of CPU reading it here, 0.22 s here plus a worker's 0.23 s when cut in two)."""
    try:
        files = _Parser(1, on_file).feed_all(text)
    except _Malformed as exc:
        raise InputError(f"malformed diff ({source}): line {exc.line}: {exc.problem}") from None
    _refuse_duplicates(files, source)
    # ASCII whitespace only, for text as for bytes: str.strip() would also drop \x1c-\x1f and U+2028, so one
    # input was "no change" as text and "not a diff" as the bytes git wrote.
    if isinstance(text, ChunkLines):
        blank, head = text.blank, text.head
    elif isinstance(text, bytes):
        blank, head = not text or text.isspace(), text[:4096]  # (strip() would copy the whole diff)
    else:
        blank, head = _ASCII_BLANK.fullmatch(text) is not None, text[:4096]
    if not files and not blank:
        head = head.decode("utf-8", "surrogateescape") if isinstance(head, bytes) else head
        if _looks_like_diff_attempt(head):
            raise InputError(f"malformed diff ({source}): no file sections could be parsed")
        raise InputError(f"input is not a unified diff ({source}): expected 'diff --git' or '---'/'+++' headers")
    return ChangeSet(files=files, source=source)


def _refuse_duplicates(files: list[FileChange], source: str) -> None:
    """A file changed by two sections: the second would hide what the first adds. git only ever
    writes one path twice when a file changes type (a deletion, then an addition)."""
    seen: dict[str, FileChange] = {}
    for fc in files:
        other = seen.get(fc.path)
        if other is not None and FileStatus.DELETED not in (fc.status, other.status):
            from sentinel.redact import display_path

            raise InputError(f"malformed diff ({source}): {display_path(fc.path)} is changed by two file sections")
        if other is None or other.status is FileStatus.DELETED:
            seen[fc.path] = fc


def _parse_files(text: str, source: str) -> list[FileChange]:
    """The files of one diff text, without parse_diff's checks of the whole; raises InputError like parse_diff."""
    try:
        return _Parser(1).feed_all(text)
    except _Malformed as exc:
        raise InputError(f"malformed diff ({source}): line {exc.line}: {exc.problem}") from None


def _looks_like_diff_attempt(text: str) -> bool:
    head = text[:4096]
    return any(m in head for m in ("diff --git", "\n+++ ", "\n--- ", "@@ ")) or head.startswith(("--- ", "+++ "))
