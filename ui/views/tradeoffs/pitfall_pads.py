"""Section 7, pitfalls 1-2, the pads: a forgotten key padding mask, and the pads' outputs."""

from __future__ import annotations

from encoder_core.lessons.padding import PadLeak

from .. import padding
from ..figures import Chart


def pitfall_mask_alt(leak: PadLeak) -> str:
    return (
        f"Without the mask, the sentence's outputs move by up to {leak.gap_unmasked:.3g} as {leak.n_pads} pads "
        f"are added; with it, by at most {max(leak.curve_masked):.1e}."
    )


def pitfall_mask_chart(leak: PadLeak) -> Chart:
    """The padding lesson's pad-leak curve, without its mark for one batch."""
    return Chart(padding.leak_curve_figure(leak), pitfall_mask_alt(leak), padding.leak_curve_table(leak))


def pitfall_mask_metric(leak) -> tuple[str, str]:
    return (f"Gap without the mask, at {leak.n_pads} pads", f"{leak.gap_unmasked:.3g} (with it {leak.gap_masked:.1e})")


# Pitfall 2 is the padding lesson's fast-path run, so it shows that lesson's chart of it.
pitfall_pads_chart = padding.fast_path_chart


def pitfall_pads_metric(fast) -> tuple[str, str]:
    return ("Largest pad-row norm, train vs eval", f"{max(fast.norms_train):.2f} vs {max(fast.norms_eval):.2f}")
