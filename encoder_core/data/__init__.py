"""Text the models read: the grammar's word lists and corpus, WordNet's sentences, the worked examples."""
