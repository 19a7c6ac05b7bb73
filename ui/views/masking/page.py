"""Above the sections: which model the masked-language-modelling lesson runs on, and why."""

from __future__ import annotations

HEAD = "masked-language-model head (the layer that turns each vector into a score for every word)"


def mlm_choice_text(asked: str, used: str, name: str, metadata: dict) -> str:
    """Which model fills in [MASK] on this page, and why that one (asked: the sidebar's choice)."""
    why = f"The seeded small model has random weights and no {HEAD}, so it has nothing to guess with. "
    why = why if asked == "small" else ""
    if used == "minilm":
        frozen = int(metadata.get("frozen_layers", metadata.get("settings", {}).get("frozen_layers", 0)))
        return (
            f"{why}This lesson runs on {name}, the best guesser here. MiniLM was published without "
            f"{'such a head' if why else 'a ' + HEAD}: it was tuned to make sentence vectors. The lab trained "
            f"one for it on real English, together with its layers {frozen} and up; its word embeddings and "
            f"layers 0 to {frozen - 1} are exactly as published."
        )
    fill = "" if asked == "minilm" else " Fill in the blank, below, has its own choice of model."
    return f"{why}This lesson runs on {name}" + (", as the sidebar says." if asked == used else ".") + fill
