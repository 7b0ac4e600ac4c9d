"""Dependency manifests (requirements, pyproject.toml, Pipfile, package.json): banned or unapproved
dependencies (SEN102)."""

from __future__ import annotations

import bisect
import re

from sentinel.checks.base import FileContext
from sentinel.checks.jail.rules import SEN102
from sentinel.checks.jail.settings import _lazy, _Out, _Settings, normalize_dist


def _json_loads(text: str):
    import json  # only package.json and JS string literals need it; keep it off the common path

    return json.loads(text)


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
