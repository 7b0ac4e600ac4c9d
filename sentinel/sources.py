"""Where a change comes from: staged index, commit range, a diff file or stdin, the whole tree.

Each source yields a ChangeSet plus a way to read post-change file contents from the same
snapshot git would commit (the index blob for staged changes, the head commit for ranges),
never the possibly different working-tree file.
"""

from __future__ import annotations

import os
import sys

from sentinel import gitio
from sentinel.diffparse import ChunkLines, parse_diff
from sentinel.errors import GitError, InputError
from sentinel.filecache import read_files
from sentinel.languages import detect_language
from sentinel.linemap import MIN_LINES as LINEMAP_MIN
from sentinel.linemap import LineMap, pack
from sentinel.models import ChangeSet, FileChange, FileStatus, Hunk
from sentinel.record import Record, factory

# Refuse absurd inputs with a clear message rather than exhausting memory: a diff is read up to this
# size and no further (peak memory is a small multiple of it). SENTINEL_MAX_DIFF_MB changes it.
MAX_DIFF_BYTES = 256 * 1024 * 1024
MAX_DIFF_ENV = "SENTINEL_MAX_DIFF_MB"
# A working-tree file larger than this is not read (the diff's own lines stand in for it).
MAX_FILE_BYTES = 64 * 1024 * 1024


class Change(Record):
    changeset: ChangeSet
    # "" reads the index, a sha reads that commit, None reads the working tree (diff input).
    content_rev: str | None = None
    # A cat-file process already started for the index (staged changes): used by the first read.
    blob_reader: gitio.BlobReader | None = None
    # Contents the source already read from the same snapshot (whole files): handed out once, never read again.
    preread: dict[str, bytes] = factory(dict)

    def read(self, paths: list[str]) -> dict[str, bytes | None]:
        if self.preread:
            have = {p: self.preread.pop(p) for p in paths if p in self.preread}
            if have:
                rest = [p for p in paths if p not in have]
                return {**have, **self.read(rest)} if rest else have
        root = self.changeset.root
        reader, self.blob_reader = self.blob_reader, None
        if self.content_rev is not None and root:
            specs = {p: f"{self.content_rev}:{p}" for p in paths}
            if reader is not None:
                blobs = reader.read(list(specs.values()))
            else:
                blobs = gitio.read_blobs(root, list(specs.values()))
            return {p: blobs.get(s) for p, s in specs.items()}
        if reader is not None:
            reader.close()
        base = root or os.getcwd()
        full = {p: inside(base, p) for p in paths}
        found = read_files(list(full.values()), limit=MAX_FILE_BYTES)
        return {p: found[f] for p, f in full.items()}


def inside(base: str, path: str) -> str:
    """`base`/`path` when it resolves inside `base` (symlinks followed); else an InputError: a diff
    names files of the repository, and reading (then printing) anything else is an escape."""
    from sentinel.redact import display_path

    full = os.path.join(base, path)
    real_base = os.path.realpath(base)
    real = os.path.realpath(full)
    if os.path.isabs(path) or (real != real_base and not real.startswith(real_base.rstrip(os.sep) + os.sep)):
        raise InputError(f"{display_path(path)} resolves outside the repository ({display_path(real)}); "
                         "refusing to read it")
    return full


def max_diff_bytes() -> int:
    """The largest diff one run reads: MAX_DIFF_BYTES, or SENTINEL_MAX_DIFF_MB mebibytes."""
    raw = os.environ.get(MAX_DIFF_ENV, "").strip()
    if not raw:
        return MAX_DIFF_BYTES
    try:
        mib = int(raw)
    except ValueError:
        mib = 0
    if mib < 1:
        raise InputError(f"{MAX_DIFF_ENV}={raw!r}: expected a whole number of MiB, at least 1")
    return mib * 1024 * 1024


def _too_large(what: str, limit: int) -> InputError:
    return InputError(f"{what} is larger than {limit // (1024 * 1024)} MiB, the most one run reads: check it in "
                      f"parts (a shorter --range, a --diff of some of the files) or raise {MAX_DIFF_ENV}")


def staged(cwd: str | None = None, started: gitio.StagedSnapshot | None = None) -> Change:
    """The staged change; `started`: its git processes, if the caller already launched them. The diff
    is parsed as git writes it (a whole tree's diff takes git as long to write as half its parse)."""
    try:
        limit = max_diff_bytes()
    except InputError:
        if started is not None:
            started.abandon()
        raise
    root, output, reader = (started if started is not None else gitio.StagedSnapshot(cwd)).stream(limit)
    request = getattr(reader, "request", None)

    def ask_for_content(fc: FileChange) -> None:  # what Change.read will want: git reads it meanwhile
        if fc.status is not FileStatus.DELETED and not fc.is_binary and fc.status is not FileStatus.BINARY:
            request(f":{fc.path}")

    try:
        cs = parse_diff(ChunkLines(output), source="staged", on_file=ask_for_content if request else None)
    except gitio.OutputTooLarge:
        reader.close()
        raise _too_large("the staged diff", limit) from None
    except BaseException as exc:
        output.stop()
        reader.close()
        failure = output.failure() if isinstance(exc, InputError) else None
        if failure is not None:  # a diff cut short by a git that failed: git's error, not the diff's
            raise failure from None
        raise
    cs.root = root
    cs.head = "INDEX"
    return Change(cs, content_rev="", blob_reader=reader)


def parse_range(spec: str) -> tuple[str, str, bool]:
    """'A..B' / 'A...B' -> (A, B, merge-base?); a missing side is HEAD, as for git. A range that names
    no commit at all ('..') checks nothing and would pass: refused, like a revision that looks like
    an option (it would reach git's command line)."""
    if "..." in spec:
        base, head = spec.split("...", 1)
        merge = True
    elif ".." in spec:
        base, head = spec.split("..", 1)
        merge = False
    else:
        raise InputError(f"invalid range {spec!r}: expected A..B or A...B")
    base, head = base.strip(), head.strip()
    if not base and not head:
        raise InputError(f"invalid range {spec!r}: it names no commit (expected A..B or A...B, e.g. main...HEAD)")
    for rev in (base, head):
        if rev.startswith("-") or any(c.isspace() or c == "\0" for c in rev):
            raise InputError(f"invalid revision {rev!r} in range {spec!r}")
    return base or "HEAD", head or "HEAD", merge


def commit_range(spec: str, cwd: str | None = None) -> Change:
    base, head, merge = parse_range(spec)
    root = gitio.repo_root(cwd)
    head_sha = gitio.resolve(root, head)
    if base == gitio.ZERO_SHA:
        base_sha = gitio.EMPTY_TREE  # a new branch: everything reachable is new
        merge = False
    else:
        base_sha = gitio.resolve(root, base)
    if merge and gitio.merge_base(root, base_sha, head_sha) is None:
        raise GitError(f"no merge base between {base} and {head}")
    limit = max_diff_bytes()
    try:
        data = gitio.diff_range(root, base_sha, head_sha, merge, limit)
    except gitio.OutputTooLarge:
        raise _too_large(f"the diff of {spec}", limit) from None
    cs = parse_diff(data, source=f"range {spec}")
    del data
    cs.root, cs.base, cs.head = root, base_sha, head_sha
    try:
        cs.message = gitio.commit_message(root, head_sha)
    except GitError:
        cs.message = None
    return Change(cs, content_rev=head_sha)


def pre_push_range() -> str | None:
    """pre-commit's pre-push stage exports the pushed range in these variables."""
    src = os.environ.get("PRE_COMMIT_FROM_REF") or os.environ.get("PRE_COMMIT_SOURCE")
    dst = os.environ.get("PRE_COMMIT_TO_REF") or os.environ.get("PRE_COMMIT_ORIGIN")
    if src and dst:
        return f"{src}...{dst}"
    return None


def diff_input(path: str, cwd: str | None = None) -> Change:
    limit = max_diff_bytes()
    if path == "-":
        data = sys.stdin.buffer.read(limit + 1)  # no further: stdin may never end
        label = "stdin"
    else:
        try:
            with open(path, "rb") as fh:
                data = fh.read(limit + 1)
        except OSError as exc:
            raise InputError(f"cannot read diff file {path!r}: {exc.strerror}") from None
        label = path
    if len(data) > limit:
        raise _too_large(f"diff {label}", limit)
    if b"\0" in data[:8192]:
        raise InputError(f"diff {label} is binary data, not a unified diff")
    cs = parse_diff(data, source=f"diff {label}")
    del data
    try:
        cs.root = gitio.repo_root(cwd)
    except GitError:
        cs.root = None
    return Change(cs, content_rev=None)


def all_files(cwd: str | None = None) -> Change:
    """The tracked tree as one all-added change, for first adoption."""
    root = gitio.repo_root(cwd)
    contents: dict[str, bytes] = {}
    files = whole_files(root, gitio.ls_files(root), contents=contents)
    cs = ChangeSet(files=files, source="all-files", root=root, head="INDEX")
    return Change(cs, content_rev="", preread=contents)


def whole_files(root: str, paths: list[str], rev: str | None = None,
                contents: dict[str, bytes] | None = None) -> list[FileChange]:
    """Files as all-added changes, read from the index (or from commit ``rev``). `contents`, when given, receives
    the bytes read (Change.preread: the checks then read no file twice — a whole tree is 20 MB)."""
    prefix = f"{rev}:" if rev else ":"
    blobs = gitio.read_blobs(root, [f"{prefix}{p}" for p in paths])
    return whole_files_from({p: blobs.pop(f"{prefix}{p}", None) for p in paths}, contents,
                            missing=f"not in {'the index' if not rev else rev[:12]}")


def whole_files_from(blobs: dict[str, bytes | None], contents: dict[str, bytes] | None = None,
                     missing: str = "not readable") -> list[FileChange]:
    """Files with these contents (None: `missing`) as all-added changes."""
    files: list[FileChange] = []
    for p in list(blobs):
        data = blobs.pop(p)
        fc = FileChange(path=p, old_path=None, status=FileStatus.ADDED, language="unknown", existing=True)
        if data is None:
            fc.unreadable = missing
        elif b"\0" in data[:8000]:
            fc.status, fc.is_binary = FileStatus.BINARY, True  # never read by a check: its bytes are not kept
        else:
            if contents is not None:
                contents[p] = data
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                fc.unreadable = "not UTF-8 text"
                text = ""
            # git's lines ("\n"), not str.splitlines() (which also splits at \f, \v, \x1c...): the
            # checks see the lines Python sees (sentinel.linebreaks).
            lines = text.split("\n")
            if lines[-1] == "":
                lines.pop()
            if "\r" in text:
                fc.crlf_lines = {i for i, raw in enumerate(lines, 1) if raw.endswith("\r")}
                fc.added = LineMap.shrink({i: line[:-1] if i in fc.crlf_lines else line
                                           for i, line in enumerate(lines, 1)})
            elif len(lines) >= LINEMAP_MIN and text.endswith("\n"):  # the common case: the text itself, shared
                held = pack(text)  # (packed, a text that is not ASCII is its UTF-8 bytes: these very bytes)
                fc.added = LineMap(data if type(held) is bytes else held, len(lines))
            else:
                fc.added = dict(zip(range(1, len(lines) + 1), lines))
            fc.hunks = [Hunk(0, 0, 1, len(lines))] if lines else []
        fc.language = detect_language(p, fc.added.get(1))
        files.append(fc)
    return files
