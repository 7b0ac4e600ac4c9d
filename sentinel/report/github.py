"""GitHub Actions workflow commands: one annotation per finding, then the summary line.

    ::error file=src/app.py,line=12,col=5,endLine=12,title=SEN301 bare-except::bare except swallows...

Escaping follows the Actions toolkit (``@actions/core`` command.ts): the message escapes
``%``, CR and LF; property values additionally escape ``:`` and ``,``. Every line we print
starts with ``::<command>`` or ``sentinel:``/``checks:``, and no untrusted text can carry a
raw newline, so a hostile path or message cannot start a workflow command of its own.
"""

from __future__ import annotations

from sentinel.models import CheckStatus, Finding, Severity, Verdict
from sentinel.redact import scrub_verdict
from sentinel.report.terminal import check_status_parts, clean, redact, shorten, summary_line

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
PER_KIND = 10  # annotations GitHub shows per kind (error / warning / notice) and step
_CODE_WIDTH = 200


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **props) -> str:
    """``::name k=v,...::message`` with properties in the given order, None values left out."""
    parts = [f"{k}={escape_property(str(v))}" for k, v in props.items() if v is not None and v != ""]
    head = f"::{name} {','.join(parts)}" if parts else f"::{name}"
    return f"{head}::{escape_data(message)}"


def _title(f: Finding, rules: dict | None) -> str:
    rule = (rules or {}).get(f.rule)
    return f"{f.rule} {rule.name}" if rule is not None else f"{f.rule} ({f.check})"


def annotation(f: Finding, rules: dict | None = None) -> str:
    lines = [redact(f.message)]
    code = clean(f.code).strip()
    if code:
        lines.append(f"    {shorten(code, _CODE_WIDTH)}")
    if f.hint:
        lines.append(f"hint: {f.hint}")
    line = f.line if f.line and f.line >= 1 else None
    end = f.end_line if line is not None and f.end_line and f.end_line >= line else line
    return command(COMMANDS[f.severity], "\n".join(lines), file=f.path or None, line=line,
                   col=f.column if line is not None and f.column and f.column >= 1 else None,
                   endLine=end, title=_title(f, rules))


def _plain(f: Finding) -> str:
    """A finding as one plain log line (no workflow command): for those past the annotation cap."""
    where = clean(f.path) or "(whole change)"
    if f.line:
        where += f":{f.line}" + (f":{f.column}" if f.column else "")
    return f"sentinel: {where}: {f.severity.value} {f.rule} {clean(f.message)}"


def render(verdict: Verdict, rules: dict | None = None, per_kind: int = PER_KIND, exit_zero: bool = False,
           **_) -> str:
    """Annotations for the findings, crashed and skipped checks and unread files, then the summary.

    GitHub shows at most ``per_kind`` annotations of each kind per step and silently drops the
    rest, so findings past that cap are printed as plain log lines instead of vanishing.
    """
    verdict = scrub_verdict(verdict)  # sentinel.redact: the one output path
    items: list[tuple[str, str, str | None]] = []  # (kind, command, plain fallback)
    for r in verdict.checks:
        if r.status is CheckStatus.ERROR:
            text = f"check '{r.check}' crashed: {redact(r.reason) or 'no reason given'}"
            items.append(("error", command("error", text, title=f"sentinel: {r.check} crashed"), None))
    for f in verdict.findings:
        items.append((COMMANDS[f.severity], annotation(f, rules), _plain(f)))
    for nc in verdict.not_checked:
        items.append(("warning", command("warning", f"not checked: {redact(nc.reason)}", file=nc.path,
                                         title="sentinel: file not checked"),
                      f"sentinel: {clean(nc.path)}: not checked ({clean(nc.reason)})"))
    for r in verdict.checks:
        if r.status is CheckStatus.SKIPPED:
            text = f"check '{r.check}' skipped: {redact(r.reason) or 'no reason given'}"
            items.append(("notice", command("notice", text, title=f"sentinel: {r.check} skipped"), None))
    used = dict.fromkeys(COMMANDS.values(), 0)
    out: list[str] = []
    overflow: list[str] = []
    for kind, cmd, plain in items:
        if used[kind] < per_kind or plain is None:
            used[kind] += 1
            out.append(cmd)
        else:
            overflow.append(plain)
    if overflow:
        out.append(f"sentinel: {len(overflow)} more item(s) past GitHub's {per_kind} annotations per severity:")
        out.extend(overflow)
    if verdict.checks:
        out.append("checks: " + ", ".join(text for _, text in check_status_parts(verdict.checks, verdict.fail_level)))
    out.append(summary_line(verdict, exit_zero))
    return "\n".join(out) + "\n"
