"""Saved library results read back (QA s40): budget and ablation curves, the sensitivities,
family bands, certification records, package stats and overviews had a ``to_dict()`` that
started with ``result_version`` but named no ``result_kind``, so ``ma.read_result`` called a
file the current library had just written "not a MemAudit result".

Every result here is made by the library from a sample package (the band from the
``memaudit-small`` family) and saved with ``json.dump(r.to_dict(), ...)``. Each test fails on
the code before the fix (checked against a worktree of 8ca4966).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core import curves, reports, robustness
from memaudit_core.errors import ResultError

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"

#: The kind each readable model writes, and its class name (literal: what the README lists).
READABLE = {
    "budget_curve": "BudgetCurve",
    "ablation_curve": "AblationCurve",
    "cost_rule_sensitivity": "CostRuleSensitivity",
    "capacity_sensitivity": "CapacitySensitivity",
    "noise_sensitivity": "NoiseSensitivity",
    "family_band": "FamilyBand",
    "certification_report": "CertificationReport",
    "package_stats": "PackageStats",
    "overview": "Overview",
    # Session 41: the views read back too (they were refused as "not readable").
    "compare_view": "CompareView",
    "evidence_view": "EvidenceView",
}


@pytest.fixture(scope="module")
def made() -> dict[str, Any]:
    """Genuine results, keyed by the kind they should name."""
    pkg = ma.load_package(str(SAMPLES / "update_chain.json"))
    return {
        "budget_curve": ma.budget_curve(
            pkg, [3, 6], ["gvt", "density"], ablations=["no_validity_opt"]
        ),
        # 0.5 fits nothing: a point with an undefined ratio and drop (None) reads back too.
        "ablation_curve": robustness.ablation_curve(pkg, [0.5, 3, 6], preset="no_validity"),
        "cost_rule_sensitivity": robustness.cost_rule_sensitivity(
            pkg, [3, 6], rules=["as_stored", "words"]
        ),
        "capacity_sensitivity": robustness.capacity_sensitivity(pkg, [3, 6]),
        "noise_sensitivity": robustness.noise_sensitivity(pkg, draws=2, budgets=[6]),
        "family_band": curves.family_band(
            "memaudit-small", [0, 1], None, [2, 4], ["writer:gvt", "writer:density"]
        ),
        "certification_report": curves.certification_report(pkg, [3, 6], time_limit=5),
        "package_stats": reports.package_stats(pkg),
        "overview": reports.overview(pkg, 6),
        "compare_view": ma.compare_view(pkg, 6, writer="density"),
        "evidence_view": ma.evidence_view(pkg, 6, writer="density"),
    }


def _save(tmp_path: Path, name: str, doc: dict[str, Any]) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _refused(path: Path) -> ResultError:
    with pytest.raises(ResultError) as info:
        ma.read_result(path)
    return info.value


@pytest.mark.parametrize("kind", list(READABLE))
def test_saved_library_results_read_back_equal(made, tmp_path, kind):
    result = made[kind]
    doc = result.to_dict()
    assert list(doc)[:2] == ["result_version", "result_kind"] and doc["result_kind"] == kind
    again = ma.read_result(_save(tmp_path, kind, doc))
    assert type(again).__name__ == READABLE[kind]
    assert again == result
    # The parsed dict reads back the same way (the app and notebooks pass dicts).
    assert ma.read_result(json.loads(json.dumps(doc))) == result


def test_old_files_without_a_kind_are_told_which_model_they_look_like(made, tmp_path):
    # As the library wrote them before this fix: the same keys without result_kind.
    old = made["budget_curve"].to_dict()
    del old["result_kind"]
    exc = _refused(_save(tmp_path, "budget_curve", old))
    assert (exc.path, exc.rule) == ("$.result_kind", "required")
    assert "curves.BudgetCurve ('budget_curve')" in str(exc)
    assert 'add "result_kind": "budget_curve"' in str(exc)
    assert "not a MemAudit result" not in str(exc)

    old = made["ablation_curve"].to_dict()
    del old["result_kind"]
    assert "robustness.AblationCurve" in str(_refused(_save(tmp_path, "abl", old)))

    # An old view lacks the evaluation it is rebuilt from (written since session 41); an old
    # overview lacks the stats' new fields.
    old = made["compare_view"].to_dict()
    del old["result_kind"], old["evaluation"]
    text = str(_refused(_save(tmp_path, "cv", old)))
    assert "explain.CompareView" in text and "lacks fields this version writes" in text

    old = made["overview"].to_dict()
    del old["result_kind"]
    for key in ("result_kind", "description", "candidate_costs", "candidate_types"):
        del old["stats"][key]
    text = str(_refused(_save(tmp_path, "ov", old)))
    assert "reports.Overview" in text and "lacks fields this version writes" in text


def _set(path: list[str | int], value: Any) -> Callable[[dict], None]:
    def edit(doc: dict) -> None:
        node: Any = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return edit


def _edited(tmp_path: Path, made: dict[str, Any], kind: str, edit: Callable[[dict], None]) -> Path:
    doc = copy.deepcopy(made[kind].to_dict())
    edit(doc)
    return _save(tmp_path, kind, doc)


@pytest.mark.parametrize(
    ("kind", "edit", "json_path"),
    [
        # A point's ratio is value / opt, and its text says that ratio.
        ("budget_curve", _set(["points", 1, "ratio"], 0.99), "$.points[1].ratio"),
        ("budget_curve", _set(["points", 1, "ratio_text"], "0.990"), "$.points[1].ratio_text"),
        ("budget_curve", _set(["points", 0, "budget"], 777.0), "$.points[0].budget"),
        ("budget_curve", _set(["points", 0, "method"], "writer:mine"), "$.points[0].method"),
        # The pool's optimum is a ratio of the full one, and the drop is 1 - ratio.
        ("ablation_curve", _set(["points", 2, "pool_opt"], 3.0), "$.points[2].ratio"),
        ("ablation_curve", _set(["points", 2, "drop"], 0.1), "$.points[2].drop"),
        ("ablation_curve", _set(["points", 2, "pool_opt"], 9.0), "$.points[2].pool_opt"),
        ("ablation_curve", _set(["n_removed"], 99), "$.n_removed"),
        ("ablation_curve", _set(["certified"], False), "$.certified"),
        (
            "cost_rule_sensitivity",
            _set(["rules", 1, "rows", 0, "value"], 0.5),
            "$.rules[1].rows[0].ratio",
        ),  # fmt: skip
        ("capacity_sensitivity", _set(["points", 1, "opt_k"], 9.0), "$.points[1].gain"),
        ("family_band", _set(["rows", 0, "mean_ratio"], 0.01), "$.rows[0].mean_ratio"),
        ("certification_report", _set(["n_certified"], 1), "$.n_certified"),
        (
            "certification_report",
            _set(["rows", 0, "disagreement"], True),
            "$.rows[0].certified",
        ),  # fmt: skip
        ("package_stats", _set(["total_cost"], 50.0), "$.total_cost"),
        ("package_stats", _set(["candidates"], 17), "$.candidate_costs"),
        ("overview", _set(["budget"], 7.0), "$.budget"),
    ],
)
def test_edited_numbers_are_refused_as_inconsistent(made, tmp_path, kind, edit, json_path):
    path = _edited(tmp_path, made, kind, edit)
    exc = _refused(path)
    assert (exc.path, exc.rule) == (json_path, "inconsistent")
    assert str(exc).startswith(f"{path}: {json_path}: ")


def test_show_prints_saved_curves_and_views(made, tmp_path):
    path = _save(tmp_path, "budget_curve", made["budget_curve"].to_dict())
    rc, out, err = run_cli("show", str(path))
    assert (rc, err) == (0, "")
    assert out.startswith(f"saved budget_curve {path}: package update_chain; budgets (words) 3, 6")
    # update_chain at budget 6: OPT 7.735, density 5.65 = 0.730 of it (the README's figures).
    assert any(
        line.split()[:2] == ["6", "density"] and "7.735" in line and "0.730" in line
        for line in out.splitlines()
    )

    path = _save(tmp_path, "ablation_curve", made["ablation_curve"].to_dict())
    rc, out, err = run_cli("show", str(path))
    assert rc == 0 and "pool no_validity (removed: compound_update, tombstone" in out
    rc, out, err = run_cli("show", str(path), "--json")
    assert rc == 0 and ma.read_result(json.loads(out)) == made["ablation_curve"]

    # Session 41: a saved view is printed (was: refused as "not readable").
    path = _save(tmp_path, "compare_view", made["compare_view"].to_dict())
    rc, out, err = run_cli("show", str(path))
    assert (rc, err) == (0, "")
    assert out.startswith(f"saved compare_view {path}: package update_chain; density (writer)")
    assert "F 5.65 of OPT 7.735, ratio 0.730" in out
