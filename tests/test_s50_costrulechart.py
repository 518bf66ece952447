"""Annotator QA s50, Ablations and sensitivity, Cost rules tab (memaudit-small-s0, budget 0.5,
the default rules; screenshot small_abl_b.png).

2. The three "as_stored on X's N budgets" reference series were all hatched in as_stored's
   blue: three identical legend entries, wrapped into a column of their own in no bar's order,
   and a writer's three hatched bars (density: 0.40, 0.45, 0.40) told apart only by their place.
   Also "words's". Now each reference is hatched in its rule's colour and sits with its rule in
   the legend, named "as_stored on the N budgets of <rule>".
3. The bar labels had two decimals: greedy's 0.996 under bytes_overhead read "1.00", like
   gvt's true 1; the table beside it says 0.996. Now three, as the table.

The budget counts and greedy's mean are the QA's own recomputation (its costrule.py re-costs
the candidates, rescales the budgets and brute-forces OPT): words and tokens_o200k have OPT = 0
at budgets 0.5 and 1 (4 of the 6 budgets left), bytes_overhead at 0.5, 1 and 2 (3 left);
greedy's mean ratio under bytes_overhead is 0.99607.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memaudit_core import robustness
from memaudit_core.package import load_package
from memaudit_ui import figures

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"
RULES = ("as_stored", "words", "bytes_overhead", "tokens_o200k")
#: Each rule compared over fewer budgets than as_stored, and its reference's legend name.
REFERENCES = {
    "words": "as_stored on the 4 budgets of words",
    "bytes_overhead": "as_stored on the 3 budgets of bytes_overhead",
    "tokens_o200k": "as_stored on the 4 budgets of tokens_o200k",
}


@pytest.fixture(scope="module")
def sens():
    pkg = load_package(SAMPLES / "memaudit-small-s0.json")
    return robustness.cost_rule_sensitivity(pkg, pkg.budget_grid(), RULES)


def _colour(trace) -> str:
    return trace.marker.color


def test_each_reference_is_hatched_in_its_rules_colour(sens) -> None:
    fig = figures.cost_rule_ratio_chart(sens, "Mean ratio per writer and cost rule")
    traces = list(fig.data)
    hatched = [k for k, t in enumerate(traces) if t.marker.pattern.shape == "/"]
    # The references, each drawn just before its rule; the rules themselves solid.
    assert [traces[k + 1].name for k in hatched] == list(REFERENCES)
    assert [t.name for t in traces if t.marker.pattern.shape in ("", None)] == list(RULES)
    for k in hatched:
        ref, rule = traces[k], traces[k + 1]
        # Base commit: every reference in as_stored's #1b4f8a.
        assert _colour(ref) == _colour(rule), rule.name
        # Stripes of that colour, not a dark fill that reads as as_stored's.
        assert ref.marker.pattern.fillmode == "replace", rule.name
        assert ref.marker.line.color == _colour(rule), rule.name
    colours = [_colour(traces[k]) for k in [0, *hatched]]
    assert traces[0].name == "as_stored" and len(set(colours)) == 4, colours


def test_legend_sets_each_reference_beside_its_rule_in_the_bars_order(sens) -> None:
    fig = figures.cost_rule_ratio_chart(sens, "Mean ratio per writer and cost rule")
    assert fig.layout.legend.traceorder == "grouped"
    groups: dict[str, list[str]] = {}
    for t in fig.data:
        assert t.showlegend is not False, t.name
        groups.setdefault(t.legendgroup, []).append(t.name)
    assert list(groups.items()) == [
        ("as_stored", ["as_stored"]),
        *((rule, [name, rule]) for rule, name in REFERENCES.items()),
    ]
    # Clicking one entry still hides that series alone.
    assert fig.layout.legend.groupclick == "toggleitem"


def test_reference_names_are_not_possessives() -> None:
    assert robustness.reference_label("words", 4) == "as_stored on the 4 budgets of words"
    assert robustness.reference_label("bytes_overhead", 1) == (
        "as_stored on the 1 budget of bytes_overhead"
    )


@pytest.mark.parametrize("present", [False, True])
def test_bar_labels_have_the_tables_three_decimals(sens, present) -> None:
    fig = figures.cost_rule_ratio_chart(sens, "Mean ratio per writer and cost rule", present)
    bars = {t.name: t for t in fig.data}
    greedy = list(bars["bytes_overhead"].y).index("greedy")
    assert bars["bytes_overhead"].x[greedy] == pytest.approx(0.99607, abs=5e-6)
    assert bars["bytes_overhead"].text[greedy] == "0.996"  # base commit: "1.00"
    for t in fig.data:
        assert list(t.text) == [f"{x:.3f}" for x in t.x], t.name
    # The projector's reference panels are hatched in their rule's colour too.
    for rule, name in REFERENCES.items():
        assert bars[name].marker.pattern.shape == "/"
        assert _colour(bars[name]) == _colour(bars[rule])


def test_veg_default_rules_hatch_the_bytes_overhead_reference_green() -> None:
    """The QA saw the same on veg-to-pescatarian at its defaults: bytes_overhead, OPT = 0 at
    the smallest budget."""
    veg = load_package(SAMPLES / "veg-to-pescatarian.json")
    sens = robustness.cost_rule_sensitivity(veg, veg.budget_grid(), RULES)
    fig = figures.cost_rule_ratio_chart(sens, "t")
    refs = [t for t in fig.data if t.name.startswith("as_stored on")]
    assert [t.name for t in refs] == ["as_stored on the 5 budgets of bytes_overhead"]
    (solid,) = [t for t in fig.data if t.name == "bytes_overhead"]
    assert _colour(refs[0]) == _colour(solid) != figures.COLORS["opt"]
    assert refs[0].legendgroup == solid.legendgroup
