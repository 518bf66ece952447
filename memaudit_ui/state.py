"""Declared session-state keys and their mirror in the URL query string.

Shared choices live under keys that are *not* widget keys (Streamlit drops a widget's state
when the page that drew it is left). Each run, the frame copies them into the URL so any view
can be shared as a link, and a fresh session reads them back from the URL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

#: session-state key -> URL parameter. Values are strings in the URL.
URL_KEYS = {
    "ma_package": "package",
    "ma_budget": "budget",
    "ma_store": "store",
    "ma_present": "present",
}


@dataclass(frozen=True)
class Choices:
    package_key: str | None
    budget: float | None
    store_key: str | None
    present: bool


def init_from_url() -> None:
    """On a session's first run, seed the declared keys from the URL query string."""
    state = st.session_state
    if state.get("ma_initialised"):
        return
    params = st.query_params
    if "package" in params:
        state["ma_package"] = params["package"]
    if "budget" in params:
        try:
            state["ma_budget"] = float(params["budget"])
        except ValueError:
            state["ma_url_problem"] = f"ignored budget={params['budget']!r} in the link (not a number)"
    if "store" in params:
        state["ma_store"] = params["store"]
    state["ma_present"] = params.get("present", "0") in ("1", "true", "yes")
    state["ma_initialised"] = True


def choices() -> Choices:
    state = st.session_state
    return Choices(
        state.get("ma_package"),
        state.get("ma_budget"),
        state.get("ma_store"),
        bool(state.get("ma_present", False)),
    )


def _url_value(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def sync_url(extra: dict[str, str] | None = None) -> None:
    """Mirror the declared keys (and page-specific extras) into the URL."""
    state = st.session_state
    wanted: dict[str, str] = {}
    for key, param in URL_KEYS.items():
        value = state.get(key)
        if value is None or (param == "present" and not value):
            continue
        wanted[param] = _url_value(value)
    if extra:
        wanted.update({k: v for k, v in extra.items() if v is not None})
    current = st.query_params.to_dict()
    if current != wanted:
        st.query_params.from_dict(wanted)
