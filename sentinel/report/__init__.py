"""Reporters turn a Verdict into text. They never run checks; checks never know about them."""

from __future__ import annotations

import importlib

FORMATS = {
    "text": "sentinel.report.terminal",
    "concise": "sentinel.report.concise",
    "json": "sentinel.report.jsonfmt",
    "sarif": "sentinel.report.sarif",
    "github": "sentinel.report.github",
    "markdown": "sentinel.report.markdown",
}


def render(verdict, fmt: str = "text", **kwargs) -> str:
    module = importlib.import_module(FORMATS[fmt])
    return module.render(verdict, **kwargs)
