"""Signals from a failing test log or a traceback, for `sentinel recall --log`.

What a developer pastes is mostly noise (paths, addresses, timings, progress dots); what identifies the failure
is the exception type and its message, the failing tests, the functions and modules on the stack, quoted names
and numbers, and HTTP statuses. Recognised formats:

  - pytest's default long tracebacks (`____ test_x ____`, `>` source lines, `E   Exc: msg`, `path:12: Exc`),
    `--tb=short` (`path:12: in func`), `--tb=line` (`/path/x.py:12: Exc: msg`), `--tb=native` (Python's own),
    and the short summary (`FAILED node - Exc: msg`, `ERROR node`);
  - unittest (`ERROR: test_x (pkg.mod.Case.test_x)`, `FAIL: ...`, then a Python traceback);
  - plain Python tracebacks, chained ones included;
  - HTTP status failures as urllib (`urllib.error.HTTPError: HTTP Error 429: Too Many Requests`), requests
    (`requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url: ...`), httpx
    (`httpx.HTTPStatusError: Client error '429 Too Many Requests' for url '...'`) and aiohttp print them, and
    `HTTP/1.1 503`, `status code 502`, ...

Exception names are matched case-insensitively (`keyerror` -> KeyError when the name is a known built-in).
"""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass, field

from sentinel.memory.hypotheses.signature import normalize_text

_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line \d+, in (?P<func>[\w<>.]+)', re.M)
# pytest --tb=short / long location lines: "path/to/x.py:12: in func" and "path/to/x.py:12: ExcType"
_SHORT_FRAME = re.compile(r"^(?P<path>[\w./\\:-]+\.py):\d+: in (?P<func>[\w<>.]+)\s*$", re.M)
_LOC_EXC = re.compile(r"^(?P<path>[\w./\\:-]+\.py):\d+: (?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)(?::\s*(?P<msg>.*))?$",
                      re.M)
_EXC_LINE = re.compile(r"^(?:E\s+)?(?P<type>(?:[A-Za-z_][\w]*\.)*[A-Za-z]\w*(?:Error|Exception|Warning|Exit|Interrupt|"
                       r"Failure|Fault|Timeout|NotFound|Refused|Iteration))(?::\s*(?P<msg>.*))?$", re.M | re.I)
# pytest's long mode shows each frame's source: the `def` lines name the functions on the stack
_LONG_DEF = re.compile(r"^\s{4}(?:async\s+)?def (\w+)\(", re.M)
# the last line of a Python traceback: "pkg.mod.Name: message" right after the last frame's source line
_TB_END = re.compile(r'^\s*File "[^"]+", line \d+, in [^\n]+\n(?:[ \t]+[^\n]*\n)*?'
                     r"(?P<type>[A-Za-z_][\w.]*)(?::[ ](?P<msg>[^\n]*))?$", re.M)
_PYTEST_E = re.compile(r"^E\s{2,}(?P<msg>.+)$", re.M)
_PYTEST_FAILED = re.compile(r"^(?:FAILED|ERROR)\s+(?P<node>\S+?)(?:\s+-\s+(?P<rest>.*))?$", re.M)
_PYTEST_HEADER = re.compile(r"^_{3,}\s+(?:ERROR (?:at \w+ of |collecting )?)?(?P<name>[\w.\[\]-]+?)\s+_{3,}$", re.M)
_UNITTEST = re.compile(r"^(?:ERROR|FAIL):\s+(?P<name>\w+)\s+\((?P<where>[\w.]+)\)", re.M)
_TEST_NAME = re.compile(r"::(?P<name>test\w*)")
# An HTTP status as clients print it: urllib `HTTP Error 429: Too Many Requests`, requests `429 Client Error: Too
# Many Requests for url: ...`, httpx `Client error '429 Too Many Requests' for url '...'`, aiohttp `429,
# message='Too Many Requests'`, and `HTTP/1.1 503`, `status code 502`, `returned 500`...
_HTTP = re.compile(r"\b(?:(?:HTTP(?:/\d(?:\.\d)?)?(?:[ _]Error)?|status(?:[ _]code)?|response(?: code)?|returned|got)"
                   r"\W{0,3}(?P<a>[45]\d\d)\b|\b(?P<b>[45]\d\d):?\s+(?:Client Error|Server Error|Too Many Requests|"
                   r"Internal Server Error|Bad Gateway|Service Unavailable|Gateway Time-?out|Not Found|"
                   r"Forbidden|Unauthorized|Bad Request|Conflict|Request Timeout)|\b(?P<c>[45]\d\d),\s*message=)", re.I)
_HTTP_NAMES = {"429": "too many requests rate limited", "500": "internal server error", "502": "bad gateway",
               "503": "service unavailable", "504": "gateway timeout", "404": "not found", "403": "forbidden",
               "401": "unauthorized", "400": "bad request", "408": "request timeout", "409": "conflict"}
_WORDS = re.compile(r"[A-Za-z][a-z0-9]+|[A-Z]+(?![a-z])")
_NOISE_MODULES = {"site-packages", "lib", "python3", "usr", "local", "src", "home", "tmp", "tests", "test",
                  "dist-packages", "venv", ".venv", "lib64"}
_NOISE_FUNCS = {"<module>", "<lambda>", "<listcomp>", "<genexpr>", "<dictcomp>", "<setcomp>", "wrapper", "inner",
                "call", "__call__", "_call", "run", "main", "pytest_pyfunc_call", "runtest", "_multicall",
                "_hookexec", "__exit__", "__enter__", "wrapped_f", "decorated"}
_NOT_EXC = {"AssertionError"}  # kept as a type, but its message carries the signal
# Built-in exception names, to restore their spelling when a log writes them in lower case.
_BUILTIN_EXC = {n.lower(): n for n in dir(builtins) if n.endswith(("Error", "Exception", "Warning", "Exit",
                                                                   "Interrupt", "Iteration"))}


@dataclass(slots=True)
class LogSignals:
    exception_types: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # normalized templates
    tests: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)
    quoted: list[str] = field(default_factory=list)  # quoted names of the messages: exact signals
    numbers: list[str] = field(default_factory=list)  # numbers of the messages (3+ digits): exact signals
    http_statuses: list[str] = field(default_factory=list)
    format: str = "unknown"  # pytest-long / pytest-short / pytest-line / traceback / unittest / http / ...

    def query(self) -> str:
        parts = [*self.exception_types, *self.messages]
        parts += [f"HTTP {s} {_HTTP_NAMES.get(s, 'error status')}" for s in self.http_statuses]
        parts += [" ".join(_WORDS.findall(t.replace("_", " "))) for t in self.tests]
        parts += [f.replace("_", " ") for f in self.functions[-6:]]
        parts += self.modules[-4:]
        text = ". ".join(p for p in parts if p)
        return re.sub(r"<(?:str|num|path|hex|sha|uuid|time|pos|url)>", "", text)

    def identifiers(self) -> list[str]:
        """Exact-match signals: functions on the stack (innermost first), quoted names, the failing tests'
        subject (test_parse_header -> parse_header)."""
        out = [*reversed(self.functions), *self.quoted]
        out += [t[len("test_"):] for t in self.tests if t.startswith("test_") and len(t) > 8]
        return list(dict.fromkeys(out))

    def to_json(self) -> dict:
        return {"format": self.format, "exception_types": self.exception_types, "messages": self.messages,
                "tests": self.tests, "functions": self.functions, "modules": self.modules, "quoted": self.quoted,
                "numbers": self.numbers, "http_statuses": self.http_statuses}

    @property
    def empty(self) -> bool:
        return not (self.exception_types or self.messages or self.tests or self.functions or self.http_statuses)


def _module_of(path: str) -> str | None:
    parts = [p for p in re.split(r"[\\/]", path) if p and p not in _NOISE_MODULES and ":" not in p]
    if not parts:
        return None
    name = parts[-1].rsplit(".", 1)[0]
    return None if name in ("__init__", "<frozen>", "<string>") or name.startswith("<") else name


def _exc_name(raw: str) -> str | None:
    name = raw.rsplit(".", 1)[-1]
    if name.lower() in _BUILTIN_EXC:
        return _BUILTIN_EXC[name.lower()]
    if re.search(r"(?:error|exception|warning|exit|interrupt|failure|fault|timeout|notfound|refused)$", name,
                 re.I) and name[0].isalpha():
        return name[0].upper() + name[1:] if name.islower() else name
    return None


def _add(seq: list[str], item: str | None, limit: int = 50) -> None:
    if item and item not in seq and len(seq) < limit:
        seq.append(item)


def _add_message(sig: LogSignals, msg: str) -> None:
    from sentinel.memory.cards.identifiers import quoted_and_numbers

    msg = (msg or "").strip()
    if not msg:
        return
    quoted, numbers = quoted_and_numbers(msg)
    for q in quoted:
        _add(sig.quoted, q, 10)
    for n in numbers:
        _add(sig.numbers, n, 10)
    _add(sig.messages, normalize_text(msg)[:200])


def _detect(log: str) -> str:
    if _UNITTEST.search(log):
        return "unittest"
    if _PYTEST_HEADER.search(log) or re.search(r"^E\s{2,}", log, re.M):
        return "pytest-short" if _SHORT_FRAME.search(log) else "pytest-long"
    if _PYTEST_FAILED.search(log) and _LOC_EXC.search(log):
        return "pytest-line"
    if "Traceback (most recent call last)" in log:
        return "traceback"
    if _HTTP.search(log):
        return "http"
    return "unknown"


def extract(log: str) -> LogSignals:
    sig = LogSignals(format=_detect(log))
    for m in list(_FRAME.finditer(log)) + list(_SHORT_FRAME.finditer(log)):
        func = m.group("func")
        if func not in _NOISE_FUNCS:
            _add(sig.functions, func)
        _add(sig.modules, _module_of(m.group("path")))
    if sig.format == "pytest-long":
        for m in _LONG_DEF.finditer(log):
            if m.group(1) not in _NOISE_FUNCS:
                _add(sig.functions, m.group(1))
    for m in _TB_END.finditer(log):
        raw = m.group("type")
        if raw[0].isupper() or "." in raw:
            _add(sig.exception_types, _exc_name(raw) or raw.rsplit(".", 1)[-1])
            _add_message(sig, m.group("msg") or "")
    for m in _EXC_LINE.finditer(log):
        etype = _exc_name(m.group("type"))
        if etype:
            _add(sig.exception_types, etype)
            _add_message(sig, m.group("msg") or "")
    for m in _LOC_EXC.finditer(log):
        etype = _exc_name(m.group("type"))
        if etype:
            _add(sig.exception_types, etype)
            _add_message(sig, m.group("msg") or "")
            _add(sig.modules, _module_of(m.group("path")))
    for m in _PYTEST_E.finditer(log):
        line = m.group("msg").strip()
        if not _EXC_LINE.match(line) and not line.startswith(("+", "-", "?", "where", "and ")):
            _add_message(sig, line)  # pytest's assertion explanation ("assert 1 == 2", "KeyError: 'x'")
    for m in _PYTEST_FAILED.finditer(log):
        name = _TEST_NAME.search(m.group("node"))
        _add(sig.tests, name.group("name") if name else None)
        rest = m.group("rest") or ""
        head = re.match(r"([\w.]+)(?::\s*(.*))?$", rest)
        if head and _exc_name(head.group(1)):
            _add(sig.exception_types, _exc_name(head.group(1)))
            _add_message(sig, head.group(2) or "")
    for m in _PYTEST_HEADER.finditer(log):
        name = m.group("name").split("[", 1)[0].rsplit(".", 1)[-1]
        if name.startswith("test"):
            _add(sig.tests, name)
    for m in _UNITTEST.finditer(log):
        _add(sig.tests, m.group("name"))
        parts = m.group("where").split(".")
        _add(sig.modules, parts[-3] if len(parts) >= 3 else parts[0])
    for m in _HTTP.finditer(log):
        _add(sig.http_statuses, m.group("a") or m.group("b") or m.group("c"), 5)
    sig.messages = sig.messages[:4]
    sig.exception_types = [e for e in sig.exception_types if e not in _NOT_EXC][:4] or sig.exception_types[:1]
    return sig
