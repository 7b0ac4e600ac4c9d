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
