"""What `pip install diff-sentinel` brings into every pre-commit environment: few packages, small.

The closure of the default requirements is computed from the installed distributions' own
metadata (markers evaluated for this interpreter, extras left out), and sized from their RECORD
files, so the test follows pyproject.toml and the packages actually resolved here.
"""

from __future__ import annotations

import importlib.metadata as md
import re
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
MAX_PACKAGES = 10
MAX_MB = 100
HEAVY = ("torch", "transformers", "tokenizers", "huggingface-hub", "huggingface_hub", "model2vec", "safetensors",
         "sentence-transformers", "hf-xet", "litellm", "pygithub")


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _closure(root: str) -> dict[str, md.Distribution]:
    seen: dict[str, md.Distribution] = {}
    todo = [root]
    while todo:
        name = _canon(todo.pop())
        if name in seen:
            continue
        dist = md.distribution(name)
        seen[name] = dist
        for spec in dist.requires or []:
            req = Requirement(spec)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue  # an extra's requirement, or another platform's
            todo.append(req.name)
    return seen


def _size(dist: md.Distribution) -> int:
    if _canon(dist.metadata["Name"]) == "diff-sentinel":
        # An editable install has no RECORD of the package files: measure what a wheel would carry.
        return sum(p.stat().st_size for p in (ROOT / "sentinel").rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts)
    total = 0
    for f in dist.files or []:
        path = Path(dist.locate_file(f))
        if path.is_file():
            total += path.stat().st_size
    return total


def test_default_install_is_light():
    closure = _closure("diff-sentinel")
    names = sorted(closure)
    assert len(names) <= MAX_PACKAGES, names
    assert not [n for n in names if n in {_canon(h) for h in HEAVY}], names
    megabytes = sum(_size(d) for d in closure.values()) / 1e6
    assert megabytes <= MAX_MB, f"{megabytes:.1f} MB: {names}"


def test_heavy_packages_only_in_extras():
    requires = md.requires("diff-sentinel") or []
    default = [Requirement(r) for r in requires]
    default = [r for r in default if r.marker is None or r.marker.evaluate({"extra": ""})]
    assert {_canon(r.name) for r in default} <= {"pydantic", "numpy", "tomli", "pathspec"}
    extras = {_canon(Requirement(r).name) for r in requires if "extra ==" in r}
    assert {"model2vec", "sentence-transformers", "pygithub", "litellm", "unidiff"} <= extras


def test_a_failing_hook_run_that_recalls_loads_nothing_it_does_not_need(tmp_path):
    """Recall on the hook path: the small indexes are scored in pure Python (sentinel.memory.retrieval.small), so
    not even numpy, and nothing from the distilling or tokenizer stacks."""
    import subprocess
    import sys

    from tests.conftest import GitRepo

    repo = GitRepo(tmp_path / "r")
    repo.write("app.py", "def load(p):\n    try:\n        return open(p).read()\n    except:\n        return ''\n")
    repo.add("app.py")
    code = ("import sys, io, contextlib\nfrom sentinel.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n    rc = main(['check'])\n"
            "heavy = ('numpy.ma', 'tokenizers', 'model2vec', 'safetensors', 'huggingface_hub', 'torch', 'unidiff',"
            " 'sentence_transformers', 'pydantic')\n"
            "print(rc, 'numpy' in sys.modules, sorted(m for m in heavy if m in sys.modules), "
            "'Experience memory' in out.getvalue())")
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo.path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[0] == "1 False [] True", proc.stdout  # failed and recalled, without numpy
