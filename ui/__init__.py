"""Streamlit and Plotly layer: figures (pure), state bound to the URL, lesson layout."""
