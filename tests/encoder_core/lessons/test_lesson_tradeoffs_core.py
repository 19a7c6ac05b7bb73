"""The trade-offs lesson's computations against closed forms, independent recomputation and invariants.

A test that runs the lesson on a model takes `lesson_model` (conftest.py): every model the sidebar offers.
The parts that need an MLM head run on the lab's trained MLM whatever the sidebar picks, as the
page does, with the sidebar model's tokenizer."""

import json
import math
import random
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from encoder_core import english_tokenizer, teaching_model
from encoder_core.lessons.attention import ROUNDING
from encoder_core.lessons.tradeoffs import (
    CASES,
    OBJECTIVES,
    ROBERTA_CHANGES,
    SCHEDULES,
    WINDOW_OVERLAP,
    append_costs,
    append_one_token,
    attention_scaling,
    eligible_positions,
    expected_distinct,
    length_cap,
    length_ids,
    loss_averaging,
    mask_mismatch,
    masking_views,
    objective_labels,
    rtd_labels,
    time_lengths,
)
from encoder_core.model.costs import (
    CausalCache,
    FlopCounter,
    append_flops_closed_form,
    fitted_exponent,
    layer_flops,
    split_windows,
    windows_closed_form,
)
from encoder_core.objectives.mlm_masking import IGNORE_INDEX, exact_counts

SENTENCE = "the cat sat on the mat and the dog slept"
# Facts from the source documents, kept in the repository with their source named.
SOURCE_FACTS = Path(__file__).resolve().parents[2] / "fixtures" / "source_facts.json"


def sentence_ids(tokenizer) -> list[int]:
    return tokenizer.encode(SENTENCE).ids


@pytest.fixture(scope="module")
def ids(tok):
    return sentence_ids(tok)


def check_cached_run(model, ids):
    with torch.inference_mode():
        full = model(torch.tensor([ids]), causal=True, need_weights=False).hidden[0]
        cache = CausalCache(model)
        rows = torch.stack([cache.step(i) for i in ids])
    torch.testing.assert_close(rows, full, atol=ROUNDING, rtol=0)


def test_a_cached_causal_run_equals_the_full_causal_run(lesson_model):
    check_cached_run(lesson_model.encoder, sentence_ids(lesson_model.tokenizer))


# Not on the lesson models: all three are post-norm; this builds a pre-norm model of its own.
def test_a_cached_causal_run_equals_the_full_causal_run_in_a_pre_norm_model(ids):
    check_cached_run(teaching_model(3, "pre"), ids)


def test_appending_moves_no_earlier_vector_under_the_causal_mask_and_every_one_without(lesson_model):
    ids = sentence_ids(lesson_model.tokenizer)
    r = append_one_token(lesson_model.encoder, ids, lesson_model.tokenizer.token_to_id["again"])
    assert r.n_earlier == len(ids) == len(r.shift_causal) == len(r.shift_bidirectional)
    assert r.max_causal <= ROUNDING and r.layer_input_shift_causal <= ROUNDING
    assert min(r.shift_bidirectional) > 1e-3 and r.layer_input_shift_bidirectional > 1e-3
    assert r.cached_vs_full <= ROUNDING


def test_flops_of_one_layer_by_hand(lesson_model):
    cfg = lesson_model.config
    D, F = cfg.d_model, cfg.d_ff  # the small models: 64, 256; MiniLM: 384, 1536
    # Q, K, V, W_O: 4 x 2*T*D*D; FFN: 2 x 2*T*D*F; scores and mixing: 2 x 2*T*T*D
    T = 10
    assert layer_flops(cfg, T, T) == 4 * 2 * T * D * D + 2 * 2 * T * D * F + 2 * 2 * T * T * D
    assert layer_flops(cfg, 1, T) == 4 * 2 * D * D + 2 * 2 * D * F + 2 * 2 * T * D


@pytest.mark.parametrize("prefix,n", [(1, 1), (5, 7), (12, 30)])
def test_the_closed_form_equals_the_step_by_step_sum(lesson_model, prefix, n):
    cfg = lesson_model.config
    bi = sum(cfg.n_layers * layer_flops(cfg, prefix + k, prefix + k) for k in range(1, n + 1))
    cached = sum(cfg.n_layers * layer_flops(cfg, 1, prefix + k) for k in range(1, n + 1))
    assert append_flops_closed_form(cfg, prefix, n) == (bi, cached)


def test_a_full_pass_counted_from_its_shapes_matches_the_formula(lesson_model):
    model, ids = lesson_model.encoder, sentence_ids(lesson_model.tokenizer)
    counter = FlopCounter()
    with torch.inference_mode(), counter.counting(model):
        model(torch.tensor([ids]))
    cfg = model.config
    assert counter.flops == cfg.n_layers * layer_flops(cfg, len(ids), len(ids))


@pytest.mark.parametrize("n", [0, 1, 9])
def test_append_costs_counted_equal_the_closed_form(lesson_model, n):
    c = append_costs(lesson_model.encoder, sentence_ids(lesson_model.tokenizer), n)
    assert len(c.flops_bidirectional) == len(c.flops_cached) == len(c.seconds_cached) == n + 1
    assert (c.flops_bidirectional[-1], c.flops_cached[-1]) == c.closed_form
    assert c.flops_bidirectional == sorted(c.flops_bidirectional)
    if n == 0:
        assert c.closed_form == (0, 0) and math.isnan(c.ratio)
    else:
        assert c.ratio > 1


def test_append_costs_refuse_more_than_the_cap(lesson_model):
    ids, cap = sentence_ids(lesson_model.tokenizer), lesson_model.config.max_positions
    with pytest.raises(ValueError, match="max_positions"):
        append_costs(lesson_model.encoder, ids, cap)
    with pytest.raises(ValueError, match="max_positions"):
        append_costs(lesson_model.encoder, ids, cap - len(ids) + 1)  # one token past the table


@pytest.mark.parametrize("size,overlap", [(510, 128), (6, 2), (5, 0)])
def test_windows_cover_the_document_and_match_the_closed_form(size, overlap):
    for n in range(0, 4 * size):
        w = split_windows(n, size, overlap)
        assert len(w.spans) == windows_closed_form(n, size, overlap)
        assert w.spans[0][0] == 0 and w.spans[-1][1] == n
        assert all(0 < end - start <= size or n == 0 for start, end in w.spans)
        assert all(a[1] - b[0] == overlap for a, b in zip(w.spans, w.spans[1:]) if a[1] - a[0] == size)


def test_length_cap_cuts_what_exceeds_the_cap(lesson_model):
    tok, n_positions = lesson_model.tokenizer, lesson_model.config.max_positions  # the page's cap: 512 for all
    kept = n_positions - 2  # [CLS] and [SEP] take two positions
    doc = " ".join([SENTENCE] * 60)  # 600 words, one piece each
    assert kept < 600 <= 2 * kept - WINDOW_OVERLAP  # the document needs two windows, no more
    cap = length_cap(tok, doc, n_positions)
    assert cap.n_tokens == 602 and cap.cut == 602 - n_positions
    words = doc.split()
    # At 512 positions: words[504:510] | words[510:516], windows (0, 510) and (382, 600).
    assert cap.before_cut == words[kept - 6 : kept] and cap.after_cut == words[kept : kept + 6]
    assert cap.windows.spans == [(0, kept), (kept - WINDOW_OVERLAP, 600)]
    short = length_cap(tok, SENTENCE, n_positions)
    assert short.cut == 0 and short.after_cut == [] and len(short.windows.spans) == 1


def test_attention_sizes_from_shapes_equal_a_real_runs_tensors(lesson_model):
    model, ids = lesson_model.encoder, sentence_ids(lesson_model.tokenizer)
    lengths = (16, 40)
    scaling = attention_scaling(model.config, lengths)
    with torch.inference_mode():
        for t, size in zip(lengths, scaling.weights_bytes):
            run = model(length_ids(ids, t))
            assert sum(w.numel() * w.element_size() for w in run.attentions) == size
    cfg = model.config
    assert scaling.crossover == 2 * cfg.d_model + cfg.d_ff
    at = attention_scaling(cfg, (scaling.crossover,))
    assert at.flops_linear == at.flops_attention  # the two parts cost the same at T = 2 D + d_ff


def test_time_lengths_measures_the_real_tensor_sizes(lesson_model):
    model = lesson_model.encoder
    t = time_lengths(model, sentence_ids(lesson_model.tokenizer), (8, 16), repeats=1)
    assert t.weights_bytes == attention_scaling(model.config, (8, 16)).weights_bytes
    assert all(s > 0 for s in t.attention_seconds + t.forward_seconds)
    assert math.isfinite(t.exponent_attention) and math.isfinite(t.exponent_forward)


def test_fitted_exponent_recovers_a_power_law():
    xs = [16, 32, 64, 128]
    assert fitted_exponent(xs, [3 * x**2 for x in xs]) == pytest.approx(2.0)
    assert fitted_exponent(xs, [0.5 * x**1.3 for x in xs]) == pytest.approx(1.3)
    with pytest.raises(ValueError):
        fitted_exponent([4], [1.0])


@pytest.mark.parametrize("with_generator", [True, False])
def test_rtd_labels_are_read_from_the_corruption(lesson_model, trained_mlm, with_generator):
    tok = lesson_model.tokenizer  # the trained MLM reads the sidebar model's tokens, as on the page
    ids = sentence_ids(tok)
    mlm = trained_mlm[0] if with_generator else None
    for seed in range(5):
        lab = objective_labels(tok, ids, seed, mlm)
        assert lab.rtd_replaced == [a != b for a, b in zip(lab.tokens, lab.rtd_inputs)]
        assert all(c for c, r in zip(lab.chosen, lab.rtd_replaced) if r)  # only chosen positions can be replaced
        eligible = len(eligible_positions(tok, ids))
        counts = lab.counts()
        assert counts == {
            OBJECTIVES[0]: exact_counts(eligible).chosen,
            OBJECTIVES[1]: len(ids) - 1,
            OBJECTIVES[2]: len(ids),
        }
        assert lab.corruption == ("generator" if with_generator else "random")
    if not with_generator:  # a uniform word almost never equals the original
        assert sum(objective_labels(tok, ids, 0).rtd_replaced) == counts[OBJECTIVES[0]]


def test_rtd_rule():
    assert rtd_labels([5, 6, 7], [5, 9, 7]) == [False, True, False]
    with pytest.raises(ValueError):
        rtd_labels([1], [1, 2])


def test_mask_mismatch_matches_an_independent_run(lesson_model, trained_mlm):
    tok = lesson_model.tokenizer  # the trained MLM reads the sidebar model's tokens, as on the page
    ids = sentence_ids(tok)
    assert tok.vocab == trained_mlm[1].vocab  # so its ids mean to the MLM what they mean to the tokenizer
    mlm = trained_mlm[0]
    position = 2  # "cat"
    mm = mask_mismatch(mlm, tok, ids, position, seed=0)
    assert [c.case for c in mm.cases] == list(CASES) and mm.original == "cat"
    assert mm.cases[0].input_token == "[MASK]" and mm.cases[2].input_token == "cat"
    masked = torch.tensor([ids])
    masked[0, position] = tok.mask_id
    with torch.no_grad():
        probs = torch.softmax(mlm(masked, need_weights=False)[0][0, position], dim=-1)
    assert mm.cases[0].p_original == pytest.approx(float(probs[tok.token_to_id["cat"]]), rel=1e-5)
    assert mm.cases[0].top[0][0] == tok.vocab[int(probs.argmax())]
    for case in mm.cases:
        assert (case.rank == 1) == (case.top[0][0] == "cat")
    assert mm.n_positions == len(ids) - 2
    assert mm.mean_p_original["kept"] > mm.mean_p_original["masked"]  # a visible word is easy to predict
    with pytest.raises(ValueError):
        mask_mismatch(mlm, tok, ids, 0, seed=0)  # [CLS] is not a word position


def test_static_masking_shows_one_pattern_and_dynamic_many():
    v = masking_views(10, 40, seed=0)
    assert v.n_chosen == 2 and v.n_patterns == 45
    static, copies, dynamic = (v.distinct[name] for name in SCHEDULES)
    assert static == [1] * 40 and v.expected["static, 1 pattern"] == [1.0] * 40
    assert max(copies) <= 10 and copies == sorted(copies)
    assert dynamic[-1] > copies[-1]
    assert v.coverage["static, 1 pattern"] == pytest.approx(0.2) == v.expected_coverage["static, 1 pattern"]


def test_distinct_views_average_to_the_closed_form():
    runs = [masking_views(8, 30, seed) for seed in range(150)]
    v = runs[0]
    for name in SCHEDULES:
        mean = sum(r.distinct[name][-1] for r in runs) / len(runs)
        assert mean == pytest.approx(v.expected[name][-1], rel=0.05)
        cover = sum(r.coverage[name] for r in runs) / len(runs)
        assert cover == pytest.approx(v.expected_coverage[name], abs=0.03)


def test_expected_distinct_against_enumeration():
    # 3 patterns, 2 draws: 9 equally likely pairs, 3 of them equal -> E = (3 * 1 + 6 * 2) / 9
    assert expected_distinct(3, 2) == pytest.approx(15 / 9)
    r = random.Random(0)
    sim = sum(len({r.randrange(20) for _ in range(15)}) for _ in range(20000)) / 20000
    assert expected_distinct(20, 15) == pytest.approx(sim, rel=0.01)
    assert expected_distinct(5, 0) == 0.0 and expected_distinct(1, 9) == 1.0


def test_robertas_changes_are_the_published_ones():
    facts = json.loads(SOURCE_FACTS.read_text(encoding="utf-8"))["roberta_changes"]
    rows = {row[0]: row[1:] for row in ROBERTA_CHANGES}
    batch = facts["batch_sequences"]
    assert rows["Batch size"] == (f"{batch['bert']} sequences", f"{batch['roberta']} sequences")
    assert rows["Training text"] == (facts["training_text"]["bert"], facts["training_text"]["roberta"])
    assert rows["Training steps"] == (facts["training_steps"]["bert"], facts["training_steps"]["roberta"])
    assert rows["Next-sentence prediction"][1].startswith("dropped") and rows["Masking"][1].startswith("dynamic")


def test_averaging_over_every_position_shrinks_the_loss_and_its_gradient(lesson_model, trained_mlm):
    tok = lesson_model.tokenizer  # the trained MLM reads the sidebar model's tokens, as on the page
    ids = sentence_ids(tok)
    mlm = trained_mlm[0]
    la = loss_averaging(mlm, tok, ids, seed=0)
    b = la.breakdown
    assert la.scale == b.n_counted / b.n_positions
    assert b.wrong_mean_all_positions == pytest.approx(b.mean * la.scale, rel=1e-6)
    assert la.grad_norm_wrong / la.grad_norm_right == pytest.approx(la.scale, rel=1e-5)
    assert b.per_position.shape == (1, len(ids)) and b.n_positions == len(ids)
    assert loss_averaging(mlm, tok, tok.encode("cat").ids, seed=0) is None  # one word: 15% of 1 rounds to 0


def test_the_right_mean_is_cross_entropys(lesson_model, trained_mlm):
    from encoder_core.objectives.mlm_masking import tokenizer_mask

    tok = lesson_model.tokenizer  # the trained MLM reads the sidebar model's tokens, as on the page
    ids = sentence_ids(tok)
    mlm = trained_mlm[0]
    m = tokenizer_mask(tok, torch.tensor([ids]), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        logits, _ = mlm(m.inputs, need_weights=False)
    expected = F.cross_entropy(logits.transpose(1, 2), m.labels, ignore_index=IGNORE_INDEX)
    assert loss_averaging(mlm, tok, ids, seed=0).breakdown.mean == pytest.approx(float(expected), rel=1e-5)


def test_truncation_keeps_the_answer_only_from_the_shortest_length_on(lesson_model):
    from encoder_core.finetune.tasks import make_task
    from encoder_core.lessons.tradeoffs import answer_truncation

    tok = lesson_model.tokenizer  # the page truncates with the sidebar model's tokenizer
    for ex in make_task("qa").held_out[:5]:
        full = tok.encode(ex.text_a, ex.text_b, max_length=None)
        t = answer_truncation(tok, ex.text_a, ex.text_b, ex.answer, range(6, len(full) + 1))
        passage_words = ex.text_b.split()  # the grammar's words are one piece each
        answer = passage_words[ex.answer[0] : ex.answer[1] + 1]
        assert t.answer_pieces == len(answer) and full.tokens[t.answer_last_index] == answer[-1]
        for length, kept in zip(t.lengths, t.answer_kept):
            cut = tok.encode(ex.text_a, ex.text_b, max_length=length, truncate=True)
            passage = cut.tokens[cut.tokens.index("[SEP]") + 1 : -1]  # the question may have been cut too
            before = sum(len(w) > 0 for w in passage_words[: ex.answer[0]])
            survivors = passage[before : before + len(answer)]
            assert kept == len(survivors)
            assert (kept == len(answer)) == (length >= t.shortest_keeping)
        after = len(passage_words) - 1 - ex.answer[1]
        if len(passage_words) - after > len(ex.text_a.split()):  # the passage stays the longer part until then
            assert t.shortest_keeping == len(full) - after  # cut everything after the answer and no more


# ---- the answers to the lesson's predictions ----


@pytest.mark.parametrize("n", [1, 16])
def test_the_cache_saving_is_the_ratio_of_the_step_by_step_sums(lesson_model, n):
    """The 'how many times fewer FLOPs' prediction reads AppendCosts.ratio: check it against sums written out."""
    model, ids = lesson_model.encoder, sentence_ids(lesson_model.tokenizer)
    cfg, prefix = model.config, len(ids)
    bi = sum(cfg.n_layers * layer_flops(cfg, prefix + k, prefix + k) for k in range(1, n + 1))
    cached = sum(cfg.n_layers * layer_flops(cfg, 1, prefix + k) for k in range(1, n + 1))
    c = append_costs(model, ids, n)
    assert c.ratio == pytest.approx(bi / cached, rel=1e-12)
    if n > 1:  # every append reruns about T rows instead of one: the saving is near the mean length
        assert prefix < c.ratio < prefix + n


def test_likeliest_case_is_the_argmax_of_three_independent_runs(lesson_model, trained_mlm):
    from encoder_core.lessons.tradeoffs import likeliest_case

    tok = lesson_model.tokenizer  # the trained MLM reads the sidebar model's tokens, as on the page
    mlm = trained_mlm[0]
    for text, seed in ((SENTENCE, 0), ("a small dog ran to the old house in the rain", 3)):
        ids = tok.encode(text).ids
        for position in (1, 3, len(ids) - 2):
            mm = mask_mismatch(mlm, tok, ids, position, seed)
            p = {}
            for case in mm.cases:  # the input the lesson built, run alone
                row = torch.tensor([ids])
                row[0, position] = tok.token_to_id[case.input_token]
                with torch.no_grad():
                    probs = torch.softmax(mlm(row, need_weights=False)[0][0, position], dim=-1)
                p[case.case] = float(probs[ids[position]])
            assert likeliest_case(mm) == max(p, key=p.get)
            assert likeliest_case(mm) in CASES


# ---- the predictions' fairness: margins, traps, answers that change with the sentence ----

ORDINARY = (
    "the cat sat on the mat and the dog slept",
    "my sister bought a new car yesterday",
    "the children played in the park after school",
    "the weather was cold and wet all week",
    "we ate bread and cheese in the kitchen",
    "the train to london was late again",
    "unbelievably , the snowman melted before lunch",
)


def test_the_mismatch_question_moves_to_a_word_where_one_input_wins_by_the_margin(trained_mlm):
    from encoder_core.lessons.tradeoffs import MISMATCH_MARGIN, case_margins, clear_position

    mlm, tok, _ = trained_mlm
    for text in ORDINARY:
        ids = tok.encode(text).ids
        words = eligible_positions(tok, ids)
        mm = mask_mismatch(mlm, tok, ids, words[0], 0)
        margins = case_margins(mm)
        assert sorted(margins) == words
        chosen = set()
        for asked in words:
            at = clear_position(mm, asked)
            assert at is not None and margins[at] >= MISMATCH_MARGIN
            nearer = [p for p in words if abs(p - asked) < abs(at - asked)]
            assert all(margins[p] < MISMATCH_MARGIN for p in nearer)  # the nearest such word
            chosen.add(at)
        for at in sorted(chosen)[:3]:  # the values are the same whichever word is asked
            p = sorted((c.p_original for c in mask_mismatch(mlm, tok, ids, at, 0).cases), reverse=True)
            assert p[0] - p[1] == pytest.approx(margins[at], abs=1e-6) and p[0] - p[1] >= MISMATCH_MARGIN
    # the default sentence's fifth token, "the", is a near tie: the question moves to the left neighbour
    ids = tok.encode(SENTENCE).ids
    mm = mask_mismatch(mlm, tok, ids, 5, 0)
    assert case_margins(mm)[5] < MISMATCH_MARGIN and clear_position(mm, 5) == 4


def test_the_cache_traps_are_each_wrong_idea_computed_and_judged_wrong():
    from encoder_core.lessons.tradeoffs import cache_traps
    from ui.frame.predict import judge
    from ui.questions.tradeoffs import CACHE_TRAPS, cache_question

    model = teaching_model(0)
    tok = english_tokenizer()
    for text in ORDINARY[:4]:
        ids = tok.encode(text).ids
        for n in (4, 16, 40):
            prefix = len(ids)
            ratio = append_costs(model, ids, n).ratio
            traps = cache_traps(prefix, n)
            assert traps == {"appends": n, "length": prefix, "final": prefix + n, "square": prefix**2}
            q = cache_question(prefix, n)
            assert judge(q, ratio, ratio).right
            for name, value in traps.items():
                verdict = judge(q, value, ratio)
                assert not verdict.right, (text, n, name, value, ratio)
                assert verdict.misconception == CACHE_TRAPS[name] or name == "square"
            assert "within" in judge(q, ratio * 1.01, ratio).said  # the frame says "within X %"


def test_the_first_piece_cut_is_the_truncated_documents_and_changes_with_the_sentence():
    from encoder_core.lessons.tradeoffs import first_cut

    tok = english_tokenizer()
    answers = set()
    for text in ORDINARY:
        cut = first_cut(tok, text, 100, 512)
        assert cut is not None and len(cut.options) >= 2
        whole = length_cap(tok, " ".join([text] * 100), 512)
        assert cut.pieces[cut.index] == whole.after_cut[0]  # what the tokenizer really dropped first
        assert cut.kept == 510 and cut.index == 510 % len(cut.pieces)
        assert set(cut.options) == {cut.index, *cut.misread.values()} and cut.index not in cut.misread.values()
        assert cut.misread["specials"] == (512 % len(cut.pieces))
        answers.add((cut.index, cut.pieces[cut.index]))
    assert len(answers) >= 5 and len({i for i, _ in answers}) >= 2  # the right piece differs between sentences
    snowman = first_cut(tok, ORDINARY[-1], 100, 512)  # "unbelievably" and "snowman" are cut into pieces
    words = ORDINARY[-1].split()
    first_pieces = [len(tok.encode(" ".join(words[:i])).ids) - 2 for i in range(len(words))]
    assert snowman.misread["words"] == first_pieces[510 % len(words)] != snowman.index  # counting words misleads
    assert first_cut(tok, "the cat sat", 3, 512) is None  # nothing cut: no question
    assert first_cut(tok, "hello", 600, 512) is None  # one piece: every wrong idea lands on it
