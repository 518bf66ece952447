"""QA s48 (e2e, Evidence explorer), findings 2, 3 and 4b.

2. Presentation mode: the timeline's ids were thinned from the left and labelled s3_fact_0,
   s3_fact_2 and s3_pref_1_old (where nobody wrote), never the two experiences the optimum
   keeps (s3_pref_0_update, s3_pref_1_update).
3. "Graph of: all" in presentation mode: the 43-node graph was held to one screen, its 25
   candidates in about 400 px, labels and the store's / optimum's marks on top of each other.
4b. The heatmap's PNG of gen:event_graph:4:n_experiences=20 wrote "one id per 2 columns" and
   12 of its 24 unit ids, though the 1400 px export has room for every one.

Checks on the figures the page draws for QA's links, measured from the figures' own numbers
(axis ranges, margins, marker sizes) rather than from the layout code's geometry.
"""

from __future__ import annotations

import plotly.graph_objects as go
import pytest
from app_utils import APP, capture_downloads
from streamlit.testing.v1 import AppTest

from memaudit_core.explain import EvidenceView, evidence_view
from memaudit_ui import figures, render
from memaudit_ui.sources import load_by_key

EVIDENCE = "pages/3_Evidence_explorer.py"
PACKAGE, BUDGET, FOCUS = "gen:memaudit-small:3", 6.0, "invalid:pref:3:0"
EVENT_GRAPH_20 = "gen:event_graph:4:n_experiences=20"


@pytest.fixture(scope="module")
def views() -> dict[str, EvidenceView]:
    pkg = load_by_key(PACKAGE)
    return {
        scope: evidence_view(pkg, BUDGET, writer="density", focus_unit_id=FOCUS, graph_scope=scope)
        for scope in ("focus", "all")
    }


def _ticks(fig: go.Figure) -> list[tuple[float, str, int]]:
    """(x, id text, line) of each x tick: a tick on the second line starts with a break."""
    axis = fig.layout.xaxis
    return [
        (float(v), t.replace("<br>", ""), t.count("<br>"))
        for v, t in zip(axis.tickvals, axis.ticktext, strict=True)
    ]


@pytest.mark.parametrize("present", [True, False])
def test_timeline_names_every_experience_the_store_or_the_optimum_keeps(views, present) -> None:
    tl = views["focus"].timeline
    store, opt = tl.rows[:2]
    kept = {p.experience_id for p in tl.points if p.row in (store, opt)}
    # QA's reading: the store keeps the three facts, the optimum the two updates.
    assert kept == {"s3_fact_0", "s3_fact_1", "s3_fact_2", "s3_pref_0_update", "s3_pref_1_update"}
    fig = figures.store_timeline(tl, "Memory written", present=present)
    id_at = {float(t): str(e) for e, t, _ in tl.experiences}
    named = {id_at[x] for x, _, _ in _ticks(fig)}
    assert kept <= named, f"unnamed: {sorted(kept - named)}"


@pytest.mark.parametrize("present", [True, False])
def test_timeline_ids_on_one_line_do_not_run_together(views, present) -> None:
    """The ids are named without overlapping: on the design width the chart is drawn for,
    two ids on one line are at least half their widths apart (0.5 em a character: these ids
    measured 0.44 em in Chromium, "s3_fact_0" 79 px at 20 px)."""
    tl = views["focus"].timeline
    fig = figures.store_timeline(tl, "Memory written", present=present)
    design = figures.LEGEND_DESIGN_PX["present" if present else "normal"]
    plot_px = design - fig.layout.margin.l - fig.layout.margin.r
    x0, x1 = fig.layout.xaxis.range
    font = fig.layout.xaxis.tickfont.size
    ticks = _ticks(fig)
    assert {line for _, _, line in ticks} <= {0, 1}
    for line in (0, 1):
        row = sorted((x, text) for x, text, ln in ticks if ln == line)
        for (xa, a), (xb, b) in zip(row, row[1:], strict=False):
            gap_px = (xb - xa) / (x1 - x0) * plot_px
            assert gap_px >= 0.5 * font * (len(a) + len(b)) / 2, (a, b, gap_px)


def test_the_whole_graph_scrolls_on_a_projector(views) -> None:
    """Adjacent candidates at least an optimum's diamond and a label's line apart: the plot
    can be no taller than the figure less its margins and the legend's rows (4 entries,
    counted a row each)."""
    gd = views["all"].graph
    fig = figures.evidence_graph(gd, "Evidence graph", present=True)
    assert figures.scrolls(fig)  # taller than a screen, and shown whole
    diamond = next(t for t in fig.data if t.name == "held by the optimum").marker.size
    font = next(a for a in fig.layout.annotations).font.size
    legend_px = 4 * 1.6 * (fig.layout.legend.font.size or fig.layout.font.size)
    plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b - legend_px
    y0, y1 = fig.layout.yaxis.range
    ys = sorted(y for y, ly in zip(gd.node_y, gd.node_layers, strict=True) if ly == "candidate")
    assert len(ys) == 25
    pitch_px = min(b - a for a, b in zip(ys, ys[1:], strict=False)) / (y1 - y0) * plot_px
    assert pitch_px >= max(diamond, 1.25 * font), pitch_px


def test_the_focus_graph_still_fits_a_screen(views) -> None:
    """The neighbourhood of the focus unit (the default) needs no scrolling."""
    fig = figures.evidence_graph(views["focus"].graph, "Evidence graph", present=True)
    assert fig.layout.height <= figures.PRESENT_MAX_HEIGHT
    assert not figures.scrolls(fig)


def test_the_heatmap_export_writes_every_unit_id(monkeypatch) -> None:
    offered = capture_downloads(monkeypatch)
    at = AppTest.from_file(str(APP), default_timeout=180)
    for name, value in (("package", EVENT_GRAPH_20), ("budget", "63"), ("store", "writer:density")):
        at.query_params[name] = value
    at.run()
    at.switch_page(EVIDENCE).run()
    assert not at.exception, [e.value for e in at.exception]
    drawn: list[go.Figure] = []
    monkeypatch.setattr(render, "_start_kaleido", lambda: None)
    monkeypatch.setattr(go.Figure, "to_image", lambda fig, **kw: drawn.append(fig) or b"png")
    assert offered["evidence_heatmap_png"]["data"]() == b"png"
    (fig,) = drawn
    units = [u.id for u in load_by_key(EVENT_GRAPH_20).units]
    assert len(units) == 24
    axis = fig.layout.xaxis2
    assert sorted(axis.tickvals) == sorted(units)
    assert "one id per" not in axis.title.text
