"""Looking inside: which explanation of the model can a student trust? Each one scored against knockouts."""

from dataclasses import replace

import streamlit as st

from encoder_core.lessons import inside as core
from ui.frame.charts import show_chart, show_table
from ui.frame.code import show_code
from ui.frame.inputs import note_long_text, usable_sentence
from ui.frame.modes import sidebar_model
from ui.frame.params import LessonParams, Param
from ui.frame.predict import fingerprint, predict_then_see, revealed
from ui.frame.quiz_widget import QUIZ_SEED, check_yourself_section
from ui.frame.sections import Section, finish, narrative, render_sections, start
from ui.frame.state import MODEL, ensure_valid, value
from ui.models import (
    cached_inside_sweep,
    inside_explanations,
    inside_knockouts,
    inside_lens_and_heads,
    masked_lm,
    minilm,
    run_inside_sweep,
)
from ui.questions import inside as questions
from ui.views import inside as view

STEP_CHOICES = (1, 4, 16, 64, 128)
SWEEP_REQUEST = "_inside_sweep_requested"
P = LessonParams(
    "inside",
    Param("inside_sentence", core.DEFAULT_SENTENCE, "text"),
    Param("inside_hide", 0, "int", 0, None),  # a word to hide when none is [MASK]: brought into range below
    Param("inside_baseline", "[PAD]", "choice", options=core.BASELINES),
    Param("inside_steps", core.DEFAULT_STEPS, "choice", options=STEP_CHOICES),
    shared=(QUIZ_SEED,),
)

start("inside", P)
note_long_text(P, {P.inside_sentence.name: "Sentence with one [MASK]"})
ensure_valid(P)
st.title("Looking inside")
st.caption(
    "Attention maps are often read as explanations. Here every explanation is put to the test: the model is "
    "asked to fill in a [MASK], then its heads and tokens are knocked out one at a time to see what really mattered."
)

asked = sidebar_model()
trained, load_error, notice = masked_lm(asked)
if notice:
    st.warning(notice)
if trained is None:
    st.error(f"This lesson needs a model with an MLM head, and none could be loaded.\n\n{load_error}")
    st.stop()
st.caption(
    f"The seeded small model has random weights and no MLM head, so this lesson runs on {trained.name}."
    if asked == "small"
    else f"This lesson runs on {trained.name}."
)
pre = minilm().model
if trained.choice != "minilm" and pre is not None:
    st.button(
        "Look inside all-MiniLM-L6-v2 instead",
        key="inside_use_minilm",
        on_click=lambda: st.session_state.update({MODEL.key: "minilm"}),
        help="Sets the sidebar's model: 6 layers × 12 heads, pretrained, under the lab's MLM head.",
    )
tokenizer, cfg = trained.tokenizer, trained.model.config

# ---- controls (always shown, also in lecture mode) ----
c1, c2 = st.columns([3, 2])
c1.text_input("Sentence with one [MASK]", key=P.inside_sentence.key, help="Type [MASK] where the model should guess.")
text = usable_sentence(value(P.inside_sentence), core.DEFAULT_SENTENCE)
words = core.maskable_words(tokenizer, text)
if words and "[MASK]" not in [w.upper() for w in words]:
    ensure_valid([replace(P.inside_hide, hi=len(words))])
    c2.selectbox(
        "No [MASK] typed: hide which word?",
        list(range(len(words) + 1)),
        key=P.inside_hide.key,
        format_func=lambda i: "the last whole word" if i == 0 else f"“{words[i - 1]}” (word {i} of {len(words)})",
    )
b1, b2 = st.columns(2)  # read by two sections: shown with the other controls, so a step keeps its setting
b1.selectbox("Integrated gradients: baseline", core.BASELINES, key=P.inside_baseline.key,
             help="What every token's vector starts from: the [PAD] or [MASK] embedding, or zeros.")  # fmt: skip
b2.select_slider("Integrated gradients: steps", STEP_CHOICES, key=P.inside_steps.key)
cloze = core.prepare_cloze(tokenizer, text, int(value(P.inside_hide)))
for line in cloze.notices:
    st.info(line)
ids, pos = tuple(cloze.ids), cloze.position
knock = inside_knockouts(trained.choice, ids, pos)
lens, attentions = inside_lens_and_heads(trained.choice, ids, pos)
n_heads = cfg.n_layers * cfg.n_heads
st.markdown(view.reading_text(cloze, knock))
knock_context = fingerprint(trained.choice, ids)  # both knockout questions': the sentence on this model
tokens_choice = core.token_choice(knock, attentions, cloze)
tokens_q = questions.most_important_token(tokens_choice, cloze.tokens, knock.answer)
# Until the token question is answered (when it is asked), no chart shows what hiding a token costs.
tokens_shown = not tokens_choice.asked or revealed(tokens_q, knock_context)


# ---- sections ----
def render_knockouts() -> None:
    narrative(
        "The ground truth is an intervention. Hide one token from attention (no query in any layer may look at it) "
        "and measure how the log-probability of the model's answer changes. Then zero one head's output before "
        f"W_O, one head at a time: {n_heads} heads, {n_heads} runs, done in one batch per layer. "
        "A negative change means the part was helping the answer."
    )
    if tokens_choice.asked:
        predict_then_see(tokens_q, knock_context, lambda: tokens_choice.answer, lambda _: reveal_tokens())
    else:
        st.caption(view.not_asked_text("token"))
        reveal_tokens()
    choice = core.head_choice(knock, attentions, pos)
    if choice.asked:
        q = questions.most_important_head(choice, knock.answer, cloze.tokens)
        predict_then_see(q, knock_context, answer=lambda: choice.answer, reveal=lambda _: reveal_heads(choice))
    else:
        st.caption(view.not_asked_text("head"))
        reveal_heads(choice)
    show_code(core.head_knockouts, core.token_knockouts)


def reveal_tokens() -> None:
    if tokens_choice.asked:
        st.markdown(view.token_choice_text(tokens_choice, knock, cloze))
    show_chart(view.token_knockout_chart(knock, cloze), "inside_tokens")


def reveal_heads(choice: core.HeadChoice) -> None:
    if choice.asked:
        st.markdown(view.head_choice_text(choice, knock))
    show_chart(view.head_knockout_chart(knock), "inside_heads")
    narrative(
        "Most heads can be removed with little effect on this answer (Michel et al. 2019 found the same at scale); "
        "a few matter. Whether a head's attention map looks sharp says little about which."
    )


def explanations_now():
    baseline, steps = value(P.inside_baseline), int(value(P.inside_steps))
    return inside_explanations(trained.choice, ids, pos, knock.answer_id, baseline, steps)


def render_explanations() -> None:
    narrative(
        "Five explanations, each a score per token, none of them an intervention. **Raw attention**: the last "
        "layer's weights from the [MASK], averaged over heads. **Rollout** (Abnar & Zuidema 2020): every layer's "
        "mean attention with the residual added (0.5·A + 0.5·I), multiplied from the input up. **Norm-based** "
        "(Kobayashi et al. 2020): the size of what each key actually adds, ‖α·f(x)‖, in the last layer. "
        "**Gradient × input**: the slope of f along each token's word vector, times that vector. **Integrated "
        "gradients** (Sundararajan et al. 2017): the slope averaged along a straight path from a baseline."
    )
    expl = explanations_now()
    show_chart(view.explanations_chart(expl, knock, cloze, truth=tokens_shown), "inside_explanations")
    if not tokens_shown:
        st.caption(view.TRUTH_HELD)
    st.markdown(view.completeness_text(expl.integrated))
    show_code(core.integrated_gradients)


def render_scores() -> None:
    narrative(
        "How far to trust each one? Rank the tokens by each explanation and by the knockout drop, and compare the "
        "orders with Spearman's ρ: 1 is the same order, 0 none in common, −1 the reverse. The [MASK] itself is "
        "left out: it is the question."
    )
    expl = explanations_now()
    scores = core.agreement(expl, knock, cloze)
    q, context = (
        questions.best_explanation(),
        fingerprint(trained.choice, ids, expl.integrated.baseline, expl.integrated.steps),
    )
    if core.explanation_asked(scores):
        predict_then_see(q, context, answer=lambda: list(core.METHODS).index(core.best_method(scores)),
                         reveal=lambda _: reveal_scores(scores), score=questions.explanation_score(scores))  # fmt: skip
    else:
        reveal_scores(scores)
    if core.explanation_asked(scores) and not revealed(q, context):  # the sweep's winner would answer it
        st.caption(view.SWEEP_HELD)
        return
    render_sweep(expl.integrated.baseline, expl.integrated.steps)


def reveal_scores(scores: dict[str, float]) -> None:
    st.markdown(view.agreement_text(scores))
    show_chart(view.sentence_agreement_chart(scores), "inside_agreement")


def request_sweep(setting: tuple) -> None:
    st.session_state[SWEEP_REQUEST] = setting


def render_sweep(baseline: str, steps: int) -> None:
    n = len(core.CLOZE_SENTENCES)
    st.markdown(f"**One sentence proves little.** The same scores over {n} fixed sentences:")
    result = cached_inside_sweep(trained.choice, baseline, steps)
    setting = (trained.choice, baseline, steps)
    slot = st.empty()
    if result is None:  # the callback keeps the click, so a rerun before the button cannot lose it
        slot.button(f"Score every explanation on {n} sentences", key="inside_run_sweep", on_click=request_sweep,
                    args=(setting,))  # fmt: skip
    if result is None and st.session_state.pop(SWEEP_REQUEST, None) == setting:
        bar = slot.progress(0.0, text=f"0 of {n} sentences")
        result = run_inside_sweep(
            trained.choice, baseline, steps, lambda d, t: bar.progress(d / t, text=f"{d} of {t} sentences")
        )
        slot.empty()
    if result is None:
        st.caption("Computed once per model, baseline and step count on this server, then kept for everyone.")
        return
    show_chart(view.sweep_chart(result), "inside_sweep")
    st.markdown(view.sweep_reading(result, trained.name))
    with st.expander(f"Every sentence's scores ({n})"):
        show_table(view.sweep_table(result), hide_index=True)
    show_code(core.spearman)


def render_lens() -> None:
    narrative(
        "The logit lens: apply the MLM head to the [MASK]'s stream after the embeddings and after every layer, as if "
        "the model stopped there. Where does the final answer appear? The head was trained on the last layer's "
        "output only, so early readings are rough, but the rise shows which layers build the answer."
    )
    show_chart(view.logit_lens_chart(lens), "inside_lens")
    show_chart(view.logit_rank_chart(lens), "inside_lens_rank")
    show_code(core.logit_lens)


render_sections(
    [
        Section(
            "Knock it out",
            f"Which of the {n_heads} heads, knocked out alone, costs the answer most?",
            render_knockouts,
        ),
        Section(
            "Five explanations",
            "Attention, rollout, norms and gradients each say which token matters; they do not agree.",
            render_explanations,
        ),
        Section(
            "Score them",
            "Which explanation ranks the tokens as the knockouts do?",
            render_scores,
        ),
        Section(
            "Logit lens",
            "Read the answer off the stream after every layer: where does it appear?",
            render_lens,
        ),
        check_yourself_section("inside"),
    ],
    P,
)
finish(P)
