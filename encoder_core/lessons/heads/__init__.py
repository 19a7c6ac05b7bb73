"""The heads lesson: multi-head attention taken apart on one block, and what the heads of a real
pretrained encoder do on a sentence.

Mechanics: each head's Q, K, V are a slice of the block's projections; every head runs its own
softmax; the head outputs are concatenated and mixed by W_O. head_mechanics recomputes all of
that from the weight matrices, independently of the model's forward pass, and checks the
result against the block's recorded "attention" stage.

One module per section (pages/heads.py's tabs), all re-exported here: run (what the sections
share: one run of the encoder), mechanics (Split d into heads; Concatenate and project), grid
(All heads at once), labels (What each head does), pieces (Words in pieces), vectors (Sentence
vectors).
"""

from __future__ import annotations

from ...model.head_patterns import NEIGHBOUR_PATTERNS, HeadLabel
from ...model.model import Encoder
from ...model.output_heads import cls_pool, mean_pool
from ...model.tokenizer import Encoding
from .grid import (
    MIN_OPTIONS,
    PREFERRED_HEAD,
    PREVIOUS,
    PREVIOUS_MARGIN,
    RIVAL_PATTERNS,
    TOP_KEY_MARGIN,
    HeadChoice,
    TopKeyChoice,
    positional_heads,
    previous_token_choice,
    top_key_choice,
)
from .labels import SinkSummary, sink_summary
from .mechanics import MECHANICS_TOLERANCE, HeadMechanics, head_mechanics
from .pieces import (
    SameWordMass,
    SentenceSplits,
    WordSplit,
    fragmentation,
    piece_spans,
    same_word_mass,
    sentence_splits,
    word_index,
)
from .run import FRAMING, SPECIALS, AttentionRun, all_unknown, run_encoder
from .vectors import (
    BANK_MONEY,
    BANK_RIVER,
    BANK_RIVER_AGAIN,
    BANK_WORD,
    SENTENCE_EXAMPLES,
    Similarities,
    WordVectorCosines,
    cosine_matrix,
    similarities,
    word_vector,
    word_vector_cosines,
)

__all__ = [
    "AttentionRun",
    "BANK_MONEY",
    "BANK_RIVER",
    "BANK_RIVER_AGAIN",
    "BANK_WORD",
    "Encoder",
    "Encoding",
    "FRAMING",
    "HeadChoice",
    "HeadLabel",
    "HeadMechanics",
    "MECHANICS_TOLERANCE",
    "MIN_OPTIONS",
    "NEIGHBOUR_PATTERNS",
    "PREFERRED_HEAD",
    "PREVIOUS",
    "PREVIOUS_MARGIN",
    "RIVAL_PATTERNS",
    "SENTENCE_EXAMPLES",
    "SPECIALS",
    "SameWordMass",
    "SentenceSplits",
    "Similarities",
    "SinkSummary",
    "TOP_KEY_MARGIN",
    "TopKeyChoice",
    "WordSplit",
    "WordVectorCosines",
    "all_unknown",
    "cls_pool",
    "cosine_matrix",
    "fragmentation",
    "head_mechanics",
    "mean_pool",
    "piece_spans",
    "positional_heads",
    "previous_token_choice",
    "run_encoder",
    "same_word_mass",
    "sentence_splits",
    "similarities",
    "sink_summary",
    "top_key_choice",
    "word_index",
    "word_vector",
    "word_vector_cosines",
]
