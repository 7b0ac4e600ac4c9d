"""Where a finding lives in the repository, for reports that must point at a real file and line.

Most findings have one: a file of the change and a line in it. Some do not: the task-drift
check judges the change as a whole, the claims check judges the commit message or PR body
(pseudo-path ``COMMIT_MSG``), and a finding on a deleted file points at a file that no longer
exists. Code scanning rejects a result without a location in a real file, and a PR link to a
missing file is a 404, so such findings are *anchored* to the change itself: the first added
line of the first file the change adds or modifies, with the message saying what the finding
is really about.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from sentinel.models import FileStatus, Finding

MESSAGE_PATH = "COMMIT_MSG"


@dataclass(frozen=True, slots=True)
class Place:
    path: str
    line: int
    anchored: bool = False  # True: not the finding's own place, but the change's anchor
    about: str = ""  # what an anchored finding is really about, for its message


def is_pseudo_path(path: str) -> bool:
    """Paths that name no file: the change as a whole, the commit message, ``<stdin>``."""
    return not path or path == MESSAGE_PATH or path.startswith("<")


class Locator:
    """Real places for findings, from the change's files and (when known) the repository root."""

    def __init__(self, files=None, root: str | None = None):
        self.root = root
        self._first_added: dict[str, int] = {}
        self._present: set[str] = set()
        self._deleted: set[str] = set()
        self.anchor: tuple[str, int] | None = None
        for fc in files or ():
            if fc.status is FileStatus.DELETED:
                self._deleted.add(fc.path)
                continue
            self._present.add(fc.path)
            if fc.added:
                self._first_added[fc.path] = min(fc.added)
        self._known = files is not None
        for fc in files or ():
            if fc.path in self._first_added and not fc.is_binary and self._exists(fc.path):
                self.anchor = (fc.path, self._first_added[fc.path])
                break
        if self.anchor is None:
            for fc in files or ():
                if fc.path in self._present and not fc.is_binary and self._exists(fc.path):
                    self.anchor = (fc.path, 1)
                    break

    @classmethod
    def from_changeset(cls, changeset) -> Locator:
        return cls(changeset.files, changeset.root)

    def _exists(self, path: str) -> bool:
        if self.root:
            full = os.path.join(self.root, path)
            return os.path.isfile(full) and _inside(self.root, full)
        # Without a checkout, trust the change: a path it adds or modifies exists after it.
        return not self._known or path in self._present

    def place(self, f: Finding, path: str | None = None) -> Place | None:
        """The finding's own file and line when that file exists, else the change's anchor, else None.
        `path`: the finding's real path when `f` is a copy for output (whose path is quoted for display)."""
        path = f.path if path is None else path
        if not is_pseudo_path(path) and path not in self._deleted and self._exists(path):
            line = f.line if f.line and f.line >= 1 else self._first_added.get(path, 1)
            return Place(path, line)
        if self.anchor is None:
            return None
        if f.path == MESSAGE_PATH:
            about = f"the commit message (line {f.line})" if f.line else "the commit message"
        elif is_pseudo_path(f.path):
            about = "the change as a whole"
        else:
            about = f"{f.path}, which the change deletes" if f.path in self._deleted else f"{f.path}"
        return Place(self.anchor[0], self.anchor[1], anchored=True, about=about)


def _inside(root: str, full: str) -> bool:
    real_root = os.path.realpath(root)
    return os.path.commonpath([real_root, os.path.realpath(full)]) == real_root
