"""Python on its AST: banned imports, destructive filesystem/process/SQL operations and writes to protected paths."""

from __future__ import annotations

import ast
import posixpath
import re

from sentinel.checks.base import FileContext, walk
from sentinel.checks.jail.paths import protected_write_target
from sentinel.checks.jail.rules import SEN101, SEN103, SEN104, SEN105, SEN108
from sentinel.checks.jail.settings import _PROBES_SQL, _PROBES_WRITE, _lazy, _Out, _Settings, probe
from sentinel.checks.jail.shell import _describe_words, _shell_findings

_FS_CALLS = {
    "shutil.rmtree": "deletes a directory tree", "os.remove": "deletes a file", "os.unlink": "deletes a file",
    "os.rmdir": "removes a directory", "os.removedirs": "removes directories",
    "pathlib.Path.unlink": "deletes a file", "pathlib.Path.rmdir": "removes a directory",
}
_KILL_CALLS = {"os.kill", "os.killpg"}
_SHELL_CALLS = {"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput",
                "asyncio.create_subprocess_shell"}
_EXEC_CALLS = {"subprocess.run", "subprocess.call", "subprocess.Popen", "subprocess.check_call",
               "subprocess.check_output"}
_SQL_METHODS = {"execute", "executemany", "executescript"}
_SQL_TEXT_FUNCS = {"text", "sqlalchemy.text", "sqlalchemy.sql.text", "sqlalchemy.sql.expression.text"}
_OPEN_FUNCS = {"open", "io.open", "builtins.open", "codecs.open"}
_COPY_FUNCS = {"shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree", "shutil.move"}
_IMPORT_FUNCS = {"__import__", "builtins.__import__", "importlib.import_module", "importlib.__import__"}
_WRITE_MODE = _lazy(r"[rbtU]*[wax+][rwaxbt+]*")
_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}
_PATH_CTORS = {"Path", "PurePath", "PosixPath", "WindowsPath", "PurePosixPath", "PureWindowsPath"}
# Call names worth resolving; everything else is skipped before any work.
# Schema and ORM calls that destroy data wholesale (SQLAlchemy, Flask-SQLAlchemy, Django).
_ORM_DESTRUCTIVE = {"drop_all", "drop", "delete"}
_SQLA_DELETE = {"sqlalchemy.delete", "sqlalchemy.sql.delete", "sqlalchemy.sql.expression.delete"}
_BIND_LIKE = _lazy(r"(?i)engine|bind|conn|connection|session|\bdb\b|database")
_NARROWING = frozenset({"filter", "filter_by", "where", "get", "exclude", "limit", "first", "one", "join"})
_INTERESTING = ({q.rsplit(".", 1)[-1] for q in (*_FS_CALLS, *_KILL_CALLS, *_SHELL_CALLS, *_EXEC_CALLS,
                                                 *_OPEN_FUNCS, *_COPY_FUNCS, *_IMPORT_FUNCS)}
                | _SQL_METHODS | {"text", "write_text", "write_bytes", "create_subprocess_exec"} | _ORM_DESTRUCTIVE)
# Receivers whose no-argument .unlink() is shared memory / IPC, not a file.
_NOT_A_PATH = _lazy(r"(?i)shm|shared_?mem|semaphore|\bsem\b|mqueue|message_?queue")
_UNKNOWN = "\0"


def _check_python(ctx: FileContext, s: _Settings, out: _Out, scope: str) -> None:
    # A banned name in the file: its imports are read on the AST, like every other import (an import statement
    # may name the module on a line before the changed one it continues onto).
    imports = _may_import_banned(ctx.scan_text, s.banned_imports)
    hit = imports or ctx.tree_in_hand or _probes_hit(ctx, s, scope)
    if not hit:
        return
    if ctx.tree is None:
        _python_lexical(ctx, s, out)
        return
    aliases = _aliases(ctx)
    if imports:
        for node in ctx.nodes(ast.Import, ast.ImportFrom):
            line = _line_for(ctx, node)
            if line is not None:
                _check_import_node(node, line, s, out)
    for node in ctx.nodes(ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute):
            tail = func.attr
        elif isinstance(func, ast.Name):
            tail = func.id
            if tail not in _INTERESTING and tail in aliases:  # from shutil import rmtree as nuke
                tail = aliases[tail].rsplit(".", 1)[-1]
        else:
            continue
        if tail not in _INTERESTING:
            continue
        line = _line_for(ctx, node)
        if line is None and not (tail in _SQL_METHODS or tail == "text"):
            continue
        _check_call(ctx, s, node, tail, qualname(func, aliases), line, aliases, out)


def _may_import_banned(text: str, banned: tuple[str, ...]) -> bool:
    """Could the text import a banned module? `import a.b`, `from a.b import x` name it whole; `from a import b`
    names its parent and its last part."""
    return any(b in text or ("." in b and b.rsplit(".", 1)[1] in text) for b in banned)


def _probes_hit(ctx: FileContext, s: _Settings, scope: str) -> bool:
    """Could a call in scope be destructive or write a protected path? Keyword probes over the scope's text, so
    that a change with nothing suspicious never parses the file."""
    if probe(scope, s.py_probes):
        return True
    if probe(scope, _PROBES_WRITE):
        text = ctx.scan_text
        if s.write_fragments is None or any(f in text for f in s.write_fragments):
            return True
    if "database" in s.classes:
        if probe(ctx.lowered(scope), _PROBES_SQL):
            return True
        if scope is not ctx.scan_text and (".execute" in scope or "text(" in scope):
            # an .execute(sql) line added where sql is a destructive literal defined elsewhere in the file
            return probe(ctx.lowered(ctx.scan_text), _PROBES_SQL)
    return False


def _line_for(ctx: FileContext, node: ast.AST) -> int | None:
    """The line to report a node on: its first line if in scope, else its first in-scope line."""
    start = node.lineno
    if ctx.selected(start):
        return start
    end = min(getattr(node, "end_lineno", None) or start, start + 200)
    for n in range(start + 1, end + 1):
        if ctx.selected(n):
            return n
    return None


def _aliases(ctx: FileContext) -> dict[str, str]:
    """Local name -> qualified name for every import in the file."""
    out: dict[str, str] = {}
    for node in ctx.nodes(ast.Import, ast.ImportFrom):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
                else:
                    top = a.name.split(".", 1)[0]
                    out[top] = top
        elif node.module and not node.level:
            for a in node.names:
                if a.name != "*":
                    out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def qualname(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """Dotted name of a Name/Attribute chain with its root resolved through the file's imports."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(aliases.get(node.id, node.id))
    parts.reverse()
    return ".".join(parts)


def banned_module(name: str, banned: tuple[str, ...], sep: str = ".") -> str | None:
    for b in banned:
        if name == b or name.startswith(b + sep):
            return b
    return None


def _check_import_node(node: ast.AST, line: int, s: _Settings, out: _Out) -> None:
    col = node.col_offset + 1
    if isinstance(node, ast.Import):
        for a in node.names:
            b = banned_module(a.name, s.banned_imports)
            if b:
                out.add(SEN101, line, _import_msg(a.name, b), column=col)
        return
    if node.level or not node.module:
        return  # relative imports stay inside the project
    b = banned_module(node.module, s.banned_imports)
    if b:
        out.add(SEN101, line, _import_msg(node.module, b), column=col)
        return
    for a in node.names:
        full = f"{node.module}.{a.name}"
        b = banned_module(full, s.banned_imports)
        if b:
            out.add(SEN101, line, _import_msg(full, b), column=col)


def _import_msg(name: str, banned: str) -> str:
    return f"imports banned module '{name}'" if name == banned else f"imports '{name}' from banned module '{banned}'"


def _short(node: ast.AST, limit: int = 60) -> str:
    try:
        text = ast.unparse(node)
    except (ValueError, TypeError, AttributeError, RecursionError):
        return "..."
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _arg(node: ast.Call, index: int, *names: str) -> ast.AST | None:
    if len(node.args) > index and not any(isinstance(a, ast.Starred) for a in node.args[: index + 1]):
        return node.args[index]
    for kw in node.keywords:
        if kw.arg in names:
            return kw.value
    return None


def _check_call(ctx: FileContext, s: _Settings, node: ast.Call, tail: str, q: str | None, line: int | None,
                aliases: dict[str, str], out: _Out) -> None:
    col = node.col_offset + 1
    classes = s.classes
    if line is not None and s.banned_imports and q in _IMPORT_FUNCS:
        target = _arg(node, 0, "name")
        if isinstance(target, ast.Constant) and isinstance(target.value, str) and not target.value.startswith("."):
            b = banned_module(target.value, s.banned_imports)
            if b:
                out.add(SEN101, line, _import_msg(target.value, b) + f" via {q}()", column=col)
        return
    if "database" in classes and ((tail in _SQL_METHODS and isinstance(node.func, ast.Attribute))
                                  or q in _SQL_TEXT_FUNCS):
        _check_sql_call(ctx, node, q or tail, line, aliases, out)
        return
    if "database" in classes and tail in _ORM_DESTRUCTIVE:
        if line is not None:
            what = _orm_destruction(ctx, node, tail, q)
            if what:
                out.add(SEN105, line, what, column=col)
        return
    if line is None:
        return
    if "filesystem" in classes:
        if q in _FS_CALLS:
            target = _arg(node, 0, "path", "self")
            where = f": {_short(target)}" if target is not None else ""
            out.add(SEN103, line, f"{q.replace('pathlib.', '')}() {_FS_CALLS[q]}{where}", column=col)
            return
        if (tail in ("unlink", "rmdir") and isinstance(node.func, ast.Attribute) and not node.args
                and all(k.arg == "missing_ok" for k in node.keywords)):
            receiver = _short(node.func.value)
            if not _NOT_A_PATH.search(receiver):
                what = "deletes the file" if tail == "unlink" else "removes the directory"
                out.add(SEN103, line, f".{tail}() {what} {receiver}", column=col)
                return
    if "process" in classes:
        if q in _KILL_CALLS:
            sig = _arg(node, 1, "signal", "sig")
            if isinstance(sig, ast.Constant) and sig.value == 0:
                return  # signal 0 only probes whether the process exists
            pid = _arg(node, 0, "pid", "pgid")
            out.add(SEN104, line, f"{q}() sends {_short(sig, 30) if sig is not None else 'a signal'} to "
                                  f"{_short(pid, 30) if pid is not None else 'a process'}", column=col)
            return
        if q in _SHELL_CALLS or q in _EXEC_CALLS or q == "asyncio.create_subprocess_exec":
            desc = _python_command(ctx, node, q)
            if desc:
                cmd, why = desc
                out.add(SEN104, line, f"{q}() runs `{cmd.replace(_UNKNOWN, '<expr>')}`: {why}", column=col)
                return
    _check_write(s, node, tail, q, line, aliases, out)


def _python_command(ctx: FileContext, node: ast.Call, q: str) -> tuple[str, str] | None:
    if q == "asyncio.create_subprocess_exec":
        return _describe_words([_str_value(a, ctx, 1) or _UNKNOWN for a in node.args], any_target=True)
    cmd = _arg(node, 0, "args", "cmd", "command")
    if isinstance(cmd, ast.Name):
        cmd = _assigned_value(ctx, cmd)[0] or cmd
    if isinstance(cmd, (ast.List, ast.Tuple)):
        words = [(_str_value(e, ctx, 1) if not isinstance(e, ast.Starred) else None) or _UNKNOWN for e in cmd.elts]
        # ["bash", "-c", "rm -rf x"] runs the string through a shell
        if len(words) >= 3 and posixpath.basename(words[0]) in ("sh", "bash", "zsh", "dash") and words[1] == "-c":
            return _describe_shell_text(words[2])
        return _describe_words(words, any_target=True)
    text = _str_value(cmd, ctx, 0)
    return _describe_shell_text(text) if text else None


def _describe_shell_text(text: str) -> tuple[str, str] | None:
    found = _shell_findings(text, any_target=True)
    return found[0][0] if found else None


def _str_value(node: ast.AST | None, ctx: FileContext, depth: int, origins: list | None = None) -> str | None:
    """The string a literal-ish expression evaluates to, runtime parts as "\\0"; None if not string-like."""
    if node is None or depth > 4:
        return None
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else _UNKNOWN
                       for v in node.values)
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Add):
            left = _str_value(node.left, ctx, depth + 1, origins)
            right = _str_value(node.right, ctx, depth + 1, origins)
            if left is None and right is None:
                return None
            return (left if left is not None else _UNKNOWN) + (right if right is not None else _UNKNOWN)
        if isinstance(node.op, ast.Mod):
            return _str_value(node.left, ctx, depth + 1, origins)
        return None
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "format":
            return _str_value(func.value, ctx, depth + 1, origins)
        tail = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if tail == "text" and node.args:
            return _str_value(node.args[0], ctx, depth + 1, origins)
        return None
    if isinstance(node, ast.Name):
        value, assign = _assigned_value(ctx, node)
        if value is None:
            return None
        if origins is not None:
            origins.append(assign)
        return _str_value(value, ctx, depth + 1, origins)
    return None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef)


def _assigned_value(ctx: FileContext, name: ast.Name) -> tuple[ast.AST | None, ast.AST | None]:
    """The value last assigned to ``name`` before its use, in the enclosing function, else at module level."""
    scope = next((a for a in ctx.ancestors(name) if isinstance(a, _SCOPES)), None)
    # ast.walk's nodes in its order (the first of two assignments on one line wins), but the context and
    # operator leaves, which no assignment is: a function's walk per SQL call is twice as fast.
    candidates = walk(scope) if scope is not None else iter(getattr(ctx.tree, "body", ()))
    best = _last_assignment(candidates, name)
    if best is None and scope is not None:
        best = _last_assignment(iter(getattr(ctx.tree, "body", ())), name)
    return (best.value, best) if best is not None else (None, None)


def _last_assignment(nodes, name: ast.Name):
    best = None
    for n in nodes:
        if n.__class__ is ast.Assign:
            targets = n.targets
        elif n.__class__ is ast.AnnAssign and n.value is not None:
            targets = [n.target]
        else:
            continue
        if (n.lineno < name.lineno and (best is None or n.lineno > best.lineno)
                and any(isinstance(t, ast.Name) and t.id == name.id for t in targets)):
            best = n
    return best


# --- SQL -----------------------------------------------------------------------
_SQL_COMMENTS = _lazy(r"--[^\n]*|/\*.*?\*/", re.DOTALL)
_SQL_STRINGS = _lazy(r"'(?:''|[^'])*'")
_SQL_CTE = _lazy(r"^\s*WITH\b.*\)\s*(?=DELETE\b)", re.IGNORECASE | re.DOTALL)
_SQL_DESTRUCTIVE = _lazy(
    r"\s*(?:(?P<drop>DROP\s+(?:TABLE|DATABASE|SCHEMA))\b|(?P<trunc>TRUNCATE)\b(?!\s*\()"
    r"|(?P<delete>DELETE\s+FROM)\s+(?P<table>[^\s;]+)(?P<rest>.*))", re.IGNORECASE | re.DOTALL)
_WHERE = _lazy(r"\bWHERE\b", re.IGNORECASE)


def destructive_sql(sql: str) -> str | None:
    """What is destructive about a SQL text (runtime parts as "\\0"), or None."""
    sql = _SQL_STRINGS.sub("''", _SQL_COMMENTS.sub(" ", sql))
    for stmt in sql.split(";"):
        m = _SQL_DESTRUCTIVE.match(_SQL_CTE.sub("", stmt))
        if not m:
            continue
        if m.group("drop"):
            return " ".join(m.group("drop").upper().split())
        if m.group("trunc"):
            return "TRUNCATE"
        rest = m.group("rest")
        if not _WHERE.search(rest) and _UNKNOWN not in rest:
            return "DELETE without WHERE"
    return None


def _sql_arguments(ctx: FileContext) -> set[int]:
    """ids of the expressions passed directly to an .execute()-like call in this file (a set
    built once per file: asking each text() call for its parent would walk the whole tree)."""
    found = ctx.memo.get("jail.sql_arguments")
    if found is None:
        found = ctx.memo["jail.sql_arguments"] = set()
        for call in ctx.nodes(ast.Call):
            if isinstance(call.func, ast.Attribute) and call.func.attr in _SQL_METHODS:
                found.update(id(a) for a in call.args)
                found.update(id(k.value) for k in call.keywords)
    return found


def _chain(node: ast.AST) -> list[str]:
    """Method names called along a receiver chain, innermost first: `s.query(U).filter(x).delete` ->
    ["query", "filter"]."""
    names: list[str] = []
    while isinstance(node, (ast.Call, ast.Attribute)):
        if isinstance(node, ast.Call):
            node = node.func
            if isinstance(node, ast.Attribute):
                names.append(node.attr)
                node = node.value
        else:
            node = node.value
    return names[::-1]


def _orm_destruction(ctx: FileContext, node: ast.Call, tail: str, q: str | None) -> str | None:
    """What a schema or ORM call destroys, or None when it is not destructive (a filtered delete, a DataFrame's
    .drop(columns=...), a dict's .delete...)."""
    func = node.func
    if tail == "drop_all" and isinstance(func, ast.Attribute):
        return f"{_short(func)}() drops every table of the schema"
    if tail == "drop" and isinstance(func, ast.Attribute):
        kw = {k.arg for k in node.keywords}
        first = node.args[0] if node.args else None
        if "bind" in kw or "checkfirst" in kw or (first is not None and len(node.args) <= 2
                                                   and isinstance(first, (ast.Name, ast.Attribute))
                                                   and _BIND_LIKE.search(_short(first))):
            return f"{_short(func)}({_short(first) if first is not None else ''}) drops the table"
        return None
    if tail == "delete":
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
            chain = _chain(func.value)
            if "query" in chain and not _NARROWING.intersection(chain):
                return f"{_short(func)}() deletes every row of the query (no filter)"
            if "objects" in ast.unparse(func.value) and chain[-1:] == ["all"]:
                return f"{_short(func)}() deletes every row of the model"
            return None
        if q in _SQLA_DELETE:
            parent = ctx.parent(node)
            if not (isinstance(parent, ast.Attribute) and parent.attr in ("where", "filter", "filter_by")):
                return f"{_short(node)} deletes every row (no .where())"
    return None


def _check_sql_call(ctx: FileContext, node: ast.Call, name: str, line: int | None, aliases, out: _Out) -> None:
    if name not in _SQL_METHODS and id(node) in _sql_arguments(ctx):
        return  # conn.execute(text("...")): reported once, for the execute call
    arg = _arg(node, 0, "sql", "statement", "operation", "sql_script", "text")
    origins: list = []
    sql = _str_value(arg, ctx, 0, origins)
    if not sql:
        return
    what = destructive_sql(sql)
    if not what:
        return
    if line is None:
        line = next((o.lineno for o in origins if ctx.selected(o.lineno)), None)
        if line is None:
            return
    label = f".{name}()" if name in _SQL_METHODS else f"{name}()"
    out.add(SEN105, line, f"{label} runs destructive SQL: {what}", column=node.col_offset + 1)


# --- protected writes ---------------------------------------------------------------
def _check_write(s: _Settings, node: ast.Call, tail: str, q: str | None, line: int, aliases, out: _Out) -> None:
    target = None
    if q in _OPEN_FUNCS:
        mode = _arg(node, 1, "mode")
        if _is_write_mode(mode):
            target = _arg(node, 0, "file")
    elif q == "os.open":
        flags = _arg(node, 1, "flags")
        if flags is not None and any((isinstance(n, ast.Attribute) and n.attr in _WRITE_FLAGS)
                                     or (isinstance(n, ast.Name) and n.id in _WRITE_FLAGS) for n in ast.walk(flags)):
            target = _arg(node, 0, "path")
    elif q in _COPY_FUNCS:
        target = _arg(node, 1, "dst")
    elif isinstance(node.func, ast.Attribute) and (
            tail in ("write_text", "write_bytes") or (tail == "open" and _is_write_mode(_arg(node, 0, "mode")))):
        target = node.func.value
    if target is None:
        return
    lit = literal_path(target, aliases)
    if lit is None:
        return
    why = protected_write_target(lit, _UNKNOWN not in lit, s, out.ctx.config)
    if why:
        shown = lit.replace(_UNKNOWN, "…")
        out.add(SEN108, line, f"writes to {why}: {shown}", column=node.col_offset + 1)


def _is_write_mode(mode: ast.AST | None) -> bool:
    return (isinstance(mode, ast.Constant) and isinstance(mode.value, str)
            and _WRITE_MODE.fullmatch(mode.value) is not None)


def literal_path(node: ast.AST, aliases: dict[str, str], depth: int = 0) -> str | None:
    """The path an expression names, with "~" for the home directory and "\\0" for runtime parts;
    None when nothing about it is literal."""
    parts = _path_parts(node, aliases, depth)
    if parts is None or all(p == _UNKNOWN for p in parts):
        return None
    return "/".join(p for p in parts if p != "") or None


def _path_parts(node: ast.AST, aliases: dict[str, str], depth: int) -> list[str] | None:
    if depth > 6:
        return [_UNKNOWN]
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return ["".join(v.value if isinstance(v, ast.Constant) else _UNKNOWN for v in node.values)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Add)):
        left = _path_parts(node.left, aliases, depth + 1) or [_UNKNOWN]
        right = _path_parts(node.right, aliases, depth + 1) or [_UNKNOWN]
        if isinstance(node.op, ast.Add):
            return [left[-1] + right[0]] if len(left) == 1 and len(right) == 1 else left + right
        return left + right
    if isinstance(node, ast.Subscript) and qualname(node.value, aliases) == "os.environ":
        return ["~"] if isinstance(node.slice, ast.Constant) and node.slice.value == "HOME" else [_UNKNOWN]
    if not isinstance(node, ast.Call):
        return [_UNKNOWN]
    func = node.func
    q = qualname(func, aliases) or ""
    tail = q.rsplit(".", 1)[-1] if q else (func.attr if isinstance(func, ast.Attribute) else "")
    args = [a for a in node.args if not isinstance(a, ast.Starred)]
    if tail in _PATH_CTORS or q in ("os.path.join", "posixpath.join", "ntpath.join"):
        if not args:
            return ["."]
        out: list[str] = []
        for a in args:
            out.extend(_path_parts(a, aliases, depth + 1) or [_UNKNOWN])
        return out
    if q in ("pathlib.Path.home", "Path.home") or (tail == "home" and q.endswith("Path.home")):
        return ["~"]
    if q in ("os.getenv", "os.environ.get"):
        first = args[0] if args else None
        return ["~"] if isinstance(first, ast.Constant) and first.value == "HOME" else [_UNKNOWN]
    if q in ("os.path.expanduser", "os.path.abspath", "os.path.realpath", "os.path.normpath", "os.fspath",
             "str") and args:
        return _path_parts(args[0], aliases, depth + 1)
    if isinstance(func, ast.Attribute) and func.attr in ("expanduser", "resolve", "absolute"):
        return _path_parts(func.value, aliases, depth + 1)
    if isinstance(func, ast.Attribute) and func.attr == "joinpath":
        out = _path_parts(func.value, aliases, depth + 1) or [_UNKNOWN]
        for a in args:
            out = out + (_path_parts(a, aliases, depth + 1) or [_UNKNOWN])
        return out
    return [_UNKNOWN]


# --- Python that does not parse: the lexical subset ------------------------------------
_LEX_IMPORT = _lazy(r"(?:^|[;:])\s*import\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)")
_LEX_FROM = _lazy(r"(?:^|[;:])\s*from\s+([\w.]+)\s+import\b[\s(]*([\w\s,]*)")
_LEX_DYN_IMPORT = _lazy(r"\b(?:__import__|import_module)\s*\(\s*(['\"])")
_LEX_CALL = _lazy(r"\b(shutil\.rmtree|os\.(?:remove|unlink|rmdir|removedirs|kill|killpg))\s*\(")


def _python_lexical(ctx: FileContext, s: _Settings, out: _Out) -> None:
    """For a file that does not parse: import statements and the unmistakable calls, from the lexer's code
    lines (strings and comments already blanked)."""
    lexed = ctx.lexed
    for n in ctx.selected_lines():
        code = lexed.code_line(n)
        if s.banned_imports and "import" in code and _may_import_banned(ctx.line(n), s.banned_imports):
            names: list[str] = []
            for m in _LEX_IMPORT.finditer(code):
                names.extend(p.split()[0] for p in m.group(1).split(",") if p.split())
            for m in _LEX_FROM.finditer(code):
                module = m.group(1)
                if module.startswith("."):
                    continue  # relative imports stay inside the project
                # as on the AST: the module itself if banned, else each name it gives that is a banned module
                names.extend([module] if banned_module(module, s.banned_imports) else
                             [f"{module}.{p.split()[0]}" for p in m.group(2).split(",") if p.split()])
            names.extend(_quoted_at(code, ctx.line(n), m.end() - 1) for m in _LEX_DYN_IMPORT.finditer(code))
            for name in names:
                b = name and not name.startswith(".") and banned_module(name, s.banned_imports)
                if b:
                    out.add(SEN101, n, _import_msg(name, b), column=len(code) - len(code.lstrip()) + 1)
        for m in _LEX_CALL.finditer(code):
            q = m.group(1)
            rule = SEN103 if q in _FS_CALLS else SEN104
            if ("filesystem" if rule is SEN103 else "process") in s.classes:
                verb = _FS_CALLS.get(q, "sends a signal")
                out.add(rule, n, f"{q}() {verb}", column=m.start() + 1)


def _quoted_at(code: str, raw: str, quote_col: int) -> str:
    """The raw text of the string literal whose opening quote is at ``quote_col`` of the blanked code line."""
    quote = code[quote_col]
    end = code.find(quote, quote_col + 1)
    return raw[quote_col + 1:end] if end > quote_col else ""
