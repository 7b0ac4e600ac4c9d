"""The per-file checks' keyword gates only spare a parse: they never change what is found.

jail, chaos and placeholder look at a file's AST only when cheap keyword probes say a rule could fire in scope.
Once another check has parsed a whole-file change, jail and placeholder skip their gates and go to the AST
(FileContext.tree_in_hand), and the engine runs chaos — whose gate opens for the most files — first. Both are
sound only if every gate is exact: forced open, it must find nothing more. That is checked here on real code
(standard-library modules and our own), whole files and partial changes, with every destructive class on and
banned imports configured.
"""

from __future__ import annotations

import difflib
import functools
import sys

import pytest

from sentinel import engine
from sentinel.checks import ANALYSIS_ORDER, CHECK_MODULES, chaos, jail, placeholder
from sentinel.checks.base import FileContext
from sentinel.checks.chaos import python as chaos_python
from sentinel.checks.jail import python as jail_python
from sentinel.config import validate
from sentinel.diffparse import parse_diff
from sentinel.models import FilterMode
from sentinel.sources import Change
from tests.conftest import new_file_diff

# Real modules full of what the gates look for: deletions, subprocesses, writes, SQL, stubs, NotImplementedError,
# bare and broad excepts, eval/exec, .get( chains.
MODULES = ["shutil", "tempfile", "subprocess", "os", "tarfile", "logging.handlers", "http.server", "mailbox",
           "pathlib", "pydoc", "configparser", "sentinel.gitio"]
CONFIG = {"jail": {"banned_imports": ["os", "email.utils", "importlib.machinery", "http"]}}


@functools.cache
def _source(module: str) -> str:
    __import__(module)
    with open(sys.modules[module].__file__, encoding="utf-8") as fh:
        return fh.read()


def _partial_diff(path: str, text: str) -> str:
    """A diff that rewrites every fifth line of the file and adds every 23rd: a hook's partial scope (one hunk
    over the whole file, written directly: difflib takes seconds on files this size)."""
    body, old = [], 0
    for i, line in enumerate(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")):
        if i % 23 == 7:
            body.append("+" + line)
        elif i % 5 == 0:
            body.extend(("-# was: " + line, "+" + line))
            old += 1
        else:
            body.append(" " + line)
            old += 1
    new = sum(1 for b in body if b[0] != "-")
    return (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,{old} +1,{new} @@\n"
            + "\n".join(body) + "\n")


def _contexts(mode: str, config: dict = CONFIG) -> list[FileContext]:
    config = validate(config, "test")
    out = []
    for module in MODULES:
        text = _source(module)
        path = module.replace(".", "/") + ".py"
        diff = new_file_diff(path, text) if mode == "whole" else _partial_diff(path, text)
        change = parse_diff(diff).files[0]
        out.append(FileContext(change, config, FilterMode.ADDED, text))
    return out


def _findings(module, contexts) -> list[tuple]:
    out = []
    for ctx in contexts:
        ctx.drop_views()
        out.extend((f.path, f.line, f.rule, f.message) for f in module.check_file(ctx))
    return out


@pytest.mark.parametrize("mode", ["whole", "partial"])
@pytest.mark.parametrize("module, gate", [(jail_python, "_probes_hit"), (placeholder, "_needs_ast"),
                                          (chaos_python, "_py_worth_parsing")])
@pytest.mark.parametrize("config", [{}, CONFIG], ids=["defaults", "banned-imports"])
def test_a_gate_forced_open_finds_nothing_more(module, gate, mode, config, monkeypatch):
    contexts = _contexts(mode, config)
    check = {jail_python: jail, chaos_python: chaos}.get(module, module)
    gated = _findings(check, contexts)
    monkeypatch.setattr(module, gate, lambda *args: True)
    forced = _findings(check, contexts)
    assert forced == gated
    if check is not chaos or mode == "whole":
        assert gated  # the corpus exercises the check (chaos finds nothing in the partial lines of these modules)


def test_with_the_tree_in_hand_jail_and_placeholder_skip_their_gates(monkeypatch):
    contexts = _contexts("whole", {})  # no banned imports: those send a file to the AST by themselves
    expected = {name: _findings(check, contexts) for name, check in (("jail", jail), ("placeholder", placeholder))}
    assert expected["jail"] and expected["placeholder"]

    def no_gate(*args):
        raise AssertionError("a gate ran although the tree was in hand")

    monkeypatch.setattr(jail_python, "_probes_hit", no_gate)
    monkeypatch.setattr(placeholder, "_needs_ast", no_gate)
    for ctx in contexts:
        ctx.drop_views()
        assert ctx.tree is not None and ctx.tree_in_hand
    for name, check in (("jail", jail), ("placeholder", placeholder)):
        got = []
        for ctx in contexts:
            got.extend((f.path, f.line, f.rule, f.message) for f in check.check_file(ctx))
        assert got == expected[name]


def test_a_partial_scope_keeps_its_gates_even_with_the_tree_in_hand():
    # A few changed lines of a large file: probing those lines costs less than every call of the file's AST.
    ctx = _contexts("partial")[0]
    assert ctx.tree is not None and not ctx.tree_in_hand


def test_analysis_order_changes_no_verdict(monkeypatch):
    config = validate(CONFIG, "test")
    diff = "".join(new_file_diff(m.replace(".", "/") + ".py", _source(m)) for m in MODULES)

    def verdict():
        v = engine.run(Change(parse_diff(diff), content_rev=None), config, engine.RunOptions(jobs=1))
        findings = [(f.check, f.rule, f.path, f.line, f.message) for f in v.findings]
        return findings, [(r.check, r.status) for r in v.checks]

    assert ANALYSIS_ORDER[0] == "chaos"
    first = verdict()
    monkeypatch.setattr(engine, "ANALYSIS_ORDER", tuple(CHECK_MODULES))  # the gate's own order
    assert verdict() == first
    assert {rule for _, rule, *_ in first[0]} >= {"SEN101", "SEN103", "SEN301", "SEN401"}


# --- banned imports: the same findings whatever else the file holds ------------------------------------------

def _jail(text: str, banned: list[str], diff: str | None = None) -> list[tuple[int, str]]:
    config = validate({"jail": {"banned_imports": banned}}, "test")
    change = parse_diff(diff or new_file_diff("m.py", text)).files[0]
    return [(f.line, f.message) for f in jail.check_file(FileContext(change, config, FilterMode.ADDED, text))]


def test_a_submodule_imported_from_its_parent_is_banned_alone_and_beside_a_probe_hit():
    plain = "from sqlalchemy import orm\n\nx = 1\n"
    beside = "import shutil\nfrom sqlalchemy import orm\n\nshutil.rmtree(p)\n"
    assert _jail(plain, ["sqlalchemy.orm"]) == [(1, "imports banned module 'sqlalchemy.orm'")]
    assert (2, "imports banned module 'sqlalchemy.orm'") in _jail(beside, ["sqlalchemy.orm"])


def test_an_import_continued_onto_the_changed_line_is_found():
    before = "from jinja2.utils import Markup, \\\n    escape\n"
    after = "from jinja2.utils import Markup, \\\n    escape, urlize\n"
    diff = "diff --git a/m.py b/m.py\n" + "".join(difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), "a/m.py", "b/m.py"))
    assert _jail(after, ["jinja2"], diff) == [(2, "imports 'jinja2.utils' from banned module 'jinja2'")]


def test_a_file_that_does_not_parse_still_has_its_banned_imports_read_from_its_lines():
    broken = "from sqlalchemy import orm, types as t\nimport flask.json\ndef f(:\n"
    assert _jail(broken, ["sqlalchemy.orm", "flask"]) == [
        (1, "imports banned module 'sqlalchemy.orm'"), (2, "imports 'flask.json' from banned module 'flask'")]
    assert _jail("from sqlalchemy import types\ndef f(:\n", ["sqlalchemy.orm"]) == []
