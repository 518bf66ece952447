"""Review of session s40's External stores changes, seen in the app.

1. An OpenMemory backup whose ``state`` marks a memory deleted loaded with "2 memories" and no
   word of the deleted one (only the CLI's summary line said it); the success message now says
   it, as it does for a Mem0 history's DELETE.
2. With one pending suggestion the button read "Confirm all 1 suggestions".
"""

from __future__ import annotations

import io
import json
import zipfile

from app_utils import open_app

PAGE = "pages/4_External_stores.py"
DEMO = "sample:external-stores-demo"


def _backup_zip() -> bytes:
    """OpenMemory's export: memories.json with one active, one deleted, one archived memory."""

    def memory(memory_id: str, content: str, state: str) -> dict:
        return {
            "id": memory_id,
            "user_id": "u1",
            "app_id": "a1",
            "content": content,
            "metadata": {},
            "state": state,
            "created_at": "2025-06-01T10:00:00",
            "updated_at": None,
            "archived_at": "2025-06-02T00:00:00" if state == "archived" else None,
            "deleted_at": "2025-06-03T00:00:00" if state == "deleted" else None,
            "category_ids": [],
        }

    doc = {
        "user": {"id": "u1", "user_id": "alice"},
        "apps": [{"id": "a1", "name": "claude"}],
        "categories": [],
        "memories": [
            memory("m1", "Alice lives in Lisbon", "active"),
            memory("m2", "Alice lives in Berlin", "deleted"),
            memory("m3", "Alice likes tea", "archived"),
        ],
        "memory_categories": [],
        "status_history": [],
        "access_controls": [],
        "export_meta": {"version": "1", "generated_at": "2025-07-01T00:00:00"},
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("memories.json", json.dumps(doc))
    return out.getvalue()


def test_an_openmemory_backup_says_its_deleted_memory_was_left_out() -> None:
    at = open_app(PAGE, package=DEMO, budget="24", store="store:mem0")
    at.selectbox(key="w_ext_format").set_value("mem0").run()
    at.file_uploader(key="w_ext_upload").set_value(
        ("backup.zip", _backup_zip(), "application/zip")
    ).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    (success,) = [s.value.replace("\\", "").replace("\u2060", "") for s in at.success]
    # m1 (5 words) and m3 (3 words) are kept; m2 is deleted. The demo already has a store
    # "mem0", so the import is "mem0-2".
    assert success == (
        "Loaded as store `mem0-2` (OpenMemory · backup.zip): 2 memories costed by words; "
        "0 superseded kept, 1 deleted not kept (m2). Annotate its coverage below."
    )


def test_one_pending_suggestion_is_said_in_the_singular() -> None:
    # The demo's letta store has exactly one coverage suggestion (QA s40, annotator report).
    at = open_app(PAGE, package=DEMO, budget="24", store="store:letta")
    assert not at.exception, [e.value for e in at.exception]
    assert at.button(key="w_ext_confirm").label == "Confirm the 1 suggestion"
