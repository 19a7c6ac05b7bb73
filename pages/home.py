"""Home: what an encoder is for, encoder vs decoder, and the map of the lessons."""

import streamlit as st

from encoder_core.lessons import LESSONS
from ui.frame.quiz_widget import QUIZ_PAGE, QUIZ_SUMMARY
from ui.frame.state import write_url

st.title("Encoder Lab")
st.markdown(
    """
An **encoder** reads a whole piece of text at once and gives back one vector per token, each
built from *every* other token, on both sides. That is what you want when the text already
exists and the job is to understand it: label a review, tag the names in a sentence, find the
answer span in a passage, decide whether two sentences say the same thing.

**The cloze intuition.** Blank out a word and fill it in from everything around it. In
*“she sat on the bank of the river”* the word **bank** means a riverside only because of the
words that come *after* it; in *“she sat on the bank and counted the money”* the same left
context leads somewhere else. A model that may only look left cannot tell the two apart at
“bank”. An encoder can, and BERT-style pre-training (masked language modelling) is exactly
this cloze game, played on millions of sentences.
"""
)

st.subheader("Encoder and decoder at a glance")
st.table(
    {
        "": ["attention", "pre-training task", "each output depends on", "good at", "cannot"],
        "encoder (BERT-style)": [
            "bidirectional: every token sees every token",
            "recover hidden ([MASK]ed) tokens",
            "the whole input",
            "classification, tagging, retrieval, span extraction",
            "generate text left to right",
        ],
        "decoder (GPT-style)": [
            "causal: a token sees only itself and the past",
            "predict the next token",
            "the tokens up to it",
            "generation, completion, chat",
            "use the words after a token when building its vector",
        ],
    }
)

st.subheader("The lessons")
st.markdown(
    """
Each lesson runs a small, inspectable encoder live on a sentence you type. Every number on
screen is computed by the model, not typed in, and a **Show the code** panel shows the function
that computed it. Use the sidebar for the model and its seed; **Lecture mode** presents a lesson
one step at a time, large, and every view can be shared as a link.

**Numbering.** Layers, heads, blocks, token positions, the stages inside a block and the
sentences of a list are all counted from **0**, as in the code (`model.encoder.layer[0]` is
layer 0, and `[CLS]` sits at position 0): the controls, chart titles and text use the same numbers.
Only plain counts read as counts: “Step 1 of 5”, “word 2 of 6”, “rank 1”.
"""
)
for lesson in LESSONS:
    st.page_link(f"pages/{lesson.id}.py", label=f"**{lesson.title}**: {lesson.summary}")
st.page_link(QUIZ_PAGE, label=f"**Quiz**: {QUIZ_SUMMARY}")
write_url([])
