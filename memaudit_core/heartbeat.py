"""A hook that long loops call, so that a caller can show progress and be stopped in them.

The app's progress bar is where Streamlit can stop a script: its Stop button acts at the
script's next Streamlit call. A computation that makes no call for tens of seconds cannot be
stopped (app QA: the writers of a 58-budget sweep of a 3,000-experience package ran 28-38 s
before the first progress tick, and Stop waited for it). Long loops call :func:`beat`; it
calls the callback that :func:`heartbeat` installed for the current context, at most once per
``interval`` seconds. Without one installed, :func:`beat` costs a context-variable lookup.

Examples
--------
>>> calls = []
>>> with heartbeat(lambda: calls.append(1), interval=0.0):
...     beat(); beat()
>>> len(calls)
2
>>> beat()  # no callback installed: nothing happens
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_CURRENT: ContextVar[tuple[Callable[[], None], float, list[float]] | None] = ContextVar(
    "memaudit_heartbeat", default=None
)


@contextmanager
def heartbeat(callback: Callable[[], None] | None, interval: float = 0.25) -> Iterator[None]:
    """Install ``callback`` for :func:`beat` calls in this block (``None``: install nothing)."""
    if callback is None:
        yield
        return
    token = _CURRENT.set((callback, interval, [time.monotonic()]))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def beat() -> None:
    """Call the installed callback if ``interval`` seconds passed since its last call."""
    current = _CURRENT.get()
    if current is None:
        return
    callback, interval, last = current
    now = time.monotonic()
    if now - last[0] >= interval:
        last[0] = now
        callback()


__all__ = ["beat", "heartbeat"]
