"""`sentinel mcp`: a real MCP client session (the official SDK's stdio client) against the installed
`sentinel` console script, in real git repositories."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.conftest import _INSTALLED  # the non-editable install's console script

GITHUB_TOKEN = "ghp_" + "Zq8Rt2Lm5Vx9Bn3Kc7Hd1Fg4Js6Pw0Ya2Ue8"

TOOLS = {"check_change", "preview_fixes", "get_project_brief", "search_experience", "read_experience_card",
         "explain_rule"}


def session(repo_path, scenario, args=("mcp",), env=None):
    """Start `sentinel mcp` in the repository, run `scenario(client)`, return what it returns."""
    out = {}

    async def main():
        base = {k: v for k, v in os.environ.items() if not k.startswith("SENTINEL_")}
        params = StdioServerParameters(command=_INSTALLED["path"], args=list(args), cwd=str(repo_path),
                                       env={**base, **(env or {})})
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as client:
                    await client.initialize()
                    out["value"] = await scenario(client)

    anyio.run(main)
    return out["value"]


def text_of(result) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def tree_state(root: Path) -> dict[str, str]:
    """Every file under the repository, .git included, with a digest of its bytes."""
    state = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            state[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return state


def _failing_repo(repo):
    repo.write("app/__init__.py", "")
    repo.write("app/load.py", "def load(path):\n    with open(path) as fh:\n        return fh.read()\n")
    repo.add("app/__init__.py", "app/load.py")
    repo.commit("initial")
    repo.write("app/load.py", "def load(path):\n    try:\n        with open(path) as fh:\n"
                              "            return fh.read()\n    except:\n        return ''\n")
    repo.add("app/load.py")


def test_tools_are_listed_for_agents_and_read_only(repo):
    _failing_repo(repo)

    async def scenario(client):
        return (await client.list_tools()).tools

    listed = session(repo.path, scenario)
    assert {t.name for t in listed} == TOOLS
    for tool in listed:
        assert len(tool.description) > 80, tool.name  # written for an agent to choose by
        assert tool.annotations.read_only_hint is True and tool.annotations.destructive_hint is False
        assert tool.input_schema["type"] == "object"
    check = next(t for t in listed if t.name == "check_change")
    props = check.input_schema["properties"]
    assert {"range", "diff", "task", "message", "fail_level", "filter_mode"} <= set(props)
    assert "staged" in check.description


def test_check_change_returns_structured_findings_and_writes_nothing(repo):
    _failing_repo(repo)
    head = repo.git("rev-parse", "HEAD").strip()
    before = tree_state(repo.path)

    async def scenario(client):
        staged = await client.call_tool("check_change", {})
        diff_text = repo.git("diff", "--cached")
        as_diff = await client.call_tool("check_change", {"diff": diff_text, "fail_level": "warning"})
        brief = await client.call_tool("get_project_brief", {})
        return staged, as_diff, brief

    staged, as_diff, brief = session(repo.path, scenario)
    assert not staged.is_error, text_of(staged)
    data = staged.structured_content
    assert data["outcome"] == "failed" and data["passed"] is False
    [finding] = [f for f in data["findings"] if f["rule"] == "SEN301"]
    assert finding == {**finding, "path": "app/load.py", "line": 5, "severity": "error", "blocking": True,
                       "check": "chaos", "code": "except:", "fix": "safe"}
    assert finding["hint"]
    assert {c["check"] for c in data["checks"]} >= {"jail", "style", "chaos", "placeholder"}
    # The same result as text, for clients that do not read structured content.
    assert json.loads(text_of(staged))["findings"] == data["findings"]
    # A failing run recalls similar past fixes for the rule, as the CLI does.
    assert any(g["rule"] == "SEN301" and g["similar_fixes"] for g in data["recall"])
    assert not as_diff.is_error and as_diff.structured_content["findings"][0]["rule"] == "SEN301"
    assert not brief.is_error
    # Read-only: no file of the work tree or of .git changed, nothing staged or committed.
    assert tree_state(repo.path) == before
    assert repo.git("rev-parse", "HEAD").strip() == head
    assert repo.git("diff", "--cached", "--name-only").split() == ["app/load.py"]


def test_preview_fixes_returns_a_diff_that_applies_and_writes_nothing(repo):
    _failing_repo(repo)
    repo.write("app/load.py", (repo.path / "app/load.py").read_text() + "\n\ndef run(s):\n    return eval(s)\n")
    repo.add("app/load.py")
    before = tree_state(repo.path)

    async def scenario(client):
        return (await client.call_tool("preview_fixes", {}), await client.call_tool("preview_fixes", {"unsafe": True}))

    safe, unsafe = session(repo.path, scenario)
    data = safe.structured_content
    assert "-    except:\n+    except Exception:\n" in data["diff"] and "literal_eval" not in data["diff"]
    assert [(f["rule"], f["line"], f["safety"]) for f in data["fixes"]] == [("SEN301", 5, "safe")]
    assert data["unsafe_fixes_not_shown"] == 1
    assert "+    return ast.literal_eval(s)\n" in unsafe.structured_content["diff"]
    assert tree_state(repo.path) == before
    applied = subprocess.run(["git", "apply", "--check", "-"], cwd=repo.path, input=data["diff"], text=True,
                             capture_output=True)
    assert applied.returncode == 0, applied.stderr


def test_check_change_on_a_range_and_a_clean_change(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    base = repo.commit("base")
    repo.write("a.py", "from os.path import *\n\nprint(join('a', 'b'))\n")
    repo.add("a.py")
    repo.commit("wildcard")
    repo.write("b.py", "y = 2\n")
    repo.add("b.py")

    async def scenario(client):
        return (await client.call_tool("check_change", {"range": f"{base}..HEAD"}),
                await client.call_tool("check_change", {}))

    rng, clean = session(repo.path, scenario)
    data = rng.structured_content
    assert data["outcome"] == "failed" and [f["rule"] for f in data["findings"]] == ["SEN203"]
    assert data["findings"][0]["line"] == 1 and "range" in data["summary"]
    assert clean.structured_content["outcome"] == "passed" and clean.structured_content["findings"] == []
    assert clean.structured_content["recall"] == []


def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(repo):
    _failing_repo(repo)

    async def scenario(client):
        calls = [
            ("check_change", {"range": "--output=/tmp/x..HEAD"}),
            ("check_change", {"range": "nosuchbranch..HEAD"}),
            ("check_change", {"range": "HEAD"}),
            ("check_change", {"range": "HEAD~1..HEAD", "diff": "x"}),
            ("check_change", {"diff": "this is not a diff\n"}),
            ("check_change", {"fail_level": "fatal"}),
            ("check_change", {"max_findings": 0}),
            ("check_change", {"max_findings": "many"}),
            ("check_change", {"diff": "--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -0,0 +1 @@\n+x\n"}),
            ("preview_fixes", {"range": "nosuchbranch..HEAD"}),
            ("preview_fixes", {"unsafe": "sometimes"}),
            ("search_experience", {"query": ["a", "list"]}),
            ("search_experience", {"query": "   "}),
            ("search_experience", {"query": "x", "k": 1000}),
            ("search_experience", {"query": "x", "rule": "not a rule"}),
            ("read_experience_card", {"id": "../../etc/passwd"}),
            ("read_experience_card", {"id": "fx-does-not-exist"}),
            ("explain_rule", {"code": "SEN999"}),
            ("explain_rule", {}),
            ("no_such_tool", {}),
        ]
        results = [(name, args, await client.call_tool(name, args)) for name, args in calls]
        after = await client.call_tool("explain_rule", {"code": "sen301"})
        return results, after

    results, after = session(repo.path, scenario)
    for name, args, result in results:
        assert result.is_error, (name, args, text_of(result))
        assert "Traceback" not in text_of(result)
    messages = {json.dumps(args): text_of(result) for _, args, result in results}
    assert "cannot start with '-'" in messages[json.dumps({"range": "--output=/tmp/x..HEAD"})]
    assert "unknown revision" in messages[json.dumps({"range": "nosuchbranch..HEAD"})]
    assert "either range or diff" in messages[json.dumps({"range": "HEAD~1..HEAD", "diff": "x"})]
    assert "SEN301" in messages[json.dumps({"code": "SEN999"})]  # the error lists the codes that exist
    assert not after.is_error and after.structured_content["name"] == "bare-except"
    assert after.structured_content["use_instead"] and after.structured_content["rationale"]


def test_secrets_are_redacted_in_every_tool_result(repo):
    repo.write("a.py", "x = 1\n")
    repo.write(".sentinel.toml", "[style]\nline-length = 100\n")  # so that the long line is a finding too
    repo.add("a.py", ".sentinel.toml")
    repo.commit("base")
    # The token is reported by the credential rule (which masks it) and its line is also too long and
    # ends in whitespace: those findings carry the line too, and must not leak it either.
    line = f"GITHUB = '{GITHUB_TOKEN}'  # " + "padding " * 16 + " "
    repo.write("a.py", f"x = 1\n{line}\n")
    repo.add("a.py")

    async def scenario(client):
        return [await client.call_tool("check_change", {"filter_mode": "nofilter", "fail_level": "info"}),
                await client.call_tool("check_change", {"diff": repo.git("diff", "--cached")}),
                await client.call_tool("search_experience", {"query": f"leaked token {GITHUB_TOKEN}"})]

    results = session(repo.path, scenario)
    rules = {f["rule"] for f in results[0].structured_content["findings"]}
    assert {"SEN304", "SEN202"} <= rules
    for result in results:
        assert GITHUB_TOKEN not in text_of(result)
        assert GITHUB_TOKEN not in json.dumps(result.structured_content)
        assert GITHUB_TOKEN[4:20] not in json.dumps(result.structured_content)


def test_search_and_read_a_card_whole(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    repo.commit("base")

    async def scenario(client):
        found = await client.call_tool("search_experience", {"query": "Ctrl-C ignored because a bare except "
                                                                      "catches KeyboardInterrupt", "k": 3})
        card_id = found.structured_content["results"][0]["id"]
        return found, await client.call_tool("read_experience_card", {"id": card_id})

    found, card = session(repo.path, scenario)
    hits = found.structured_content["results"]
    # scores are calibrated: only hits above the threshold come back (at most k)
    assert 1 <= len(hits) <= 3 and all(h["id"] and h["summary"] and h["fix"] for h in hits)
    assert all(h["source"] == "bundled" and h["score"] >= 0.35 for h in hits)
    assert any("SEN301" in json.dumps(h) or "except" in h["summary"].lower() for h in hits)
    whole = card.structured_content
    assert whole["card"]["id"] == hits[0]["id"]
    assert whole["card"]["root_cause"] and whole["card"]["fix_strategy"] and whole["card"]["provenance"]
    assert "Root cause" in whole["text"]


def test_brief_lists_earlier_failed_attempts_and_recurring_patterns(repo):
    repo.write("app/__init__.py", "")
    repo.write("app/load.py", "def load(path):\n    return open(path).read()\n")
    repo.add("app/__init__.py", "app/load.py")
    repo.commit("initial")
    repo.git("checkout", "-q", "-b", "feature/loader")
    env = {"SENTINEL_PROJECT": "", "SENTINEL_CHANGE_REF": ""}
    # Attempt 1: a bare except. Attempt 2: eval instead. Both gated by the real CLI, which records them.
    repo.write("app/load.py", "def load(path):\n    try:\n        return open(path).read()\n    except:\n"
                              "        return ''\n")
    repo.add("app/load.py")
    assert subprocess.run([repo.sentinel_script, "check"], cwd=repo.path, capture_output=True, env={**os.environ, **env}
                          ).returncode == 1
    repo.write("app/load.py", "def load(path):\n    return eval(open(path).read())\n")
    repo.add("app/load.py")
    assert subprocess.run([repo.sentinel_script, "check"], cwd=repo.path, capture_output=True, env={**os.environ, **env}
                          ).returncode == 1
    assert subprocess.run([repo.sentinel_script, "check"], cwd=repo.path, capture_output=True, env={**os.environ, **env}
                          ).returncode == 1
    before = tree_state(repo.path)

    async def scenario(client):
        return (await client.call_tool("get_project_brief", {}),
                await client.call_tool("get_project_brief", {"change_ref": "main"}))

    brief, other = session(repo.path, scenario)
    data = brief.structured_content
    assert data["change_ref"] == "feature/loader"
    attempts = data["earlier_failed_attempts"]
    # the third run re-checked the same staged content: the same attempt, not another one
    assert [sorted({f["rule"] for f in a["findings"]}) for a in attempts] == [["SEN301"], ["SEN303"]]
    assert attempts[0]["findings"][0]["path"] == "app/load.py" and "eval(" in attempts[1]["findings"][0]["approach"]
    assert data["recurring_patterns"] == []  # one change so far: nothing recurs yet
    assert [g["rule"] for g in data["similar_fixes"]][0] == "SEN303"  # the last attempt's failure first
    assert data["similar_fixes"][0]["cards"]
    assert other.structured_content["earlier_failed_attempts"] == []  # nothing failed on main
    assert tree_state(repo.path) == before  # the store was read, not written (no -wal / -shm either)


def test_check_change_shows_the_earlier_attempts_of_the_same_change(repo):
    repo.write("app/__init__.py", "")
    repo.add("app/__init__.py")
    repo.commit("initial")
    repo.git("checkout", "-q", "-b", "feature/calc")
    env = {**os.environ, "SENTINEL_PROJECT": "", "SENTINEL_CHANGE_REF": ""}
    for source in ("def calc(e):\n    return eval(e)\n", "def calc(e):\n    exec(e)\n"):
        repo.write("app/calc.py", source)
        repo.add("app/calc.py")
        assert subprocess.run([repo.sentinel_script, "check"], cwd=repo.path, capture_output=True, env=env
                              ).returncode == 1

    async def scenario(client):
        return await client.call_tool("check_change", {})

    data = session(repo.path, scenario).structured_content
    [group] = [g for g in data["recall"] if g["rule"] == "SEN303"]
    # the content checked now is the second attempt: the first one is what was tried before it
    assert [(a["path"], a["line"], a["code"]) for a in group["earlier_attempts"]] == [("app/calc.py", 2,
                                                                                      "return eval(e)")]


def test_a_session_of_every_tool_changes_no_byte_of_the_repository_or_home(repo, tmp_path):
    """Read-only, whole: a store with recorded attempts, an index whose stat data is stale (what makes git
    rewrite .git/index on many commands), an unstaged edit beside the staged change, every tool called —
    and not one byte of the work tree or .git changes, nothing is staged or committed, and the server
    writes nothing under HOME or the cache directories either."""
    env = {"SENTINEL_PROJECT": "", "SENTINEL_CHANGE_REF": ""}
    repo.write("app/__init__.py", "")
    repo.write("app/load.py", "def load(path):\n    return open(path).read()\n")
    repo.write("app/notes.py", "NOTES = []\n")
    repo.add("app/__init__.py", "app/load.py", "app/notes.py")
    base = repo.commit("initial")
    repo.git("checkout", "-q", "-b", "feature/loader")
    repo.write("app/load.py", "def load(path):\n    return eval(open(path).read())\n")
    repo.add("app/load.py")
    assert repo.sentinel("check", env=env).returncode == 1  # a failed attempt, recorded in the store
    repo.write("app/load.py", "def load(path):   \n    try:\n        return open(path).read()\n    except:\n"
                              "        return ''\n\n\ndef parse(raw):\n    return eval(raw)\n")
    repo.add("app/load.py")
    repo.write("app/notes.py", "NOTES = ['unstaged']\n")  # an edit that is not part of the change
    future = os.stat(repo.path / "app/load.py").st_mtime + 120
    os.utime(repo.path / "app/load.py", (future, future))  # the index's stat data no longer matches
    assert (repo.path / ".git" / "sentinel").is_dir()
    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    cache.mkdir()
    head = repo.git("rev-parse", "HEAD").strip()
    before = tree_state(repo.path)

    async def scenario(client):
        staged = await client.call_tool("check_change", {"fail_level": "info"})
        found = await client.call_tool("search_experience", {"query": "bare except hides KeyboardInterrupt"})
        card_id = found.structured_content["results"][0]["id"]
        return {
            "staged": staged,
            "range": await client.call_tool("check_change", {"range": f"{base}..HEAD", "task": "load files",
                                                             "message": "all tests pass"}),
            "diff": await client.call_tool("check_change", {"diff": repo.git("diff", "--cached")}),
            "preview": await client.call_tool("preview_fixes", {"unsafe": True}),
            "brief": await client.call_tool("get_project_brief", {}),
            "search": found,
            "card": await client.call_tool("read_experience_card", {"id": card_id}),
            "explain": await client.call_tool("explain_rule", {"code": "SEN301"}),
        }

    results = session(repo.path, scenario, env={**env, "HOME": str(home), "XDG_CACHE_HOME": str(cache)})
    for name, result in results.items():
        assert not result.is_error, (name, text_of(result))
    assert {"SEN301", "SEN303", "SEN205"} <= {f["rule"] for f in results["staged"].structured_content["findings"]}
    assert "except Exception:" in results["preview"].structured_content["diff"]
    assert results["brief"].structured_content["earlier_failed_attempts"]
    assert tree_state(repo.path) == before
    assert repo.git("rev-parse", "HEAD").strip() == head
    assert repo.git("diff", "--cached", "--name-only").split() == ["app/load.py"]
    assert repo.git("diff", "--name-only").split() == ["app/notes.py"]
    assert list(home.iterdir()) == [] and list(cache.iterdir()) == []


def test_a_server_outside_a_repository_still_serves_the_memory(tmp_path):
    outside = tmp_path / "not-a-repo"
    outside.mkdir()

    async def scenario(client):
        return (await client.call_tool("check_change", {}),
                await client.call_tool("explain_rule", {"code": "SEN203"}))

    gate, explain = session(outside, scenario)
    assert gate.is_error and "--repo" in text_of(gate) and "Traceback" not in text_of(gate)
    assert not explain.is_error and explain.structured_content["code"] == "SEN203"


def test_mcp_command_rejects_a_missing_repo_directory(tmp_path):
    proc = subprocess.run([_INSTALLED["path"], "mcp", "--repo", str(tmp_path / "missing")], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert "is not a directory" in proc.stderr and "Traceback" not in proc.stderr
