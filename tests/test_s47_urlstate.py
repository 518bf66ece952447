"""QA s47 (links and URL state): what a link carries, and what the app says about the rest.

(1) The Evidence explorer's kind filter, heatmap rows and graph scope were not in the link:
    changed on the page, the URL stayed the same, and a reload brought back every kind, "all
    candidates" and the whole graph. They are link settings now, checked when read.
(2) A parameter no page reads (``foo=bar``, a misspelt ``budgets=20``) stayed in the URL and
    did nothing, without a word; another page's parameter (``unit=`` on Compare) was dropped
    without a word.
(3) ``budget=`` in Arabic-Indic digits opened at that budget without a word, where ``gen:``
    keys demand ASCII digits (rule plain-number); so did the page settings' numbers.
(4) An empty kind filter said the default focus unit "changed" and to "pick it under Focus
    unit" (the user never picked it), and stopped the page before the timeline, which does
    not depend on the filter.

Each test failed on the code before the fix.
"""

from __future__ import annotations

import json
from pathlib import Path

from app_utils import APP, open_linked
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parent.parent
EVIDENCE = "pages/3_Evidence_explorer.py"
COMPARE = "pages/2_Compare.py"
TRAVEL = "sample:travel-assistant"


def fresh(page: str, **query: str) -> AppTest:
    """``page`` opened by a link in a new session (its first run is the page's, as in a
    browser: ``/Compare?...``)."""
    at = AppTest.from_file(str(APP), default_timeout=180)
    for name, value in query.items():
        at.query_params[name] = value
    if page != "app.py":
        at.switch_page(page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def shown(elements) -> list[str]:
    """Messages as the user reads them (without code spans' backticks, md_escape's backslashes
    and word joiners)."""
    return [e.value.replace("`", "").replace("\\", "").replace("\u2060", "") for e in elements]


def travel_kinds() -> list[str]:
    """travel-assistant's unit kinds, read from the file (the views' order is not at issue
    here, only the set)."""
    data = json.loads((REPO / "sample_packages" / "travel-assistant.json").read_text())
    return sorted({u["kind"] for u in data["units"]})


# ----------------------------------------------------------- (1) the explorer's view in the link


def test_the_explorers_kind_filter_rows_and_graph_scope_are_in_the_link_and_survive_a_reload():
    link = {"package": TRAVEL, "budget": "30", "store": "writer:density"}
    at = fresh(EVIDENCE, **link, unit="u:passport:advice")
    assert at.selectbox(key="ev_focus").value == "u:passport:advice"
    assert "current_truth" in at.multiselect(key="ev_kinds").value

    at.multiselect(key="ev_kinds").unselect("current_truth").run()
    at.radio(key="ev_heatmap_rows").set_value("kept").run()
    at.radio(key="ev_graph_scope").set_value("focus").run()
    assert not at.exception, [e.value for e in at.exception]

    params = dict(at.query_params)
    linked_kinds = params["kinds"].split(",")
    assert sorted(linked_kinds) == [k for k in travel_kinds() if k != "current_truth"]
    assert params["rows"] == "kept" and params["graph"] == "focus"
    assert params["unit"] == "u:passport:advice"

    # A reload: a new session on the URL the page wrote.
    again = fresh(EVIDENCE, **params)
    assert sorted(again.multiselect(key="ev_kinds").value) == sorted(linked_kinds)
    assert again.radio(key="ev_heatmap_rows").value == "kept"
    assert again.radio(key="ev_graph_scope").value == "focus"
    assert again.selectbox(key="ev_focus").value == "u:passport:advice"
    assert not again.warning, shown(again.warning)
    assert dict(again.query_params) == params


def test_the_explorers_link_settings_are_checked_when_read():
    at = fresh(EVIDENCE, package=TRAVEL, budget="30", kinds="fact,nope", rows="some", graph="focus")
    warnings = shown(at.warning)
    assert any("kinds='fact,nope' in the link" in w and "'nope'" in w for w in warnings), warnings
    assert any("ignored rows='some' in the link: not one of" in w for w in warnings), warnings
    assert at.multiselect(key="ev_kinds").value == ["fact"]  # the known kind is used
    assert at.radio(key="ev_heatmap_rows").value == "all"
    assert at.radio(key="ev_graph_scope").value == "focus"
    assert at.query_params["kinds"] == "fact" and "rows" not in at.query_params


# ------------------------------------------------------------- (2) parameters no page reads


def test_a_parameter_no_page_reads_is_named_once_and_left_out_of_the_url():
    at = fresh("app.py", package="sample:update_chain", foo="bar", zzz="", budgets="20")
    warnings = shown(at.warning)
    assert any("link parameter 'foo' is not a MemAudit setting; ignored" in w for w in warnings)
    assert any("link parameter 'zzz' is not a MemAudit setting; ignored" in w for w in warnings)
    (budgets,) = [w for w in warnings if "'budgets'" in w]
    assert "did you mean budget?" in budgets, budgets
    for param in ("foo", "zzz", "budgets"):
        assert param not in at.query_params
    at.run()  # the next run says nothing more
    assert not [w for w in shown(at.warning) if "MemAudit setting" in w]


def test_link_tracking_tags_are_dropped_without_a_word():
    # Review s47: a link shared through Facebook or with campaign tags opened with warnings.
    at = fresh("app.py", package="sample:update_chain", fbclid="IwAR0abc", utm_source="slack")
    assert not [w for w in shown(at.warning) if "MemAudit setting" in w]
    assert "fbclid" not in at.query_params and "utm_source" not in at.query_params
    assert at.query_params["package"] == "sample:update_chain"


def test_a_setting_written_in_another_case_is_named_with_the_setting_meant():
    at = fresh("app.py", package="sample:update_chain", Budget="20")
    (warning,) = [w for w in shown(at.warning) if "'Budget'" in w]
    assert "not a MemAudit setting" in warning and "did you mean budget?" in warning
    assert "Budget" not in at.query_params


def test_another_pages_parameters_are_dropped_with_a_note_naming_their_page():
    at = fresh(COMPARE, package="sample:update_chain", present="1", unit="v_1", grid="range")
    notes = shown(at.info)
    assert any(
        "ignored unit='v_1' in the link: a setting of the Evidence explorer page, not of the "
        "Compare page" in n
        for n in notes
    ), notes
    assert any("ignored grid='range'" in n and "Budget sweep page" in n for n in notes), notes
    assert dict(at.query_params) == {
        "package": "sample:update_chain",
        "budget": at.query_params["budget"],
        "store": at.query_params["store"],
        "present": "1",
    }


def test_a_page_link_still_carries_that_pages_settings():
    # Settings chosen on a page go with the sidebar's link to it, and open without a note.
    at = open_linked(EVIDENCE, TRAVEL, "30", rows="kept")
    at.switch_page(COMPARE).run()
    assert not at.exception
    at.switch_page(EVIDENCE).run()
    assert at.radio(key="ev_heatmap_rows").value == "kept"
    assert at.query_params["rows"] == "kept"
    assert not [n for n in shown(at.info) if "in the link" in n]


# ------------------------------------------------------------------ (3) plain ASCII numbers


def test_a_budget_in_other_digits_is_refused_by_the_plain_number_rule():
    data = json.loads((REPO / "sample_packages" / "update_chain.json").read_text())
    at = fresh("app.py", package="sample:update_chain", budget="\u0668")  # Arabic-Indic 8
    warnings = shown(at.warning)
    assert any(
        "ignored budget='\u0668' in the link: not a plain number (ASCII digits 0-9" in w
        for w in warnings
    ), warnings
    # The package's own budget, not 8.
    assert data["budget"] != 8 and at.session_state["ma_budget"] == data["budget"]
    assert at.query_params["budget"] == str(data["budget"])


def test_a_page_settings_number_in_other_digits_or_with_underscores_is_refused():
    from memaudit_ui.state import parse_budget, parse_link_value

    assert parse_link_value("\u0663", 2, bounds=(2, 5))[0] is None  # Arabic-Indic 3
    assert parse_link_value("1_0", 0)[0] is None
    assert parse_link_value("\uff15", 30.0)[0] is None  # full-width 5
    assert parse_budget("1_0")[0] is None
    # A nonzero number too small to hold read as 0 without a word.
    assert parse_budget("1e-400")[0] is None
    # Plain numbers still read, whole numbers exactly.
    assert parse_link_value("3", 2, bounds=(2, 5)) == (3, None)
    assert parse_link_value("1e3", 0) == (1000, None)
    assert parse_budget("6") == (6.0, None)


# ------------------------------------------------------------------ (4) an empty kind filter


def test_an_empty_kind_filter_says_so_and_keeps_the_timeline():
    at = fresh(EVIDENCE, package=TRAVEL, budget="30", store="writer:density")
    at.multiselect(key="ev_kinds").set_value([]).run()
    assert not at.exception, [e.value for e in at.exception]
    infos = shown(at.info)
    assert any("No evidence units match the kind filter" in i for i in infos), infos
    assert not [i for i in infos if "focus unit changed" in i], infos
    subheaders = [h.value for h in at.subheader]
    assert "Timeline: what each store wrote per experience" in subheaders, subheaders
    assert at.query_params["kinds"] == ""
