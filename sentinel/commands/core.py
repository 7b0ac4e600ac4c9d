"""`sentinel check`, `rules`, `explain`, `config`, `baseline`."""

from __future__ import annotations

import os
import sys

from sentinel.errors import InputError

FORMATS = ("text", "concise", "json", "sarif", "github", "markdown")


def add_source_args(p) -> None:
    src = p.add_argument_group("what to check (default: the staged change, new files included)")
    x = src.add_mutually_exclusive_group()
    x.add_argument("--range", metavar="A..B", help="a commit range; A...B diffs against the merge base")
    x.add_argument("--diff", metavar="FILE", help="a unified diff file, or - for stdin")
    x.add_argument("--all-files", action="store_true", help="the whole tracked tree as an all-added change")
    x.add_argument("--staged", action="store_true", help="the staged change (default)")


def add_gate_args(p) -> None:
    from sentinel.argparsing import nonempty_text, output_file

    p.add_argument("--config", metavar="PATH", help="config file (default: .sentinel.toml or [tool.sentinel])")
    p.add_argument("--fail-level", choices=("info", "warning", "error"), help="lowest severity that fails the gate")
    p.add_argument("--filter-mode", choices=("added", "diff_context", "file", "nofilter"),
                   help="which findings of changed files count (default: added lines only)")
    p.add_argument("--ban", action="append", default=[], metavar="NAME", type=nonempty_text,
                   help="ban an import/dependency for this run (repeatable)")
    p.add_argument("--no-baseline", action="store_true", help="ignore the baseline file")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text (grouped by file), concise (one path:line:col: CODE message line per finding), "
                        "json, sarif (code scanning), github (workflow annotations), markdown")
    p.add_argument("--output", "-o", metavar="FILE", type=output_file, help="write the report here instead of stdout")
    p.add_argument("--no-color", action="store_true", help="never colour the terminal report")
    p.add_argument("--statistics", action="store_true",
                   help="print how many findings each rule produced instead of the findings (text or json)")
    p.add_argument("--exit-zero", action="store_true",
                   help="exit 0 even when findings fail the gate (errors still exit 2)")


def register(sub) -> None:
    from sentinel.argparsing import output_file, positive_int

    p = sub.add_parser("check", help="run the gate on a change")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="only these files: their part of the change, or the whole file when the change does not "
                        "touch it (what pre-commit passes, honouring its files/exclude/types)")
    add_source_args(p)
    add_gate_args(p)
    p.add_argument("--task", metavar="TEXT|@FILE", help="what the change was asked to do (for drift)")
    p.add_argument("--message", metavar="TEXT|@FILE", help="commit message / PR body (for claims)")
    p.add_argument("--junit", action="append", default=[], metavar="PATH", help="test report (claim evidence)")
    p.add_argument("--coverage", action="append", default=[], metavar="PATH", help="coverage XML (claim evidence)")
    p.add_argument("--no-memory", action="store_true", help="do not consult or update the experience memory")
    p.add_argument("--jobs", "-j", type=positive_int, metavar="N",
                   help="processes for per-file analysis (default: by change size, cores and a memory budget of "
                        "5x the change; 1: serial)")
    fixes = p.add_argument_group("fixes (rules say whether theirs is safe: `sentinel explain CODE`)")
    fixes.add_argument("--fix", action="store_true",
                       help="apply the safe fixes to the working tree (exits 1 when files changed: re-stage them)")
    fixes.add_argument("--unsafe-fixes", action="store_true",
                       help="with --fix or --diff-fixes: also the fixes that may change behaviour")
    fixes.add_argument("--diff-fixes", action="store_true",
                       help="print the fixes as a unified diff and write nothing")
    p.set_defaults(func=cmd_check)

    from sentinel.commands.formatopt import add_format_option

    p = sub.add_parser("rules", help="list every rule with its code and default severity")
    add_format_option(p, ("text", "json", "markdown"))
    p.set_defaults(func=cmd_rules)

    p = sub.add_parser("explain", help="document one rule: what, why, example, use instead")
    p.add_argument("code")
    add_format_option(p, ("text", "json", "markdown"))
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser("config", help="print the effective configuration")
    p.add_argument("--config", metavar="PATH")
    add_format_option(p)
    p.set_defaults(func=cmd_config)

    p = sub.add_parser("baseline", help="write a baseline of the current findings")
    add_source_args(p)
    p.add_argument("--config", metavar="PATH")
    p.add_argument("--output", "-o", metavar="FILE", default=None, type=output_file,
                   help="baseline file (default: config 'baseline' or .sentinel-baseline.json)")
    add_format_option(p)
    p.set_defaults(func=cmd_baseline, all_files_default=True)


def check_defaults(paths: list[str] | None = None):
    """The arguments of `sentinel check [PATH...]`, as the parser declared above would produce them."""
    from types import SimpleNamespace

    return SimpleNamespace(command="check", paths=list(paths or []), range=None, diff=None, all_files=False,
                           staged=False, config=None,
                           fail_level=None, filter_mode=None, ban=[], no_baseline=False, format="text", output=None,
                           no_color=False, statistics=False, exit_zero=False, task=None, message=None, junit=[],
                           coverage=[], no_memory=False, jobs=None, fix=False, unsafe_fixes=False, diff_fixes=False,
                           func=cmd_check)


# A commit message, PR body or task longer than this is not one (GitHub caps a PR body at 64K characters);
# reading stops here, so @/dev/zero or an endless FIFO cannot exhaust memory.
MAX_TEXT_ARG_BYTES = 8 * 1024 * 1024


def read_text_arg(value: str | None) -> str | None:
    """TEXT or @FILE."""
    if value is None or not value.startswith("@"):
        return value
    path = value[1:]
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_TEXT_ARG_BYTES + 1)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    if len(data) > MAX_TEXT_ARG_BYTES:
        raise InputError(f"{path} is larger than {MAX_TEXT_ARG_BYTES // (1024 * 1024)} MiB: too long for a commit "
                         "message, pull request text or task")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text") from None


def evidence_files(args, root: str | None) -> dict:
    """The --junit and --coverage reports named on the command line. Each must exist (as given, or relative to
    the repository root as the claims check reads it): a report that is not there is a mistyped path or a step
    that did not run, a usage error — never quietly no evidence."""
    from sentinel.intent.evidence import resolve_paths

    for flag, paths in (("--junit", args.junit), ("--coverage", args.coverage)):
        for given in paths:
            path = resolve_paths([given], root)[0]
            if not os.path.isfile(path):
                what = "is a directory" if os.path.isdir(path) else "does not exist"
                raise InputError(f"{flag} {given}: {what} (a report file is expected)")
    return {"junit": args.junit, "coverage": args.coverage}


def _start_staged(args):
    """For a staged check (the commit hook), start its git processes before importing the gate:
    they run while Python loads the checks. None when another source is asked for, or when git
    cannot start (the ordinary path then reports why)."""
    if args.range or args.diff or args.all_files or (os.environ.get("PRE_COMMIT_TO_REF") and not args.staged):
        return None
    from sentinel import gitio
    from sentinel.errors import GitError

    try:
        return gitio.StagedSnapshot()
    except GitError:
        return None


def _change_and_config(args, started=None):
    from sentinel import api, sources
    rng = args.range
    if not (rng or args.diff or args.all_files or args.staged):
        rng = sources.pre_push_range() if os.environ.get("PRE_COMMIT_TO_REF") else None
    change = api.get_change(range=rng, diff_file=args.diff, all_files=args.all_files,
                            started=started if not rng else None)
    if getattr(args, "paths", None):
        from sentinel.selection import restrict
        change = restrict(change, args.paths)
    from sentinel.config import load_config
    root = change.changeset.root
    config = load_config(root, args.config, cache_dir=api.cache_dir_for(root))
    return change, config


def cmd_check(args) -> int:
    started = _start_staged(args)
    from sentinel import engine
    from sentinel.models import FilterMode, Severity
    from sentinel.progress import for_terminal
    change, config = _change_and_config(args, started)
    extra = evidence_files(args, change.changeset.root)
    progress = for_terminal()  # a terminal's stderr only; drawn once the run has lasted half a second
    opts = engine.RunOptions(
        fail_level=Severity(args.fail_level) if args.fail_level else None,
        filter_mode=FilterMode(args.filter_mode) if args.filter_mode else None,
        extra_banned=args.ban, task=read_text_arg(args.task), message=read_text_arg(args.message),
        use_baseline=not args.no_baseline, extra=extra, jobs=args.jobs,
        progress=progress.files if progress is not None else None)
    if args.unsafe_fixes and not (args.fix or args.diff_fixes or args.format == "sarif"):
        raise InputError("--unsafe-fixes applies with --fix, --diff-fixes or --format sarif")
    try:
        verdict = engine.run(change, config, opts)
        written: list[str] = []
        if args.fix or args.diff_fixes:
            from sentinel.fix import cli as fix_cli

            if progress is not None:
                progress.stage("planning fixes")
            plan = fix_cli.make_plan(change, config, verdict, args.unsafe_fixes)
            if args.diff_fixes:
                _done(progress)
                pending = fix_cli.show_diff(plan)
                return 2 if verdict.errored else (1 if pending or not verdict.passed else 0)
            written = fix_cli.apply(plan, change.changeset.root)
            verdict = fix_cli.without_fixed(verdict, plan, written)
        if not args.no_memory and config.memory.enabled:
            if progress is not None and not verdict.passed:
                progress.stage("recalling similar past fixes")
            verdict = _remember(change, config, verdict)
        fixes = _sarif_fixes(change, config, verdict, args) if args.format == "sarif" and not args.statistics \
            else None
    finally:
        _done(progress)
    _emit(verdict, args, change.changeset.root or os.getcwd(), change.changeset, fixes)
    code = exit_code(verdict, args)
    if written:
        return 2 if code == 2 else 1  # files changed: the commit stops so they can be reviewed and re-staged
    if not args.fix:
        _fixable_note(verdict, args)
    return code


def _done(progress) -> None:
    """Erase the progress line before anything else is printed."""
    if progress is not None:
        progress.close()


def _sarif_fixes(change, config, verdict, args) -> dict | None:
    """SARIF `fixes` for the findings that have one (safe ones; unsafe too with --unsafe-fixes), describing the
    checked content. A failure here costs the report its fixes, never the report."""
    if not verdict.findings:
        return None
    try:
        from sentinel.fix import export, planner
        plan = planner.plan(change, verdict.findings, config, unsafe=args.unsafe_fixes, require_worktree=False)
        return export.sarif_fixes(plan)
    except Exception as exc:  # noqa: BLE001 - the report matters more than its fixes
        sys.stderr.write(f"sentinel: SARIF fixes left out: {type(exc).__name__}: {exc}\n")
        return None


def _fixable_note(verdict, args) -> None:
    """Point at --fix when reported findings have a safe fix, from the rules of the checks that reported
    them (modules the run already loaded: nothing more is imported on the hook path)."""
    if not verdict.findings or args.format not in ("text", "concise") or args.output or args.statistics:
        return
    from sentinel.checks import CHECK_MODULES, OPTIONAL_CHECKS, load_check
    safety: dict[str, str] = {}
    for check in {f.check for f in verdict.findings if f.check in CHECK_MODULES or f.check in OPTIONAL_CHECKS}:
        safety.update((r.code, r.fix) for r in load_check(check).RULES)
    safe = sum(1 for f in verdict.findings if safety.get(f.rule) == "safe")
    if safe:
        sys.stderr.write(f"sentinel: {safe} finding(s) have a safe fix: preview with `sentinel check "
                         "--diff-fixes`, apply with `sentinel check --fix`\n")


def exit_code(verdict, args) -> int:
    """0 passed, 1 findings at or above the fail level (0 with --exit-zero), 2 a check crashed."""
    if verdict.errored:
        for r in verdict.checks:
            if r.status.value == "error":
                print(f"sentinel: error: check '{r.check}' failed to run: {r.reason}", file=sys.stderr)
        return 2
    return 0 if verdict.passed or getattr(args, "exit_zero", False) else 1


def _remember(change, config, verdict):
    """Record the run in the hypothesis store and, on failure, add recall. Optional feature."""
    # Recall's vector products are a few hundred rows: OpenBLAS's thread pool only costs its start
    # (~20% of numpy's import). Only unless the user chose, and only in this short-lived process.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        from sentinel.memory.hypotheses import gate_hook
    except ModuleNotFoundError:
        return verdict
    from sentinel.checks import rule_index

    return gate_hook.after_run(change, config, verdict, rules=rule_index)


def _emit(verdict, args, root: str | None = None, changeset=None, fixes: dict | None = None) -> None:
    from sentinel.checks import rule_index
    from sentinel.report import render
    fmt = args.format
    to_tty = not args.output and sys.stdout.isatty()
    exit_zero = getattr(args, "exit_zero", False)
    kwargs = {"color": to_tty and not args.no_color and not os.environ.get("NO_COLOR"), "exit_zero": exit_zero}
    if getattr(args, "statistics", False):
        if fmt not in ("text", "concise", "json"):
            raise InputError(f"--statistics prints text or json, not {fmt}")
        from sentinel.report import statistics
        text = statistics.render(verdict, rules=rule_index(), as_json=fmt == "json", exit_zero=exit_zero)
    else:
        if fmt == "sarif":
            from sentinel.report.locate import Locator
            kwargs["rules"] = rule_index()
            kwargs["root"] = root
            kwargs["locator"] = Locator(changeset.files if changeset is not None else None, root)
            kwargs["fixes"] = fixes
        text = render(verdict, fmt, **kwargs)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise InputError(f"cannot write the report to {args.output}: {exc.strerror or exc}") from None
        if fmt not in ("text", "concise") or getattr(args, "statistics", False):
            # keep a human line on the terminal when the report went to a file
            from sentinel.report.terminal import summary_line
            sys.stdout.write(summary_line(verdict, exit_zero) + "\n")
    else:
        sys.stdout.write(text)


def cmd_rules(args) -> int:
    from sentinel.checks import all_rules
    from sentinel.report.links import rule_url
    rules = all_rules()
    if args.format == "json":
        import json
        print(json.dumps([{"code": r.code, "name": r.name, "check": r.check, "severity": r.severity.value,
                           "summary": r.summary, "fix": r.fix, "url": rule_url(r.code)} for r in rules], indent=2))
        return 0
    if args.format == "markdown":
        from sentinel.report import ruledoc
        sys.stdout.write(ruledoc.markdown_page(rules))
        return 0
    for r in rules:
        print(f"{r.code}  {r.severity.value:<7}  {r.check:<11}  {r.name:<28}  {r.summary}")
    return 0


def cmd_explain(args) -> int:
    from sentinel.checks import rule_index
    from sentinel.report import ruledoc
    rule = rule_index().get(args.code.upper())
    if rule is None:
        raise InputError(f"unknown rule code {args.code!r}; `sentinel rules` lists them")
    if args.format == "json":
        import json

        from sentinel.report.links import rule_url
        print(json.dumps({"code": rule.code, "name": rule.name, "check": rule.check,
                          "severity": rule.severity.value, "summary": rule.summary, "rationale": rule.rationale,
                          "example": ruledoc.example_text(rule),
                          "counter_example": ruledoc.example_text(rule, counter=True), "hint": rule.hint,
                          "fix": rule.fix,
                          "url": rule_url(rule.code)}, indent=2, ensure_ascii=False))
    elif args.format == "markdown":
        sys.stdout.write(ruledoc.markdown(rule))
    else:
        sys.stdout.write(ruledoc.text(rule))
    return 0


def cmd_config(args) -> int:
    import json

    from sentinel import gitio
    from sentinel.config import load_config, to_plain
    from sentinel.errors import GitError
    try:
        root = gitio.repo_root()
    except GitError:
        root = None
    cfg = load_config(root, args.config)
    if args.format == "json":
        print(json.dumps({"source": cfg.source, "config": to_plain(cfg)}, indent=2))
        return 0
    print(f"# effective configuration (from {cfg.source})")
    print(json.dumps(to_plain(cfg), indent=2))
    return 0


def cmd_baseline(args) -> int:
    from sentinel import baseline, engine
    if not (args.range or args.diff or args.staged):
        args.all_files = True
    change, config = _change_and_config(args)
    verdict = engine.run(change, config, engine.RunOptions(use_baseline=False))
    path = args.output or config.baseline or ".sentinel-baseline.json"
    if not os.path.isabs(path) and change.changeset.root and not args.output:
        path = os.path.join(change.changeset.root, path)
    n = baseline.write(path, verdict.findings)
    if args.format == "json":
        import json

        print(json.dumps({"path": path, "findings": n}))
    else:
        print(f"sentinel: wrote {n} finding(s) to {path}")
    return 0
