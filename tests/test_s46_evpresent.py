"""Speaker QA s46: the Evidence explorer in presentation mode at 1024 x 768, sidebar open.

The main column is then 524 px wide, but the store timeline and the evidence graph were still
laid out for 780 px: the timeline's last experience tick was cut at the plot's edge and the
graph's layer names ran together ("candidatesunits"), its labels into the next layer's nodes.
The checks below measure the figures the page draws at that width with a model of the browser
of their own (Source Sans' measured character widths, plotly's measured margins), and check
that outside presentation mode the figures are exactly the base commit's.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from plotly.utils import PlotlyJSONEncoder

from memaudit_core.explain import EvidenceView, evidence_view
from memaudit_core.package import load_package
from memaudit_ui import figures

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"

#: The main column at 1024 px with the sidebar open in presentation mode (px, measured in
#: Chromium: 1024 - 300 px of sidebar - the page's side padding).
CHART_PX = 524
#: Width of a character (em) of Source Sans in Chromium: 0.44-0.46 for the layer names and
#: row labels at 20 px, 0.51 for ids at 13 px; 0.5 and 0.52 are upper bounds.
NAME_EM = 0.5
ID_EM = 0.52
#: What plotly may add to the timeline's left margin beyond the figure's own (its margin pad
#: and the row labels' automargin: 10 px on event-graph-50, 16 px on veg-to-pescatarian).
TIMELINE_EXTRA_LEFT_PX = 20
#: Left of the graph's plot, a y axis left to plotly's automargin (its template's default)
#: takes 45 px in the app even though it draws nothing (measured in Chromium).
Y_AUTOMARGIN_PX = 45
#: Clear room (px) a marker keeps from the plot's edge, and between two layer names.
EDGE_PX = 2
GAP_PX = 4

#: (package, budget or the default, writer, store, graph scope): QA's packages as the page
#: shows them in presentation mode (graph of the focus unit), and one graph of every unit.
CASES = {
    "event-graph-50": ("event-graph-50", None, "gvt", None, "focus"),
    "event-graph-500": ("event-graph-500", None, "gvt", None, "focus"),
    "veg-to-pescatarian": ("veg-to-pescatarian", 12, None, "fact-only", "focus"),
    "veg-to-pescatarian-all": ("veg-to-pescatarian", 12, None, "fact-only", "all"),
    "travel-assistant": ("travel-assistant", 40, "density", None, "focus"),
    "memaudit-small-s0": ("memaudit-small-s0", None, "gvt", None, "focus"),
}


def _view(case: str, graph_scope: str | None = None) -> EvidenceView:
    name, budget, writer, store, scope = CASES[case]
    pkg = load_package(SAMPLES / f"{name}.json")
    return evidence_view(
        pkg,
        pkg.default_budget() if budget is None else budget,
        writer=writer,
        store_id=store,
        graph_scope=graph_scope or scope,
    )


@pytest.fixture(scope="module")
def views() -> dict[str, EvidenceView]:
    return {case: _view(case) for case in CASES}


def _plot_span(layout: dict, left_px: float) -> tuple[float, float, float, float]:
    """The plot's left edge and width (px) in the 524 px chart, and its x range."""
    width = CHART_PX - left_px - layout["margin"]["r"]
    lo, hi = layout["xaxis"]["range"]
    return left_px, width, lo, hi


@pytest.mark.parametrize("case", list(CASES))
def test_timeline_markers_lie_inside_the_plot(views, case) -> None:
    fig = figures.store_timeline(views[case].timeline, "Memory written", present=True)
    layout = fig.to_plotly_json()["layout"]
    font = layout["yaxis"]["tickfont"]["size"]
    rows = [line for trace in fig.data for y in trace.y for line in str(y).split("<br>")]
    # The row labels end left of the plot: the margin is theirs, plus what plotly adds.
    labels_px = max(NAME_EM * font * len(line) for line in rows)
    assert labels_px <= layout["margin"]["l"], (labels_px, layout["margin"]["l"])
    _, width, lo, hi = _plot_span(layout, layout["margin"]["l"] + TIMELINE_EXTRA_LEFT_PX)
    for trace in fig.data:
        half = trace.marker.size / 2
        for x in trace.x:
            left = (x - lo) / (hi - lo) * width
            # The whole marker inside the plot, with room to spare: at 780 px the last
            # experience tick of event-graph-50 stood 0.25 px past the edge at 524 px.
            assert left - half >= EDGE_PX, (trace.name, x, left - half)
            assert width - left - half >= EDGE_PX, (trace.name, x, width - left - half)


def _graph(view: EvidenceView, present: bool):
    return figures.evidence_graph(view.graph, "Evidence graph", present=present)


def _graph_plot(layout: dict) -> tuple[float, float, float, float]:
    auto = layout["yaxis"].get("automargin", True)  # plotly's template turns it on
    return _plot_span(layout, layout["margin"]["l"] + (Y_AUTOMARGIN_PX if auto else 0))


@pytest.mark.parametrize("case", list(CASES))
def test_graph_layer_names_stand_apart(views, case) -> None:
    layout = _graph(views[case], present=True).to_plotly_json()["layout"]
    left_px, width, lo, hi = _graph_plot(layout)
    xaxis = layout["xaxis"]
    font = xaxis["tickfont"]["size"]
    boxes = []
    for value, name in zip(xaxis["tickvals"], xaxis["ticktext"], strict=True):
        centre = left_px + (value - lo) / (hi - lo) * width
        half = NAME_EM * font * len(name) / 2
        boxes.append((centre - half, centre + half, name))
    assert len(boxes) >= 3
    assert boxes[0][0] >= 0 and boxes[-1][1] <= CHART_PX, boxes
    for (_, end, a), (start, _, b) in zip(boxes, boxes[1:], strict=False):
        assert start - end >= GAP_PX, (a, b, start - end)


@pytest.mark.parametrize("case", list(CASES))
def test_graph_labels_keep_off_the_next_layer(views, case) -> None:
    """Labels sit on the outer side of their layer (experiences and candidates left of their
    node, queries right, units above): none may reach a node of a neighbouring layer or leave
    the chart."""
    fig = _graph(views[case], present=True)
    layout = fig.to_plotly_json()["layout"]
    left_px, width, lo, hi = _graph_plot(layout)

    def px(x: float) -> float:
        return left_px + (x - lo) / (hi - lo) * width

    columns = sorted({px(x) for t in fig.data if t.name in figures.LAYER_COLORS for x in t.x})
    marker = max(t.marker.size for t in fig.data if t.name in figures.LAYER_COLORS)
    outline = max(t.marker.size for t in fig.data if t.name and t.name.startswith("held"))
    annotations = layout.get("annotations", [])
    assert annotations, case
    for a in annotations:
        anchor = px(a["x"]) + a.get("xshift", 0)
        text_px = ID_EM * a["font"]["size"] * len(a["text"])
        start = {"right": anchor - text_px, "left": anchor, "center": anchor - text_px / 2}
        left = start[a["xanchor"]]
        right = left + text_px
        assert left >= 0 and right <= CHART_PX, (a["text"], left, right)
        own = min(columns, key=lambda c: abs(c - px(a["x"])))
        for column in columns:
            if column < own:  # the layer to the left: its nodes and outlines end here
                assert left >= column + outline / 2, (a["text"], left, column)
            elif column > own:
                assert right <= column - marker / 2, (a["text"], right, column)


def _digest(fig) -> str:
    data = fig.to_plotly_json()
    # The theme's template comes from the installed plotly, not from the figure's code.
    data["layout"].pop("template", None)
    text = json.dumps(data, sort_keys=True, cls=PlotlyJSONEncoder)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


#: Digests of the normal-mode figures at the base commit 4d1154b (this file's _digest of
#: store_timeline / evidence_graph with these titles): outside presentation mode nothing moves.
#: The timelines' since QA s47 (every row in the y range, rings where the store and the
#: optimum differ, room for a ring at either end); without those the digests were the same.
#: Since QA s47's colours (colour-blind-safe type colours; the graph's layers in neutral greys
#: instead of unit-kind colours) both charts' digests are those of their new colours only.
NORMAL_DIGESTS = {
    ("event-graph-50", "all", "timeline"): "bc0711476a1a3203",
    ("event-graph-50", "all", "graph"): "95831e4b266b3670",
    ("event-graph-500", "all", "timeline"): "9f12783300742476",
    ("event-graph-500", "all", "graph"): "557140948903cead",
    ("veg-to-pescatarian", "all", "graph"): "537f4b6e02444abd",
}


@pytest.mark.parametrize(("case", "scope", "chart"), list(NORMAL_DIGESTS))
def test_normal_mode_figures_are_unchanged(case, scope, chart) -> None:
    view = _view(case, scope)
    if chart == "timeline":
        fig = figures.store_timeline(view.timeline, "Memory written per experience")
    else:
        fig = figures.evidence_graph(view.graph, "Evidence graph · gvt")
    assert _digest(fig) == NORMAL_DIGESTS[(case, scope, chart)]


def test_event_graph_500_labels_are_whole_outside_presentation_mode() -> None:
    view = _view("event-graph-500", "all")
    fig = _graph(view, present=False)
    texts = [a.text for a in fig.layout.annotations]
    assert sorted(texts) == sorted(str(t) for t in view.graph.node_labels if t)
    assert not [t for t in texts if "…" in t]
