"""QA s50 (library): register_saturation accepted an h the engines cannot run (a per-element
loop, one returning a list, one writing into its argument), and every solve and score then
crashed with a bare TypeError/ValueError ("internal error" in the CLI). And re-running a
notebook cell that registers a saturation was refused, before and after unregister_saturation
(whose use the first refusal advised)."""

from __future__ import annotations

import gc
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_utils import run_cli
from oracles import opt_by_enumeration

import memaudit_core as ma
from memaudit_core.package import package_to_dict
from memaudit_core.saturations import SATURATIONS, Saturation

BUILTIN = {"cap1", "linear", "log1p"}


def _log2_scalar(z: float) -> float:
    return math.log1p(2 * z)


def _loop(z):
    return np.array([_log2_scalar(float(v)) for v in z])


def _as_list(z):
    return [math.log1p(2 * float(v)) for v in z]


def _in_place(z):
    z *= 2.0
    return np.log1p(z)


@pytest.mark.parametrize(
    ("h", "says"),
    [
        (_loop, "2-D array of shape"),
        (_as_list, "returned list"),
        (_in_place, "writes into its argument"),
    ],
)
def test_an_h_the_engines_cannot_call_is_refused_at_registration(h, says) -> None:
    sat = Saturation("s50_bad", h, _log2_scalar, "ln(1 + 2z)", math.inf)
    try:
        with pytest.raises(ma.SaturationError) as info:
            ma.register_saturation(sat)
    finally:  # accepted (the defect): leave no registration to the other cases
        if "s50_bad" in SATURATIONS:
            ma.unregister_saturation("s50_bad")
    msg = str(info.value)
    assert msg.startswith("saturation 's50_bad' refused: h must accept a read-only 1-D or 2-D")
    assert says in msg
    assert msg.endswith("[rule: vectorised]")
    assert set(SATURATIONS) == BUILTIN


MODULE = "s50_satcheck_loop"


@pytest.fixture
def loop_module(tmp_path: Path):
    (tmp_path / f"{MODULE}.py").write_text(
        "import math\nimport numpy as np\nimport memaudit_core as ma\n\n"
        "def h1(z):\n    return math.log1p(2 * z)\n\n"
        "def h(z):\n    return np.array([h1(float(v)) for v in z])\n\n"
        "ma.register_saturation(ma.Saturation('s50_loop', h, h1, 'ln(1+2z)', math.inf))\n",
        encoding="utf-8",
    )
    doc = package_to_dict(ma.generate("update_chain"))
    doc["objective"]["saturation"] = "s50_loop"
    path = tmp_path / "loop.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    yield path
    sys.path.remove(str(tmp_path))
    sys.modules.pop(MODULE, None)
    if "s50_loop" in SATURATIONS:
        ma.unregister_saturation("s50_loop")


def test_cli_names_the_saturation_instead_of_an_internal_error(loop_module: Path) -> None:
    for command in (["validate", str(loop_module)], ["solve", str(loop_module), "--budget", "8"]):
        rc, out, err = run_cli("--plugin-module", MODULE, *command)
        assert rc == 2, (command, out, err)
        assert "internal error" not in err
        assert "saturation 's50_loop' refused" in err
        assert "[rule: vectorised]" in err


CELL = """
def h(z):
    return np.log1p({k} * np.asarray(z, float))


def h1(z):
    return math.log1p({k} * z)


sat = ma.register_saturation(ma.Saturation("{name}", h, h1, "h(z) = ln(1 + kz)", math.inf)
    {replace})
"""


def _run_cell(k: int, replace: str = "", name: str = "s50_cell") -> Saturation:
    scope = {"np": np, "math": math, "ma": ma}
    exec(CELL.format(k=k, replace=replace, name=name), scope)  # a notebook cell, run again
    return scope["sat"]


def test_a_notebook_cell_registering_a_saturation_can_run_again() -> None:
    try:
        first = _run_cell(2)
        again = _run_cell(2)  # the same cell, run twice
        assert again.h is not first.h
        assert SATURATIONS["s50_cell"] is again
        ma.unregister_saturation("s50_cell")
        assert "s50_cell" not in SATURATIONS
        _run_cell(2)  # and after unregistering
        assert "s50_cell" in SATURATIONS
    finally:
        if "s50_cell" in SATURATIONS:
            ma.unregister_saturation("s50_cell")


def _doc(saturation: str) -> dict:
    doc = package_to_dict(ma.generate("update_chain"))
    doc["objective"]["saturation"] = saturation
    return doc


def _brute_force_opt(doc: dict, budget: float, k: float) -> float:
    """OPT with h(z) = ln(1 + k z) written out (the cell's saturation)."""
    return opt_by_enumeration(doc, budget, lambda z: math.log1p(k * z))


def test_an_edited_h_needs_replace_and_forgets_optima_of_the_old_one() -> None:
    pkg = None
    try:
        _run_cell(1, name="s50_edit")  # ln(1 + z): the same values as the built-in log1p
        pkg = ma.parse_package(_doc("s50_edit"))
        old = ma.score(pkg, 6, writer="gvt")
        assert old.opt.value == pytest.approx(_brute_force_opt(_doc("s50_edit"), 6, 1), rel=1e-9)

        # The cell edited: the advice is what works.
        with pytest.raises(ma.SaturationError) as info:
            _run_cell(3, name="s50_edit")
        assert "pass replace=True" in str(info.value)
        assert "unregister_saturation" not in str(info.value)
        ma.unregister_saturation("s50_edit")
        with pytest.raises(ma.SaturationError, match="earlier in this process: pass replace=True"):
            _run_cell(3, name="s50_edit")

        # A compiled instance made with the old h still referenced: refused, not mixed.
        _run_cell(1, name="s50_edit")
        inst = ma.compile_package(pkg)
        with pytest.raises(ma.SaturationError, match="still referenced"):
            _run_cell(3, ", replace=True", "s50_edit")
        del inst
        gc.collect()
        _run_cell(3, ", replace=True", "s50_edit")
        assert SATURATIONS["s50_edit"].h_scalar(1.0) == math.log1p(3.0)
        new = ma.score(pkg, 6, writer="gvt")
        assert new.opt.certified
        assert new.opt.value == pytest.approx(_brute_force_opt(_doc("s50_edit"), 6, 3), rel=1e-9)
        assert new.opt.value > old.opt.value * 1.2  # not the optimum cached for ln(1 + z)
    finally:
        if "s50_edit" in SATURATIONS:
            ma.unregister_saturation("s50_edit")
