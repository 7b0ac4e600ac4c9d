"""Protected paths: touching one (SEN107), and code that writes one (SEN108)."""

from __future__ import annotations

import posixpath

from sentinel.checks.jail.settings import _Settings
from sentinel.globs import matches
from sentinel.models import FileChange, FileStatus


def _matcher(patterns: tuple[str, ...], config):
    """gitignore semantics; from the translations cached with the config when there is one."""
    if config is not None:
        return config.matcher(patterns).match
    return lambda path: matches(path, list(patterns))


def is_protected(path: str, s: _Settings, config=None) -> bool:
    return _matcher(s.protected, config)(path) and not _matcher(s.exceptions, config)(path)


def _touched_protected(fc: FileChange, s: _Settings, config=None) -> str | None:
    if fc.existing:
        return None  # a file checked as it is was not touched (and a baseline must never accept touching it)
    verb = {FileStatus.ADDED: "adds", FileStatus.DELETED: "deletes", FileStatus.RENAMED: "renames",
            FileStatus.COPIED: "copies to", FileStatus.BINARY: "changes"}.get(fc.status, "modifies")
    if is_protected(fc.path, s, config):
        if fc.status is FileStatus.RENAMED and fc.old_path:
            return f"renames {fc.old_path} to protected path {fc.path}"
        return f"{verb} protected path {fc.path}"
    if fc.old_path and fc.status in (FileStatus.RENAMED, FileStatus.COPIED) and is_protected(fc.old_path, s, config):
        what = "renames" if fc.status is FileStatus.RENAMED else "copies"
        return f"{what} protected path {fc.old_path} to {fc.path}"
    return None


_HOME_EXPANSION = "/home/user"


def protected_write_target(text: str, exact: bool, s: _Settings, config=None) -> str | None:
    """Why a path literal written by code is protected, or None. ``exact`` is False when parts were
    computed at runtime (marked "\\0"): then only the unmistakable markers count, not the globs."""
    p = text.replace("\\", "/")
    if p == "~" or p.startswith("~/"):
        p = _HOME_EXPANSION + p[1:]
    elif p.startswith("~"):  # ~other_user/...
        p = "/home/" + p[1:]
    rel = posixpath.normpath(p.replace("\0", "x")).lstrip("/")
    while rel.startswith("../"):
        rel = rel[3:]
    if _matcher(s.exceptions, config)(rel):
        return None
    base = rel.rsplit("/", 1)[-1]
    slashed = "/" + rel + "/"
    if "/.ssh/" in slashed:
        return "an SSH directory"
    if "/.git/" in slashed:
        return "the .git directory"
    if "/.aws/credentials/" in slashed:
        return "AWS credentials"
    if "id_rsa" in base:
        return "an SSH private key"
    if base == ".env" or base.startswith(".env."):
        return "an environment (.env) file"
    if exact and _matcher(s.protected, config)(rel):
        return "a protected path (jail.protected-paths)"
    return None
