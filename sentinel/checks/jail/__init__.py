"""The dependency jail: what a change may import, depend on, destroy and touch.

Python is judged on its AST (names resolved through the file's own imports, so
``items.remove(x)`` is never ``os.remove``); JavaScript/TypeScript imports on the lexer's
code view; shell-like files (scripts, Makefiles, Dockerfiles, CI YAML run blocks) on a small
shell tokenizer over comment-free lines; manifests by parsing the post-change file and
reporting the entries that sit on added lines. Every path is gated by keyword probes over
the lines in scope (substring search, then a precise regex near each hit), so a change with
nothing suspicious never parses or walks a tree; a whole file another check has already parsed
goes straight to its AST (the probes are exact: they spare the parse, never a finding).
"""

from __future__ import annotations

from sentinel.checks.base import ChangeContext, FileContext
from sentinel.checks.jail.js import _check_js_imports
from sentinel.checks.jail.manifests import _check_manifest, manifest_kind, parse_requirement_line
from sentinel.checks.jail.paths import _touched_protected, protected_write_target
from sentinel.checks.jail.python import _check_python, banned_module, destructive_sql
from sentinel.checks.jail.rules import CHECK, RULES, SEN107
from sentinel.checks.jail.settings import _PROBES_FS, _PROBES_SHELL, _Out, _settings, normalize_dist, probe
from sentinel.checks.jail.shell import _SHELLISH, _check_shellish, dangerous_rm_target, rm_target_risk
from sentinel.models import FileStatus, FilterMode, Finding

__all__ = ["CHECK", "RULES", "banned_module", "check_change", "check_file", "dangerous_rm_target", "destructive_sql",
           "manifest_kind", "normalize_dist", "parse_requirement_line", "probe", "protected_write_target",
           "rm_target_risk", "_PROBES_FS", "_settings"]


def check_file(ctx: FileContext) -> list[Finding]:
    s = _settings(ctx.config.jail)
    out = _Out(ctx)
    touched = _touched_protected(ctx.change, s, ctx.config)
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
    """The text of the lines in scope (the whole file when every line is), as the probes read it
    (ctx.scan_text: Python's NFKC identifiers)."""
    if ctx.mode in (FilterMode.FILE, FilterMode.NOFILTER):
        return ctx.scan_text
    if ctx.mode is FilterMode.ADDED and len(ctx.change.added) >= ctx.line_count - 1:
        return ctx.scan_text
    return "\n".join(ctx.scan_line(n) for n in ctx.selected_lines())


def check_change(cctx: ChangeContext) -> list[Finding]:
    """SEN107 for files that get no FileContext (binary or unreadable): touching them still counts."""
    s = _settings(cctx.config.jail)
    out: list[Finding] = []
    for fc in cctx.files:
        if fc.path in cctx.file_contexts:
            continue
        if cctx.config.exclude and cctx.config.matcher(cctx.config.exclude).match(fc.path):
            continue
        touched = _touched_protected(fc, s, cctx.config)
        if touched:
            out.append(Finding(rule=SEN107.code, check=CHECK, severity=SEN107.severity, path=fc.path, line=None,
                               message=touched, hint=SEN107.hint))
    return out
