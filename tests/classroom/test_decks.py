"""A lecturer's deck as data: a good file reads back to the same deck, a file with one bad step is refused
whole with the step named (its number and kind) and what is wrong, a step naming a lesson or prediction the
app does not have is flagged, 200 steps work, and the store keeps a deck on SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest

from classroom.decks import (
    FORMAT,
    MAX_STEPS,
    VERSION,
    BadDeck,
    Deck,
    Known,
    PredictionStep,
    QuizStep,
    TypedStep,
    ViewStep,
    import_deck,
    parse,
    parse_deck_id,
    problems,
    step_title,
    view_from_link,
)

KNOWN = Known(
    lessons=frozenset({"attention", "padding", "block"}),
    predictions={"attention-rows": "attention", "padding-leak": "padding"},
    generators=frozenset({"masking_split", "heads_weight_count"}),
)
GOOD_STEPS = [
    {"kind": "view", "lesson": "attention", "params": {"step": 1, "sentence": "the cat sat", "head": 2}},
    {"kind": "prediction", "key": "attention-rows", "sentence": "the  bird sang", "model": "mlm", "seed": 3},
    {"kind": "quiz", "generator": "masking_split", "seed": 0, "note": "the 80/10/10 rule"},
    {"kind": "typed", "prompt": "What does $\\sqrt{d_k}$ do?", "options": ["scales", "masks", "pads"], "right": 1},
]


def a_file(steps=None, **top) -> dict:
    return {"format": FORMAT, "version": VERSION, "title": "A lecture", "steps": steps or GOOD_STEPS, **top}


def test_a_good_deck_reads_every_kind_of_step():
    deck = import_deck(json.dumps(a_file()), KNOWN)
    view, prediction, quiz, question = deck.steps
    assert view == ViewStep("attention", {"step": 1, "sentence": "the cat sat", "head": 2})
    assert view.step == 1
    assert prediction == PredictionStep("attention-rows", "the bird sang", "mlm", 3)  # spaces made single
    assert quiz == QuizStep("masking_split", 0, "the 80/10/10 rule") and quiz.question_id == "masking_split:0"
    assert question == TypedStep("What does $\\sqrt{d_k}$ do?", ("scales", "masks", "pads"), 1)
    assert deck.title == "A lecture" and problems(deck, KNOWN) == []


def test_export_then_import_gives_the_same_deck_and_the_same_id():
    deck = import_deck(a_file(), KNOWN)
    again = import_deck(deck.to_json().encode(), KNOWN)
    assert again == deck and again.id == deck.id and parse_deck_id(deck.id) == deck.id
    assert json.loads(deck.to_json())["format"] == FORMAT
    edited = Deck(deck.title, deck.steps[:-1])
    assert edited.id != deck.id  # an edited deck is a new link


def test_defaults_a_missing_title_model_and_seed():
    deck = parse(a_file([{"kind": "prediction", "key": "padding-leak", "sentence": "a b"}], title=""))
    assert deck.title == "Untitled deck" and deck.steps[0] == PredictionStep("padding-leak", "a b", "small", 0)


BAD_STEPS = [
    ({"kind": "slide"}, 'Step 2 (unknown kind): `kind` is "slide"'),
    ({"lesson": "attention"}, "Step 2 (unknown kind): `kind` is null"),
    ("attention", "Step 2 (unknown kind): a step must be an object"),
    ({"kind": "view", "lesson": "Attention!"}, 'Step 2 (lesson view): `lesson` "Attention!" is not a lesson'),
    ({"kind": "view", "lesson": "attention", "params": {"step": -1}}, "Step 2 (lesson view): `step` is -1"),
    ({"kind": "view", "lesson": "attention", "params": {"deck": "x"}}, "may not set `deck`"),
    ({"kind": "view", "lesson": "attention", "params": [1]}, "`params` must be an object"),
    ({"kind": "view", "lesson": "attention", "colour": "red"}, "Step 2 (lesson view): unknown field `colour`"),
    ({"kind": "prediction", "key": "attention-rows"}, "Step 2 (lesson prediction): `sentence` is missing"),
    ({"kind": "prediction", "key": "attention-rows", "sentence": "a", "model": "gpt"}, '`model` is "gpt"'),
    ({"kind": "prediction", "key": "attention-rows", "sentence": "a" * 201}, "201 characters long"),
    ({"kind": "quiz", "generator": "masking_split"}, "Step 2 (quiz question): `seed` must be a whole number"),
    ({"kind": "quiz", "generator": "masking_split", "seed": 1.5}, "`seed` must be a whole number"),
    ({"kind": "quiz", "generator": "masking_split", "seed": True}, "`seed` must be a whole number"),
    ({"kind": "typed", "prompt": "Q?", "options": ["a"], "right": 1}, "Step 2 (typed): Give at least 2 options"),
    ({"kind": "typed", "prompt": "Q?", "options": ["a", "b"], "right": 3}, "Step 2 (typed): Say which option"),
    ({"kind": "typed", "prompt": "", "options": ["a", "b"], "right": 1}, "Type the question first"),
    ({"kind": "typed", "prompt": "Q?", "options": ["a", "A"], "right": 1}, "Two options read the same"),
    ({"kind": "typed", "prompt": "Q?", "options": ["a", ""], "right": 1}, "option 2 is empty"),
    ({"kind": "typed", "prompt": "Q?", "options": "a\nb", "right": 1}, "`options` must be a list"),
    ({"kind": "typed", "prompt": "Q?", "options": ["a", "b"]}, "`right` must be a whole number"),
]


@pytest.mark.parametrize("bad, said", BAD_STEPS, ids=[str(i) for i in range(len(BAD_STEPS))])
def test_one_bad_step_refuses_the_whole_deck_and_names_it(bad, said):
    steps = [GOOD_STEPS[0], bad, GOOD_STEPS[2]]
    with pytest.raises(BadDeck) as err:
        import_deck(json.dumps(a_file(steps)), KNOWN)
    assert said in str(err.value) and "not imported" in str(err.value)


@pytest.mark.parametrize(
    "raw, said",
    [
        ("{not json", "not JSON"),
        (b"\xff\xfe", "not text"),
        (json.dumps({"title": "x", "steps": []}), "not a deck file"),
        (json.dumps({**a_file(), "version": 2}), "version is 2"),
        (json.dumps({**a_file(), "steps": []}), "no steps"),
        (json.dumps(a_file([GOOD_STEPS[0]] * (MAX_STEPS + 1))), f"at most {MAX_STEPS}"),
        (json.dumps({**a_file(), "title": 7}), "title"),
    ],
)
def test_a_file_that_is_not_a_deck_says_why(raw, said):
    with pytest.raises(BadDeck, match=said):
        parse(raw)


def test_a_step_naming_what_the_app_lacks_is_flagged_and_an_import_refuses_it():
    steps = [
        GOOD_STEPS[0],
        {"kind": "view", "lesson": "retired"},
        {"kind": "prediction", "key": "gone", "sentence": "a b"},
        {"kind": "quiz", "generator": "nope", "seed": 1},
    ]
    deck = parse(a_file(steps))  # a deck saved before: it still opens, all four steps kept
    found = problems(deck, KNOWN)
    assert [(p.number, p.kind) for p in found] == [(2, "view"), (3, "prediction"), (4, "quiz")]
    assert str(found[0]) == "Step 2 (lesson view): the lesson `retired` is not one of this app's lessons."
    assert len(deck.steps) == 4
    with pytest.raises(BadDeck, match=r"Step 2 \(lesson view\).*Step 3 \(lesson prediction\).*not imported"):
        import_deck(a_file(steps), KNOWN)


def test_a_deck_of_200_steps_reads_checks_and_round_trips():
    steps = [GOOD_STEPS[i % 4] for i in range(200)]
    deck = import_deck(json.dumps(a_file(steps)), KNOWN)
    assert len(deck.steps) == 200 and import_deck(deck.to_json(), KNOWN) == deck


def test_a_pasted_lesson_link_becomes_a_view():
    step = view_from_link("http://localhost:8501/attention?sentence=the%20bird%20sang&layer=1&head=2&step=3&lecture=1")
    assert step == ViewStep("attention", {"sentence": "the bird sang", "layer": 1, "head": 2, "step": 3})
    assert view_from_link("/padding") == ViewStep("padding", {})
    assert step_title(step, {"attention": "Attention"}) == "Attention, step 4 on “the bird sang”"
    for bad in ("", "http://host/", "http://host/Attention?x=1", "http://host/attention?step=-3"):
        with pytest.raises(BadDeck):
            view_from_link(bad)
    with pytest.raises(BadDeck, match="8,001 characters long"):
        view_from_link("/attention?sentence=" + "a" * (8001 - len("/attention?sentence=")))


def test_deck_ids_are_checked():
    assert parse_deck_id("ABCDEF012345") == "abcdef012345"
    for bad in (None, "", "xyz", "abcdef01234", "abcdef0123456", "abcdef01234g"):
        assert parse_deck_id(bad) is None


def test_the_store_keeps_a_deck_by_its_id(store):
    deck = import_deck(a_file([GOOD_STEPS[i % 4] for i in range(200)]), KNOWN)
    deck_id = store.save_deck(deck)
    assert deck_id == deck.id and store.save_deck(deck) == deck_id  # saved twice: one row, one link
    assert store.load_deck(deck_id) == deck
    assert store.load_deck("0" * 12) is None


def test_a_room_keeps_the_deck_its_lecturer_presents_and_its_step(store):
    room, _ = store.open_room(1)
    other, _ = store.open_room(2)
    assert store.deck_place(room.code) is None
    store.set_deck_place(room.code, "0123456789ab", 3)
    assert store.deck_place(room.code) == ("0123456789ab", 3) and store.deck_place(other.code) is None
    store.set_deck_place(room.code, "0123456789ab", 0)  # step 1: a place, not "no deck"
    assert store.deck_place(room.code) == ("0123456789ab", 0)
    store.set_deck_place(room.code, None, None)  # the lecturer closed the deck
    assert store.deck_place(room.code) is None


def test_a_room_table_from_before_decks_gets_the_deck_columns(tmp_path):
    from old_databases import ROOM, first_release_database

    from classroom.store import RoomStore

    url = first_release_database(tmp_path, ROOM)
    store = RoomStore(url)
    room, _ = store.open_room(5)
    store.set_deck_place(room.code, "0123456789ab", 2)
    assert store.deck_place(room.code) == ("0123456789ab", 2)


def test_a_prediction_step_is_listed_by_its_question_where_the_app_knows_it():
    step = PredictionStep("heads-previous-token", "the cat sat", "minilm", 0)
    titles = {"heads-previous-token": "Heads: which head looks back at the token before?"}
    listed = step_title(step, prediction_titles=titles)
    assert listed == "Heads: which head looks back at the token before? on “the cat sat”"
    assert step_title(step) == "Prediction heads-previous-token on “the cat sat”"  # a question this app lacks
