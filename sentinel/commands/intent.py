"""`sentinel commit-msg MSGFILE`: the intent checks (drift, claims) on a commit message and the staged change.

Installed as the pre-commit hook `sentinel-commit-msg` (stage commit-msg): git hands the hook the file
holding the message being committed; the hook reads what git will keep of it (comment lines and the
scissors section dropped) and checks its claims against the staged change, and the change against the
task when one is known.
"""

from __future__ import annotations

import sys

INTENT_CHECKS = ["drift", "claims"]


def register(sub) -> None:
    from sentinel.argparsing import output_file

    from sentinel.commands.core import FORMATS
    p = sub.add_parser("commit-msg", help="check a commit message's claims (and drift from the task) "
                                          "against the staged change")
    p.add_argument("msgfile", metavar="MSGFILE", help="the commit message file git passes to the hook")
    p.add_argument("--config", metavar="PATH", help="config file (default: .sentinel.toml or [tool.sentinel])")
    p.add_argument("--task", metavar="TEXT|@FILE", help="what the change was asked to do (for drift)")
    p.add_argument("--junit", action="append", default=[], metavar="PATH", help="test report (claim evidence)")
    p.add_argument("--coverage", action="append", default=[], metavar="PATH", help="coverage XML (claim evidence)")
    p.add_argument("--fail-level", choices=("info", "warning", "error"), help="lowest severity that fails")
    p.add_argument("--format", choices=FORMATS, default="text")
    p.add_argument("--output", "-o", metavar="FILE", type=output_file, help="write the report here instead of stdout")
    p.add_argument("--no-color", action="store_true", help="never colour the terminal report")
    p.set_defaults(func=cmd_commit_msg)


def comment_char(root: str | None) -> str:
    """git's core.commentChar ('#' unless configured; 'auto' means git picked one: assume '#')."""
    if not root:
        return "#"
    from sentinel import gitio
    from sentinel.errors import GitError
    try:
        out = gitio.run_git(["config", "--get", "core.commentChar"], cwd=root, check=False)
    except GitError:
        return "#"
    value = out.decode("utf-8", "replace").strip()
    return value if value and value != "auto" else "#"


def read_message(path: str, root: str | None) -> str:
    from sentinel.errors import InputError
    from sentinel.intent.message import clean_commit_message
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            raw = fh.read()
    except OSError as exc:
        raise InputError(f"cannot read commit message file {path}: {exc.strerror}") from None
    return clean_commit_message(raw, comment_char(root))


def cmd_commit_msg(args) -> int:
    from sentinel import api, engine, sources
    from sentinel.commands.core import _emit, evidence_files, read_text_arg
    from sentinel.config import load_config
    from sentinel.models import Severity
    change = sources.staged()
    root = change.changeset.root
    message = read_message(args.msgfile, root)
    if not message.strip():
        return 0  # git aborts an empty message itself
    config = load_config(root, args.config, cache_dir=api.cache_dir_for(root))
    opts = engine.RunOptions(
        fail_level=Severity(args.fail_level) if args.fail_level else None,
        only_checks=list(INTENT_CHECKS), task=read_text_arg(args.task), message=message,
        extra=evidence_files(args, root))
    verdict = engine.run(change, config, opts)
    _emit(verdict, args, root, change.changeset)
    if verdict.errored:
        for r in verdict.checks:
            if r.status.value == "error":
                print(f"sentinel: error: check '{r.check}' failed to run: {r.reason}", file=sys.stderr)
        return 2
    return 0 if verdict.passed else 1
