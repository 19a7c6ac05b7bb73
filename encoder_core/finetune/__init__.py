"""Fine-tuning: the lab's labelled tasks, the heads that read them, and a short training loop."""
