"""Ablations across budgets and sensitivity (cost rules, group capacity, coverage noise), plus
AppTest cases for the Ablations & sensitivity page."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import kendalltau as scipy_kendalltau

from memaudit_core import robustness as rb
from memaudit_core.analysis import compile_cached
from memaudit_core.errors import MemAuditError, UnknownNameError
from memaudit_core.generators import generate
from memaudit_core.solvers import run_engine
from memaudit_core.solvers.brute import brute_force

REPO = Path(__file__).resolve().parent.parent


# --------------------------------------------------------------------------- ablations

# Published no_validity_opt ratios (reference/PAPER_FAMILIES.md) at budgets 3, 6, 13.
PAPER_NO_VALIDITY = {
    "update_chain": (0.486, 0.513, 0.698),
    "temporal_interval": (0.656, 0.700, 0.831),
}


@pytest.mark.parametrize("family", sorted(PAPER_NO_VALIDITY))
def test_ablation_drop_matches_paper_no_validity_ratios(family):
    curve = rb.ablation_curve(generate(family), [13, 3, 6], preset="no_validity")
    assert curve.budgets == (3.0, 6.0, 13.0)
    assert curve.removed_types == ("compound_update", "tombstone")
    assert curve.certified
    for point, published in zip(curve.points, PAPER_NO_VALIDITY[family], strict=True):
        assert round(point.pool_opt / point.full_opt, 3) == published
        assert point.drop == pytest.approx(1 - point.pool_opt / point.full_opt, abs=1e-15)
        assert round(1 - point.drop, 3) == published


def test_ablation_removed_types_equals_preset_and_generic_resolves_types():
    pkg = generate("update_chain")
    a = rb.ablation_curve(pkg, [3, 6, 13], preset="no_validity_opt")
    b = rb.ablation_curve(pkg, [3, 6, 13], ["tombstone", "compound_update"])
    assert [p.pool_opt for p in a.points] == [p.pool_opt for p in b.points]
    assert b.pool == "without:compound_update,tombstone"
    g = rb.ablation_curve(pkg, [6], preset="generic")
    # update_chain holds raw_span, atomic_fact, summary, tombstone, compound_update.
    assert g.removed_types == ("compound_update", "tombstone")
    assert g.n_removed == 6


def test_ablation_default_grid_absent_types_zero_opt_and_errors():
    pkg = generate("update_chain")
    curve = rb.ablation_curve(pkg, removed_types=["graph_edge"])
    assert curve.budgets == pkg.budget_grid()
    assert curve.absent_types == ("graph_edge",) and curve.n_removed == 0
    assert all(p.drop == 0.0 for p in curve.points)
    assert any("no candidate of type graph_edge" in n for n in curve.notes)
    zero = rb.ablation_curve(pkg, [0, 3], preset="no_validity")
    assert zero.points[0].drop is None and zero.points[0].ratio is None
    assert any("undefined" in n for n in zero.notes)
    json.dumps(zero.to_dict())
    with pytest.raises(UnknownNameError):
        rb.ablation_curve(pkg, [3], preset="nothing")
    with pytest.raises(MemAuditError):
        rb.ablation_curve(pkg, [3], ["tombstone"], preset="generic")
    with pytest.raises(MemAuditError):
        rb.ablation_curve(pkg, [3], [])


# --------------------------------------------------------------------------- capacity


def _small_random(seed: int):
    return generate(
        "random_coverage",
        seed=seed,
        n_groups=5,
        candidates_per_group=3,
        units_per_group=2,
        min_cover=1,
        max_cover=4,
        integer_costs=True,
    )


@pytest.mark.parametrize("seed", range(12))
def test_capacity_two_bnb_and_milp_agree_with_brute_force(seed):
    pkg = _small_random(seed)
    inst = compile_cached(pkg).with_capacity(2)
    total = inst.total_cost
    for frac in (0.15, 0.35, 0.6):
        budget = math.floor(total * frac)
        best, sel = brute_force(inst, budget)
        assert inst.is_feasible(sel, budget)
        for engine in ("bnb", "milp"):
            raw, _ = run_engine(engine, inst, budget)
            assert raw.status == "optimal"
            assert inst.is_feasible(raw.selected_idx, budget), engine
            assert raw.value == pytest.approx(best, rel=1e-9, abs=1e-9), (engine, budget)


def test_capacity_sensitivity_reports_k2_vs_k1():
    pkg = generate("update_chain")
    cap = rb.capacity_sensitivity(pkg, [3, 6, 13])
    assert cap.k == 2 and cap.all_agree
    for p in cap.points:
        assert p.proven and p.cross_checked and p.agree
        assert p.opt_k >= p.opt_1 - 1e-12
        assert p.gain == pytest.approx(p.opt_k / p.opt_1)
        assert {e for e, _ in p.engine_values} == {"bnb", "milp"}
        inst = compile_cached(pkg).with_capacity(2)
        assert brute_force(inst, p.budget)[0] == pytest.approx(p.opt_k, rel=1e-9)
    # At budget 13 the k = 2 optimum keeps two candidates of some groups.
    assert cap.points[-1].multi_groups > 0
    json.dumps(cap.to_dict())
    with pytest.raises(MemAuditError):
        rb.capacity_sensitivity(pkg, [3], k=0)


# --------------------------------------------------------------------------- cost rules


def test_cost_rule_sensitivity_as_stored_is_reference_and_budgets_rescale():
    pkg = generate("update_chain")
    sens = rb.cost_rule_sensitivity(
        pkg, [3, 6, 13], ["words", "bytes_overhead"], ["gvt", "density", "greedy"]
    )
    assert [r.rule for r in sens.rules] == ["as_stored", "words", "bytes_overhead"]
    stored = sens.rule("as_stored")
    assert stored.scale == 1.0 and stored.tau == 1.0 and stored.rankings_hold
    assert all(r.delta == 0.0 for r in stored.rows)
    # The totals each rule gives, from the candidates' texts (not from recost_package, which
    # the function under test calls): words, and 8 + ceil(utf8 bytes / 24).
    by_hand = {
        "words": sum(len(c.text.split()) for c in pkg.candidates),
        "bytes_overhead": sum(8 + math.ceil(len(c.text.encode()) / 24) for c in pkg.candidates),
    }
    stored_total = sum(c.cost for c in pkg.candidates)
    for r in sens.rules[1:]:
        assert r.total_cost == by_hand[r.rule]
        assert r.scale == pytest.approx(by_hand[r.rule] / stored_total)
        _, n_re, n_kept = rb.recost_package(pkg, r.rule)
        assert n_re == len(pkg.candidates) and n_kept == 0
        for row in r.rows:
            assert row.scaled_budget == pytest.approx(row.budget * r.scale)
            assert (
                row.stored_ratio
                == stored.rows[
                    [(x.writer, x.budget) for x in stored.rows].index((row.writer, row.budget))
                ].ratio
            )
        assert r.tau is None or -1.0 <= r.tau <= 1.0
    json.dumps(sens.to_dict())


def test_cost_rule_keeps_stored_cost_without_text_and_says_so():
    pkg = generate("update_chain")
    cands = tuple(replace(c, text="") if i % 3 == 0 else c for i, c in enumerate(pkg.candidates))
    pkg = replace(pkg, candidates=cands)
    repkg, n_re, n_kept = rb.recost_package(pkg, "words")
    assert n_kept == 6 and n_re == 12
    for old, new in zip(pkg.candidates, repkg.candidates, strict=True):
        if not old.text:
            assert new.cost == old.cost
        else:
            assert new.cost == len(old.text.split())
    sens = rb.cost_rule_sensitivity(pkg, [6], ["words"], ["gvt"])
    words = sens.rule("words")
    assert words.n_kept_stored == 6 and "without text kept their stored cost" in words.note


def test_cost_rule_unknown_and_unavailable(monkeypatch):
    pkg = generate("update_chain")
    with pytest.raises(UnknownNameError):
        rb.cost_rule_sensitivity(pkg, [6], ["furlongs"])
    monkeypatch.setattr(rb, "available_cost_rules", lambda: ("words",))
    sens = rb.cost_rule_sensitivity(pkg, [6], ["tokens_o200k"], ["gvt"])
    tok = sens.rule("tokens_o200k")
    assert not tok.available and tok.rows == () and "unavailable" in tok.note


# --------------------------------------------------------------------------- noise


@pytest.mark.parametrize("mode", rb.NOISE_MODES)
def test_noise_level_zero_changes_nothing(mode):
    pkg = generate("temporal_interval")
    inst = compile_cached(pkg)
    noisy, changed = rb.perturb_coverage(inst, mode, 0.0, np.random.default_rng(3))
    assert changed == 0
    assert (noisy.coverage != inst.coverage).nnz == 0
    res = rb.noise_sensitivity(pkg, mode, 0.0, draws=3, seed=1, budgets=[3, 6, 13])
    assert all(r.mean_abs_delta == 0.0 for r in res.writer_rows)
    assert res.same_ranking_share == 1.0 and res.mean_opt_change == 0.0
    assert all(t is None or t == pytest.approx(1.0) for t in res.taus)


@pytest.mark.parametrize("mode,level", [("flip", 0.3), ("shrink", 0.5), ("jitter", 0.2)])
def test_noise_deterministic_per_seed_and_valid(mode, level):
    pkg = generate("memaudit-small", seed=2)
    a = rb.noise_sensitivity(pkg, mode, level, draws=6, seed=11, budgets=[2, 4, 8])
    b = rb.noise_sensitivity(pkg, mode, level, draws=6, seed=11, budgets=[2, 4, 8])
    c = rb.noise_sensitivity(pkg, mode, level, draws=6, seed=12, budgets=[2, 4, 8])
    assert a.to_dict() == b.to_dict()
    assert a.to_dict() != c.to_dict()
    assert a.mean_cells_changed > 0
    json.dumps(a.to_dict())
    # Perturbed coverage stays a valid coverage matrix, and the original is untouched.
    inst = compile_cached(pkg)
    before = inst.coverage.copy()
    for child in np.random.default_rng(5).spawn(10):
        noisy, _ = rb.perturb_coverage(inst, mode, level, child)
        data = noisy.coverage.data
        assert np.all(data > 0) and np.all(data <= 1)
        assert noisy.coverage.shape == inst.coverage.shape
    assert (inst.coverage != before).nnz == 0


def test_noise_first_draws_do_not_depend_on_draw_count():
    inst = compile_cached(generate("memaudit-small", seed=0))
    few = np.random.default_rng(7).spawn(2)
    many = np.random.default_rng(7).spawn(9)
    for x, y in zip(few, many[:2], strict=True):
        a, _ = rb.perturb_coverage(inst, "flip", 0.4, x)
        b, _ = rb.perturb_coverage(inst, "flip", 0.4, y)
        assert (a.coverage != b.coverage).nnz == 0


def test_flip_moves_or_drops_selected_cells():
    inst = compile_cached(generate("temporal_interval"))
    noisy, changed = rb.perturb_coverage(inst, "flip", 1.0, np.random.default_rng(0))
    assert changed == inst.coverage.nnz  # level 1 selects every covered cell
    orig = inst.coverage.toarray() > 0
    new = noisy.coverage.toarray() > 0
    # No selected cell stays where it was: each was dropped or moved to an uncovered unit.
    assert not np.any(orig & new)
    assert np.all(noisy.coverage.sum(axis=1) <= inst.coverage.sum(axis=1) + 1e-12)


def test_noise_rejects_bad_settings():
    pkg = generate("update_chain")
    with pytest.raises(UnknownNameError):
        rb.noise_sensitivity(pkg, "smudge", 0.1, draws=1)
    with pytest.raises(MemAuditError):
        rb.noise_sensitivity(pkg, "flip", 1.5, draws=1)
    with pytest.raises(MemAuditError):
        rb.noise_sensitivity(pkg, "jitter", -0.1, draws=1)
    with pytest.raises(MemAuditError):
        rb.noise_sensitivity(pkg, "shrink", 0.1, draws=0)
    # QA: "x" and -1 raised bare ValueErrors, 1.7 was truncated to seed 1.
    for seed in ("x", -1, 1.7, None):
        with pytest.raises(MemAuditError, match="seed must be an integer >= 0"):
            rb.noise_sensitivity(pkg, "shrink", 0.1, draws=1, seed=seed)
        with pytest.raises(MemAuditError, match="seed must be an integer >= 0"):
            generate("update_chain", seed=seed)
    with pytest.raises(MemAuditError, match="draws must be an integer >= 1"):
        rb.noise_sensitivity(pkg, "shrink", 0.1, draws="x")


def test_kendall_tau_matches_scipy_tau_b():
    rng = np.random.default_rng(0)
    for _ in range(40):
        n = int(rng.integers(3, 9))
        a = rng.integers(0, 4, n).astype(float)  # ties on purpose
        b = rng.integers(0, 4, n).astype(float)
        ours = rb.kendall_tau(list(a), list(b))
        ref = scipy_kendalltau(a, b).statistic
        if math.isnan(ref):
            assert ours is None
        else:
            assert ours == pytest.approx(ref, abs=1e-12)
    assert rb.kendall_tau([1.0, None, 0.5], [0.2, 0.9, 0.1]) == 1.0
    assert rb.same_ranking([1.0, 0.5], [None, 0.3]) is None


# --------------------------------------------------------------------------- the page

PAGE = "pages/5_Ablations_and_sensitivity.py"


def _page(sample: str):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180)
    at.query_params["package"] = f"sample:{sample}"
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def test_page_update_chain_ablation_and_all_sensitivities():
    at = _page("update_chain")
    abl = at.dataframe[0].value
    assert list(abl["budget"]) == [3.0, 6.0, 13.0]
    # Numbers shown at three decimals (QA s41: they were text, and so was the CSV).
    assert [round(x, 3) for x in abl["pool / OPT"]] == [0.486, 0.513, 0.698]
    assert [round(x, 3) for x in abl["drop"]] == [0.514, 0.487, 0.302]
    labels = [m.label for m in at.metric]
    assert "Mean Kendall tau" in labels and "Ranking unchanged" in labels
    # Six tables: ablations, cost ratios, ranking, rule rows, capacity, noise.
    assert len(at.dataframe) == 6
    cap = at.dataframe[4].value
    assert set(cap["engines agree"]) == {"yes"}
    at.multiselect(key="abl_presets").set_value(["no_validity", "generic"]).run()
    assert not at.exception
    assert set(at.dataframe[0].value["pool"]) == {"no_validity", "generic"}
    # The time per curve is an input; the same optima at 5 s as at 20 s on a small package.
    assert at.select_slider(key="abl_time").value == 20.0
    at.select_slider(key="abl_time").set_value(5.0).run()
    assert not at.exception and not at.error
    again = at.dataframe[0].value
    assert [round(x, 3) for x in again.loc[again["pool"] == "no_validity", "pool / OPT"]] == [
        0.486,
        0.513,
        0.698,
    ]


def test_page_noise_level_zero_shows_no_change():
    at = _page("veg-to-pescatarian")
    at.number_input(key="abl_noise_level").set_value(0.0).run()
    at.number_input(key="abl_noise_draws").set_value(2).run()
    assert not at.exception and not at.error
    noise = at.dataframe[-1].value
    assert set(noise["mean |Δ ratio|"]) == {0.0}
    assert next(m.value for m in at.metric if m.label == "Ranking unchanged") == "100%"


def test_page_large_package_waits_for_run_buttons():
    at = _page("event-graph-50")
    labels = [b.label for b in at.button]
    assert "Run noise sensitivity" in labels and "Run cost-rule sensitivity" in labels
    assert len(at.dataframe) == 1  # only the ablation table until asked
    at.number_input(key="abl_noise_draws").set_value(1).run()
    at.button(key="abl_btn_noise").click().run()
    assert not at.exception and not at.error
    assert "Mean Kendall tau" in [m.label for m in at.metric]


def test_removed_types_given_as_one_string_is_one_type():
    """QA: "tombstone" was read letter by letter (pool without:b,e,m,n,o,s,t, drops 0)."""
    pkg = generate("update_chain")
    one = rb.ablation_curve(pkg, [3, 6], "tombstone")
    listed = rb.ablation_curve(pkg, [3, 6], ["tombstone"])
    assert one.pool == listed.pool == "without:tombstone"
    assert one.drops == listed.drops and max(one.drops) > 0


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda pkg: rb.ablation_curve(pkg, 6), r"for one budget: \[6\]"),
        (lambda pkg: rb.cost_rule_sensitivity(pkg, 6), r"for one budget: \[6\]"),
        (lambda pkg: rb.capacity_sensitivity(pkg, [6], k=None), "integer >= 1"),
        (lambda pkg: rb.capacity_sensitivity(pkg, [6], k=True), "integer >= 1"),
        (lambda pkg: rb.capacity_sensitivity(pkg, [6], k=2.7), "integer >= 1"),
        (lambda pkg: rb.capacity_sensitivity(pkg, [6], engine_time_limit=-1), "> 0"),
        (lambda pkg: rb.capacity_sensitivity(pkg, [6], engines=[]), "no engines"),
        (lambda pkg: rb.noise_sensitivity(pkg, "shrink", "0.2", budgets=[6]), "must be a number"),
        (lambda pkg: rb.noise_sensitivity(pkg, "shrink", True, budgets=[6]), "must be a number"),
    ],
)
def test_bad_arguments_are_user_errors(call, match):
    """Library QA round 2: raw TypeError / OverflowError, or silently accepted values."""
    with pytest.raises(MemAuditError, match=match):
        call(generate("update_chain"))


def test_a_lone_name_is_one_name():
    """A lone "words" was read as the rules 'w', 'o', ... (library QA round 2)."""
    pkg = generate("update_chain")
    res = rb.cost_rule_sensitivity(pkg, [6], "words")
    assert "words" in {r.rule for r in res.rules}
    assert rb.capacity_sensitivity(pkg, [6], 2, engines="bnb").points[0].opt_k > 0
