"""Uploads and package identity in the app: an upload whose package id matches an earlier
upload (an edited file uploaded again) is a different package everywhere its content differs.

Expected values come from the package files themselves (their grids and costs) or from the
library called here, never from the app's own earlier output.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from app_utils import upload_file
from streamlit.testing.v1 import AppTest

import memaudit_core as ma
from memaudit_core.compiled import compile_package
from memaudit_core.curves import certification_report
from memaudit_core.package import loads_package, parse_package
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


def test_two_uploads_of_one_package_id_are_told_apart_in_the_picker() -> None:
    """QA s20a: both showed as "upload · qa-pkg", so the user could not tell which one the
    picker would open."""
    first, second = _variant(), _variant(cost_factor=0.5)
    at = _app("app.py")
    key_first = upload_file(at, "chain-v1.json", first)
    key_second = upload_file(at, "chain-v2.json", second)
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
    key_first = upload_file(at, "chain-v1.json", first)
    at.radio(key="sweep_grid").set_value("range").run()
    at.number_input(key="sweep_start").set_value(2.0).run()
    at.number_input(key="sweep_stop").set_value(40.0).run()
    assert at.number_input(key="sweep_stop").value == 40.0

    upload_file(at, "chain-v2.json", second)
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
    upload_file(at, "huge-budget.json", data)
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
    key = upload_file(mine, "mine.json", data)
    assert upload_file(theirs, "theirs.json", data) == key
    mine.run()
    (label,) = [o for o in mine.selectbox(key="w_package").options if o.startswith("upload")]
    assert "mine.json" in label and "theirs.json" not in label, label
    (label,) = [o for o in theirs.selectbox(key="w_package").options if o.startswith("upload")]
    assert "theirs.json" in label and "mine.json" not in label, label


# --------------------------------------------------------------------------- huge weights


def _huge_weight_instance():
    """update_chain with its first unit's weight 1e300: HiGHS takes objective coefficients of
    1e20 and more as infinite, and reported an optimum of inf with an infinite bound."""
    doc = json.loads((REPO / "sample_packages" / "update_chain.json").read_text())
    doc["units"][0]["weight"] = 1e300
    return ma.compile_package(parse_package(doc))


def test_rel_diff_of_an_infinite_or_nan_value_is_infinite():
    """|inf - 1e300| / inf is nan, and a nan difference passed every `> tolerance` check."""
    from memaudit_core.solvers.certify import rel_diff

    assert rel_diff(math.inf, 1e300) == math.inf
    assert rel_diff(1.0, math.nan) == math.inf
    assert rel_diff(math.inf, math.inf) == 0.0
    assert rel_diff(2.0, 2.0 + 1e-12) < 1e-9


def test_an_engine_claiming_an_infinite_optimum_and_bound_is_not_certified():
    """A RawSolution that says optimal with value inf and bound inf, for a store whose F is
    finite (what HiGHS returned on the 1e300 upload): refused, and the reasons say why."""
    from memaudit_core.objective import evaluate
    from memaudit_core.solvers import RawSolution
    from memaudit_core.solvers.certify import finish

    inst = _huge_weight_instance()
    best = ma.solve(inst, 6.0, solver="bnb")
    sel = best.selected_idx
    f_value = evaluate(inst, np.asarray(sel, dtype=np.int64))
    assert math.isfinite(f_value) and f_value >= 1e300
    res = finish(inst, 6.0, "milp", RawSolution(sel, math.inf, math.inf, "optimal"), 0.01)
    assert not res.certified
    reasons = res.certificate.reason
    assert "reported inf" in reasons
    assert "claims optimality" in reasons


def test_solver_milp_on_weights_beyond_highs_infinity_is_never_certified():
    """End to end: solver='milp' on the 1e300 upload gave status optimal, value 1e300, bound
    inf, certified True (QA s20a). Whatever HiGHS returns there, certified needs a finite
    bound that meets the value; B&B proves it on the same instance."""
    inst = _huge_weight_instance()
    for budget in (6.0, 13.0):
        res = ma.solve(inst, budget, solver="milp")
        assert not res.certified, (budget, res.value, res.bound)
        assert res.value >= 1e300  # the store is still the best one, just not proven
    proven = ma.solve(inst, 6.0, solver="bnb")
    assert proven.certified and proven.value >= 1e300
