"""QA s44 (ablcharts): the Group capacity tab and tall charts at 1280 x 720.

1. On a log1p package the capacity tab said OPT(k) was "solved by both exact engines
   (branch-and-bound and HiGHS) and cross-checked", showed "milp skipped: ... use solver 'bnb'
   or 'auto'" on a page with no solver control, and "engines agree: not checked" on every row:
   HiGHS cannot take log1p, so branch-and-bound ran alone.
2. At 1280 x 720 the cost-rule chart (840 px, legend at the bottom), the evidence graph
   (741 px) and the coverage heatmap (761 px) of veg-to-pescatarian (14 candidates) never
   showed their title and legend (or unit axis) together; travel-assistant's graph was
   1,642 px with its legend at the bottom.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_utils import open_app, upload_file

from memaudit_core import load_package
from memaudit_core.explain import evidence_view
from memaudit_core.package import parse_package
from memaudit_core.robustness import capacity_sensitivity, cost_rule_sensitivity
from memaudit_ui import figures

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"
#: What a 1280 x 720 screen shows of a chart under Streamlit's header (the app's own
#: one-screen bound, PRESENT_MAX_HEIGHT, is this number).
SCREEN_CHART_PX = 630


def _veg_doc(saturation: str) -> dict:
    doc = json.loads((SAMPLES / "veg-to-pescatarian.json").read_text())
    doc["id"] = f"veg-{saturation}"
    doc["objective"]["saturation"] = saturation
    return doc


# --------------------------------------------------------------------------- 1. capacity


def test_capacity_on_log1p_names_the_one_engine_that_ran_without_solver_advice():
    cap = capacity_sensitivity(parse_package(_veg_doc("log1p")), [8.0], k=2)
    (point,) = cap.points
    # HiGHS's model is linear in the coverage: log1p is not expressible, so only bnb runs.
    assert [e for e, _ in point.engine_values] == ["bnb"]
    assert cap.engines == ("bnb",)
    text = cap.engines_text()
    assert "branch-and-bound (bnb) alone" in text and "not cross-checked" in text
    assert "HiGHS" not in text
    (milp_note,) = [n for n in cap.notes if n.startswith("milp skipped")]
    assert "log1p" in milp_note and "use solver" not in milp_note
    assert cap.table_rows()[0]["engines agree"] == "n/a (bnb alone)"


def test_capacity_on_cap1_still_names_both_engines():
    cap = capacity_sensitivity(load_package(SAMPLES / "veg-to-pescatarian.json"), [8.0], k=2)
    assert cap.engines == ("bnb", "milp")
    assert "branch-and-bound (bnb) and HiGHS MILP (milp)" in cap.engines_text()
    assert "1 of 1 budget" in cap.engines_text()
    assert cap.table_rows()[0]["engines agree"] == "yes"


def test_solve_keeps_its_solver_advice_for_log1p():
    from memaudit_core.compiled import compile_package
    from memaudit_core.errors import SolverError
    from memaudit_core.solvers.milp import solve_milp

    inst = compile_package(parse_package(_veg_doc("log1p")))
    with pytest.raises(SolverError, match=r"not linear-representable here: use solver 'bnb'"):
        solve_milp(inst, 8.0)


def test_capacity_tab_on_an_uploaded_log1p_package_says_which_engines_ran():
    at = open_app()
    upload_file(at, "veg-log1p.json", json.dumps(_veg_doc("log1p")).encode())
    at.switch_page("pages/5_Ablations_and_sensitivity.py").run()
    assert not at.exception, [e.value for e in at.exception]
    # The page escapes Markdown (md_escape); the text as read.
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert not any("both exact engines" in c for c in captions), captions
    assert any("branch-and-bound (bnb) alone" in c for c in captions), captions
    infos = [i.value.replace("\\", "") for i in at.info]
    assert any("milp skipped" in i for i in infos), infos
    assert not any("use solver" in i for i in infos), infos
    cap = next(d.value for d in at.dataframe if "engines agree" in d.value.columns)
    assert set(cap["engines agree"]) == {"n/a (bnb alone)"}


# --------------------------------------------------------------------------- 2. chart heights


def _legend_between_title_and_plot(fig) -> None:
    """The legend's top edge lies under the title and above the plot (in px from the top)."""
    legend = fig.layout.legend
    assert legend.orientation == "h" and legend.yref == "container", legend
    assert legend.yanchor == "top", legend
    top_px = (1 - legend.y) * fig.layout.height
    # Under a one-line title (about 40 px) and clear of the plot by at least a legend row.
    assert 35 <= top_px <= fig.layout.margin.t - 1.6 * legend.font.size, (
        top_px,
        fig.layout.margin.t,
    )


@pytest.fixture(scope="module")
def veg_view():
    return evidence_view(load_package(SAMPLES / "veg-to-pescatarian.json"), 8, writer="density")


def test_small_package_heatmap_fits_a_screen_with_its_unit_axis_titled(veg_view):
    fig = figures.coverage_heatmap(
        veg_view.heatmap, "Coverage a_ur · S = density, B = 8 words: 14 candidates × 7 units"
    )
    assert fig.layout.height <= SCREEN_CHART_PX
    assert fig.layout.xaxis2.title.text == "evidence unit (grouped by kind)"
    # The kinds legend stays beside the plot's top, next to the title.
    assert fig.layout.legend.orientation == "v" and fig.layout.legend.y == 1.0
    # The colour bar (from the plot's bottom) ends under the legend's title and 7 kind lines.
    plot_px = (
        fig.layout.height
        - fig.layout.margin.t
        - figures.heatmap_geometry(veg_view.heatmap).bottom_px
    )
    (heat,) = [t for t in fig.data if t.type == "heatmap" and t.showscale is not False]
    assert heat.colorbar.len * plot_px <= plot_px - 8 * 21.5


def test_small_package_graph_fits_a_screen_with_its_legend_under_the_title(veg_view):
    fig = figures.evidence_graph(
        veg_view.graph, "Evidence graph · density, B = 8 words: 32 nodes, 42 links"
    )
    assert fig.layout.height <= SCREEN_CHART_PX
    # The layers are named on the x axis; the legend says what lines and outlines mean.
    shown = [t.name for t in fig.data if t.showlegend is not False]
    assert shown == ["link", "link of the focus unit", "held by the store", "held by the optimum"]
    assert fig.layout.xaxis.title.text.startswith("layer")


def test_tall_charts_keep_the_legend_between_title_and_plot():
    ta = load_package(SAMPLES / "travel-assistant.json")
    view = evidence_view(ta, 20, writer="density", heatmap_rows="all", graph_scope="all")
    graph = figures.evidence_graph(view.graph, "Evidence graph · density, B = 20 words")
    assert graph.layout.height > SCREEN_CHART_PX  # 84 nodes: legitimately taller
    _legend_between_title_and_plot(graph)

    veg = load_package(SAMPLES / "veg-to-pescatarian.json")
    sens = cost_rule_sensitivity(veg, veg.budget_grid())
    fig = figures.cost_rule_ratio_chart(sens, "Mean ratio per writer and cost rule · veg")
    # 7 writers x 5 rules of 15 px bars do not fit a screen; the legend is up with the title.
    assert fig.layout.height > SCREEN_CHART_PX
    _legend_between_title_and_plot(fig)
    assert fig.layout.xaxis.title.text.startswith("mean ratio F / OPT")


def test_short_charts_keep_the_legend_below():
    veg = load_package(SAMPLES / "veg-to-pescatarian.json")
    sens = capacity_sensitivity(veg, [8.0, 12.0], k=2)
    fig = figures.capacity_chart(sens, "OPT with k = 2 vs k = 1 · veg", "words")
    assert fig.layout.height <= SCREEN_CHART_PX
    legend = fig.layout.legend
    assert legend.yanchor == "top" and legend.y * fig.layout.height < fig.layout.margin.b
