"""all-MiniLM-L6-v2, loaded offline into our Encoder, and the MLM head the lab trains for it."""
