"""`sentinel check PATH...`: check the files a caller names, the way pre-commit expects.

pre-commit decides which files a hook sees — the user's ``files:``, ``exclude:`` and ``types:``,
the staged files on a commit, every tracked file with ``--all-files``, the pushed files at
pre-push — and passes them as arguments. A named file is checked as part of the change when the
change touches it (its diff, read from the same snapshot git commits), and whole, as an all-added
file, when it does not: that is what ``pre-commit run sentinel --all-files`` (or ``--files``)
means. Files the change deletes are kept even though pre-commit cannot name them, so deleting a
protected path is still seen.
"""

from __future__ import annotations

import os

from sentinel.errors import InputError
from sentinel.models import ChangeSet, FileStatus


def normalize(root: str, paths: list[str], cwd: str | None = None) -> list[str]:
    """Repository-relative POSIX paths for paths named relative to ``cwd`` (or absolute), in order,
    once each; a path outside the repository is an input error."""
    base = os.path.realpath(cwd or os.getcwd())
    real_root = os.path.realpath(root)
    out: dict[str, None] = {}
    for p in paths:
        full = os.path.normpath(os.path.join(base, p))
        rel = os.path.relpath(full, real_root)
        if rel == os.curdir or rel.startswith(os.pardir + os.sep) or rel == os.pardir or os.path.isabs(rel):
            raise InputError(f"{p}: not a file of the repository at {root}")
        out[rel.replace(os.sep, "/")] = None
    return list(out)


def restrict(change, paths: list[str], cwd: str | None = None):
    """The change limited to ``paths`` (plus its deletions), with named files it does not touch
    added whole from the change's own snapshot (the index, or the head commit of a range)."""
    from sentinel.sources import Change, whole_files

    cs = change.changeset
    if not cs.root:
        raise InputError("naming files needs a git repository (run inside one, or use --diff)")
    wanted = normalize(cs.root, paths, cwd)
    named = set(wanted)
    kept = [f for f in cs.files if f.path in named or f.status is FileStatus.DELETED]
    touched = {f.path for f in cs.files}
    rest = [p for p in wanted if p not in touched]
    # The bytes read for the named files serve the checks too, when they read that same snapshot (not the working
    # tree a plain diff is checked against).
    contents: dict[str, bytes] | None = {} if change.content_rev is not None else None
    extra = whole_files(cs.root, rest, rev=change.content_rev or None, contents=contents) if rest else []
    source = cs.source + (f", {len(wanted)} named file(s)" if cs.source else "")
    files = kept + extra
    restricted = ChangeSet(files=files, source=source, root=cs.root, base=cs.base, head=cs.head, message=cs.message)
    return Change(restricted, content_rev=change.content_rev, blob_reader=change.blob_reader,
                  preread={**change.preread, **(contents or {})})
