"""QA s47 (libdocs): the library API as a researcher scripts it.

1. ``ma.sweep([pkg], 6, ["gvt"])`` swept budget 6, while the README says a lone number where a
   list of budgets goes raises ``ma.UsageError`` and ``budget_curve``, ``union_curve`` and
   ``ablation_curve`` refuse it.
2. Most public top-level functions and classes (``load_package``, ``Package``,
   ``budget_curve``, the error types, ...) had no docstring example.
3. ``memaudit audit`` on a log1p package ended its note "use solver 'bnb' or 'auto'", but
   audit has no solver option and runs bnb already.
"""

from __future__ import annotations

import doctest
import inspect
import json
import re
from pathlib import Path

import numpy as np
import pytest
from cli_utils import run_cli
from package_utils import write_json

import memaudit_core as ma
from memaudit_core import audit as au

UPDATE_CHAIN = Path(__file__).resolve().parents[1] / "sample_packages" / "update_chain.json"

# --------------------------------------------------------------------- 1. a lone budget


@pytest.mark.parametrize("lone", [6, 6.0, np.int64(6), np.float64(6.0)])
def test_sweep_refuses_a_lone_budget_as_budget_curve_does(lone):
    pkg = ma.generate("update_chain")
    with pytest.raises(ma.UsageError) as swept:
        ma.sweep([pkg], lone, ["gvt"])
    with pytest.raises(ma.UsageError) as curved:
        ma.budget_curve(pkg, lone, ["gvt"])
    shown = repr(lone)
    hint = f"expected a list of budgets, got {shown} (for one budget: [{shown}])"
    assert str(swept.value) == f"sweep(): {hint}"
    assert str(curved.value) == f"budgets: {hint}"


def test_a_one_budget_list_still_sweeps_that_budget():
    res = ma.sweep([ma.generate("update_chain")], [6], ["gvt"])
    assert res.budgets == (6.0,)
    assert [(r.budget, r.method) for r in res.rows] == [(6.0, "gvt")]


# --------------------------------------------------------------------- 2. examples

#: Every function and class exported at the top level (not the registries or __version__).
PUBLIC = [
    name
    for name in ma.__all__
    if inspect.isfunction(getattr(ma, name)) or inspect.isclass(getattr(ma, name))
]


def _examples(obj: object) -> str:
    """The text under the object's own NumPy-style ``Examples`` heading ("" without one).
    ``__doc__``, not ``inspect.getdoc``: that hands a class its base class's docstring."""
    doc = inspect.cleandoc(obj.__doc__ or "")
    found = re.search(r"^Examples\n-{8}\n(.*)", doc, re.M | re.S)
    return found.group(1) if found else ""


def test_the_public_names_are_the_ones_a_script_uses():
    assert {"load_package", "Package", "sweep", "budget_curve", "MemAuditError"} <= set(PUBLIC)
    assert len(PUBLIC) >= 40


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_function_and_class_shows_an_example(name):
    examples = _examples(getattr(ma, name))
    assert any(line.lstrip().startswith(">>> ") for line in examples.splitlines()), name


@pytest.mark.parametrize("name", PUBLIC)
def test_the_docstring_runner_finds_each_example_in_its_module(name):
    """tests/test_docstring_examples.py runs doctest.testmod on every module: each name's
    examples are among the tests it finds in the module that defines the name."""
    obj = getattr(ma, name)
    module = inspect.getmodule(obj)
    found = {t.name: len(t.examples) for t in doctest.DocTestFinder().find(module)}
    assert found.get(f"{module.__name__}.{obj.__qualname__}", 0) > 0, name


# --------------------------------------------------------------------- 3. audit on log1p


def test_audit_on_log1p_says_why_milp_did_not_run_without_solver_advice(tmp_path):
    doc = json.loads(UPDATE_CHAIN.read_text(encoding="utf-8"))
    doc["objective"] = {"saturation": "log1p"}
    path = write_json(tmp_path, "uc-log1p.json", doc)
    rc, help_text, _ = run_cli("audit", "--help")
    assert rc == 0 and "--solver" not in help_text  # so the advice could not be followed
    rc, out, err = run_cli("audit", str(path), "--budgets", "3,6", "--quiet")
    assert rc == 0, err
    assert "use solver" not in out
    (note,) = [line for line in out.splitlines() if line.startswith("note: milp skipped")]
    assert "saturation 'log1p'" in note and "not linear-representable" in note
    assert "so only bnb and enum are compared there" in note
    rep = au.audit([str(path)], budgets=[3, 6], figures=False)
    assert [(r.bnb_status, r.milp_status, r.enum_status) for r in rep.rows] == [
        ("optimal", "skipped", "optimal")
    ] * 2
    assert not any("use solver" in p for r in rep.rows for p in r.problems)
    assert not any("use solver" in n for n in rep.notes)
