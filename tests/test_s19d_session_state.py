"""App QA s19d: the shared choices of one session under quick, overlapping reruns."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parent.parent


def test_a_widget_rerun_with_a_stale_url_keeps_the_new_choice() -> None:
    """Two quick arrow presses on the budget slider: the second press's rerun carries the query
    string the browser had before it applied the URL the first press's run wrote. That is not
    Back / Forward (Streamlit flags those runs), so the slider's value stands; the app took the
    stale URL for a Back press and put the budget back to 6, below both presses, and left the
    URL one step off the view."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params.update({"package": "sample:update_chain", "budget": "6"})
    at.run()
    at.switch_page("pages/2_Compare.py").run()
    at.slider(key="w_budget").set_value(7.0).run()
    assert at.query_params["budget"] == "7"

    at.query_params["budget"] = "6"  # the browser has not applied budget=7 yet
    at.slider(key="w_budget").set_value(8.0).run()

    assert not at.exception
    assert at.session_state["ma_budget"] == 8.0
    assert at.slider(key="w_budget").value == 8.0
    assert at.query_params["budget"] == "8"  # the URL follows the view
    # update_chain: the budget shown is the slider's (Compare's cost label names it).
    assert any(m.label.startswith("Cost used (of 8 ") for m in at.metric)


def test_a_package_opened_on_the_evidence_explorer_starts_from_its_own_view() -> None:
    """The kind filter and the focus unit belong to the package they were set on: after a
    package change in the sidebar the Evidence explorer kept update_chain's three kinds, so
    external-stores-demo showed 6 of its 12 units without a word, and the previous focus unit
    (picked, so named in the link) became a link part of the new package."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params.update({"package": "sample:update_chain", "budget": "6"})
    at.run()
    at.switch_page("pages/3_Evidence_explorer.py").run()
    assert at.multiselect(key="ev_kinds").value == ["current_truth", "invalidation", "stale"]
    at.selectbox(key="ev_focus").set_value("v_1").run()
    assert at.query_params["unit"] == "v_1"

    at.selectbox(key="w_package").set_value("sample:external-stores-demo").run()

    assert not at.exception and not at.error
    # external-stores-demo's unit kinds, in the package's order (its file lists them).
    assert at.multiselect(key="ev_kinds").value == [
        "current_truth",
        "invalidation",
        "temporal_order",
        "stale",
        "context",
        "fact",
        "preference",
    ]
    assert any(h.value == "Evidence units (12), by value lost" for h in at.subheader)
    assert "unit" not in at.query_params
    assert not [w.value for w in at.warning if "unit=" in w.value]
