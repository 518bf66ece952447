"""Writers on packages whose gain / cost overflows to inf (QA s50, exact finding 2).

A candidate covering weight 1e9 at cost 1e-300 has density inf. The tie floor of the greedy
rows was inf - inf = NaN, which cleared every candidate, and the argmin over the empty mask
re-added position 0 until the budget ran out: greedy, fact_only and summary_only returned one
candidate eleven times ("returned an infeasible store") and sweeps dropped their rows. The
expected stores below are worked out by hand from the greedy rule (highest gain / cost, then
gain, then lower cost, each with 1e-12 relative ties, then the smaller id), and feasibility is
checked here from the package document, not by memaudit.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest
from cli_utils import run_cli

from memaudit_core import writers as W
from memaudit_core.compiled import compile_package
from memaudit_core.package import parse_package

BUDGET = 10.0


def package_doc(cands: list[tuple[str, str, float, str, float]], kind: str) -> dict:
    """cands: (id, experience, cost, unit, unit weight); each covers its own unit fully."""
    exps = sorted({c[1] for c in cands})
    return {
        "memaudit": 1,
        "id": "overflow",
        "title": "t",
        "cost_unit": "words",
        "objective": {"saturation": "cap1"},
        "budget": BUDGET,
        "experiences": [{"id": e, "time": k, "text": "x"} for k, e in enumerate(exps)],
        "units": [
            {"id": unit, "kind": "fact", "text": "u", "weight": w} for _, _, _, unit, w in cands
        ],
        "queries": [],
        "candidates": [
            {
                "id": cid,
                "experience": exp,
                "type": kind,
                "text": "a",
                "cost": cost,
                "coverage": {unit: 1.0},
            }
            for cid, exp, cost, unit, _ in cands
        ],
    }


# The report's p5: b's density 1e9 / 1e-300 is inf, a's is 1. Greedy takes b, then a.
P5 = [("a", "e0", 1.0, "u1", 1.0), ("b", "e1", 1e-300, "u0", 1e9)]
# Two infinite densities in one experience (1e9 / 1e-300 and 20 / 1e-307 overflow): the
# larger gain, b, ranks first, although a is first in the experience (the cheaper). Weights
# stay at most 2^30, so writers see them unscaled (compiled.SCALE_BAND) and the densities do
# overflow.
BY_GAIN = [
    ("a", "e0", 1e-307, "u0", 20.0),
    ("b", "e0", 1e-300, "u1", 1e9),
    ("c", "e1", 1.0, "u2", 1.0),
]
# Infinite densities whose gains and costs tie (1e-13 relative): the smaller id, a, wins, as
# it does at finite densities, although b is first in the experience (the cheaper).
BY_ID = [
    ("b", "e0", 1e-300, "u1", 1000000000.0001),
    ("a", "e0", 1.0000000000001e-300, "u0", 1e9),
    ("c", "e1", 1.0, "u2", 1.0),
]
CASES = [(P5, {"a", "b"}), (BY_GAIN, {"b", "c"}), (BY_ID, {"a", "c"})]
AFFECTED = [("greedy", "atomic_fact"), ("fact_only", "atomic_fact"), ("summary_only", "summary")]


def assert_feasible(doc: dict, selected: list[str] | tuple[str, ...], budget: float) -> None:
    """One candidate per experience, no repeats, and the costs fit the budget (README: the
    fsum of the costs is at most B + 1e-9 B)."""
    by_id = {c["id"]: c for c in doc["candidates"]}
    assert len(selected) == len(set(selected)), selected
    exps = [by_id[cid]["experience"] for cid in selected]
    assert len(exps) == len(set(exps)), selected
    assert math.fsum(by_id[cid]["cost"] for cid in selected) <= budget + 1e-9 * budget


def brute_opt(doc: dict, budget: float) -> float:
    """Best F over every feasible store (each candidate covers its own unit, so F adds)."""
    weight = {u["id"]: u["weight"] for u in doc["units"]}
    cands = doc["candidates"]
    best = 0.0
    for picks in itertools.product([False, True], repeat=len(cands)):
        store = [c["id"] for c, p in zip(cands, picks, strict=True) if p]
        try:
            assert_feasible(doc, store, budget)
        except AssertionError:
            continue
        value = math.fsum(weight[u] for c in cands if c["id"] in store for u in c["coverage"])
        best = max(best, value)
    return best


@pytest.mark.parametrize("writer,kind", AFFECTED)
@pytest.mark.parametrize("cands,expected", CASES)
def test_library_writer_takes_infinite_densities_first(cands, expected, writer, kind):
    doc = package_doc(cands, kind)
    pkg = parse_package(doc)
    res = W.run_writer(writer, compile_package(pkg), BUDGET, package=pkg)
    assert_feasible(doc, res.selected, BUDGET)
    assert set(res.selected) == expected


@pytest.mark.parametrize("cands,expected", CASES)
def test_heap_and_vectorised_rows_agree(cands, expected):
    """The priority-queue path had the same NaN floor: it saw one infinite key only."""
    inst = compile_package(parse_package(package_doc(cands, "atomic_fact")))
    for heap in (True, False):
        (row,) = W._greedy_rows(inst, [BUDGET], [None], heap=heap)
        assert set(inst.ids(row)) == expected, heap


@pytest.mark.parametrize("writer,kind", AFFECTED)
def test_cli_score_and_sweep(tmp_path: Path, writer, kind):
    doc = package_doc(P5, kind)
    path = tmp_path / "p5.json"
    path.write_text(json.dumps(doc))
    rc, out, err = run_cli("score", str(path), "--writer", writer, "--budget", "10", "--json")
    assert rc == 0, err
    assert "infeasible" not in err
    selected = json.loads(out)["selected"]
    assert_feasible(doc, selected, BUDGET)
    assert set(selected) == {"a", "b"}

    rc, out, err = run_cli("sweep", str(path), "--writers", writer, "--budgets", "10", "--json")
    assert rc == 0, err
    result = json.loads(out)
    assert result["errors"] == []
    (row,) = [r for r in result["rows"] if r["method"] == writer]
    assert row["value"] == pytest.approx(1e9 + 1.0, rel=1e-12)


def builtin_writer_names() -> list[str]:
    names = [n for n, info in W.all_writers().items() if info.source == "bundled example"]
    return [*W.BUILTIN_WRITERS, *names]


def test_builtin_writers_listed():
    assert set(builtin_writer_names()) >= {
        "gvt",
        "density",
        "greedy",
        "fact_only",
        "summary_only",
        "recency_raw",
        "no_validity_gvt",
        "recency",
        "compact_validity",
        "estimated_gvt",
    }


@pytest.mark.parametrize("kind", ["atomic_fact", "summary", "raw_span"])
@pytest.mark.parametrize("cands", [c for c, _ in CASES])
def test_every_builtin_writer_stays_feasible(cands, kind):
    doc = package_doc(cands, kind)
    pkg = parse_package(doc)
    inst = compile_package(pkg)
    for name in builtin_writer_names():
        # Blind writers start a worker per call, so they get the two budgets that matter.
        blind = W.get_writer(name).kind == "blind"
        for budget in (1e-300, BUDGET) if blind else (0.0, 1e-300, 1.0, BUDGET):
            res = W.run_writer(name, inst, budget, package=pkg)
            assert_feasible(doc, res.selected, budget)
            assert res.value <= brute_opt(doc, budget) * (1 + 1e-12), name
