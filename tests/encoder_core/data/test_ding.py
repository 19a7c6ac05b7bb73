"""Ding's everyday English: which parts of a dictionary line are whole sentences, and that none of the
lab's probes hides in them."""

from __future__ import annotations

from encoder_core.data.ding import DingUnavailable, english_sentences_of, read_ding
from encoder_core.training.everyday_probes import EVERYDAY_PROBES, probes_in
from encoder_core.training.probes import PROBES
from tests.needs import missing

LINES = [
    "# Version :: devel",
    "Milch {f} | Ist noch Milch da? :: milk | Is there any milk left?",
    "sich etw. merken :: to remember sth. | I'd better write this down; otherwise I’ll forget it.",
    "Bus {m} | Der Bus hat Verspätung. [ugs.] :: bus | The bus is behind schedule. [coll.]",
    "etw. teilen :: to share sth. with sb. | Share it / split it.",
    "Kurz. :: Short one.",
]


def test_only_whole_english_sentences_are_kept():
    kept = [s for line in LINES for s in english_sentences_of(line)]
    assert kept == ["Is there any milk left?", "The bus is behind schedule."]


def test_the_file_is_read_lower_cased_and_distinct(tmp_path):
    f = tmp_path / "de-en"
    f.write_text("\n".join(LINES + LINES[1:2]) + "\n", encoding="utf-8")
    assert read_ding(f) == ["is there any milk left?", "the bus is behind schedule."]


def test_no_probe_of_either_set_is_in_ding():
    try:
        sentences = read_ding()
    except DingUnavailable as err:
        missing("Ding (trans-de-en)", str(err))
    assert len(sentences) > 10_000
    assert probes_in(sentences, EVERYDAY_PROBES) == []
    filled = {p.text.replace("[MASK]", w).rstrip(" .") for p in PROBES for w in p.expected}
    assert not filled & {s.rstrip(" .?!") for s in sentences}
