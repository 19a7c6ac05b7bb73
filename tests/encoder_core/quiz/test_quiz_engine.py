"""The quiz engine: every generator's stated answer against an independent recomputation, grading, draws.

The independent side uses numpy (or plain torch layers) and hand formulas, never the encoder_core
function that produced the answer.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from encoder_core import TEACHING_INIT_STD, build_encoder, preset
from encoder_core.model.model import POST_NORM_STAGES, PRE_NORM_STAGES
from encoder_core.model.tokenizer import english_tokenizer
from encoder_core.quiz import CHOICE_KINDS, LESSONS, Question, draw, generators, grade, question_for, question_seed
from encoder_core.quiz.base import Mistake, parse_int_tuple, parse_number, precision
from encoder_core.quiz.block import STAGE_NAMES, block_param_formula

SEEDS = range(20)
VOCAB = english_tokenizer().vocab  # the small model's vocabulary, id = index
ALL = {g.__name__: g for g in generators()}


@functools.cache
def questions(name: str) -> tuple[Question, ...]:
    return tuple(ALL[name](s) for s in SEEDS)


# ---------------------------------------------------------------- independent helpers


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_attention(q, k, v=None, causal: bool = False):
    q, k = np.asarray(q, float), np.asarray(k, float)
    s = q @ k.T / math.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.triu(np.ones(s.shape, bool), 1), -np.inf, s)
    w = softmax(s)
    return (w @ np.asarray(v, float) if v is not None else None), w


def half_up(x: Fraction) -> int:
    return math.floor(x + Fraction(1, 2))


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


_erf = np.vectorize(math.erf)


def np_small_model_attention(model_seed: int, ids: list[int]) -> list[np.ndarray]:
    """The small model's per-layer attention (H, T, T), recomputed in numpy from its weights (no mask)."""
    model = build_encoder(preset("small"), seed=model_seed, init_std=TEACHING_INIT_STD)
    p = {k: v.detach().double().numpy() for k, v in model.state_dict().items()}
    cfg = model.config
    H, dh, eps = cfg.n_heads, cfg.d_head, cfg.layer_norm_eps
    T = len(ids)
    x = p["embeddings.word_embeddings.weight"][ids] + p["embeddings.position_embeddings.weight"][:T]
    x = x + p["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, p["embeddings.LayerNorm.weight"], p["embeddings.LayerNorm.bias"], eps)
    out = []
    for layer in range(cfg.n_layers):
        pre = f"encoder.layer.{layer}."

        def lin(name, h, pre=pre):
            return h @ p[pre + name + ".weight"].T + p[pre + name + ".bias"]

        q, k, v = (
            lin(f"attention.self.{n}", x).reshape(T, H, dh).transpose(1, 0, 2) for n in ("query", "key", "value")
        )
        w = softmax(q @ k.transpose(0, 2, 1) / math.sqrt(dh))
        out.append(w)
        a = (w @ v).transpose(1, 0, 2).reshape(T, H * dh)
        x = layer_norm(
            x + lin("attention.output.dense", a),
            p[pre + "attention.output.LayerNorm.weight"],
            p[pre + "attention.output.LayerNorm.bias"],
            eps,
        )
        hidden = lin("intermediate.dense", x)
        hidden = 0.5 * hidden * (1 + _erf(hidden / math.sqrt(2)))
        x = layer_norm(
            x + lin("output.dense", hidden), p[pre + "output.LayerNorm.weight"], p[pre + "output.LayerNorm.bias"], eps
        )
    return out


def encode_words(text: str, text_b: str | None = None) -> list[int]:
    ids = [VOCAB.index("[CLS]")] + [VOCAB.index(w) for w in text.split()] + [VOCAB.index("[SEP]")]
    if text_b is not None:
        ids += [VOCAB.index(w) for w in text_b.split()] + [VOCAB.index("[SEP]")]
    return ids


def leading_int(text: str) -> int:
    return int(re.match(r"\s*(\d+)", text).group(1))


# ---------------------------------------------------------------- every generator: its answer, recomputed


def check_attention_identical_row(q: Question) -> None:
    _, bi = np_attention(q.inputs["q"], q.inputs["k"])
    _, ca = np_attention(q.inputs["q"], q.inputs["k"], causal=True)
    same = [i for i in range(len(bi)) if np.allclose(bi[i], ca[i], atol=1e-6)]
    assert same == [q.inputs["T"] - 1]
    assert q.answer.startswith(f"row {same[0]} ")


def check_attention_causal_weight(q: Question) -> None:
    s, i, j = q.inputs["scores"], q.inputs["query"], q.inputs["key"]
    assert q.answer == pytest.approx(softmax(np.array(s[: i + 1]))[j], abs=1e-9)


def check_attention_future_mass(q: Question) -> None:
    assert q.answer == pytest.approx(1 - softmax(np.array(q.inputs["scores"]))[0], abs=1e-9)


def check_attention_drop_last(q: Question) -> None:
    Q, K, V = (np.array(q.inputs[n]) for n in "qkv")
    gaps = {}
    for causal in (True, False):
        full, _ = np_attention(Q, K, V, causal)
        short, _ = np_attention(Q[:-1], K[:-1], V[:-1], causal)
        gaps[causal] = np.abs(full[:-1] - short).max()
    assert gaps[True] < 1e-9 < gaps[False]
    assert q.answer.startswith("Causal: the first outputs do not move")


def check_attention_rows_sum(q: Question) -> None:
    _, w = np_attention(q.inputs["q"], q.inputs["k"])
    assert np.allclose(w.sum(1), 1) and not np.allclose(w.sum(0), 1)
    assert q.answer.startswith("Each row")


def check_attention_output_value(q: Question) -> None:
    expected = softmax(np.array(q.inputs["scores"])) @ np.array(q.inputs["values"])
    assert q.answer == pytest.approx(expected, abs=1e-9)


def check_attention_causal_cell(q: Question) -> None:
    cells = {c: tuple(int(n) for n in re.findall(r"(?:query|key) (\d+)", c)) for c in q.choices}
    above_diagonal = [c for c, (row, col) in cells.items() if col > row]
    assert above_diagonal == [q.answer] and cells[q.answer] == tuple(q.inputs["cell"])


def check_padding_pad_weight(q: Question) -> None:
    ids = encode_words(q.inputs["text"]) + [VOCAB.index("[PAD]")] * q.inputs["n_pads"]
    w = np_small_model_attention(q.inputs["model_seed"], ids)[0][q.inputs["head"]]
    pads = range(len(ids) - q.inputs["n_pads"], len(ids))
    assert q.answer == pytest.approx(w[q.inputs["row"], list(pads)].sum(), abs=1e-5)
    assert q.figure.in_prompt and np.allclose(q.figure.weights, w, atol=1e-3)


def check_padding_batch_shape(q: Question) -> None:
    lengths = [len(a.split()) + 2 + (len(b.split()) + 1 if b else 0) for a, b in q.inputs["texts"]]
    assert parse_int_tuple(q.answer) == (len(lengths), max(lengths))


def check_padding_pad_count(q: Question) -> None:
    a, b = q.inputs["pair"]
    assert q.answer == (len(a.split()) + len(b.split()) + 3) - (len(q.inputs["single"].split()) + 2)


def check_padding_true_means(q: Question) -> None:
    assert q.answer.startswith("Every query of that sequence gives key")


def check_padding_zero_key_weight(q: Question) -> None:
    assert q.answer == pytest.approx(1 / (np.exp(q.inputs["scores"]).sum() + 1), abs=1e-9)


def check_padding_mean_pool(q: Question) -> None:
    real = [v for t, v in zip(q.inputs["tokens"], q.inputs["values"]) if t != "[PAD]"]
    assert q.answer == pytest.approx(np.mean(real), abs=1e-9)


def check_padding_masked_gap(q: Question) -> None:
    Q, K, V = (np.array(q.inputs[n]) for n in "qkv")
    alone, _ = np_attention(Q, K, V)
    K4, V4 = np.vstack([K, np.zeros(4)]), np.vstack([V, np.zeros(4)])
    without, _ = np_attention(Q, K4, V4)  # the three real queries, a zero key and value appended
    assert np.abs(without - alone).max() > 1e-6
    assert q.answer == "With the mask they are identical; without it they move."


def check_masking_chosen_count(q: Question) -> None:
    assert q.answer == half_up(Fraction(15, 100) * (q.inputs["N"] - 2))


def check_masking_split(q: Question) -> None:
    n = q.inputs["n"]
    chosen = half_up(Fraction(15, 100) * n)
    masked = half_up(Fraction(8, 10) * chosen)
    rnd = min(half_up(Fraction(1, 10) * chosen), chosen - masked)
    assert parse_int_tuple(q.answer) == (masked, rnd, chosen - masked - rnd)
    if n == 200:
        assert parse_int_tuple(q.answer) == (24, 3, 3)  # the published exercise


def check_masking_never_chosen(q: Question) -> None:
    assert q.answer.startswith("[CLS] and every [SEP]")


def check_masking_loss_value(q: Question) -> None:
    ce = np.array(q.inputs["cross_entropy"])
    assert q.answer == pytest.approx(ce[q.inputs["chosen"]].mean(), abs=1e-9)
    shown = [row[2] for row in q.table[1]]
    assert np.allclose(shown, ce, atol=5e-4)


def check_masking_loss_denominator(q: Question) -> None:
    assert q.answer.startswith(f"the {q.inputs['n_counted']} chosen positions")


def check_masking_label_of(q: Question) -> None:
    word = q.inputs["text"].split()[q.inputs["position"] - 1]
    expected = "−100" if q.inputs["action"] == 0 else str(VOCAB.index(word))
    assert q.answer.split(":")[0] == expected


def check_masking_shapes(q: Question) -> None:
    B, T, D, V, n = (q.inputs[k] for k in "BTDVn")
    expected = {
        "the encoder output": (B, T, D),
        "the MLM logits": (B, T, V),
        "the logits selected at the masked positions": (n, V),
    }[q.inputs["asked"]]
    assert parse_int_tuple(q.answer) == expected


def check_masking_cannot_generate(q: Question) -> None:
    assert q.answer.startswith("Every output is built from the whole input")


HAND_POST = ["input", "attention", "residual_1", "norm_1", "ffn_hidden", "ffn_activated", "ffn_output"]
HAND_POST += ["residual_2", "norm_2"]
HAND_PRE = ["input", "norm_1", "attention", "residual_1", "norm_2", "ffn_hidden", "ffn_activated", "ffn_output"]
HAND_PRE += ["residual_2"]


def check_block_param_count(q: Question) -> None:
    d = q.inputs["d"]
    assert q.answer == 12 * d * d + 13 * d
    if d <= 256:
        layer = nn.TransformerEncoderLayer(d, 4, 4 * d)
        assert q.answer == sum(p.numel() for p in layer.parameters())


def check_block_next_stage(q: Question) -> None:
    order = HAND_POST if q.inputs["norm"] == "post" else HAND_PRE
    assert q.answer == STAGE_NAMES[order[order.index(q.inputs["stage"]) + 1]]


def check_block_formula(q: Question) -> None:
    sub = q.inputs["sublayer"]
    post = q.inputs["norm"] == "post"
    assert q.answer == (f"x ← LayerNorm(x + {sub}(x))" if post else f"x ← x + {sub}(LayerNorm(x))")


def check_block_final_norm(q: Question) -> None:
    assert q.answer.startswith("Pre-norm")


def check_block_stage_shape(q: Question) -> None:
    B, T, d = q.inputs["B"], q.inputs["T"], q.inputs["d"]
    wide = q.inputs["stage"] in ("ffn_hidden", "ffn_activated")
    assert parse_int_tuple(q.answer) == (B, T, 4 * d if wide else d)


def check_block_layernorm_output(q: Question) -> None:
    assert q.answer == pytest.approx(0.0 if q.inputs["stat"] == "mean" else 1.0, abs=1e-3)


def check_block_ffn_share(q: Question) -> None:
    d = q.inputs["d"]
    assert q.answer == pytest.approx(100 * (8 * d * d + 5 * d) / (12 * d * d + 13 * d), abs=1e-9)


def check_heads_d_head(q: Question) -> None:
    assert q.answer == q.inputs["d"] / q.inputs["h"]


def check_heads_weight_count(q: Question) -> None:
    assert q.answer == q.inputs["B"] * q.inputs["H"] * q.inputs["T"] ** 2


def check_heads_shapes(q: Question) -> None:
    B, T, H, dh = (q.inputs[k] for k in ("B", "T", "H", "d_head"))
    asked = q.inputs["asked"]
    if asked.startswith("one layer's queries"):
        expected = (B, H, T, dh)
    elif asked.startswith("the attention weights"):
        expected = (B, H, T, T)
    elif asked.startswith("the heads' outputs"):
        expected = (B, T, H * dh)
    else:
        expected = (H * dh, H * dh)
    assert parse_int_tuple(q.answer) == expected


def check_heads_attention_params(q: Question) -> None:
    d, h = q.inputs["d"], q.inputs["h"]
    assert q.answer == 4 * (d * d + d) == sum(p.numel() for p in nn.MultiheadAttention(d, h).parameters())


def check_heads_top_key(q: Question) -> None:
    ids = encode_words(q.inputs["text"])
    w = np_small_model_attention(q.inputs["model_seed"], ids)[q.inputs["layer"]][q.inputs["head"]]
    j = int(w[q.inputs["query"]].argmax())
    assert leading_int(q.answer) == j


def check_heads_column_reading(q: Question) -> None:
    _, w = np_attention(q.inputs["q"], q.inputs["k"])
    assert leading_int(q.answer) == int(w[:, q.inputs["key"]].argmax())


def check_heads_pattern(q: Question) -> None:
    w, tokens = np.array(q.inputs["weights"]), q.inputs["tokens"]
    T = len(tokens)
    masses = {
        "previous token": np.mean([w[i, i - 1] for i in range(1, T)]),
        "next token": np.mean([w[i, i + 1] for i in range(T - 1)]),
        "[CLS]": w[:, 0].mean(),
        "[SEP]": w[:, T - 1].mean(),
        "self": np.diag(w).mean(),
    }
    best = max(masses, key=masses.get)
    assert q.answer == (best if masses[best] >= 0.4 else "broad")


CHECKS = {name.removeprefix("check_"): fn for name, fn in globals().items() if name.startswith("check_")}


def checked_elsewhere(name: str) -> bool:
    """A lesson added later keeps its generators' checks beside this file, in test_quiz_<lesson>.py, as
    check_<name> or check_<name without the lesson's prefix>."""
    lesson = ALL[name].lesson
    path = Path(__file__).parent / f"test_quiz_{lesson}.py"
    if not path.exists():
        return False
    text = path.read_text(encoding="utf-8")
    return any(f"def check_{n}(" in text for n in (name, name.removeprefix(f"{lesson}_")))


def test_every_generator_has_an_independent_check():
    assert set(CHECKS) <= set(ALL)
    missing = [name for name in ALL if name not in CHECKS and not checked_elsewhere(name)]
    assert not missing, f"no independent check for {missing}"


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_answer_matches_independent_recomputation(name):
    for q in questions(name):
        CHECKS[name](q)


# ---------------------------------------------------------------- every generator: well-formed, graded, repeatable


@pytest.mark.parametrize("name", sorted(ALL))
def test_questions_are_well_formed_and_grade_themselves(name):
    seen = set()
    for seed, q in zip(SEEDS, questions(name)):
        assert q.id == f"{name}:{seed}" and q.lesson == ALL[name].lesson
        assert q.prompt and q.explanation
        if q.kind in CHOICE_KINDS:
            assert q.answer in q.choices and len(set(q.choices)) == len(q.choices) >= 3
            assert grade(q, q.answer).correct
            assert grade(q, "  " + q.answer.upper() + " ").correct  # case and spacing do not matter
            for wrong in q.choices:
                if wrong != q.answer:
                    g = grade(q, wrong)
                    assert not g.correct and g.valid and q.answer in g.message
        elif q.kind == "numeric":
            assert f"±{q.tolerance:g}" in q.prompt if q.tolerance else "whole number" in q.prompt
            assert grade(q, repr(float(q.answer))).correct
            assert grade(q, q.answer_text).correct  # the shown answer, separators and rounding included
            off = float(q.answer) + 2 * q.tolerance + 1
            assert not grade(q, str(off)).correct
        else:
            assert grade(q, q.answer).correct
            numbers = parse_int_tuple(q.answer)
            assert grade(q, " x ".join(map(str, numbers))).correct
            assert not grade(q, str(tuple(n + 1 for n in numbers))).correct
        seen.add((q.prompt, q.choices, q.explanation))
    assert len(seen) > 1, "different seeds should give different questions"


@pytest.mark.parametrize("name", sorted(ALL))
def test_same_seed_same_question(name):
    assert ALL[name](5) == ALL[name](5)


def test_stage_orders_written_by_hand_match_the_model():
    assert list(POST_NORM_STAGES) == HAND_POST and list(PRE_NORM_STAGES) == HAND_PRE


@pytest.mark.parametrize("d", [16, 48, 128, 256, 384])
def test_block_formula_matches_a_built_block(d):
    from encoder_core.quiz.block import built_block

    total = sum(block_param_formula(d, 4 * d).values())
    assert total == 12 * d * d + 13 * d
    block = built_block(d) if d <= 256 else nn.TransformerEncoderLayer(d, 4, 4 * d)
    assert total == sum(p.numel() for p in block.parameters())


def test_generators_leave_the_global_random_stream_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    for name in ALL:
        ALL[name](11)
    assert torch.equal(torch.rand(3), expected)


# ---------------------------------------------------------------- counts, drawing, quiz seeds


def test_at_least_five_generators_per_lesson():
    assert all(len(generators(lesson)) >= 5 for lesson in LESSONS)
    assert len(generators()) >= 25


def test_draw_is_deterministic_and_covers_every_generator():
    for lesson in (*LESSONS, None):
        n = len(generators(lesson))
        names = {draw(lesson, s).id.split(":")[0] for s in range(n)}
        assert names == {g.__name__ for g in generators(lesson)}
        assert draw(lesson, 17) == draw(lesson, 17)
        if lesson:
            assert all(draw(lesson, s).lesson == lesson for s in range(n))


def test_a_quiz_shows_every_kind_of_question_before_repeating():
    for lesson in ("masking", None):
        n = len(generators(lesson))
        ids = [question_for(lesson, 42, i).id.split(":")[0] for i in range(n)]
        assert len(set(ids)) == n
        assert [question_for(lesson, 42, i).id for i in range(3)] == [question_for(lesson, 42, i).id for i in range(3)]
        assert [question_seed(lesson, 42, i) for i in range(5)] != [question_seed(lesson, 43, i) for i in range(5)]


def test_unknown_lesson_and_bad_seed_are_refused():
    with pytest.raises(ValueError):
        draw("nope", 0)
    with pytest.raises(ValueError):
        draw("heads", -1)
    with pytest.raises(ValueError):
        ALL["heads_d_head"](-3)


# ---------------------------------------------------------------- reading what people type


@pytest.mark.parametrize(
    "text, value",
    [
        ("0.25", 0.25),
        (" .25 ", 0.25),
        ("1e-3", 0.001),
        ("1,234,567", 1234567),
        ("7 087 872", 7087872),
        ("0,5", 0.5),
        ("3/4", 0.75),
        ("66.5%", 66.5),
        ("−2", -2.0),
        ("-2", -2.0),
    ],
)
def test_parse_number_reads_common_forms(text, value):
    assert parse_number(text) == pytest.approx(value)


@pytest.mark.parametrize(
    "text", ["", "   ", "abc", "nan", "inf", "-inf", "1e400", "1/0", "1..2", "12 cats", "<b>1</b>"]
)
def test_parse_number_refuses_non_numbers(text):
    assert parse_number(text) is None


@pytest.mark.parametrize(
    "text", ["(8, 20, 48)", "8,20,48", "[8, 20, 48]", "8 x 20 x 48", "8×20×48", "torch.Size([8, 20, 48])", "(8,20,48,)"]
)
def test_shapes_in_any_common_spelling(text):
    assert parse_int_tuple(text) == (8, 20, 48)


@pytest.mark.parametrize("text", ["", "()", "(8, 20.5)", "eight, twenty", "(8, -20)"])
def test_unreadable_shapes(text):
    assert parse_int_tuple(text) is None


def numeric_question(answer: float, tolerance: float) -> Question:
    return Question("How much?", "numeric", answer, "because", id="t:0", lesson="attention", tolerance=tolerance)


def test_numeric_grading_messages():
    q = numeric_question(0.1234, 0.01)
    for bad in ("", "abc", "<script>alert(1)</script>", None, "nan"):
        g = grade(q, bad)
        assert not g.correct and not g.valid and "enter a number" in g.message
    assert grade(q, "0.13").correct and grade(q, "0,115").correct
    wrong = grade(q, "0.2")
    assert not wrong.correct and wrong.valid and "0.123" in wrong.message
    whole = numeric_question(7087872, 0)
    assert grade(whole, "7,087,872").correct and not grade(whole, "7087873").correct


def test_exact_grading_of_text_answers():
    q = Question("Name it", "exact", "Post-norm", "because", id="t:0", lesson="block")
    assert grade(q, "  post-NORM. ").correct
    assert not grade(q, "pre-norm").correct
    assert not grade(q, "").valid


def test_exact_shape_grading_refuses_words():
    q = Question("Shape?", "exact", "(2, 4, 5, 8)", "because", id="t:0", lesson="heads")
    g = grade(q, "four by five")
    assert not g.correct and not g.valid and "separated by commas" in g.message
    assert not grade(q, "(2, 4, 5)").correct  # a missing dimension is wrong, not unreadable


def test_choice_grading_refuses_text_that_is_not_an_option():
    q = ALL["attention_identical_row"](0)
    g = grade(q, "something else")
    assert not g.correct and not g.valid and "pick one" in g.message


# ---------------------------------------------------------------- tolerances, mistakes, coverage


@pytest.mark.parametrize("answer", [0.009, 0.0004, -0.003, 0.05, 0.35, 3.09, 66.5, 1234.5])
def test_a_tolerance_relative_to_the_answer_never_lets_zero_pass(answer):
    p = precision(answer)
    q = numeric_question(answer, p.tolerance)
    assert not grade(q, "0").correct
    shown = f"{answer:.{p.decimals}f}"
    assert grade(q, shown).correct  # the answer rounded to the decimals asked for counts
    assert abs(float(shown)) >= 10 * 10.0**-p.decimals  # at least two significant digits asked for
    assert p.tolerance >= 0.5 * 10.0**-p.decimals and p.tolerance < abs(answer) / 10


def test_the_reported_near_zero_case():
    p = precision(0.009)
    assert p.decimals >= 4 and p.tolerance < 0.009
    assert not grade(numeric_question(0.009, p.tolerance), "0").correct


def test_an_answer_that_is_zero_by_construction_is_asked_as_zero():
    p = precision(0.0)
    q = numeric_question(0.0, p.tolerance)
    assert grade(q, "0").correct and not grade(q, "0.1").correct


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_non_zero_numeric_answer_rejects_zero(name):
    for q in questions(name):
        if q.kind == "numeric" and float(q.answer) != 0:
            assert not grade(q, "0").correct, q.id


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_generator_names_mistakes(name):
    with_mistakes = [q for q in questions(name) if q.mistakes]
    assert len(with_mistakes) >= 0.5 * len(SEEDS), f"{name}: too few questions name a likely mistake"


def test_a_matching_wrong_answer_gets_its_diagnosis():
    q = Question(
        "How many parameters?",
        "numeric",
        37248.0,
        "because",
        id="t:0",
        lesson="heads",
        mistakes=(Mistake(36864.0, "The biases were left out."),),
    )
    g = grade(q, "36,864")
    assert not g.correct and g.mistake == q.mistakes[0] and "The biases were left out." in g.message
    other = grade(q, "40000")
    assert not other.correct and other.mistake is None and "biases" not in other.message


def test_a_quiz_of_ten_covers_every_lesson_for_every_seed():
    gens = generators()
    for quiz_seed in range(201):
        lessons = {gens[question_seed(None, quiz_seed, i) % len(gens)].lesson for i in range(10)}
        assert lessons == set(LESSONS), f"quiz {quiz_seed} leaves out {set(LESSONS) - lessons}"


def test_quiz_42_has_a_question_from_the_block_and_reproduces():
    first = [question_for(None, 42, i) for i in range(10)]
    assert "block" in {q.lesson for q in first}
    assert [q.id for q in first] == [question_for(None, 42, i).id for i in range(10)]


# ---------------------------------------------------------------- named mistakes, recomputed by hand


def test_the_biases_mistake_is_four_d_squared():
    q = next(q for q in questions("heads_attention_params") if q.mistakes)
    d = q.inputs["d"]
    by_answer = {m.answer: m.diagnosis for m in q.mistakes}
    assert "biases were left out" in by_answer[4 * d * d]
    assert "W_O was left out" in by_answer[3 * (d * d + d)]


def test_block_parameter_mistakes_are_the_formula_without_a_part():
    for q in questions("block_param_count"):
        d = q.inputs["d"]
        by_answer = {m.answer: m.diagnosis for m in q.mistakes}
        assert "biases" in by_answer[12 * d * d + 4 * d]
        assert "LayerNorms" in by_answer[12 * d * d + 9 * d]


def test_mean_pool_mistakes_are_the_other_averages():
    for q in questions("padding_mean_pool"):
        values = np.array(q.inputs["values"])
        real = np.array([t != "[PAD]" for t in q.inputs["tokens"]])
        expected = {
            "The pads were averaged in": values.mean(),
            "[CLS] and [SEP] were left out, but the mask keeps them": values[1 : real.sum() - 1].mean(),
            "The real positions' sum was divided by every position, pads included": values[real].sum() / len(values),
        }
        for m in q.mistakes:
            key = next(k for k in expected if m.diagnosis.startswith(k))
            assert m.answer == pytest.approx(expected[key], abs=1e-9)


def test_causal_weight_mistake_is_the_unmasked_softmax():
    for q in questions("attention_causal_weight"):
        s, i, j = np.array(q.inputs["scores"]), q.inputs["query"], q.inputs["key"]
        for m in q.mistakes:
            if "causal mask was left out" in m.diagnosis:
                assert m.answer == pytest.approx(softmax(s)[j], abs=1e-9)
            if "a query may look at itself" in m.diagnosis:
                assert m.answer == pytest.approx(softmax(s[:i])[j], abs=1e-9)
