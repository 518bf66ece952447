"""Saved results read back, round 2 (QA s39 h2): edited library sweeps, gaps, engine checks,
costs over the budget and a whole store worth less than its part are refused.

Every result here is made by the library and saved with ``to_dict()``; a test edits one field
and checks that :func:`memaudit_core.read_result` refuses it at the JSON path of the edited
field, with the rule ``inconsistent`` (``allowed-value`` for a negative count). Each test fails
on the code before the fix (checked against a worktree of afcad28), except those marked as
regression guards.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import memaudit_core as ma
from memaudit_core.compiled import compile_package
from memaudit_core.errors import ResultError

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"


def _pkg(name: str) -> Any:
    return ma.load_package(str(SAMPLES / name))


@pytest.fixture(scope="module")
def saved() -> dict[str, dict[str, Any]]:
    """Genuine results as ``to_dict()`` gives them."""
    uc, travel = _pkg("update_chain.json"), _pkg("travel-assistant.json")
    demo = _pkg("external-stores-demo.json")
    limited = ma.solve(
        compile_package(_pkg("event-graph-500.json")), 300, "bnb", node_limit=1
    )  # fmt: skip
    return {
        # Two packages: the summary rows of a writer have n = 2 and a bootstrap interval.
        "sweep": ma.sweep([uc, travel], [0, 4, 8], ["gvt", "density"]).to_dict(),
        "sweep_abl": ma.sweep([uc], [0, 4, 8], ["gvt"], ablations=["no_validity"]).to_dict(),
        "solve": ma.solve(compile_package(uc), 6).to_dict(),
        "solve_lim": limited.to_dict(),
        "score_w": ma.score(uc, 6, writer="gvt").to_dict(),
        "score_over": ma.score(travel, 20, store_id="raw-logger").to_dict(),
        "union": ma.union_report(demo, "mem0", 24).to_dict(),
    }


def _refused(
    saved: dict[str, dict[str, Any]],
    name: str,
    edit: Callable[[dict], Any],
    json_path: str,
    rule: str = "inconsistent",
) -> None:
    doc = copy.deepcopy(saved[name])
    edit(doc)
    with pytest.raises(ResultError) as info:
        ma.read_result(doc)
    assert (info.value.path, info.value.rule) == (json_path, rule)


def _row(doc: dict, **where: Any) -> int:
    return next(i for i, r in enumerate(doc["rows"]) if all(r[k] == v for k, v in where.items()))


def _summary(doc: dict, method: str, budget: float) -> int:
    return next(
        i for i, s in enumerate(doc["summary"]) if (s["method"], s["budget"]) == (method, budget)
    )


def _set(obj: dict, key: str, value: Any) -> None:
    obj[key] = value


# --------------------------------------------------------------------------- regression guards


@pytest.mark.parametrize(
    "name", ["sweep", "sweep_abl", "solve", "solve_lim", "score_w", "score_over", "union"]
)
def test_every_unedited_library_result_still_reads_back(saved, name):
    """Regression guard (passes before the fix too): the new checks refuse no genuine result,
    a limited solve, a store over its budget and a pruned external store included."""
    assert ma.read_result(saved[name]).to_dict() == saved[name]


def test_the_fixture_results_cover_the_cases_they_are_meant_to(saved):
    """Regression guard: the results above are limited, over budget, of two ratios."""
    assert saved["solve_lim"]["status"] == "limit" and not saved["solve_lim"]["certified"]
    assert saved["solve_lim"]["gap"] > 0.001
    assert saved["score_over"]["over_budget"] and saved["union"]["over_budget"]
    i = _summary(saved["sweep"], "gvt", 4.0)
    assert saved["sweep"]["summary"][i]["n"] == 2
    # Two ratios: no interval since QA s46 (below MIN_CI_N); the interval tests below set one
    # as a file saved before would have it.
    assert saved["sweep"]["summary"][i]["ci_low"] is None
    assert saved["sweep"]["rows"][_row(saved["sweep"], budget=0.0)]["opt"] == 0.0


def test_gap_fits_accepts_a_gap_of_a_package_in_small_units():
    """Regression guard: a package whose value unit is 1e-9 gives F 3e-9 and bound
    3.000000003e-9 a gap of 1e-9 (QA's out/714.json); with a unit of 1 it would be 0.
    (Before the fix there was no ``gap_fits``: this guard then fails on its import.)"""
    from memaudit_core.solvers import gap_fits

    assert gap_fits(3e-9, 3.000000003e-9, 1.000000011347846e-09)
    assert gap_fits(3e-9, 3.000000003e-9, 0.0)


# --------------------------------------------------------------------------- #1 library sweep


def test_a_ratio_where_opt_is_zero_in_a_library_sweep_is_refused(saved):
    i = _row(saved["sweep"], budget=0.0)
    _refused(saved, "sweep", lambda d: _set(d["rows"][i], "ratio", 0.1234), f"$.rows[{i}].ratio")


def test_an_edited_library_sweep_row_value_is_refused(saved):
    i = _row(saved["sweep"], budget=4.0, method="gvt")

    def edit(d: dict) -> None:
        d["rows"][i]["value"] += 0.3

    _refused(saved, "sweep", edit, f"$.rows[{i}].value")


def test_a_library_sweep_row_over_its_budget_is_refused(saved):
    i = _row(saved["sweep"], budget=4.0, method="density")
    _refused(saved, "sweep", lambda d: _set(d["rows"][i], "cost", 45.0), f"$.rows[{i}].cost")


def test_a_library_sweep_row_at_a_budget_not_swept_is_refused(saved):
    i = _row(saved["sweep"], budget=8.0, method="gvt")
    _refused(saved, "sweep", lambda d: _set(d["rows"][i], "budget", 777.0), f"$.rows[{i}].budget")


def test_an_edited_library_sweep_mean_is_refused(saved):
    k = _summary(saved["sweep"], "density", 8.0)
    _refused(
        saved,
        "sweep",
        lambda d: _set(d["summary"][k], "mean_ratio", 0.01),
        f"$.summary[{k}].mean_ratio",
    )


def test_a_mean_over_no_defined_ratio_is_refused(saved):
    k = _summary(saved["sweep"], "gvt", 0.0)
    _refused(
        saved,
        "sweep",
        lambda d: _set(d["summary"][k], "mean_ratio", 0.01),
        f"$.summary[{k}].mean_ratio",
    )


def test_a_confidence_interval_outside_the_ratios_is_refused(saved):
    k = _summary(saved["sweep"], "gvt", 4.0)
    _refused(
        saved, "sweep", lambda d: _set(d["summary"][k], "ci_low", 5.0), f"$.summary[{k}].ci_low"
    )


def test_a_confidence_interval_of_one_ratio_is_refused(saved):
    k = _summary(saved["sweep_abl"], "gvt", 4.0)
    _refused(
        saved,
        "sweep_abl",
        lambda d: _set(d["summary"][k], "ci_high", 1.0),
        f"$.summary[{k}].ci_high",
    )


def test_a_library_sweep_with_a_row_removed_is_refused(saved):
    last = saved["sweep"]["rows"][-1]
    k = _summary(saved["sweep"], last["method"], last["budget"])
    _refused(saved, "sweep", lambda d: d["rows"].pop(), f"$.summary[{k}].n")


def test_a_negative_store_cut_is_refused(saved):
    _refused(
        saved,
        "sweep",
        lambda d: _set(d["rows"][0], "store_cut", -1),
        "$.rows[0].store_cut",
        rule="allowed-value",
    )


def test_an_edited_ablation_row_of_a_library_sweep_is_refused(saved):
    i = _row(saved["sweep_abl"], budget=8.0, method="no_validity_opt")
    _refused(saved, "sweep_abl", lambda d: _set(d["rows"][i], "ratio", 0.9), f"$.rows[{i}].ratio")


def test_a_library_sweep_file_names_file_path_and_rule(saved, tmp_path):
    doc = copy.deepcopy(saved["sweep"])
    i = _row(doc, budget=4.0, method="density")
    doc["rows"][i]["cost"] = 45.0
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ResultError) as info:
        ma.read_result(path)
    text = str(info.value)
    assert f"{path}: $.rows[{i}].cost: " in text and "[rule: inconsistent]" in text


# --------------------------------------------------------------------------- #2 gaps and checks


@pytest.mark.parametrize("gap", [0.0, 0.01])
def test_an_edited_gap_of_a_limited_solve_is_refused(saved, gap):
    _refused(saved, "solve_lim", lambda d: _set(d, "gap", gap), "$.gap")


def test_an_edited_gap_of_a_certified_solve_is_refused(saved):
    _refused(saved, "solve", lambda d: _set(d, "gap", 1e-7), "$.gap")


def test_a_limited_solves_primary_check_value_edited_is_refused(saved):
    def edit(d: dict) -> None:
        d["certificate"]["checks"][0]["value"] -= 50

    _refused(saved, "solve_lim", edit, "$.certificate.checks[0].value")


def test_a_limited_solves_recomputed_value_edited_is_refused(saved):
    def edit(d: dict) -> None:
        d["certificate"]["recomputed_value"] -= 50

    _refused(saved, "solve_lim", edit, "$.certificate.recomputed_value")


def test_a_limited_solves_primary_check_bound_edited_is_refused(saved):
    def edit(d: dict) -> None:
        d["certificate"]["checks"][0]["bound"] = 1e9

    _refused(saved, "solve_lim", edit, "$.certificate.checks[0].gap")


def test_a_limited_solves_bound_raised_with_its_gap_is_refused(saved):
    """The bound and the gap edited together still contradict the engine's proven bound."""

    def edit(d: dict) -> None:
        d["bound"] = 1e9
        d["gap"] = (1e9 - d["value"]) / d["value"]

    _refused(saved, "solve_lim", edit, "$.bound")


def test_a_limited_solves_value_edited_down_is_refused(saved):
    def edit(d: dict) -> None:
        d["value"] -= 50
        d["gap"] = (d["bound"] - d["value"]) / d["value"]

    _refused(saved, "solve_lim", edit, "$.value")


# --------------------------------------------------------------------------- #3 costs


def test_a_score_whose_cost_exceeds_the_budget_is_refused(saved):
    _refused(saved, "score_w", lambda d: _set(d, "cost", 999), "$.cost")


def test_a_score_flagged_over_budget_that_fits_is_refused(saved):
    _refused(saved, "score_w", lambda d: _set(d, "over_budget", True), "$.over_budget")


def test_a_score_whose_cost_is_not_its_whole_stores_is_refused(saved):
    _refused(saved, "score_w", lambda d: _set(d, "cost", 1.0), "$.cost")


def test_a_pruned_score_whose_store_cost_fits_is_refused(saved):
    _refused(saved, "score_over", lambda d: _set(d, "store_cost", 15.0), "$.over_budget")


def test_a_pruned_score_without_its_pruning_is_refused(saved):
    _refused(saved, "score_over", lambda d: _set(d, "pruned", None), "$.pruned")


def test_a_score_selecting_an_id_twice_is_refused(saved):
    n = len(saved["score_w"]["selected"])
    _refused(
        saved,
        "score_w",
        lambda d: d["selected"].append(d["selected"][0]),
        f"$.selected[{n}]",
    )


def test_a_union_report_whose_cost_exceeds_the_budget_is_refused(saved):
    _refused(saved, "union", lambda d: _set(d, "cost", 1e6), "$.cost")


def test_a_union_report_whose_whole_store_is_worth_less_than_its_part_is_refused(saved):
    _refused(saved, "union", lambda d: _set(d, "full_value", 0.0), "$.full_value")


def test_a_union_report_keeping_all_of_a_store_over_budget_is_refused(saved):
    _refused(saved, "union", lambda d: _set(d, "keep_rule", "all"), "$.keep_rule")
