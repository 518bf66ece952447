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

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

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


#: What the computation under :func:`watch` is doing now (engine, stage, incumbent, bound), for
#: the watcher's thread to read.
_STATUS: ContextVar[dict[str, Any] | None] = ContextVar("memaudit_status", default=None)


def status() -> dict[str, Any] | None:
    """The dict :func:`watch` reads in this context (None: nobody watches).

    Code that reports from another thread (HiGHS calls its callbacks from its own) takes it
    here first, as a context variable is not seen there, and updates it directly.
    """
    return _STATUS.get()


def note(**fields: Any) -> None:
    """Record ``fields`` for the watcher, if one is installed (else a context-variable lookup)."""
    current = _STATUS.get()
    if current is not None:
        current.update(fields)


@contextmanager
def watch(
    emit: Callable[[float, dict[str, Any]], None] | None, *, after: float, every: float
) -> Iterator[None]:
    """Call ``emit(elapsed seconds, status)`` from a timer thread, first after ``after``
    seconds, then every ``every`` seconds, until the block ends (``None``: watch nothing).

    A thread rather than :func:`beat`, because a HiGHS run makes no Python call for minutes
    (CLI QA s43: an unlimited solve of 48,000 candidates printed nothing for 15 minutes); it
    releases the GIL while it runs, so the thread gets to print.

    >>> lines = []
    >>> with watch(lambda t, s: lines.append(s.get("engine")), after=0.2, every=60.0):
    ...     note(engine="milp"); time.sleep(0.5)
    >>> lines[:1]
    ['milp']
    """
    if emit is None:
        yield
        return
    current: dict[str, Any] = {}
    token = _STATUS.set(current)
    done = threading.Event()
    start = time.monotonic()

    def run() -> None:
        wait = after
        while not done.wait(wait):
            emit(time.monotonic() - start, dict(current))
            wait = every

    thread = threading.Thread(target=run, name="memaudit-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(timeout=5.0)
        _STATUS.reset(token)


__all__ = ["beat", "heartbeat", "note", "status", "watch"]
