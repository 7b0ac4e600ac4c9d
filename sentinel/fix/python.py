"""Python fixes with libcst (formatting and comments kept): bare ``except:`` (SEN301) and ``eval`` (SEN303)."""

from __future__ import annotations

import ast
import builtins

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from sentinel.fix.context import BOM, FixContext, python_tree
from sentinel.fix.model import NotFixable


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


class _AtLine(cst.CSTTransformer):
    """Rewrites the one node of a type that starts at a line (and column, when known)."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, kind: type, line: int, column: int | None, rewrite):
        super().__init__()
        self.kind, self.line, self.column, self.rewrite = kind, line, column, rewrite
        self.done = 0
        self.reason: str | None = None

    def on_leave(self, original, updated):
        if isinstance(original, self.kind) and not self.done:
            pos = self.get_metadata(PositionProvider, original).start
            if pos.line == self.line and (self.column is None or pos.column + 1 == self.column):
                try:
                    replaced = self.rewrite(updated)
                except NotFixable as exc:
                    self.reason = str(exc)
                    return updated
                self.done += 1
                return replaced
        return updated


def rewrite_at(text: str, kind: type, line: int, column: int | None, rewrite) -> str:
    module = parse(text)
    transformer = _AtLine(kind, line, column, rewrite)
    new = MetadataWrapper(module).visit(transformer)
    if transformer.reason:
        raise NotFixable(transformer.reason)
    if not transformer.done:
        raise NotFixable(f"no {kind.__name__} found at line {line}")
    out = unparse(text, new)
    if python_tree(out) is None:
        raise NotFixable("the fixed file would not parse")
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


def bare_except(text: str, finding, ctx: FixContext) -> tuple[str, str]:
    tree = python_tree(text)
    if tree is None:
        raise NotFixable("the file does not parse")
    shadowed = module_bindings(tree) & {"Exception", "BaseException"}
    chosen: list[str] = []

    def rewrite(node: cst.ExceptHandler) -> cst.ExceptHandler:
        if node.type is not None:
            raise NotFixable("the handler at this line already names an exception type")
        name = "BaseException" if _passes_on(node) else "Exception"
        if name in shadowed:
            raise NotFixable(f"the module rebinds the name {name}")
        chosen.append(name)
        return node.with_changes(type=cst.Name(name), whitespace_after_except=cst.SimpleWhitespace(" "))

    out = rewrite_at(text, cst.ExceptHandler, finding.line, finding.column, rewrite)
    if chosen[0] == "BaseException":
        return out, ("`except:` -> `except BaseException:` (the handler hands the exception on: same behaviour, "
                     "stated)")
    return out, ("`except:` -> `except Exception:` (no longer catches KeyboardInterrupt, SystemExit and task "
                 "cancellation)")


# --- SEN303 eval -> ast.literal_eval (unsafe: only literals evaluate afterwards) ----------------------

def _imports_ast(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.Import) and any(a.name == "ast" and a.asname is None for a in node.names)
               for node in tree.body)


def literal_eval(text: str, finding, ctx: FixContext) -> tuple[str, str]:
    tree = python_tree(text)
    if tree is None:
        raise NotFixable("the file does not parse")
    has_import = _imports_ast(tree)
    if not has_import and "ast" in module_bindings(tree):
        raise NotFixable("the name `ast` is bound to something else in this module")
    if "eval" in module_bindings(tree) or not hasattr(builtins, "eval"):
        raise NotFixable("`eval` is rebound in this module")

    def rewrite(node: cst.Call) -> cst.Call:
        if not (isinstance(node.func, cst.Name) and node.func.value == "eval"):
            raise NotFixable("only `eval(...)` has a literal-only replacement (not `exec`)")
        if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
            raise NotFixable("eval() with globals/locals has no literal-only replacement")
        return node.with_changes(func=cst.Attribute(value=cst.Name("ast"), attr=cst.Name("literal_eval")))

    out = rewrite_at(text, cst.Call, finding.line, finding.column, rewrite)
    if not has_import:
        if ctx.pending_imports is not None:
            ctx.pending_imports.add("ast")
        else:
            out = add_imports(out, {"ast"})
    return out, "`eval(x)` -> `ast.literal_eval(x)` (unsafe: only Python literals are evaluated afterwards)"


def add_imports(text: str, modules: set[str]) -> str:
    """`import X` for each module the text does not import yet, placed with the module's imports."""
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor

    context = CodemodContext()
    for name in sorted(modules):
        AddImportsVisitor.add_needed_import(context, name)
    return unparse(text, AddImportsVisitor(context).transform_module(parse(text)))
