"""AppTest helpers shared by the app's test files."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def upload_file(at: AppTest, name: str, data: bytes) -> str:
    """Upload ``data`` as ``name`` through the sidebar's uploader; the session's package key.

    Asserts the upload was taken: no exception, no error, an ``upload:`` key chosen.
    """
    at.file_uploader(key="w_upload").upload(name, data, "application/json").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    key = at.session_state["ma_package"]
    assert key.startswith("upload:"), key
    return key
