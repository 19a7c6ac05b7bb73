"""Honest-figure rules, as pure checks on a drawn figure (the decoded plotly spec) and the text beside it.

Each check returns a list of problems (empty: the figure passes). A figure that zooms into a narrow
band of its values, or does not start its colour scale of attention at 0 and end it at 1, must say
so in its title or an annotation with the word ZOOM_MARKER.
"""

from __future__ import annotations

import math
import re

import numpy as np

ZOOM_MARKER = "zoomed"
NARROW = 0.1  # a value axis spanning less than this share of its largest value is zoomed
# A value axis titled just "probability" holds a distribution over the bars' categories (the likeliest words);
# "probability of the original word" holds one event's probability under several conditions, which need not
# add up to anything.
DISTRIBUTION_AXIS = "probability"
REST_WORD = "other"  # a part of a distribution says where the rest went


def _text(obj) -> str:
    if isinstance(obj, dict):
        return str(obj.get("text") or "")
    return str(obj or "")


def _title_and_notes(spec: dict) -> str:
    layout = spec.get("layout", {})
    return " ".join([_text(layout.get("title"))] + [_text(a) for a in layout.get("annotations", []) or []])


def says_zoomed(spec: dict) -> bool:
    return ZOOM_MARKER in _title_and_notes(spec).lower()


def _axis_name(ref: str | None, letter: str) -> str:
    """A trace's axis reference ("x", "y2") -> its layout key ("xaxis", "yaxis2")."""
    ref = ref or letter
    return f"{letter}axis{ref[1:]}"


def _numbers(values) -> np.ndarray | None:
    if values is None:
        return None
    try:
        arr = np.asarray(values, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        return None  # categories
    return arr[np.isfinite(arr)]


def value_axis(trace: dict) -> tuple[str, np.ndarray | None] | None:
    """(layout key, values) of the axis that carries a bar's or a line's values; None for other traces."""
    kind = trace.get("type", "scatter")
    if kind == "bar":
        if trace.get("orientation") == "h":
            return _axis_name(trace.get("xaxis"), "x"), _numbers(trace.get("x"))
        return _axis_name(trace.get("yaxis"), "y"), _numbers(trace.get("y"))
    if kind == "scatter":
        return _axis_name(trace.get("yaxis"), "y"), _numbers(trace.get("y"))
    return None


def _heatmap_axes(spec: dict) -> set[str]:
    """Axes that hold a heatmap: a line or text drawn over it marks cells, it does not plot values."""
    out = set()
    for t in spec.get("data", []):
        if t.get("type") == "heatmap":
            out |= {_axis_name(t.get("xaxis"), "x"), _axis_name(t.get("yaxis"), "y")}
    return out


def value_ranges(spec: dict) -> dict[str, tuple[float, float, bool]]:
    """Per value axis: the range a reader sees (lo, hi) and whether bars are on it.

    An explicit range is taken as given; otherwise plotly's autorange: the values' extent, widened
    to 0 for bars (they grow from 0) and for rangemode "tozero", cut at 0 for "nonnegative".
    """
    layout = spec.get("layout", {})
    skip = _heatmap_axes(spec)
    seen: dict[str, list] = {}
    for t in spec.get("data", []):
        va = value_axis(t)
        if va is None or va[0] in skip or va[1] is None or va[1].size == 0:
            continue
        key, values = va
        entry = seen.setdefault(key, [math.inf, -math.inf, False])
        entry[0], entry[1] = min(entry[0], float(values.min())), max(entry[1], float(values.max()))
        entry[2] = entry[2] or t.get("type") == "bar"
    out = {}
    for key, (lo, hi, bars) in seen.items():
        axis = layout.get(key, {}) or {}
        if axis.get("type") in ("log", "category", "date"):
            continue
        given = axis.get("range")
        if given is not None and axis.get("autorange") not in (True, "reversed") and None not in given:
            out[key] = (float(min(given)), float(max(given)), bars)
            continue
        mode = axis.get("rangemode", "normal")
        if bars or mode == "tozero":
            lo, hi = min(lo, 0.0), max(hi, 0.0)
        elif mode == "nonnegative":
            lo = max(lo, 0.0)
        out[key] = (lo, hi, bars)
    return out


def check_bars_from_zero(spec: dict) -> list[str]:
    """Bars (probabilities, counts, sizes) grow from 0: their axis must show 0; a part of a probability
    distribution says where the rest of it went."""
    problems = []
    for key, (lo, hi, bars) in value_ranges(spec).items():
        if bars and not lo <= 0.0 <= hi:
            problems.append(f"bars on {key} drawn on [{lo:.3g}, {hi:.3g}], which leaves out 0")
    layout = spec.get("layout", {})
    for t in spec.get("data", []):
        va = value_axis(t)
        if t.get("type") != "bar" or va is None or va[1] is None or va[1].size == 0:
            continue
        axis_title = _text((layout.get(va[0], {}) or {}).get("title")).strip().lower()
        if axis_title != DISTRIBUTION_AXIS:
            continue
        total = float(va[1].sum())
        if total < 0.995 and REST_WORD not in _title_and_notes(spec).lower():
            problems.append(f"probability bars sum to {total:.0%} and the chart does not say where the rest went")
    return problems


def check_zoom_declared(spec: dict) -> list[str]:
    """A value axis that leaves out 0, or spans under NARROW of its values' size, says it is zoomed."""
    if says_zoomed(spec):
        return []
    problems = []
    for key, (lo, hi, _) in value_ranges(spec).items():
        size = max(abs(lo), abs(hi))
        if size == 0:
            continue
        if lo > 0 or hi < 0:
            problems.append(
                f"{key} spans [{lo:.4g}, {hi:.4g}], leaving out 0, and the chart does not say '{ZOOM_MARKER}'"
            )
        elif hi - lo < NARROW * size:
            problems.append(f"{key} spans only [{lo:.4g}, {hi:.4g}] and the chart does not say '{ZOOM_MARKER}'")
    return problems


def is_attention_heatmap(trace: dict) -> bool:
    if trace.get("type") != "heatmap":
        return False
    colorbar = _text((trace.get("colorbar") or {}).get("title")).lower()
    hover = str(trace.get("hovertemplate") or "").lower()
    return "weight" in colorbar or "attention" in colorbar or ("query" in hover and "key" in hover)


def check_attention_scale(spec: dict) -> list[str]:
    """Attention weights are shares of 1: their colours run from exactly 0 to exactly 1, or the chart says not."""
    if says_zoomed(spec):
        return []
    problems = []
    for t in spec.get("data", []):
        if is_attention_heatmap(t) and (t.get("zmin") != 0 or t.get("zmax") != 1):
            problems.append(f"attention colour scale {t.get('zmin')}..{t.get('zmax')} instead of 0..1")
    return problems


def _shows_ticks(axis: dict) -> bool:
    return axis.get("visible", True) is not False and axis.get("showticklabels", True) is not False


def check_labelled(spec: dict, alt: str) -> list[str]:
    """A title, a title on every axis a trace is drawn on (unless its tick labels are hidden), and a text
    alternative of at least a few words."""
    layout = spec.get("layout", {})
    problems = []
    if not _text(layout.get("title")).strip():
        problems.append("no title")
    if len(str(alt or "").split()) < 4:
        problems.append(f"no text alternative (alt={alt!r})")
    axes = set()
    for t in spec.get("data", []):
        if t.get("type") in ("pie", "table") or t.get("mode") == "text":
            continue
        axes |= {_axis_name(t.get("xaxis"), "x"), _axis_name(t.get("yaxis"), "y")}
    for key in sorted(axes):
        axis = layout.get(key, {}) or {}
        if _shows_ticks(axis) and not _text(axis.get("title")).strip():
            problems.append(f"{key} has no title")
    return problems


def check_figure(spec: dict, alt: str) -> list[str]:
    """Every per-chart rule."""
    return (
        check_labelled(spec, alt) + check_bars_from_zero(spec) + check_zoom_declared(spec) + check_attention_scale(spec)
    )


# ---- numbers in text --------------------------------------------------------------------------

# A number written with a decimal point, an exponent or a % (counts such as "12 tokens" are exact: left out).
NUMBER = re.compile(r"(?<![\w.])[-−]?(?:\d+\.\d+(?:e[-+−]?\d+)?|\d+e[-+−]?\d+|\d+(?=%))(%?)(?![\w])")


def _parse(token: str) -> tuple[float, float]:
    """'1.2e-07' -> (1.2e-07, 0.05e-07): the value and half a unit of its last digit shown."""
    percent = token.endswith("%")
    body = token.rstrip("%").replace("−", "-")
    mantissa, _, exponent = body.lower().partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    scale = 10.0 ** int(exponent or 0) * (0.01 if percent else 1.0)
    return float(mantissa) * scale, 0.5 * 10.0**-decimals * scale


def numbers_in(text: str) -> list[str]:
    return [m.group(0) for m in NUMBER.finditer(text)]


def same_quantity_other_digits(texts: list[str], metrics: list[str]) -> list[str]:
    """Numbers in the text that are a metric's value written with other digits ('1e-07' beside a
    metric of '1.2e-07'): one quantity shown as two numbers. Zeros are left out (many things are 0)."""
    problems = []
    shown = []
    for m in metrics:
        found = numbers_in(str(m))
        if len(found) == 1 and NUMBER.fullmatch(str(m).strip().replace(",", "")):
            shown.append(found[0])
    for text in texts:
        for c in numbers_in(text):
            cv, ch = _parse(c)
            for m in shown:
                mv, mh = _parse(m)
                if math.isclose(cv, mv, rel_tol=1e-9) and math.isclose(ch, mh, rel_tol=1e-9):
                    continue  # the same digits (0.81 and 81% included)
                if mv == 0 or cv == 0:
                    continue
                if abs(cv - mv) <= max(ch, mh) * (1 + 1e-9):
                    problems.append(f"'{c}' in {text[:80]!r} is the metric {m} with other digits")
    return problems


LAYER_OR_HEAD = re.compile(r"\b(layer|head)\s*(\d+)", re.IGNORECASE)
NUMBERED = re.compile(r"\b(layer|head|block|position|sentence)\s*(\d+)", re.IGNORECASE)


# A text that names one of these models speaks of its layers and heads, not of the controls' model (a lesson may
# ask about a trained model beside the one its sliders pick): it is held to that model's ranges, from 0 too.
NAMED_MODELS = {"all-MiniLM-L6-v2": {"layer": (0, 5), "head": (0, 11)}}


def numbering_outside(texts: list[str], ranges: dict[str, tuple[int, int]]) -> list[str]:
    """'layer N' / 'head N' in the text with N outside the range its control offers: two numberings."""
    problems = []
    for text in texts:
        held = next((r for name, r in NAMED_MODELS.items() if name in text), ranges)
        for m in LAYER_OR_HEAD.finditer(text):
            what, n = m.group(1).lower(), int(m.group(2))
            if what in held and not held[what][0] <= n <= held[what][1]:
                problems.append(f"'{m.group(0)}' in {text[:80]!r}, but the {what} control runs {held[what]}")
        if re.search(r"\b(layer|head|block|position)(\d|<br>\d)", text, re.IGNORECASE):
            problems.append(f"a number glued to its word, or wrapped away from it, in {text[:80]!r}")
    return problems


def labels_not_from_zero(labels: list[str]) -> list[str]:
    """A chart's labels that number a sequence ('after layer 1', 'after layer 2') must start it at 0."""
    seen: dict[str, set[int]] = {}
    for label in labels:
        for m in NUMBERED.finditer(str(label)):
            seen.setdefault(m.group(1).lower(), set()).add(int(m.group(2)))
    return [
        f"labels number {what}s {sorted(ns)[:4]}..., not from 0"
        for what, ns in seen.items()
        if len(ns) > 1 and min(ns) != 0
    ]
