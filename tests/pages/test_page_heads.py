"""The heads page: AppTests of its defaults, every control, model switch, missing model, bad input and
links (slow); and its view's tables, figures and texts against the core results they show (fast)."""

import importlib.util
import os
from dataclasses import replace

import apptest_helpers as helpers
import numpy as np
import pytest
import torch
from apptest_helpers import all_text, commit_nothing, figures, no_exception
from streamlit.testing.v1 import AppTest

import ui.models as minilm_model
from encoder_core.lessons.heads import (
    SameWordMass,
    SentenceSplits,
    Similarities,
    TopKeyChoice,
    WordSplit,
    WordVectorCosines,
    head_mechanics,
    piece_spans,
    positional_heads,
    previous_token_choice,
    run_encoder,
    sink_summary,
    top_key_choice,
    word_index,
)
from encoder_core.model.head_patterns import head_label, label_heads
from encoder_core.pretrained.minilm import INSTALL_HINT, PACKAGE, PretrainedUnavailable
from ui.frame.predict import judge_number, tolerance_for
from ui.questions import heads as questions
from ui.views import heads as views
from ui.views.heads import grid_gaps

HAVE_MINILM = importlib.util.find_spec(PACKAGE) is not None or os.environ.get("CI") == "true"
needs_minilm = pytest.mark.skipif(not HAVE_MINILM, reason=f"pretrained MiniLM not installed: {INSTALL_HINT}")
slow = pytest.mark.slow  # the AppTests; the view tests at the end are fast


def open_page(page: str, query: dict | None = None) -> AppTest:
    return helpers.open_linked(page, query)


def grid_block(fig, layer: int, head: int, T: int) -> np.ndarray:
    """Cut one head's thumbnail out of the mosaic (same layout as ui.views.heads.head_grid)."""
    z = np.asarray(fig["data"][0]["z"], dtype=np.float64)
    gap_x, gap_y = grid_gaps(len(fig["layout"]["xaxis"]["tickvals"]), T)
    r, c = layer * (T + gap_y) + gap_y, head * (T + gap_x)
    return z[r : r + T, c : c + T]


@slow
@needs_minilm
def test_minilm_numbers_when_the_sidebar_picks_it(minilm):
    at = open_page("heads", {"model": "minilm"})
    no_exception(at)
    figs = figures(at)
    for key in ("heads_q", "heads_concat", "heads_w_o", "heads_grid", "heads_chosen", "heads_layer_averages"):
        assert key in figs
    tok = minilm.tokenizer
    enc = tok.encode("the cat sat on the mat")  # the default: one sentence, no second one
    run = run_encoder(minilm.model, enc)
    T = len(enc)
    # The chosen map (layer 0, head 2) and the grid's thumbnails are the model's weights.
    chosen = np.asarray(figs["heads_chosen"]["data"][0]["z"])
    assert np.allclose(chosen, run.attentions[0, 2].numpy(), atol=1e-6)
    assert np.allclose(grid_block(figs["heads_grid"], 0, 2, T), run.attentions[0, 2].numpy(), atol=1e-6)
    assert np.allclose(grid_block(figs["heads_grid"], 5, 11, T), run.attentions[5, 11].numpy(), atol=1e-6)
    labels = label_heads(run.attentions, run.tokens)
    captions = figs["heads_grid"]["data"][1]["text"]  # one caption per head, layer by layer
    assert captions[2] == f"prev {labels[2].mass:.2f}" and labels[2].mass > 0.9
    text = all_text(at)
    assert "Clark et al." in text
    assert f"{labels[2].mass:.2f}" in text  # the metric of the chosen head
    assert INSTALL_HINT not in text
    # The mechanics run on the small model, and the page says the identity holds.
    assert np.asarray(figs["heads_q"]["data"][0]["z"]).shape == (8, 16)  # the small model: d/h = 64/4
    assert "gives the block's own attention output: the largest difference is" in text
    # The sentence vectors: matrices symmetric with ones on the diagonal.
    sim = np.asarray(figs["heads_sim_mean"]["data"][0]["z"])
    assert sim.shape == (4, 4) and np.allclose(sim, sim.T, atol=1e-6) and np.allclose(np.diag(sim), 1, atol=1e-5)
    bank = figs["heads_bank"]["data"]
    assert bank[0]["y"][0] == pytest.approx(1.0, abs=1e-6) and bank[0]["y"][-1] < bank[1]["y"][-1]


@slow
@needs_minilm
def test_every_control_and_the_model_switch(minilm):
    at = open_page("heads", {"model": "minilm"})
    helpers.skip_predictions(at.text_input(key="heads.heads_sentence").input("unbelievably, the cat sat").run())
    no_exception(at)
    figs = figures(at)
    assert "heads_same_word" in figs and "heads_pieces_map" in figs
    pieces = {tuple(r) for r in _fragment_rows(at)}
    expected = minilm.tokenizer.split_words("unbelievably, the cat sat")
    assert {(w, " ".join(p)) for w, p in expected} <= pieces

    at.text_input(key="heads.heads_sentence_b").input("it was late").run()  # a pair
    helpers.skip_predictions(at)  # a new input asks again
    no_exception(at)
    assert str(figures(at)["heads_chosen"]["data"][0]["y"][-2]).endswith("late")
    at.text_input(key="heads.heads_sentence_b").input("").run()  # a single sentence again
    helpers.skip_predictions(at)
    assert str(figures(at)["heads_chosen"]["data"][0]["y"][-2]).endswith("sat")

    at.slider(key="heads.heads_layer").set_value(5).run()
    at.slider(key="heads.heads_head").set_value(11).run()
    no_exception(at)
    enc = minilm.tokenizer.encode("unbelievably, the cat sat")
    run = run_encoder(minilm.model, enc)
    assert np.allclose(np.asarray(figures(at)["heads_chosen"]["data"][0]["z"]), run.attentions[5, 11], atol=1e-6)

    at.selectbox(key="model").set_value("small").run()  # 2 layers, 4 heads: clamped, with a notice
    no_exception(at)
    assert (at.slider(key="heads.heads_layer").value, at.slider(key="heads.heads_head").value) == (1, 3)
    assert "became layer 1, head 3" in all_text(at)
    helpers.skip_predictions(at)  # another model asks again
    grid = figures(at)["heads_grid"]
    assert [t for t in grid["layout"]["xaxis"]["ticktext"]] == [f"head {h}" for h in range(4)]

    at.selectbox(key="model").set_value("minilm").run()  # back: 1, 3 is valid, kept silently
    helpers.skip_predictions(at)
    no_exception(at)
    assert (at.slider(key="heads.heads_layer").value, at.slider(key="heads.heads_head").value) == (1, 3)
    assert "became layer" not in all_text(at)

    lines = "\n".join(f"sentence number {i}" for i in range(10))
    at.text_area(key="heads.heads_sentences").input(lines).run()
    no_exception(at)
    assert "10 sentences given; the first 8" in all_text(at)
    assert np.asarray(figures(at)["heads_sim_cls"]["data"][0]["z"]).shape == (8, 8)


def _fragment_rows(at):
    for df in at.dataframe:
        v = df.value
        if "pieces" in v.columns:
            return list(zip(v["word"], v["pieces"]))
    return []


@slow
@needs_minilm
def test_bad_input_is_explained(minilm):
    at = open_page("heads", query={"model": "minilm", "heads_sentence": "😀 🎉", "heads_sentence_b": ""})
    no_exception(at)
    text = all_text(at)
    assert "Every word became [UNK]" in text
    assert ("😀", "[UNK]") in set(_fragment_rows(at))

    at.text_input(key="heads.heads_sentence").input("   ").run()  # empty: the example is used
    no_exception(at)
    assert "the sentence is empty" in all_text(at).lower()

    helpers.skip_predictions(at.text_input(key="heads.heads_sentence").input("word " * 600).run())  # 602 pieces > 512
    no_exception(at)
    text = all_text(at)
    assert "90 token(s) were cut" in text
    assert "The thumbnails show the first 40 of 512 tokens" in text

    at.text_area(key="heads.heads_sentences").input("only one").run()
    no_exception(at)
    assert "at least two sentences" in all_text(at)


@slow
def test_missing_model_shows_how_to_install_and_runs_the_small_model(monkeypatch, small_model, tok):
    def unavailable(*args, **kwargs):
        raise PretrainedUnavailable(f"the pretrained model is not installed; install it with: {INSTALL_HINT}")

    monkeypatch.setattr(minilm_model, "load_minilm", unavailable)
    minilm_model._load_minilm.clear()
    try:
        at = open_page("heads", query={"model": "minilm", "heads_layer": "4", "heads_head": "9"})
        no_exception(at)
        text = all_text(at)
        assert INSTALL_HINT in text
        assert "all-MiniLM-L6-v2 is not available, so this lesson runs on the small seeded model" in text
        assert (at.slider(key="heads.heads_layer").value, at.slider(key="heads.heads_head").value) == (1, 3)
        figs = figures(at)
        assert "heads_grid" in figs and "heads_sim_mean" not in figs
        # The small model's numbers: the mechanics figures come from head_mechanics on the seed-0 model.
        enc = tok.encode("the cat sat on the mat")
        mech = head_mechanics(small_model, enc, 1, 3)
        assert np.allclose(np.asarray(figs["heads_q"]["data"][0]["z"]), mech.q.numpy(), atol=1e-6)
        assert np.allclose(np.asarray(figs["heads_chosen"]["data"][0]["z"]), mech.weights.numpy(), atol=1e-6)
        at.text_input(key="heads.heads_sentence").input("a dog ran").run()
        no_exception(at)
    finally:
        minilm_model._load_minilm.clear()


@slow
@needs_minilm
def test_url_sets_every_control_and_bad_values_give_notices():
    query = {
        "heads_sentence": "a dog ran home",
        "heads_sentence_b": "it was late",
        "model": "small",
        "heads_layer": "1",
        "heads_head": "3",
        "heads_sentences": "one cat\ntwo dogs\nthree birds",
    }
    at = open_page("heads", query=query)
    no_exception(at)
    assert at.text_input(key="heads.heads_sentence").value == "a dog ran home"
    assert at.text_input(key="heads.heads_sentence_b").value == "it was late"
    assert at.selectbox(key="model").value == "small"
    assert (at.slider(key="heads.heads_layer").value, at.slider(key="heads.heads_head").value) == (1, 3)
    assert at.text_area(key="heads.heads_sentences").value == "one cat\ntwo dogs\nthree birds"
    assert np.asarray(figures(at)["heads_sim_mean"]["data"][0]["z"]).shape == (3, 3)

    bad = {"model": "gpt", "heads_layer": "seven", "heads_head": "99"}
    at = open_page("heads", query=bad)
    no_exception(at)
    text = all_text(at)
    assert "`model=gpt` is not one of" in text
    assert "`heads_layer=seven` is not a number" in text
    assert "`heads_head=99` is outside" in text
    assert at.selectbox(key="model").value == "small"  # the sidebar's default
    assert (at.slider(key="heads.heads_layer").value, at.slider(key="heads.heads_head").value) == (0, 3)


@slow
def test_lecture_mode_shows_one_step():
    at = open_page("heads", query={"lecture": "1", "step": "3", "model": "small"})
    no_exception(at)
    headings = [h.value for h in at.subheader]
    assert any("Step 4 of 7" in h and "What each head does" in h for h in headings), headings
    assert "Each head named by where its weight goes" in all_text(at)  # the step's takeaway
    assert set(figures(at)) == {"heads_layer_averages"}


# ---- the view: tables, figures and texts against the core results they show ----

EXAMPLE = ("the cat sat on the mat", "it was happy")


@pytest.fixture(scope="module")
def mech(small_model, tok):
    return head_mechanics(small_model, tok.encode(*EXAMPLE), 1, 2)


def test_matrix_tables_hold_the_tensors_numbers(mech):
    table = views.token_table(mech.q, mech.tokens)
    assert list(table.columns) == ["token"] + [f"d{j}" for j in range(mech.d_head)]
    assert list(table["token"]) == [f"{i} {t}" for i, t in enumerate(mech.tokens)]
    assert np.allclose(table.iloc[:, 1:].to_numpy(dtype=float), mech.q.numpy(), atol=5e-5)
    weights = views.weights_table(mech.weights, mech.tokens)
    assert list(weights.columns[1:]) == [f"{i} {t}" for i, t in enumerate(mech.tokens)]
    assert np.allclose(weights.iloc[:, 1:].to_numpy(dtype=float), mech.weights.numpy(), atol=5e-5)
    w_o = views.w_o_table(mech)
    assert list(w_o["output feature"]) == [str(i) for i in range(mech.w_o.shape[0])]  # not numbered twice
    assert np.allclose(w_o.iloc[:, 1:].to_numpy(dtype=float), mech.w_o.numpy(), atol=5e-5)


def test_shapes_table_lists_the_mechanics_shapes(mech):
    table = views.shapes_table(mech)
    assert list(table["tensor"]) == [name for name, _ in mech.shapes()]
    T = len(mech.tokens)
    assert dict(zip(table["tensor"], table["shape"]))["weights of all heads"] == f"{mech.n_heads} × {T} × {T}"


def test_labels_and_averages_tables_hold_each_heads_masses(mech):
    labels = label_heads(mech.all_weights[None], mech.tokens)
    table = views.labels_table(labels)
    assert len(table) == mech.n_heads
    for (_, row), lab in zip(table.iterrows(), labels):
        assert (row["layer"], row["head"], row["pattern"]) == (lab.layer, lab.head, lab.pattern)
        assert row["mass"] == round(lab.mass, 3)
        assert [row[p] for p in lab.masses] == [round(v, 3) for v in lab.masses.values()]
    averages = [{"[CLS]": 0.123456, "[SEP]": 0.5}, {"[CLS]": 0.25, "[SEP]": 0.0}]
    table = views.averages_table(averages)
    assert list(table["layer"]) == [0, 1] and list(table["[CLS]"]) == [0.1235, 0.25]


def synthetic_same_word_mass() -> SameWordMass:
    mass = torch.tensor([[0.1, 0.7, 0.2], [0.3, 0.05, 0.6]])
    return SameWordMass(mass, uniform=0.25, n_pieces=4, n_split_words=2)


def test_layer_head_table_and_the_same_word_texts():
    same = synthetic_same_word_mass()
    table = views.layer_head_table(same.mass)
    assert list(table.columns) == ["layer", "head 0", "head 1", "head 2"] and list(table["layer"]) == ["0", "1"]
    assert np.allclose(table.iloc[:, 1:].to_numpy(dtype=float), same.mass.numpy(), atol=5e-5)
    assert "highest in layer 0, head 1 (0.70); uniform would be 0.25" in views.same_word_alt(same)
    chosen_is_best = views.same_word_text(same, 0, 1, "previous token")
    assert "**0.70**" in chosen_is_best and "that is the most of any head" in chosen_is_best
    assert "Layer 0, head 1 is a previous token head" in chosen_is_best
    other = views.same_word_text(same, 1, 2, "[CLS]")
    assert "**0.60** of their weight" in other and "the most goes in layer 0, head 1: **0.70**" in other
    assert "is a [CLS] head" not in other  # only a neighbour pattern explains the joining
    assert "same-word weight 0.60" in views.pieces_map_alt(same, 1, 2)


def test_pieces_map_outlines_exactly_the_split_words_pieces():
    tokens = ["[CLS]", "un", "##bel", "##ie", "the", "door", "##mat", "[SEP]", "##x", "[SEP]"]
    T = len(tokens)
    fig = views.pieces_map(torch.full((T, T), 1 / T), tokens, piece_spans(tokens), title="pieces")
    groups = word_index(tokens)
    split = {i for i, g in enumerate(groups) if g >= 0 and groups.count(g) > 1}
    outlined = set()
    for rect in fig.layout.shapes:
        assert (rect.x0, rect.x1) == (rect.y0, rect.y1)  # on the diagonal: a word's pieces meeting each other
        cells = set(range(int(rect.x0 + 0.5), int(rect.x1 + 0.5)))
        assert not cells & outlined
        outlined |= cells
    assert outlined == split == {1, 2, 3, 5, 6}
    assert len(fig.layout.shapes) == 2
    assert not views.pieces_map(torch.eye(3), ["[CLS]", "cat", "[SEP]"], [], title="none").layout.shapes


def test_head_slices_and_w_o_keep_their_look_on_matrix_heatmap(mech):
    fig = views.slice_figure(mech, "K")
    bound = float(mech.k.abs().max())
    heatmap = fig.data[0]
    assert np.allclose(np.asarray(heatmap.z), mech.k.numpy()) and (heatmap.zmin, heatmap.zmax) == (-bound, bound)
    assert fig.layout.title.text == f"K of head 2 [{len(mech.tokens)} × {mech.d_head}]"
    assert fig.layout.xaxis.title.text == "dimension of head 2" and fig.layout.yaxis.title.text == "token"
    assert heatmap.hovertemplate.startswith("token %{y}, feature %{x}")
    assert fig.layout.height == max(260, 22 * len(mech.tokens) + 130)
    w_o = views.w_o_figure(mech)
    bound = float(mech.w_o.abs().max())
    assert (w_o.data[0].zmin, w_o.data[0].zmax) == (-bound, bound) and w_o.data[0].y is None
    assert w_o.layout.yaxis.scaleanchor == "x" and w_o.layout.yaxis.autorange == "reversed"
    assert (w_o.layout.height, w_o.layout.margin.t) == (520, 90)
    boundaries = [s for s in w_o.layout.shapes if s.type == "line"]
    assert [s.x0 for s in boundaries] == [h * mech.d_head - 0.5 for h in range(1, mech.n_heads)]


def test_alts_read_the_mechanics_numbers(mech):
    alt = views.slice_alt(mech, "V")
    assert f"from {float(mech.v.min()):.2f} to {float(mech.v.max()):.2f}" in alt
    key = int(mech.weights[0].argmax())
    assert f"({float(mech.weights[0].max()):.2f}) on token {key}." in views.own_weights_alt(mech)


def test_fragmentation_table_rows_are_the_splits():
    splits = SentenceSplits([("A", WordSplit("fluffy", ["fluf", "##fy"])), ("B", WordSplit("cat", ["cat"]))])
    table = views.fragmentation_table(splits)
    assert table.to_dict("records") == [
        {"sentence": "A", "word": "fluffy", "pieces": "fluf ##fy", "count": 2},
        {"sentence": "B", "word": "cat", "pieces": "cat", "count": 1},
    ]
    assert list(views.fragmentation_table(SentenceSplits([])).columns) == ["sentence", "word", "pieces", "count"]


def test_similarity_and_bank_tables_and_texts():
    mean = torch.tensor([[1.0, 0.81234, 0.1], [0.81234, 1.0, 0.3], [0.1, 0.3, 1.0]])
    sims = Similarities(["a cat", "the cat", "rates rose"], mean, mean * 0 + 0.9)
    table = views.similarity_table(sims.mean, sims.texts)
    assert list(table["sentence"]) == ["0: a cat", "1: the cat", "2: rates rose"]  # numbered from 0
    assert list(table.columns[1:]) == ["0", "1", "2"]
    assert table.iloc[0, 2] == pytest.approx(0.8123, abs=1e-6)
    text = views.similarities_text(sims)
    assert "**0.81** with mean pooling" in text and "mean pooling ranges from 0.10 to 0.81" in text
    assert "sentences 0 and 1: 0.81." in views.similarity_alt(sims.mean, "mean pooling")
    river = WordVectorCosines("bank", ("a", "b"), ["bank"], torch.tensor([1.0, 0.9, 0.55555]))
    same = WordVectorCosines("bank", ("a", "c"), ["bank"], torch.tensor([1.0, 0.95, 0.9]))
    bank = views.bank_table(river, same)
    assert list(bank["stage"]) == ["embeddings", "after layer 0", "after layer 1"]
    assert bank["river vs money"].iloc[-1] == pytest.approx(0.5556, abs=1e-6)
    assert "falls from 1.000 to 0.556; river vs stream ends at 0.900" in views.bank_alt(river, same)
    lines = views.bank_figure(river, same)
    assert list(lines.data[0].x) == ["embeddings", "after layer 0", "after layer 1"]
    assert lines.layout.yaxis.rangemode == "tozero"


def test_sinks_text_reads_the_summary():
    tokens = ["[CLS]", "a", "b", "[SEP]"]
    cls_head, sep_head = torch.zeros(4, 4), torch.zeros(4, 4)
    cls_head[:, 0], sep_head[:, 3] = 1.0, 1.0
    sinks = sink_summary(label_heads(torch.stack([cls_head, cls_head, sep_head])[None], tokens))
    text = views.sinks_text(sinks)
    assert "**2** of 3 heads are labelled [CLS] and **1** [SEP]" in text
    assert "[CLS] receives **0.67**" in text and text.endswith("All labels: 2 [CLS], 1 [SEP].")


@slow
@needs_minilm
def test_heads_follow_the_sidebar_and_offer_minilm(trained_mlm, tok):
    at = open_page("heads", {"model": "mlm"})
    no_exception(at)
    model, _, _ = trained_mlm
    run = run_encoder(model.bert, tok.encode("the cat sat on the mat"))
    assert np.allclose(np.asarray(figures(at)["heads_chosen"]["data"][0]["z"]), run.attentions[0, 2], atol=1e-6)
    assert "Running on the lab's trained MLM" in all_text(at)
    mech = head_mechanics(model.bert, tok.encode("the cat sat on the mat"), 0, 2)
    assert np.allclose(np.asarray(figures(at)["heads_q"]["data"][0]["z"]), mech.q.numpy(), atol=1e-6)
    at.button(key="heads_use_minilm").click().run()
    helpers.skip_predictions(at)
    no_exception(at)
    assert at.selectbox(key="model").value == "minilm"
    assert figures(at)["heads_grid"]["layout"]["xaxis"]["ticktext"] == [f"head {h}" for h in range(12)]


# ---- predict, then see: the questions the lesson asks before it shows ----

COUNT, PREVIOUS, TOP_KEY = "heads-weight-count", "heads-previous-token", "heads-top-key"
REVEALS = {"heads_small_weights", "heads_grid", "heads_chosen", "heads_previous_map", "heads_top_key"}
DEFAULT = "the cat sat on the mat"


def open_asking(query: dict | None = None, **options) -> AppTest:
    """The page as a student first meets it: every section, no prediction committed."""
    return helpers.open_linked("heads", query, skip=False, **options)


commit = helpers.commit_prediction  # choose or type the guess, then commit


def scored(at: AppTest) -> list[str]:
    """The verdicts on the page (the W_O check's own success message left out)."""
    said = [s.value for s in at.success] + [e.value for e in at.error]
    return [v for v in said if v.startswith(("Right", "Not quite"))]


def previous_by_hand(attentions: torch.Tensor) -> tuple[int, int]:
    """(layer, head) whose mean weight on the key one step back (rows 1..T-1) is largest."""
    T = attentions.shape[-1]
    rows = torch.arange(1, T)
    prev = attentions[..., rows, rows - 1].mean(-1)
    return divmod(int(prev.argmax()), prev.shape[1])


def asked(minilm, text: str = DEFAULT):
    """MiniLM's run on the sentence and the two choices "All heads at once" asks about."""
    run = run_encoder(minilm.model, minilm.tokenizer.encode(text))
    labels = label_heads(run.attentions, run.tokens)
    return run, previous_token_choice(labels), top_key_choice(run.attentions, run.tokens, skip=positional_heads(labels))


def option(choice, tokens) -> str:
    return f"{choice.best} {tokens[choice.best]}"


@slow
def test_the_lesson_opens_on_one_sentence_says_its_heads_are_random_and_asks_first(minilm):
    at = open_asking()
    no_exception(at)
    assert at.text_input(key="heads.heads_sentence_b").value == ""  # no second sentence unless one is typed
    text = all_text(at)
    assert "This model's weights are random, so its heads show no learned patterns" in text
    figs = figures(at)
    assert {"heads_q", "heads_k", "heads_v", "heads_concat"} <= set(figs)  # the worked half stays in view
    assert not REVEALS & set(figs)
    assert "attention weights in one layer" not in text and "puts the most weight on the token just" not in text
    assert at.number_input(key=f"_predict_guess_{COUNT}").value is None
    keys = [r.key for r in at.radio if str(r.key).startswith("_predict_guess_")]
    assert keys == [f"_predict_guess_{PREVIOUS}", f"_predict_guess_{TOP_KEY}"]  # both on MiniLM, trained
    assert "In all-MiniLM-L6-v2" in at.radio(key=f"_predict_guess_{PREVIOUS}").label


@slow
def test_the_weight_count_is_scored_against_the_models_weights(small_model, tok):
    enc = tok.encode(DEFAULT)
    n = run_encoder(small_model, enc).attentions[0].numel()  # one layer's weights, as the model returns them
    assert n == 4 * len(enc) ** 2
    at = commit(open_asking(), COUNT, n)
    no_exception(at)
    assert scored(at)[0].startswith("Right")
    assert f"= **{n:,}** attention weights in one layer" in all_text(at)
    mech = head_mechanics(small_model, enc, 0, 2)
    assert np.allclose(np.asarray(figures(at)["heads_small_weights"]["data"][0]["z"]), mech.weights, atol=1e-6)

    at = commit(open_asking(), COUNT, len(enc) ** 2)  # one grid: the heads forgotten
    assert "4.0 times too small" in scored(at)[0]
    assert "Every head computes its own T × T grid" in all_text(at)


def test_every_weight_count_trap_is_judged_wrong(small_model, tok):
    """H × T × T is right within 2 %; the count times the layers, times d, of one grid, or one per token is wrong,
    and names its own misconception."""
    enc = tok.encode(DEFAULT)
    mech = head_mechanics(small_model, enc, 0, 2)
    T, cfg = len(enc), small_model.config
    traps = mech.weight_count_traps(cfg.n_layers)
    assert traps == {"layers": 2 * 4 * T * T, "width": 4 * T * T * 64, "one head": T * T, "per token": 4 * T}
    q = questions.weight_count(cfg.n_heads, "the small model", traps, mech.n_weights)
    assert tolerance_for(q, mech.n_weights) == 0.02 and q.prompt.endswith("Right within 2 %.")
    assert judge_number(q, 4 * T * T, mech.n_weights).right
    assert not judge_number(q, 4 * (T + 1) ** 2, mech.n_weights).right  # a token miscounted
    for name, value in traps.items():
        verdict = judge_number(q, value, mech.n_weights)
        assert not verdict.right and verdict.misconception == questions.COUNT_TRAPS[name], name


@slow
def test_the_previous_token_head_is_minilms_whatever_the_sidebar(minilm):
    run, choice, _ = asked(minilm)
    best = previous_by_hand(run.attentions)
    right = f"layer {best[0]}, head {best[1]}"
    at = open_asking()  # the sidebar's model: the small seeded one, random
    assert len(at.radio(key=f"_predict_guess_{PREVIOUS}").options) == 4
    at = commit(at, PREVIOUS, right)
    no_exception(at)
    assert scored(at) == ["Right."]
    assert f"In all-MiniLM-L6-v2, **layer {best[0]}, head {best[1]}** puts the most weight" in all_text(at)
    assert np.allclose(np.asarray(figures(at)["heads_previous_map"]["data"][0]["z"]), run.attentions[best], atol=1e-6)
    assert not [b for b in at.button if b.key == "heads_show_previous"]  # the large map is the small model's

    wrong = next(f"layer {c[0]}, head {c[1]}" for c in choice.candidates if c != best)
    at = commit(open_asking(), PREVIOUS, wrong)
    assert f"the model says “{right}”" in scored(at)[0]
    layer, head = (int(x.split()[-1]) for x in wrong.split(", "))
    lab = label_heads(run.attentions, run.tokens)[layer * 12 + head]
    misconception = questions.WRONG_HEAD[lab.pattern].format(head=wrong, mass=lab.mass)
    assert misconception[:1].upper() + misconception[1:] in all_text(at)


@slow
@needs_minilm
def test_minilm_looks_back_with_layer_0_head_2_and_the_map_can_show_it(minilm):
    at = open_asking({"model": "minilm", "heads_head": "5"})
    no_exception(at)
    assert "heads show no learned patterns" not in all_text(at)
    run = run_encoder(minilm.model, minilm.tokenizer.encode(DEFAULT))
    assert previous_by_hand(run.attentions) == (0, 2)
    at = commit(at, PREVIOUS, "layer 0, head 2")
    assert scored(at) == ["Right."]
    assert "that weight is a stripe just left of the diagonal" in all_text(at)
    assert "heads_grid" not in figures(at)  # the word question is still open: every map waits for it
    at = at.button(key=f"_predict_skip_{TOP_KEY}").click().run()
    assert {"heads_grid", "heads_chosen"} <= set(figures(at))
    at.button(key="heads_show_previous").click().run()
    no_exception(at)
    assert (at.slider(key="heads.heads_layer").value, at.slider(key="heads.heads_head").value) == (0, 2)
    assert np.allclose(np.asarray(figures(at)["heads_chosen"]["data"][0]["z"]), run.attentions[0, 2], atol=1e-6)


@slow
def test_the_word_question_is_minilms_and_its_feedback_quotes_the_row(minilm):
    run, _, choice = asked(minilm)
    tokens = run.tokens
    at = commit(open_asking(), TOP_KEY, option(choice, tokens))
    no_exception(at)
    assert scored(at) == ["Right."]
    row = run.attentions[choice.layer, choice.head, choice.query]
    assert f"puts **{float(row.max()):.2f}** of its weight on **{choice.best} {tokens[choice.best]}**" in all_text(at)
    assert np.allclose(ys_of(figures(at)["heads_top_key"]), row.numpy(), atol=1e-6)
    wrong = next(k for k in choice.positions if k != choice.best)
    at = commit(open_asking(), TOP_KEY, f"{wrong} {tokens[wrong]}")
    assert f"the model says “{option(choice, tokens)}”" in scored(at)[0]
    assert (
        f"{float(row[wrong]):.2f} on “{tokens[wrong]}”, {float(row.max()):.2f} on “{tokens[choice.best]}”"
        in all_text(at)
    )


def ys_of(fig) -> np.ndarray:
    return np.asarray(fig["data"][0]["y"], dtype=np.float64)


@slow
@needs_minilm
def test_a_new_sentence_asks_again_and_skip_reveals_without_a_score():
    at = commit(open_asking(), COUNT, 256)
    assert "heads_small_weights" in figures(at)
    at.text_input(key="heads.heads_sentence").input("a dog ran home").run()
    assert not REVEALS & set(figures(at))  # a new sentence: every question is back
    at = at.button(key=f"_predict_skip_{PREVIOUS}").click().run()
    assert "heads_previous_map" in figures(at) and "heads_grid" not in figures(at) and not scored(at)
    at = at.button(key=f"_predict_skip_{TOP_KEY}").click().run()
    assert {"heads_grid", "heads_chosen", "heads_top_key"} <= set(figures(at)) and not scored(at)
    at.text_input(key="heads.heads_sentence_b").input("it was late").run()  # a second sentence: asked again
    assert "heads_grid" not in figures(at)


@slow
@needs_minilm
@pytest.mark.parametrize("key", [COUNT, PREVIOUS, TOP_KEY])
def test_a_commit_with_nothing_chosen_asks_for_an_answer_and_reveals_nothing(key):
    commit_nothing(open_asking(), key, REVEALS)


def test_every_wrong_head_is_named_with_what_it_does_instead():
    tokens = ["[CLS]", "a", "b", "c", "[SEP]"]
    heads = torch.zeros(5, 5, 5)
    for i in range(5):
        heads[0, i, max(i - 1, 0)] = 1.0  # previous token
        heads[1, i, min(i + 1, 4)] = 1.0  # next token
        heads[2, i, 4] = 1.0  # [SEP]
        heads[3, i, i] = 1.0  # self
    heads[4] = 1 / 5  # broad
    labels = label_heads(heads[None], tokens)
    q = questions.previous_token(labels[1:], "a model")
    assert [o.label for o in q.options] == [f"layer 0, head {h}" for h in range(1, 5)]
    said = [o.misconception for o in q.options]
    assert said[0].startswith("Attention runs both ways: layer 0, head 1 looks at the next token (1.00)")
    assert "parks its weight on [SEP]" in said[1] and "its own token" in said[2]
    assert (
        said[3] == "Not every head has a sharp pattern: layer 0, head 4 spreads its weight (its largest mass is 0.20)."
    )


@slow
@needs_minilm
def test_a_sentence_with_no_split_word_offers_one_that_has_some(minilm):
    at = open_page("heads", {"model": "minilm", "heads_sentence": "the cat sat on the mat"})
    no_exception(at)
    assert "heads_same_word" not in figures(at)
    at.button(key="heads_try_pieces").click().run()
    no_exception(at)
    assert at.text_input(key="heads.heads_sentence").value == "the unbelievably fluffy cat sat on the doormat"
    assert "heads_same_word" in figures(at)


# ---- nothing on the page answers a prediction before its commit; the feedback's facts; the quiz's idea ----

# The charts each prediction's reveal draws, or that show its answer: none may be on the page before its commit.
EVIDENCE_CHARTS = {
    COUNT: {"heads_small_weights"},
    PREVIOUS: {"heads_previous_map", "heads_grid", "heads_chosen", "heads_pieces_map"},
    TOP_KEY: {"heads_top_key", "heads_grid", "heads_chosen", "heads_pieces_map"},
}
SPLIT = "the unbelievably fluffy cat sat on the doormat"  # split words: the pieces step has its text and map


def evidence(minilm, small_model, tok, text: str, model: str) -> dict[str, list[str]]:
    """What would answer each prediction on this sentence, computed here from encoder_core and by hand."""
    enc = tok.encode(text)
    T, n = len(enc), 4 * len(enc) ** 2
    run, prev, top = asked(minilm, text)
    L, H = prev.candidates[prev.answer]
    prev_mass = previous_by_hand_mass(run.attentions)[L, H]
    row = run.attentions[top.layer, top.head, top.query]
    found = {
        COUNT: [f"**{n:,}** attention weights", f"4 × {T} × {T}"],
        PREVIOUS: [
            f"layer {L}, head {H}** puts the most weight",
            f"Layer {L}, head {H} is a previous token head",  # the pieces step's text
            f"prev {prev_mass:.2f}",  # the grid's caption over the head
        ],
        TOP_KEY: [
            f"puts **{float(row.max()):.2f}** of its weight",
            f"The weights of query {top.query} ({run.tokens[top.query]}) over",
        ],
    }
    if model == "minilm":  # the labels of "What each head does" are MiniLM's own
        found[PREVIOUS] += ["Layer 0, head 2: pattern"]  # the chosen head's metric (layer 0, head 2 by default)
    return found


def previous_by_hand_mass(attentions: torch.Tensor) -> torch.Tensor:
    T = attentions.shape[-1]
    rows = torch.arange(1, T)
    return attentions[..., rows, rows - 1].mean(-1)


def open_every_panel(at: AppTest) -> AppTest:
    return helpers.open_numbers(at, *figures(at))


def assert_holds_none(at: AppTest, found: dict[str, list[str]], where: str, asked_model_shown: bool) -> None:
    """asked_model_shown: the lesson's own charts are MiniLM's, the model the predictions ask about."""
    no_exception(at)
    text = helpers.page_evidence(at)
    for key, strings in found.items():
        for said in strings:
            assert said not in text, (where, key, said)
        assert not EVIDENCE_CHARTS[key] & set(figures(at)), (where, key, EVIDENCE_CHARTS[key] & set(figures(at)))
    if asked_model_shown:  # no table names every head's previous-token mass, no metric names a head's pattern
        assert not [df for df in at.dataframe if "previous token" in df.value.columns], where
        assert "previous token" not in [m.value for m in at.metric], where


@slow
@pytest.mark.parametrize("model", ["small", "minilm"])
def test_nothing_on_the_page_answers_a_prediction_before_its_commit(minilm, small_model, tok, model):
    for text in (DEFAULT, SPLIT):
        found = evidence(minilm, small_model, tok, text, model)
        query = {"model": model, "heads_sentence": text}
        shown = model == "minilm"
        assert_holds_none(open_every_panel(open_asking(query)), found, f"{text}: every section", shown)
        # In tabs: a student may open a later tab before answering the question of an earlier one.
        at, tabs = open_asking({**query, "step": "0"}, every_section=False), 0
        while True:
            assert_holds_none(open_every_panel(at), found, f"{text}: tab {tabs}", shown)
            tabs += 1
            if not [b for b in at.button if b.key == "section_next"]:
                break
            at.button(key="section_next").click().run()
        assert tabs == 7


@slow
def test_the_evidence_is_on_the_page_once_every_prediction_is_answered(minilm, small_model, tok):
    """The strings the test above looks for are real: answered (skipped), the page shows every one of them."""
    found = evidence(minilm, small_model, tok, SPLIT, "minilm")
    at = open_every_panel(helpers.skip_predictions(open_asking({"model": "minilm", "heads_sentence": SPLIT})))
    text, charts = helpers.page_evidence(at), set(figures(at))
    for key, strings in found.items():
        assert EVIDENCE_CHARTS[key] <= charts, key
        for said in strings:
            assert said in text, (key, said)
    assert [df for df in at.dataframe if "previous token" in df.value.columns]
    assert "previous token" in [m.value for m in at.metric]


def test_the_previous_token_options_quote_each_heads_masses_by_hand(minilm):
    """Each rival's feedback quotes its largest pattern mass, recomputed here from the weights; every rival looks
    back at least the margin less than the answer."""
    for text in (DEFAULT, "she sat on the bank of the river", "nobody answered the phone"):
        run, choice, _ = asked(minilm, text)
        labels = label_heads(run.attentions, run.tokens)
        q = questions.previous_token([head_label(labels, *c) for c in choice.candidates], "all-MiniLM-L6-v2")
        prev = previous_by_hand_mass(run.attentions)
        T = len(run.tokens)
        for (layer, head), o in zip(choice.candidates, q.options):
            w = run.attentions[layer, head]
            masses = {
                "previous token": float(prev[layer, head]),
                "next token": float(w[torch.arange(T - 1), torch.arange(1, T)].mean()),
                "[CLS]": float(w[:, 0].mean()),
                "[SEP]": float(w[:, T - 1].mean()),
                "self": float(w.diagonal().mean()),
            }
            assert f"{max(masses.values()):.2f})" in o.misconception
            if (layer, head) != choice.candidates[choice.answer]:
                assert masses["previous token"] <= float(prev.max()) - 0.1


def test_the_word_question_options_quote_the_rows_weights_by_hand(minilm):
    for text in (DEFAULT, "a dog ran home", "interest rates rose again this quarter", "it rained all day in london"):
        run, _, choice = asked(minilm, text)
        tokens, row = run.tokens, run.attentions[choice.layer, choice.head, choice.query]
        q = questions.top_key(choice, tokens, "all-MiniLM-L6-v2")
        assert f"layer {choice.layer}, head {choice.head}: which token does “{tokens[choice.query]}”" in q.prompt
        assert int(row.argmax()) == choice.best
        top = f"{float(row.max()):.2f} on “{tokens[choice.best]}”"
        said = {k: f"{float(row[k]):.2f} on “{tokens[k]}”, {top}" for k in choice.positions}
        helpers.assert_token_options(q, choice.positions, tokens, choice.best, said)


def test_each_prediction_names_a_generator_of_its_idea(minilm):
    from quiz_checks import assert_practised

    run, prev, top = asked(minilm)
    labels = label_heads(run.attentions, run.tokens)
    for q in (
        questions.weight_count(4, "the small model", {}, 256),
        questions.previous_token([head_label(labels, *c) for c in prev.candidates], "all-MiniLM-L6-v2"),
        questions.top_key(top, run.tokens, "all-MiniLM-L6-v2"),
    ):
        assert_practised(q)


def test_the_word_question_says_when_it_asks_about_another_head():
    tokens = ["[CLS]", "a", "b", "c", "[SEP]"]
    weights = (0.05, 0.05, 0.1, 0.7, 0.1)
    other = TopKeyChoice(1, 1, 2, (0, 2, 3, 4), 2, weights, (0, 0))
    q = questions.top_key(other, tokens, "a model")
    assert "(Layer 0, head 0 gives no word of your sentence a favourite that leads by 0.20 of its weight, so this " in (
        q.prompt
    )
    assert "layer 1, head 1: which token does “b” (position 2) put the most weight on?" in q.prompt
    assert "gives no word" not in questions.top_key(replace(other, preferred=(1, 1)), tokens, "a model").prompt
    left_out = questions.previous_token([], "a model", left_out=True)
    assert "not offered: too close to call" in left_out.prompt


@needs_minilm
def test_the_first_steps_do_not_run_minilm_and_all_heads_at_once_does(monkeypatch):
    """On the small model, "Split d into heads" needs no MiniLM pass: only the steps that ask about MiniLM's
    heads (from "All heads at once" on) run it, so a hall's first visits and new sentences cost less."""
    runs = []
    real = minilm_model.minilm_run
    monkeypatch.setattr(minilm_model, "minilm_run", lambda a, b: runs.append(a) or real(a, b))
    sentence = "the heron waded past three quiet boats"  # nobody else's: not in MiniLM's run cache
    at = helpers.open_linked("heads", {"heads_sentence": sentence, "model": "small"}, every_section=False)
    no_exception(at)
    assert runs == [] and "so each head works in d/h" in all_text(at)  # the first step, drawn
    at = helpers.open_linked(
        "heads", {"heads_sentence": sentence, "model": "small", "step": "2"}, every_section=False, skip=False
    )
    no_exception(at)
    assert runs == [sentence]
