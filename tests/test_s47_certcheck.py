"""QA s47 (certcheck): saved results whose summaries contradict their own evidence were read
back and shown as they were.

1. A certified solve (``memaudit solve update_chain.json --budget 6 --json``) with both engine
   checks edited to a bound 20% above F and ``gap`` 0.2 (a gap that fits them, status still
   "optimal") was shown as "OPT ... proven optimal: zero gap". So were ``max_rel_diff`` 0.5
   beside two equal engine values, ``solver`` "milp" where only enum and bnb ran ("solver
   milp ... proof: exhaustive enumeration") and an empty ``proof``.
2. An audit saved as PASS with ``max_abs_diff`` 2.0 (or ``max_rel_diff`` 0.5) beside rows that
   all agree exactly was shown as "PASS ... max difference 2".

Each edit is refused naming the JSON path and the rule ``inconsistent`` (``show`` exit 2,
``read_result`` raising); the genuine files, of every engine, still read back.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core.errors import ResultError

REPO = Path(__file__).resolve().parents[1]
UPDATE_CHAIN = REPO / "sample_packages" / "update_chain.json"
OLD_RESULTS = REPO / "tests" / "fixtures" / "s46_oldcv"


def _json_of(*argv: str) -> dict:
    rc, out, err = run_cli(*argv, "--json")
    assert rc == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def solve_doc() -> dict:
    doc = _json_of("solve", str(UPDATE_CHAIN), "--budget", "6")
    # QA's file: enum proved 7.735, bnb agreed on it; both bounds at the value.
    cert = doc["certificate"]
    assert doc["certified"] is True and doc["solver"] == "enum"
    assert [(c["engine"], c["status"]) for c in cert["checks"]] == [
        ("enum", "optimal"),
        ("bnb", "optimal"),
    ]
    assert cert["agreement"] is True
    assert cert["proof"] == "exhaustive enumeration; cross-checked by bnb"
    for check in cert["checks"]:
        assert check["value"] == pytest.approx(7.735, abs=1e-12)
        assert (check["bound"], check["gap"]) == (check["value"], 0.0)
    return doc


@pytest.fixture(scope="module")
def audit_doc() -> dict:
    doc = _json_of("audit", "--family", "memaudit-small:0-9", "--budgets", "2,4,8")
    assert doc["ok"] is True and doc["n_agree"] == 30
    # Every check agrees exactly: the rows' largest differences are 0.
    proven = [r for r in doc["rows"] if r["outcome"] in ("agree", "disagree")]
    assert len(proven) == 30
    assert max(r["abs_diff"] for r in proven) == 0.0
    assert max(r["rel_diff"] for r in proven) == 0.0
    return doc


def _edited(doc: dict, **changes) -> dict:
    """``doc`` with ``changes`` applied, each key a path with ``__`` between its steps
    (``certificate__checks__0__gap``)."""
    doc = copy.deepcopy(doc)
    for dotted, value in changes.items():
        *head, last = [int(k) if k.isdigit() else k for k in dotted.split("__")]
        here = doc
        for key in head:
            here = here[key]
        here[last] = value
    return doc


def _refused(tmp_path: Path, doc: dict, at: str) -> str:
    """``read_result`` refuses ``doc`` at ``at`` with rule inconsistent, and ``memaudit show``
    of it exits 2 naming the file, the path and the rule. Returns show's stderr."""
    with pytest.raises(ResultError) as info:
        ma.read_result(doc)
    assert (info.value.path, info.value.rule) == (at, "inconsistent"), str(info.value)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    rc, out, err = run_cli("show", str(path))
    assert rc == 2, out
    assert "s.json" in err and f"{at}:" in err and "[rule: inconsistent]" in err, err
    assert "Traceback" not in err and out == ""
    return err


def _reads(tmp_path: Path, doc: dict) -> str:
    saved = ma.read_result(doc).to_dict()
    # The CLI adds its own keys (json_output_version, cost_unit, ...) beside the model's.
    assert saved == {key: doc[key] for key in saved}
    path = tmp_path / "g.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    rc, out, err = run_cli("show", str(path))
    assert rc == 0, err
    return out


def test_genuine_solve_reads_back(tmp_path: Path, solve_doc: dict) -> None:
    out = _reads(tmp_path, solve_doc)
    assert "OPT" in out and "solver enum" in out


@pytest.mark.parametrize("k", [0, 1])
def test_certified_check_with_an_open_gap_is_refused(
    tmp_path: Path, solve_doc: dict, k: int
) -> None:
    value = solve_doc["certificate"]["checks"][0]["value"]
    bound = value * 1.2
    # QA's edit: a bound and a gap that fit each other, status still "optimal".
    assert (bound - value) / value == pytest.approx(0.2)
    changes = {f"certificate__checks__{i}__bound": bound for i in range(k, 2)}
    changes.update({f"certificate__checks__{i}__gap": 0.2 for i in range(k, 2)})
    err = _refused(tmp_path, _edited(solve_doc, **changes), f"$.certificate.checks[{k}].gap")
    assert "0.2" in err


def test_certified_check_with_its_bound_below_its_value_is_refused(
    tmp_path: Path, solve_doc: dict
) -> None:
    value = solve_doc["certificate"]["checks"][1]["value"]
    doc = _edited(solve_doc, certificate__checks__1__bound=value * 0.8)
    _refused(tmp_path, doc, "$.certificate.checks[1].bound")


def test_max_rel_diff_beside_equal_values_is_refused(tmp_path: Path, solve_doc: dict) -> None:
    checks = solve_doc["certificate"]["checks"]
    values = [c[k] for c in checks for k in ("value", "recomputed_value")]
    # The largest relative difference of these values, whatever the value unit, is tiny.
    most = (max(values) - min(values)) / max(values)
    assert most < 1e-15
    doc = _edited(solve_doc, certificate__max_rel_diff=0.5)
    _refused(tmp_path, doc, "$.certificate.max_rel_diff")


def test_solver_that_did_not_run_is_refused(tmp_path: Path, solve_doc: dict) -> None:
    doc = _edited(solve_doc, solver="milp")
    assert "milp" not in [c["engine"] for c in doc["certificate"]["checks"]]
    err = _refused(tmp_path, doc, "$.solver")
    assert "'enum'" in err


@pytest.mark.parametrize(
    "proof",
    [
        "",
        "HiGHS MILP (model status optimal, its own gap 0); cross-checked by bnb",
        "exhaustive enumeration; cross-checked by milp",
        "exhaustive enumeration",
    ],
)
def test_proof_not_the_certificates_is_refused(tmp_path: Path, solve_doc: dict, proof: str) -> None:
    _refused(tmp_path, _edited(solve_doc, certificate__proof=proof), "$.certificate.proof")


def test_old_saved_results_still_read_back() -> None:
    files = sorted(OLD_RESULTS.glob("*.json"))
    assert len(files) == 3
    for f in files:
        assert ma.read_result(f).evaluation.opt.certified


@pytest.mark.parametrize(
    ("solver", "cross_check", "engines"),
    [
        ("auto", None, ["enum", "bnb"]),
        ("bnb", True, ["bnb", "enum"]),
        ("milp", True, ["milp", "enum"]),
        ("milp", False, ["milp"]),
        ("enum", True, ["enum", "bnb"]),
        ("brute", None, ["brute", "enum"]),
    ],
)
def test_genuine_solves_of_every_engine_read_back(
    solver: str, cross_check: bool | None, engines: list[str]
) -> None:
    inst = ma.compile_package(ma.load_package(str(UPDATE_CHAIN)))
    for budget in (3, 6, 13):
        res = ma.solve(inst, budget, solver, cross_check=cross_check)
        assert [c.engine for c in res.certificate.checks] == engines
        doc = json.loads(json.dumps(res.to_dict()))
        assert ma.read_result(doc) == res


def test_genuine_limited_cross_check_and_monotone_results_read_back() -> None:
    inst = ma.compile_package(ma.load_package(str(UPDATE_CHAIN)))
    # A bnb cross-check stopped at its node limit: certified on enum's proof alone.
    res = ma.solve(inst, 6, "auto", node_limit=0)
    assert res.certified and res.certificate.checks[1].status == "limit"
    assert ma.read_result(json.loads(json.dumps(res.to_dict()))) == res
    # A budget sweep answers with the frontier (or monotonicity) proofs.
    for solver in ("auto", "bnb"):
        for res in ma.solve_budgets(inst, [1, 3, 6, 13, 100, 1000], solver, cross_check=True):
            assert ma.read_result(json.loads(json.dumps(res.to_dict()))) == res


def test_genuine_audit_reads_back(tmp_path: Path, audit_doc: dict) -> None:
    out = _reads(tmp_path, audit_doc)
    assert out.startswith("PASS") and "max difference 0 (relative 0)" in out


@pytest.mark.parametrize(("name", "value"), [("max_abs_diff", 2.0), ("max_rel_diff", 0.5)])
def test_audit_maxima_not_the_rows_are_refused(
    tmp_path: Path, audit_doc: dict, name: str, value: float
) -> None:
    _refused(tmp_path, _edited(audit_doc, **{name: value}), f"$.{name}")


def test_audit_maxima_null_beside_proven_rows_is_refused(tmp_path: Path, audit_doc: dict) -> None:
    _refused(tmp_path, _edited(audit_doc, max_abs_diff=None), "$.max_abs_diff")
