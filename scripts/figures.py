"""Every figure the docs quote from the models, recomputed by one command: `make figures`.

    python -m scripts.figures             recompute everything, write docs/figures.json, rewrite the docs
    python -m scripts.figures --render    rewrite the docs' generated blocks from docs/figures.json only

The docs (README.md and docs/*.md) hold generated blocks, `<!-- figures:NAME -->...<!-- /figures:NAME -->`,
whose text is rendered here from docs/figures.json. Tests read that file, never the prose: one checks
that every block is the rendering of the file, others that the file holds what the code computes now.

Fine-tuning sums in a different order on different CPUs (ATen, MKL and oneDNN pick their kernels by the
CPU's vector units), so a fine-tuned score's last digits are a fact about one machine, not about the lab.
Each fine-tuned figure is therefore run under every CPU setting in CPU_SETTINGS, on one and two threads,
each in a child process, and the file keeps this machine's own value beside the band those runs span.
A test then asks a fresh run for a value inside the band, and for the property the lesson relies on.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FIGURES_FILE = ROOT / "docs" / "figures.json"
SEED = 0

# The CPU settings that stand in for other machines: this CPU's own kernels, AVX2 (most x86-64
# machines), and ATen's plain C++ kernels. Documented in docs/testing.md.
CPU_SETTINGS = {
    "native": {},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "default": {"ATEN_CPU_CAPABILITY": "default"},
}
THREADS = (1, 2)
# The starting points compared in the docs: end to end, a frozen encoder under a trained head, random weights.
COMPARED_STARTS_TASKS = ("sentence", "qa")


# ---------------------------------------------------------------- computing


def machine() -> dict:
    import torch

    return {
        "arch": platform.machine(),
        "cores": os.cpu_count(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "torch": torch.__version__,
    }


def fine_tuned_scores(threads: int) -> dict:
    """Held-out scores of the fine-tuned runs the docs quote, on this process's CPU setting."""
    import torch

    from encoder_core.finetune import tasks
    from encoder_core.training.checkpoint import load_small_mlm

    torch.set_num_threads(threads)
    model, tokenizer, _ = load_small_mlm()
    runs = {}
    for task in tasks.TASKS:
        for start in tasks.STARTS if task in COMPARED_STARTS_TASKS else ("finetune",):
            run = tasks.fine_tune(model.bert, tokenizer, task, start, seed=SEED)
            runs[f"{task}/{start}"] = {"held_out": run.held_out, "baseline": run.baseline, "steps": run.steps}
    return runs


def fine_tuned_bands() -> tuple[dict, dict]:
    """(this machine's runs, {run: [lowest, highest] held-out score over every CPU setting and thread count})."""
    results = {}
    for name, env in CPU_SETTINGS.items():
        for threads in THREADS:
            out = subprocess.run(
                [sys.executable, "-m", "scripts.figures", "--one-setting", str(threads)],
                cwd=ROOT,
                env={**os.environ, **env},
                capture_output=True,
                text=True,
                check=True,
            )
            results[(name, threads)] = json.loads(out.stdout)
            print(f"  fine-tuned under {name}, {threads} thread(s)", file=sys.stderr)
    here = results[("native", 1)]
    bands = {
        run: [min(r[run]["held_out"] for r in results.values()), max(r[run]["held_out"] for r in results.values())]
        for run in here
    }
    return here, bands


def outputs_figures() -> dict:
    from encoder_core.lessons.outputs import pooling_ranking
    from encoder_core.pretrained.minilm import load_minilm

    runs, bands = fine_tuned_bands()
    ranking = pooling_ranking(load_minilm())
    return {
        "seed": SEED,
        "runs": {name: {**run, "band": bands[name]} for name, run in runs.items()},
        "pooling": {"pairs": len(ranking.pairs), **ranking.rank_accuracy},
    }


def probe_records(model, tokenizer, probes=None) -> list[dict]:
    from encoder_core.training.probes import PROBES, run_probes

    return [
        {"text": r.probe.text, "rank": r.rank, "best": r.best, "probability": r.probability, "top5": r.top5}
        for r in run_probes(model, tokenizer, PROBES if probes is None else probes)
    ]


def models_figures() -> dict:
    from encoder_core.pretrained.minilm_mlm import load_minilm_mlm
    from encoder_core.training.checkpoint import load_small_mlm
    from encoder_core.training.everyday_probes import EVERYDAY_PROBES

    small, small_tok, small_meta = load_small_mlm()
    minilm, minilm_tok, minilm_meta = load_minilm_mlm()
    return {
        "quality": {
            "small_real": small_meta["real_metrics"],
            "small_grammar": small_meta["metrics"],
            "minilm_real": minilm_meta["real_metrics"],
        },
        "probes": {"small": probe_records(small, small_tok), "minilm": probe_records(minilm, minilm_tok)},
        "everyday_probes": {
            "small": probe_records(small, small_tok, EVERYDAY_PROBES),
            "minilm": probe_records(minilm, minilm_tok, EVERYDAY_PROBES),
        },
    }


def tradeoffs_figures() -> dict:
    from encoder_core import english_tokenizer, teaching_model
    from encoder_core.lessons.tradeoffs import mask_mismatch
    from encoder_core.model.costs import append_flops_closed_form
    from encoder_core.training.checkpoint import load_small_mlm

    tok = english_tokenizer()
    ids = tok.encode(TRADEOFFS_SENTENCE).ids
    bidirectional, cached = append_flops_closed_form(teaching_model(SEED).config, len(ids), TRADEOFFS_APPENDS)
    mlm = load_small_mlm()[0]
    mismatch = mask_mismatch(mlm, tok, ids, TRADEOFFS_POSITION, seed=SEED)
    return {
        "sentence": TRADEOFFS_SENTENCE,
        "tokens": len(ids),
        "appends": TRADEOFFS_APPENDS,
        "flops": {"bidirectional": bidirectional, "cached": cached},
        "mismatch": {"position": TRADEOFFS_POSITION, **{c.case: c.p_original for c in mismatch.cases}},
    }


TRADEOFFS_SENTENCE = "the cat sat on the mat and the dog slept"  # the lesson's default sentence
TRADEOFFS_APPENDS = 16
TRADEOFFS_POSITION = 2  # "cat"


def quiz_figures() -> dict:
    from encoder_core.quiz.table import fixed_questions, quiz_table

    return {"table": quiz_table(fixed_questions())}


def room_figures() -> dict:
    from classroom import codes, limits

    return {
        "alphabet": len(codes.ALPHABET),
        "length": codes.CODE_LENGTH,
        "space": codes.CODE_SPACE,
        "per_session": limits.PER_SESSION,
        "per_address": limits.PER_ADDRESS,
        "per_process": limits.PER_PROCESS,
        "day_hit_chance_100_rooms": limits.day_hit_chance(100),
    }


def compute() -> dict:
    import torch

    torch.set_num_threads(1)
    return {
        "machine": machine(),
        "cpu_settings": {name: env or "this CPU's own kernels" for name, env in CPU_SETTINGS.items()},
        "outputs": outputs_figures(),
        "models": models_figures(),
        "tradeoffs": tradeoffs_figures(),
        "quiz": quiz_figures(),
        "room": room_figures(),
    }


# ---------------------------------------------------------------- rendering


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def where(f: dict) -> str:
    m = f["machine"]
    return f"seed {f['outputs']['seed']}, on a {m['cores']}-core {m['arch']} machine, {m['cpu_capability']} kernels"


TASK_WORDS = {
    "sentence": ('mood with "not"', "accuracy"),
    "pair": ("does B follow A", "accuracy"),
    "tagging": ("a tag per word", "accuracy over words"),
    "qa": ("answer span", "exact match"),
}


def band(run: dict) -> str:
    lo, hi = run["band"]
    return pct(lo) if pct(lo) == pct(hi) else f"{pct(lo)} – {pct(hi)}"


def render_outputs_scores(f: dict) -> str:
    runs = f["outputs"]["runs"]
    lines = [
        f"| task | measure | held-out score ({where(f)}) | across CPU settings | majority baseline |",
        "|---|---|---|---|---|",
    ]
    for task, (name, measure) in TASK_WORDS.items():
        run = runs[f"{task}/finetune"]
        lines.append(f"| {name} | {measure} | {pct(run['held_out'])} | {band(run)} | {pct(run['baseline'])} |")
    return "\n".join(lines)


def render_outputs_starts(f: dict) -> str:
    runs = f["outputs"]["runs"]
    lines = [
        "| task (held-out, across CPU settings) | end to end | frozen encoder, trained head | random weights "
        "| pre-training buys |",
        "|---|---|---|---|---|",
    ]
    for task in COMPARED_STARTS_TASKS:
        r = {s: runs[f"{task}/{s}"] for s in ("finetune", "frozen", "scratch")}
        # The widest gain the bands allow: end to end at its lowest against random weights at their highest, and back.
        lo = 100 * (r["finetune"]["band"][0] - r["scratch"]["band"][1])
        hi = 100 * (r["finetune"]["band"][1] - r["scratch"]["band"][0])
        gain = f"{lo:.1f} points" if f"{lo:.1f}" == f"{hi:.1f}" else f"{lo:.1f} – {hi:.1f} points"
        lines.append(
            f"| {TASK_WORDS[task][0]} | {band(r['finetune'])} | {band(r['frozen'])} | {band(r['scratch'])} | {gain} |"
        )
    return "\n".join(lines)


def render_pooling(f: dict) -> str:
    p = f["outputs"]["pooling"]
    return (
        f"rank accuracy on {p['pairs']} paraphrase / non-paraphrase pairs: [CLS] {pct(p['cls'])}, mean {pct(p['mean'])}"
    )


def render_tradeoffs_append(f: dict) -> str:
    t = f["tradeoffs"]
    bi, cached = t["flops"]["bidirectional"], t["flops"]["cached"]
    return (
        f"{t['appends']} appends to the {t['tokens']}-token default on the small model: "
        f"{bi:,} vs {cached:,}, {bi / cached:.1f} times fewer"
    )


def render_tradeoffs_mismatch(f: dict) -> str:
    m = f["tradeoffs"]["mismatch"]
    return f"p(cat) {m['masked']:.3f} under [MASK], {m['random']:.3f} under a random word, {m['kept']:.3f} kept"


def render_quality(f: dict) -> str:
    q = f["models"]["quality"]
    real, grammar, minilm = q["small_real"], q["small_grammar"], q["minilm_real"]
    n = f"{real['n_examples']:,}"
    return "\n".join(
        [
            "| held-out set | predictor | top-1 | top-5 |",
            "|---|---|---|---|",
            f"| {n} WordNet example sentences (5% by hash), one content word | the lab's MLM "
            f"| {real['top1']:.3f} | {real['top5']:.3f} |",
            f"| | unigram baseline (most frequent training words) | {real['baseline_top1']:.3f} "
            f"| {real['baseline_top5']:.3f} |",
            f"| {grammar['n_examples']:,} grammar sentences, one content word | the lab's MLM "
            f"| {grammar['top1']:.3f} | {grammar['top5']:.3f} |",
            f"| | unigram baseline | {grammar['baseline_top1']:.3f} | {grammar['baseline_top5']:.3f} |",
            f"| {minilm['n_examples']:,} WordNet example sentences, as above | all-MiniLM-L6-v2 + the lab's MLM head "
            f"| {minilm['top1']:.3f} | {minilm['top5']:.3f} |",
        ]
    )


def render_probes(records: list[dict], probes=None) -> str:
    from encoder_core.training.probes import PROBES

    lines = ["| # | probe | expected | rank | five best guesses |", "|---|---|---|---|---|"]
    for n, (probe, r) in enumerate(zip(PROBES if probes is None else probes, records, strict=True), start=1):
        guesses = ", ".join(f"{tok} {p:.1%}" for tok, p in r["top5"])
        rank = f"{r['rank']} ({r['best']})" if len(probe.expected) > 1 else str(r["rank"])
        lines.append(f"| {n} | {probe.text} | {probe.label} | {rank} | {guesses} |")
    return "\n".join(lines)


def render_everyday(records: list[dict]) -> str:
    from encoder_core.training.everyday_probes import EVERYDAY_PROBES

    return render_probes(records, EVERYDAY_PROBES)


def render_room(f: dict) -> str:
    r = f["room"]
    chance = round(1 / r["day_hit_chance_100_rooms"], -3)
    return (
        f"{r['length']} characters from {r['alphabet']} (no 0/O, 1/I/L) give {r['alphabet']}^{r['length']}, "
        f"about {r['space']:.1e} codes. Failed look-ups (and wrong lecturer keys) are limited to "
        f"{r['per_session']} a minute per browser session, {r['per_address']} per address (a hall behind one NAT "
        f"or proxy shares one) and {r['per_process']} a minute per process whoever asks; at that rate, with 100 "
        f"rooms open, a day of guessing finds one with a chance of about 1 in {chance:,.0f} per process."
    ).replace("e+", "e")


def top5_count(records: list[dict]) -> str:
    """How many probes have an expected word among the model's five best guesses: "14 of 20"."""
    return f"{sum(r['rank'] <= 5 for r in records)} of {len(records)}"


RENDERERS = {
    "outputs-scores": render_outputs_scores,
    "outputs-starts": render_outputs_starts,
    "outputs-pooling": render_pooling,
    "tradeoffs-append": render_tradeoffs_append,
    "tradeoffs-mismatch": render_tradeoffs_mismatch,
    "mlm-quality": render_quality,
    "probes-small": lambda f: render_probes(f["models"]["probes"]["small"]),
    "probes-minilm": lambda f: render_probes(f["models"]["probes"]["minilm"]),
    "probes-small-top5": lambda f: top5_count(f["models"]["probes"]["small"]),
    "probes-minilm-top5": lambda f: top5_count(f["models"]["probes"]["minilm"]),
    "probe-2-rank-small": lambda f: str(f["models"]["probes"]["small"][1]["rank"]),
    "probes-everyday-minilm": lambda f: render_everyday(f["models"]["everyday_probes"]["minilm"]),
    "probes-everyday-minilm-top5": lambda f: top5_count(f["models"]["everyday_probes"]["minilm"]),
    "probes-everyday-small-top5": lambda f: top5_count(f["models"]["everyday_probes"]["small"]),
    "quiz-table": lambda f: f["quiz"]["table"],
    "room-codes": render_room,
    "machine": where,
}
BLOCK = re.compile(r"<!-- figures:(?P<name>[a-z0-9-]+) -->(?P<body>.*?)<!-- /figures:(?P=name) -->", re.S)


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def render_block(name: str, old_body: str, figures: dict) -> str:
    """A block's new body; a block written on its own lines stays on its own lines."""
    text = RENDERERS[name](figures)
    return f"\n{text}\n" if old_body.startswith("\n") else text


def render_text(text: str, figures: dict) -> str:
    def replace(m: re.Match) -> str:
        name = m["name"]
        if name not in RENDERERS:
            raise KeyError(f"no renderer for the block figures:{name}")
        return f"<!-- figures:{name} -->{render_block(name, m['body'], figures)}<!-- /figures:{name} -->"

    return BLOCK.sub(replace, text)


def blocks(text: str) -> list[tuple[str, str]]:
    return [(m["name"], m["body"]) for m in BLOCK.finditer(text)]


def load_figures() -> dict:
    return json.loads(FIGURES_FILE.read_text(encoding="utf-8"))


def rewrite_docs(figures: dict) -> list[Path]:
    changed = []
    for path in doc_files():
        text = path.read_text(encoding="utf-8")
        new = render_text(text, figures)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--render", action="store_true", help="only rewrite the docs from docs/figures.json")
    parser.add_argument("--one-setting", type=int, metavar="THREADS", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_setting:
        print(json.dumps(fine_tuned_scores(args.one_setting)))
        return
    if not args.render:
        figures = compute()
        FIGURES_FILE.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {FIGURES_FILE.relative_to(ROOT)}")
    for path in rewrite_docs(load_figures()):
        print(f"rewrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
