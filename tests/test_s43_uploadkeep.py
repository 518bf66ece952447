"""QA s43 (uploadkeep): opening another package keeps the sidebar's writer / store, the Budget
sweep's compared writers / stores and the Evidence explorer's focus unit when the new package
has them, and says which ones it drops (and why) when it does not.

The packages are built here from the bundled samples; which stores and units they hold is read
from the files, never from the app's own output.
"""

from __future__ import annotations

import json
from pathlib import Path

from app_utils import upload_file
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parent.parent
SWEEP = "pages/1_Budget_sweep.py"
EVIDENCE = "pages/3_Evidence_explorer.py"
STORE = "store:raw-logger"
UNIT = "u:dates:current"


def _sample(name: str) -> dict:
    return json.loads((REPO / "sample_packages" / f"{name}.json").read_text())


def _travel_edit() -> bytes:
    """travel-assistant under another id, one cost changed, the same stores and units."""
    doc = _sample("travel-assistant")
    doc["id"] = "travel-assistant-edit"
    doc["candidates"][0]["cost"] += 1
    return json.dumps(doc).encode()


def _chain_copy() -> bytes:
    doc = _sample("update_chain")
    return json.dumps(doc).encode()


def test_the_packages_built_here_are_what_the_tests_assume() -> None:
    edit, chain = json.loads(_travel_edit()), json.loads(_chain_copy())
    assert STORE.removeprefix("store:") in {s["id"] for s in edit["stores"]}
    assert UNIT in {u["id"] for u in edit["units"]}
    assert not chain.get("stores")
    assert UNIT not in {u["id"] for u in chain["units"]}


def _sweep() -> AppTest:
    """The Budget sweep opened by a link with store= and methods= on travel-assistant."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params["package"] = "sample:travel-assistant"
    at.query_params["budget"] = "24"
    at.query_params["store"] = STORE
    at.run()
    at.query_params["methods"] = f"{STORE},writer:gvt"
    at.switch_page(SWEEP).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="w_store").value == STORE
    assert at.multiselect(key="sweep_methods").value == [STORE, "writer:gvt"]
    return at


def _infos(at: AppTest) -> list[str]:
    return [i.value for i in at.info]


def test_an_upload_holding_the_store_keeps_it_in_the_sidebar_and_the_sweep() -> None:
    """QA s43 A: the sidebar's store jumped to the default (Fact extractor) while the sweep
    kept store:raw-logger: sidebar and page disagreed."""
    at = _sweep()
    upload_file(at, "small_edit.json", _travel_edit())
    assert at.session_state["ma_store"] == STORE
    assert at.selectbox(key="w_store").value == STORE
    assert at.query_params["store"] == STORE
    assert at.multiselect(key="sweep_methods").value == [STORE, "writer:gvt"]
    # Nothing was dropped, so nothing is said about it.
    assert not [i for i in _infos(at) if "not kept" in i], _infos(at)


def test_an_upload_without_the_store_names_what_it_drops() -> None:
    """QA s43 B: the sidebar's store and the sweep's store:raw-logger were dropped unsaid."""
    at = _sweep()
    upload_file(at, "small2.json", _chain_copy())
    # update_chain has no stores of its own: the sidebar falls back to the gvt writer.
    assert at.selectbox(key="w_store").value == "writer:gvt"
    assert at.multiselect(key="sweep_methods").value == ["writer:gvt"]
    notes = [i for i in _infos(at) if "not kept" in i]
    assert len(notes) == 1, _infos(at)
    note = notes[0]
    assert "small2.json" in note, note
    assert "not in this package" in note.lower(), note
    assert "sidebar" in note and "Writers / stores" in note, note
    assert note.count("raw-logger") == 2, note
    # Said once: the next run (any widget) does not repeat it.
    at.run()
    assert not [i for i in _infos(at) if "not kept" in i], _infos(at)


def test_the_package_picker_keeps_a_store_the_next_sample_has() -> None:
    """The sidebar's picker follows the same rule: veg-to-pescatarian has a raw-logger."""
    assert "raw-logger" in {s["id"] for s in _sample("veg-to-pescatarian")["stores"]}
    at = _sweep()
    at.selectbox(key="w_package").set_value("sample:veg-to-pescatarian").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["ma_package"] == "sample:veg-to-pescatarian"
    assert at.selectbox(key="w_store").value == STORE
    assert at.multiselect(key="sweep_methods").value == [STORE, "writer:gvt"]
    at.selectbox(key="w_package").set_value("sample:update_chain").run()
    assert at.selectbox(key="w_store").value == "writer:gvt"
    notes = [i for i in _infos(at) if "not kept" in i]
    assert len(notes) == 1 and "raw-logger" in notes[0], _infos(at)


def _evidence() -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params["package"] = "sample:travel-assistant"
    at.query_params["budget"] = "24"
    at.query_params["store"] = STORE
    at.run()
    at.query_params["unit"] = UNIT
    at.switch_page(EVIDENCE).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="ev_focus").value == UNIT
    return at


def test_an_upload_holding_the_focus_unit_keeps_it() -> None:
    at = _evidence()
    upload_file(at, "small_edit.json", _travel_edit())
    assert at.selectbox(key="ev_focus").value == UNIT
    assert at.query_params["unit"] == UNIT
    assert at.selectbox(key="w_store").value == STORE
    assert not [i for i in _infos(at) if "not kept" in i], _infos(at)


def test_an_upload_without_the_focus_unit_says_so() -> None:
    """QA s43 C: unit= and store= vanished without a word."""
    at = _evidence()
    upload_file(at, "small2.json", _chain_copy())
    assert at.selectbox(key="ev_focus").value != UNIT
    assert "unit" not in at.query_params
    notes = [i for i in _infos(at) if "not kept" in i]
    assert len(notes) == 1, _infos(at)
    assert UNIT in notes[0] and "raw-logger" in notes[0], notes[0]
    assert not at.warning, [w.value for w in at.warning]
