"""Uploads and package identity in the app: an upload whose package id matches an earlier
upload (an edited file uploaded again) is a different package everywhere its content differs.

Expected values come from the package files themselves (their grids and costs) or from the
library called here, never from the app's own earlier output.
"""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from memaudit_core.compiled import compile_package
from memaudit_core.curves import certification_report
from memaudit_core.package import loads_package
from memaudit_core.solvers.brute import brute_force

REPO = Path(__file__).resolve().parent.parent
SWEEP = "pages/1_Budget_sweep.py"


def _variant(*, cost_factor: float = 1.0, budgets: list[float] | None = None) -> bytes:
    """update_chain under one fixed id ("qa-pkg"), its costs scaled by ``cost_factor``."""
    doc = json.loads((REPO / "sample_packages" / "update_chain.json").read_text())
    doc["id"] = "qa-pkg"
    for cand in doc["candidates"]:
        cand["cost"] = cand["cost"] * cost_factor
    if budgets is not None:
        doc["budgets"] = budgets
        doc["budget"] = budgets[len(budgets) // 2]
    return json.dumps(doc).encode()


def _app(page: str) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params["package"] = "sample:update_chain"
    at.run()
    if page != "app.py":
        at.switch_page(page).run()
    return at


def _upload(at: AppTest, name: str, data: bytes) -> str:
    at.file_uploader(key="w_upload").upload(name, data, "application/json").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    key = at.session_state["ma_package"]
    assert key.startswith("upload:"), key
    return key


def test_two_uploads_of_one_package_id_are_told_apart_in_the_picker() -> None:
    """QA s20a: both showed as "upload · qa-pkg", so the user could not tell which one the
    picker would open."""
    first, second = _variant(), _variant(cost_factor=0.5)
    at = _app("app.py")
    key_first = _upload(at, "chain-v1.json", first)
    key_second = _upload(at, "chain-v2.json", second)
    assert key_first != key_second
    options = at.selectbox(key="w_package").options
    uploads = [o for o in options if o.startswith("upload")]
    assert len(uploads) == 2 and len(set(uploads)) == 2, uploads
    assert any("chain-v1.json" in o for o in uploads), uploads
    assert any("chain-v2.json" in o for o in uploads), uploads
    assert all("qa-pkg" in o for o in uploads), uploads


def test_a_sweep_range_does_not_follow_an_upload_of_the_same_id_with_other_content() -> None:
    """QA s20a: the Budget sweep kept its range per package id, so a range set on one upload
    came back on a re-upload of the same id with halved costs (budgets 2..40 on a package
    costing 25.5 in all, with a warning about 8 budgets above the total)."""
    first = _variant(budgets=[3, 6, 13])
    second = _variant(cost_factor=0.5, budgets=[1, 2, 3, 5])
    at = _app(SWEEP)
    key_first = _upload(at, "chain-v1.json", first)
    at.radio(key="sweep_grid").set_value("range").run()
    at.number_input(key="sweep_start").set_value(2.0).run()
    at.number_input(key="sweep_stop").set_value(40.0).run()
    assert at.number_input(key="sweep_stop").value == 40.0

    _upload(at, "chain-v2.json", second)
    second_grid = loads_package(second).budget_grid()
    assert at.number_input(key="sweep_start").value == float(min(second_grid))
    assert at.number_input(key="sweep_stop").value == float(max(second_grid))
    assert not at.warning, [w.value for w in at.warning]

    # The first upload's range is still its own when it is opened again.
    at.selectbox(key="w_package").set_value(key_first).run()
    assert at.number_input(key="sweep_stop").value == 40.0


def test_a_package_budget_above_the_total_cost_is_set_to_the_total_with_a_warning() -> None:
    """QA s20a: an upload with "budget": 1e308 (total cost 51) opened at 1e308 with a slider
    from 0 to 1e308 and no word, and the next page then clamped it to 51 calling it "The
    budget": the package's own budget now gets the rule a link's budget gets."""
    doc = json.loads(_variant())
    doc["budget"] = 1e308
    data = json.dumps(doc).encode()
    total = loads_package(data).total_cost()
    at = _app("app.py")
    _upload(at, "huge-budget.json", data)
    assert at.session_state["ma_budget"] == total
    assert at.slider(key="w_budget").value == total
    warnings = [w.value for w in at.warning]
    assert any("package's budget 1e+308" in w and f"set to {total:g}" in w for w in warnings), (
        warnings
    )
    at.switch_page("pages/2_Compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["ma_budget"] == total
    assert not at.warning, [w.value for w in at.warning]


def test_a_milp_optimum_with_its_bound_a_tolerance_above_is_cross_checked() -> None:
    """QA s20a: on an upload of update_chain with other costs, the Certification page said
    "one engine stopped at its share of the 5 s" at budget 7: HiGHS had proved the optimum
    (model status optimal, no limit hit) with its dual bound 3.5e-10 above it, which solve()
    and `memaudit audit` accept (1e-9 relative) and the page's report refused as a gap."""
    doc = json.loads(_variant())
    for cand in doc["candidates"]:
        if cand["type"] == "tombstone":
            cand["cost"] = 2.5
        if cand["id"] == "update_3_compound_update":
            cand["cost"] = 1
    pkg = loads_package(json.dumps(doc).encode())
    budget = 7.0
    oracle_value, _ = brute_force(compile_package(pkg), budget)
    report = certification_report(pkg, [budget], engines=("bnb", "milp"), time_limit=30)
    (row,) = report.rows
    milp = row.run("milp")
    assert milp.status == "optimal" and not milp.hit_limit
    assert milp.bound > milp.value  # the case itself: HiGHS's bound a tolerance above
    for run in row.runs:
        assert abs(run.recomputed - oracle_value) <= 1e-9 * oracle_value, (run, oracle_value)
    assert row.certified and not row.disagreement, row.message
    assert "stopped at the limit" not in row.message, row.message


def test_a_session_sees_its_own_file_name_for_bytes_another_session_uploaded_too() -> None:
    """The upload registry is server-wide: the same bytes uploaded by a second session under
    another name must not rename the first session's upload (no cross-talk between
    sessions), and the stored package stays the one stored first."""
    data = _variant(cost_factor=2.0)
    mine, theirs = _app("app.py"), _app("app.py")
    key = _upload(mine, "mine.json", data)
    assert _upload(theirs, "theirs.json", data) == key
    mine.run()
    (label,) = [o for o in mine.selectbox(key="w_package").options if o.startswith("upload")]
    assert "mine.json" in label and "theirs.json" not in label, label
    (label,) = [o for o in theirs.selectbox(key="w_package").options if o.startswith("upload")]
    assert "theirs.json" in label and "mine.json" not in label, label
