"""QA s47: the Ablations page's sensitivity tab is part of its link.

A link with the page's ``k=3`` opened on the "Cost rules" tab: whoever received it saw
cost-rule charts, and nothing said the k result was behind another tab. The tab a browser
opens first is the tab container's ``default_tab_index`` (Streamlit's frontend starts there);
AppTest cannot click a tab, so the tests read that index and the link the page writes back.
"""

from __future__ import annotations

from app_utils import open_app, open_linked
from streamlit.proto.Block_pb2 import Block as BlockProto
from streamlit.testing.v1 import AppTest

PAGE = "pages/5_Ablations_and_sensitivity.py"
PACKAGE = "sample:update_chain"
SENSITIVITY_TABS = ["Cost rules", "Group capacity", "Coverage noise"]


def opened_tab(at: AppTest) -> str:
    """The label of the tab the browser shows first in the page's one tab container."""
    found: list[int] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if isinstance(proto, BlockProto) and proto.HasField("tab_container"):
            found.append(proto.tab_container.default_tab_index)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    assert len(found) == 1, found
    labels = [tab.label for tab in at.tabs]
    assert labels == SENSITIVITY_TABS
    return labels[found[0]]


def link(at: AppTest) -> dict[str, str]:
    """The page's link (a parameter given more than once: its last value)."""
    values = {k: at.query_params[k] for k in at.query_params}
    return {k: v[-1] if isinstance(v, list) else v for k, v in values.items()}


def test_a_capacity_link_without_tab_opens_the_capacity_tab() -> None:
    at = open_linked(PAGE, PACKAGE, None, k="3")
    assert opened_tab(at) == "Group capacity"
    assert at.number_input(key="abl_k").value == 3
    assert not at.warning, [w.value for w in at.warning]
    # The link stays as short as it came: k=3 alone says which tab.
    assert link(at).get("k") == "3" and "tab" not in link(at)


def test_noise_settings_open_the_noise_tab() -> None:
    for param, text in (("seed", "7"), ("level", "0.3"), ("draws", "5"), ("noise", "flip")):
        at = open_linked(PAGE, PACKAGE, None, **{param: text})
        assert opened_tab(at) == "Coverage noise", param


def test_the_tab_in_the_link_wins_and_a_bad_one_is_named() -> None:
    at = open_linked(PAGE, PACKAGE, None, tab="noise", k="3")
    assert opened_tab(at) == "Coverage noise"
    assert link(at)["tab"] == "noise"

    at = open_linked(PAGE, PACKAGE, None, tab="capacity")
    assert opened_tab(at) == "Group capacity"
    assert link(at)["tab"] == "capacity"

    at = open_linked(PAGE, PACKAGE, None, tab="Capacity!", k="4")
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 1 and "tab=`'Capacity!'`" in warnings[0], warnings
    assert "`'capacity'`" in warnings[0]
    # The bad tab is dropped; k still says which tab to open.
    assert opened_tab(at) == "Group capacity"
    assert "tab" not in link(at) and link(at)["k"] == "4"


def test_k_set_while_on_cost_rules_keeps_cost_rules_in_the_link() -> None:
    # A view on "Cost rules" with k=3 set earlier: its link must not open the capacity tab.
    at = open_app(PAGE, package=PACKAGE)
    assert opened_tab(at) == "Cost rules"
    at.number_input(key="abl_k").set_value(3).run()
    assert link(at)["k"] == "3" and link(at)["tab"] == "cost"
    shared = {k: v for k, v in link(at).items() if k != "package"}
    reopened = open_linked(PAGE, PACKAGE, None, **shared)
    assert opened_tab(reopened) == "Cost rules"
    assert reopened.number_input(key="abl_k").value == 3
