"""The outputs lesson's fine-tuning runs, trained on request: a button, or a committed prediction, starts them;
a progress bar and the live loss curve while they train; then the page is drawn again from the kept runs.

A run is kept for every session (ui.models), so the same settings never train twice on a server.
"""

from __future__ import annotations

import streamlit as st

from ui.frame.charts import show_live_chart
from ui.frame.notices import has_trained
from ui.models import cached_fine_tune, run_fine_tune, trained_mlm
from ui.views import outputs as view

REQUEST = "_outputs_train_request"  # set by a button's callback: which runs to train on this rerun


def _request(keys: tuple) -> None:
    st.session_state[REQUEST] = keys


def runs_for(keys: list[tuple], label: str, button_key: str) -> list | None:
    """The runs for these settings if trained already (by anyone); else a button, and the runs once clicked."""
    found = [cached_fine_tune(*k) for k in keys]
    if all(found):
        return found
    if not has_trained(trained_mlm().model):
        return None
    pending = st.session_state.get(REQUEST) == tuple(keys)
    st.caption(view.request_text(keys))
    st.button(
        label, key=button_key, icon=":material/model_training:", type="primary", disabled=pending,
        on_click=_request, args=(tuple(keys),),
    )  # fmt: skip
    if not pending:
        return None
    st.session_state.pop(REQUEST)
    train_now(keys)
    return None  # not reached: train_now reruns the page


def train_now(keys: list[tuple]) -> None:
    """Train the runs not kept yet, one after the other, with a progress bar and the live loss curve; then
    rerun, so the page is drawn from the kept runs."""
    bar, live = st.progress(0.0, text="starting..."), st.empty()
    for i, key in enumerate(keys):
        run_fine_tune(*key, progress=live_progress(bar, live, key, i, len(keys)))
    st.rerun()


def live_progress(bar, live, key: tuple, i: int, n: int):
    """Run i of n: the progress bar and the loss curve redrawn about a dozen times as it trains."""
    losses: list[float] = []

    def progress(step: int, total: int, loss: float) -> None:
        losses.append(loss)
        if step == total or step % max(1, total // 12) == 0:
            bar.progress((i + step / total) / n, text=view.progress_text(key, step, total, loss))
            show_live_chart(view.live_loss_chart(key, losses, step, total), f"live_{i}_{step}", live.container())

    return progress
