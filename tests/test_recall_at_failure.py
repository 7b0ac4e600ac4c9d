"""Recall at the moment of failure is project-first and placed: after `sentinel memory learn`, a failure in a function
with a past fix shows that fix first, with why and where from; a generic rule card takes at most one slot, is
labelled as general guidance and never pushes out a project card. Through the installed console script, on a real
git history built here; the pieces (where a failure sits) on their own."""

from __future__ import annotations

import json

import pytest

from sentinel.memory.retrieval.site import python_scopes, sites
from sentinel.models import Finding, Severity

from tests.test_learn import commit, run_cli

SERVICE_V1 = '''\
import json
import socket


class Client:
    def __init__(self, host):
        self.host = host

    def fetch(self, path):
        try:
            with socket.create_connection((self.host, 80), timeout=5) as conn:
                conn.sendall(path.encode())
                return conn.recv(65536)
        except OSError as exc:
            raise ConnectionError(f"cannot reach {self.host}") from exc

    def parse(self, body):
        return json.loads(body)


def render(value):
    return str(value)
'''


@pytest.fixture
def service(repo):
    """A project whose history holds a fix of Client.fetch and a fix of Client.parse."""
    commit(repo, "Initial client", {"src/svc/client.py": SERVICE_V1, "tests/test_client.py": "def test_a():\n    pass\n"})
    fetch_fixed = SERVICE_V1.replace("        except OSError as exc:\n",
                                     "        except (OSError, socket.timeout) as exc:\n")
    shas = {"fetch": commit(repo, "Fix Client.fetch hanging when the server never answers (#31)\n\n"
                                  "A timeout was not treated as a connection failure.", {
        "src/svc/client.py": fetch_fixed,
        "news/31.bugfix.rst": "``Client.fetch`` raises ``ConnectionError`` when the server times out instead of "
                              "hanging on a dead socket.\n",
        "tests/test_client.py": "def test_a():\n    pass\n\n\ndef test_fetch_timeout_is_connection_error():\n"
                                "    pass\n"})}
    parse_fixed = fetch_fixed.replace("        return json.loads(body)\n",
                                      "        if not body:\n            return None\n        return json.loads(body)\n")
    shas["parse"] = commit(repo, "Fix Client.parse crash on an empty body (#32)", {
        "src/svc/client.py": parse_fixed,
        "news/32.bugfix.rst": "``Client.parse`` returns ``None`` for an empty response body instead of raising "
                              "``JSONDecodeError``.\n",
        "tests/test_client.py": "def test_a():\n    pass\n\n\ndef test_parse_empty_body():\n    pass\n"})
    proc = run_cli(repo, "memory", "learn", "--json", "--repo-name", "acme/svc")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["runs"][0]["counts"]["cards"] == 2
    return repo, shas


def gate(repo, text: str) -> dict:
    repo.write("src/svc/client.py", text)
    repo.add("src/svc/client.py")
    proc = run_cli(repo, "check", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_a_failure_in_a_function_shows_that_functions_past_fix_first(service):
    repo, shas = service
    current = (repo.path / "src/svc/client.py").read_text()
    report = gate(repo, current.replace("        except (OSError, socket.timeout) as exc:\n", "        except:\n"))
    group = next(g for g in report["recall"] if g["rule"] == "SEN301")
    first = group["similar"][0]
    assert first["source"] == "project" and first["commit"] == shas["fetch"]
    assert "this function, Client.fetch" in first["why"]
    assert first["score"] >= 0.25 and first["date"] and len(first["date"]) == 10  # memory.project-min-score
    sources = [s["source"] for s in group["similar"]]
    assert sources.count("guidance") <= 1
    # the guidance slot comes after every past fix, never instead of one
    assert sources.index("guidance") == len(sources) - 1 if "guidance" in sources else True
    # the other function's fix of the same file may follow, after the fix of the failing function
    parse = [s for s in group["similar"] if s["commit"] == shas["parse"]]
    assert not parse or group["similar"].index(parse[0]) > 0

    text = run_cli(repo, "check")
    assert text.returncode == 1
    out = text.stdout
    block = out[out.index("Experience memory"):]
    assert "past fix of this function, Client.fetch" in block and shas["fetch"][:10] in block
    assert "this project" in block.splitlines()[0]


def test_the_other_function_gets_its_own_fix(service):
    repo, shas = service
    current = (repo.path / "src/svc/client.py").read_text()
    broken = current.replace("        if not body:\n            return None\n        return json.loads(body)\n",
                             "        try:\n            return json.loads(body)\n        except:\n"
                             "            return None\n")
    group = next(g for g in gate(repo, broken)["recall"] if g["rule"] == "SEN301")
    assert group["similar"][0]["commit"] == shas["parse"]
    assert "Client.parse" in group["similar"][0]["why"]


def test_without_project_memory_a_rule_card_is_one_labelled_slot(repo):
    commit(repo, "Initial", {"app/jobs.py": "def run(job):\n    return job()\n"})
    repo.write("app/jobs.py", "def run(job):\n    try:\n        return job()\n    except:\n        return None\n")
    repo.add("app/jobs.py")
    proc = run_cli(repo, "check", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    group = next(g for g in report["recall"] if g["rule"] == "SEN301")
    guidance = [s for s in group["similar"] if s["source"] == "guidance"]
    assert len(guidance) <= 1
    assert all(s["score"] >= 0.35 for s in group["similar"] if s["source"] != "guidance")  # memory.min-score
    assert all(s["source"] != "project" for s in group["similar"])
    if guidance:
        assert "general guidance for SEN301" in guidance[0]["why"]
        md = run_cli(repo, "check", "--format", "markdown")
        assert "general guidance" in md.stdout


def test_memory_brief_shows_what_the_failing_run_showed(service):
    repo, shas = service
    current = (repo.path / "src/svc/client.py").read_text()
    report = gate(repo, current.replace("        except (OSError, socket.timeout) as exc:\n", "        except:\n"))
    group = next(g for g in report["recall"] if g["rule"] == "SEN301")
    brief = run_cli(repo, "memory", "brief", "--json")
    assert brief.returncode == 0, brief.stderr
    cards = json.loads(brief.stdout)["similar_fixes"]
    assert cards and cards[0]["id"] == group["similar"][0]["card_id"]
    assert cards[0]["source"] == "project" and cards[0]["commit"] == shas["fetch"]
    assert "Client.fetch" in cards[0]["why"]


def test_python_scopes_are_exact():
    text = ("import x\n\n\nclass A:\n    @property\n    def b(self):\n        return 1\n\n"
            "    class C:\n        def d(self):\n            '''\nnot code at column 0\n'''\n"
            "            return 2\n\n\ndef e():\n    pass\n\nif x:\n    def f():\n        pass\n")
    scopes = python_scopes(text, [1, 5, 7, 10, 12, 14, 18, 22])
    assert scopes[1] == []
    assert scopes[5] == ["A.b", "A"]  # a decorator belongs to its function
    assert scopes[7] == ["A.b", "A"]
    assert scopes[12] == ["A.C.d", "A.C", "A"] and scopes[14] == ["A.C.d", "A.C", "A"]
    assert scopes[18] == ["e"] and scopes[22] == ["f"]
    assert python_scopes("def broken(:\n", [1]) == {}


def test_sites_name_the_place_and_the_code_around_it():
    text = SERVICE_V1.replace("        except OSError as exc:\n", "        except:\n")
    line = text.splitlines().index("        except:") + 1
    f = Finding(rule="SEN301", check="chaos", severity=Severity.ERROR, path="src/svc/client.py", line=line,
                message="bare except")
    (site,) = sites([f], text, "python")
    assert site.scope == ["Client.fetch", "Client"]
    assert site.symbols()[0] == "svc/client.py::Client.fetch"  # as the index keys it: no src/
    assert site.names[0] == "fetch" and "recv" in site.names
    # without the text (a diff whose file is not here) the hunk header's definition stands in, with no scope
    (bare,) = sites([f], None, "python", hunk_header="def fetch(self, path):")
    assert bare.scope == [] and bare.names == ["fetch"]


def test_the_projects_threshold_is_its_own_setting(service):
    """memory.project-min-score holds for the project's own cards, memory.min-score for other projects' fixes:
    raising the first hides the project's fix (and says nothing false about it), the second is untouched."""
    repo, shas = service
    repo.write(".sentinel.toml", "[memory]\nproject-min-score = 1.0\n")
    current = (repo.path / "src/svc/client.py").read_text()
    report = gate(repo, current.replace("        except (OSError, socket.timeout) as exc:\n", "        except:\n"))
    group = next(g for g in report["recall"] if g["rule"] == "SEN301")
    assert all(s["source"] != "project" for s in group["similar"])
    assert all(s["score"] >= 0.35 for s in group["similar"] if s["source"] == "bundled")
    repo.write(".sentinel.toml", "[memory]\nproject-min-score = 2\n")
    proc = run_cli(repo, "check", "--format", "json")
    assert proc.returncode == 2 and "memory.project-min-score" in proc.stderr
