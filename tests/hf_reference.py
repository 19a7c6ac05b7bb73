"""transformers' BertModel as the reference our Encoder is checked against (the `minilm_reference` fixture)."""


def reference_run(reference, batch):
    """The reference's outputs on a padded batch, with every hidden state and attention map."""
    return reference(
        input_ids=batch.ids,
        token_type_ids=batch.segments,
        attention_mask=(~batch.key_padding_mask).long(),
        output_attentions=True,
        output_hidden_states=True,
    )
