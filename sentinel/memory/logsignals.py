"""Signals from a failing test log or a traceback, for `sentinel recall --log`.

What a developer pastes is mostly noise (paths, addresses, timings); what identifies the
failure is the exception type, its message template, the failing test's name and the
functions and modules on the stack. We extract exactly those.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sentinel.memory.signature import normalize_text

_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line \d+, in (?P<func>[\w<>.]+)', re.M)
_EXC_LINE = re.compile(r"^(?:E\s+)?(?P<type>(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt|"
                       r"Failure|Fault|Timeout|NotFound|Refused))(?::\s*(?P<msg>.*))?$", re.M)
_PYTEST_FAILED = re.compile(r"^(?:FAILED|ERROR)\s+(?P<node>\S+?)(?:\s+-\s+(?P<rest>.*))?$", re.M)
_TEST_NAME = re.compile(r"::(?P<name>test\w*)")
_WORDS = re.compile(r"[A-Za-z][a-z0-9]+|[A-Z]+(?![a-z])")
_NOISE_MODULES = {"site-packages", "lib", "python3", "usr", "local", "src", "home", "tmp", "tests", "test"}


@dataclass(slots=True)
class LogSignals:
    exception_types: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # normalized templates
    tests: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)

    def query(self) -> str:
        parts = [*self.exception_types, *self.messages]
        parts += [" ".join(_WORDS.findall(t.replace("_", " "))) for t in self.tests]
        parts += [f.replace("_", " ") for f in self.functions[-6:]]
        parts += self.modules[-4:]
        text = ". ".join(p for p in parts if p)
        return text.replace("<str>", "").replace("<num>", "").replace("<path>", "")

    @property
    def empty(self) -> bool:
        return not (self.exception_types or self.messages or self.tests or self.functions)


def _module_of(path: str) -> str | None:
    parts = [p for p in re.split(r"[\\/]", path) if p and p not in _NOISE_MODULES]
    if not parts:
        return None
    name = parts[-1].rsplit(".", 1)[0]
    return None if name in ("__init__", "<frozen>") else name


def extract(log: str) -> LogSignals:
    sig = LogSignals()
    for m in _FRAME.finditer(log):
        func = m.group("func")
        if func not in ("<module>",) and func not in sig.functions:
            sig.functions.append(func)
        mod = _module_of(m.group("path"))
        if mod and mod not in sig.modules:
            sig.modules.append(mod)
    for m in _EXC_LINE.finditer(log):
        etype = m.group("type").rsplit(".", 1)[-1]
        if etype not in sig.exception_types:
            sig.exception_types.append(etype)
        msg = normalize_text(m.group("msg") or "")
        if msg and msg not in sig.messages:
            sig.messages.append(msg[:200])
    for m in _PYTEST_FAILED.finditer(log):
        name = _TEST_NAME.search(m.group("node"))
        if name and name.group("name") not in sig.tests:
            sig.tests.append(name.group("name"))
    sig.messages = sig.messages[:3]
    sig.exception_types = sig.exception_types[:4]
    return sig
