"""Training the lab's small MLM: the training run, evaluation, fixed probes, checkpoints and their digests."""
