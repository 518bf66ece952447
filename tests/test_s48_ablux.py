"""QA s48: the Ablations & sensitivity page.

1. A cost rule that re-costed no candidate (none has text) repeats the stored costs, yet read
   "tau 1.000, ranking holds at every budget: yes"; a rule that re-costed some mixed two
   units with only a cut-off table note.
2. The page analysed the package's grid and the reference writers only, whatever budget and
   store the sidebar held, without a word.
3. On the capacity chart the k = 1 line vanished under the k line, with no note.
4. A refused link value (``k=2.5``) still opened the capacity tab.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from app_utils import open_app, open_linked
from test_s47_abltab import link, opened_tab

import memaudit_core as ma
from memaudit_core import robustness as rb
from memaudit_core.generators import generate
from memaudit_core.writers import WRITERS

PAGE = "pages/5_Ablations_and_sensitivity.py"
SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"
RC7 = {"n_groups": 7, "candidates_per_group": 3, "integer_costs": True}
RC7_KEY = "gen:random_coverage:7:n_groups=7;candidates_per_group=3;integer_costs=true"


def _texts(pkg) -> list[str]:
    return [c.text for c in pkg.candidates]


def _shown(elements) -> list[str]:
    # The page escapes Markdown (md_escape): compare the text as read.
    return [e.value.replace("\\", "") for e in elements]


# --------------------------------------------------------------------------- 1. re-costing


def test_a_rule_that_recosted_nothing_has_no_verdict_and_says_why() -> None:
    pkg = generate("random_coverage", seed=7, **RC7)
    # The oracle: no candidate of this family carries text, so no rule can re-cost one.
    assert len(_texts(pkg)) == 21 and not any(t.strip() for t in _texts(pkg))
    sens = rb.cost_rule_sensitivity(pkg, None, ["as_stored", "words", "chars"])
    ranking = {row["rule"]: row for row in sens.ranking_rows()}
    for rule in ("words", "chars"):
        assert sens.rule(rule).rankings_hold is None and sens.rule(rule).tau is None
        assert ranking[rule]["ranking holds at every budget"] == "n/a (nothing re-costed)"
        assert ranking[rule]["Kendall tau vs as stored"] is None
    assert ranking["as_stored"]["ranking holds at every budget"] == "yes"
    (note,) = sens.recost_notes
    assert note.startswith("words and chars: re-costed 0 of 21 candidates"), note
    assert "they say nothing about these rules" in note
    (alone,) = rb.cost_rule_sensitivity(pkg, None, ["words"]).recost_notes
    assert alone.startswith("words: re-costed 0 of 21 candidates"), alone
    assert "nothing about this rule, which has no tau" in alone
    # A file saved before the fix held tau 1 and "holds": it reads back without the verdict.
    data = sens.to_dict()
    for r in data["rules"][1:]:
        r["tau"], r["rankings_hold"] = 1.0, True
    again = rb.CostRuleSensitivity.from_dict(json.loads(json.dumps(data)))
    assert {r["ranking holds at every budget"] for r in again.ranking_rows()[1:]} == {
        "n/a (nothing re-costed)"
    }


def test_a_rule_that_recosted_some_candidates_warns_of_mixed_units() -> None:
    pkg = ma.load_package(SAMPLES / "update_chain.json")
    blank = {c.id for c in pkg.candidates[:3]}
    mixed = replace(
        pkg,
        candidates=tuple(replace(c, text="") if c.id in blank else c for c in pkg.candidates),
    )
    n = len(pkg.candidates)
    sens = rb.cost_rule_sensitivity(mixed, None, ["as_stored", "chars"])
    (note,) = sens.recost_notes
    assert note.startswith(f"chars: 3 of {n} candidates have no text"), note
    assert f"beside {n - 3} re-costed by chars" in note and "mix two units" in note
    # Its verdict stands: some costs are the rule's.
    assert sens.rule("chars").rankings_hold is not None


def test_the_page_warns_when_a_rule_recosted_nothing() -> None:
    at = open_linked(PAGE, RC7_KEY, None, rules="as_stored,words,chars")
    warnings = _shown(at.warning)
    assert any(w.startswith("words and chars: re-costed 0 of 21 candidates") for w in warnings), (
        warnings
    )
    ranking = next(t.value for t in at.dataframe if "Kendall tau vs as stored" in t.value)
    verdicts = dict(zip(ranking["rule"], ranking["ranking holds at every budget"], strict=True))
    assert verdicts["words"] == verdicts["chars"] == "n/a (nothing re-costed)"


# --------------------------------------------------------------------------- 2. scope


def test_the_sidebar_budget_joins_the_grid_and_the_page_says_so() -> None:
    grid = json.loads((SAMPLES / "update_chain.json").read_text())["budgets"]
    want = sorted({float(b) for b in grid} | {7.0})
    assert 7.0 not in grid
    at = open_app(PAGE, package="sample:update_chain", budget="7", store="writer:density")
    assert not at.exception, [e.value for e in at.exception]
    header = next(m for m in _shown(at.markdown) if "· budgets " in m)
    assert "budgets " + ", ".join(f"{b:g}" for b in want) in header, header
    assert "(the package's grid)" not in header
    captions = _shown(at.caption)
    assert any(
        "the chosen budget 7." in c and "the chosen writer density among them" in c
        for c in captions
    ), captions
    cap = next(t.value for t in at.dataframe if "engines agree" in t.value.columns)
    assert list(cap["budget"]) == want


def test_a_plugin_writer_chosen_in_the_sidebar_is_in_the_writer_lists() -> None:
    at = open_app(PAGE, package="sample:update_chain", store="writer:recency")
    assert not at.exception, [e.value for e in at.exception]
    assert any("and the chosen writer recency" in c for c in _shown(at.caption))
    ratios = next(t.value for t in at.dataframe if "clean mean ratio" in t.value.columns)
    assert "recency" in set(ratios["writer"])
    cost = next(
        t.value for t in at.dataframe if "writer" in t.value.columns and "words" in t.value.columns
    )
    assert "recency" in set(cost["writer"])


def test_a_package_store_in_the_sidebar_is_named_as_left_out() -> None:
    at = open_app(PAGE, package="sample:travel-assistant", store="store:raw-logger")
    assert not at.exception, [e.value for e in at.exception]
    infos = _shown(at.info)
    assert any(
        "The chosen store Raw logger (raw-logger) is in none of these analyses" in i for i in infos
    ), infos


# --------------------------------------------------------------------------- 3. capacity


def _capacity_pairs(at) -> list[tuple[float, float, float]]:
    cap = next(t.value for t in at.dataframe if "engines agree" in t.value.columns)
    head_1 = next(c for c in cap.columns if c.endswith("(k=1)") and not c.startswith("label"))
    k_col = next(c for c in cap.columns if c.startswith("value (k=") and c != head_1)
    return list(zip(cap["budget"], cap[head_1], cap[k_col], strict=True))


def test_the_capacity_chart_says_when_its_lines_lie_on_each_other() -> None:
    at = open_linked(PAGE, "sample:memaudit-small-s0", None, k="3")
    pairs = _capacity_pairs(at)
    assert pairs and all(abs(a - b) <= 1e-9 * max(1.0, a) for _, a, b in pairs), pairs
    assert (
        "Lines on top of each other: the k = 3 line equals the k = 1 line at every budget."
        in _shown(at.caption)
    )

    at = open_linked(PAGE, "sample:update_chain", None, k="3")
    pairs = _capacity_pairs(at)
    top = max(max(a, b) for _, a, b in pairs)
    equal = [f"{x:g}" for x, a, b in pairs if abs(a - b) <= 1e-9 * max(1.0, a)]
    near = [f"{x:g}" for x, a, b in pairs if 1e-9 * max(1.0, a) < abs(a - b) <= 0.03 * top]
    assert equal == ["3"] and near == ["6", "13"], pairs
    (note,) = [c for c in _shown(at.caption) if c.startswith("Lines on top of each other")]
    assert "equals the k = 1 line at budget 3 " in note and "at budgets 6 and 13" in note, note


def test_apart_capacity_lines_get_no_note() -> None:
    points = (
        rb.CapacityPoint(1.0, 1.0, 2.0, 2.0, True, (), (), (), (), None, False, True, 1, ()),
        rb.CapacityPoint(2.0, 2.0, 4.0, 2.0, True, (), (), (), (), None, False, True, 1, ()),
    )
    assert rb.CapacitySensitivity("p", "h", 2, points, ()).coinciding_note() is None


# --------------------------------------------------------------------------- 4. refused link


def test_a_refused_link_value_does_not_choose_the_tab() -> None:
    at = open_linked(PAGE, "sample:update_chain", None, k="2.5")
    warnings = _shown(at.warning)
    assert len(warnings) == 1 and "k=`'2.5'`" in warnings[0], warnings
    assert opened_tab(at) == "Cost rules"
    assert "tab" not in link(at) and "k" not in link(at)
    # A value taken still opens its tab.
    at = open_linked(PAGE, "sample:update_chain", None, k="4")
    assert opened_tab(at) == "Group capacity"


@pytest.mark.parametrize("budget", [6.0, 7.0])
def test_scope_budgets_are_the_grid_plus_the_chosen_budget(budget: float) -> None:
    pkg = generate("update_chain")
    scope = rb.sensitivity_scope(pkg, budget)
    assert scope.budgets == tuple(sorted({3.0, 6.0, 13.0, budget}))
    assert scope.writers == tuple(WRITERS)
