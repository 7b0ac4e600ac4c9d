"""A file added whole keeps its lines as one string (sentinel.linemap.LineMap), shared with the content git
gives: it answers as the dict of lines did, and costs about the text instead of four times it. (Peak memory
of whole runs against input size is benchmarks/memory.py's to measure.)"""

from __future__ import annotations

import pickle
import sys
import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from sentinel import engine, sources
from sentinel.config import Config
from sentinel.diffparse import parse_diff
from sentinel.linemap import LineMap, held_head, held_lines, pack, unpack
from tests.conftest import new_file_diff

_LINE = st.text(st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), max_size=12)


@settings(max_examples=200, deadline=None)
@given(first=st.integers(1, 50), lines=st.lists(_LINE, min_size=0, max_size=80),
       probes=st.lists(st.integers(-5, 140), max_size=20))
def test_a_linemap_answers_as_the_dict_of_its_lines(first, lines, probes):
    table = dict(zip(range(first, first + len(lines)), lines))
    m = LineMap.of_lines(lines, first)
    assert m == table and dict(m) == table and len(m) == len(table)
    assert list(m) == list(table) and list(m.items()) == list(table.items()) and list(m.values()) == lines
    assert list(reversed(m)) == list(reversed(table)) and {**m} == table
    for n in probes + ["1", None]:
        assert (n in m) == (n in table) and m.get(n) == table.get(n) and m.get(n, "-") == table.get(n, "-")
    assert pickle.loads(pickle.dumps(m)) == table
    if lines:
        m[first] = "changed"  # the first write turns it into a dict inside, the answers stay right
        table[first] = "changed"
        del m[first + len(lines) - 1]
        del table[first + len(lines) - 1]
        m.update({999: "x"})
        table.update({999: "x"})
        assert m == table and m.text is None and list(m.items()) == list(table.items())


def test_a_whole_file_diff_keeps_its_lines_as_one_string():
    data = new_file_diff("big.py", "".join(f"value_{i} = {i}  # a line of ordinary code\n" for i in range(50_000)))
    tracemalloc.start()
    try:
        cs = parse_diff(data.encode(), source="test")
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    added = cs.files[0].added
    assert isinstance(added, LineMap) and added[7] == "value_6 = 6  # a line of ordinary code"
    # one string a line and a dict entry each held 3.8 x the diff; the text and its offsets ~1 x
    assert held < 1.5 * len(data), held / len(data)


def test_one_wide_character_in_a_large_ascii_file_keeps_the_text_at_its_utf8_size():
    # A str takes its widest character's width for every character: one emoji made the whole text 4 bytes a
    # character (so the lines were kept apart, 130 bytes a line more); held as UTF-8 it stays ~1 byte a character
    lines = [f"value_{i} = {i}  # a line of ordinary code, as long as lines of code are" for i in range(5_000)]
    for wide in ("\U0001F642", "\u2014", "caf\u00e9"):
        lines[7] = lines[6] + "  # " + wide
        text = "\n".join(lines) + "\n"
        added = parse_diff(new_file_diff("big.py", text), source="test").files[0].added
        assert isinstance(added, LineMap) and added[8].endswith(wide) and added[9] == lines[8]
        # (before pickling: pickle caches a non-ASCII str's UTF-8 form inside it)
        assert sys.getsizeof(added.held) < len(text.encode()) + 100
        assert added.text == text and list(added.values()) == lines and dict(pickle.loads(pickle.dumps(added))) == \
            dict(zip(range(1, 5001), lines))


def test_a_packed_text_comes_back_as_it_was():
    for text in ["", "ascii\n", "caf\u00e9\n", "\u2014 x\n" * 3, "\U0001F642\r\n", "bad \udce9 byte\n",
                 "pair \udcc3\udca9 of surrogates\n", "\ufeffbom\n"]:
        held = pack(text)
        assert unpack(held) == text and held_lines(held) == text.count("\n")
        assert held_head(held, 3) == text[:3] and held_head(held, 1000) == text
        if text.isascii():
            assert held is text


def test_staged_content_and_the_diffs_lines_are_one_string(repo):
    code = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(200))
    repo.write("pkg/mod.py", code)
    repo.add("pkg/mod.py")
    change = sources.staged(str(repo.path))
    contexts, _ = engine.build_contexts(change, Config(), Config().filter_mode)
    [ctx] = contexts
    assert ctx.has_content and ctx.text == code
    assert isinstance(ctx.change.added, LineMap) and ctx.change.added.text is ctx.text  # shared, not copied
    assert ctx.change.added[2] == "    return x + 0" and len(ctx.change.added) == 800
    whole = sources.all_files(str(repo.path))
    contexts, _ = engine.build_contexts(whole, Config(), Config().filter_mode)
    assert contexts[0].change.added.text is contexts[0].text


def test_parsing_a_non_ascii_file_does_not_double_the_text_the_run_keeps():
    # compile() asks a str for its UTF-8 form and CPython keeps that inside a non-ASCII str as long as the str
    # lives: the file's text, which lives for the whole run (a tree of this project's sources: 12 MB of 20)
    import sys

    from sentinel.checks.base import FileContext
    from sentinel.models import FilterMode

    text = "# caf\u00e9 \u2014 na\u00efve\n" + "".join(f"value_{i} = {i}\n" for i in range(5000))
    [fc] = parse_diff(new_file_diff("m.py", text), source="t").files
    ctx = FileContext(fc, Config(), FilterMode.ADDED, text)
    size = sys.getsizeof(ctx.text)
    assert ctx.tree is not None and len(ctx.tree.body) == 5000
    assert sys.getsizeof(ctx.text) == size
