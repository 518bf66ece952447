"""QA s49 (links): what the app says about a link's values.

1. External stores: with ``keep=salience&salience_field=nope`` the caption under the metrics
   said the store had "no numeric salience", not that it lacked the field the link chose.
2. (Not changed, guarded) ``salience_field`` stays in the link with ``keep=recency``: the
   salience-pruned selection shown beside the recency one reads it.
3. A list item repeated 3000 times was "given twice"; an unknown item was listed once per
   repeat and also called "given twice".
4. A refused seed range (first seed above the last) left the seed band on, which then ran the
   default seeds (a minute) with no word on what replaced the link's values.
5. A link budget with more than 12 significant digits was rounded without a word, and a
   repeated one was said to be "used" unrounded.
"""

from __future__ import annotations

from app_utils import APP, open_app, open_linked
from streamlit.testing.v1 import AppTest

from memaudit_ui.state import parse_link_value

SWEEP = "pages/1_Budget_sweep.py"
EXTERNAL = "pages/4_External_stores.py"
GENERATED = "sample:event-graph-50"  # names its generator family: the seed band is offered
DEMO = "sample:external-stores-demo"


def open_store(store: str, budget: str | None = None, **settings: str) -> AppTest:
    """The External stores page opened by a link naming ``store`` and the page's settings."""
    at = open_linked(EXTERNAL, DEMO, budget, store=store, **settings)
    assert at.session_state["ma_store"] == store
    return at


def plain(values) -> list[str]:
    # The text as read: without Markdown escapes and the backticks of code spans.
    return [v.value.replace("\\", "").replace("`", "") for v in values]


# --------------------------------------------------------------------------- 1: caption


def test_the_fallback_caption_names_the_field_the_link_chose():
    # Store mem0 (27 words) is over the default budget 24 and no memory has a field 'nope'.
    at = open_store("store:mem0", keep="salience", salience_field="nope")
    captions = [c for c in plain(at.caption) if c.startswith("No memory of this store")]
    assert captions == [
        "No memory of this store has a numeric meta field 'nope', so there is no salience "
        "selection: Y' here is the recency one, as on the Overview, Compare and the Evidence "
        "explorer."
    ]


def test_the_fallback_caption_without_a_field_still_says_salience():
    at = open_store("store:mem0", keep="salience")
    assert any(
        c.startswith("No memory of this store has a numeric salience, so there is no")
        for c in plain(at.caption)
    )


# --------------------------------------------------------------------------- 2: guard


def test_salience_field_with_keep_recency_stays_in_the_link_because_it_is_used():
    """Regression guard (passes on the base too): the QA report's proposed unused rule would
    drop a field that changes the numbers shown. Store amem at budget 28 is over budget;
    its notes by retrieval_count (note-1 has 2, note-5 has 1) keep note-1 (F 1.5), by
    importance_score (note-5 0.7 above note-1 0.6) note-5 (F 3)."""
    at = open_store("store:amem", "28", salience_field="retrieval_count")
    assert at.query_params["salience_field"] in ("retrieval_count", ["retrieval_count"])
    assert not at.warning and not [i for i in plain(at.info) if "salience_field" in i]
    (pruned,) = [d.value for d in at.dataframe if "policy" in d.value.columns]
    salience_row = pruned[pruned["policy"] == "salience"].iloc[0]
    assert (salience_row["F"], salience_row["kept"]) == (1.5, "note-1")


# --------------------------------------------------------------------------- 3: repeats


def test_an_item_repeated_many_times_is_counted():
    _, problem = parse_link_value(",".join(["writer:gvt"] * 3000), [], ["writer:gvt", "x"])
    assert problem == "`'writer:gvt'` is given 3,000 times"


def test_an_item_given_exactly_twice_is_still_twice():
    _, problem = parse_link_value("a,b,a", [], ["a", "b"])
    assert problem == "`'a'` is given twice"


def test_an_unknown_item_is_listed_once_and_not_called_repeated():
    value, problem = parse_link_value("fact,bogus,fact", [], ["Fact", "bogus"])
    assert value == ["bogus"]
    assert problem == "`'fact'` is not one of: `'Fact'`, `'bogus'`"


def test_the_evidence_explorer_warning_for_a_repeated_unknown_kind():
    at = open_linked(
        "pages/3_Evidence_explorer.py", "sample:update_chain", "6", kinds="fact,bogus,fact"
    )
    (shown,) = [w for w in plain(at.warning) if "kinds=" in w]
    assert shown.startswith(
        "ignored kinds='fact,bogus,fact' in the link: 'fact', 'bogus' are not one of: "
    ), shown
    assert "twice" not in shown and "times" not in shown


# --------------------------------------------------------------------------- 4: seed band


def test_a_refused_seed_range_leaves_the_band_off_and_says_so():
    at = open_linked(
        SWEEP,
        GENERATED,
        "6",
        seed_band="1",
        first_seed="10",
        last_seed="2",
        methods="",
        ablation="0",
    )
    assert plain(at.warning) == [
        "ignored seed_band='1', first_seed='10', last_seed='2' in the link: the last seed (2) "
        "is below the first (10); the seed band is off until you turn it on (default seeds "
        "0 to 49)"
    ]
    assert at.toggle(key="sweep_seed_range").value is False
    for name in ("seed_band", "first_seed", "last_seed"):
        assert name not in at.query_params
    # Turned on by the user, the band runs the default seeds.
    at.toggle(key="sweep_seed_range").set_value(True).run()
    assert (
        at.number_input(key="sweep_seed_from").value,
        at.number_input(key="sweep_seed_to").value,
    ) == (0, 49)


def test_a_refused_range_names_the_range_shown_instead():
    # update_chain: budgets 3, 6, 13 with whole costs, so the default range is 3..13 step 1.
    at = open_linked(SWEEP, "sample:update_chain", "6", grid="range", step="0")
    assert plain(at.warning) == [
        "ignored step='0' in the link: budget range: step must be > 0, got 0; showing the "
        "default range 3 to 13 step 1"
    ]


# --------------------------------------------------------------------------- 5: budget digits


def test_a_rounded_link_budget_is_noted_with_both_values():
    at = open_app(package="sample:update_chain", budget="0.1234567890123456")
    assert not at.exception
    assert (
        "budget='0.1234567890123456' in the link is rounded to 12 significant digits: the "
        "budget used is 0.123456789012"
    ) in plain(at.info)
    assert at.query_params["budget"] in ("0.123456789012", ["0.123456789012"])


def test_a_budget_with_twelve_digits_is_not_noted():
    at = open_app(package="sample:update_chain", budget="0.123456789012")
    assert not [i for i in plain(at.info) if "rounded" in i]


def test_a_repeated_budget_names_the_value_used():
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params["package"] = "sample:update_chain"
    at.query_params["budget"] = ["3", "0.1234567890123456"]
    at.run()
    assert not at.exception
    (shown,) = [w for w in plain(at.warning) if w.startswith("the link gives budget")]
    assert shown == (
        "the link gives budget 2 times ('3', '0.1234567890123456'): the last one, "
        "'0.1234567890123456', is used, rounded to 0.123456789012"
    )


def test_a_repeated_budget_whose_last_value_is_refused_is_not_called_used():
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params["package"] = "sample:update_chain"
    at.query_params["budget"] = ["3", "-1"]
    at.run()
    shown = plain(at.warning)
    assert "the link gives budget 2 times ('3', '-1'): only the last one, '-1', is read" in shown
    assert "ignored budget='-1' in the link: a budget cannot be negative" in shown
