"""Shared fixtures: real git repositories in temp dirs and a one-call way to gate a new file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sentinel import engine
from sentinel.config import validate
from sentinel.diffparse import parse_diff
from sentinel.sources import Change

PROJECT = Path(__file__).resolve().parent.parent


def new_file_diff(path: str, content: str) -> str:
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]
    body = "".join(f"+{ln}\n" for ln in lines)
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
            f"@@ -0,0 +1,{len(lines)} @@\n{body}")


def gate_new_file(path: str, content: str, config: dict | None = None, **opts):
    """Run the whole gate on a diff that adds one file; returns the Verdict."""
    cs = parse_diff(new_file_diff(path, content), source="test")
    cfg = validate(config or {}, "test") if config else validate({}, "test")
    return engine.run(Change(cs, content_rev=None), cfg, engine.RunOptions(**opts))


def codes(verdict) -> list[str]:
    return [f.rule for f in verdict.findings]


def _build_installed_sentinel(where: Path) -> str:
    """`sentinel` from a plain, non-editable `pip install .` into a fresh virtualenv: what users and pre-commit
    run. An editable install hides packaging faults (missing package data, an import that only the editable
    finder happened to make); a crash that only a real install shows has shipped once already.

    The virtualenv reaches this environment's dependencies through a path file (no download, no rebuild of
    numpy); only the project itself is built and installed."""
    import venv

    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(where)
    bindir = where / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / ("python.exe" if os.name == "nt" else "python")
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    import sysconfig
    (Path(site) / "_parent_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    # Built the way pip builds any project (an isolated build environment from the package registry).
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                    str(PROJECT)], check=True, capture_output=True)
    script = bindir / ("sentinel.exe" if os.name == "nt" else "sentinel")
    assert script.exists(), "pip install . did not create the sentinel console script"
    return str(script)


_INSTALLED: dict[str, str] = {}


@pytest.fixture(scope="session", autouse=True)
def installed_sentinel(tmp_path_factory) -> str:
    """Path of the `sentinel` console script of a non-editable install of this checkout (built once)."""
    if "path" not in _INSTALLED:
        _INSTALLED["path"] = _build_installed_sentinel(tmp_path_factory.mktemp("installed") / "venv")
    return _INSTALLED["path"]


class GitRepo:
    """A real git repository in a temp dir."""

    def __init__(self, path: Path, sentinel_script: str | None = None):
        self.path = path
        self.sentinel_script = sentinel_script
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.email", "t@example.com")
        self.git("config", "user.name", "Test")
        self.git("config", "commit.gpgsign", "false")

    def git(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(["git", *args], cwd=self.path, capture_output=True, text=True)
        if check and proc.returncode != 0:
            raise RuntimeError(f"git {args} failed: {proc.stderr}")
        return proc.stdout

    def write(self, rel: str, content: str | bytes) -> Path:
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_bytes(content.encode("utf-8"))
        return p

    def add(self, *rels: str) -> None:
        self.git("add", "--", *rels)

    def commit(self, message: str = "commit") -> str:
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD").strip()

    def run_python(self, code: str):
        return subprocess.run([sys.executable, "-c", code], cwd=self.path, capture_output=True, text=True)

    def sentinel(self, *args: str, input: str | None = None, env: dict | None = None):
        """Run the installed `sentinel` console script (a non-editable install) in a subprocess inside this repo."""
        full_env = {**os.environ, **(env or {})}
        full_env.pop("PRE_COMMIT_TO_REF", None) if "PRE_COMMIT_TO_REF" not in (env or {}) else None
        script = self.sentinel_script or _INSTALLED.get("path")
        command = [script] if script else [sys.executable, "-m", "sentinel"]
        return subprocess.run([*command, *args], cwd=self.path, capture_output=True,
                              text=True, input=input, env=full_env)


@pytest.fixture
def repo(tmp_path, installed_sentinel) -> GitRepo:
    return GitRepo(tmp_path / "repo", installed_sentinel)


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory):
    """One pre-commit home for the session: the hook environment (`pip install .`) is built once."""
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture(scope="session")
def project_snapshot(tmp_path_factory):
    """The project as it is on disk (untracked files too) committed to a throwaway repo: `try-repo`
    only picks up changes to tracked files."""
    dest = tmp_path_factory.mktemp("project") / "sentinel"
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=PROJECT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = PROJECT / rel
        if src.is_file() and not rel.startswith("tests/"):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    snap = GitRepo(dest)
    snap.git("add", "-A")
    snap.commit("snapshot")
    return dest
