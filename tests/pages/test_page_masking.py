"""The masked-LM page in AppTest: defaults, every control, bad input, links, a missing checkpoint."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from apptest_helpers import all_text, commit_prediction, figures, open_numbers, open_page, skip_predictions
from independent import reference_draw

import ui.models
from encoder_core.lessons import masking as lesson
from encoder_core.objectives.mlm_masking import KEPT, MASKED, NOT_CHOSEN, RANDOM, exact_counts
from encoder_core.training.checkpoint import fill_mask, load_small_mlm
from ui.frame.quiz_widget import escape_md

DEFAULT_SENTENCE = "the cat sat on the mat and the dog slept on the floor"
DEFAULT_FILL = "the [MASK] sat on the mat"


@pytest.fixture(scope="module")
def trained():
    """The checkpoint the page itself loads: ui.models.CHECKPOINT_DIR follows ENCODER_LAB_MLM_CHECKPOINT,
    the shared trained_mlm fixture is always the committed one."""
    model, tokenizer, _ = load_small_mlm(ui.models.CHECKPOINT_DIR)
    return model, tokenizer


def frame(at, column: str):
    """The first dataframe on the page that has this column."""
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no table with a {column!r} column")


def draw_table(at):
    """The draw's token-by-token table, in the draw chart's numbers panel (opened here)."""
    return frame(open_numbers(at, "masking_draw"), "what happened")


def lesson_name(token: str) -> str:
    """A top-k entry as the chart names it: a word piece ("##ing") says so."""
    return token + " (word piece)" if token.startswith("##") and len(token) > 2 else token


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def no_exception(at):
    assert not at.exception, [e.value for e in at.exception]


def set_control(at, kind: str, key: str, value):
    """Set one control (key: its link name) as a student would (text_input, slider, toggle, ...), rerun, check."""
    getattr(at, kind)(key=f"masking.{key}").set_value(value).run()
    no_exception(at)
    return at


def check_draw(at, tokenizer, sentence, rate, exact, seed):
    """The table and the counts on the page are exactly mask_tokens' output for these settings."""
    ids, ref = reference_draw(tokenizer, sentence, rate, exact, seed)
    table = draw_table(at)
    assert table["input id"].tolist() == ref.inputs[0].tolist()
    assert table["label"].tolist() == ref.labels[0].tolist()
    assert table["original id"].tolist() == ids[0].tolist()
    counts = ref.counts()
    m = metrics(at)
    assert (m["eligible"], m["chosen"], m["[MASK]"], m["random token"], m["kept"]) == tuple(
        str(v) for v in (counts.eligible, counts.chosen, counts.masked, counts.random, counts.kept)
    )
    if exact:
        assert counts == exact_counts(counts.eligible, rate)
    return ref


def test_defaults(trained, minilm_mlm):
    model, tokenizer = trained
    at = open_page("masking")
    no_exception(at)
    ref = check_draw(at, tokenizer, DEFAULT_SENTENCE, 0.15, True, 0)
    figs = figures(at)

    # The draw, drawn: a cell per position, its colour code its fate in mask_tokens' result, the input on row 2.
    table, drawn = draw_table(at), figs["masking_draw"]["data"][0]
    fate_of_action = {NOT_CHOSEN: "not_chosen", MASKED: "masked", RANDOM: "random", KEPT: "kept"}
    fates = [
        lesson.FATES.index(fate_of_action[a] if eligible else "never_eligible")
        for a, eligible in zip(ref.actions[0].tolist(), ref.eligible[0].tolist())
    ]
    assert np.asarray(drawn["z"]).tolist() == [fates, fates]
    assert list(drawn["text"][1]) == table["model receives"].tolist()
    assert fates.count(lesson.FATES.index("masked")) == ref.counts().masked and ref.counts().chosen > 0
    assert (table["what happened"] == "[MASK]").sum() == ref.counts().masked
    never = [w for w in table["what happened"] if w.startswith("never")]
    assert never == ["never eligible: [CLS]", "never eligible: [SEP]"]

    # The loss bars: the chosen positions' mean is PyTorch's cross_entropy(ignore_index=-100) on the same logits
    # (float32: each is a logsumexp over 30,522 scores, summed in a different order, so they can differ by ~1e-5).
    with torch.no_grad():
        logits, _ = model(ref.inputs)
    expected = float(F.cross_entropy(logits[0], ref.labels[0], ignore_index=-100))
    counted, ignored, right, wrong = figs["masking_loss"]["data"]
    assert len(counted["x"]) == 2 and len(ignored["x"]) == 13
    assert np.mean(counted["y"]) == pytest.approx(expected, rel=1e-5, abs=5e-5)
    assert np.all(ignored["y"] == 0) and set(ignored["text"]) == {"ignored"}
    assert right["y"][0] == pytest.approx(expected, rel=1e-5, abs=5e-5)
    assert wrong["y"][0] == pytest.approx(np.sum(counted["y"]) / 15, rel=1e-5)
    assert metrics(at)["mean over the 2 chosen positions"] == f"{right['y'][0]:.4f}"

    # Seed 004's count: six positions, two hidden, the mean over two.
    c_bars, i_bars, c_right, _ = figs["masking_count_example"]["data"]
    assert len(c_bars["x"]) == 2 and len(i_bars["x"]) == 4
    assert c_right["y"][0] == pytest.approx(np.mean(c_bars["y"]), rel=1e-6)

    # The worked count: 200 -> 30 -> 24 / 3 / 3.
    assert [float(t["x"][0]) for t in figs["masking_split"]["data"]] == [24, 3, 3, 170]
    assert "**30** chosen" in all_text(at)

    # Fill-mask, from MiniLM under the lab's head (no sidebar change): the default sentence's top five,
    # as fill_mask gives them, then every other word together.
    filler, filler_tok, _ = minilm_mlm
    (top,) = fill_mask(filler, filler_tok, "the [MASK] sat on the mat")
    bars = figs["fill_0"]["data"][0]
    assert list(bars["y"])[::-1] == [lesson_name(w) for w, _ in top] + ["all other words"]
    assert np.allclose(bars["x"][::-1][:5], [p for _, p in top], atol=1e-6)
    assert "Answered by **all-MiniLM-L6-v2 with the lab's MLM head**" in all_text(at)
    assert bars["x"][0] == pytest.approx(1 - sum(p for _, p in top), abs=1e-5)  # the whole vocabulary sums to 1

    # Shapes read from the tensors: (1, 15) -> (1, 15, D) -> (1, 15, V) -> (2, V).
    D, V = model.config.d_model, tokenizer.vocab_size
    shapes = frame(at, "tensor")["shape"].tolist()
    assert shapes == ["(1, 15)", f"(1, 15, {D})", f"(1, 15, {V})", f"(2, {V})"]

    # Next-sentence pairs: half real continuations, encoded as [CLS] A [SEP] B [SEP].
    nsp = frame(at, "sentence B")
    assert (nsp["label"] == "IsNext").sum() == len(nsp) // 2
    assert all(s.startswith("[CLS]") and s.endswith("[SEP]") for s in nsp["model input"])
    assert "Check yourself" in [h.value for h in at.subheader]
    assert dict(at.query_params) == {"all": "1"}  # nothing but the every-section view the test asked for


def test_every_control(trained):
    _, tokenizer = trained
    at = open_page("masking")
    sentence = "the old dog ran to the park and the girl played with the red ball in the garden"
    for kind, key, value, settings in (
        ("text_input", "mlm_sentence", sentence, (0.15, True, 0)),
        ("slider", "mlm_rate", 0.5, (0.5, True, 0)),
        ("toggle", "mlm_exact", False, (0.5, False, 0)),
        ("number_input", "mlm_seed", 41, (0.5, False, 41)),
    ):
        # a new draw asks the loss question again; its labels are drawn once it is answered (here skipped)
        check_draw(skip_predictions(set_control(at, kind, key, value)), tokenizer, sentence, *settings)
    # Draw again: a new pattern, and the seed in the link moves with it.
    skip_predictions(next(b for b in at.button if b.label == "Draw again").click().run())
    no_exception(at)
    assert at.session_state["masking.mlm_seed"] == 42
    check_draw(at, tokenizer, sentence, 0.5, False, 42)
    set_control(at, "number_input", "mlm_n", 1000)
    worked = exact_counts(1000, 0.5)
    assert [float(t["x"][0]) for t in figures(at)["masking_split"]["data"]] == [
        worked.masked,
        worked.random,
        worked.kept,
        1000 - worked.chosen,
    ]
    skip_predictions(set_control(at, "text_input", "fill_sentence", "the [MASK] swam in the [MASK]"))
    assert {"fill_0", "fill_1"} <= set(figures(at))
    skip_predictions(set_control(at, "selectbox", "fill_position", 3))  # hide "swam" as well: a new question
    assert {"fill_0", "fill_1", "fill_2"} <= set(figures(at))
    assert any("'swam' is choice" in c.value for c in at.caption)
    assert dict(at.query_params) == {
        "all": "1",
        "mlm_sentence": sentence,
        "mlm_rate": "0.5",
        "mlm_exact": "0",
        "mlm_seed": "42",
        "mlm_n": "1000",
        "fill_sentence": "the [MASK] swam in the [MASK]",
        "fill_position": "3",
    }


def test_bad_input():
    at = open_page("masking", query={"mlm_rate": "0"})
    no_exception(at)
    text = all_text(at)
    assert "Nothing was chosen" in text and "no positions to average" in text
    assert metrics(at)["mean over the 0 chosen positions"] == "undefined"
    assert len(figures(at)["masking_loss"]["data"]) == 1  # grey bars only, no mean lines

    at.slider(key="masking.mlm_rate").set_value(1.0).run()
    no_exception(at)
    assert metrics(at)["chosen"] == metrics(at)["eligible"] == "13"

    at.text_input(key="masking.mlm_sentence").input("[CLS] [SEP]").run()
    no_exception(at)
    assert "no ordinary token to choose" in all_text(at)
    assert metrics(at)["eligible"] == "0"

    at.text_input(key="masking.mlm_sentence").input("the 🙂 <b>cat</b> sat").run()
    no_exception(at)
    table = draw_table(at)
    assert "never eligible: [UNK]" in table["what happened"].tolist()
    assert "🙂" in all_text(at)  # named in the [UNK] note

    at.text_input(key="masking.mlm_sentence").input("   ").run()
    no_exception(at)
    assert "shows the example instead" in all_text(at)

    skip_predictions(at.text_input(key="masking.fill_sentence").input("the cat sat on the mat").run())
    no_exception(at)
    assert "There is no \\[MASK\\] in your sentence, so its last word, “mat”, is hidden" in all_text(at)
    assert "fill_0" in figures(at) and any("'mat' is choice" in c.value for c in at.caption)
    skip_predictions(at.text_input(key="masking.fill_sentence").input("[MASK] [MASK] [MASK]").run())
    no_exception(at)
    assert {"fill_0", "fill_1", "fill_2"} <= set(figures(at))


def test_link_sets_every_control_and_bad_values_give_notices():
    query = {
        "mlm_sentence": "a fox ran home",
        "mlm_rate": "0.4",
        "mlm_exact": "0",
        "mlm_seed": "9",
        "mlm_n": "50",
        "fill_sentence": "a fox [MASK] home",
        "fill_position": "2",
    }
    at = open_page("masking", query=query)
    no_exception(at)
    state = {k: at.session_state[f"masking.{k}"] for k in query}
    assert state == {
        "mlm_sentence": "a fox ran home",
        "mlm_rate": 0.4,
        "mlm_exact": False,
        "mlm_seed": 9,
        "mlm_n": 50,
        "fill_sentence": "a fox [MASK] home",
        "fill_position": 2,
    }
    assert "**20** chosen" in all_text(at)  # 50 at 0.4

    bad = open_page(
        "masking", query={"mlm_rate": "lots", "mlm_seed": "-3", "mlm_exact": "maybe", "fill_position": "99"}
    )
    no_exception(bad)
    notice = " ".join(w.value for w in bad.warning)
    assert "mlm_rate" in notice and "mlm_seed" in notice and "mlm_exact" in notice
    assert bad.session_state["masking.mlm_rate"] == 0.15 and bad.session_state["masking.mlm_seed"] == 0
    assert bad.session_state["masking.fill_position"] == 6  # clamped to the last word of the default sentence


@pytest.mark.parametrize("damage", ["missing", "edited"])
def test_broken_checkpoint_keeps_the_masking_table(monkeypatch, tmp_path, damage):
    folder = tmp_path / "small_mlm"
    if damage == "edited":  # a copy whose vocabulary no longer matches its recorded SHA-256
        shutil.copytree(ui.models.CHECKPOINT_DIR, folder)
        with open(folder / "vocab.txt", "a", encoding="utf-8") as f:
            f.write("extra\n")
    monkeypatch.setattr(ui.models, "CHECKPOINT_DIR", str(folder))
    at = open_page("masking")
    no_exception(at)
    message = " ".join(e.value for e in at.error)
    assert "python -m scripts.train" in message
    if damage == "missing":
        assert str(folder / "SHA256SUMS") in message
    else:
        assert str(folder / "vocab.txt") in message and "SHA-256" in message
    assert len(draw_table(at)) == 15
    assert "masking_split" in figures(at) and "masking_loss" not in figures(at)
    assert "needs a trained model" in all_text(at)


def test_lecture_mode_steps_through_sections():
    at = open_page("masking", query={"lecture": "1"})
    no_exception(at)
    headings = [h.value for h in at.subheader]
    assert any(h.startswith("Step 1 of 7: Choose, corrupt, label") for h in headings)
    assert "masking_split" in figures(at) and "masking_loss" not in figures(at)
    assert any(c.label == "Sentence" for c in at.text_input)  # the controls stay at the top
    at.button(key="lecture_next").click().run()
    no_exception(at)
    assert any(h.startswith("Step 2 of 7: Follow the shapes") for h in (h.value for h in at.subheader))
    assert "masking_split" not in figures(at)
    assert at.session_state["step"] == 1 and at.query_params["step"] == "1"


def test_leakage_button_trains_once_and_shows_both_runs():
    # Ten steps keep the test short; the page's default is 300.
    at = open_page("masking", query={"leak_steps": "10", "seed": "3"})
    no_exception(at)
    assert "leakage_accuracy" not in figures(at)
    at.button(key="leak_train").click().run(timeout=180)
    no_exception(at)
    result = ui.models.cached_leakage(10, 3)
    assert result is not None and result.steps == 10 and result.seed == 3
    acc = figures(at)["leakage_accuracy"]["data"]
    assert [t["name"] for t in acc] == ["correct masking", "leaky: answer left in the input"]
    assert np.allclose(acc[1]["y"], lesson.running_mean(result.leaky.accuracy, 10))
    assert np.allclose(acc[0]["y"], lesson.running_mean(result.correct.accuracy, 10))
    m = metrics(at)
    assert m["fill-mask top-5, leaky"] == f"{result.leaky.held_out_top5:.1%}"
    # Kept for everyone: the next run shows the result without training again.
    at.run()
    no_exception(at)
    assert "leakage_accuracy" in figures(at)
    assert not any(b.key == "leak_train" for b in at.button)
    assert ui.models.cached_leakage(10, 3) is result


SAYS = {
    "small": "The seeded small model has random weights and no masked-language-model head",
    "mlm": "This lesson runs on the lab's trained MLM, as the sidebar says.",
    "minilm": "This lesson runs on all-MiniLM-L6-v2 with the lab's MLM head, the best guesser here.",
}


@pytest.mark.parametrize("choice", ["small", "mlm", "minilm"])
def test_the_lesson_says_which_model_fills_in_the_blanks(choice):
    at = open_page("masking", {"model": choice})
    no_exception(at)
    text = all_text(at)
    assert [said for said in SAYS.values() if said in text] == [SAYS[choice]]
    assert ("Fill in the blank, below, has its own choice of model." in text) == (choice != "minilm")
    # Whatever the sidebar says, the fill-in-the-blank is MiniLM's until asked otherwise.
    assert "Answered by **all-MiniLM-L6-v2 with the lab's MLM head**" in text


def test_minilm_fills_in_with_the_labs_head(minilm_mlm):
    """Picked in the sidebar, MiniLM under the lab's head guesses: the chart is its own fill_mask."""
    model, tokenizer, _ = minilm_mlm
    at = open_page("masking", {"model": "minilm", "fill_sentence": "she put her money in the [MASK]."})
    no_exception(at)
    (top,) = fill_mask(model, tokenizer, "she put her money in the [MASK].")
    bars = figures(at)["fill_0"]["data"][0]
    assert list(bars["y"])[::-1] == [w for w, _ in top] + ["all other words"]
    assert np.allclose(bars["x"][::-1][:5], [p for _, p in top], atol=1e-6)
    assert "bank" in list(bars["y"])
    assert "d=384, 6 layers" in all_text(at)


def test_a_broken_minilm_head_falls_back_to_the_small_mlm(monkeypatch, tmp_path):
    monkeypatch.setattr(ui.models, "MINILM_MLM_DIR", str(tmp_path / "nowhere"))
    at = open_page("masking", {"model": "minilm"})
    no_exception(at)
    warning = " ".join(w.value for w in at.warning)
    assert "so this lesson runs on the lab's MLM" in warning and "make train-minilm" in warning
    assert "This lesson runs on the lab's trained MLM." in all_text(at)
    assert "Answered by **the lab's small trained MLM**" in all_text(at)
    assert "(all-MiniLM-L6-v2 with the lab's MLM head could not be loaded.)" in all_text(at)
    assert "fill_0" in figures(at)


# ---- the fixes: long text, a link's word past the sentence ----


def test_a_long_sentence_is_cut_with_a_notice_not_ignored():
    at = open_page("masking")
    long_text = "a fox ran home " * 200  # 3,000 characters
    at.text_input(key="masking.mlm_sentence").input(long_text).run()
    no_exception(at)
    notices = " ".join(w.value for w in at.warning)
    assert "“Sentence” was 3,000 characters long: the lesson keeps the first 2,000." in notices
    assert at.session_state["masking.mlm_sentence"] == long_text[:2000]
    assert draw_table(at)["original token"].tolist()[1:5] == ["a", "fox", "ran", "home"]  # the new text, drawn
    at.text_input(key="masking.fill_sentence").input("the [MASK] " * 300).run()
    no_exception(at)
    assert "“Sentence with [MASK]” was 3,300 characters long" in " ".join(w.value for w in at.warning)
    assert at.session_state["masking.fill_sentence"] == ("the [MASK] " * 300)[:2000]


def test_a_linked_word_past_the_sentence_says_what_is_used():
    at = open_page("masking", query={"fill_position": "999"}, skip=False)  # the notice belongs to the first run
    no_exception(at)
    notices = [w.value for w in at.warning]
    assert "`fill_position=999` is outside this sentence's 0–6; using 6." in notices
    assert not any("512" in n or "could not be used" in n for n in notices)  # no first, wrong notice
    assert at.session_state["masking.fill_position"] == 6 and at.selectbox(key="masking.fill_position").value == 6
    assert "the [MASK] sat on the [MASK]" in all_text(at)  # word 6, "mat", is the one hidden
    at.text_input(key="masking.fill_sentence").input("a [MASK] ran").run()  # a shorter sentence: word 6 is gone too
    assert "`fill_position=6` is outside this sentence's 0–3; using 3." in [w.value for w in at.warning]
    assert at.session_state["masking.fill_position"] == 3


# ---- predict, then see: the questions the lesson asks before it shows ----

LOSS, FILL = "masking-loss", "masking-fill"
CHOSEN = "The chosen ones: [MASK], random and kept"
ONLY_MASKS = "Only the positions that became [MASK]"
A_RANDOM_DRAW = {"mlm_rate": "0.5", "mlm_seed": "7"}  # six [MASK]s and one random word on the default sentence


def open_asking(query: dict | None = None):
    """The page as a student first meets it: every section, no prediction committed."""
    return open_page("masking", query, skip=False)


def commit(at, key: str, guess: str | None):
    commit_prediction(at, key, guess, typed=key == FILL)
    no_exception(at)
    return at


def ranking_by_hand(model, tokenizer, text=DEFAULT_FILL):
    """Every vocabulary entry at the first [MASK], most likely first: fill_mask over the whole vocabulary."""
    return fill_mask(model, tokenizer, text, top_k=tokenizer.vocab_size)[0]


def test_before_a_commit_neither_reveal_is_drawn():
    at = open_asking()
    no_exception(at)
    drawn = set(figures(at))
    assert {"masking_draw", "masking_split"} <= drawn  # the draw itself is shown first
    assert not {"masking_loss", "masking_count_example", "fill_0"} & drawn
    text = all_text(at)
    assert "Labelled (not -100)" not in text and "mean over the" not in text and "is choice" not in text
    assert at.radio(key=f"_predict_guess_{LOSS}").value is None
    assert at.text_input(key=f"_predict_guess_{FILL}").value == ""


def test_a_right_loss_prediction_shows_the_labelled_positions_and_the_loss(trained):
    _, tokenizer = trained
    at = commit(open_asking(A_RANDOM_DRAW), LOSS, CHOSEN)
    assert "Right." in [s.value for s in at.success]
    _, ref = reference_draw(tokenizer, DEFAULT_SENTENCE, 0.5, True, 7)
    chosen = [t for t, a in enumerate(ref.actions[0].tolist()) if a != NOT_CHOSEN]
    labelled = [t for t, label in enumerate(ref.labels[0].tolist()) if label != -100]
    assert chosen == labelled and ref.counts().random == 1
    assert f"**{', '.join(map(str, chosen))}** of 0–14: the 7 chosen (6 [MASK], 1 random, 0 kept)" in all_text(at)
    assert "masking_loss" not in figures(at)  # the next question, where the loss is largest, comes first
    counted = figures(skip_predictions(at))["masking_loss"]["data"][0]
    assert len(counted["x"]) == len(chosen)


def test_a_wrong_loss_prediction_names_its_misconception():
    at = commit(open_asking(A_RANDOM_DRAW), LOSS, ONLY_MASKS)
    errors = " ".join(e.value for e in at.error)
    assert f"the model says “{CHOSEN}”" in errors
    assert "kept its own, is labelled with its original word too" in all_text(at)
    assert "masking_loss" in figures(skip_predictions(at))


def test_a_draw_that_cannot_tell_masked_from_chosen_accepts_both():
    at = commit(open_asking(), LOSS, ONLY_MASKS)  # the default draw: two chosen, both [MASK]
    assert any(s.value.startswith("Right on this draw") for s in at.success) and not at.error


def test_a_new_draw_asks_again_and_skip_reveals_without_a_score():
    at = commit(open_asking(), LOSS, CHOSEN)
    assert "masking_loss" in figures(at)
    next(b for b in at.button if b.label == "Draw again").click().run()
    assert "masking_loss" not in figures(at) and at.radio(key=f"_predict_guess_{LOSS}").value is None
    at.button(key=f"_predict_skip_{LOSS}").click().run()
    assert "masking_loss" in figures(skip_predictions(at)) and not at.success and not at.error


def test_a_commit_with_nothing_chosen_or_typed_reveals_nothing():
    at = commit(open_asking(), LOSS, None)
    assert "Choose an answer first" in all_text(at) and "masking_loss" not in figures(at)
    at = commit(at, FILL, None)
    assert "fill_0" not in figures(at)
    at = commit(at, FILL, "   ")  # spaces are not a word
    assert "fill_0" not in figures(at)


def test_the_models_first_choice_is_right_with_its_probability(minilm_mlm):
    model, tokenizer, _ = minilm_mlm
    ranking = ranking_by_hand(model, tokenizer)
    word, p = ranking[0]
    at = commit(open_asking(), FILL, word.upper())  # the tokenizer lower-cases, as it does a sentence
    assert f"Right: “{word.upper()}” is the model's choice 1 of {tokenizer.vocab_size:,} (probability {p:.1%})." in [
        s.value for s in at.success
    ]
    bars = figures(at)["fill_0"]["data"][0]
    assert list(bars["y"])[::-1][:5] == [lesson_name(w) for w, _ in ranking[:5]]


def test_any_other_word_gets_its_rank_and_the_first_choice_and_is_not_a_miss(minilm_mlm):
    model, tokenizer, _ = minilm_mlm
    ranking = ranking_by_hand(model, tokenizer)
    # The first plain word well outside the top five, far from its neighbours' probabilities.
    rank, word = next(
        (r, w)
        for r, (w, p) in enumerate(ranking, start=1)
        if r > 30 and w.isalpha() and ranking[r - 2][1] > p * 1.001 > p > ranking[r][1] * 1.001
    )
    at = commit(open_asking(), FILL, word)
    said = " ".join(s.value for s in at.success)
    assert not at.error and f"“{word}” is the model's choice {rank:,} of {tokenizer.vocab_size:,}" in said
    assert f"The model's first choice is “{ranking[0][0]}” ({ranking[0][1]:.1%})." in said
    assert "Not counted as a miss" in said and "fill_0" in figures(at)
    second = ranking[1][0]  # its second choice, in the top five, is not called right either, nor wrong
    at = commit(open_asking(), FILL, second)
    assert any("choice 2 of" in s.value and "Not counted as a miss" in s.value for s in at.success)


def test_a_guess_that_is_not_one_token_is_explained_and_a_new_sentence_asks_again(minilm_mlm):
    _, tokenizer, _ = minilm_mlm
    pieces = [p for _, ps in tokenizer.split_words("doormat") for p in ps]
    assert len(pieces) > 1
    at = commit(open_asking(), FILL, "doormat")
    said = " ".join(s.value for s in at.success)
    assert not at.error and "Not counted as a miss" in said
    assert "“doormat” is not one token of the model's vocabulary" in said
    assert f"it reads it as {escape_md(' '.join(pieces))}." in said
    assert "fill_0" in figures(at)
    at.text_input(key="masking.fill_sentence").input("the dog [MASK] home").run()
    assert "fill_0" not in figures(at) and at.text_input(key=f"_predict_guess_{FILL}").value == ""


def test_the_draw_charts_are_built_once_for_every_student_with_the_same_settings(monkeypatch):
    """The draw's chart is kept for every session on the same sentence and settings, the worked count's for every
    session on the same N and rate; another seed draws (and builds) its own, from its own draw."""
    from ui.views import masking as views

    draws, splits = [], []
    draw_chart, split_chart = views.draw_chart, views.split_chart

    def counted_draw(draw, labels=True):
        draws.append((tuple(draw.tokens), draw.seed))
        return draw_chart(draw, labels)

    def counted_split(worked, rate):
        splits.append((worked.eligible, rate))
        return split_chart(worked, rate)

    monkeypatch.setattr(views, "draw_chart", counted_draw)
    monkeypatch.setattr(views, "split_chart", counted_split)
    query = {"mlm_sentence": "the old teacher sang in the small river park", "mlm_n": "4321", "mlm_seed": "17"}
    first = open_page("masking", query=query, every_section=False)
    second = open_page("masking", query=query, every_section=False)
    _, mlm_tok, _ = load_small_mlm()
    assert draws.count((tuple(mlm_tok.encode(query["mlm_sentence"]).tokens), 17)) == 1
    assert splits.count((4321, 0.15)) == 1
    for key, field in (("masking_draw", "z"), ("masking_split", "x")):
        np.testing.assert_array_equal(figures(first)[key]["data"][0][field], figures(second)[key]["data"][0][field])
    second.number_input(key="masking.mlm_seed").set_value(18).run()
    assert [d for d in draws if d[1] == 18]
    want = lesson.draw_masks(mlm_tok, mlm_tok.encode(query["mlm_sentence"]).ids, rate=0.15, exact=True, seed=18)
    drawn = figures(second)["masking_draw"]["data"][0]["text"][1]
    assert list(drawn) == want.input_tokens
    assert not first.exception and not second.exception
