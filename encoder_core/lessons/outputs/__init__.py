"""The outputs lesson: what the heads read from the encoder, and what a fine-tuned head says.

Training lives in encoder_core.finetune.tasks; here are the shapes, the trained heads' predictions on a
student's own text (under inference_mode, on the run's private model), the three starting points
compared, and [CLS] against mean pooling as sentence vectors of the real all-MiniLM-L6-v2.

One module per section (pages/outputs.py's tabs), all re-exported here: shapes (The shapes),
trust (what every trained head's answer shares), sentence (Sentence, Pair), tagging (Tagging),
qa (Question answering), starts (Starting points), pooling (Pooling).
"""

from __future__ import annotations

from ...finetune.tasks import (
    BASE_FORM,
    MAX_LENGTH,
    STARTS,
    TAG_OF,
    Example,
    FineTuneRun,
    TaskModel,
    best_spans,
    encode,
    first_pieces,
    make_task,
    passage_mask,
    tag_of,
)
from ...model.output_heads import cls_pool, mean_pool
from ..masking import shape_exercise
from .pooling import (
    CLOSEST_CANDIDATES,
    CLOSEST_MARGIN,
    CLOSEST_OPTIONS,
    CLOSEST_RELATED,
    PAIR_KINDS,
    PARAPHRASES,
    ClosestSentence,
    PoolingRanking,
    closest_for_any,
    closest_sentence,
    pooling_pairs,
    pooling_ranking,
    rank_accuracy,
    shared_words,
)
from .qa import QUESTION_WORDS, SpanPrediction, answer_span
from .sentence import ClassPrediction, classify
from .shapes import (
    EXERCISE_LIMITS,
    EXERCISE_STEPS,
    LOGITS,
    SHAPE_EXERCISE,
    SHAPE_FORMS,
    HeadShapes,
    ShapeCheck,
    TagLabels,
    check_shapes,
    exercise_shapes,
    head_shapes,
    logits_form,
    shape_forms,
    tagging_labels,
)
from .starts import (
    PROBE_OUTCOMES,
    SAME_MARGIN,
    StartComparison,
    centroid_probe,
    compare_starts,
    probe_or_scratch,
    word_vectors,
)
from .tagging import TagPrediction, tag_words
from .trust import CONFIDENT, is_guess, task_words, unseen_words

__all__ = [
    "BASE_FORM",
    "CLOSEST_CANDIDATES",
    "CLOSEST_MARGIN",
    "CLOSEST_OPTIONS",
    "CLOSEST_RELATED",
    "CONFIDENT",
    "ClassPrediction",
    "ClosestSentence",
    "EXERCISE_LIMITS",
    "EXERCISE_STEPS",
    "Example",
    "FineTuneRun",
    "HeadShapes",
    "LOGITS",
    "MAX_LENGTH",
    "PAIR_KINDS",
    "PARAPHRASES",
    "PROBE_OUTCOMES",
    "PoolingRanking",
    "QUESTION_WORDS",
    "SAME_MARGIN",
    "SHAPE_EXERCISE",
    "SHAPE_FORMS",
    "STARTS",
    "ShapeCheck",
    "SpanPrediction",
    "StartComparison",
    "TAG_OF",
    "TagLabels",
    "TagPrediction",
    "TaskModel",
    "answer_span",
    "best_spans",
    "centroid_probe",
    "check_shapes",
    "classify",
    "closest_for_any",
    "closest_sentence",
    "cls_pool",
    "compare_starts",
    "encode",
    "exercise_shapes",
    "first_pieces",
    "head_shapes",
    "is_guess",
    "logits_form",
    "make_task",
    "mean_pool",
    "passage_mask",
    "pooling_pairs",
    "pooling_ranking",
    "probe_or_scratch",
    "rank_accuracy",
    "shape_exercise",
    "shape_forms",
    "shared_words",
    "tag_of",
    "tag_words",
    "tagging_labels",
    "task_words",
    "unseen_words",
    "word_vectors",
]
