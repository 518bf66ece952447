"""Library defects found by the thirty-fifth session's fresh-eyes audit of ``memaudit_core``
used from a notebook: wrong argument types get a MemAuditError, not a TypeError from deep
inside; names given once count once; writers registered in-process work with workers."""

from __future__ import annotations

from pathlib import Path

import pytest

import memaudit_core as ma
from memaudit_core import suites
from memaudit_core.audit import audit
from memaudit_core.errors import MemAuditError
from memaudit_core.package import dumps_package

DEMO = ma.load_package(
    Path(__file__).parent.parent / "sample_packages" / "external-stores-demo.json"
)


@pytest.fixture(scope="module")
def pkg():
    return ma.generate("memaudit-small", seed=2)


@pytest.fixture(scope="module")
def inst(pkg):
    return ma.compile_package(pkg)


def _mine(inst, budget):
    return inst.indices([inst.candidate_ids[0]])


@pytest.fixture
def registered_mine():
    """``s35_mine`` registered for one test, then removed: a writer left in the registry
    joins every later default sweep (the CLI's `sweep` then failed in another test file)."""
    from memaudit_core.writers import WRITERS

    yield ma.register_writer(ma.WriterInfo("s35_mine", "mine", "oracle", _mine), replace=True)
    dict.pop(WRITERS, "s35_mine", None)


def test_register_writer_labels_and_runs_an_in_process_writer_with_workers(registered_mine):
    """The writer was listed as a reference writer and failed in the workers' registry
    ("unknown writer 'mine'") once a sweep of several packages used workers."""
    info = registered_mine
    assert info.source == "registered in this process" and not info.is_plugin
    packages = [ma.generate("memaudit-small", seed=s) for s in range(2)]
    pooled = ma.sweep(packages, [2, 4], ["s35_mine", "gvt"], workers=2)
    alone = ma.sweep(packages, [2, 4], ["s35_mine", "gvt"])
    assert [(r.method, r.budget, r.value) for r in pooled.rows] == [
        (r.method, r.budget, r.value) for r in alone.rows
    ]
    assert not pooled.errors


def test_register_writer_refuses_a_blind_kind():
    with pytest.raises(MemAuditError, match="blind writer is a plugin"):
        ma.register_writer(ma.WriterInfo("s35_blind", "b", "blind", _mine))


@pytest.mark.parametrize(
    "call",
    [
        lambda pkg, inst: ma.score(pkg, 6, writer=["gvt"]),
        lambda pkg, inst: ma.generate(["update_chain"]),
        lambda pkg, inst: ma.load_external_store("x.json", ["mem0"]),
        lambda pkg, inst: ma.read_result(None),
        lambda pkg, inst: ma.read_result(3),
        lambda pkg, inst: ma.sweep([pkg], [4], ["gvt"], progress=3),
        lambda pkg, inst: ma.solve_budgets(inst, [3, 4], solver="bnb", progress=3),
        lambda pkg, inst: ma.solve_budgets(inst, [3, 8], "bnb", incumbents=[(999,), None]),
        lambda pkg, inst: ma.solve_budgets(inst, [3, 8], incumbents={3: (1,), 8: (2,)}),
        lambda pkg, inst: ma.solve_budgets(inst, [3, 8], incumbents=[(0.7,), None]),
        lambda pkg, inst: ma.union_report(DEMO, "mem0", 24, salience_field=3),
        lambda pkg, inst: audit([pkg], budgets=[4]),
        lambda pkg, inst: audit(families=["update_chain"], budgets=3),
        lambda pkg, inst: audit(families=["update_chain"], budgets=[3], max_tasks=-1),
    ],
    ids=[
        "writer-list", "family-list", "format-list", "read-none", "read-int",
        "sweep-progress", "budgets-progress", "incumbent-position", "incumbents-dict",
        "incumbent-float", "salience-field-int", "audit-package-object", "audit-budget-int",
        "audit-max-tasks",
    ],
)  # fmt: skip
def test_wrong_argument_types_are_user_errors(pkg, inst, call):
    with pytest.raises(MemAuditError):
        call(pkg, inst)


def test_a_lone_name_is_one_name_not_its_letters(pkg, tmp_path):
    """audit("p.json") read "t: no such file", families="update_chain" family 'u', and
    kinds="fact" showed every kind."""
    path = tmp_path / "p.json"
    path.write_text(dumps_package(ma.generate("update_chain")))
    assert audit(str(path), budgets=[6]).n_tasks == 1
    assert audit(families="update_chain", budgets=[6]).n_tasks == 1
    run = suites.sweep_suite(families=["update_chain"], budgets=[4], writers="gvt")
    assert {r.method for r in run.rows} == {"gvt"}
    assert ma.evidence_view(pkg, 8, writer="gvt", kinds="fact").kinds == ("fact",)


def test_a_method_named_twice_counts_once(pkg):
    """["density", "density"] gave two summary rows each with n = 2 from one package; the
    suite ended in "internal error: task ... ran twice"."""
    res = ma.sweep([pkg], [8], ["density", "density"], ablations=["no_validity", "no_validity_opt"])
    assert [(s.method, s.n) for s in res.summary] == [("density", 1), ("no_validity_opt", 1)]
    run = suites.sweep_suite(families=["update_chain"], budgets=[4], writers=["gvt", "gvt"])
    assert len(run.rows) == 1


def test_a_feasible_incumbent_list_is_still_used(inst):
    res = ma.solve_budgets(inst, [3, 8], incumbents=[None, (0,)])
    assert [r.label for r in res] == ["OPT", "OPT"]


def test_a_loaded_package_coverage_row_cannot_be_changed_in_place():
    """Zeroing a candidate's coverage in place changed what solve saw (0.0) but not the cached
    content hash, so score (compiled by hash) still said OPT 7.735."""
    import copy
    import pickle

    chain = ma.generate("update_chain")
    before = chain.content_hash()
    cand = chain.candidates[0]
    unit = next(iter(cand.coverage))
    with pytest.raises(TypeError, match="cannot be changed"):
        cand.coverage[unit] = 0.0
    with pytest.raises(TypeError):
        cand.coverage.update({unit: 0.0})
    assert chain.content_hash() == before
    assert round(ma.solve(ma.compile_package(chain), 6).value, 6) == 7.735
    # Worker processes get packages by pickling; copies stay frozen and equal.
    for again in (pickle.loads(pickle.dumps(chain)), copy.deepcopy(chain)):
        assert again.content_hash() == before
        with pytest.raises(TypeError):
            again.candidates[0].coverage[unit] = 0.0
