"""The sample packages in sample_packages/: valid, documented, feasible stores, reproducible."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from memaudit_core.compiled import compile_package
from memaudit_core.generators import FAMILIES, generate
from memaudit_core.package import (
    CANDIDATE_TYPES,
    UNIT_KINDS,
    Package,
    dumps_package,
    load_package,
)
from memaudit_core.solvers.brute import brute_force

SAMPLES_DIR = Path(__file__).resolve().parent.parent / "sample_packages"
SAMPLE_FILES = sorted(SAMPLES_DIR.glob("*.json"))
SAMPLE_IDS = [p.name for p in SAMPLE_FILES]


def _build_module():
    spec = importlib.util.spec_from_file_location("build_samples", SAMPLES_DIR / "build_samples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUILD = _build_module()
HAND_WRITTEN = [SAMPLES_DIR / name for name in BUILD.HAND_WRITTEN]


def _value(pkg: Package, selection) -> float:
    """F under cap1, from plain dicts (independent of the compiled arrays)."""
    weights = pkg.unit_weights()
    by_id = {c.id: c for c in pkg.candidates}
    z: dict[str, float] = {}
    for cid in selection:
        for unit, a in by_id[cid].coverage.items():
            z[unit] = z.get(unit, 0.0) + a
    return sum(weights[u] * min(1.0, v) for u, v in z.items())


def _exact_opt(pkg: Package, budget: float) -> float:
    """Exhaustive search over one-per-group stores with budget pruning (test oracle)."""
    weights = pkg.unit_weights()
    order = sorted(pkg.experiences, key=lambda e: (e.time, e.id))
    groups = [[c for c in pkg.candidates if c.experience == e.id] for e in order]
    best = 0.0
    z: dict[str, float] = {}

    def rec(g: int, remaining: float, value: float) -> None:
        nonlocal best
        if g == len(groups):
            best = max(best, value)
            return
        rec(g + 1, remaining, value)
        for cand in groups[g]:
            if cand.cost > remaining + 1e-9:
                continue
            gain = 0.0
            for unit, a in cand.coverage.items():
                old = z.get(unit, 0.0)
                gain += weights[unit] * (min(1.0, old + a) - min(1.0, old))
                z[unit] = old + a
            rec(g + 1, remaining - cand.cost, value + gain)
            for unit, a in cand.coverage.items():
                z[unit] -= a

    rec(0, budget, 0.0)
    return best


def test_samples_exist():
    names = set(SAMPLE_IDS)
    assert set(BUILD.HAND_WRITTEN) <= names
    for name, family, _seed, _params in BUILD.GENERATED:
        if family in FAMILIES:
            assert name in names, f"{name} missing: run python sample_packages/build_samples.py"


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=SAMPLE_IDS)
def test_sample_validates_and_is_canonical(path):
    pkg = load_package(path)
    assert pkg.warnings == ()
    assert pkg.title.strip() and pkg.description.strip()
    assert pkg.default_budget() > 0
    # Written in canonical form (save_package), so diffs stay minimal.
    assert path.read_text(encoding="utf-8") == dumps_package(pkg)


def test_readme_lists_every_sample_and_nothing_else():
    readme = (SAMPLES_DIR / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"`([^`\s]+\.json)`", readme))
    for name in SAMPLE_IDS:
        assert name in listed, f"{name} is not listed in sample_packages/README.md"
    buildable = {spec[0] for spec in BUILD.GENERATED}
    for name in listed:
        assert name in SAMPLE_IDS or name in buildable, f"README lists unknown file {name}"


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=SAMPLE_IDS)
def test_stores_are_feasible(path):
    pkg = load_package(path)
    group_of = {c.id: c.experience for c in pkg.candidates}
    cost_of = {c.id: c.cost for c in pkg.candidates}
    budget = pkg.default_budget()
    for store in pkg.stores:
        if store.is_external:
            # External memories are not package candidates (no groups); an over-budget store
            # is pruned when scored. They must be costed and carry coverage rows.
            assert store.label and store.system and not store.select, store.id
            assert all(m.cost > 0 and m.created_at for m in store.memories), store.id
            assert any(m.coverage for m in store.memories), store.id
            continue
        assert store.select, store.id
        groups = [group_of[cid] for cid in store.select]
        assert len(groups) == len(set(groups)), f"{store.id} holds two candidates of one group"
        cost = sum(cost_of[cid] for cid in store.select)
        assert cost <= budget, f"{store.id} costs {cost} > default budget {budget}"
        assert cost >= 0.75 * budget, f"{store.id} costs {cost}, far below budget {budget}"
        assert store.label


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=SAMPLE_IDS)
def test_generated_sample_equals_fresh_generate(path):
    pkg = load_package(path)
    if pkg.meta.get("source") == "hand-written":
        assert path.name in BUILD.HAND_WRITTEN + BUILD.EXTERNAL_DEMOS
        return
    meta = pkg.meta
    assert {"generator", "params", "seed"} <= set(meta), path.name
    spec = next(s for s in BUILD.GENERATED if s[0] == path.name)
    assert (spec[1], spec[2]) == (meta["generator"], meta["seed"])
    fresh = generate(meta["generator"], meta["seed"], **meta["params"])
    assert fresh.content_hash() == pkg.content_hash()
    assert BUILD.build_one(spec[1], spec[2], spec[3]).content_hash() == pkg.content_hash()


def test_build_check_passes(capsys):
    assert BUILD.main(["--check"]) == 0


# --------------------------------------------------------------------------- hand-written


@pytest.mark.parametrize("path", HAND_WRITTEN, ids=BUILD.HAND_WRITTEN)
def test_hand_written_content(path):
    pkg = load_package(path)
    assert pkg.cost_unit == "words"
    for cand in pkg.candidates:
        assert cand.text.strip(), cand.id
        assert cand.cost == len(cand.text.split()), f"{cand.id}: cost is not the word count"
        assert cand.type in CANDIDATE_TYPES
    for exp in pkg.experiences:
        assert exp.text.strip() and exp.session, exp.id
        assert any(c.experience == exp.id for c in pkg.candidates), exp.id
    weights = pkg.unit_weights()
    for unit in pkg.units:
        assert unit.kind in UNIT_KINDS and unit.text.strip(), unit.id
        assert weights[unit.id] > 0, unit.id
    assert pkg.queries
    for query in pkg.queries:
        assert query.text.strip() and query.answer.strip() and query.requires, query.id
    kinds = {u.kind for u in pkg.units}
    assert {"stale", "current_truth", "invalidation", "temporal_order"} <= kinds
    assert {"tombstone", "compound_update", "raw_span", "atomic_fact", "summary"} <= {
        c.type for c in pkg.candidates
    }
    assert len(pkg.stores) == 3
    assert pkg.budget in pkg.budgets


@pytest.mark.parametrize("path", HAND_WRITTEN, ids=BUILD.HAND_WRITTEN)
def test_hand_written_writers_differ_at_default_budget(path):
    pkg = load_package(path)
    budget = pkg.default_budget()
    opt = _exact_opt(pkg, budget)
    values = {s.id: _value(pkg, s.select) for s in pkg.stores}
    assert all(v <= opt + 1e-9 for v in values.values())
    # The validity-aware writer beats the fact writer, which beats the raw logger; OPT is
    # meaningfully above the fact writer (its stale-and-current store misses invalidations).
    fact = next(v for k, v in values.items() if k.startswith("fact"))
    assert values["validity-aware"] > fact > values["raw-logger"] > 0
    assert fact / opt < 0.75


def test_veg_example_matches_brute_force():
    pkg = load_package(SAMPLES_DIR / "veg-to-pescatarian.json")
    inst = compile_package(pkg)
    for budget in pkg.budget_grid():
        value, chosen = brute_force(inst, budget)
        assert value == pytest.approx(_exact_opt(pkg, budget), abs=1e-9)
        assert value == pytest.approx(_value(pkg, inst.ids(chosen)), abs=1e-9)
    # At the default budget the validity-aware store is optimal.
    value, _ = brute_force(inst, pkg.default_budget())
    assert _value(pkg, pkg.store("validity-aware").select) == pytest.approx(value)
