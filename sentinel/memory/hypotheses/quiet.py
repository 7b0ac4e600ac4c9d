"""Skip the hypothesis store on a clean run that cannot change anything in it.

A run with no findings, after a clean run on the same branch, records nothing the memory uses:
no signature, no resolution. Opening SQLite and asking git for HEAD would still cost a sixth of
a small hook run, so the store's directory keeps a small note of which branches were clean at
the last write, together with the size and mtime of the database files at that moment. The
note is trusted only while those files are unchanged: any other writer (another hook, `memory
forget`, retention) invalidates it and the next run takes the full path.
"""

from __future__ import annotations

import marshal
import os

_NOTE_SUFFIX = ".clean"


def _stamp(db_path: str) -> list:
    out = []
    for path in (db_path, db_path + "-wal"):
        try:
            st = os.stat(path)
        except OSError:
            out.append(None)
        else:
            out.append((st.st_size, st.st_mtime_ns))
    return out


def _read(db_path: str) -> dict | None:
    try:
        with open(db_path + _NOTE_SUFFIX, "rb") as fh:
            note = marshal.load(fh)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return note if isinstance(note, dict) else None


def is_quiet(db_path: str, key: str) -> bool:
    """Was `key` (project + branch) clean at the last write, and has nobody written since?"""
    note = _read(db_path)
    return bool(note) and note.get("stamp") == _stamp(db_path) and key in note.get("clean", ())


def note_written(db_path: str, key: str, clean: bool) -> None:
    """Call after writing (and closing) the store: remember whether `key` is now clean."""
    note = _read(db_path)
    keys = set(note.get("clean", ())) if note and note.get("stamp") is not None else set()
    keys.discard(key)
    if clean:
        keys.add(key)
    tmp = f"{db_path}{_NOTE_SUFFIX}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            marshal.dump({"stamp": _stamp(db_path), "clean": sorted(keys)[-200:]}, fh)
        os.replace(tmp, db_path + _NOTE_SUFFIX)
    except (OSError, ValueError):  # only an optimisation
        try:
            os.unlink(tmp)  # sentinel: ignore[SEN103] - the temp file this function just created
        except OSError:
            pass

