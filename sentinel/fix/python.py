"""Python fixes with libcst (formatting and comments kept): bare ``except:`` (SEN301) and ``eval`` (SEN303).

A fixer gets every finding of its rule in a file at once and rewrites them all from one parse of the file
(:func:`rewrite_many`); each rewrite is a span of the checked text, so each fix is also known alone (what
SARIF and review suggestions show)."""

from __future__ import annotations

import ast
import builtins
from typing import Callable, Mapping, NamedTuple

import libcst as cst
from libcst.metadata import CodePosition, MetadataWrapper, PositionProvider

from sentinel.fix.context import BOM, FixContext, python_tree
from sentinel.fix.model import NotFixable, Outcome
from sentinel.fix.splice import Lines, Span, trimmed


def parse(text: str) -> cst.Module:
    try:
        return cst.parse_module(text[1:] if text.startswith(BOM) else text)
    except cst.ParserSyntaxError as exc:
        raise NotFixable(f"libcst cannot parse the file: {exc.message}") from None


def unparse(text: str, module: cst.Module) -> str:
    return (BOM if text.startswith(BOM) else "") + module.code


def module_bindings(tree: ast.AST) -> set[str]:
    """Every name the module binds anywhere (any scope): a builtin it rebinds is not the builtin."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
    return bound


class Target(NamedTuple):
    """Rewrite the node of `kind` that starts at `line` (and `column`, 1-based, when known). A rewrite changes
    one stretch of its node: `start` says where that stretch begins (given the tree's positions) and `code`
    renders it, for the node as it is and as rewritten."""

    kind: type
    line: int
    column: int | None
    rewrite: Callable[[cst.CSTNode], cst.CSTNode]  # may raise NotFixable
    start: Callable[[cst.CSTNode, Mapping], CodePosition]
    code: Callable[[cst.CSTNode], str]


_RENDER = cst.Module(body=[])


def code_of(node: cst.CSTNode) -> str:
    """A node's own source (a statement without its leading lines' indentation)."""
    return _RENDER.code_for_node(node)


def node_start(node: cst.CSTNode, pos: Mapping) -> CodePosition:
    return pos[node].start


def rewrite_many(text: str, targets: list[Target]) -> list[Span | NotFixable]:
    """Every target's rewrite from one parse of `text` and one pass for positions: for each, the span of
    `text` it replaces (what applying it alone does), or why it was not rewritten. Only the stretch a rewrite
    changes is rendered, never the whole file again (rewriting and printing the file once per finding made
    planning quadratic: 600 bare excepts took 346 s)."""
    bom = 1 if text.startswith(BOM) else 0
    module = parse(text)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    by_line: dict[int, list[int]] = {}
    for i, t in enumerate(targets):
        by_line.setdefault(t.line, []).append(i)
    kinds = tuple({t.kind for t in targets})
    found: dict[int, cst.CSTNode] = {}
    for node, where in positions.items():
        if not isinstance(node, kinds):
            continue
        for i in by_line.get(where.start.line, ()):
            t = targets[i]
            if i not in found and isinstance(node, t.kind) and (t.column is None or where.start.column + 1 == t.column):
                found[i] = node
    lines = Lines(text[bom:])
    results: list[Span | NotFixable] = []
    for i, t in enumerate(targets):
        node = found.get(i)
        if node is None:
            results.append(NotFixable(f"no {t.kind.__name__} found at line {t.line}"))
            continue
        try:
            new = t.code(t.rewrite(node))
        except NotFixable as exc:
            results.append(exc)
            continue
        at = t.start(node, positions)
        old = t.code(node)
        begin = lines.start(at.line) + at.column + bom
        if text[begin:begin + len(old)] != old:
            results.append(NotFixable(f"the code at line {t.line} is not where its parse places it"))
            continue
        results.append(trimmed(text, begin, begin + len(old), new))
    return results


def python_facts(text: str, ctx: FixContext) -> tuple[ast.Module, set[str]]:
    """(the file's AST, every name it binds), read once for all of its fixes."""
    def compute():
        tree = python_tree(text)
        if tree is None:
            raise NotFixable("the file does not parse")
        return tree, module_bindings(tree)

    return ctx.memo("python", compute)


def outcomes(results: list, describe: Callable[[int], tuple]) -> list:
    """Outcome (or the reason not) of each target; `describe(i)` gives (description[, safety[, imports]])."""
    out = []
    for i, result in enumerate(results):
        if isinstance(result, NotFixable):
            out.append(result)
            continue
        description, *rest = describe(i)
        safety = rest[0] if rest else None
        imports = rest[1] if len(rest) > 1 else frozenset()
        out.append(Outcome(spans=[result], description=description, safety=safety, imports=imports))
    return out


# --- SEN301 bare except -------------------------------------------------------------------------------

def _passes_on(handler: cst.ExceptHandler) -> bool:
    """May the handler hand what it caught on — a `raise` of any kind, a re-raise helper (`with
    safe_reraise():`, `six.reraise(...)`), `sys.exc_info()` / `sys.exception()` — in its own code (not a
    nested function or class)? Then it is cleanup or translation that must also run on Ctrl-C, and only
    `BaseException` keeps its behaviour."""
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Raise(self, node: cst.Raise) -> bool:
            nonlocal found
            found = True
            return False

        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            func = node.func
            if isinstance(func, cst.Attribute):
                name = func.attr.value
                of_sys = isinstance(func.value, cst.Name) and func.value.value == "sys"
            elif isinstance(func, cst.Name):
                name, of_sys = func.value, True  # `from sys import exc_info`
            else:
                return
            if "reraise" in str(name).lower() or (of_sys and name in ("exc_info", "exception")):
                found = True

        def visit_FunctionDef(self, node) -> bool:
            return False

        def visit_ClassDef(self, node) -> bool:
            return False

        def visit_Lambda(self, node) -> bool:
            return False

    handler.body.visit(Finder())
    return found


def _header(node: cst.ExceptHandler) -> str:
    """An except clause's own text, from `except` to its colon (not its body, which may hold other handlers)."""
    kind = code_of(node.type) if node.type is not None else ""
    name = code_of(node.name) if node.name is not None else ""
    return f"except{node.whitespace_after_except.value}{kind}{name}{node.whitespace_before_colon.value}:"


def bare_except(text: str, findings: list, ctx: FixContext) -> list:
    _, bindings = python_facts(text, ctx)
    shadowed = bindings & {"Exception", "BaseException"}
    chosen: dict[int, str] = {}

    def target(i: int, finding) -> Target:
        def rewrite(node: cst.ExceptHandler) -> cst.ExceptHandler:
            if node.type is not None:
                raise NotFixable("the handler at this line already names an exception type")
            name = "BaseException" if _passes_on(node) else "Exception"
            if name in shadowed:
                raise NotFixable(f"the module rebinds the name {name}")
            chosen[i] = name
            return node.with_changes(type=cst.Name(name), whitespace_after_except=cst.SimpleWhitespace(" "))

        return Target(cst.ExceptHandler, finding.line, finding.column, rewrite, node_start, _header)

    results = rewrite_many(text, [target(i, f) for i, f in enumerate(findings)])

    def describe(i: int) -> tuple[str]:
        if chosen.get(i) == "BaseException":
            return ("`except:` -> `except BaseException:` (the handler hands the exception on: same behaviour, "
                    "stated)",)
        return ("`except:` -> `except Exception:` (no longer catches KeyboardInterrupt, SystemExit and task "
                "cancellation)",)

    return outcomes(results, describe)


# --- SEN303 eval -> ast.literal_eval (unsafe: only literals evaluate afterwards) ----------------------

def _imports_ast(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.Import) and any(a.name == "ast" and a.asname is None for a in node.names)
               for node in tree.body)


def _callee(node: cst.Call, pos: Mapping) -> CodePosition:
    return pos[node.func].start


def _callee_code(node: cst.Call) -> str:
    return code_of(node.func)


def literal_eval(text: str, findings: list, ctx: FixContext) -> list:
    tree, bindings = python_facts(text, ctx)
    has_import = _imports_ast(tree)
    if not has_import and "ast" in bindings:
        raise NotFixable("the name `ast` is bound to something else in this module")
    if "eval" in bindings or not hasattr(builtins, "eval"):
        raise NotFixable("`eval` is rebound in this module")

    def rewrite(node: cst.Call) -> cst.Call:
        if not (isinstance(node.func, cst.Name) and node.func.value == "eval"):
            raise NotFixable("only `eval(...)` has a literal-only replacement (not `exec`)")
        if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
            raise NotFixable("eval() with globals/locals has no literal-only replacement")
        return node.with_changes(func=cst.Attribute(value=cst.Name("ast"), attr=cst.Name("literal_eval")))

    results = rewrite_many(text, [Target(cst.Call, f.line, f.column, rewrite, _callee, _callee_code)
                                  for f in findings])
    needed = frozenset() if has_import else frozenset({"ast"})
    return outcomes(results, lambda i: ("`eval(x)` -> `ast.literal_eval(x)` (unsafe: only Python literals are "
                                        "evaluated afterwards)", None, needed))


def add_imports(text: str, modules: set[str]) -> str:
    """`import X` for each module the text does not import yet, placed with the module's imports."""
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor

    context = CodemodContext()
    for name in sorted(modules):
        AddImportsVisitor.add_needed_import(context, name)
    return unparse(text, AddImportsVisitor(context).transform_module(parse(text)))
