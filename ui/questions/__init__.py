"""Predict, then see: the questions each lesson asks before its live model answers (narrative, pure)."""
