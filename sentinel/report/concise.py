"""One line per finding, ``path:line:col: CODE [severity] message``: what editors, terminals and CI log
parsers turn into links (the shape of ruff's and flake8's default output). The severity follows the code in
brackets, where ruff puts its ``[*]`` fixable mark: a parser reading ``%f:%l:%c: %m`` or ``CODE message``
still reads every line, and an info finding no longer reads like an error.

Findings about the change as a whole have no file: those about the commit message are
``COMMIT_MSG:line:col:``, those about the task (drift) ``(change):``. The summary line ends
the output, as in every format.
"""

from __future__ import annotations

from sentinel.models import CheckStatus, Finding, Severity, Verdict
from sentinel.redact import scrub_verdict
from sentinel.report.terminal import clean, summary_line

_BOLD, _RESET = "\033[1m", "\033[0m"
_COLORS = {Severity.ERROR: "\033[31m", Severity.WARNING: "\033[33m", Severity.INFO: "\033[36m"}


def where(f: Finding) -> str:
    """``path:line:col`` for a finding (``path:line`` without a column, ``(change)`` without a file)."""
    path = clean(f.path)
    if not path:
        return "(change)"
    if not f.line:
        return path
    return f"{path}:{f.line}:{f.column or 1}"


def line(f: Finding, color: bool = False) -> str:
    loc, code, sev = where(f), f.rule, f"[{f.severity.value}]"
    if color:
        loc, code = f"{_BOLD}{loc}{_RESET}", f"{_COLORS[f.severity]}{code}{_RESET}"
        sev = f"{_COLORS[f.severity]}{sev}{_RESET}"
    return f"{loc}: {code} {sev} {clean(f.message)}"


def render(verdict: Verdict, color: bool = False, exit_zero: bool = False, **_) -> str:
    verdict = scrub_verdict(verdict)  # sentinel.redact: the one output path
    out = [line(f, color) for f in sorted(verdict.findings, key=Finding.sort_key)]
    for r in verdict.checks:
        if r.status is CheckStatus.ERROR:
            out.append(f"(change): error: check '{r.check}' crashed: {clean(r.reason) or 'no reason given'}")
    for nc in verdict.not_checked:
        out.append(f"{clean(nc.path)}: not checked: {clean(nc.reason)}")
    out.append(summary_line(verdict, exit_zero))
    return "\n".join(out) + "\n"
