"""QA s41 (pages): the Budget sweep's click-to-Compare on dashed (ablation) points, its page with
nothing chosen, its F chart beside external stores, and number boxes that rounded the value used.

Each test fails on the code before its fix (checked against a worktree of commit f740a49).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from app_utils import open_linked
from streamlit.testing.v1 import AppTest

import memaudit_core as ma
from memaudit_core.curves import budget_curve
from memaudit_ui import figures

REPO = Path(__file__).resolve().parent.parent
SWEEP = "pages/1_Budget_sweep.py"
ABLATIONS = "pages/5_Ablations_and_sensitivity.py"
CERTIFICATION = "pages/6_Certification.py"


def _opened(page: str, package: str, /, **settings: str) -> AppTest:
    """``page`` opened by a link with ``package`` and the page's ``settings``."""
    return open_linked(page, package, **settings)


@pytest.fixture(scope="module")
def chain_curve():
    pkg = ma.load_package(REPO / "sample_packages" / "update_chain.json")
    return budget_curve(pkg, [3.0, 6.0], ["writer:gvt"], ablations=("no_validity_opt",))


def _selected(fig, trace_name_start: str, index: int, as_dict: bool = False) -> dict:
    """A Streamlit selection event of point ``index`` of the first trace whose name starts with
    ``trace_name_start`` (customdata as the chart carries it)."""
    trace = next(t for t in fig.data if (t.name or "").startswith(trace_name_start))
    data = list(trace.customdata[index])
    if as_dict:  # how Streamlit may return it (STACK_NOTES 4.4)
        data = {str(i): v for i, v in enumerate(data)}
    return {"selection": {"points": [{"customdata": data}]}}


# --------------------------------------------------------------------------- defect 1


@pytest.mark.parametrize("draw", ["budget_value_curve", "budget_ratio_curve"])
@pytest.mark.parametrize("as_dict", [False, True])
def test_a_dashed_ablation_point_opens_no_compare_and_says_why(chain_curve, draw, as_dict):
    # QA s41, defect 1: its store key was "", so Compare opened for the sidebar's writer (gvt,
    # ratio 1.000) beside a clicked point showing 0.486.
    fig = getattr(figures, draw)(chain_curve, "t")
    hit = figures.sweep_click(_selected(fig, "OPT without validity types", 0, as_dict))
    assert hit.budget == 3.0
    assert hit.store_key == ""
    assert "OPT without validity types" in hit.refusal
    assert "no store to open on Compare" in hit.refusal


@pytest.mark.parametrize("draw", ["budget_value_curve", "budget_ratio_curve"])
def test_writer_and_opt_points_still_open_compare(chain_curve, draw):
    fig = getattr(figures, draw)(chain_curve, "t")
    assert figures.sweep_click(_selected(fig, "gvt", 1)) == figures.SweepClick(6.0, "writer:gvt")
    assert figures.sweep_click({"selection": {"points": []}}) is None
    assert figures.sweep_click(None) is None
    if draw == "budget_value_curve":
        # An OPT point: Compare at that budget, the sidebar's store kept.
        assert figures.sweep_click(_selected(fig, "OPT", 0)) == figures.SweepClick(3.0, "")


def test_the_sweep_captions_say_which_points_open_compare():
    at = _opened(SWEEP, "sample:update_chain")
    captions = [c.value for c in at.caption]
    assert not any("Click a point to open Compare there" in c for c in captions), captions
    assert sum("Dashed points" in c and "open nothing" in c for c in captions) == 2, captions


# --------------------------------------------------------------------------- defect 2


@pytest.mark.parametrize(
    ("page", "params", "key", "shown"),
    [
        (ABLATIONS, {"level": "0.123"}, "abl_noise_level", "0.123"),
        (CERTIFICATION, {"time_limit": "0.755"}, "cert_time_limit", "0.755"),
    ],
)
def test_number_boxes_show_the_value_used_not_two_decimals(page, params, key, shown):
    # QA s41, defect 2: the Level box showed 0.12 while 0.123 was used (Streamlit's default
    # float format is "%0.2f"; the box shows its value through ``format``).
    at = _opened(page, "sample:update_chain", **params)
    box = at.number_input(key=key)
    assert box.value == float(shown)
    assert box.proto.format % box.value == shown


# --------------------------------------------------------------------------- defect 3


def test_a_sweep_with_nothing_chosen_says_so_and_offers_no_empty_csv():
    # QA s41, defect 3: a 0-byte CSV, an empty ratio chart with its x axis off the grid, no word.
    at = _opened(SWEEP, "sample:update_chain", methods="", ablation="0")
    assert any("No writer, store or dashed optimum is chosen" in i.value for i in at.info), [
        i.value for i in at.info
    ]
    assert len(at.get("plotly_chart")) == 1  # the F chart with OPT only
    keys = {b.proto.id for b in at.get("download_button")}
    assert not any("sweep_points_table" in k for k in keys), keys
    assert not any("sweep_ratio" in k for k in keys), keys


# --------------------------------------------------------------------------- defect 4


@pytest.fixture(scope="module")
def external_curve():
    pkg = ma.load_package(REPO / "sample_packages" / "external-stores-demo.json")
    return budget_curve(pkg, [24.0], ["store:mem0"], ablations=())


def test_the_f_chart_names_whose_optimum_its_opt_line_is_beside_external_stores(external_curve):
    # QA s41, defect 4: Mem0's F (13) sat above "OPT (certified)" (12.35) with no word why.
    fig = figures.budget_value_curve(external_curve, "t")
    assert fig.data[0].name == "OPT (certified) of package P, not P+"
    text = external_curve.external_caption
    assert "P+" in text and "may lie above the OPT line" in text


def test_the_f_chart_of_package_stores_only_keeps_its_opt_name(chain_curve):
    """Regression guard: no P+ words where no external store is drawn."""
    assert figures.budget_value_curve(chain_curve, "t").data[0].name == "OPT (certified)"


def test_the_sweep_page_says_under_the_f_chart_why_external_stores_exceed_opt():
    at = _opened(SWEEP, "sample:external-stores-demo", methods="store:mem0")
    captions = [c.value.replace("\\", "") for c in at.caption]  # Markdown escapes removed
    assert any("may lie above the OPT line" in c and "P+" in c for c in captions), captions
