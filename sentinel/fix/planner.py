"""Plan fixes for a verdict's findings, show them as a diff, write them.

Fixes apply only to the findings the gate reported (so only to lines in the change's scope), and only
to files whose working-tree content is byte for byte what was checked: writing a fix computed from the
staged blob over a file with unstaged edits would destroy those edits. Such files are refused, and the
plan says why.

Order inside a file: the layout fixes first (they never change the number of lines), then the libcst
fixes from the bottom of the file up, so that every fixer finds its finding at the line the gate
reported. Each fix is also computed alone against the checked text: that is the edit SARIF and review
suggestions show.
"""

from __future__ import annotations

import os

from sentinel.fix.context import FixContext, lines_of, python_tree, same_python
from sentinel.fix.model import Edit, FilePlan, Fix, NotFixable, Plan
from sentinel.models import Finding

# Layout fixes keep line numbers; structural ones may not and run bottom-up after them.
_LAYOUT = ("SEN201", "SEN204", "SEN205")


NEEDS_LIBCST = ("needs libcst, which the light install leaves out: pip install 'diff-sentinel[fix]' "
                "(pre-commit: additional_dependencies: [libcst])")
_STRUCTURAL = {"SEN301": ("python", "bare_except"), "SEN203": ("wildcard", "explicit_names"),
               "SEN303": ("python", "literal_eval")}


def fixers() -> dict:
    """Rule code -> fixer(text, finding, ctx) -> (new text, description). libcst loads here, when fixing;
    without it the layout fixes still work and the others say what to install."""
    import importlib

    from sentinel.fix import layout

    table = {"SEN201": layout.indentation, "SEN204": layout.line_endings, "SEN205": layout.trailing_whitespace}
    for code, (module, name) in _STRUCTURAL.items():
        try:
            table[code] = getattr(importlib.import_module(f"sentinel.fix.{module}"), name)
        except ModuleNotFoundError as exc:
            if exc.name != "libcst":
                raise
            table[code] = _needs_libcst
    return table


def _needs_libcst(text, finding, ctx):
    raise NotFixable(NEEDS_LIBCST)


def fix_safety() -> dict[str, str]:
    """Rule code -> "safe" / "unsafe" for every rule that declares a fix."""
    from sentinel.checks import rule_index

    return {code: rule.fix for code, rule in rule_index().items() if rule.fix in ("safe", "unsafe")}


def plan(change, findings: list[Finding], config=None, unsafe: bool = False, require_worktree: bool = True) -> Plan:
    """Fixes for these findings of `change`. With `require_worktree`, a file is fixed only when the working
    tree holds exactly the checked content (what --fix writes to); without, edits describe the checked
    content itself (SARIF fixes, review suggestions, previews)."""
    safety = fix_safety()
    out = Plan()
    wanted: dict[str, list[Finding]] = {}
    for f in findings:
        level = safety.get(f.rule)
        if level is None or f.line is None:
            continue
        if level == "unsafe" and not unsafe:
            out.unsafe_skipped += 1
            continue
        wanted.setdefault(f.path, []).append(f)
    if not wanted:
        return out
    cs = change.changeset
    root = cs.root
    checked = change.read(list(wanted))
    table = fixers()
    for path, file_findings in wanted.items():
        text, problem = _checked_text(checked.get(path))
        on_disk = None
        if problem is None and require_worktree:
            on_disk, problem = _worktree_problem(change, path, checked.get(path))
        if problem is not None:
            out.refused.append((path, problem))
            continue
        fc = cs.file(path)
        ctx = FixContext(path, fc.language if fc else "unknown", set(fc.added) if fc else set(), config, root,
                         read=_snapshot_reader(change), unsafe=unsafe)
        fp = _plan_file(text, file_findings, ctx, table, safety)
        fp.on_disk = on_disk
        out.files.append(fp)
    return out


def _snapshot_reader(change):
    def read(path: str) -> str | None:
        if not path or path.startswith("/") or ".." in path.split("/"):
            return None
        data = change.read([path]).get(path)
        if data is None:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    return read


def _checked_text(data: bytes | None) -> tuple[str, str | None]:
    if data is None:
        return "", "its checked content could not be read"
    if b"\0" in data[:8000]:
        return "", "binary content"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return "", "not UTF-8 text"


def _worktree_problem(change, path: str, checked: bytes | None) -> tuple[bytes | None, str | None]:
    """(the working-tree bytes a fix may replace, or why none may be written)."""
    from sentinel.fix import safewrite

    try:
        current = safewrite.read(_root(change.changeset.root), path)
    except safewrite.Refused as exc:
        return None, str(exc)
    if change.content_rev is None:
        fc = change.changeset.file(path)
        lines = current.decode("utf-8", "replace").split("\n")
        if fc is not None and any(n > len(lines) or lines[n - 1].rstrip("\r") != t for n, t in fc.added.items()):
            return None, "the working tree does not match the diff that was checked"
        return current, None
    if current != checked:
        what = "staged" if change.content_rev == "" else "checked"
        return None, (f"the working tree differs from the {what} content (unstaged edits?): stage or stash them, "
                      "then run again")
    return current, None


def _root(root: str | None) -> str:
    return os.path.realpath(root or os.getcwd())


def _plan_file(text: str, findings: list[Finding], ctx: FixContext, table: dict, safety: dict) -> FilePlan:
    fp = FilePlan(path=ctx.path, before=text, after=text)
    layout = sorted((f for f in findings if f.rule in _LAYOUT), key=lambda f: f.line)
    structural = sorted((f for f in findings if f.rule not in _LAYOUT), key=lambda f: -f.line)
    needed: set[str] = set()
    current = text
    for group in (layout, structural):
        stage_start, stage_fixes = current, []
        for f in group:
            try:
                ctx.pending_imports = None
                alone, description, level = _run(table[f.rule], text, f, ctx, safety[f.rule])
                ctx.pending_imports = set()
                current = _run(table[f.rule], current, _moved(f, text, current), ctx, level)[0]
                needed |= ctx.pending_imports
            except NotFixable as exc:
                fp.not_fixed.append((f, str(exc)))
                continue
            stage_fixes.append(Fix(finding=f, safety=level, description=description,
                                   edits=edits_between(text, alone)))
        if needed:
            from sentinel.fix.python import add_imports

            current, needed = add_imports(current, needed), set()
        if not _stage_ok(ctx, group is layout, stage_start, current):
            fp.not_fixed.extend((fx.finding, "the fixes together would change the code") for fx in stage_fixes)
            current, stage_fixes = stage_start, []
        fp.fixes.extend(stage_fixes)
    fp.after = current
    return fp


def _run(fixer, text: str, f: Finding, ctx: FixContext, level: str) -> tuple[str, str, str]:
    """(new text, description, safety): a fixer may return a third item, the safety of this one fix when it
    is less than its rule's (a rule whose fix is safe in general, unsafe in this file)."""
    out = fixer(text, f, ctx)
    return (out[0], out[1], out[2]) if len(out) == 3 else (out[0], out[1], level)


def _moved(f: Finding, original: str, current: str) -> Finding:
    """The finding where it now is: a layout fix may have re-indented its line (structural fixes run
    bottom-up and add imports last, so the line itself has not moved)."""
    if f.column is None or not f.line:
        return f
    before, after = lines_of(original), lines_of(current)
    if f.line > min(len(before), len(after)):
        return f
    old, new = before[f.line - 1], after[f.line - 1]
    shift = (len(new) - len(new.lstrip(" \t"))) - (len(old) - len(old.lstrip(" \t")))
    if not shift:
        return f
    return Finding(**{**{name: getattr(f, name) for name in Finding._fields}, "column": f.column + shift})


def _stage_ok(ctx: FixContext, layout: bool, before: str, after: str) -> bool:
    if ctx.language != "python" or before == after:
        return True
    if layout and python_tree(before) is not None:
        return same_python(before, after)
    return python_tree(after) is not None


def edits_between(before: str, after: str) -> list[Edit]:
    import difflib

    a, b = lines_of(before), lines_of(after)
    edits = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            edits.append(Edit(first_line=i1 + 1, last_line=i2, text="".join(b[j1:j2])))
    return edits


def unified_diff(fp: FilePlan) -> str:
    import difflib

    out = []
    for line in difflib.unified_diff(lines_of(fp.before), lines_of(fp.after), fromfile=f"a/{fp.path}",
                                     tofile=f"b/{fp.path}"):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def write(plan: Plan, root: str | None) -> list[str]:
    """Replace every changed file whose working-tree bytes are still those the plan was made from, through
    `safewrite` (no link followed, nothing written in .git, mode kept); returns the paths written."""
    from sentinel.fix import safewrite

    written = []
    for fp in plan.changed_files:
        if fp.on_disk is None:
            plan.refused.append((fp.path, "its working-tree content was not verified before the fix was planned"))
            continue
        try:
            safewrite.replace(_root(root), fp.path, fp.on_disk, fp.after.encode("utf-8"))
        except safewrite.Refused as exc:
            plan.refused.append((fp.path, str(exc)))
            continue
        written.append(fp.path)
    return written
