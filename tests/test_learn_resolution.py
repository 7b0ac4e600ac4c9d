"""Learned cards that say what happened: the resolution layer read from a fix's diff with the AST (which function
changed and how, the key lines before and after, the regression test and its assertion), the problem layer in
the project's own words, non-fixes dropped before standardisation, mechanisms from the code changes, and the
specificity check of QC. End to end over a real git history through the installed console script; the parts
on their own below it."""

from __future__ import annotations

import ast
import json
import random
from pathlib import Path

import pytest

from sentinel.memory.cards.model import check_card
from sentinel.memory.learn import astchange, codechange, nonfix, problem, regression, resolution
from sentinel.memory.learn.model import Candidate, FileDiff
from sentinel.memory.learn.qc import qc
from sentinel.memory.learn.standardise import standardise
from sentinel.config import load_config
from sentinel.memory.store.backends import open_learned_store
from tests.test_learn import commit, run_cli

CART = '''\
import os
from decimal import Decimal


class Cart:
    def __init__(self):
        self.items = {}
        self.closed = False

    def remove_item(self, sku):
        price, quantity = self.items[sku]
        del self.items[sku]
        return quantity

    def load(self, path):
        try:
            with open(path) as fh:
                return fh.read()
        except Exception:
            return ""

    def export_path(self, root, name):
        return os.path.join(root, name)

    def close(self):
        self.items.clear()
        self.closed = True

    def add(self, sku, price, quantity=1):
        self.items[sku] = (price, quantity)
'''
TESTS = ("from shop.cart import Cart\n\n\ndef test_add():\n    cart = Cart()\n    cart.add('a', 1)\n"
         "    assert cart.items\n")


def _edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new)


@pytest.fixture
def fixes(repo):
    """A project whose history holds four real fixes of four kinds, a feature, a pure addition and a typing-only
    change."""
    commit(repo, "Initial cart", {"src/shop/__init__.py": "", "src/shop/cart.py": CART,
                                  "tests/test_cart.py": TESTS, "README.md": "# shop\n"})
    shas = {}
    cart = _edit(CART, "        price, quantity = self.items[sku]\n        del self.items[sku]\n"
                       "        return quantity",
                 "        entry = self.items.get(sku)\n        if entry is None:\n"
                 "            raise LookupError(f\"no item {sku!r} in the cart\")\n        del self.items[sku]\n"
                 "        return entry[1]")
    tests = TESTS + ("\n\ndef test_remove_unknown_sku():\n    cart = Cart()\n"
                     "    with pytest.raises(LookupError):\n        cart.remove_item('nope')\n")
    shas["guard"] = commit(repo, "Fix KeyError in remove_item for an unknown sku (#12)", {
        "src/shop/cart.py": cart, "tests/test_cart.py": "import pytest\n" + tests,
        "news/12.bugfix.rst": "Removing an item that is not in the cart raises :exc:`LookupError` naming the sku "
                              "instead of a bare ``KeyError`` from :meth:`~shop.cart.Cart.remove_item`. "
                              ":issue:`12`\n"})
    cart = _edit(cart, "        except Exception:\n", "        except OSError:\n")
    shas["narrowed"] = commit(repo, "Fix load() hiding every error as an empty cart (#14)", {
        "src/shop/cart.py": cart,
        "news/14.bugfix.rst": "``Cart.load`` no longer turns a programming error into an empty cart: only an "
                              "``OSError`` (a file that cannot be read) does.\n"})
    cart = _edit(cart, "        return os.path.join(root, name)", "        return posixpath.join(root, name)")
    cart = _edit(cart, "import os\n", "import os\nimport posixpath\n")
    shas["replaced"] = commit(repo, "Fix export paths with backslashes on Windows", {"src/shop/cart.py": cart})
    cart = _edit(cart, "    def close(self):\n        self.items.clear()",
                 "    def close(self):\n        if self.closed:\n            return\n        self.items.clear()")
    shas["early"] = commit(repo, "Fix crash when close() is called twice on a closed cart", {"src/shop/cart.py": cart})
    # not fixes: a feature (its subject says so), a pure addition worded as a fix, a change of annotations only
    shas["feature"] = commit(repo, "Add gift card support, closes #20", {
        "src/shop/cart.py": _edit(cart, "    def add(self, sku, price, quantity=1):",
                                  "    def add(self, sku, price, quantity=1, gift=False):"),
        "src/shop/gift.py": "def make_card(value):\n    return {'value': value}\n"})
    shas["addition"] = commit(repo, "Fix #21: gift card balances", {
        "src/shop/balance.py": "def balance(card):\n    return card['value']\n\n\ndef refill(card, amount):\n"
                               "    card['value'] += amount\n    return card\n"})
    cart = (repo.path / "src/shop/cart.py").read_text()
    shas["typing"] = commit(repo, "Fix wrong declared return value of Cart.add", {
        "src/shop/cart.py": _edit(cart, "    def add(self, sku, price, quantity=1, gift=False):",
                                  "    def add(self, sku: str, price: Decimal, quantity: int = 1, gift: bool = False)"
                                  " -> None:")})
    return repo, shas


def _cards(repo) -> dict[str, dict]:
    store = open_learned_store(load_config(str(repo.path)).memory, str(repo.path / ".git"))  # as learn wrote it
    try:
        return {c["provenance"]["commit"]: c for c in store.cards()}
    finally:
        store.close()


def test_learned_cards_say_what_the_code_did_and_drop_non_fixes(fixes):
    repo, shas = fixes
    proc = run_cli(repo, "memory", "learn", "--json", "--repo-name", "acme/shop")
    assert proc.returncode == 0, proc.stderr
    counts = json.loads(proc.stdout)["runs"][0]["counts"]
    dropped = counts["dropped"]
    assert dropped["feature: the subject adds or supports something new"] == 1
    assert dropped["pure addition: new code only, no change to code that existed"] == 1
    assert dropped["no behavioural change (docstrings, comments, annotations or formatting only)"] == 1
    cards = _cards(repo)
    assert set(cards) == {shas["guard"], shas["narrowed"], shas["replaced"], shas["early"]}
    for card in cards.values():
        assert check_card(card) == [], card["id"]

    guard = cards[shas["guard"]]
    assert guard["tags"]["files"] == ["src/shop/cart.py"]
    assert guard["tags"]["symbols"] == ["src/shop/cart.py::Cart.remove_item"]
    first = guard["patch_digest"]["changes"][0]
    assert first == {"symbol": "src/shop/cart.py::Cart.remove_item", "kind": "none-guard",
                     "detail": "adds `if entry is None:` raising `LookupError`"}
    assert "lookup-default" in [c["kind"] for c in guard["patch_digest"]["changes"]]
    assert guard["tags"]["mechanisms"][0] == "none-missing-value"
    excerpt = guard["patch_digest"]["excerpt"]
    assert excerpt["symbol"] == "Cart.remove_item" and excerpt["file"] == "src/shop/cart.py"
    assert excerpt["before"].splitlines()[0] == "price, quantity = self.items[sku]"
    assert "if entry is None:" in excerpt["after"] and "entry = self.items.get(sku)" in excerpt["after"]
    assert guard["verification"]["regression_test"] == {
        "name": "test_remove_unknown_sku", "file": "tests/test_cart.py",
        "assertion": "with pytest.raises(LookupError): cart.remove_item('nope')"}
    # the problem in the project's own words (its news fragment), without the markup and the reference
    assert guard["problem_summary"].startswith("Removing an item that is not in the cart raises `LookupError`")
    assert "`remove_item`" in guard["problem_summary"] and ":issue:" not in guard["problem_summary"]
    assert "Before the fix, `Cart.remove_item` did not check `entry is None`" in guard["root_cause"]
    assert guard["fix_strategy"].startswith("In `Cart.remove_item` (src/shop/cart.py), the fix adds "
                                            "`if entry is None:` raising `LookupError`")
    assert "asserts `with pytest.raises(LookupError): cart.remove_item('nope')`" in guard["fix_strategy"]

    narrowed = cards[shas["narrowed"]]
    change = narrowed["patch_digest"]["changes"][0]
    assert (change["kind"], change["detail"]) == ("exception-narrowed", "`except Exception` -> `except OSError`")
    assert narrowed["tags"]["symbols"] == ["src/shop/cart.py::Cart.load"]
    assert narrowed["tags"]["mechanisms"][0] == "exception-handling"
    assert narrowed["patch_digest"]["excerpt"] == {"file": "src/shop/cart.py", "symbol": "Cart.load",
                                                   "before": "except Exception:", "after": "except OSError:"}

    replaced = cards[shas["replaced"]]
    kinds = {c["kind"]: c["detail"] for c in replaced["patch_digest"]["changes"]}
    assert kinds["call-replaced"] == "`os.path.join()` -> `posixpath.join()`"
    assert "path-handling" in replaced["tags"]["mechanisms"]
    assert replaced["tags"]["symbols"] == ["src/shop/cart.py::Cart.export_path"]  # the import is module level
    # a short subject is the project's words with what the code did
    assert replaced["problem_summary"] == ("Fix export paths with backslashes on Windows: in `Cart.export_path`, the "
                                           "fix calls `posixpath.join()` instead of `os.path.join()`.")

    early = cards[shas["early"]]
    assert early["patch_digest"]["changes"][0]["kind"] == "early-return"
    assert early["patch_digest"]["changes"][0]["detail"] == "`return` when `self.closed`"
    assert early["tags"]["symbols"] == ["src/shop/cart.py::Cart.close"]

    # browse shows the excerpt and the pinning assertion
    shown = run_cli(repo, "memory", "show", guard["id"])
    assert shown.returncode == 0, shown.stderr
    assert "before:\n      price, quantity = self.items[sku]" in shown.stdout
    assert "pins: with pytest.raises(LookupError): cart.remove_item('nope')" in shown.stdout
    assert "symbols: src/shop/cart.py::Cart.remove_item" in shown.stdout


# ---------------------------------------------------------------------------------------------------------------
# the parts

def _compare(before: str, after: str) -> list[astchange.Change]:
    """The changes of the one function both versions define."""
    old, new = ast.parse(before).body[0], ast.parse(after).body[0]
    return astchange.compare(astchange.own_nodes(old), astchange.own_nodes(new), old, new)


@pytest.mark.parametrize("before, after, kind, detail", [
    ("def f(xs, n):\n    if n < len(xs):\n        return xs[n]\n",
     "def f(xs, n):\n    if n <= len(xs):\n        return xs[n]\n", "bound-changed", "`n < len(xs)` -> `n <= len(xs)`"),
    ("def f(d, k):\n    return d[k]\n", "def f(d, k):\n    return d.get(k)\n", "lookup-default",
     "`d[k]` -> `d.get(k)`"),
    ("def f(self):\n    self.n += 1\n", "def f(self):\n    with self._lock:\n        self.n += 1\n", "lock-added",
     "wraps code in `with self._lock:`"),
    ("def f(url, timeout=None):\n    return get(url)\n",
     "def f(url, timeout=None):\n    return get(url, timeout=timeout)\n",
     "argument-changed", "`get()`: adds `timeout=timeout`"),
    ("def f(xs):\n    try:\n        for x in xs:\n            use(x)\n    except OSError:\n        pass\n",
     "def f(xs):\n    for x in xs:\n        try:\n            use(x)\n        except OSError:\n            pass\n",
     "handler-moved", "moves `except OSError` inside `for x in xs`"),
    ("def f(fh):\n    fh.read()\n", "def f(fh):\n    return fh.read()\n", "return-added", "returns `fh.read()`"),
    ("def f(x):\n    try:\n        g(x)\n    except:\n        pass\n",
     "def f(x):\n    try:\n        g(x)\n    except ValueError:\n        pass\n", "exception-narrowed",
     "`except` -> `except ValueError`"),
    ("def f(x):\n    try:\n        g(x)\n    except KeyError:\n        pass\n",
     "def f(x):\n    try:\n        g(x)\n    except (KeyError, IndexError):\n        pass\n", "exception-widened",
     "`except KeyError` -> `except (KeyError, IndexError)`"),
    ("def f(items=[]):\n    return items\n", "def f(items=None):\n    return items\n", "default-changed",
     "`items=[]` -> `items=None`"),
    ("def f(a, b):\n    if a:\n        g()\n    if b:\n        h()\n",
     "def f(a, b):\n    if a:\n        g()\n    elif b:\n        h()\n", "condition-changed", "`if b` -> `elif b`"),
    ("def f(self):\n    self.run()\n", "def f(self):\n    self.saved = self.state\n    self.run()\n",
     "assignment-added", "sets `self.saved = self.state`"),
])
def test_change_kinds(before, after, kind, detail):
    changes = _compare(before, after)
    assert (changes[0].kind, changes[0].detail) == (kind, detail), [(c.kind, c.detail) for c in changes]


def test_annotations_docstrings_and_casts_change_no_behaviour():
    before = "def f(x):\n    return g(x)\n"
    after = 'def f(x: int) -> str:\n    """Doc."""\n    return cast(str, g(x))\n'
    diff = ("@@ -1,2 +1,3 @@\n-def f(x):\n+def f(x: int) -> str:\n+    \"\"\"Doc.\"\"\"\n-    return g(x)\n"
            "+    return cast(str, g(x))\n")
    fc = codechange.analyse("m.py", diff, before, after, fetched=True)
    assert fc.parsed and fc.symbols == []
    assert codechange.analyse("m.py", diff, before, after.replace("g(x)", "h(x)"), fetched=True).symbols


def test_a_name_defined_twice_is_compared_with_its_own_earlier_version():
    # one function per Python version, and a runtime class behind `if TYPE_CHECKING: ... else:`
    before = ("if PY2:\n    def open_stream(name):\n        return open(name)\nelse:\n    def open_stream(name):\n"
              "        return open(name, encoding='utf-8')\n\nif TYPE_CHECKING:\n    X = int\nelse:\n    X = 1\n")
    after = before.replace("encoding='utf-8')", "encoding='utf-8', errors='replace')").replace("X = 1", "X = 2")
    import difflib

    diff = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), n=3))
    fc = codechange.analyse("m.py", diff, before, after, fetched=True)
    assert [(s.qualname, s.changes[0].kind) for s in fc.symbols] == [("open_stream", "argument-changed"),
                                                                     ("", "value-changed")]


def test_the_diff_alone_is_read_when_the_file_is_not_known():
    # a fix record or a pull-request patch: no versions of the file, the hunk's header names the class
    diff = ("@@ -10,3 +10,5 @@ class Cart:\n     def remove_item(self, sku):\n-        price, quantity = "
            "self.items[sku]\n+        entry = self.items.get(sku)\n+        if entry is None:\n"
            "+            raise LookupError(sku)\n")
    fc = codechange.analyse("src/shop/cart.py", diff, None, None)
    assert not fc.parsed
    (sym,) = fc.symbols
    assert sym.qualname == "Cart.remove_item"
    assert [c.kind for c in sym.changes][:2] == ["none-guard", "lookup-default"]


def test_regions_give_the_definitions_the_whole_file_gives():
    # the parse of the parts of a file around some lines places those lines in the same functions
    rng = random.Random(5)
    root = Path(__file__).resolve().parent.parent / "sentinel"
    files = sorted(p for p in root.rglob("*.py") if p.stat().st_size > 4000)
    for path in rng.sample(files, 12):
        source = path.read_text(encoding="utf-8")
        full = codechange.defs_of(ast.parse(source))
        code = [i for i, line in enumerate(source.split("\n"), 1) if line.strip() and not line.strip().startswith("#")]
        lines = {rng.choice(code) for _ in range(4)}  # changed code lines (a blank line places nowhere)
        part = codechange.regions(source, lines)
        assert part is not None and part.count("\n") == source.count("\n")
        defs = codechange.defs_of(ast.parse(part))
        for line in lines:
            a, b = codechange.innermost(full, line), codechange.innermost(defs, line)
            assert (a and a.qualname) == (b and b.qualname), (path, line)


def test_the_pinning_assertion_names_what_the_fix_changed():
    after = ("import pytest\n\n\nclass TestCart:\n    def test_remove(self):\n        cart = make()\n"
             "        assert cart.items == {}\n        assert cart.remove_item('x') is None\n\n\n"
             "def helper():\n    assert True\n")
    diff = "@@ -1,0 +1,12 @@\n" + "".join(f"+{line}\n" for line in after.splitlines())
    (t,) = regression.from_file("tests/test_cart.py", diff, after, True, {"remove_item"})
    assert (t.name, t.new, t.assertion) == ("TestCart.test_remove", True, "assert cart.remove_item('x') is None")
    lines_only = regression.from_file("tests/test_cart.py", diff, None, False, {"remove_item"})
    assert [(x.name, x.assertion) for x in lines_only] == [("test_remove", "assert cart.remove_item('x') is None")]


def test_the_problem_is_told_in_the_projects_words_cleaned():
    cand = Candidate(key="k", origin="git", repository="acme/shop", sha="ab" * 20, date="", subject="x",
                     fragment="Fixed :func:`shop.cart.total` rounding (see #12, :issue:`12`) -- by @someone. "
                              "See https://example.com/12 for details.")
    p = problem.describe(cand, frozenset({"shop"}))
    assert p.origin == "fragment"
    assert p.summary == "Fixed `cart.total` rounding."  # the role's text, no reference, no credit line
    body = Candidate(key="k", origin="git", repository="acme/shop", sha="ab" * 20, date="",
                     subject="Fix bug in coerce (#3)",
                     body="In Python 3:\n\n    str(b'foo')\n\nwill return the repr.\n\n* wip\n* more\n\n"
                          "Signed-off-by: A <a@example.com>")
    p = problem.describe(body)
    assert p.summary == "Fix bug in coerce. In Python 3: `str(b'foo')` will return the repr."
    long_name = "Handling of `get_pretty_function_description_of_things` in src/shop/cart.py is wrong."
    safe = problem.summary_safe(long_name, "acme/shop")
    assert safe == "Handling of `get pretty function description of things` in cart is wrong."


def _cand(subject, files, fragment="", reasons=("wording",)):
    return Candidate(key="k", origin="git", repository="acme/shop", sha="ab" * 20, date="2025-01-01",
                     subject=subject, fragment=fragment, files=files, reasons=list(reasons))


def _fetched(path, before, after):
    import difflib

    diff = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), n=3))
    return FileDiff(path, "source", diff, 1, 1, before=before, after=after, fetched=True)


def test_non_fixes_by_their_words_and_their_code():
    src = _fetched("pkg/m.py", "def f(x):\n    return x\n", "def f(x):\n    if x is None:\n        return 0\n"
                                                             "    return x\n")
    new_only = _fetched("pkg/m.py", "def f(x):\n    return x\n", "def f(x):\n    return x\n\n\ndef g(y):\n"
                                                                  "    return y\n")
    method = _fetched("pkg/m.py", "class A:\n    def f(self):\n        return 1\n",
                      "class A:\n    def f(self):\n        return 1\n\n    def __eq__(self, other):\n"
                      "        return True\n")

    def why(subject, f, **kw):
        c = _cand(subject, [f], **kw)
        return nonfix.reason(c, resolution.of(c))

    scaled = _fetched("pkg/m.py", "def f(x):\n    return x\n", "def f(x, scale=1):\n    return x * scale\n")
    assert why("Fix crash in f when x is None", src) == ""
    assert why("Add a scale to f", scaled) == "feature: the subject adds or supports something new"
    assert why("Add missing scale in f", scaled) == ""  # a bug word: a fix worded with "add"
    assert why("Add support for None in f", src) == ""  # what the code does is a repair: a None guard
    assert why("feat: None in f", src) == "not a fix: a 'feat' commit"
    assert why("Refactor f", src) == "refactor or maintenance: the subject says so"
    assert why("Fix #4: g", new_only) == "pure addition: new code only, no change to code that existed"
    assert why("Fix #4: g", new_only, fragment="g was missing", reasons=("fragment",)) == ""  # the project says
    assert why("Fix comparing A objects", method) == ""  # a method added to an existing class changes it
    assert why("Release 1.2", src) == "release, not a fix"


def test_qc_rejects_a_card_that_names_nothing_the_fix_changed():
    src = _fetched("pkg/m.py", "def parse_header(v):\n    return v.split('=')\n",
                   "def parse_header(v):\n    if '=' not in v:\n        return v, None\n    return v.split('=')\n")
    cand = _cand("Fix parse_header crash on a value without '='", [src])
    card = standardise(cand, 0.5)
    passed, problems, _ = qc(card, cand)
    assert passed is not None, problems
    assert passed["tags"]["symbols"] == ["pkg/m.py::parse_header"]
    vague = json.loads(json.dumps(card))
    vague["tags"]["identifiers"], vague["tags"]["symbols"] = ["something_else"], []
    assert "specificity: names no identifier of the fix's diff" in qc(vague, cand)[1]
    vague = json.loads(json.dumps(card))
    vague["tags"]["mechanisms"] = []
    vague["patch_digest"]["changes"] = [{"symbol": "pkg/m.py::parse_header", "kind": "logic-changed", "detail": "x"}]
    assert "specificity: no mechanism and no change kind of the code" in qc(vague, cand)[1]


def test_a_secret_in_the_changed_lines_is_redacted_in_the_excerpt():
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    src = _fetched("pkg/client.py", f"def connect():\n    return login('{token}')\n",
                   f"def connect():\n    return login('{token}', timeout=5)\n")
    card = standardise(_cand("Fix connect hanging without a timeout", [src]), 0.5)
    excerpt = card["patch_digest"]["excerpt"]
    assert token not in json.dumps(excerpt) and "login(" in excerpt["after"]


def test_cards_of_other_projects_material_stay_in_our_words():
    src = _fetched("pkg/m.py", "def parse_header(v):\n    return v.split('=')\n",
                   "def parse_header(v):\n    if '=' not in v:\n        return v, None\n    return v.split('=')\n")
    cand = _cand("Fix parse_header crash on a header value without an equals sign", [src],
                 fragment="Parsing a header value that has no equals sign no longer crashes with a ValueError.")
    cand.license, cand.record_id = "MIT", "demo@1"
    card = standardise(cand, 0.5, source="fixrecord")
    passed, problems, _ = qc(card, cand)
    assert passed is not None, problems
    assert "excerpt" not in passed["patch_digest"]  # no code of theirs
    assert "no equals sign no longer crashes" not in json.dumps(passed)
    assert passed["tags"]["symbols"] == ["pkg/m.py::parse_header"]


def test_definitions_only_a_type_checker_reads_change_no_behaviour():
    before = ("if TYPE_CHECKING:\n    class P(Protocol[A]):\n        def write(self, d: A) -> int: ...\n\n\n"
              "def f():\n    return 1\n")
    after = before.replace("Protocol[A]", "Protocol[T]").replace("d: A", "d: T")
    import difflib

    diff = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), n=3))
    assert codechange.analyse("m.py", diff, before, after, fetched=True).symbols == []
    changed = after.replace("return 1", "return 2")
    diff = "".join(difflib.unified_diff(before.splitlines(True), changed.splitlines(True), n=3))
    assert [s.qualname for s in codechange.analyse("m.py", diff, before, changed, fetched=True).symbols] == ["f"]


def test_a_long_line_is_shown_where_it_changed():
    old = "_forward = ['__str__', '__bytes__', '__truediv__', '__rtruediv__', '__eq__', '__lt__', '__le__']"
    new = old.replace("'__le__']", "'__le__', '__hash__']")
    a, b = astchange.pair(old, new)
    assert a != b and "__hash__" in b and a.startswith("…") and len(b) < len(new)


def test_a_squash_merges_list_of_commits_is_no_description():
    cand = Candidate(key="k", origin="git", repository="acme/shop", sha="ab" * 20, date="",
                     subject="Allow pickling `Token` (#32)",
                     body="* Allow pickling\n\n* Add newsfragment\n\n* Revert generalization\n\nIt's too much work.\n")
    p = problem.describe(cand)
    assert p.summary == "Allow pickling `Token`." and p.detail == ""


def test_a_learned_card_may_name_its_own_project():
    src = _fetched("shop/m.py", "def f(x):\n    return x\n", "def f(x):\n    if x is None:\n        return 0\n"
                                                              "    return x\n")
    cand = _cand("Fix f", [src], fragment="Shop no longer crashes when `f` gets None from the cart.",
                 reasons=("fragment",))
    card = standardise(cand, 0.5)
    assert card["problem_summary"].startswith("Shop no longer crashes") and check_card(card) == []
    record = dict(card, provenance=dict(card["provenance"], source="fixrecord", record_id="x", license="MIT"))
    assert any("names a repository or project" in p for p in check_card(record))
