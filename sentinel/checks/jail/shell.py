"""Shell-like files (scripts, Makefiles, Dockerfiles, CI run blocks): destructive commands (SEN106)."""

from __future__ import annotations

import bisect
import posixpath
import re

from sentinel.checks.base import FileContext
from sentinel.checks.jail.manifests import _json_loads
from sentinel.checks.jail.rules import SEN106
from sentinel.checks.jail.settings import _lazy, _Out
from sentinel.models import Severity

_SHELLISH = {"shell", "make", "docker", "yaml"}


_SH_RM = _lazy(r"\brm\b")
_SH_WORD = r"""(?:\$\{[^}]*\}|\$\((?:[^()]|\([^()]*\))*\)|"(?:\\.|[^"\\])*"|'[^']*'|\\.|[^\s"'`;&|()<>\\])+"""
_SH_TOKEN = _lazy(rf"(?P<op>&&|\|\||[;&|()`]|[<>]+&?)|(?P<w>{_SH_WORD})")
_SH_PREFIX = {"sudo", "env", "command", "builtin", "exec", "time", "nohup", "nice", "then", "do", "else", "!",
              "{", "}", "xargs", "doas"}
_ASSIGNMENT = _lazy(r"^[A-Za-z_]\w*=")
_YAML_RUN_KEY = _lazy(
    r"^(?P<lead>\s*(?:-\s+)?)(?P<key>run|script|scripts|before_script|after_script|before_install|install|"
    r"command|commands|cmd|entrypoint|bash|sh|inlineScript)\s*:(?:\s+(?P<value>.*?))?\s*$")
_BLOCK_VALUE = _lazy(r"^[|>][-+0-9]*$")
_VAR_ONLY = _lazy(r"^(?:\$\w+|\$\{\w+\}|\$\(\w+\)|\$\$\w+|\$\$\{\w+\})/*\*?$")
_HOME = {"~", "$HOME", "${HOME}", "$(HOME)", "$$HOME"}
_SAFE_TOP = {"tmp", "var/tmp"}


def _comment_free(ctx: FileContext, n: int) -> str:
    raw = ctx.line(n)
    comment = ctx.lexed.comments.get(n)
    if comment and raw.endswith(comment):
        return raw[: len(raw) - len(comment)]
    return raw


def _check_shellish(ctx: FileContext, out: _Out) -> None:
    if ctx.language == "yaml":
        physical = _yaml_command_lines(ctx)
    else:
        physical = [(n, _comment_free(ctx, n)) for n in range(1, len(ctx.lines))]
    for segments in _logical_lines(physical):
        if not any(ctx.selected(n) for n, _ in segments):
            continue
        text = " ".join(t for _, t in segments)
        if ("rm" not in text or not _SH_RM.search(text)) and "git" not in text:
            continue
        if ctx.language == "docker":
            text = _docker_run(text)
            if text is None:
                continue
        elif ctx.language == "make":
            text = text.lstrip().lstrip("@-+")
        starts, acc = [], 0
        for _, t in segments:
            starts.append(acc)
            acc += len(t) + 1
        for (cmd, why), offset in _shell_findings(text, any_target=False):
            idx = bisect.bisect_right(starts, offset) - 1
            line = segments[max(idx, 0)][0]
            if not ctx.selected(line):
                line = next((n for n, _ in segments if ctx.selected(n)), None)
            if line is not None:
                before = len(out.findings)
                out.add(SEN106, line, f"`{cmd}` {why}")
                if why.startswith(OTHER_BRANCH) and len(out.findings) > before:
                    out.findings[-1].severity = Severity.WARNING  # not a branch others build on


def _logical_lines(physical: list[tuple[int, str]]):
    """Join backslash-continued lines: yields lists of (line, text) segments."""
    group: list[tuple[int, str]] = []
    for n, text in physical:
        stripped = text.rstrip()
        if stripped.endswith("\\"):
            group.append((n, stripped[:-1]))
            continue
        group.append((n, text))
        yield group
        group = []
    if group:
        yield group


def _docker_run(text: str) -> str | None:
    m = re.match(r"\s*RUN\s+((?:--\S+\s+)*)(.*)$", text, re.IGNORECASE | re.DOTALL)
    if not m:
        return None
    body = m.group(2)
    if body.lstrip().startswith("["):
        try:
            words = _json_loads(body)
        except ValueError:
            return body
        if isinstance(words, list) and all(isinstance(w, str) for w in words):
            return " ".join(_sh_quote(w) for w in words)
    return body


def _sh_quote(word: str) -> str:
    return word if re.fullmatch(r"[\w./~$:=@%+,-]+", word) else "'" + word.replace("'", "") + "'"


def _yaml_command_lines(ctx: FileContext) -> list[tuple[int, str]]:
    """Lines of a YAML file that are shell commands: values of run/script/command-like keys,
    inline or as block scalars/lists beneath them."""
    out: list[tuple[int, str]] = []
    block_indent: int | None = None
    same_indent_items = False  # "script:\n- cmd": YAML lets a key's list sit at the key's own indent
    for n in range(1, len(ctx.lines)):
        text = _comment_free(ctx, n)
        if not text.strip():
            continue
        indent = len(text) - len(text.lstrip())
        if block_indent is not None and (indent > block_indent or (
                same_indent_items and indent == block_indent and text.lstrip().startswith("- "))):
            m = _YAML_RUN_KEY.match(text)
            if not m:
                body = text.strip()
                out.append((n, _yaml_scalar(body.removeprefix("- "))))
                continue
        else:
            block_indent = None
            m = _YAML_RUN_KEY.match(text)
        if not m:
            continue
        value = (m.group("value") or "").strip()
        if not value or _BLOCK_VALUE.match(value):
            lead = m.group("lead")
            block_indent = len(lead)
            same_indent_items = not value and "-" not in lead
        elif not value.startswith(("{", "[")):
            out.append((n, _yaml_scalar(value)))
    return out


def _yaml_scalar(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _shell_commands(text: str):
    """Simple commands of a shell line: lists of (word, offset), redirection targets dropped."""
    words: list[tuple[str, int]] = []
    skip_next = False
    for m in _SH_TOKEN.finditer(text):
        op = m.group("op")
        if op is not None:
            if op[0] in "<>":
                skip_next = True
                continue
            if words:
                yield words
            words = []
            continue
        if skip_next:
            skip_next = False
            continue
        words.append((m.group("w"), m.start()))
    if words:
        yield words


def _unquote(word: str) -> str:
    return re.sub(r"""\\(.)|["']""", lambda m: m.group(1) or "", word)


def _strip_prefixes(words: list[str]) -> list[str]:
    i = 0
    while i < len(words):
        w = words[i]
        if w in _SH_PREFIX or _ASSIGNMENT.match(w):
            i += 1
            while w in ("sudo", "doas", "xargs", "env", "nice") and i < len(words) and words[i].startswith("-"):
                i += 2 if words[i] in ("-u", "-g", "-n", "-I") else 1
            continue
        break
    return words[i:]


def _shell_findings(text: str, any_target: bool) -> list[tuple[tuple[str, str], int]]:
    """((command, why), offset of the command word) for each destructive command of a shell line."""
    found = []
    for cmd in _shell_commands(text):
        raw = [w for w, _ in cmd]
        rest = _strip_prefixes(raw)
        if not rest:
            continue
        desc = _describe_words(rest, any_target)
        if desc:
            found.append((desc, cmd[len(raw) - len(rest)][1]))
    return found


def _describe_words(words: list[str], any_target: bool) -> tuple[str, str] | None:
    """(command as shown, why it is destructive) for a destructive command given as words
    (quotes allowed), or None. With ``any_target`` every recursive rm counts; otherwise only
    dangerous targets do."""
    words = _strip_prefixes(list(words))
    if not words:
        return None
    prog = posixpath.basename(_unquote(words[0]).lstrip("\\"))
    if prog == "rm":
        return _describe_rm(words[1:], any_target)
    if prog == "git":
        return _describe_git([_unquote(a) for a in words[1:]])
    return None


def _describe_rm(args: list[str], any_target: bool) -> tuple[str, str] | None:
    recursive = no_preserve = False
    flags: list[str] = []
    targets: list[str] = []
    options_done = False
    for a in args:
        plain = _unquote(a)
        if not options_done and plain == "--":
            options_done = True
        elif not options_done and plain.startswith("--"):
            flags.append(plain)
            recursive |= plain == "--recursive"
            no_preserve |= plain == "--no-preserve-root"
        elif not options_done and plain.startswith("-") and len(plain) > 1:
            flags.append(plain)
            recursive |= "r" in plain or "R" in plain
        else:
            targets.append(a)
    if not recursive:
        return None
    shown = " ".join(["rm", *flags])
    if no_preserve:
        return shown, "disables the root-directory safeguard"
    if any_target:
        return f"{shown} {' '.join(_unquote(t) for t in targets)}".rstrip(), "deletes recursively"
    for t in targets:
        why = rm_target_risk(t)
        if why:
            return f"{shown} {_unquote(t)}", why
    return None


def rm_target_risk(word: str) -> str | None:
    """Why deleting this rm target (as written in a script) is dangerous: the filesystem root,
    home, the whole working directory, a top-level system directory, or a bare variable
    followed by "/" (root when the variable is empty). None for ordinary paths."""
    if re.search(r"\$\{\w+:?\?", word):  # ${VAR:?} aborts when empty
        return None
    t = _unquote(word).strip()
    if not t:
        return None
    squeezed = re.sub(r"/+", "/", t)
    base = squeezed.removesuffix("/*")
    base = base.rstrip("/") if base not in ("/", "") else "/"
    if base in ("", "/"):
        return "deletes the filesystem root"
    if base in _HOME:
        return "deletes the home directory"
    if base in (".", "..", "*", ".*"):
        return "deletes the whole working directory"
    if _VAR_ONLY.match(t):
        return "deletes from / when the variable is empty (write ${VAR:?})" if t.rstrip("*").endswith("/") else None
    top = re.fullmatch(r"/([^/$*]+)", base)
    if top and top.group(1) not in _SAFE_TOP:
        return "deletes a top-level system directory"
    return None


def dangerous_rm_target(word: str) -> bool:
    return rm_target_risk(word) is not None


def _describe_git(args: list[str]) -> tuple[str, str] | None:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-C", "-c") else 1
    if i >= len(args):
        return None
    sub, rest = args[i], args[i + 1:]
    shorts = "".join(a[1:] for a in rest if a.startswith("-") and not a.startswith("--"))
    if sub == "push":
        if "--force" in rest or "f" in shorts:
            return "git push --force", _force_push_why(rest)
        refspec = next((a for a in rest if a.startswith("+") and len(a) > 1), None)
        if refspec:
            return f"git push {refspec}", _force_push_why(rest, "force-pushes")
    elif sub == "reset" and "--hard" in rest:
        return "git reset --hard", "discards uncommitted work"
    elif sub == "clean" and ("--force" in rest or "f" in shorts) and "n" not in shorts and "--dry-run" not in rest:
        return f"git clean {' '.join(a for a in rest if a.startswith('-'))}", "deletes untracked files"
    return None


# Branches whose history others build on: a force-push there destroys work that exists nowhere else.
_SHARED_BRANCH = re.compile(r"(?:main|master|trunk|develop|development|stable|production|prod|gh-pages|"
                            r"release[\w./-]*|v?\d+(?:\.\d+)*(?:\.x)?)$")
OTHER_BRANCH = "rewrites the history of branch"


def _force_push_why(rest: list[str], verb: str = "rewrites remote history") -> str:
    """Why a force-push is destructive. Onto a shared branch (main, master, release...), or without a refspec
    (the current branch, which in CI may be the default one), it rewrites history others have; onto another
    named branch (a bot's update branch, `"$branch"`) it replaces only that branch, and says so."""
    refspecs = [a for a in rest if not a.startswith("-")][1:]
    targets = [(r.lstrip("+").split(":", 1)[-1] or r).removeprefix("refs/heads/") for r in refspecs]
    shared = next((t for t in targets if _SHARED_BRANCH.match(t)), None)
    if shared:
        return f"rewrites the history of {shared} (use --force-with-lease)"
    if targets and "HEAD" not in targets:
        return f"{OTHER_BRANCH} {', '.join(targets)} (use --force-with-lease)"
    return f"{verb} (use --force-with-lease)"
