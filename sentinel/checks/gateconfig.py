"""Gate configuration: a change that edits Sentinel's own configuration says what it does to the gate.

A pull request could add `SEN301 = "off"` to `.sentinel.toml` and pass. `sentinel ci` therefore runs
with the base branch's configuration; this check shows the change itself, setting by setting, on
the config file: loosening settings (a rule off or lowered, a path excluded or ignored, a check
disabled, a laxer fail level, a longer line limit) as a warning that needs a reviewer, tightening
ones as information. Settings whose effect cannot be judged count as loosening.

The before/after configurations come from the caller when it has them (`sentinel ci` reads the base
from git or the API), else from the change itself: the file after the change and, rebuilt from it
and the diff, the file before.
"""

from __future__ import annotations

from sentinel.lazyre import lazy_compile
from sentinel.models import CheckResult, CheckStatus, Finding, Severity
from sentinel.rules import Rule

CHECK = "gateconfig"
_CONFIG_FILES = (".sentinel.toml", "pyproject.toml")  # sentinel.configdiff.CONFIG_FILES (a test keeps them equal)
_BEFORE = "[tool.sentinel]\nfail-level = \"error\"\n"
RULES: tuple[Rule, ...] = (
    Rule("SEN801", "gate-config-loosened", CHECK, Severity.WARNING,
         "The change loosens Sentinel's own configuration: a rule off or lowered, a path excluded or ignored, a "
         "check disabled, a laxer fail level.",
         "A change that switches off the rules it breaks would pass its own review; in CI the base branch's "
         "configuration applies, and the loosening needs a reviewer's eyes before it is merged.",
         "[tool.sentinel]\nfail-level = \"error\"\n\n[tool.sentinel.severity]\nSEN301 = \"off\"\n",
         "[tool.sentinel]\nfail-level = \"warning\"\n",
         hint="make configuration changes in their own pull request, with the reason in its description",
         example_path="pyproject.toml", example_before=_BEFORE),
    Rule("SEN802", "gate-config-tightened", CHECK, Severity.INFO,
         "The change tightens Sentinel's configuration (it applies once merged).",
         "Stricter settings take effect after the merge: in CI the base branch's configuration judges this change.",
         "[tool.sentinel]\nfail-level = \"warning\"\n",
         "[tool.sentinel]\nfail-level = \"error\"\n",
         hint="nothing to do; the stricter settings apply from the next change on",
         example_path="pyproject.toml", example_before=_BEFORE),
)
_RULE = {r.code: r for r in RULES}


def _show(value) -> str:
    if value is None:
        return "(unset)"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value).replace("'", '"')


def reconstruct_before(after_lines: list[str], fc) -> list[str] | None:
    """The file before the change, from the file after it and the diff (added lines out, removed
    lines back at their old numbers); None when the pieces do not fit together."""
    removed = dict(fc.removed)
    old_len = len(after_lines) - len(fc.added) + len(removed)
    if old_len < 0 or any(n < 1 or n > old_len for n in removed) or any(n > len(after_lines) for n in fc.added):
        return None
    kept = iter(line for n, line in enumerate(after_lines, 1) if n not in fc.added)
    try:
        return [removed[n] if n in removed else next(kept) for n in range(1, old_len + 1)]
    except StopIteration:
        return None


_TABLE = None


def _sentinel_lines(lines: list[str]) -> set[int]:
    """1-based numbers of the lines inside `[tool.sentinel...]` tables of a pyproject.toml."""
    global _TABLE
    if _TABLE is None:
        import re
        _TABLE = re.compile(r"^\s*\[\[?\s*([^\]]*?)\s*\]")
    inside, out = False, set()
    for n, line in enumerate(lines, 1):
        m = _TABLE.match(line)
        if m:
            name = m.group(1).replace('"', "").replace("'", "").replace(" ", "")
            inside = name == "tool.sentinel" or name.startswith("tool.sentinel.")
        if inside:
            out.add(n)
    return out


def _touches_sentinel_table(fc, after_lines: list[str], before_lines: list[str]) -> bool:
    """Whether an edit of pyproject.toml changes a line of its [tool.sentinel] tables (no TOML parse:
    the hook path stays free of it for the common pyproject edit that is not about Sentinel)."""
    return bool(set(fc.added) & _sentinel_lines(after_lines)
                or {n for n, _ in fc.removed} & _sentinel_lines(before_lines))


def _from_change(cctx):
    """(ConfigChange, None) computed from the change itself, or (None, why not)."""
    if not any(p in _CONFIG_FILES for f in cctx.files for p in (f.path, f.old_path)):
        return None, None  # the common case, without importing the comparison
    import os

    from sentinel.configdiff import CONFIG_FILES, compare, config_at, touched_config
    from sentinel.errors import ConfigError
    from sentinel.filecache import read_files
    from sentinel.models import FileStatus

    path = touched_config(cctx.files)
    before: dict[str, bytes | None] = {}
    after: dict[str, bytes | None] = {}
    for name in CONFIG_FILES:
        fc = next((f for f in cctx.files if name in (f.path, f.old_path)), None)
        if fc is None:  # untouched: the same on both sides
            full = os.path.join(cctx.root, name) if cctx.root else None
            before[name] = after[name] = read_files([full])[full] if full else None
            continue
        fctx = cctx.file_contexts.get(fc.path)
        if fc.status is FileStatus.DELETED:
            after_lines = []
        elif fctx is not None and fctx.text_is_known:  # read, or shown whole by the diff
            after_lines = [ln.rstrip("\r") for ln in fctx.text.split("\n")]
            if after_lines and after_lines[-1] == "":
                after_lines.pop()
        else:
            return None, f"the content of {fc.path} after the change is not available"
        old = reconstruct_before(after_lines, fc) if fc.status is not FileStatus.ADDED else []
        if old is None:
            return None, f"cannot rebuild {fc.path} before the change from the diff"
        if name == "pyproject.toml" and not _touches_sentinel_table(fc, after_lines, old):
            old = after_lines  # no [tool.sentinel] line changed: the same configuration on both sides
        # (bytes that were not UTF-8 in the diff go back as they were: the TOML parser judges them)
        after[fc.path] = ("\n".join(after_lines).encode("utf-8", "surrogateescape") + b"\n"
                          if fc.status is not FileStatus.DELETED else None)
        before[fc.old_path or fc.path] = "\n".join(old).encode("utf-8", "surrogateescape") + b"\n" if old else None
    if before == after:
        return None, None
    root = cctx.root or "."
    before_cfg = config_at(root, before, "before the change")
    try:
        after_cfg = config_at(root, after, "after the change")
    except ConfigError as exc:
        return compare(path, before_cfg, None, error=str(exc)), None
    return compare(path, before_cfg, after_cfg), None


class _Lines:
    """Where each setting of the config file's added lines is: read once for every setting the change makes (a
    scan of every added line per setting made a change of thousands of settings quadratic)."""

    def __init__(self, cctx, path: str):
        fc = next((f for f in cctx.files if f.path == path), None)
        self.numbers = sorted(fc.added) if fc is not None and fc.added else []
        self.added = fc.added if fc is not None else {}
        self.keys: dict[str, int] = {}  # the key a line sets (`"src/*" = [...]`, `fail-level = ...`) -> its line
        for n in self.numbers:
            m = _KEY_AT_START.match(self.added[n])
            if m:
                self.keys.setdefault(m.group(1).strip().strip("\"'"), n)
        self.found: dict[str, int] = {}

    def line_of(self, key: str) -> int | None:
        """The added line that sets the setting, else the first one that mentions it, else the first added line."""
        if not self.numbers:
            return None
        leaf = key.split(".")[-1]
        for name in (leaf, leaf.replace("-", "_")):
            if name in self.keys:
                return self.keys[name]
        if leaf not in self.found:
            self.found[leaf] = next((n for n in self.numbers if leaf in self.added[n]
                                     or leaf.replace("-", "_") in self.added[n]), self.numbers[0])
        return self.found[leaf]


_KEY_AT_START = lazy_compile(r"""\s*((?:"[^"]*"|'[^']*'|[\w.\-]+))\s*=""")


def check_change(cctx) -> CheckResult:
    from sentinel.errors import ConfigError

    change = cctx.options.get("config_change")
    if change is None:
        try:
            change, why = _from_change(cctx)
        except ConfigError as exc:
            change, why = None, f"the configuration before the change does not load: {exc}"
        if why:
            return CheckResult(CHECK, CheckStatus.SKIPPED, reason=why)
        if change is None:
            return CheckResult(CHECK, CheckStatus.PASSED, reason="the change does not edit the gate's configuration")
    findings: list[Finding] = []
    lines = _Lines(cctx, change.path)
    where = "in CI the base branch's configuration applies to this change"
    if change.error:
        rule = _RULE["SEN801"]
        findings.append(Finding(rule.code, CHECK, rule.severity, change.path, lines.line_of(""),
                                f"the configuration after this change does not load ({change.error}); {where}",
                                hint=rule.hint))
    for item in change.items:
        rule = _RULE["SEN802" if item.effect == "tightens" else "SEN801"]
        verb = {"loosens": "loosens the gate", "tightens": "tightens the gate",
                "changes": "changes the gate (effect unknown: treated as loosening)"}[item.effect]
        findings.append(Finding(rule.code, CHECK, rule.severity, change.path,
                                lines.line_of(item.key),
                                f"{item.key}: {_show(item.before)} -> {_show(item.after)} {verb}"
                                + (f"; {where}" if item.effect != "tightens" else ""),
                                code=f"{item.key} = {_show(item.after)}", hint=rule.hint))
    summary = (f"{len(change.loosens)} loosening, {len(change.items) - len(change.loosens)} tightening setting(s) "
               f"in {change.path} (base: {change.before_source})")
    return CheckResult(CHECK, CheckStatus.PASSED, findings=findings, reason=summary)
