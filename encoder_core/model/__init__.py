"""The encoder itself: its config, tokenizers, attention, blocks, output heads, and measurements of them."""
