"""The line length a project's own linters *enforce* — and nothing when none does.

A project that formats with black and lints with ruff's default rules has no line-length rule: black wraps what
it can and leaves the rest, and ruff does not select E501 unless asked. Reporting long lines there disagrees with
the project's own choice on every commit. So a limit applies only when a linter the project configures enforces
one, with that linter's limit and way of counting:

* **ruff** (``ruff.toml`` / ``.ruff.toml`` / ``[tool.ruff]``): only when E501 is selected (``select`` /
  ``extend-select`` by a prefix such as ``E``, ``E5`` or ``ALL``) and not ignored by an equally or more specific
  prefix; limit ``lint.pycodestyle.max-line-length``, else ``line-length``, else 88; width counted as ruff does
  (East Asian wide characters count 2); ``per-file-ignores`` honoured.
  Rules are selected by code or, in ruff's preview mode, by name (``extend-ignore = ["line-too-long"]``).
* **flake8** (``[flake8]`` in ``setup.cfg`` / ``tox.ini`` / ``.flake8``) and **pycodestyle** (``[pycodestyle]``,
  or ``[pep8]`` from before its rename): E501 unless ignored (``ignore`` / ``extend-ignore``) or left out of a
  ``select``; ``max-line-length``, else 79. flake8-bugbear's B950 with E501 ignored allows ``max-line-length``
  + 10%.

A section counts only where the tool that reads it is in use. flake8 reads ``[flake8]`` alone (it runs
pycodestyle with its own settings) and ruff reads its own tables, so a ``[pycodestyle]`` / ``[pep8]`` section
beside a flake8 or ruff configuration, or a ``[flake8]`` section beside a ruff one, is a leftover unless the
project's runners (``.pre-commit-config.yaml``, ``tox.ini``, ``noxfile.py``, ``Makefile``) name that tool.
* **pylint** (``[tool.pylint]``, ``.pylintrc``, ``pylintrc``, ``[pylint.*]`` sections): ``line-too-long``
  (C0301) unless disabled; ``max-line-length``, else 100.

When several linters enforce one, the strictest applies (each of them runs). ``[tool.sentinel.style]
line-length`` overrides all of this. Only the repository root is consulted. The result is cached across runs
under the git directory as plain data, used only while every source file is byte-for-byte what it was
(:mod:`sentinel.filecache`): a hook run parses no TOML or INI.
"""

from __future__ import annotations

import os
import re
import sys
from functools import lru_cache

from sentinel import filecache
from sentinel.lazyre import lazy_compile as lazy_re
from sentinel.record import Record, factory

CHARS, WIDTH = "chars", "width"


class LineLengthPolicy(Record, frozen=True):
    limit: int | None = None  # None: no linter of the project enforces a line length
    source: str | None = None  # e.g. "ruff E501 in pyproject.toml"
    counting: str = CHARS  # CHARS (pycodestyle, pylint) or WIDTH (ruff: wide characters count 2)
    # Patterns (the linter's globs) of files where the enforcing linter ignores the rule.
    exempt_globs: tuple = factory(tuple)

    def applies_to(self, path: str) -> bool:
        if self.limit is None:
            return False
        if self.exempt_globs:
            from sentinel.globs import matches

            return not matches(path, list(self.exempt_globs))
        return True


# Files that say which tools a project runs (a linter named there is in use).
_RUNNERS = (".pre-commit-config.yaml", "noxfile.py", "Makefile")
# Every file the policy is read from: a change to any of them invalidates the cached result.
_SOURCES = (".ruff.toml", "ruff.toml", "pyproject.toml", "setup.cfg", "tox.ini", ".flake8", ".pylintrc", "pylintrc",
            *_RUNNERS)
_CACHE_ENTRY = "line-length-policy"


@lru_cache(maxsize=32)
def project_policy(root: str | None) -> LineLengthPolicy:
    if not root:
        return LineLengthPolicy()
    files = filecache.read_files([os.path.join(root, name) for name in _SOURCES])
    cache_dir, salt = _cache_dir(root), _salt()
    cached = filecache.load(cache_dir, _CACHE_ENTRY, salt, files)
    if cached is not None:
        try:
            return LineLengthPolicy(limit=cached[0], source=cached[1], counting=cached[2],
                                    exempt_globs=tuple(cached[3]))
        except (TypeError, ValueError, IndexError):
            pass  # written by another version: rebuild
    policy = _policy(root, files)
    filecache.store(cache_dir, _CACHE_ENTRY, salt, files,
                    [policy.limit, policy.source, policy.counting, list(policy.exempt_globs)])
    return policy


def _cache_dir(root: str) -> str | None:
    from sentinel import gitio
    from sentinel.errors import GitError

    try:
        return os.path.join(gitio.git_dir(root), "sentinel")
    except GitError:
        return None


def _salt() -> str:
    from sentinel.version import __version__

    return f"line-length-policy-v2:{__version__}"


def _policy(root: str, files: dict[str, bytes | None]) -> LineLengthPolicy:
    found = [p for p in (_ruff(root, files), *_ini_linters(root, files), _pylint(root, files)) if p is not None]
    found = _in_use(found, root, files)
    enforcing = [p for p in found if p.limit is not None]
    if not enforcing:
        return LineLengthPolicy()
    return min(enforcing, key=lambda p: p.limit)


# A section and the tools that read it in its place when they are configured too.
_SUPERSEDED_BY = {"pep8": ("flake8", "ruff"), "pycodestyle": ("flake8", "ruff"), "flake8": ("ruff",)}
# Config section headers name a tool without running it: they are not evidence of use.
_SECTION_HEADER = lazy_re(r"^\s*\[(?:flake8|pycodestyle|pep8|pylint[^\]]*|tool:[^\]]*)\]\s*$", re.M | re.I)


def _tool(policy: LineLengthPolicy) -> str:
    return (policy.source or "").split(" ", 1)[0].replace("flake8-bugbear", "flake8")


def _in_use(found: list[LineLengthPolicy], root: str, files: dict[str, bytes | None]) -> list[LineLengthPolicy]:
    """The policies whose tool is in use: a section superseded by another configured tool counts only when the
    project's runners name its own tool."""
    configured = {_tool(p) for p in found}
    superseded = [p for p in found if any(t in configured for t in _SUPERSEDED_BY.get(_tool(p), ()))]
    if not superseded:
        return found
    runners = "\n".join((files.get(os.path.join(root, name)) or b"").decode("utf-8", "replace")
                        for name in (*_RUNNERS, "tox.ini"))
    runners = _SECTION_HEADER.sub("", runners)
    return [p for p in found if p not in superseded or _named(_tool(p), runners)]


def _named(tool: str, text: str) -> bool:
    """Is the tool named as a command or hook (`pep8`, not `pep8-naming`; `flake8`, `flake8-bugbear`)?"""
    if tool == "flake8":
        return re.search(r"(?<![\w.-])flake8\b", text) is not None
    return re.search(rf"(?<![\w.-]){re.escape(tool)}(?![\w-])", text) is not None


# --- selection by code prefix (ruff and flake8 resolve select/ignore by specificity) ------------------

def _selected(code: str, select: list[str], ignore: list[str]) -> bool:
    """Is `code` on? The most specific matching prefix wins; on a tie, ignore wins. "ALL" is the least specific."""
    def best(prefixes: list[str]) -> int:
        lengths = [0 if p == "ALL" else len(p) for p in prefixes if p == "ALL" or code.startswith(p)]
        return max(lengths) if lengths else -1

    chosen, ignored = best(select), best(ignore)
    return chosen >= 0 and chosen > ignored


def _codes(value, names: bool = False) -> list[str]:
    if isinstance(value, str):
        value = value.replace("\n", ",").split(",")
    if not isinstance(value, list):
        return []
    out = []
    for v in value:
        code = str(v).strip().split("#")[0].strip()
        if code:
            out.append(_RULE_NAMES.get(code.lower(), code.upper()) if names else code.upper())
    return out


# Rules named instead of coded (ruff's preview mode accepts names in select/ignore; a name selects one rule).
_RULE_NAMES = {"line-too-long": "E501"}


# --- ruff ---------------------------------------------------------------------------------------------

_RUFF_DEFAULT_SELECT = ["E4", "E7", "E9", "F"]


def _ruff(root: str, files: dict[str, bytes | None]) -> LineLengthPolicy | None:
    for name in (".ruff.toml", "ruff.toml"):
        table = _toml(files.get(os.path.join(root, name)))
        if table is not None:
            return _ruff_policy(table, name)
    pyproject = _toml(files.get(os.path.join(root, "pyproject.toml"))) or {}
    tool = pyproject.get("tool") if isinstance(pyproject.get("tool"), dict) else {}
    if isinstance(tool.get("ruff"), dict):
        return _ruff_policy(tool["ruff"], "pyproject.toml")
    return None


def _ruff_policy(table: dict, where: str) -> LineLengthPolicy:
    lint = table.get("lint") if isinstance(table.get("lint"), dict) else {}

    def key(name: str):  # [lint] wins over the deprecated top-level spelling
        return lint.get(name, table.get(name))

    select = _codes(key("select"), True) if key("select") is not None else list(_RUFF_DEFAULT_SELECT)
    select += _codes(key("extend-select"), True)
    ignore = _codes(key("ignore"), True) + _codes(key("extend-ignore"), True)
    if not _selected("E501", select, ignore):
        return LineLengthPolicy(source=f"ruff in {where} (E501 not selected)")
    limit = None
    for scope in (lint, table):
        pycodestyle = scope.get("pycodestyle") if isinstance(scope, dict) else None
        if isinstance(pycodestyle, dict) and limit is None:
            limit = _positive_int(pycodestyle.get("max-line-length"))
    limit = limit or _positive_int(table.get("line-length")) or 88
    exempt = []
    for name in ("per-file-ignores", "extend-per-file-ignores"):
        table_pfi = key(name)
        if isinstance(table_pfi, dict):
            exempt += [glob for glob, codes in table_pfi.items() if _selected("E501", _codes(codes, True), [])]
    return LineLengthPolicy(limit=limit, source=f"ruff E501 in {where}", counting=WIDTH,
                            exempt_globs=tuple(exempt))


# --- flake8 / pycodestyle (INI) --------------------------------------------------------------------------

# flake8's own default ignore list (used when a project sets none): E501 is not in it.
_FLAKE8_DEFAULT_SELECT = ["E", "F", "W", "C90"]


def _ini_linters(root: str, files: dict[str, bytes | None]) -> list[LineLengthPolicy | None]:
    out: list[LineLengthPolicy | None] = []
    read = set()  # flake8 (and pycodestyle) read the first of these files that has their section, no other
    for name in ("setup.cfg", "tox.ini", ".flake8"):
        parser = _ini(files.get(os.path.join(root, name)))
        if parser is None:
            continue
        for section, default_limit in (("flake8", 79), ("pycodestyle", 79), ("pep8", 79)):
            if parser.has_section(section) and section not in read:
                read.add(section)
                out.append(_pycodestyle_policy(parser, section, default_limit, name))
    return out


def _pycodestyle_policy(parser, section: str, default_limit: int, where: str) -> LineLengthPolicy:
    def get(*names: str) -> str | None:
        for n in names:
            for spelling in (n, n.replace("-", "_")):
                if parser.has_option(section, spelling):
                    return parser.get(section, spelling)
        return None

    limit = _positive_int(get("max-line-length")) or default_limit
    select_raw = get("select")
    select = _codes(select_raw) if select_raw is not None else list(_FLAKE8_DEFAULT_SELECT)
    select += _codes(get("extend-select") or "")
    ignore = _codes(get("ignore") or "") + _codes(get("extend-ignore") or "")
    per_file = get("per-file-ignores")
    exempt = _flake8_per_file(per_file) if per_file else []
    if _selected("E501", select, ignore):
        return LineLengthPolicy(limit=limit, source=f"{section} E501 in {where}", exempt_globs=tuple(exempt))
    if section == "flake8" and _selected("B950", select, ignore):
        # flake8-bugbear: "line too long" only beyond max-line-length + 10%.
        return LineLengthPolicy(limit=limit + limit // 10, source=f"flake8-bugbear B950 in {where}",
                                exempt_globs=tuple(exempt))
    return LineLengthPolicy(source=f"{section} in {where} (E501 ignored)")


def _flake8_per_file(value: str) -> list[str]:
    """`per-file-ignores = tests/*: E501,F401  docs/*.py:E501` -> the globs whose codes include E501."""
    out, current = [], None
    for token in value.replace("\n", " ").replace(",", " , ").split():
        if ":" in token:
            glob, _, rest = token.partition(":")
            current = glob.strip()
            token = rest
        if current and token and _selected("E501", _codes(token), []):
            out.append(current)
    return out


# --- pylint ------------------------------------------------------------------------------------------

def _pylint(root: str, files: dict[str, bytes | None]) -> LineLengthPolicy | None:
    pyproject = _toml(files.get(os.path.join(root, "pyproject.toml"))) or {}
    tool = pyproject.get("tool") if isinstance(pyproject.get("tool"), dict) else {}
    if isinstance(tool.get("pylint"), dict):
        table = tool["pylint"]
        settings: dict = {}
        for value in table.values():
            if isinstance(value, dict):
                settings.update({k.lower(): v for k, v in value.items()})
        settings.update({k.lower(): v for k, v in table.items() if not isinstance(v, dict)})
        return _pylint_policy(settings, "pyproject.toml")
    for name in (".pylintrc", "pylintrc", "setup.cfg", "tox.ini"):
        parser = _ini(files.get(os.path.join(root, name)))
        if parser is None:
            continue
        sections = [s for s in parser.sections()
                    if s.lower().startswith(("pylint", "format", "messages control", "main", "master"))]
        if name in ("setup.cfg", "tox.ini"):
            sections = [s for s in sections if s.lower().startswith("pylint")]
        if not sections:
            continue
        settings = {}
        for s in sections:
            settings.update({k.lower(): v for k, v in parser.items(s)})
        return _pylint_policy(settings, name)
    return None


def _pylint_policy(settings: dict, where: str) -> LineLengthPolicy:
    disabled = {c.lower() for c in _codes(settings.get("disable", []))}
    if disabled & {"line-too-long", "c0301", "c", "all", "format"}:
        return LineLengthPolicy(source=f"pylint in {where} (line-too-long disabled)")
    limit = _positive_int(settings.get("max-line-length")) or 100
    return LineLengthPolicy(limit=limit, source=f"pylint line-too-long in {where}")


# --- readers -----------------------------------------------------------------------------------------

def _toml(data: bytes | None) -> dict | None:
    if data is None:
        return None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None  # a broken tool config is that tool's problem


def _ini(data: bytes | None):
    if data is None:
        return None
    import configparser  # only projects that have one of these files pay for the import

    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(data.decode("utf-8"))
    except (configparser.Error, UnicodeDecodeError):
        return None
    return parser


def _positive_int(value) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = value.strip()
        if not value.isdigit():
            return None
        value = int(value)
    return value if isinstance(value, int) and value > 0 else None
