"""QA s43 (ablrules): cost-rule sensitivity compared a rule with as_stored over different
budgets, ran on as_stored alone when no rule was chosen, and ``memaudit show`` left out its
key results.

1. veg-to-pescatarian under bytes_overhead has OPT = 0 at budgets 4 and 6: its means covered
   5 budgets, as_stored's 7, and tau (0.8) ranked one against the other; on the shared 5 it is
   0.9. Expected values here come from brute-force OPT, the writers run directly, plain means
   and scipy's kendalltau.
2. An emptied "Cost rules" box ran as_stored alone: "tau 1.000, ranking holds: yes".
3. ``show`` on a saved cost-rule sensitivity printed the rows only: no tau, no "ranking holds",
   no OPT = 0 note.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from app_utils import open_linked
from cli_utils import run_cli
from scipy.stats import kendalltau

import memaudit_core as ma
from memaudit_core import robustness as rb
from memaudit_core.compiled import compile_package
from memaudit_core.costs import cost_of
from memaudit_core.solvers.brute import brute_force_budgets
from memaudit_core.writers import WRITERS, run_writer
from memaudit_ui import figures

REPO = Path(__file__).resolve().parent.parent
VEG = REPO / "sample_packages" / "veg-to-pescatarian.json"
RULE = "bytes_overhead"
ABLATIONS = "pages/5_Ablations_and_sensitivity.py"


def _ratios(pkg: ma.Package, budgets: list[float]) -> dict[float, dict[str, float] | None]:
    """Per budget: each writer's F / brute-force OPT, or None where OPT = 0."""
    inst = compile_package(pkg)
    out: dict[float, dict[str, float] | None] = {}
    for b, (opt, _) in zip(budgets, brute_force_budgets(inst, budgets), strict=True):
        out[b] = None if opt <= 0 else {w: run_writer(w, inst, b).value / opt for w in WRITERS}
    return out


@pytest.fixture(scope="module")
def oracle() -> dict:
    """as_stored and bytes_overhead ratios recomputed here, keyed by the stored budget."""
    pkg = ma.load_package(VEG)
    grid = list(pkg.budget_grid())
    recost = replace(
        pkg, candidates=tuple(replace(c, cost=cost_of(c.text, RULE)) for c in pkg.candidates)
    )
    scale = recost.total_cost() / pkg.total_cost()
    stored = _ratios(pkg, grid)
    scaled = _ratios(recost, [b * scale for b in grid])
    under = {b: scaled[b * scale] for b in grid}
    shared = [b for b in grid if stored[b] is not None and under[b] is not None]
    writers = list(WRITERS)

    def means(table: dict) -> list[float]:
        return [sum(table[b][w] for b in shared) / len(shared) for w in writers]

    return {
        "grid": grid,
        "shared": shared,
        "writers": writers,
        "stored_means": means(stored),
        "rule_means": means(under),
        "tau": kendalltau(means(stored), means(under)).statistic,
    }


@pytest.fixture(scope="module")
def sens() -> rb.CostRuleSensitivity:
    return rb.cost_rule_sensitivity(ma.load_package(VEG), None, rules=[RULE])


def test_the_oracle_sees_the_reported_case(oracle) -> None:
    assert oracle["shared"] == [8.0, 10.0, 12.0, 16.0, 24.0] and len(oracle["grid"]) == 7


def test_tau_ranks_the_rule_against_as_stored_over_the_same_budgets(sens, oracle) -> None:
    rule = sens.rule(RULE)
    assert rule.tau == pytest.approx(oracle["tau"], abs=1e-12)
    assert rule.compared_budgets == tuple(oracle["shared"])
    assert [m for _, m in rule.mean_ratio] == pytest.approx(oracle["rule_means"], abs=1e-12)
    assert [m for _, m in rule.stored_mean_ratio] == pytest.approx(
        oracle["stored_means"], abs=1e-12
    )


def test_ratio_table_and_chart_set_the_rule_beside_as_stored_on_its_budgets(sens, oracle) -> None:
    label = "as_stored on the 5 budgets of bytes_overhead"
    rows = {r["writer"]: r for r in sens.ratio_rows()}
    got = [rows[w][label] for w in oracle["writers"]]
    assert got == pytest.approx(oracle["stored_means"], abs=1e-12)
    assert [rows[w][RULE] for w in oracle["writers"]] == pytest.approx(
        oracle["rule_means"], abs=1e-12
    )
    fig = figures.cost_rule_ratio_chart(sens, "t")
    bars = {t.name: t for t in fig.data}
    assert list(bars[label].x) == pytest.approx(oracle["stored_means"], abs=1e-12)
    assert "where the rule and as_stored have OPT > 0" in fig.layout.xaxis.title.text


def test_the_note_says_which_as_stored_means_the_rule_is_compared_with(sens) -> None:
    (note,) = sens.undefined_notes
    assert "compared with as_stored's over the same 5" in note
    assert "8, 10, 12, 16, 24" in note and "not with as_stored's own means" in note


def test_a_saved_file_reads_back_with_the_same_comparison(sens, oracle) -> None:
    again = rb.CostRuleSensitivity.from_dict(json.loads(json.dumps(sens.to_dict())))
    assert again.rule(RULE).tau == pytest.approx(oracle["tau"], abs=1e-12)
    assert again.ratio_rows() == sens.ratio_rows()


def test_app_ranking_table_reports_the_like_for_like_tau(oracle) -> None:
    at = open_linked(ABLATIONS, "sample:veg-to-pescatarian", rules=f"as_stored,{RULE}")
    tables = [t.value for t in at.dataframe]
    ranking = next(t for t in tables if "Kendall tau vs as stored" in t.columns)
    row = ranking[ranking["rule"] == RULE].iloc[0]
    assert row["Kendall tau vs as stored"] == pytest.approx(oracle["tau"], abs=1e-12)
    ratios = next(t for t in tables if "as_stored on the 5 budgets of bytes_overhead" in t.columns)
    assert list(ratios["as_stored on the 5 budgets of bytes_overhead"]) == pytest.approx(
        oracle["stored_means"], abs=1e-12
    )


def test_an_empty_rule_choice_asks_for_a_rule_and_runs_nothing() -> None:
    at = open_linked(ABLATIONS, "sample:update_chain", rules="")
    assert at.multiselect(key="abl_rules").value == []
    assert "Choose a cost rule to compare with the costs as stored." in [i.value for i in at.info]
    shown = [t.value for t in at.dataframe]
    assert not any("Kendall tau vs as stored" in t.columns for t in shown)


def test_show_prints_tau_ranking_and_the_opt_zero_note(sens, oracle, tmp_path) -> None:
    path = tmp_path / "cost-rules.json"
    path.write_text(json.dumps(sens.to_dict()), encoding="utf-8")
    rc, out, err = run_cli("show", str(path))
    assert rc == 0, err
    lines = out.splitlines()
    heads = [
        i for i, line in enumerate(lines) if line.split()[:4] == ["rule", "Kendall", "tau", "vs"]
    ]
    assert len(heads) == 1, out
    assert "ranking holds at every budget" in lines[heads[0]]
    row = next(line.split() for line in lines[heads[0] :] if line.split()[:1] == [RULE])
    assert row[1:3] == [f"{oracle['tau']:.6g}", "no"]
    assert "note: bytes_overhead: OPT = 0 at budgets 4, 6" in out
