"""Budget curves, family bands and the certification report (memaudit_core.curves), and the
two pages built on them (Budget sweep, Certification)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from streamlit.testing.v1 import AppTest

from memaudit_core import curves
from memaudit_core.analysis import compile_cached
from memaudit_core.errors import MemAuditError, UnknownNameError
from memaudit_core.generators import generate
from memaudit_core.objective import evaluate
from memaudit_core.package import load_package, replace_package
from memaudit_core.solvers import value_unit
from memaudit_core.solvers.brute import brute_force
from memaudit_core.writers import run_writer

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_packages"

# The paper's published OPT values (reference/PAPER_FAMILIES.md), budgets 3, 6, 13.
PUBLISHED_OPT = {
    "update_chain": (5.55, 7.735, 8.025),
    "temporal_interval": (3.2, 6.0, 10.635),
}


def _sample(name: str):
    return load_package(SAMPLES / f"{name}.json")


# ------------------------------------------------------------------ budget curve


@pytest.mark.parametrize("name", ["update_chain", "veg-to-pescatarian", "memaudit-small-s0"])
def test_budget_curve_matches_brute_force_per_budget(name: str) -> None:
    pkg = _sample(name)
    inst = compile_cached(pkg)
    grid = sorted({0.0, 1.0, *pkg.budget_grid()})
    methods = ["writer:gvt", "writer:density", *[f"store:{s.id}" for s in pkg.stores]]
    curve = curves.budget_curve(pkg, grid, methods)
    assert curve.budgets == tuple(grid)
    assert len(curve.points) == len(grid) * (len(methods) + 1)  # + the no-validity ablation
    no_validity = inst.pool_instance("no_validity")
    for opt in curve.opt:
        # Independent oracle: exhaustive enumeration at this budget alone.
        expected, _ = brute_force(inst, opt.budget)
        assert opt.certified and opt.label == "OPT"
        assert opt.value == pytest.approx(expected, rel=1e-9, abs=1e-12)
        ablation = next(
            p for p in curve.series("ablation:no_validity_opt") if p.budget == opt.budget
        )
        assert ablation.value == pytest.approx(
            brute_force(no_validity, opt.budget)[0], rel=1e-9, abs=1e-12
        )
        for p in (p for p in curve.points if p.budget == opt.budget):
            assert p.opt == pytest.approx(expected, rel=1e-9, abs=1e-12)
            if p.kind == "writer":
                res = run_writer(p.method_key.split(":", 1)[1], inst, opt.budget)
                assert p.value == pytest.approx(evaluate(inst, res.selected_idx))
            if p.ratio is not None:
                assert p.ratio == pytest.approx(p.value / expected)
                assert p.ratio <= 1 + 1e-9


@pytest.mark.parametrize("name", ["travel-assistant", "event-graph-50", "temporal_interval"])
def test_opt_nondecreasing_in_budget(name: str) -> None:
    pkg = _sample(name)
    total = pkg.total_cost()
    grid = curves.budget_range(0, total, max(1.0, math.ceil(total / 12)))
    curve = curves.budget_curve(pkg, grid, ["writer:gvt"], ablations=())
    values = [p.value for p in curve.opt]
    assert all(p.certified for p in curve.opt)
    assert all(b >= a - 1e-9 for a, b in zip(values, values[1:], strict=False)), values
    # gvt's value can never beat the optimum
    for p in curve.series("writer:gvt"):
        assert p.value <= p.opt + 1e-9


def test_ratio_is_none_where_opt_is_zero() -> None:
    pkg = generate("update_chain")
    curve = curves.budget_curve(pkg, [0, 0.5, 3], ["writer:gvt", "writer:density"])
    zero = [p for p in curve.points if p.budget in (0.0, 0.5)]
    assert zero and all(p.ratio is None and p.ratio_text == "n/a" for p in zero)
    assert all(p.opt == 0.0 for p in zero)
    assert [p.value for p in curve.opt[:2]] == [0.0, 0.0]
    assert all(p.ratio is not None for p in curve.points if p.budget == 3.0)
    assert any("n/a" in note for note in curve.notes)
    d = curve.to_dict()
    assert d["points"][0]["ratio"] is None


def test_budget_curve_with_time_limit_reports_incumbent_and_bound() -> None:
    # B&B with a 50 ms limit cannot close event-graph-500 at B = 655 (MILP proves it quickly).
    pkg = _sample("event-graph-500")
    curve = curves.budget_curve(
        pkg, [655], ["writer:gvt"], ablations=(), solver="bnb", time_limit=0.05
    )
    (opt,) = curve.opt
    assert not opt.certified and opt.label != "OPT" and opt.status == "limit"
    assert opt.bound > opt.value > 0 and opt.gap > 0
    assert any("not certified" in n for n in curve.notes)
    exact = curves.certification_report(pkg, [655], engines=("milp",)).rows[0].run("milp")
    assert exact.certified and opt.value <= exact.value + 1e-9 <= opt.bound + 2e-9


def test_method_keys_and_errors() -> None:
    pkg = _sample("travel-assistant")
    store = pkg.stores[0]
    methods = curves.resolve_methods(pkg, ["gvt", f"store:{store.id}", "writer:gvt"])
    assert [m.key for m in methods] == ["writer:gvt", f"store:{store.id}"]
    assert methods[1].store_key == f"store:{store.id}"
    with pytest.raises(UnknownNameError):
        curves.resolve_methods(pkg, ["writer:nope"])
    with pytest.raises(UnknownNameError):
        curves.resolve_methods(pkg, ["store:nope"])
    with pytest.raises(UnknownNameError):
        curves.resolve_methods(pkg, [], ["nope_opt"])
    with pytest.raises(MemAuditError):
        curves.budget_range(5, 1, 1)
    with pytest.raises(MemAuditError):
        curves.budget_range(0, 10, 0)
    with pytest.raises(MemAuditError):
        curves.budget_range(0, 1e6, 1)
    assert curves.budget_range(0, 1, 0.1)[-1] == 1.0


def test_budget_curve_progress_reaches_total() -> None:
    seen: list[tuple[int, int]] = []
    curves.budget_curve(
        generate("update_chain"), [3, 6], ["writer:gvt"], progress=lambda d, t: seen.append((d, t))
    )
    assert seen and seen[-1][0] == seen[-1][1]
    assert all(d <= t for d, t in seen)


# ------------------------------------------------------------------ family band


def test_family_band_counts_seeds_with_positive_opt() -> None:
    seeds = range(6)
    budgets = [0, 1, 6]
    band = curves.family_band(
        "memaudit-small", seeds, {}, budgets, ["writer:gvt", "writer:density"]
    )
    assert band.seeds == tuple(seeds)
    insts = [compile_cached(generate("memaudit-small", seed=seed)) for seed in seeds]
    positive = {b: sum(brute_force(inst, b)[0] > 1e-12 for inst in insts) for b in band.budgets}
    for row in band.rows:
        assert row.n == positive[row.budget], row
        assert row.n + row.n_undefined == len(seeds)
        if row.n:
            assert row.min_ratio <= row.mean_ratio <= row.max_ratio
            assert row.ci_low is None and row.ci_high is None  # 6 seeds: under 10 (QA s46)
        else:
            assert row.mean_ratio is None
    # budget 0: nothing fits for any seed
    assert all(r.n == 0 for r in band.rows if r.budget == 0.0)
    gvt6 = next(r for r in band.rows if r.method_key == "writer:gvt" and r.budget == 6.0)
    assert gvt6.n == 6 and gvt6.mean_ratio == pytest.approx(1.0)


def test_family_band_rejects_seed_invariant_family_and_unknown_store() -> None:
    with pytest.raises(MemAuditError):
        curves.family_band("update_chain", range(3), {}, [3], ["writer:gvt"])
    band = curves.family_band("memaudit-small", [0, 1], {}, [6], ["writer:gvt", "store:nope"])
    assert [m.key for m in band.methods] == ["writer:gvt", "ablation:no_validity_opt"]
    assert any("nope" in n for n in band.notes)


def test_family_source() -> None:
    src = curves.family_source(_sample("memaudit-small-s0"))
    assert src is not None and src.family == "memaudit-small" and src.seed == 0
    assert curves.family_source(_sample("travel-assistant")) is None
    assert curves.family_source(_sample("update_chain")) is None  # seed-invariant


# ------------------------------------------------------------------ certification report


@pytest.mark.parametrize("name", sorted(PUBLISHED_OPT))
def test_certification_report_agrees_with_published_opt(name: str) -> None:
    rep = curves.certification_report(generate(name), [3, 6, 13])
    assert rep.all_certified and not rep.disagreements and not rep.errors
    for row, published in zip(rep.rows, PUBLISHED_OPT[name], strict=True):
        assert row.certified
        assert row.agreement is not None and row.agreement <= curves.AGREEMENT_TOL
        for run in row.runs:
            assert run.applicable and run.certified and run.status == "optimal"
            assert run.value == pytest.approx(published, abs=5e-10)
            assert run.recomputed == pytest.approx(published, abs=5e-10)
            assert run.gap == 0.0 and run.time_s >= 0 and run.nodes >= 0
    rows = rep.table_rows()
    assert len(rows) == 3 and {r["cross-checked"] for r in rows} == {"yes"}
    assert rep.to_dict()["n_disagreements"] == 0


def test_certification_report_log1p_has_no_milp() -> None:
    pkg = replace_package(generate("update_chain"), saturation="log1p")
    rep = curves.certification_report(pkg, [3, 6])
    assert not rep.applicable("milp")
    for row in rep.rows:
        assert row.run("milp").note == curves.MILP_NA
        assert row.certified  # bnb alone
    assert all(r["milp"] == curves.MILP_NA for r in rep.table_rows())
    assert all(
        row.run("bnb").value == pytest.approx(brute_force(compile_cached(pkg), row.budget)[0])
        for row in rep.rows
    )


def test_certification_limited_run_reports_bound_and_gap() -> None:
    pkg = _sample("event-graph-50")
    inst = compile_cached(pkg)
    row = curves._verdict(
        63.0,
        [curves._engine_run(inst, "milp", 63.0, None), curves._engine_run(inst, "bnb", 63.0, 1e-6)],
        value_unit(inst, 63.0),
    )
    bnb = row.run("bnb")
    assert bnb.bound >= bnb.value - 1e-9
    if bnb.hit_limit:
        assert not row.certified and "limit" in row.message and not row.disagreement


def test_disagreement_is_flagged() -> None:
    good = curves.EngineRun(
        "bnb", True, "optimal", 5.0, 5.0, 5.0, 0.0, 0.1, 3, (), True, True, False
    )
    bad = curves.EngineRun(
        "milp", True, "optimal", 4.0, 4.0, 4.0, 0.0, 0.1, 1, (), True, True, False
    )
    row = curves._verdict(3.0, [good, bad], 1.0)
    assert row.disagreement and not row.certified
    assert row.agreement == pytest.approx(0.2)
    assert "DISAGREEMENT" in row.message and "5" in row.message and "4" in row.message
    rep = curves.CertificationReport("p", "h", "cap1", "words", ("bnb", "milp"), 30, (row,), 0.1)
    level, messages = rep.banner()
    assert level == "error" and len(messages) == 1
    assert "branch-and-bound = 5" in messages[0] and "HiGHS MILP = 4" in messages[0]
    assert not rep.all_certified and rep.n_certified == 0


# ------------------------------------------------------------------ pages (AppTest)


def _page(page: str, package_key: str, budget: float | None = None) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180)
    at.query_params["package"] = package_key
    if budget is not None:
        at.query_params["budget"] = str(budget)
    at.run()
    at.switch_page(page).run()
    return at


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


SWEEP = "pages/1_Budget_sweep.py"
CERT = "pages/6_Certification.py"


def test_sweep_page_default_tables() -> None:
    at = _page(SWEEP, "sample:travel-assistant")
    _ok(at)
    pkg = _sample("travel-assistant")
    n_grid = len(pkg.budget_grid())
    methods = at.multiselect(key="sweep_methods").value
    assert "writer:gvt" in methods and "writer:density" in methods
    opt_df, points_df = at.dataframe[0].value, at.dataframe[1].value
    assert len(opt_df) == n_grid
    assert len(points_df) == n_grid * (len(methods) + 1)


def test_sweep_page_range_and_methods() -> None:
    at = _page(SWEEP, "sample:update_chain")
    _ok(at)
    at.radio(key="sweep_grid").set_value("range").run()
    at.number_input(key="sweep_start").set_value(0.0).run()
    at.number_input(key="sweep_stop").set_value(10.0).run()
    at.number_input(key="sweep_step").set_value(2.0).run()
    _ok(at)
    at.multiselect(key="sweep_methods").set_value(["writer:gvt"]).run()
    at.checkbox(key="sweep_ablation").uncheck().run()
    _ok(at)
    opt_df, points_df = at.dataframe[0].value, at.dataframe[1].value
    assert list(opt_df["budget"]) == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    assert len(points_df) == 6
    # OPT = 0 at budget 0: ratio n/a, never 0 or 1 (a missing number the grid shows as "n/a",
    # its placeholder: the column stays numeric, QA s41)
    (ratio,) = points_df.loc[points_df["budget"] == 0.0, "ratio"].tolist()
    assert math.isnan(ratio)


def test_sweep_page_keeps_its_choices_across_a_visit_to_another_page() -> None:
    at = _page(SWEEP, "sample:update_chain")
    _ok(at)
    at.radio(key="sweep_grid").set_value("range").run()
    at.number_input(key="sweep_stop").set_value(10.0).run()
    at.multiselect(key="sweep_methods").set_value(["writer:gvt", "writer:greedy"]).run()
    at.checkbox(key="sweep_ablation").uncheck().run()
    at.switch_page("pages/2_Compare.py").run()
    _ok(at)
    at.switch_page(SWEEP).run()
    _ok(at)
    assert at.radio(key="sweep_grid").value == "range"
    assert at.number_input(key="sweep_stop").value == 10.0
    assert at.multiselect(key="sweep_methods").value == ["writer:gvt", "writer:greedy"]
    assert at.checkbox(key="sweep_ablation").value is False
    # An empty choice stays empty (QA: "Clear all" snapped back to the defaults).
    at.multiselect(key="sweep_methods").set_value([]).run()
    _ok(at)
    assert at.multiselect(key="sweep_methods").value == []
    # A range is kept per package: another package starts from its own grid, and the first
    # package's range is there again on return (QA: it came back on the other package).
    other = _sample("travel-assistant")
    at.selectbox(key="w_package").set_value("sample:travel-assistant").run()
    at.switch_page("pages/2_Compare.py").run()
    at.switch_page(SWEEP).run()
    _ok(at)
    assert at.number_input(key="sweep_stop").value == float(max(other.budget_grid()))
    at.selectbox(key="w_package").set_value("sample:update_chain").run()
    _ok(at)
    assert at.number_input(key="sweep_stop").value == 10.0


def test_sweep_page_time_for_the_solves() -> None:
    at = _page(SWEEP, "sample:update_chain")
    _ok(at)
    slider = at.select_slider(key="sweep_time")
    assert slider.value == 20.0 and "Shared by all the optima" in slider.help
    slider.set_value(5.0).run()
    _ok(at)
    opt_df = at.dataframe[0].value
    assert len(opt_df) == len(_sample("update_chain").budget_grid())
    assert not any("not certified" in i.value for i in at.info)


def test_sweep_page_bad_range_is_a_message_not_a_traceback() -> None:
    at = _page(SWEEP, "sample:update_chain")
    at.radio(key="sweep_grid").set_value("range").run()
    at.number_input(key="sweep_stop").set_value(1.0).run()
    at.number_input(key="sweep_start").set_value(5.0).run()
    assert not at.exception
    assert any("below start" in e.value for e in at.error)


def test_sweep_page_seed_range() -> None:
    at = _page(SWEEP, "sample:memaudit-small-s0")
    _ok(at)
    at.toggle(key="sweep_seed_range").set_value(True).run()
    at.number_input(key="sweep_seed_to").set_value(4).run()
    _ok(at)
    methods = at.multiselect(key="sweep_methods").value
    band_df = at.dataframe[2].value
    pkg = _sample("memaudit-small-s0")
    # The sidebar's budget (the package's 6) swept with the grid (QA s50).
    n_grid = len(set(pkg.budget_grid()) | {pkg.default_budget()})
    assert n_grid == 6
    assert len(band_df) == n_grid * (len(methods) + 1)
    # The counts are the same on every row: said once above the table (QA s49).
    (once,) = [
        re.sub(r"\\(.)", r"\1", c.value) for c in at.caption if c.value.startswith("On every row")
    ]
    assert "seeds with OPT > 0: 5" in once and "seeds with OPT = 0: 0" in once
    assert "seeds with OPT > 0" not in band_df.columns


def test_sweep_page_open_compare_button() -> None:
    at = _page(SWEEP, "sample:update_chain", budget=6)
    at.selectbox(key="sweep_open_budget").set_value(13.0).run()
    at.selectbox(key="sweep_open_method").set_value("writer:density").run()
    at.button(key="sweep_open").click().run()
    assert not at.exception
    assert at.session_state["ma_budget"] == 13.0
    assert at.session_state["ma_store"] == "writer:density"


def test_sweep_page_no_seed_toggle_for_handwritten_package() -> None:
    at = _page(SWEEP, "sample:veg-to-pescatarian")
    _ok(at)
    assert not [t for t in at.toggle if t.key == "sweep_seed_range"]


def test_certification_page_update_chain() -> None:
    at = _page(CERT, "sample:update_chain")
    _ok(at)
    df = at.dataframe[0].value
    assert list(df["budget"]) == [3.0, 6.0, 13.0]
    assert set(df["cross-checked"]) == {"yes"}
    assert df["bnb value"].tolist() == pytest.approx([5.55, 7.735, 8.025])
    assert df["milp value"].tolist() == pytest.approx([5.55, 7.735, 8.025])
    assert any("All 3 budgets cross-checked" in s.value.replace("\\", "") for s in at.success)


def test_certification_page_time_limit_and_sidebar_budget() -> None:
    at = _page(CERT, "sample:temporal_interval", budget=7)
    at.number_input(key="cert_time_limit").set_value(5.0).run()
    at.checkbox(key="cert_add_budget").check().run()
    _ok(at)
    df = at.dataframe[0].value
    assert list(df["budget"]) == [3.0, 6.0, 7.0, 13.0]


def test_certification_page_waits_for_a_click_on_a_large_package() -> None:
    at = _page(CERT, "sample:event-graph-500")
    _ok(at)
    assert not at.dataframe  # nothing ran yet
    assert at.button(key="cert_run") is not None
    assert any("starts on request" in i.value for i in at.info)


def test_certification_page_opens_a_hard_package_with_a_quick_look() -> None:
    # 200 candidates (under the click threshold) whose largest budgets take minutes to prove:
    # the page shows a 5 s look and waits for a click instead of running up to 6 x 2 x 30 s.
    at = _page(CERT, "gen:random_coverage:0")
    _ok(at)
    assert at.button(key="cert_run").label == "Run the full certification audit"
    assert any("quick look" in i.value and "starts on request" in i.value for i in at.info)
    table = at.dataframe[0].value  # the quick look's runs, stopped ones with their bound
    assert len(table) == 6 and "no" in set(table["cross-checked"])
    assert any("share of the 5 s all runs shared" in w.value for w in at.warning)


def test_the_full_audit_replaces_the_quick_look_and_is_remembered() -> None:
    # QA: after the click the quick look's note and button stayed above the finished audit,
    # and a full audit already run was offered again as a wait of minutes.
    at = _page(CERT, "gen:random_coverage:0")
    at.number_input(key="cert_time_limit").set_value(1.0).run()
    assert any("quick look" in i.value for i in at.info)
    at.button(key="cert_run").click().run()
    _ok(at)
    assert not any("quick look" in i.value for i in at.info)
    assert not [b for b in at.button if b.key == "cert_run"]
    full = at.dataframe[0].value
    at.number_input(key="cert_time_limit").set_value(2.0).run()
    assert any("quick look" in i.value for i in at.info)
    at.number_input(key="cert_time_limit").set_value(1.0).run()
    assert not any("quick look" in i.value for i in at.info)
    assert at.dataframe[0].value["budget"].tolist() == full["budget"].tolist()


def test_a_quick_certification_look_is_the_whole_audit_when_no_run_stops() -> None:
    pkg = _sample("update_chain")
    quick = curves.certification_report(pkg, [3, 6, 13], total_time_limit=5.0)
    full = curves.certification_report(pkg, [3, 6, 13])
    assert quick.n_stopped == 0 and quick.all_certified and quick.total_time_limit == 5.0
    strip = [{k: v for k, v in r.to_dict().items() if k != "runs"} for r in quick.rows]
    assert strip == [{k: v for k, v in r.to_dict().items() if k != "runs"} for r in full.rows]
    hard = curves.certification_report(
        generate("random_coverage", seed=0), [107.8], total_time_limit=0.5
    )
    assert hard.n_stopped >= 1 and not hard.all_certified


def test_one_engines_proof_is_certified_not_cross_checked() -> None:
    """App QA: Overview said "Certified optimal — milp" where the Certification page said
    "No OPT is claimed there" and showed a 2.2e-03 "largest relative difference" taken from
    the B&B's time-limited incumbent."""

    def run(engine, status, value, bound, certified):
        return curves.EngineRun(
            engine, True, status, value, value, bound, (bound - value) / value, 1.0, 10, (),
            True, certified, not certified,
        )  # fmt: skip

    row = curves._verdict(
        2620.0,
        [run("bnb", "limit", 727.0, 740.0, False), run("milp", "optimal", 728.628, 728.628, True)],
        1.0,
    )
    assert not row.certified and not row.disagreement
    assert row.agreement is None  # only one proven optimum: nothing to compare
    assert "milp proved 728.628 optimal, which certifies OPT on its own" in row.message
    rep = curves.CertificationReport("p", "h", "cap1", "words", ("bnb", "milp"), 30.0, (row,), 1.0)
    level, (text,) = rep.banner()
    assert level == "warning" and rep.max_agreement is None
    assert "0 of 1 budgets cross-checked" in text and "that proof certifies OPT there" in text
    assert "no OPT is claimed" not in text
    # The banner names the budgets (app QA: "At 1," was read as "at budget 1").
    # "an engine ... another": with enumeration a report has up to three engines (QA s41).
    assert "At budget 2620, an engine stopped" in text
    both_limited = curves._verdict(
        107.8155,
        [run("bnb", "limit", 131.0, 133.0, False), run("milp", "limit", 131.5, 132.2, False)],
        1.0,
    )
    rep = curves.CertificationReport(
        "p", "h", "cap1", "words", ("bnb", "milp"), 30.0, (row, both_limited), 1.0
    )
    level, (text,) = rep.banner()
    assert "At budget 107.8155, every engine stopped at the 30 s limit" in text


@settings(max_examples=200, deadline=None)
@given(start=hst.integers(0, 300), length=hst.integers(0, 300), step=hst.integers(1, 120))
def test_cli_and_app_budget_ranges_are_one_rule(start: int, length: int, step: int) -> None:
    """START:STOP:STEP in tenths: the steps up to STOP, then STOP itself when they miss it,
    in the CLI's ``--budgets`` and the app's range alike (review: 1:2:0.3 gave 4 budgets in
    the CLI and 5 in the app)."""
    from memaudit_core.specs import parse_number_list

    stop = start + length
    expected = [(start + i * step) / 10 for i in range(length // step + 1)]
    if length % step:
        expected.append(stop / 10)
    text = f"{start / 10}:{stop / 10}:{step / 10}"
    assert parse_number_list(text) == expected
    if len(expected) > curves.MAX_BUDGETS:  # the app's own cap, refused with a message
        with pytest.raises(MemAuditError, match="use a larger step"):
            curves.budget_range(start / 10, stop / 10, step / 10)
    else:
        assert list(curves.budget_range(start / 10, stop / 10, step / 10)) == expected
