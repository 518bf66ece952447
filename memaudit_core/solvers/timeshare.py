"""A time budget for a whole computation, shared fairly by its engine runs.

A budget sweep or an ablation curve makes one engine run per budget and pool. With only a
per-run time limit, a hard package takes that limit times the number of runs (app QA: the
Budget sweep page took 49-54 s on a hard 50-group package with 20 s per run). Inside
:func:`shared_time` every run made through
:func:`memaudit_core.solvers.certify.solve_certified` gets at most its own limit and at most its
fair share of what is left: the remaining time divided by the runs still expected. Easy runs
thus hand their unused time on to the hard ones, and the last run gets all that remains. A run
stopped early is reported as any limited run is: incumbent, proven bound and gap, never OPT.

The share is a context variable, so it follows the thread that opened it (each Streamlit session
has its own) and does not reach worker processes; the functions that accept a total refuse it
together with ``workers > 1``.

Examples
--------
>>> share = TimeShare(10.0, 4, clock=iter([0.0, 0.0, 1.0, 7.0, 7.0]).__next__)
>>> share.run_limit(None)  # 10 s left for 4 runs
2.5
>>> share.run_limit(None)  # 1 s used: 9 s for the 3 runs left
3.0
>>> share.run_limit(1.0)  # never above the run's own limit
1.0
>>> share.run_limit(None)  # the last run gets what is left
3.0
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Callable, Iterator

from ..errors import UsageError

#: The least a run is given once the total is spent: enough for branch-and-bound to return its
#: starting incumbent and its root bound (about 0.01 s on 50-100 random groups), so a late run
#: still reports a gap rather than nothing. QA: a floor of 0.05 s made a 600-solve seed band
#: take 34 s of a 5 s total.
MIN_RUN_S = 0.01
#: Below this share ``auto`` runs branch-and-bound alone: stopped that early, HiGHS has often
#: not finished its root LP and reports the trivial bound (the sum of all weights), where
#: B&B's root bound is already within a few per cent.
BNB_BELOW_S = 0.5

_ACTIVE: contextvars.ContextVar[TimeShare | None] = contextvars.ContextVar(
    "memaudit_time_share", default=None
)


class TimeShare:
    """``total_s`` seconds for ``expected_runs`` engine runs, handed out one run at a time.

    Parameters
    ----------
    total_s : float
        Seconds for all the runs together, counted from construction.
    expected_runs : int
        How many runs the computation expects to make. An estimate is fine: a run beyond it
        gets all that is left, and :meth:`skip` gives back runs that turned out unnecessary.
    clock : callable, optional
        Returns seconds (default :func:`time.perf_counter`); tests pass a fake one.
    """

    def __init__(
        self,
        total_s: float,
        expected_runs: int,
        *,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.total_s = float(total_s)
        self.pending = max(0, int(expected_runs))
        self.runs_made = 0
        self.expected_made = 0  # runs_made without the extra ones (extra_runs)
        self._extra = False
        self._clock = clock
        self._start = clock()

    @property
    def runs_left(self) -> int:
        """Runs the next share is divided by (the expected ones still to make, at least 1)."""
        return max(1, self.pending)

    def elapsed_s(self) -> float:
        """Seconds since the share started."""
        return self._clock() - self._start

    def overrun_text(self, *, writers: bool = True) -> str:
        """What the total's note should add when the computation took clearly longer: each
        run's minimum (model building, a root bound) is not interrupted, nor are the writers
        of a call that ran some (``writers``; QA s45: a call that ran none was said to). The
        default, ``writers=True``, is the wording from before ``writers`` was asked."""
        took = self.elapsed_s()
        if took <= 1.1 * self.total_s + 0.5:
            return ""
        least = f"the least each of its {self.runs_made} solves needs"
        held = f"its writers and {least} are" if writers else f"{least} is"
        return f"; it took {took:.1f} s in all, as {held} not interrupted"

    def overrun_note(self, what: str, text: str | None = None, *, writers: bool = True) -> str:
        """The overrun as a note of its own ('' when there was none), for a call whose notes
        do not already carry :meth:`overrun_text` (``text``, when already taken): it went
        only into the note on unproven optima, so a call whose solves were all proven said
        nothing of taking 1.2 s of a 0.001 s total (QA s44). ``text`` stays the second
        positional argument it was, and ``writers`` defaults to the old wording (QA s45
        review: callers written before ``writers`` raised TypeError)."""
        text = self.overrun_text(writers=writers) if text is None else text
        return f"{what} shared a total of {self.total_s:g} s{text}." if text else ""

    def remaining_s(self) -> float:
        """Seconds left of the total (0 once it is spent)."""
        return max(0.0, self.total_s - self.elapsed_s())

    def run_limit(self, time_limit: float | None) -> float:
        """The time limit of the next run: its fair share, capped by its own ``time_limit``."""
        if self._extra:  # a run beyond the expected ones: only its own limit and what is left
            share = max(MIN_RUN_S, self.remaining_s())
        else:
            share = max(MIN_RUN_S, self.remaining_s() / self.runs_left)
            self.pending = max(0, self.pending - 1)
            self.expected_made += 1
        self.runs_made += 1
        return share if time_limit is None else min(float(time_limit), share)

    @contextlib.contextmanager
    def extra_runs(self) -> Iterator[None]:
        """Runs made inside this block were not expected (solving unproven results again):
        they take no expected run's count, so the runs still to come keep their shares."""
        self._extra = True
        try:
            yield
        finally:
            self._extra = False

    def spare_s(self, n_runs: int = 1) -> float:
        """Seconds that can go to solving unproven results again, for a part of the work that
        made ``n_runs`` runs: its share beside the runs still expected (a package of a band
        leaves the later packages theirs), so everything left once they are all made."""
        n_runs = max(1, int(n_runs))
        return self.remaining_s() * n_runs / (self.pending + n_runs)

    def skip(self, n_runs: int = 1) -> None:
        """``n_runs`` expected runs will not be made (answered another way)."""
        self.pending = max(0, self.pending - int(n_runs))


def check_total_time_limit(total_time_limit: float | None, workers: int = 1) -> None:
    """Refuse a total that is not a finite number of seconds > 0, or one with worker processes."""
    from . import check_time_limit  # the package imports this module's users

    check_time_limit(total_time_limit, "total time limit")
    if total_time_limit is not None and workers > 1:
        raise UsageError(
            "a total time limit is shared by the runs of one process: use it with one worker "
            f"(got {workers} workers), or give each run its own time limit instead"
        )


@contextlib.contextmanager
def shared_time(total_s: float | None, expected_runs: int) -> Iterator[TimeShare | None]:
    """Share ``total_s`` seconds among the engine runs made inside the block.

    ``None`` shares nothing (each run keeps its own limit). Inside an enclosing share the new
    one gets at most what the enclosing share has left, and its runs count against it.
    """
    if total_s is None:
        yield None
        return
    outer = _ACTIVE.get()
    total = float(total_s) if outer is None else min(float(total_s), outer.remaining_s())
    share = TimeShare(total, expected_runs)
    token = _ACTIVE.set(share)
    try:
        yield share
    finally:
        _ACTIVE.reset(token)
        if outer is not None:
            outer.skip(share.expected_made)


def overrun_notes(share: TimeShare | None, what: str, *, writers: bool) -> tuple[str, ...]:
    """:meth:`TimeShare.overrun_note` as the notes a result adds (none without a share or an
    overrun), for the callers whose results had no word of it (QA s45: the union curve,
    certification report and cost-rule, capacity and noise sensitivities stopped starting
    solves once their total was spent and said nothing of taking far longer)."""
    note = "" if share is None else share.overrun_note(what, writers=writers)
    return (note,) if note else ()


def active_share() -> TimeShare | None:
    """The share of the enclosing :func:`shared_time` block, if any."""
    return _ACTIVE.get()


def run_time_limit(time_limit: float | None) -> float | None:
    """The limit of the next engine run: ``time_limit``, or less inside a shared block."""
    share = _ACTIVE.get()
    return time_limit if share is None else share.run_limit(time_limit)


def skip_runs(n_runs: int) -> None:
    """Tell the enclosing share (if any) that ``n_runs`` expected runs will not be made."""
    share = _ACTIVE.get()
    if share is not None and n_runs > 0:
        share.skip(n_runs)


__all__ = [
    "MIN_RUN_S",
    "TimeShare",
    "active_share",
    "check_total_time_limit",
    "overrun_notes",
    "run_time_limit",
    "shared_time",
    "skip_runs",
]
