"""The gate: run the enabled checks over a change and turn their findings into a Verdict.

Data flows one way: Change -> FileContexts -> checks -> filter/suppress/baseline -> Verdict.
A check that raises is an *error* of the run (exit 2, check named), never a pass.
"""

from __future__ import annotations

import time
from collections.abc import Callable  # (loaded at start anyway: typing's TYPE_CHECKING would cost the hook ~3 ms)

from sentinel import roles as roles_mod
from sentinel.checks import ANALYSIS_ORDER, CHECK_MODULES, OPTIONAL_CHECKS, load_check
from sentinel.checks.base import ChangeContext, FileContext
from sentinel.config import Config
from sentinel.linemap import LineMap, pack
from sentinel.models import CheckResult, CheckStatus, FileStatus, FilterMode, Finding, NotChecked, Severity, Verdict
from sentinel.moved import MovedCode, reverted_files
from sentinel.record import Record, factory
from sentinel.sources import Change
from sentinel.sourcetext import NOT_UTF8, decode_source, recode_change
from sentinel.suppress import is_suppressed

DEFAULT_BASELINE = ".sentinel-baseline.json"


class RunOptions(Record):
    fail_level: Severity | None = None
    filter_mode: FilterMode | None = None
    only_checks: list[str] | None = None  # run just these checks (e.g. the commit-msg hook)
    extra_banned: list[str] = factory(list)
    task: str | None = None
    message: str | None = None
    baseline_path: str | None = None
    use_baseline: bool = True
    extra: dict = factory(dict)  # passed to change-level checks (junit paths...)
    jobs: int | None = None  # processes for per-file analysis; None: by change size and cores
    # Told how many files the per-file analysis has done, (done, total), as it goes (sentinel.progress).
    progress: Callable[[int, int], None] | None = None


def _decode(fc, data: bytes | None) -> tuple[str | None, str | None]:
    """The file's text as its language reads it (sentinel.sourcetext), or why it cannot be read."""
    if data is None:
        return None, fc.unreadable
    text, encoding, problem = decode_source(data, fc.language)
    if encoding is not None or (text is not None and fc.unreadable):
        recode_change(fc, data, text, encoding or "utf-8")  # the diff's lines as the file declares them
    return text, problem


def build_contexts(change: Change, config: Config, mode: FilterMode) -> tuple[list[FileContext], list[NotChecked]]:
    """One context per file the checks will see, each with its role decided (sentinel.roles)."""
    cs = change.changeset
    contexts: list[FileContext] = []
    not_checked: list[NotChecked] = []
    wanted: list[str] = []
    excluded = config.matcher(config.exclude) if config.exclude else None
    resolver = roles_mod.RoleResolver(config)
    kept = []
    for fc in cs.files:
        if excluded is not None and excluded.match(fc.path):
            continue
        kept.append(fc)
        fc.role = resolver.by_path(fc.path) or roles_mod.PRODUCT
        if fc.is_binary or fc.status is FileStatus.BINARY:
            not_checked.append(NotChecked(fc.path, "binary file"))
        elif fc.unreadable and not (fc.unreadable == NOT_UTF8 and fc.status is not FileStatus.DELETED
                                    and not _content_in_diff(fc, change)):
            not_checked.append(NotChecked(fc.path, fc.unreadable))
        elif fc.status is not FileStatus.DELETED and not _content_in_diff(fc, change):
            wanted.append(fc.path)  # (a file whose diff is not UTF-8 too: it may declare its encoding)
    unchecked = {nc.path for nc in not_checked}
    contents = change.read(wanted)  # even for no paths: it ends a blob reader started early
    for fc in kept:
        if fc.path in unchecked:
            continue  # reported as not checked: never also checked
        content: str | bytes | None = None
        if fc.path in contents:
            content, problem = _decode(fc, contents.pop(fc.path))  # (each file's bytes go as it is read)
            if problem:
                not_checked.append(NotChecked(fc.path, problem))
                continue
            if content is not None and change.content_rev is None and not _consistent(fc, content):
                content = None  # working tree differs from the diff: use the diff's own lines
        if content is None and fc.unreadable:
            not_checked.append(NotChecked(fc.path, fc.unreadable))
            continue
        if content is not None:
            content = pack(content)  # a text that is not ASCII is held as UTF-8 (sentinel.linemap.pack)
            if isinstance(fc.added, LineMap):
                _share(fc, content)
        ctx = FileContext(fc, config, mode, content, root=cs.root)
        # A tool's output says so at its top; an explicit pattern of the user's wins over what a file says.
        if fc.role == roles_mod.PRODUCT and not resolver.has_user_pattern(fc.path) \
                and fc.status is not FileStatus.DELETED and roles_mod.generated_by_content(_head(ctx, fc)):
            fc.role = roles_mod.GENERATED
        contexts.append(ctx)
    return contexts, not_checked


def _share(fc, content: str | bytes) -> None:
    """A file added whole holds its lines twice, as the diff's and as the content read from git: the same text.
    The diff's copy goes; its lines are read from the content (a whole tree staged is hundreds of MB). Both are
    packed (sentinel.linemap.pack): the same text is held the same way, compared without decoding."""
    added = fc.added
    held = added.held
    if held is not None and added.first == 1 and held is not content and held == content:
        fc.added = LineMap(content, added.count)


def _head(ctx: FileContext, fc) -> str:
    if ctx.has_content:
        return ctx.head(2000)
    return "\n".join(fc.added.get(n, fc.context.get(n, "")) for n in range(1, 9))


def _content_in_diff(fc, change: Change) -> bool:
    """A file added by a plain diff carries its whole content; no need to read anything."""
    return change.content_rev is None and fc.status is FileStatus.ADDED


def _consistent(fc, content: str) -> bool:
    lines = content.split("\n")
    for n, text in fc.added.items():
        if n > len(lines) or lines[n - 1].rstrip("\r") != text:
            return False
    return True


def _enabled_checks(config: Config, opts: RunOptions) -> tuple[list[str], list[CheckResult]]:
    names = list(CHECK_MODULES) + [n for n in OPTIONAL_CHECKS if _module_exists(OPTIONAL_CHECKS[n])]
    if opts.only_checks:
        names = [n for n in names if n in opts.only_checks]
    run, skipped = [], []
    for name in names:
        if not config.section_enabled(name):
            skipped.append(CheckResult(name, CheckStatus.SKIPPED, reason="disabled in config"))
        else:
            run.append(name)
    return run, skipped


def _module_exists(module: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(module) is not None


def run(change: Change, config: Config, opts: RunOptions | None = None) -> Verdict:
    opts = opts or RunOptions()
    start = time.perf_counter()
    mode = opts.filter_mode or config.filter_mode
    fail_level = opts.fail_level or config.fail_level
    if opts.extra_banned:
        config.jail.banned_imports = list(dict.fromkeys([*config.jail.banned_imports, *opts.extra_banned]))
        config.jail.banned_dependencies = list(dict.fromkeys([*config.jail.banned_dependencies, *opts.extra_banned]))

    contexts, not_checked = build_contexts(change, config, mode)
    names, results = _enabled_checks(config, opts)
    by_path = {ctx.path: ctx for ctx in contexts}
    phases, parse_errors = _file_phases([n for n in names if n not in GATED_CHECKS], contexts, opts)
    findings: list[Finding] = []
    ran: list[str] = []
    for name in names:
        if name in GATED_CHECKS:
            blocker = _deterministic_blocker(results, findings, by_path, config, mode, fail_level)
            if blocker:
                results.append(CheckResult(name, CheckStatus.SKIPPED, reason=blocker))
                continue
        result = _run_check(name, change, config, mode, opts, findings, by_path, ran,
                            phase=phases.get(name))
        results.append(result)
        findings.extend(result.findings)
        if result.status not in (CheckStatus.ERROR, CheckStatus.SKIPPED):
            ran.append(name)
    order = {name: i for i, name in enumerate([*CHECK_MODULES, *OPTIONAL_CHECKS])}
    results.sort(key=lambda r: order.get(r.check, len(order)))  # report in gate order, skipped ones included

    parse_errors = dict(parse_errors)  # from the per-file phase, wherever it ran
    for ctx in contexts:
        if ctx.language == "python" and ctx._parsed and ctx.parse_error:
            parse_errors.setdefault(ctx.path, ctx.parse_error)  # parsed later by a change-level check
    for ctx in contexts:
        if ctx.path in parse_errors:
            not_checked.append(NotChecked(ctx.path, f"does not parse ({parse_errors[ctx.path]}): "
                                                    "syntax-based rules skipped"))

    cs = change.changeset
    message = opts.message if opts.message is not None else cs.message
    restored = lambda: reverted_files(cs.root, message, cs.head)  # noqa: E731 - asked only when needed
    kept, suppressed = _postprocess(findings, by_path, config, mode, restored)
    baselined = 0
    bl_path = opts.baseline_path or config.baseline or DEFAULT_BASELINE
    if opts.use_baseline and bl_path:
        import os
        full = bl_path if os.path.isabs(bl_path) or not cs.root else os.path.join(cs.root, bl_path)
        if os.path.exists(full):
            from sentinel import baseline as baseline_mod  # json and hashing only when a baseline exists
            kept, baselined = baseline_mod.apply(kept, baseline_mod.load(full),
                                                 baseline_mod.unchanged_copies(by_path, mode))
    kept.sort(key=Finding.sort_key)
    kept_ids = {id(f) for f in kept}
    for r in results:
        r.findings = [f for f in r.findings if id(f) in kept_ids]
        if r.status is CheckStatus.PASSED and any(f.severity.rank >= fail_level.rank for f in r.findings):
            r.status = CheckStatus.FAILED
    blocking = any(f.severity.rank >= fail_level.rank for f in kept)
    errored = any(r.status is CheckStatus.ERROR for r in results)
    return Verdict(passed=not blocking and not errored, fail_level=fail_level, checks=results, findings=kept,
                   source=cs.source, files_changed=len(cs.files), lines_added=cs.added_line_count,
                   not_checked=not_checked, suppressed=suppressed, baselined=baselined,
                   duration_ms=round((time.perf_counter() - start) * 1000, 1))


# Checks that cost money or send code out (the LLM review): they run only when every check before
# them passed, so a change the deterministic checks already block is never sent.
GATED_CHECKS = ("llm",)


def _deterministic_blocker(results, findings, by_path, config, mode, fail_level) -> str | None:
    errored = [r.check for r in results if r.status is CheckStatus.ERROR]
    if errored:
        return f"not run: check {', '.join(errored)} errored"
    kept, _ = _postprocess(list(findings), by_path, config, mode)
    blocking = [f for f in kept if f.severity.rank >= fail_level.rank]
    if blocking:
        return f"not run: the deterministic checks found {len(blocking)} blocking finding(s)"
    return None


def _file_phases(names: list[str], contexts: list[FileContext], opts: RunOptions):
    """Every check's per-file analysis, file by file, on several processes for a large change."""
    from sentinel import parallel

    modules, unloadable = {}, {}
    first = {name: i for i, name in enumerate(ANALYSIS_ORDER)}
    for name in sorted(names, key=lambda n: first.get(n, len(first))):
        try:
            module = load_check(name)
        except Exception as exc:  # a check that cannot even load is that check's error
            unloadable[name] = parallel.FilePhase(error=f"{type(exc).__name__}: {exc}")
            continue
        if getattr(module, "check_file", None) is not None:
            modules[name] = module
    if not modules or not contexts:
        return unloadable, []
    jobs = parallel.plan_jobs(opts.jobs, contexts)
    if jobs > 1:
        phases, parse_errors = parallel.analyse_parallel(modules, contexts, jobs, opts.progress)
    else:
        # A large change analysed in this one process (--jobs 1, no fork) drops each file's AST once
        # the file is done, as the workers do: kept, they would add up to ~1 KB per changed line.
        big = sum(parallel._weight(ctx) for ctx in contexts) >= parallel.MIN_LINES
        done = parallel.counter(len(contexts), opts.progress)
        phases, parse_errors = parallel.analyse(modules, contexts, portable=big, on_file=done)
    return {**phases, **unloadable}, parse_errors


def _run_check(name, change, config, mode, opts, findings_so_far, by_path,
               checks_run: list[str] | None = None, phase=None) -> CheckResult:
    t0 = time.perf_counter()
    if phase is not None and phase.error is not None:
        return CheckResult(name, CheckStatus.ERROR, reason=phase.error, duration_ms=round(phase.seconds * 1000, 1))
    try:
        module = load_check(name)
        out: list[Finding] = []
        if phase is not None:
            out.extend(phase.findings)
            t0 -= phase.seconds  # report the check's whole time, wherever its files were analysed
        check_change = getattr(module, "check_change", None)
        status, reason = CheckStatus.PASSED, ""
        if check_change is not None:
            cctx = ChangeContext(files=change.changeset.files, config=config, mode=mode, root=change.changeset.root,
                                 message=opts.message if opts.message is not None else change.changeset.message,
                                 task=opts.task, findings_so_far=list(findings_so_far), file_contexts=by_path,
                                 options=dict(opts.extra),
                                 findings_of=_findings_of(list(findings_so_far), list(checks_run or []), by_path,
                                                          config, mode))
            res = check_change(cctx)
            # A change-level check may report that it could not run (e.g. no embedding model).
            if isinstance(res, CheckResult):
                res.duration_ms = round((time.perf_counter() - t0) * 1000, 1)
                res.findings = out + res.findings
                return res
            out.extend(res)
        return CheckResult(name, status, findings=out, reason=reason,
                           duration_ms=round((time.perf_counter() - t0) * 1000, 1))
    except Exception as exc:  # a crashing check is a gate error, reported with its name
        return CheckResult(name, CheckStatus.ERROR, reason=f"{type(exc).__name__}: {exc}",
                           duration_ms=round((time.perf_counter() - t0) * 1000, 1))


def _findings_of(findings_so_far: list[Finding], checks_run: list[str], by_path: dict[str, FileContext],
                 config: Config, mode: FilterMode):
    """What a change-level check may ask about the others (ChangeContext.findings_of), each answer computed once:
    the check's findings as the verdict would keep them, running a per-file check this invocation skipped."""
    cache: dict[str, list[Finding] | None] = {}

    def findings_of(check: str) -> list[Finding] | None:
        if check not in cache:
            cache[check] = _other_check_findings(check, findings_so_far, checks_run, by_path, config, mode)
        return cache[check]
    return findings_of


def _other_check_findings(check, findings_so_far, checks_run, by_path, config, mode) -> list[Finding] | None:
    if check in checks_run:
        raw = [f for f in findings_so_far if f.check == check]
    else:
        if check not in CHECK_MODULES or not config.section_enabled(check):
            return None
        check_file = getattr(load_check(check), "check_file", None)
        if check_file is None:
            return None
        raw = [f for ctx in by_path.values() for f in check_file(ctx)]
    kept, _ = _postprocess(raw, by_path, config, mode)
    return kept


def _postprocess(findings: list[Finding], by_path: dict[str, FileContext], config: Config,
                 mode: FilterMode, restored=None) -> tuple[list[Finding], int]:
    """Scope, role policy, config overrides, per-path ignores and inline suppressions, in that order."""
    kept: list[Finding] = []
    suppressed = 0
    rules = _RuleLookup()
    moved = None
    for f in findings:
        ctx = by_path.get(f.path)
        if ctx is not None and mode is not FilterMode.NOFILTER and not ctx.selected(f.line):
            continue
        rule = rules.get(f)
        role = ctx.change.role if ctx is not None else None
        f.role = role
        override = config.severity.get(f.rule)
        if rule is not None:
            severity = rule.severity_in(role, f.severity, override, existing=ctx is not None and ctx.change.existing)
        else:
            severity = None if override == "off" else (Severity(override) if override else f.severity)
        if severity is None:
            continue
        if severity is not Severity.INFO and ctx is not None and not getattr(rule, "security", False) \
                and not f.message.endswith(_MOVED_NOTE):
            if moved is None:
                moved = MovedCode([c.change for c in by_path.values()], restored)
            if moved.is_moved(ctx.change, f.line):
                severity = Severity.INFO  # the change moved this code; it did not write it
                f.message += _MOVED_NOTE
        f.severity = severity
        if _ignored_by_path(f, config):
            continue
        if ctx is not None and f.line and _inline_suppressed(f, ctx, rule):
            suppressed += 1
            continue
        kept.append(f)
    return kept, suppressed


_MOVED_NOTE = " (moved or restored code: the change removed these lines elsewhere, or reverts their removal)"


class _RuleLookup:
    """Rule code -> Rule, loading only the modules of checks that reported something."""

    def __init__(self):
        self._by_code: dict = {}
        self._loaded: set[str] = set()

    def get(self, f: Finding):
        rule = self._by_code.get(f.rule)
        if rule is None and f.check not in self._loaded:
            self._loaded.add(f.check)
            try:
                module = load_check(f.check)
            except (KeyError, ImportError):
                return None
            for r in getattr(module, "RULES", ()):
                self._by_code[r.code] = r
            rule = self._by_code.get(f.rule)
        return rule


def _ignored_by_path(f: Finding, config: Config) -> bool:
    for pattern, codes in config.per_path_ignores.items():
        if any(c == "*" or f.rule == c.upper() or (len(c) >= 4 and f.rule.startswith(c.upper())) or f.check == c
               for c in codes) and config.matcher([pattern]).match(f.path):
            return True
    return False


def _inline_suppressed(f: Finding, ctx: FileContext, rule) -> bool:
    lexed = ctx.comment_lines
    comments = lexed.comments
    if not comments:
        return False
    equivalents, security = getattr(rule, "noqa", ()), getattr(rule, "security", False)
    explicit, pragmas = getattr(rule, "explicit_only", False), getattr(rule, "allow_pragmas", ())
    if is_suppressed(f.rule, f.line, comments, equivalents, security, f.end_line, explicit, pragmas):
        return True
    # A line inside a multi-line string cannot carry a comment: as with ruff, the comment after the string's
    # closing quotes speaks for every line of it.
    inner = lexed.string_inner
    if f.line + 1 in inner or f.line in inner:
        end = f.line
        while end + 1 in inner and end - f.line < 10000:
            end += 1
        return end != f.line and is_suppressed(f.rule, end, comments, equivalents, security, None, explicit, pragmas)
    return False
