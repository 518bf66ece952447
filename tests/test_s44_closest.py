"""QA s44: an empty store (a writer's store pruned to nothing by the budget) was shown beside
whichever optimum the solver returned, so its missed units and per-kind losses changed with
``--solver`` (memaudit-small-s0 at budget 3: enum, bnb and auto showed two tombstones, HiGHS
one compound update). The tie rule of :mod:`memaudit_core.closest` applies to it as to any
store: against an empty store, fewest differences means fewest memories, then lowest cost,
then smallest sorted ids.

The oracle is independent of the code under test: it lists every store of one memory or none
per experience that fits the budget one by one and computes F = w . min(1, z) (every package
here is cap1 with one memory per experience) and the tie rule itself.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from cli_utils import run_cli

from memaudit_core.closest import closest_equivalent
from memaudit_core.compiled import compile_package
from memaudit_core.explain import compare_view
from memaudit_core.package import load_package, parse_package
from memaudit_core.solvers import solve

SAMPLES = Path(__file__).resolve().parents[1] / "sample_packages"
SOLVERS = ("enum", "bnb", "milp", "auto")
# (package, budget): few enough stores fit that every one is compared, several optima, and
# (for some) the solvers return different ones.
CASES = [
    ("memaudit-small-s0.json", 3),
    ("memaudit-small-s0.json", 5),
    ("update_chain.json", 1),
    ("update_chain.json", 10),
    ("temporal_interval.json", 7),
    ("veg-to-pescatarian.json", 12),
    ("travel-assistant.json", 5),
]


class Oracle:
    """Every store that fits ``budget`` (cost within B (1 + 1e-9)), its F, and the tie rule."""

    def __init__(self, inst, budget: float) -> None:
        assert inst.saturation == "cap1" and inst.group_capacity == 1  # what F below computes
        self.inst, self.ids = inst, list(inst.candidate_ids)
        self.cost = [float(c) for c in inst.cost]
        self.cov = inst.coverage.toarray()
        self.weight = np.asarray(inst.weight, dtype=float)
        limit = budget + 1e-9 * abs(budget)
        members: dict[int, list[int]] = {}
        for c in range(len(self.ids)):
            members.setdefault(int(inst.group_idx[c]), []).append(c)
        groups = list(members.values())
        self.stores: list[tuple[int, ...]] = []

        def walk(g: int, chosen: list[int]) -> None:
            if g == len(groups):
                self.stores.append(tuple(sorted(chosen)))
                return
            walk(g + 1, chosen)
            for c in groups[g]:
                if math.fsum(self.cost[x] for x in [*chosen, c]) <= limit:
                    walk(g + 1, [*chosen, c])

        walk(0, [])
        values = [self.unit_values(s).sum() for s in self.stores]
        self.opt = max(values)
        self.optima = [
            s for s, v in zip(self.stores, values, strict=True) if abs(v - self.opt) <= 1e-9
        ]

    def unit_values(self, store) -> np.ndarray:
        z = self.cov[list(store)].sum(axis=0) if store else np.zeros(self.cov.shape[1])
        return np.minimum(1.0, z) * self.weight

    def closest(self, reference: set[int]) -> tuple[int, ...]:
        ref_groups = {int(self.inst.group_idx[c]) for c in reference}

        def rule(s: tuple[int, ...]) -> tuple:
            touched = {int(self.inst.group_idx[c]) for c in s} & ref_groups
            spent = float(f"{math.fsum(self.cost[c] for c in s):.12g}")
            return (len(set(s) ^ reference), -len(touched), spent, sorted(self.ids[c] for c in s))

        return min(self.optima, key=rule)


@pytest.mark.parametrize(("name", "budget"), CASES)
def test_an_empty_store_gets_the_rules_optimum_from_every_solver(name, budget):
    inst = compile_package(load_package(SAMPLES / name))
    oracle = Oracle(inst, budget)
    pick = oracle.closest(set())
    assert len(oracle.optima) >= 2
    assert len(pick) == min(len(s) for s in oracle.optima)
    starts = [solve(inst, budget, s).selected_idx for s in SOLVERS] + oracle.optima
    for start in starts:
        near = closest_equivalent(inst, start, [], budget)
        assert near.selected_idx == pick, (name, budget, inst.ids(start))
        assert near.ties == "all"
        assert (near.differences_before, near.differences_after) == (len(start), len(pick))


def test_the_solvers_did_return_different_optima():
    # Else the test above would hold without the tie rule.
    inst = compile_package(load_package(SAMPLES / "memaudit-small-s0.json"))
    got = {tuple(solve(inst, 3, s).selected_idx) for s in SOLVERS}
    assert len(got) >= 2


def test_qa_repro_cli_and_compare_show_one_optimum_and_one_set_of_losses():
    path = SAMPLES / "memaudit-small-s0.json"
    inst = compile_package(load_package(path))
    oracle = Oracle(inst, 3)
    pick = oracle.closest(set())
    assert inst.ids(pick) == ("s0_pref_0_update_compound_update",)
    values = oracle.unit_values(pick)
    kinds = np.asarray(inst.unit_kinds)
    noted: list[str] = []
    for solver in SOLVERS:
        argv = [str(path), "--budget", "3", "--writer", "recency_raw", "--solver", solver]
        rc, out, err = run_cli("score", *argv, "--json")
        assert rc == 0, err
        got = json.loads(out)
        assert got["selected"] == [], solver  # pruned to nothing
        assert got["opt_selected"] == ["s0_pref_0_update_compound_update"], solver
        for row in got["kind_rows"]:
            assert math.isclose(row["lost"], values[kinds == row["kind"]].sum(), abs_tol=1e-9)
        lost = {r["unit_id"] for r in got["unit_rows"] if r["lost"] > 0}
        assert lost == {inst.unit_ids[u] for u in np.flatnonzero(values > 0)}, solver
        note = [n for n in got["notes"] if n.startswith("This store is empty")]
        # The note says why the optimum shown is not the solver's; since QA s49 (the MILP's
        # objective scaled) HiGHS returns the 1-memory optimum itself, and nothing needs saying.
        if tuple(solve(inst, 3, solver).selected_idx) != tuple(pick):
            noted.append(solver)
            assert len(note) == 1 and "Every store with the optimum's F" in note[0], got["notes"]
        else:
            assert note == [], (solver, got["notes"])
        cv = compare_view(load_package(path), 3, writer="recency_raw", solver=solver)
        by_compare = {r.unit_id: (r.lost, r.opt_covered_by) for r in cv.unit_rows if r.lost}
        assert by_compare == {
            inst.unit_ids[u]: (values[u], ("s0_pref_0_update_compound_update",))
            for u in np.flatnonzero(values > 0)
        }, solver
    assert noted, "no solver returned another optimum: the note went untested"


def test_an_empty_optimum_is_moved_to_a_store_as_good():
    # Nothing of value fits B = 2, so OPT = 0 and the store {x} (worth 0) is itself optimal:
    # it is the closest optimum and loses nothing, whichever optimum the solver returned.
    doc = {
        "memaudit": 1,
        "id": "nothing-of-value-fits",
        "experiences": [{"id": "e0", "time": 0}, {"id": "e1", "time": 1}],
        "units": [
            {"id": "u", "kind": "fact", "weight": 1.0},
            {"id": "v", "kind": "fact", "weight": 0.0},
        ],
        "candidates": [
            {"id": "a", "experience": "e0", "type": "atomic_fact", "cost": 5, "coverage": {"u": 1}},
            {"id": "x", "experience": "e1", "type": "atomic_fact", "cost": 1, "coverage": {"v": 1}},
        ],
    }
    inst = compile_package(parse_package(doc))
    oracle = Oracle(inst, 2)
    ref = set(inst.indices(["x"]))
    assert oracle.opt == 0 and () in oracle.optima
    assert oracle.closest(ref) == tuple(sorted(ref))
    for start in [solve(inst, 2, s).selected_idx for s in SOLVERS] + oracle.optima:
        near = closest_equivalent(inst, start, sorted(ref), 2)
        assert near.selected_idx == tuple(sorted(ref)), inst.ids(start)


def test_one_memory_of_difference_is_singular(tmp_path):
    # Two equal optima at B = 2: e1:ab alone, or e2:a with e3:b. The store {e2:a} is one memory
    # away from the second and two from the first: "1 memories" read in the note (QA s44).
    from test_s43_closest import t3_package

    package = t3_package(0)
    package["stores"] = [{"id": "one", "select": ["e2:a"]}]
    path = tmp_path / "one.json"
    path.write_text(json.dumps(package))
    rc, out, err = run_cli(
        "score", str(path), "--budget", "2", "--store", "one", "--solver", "enum", "--json"
    )
    assert rc == 0, err
    got = json.loads(out)
    assert sorted(got["opt_selected"]) == ["e2:a", "e3:b"]
    text = " ".join(got["notes"])
    assert "differ in 1 memory" in text
    assert "1 memories" not in text
