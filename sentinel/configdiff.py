"""What a change does to the gate's own configuration, setting by setting.

A pull request that edits `.sentinel.toml` or `[tool.sentinel]` could switch off the very rules it
breaks. In CI the gate therefore runs with the base branch's configuration (`sentinel ci`), and
this module says what the change would do once merged: each setting that differs, whether it
loosens the gate, tightens it or cannot be judged (then it is treated as loosening). The
`gateconfig` check turns the comparison into findings on the config file.
"""

from __future__ import annotations

import os

from sentinel.config import Config, find_config, to_plain, validate
from sentinel.record import Record, factory

CONFIG_FILES = (".sentinel.toml", "pyproject.toml")
_LEVELS = {"off": 0, "info": 1, "warning": 2, "error": 3}
_FILTER_STRICTNESS = {"added": 0, "diff_context": 1, "file": 2, "nofilter": 3}
# Lists whose entries make the gate stricter (removing one loosens it).
_STRICTER_WITH_MORE = {"jail.banned_imports", "jail.banned_dependencies", "jail.extra_protected_paths"}
# Lists whose entries make the gate laxer (adding one loosens it).
_LAXER_WITH_MORE = {"exclude"}
# Numbers where a larger value is laxer / stricter.
_LAXER_WHEN_LARGER = {"style.line_length"}
_STRICTER_WHEN_LARGER = {"drift.threshold"}
_NEUTRAL_PREFIXES = ("memory.", "embeddings.", "source")


class ConfigItem(Record):
    key: str  # dotted, user spelling: "severity.SEN301", "jail.banned-imports"
    before: object
    after: object
    effect: str  # "loosens", "tightens", "changes"


class ConfigChange(Record):
    path: str  # the file the change edits
    before_source: str
    items: list[ConfigItem] = factory(list)
    error: str = ""  # the head configuration does not load: named here, judged as loosening

    @property
    def loosens(self) -> list[ConfigItem]:
        return [i for i in self.items if i.effect != "tightens"]


def _flatten(data: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in data.items():
        full = f"{prefix}{key}"
        if isinstance(value, dict) and full.split(".")[0] not in ("severity", "per_path_ignores"):
            out.update(_flatten(value, full + "."))
        elif isinstance(value, dict):
            for sub, v in value.items():
                out[f"{full}.{sub}"] = v
        else:
            out[full] = value
    return out


def _effect(key: str, before, after, defaults: dict) -> str:
    if key == "fail_level":
        return "loosens" if _LEVELS.get(str(after), 3) > _LEVELS.get(str(before), 3) else "tightens"
    if key == "filter_mode":
        return ("loosens" if _FILTER_STRICTNESS.get(str(after), 0) < _FILTER_STRICTNESS.get(str(before), 0)
                else "tightens")
    if key.startswith("severity."):
        b = _LEVELS.get(str(before), None) if before is not None else defaults.get(key[len("severity."):])
        a = _LEVELS.get(str(after), None) if after is not None else defaults.get(key[len("severity."):])
        if a is None or b is None:
            return "changes"
        return "loosens" if a < b else "tightens"
    if key.startswith("per_path_ignores."):
        b, a = set(before or []), set(after or [])
        return "loosens" if a - b else "tightens"
    if key.endswith(".enabled"):
        return "loosens" if before and not after else "tightens"
    if key in _STRICTER_WITH_MORE or key in _LAXER_WITH_MORE:
        b, a = set(before or []), set(after or [])
        stricter = (a - b and not b - a) if key in _STRICTER_WITH_MORE else (b - a and not a - b)
        return "tightens" if stricter else "loosens"
    if key == "jail.allowed_dependencies":
        b, a = set(before or []), set(after or [])
        if not b:
            return "tightens" if a else "changes"
        return "tightens" if a and a < b else "loosens"
    if key in _LAXER_WHEN_LARGER or key in _STRICTER_WHEN_LARGER:
        try:
            larger = float(after if after is not None else 0) > float(before if before is not None else 0)
        except (TypeError, ValueError):
            return "changes"
        return "loosens" if larger == (key in _LAXER_WHEN_LARGER) else "tightens"
    return "changes"


def _user_key(key: str) -> str:
    head, dot, tail = key.partition(".")
    if head in ("severity", "per_path_ignores"):
        return f"{head.replace('_', '-')}.{tail}"
    return key.replace("_", "-")


def compare(path: str, before: Config, after: Config | None, error: str = "") -> ConfigChange:
    """Setting-by-setting differences between the base and the head configuration."""
    change = ConfigChange(path=path, before_source=before.source, error=error)
    if after is None:
        return change
    try:
        from sentinel.checks import rule_index
        defaults = {code: _LEVELS[r.severity.value] for code, r in rule_index().items()}
    except ImportError:
        defaults = {}
    b, a = _flatten(to_plain(before)), _flatten(to_plain(after))
    for key in sorted(set(b) | set(a)):
        if key.startswith(_NEUTRAL_PREFIXES) or b.get(key) == a.get(key):
            continue
        change.items.append(ConfigItem(_user_key(key), b.get(key), a.get(key), _effect(key, b.get(key), a.get(key),
                                                                                     defaults)))
    return change


def config_at(root: str, blobs: dict[str, bytes | None], label: str) -> Config:
    """The configuration the files in ``blobs`` (config file name -> content) define."""
    files = {os.path.join(root, name): blobs.get(name) for name in CONFIG_FILES}
    origin, raw = find_config(root, files)
    if origin is None:
        cfg = Config()
        cfg.source = f"defaults ({label})"
        return cfg
    rel = os.path.relpath(origin, root)
    if not raw:
        cfg = Config()
        cfg.source = f"{rel} at {label}"
        return cfg
    return validate(raw, f"{rel} at {label}")


def read_config_files(root: str, rev: str | None) -> dict[str, bytes | None]:
    """The config files at a commit (``rev``), or in the index (``rev`` None)."""
    from sentinel import gitio

    prefix = f"{rev}:" if rev else ":"
    blobs = gitio.read_blobs(root, [f"{prefix}{name}" for name in CONFIG_FILES])
    return {name: blobs.get(f"{prefix}{name}") for name in CONFIG_FILES}


def touched_config(files) -> str | None:
    """The root-level config file a change edits (added, modified, renamed or deleted), if any."""
    for f in files:
        for p in (f.path, f.old_path):
            if p in CONFIG_FILES:
                return p
    return None


def for_change(root: str, base_rev: str | None, head_rev: str | None, files) -> ConfigChange | None:
    """Compare the configuration before and after a change that edits a config file (None: it does not).

    ``base_rev`` is the commit before the change; ``head_rev`` the commit after it, or None for the
    index (a staged change)."""
    from sentinel.errors import ConfigError

    path = touched_config(files)
    if path is None or not base_rev:
        return None
    before = config_at(root, read_config_files(root, base_rev), f"base {base_rev[:7]}")
    try:
        after = config_at(root, read_config_files(root, head_rev), f"head {head_rev[:7]}" if head_rev else "index")
    except ConfigError as exc:
        return compare(path, before, None, error=str(exc))
    return compare(path, before, after)


def apply_diff(before_lines: list[str], fc) -> list[str] | None:
    """The file after the change, from the file before it and the diff (removed lines out, added lines
    in at their new numbers); None when the pieces do not fit together."""
    removed = {n for n, _ in fc.removed}
    new_len = len(before_lines) - len(removed) + len(fc.added)
    if new_len < 0 or any(n < 1 or n > new_len for n in fc.added) or any(n > len(before_lines) for n in removed):
        return None
    kept = iter(line for n, line in enumerate(before_lines, 1) if n not in removed)
    try:
        return [fc.added[n] if n in fc.added else next(kept) for n in range(1, new_len + 1)]
    except StopIteration:
        return None
