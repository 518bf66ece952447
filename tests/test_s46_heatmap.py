"""Speaker QA s46: the Evidence explorer's coverage heatmap named every other row on a projector.

travel-assistant at budget 40, store fact-extractor, rows kept by the store or the optimum (the
projector's default): the figure was 630 px but its plot 165 px, ten rows of 18 px labels
shared it, and Plotly wrote every other row's name (e02, e04, e06:interval, e07, e10 unnamed);
about 100 px stood empty between the x title and the legend. Plotly writes every category of
an axis only where the axis gives each about 1.2 font sizes (``Lib.bigFont``); a readable line
is 1.25 font sizes. The pixel heights below are recomputed from the figure's own layout.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from memaudit_core.explain import view_for_key
from memaudit_core.package import load_package
from memaudit_ui.figures import PRESENT_MAX_HEIGHT, coverage_heatmap, heatmap_caption

REPO = Path(__file__).resolve().parent.parent
TITLE = "Coverage a_ur · S = Fact extractor, B = 40 words"
#: A line of text is this many font sizes tall (CSS "normal" line height is 1.2-1.3).
LINE = 1.25


def _view(name: str, budget: float | None, rows: str, store: str = "writer:density"):
    pkg = load_package(REPO / "sample_packages" / f"{name}.json")
    budget = pkg.budget if budget is None else budget
    return view_for_key(pkg, budget, store, view="evidence", heatmap_rows=rows)


@pytest.fixture(scope="module")
def travel():
    return _view("travel-assistant", 40, "kept", "store:fact-extractor").heatmap


def _plot_height(fig) -> float:
    m = fig.layout.margin
    return fig.layout.height - m.t - m.b


def _row_font(fig) -> float:
    return fig.layout.yaxis.tickfont.size


def test_the_qa_package_names_every_row_on_a_projector(travel) -> None:
    assert len(travel.row_ids) == 10  # the QA's ten rows
    fig = coverage_heatmap(travel, TITLE, present=True)
    drawn = list(fig.data[1].y)
    assert drawn == list(travel.row_labels)  # every row drawn
    assert fig.layout.height <= PRESENT_MAX_HEIGHT  # one screen
    # Old: 630 - 154 - 311 = 165 px for ten 18 px labels (16.5 px a row).
    per_row = _plot_height(fig) / len(drawn)
    assert per_row >= LINE * _row_font(fig)
    assert per_row >= round(1.2 * _row_font(fig))  # Plotly names every row
    assert _row_font(fig) >= 18  # at the projector's size, not shrunk to fit


def test_the_projector_legend_takes_no_width_dependent_rows_under_the_plot(travel) -> None:
    fig = coverage_heatmap(travel, TITLE, present=True)
    legend = fig.layout.legend
    # Beside the plot, a kind a line: the same height at 524 and at 1420 px, no empty band.
    assert legend.orientation == "v" and legend.xref == "paper" and legend.x >= 1
    kinds = len(dict.fromkeys(travel.col_kinds))
    assert len([t for t in fig.data if t.type == "scatter"]) == kinds
    # The bottom margin is the unit ids (at most 0.6 em a character) and the two lines of the
    # x title: no legend rows. Old: 311 px with 100 px empty.
    ticks = fig.layout.xaxis2
    longest = max(len(t) for t in ticks.ticktext if "<" not in t)
    bottom_bound = 0.6 * ticks.tickfont.size * longest + 10 + 2 * LINE * 21 + 30
    assert fig.layout.margin.b <= bottom_bound
    assert ticks.title.text.count("<br>") == 1


def test_normal_mode_names_every_row_of_the_qa_package() -> None:
    hm = _view("travel-assistant", 40, "all", "store:fact-extractor").heatmap
    fig = coverage_heatmap(hm, TITLE, present=False)
    assert list(fig.data[1].y) == list(hm.row_labels)
    assert _plot_height(fig) / len(hm.row_ids) >= LINE * _row_font(fig)


@pytest.mark.parametrize("name", ["event-graph-500", "event-graph-50"])
def test_a_big_package_shows_a_named_subset_on_a_projector_and_says_so(name) -> None:
    hm = _view(name, None, "kept").heatmap
    fig = coverage_heatmap(hm, TITLE, present=True)
    drawn = list(fig.data[1].y)
    assert 1 <= len(drawn) < len(hm.row_ids)
    assert _plot_height(fig) / len(drawn) >= LINE * _row_font(fig)
    assert fig.layout.height <= PRESENT_MAX_HEIGHT
    # The subset: rows covering the focus unit first, then the store's and the optimum's,
    # then by arrival; drawn in arrival order. Recomputed here from the data.
    j = hm.focus_col_idx
    order = sorted(
        range(len(hm.row_ids)),
        key=lambda i: (
            0
            if j is not None and hm.z[i][j] > 0
            else 1
            if hm.row_in_store[i] or hm.row_in_opt[i]
            else 2,
            i,
        ),
    )
    expected = [hm.row_labels[i] for i in sorted(order[: len(drawn)])]
    assert drawn == expected
    caption = heatmap_caption(hm, True, TITLE)
    assert caption.startswith(f"Shown: {len(drawn)} of {hm.n_rows_total} candidates")
    assert f"names {len(drawn)} of these {len(hm.row_ids)} rows" in caption
    assert "covering the focus unit" in caption and "Presentation mode off" in caption
    # Normal mode still draws them all.
    assert len(coverage_heatmap(hm, TITLE, present=False).data[1].y) == len(hm.row_ids)


def test_the_kind_band_stays_12_px_above_the_taller_plot(travel) -> None:
    fig = coverage_heatmap(travel, TITLE, present=True)
    plot = _plot_height(fig)
    bands = [s for s in fig.layout.shapes if s.type == "rect" and s.y0 > 1]
    assert bands and all(math.isclose((s.y1 - 1) * plot, 12, abs_tol=0.5) for s in bands)
