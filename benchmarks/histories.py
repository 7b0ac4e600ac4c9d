"""Real project histories for the as-shipped evaluation: which commits are bug fixes, what the project said about
each (its news fragment or changelog entry), which source files each changed, and where to split the history.

Everything here reads git and nothing of Sentinel, so the queries and the relevance judgements do not depend on
the system they measure:

- a commit is a *fix* when it adds a towncrier fragment typed as a bug fix (`CHANGES/123.bugfix.rst`,
  `newsfragments/4.bug.md`, `changelog.d/5.fix`), or adds changelog entries (CHANGES.rst, CHANGELOG.md, HISTORY,
  docs/changelog...) that are fixes: under a "Fixed" / "Bug fixes" heading, under a bug-fix release's version
  heading (x.y.z with z > 0, what the pallets projects do), or worded "Fix..."; the fragment or entries are its
  *description*. A project that writes neither (starlette) has its fixes found by wording of the subject (the PR
  title of a squash merge), which is then its description.
- a *source file* is a code file outside tests, docs, examples, benchmarks, scripts and CI; paths are compared
  without a leading src/ or lib/ (the same module before and after a move to a src layout).
- the *split*: the newest first-parent commit S such that the commits not in S's history hold at least N fixes
  that changed a source file. The history up to S is what `sentinel memory learn` sees (a checkout of S); the
  fixes after S are the queries, minus any whose subject already occurs in S's history (a cherry-pick or
  backport of a learned commit would be its own answer).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

CODE_EXT = frozenset({".py", ".pyi", ".pyx", ".pxd", ".c", ".h", ".cc", ".cpp", ".rs", ".go", ".js", ".ts",
                      ".java", ".rb"})
NOT_SOURCE_DIRS = frozenset({"test", "tests", "testing", "t", "doc", "docs", "example", "examples", "benchmark",
                             "benchmarks", "bench", "script", "scripts", "tools", "tool", ".github", "ci",
                             "changes", "changelog.d", "newsfragments", "news", "artwork", "requirements"})
NOT_SOURCE_FILES = frozenset({"setup.py", "conftest.py", "noxfile.py", "tasks.py", "fabfile.py", "conf.py",
                              "version.py", "_version.py", "__about__.py"})
FRAGMENT_DIRS = frozenset({"changes", "changelog", "changelog.d", "newsfragments", "news", "changes.d",
                           "fragments"})
FIX_TYPES = frozenset({"bugfix", "bugfixes", "bug", "fix", "fixes", "fixed"})
CHANGELOG_NAME = re.compile(r"^(changes|changelog|history|news|release[-_]?notes)(\.\w+)?$", re.IGNORECASE)
FIX_WORDING = re.compile(r"^\W*(fix|fixes|fixed|fixing|bugfix|bug fix|correct(ly)?|prevent|avoid|handle)\b",
                         re.IGNORECASE)
SUBJECT_FIX = re.compile(r"\b(fix|fixes|fixed|fixing|bug|bugfix|regression|crash|crashes|hang|leak)\b",
                         re.IGNORECASE)
SUBJECT_NOT_FIX = re.compile(r"\b(typo|typos|docs?|documentation|readme|changelog|lint|linting|mypy|ruff|flake8|"
                             r"ci|workflow|tests?|spelling|grammar|links?|pre-commit|docstrings?|comments?|annotations?|hints?)\b", re.IGNORECASE)
TYPE_HEADING = re.compile(r"^(bug ?fix(es)?|fixe[ds]|fix(es)?|bugs)$", re.IGNORECASE)
OTHER_HEADING = re.compile(r"^(added|changed|removed|deprecat\w*|security|features?|improvements?|"
                           r"(breaking )?changes|backwards?.incompatible.*|misc\w*|documentation|internal\w*|"
                           r"trivial.*|contributor.*|packaging.*|removals?.*|deprecations?.*)$", re.IGNORECASE)
VERSION_HEADING = re.compile(r"(?:^|\s|\[)v?(\d+)\.(\d+)(?:\.(\d+))?")
RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+])\1{2,}\s*$")
MD_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
RELEASED = re.compile(r"^\s*(Released|Release date)\b.*\d{4}", re.IGNORECASE)
MAX_ENTRIES = 3  # a commit adding more fix entries than this is collecting a release's notes, not one fix


@dataclass
class Commit:
    sha: str
    parents: list[str]
    date: str
    subject: str
    body: str
    files: list[str]
    description: str = ""       # the fix's fragment / changelog entries / subject (set for fixes)
    kind: str = ""              # "fragment", "changelog" or "subject" for fixes; "" otherwise
    source: set[str] = field(default_factory=set)

    @property
    def message(self) -> str:
        return f"{self.subject}\n{self.body}".strip()


def git(root: str, *args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=root, input=stdin, capture_output=True, check=True).stdout


def norm_path(path: str) -> str:
    parts = path.split("/")
    while len(parts) > 1 and parts[0] in ("src", "lib"):
        parts = parts[1:]
    return "/".join(parts)


def is_source(path: str) -> bool:
    p = PurePosixPath(path)
    if p.suffix not in CODE_EXT or p.name in NOT_SOURCE_FILES:
        return False
    if p.name.startswith("test_") or p.stem.endswith("_test") or p.stem.endswith("_tests"):
        return False
    return not any(part.lower() in NOT_SOURCE_DIRS for part in p.parts[:-1])


def source_files(paths: Iterable[str]) -> set[str]:
    return {norm_path(p) for p in paths if is_source(p)}


def clean_description(text: str) -> str:
    """A fragment or changelog entry as a bug report reads: no markup roles, issue numbers, links or handles."""
    text = re.sub(r":(issue|pr|ghsa|gh|user|bug|cve|commit|pull|discussion)?:`[^`]*`", " ", text)
    text = re.sub(r"\{(issue|pr|user|ghsa|gh)\}`[^`]*`", " ", text)
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)          # markdown links keep their text
    text = re.sub(r"`([^`<]+?)\s*<[^>]*>`_+", r"\1", text)           # rst links keep their text
    text = re.sub(r"https?://\S+", " ", text)
    text = re.sub(r"\(?\b(gh-|GH-|#)\d+\b\)?", " ", text)
    text = re.sub(r"(?<!\w)@[\w-]+", " ", text)
    text = re.sub(r"(?m)^\s*(?:[-*+]|\d+\.)\s+", "", text)
    text = re.sub(r"\s*-- by\s*$", "", text.strip())
    text = re.sub(r"\b(Patch|Contributed|Reported|Thanks) by\b.*$", "", text, flags=re.IGNORECASE | re.DOTALL)
    return re.sub(r"\s+", " ", text).strip(" .;,") + "."


def list_commits(root: str, rev: str = "HEAD") -> list[Commit]:
    """Every non-merge commit reachable from rev, newest first, with its message and changed files."""
    out = git(root, "log", "--no-merges", "--no-renames", "--name-only", "--format=%x1e%H%x1f%P%x1f%cI%x1f%B%x1f",
              rev).decode("utf-8", "replace")
    commits = []
    for block in out.split("\x1e")[1:]:
        sha, parents, date, message, files = block.split("\x1f")
        subject, _, body = message.strip().partition("\n")
        commits.append(Commit(sha=sha, parents=parents.split(), date=date, subject=subject.strip(),
                              body=body.strip(), files=[f for f in files.split("\n") if f.strip()]))
    return commits


def _fragment_type(path: str) -> str | None:
    p = PurePosixPath(path)
    if not any(part.lower() in FRAGMENT_DIRS for part in p.parts[:-1]):
        return None
    parts = [x.lower() for x in p.name.split(".")]
    return "fix" if FIX_TYPES & set(parts[1:]) else "other"


def _cat_files(root: str, specs: list[str]) -> list[str]:
    """The text of each `rev:path` (empty when missing), through one git cat-file."""
    if not specs:
        return []
    raw = git(root, "cat-file", "--batch", stdin=("\n".join(specs) + "\n").encode())
    out, pos = [], 0
    for _ in specs:
        nl = raw.index(b"\n", pos)
        header = raw[pos:nl].split()
        pos = nl + 1
        if len(header) < 3 or header[1] == b"missing":
            out.append("")
            continue
        size = int(header[2])
        out.append(raw[pos:pos + size].decode("utf-8", "replace"))
        pos += size + 1
    return out


def _headings(lines: list[str]) -> list[str | None]:
    """For every line of a changelog, the nearest heading above it (rst underlined titles, markdown #s, and a
    bold or plain line ending in a colon that opens a list such as "Bugfixes:")."""
    current: str | None = None
    out: list[str | None] = []
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        md = MD_HEADING.match(line)
        if md:
            current = md.group(1)
        elif line.strip() and RST_UNDERLINE.match(nxt) and not RST_UNDERLINE.match(line):
            current = line.strip()
        elif re.match(r"^\s*(\*\*|__)?[A-Za-z][\w ]{2,30}:?(\*\*|__)?:?\s*$", line) and not line.startswith(" "):
            current = line.strip().strip("*_: ")
        out.append(current)
    return out


def _is_fix_section(heading: str | None) -> bool | None:
    """True / False when the heading says fixes / something else; None when it does not say (a version)."""
    if not heading:
        return None
    h = re.sub(r"[\[\]*_`]", "", heading).strip().rstrip(":")
    if TYPE_HEADING.match(h):
        return True
    if OTHER_HEADING.match(h):
        return False
    v = VERSION_HEADING.search(h)
    if v and v.group(3) is not None:
        return int(v.group(3)) > 0  # a bug-fix release (x.y.z, z > 0)
    return None


def _changelog_entries(root: str, commits: dict[str, Commit]) -> dict[str, list[str]]:
    """sha -> the fix entries the commit added to a changelog file."""
    names = sorted({f for c in commits.values() for f in c.files
                    if CHANGELOG_NAME.match(PurePosixPath(f).name) and PurePosixPath(f).suffix in
                    ("", ".rst", ".md", ".txt")})
    if not names:
        return {}
    out = git(root, "log", "--no-merges", "--no-renames", "-p", "-U0", "--format=%x1e%H", "--", *names)
    added: dict[tuple[str, str], list[int]] = {}
    for block in out.decode("utf-8", "replace").split("\x1e")[1:]:
        sha = block.split("\n", 1)[0].strip()
        path, new_line = None, 0
        for line in block.split("\n")[1:]:
            if line.startswith("+++ "):
                path = line[6:] if line.startswith("+++ b/") else None
            elif line.startswith("@@"):
                m = re.match(r"@@ -\S+ \+(\d+)", line)
                new_line = int(m.group(1)) if m else 0
            elif line.startswith("+") and path:
                added.setdefault((sha, path), []).append(new_line)
                new_line += 1
    keys = sorted(added)
    texts = _cat_files(root, [f"{sha}:{path}" for sha, path in keys])
    entries: dict[str, list[str]] = {}
    releases = set()
    for (sha, _path), text, numbers in zip(keys, texts, (added[k] for k in keys)):
        lines = text.split("\n")
        heads = _headings(lines)
        wanted = set(numbers)
        # a release commit titles a version (or dates it): the entries it adds landed with earlier commits
        if any(0 < n <= len(lines) and (RELEASED.match(lines[n - 1]) or (heads[n - 1] == lines[n - 1].strip()
               and VERSION_HEADING.search(lines[n - 1])) or (MD_HEADING.match(lines[n - 1]) and
               VERSION_HEADING.search(lines[n - 1]))) for n in numbers):
            releases.add(sha)
        found: list[str] = []
        i = 0
        while i < len(lines):
            line = lines[i]
            if i + 1 in wanted and re.match(r"^\s*(?:[-*+]|\d+\.)\s+\S", line):
                indent = len(line) - len(line.lstrip())
                chunk = [line]
                j = i + 1
                while j < len(lines) and lines[j].strip() and not re.match(r"^\s*(?:[-*+]|\d+\.)\s+\S", lines[j]) \
                        and (len(lines[j]) - len(lines[j].lstrip())) > indent:
                    chunk.append(lines[j])
                    j += 1
                entry = " ".join(x.strip() for x in chunk)
                section = _is_fix_section(heads[i])
                if section or (section is None and FIX_WORDING.match(entry.lstrip("-*+ 0123456789."))):
                    found.append(entry)
                i = j
                continue
            i += 1
        if found:
            entries.setdefault(sha, []).extend(found)
    return {sha: found for sha, found in entries.items() if sha not in releases}


def mark_fixes(root: str, commits: list[Commit]) -> str:
    """Set description/kind/source of every fix commit in place; returns the kind the project's descriptions
    come from: "news" (fragments or changelog entries) when the project writes them for its fixes, else
    "subject"."""
    by_sha = {c.sha: c for c in commits}
    for c in commits:
        c.source = source_files(c.files)
    fragments: dict[str, list[str]] = {}
    specs, owners = [], []
    for c in commits:
        for f in c.files:
            if _fragment_type(f) == "fix":
                specs.append(f"{c.sha}:{f}")
                owners.append(c.sha)
    texts = _cat_files(root, specs)
    # a fragment may be a symbolic link to another (one entry for several issues): its text is the target's name
    links = [i for i, t in enumerate(texts) if re.fullmatch(r"[\w.+-]+", t.strip())]
    targets = _cat_files(root, [f"{owners[i]}:{PurePosixPath(specs[i].split(':', 1)[1]).parent}/{texts[i].strip()}"
                                for i in links])
    for i, target in zip(links, targets):
        texts[i] = target
    for sha, text in zip(owners, texts):
        if text.strip():
            fragments.setdefault(sha, []).append(text.strip())
    entries = _changelog_entries(root, by_sha)
    news = 0
    for c in commits:
        if c.sha in fragments:
            c.kind, c.description = "fragment", clean_description(" ".join(fragments[c.sha]))
        elif c.sha in entries and len(entries[c.sha]) <= MAX_ENTRIES:
            c.kind, c.description = "changelog", clean_description(" ".join(entries[c.sha]))
        news += bool(c.kind and c.source)
    if news >= 40:
        return "news"
    for c in commits:
        if SUBJECT_FIX.search(c.subject) and not SUBJECT_NOT_FIX.search(c.subject) and not c.kind:
            c.kind, c.description = "subject", clean_description(c.subject)
    return "subject"


@dataclass
class Split:
    sha: str                    # the checkout `memory learn` runs in
    date: str
    history: list[Commit]       # non-merge commits reachable from sha (what learn can see)
    later: list[Commit]         # non-merge commits after it
    queries: list[Commit]       # later fixes with a description and a source file, minus repeats of history
    repeats: int                # later fixes dropped because their subject occurs in the history
    kind: str                   # "news" or "subject"


def split(root: str, n_fixes: int = 24, rev: str = "HEAD") -> Split:
    commits = list_commits(root, rev)
    kind = mark_fixes(root, commits)
    by_sha = {c.sha: c for c in commits}
    first_parent = git(root, "rev-list", "--first-parent", rev).decode().split()

    def later_of(sha: str) -> list[str]:
        return git(root, "rev-list", "--no-merges", f"{sha}..{rev}").decode().split()

    def fixes(shas: list[str]) -> int:
        return sum(1 for s in shas if s in by_sha and by_sha[s].kind and by_sha[s].source)

    # the smallest first-parent depth whose later commits hold n fixes (monotonic: binary search)
    lo, hi = 1, len(first_parent) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if fixes(later_of(first_parent[mid])) >= n_fixes:
            hi = mid
        else:
            lo = mid + 1
    cut = first_parent[lo]
    later_set = set(later_of(cut))
    history = [c for c in commits if c.sha not in later_set]
    later = [c for c in commits if c.sha in later_set]
    seen_subjects = {c.subject.strip().lower() for c in history}
    fixes_after = [c for c in later if c.kind and c.source]
    queries = [c for c in fixes_after if c.subject.strip().lower() not in seen_subjects]
    date = git(root, "log", "-1", "--format=%cI", cut).decode().strip()
    return Split(sha=cut, date=date, history=history, later=later, queries=queries,
                 repeats=len(fixes_after) - len(queries), kind=kind)
