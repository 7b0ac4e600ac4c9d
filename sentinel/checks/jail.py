"""The dependency jail: what a change may import, depend on, destroy and touch.

Python is judged on its AST (names resolved through the file's own imports, so
``items.remove(x)`` is never ``os.remove``); JavaScript/TypeScript imports on the lexer's
code view; shell-like files (scripts, Makefiles, Dockerfiles, CI YAML run blocks) on a small
shell tokenizer over comment-free lines; manifests by parsing the post-change file and
reporting the entries that sit on added lines. Every path is gated by keyword probes over
the lines in scope (substring search, then a precise regex near each hit), so a change with
nothing suspicious never parses or walks a tree.
"""

from __future__ import annotations

import ast
import bisect
import functools
import posixpath
import re

from sentinel.checks.base import ChangeContext, FileContext, path_matches
from sentinel.lazyre import LazyPattern
from sentinel.models import FileChange, FileStatus, FilterMode, Finding, Severity
from sentinel.record import Record
from sentinel.roles import DOCS, FIXTURE, GENERATED, TEST, VENDORED
from sentinel.rules import INFO, OFF, SECURITY_ROLES, WARNING, Rule


def _json_loads(text: str):
    import json  # only package.json and JS string literals need it; keep it off the common path

    return json.loads(text)

CHECK = "jail"


_lazy = LazyPattern  # compiled on first use: most runs need few of these patterns
_BAN_CFG = {"jail": {"banned_imports": ["flask"]}}

RULES: tuple[Rule, ...] = (
    Rule(
        "SEN101", "banned-import", CHECK, Severity.ERROR,
        summary="Imports a module the project has banned (jail.banned-imports), including submodules, "
                "__import__/importlib.import_module and JS/TS import/require.",
        rationale="A ban records a decision (licence, security advisory, a replaced library). An agent or a "
                  "hurried author re-introducing the module undoes it silently; the import is the earliest and "
                  "cheapest place to stop it. Banning 'a' bans 'a.x' but not 'ab'; relative imports are never banned.",
        example="import os, flask\n",
        counter_example="from . import views\nimport json\n",
        hint="Remove the import, or lift the ban in jail.banned-imports if the module is now allowed.",
        example_config=_BAN_CFG,
        roles={FIXTURE: OFF, VENDORED: OFF, GENERATED: OFF, DOCS: INFO}, noqa=("TID251", "TID253", "I251"),
    ),
    Rule(
        "SEN102", "banned-dependency", CHECK, Severity.ERROR,
        summary="Adds a banned dependency (or one missing from jail.allowed-dependencies) to requirements*.txt, "
                "constraints*.txt, pyproject.toml, Pipfile or package.json.",
        rationale="Every new dependency is supply-chain surface, licence exposure and install time. Names are "
                  "compared per PEP 503 (Flask_Login == flask-login), so spelling cannot dodge the ban.",
        example="requests==2.31.0\nFlask[async]>=2.3 ; python_version >= '3.9'\n",
        counter_example="requests==2.31.0\n",
        hint="Drop the dependency, or get it approved in jail.banned-dependencies / jail.allowed-dependencies.",
        example_path="requirements.txt",
        example_config={"jail": {"banned_dependencies": ["flask"]}},
        roles={FIXTURE: OFF, VENDORED: OFF, DOCS: INFO},
    ),
    Rule(
        "SEN103", "destructive-filesystem", CHECK, Severity.WARNING,
        summary="Deletes files or directory trees: shutil.rmtree, os.remove/unlink/rmdir/removedirs, "
                "Path.unlink()/rmdir().",
        rationale="Recursive or computed-path deletion is irreversible, and a wrong path variable turns a cleanup "
                  "into data loss. It is also ordinary in real code (temp files, build dirs), so it is a warning: "
                  "visible in review, blocking only with --fail-level warning.",
        example="import shutil\n\n\ndef clean(build_dir):\n    shutil.rmtree(build_dir)\n",
        counter_example="import tempfile\n\n\ndef build(items):\n    with tempfile.TemporaryDirectory() as tmp:\n"
                        "        compile_into(tmp, items)\n        items.remove(None)\n",
        hint="Make sure the path is one this code created (prefer tempfile.TemporaryDirectory); "
             "suppress with a reason.",
        roles=SECURITY_ROLES, security=True,
    ),
    Rule(
        "SEN104", "destructive-process", CHECK, Severity.WARNING,
        summary="Sends signals with os.kill/os.killpg, or runs `rm -r`/destructive git via subprocess/os.system.",
        rationale="Killing arbitrary pids or shelling out to `rm -rf` reaches beyond the process's own resources. "
                  "Like file deletion it has legitimate uses (supervisors, test harnesses), hence a warning.",
        example="import os\nimport signal\n\nos.kill(pid, signal.SIGKILL)\n",
        counter_example="proc.terminate()\nproc.wait(timeout=10)\n",
        hint="Signal only processes you started (proc.terminate()); delete with a scoped API, not `rm -rf`.",
        roles=SECURITY_ROLES, security=True,
    ),
    Rule(
        "SEN105", "destructive-sql", CHECK, Severity.ERROR,
        summary="Executes DROP TABLE/DATABASE/SCHEMA, TRUNCATE, or DELETE without WHERE (literal SQL passed to "
                ".execute/.executemany/.executescript/text(), directly or via a variable).",
        rationale="These statements destroy data wholesale and cannot be undone by a code revert. Schema drops belong "
                  "in reviewed migrations and an unqualified DELETE is almost always a missing WHERE; both block.",
        example='cursor.execute("DROP TABLE users")\n',
        counter_example='cursor.execute("DELETE FROM users WHERE id = ?", (user_id,))\n',
        hint="Put schema drops in a migration; give DELETE a WHERE clause.",
        roles=SECURITY_ROLES, security=True,
    ),
    Rule(
        "SEN106", "destructive-shell", CHECK, Severity.ERROR,
        summary="Shell scripts, Makefiles, Dockerfiles and CI run blocks: `rm -rf` of /, ~, $HOME, ., *, a top-level "
                "dir or an unguarded \"$VAR/\"; `git push --force`, `git reset --hard`, `git clean -f`.",
        rationale="These run unattended in CI and on developers' machines; an empty variable makes `rm -rf \"$X/\"` "
                  "delete `/`, and force-push/hard-reset/clean destroy work that exists nowhere else. Cleaning "
                  "explicit project paths (build/, dist/, /var/lib/apt/lists/*) is not reported.",
        example='#!/bin/sh\nrm -rf "$PREFIX/"\n',
        counter_example='#!/bin/sh\nrm -rf -- "${PREFIX:?}/build"\ngit push --force-with-lease\n',
        hint="Guard variables with ${VAR:?}, delete explicit project paths, use --force-with-lease.",
        example_path="scripts/clean.sh",
        roles=SECURITY_ROLES, security=True,
    ),
    Rule(
        "SEN107", "protected-path-touched", CHECK, Severity.ERROR,
        summary="The change adds, modifies, deletes or renames a protected path (.env, keys, .git/, .ssh/, "
                "credentials...; jail.protected-paths + extra-protected-paths).",
        rationale="Secrets and VCS internals do not belong in a commit, and an agent editing them is out of bounds. "
                  "Examples and templates (.env.example, *.pub) are exempt via jail.protected-exceptions.",
        example="api_token: changeme\n",
        counter_example="# sentinel: ignore[SEN107] placeholder values for local development only\n"
                        "api_token: changeme\n",
        hint="Keep secrets and VCS internals out of the change; list safe files in jail.protected-exceptions.",
        example_path="config/secrets.yml",
        roles={FIXTURE: INFO}, security=True,
    ),
    Rule(
        "SEN108", "protected-path-write", CHECK, Severity.ERROR,
        summary="Code opens a protected path for writing: open(..., 'w'/'a'/'x'/'r+'), Path(...).write_text/"
                "write_bytes/open('w'), os.open(O_WRONLY/O_RDWR/O_CREAT), shutil.copy/move into it.",
        rationale="Writing ~/.ssh/authorized_keys, .git/hooks or .env from code is how a change persists access or "
                  "tampers with the developer's environment; it is never needed by ordinary application code.",
        example='import os\n\nwith open(os.path.expanduser("~/.ssh/authorized_keys"), "a") as fh:\n'
                "    fh.write(public_key)\n",
        counter_example='with open("build/report.txt", "w") as fh:\n    fh.write(report)\n',
        hint="Write to a project or temp path; never to credentials, SSH keys or .git internals.",
        roles={**SECURITY_ROLES, TEST: WARNING}, security=True,
    ),
)
_R = {r.code: r for r in RULES}
SEN101, SEN102, SEN103, SEN104, SEN105, SEN106, SEN107, SEN108 = (_R[f"SEN10{i}"] for i in range(1, 9))

_SHELLISH = {"shell", "make", "docker", "yaml"}


# --------------------------------------------------------------------------- settings
class _Settings(Record, frozen=True):
    banned_imports: tuple[str, ...]
    banned_py: frozenset[str]
    banned_npm: frozenset[str]
    allowed_py: frozenset[str] | None
    allowed_npm: frozenset[str] | None
    protected: tuple[str, ...]
    exceptions: tuple[str, ...]
    classes: frozenset[str]
    py_probes: tuple  # calls worth an AST walk (imports, SQL and protected writes are gated separately)
    write_fragments: tuple[str, ...] | None

    @property
    def wants_manifests(self) -> bool:
        return bool(self.banned_py) or self.allowed_py is not None


def normalize_dist(name: str) -> str:
    """PEP 503 project name normalization."""
    return re.sub(r"[-_.]+", "-", name).lower()


# Gates, so that a change with nothing suspicious never parses or walks a tree. Python's re is
# slow on alternations (every branch is tried at every position), so each probe is a keyword found
# by C-speed substring search, then confirmed by a precise regex on the lines around it only.
# A probe is (keyword, precise regex or None, extra lines after the keyword's line to search).
_PROBES_DYN_IMPORT = (("__import__", None, 0), ("import_module", None, 0))
_PROBES_FS = (("rmtree", None, 0), ("removedirs", None, 0), ("unlink", None, 0), ("rmdir", None, 0),
              ("remove", _lazy(r"(?<![\w.])remove\s*\(|\bos\s*\.\s*remove\b|\bimport\b.*\bremove\b"), 0))
_PROBES_PROC = (("kill", _lazy(r"\bos\s*\.\s*kill|\bkillpg\b|(?<![\w.])kill\s*\(|\bimport\b.*\bkill\b"), 0),
                ("rm", _lazy(r"\brm\s+-|['\"/]rm['\"]"), 0),
                ("git", _lazy(r"\bgit\b.{0,80}?\b(?:push|reset|clean)\b"), 1))
_PROBES_SQL = (("drop", _lazy(r"\bdrop\s+(?:table|database|schema)\b"), 1),  # run on lowercased text
               ("truncate", _lazy(r"\btruncate\b"), 0), ("delete", _lazy(r"\bdelete\s+from\b"), 1))
_PROBES_WRITE = (("write_text", None, 0), ("write_bytes", None, 0), ("O_WRONLY", None, 0), ("O_RDWR", None, 0),
                 ("O_CREAT", None, 0), ("O_APPEND", None, 0),
                 ("open", _lazy(r"['\"][rbtU]*[wax+][rwaxbt+]*['\"]|\bmode\s*="), 2),
                 ("copy", _lazy(r"\bcopy(?:2|file|tree)?\s*\("), 0), ("move", _lazy(r"\bmove\s*\("), 0))
_PROBES_SHELL = (("rm", _lazy(r"\brm\b"), 0), ("git", _lazy(r"\bgit\b.{0,200}?\b(?:push|reset|clean)\b"), 1))
_MARKERS = (".ssh", ".git", ".aws", "id_rsa", ".env")


def probe(text: str, probes) -> bool:
    """Does any probe's keyword occur in ``text`` with its precise regex matching around it?"""
    for keyword, precise, extra in probes:
        if keyword not in text:
            continue
        if precise is None:
            return True
        i = text.find(keyword)
        while i >= 0:
            start = text.rfind("\n", 0, i) + 1
            end = i
            for _ in range(extra + 1):
                end = text.find("\n", end + 1)
                if end < 0:
                    end = len(text)
                    break
            if precise.search(text, start, end):
                return True
            i = text.find(keyword, end)
    return False


def _fragments(patterns: tuple[str, ...]) -> tuple[str, ...] | None:
    """Literal pieces of the protected globs (a file naming none of them cannot write one), or
    None when some glob has no literal part and could match anything."""
    pieces = set(_MARKERS)
    for pat in patterns:
        literal = [p for p in (re.sub(r"\[[^\]]*\]|[*?]", "", c) for c in pat.split("/")) if len(p) >= 3]
        if not literal:
            return None
        pieces.add(literal[-1])
    return tuple(sorted(pieces))


def _settings(cfg) -> _Settings:
    key = (tuple(cfg.banned_imports), tuple(cfg.banned_dependencies),
           None if cfg.allowed_dependencies is None else tuple(cfg.allowed_dependencies),
           tuple(cfg.protected_paths), tuple(cfg.extra_protected_paths), tuple(cfg.protected_exceptions),
           tuple(cfg.destructive))
    return _build_settings(key)


@functools.lru_cache(maxsize=16)
def _build_settings(key) -> _Settings:
    imports, deps, allowed, protected, extra, exceptions, destructive = key
    banned_imports = tuple(dict.fromkeys(n.strip() for n in imports if n and n.strip()))
    deps = [d.strip() for d in deps if d and d.strip()]
    classes = frozenset(c.strip().lower() for c in destructive)
    probes: tuple = ()
    if "filesystem" in classes:
        probes += _PROBES_FS
    if "process" in classes:
        probes += _PROBES_PROC
    return _Settings(
        banned_imports=banned_imports,
        banned_py=frozenset(normalize_dist(d) for d in deps),
        banned_npm=frozenset(d.lower() for d in deps),
        allowed_py=None if allowed is None else frozenset(normalize_dist(a) for a in allowed if a.strip()),
        allowed_npm=None if allowed is None else frozenset(a.strip().lower() for a in allowed if a.strip()),
        protected=tuple(protected) + tuple(extra),
        exceptions=tuple(exceptions),
        classes=classes,
        py_probes=probes,
        write_fragments=_fragments(tuple(protected) + tuple(extra)),
    )


# --------------------------------------------------------------------------- entry points
def check_file(ctx: FileContext) -> list[Finding]:
    s = _settings(ctx.config.jail)
    out = _Out(ctx)
    touched = _touched_protected(ctx.change, s)
    if touched:
        first = min(ctx.change.added) if ctx.change.added else None
        # code="" so a secret file's first line is never echoed into reports
        out.add(SEN107, first, touched, code="")
    if ctx.change.status is FileStatus.DELETED:
        return out.findings
    if ctx.mode is FilterMode.ADDED and not ctx.change.added:
        return out.findings
    manifest = manifest_kind(ctx.path)
    if manifest:
        if s.wants_manifests:
            _check_manifest(ctx, s, manifest, out)
        return out.findings
    lang = ctx.language
    if lang == "python":
        _check_python(ctx, s, out, _scope_text(ctx))
    elif lang in ("javascript", "typescript") and s.banned_imports:
        _check_js_imports(ctx, s, out, _scope_text(ctx))
    elif lang in _SHELLISH and "shell" in s.classes and probe(_scope_text(ctx), _PROBES_SHELL):
        _check_shellish(ctx, out)
    return out.findings


def _scope_text(ctx: FileContext) -> str:
    """The text of the lines in scope (the whole file when every line is)."""
    if ctx.mode in (FilterMode.FILE, FilterMode.NOFILTER):
        return ctx.text
    if ctx.mode is FilterMode.ADDED and len(ctx.change.added) >= ctx.line_count - 1:
        return ctx.text
    return "\n".join(ctx.line(n) for n in ctx.selected_lines())


def check_change(cctx: ChangeContext) -> list[Finding]:
    """SEN107 for files that get no FileContext (binary or unreadable): touching them still counts."""
    s = _settings(cctx.config.jail)
    out: list[Finding] = []
    for fc in cctx.files:
        if fc.path in cctx.file_contexts:
            continue
        if cctx.config.exclude and path_matches(fc.path, cctx.config.exclude):
            continue
        touched = _touched_protected(fc, s)
        if touched:
            out.append(Finding(rule=SEN107.code, check=CHECK, severity=SEN107.severity, path=fc.path, line=None,
                               message=touched, hint=SEN107.hint))
    return out


class _Out:
    """Findings of one file, one per (rule, line, message)."""

    __slots__ = ("_seen", "ctx", "findings")

    def __init__(self, ctx: FileContext):
        self.ctx = ctx
        self.findings: list[Finding] = []
        self._seen: set = set()

    def add(self, rule: Rule, line: int | None, message: str, column: int | None = None, code: str | None = None):
        key = (rule.code, line, message)
        if key in self._seen:
            return
        self._seen.add(key)
        self.findings.append(self.ctx.finding(rule, line, message, column=column, code=code))


# --------------------------------------------------------------------------- protected paths
def is_protected(path: str, s: _Settings) -> bool:
    return path_matches(path, list(s.protected)) and not path_matches(path, list(s.exceptions))


def _touched_protected(fc: FileChange, s: _Settings) -> str | None:
    verb = {FileStatus.ADDED: "adds", FileStatus.DELETED: "deletes", FileStatus.RENAMED: "renames",
            FileStatus.COPIED: "copies to", FileStatus.BINARY: "changes"}.get(fc.status, "modifies")
    if is_protected(fc.path, s):
        if fc.status is FileStatus.RENAMED and fc.old_path:
            return f"renames {fc.old_path} to protected path {fc.path}"
        return f"{verb} protected path {fc.path}"
    if fc.old_path and fc.status in (FileStatus.RENAMED, FileStatus.COPIED) and is_protected(fc.old_path, s):
        what = "renames" if fc.status is FileStatus.RENAMED else "copies"
        return f"{what} protected path {fc.old_path} to {fc.path}"
    return None


_HOME_EXPANSION = "/home/user"


def protected_write_target(text: str, exact: bool, s: _Settings) -> str | None:
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
    if path_matches(rel, list(s.exceptions)):
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
    if exact and path_matches(rel, list(s.protected)):
        return "a protected path (jail.protected-paths)"
    return None


# --------------------------------------------------------------------------- manifests
_REQ_BASENAME = _lazy(r"(?:requirements|constraints)[\w.-]*\.(?:txt|in)", re.IGNORECASE)
_REQ_LINE = _lazy(r"([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[[^\]]*\])?\s*(?=$|[<>=!~;@(,\s])")
_REQ_COMMENT = _lazy(r"(?:^|\s)#.*$")
_REQ_OPTION = _lazy(r"(?:^|\s)--?[A-Za-z][\w-]*(?:[= ]\S+)?")
# What may follow a PEP 508 name (and extras): a direct URL, or version clauses then a marker.
_REQ_REST = _lazy(r"@\s*\S+.*|\(?\s*(?:(?:~=|===|==|!=|<=|>=|<|>)\s*[\w.*+!-]+\s*,?\s*)*\)?\s*(?:;.*)?")
_NPM_SECTIONS = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")
_TOML_HEADER = _lazy(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_TOML_KEY = _lazy(r"""^\s*([A-Za-z0-9_.-]+|"[^"]*"|'[^']*')\s*=""")


def manifest_kind(path: str) -> str | None:
    parts = path.rsplit("/", 2)
    base = parts[-1]
    low = base.lower()
    if _REQ_BASENAME.fullmatch(low) or (len(parts) >= 2 and parts[-2].lower() == "requirements"
                                        and low.endswith((".txt", ".in"))):
        return "requirements"
    if low == "pyproject.toml":
        return "pyproject"
    if base == "Pipfile":
        return "pipfile"
    if low == "package.json":
        return "package"
    return None


def parse_requirement_line(line: str) -> str | None:
    """The project name a requirements-file line installs (as written), or None for options,
    includes, URLs, paths, blanks and anything that is not a PEP 508 requirement."""
    text = _REQ_COMMENT.sub("", line).strip()
    if text.endswith("\\"):
        text = text[:-1].strip()
    if not text or text.startswith("-"):
        return None
    m = _REQ_LINE.match(text)
    if not m:
        return None
    rest = _REQ_OPTION.sub("", text[m.end():]).strip()  # per-requirement options: --hash=...
    return m.group(1) if _REQ_REST.fullmatch(rest) else None


def _dependency_verdict(name: str, s: _Settings, npm: bool) -> str | None:
    key = name.lower() if npm else normalize_dist(name)
    if key in (s.banned_npm if npm else s.banned_py):
        return f"adds banned dependency '{name}'"
    allowed = s.allowed_npm if npm else s.allowed_py
    if allowed is not None and key not in allowed:
        return f"adds dependency '{name}' that is not on jail.allowed-dependencies"
    return None


def _check_manifest(ctx: FileContext, s: _Settings, kind: str, out: _Out) -> None:
    if kind == "requirements":
        for n in ctx.selected_lines():
            name = parse_requirement_line(ctx.line(n))
            if name:
                msg = _dependency_verdict(name, s, npm=False)
                if msg:
                    out.add(SEN102, n, msg)
    elif kind == "package":
        for name, line in package_json_dependencies(ctx.text):
            if ctx.selected(line):
                msg = _dependency_verdict(name, s, npm=True)
                if msg:
                    out.add(SEN102, line, msg)
    else:
        for name, line in toml_dependencies(ctx.text, ctx.lines, kind, ctx.selected):
            msg = _dependency_verdict(name, s, npm=False)
            if msg:
                out.add(SEN102, line, msg)


def package_json_dependencies(text: str) -> list[tuple[str, int]]:
    """(name, line) of every entry of package.json's dependency sections; [] when not valid JSON."""
    try:
        data = _json_loads(text)
    except ValueError:
        return []
    if not isinstance(data, dict) or not any(isinstance(data.get(k), dict) and data[k] for k in _NPM_SECTIONS):
        return []
    newlines = [m.start() for m in re.finditer("\n", text)]
    tokens = list(re.finditer(r'"(?:\\.|[^"\\])*"|[{}\[\]:,]', text))
    stack: list[str | None] = []
    last_key: str | None = None
    out = []
    for i, m in enumerate(tokens):
        tok = m.group()
        if tok in "{[":
            stack.append(last_key)
            last_key = None
        elif tok in "}]":
            if stack:
                stack.pop()
            last_key = None
        elif tok.startswith('"') and i + 1 < len(tokens) and tokens[i + 1].group() == ":":
            try:
                key = _json_loads(tok)
            except ValueError:
                continue
            if len(stack) == 2 and stack[0] is None and stack[1] in _NPM_SECTIONS:
                out.append((key, bisect.bisect_left(newlines, m.start()) + 1))
            last_key = key
    return out


def _toml_sections(kind: str, section: str) -> tuple[bool, bool]:
    """(holds PEP 508 strings, holds name = spec keys) for a TOML section of this manifest kind."""
    if kind == "pipfile":
        return False, section in ("packages", "dev-packages")
    strings = section in ("project", "project.optional-dependencies", "dependency-groups", "")
    keys = section in ("tool.poetry.dependencies", "tool.poetry.dev-dependencies") or bool(
        re.fullmatch(r"tool\.poetry\.group\.[^.]+\.dependencies", section))
    return strings, keys


def toml_dependencies(text: str, lines: list[str], kind: str, selected) -> list[tuple[str, int]]:
    """(name, line) of dependencies declared on selected lines of pyproject.toml / Pipfile."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, TypeError):
        return []
    str_names: set[str] = set()  # PEP 508 strings in arrays
    key_names: set[str] = set()  # keys of name = spec tables

    def add_specs(specs) -> None:
        if isinstance(specs, list):
            for spec in specs:
                if isinstance(spec, str):
                    name = parse_requirement_line(spec)
                    if name:
                        str_names.add(name)

    def add_keys(table) -> None:
        if isinstance(table, dict):
            for name in table:
                if isinstance(name, str) and name.lower() != "python":
                    key_names.add(name)

    if kind == "pipfile":
        add_keys(data.get("packages"))
        add_keys(data.get("dev-packages"))
    else:
        project = data.get("project") if isinstance(data.get("project"), dict) else {}
        add_specs(project.get("dependencies"))
        optional = project.get("optional-dependencies")
        if isinstance(optional, dict):
            for specs in optional.values():
                add_specs(specs)
        groups = data.get("dependency-groups")
        if isinstance(groups, dict):
            for specs in groups.values():
                add_specs(specs)
        tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
        poetry = tool.get("poetry") if isinstance(tool.get("poetry"), dict) else {}
        add_keys(poetry.get("dependencies"))
        add_keys(poetry.get("dev-dependencies"))
        if isinstance(poetry.get("group"), dict):
            for group in poetry["group"].values():
                if isinstance(group, dict):
                    add_keys(group.get("dependencies"))
    if not str_names and not key_names:
        return []
    # longest first so "flask-login" is not read as "flask"
    str_alt = "|".join(re.escape(n) for n in sorted(str_names, key=len, reverse=True)) or r"(?!)"
    key_alt = "|".join(re.escape(n) for n in sorted(key_names, key=len, reverse=True)) or r"(?!)"
    str_pat = re.compile(r"""["']\s*(""" + str_alt + r""")\s*(?=[\[<>=!~;@(,\s"'])""", re.IGNORECASE)
    key_pat = re.compile(r"""^\s*["']?(""" + key_alt + r""")["']?\s*=""", re.IGNORECASE)
    out = []
    section = ""
    key = ""  # the key whose (possibly multi-line) value this line belongs to
    for n in range(1, len(lines)):
        line = lines[n]
        header = _TOML_HEADER.match(line)
        if header:
            section = re.sub(r"[\s\"']", "", header.group(1))
            key = ""
            sub = section.rsplit(".", 1)
            if selected(n) and len(sub) == 2 and _toml_sections(kind, sub[0])[1] and sub[1] in key_names:
                out.append((sub[1], n))  # [tool.poetry.dependencies.flask]
            continue
        assignment = _TOML_KEY.match(line)
        if assignment:
            key = assignment.group(1).strip("\"'")
        if not selected(n):
            continue
        strings, keys = _toml_sections(kind, section)
        # under [project] only the dependency arrays count, not keywords = ["flask"]
        if strings and (section != "project" or key in ("dependencies", "optional-dependencies")):
            out.extend((m.group(1), n) for m in str_pat.finditer(line))
        if keys:
            m = key_pat.match(line)
            if m:
                out.append((m.group(1), n))
    return out


# --------------------------------------------------------------------------- python
_FS_CALLS = {
    "shutil.rmtree": "deletes a directory tree", "os.remove": "deletes a file", "os.unlink": "deletes a file",
    "os.rmdir": "removes a directory", "os.removedirs": "removes directories",
    "pathlib.Path.unlink": "deletes a file", "pathlib.Path.rmdir": "removes a directory",
}
_KILL_CALLS = {"os.kill", "os.killpg"}
_SHELL_CALLS = {"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput",
                "asyncio.create_subprocess_shell"}
_EXEC_CALLS = {"subprocess.run", "subprocess.call", "subprocess.Popen", "subprocess.check_call",
               "subprocess.check_output"}
_SQL_METHODS = {"execute", "executemany", "executescript"}
_SQL_TEXT_FUNCS = {"text", "sqlalchemy.text", "sqlalchemy.sql.text", "sqlalchemy.sql.expression.text"}
_OPEN_FUNCS = {"open", "io.open", "builtins.open", "codecs.open"}
_COPY_FUNCS = {"shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree", "shutil.move"}
_IMPORT_FUNCS = {"__import__", "builtins.__import__", "importlib.import_module", "importlib.__import__"}
_WRITE_MODE = _lazy(r"[rbtU]*[wax+][rwaxbt+]*")
_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}
_PATH_CTORS = {"Path", "PurePath", "PosixPath", "WindowsPath", "PurePosixPath", "PureWindowsPath"}
# Call names worth resolving; everything else is skipped before any work.
_INTERESTING = ({q.rsplit(".", 1)[-1] for q in (*_FS_CALLS, *_KILL_CALLS, *_SHELL_CALLS, *_EXEC_CALLS,
                                                 *_OPEN_FUNCS, *_COPY_FUNCS, *_IMPORT_FUNCS)}
                | _SQL_METHODS | {"text", "write_text", "write_bytes", "create_subprocess_exec"})
# Receivers whose no-argument .unlink() is shared memory / IPC, not a file.
_NOT_A_PATH = _lazy(r"(?i)shm|shared_?mem|semaphore|\bsem\b|mqueue|message_?queue")
_UNKNOWN = "\0"


def _check_python(ctx: FileContext, s: _Settings, out: _Out, scope: str) -> None:
    imports = bool(s.banned_imports) and any(b in scope for b in s.banned_imports)
    hit = (imports and probe(scope, _PROBES_DYN_IMPORT)) or probe(scope, s.py_probes)
    if not hit and probe(scope, _PROBES_WRITE):
        text = ctx.text
        hit = s.write_fragments is None or any(f in text for f in s.write_fragments)
    if not hit and "database" in s.classes:
        low = scope.lower()
        hit = probe(low, _PROBES_SQL)
        if not hit and scope is not ctx.text and (".execute" in scope or "text(" in scope):
            # an .execute(sql) line added where sql is a destructive literal defined elsewhere in the file
            hit = probe(ctx.text.lower(), _PROBES_SQL)
    if not hit:
        if imports:  # import statements alone: the lexer's code lines are enough, no parse needed
            _python_lexical(ctx, s, out, calls=False)
        return
    if ctx.tree is None:
        _python_lexical(ctx, s, out, calls=True)
        return
    aliases = _aliases(ctx)
    if imports:
        for node in ctx.nodes(ast.Import, ast.ImportFrom):
            line = _line_for(ctx, node)
            if line is not None:
                _check_import_node(node, line, s, out)
    for node in ctx.nodes(ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute):
            tail = func.attr
        elif isinstance(func, ast.Name):
            tail = func.id
            if tail not in _INTERESTING and tail in aliases:  # from shutil import rmtree as nuke
                tail = aliases[tail].rsplit(".", 1)[-1]
        else:
            continue
        if tail not in _INTERESTING:
            continue
        line = _line_for(ctx, node)
        if line is None and not (tail in _SQL_METHODS or tail == "text"):
            continue
        _check_call(ctx, s, node, tail, qualname(func, aliases), line, aliases, out)


def _line_for(ctx: FileContext, node: ast.AST) -> int | None:
    """The line to report a node on: its first line if in scope, else its first in-scope line."""
    start = node.lineno
    if ctx.selected(start):
        return start
    end = min(getattr(node, "end_lineno", None) or start, start + 200)
    for n in range(start + 1, end + 1):
        if ctx.selected(n):
            return n
    return None


def _aliases(ctx: FileContext) -> dict[str, str]:
    """Local name -> qualified name for every import in the file."""
    out: dict[str, str] = {}
    for node in ctx.nodes(ast.Import, ast.ImportFrom):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
                else:
                    top = a.name.split(".", 1)[0]
                    out[top] = top
        elif node.module and not node.level:
            for a in node.names:
                if a.name != "*":
                    out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def qualname(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """Dotted name of a Name/Attribute chain with its root resolved through the file's imports."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(aliases.get(node.id, node.id))
    parts.reverse()
    return ".".join(parts)


def banned_module(name: str, banned: tuple[str, ...], sep: str = ".") -> str | None:
    for b in banned:
        if name == b or name.startswith(b + sep):
            return b
    return None


def _check_import_node(node: ast.AST, line: int, s: _Settings, out: _Out) -> None:
    col = node.col_offset + 1
    if isinstance(node, ast.Import):
        for a in node.names:
            b = banned_module(a.name, s.banned_imports)
            if b:
                out.add(SEN101, line, _import_msg(a.name, b), column=col)
        return
    if node.level or not node.module:
        return  # relative imports stay inside the project
    b = banned_module(node.module, s.banned_imports)
    if b:
        out.add(SEN101, line, _import_msg(node.module, b), column=col)
        return
    for a in node.names:
        full = f"{node.module}.{a.name}"
        b = banned_module(full, s.banned_imports)
        if b:
            out.add(SEN101, line, _import_msg(full, b), column=col)


def _import_msg(name: str, banned: str) -> str:
    return f"imports banned module '{name}'" if name == banned else f"imports '{name}' from banned module '{banned}'"


def _short(node: ast.AST, limit: int = 60) -> str:
    try:
        text = ast.unparse(node)
    except (ValueError, TypeError, AttributeError, RecursionError):
        return "..."
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _arg(node: ast.Call, index: int, *names: str) -> ast.AST | None:
    if len(node.args) > index and not any(isinstance(a, ast.Starred) for a in node.args[: index + 1]):
        return node.args[index]
    for kw in node.keywords:
        if kw.arg in names:
            return kw.value
    return None


def _check_call(ctx: FileContext, s: _Settings, node: ast.Call, tail: str, q: str | None, line: int | None,
                aliases: dict[str, str], out: _Out) -> None:
    col = node.col_offset + 1
    classes = s.classes
    if line is not None and s.banned_imports and q in _IMPORT_FUNCS:
        target = _arg(node, 0, "name")
        if isinstance(target, ast.Constant) and isinstance(target.value, str) and not target.value.startswith("."):
            b = banned_module(target.value, s.banned_imports)
            if b:
                out.add(SEN101, line, _import_msg(target.value, b) + f" via {q}()", column=col)
        return
    if "database" in classes and ((tail in _SQL_METHODS and isinstance(node.func, ast.Attribute))
                                  or q in _SQL_TEXT_FUNCS):
        _check_sql_call(ctx, node, q or tail, line, aliases, out)
        return
    if line is None:
        return
    if "filesystem" in classes:
        if q in _FS_CALLS:
            target = _arg(node, 0, "path", "self")
            where = f": {_short(target)}" if target is not None else ""
            out.add(SEN103, line, f"{q.replace('pathlib.', '')}() {_FS_CALLS[q]}{where}", column=col)
            return
        if (tail in ("unlink", "rmdir") and isinstance(node.func, ast.Attribute) and not node.args
                and all(k.arg == "missing_ok" for k in node.keywords)):
            receiver = _short(node.func.value)
            if not _NOT_A_PATH.search(receiver):
                what = "deletes the file" if tail == "unlink" else "removes the directory"
                out.add(SEN103, line, f".{tail}() {what} {receiver}", column=col)
                return
    if "process" in classes:
        if q in _KILL_CALLS:
            sig = _arg(node, 1, "signal", "sig")
            if isinstance(sig, ast.Constant) and sig.value == 0:
                return  # signal 0 only probes whether the process exists
            pid = _arg(node, 0, "pid", "pgid")
            out.add(SEN104, line, f"{q}() sends {_short(sig, 30) if sig is not None else 'a signal'} to "
                                  f"{_short(pid, 30) if pid is not None else 'a process'}", column=col)
            return
        if q in _SHELL_CALLS or q in _EXEC_CALLS or q == "asyncio.create_subprocess_exec":
            desc = _python_command(ctx, node, q)
            if desc:
                cmd, why = desc
                out.add(SEN104, line, f"{q}() runs `{cmd.replace(_UNKNOWN, '<expr>')}`: {why}", column=col)
                return
    _check_write(s, node, tail, q, line, aliases, out)


def _python_command(ctx: FileContext, node: ast.Call, q: str) -> tuple[str, str] | None:
    if q == "asyncio.create_subprocess_exec":
        return _describe_words([_str_value(a, ctx, 1) or _UNKNOWN for a in node.args], any_target=True)
    cmd = _arg(node, 0, "args", "cmd", "command")
    if isinstance(cmd, ast.Name):
        cmd = _assigned_value(ctx, cmd)[0] or cmd
    if isinstance(cmd, (ast.List, ast.Tuple)):
        words = [(_str_value(e, ctx, 1) if not isinstance(e, ast.Starred) else None) or _UNKNOWN for e in cmd.elts]
        # ["bash", "-c", "rm -rf x"] runs the string through a shell
        if len(words) >= 3 and posixpath.basename(words[0]) in ("sh", "bash", "zsh", "dash") and words[1] == "-c":
            return _describe_shell_text(words[2])
        return _describe_words(words, any_target=True)
    text = _str_value(cmd, ctx, 0)
    return _describe_shell_text(text) if text else None


def _describe_shell_text(text: str) -> tuple[str, str] | None:
    found = _shell_findings(text, any_target=True)
    return found[0][0] if found else None


def _str_value(node: ast.AST | None, ctx: FileContext, depth: int, origins: list | None = None) -> str | None:
    """The string a literal-ish expression evaluates to, runtime parts as "\\0"; None if not string-like."""
    if node is None or depth > 4:
        return None
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else _UNKNOWN
                       for v in node.values)
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Add):
            left = _str_value(node.left, ctx, depth + 1, origins)
            right = _str_value(node.right, ctx, depth + 1, origins)
            if left is None and right is None:
                return None
            return (left if left is not None else _UNKNOWN) + (right if right is not None else _UNKNOWN)
        if isinstance(node.op, ast.Mod):
            return _str_value(node.left, ctx, depth + 1, origins)
        return None
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "format":
            return _str_value(func.value, ctx, depth + 1, origins)
        tail = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if tail == "text" and node.args:
            return _str_value(node.args[0], ctx, depth + 1, origins)
        return None
    if isinstance(node, ast.Name):
        value, assign = _assigned_value(ctx, node)
        if value is None:
            return None
        if origins is not None:
            origins.append(assign)
        return _str_value(value, ctx, depth + 1, origins)
    return None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef)


def _assigned_value(ctx: FileContext, name: ast.Name) -> tuple[ast.AST | None, ast.AST | None]:
    """The value last assigned to ``name`` before its use, in the enclosing function, else at module level."""
    scope = next((a for a in ctx.ancestors(name) if isinstance(a, _SCOPES)), None)
    candidates = ast.walk(scope) if scope is not None else iter(getattr(ctx.tree, "body", ()))
    best = _last_assignment(candidates, name)
    if best is None and scope is not None:
        best = _last_assignment(iter(getattr(ctx.tree, "body", ())), name)
    return (best.value, best) if best is not None else (None, None)


def _last_assignment(nodes, name: ast.Name):
    best = None
    for n in nodes:
        if n.__class__ is ast.Assign:
            targets = n.targets
        elif n.__class__ is ast.AnnAssign and n.value is not None:
            targets = [n.target]
        else:
            continue
        if (n.lineno < name.lineno and (best is None or n.lineno > best.lineno)
                and any(isinstance(t, ast.Name) and t.id == name.id for t in targets)):
            best = n
    return best


# --- SQL -----------------------------------------------------------------------
_SQL_COMMENTS = _lazy(r"--[^\n]*|/\*.*?\*/", re.DOTALL)
_SQL_STRINGS = _lazy(r"'(?:''|[^'])*'")
_SQL_CTE = _lazy(r"^\s*WITH\b.*\)\s*(?=DELETE\b)", re.IGNORECASE | re.DOTALL)
_SQL_DESTRUCTIVE = _lazy(
    r"\s*(?:(?P<drop>DROP\s+(?:TABLE|DATABASE|SCHEMA))\b|(?P<trunc>TRUNCATE)\b(?!\s*\()"
    r"|(?P<delete>DELETE\s+FROM)\s+(?P<table>[^\s;]+)(?P<rest>.*))", re.IGNORECASE | re.DOTALL)
_WHERE = _lazy(r"\bWHERE\b", re.IGNORECASE)


def destructive_sql(sql: str) -> str | None:
    """What is destructive about a SQL text (runtime parts as "\\0"), or None."""
    sql = _SQL_STRINGS.sub("''", _SQL_COMMENTS.sub(" ", sql))
    for stmt in sql.split(";"):
        m = _SQL_DESTRUCTIVE.match(_SQL_CTE.sub("", stmt))
        if not m:
            continue
        if m.group("drop"):
            return " ".join(m.group("drop").upper().split())
        if m.group("trunc"):
            return "TRUNCATE"
        rest = m.group("rest")
        if not _WHERE.search(rest) and _UNKNOWN not in rest:
            return "DELETE without WHERE"
    return None


def _sql_arguments(ctx: FileContext) -> set[int]:
    """ids of the expressions passed directly to an .execute()-like call in this file (a set
    built once per file: asking each text() call for its parent would walk the whole tree)."""
    found = ctx.memo.get("jail.sql_arguments")
    if found is None:
        found = ctx.memo["jail.sql_arguments"] = set()
        for call in ctx.nodes(ast.Call):
            if isinstance(call.func, ast.Attribute) and call.func.attr in _SQL_METHODS:
                found.update(id(a) for a in call.args)
                found.update(id(k.value) for k in call.keywords)
    return found


def _check_sql_call(ctx: FileContext, node: ast.Call, name: str, line: int | None, aliases, out: _Out) -> None:
    if name not in _SQL_METHODS and id(node) in _sql_arguments(ctx):
        return  # conn.execute(text("...")): reported once, for the execute call
    arg = _arg(node, 0, "sql", "statement", "operation", "sql_script", "text")
    origins: list = []
    sql = _str_value(arg, ctx, 0, origins)
    if not sql:
        return
    what = destructive_sql(sql)
    if not what:
        return
    if line is None:
        line = next((o.lineno for o in origins if ctx.selected(o.lineno)), None)
        if line is None:
            return
    label = f".{name}()" if name in _SQL_METHODS else f"{name}()"
    out.add(SEN105, line, f"{label} runs destructive SQL: {what}", column=node.col_offset + 1)


# --- protected writes ---------------------------------------------------------------
def _check_write(s: _Settings, node: ast.Call, tail: str, q: str | None, line: int, aliases, out: _Out) -> None:
    target = None
    if q in _OPEN_FUNCS:
        mode = _arg(node, 1, "mode")
        if _is_write_mode(mode):
            target = _arg(node, 0, "file")
    elif q == "os.open":
        flags = _arg(node, 1, "flags")
        if flags is not None and any((isinstance(n, ast.Attribute) and n.attr in _WRITE_FLAGS)
                                     or (isinstance(n, ast.Name) and n.id in _WRITE_FLAGS) for n in ast.walk(flags)):
            target = _arg(node, 0, "path")
    elif q in _COPY_FUNCS:
        target = _arg(node, 1, "dst")
    elif isinstance(node.func, ast.Attribute) and (
            tail in ("write_text", "write_bytes") or (tail == "open" and _is_write_mode(_arg(node, 0, "mode")))):
        target = node.func.value
    if target is None:
        return
    lit = literal_path(target, aliases)
    if lit is None:
        return
    why = protected_write_target(lit, _UNKNOWN not in lit, s)
    if why:
        shown = lit.replace(_UNKNOWN, "…")
        out.add(SEN108, line, f"writes to {why}: {shown}", column=node.col_offset + 1)


def _is_write_mode(mode: ast.AST | None) -> bool:
    return (isinstance(mode, ast.Constant) and isinstance(mode.value, str)
            and _WRITE_MODE.fullmatch(mode.value) is not None)


def literal_path(node: ast.AST, aliases: dict[str, str], depth: int = 0) -> str | None:
    """The path an expression names, with "~" for the home directory and "\\0" for runtime parts;
    None when nothing about it is literal."""
    parts = _path_parts(node, aliases, depth)
    if parts is None or all(p == _UNKNOWN for p in parts):
        return None
    return "/".join(p for p in parts if p != "") or None


def _path_parts(node: ast.AST, aliases: dict[str, str], depth: int) -> list[str] | None:
    if depth > 6:
        return [_UNKNOWN]
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return ["".join(v.value if isinstance(v, ast.Constant) else _UNKNOWN for v in node.values)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Add)):
        left = _path_parts(node.left, aliases, depth + 1) or [_UNKNOWN]
        right = _path_parts(node.right, aliases, depth + 1) or [_UNKNOWN]
        if isinstance(node.op, ast.Add):
            return [left[-1] + right[0]] if len(left) == 1 and len(right) == 1 else left + right
        return left + right
    if isinstance(node, ast.Subscript) and qualname(node.value, aliases) == "os.environ":
        return ["~"] if isinstance(node.slice, ast.Constant) and node.slice.value == "HOME" else [_UNKNOWN]
    if not isinstance(node, ast.Call):
        return [_UNKNOWN]
    func = node.func
    q = qualname(func, aliases) or ""
    tail = q.rsplit(".", 1)[-1] if q else (func.attr if isinstance(func, ast.Attribute) else "")
    args = [a for a in node.args if not isinstance(a, ast.Starred)]
    if tail in _PATH_CTORS or q in ("os.path.join", "posixpath.join", "ntpath.join"):
        if not args:
            return ["."]
        out: list[str] = []
        for a in args:
            out.extend(_path_parts(a, aliases, depth + 1) or [_UNKNOWN])
        return out
    if q in ("pathlib.Path.home", "Path.home") or (tail == "home" and q.endswith("Path.home")):
        return ["~"]
    if q in ("os.getenv", "os.environ.get"):
        first = args[0] if args else None
        return ["~"] if isinstance(first, ast.Constant) and first.value == "HOME" else [_UNKNOWN]
    if q in ("os.path.expanduser", "os.path.abspath", "os.path.realpath", "os.path.normpath", "os.fspath",
             "str") and args:
        return _path_parts(args[0], aliases, depth + 1)
    if isinstance(func, ast.Attribute) and func.attr in ("expanduser", "resolve", "absolute"):
        return _path_parts(func.value, aliases, depth + 1)
    if isinstance(func, ast.Attribute) and func.attr == "joinpath":
        out = _path_parts(func.value, aliases, depth + 1) or [_UNKNOWN]
        for a in args:
            out = out + (_path_parts(a, aliases, depth + 1) or [_UNKNOWN])
        return out
    return [_UNKNOWN]


# --- Python that does not parse: the lexical subset ------------------------------------
_LEX_IMPORT = _lazy(r"(?:^|[;:])\s*import\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)")
_LEX_FROM = _lazy(r"(?:^|[;:])\s*from\s+([\w.]+)\s+import\b")
_LEX_DYN_IMPORT = _lazy(r"\b(?:__import__|import_module)\s*\(\s*(['\"])")
_LEX_CALL = _lazy(r"\b(shutil\.rmtree|os\.(?:remove|unlink|rmdir|removedirs|kill|killpg))\s*\(")


def _python_lexical(ctx: FileContext, s: _Settings, out: _Out, calls: bool) -> None:
    """Import statements from the lexer's code lines (strings and comments already blanked);
    with ``calls``, also the unmistakable calls, for files that do not parse."""
    lexed = ctx.lexed
    for n in ctx.selected_lines():
        code = lexed.code_line(n)
        if s.banned_imports and "import" in code and any(b in ctx.line(n) for b in s.banned_imports):
            names: list[tuple[str, int]] = []
            for m in _LEX_IMPORT.finditer(code):
                names.extend((p.split()[0], m.start(1)) for p in m.group(1).split(",") if p.split())
            for m in _LEX_FROM.finditer(code):
                if not m.group(1).startswith("."):
                    names.append((m.group(1), m.start(1)))
            if calls:
                names.extend((_quoted_at(code, ctx.line(n), m.end() - 1), m.start())
                             for m in _LEX_DYN_IMPORT.finditer(code))
            for name, col in names:
                b = name and not name.startswith(".") and banned_module(name, s.banned_imports)
                if b:
                    out.add(SEN101, n, _import_msg(name, b), column=len(code) - len(code.lstrip()) + 1)
        if not calls:
            continue
        for m in _LEX_CALL.finditer(code):
            q = m.group(1)
            rule = SEN103 if q in _FS_CALLS else SEN104
            if ("filesystem" if rule is SEN103 else "process") in s.classes:
                verb = _FS_CALLS.get(q, "sends a signal")
                out.add(rule, n, f"{q}() {verb}", column=m.start() + 1)


def _quoted_at(code: str, raw: str, quote_col: int) -> str:
    """The raw text of the string literal whose opening quote is at ``quote_col`` of the blanked code line."""
    quote = code[quote_col]
    end = code.find(quote, quote_col + 1)
    return raw[quote_col + 1:end] if end > quote_col else ""


# --------------------------------------------------------------------------- JS / TS
_JS_IMPORT = _lazy(r"""(?:\bfrom\s*|(?:^|[;{}])\s*import\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)(['"`])""")


def _check_js_imports(ctx: FileContext, s: _Settings, out: _Out, scope: str) -> None:
    banned = [b for b in s.banned_imports if b in scope]
    if not banned:
        return
    lexed = ctx.lexed
    for n in ctx.selected_lines():
        raw = ctx.line(n)
        if not any(b in raw for b in banned):
            continue
        code = lexed.code_line(n)
        for m in _JS_IMPORT.finditer(code):
            module = _quoted_at(code, raw, m.end() - 1)
            if not module or "${" in module or module.startswith((".", "/")):
                continue
            module = module.removeprefix("node:")
            b = banned_module(module, s.banned_imports, sep="/")
            if b:
                out.add(SEN101, n, _import_msg(module, b), column=m.start(1) + 1)


# --------------------------------------------------------------------------- shell-like files
_SH_RM = _lazy(r"\brm\b")
_SH_WORD = r"""(?:\$\{[^}]*\}|\$\((?:[^()]|\([^()]*\))*\)|"(?:\\.|[^"\\])*"|'[^']*'|\\.|[^\s"'`;&|()<>\\])+"""
_SH_TOKEN = _lazy(rf"(?P<op>&&|\|\||[;&|()`]|[<>]+&?)|(?P<w>{_SH_WORD})")
_SH_PREFIX = {"sudo", "env", "command", "builtin", "exec", "time", "nohup", "nice", "then", "do", "else", "!",
              "{", "}", "xargs", "doas"}
_ASSIGNMENT = _lazy(r"^[A-Za-z_]\w*=")
_YAML_RUN_KEY = _lazy(
    r"^(?P<lead>\s*(?:-\s+)?)(?P<key>run|script|scripts|before_script|after_script|before_install|install|"
    r"command|commands|cmd|entrypoint|bash|sh|inlineScript)\s*:(?:\s+(?P<value>.*?))?\s*$")
_BLOCK_VALUE = _lazy(r"^[|>][-+0-9]*$")
_VAR_ONLY = _lazy(r"^(?:\$\w+|\$\{\w+\}|\$\(\w+\)|\$\$\w+|\$\$\{\w+\})/*\*?$")
_HOME = {"~", "$HOME", "${HOME}", "$(HOME)", "$$HOME"}
_SAFE_TOP = {"tmp", "var/tmp"}


def _comment_free(ctx: FileContext, n: int) -> str:
    raw = ctx.line(n)
    comment = ctx.lexed.comments.get(n)
    if comment and raw.endswith(comment):
        return raw[: len(raw) - len(comment)]
    return raw


def _check_shellish(ctx: FileContext, out: _Out) -> None:
    if ctx.language == "yaml":
        physical = _yaml_command_lines(ctx)
    else:
        physical = [(n, _comment_free(ctx, n)) for n in range(1, len(ctx.lines))]
    for segments in _logical_lines(physical):
        if not any(ctx.selected(n) for n, _ in segments):
            continue
        text = " ".join(t for _, t in segments)
        if ("rm" not in text or not _SH_RM.search(text)) and "git" not in text:
            continue
        if ctx.language == "docker":
            text = _docker_run(text)
            if text is None:
                continue
        elif ctx.language == "make":
            text = text.lstrip().lstrip("@-+")
        starts, acc = [], 0
        for _, t in segments:
            starts.append(acc)
            acc += len(t) + 1
        for (cmd, why), offset in _shell_findings(text, any_target=False):
            idx = bisect.bisect_right(starts, offset) - 1
            line = segments[max(idx, 0)][0]
            if not ctx.selected(line):
                line = next((n for n, _ in segments if ctx.selected(n)), None)
            if line is not None:
                out.add(SEN106, line, f"`{cmd}` {why}")


def _logical_lines(physical: list[tuple[int, str]]):
    """Join backslash-continued lines: yields lists of (line, text) segments."""
    group: list[tuple[int, str]] = []
    for n, text in physical:
        stripped = text.rstrip()
        if stripped.endswith("\\"):
            group.append((n, stripped[:-1]))
            continue
        group.append((n, text))
        yield group
        group = []
    if group:
        yield group


def _docker_run(text: str) -> str | None:
    m = re.match(r"\s*RUN\s+((?:--\S+\s+)*)(.*)$", text, re.IGNORECASE | re.DOTALL)
    if not m:
        return None
    body = m.group(2)
    if body.lstrip().startswith("["):
        try:
            words = _json_loads(body)
        except ValueError:
            return body
        if isinstance(words, list) and all(isinstance(w, str) for w in words):
            return " ".join(_sh_quote(w) for w in words)
    return body


def _sh_quote(word: str) -> str:
    return word if re.fullmatch(r"[\w./~$:=@%+,-]+", word) else "'" + word.replace("'", "") + "'"


def _yaml_command_lines(ctx: FileContext) -> list[tuple[int, str]]:
    """Lines of a YAML file that are shell commands: values of run/script/command-like keys,
    inline or as block scalars/lists beneath them."""
    out: list[tuple[int, str]] = []
    block_indent: int | None = None
    same_indent_items = False  # "script:\n- cmd": YAML lets a key's list sit at the key's own indent
    for n in range(1, len(ctx.lines)):
        text = _comment_free(ctx, n)
        if not text.strip():
            continue
        indent = len(text) - len(text.lstrip())
        if block_indent is not None and (indent > block_indent or (
                same_indent_items and indent == block_indent and text.lstrip().startswith("- "))):
            m = _YAML_RUN_KEY.match(text)
            if not m:
                body = text.strip()
                out.append((n, _yaml_scalar(body.removeprefix("- "))))
                continue
        else:
            block_indent = None
            m = _YAML_RUN_KEY.match(text)
        if not m:
            continue
        value = (m.group("value") or "").strip()
        if not value or _BLOCK_VALUE.match(value):
            lead = m.group("lead")
            block_indent = len(lead)
            same_indent_items = not value and "-" not in lead
        elif not value.startswith(("{", "[")):
            out.append((n, _yaml_scalar(value)))
    return out


def _yaml_scalar(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _shell_commands(text: str):
    """Simple commands of a shell line: lists of (word, offset), redirection targets dropped."""
    words: list[tuple[str, int]] = []
    skip_next = False
    for m in _SH_TOKEN.finditer(text):
        op = m.group("op")
        if op is not None:
            if op[0] in "<>":
                skip_next = True
                continue
            if words:
                yield words
            words = []
            continue
        if skip_next:
            skip_next = False
            continue
        words.append((m.group("w"), m.start()))
    if words:
        yield words


def _unquote(word: str) -> str:
    return re.sub(r"""\\(.)|["']""", lambda m: m.group(1) or "", word)


def _strip_prefixes(words: list[str]) -> list[str]:
    i = 0
    while i < len(words):
        w = words[i]
        if w in _SH_PREFIX or _ASSIGNMENT.match(w):
            i += 1
            while w in ("sudo", "doas", "xargs", "env", "nice") and i < len(words) and words[i].startswith("-"):
                i += 2 if words[i] in ("-u", "-g", "-n", "-I") else 1
            continue
        break
    return words[i:]


def _shell_findings(text: str, any_target: bool) -> list[tuple[tuple[str, str], int]]:
    """((command, why), offset of the command word) for each destructive command of a shell line."""
    found = []
    for cmd in _shell_commands(text):
        raw = [w for w, _ in cmd]
        rest = _strip_prefixes(raw)
        if not rest:
            continue
        desc = _describe_words(rest, any_target)
        if desc:
            found.append((desc, cmd[len(raw) - len(rest)][1]))
    return found


def _describe_words(words: list[str], any_target: bool) -> tuple[str, str] | None:
    """(command as shown, why it is destructive) for a destructive command given as words
    (quotes allowed), or None. With ``any_target`` every recursive rm counts; otherwise only
    dangerous targets do."""
    words = _strip_prefixes(list(words))
    if not words:
        return None
    prog = posixpath.basename(_unquote(words[0]).lstrip("\\"))
    if prog == "rm":
        return _describe_rm(words[1:], any_target)
    if prog == "git":
        return _describe_git([_unquote(a) for a in words[1:]])
    return None


def _describe_rm(args: list[str], any_target: bool) -> tuple[str, str] | None:
    recursive = no_preserve = False
    flags: list[str] = []
    targets: list[str] = []
    options_done = False
    for a in args:
        plain = _unquote(a)
        if not options_done and plain == "--":
            options_done = True
        elif not options_done and plain.startswith("--"):
            flags.append(plain)
            recursive |= plain == "--recursive"
            no_preserve |= plain == "--no-preserve-root"
        elif not options_done and plain.startswith("-") and len(plain) > 1:
            flags.append(plain)
            recursive |= "r" in plain or "R" in plain
        else:
            targets.append(a)
    if not recursive:
        return None
    shown = " ".join(["rm", *flags])
    if no_preserve:
        return shown, "disables the root-directory safeguard"
    if any_target:
        return f"{shown} {' '.join(_unquote(t) for t in targets)}".rstrip(), "deletes recursively"
    for t in targets:
        why = rm_target_risk(t)
        if why:
            return f"{shown} {_unquote(t)}", why
    return None


def rm_target_risk(word: str) -> str | None:
    """Why deleting this rm target (as written in a script) is dangerous: the filesystem root,
    home, the whole working directory, a top-level system directory, or a bare variable
    followed by "/" (root when the variable is empty). None for ordinary paths."""
    if re.search(r"\$\{\w+:?\?", word):  # ${VAR:?} aborts when empty
        return None
    t = _unquote(word).strip()
    if not t:
        return None
    squeezed = re.sub(r"/+", "/", t)
    base = squeezed.removesuffix("/*")
    base = base.rstrip("/") if base not in ("/", "") else "/"
    if base in ("", "/"):
        return "deletes the filesystem root"
    if base in _HOME:
        return "deletes the home directory"
    if base in (".", "..", "*", ".*"):
        return "deletes the whole working directory"
    if _VAR_ONLY.match(t):
        return "deletes from / when the variable is empty (write ${VAR:?})" if t.rstrip("*").endswith("/") else None
    top = re.fullmatch(r"/([^/$*]+)", base)
    if top and top.group(1) not in _SAFE_TOP:
        return "deletes a top-level system directory"
    return None


def dangerous_rm_target(word: str) -> bool:
    return rm_target_risk(word) is not None


def _describe_git(args: list[str]) -> tuple[str, str] | None:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-C", "-c") else 1
    if i >= len(args):
        return None
    sub, rest = args[i], args[i + 1:]
    shorts = "".join(a[1:] for a in rest if a.startswith("-") and not a.startswith("--"))
    if sub == "push":
        if "--force" in rest or "f" in shorts:
            return "git push --force", "rewrites remote history (use --force-with-lease)"
        refspec = next((a for a in rest if a.startswith("+") and len(a) > 1), None)
        if refspec:
            return f"git push {refspec}", "force-pushes (use --force-with-lease)"
    elif sub == "reset" and "--hard" in rest:
        return "git reset --hard", "discards uncommitted work"
    elif sub == "clean" and ("--force" in rest or "f" in shorts) and "n" not in shorts and "--dry-run" not in rest:
        return f"git clean {' '.join(a for a in rest if a.startswith('-'))}", "deletes untracked files"
    return None
