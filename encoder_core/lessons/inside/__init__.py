"""Looking inside: which explanation of a masked-language model can a student trust?

The ground truth is an intervention on the model itself. For one sentence with one [MASK], the model's
top answer there has a log-probability f. Knocking out a head (its output zeroed before W_O) or an input
token (no query may attend to it, in any layer) changes f; that change is what the part really did.
Five explanations claim to say the same without intervening: raw attention, attention rollout,
norm-based attention, gradient x input and integrated gradients. Each is scored by its rank correlation
with the token knockouts. The logit lens reads the answer off the stream after every layer.

Every run here is read only: the shared model is never changed, and gradients are taken with respect to
the input vectors alone (torch.autograd.grad), so no parameter's .grad is touched. Every intermediate is
read, and every intervention made, through the model's hook points (encoder_core.model.hooks).
Shapes: B batch, T positions, D = d_model, L layers, H heads.

One module per section of the lesson: cloze (the input), forward (one forward pass with the interventions),
knockouts (the ground truth), explanations, scoring (against the knockouts), lens (the logit lens),
predictions (the predictions' answers). Every public name is re-exported here.
"""

from __future__ import annotations

from ...data.cloze import CLOZE_SENTENCES
from .cloze import DEFAULT_SENTENCE, MAX_TOKENS, Cloze, default_word_to_hide, maskable_words, prepare_cloze
from .explanations import (
    BASELINES,
    DEFAULT_STEPS,
    METHODS,
    Attributions,
    Explanations,
    attention_rollout,
    baseline_vectors,
    explanations,
    gradient_x_input,
    integrated_gradients,
    norm_based,
)
from .forward import answer_log_probs, attention_maps, clean_answer, stream, word_vectors
from .knockouts import Knockouts, head_knockouts, knockouts, token_knockouts
from .lens import LogitLens, logit_lens
from .predictions import (
    EXPLANATION_MARGIN,
    KNOCKOUT_MARGIN,
    N_OPTIONS,
    HeadChoice,
    TokenChoice,
    best_methods,
    explanation_asked,
    head_choice,
    token_choice,
)
from .scoring import Sweep, agreement, best_method, ranks, scored_positions, spearman, sweep

__all__ = [
    "BASELINES",
    "CLOZE_SENTENCES",
    "DEFAULT_SENTENCE",
    "DEFAULT_STEPS",
    "EXPLANATION_MARGIN",
    "KNOCKOUT_MARGIN",
    "MAX_TOKENS",
    "METHODS",
    "N_OPTIONS",
    "Attributions",
    "Cloze",
    "Explanations",
    "HeadChoice",
    "Knockouts",
    "LogitLens",
    "Sweep",
    "TokenChoice",
    "agreement",
    "answer_log_probs",
    "attention_maps",
    "attention_rollout",
    "baseline_vectors",
    "best_method",
    "best_methods",
    "clean_answer",
    "default_word_to_hide",
    "explanation_asked",
    "explanations",
    "gradient_x_input",
    "head_choice",
    "head_knockouts",
    "integrated_gradients",
    "knockouts",
    "logit_lens",
    "maskable_words",
    "norm_based",
    "prepare_cloze",
    "ranks",
    "scored_positions",
    "spearman",
    "stream",
    "sweep",
    "token_choice",
    "token_knockouts",
    "word_vectors",
]
