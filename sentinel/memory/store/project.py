"""Which project a clone belongs to: clones of one origin are one project, whatever their directory names.

The identity is the normalised URL of the clone's remote (`origin`, else the first remote):
`git@github.com:Org/Repo.git`, `https://github.com/org/repo/` with or without credentials, and
`ssh://git@github.com:22/org/repo`
are all `github.com/org/repo`; a remote that is a local path is its absolute path. `$SENTINEL_PROJECT` or
`[tool.sentinel.memory] project` override it; a clone without a remote falls back to its directory name.
Read from git's config file directly: the hook asks on every recorded run, and a git process costs more.
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


def project_identity(config_memory, root: str | None, git_dir: str | None) -> str:
    explicit = os.environ.get("SENTINEL_PROJECT") or getattr(config_memory, "project", None)
    if explicit:
        return explicit
    url = remote_url(git_dir) if git_dir else None
    if url:
        return normalize_remote(url, base=root)
    return os.path.basename(os.path.normpath(root)) if root else "default"
