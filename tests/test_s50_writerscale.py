"""QA s50: one writer function wrote two different stores depending on how it was registered.

Given to ``ma.register_writer`` it was called with the engines' power-of-two rescaled view of
a package whose weights or costs lie outside 2^-10..2^30 (weights x2048, costs and budget
x1024), while the same function as a ``MODULE:FUNCTION`` oracle plugin got the package's own
instance and budget. A writer with an absolute threshold (skip candidates covering less than
1e-3) kept nothing as a plugin and most of the store when registered.
"""

from __future__ import annotations

import importlib
import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core.writers import PLUGIN_WRITERS

SAMPLE = Path(__file__).resolve().parents[1] / "sample_packages" / "memaudit-small-s0.json"
MODULE = "thr_s50"
# Weights or costs of the sample divided by this fall below 2^-10: out of the engines' band.
SHRINK = 10_000.0

# A writer with absolute thresholds on covered weight and cost, as a user writes one: the
# same function is registered (positions) and loaded as an oracle plugin (ids).
WRITER_TEXT = """
import numpy as np
from memaudit_core.plugins import oracle_writer

CALLS = []


def _keep(inst, budget, w_min, c_min):
    CALLS.append((float(np.sum(inst.weight)), float(np.sum(inst.cost)), float(budget)))
    cov = inst.coverage.tocsr()
    kept, spent, groups = [], 0.0, set()
    for i in np.argsort(inst.cost, kind="stable"):
        i = int(i)
        s, e = cov.indptr[i], cov.indptr[i + 1]
        w = float(np.dot(cov.data[s:e], inst.weight[cov.indices[s:e]]))
        g = int(inst.group_idx[i])
        c = float(inst.cost[i])
        if w >= w_min and c >= c_min and g not in groups and spent + c <= budget:
            kept.append(i)
            spent += c
            groups.add(g)
    return sorted(kept)


def strict_positions(inst, budget):
    return _keep(inst, budget, 1e-3, 1e-3)


def loose_positions(inst, budget):
    return _keep(inst, budget, 2e-4, 2e-4)


@oracle_writer
def strict(inst, budget):
    return [inst.candidate_ids[i] for i in strict_positions(inst, budget)]


@oracle_writer
def loose(inst, budget):
    return [inst.candidate_ids[i] for i in loose_positions(inst, budget)]
"""


def _shrunk(tmp_path: Path, what: str) -> tuple[Path, dict]:
    """The sample with its weights (``what="weights"``) or its costs and budgets divided."""
    doc = json.loads(SAMPLE.read_text())
    doc["id"] = f"small-tiny-{what}"
    if what == "weights":
        for unit in doc["units"]:
            unit["weight"] /= SHRINK
    else:
        for cand in doc["candidates"]:
            cand["cost"] /= SHRINK
        doc["budget"] /= SHRINK
        doc["budgets"] = [b / SHRINK for b in doc["budgets"]]
    path = tmp_path / f"tiny_{what}.json"
    path.write_text(json.dumps(doc))
    return path, doc


def _covered(doc: dict, cand: dict) -> float:
    weight = {u["id"]: u["weight"] for u in doc["units"]}
    return sum(share * weight[unit] for unit, share in cand["coverage"].items())


@pytest.fixture
def thr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    (tmp_path / f"{MODULE}.py").write_text(WRITER_TEXT)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(MODULE, None)
    mod = importlib.import_module(MODULE)
    ma.register_writer(ma.WriterInfo("s50_strict", "QA s50", "oracle", mod.strict_positions))
    ma.register_writer(ma.WriterInfo("s50_loose", "QA s50", "oracle", mod.loose_positions))
    yield mod
    ma.unregister_writer("s50_strict")
    ma.unregister_writer("s50_loose")
    for name in [n for n, info in PLUGIN_WRITERS.items() if MODULE in (info.spec or "")]:
        PLUGIN_WRITERS.pop(name, None)
    sys.modules.pop(MODULE, None)


@pytest.mark.parametrize("what", ["weights", "costs"])
def test_a_registered_writer_sees_the_package_as_a_plugin_does(
    thr: ModuleType, tmp_path: Path, what: str
) -> None:
    path, doc = _shrunk(tmp_path, what)
    # Independently of the tool: every candidate of the shrunk package covers less than 1e-3
    # (tiny weights) or costs less than 1e-3 (tiny costs), so the strict writer keeps nothing.
    assert all(_covered(doc, c) < 1e-3 or c["cost"] < 1e-3 for c in doc["candidates"])
    pkg = ma.load_package(path)
    budget = 8.0 if what == "weights" else 8.0 / SHRINK
    thr.CALLS.clear()
    mine = ma.score(pkg, budget, writer="s50_strict")
    assert mine.selected == () and mine.value == 0.0 and mine.cost == 0.0, mine.selected
    # It was called with the package's own weights, costs and budget.
    total_w = math.fsum(u["weight"] for u in doc["units"])
    total_c = math.fsum(c["cost"] for c in doc["candidates"])
    assert len(thr.CALLS) >= 1
    for seen_w, seen_c, seen_b in thr.CALLS:
        assert seen_w == pytest.approx(total_w, rel=1e-12)
        assert seen_c == pytest.approx(total_c, rel=1e-12)
        assert seen_b == budget
    plugin = ma.score(pkg, budget, writer=f"{MODULE}:strict")
    assert plugin.selected == mine.selected
    # A threshold some candidates pass: the same store either way, and it is not empty.
    loose_mine = ma.score(pkg, budget, writer="s50_loose")
    loose_plugin = ma.score(pkg, budget, writer=f"{MODULE}:loose")
    assert loose_mine.selected == loose_plugin.selected
    assert loose_mine.value == loose_plugin.value
    assert loose_mine.selected != ()
    # The CLI (the QA report's path) agrees with the library's registered writer.
    rc, out, err = run_cli(
        "score", str(path), "--budget", repr(budget), "--writer", f"{MODULE}:loose", "--json"
    )
    assert rc == 0, err
    assert tuple(json.loads(out)["selected"]) == loose_mine.selected


@pytest.mark.parametrize("workers", [1, 2])
def test_a_registered_writer_sweeps_as_its_plugin_does(
    thr: ModuleType, tmp_path: Path, workers: int
) -> None:
    tiny_w, _ = _shrunk(tmp_path, "weights")
    tiny_c, _ = _shrunk(tmp_path, "costs")
    packages = [ma.load_package(tiny_w), ma.load_package(tiny_c)]
    budgets = [4.0, 8.0, 4.0 / SHRINK, 8.0 / SHRINK]
    thr.CALLS.clear()
    names = ["s50_strict", "s50_loose", f"{MODULE}:strict", f"{MODULE}:loose"]
    res = ma.sweep(packages, budgets, names, workers=workers)
    assert res.errors == ()
    # Every call of the registered writers got one of the budgets asked for, unscaled.
    assert {b for _, _, b in thr.CALLS} <= set(budgets)
    rows = {(r.package_id, r.budget, r.method): r for r in res.rows}
    for pkg in packages:
        for b in budgets:
            for mine, plugin in (("s50_strict", f"{MODULE}:strict"), ("s50_loose", "")):
                plugin = plugin or f"{MODULE}:loose"
                a, p = rows[(pkg.id, b, mine)], rows[(pkg.id, b, plugin)]
                assert (a.value, a.cost) == (p.value, p.cost), (pkg.id, b, mine)
            # Nothing passes the strict thresholds in either package (see the score test).
            assert rows[(pkg.id, b, "s50_strict")].value == 0.0
    # The loose writer keeps something where its candidates fit.
    assert rows[(packages[0].id, 8.0, "s50_loose")].value > 0.0
    assert rows[(packages[1].id, 8.0 / SHRINK, "s50_loose")].value > 0.0


def test_a_replaced_greedy_runs_its_own_function_in_a_sweep(thr: ModuleType) -> None:
    # QA s50 (found beside the defect): run_writers batched a "greedy" registered with
    # replace=True as the reference greedy, so sweeps scored the reference store.
    pkg = ma.load_package(SAMPLE)
    ma.register_writer(ma.WriterInfo("greedy", "mine", "oracle", lambda inst, b: ()), replace=True)
    try:
        assert ma.score(pkg, 8, writer="greedy").value == 0.0
        res = ma.sweep([pkg], [8], ["greedy"])
        assert [r.value for r in res.rows] == [0.0]
    finally:
        ma.unregister_writer("greedy")
