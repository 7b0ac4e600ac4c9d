"""action.yml is wired correctly: inputs documented, passed only through env, commands exist,
and the copy-paste workflows in docs are valid and use what the action provides."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from sentinel.ci.inputs import env_name, read_inputs
from sentinel.cli import build_parser

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
DOC = (ROOT / "docs" / "github-action.md").read_text(encoding="utf-8")
WORKFLOWS = sorted((ROOT / "docs" / "workflows").glob("*.yml"))
STEPS = ACTION["runs"]["steps"]
RUN_STEPS = [s for s in STEPS if "run" in s]
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def test_composite_with_setup_python_and_sentinel_ci():
    assert ACTION["runs"]["using"] == "composite"
    assert any(s.get("uses", "").startswith("actions/setup-python@") for s in STEPS)
    assert any(re.search(r"\bsentinel ci\b", s["run"]) for s in RUN_STEPS)
    install = next(s["run"] for s in RUN_STEPS if "pip install" in s["run"])
    assert "$GITHUB_ACTION_PATH" in install.replace("${GITHUB_ACTION_PATH}", "$GITHUB_ACTION_PATH")
    assert "github" in install and "llm" in install


@pytest.mark.parametrize("name", sorted(ACTION["inputs"]))
def test_every_input_is_documented(name):
    assert f"`{name}`" in DOC, f"input {name} missing from docs/github-action.md"
    assert ACTION["inputs"][name].get("description")


def test_no_inputs_expression_inside_run_scripts():
    for step in STEPS:
        for match in EXPR.finditer(step.get("run", "")):
            pytest.fail(f"expression {match.group(0)} inside a run script of step {step.get('name')}")


def test_every_sentinel_input_reaches_the_run_step_through_env():
    step = next(s for s in RUN_STEPS if "sentinel ci" in s["run"])
    env = step.get("env", {})
    for name in ACTION["inputs"]:
        if name == "python-version":
            continue  # consumed by setup-python's `with:`, not by sentinel
        assert env.get(env_name(name)) == f"${{{{ inputs.{name} }}}}", name
    # and the names sentinel reads are exactly those
    assert set(env) == {env_name(n) for n in ACTION["inputs"] if n != "python-version"}


def test_inputs_with_defaults_validate():
    env = {env_name(n): str(spec.get("default", "")) for n, spec in ACTION["inputs"].items()
           if "${{" not in str(spec.get("default", ""))}
    inp = read_inputs(env)
    assert inp.comment and inp.annotations and inp.memory and inp.sarif is None


def test_outputs_come_from_the_sentinel_step():
    step_id = next(s["id"] for s in RUN_STEPS if "sentinel ci" in s["run"])
    assert set(ACTION["outputs"]) == {"verdict", "findings", "sarif-path", "comment-url"}
    for name, spec in ACTION["outputs"].items():
        assert spec["value"] == f"${{{{ steps.{step_id}.outputs.{name} }}}}"
        assert f"`{name}`" in DOC


def test_commands_and_flags_run_by_the_action_exist():
    parser = build_parser()
    for step in RUN_STEPS:
        for line in step["run"].splitlines():
            words = shlex.split(line.strip()) if line.strip() else []
            if words[:1] == ["sentinel"]:
                args = parser.parse_args(words[1:])  # exits (fails the test) on an unknown flag
                assert callable(args.func)


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_doc_workflows_are_valid_and_documented(path):
    wf = yaml.safe_load(path.read_text(encoding="utf-8"))
    perms = wf["permissions"]
    # what the Action reads and writes, and no more: annotations are workflow commands (no `checks: write`)
    assert perms == {"contents": "read", "pull-requests": "write", "issues": "read", "checks": "read",
                     "statuses": "read", **({"security-events": "write"} if "security-events" in perms else {})}
    steps = wf["jobs"]["sentinel"]["steps"]
    from sentinel.report.links import PROJECT_URL
    ours = [s for s in steps if str(s.get("uses", "")).startswith(PROJECT_URL.removeprefix("https://github.com/") + "@")]
    assert len(ours) == 1
    for key in (ours[0].get("with") or {}):
        assert key in ACTION["inputs"], f"{path.name} passes unknown input {key}"
    cache = next(s for s in steps if str(s.get("uses", "")).startswith("actions/cache@"))
    assert cache["with"]["key"] == "sentinel-memory-${{ github.run_id }}"
    assert cache["with"]["restore-keys"] == "sentinel-memory-"
    assert ours[0]["env"]["SENTINEL_STORE"].startswith(cache["with"]["path"])
    assert path.read_text(encoding="utf-8").strip() in DOC
    triggers = wf.get("on") or wf.get(True)
    if "pull_request_target" in triggers:
        checkout = next(s for s in steps if str(s.get("uses", "")).startswith("actions/checkout@"))
        assert "ref" not in (checkout.get("with") or {}), "never check out PR code under pull_request_target"
    if any("upload-sarif" in str(s.get("uses", "")) for s in steps):
        assert perms["security-events"] == "write" and ours[0]["with"]["sarif"]
