"""QA s42 (speaker demo on a projector): the Evidence explorer's heatmap and graph exports name
the store and the budget; the Budget sweep's ratio chart says n/a when OPT is 0 at every budget
and does not stretch its x-axis to a sidebar budget outside the grid; the Overview's bar labels
stay clear of the "OPT = 1" line.

Each test fails on the code before its fix (checked against a worktree of commit 6817430),
except those whose docstring calls them a regression guard.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from app_utils import open_app

import memaudit_core as ma
from memaudit_core.curves import budget_curve
from memaudit_ui import figures, render

REPO = Path(__file__).resolve().parent.parent
EVIDENCE = "pages/3_Evidence_explorer.py"

# --------------------------------------------------------------------------- defect 1


def _evidence_exports(monkeypatch, **query: str) -> dict[str, tuple[str, str]]:
    """The Evidence explorer opened by a link with ``query``: chart key -> (download file name
    as the buttons give it, figure title on one line)."""
    seen: dict[str, tuple[str, str]] = {}
    real = render.chart

    def recording(fig, key, filename, **kwargs):
        title = str(fig.layout.title.text).replace("<br>", " ")
        seen[key] = (render.safe_filename(filename), title)
        return real(fig, key, filename, **kwargs)

    monkeypatch.setattr(render, "chart", recording)
    at = open_app(EVIDENCE, package="sample:travel-assistant", **query)
    monkeypatch.undo()  # the next page opened records afresh
    assert not at.exception, [e.value for e in at.exception]
    return seen


def test_the_heatmap_and_graph_exports_name_the_store_and_the_budget(monkeypatch):
    # QA s42: both links exported travel-assistant-coverage-heatmap.png titled "Coverage a_ur:
    # 10 candidates × 20 units", and travel-assistant-graph.png: no slide could say whose "S".
    default = _evidence_exports(monkeypatch, present="1")  # Fact extractor at 40 words
    raw = _evidence_exports(monkeypatch, budget="20", store="store:raw-logger", present="1")

    # Since speaker QA s48 the default focus unit too (the heatmap outlines its column, the
    # graph draws its links red): u:dates:invalid at 40 words, u:dates:current at 20.
    fact, raw_name = "travel-assistant-Fact-extractor", "travel-assistant-Raw-logger"
    assert default["evidence_heatmap"][0] == f"{fact}-u-dates-invalid-coverage-heatmap-B40"
    assert raw["evidence_heatmap"][0] == f"{raw_name}-u-dates-current-coverage-heatmap-B20"
    assert default["evidence_graph"][0] == f"{fact}-u-dates-invalid-graph-B40"
    assert raw["evidence_graph"][0] == f"{raw_name}-u-dates-current-graph-B20"
    # The timeline's name carries the store too (every explorer download, QA s42 defect 2).
    assert raw["evidence_timeline"][0] == "travel-assistant-Raw-logger-timeline-B20"

    # On a projector without the counts (they are in the caption), so the title keeps one
    # line and the rows their labels (s42 browser check: every other row label was lost).
    # In words since speaker QA s46 ("Coverage a_ur · S = Raw logger, B = 20 words").
    heading = "Each candidate's coverage of each unit: "
    assert raw["evidence_heatmap"][1] == heading + "Raw logger, budget 20 words"
    assert default["evidence_heatmap"][1] == heading + "Fact extractor, budget 40 words"
    normal = _evidence_exports(monkeypatch)
    assert normal["evidence_heatmap"][1] == (
        heading + "Fact extractor, budget 40 words · 39 candidates × 20 units"
    )
    graph_title = raw["evidence_graph"][1]
    assert graph_title.startswith("Evidence graph · Raw logger, budget 20 words: "), graph_title
    assert default["evidence_graph"][1].startswith(
        "Evidence graph · Fact extractor, budget 40 words: "
    )


# --------------------------------------------------------------------------- defect 2


@pytest.fixture(scope="module")
def zero_curve():
    """veg-to-pescatarian on the QA grid 1-3 step 0.5: nothing of value fits, OPT = 0."""
    pkg = ma.load_package(REPO / "sample_packages" / "veg-to-pescatarian.json")
    curve = budget_curve(
        pkg,
        [1.0, 1.5, 2.0, 2.5, 3.0],
        ["writer:gvt", "writer:density"],
        ablations=("no_validity_opt",),
    )
    assert [o.value for o in curve.opt] == [0.0] * 5  # the case QA met
    return curve


def test_a_ratio_chart_with_every_ratio_undefined_says_na_and_lists_no_series(zero_curve):
    # QA s42: no marks, yet a legend of 4 series and nothing saying why.
    fig = figures.budget_ratio_curve(zero_curve, "t", False, current_budget=2.0)
    texts = [a.text for a in fig.layout.annotations]
    assert "n/a: OPT is 0 at every budget of the grid" in texts, texts
    assert [t.showlegend for t in fig.data] == [False] * len(fig.data)
    # The axis spans the grid swept (nothing to autorange on).
    low, high = fig.layout.xaxis.range
    assert 0.5 <= low < 1.0 and 3.0 < high <= 3.5, (low, high)


@pytest.mark.parametrize("draw", [figures.budget_ratio_curve, figures.budget_value_curve])
def test_a_sidebar_budget_outside_the_grid_does_not_stretch_the_x_axis(zero_curve, draw):
    # QA s42: "B = 12 words" (the package's budget) beside the grid 1-3 drew a line at 12 and
    # widened the axis fourfold to reach it.
    fig = draw(zero_curve, "t", False, current_budget=12.0)
    assert not [a.text for a in fig.layout.annotations if "B = 12" in a.text]
    assert not [s for s in fig.layout.shapes if s.xref == "x" and 12.0 in (s.x0, s.x1)]
    assert fig.layout.xaxis.range is None or max(fig.layout.xaxis.range) <= 3.5


@pytest.mark.parametrize("draw", [figures.budget_ratio_curve, figures.budget_value_curve])
def test_a_sidebar_budget_inside_the_grid_is_still_marked(zero_curve, draw):
    """Regression guard: the line and its label at a budget of the grid stay."""
    fig = draw(zero_curve, "t", False, current_budget=2.0)
    assert [a.text for a in fig.layout.annotations if "B = " in a.text] == ["sidebar B = 2 words"]
    assert [s.x0 for s in fig.layout.shapes if s.xref == "x"] == [2.0]


# --------------------------------------------------------------------------- defect 3

#: The test's own label width estimate: 0.6 em a character plus 4 px padding either side.
EM_PER_CHAR = 0.6
#: Plotly's padding between a bar's edge and its text (px).
TEXT_PAD_PX = 3
#: Clearance kept between a label and the OPT line (px): the dashed line is 2 px wide.
CLEAR_PX = 4


def _label_spans_px(fig, plot_px: float) -> list[tuple[str, float, float]]:
    """Each bar label's estimated x-extent, px from the plot's left edge."""
    start, end = fig.layout.xaxis.range
    scale = plot_px / (end - start)
    spans = []
    for trace in fig.data:
        font = trace.textfont.size or fig.layout.font.size
        anchor = trace.insidetextanchor or "end"
        for x, text, where in zip(trace.x, trace.text, trace.textposition, strict=True):
            width = EM_PER_CHAR * font * len(text) + 8
            if where == "outside":
                left = x * scale + TEXT_PAD_PX
            elif anchor == "start":
                left = TEXT_PAD_PX
            elif anchor == "middle":
                left = x * scale / 2 - width / 2
            else:
                left = x * scale - TEXT_PAD_PX - width
            spans.append((text, left, left + width))
    return spans


@pytest.mark.parametrize("present", [False, True], ids=["normal", "presenting"])
@pytest.mark.parametrize("denominator", ["OPT", "incumbent"])
def test_no_bar_label_touches_the_opt_line(present, denominator):
    # QA s42: update_chain at budget 6, gvt's "1.000" drawn over the dashed "OPT = 1" line.
    ratios = [1.0, 0.999, 1.08, 0.97, 0.73, 0.323, 0.2, 0.0, None]
    labels = [f"w{i}" for i in range(len(ratios))]
    fig = figures.ratio_bars(
        labels, ratios, ["writer"] * len(ratios), "t", present, denominator, highlight=0
    )
    # The narrowest plot the chart is drawn at: 1024 px with the sidebar open (564 px), less
    # the margins (70 + 30 px); 520 px presenting (speaker QA s45).
    plot_px = (520 if present else 564) - 100
    start, end = fig.layout.xaxis.range
    line_px = (1.0 - start) * plot_px / (end - start)
    for text, left, right in _label_spans_px(fig, plot_px):
        assert right <= line_px - CLEAR_PX or left >= line_px + CLEAR_PX, (text, left, right)
