"""Which project a clone belongs to: clones of one origin are one project, whatever their directory names.

The identity is the normalised URL of the clone's remote (`origin`, else the first remote):
`git@github.com:Org/Repo.git`, `https://github.com/org/repo/` with or without credentials, and
`ssh://git@github.com:22/org/repo`
are all `github.com/org/repo`; a remote that is a local path is its absolute path. `$SENTINEL_PROJECT` or
`[tool.sentinel.memory] project` override it. A clone without a remote is named by its history:
`git-root:<sha>` of the root commit reached by first parents from HEAD — the same in every copy of that history,
and one no unrelated repository has (two repositories that only share a directory name used to share one
memory). It is computed once per clone (one git process) and kept in <git-dir>/sentinel/root-commit.

A repository without any commit yet has no history to be named by: the first run that records anything gives it
`git-new:<random>` (kept in <git-dir>/sentinel/unborn-project, unique to the clone), and once it has a root commit
(or a remote) what was recorded under that name is moved to the identity it has now, in the store and in the
outbox (:func:`adopt_unborn`): the first commit's own runs are patterns of the project, like every later one. A
shallow clone without a remote (its root is not the history's) falls back to the directory name.

Remote and root are read from git's files directly where they can be: the hook asks on every recorded run, and
a git process costs more.
"""

from __future__ import annotations

import os
import re

_SCP = re.compile(r"^(?:[^@/:]+@)?(?P<host>[^/:]+):(?P<path>(?!//).+)$")
_URL = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?:[^@/]*@)?(?P<host>[^/:]*)(?::\d*)?(?P<path>/.*)?$", re.I)
_SECTION = re.compile(r'^\s*\[\s*remote\s+"(?P<name>(?:\\.|[^"\\])*)"\s*\]\s*$')
_ANY_SECTION = re.compile(r"^\s*\[")
_URL_KEY = re.compile(r"^\s*url\s*=\s*(?P<value>.*?)\s*$", re.I)


def normalize_remote(url: str, base: str | None = None) -> str:
    """A remote URL as a project identity: host/path, lower case, no credentials, port, `.git` or slash."""
    text = url.strip()
    m = _URL.match(text)
    if m and m.group("scheme").lower() != "file":
        host, path = m.group("host"), m.group("path") or ""
    elif m:  # file:///path
        host, path = "", m.group("path") or ""
    else:
        s = _SCP.match(text)
        if s and not os.path.isabs(text) and not re.match(r"^[A-Za-z]:[\\/]", text):
            host, path = s.group("host"), "/" + s.group("path")
        else:  # a local path, relative to the clone
            full = os.path.realpath(os.path.join(base or os.getcwd(), os.path.expanduser(text)))
            host, path = "", full
    path = path.replace("\\", "/").rstrip("/")
    if path.endswith(".git"):
        path = path[:-4]
    path = path.rstrip("/")
    if host:
        return (host + "/" + path.lstrip("/")).lower()
    return "file://" + path


def remote_url(git_dir: str) -> str | None:
    """The URL of `origin` (else of the first remote) in the clone's git config."""
    common = git_dir
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as fh:
            common = os.path.normpath(os.path.join(git_dir, fh.read().strip()))
    except OSError:
        pass
    try:
        with open(os.path.join(common, "config"), encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    urls: dict[str, str] = {}
    current = None
    for line in lines:
        sec = _SECTION.match(line)
        if sec:
            current = sec.group("name")
            continue
        if _ANY_SECTION.match(line):
            current = None
            continue
        if current is not None and current not in urls:
            m = _URL_KEY.match(line)
            if m:
                value = m.group("value")
                if len(value) >= 2 and value[0] == value[-1] == '"':
                    value = value[1:-1]
                urls[current] = value
    if not urls:
        return None
    return urls.get("origin") or next(iter(urls.values()))


ROOT_PREFIX = "git-root:"
ROOT_FILE = "root-commit"


def _common_dir(git_dir: str) -> str:
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as fh:
            return os.path.normpath(os.path.join(git_dir, fh.read().strip()))
    except OSError:
        return git_dir


def root_commit(git_dir: str, root: str | None = None, *, remember: bool = True) -> str | None:
    """The root commit of HEAD's first-parent history (cached in the git dir unless not `remember`), or None:
    no commit yet, a shallow clone, or git failed."""
    common = _common_dir(git_dir)
    cache = os.path.join(common, "sentinel", ROOT_FILE)
    try:
        with open(cache, encoding="ascii") as fh:
            sha = fh.read().strip()
        if re.fullmatch(r"[0-9a-f]{40}(?:[0-9a-f]{24})?", sha):
            return sha
    except (OSError, UnicodeDecodeError):
        pass
    if os.path.exists(os.path.join(common, "shallow")):
        return None
    import subprocess

    try:
        proc = subprocess.run(["git", "rev-list", "--first-parent", "--max-parents=0", "HEAD"],
                              cwd=root or os.path.dirname(common), capture_output=True, timeout=60,
                              env={**os.environ, "GIT_DIR": git_dir})
    except (OSError, subprocess.SubprocessError):
        return None
    lines = proc.stdout.decode("ascii", "replace").split()
    if proc.returncode != 0 or not lines or not re.fullmatch(r"[0-9a-f]{40}(?:[0-9a-f]{24})?", lines[-1]):
        return None
    sha = lines[-1]
    if not remember:
        return sha
    try:
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        tmp = f"{cache}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="ascii") as fh:
            fh.write(sha + "\n")
        os.replace(tmp, cache)
    except OSError:
        pass
    return sha


def directory_name(root: str | None) -> str:
    """What Sentinel before schema 6 called a clone without a remote (and before schema 3, every clone)."""
    return os.path.basename(os.path.normpath(root)) if root else "default"


def project_identity(config_memory, root: str | None, git_dir: str | None, *, remember: bool = True) -> str:
    """The project's name in the store. `remember`: may keep what it computed in the git dir (the root commit,
    an unborn repository's name); readers that promise to write nothing (the MCP server) pass False."""
    explicit = os.environ.get("SENTINEL_PROJECT") or getattr(config_memory, "project", None)
    if explicit:
        return explicit
    url = remote_url(git_dir) if git_dir else None
    if url:
        return normalize_remote(url, base=root)
    sha = root_commit(git_dir, root, remember=remember) if git_dir else None
    if sha:
        return ROOT_PREFIX + sha
    if git_dir and not os.path.exists(os.path.join(_common_dir(git_dir), "shallow")):
        return unborn_name(git_dir, create=remember)
    return directory_name(root)


UNBORN_PREFIX = "git-new:"
UNBORN_FILE = "unborn-project"
_ADOPTED = ".adopted"  # the unborn name's file once its records moved: kept, so late outbox entries follow


def _unborn_path(git_dir: str) -> str:
    return os.path.join(_common_dir(git_dir), "sentinel", UNBORN_FILE)


def _read_name(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as fh:
            name = fh.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return name if re.fullmatch(re.escape(UNBORN_PREFIX) + r"[0-9a-f]{32}", name) else None


def unborn_name(git_dir: str, *, create: bool = True) -> str:
    """The name of a clone that has no commit yet: `git-new:<random>`, made once (concurrent runs agree: the
    file is created exclusively) and kept until the clone has another identity. Without `create` and before any
    run recorded one, a name that matches nothing."""
    path = _unborn_path(git_dir)
    name = _read_name(path)
    if name or not create:
        return name or UNBORN_PREFIX + "0" * 32
    name = UNBORN_PREFIX + os.urandom(16).hex()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="ascii") as fh:
            fh.write(name + "\n")
        try:
            os.link(tmp, path)  # exclusive: another run that made one first wins
        finally:
            os.remove(tmp)  # sentinel: ignore[SEN103] - the temporary file this function wrote
    except FileExistsError:
        pass
    except OSError:
        return name  # an unwritable git dir: this run's own name (nothing else could find it again anyway)
    return _read_name(path) or name


def pending_unborn(git_dir: str | None) -> str | None:
    """The unborn name whose records wait to be moved (a clone that got its first commit or a remote), or None:
    one stat on the hook path."""
    if not git_dir:
        return None
    path = _unborn_path(git_dir)
    return _read_name(path) if os.path.exists(path) else None


def adopted_unborn(git_dir: str | None) -> str | None:
    """The unborn name this clone's records were moved from (outbox entries queued under it follow)."""
    return _read_name(_unborn_path(git_dir) + _ADOPTED) if git_dir else None


def adopt_unborn(store, config_memory, git_dir: str | None, root: str | None = None) -> int:
    """Once a clone that recorded under its unborn name has a root commit or a remote: move those records (runs,
    resolutions, learned cards) to the identity it has now, then set the name aside. The name is unique to the
    clone, so this is safe in a team database too. Runs moved (0 when there was nothing to do)."""
    unborn = pending_unborn(git_dir)
    if not unborn:
        return 0
    root = root or root_of(git_dir)
    project = project_identity(config_memory, root, git_dir)
    if project == unborn or project.startswith(UNBORN_PREFIX):
        return 0  # still without a commit
    moved = store.adopt_project(unborn, project)
    path = _unborn_path(git_dir)
    try:
        os.replace(path, path + _ADOPTED)
    except OSError:
        pass
    return moved


def root_of(git_dir: str | None) -> str | None:
    """The work tree of a plain clone's git dir (<root>/.git), else None."""
    if git_dir and os.path.basename(os.path.normpath(git_dir)) == ".git":
        return os.path.dirname(os.path.abspath(git_dir))
    return None


def adopt_earlier_names(store, config_memory, git_dir: str | None, root: str | None = None) -> int:
    """After a migration, move what an earlier Sentinel recorded under the clone's directory name to the
    project's identity: every clone before schema 3, a clone without a remote before schema 6. Only in the
    clone's own SQLite store: in a team database the directory name may be another repository's too (there,
    `sentinel memory migrate --adopt-project NAME` moves it when you know it is yours)."""
    root = root or root_of(git_dir)
    if store.migrated_from is None or not root or store.dialect != "sqlite":
        return 0
    project = project_identity(config_memory, root, git_dir)
    if store.migrated_from < 3 or (store.migrated_from < 6 and project.startswith((ROOT_PREFIX, UNBORN_PREFIX))):
        return store.adopt_project(directory_name(root), project)
    return 0
