"""First adoption on a mature project: `sentinel check --all-files`, then `sentinel baseline`. The whole tree
is checked as it is, not as a change: what a change leaves undone (a TODO, a stub) is information there, a file
nobody touched is no protected path touched, and idioms of long-kept code (a decorator documented to swallow
errors, `try`/`else`, a default kept on failure, code objects compiled by the code itself) are no errors — while
the same code added by a change is judged as before. Through the installed console script, in a real git
repository."""

from __future__ import annotations

import json

import pytest

from tests.conftest import GitRepo, codes, gate_new_file

# Idioms of a mature project (the kinds the whole-tree runs on click, flask, httpx, jinja, rich, trio, werkzeug,
# yarl reported as errors), one file each.
MATURE = {
    "tests/test_apps/.env": "FOO=bar\n",
    "src/pkg/auth.py": "def digest(auth):\n    # TODO: implement auth-int\n    return auth.upper()\n",
    "src/pkg/base.py": ("class Transport:\n    def handle(self, request):\n        raise NotImplementedError(\n"
                        "            'The handle() method should be implemented.'\n        )\n\n"
                        "class Stream:\n    def close(self):\n        pass\n"),
    "src/pkg/utils.py": ('def safecall(func):\n    """Wraps a function so that it swallows exceptions."""\n\n'
                         "    def wrapper(*args, **kwargs):\n        try:\n            return func(*args, **kwargs)\n"
                         "        except Exception:\n            pass\n        return None\n\n    return wrapper\n"),
    "src/pkg/items.py": ("def as_text(value):\n    try:\n        text = str(value)\n    except Exception:\n"
                         "        pass\n    else:\n        return text.strip()\n    return ''\n"),
    "src/pkg/pretty.py": ("def attributes(obj):\n    result = None\n    if obj is not None:\n        try:\n"
                          "            if hasattr(obj, 'rich'):\n                result = obj.rich()\n"
                          "        except Exception:\n            pass\n    return result\n"),
    "src/pkg/threads.py": ("import ctypes\n\n\ndef load(path):\n"
                           "    # Sometimes the loader finds the path but gives a permission error when\n"
                           "    # accessing it: catching a wider exception in case of more esoteric errors.\n"
                           "    try:\n        lib = ctypes.CDLL(path)\n    except Exception:\n        return None\n"
                           "    return lib\n"),
    "src/pkg/config.py": ("def from_pyfile(filename, namespace):\n    with open(filename, 'rb') as config_file:\n"
                          "        exec(compile(config_file.read(), filename, 'exec'), namespace)\n"
                          "    return namespace\n"),
    "docs/api.rst": "URL\n===\n\n   >>> URL('http://stepan:parol@example.com').password\n   'parol'\n",
    ".builds/alpine.yml": "image: alpine/edge\ntasks:\n  - test: |\n      python -m pytest\n",
}
# ... and what stays an error in a whole tree: a bare except swallowing everything, eval of a string.
REAL = {"src/pkg/risky.py": "def run(expr):\n    try:\n        return eval(expr)\n    except:\n        return None\n"}


@pytest.fixture
def mature(tmp_path, installed_sentinel) -> GitRepo:
    repo = GitRepo(tmp_path / "project", installed_sentinel)
    for path, text in {**MATURE, **REAL}.items():
        repo.write(path, text)
    repo.add(*MATURE, *REAL)
    repo.commit("years of history")
    return repo


def _findings(proc) -> list[dict]:
    return json.loads(proc.stdout)["findings"]


def test_a_whole_tree_reports_what_a_reviewer_would_act_on(mature):
    proc = mature.sentinel("check", "--all-files", "--format", "json", "--no-memory")
    assert proc.returncode == 1, proc.stderr
    found = _findings(proc)
    errors = sorted((f["path"], f["rule"]) for f in found if f["severity"] == "error")
    assert errors == [("src/pkg/risky.py", "SEN301"), ("src/pkg/risky.py", "SEN303")], errors
    assert not [f for f in found if f["rule"] == "SEN107"]  # nothing was touched: no "adds protected path"
    by_path = {f["path"]: f for f in found}
    # the placeholders are shown, as information
    for path, rule in (("src/pkg/auth.py", "SEN401"), ("src/pkg/base.py", "SEN402")):
        assert any(f["path"] == path and f["rule"] == rule and f["severity"] == "info" for f in found), path
    # the deliberate idioms are visible, graded below an error, each saying why
    assert "documents that it swallows errors" in by_path["src/pkg/utils.py"]["message"]
    assert "`else:` block runs only when" in by_path["src/pkg/items.py"]["message"]
    assert "leaves the default" in by_path["src/pkg/pretty.py"]["message"]
    assert "explained in a comment" in by_path["src/pkg/threads.py"]["message"]
    assert "compiled from source" in by_path["src/pkg/config.py"]["message"]
    assert {by_path[p]["severity"] for p in ("src/pkg/utils.py", "src/pkg/items.py", "src/pkg/pretty.py",
                                              "src/pkg/threads.py", "src/pkg/config.py")} == {"warning"}
    assert "docs/api.rst" not in by_path  # a password for example.com in the docs is an example
    assert json.loads(proc.stdout)["passed"] is False


def test_the_same_code_added_by_a_change_is_still_judged_as_a_change(tmp_path, installed_sentinel):
    repo = GitRepo(tmp_path / "fresh", installed_sentinel)
    repo.write("README.md", "x\n")
    repo.add("README.md")
    repo.commit("init")
    for path, text in MATURE.items():
        repo.write(path, text)
    repo.add(*MATURE)
    found = _findings(repo.sentinel("check", "--format", "json", "--no-memory"))
    errors = {(f["path"], f["rule"]) for f in found if f["severity"] == "error"}
    assert ("tests/test_apps/.env", "SEN107") in errors  # adding a .env is touching a protected path
    assert {("src/pkg/auth.py", "SEN401"), ("src/pkg/base.py", "SEN402")} <= errors  # work left undone


def test_a_named_file_the_change_does_not_touch_is_checked_as_it_is(mature):
    mature.write("src/pkg/new.py", "def later():\n    # TODO\n    return 1\n")
    mature.add("src/pkg/new.py")
    proc = mature.sentinel("check", "--format", "json", "--no-memory", "src/pkg/new.py", "src/pkg/auth.py",
                           "tests/test_apps/.env")
    found = {(f["path"], f["rule"]): f["severity"] for f in _findings(proc)}
    assert found[("src/pkg/new.py", "SEN401")] == "error"  # staged: written by this change
    assert found[("src/pkg/auth.py", "SEN401")] == "info"  # untouched, checked whole
    assert ("tests/test_apps/.env", "SEN107") not in found


def test_baseline_after_the_whole_tree_accepts_today_and_never_a_protected_path(mature):
    wrote = mature.sentinel("baseline")
    assert wrote.returncode == 0, wrote.stderr
    again = mature.sentinel("check", "--all-files", "--no-memory")
    assert again.returncode == 0, again.stdout
    assert "in baseline" in again.stdout.splitlines()[-1]
    baseline = json.loads((mature.path / ".sentinel-baseline.json").read_text())
    assert "SEN107" not in json.dumps(baseline)
    # a later change to the protected file is still a protected path touched
    mature.write("tests/test_apps/.env", "FOO=baz\n")
    mature.add("tests/test_apps/.env")
    later = mature.sentinel("check", "--format", "concise", "--no-memory")
    assert later.returncode == 1 and "tests/test_apps/.env:1:1: SEN107 [error]" in later.stdout


@pytest.mark.parametrize("source,severity", [
    ("def f(src):\n    exec(src)\n", "error"),
    ("def f(src, code):\n    exec(code)\n", "error"),  # a parameter of unknown type
    ("def f(items):\n    for code in items:\n        exec(code)\n", "error"),
    ("def f(src):\n    code = compile(src, 'f', 'exec')\n    code = src\n    exec(code)\n", "error"),
    ("def f(src):\n    code = compile(src, '<x>', 'exec')\n    exec(code)\n", "warning"),
    ("from types import CodeType\n\n\ndef f(code: CodeType):\n    exec(code)\n", "warning"),
    ("def f(s):\n    c = compile(s, 'x', 'exec')\n    c = c.replace(co_name='t')\n    exec(c)\n", "warning"),
])
def test_eval_of_a_code_object_the_code_compiled_is_a_warning(source, severity):
    [f] = [f for f in gate_new_file("pkg/run.py", source).findings if f.rule == "SEN303"]
    assert f.severity.value == severity, f.message


@pytest.mark.parametrize("source", [
    # a plain swallowed failure of the main work is still an error
    "def f(x):\n    try:\n        save(x)\n    except Exception:\n        pass\n",
    # a docstring that only mentions errors is no contract to swallow them
    'def f(x):\n    """Raises ValueError on bad input."""\n    try:\n        save(x)\n    except Exception:\n'
    "        pass\n",
    # a default that is not there before the try
    "def f(x):\n    try:\n        result = load(x)\n    except Exception:\n        pass\n    return result\n",
    # work done for its effects: a failure leaves it half done
    "def f(x):\n    result = None\n    try:\n        send(x)\n        result = 1\n    except Exception:\n"
    "        pass\n    return result\n",
    # a comment above the try that says nothing about failing
    "def f(x):\n    # write the record\n    try:\n        save(x)\n    except Exception:\n        pass\n",
])
def test_a_swallowed_failure_without_those_idioms_is_still_an_error(source):
    verdict = gate_new_file("pkg/io.py", source)
    assert "SEN302" in codes(verdict)
    assert next(f for f in verdict.findings if f.rule == "SEN302").severity.value == "error"
