"""QA s50 (certification #1-#3): ``memaudit show`` / ``read_result`` read back saved audits
and certificate records that no run can produce, as PASS or "6 of 6 budgets certified".

Each test builds a genuine file with the library (memaudit-small seeds 0-1, two budgets),
applies one edit the QA report made, and expects a refusal naming the JSON path and the rule;
the genuine files (complete, INCOMPLETE, time-limited, log1p, seed range, certificates) still
read back.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from typing import Any

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core import audit as au
from memaudit_core import curves
from memaudit_core.errors import ResultError
from memaudit_core.generators import generate

BUDGETS = [2.0, 4.0]


@pytest.fixture(scope="module")
def complete() -> dict[str, Any]:
    """A complete seed-range audit (as ``memaudit audit --family`` and the Certification
    page's seed range run it): 2 seeds x 2 pools x 2 budgets, bnb, milp and enum on each."""
    rep = au.audit(families=["memaudit-small:0-1"], budgets=BUDGETS, pools=["full", "generic"])
    data = rep.to_dict()
    assert data["complete"] and len(data["rows"]) == data["n_tasks"] == 8
    assert all(r["outcome"] == "agree" for r in data["rows"])
    return data


@pytest.fixture(scope="module")
def incomplete() -> dict[str, Any]:
    rep = au.audit(
        families=["memaudit-small:0-1"], budgets=BUDGETS, pools=["full", "generic"], max_tasks=3
    )
    data = rep.to_dict()
    assert not data["complete"] and len(data["rows"]) == 3 and data["n_tasks"] == 8
    return data


@pytest.fixture(scope="module")
def log1p() -> dict[str, Any]:
    pkg = dataclasses.replace(generate("memaudit-small", seed=3), saturation="log1p")
    data = au.audit_summary_for_package(pkg, BUDGETS, ["full", "generic"]).to_dict()
    assert all(r["milp_status"] == "skipped" for r in data["rows"])
    return data


@pytest.fixture(scope="module")
def certificate() -> dict[str, Any]:
    data = curves.certification_report(generate("memaudit-small", seed=3), BUDGETS).to_dict()
    assert data["saturation"] == "cap1" and data["n_certified"] == len(BUDGETS)
    return data


def refused(data: dict[str, Any], path: str, rule: str) -> ResultError:
    with pytest.raises(ResultError) as info:
        ma.read_result(data)
    assert (info.value.path, info.value.rule) == (path, rule), str(info.value)
    return info.value


def test_genuine_audits_and_certificates_read_back(complete, incomplete, log1p, certificate):
    for data in (complete, incomplete, log1p, certificate):
        assert ma.read_result(copy.deepcopy(data)).to_dict() == data
    # Written to JSON and read again, as `memaudit show` reads a saved file.
    assert ma.read_result(json.loads(json.dumps(complete))).verdict == "PASS"
    assert ma.read_result(incomplete).verdict == "INCOMPLETE"
    pkg = dataclasses.replace(generate("memaudit-small", seed=3), saturation="log1p")
    cert = curves.certification_report(pkg, BUDGETS).to_dict()
    assert ma.read_result(cert).n_certified == len(BUDGETS)
    # A seed-invariant family is one instance: its checks are not repeated.
    assert ma.read_result(au.audit(families=["update_chain:0-2"], budgets=[3, 6]).to_dict())


def test_time_limited_audit_with_unproven_rows_reads_back():
    pkg = generate("random_coverage", seed=1, n_groups=120, candidates_per_group=5)
    data = au.audit_summary_for_package(pkg, [33.8145], time_limit=0.05).to_dict()
    (row,) = data["rows"]
    assert row["outcome"] == "unproven" and row["bnb_status"] == "limit"
    assert ma.read_result(data).verdict == "NOTHING CHECKED"


# ---------------------------------------------------------------- #1 complete and n_tasks


def test_an_incomplete_audit_edited_to_complete_is_refused(incomplete):
    data = copy.deepcopy(incomplete)
    data["complete"] = data["ok"] = True
    err = refused(data, "$.complete", "inconsistent")
    assert "3 of n_tasks 8" in str(err)


def test_n_tasks_that_is_not_the_complete_audits_row_count_is_refused(complete):
    data = copy.deepcopy(complete)
    data["n_tasks"] = 400
    refused(data, "$.complete", "inconsistent")
    data["n_tasks"] = 5  # fewer checks than the rows hold
    refused(data, "$.n_tasks", "inconsistent")


def test_a_repeated_check_is_refused(complete):
    data = copy.deepcopy(complete)
    data["rows"][1] = copy.deepcopy(data["rows"][0])
    refused(data, "$.rows[1]", "inconsistent")


# ------------------------------------------------------------ #2 reported value off its F


def test_an_agreeing_row_whose_engine_reported_a_value_its_store_lacks_is_refused(complete):
    data = copy.deepcopy(complete)
    row = data["rows"][5]
    assert row["milp_status"] == "optimal" and row["milp_reported"] == row["milp_value"]
    row["milp_reported"] = row["milp_value"] + 1
    err = refused(data, "$.rows[5].outcome", "inconsistent")
    assert "milp reported" in str(err)


def test_the_read_back_uses_the_audits_own_rule_for_limited_runs():
    # A run stopped by a limit may report less than its store is worth, never more.
    pkg = generate("random_coverage", seed=1, n_groups=120, candidates_per_group=5)
    data = au.audit_summary_for_package(pkg, [33.8145], time_limit=0.05).to_dict()
    row = data["rows"][0]
    row["bnb_reported"] = row["bnb_value"] - 1.0
    assert ma.read_result(copy.deepcopy(data)).verdict == "NOTHING CHECKED"
    row["bnb_reported"] = row["bnb_value"] + 1.0
    refused(data, "$.rows[0].outcome", "inconsistent")


# ---------------------------------------------------------------- #3 impossible values


@pytest.mark.parametrize(
    ("edit", "path", "rule"),
    [
        ({"budget": math.nan}, "$.rows[5].budget", "allowed-value"),
        ({"budget": -4.0}, "$.rows[5].budget", "allowed-value"),
        ({"budget": 3.0}, "$.rows[5].budget", "inconsistent"),  # not in budgets [2, 4]
        ({"pool": "bogus"}, "$.rows[5].pool", "allowed-value"),
        ({"pool": "no_validity"}, "$.rows[5].pool", "allowed-value"),  # not an audited pool
        (
            {
                f"{eng}_{name}": -1.0
                for eng in ("bnb", "milp", "enum")
                for name in ("value", "bound", "reported")
            },
            "$.rows[5].bnb_value",
            "allowed-value",
        ),
        ({"bnb_time_s": -3.0}, "$.rows[5].bnb_time_s", "allowed-value"),
        ({"milp_reported": math.inf}, "$.rows[5].milp_reported", "allowed-value"),
        ({"enum_status": "not run"}, "$.rows[5].enum_value", "inconsistent"),
    ],
)
def test_impossible_row_values_are_refused(complete, edit, path, rule):
    data = copy.deepcopy(complete)
    data["rows"][5].update(edit)
    refused(data, path, rule)


def test_an_unknown_pool_in_the_report_is_refused(complete):
    data = copy.deepcopy(complete)
    data["pools"][1] = "bogus"
    refused(data, "$.pools[1]", "allowed-value")


def test_a_milp_proof_in_a_log1p_audit_is_refused(log1p):
    data = copy.deepcopy(log1p)
    row = data["rows"][1]
    bnb = row["bnb_value"]
    row.update(
        milp_status="optimal",
        milp_value=bnb,
        milp_bound=bnb,
        milp_gap=0.0,
        milp_reported=bnb,
        milp_time_s=0.01,
        milp_nodes=1,
    )
    err = refused(data, "$.rows[1].milp_status", "inconsistent")
    assert "'log1p'" in str(err)
    # With the row's own skip note deleted, its siblings (the same instance) still say it.
    row["problems"], row["problem_list"] = "", []
    refused(data, "$.rows[1].milp_status", "inconsistent")


def test_the_cli_refuses_an_edited_audit_file(complete, tmp_path):
    data = copy.deepcopy(complete)
    data["rows"][5]["budget"] = math.nan
    path = tmp_path / "audit.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    rc, out, err = run_cli("show", str(path))
    assert rc != 0 and "PASS" not in out
    assert "$.rows[5].budget" in err and "allowed-value" in err


@pytest.mark.parametrize("budget", [-1.0, math.nan])
def test_a_certificate_row_at_an_impossible_budget_is_refused(certificate, budget):
    data = copy.deepcopy(certificate)
    data["rows"][1]["budget"] = budget
    refused(data, "$.rows[1].budget", "allowed-value")


def test_a_certificate_whose_saturation_the_milp_cannot_take_is_refused(certificate):
    data = copy.deepcopy(certificate)
    data["saturation"] = "log1p"
    milp = [r["engine"] for r in data["rows"][0]["runs"]].index("milp")
    refused(data, f"$.rows[0].runs[{milp}].applicable", "inconsistent")
