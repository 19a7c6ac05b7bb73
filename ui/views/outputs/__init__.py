"""Figures, tables and sentences for the outputs lesson. Pure: encoder_core results in, Figures out.

One module per section of the lesson (pages/outputs.py), in its order: shapes, classify (the sentence and the
pair sections), tagging, qa, starts, pooling; tasks holds what the four task sections share, training what every
section that fine-tunes a head shows, common the names and the cell row several sections use. The names the
pages, ui/fine_tuning.py and tests use are re-exported here."""

from .classify import class_chart
from .common import MODEL_TEXT, TASK_NAMES
from .pooling import (
    MINILM_TEXT,
    POOLING_TEXT,
    closest_answer_text,
    closest_chart,
    closest_source_text,
    pooling_runs_chart,
    pooling_runs_text,
    ranking_chart,
    ranking_metrics,
    ranking_text,
    ranking_verdict,
)
from .qa import no_answer_text, span_chart, span_markdown
from .shapes import (
    EXERCISE_NAMES,
    EXERCISE_SIZES,
    exercise_question,
    exercise_table,
    exercise_verdict,
    head_shapes_chart,
    shape_answer_text,
    shapes_table,
    shapes_text,
    tag_labels_chart,
    tag_labels_text,
)
from .starts import STARTS_TEXT, probe_answer_text, starts_loss_chart, starts_scores_chart, starts_verdict
from .tagging import tag_row_chart
from .tasks import SHAPE_HELD, TASK_SCOPE, TASK_SHAPES, guess_text, task_text
from .training import live_loss_chart, progress_text, request_text, run_chart, run_metrics, run_text
