"""Configuration: ``[tool.sentinel]`` in pyproject.toml or a ``.sentinel.toml`` file.

The schema is a tree of typed dataclasses validated by pydantic (unknown keys and wrong
types are errors that name the key and the file). Because importing pydantic costs about
100 ms, a validated config is cached (pickled) under the git directory keyed by a hash of
the file's bytes and our version: the hook validates once per config edit, not per commit.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from dataclasses import dataclass, field, fields, is_dataclass

from sentinel.errors import ConfigError
from sentinel.models import FilterMode, Severity

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


@dataclass(slots=True)
class JailConfig:
    enabled: bool = True
    banned_imports: list[str] = field(default_factory=list)
    banned_dependencies: list[str] = field(default_factory=list)
    # When set, any dependency added to a manifest must be on this list.
    allowed_dependencies: list[str] | None = None
    protected_paths: list[str] = field(default_factory=lambda: list(DEFAULT_PROTECTED_PATHS))
    extra_protected_paths: list[str] = field(default_factory=list)
    protected_exceptions: list[str] = field(default_factory=lambda: list(DEFAULT_PROTECTED_EXCEPTIONS))
    # Classes of destructive operations that are findings.
    destructive: list[str] = field(default_factory=lambda: ["filesystem", "process", "database", "shell"])


@dataclass(slots=True)
class StyleConfig:
    enabled: bool = True
    # None: read from the project's ruff/black/flake8/.editorconfig settings, else default_line_length.
    line_length: int | None = None
    default_line_length: int = 120


@dataclass(slots=True)
class ChaosConfig:
    enabled: bool = True
    extra_secret_names: list[str] = field(default_factory=list)
    # Shannon entropy (bits per char) above which a long random-looking literal is a secret.
    entropy_threshold: float = 4.5
    # Path globs of test fixtures whose credentials are fake by design.
    fixture_paths: list[str] = field(default_factory=lambda: ["**/fixtures/**", "**/testdata/**"])


@dataclass(slots=True)
class PlaceholderConfig:
    enabled: bool = True
    markers: list[str] = field(default_factory=lambda: ["TODO", "FIXME", "HACK", "XXX"])
    # A marker written in this form names tracked work and is allowed, e.g. "TODO(#123)".
    allowed_form: str | None = r"\b(?:TODO|FIXME)\((?:#\d+|[A-Z][A-Z0-9]+-\d+)\)"
    scan_prose: bool = False


@dataclass(slots=True)
class EmbeddingsConfig:
    # "static" (the bundled numpy-only model), a local path, or a sentence-transformers name.
    model: str = "static"
    allow_download: bool = False


@dataclass(slots=True)
class DriftConfig:
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


@dataclass(slots=True)
class ClaimsConfig:
    enabled: bool = True
    junit: list[str] = field(default_factory=list)
    coverage: list[str] = field(default_factory=list)


@dataclass(slots=True)
class LlmConfig:
    enabled: bool = False
    model: str = ""
    fallback_models: list[str] = field(default_factory=list)
    timeout: float = 60.0
    max_diff_chars: int = 60000
    fail_closed: bool = True
    api_base: str | None = None


@dataclass(slots=True)
class MemoryConfig:
    enabled: bool = True
    # None: <git-dir>/sentinel/hypotheses.sqlite3
    store_path: str | None = None
    database_url: str | None = None
    recall_k: int = 3
    min_score: float = 0.35
    embedding_weight: float = 0.5
    lexical_weight: float = 0.5
    retention_days: int = 365
    max_runs: int = 5000
    extra_cards: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Config:
    fail_level: Severity = Severity.ERROR
    filter_mode: FilterMode = FilterMode.ADDED
    exclude: list[str] = field(default_factory=list)
    # Per rule code: a severity or "off".
    severity: dict[str, str] = field(default_factory=dict)
    per_path_ignores: dict[str, list[str]] = field(default_factory=dict)
    baseline: str | None = None
    jail: JailConfig = field(default_factory=JailConfig)
    style: StyleConfig = field(default_factory=StyleConfig)
    chaos: ChaosConfig = field(default_factory=ChaosConfig)
    placeholder: PlaceholderConfig = field(default_factory=PlaceholderConfig)
    embeddings: EmbeddingsConfig = field(default_factory=EmbeddingsConfig)
    drift: DriftConfig = field(default_factory=DriftConfig)
    claims: ClaimsConfig = field(default_factory=ClaimsConfig)
    llm: LlmConfig = field(default_factory=LlmConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    # Where the settings came from (not a user key).
    source: str = "defaults"

    def section_enabled(self, check: str) -> bool:
        section = getattr(self, check, None)
        return bool(getattr(section, "enabled", True))


# Tables whose keys are user data (rule codes, globs) and must not be renamed.
_FREE_KEY_TABLES = {"severity", "per_path_ignores"}
_VERSION_SALT = "config-v1"


def _normalize_keys(data: dict, path: tuple[str, ...] = ()) -> dict:
    out = {}
    for key, value in data.items():
        new_key = key.replace("-", "_") if isinstance(key, str) else key
        if isinstance(value, dict) and (not path or path[-1] not in _FREE_KEY_TABLES) and new_key not in _FREE_KEY_TABLES:
            value = _normalize_keys(value, path + (new_key,))
        out[new_key] = value
    return out


def _load_toml(path: str) -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML in {path}: {exc}") from None


def find_config(root: str) -> tuple[str | None, dict]:
    """Return (path, raw table) of the project's config, or (None, {})."""
    dedicated = os.path.join(root, ".sentinel.toml")
    if os.path.isfile(dedicated):
        return dedicated, _load_toml(dedicated)
    pyproject = os.path.join(root, "pyproject.toml")
    if os.path.isfile(pyproject):
        table = _load_toml(pyproject).get("tool", {}).get("sentinel")
        if table is not None:
            if not isinstance(table, dict):
                raise ConfigError(f"{pyproject}: [tool.sentinel] must be a table")
            return pyproject, table
    return None, {}


def validate(raw: dict, origin: str) -> Config:
    """Validate a raw table with pydantic; errors name the key and the file."""
    from pydantic import ConfigDict, TypeAdapter, ValidationError

    _forbid_extra(Config, ConfigDict)
    try:
        cfg = TypeAdapter(Config).validate_python(_normalize_keys(raw))
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            key = ".".join(str(p).replace("_", "-") for p in err["loc"]) or "(top level)"
            msg = "unknown key" if err["type"] in ("extra_forbidden", "unexpected_keyword_argument") else err["msg"]
            problems.append(f"{key}: {msg}")
        raise ConfigError(f"invalid configuration in {origin}: " + "; ".join(problems)) from None
    for code, level in cfg.severity.items():
        if level not in ("off", "info", "warning", "error"):
            raise ConfigError(f"invalid configuration in {origin}: severity.{code}: "
                              f"expected one of off, info, warning, error, got {level!r}")
    cfg.source = origin
    return cfg


def _forbid_extra(cls, config_dict) -> None:
    """Attach pydantic's extra='forbid' to our (stdlib) config dataclasses once."""
    if "__pydantic_config__" in cls.__dict__:
        return
    try:
        cls.__pydantic_config__ = config_dict(extra="forbid")
    except AttributeError:  # slots dataclasses still accept class attributes; be safe anyway
        return
    for f in fields(cls):
        sub = f.default_factory if callable(getattr(f, "default_factory", None)) else None
        if isinstance(sub, type) and is_dataclass(sub):
            _forbid_extra(sub, config_dict)


def load_config(root: str | None, explicit: str | None = None, cache_dir: str | None = None) -> Config:
    if explicit:
        if not os.path.isfile(explicit):
            raise ConfigError(f"config file not found: {explicit}")
        raw_all = _load_toml(explicit)
        raw = raw_all.get("tool", {}).get("sentinel", raw_all) if explicit.endswith("pyproject.toml") else raw_all
        origin = explicit
    elif root:
        origin, raw = find_config(root)
        if origin is None:
            return Config()
    else:
        return Config()
    if not raw:
        cfg = Config()
        cfg.source = origin
        return cfg
    key = hashlib.sha256(repr(sorted(_flatten(raw))).encode() + _VERSION_SALT.encode() + origin.encode()).hexdigest()
    cache_file = os.path.join(cache_dir, f"config-{key[:24]}.pickle") if cache_dir else None
    if cache_file and os.path.isfile(cache_file):
        try:
            with open(cache_file, "rb") as fh:
                cached = pickle.load(fh)
            if isinstance(cached, Config):
                return cached
        except (OSError, pickle.PickleError, EOFError, AttributeError, TypeError):
            pass  # a stale or broken cache is simply rebuilt
    cfg = validate(raw, origin)
    if cache_file:
        try:
            os.makedirs(cache_dir, exist_ok=True)
            tmp = f"{cache_file}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                pickle.dump(cfg, fh)
            os.replace(tmp, cache_file)
        except OSError:
            pass  # caching is an optimisation only
    return cfg


def _flatten(value, prefix: str = ""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _flatten(v, f"{prefix}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _flatten(v, f"{prefix}[{i}]")
    else:
        yield (prefix, repr(value))


def as_dict(cfg: Config) -> dict:
    """The effective config as plain data (for `sentinel config`)."""
    from dataclasses import asdict

    def conv(v):
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        if hasattr(v, "value"):
            return v.value
        return v

    return conv(asdict(cfg))
