"""The action's inputs, read from ``INPUT_*`` environment variables and validated here.

action.yml passes every input through ``env:`` (never interpolated into a script), so this is
the one place that decides what a value means; a bad value is an InputError naming the input.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from sentinel.errors import InputError

FAIL_LEVELS = ("info", "warning", "error")
FILTER_MODES = ("added", "diff_context", "file", "nofilter")
_ON = {"on", "true", "yes", "1"}
_OFF = {"off", "false", "no", "0"}


@dataclass(slots=True)
class CiInputs:
    github_token: str = ""
    fail_level: str | None = None
    filter_mode: str | None = None
    config: str | None = None
    comment: bool = True
    annotations: bool = True
    sarif: str | None = None
    memory: bool = True
    task: str | None = None
    llm_model: str | None = None
    junit: list[str] = field(default_factory=list)
    review_comments: int = 20  # inline review comments kept on the PR (0: none)


def env_name(input_name: str) -> str:
    """The variable action.yml sets for an input: ``fail-level`` -> ``INPUT_FAIL_LEVEL``."""
    return "INPUT_" + input_name.replace("-", "_").replace(" ", "_").upper()


def _raw(env: dict, name: str) -> str:
    return (env.get(env_name(name)) or "").strip()


def _switch(env: dict, name: str, default: bool) -> bool:
    value = _raw(env, name).lower()
    if not value:
        return default
    if value in _ON:
        return True
    if value in _OFF:
        return False
    raise InputError(f"input '{name}': expected on or off, got {value!r}")


def _choice(env: dict, name: str, choices: tuple[str, ...]) -> str | None:
    value = _raw(env, name).lower().replace("-", "_")
    if not value:
        return None
    if value not in choices:
        raise InputError(f"input '{name}': expected one of {', '.join(choices)}, got {value!r}")
    return value


def split_paths(value: str) -> list[str]:
    """Paths separated by newlines, commas or spaces (YAML block scalars give newlines)."""
    out: list[str] = []
    for line in value.replace(",", "\n").splitlines():
        out.extend(p for p in line.split() if p)
    return out


def read_inputs(env: dict | None = None, workspace: str | None = None) -> CiInputs:
    env = dict(os.environ if env is None else env)
    inp = CiInputs(
        github_token=_raw(env, "github-token"),
        fail_level=_choice(env, "fail-level", FAIL_LEVELS),
        filter_mode=_choice(env, "filter-mode", FILTER_MODES),
        comment=_switch(env, "comment", True),
        annotations=_switch(env, "annotations", True),
        memory=_switch(env, "memory", True),
        task=(env.get(env_name("task")) or "").strip() or None,
        llm_model=_raw(env, "llm-model") or None,
        sarif=_raw(env, "sarif") or None,
        junit=split_paths(_raw(env, "junit")),
    )
    raw = _raw(env, "review-comments") or "20"
    if not raw.isdigit() or int(raw) > 1000:
        raise InputError(f"input 'review-comments': expected a number from 0 to 1000, got {raw!r}")
    inp.review_comments = int(raw)
    config = _raw(env, "config")
    if config:
        full = config if os.path.isabs(config) else os.path.join(workspace or os.getcwd(), config)
        if not os.path.isfile(full):
            raise InputError(f"input 'config': file not found: {config}")
        inp.config = full
    if inp.sarif and inp.sarif.endswith(("/", os.sep)):
        raise InputError(f"input 'sarif': expected a file path, got a directory {inp.sarif!r}")
    if inp.llm_model and any(c.isspace() for c in inp.llm_model):
        raise InputError(f"input 'llm-model': a model name has no spaces, got {inp.llm_model!r}")
    return inp
