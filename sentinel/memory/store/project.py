"""Which project a clone belongs to: clones of one origin are one project, whatever their directory names.

The identity is the normalised URL of the clone's remote (`origin`, else the first remote):
`git@github.com:Org/Repo.git`, `https://github.com/org/repo/` with or without credentials, and
`ssh://git@github.com:22/org/repo`
are all `github.com/org/repo`; a remote that is a local path is its absolute path. `$SENTINEL_PROJECT` or
`[tool.sentinel.memory] project` override it. A clone without a remote is named by its history:
`git-root:<sha>` of the root commit reached by first parents from HEAD — the same in every copy of that history,
and one no unrelated repository has (two repositories that only share a directory name used to share one
memory). It is computed once per clone (one git process) and kept in <git-dir>/sentinel/root-commit. Only a
repository without any commit yet, or a shallow clone without a remote (its root is not the history's), falls
back to the directory name.

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


def root_commit(git_dir: str, root: str | None = None) -> str | None:
    """The root commit of HEAD's first-parent history (cached in the git dir), or None: no commit yet, a
    shallow clone, or git failed."""
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


def project_identity(config_memory, root: str | None, git_dir: str | None) -> str:
    explicit = os.environ.get("SENTINEL_PROJECT") or getattr(config_memory, "project", None)
    if explicit:
        return explicit
    url = remote_url(git_dir) if git_dir else None
    if url:
        return normalize_remote(url, base=root)
    sha = root_commit(git_dir, root) if git_dir else None
    if sha:
        return ROOT_PREFIX + sha
    return directory_name(root)


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
    if store.migrated_from < 3 or (store.migrated_from < 6 and project.startswith(ROOT_PREFIX)):
        return store.adopt_project(directory_name(root), project)
    return 0
