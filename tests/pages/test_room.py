"""The room page's peer-instruction states as AppTests, each named: no room, a typed or bad code, waiting,
vote 1 open (the count only), closed with each suggestion, vote 2, the reveal (the shift and the model's
chart), the transfer question, the export, a tap after the close, a bad typed question, the public link."""

from __future__ import annotations

import io

import apptest_helpers as helpers
import numpy as np
import pandas as pd
import pytest
from apptest_helpers import no_exception, plain
from streamlit.testing.v1 import AppTest

from classroom.codes import new_student_id, shown_code
from classroom.links import PUBLIC_URL_VAR
from classroom.questions import typed
from encoder_core.lessons import attention as attention_core
from ui.room.phone import BETWEEN, WAITING

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fresh_limiter")]
QUESTION = typed("Which mask hides later tokens?", "bidirectional\ncausal\nnone\nboth", 2)  # B is right


def lecturer(code: str, key: str) -> AppTest:
    return no_exception(helpers.open_linked("room", {"room": code, "key": key}, every_section=False))


def presenter(code: str, key: str) -> AppTest:
    """The lecturer's private view (the distribution and the suggestion), as the lecturer link opens it."""
    return no_exception(
        helpers.open_linked("room", {"room": code, "key": key, "view": "presenter"}, every_section=False)
    )


def phone(code: str) -> AppTest:
    return no_exception(helpers.open_linked("room", {"room": code}, every_section=False))


def vote_buttons(at: AppTest) -> list:
    return [b for b in at.button if str(b.key or "").startswith("room_vote_")]


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def votes(store, code, rnd, vote: int, options: list[int]) -> None:
    for option in options:
        assert store.vote(code, rnd.id, vote, new_student_id(), option) == "recorded"


def test_no_room_offers_to_join_by_code_and_to_open_one():
    at = no_exception(helpers.open_linked("room", None, every_section=False))
    assert [t.label for t in at.text_input] == ["Room code"]
    assert at.number_input(key="room_quiz_seed") is not None and at.button(key="room_open")


def test_a_typed_code_joins_the_room_and_waits_for_the_first_question(database):
    room, _ = database.open_room(1)
    at = no_exception(helpers.open_linked("room", None, every_section=False))
    at.text_input(key="room_code_typed").input(f" {shown_code(room.code).lower()} ")
    at = no_exception(at.button(key="room_join").click().run())
    assert WAITING in plain(at) and not vote_buttons(at)
    assert database.joined(room.code) == 1


@pytest.mark.parametrize("raw", ["ZZZZ-ZZZZ", "abc", "<script>alert(1)</script>", "A" * 500, "'; DROP TABLE room;--"])
def test_a_bad_or_unknown_code_says_so_and_offers_the_forms_again(raw):
    at = no_exception(helpers.open_linked("room", None, every_section=False))
    at.text_input(key="room_code_typed").input(raw[:40])
    at = no_exception(at.button(key="room_join").click().run())
    assert at.warning and at.text_input(key="room_code_typed") is not None
    linked = no_exception(helpers.open_linked("room", {"room": raw}, every_section=False))
    assert linked.warning and linked.button(key="room_open")


def asking(database, source: str):
    """A new room and its lecturer's view with the question's source chosen: "typed" or "lesson"."""
    room, key = database.open_room(1)
    teacher = lecturer(room.code, key)
    teacher.radio(key="room_source").set_value(source)
    return room, no_exception(teacher.run())


def test_vote_1_shows_the_lecturer_the_count_only_and_phones_one_tap_per_option(database):
    room, teacher = asking(database, "typed")
    teacher.text_area(key="room_typed_prompt").input(QUESTION.prompt)
    teacher.text_area(key="room_typed_options").input("\n".join(QUESTION.options))
    teacher.number_input(key="room_typed_right").set_value(QUESTION.correct + 1)
    teacher = no_exception(teacher.button(key="room_ask_typed").click().run())
    rnd = database.current_round(room.code)
    assert rnd.question == QUESTION and rnd.phase == "vote1"

    student = phone(room.code)
    buttons = vote_buttons(student)
    assert [b.label.split()[0].strip("*") for b in buttons] == ["A", "B", "C", "D"]
    assert all(b.proto.type != "primary" for b in buttons)  # nothing marked before a tap, least of all the right one
    assert "✓" not in plain(student) and QUESTION.prompt in plain(student)
    student = no_exception(buttons[0].click().run())
    assert "Vote recorded: A" in plain(student)
    student = no_exception(vote_buttons(student)[3].click().run())  # a change of mind: the last answer counts
    assert "Vote changed to D" in plain(student)
    assert [b.proto.type for b in vote_buttons(student)] == ["secondary"] * 3 + ["primary"]
    votes(database, room.code, rnd, 1, [2, 2])

    teacher = no_exception(teacher.run())
    assert metrics(teacher)["Votes in vote 1"] == "3" == str(database.vote_count(rnd.id, 1))
    assert not helpers.figures(teacher)  # no distribution drawn during a vote
    assert "✓" not in plain(teacher) and "%" not in plain(teacher).split("Votes in vote 1")[0][-200:]


def open_round(database, question=QUESTION):
    room, key = database.open_room(1)
    return room, key, database.open_round(room.code, question)


@pytest.mark.parametrize(
    ("options", "kind", "said"),
    [
        # 4 options: guessing gets 25%, so the thresholds (35% and 70% above chance) sit at 51% and 78% right
        ([1, 0, 0, 2], "reteach", "25% answered right"),
        ([1, 1, 0, 2], "reteach", "50% answered right"),
        ([1, 1, 1, 0, 2], "discuss", "60% answered right"),
        ([1, 1, 1, 1, 1, 2], "reveal", "83% answered right"),
        ([], "none", "Nobody voted"),
    ],
)
def test_closing_vote_1_suggests_the_next_step_from_the_share_correct(database, options, kind, said):
    room, key, rnd = open_round(database)
    votes(database, room.code, rnd, 1, options)
    screen = no_exception(lecturer(room.code, key).button(key="room_close_vote_1").click().run())
    assert database.current_round(room.code).phase == "between"
    assert not helpers.figures(screen) and said not in plain(screen)  # the projected screen: the count only
    teacher = presenter(room.code, key)
    assert teacher.session_state["_room_suggestion"] == kind and said in plain(teacher)
    assert BETWEEN in plain(phone(room.code))


def test_the_thresholds_are_the_lecturers_settings(database):
    room, key, rnd = open_round(database)
    votes(database, room.code, rnd, 1, [1, 0])
    teacher = presenter(room.code, key)
    teacher.slider(key="room_reteach_below").set_value(60)
    teacher = no_exception(teacher.button(key="room_close_vote_1").click().run())
    # 60% above chance on 4 options is 25% + 0.6 x 75% = 70% right
    assert teacher.session_state["_room_suggestion"] == "reteach" and "under 70%" in plain(teacher)


def test_vote_2_then_the_reveal_shows_both_votes_side_by_side(database):
    room, key, rnd = open_round(database)
    votes(database, room.code, rnd, 1, [0, 0, 2, 1])
    teacher = no_exception(lecturer(room.code, key).button(key="room_close_vote_1").click().run())
    teacher = no_exception(teacher.button(key="room_open_vote_2").click().run())
    assert metrics(teacher)["Votes in vote 2"] == "0"
    student = phone(room.code)
    assert len(vote_buttons(student)) == 4 and "vote 2" in plain(student)
    student = no_exception(vote_buttons(student)[1].click().run())
    votes(database, room.code, rnd, 2, [1, 1, 0])
    teacher = no_exception(teacher.run().button(key="room_close_vote_2").click().run())
    (spec,) = helpers.figures(teacher).values()
    drawn = {t["name"].split(" (")[0]: [round(x) for x in helpers.decode(t["x"])] for t in spec["data"]}
    assert drawn == {"vote 1": [50, 25, 25, 0], "vote 2": [25, 75, 0, 0]}
    assert spec["layout"]["title"]["text"] == "The room's answers, vote 1: 25% right, then vote 2: 75% right"
    assert "The answer: B" in plain(teacher)
    student = no_exception(student.run())
    assert "The answer: B" in plain(student) and "vote 2: B" in plain(student) and not vote_buttons(student)


def test_a_lessons_prediction_is_answered_and_proved_by_the_lessons_own_chart(database):
    room, teacher = ask_prediction(database, "attention-rows", "the bird sang in the old garden")
    rnd = database.current_round(room.code)
    from ui.models import lesson_model

    chosen = lesson_model("small", 0)
    enc = chosen.tokenizer.encode("the bird sang in the old garden")
    comparison = attention_core.compare_masks(chosen.encoder, enc.ids, 0, 0)
    from ui.questions.attention import same_rows

    asked = same_rows(attention_core.row_facts(comparison), enc.tokens)
    right = asked.options[attention_core.ROW_OUTCOMES.index(attention_core.row_outcome(comparison))].label
    assert rnd.question.options[rnd.question.correct] == right  # the options are in the round's own order
    assert rnd.question.lesson == "attention" and rnd.question.concept == "attention_identical_row"
    (asked,) = helpers.figures(teacher).values()  # the worked half only: the bidirectional grid, no causal one
    assert "causal" not in asked["layout"]["title"]["text"].lower()
    z = np.array(helpers.decode(asked["data"][0]["z"]), dtype=float)
    assert np.allclose(z, comparison.bidirectional.numpy(), atol=1e-6)
    teacher = no_exception(teacher.button(key="room_close_vote_1").click().run())
    assert any(p.label.endswith("Attention, step 1") for p in teacher.get("page_link"))
    teacher = no_exception(teacher.button(key="room_reveal").click().run())
    proofs = {k: v for k, v in helpers.figures(teacher).items() if k.startswith("room_proof_")}
    assert len(proofs) == 2
    causal = next(v for v in proofs.values() if "causal" in v["layout"]["title"]["text"].lower())
    z = np.array(helpers.decode(causal["data"][0]["z"]), dtype=float)
    assert np.allclose(z, comparison.causal.numpy(), atol=1e-6)


def test_the_transfer_question_asks_the_same_idea_anew_and_phones_follow(database):
    room, key = database.open_room(5)
    teacher = no_exception(lecturer(room.code, key).button(key="room_ask_quiz").click().run())
    first = database.current_round(room.code)
    votes(database, room.code, first, 1, [first.question.correct] * 3)
    teacher = no_exception(teacher.button(key="room_close_vote_1").click().run())
    teacher = no_exception(teacher.button(key="room_reveal").click().run())
    teacher = no_exception(teacher.button(key="room_transfer").click().run())
    second = database.current_round(room.code)
    assert second.transfer_of == first.id and second.number == 2 and second.phase == "vote1"
    assert second.question.concept == first.question.concept and second.question.prompt != first.question.prompt
    assert "Question 2 · transfer question" in plain(teacher)
    student = phone(room.code)
    assert "question 2 · vote 1" in plain(student) and vote_buttons(student)


def test_the_export_counts_every_vote_per_option_and_names_no_student(database):
    from ui.room.rounds import rounds_csv

    room, _, rnd = open_round(database)
    votes(database, room.code, rnd, 1, [0, 2, 2])
    database.advance(room.code, rnd.id, "vote1", "between")
    database.advance(room.code, rnd.id, "between", "vote2")
    votes(database, room.code, rnd, 2, [2, 2, 2, 1])
    table = pd.read_csv(io.StringIO(rounds_csv(room.code)))
    assert list(table["count"]) == [1, 0, 2, 0, 0, 1, 3, 0]
    assert list(table["vote"]) == [1] * 4 + [2] * 4
    assert list(table["share correct"]) == [0.0] * 4 + [0.25] * 4
    assert not any("student" in c for c in table.columns) and QUESTION.prompt in set(table["question"])


def test_a_tap_after_the_close_is_refused_with_a_clear_message(database):
    room, _, rnd = open_round(database)
    student = phone(room.code)
    tap = vote_buttons(student)[1]
    database.advance(room.code, rnd.id, "vote1", "between")
    student = no_exception(tap.click().run())
    assert "This vote has closed: your tap was not counted." in plain(student)
    assert database.vote_count(rnd.id, 1) == 0


@pytest.mark.parametrize(
    ("prompt", "options", "says"),
    [("", "a\nb", "Type the question first."), ("Q?", "one", "at least 2"), ("<b>Q</b>", "x\nX", "read the same")],
)
def test_a_bad_typed_question_says_what_to_change_and_opens_nothing(database, prompt, options, says):
    room, teacher = asking(database, "typed")
    teacher.text_area(key="room_typed_prompt").input(prompt)
    teacher.text_area(key="room_typed_options").input(options)
    teacher = no_exception(teacher.button(key="room_ask_typed").click().run())
    assert any(says in e.value.replace("\\", "") for e in teacher.error)
    assert database.current_round(room.code) is None


def test_the_link_and_qr_use_the_public_address(database, monkeypatch):
    monkeypatch.setenv(PUBLIC_URL_VAR, "https://lab.example.edu/encoder/")
    room, key = database.open_room(1)
    teacher = lecturer(room.code, key)
    assert f"https://lab.example.edu/encoder/room?room={room.code}" in [c.value for c in teacher.code]
    teacher.text_input(key="room_public_url").input("http://localhost:8501")
    teacher = no_exception(teacher.run())
    assert f"http://localhost:8501/room?room={room.code}" in [c.value for c in teacher.code]
    assert any("phones cannot open it" in w.value for w in teacher.warning)


def ask_prediction(database, key: str, sentence: str):
    room, teacher = asking(database, "lesson")
    teacher.selectbox(key="room_prediction").set_value(key)
    teacher.text_input(key="room_sentence").input(sentence)
    return room, no_exception(teacher.button(key="room_ask_lesson").click().run())


def test_the_mask_mismatch_prediction_runs_on_the_trained_mlm_and_reveals_its_chart(database):
    from encoder_core.lessons import tradeoffs as tradeoffs_core
    from ui.models import trained_mlm

    room, teacher = ask_prediction(database, "tradeoffs-mismatch", "the old man read the book in the garden")
    rnd = database.current_round(room.code)
    trained = trained_mlm().model
    ids = trained.tokenizer.encode("the old man read the book in the garden").ids
    words = tradeoffs_core.eligible_positions(trained.tokenizer, ids)
    mm = tradeoffs_core.mask_mismatch(trained.model, trained.tokenizer, ids, words[len(words) // 2], 0)
    from ui.questions.tradeoffs import CASE_LABELS

    assert rnd.question.options[rnd.question.correct] == CASE_LABELS[tradeoffs_core.likeliest_case(mm)]
    assert "the lab's trained MLM" in rnd.question.prompt and rnd.question.concept == "tradeoffs_mask_mismatch"
    teacher = no_exception(teacher.button(key="room_close_vote_1").click().run())
    assert any("Trade-offs and pitfalls, step 5" in p.label for p in teacher.get("page_link"))
    teacher = no_exception(teacher.button(key="room_reveal").click().run())
    (proof,) = [v for k, v in helpers.figures(teacher).items() if k.startswith("room_proof_")]
    from ui.views.tradeoffs import mismatch_chart

    lessons = mismatch_chart(mm).figure.to_plotly_json()["data"]  # the lesson's own chart of the same numbers
    assert len(proof["data"]) == len(lessons)
    for drawn, expected in zip(proof["data"], lessons, strict=True):
        assert list(drawn["x"]) == list(expected["x"])
        assert np.allclose(helpers.decode(drawn["y"]), helpers.decode(expected["y"]))


def test_a_prediction_on_a_sentence_with_no_word_says_so(database):
    room, teacher = ask_prediction(database, "tradeoffs-mismatch", "[CLS] [SEP]")
    assert any("no word the model could be asked about" in e.value for e in teacher.error)
    assert database.current_round(room.code) is None


@pytest.mark.parametrize(
    "sentence", ["", "   ", "x" * 10_000, "<script>alert(1)</script> it", "\u202eevil text", "🙂 " * 30, "[MASK] [PAD]"]
)
def test_a_hostile_sentence_still_asks_a_question_and_shows_it_as_text(database, sentence):
    room, teacher = ask_prediction(database, "attention-drop", sentence)
    rnd = database.current_round(room.code)
    assert rnd is not None and 0 <= rnd.question.correct < len(rnd.question.options)
    assert len(rnd.question.prompt) < 1_000
    assert "<script>" not in "".join(m.value for m in teacher.markdown).replace("\\<script\\>", "")
    no_exception(phone(room.code))


def test_the_padding_leak_prediction_is_answered_by_the_lessons_curve(database):
    from encoder_core.lessons import padding as padding_core
    from ui.models import lesson_model

    room, teacher = ask_prediction(database, "padding-leak", "the bird sang in the old garden")
    rnd = database.current_round(room.code)
    chosen = lesson_model("small", 0)
    batch = chosen.tokenizer.pad([chosen.tokenizer.encode("the bird sang in the old garden")])
    leak = padding_core.pad_leak(chosen.encoder, batch, 0, min_pads=padding_core.LEAK_MIN_PADS)
    from ui.questions.padding import leak_trend

    trend = padding_core.LEAK_TRENDS.index(padding_core.leak_trend(leak))
    assert rnd.question.options[rnd.question.correct] == leak_trend(padding_core.LEAK_MIN_PADS).options[trend].label
    assert rnd.question.lesson == "padding" and rnd.question.concept == "padding_leak_trend"
    teacher = no_exception(teacher.button(key="room_close_vote_1").click().run())
    teacher = no_exception(teacher.button(key="room_reveal").click().run())
    (proof,) = [v for k, v in helpers.figures(teacher).items() if k.startswith("room_proof_")]
    curves = [np.array(helpers.decode(t["y"]), dtype=float) for t in proof["data"]]
    assert any(len(y) == len(leak.curve_unmasked) and np.allclose(y, leak.curve_unmasked, rtol=1e-6) for y in curves)


def test_the_looking_inside_head_question_is_answered_by_the_knockouts(database):
    from encoder_core.lessons import inside as inside_core
    from ui.models import trained_mlm

    room, teacher = ask_prediction(database, "inside-head", "the dog slept on the [MASK] all day")
    rnd = database.current_round(room.code)
    trained = trained_mlm().model
    cloze = inside_core.prepare_cloze(trained.tokenizer, "the dog slept on the [MASK] all day")
    knock = inside_core.knockouts(trained.model, trained.tokenizer, cloze)
    effects = {
        f"layer {layer}, head {head}": float(knock.heads[layer, head]) for layer, head in np.ndindex(knock.heads.shape)
    }
    offered = rnd.question.options
    assert len(offered) == 4 and set(offered) <= set(effects)
    assert offered[rnd.question.correct] == min(offered, key=effects.get)  # the largest drop of the four
    assert rnd.question.lesson == "inside" and "token 6" in rnd.question.prompt
    teacher = no_exception(teacher.button(key="room_close_vote_1").click().run())
    teacher = no_exception(teacher.button(key="room_reveal").click().run())
    (proof,) = [v for k, v in helpers.figures(teacher).items() if k.startswith("room_proof_")]
    z = np.array(helpers.decode(proof["data"][0]["z"]), dtype=float)
    assert np.allclose(z, knock.heads.numpy(), atol=1e-6)


def test_the_block_ffn_shape_question_runs_on_the_block_lessons_model(database):
    from encoder_core.lessons import block as block_core
    from ui.models import small_model, word_tokenizer

    sentence = "the old dog slept"
    room, teacher = ask_prediction(database, "block-ffn-shape", sentence)
    rnd = database.current_round(room.code)
    model, tok = small_model(0), word_tokenizer()
    enc = tok.encode(sentence)
    walk = block_core.walk_block(model, enc.ids, enc.segments, 0)
    hidden = walk.trace["ffn_hidden"]
    assert tuple(hidden.shape) == (len(enc.tokens), walk.d_ff)
    assert rnd.question.options[rnd.question.correct].endswith(str((len(enc.tokens), walk.d_ff)))
    assert rnd.question.lesson == "block" and "small post-norm model (seed 0)" in rnd.question.prompt
    teacher = no_exception(teacher.button(key="room_close_vote_1").click().run())
    teacher = no_exception(teacher.button(key="room_reveal").click().run())
    (proof,) = [v for k, v in helpers.figures(teacher).items() if k.startswith("room_proof_")]
    z = np.array(helpers.decode(proof["data"][0]["z"]), dtype=float)
    assert z.shape == tuple(hidden.shape) and np.allclose(z, hidden.numpy(), atol=1e-5)
