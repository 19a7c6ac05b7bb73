"""The app frame every page shares.

URL-bound controls, sections and lecture mode, charts, downloads, code panels, the quiz widget.
"""
