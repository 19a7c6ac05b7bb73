"""Pre-training objectives: masked-LM corruption, its loss, and the answer-leakage experiment."""
