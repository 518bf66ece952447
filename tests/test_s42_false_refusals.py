"""QA s42 round 2: genuine results refused on read-back (or scored past the budget).

1. A certified optimum whose cross-check engine stopped at a node limit (consistent but
   inconclusive, which certification accepts) was refused by ``read_result``.
2. A store at the edge of the budget's tolerance was kept whole by score / sweep (NumPy's
   pairwise sum 40.111467899999994 fits B(1 + 1e-9), the correctly rounded 40.1114679 does
   not); the reference writers and the engines kept such stores too.
3. A sweep whose plugin failed at some budgets listed those budgets without rows, and
   ``show`` refused its own file.
4. ``certification_report``'s default ``time_limit`` 30 was saved as 30 and read back as 30.0.

The packages are QA's reproduction inputs (/tmp/s42/qa2-c: pkg0.json, rep3b_pkg.json,
rep4_pkg.json, plug/flaky_writer.py), copied here and written into tmp_path.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core import curves
from memaudit_core.errors import ResultError
from memaudit_core.writers import run_writer

REPO = Path(__file__).resolve().parents[1]
UPDATE_CHAIN = REPO / "sample_packages" / "update_chain.json"

PKG0 = {
    "memaudit": 1,
    "id": "p0",
    "objective": {"saturation": "cap1"},
    "experiences": [
        {"id": "e0", "time": 0},
        {"id": "e1", "time": 1},
        {"id": "e2", "time": 2},
        {"id": "e3", "time": 3},
        {"id": "e4", "time": 4},
    ],
    "units": [
        {"id": "u0", "kind": "stale", "weight": 0.5},
        {"id": "u1", "kind": "temporal_order", "weight": 1.25},
        {"id": "u2", "kind": "stale", "weight": 3},
        {"id": "u3", "kind": "stale", "weight": 3},
        {"id": "u4", "kind": "invalidation", "weight": 1.25},
    ],
    "candidates": [
        {
            "id": "e0:c0",
            "experience": "e0",
            "type": "compound_update",
            "cost": 2,
            "coverage": {"u1": 0.7, "u0": 0.3},
        },
        {
            "id": "e0:c1",
            "experience": "e0",
            "type": "graph_edge",
            "cost": 6,
            "coverage": {"u2": 1.0},
        },
        {
            "id": "e0:c2",
            "experience": "e0",
            "type": "summary",
            "cost": 1,
            "coverage": {"u3": 0.3, "u0": 0.25},
        },
        {
            "id": "e1:c0",
            "experience": "e1",
            "type": "tombstone",
            "cost": 6,
            "coverage": {"u4": 0.25},
        },
        {
            "id": "e1:c1",
            "experience": "e1",
            "type": "graph_edge",
            "cost": 5,
            "coverage": {"u0": 1.0, "u4": 0.25},
        },
        {"id": "e1:c2", "experience": "e1", "type": "compound_update", "cost": 6, "coverage": {}},
        {
            "id": "e2:c0",
            "experience": "e2",
            "type": "atomic_fact",
            "cost": 3,
            "coverage": {"u2": 1.0},
        },
        {
            "id": "e2:c1",
            "experience": "e2",
            "type": "compound_update",
            "cost": 5,
            "coverage": {"u1": 0.5},
        },
        {"id": "e3:c0", "experience": "e3", "type": "summary", "cost": 1, "coverage": {}},
        {
            "id": "e3:c1",
            "experience": "e3",
            "type": "summary",
            "cost": 5,
            "coverage": {"u0": 0.3, "u2": 1.0, "u3": 0.7},
        },
        {
            "id": "e4:c0",
            "experience": "e4",
            "type": "summary",
            "cost": 2,
            "coverage": {"u3": 0.7, "u0": 0.25},
        },
        {
            "id": "e4:c1",
            "experience": "e4",
            "type": "atomic_fact",
            "cost": 5,
            "coverage": {"u2": 0.5},
        },
        {"id": "e4:c2", "experience": "e4", "type": "compound_update", "cost": 2, "coverage": {}},
    ],
    "stores": [
        {"id": "sel", "select": ["e2:c1", "e0:c1", "e4:c1"]},
        {
            "id": "ext",
            "system": "mem0",
            "memories": [
                {"id": "m0", "cost": 5, "coverage": {"u0": 1.0}, "created_at": "2024-01-01"},
                {
                    "id": "m1",
                    "cost": 5,
                    "coverage": {"u4": 1.0, "u2": 1.0},
                    "created_at": "2024-01-02",
                },
            ],
        },
    ],
}


def _edge_package(saturation: str, costs: list[float]) -> dict:
    """QA's rep3b / rep4 package: four experiences, a fact and a half-price summary each,
    and a store ``all`` holding every fact."""
    k = len(costs)
    return {
        "memaudit": 1,
        "id": "tol",
        "objective": {"saturation": saturation},
        "experiences": [{"id": f"e{i}", "time": i} for i in range(k)],
        "units": [{"id": f"u{i}", "weight": 1.0 + i} for i in range(k)],
        "candidates": [
            {
                "id": f"c{i}",
                "experience": f"e{i}",
                "type": "atomic_fact",
                "cost": costs[i],
                "coverage": {f"u{i}": 1.0},
            }
            for i in range(k)
        ]
        + [
            {
                "id": f"d{i}",
                "experience": f"e{i}",
                "type": "summary",
                "cost": costs[i] * 0.5,
                "coverage": {f"u{i}": 0.4},
            }
            for i in range(k)
        ],
        "stores": [{"id": "all", "select": [f"c{i}" for i in range(k)]}],
    }


#: rep3b: the four facts cost 40.1114679 exactly rounded, 40.111467899999994 summed by NumPy.
REP3B = _edge_package("linear", [18.4710946, 1.3403733, 16.099999999999998, 4.2])
REP3B_BUDGET = 40.11146785988853
#: rep4: gvt's store of the four facts costs 37.418418800000005 exactly rounded.
REP4 = _edge_package("cap1", [6.3, 2.5934188, 15.400000000000002, 13.125])
REP4_BUDGET = 37.41841876258158


def _fits_exactly(doc: dict, ids: tuple[str, ...] | list[str], budget: float) -> bool:
    """Independent of the code under test: the exact (Fraction) sum of the JSON costs against
    the documented limit, the float B + 1e-9 |B|."""
    cost = {c["id"]: Fraction(c["cost"]) for c in doc["candidates"]}
    limit = Fraction(budget + 1e-9 * abs(budget))
    return sum((cost[i] for i in ids), Fraction(0)) <= limit


def _write(tmp_path: Path, name: str, doc: dict) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


# --------------------------------------------------------------------------- defect 1


@pytest.fixture(scope="module")
def limited_check_doc() -> dict:
    """A certified enum optimum beside bnb's cross-check stopped at its node limit."""
    res = ma.solve(ma.compile_package(ma.parse_package(PKG0)), 49, "auto", node_limit=1)
    doc = json.loads(json.dumps(res.to_dict()))
    cert = doc["certificate"]
    assert (doc["certified"], doc["value"]) == (True, 8.0625)
    assert [(c["engine"], c["status"]) for c in cert["checks"]] == [
        ("enum", "optimal"),
        ("bnb", "limit"),
    ]
    assert (cert["checks"][1]["recomputed_value"], cert["checks"][1]["bound"]) == (6.8125, 8.0625)
    return doc


def test_certified_optimum_with_limited_cross_check_reads_back(limited_check_doc) -> None:
    back = ma.read_result(copy.deepcopy(limited_check_doc))
    assert back.certified and back.value == 8.0625
    assert back.to_dict() == limited_check_doc


@pytest.mark.parametrize("name", ["value", "recomputed_value"])
def test_limited_cross_check_above_the_optimum_is_refused(limited_check_doc, name) -> None:
    doc = copy.deepcopy(limited_check_doc)
    doc["certificate"]["checks"][1][name] = 8.5
    with pytest.raises(ResultError) as info:
        ma.read_result(doc)
    assert info.value.path == f"$.certificate.checks[1].{name}"
    assert "a limited cross-check's store is worth at most the proven optimum" in str(info.value)


def test_limited_cross_check_bound_below_the_optimum_is_refused(limited_check_doc) -> None:
    doc = copy.deepcopy(limited_check_doc)
    check = doc["certificate"]["checks"][1]
    check["bound"], check["gap"] = 7.0, (7.0 - 6.8125) / 7.0
    with pytest.raises(ResultError) as info:
        ma.read_result(doc)
    assert info.value.path == "$.certificate.checks[1].bound"
    assert "a limited cross-check's bound is at least the proven optimum" in str(info.value)


def test_certified_result_without_a_proving_check_is_refused(limited_check_doc) -> None:
    doc = copy.deepcopy(limited_check_doc)
    doc["certificate"]["checks"] = []
    with pytest.raises(ResultError) as info:
        ma.read_result(doc)
    assert info.value.path == "$.certificate.checks"
    assert "no engine check proved optimality" in str(info.value)


def test_show_says_the_limited_cross_check_for_what_it_is(limited_check_doc, tmp_path) -> None:
    """It said "certified: enum=8.0625, bnb=6.8125 (... engines agree)"."""
    code, out, err = run_cli("show", _write(tmp_path, "so.json", limited_check_doc))
    assert code == 0, err
    assert "certified: enum=8.0625 (proven optimal" in out
    assert "cross-check by bnb stopped at a limit: its store 6.8125, its bound 8.0625" in out
    assert "engines agree" not in out


# --------------------------------------------------------------------------- defect 2


def test_store_over_the_budget_by_rounding_is_pruned_by_score() -> None:
    """score kept the four facts (F = 10 above the certified OPT 9.4, ratio 1.064)."""
    assert not _fits_exactly(REP3B, ["c0", "c1", "c2", "c3"], REP3B_BUDGET)
    ev = ma.score(ma.parse_package(REP3B), REP3B_BUDGET, store_id="all")
    assert ev.store_cost == 40.1114679
    assert _fits_exactly(REP3B, ev.selected, REP3B_BUDGET)
    assert ev.value <= ev.opt_value == 9.4
    assert ev.notes[0].startswith("The store as written costs 40.1114679 units, more than")
    assert ma.read_result(json.loads(json.dumps(ev.to_dict()))).value == ev.value


def test_store_over_the_budget_by_rounding_is_cut_by_sweep() -> None:
    sw = ma.sweep([ma.parse_package(REP3B)], [REP3B_BUDGET], [], stores=["all"])
    (row,) = sw.rows
    assert (row.store_cut, row.value, row.opt) == (1, 9.0, 9.4)
    assert row.cost <= REP3B_BUDGET
    assert ma.read_result(json.loads(json.dumps(sw.to_dict()))).rows[0].value == 9.0


def _writer_store(writer: str) -> tuple[str, ...]:
    assert not _fits_exactly(REP4, ["c0", "c1", "c2", "c3"], REP4_BUDGET)
    res = run_writer(writer, ma.compile_package(ma.parse_package(REP4)), REP4_BUDGET)
    assert res.cost == float(
        sum(Fraction(c["cost"]) for c in REP4["candidates"] if c["id"] in res.selected)
    )
    return res.selected


@pytest.mark.parametrize("writer", ["gvt", "density", "no_validity_gvt"])
def test_reference_writers_keep_stores_that_fit_exactly(writer) -> None:
    """gvt kept the four facts, 37.418418800000005 exactly rounded, and score refused it."""
    selected = _writer_store(writer)
    assert selected and _fits_exactly(REP4, selected, REP4_BUDGET)


@pytest.mark.parametrize("writer", ["greedy", "fact_only"])
def test_other_reference_writers_keep_stores_that_fit_exactly(writer) -> None:
    """Regression guard: these writers' stores fitted already."""
    selected = _writer_store(writer)
    assert selected and _fits_exactly(REP4, selected, REP4_BUDGET)


def test_engines_return_stores_that_fit_exactly() -> None:
    inst = ma.compile_package(ma.parse_package(REP4))
    for solver in ("enum", "auto"):
        res = ma.solve(inst, REP4_BUDGET, solver)
        assert (res.value, res.selected, res.label) == (9.4, ("d0", "c1", "c2", "c3"), "OPT")
        assert _fits_exactly(REP4, res.selected, REP4_BUDGET)
    sw = ma.sweep([ma.parse_package(REP4)], [REP4_BUDGET], [], stores=["all"])
    assert [(r.value, r.opt, r.store_cut) for r in sw.rows] == [(9.0, 9.4, 1)]


def test_score_cli_with_gvt_at_the_edge(tmp_path) -> None:
    pkg = _write(tmp_path, "rep4_pkg.json", REP4)
    code, out, err = run_cli("score", pkg, "--budget", repr(REP4_BUDGET), "--writer", "gvt")
    assert code == 0, err
    assert "F = 9   OPT = 9.4   ratio = 0.957" in out
    assert "selected: c1, c2, c3" in out


# --------------------------------------------------------------------------- defect 3

FLAKY_WRITER = '''
def picky(view):
    """fails above budget 5; else cheapest first"""
    if view.budget > 5:
        raise RuntimeError("too big a budget")
    kept, spent, seen = [], 0.0, set()
    for c in sorted(view.candidates, key=lambda c: (c.cost, c.id)):
        if c.experience not in seen and spent + c.cost <= view.budget:
            kept.append(c.id); spent += c.cost; seen.add(c.experience)
    return kept
'''


def test_sweep_with_budgets_where_every_method_failed_reads_back(tmp_path, monkeypatch) -> None:
    (tmp_path / "flaky_writer_s42.py").write_text(FLAKY_WRITER)
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["sweep", str(UPDATE_CHAIN), "--budgets", "3,6,13", "--writers", ""]
    code, out, err = run_cli(*argv, "--writer-module", "flaky_writer_s42:picky", "--json")
    assert code == 2  # the writer failed, the sweep went on
    doc = json.loads(out)
    assert doc["budgets"] == [3.0, 6.0, 13.0]
    assert [r["budget"] for r in doc["rows"]] == [3.0]
    assert [e["budget"] for e in doc["errors"]] == [6.0, 13.0]
    code, shown, err = run_cli("show", _write(tmp_path, "sw.json", doc))
    assert code == 0, err
    assert "2 writer run(s) failed; their rows are missing:" in shown
    for b in (6, 13):
        assert (
            f"update_chain: writer 'flaky_writer_s42:picky' (file {tmp_path}/flaky_writer_s42.py)"
            f" at budget {b}: raised RuntimeError: too big a budget" in shown
        )
    assert ma.read_result(doc).budgets == (3.0, 6.0, 13.0)
    # Regression guard: a row at a budget the sweep does not list is still refused.
    doc["budgets"] = [6.0, 13.0]
    with pytest.raises(ResultError) as info:
        ma.read_result(doc)
    assert info.value.path == "$.rows[0].budget"


# --------------------------------------------------------------------------- defect 4


def test_certification_report_time_limit_saved_as_it_reads_back() -> None:
    pkg = ma.load_package(UPDATE_CHAIN)
    rep = curves.certification_report(pkg, [3, 6], total_time_limit=20)
    text = json.dumps(rep.to_dict())
    assert '"time_limit": 30.0' in text and '"total_time_limit": 20.0' in text
    assert json.dumps(ma.read_result(json.loads(text)).to_dict()) == text
