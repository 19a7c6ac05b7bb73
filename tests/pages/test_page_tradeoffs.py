"""The Trade-offs page in Streamlit's AppTest: numbers drawn == encoder_core's, every tab, bad input, links."""

import apptest_helpers as helpers
import numpy as np
import pytest
from apptest_helpers import all_text, commit_nothing, figures, open_page

from encoder_core import english_tokenizer, teaching_model
from encoder_core.finetune.tasks import make_task
from encoder_core.lessons import tradeoffs as lesson
from encoder_core.training.checkpoint import load_small_mlm
from ui.questions import tradeoffs as questions
from ui.views import tradeoffs as views
from ui.views.tradeoffs import CASE_NAMES

TOK = english_tokenizer()
DEFAULT = "the cat sat on the mat and the dog slept"
TAB_FIGURES = [
    {"append_shift", "append_flops", "append_time"},
    {"length_cap"},
    {"attention_size", "attention_flops"},
    {"objectives", "loss_positions"},
    {"mask_mismatch"},
    {"masking_views"},
    {"pitfall_mask", "pitfall_pad_rows"},
    {"pitfall_mean"},
    {"pitfall_cls", "pitfall_truncation"},
    set(),  # Check yourself
]


def open_linked(query: dict, every_section: bool = True):
    return helpers.open_linked("tradeoffs", query, every_section=every_section)


def ids_of(text: str) -> list[int]:
    return TOK.encode(text, max_length=lesson.MAX_SENTENCE_TOKENS, truncate=True).ids


def assert_page_matches_core(at, text=DEFAULT, n=16, seed=0, epochs=40, model_seed=0) -> None:
    figs, ids = figures(at), ids_of(text)
    model = teaching_model(model_seed)
    reuse = lesson.append_one_token(model, ids, TOK.token_to_id["again"])
    np.testing.assert_allclose(figs["append_shift"]["data"][1]["y"], reuse.shift_bidirectional, rtol=1e-5)
    assert max(figs["append_shift"]["data"][0]["y"]) <= 1e-5
    if n:
        costs = lesson.append_costs(model, ids, n)
        np.testing.assert_allclose(figs["append_flops"]["data"][1]["y"], np.array(costs.flops_bidirectional) / 1e6)
        np.testing.assert_allclose(figs["append_flops"]["data"][0]["y"], np.array(costs.flops_cached) / 1e6)
        assert costs.flops_bidirectional[-1] == costs.closed_form[0]
    mlm, mlm_tok, _ = load_small_mlm()
    labels = lesson.objective_labels(mlm_tok, ids, seed, mlm)
    assert list(figs["loss_positions"]["data"][0]["y"]) == list(labels.counts().values())
    np.testing.assert_array_equal(np.asarray(figs["objectives"]["data"][0]["z"])[0], np.array(labels.chosen, int))
    views = lesson.masking_views(len(lesson.eligible_positions(TOK, ids)), epochs, seed)
    assert list(figs["masking_views"]["data"][2]["y"]) == views.distinct["dynamic (RoBERTa)"]
    la = lesson.loss_averaging(mlm, mlm_tok, ids, seed)
    np.testing.assert_allclose(
        figs["pitfall_mean"]["data"][1]["y"], [la.breakdown.wrong_mean_all_positions, la.grad_norm_wrong], rtol=1e-5
    )
    ex = make_task("qa").held_out[0]
    full = len(TOK.encode(ex.text_a, ex.text_b, max_length=None))
    trunc = lesson.answer_truncation(TOK, ex.text_a, ex.text_b, ex.answer, range(6, full + 1))
    assert list(figs["pitfall_truncation"]["data"][0]["y"]) == trunc.answer_kept


def test_defaults_draw_encoder_cores_numbers():
    at = open_page("tradeoffs")
    assert not at.exception
    assert set(figures(at)) == set().union(*TAB_FIGURES)
    assert_page_matches_core(at)
    text = all_text(at)
    assert "KV cache" in text and "RoBERTa" in text
    assert "Train both tiny models" in " ".join(b.label for b in at.button)


@pytest.mark.parametrize("step", range(len(TAB_FIGURES)))
def test_every_tab_opens_alone(step):
    at = open_linked({"step": str(step)}, every_section=False)
    assert not at.exception
    assert set(figures(at)) == TAB_FIGURES[step]


def test_controls_change_what_is_drawn():
    query = {"sentence": "a small dog ran to the old house in the rain", "n_append": "5", "epochs": "12",
             "mask_seed": "3", "seed": "2"}  # fmt: skip
    at = open_linked(query)
    assert not at.exception and not at.warning
    assert_page_matches_core(at, query["sentence"], n=5, seed=3, epochs=12, model_seed=2)


def test_bad_input_gets_a_message_and_a_fallback():
    at = open_linked({"sentence": " \t ", "next_word": " ", "n_append": "0"})
    assert not at.exception
    infos = " ".join(i.value for i in at.info)
    assert "empty" in infos and "N = 0" in infos and "again" in infos
    assert "append_flops" not in figures(at)
    assert_page_matches_core(at, n=0)

    at = open_linked({"sentence": "word " * 3000})
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "characters" in warnings and f"first {lesson.MAX_SENTENCE_TOKENS} tokens" in warnings
    assert len(figures(at)["append_shift"]["data"][0]["y"]) == lesson.MAX_SENTENCE_TOKENS

    at = open_linked({"sentence": "<b>x</b> <script>alert(1)</script> & zebra 🙂", "next_word": "<i>"})
    assert not at.exception
    for fig in figures(at).values():
        for trace in fig["data"]:
            for v in list(trace.get("x", [])) + list(trace.get("y", [])) + list(trace.get("text", None) or []):
                assert "<script" not in str(v) and "<b>" not in str(v)


def test_malformed_link_values_give_a_notice():
    at = open_linked({"n_append": "-3", "epochs": "lots", "word": "999"})
    assert not at.exception
    notice = " ".join(w.value for w in at.warning)
    assert "n_append" in notice and "epochs" in notice and "word" in notice


def test_lecture_mode_steps_through_the_sections():
    at = open_linked({"lecture": "1", "step": "3"})
    assert not at.exception
    assert "Step 4 of 10" in "\n".join(str(h.value) for h in at.subheader)
    assert set(figures(at)) == TAB_FIGURES[3]


@pytest.mark.slow
def test_timings_run_only_when_asked():
    at = open_linked({"step": "2"}, every_section=False)
    assert "attention_time" not in figures(at)
    at.button(key="measure_lengths").click().run(timeout=300)
    assert not at.exception
    fig = figures(at)["attention_time"]
    assert list(fig["data"][0]["x"]) == list(lesson.TIMING_LENGTHS)
    assert "log" in fig["layout"]["yaxis"]["title"]["text"]
    assert not [b for b in at.button if b.key == "measure_lengths"]  # measured once, kept


# ---- predict, then see ----

CACHE, MISMATCH = "tradeoffs-cache-saving", "tradeoffs-mask-mismatch"


def open_asking(query: dict | None = None):
    return helpers.open_linked("tradeoffs", query, skip=False)


commit = helpers.commit_prediction  # choose or type the guess, then commit


def saving(text=DEFAULT, n=16) -> float:
    return lesson.append_costs(teaching_model(0), ids_of(text), n).ratio


def mismatch(text=DEFAULT, position=2, seed=0):
    mlm, mlm_tok, _ = load_small_mlm()
    return lesson.mask_mismatch(mlm, mlm_tok, ids_of(text), position, seed)


def test_the_options_fit_what_a_choice_keeps():
    from ui.frame.predict import MAX_WORD

    q = questions.mismatch_question(2, "cat")
    assert len(q.options) == len(lesson.CASES) and all(len(o.label) <= MAX_WORD for o in q.options)


def test_before_a_commit_neither_reveal_is_drawn():
    at = open_asking()
    assert not at.exception
    figs = figures(at)
    assert "append_shift" in figs  # the first chart stays in view
    assert not {"append_flops", "append_time", "mask_mismatch"} & set(figs)
    text = all_text(at)
    assert f"{saving():.1f} times" not in text
    assert "Likeliest:" not in text and f"p(“{mismatch().original}”)" not in text
    keys = [k.key for k in at.number_input] + [r.key for r in at.radio]
    assert f"_predict_guess_{CACHE}" in keys and f"_predict_guess_{MISMATCH}" in keys


def test_a_right_cache_guess_reveals_the_counted_flops():
    ratio = saving()
    at = commit(open_asking(), CACHE, round(ratio))
    assert not at.exception
    assert any(s.value.startswith("Right") for s in at.success)
    assert f"the encoder spends **{ratio:.1f} times** the FLOPs" in all_text(at)
    costs = lesson.append_costs(teaching_model(0), ids_of(DEFAULT), 16)
    np.testing.assert_allclose(figures(at)["append_flops"]["data"][1]["y"], np.array(costs.flops_bidirectional) / 1e6)


@pytest.mark.parametrize(("times", "idea"), [(1 / 10, "A cache saves more than the attention"), (10, "not its square")])
def test_a_cache_guess_far_off_names_its_misconception(times, idea):
    at = commit(open_asking(), CACHE, saving() * times)
    assert at.error and idea in all_text(at)
    assert "append_flops" in figures(at)


def test_a_new_sentence_or_n_asks_again_and_skip_reveals():
    at = commit(open_asking(), CACHE, 20)
    assert "append_flops" in figures(at)
    at.number_input(key="tradeoffs.n_append").set_value(5).run()
    assert "append_flops" not in figures(at)  # a new N: the question is back
    at = commit(at, CACHE, 20)
    assert "append_flops" in figures(at)
    at.text_input(key="tradeoffs.sentence").input("a small dog ran to the old house").run()
    assert "append_flops" not in figures(at)  # a new sentence: asked again
    at.button(key=f"_predict_skip_{CACHE}").click().run()
    assert "append_flops" in figures(at) and not at.success
    ratio = lesson.append_costs(teaching_model(0), ids_of("a small dog ran to the old house"), 5).ratio
    assert f"**{ratio:.1f} times**" in all_text(at)


def test_a_commit_with_nothing_chosen_asks_for_a_choice():
    commit_nothing(open_asking(), MISMATCH, {"mask_mismatch"})


def test_the_mismatch_answer_is_the_trained_mlms():
    mm = mismatch()
    best = lesson.likeliest_case(mm)
    at = commit(open_asking(), MISMATCH, questions.CASE_LABELS[best])
    assert not at.exception and "Right." in [s.value for s in at.success]
    np.testing.assert_allclose(
        figures(at)["mask_mismatch"]["data"][0]["y"], [c.p_original for c in mm.cases], rtol=1e-5
    )
    assert f"Likeliest: **{CASE_NAMES[best]}**" in all_text(at)
    wrong = next(c for c in lesson.CASES if c != best)
    at = commit(open_asking(), MISMATCH, questions.CASE_LABELS[wrong])
    assert at.error and questions.CASE_MISCONCEPTIONS[wrong] in all_text(at)
    at.number_input(key="tradeoffs.word").set_value(3).run()  # another word: asked again
    assert "mask_mismatch" not in figures(at)


# ---- nothing on the page answers a prediction before its commit ----

CUT = "tradeoffs-first-cut"


def evidence(at) -> str:
    """Everything the page shows, with every numbers panel open."""
    at = helpers.open_numbers(at, *figures(at))
    assert not at.exception
    return helpers.page_evidence(at)


def held_back(text=DEFAULT, n=16, copies=100, position=2) -> dict[str, list[str]]:
    """Per prediction, what would answer it, computed from encoder_core."""
    costs = lesson.append_costs(teaching_model(0), ids_of(text), n)
    cap = lesson.length_cap(TOK, " ".join([text] * copies), 512)
    cut = lesson.first_cut(TOK, text, copies, 512)
    mm = mismatch(text, position)
    return {
        CACHE: [views.saving_text(costs), f"{costs.flops_bidirectional[-1]:,}", views.append_costs_alt(costs)],
        CUT: [views.cap_cut_text(cap), views.cap_alt(cap), views.length_text(cap), views.cut_answer_text(cut, str)],
        MISMATCH: [views.mismatch_alt(mm), "Likeliest:"],
    }


def test_before_its_commit_no_prediction_is_answered_anywhere_on_the_page():
    held = held_back()
    at = open_asking()
    assert {f"_predict_guess_{k}" for k in (CUT, MISMATCH)} <= {r.key for r in at.radio}
    text = evidence(at)
    assert not {k: e for k, es in held.items() for e in es if e in text}
    assert not {"append_flops", "append_time", "length_cap", "mask_mismatch"} & set(figures(at))
    for step in (1, 2, 5, 7, 8):  # a later tab, opened before the commit, holds its give-away back too
        text = evidence(helpers.open_linked("tradeoffs", {"step": str(step)}, every_section=False, skip=False))
        assert not {k: e for k, es in held.items() for e in es if e in text}, step
    shown = evidence(helpers.skip_predictions(at))  # once answered, the same strings are there
    assert all(e in shown for es in held.values() for e in es)


def test_the_first_piece_cut_is_the_tokenizers_and_a_miss_names_its_idea():
    cut = lesson.first_cut(TOK, DEFAULT, 100, 512)
    q = questions.cut_question(cut, 100, str)
    right = q.options[cut.options.index(cut.index)]
    at = commit(open_asking(), CUT, right.label)
    assert not at.exception and "Right." in [s.value for s in at.success]
    assert views.cut_answer_text(cut, str) in all_text(at) and "length_cap" in figures(at)
    wrong = next(i for i, o in enumerate(q.options) if o is not right)
    at = commit(open_asking(), CUT, q.options[wrong].label)
    assert at.error and q.options[wrong].misconception in all_text(at)
    assert questions.CUT_MISCONCEPTIONS["specials"] in {o.misconception for o in q.options}


def test_the_cut_question_changes_with_the_sentence_and_waits_for_a_cut():
    at = open_asking({"sentence": "my sister bought a new car yesterday"})
    cut = lesson.first_cut(TOK, "my sister bought a new car yesterday", 100, 512)
    default = lesson.first_cut(TOK, DEFAULT, 100, 512)
    assert (cut.index, cut.pieces[cut.index]) == (6, "yesterday") and (default.index, default.pieces[0]) == (0, "the")
    assert any(f"piece {cut.index}:" in o for o in at.radio(key=f"_predict_guess_{CUT}").options)
    at = open_asking({"copies": "3"})  # nothing is cut: nothing to predict, the chart is drawn
    assert f"_predict_guess_{CUT}" not in {r.key for r in at.radio} and "length_cap" in figures(at)


def test_the_mismatch_question_moves_off_a_near_tie_and_says_so():
    at = open_asking({"word": "5"})  # the second "the": [MASK] and the word itself are both near 1
    assert not at.exception
    assert "no input beats both others by 0.1" in all_text(at) and "asked at position 4" in all_text(at)
    assert "position 4 (“on”)" in at.radio(key=f"_predict_guess_{MISMATCH}").label


def test_a_cache_guess_of_n_times_is_judged_wrong_and_named():
    at = commit(open_asking(), CACHE, 16)  # N = 16 appends: the naive answer, within 25 % of the model's
    assert at.error and questions.CACHE_TRAPS["appends"] in all_text(at)
    assert "right is within" in " ".join(e.value for e in at.error)


def test_each_prediction_names_a_generator_that_practises_its_idea():
    from quiz_checks import assert_practised

    cut = lesson.first_cut(TOK, DEFAULT, 100, 512)
    for q in (questions.cache_question(12, 16), questions.cut_question(cut, 100, str)):
        assert_practised(q)
    for q in (questions.mismatch_question(2, "cat"),):
        assert_practised(q)
    assert questions.mismatch_question(2, "cat").concept != "masking_split"  # 80/10/10 counting: another idea


def test_appending_a_token_runs_once_for_every_student_on_the_same_sentence(monkeypatch):
    """The first tab's append-one-token runs (model passes, both ways) and its chart are shared by every session on
    the same model, sentence and word; another sentence gets its own, drawn from its own numbers."""
    calls = []
    append_one_token = lesson.append_one_token

    def counted(model, ids, new_id):
        calls.append((tuple(ids), new_id))
        return append_one_token(model, ids, new_id)

    monkeypatch.setattr(lesson, "append_one_token", counted)
    charts = []
    append_shift_chart = views.append_shift_chart

    def counted_chart(reuse, tokens, new_token):
        charts.append(tuple(tokens))
        return append_shift_chart(reuse, tokens, new_token)

    monkeypatch.setattr(views, "append_shift_chart", counted_chart)
    text, other = "a small dog sang in the book garden", "the old teacher read near the river"
    key, other_key = (tuple(ids_of(text)), TOK.token_to_id["again"]), (tuple(ids_of(other)), TOK.token_to_id["again"])
    first = open_linked({"sentence": text}, every_section=False)
    second = open_linked({}, every_section=False)
    assert calls.count(key) == 1
    second.text_input(key="tradeoffs.sentence").input(text).run()
    assert calls.count(key) == 1  # the second student reused the first one's run
    assert charts.count(tuple(TOK.encode(text).tokens)) == 1  # and its chart
    np.testing.assert_array_equal(
        figures(first)["append_shift"]["data"][1]["y"], figures(second)["append_shift"]["data"][1]["y"]
    )
    second.text_input(key="tradeoffs.sentence").input(other).run()
    assert calls.count(other_key) == 1
    want = append_one_token(teaching_model(0), ids_of(other), TOK.token_to_id["again"])
    drawn = figures(second)["append_shift"]["data"][1]["y"]
    np.testing.assert_allclose(drawn, want.shift_bidirectional, rtol=1e-5)
    assert np.asarray(drawn).shape != np.asarray(figures(first)["append_shift"]["data"][1]["y"]).shape
    assert not first.exception and not second.exception
