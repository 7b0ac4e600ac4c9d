"""A small cache of values derived from project files (config, line-length settings).

Parsing TOML and validating with pydantic costs more than a whole small hook run, and these
files rarely change. An entry holds only the derived value and a SHA-256 digest of every file
it was derived from (or that the file was absent): it is used only when all of them are
byte-for-byte the same (no mtimes to fool), and it never holds a copy of the files themselves —
a ``tox.ini`` or ``pyproject.toml`` may carry a database URL with its password, and a cache
under ``.git`` must not keep it. Entries are ``marshal`` data (plain dicts, lists, strings,
numbers): loading one imports nothing. A missing, stale or broken entry is simply rebuilt;
failing to write one is never an error.
"""

from __future__ import annotations

import marshal
import os

# Bump when the shape of cached values changes.
FORMAT = 3
# False in processes that promise to write nothing (the MCP server): entries are still read.
WRITES = True


# Project configuration files are small; anything larger is not one (a symlink to /dev/zero, a
# generated blob) and is treated as absent rather than read into memory.
MAX_CONFIG_BYTES = 4 * 1024 * 1024


def read_files(paths: list[str], limit: int = MAX_CONFIG_BYTES) -> dict[str, bytes | None]:
    """Current bytes of each regular file up to `limit` bytes (None when absent, unreadable, not a
    regular file — a FIFO would block the run, a device never end — or larger than `limit`)."""
    import stat

    out: dict[str, bytes | None] = {}
    for path in paths:
        out[path] = None
        try:
            # Non-blocking open: opening a FIFO for reading would otherwise wait for a writer.
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            continue
        try:
            with open(fd, "rb", buffering=0) as fh:
                st = os.fstat(fd)
                if stat.S_ISREG(st.st_mode) and st.st_size <= limit:
                    data = fh.read(st.st_size + 1)  # one read of the known size; more only if it grew
                    while len(data) > st.st_size and len(data) <= limit:
                        more = fh.read(1 << 16)
                        if not more:
                            break
                        data += more
                    out[path] = data if len(data) <= limit else None
        except OSError:
            pass
    return out


def _entry_path(cache_dir: str, name: str) -> str:
    return os.path.join(cache_dir, f"{name}.marshal")


def load(cache_dir: str | None, name: str, salt: str, files: dict[str, bytes | None]):
    """The cached value for exactly these file contents, or None."""
    if not cache_dir:
        return None
    try:
        with open(_entry_path(cache_dir, name), "rb") as fh:
            entry = marshal.load(fh)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if (not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("salt") != salt
            or entry.get("files") != digest(files)):
        return None
    return entry.get("value")


def _sha256():
    from sentinel.digest import sha256  # CPython's own SHA-256: importing hashlib loads OpenSSL

    return sha256()


def digest(files: dict[str, bytes | None]) -> str:
    """What identifies these exact file contents, without containing them."""
    h = _sha256()
    for path in sorted(files):
        data = files[path]
        h.update(path.encode("utf-8", "surrogateescape") + b"\0")
        h.update(b"-\0" if data is None else b"%d\0" % len(data) + data)
    return h.hexdigest()


def store(cache_dir: str | None, name: str, salt: str, files: dict[str, bytes | None], value) -> None:
    if not cache_dir or not WRITES:
        return
    path = _entry_path(cache_dir, name)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(cache_dir, exist_ok=True)
        with open(tmp, "wb") as fh:
            marshal.dump({"format": FORMAT, "salt": salt, "files": digest(files), "value": value}, fh)
        os.replace(tmp, path)
    except (OSError, ValueError):  # caching is an optimisation only
        try:
            os.unlink(tmp)  # sentinel: ignore[SEN103] - the temp file this function just created
        except OSError:
            pass
