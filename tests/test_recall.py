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
