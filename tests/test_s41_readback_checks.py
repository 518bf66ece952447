"""QA s41: read-back result files whose numbers contradict each other were accepted
(a budget curve with F = 9 beside a certified OPT of 5.55, an opt point disagreeing with its
points, OPT(k=2) below OPT(k=1), a band CI with ci_low > ci_high and n above the seeds, an
edited noisy_mean_ratio). Each file below is a genuine result with one edit, as QA made them."""

from __future__ import annotations

import copy
import json

import pytest

from memaudit_core import curves, robustness
from memaudit_core.errors import ResultError
from memaudit_core.generators import generate


@pytest.fixture(scope="module")
def pkg():
    return generate("update_chain")


def _doc(res) -> dict:
    return json.loads(json.dumps(res.to_dict()))


def _refused(cls, doc: dict, where: str) -> None:
    with pytest.raises(ResultError) as info:
        cls.from_dict(doc)
    assert where in str(info.value)
    assert "inconsistent" in str(info.value)


def _curve(pkg) -> dict:
    return _doc(curves.budget_curve(pkg, [3, 6, 13], ["gvt", "density"]))


def _point(doc: dict, method: str, budget: float) -> dict:
    (p,) = [p for p in doc["points"] if p["method"] == method and p["budget"] == budget]
    return p


def test_budget_curve_value_above_certified_opt(pkg) -> None:
    doc = _curve(pkg)
    p = _point(doc, "writer:density", 3.0)
    p["value"] = 9.0
    p["ratio"] = 9.0 / p["opt"]
    p["ratio_text"] = curves.ratio_text(p["ratio"])
    _refused(curves.BudgetCurve, doc, ".value")


def test_budget_curve_opt_point_disagrees_with_points(pkg) -> None:
    doc = _curve(pkg)
    doc["opt"][0]["value"] = doc["opt"][0]["bound"] = 4.0
    _refused(curves.BudgetCurve, doc, ".opt")


def test_budget_curve_genuine_reads_back(pkg) -> None:
    """Regression guard: the genuine curve is read back."""
    doc = _curve(pkg)
    assert curves.BudgetCurve.from_dict(doc).to_dict() == doc


@pytest.fixture(scope="module")
def cap(pkg) -> dict:
    return _doc(robustness.capacity_sensitivity(pkg, [3, 6, 13]))


def test_capacity_opt_k_below_opt_1(cap) -> None:
    doc = copy.deepcopy(cap)
    p = doc["points"][1]
    low = p["opt_1"] / 2
    p["opt_k"] = low
    p["gain"] = low / p["opt_1"]
    p["engine_values"] = {e: low for e in p["engine_values"]}
    p["engine_bounds"] = {e: low for e in p["engine_bounds"]}
    _refused(robustness.CapacitySensitivity, doc, "points[1].opt_k")


def test_capacity_agree_contradicts_engines(cap) -> None:
    doc = copy.deepcopy(cap)
    p = doc["points"][0]
    assert p["agree"] is True
    p["agree"] = False
    doc["all_agree"] = False  # kept consistent with the edited point
    _refused(robustness.CapacitySensitivity, doc, "points[0].agree")


def _band() -> dict:
    return _doc(curves.family_band("random_coverage", [0, 1, 2, 3, 4], None, [3], ["gvt"]))


def test_family_band_ci_reversed_and_n_above_seeds() -> None:
    doc = _band()
    doc["rows"][0]["n"] = 99
    _refused(curves.FamilyBand, doc, "rows[0].n")
    doc = _band()
    r = doc["rows"][0]
    r["ci_low"], r["ci_high"] = r["max_ratio"], r["min_ratio"]
    assert r["ci_low"] > r["ci_high"]
    _refused(curves.FamilyBand, doc, "rows[0].ci_low")


def test_noise_edited_noisy_mean(pkg) -> None:
    doc = _doc(robustness.noise_sensitivity(pkg, "shrink", 0.5, draws=3, budgets=[3, 6]))
    (row,) = [r for r in doc["writer_rows"] if r["writer"] == "density"]
    assert row["n"] == 6
    row["noisy_mean_ratio"] = row["clean_mean_ratio"] + row["mean_abs_delta"] + 0.2
    _refused(robustness.NoiseSensitivity, doc, "noisy_mean_ratio")


def test_cost_rule_edited_mean_ratio(pkg) -> None:
    doc = _doc(robustness.cost_rule_sensitivity(pkg, [3, 6], rules=["words"]))
    rule = doc["rules"][1]
    rule["mean_ratio"]["gvt"] = 0.01
    _refused(robustness.CostRuleSensitivity, doc, "rules[1].mean_ratio.gvt")


def test_ablation_certified_optimum_shrinks_with_budget(pkg) -> None:
    doc = _doc(robustness.ablation_curve(pkg, [3, 6], preset="no_validity"))
    p = doc["points"][1]
    p["full_opt"] = doc["points"][0]["full_opt"] / 2
    p["pool_opt"] = min(p["pool_opt"], p["full_opt"])
    p["ratio"] = p["pool_opt"] / p["full_opt"]
    p["drop"] = 1 - p["ratio"]
    _refused(robustness.AblationCurve, doc, "points[1].full_opt")
