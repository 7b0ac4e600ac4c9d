"""The README's snippets, executed as written, so that a snippet that rots fails CI:

- *Use it*: every command of the block, in a real repository with a change (none is a usage error);
- *pre-commit*: the README's configuration against a local clone of this repository at the commit its `rev:`
  names, installed with the README's own `pre-commit install` line, then real `git commit`s;
- *GitHub Action*: the README's `uses:` step run as the runner runs a composite action (this repository at the
  commit it names, tests/action_runner.py) against the loopback GitHub API (tests/github_fake.py);
- *Coding agents*: each editor's MCP configuration started as the editor starts it, a real MCP client session;
- *Python API*: the snippet, run as written.

The published rev is 0.1.0, which predates much of what the README describes next to it; the tests marked
`xfail(strict=True)` say what, and start failing (so the marks go) once the README names a release that has it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sentinel.report.links import PROJECT_URL
from tests.conftest import _INSTALLED, PROJECT, GitRepo
from tests.test_readme import README, SLUG, _git, code_blocks, newest_release, readme_rev

yaml = pytest.importorskip("yaml")

BARE = "def load(path):\n    try:\n        return open(path).read()\n    except:\n        return ''\n"
CLEAN = "def load(path):\n    with open(path) as fh:\n        return fh.read()\n"


def _block(lang: str, starts: str) -> str:
    return next(b for b in code_blocks(README, lang) if b.lstrip().startswith(starts))


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRE_COMMIT", "SENTINEL_", "GITHUB_", "INPUT_"))}
    env.update(NO_COLOR="1", PRE_COMMIT_COLOR="never", **extra)
    return env


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    """A clone of this repository, as a user's `repo:` URL would give it (commits only, no tags)."""
    if _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        pytest.skip("a shallow clone does not hold the release commit")
    dest = tmp_path_factory.mktemp("published") / "diff-sentinel"
    subprocess.run(["git", "clone", "--quiet", "--no-tags", str(PROJECT), str(dest)], check=True, capture_output=True)
    _, commit = newest_release()
    assert subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=dest).returncode == 0
    return dest


def _bin_on_path() -> str:
    return f"{Path(_INSTALLED['path']).parent}{os.pathsep}{os.environ.get('PATH', '')}"


# -- Use it ------------------------------------------------------------------------------------------------------

def _use_it_commands() -> list[str]:
    block = _block("bash", "sentinel check ")
    out = []
    for line in block.splitlines():
        command = line.split("  #", 1)[0].strip()
        if not command:
            continue
        alternatives = re.search(r"--format (\w+(?:\|\w+)+)", command)
        if alternatives:  # `--format json|sarif|github|markdown`: each of them
            out += [command.replace(alternatives.group(1), fmt) for fmt in alternatives.group(1).split("|")]
        else:
            out.append(command)
    return out


def test_every_command_of_use_it_runs(repo):
    repo.write("app.py", CLEAN)
    repo.add("app.py")
    repo.commit("init")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app.py", CLEAN + "\n\n" + BARE.replace("load", "load_or_empty"))
    repo.add("app.py")
    repo.commit("feature")
    repo.write("app.py", CLEAN + "\n\n" + BARE.replace("load", "load_or_empty") + "x = 1   \n")  # unstaged
    repo.write("staged.py", BARE)
    repo.add("staged.py")
    commands = _use_it_commands()
    assert len(commands) >= 10 and any("--all-files" in c for c in commands)
    for command in commands:
        proc = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=repo.path, capture_output=True,
                              text=True, env=_env(PATH=_bin_on_path()), timeout=300)
        assert proc.returncode in (0, 1), f"{command}: exit {proc.returncode}\n{proc.stderr}"
        assert "Traceback" not in proc.stderr and "usage:" not in proc.stderr, command
        if "--output" in command:
            assert (repo.path / "report.json").stat().st_size > 0, command
        elif "baseline" not in command and "--diff-fixes" not in command:
            assert "sentinel: " in proc.stdout, command  # the summary line: the command reported something


# -- pre-commit ---------------------------------------------------------------------------------------------------

def test_the_pre_commit_snippet_installs_and_gates_commits_at_the_published_rev(tmp_path, published,
                                                                                pre_commit_home):
    _, commit = newest_release()
    config = _block("yaml", "repos:")
    assert readme_rev() == commit and PROJECT_URL in config
    repo = GitRepo(tmp_path / "project")
    repo.write(".pre-commit-config.yaml", config.replace(PROJECT_URL, str(published)))  # the clone, as the URL
    repo.write("app.py", CLEAN)
    repo.add(".pre-commit-config.yaml", "app.py")
    repo.commit("before sentinel")
    install = re.search(r"`(pre-commit install[^`]*)`", README)
    assert install, "the README no longer says how to install the hooks"
    env = _env(PRE_COMMIT_HOME=str(pre_commit_home))
    words = shlex.split(install.group(1))
    done = subprocess.run([sys.executable, "-m", "pre_commit", *words[1:]], cwd=repo.path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (repo.path / ".git/hooks/pre-commit").exists() and (repo.path / ".git/hooks/commit-msg").exists()

    head = repo.git("rev-parse", "HEAD").strip()
    repo.write("loader.py", BARE)
    repo.add("loader.py")
    blocked = subprocess.run(["git", "commit", "-m", "add a loader"], cwd=repo.path, env=env, capture_output=True,
                             text=True, timeout=1800)
    assert blocked.returncode != 0, blocked.stdout + blocked.stderr
    assert "SEN301" in blocked.stdout + blocked.stderr and "loader.py" in blocked.stdout + blocked.stderr
    assert repo.git("rev-parse", "HEAD").strip() == head  # the commit did not happen
    repo.write("loader.py", CLEAN)
    repo.add("loader.py")
    passed = subprocess.run(["git", "commit", "-m", "add a loader"], cwd=repo.path, env=env, capture_output=True,
                            text=True, timeout=600)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    hooks = passed.stdout + passed.stderr
    assert re.search(r"sentinel \(audit gate\)\.+Passed", hooks) and re.search(r"sentinel \(commit message.*Passed", hooks)


@pytest.mark.xfail(strict=True, reason="0.1.0's hook takes no file names (pass_filenames: false): the README's "
                                       "`files:`/`exclude:`/`types:` and `pre-commit run sentinel --all-files` need "
                                       "a release after it")
def test_the_published_hook_takes_the_files_pre_commit_selects(published):
    _, commit = newest_release()
    manifest = subprocess.run(["git", "show", f"{commit}:.pre-commit-hooks.yaml"], cwd=published,
                              capture_output=True, text=True, check=True).stdout
    hook = next(h for h in yaml.safe_load(manifest) if h["id"] == "sentinel")
    assert "pre-commit run sentinel --all-files" in README
    assert hook.get("pass_filenames", True) is True


# -- GitHub Action -------------------------------------------------------------------------------------------------

def _readme_action_step() -> tuple[str, dict]:
    steps = yaml.safe_load(_block("yaml", "- uses: actions/checkout@"))
    ours = [s for s in steps if str(s.get("uses", "")).startswith(f"{SLUG}@")]
    assert len(ours) == 1, steps
    return ours[0]["uses"].split("@", 1)[1], ours[0].get("with") or {}


def _action_at(published: Path, rev: str, where: Path) -> Path:
    """What the runner downloads for `uses: owner/repo@rev`: the repository's tree at that commit."""
    where.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", "--format=tar", rev], cwd=published, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    return where


def _pull_request(tmp_path, gh):
    from tests.test_ci_review import PR

    pr = PR(tmp_path, gh, base_config="")
    pr.push({"app.py": "print('hello')\n" + BARE})
    return pr


def _runner_env(pr, gh, tmp_path) -> dict:
    event = tmp_path / "event.json"
    event.write_text(json.dumps(gh.event_payload(7)))
    summary = tmp_path / "summary.md"
    summary.write_text("")
    return _env(GITHUB_EVENT_PATH=str(event), GITHUB_EVENT_NAME="pull_request", GITHUB_REPOSITORY=gh.repository,
                GITHUB_API_URL=gh.base_url, GITHUB_STEP_SUMMARY=str(summary), GITHUB_SERVER_URL="https://github.com",
                GITHUB_RUN_ID="4242", GITHUB_JOB="sentinel", SENTINEL_GITHUB_RETRIES="0",
                SENTINEL_STORE=str(tmp_path / "store.sqlite3"))


@pytest.fixture
def gh(installed_sentinel):
    from tests.github_fake import FakeGitHub

    with FakeGitHub(page_size=3) as fake:
        yield fake


def test_the_action_snippet_at_the_published_commit_gates_a_pull_request(tmp_path, published, gh):
    from tests.action_runner import run_composite
    from tests.test_ci_review import _ours

    rev, with_ = _readme_action_step()
    assert rev == newest_release()[1]
    pr = _pull_request(tmp_path, gh)
    action = _action_at(published, rev, tmp_path / "action")
    run = run_composite(action, with_, _runner_env(pr, gh, tmp_path), pr.repo.path, tmp_path, "ghs_faketoken123")
    assert [p.returncode for p in run.steps][:-1] == [0] * (len(run.steps) - 1), run.log  # installed
    assert run.steps[-1].returncode == 1, run.log  # the gate failed the step: a bare except was added
    assert run.outputs["verdict"] == "failed" and int(run.outputs["findings"]) >= 1, run.outputs
    assert _ours(gh) and "SEN301" in _ours(gh)[0]["body"]  # the sticky comment
    sarif = pr.repo.path / with_["sarif"]
    assert json.loads(sarif.read_text())["version"] == "2.1.0" and run.outputs["sarif-path"] == str(sarif)
    assert "ghs_faketoken123" not in run.log


def test_the_action_as_it_is_now_posts_fix_suggestions(tmp_path, project_snapshot, gh):
    """The [fix] extra (libcst) the action installs is what makes inline comments carry a committable fix."""
    from tests.action_runner import run_composite

    _, with_ = _readme_action_step()
    pr = _pull_request(tmp_path, gh)
    run = run_composite(project_snapshot, with_, _runner_env(pr, gh, tmp_path), pr.repo.path, tmp_path,
                        "ghs_faketoken123")
    assert run.steps[-1].returncode == 1, run.log
    [inline] = [c["body"] for c in gh.review_comments[7] if "SEN301" in c["body"]]
    assert "```suggestion\n    except Exception:\n```" in inline, inline
    assert "fix suggestions left out" not in run.log


@pytest.mark.xfail(strict=True, reason="0.1.0's action.yml has no `review-comments` or `database-url` input and "
                                       "installs no [fix] extra: the README and the workflow templates need a "
                                       "release after it")
def test_the_published_action_takes_every_input_the_docs_pass(published):
    _, commit = newest_release()
    spec = yaml.safe_load(subprocess.run(["git", "show", f"{commit}:action.yml"], cwd=published,
                                         capture_output=True, text=True, check=True).stdout)
    passed = set(_readme_action_step()[1]) | set(re.findall(r"`with: ([a-z-]+):", README))
    for path in sorted((PROJECT / "docs" / "workflows").glob("*.yml")):
        steps = yaml.safe_load(path.read_text(encoding="utf-8"))["jobs"]["sentinel"]["steps"]
        passed |= {key for step in steps if str(step.get("uses", "")).startswith(f"{SLUG}@")
                   for key in (step.get("with") or {})}
    assert "database-url" in passed  # the team-memory line of the README
    assert passed <= set(spec["inputs"]), sorted(passed - set(spec["inputs"]))
    install = next(step["run"] for step in spec["runs"]["steps"] if "pip install" in step.get("run", ""))
    assert "fix" in install  # libcst, for the review comments' fix suggestions


# -- Coding agents (MCP) -----------------------------------------------------------------------------------------

def _mcp_configs() -> dict[str, dict]:
    """Each editor's configuration of the README's jsonc block (comments dropped, as the editors read it)."""
    out, name = {}, None
    for line in _block("jsonc", "//").splitlines():
        if line.startswith("//"):
            name = re.split(r"[:(]", line[2:], maxsplit=1)[0].strip()  # "// Claude Desktop (its file): ..."
        elif line.strip():
            data = json.loads(line)
            servers = data.get("mcpServers") or data.get("servers")
            out[name] = servers["sentinel"]
    return out


def test_every_mcp_configuration_of_the_readme_starts_a_server_with_the_listed_tools(repo, tmp_path):
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    repo.write("app.py", CLEAN)
    repo.add("app.py")
    repo.commit("init")
    repo.write("app.py", BARE)
    repo.add("app.py")
    section = README[README.index("### Coding agents"):]
    listed = set(re.findall(r"`(\w+)`", section[:section.index("```")]))  # the tools the README names
    configs = _mcp_configs()
    assert {"Cursor", "VS Code", "Claude Desktop"} <= set(configs), configs
    for editor, server in configs.items():
        args = [a.replace("${workspaceFolder}", str(repo.path)).replace("/abs/path/to/project", str(repo.path))
                for a in server["args"]]
        command = server["command"].replace("/abs/path/to/venv/bin/sentinel", _INSTALLED["path"])
        command = shutil.which(command, path=_bin_on_path()) or command
        elsewhere = tmp_path / editor.replace(" ", "-")
        elsewhere.mkdir()  # the editor starts it outside the project: --repo says where

        async def main():
            params = StdioServerParameters(command=command, args=args, cwd=str(elsewhere), env=_env())
            with open(os.devnull, "w") as errlog:
                async with stdio_client(params, errlog=errlog) as (read, write):
                    async with ClientSession(read, write) as client:
                        await client.initialize()
                        tools = {t.name for t in (await client.list_tools()).tools}
                        checked = await client.call_tool("check_change", {})
                        return tools, "\n".join(getattr(c, "text", "") for c in checked.content)

        tools, text = anyio.run(main)
        assert tools == {t for t in listed if "_" in t}, (editor, tools)  # what the README lists
        assert "SEN301" in text, (editor, text[:500])  # the staged change of the project --repo names


# -- Python API ------------------------------------------------------------------------------------------------

def test_the_python_api_snippet_runs_as_written(repo):
    repo.write("app.py", CLEAN)
    repo.add("app.py")
    repo.commit("init")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app.py", BARE)
    repo.add("app.py")
    repo.commit("a loader")
    python = str(Path(_INSTALLED["path"]).parent / "python")
    proc = subprocess.run([python, "-c", _block("python", "import sentinel")], cwd=repo.path, capture_output=True,
                          text=True, env=_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "SEN301 error app.py 4" in proc.stdout, proc.stdout
