"""Candidate fixes from the local git history.

Three git processes however long the history: `git log` lists every commit with its message and changed files
(names only: line counts would make git diff every commit, most of the run's time on a long history), the
candidates are chosen from that, one `git diff-tree --stdin` streams the patches of the candidates only,
counting their added and removed lines as they pass, and one `git cat-file --batch` reads both versions of each
candidate's changed Python files (the AST of the fix: resolution.py). A commit is a candidate when

  - it adds or edits a news/changelog fragment marked as a bug fix (towncrier types bugfix/bug/fix, or a
    `:tags: bug` changelog entry), or
  - its subject uses fix / bug / regression / crash / leak / hang wording, or
  - it is a revert, or
  - it references an issue (#N, GH-N, an issue or pull-request URL) and changes tests.

Changed tests are recorded as a quality signal (the standardiser's confidence and the card's verification).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from sentinel.gitio import feed_stdin
from sentinel.memory.learn.codechange import MAX_SOURCE as MAX_BLOB
from sentinel.memory.learn.codechange import PY_FILE
from sentinel.memory.learn.model import Candidate, FileDiff
from sentinel.memory.learn.paths import is_bugfix_fragment, role

FIX_WORDS = re.compile(r"\b(?:fix(?:e[sd]|ing)?|bug(?:fix(?:es)?)?s?|regression|crash(?:es|ed|ing)?|hang(?:s|ing)?|"
                       r"leak(?:s|ing)?|broken|incorrect(?:ly)?|wrong(?:ly)?|segfault|deadlock|race condition|"
                       r"traceback|do(?:es)? not work|doesn't work|no longer (?:fails|crashes|raises))\b",
                       re.IGNORECASE)
REF = re.compile(r"(?<![\w/&])(?:#|GH-|gh-)(\d{1,7})\b")
URL = re.compile(r"https?://github\.com/[\w.-]+/[\w.-]+/(?:issues|pull)/\d+")
CLOSING = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+(?:#|GH-|gh-)(\d+)", re.IGNORECASE)
REVERT = re.compile(r'^Revert\b|This reverts commit [0-9a-f]{7,40}', re.MULTILINE)
BUG_ENTRY = re.compile(r":tags:[^\n]*\bbug\b|^\s*\[?(?:bug ?fix(?:es)?|bug|fixed|fix)\]?\s*:?\s*$|"
                       r"^\s*[-*]\s*(?:\*\*)?(?:fix(?:ed|es)?|bug ?fix)\b", re.IGNORECASE | re.MULTILINE)
NOT_BUG_FRAGMENT = re.compile(r"\.(?:feature|features|doc|docs|misc|removal|deprecation|breaking|trivial|"
                              r"vendor|packaging|contrib|improvement|enhancement|chore)(?:\.\d+)?(?:\.[a-z]+)?$",
                              re.IGNORECASE)
TEST_DEF = re.compile(r"^\+\s*(?:async\s+)?def (test\w*)|^\+\s*class (Test\w*)", re.MULTILINE)
_SHA = re.compile(rb"^[0-9a-f]{40}$")
MAX_FILE_DIFF = 12_000
MAX_COMMIT_DIFF = 48_000
MAX_FRAGMENT = 2_000


@dataclass
class CommitMeta:
    sha: str
    date: str
    message: str
    files: list[str] = field(default_factory=list)  # changed paths

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0].strip()

    @property
    def body(self) -> str:
        return self.message.split("\n", 1)[1].strip() if "\n" in self.message else ""


def _git(root: str, args: list[str]) -> bytes:
    from sentinel.errors import GitError

    proc = subprocess.run(["git", "-c", "core.quotepath=off", *args], cwd=root, capture_output=True)
    if proc.returncode != 0:
        raise GitError(f"git {' '.join(args[:2])} failed: {proc.stderr.decode('utf-8', 'replace').strip()[:300]}")
    return proc.stdout


def list_commits(root: str, rev: str = "HEAD", since: str | None = None, until: str | None = None,
                 max_commits: int | None = None, exclude: set[str] | None = None) -> list[CommitMeta]:
    """Non-merge commits reachable from rev (newest first), with message and changed paths, minus `exclude`."""
    args = ["log", "--no-merges", "--no-renames", "--name-only", "--format=%x1e%H%x1f%aI%x1f%B%x1f", rev]
    if since:
        args.append(f"--since={since}")
    if until:
        args.append(f"--until={until}")
    if max_commits:
        args.append(f"--max-count={int(max_commits)}")
    out = _git(root, args).decode("utf-8", "replace")
    commits = []
    for chunk in out.split("\x1e")[1:]:
        parts = chunk.split("\x1f", 3)
        if len(parts) < 4:
            continue
        sha, date, message, stat = parts
        if exclude and sha in exclude:
            continue
        files = [line for line in stat.strip("\n").splitlines() if line]
        commits.append(CommitMeta(sha, date, message.strip(), files))
    return commits


MAX_FILES = 60  # Python files of one candidate read for the AST (a larger fix is read from its diff)
MAX_CHANGED_LINES = 4_000  # a commit changing more lines than this is a mass change, not one fix
MAX_CHANGED_FILES = 150  # ... and one changing more files than this (known before its patch is read)


def preselect(c: CommitMeta) -> list[str]:
    """Reasons this commit may be a fix, from its message and file list alone (empty: not a candidate)."""
    reasons = []
    if len(c.files) > MAX_CHANGED_FILES:
        return []
    subject = c.subject
    roles = [role(p) for p in c.files]
    if any(r == "fragment" and not NOT_BUG_FRAGMENT.search(p) for p, r in zip(c.files, roles)):
        reasons.append("fragment?")
    if FIX_WORDS.search(subject) or CLOSING.search(c.message):
        reasons.append("wording")
    if REVERT.search(c.message):
        reasons.append("revert")
    if "test" in roles and (REF.search(c.message) or URL.search(c.message)):
        reasons.append("ref+tests")
    if "changelog" in roles and "source" in roles:
        reasons.append("changelog?")
    return reasons


def stream_diffs(root: str, shas: list[str]) -> Iterable[tuple[str, dict[str, str], bool, dict[str, list[int]]]]:
    """(sha, {path: diff text}, truncated, {path: [added, removed]}) for each sha, from one `git diff-tree
    --stdin` process. The line counts are of the whole patch, cut or not."""
    if not shas:
        return
    proc = subprocess.Popen(["git", "-c", "core.quotepath=off", "diff-tree", "--stdin", "--root", "-p",
                             "--no-renames", "--no-color", "-U3", "-r"], cwd=root, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    writer = feed_stdin(proc, "".join(f"{s}\n" for s in shas).encode())
    current: str | None = None
    files: dict[str, list[bytes]] = {}
    sizes: dict[str, int] = {}
    counts: dict[str, list[int]] = {}
    total = 0
    truncated = False
    in_hunk = False
    path: str | None = None

    def finish():
        return (current, {p: b"".join(v).decode("utf-8", "replace") for p, v in files.items()}, truncated,
                counts)

    for line in proc.stdout:
        stripped = line.rstrip(b"\n")
        if len(stripped) == 40 and _SHA.match(stripped):
            if current is not None:
                yield finish()
            current, files, sizes, counts, total, truncated, path = stripped.decode(), {}, {}, {}, 0, False, None
            continue
        if line.startswith(b"diff --git "):
            m = re.match(rb"diff --git a/(.*) b/(.*)$", stripped)
            path = m.group(2).decode("utf-8", "replace") if m else None
            in_hunk = False
            if path is not None:
                files[path] = []
                sizes[path] = 0
                counts[path] = [0, 0]
            continue
        if path is None:
            continue
        first = line[:1]
        if first == b"@":
            in_hunk = in_hunk or line.startswith(b"@@")
        elif in_hunk and first == b"+":
            counts[path][0] += 1
        elif in_hunk and first == b"-":
            counts[path][1] += 1
        if sizes[path] + len(line) > MAX_FILE_DIFF or total + len(line) > MAX_COMMIT_DIFF:
            truncated = True
            continue
        files[path].append(line)
        sizes[path] += len(line)
        total += len(line)
    if current is not None:
        yield finish()
    proc.wait()
    writer.join()


def added_text(diff: str) -> str:
    return "\n".join(line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++"))


def _fragment_text(text: str) -> str:
    """A fragment's prose: without reST/markdown directives, tags lines and reference lists."""
    keep = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith((".. ", ":tags:", ":tickets:", ":versions:", ":")) or re.fullmatch(r"[=~^*#-]+", s):
            continue
        keep.append(s.lstrip("-* "))
    return " ".join(keep)[:MAX_FRAGMENT]


def build_candidate(c: CommitMeta, diffs: dict[str, str], truncated: bool, repository: str,
                    reasons: list[str], counts: dict[str, list[int]] | None = None) -> tuple[Candidate | None, str]:
    """The candidate for a preselected commit once its patch is known, or (None, why it is not one).
    counts: {path: [added, removed]} lines of the whole patch (computed from the diffs when not given)."""
    if counts is None:
        counts = {p: [sum(1 for x in d.splitlines() if x.startswith("+") and not x.startswith("+++")),
                      sum(1 for x in d.splitlines() if x.startswith("-") and not x.startswith("---"))]
                  for p, d in diffs.items()}
    if sum(a + r for a, r in counts.values()) > MAX_CHANGED_LINES:
        return None, "mass change"
    files = []
    fragment_parts: list[str] = []
    bug_fragment = False
    non_bug_fragment = False
    for path, diff in diffs.items():
        rl = role(path)
        a, r = counts.get(path, (0, 0))
        files.append(FileDiff(path=path, role=rl, diff=diff, added=a, removed=r))
        if rl in ("fragment", "changelog"):
            text = added_text(diff)
            if rl == "fragment":
                if is_bugfix_fragment(path) or BUG_ENTRY.search(text):
                    bug_fragment = True
                    fragment_parts.append(_fragment_text(text))
                elif NOT_BUG_FRAGMENT.search(path) or ":tags:" in text:
                    non_bug_fragment = True
            elif BUG_ENTRY.search(text) or FIX_WORDS.search(text):
                fragment_parts.append(_fragment_text(text))
                bug_fragment = bug_fragment or bool(FIX_WORDS.search(text))
    final = [r for r in reasons if not r.endswith("?")]
    if bug_fragment:
        final.insert(0, "fragment")
    if not final:
        return None, "no fix evidence"
    if non_bug_fragment and not bug_fragment and "revert" not in final:
        return None, "fragment says it is not a bug fix"
    message = c.message
    refs = list(dict.fromkeys(f"#{n}" for n in REF.findall(message)))
    urls = list(dict.fromkeys(URL.findall(message)))
    tests = []
    for f in files:
        if f.role == "test":
            for m in TEST_DEF.finditer(f.diff):
                name = m.group(1) or m.group(2)
                if name not in tests:
                    tests.append(name)
    cand = Candidate(key=c.sha, origin="git", repository=repository, sha=c.sha, date=c.date, subject=c.subject,
                     body=c.body, fragment=" ".join(p for p in fragment_parts if p)[:MAX_FRAGMENT], issue_refs=refs,
                     urls=urls, files=files, tests_added=tests[:10], reasons=final, truncated=truncated)
    return cand, ""


class Blobs:
    """The versions of files before and after a commit, from one `git cat-file --batch` asked one blob at a
    time (git flushes each answer, so a question and its answer never wait on each other)."""

    def __init__(self, root: str):
        try:
            self.proc: subprocess.Popen | None = subprocess.Popen(
                ["git", "cat-file", "--batch"], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL)
        except OSError:
            self.proc = None

    def get(self, specs: list[str]) -> list[tuple[bool, str | None]]:
        """(known, text) of each spec, asked in one write (a few lines: the pipe takes them before git answers):
        (True, None) for a file that does not exist there, (False, None) when it could not be read (too large for
        the AST, or git failed)."""
        proc = self.proc
        if proc is None or any("\n" in s for s in specs):
            return [(False, None)] * len(specs)
        out: list[tuple[bool, str | None]] = []
        try:
            proc.stdin.write("".join(s + "\n" for s in specs).encode("utf-8", "surrogateescape"))
            proc.stdin.flush()
            for _ in specs:
                header = proc.stdout.readline()
                fields = header.rstrip(b"\n").rsplit(b" ", 2)
                if not header.endswith(b"\n"):
                    raise OSError("cat-file ended")
                if fields[-1] in (b"missing", b"ambiguous") or len(fields) < 3:
                    out.append((True, None))
                    continue
                size = int(fields[-1])
                data = proc.stdout.read(size)
                proc.stdout.read(1)
                if fields[1] != b"blob" or len(data) != size or size > MAX_BLOB:
                    out.append((False, None))
                else:
                    out.append((True, data.decode("utf-8", "replace")))
        except (OSError, ValueError):
            self.close()
            return [(False, None)] * len(specs)
        return out

    def fill(self, cand: Candidate) -> None:
        """Read both versions of the candidate's changed Python source and test files."""
        files = [f for f in cand.files if f.role in ("source", "test") and PY_FILE.search(f.path)][:MAX_FILES]
        got = self.get([spec for f in files for spec in (f"{cand.sha}^:{f.path}", f"{cand.sha}:{f.path}")])
        for f, (known_b, before), (known_a, after) in zip(files, got[::2], got[1::2]):
            if known_b and known_a and (before is not None or after is not None):
                f.before, f.after, f.fetched = before, after, True

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            for stream in (proc.stdin, proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            proc.wait()


def candidates(root: str, repository: str, *, rev: str = "HEAD", since: str | None = None,
               until: str | None = None, max_commits: int | None = None, seen: set[str] | None = None,
               counts: dict | None = None, progress: Callable[[str, int, int], None] | None = None):
    """Yield the candidates of the history (newest first)."""
    commits = list_commits(root, rev=rev, since=since, until=until, max_commits=max_commits, exclude=seen)
    yield from candidates_of(root, repository, commits, counts=counts, progress=progress)


def candidates_of(root: str, repository: str, commits: list[CommitMeta], counts: dict | None = None,
                  progress: Callable[[str, int, int], None] | None = None):
    """Yield the candidates among listed commits. counts receives commits, preselected, not_candidates (why)."""
    counts = {} if counts is None else counts
    counts["commits"] = len(commits)
    chosen = [(c, r) for c in commits if (r := preselect(c))]
    counts["preselected"] = len(chosen)
    by_sha = {c.sha: (c, r) for c, r in chosen}
    rejected: dict[str, int] = {}
    n = 0
    blobs = Blobs(root)
    try:
        for i, (sha, diffs, truncated, line_counts) in enumerate(stream_diffs(root, [c.sha for c, _ in chosen]),
                                                                 1):
            if progress:
                progress("diffs", i, len(chosen))
            if sha not in by_sha:
                continue
            meta, reasons = by_sha[sha]
            cand, why = build_candidate(meta, diffs, truncated, repository, reasons, line_counts)
            if cand is None:
                rejected[why] = rejected.get(why, 0) + 1
                continue
            blobs.fill(cand)
            n += 1
            yield cand
    finally:
        blobs.close()
    counts["candidates"] = n
    counts["not_candidates"] = rejected
