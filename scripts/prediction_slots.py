"""Where the right option of each lesson's choice predictions sits, over a handful of sentences and visits.

    .venv/bin/python -m scripts.prediction_slots [--visits 2]

Each lesson page runs in AppTest (no browser, no server) with every section shown, on each of
SENTENCES; each open choice prediction is skipped, and the reveal names the model's answer. Printed per
prediction: how many different right answers (labels) the sentences gave (1 where the labels are
generic, such as "the token after", or the answer never depends on the sentence), and how often the
right option was shown first, second, ...; then the share of right answers in each slot over all
predictions. With options drawn in a fresh order per visit, every slot should hold about its share
(1/4 for four options).
"""

from __future__ import annotations

import argparse
import re
from collections import Counter, defaultdict
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
GUESS, SKIP = "_predict_guess_", "_predict_skip_"
# Each lesson's own link parameter for its sentence.
SENTENCE_PARAMS = {
    "attention": "sentence",
    "padding": "sentence_a",
    "masking": "mlm_sentence",
    "block": "block_sentence",
    "heads": "heads_sentence",
    "outputs": "out_sentence",
    "tradeoffs": "sentence",
    "inside": "inside_sentence",
}
SENTENCES = (
    "the old dog slept by the warm fire",
    "a child drew a red kite in the park",
    "my sister sold her car to a neighbour last week",
    "the river rose quickly after three days of rain",
)
MODELS_ANSWER = re.compile(r"The model's answer: \*\*(.+)\*\*\.")


def inside_sentence(sentence: str) -> str:
    """Looking inside asks about one hidden word: hide the sentence's fourth word."""
    words = sentence.split()
    return " ".join([*words[:3], "[MASK]", *words[4:]])


def open_lesson(lesson: str, sentence: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"all": "1", SENTENCE_PARAMS[lesson]: sentence})
    at.run()
    at.switch_page(f"pages/{lesson}.py")
    return at.run()


def open_choices(at: AppTest) -> list[str]:
    """The keys of the choice predictions still open on the page."""
    return [str(r.key).removeprefix(GUESS) for r in at.radio if str(r.key or "").startswith(GUESS)]


def infos(at: AppTest) -> Counter:
    return Counter(e.value for e in at.info)


def skip_and_read(at: AppTest, key: str) -> tuple[list[str], str | None]:
    """Skip the prediction, as a student may: (its options in the order shown, the model's answer, which a
    skip states as "The model's answer: **label**.")."""
    radio = at.radio(key=f"{GUESS}{key}")
    shown = [label.split(". ", 1)[1] for label in radio.options]  # "A. label" -> label
    before = infos(at)
    at.button(key=f"{SKIP}{key}").click().run()
    said = [MODELS_ANSWER.search(v) for v in (infos(at) - before).elements()]
    said = [m.group(1) for m in said if m]
    return shown, said[0] if len(said) == 1 else None


def survey(visits: int) -> dict[str, dict]:
    found: dict[str, dict] = defaultdict(lambda: {"answers": Counter(), "slots": Counter(), "n_options": 0})
    for lesson in SENTENCE_PARAMS:
        for sentence in SENTENCES:
            text = inside_sentence(sentence) if lesson == "inside" else sentence
            for _ in range(visits):
                at = open_lesson(lesson, text)
                done: set[str] = set()
                for _ in range(12):  # a reveal may open another prediction
                    todo = [k for k in open_choices(at) if k not in done]
                    if not todo:
                        break
                    key = todo[0]
                    done.add(key)
                    shown, right = skip_and_read(at, key)
                    if right is None or right not in shown:
                        continue
                    entry = found[key]
                    entry["answers"][right] += 1
                    entry["slots"][shown.index(right)] += 1
                    entry["n_options"] = len(shown)
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--visits", type=int, default=2, help="fresh visits per lesson and sentence")
    args = ap.parse_args()
    found = survey(args.visits)
    letters = "ABCDEFGH"
    total: Counter = Counter()
    print(f"| prediction | options | different right answers over {len(SENTENCES)} sentences | right option shown as |")
    print("|---|---|---|---|")
    for key, entry in sorted(found.items()):
        n = sum(entry["slots"].values())
        slots = ", ".join(f"{letters[i]} {entry['slots'][i]}" for i in range(entry["n_options"]))
        print(f"| {key} | {entry['n_options']} | {len(entry['answers'])} | {slots} (of {n}) |")
        total.update(entry["slots"])
    n = sum(total.values())
    print()
    print(
        "Share of right answers in each slot, all predictions: "
        + ", ".join(f"{letters[i]} {total[i] / n:.0%}" for i in sorted(total))
        + f" (of {n})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
