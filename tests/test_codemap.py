"""The project's code map: names defined per source file, read from a real git tree; learned cards carry the
files their fix changed; search points a query at those files through the map (the `area` feature)."""

from __future__ import annotations

import json

from sentinel.config import Config
from sentinel.memory.cards import codemap
from sentinel.memory.cards.build import build_index
from sentinel.memory.cards.index import load_index
from sentinel.memory.cards.model import check_card
from sentinel.memory.learn.dedup import merge_into
from sentinel.memory.learn.index import source_code_map
from sentinel.memory.learn.model import Candidate, FileDiff
from sentinel.memory.learn.standardise import standardise
from sentinel.memory.retrieval.search import search


def _commit(repo, message, files):
    for path, text in files.items():
        repo.write(path, text)
        repo.add(path)
    return repo.commit(message)


def test_code_map_of_a_git_tree(repo):
    first = _commit(repo, "start", {
        "src/shop/cart.py": "class Cart:\n    def remove_item(self, sku):\n        pass\n\n\ndef _short():\n"
                            "    pass\n",
        "src/shop/discount.py": "def apply_code(code, total):\n    '''def not_a_definition here'''\n"
                                "    return total\n",
        "src/shop/__init__.py": "def checkout_all():\n    pass\n",
        "docs/guide.md": "def documented_only():\n",
        "tests/test_cart.py": "def test_remove_item():\n    pass\n",
        "web/app.js": "export function renderBasket(items) {\n}\nclass BasketView extends View {\n}\n",
    })
    # a name defined in more than MAX_FILES files points nowhere in particular
    common = {f"src/shop/m{i}.py": "def shared_helper():\n    pass\n" for i in range(codemap.MAX_FILES + 1)}
    _commit(repo, "more", {**common, "src/shop/late.py": "def added_later():\n    pass\n"})

    cmap = source_code_map(str(repo.path))
    assert cmap["remove_item"] == ["shop/cart.py"]  # src/ dropped: a move to a src layout keeps the module
    assert cmap["cart"] == ["shop/cart.py"] and cmap["apply_code"] == ["shop/discount.py"]
    assert cmap["renderbasket"] == ["web/app.js"] and cmap["basketview"] == ["web/app.js"]
    assert cmap["discount"] == ["shop/discount.py"]  # a module is named by its file
    assert cmap["checkout_all"] == ["shop/__init__.py"] and "init" not in cmap
    for absent in ("documented_only", "test_remove_item", "shared_helper", "not_a_definition"):
        assert absent not in cmap, absent
    assert "added_later" in cmap
    # the tree at an earlier revision: what a learn run at that time would have seen
    assert "added_later" not in source_code_map(str(repo.path), first)
    assert source_code_map(str(repo.path), "no-such-rev") == {}


def _cand(sha: str, path: str, func: str) -> Candidate:
    diff = (f"@@ -1,3 +1,4 @@ def {func}(total):\n-    return total - 1\n+    if total < 0:\n+        return 0\n"
            f"+    return total - 1\n")
    return Candidate(key=sha, origin="git", repository="acme/shop", sha=sha, date="2025-01-01",
                     subject="Fix a negative total below zero after rounding",
                     fragment="A negative total is no longer returned after rounding.",
                     files=[FileDiff(path, "source", diff, 3, 1)], tests_added=["test_total_not_negative"])


def test_learned_cards_carry_their_files_and_the_checklist_checks_them():
    card = standardise(_cand("ab" * 20, "src/shop/cart.py", "total"), 0.5)
    assert card["tags"]["files"] == ["src/shop/cart.py"] and check_card(card) == []
    for bad in ("/etc/passwd", "C:\\shop\\cart.py", "shop/../../etc/passwd"):
        broken = json.loads(json.dumps(card))
        broken["tags"]["files"] = [bad]
        assert any(p.startswith("tags.files:") for p in check_card(broken)), bad
    other = standardise(_cand("cd" * 20, "src/shop/discount.py", "total"), 0.5)
    assert card["tags"]["symbols"] == ["src/shop/cart.py::total"]  # the function the hunk is in
    merge_into(card, other)  # a merged duplicate's files and symbols join the card's
    assert card["tags"]["files"] == ["src/shop/cart.py", "src/shop/discount.py"]
    assert card["tags"]["symbols"] == ["src/shop/cart.py::total", "src/shop/discount.py::total"]


def test_search_points_at_the_files_a_query_names_through_the_code_map(tmp_path):
    # two fixes told in the same words, in two files: only the code map can tell which one the query is about
    cart = standardise(_cand("ab" * 20, "src/shop/cart.py", "total"), 0.5)
    discount = standardise(_cand("cd" * 20, "src/shop/discount.py", "total"), 0.5)
    cmap = {"apply_code": ["shop/discount.py"], "remove_item": ["shop/cart.py"]}
    build_index([cart, discount], tmp_path / "with", None, built_at="t", codemap=cmap)
    build_index([cart, discount], tmp_path / "without", None, built_at="t")
    query = "apply_code returns a negative total after rounding"

    hits = search(query, k=2, config=Config(), index=load_index(tmp_path / "with"), min_score=0)
    assert [h.id for h in hits] == [discount["id"], cart["id"]]
    assert hits[0].features["area"] == 1.0 and hits[1].features["area"] == 0.0
    assert hits[0].score > hits[1].score

    plain = search(query, k=2, config=Config(), index=load_index(tmp_path / "without"), min_score=0)
    assert "area" not in plain[0].features  # no code map, no feature
    assert {h.id for h in plain} == {cart["id"], discount["id"]} and plain[0].score == plain[1].score

    other = search("remove_item returns a negative total after rounding", k=2, config=Config(),
                   index=load_index(tmp_path / "with"), min_score=0)
    assert other[0].id == cart["id"]


def test_query_names_and_votes():
    names = codemap.query_names("Fix `Client.send()` timeout when the proxy is set", ["Client.send"])
    assert names[:2] == ["send", "client"] and "when" not in names and "the" not in names
    votes = codemap.file_votes({"send": ["a.py", "b.py"], "proxy": ["b.py"]}, names)
    assert votes == {"a.py": 0.5, "b.py": 1.5}


def test_a_damaged_code_map_degrades_to_none(tmp_path):
    assert codemap.load(tmp_path) is None  # no file
    (tmp_path / codemap.CODEMAP_FILE).write_text("{not json")
    assert codemap.load(tmp_path) is None
    (tmp_path / codemap.CODEMAP_FILE).write_text(json.dumps({"send": "a.py", "proxy": ["b.py", 3]}))
    assert codemap.load(tmp_path) == {"proxy": ["b.py"]}


def test_everyday_names_point_less_than_specific_ones(tmp_path):
    # "total" is in every card (an everyday word of this project); "apply_code" in none: both name a file
    cart = standardise(_cand("ab" * 20, "src/shop/cart.py", "total"), 0.5)
    discount = standardise(_cand("cd" * 20, "src/shop/discount.py", "total"), 0.5)
    cmap = {"apply_code": ["shop/discount.py"], "total": ["shop/cart.py"]}
    build_index([cart, discount], tmp_path / "idx", None, built_at="t", codemap=cmap)
    hits = search("total is negative after apply_code", k=2, config=Config(), index=load_index(tmp_path / "idx"),
                  min_score=0)
    area = {h.id: h.features["area"] for h in hits}
    assert area[discount["id"]] == 0.5  # half the query's names, fully specific
    assert 0 < area[cart["id"]] < 0.1  # the other half, a word every card uses
    assert hits[0].id == discount["id"]
