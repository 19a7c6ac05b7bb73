"""The questions lessons ask before they show (ui.frame.predict): narrative, so kept out of the computations."""
