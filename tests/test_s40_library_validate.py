"""QA s40 (library in a notebook): hand-built packages are validated, ENGINES is filled on
import, and the importers name the library's ``instance=`` keyword (the CLI its flag).

Every expected value is written by hand from the package below (two experiences, units r1
weight 2 and r2 weight 1, one candidate covering each), never read back from the code under
test.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_utils import run_cli
from package_utils import refused

import memaudit_core as ma
import memaudit_core.package as package_module
from memaudit_core.importers import import_package
from memaudit_core.package import Candidate, Experience, ExternalMemory, Query, Unit

ROOT = Path(__file__).resolve().parents[1]
FIX = Path(__file__).parent / "fixtures" / "importers"

EXPS = (Experience("e1", 0.0), Experience("e2", 1.0))
UNITS = (Unit("r1", weight=2.0), Unit("r2", weight=1.0))


def cand(cid: str = "c1", exp: str = "e1", cost: object = 1.0, cov: dict | None = None):
    return Candidate(cid, exp, "atomic_fact", cost, {"r1": 1.0} if cov is None else cov)


def build(**fields: object) -> ma.Package:
    return ma.Package(**{"id": "d", "experiences": EXPS, "units": UNITS, **fields})


# --------------------------------------------------------------------------- defect 1


def test_coverage_above_one_is_refused_not_certified():
    """/tmp/s40/qa2/direct3.py: coverage 5.0 under linear saturation was certified OPT 10."""
    cands = (cand(cov={"r1": 5.0}), cand("c2", "e2", cov={"r2": 1.0}))
    assert refused(lambda: build(candidates=cands, saturation="linear")) == [
        ('$.candidates[0].coverage["r1"]', "coverage-range")
    ]


@pytest.mark.parametrize(
    ("cost", "rule"),
    [(0.0, "cost-positive"), (-1.0, "cost-positive"), (float("nan"), "finite"), ("1", "type")],
)
def test_costs_that_are_not_positive_finite_numbers_are_refused(cost, rule):
    """direct2.py / build2.py: cost 0 and NaN were certified OPT, -1 raised IndexError in
    bnb's dp_bounds, "1" a TypeError from package.py."""
    assert refused(lambda: build(candidates=(cand(cost=cost),))) == [("$.candidates[0].cost", rule)]


def test_every_problem_is_listed_by_path_and_rule_with_the_source_named():
    """build.py: an unknown experience raised KeyError in compiled.py; an unknown unit too."""
    cands = (cand(cost=-1.0), cand("c2", "e9", cov={"r2": 5.0, "rX": 1.0}))
    with pytest.raises(ma.PackageError) as info:
        build(candidates=cands)
    head = "<memory> (Package 'd' built in Python): "
    assert info.value.lines() == [
        head + "$.candidates[0].cost: must be greater than 0 (got -1.0) [rule: cost-positive]",
        head + "$.candidates[1].experience: refers to an unknown experience (got 'e9') "
        "[rule: known-experience]",
        head + '$.candidates[1].coverage["r2"]: must be at most 1 (got 5.0) [rule: coverage-range]',
        head + '$.candidates[1].coverage["rX"]: coverage refers to an unknown unit '
        "(got 'rX') [rule: known-unit]",
    ]


def test_duplicate_ids_negative_weights_and_unknown_saturation_are_refused():
    """build.py: two candidates c1 were solved as OPT 3.0 selecting ('c1', 'c1')."""
    assert refused(lambda: build(candidates=(cand(), cand("c1", "e2")))) == [
        ("$.candidates[1].id", "unique-id")
    ]
    assert refused(lambda: build(units=(Unit("r1", weight=-3.0),), candidates=(cand(),))) == [
        ("$.units[0].weight", "weight-range")
    ]
    assert refused(lambda: build(candidates=(cand(),), saturation="cube")) == [
        ("$.objective.saturation", "known-saturation")
    ]
    assert refused(lambda: build(candidates=(cand(),), queries=(Query("q", ("r9",)),))) == [
        ("$.queries[0].requires[0]", "known-unit")
    ]


def test_items_of_the_wrong_class_are_refused_by_path():
    assert refused(lambda: build(candidates=({"id": "c1"},))) == [("$.candidates[0]", "type")]
    assert refused(lambda: build(candidates=None)) == [("$.candidates", "type")]
    store = ma.Store("s", memories=({"id": "m1"},))
    assert refused(lambda: build(candidates=(cand(),), stores=(store,))) == [
        ("$.stores[0].memories[0]", "type")
    ]


def test_replace_on_a_loaded_package_is_validated_too():
    pkg = ma.generate("update_chain")
    first = pkg.candidates[0]
    bad = (dataclasses.replace(first, cost=0.0), *pkg.candidates[1:])
    assert refused(lambda: dataclasses.replace(pkg, candidates=bad)) == [
        ("$.candidates[0].cost", "cost-positive")
    ]


def test_with_store_reports_a_memory_cost_given_as_text():
    """A memory cost "2" ended in TypeError from the canonical form (it coerced numbers)."""
    pkg = ma.generate("update_chain")
    store = ma.Store("ext", memories=(ExternalMemory("m1", "2", {"v_3": 1.0}),))
    assert refused(lambda: ma.with_store(pkg, store)) == [("$.stores[0].memories[0].cost", "type")]


def test_a_valid_hand_built_package_solves_and_is_frozen():
    """Lists are stored as tuples (a list could be changed after validation), NumPy numbers
    are taken, and the parser's warnings are filled in."""
    cands = [
        cand(cost=np.float64(1.0), cov={"r1": np.float32(1.0)}),
        cand("c2", "e2", cost=np.int64(1), cov={"r2": 1.0}),
    ]
    orphan = Unit("r3")  # no weight and no query: the parser warns it weighs 0
    pkg = build(units=[*UNITS, orphan], candidates=cands)
    assert isinstance(pkg.units, tuple) and isinstance(pkg.candidates, tuple)
    assert pkg.warnings == (
        "$.units[2]: unit 'r3' has no weight and no query requires it: it weighs 0 "
        "(rule: unit-weighs-nothing)",
    )
    result = ma.solve(ma.compile_package(pkg), 2)
    assert (result.label, result.value, set(result.selected)) == ("OPT", 3.0, {"c1", "c2"})
    assert result.certificate.certified


def test_parsed_packages_are_not_validated_again_and_hand_built_ones_once(monkeypatch):
    """The parser's packages skip the hand-built check (the 500-package compile stays as
    fast); a hand-built one is checked when built, not again when compiled, solved, scored
    or unpickled."""
    calls: list[str] = []
    real = package_module._validate_built

    def counting(package):
        calls.append(package.id)
        return real(package)

    monkeypatch.setattr(package_module, "_validate_built", counting)
    parsed = ma.generate("memaudit-small", seed=3)
    loaded = ma.parse_package(package_module.package_to_dict(parsed))
    ma.solve(ma.compile_package(loaded), loaded.default_budget())
    assert calls == []
    pkg = build(candidates=(cand(), cand("c2", "e2", cov={"r2": 1.0})))
    assert calls == ["d"]
    ma.solve(ma.compile_package(pkg), 1)
    ma.score(pkg, 1, writer="gvt")
    pickle.loads(pickle.dumps(pkg))
    assert calls == ["d"]


def test_package_docstring_says_hand_built_packages_are_validated():
    doc = ma.Package.__doc__ or ""
    assert "by hand" in doc and "validated when it is built" in doc


# --------------------------------------------------------------------------- defect 2


def test_engines_are_registered_on_import_in_a_fresh_interpreter():
    """``list(ENGINES)`` in a fresh session was [] until the first solve."""
    code = "from memaudit_core.solvers import ENGINES; print(sorted(ENGINES))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['bnb', 'brute', 'enum', 'milp']"


# --------------------------------------------------------------------------- defect 3


def test_library_names_the_instance_keyword():
    with pytest.raises(ma.PackageError) as info:
        import_package("locomo", FIX / "locomo_small.json")
    assert info.value.problems[0].message == (
        "the file holds 2 conversations: choose one with instance=SAMPLE_ID "
        "(available: conv-a, conv-b)"
    )
    with pytest.raises(ma.PackageError) as info:
        import_package("longmemeval", FIX / "longmemeval_small.json")
    assert info.value.problems[0].message == (
        "the file holds 3 instances: choose one with instance=QUESTION_ID "
        "(available: ku_01, ms_02, tr_03_abs)"
    )
    with pytest.raises(ma.MemAuditError) as exc:
        import_package("artifact", FIX / "artifact_pkg", instance="x")
    assert str(exc.value).startswith("instance= does not apply to the artifact format")


def test_cli_still_names_the_instance_flag(tmp_path):
    """Regression guard for the CLI's wording (the library's message changed under it); it
    now also says SAMPLE_ID, as LongMemEval's says QUESTION_ID."""
    out = str(tmp_path / "x.json")
    rc, _, err = run_cli("import", "locomo", str(FIX / "locomo_small.json"), "-o", out)
    assert rc == 2
    assert err.strip() == (
        f"{FIX / 'locomo_small.json'}: $: the file holds 2 conversations: choose one with "
        "--instance SAMPLE_ID (available: conv-a, conv-b) [rule: instance-required]"
    )
    lme = FIX / "longmemeval_small.json"
    rc, _, err = run_cli("import", "longmemeval", str(lme), "-o", out)
    assert rc == 2 and "choose one with --instance QUESTION_ID (available: ku_01" in err
    assert "instance=" not in err
