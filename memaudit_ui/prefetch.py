"""Per-budget views one slider step either side of the budget shown, computed in the background
once the page's run has ended, so that the slider's next step is answered at once.

A budget change recomputes the page's view: the certified optimum, the writer's store and the
explanation (35-45 ms on the Compare page's 50-experience sample, and more beside the browser
on two cores). The slider moves by one step per key press, so the next view a user asks for
is most often one step up or down. After each run of a page, those two views go to one
background thread (:meth:`Prefetcher.schedule`); the next run's cache miss takes the finished
(or running) result (:meth:`Prefetcher.take_or_run`) instead of starting over. Everything is
computed by the same core call with the same arguments as on demand, so a prefetched view is
the view.

Kept cheap for everyone else:

- The thread waits for the page's script run to end before it starts (it would take the GIL
  from the page being drawn), and runs at a lower CPU priority (nice +10 on Linux), so the
  browser drawing the page keeps its core.
- Only views that took at most :data:`PREFETCH_MAX_S` of CPU to compute are prefetched: a
  large package's 10 s solve is not done twice on speculation. A view that runs a plugin
  writer never is (:func:`memaudit_ui.cached._budget_view`): the user's code may call a paid
  service.
- One worker; jobs not started are cancelled when the user moves elsewhere; at most
  :data:`MAX_JOBS` results are held, and a result taken is dropped from here (Streamlit's
  cache keeps it).
- HiGHS is never run in two threads at once (the core holds a lock around every HiGHS solve,
  :data:`memaudit_core.solvers.milp.HIGHS_LOCK`).
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from typing import Any, TypeVar

_R = TypeVar("_R")

#: A view whose last computation took more CPU time than this (all of the server's threads)
#: is not prefetched at its neighbours.
PREFETCH_MAX_S = 0.5
#: Results and jobs held at most (oldest first out).
MAX_JOBS = 8
#: How long a job waits for the page's script run to end before it starts anyway.
AFTER_RUN_WAIT_S = 5.0
#: The worker's niceness on Linux: the browser drawing the page comes first.
WORKER_NICE = 10


#: Set to 0 to turn prefetching off (the test suite does, except where it tests it).
ENV_SWITCH = "MEMAUDIT_APP_PREFETCH"


def enabled() -> bool:
    """Whether views are prefetched (on unless :data:`ENV_SWITCH` is ``0``)."""
    return os.environ.get(ENV_SWITCH, "1").strip() != "0"


def _lower_priority() -> None:
    try:  # Linux: a thread's own niceness (getpriority/setpriority take its native id)
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WORKER_NICE)
    except (AttributeError, OSError):
        pass  # elsewhere the worker keeps the process's priority


class Prefetcher:
    """One background worker computing views before they are asked for.

    Keys are any hashable value naming one computation exactly (the view's name and every
    argument that changes its result); :func:`take_or_run` and :func:`schedule` must build
    them the same way.

    Examples
    --------
    >>> p = Prefetcher()
    >>> p.schedule([(("square", 3), lambda: 9)], seconds_key="square")  # speed unknown: skipped
    0
    >>> p.take_or_run(("square", 3), lambda: 3 * 3, seconds_key="square")
    9
    >>> p.schedule([(("square", 4), lambda: 16)], seconds_key="square")
    1
    >>> p.wait_idle()
    >>> p.take_or_run(("square", 4), lambda: -1, seconds_key="square")  # taken, not recomputed
    16
    >>> p.shutdown()
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: OrderedDict[Hashable, Future] = OrderedDict()
        self._after: dict[Hashable, threading.Thread | None] = {}
        self._seconds: dict[Hashable, float] = {}
        self._executor: ThreadPoolExecutor | None = None
        #: How many results were taken from a job, and how many computed on demand.
        self.taken = 0
        self.computed = 0

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="memaudit-prefetch", initializer=_lower_priority
            )
        return self._executor

    def _timed(self, seconds_key: Hashable, compute: Callable[[], _R]) -> _R:
        # The process's CPU time, not the wall clock: a job at a lower priority waits for the
        # browser and would look slow, and a view that solves on another thread (the
        # Overview's optimum) spends its time there.
        started = time.process_time()
        value = compute()
        with self._lock:
            self._seconds[seconds_key] = time.process_time() - started
        return value

    def take_or_run(self, key: Hashable, compute: Callable[[], _R], *, seconds_key: Hashable) -> _R:
        """The result of the job for ``key`` if one was scheduled (waiting for it if it is
        running), else ``compute()`` now. A job that failed or was cancelled is computed again
        here, so an error reaches the page the usual way. ``seconds_key`` groups the views whose
        compute time decides whether their neighbours are prefetched."""
        with self._lock:
            job = self._jobs.pop(key, None)
            after = self._after.pop(key, None)
        if job is not None and after is threading.current_thread() and not job.done():
            # Asked for by the very run it waits for (a page asking for a neighbour's view
            # itself): waiting would stall that run until the job's wait timed out.
            job.cancel()
            job = None
        if job is not None and not job.cancel():  # started (or done): wait for it
            try:
                value = job.result()
            except (Exception, CancelledError):  # noqa: BLE001 - recomputed below, raising there
                pass
            else:
                self.taken += 1
                return value
        self.computed += 1
        return self._timed(seconds_key, compute)

    def schedule(
        self,
        jobs: Sequence[tuple[Hashable, Callable[[], Any]]],
        *,
        seconds_key: Hashable,
        after: threading.Thread | None = None,
    ) -> int:
        """Queue ``jobs`` (key, computation), in order, unless the views under ``seconds_key``
        are slow or not yet timed; cancel every queued job not among them. Each job first
        waits for ``after`` (the page's script thread) to end. Returns how many were queued."""
        wanted = {key for key, _ in jobs}
        with self._lock:
            for key in [k for k, job in self._jobs.items() if k not in wanted]:
                if self._jobs[key].cancel():  # not started: the user went elsewhere
                    del self._jobs[key]
                    self._after.pop(key, None)
            seconds = self._seconds.get(seconds_key)
            if seconds is None or seconds > PREFETCH_MAX_S:
                return 0
            queued = 0
            for key, compute in jobs:
                if key in self._jobs:
                    continue
                self._jobs[key] = self._pool().submit(self._job, after, seconds_key, compute)
                self._after[key] = after
                queued += 1
            while len(self._jobs) > MAX_JOBS:
                old_key, old_job = self._jobs.popitem(last=False)
                old_job.cancel()
                self._after.pop(old_key, None)
        return queued

    def _job(
        self,
        after: threading.Thread | None,
        seconds_key: Hashable,
        compute: Callable[[], _R],
    ) -> _R:
        if after is not None and after is not threading.current_thread():
            after.join(AFTER_RUN_WAIT_S)
        return self._timed(seconds_key, compute)

    def wait_idle(self, timeout: float = 60.0) -> None:
        """Wait until every job queued so far has ended (tests and benchmarks)."""
        with self._lock:
            jobs = list(self._jobs.values())
        deadline = time.monotonic() + timeout
        for job in jobs:
            try:
                job.result(timeout=max(0.0, deadline - time.monotonic()))
            except Exception:  # noqa: BLE001 - a failed or cancelled job is idle too
                pass

    def clear(self) -> None:
        """Forget every job, timing and count (queued jobs are cancelled)."""
        with self._lock:
            for job in self._jobs.values():
                job.cancel()
            self._jobs.clear()
            self._after.clear()
            self._seconds.clear()
            self.taken = self.computed = 0

    def shutdown(self) -> None:
        """Stop the worker (a job running ends on its own; nothing waits for it)."""
        self.clear()
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)


#: The app's one prefetcher (one per server process).
PREFETCHER = Prefetcher()
