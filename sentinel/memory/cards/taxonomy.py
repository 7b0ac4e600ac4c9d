"""The mechanism taxonomy: a controlled vocabulary of *how* bugs happen, shared by cards and queries.

Card signals used to name domain nouns ("header mapping"); two fixes of the same mistake in different domains
then never met. A mechanism tag names the mistake itself ("a mutable default shared across calls"), so a query
whose text, exception or traceback points at a mechanism finds fixes of that mechanism anywhere.

Each mechanism has a stable tag, a label and a one-line description (both our own words, used by the offline
standardiser), 2-4 word signals, and cues: regular expressions over problem text (a query, a commit message, a
news fragment), over the added/removed lines of a fix, and exception names that imply it. `infer` scores the cues
and returns the tags that clear a threshold, strongest first. Pure Python, no numpy: cheap to import.
"""

from __future__ import annotations

import re
from sentinel.record import Record


class Mechanism(Record, frozen=True):
    tag: str
    label: str
    description: str
    signals: tuple[str, ...]
    text: tuple[str, ...] = ()  # regexes over problem text (case-insensitive)
    code: tuple[str, ...] = ()  # regexes over added/removed code lines
    exceptions: tuple[str, ...] = ()  # exception names (lower case) that point at it


MECHANISMS: tuple[Mechanism, ...] = (
    Mechanism("none-missing-value", "None or missing value",
              "a value that can be None, absent or unset is used as if it were always present",
              ("None not handled", "missing key lookup", "unset optional value", "NoneType attribute access"),
              text=(r"\bnone\b", r"\bnull\b", r"nonetype", r"\bmissing (?:key|value|field|attribute|header)",
                    r"\bnot set\b", r"\bunset\b", r"\bis none\b", r"\bempty value", r"\bundefined\b",
                    r"\bkeyerror\b", r"has no attribute"),
              code=(r"\bis (?:not )?None\b", r"\.get\(", r"\bor \{\}", r"\bor \[\]", r"getattr\([^)]*,[^)]*,"),
              exceptions=("keyerror", "attributeerror")),
    Mechanism("off-by-one", "off-by-one or boundary error",
              "an index, range or length check is wrong by one at a boundary",
              ("off by one", "boundary condition", "index out of range", "last element skipped"),
              text=(r"off[- ]by[- ]one", r"\bboundary\b", r"out of range", r"\blast (?:element|item|line|byte|"
                    r"character|chunk)", r"\bfirst (?:element|item|line)", r"\bfencepost", r"\btruncat",
                    r"\bindexerror\b", r"\bone (?:too many|too few|extra)\b"),
              code=(r"[<>]=?\s*len\(", r"len\([^)]*\)\s*[-+]\s*1", r"\[\s*-?\d*\s*:\s*-?\d+\s*\]", r"range\("),
              exceptions=("indexerror",)),
    Mechanism("bytes-str-encoding", "bytes vs str or encoding",
              "text and bytes are mixed, or data is encoded or decoded with the wrong codec",
              ("bytes versus str", "encoding mismatch", "non-ascii input", "unicode decode failure"),
              text=(r"\bbytes\b", r"\bencod", r"\bdecod", r"\bunicode", r"\butf-?8\b", r"\blatin-?1\b",
                    r"\bnon-?ascii\b", r"\bcharset\b", r"\bcodec\b", r"\bascii\b", r"\bsurrogate"),
              code=(r"\.encode\(", r"\.decode\(", r"\bencoding\s*=", r"\berrors\s*=\s*['\"]", r"\bb['\"]",
                    r"\bisinstance\([^)]*\bbytes\b"),
              exceptions=("unicodedecodeerror", "unicodeencodeerror", "unicodeerror")),
    Mechanism("mutable-shared-state", "mutable default or shared state",
              "a mutable object (default argument, class attribute, module global) is shared and modified "
              "across calls or instances",
              ("mutable default argument", "state shared across calls", "in-place modification", "missing copy"),
              text=(r"mutable default", r"\bshared (?:between|across|by)\b", r"\bshared state", r"\bmutat",
                    r"\bin[- ]place\b", r"\bleaks? (?:between|into|across)\b", r"\bclass attribute",
                    r"\bglobal state", r"\bside effects?\b", r"\bcopy\b", r"\bmodified\b"),
              code=(r"\.copy\(\)", r"\bdeepcopy\(", r"\bcopy\.copy\(", r"def \w+\([^)]*=\s*(?:\[\]|\{\}|dict\(\)|"
                    r"list\(\)|set\(\))", r"\bdict\(\w+\)", r"\blist\(\w+\)")),
    Mechanism("async-cancellation", "async cancellation or task lifecycle",
              "an awaited operation is cancelled, times out or outlives its task, and cleanup or state is lost",
              ("task cancellation", "async cleanup", "event loop closed", "awaited coroutine"),
              text=(r"\bcancel", r"\basync\b", r"\basyncio\b", r"\bawait", r"\bcoroutine", r"\bevent loop",
                    r"\btask(?:s)?\b", r"\btrio\b", r"\bgreenlet"),
              code=(r"\bCancelledError\b", r"\basyncio\.", r"\bawait\b", r"\.cancel\(\)", r"\bshield\(",
                    r"\basync def\b", r"\bcreate_task\("),
              exceptions=("cancellederror", "timeouterror")),
    Mechanism("resource-leak", "resource leak or missing cleanup",
              "a file, socket, connection or subprocess is not closed or released on every path",
              ("resource not released", "unclosed file handle", "connection leak", "missing cleanup"),
              text=(r"\bleak", r"\bunclosed\b", r"\bnot (?:closed|released|freed)\b", r"\bresourcewarning\b",
                    r"\bfile descriptors?\b", r"\bclean ?up\b", r"\bdangling\b", r"\btoo many open files"),
              code=(r"\.close\(\)", r"\bfinally:", r"\bwith\s+\w", r"\.release\(\)", r"\b__exit__\b",
                    r"\bcontextmanager\b"),
              exceptions=("resourcewarning",)),
    Mechanism("race-concurrency", "race condition or concurrency",
              "two threads, processes or tasks interleave on shared state without the ordering the code assumes",
              ("race condition", "thread safety", "concurrent access", "lock ordering"),
              text=(r"\brace\b", r"\brace condition", r"\bthread", r"\bconcurren", r"\bdeadlock", r"\block\b",
                    r"\bparallel\b", r"\bmultiprocess", r"\bintermittent", r"\bflaky\b"),
              code=(r"\bLock\(", r"\bRLock\(", r"\bwith self\._lock\b", r"\bthreading\.", r"\bSemaphore\("),
              exceptions=()),
    Mechanism("time-zone", "time zone or datetime handling",
              "naive and aware datetimes are mixed, or a conversion ignores the time zone or DST",
              ("timezone aware datetime", "naive datetime", "utc conversion", "timestamp offset"),
              text=(r"\btime ?zones?\b", r"\btz\b", r"\butc\b", r"\bnaive\b", r"\baware\b", r"\bdst\b",
                    r"\bdatetime", r"\btimestamp", r"\bdate (?:parsing|format)", r"\bexpir"),
              code=(r"\btzinfo\b", r"\btimezone\.", r"\butcnow\(", r"\bdatetime\.", r"\bfromtimestamp\(")),
    Mechanism("path-handling", "file path handling",
              "a file system path is joined, normalised, quoted or compared wrongly (relative, symlink, Windows "
              "separators, case)",
              ("file path handling", "relative path resolution", "windows path separator", "symlink resolution"),
              text=(r"\bpaths?\b", r"\bdirector(?:y|ies)\b", r"\bsymlink", r"\bwindows\b", r"\bbackslash",
                    r"\brelative\b", r"\babsolute\b", r"\bseparator", r"\bfilename", r"\bcwd\b", r"\bfolder"),
              code=(r"\bos\.path\.", r"\bPath\(", r"\bos\.sep\b", r"\bnormpath\(", r"\bresolve\(\)",
                    r"\brelpath\(", r"\babspath\(", r"\bfspath\("),
              exceptions=("filenotfounderror", "isadirectoryerror", "notadirectoryerror", "permissionerror")),
    Mechanism("exception-handling", "exception handling",
              "an error is swallowed, raised as the wrong type, or escapes as a raw traceback instead of a clear "
              "message",
              ("uncaught exception", "wrong exception type", "swallowed error", "error message lost"),
              text=(r"\btraceback\b", r"\buncaught\b", r"\bunhandled\b", r"\bswallow", r"\bcrash", r"\braises?\b",
                    r"\bexception\b", r"\berror message", r"\binternal error", r"\bsilently"),
              code=(r"^\s*except\b", r"^\s*raise\b", r"^\s*try:", r"\bfrom exc\b", r"\bfrom e\b")),
    Mechanism("type-handling", "type handling or coercion",
              "a value of an unexpected type (subclass, int vs float, str vs list, custom object) is passed on "
              "or coerced wrongly",
              ("unexpected argument type", "type coercion", "isinstance check", "subclass not accepted"),
              text=(r"\btypeerror\b", r"\bwrong type\b", r"\btype (?:check|coercion|annotation|hint)",
                    r"\bsubclass", r"\bisinstance\b", r"\binteger\b", r"\bfloat\b", r"\bcoerc", r"\bcast\b",
                    r"\btuple\b", r"\bgeneric"),
              code=(r"\bisinstance\(", r"\btype\(\w+\)\s*(?:is|==)", r"\bint\(", r"\bfloat\(", r"\bstr\("),
              exceptions=("typeerror",)),
    Mechanism("parsing-escaping", "parsing, quoting or escaping",
              "input with special characters, quotes, whitespace or unusual syntax is parsed, quoted or escaped "
              "wrongly",
              ("special characters input", "quoting and escaping", "parser edge case", "whitespace handling"),
              text=(r"\bquot", r"\bescap", r"\bpars(?:e|er|ing)\b", r"\bspecial characters?", r"\bwhitespace",
                    r"\bregex", r"\bregular expression", r"\bsyntax\b", r"\bdelimit", r"\bsemicolon", r"\bcomma\b",
                    r"\bsplit", r"\bnewline", r"\bheader value", r"\bmalformed\b"),
              code=(r"\bre\.(?:compile|match|search|sub|split|fullmatch)\(", r"\bquote\(", r"\bescape\(",
                    r"\.split\(", r"\.strip\(", r"\bshlex\."),
              exceptions=("valueerror", "syntaxerror", "jsondecodeerror")),
    Mechanism("stale-cache", "stale cache or memoised state",
              "a cached or memoised result is reused after the data it depends on changed",
              ("stale cached value", "cache invalidation", "memoized result reused", "outdated state"),
              text=(r"\bcach", r"\bstale\b", r"\bmemoi", r"\binvalidat", r"\boutdated\b", r"\breused?\b"),
              code=(r"\blru_cache\b", r"\bcache\b", r"\b_cache\b", r"\bcached_property\b", r"\binvalidate")),
    Mechanism("ordering-determinism", "ordering or nondeterminism",
              "results depend on iteration, hash or scheduling order that the code assumed to be fixed",
              ("iteration order dependence", "nondeterministic output", "sort order", "duplicate entries"),
              text=(r"\border(?:ing)?\b", r"\bsort", r"\bnon-?determinis", r"\brandom\b", r"\breproducib",
                    r"\bduplicat", r"\bdeterminis"),
              code=(r"\bsorted\(", r"\.sort\(", r"\bOrderedDict\b", r"\bdict\.fromkeys\(")),
    Mechanism("hang-recursion", "hang, infinite loop or recursion",
              "a loop, retry or recursive call never terminates for some input",
              ("infinite loop", "process hangs", "unbounded recursion", "never terminates"),
              text=(r"\bhang", r"\binfinite\b", r"\brecursion", r"\brecursive", r"\bnever (?:returns|ends|"
                    r"terminates|finishes)", r"\bstuck\b", r"\bfreez", r"\bblocks? forever"),
              code=(r"\bwhile True\b", r"\bmax_depth\b", r"\brecursion"),
              exceptions=("recursionerror",)),
    Mechanism("compat-version", "version or platform compatibility",
              "behaviour differs across Python versions, platforms or dependency versions and one of them was "
              "not handled",
              ("python version difference", "platform specific behaviour", "dependency version change",
               "deprecated api use"),
              text=(r"\bpython ?3\.\d+", r"\bpy3\d\b", r"\bcompat", r"\bdeprecat", r"\bplatform", r"\bmacos\b",
                    r"\bpypy\b", r"\bversion\b", r"\bimporterror\b", r"\bno longer\b", r"\bupgrad"),
              code=(r"\bsys\.version_info\b", r"\bsys\.platform\b", r"\bos\.name\b", r"^\s*except ImportError",
                    r"\bwarnings\.warn\("),
              exceptions=("importerror", "modulenotfounderror", "deprecationwarning")),
    Mechanism("config-option-ignored", "option or configuration ignored",
              "a setting, flag, environment variable or keyword argument is accepted but not honoured on some path",
              ("option not honoured", "setting ignored", "environment variable", "keyword argument ignored"),
              text=(r"\boption\b", r"\bsetting", r"\bconfig", r"\bflag\b", r"\benvironment variable", r"\bignor",
                    r"\bnot (?:respected|honou?red|passed|propagated|forwarded)", r"\bparameter", r"\bargument",
                    r"\bkeyword"),
              code=(r"\bos\.environ\b", r"\bgetenv\(", r"\bkwargs\b", r"\bconfig\.", r"\boptions?\.")),
    Mechanism("numeric-precision", "numeric precision or overflow",
              "a numeric conversion loses precision, overflows or rounds differently than expected",
              ("floating point precision", "integer overflow", "rounding error", "decimal conversion"),
              text=(r"\bprecision", r"\boverflow", r"\bround", r"\bdecimal\b", r"\bnumeric\b", r"\bscale\b",
                    r"\bnan\b", r"\binfinity\b"),
              code=(r"\bDecimal\(", r"\bround\(", r"\bmath\.", r"\bfloat\("),
              exceptions=("overflowerror", "zerodivisionerror")),
    Mechanism("lifecycle-reuse", "object lifecycle or reuse",
              "an object is used after close, reused, re-entered or released twice",
              ("use after close", "double release", "object reuse", "reentrant call"),
              text=(r"\bafter (?:close|closing|shutdown|dispose|exit)", r"\btwice\b", r"\bdouble\b", r"\breus",
                    r"\bre-?entr", r"\balready (?:closed|released|started|running)", r"\bclosed\b",
                    r"\bshutdown\b", r"\bdispos", r"\breconnect"),
              code=(r"\bself\._closed\b", r"\bif self\.closed\b", r"\bclosed\b"),
              exceptions=("runtimeerror",)),
    Mechanism("signature-arguments", "function signature or arguments",
              "a call passes arguments the callee does not accept, or a wrapper drops or renames them",
              ("unexpected keyword argument", "positional argument order", "wrapper signature", "missing argument"),
              text=(r"unexpected keyword", r"\bpositional", r"\bsignature\b", r"\bmissing \d* ?required",
                    r"\btakes \d+ positional", r"\bwrapper\b", r"\bdecorator"),
              code=(r"\*\*kwargs\b", r"\*args\b", r"\bfunctools\.wraps\b", r"\binspect\.signature\(")),
    Mechanism("inheritance-override", "inheritance or method override",
              "a subclass, mixin or override breaks an assumption of the base class (method resolution, super "
              "call, attribute lookup)",
              ("subclass override", "missing super call", "method resolution order", "mixin interaction"),
              text=(r"\bsubclass", r"\boverrid", r"\binherit", r"\bsuper\(\)", r"\bmixin", r"\bmro\b",
                    r"\bbase class", r"\bmetaclass"),
              code=(r"\bsuper\(\)\.", r"\b__init_subclass__\b", r"\b__mro__\b", r"\bmetaclass\b")),
    Mechanism("performance", "performance or memory use",
              "an operation does quadratic, repeated or unbounded work, or holds more memory than needed",
              ("quadratic time", "slow operation", "memory growth", "repeated computation"),
              text=(r"\bslow", r"\bperformance", r"\bquadratic", r"\bmemory (?:usage|use|growth|consumption)",
                    r"\bexponential", r"\bspeed", r"\befficien", r"\blarge (?:files?|inputs?|numbers?)"),
              code=(r"\blru_cache\b", r"\bset\(", r"\bbisect\.")),
    Mechanism("http-status-retry", "HTTP status, retry or network failure",
              "a network call's status code, timeout, redirect or retry is handled wrongly",
              ("http status code", "retry after failure", "rate limited request", "network timeout"),
              text=(r"\bhttp\b", r"\bstatus(?: code)?\b", r"\b(?:429|5\d\d|4\d\d)\b", r"\bretr(?:y|ies)",
                    r"\brate limit", r"\btimeout", r"\btimed out", r"\bredirect", r"\bconnection (?:reset|refused|"
                    r"error|closed)", r"\bproxy\b", r"\bssl\b", r"\btls\b"),
              code=(r"\bstatus_code\b", r"\bstatus\s*[=!<>]=", r"\bretry", r"\btimeout\s*=", r"\bredirect"),
              exceptions=("connectionerror", "timeouterror", "httperror", "sslerror", "clientresponseerror",
                          "connectionreseterror", "readtimeout", "connecttimeout")),
    Mechanism("empty-input", "empty input edge case",
              "an empty string, list, file or stream is not handled like a non-empty one",
              ("empty input handling", "zero length value", "empty collection", "blank string"),
              text=(r"\bempty\b", r"\bzero[- ]length", r"\bblank\b", r"\bno (?:items|arguments|files|rows|"
                    r"elements)\b"),
              code=(r"\bif not \w+:", r"\blen\(\w+\)\s*==\s*0", r"==\s*['\"]{2}")),
    Mechanism("equality-hashing", "equality, hashing or comparison",
              "objects compare or hash inconsistently, so lookups, sets or comparisons give wrong answers",
              ("equality comparison", "hash consistency", "comparison operator", "identity versus equality"),
              text=(r"\b__eq__\b", r"\b__hash__\b", r"\bhashable\b", r"\bunhashable\b", r"\bequality\b",
                    r"\bcompar", r"\bidentity\b"),
              code=(r"\bdef __eq__\b", r"\bdef __hash__\b", r"\bdef __lt__\b", r"\bis not\b", r"\bfunctools\."
                    r"total_ordering\b")),
    Mechanism("warning-noise", "spurious or missing warning",
              "a warning is emitted when it should not be, or not emitted when it should",
              ("spurious warning", "warning not emitted", "deprecation warning", "warning filter"),
              text=(r"\bwarning", r"\bwarns?\b", r"\bspurious"),
              code=(r"\bwarnings\.", r"\bwarn\("),
              exceptions=("userwarning", "deprecationwarning", "runtimewarning", "pytestwarning",
                          "resourcewarning")),
)

BY_TAG = {m.tag: m for m in MECHANISMS}
TAGS = tuple(BY_TAG)
_THRESHOLD = 1.0
MAX_TEXT = 6_000
MAX_CODE = 12_000


def _compile(patterns: tuple[str, ...], flags: int) -> re.Pattern | None:
    return re.compile("|".join(f"(?:{p})" for p in patterns), flags) if patterns else None


# Compiled on first use, per mechanism: Python's regex compiler is pure Python and the 52 alternations cost
# ~7 ms, a twentieth of a failing hook run that asks about one finding's text (and no code).
_TEXT: dict[str, re.Pattern | None] = {}
_CODE: dict[str, re.Pattern | None] = {}
_EXC = {m.tag: frozenset(m.exceptions) for m in MECHANISMS}
_KEYS: dict[str, tuple[str, ...] | None] = {}  # per mechanism: a literal every text cue's match contains


def _text_rx(tag: str) -> re.Pattern | None:
    if tag not in _TEXT:
        _TEXT[tag] = _compile(BY_TAG[tag].text, re.IGNORECASE)
    return _TEXT[tag]


def _code_rx(tag: str) -> re.Pattern | None:
    if tag not in _CODE:
        _CODE[tag] = _compile(BY_TAG[tag].code, re.MULTILINE)
    return _CODE[tag]


_QUANTIFIERS = frozenset("?*{")
_STOP = frozenset("()[]|.^$+?*{}")


def required_literal(pattern: str) -> str:
    """The literal text that starts every match of `pattern` after an optional leading ``\\b`` (lower case),
    or "" when it does not start with one. Only plain characters and escaped punctuation count; a character
    a quantifier makes optional ends the literal without it (tests/test_taxonomy.py checks each cue against
    the regex parser)."""
    i = 2 if pattern.startswith("\\b") else 0
    out: list[str] = []
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1:i + 2]
            if not nxt or nxt.isalnum() or nxt == "_":
                break  # \d, \w, \b, ...: not a literal
            c, step = nxt, 2
        elif c in _STOP:
            break  # (before a '+', the character is required and already kept)
        else:
            step = 1
        if pattern[i + step:i + step + 1] in _QUANTIFIERS:
            break  # optional (or a repeat count): not required
        out.append(c)
        i += step
    literal = "".join(out)
    return literal.lower() if literal.isascii() and not _top_level_branch(pattern) else ""


def _top_level_branch(pattern: str) -> bool:
    """Does the pattern have a '|' outside every group (then its start is one branch's)?"""
    depth, i, in_class = 0, 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "]":
                i += 1  # a ']' first in a class is a member
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            return True
        i += 1
    return False


def _keys(tag: str) -> tuple[str, ...] | None:
    """The literals of a mechanism's text cues: a text containing none of them matches none of its cues.
    None: some cue has no literal (always run the regex)."""
    if tag not in _KEYS:
        lits = tuple(required_literal(p) for p in BY_TAG[tag].text)
        _KEYS[tag] = None if not all(lits) else tuple(dict.fromkeys(lits))
    return _KEYS[tag]


# The characters other than ASCII that re.IGNORECASE matches to an ASCII one (simple case folding plus
# re._casefix): a text is folded with them before its literals are looked for (tests/test_taxonomy.py
# checks the table against every code point).
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


def _folded(text: str) -> str:
    return text.lower() if text.isascii() else text.translate(_FOLD).lower()


def scores(text: str = "", code: str = "", exceptions: list[str] | tuple[str, ...] = ()) -> dict[str, float]:
    """Cue score per mechanism: distinct text cues count 1 each (at most 3), code cues 0.5 (at most 1.5),
    an implying exception 1.5. Only the mechanisms with any cue are returned."""
    # cues are judged on the head of long inputs: a 40 KB diff says nothing a 12 KB one does not, in far less time
    text, code = text[:MAX_TEXT], code[:MAX_CODE]
    excs = {e.lower().rsplit(".", 1)[-1] for e in exceptions}
    low = _folded(text) if text else ""
    out: dict[str, float] = {}
    for tag in TAGS:
        s = 0.0
        if text:
            keys = _keys(tag)
            rx = _text_rx(tag) if keys is None or any(k in low for k in keys) else None
            if rx is not None:
                s += min(3, len({m.group(0).lower() for m in rx.finditer(text)}))
        if code:
            rx = _code_rx(tag)
            if rx is not None:
                s += 0.5 * min(3, len({m.group(0) for m in rx.finditer(code)}))
        if excs & _EXC[tag]:
            s += 1.5
        if s:
            out[tag] = s
    return out


def infer(text: str = "", code: str = "", exceptions: list[str] | tuple[str, ...] = (), limit: int = 3,
          threshold: float = _THRESHOLD) -> list[str]:
    """The mechanisms the cues point at, strongest first (ties in taxonomy order), at most `limit`."""
    s = scores(text, code, exceptions)
    ranked = sorted((tag for tag, v in s.items() if v >= threshold), key=lambda t: (-s[t], TAGS.index(t)))
    return ranked[:limit]


def label(tag: str) -> str:
    m = BY_TAG.get(tag)
    return m.label if m else tag


# What a fix's code did, as sentinel.memory.learn.astchange names it (learned cards' patch_digest.changes):
# kind -> (how a signal names it, 2-3 words; priority: the lower, the more a kind says about the fix).
CHANGE_KINDS: dict[str, tuple[str, int]] = {
    "exception-narrowed": ("exception handler narrowed", 0),
    "exception-widened": ("exception handler widened", 0),
    "exception-changed": ("caught exception changed", 1),
    "handler-added": ("exception handler added", 1),
    "handler-moved": ("exception handler moved", 1),
    "none-guard": ("None check added", 1),
    "lookup-default": ("lookup with default", 1),
    "type-guard": ("type check added", 2),
    "membership-guard": ("membership check added", 2),
    "length-guard": ("length check added", 2),
    "falsy-guard": ("empty value check", 2),
    "version-guard": ("version check added", 2),
    "default-fallback": ("fallback default value", 2),
    "bound-changed": ("boundary condition changed", 2),
    "early-return": ("early return added", 3),
    "lock-added": ("lock acquired", 3),
    "cleanup-added": ("cleanup added", 3),
    "raise-added": ("error raised", 3),
    "raise-changed": ("raised error changed", 3),
    "condition-changed": ("condition changed", 4),
    "guard": ("new branch added", 4),
    "call-replaced": ("call replaced", 4),
    "argument-changed": ("call arguments changed", 4),
    "default-changed": ("parameter default changed", 4),
    "signature-changed": ("signature changed", 5),
    "context-added": ("context manager added", 5),
    "await-added": ("await added", 5),
    "await-removed": ("await removed", 5),
    "return-added": ("missing return added", 3),
    "return-changed": ("return value changed", 5),
    "import-changed": ("import changed", 6),
    "assignment-changed": ("assigned value changed", 5),
    "target-changed": ("assigned name changed", 5),
    "assignment-added": ("value assigned", 6),
    "value-changed": ("constant changed", 6),
    "decorator-changed": ("decorator changed", 6),
    "bases-changed": ("class bases changed", 4),
    "handler-removed": ("exception handler removed", 6),
    "condition-removed": ("condition removed", 6),
    "raise-removed": ("raise removed", 6),
    "loop-changed": ("loop changed", 6),
    "call-added": ("call added", 7),
    "call-removed": ("call removed", 7),
    "function-added": ("helper function added", 8),
    "function-removed": ("function removed", 8),
    "logic-changed": ("logic changed", 9),
}


# ---------------------------------------------------------------------------------------------------------------
# Mechanisms from what a fix's code did (sentinel.memory.learn.astchange): regexes over the facts of its changes —
# the change kinds ("none-guard", "bound") and what they involve ("call:sorted", "kw:encoding", "except:KeyError",
# "with:open", "in:__eq__" for the function changed). This, not the wording around a fix, is what names the
# mistake a learned card records; the text cues above only break ties and speak when the code says nothing.
CHANGE_CUES: dict[str, tuple[str, ...]] = {
    "none-missing-value": (r"none-guard", r"lookup-default", r"default-fallback"),
    "off-by-one": (r"bound",),
    "bytes-str-encoding": (r"call:\S*(?:encode|decode|fsencode|fsdecode|to_bytes|to_unicode|to_native)",
                           r"kw:(?:encoding|errors)"),
    "mutable-shared-state": (r"call:\S*(?:\.copy|deepcopy|copy\.copy)", r"mutable-default"),
    "async-cancellation": (r"await", r"call:\S*(?:cancel|shield|checkpoint\w*|CancelScope|move_on_\w+|fail_after|"
                           r"wait_for|create_task|TaskGroup)", r"except:\S*Cancel\w*", r"with:\S*(?:CancelScope|"
                           r"move_on_\w+|fail_after|timeout)"),
    "resource-leak": (r"cleanup", r"finally", r"with:(?:open|\S*closing|\S*ExitStack|\S*TemporaryDirectory)"),
    "race-concurrency": (r"lock", r"call:\S*(?:Lock|RLock|Semaphore|Condition)"),
    "time-zone": (r"call:\S*(?:utcnow|fromtimestamp|utcfromtimestamp|astimezone|localtime|gmtime|mktime|"
                  r"timezone)", r"kw:tz(?:info)?"),
    "path-handling": (r"call:(?:os\.path\.\w+|\S*\bPath|\S*PurePath|\S*\.resolve|\S*fspath|\S*\.as_posix|"
                      r"\S*normcase)",),
    "exception-handling": (r"handler", r"exception-(?:narrowed|widened|changed)", r"raise-(?:added|changed)",
                           r"handler-(?:added|removed|moved)"),
    "type-handling": (r"type-guard",),
    "parsing-escaping": (r"call:(?:re\.\w+|\S*\.(?:split|rsplit|partition|rpartition|strip|lstrip|rstrip|"
                         r"splitlines)|\S*(?:quote|unquote|escape|unescape)\w*|shlex\.\w+)",),
    "stale-cache": (r"call:\S*(?:cache_clear|invalidate\w*|clear_cache)", r"decorator:\S*(?:lru_cache|cache\b|"
                    r"cached_property)"),
    "ordering-determinism": (r"call:(?:sorted|\S*\.sort|\S*OrderedDict)",),
    "compat-version": (r"version-guard", r"except:(?:ImportError|ModuleNotFoundError)"),
    "config-option-ignored": (r"passthrough:\w+",),
    "numeric-precision": (r"call:(?:round|\S*Decimal|math\.\w+|\S*quantize|divmod)",),
    "signature-arguments": (r"param:\*{1,2}\w+", r"call:\S*(?:wraps|signature)\b"),
    "inheritance-override": (r"call:super", r"bases"),
    "http-status-retry": (r"kw:(?:timeout|retries|max_retries|follow_redirects|allow_redirects)",
                          r"call:\S*(?:raise_for_status|retry\w*)"),
    "empty-input": (r"falsy-guard", r"length-guard"),
    "equality-hashing": (r"in:__(?:eq|ne|hash|lt|le|gt|ge)__",),
    "warning-noise": (r"call:\S*\bwarn", r"except:\S*Warning"),
}
_CHANGE_RX: dict[str, re.Pattern] = {}


def change_scores(facts: list[str] | tuple[str, ...]) -> dict[str, float]:
    """Score per mechanism from the facts of a fix's changes, strongest change first: a fact counts by its
    position (the first change's facts 1.0, later ones less), each distinct fact once."""
    out: dict[str, float] = {}
    seen: set[tuple[str, str]] = set()
    for rank, fact in enumerate(facts):
        weight = 1.0 / (1 + rank / 4)
        for tag, cues in CHANGE_CUES.items():
            rx = _CHANGE_RX.get(tag)
            if rx is None:
                rx = _CHANGE_RX[tag] = re.compile("|".join(f"(?:{c})" for c in cues))
            if (tag, fact) not in seen and rx.fullmatch(fact):
                seen.add((tag, fact))
                out[tag] = out.get(tag, 0.0) + weight
    return out


def from_change(facts: list[str] | tuple[str, ...], text: str = "", exceptions: list[str] | tuple[str, ...] = (),
                limit: int = 2) -> list[str]:
    """The mechanisms of a fix: those its code changes point at (text cues of its description order them);
    when the code points at none, a mechanism its description names with several distinct cues."""
    code = change_scores(facts)
    words = scores(text, exceptions=exceptions) if text else {}
    ranked = sorted(code, key=lambda t: (-(code[t] + 0.25 * min(words.get(t, 0.0), 3)), TAGS.index(t)))
    out = [t for t in ranked if code[t] >= 0.4][:limit]
    if not out:
        strong = sorted((t for t, v in words.items() if v >= 2.5), key=lambda t: (-words[t], TAGS.index(t)))
        out = strong[:1]
    return out
