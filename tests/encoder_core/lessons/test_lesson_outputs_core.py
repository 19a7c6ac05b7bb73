"""The outputs lesson's core: generated tasks, -100 labels, head shapes, span decoding, fine-tuning."""

import pytest
import torch

from encoder_core.finetune import tasks
from encoder_core.objectives.mlm_masking import IGNORE_INDEX


@pytest.fixture(scope="module")
def mlm(trained_mlm):
    model, tokenizer, _ = trained_mlm
    return model.bert, tokenizer


@pytest.mark.parametrize("task", tasks.TASKS)
def test_tasks_are_seeded_disjoint_and_sized(task):
    data = tasks.make_task(task, 0)
    assert (len(data.train), len(data.held_out)) == (tasks.N_TRAIN, tasks.N_HELD_OUT)
    texts = lambda part: {(e.text_a, e.text_b) for e in part}  # noqa: E731
    assert not texts(data.train) & texts(data.held_out)
    assert tasks.make_task(task, 0) == data
    assert tasks.make_task(task, 1).train[:5] != data.train[:5]


@pytest.mark.parametrize("task", ["sentence", "pair"])
def test_classification_tasks_hold_as_many_examples_of_each_class(task):
    data = tasks.make_task(task, 0)
    labels = [e.label for e in data.train + data.held_out]
    assert labels.count(0) == labels.count(1) == (tasks.N_TRAIN + tasks.N_HELD_OUT) // 2


def test_the_sentence_label_is_the_mood_flipped_by_not():
    for ex in tasks.make_task("sentence", 0).train[:300]:
        words = ex.text_a.split()
        mood = words[words.index("was") + 1 :]
        good = any(w in tasks.GOOD_MOODS for w in mood)
        assert ex.label == int(good != ("not" in mood))


def test_qa_answers_are_spans_of_the_passage_that_answer_the_question():
    for ex in tasks.make_task("qa", 0).train[:200]:
        words = ex.text_b.split()
        s, e = ex.answer
        answer = words[s : e + 1]
        assert 0 <= s <= e < len(words) and answer[0] == "the"
        if ex.text_a.startswith("where"):
            assert words[s - 1] in ("on", "near", "by")


def test_tag_labels_are_minus_100_exactly_at_specials_pads_and_later_pieces(tok):
    examples = [
        tasks.Example("the doormat sat", tags=(0, 3, 5)),  # "doormat" is two pieces: door ##mat
        tasks.Example("a cat", tags=(0, 2)),
    ]
    enc = tasks.encode(tok, "tagging", examples)
    assert enc.tokens[0] == ["[CLS]", "the", "door", "##mat", "sat", "[SEP]"]
    assert enc.labels[0].tolist() == [IGNORE_INDEX, 0, 3, IGNORE_INDEX, 5, IGNORE_INDEX]
    assert enc.tokens[1] == ["[CLS]", "a", "cat", "[SEP]", "[PAD]", "[PAD]"]
    assert enc.labels[1].tolist() == [IGNORE_INDEX, 0, 2, IGNORE_INDEX, IGNORE_INDEX, IGNORE_INDEX]


def test_generated_tags_follow_the_word_lists(tok):
    data = tasks.make_task("tagging", 0)
    ex = next(e for e in data.train if "cat" in e.text_a.split())
    assert ex.tags[ex.text_a.split().index("cat")] == tasks.TAGS.index("animal")
    enc = tasks.encode(tok, "tagging", data.train[:50])
    n_words = sum(len(e.text_a.split()) for e in data.train[:50])
    assert int((enc.labels != IGNORE_INDEX).sum()) == n_words  # every grammar word is one piece


def test_qa_labels_point_at_the_answer_tokens(tok):
    ex = tasks.Example(
        "where did the dog sleep ?", "the cat sat on the mat and the dog slept on the sofa", answer=(11, 12)
    )
    enc = tasks.encode(tok, "qa", [ex])
    s, e = enc.labels[0].tolist()
    assert enc.tokens[0][s : e + 1] == ["the", "sofa"]
    passage = [t for t, p in zip(enc.tokens[0], enc.passage[0].tolist()) if p]
    assert passage == ex.text_b.split()


@pytest.mark.parametrize("task", tasks.TASKS)
def test_head_shapes(mlm, task):
    encoder, tok = mlm
    data = tasks.make_task(task, 0)
    enc = tasks.encode(tok, task, data.train[:4])
    model = tasks.TaskModel(encoder, task, len(data.labels))
    with torch.inference_mode():
        out = model(enc.ids, enc.segments, enc.key_padding_mask, enc.passage)
    B, T = enc.ids.shape
    expected = {"sentence": (B, 2), "pair": (B, 2), "tagging": (B, T, len(tasks.TAGS)), "qa": (B, T, 2)}[task]
    assert tuple(out.shape) == expected
    if task == "qa":  # start and end are distributions over the passage only
        assert torch.isinf(out[~enc.passage]).all() and torch.isfinite(out[enc.passage]).all()


def test_mean_pooling_ignores_pads(mlm):
    encoder, tok = mlm
    model = tasks.TaskModel(encoder, "sentence", 2, pooling="mean").eval()
    short, long = tok.encode("the cat was happy"), tok.encode("the old brown dog was not happy at all")
    alone = tok.pad([short])
    both = tok.pad([short, long])
    with torch.inference_mode():
        a = model(alone.ids, alone.segments, alone.key_padding_mask)
        b = model(both.ids, both.segments, both.key_padding_mask)
    torch.testing.assert_close(a[0], b[0], atol=1e-5, rtol=0)


def test_spans_never_leave_the_passage_nor_end_before_they_start():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(200, 24, 2, generator=g) * 5
    passage = torch.zeros(200, 24, dtype=torch.bool)
    for i in range(200):
        lo = int(torch.randint(1, 12, (1,), generator=g))
        hi = int(torch.randint(lo, 23, (1,), generator=g))
        passage[i, lo : hi + 1] = True
    logits = logits.masked_fill(~passage[..., None], float("-inf"))
    spans = tasks.best_spans(logits)
    for i, (s, e) in enumerate(spans.tolist()):
        assert passage[i, s] and passage[i, e] and s <= e < s + tasks.MAX_ANSWER_TOKENS
        # brute force: no allowed pair scores higher
        best = max(
            float(logits[i, a, 0] + logits[i, b, 1])
            for a in range(24)
            for b in range(a, min(24, a + tasks.MAX_ANSWER_TOKENS))
            if passage[i, a] and passage[i, b]
        )
        assert float(logits[i, s, 0] + logits[i, e, 1]) == pytest.approx(best)


def test_fine_tuning_never_changes_the_shared_encoder(mlm):
    encoder, tok = mlm
    before = {k: v.clone() for k, v in encoder.state_dict().items()}
    run = tasks.fine_tune(encoder, tok, "sentence", steps=3)
    assert all(torch.equal(before[k], v) for k, v in encoder.state_dict().items())
    assert run.model.encoder is not encoder and not encoder.training


def test_a_fixed_seed_reproduces_the_curve_and_a_few_steps_lower_the_loss(mlm):
    encoder, tok = mlm
    seen = []
    a = tasks.fine_tune(encoder, tok, "tagging", steps=12, seed=3, progress=lambda s, n, loss: seen.append((s, n)))
    b = tasks.fine_tune(encoder, tok, "tagging", steps=12, seed=3)
    c = tasks.fine_tune(encoder, tok, "tagging", steps=12, seed=4)
    assert a.losses == b.losses and a.losses != c.losses
    assert seen == [(s, 12) for s in range(1, 13)]
    assert sum(a.losses[-3:]) / 3 < 0.7 * sum(a.losses[:3]) / 3


def test_frozen_trains_only_the_head_and_scratch_starts_elsewhere(mlm):
    encoder, tok = mlm
    frozen = tasks.fine_tune(encoder, tok, "qa", "frozen", steps=2)
    assert frozen.trainable == encoder.config.d_model * 2 + 2
    assert all(torch.equal(p, q) for p, q in zip(frozen.model.encoder.parameters(), encoder.parameters()))
    scratch = tasks.fine_tune(encoder, tok, "qa", "scratch", steps=1)
    assert frozen.losses[0] != scratch.losses[0]


# ---- the lesson module: what the page shows ----


def test_the_exercise_reproduces_seed_004s_published_shapes():
    from encoder_core.lessons import outputs as lesson

    shapes = lesson.exercise_shapes(**lesson.SHAPE_EXERCISE)
    assert shapes == {"hidden": (8, 20, 48), "logits": (8, 20, 1000), "chosen_logits": (12, 1000)}
    checks = lesson.check_shapes({"hidden": "8 x 20 x 48", "logits": "(8, 1000)", "chosen_logits": "twelve"}, shapes)
    assert [(c.correct, c.read) for c in checks] == [(True, (8, 20, 48)), (False, (8, 1000)), (False, None)]


@pytest.fixture(scope="module")
def quick_runs(mlm):
    encoder, tok = mlm
    return {task: tasks.fine_tune(encoder, tok, task, steps=5) for task in ("sentence", "tagging", "qa")}


def test_predictions_on_a_students_text_are_distributions(mlm, quick_runs):
    from encoder_core.lessons import outputs as lesson

    tok = mlm[1]
    pred = lesson.classify(quick_runs["sentence"], tok, "the cat was not 🦄 happy")
    assert sum(pred.probabilities) == pytest.approx(1.0) and pred.unknown == ["🦄"]
    tags = lesson.tag_words(quick_runs["tagging"], tok, "the girl sat on the doormat")
    assert tags.words == ["the", "girl", "sat", "on", "the", "doormat"] and tags.pieces[-1] == ["door", "##mat"]
    assert len(tags.tags) == 6 and all(t in tasks.TAGS for t in tags.tags)
    span = lesson.answer_span(quick_runs["qa"], tok, "where did the horse sleep ?", "the cat slept on the mat")
    assert span.passage_tokens == ["the", "cat", "slept", "on", "the", "mat"]
    assert sum(span.start_probs) == pytest.approx(1.0) and sum(span.end_probs) == pytest.approx(1.0)
    assert 0 <= span.start <= span.end < 6 and span.missing_words == ["horse"]
    with pytest.raises(ValueError, match="passage is empty"):
        lesson.answer_span(quick_runs["qa"], tok, "where did the cat sit ?", "\u200b")  # no token at all


def test_compare_starts_needs_one_run_per_start_on_one_task(mlm, quick_runs):
    from encoder_core.lessons import outputs as lesson

    with pytest.raises(ValueError, match="one run per starting point"):
        lesson.compare_starts({"finetune": quick_runs["sentence"]})
    runs = {s: tasks.fine_tune(*mlm, "sentence", s, steps=3) for s in tasks.STARTS}
    cmp = lesson.compare_starts(runs)
    assert cmp.pretraining_gain == runs["finetune"].held_out - runs["scratch"].held_out
    assert cmp.early_loss["frozen"] == runs["frozen"].losses[0]  # a tenth of 3 steps is the first step


def test_rank_accuracy_counts_orderings():
    from encoder_core.lessons.outputs import PAIR_KINDS, rank_accuracy

    kinds = [PAIR_KINDS[0], PAIR_KINDS[0], PAIR_KINDS[1], PAIR_KINDS[2]]
    assert rank_accuracy([0.9, 0.5, 0.7, 0.1], kinds) == 3 / 4  # 0.9 beats both; 0.5 beats only 0.1


# ---- the answers to the lesson's predictions, and how far a head's answer can be trusted ----


def test_the_tagging_logits_form_is_read_from_a_real_run(mlm):
    from encoder_core.lessons import outputs as lesson

    encoder, tok = mlm
    for batch in (
        [("the old dog was not happy", None), ("the girl was hungry", "she ate the bread")],
        [("a cat", None), ("the pharmacist sold medicine on thursday afternoon", "it rained")],
    ):
        shapes = lesson.head_shapes(encoder, tok, batch)
        padded = tok.pad([tok.encode(a, b) for a, b in batch])
        B, T = padded.ids.shape
        model = tasks.TaskModel(encoder, "tagging", len(tasks.TAGS))
        with torch.inference_mode():
            out = model(padded.ids, padded.segments, padded.key_padding_mask)
        forms = lesson.shape_forms(shapes, "tagging")
        assert forms["(B, T, C)"] == tuple(out.shape) == (B, T, len(tasks.TAGS))
        assert forms["(B, T, D)"] == (B, T, encoder.config.d_model) and forms["(B, C)"] == (B, len(tasks.TAGS))
        assert lesson.logits_form(shapes, "tagging") == "(B, T, C)"
        assert lesson.logits_form(shapes, "sentence") == "(B, C)"
        assert len(set(forms.values())) == len(lesson.SHAPE_FORMS)  # every option names a different shape


def comparison(frozen: float, scratch: float):
    from encoder_core.lessons.outputs import StartComparison

    held = {"finetune": 0.9, "frozen": frozen, "scratch": scratch}
    return StartComparison("qa", 10, held, {}, {}, 0.1, 100)


def test_probe_or_scratch_names_the_winner_outside_the_margin():
    from encoder_core.lessons.outputs import SAME_MARGIN, probe_or_scratch

    assert SAME_MARGIN == 0.02
    assert probe_or_scratch(comparison(0.80, 0.70)) == "frozen"
    assert probe_or_scratch(comparison(0.55, 0.70)) == "scratch"
    assert probe_or_scratch(comparison(0.70, 0.71)) == "same"
    assert probe_or_scratch(comparison(0.80, 0.78)) == "same"  # exactly 2 points: within, despite float rounding
    assert probe_or_scratch(comparison(0.7825, 0.76)) == "frozen"  # 2.25 points


def test_probe_or_scratch_on_real_runs(mlm):
    from encoder_core.lessons import outputs as lesson

    runs = {s: tasks.fine_tune(*mlm, "tagging", s, steps=4) for s in tasks.STARTS}
    gap = runs["frozen"].held_out - runs["scratch"].held_out
    expected = "same" if abs(gap) <= 0.02 + 1e-9 else ("frozen" if gap > 0 else "scratch")
    assert lesson.probe_or_scratch(lesson.compare_starts(runs)) == expected


def test_task_words_are_every_word_of_the_training_texts(tok):
    from encoder_core.lessons import outputs as lesson

    for task in tasks.TASKS:
        data = tasks.make_task(task, 0)
        by_hand = {w for ex in data.train for t in (ex.text_a, ex.text_b or "") for w in t.split()}
        assert lesson.task_words(task, 0) == by_hand
        for ex in data.train[:50]:
            assert lesson.unseen_words(tok, task, 0, ex.text_a, ex.text_b) == []
    assert "happy" in lesson.task_words("sentence") and "pharmacist" not in lesson.task_words("tagging")
    typed = "The Pharmacist was ANGRY, the pharmacist said"
    assert lesson.unseen_words(tok, "sentence", 0, typed) == ["pharmacist", "angry", ",", "said"]


def test_a_head_flags_answers_outside_its_training_as_guesses(mlm, quick_runs):
    from encoder_core.lessons import outputs as lesson

    tok = mlm[1]
    inside = lesson.classify(quick_runs["sentence"], tok, "the old dog was not happy")
    outside = lesson.classify(quick_runs["sentence"], tok, "the pharmacist was angry")
    assert inside.unseen == [] and outside.unseen == ["pharmacist", "angry"] and outside.guess
    for pred in (inside, outside):
        assert pred.confidence == max(pred.probabilities)
        assert pred.guess == (bool(pred.unseen) or pred.confidence < lesson.CONFIDENT)
    tags = lesson.tag_words(quick_runs["tagging"], tok, "the girl met a pharmacist on thursday")
    assert tags.seen == [True, True, False, True, False, True, False]
    assert tags.unseen == ["met", "pharmacist", "thursday"]
    assert tags.guessed == [not s or c < lesson.CONFIDENT for s, c in zip(tags.seen, tags.confidence)]
    assert tags.guess and all(tags.guessed[i] for i in (2, 4, 6))
    span = lesson.answer_span(quick_runs["qa"], tok, "when does the pharmacy open ?", "the cat slept on the mat")
    assert span.unseen == ["when", "does", "pharmacy"] and span.guess  # "open" is a QA verb ("opened")
    assert span.confidence == pytest.approx(span.start_probs[span.start] * span.end_probs[span.end])
    known = lesson.answer_span(quick_runs["qa"], tok, "where did the cat sleep ?", "the cat slept on the mat")
    assert known.unseen == [] and known.guess == (known.confidence < lesson.CONFIDENT)


# ---- which of the lesson's sentences is closest to the student's: mean-pooled all-MiniLM-L6-v2 ----

ORDINARY = (
    "the old dog was not happy",
    "the weather was cold and wet all week",
    "we ate bread and cheese in the kitchen",
    "the train to london was late again",
    "the children played in the park after school",
    "he felt sick and went to bed early",
    "the football match ended in a draw",
    "the old man read the book on the sofa",
)


def pooled_by_hand(minilm, texts):
    """Unit vectors: the mean of every real token's final vector ([CLS] and [SEP] included), and [CLS]'s."""
    out = {"mean": [], "cls": []}
    with torch.inference_mode():
        for text in texts:
            hidden = minilm.model(torch.tensor([minilm.tokenizer.encode(text).ids])).hidden[0]
            out["mean"].append(torch.nn.functional.normalize(hidden.mean(0), dim=0))
            out["cls"].append(torch.nn.functional.normalize(hidden[0], dim=0))
    return {k: torch.stack(v) for k, v in out.items()}


def test_the_closest_sentence_wins_by_the_margin_and_changes_with_the_sentence(minilm):
    from encoder_core.lessons.outputs import (
        CLOSEST_CANDIDATES,
        CLOSEST_MARGIN,
        CLOSEST_RELATED,
        PARAPHRASES,
        closest_sentence,
    )

    assert not set(CLOSEST_CANDIDATES) & {s for t in PARAPHRASES for s in t}  # nothing the pooling chart shows
    answers = set()
    for text in ORDINARY:
        c = closest_sentence(minilm, text)
        assert c is not None, text
        v = pooled_by_hand(minilm, [text, *CLOSEST_CANDIDATES])
        cosine = {p: dict(zip(CLOSEST_CANDIDATES, (v[p][1:] @ v[p][0]).tolist())) for p in v}
        best = max(CLOSEST_CANDIDATES, key=cosine["mean"].get)
        assert c.options[c.answer] == best and cosine["mean"][best] >= CLOSEST_RELATED
        for i, option in enumerate(c.options):
            assert c.cosine["mean"][i] == pytest.approx(cosine["mean"][option], abs=1e-5)
            assert c.cosine["cls"][i] == pytest.approx(cosine["cls"][option], abs=1e-5)
            if i != c.answer:
                assert cosine["mean"][best] - cosine["mean"][option] >= CLOSEST_MARGIN - 1e-6
        assert set(c.left_out) == {o for o in CLOSEST_CANDIDATES if 0 < cosine["mean"][best] - cosine["mean"][o] < 0.1}
        assert len(c.options) == 4 and c.gap >= CLOSEST_MARGIN
        answers.add(best)
    assert len(answers) >= 6  # the right option differs between ordinary sentences
    assert closest_sentence(minilm, "i love listening to music") is None  # nothing clearly closest: not asked
    from encoder_core.lessons.outputs import closest_for_any

    fallback = closest_for_any(minilm, ["i love listening to music", "", "the train to london was late again"])
    assert fallback.sentence == "the train to london was late again"


def test_the_closest_feedback_states_this_inputs_numbers(minilm):
    from encoder_core.lessons.outputs import closest_sentence
    from ui.frame.quiz_widget import escape_md
    from ui.questions.outputs import closest_question
    from ui.views.outputs import closest_answer_text

    for text in ORDINARY:
        c = closest_sentence(minilm, text)
        q = closest_question(c, text)
        v = pooled_by_hand(minilm, [text, *c.options])
        mean, cls = (v["mean"][1:] @ v["mean"][0]).tolist(), (v["cls"][1:] @ v["cls"][0]).tolist()
        shared = [[w for w in o.split() if w in text.split()] for o in c.options]  # a plain loop
        for i, option in enumerate(q.options):
            if i == c.answer:
                continue
            said = option.misconception
            assert f"{mean[c.answer]:.2f}" in said and f"{mean[i]:.2f}" in said  # the chart's numbers
            assert mean[c.answer] > mean[i]  # "is closer" / "further" as the chart shows
            if "Shared words" in said:
                assert len(set(shared[i])) > len(set(shared[c.answer]))
                assert f"has more of your words ({', '.join(dict.fromkeys(shared[i]))}) than" in said
            else:
                assert len(set(shared[i])) <= len(set(shared[c.answer]))
        answer = closest_answer_text(c, escape_md)
        assert f"cosine {mean[c.answer]:.2f}, {mean[c.answer] - sorted(mean)[-2]:.2f} ahead" in answer
        assert f"within {max(cls) - min(cls):.2f} of each other" in answer
        picks = max(range(len(cls)), key=cls.__getitem__)
        assert (f"would pick “{c.options[picks]}”" in answer) == (picks != c.answer)
