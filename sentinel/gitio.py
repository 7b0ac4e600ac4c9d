"""Thin, fast wrappers around the git command line."""

from __future__ import annotations

import os
import subprocess

from sentinel.errors import GitError

# Fixed options so user config (diff.noprefix, mnemonicPrefix, external diff tools,
# textconv, colour, quotepath) can never change what we parse.
_DIFF_OPTS = ["--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/",
              "--find-renames", "--unified=3"]
_GIT_CONFIG = ["-c", "core.quotepath=false", "-c", "diff.mnemonicprefix=false", "-c", "diff.noprefix=false",
               "-c", "diff.relative=false"]

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
ZERO_SHA = "0" * 40


NOT_INSTALLED = "git is not installed or not on PATH; use --diff FILE to check a diff without git"


def git_executable() -> str:
    """The git on PATH, for callers that run git themselves; a clear GitError when there is none."""
    import shutil

    exe = shutil.which("git")
    if exe is None:
        raise GitError(NOT_INSTALLED)
    return exe


def _start(argv: list[str], cwd: str | None, stdin: int | None = None, stdout=subprocess.PIPE) -> subprocess.Popen:
    # No PATH lookup of our own (shutil.which on every call): the exec reports a missing git.
    try:
        return subprocess.Popen(["git", *argv], cwd=cwd, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE)
    except FileNotFoundError as exc:
        if exc.filename == "git":
            raise GitError(NOT_INSTALLED) from None
        raise GitError(f"could not run git in {cwd}: {exc.strerror}") from None
    except OSError as exc:
        raise GitError(f"could not run git: {exc}") from None


def _spawn(argv: list[str], cwd: str | None, input_bytes: bytes | None = None) -> subprocess.CompletedProcess:
    proc = _start(argv, cwd, subprocess.PIPE if input_bytes is not None else None)
    with proc:
        out, err = proc.communicate(input_bytes)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


class OutputTooLarge(Exception):
    """git wrote more than the caller's limit; the process has been stopped."""


def _communicate_capped(proc: subprocess.Popen, limit: int | None) -> tuple[bytes, bytes]:
    """(stdout, stderr) of a process with nothing to write to it, like ``communicate()``, except that
    more than `limit` bytes of stdout stop it (OutputTooLarge) instead of being read into memory."""
    if limit is None or os.name == "nt":  # no select() on pipes there: read it all, then judge the size
        out, err = proc.communicate()
        if limit is not None and len(out) > limit:
            raise OutputTooLarge()
        return out, err
    err: list[bytes] = []
    try:
        out = b"".join(_stdout_blocks(proc, limit, err))
    except OutputTooLarge:
        proc.kill()
        proc.wait()
        raise
    proc.wait()
    return out, b"".join(err)


def _stdout_blocks(proc: subprocess.Popen, limit: int | None, err: list[bytes]):
    """A process's stdout in blocks as it writes them, its stderr gathered into `err` alongside (so that it
    never blocks on a full pipe); more than `limit` bytes of stdout raise OutputTooLarge (the caller stops
    the process). POSIX only: select() on pipes."""
    import selectors

    size = 0
    with selectors.DefaultSelector() as sel:
        for stream in (proc.stdout, proc.stderr):
            sel.register(stream, selectors.EVENT_READ)
        while sel.get_map():
            for key, _ in sel.select():
                chunk = os.read(key.fd, 1 << 20)
                if not chunk:
                    sel.unregister(key.fileobj)
                elif key.fileobj is proc.stderr:
                    err.append(chunk)
                else:
                    size += len(chunk)
                    if limit is not None and size > limit:
                        raise OutputTooLarge()
                    yield chunk


def run_git(args: list[str], cwd: str | None = None, input_bytes: bytes | None = None,
            check: bool = True) -> bytes:
    proc = _spawn([*_GIT_CONFIG, *args], cwd, input_bytes)
    if check and proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}"
        raise GitError(f"git {' '.join(args[:3])} failed: {msg}")
    return proc.stdout


_LOCATIONS: dict[str, tuple[str, str]] = {}


def _locate(cwd: str | None) -> tuple[str, str]:
    """(top level, absolute git dir) of the repository at cwd, from one git call, cached per process."""
    where = os.path.abspath(cwd or os.getcwd())
    hit = _LOCATIONS.get(where)
    if hit:
        return hit
    proc = _spawn(_LOCATE, where)
    return _remember_location(where, proc.returncode, proc.stdout)


_LOCATE = ["rev-parse", "--show-toplevel", "--absolute-git-dir"]


def _remember_location(where: str, returncode: int, out: bytes) -> tuple[str, str]:
    lines = out.decode("utf-8", "surrogateescape").splitlines()
    if returncode != 0 or len(lines) < 2:
        raise GitError(f"not a git repository: {where} (run inside a repository, or use --diff FILE)")
    _LOCATIONS[where] = (lines[0], lines[1])
    _LOCATIONS.setdefault(lines[0], (lines[0], lines[1]))
    return lines[0], lines[1]


def repo_root(cwd: str | None = None) -> str:
    return _locate(cwd)[0]


def git_dir(root: str) -> str:
    return _locate(root)[1]


def resolve(root: str, rev: str) -> str:
    proc = _spawn(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], root)
    if proc.returncode != 0:
        raise GitError(f"unknown revision: {rev!r}")
    return proc.stdout.decode().strip()


class StagedSnapshot:
    """The git processes of a staged run — the diff, the repository lookup and a blob reader —
    started at once, so that they run while the caller imports the rest of the gate. None of them
    needs the root: diff and blob paths are relative to the top level from any directory."""

    def __init__(self, cwd: str | None = None):
        self.where = os.path.abspath(cwd or os.getcwd())
        self.diff = _start([*_GIT_CONFIG, "diff", "--cached", *_DIFF_OPTS], self.where)
        self.locate: subprocess.Popen | None = None
        self.reader: BlobReader | None = None
        try:
            self.locate = _start(_LOCATE, self.where)
            self.reader = SpooledBlobReader.start(self.where) or BlobReader(self.where)
        except GitError:
            self.abandon()
            raise

    def stream(self, limit: int | None = None) -> tuple[str, "StreamedOutput", "BlobReader | SpooledBlobReader"]:
        """(repository root, the staged diff as git writes it, a reader for the staged blobs); raises
        GitError when this is no repository. The diff is a StreamedOutput, parsed while git writes it:
        on a whole tree git takes ~0.15 s to write a 21 MB diff, which the parser no longer waits for."""
        try:
            with self.locate as locate:
                located, _ = locate.communicate()
            root = _remember_location(self.where, locate.returncode, located)[0]
        except BaseException:
            self.abandon()
            raise
        return root, StreamedOutput(self.diff, limit, "git diff --cached"), self.reader

    def abandon(self) -> None:
        for proc in (self.diff, self.locate):
            if proc is not None and proc.poll() is None:
                proc.kill()
            if proc is not None:
                proc.communicate()
        if self.reader is not None:
            self.reader.close()


class StreamedOutput:
    """The standard output of a git process with nothing to write to it, in blocks as git writes them
    (iterate once). Its standard error is read alongside, so that git never blocks on it. More than
    `limit` bytes stop git (OutputTooLarge); a git that fails is a GitError when its output ends.
    Whoever stops iterating early calls `stop()`; `failure()` then says whether git had failed."""

    def __init__(self, proc: subprocess.Popen, limit: int | None, what: str):
        self.proc, self.limit, self.what = proc, limit, what
        self.err: list[bytes] = []
        self.stopped = False

    def __iter__(self):
        proc = self.proc
        if os.name == "nt":  # no select() on pipes there: read it all, then judge the size
            out, err = _communicate_capped(proc, self.limit)
            self.err.append(err)
            yield out
            self._check()
            return
        try:
            yield from _stdout_blocks(proc, self.limit, self.err)
        except OutputTooLarge:
            self.stop()
            raise
        proc.wait()
        self._check()

    def _check(self) -> None:
        self._close()
        if self.proc.returncode != 0:
            raise GitError(f"{self.what} failed: {_reason(b''.join(self.err), self.proc.returncode)}")

    def stop(self) -> None:
        """End git if it still runs (never raises)."""
        if self.proc.poll() is None:
            self.stopped = True
            self.proc.kill()
        try:
            self.proc.wait()
        except OSError:
            pass
        self._close()

    def failure(self) -> GitError | None:
        """After stop(): git's own failure, if it failed (a parse error of a cut-short diff is git's)."""
        code = self.proc.returncode
        if code in (0, None) or self.stopped:
            return None
        return GitError(f"{self.what} failed: {_reason(b''.join(self.err), code)}")

    def _close(self) -> None:
        for stream in (self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass


def diff_range(root: str, base: str, head: str, merge_base: bool, limit: int | None = None) -> bytes:
    """The diff of a range; OutputTooLarge past `limit` bytes (not read further)."""
    spec = [f"{base}...{head}"] if merge_base else [base, head]
    args = ["diff", *_DIFF_OPTS, *spec, "--"]
    proc = _start([*_GIT_CONFIG, *args], root)
    with proc:
        out, err = _communicate_capped(proc, limit)
    if proc.returncode != 0:
        msg = err.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}"
        raise GitError(f"git {' '.join(args[:3])} failed: {msg}")
    return out


def merge_base(root: str, a: str, b: str) -> str | None:
    out = run_git(["merge-base", a, b], cwd=root, check=False).decode().strip()
    return out or None


def ls_files(root: str, rev: str | None = None) -> list[str]:
    if rev:
        out = run_git(["ls-tree", "-r", "-z", "--name-only", rev], cwd=root)
    else:
        out = run_git(["ls-files", "-z", "--cached"], cwd=root)
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def read_blobs(root: str, specs: list[str]) -> dict[str, bytes | None]:
    """Read many blobs ("REV:path" or ":path" for the index) in one git process."""
    if not specs:
        return {}
    return BlobReader(root).read(specs)


class BlobReader:
    """One `git cat-file --batch`, started when created and read once: starting it next to the
    other git calls of a run lets its process start overlap theirs. Paths in specs are relative
    to the top level, so any directory of the repository works as cwd."""

    def __init__(self, cwd: str):
        self.cwd = cwd
        self.proc: subprocess.Popen | None = _start(["cat-file", "--batch"], cwd, subprocess.PIPE)

    def read(self, specs: list[str]) -> dict[str, bytes | None]:
        proc, self.proc = self.proc, None
        if proc is None:
            raise GitError("internal: a BlobReader reads once")
        specs, odd = _plain_specs(specs)
        payload = ("\n".join(specs) + "\n").encode("utf-8", "surrogateescape") if specs else b""
        if os.name == "nt":
            with proc:
                out, err = proc.communicate(payload)
            if proc.returncode != 0:
                raise GitError(f"git cat-file --batch failed: {_reason(err, proc.returncode)}")
            return {**_parse_batch(out, specs), **_read_nul_separated(self.cwd, odd)}
        return {**_stream_batch(proc, payload, specs), **_read_nul_separated(self.cwd, odd)}

    def close(self) -> None:
        """Stop the process when nothing is going to be read (never raises)."""
        proc, self.proc = self.proc, None
        _kill(proc)


def _kill(proc: subprocess.Popen | None) -> None:
    """Stop a git process nobody is going to read from, and reap it."""
    if proc is not None:
        with proc:
            proc.kill()
            proc.communicate()


class SpooledBlobReader:
    """A `git cat-file --batch` that is asked for blobs while the diff is still being parsed (`request`,
    as each file section ends) and writes them into an unnamed temporary file, not a pipe: nobody has to
    read while it works, so it runs on another core meanwhile and `read` finds the blobs written (a
    whole tree's 21 MB took ~0.13 s that the run used to wait for). The file has no name from its
    creation (O_TMPFILE, mode 0600) and goes with the run; where there is no such file, `start` returns
    None and the run reads through a pipe (BlobReader)."""

    def __init__(self, cwd: str, spool: int):
        self.cwd, self.spool = cwd, spool
        self.requested: list[str] = []
        self.proc: subprocess.Popen | None = None
        try:
            self.proc = _start(["cat-file", "--batch"], cwd, subprocess.PIPE, stdout=spool)
        except BaseException:
            os.close(spool)
            raise

    @classmethod
    def start(cls, cwd: str) -> "SpooledBlobReader | None":
        flag = getattr(os, "O_TMPFILE", None)
        if flag is None:
            return None
        try:  # (tempfile.gettempdir would cost the hook its import)
            spool = os.open(os.environ.get("TMPDIR") or "/tmp", flag | os.O_RDWR, 0o600)
        except OSError:  # a file system without unnamed files
            return None
        return cls(cwd, spool)

    def request(self, spec: str) -> None:
        """Ask for a blob now; `read` returns it if it is among the specs read."""
        if self.proc is None or "\n" in spec:
            return  # a name holding a line break is read on its own (_read_nul_separated)
        try:
            self.proc.stdin.write((spec + "\n").encode("utf-8", "surrogateescape"))
            self.proc.stdin.flush()  # git starts on it at once
        except (BrokenPipeError, OSError, ValueError):
            return  # git ended early: read() reports why
        self.requested.append(spec)

    def read(self, specs: list[str]) -> dict[str, bytes | None]:
        proc, self.proc = self.proc, None
        if proc is None:
            raise GitError("internal: a BlobReader reads once")
        specs, odd = _plain_specs(specs)
        asked = set(self.requested)
        order = self.requested + [s for s in dict.fromkeys(specs) if s not in asked]
        try:
            with proc:
                try:
                    proc.stdin.write("".join(s + "\n" for s in order[len(self.requested):])
                                     .encode("utf-8", "surrogateescape"))
                except (BrokenPipeError, OSError):
                    pass  # git ended early: its exit status says why
                _, err = proc.communicate()
            if proc.returncode != 0:  # e.g. no room for the file: the blobs are read through a pipe instead
                return read_blobs(self.cwd, specs + odd)
            return {**_parse_spool(self.spool, order, set(specs)), **_read_nul_separated(self.cwd, odd)}
        finally:
            os.close(self.spool)

    def close(self) -> None:
        """Stop the process when nothing is going to be read (never raises)."""
        proc, self.proc = self.proc, None
        if proc is not None:
            _kill(proc)
            os.close(self.spool)


def _plain_specs(specs: list[str]) -> tuple[list[str], list[str]]:
    """(specs a newline-separated batch can carry, specs whose path holds a line break)."""
    if not any("\n" in spec for spec in specs):
        return specs, []
    return [s for s in specs if "\n" not in s], [s for s in specs if "\n" in s]


def _read_nul_separated(cwd: str, specs: list[str]) -> dict[str, bytes | None]:
    """Blobs whose names hold a line break, which `cat-file --batch` would read as two names: given to
    `--batch -z` (NUL-separated names, git 2.36+) in a process of their own. A name it still cannot read (an older
    git) is None: the caller says the file could not be read."""
    if not specs:
        return {}
    proc = _start(["cat-file", "--batch", "-z"], cwd, subprocess.PIPE)
    with proc:
        out, _ = proc.communicate(b"".join(s.encode("utf-8", "surrogateescape") + b"\0" for s in specs))
    result: dict[str, bytes | None] = {spec: None for spec in specs}
    if proc.returncode != 0:
        return result
    pos = 0
    for spec in specs:
        name = spec.encode("utf-8", "surrogateescape")
        if out.startswith(name + b" missing\n", pos) or out.startswith(name + b" ambiguous\n", pos):
            pos = out.index(b"\n", pos + len(name)) + 1  # the answer repeats the name: its own line breaks
            continue
        nl = out.find(b"\n", pos)
        fields = out[pos:nl].split(b" ") if nl >= 0 else []
        if len(fields) != 3 or not fields[2].isdigit():
            break
        start, size = nl + 1, int(fields[2])
        if out[start + size:start + size + 1] != b"\n":
            break
        result[spec] = out[start:start + size]
        pos = start + size + 1
    return result


def _parse_spool(fd: int, order: list[str], wanted: set[str]) -> dict[str, bytes | None]:
    """The blobs of `wanted` from cat-file's output for `order`, read from the file `fd` in place."""
    size = os.fstat(fd).st_size
    result: dict[str, bytes | None] = {}
    mapped = size > _READ_SPOOL_BELOW
    if mapped:  # read in place: the blobs are copied out of it, never the whole output into memory first
        import mmap

        data = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
    else:  # a commit's few files: one read, and no mmap import on the hook path
        data = os.pread(fd, size, 0) if size else b""
    try:
        pos = 0
        for spec in order:
            nl = data.find(b"\n", pos)
            if nl < 0:
                raise GitError("git cat-file --batch failed: its output ends early")
            fields = data[pos:nl].rsplit(b" ", 2)
            pos = nl + 1
            if fields[-1] in (b"missing", b"ambiguous") or len(fields) < 3:
                value = None
            else:
                end = pos + int(fields[-1])
                if data[end:end + 1] != b"\n":  # the newline after the content
                    raise GitError("git cat-file --batch failed: its output ends early")
                value = data[pos:end] if spec in wanted else None
                pos = end + 1
            if spec in wanted:
                result[spec] = value
    finally:
        if mapped:
            data.close()
    return result


_READ_SPOOL_BELOW = 1 << 20


def _reason(err: bytes, returncode: int) -> str:
    return err.decode("utf-8", "replace").strip() or f"exit code {returncode}"


def feed_stdin(proc: subprocess.Popen, payload: bytes):
    """Write ``payload`` to a git process's stdin and close it, from a thread, so that its output can be read
    meanwhile (a pipe buffer is smaller than a batch of names). A git that ends early is read by the caller."""
    import threading

    def write() -> None:
        try:
            proc.stdin.write(payload)
        except (BrokenPipeError, OSError, ValueError):
            pass
        try:
            proc.stdin.close()
        except (BrokenPipeError, OSError, ValueError):
            pass

    writer = threading.Thread(target=write, name="sentinel-git-stdin", daemon=True)
    writer.start()
    return writer


def _stream_batch(proc: subprocess.Popen, payload: bytes, specs: list[str]) -> dict[str, bytes | None]:
    """Each blob read on its own as cat-file writes it (the specs written by a thread meanwhile): never
    the whole batch in one buffer next to its pieces, which doubled the memory of a large change."""
    result: dict[str, bytes | None] = {}
    with proc:
        writer = feed_stdin(proc, payload)
        try:
            out = proc.stdout
            for spec in specs:
                header = out.readline()
                if not header.endswith(b"\n"):
                    break
                fields = header[:-1].rsplit(b" ", 2)
                if fields[-1] in (b"missing", b"ambiguous") or len(fields) < 3:
                    result[spec] = None
                    continue
                size = int(fields[-1])
                data = out.read(size)
                if len(data) != size or out.read(1) != b"\n":  # the newline after the content
                    break
                result[spec] = data
        finally:
            writer.join()
            if len(result) < len(specs):
                proc.kill()
            err = proc.stderr.read()
            proc.wait()
    if len(result) < len(specs) or proc.returncode != 0:
        raise GitError(f"git cat-file --batch failed: {_reason(err, proc.returncode)}")
    return result


def _parse_batch(out: bytes, specs: list[str]) -> dict[str, bytes | None]:
    result: dict[str, bytes | None] = {}
    pos = 0
    for spec in specs:
        nl = out.index(b"\n", pos)
        header = out[pos:nl].decode("utf-8", "surrogateescape")
        pos = nl + 1
        if header.endswith(" missing") or header.endswith(" ambiguous"):
            result[spec] = None
            continue
        size = int(header.rsplit(" ", 1)[1])
        result[spec] = out[pos:pos + size]
        pos += size + 1  # content is followed by a newline
    return result


def commit_message(root: str, rev: str) -> str:
    return run_git(["log", "-1", "--format=%B", rev], cwd=root).decode("utf-8", "replace")
