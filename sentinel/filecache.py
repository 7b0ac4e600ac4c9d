"""A small cache of values derived from project files (config, line-length settings).

Parsing TOML and validating with pydantic costs more than a whole small hook run, and these
files rarely change. An entry stores the exact bytes of every file it was derived from (or
that the file was absent) and is used only when all of them are byte-for-byte the same: no
hashes to collide, no mtimes to fool. Entries are ``marshal`` data (plain dicts, lists,
strings, numbers): loading one imports nothing. A missing, stale or broken entry is simply
rebuilt; failing to write one is never an error.
"""

from __future__ import annotations

import marshal
import os

# Bump when the shape of cached values changes.
FORMAT = 2
# False in processes that promise to write nothing (the MCP server): entries are still read.
WRITES = True


def read_files(paths: list[str]) -> dict[str, bytes | None]:
    """Current bytes of each file (None when absent or unreadable)."""
    out: dict[str, bytes | None] = {}
    for path in paths:
        try:
            with open(path, "rb") as fh:
                out[path] = fh.read()
        except OSError:
            out[path] = None
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
            or entry.get("files") != files):
        return None
    return entry.get("value")


def store(cache_dir: str | None, name: str, salt: str, files: dict[str, bytes | None], value) -> None:
    if not cache_dir or not WRITES:
        return
    path = _entry_path(cache_dir, name)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(cache_dir, exist_ok=True)
        with open(tmp, "wb") as fh:
            marshal.dump({"format": FORMAT, "salt": salt, "files": files, "value": value}, fh)
        os.replace(tmp, path)
    except (OSError, ValueError):  # caching is an optimisation only
        try:
            os.unlink(tmp)  # sentinel: ignore[SEN103] - the temp file this function just created
        except OSError:
            pass
