"""Projector QA s21d: the Evidence explorer's coverage heatmap at 1280 x 720 and 1920 x 1080.

On a 68-unit event-graph package every unit id was written upright under 6 px columns (all 67
neighbouring pairs overlapped in Chromium), the bold focus id sat among them, the projector's
plot was 160 px tall under three legend rows, and the "Unit kinds" chips were cut after the
fourth. The widths below were measured in Chromium at 1280 px on that package (the plot area
of the heat, Plotly's ``nsewdrag`` rectangle): they are the oracle, not the code's estimate.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memaudit_core.explain import evidence_view
from memaudit_core.generators import generate
from memaudit_core.package import load_package
from memaudit_ui import figures
from memaudit_ui.figures import FOCUS_COLOR, coverage_heatmap

REPO = Path(__file__).resolve().parent.parent
#: Heat plot widths (px) measured in Chromium at 1280 px: normal (sidebar open), presentation.
MEASURED_PLOT_PX = {False: 420, True: 616}
#: Upright tick labels need at least this many font sizes between centres (one line + gap).
LINE_FACTOR = 1.2

#: The unit kinds' short names, in the package's kind order (legend and chips), written out.
SHORT_KINDS = ["current", "invalid", "interval", "stale", "abstain", "context", "fact", "pref"]


@pytest.fixture(scope="module")
def large():
    pkg = generate("event_graph", 7, n_experiences=60)
    return pkg, evidence_view(pkg, pkg.budget, writer="density").heatmap


@pytest.fixture(scope="module")
def small():
    pkg = load_package(REPO / "sample_packages" / "memaudit-small-s0.json")
    return pkg, evidence_view(pkg, pkg.budget, writer="density").heatmap


@pytest.mark.parametrize("present", [False, True])
def test_large_heatmap_writes_only_the_unit_ids_that_fit_side_by_side(large, present):
    pkg, hm = large
    assert len(hm.col_ids) == len(pkg.units) == 68  # every unit is a column: none dropped
    fig = coverage_heatmap(hm, "t", present=present)
    axis = fig.layout.xaxis2
    font_px = axis.tickfont.size
    assert axis.tickangle == -90
    # Upright labels one line apart fit the measured plot (old code: 68 ids at 10-14 px).
    assert len(axis.tickvals) * LINE_FACTOR * font_px <= MEASURED_PLOT_PX[present]
    assert font_px >= (16 if present else 12)  # readable, not shrunk to fit
    # Evenly spaced labels, starting at the first column: a gap never hides a crowded run.
    positions = [hm.col_ids.index(v) for v in axis.tickvals]
    steps = {b - a for a, b in zip(positions, positions[1:], strict=False)}
    assert positions[0] == 0 and len(steps) == 1
    (step,) = steps
    assert len(positions) == -(-68 // step)  # ceil: every step-th column up to the last
    assert step * MEASURED_PLOT_PX[present] / 68 >= LINE_FACTOR * font_px
    # The full ids stay on the heat's x (the hover's "unit %{x}").
    assert list(fig.data[1].x) == list(hm.col_ids)
    assert f"one id per {step} columns" in axis.title.text


@pytest.mark.parametrize("present", [False, True])
def test_large_heatmap_caption_counts_what_is_shown_of_what(large, present):
    pkg, hm = large
    fig = coverage_heatmap(hm, "t", present=present)
    n_labelled = len(fig.layout.xaxis2.tickvals)
    step = hm.col_ids.index(fig.layout.xaxis2.tickvals[1])
    drawn = len(fig.data[1].y)  # on a projector the rows a screen names (QA s46)
    said = (
        f" A projector's screen names {drawn} of these {len(hm.row_ids)} rows: those covering "
        "the focus unit first, then the store's and the optimum's, then by arrival. For the "
        "others pick Rows: covering the focus unit, or turn Presentation mode off to see all "
        f"{len(hm.row_ids)}."
    )
    assert (drawn < len(hm.row_ids)) == present
    assert figures.heatmap_caption(hm, present=present, title="t") == (
        f"Shown: {drawn} of {len(pkg.candidates)} candidates × 68 of the 68 units "
        f"of the kinds picked; {n_labelled} of the 68 unit ids are written (one per {step} "
        "columns); hover a cell for any id." + (said if present else "")
    )
    assert len(hm.row_ids) < len(pkg.candidates)  # the row cap applies here and is said


@pytest.mark.parametrize("present", [False, True])
def test_focus_marker_is_above_the_plot_not_among_the_ids(large, present):
    _, hm = large
    focus_id = hm.col_ids[hm.focus_col_idx]
    fig = coverage_heatmap(hm, "t", present=present)
    marks = [a for a in fig.layout.annotations if focus_id in (a.text or "")]
    assert len(marks) == 1
    (mark,) = marks
    assert mark.font.color == FOCUS_COLOR and mark.yref == "paper" and mark.yanchor == "bottom"
    bands = [s for s in fig.layout.shapes if s.type == "rect" and s.yref == "paper" and s.y0 > 1]
    assert bands and mark.y >= max(s.y1 for s in bands)  # on top of the kind band
    assert mark.x == hm.focus_col_idx and mark.xref == "x2"


def test_projector_heatmap_keeps_a_plot_a_room_can_read(large):
    """Old: 630 - 90 (top) - 371 (upright full ids and three legend rows) = 169 px of plot."""
    _, hm = large
    fig = coverage_heatmap(hm, "t", present=True)
    margin = fig.layout.margin
    assert fig.layout.height <= 630  # one 1280 x 720 screen
    assert fig.layout.height - margin.t - margin.b >= 250
    # The kinds legend: short names beside its title (two rows for eight kinds).
    names = [t.name for t in fig.data if t.type == "scatter"]
    assert names == SHORT_KINDS
    # Upright beside the plot, its title on top: the same height at every width (QA s46).
    assert fig.layout.legend.title.text == "unit kind" and fig.layout.legend.title.side == "top"
    assert fig.layout.legend.orientation == "v"


@pytest.mark.parametrize("present", [False, True])
def test_small_heatmap_writes_every_id_and_grows_with_its_rows(small, present):
    pkg, hm = small
    assert len(hm.col_ids) == len(pkg.units) == 11
    fig = coverage_heatmap(hm, "t", present=present)
    axis = fig.layout.xaxis2
    assert list(axis.tickvals) == list(hm.col_ids)
    # Few units: every id in full (the focus id in vermillion markup), none cut short.
    assert [re.sub("<[^>]+>", "", text) for text in axis.ticktext] == list(hm.col_ids)
    assert axis.title.text.startswith("evidence unit (grouped by kind)")
    assert "one id per" not in axis.title.text
    drawn = len(fig.data[1].y)  # on a projector the rows a screen names (QA s46)
    n = len(pkg.candidates)
    said = (
        f" A projector's screen names {drawn} of these {n} rows: those covering the focus "
        "unit first, then the store's and the optimum's, then by arrival. For the others "
        f"pick Rows: covering the focus unit, or turn Presentation mode off to see all {n}."
    )
    assert (drawn < n) == present
    assert figures.heatmap_caption(hm, present=present, title="t") == (
        f"Shown: {drawn} of {n} candidates × 11 of the 11 units "
        "of the kinds picked; every unit id is written under its column."
        + (said if present else "")
    )
    plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    if present:
        assert fig.layout.height <= 630
        assert plot_px >= 1.25 * 18 * drawn  # every row drawn named
    else:
        assert plot_px >= 26 * len(hm.row_ids)  # a 14 px row label a row, as before


def test_unit_kind_chips_on_a_row_of_their_own() -> None:
    """Eight full kind names beside the focus unit were cut after the fourth chip. On a row
    of their own they wrap; the chips say the kinds as the tables do (QA s49)."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180)
    at.query_params.update({"package": "gen:event_graph:7:n_experiences=60"})
    at.run()
    at.switch_page("pages/3_Evidence_explorer.py").run()
    assert not at.exception and not at.error
    kinds = at.multiselect(key="ev_kinds")
    assert kinds.value[:3] == ["current_truth", "invalidation", "temporal_interval"]
    assert kinds.options == [
        "current_truth",
        "invalidation",
        "temporal_interval",
        "stale",
        "abstention",
        "context",
        "fact",
        "preference",
    ]
    # Not inside a column: the multiselect spans the page's width.
    assert at.columns and not any(column.get("multiselect") for column in at.columns)
    captions = [c.value for c in at.caption]
    assert any(c.startswith("Shown: ") and "units of the kinds picked" in c for c in captions)
