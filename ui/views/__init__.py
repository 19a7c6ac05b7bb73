"""Per-lesson views: pure functions from encoder_core results to plotly figures and pandas tables (no streamlit)."""
