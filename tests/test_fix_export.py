"""Fixes as SARIF ``fixes`` (schema-valid, and applying them gives the fixed file) and as GitHub suggestion
blocks (replacing the commented lines with the block gives the fixed file)."""

from __future__ import annotations

import json
import os
import subprocess

from sentinel.fix import export, planner
from tests.sarif_rules import github_problems, schema_errors
from tests.test_fix import gate, stage

PATHS = "import os\n\n\ndef join(*parts):\n    return os.path.join(*parts)\n"
CODE = '''\
from paths import *


def load(path):   
    try:
        with open(join(path, "data.json")) as fh:
            return fh.read()
    except:
        return ""
'''


def apply_sarif(text: str, fix: dict) -> str:
    """Apply one SARIF fix (line/column regions, code-point columns) to the text."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1

    [change] = fix["artifactChanges"]
    edits = []
    for r in change["replacements"]:
        d = r["deletedRegion"]
        edits.append((offset(d["startLine"], d["startColumn"]), offset(d["endLine"], d["endColumn"]),
                      r["insertedContent"]["text"]))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def apply_suggestion(text: str, s: export.Suggestion) -> str:
    lines = text.splitlines(keepends=True)
    body = s.block.split("\n", 1)[1].rsplit("\n", 1)[0]
    new = [ln + "\n" for ln in body.split("\n")] if body else []
    return "".join(lines[:s.start_line - 1] + new + lines[s.line:])


def test_sarif_results_carry_their_fixes_and_applying_one_fixes_just_that(repo):
    stage(repo, {"app.py": CODE}, base={"paths.py": PATHS})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SENTINEL_", "PRE_COMMIT_"))}
    out = subprocess.run([repo.sentinel_script, "check", "--format", "sarif", "--no-memory"], cwd=repo.path,
                         capture_output=True, text=True, env=env)
    assert out.returncode == 1, out.stderr
    doc = json.loads(out.stdout)
    assert not schema_errors(doc), schema_errors(doc)[:3]
    assert not github_problems(doc, repo.path)
    results = {r["ruleId"]: r for r in doc["runs"][0]["results"]}
    assert set(results) == {"SEN203", "SEN205", "SEN301"}
    fixed = {rule: apply_sarif(CODE, r["fixes"][0]) for rule, r in results.items()}
    assert fixed["SEN301"] == CODE.replace("    except:", "    except Exception:")
    assert fixed["SEN205"] == CODE.replace("def load(path):   ", "def load(path):")
    # safe: every name the wildcard binds (the module's own `os` too), so app's namespace stays the same
    assert fixed["SEN203"] == CODE.replace("from paths import *", "from paths import join, os")
    assert results["SEN301"]["fixes"][0]["artifactChanges"][0]["artifactLocation"] == {
        "uri": "app.py", "uriBaseId": "%SRCROOT%"}


def test_unsafe_fixes_appear_in_sarif_only_when_asked_for(repo):
    stage(repo, {"calc.py": "def run(raw):\n    return eval(raw)\n"})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SENTINEL_", "PRE_COMMIT_"))}
    plain = json.loads(subprocess.run([repo.sentinel_script, "check", "--format", "sarif", "--no-memory"],
                                      cwd=repo.path, capture_output=True, text=True, env=env).stdout)
    assert "fixes" not in plain["runs"][0]["results"][0]
    unsafe = json.loads(subprocess.run([repo.sentinel_script, "check", "--format", "sarif", "--unsafe-fixes",
                                        "--no-memory"], cwd=repo.path, capture_output=True, text=True, env=env).stdout)
    [fix] = unsafe["runs"][0]["results"][0]["fixes"]
    assert "unsafe" in fix["description"]["text"]
    assert apply_sarif("def run(raw):\n    return eval(raw)\n", fix) == (
        "import ast\n\ndef run(raw):\n    return ast.literal_eval(raw)\n")
    assert not schema_errors(unsafe)


def test_suggestion_blocks_replace_exactly_the_commented_lines(repo):
    lib = "".join(f"def helper_number_{i}():\n    return {i}\n\n\n" for i in range(8))
    code = ("from lib import *\n\n\ndef run():\n    try:   \n        return [\n" +
            "".join(f"            helper_number_{i}(),\n" for i in range(8)) + "        ]\n    except:\n"
            "        return []\n")
    stage(repo, {"main.py": code}, base={"lib.py": lib})
    change, config, verdict = gate(repo)
    plan = planner.plan(change, verdict.findings, config, require_worktree=False)
    by_rule = {fx.finding.rule: fx for fp in plan.files for fx in fp.fixes}
    made = export.suggestions(plan)
    for rule, fx in by_rule.items():
        s = made[id(fx.finding)]
        assert s.start_line <= fx.finding.line <= s.line
        alone = apply_suggestion(code, s)
        assert alone.count("\n") >= code.count("\n") - 1
        assert rule != "SEN301" or alone == code.replace("    except:", "    except Exception:")
    wild = made[id(by_rule["SEN203"].finding)]
    assert (wild.start_line, wild.line) == (1, 1) and wild.block.startswith("```suggestion\nfrom lib import (\n")
    ws = made[id(by_rule["SEN205"].finding)]
    assert ws.block == "```suggestion\n    try:\n```"


def test_a_fix_in_two_places_has_no_single_suggestion(repo):
    stage(repo, {"calc.py": "import os\n\n\ndef run(raw):\n    return eval(raw), os.sep\n"})
    change, config, verdict = gate(repo)
    plan = planner.plan(change, verdict.findings, config, unsafe=True, require_worktree=False)
    [fx] = plan.files[0].fixes
    assert len(fx.edits) == 2  # the import and the call
    assert export.suggestion(fx) is None


# --- GitHub: suggestion blocks in the inline review comments (real PyGithub, loopback GitHub) ------------------

def test_review_comments_carry_suggestions_for_safe_fixes(tmp_path):
    from tests.github_fake import FakeGitHub
    from tests.test_ci_review import PR

    code = "print('hello')\n\n\ndef load(path):\n    try:\n        return open(path).read()\n    except:\n" \
           "        return ''\n\n\ndef run(raw):   \n    return eval(raw)\n"
    with FakeGitHub(page_size=3) as gh:
        pr = PR(tmp_path, gh, base_config="[drift]\nenabled = false\n[claims]\nenabled = false\n")
        pr.push({"app.py": code})
        out = pr.run()
        assert out.returncode == 1, out.stdout + out.stderr
        comments = {c["line"]: c for c in gh.review_comments[7]}
    bare = comments[7]["body"]
    assert "SEN301" in bare and "```suggestion\n    except Exception:\n```" in bare
    assert "Sentinel can fix this" in bare
    assert "```suggestion\ndef run(raw):\n```" in comments[11]["body"]  # trailing whitespace
    assert "suggestion" not in comments[12]["body"]  # eval: its fix is unsafe, never suggested
    lines = code.splitlines(keepends=True)
    lines[6] = "    except Exception:\n"
    assert "".join(lines) == code.replace("    except:", "    except Exception:")


def test_a_fix_whose_text_holds_a_secret_is_never_printed_or_posted(repo):
    token = "ghp_" + "Zq8Rt2Lm5Vx9Bn3Kc7Hd1Fg4Js6Pw0Ya2Ue8"
    code = f"def client():\n    token = {token!r}   \n    return token\n"
    stage(repo, {"creds.py": code})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SENTINEL_", "PRE_COMMIT_"))}
    diff = subprocess.run([repo.sentinel_script, "check", "--diff-fixes", "--no-memory"], cwd=repo.path,
                          capture_output=True, text=True, env=env)
    assert "+    token =" in diff.stdout and token not in diff.stdout and token[4:20] not in diff.stdout
    sarif = subprocess.run([repo.sentinel_script, "check", "--format", "sarif", "--no-memory"], cwd=repo.path,
                           capture_output=True, text=True, env=env)
    assert token not in sarif.stdout and token[4:20] not in sarif.stdout
    change, config, verdict = gate(repo)
    plan = planner.plan(change, verdict.findings, config, require_worktree=False)
    [fx] = plan.files[0].fixes
    assert fx.finding.rule == "SEN205" and export.carries_secret(fx)
    assert export.suggestions(plan) == {} and export.sarif_fixes(plan) == {}



def test_results_and_fixes_of_files_with_odd_names_point_at_those_files(repo):
    # found by benchmarks/fuzz.py: SARIF fixes of a name that is not UTF-8 were an internal error (the report
    # lost its fixes), and a finding of such a name, or of one with a tab, was anchored to the change's
    # first file, without its fix, as if its own file did not exist
    odd = os.fsdecode(b"caf\xe9.py")
    code = "def run(raw):\n    return eval(raw)\n"
    stage(repo, {"a.py": "X = 1\n", odd: code, "tab\there.py": code})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SENTINEL_", "PRE_COMMIT_"))}
    out = subprocess.run([repo.sentinel_script, "check", "--format", "sarif", "--unsafe-fixes", "--no-memory"],
                         cwd=repo.path, capture_output=True, text=True, env=env)
    assert out.returncode == 1, out.stderr
    assert "left out" not in out.stderr
    doc = json.loads(out.stdout)
    assert not schema_errors(doc), schema_errors(doc)[:3]
    results = doc["runs"][0]["results"]
    where = sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results)
    assert where == ["caf%E9.py", "tab%09here.py"]
    for r in results:
        [fix] = r["fixes"]
        uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert fix["artifactChanges"][0]["artifactLocation"]["uri"] == uri
        assert apply_sarif(code, fix) == "import ast\n\ndef run(raw):\n    return ast.literal_eval(raw)\n"
