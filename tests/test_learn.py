"""`sentinel memory learn`: the governance pipeline over a real git history built here, through the installed
console script; the stages on their own; the learned store; search and recall over learned cards."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from sentinel.config import load_config
from sentinel.memory.cards.model import check_card
from sentinel.memory.learn import pipeline
from sentinel.memory.learn.dedup import dedup
from sentinel.memory.learn.model import Candidate, FileDiff
from sentinel.memory.learn.purify import formatting_only, purify, relevance
from sentinel.memory.learn.qc import copied_runs, qc
from sentinel.memory.learn.standardise import standardise
from sentinel.memory.store.backends import open_learned_store
from sentinel.memory.store.learned import LearnRun, SQLiteLearnedCardStore

from tests.conftest import _INSTALLED  # the non-editable install's console script (built once per session)

CART_V1 = '''\
from decimal import Decimal


class Cart:
    def __init__(self):
        self.items = {}

    def add(self, sku, price, quantity=1):
        self.items[sku] = (price, self.items.get(sku, (price, 0))[1] + quantity)

    def remove_item(self, sku):
        price, quantity = self.items[sku]
        del self.items[sku]
        return quantity

    def total(self):
        return sum(price * quantity for price, quantity in self.items.values())
'''


def run_cli(repo, *args, env=None):
    full = {**os.environ, **(env or {})}
    full.pop("SENTINEL_LEARNED_STORE", None)
    return subprocess.run([_INSTALLED["path"], *args], cwd=repo.path, capture_output=True, text=True, env=full)


def commit(repo, message, files: dict[str, str]):
    for path, text in files.items():
        repo.write(path, text)
        repo.add(path)
    return repo.commit(message)


@pytest.fixture
def history(repo):
    """A small project whose history holds two real fixes, a backport, and four changes that are not fixes."""
    commit(repo, "Initial cart", {"src/shop/cart.py": CART_V1, "tests/test_cart.py": "def test_add():\n    pass\n",
                                  "README.md": "# shop\n", "requirements.txt": "requests==2.0\n"})
    shas = {}
    fixed = CART_V1.replace('''    def remove_item(self, sku):
        price, quantity = self.items[sku]
        del self.items[sku]
        return quantity''', '''    def remove_item(self, sku):
        entry = self.items.get(sku)
        if entry is None:
            raise LookupError(f"no item {sku!r} in the cart")
        del self.items[sku]
        return entry[1]''')
    shas["keyerror"] = commit(repo, "Fix KeyError in remove_item when the sku is not in the cart (#12)\n\n"
                                    "Removing an unknown sku crashed with a bare KeyError deep inside the cart.", {
        "src/shop/cart.py": fixed,
        "news/12.bugfix.rst": "Removing an item that is not in the cart raises a clear LookupError instead of "
                              "a bare ``KeyError`` from ``remove_item``.\n",
        "tests/test_cart.py": "def test_add():\n    pass\n\n\ndef test_remove_item_missing_sku():\n    pass\n"})
    commit(repo, "Fix typo in README", {"README.md": "# shop, the cart library\n"})
    commit(repo, "Bump requests from 2.0 to 2.1 (fixes #20)", {"requirements.txt": "requests==2.1\n"})
    formatted = fixed.replace("    def total(self):\n        return sum(",
                              "    def total(self):\n        return sum(  ")
    commit(repo, "fix formatting of the cart module", {"src/shop/cart.py": formatted})
    commit(repo, "Add discount codes", {"src/shop/discount.py": "def apply(code, total):\n    return total\n"})
    commit(repo, "Fix flaky scheduler timing", {"src/shop/discount.py":
                                                "def apply(code, total):\n    return total * 1\n"})
    rounded = formatted.replace("        return sum(  price * quantity for price, quantity in self.items.values())",
                            "        amount = sum(Decimal(str(price)) * quantity for price, quantity in "
                            "self.items.values())\n        return amount.quantize(Decimal('0.01'))")
    shas["rounding"] = commit(repo, "Fix total() rounding of float prices (#15)", {
        "src/shop/cart.py": rounded,
        "news/15.bugfix.rst": "``Cart.total`` sums prices as decimals and rounds to cents, so float prices no "
                              "longer add up to values like 0.30000000000000004.\n",
        "tests/test_cart.py": "def test_add():\n    pass\n\n\ndef test_total_rounds_to_cents():\n    pass\n"})
    return repo, shas


def test_learn_cli_runs_every_stage_and_is_incremental(history):
    repo, shas = history
    proc = run_cli(repo, "memory", "learn", "--json", "--repo-name", "acme/shop")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    run = report["runs"][0]
    counts = run["counts"]
    assert run["source"] == "git:acme/shop" and run["standardiser"] == "deterministic"
    assert counts["source"]["commits"] == 8
    # two fixes kept; the typo, the bump, the formatting change and the unrelated "fix" are dropped
    assert counts["candidates"] == 6 and counts["purified"] == 2
    assert counts["standardised"] == 2 and counts["qc_passed"] == 2 and counts["cards"] == 2
    dropped = counts["dropped"]
    assert dropped["no source change (docs, tests or CI only)"] == 1
    assert dropped["dependency bump"] == 1 and dropped["formatting only"] == 1
    assert any(k.startswith("problem text not related") for k in dropped)

    store = open_learned_store(load_config(str(repo.path)).memory, str(repo.path / ".git"))  # as learn wrote it
    try:
        cards = {c["provenance"]["commit"]: c for c in store.cards()}
    finally:
        store.close()
    card = cards[shas["keyerror"]]
    assert check_card(card) == []
    assert card["provenance"]["source"] == "learned" and card["provenance"]["repository"] == "acme/shop"
    assert card["provenance"]["date"]
    assert "KeyError" in card["tags"]["exceptions"] and "remove_item" in card["tags"]["identifiers"]
    assert card["tags"]["files"] == ["src/shop/cart.py"]  # what the code map points queries at
    assert "none-missing-value" in card["tags"]["mechanisms"]
    assert card["verification"]["tests_added"] == ["test_remove_item_missing_sku"]
    assert 0 < card["quality"]["confidence"] <= 1 and card["quality"]["standardiser"] == "deterministic"
    rounding = cards[shas["rounding"]]
    assert "numeric-precision" in rounding["tags"]["mechanisms"]

    # re-running learns nothing new; a new fix is learned alone
    again = json.loads(run_cli(repo, "memory", "learn", "--json", "--repo-name", "acme/shop").stdout)
    assert again["runs"][0]["counts"]["source"]["commits"] == 0 and again["written"] == 0
    commit(repo, "Fix crash in add when quantity is None", {"src/shop/cart.py": rounding_fix_none(repo)})
    third = json.loads(run_cli(repo, "memory", "learn", "--json", "--repo-name", "acme/shop").stdout)
    assert third["runs"][0]["counts"]["source"]["commits"] == 1 and third["written"] == 1

    stats = json.loads(run_cli(repo, "memory", "stats", "--json").stdout)
    assert stats["learned"]["cards"] == 3
    assert [r["counts"]["cards"] for r in stats["learned"]["runs"]] == [1, 0, 2]
    text = run_cli(repo, "memory", "stats").stdout
    assert "learned (this project): 3 cards" in text and "8 commits -> 6 candidates -> 2 purified" in text


def rounding_fix_none(repo) -> str:
    text = (repo.path / "src/shop/cart.py").read_text()
    return text.replace("    def add(self, sku, price, quantity=1):\n",
                        "    def add(self, sku, price, quantity=1):\n        if quantity is None:\n"
                        "            quantity = 1\n")


def test_learned_cards_are_searched_with_the_bundled_ones(history):
    repo, shas = history
    assert run_cli(repo, "memory", "learn", "--repo-name", "acme/shop").returncode == 0
    proc = run_cli(repo, "memory", "search", "KeyError from remove_item when the sku is missing from the cart",
                   "--json", "-k", "3")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    top = out["results"][0]
    assert top["source"] == "project" and top["provenance"]["commit"] == shas["keyerror"]
    assert top["provenance"]["repository"] == "acme/shop"
    assert "remove_item" in top["matched"]["identifiers"]
    # every hit cleared its own model's threshold: the project's (memory.project-min-score) or other projects'
    assert out["project_min_score"] == 0.25 and out["min_score"] == 0.35
    assert all(r["score"] >= (out["project_min_score"] if r["source"] == "project" else out["min_score"])
               for r in out["results"])
    # the learned index keeps the project's code map: names -> the files defining them, read from HEAD's tree
    cmap = json.loads((repo.path / ".git" / "sentinel" / "learned-index" / "codemap.json").read_text())
    assert cmap["remove_item"] == ["shop/cart.py"] and cmap["apply"] == ["shop/discount.py"]
    # the query's names point at the file the fix changed; the bundled index has no code map, no such feature
    assert top["features"]["area"] > 0
    assert all(top["features"]["area"] >= r["features"]["area"] for r in out["results"] if r["source"] == "project")
    assert all("area" not in r["features"] for r in out["results"] if r["source"] == "bundled")
    shown = run_cli(repo, "memory", "show", top["id"])
    assert shown.returncode == 0 and "remove_item" in shown.stdout and "acme/shop" in shown.stdout

    log = repo.path / "fail.log"
    log.write_text('''\
_________________________ test_checkout_unknown_item _________________________
tests/test_checkout.py:9: in test_checkout_unknown_item
    cart.remove_item("sku-9")
src/shop/cart.py:14: in remove_item
    price, quantity = self.items[sku]
E   KeyError: 'sku-9'
FAILED tests/test_checkout.py::test_checkout_unknown_item - KeyError: 'sku-9'
''')
    recall = run_cli(repo, "recall", "--log", str(log), "--json")
    assert recall.returncode == 0, recall.stderr
    rec = json.loads(recall.stdout)
    assert rec["results"][0]["source"] == "project"  # the project's own history first
    assert rec["results"][0]["provenance"]["commit"] == shas["keyerror"]
    assert rec["signals"]["format"] == "pytest-short"


def test_progress_on_request(history):
    repo, _ = history
    proc = run_cli(repo, "memory", "learn", "--progress", "--repo-name", "acme/shop")
    assert proc.returncode == 0 and "sentinel: learn: git:acme/shop: 6 candidates read, 2 new cards" in proc.stderr
    quiet = run_cli(repo, "memory", "learn", "--repo-name", "acme/shop")
    assert quiet.stderr == ""  # not a terminal, no --progress: no progress lines


def test_unrelated_query_shows_nothing(history):
    repo, _ = history
    run_cli(repo, "memory", "learn", "--repo-name", "acme/shop")
    proc = run_cli(repo, "memory", "search", "kubernetes helm chart values rendering", "--json")
    assert json.loads(proc.stdout)["results"] == []
    text = run_cli(repo, "memory", "search", "kubernetes helm chart values rendering").stdout
    assert "no similar past fix" in text


def test_learn_out_of_repository_needs_out(tmp_path):
    proc = subprocess.run([_INSTALLED["path"], "memory", "learn"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 2 and "not in a git repository" in proc.stderr


def test_records_into_a_jsonl_file(tmp_path, repo):
    rec = {"id": "demo@1234567890", "repo": "acme/shop", "sha": "1234567890abcdef1234567890abcdef12345678",
           "date": "2025-01-02T03:04:05+00:00", "subject": "Fix KeyError in remove_item (#3)", "body": "",
           "news": "Removing an unknown sku raises LookupError instead of a bare KeyError.",
           "issue_urls": ["https://github.com/acme/shop/issues/3"],
           "files_changed": ["src/shop/cart.py", "tests/test_cart.py"],
           "diff": "diff --git a/src/shop/cart.py b/src/shop/cart.py\n--- a/src/shop/cart.py\n+++ b/src/shop/cart.py\n"
                   "@@ -10,3 +10,5 @@ class Cart:\n     def remove_item(self, sku):\n-        price, quantity = "
                   "self.items[sku]\n+        entry = self.items.get(sku)\n+        if entry is None:\n"
                   "+            raise LookupError(sku)\n",
           "test_functions_added": ["test_remove_unknown_sku"]}
    records = tmp_path / "records.jsonl"
    records.write_text(json.dumps(rec) + "\n")
    out = tmp_path / "cards.jsonl"
    proc = run_cli(repo, "memory", "learn", "--records", str(records), "--out", str(out), "--license", "MIT")
    assert proc.returncode == 0, proc.stderr
    cards = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(cards) == 1 and check_card(cards[0]) == []
    prov = cards[0]["provenance"]
    assert prov["source"] == "fixrecord" and prov["record_id"] == "demo@1234567890" and prov["license"] == "MIT"
    assert prov["url"] == "https://github.com/acme/shop/issues/3"
    bad = run_cli(repo, "memory", "learn", "--records", str(records), "--out", str(out))
    assert bad.returncode == 2 and "--license" in bad.stderr


# ---------------------------------------------------------------------------------------------------------------
# the stages on their own

def _cand(subject, files, fragment="", tests=(), body=""):
    return Candidate(key="k", origin="git", repository="acme/shop", sha="ab" * 20, date="2025-01-01",
                     subject=subject, body=body, fragment=fragment, files=files, tests_added=list(tests))


DIFF = ("@@ -1,4 +1,6 @@ def parse_header(value):\n-    key, val = value.split('=')\n"
        "+    if '=' not in value:\n+        return value, None\n+    key, val = value.split('=', 1)\n")


def test_purify_drops_each_kind_and_measures_relevance():
    src = FileDiff("pkg/headers.py", "source", DIFF, 3, 1)
    good = _cand("Fix parse_header crash on a header value without an equals sign", [src])
    v = purify(good)
    assert v.keep and v.relevance >= 0.2
    assert not purify(_cand("Fix typo", [FileDiff("docs/index.rst", "docs", "+x\n", 1, 0)])).keep
    bump = purify(_cand("Bump lib from 1.0 to 1.1", [FileDiff("requirements.txt", "deps", "+lib==1.1\n", 1, 1)]))
    assert bump.reason == "dependency bump"
    fmt = FileDiff("pkg/headers.py", "source", "@@ -1 +1 @@\n-x = f(a,b)\n+x = f(a, b)\n", 1, 1)
    assert formatting_only(fmt.diff) and purify(_cand("Fix spacing", [fmt])).reason == "formatting only"
    release = FileDiff("pkg/__init__.py", "source", '@@ -1 +1 @@\n-__version__ = "1.2.2"\n+__version__ = "1.2.3"\n',
                       1, 1)
    fixed_entry = "Fixed parse_header crash on a header value without an equals sign."
    assert purify(_cand("Release 1.2.3", [release], fragment=fixed_entry)).reason == \
        "version bump (a release, not a fix)"
    assert purify(_cand("Fix parse_header crash on a header value without an equals sign", [src, release])).keep
    unrelated = _cand("Fix flaky scheduler timing in the nightly job", [src])
    assert relevance(unrelated) < 0.2 and not purify(unrelated).keep
    assert purify(unrelated, tau=0.0).keep  # the threshold is configurable


def test_standardised_card_passes_qc_in_the_projects_words_or_ours():
    src = FileDiff("pkg/headers.py", "source", DIFF, 3, 1)
    message = "Fix parse_header crash on a header value without an equals sign"
    fragment = "Parsing a header value that has no equals sign no longer crashes with a ValueError from unpacking."
    cand = _cand(message, [src], fragment=fragment, tests=["test_parse_header_without_value"])
    card = standardise(cand, relevance=0.5)
    passed, problems, rounds = qc(card, cand)
    assert passed is not None, problems
    # a learned card tells the problem as the project did (its news fragment), the fix from the code
    assert passed["problem_summary"] == fragment
    assert passed["patch_digest"]["changes"][0]["kind"] == "membership-guard"
    assert "ValueError" in passed["tags"]["exceptions"] and "parse_header" in passed["tags"]["identifiers"]
    assert passed["quality"]["confidence"] > 0.5
    # a card of another project's fix record is in our own words: no sentence of its commit or fragment
    cand.license, cand.record_id = "MIT", "demo@1"
    record, problems, _ = qc(standardise(cand, relevance=0.5, source="fixrecord"), cand)
    assert record is not None, problems
    assert copied_runs(record, cand) == []
    for sentence in (message, fragment):
        assert sentence not in json.dumps(record)


def test_qc_refines_then_rejects():
    src = FileDiff("pkg/headers.py", "source", DIFF, 3, 1)
    cand = _cand("Fix parse_header crash", [src])
    card = standardise(cand, 0.5)
    card["signals"] = card["signals"][:3]  # too few: the refiner pads them
    card["problem_summary"] += " See sqlalchemy for details."  # a project name: the refiner removes it
    passed, problems, rounds = qc(card, cand)
    assert passed is not None and rounds == 1 and "sqlalchemy" not in passed["problem_summary"]

    def useless(card, problems, cand):
        return card

    broken = dict(passed, root_cause="short")
    assert qc(broken, cand, refine=useless) == (None, ["root_cause: 5 characters, expected 80-1200"], 3)
    cand.body = "the header value without an equals sign made the parser crash"
    copied = "It was broken: " + "the header value without an equals sign made the parser crash " * 2
    cand.license, cand.record_id = "MIT", "demo@1"
    record = dict(standardise(cand, 0.5, source="fixrecord"), root_cause=copied)
    assert any("copies" in p for p in qc(record, cand, refine=useless)[1])  # another project's words
    learned = dict(standardise(cand, 0.5), root_cause=copied)
    assert not any("copies" in p for p in qc(learned, cand, refine=useless)[1])  # the project's own words


def test_dedup_merges_near_duplicates_and_keeps_provenance():
    src = FileDiff("pkg/headers.py", "source", DIFF, 3, 1)
    a = standardise(_cand("Fix parse_header crash on a header value without an equals sign", [src]), 0.5)
    b = json.loads(json.dumps(a))
    b["id"], b["provenance"]["commit"] = "lx-shop-other", "cd" * 20
    b["quality"]["confidence"] = 0.1
    other = standardise(_cand("Fix total rounding of float prices", [FileDiff(
        "pkg/cart.py", "source", "@@ -1 +1 @@ def total(self):\n-    return s\n+    return round(s, 2)\n", 1, 1)]),
        0.5)
    new, updated, merged = dedup([a, b, other])
    assert merged == 1 and {c["id"] for c in new} == {a["id"], other["id"]}
    assert "commit:" + "cd" * 20 in a["provenance"]["references"]
    # against cards already stored: the stored card absorbs the duplicate
    new2, updated2, merged2 = dedup([b], existing=[a])
    assert new2 == [] and merged2 == 1 and updated2 == [a]


def test_pipeline_counts_every_stage():
    src = FileDiff("pkg/headers.py", "source", DIFF, 3, 1)
    cands = [_cand("Fix parse_header crash on a header value without an equals sign", [src]),
             _cand("Fix typo", [FileDiff("README.md", "docs", "+x\n", 1, 0)])]
    res = pipeline.run(cands, pipeline.Options())
    assert {k: res.counts[k] for k in pipeline.STAGES} == {"candidates": 2, "purified": 1, "standardised": 1,
                                                           "qc_passed": 1, "cards": 1}
    assert "2 candidates -> 1 purified" in pipeline.stage_line(res.counts)


def test_learned_store_roundtrip(tmp_path):
    path = str(tmp_path / "learned.sqlite3")
    with SQLiteLearnedCardStore(path) as store:
        assert store.count() == 0 and store.seen("git:x") == set()
        d0 = store.digest()
        store.put([{"id": "b", "provenance": {"commit": "2"}}, {"id": "a", "provenance": {"commit": "1"}}])
        store.mark_seen("git:x", ["1", "2", "2"])
        store.record_run(LearnRun(source="git:x", standardiser="deterministic", counts={"cards": 2}))
        assert [c["id"] for c in store.cards()] == ["a", "b"] and store.get("a")["provenance"]["commit"] == "1"
        assert store.digest() != d0
    with SQLiteLearnedCardStore(path) as store:  # reopened: everything persisted
        assert store.seen("git:x") == {"1", "2"} and store.count() == 2
        assert store.runs()[0].counts == {"cards": 2}
        assert store.remove(["a"]) == 1 and store.count() == 1


def test_patch_lines_are_counted_from_the_stream_and_mass_changes_skipped(history):
    from sentinel.memory.learn import gitsource

    repo, shas = history
    commit(repo, "Fix every module at once", {"src/shop/generated.py": "".join(f"X{i} = {i}\n" for i in range(4001))})
    root = str(repo.path)
    commits = gitsource.list_commits(root)
    assert commits[0].files == ["src/shop/generated.py"]  # names only: no line counts from git log
    (sha, _, truncated, lines), = gitsource.stream_diffs(root, [shas["keyerror"]])
    assert sha == shas["keyerror"] and not truncated
    assert lines["src/shop/cart.py"] == [4, 2] and lines["tests/test_cart.py"] == [4, 0]
    counts: dict = {}
    cands = {c.sha: c for c in gitsource.candidates_of(root, "acme/shop", commits, counts=counts)}
    assert counts["not_candidates"]["mass change"] == 1 and commits[0].sha not in cands
    fix = next(f for f in cands[shas["keyerror"]].files if f.path == "src/shop/cart.py")
    assert (fix.added, fix.removed) == (4, 2)
