"""The lessons' predictions: their questions and the wrong idea behind each wrong answer."""
