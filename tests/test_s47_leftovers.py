"""Leftovers of session 47's fixes.

1. ``memaudit show`` printed the budget of a saved Overview, Compare view and Evidence view
   (and the budget lists of saved sweeps and curves, and ``audit``'s budgets) with ``:g``: a
   budget of 99.9999999 read "100" and 1234567 read "1.23457e+06", although ``solve`` and
   ``score`` print them to ten digits since QA s47; the budget and cost columns of its tables
   (six significant digits), the sweep summary's budget column and ``validate``'s total cost
   (four decimals) did the same.
2. (writers' tie rule) ``writers`` kept its own copy of the tie tolerance; it now uses the
   solvers' shared one (:mod:`memaudit_core.solvers.enum`). The formula is the same, so no
   selection changes and no test here fails on the base: the writer tests cover it.
3. ``memaudit audit`` on a log1p package noted "bnb and milp are tried on every check" right
   under "milp skipped: ... saturation 'log1p'".

Expected texts are written out by hand: 99.9999999 and 1234567 as typed, and a cost of
2 words x 123456.7 = 246913.4 as the number it is.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_utils import run_cli
from package_utils import rescaled, write_json

import memaudit_core as ma
from memaudit_core import reports

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"
UPDATE_CHAIN = SAMPLES / "update_chain.json"


def _show(tmp_path: Path, name: str, doc: dict) -> str:
    path = write_json(tmp_path, f"{name}.json", doc)
    rc, out, err = run_cli("show", str(path))
    assert (rc, err) == (0, ""), err
    return out


# --------------------------------------------------------------------- 1. budgets in show


def test_show_prints_view_budgets_to_their_digits(tmp_path):
    chain = ma.load_package(str(UPDATE_CHAIN))
    for budget, text in ((99.9999999, "99.9999999"), (1234567.0, "1234567")):
        head = _show(tmp_path, "ov", reports.overview(chain, budget).to_dict()).splitlines()[0]
        assert f"; budget {text} words; OPT " in head, head
        head = _show(
            tmp_path, "cv", ma.compare_view(chain, budget, writer="density").to_dict()
        ).splitlines()[0]
        assert f"(writer) at budget {text} words: F " in head, head
        head = _show(
            tmp_path, "ev", ma.evidence_view(chain, budget, writer="density").to_dict()
        ).splitlines()[0]
        assert f"against OPT at budget {text} words; kinds " in head, head


def test_show_prints_overview_costs_to_their_digits(tmp_path):
    # Every candidate costs 123456.7 x its words. At 6 words the stores of update_chain cost
    # 5 words (617283.5) or all 6 (740740.2): fact_only and summary_only spend the budget.
    pkg = rescaled(ma.load_package(str(UPDATE_CHAIN)), 1.0, 123456.7)
    out = _show(tmp_path, "ov", reports.overview(pkg, 6 * 123456.7).to_dict())
    assert "; budget 740740.2 words; " in out.splitlines()[0]
    costs = {line.split()[0]: line.split()[-1] for line in out.splitlines()[3:]}
    assert costs == {
        "gvt": "617283.5",
        "density": "617283.5",
        "greedy": "617283.5",
        "fact_only": "740740.2",
        "summary_only": "740740.2",
        "recency_raw": "617283.5",
        "no_validity_gvt": "617283.5",
    }


def test_show_prints_a_saved_curves_budgets_to_their_digits(tmp_path):
    chain = ma.load_package(str(UPDATE_CHAIN))
    curve = ma.budget_curve(chain, [3, 99.9999999], ["density"])
    out = _show(tmp_path, "curve", curve.to_dict())
    assert out.splitlines()[0].endswith("budgets (words) 3, 99.9999999")
    # Its tables' budget column too (six significant digits read "100").
    opt_rows = [row for row in map(str.split, out.splitlines()) if row[1:2] == ["OPT"]]
    assert [row[0] for row in opt_rows if len(row) == 6] == ["3", "99.9999999"]
    density = [line.split()[0] for line in out.splitlines() if " writer:density " in line]
    assert density == ["3", "99.9999999"]


def test_sweep_and_show_print_sweep_budgets_to_their_digits(tmp_path):
    saved = tmp_path / "sweep.json"
    rc, out, err = run_cli(
        "sweep", str(UPDATE_CHAIN), "--budgets", "3,99.9999999", "--writers", "density", "--json"
    )
    assert rc == 0, err
    saved.write_text(out, encoding="utf-8")
    rc, shown, err = run_cli("show", str(saved))
    assert rc == 0, err
    assert "; budgets 3, 99.9999999; 2 rows" in shown.splitlines()[0]
    rc, out, err = run_cli(
        "sweep", str(UPDATE_CHAIN), "--budgets", "3,99.9999999", "--writers", "density"
    )
    assert rc == 0, err
    for text in (out, shown):  # the summary table's budget column
        cells = [line.split()[2] for line in text.splitlines() if line.startswith("density ")]
        assert cells == ["3", "99.9999999"], text


def test_validate_prints_the_total_cost_to_its_digits(tmp_path):
    doc = json.loads(UPDATE_CHAIN.read_text(encoding="utf-8"))
    doc["candidates"][0]["cost"] += 0.9999999  # the sample's 51 words become 51.9999999
    rc, out, err = run_cli("validate", str(write_json(tmp_path, "uc.json", doc)))
    assert rc == 0, err
    assert out.rstrip().endswith("; total cost 51.9999999 words"), out


def test_audit_prints_its_budgets_to_their_digits():
    rc, out, err = run_cli("audit", str(UPDATE_CHAIN), "--budgets", "3,99.9999999", "--quiet")
    assert rc == 0, err
    assert "; pools full; budgets 3, 99.9999999" in out


# --------------------------------------------------------------------- 3. audit's engines note


def test_audit_note_says_milp_did_not_run_on_log1p(tmp_path):
    doc = json.loads(UPDATE_CHAIN.read_text(encoding="utf-8"))
    doc["objective"] = {"saturation": "log1p"}
    path = write_json(tmp_path, "uc-log1p.json", doc)
    rc, out, err = run_cli(
        "audit", str(path), "--budgets", "3,6", "--quiet", "--out", str(tmp_path / "o")
    )
    assert rc == 0, err
    (note,) = [
        line for line in out.splitlines() if line.startswith("note: enumeration (enum) ran on")
    ]
    assert note == (
        "note: enumeration (enum) ran on 2 of 2 check(s), those where at most 100,000 stores "
        "fit the budget; branch-and-bound (bnb) ran on every check; HiGHS MILP (milp) on none "
        "(it takes saturations cap1, linear only)"
    )
    report = (tmp_path / "o" / "report.md").read_text(encoding="utf-8")
    assert "bnb and milp run on every check" not in report
    assert "bnb runs on every check, milp on those whose saturation it takes" in report


def test_audit_note_on_a_linear_package_names_both_engines():
    rc, out, err = run_cli("audit", str(UPDATE_CHAIN), "--budgets", "3,6", "--quiet")
    assert rc == 0, err
    (note,) = [
        line for line in out.splitlines() if line.startswith("note: enumeration (enum) ran on")
    ]
    assert note.endswith(
        "fit the budget; branch-and-bound (bnb) and HiGHS MILP (milp) ran on every check"
    )
