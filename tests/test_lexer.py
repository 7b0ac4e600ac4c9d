"""The fast lexer must agree with Python's own tokenizer on where comments and strings are.

Reference: ``tokenize`` on real, well-formed source (stdlib modules) and on generated
sources mixing every quote style, prefixes, escapes, ``#`` inside strings and quotes inside
comments. Other languages are pinned by hand-written cases.
"""

from __future__ import annotations

import importlib
import inspect
import io
import os
import tokenize
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sentinel.lexer import lex

CORPUS_MODULES = ["json", "argparse", "email", "textwrap", "tokenize", "inspect", "dataclasses", "string",
                  "configparser", "difflib"]


def _corpus_files() -> list[str]:
    files: list[str] = []
    for name in CORPUS_MODULES:
        module = importlib.import_module(name)
        source = inspect.getsourcefile(module)
        if source is None:
            continue
        if os.path.basename(source) == "__init__.py":  # a package: every module in it
            folder = os.path.dirname(source)
            files.extend(os.path.join(folder, f) for f in sorted(os.listdir(folder)) if f.endswith(".py"))
        else:
            files.append(source)
    return files


CORPUS = _corpus_files()


@cache
def _source(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def reference(source: str) -> tuple[dict[int, str], set[int], set[int]]:
    """(comments by line, lines covered by strings, lines starting inside a string) per tokenize."""
    comments: dict[int, str] = {}
    strings: set[int] = set()
    inner: set[int] = set()
    fstring_start = getattr(tokenize, "FSTRING_START", None)  # 3.12+ splits f-strings into parts
    fstring_end = getattr(tokenize, "FSTRING_END", None)
    depth, opened = 0, 0
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and depth == 0:
            comments[tok.start[0]] = tok.string
        elif tok.type == tokenize.STRING and depth == 0:
            strings.update(range(tok.start[0], tok.end[0] + 1))
            inner.update(range(tok.start[0] + 1, tok.end[0] + 1))
        elif tok.type == fstring_start:
            opened = tok.start[0] if depth == 0 else opened
            depth += 1
        elif tok.type == fstring_end:
            depth -= 1
            if depth == 0:
                strings.update(range(opened, tok.end[0] + 1))
                inner.update(range(opened + 1, tok.end[0] + 1))
    return comments, strings, inner


def assert_agrees(source: str) -> None:
    comments, strings, inner = reference(source)
    lexed = lex(source, "python")
    assert lexed.comments == comments
    assert lexed.string_lines == strings
    assert lexed.string_inner == inner
    masked = lexed.code
    for n, line in enumerate(source.split("\n"), 1):
        assert len(masked[n]) == len(line), f"line {n}: code view must keep columns"
        assert "#" not in masked[n] or n not in comments


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: os.path.relpath(p, os.path.dirname(os.__file__)))
def test_agrees_with_tokenize_on_the_stdlib(path):
    assert_agrees(_source(path))


def test_corpus_is_real():
    assert len(CORPUS) >= 15
    assert sum(_source(p).count("\n") for p in CORPUS) > 20000


# --- generated sources ------------------------------------------------------------------------

_TEXT = st.text(alphabet=st.sampled_from(list("ab #'\"\\\tx{}:/*-`")), max_size=12)
_PREFIX = st.sampled_from(["", "r", "b", "rb", "f", "u", "R", "Br"])


@st.composite
def _literal(draw) -> str:
    prefix = draw(_PREFIX)
    text = draw(_TEXT).replace("{", "").replace("}", "")
    if draw(st.booleans()):  # single-line literal: let repr pick quotes and escapes
        body = repr(text)
        return ("" if "r" in prefix.lower() or "b" in prefix.lower() else prefix) + body
    quote = draw(st.sampled_from(['"""', "'''"]))
    lines = draw(st.lists(_TEXT, min_size=1, max_size=3))
    body = "\n".join(x.replace("\\", "").replace(quote[0], "") for x in lines)
    return f"{prefix.replace('b', '').replace('B', '')}{quote}{body}{quote}"


@st.composite
def _statement(draw) -> str:
    kind = draw(st.sampled_from(["assign", "comment", "assign_comment", "call", "indented_comment"]))
    comment = "#" + draw(_TEXT).replace("\n", "")
    if kind == "comment":
        return comment
    if kind == "indented_comment":
        return "if x:\n    " + comment + "\n    pass"
    lit = draw(_literal())
    if kind == "assign":
        return f"x = {lit}"
    if kind == "call":
        return f"f({lit}, {draw(_literal())})"
    return f"x = {lit}  {comment}"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_statement(), min_size=1, max_size=8))
def test_agrees_with_tokenize_on_generated_sources(statements):
    source = "\n".join(statements) + "\n"
    try:
        compile(source, "<generated>", "exec")
    except SyntaxError:
        return  # only well-formed code has a reference answer
    assert_agrees(source)


@pytest.mark.parametrize("source", [
    'if"x":\n    pass\n',  # a keyword glued to a string
    's = "a # not a comment"  # a comment\n',
    "s = 'it''s'  # adjacent literals\n",
    's = """\n# inside a docstring\n"""  # after\n',
    "s = r'\\'  # raw'\n",
    's = "\\\n# continued string"\n',
    "x = f'{a!r:#x}'  # format spec\n",
    "d = {'#': 1}\n",
])
def test_tricky_python(source):
    assert_agrees(source)


def test_string_inner_lines_are_the_continuations_only():
    lexed = lex('def f():\n    """Doc.\n\n    More.\n    """\n    return "x"\n', "python")
    assert lexed.string_lines == {2, 3, 4, 5, 6}
    assert lexed.string_inner == {3, 4, 5}


# --- other languages -------------------------------------------------------------------------


def test_javascript_comments_and_strings():
    src = ("const url = 'http://example.com'; // real comment\n"
           "/* block\n   comment */ let x = 1;\n"
           "const t = `line one // not a comment\n${x} line two`;\n"
           'const s = "it\\"s // still a string";\n')
    lexed = lex(src, "javascript")
    assert lexed.comments == {1: "// real comment", 2: "/* block", 3: "   comment */"}
    assert "let x = 1;" in lexed.code_line(3)
    assert 4 in lexed.string_lines and 5 in lexed.string_inner
    assert "//" not in lexed.code_line(4) and 4 not in lexed.comments and 5 not in lexed.comments
    assert 6 not in lexed.comments and "still" not in lexed.code_line(6)


def test_typescript_and_go_use_slash_comments():
    assert lex("let a: number = 1 // n\n", "typescript").comments == {1: "// n"}
    go = lex("s := `raw # string\n// not a comment`\nx := '\"' // c\n", "go")
    assert go.comments == {3: "// c"}
    assert go.string_inner == {2}


def test_shell_hash_comments():
    src = ('echo "a # b" # comment\n'
           "echo $# ${#arr[@]} a#b\n"
           "  # indented comment\n"
           "echo 'x # y'\n")
    lexed = lex(src, "shell")
    assert lexed.comments == {1: "# comment", 3: "# indented comment"}
    assert "$#" in lexed.code_line(2) and "${#arr" in lexed.code_line(2)


def test_rust_lifetimes_are_not_strings():
    src = "fn f<'a>(x: &'a str) -> &'a str { x } // TODO later\nlet c = '\"'; // quote char\n"
    lexed = lex(src, "rust")
    assert lexed.comments == {1: "// TODO later", 2: "// quote char"}


def test_sql_comments():
    lexed = lex("select '--not' from t -- real\n/* a\nb */ select 1;\n", "sql")
    assert lexed.comments == {1: "-- real", 2: "/* a", 3: "b */"}


def test_unknown_language_has_no_comments():
    lexed = lex("# heading\ntext\n", "unknown")
    assert lexed.comments == {} and lexed.code_line(1) == "# heading"


def test_crlf_lines_keep_comment_text_clean():
    lexed = lex("x = 1  # c\r\ny = 'a'\r\n", "python")
    assert lexed.comments == {1: "# c"}
    assert lexed.string_lines == {2}


# --- linear time on hostile lines, same tokens as a plain search ------------------------------------

def _plain_search_tokens(text: str, language: str) -> list[tuple[int, int, str]]:
    """The reference: every token kind of the language as one regex, searched from each position in
    turn (what the lexer did before it switched failed kinds off; quadratic on hostile lines)."""
    import re

    from sentinel import lexer

    syntax = lexer._pattern(language)
    regex = "|".join(f"(?P<k{i}>{kind[1]})" for i, kind in enumerate(syntax.kinds))
    return [(m.start(), m.end(), syntax.kinds[int(m.lastgroup[1:])][0])
            for m in re.compile(regex, syntax.flags).finditer(text)]


_HOSTILE = st.lists(st.sampled_from(['"', "'", "\\", "\n", "#", "/", "*", "`", "a", " ", "-", '"""', "'''", "/*", "*/",
                                     "//", "--", '\\"', "\\'", "\r\n", "x#", "$#"]), max_size=60).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_HOSTILE, st.sampled_from(["python", "shell", "javascript", "rust", "sql"]))
def test_switching_failed_kinds_off_finds_the_same_tokens(text, language):
    from sentinel import lexer

    assert list(lexer._pattern(language).tokens(text)) == _plain_search_tokens(text, language)


@pytest.mark.parametrize("language", ["python", "shell", "javascript", "rust", "sql", "toml"])
@pytest.mark.parametrize("unit", ['\\"', "\\'", '"""\\"', "'''\\'", "/*", "`\\`"])
def test_unterminated_literals_cost_linear_time(language, unit):
    # 200 KB of openers that never close: a plain search retries from each one (hours); this takes
    # a fraction of a second. The bound is generous for a shared CI machine.
    import time

    text = unit * (200_000 // len(unit)) + "\n"
    t0 = time.perf_counter()
    lex(text, language)
    assert time.perf_counter() - t0 < 10
