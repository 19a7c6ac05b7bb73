"""Forward-pass speed: encoder_core's block stack against nn.TransformerEncoder holding the same weights.

    python -m benchmarks.forward [--threads N] [--budget SECONDS] [--clock cpu|wall] [--quick]

Only the block stack is timed (x -> layers -> x), on both sides: embeddings, the pooler
and our pre-norm final LayerNorm have no counterpart inside nn.TransformerEncoder.
Both run in eval mode under torch.inference_mode, without a padding mask, so PyTorch
takes its fused native fast path (torch._transformer_encoder_layer_fwd). The column
"torch python" turns that fast path off, which shows how much of any gap is the fused kernel.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time

import torch
from torch import nn

from encoder_core import EncoderConfig, build_encoder
from encoder_core.model.reference import to_torch_layer

MODELS = {
    "d64 h4 L2": EncoderConfig(vocab_size=200, d_model=64, n_heads=4, n_layers=2),
    "d384 h12 L6": EncoderConfig(vocab_size=200, d_model=384, n_heads=12, n_layers=6, d_ff=1536),
}
SHAPES = [(1, 16), (8, 64), (8, 512)]
TARGET = 1.25


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def interleaved_medians(
    fns: dict, budget: float, clock=time.process_time, min_rounds: int = 7, max_rounds: int = 300
) -> dict:
    """Median time of each fn, measured in rounds that call every fn once, in rotating order.

    On a shared machine the load drifts; interleaving gives every variant the same drift,
    so the ratios stay fair even when the absolute times wander. The default clock is this
    process's CPU time: with one thread it ignores time spent waiting for a core.
    """
    names = list(fns)
    for name in names:  # warm-up: allocator, kernels, caches
        fns[name]()
        fns[name]()
    times: dict[str, list[float]] = {n: [] for n in names}
    spent, rounds = 0.0, 0
    while rounds < min_rounds or (spent < budget and rounds < max_rounds):
        order = names[rounds % len(names) :] + names[: rounds % len(names)]
        for name in order:
            t0 = clock()
            fns[name]()
            dt = clock() - t0
            times[name].append(dt)
            spent += dt
        rounds += 1
    return {n: statistics.median(t) for n, t in times.items()}


def _python_path(fn):
    """fn with PyTorch's fused encoder fast path turned off."""

    def run():
        torch.backends.mha.set_fastpath_enabled(False)
        try:
            return fn()
        finally:
            torch.backends.mha.set_fastpath_enabled(True)

    return run


def run_ours(layers, x, need_weights=False, return_trace=False):
    for block in layers:
        x, _, _ = block(x, need_weights=need_weights, return_trace=return_trace)
    return x


def variants(layers, ref, x) -> dict:
    """The five timed calls for one input."""
    return {
        "ours": lambda: run_ours(layers, x),
        "torch": lambda: ref(x),
        "torch_py": _python_path(lambda: ref(x)),
        "weights": lambda: run_ours(layers, x, need_weights=True),
        "trace": lambda: run_ours(layers, x, need_weights=True, return_trace=True),
    }


def torch_stack(enc) -> nn.TransformerEncoder:
    layers = [to_torch_layer(b) for b in enc.encoder.layer]
    ref = nn.TransformerEncoder(copy.deepcopy(layers[0]), num_layers=len(layers), enable_nested_tensor=False)
    ref.layers = nn.ModuleList(layers)
    return ref.eval()


def bench(budget: float, shapes, models, clock=time.process_time) -> list[dict]:
    rows = []
    for name, cfg in models.items():
        enc = build_encoder(cfg.with_(max_positions=max(t for _, t in shapes)), seed=0)
        layers, ref = enc.encoder.layer, torch_stack(enc)
        for B, T in shapes:
            x = torch.randn(B, T, cfg.d_model, generator=torch.Generator().manual_seed(0))
            with torch.inference_mode():
                gap = float((run_ours(layers, x) - ref(x)).abs().max())
                fns = variants(layers, ref, x)
                medians = interleaved_medians(fns, budget * len(fns), clock)
            rows.append(dict(model=name, B=B, T=T, **medians))
            rows[-1]["gap"] = gap
            print(_line(rows[-1]), flush=True)
    return rows


HEADER = (
    f"{'model':<12} {'B':>2} {'T':>4} | {'ours ms':>8} {'torch ms':>9} {'ratio':>6} | "
    f"{'torch python ms':>15} {'ratio':>6} | {'+weights':>9} {'+trace':>9} | {'max|diff|':>9}"
)


def _line(r: dict) -> str:
    ms = 1e3
    return (
        f"{r['model']:<12} {r['B']:>2} {r['T']:>4} | {r['ours'] * ms:>8.3f} {r['torch'] * ms:>9.3f} "
        f"{r['ours'] / r['torch']:>5.2f}x | {r['torch_py'] * ms:>15.3f} {r['ours'] / r['torch_py']:>5.2f}x | "
        f"{r['weights'] / r['ours']:>8.2f}x {r['trace'] / r['ours']:>8.2f}x | {r['gap']:>9.1e}"
    )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=1, help="torch threads (the app serves with 1)")
    p.add_argument("--budget", type=float, default=1.0, help="seconds of timed repeats per measurement")
    p.add_argument("--clock", choices=sorted(CLOCKS), default="cpu", help="cpu: process CPU time (default); wall")
    p.add_argument("--quick", action="store_true", help="small model and short shapes only")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    shapes = SHAPES[:2] if args.quick else SHAPES
    models = dict(list(MODELS.items())[:1]) if args.quick else MODELS
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), float32, eval, inference_mode, "
        f"{args.clock} clock"
    )
    print("timed: the block stack only (x -> layers); medians; ratio = ours / torch (target <= 1.25x)")
    print("+weights / +trace: ours with need_weights=True / return_trace=True, relative to ours without\n")
    print(HEADER)
    print("-" * len(HEADER))
    rows = bench(args.budget, shapes, models, CLOCKS[args.clock])
    worst = max(r["ours"] / r["torch"] for r in rows)
    verdict = "within" if worst <= TARGET else "over"
    print(f"\nworst ratio ours/torch (fused): {worst:.2f}x, {verdict} the {TARGET}x target")


if __name__ == "__main__":
    main()
