"""Configuration: ``[tool.sentinel]`` in pyproject.toml or a ``.sentinel.toml`` file.

The schema is a tree of typed records validated by pydantic (unknown keys and wrong types
are errors that name the key and the file). Because importing pydantic and parsing TOML cost
more than a small hook run, the validated config is cached as plain data under the git
directory (:mod:`sentinel.filecache`, keyed by the exact bytes of the config files and our
version): the hook validates once per config edit, not per commit.
"""

from __future__ import annotations

import os
import sys

from sentinel import filecache
from sentinel.errors import ConfigError
from sentinel.models import FilterMode, Severity
from sentinel.record import Record, factory

DEFAULT_PROTECTED_PATHS = [
    ".git/**", ".env", ".env.*", "**/.env", "**/.env.*", ".ssh/**", "**/.ssh/**",
    "**/id_rsa", "**/id_rsa.*", "**/id_dsa", "**/id_ecdsa", "**/id_ed25519", "**/id_ed25519.*",
    "**/*.pem", "**/*.key", "**/*.p12", "**/*.pfx", "**/.netrc", "**/.pgpass", "**/.npmrc", "**/.pypirc",
    "**/credentials", "**/credentials.json", "**/.aws/credentials", "**/secrets.yml", "**/secrets.yaml",
    "**/*.keystore", "**/*.jks",
]
# Example and template files are meant to be committed.
DEFAULT_PROTECTED_EXCEPTIONS = ["**/.env.example", "**/.env.sample", "**/.env.template", "**/*.pub",
                                ".env.example", ".env.sample", ".env.template"]


class JailConfig(Record, forbid_extra=True):
    enabled: bool = True
    banned_imports: list[str] = factory(list)
    banned_dependencies: list[str] = factory(list)
    # When set, any dependency added to a manifest must be on this list.
    allowed_dependencies: list[str] | None = None
    protected_paths: list[str] = factory(lambda: list(DEFAULT_PROTECTED_PATHS))
    extra_protected_paths: list[str] = factory(list)
    protected_exceptions: list[str] = factory(lambda: list(DEFAULT_PROTECTED_EXCEPTIONS))
    # Classes of destructive operations that are findings.
    destructive: list[str] = factory(lambda: ["filesystem", "process", "database", "shell"])


class StyleConfig(Record, forbid_extra=True):
    enabled: bool = True
    # None: the limit the project's own linter enforces (ruff E501, flake8, pylint), else none at all.
    line_length: int | None = None


class ChaosConfig(Record, forbid_extra=True):
    enabled: bool = True
    extra_secret_names: list[str] = factory(list)
    # Shannon entropy (bits per char) above which a long random-looking literal is a secret.
    entropy_threshold: float = 4.5
    # Extra gitignore patterns of test data whose credentials are fake by design (the `fixture` role's own
    # defaults already cover fixtures/, testdata/ and data folders under tests; `[roles] fixture` is preferred).
    fixture_paths: list[str] = factory(list)


class PlaceholderConfig(Record, forbid_extra=True):
    enabled: bool = True
    markers: list[str] = factory(lambda: ["TODO", "FIXME", "HACK", "XXX"])
    # A marker written in this form names tracked work and is allowed, e.g. "TODO(#123)".
    allowed_form: str | None = r"\b(?:TODO|FIXME)\((?:#\d+|[A-Z][A-Z0-9]+-\d+)\)"
    scan_prose: bool = False


class EmbeddingsConfig(Record, forbid_extra=True):
    # "static" (the bundled numpy-only model), a local path, or a sentence-transformers name.
    model: str = "static"
    allow_download: bool = False


class DriftConfig(Record, forbid_extra=True):
    enabled: bool = True
    # Threshold, bands and digest weight are calibrated for the bundled static model on real bug-fix
    # records (scripts/calibrate_drift.py, table in docs/intent.md); recalibrate for another model.
    threshold: float = 0.50
    critical_below: float = 0.20
    high_below: float = 0.25
    medium_below: float = 0.45
    borderline_margin: float = 0.05
    task_file: str | None = ".sentinel/task.md"
    # Share of the change's vector that comes from the code digest (the rest from the message).
    digest_weight: float = 0.6


class ClaimsConfig(Record, forbid_extra=True):
    enabled: bool = True
    junit: list[str] = factory(list)
    coverage: list[str] = factory(list)


class LlmConfig(Record, forbid_extra=True):
    enabled: bool = False
    model: str = ""
    fallback_models: list[str] = factory(list)
    timeout: float = 60.0
    max_diff_chars: int = 60000
    fail_closed: bool = True
    api_base: str | None = None


class MemoryConfig(Record, forbid_extra=True):
    enabled: bool = True
    # None: <git-dir>/sentinel/hypotheses.sqlite3
    store_path: str | None = None
    database_url: str | None = None
    # The project's identity in the store (default: the normalised URL of the clone's remote)
    project: str | None = None
    recall_k: int = 3
    # Shown from this calibrated score: other projects' fixes (bundled, imported) / the project's own learned cards.
    # Chosen on the tuned histories (benchmarks/calibrate_scores.py): the project's own fix earns its slot sooner.
    min_score: float = 0.35
    project_min_score: float = 0.25
    embedding_weight: float = 0.5
    lexical_weight: float = 0.5
    retention_days: int = 365
    max_runs: int = 5000
    extra_cards: list[str] = factory(list)
    # `sentinel memory learn`: closed-loop purification threshold (MemGovern's tau)
    learn_tau: float = 0.2


class RolesConfig(Record, forbid_extra=True):
    """Extra gitignore-style patterns per file role (sentinel.roles); they win over the defaults."""

    default_patterns: bool = True
    product: list[str] = factory(list)
    test: list[str] = factory(list)
    fixture: list[str] = factory(list)
    docs: list[str] = factory(list)
    example: list[str] = factory(list)
    stub: list[str] = factory(list)
    generated: list[str] = factory(list)
    vendored: list[str] = factory(list)
    ci: list[str] = factory(list)


class Config(Record, forbid_extra=True):
    fail_level: Severity = Severity.ERROR
    filter_mode: FilterMode = FilterMode.ADDED
    exclude: list[str] = factory(list)
    # Per rule code: a severity or "off".
    severity: dict[str, str] = factory(dict)
    per_path_ignores: dict[str, list[str]] = factory(dict)
    baseline: str | None = None
    jail: JailConfig = factory(JailConfig)
    style: StyleConfig = factory(StyleConfig)
    chaos: ChaosConfig = factory(ChaosConfig)
    placeholder: PlaceholderConfig = factory(PlaceholderConfig)
    embeddings: EmbeddingsConfig = factory(EmbeddingsConfig)
    drift: DriftConfig = factory(DriftConfig)
    claims: ClaimsConfig = factory(ClaimsConfig)
    llm: LlmConfig = factory(LlmConfig)
    memory: MemoryConfig = factory(MemoryConfig)
    roles: RolesConfig = factory(RolesConfig)
    # Not user keys: where the settings came from, and every glob list translated to regexes ahead of time
    # (sentinel.globs) so that a cached config needs no pathspec import.
    source: str = "defaults"
    compiled_globs: dict = factory(dict)

    def section_enabled(self, check: str) -> bool:
        section = getattr(self, check, None)
        return bool(getattr(section, "enabled", True))

    def matcher(self, patterns):
        """A gitignore-semantics matcher for a list of patterns, from the translations made at load time."""
        from sentinel.globs import Matcher, matcher_for

        key = _glob_key(patterns)
        found = _MATCHERS.get(key)
        if found is None:
            translated = self.compiled_globs.get(key)
            found = Matcher(translated, patterns) if translated is not None else matcher_for(tuple(patterns))
            _MATCHERS[key] = found
        return found


_MATCHERS: dict = {}
_INTERNAL_KEYS = ("source", "compiled_globs")


def _glob_key(patterns) -> str:
    return "\0".join(patterns)


def glob_lists(cfg: Config) -> list[tuple[str, tuple[str, ...]]]:
    """(config key, patterns) of every glob list the gate will match paths against."""
    from sentinel import roles

    out = [("exclude", tuple(cfg.exclude))]
    out += [(f"per-path-ignores.{p}", (p,)) for p in cfg.per_path_ignores]
    out += [(f"roles.{r}", tuple(getattr(cfg.roles, r))) for r in roles.ROLES if getattr(cfg.roles, r)]
    out += [("roles (defaults)", pats) for pats in roles.DEFAULT_PATTERNS.values()]
    if cfg.chaos.fixture_paths:
        out.append(("chaos.fixture-paths", tuple(cfg.chaos.fixture_paths)))
    jail = cfg.jail
    out += [("jail.protected-paths", tuple(jail.protected_paths) + tuple(jail.extra_protected_paths)),
            ("jail.protected-exceptions", tuple(jail.protected_exceptions))]
    return [(k, p) for k, p in out if p]


def translate_globs(cfg: Config, origin: str = "defaults") -> None:
    """Fill cfg.compiled_globs; a malformed pattern is a config error naming its key. A list string operations
    answer (sentinel.globs.fast_pattern: the defaults and most users' patterns) is left out: it needs no regexes,
    and a config load that translates nothing imports no pathspec (~30 ms, on every run without a cache: CI)."""
    from sentinel.globs import fast_pattern, translate

    compiled = {}
    for key, patterns in glob_lists(cfg):
        if all(fast_pattern(p) is not None for p in patterns):
            continue  # valid by construction: what pathspec rejects has no fast form
        try:
            compiled[_glob_key(patterns)] = [list(t) for t in translate(patterns)]
        except ValueError as exc:
            raise ConfigError(f"invalid configuration in {origin}: {key}: {exc}") from None
    cfg.compiled_globs = compiled


# Tables whose keys are user data (rule codes, globs) and must not be renamed.
_FREE_KEY_TABLES = {"severity", "per_path_ignores"}
_CACHE_VERSION = "config-v5"  # v5: rule codes matched exactly; [tool.sentinel] in .sentinel.toml


def _normalize_keys(data: dict, path: tuple[str, ...] = ()) -> dict:
    out = {}
    for key, value in data.items():
        new_key = key.replace("-", "_") if isinstance(key, str) else key
        if isinstance(value, dict) and (not path or path[-1] not in _FREE_KEY_TABLES) \
                and new_key not in _FREE_KEY_TABLES:
            value = _normalize_keys(value, path + (new_key,))
        out[new_key] = value
    return out


def _parse_toml(data: bytes, path: str) -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {path} is not UTF-8 text (invalid byte at offset {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML in {path}: {exc}") from None


def _load_toml(path: str) -> dict:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    return _parse_toml(data, path)


def _candidates(root: str) -> list[str]:
    return [os.path.join(root, ".sentinel.toml"), os.path.join(root, "pyproject.toml")]


def sentinel_table(document: dict, path: str) -> dict | None:
    """Sentinel's table of a parsed config file: ``[tool.sentinel]`` of a pyproject.toml (None when it has
    none); a dedicated file's keys at its top level, or under ``[tool.sentinel]`` as in pyproject.toml, so the
    README's block works pasted into either file. Any other shape is an error saying what to change."""
    tool = document.get("tool")
    if os.path.basename(path) == "pyproject.toml":
        if tool is None:
            return None
        if not isinstance(tool, dict):
            raise ConfigError(f"{path}: `tool` is {_toml_type(tool)}, but [tool.sentinel] needs it to be a "
                              "table: remove the `tool = ...` line")
        table = tool.get("sentinel")
        if table is not None and not isinstance(table, dict):
            raise ConfigError(f"{path}: `tool.sentinel` is {_toml_type(table)}; write the settings as a "
                              "[tool.sentinel] table")
        return table
    if tool is None:
        return document
    others = sorted(k for k in document if k != "tool")
    if not isinstance(tool, dict) or "sentinel" not in tool:
        raise ConfigError(f"invalid configuration in {path}: tool: unknown key (write Sentinel's settings at the "
                          "top level of this file, or under [tool.sentinel])")
    if others:
        raise ConfigError(f"invalid configuration in {path}: both [tool.sentinel] and top-level keys "
                          f"({', '.join(others)}): move them under [tool.sentinel], or drop the `tool.sentinel` "
                          "prefix from every table")
    extra = sorted(k for k in tool if k != "sentinel")
    if extra:
        raise ConfigError(f"invalid configuration in {path}: tool.{extra[0]}: not Sentinel's configuration "
                          "(this file holds only [tool.sentinel]; other tools' settings go in their own files)")
    if not isinstance(tool["sentinel"], dict):
        raise ConfigError(f"{path}: `tool.sentinel` is {_toml_type(tool['sentinel'])}; write the settings as a "
                          "[tool.sentinel] table")
    return tool["sentinel"]


def _toml_type(value) -> str:
    return {str: "a string", bool: "a boolean", int: "an integer", float: "a number", list: "an array"}.get(
        type(value), type(value).__name__)


def find_config(root: str, files: dict[str, bytes | None] | None = None) -> tuple[str | None, dict]:
    """Return (path, raw table) of the project's config, or (None, {})."""
    dedicated, pyproject = _candidates(root)
    files = files if files is not None else filecache.read_files([dedicated, pyproject])
    if files.get(dedicated) is not None:
        return dedicated, sentinel_table(_parse_toml(files[dedicated], dedicated), dedicated)
    if files.get(pyproject) is not None:
        table = sentinel_table(_parse_toml(files[pyproject], pyproject), pyproject)
        if table is not None:
            return pyproject, table
    return None, {}


def validate(raw: dict, origin: str) -> Config:
    """Validate a raw table; errors name the key and the file. A table whose every value already has its
    declared type (what nearly every project writes) is built directly (`exact_config`); anything else — a
    value pydantic would convert, an unknown key, a wrong type — goes to pydantic, whose messages are the
    gate's. Importing pydantic costs ~100 ms: every first run after a config edit and every CI checkout."""
    normalized = _normalize_keys(raw)
    cfg = exact_config(normalized)
    if cfg is None:
        cfg = _pydantic_validate(normalized, origin)
    for key in _INTERNAL_KEYS:
        if key in normalized:
            raise ConfigError(f"invalid configuration in {origin}: {key.replace('_', '-')}: unknown key")
    problems = semantic_problems(cfg)
    if problems:
        raise ConfigError(f"invalid configuration in {origin}: " + "; ".join(problems))
    cfg.source = origin
    translate_globs(cfg, origin)
    return cfg


def _pydantic_validate(normalized: dict, origin: str) -> Config:
    from pydantic import ValidationError

    from sentinel.record_schema import adapter

    try:
        return adapter(Config).validate_python(normalized)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            key = ".".join(str(p).replace("_", "-") for p in err["loc"]) or "(top level)"
            msg = "unknown key" if err["type"] in ("extra_forbidden", "unexpected_keyword_argument") else err["msg"]
            problems.append(f"{key}: {msg}")
        raise ConfigError(f"invalid configuration in {origin}: " + "; ".join(problems)) from None


def _is_str_list(v) -> bool:
    return type(v) is list and all(type(x) is str for x in v)


# What each annotation of the config records accepts as it is, and the value it becomes: exactly what pydantic's
# lax validation returns for such input (an int where a float is declared is the one conversion, as pydantic
# does it). An annotation missing here sends the table to pydantic.
_EXACT = {
    "bool": (lambda v: type(v) is bool, lambda v: v),
    "int": (lambda v: type(v) is int and abs(v) < 2 ** 63, lambda v: v),  # TOML's range; pydantic takes the rest
    "float": (lambda v: type(v) is float or (type(v) is int and abs(v) <= 2 ** 53), float),
    "str": (lambda v: type(v) is str, lambda v: v),
    "list[str]": (_is_str_list, list),
    "dict[str, str]": (lambda v: type(v) is dict and all(type(k) is str and type(x) is str for k, x in v.items()),
                       dict),
    "dict[str, list[str]]": (lambda v: type(v) is dict and all(type(k) is str and _is_str_list(x)
                                                               for k, x in v.items()),
                             lambda v: {k: list(x) for k, x in v.items()}),
    "Severity": (lambda v: type(v) is str and v in Severity._value2member_map_, Severity),
    "FilterMode": (lambda v: type(v) is str and v in FilterMode._value2member_map_, FilterMode),
}
_INTERNAL_FIELDS = frozenset(_INTERNAL_KEYS)


def _annotation(cls: type, name: str) -> str | None:
    for klass in cls.__mro__:
        found = klass.__dict__.get("__annotations__", {}).get(name)
        if found is not None:
            return found if isinstance(found, str) else None
    return None


def exact_config(normalized: dict) -> Config | None:
    """The Config for a table (keys normalized) in which every key is known and every value already has its
    declared type, or None (then pydantic validates it)."""
    return _exact_record(Config, normalized)


def _exact_record(cls: type, table) -> Record | None:
    if type(table) is not dict:
        return None
    values = {}
    for key, value in table.items():
        if key not in cls._fields or key in _INTERNAL_FIELDS:
            return None
        kind = _annotation(cls, key)
        if kind is None:
            return None
        nested = getattr(sys.modules[cls.__module__], kind, None) if kind.isidentifier() else None
        if isinstance(nested, type) and issubclass(nested, Record):
            record = _exact_record(nested, value)
            if record is None:
                return None
            values[key] = record
            continue
        if kind.endswith(" | None") and value is None:
            values[key] = None
            continue
        accepts, make = _EXACT.get(kind.removesuffix(" | None"), (None, None))
        if accepts is None or not accepts(value):
            return None
        values[key] = make(value)
    return cls(**values)


# (key, test, what is expected) for values a type alone does not constrain.# (key, test, what is expected) for values a type alone does not constrain. A negative retention would wipe the
# store; a zero line length would flag every line.
_RANGES = (
    ("style.line-length", lambda c: c.style.line_length is None or c.style.line_length > 0, "a positive integer"),
    ("chaos.entropy-threshold", lambda c: 0 < c.chaos.entropy_threshold <= 8, "a number in (0, 8]"),
    ("memory.retention-days", lambda c: c.memory.retention_days >= 1, "at least 1"),
    ("memory.max-runs", lambda c: c.memory.max_runs >= 1, "at least 1"),
    ("memory.recall-k", lambda c: c.memory.recall_k >= 0, "0 or more"),
    ("memory.min-score", lambda c: 0 <= c.memory.min_score <= 1, "a number in [0, 1]"),
    ("memory.project-min-score", lambda c: 0 <= c.memory.project_min_score <= 1, "a number in [0, 1]"),
    ("drift.threshold", lambda c: 0 <= c.drift.threshold <= 1, "a number in [0, 1]"),
    ("drift.digest-weight", lambda c: 0 <= c.drift.digest_weight <= 1, "a number in [0, 1]"),
    ("llm.timeout", lambda c: c.llm.timeout > 0, "a positive number of seconds"),
    ("llm.max-diff-chars", lambda c: c.llm.max_diff_chars > 0, "a positive integer"),
)


def semantic_problems(cfg: Config) -> list[str]:
    """What pydantic's types cannot see: rule codes that do not exist, empty or malformed patterns, ranges."""
    import re

    from sentinel.checks import all_rules, available_checks

    rules = all_rules()
    codes = {r.code for r in rules}
    checks = set(available_checks())
    problems = []
    for code, level in cfg.severity.items():
        if code not in codes:
            spelled = f"; write {code.upper()} (rule codes are upper case)" if code.upper() in codes else \
                " (`sentinel rules` lists them)"
            problems.append(f"severity.{code}: unknown rule code{spelled}")
        elif level not in ("off", "info", "warning", "error"):
            problems.append(f"severity.{code}: expected one of off, info, warning, error, got {level!r}")
    for pattern, entries in cfg.per_path_ignores.items():
        if not entries:
            problems.append(f"per-path-ignores.{pattern}: an empty list ignores nothing")
        for entry in entries:
            if not _names_rules(entry, codes, checks):
                exact = entry.strip().upper() if _names_rules(entry.strip().upper(), codes, checks) else \
                    entry.strip().lower() if _names_rules(entry.strip().lower(), codes, checks) else None
                problems.append(f"per-path-ignores.{pattern}: {entry!r} is not a rule code, a code prefix "
                                "(\"SEN3\"), a check name or \"*\"" + (f" (write {exact!r})" if exact else ""))
    for key, value in (("jail.banned-imports", cfg.jail.banned_imports),
                       ("jail.banned-dependencies", cfg.jail.banned_dependencies),
                       ("placeholder.markers", cfg.placeholder.markers)):
        if any(not str(v).strip() for v in value):
            problems.append(f"{key}: empty entry")
    unknown = [d for d in cfg.jail.destructive if d not in ("filesystem", "process", "database", "shell")]
    if unknown:
        problems.append(f"jail.destructive: unknown class(es) {', '.join(map(repr, unknown))} "
                        "(expected filesystem, process, database, shell)")
    if cfg.placeholder.allowed_form:
        try:
            re.compile(cfg.placeholder.allowed_form)
        except re.error as exc:
            problems.append(f"placeholder.allowed-form: not a valid regular expression: {exc}")
    for key, ok, expected in _RANGES:
        if not ok(cfg):
            problems.append(f"{key}: expected {expected}")
    return problems


def _names_rules(entry: str, codes: set[str], checks: set[str]) -> bool:
    entry = entry.strip()
    if not entry:
        return False
    if entry == "*" or entry in checks:
        return True
    return any(code == entry or (len(entry) >= 4 and code.startswith(entry)) for code in codes)


def load_config(root: str | None, explicit: str | None = None, cache_dir: str | None = None) -> Config:
    if explicit:
        if not os.path.isfile(explicit):
            raise ConfigError(f"config file not found: {explicit}")
        watched = [explicit]
        entry = "config-" + "".join(c if c.isalnum() else "_" for c in os.path.abspath(explicit))[-80:]
    elif root:
        watched = _candidates(root)
        entry = "config"
    else:
        return Config()
    files = filecache.read_files(watched)
    salt = f"{_CACHE_VERSION}:{_defaults_signature()}"
    cached = filecache.load(cache_dir, entry, salt, files)
    if cached is not None:
        try:
            return from_plain(cached)
        except (TypeError, ValueError, KeyError, AttributeError):
            pass  # a cache written by another version of the schema: rebuild it
    cfg = _load_uncached(root, explicit, files)
    if not cfg.compiled_globs:
        translate_globs(cfg, cfg.source)
    filecache.store(cache_dir, entry, salt, files, to_plain(cfg))
    return cfg


def _load_uncached(root: str | None, explicit: str | None, files: dict[str, bytes | None]) -> Config:
    if explicit:
        if files.get(explicit) is None:
            raise ConfigError(f"cannot read config file {explicit}")
        raw = sentinel_table(_parse_toml(files[explicit], explicit), explicit) or {}
        origin = explicit
    else:
        origin, raw = find_config(root, files)
        if origin is None:
            return Config()
    if not raw:
        cfg = Config()
        cfg.source = origin
        return cfg
    return validate(raw, origin)


def _defaults_signature() -> str:
    """Changes whenever a default changes, so that no cache outlives the defaults it was made with."""
    global _DEFAULTS_SIGNATURE
    if _DEFAULTS_SIGNATURE is None:
        from sentinel.version import __version__

        _DEFAULTS_SIGNATURE = f"{__version__}:{to_plain(Config())!r}"
    return _DEFAULTS_SIGNATURE


_DEFAULTS_SIGNATURE: str | None = None


def to_plain(cfg: Config) -> dict:
    """The config as plain data: dicts, lists, strings and numbers (enums by value); `sentinel config` prints it."""
    def conv(v):
        if isinstance(v, Record):
            return {name: conv(getattr(v, name)) for name in v._fields}
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [conv(x) for x in v]
        if isinstance(v, (Severity, FilterMode)):
            return v.value
        return v

    return conv(cfg)


def from_plain(data: dict) -> Config:
    """Inverse of :func:`to_plain` for data that was validated when it was cached."""
    values = dict(data)
    for name in Config._fields:
        default = Config._defaults.get(name)
        if isinstance(default, factory) and isinstance(default.make, type) and issubclass(default.make, Record):
            values[name] = default.make(**values[name])
    values["fail_level"] = Severity(values["fail_level"])
    values["filter_mode"] = FilterMode(values["filter_mode"])
    return Config(**values)
