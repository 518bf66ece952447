"""App findings of the twenty-fifth session's browser QA: a package without evidence units,
labels that said OPT over unproven incumbents, and a store named like a writer."""

from __future__ import annotations

import json
from pathlib import Path

from app_utils import upload_file
from streamlit.testing.v1 import AppTest

from memaudit_core.curves import budget_curve, resolve_methods
from memaudit_core.generators import generate
from memaudit_core.package import parse_package
from memaudit_ui.figures import budget_ratio_curve

REPO = Path(__file__).resolve().parent.parent


def _no_units_doc() -> dict:
    doc = json.loads((REPO / "sample_packages" / "update_chain.json").read_text())
    doc["id"] = "no-units"
    doc["units"] = []
    doc["queries"] = []
    for cand in doc["candidates"]:
        cand["coverage"] = {}
    return doc


def test_a_package_without_evidence_units_is_warned_about():
    package = parse_package(_no_units_doc())
    assert (
        "$.units: the package has no evidence units: every store is worth 0 (rule: no-units)"
        in package.warnings
    )


def test_compare_on_a_package_without_evidence_units_has_no_exception():
    """App QA: the unit table had no columns, and the page raised a KeyError."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params["package"] = "sample:update_chain"
    at.run()
    upload_file(at, "no-units.json", json.dumps(_no_units_doc()).encode())
    at.switch_page("pages/2_Compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("no evidence units" in i.value for i in at.info)


def test_the_ratio_chart_does_not_call_unproven_incumbents_opt():
    """App QA: "OPT = 1" and "OPT without validity types" stood over uncertified points."""
    package = generate("random_coverage", seed=1, n_groups=60)
    curve = budget_curve(package, [10.0, 30.0], ["writer:gvt"], solver="milp", time_limit=1e-3)
    assert not all(p.certified for p in curve.opt)
    fig = budget_ratio_curve(curve, "t")
    assert "OPT or incumbent = 1" in [a.text for a in fig.layout.annotations]
    names = [t.name for t in fig.data]
    assert "OPT without validity types (hollow: incumbent)" in names
    proven = budget_curve(generate("update_chain"), [3.0, 6.0], ["writer:gvt"])
    assert all(p.certified for p in proven.opt)
    fig = budget_ratio_curve(proven, "t")
    assert "OPT = 1" in [a.text for a in fig.layout.annotations]
    assert "OPT without validity types" in [t.name for t in fig.data]


def test_a_store_named_like_a_writer_has_its_own_label():
    doc = json.loads((REPO / "sample_packages" / "travel-assistant.json").read_text())
    first = doc["candidates"][0]["id"]
    doc["stores"] = [{"id": "gvt", "select": [first]}]
    methods = resolve_methods(parse_package(doc), ["writer:gvt", "store:gvt"])
    labels = [m.label for m in methods]
    assert labels == ["gvt", "gvt (store)"]


def test_a_link_parameter_given_twice_is_named():
    """App QA: ?package=a&package=b opened b, dropping a without a word."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params["package"] = ["sample:update_chain", "sample:travel-assistant"]
    at.query_params["budget"] = ["3", "7"]
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(w.value for w in at.warning)
    assert "the link gives package 2 times" in shown and "'sample:travel-assistant'" in shown
    assert "the link gives budget 2 times" in shown
    assert at.session_state["ma_package"] == "sample:travel-assistant"


def test_the_ablation_titles_fit_their_full_width_chart():
    """App QA: "Drop 1 − pool OPT / OPT · external-stores-dem" ran off its column. The charts
    are full width since, one per row (QA s43: sized as half, the title wrapped at 1920 px)."""
    from memaudit_ui.figures import ablation_drop_chart, ablation_value_chart

    title = "Drop 1 − pool OPT / OPT · external-stores-demo"
    for chart in (ablation_drop_chart, ablation_value_chart):
        assert chart([], title, "words").layout.title.text == title


def _page(page: str) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params["package"] = "sample:update_chain"
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_an_out_of_range_certification_time_limit_is_an_error_not_ignored():
    """App QA: the box showed 0.01 with a small "!" while the audit ran at 30 s."""
    at = _page("pages/6_Certification.py")
    at.number_input(key="cert_time_limit").set_value(0.01).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("0.01 s is outside 0.5 to 3600 s" in e.value for e in at.error)


def test_a_negative_sweep_step_is_an_error_not_ignored():
    """App QA: step -5 stayed in the box while the page swept with the previous step."""
    at = _page("pages/1_Budget_sweep.py")
    at.radio(key="sweep_grid").set_value("range").run()
    at.number_input(key="sweep_step").set_value(-5.0).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("step must be > 0, got -5" in e.value for e in at.error)
