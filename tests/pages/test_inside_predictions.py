"""Looking inside's three predictions as a student meets them: nothing on the page answers one before it is
committed (every numbers panel open; every section on one page, and each tab alone; the sweep already run by
someone else on this server), the reveal then shows it, the feedback's numbers are the model's own, a near tie
counts both, and each prediction names a quiz generator that practises the same idea."""

from __future__ import annotations

import apptest_helpers as helpers
import pytest
import torch
from apptest_helpers import all_text, commit_prediction, figures, no_exception, open_numbers, page_evidence
from quiz_checks import assert_practised

import ui.models
from encoder_core.lessons import inside as core
from ui.questions import inside as questions
from ui.views import inside as view

pytestmark = pytest.mark.slow
TOKEN, HEAD, METHOD = "inside-token", "inside-head", "inside-explanation"
CHARTS = ("inside_tokens", "inside_heads", "inside_explanations", "inside_agreement", "inside_sweep", "inside_lens")
CHARTS += ("inside_lens_rank",)
N_TABS = 5  # four sections and "Check yourself"
STEPS = {"inside_steps": "4"}  # integrated gradients in 4 steps: the scores are the page's, quickly
FEW = 4  # sentences in the sweep run here


@pytest.fixture(scope="module")
def run(trained_mlm):
    """The default sentence on the lab's trained MLM (the sidebar's default), as the page computes it."""
    model, tok, _ = trained_mlm
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    knock = core.knockouts(model, tok, cloze)
    attentions = core.attention_maps(model, cloze)
    expl = core.explanations(model, tok, cloze, knock.answer_id, "[PAD]", 4)
    return model, tok, cloze, knock, attentions, core.agreement(expl, knock, cloze)


@pytest.fixture
def swept(trained_mlm, monkeypatch):
    """The sweep over the fixed sentences, already run on this server (by anyone) for this model and setting."""
    monkeypatch.setattr(core, "CLOZE_SENTENCES", core.CLOZE_SENTENCES[:FEW])
    ui.models._inside_sweep_store.clear()
    result = ui.models.run_inside_sweep("small", "[PAD]", 4)
    yield result
    ui.models._inside_sweep_store.clear()


def evidence(at) -> str:
    return page_evidence(no_exception(open_numbers(at, *CHARTS)))


def offered(at, key: str) -> list[str]:
    """A choice's options as labels (the radio shows each with its letter: "A. label")."""
    return [o.split(". ", 1)[1] for o in at.radio(key=f"_predict_guess_{key}").options]


def open_asking(query=None, every_section=True):
    return helpers.open_linked("inside", {**STEPS, **(query or {})}, every_section=every_section, skip=False)


def marks(run, swept) -> dict[str, list[str]]:
    """What answers each question: the strings of the charts, alternatives and sentences that give it away."""
    _, _, cloze, knock, _, scores = run
    layer, head = knock.most_important_head()
    winner = min(core.scored_positions(cloze), key=lambda i: float(knock.tokens[i]))
    return {
        TOKEN: [
            view.token_knockout_chart(knock, cloze).alt,
            "knockout drop (truth)",
            f"Hiding “{cloze.tokens[winner]}” costs the answer most",
            f"Hiding **“{cloze.tokens[winner]}”** (token {winner})",
        ],
        HEAD: [view.head_knockout_chart(knock).alt, f"Knocking out **layer {layer}, head {head}**"],
        METHOD: [
            view.sentence_agreement_chart(scores).alt,
            view.agreement_text(scores),
            f"agrees best with the knockouts over the {FEW} sentences",
            view.sweep_chart(swept).alt,
        ],
    }


def absent(found_in: str, strings: list[str], where: str) -> None:
    found = [m for m in strings if m in found_in]
    assert not found, f"{where}: the answer is on the page before the commit: {found}"


def test_nothing_answers_a_question_before_its_commit_and_each_reveal_shows_its_own(run, swept):
    _, _, cloze, knock, attentions, scores = run
    evidence_of = marks(run, swept)
    at = open_asking()
    page = evidence(at)
    for key, strings in evidence_of.items():
        absent(page, strings, f"{key}, every section")
    assert {"inside_explanations", "inside_lens"} <= set(figures(at))
    assert view.TRUTH_HELD in all_text(at) and view.SWEEP_HELD in all_text(at)
    assert "inside_sweep" not in figures(at)  # run on this server already, and still held back
    token = core.token_choice(knock, attentions, cloze)
    head = core.head_choice(knock, attentions, cloze.position)
    answers = {
        TOKEN: questions.token_name(cloze.tokens, token.candidates[token.answer]),
        HEAD: questions.head_name(*head.candidates[head.answer]),
        METHOD: core.METHODS[core.best_method(scores)],
    }
    done = []
    for key in (TOKEN, HEAD, METHOD):  # one at a time: each reveal shows its answer and no other's
        assert answers[key] in offered(at, key)
        at = no_exception(commit_prediction(at, key, answers[key]))
        assert any(s.value.startswith("Right") for s in at.success)
        done.append(key)
        page = evidence(at)
        for other, strings in evidence_of.items():
            if other in done:
                assert all(m in page for m in strings), (other, [m for m in strings if m not in page])
            else:
                absent(page, strings, f"{other}, after {key}")
    assert {"inside_tokens", "inside_heads", "inside_agreement", "inside_sweep"} <= set(figures(at))


def test_no_tab_answers_a_question_before_its_commit(run, swept):
    evidence_of = marks(run, swept)
    for step in range(N_TABS):
        at = open_asking({"step": str(step)}, every_section=False)
        page = evidence(at)
        for key, strings in evidence_of.items():
            absent(page, strings, f"{key}, tab {step}")


def test_a_wrong_token_is_told_its_own_change_and_attention_beside_the_right_ones(run):
    model, tok, cloze, knock, attentions, _ = run
    choice = core.token_choice(knock, attentions, cloze)
    best = choice.candidates[choice.answer]
    with torch.inference_mode():
        _, out = model(torch.tensor([cloze.ids]))  # the model's own attention, read independently
    for i, reason in zip(choice.candidates, choice.reasons, strict=True):
        if reason == "answer":
            continue
        at = no_exception(commit_prediction(open_asking(), TOKEN, questions.token_name(cloze.tokens, i)))
        assert any(e.value.startswith("Not quite") for e in at.error)
        text = all_text(at)
        assert f"changes the answer's log-probability by {float(knock.tokens[i]):+.2f}" in text
        assert f"{float(knock.tokens[best]):+.2f}" in text and f"“{cloze.tokens[best]}”" in text
        assert float(knock.tokens[i]) >= float(knock.tokens[best]) + core.KNOCKOUT_MARGIN  # what "above" says
        if reason == "attended":
            weight = float(out.attentions[-1][0, :, cloze.position, i].mean())
            assert f"give “{cloze.tokens[i]}” {weight:.2f} of the [MASK]'s attention" in text
        close = ", ".join(f"“{cloze.tokens[j]}” ({float(knock.tokens[j]):+.2f})" for j in choice.close)
        assert not close or f"too close to call (within 0.3 of it): {close}." in text


def test_a_wrong_head_is_told_its_own_change_beside_the_right_ones(run):
    model, tok, cloze, knock, attentions, _ = run
    choice = core.head_choice(knock, attentions, cloze.position)
    best = choice.candidates[choice.answer]
    with torch.inference_mode():
        _, out = model(torch.tensor([cloze.ids]))
    for c, reason in zip(choice.candidates, choice.reasons, strict=True):
        if reason == "answer":
            continue
        at = no_exception(commit_prediction(open_asking(), HEAD, questions.head_name(*c)))
        text = all_text(at)
        assert f"by {float(knock.heads[c]):+.2f}" in text
        assert f"{float(knock.heads[best]):+.2f} {'for' if reason != 'runner-up' else 'of'} layer {best[0]}" in text
        assert "is not the one that matters" not in text
        if reason == "sharpest":
            row = out.attentions[c[0]][0, c[1], cloze.position]
            assert f"gives {float(row.max()):.2f} of the [MASK]'s attention to one token" in text
            assert f"(“{cloze.tokens[int(row.argmax())]}”)" in text


def test_an_explanation_within_the_margin_of_the_best_counts_too(run):
    scores = run[5]
    best = core.best_method(scores)
    close = [m for m in core.best_methods(scores) if m != best]
    assert close and core.explanation_asked(scores)  # the default sentence has a near tie to show
    at = no_exception(commit_prediction(open_asking(), METHOD, core.METHODS[close[0]]))
    said = " ".join(s.value for s in at.success)
    assert f"Right: its ρ, {scores[close[0]]:+.2f}, is within 0.1 of the highest ({scores[best]:+.2f}" in said
    outside = next(m for m in core.METHODS if m not in core.best_methods(scores))
    at = no_exception(commit_prediction(open_asking(), METHOD, core.METHODS[outside]))
    assert any(e.value.startswith("Not quite") for e in at.error)


def test_each_question_is_practised_by_a_generator_of_its_idea(run):
    _, _, cloze, knock, attentions, _ = run
    token = core.token_choice(knock, attentions, cloze)
    head = core.head_choice(knock, attentions, cloze.position)
    assert_practised(questions.most_important_token(token, cloze.tokens, knock.answer))
    assert_practised(questions.most_important_head(head, knock.answer, cloze.tokens))
    assert_practised(questions.best_explanation())
