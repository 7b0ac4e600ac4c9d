"""The MCP server: Sentinel's tools declared to the official `mcp` SDK and served over stdio.

Every tool is read-only (annotated so, and it is: no commit, no staging, no file written — the
config and project-settings caches are not written either). A bad argument or a failure inside a
tool comes back as a tool error with a message the agent can act on; the server never dies of it.
"""

from __future__ import annotations

import os
import threading
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from sentinel.errors import SentinelError
from sentinel.mcp import tools
from sentinel.version import __version__

INSTRUCTIONS = """\
Sentinel is an audit gate for code changes that remembers. Before you commit, call check_change on the staged \
change (or a range / a diff): it returns findings with rule codes, file locations and severities; findings marked \
blocking fail the gate. When it fails, the result also carries similar past fixes and this project's recurring \
failure patterns. Before starting or retrying a task, call get_project_brief to see what failed in earlier \
attempts of this change and what keeps going wrong in this project. preview_fixes shows the automatic fixes \
as a diff you can apply. explain_rule tells what a rule code means \
and what to write instead; search_experience and read_experience_card browse the memory of past bug fixes. \
Every tool is read-only."""

_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                             open_world_hint=False)
# Tools run in worker threads; the gate and the memory are not written for concurrent calls.
_LOCK = threading.Lock()


def _call(fn, *args, **kwargs) -> dict[str, Any]:
    with _LOCK:
        try:
            return fn(*args, **kwargs)
        except SentinelError as exc:
            raise ToolError(tools.redact_text(str(exc))) from None
        except Exception as exc:  # a bug of ours: a clear tool error, never a dead server
            raise ToolError(tools.redact_text(f"internal error: {type(exc).__name__}: {exc}")) from None


def build_server(repo: str | None = None) -> MCPServer:
    from sentinel import filecache

    filecache.WRITES = False  # this process writes nothing, caches included
    # nor do the git commands it runs: no opportunistic refresh of .git/index (git status and friends
    # rewrite it when its stat data is stale; GIT_OPTIONAL_LOCKS=0 is git's switch for read-only callers)
    os.environ["GIT_OPTIONAL_LOCKS"] = "0"
    ws = tools.Workspace(repo)
    server = MCPServer("sentinel", title="Sentinel audit gate", version=__version__, instructions=INSTRUCTIONS,
                       log_level="WARNING")

    @server.tool(name="check_change", title="Run the audit gate on a change", annotations=_READ_ONLY)
    def check_change(
        range: Annotated[str | None, Field(description="A commit range: 'main...HEAD' (what HEAD did since it "
                                                        "left main) or 'A..B' (the plain diff). Omit for the "
                                                        "staged change.")] = None,
        diff: Annotated[str | None, Field(description="The text of a unified diff (git diff output) to check "
                                                       "instead; post-change content is read from the working "
                                                       "tree.")] = None,
        task: Annotated[str | None, Field(description="What the change was asked to do (enables the drift "
                                                       "check).")] = None,
        message: Annotated[str | None, Field(description="The commit message or PR body (checked for claims "
                                                          "such as 'all tests pass').")] = None,
        fail_level: Annotated[Literal["info", "warning", "error"] | None,
                              Field(description="Lowest severity that fails the gate (default: the "
                                                "project's, usually error).")] = None,
        filter_mode: Annotated[Literal["added", "diff_context", "file", "nofilter"] | None,
                               Field(description="Which findings count: on added lines (default), anywhere in "
                                                 "the hunks, anywhere in changed files, or everything.")] = None,
        max_findings: Annotated[int, Field(description="Return at most this many findings (blocking ones "
                                                       "first).", ge=1, le=5000)] = 200,
    ) -> dict[str, Any]:
        """Run Sentinel's audit gate on a code change: the staged change by default, a commit range, or a unified
        diff. Returns outcome (passed / failed / error), a summary line, and findings — each with rule code,
        severity, whether it blocks, path, line, column, message, a fix hint and the offending line — plus the
        checks that ran or were skipped and why, files that could not be checked, and, when the gate fails,
        similar past fixes and recurring project patterns. Read-only: nothing is recorded, staged or written."""
        return _call(tools.check_change, ws, range=range, diff=diff, task=task, message=message,
                     fail_level=fail_level, filter_mode=filter_mode, max_findings=max_findings)

    @server.tool(name="preview_fixes", title="Preview the automatic fixes", annotations=_READ_ONLY)
    def preview_fixes(
        range: Annotated[str | None, Field(description="A commit range as for check_change; omit for the staged "
                                                        "change.")] = None,
        diff: Annotated[str | None, Field(description="A unified diff text instead (post-change content from "
                                                       "the working tree).")] = None,
        unsafe: Annotated[bool, Field(description="Also show fixes that may change behaviour (e.g. eval -> "
                                                  "ast.literal_eval).")] = False,
    ) -> dict[str, Any]:
        """Show, as a unified diff, the fixes Sentinel can make for the change's findings (the same as
        `sentinel check --diff-fixes`): bare except -> except Exception, wildcard imports -> explicit names,
        layout. Formatting and comments are kept. Nothing is written: apply the diff yourself (it applies to the
        working tree with `git apply`). Also lists findings that could not be fixed, and why."""
        return _call(tools.preview_fixes, ws, range=range, diff=diff, unsafe=unsafe)

    @server.tool(name="get_project_brief", title="What to know before the next attempt", annotations=_READ_ONLY)
    def get_project_brief(
        change_ref: Annotated[str | None, Field(description="The change to brief on: a branch name (default: "
                                                             "the checked-out branch) or a PR ref like "
                                                             "'pr/12'.")] = None,
    ) -> dict[str, Any]:
        """Brief before (re)trying a change: this change's earlier failed gate runs in order and what failed in
        each (approaches not to repeat), the project's recurring failure patterns with example findings and how
        they were last resolved, and the most similar past fixes from the experience memory. Read-only."""
        return _call(tools.project_brief, ws, change_ref=change_ref)

    @server.tool(name="search_experience", title="Search past bug fixes", annotations=_READ_ONLY)
    def search_experience(
        query: Annotated[str, Field(description="Symptoms: error text, a traceback line, what went wrong.")],
        k: Annotated[int, Field(description="How many cards to return.", ge=1, le=50)] = 5,
        rule: Annotated[str | None, Field(description="Only cards linked to this rule code, e.g. SEN301.")] = None,
        language: Annotated[str | None, Field(description="Only cards of this language, e.g. python.")] = None,
        tag: Annotated[str | None, Field(description="Only cards with this component or exception tag.")] = None,
    ) -> dict[str, Any]:
        """Search the experience memory — governed cards of real past bug fixes — by symptom. Returns card ids
        with a score, a problem summary, matching signals and a one-line fix strategy; read a card whole with
        read_experience_card."""
        return _call(tools.search_cards, ws, query, k=k, language=language, rule=rule, tag=tag)

    @server.tool(name="read_experience_card", title="Read one past fix", annotations=_READ_ONLY)
    def read_experience_card(
        id: Annotated[str, Field(description="A card id from search_experience or check_change, e.g. "
                                             "fx-aiohttp-7b5d54a96c.")],
    ) -> dict[str, Any]:
        """Read one experience card whole: the problem, its root cause, the fix strategy, a digest of the patch,
        how it was verified, and where it comes from (provenance)."""
        return _call(tools.read_card, ws, id)

    @server.tool(name="explain_rule", title="Explain a rule code", annotations=_READ_ONLY)
    def explain_rule(
        code: Annotated[str, Field(description="A rule code from a finding, e.g. SEN301.")],
    ) -> dict[str, Any]:
        """Explain one of Sentinel's rules: what it looks for, why it matters, an example that fires, what to
        write instead, and its default severity."""
        return _call(tools.explain_rule, code)

    return server


def serve(repo: str | None = None) -> None:
    build_server(repo).run("stdio")
