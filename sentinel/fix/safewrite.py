"""Read and replace a working-tree file without following links (docs/security.md, "The fixer").

A repository is hostile input: it may commit symbolic links where the fixer would write (its temporary
file, the file itself, a directory on the way), or swap one in while a fix is computed. Every step here
goes through a descriptor of the file's own directory, opened component by component from the
repository root with ``O_NOFOLLOW``:

- a path with a link anywhere below the root, a ``..``, or a ``.git`` component is refused;
- the file must be a regular file, opened without following a link;
- the temporary file is created exclusively (``O_CREAT | O_EXCL | O_NOFOLLOW``, a random name) in that
  directory; its mode is set through its descriptor, never through a path;
- right before the rename the file is read again, and the fix is refused if its bytes or its inode
  changed since the check;
- the rename is relative to the same directory descriptor: it replaces a directory entry and never
  writes through one.

Platforms without descriptor-relative calls (``os.supports_dir_fd``) get no fixes written; previews
(``--diff-fixes``) still work.
"""

from __future__ import annotations

import os
import secrets
import stat

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_MAX_BYTES = 64 * 1024 * 1024  # a working-tree file larger than this is not fixed


class Refused(Exception):
    """The file may not be read or written here; the message says why (shown to the user)."""


def supported() -> bool:
    return bool(_NOFOLLOW and _DIRECTORY) and {os.open, os.rename, os.unlink} <= os.supports_dir_fd


def _components(path: str) -> list[str]:
    parts = path.split("/")
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise Refused("it lies outside the repository")
    # .git (any case: case-insensitive file systems) is git's own: hooks, config. Never written.
    if any(p.casefold() == ".git" for p in parts):
        raise Refused("it lies inside .git")
    return parts


def _open_parent(root: str, path: str) -> tuple[int, str]:
    """A descriptor of the directory holding `path` (relative to `root`) and the file's own name."""
    parts = _components(path)
    fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for part in parts[:-1]:
            try:
                nxt = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            except OSError as exc:
                raise Refused(_why(exc, "a directory on its path")) from None
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]


def _why(exc: OSError, what: str) -> str:
    import errno

    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return f"{what} is a symbolic link or not what it should be"
    return f"it cannot be read in the working tree ({exc.strerror})"


def _read_regular(dir_fd: int, name: str) -> tuple[bytes, os.stat_result]:
    try:
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0), dir_fd=dir_fd)
    except OSError as exc:
        raise Refused(_why(exc, "it")) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused("it is not a regular file")
        if st.st_size > _MAX_BYTES:
            raise Refused("it is too large to fix")
        chunks = []
        while True:
            block = os.read(fd, 1 << 20)
            if not block:
                break
            chunks.append(block)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def read(root: str, path: str) -> bytes:
    """The working-tree bytes of `path`, read without following any link below `root`."""
    if not supported():
        raise Refused("this platform cannot open files without following links")
    dir_fd, name = _open_parent(root, path)
    try:
        return _read_regular(dir_fd, name)[0]
    finally:
        os.close(dir_fd)


def replace(root: str, path: str, expected: bytes, content: bytes) -> None:
    """Replace `path` with `content`, only if it still holds exactly `expected` (what was checked)."""
    if not supported():
        raise Refused("this platform cannot write files without following links")
    dir_fd, name = _open_parent(root, path)
    tmp = None
    try:
        current, st = _read_regular(dir_fd, name)
        if current != expected:
            raise Refused("it changed since it was checked: run again")
        tmp, fd = _create_exclusive(dir_fd, name)
        try:
            view = memoryview(content)
            while view:
                view = view[os.write(fd, view):]
            # the permission bits only: set-id bits are not carried onto content the fixer wrote
            os.fchmod(fd, stat.S_IMODE(st.st_mode) & 0o777)
        finally:
            os.close(fd)
        again, st_again = _read_regular(dir_fd, name)
        if again != expected or (st_again.st_dev, st_again.st_ino) != (st.st_dev, st.st_ino):
            raise Refused("it changed while the fix was written: run again")
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)  # POSIX rename replaces atomically
        tmp = None
    except OSError as exc:
        raise Refused(f"it could not be written: {exc.strerror}") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp, dir_fd=dir_fd)  # sentinel: ignore[SEN103] - our own temporary file, by descriptor
            except OSError:
                pass
        os.close(dir_fd)


def _create_exclusive(dir_fd: int, name: str) -> tuple[str, int]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    for _ in range(100):
        tmp = f".{name[:200]}.sentinel-fix-{secrets.token_hex(8)}"
        try:
            return tmp, os.open(tmp, flags, 0o600, dir_fd=dir_fd)
        except FileExistsError:
            continue
    raise Refused("no temporary file could be created beside it")
