"""Attention: an encoder attends both ways. Causal vs bidirectional weights, what that costs, the seed example."""

import streamlit as st

from encoder_core.lessons.attention import (
    DROP_OUTCOMES,
    LOOK_MARGIN,
    MOVE_MARGIN,
    ROUNDING,
    ROW_OUTCOMES,
    compare_masks,
    contrast_word,
    drop_is_clear,
    drop_outcome,
    drop_token,
    last_word_position,
    look_ahead_run,
    row_facts,
    row_outcome,
    seed001_reading,
)
from ui.frame.charts import show_chart, show_chart_row, show_table
from ui.frame.code import show_code
from ui.frame.inputs import note_long_text, report_encoding, show_model, usable_sentence
from ui.frame.modes import sidebar_model, sidebar_seed
from ui.frame.notices import has_trained
from ui.frame.params import LessonParams, Param
from ui.frame.predict import fingerprint, predict_then_see, revealed
from ui.frame.quiz_widget import QUIZ_SEED, check_yourself_section
from ui.frame.sections import (
    Section,
    finish,
    narrative,
    render_sections,
    rerun_open_section,
    show_metrics,
    side_by_side,
    start,
)
from ui.frame.state import ensure_valid, value
from ui.models import lesson_model, trained_lesson_model
from ui.questions import attention as questions
from ui.views import attention as view
from ui.views.figures import numbers_text

DEFAULT_SENTENCE = "the cat sat down"
BANK_SENTENCES = ("she sat on the bank of the river", "she sat on the bank and counted the money")
BANK_WORD = "bank"
DROP_CHOICES = ("word", "sep")  # the sentence's last word piece, or the [SEP] after it


chosen = lesson_model(sidebar_model(), sidebar_seed())
model, tokenizer = chosen.encoder, chosen.tokenizer
cfg = model.config

P = LessonParams(
    "attention",
    Param("sentence", DEFAULT_SENTENCE, "text"),
    Param("layer", 0, "int", 0, cfg.n_layers - 1),
    Param("head", 0, "int", 0, cfg.n_heads - 1),
    Param("drop", "word", "choice", options=DROP_CHOICES),
    shared=(QUIZ_SEED,),
)
start("attention", P)
note_long_text(P, {"sentence": "Sentence"})
ensure_valid(P)

st.title("Attention: every token sees the whole sentence")
st.markdown(
    "A decoder adds a **causal mask**: token *i* may only look at tokens 0…*i*. An encoder leaves that mask "
    "out, so every token attends to every other token, on both sides. Below, the same model runs both ways "
    "on your sentence."
)

show_model(chosen)

st.text_input(
    "Sentence",
    key=P.sentence.key,
    help="Cut into word pieces from BERT's English vocabulary; a word it lacks whole is split into pieces.",
)
c_layer, c_head = st.columns(2)
# Only the first section reads the layer and head: moving them reruns the open section, not the page.
c_layer.slider("Layer", 0, cfg.n_layers - 1, key=P.layer.key, on_change=rerun_open_section)
c_head.slider("Head", 0, cfg.n_heads - 1, key=P.head.key, on_change=rerun_open_section)

text = usable_sentence(value(P.sentence), DEFAULT_SENTENCE)
enc = tokenizer.encode(text, max_length=cfg.max_positions, truncate=True)
report_encoding(enc, cfg.max_positions)
tokens = enc.tokens
st.caption(f"The model sees {len(tokens)} tokens:")
st.text(" ".join(tokens))

seed = seed001_reading()  # tiny (four 3-d vectors), and its number is in a section's takeaway


def rows_question():
    """The first section's head on this sentence: its grids, the facts asked about, the question, its context."""
    layer, head = int(value(P.layer)), int(value(P.head))  # read here: a section's own rerun sees the new ones
    comparison = compare_masks(model, enc.ids, layer, head)
    facts = row_facts(comparison)
    context = fingerprint(chosen.name, sidebar_seed(), enc.ids, layer, head)
    return comparison, facts, questions.same_rows(facts, tokens), context


def rows_settled() -> bool:
    """Has the row question been answered (or is there none to ask) on this sentence, layer and head?"""
    _, facts, question, context = rows_question()
    return not facts.askable or revealed(question, context)


def render_masks() -> None:
    comparison, facts, question, context = rows_question()
    charts = view.mask_pair_charts(comparison, tokens)
    if not facts.askable:  # no one clear answer on this head: shown, not asked
        st.info(view.rows_not_asked(facts, len(tokens)))
        reveal_masks(comparison, charts, comparison.layer)
        return
    if not revealed(question, context):  # the worked half: the bidirectional grid alone
        show_chart(charts[0], "attention_bidirectional")
    predict_then_see(
        question,
        context,
        answer=lambda: ROW_OUTCOMES.index(row_outcome(comparison)),
        reveal=lambda _: reveal_masks(comparison, charts, comparison.layer),
    )


def reveal_masks(comparison, charts, layer: int) -> None:
    show_chart_row(charts, ("attention_bidirectional", "attention_causal"), side_by_side(len(tokens)))
    same = row_facts(comparison).unchanged
    st.markdown(
        f"Rows the same under both masks (to {ROUNDING:g}): **{', '.join(map(str, same))}** of 0–{len(tokens) - 1}."
    )
    m1, m2, m3 = st.columns(3)
    m1.metric("Row sums: max |sum − 1|", f"{comparison.max_row_sum_error:.1e}", help="Float rounding only.")
    m2.metric("Causal: max above diagonal", f"{comparison.causal_upper_max:.1f}")
    m3.metric(
        "Last row: max difference",
        f"{comparison.last_row_max_diff:.1f}",
        help="Largest |bidirectional − causal| in the last row.",
    )
    # A plain table of text: a few short rows, lighter for the browser to redraw than a data grid, and
    # much cheaper to send than a pandas Styler (which cost more server time than the model here).
    st.table(view.row_sums_text(comparison, tokens))
    narrative(
        "Each **row** is one query token and how it shares its attention among the keys: a softmax, so every "
        "row adds up to 1 in both grids (the sums are in the table above). The causal grid is zero above the "
        "diagonal, because a token may not look ahead. The **last row is identical** in both: the last token "
        "already sees every token under the causal mask, so the mask removes nothing from its row."
    )
    own = comparison.last_row_diff_own_runs
    narrative(
        f"Both grids are computed from the **same input to layer {layer}** (the bidirectional run's), so they "
        "differ only by the mask. "
        + (
            "At layer 0 that input is just the embeddings, the same for both models."
            if layer == 0
            else f"In a model that is causal all the way through, layer {layer} would receive a different input "
            f"(the earlier layers were causal too), and its last row would differ by up to {own:.3f}."
        )
    )
    show_code(compare_masks)


def drop_position() -> int:
    return last_word_position(tokens) if value(P.drop) == "word" else len(tokens) - 1


def drop_question():
    """The token dropped, the two runs, the question on them and its context."""
    position = drop_position()
    dropped = drop_token(model, enc.ids, position)
    return dropped, questions.drop(dropped), fingerprint(chosen.name, sidebar_seed(), enc.ids, position)


def render_drop_last() -> None:
    word = last_word_position(tokens)
    choices = {
        "word": f"the last word piece, “{tokens[word]}” (token {word})",
        "sep": f"[SEP] (token {len(tokens) - 1})",
    }
    st.radio("Drop", DROP_CHOICES, key=P.drop.key, format_func=choices.get, horizontal=True)
    dropped, question, context = drop_question()
    if not drop_is_clear(dropped):  # a shift between rounding and MOVE_MARGIN: no one clear answer
        st.info(f"A shift here lies between float rounding and {MOVE_MARGIN:g}: nothing is asked, the runs are shown.")
        reveal_drop(dropped)
        return
    answer = DROP_OUTCOMES.index(drop_outcome(dropped))
    predict_then_see(question, context, answer=lambda: answer, reveal=lambda _: reveal_drop(dropped))


def reveal_drop(dropped) -> None:
    show_chart(view.drop_last_chart(dropped, tokens), "drop_last")
    show_metrics(view.drop_last_metrics(dropped))
    narrative(
        "Run the sentence, then run it again without one token (its last word, or the [SEP] that closes it), and "
        "measure how far the final vector of each token before it moves. With the causal mask nothing moves: no "
        "earlier token ever looked at a later one "
        f"(a shift below {ROUNDING:g}, where there is one, is float rounding: the processor may add up a shorter "
        "input in a different order). "
        "Without the mask every earlier vector changes, because each was built from the whole input.\n\n"
        "That is the price of an encoder. Add one token and **every** vector must be recomputed: there is no "
        "reusing earlier work as the input grows, and so no writing text left to right one token at a time. "
        "In return, each vector knows the words on both sides of it."
    )
    show_code(drop_token)


def render_bank() -> None:
    dropped, question, context = drop_question()
    if drop_is_clear(dropped) and not revealed(question, context):
        st.info("Answer the prediction in “Drop a token” first: the two sentences here show its answer.")
        return
    bank_a, bank_b = (tokenizer.encode(s) for s in BANK_SENTENCES)
    bank = contrast_word(model, bank_a.ids, bank_b.ids, bank_a.tokens, bank_b.tokens, BANK_WORD)
    st.markdown("Two sentences that agree word for word up to and including “bank”, and differ only after it:")
    show_table(view.sentence_pair_table(BANK_SENTENCES, (bank_a.tokens, bank_b.tokens)), hide_index=True)
    show_chart(view.word_contrast_chart(bank), "bank")
    show_metrics(view.word_contrast_metrics(bank))
    narrative(
        "Under the causal mask, “bank” only sees *she sat on the bank*, identical in both sentences, so its "
        f"vector is the same (up to float rounding, below {ROUNDING:g}): it cannot know whether the sentence is about "
        "a river or money. Without "
        "the mask it also sees *of the river* or *and counted the money*, and its vector differs. "
        + (
            "This model was trained, so the difference carries the two senses of the word."
            if chosen.trained
            else "(This model's weights are random, so the difference is not yet *meaningful*; a trained encoder "
            "turns it into the two senses of the word: choose one in the sidebar.)"
        )
    )
    show_code(contrast_word)


def render_seed() -> None:
    ex, settled = seed.example, rows_settled()
    charts = view.seed001_charts(seed)
    if settled:
        show_chart_row(charts, ("seed001_bidirectional", "seed001_causal"))
    else:  # its causal grid would answer the first section's question
        show_chart(charts[0], "seed001_bidirectional")
        st.info("Its causal grid is drawn once you answer the prediction in “Both directions vs causal”.")
    st.markdown(
        f"**Row 0:** {', '.join(f'{v:.3f}' for v in ex.row0)} &nbsp;·&nbsp; "
        f"**weight on later positions:** {ex.future_mass_row0:.3f}"
    )
    narrative(
        "A worked example from the course notes: four random 3-dimensional vectors x0…x3 (torch seed 7) and "
        "random query, key and value matrices. Recomputed here, the first token gives "
        f"{seed.self_weight:.3f} of its attention to itself and {seed.top_weight:.3f} to x{seed.top_key}, the "
        f"last one: {ex.future_mass_row0:.3f} in total goes to tokens that come **after** it. "
        + ("Under a causal mask that row could only look at itself (weight 1.000). " if settled else "")
        + f"Every row still sums to {numbers_text(ex.row_sums)}."
    )
    show_code(seed001_reading)


def render_look_ahead() -> None:
    trained = trained_lesson_model(chosen)
    if not has_trained(trained):
        return
    run = look_ahead_run(trained.encoder, trained.tokenizer, text)
    st.markdown(
        ("" if chosen.trained else f"The sidebar's model has random weights, so this section runs on {trained.name}. ")
        + "Here is one of its heads on an example sentence. Read a few rows: where does each token look?"
    )
    name, layer, head = trained.name, run.layer, run.head
    example = view.look_ahead_example_chart(run.example_grid, run.example_tokens, name, layer, head, run.example_mass)
    show_chart(example, "look_ahead_example")
    if run.question is None:
        st.info(
            f"No word of your sentence has a word on each side and a favourite that leads by {LOOK_MARGIN:g} of its "
            "attention, so nothing is asked: here is the head on your sentence."
        )
        show_chart(view.head_grid_chart(run.grid, run.tokens, name, layer, head), "look_ahead")
        return
    predict_then_see(
        questions.look_ahead(run.question, run.tokens, run.example_mass),
        fingerprint(name, run.tokens, layer, head),
        answer=lambda: run.question.answer,
        reveal=lambda _: reveal_look_ahead(run, name),
    )


def reveal_look_ahead(run, name: str) -> None:
    show_chart(view.look_ahead_chart(run.grid, run.tokens, run.question, name), "look_ahead")
    word = run.question.query
    narrative(
        f"On your sentence this head gives, on average, {run.mass:.2f} of a token's attention to the token right "
        "after it. A decoder's causal mask sets every weight right of the diagonal to 0: under it, "
        f"“{run.tokens[word]}” could give “{run.tokens[word + 1]}” nothing, and this head could not do what it "
        "learned to do. An encoder leaves the words ahead in view, and training put them to use."
    )
    show_code(look_ahead_run)


sections = [
    Section(
        "Bidirectional vs causal attention",
        "Same input, two masks, rows that sum to 1 in both: which row does the causal mask leave alone?",
        render_masks,
        tab="Both directions vs causal",
    ),
    Section(
        "Drop the last word, or [SEP]",
        "Drop one token and run again: which masks let the vectors before it move?",
        render_drop_last,
        tab="Drop a token",
    ),
    Section(
        "“bank”: the words after it matter",
        "The same words up to 'bank', other words after it: does its vector change, with the causal mask and without?",
        render_bank,
        tab="“bank”",
    ),
    Section(
        "A trained head looks ahead",
        "One head of a trained model on an example, then on your sentence: which token does a word attend to most?",
        render_look_ahead,
        tab="A trained head",
    ),
    Section(
        "The worked example (seed 7)",
        f"Without a mask, the first token puts {seed.example.future_mass_row0:.3f} of its attention on later tokens.",
        render_seed,
        tab="Worked example",
    ),
]
sections.append(check_yourself_section("attention"))
render_sections(sections, P)
finish(P)
