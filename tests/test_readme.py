"""The README as a newcomer reads it: short, one name for the repository, and every reference it gives resolves
against the repository as published (commits only: no tags, nothing on a package index).

The snippets themselves run in tests/test_readme_snippets.py."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from sentinel.report.links import PROJECT_URL
from tests.conftest import PROJECT

README = (PROJECT / "README.md").read_text(encoding="utf-8")
CHANGELOG = (PROJECT / "CHANGELOG.md").read_text(encoding="utf-8")
SLUG = PROJECT_URL.removeprefix("https://github.com/")
# Every file a newcomer copies from: the README, the docs pages, the workflow templates, the Action itself.
PUBLISHED = [PROJECT / "README.md", PROJECT / "CHANGELOG.md", PROJECT / "action.yml",
             *sorted((PROJECT / "docs").glob("*.md")), *sorted((PROJECT / "docs" / "workflows").glob("*.yml"))]


def code_blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.S | re.M)


def newest_release() -> tuple[str, str]:
    """(version, release commit) of the newest release section of CHANGELOG.md."""
    m = re.search(r"^## (\d+\.\d+\.\d+) \u2014 \d{4}-\d{2}-\d{2}\n+Release commit `([0-9a-f]{40})`", CHANGELOG,
                  flags=re.M)
    assert m, "the newest release section of CHANGELOG.md names no release commit"
    return m.group(1), m.group(2)


def readme_rev() -> str:
    block = next(b for b in code_blocks(README, "yaml") if b.startswith("repos:"))
    return re.search(r"^\s*rev:\s*(\S+)", block, flags=re.M).group(1)


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=PROJECT, capture_output=True, text=True)


def test_readme_is_short_and_starts_with_the_two_commands():
    lines = README.splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines"
    first = code_blocks(README, "bash")[0].splitlines()
    assert README.index("```bash") < 1200, "the two commands are not on the first screen"
    assert "pip install ." in first[0] and "sentinel check" in first[0]
    assert first[1].endswith("python -m pytest")
    assert "python -m pytest" in (PROJECT / ".ci" / "run").read_text(encoding="utf-8")
    # the clone the two commands run in is named as the README names the repository
    assert f"git clone {PROJECT_URL} && cd {PROJECT_URL.rsplit('/', 1)[1]}" in README


def test_the_pre_commit_rev_and_the_action_name_the_newest_release_commit():
    version, commit = newest_release()
    assert readme_rev() == commit
    uses = []
    for path in PUBLISHED:
        uses += re.findall(rf"uses:\s*{re.escape(SLUG)}@(\S+)", path.read_text(encoding="utf-8"))
    assert uses and set(uses) == {commit}, set(uses)
    from sentinel import __version__
    assert __version__ == version or ".dev" in __version__, "a release must be the newest CHANGELOG section"


def test_the_release_commit_is_in_this_history():
    """Run where the history is (a shallow clone cannot tell, and says so)."""
    if _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        pytest.skip("a shallow clone does not hold the release commit")
    version, commit = newest_release()
    assert _git("merge-base", "--is-ancestor", commit, "HEAD").returncode == 0, f"{commit} is not in HEAD's history"
    # the version lived in sentinel/__init__.py up to 0.1.x, in sentinel/version.py since
    sets = [_git("show", f"{commit}:{path}").stdout for path in ("sentinel/version.py", "sentinel/__init__.py")]
    assert any(f'__version__ = "{version}"' in text for text in sets), f"{commit} does not set version {version}"
    import yaml
    hooks = {h["id"] for h in yaml.safe_load(_git("show", f"{commit}:.pre-commit-hooks.yaml").stdout)}
    block = next(b for b in code_blocks(README, "yaml") if b.startswith("repos:"))
    assert set(re.findall(r"- id: (\S+)", block)) <= hooks
    assert _git("cat-file", "-e", f"{commit}:action.yml").returncode == 0


def test_one_spelling_of_the_repository_everywhere():
    for path in PUBLISHED:
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(PROJECT)
        for stale in ("OWNER/diff-sentinel", "your-org/", "/sentinel@v1", "@v1\n"):
            assert stale not in text, f"{name}: {stale!r}"
        for url in re.findall(r"github\.com[/:]([\w.-]+/[\w.-]*sentinel[\w.-]*)", text):
            assert url.removesuffix(".git") == SLUG, f"{name}: github.com/{url}"
        for uses in re.findall(r"uses:\s*([^\s@]+)@", text):
            assert uses.startswith(("actions/", "github/")) or uses == SLUG, f"{name}: uses {uses}"


def test_installs_name_the_repository_never_a_package_index():
    """Nothing is on a package index: `pip install diff-sentinel[...]` without a URL fails with "from versions:
    none". Every install of the project is `.` (a clone) or `diff-sentinel[extras] @ git+<the repository>`."""
    for path in PUBLISHED:
        for line in path.read_text(encoding="utf-8").splitlines():
            for m in re.finditer(r"pip install\s+(?:-\S+\s+)*(['\"]?)(diff-sentinel[^'\"\s]*)(.*)", line):
                quote, target, rest = m.groups()
                assert re.match(rf"\s*@ git\+{re.escape(PROJECT_URL)}(@[0-9a-f]{{40}})?{quote}", rest), \
                    f"{path.relative_to(PROJECT)}: {line.strip()}"


def test_templates_ask_only_for_what_the_action_uses():
    import yaml
    for path in sorted((PROJECT / "docs" / "workflows").glob("*.yml")):
        perms = yaml.safe_load(path.read_text(encoding="utf-8"))["permissions"]
        assert perms.get("checks") != "write", path.name  # annotations are workflow commands
        assert perms["pull-requests"] == "write" and perms["contents"] == "read"


def test_docs_links_resolve():
    for path in [PROJECT / "README.md", *sorted((PROJECT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            assert (path.parent / target).exists(), f"{path.relative_to(PROJECT)} links to {target}"


def test_one_install_size_figure_and_it_is_the_measured_one():
    """One figure of the default install's size, in the README; it must stay within 5% of what the installed
    distributions' files add up to (tests/test_install.py computes the closure the same way)."""
    figures = []
    for path in PUBLISHED:
        figures += [(path.name, m) for m in re.findall(r"(\d+(?:\.\d+)?) MB of installed files",
                                                       path.read_text(encoding="utf-8"))]
    assert len(figures) == 1 and figures[0][0] == "README.md", figures
    from tests.test_install import _closure, _size
    measured = sum(_size(d) for d in _closure("diff-sentinel").values()) / 1e6
    stated = float(figures[0][1])
    assert abs(stated - measured) <= 0.05 * measured, f"README says {stated} MB, the install measures {measured:.1f}"
