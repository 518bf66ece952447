"""AppTest helpers shared by the app's test files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parent.parent / "app.py"


def open_app(page: str = "app.py", timeout: float = 120, /, **query: str) -> AppTest:
    """The app run once with ``query`` as its link's parameters (a link may carry ``page=``
    too: positional-only arguments), then switched to ``page`` (a path under the repository,
    e.g. ``pages/2_Compare.py``) unless it is ``app.py``."""
    at = AppTest.from_file(str(APP), default_timeout=timeout)
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    if page != "app.py":
        at.switch_page(page).run()
    return at


def open_linked(
    page: str,
    package: str,
    budget: str | None = None,
    /,
    *,
    store: str | None = None,
    **settings: str,
) -> AppTest:
    """``page`` opened by a link naming ``package`` (and ``budget`` and ``store``, shared
    settings read on the first run) and the page's own ``settings``: the app runs first with
    the package, then the settings join the link and the page opens (a page reads its settings
    on its first visit). Asserts no exception."""
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params["package"] = package
    if budget is not None:
        at.query_params["budget"] = budget
    if store is not None:
        at.query_params["store"] = store
    at.run()
    for name, value in settings.items():
        at.query_params[name] = value
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


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


def capture_downloads(monkeypatch) -> dict[str, dict[str, Any]]:
    """Every download button an AppTest run offers from now on, by widget key (label, data
    and the keyword arguments): ``st.download_button`` and a container's (some pages put
    their records in a row of columns). AppTest does not expose download buttons."""
    import streamlit as st
    from streamlit.delta_generator import DeltaGenerator

    offered: dict[str, dict[str, Any]] = {}

    def fake(*args: Any, **kwargs: Any) -> bool:
        label, data = args[-2:]
        offered[kwargs["key"]] = {"label": label, "data": data, **kwargs}
        return False

    monkeypatch.setattr(st, "download_button", fake)
    monkeypatch.setattr(DeltaGenerator, "download_button", fake)
    return offered


def offered_text(offer: dict[str, Any]) -> str:
    """The text an offered download holds: its data, made now when the button defers it (a
    callable, as the tables' CSVs and the saved results are made on click)."""
    data = offer["data"]
    data = data() if callable(data) else data
    return data.decode("utf-8") if isinstance(data, bytes) else data
