"""Settings shared by the whole suite."""

import sys
from pathlib import Path

import torch

# Import the project's packages whether pytest is started as `pytest` or `python -m pytest`.
ROOT = str(Path(__file__).resolve().parents[1])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# The suite shares a small machine with other jobs: one thread keeps timings steady and
# results bit-for-bit repeatable across runs.
torch.set_num_threads(1)
