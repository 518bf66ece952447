"""External stores (QA s40, export + Mem0 history uploads): the store shown follows the uploads,
each store names the history it carries, and the "history not read" warning says what is true.

1. A store found again by its key (the history removed, an earlier history re-uploaded, letta
   switched back to mem0) was named in the success message while the previous store stayed
   shown and scored; and every history swap added a store labelled just "Mem0 export".
2. Under another format the history warning said "The export is loaded without it" while an
   error just above said the export was not loaded, and with no export uploaded at all.
"""

from __future__ import annotations

import json

from app_utils import open_app

PACKAGE = "sample:veg-to-pescatarian"
PAGE = "pages/4_External_stores.py"

#: One memory, m1, as test_s40_history_upload's export.
EXPORT = json.dumps(
    {
        "results": [
            {"id": "m1", "memory": "User is pescatarian now", "created_at": "2025-05-03T10:00:00Z"}
        ]
    }
).encode()
#: m2 added then deleted: one deleted memory left out, no superseded version.
H_DELETE = json.dumps(
    [
        {"id": "h1", "memory_id": "m2", "new_memory": "User eats meat", "event": "ADD"},
        {"id": "h2", "memory_id": "m2", "old_memory": "User eats meat", "event": "DELETE"},
    ]
).encode()
#: m3 and m4 added then deleted: two deleted memories left out.
H_TWO = json.dumps(
    [
        {"id": f"h{i}{event}", "memory_id": mid, "new_memory": text, "event": event}
        for i, (mid, text) in enumerate([("m3", "User eats fish"), ("m4", "User eats eggs")])
        for event in ("ADD", "DELETE")
    ]
).encode()

BARE = (
    "Loaded as store `mem0` (Mem0 · e.json): 1 memory costed by words. Annotate its coverage below."
)
#: The export's bare store is replaced by its reading with the history (QA s46).
WITH_DELETE = (
    "Loaded as store `mem0` (Mem0 · e.json + history h.json): 1 memory costed by words, with "
    "history h.json (json history: 2 row(s)): 0 superseded kept, 1 deleted not kept (m2). It "
    "replaces the store loaded before from the same export without a history. Annotate its "
    "coverage below."
)
WITH_TWO = (
    "Loaded as store `mem0-2` (Mem0 · e.json + history h2.json): 1 memory costed by words, "
    "with history h2.json"
)
NOT_READ = (
    "The Mem0 history h.json is **not read**: a history applies to mem0 exports only, and the "
    "format is letta. "
)


def _plain(text: str) -> str:
    """A Markdown message as the reader sees it (escapes and word joiners removed)."""
    return text.replace("\\", "").replace("\u2060", "")


def _upload(at, key: str, name: str, data: bytes | None):
    value = None if data is None else (name, data, "application/octet-stream")
    at.file_uploader(key=key).set_value(value).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _set(at, key: str, value: str):
    at.selectbox(key=key).set_value(value).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _success(at) -> str:
    (success,) = [_plain(s.value) for s in at.success]
    return success


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def _shown(at) -> tuple[str, str, str]:
    """The store box's value, the state's store shown, and the metric telling the histories
    apart (deleted memories left out)."""
    return (
        at.selectbox(key="w_ext_store").value,
        at.session_state["ma_ann_store"].partition(":")[2],
        _metric(at, "Deleted (left out)"),
    )


def _export_then_history() -> object:
    at = open_app(PAGE, package=PACKAGE)
    _upload(at, "w_ext_upload", "e.json", EXPORT)
    assert _success(at) == BARE
    _upload(at, "w_ext_history", "h.json", H_DELETE)
    assert _success(at) == WITH_DELETE
    assert _shown(at) == ("mem0", "mem0", "1")
    return at


def _two_histories() -> object:
    """The export read with h.json (store mem0), then with h2.json (store mem0-2, shown)."""
    at = _export_then_history()
    _upload(at, "w_ext_history", "h2.json", H_TWO)
    assert _success(at).startswith(WITH_TWO)
    assert _shown(at) == ("mem0-2", "mem0-2", "2")
    return at


# --------------------------------------------------------------------------- defect 1


def test_removing_the_history_shows_the_bare_store_the_message_names() -> None:
    at = _export_then_history()
    _upload(at, "w_ext_history", "h.json", None)
    assert _success(at) == BARE.replace("`mem0`", "`mem0-2`")
    assert _shown(at) == ("mem0-2", "mem0-2", "0")
    # The loaded-export notice names the store shown, not the one with the history.
    assert any(w.value.startswith("**`mem0-2` is a loaded export") for w in at.warning)


def test_an_earlier_history_uploaded_again_shows_its_store_again() -> None:
    at = _two_histories()
    _upload(at, "w_ext_history", "h.json", H_DELETE)
    assert _success(at) == WITH_DELETE
    assert _shown(at) == ("mem0", "mem0", "1")
    assert list(at.session_state["ma_ann_imports"].values())[0].keys() == {"mem0", "mem0-2"}


def test_switching_letta_back_to_mem0_shows_the_store_it_finds() -> None:
    at = _two_histories()
    _set(at, "w_ext_format", "letta")
    (error,) = [_plain(e.value) for e in at.error]
    assert error.startswith("**e.json was not loaded** as letta")
    # A pick in the store box while the uploads resolve to nothing.
    _set(at, "w_ext_store", "mem0")
    assert _shown(at) == ("mem0", "mem0", "1")
    _set(at, "w_ext_format", "mem0")
    assert _success(at).startswith(WITH_TWO)
    assert _shown(at) == ("mem0-2", "mem0-2", "2")


def test_a_pick_in_the_store_box_stays_while_the_uploads_do_not_change() -> None:
    """Regression guard (passes before the fix too): the store the uploads resolve to is shown
    when they change, not on every rerun, so a later pick in the store box is kept."""
    at = _two_histories()
    _set(at, "w_ext_store", "mem0")
    assert _shown(at) == ("mem0", "mem0", "1")
    at.radio(key="w_ext_keep").set_value("salience").run()
    assert not at.exception
    assert _success(at).startswith(WITH_TWO)
    assert _shown(at) == ("mem0", "mem0", "1")


def test_each_store_names_the_history_it_carries() -> None:
    at = _two_histories()
    assert at.selectbox(key="w_ext_store").options == [
        "mem0 · Mem0 · e.json + history h.json (loaded export)",
        "mem0-2 · Mem0 · e.json + history h2.json (loaded export)",
    ]
    ((_, imports),) = at.session_state["ma_ann_imports"].items()
    labels = {sid: item["store"].label for sid, item in imports.items()}
    assert labels == {
        "mem0": "Mem0 · e.json + history h.json",
        "mem0-2": "Mem0 · e.json + history h2.json",
    }
    # The chart's legend takes the label too: one entry per store, each history named.
    (chart,) = [c for c in at.get("plotly_chart") if "e.json + history" in c.proto.spec]
    legend = {t.get("name") for t in json.loads(chart.proto.spec)["data"]}
    assert {"Mem0 · e.json + history h.json", "Mem0 · e.json + history h2.json"} <= legend, legend


# --------------------------------------------------------------------------- defect 2


def test_history_under_letta_with_no_export_does_not_say_the_export_is_loaded() -> None:
    at = open_app(PAGE, package=PACKAGE)
    _upload(at, "w_ext_history", "h.json", H_DELETE)
    _set(at, "w_ext_format", "letta")
    assert not at.error and not at.success
    (warning,) = [_plain(w.value) for w in at.warning]
    assert warning == NOT_READ + "Choose mem0 and upload its Mem0 export to apply it, or remove it."


def test_history_under_letta_with_an_export_letta_cannot_read() -> None:
    at = _export_then_history()
    _set(at, "w_ext_format", "letta")
    (error,) = [_plain(e.value) for e in at.error]
    assert error.startswith("**e.json was not loaded** as letta")
    (warning,) = [w for w in map(_plain, (w.value for w in at.warning)) if "history h.json" in w]
    assert warning == NOT_READ + "Choose mem0 to apply it, or remove it."


def test_history_under_letta_with_a_letta_export_says_it_is_loaded_without_it() -> None:
    """Regression guard (the wording before the fix too): a letta export that loads is loaded
    without the history, and the warning says so."""
    from browser_utils import REPO_ROOT

    letta = (REPO_ROOT / "tests" / "fixtures" / "importers" / "letta_passages.json").read_bytes()
    at = open_app(PAGE, package=PACKAGE)
    _upload(at, "w_ext_history", "h.json", H_DELETE)
    _set(at, "w_ext_format", "letta")
    _upload(at, "w_ext_upload", "passages.json", letta)
    assert not at.error, [e.value for e in at.error]
    assert _success(at).startswith("Loaded as store `letta` (Letta · passages.json): ")
    (warning,) = [w for w in map(_plain, (w.value for w in at.warning)) if "history h.json" in w]
    assert warning == (
        NOT_READ + "The export is loaded without it; choose mem0 to apply it, or remove it."
    )
