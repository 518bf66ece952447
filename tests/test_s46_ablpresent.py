"""Speaker QA s46: the Ablations and sensitivity page in presentation mode at 1024 x 768 with
the sidebar open (a 524 px main column).

1. The cost-rule chart was held to one screen whatever its rows of panels: 7 panels in 3 rows
   left each panel about 40 px for 7 writers, whose names and value labels overprinted.
2. The drop chart's 3 pools x 7 budgets had 11 px a bar for 20 px value labels: "27.3%" was
   printed over "27.3%", "18.4%" over "23.5%".
3. The Presets, removed-types and time controls in three columns of about 195 px: a second
   preset's chip ran out of its box, whose icons wrapped onto the time slider.

The figure checks measure the figures with a model of the browser of their own (character
widths and line heights of the labels in em, plotly's grouped-bar geometry), and check that
outside presentation mode both figures are exactly the base commit's.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest
from app_utils import open_app
from plotly.utils import PlotlyJSONEncoder

from memaudit_core import robustness
from memaudit_core.costs import COST_RULES
from memaudit_core.package import load_package
from memaudit_ui import figures

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"

#: The main column at 1024 px with the sidebar open in presentation mode (px).
CHART_PX = 524
#: What a 1280 x 720 screen shows of a chart under Streamlit's header (px).
SCREEN_CHART_PX = 630
#: Width of a label character (em): Source Sans' digits and "%" are about 0.5 em, so 0.6 is
#: an upper bound.
LABEL_EM = 0.6
#: Height of a value label's box (em): digits and "%" stand about 0.72 em tall.
LABEL_LINE_EM = 1.0
#: Pitch (em of the larger of the names' and the labels' fonts) a writer's row needs so that
#: neither its name nor its value label touches the next row's: a line of text.
ROW_LINE_EM = 1.2
#: Gap between a bar's end and its outside label (plotly: 3 px).
TEXT_PAD_PX = 3
#: Left of the drop chart's plot: the budgets (3 digits at 19 px), their standoff and pad and
#: the rotated axis title (22 px): plotly's automargin takes about 90 px; 100 is a bound.
DROP_LEFT_PX = 100
#: What plotly leaves under the upper row of panels for its tick labels (font and pad).
TICK_PAD_PX = 10


def _small():
    return load_package(SAMPLES / "memaudit-small-s0.json")


@pytest.fixture(scope="module")
def cost_charts() -> dict[str, tuple]:
    """The cost-rule sensitivities QA drew: the page's default rules (4 rules and 3
    reference panels) and every rule (11 panels)."""
    pkg = _small()
    grid = pkg.budget_grid()
    every = (robustness.AS_STORED, *COST_RULES)
    return {
        "default": robustness.cost_rule_sensitivity(pkg, grid, robustness.default_cost_rules()),
        "every": robustness.cost_rule_sensitivity(pkg, grid, every),
    }


def _title(name: str) -> str:
    return f"Mean ratio per writer and cost rule · {name}"


@pytest.mark.parametrize("case", ["default", "every"])
def test_every_writer_row_of_every_cost_rule_panel_is_a_readable_line(cost_charts, case):
    sens = cost_charts[case]
    fig = figures.cost_rule_ratio_chart(sens, _title("memaudit-small-s0"), present=True)
    layout = fig.layout
    plot_px = layout.height - layout.margin.t - layout.margin.b
    writers = list(sens.writers)
    assert len(writers) == 7
    names_px = max(axis.tickfont.size for axis in fig.select_yaxes())
    labels_px = max(bar.textfont.size for bar in fig.data if bar.type == "bar")
    need = ROW_LINE_EM * max(names_px, labels_px)
    domains = sorted({tuple(axis.domain) for axis in fig.select_yaxes()}, reverse=True)
    assert len(domains) >= 3, domains  # rows of panels: 3 for 7 panels, 4 for 11
    for low, high in domains:
        pitch = (high - low) * plot_px / len(writers)
        # At the base commit 5.7 px a writer (7 panels) and 4 px (11 panels).
        assert pitch >= need, (case, pitch, need)
    # Between two rows: the upper row's 0 / 1 ticks, then the lower row's panel titles.
    titles = [a for a in layout.annotations if a.yref == "paper" and a.yanchor == "bottom"]
    for (low, _), (_, high) in zip(domains, domains[1:], strict=False):
        lines = max(a.text.count("<br>") + 1 for a in titles if abs(a.y - high) < 1e-9)
        title_px = max(a.font.size for a in titles)
        gap = (low - high) * plot_px
        assert gap >= names_px + TICK_PAD_PX + ROW_LINE_EM * title_px * lines, (gap, lines)
    # Taller than a screen, and said so: the page then shows it whole and scrolls.
    assert layout.height > SCREEN_CHART_PX
    assert figures.scrolls(fig)


@pytest.fixture(scope="module")
def travel_curves():
    pkg = load_package(SAMPLES / "travel-assistant.json")
    return robustness.ablation_curves(
        pkg, pkg.budget_grid(), ["no_validity", "generic"], [("raw_span",)]
    )


def _unproven(curves):
    """The same curves as if no optimum had been proven (hatched bars, starred labels and
    the legend's hatched entry, a bar trace of its own)."""
    return [
        dataclasses.replace(
            c,
            points=tuple(
                dataclasses.replace(p, certified=False, pool_label="incumbent") for p in c.points
            ),
        )
        for c in curves
    ]


def _drop_geometry(fig):
    """Each bar's box and its value label's box, (left, right, top, bottom) in px from the
    plot's top left corner, from plotly's grouped-bar geometry: every bar trace a slot in
    each budget's row, ``bargap`` of the row between groups, the bars of a group touching."""
    layout = fig.layout
    plot_h = layout.height - layout.margin.t - layout.margin.b
    plot_w = CHART_PX - DROP_LEFT_PX - layout.margin.r
    budgets = list(layout.yaxis.categoryarray)
    bars = [t for t in fig.data if t.type == "bar"]
    row = plot_h / len(budgets)
    group = row * (1 - layout.bargap)
    thick = group / len(bars)
    lo, hi = layout.xaxis.range
    rects, labels = [], []
    for slot, trace in enumerate(bars):
        for y, x, text in zip(trace.y, trace.x, trace.text or (), strict=False):
            if y is None:
                continue
            middle = budgets.index(y) * row + (row - group) / 2 + (slot + 0.5) * thick
            end = (x - lo) / (hi - lo) * plot_w
            rects.append(((0.0, end, middle - thick / 2, middle + thick / 2), (slot, y)))
            font = trace.textfont.size
            width = LABEL_EM * font * len(text)
            half = LABEL_LINE_EM * font / 2
            box = (end + TEXT_PAD_PX, end + TEXT_PAD_PX + width, middle - half, middle + half)
            labels.append((box, (slot, y), text))
    return plot_w, rects, labels


def _overlap(a, b) -> bool:
    return a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]


@pytest.mark.parametrize("proven", [True, False])
def test_drop_chart_value_labels_keep_clear_of_each_other_and_of_other_bars(travel_curves, proven):
    curves = travel_curves if proven else _unproven(travel_curves)
    fig = figures.ablation_drop_chart(
        curves, "Drop 1 − pool OPT / OPT · travel-assistant", "words", present=True
    )
    plot_w, rects, labels = _drop_geometry(fig)
    assert len(labels) == 21  # 3 pools x 7 budgets, each labelled
    assert all(("*" in text) != proven for _, _, text in labels)
    for k, (box, who, text) in enumerate(labels):
        for other, _, other_text in labels[k + 1 :]:
            # At the base commit "27.3%" stood 11 px under "27.3%" in 20 px type.
            assert not _overlap(box, other), (text, other_text)
        for rect, owner in rects:
            if owner != who:
                assert not _overlap(box, rect), (text, owner)
        # Inside the chart: the plot and the right margin the labels may run into.
        assert box[1] <= plot_w + fig.layout.margin.r, (text, box)
    assert fig.layout.height > SCREEN_CHART_PX and figures.scrolls(fig)


def test_a_short_drop_chart_stays_on_one_screen(travel_curves):
    fig = figures.ablation_drop_chart(travel_curves[:1], "Drop · travel-assistant", "words", True)
    assert fig.layout.height <= SCREEN_CHART_PX and not figures.scrolls(fig)
    _, _, labels = _drop_geometry(fig)
    for k, (box, _, text) in enumerate(labels):
        assert not any(_overlap(box, other) for other, _, _ in labels[k + 1 :]), text


def _digest(fig) -> str:
    data = fig.to_plotly_json()
    data["layout"].pop("template", None)  # from the installed plotly, not the figure's code
    text = json.dumps(data, sort_keys=True, cls=PlotlyJSONEncoder)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


#: This file's _digest of the normal-mode figures at the base commit dcbdff4: outside
#: presentation mode nothing moves.
NORMAL_DIGESTS = {"cost": "05721c7422ac14d4", "drop": "e8afdaa5700e7343"}


def test_normal_mode_figures_are_unchanged(cost_charts, travel_curves):
    cost = figures.cost_rule_ratio_chart(cost_charts["default"], _title("memaudit-small-s0"))
    drop = figures.ablation_drop_chart(
        travel_curves, "Drop 1 − pool OPT / OPT · travel-assistant", "words"
    )
    assert {"cost": _digest(cost), "drop": _digest(drop)} == NORMAL_DIGESTS


ABL = "pages/5_Ablations_and_sensitivity.py"
CONTROLS = ("Presets", "Or remove your own set of candidate types")


def test_presentation_mode_stacks_the_ablation_controls_and_shows_tall_charts_whole():
    at = open_app(ABL, 240, package="sample:memaudit-small-s0", present="1")
    assert not at.exception, [e.value for e in at.exception]
    assert [m.label for m in at.multiselect][:2] == list(CONTROLS)
    # In no column: each control takes the main column's width.
    in_columns = [w.label for c in at.columns for w in (*c.multiselect, *c.select_slider)]
    assert not in_columns, in_columns
    assert at.select_slider[0].label == "Time per analysis"
    # The cost-rule chart at the height its rows need, not cut to one screen.
    specs = [json.loads(c.proto.spec)["layout"] for c in at.get("plotly_chart")]
    (cost,) = [s for s in specs if s["title"]["text"].startswith("Mean ratio per writer")]
    assert cost["height"] > SCREEN_CHART_PX, cost["height"]
    assert cost["meta"] == {figures.SCROLLS_META: True}


def test_normal_mode_keeps_the_ablation_controls_side_by_side():
    at = open_app(ABL, 240, package="sample:memaudit-small-s0")
    assert not at.exception, [e.value for e in at.exception]
    first = at.columns[:3]
    assert [c.multiselect[0].label for c in first[:2]] == list(CONTROLS)
    assert first[2].select_slider[0].label == "Time per analysis"
