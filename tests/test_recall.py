"""Recall on failure: log signals, `sentinel recall --log`, and recall in the gate's reports."""

from __future__ import annotations

import json
import subprocess
import sys

from sentinel.memory.retrieval.logsignals import extract

TRACEBACK = """\
Traceback (most recent call last):
  File "/srv/app/venv/lib/python3.11/site-packages/client/cookiejar.py", line 212, in filter_cookies
    morsel.set(name, value, quote(value))
  File "/usr/lib/python3.11/http/cookies.py", line 352, in set
    raise CookieError('Illegal key %r' % (key,))
http.cookies.CookieError: Illegal key 'a b' at 0x7f3a2b
FAILED tests/test_client.py::test_cookie_quoting_disabled - http.cookies.CookieError: Illegal key 'a b'
"""


def test_log_signals_keep_what_identifies_the_failure():
    sig = extract(TRACEBACK)
    assert sig.exception_types == ["CookieError"]
    assert sig.messages and "Illegal key" in sig.messages[0] and "a b" not in sig.messages[0]
    assert "0x7f3a2b" not in " ".join(sig.messages)
    assert sig.tests == ["test_cookie_quoting_disabled"]
    assert sig.functions == ["filter_cookies", "set"]
    assert "cookiejar" in sig.modules and "srv" not in sig.query()


def test_empty_log_is_a_clean_error(tmp_path):
    log = tmp_path / "ok.log"
    log.write_text("all good\n")
    proc = subprocess.run([sys.executable, "-m", "sentinel", "recall", "--log", str(log)], capture_output=True,
                          text=True)
    assert proc.returncode == 2 and "no failure signals" in proc.stderr


def test_recall_cli_finds_the_cookie_fixes(tmp_path):
    log = tmp_path / "fail.log"
    log.write_text(TRACEBACK)
    proc = subprocess.run([sys.executable, "-m", "sentinel", "recall", "--log", str(log), "-k", "3", "--json"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["signals"]["exception_types"] == ["CookieError"]
    # the bundled corpus has cookie-jar fixes: what clears the threshold is about cookies, with a fix line
    assert 1 <= len(out["results"]) <= 3
    assert all("cookie" in r["problem_summary"].lower() for r in out["results"])
    assert all(r["fix"] and r["score"] >= out["min_score"] and r["source"] == "bundled" for r in out["results"])


def test_failing_gate_reports_similar_fixes_and_recurring_patterns(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    repo.commit()
    repo.write("b.py", "def f():\n    try:\n        g()\n    except:\n        pass\n")
    repo.add("b.py")
    first = repo.sentinel("check", "--format", "json")
    assert first.returncode == 1
    data = json.loads(first.stdout)
    groups = {g["rule"]: g for g in data["recall"]}
    assert "SEN301" in groups
    similar = groups["SEN301"]["similar"]
    assert 1 <= len(similar) <= 3
    assert all(s["card_id"] and s["fix_strategy"] and s["summary"] for s in similar)
    assert groups["SEN301"]["patterns"] == []  # seen once: not yet a recurring pattern
    again = json.loads(repo.sentinel("check", "--format", "json").stdout)
    # re-running the gate on the same staged content is the same occurrence, not a recurrence
    assert {g["rule"]: g for g in again["recall"]}["SEN301"]["patterns"] == []
    # fixing it records a resolution that the pattern reports once the commit exists
    repo.write("b.py", "def f():\n    try:\n        g()\n    except OSError:\n        raise\n")
    repo.add("b.py")
    assert repo.sentinel("check").returncode == 0
    repo.commit("Catch only OSError in f")
    # the same mistake with other names, in the next change: now it recurs
    repo.write("c.py", "def load_settings():\n    try:\n        read_file()\n    except:\n        pass\n")
    repo.add("c.py")
    third = json.loads(repo.sentinel("check", "--format", "json").stdout)
    pats = {g["rule"]: g for g in third["recall"]}["SEN301"]["patterns"]
    assert pats and pats[0]["changes"] == 2 and pats[0]["urgency"] == "medium"
    assert "Catch only OSError in f" in (pats[0]["last_resolution"] or "")


def test_passing_gate_has_no_recall(repo):
    repo.write("ok.py", "x = 1\n")
    repo.add("ok.py")
    proc = repo.sentinel("check", "--format", "json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["recall"] == []


def test_patterns_and_forget_cli(repo):
    for n, name in enumerate(["b", "c", "d"]):  # three changes, each committed anyway
        repo.write(f"{name}.py", f"def f{n}():\n    try:\n        g{n}()\n    except:\n        pass\n")
        repo.add(f"{name}.py")
        assert repo.sentinel("check").returncode == 1
        assert repo.sentinel("check").returncode == 1  # a re-run: no new occurrence
        repo.commit(f"add {name}")
    pats = json.loads(repo.sentinel("memory", "patterns", "--json").stdout)["patterns"]
    sen301 = [p for p in pats if p["rule"] == "SEN301"]
    assert sen301 and (sen301[0]["changes"], sen301[0]["attempts"], sen301[0]["urgency"]) == (3, 3, "high")
    assert sorted(e["file"] for e in sen301[0]["examples"]) == ["b.py", "c.py", "d.py"]
    text = repo.sentinel("memory", "patterns")
    assert text.returncode == 0 and "[high" in text.stdout and "SEN301" in text.stdout and "e.g. main" in text.stdout
    gone = repo.sentinel("memory", "forget", "--all")
    assert gone.returncode == 0 and "forgot 3 run(s)" in gone.stdout
    assert "no recorded failures" in repo.sentinel("memory", "patterns").stdout


EVAL_ONE = "def calc(a):\n    return eval(a, {'__builtins__': {}})\n"
EVAL_TWO = "def total(b):\n    x = 100 - eval(b)\n    return x\n"


def test_two_shapes_of_one_mistake_recur_as_one_pattern(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    repo.commit("base")
    repo.write("calc.py", EVAL_ONE)
    repo.add("calc.py")
    assert repo.sentinel("check").returncode == 1
    repo.commit("calc")
    repo.write("total.py", EVAL_TWO)
    repo.add("total.py")
    data = json.loads(repo.sentinel("check", "--format", "json").stdout)
    [pat] = {g["rule"]: g for g in data["recall"]}["SEN303"]["patterns"]
    assert (pat["changes"], pat["urgency"]) == (2, "medium")
    # the examples say what each attempt wrote, and the committed one its subject
    pats = json.loads(repo.sentinel("memory", "patterns", "--json").stdout)["patterns"]
    [p] = [p for p in pats if p["rule"] == "SEN303"]
    examples = {e["file"]: e for e in p["examples"]}
    assert examples["calc.py"]["code"] == "return eval(a, {'__builtins__': {}})"
    assert examples["calc.py"]["subject"] == "calc" and examples["calc.py"]["paths"] == ["calc.py"]
    assert examples["total.py"]["code"] == "x = 100 - eval(b)" and examples["total.py"]["subject"] is None
    text = repo.sentinel("memory", "patterns").stdout
    assert "x = 100 - eval(b)" in text and '"calc"' in text


def test_the_next_failing_run_of_a_change_shows_its_earlier_attempts(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature/calc")
    tries = ["def calc(expr):\n    return eval(expr)\n",  # 1: eval
             "def calc(expr):\n    try:\n        return int(expr)\n    except:\n        return 0\n",  # 2: bare except
             "def calc(expr):\n    return eval(expr, {'__builtins__': {}})\n"]  # 3: eval again, "sandboxed"
    for n, source in enumerate(tries):
        repo.write("calc.py", source)
        repo.add("calc.py")
        proc = repo.sentinel("check", "--format", "json")
        assert proc.returncode == 1, proc.stderr
        data = json.loads(proc.stdout)
        if n == 0:  # the first attempt has nothing earlier
            assert all(g["earlier_attempts"] == [] for g in data["recall"])
    groups = {g["rule"]: g for g in data["recall"]}
    # the third attempt failed on SEN303 again: the earlier SEN303 attempt is what was tried, not the SEN301 one
    [earlier] = groups["SEN303"]["earlier_attempts"]
    assert (earlier["path"], earlier["line"], earlier["code"]) == ("calc.py", 2, "return eval(expr)")
    # a re-run of the same content is not an earlier attempt of itself
    again = json.loads(repo.sentinel("check", "--format", "json").stdout)
    assert [a["code"] for a in {g["rule"]: g for g in again["recall"]}["SEN303"]["earlier_attempts"]] == [
        "return eval(expr)"]
    text = repo.sentinel("check").stdout
    assert "tried before (" in text and "still failed at calc.py:2: return eval(expr)" in text
    md = repo.sentinel("check", "--format", "markdown").stdout
    assert "tried before (" in md and "`return eval(expr)`" in md
    # memory patterns lists every earlier failed attempt of the change (text and JSON)
    listed = json.loads(repo.sentinel("memory", "patterns", "--json").stdout)
    assert listed["change"] == "feature/calc"
    assert [[f["approach"] for f in a["findings"]] for a in listed["earlier_attempts"]] == [
        ["return eval(expr)"], ["except:"], ["return eval(expr, {'__builtins__': {}})"]]
    out = repo.sentinel("memory", "patterns").stdout
    assert "earlier failed attempts at this change (feature/calc)" in out and "SEN301 calc.py:4  except:" in out
    # once the change passes, a new failure starts with no earlier attempts
    repo.write("calc.py", "import ast\n\n\ndef calc(expr):\n    return ast.literal_eval(expr)\n")
    repo.add("calc.py")
    assert repo.sentinel("check").returncode == 0
    repo.write("calc.py", "def calc(expr):\n    return eval(expr)\n")
    repo.add("calc.py")
    fresh = json.loads(repo.sentinel("check", "--format", "json").stdout)
    assert all(g["earlier_attempts"] == [] for g in fresh["recall"])


def test_a_fix_on_another_branch_is_never_credited(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "A")
    repo.write("b.py", "def f():\n    try:\n        g()\n    except:\n        pass\n")
    repo.add("b.py")
    assert repo.sentinel("check").returncode == 1
    repo.write("b.py", "def f():\n    try:\n        g()\n    except OSError:\n        raise\n")
    repo.add("b.py")
    assert repo.sentinel("check").returncode == 0  # resolved, before its commit exists
    repo.git("stash", "-q")
    repo.git("checkout", "-q", "-b", "B", "main")
    repo.write("c.py", "y = 2\n")
    repo.add("c.py")
    repo.commit("B: unrelated work")
    repo.write("d.py", "z = 3\n")
    repo.add("d.py")
    assert repo.sentinel("check").returncode == 0  # B's commit sits on the same base as A's staged fix
    [p] = json.loads(repo.sentinel("memory", "patterns", "--json").stdout)["patterns"]
    assert p["last_resolution"] == "a commit on A: (no subject)"
    repo.git("reset", "-q", "--hard")
    repo.git("checkout", "-q", "A")
    repo.git("stash", "pop", "-q")
    sha = repo.commit("Catch only OSError in f")
    repo.write("e.py", "w = 4\n")
    repo.add("e.py")
    assert repo.sentinel("check").returncode == 0
    [p] = json.loads(repo.sentinel("memory", "patterns", "--json").stdout)["patterns"]
    assert p["last_resolution"] == f"{sha[:10]} on A: Catch only OSError in f"
