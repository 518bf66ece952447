"""QA s47 (cvd): chart colours a colour-blind viewer cannot tell apart.

Simulated with the Machado et al. (2009) matrices at severity 1 and CIE76 distances, the
no_validity_gvt purple and the OPT blue were one colour to a protanope (distance 2.6),
fact_only and recency_raw 3.1, density's green and the ablation grey 9.7 to a deuteranope;
the Evidence explorer's timeline drew graph_edge and external in one colour (0) for everyone.

The simulation here is the test's own (sRGB linearisation, the published matrices applied in
linear RGB, CIE XYZ and L*a*b* under D65), not the product's: every set of colours one chart
can show keeps each pair at distance 12 or more under normal vision, protanopia, deuteranopia
and tritanopia, and each line colour at 3:1 contrast or more on white.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from memaudit_ui import figures

#: Machado, Oliveira & Fernandes (2009), severity 1.0, for linear RGB.
CVD = {
    "normal": np.eye(3),
    "protanopia": np.array(
        [
            [0.152286, 1.052583, -0.204868],
            [0.114503, 0.786281, 0.099216],
            [-0.003882, -0.048116, 1.051998],
        ]
    ),
    "deuteranopia": np.array(
        [
            [0.367322, 0.860646, -0.227968],
            [0.280085, 0.672501, 0.047413],
            [-0.011820, 0.042940, 0.968881],
        ]
    ),
    "tritanopia": np.array(
        [
            [1.255528, -0.076749, -0.178779],
            [-0.078411, 0.930809, 0.147602],
            [0.004733, 0.691367, 0.303900],
        ]
    ),
}
#: linear sRGB -> CIE XYZ (IEC 61966-2-1, D65).
SRGB_TO_XYZ = np.array(
    [
        [0.4124564, 0.3575761, 0.1804375],
        [0.2126729, 0.7151522, 0.0721750],
        [0.0193339, 0.1191920, 0.9503041],
    ]
)
WHITE = SRGB_TO_XYZ.sum(axis=1)
MIN_DELTA_E = 12.0
MIN_CONTRAST = 3.0


def _linear(hex_color: str) -> np.ndarray:
    h = hex_color.lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    c = np.array([int(h[i : i + 2], 16) for i in (0, 2, 4)]) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lab(linear_rgb: np.ndarray) -> np.ndarray:
    t = (SRGB_TO_XYZ @ np.clip(linear_rgb, 0.0, 1.0)) / WHITE
    eps, kappa = 216 / 24389, 24389 / 27
    f = np.where(t > eps, np.cbrt(t), (kappa * t + 16) / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _delta_e(a: str, b: str, vision: str) -> float:
    m = CVD[vision]
    return float(np.linalg.norm(_lab(m @ _linear(a)) - _lab(m @ _linear(b))))


def _contrast_on_white(color: str) -> float:
    luminance = float(SRGB_TO_XYZ[1] @ _linear(color))
    return 1.05 / (luminance + 0.05)


def _budget_chart() -> dict[str, str]:
    """Every line colour a budget curve can draw: OPT, the ablation grey, all palette slots
    (reference writers, then stores / plugin writers) and the External stores chart's package
    OPT, which is drawn with the stores' colours."""
    n = len(figures.METHOD_PALETTE) + len(figures.EXTRA_PALETTE)
    return {
        "OPT": figures.COLORS["opt"],
        "ablation": figures.COLORS["ablation"],
        "package OPT": figures.PACKAGE_OPT_LINE["color"],
        **{f"slot {k}": figures._slot_style(k)[0] for k in range(n)},
    }


CHARTS = {
    "budget curves": _budget_chart,
    "ablation pools": lambda: {
        "OPT": figures.COLORS["opt"],
        **{f"pool {k}": c for k, c in enumerate(figures.ABLATION_PALETTE)},
    },
    # Unknown types and kinds are drawn in "#555".
    "timeline types": lambda: {**figures.TYPE_COLORS, "unknown": "#555"},
    "unit kinds": lambda: {**figures.KIND_COLORS, "unknown": "#555"},
    "graph layers": lambda: dict(figures.LAYER_COLORS),
    "engines": lambda: {**figures.ENGINE_COLORS, "unknown": "#555"},
}


@pytest.mark.parametrize("vision", list(CVD))
@pytest.mark.parametrize("chart", list(CHARTS))
def test_colours_on_one_chart_stay_apart(chart: str, vision: str) -> None:
    colours = CHARTS[chart]()
    close = [
        f"{a} {ca} / {b} {cb}: {d:.1f}"
        for (a, ca), (b, cb) in itertools.combinations(colours.items(), 2)
        if (d := _delta_e(ca, cb, vision)) < MIN_DELTA_E
    ]
    assert close == [], f"{chart} under {vision}: {close}"


def test_the_qa_pairs_are_now_apart() -> None:
    slots = figures.writer_color_slots()

    def writer(name: str) -> str:
        return figures._slot_style(slots[name])[0]

    assert _delta_e(writer("no_validity_gvt"), figures.COLORS["opt"], "protanopia") >= 12
    assert _delta_e(writer("fact_only"), writer("recency_raw"), "protanopia") >= 12
    assert _delta_e(writer("density"), figures.COLORS["ablation"], "deuteranopia") >= 12
    types = figures.TYPE_COLORS
    assert _delta_e(types["graph_edge"], types["external"], "normal") >= 12


@pytest.mark.parametrize("chart", list(CHARTS))
def test_line_and_marker_colours_read_on_white(chart: str) -> None:
    faint = {
        name: round(_contrast_on_white(c), 2)
        for name, c in CHARTS[chart]().items()
        if _contrast_on_white(c) < MIN_CONTRAST
    }
    assert faint == {}, f"{chart}: under {MIN_CONTRAST}:1 on white: {faint}"
