"""Fifty-ninth session: the tie search's exchange deltas (``closest._Mover._deltas``) correct
the units an added and a dropped memory share in one vectorised pass instead of a loop of
``np.ix_`` blocks per shared unit. The oracle is that loop, kept here verbatim: the matrices must
be equal bit for bit, so no tie decision can change."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

import memaudit_core as ma
from memaudit_core import closest
from memaudit_core.compiled import compile_package
from memaudit_core.generators import generate
from memaudit_core.objective import get_saturation


def _loop_deltas(mover: closest._Mover, ins: np.ndarray, outs: np.ndarray):
    """The fifty-eighth session's ``_deltas``, unchanged."""
    inst, h, z, w = mover.inst, mover.h, mover.z, mover.inst.weight
    in_row, in_col, in_amt = closest._entries(inst, ins)
    out_row, out_col, out_amt = closest._entries(inst, outs)
    gain = np.bincount(in_row, w[in_col] * (h(z[in_col] + in_amt) - h(z[in_col])), ins.size)
    loss = np.bincount(out_row, w[out_col] * (h(z[out_col]) - h(z[out_col] - out_amt)), outs.size)
    pair = gain[:, None] - loss[None, :]
    shared = np.intersect1d(in_col, out_col)
    for u in shared.tolist():
        at_in, at_out = in_col == u, out_col == u
        s_rows, s_amt = in_row[at_in], in_amt[at_in]
        o_rows, o_amt = out_row[at_out], out_amt[at_out]
        both = z[u] - o_amt[None, :] + s_amt[:, None]
        correction = (
            h(both) - h(z[u] + s_amt)[:, None] - h(z[u] - o_amt)[None, :] + h(np.array([z[u]]))[0]
        )
        pair[np.ix_(s_rows, o_rows)] += w[u] * correction
    return gain, -loss, pair


@pytest.fixture(scope="module")
def sqrt_saturation():
    sat = ma.register_saturation(
        ma.Saturation("s59_sqrt", np.sqrt, math.sqrt, "h(z) = sqrt(z)", math.inf)
    )
    yield sat.name
    ma.unregister_saturation(sat.name)


def _instances(extra_saturation: str):
    for family, seed in (
        ("memaudit-small", 3),
        ("event_graph", 1),
        ("random_coverage", 2),
        ("redundancy_heavy", 0),
    ):
        inst = compile_package(generate(family, seed=seed))
        for saturation in ("cap1", "linear", extra_saturation):
            yield replace(inst, saturation=saturation)


def test_equal_to_the_per_unit_loop_bit_for_bit(sqrt_saturation) -> None:
    rng = np.random.default_rng(59)
    cases = shared_cells = 0
    for inst in _instances(sqrt_saturation):
        assert get_saturation(inst.saturation).name == inst.saturation
        for _ in range(6):
            n_cur = int(rng.integers(1, max(2, inst.n_candidates // 3)))
            current = {int(c) for c in rng.choice(inst.n_candidates, n_cur, replace=False)}
            mover = closest._Mover(inst, set(current), float(inst.cost.sum()), 0.0, 1e-9)
            rest = np.setdiff1d(np.arange(inst.n_candidates), sorted(current))
            ins = np.sort(rng.choice(rest, min(rest.size, int(rng.integers(1, 40))), False))
            cur = np.array(sorted(current), dtype=np.int64)
            outs = np.sort(rng.choice(cur, min(cur.size, int(rng.integers(1, 40))), False))
            got, want = mover._deltas(ins, outs), _loop_deltas(mover, ins, outs)
            for g, wv in zip(got, want, strict=True):
                assert g.shape == wv.shape
                assert np.array_equal(g, wv)
            cases += 1
            pair_plain = want[0][:, None] + want[1][None, :]
            shared_cells += int((want[2] != pair_plain).sum())
    assert cases == 72
    # The shared-unit correction is exercised, not only the disjoint sum.
    assert shared_cells > 100


def test_no_shared_unit_and_empty_sides() -> None:
    inst = compile_package(generate("memaudit-small", seed=0))
    mover = closest._Mover(inst, {0}, float(inst.cost.sum()), 0.0, 1e-9)
    empty = np.zeros(0, dtype=np.int64)
    for ins, outs in ((empty, np.array([0])), (np.array([1, 2]), empty), (empty, empty)):
        got = mover._deltas(ins, outs)
        want = _loop_deltas(mover, ins, outs)
        for g, wv in zip(got, want, strict=True):
            assert g.shape == wv.shape and np.array_equal(g, wv)
    assert list(closest._shared_entry_pairs(np.array([1, 2]), np.array([3]))) == []


@pytest.mark.parametrize("max_pairs", [1, 3, 8, None])
def test_pairs_match_a_brute_force_listing(max_pairs) -> None:
    rng = np.random.default_rng(5)
    for _ in range(50):
        in_col = rng.integers(0, 8, int(rng.integers(0, 15)))
        out_col = rng.integers(0, 8, int(rng.integers(0, 15)))
        listed = []
        for in_at, out_at, unit in closest._shared_entry_pairs(in_col, out_col, max_pairs):
            # A pass holds whole units, and more than max_pairs only as one unit's block.
            assert max_pairs is None or in_at.size <= max_pairs or np.unique(unit).size == 1
            listed += zip(unit.tolist(), in_at.tolist(), out_at.tolist(), strict=True)
        brute = sorted(
            (int(u), i, o)
            for i, u in enumerate(in_col.tolist())
            for o, v in enumerate(out_col.tolist())
            if u == v
        )
        assert listed == brute


@pytest.mark.parametrize("per_pass", [1, 7, 50])
def test_passes_of_any_size_give_the_same_matrices(monkeypatch, per_pass) -> None:
    """Memory bound: the corrections in several passes equal the loop's bit for bit."""
    monkeypatch.setattr(closest, "SHARED_PAIRS_PER_PASS", per_pass)
    inst = compile_package(generate("random_coverage", seed=4))
    rng = np.random.default_rng(per_pass)
    for _ in range(5):
        current = {int(c) for c in rng.choice(inst.n_candidates, 30, replace=False)}
        mover = closest._Mover(inst, set(current), float(inst.cost.sum()), 0.0, 1e-9)
        rest = np.setdiff1d(np.arange(inst.n_candidates), sorted(current))
        ins = np.sort(rng.choice(rest, 25, replace=False)).astype(np.int64)
        outs = np.array(sorted(current), dtype=np.int64)
        for g, wv in zip(mover._deltas(ins, outs), _loop_deltas(mover, ins, outs), strict=True):
            assert np.array_equal(g, wv)
