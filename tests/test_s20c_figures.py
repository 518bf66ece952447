"""Figure properties a speaker's projector needs (visual QA s20c): legends clear of the axis
titles, series told apart by more than colour, no hairline series."""

from __future__ import annotations

from types import SimpleNamespace as NS

import plotly.graph_objects as go
import pytest

from memaudit_ui import figures

#: Candidate costs and types of a small package: five types, costs 2 to 37.
COSTS = [2, 3, 5, 6, 7, 8, 8, 9, 12, 14, 17, 18, 19, 23, 37]
TYPES = [
    "tombstone",
    "atomic_fact",
    "atomic_fact",
    "summary",
    "compound_update",
    "interval_fact",
    "atomic_fact",
    "tombstone",
    "summary",
    "raw_span",
    "raw_span",
    "raw_span",
    "raw_span",
    "raw_span",
    "raw_span",
]


def _legend_top_below_plot_px(fig: go.Figure) -> float:
    """Pixels from the plot's bottom edge down to the top of a legend placed below it."""
    legend = fig.layout.legend
    assert legend.yanchor == "top", legend
    if legend.yref == "container":  # y from the figure's bottom edge (s39)
        return fig.layout.margin.b - legend.y * fig.layout.height
    assert legend.yref in (None, "paper"), legend
    plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    return -legend.y * plot_px


def _axis_title_bottom_px(fig: go.Figure) -> float:
    """How far below the plot the x-axis title reaches: tick labels, their pad, the title."""
    axis = fig.layout.xaxis
    return axis.tickfont.size + 8 + 1.3 * axis.title.font.size


@pytest.mark.parametrize("present", [False, True])
def test_cost_histogram_legend_sits_below_its_axis_title(present: bool) -> None:
    """Overview's "Candidate cost distribution": the legend was drawn on the x-axis title
    (34 px below a 170 px plot at 1280 x 720; touching it in presentation mode).

    In presentation mode the legend is placed against the figure's edge and plotly reserves
    its rows beyond the room it measures for the axis (speaker QA s46: the bottom margin held
    the rows of a 524 px chart at every width); six types need more than one screen at 524 px
    with a 300 px plot, so their legend sits under the title."""
    fig = figures.cost_histogram(COSTS, TYPES, "words", "Candidate cost distribution", present)
    assert fig.layout.title.text == "Candidate cost distribution"
    assert fig.layout.xaxis.title.text == "candidate cost (words)"
    assert fig.layout.yaxis.title.text == "candidates"
    assert len(fig.data) == 6 and all(t.showlegend is not False for t in fig.data)
    legend_px = fig.layout.legend.font.size
    if present:
        legend = fig.layout.legend
        assert legend.yref == "container" and legend.x == 0 and legend.xanchor == "left"
        assert fig.layout.height > figures.PRESENT_MAX_HEIGHT and figures.scrolls(fig)
        # Under the title's glyphs (40 px in Chromium), above the plot's top.
        assert legend.yanchor == "top"
        assert 40 <= (1 - legend.y) * fig.layout.height < fig.layout.margin.t
        # The axis's ticks and title in the bottom margin, measured by plotly; no legend row.
        assert fig.layout.xaxis.automargin is True
        axis_px = _axis_title_bottom_px(fig)
        assert axis_px <= fig.layout.margin.b < axis_px + 1.4 * legend_px
    else:
        gap = _legend_top_below_plot_px(fig) - _axis_title_bottom_px(fig)
        assert gap >= 16, gap
        # ... and the legend's first row fits in the bottom margin.
        assert _legend_top_below_plot_px(fig) + 1.5 * legend_px <= fig.layout.margin.b
    # Projector-readable text.
    assert fig.layout.xaxis.tickfont.size >= 12 and legend_px >= 12


def test_cost_histogram_types_differ_by_pattern_not_colour_alone() -> None:
    """Tombstone red and atomic-fact green, stacked in one bar, are one olive under
    deuteranopia: each type also gets its own fill pattern (in the legend too)."""
    fig = figures.cost_histogram(COSTS, TYPES, "words", "t")
    patterns = [t.marker.pattern.shape for t in fig.data]
    assert len(set(patterns)) == len(fig.data), patterns
    colours = {t.name: t.marker.color for t in fig.data}
    assert colours["tombstone"] == figures.TYPE_COLORS["tombstone"]


def _union_rows() -> list[NS]:
    stores = [("mem0", "Mem0", "mem0"), ("letta", "Letta", "letta"), ("amem", "A-Mem", "amem")]
    return [
        NS(
            store_id=sid,
            label=label,
            system=system,
            budget=b,
            kept_value=1.0 + k,
            upper_value=2.0 + k,
            union_opt_value=3.0 + k,
            package_opt_value=3.0,
            cost_effect=b < 7,
            certified=True,
        )
        for k, (sid, label, system) in enumerate(stores)
        for b in (6.0, 12.0, 24.0)
    ]


@pytest.mark.parametrize("present", [False, True])
def test_union_curve_stores_differ_by_marker_shape_and_no_line_is_a_hairline(
    present: bool,
) -> None:
    """External stores: Letta's blue and A-Mem's purple look alike under protanopia, and all
    stores drew the same circles; the OPT-over-P+ dotted lines were 1.5 px."""
    fig = figures.union_curve_lines(_union_rows(), "t", "words", budget=12, present=present)
    assert fig.layout.xaxis.title.text == "budget (words)"
    assert fig.layout.yaxis.title.text == figures.VALUE_AXIS
    kept = [t for t in fig.data if t.legendgroup and t.name.endswith("kept")]
    kept = kept if not present else [t for t in fig.data if t.legendgroup and t.name == "kept"]
    assert len(kept) == 3
    # One shape per store, the same on every point: the legend draws a trace's first marker,
    # which was the cost effect's x at budget 6.
    shapes = [t.marker.symbol for t in kept]
    assert all(isinstance(s, str) for s in shapes), shapes
    assert len(set(shapes)) == 3 and "x" not in shapes, shapes
    # The cost effects (budget 6) are still marked, by x markers of their own, and the legend
    # says what an x is.
    effects = [t for t in fig.data if t.name and t.name.endswith(": cost effect")]
    assert [tuple(t.x) for t in effects] == [(6.0,)] * 3
    assert all(t.marker.symbol == "x" for t in effects)
    assert any(
        t.showlegend is not False and t.marker.symbol == "x" and "smallest memory" in t.name
        for t in fig.data
    )
    upper = [t for t in fig.data if t.legendgroup and t.name.endswith("upper-pruned")]
    assert len({t.marker.symbol for t in upper}) == 3
    widths = [t.line.width for t in fig.data if t.mode and "lines" in t.mode]
    assert widths and min(widths) >= 2, widths
    if present:
        # One legend entry per store, and it shows the store's shape.
        entries = [t for t in fig.data if t.name in ("Mem0", "Letta", "A-Mem")]
        assert [t.marker.symbol for t in entries] == shapes


def test_sidebar_puts_budget_and_store_above_the_uploader() -> None:
    """At 1280 x 720 the uploader pushed the writer / store picker below the sidebar's fold:
    a speaker had to scroll the sidebar for the control a demo changes most."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"))
    at.run(timeout=240)
    assert not at.exception, [e.value for e in at.exception]

    def walk(node, out: list) -> list:
        for child in getattr(node, "children", {}).values():
            out.append(child)
            walk(child, out)
        return out

    order = [
        (type(e).__name__, getattr(e, "label", None))
        for e in walk(at.sidebar, [])
        if type(e).__name__ in ("Selectbox", "Slider", "FileUploader", "Toggle")
    ]
    assert [name for name, _ in order] == [
        "Toggle",  # presentation mode: above the pickers since QA s44 (it was below the fold)
        "Selectbox",  # package
        "Slider",  # budget
        "Selectbox",  # writer / store
        "FileUploader",
    ], order
    assert order[1][1] == "Package" and order[3][1] == "Writer / store"


def _app_on_page(page: str, **params: str):
    """The app opened with ``params`` in its link, then switched to ``page``, without errors."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"))
    for name, value in params.items():
        at.query_params[name] = value
    at.run(timeout=240)
    at.switch_page(page).run(timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_sweep_projector_table_names_methods_without_their_internal_keys() -> None:
    """Budget sweep in presentation mode: "Writers and stores per budget" showed a `key`
    column of internal ids (store:fact-extractor, ablation:no_validity_opt) beside the names."""
    at = _app_on_page("pages/1_Budget_sweep.py", package="sample:travel-assistant", present="1")
    points = at.table[1].value
    assert "method" in points.columns and "key" not in points.columns, list(points.columns)
    assert "Fact extractor" in set(points["method"])


def test_cost_rule_chart_value_labels_are_at_least_12_px_outside_presentation_mode() -> None:
    """Ablations & sensitivity, Cost rules tab at 1280 x 720: the bar labels were 11 px."""
    writers = ["gvt", "density", "greedy", "fact_only", "summary_only", "recency_raw", "nv"]
    rules = [
        NS(
            rule=name,
            available=True,
            mean_ratio=tuple((w, 0.5) for w in writers),
            compared_budgets=(4.0, 8.0),
        )
        for name in ("as_stored", "words", "bytes_overhead", "tokens_o200k")
    ]
    fig = figures.cost_rule_ratio_chart(NS(writers=tuple(writers), rules=rules), "t")
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == 4 and all(t.showlegend is not False for t in bars)
    assert min(t.textfont.size for t in bars) >= 12
    assert fig.layout.xaxis.title.text == "mean ratio F / OPT over the budgets"
    # Room for the larger labels: each bar at least as thick as its label.
    plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    bar_px = plot_px / len(writers) * (1 - 0.2) / len(rules)  # plotly's default bargap 0.2
    assert bar_px >= 12, bar_px


def test_external_curve_grid_shows_readable_headers() -> None:
    """External stores, table under "Kept vs upper-pruned": the grid's headers were the
    export's field names (store_id, kept_value, union_opt_value, ...)."""
    import json

    at = _app_on_page(
        "pages/4_External_stores.py", package="sample:external-stores-demo", budget="24"
    )
    grid = next(d for d in at.dataframe if "union_opt_value" in d.value.columns)
    labels = {col: cfg.get("label") for col, cfg in json.loads(grid.proto.columns).items()}
    shown = [labels.get(col) or col for col in grid.value.columns]
    assert not [name for name in shown if "_" in name], shown
    assert labels["union_opt_value"] == "OPT over P+" and labels["kept_value"] == "kept F(Y')"
    assert labels["budget"] == "budget (words)"


def test_projector_table_keeps_the_method_column_when_every_name_is_several_words():
    """Budget sweep on a projector with no writer chosen and the no-validity optimum shown:
    every method cell reads "OPT without validity types", which looked like prose, and the
    only column saying what F is was dropped (twentieth session, seen in Chromium)."""
    import pandas as pd

    from memaudit_ui import render

    df = pd.DataFrame(
        {
            "budget": [3.0, 6.0],
            "method": ["OPT without validity types"] * 2,
            "F": [2.6975, 3.965],
            "OPT": [5.55, 7.735],
            "ratio": ["0.486", "0.513"],
            "certified": [True, True],
            "cost": [3.0, 6.0],
            "note": ["reached at a budget below this one", "reached at a budget below this"],
        }
    )
    assert list(render._fit_projector(df).columns) == [
        "budget",
        "method",
        "F",
        "OPT",
        "ratio",
        "certified",
        "cost",
    ]
