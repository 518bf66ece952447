"""QA s40, notebook use of the library: error messages pasted whole objects in (up to 1.2 MB,
defect 1) and result objects printed their every row (a 958 KB Overview repr, defect 2)."""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Callable
from pathlib import Path

import pytest

import memaudit_core as ma
from memaudit_core import reports, suites
from memaudit_core.errors import MemAuditError
from memaudit_core.package import parse_package
from memaudit_core.writers import WriterInfo, register_writer

ROOT = Path(__file__).resolve().parents[1]
BIG = ROOT / "sample_packages" / "event-graph-500.json"

#: A message says what was wrong in a line or two, not the object.
MESSAGE_MAX = 500
#: A repr is one line, whatever the package's size (shortrepr.SHORT_REPR_MAX).
REPR_MAX = 400


class Huge:
    """A value whose repr is 100,000 characters whatever the library's own reprs are: the
    messages must cut it (the type name stays readable at the start)."""

    def __repr__(self) -> str:
        return "Huge(" + "x" * 100_000 + ")"


@pytest.fixture(scope="module")
def big() -> tuple[ma.Package, float, ma.CompiledInstance]:
    pkg = ma.load_package(str(BIG))
    return pkg, pkg.default_budget(), ma.compile_package(pkg)


def _message(call: Callable[[], object]) -> str:
    with pytest.raises(MemAuditError) as info:
        call()
    return str(info.value)


# -- defect 1: messages -----------------------------------------------------------------------

QA_CALLS: dict[str, tuple[Callable[..., object], str]] = {
    # The QA report's calls on event-graph-500 (602,467 .. 1,204,871 characters before).
    "solve(inst, B, pkg)": (lambda p, b, i: ma.solve(i, b, p), "Package"),
    "score_selection(pkg, B, [inst])": (
        lambda p, b, i: ma.score_selection(p, b, [i]),
        "CompiledInstance",
    ),
    "run_writer(inst, 'gvt', B)": (lambda p, b, i: ma.run_writer(i, "gvt", b), "CompiledInstance"),
    "score(pkg, B, writer=pkg)": (lambda p, b, i: ma.score(p, b, writer=p), "Package"),
    "sweep([pkg], [B], [pkg])": (lambda p, b, i: ma.sweep([p], [b], [p]), "Package"),
    "score(pkg, B, writer='gvt', solver=inst)": (
        lambda p, b, i: ma.score(p, b, writer="gvt", solver=i),
        "CompiledInstance",
    ),
}


@pytest.mark.parametrize("case", list(QA_CALLS))
def test_qa_calls_give_short_messages_naming_the_type(case: str, big) -> None:
    call, type_name = QA_CALLS[case]
    text = _message(lambda: call(*big))
    assert len(text) < MESSAGE_MAX, (case, len(text), text[:200])
    assert type_name in text


HUGE_CALLS: dict[str, Callable[..., object]] = {
    # One per site that pasted a user's value whole (solver / writer names, name lists,
    # budget lists, limits, progress, register_writer's fn, generator and format options).
    "solve solver": lambda p, b, i: ma.solve(i, b, Huge()),
    "solve time_limit": lambda p, b, i: ma.solve(i, b, time_limit=Huge()),
    "solve node_limit": lambda p, b, i: ma.solve(i, b, node_limit=Huge()),
    "solve cross_check": lambda p, b, i: ma.solve(i, b, cross_check=Huge()),
    "solve_budgets budgets": lambda p, b, i: ma.solve_budgets(i, Huge()),
    "solve_budgets solver": lambda p, b, i: ma.solve_budgets(i, [b], Huge()),
    "score writer": lambda p, b, i: ma.score(p, b, writer=Huge()),
    "score solver": lambda p, b, i: ma.score(p, b, writer="gvt", solver=Huge()),
    "sweep writer item": lambda p, b, i: ma.sweep([p], [b], ["gvt", Huge()]),
    "sweep writers": lambda p, b, i: ma.sweep([p], [b], Huge()),
    "sweep progress": lambda p, b, i: ma.sweep([p], [b], ["gvt"], progress=Huge()),
    "sweep_suite solver": lambda p, b, i: suites.sweep_suite([str(BIG)], solver=Huge()),
    "sweep_suite max_tasks": lambda p, b, i: suites.sweep_suite([str(BIG)], max_tasks=Huge()),
    "run_writer name": lambda p, b, i: ma.run_writer(Huge(), i, b),
    "pool_instance pool": lambda p, b, i: i.pool_instance(Huge()),
    "generate family": lambda p, b, i: ma.generate(Huge()),
    "generate parameter": lambda p, b, i: ma.generate("event_graph", n_experiences=Huge()),
    "generate seed": lambda p, b, i: ma.generate("update_chain", seed=Huge()),
    "load_external_store fmt": lambda p, b, i: ma.load_external_store("x.json", fmt=Huge()),
    "register_writer fn": lambda p, b, i: register_writer(
        WriterInfo(name="s40huge", description="QA s40", kind="oracle", fn=Huge())
    ),
}


@pytest.mark.parametrize("case", list(HUGE_CALLS))
def test_a_huge_value_is_cut_in_messages(case: str, big) -> None:
    text = _message(lambda: HUGE_CALLS[case](*big))
    assert len(text) < MESSAGE_MAX, (case, len(text), text[:200])
    assert "Huge(xxx" in text
    assert "(100,006 characters)" in text  # how much was left out


def test_a_names_list_is_not_repeated_whole() -> None:
    """The names check named the bad item and then pasted the whole list ("in [...]")."""
    from memaudit_core.errors import check_names

    names = [f"writer{i:04d}" for i in range(2000)] + [7]
    text = _message(lambda: check_names(names, "writers"))
    assert text == "writers must be names (strings), got int 7 (item 2001 of 2001)"


# -- defect 2: reprs --------------------------------------------------------------------------


def test_reprs_stay_short_on_a_500_experience_package(big) -> None:
    """Sizes before: Package 602,414; CompiledInstance 81,031; SolveResult 6,504;
    StoreEvaluation 131,113; CompareView 489,225; EvidenceView 445,586; Overview 957,773;
    WriterResult 5,923 characters."""
    pkg, b, inst = big
    grid = list(pkg.budget_grid())[:2]
    objs = {
        "Package": pkg,
        "CompiledInstance": inst,
        "SolveResult": ma.solve(inst, b),
        "StoreEvaluation": ma.score(pkg, b, writer="gvt"),
        "CompareView": ma.compare_view(pkg, b, writer="gvt"),
        "EvidenceView": ma.evidence_view(pkg, b, writer="gvt"),
        "Overview": reports.overview(pkg, b),
        "PackageStats": reports.package_stats(pkg),
        "WriterResult": ma.run_writer("gvt", inst, b),
        "SweepResult": ma.sweep([pkg], grid, ["gvt"]),
        "BudgetCurve": ma.budget_curve(pkg, grid, ["gvt"]),
    }
    view = objs["EvidenceView"]
    objs |= {"HeatmapData": view.heatmap, "TimelineData": view.timeline, "GraphData": view.graph}
    sizes = {name: len(repr(o)) for name, o in objs.items()}
    assert all(n <= REPR_MAX for n in sizes.values()), sizes
    for name, o in objs.items():
        assert repr(o).startswith(f"{name}("), repr(o)
        assert str(o) == repr(o)


def _tiny() -> ma.Package:
    """e1:a (cost 2) covers u1 (weight 3), e2:b (2) u2 (2), e3:c (2) u3 (1); store s = {b, c}.
    At budget 4 the optimum is {a, b}: F = 3 + 2 = 5, cost 4. The store: F = 2 + 1 = 3, cost 4,
    ratio 3 / 5 = 0.600, and it misses u1 (the optimum's 3 on it, the store's 0)."""
    return parse_package(
        {
            "memaudit": 1,
            "id": "tiny",
            "experiences": [{"id": f"e{g}", "time": g} for g in (1, 2, 3)],
            "units": [{"id": "u1", "weight": 3}, {"id": "u2", "weight": 2}, {"id": "u3", "weight": 1}],
            "candidates": [
                {"id": f"e{g}:{c}", "experience": f"e{g}", "type": "atomic_fact", "cost": 2,
                 "coverage": {f"u{g}": 1}}
                for g, c in ((1, "a"), (2, "b"), (3, "c"))
            ],
            "stores": [{"id": "s", "select": ["e2:b", "e3:c"]}],
        }
    )  # fmt: skip


def test_reprs_name_the_numbers_of_a_tiny_package() -> None:
    pkg = _tiny()
    inst = ma.compile_package(pkg)
    assert repr(pkg) == (
        "Package('tiny': 3 experiences, 3 candidates, 3 units, 0 queries, 1 store, "
        "budget=None, cost_unit='units', saturation='cap1', source='<memory>')"
    )
    assert repr(inst) == (
        "CompiledInstance('tiny', pool='full': 3 candidates in 3 groups, 3 units, "
        "total cost 6, saturation='cap1', group_capacity=1)"
    )
    opt = ma.solve(inst, 4)
    assert repr(opt).startswith("SolveResult(OPT F=5 at budget 4: cost 4, 2 candidates, ")
    ev = ma.score(pkg, 4, store_id="s")
    text = repr(ev)
    assert text.startswith("StoreEvaluation(")
    for part in ("@ 4: F=3 / OPT 5, ratio 0.600, cost 4, 2 candidates kept, 1 unit missed",):
        assert part in text, text
    view = ma.compare_view(pkg, 4, store_id="s")
    assert "@ 4 units: F=3 / OPT 5, ratio 0.600, 1 unit missed, 3 experience rows, " in repr(view)
    over = reports.overview(pkg, 4)
    assert repr(over).startswith("Overview('tiny' @ 4 units: OPT F=5, 0 writer errors, ")
    assert "s 0.600" in repr(over)


def test_short_reprs_keep_the_dataclass_behaviour() -> None:
    """Regression guard: equality, hashing, frozenness, pickling and to_dict are the
    dataclasses' own, whatever repr says."""
    pkg, again = _tiny(), _tiny()
    assert pkg == again and hash(pkg) == hash(again)
    with pytest.raises(dataclasses.FrozenInstanceError):
        pkg.id = "other"  # type: ignore[misc]
    ev = ma.score(pkg, 4, store_id="s")
    assert ev == ma.score(again, 4, store_id="s")
    assert pickle.loads(pickle.dumps(ev)) == ev
    assert ev.to_dict()["value"] == 3
