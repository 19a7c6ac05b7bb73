"""The Streamlit and Plotly layer.

frame/: the app frame; models.py: every cached model; views/: per-lesson figures and tables.
"""
