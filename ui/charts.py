"""Showing a figure: styled for lecture/contrast, a text alternative, and its downloads."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from .figures import styled

PLOTLY_CONFIG = {
    "displaylogo": False,
    "toImageButtonOptions": {"format": "png", "scale": 2},  # the toolbar camera: PNG export
}


def _page() -> str:
    return st.session_state.get("_page", "lesson")


def show_figure(fig: go.Figure, key: str, *, alt: str, table: pd.DataFrame | None = None) -> None:
    """Draw fig; alt is the one-sentence text alternative; table the numbers behind it."""
    from .lesson import high_contrast, lecture_mode

    fig = styled(fig, lecture=lecture_mode(), high_contrast=high_contrast())
    config = {**PLOTLY_CONFIG, "toImageButtonOptions": {**PLOTLY_CONFIG["toImageButtonOptions"], "filename": key}}
    st.plotly_chart(fig, key=f"chart_{key}", config=config, alt=alt)
    st.caption(alt)
    st.session_state.setdefault(f"_figures_{_page()}", []).append((key, fig))
    if table is not None:
        with st.expander("Numbers behind this chart"):
            st.dataframe(table, hide_index=True)
            c1, c2 = st.columns(2)
            c1.download_button(
                "CSV",
                data=lambda: table.to_csv(index=False),
                file_name=f"{key}.csv",
                mime="text/csv",
                key=f"csv_{key}",
                on_click="ignore",
            )
            c2.download_button(
                "Interactive HTML",
                data=lambda: fig.to_html(include_plotlyjs=True),
                file_name=f"{key}.html",
                mime="text/html",
                key=f"html_{key}",
                on_click="ignore",
            )


def all_figures_download() -> None:
    figures = st.session_state.get(f"_figures_{_page()}", [])
    if not figures:
        return

    def build() -> str:
        parts = [f.to_html(full_html=False, include_plotlyjs=(i == 0)) for i, (_, f) in enumerate(figures)]
        return (
            "<html><head><meta charset='utf-8'><title>Encoder Lab figures</title></head><body>"
            + "".join(f"<section>{p}</section>" for p in parts)
            + "</body></html>"
        )

    st.divider()
    st.download_button(
        f"Download this lesson's {len(figures)} figures as one HTML file",
        data=build,
        file_name=f"encoder-lab-{_page()}.html",
        mime="text/html",
        key="all_figures",
        on_click="ignore",
    )
