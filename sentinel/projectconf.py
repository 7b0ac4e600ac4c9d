"""The project's own style settings (line length), read from the tools it already configures.

A project that set ``line-length = 88`` for ruff or black should not be told about lines
longer than 120, nor about lines its linters accept. Sources, in the order the tools
themselves are usually consulted:

* ruff: ``.ruff.toml`` / ``ruff.toml`` (``line-length``, ``lint.pycodestyle.max-line-length``),
  else ``[tool.ruff]`` in ``pyproject.toml``;
* black: ``[tool.black] line-length``;
* flake8: ``max-line-length`` in the ``[flake8]`` section of ``setup.cfg``, ``tox.ini``, ``.flake8``;
* ``.editorconfig``: ``max_line_length`` of the sections whose glob matches the file.

ruff, black and flake8 only lint Python, so their limits apply to Python files; the
editorconfig applies to whatever its section globs match. Only the repository root is
consulted, and each root's files are read once per process (``project_settings`` is an
``lru_cache``; call ``project_settings.cache_clear()`` after editing them in a long-lived
process). Across runs the result is cached under the git directory, used only while every one
of those files is byte-for-byte what it was (:mod:`sentinel.filecache`): a hook run in a
project with a pyproject.toml parses no TOML.
"""

from __future__ import annotations

import os
import re
import sys
from functools import lru_cache

from sentinel import filecache
from sentinel.lazyre import lazy_compile
from sentinel.record import Record, factory

# "off" in an editorconfig means: no limit for these files.
NO_LIMIT = 0


class EditorConfigSection(Record, frozen=True):
    glob: str  # the section header, e.g. "*.py" or "docs/**.md"
    max_line_length: int | None  # NO_LIMIT for "off", None when the section does not set it

    @property
    def pattern(self) -> re.Pattern:
        return editorconfig_glob(self.glob)


class ProjectSettings(Record, frozen=True):
    python_line_length: int | None = None  # from ruff / black / flake8
    python_source: str | None = None  # e.g. "ruff in pyproject.toml"
    editorconfig: tuple[EditorConfigSection, ...] = factory(tuple)

    def line_length(self, path: str, language: str) -> tuple[int | None, str | None]:
        """(limit, where it came from) for a file; (None, None) when the project says nothing.

        A limit of ``NO_LIMIT`` (0) means the project switched the check off for this file.
        """
        if language == "python" and self.python_line_length is not None:
            return self.python_line_length, self.python_source
        found: int | None = None
        for section in self.editorconfig:  # later sections override earlier ones
            if section.max_line_length is not None and section.pattern.fullmatch(path):
                found = section.max_line_length
        if found is not None:
            return found, ".editorconfig"
        return None, None


# Every file the settings are read from: a change to any of them invalidates the cached result.
_SOURCES = (".ruff.toml", "ruff.toml", "pyproject.toml", "setup.cfg", "tox.ini", ".flake8", ".editorconfig")
_CACHE_ENTRY = "project-style"


@lru_cache(maxsize=32)
def project_settings(root: str | None) -> ProjectSettings:
    if not root:
        return ProjectSettings()
    files = filecache.read_files([os.path.join(root, name) for name in _SOURCES])
    cache_dir, salt = _cache_dir(root), _salt()
    cached = filecache.load(cache_dir, _CACHE_ENTRY, salt, files)
    if cached is not None:
        try:
            return ProjectSettings(python_line_length=cached[0], python_source=cached[1],
                                   editorconfig=tuple(EditorConfigSection(g, n) for g, n in cached[2]))
        except (TypeError, ValueError, IndexError):
            pass  # written by another version: rebuild
    length, source = _python_line_length(root)
    settings = ProjectSettings(python_line_length=length, python_source=source,
                               editorconfig=tuple(_editorconfig(os.path.join(root, ".editorconfig"))))
    filecache.store(cache_dir, _CACHE_ENTRY, salt, files,
                    [length, source, [[sec.glob, sec.max_line_length] for sec in settings.editorconfig]])
    return settings


def _cache_dir(root: str) -> str | None:
    from sentinel import gitio
    from sentinel.errors import GitError

    try:
        return os.path.join(gitio.git_dir(root), "sentinel")
    except GitError:
        return None


def _salt() -> str:
    from sentinel import __version__

    return f"project-style-v1:{__version__}"


def line_length_for(root: str | None, path: str, language: str) -> tuple[int | None, str | None]:
    return project_settings(root).line_length(path, language)


# --- Python tools -----------------------------------------------------------------------

def _python_line_length(root: str) -> tuple[int | None, str | None]:
    for name in (".ruff.toml", "ruff.toml"):
        table = _toml(os.path.join(root, name))
        if table is not None:
            value = _ruff_length(table)
            if value is not None:
                return value, f"ruff in {name}"
    pyproject = _toml(os.path.join(root, "pyproject.toml")) or {}
    tool = pyproject.get("tool") if isinstance(pyproject.get("tool"), dict) else {}
    ruff = tool.get("ruff")
    if isinstance(ruff, dict):
        value = _ruff_length(ruff)
        if value is not None:
            return value, "ruff in pyproject.toml"
    black = tool.get("black")
    if isinstance(black, dict):
        value = _positive_int(black.get("line-length", black.get("line_length")))
        if value is not None:
            return value, "black in pyproject.toml"
    for name in ("setup.cfg", "tox.ini", ".flake8"):
        value = _flake8_length(os.path.join(root, name))
        if value is not None:
            return value, f"flake8 in {name}"
    return None, None


def _ruff_length(table: dict) -> int | None:
    # E501 uses pycodestyle.max-line-length when set, else the formatter's line-length.
    for lint in (table.get("lint"), table):
        if isinstance(lint, dict) and isinstance(lint.get("pycodestyle"), dict):
            value = _positive_int(lint["pycodestyle"].get("max-line-length"))
            if value is not None:
                return value
    return _positive_int(table.get("line-length"))


def _flake8_length(path: str) -> int | None:
    if not os.path.isfile(path):
        return None
    import configparser  # only projects that have one of these files pay for the import

    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None
    if not parser.has_section("flake8"):
        return None
    for key in ("max-line-length", "max_line_length"):
        if parser.has_option("flake8", key):
            return _positive_int(parser.get("flake8", key))
    return None


def _toml(path: str) -> dict | None:
    if not os.path.isfile(path):
        return None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None  # a broken tool config is that tool's problem; fall back to our default


def _positive_int(value) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = value.strip()
        if not value.isdigit():
            return None
        value = int(value)
    return value if isinstance(value, int) and value > 0 else None


# --- .editorconfig ----------------------------------------------------------------------

_SECTION = lazy_compile(r"^\s*\[(.*)\]\s*(?:[#;].*)?$")
_PAIR = lazy_compile(r"^\s*([^=:#;\s][^=:]*?)\s*[=:]\s*(.*?)\s*$")


def _editorconfig(path: str) -> list[EditorConfigSection]:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return []
    sections: list[EditorConfigSection] = []
    glob: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        m = _SECTION.match(line)
        if m:
            glob = m.group(1).strip()
            continue
        m = _PAIR.match(line)
        if not m or glob is None or m.group(1).lower() != "max_line_length":
            continue
        value = m.group(2).split(" #")[0].split(" ;")[0].strip().lower()
        if value == "off":
            sections.append(EditorConfigSection(glob, NO_LIMIT))
        else:
            number = _positive_int(value)
            if number is not None:
                sections.append(EditorConfigSection(glob, number))
    return sections


@lru_cache(maxsize=256)
def editorconfig_glob(glob: str) -> re.Pattern:
    """Compile an editorconfig section glob to a regex over repository-relative paths.

    A glob without "/" matches the file name in any directory; ``*`` stays within one
    directory, ``**`` crosses them, ``{a,b}`` and ``{1..9}`` are alternatives.
    """
    anchored = "/" in glob
    body = _glob_to_regex(glob.lstrip("/"))
    if anchored:
        return re.compile(body)
    return re.compile(rf"(?:.*/)?{body}")


def _glob_to_regex(glob: str) -> str:
    out: list[str] = []
    i, n = 0, len(glob)
    depth = 0  # inside {...}
    while i < n:
        c = glob[i]
        if c == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
            continue
        if c == "*":
            if glob.startswith("**", i):
                out.append(".*")
                i += 2
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = glob.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                inner = glob[i + 1:end]
                neg = inner.startswith("!")
                inner = inner[1:] if neg else inner
                out.append(f"[{'^' if neg else ''}{re.escape(inner)}]")
                i = end + 1
                continue
        elif c == "{":
            end = glob.find("}", i + 1)
            numeric = re.fullmatch(r"(-?\d+)\.\.(-?\d+)", glob[i + 1:end]) if end != -1 else None
            if numeric:
                lo, hi = sorted((int(numeric.group(1)), int(numeric.group(2))))
                if hi - lo <= 10000:
                    out.append("(?:" + "|".join(str(x) for x in range(lo, hi + 1)) + ")")
                    i = end + 1
                    continue
            if end != -1 and "," in glob[i + 1:end]:
                out.append("(?:")
                depth += 1
            else:
                out.append(re.escape(c))
        elif c == "," and depth:
            out.append("|")
        elif c == "}" and depth:
            out.append(")")
            depth -= 1
        else:
            out.append(re.escape(c))
        i += 1
    out.extend(")" * depth)
    return "".join(out)
