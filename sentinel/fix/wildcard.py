"""SEN203: `from module import *` -> explicit names, when they can be resolved statically.

What a wildcard binds is read from the imported module's source — in the repository (the same snapshot
as the checked content) or installed with the interpreter — never by importing project code: its literal
``__all__``, else its public module-level bindings (following its own wildcard imports). Only C modules of
the standard library, which have no source, are imported to list their names.

The safe rewrite imports every name the wildcard binds, so the module's namespace stays exactly what it
was: other code may read names this file never mentions (``from this import name``, Django reading a
settings module, pytest collecting the fixtures a conftest pulled in, a package re-exporting). It is offered
up to MAX_SAFE_NAMES names and when the list is complete (the module binds no names at run time). With
``--unsafe-fixes`` the rewrite imports only the names the file uses — in code, string annotations,
``__all__`` and doctests — and is marked unsafe. Both refuse when behaviour cannot be shown kept for the
file itself: a name it uses that nothing accounts for (it may come from the wildcard at run time), a name
two wildcards both provide, a dynamic ``__all__``, a file that reads its namespace through
``globals()``/``vars()``/``exec``.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.machinery
import os
import posixpath
import sys

import libcst as cst

from sentinel.fix.context import FixContext, python_tree
from sentinel.fix.model import NotFixable
from sentinel.fix.python import Target, code_of, node_start, outcomes, python_facts, rewrite_many
from sentinel.fix.splice import Lines

MODULE_NAMES = frozenset({"__name__", "__file__", "__doc__", "__package__", "__spec__", "__loader__",
                          "__builtins__", "__path__", "__cached__", "__annotations__", "__dict__", "__debug__"})
_DYNAMIC = frozenset({"globals", "locals", "vars", "exec", "eval", "__import__"})
_MAX_DEPTH = 8


class _Resolver:
    def __init__(self, ctx: FixContext):
        self.ctx = ctx
        self._cache: dict[tuple[str, str], frozenset[str]] = {}
        # Modules without a literal __all__ that may bind names at run time (globals(), exec, setattr on
        # themselves): their static names are a lower bound, enough for the names a file uses, not for all.
        self.incomplete: set[tuple[str, str]] = set()

    # --- locating a module ---------------------------------------------------------------------
    def _repo_file(self, base: str, parts: list[str]) -> str | None:
        stem = posixpath.join(base, *parts) if parts else base
        for candidate in ((stem + ".py") if parts else None, posixpath.join(stem, "__init__.py")):
            if candidate and self.ctx.read(candidate.lstrip("/")) is not None:
                return candidate.lstrip("/")
        return None

    def _roots(self, importer: str) -> list[str]:
        """Where absolute imports of the importing file start: the directory above its top-level package,
        the repository root, src/, and the file's own directory (a script's)."""
        here = posixpath.dirname(importer)
        top = here
        while top and self.ctx.read(posixpath.join(top, "__init__.py")) is not None:
            top = posixpath.dirname(top)
        return list(dict.fromkeys([top, "", "src", here]))

    def locate(self, level: int, module: str | None, importer: str) -> tuple[str, str]:
        """("repo", path) or ("installed", dotted name) of what the import statement names."""
        parts = module.split(".") if module else []
        if level:
            base = posixpath.dirname(importer)
            for _ in range(level - 1):
                if not base:
                    raise NotFixable("the relative import goes above the repository")
                base = posixpath.dirname(base)
            found = self._repo_file(base, parts)
            if found is None:
                raise NotFixable(f"{'.' * level}{module or ''} is not in the repository")
            return "repo", found
        for root in self._roots(importer):
            found = self._repo_file(root, parts)
            if found is not None:
                return "repo", found
        return "installed", module or ""

    # --- what a module exports -----------------------------------------------------------------
    def exports(self, kind: str, where: str, depth: int = 0) -> frozenset[str]:
        key = (kind, where)
        if key not in self._cache:
            if depth > _MAX_DEPTH:
                raise NotFixable("wildcard imports nest too deeply to resolve")
            self._cache[key] = frozenset()  # a cycle resolves to what was found before it
            self._cache[key] = self._exports(kind, where, depth)
        return self._cache[key]

    def complete(self, kind: str, where: str) -> bool:
        """Are the names read for this module all that its wildcard binds (after exports() ran)?"""
        return (kind, where) not in self.incomplete

    def _exports(self, kind: str, where: str, depth: int) -> frozenset[str]:
        if kind == "repo":
            source = self.ctx.read(where)
            label = where
        else:
            source, label = _installed_source(where)
            if source is None:
                return frozenset(_compiled_stdlib_names(where))
        tree = python_tree(source or "")
        if tree is None:
            raise NotFixable(f"{label} does not parse")
        declared = _literal_all(tree, label)
        if declared is not None:
            return frozenset(declared)
        if _writes_namespace(tree):
            self.incomplete.add((kind, where))
        names = set()
        for node in _module_level(tree.body):
            if isinstance(node, ast.ImportFrom) and node.names[0].name == "*":
                if kind == "repo":
                    sub = self.locate(node.level, node.module, where)
                else:
                    sub = ("installed", _absolute(where, node.level, node.module, label))
                names |= self.exports(*sub, depth=depth + 1)
                if not self.complete(*sub):
                    self.incomplete.add((kind, where))
            else:
                names |= _bound_by(node)
        return frozenset(n for n in names if not n.startswith("_"))


def _writes_namespace(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.Call) and (
        (isinstance(n.func, ast.Name) and n.func.id in ("globals", "vars", "exec", "setattr"))
        or (isinstance(n.func, ast.Attribute) and n.func.attr in ("update", "setdefault")
            and isinstance(n.func.value, ast.Call) and isinstance(n.func.value.func, ast.Name)
            and n.func.value.func.id in ("globals", "vars"))) for n in ast.walk(tree))


def _absolute(module: str, level: int, name: str | None, label: str) -> str:
    if not level:
        return name or ""
    is_package = label.endswith("__init__.py")
    parts = module.split(".")
    keep = len(parts) - level + (1 if is_package else 0)
    if keep <= 0:
        raise NotFixable(f"a relative import in {label} goes above its package")
    return ".".join(parts[:keep] + ([name] if name else []))


def _installed_source(name: str) -> tuple[str | None, str]:
    """The source of an installed module, found without importing anything (None: no source)."""
    if not name:
        raise NotFixable("the wildcard names no module")
    loaded = sys.modules.get(name)
    if loaded is not None:  # already imported by this interpreter (os.path is posixpath): nothing new runs
        origin = getattr(loaded, "__file__", None) or ""
        if not origin.endswith(".py"):
            return None, name
        return _read_source(origin, name), origin
    search = [p for p in sys.path if p and os.path.abspath(p) != os.getcwd()]
    spec = None
    path: list[str] | None = search
    dotted = ""
    for part in name.split("."):
        dotted = f"{dotted}.{part}" if dotted else part
        spec = importlib.machinery.PathFinder.find_spec(dotted, path)
        if spec is None:
            if dotted == part and (part in sys.builtin_module_names):
                return None, name
            raise NotFixable(f"module {name} is neither in the repository nor installed")
        path = list(spec.submodule_search_locations or [])
    origin = spec.origin if spec is not None else None
    if origin and origin.endswith(".py"):
        return _read_source(origin, name), origin
    return None, name


def _read_source(origin: str, name: str) -> str:
    try:
        with open(origin, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise NotFixable(f"cannot read the source of {name}: {exc}") from None


def _compiled_stdlib_names(name: str) -> list[str]:
    """A module without Python source: one already imported (its names are there to read), or a C module
    of the standard library (the interpreter's own code: importing it runs nothing of the project's)."""
    module = sys.modules.get(name)
    if module is None:
        if name.split(".")[0] not in getattr(sys, "stdlib_module_names", ()):
            raise NotFixable(f"{name} has no Python source to read its names from")
        module = importlib.import_module(name)
    declared = getattr(module, "__all__", None)
    if declared is not None:
        return [str(n) for n in declared]
    return [n for n in dir(module) if not n.startswith("_")]


def _literal_all(tree: ast.Module, label: str) -> list[str] | None:
    """The module's ``__all__`` when it is built from literals (assignment, +=, extend, append); None when
    it has none; NotFixable when it is computed."""
    names: list[str] | None = None
    for node in ast.walk(tree):
        value = None
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            names, value = [], node.value
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name) \
                and node.target.id == "__all__":
            if isinstance(node, ast.AnnAssign):
                names = []
            value = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "__all__":
            if node.func.attr not in ("extend", "append") or len(node.args) != 1:
                raise NotFixable(f"the __all__ of {label} is computed")
            value = node.args[0] if node.func.attr == "extend" else ast.List([node.args[0]])
        else:
            continue
        if names is None:
            raise NotFixable(f"the __all__ of {label} is extended before it is defined")
        items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else None
        if items is None or not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in items):
            raise NotFixable(f"the __all__ of {label} is computed")
        names.extend(e.value for e in items)
    return names


def _module_level(body: list[ast.stmt]):
    """Statements that run at module level: into if/try/with/for/while/match blocks, not into def or class."""
    for node in body:
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _module_level(getattr(node, field, None) or [])
        for handler in getattr(node, "handlers", None) or []:
            yield from _module_level(handler.body)
        for case in getattr(node, "cases", None) or []:
            yield from _module_level(case.body)


def _bound_by(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in node.items if i.optional_vars is not None]
    out: set[str] = set()
    for target in targets:
        out.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    if isinstance(node, ast.Expr):  # a walrus at module level
        out.update(n.target.id for n in ast.walk(node) if isinstance(n, ast.NamedExpr))
    return out


def _used_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(names the code refers to, identifiers inside string constants — annotations, __all__, eval'd text)."""
    used: set[str] = set()
    in_strings: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            used.update(node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if ">>>" in node.value:
                in_strings |= _doctest_names(node.value)
            if len(node.value) >= 300:
                continue
            try:
                parsed = ast.parse(node.value.strip(), mode="eval")
            except (SyntaxError, ValueError):
                continue
            in_strings.update(n.id for n in ast.walk(parsed) if isinstance(n, ast.Name))
    return used, in_strings


def _doctest_names(text: str) -> set[str]:
    """Names the doctest examples in a docstring use (doctest runs them in the module's namespace)."""
    import doctest

    names: set[str] = set()
    try:
        examples = doctest.DocTestParser().get_examples(text)
    except ValueError:
        return names
    for example in examples:
        try:
            parsed = ast.parse(example.source)
        except (SyntaxError, ValueError):
            continue
        names.update(n.id for n in ast.walk(parsed) if isinstance(n, ast.Name))
    return names


def _line_limit(ctx: FixContext) -> int:
    """Where to wrap the rewritten import: the configured or the project linter's limit, else black's 88."""
    style = getattr(ctx.config, "style", None)
    if style is not None and style.line_length:
        return style.line_length
    if ctx.root:
        from sentinel import projectconf

        policy = projectconf.project_policy(ctx.root)
        if policy.applies_to(ctx.path) and policy.limit:
            return policy.limit
    return 88


class _Wildcards:
    """What every wildcard of one file resolves to, read once for all of them: the file's tree, its
    wildcards and what each binds, the names it uses. Raises NotFixable when no wildcard of the file can
    be rewritten without changing what the file does."""

    def __init__(self, text: str, ctx: FixContext):
        tree, bindings = python_facts(text, ctx)
        if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _DYNAMIC
               for n in ast.walk(tree)):
            raise NotFixable("the file reads its namespace dynamically (globals(), vars(), eval, exec)")
        stars = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.names[0].name == "*"]
        self.stars = {n.lineno: n for n in reversed(stars)}  # the first wildcard of each line
        self.resolver = _Resolver(ctx)
        self.located = {id(n): self.resolver.locate(n.level, n.module, ctx.path) for n in stars}
        self.exports = {key: self.resolver.exports(*where) for key, where in self.located.items()}
        self.used, self.in_strings = _used_names(tree)
        provided = set().union(*self.exports.values())
        owners: dict[str, list[ast.ImportFrom]] = {}
        for n in stars:
            for name in self.exports[id(n)]:
                owners.setdefault(name, []).append(n)
        for name in sorted(self.used | (self.in_strings & provided)):
            if len(owners.get(name, ())) > 1:
                mods = " and ".join(_module_of(n) for n in owners[name])
                raise NotFixable(f"`{name}` is provided by both {mods}")
        known = provided | set(dir(builtins)) | MODULE_NAMES | bindings
        unknown = sorted(self.used - known)
        if unknown:
            raise NotFixable(f"`{unknown[0]}` is used but defined nowhere that can be read: it may come from "
                             "the wildcard at run time")


def _module_of(node: ast.ImportFrom) -> str:
    return "." * node.level + (node.module or "")


def explicit_names(text: str, findings: list, ctx: FixContext) -> list:
    wildcards = ctx.memo("wildcards", lambda: _Wildcards(text, ctx))
    lines = ctx.memo("lines", lambda: Lines(text))
    limit = _line_limit(ctx)
    described: dict[int, tuple[str, str | None]] = {}
    targets: list[Target] = []
    refused: dict[int, NotFixable] = {}
    for i, finding in enumerate(findings):
        try:
            targets.append(_target(i, finding, wildcards, lines, limit, ctx, described))
        except NotFixable as exc:
            refused[i] = exc
    results = iter(rewrite_many(text, targets) if targets else [])
    return outcomes([refused[i] if i in refused else next(results) for i in range(len(findings))],
                    lambda i: described[i])


def _target(i: int, finding, wildcards: _Wildcards, lines, limit: int, ctx: FixContext,
            described: dict) -> Target:
    target = wildcards.stars.get(finding.line)
    if target is None:
        raise NotFixable(f"no wildcard import at line {finding.line}")
    module = _module_of(target)
    exported = wildcards.exports[id(target)]
    names, safety = _choose(module, exported, (wildcards.used | wildcards.in_strings) & exported,
                            wildcards.resolver.complete(*wildcards.located[id(target)]), ctx.unsafe)
    line = lines.line(target.lineno).rstrip("\r\n")
    indent = line[:len(line) - len(line.lstrip())]
    single = f"from {module} import {', '.join(names)}"
    comment = line[line.index("#"):] if "#" in line[target.col_offset:] else ""
    if len(indent + single) + (2 + len(comment) if comment else 0) <= limit:
        code = single + "\n"
    else:
        code = f"from {module} import (\n" + "".join(f"    {n},\n" for n in names) + ")\n"
    new = cst.parse_statement(code).body[0]

    def rewrite(node: cst.ImportFrom) -> cst.ImportFrom:
        if not isinstance(node.names, cst.ImportStar):
            raise NotFixable("the import at this line is not a wildcard")
        return node.with_changes(names=new.names, lpar=new.lpar, rpar=new.rpar)

    shown = ", ".join(names) if len(names) <= 4 else ", ".join(names[:4]) + f" and {len(names) - 4} more"
    if safety == "unsafe":
        described[i] = ((f"`from {module} import *` -> `from {module} import {shown}` (unsafe: only the names "
                         "this file uses; code that reads its namespace loses the others)"), "unsafe")
    else:
        described[i] = (f"`from {module} import *` -> `from {module} import {shown}` (every name the wildcard "
                        "binds)", None)
    return Target(cst.ImportFrom, finding.line, None, rewrite, node_start, code_of)


# Naming every name a wildcard binds keeps the module's namespace exactly; past this many names the list
# is more noise than the wildcard it replaces, and only the unsafe, narrowed rewrite is offered.
MAX_SAFE_NAMES = 30


def _choose(module: str, exported: frozenset[str], needed: set[str], complete: bool,
            unsafe: bool) -> tuple[list[str], str]:
    """The names to import and the fix's safety. A wildcard binds every name it exports, and other code may
    read them from this module's namespace — `from this import name`, Django reading a settings module,
    pytest collecting fixtures a conftest pulled in, a package re-exporting — so only importing all of them
    keeps behaviour (safe). Importing just the names this file uses is the tidier rewrite, but unsafe."""
    if not exported:
        raise NotFixable(f"{module} binds no names through a wildcard: the import only runs the module")
    if complete and exported <= needed:
        return sorted(exported), "safe"
    if unsafe and needed:
        return sorted(needed), "unsafe"
    if not complete:
        why = f"{module} may bind names at run time, so not all of its names can be listed"
    elif len(exported) > MAX_SAFE_NAMES:
        why = f"{module} binds {len(exported)} names, too many to list"
    else:
        return sorted(exported), "safe"
    if not needed:
        raise NotFixable(f"{why}, and the file uses none of them itself; its namespace may still be read "
                         "(fixtures, settings, re-exports): delete the import only if nothing does")
    raise NotFixable(f"{why}; `--unsafe-fixes` imports just the {len(needed)} this file uses (unsafe: code "
                     "that reads this module's namespace loses the others)")
