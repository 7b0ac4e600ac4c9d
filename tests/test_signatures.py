"""Failure signatures on what the checks really report: a signature is the rule and the tokens of its message
that name the mechanism, not the offending line's shape and not the author's names."""

from __future__ import annotations

import ast
import builtins
import io
import sys
import tokenize

import pytest

from sentinel.checks import all_rules
from sentinel.memory.hypotheses.signature import mechanism_of, normalize_code, signature
from sentinel.redact import redact
from tests.conftest import gate_new_file


def _sigs(path: str, source: str, rule: str | None = None, config: dict | None = None) -> list[str]:
    verdict = gate_new_file(path, source, config)
    return sorted({signature(f.rule, f.message, f.code) for f in verdict.findings if rule is None or f.rule == rule})


def test_the_lines_shape_is_not_in_the_signature():
    a = _sigs("a.py", "def f(a):\n    return eval(a, {'__builtins__': {}})\n", "SEN303")
    b = _sigs("b.py", "def g(b):\n    x = 100 - eval(b)\n    return int(x)\n", "SEN303")
    c = _sigs("c.py", "def h(src):\n    print(float(eval(src.strip())))\n", "SEN303")
    assert len(a) == 1 and a == b == c
    assert mechanism_of(a[0]) == "`eval()` runs arbitrary code from a string"


# (rule, what one mistake looks like, the same mistake elsewhere, written otherwise)
SAME = [
    ("SEN301", "def f():\n    try:\n        g()\n    except:\n        pass\n",
     "def load(path):\n    try:\n        with open(path) as fh:\n            return fh.read()\n    except:\n"
     "        return None\n"),
    ("SEN302", "def f(c):\n    try:\n        c.refresh()\n    except Exception:\n        pass\n",
     "def sync(store):\n    try:\n        store.push(1, 2)\n    except Exception:\n        pass\n"),
    ("SEN304", "password = 'hunter2hunter2'\n", "class C:\n    db_password = \"x9!kq-Zt7#ws\"\n"),
    ("SEN306", "import subprocess\ndef r(cmd):\n    subprocess.run(cmd, shell=True)\n",
     "import subprocess\ndef build(target):\n    return subprocess.run('make ' + target, shell=True, check=True)\n"),
    ("SEN103", "import shutil\ndef clean(p):\n    shutil.rmtree(p)\n",
     "import shutil\ndef wipe(cache_dir):\n    if cache_dir:\n        shutil.rmtree(cache_dir)\n"),
    ("SEN305", "def f(d):\n    return d.get('k').strip()\n", "def g(conf):\n    name = conf.get('name').upper()\n"),
    ("SEN402", "def export():\n    raise NotImplementedError\n",
     "class Shape:\n    def area(self):\n        raise NotImplementedError\n"),
]


@pytest.mark.parametrize("rule,one,other", SAME, ids=[s[0] for s in SAME])
def test_one_mistake_written_otherwise_is_one_signature(rule, one, other):
    first, second = _sigs("one.py", one, rule), _sigs("other.py", other, rule)
    assert len(first) == 1 and first == second


# (rule, snippets whose mechanisms differ: each must be its own signature)
APART = [
    ("SEN303", ["def f(c):\n    return eval(c)\n", "def f(c):\n    exec(c)\n"]),
    ("SEN301", ["def f():\n    try:\n        g()\n    except:\n        pass\n",  # swallows
                "def f():\n    try:\n        g()\n    except:\n        log()\n        raise\n",  # re-raises
                "def f(sock):\n    try:\n        sock.close()\n    except:\n        pass\n",  # best-effort cleanup
                "try:\n    import ujson as json\nexcept:\n    json = None\n"]),  # optional import
    ("SEN304", ["TOKEN = 'ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'\n", "DB = 'postgresql://u:Sup3rS3cret@db/x'\n",
                "password = 'hunter2hunter2'\n"]),
    ("SEN306", ["import subprocess\ndef r(cmd):\n    subprocess.run(cmd, shell=True)\n",
                "import os\ndef r(x):\n    os.system('ls ' + x)\n"]),
    ("SEN103", ["import shutil\ndef c(p):\n    shutil.rmtree(p)\n", "import os\ndef c(p):\n    os.remove(p)\n"]),
    ("SEN305", ["def f(d):\n    return d.get('k').strip()\n",
                "import re\ndef f(s):\n    return re.match('a', s).group(0)\n"]),
]


@pytest.mark.parametrize("rule,snippets", APART, ids=[a[0] for a in APART])
def test_different_mechanisms_stay_apart(rule, snippets):
    found = [_sigs(f"m{n}.py", src, rule) for n, src in enumerate(snippets)]
    assert all(len(s) == 1 for s in found), found
    assert len({s[0] for s in found}) == len(snippets), found


# --- every rule's own example, with the author's names changed --------------------------------------------

_BUILTINS = set(dir(builtins))


def _author_names(source: str) -> set[str]:
    """The names the example's author chose: defined, assigned, passed or read, that are no builtin, module or
    dunder."""
    tree = ast.parse(source)
    imported, names = set(), set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            imported.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, ast.arg):
            names.add(n.arg)
        elif isinstance(n, ast.Name):
            names.add(n.id)
        elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
            names.add(n.attr)
    return {x for x in names - imported - _BUILTINS - set(sys.stdlib_module_names)
            if not x.startswith("__") and x not in ("self", "cls")}


def _renamed(source: str, names: set[str]) -> str:
    toks = [t._replace(string=f"zq_{t.string[::-1]}_v2") if t.type == tokenize.NAME and t.string in names else t
            for t in tokenize.generate_tokens(io.StringIO(source).readline)]
    return tokenize.untokenize(toks)


EXAMPLES = [r for r in all_rules() if r.example_path.endswith(".py") and r.check != "llm" and not r.example_message
            and r.example_before is None]


@pytest.mark.parametrize("rule", EXAMPLES, ids=[r.code for r in EXAMPLES])
def test_a_rules_example_with_other_names_keeps_its_signature(rule):
    names = _author_names(rule.example)
    config = rule.example_config or None
    before = _sigs(rule.example_path, rule.example, rule.code, config)
    after = _sigs(rule.example_path, _renamed(rule.example, names), rule.code, config)
    assert before, f"{rule.code}'s example does not fire"
    assert after == before
    for name in names:  # no name of the author reaches the signature
        assert all(name not in s.split("|", 1)[1].replace("<id>", " ").split() for s in before), (name, before)


def test_the_normalized_line_gives_the_signature_the_raw_line_gives():
    """Stored findings of schema 4 kept their line only normalized: re-keyed from it they get the signature a
    new run computes from the raw line."""
    cases = [r for r in EXAMPLES] + []
    seen = 0
    for rule in cases:
        for f in gate_new_file(rule.example_path, rule.example, rule.example_config or None).findings:
            raw = signature(f.rule, f.message, f.code)
            assert signature(f.rule, f.message, normalize_code(redact(f.code))) == raw, (f.rule, f.code)
            seen += 1
    assert seen >= len(cases)


def test_normalize_code_is_idempotent():
    for line in ["return eval(a, {'__builtins__': {}})", "x = 100 - eval(b)", "os.kill(pid, signal.SIGKILL)",
                 "subprocess.run(f'make {t}', shell=True)", "except (OSError, ValueError) as exc:",
                 "cur.execute('DROP TABLE %s' % t)  # 2024-01-01", r"p = 'C:\\Users\\bob\\x.py'"]:
        once = normalize_code(line)
        assert normalize_code(once) == once, line


def test_a_credential_on_the_line_never_reaches_the_signature():
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    sig = signature("SEN304", f"GitHub token {token} in the change", f"TOKEN = '{token}'")
    assert token not in sig and redact(sig) == sig
