"""External stores: a Mem0 history uploaded next to the export (the app's ``--history``).

The page's "Load a memory-system export" expander takes an optional second file, Mem0's
history (JSON rows or a ``history.db``), read by the importer with the export; the success
message says it was read, its problems name it, and under another format it is said not read.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from app_utils import open_app
from browser_utils import REPO_ROOT, start_streamlit, stop_streamlit, wait_idle
from package_utils import mem0_history_db
from playwright.sync_api import expect

PACKAGE = "sample:veg-to-pescatarian"
PAGE = "pages/4_External_stores.py"

#: One memory, m1, created at 10:00 on 3 May.
EXPORT = json.dumps(
    {
        "results": [
            {
                "id": "m1",
                "memory": "User is pescatarian now",
                "created_at": "2025-05-03T10:00:00Z",
            }
        ]
    }
).encode()
#: m2 added then deleted (so not in the export), m1 updated before the export was taken.
HISTORY_ROWS = [
    ("h1", "m2", None, "User eats meat", "ADD", "2025-05-01T10:00:00Z", None, 0, None, None),
    ("h2", "m2", "User eats meat", None, "DELETE", "2025-05-02T10:00:00Z", None, 1, None, None),
    (
        "h3",
        "m1",
        "User is vegetarian",
        "User is pescatarian now",
        "UPDATE",
        "2025-05-03T09:00:00Z",
        None,
        0,
        None,
        None,
    ),
]
COLUMNS = (
    "id",
    "memory_id",
    "old_memory",
    "new_memory",
    "event",
    "created_at",
    "updated_at",
    "is_deleted",
    "actor_id",
    "role",
)
HISTORY = json.dumps([dict(zip(COLUMNS, row, strict=True)) for row in HISTORY_ROWS]).encode()
#: What the success message says of that history (3 rows, m2 deleted, m1's old text replaced).
READ = (
    "0 superseded kept, 1 earlier version replaced by an update (not kept), 1 deleted not kept (m2)"
)


def _plain(text: str) -> str:
    """A Markdown message as the reader sees it (escapes and word joiners removed)."""
    return text.replace("\\", "").replace("\u2060", "")


def _page():
    return open_app(PAGE, package=PACKAGE)


def _upload(at, key: str, name: str, data: bytes):
    at.file_uploader(key=key).set_value((name, data, "application/octet-stream")).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _imports(at) -> dict:
    ((_, imports),) = at.session_state["ma_ann_imports"].items()
    return imports


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_a_json_history_leaves_its_deleted_memory_out_and_the_page_says_so() -> None:
    at = _page()
    _upload(at, "w_ext_history", "h.json", HISTORY)
    assert not at.error and not at.success
    assert any("upload the Mem0 export" in i.value for i in at.info)
    _upload(at, "w_ext_upload", "e.json", EXPORT)
    assert not at.error, [e.value for e in at.error]
    (success,) = [_plain(s.value) for s in at.success]
    assert success == (
        "Loaded as store `mem0` (Mem0 · e.json + history h.json): 1 memory costed by words, "
        f"with history h.json (json history: 3 row(s)): {READ}. Annotate its coverage below."
    )
    store = _imports(at)["mem0"]["store"]
    assert [m.id for m in store.memories] == ["m1"]
    assert [d["id"] for d in store.meta["deleted"]] == ["m2"]
    assert store.meta["history_file"] == "h.json"
    assert at.selectbox(key="w_ext_store").value == "mem0"
    assert _metric(at, "Deleted (left out)") == "1"
    assert _metric(at, "Memories kept") == "1 of 1"


def test_a_history_db_works_too(tmp_path: Path) -> None:
    db = mem0_history_db(tmp_path / "history.db", HISTORY_ROWS)
    at = _page()
    _upload(at, "w_ext_upload", "e.json", EXPORT)
    _upload(at, "w_ext_history", "history.db", db.read_bytes())
    assert not at.error, [e.value for e in at.error]
    (success,) = [_plain(s.value) for s in at.success]
    assert "with history history.db (sqlite history.db (current schema): 3 row(s))" in success
    assert READ in success
    assert _metric(at, "Deleted (left out)") == "1"


def test_the_same_export_with_a_history_replaces_its_bare_store() -> None:
    """The page finds an export it has loaded by its digest: the history's is part of it, or
    the bare export's store would be shown again for the export with its history. The reading
    with the history replaces the bare one (QA s46: both stayed, one of them stale)."""
    at = _page()
    _upload(at, "w_ext_upload", "e.json", EXPORT)
    (bare,) = [_plain(s.value) for s in at.success]
    assert bare == (
        "Loaded as store `mem0` (Mem0 · e.json): 1 memory costed by words. Annotate its "
        "coverage below."
    )
    assert _metric(at, "Deleted (left out)") == "0"
    _upload(at, "w_ext_history", "h.json", HISTORY)
    (with_history,) = [_plain(s.value) for s in at.success]
    assert with_history.startswith(
        "Loaded as store `mem0` (Mem0 · e.json + history h.json): 1 memory costed by words, with"
    )
    assert READ in with_history
    assert with_history.endswith(
        "It replaces the store loaded before from the same export without a history. "
        "Annotate its coverage below."
    )
    imports = _imports(at)
    assert list(imports) == ["mem0"]
    assert [d["id"] for d in imports["mem0"]["store"].meta["deleted"]] == ["m2"]
    assert at.selectbox(key="w_ext_store").value == "mem0"
    assert _metric(at, "Deleted (left out)") == "1"
    # Removing the history asks for the bare export again: a store of its own, as asked.
    at.file_uploader(key="w_ext_history").set_value(None).run()
    assert [_plain(s.value) for s in at.success] == [bare.replace("`mem0`", "`mem0-2`")]
    assert list(_imports(at)) == ["mem0", "mem0-2"]


def test_a_bad_history_is_named_with_its_path_and_rule_and_nothing_is_added() -> None:
    rows = json.loads(HISTORY)
    del rows[1]["memory_id"]
    at = _page()
    _upload(at, "w_ext_upload", "e.json", EXPORT)
    _upload(at, "w_ext_history", "bad-history.json", json.dumps(rows).encode())
    assert not at.success
    (error,) = [_plain(e.value) for e in at.error]
    assert error.startswith("**e.json with history bad-history.json was not loaded** as mem0")
    assert (
        "`bad-history.json: $[1].memory_id: history row needs a string 'memory_id' "
        "[rule: required]`" in error
    ), error
    assert "/tmp" not in error
    # Only the bare export's store, loaded before the history.
    assert list(_imports(at)) == ["mem0"]


def test_a_history_db_without_a_history_table_is_named(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE memories (id TEXT)")
    con.commit()
    con.close()
    at = _page()
    _upload(at, "w_ext_history", "other.db", db.read_bytes())
    _upload(at, "w_ext_upload", "e.json", EXPORT)
    (error,) = [_plain(e.value) for e in at.error]
    assert (
        "`other.db: history: the database has no 'history' table [rule: mem0-history]`" in error
    ), error
    assert _imports(at) == {}


def test_warnings_cite_history_rows_by_the_uploads_name() -> None:
    """The importer cites a history row by its file's path: the upload's name, not the
    temporary file it was read from."""
    rows = [
        {"id": "d1", "memory_id": "m1", "old_memory": "User is pescatarian now", "event": "DELETE"}
    ]
    at = _page()
    _upload(at, "w_ext_upload", "e.json", EXPORT)
    _upload(at, "w_ext_history", "h.json", json.dumps(rows).encode())
    assert not at.error
    texts = [_plain(w.value) for w in at.warning] + [t.value for t in at.text]
    assert any(
        # The path in a code span (session 53: every importer note has one and a rule).
        "- `$.results[0]`: history says memory 'm1' was deleted (h.json: $[0]), but the "
        "export still holds it; it is kept as the export shows it (rule: history-deleted)" in t
        for t in texts
    ), texts
    assert not any("/tmp" in t for t in texts)


def test_a_history_under_another_format_is_said_not_read() -> None:
    letta = (REPO_ROOT / "tests" / "fixtures" / "importers" / "letta_passages.json").read_bytes()
    at = _page()
    at.selectbox(key="w_ext_format").set_value("letta").run()
    # Not offered for letta...
    assert [f.label for f in at.file_uploader if "history" in f.label] == []
    at.selectbox(key="w_ext_format").set_value("mem0").run()
    _upload(at, "w_ext_history", "h.json", HISTORY)
    at.selectbox(key="w_ext_format").set_value("letta").run()
    # ...but a history already given stays on screen, said not read.
    assert [f.label for f in at.file_uploader if "history" in f.label] == [
        "Mem0 history (optional: JSON rows or history.db)"
    ]
    (warning,) = [_plain(w.value) for w in at.warning]
    assert warning == (
        "The Mem0 history h.json is **not read**: a history applies to mem0 exports only, and "
        # QA s40 (defect 2 of the export + history report): no export is uploaded yet, so
        # the warning no longer says it is loaded.
        "the format is letta. Choose mem0 and upload its Mem0 export to apply it, or remove it."
    )
    _upload(at, "w_ext_upload", "passages.json", letta)
    assert not at.error, [e.value for e in at.error]
    (warning,) = [w for w in map(_plain, (w.value for w in at.warning)) if "h.json" in w]
    assert warning.endswith(
        "The export is loaded without it; choose mem0 to apply it, or remove it."
    )
    (success,) = [_plain(s.value) for s in at.success]
    assert success.startswith("Loaded as store `letta` (Letta · ") and "history" not in success
    assert "history_file" not in _imports(at)["letta"]["store"].meta


def test_history_rows_given_as_the_export_point_to_the_history_upload() -> None:
    at = _page()
    _upload(at, "w_ext_upload", "h.json", HISTORY)
    (error,) = [_plain(e.value) for e in at.error]
    assert "these are Mem0 history rows" in error
    assert 'the app\'s "Mem0 history" upload) [rule: format-hint]' in error, error


def test_a_history_above_the_size_limit_is_refused(monkeypatch) -> None:
    import memaudit_ui.sources

    # 0.001 MB = 1,000 bytes: the export (about 90 bytes) fits, a 2,000-byte history does not.
    monkeypatch.setattr(memaudit_ui.sources, "MAX_UPLOAD_MB", 0.001)
    big = json.dumps(json.loads(HISTORY) + [{"pad": "x" * 2000}]).encode()
    at = _page()
    _upload(at, "w_ext_upload", "e.json", EXPORT)
    assert [_plain(s.value) for s in at.success][0].startswith("Loaded as store `mem0`")
    _upload(at, "w_ext_history", "big.json", big)
    assert not at.success
    (error,) = [_plain(e.value) for e in at.error]
    assert error.startswith("big.json: file is 0.0 MB; uploads above 0.001 MB are refused")
    assert "[rule: upload-size]. Nothing was added." in error
    assert list(_imports(at)) == ["mem0"]


# --------------------------------------------------------------------------- browser


@pytest.fixture(scope="module")
def fresh_server():
    """A server of its own: the history must reach the page through a real upload."""
    proc, base_url = start_streamlit(REPO_ROOT / "test-output" / "streamlit-s40-history.log")
    try:
        yield base_url
    finally:
        stop_streamlit(proc)


def test_browser_export_and_history_uploaded_together(fresh_server, page, tmp_path) -> None:
    export = tmp_path / "e.json"
    export.write_bytes(EXPORT)
    history = tmp_path / "h.json"
    history.write_bytes(HISTORY)
    page.goto(f"{fresh_server}/External_stores?package={PACKAGE}")
    wait_idle(page, timeout_ms=120_000)
    expander = page.get_by_test_id("stExpander").filter(
        has_text="Load a memory-system export next to this package"
    )
    expander.get_by_text("Load a memory-system export next to this package").click()
    uploaders = expander.get_by_test_id("stFileUploader")
    expect(uploaders).to_have_count(2)
    uploaders.nth(0).locator("input[type=file]").set_input_files(str(export))
    wait_idle(page, timeout_ms=120_000)
    uploaders.nth(1).locator("input[type=file]").set_input_files(str(history))
    success = expander.get_by_test_id("stAlert").filter(has_text="with history")
    expect(success).to_be_visible(timeout=120_000)
    wait_idle(page, timeout_ms=120_000)
    text = success.inner_text()
    # The export's bare store is replaced by its reading with the history (QA s46).
    assert "Loaded as store mem0 (Mem0 · e.json + history h.json):" in text, text
    assert "It replaces the store loaded before from the same export without a history" in text
    assert "with history h.json (json history: 3 row(s))" in text, text
    assert READ in text, text
    assert page.get_by_test_id("stException").count() == 0
    deleted = page.get_by_test_id("stMetric").filter(
        has=page.get_by_test_id("stMetricLabel").get_by_text("Deleted (left out)", exact=True)
    )
    assert deleted.first.get_by_test_id("stMetricValue").inner_text() == "1"
