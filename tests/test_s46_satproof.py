"""QA s46 (code review): a registered saturation is checked for concavity at sample points
only, so a convex dent between them passed registration and branch-and-bound certified a
value below the optimum (1.306987 where enumeration found 1.308605).

Concavity of an arbitrary function cannot be proven from samples, so results under a
registered saturation say that their OPT rests on that assumption, and a package's own
reachable coverage sums are checked when it is compiled, which catches a dent at the sums
the package's stores reach.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from cli_utils import run_cli
from package_utils import registered_saturation

import memaudit_core as ma
from memaudit_core.curves import certification_report
from memaudit_core.package import package_to_dict
from memaudit_core.saturations import SATURATIONS, Saturation

BUILTIN = {"cap1", "linear", "log1p"}

# The QA's dent: min(1, z) minus a tent of height 0.4 * W centred at C, inside the largest
# gap of the registration grid near 0.5 ([0.36328125, 0.3671875]).
C = (0.36328125 + 0.3671875) / 2
W = (0.3671875 - 0.36328125) / 2 * 0.9


def _dented(z):
    z = np.asarray(z, dtype=np.float64)
    return np.minimum(1.0, z) - 0.4 * np.maximum(0.0, W - np.abs(z - C))


def _dented_scalar(z):
    return min(1.0, z) - 0.4 * max(0.0, W - abs(z - C))


DENTED = Saturation("s46_dented", _dented, _dented_scalar, "min(1, z) with a dent", 1.0)


def _sqrt(z):
    return np.sqrt(np.asarray(z, dtype=np.float64))


SQRT = Saturation("s46_sqrt", _sqrt, math.sqrt, "h(z) = sqrt(z)", math.inf)


@pytest.fixture(autouse=True)
def registry_left_as_found():
    yield
    assert set(SATURATIONS) == BUILTIN  # no test leaves a saturation registered


def _package(saturation: str, values: list[float]) -> ma.Package:
    """One unit U (weight 1) covered by cost-1 candidates with ``values``, one per
    experience, and a unit V (weight 0.5) covered fully by a cost-1 candidate of its own."""
    n = len(values)
    exps = [ma.Experience(f"e{i}", i) for i in range(n + 1)]
    units = [ma.Unit("U", weight=1.0), ma.Unit("V", weight=0.5)]
    cands = [
        ma.Candidate(f"c{i}", f"e{i}", "atomic_fact", 1, {"U": v}) for i, v in enumerate(values)
    ]
    cands.append(ma.Candidate("v", f"e{n}", "atomic_fact", 1, {"V": 1.0}))
    return ma.Package(
        "dent",
        exps,
        units,
        queries=[ma.Query("q", ["U", "V"])],
        candidates=cands,
        saturation=saturation,
    )


def _brute(h, values: list[float], budget: int) -> float:
    """OPT by listing every store of ``_package`` (all costs 1): an independent oracle."""
    best = 0.0
    n = len(values)
    for k in range(min(budget, n + 1) + 1):
        for pick in itertools.combinations(range(n + 1), k):
            z = sum(values[i] for i in pick if i < n)
            best = max(best, float(h(z)) + (0.5 if n in pick else 0.0))
    return best


def _is_assumption_note(note: str, name: str) -> bool:
    return f"{name!r}" in note and "concave" in note and "sample points" in note


def test_the_dent_passes_registration_but_not_a_package_reaching_it():
    # Registration's grid cannot see it (what the QA found) ...
    with registered_saturation(DENTED):
        # ... but a package whose coverage sums land in the dent is refused when compiled:
        # h(C) lies below the chord from h(C - W) to h(C + 0.2 W), values it covers with.
        pkg = _package("s46_dented", [C - W, C, C + 0.2 * W, 0.5 * W])
        with pytest.raises(ma.SaturationError, match=r"'s46_dented'.*rule: concave"):
            ma.compile_package(pkg)


def test_a_result_under_a_registered_saturation_says_its_opt_is_conditional(tmp_path):
    values = [0.25, 0.5, 0.125]  # sums far from the dent: the package compiles
    with registered_saturation(DENTED):
        pkg = _package("s46_dented", values)
        inst = ma.compile_package(pkg)
        res = ma.solve(inst, 2, solver="bnb")
        assert res.value == pytest.approx(_brute(_dented_scalar, values, 2), rel=1e-12)
        # Still OPT: proven, conditional on the declared property (see the note).
        assert res.certified and res.label == "OPT"
        assert any(_is_assumption_note(n, "s46_dented") for n in res.notes)
        assert _is_assumption_note(res.to_dict()["saturation_note"], "s46_dented")

        ev = ma.score(pkg, 2, writer="greedy")
        assert any(_is_assumption_note(n, "s46_dented") for n in ev.notes)

        path = tmp_path / "dent.json"
        path.write_text(json.dumps(package_to_dict(pkg)))
        rc, out, err = run_cli("solve", str(path), "--budget", "2", "--solver", "bnb")
        assert rc == 0, err
        notes = [line for line in out.splitlines() if line.startswith("note: ")]
        assert any(_is_assumption_note(n, "s46_dented") for n in notes), out


def test_a_concave_registered_saturation_carries_the_note_on_curves_too():
    values = [0.25, 0.5, 0.125]
    with registered_saturation(SQRT):
        pkg = _package("s46_sqrt", values)
        curve = ma.budget_curve(pkg, [1, 2], ["greedy"])
        assert [p.value for p in curve.opt] == pytest.approx(
            [_brute(math.sqrt, values, b) for b in (1, 2)], rel=1e-12
        )
        assert any(_is_assumption_note(n, "s46_sqrt") for n in curve.notes)
        report = certification_report(pkg, [2])
        assert any(_is_assumption_note(n, "s46_sqrt") for n in report.notes)


@pytest.mark.parametrize("saturation", sorted(BUILTIN))
def test_a_builtin_saturation_carries_no_such_note(saturation):
    pkg = _package(saturation, [0.25, 0.5, 0.125])
    res = ma.solve(ma.compile_package(pkg), 2, solver="bnb")
    assert res.saturation_note is None
    assert res.to_dict()["saturation_note"] is None
    assert not any("sample points" in n for n in res.notes)
    ev = ma.score(pkg, 2, writer="greedy")
    assert not any("sample points" in n for n in ev.notes)
