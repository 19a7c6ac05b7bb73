"""ui.frame.params.Param: any link value gives a valid control value, and a notice exactly when it was changed."""

import math
from urllib.parse import parse_qsl, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ui.frame.params import MAX_TEXT, Param, snippet
from ui.frame.state import link_for

LAYER = Param("layer", 0, "int", 0, 5)
RATE = Param("rate", 0.1, "float", 0.0, 1.0)
SEED = Param("seed", 0, "int", 0, 10_000)
SENTENCE = Param("sentence", "the cat sat", "text")
FLAG = Param("causal", False, "bool")
MODEL = Param("model", "small", "choice", options=("small", "mlm", "minilm"))
HEADS = Param("heads", 4, "choice", options=(1, 2, 4, 8))
ONE_SIDED = Param("pads", 0, "int", lo=0)
UNBOUNDED = Param("scale", 1.0, "float")
ALL = [LAYER, RATE, SEED, SENTENCE, FLAG, MODEL, HEADS, ONE_SIDED, UNBOUNDED]


@settings(max_examples=300, deadline=None)
@given(raw=st.text(), param=st.sampled_from(ALL))
def test_any_string_gives_a_valid_value_and_never_raises(raw, param):
    value, notice = param.parse(raw)
    assert param.is_valid(value), (param.key, raw, value)
    assert notice is None or isinstance(notice, str)


@settings(max_examples=200, deadline=None)
@given(raw=st.text(alphabet="0123456789.-+eE inftyINFTYNa_", max_size=30), param=st.sampled_from(ALL[:3] + ALL[7:]))
def test_number_like_strings_give_valid_numbers(raw, param):
    value, _ = param.parse(raw)
    assert param.is_valid(value)
    assert isinstance(value, int if param.kind == "int" else float)


@settings(max_examples=200, deadline=None)
@given(param=st.sampled_from(ALL), data=st.data())
def test_a_valid_value_survives_the_round_trip_through_the_url(param, data):
    if param.kind == "int":
        value = data.draw(st.integers(int(param.lo), int(param.hi) if param.hi is not None else 10**12))
    elif param.kind == "float":
        lo, hi = param.lo, param.hi
        value = data.draw(st.floats(lo if lo is not None else -1e12, hi if hi is not None else 1e12, allow_nan=False))
    elif param.kind == "text":
        value = data.draw(st.text(max_size=param.max_len))
    elif param.kind == "bool":
        value = data.draw(st.booleans())
    else:
        value = data.draw(st.sampled_from(param.options))
    assert param.parse(param.to_url(value)) == (value, None)


@settings(max_examples=100, deadline=None)
@given(raw=st.text(min_size=1))
def test_a_notice_quotes_the_value_safely_inside_its_code_span(raw):
    for param in (LAYER, FLAG, MODEL):
        _, notice = param.parse(raw + "`x")  # never valid, so always a notice
        assert notice is not None
        assert notice.count("`") == 2, notice  # the value cannot close the code span and inject markdown
        assert "\n" not in notice and "\r" not in notice


@pytest.mark.parametrize(
    ("param", "raw", "value", "says"),
    [
        (LAYER, "3", 3, None),
        (LAYER, " 4 ", 4, None),
        (LAYER, "7", 5, "outside 0..5"),  # a layer that does not exist: the last one
        (LAYER, "-2", 0, "outside 0..5"),
        (LAYER, "2.6", 3, "not a whole number"),
        (LAYER, "abc", 0, "not a number"),
        (LAYER, "", 0, "not a number"),
        (LAYER, "nan", 0, "not a usable number"),
        (LAYER, "inf", 5, "outside 0..5"),
        (LAYER, "-inf", 0, "outside 0..5"),
        (LAYER, "1e400", 5, "outside 0..5"),
        (RATE, "7", 1.0, "outside 0..1"),  # a rate of 7
        (RATE, "0.25", 0.25, None),
        (RATE, "-0.5", 0.0, "outside 0..1"),
        (SEED, "abc", 0, "not a number"),  # a seed of "abc"
        (SEED, "42", 42, None),
        (SEED, "1" * 500, 10_000, "outside 0..10000"),
        (ONE_SIDED, "-3", 0, "the values from 0 up"),
        (ONE_SIDED, "inf", 0, "not a usable number"),
        (UNBOUNDED, "-inf", 1.0, "not a usable number"),
        (UNBOUNDED, "1e300", 1e300, None),
        (FLAG, "1", True, None),
        (FLAG, "TRUE", True, None),
        (FLAG, "off", False, None),
        (FLAG, "maybe", False, "not true/false"),
        (MODEL, "MiniLM", "minilm", None),
        (MODEL, "gpt", "small", "not one of small, mlm, minilm"),
        (HEADS, "8", 8, None),
        (HEADS, "3", 4, "not one of"),
        (SENTENCE, "hello <b>you</b>", "hello <b>you</b>", None),
    ],
)
def test_examples(param, raw, value, says):
    got, notice = param.parse(raw)
    assert got == value and type(got) is type(value)
    if says is None:
        assert notice is None
    else:
        assert says in notice and f"`{param.key}" in notice


def test_a_20000_character_sentence_is_cut_with_a_notice():
    value, notice = SENTENCE.parse("word " * 4000)
    assert len(value) == MAX_TEXT
    assert "20,000 characters" in notice and f"first {MAX_TEXT:,}" in notice


def test_int_bounds_that_are_not_whole_numbers_round_inwards():
    p = Param("k", 1, "int", 0.5, 3.5)
    assert p.parse("0")[0] == 1 and p.parse("9")[0] == 3


@pytest.mark.parametrize(
    ("param", "stored", "fixed"),
    [
        (LAYER, 9, 5),  # the model got smaller: the nearest layer that exists
        (LAYER, 2.0, 2),
        (LAYER, "2", 0),
        (LAYER, True, 0),
        (RATE, math.nan, 0.1),
        (RATE, 3, 1.0),
        (MODEL, "gone", "small"),
        (SENTENCE, "x" * (MAX_TEXT + 5), "x" * MAX_TEXT),
        (SENTENCE, None, "the cat sat"),
        (FLAG, "yes", False),
    ],
)
def test_nearest_valid(param, stored, fixed):
    got = param.nearest_valid(stored)
    assert got == fixed and type(got) is type(fixed)
    assert param.is_valid(got)


def test_snippet_is_short_one_line_and_backtick_free():
    s = snippet("a`b\nc\u200bd" + "e" * 100)
    assert "`" not in s and "\n" not in s and "\u200b" not in s and s.endswith("...") and len(s) <= 27


@settings(max_examples=200, deadline=None)
@given(query=st.dictionaries(st.sampled_from([p.key for p in ALL]), st.text(max_size=60), max_size=6))
def test_link_for_round_trips_through_a_query_string(query):
    url = link_for("http://host:8501/attention", query)
    parts = urlsplit(url)
    assert parts.path == "/attention"
    assert dict(parse_qsl(parts.query, keep_blank_values=True)) == query


def test_link_for_drops_an_old_query_and_keeps_a_bare_page():
    assert link_for("http://h/x?old=1#frag", {}) == "http://h/x"
    assert link_for("http://h/x?old=1", {"sentence": "a b&c"}) == "http://h/x?sentence=a%20b%26c"
    assert link_for(None, {"seed": "3"}) == "?seed=3"


def test_a_lesson_owns_its_controls_keys_and_links_keep_their_names():
    from ui.frame.params import LessonParams

    attention = LessonParams("attention", SENTENCE, LAYER, shared=(SEED,))
    padding = LessonParams("padding", SENTENCE, LAYER)
    assert attention.sentence.key == "attention.sentence" and padding.sentence.key == "padding.sentence"
    assert attention.sentence.name == padding.sentence.name == "sentence"  # the link is unchanged
    assert attention.seed.key == "seed"  # a frame control keeps its own key
    assert [p.name for p in attention] == ["sentence", "layer", "seed"] and len(attention) == 3
    assert attention["layer"] is attention.layer and attention.layer.hi == LAYER.hi
    value, notice = attention.layer.parse("9")
    assert value == 5 and notice.startswith("`layer=9`")  # a notice names the link's parameter, not the key
    with pytest.raises(AttributeError, match="no control named 'head'"):
        attention.head  # noqa: B018
    with pytest.raises(ValueError, match="share a name"):
        LessonParams("attention", SENTENCE, Param("sentence", "", "text"))
