"""placeholder: markers and stub comments in comments only, stub bodies and not-implemented on the AST."""

from __future__ import annotations

import pytest

from sentinel.checks import placeholder
from tests.conftest import codes, gate_new_file

OURS = {"SEN401", "SEN402", "SEN403", "SEN404"}


def found(path: str, content: str, config: dict | None = None) -> list[str]:
    """Our rules' codes at warning or above, from the whole engine (filtering, roles, suppression) running this
    check alone (information-level findings, such as a tracked TODO, are not a reviewer's concern)."""
    verdict = gate_new_file(path, content, config, only_checks=["placeholder"])
    return [f.rule for f in verdict.findings if f.rule in OURS and f.severity.value != "info"]


FIRES = [
    # SEN401 todo-marker
    ("TODO comment in a new .py file", "app.py", "def load():\n    # TODO: handle errors\n    return 1\n", "SEN401"),
    ("FIXME in JavaScript", "app.js", "// FIXME later\nconst x = 1;\n", "SEN401"),
    ("trailing TODO after code", "app.py", "x = compute()  # TODO validate\n", "SEN401"),
    ("XXX marker", "app.py", "# XXX this breaks on empty input\nx = 1\n", "SEN401"),
    ("HACK marker", "app.py", "x = 1  # HACK: sleep until the cache warms\n", "SEN401"),
    ("plural TODOs", "app.py", "# TODOs: retries, backoff\nx = 1\n", "SEN401"),
    ("TODO in a JS block comment", "app.ts", "/*\n * TODO: paginate\n */\nexport const x = 1;\n", "SEN401"),
    ("TODO in shell", "run.sh", "#!/bin/sh\necho hi  # TODO quote this\n", "SEN401"),
    ("TODO in YAML", "ci.yml", "steps:\n  - run: make  # TODO cache deps\n", "SEN401"),
    ("TODO in SQL", "q.sql", "select 1; -- TODO add index\n", "SEN401"),
    ("TODO in Go", "main.go", "package main\n\n// TODO: wire flags\nfunc main() {}\n", "SEN401"),
    # SEN402 not-implemented
    ("raise NotImplementedError in a plain function", "app.py", "def f():\n    raise NotImplementedError\n",
     "SEN402"),
    ("raise NotImplementedError with a message", "app.py",
     "def export(r):\n    raise NotImplementedError('export')\n", "SEN402"),
    ("raise NotImplemented", "app.py", "def f():\n    raise NotImplemented\n", "SEN402"),
    ("method of a plain class", "app.py", "class Exporter:\n    def run(self):\n        raise NotImplementedError()\n",
     "SEN402"),
    ("bare raise in a branch", "app.py",
     "def f(kind):\n    if kind == 'a':\n        return 1\n    raise NotImplementedError\n", "SEN402"),
    ("bare raise in an else", "app.py",
     "def f(kind):\n    if kind == 'a':\n        return 1\n    else:\n        raise NotImplementedError()\n", "SEN402"),
    ("module level", "app.py", "raise NotImplementedError('later')\n", "SEN402"),
    ("async method", "app.py", "class C:\n    async def go(self):\n        raise NotImplementedError\n", "SEN402"),
    ("Rust todo!()", "lib.rs", "fn parse() -> u32 {\n    todo!()\n}\n", "SEN402"),
    ("Rust unimplemented!()", "lib.rs", "fn parse() -> u32 {\n    unimplemented!(\"parse\")\n}\n", "SEN402"),
    ("Kotlin TODO()", "App.kt", "fun parse(): Int = TODO()\n", "SEN402"),
    ("TypeScript not implemented", "app.ts", "function f(): number {\n  throw new Error('Not implemented');\n}\n",
     "SEN402"),
    ("TypeScript quick-fix stub", "app.ts",
     "class A {\n  m(): void {\n    throw new Error(\"Method not implemented.\");\n  }\n}\n", "SEN402"),
    ("C# NotImplementedException", "App.cs", "int F() { throw new NotImplementedException(); }\n", "SEN402"),
    ("Java unsupported", "App.java", "int f() { throw new UnsupportedOperationException(\"Not implemented\"); }\n",
     "SEN402"),
    ("Go panic", "main.go", "package main\n\nfunc f() int {\n\tpanic(\"not implemented\")\n}\n", "SEN402"),
    # SEN403 stub-body
    ("pass body in a new file", "app.py", "def f():\n    pass\n", "SEN403"),
    ("ellipsis body", "app.py", "def f(): ...\n", "SEN403"),
    ("docstring then pass", "app.py", 'def f():\n    """Send the invoice."""\n    pass\n', "SEN403"),
    ("docstring then ellipsis", "app.py", 'def f():\n    """Send the invoice."""\n    ...\n', "SEN403"),
    ("stub method of a plain class", "app.py", "class Mailer:\n    def send(self, to):\n        pass\n", "SEN403"),
    ("ellipsis override in a subclass", "app.py", "class A(Base):\n    def send(self):\n        ...\n", "SEN403"),
    ("async stub", "app.py", "async def fetch(url):\n    pass\n", "SEN403"),
    ("stub test", "tests/test_app.py", "def test_login():\n    pass\n", "SEN403"),  # a test that tests nothing
    ("pass with a TODO is not explained", "app.py", "def f():\n    pass  # TODO\n", "SEN403"),
    # SEN404 stub-comment
    ("# stub", "app.py", "x = 0  # stub\n", "SEN404"),
    ("# placeholder", "app.py", "rate = 0.5  # placeholder\n", "SEN404"),
    ("# implement me", "app.py", "def f(x):\n    # implement me\n    return x\n", "SEN404"),
    ("# implementation goes here", "app.py", "def f(x):\n    # implementation goes here\n    return x\n", "SEN404"),
    ("# your code here", "app.py", "def f(x):\n    # Your code here\n    return x\n", "SEN404"),
    ("# not implemented", "app.py", "def f(x):\n    return x  # not implemented\n", "SEN404"),
    ("# not implemented yet", "app.py", "def f(x):\n    return x  # Not implemented yet.\n", "SEN404"),
    ("# fill in", "app.py", "def f(x):\n    # fill in\n    return x\n", "SEN404"),
    ("# dummy implementation", "app.py", "def f(x):\n    # dummy implementation\n    return x\n", "SEN404"),
    ("# stub implementation for now", "app.py", "def f(x):\n    return x  # Stub implementation for now\n", "SEN404"),
    ("# placeholder for the real implementation", "app.py",
     "def rate(user):\n    # Placeholder for the real implementation.\n    return 0.5\n", "SEN404"),
    ("# placeholder until the pricing API ships", "app.py",
     "def rate(user):\n    return 0.5  # placeholder until the real API call exists\n", "SEN404"),
    ("# to be replaced by the real implementation", "app.py",
     "def rate(user):\n    return 0.5  # to be replaced by the real implementation\n", "SEN404"),
    ("// placeholder in JS", "app.js", "const rate = 0.5; // placeholder\n", "SEN404"),
    ("/* stub */ in C", "lib.c", "int f(void) { return 0; /* stub */ }\n", "SEN404"),
    # only the method itself, or another class, reaches it through self: not a template-method hook
    ("method reached only through itself", "app.py",
     "class Exporter:\n    def run(self, n):\n        if n:\n            return self.run(n - 1)\n"
     "        raise NotImplementedError()\n\n    def other(self):\n        return self.name\n", "SEN402"),
    ("method reached through self by another class", "app.py",
     "class Exporter:\n    def run(self):\n        raise NotImplementedError()\n\n\n"
     "class Caller:\n    def go(self):\n        return self.run()\n", "SEN402"),
]


@pytest.mark.parametrize("name, path, content, code", FIRES, ids=[c[0] for c in FIRES])
def test_fires(name, path, content, code):
    assert code in found(path, content), name


CLEAN = [
    ("class Todo", "app.py", "class Todo:\n    title = ''\n"),
    ("status = 'TODO'", "app.py", "status = 'TODO'\n"),
    ("todo = []", "app.py", "todo = []\n"),
    ("card = 'xxx-xxx'", "app.py", "card = 'xxx-xxx'\n"),
    ("event = 'hack day'", "app.py", "event = 'hack day'\n"),
    ("TODO inside a docstring", "app.py", 'def f():\n    """TODO list model."""\n    return 1\n'),
    ("TODO inside a JS string", "app.js", "const s = '// TODO not a comment';\n"),
    ("lowercase todo in a comment", "app.py", "# the todo list is rendered below\nx = 1\n"),
    ("tracked TODO(#123)", "app.py", "# TODO(#123): retry on timeouts\nx = 1\n"),
    ("tracked FIXME(PROJ-12)", "app.py", "# FIXME(PROJ-12): flaky on CI\nx = 1\n"),
    ("XXX in a format", "app.py", "# phone format: XXX-XXX-XXXX\nx = 1\n"),
    ("XXX in an address mask", "app.py", "# masked as 10.0.XXX.XXX in logs\nx = 1\n"),
    ("TODO.md reference", "app.py", "# see TODO.md for the roadmap\nx = 1\n"),
    ("TODO in README.md", "README.md", "# Project\n\nTODO: write the docs.\n"),
    ("TODO in a text file", "notes.txt", "TODO: tidy\n"),
    ("TODO in HTML (no known comment syntax)", "index.html", "<!-- TODO: nav -->\n<p>x</p>\n"),
    ("TODO in JSON", "data.json", '{"status": "TODO"}\n'),
    ("pass  # noqa: intentional", "app.py", "def f():\n    pass  # noqa: intentional\n"),
    ("pass with an explanatory comment line", "app.py",
     "def handler(signum, frame):\n    # Signals are ignored: the parent process handles shutdown.\n    pass\n"),
    ("Protocol body of ...", "app.py",
     "from typing import Protocol\n\n\nclass Reader(Protocol):\n    def read(self, n: int) -> bytes: ...\n"),
    ("typing.Protocol generic", "app.py",
     "import typing\n\n\nclass Box(typing.Protocol[T]):\n    def get(self) -> T:\n        ...\n"),
    ("@overload bodies", "app.py",
     "from typing import overload\n\n\n@overload\ndef f(x: int) -> int: ...\n@overload\ndef f(x: str) -> str: ...\n"
     "def f(x):\n    return x\n"),
    ("@typing.overload", "app.py", "import typing\n\n\n@typing.overload\ndef f(x: int) -> int: ...\n"),
    ("docstring line ending in ...", "app.py", 'def f():\n    """Loading..."""\n    return load()\n'),
    ("ellipsis as a value", "app.py", "def f(x):\n    return x[..., 0]\n"),
    ("# Implementation details below", "app.py", "# Implementation details below\nx = 1\n"),
    ("raise in @abstractmethod", "app.py",
     "from abc import ABC, abstractmethod\n\n\nclass Base(ABC):\n    @abstractmethod\n    def run(self):\n"
     "        raise NotImplementedError\n"),
    ("raise in @abc.abstractmethod without ABC", "app.py",
     "import abc\n\n\nclass Runner:\n    @abc.abstractmethod\n    def run(self):\n        raise NotImplementedError\n"),
    ("abstractproperty", "app.py",
     "import abc\n\n\nclass R:\n    @abc.abstractproperty\n    def name(self):\n        raise NotImplementedError\n"),
    ("method of an ABC", "app.py",
     "from abc import ABC\n\n\nclass Store(ABC):\n    def get(self, key):\n        raise NotImplementedError\n"),
    ("metaclass=ABCMeta", "app.py",
     "import abc\n\n\nclass Store(metaclass=abc.ABCMeta):\n    def get(self, key):\n"
     "        raise NotImplementedError\n"),
    ("method of a Protocol raising", "app.py",
     "from typing import Protocol\n\n\nclass P(Protocol):\n    def get(self):\n        raise NotImplementedError\n"),
    ("base class by name", "app.py",
     "class BaseHandler:\n    def handle(self, req):\n        raise NotImplementedError\n"),
    ("base class by use", "app.py",
     "class Shape:\n    def area(self):\n        raise NotImplementedError\n\n\nclass Square(Shape):\n"
     "    def area(self):\n        return 1\n"),
    ("@singledispatch base", "app.py",
     "from functools import singledispatch\n\n\n@singledispatch\ndef render(obj):\n"
     "    raise NotImplementedError(type(obj))\n"),
    ("unsupported case with a message", "app.py",
     "def load(fmt):\n    if fmt == 'json':\n        return 1\n    else:\n"
     "        raise NotImplementedError(f'unsupported format {fmt}')\n"),
    ("missing dependency", "app.py",
     "def plot():\n    try:\n        import matplotlib\n    except ImportError:\n"
     "        raise NotImplementedError('plotting needs matplotlib')\n    return matplotlib\n"),
    ("message naming the design", "app.py",
     "class Reader:\n    def read(self):\n        raise NotImplementedError('must be implemented by subclasses')\n"),
    ("unsupported on this system", "app.py",
     "def is_mount(path):\n    raise NotImplementedError(f'{path}: unsupported on this system')\n"),
    (".pyi stubs", "app.pyi", "def f(x: int) -> int: ...\nclass C:\n    def m(self) -> None: ...\n"),
    ("exception class body", "app.py", "class AppError(Exception):\n    pass\n"),
    ("docstring-only hook", "app.py", 'class Plugin:\n    def on_load(self):\n        """Called after loading."""\n'),
    ("__init__ of a trivial class", "app.py", "class Marker:\n    def __init__(self):\n        pass\n"),
    ("no-op override silencing a hook", "app.py",
     "from http.server import BaseHTTPRequestHandler\n\n\nclass Quiet(BaseHTTPRequestHandler):\n"
     "    def log_message(self, format, *args):\n        pass\n"),
    ("import fallback", "app.py", "try:\n    from fast import speedup\nexcept ImportError:\n"
                                  "    def speedup(x):\n        pass\n"),
    ("platform fallback", "app.py", "import sys\n\nif sys.platform == 'win32':\n    def chmod(path):\n        pass\n"),
    ("local no-op callback", "app.py", "def run(job):\n    def ignore(*args):\n        pass\n    job(ignore)\n"),
    ("noop by name", "app.py", "def noop(*args, **kwargs):\n    pass\n"),
    ("test double", "app.py", "class NullWriter:\n    def write(self, data):\n        pass\n"),
    ("# stub out the network", "app.py", "# stub out the network in tests\nx = 1\n"),
    ("# fill in the defaults", "app.py", "# fill in the defaults from the config\nx = 1\n"),
    ("# not implemented on Windows", "app.py", "# Not implemented on Windows: no fork()\nx = 1\n"),
    ("# implement this via a heap", "app.py", "# We implement this with a heap for O(log n) pops\nx = 1\n"),
    ("stub in a string", "app.py", "label = '# stub'\n"),
    ("throw in a comment", "app.ts", "// throw new Error('Not implemented');\nexport const x = 1;\n"),
    ("Rust todo in a string", "lib.rs", "fn f() -> &'static str {\n    \"todo!()\"\n}\n"),
    # Deliberate refusals and framework idioms (issue: precision on real code).
    ("dunder refusing with a message", "app.py",
     "class Lazy:\n    def __bool__(self):\n        raise NotImplementedError('truth value is ambiguous; use .exists()')\n"),
    ("refusal that names what to use", "app.py",
     "def legacy(x):\n    raise NotImplementedError('removed in 3.0, call modern() instead')\n"),
    ("typer/click group callback", "app.py",
     "import typer\n\napp = typer.Typer()\n\n\n@app.callback()\ndef main():\n    pass\n"),
    ("click group", "app.py", "import click\n\n\n@click.group()\ndef cli():\n    pass\n"),
    ("pluggy hookspec", "app.py", "@hookspec\ndef pytest_configure(config):\n    ...\n"),
    ("no-op override with a docstring", "app.py",
     'class Quiet(Handler):\n    def flush(self):\n        """Nothing is buffered, so there is nothing to flush."""\n'
     "        pass\n"),
    ("documented no-op hook function", "app.py",
     'def on_startup(app):\n    """A hook: does nothing by default."""\n    pass\n'),
    ("test double raising in tests", "tests/test_app.py",
     "async def receive():\n    raise NotImplementedError('Should not be called!')\n"),
    ("bare raise in a test helper", "tests/test_app.py",
     "def handler(request, exc):\n    raise NotImplementedError\n"),
    ("empty helper in a test module", "tests/test_app.py", "def noop_receive():\n    pass\n\n\ndef app(s):\n    pass\n"),
    ("stubs in test data", "tests/data/stub_module.py", "def f():\n    pass\n\n\ndef g():\n    raise NotImplementedError\n"),
    ("examples are teaching material", "docs_src/app.py", "def main():\n    pass\n"),
    ("template-method hook", "app.py",
     "class CompilerShim(Compiler):\n    def column_spec(self, column):\n        return self._spec(column)\n\n"
     "    def _spec(self, column):\n        raise NotImplementedError()\n"),
    ("Go panic with a real message", "main.go", "package main\n\nfunc f() {\n\tpanic(\"unreachable\")\n}\n"),
]


@pytest.mark.parametrize("name, path, content", CLEAN, ids=[c[0] for c in CLEAN])
def test_does_not_fire(name, path, content):
    assert found(path, content) == [], name


def test_marker_and_stub_comment_are_not_both_reported():
    assert found("app.py", "x = 1  # TODO: implement me\n") == ["SEN401"]
    assert found("app.py", "x = 1  # TODO(#12): implement me\n") == []


@pytest.mark.parametrize("line, severity", [
    # Missing work blocks: a bare marker, one that says the work is not done, or one next to a stub.
    ("    # TODO\n    return 1", "error"),
    ("    # TODO: implement retries\n    return 1", "error"),
    ("    # FIXME: handle errors\n    return 1", "error"),
    ("    # TODO: fill in the real rates\n    return 1", "error"),
    ("    # TODO: decide\n    pass", "error"),
    ("    # XXX: not implemented yet\n    return 1", "error"),
    # A note about a later improvement in finished code is a warning.
    ("    # TODO: use asyncio.TaskGroup once 3.10 is dropped\n    return 1", "warning"),
    ("    # TODO: clean up\n    return 1", "warning"),
    ("    # HACK: the cache is warmed twice; merge the two paths later\n    return 1", "warning"),
    # An owner or an issue reference is information.
    ("    # TODO(#123): retry on timeouts\n    return 1", "info"),
    ("    # TODO(alice): tidy\n    return 1", "info"),
    ("    # TODO: retry on timeouts, see #123\n    return 1", "info"),
    ("    # FIXME: flaky on CI (PROJ-12)\n    return 1", "info"),
    ("    # TODO https://github.com/org/repo/issues/12\n    return 1", "info"),
])
def test_marker_grades(line, severity):
    verdict = gate_new_file("app.py", f"def f():\n{line}\n", only_checks=["placeholder"])
    assert [(f.rule, f.severity.value) for f in verdict.findings if f.rule == "SEN401"] == [("SEN401", severity)]


def _modify(path: str, before: str, after: str):
    """The whole engine on a real modification: the file's before and after content, as a hook sees it."""
    import difflib

    from sentinel import engine
    from sentinel.config import validate
    from sentinel.diffparse import parse_diff
    from sentinel.sources import Change
    lines = difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{path}", f"b/{path}")
    diff = f"diff --git a/{path} b/{path}\n" + "".join(lines)
    return engine.run(Change(parse_diff(diff), content_rev=None), validate({}, "test"),
                      engine.RunOptions(only_checks=["placeholder"]))


@pytest.mark.parametrize("before, after", [
    # A typo fixed in an existing marker, code edited on a line that carries one, a block moved.
    ("x = 1\n# TODO: hanlde the empty case\ny = 2\n", "x = 1\n# TODO: handle the empty case\ny = 2\n"),
    ("x = 1  # TODO\ny = 2\n", "x = 2  # TODO\ny = 2\n"),
    ("x = f()  # type: ignore  # TODO\n", "x = f()  # type: ignore[no-any-return]  # TODO\n"),
    ("a = 1\n# FIXME: slow\nb = 2\nc = 3\nd = 4\ne = 5\n", "a = 1\nb = 2\nc = 3\nd = 4\n# FIXME: slow\ne = 5\n"),
    ("x = [\n    1,  # TODO: more\n]\n", "x = [\n    1,  # TODO: more\n    2,\n]\n"),
])
def test_markers_the_change_did_not_introduce_are_not_reported(before, after):
    verdict = _modify("pkg/mod.py", before, after)
    assert [f.rule for f in verdict.findings if f.rule == "SEN401"] == []


def test_a_new_marker_next_to_an_edited_one_is_reported():
    verdict = _modify("pkg/mod.py", "x = 1  # TODO: a\n", "x = 1  # TODO: a\ny = 2  # TODO\n")
    assert [(f.rule, f.line) for f in verdict.findings if f.rule == "SEN401"] == [("SEN401", 2)]


def test_a_todo_pass_reports_both_the_marker_and_the_stub():
    assert sorted(found("app.py", "def f():\n    pass  # TODO\n")) == ["SEN401", "SEN403"]


def test_findings_point_at_the_marker():
    verdict = gate_new_file("app.py", "x = 1  # TODO: handle errors\n")
    [f] = [f for f in verdict.findings if f.rule == "SEN401"]
    assert (f.line, f.column) == (1, 10)
    assert f.message == "TODO marker (work left undone): # TODO: handle errors"
    assert f.severity.value == "error"


def test_stub_finding_is_on_the_stub_line():
    verdict = gate_new_file("app.py", "def send(to):\n    \"\"\"Send.\"\"\"\n    pass\n")
    [f] = [f for f in verdict.findings if f.rule == "SEN403"]
    assert (f.line, f.column) == (3, 5)
    assert f.message == "function send() has only a stub body (pass)"


def test_prose_is_scanned_when_asked():
    config = {"placeholder": {"scan-prose": True}}
    assert found("README.md", "# Project\n\nTODO: write the docs.\n", config) == ["SEN401"]
    assert found("README.md", "Use `TODO(#1)` or mention `TODO` in code spans.\n", config) == []


def test_custom_markers_and_allowed_form():
    config = {"placeholder": {"markers": ["TODO", "NOCOMMIT"], "allowed-form": r"TODO\[[a-z]+\]"}}
    assert found("app.py", "x = 1  # NOCOMMIT\n", config) == ["SEN401"]
    assert found("app.py", "x = 1  # TODO[alice]\n", config) == []
    assert found("app.py", "x = 1  # FIXME\n", config) == []
    assert found("app.py", "x = 1  # TODO\n", config) == ["SEN401"]


def test_invalid_allowed_form_is_a_named_error():
    from sentinel.config import validate
    from sentinel.errors import ConfigError
    with pytest.raises(ConfigError, match="placeholder.allowed-form"):
        validate({"placeholder": {"allowed-form": "(unclosed"}}, "test")


def test_only_added_lines_are_judged():
    from sentinel import engine
    from sentinel.config import validate
    from sentinel.diffparse import parse_diff
    from sentinel.sources import Change
    diff = ("diff --git a/pkg/old_stub.py b/pkg/old_stub.py\n--- a/pkg/old_stub.py\n+++ b/pkg/old_stub.py\n"
            "@@ -1,2 +1,3 @@\n def f():\n     pass  # TODO\n+x = 1\n")
    verdict = engine.run(Change(parse_diff(diff), content_rev=None), validate({}, "test"), engine.RunOptions())
    assert [c for c in codes(verdict) if c in OURS] == []


@pytest.mark.parametrize("comment, expected", [
    ("# TODO: x", [(2, "TODO", False)]),
    ("# TODOs and FIXMEs", [(2, "TODO", False), (12, "FIXME", False)]),
    ("# TODO(#1) and XXX", [(2, "TODO", True), (15, "XXX", False)]),
    ("# TODO(#1) only", [(2, "TODO", True)]),
    ("# todo lowercase", None),
    ("# TODOLIST", None),
    ("# XXX-XXX", None),
    ("# see TODO.md", None),
])
def test_marker_hits(comment, expected):
    _, marker, allowed = placeholder._marker_patterns(("TODO", "FIXME", "HACK", "XXX"),
                                                      r"\b(?:TODO|FIXME)\((?:#\d+|[A-Z][A-Z0-9]+-\d+)\)")
    assert placeholder._marker_hits(comment, marker, allowed) == expected


@pytest.mark.parametrize("comment, body", [
    ("# stub", "stub"),
    ("//  placeholder ", "placeholder"),
    ("/* dummy implementation */", "dummy implementation"),
    (" * fill in", "fill in"),
    ("-- not implemented", "not implemented"),
    ("#!/usr/bin/env python", "/usr/bin/env python"),
])
def test_comment_body(comment, body):
    assert placeholder._comment_body(comment) == body


def test_cli_blocks_placeholders_in_a_real_repo(repo):
    repo.write(".sentinel.toml", "[drift]\nenabled = false\n\n[claims]\nenabled = false\n")
    repo.write("app.py", "def load(path):\n    return open(path).read()\n")
    repo.add(".sentinel.toml", "app.py")
    repo.commit("init")
    repo.write("app.py", "def load(path):\n    # TODO: handle errors\n    return open(path).read()\n\n\n"
                         "def save(path, data):\n    pass\n")
    repo.add("app.py")
    proc = repo.sentinel("check", "--no-memory")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "SEN401" in proc.stdout and "SEN403" in proc.stdout
    repo.write("app.py", "def load(path):\n    # TODO(#42): retry on transient errors\n"
                         "    return open(path).read()\n")
    repo.add("app.py")
    proc = repo.sentinel("check", "--no-memory")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_large_change_finds_the_one_marker():
    from sentinel.checks.base import FileContext
    from sentinel.config import Config
    from sentinel.models import FileChange, FileStatus, FilterMode
    body = "".join(f"def f{i}(a, b):\n    return a + b  # sum {i}: not a stub\n\n" for i in range(20000))
    body += "# TODO: one marker at the end\n"
    fc = FileChange(path="big.py", old_path=None, status=FileStatus.ADDED, language="python",
                    added={i: ln for i, ln in enumerate(body.split("\n")[:-1], 1)})
    ctx = FileContext(fc, Config(), FilterMode.ADDED, body)
    # speed on large changes is measured in benchmarks/, not asserted here
    assert [f.rule for f in placeholder.check_file(ctx)] == ["SEN401"]


def test_inline_suppression_applies():
    verdict = gate_new_file("app.py", "def f():\n    raise NotImplementedError  # sentinel: ignore[SEN402]\n")
    assert "SEN402" not in codes(verdict) and verdict.suppressed == 1


def test_a_line_of_thousands_of_markers_is_a_few_findings():
    line = "#TODO " * 2000
    verdict = gate_new_file("a.py", line + "\n", only_checks=["placeholder"])
    markers = [f for f in verdict.findings if f.rule == "SEN401"]
    assert 1 <= len(markers) <= 5


def _sen401(path: str, content: str):
    return [(f.severity.value, f.message.split(":")[0]) for f in gate_new_file(path, content).findings
            if f.rule == "SEN401"]


def test_a_marker_closing_a_comment_is_described_by_it():
    assert _sen401("pkg/cfg.py", 'IGNORES = [\n    "ANN401",  # any-type  # FIXME\n]\n') == \
        [("warning", "FIXME marker (a note for later)")]
    assert _sen401("pkg/cfg.py", 'IGNORES = [\n    "ANN401",  # FIXME\n]\n') == \
        [("error", "FIXME marker (no description of what is left)")]


def test_a_note_next_to_an_overload_signature_is_not_next_to_a_stub():
    src = ("from typing import overload\n\n\n@overload\ndef f(x: int) -> int: ...  # TODO: drop with 3.9\n"
           "@overload\ndef f(x: str) -> str: ...\ndef f(x):\n    return x\n")
    assert _sen401("pkg/o.py", src) == [("warning", "TODO marker (a note for later)")]
    stub = "def g(x):\n    ...  # TODO: drop with 3.9\n"
    assert _sen401("pkg/o.py", stub) == [("error", "TODO marker (next to a stub body)")]


def test_a_marker_word_inside_a_name_in_capitals_is_not_a_marker():
    assert _sen401("pkg/u.py", 'NAMES = {\n    0x1806: "x",  # MONGOLIAN TODO SOFT HYPHEN\n}\n') == []
    assert _sen401("pkg/u.py", "X = 1  # TODO FIX THIS LATER\n") != []
    assert _sen401("pkg/u.py", "X = 1  # HANDLE TODO\n") != []  # no capital word after it: a note


def test_a_null_object_method_of_a_wrapper_is_not_a_stub():
    wrapper = ("class NonClosing:\n    def __init__(self, stream):\n        self._stream = stream\n\n"
               "    def write(self, data):\n        return self._stream.write(data)\n\n    def close(self):\n        pass\n")
    assert found("pkg/w.py", wrapper) == []
    forwarding = wrapper.replace("    def write(self, data):\n        return self._stream.write(data)\n",
                                 "    def __getattr__(self, name):\n        return getattr(self._stream, name)\n")
    assert found("pkg/w.py", forwarding) == []
    # a class that keeps nothing it is given is not a wrapper: its empty method is still a stub
    plain = "class Mailer:\n    def __init__(self):\n        self.sent = []\n\n    def close(self):\n        pass\n"
    assert found("pkg/w.py", plain) == ["SEN403"]


def test_a_placeholder_comment_in_a_function_that_does_nothing_blocks():
    src = "def charge(amount):\n    # placeholder for the real implementation\n    return None\n"
    [f] = [f for f in gate_new_file("pkg/pay.py", src).findings if f.rule == "SEN404"]
    assert f.severity.value == "error" and "charge()" in f.message
    working = "def charge(amount):\n    # placeholder for the real implementation\n    return gateway.charge(amount)\n"
    [f] = [f for f in gate_new_file("pkg/pay.py", working).findings if f.rule == "SEN404"]
    assert f.severity.value == "warning"


def test_a_marker_counts_as_moved_only_with_its_code():
    tail = "".join(f"\n\ndef f{i}():\n    return {i}\n" for i in range(6))
    before = "def a():\n    # TODO\n    return 1\n" + tail
    after = "def a():\n    return 1\n" + tail + "\n\ndef c():\n    \"\"\"Compute c.\"\"\"\n    # TODO\n"
    verdict = _modify("pkg/mod.py", before, after)
    assert [(f.rule, f.line) for f in verdict.findings if f.rule == "SEN401"] == [("SEN401", after.count("\n"))]
    # the same marker moved with the function it belongs to is not new
    moved = tail.lstrip("\n") + "\n\ndef a():\n    # TODO\n    return 1\n"
    assert [f.rule for f in _modify("pkg/mod.py", before, moved).findings if f.rule == "SEN401"] == []
