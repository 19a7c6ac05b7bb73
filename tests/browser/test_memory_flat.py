"""Memory stays flat: 500 reruns of the heaviest lesson in one session, each with a new sentence,
grow the server's resident memory by less than 20 MB (measured from after a short warm-up, once
the shared models are loaded). A fresh server, so no other test's sessions are counted. The session
is held over Streamlit's protocol, as a browser holds it: the server does the same work, and no
browser spends the machine's second core drawing 500 sets of charts."""

from __future__ import annotations

import pytest

from benchmarks.memory import rerun_growth

RERUNS, LIMIT_MB = 500, 20.0


@pytest.mark.slow
def test_500_reruns_of_the_heads_lesson_keep_memory_flat():
    growth = rerun_growth("heads", RERUNS)  # MiniLM: the heaviest model, the most cached runs
    assert growth.errors == 0
    assert growth.grown < LIMIT_MB, f"grew {growth.grown:.1f} MB over {RERUNS} reruns"
