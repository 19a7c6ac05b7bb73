"""Settings shared by the whole suite."""

import torch

# The suite shares a small machine with other jobs: one thread keeps timings steady and
# results bit-for-bit repeatable across runs.
torch.set_num_threads(1)
