"""style: layout judged against each file's own conventions and the project's own limits."""

from __future__ import annotations

import pytest

from sentinel import engine, projectconf
from sentinel.checks import style
from sentinel.checks.base import FileContext
from sentinel.config import Config, validate
from sentinel.diffparse import parse_diff
from sentinel.models import FileChange, FileStatus, FilterMode
from sentinel.sources import Change
from tests.conftest import codes, gate_new_file, new_file_diff

STYLE_CODES = {"SEN201", "SEN202", "SEN203", "SEN204", "SEN205"}
LONG = "x = [" + ", ".join(["1"] * 64) + ", 22]"  # 200 characters
assert len(LONG) == 200


def style_codes(verdict) -> list[str]:
    return [c for c in codes(verdict) if c in STYLE_CODES]


def modification(path: str, before: list[str], added: list[str], crlf: bool = False) -> str:
    """A diff appending lines to a file (the old lines are context)."""
    eol = "\r\n" if crlf else "\n"
    body = "".join(f" {ln}{eol}" for ln in before) + "".join(f"+{ln}" for ln in added)
    return (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
            f"@@ -1,{len(before)} +1,{len(before) + len(added)} @@\n{body}")


def gate_diff(diff: str, config: dict | None = None, root: str | None = None, **opts):
    """The whole engine (filtering, suppression) on a diff, running this check alone."""
    opts.setdefault("only_checks", ["style"])
    cs = parse_diff(diff, source="test")
    cs.root = root
    return engine.run(Change(cs, content_rev=None), validate(config or {}, "test"), engine.RunOptions(**opts))


# --- the spec's cases through the whole engine ---------------------------------------------------

TAB_FILE = ["def load(path):", "\twith open(path) as fh:", "\t\treturn fh.read()", ""]


FIRES = [
    ("200-char line, style.line-length 120", new_file_diff("app.py", LONG + "\n"), "SEN202"),
    ("spaces added to a tab-indented file",
     modification("pkg/tabbed_mod.py", TAB_FILE, ["def save(path):\n", "    pass\n"]), "SEN201"),
    ("tabs added to a space-indented file",
     modification("pkg/spaced_mod.py", ["def load():", "    return 1", ""], ["def save():\n", "\treturn 2\n"]),
     "SEN201"),
    ("space before tab", new_file_diff("app.js", "function f() {\n  \treturn 1;\n}\n"), "SEN201"),
    ("spaces after the tabs in a tab file",
     modification("pkg/tabbed_mod.py", TAB_FILE, ["def save(p):\n", "\tx = p\n", "\t    return x\n"]), "SEN201"),
    ("wildcard import", new_file_diff("app.py", "from os import *\n"), "SEN203"),
    ("wildcard import without a space", new_file_diff("app.py", "from os.path import*\n"), "SEN203"),
    ("wildcard import in a file that does not parse", new_file_diff("app.py", "from os import *\ndef (:\n"), "SEN203"),
    ("CRLF line among LF lines of a diff without content",
     modification("pkg/lf_mod.py", ["a = 1"], ["b = 2\n", "c = 3\r\n", "d = 4\n"]), "SEN204"),
    ("trailing whitespace", new_file_diff("app.py", "x = 1  \n"), "SEN205"),
    ("long shell line", new_file_diff("run.sh", "echo " + "word " * 40 + "\n"), "SEN202"),
    ("tab in YAML indented with spaces", new_file_diff("ci.yml", "a:\n  b: 1\n  c: 2\n\td: 3\n"), "SEN201"),
]


@pytest.mark.parametrize("name, diff, code", FIRES, ids=[c[0] for c in FIRES])
def test_fires(name, diff, code):
    assert code in style_codes(gate_diff(diff, {"style": {"line-length": 120}})), name


CLEAN = [
    ("tab-indented file adding tabs", modification("pkg/tabbed_mod.py", TAB_FILE, ["def save(p):\n", "\treturn p\n"])),
    ("tabs then spaces aligning a continuation",
     modification("pkg/tabbed_mod.py", TAB_FILE,
                  ["def save(p):\n", "\treturn dump(p,\n", "\t            indent=2)\n"])),
    ("new tab-indented file", new_file_diff("app.py", "def f():\n\tif x:\n\t\treturn 1\n\treturn 2\n")),
    ("tab inside a string literal", new_file_diff("app.py", 'def f():\n    return "a\tb"\n')),
    ("tab after code", new_file_diff("app.py", "def f():\n    x = 1\t# aligned\n    return x\n")),
    ("tabs in a multi-line string", new_file_diff("app.py", 'def f():\n    s = """\n\tliteral\n"""\n    return s\n')),
    ("Makefile tabs next to Python",
     new_file_diff("Makefile", "all:\n\tpython -m app\n\ntest:\n\tpytest -q\n")
     + new_file_diff("app.py", "def main():\n    return 0\n")),
    ("Go tab indentation", new_file_diff("main.go", "package main\n\nfunc main() {\n\tprintln(1)\n}\n")),
    ("Go tabs added to a file with spaces",
     modification("pkg/odd.go", ["package odd", "func f() {", "    a()", "}"], ["func g() {\n", "\tb()\n", "}\n"])),
    ("from os import * in a comment", new_file_diff("app.py", "# from os import *\nx = 1\n")),
    ("from os import * in a string", new_file_diff("app.py", "doc = 'from os import *'\n")),
    ("from os import * in a docstring", new_file_diff("app.py", '"""Usage:\n\nfrom os import *\n"""\n')),
    ("JS namespace import", new_file_diff("app.js", "import * as path from 'path';\n")),
    ("package __init__ re-export", new_file_diff("pkg/__init__.py", "from .core import *\n")),
    ("stub file wildcard", new_file_diff("pkg/core.pyi", "from os import *\n")),
    ("facade over a private module", new_file_diff("decimal.py", "from _decimal import *\n")),
    ("wildcard accepted with noqa: F403", new_file_diff("app.py", "from attr.filters import *  # noqa: F403\n")),
    ("CRLF file adding CRLF lines",
     modification("pkg/crlf_mod.py", ["a = 1", "b = 2"], ["c = 3\r\n"], crlf=True)),
    ("new CRLF file", new_file_diff("app.py", "a = 1\r\nb = 2\r\n")),
    ("URL-only comment line", new_file_diff("app.py", "# https://example.com/" + "a" * 200 + "\nx = 1\n")),
    ("line ending in a URL", new_file_diff("app.py", "url = 'https://example.com/" + "a" * 200 + "'\n")),
    ("noqa: E501", new_file_diff("app.py", LONG + "  # noqa: E501\n")),
    ("long line in prose", new_file_diff("README.md", "word " * 60 + "\n")),
    ("long line in JSON", new_file_diff("data.json", '{"k": "' + "v" * 300 + '"}\n')),
    ("long line in a lock file", new_file_diff("poetry.lock", "hash = " + "a" * 300 + "\n")),
    ("minified JS", new_file_diff("vendor/lib.min.js", "var a=1;" * 60 + "\n")),
    ("line at the limit", new_file_diff("app.py", "x = '" + "a" * 114 + "'\n")),
    ("trailing whitespace inside a multi-line string", new_file_diff("app.py", 's = """first  \nsecond\n"""\n')),
    ("trailing spaces in markdown (hard break)", new_file_diff("README.md", "line one  \nline two\n")),
    ("C block comment in a tab file", new_file_diff("lib.c", "/*\n * Doc.\n */\nint f(void)\n{\n\treturn 0;\n}\n")),
    ("aligned continuation in a tab file",
     new_file_diff("lib.c", "int f(int a,\n      int b)\n{\n\treturn a + b;\n}\n")),
]


@pytest.mark.parametrize("name, diff", CLEAN, ids=[c[0] for c in CLEAN])
def test_does_not_fire(name, diff):
    assert style_codes(gate_diff(diff)) == [], name


@pytest.mark.parametrize("before, after, fires", [
    (b"a = 1\nb = 2\nc = 3\n", b"a = 1\nb = 2\nc = 3\r\nd = 4\n", True),  # CRLF into an LF file
    (b"a = 1\r\nb = 2\r\nc = 3\r\n", b"a = 1\r\nb = 2\r\nc = 3\r\nd = 4\n", True),  # LF into CRLF
    (b"a = 1\r\nb = 2\r\n", b"a = 1\r\nb = 2\r\nc = 3\r\n", False),  # CRLF file adding CRLF
    (b"a = 1\r\nb = 2\r\n", b"a = 1\r\nb = 2\r\nc = 3", False),  # last line without any ending
])
def test_line_endings_follow_the_file_content(tmp_path, before, after, fires):
    """With the post-change content at hand, the file's existing lines set the convention."""
    import difflib
    (tmp_path / "mod.py").write_bytes(after)
    old, new = before.decode().splitlines(keepends=True), after.decode().splitlines(keepends=True)
    diff = "diff --git a/mod.py b/mod.py\n" + "".join(difflib.unified_diff(old, new, "a/mod.py", "b/mod.py"))
    if not after.endswith(b"\n"):
        diff += "\n\\ No newline at end of file\n"
    verdict = gate_diff(diff, root=str(tmp_path))
    assert ("SEN204" in codes(verdict)) is fires, verdict.not_checked


def test_findings_are_specific():
    verdict = gate_new_file("app.py", LONG + "\n", {"style": {"line-length": 120}})
    [f] = [f for f in verdict.findings if f.rule == "SEN202"]
    assert f.line == 1 and f.column == 121
    assert f.message == "line is 200 characters, over the limit of 120 (style.line-length)"


def test_a_block_of_offending_lines_is_one_finding():
    diff = modification("pkg/spaced_mod.py", ["def load():", "    return 1", ""],
                        ["def save():\n", "\tx = 1\n", "\ty = 2\n", "\treturn x + y\n"])
    [f] = [f for f in gate_diff(diff).findings if f.rule == "SEN201"]
    assert (f.line, f.end_line) == (5, 7)
    assert "tabs" in f.message and "(lines 5-7)" in f.message


def test_new_file_follows_its_own_majority():
    verdict = gate_new_file("app.py", "if a:\n\tb()\nif c:\n\td()\nif e:\n    f()\n")
    assert [(f.rule, f.line) for f in verdict.findings if f.rule == "SEN201"] == [("SEN201", 6)]


GNU_C = ["int", "f (int x)", "{", "  if (x)", "    {", "      while (x)", "\t{", "\t  x--;", "\t}", "    }",
         "  return x;", "}"]


@pytest.mark.parametrize("added, fires", [
    (["int g (void)\n", "{\n", "  if (y)\n", "    {\n", "      while (y)\n", "\ty--;\n", "    }\n", "}\n"], False),
    (["int g (void)\n", "{\n", "  if (y)\n", "          y--;\n", "}\n"], True),
])
def test_gnu_tabs_for_eight_columns(added, fires):
    """Emacs/GNU style: spaces for indentation, a tab for every 8 columns; both are the convention."""
    verdict = gate_diff(modification("src/gnu.c", GNU_C, added))
    assert ("SEN201" in codes(verdict)) is fires


def test_a_file_that_already_mixes_holds_no_convention():
    before = ["def a():", "    x = 1", "    return x", "def b():", "\ty = 2", "\treturn y", "def c():",
              "    return 3"]
    assert "SEN201" not in codes(gate_diff(modification("pkg/mixed_mod.py", before, ["def d():\n", "\treturn 4\n"])))


def test_c_declarations_continue_until_a_semicolon():
    before = ["struct s {", "  int a;", "  int b;", "};", "int", "  long_function_name (int a);"]
    added = ["XMLPUBFUN void XMLCALL\n", "\t\txmlDictCleanup (void);\n"]
    assert "SEN201" not in codes(gate_diff(modification("src/decls.h", before, added)))


def test_block_comment_bodies_are_prose():
    before = ["int f(void)", "{", "\treturn 0;", "}"]
    added = ["/* A comment whose\n", "   second line is aligned with spaces. */\n"]
    assert "SEN201" not in codes(gate_diff(modification("src/tabbed.c", before, added)))


def test_characters_not_bytes():
    cfg = {"style": {"line-length": 100}}
    assert "SEN202" not in codes(gate_new_file("app.py", "s = '" + "é" * 90 + "'\n", cfg))


def test_only_added_lines_are_judged():
    long_old = "y = f('" + "b " * 100 + "')"
    diff = modification("pkg/old_long.py", [long_old, "z = 1  "], ["w = 2\n"])
    cfg = {"style": {"line-length": 100}}
    assert style_codes(gate_diff(diff, cfg)) == []
    assert "SEN202" in style_codes(gate_diff(diff, cfg, filter_mode=FilterMode.FILE))


# --- line length: only what the project's own linter enforces ----------------------------------------

LONG_CALL = "x = compute(" + ", ".join(f"arg_{i}" for i in range(20)) + ")\n"  # 166 characters


def test_configured_line_length_wins(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 200\n[tool.ruff.lint]\nselect = ['E']\n")
    diff = new_file_diff("app.py", LONG_CALL)
    assert "SEN202" in codes(gate_diff(diff, {"style": {"line-length": 80}}, root=str(tmp_path)))
    assert "SEN202" not in codes(gate_diff(diff, root=str(tmp_path)))


def test_no_default_limit_when_no_linter_enforces_one(tmp_path):
    """A project that sets nothing, or only a formatter, has chosen no line-length rule."""
    assert "SEN202" not in codes(gate_diff(new_file_diff("app.py", LONG_CALL)))
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 88\n[tool.ruff]\nline-length = 88\n")
    assert "SEN202" not in codes(gate_diff(new_file_diff("app.py", LONG_CALL), root=str(tmp_path)))


def test_project_limit_applies_through_the_engine(tmp_path):
    (tmp_path / "setup.cfg").write_text("[flake8]\nmax-line-length = 88\n")
    verdict = gate_diff(new_file_diff("app.py", LONG_CALL), root=str(tmp_path))
    [f] = [f for f in verdict.findings if f.rule == "SEN202"]
    assert f.message.endswith("over the limit of 88 (flake8 E501 in setup.cfg)")
    assert f.severity.value == "warning"


def _root(tmp_path, files: dict[str, str]) -> str:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    projectconf.project_policy.cache_clear()
    return str(tmp_path)


@pytest.mark.parametrize("files, expected", [
    # ruff: only with E501 selected, by any prefix, and not ignored by a more specific one.
    ({"pyproject.toml": "[tool.ruff]\nline-length = 100\n"}, (None, None)),
    ({"pyproject.toml": "[tool.ruff]\nline-length = 100\n[tool.ruff.lint]\nselect = ['E', 'F']\n"},
     (100, "ruff E501 in pyproject.toml")),
    ({"pyproject.toml": "[tool.ruff.lint]\nextend-select = ['E501']\n"}, (88, "ruff E501 in pyproject.toml")),
    ({"pyproject.toml": "[tool.ruff.lint]\nselect = ['ALL']\n"}, (88, "ruff E501 in pyproject.toml")),
    ({"pyproject.toml": "[tool.ruff.lint]\nselect = ['ALL']\nignore = ['E501']\n"}, (None, None)),
    ({"pyproject.toml": "[tool.ruff.lint]\nselect = ['E']\nignore = ['E501']  # left to the formatter\n"},
     (None, None)),
    ({"pyproject.toml": "[tool.ruff.lint]\nselect = ['E501']\nignore = ['E']\n"}, (88, "ruff E501 in pyproject.toml")),
    ({"pyproject.toml": "[tool.ruff]\nline-length = 100\nselect = ['E']\n[tool.ruff.lint.pycodestyle]\n"
                        "max-line-length = 110\n"}, (110, "ruff E501 in pyproject.toml")),
    ({"ruff.toml": "line-length = 90\n[lint]\nselect = ['E5']\n",
      "pyproject.toml": "[tool.ruff.lint]\nselect = ['E']\n"}, (90, "ruff E501 in ruff.toml")),
    # flake8 / pycodestyle: E501 is on unless ignored; 79 by default.
    ({"setup.cfg": "[metadata]\nname = x\n[flake8]\nmax-line-length = 99\n"}, (99, "flake8 E501 in setup.cfg")),
    ({"tox.ini": "[flake8]\nexclude = .tox\n"}, (79, "flake8 E501 in tox.ini")),
    ({".flake8": "[flake8]\nmax-line-length = 97\nextend-ignore = E203, E501\n"}, (None, None)),
    ({".flake8": "[flake8]\nmax-line-length = 80\nextend-ignore = E501\nextend-select = B950\n"},
     (88, "flake8-bugbear B950 in .flake8")),
    ({"setup.cfg": "[flake8]\nselect = F\n"}, (None, None)),
    ({"setup.cfg": "[pycodestyle]\nmax-line-length = 120\n"}, (120, "pycodestyle E501 in setup.cfg")),
    # pylint: line-too-long unless disabled; 100 by default.
    ({"pyproject.toml": "[tool.pylint.format]\nmax-line-length = 95\n"}, (95, "pylint line-too-long in pyproject.toml")),
    ({"pyproject.toml": "[tool.pylint.'messages control']\ndisable = ['line-too-long']\n"}, (None, None)),
    ({".pylintrc": "[MESSAGES CONTROL]\ndisable=C0114\n"}, (100, "pylint line-too-long in .pylintrc")),
    # Several linters in use: the strictest enforcing one.
    ({"pyproject.toml": "[tool.ruff.lint]\nselect = ['E']\n", "setup.cfg": "[flake8]\nmax-line-length = 79\n",
      ".pre-commit-config.yaml": "repos:\n- repo: https://github.com/pycqa/flake8\n  hooks:\n  - id: flake8\n"},
     (79, "flake8 E501 in setup.cfg")),
    # A section whose tool is not in use is a leftover: [flake8] beside ruff, [pep8] / [pycodestyle] beside flake8
    # (flake8 reads only its own section), unless a runner names the tool; a section header is not a runner.
    ({"pyproject.toml": "[tool.ruff.lint]\nselect = ['E']\n", "setup.cfg": "[flake8]\nmax-line-length = 79\n"},
     (88, "ruff E501 in pyproject.toml")),
    ({"setup.cfg": "[pep8]\nmax-line-length = 79\n[flake8]\nmax-line-length = 88\nextend-ignore = E203, E501\n"
                   "extend-select = B950\n"}, (96, "flake8-bugbear B950 in setup.cfg")),
    ({"setup.cfg": "[pep8]\nmax-line-length = 79\n[flake8]\nextend-ignore = E501\n",
      "tox.ini": "[testenv:style]\ncommands = pep8 src\n"}, (79, "pep8 E501 in setup.cfg")),
    ({"setup.cfg": "[pycodestyle]\nmax-line-length = 79\n[flake8]\nextend-ignore = E501\n",
      "tox.ini": "[flake8]\nmax-line-length = 100\n[pycodestyle]\nmax-line-length = 79\n"}, (None, None)),
    ({"tox.ini": "[flake8]\nmax-line-length = 100\n"}, (100, "flake8 E501 in tox.ini")),
    ({"setup.cfg": "[pep8]\nmax-line-length = 79\n[flake8]\nextend-ignore = E501\n",
      ".pre-commit-config.yaml": "  - id: flake8\n    additional_dependencies: [pep8-naming]\n"}, (None, None)),
    ({"setup.cfg": "[pep8]\nmax-line-length = 99\n"}, (99, "pep8 E501 in setup.cfg")),  # nothing supersedes it
    # ruff selects by rule name too (preview mode)
    ({"pyproject.toml": "[tool.ruff]\npreview = true\n[tool.ruff.lint]\nselect = ['E']\n"
                        "extend-ignore = ['line-too-long']\n"}, (None, None)),
    ({"ruff.toml": "line-length = 100\n[lint]\npreview = true\nextend-select = ['line-too-long']\n"},
     (100, "ruff E501 in ruff.toml")),
    ({"pyproject.toml": "[tool.ruff\nbroken"}, (None, None)),
    ({}, (None, None)),
])
def test_project_line_length(tmp_path, files, expected):
    root = _root(tmp_path, files)
    policy = projectconf.project_policy(root)
    assert (policy.limit, policy.source if policy.limit else None) == expected


def test_per_file_ignores_exempt_those_files(tmp_path):
    root = _root(tmp_path, {"pyproject.toml": "[tool.ruff.lint]\nselect = ['E']\n"
                                              "[tool.ruff.lint.per-file-ignores]\n'tests/*' = ['E501']\n",
                            "setup.cfg": ""})
    policy = projectconf.project_policy(root)
    assert policy.applies_to("src/a.py") and not policy.applies_to("tests/test_a.py")
    root2 = _root(tmp_path, {"pyproject.toml": "", "setup.cfg": "[flake8]\nper-file-ignores =\n"
                                                                "    docs/*.py: E501,F401\n"})
    policy = projectconf.project_policy(root2)
    assert policy.applies_to("src/a.py") and not policy.applies_to("docs/conf.py")


def test_ruff_counts_wide_characters_as_two(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 40\n[tool.ruff.lint]\nselect = ['E']\n")
    projectconf.project_policy.cache_clear()
    line = "s = f('" + "漢字" * 9 + "', x)\n"  # 30 characters, 48 columns
    assert "SEN202" in codes(gate_diff(new_file_diff("app.py", line), root=str(tmp_path)))


@pytest.mark.parametrize("line, reported", [
    ("x = f(" + "a, " * 30 + "b)", True),
    ("y = call(argument_one, argument_two)  # type: ignore[attr-defined]  # pyright: ignore[reportGeneral]", False),
    ("y = call(argument_one, argument_two)  # noqa: B008 -- the default is evaluated once, on purpose", False),
    ("y = call(argument_one, argument_two)  # nosec B101 -- this branch is unreachable on every platform", False),
    # coverage's and black's comments are not ruff pragmas: ruff reports the line
    ("y = call(argument_one, argument_two)  # pragma: no cover (platform specific branch, see the docs)", True),
    ("y = call(argument_one, argument_two)  # fmt: skip because this line is aligned by hand on purpose", True),
    ("z = call(argument_one, argument_two, argument_three, argument_four, argument_five)  # type: ignore", True),
    ("# See https://github.com/pallets/werkzeug/blob/main/src/werkzeug/routing/rules.py#L100-L140", False),
    # ruff reports a line long because of a string literal (it can be split into concatenated pieces)
    ('    "a long message that explains exactly what went wrong and how to repair it in the config",', True),
    ("# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception OR MIT OR something-much-longer", False),
    ("**{'first_keyword_argument': first_value, 'second_keyword_argument': second_value}", True),
])
def test_long_line_exemptions_follow_ruff(line, reported):
    cfg = {"style": {"line-length": 60}}
    assert ("SEN202" in codes(gate_new_file("app.py", line + "\n", cfg))) is reported


def test_policy_is_read_once_per_root(tmp_path):
    root = _root(tmp_path, {"pyproject.toml": "[tool.ruff.lint]\nselect = ['E']\n[tool.ruff]\nline-length = 100\n"})
    first = projectconf.project_policy(root)
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 50\n[tool.ruff.lint]\nselect = ['E']\n")
    assert projectconf.project_policy(root) is first
    projectconf.project_policy.cache_clear()
    assert projectconf.project_policy(root).limit == 50


# --- helpers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("lines, expected", [
    (["\ta", "\tb", "    c"], "tab"),
    (["    a", "  b", "\tc"], "space"),
    (["\ta", "    b"], "tab"),  # a tie goes to the first indented line
    ([" * doc", " * doc", "\tcode"], "tab"),  # block-comment bodies are alignment, not indentation
    (["a", "b"], None),
])
def test_indentation_style(lines, expected):
    assert style.indentation_style(enumerate(lines, 1)) == expected


@pytest.mark.parametrize("line, exempt", [
    ("# https://example.com/" + "a" * 200, True),
    ("x = 'https://example.com/" + "a" * 200 + "'", True),
    ("x = '" + "a" * 130 + "'  # see https://example.com/a", False),  # the URL starts past the limit
    ("abcdefghij" * 20, True),  # a single word cannot be wrapped
    (LONG + "  # noqa", True),
    (LONG + "  # noqa: E501, F401", True),
    (LONG + "  # noqa: F401", False),
    (LONG, False),
])
def test_long_line_exemptions(line, exempt):
    verdict = gate_new_file("app.py", line + "\n", {"style": {"line-length": 120}})
    assert ("SEN202" not in codes(verdict)) is exempt


def test_runs():
    assert style._runs([1, 2, 3, 7, 9, 10]) == [(1, 3), (7, 7), (9, 10)]


def test_large_change_has_no_false_positives():
    body = "".join(f"def f{i}(a, b):\n    return a + b  # sum {i}\n\n" for i in range(20000))
    fc = FileChange(path="big.py", old_path=None, status=FileStatus.ADDED, language="python",
                    added={i: ln for i, ln in enumerate(body.split("\n")[:-1], 1)})
    ctx = FileContext(fc, Config(), FilterMode.ADDED, body)
    assert style.check_file(ctx) == []  # speed is measured in benchmarks/


# --- through git and the real CLI ----------------------------------------------------------------

# The intent checks judge messages and tasks, not layout: keep them out of these runs.
QUIET = "[drift]\nenabled = false\n\n[claims]\nenabled = false\n"


def test_cli_reports_style_findings_on_staged_changes(repo):
    repo.write(".sentinel.toml", QUIET)
    repo.write("pyproject.toml", "[tool.ruff]\nline-length = 79\n[tool.ruff.lint]\nselect = ['E']\n")
    repo.write("tabbed.py", "def f():\n\treturn 1\n")
    repo.write("crlf.py", "a = 1\nb = 2\nc = 3\n")
    repo.add(".sentinel.toml", "pyproject.toml", "tabbed.py", "crlf.py")
    repo.commit("init")
    repo.write("tabbed.py", "def f():\n\treturn 1\n\n\ndef g():\n    return 2\n")
    repo.write("crlf.py", "a = 1\nb = 2\nc = 3\r\n")
    repo.write("long.py", "x = '" + "a" * 80 + "'\n")
    repo.add("tabbed.py", "crlf.py", "long.py")
    proc = repo.sentinel("check", "--fail-level", "warning", "--no-memory")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for code in ("SEN201", "SEN202", "SEN204"):
        assert code in proc.stdout
    assert "over the limit of 79 (ruff E501 in pyproject.toml)" in proc.stdout


def test_cli_blocks_wildcard_import(repo):
    repo.write(".sentinel.toml", QUIET)
    repo.write("app.py", "from os.path import *\n")
    repo.add(".sentinel.toml", "app.py")
    proc = repo.sentinel("check", "--no-memory")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "SEN203" in proc.stdout
    repo.write("app.py", "from os.path import join\n")
    repo.add("app.py")
    proc = repo.sentinel("check", "--no-memory")
    assert "SEN203" not in proc.stdout
