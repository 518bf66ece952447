"""Review s51: replacing a registered saturation's h (``register_saturation(...,
replace=True)``) must forget every cache keyed on the saturation's name, which names the h
but not which one. The caches were cleared from a list kept in saturations.py, so a new one
could be left out; each module now registers its caches where it keeps them
(:mod:`memaudit_core.saturation_caches`). These tests hold every path to that contract."""

from __future__ import annotations

import gc
import importlib
import math
import pkgutil
import weakref
from collections.abc import MutableMapping

import numpy as np
import pytest
from oracles import opt_by_enumeration

import memaudit_core as ma
from memaudit_core import analysis, explain, saturation_caches
from memaudit_core.package import package_to_dict
from memaudit_core.saturations import SATURATIONS, Saturation

NAME = "s51_h"
BUDGET = 6


def _h1(z):
    return np.log1p(np.asarray(z, float))


def _h1_scalar(z):
    return math.log1p(z)


def _h3(z):
    return np.log1p(3 * np.asarray(z, float))


def _h3_scalar(z):
    return math.log1p(3 * z)


OLD = Saturation(NAME, _h1, _h1_scalar, "h(z) = ln(1 + z)", math.inf)
NEW = Saturation(NAME, _h3, _h3_scalar, "h(z) = ln(1 + 3z)", math.inf)
PROBE = Saturation("s51_probe", _h1, _h1_scalar, "h(z) = ln(1 + z)", math.inf)
BNB_OLD = Saturation("s51_bnb", _h1, _h1_scalar, "h(z) = ln(1 + z)", math.inf)
BNB_NEW = Saturation("s51_bnb", _h3, _h3_scalar, "h(z) = ln(1 + 3z)", math.inf)


def _doc(saturation: str = NAME) -> dict:
    doc = package_to_dict(ma.generate("update_chain"))
    doc["objective"]["saturation"] = saturation
    return doc


@pytest.fixture
def unregister():
    yield
    gc.collect()
    for name in (NAME, PROBE.name, BNB_OLD.name):
        if name in SATURATIONS:
            ma.unregister_saturation(name)


def _solve_paths(pkg: ma.Package) -> dict[str, float]:
    """OPT at BUDGET through each cached path: the solve path (the shared compile and optimum
    caches, bnb's presolved model) and the app-facing views (score, Compare)."""
    inst = analysis.compile_cached(pkg)
    return {
        "opt_at": analysis.opt_at(inst, BUDGET).value,
        "solve bnb": ma.solve(inst, BUDGET, "bnb").value,
        "score": ma.score(pkg, BUDGET, writer="gvt").opt.value,
        "compare_view": explain.compare_view(pkg, BUDGET, writer="gvt").opt_value,
    }


def test_after_a_replacement_no_path_serves_an_optimum_of_the_old_h(unregister) -> None:
    ma.register_saturation(OLD)
    pkg = ma.parse_package(_doc())
    old_opt = opt_by_enumeration(_doc(), BUDGET, _h1_scalar)
    before = _solve_paths(pkg)
    assert before == pytest.approx(dict.fromkeys(before, old_opt), rel=1e-9)

    gc.collect()
    ma.register_saturation(NEW, replace=True)
    new_opt = opt_by_enumeration(_doc(), BUDGET, _h3_scalar)
    assert new_opt > old_opt * 1.2  # far enough apart that a stale answer cannot pass
    after = _solve_paths(pkg)
    assert after == pytest.approx(dict.fromkeys(after, new_opt), rel=1e-9)


def test_a_score_solved_by_bnb_leaves_nothing_that_refuses_the_replacement(unregister) -> None:
    """The list kept in saturations.py walked the instance caches with a loop variable that
    still held the last instance during its gc.collect(): after a bnb score the replacement
    was refused, "1 compiled instance(s) ... still referenced ... (del inst)", though the
    caller held none."""
    ma.register_saturation(BNB_OLD)
    ma.score(ma.parse_package(_doc(BNB_OLD.name)), BUDGET, writer="gvt", solver="bnb")
    gc.collect()
    ma.register_saturation(BNB_NEW, replace=True)
    assert SATURATIONS[BNB_OLD.name] is BNB_NEW


def _module_caches() -> dict[str, object]:
    """Every module-level cache of memaudit_core: weak dictionaries, mappings named *cache*,
    and functools caches (each once, under the name of the module met first)."""
    found: dict[int, tuple[str, object]] = {}
    for info in pkgutil.walk_packages(ma.__path__, "memaudit_core."):
        if info.name.endswith("__main__"):
            continue
        for attr, value in vars(importlib.import_module(info.name)).items():
            if (
                isinstance(value, weakref.WeakKeyDictionary)
                or (isinstance(value, MutableMapping) and "cache" in attr.lower())
                or hasattr(value, "cache_info")
            ):
                found.setdefault(id(value), (f"{info.name}.{attr}", value))
    return dict(found.values())


#: Caches whose values do not depend on any h, and so stay when one is replaced.
INDEPENDENT_OF_H = {
    "memaudit_core.analysis._bootstrap_draws": "resampling indices, by sample size",
    "memaudit_core.cli._tool_version": "the installed version",
    "memaudit_core.results._hints": "type hints of result classes",
    "memaudit_core.plugins._describe_cache": "writer descriptions, by module:function",
}


def test_every_module_cache_forgets_what_it_holds_under_a_replaced_h(unregister) -> None:
    caches = _module_caches()
    assert set(INDEPENDENT_OF_H) <= set(caches)  # the walk finds what it should
    assert "memaudit_core.solvers.bnb._BASE_CACHE" in caches
    ma.register_saturation(PROBE)
    inst = ma.compile_package(ma.parse_package(_doc(PROBE.name)))
    other = ma.compile_package(ma.generate("update_chain"))  # cap1: not replaced
    filled = {}
    for where, cache in caches.items():
        if where in INDEPENDENT_OF_H:
            continue
        assert isinstance(cache, MutableMapping), f"{where}: a function cache keyed on h?"
        if isinstance(cache, weakref.WeakKeyDictionary):
            cache[inst] = cache[other] = "computed"
        else:
            cache[("s51", PROBE.name)] = "computed"
        filled[where] = cache
    saturation_caches.forget(PROBE.name)
    kept = {
        where for where, cache in filled.items() if inst in cache or ("s51", PROBE.name) in cache
    }
    assert not kept, f"caches not registered in memaudit_core.saturation_caches: {sorted(kept)}"
    for where, cache in filled.items():
        if isinstance(cache, weakref.WeakKeyDictionary):
            assert other in cache, f"{where} forgot an instance under another saturation"
            del cache[other]
    del inst
