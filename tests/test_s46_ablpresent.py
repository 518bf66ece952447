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
outside presentation mode the cost-rule figure is exactly the base commit's and the drop
chart of proven curves keeps the base commit's layout.

4. After the merge with s46-ablbound (an unproven bar's whisker over the proven drop range,
   its label "25.3%–28.8%*" past the whisker as the text of a scatter trace): a real limited
   run's range label ran off the 524 px chart, and the legend's one-line entry explaining
   hatches and whiskers ran 400 px past its edge.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from app_utils import open_app
from plotly.utils import PlotlyJSONEncoder
from test_s46_ablbound import _limit_every_solve

import memaudit_core.analysis as analysis
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
#: Width of a legend character (em): Chromium drew "OPT over generic types only" at 0.43 em.
LEGEND_EM = 0.5
#: A legend entry's symbol and the gaps beside it (px).
LEGEND_SYMBOL_PX = 40
#: Under the drop chart's plot: the ticks, their pad and the axis title. Plotly's automargin
#: takes it when the bottom margin is smaller (Chromium: 88 px for 19 px ticks, a 22 px title).
DROP_BOTTOM_PX = 90
#: Half the height of a whisker's end caps (plotly's error bar ``width``, 4 px by default).
WHISKER_CAP_PX = 4


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


@pytest.fixture(scope="module")
def limited_travel_curves():
    """The same ablation with every solve stopped at node 0 of ``bnb`` (as test_s46_ablbound
    limits it): incumbents with their proven bounds, so most bars are hatched and carry a
    whisker and a range label."""
    pkg = load_package(SAMPLES / "travel-assistant.json")
    with pytest.MonkeyPatch.context() as mp:
        _limit_every_solve(mp, 0)
        try:
            return robustness.ablation_curves(
                pkg, pkg.budget_grid(), ["no_validity", "generic"], [("raw_span",)], solver="bnb"
            )
        finally:
            analysis._opt_cache.clear()


def _expected_label(p) -> str:
    """A drop's label as ablbound specified it: the drop; starred between incumbents; as the
    proven range when the bounds give one."""
    if p.certified:
        return f"{p.drop:.1%}"
    if p.drop_low is None:
        return f"{p.drop:.1%}*"
    return f"{p.drop_low:.1%}–{p.drop_high:.1%}*"


def _slots(fig) -> tuple[int, dict[int, int]]:
    """Plotly's slots in each budget's row (``barmode`` / ``scattermode`` "group") and each
    grouped trace's slot: with an ``offsetgroup`` on any trace, one slot per distinct offset
    group in the order they first appear, bars and grouped scatters alike (a trace in none
    is drawn in the first); else one per bar trace."""
    layout = fig.layout
    assert layout.barmode == "group"
    grouped = [
        k
        for k, t in enumerate(fig.data)
        if t.type == "bar" or (t.type == "scatter" and layout.scattermode == "group")
    ]
    groups = list(dict.fromkeys(fig.data[k].offsetgroup for k in grouped))
    groups = [g for g in groups if g]
    if groups:
        return len(groups), {
            k: groups.index(fig.data[k].offsetgroup) if fig.data[k].offsetgroup else 0
            for k in grouped
        }
    bars = [k for k in grouped if fig.data[k].type == "bar"]
    assert len(bars) == len(grouped), "ungrouped scatter slots are not modelled"
    return len(bars), {k: n for n, k in enumerate(bars)}


def _drop_geometry(fig):
    """Each bar's and whisker's box and each value label's box, (left, right, top, bottom) in
    px from the plot's top left corner, from plotly's grouped-bar geometry: ``bargap`` (and
    ``scattergap``, which defaults to it) of a budget's row between groups, the slots of a
    group touching. Labels are read wherever they are drawn: a bar's outside text (3 px past
    its end), a text scatter's "middle right" text (from its point) and an annotation on the
    data axes (from its point, left-anchored)."""
    layout = fig.layout
    plot_h = layout.height - layout.margin.t - max(layout.margin.b, DROP_BOTTOM_PX)
    plot_w = CHART_PX - DROP_LEFT_PX - layout.margin.r
    budgets = list(layout.yaxis.categoryarray)
    assert layout.scattergap in (None, layout.bargap)
    n_slots, slot_of = _slots(fig)
    row = plot_h / len(budgets)
    group = row * (1 - layout.bargap)
    thick = group / n_slots
    lo, hi = layout.xaxis.range

    def px(x: float) -> float:
        return (x - lo) / (hi - lo) * plot_w

    def middle(y: str, slot: int | None) -> float:
        if slot is None:  # not grouped: the row's middle
            return budgets.index(y) * row + row / 2
        return budgets.index(y) * row + (row - group) / 2 + (slot + 0.5) * thick

    def label(left: float, mid: float, text: str, font: float) -> tuple:
        half = LABEL_LINE_EM * font / 2
        return (left, left + LABEL_EM * font * len(text), mid - half, mid + half)

    rects, labels = [], []
    for k, trace in enumerate(fig.data):
        if trace.type == "bar":
            err = trace.error_x
            for n, (y, x) in enumerate(zip(trace.y, trace.x, strict=True)):
                if y is None:
                    continue
                who = (slot_of[k], y)
                mid = middle(y, slot_of[k])
                rects.append(((0.0, px(x), mid - thick / 2, mid + thick / 2), who))
                if err.visible:
                    box = (px(x - err.arrayminus[n]), px(x + err.array[n]))
                    rects.append(((*box, mid - WHISKER_CAP_PX, mid + WHISKER_CAP_PX), who))
                text = trace.text[n] if trace.text else ""
                if text:
                    assert trace.textposition == "outside"
                    box = label(px(x) + TEXT_PAD_PX, mid, text, trace.textfont.size)
                    labels.append((box, who, text))
        elif trace.type == "scatter" and trace.mode and "text" in trace.mode:
            assert trace.textposition == "middle right"
            slot = slot_of.get(k)
            for y, x, text in zip(trace.y, trace.x, trace.text, strict=True):
                box = label(px(x), middle(y, slot), text, trace.textfont.size)
                labels.append((box, (slot, y), text))
    for note in layout.annotations:
        if note.xref == "x" and note.yref == "y":
            assert note.xanchor == "left"
            mid = middle(note.y, None) - (note.yshift or 0)
            font = note.font.size or layout.font.size
            box = label(px(note.x) + (note.xshift or 0), mid, note.text, font)
            labels.append((box, (None, note.y), note.text))
    return plot_w, rects, labels


def _overlap(a, b) -> bool:
    return a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]


def test_the_limited_run_draws_ranges_beside_proven_drops(limited_travel_curves):
    points = [p for c in limited_travel_curves for p in c.points]
    ranges = [p for p in points if not p.certified and p.drop_low is not None]
    assert (len(points) - len(ranges), len(ranges)) == (5, 16)
    assert all(p.certified for p in points if p not in ranges)


@pytest.mark.parametrize("proven", [True, False])
def test_drop_chart_value_labels_keep_clear_of_each_other_and_of_other_bars(
    travel_curves, limited_travel_curves, proven
):
    curves = travel_curves if proven else limited_travel_curves
    fig = figures.ablation_drop_chart(
        curves, "Drop 1 − pool OPT / OPT · travel-assistant", "words", present=True
    )
    plot_w, rects, labels = _drop_geometry(fig)
    # 3 pools x 7 budgets, each labelled once, in its pool's slot.
    want = {
        (k, f"{p.budget:g}"): _expected_label(p) for k, c in enumerate(curves) for p in c.points
    }
    assert {who: text.strip() for _, who, text in labels} == want
    assert len(labels) == 21
    for k, (box, who, text) in enumerate(labels):
        for other, _, other_text in labels[k + 1 :]:
            # At the base commit "27.3%" stood 11 px under "27.3%" in 20 px type.
            assert not _overlap(box, other), (text, other_text)
        for rect, owner in rects:
            if owner != who:
                assert not _overlap(box, rect), (text, owner)
        # Inside the chart: the plot and the right margin the labels may run into. After the
        # merge, " 25.3%–28.8%*" ended 35 px past the chart's edge.
        assert 0 <= box[0] and box[1] <= plot_w + fig.layout.margin.r, (text, box)
    # Every legend line fits the column beside its symbol (the legend starts at the plot's
    # left edge): after the merge the hatched entry's one line needed 990 px.
    legend_px = fig.layout.legend.font.size
    for trace in fig.data:
        for line in (trace.name or "").split("<br>"):
            room = CHART_PX - DROP_LEFT_PX - LEGEND_SYMBOL_PX
            assert LEGEND_EM * legend_px * len(line) <= room, line
    assert fig.layout.height > SCREEN_CHART_PX and figures.scrolls(fig)


def test_a_short_drop_chart_stays_on_one_screen(travel_curves):
    fig = figures.ablation_drop_chart(travel_curves[:1], "Drop · travel-assistant", "words", True)
    assert fig.layout.height <= SCREEN_CHART_PX and not figures.scrolls(fig)
    _, _, labels = _drop_geometry(fig)
    assert len(labels) == 7
    for k, (box, _, text) in enumerate(labels):
        assert not any(_overlap(box, other) for other, _, _ in labels[k + 1 :]), text


def _rounded(value):
    """``value`` with every float to 12 significant digits: a mean's last bit depends on the
    summation (math.fsum since session 51) and on the BLAS build, not on the figure's code."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


def _digest(fig) -> str:
    data = fig.to_plotly_json()
    data["layout"].pop("template", None)  # from the installed plotly, not the figure's code
    data = _rounded(json.loads(json.dumps(data, cls=PlotlyJSONEncoder)))
    text = json.dumps(data, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


#: This file's _digest of the normal-mode cost-rule figure at the base commit dcbdff4:
#: outside presentation mode nothing moves. Session 47 changed the writers' colours for
#: colour-blind viewers (tests/test_s47_cvd.py); the figure's JSON differs from 05721c7422ac14d4
#: in its three writers' marker colours only (checked by diffing the two figures' JSON).
#: Session 50 (tests/test_s50_costrulechart.py) hatched each as_stored reference in its rule's
#: colour, grouped it with its rule in the legend (one legend row fewer: 22 px less height and
#: top margin), renamed it "as_stored on the N budgets of <rule>" and labelled the bars with
#: three decimals; the JSON differs from fd39f39f87571549 in those only (diffed). Then the
#: shared palette (tests/test_s50_bandchart.py: gvt and recency_raw were ΔE 24 apart) changed
#: three colours, #bb8800, #009966 and #cc77aa; the JSON differs from 16030af48c37e88a in those
#: only (diffed). Session 51 rounds every float to 12 significant digits before hashing
#: (_rounded): a fresh install's NumPy 2.4.6 and the means' math.fsum moved last bits only
#: (diffed); the rounded digest is the same at 1174818 and after.
NORMAL_COST_DIGEST = "a53bec592f0d839b"


def test_normal_mode_cost_rule_figure_is_unchanged(cost_charts):
    cost = figures.cost_rule_ratio_chart(cost_charts["default"], _title("memaudit-small-s0"))
    assert _digest(cost) == NORMAL_COST_DIGEST


def test_normal_mode_drop_chart_of_proven_curves_keeps_its_layout(travel_curves):
    """What this branch promised not to move outside presentation mode, as the base commit
    dcbdff4 drew it (s46-ablbound has since added offset groups and whiskers on purpose):
    the height, margins, gaps, legend place, label size and the drop axis."""
    fig = figures.ablation_drop_chart(
        travel_curves, "Drop 1 − pool OPT / OPT · travel-assistant", "words"
    )
    layout = fig.layout
    # 3 pools x 7 budgets at 26 px a bar, its legend above the plot (taller than 630 px).
    assert layout.height == 712
    assert layout.margin.to_plotly_json() == {"l": 70, "r": 30, "t": 126, "b": 60, "pad": 10}
    assert (layout.bargap, layout.barmode) == (0.2, "group")
    assert layout.legend.to_plotly_json() == {
        "orientation": "h",
        "yanchor": "top",
        "y": pytest.approx(1 - 44 / 712),
        "xanchor": "left",
        "x": 0,
        "font": {"size": 14, "color": "#262730"},
        "yref": "container",
    }
    # 30% past the largest drop for its label.
    largest = max(p.drop for c in travel_curves for p in c.points)
    assert tuple(layout.xaxis.range) == pytest.approx((0, 1.3 * largest))
    bars = [t for t in fig.data if t.type == "bar"]
    assert [t.textfont.size for t in bars] == [14, 14, 14]
    assert [list(t.text) for t in bars] == [
        [f"{p.drop:.1%}" for p in c.points] for c in travel_curves
    ]
    assert not figures.scrolls(fig)


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
