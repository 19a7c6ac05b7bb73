"""The learner-records load generator speaks Streamlit's protocol: four learners who commit the attention
prediction at once each see the verdict and are told a record, and each record holds exactly one row:
no answer lost, no error."""

from benchmarks.learner_records import answering, stored_rows, tally
from classroom.store import database_url
from scripts.streamlit_protocol import run_coroutine


def test_four_learners_answering_at_once_are_each_recorded_once(app_url):
    before = stored_rows(database_url())  # the test run's own database, which the app_url server writes to
    learners = run_coroutine(answering(app_url, 4, window=2.0))
    result = tally(learners, stored_rows(database_url()) - before)
    assert [le.errors for le in learners] == [0, 0, 0, 0]
    assert all(le.revealed and le.learner_id for le in learners)
    assert result.answered == 4 and result.lost == 0
    assert result.per_learner == {1: 4}  # four records, one row each
