"""A composite action run the way the GitHub runner runs one, for the steps Sentinel's action.yml uses.

The action's inputs are its defaults overlaid by the workflow's `with:`; each step runs in order: a `run:` step
in `bash --noprofile --norc -eo pipefail` with its `env:` expanded, `GITHUB_ACTION_PATH` set and a fresh
`GITHUB_OUTPUT` file per step (its outputs become `steps.<id>.outputs`); `actions/setup-python` puts a fresh
virtualenv of this interpreter first on PATH (the runner's tool cache would). The action's `outputs` are
expanded last. An expression the runner here does not know is an error, so an action.yml that starts using
one fails its test instead of running half.
"""

from __future__ import annotations

import os
import re
import subprocess
import venv
from dataclasses import dataclass, field
from pathlib import Path

import yaml

_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@dataclass
class ActionRun:
    steps: list[subprocess.CompletedProcess] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)

    @property
    def log(self) -> str:
        return "".join(p.stdout + p.stderr for p in self.steps)


def _read_outputs(path: Path) -> dict[str, str]:
    out, lines, i = {}, path.read_text(encoding="utf-8").splitlines(), 0
    while i < len(lines):
        if "<<" in lines[i]:
            name, delim = lines[i].split("<<", 1)
            j = lines.index(delim, i + 1)
            out[name] = "\n".join(lines[i + 1:j])
            i = j + 1
        else:
            name, _, value = lines[i].partition("=")
            out[name] = value
            i += 1
    return out


def run_composite(action_dir: Path, with_: dict, env: dict, workspace: Path, work: Path,
                  token: str) -> ActionRun:
    spec = yaml.safe_load((action_dir / "action.yml").read_text(encoding="utf-8"))
    assert spec["runs"]["using"] == "composite"
    known = spec.get("inputs") or {}
    unknown = set(with_) - set(known)
    assert not unknown, f"the workflow passes inputs the action does not declare: {sorted(unknown)}"
    context = {"github.token": token}
    steps_out: dict[str, dict[str, str]] = {}

    def value(expr: str) -> str:
        if expr.startswith("inputs."):
            return inputs[expr[len("inputs."):]]
        if expr in context:
            return context[expr]
        m = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
        if m:
            return steps_out.get(m.group(1), {}).get(m.group(2), "")
        raise AssertionError(f"an expression this runner does not know: ${{{{ {expr} }}}}")

    def expand(text) -> str:
        return _EXPR.sub(lambda m: value(m.group(1)), str(text))

    inputs: dict[str, str] = {}
    for name, decl in known.items():
        inputs[name] = expand(with_[name]) if name in with_ else expand(decl.get("default", ""))
    path = env.get("PATH", os.environ.get("PATH", ""))
    run = ActionRun()
    for n, step in enumerate(spec["runs"]["steps"]):
        uses = step.get("uses", "")
        if uses.startswith("actions/setup-python@"):
            tool = work / "toolcache-python"
            if not tool.exists():
                venv.EnvBuilder(with_pip=True).create(tool)
            path = f"{tool / 'bin'}{os.pathsep}{path}"
            continue
        assert "run" in step and step.get("shell") == "bash", f"a step this runner cannot run: {step}"
        output = work / f"step-{n}.output"
        output.write_text("")
        step_env = {**env, "PATH": path, "GITHUB_ACTION_PATH": str(action_dir), "GITHUB_OUTPUT": str(output),
                    "GITHUB_WORKSPACE": str(workspace),
                    **{k: expand(v) for k, v in (step.get("env") or {}).items()}}
        script = work / f"step-{n}.sh"
        script.write_text(step["run"], encoding="utf-8")
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=workspace,
                              env=step_env, capture_output=True, text=True, timeout=1200)
        run.steps.append(proc)
        if step.get("id"):
            steps_out[step["id"]] = _read_outputs(output)
        if proc.returncode != 0:
            break  # as the runner stops at a failing step
    run.outputs = {name: expand(decl.get("value", "")) for name, decl in (spec.get("outputs") or {}).items()}
    return run

