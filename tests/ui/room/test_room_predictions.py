"""The lessons' predictions a room can vote on, each answered by the same encoder_core function the lesson's
page uses, on the lecturer's sentence, with the lesson's chart as its proof; a sentence it cannot be asked on
says why."""

from __future__ import annotations

import pytest

from encoder_core.lessons import attention as attention_core
from ui.models import trained_mlm
from ui.room.registry import CannotAsk
from ui.room.sources import asked_with, from_prediction, proof_charts


def test_the_look_ahead_question_is_the_trained_heads_favourite():
    sentence = "the old man read the book in the garden"
    q = from_prediction("attention-look-ahead", sentence, "small", 0)
    trained = trained_mlm().model
    run = attention_core.look_ahead_run(trained.model.bert, trained.tokenizer, sentence)
    assert run.question is not None
    assert q.correct == run.question.answer and len(q.options) == len(run.question.options)
    word = run.tokens[run.question.query]
    assert f"“{word}” (token {run.question.query})" in q.prompt and "the lab's trained MLM" in q.prompt
    win = run.question.options[run.question.answer]
    assert q.options[q.correct] == f"“{run.tokens[win]}” (token {win})"
    assert all(q.why_wrong[i] for i in range(len(q.options)) if i != q.correct)  # each wrong option's idea
    assert q.concept == "attention_look_ahead" and q.lesson == "attention"
    charts, _ = asked_with(q)
    assert len(charts) == 1  # the head on the lesson's example: its habit, not this sentence's answer
    assert len(proof_charts(q)) == 1


CAT = "the cat sat on the mat"


@pytest.mark.parametrize(
    "key, sentence, model, why",
    [
        ("attention-look-ahead", "one", "small", "longer"),  # too short a sentence
        ("attention-look-ahead", "[CLS] [SEP]", "small", "longer"),
        ("heads-previous-token", CAT, "small", "choose"),  # a model whose heads learned nothing: which to choose
        ("heads-top-key", CAT, "mlm", "choose"),
        ("padding-pad-share", "the cat sat on the mat and it was very happy indeed", "small", "no \\[PAD\\]"),
        ("tradeoffs-first-cut", "hi", "small", "nothing to ask"),
        ("block-ffn-token", "the old man read the book in the garden", "small", "trained FFN"),
        ("outputs-closest-sentence", CAT, "small", "choose it"),
        ("masking-hardest", CAT, "small", "ten words"),
        ("masking-loss", CAT, "small", "nine words"),
        ("masking-fill", CAT, "small", "too close"),
    ],
)
def test_a_question_that_cannot_be_asked_on_a_sentence_or_model_says_why(key, sentence, model, why):
    with pytest.raises(CannotAsk, match=why):
        from_prediction(key, sentence, model, 0)


def attention_and_labels(model, tokenizer, sentence: str):
    from encoder_core.lessons import heads as heads_core
    from encoder_core.model.head_patterns import label_heads

    enc = tokenizer.encode(sentence, max_length=model.config.max_positions, truncate=True)
    run = heads_core.run_encoder(model, enc)
    return run, label_heads(run.attentions, run.tokens)


@pytest.mark.parametrize("model", ["mlm", "minilm"])
def test_the_heads_look_back_question_is_the_head_with_the_most_weight_on_the_token_before(model):
    from encoder_core.lessons import heads as heads_core
    from ui.models import lesson_model

    sentence = "the old man read the book in the garden"
    q = from_prediction("heads-previous-token", sentence, model, 0)
    chosen = lesson_model(model, 0)
    _, labels = attention_and_labels(chosen.encoder, chosen.tokenizer, sentence)
    choice = heads_core.previous_token_choice(labels)
    best = choice.candidates[choice.answer]
    assert q.options[q.correct] == f"layer {best[0]}, head {best[1]}"
    assert max(lab.masses["previous token"] for lab in labels) == pytest.approx(choice.previous[choice.answer])
    assert f"with {chosen.name}: In this model" in q.prompt and q.concept == "heads_pattern"
    assert len(proof_charts(q)) == 1


def test_the_heads_top_key_question_is_the_words_largest_weight_in_minilm():
    from encoder_core.lessons import heads as heads_core
    from ui.models import lesson_model

    sentence = "the cat sat on the mat"
    q = from_prediction("heads-top-key", sentence, "minilm", 0)
    chosen = lesson_model("minilm", 0)
    run, labels = attention_and_labels(chosen.encoder, chosen.tokenizer, sentence)
    choice = heads_core.top_key_choice(run.attentions, run.tokens, skip=heads_core.positional_heads(labels))
    row = run.attentions[choice.layer, choice.head, choice.query]
    best = int(row.argmax())
    assert q.options[q.correct] == f"{best} {run.tokens[best]}"
    assert f"layer {choice.layer}, head {choice.head}" in q.prompt and len(proof_charts(q)) == 1


@pytest.mark.parametrize(
    "sentence", ["the cat sat", "unbelievably xylophones", "the old man read the book in the garden"]
)
def test_the_pad_count_question_counts_the_single_sentences_pads_beside_the_lessons_pair(sentence):
    from pathlib import Path

    from encoder_core.lessons import padding as padding_core
    from encoder_core.model.tokenizer import english_tokenizer
    from ui.questions.padding import ROOM_PAIR

    q = from_prediction("padding-pad-count", sentence, "small", 0)
    tok = english_tokenizer()
    count = padding_core.pad_count(tok.encode(*ROOM_PAIR), tok.encode(sentence), 0)
    assert q.options[q.correct] == str(count.answer)
    assert all(int(o) >= 0 for o in q.options) and len(set(q.options)) == len(q.options)
    assert f"“{ROOM_PAIR[0]}” + “{ROOM_PAIR[1]}”" in q.prompt and len(proof_charts(q)) == 1
    page = (Path(__file__).resolve().parents[3] / "pages" / "padding.py").read_text(encoding="utf-8")
    assert f'DEFAULT_A, DEFAULT_B, DEFAULT_SINGLE = "{ROOM_PAIR[0]}", "{ROOM_PAIR[1]}"' in page


@pytest.mark.parametrize("model", ["small", "minilm"])
def test_the_weight_count_question_is_heads_times_tokens_squared(model):
    from ui.models import lesson_model

    sentence = "the cat sat on the mat"
    q = from_prediction("heads-weight-count", sentence, model, 0)
    chosen = lesson_model(model, 0)
    T = len(chosen.tokenizer.encode(sentence).ids)
    H = chosen.encoder.config.n_heads
    assert q.options[q.correct] == f"{H * T * T:,}" and f"It reads {T} tokens" in q.prompt
    assert f"{T * T:,}" in q.options and f"{H * T:,}" in q.options  # one grid; one weight per token
    assert [int(o.replace(",", "")) for o in q.options] == sorted(int(o.replace(",", "")) for o in q.options)
    assert "charts above" not in q.prompt and "Right within" not in q.prompt and len(proof_charts(q)) == 1


def test_the_norm_std_question_is_the_rows_spread_after_the_embeddings_layernorm():
    from encoder_core.lessons import block as block_core
    from ui.models import small_model, word_tokenizer

    sentence = "the cat sat on the mat"
    q = from_prediction("block-norm-std", sentence, "small", 0)
    model, tok = small_model(0), word_tokenizer()
    enc = tok.encode(sentence)
    walk = block_core.walk_block(model, enc.ids, enc.segments, 0)
    row = block_core.norm_row(
        walk.embeddings.summed, walk.embeddings.normed, block_core.first_word_position(len(enc.ids))
    )
    assert q.options[q.correct] == f"{row.std_after:.3f}" and f"{row.std_before:.3f} over its features" in q.prompt
    assert f"{walk.sqrt_d:.3f}" in q.options  # the row's length, taken for its spread
    assert "Right within" not in q.prompt and len(proof_charts(q)) == 2


def test_the_pad_share_question_is_the_lessons_mean_share_without_the_mask():
    from encoder_core.lessons import padding as padding_core
    from encoder_core.model.tokenizer import english_tokenizer
    from ui.models import lesson_model
    from ui.questions.padding import ROOM_PAIR

    sentence = "the cat sat"
    q = from_prediction("padding-pad-share", sentence, "small", 0)
    tok = english_tokenizer()
    batch = tok.pad([tok.encode(*ROOM_PAIR), tok.encode(sentence)])
    attn = padding_core.padded_attention(lesson_model("small", 0).encoder, batch, 1, 0, 0)
    share = padding_core.mean_pad_share(attn)
    assert q.options[q.correct] == f"{share:.3f}" and "0.000" in q.options  # the pads taken for empty
    assert all(0 <= float(o) <= 1 for o in q.options) and "right within" not in q.prompt
    charts, _ = asked_with(q)
    assert len(charts) == 1 and len(proof_charts(q)) == 3  # with the mask first; both grids and the pads' mass after


def test_the_cache_saving_question_is_the_lessons_ratio_of_flops():
    from encoder_core.lessons import tradeoffs as tradeoffs_core
    from ui.models import lesson_model
    from ui.questions.tradeoffs import ROOM_APPENDS

    sentence = "the cat sat on the mat and the dog slept"
    q = from_prediction("tradeoffs-cache-saving", sentence, "small", 0)
    chosen = lesson_model("small", 0)
    ids = chosen.tokenizer.encode(sentence).ids
    ratio = tradeoffs_core.append_costs(chosen.encoder, ids, ROOM_APPENDS).ratio
    assert q.options[q.correct] == f"{ratio:,.1f}×"
    assert f"{len(ids):,.1f}×" in q.options and f"{len(ids) + ROOM_APPENDS:,.1f}×" in q.options  # T, T + N
    assert len(proof_charts(q)) == 1


def test_the_first_cut_question_is_the_first_piece_past_the_cap():
    from encoder_core.lessons import tradeoffs as tradeoffs_core
    from ui.models import lesson_model
    from ui.questions.tradeoffs import ROOM_COPIES

    sentence = "the old man read the book in the garden"
    q = from_prediction("tradeoffs-first-cut", sentence, "small", 0)
    tok, limit = lesson_model("small", 0).tokenizer, lesson_model("small", 0).encoder.config.max_positions
    cut = tradeoffs_core.first_cut(tok, sentence, ROOM_COPIES, limit)
    assert q.options[q.correct] == f"piece {cut.index}: “{cut.pieces[cut.index]}”" and len(proof_charts(q)) == 1


@pytest.mark.parametrize("model", ["mlm", "minilm"])
def test_the_ffn_token_question_is_the_word_with_the_longest_ffn_output(model):
    from encoder_core.lessons import block as block_core
    from ui.models import lesson_model

    sentence = "the old man read the book in the garden"
    q = from_prediction("block-ffn-token", sentence, model, 0)
    chosen = lesson_model(model, 0)
    norms = block_core.ffn_norms_of(chosen.encoder, chosen.tokenizer, sentence, chosen.name)
    choice = block_core.ffn_token_choice(norms.norms, norms.tokens)
    assert q.options[q.correct] == f"{choice.best} {norms.tokens[choice.best]}"
    assert f"layer {choice.layer}" in q.prompt and len(proof_charts(q)) == 1


def test_the_deep_growth_question_is_the_lessons_outcome_on_its_two_stacks():
    from encoder_core.lessons import block as block_core
    from ui.models import word_tokenizer
    from ui.questions.block import ROOM_DEPTH

    sentence = "the cat sat on the mat"
    q = from_prediction("block-deep-growth", sentence, "small", 0)
    enc = word_tokenizer().encode(sentence)
    study = block_core.deep_stack_study(list(enc.ids), list(enc.segments), ROOM_DEPTH, 0, block_core.BERT_INIT_STD)
    assert q.correct == block_core.GROWTH_OUTCOMES.index(block_core.growth_outcome(study))
    assert len(proof_charts(q)) == 2


def test_the_closest_sentence_question_is_minilms_highest_cosine():
    from encoder_core.lessons import outputs as outputs_core
    from ui.models import minilm

    sentence = "the cat sat on the mat"
    q = from_prediction("outputs-closest-sentence", sentence, "minilm", 0)
    found = outputs_core.closest_sentence(minilm().model, sentence)
    assert q.options == tuple(found.options) and q.correct == found.answer
    best = max(range(len(found.options)), key=lambda i: found.cosine["mean"][i])
    assert q.correct == best and len(proof_charts(q)) == 1


def test_the_hardest_position_question_is_the_largest_loss_of_the_lessons_draw():
    from encoder_core.lessons import masking as masking_core
    from ui.questions.masking import ROOM_DRAW

    sentence = "the old man read the book in the garden while the young dog slept by the warm fire"
    q = from_prediction("masking-hardest", sentence, "small", 0)
    trained = trained_mlm().model
    ids = trained.tokenizer.encode(sentence).ids
    draw = masking_core.draw_masks(trained.tokenizer, ids, **ROOM_DRAW)
    fwd = masking_core.mlm_forward(trained.model, draw.result.inputs, draw.result.labels, tokenizer=trained.tokenizer)
    choice = masking_core.hardest_choice(draw, fwd)
    best = draw.positions[choice.positions[choice.answer]]
    assert q.options[q.correct].startswith(f"position {best.position}, “{best.token}”")
    assert "\\\\" not in "".join(q.options) and "counts as right too" not in q.prompt  # plain text, one answer
    assert len(proof_charts(q)) == 1


@pytest.mark.parametrize("text", ["position 5, “the” (the model reads [MASK])", "##ing 1.5% a-b \\ x_y *z*"])
def test_a_pages_escaped_text_comes_back_plain_for_the_room(text):
    from ui.frame.quiz_widget import escape_md
    from ui.questions.masking import unescaped

    assert unescaped(escape_md(text)) == text


CLOZE = "the dog slept on the [MASK] all day"


def cloze_knockouts():
    """The inside lesson's cloze of CLOZE on the lab's trained MLM, and its knockouts, as the lesson computes them."""
    from encoder_core.lessons import inside as inside_core

    trained = trained_mlm().model
    cloze = inside_core.prepare_cloze(trained.tokenizer, CLOZE)
    return trained, cloze, inside_core.knockouts(trained.model, trained.tokenizer, cloze)


def test_the_token_knockout_question_is_the_token_whose_hiding_costs_the_answer_most():
    from encoder_core.lessons import inside as inside_core

    q = from_prediction("inside-token", CLOZE, "small", 0)
    trained, cloze, knock = cloze_knockouts()
    choice = inside_core.token_choice(knock, inside_core.attention_maps(trained.model, cloze), cloze)
    best = choice.candidates[choice.answer]
    assert q.options[q.correct] == f"“{cloze.tokens[best]}” (token {best})"
    assert float(knock.tokens[best]) == min(float(knock.tokens[i]) for i in choice.candidates)
    assert "\\\\" not in q.prompt + "".join(q.options) + "".join(q.why_wrong)  # plain text: the room escapes
    assert len(proof_charts(q)) == 1


def test_the_inside_lessons_markdown_comes_back_plain_for_the_room():
    from ui.questions.inside import plain
    from ui.views.inside import md

    for text in ["[MASK] & <b>x</b> *y* #z $1", "“[SEP]” (token 9)"]:
        assert plain(md(text)) == text


LONG = "the old man read the book in the garden while the young dog slept by the warm fire"


def test_the_loss_question_is_the_labelled_positions_of_a_draw_that_shows_every_fate():
    from encoder_core.lessons import masking as masking_core
    from encoder_core.lessons.tradeoffs import eligible_positions
    from ui.questions.masking import LOSS
    from ui.room.sources import lesson_link

    q = from_prediction("masking-loss", LONG, "small", 0)
    tok = trained_mlm().model.tokenizer
    ids = tok.encode(LONG).ids
    rate = masking_core.rate_showing_every_fate(len(eligible_positions(tok, ids)))
    draw = masking_core.draw_masks(tok, ids, rate=rate, exact=True, seed=0)
    assert draw.counts.masked and draw.counts.random and draw.counts.kept  # the rules told apart
    assert q.correct == masking_core.LOSS_SETS.index(masking_core.loss_outcome(draw))  # the lesson's own answer
    assert masking_core.matching_loss_sets(draw) == ["chosen"] and q.options == tuple(o.label for o in LOSS.options)
    assert f"{rate:.0%} rate" in q.prompt and q.concept == "masking_label_of"
    charts, _ = asked_with(q)
    assert len(charts) == 1 and len(proof_charts(q)) == 1  # the draw, its labels held back; then with them
    assert lesson_link(q)[1]["mlm_rate"] == str(rate)  # the lesson opens on the same draw


def test_the_fill_question_is_the_models_first_choice_at_the_blank():
    from encoder_core.lessons import masking as masking_core

    sentence = "she went to the shop to buy some bread and milk"
    q = from_prediction("masking-fill", sentence, "small", 0)
    trained = trained_mlm().model
    plan = masking_core.plan_fill(trained.tokenizer, sentence, 0, trained.model.config.max_positions, sentence)
    filled = masking_core.fill_mask_view(trained.model, trained.tokenizer, plan.text, plan.position)
    first = filled.predictions[0]
    assert q.options[q.correct] == first.top[0][0]  # the lesson's own first choice
    assert len(q.options) >= 3 and list(q.options) == sorted(q.options)  # its place gives nothing away
    assert "milk" in q.options and "milk" not in q.options[q.correct]  # the hidden word, a wrong idea here
    assert all(q.why_wrong[i] for i in range(len(q.options)) if i != q.correct)
    assert "Type one word" not in q.prompt and f"“{plan.query}”" in q.prompt and len(proof_charts(q)) == 1


def test_the_explanation_question_is_the_explanation_that_agrees_best_with_the_knockouts():
    from encoder_core.lessons import inside as inside_core

    q = from_prediction("inside-explanation", CLOZE, "small", 0)
    trained, cloze, knock = cloze_knockouts()
    expl = inside_core.explanations(trained.model, trained.tokenizer, cloze, knock.answer_id, "[PAD]", 64)
    scores = inside_core.agreement(expl, knock, cloze)
    assert q.correct == list(inside_core.METHODS).index(inside_core.best_method(scores))  # the lesson's answer
    assert inside_core.best_methods(scores) == [inside_core.best_method(scores)]  # one answer, none too close
    assert q.options == tuple(inside_core.METHODS.values()) and "counts as right too" not in q.prompt
    assert len(proof_charts(q)) == 1


def test_the_tag_shape_question_is_the_tagging_heads_measured_logits():
    from encoder_core.lessons import outputs as outputs_core
    from ui.questions.outputs import ROOM_PAIR

    sentence = "the cat sat on the mat"
    q = from_prediction("outputs-tag-shape", sentence, "small", 0)
    trained = trained_mlm().model
    shapes = outputs_core.head_shapes(trained.model.bert, trained.tokenizer, [(sentence, None), ROOM_PAIR])
    measured = shapes.shape("tagging", "logits")
    assert q.correct == outputs_core.SHAPE_FORMS.index(outputs_core.logits_form(shapes, "tagging"))
    assert q.options[q.correct] == f"(B, T, C) = {measured}" and len(q.options) == 4
    assert f"T = {measured[1]} tokens" in q.prompt and len(proof_charts(q)) == 1


def test_the_probe_question_is_the_lessons_comparison_of_its_three_runs():
    from encoder_core.finetune.tasks import DEFAULT_STEPS, STARTS
    from encoder_core.lessons import outputs as outputs_core
    from ui.models import run_fine_tune
    from ui.questions.outputs import ROOM_TASK

    q = from_prediction("outputs-probe-or-scratch", "the cat sat on the mat", "small", 0)
    runs = {s: run_fine_tune(ROOM_TASK, s, DEFAULT_STEPS[ROOM_TASK], 0) for s in STARTS}  # the lesson's, kept
    outcome = outputs_core.probe_or_scratch(outputs_core.compare_starts(runs))
    assert q.correct == outputs_core.PROBE_OUTCOMES.index(outcome) and len(q.options) == 3
    assert "your commit" not in q.prompt and len(proof_charts(q)) == 2


@pytest.mark.parametrize(
    "key, model, sentence, module, function, cached",
    [
        ("masking-hardest", "small", LONG, "masking", "mlm_forward", "_hardest_run"),
        ("heads-top-key", "minilm", "the cat sat on the warm mat", "heads", "run_encoder", "_attention_run"),
        ("inside-token", "small", "the cat slept on the [MASK] all day", "inside", "knockouts", "_knockouts_run"),
        ("inside-head", "small", "the cat slept on the [MASK] all day", "inside", "knockouts", "_knockouts_run"),
        ("attention-look-ahead", "small", LONG, "attention", "look_ahead_run", "_look_run"),
        ("block-ffn-token", "mlm", LONG, "block", "ffn_norms_of", "_ffn_norms_run"),
    ],
)
def test_a_round_runs_its_model_once(monkeypatch, key, model, sentence, module, function, cached):
    """The question, its lead, what it is asked with and its proof read one run, cached per sentence: the
    lesson's encoder_core function is counted."""
    import importlib

    core = importlib.import_module(f"encoder_core.lessons.{module}")
    real, calls = getattr(core, function), []
    monkeypatch.setattr(core, function, lambda *a, **k: calls.append(1) or real(*a, **k))
    getattr(importlib.import_module(f"ui.questions.{module}"), cached).clear()  # a run kept by an earlier test
    q = from_prediction(key, sentence, model, 0)
    asked_with(q)
    assert proof_charts(q)
    assert len(calls) == 1, f"{key} ran {function} {len(calls)} times"


def test_every_room_questions_link_fills_parameters_its_lessons_page_reads():
    """ "Teach it again" opens the lesson on the round's inputs: each parameter a question's link fills must be
    one its page names (a wrong name would open the page on its default sentence)."""
    from pathlib import Path

    from ui.room.registry import load_lessons, predictions

    load_lessons()
    proof = {"sentence": "a round's own sentence", "position": 2, "rate": 0.15}
    for key, q in predictions().items():
        page = (Path(__file__).parents[3] / "pages" / f"{q.lesson}.py").read_text(encoding="utf-8")
        params = q.link_params(proof)
        assert params and all(f'"{name}"' in page for name in params), (key, params)  # parameters the page names
