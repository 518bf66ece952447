"""QA s41: the Evidence explorer's store timeline was unreadable at 1024 px.

For travel-assistant (13 experiences) the plot was 152 px of a 564 px figure (legend on the
right, long row labels on the left), the ids ran together ("e01e02e03...") and markers of
neighbouring experiences overlapped; on event-graph-50 a tombstone hid under the
compound-update stars. The figure is checked at the widths the app is designed for: 564 px
(1024 px with the sidebar open) and 520 px in presentation mode (1024 px with the sidebar
open too: 780 px, 1280 px with it open, cut the last marker at 1024 px, QA s46).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memaudit_core.explain import TimelineData, TimelinePoint, evidence_view
from memaudit_core.package import load_package
from memaudit_ui import figures
from memaudit_ui.figures import PRESENT_MAX_HEIGHT, store_timeline

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"
#: Chart width (px) at 1024 px with the sidebar open, and on a projector (presentation mode).
WIDTH_PX = {False: 564, True: 520}
#: The most of that width the row labels and the right margin may take: in presentation mode
#: two-line labels of 14 characters at 20 px ("Validity-aware") take 180 px of the 520.
SIDE_SHARE = {False: 0.3, True: 0.45}
#: Tick font (px) of the explain charts, normal and presentation mode.
TICK_FONT_PX = {False: 14, True: 20}


@pytest.fixture(scope="module")
def timelines() -> dict[str, TimelineData]:
    """The two packages QA named, as the page shows them."""
    travel = load_package(SAMPLES / "travel-assistant.json")
    graph = load_package(SAMPLES / "event-graph-50.json")
    return {
        "travel-assistant": evidence_view(travel, 40, writer="density").timeline,
        "event-graph-50": evidence_view(graph, graph.default_budget(), writer="gvt").timeline,
    }


def _px_per_unit(fig, present: bool) -> float:
    """Pixels per time unit of the plot at the design width, from the figure's margins and
    x range (without a range: the experiences' span, plotly's autorange at the least)."""
    plot_px = WIDTH_PX[present] - fig.layout.margin.l - fig.layout.margin.r
    if fig.layout.xaxis.range is not None:
        lo, hi = fig.layout.xaxis.range
    else:
        xs = [x for x in fig.data[0].x]
        lo, hi = min(xs), max(xs)
    return plot_px / (hi - lo)


def _memory_traces(fig):
    # Not the rings (QA s47) drawn under a memory only one of the store and the optimum keeps.
    return [
        t
        for t in fig.data
        if t.name != "experience" and t.legendgroup != figures.TIMELINE_RING_GROUP
    ]


@pytest.mark.parametrize("present", [False, True])
def test_plot_gets_most_of_the_width_and_the_legend_is_horizontal(timelines, present):
    for name, tl in timelines.items():
        fig = store_timeline(tl, "Memory written per experience", present=present)
        legend = fig.layout.legend
        assert legend.orientation == "h", name
        # Starting at the plot's left edge (not right of it), ...
        assert legend.x == 0 and legend.xanchor == "left" and legend.yref == "container", name
        if not present:
            # ... below the plot.
            assert legend.yanchor == "top" and legend.y < 0.5, name
        else:
            # ... under the title of a chart past one screen, which scrolls (speaker QA s46:
            # the rows and the legend's rows at 520 px with a 300 px plot need more).
            assert fig.layout.height > PRESENT_MAX_HEIGHT and figures.scrolls(fig), name
            assert legend.yanchor == "top", name
            assert 40 <= (1 - legend.y) * fig.layout.height < fig.layout.margin.t, name
            # Plotly measures the x axis's room; the bottom margin holds no legend row.
            axis = fig.layout.xaxis
            axis_px = axis.tickfont.size + 8 + 1.3 * axis.title.font.size
            assert axis.automargin is True, name
            assert axis_px <= fig.layout.margin.b < axis_px + 1.4 * legend.font.size, name
        side_px = fig.layout.margin.l + fig.layout.margin.r
        assert side_px <= SIDE_SHARE[present] * WIDTH_PX[present], (name, side_px)
        # Short row labels: two lines of at most 16 characters; the full names stay in the
        # hover text.
        for label in fig.layout.yaxis.categoryarray:
            lines = label.split("<br>")
            assert len(lines) <= 2 and max(len(line) for line in lines) <= 16, label
        assert fig.layout.yaxis.title.text in (None, "")
    fig = store_timeline(timelines["travel-assistant"], "t", present=present)
    hovers = " ".join(h for t in _memory_traces(fig) for h in t.hovertext)
    assert "Validity-aware summariser<br>" in hovers


@pytest.mark.parametrize("present", [False, True])
def test_experience_ids_do_not_run_together(timelines, present):
    fig = store_timeline(timelines["travel-assistant"], "t", present=present)
    axis = fig.layout.xaxis
    # A tick on the second line starts with a line break (QA s48: ids on two staggered lines
    # where one line left experiences of the store or the optimum unnamed).
    lines: dict[int, list[tuple[float, str]]] = {}
    for val, text in zip(axis.tickvals, axis.ticktext, strict=True):
        lines.setdefault(text.count("<br>"), []).append((val, text.replace("<br>", "")))
    # Every id at 564 px. In presentation mode every other one on each line: 20 px ids need
    # 0.5 em x 3 + 8 = 38 px apart, and 13 experiences over 520 - 182 - 24 - 2 x 14 = 286 px
    # are 23.8 px; the first line names e01, e03, ..., the second e02, e04, ...
    if present:
        assert sorted(lines) == [0, 1]
        assert [t for _, t in lines[0]][:2] == ["e01", "e03"]
        assert [t for _, t in lines[1]][:2] == ["e02", "e04"]
    else:
        assert sorted(lines) == [0]
        assert [t for _, t in lines[0]][:2] == ["e01", "e02"]
    per_px = _px_per_unit(fig, present)
    # A three-character id is about 0.55 em a character wide; 6 px between labels.
    need = 0.55 * TICK_FONT_PX[present] * 3 + 6
    for shown in lines.values():
        vals = [v for v, _ in shown]
        gaps = [(b - a) * per_px for a, b in zip(vals, vals[1:], strict=False)]
        assert min(gaps) >= need, (min(gaps), need)
    # Horizontal: plotly would turn crowded labels on its own, and turned ones overlapped.
    assert axis.tickangle == 0
    # And the last shown id is the last or next-to-last experience (thinned, not cut short).
    assert list(axis.ticktext)[-1].replace("<br>", "") in ("e12", "e13")


@pytest.mark.parametrize("present", [False, True])
def test_neighbouring_markers_do_not_cover_each_other(timelines, present):
    for name, tl in timelines.items():
        fig = store_timeline(tl, "t", present=present)
        per_px = _px_per_unit(fig, present)
        times = sorted({e[1] for e in tl.experiences})
        pitch_px = min(b - a for a, b in zip(times, times[1:], strict=False)) * per_px
        for trace in _memory_traces(fig):
            # Markers no wider than the spacing of the experiences, and still recognisable: at
            # least 7 px, even where the spacing is less (event-graph-50 in presentation mode:
            # 50 experiences in a 314 px plot, 6.3 px apart, overlap by less than a pixel).
            assert 7 <= trace.marker.size <= max(7, pitch_px), (name, trace.name, pitch_px)
        # The tombstones are drawn last, on top of any marker they touch.
        assert fig.data[-1].name == "tombstone", name


def test_memories_in_one_cell_sit_side_by_side(timelines):
    """A store writing a fact, a compound update and a tombstone at one experience: three
    markers at three places in the cell, the tombstone drawn last."""

    def point(cid: str, ctype: str, time: float) -> TimelinePoint:
        return TimelinePoint("Store S", f"e{time:g}", time, cid, ctype, 1.0, "text")

    tl = TimelineData(
        rows=("Store S",),
        points=(
            point("c1", "tombstone", 1.0),
            point("c2", "compound_update", 1.0),
            point("c3", "atomic_fact", 1.0),
            point("c4", "atomic_fact", 2.0),
        ),
        experiences=(("e0", 0.0, "a"), ("e1", 1.0, "b"), ("e2", 2.0, "c")),
        types=("atomic_fact", "compound_update", "tombstone"),
        message="",
    )
    fig = store_timeline(tl, "t")
    per_px = _px_per_unit(fig, False)
    cell = sorted((x, t.name) for t in _memory_traces(fig) for x in t.x if abs(x - 1.0) < 0.5)
    assert len(cell) == 3
    xs = [x for x, _ in cell]
    assert min((b - a) * per_px for a, b in zip(xs, xs[1:], strict=False)) >= 3
    # Within the cell: not past the middle between it and its neighbours.
    assert 0.5 < xs[0] and xs[-1] < 1.5
    assert fig.data[-1].name == "tombstone"
    # On the packages QA named, no two memory markers share a place either.
    for name, real in timelines.items():
        fig = store_timeline(real, "t")
        places = [(x, y) for t in _memory_traces(fig) for x, y in zip(t.x, t.y, strict=True)]
        assert len(places) == len(set(places)) == len(real.points), name
