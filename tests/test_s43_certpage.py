"""QA s43 (Certification page): what its tables and notes say about gaps, wide values and
capped counts, and the CLI sweep's n/a reasons.

1. HiGHS's certified gap of 4.4e-10 read "0%" (the grid's "percent" format; "0.00%" on a
   projector), its bound 1250000000 (%.6g) beside "reported" 1250000000.55 (%.12g), under a
   banner and a rule saying nothing of the 1e-9 tolerance ("proved optimality with zero gap").
2. The grid's own width clipped "1250000000" to "250000000" at 1280 and 1920 px.
3. Enumeration's note said "1,000,000,000,000,000,000 stores fit": the count's cap as a count.
4. (a) The audit table's CSV kept 12 characters of the instance hash. (b) The CLI sweep said
   "OPT = 0 at that budget, or the writer failed" of lines whose store is in no package
   swept at that budget.

Each test failed on the code before the fix.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from app_utils import open_app, upload_file
from cli_utils import run_cli
from test_s42_cert_tolerance import P6_DOC
from test_s53_gapsort import _sprintf_js

from memaudit_core import curves
from memaudit_core.compiled import compile_package
from memaudit_core.errors import SolverError
from memaudit_core.generators import generate
from memaudit_core.package import load_package
from memaudit_core.solvers import gap_percent, solve
from memaudit_core.solvers.certify import VALUE_RTOL, certified_gap_text
from memaudit_core.suites import instance_hash
from memaudit_ui.render import GAP_HELP, _gap_number

REPO = Path(__file__).resolve().parent.parent

#: QA's p6.json: P6_DOC at two budgets; HiGHS proves the optimum at 1e9 with its bound a few
#: 1e-10 above F (its feasibility tolerance).
P6_BUDGETS = {**P6_DOC, "budgets": [1000000000, 2000000001]}
#: The optimum at B = 1e9 is e0c1 alone: u1 (weight 2.5e9) covered 0.5 under cap1.
P6_OPT = 2.5e9 * 0.5


def _printf(fmt: str, value: float) -> str:
    """A number column's printf format applied as the projector table applies it."""
    assert fmt.startswith("%"), fmt  # "percent" and the like are no printf format
    return fmt % value


@pytest.fixture(scope="module")
def p6_page():
    at = open_app("app.py", 300, package="sample:update_chain")
    upload_file(at, "p6.json", json.dumps(P6_BUDGETS).encode())
    at.switch_page("pages/6_Certification.py").run()
    assert not at.exception, [e.value for e in at.exception]
    grid = next(d for d in at.dataframe if "milp gap" in d.value.columns)
    return at, grid, json.loads(grid.proto.columns)


def test_a_certified_nonzero_gap_never_reads_zero(p6_page) -> None:
    _, grid, config = p6_page
    row = grid.value[grid.value["budget"] == 1e9].iloc[0]
    assert row["milp value"] == P6_OPT
    # Independent: HiGHS's bound over the recomputed F, and not 0.
    gap = (row["milp bound"] - P6_OPT) / P6_OPT
    assert 0 < gap <= VALUE_RTOL
    # In percent since s52, as every face prints a gap (significant digits, never "0%"); a
    # number the grid's printf writes so since s53 (as text, a click on the header sorted it
    # by character).
    fmt = config["milp gap"]["type_config"]["format"]
    assert row["milp gap"] == float(gap_percent(gap).removesuffix("%")) > 0
    assert _sprintf_js(fmt, row["milp gap"]) == gap_percent(gap) != "0%"
    assert row["bnb gap"] == row["enum gap"] == 0.0 and _sprintf_js(fmt, 0.0) == "0%"
    assert all(config[f"{e} gap"]["help"].startswith(GAP_HELP) for e in ("bnb", "milp", "enum"))


def test_the_bound_shows_as_many_digits_as_the_reported_objective(p6_page) -> None:
    _, grid, config = p6_page
    row = grid.value[grid.value["budget"] == 1e9].iloc[0]
    bound_fmt = config["milp bound"]["type_config"]["format"]
    reported_fmt = config["milp reported"]["type_config"]["format"]
    # HiGHS's bound is its objective here (both 1250000000.55): one value, read one way.
    assert row["milp bound"] == row["milp reported"] > P6_OPT
    assert _printf(bound_fmt, row["milp bound"]) == _printf(reported_fmt, row["milp reported"])
    assert _printf(bound_fmt, row["milp bound"]) != _printf(bound_fmt, P6_OPT)


def test_banner_and_rule_state_the_certification_tolerance(p6_page) -> None:
    at, grid, _ = p6_page
    row = grid.value[grid.value["budget"] == 1e9].iloc[0]
    gap = (row["milp bound"] - P6_OPT) / P6_OPT
    (banner,) = [s.value.replace("\\", "") for s in at.success]  # the page's md_escape
    assert certified_gap_text(gap) in banner, banner
    assert "1e-9" in certified_gap_text(gap)
    rule = next(t.value for t in at.text if "counts only when" in t.value)
    assert "zero gap" not in rule
    assert "certification tolerance 1e-9" in rule


def test_value_columns_are_wide_enough_for_their_digits(p6_page) -> None:
    """At about 7.5 px a digit of the grid's 14 px font, plus its 2 x 8 px padding."""
    _, _, config = p6_page
    needed = 7.5 * len("1250000000.55") + 16
    for col in ("bnb value", "bnb bound", "milp value", "milp reported", "milp bound"):
        width = config[col].get("width")
        assert isinstance(width, int) and width >= needed, (col, width)


def test_budget_sweep_gap_column_shows_a_tiny_gap() -> None:
    at = open_app("pages/1_Budget_sweep.py", 300, package="sample:update_chain")
    assert not at.exception, [e.value for e in at.exception]
    grid = next(d for d in at.dataframe if "gap" in d.value.columns)
    config = json.loads(grid.proto.columns)["gap"]
    assert config["help"] == GAP_HELP
    assert set(grid.value["gap"]) == {0.0}  # every optimum of update_chain is proven
    # The column's cells read as gap_percent prints them: significant digits below 0.001%.
    fmt = config["type_config"]["format"]
    for gap, text in ((0.0, "0%"), (4.4e-10, "4.4e-8%"), (0.0353, "3.53%")):
        assert _sprintf_js(fmt, _gap_number(gap)) == gap_percent(gap) == text


# ------------------------------------------------------------------ 3. capped counts

RC150 = {"n_groups": 150, "candidates_per_group": 5}


def test_enumeration_note_says_a_capped_count_is_a_lower_limit() -> None:
    pkg = generate("random_coverage", seed=0, **RC150)
    budget = pkg.budget_grid()[-1]
    inst = compile_package(pkg)
    assert inst.group_capacity == 1
    # Independent: when the cheapest candidates of k groups fit together, every subset of
    # them fits, so at least 2^k stores fit; here 2^k > 10^18.
    cheapest = sorted(min(inst.cost[i] for i in inst.group_slice(g)) for g in range(150))
    k = sum(1 for total in itertools.accumulate(cheapest) if total <= budget)
    assert 2**k > 10**18
    rep = curves.certification_report(pkg, [budget], engines=("enum",))
    note = rep.table_rows()[0]["enum"]
    assert "at least 10^18 stores fit" in note, note
    assert "1,000,000,000,000,000,000" not in note


def test_enum_refusal_says_a_capped_count_is_a_lower_limit() -> None:
    pkg = generate("random_coverage", seed=0, **RC150)
    inst = compile_package(pkg)
    with pytest.raises(SolverError) as exc:
        solve(inst, pkg.budget_grid()[-1], "enum")
    assert "enum refuses at least 10^18 combinations" in str(exc.value)
    assert "about 1e+18" not in str(exc.value)


# ------------------------------------------------------------------ 4. minor


def test_audit_table_keeps_the_whole_instance_hash() -> None:
    at = open_app("pages/6_Certification.py", 300, package="sample:travel-assistant", budget="40")
    at.button(key="cert_audit_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    grid = next(d for d in at.dataframe if "instance hash" in d.value.columns)
    want = instance_hash(load_package(REPO / "sample_packages" / "travel-assistant.json"))
    assert len(want) == 64
    # The grid's frame is the CSV's (render.table); the column is narrow on screen instead.
    assert set(grid.value["instance hash"]) == {want}
    width = json.loads(grid.proto.columns)["instance hash"]["width"]
    assert isinstance(width, int) and width < 200


def test_cli_sweep_says_why_its_na_lines_have_no_ratio() -> None:
    veg = REPO / "sample_packages" / "veg-to-pescatarian.json"
    chain = REPO / "sample_packages" / "update_chain.json"
    # Independent: raw-logger is a store of veg only, so it has no row at update_chain's
    # budgets that veg's grid lacks.
    veg_grid = set(load_package(veg).budget_grid())
    chain_grid = set(load_package(chain).budget_grid())
    assert "raw-logger" in {s.id for s in load_package(veg).stores}
    assert "raw-logger" not in {s.id for s in load_package(chain).stores}
    absent = len(chain_grid - veg_grid)
    n_lines = 2 * len(veg_grid | chain_grid)
    code, out, err = run_cli(
        "sweep", str(veg), str(chain), "--writers", "gvt", "--stores", "raw-logger", "--quiet"
    )
    assert code == 0, err
    (line,) = [x for x in out.splitlines() if x.startswith("n/a:")]
    assert line == (
        f"n/a: {absent} of {n_lines} lines have no defined ratio ({absent} where the store is "
        "in none of the packages swept at that budget)"
    )


def test_sweep_na_footnote_counts_each_reason() -> None:
    """Each line of n = 0 by its reason: OPT = 0 rows, a failed writer, a store in no
    package at that budget."""
    from types import SimpleNamespace

    from memaudit_core.analysis import SummaryRow
    from memaudit_core.cli import summary_table

    def line(method: str, budget: float, n_undefined: int = 0) -> SummaryRow:
        return SummaryRow(method, budget, 0, n_undefined, None, None, None, None, None)

    summary = [line("gvt", 1.0, n_undefined=1), line("gvt", 2.0), line("s1", 1.0)]
    # A failure saved before failures carried their cost unit (s44): counts on every unit.
    failure = SimpleNamespace(writer="gvt", budget=2.0, cost_unit=None)
    text = summary_table(summary, [("gvt", "oracle"), ("s1", "store")], [failure])
    assert text.splitlines()[-1] == (
        "n/a: 3 of 3 lines have no defined ratio (1 with OPT = 0 at that budget, 1 where the "
        "writer failed, 1 where the store is in none of the packages swept at that budget); "
        "1 row(s) with OPT = 0 at their budget (F / OPT undefined) are left out of n, the "
        "means and the CIs"
    )
