"""Section 4, a trained FFN token by token: how long a vector it adds to each token."""

from __future__ import annotations

from collections.abc import Sequence

from encoder_core.lessons.block import FfnTokenChoice

from ..figures import Chart, bar_chart, per_token_table


def trained_intro(model_name: str) -> str:
    return (
        f"The same kind of block, with trained weights: {model_name}. Its FFN adds a vector f to every token's "
        "row, reading that row alone. How long f is differs from token to token, and training set it."
    )


def no_clear_ffn_note(margin: float, min_words: int) -> str:
    return (
        f"No layer has a word whose FFN output is {(margin - 1) * 100:.0f} % longer than every other word's on your "
        f"sentence (or it has fewer than {min_words} words), so there is no clear answer to predict here: try "
        "another sentence."
    )


def ffn_token_text(choice: FfnTokenChoice, tokens: Sequence[str], model_name: str) -> str:
    """The trained-FFN prediction's answer: the word the FFN writes most into, against the runner-up."""
    best = choice.best
    runner = choice.runner_up
    return (
        f"In {model_name}'s layer {choice.layer} the FFN adds its longest vector to **{best} {tokens[best]}**: "
        f"length {choice.norms[best]:.2f}, {choice.lead:.1f} times the next word's ({runner} {tokens[runner]}, "
        f"{choice.norms[runner]:.2f}). Each bar was computed from that token's own row: the FFN never reads "
        "another token. Where it writes most was learned in training."
    )


def ffn_token_chart(choice: FfnTokenChoice, tokens: Sequence[str], model_name: str) -> Chart:
    """Every token's FFN output length in the asked layer ([CLS] and [SEP] too, which the question leaves out)."""
    norms, best = choice.norms, choice.best
    fig = bar_chart(
        list(tokens),
        norms,
        title=f"Length of the FFN's output f, {model_name}, layer {choice.layer}",
        x_title="token",
        y_title="||f|| (what the FFN adds)",
    )
    fig.update_layout(yaxis={"rangemode": "tozero"})
    alt = (
        f"{model_name}'s FFN output length per token in layer {choice.layer}: longest among the words for {best} "
        f"{tokens[best]} ({norms[best]:.2f}), {choice.lead:.1f} times the next word's; over all tokens from "
        f"{min(norms):.2f} to {max(norms):.2f}."
    )
    return Chart(fig, alt, per_token_table(tokens, {"||f||": list(norms)}))
