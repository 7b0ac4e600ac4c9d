"""Plan fixes for a verdict's findings, show them as a diff, write them.

Fixes apply only to the findings the gate reported (so only to lines in the change's scope), and only
to files whose working-tree content is byte for byte what was checked: writing a fix computed from the
staged blob over a file with unstaged edits would destroy those edits. Such files are refused, and the
plan says why.

Every fix is computed once, against the checked text, as spans of it (sentinel/fix/splice.py): alone, that
is the edit SARIF and review suggestions show; together, the spans of all fixes make the fixed file. A fixer
gets all of its rule's findings in a file at once and reads the file once for them, so planning is linear in
the file and its findings (it was quadratic: 600 functions with a bare except and a trailing space took
346 s). Layout fixes go first: a fix whose spans overlap an earlier one's is refused. In Python the layout
fixes together must leave the AST as it was and all fixes together must parse; when they do not, halves are
checked until the fixes at fault are found.
"""

from __future__ import annotations

import ast
import os

from sentinel import gitio
from sentinel.errors import GitError
from sentinel.fix import splice
from sentinel.fix.context import FixContext, python_tree
from sentinel.fix.model import FilePlan, Fix, NotFixable, Outcome, Plan
from sentinel.fix.splice import Lines, apply, difference, line_edits
from sentinel.models import Finding
from sentinel.record import Record

# Layout fixes keep line numbers; structural ones may not and run bottom-up after them.
_LAYOUT = ("SEN201", "SEN204", "SEN205")


NEEDS_LIBCST = ("needs libcst, which the light install leaves out: pip install 'diff-sentinel[fix]' "
                "(pre-commit: additional_dependencies: [libcst])")
_STRUCTURAL = {"SEN301": ("python", "bare_except"), "SEN203": ("wildcard", "explicit_names"),
               "SEN303": ("python", "literal_eval")}


def fixers() -> dict:
    """Rule code -> fixer(text, findings, ctx) -> for each finding an Outcome (the spans of `text` its fix
    replaces) or the NotFixable saying why not; a fixer raises NotFixable when no finding of the file can be
    fixed. libcst loads here, when fixing; without it the layout fixes still work and the others say what
    to install."""
    import importlib

    from sentinel.fix import layout

    table = {"SEN201": layout.batch(layout.indentation), "SEN204": layout.batch(layout.line_endings),
             "SEN205": layout.batch(layout.trailing_whitespace)}
    for code, (module, name) in _STRUCTURAL.items():
        try:
            table[code] = getattr(importlib.import_module(f"sentinel.fix.{module}"), name)
        except ModuleNotFoundError as exc:
            if exc.name != "libcst":
                raise
            table[code] = _needs_libcst
    return table


def _needs_libcst(text, findings, ctx):
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
    read = _snapshot_reader(change)  # one for the whole plan (it lists the snapshot's paths once)
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
                         read=read, unsafe=unsafe)
        fp = _plan_file(text, file_findings, ctx, table, safety)
        fp.on_disk = on_disk
        out.files.append(fp)
    return out


def _snapshot_reader(change):
    """Other files of the snapshot, as text (None: absent, outside the tree, not UTF-8). Every read is a git
    process, and the wildcard fixer asks for files that are not there to find a module (`app/mods/m.py` before
    `mods/m.py`): two of its three reads a wildcard were of absent files. A path the snapshot does not list
    (its paths listed once, in one git process) is answered without one."""
    paths: set[str] | None = None
    listed = change.content_rev is not None and bool(change.changeset.root)

    def read(path: str) -> str | None:
        nonlocal paths, listed
        if not path or path.startswith("/") or ".." in path.split("/"):
            return None
        if listed:
            if paths is None:
                try:
                    paths = set(gitio.ls_files(change.changeset.root, change.content_rev or None))
                except GitError:
                    listed = False
            if listed and path not in paths:
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


class _Proposed(Record):
    finding: Finding
    outcome: Outcome
    safety: str
    layout: bool


def _plan_file(text: str, findings: list[Finding], ctx: FixContext, table: dict, safety: dict) -> FilePlan:
    """Every fix of one file against the checked text, each computed once: fixers get all of a rule's
    findings together and return spans of the text (sentinel/fix/splice.py), which compose without
    re-running any fixer on a result. Linear in the file and its findings."""
    fp = FilePlan(path=ctx.path, before=text, after=text)
    by_rule: dict[str, list[Finding]] = {}
    for f in sorted(findings, key=lambda f: (f.rule not in _LAYOUT, f.line, f.column or 0)):
        by_rule.setdefault(f.rule, []).append(f)
    proposed: list[_Proposed] = []
    for rule, group in by_rule.items():
        try:
            results = table[rule](text, group, ctx)
        except NotFixable as exc:
            results = [exc] * len(group)
        for f, result in zip(group, results):
            if isinstance(result, NotFixable):
                fp.not_fixed.append((f, str(result)))
            else:
                proposed.append(_Proposed(finding=f, outcome=result, safety=result.safety or safety[rule],
                                          layout=rule in _LAYOUT))
    proposed.sort(key=lambda p: (not p.layout, p.finding.line, p.finding.column or 0))
    accepted = _without_overlaps(proposed, fp)
    imports = _Imports(text)
    layout, structural = [p for p in accepted if p.layout], [p for p in accepted if not p.layout]
    if ctx.language == "python":
        layout = _verified(layout, fp, _keeps_code(text), "the file does not parse to the same code after the fix")
        kept = [s for p in layout for s in p.outcome.spans]

        def parses(chosen: list[_Proposed]) -> bool:
            return python_tree(apply(text, kept + _spans(chosen, imports))) is not None

        structural = _verified(structural, fp, parses, "the fixed file would not parse")
    chosen = layout + structural
    if not chosen:
        return fp
    lines = ctx.memo("lines", lambda: Lines(text))
    for p in chosen:
        own = list(p.outcome.spans) + imports.spans(p.outcome.imports)
        fp.fixes.append(Fix(finding=p.finding, safety=p.safety, description=p.outcome.description,
                            edits=line_edits(lines, own)))
    fp.spans = _spans(chosen, imports)
    fp.after = apply(text, fp.spans)
    return fp


def _spans(chosen: list[_Proposed], imports: "_Imports") -> list:
    """The spans of these fixes together: each once (two findings of one fix share it), imports added once."""
    spans = list(dict.fromkeys(s for p in chosen for s in p.outcome.spans))
    needed = frozenset().union(*(p.outcome.imports for p in chosen))
    return spans + imports.spans(needed)


class _Imports:
    """The span that adds `import X` statements to the checked text, computed once per set of modules."""

    def __init__(self, text: str):
        self.text = text
        self._spans: dict[frozenset, list] = {}

    def spans(self, modules: frozenset) -> list:
        if not modules:
            return []
        if modules not in self._spans:
            from sentinel.fix.python import add_imports

            try:
                self._spans[modules] = [difference(self.text, add_imports(self.text, set(modules)))]
            except NotFixable:
                self._spans[modules] = []
        return self._spans[modules]


def _conflict(a: tuple, b: tuple) -> bool:
    """Do two spans overlap (an insertion at the edge of a replacement does not; two at one point do)?"""
    if a == b:
        return False
    (s1, e1, _), (s2, e2, _) = a, b
    if s1 == e1 and s2 == e2:
        return s1 == s2
    if s1 == e1:
        return s2 < s1 < e2
    if s2 == e2:
        return s1 < s2 < e1
    return s1 < e2 and s2 < e1


def _without_overlaps(proposed: list[_Proposed], fp: FilePlan) -> list[_Proposed]:
    """The fixes whose spans overlap no earlier fix's (layout first, then by line): two fixes rewriting the
    same characters cannot both apply. Spans taken are kept sorted; as they never overlap, a new one can
    only clash with its two neighbours."""
    import bisect

    taken: list[tuple] = []
    owner: dict[tuple, Finding] = {}
    accepted = []
    for p in proposed:
        clash = None
        for span in p.outcome.spans:
            i = bisect.bisect_left(taken, span)
            clash = next((taken[j] for j in (i - 1, i) if 0 <= j < len(taken) and _conflict(taken[j], span)), None)
            if clash is not None:
                break
        if clash is not None:
            other = owner[clash]
            fp.not_fixed.append((p.finding, f"its fix overlaps the fix of {other.rule} at line {other.line}"))
            continue
        for span in p.outcome.spans:
            if span not in owner:
                bisect.insort(taken, span)
                owner[span] = p.finding
        accepted.append(p)
    return accepted


def _keeps_code(text: str):
    """A check that some layout fixes leave the file's AST exactly as it was."""
    tree = python_tree(text)
    dumped = ast.dump(tree) if tree is not None else None

    def check(chosen: list[_Proposed]) -> bool:
        if dumped is None:
            return False
        after = python_tree(apply(text, [s for p in chosen for s in p.outcome.spans]))
        return after is not None and ast.dump(after) == dumped

    return check


# Fixes are checked together; when together they fail, halves are checked until the culprits are found,
# at most this many times (each check reads the whole file): bounded work on a hostile file.
_MAX_CHECKS = 48


def _verified(items: list[_Proposed], fp: FilePlan, valid, why: str) -> list[_Proposed]:
    """The fixes of `items` that pass `valid` together; the others go to not_fixed with `why`."""
    if not items or valid(items):
        return items
    checks = 1
    kept: list[_Proposed] = []
    dropped: list[_Proposed] = []
    pending = [items]
    while pending:
        chunk = pending.pop()
        if len(chunk) == 1:
            dropped += chunk
            continue
        mid = len(chunk) // 2
        for half in (chunk[mid:], chunk[:mid]):
            if checks >= _MAX_CHECKS:
                dropped += half
                continue
            checks += 1
            if valid(kept + half):
                kept += half
            else:
                pending.append(half)
    fp.not_fixed.extend((p.finding, why) for p in dropped)
    order = {id(p): n for n, p in enumerate(items)}
    return sorted(kept, key=lambda p: order[id(p)])


def unified_diff(fp: FilePlan) -> str:
    return splice.unified_diff(fp.path, fp.before, fp.after, fp.spans)


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
