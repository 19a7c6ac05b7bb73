"""The questions each lesson asks before it shows (ui.frame.predict): prompts, options and misconceptions."""
