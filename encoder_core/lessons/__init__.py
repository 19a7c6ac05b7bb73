"""Computations behind each lesson page: one module per lesson, small dataclasses out."""
