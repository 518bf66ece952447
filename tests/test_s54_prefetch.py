"""The app's prefetch of the views one slider step either side of the budget (s54), and the one
HiGHS solve at a time that makes it safe.

A budget change on the Compare page recomputed the optimum, the store and the explanation while
the user waited. After a run, the views at the budget one step down and one step up are now
computed in the background, so the slider's next step is answered from them. Checked here: the
worker's rules (what it queues, what it cancels, when it starts, what it holds), that a page
stepped to a prefetched budget shows exactly what a fresh session shows there, and that two
threads never solve with HiGHS at the same time (two Highs instances in two threads can crash
the process).
"""

from __future__ import annotations

import threading
import time

import pytest
from app_utils import open_linked

from memaudit_ui import frame, prefetch


@pytest.fixture
def worker():
    p = prefetch.Prefetcher()
    yield p
    p.shutdown()


def _timed(p: prefetch.Prefetcher, seconds_key: str, value: object = 0) -> None:
    """Give ``seconds_key`` a compute time (the worker prefetches only timed, quick views)."""
    p.take_or_run(("timing", seconds_key), lambda: value, seconds_key=seconds_key)


def _spin(cpu_seconds: float) -> None:
    """Busy for ``cpu_seconds`` of CPU time (the worker times views by CPU, not the clock)."""
    end = time.process_time() + cpu_seconds
    while time.process_time() < end:
        pass


def _never() -> object:
    raise AssertionError("computed on demand, though a prefetched result was there")


def test_a_prefetched_result_is_taken_not_recomputed(worker) -> None:
    _timed(worker, "v")
    assert worker.schedule([(("v", 1), lambda: "one"), (("v", 2), lambda: "two")], seconds_key="v")
    worker.wait_idle()
    assert worker.take_or_run(("v", 2), _never, seconds_key="v") == "two"
    assert worker.take_or_run(("v", 1), _never, seconds_key="v") == "one"
    assert (worker.taken, worker.computed) == (2, 1)
    # Taken means handed over: Streamlit's cache keeps it, the worker holds it no longer.
    assert worker.take_or_run(("v", 1), lambda: "again", seconds_key="v") == "again"


def test_untimed_or_slow_views_are_not_prefetched(worker, monkeypatch) -> None:
    ran = []
    job = [(("v", 1), lambda: ran.append(1))]
    assert worker.schedule(job, seconds_key="v") == 0  # never computed here: its cost unknown
    monkeypatch.setattr(prefetch, "PREFETCH_MAX_S", 0.05)
    worker.take_or_run(("v", 0), lambda: _spin(0.1), seconds_key="v")
    assert worker.schedule(job, seconds_key="v") == 0  # took 0.1 s of CPU > 0.05 s
    worker.take_or_run(("w", 0), lambda: 0, seconds_key="w")
    assert worker.schedule([(("w", 1), lambda: ran.append(2))], seconds_key="w") == 1
    worker.wait_idle()
    assert ran == [2]


def test_a_job_starts_only_after_the_page_run(worker) -> None:
    _timed(worker, "v")
    release = threading.Event()
    page_run = threading.Thread(target=release.wait)
    page_run.start()
    started = threading.Event()
    worker.schedule([(("v", 1), started.set)], seconds_key="v", after=page_run)
    assert not started.wait(0.3)  # the page's script thread is still running
    release.set()
    assert started.wait(10)
    page_run.join()


def test_jobs_not_started_are_cancelled_when_the_user_moves_on(worker) -> None:
    _timed(worker, "v")
    gate = threading.Event()
    ran = []
    worker.schedule([(("v", 1), gate.wait)], seconds_key="v")  # keeps the one worker busy
    worker.schedule(
        [
            (("v", 1), gate.wait),
            (("v", 2), lambda: ran.append(2)),
            (("v", 3), lambda: ran.append(3)),
        ],
        seconds_key="v",
    )
    # Moved to 5: 2 and 3 were never started, so they are dropped; 1 is running and stays.
    worker.schedule([(("v", 1), gate.wait), (("v", 6), lambda: ran.append(6))], seconds_key="v")
    gate.set()
    worker.wait_idle()
    assert ran == [6]
    assert worker.take_or_run(("v", 2), lambda: "now", seconds_key="v") == "now"


def test_a_queued_job_asked_for_is_computed_at_once(worker) -> None:
    """Asked for while still queued behind another job: computed now, not after it."""
    _timed(worker, "v")
    gate = threading.Event()
    worker.schedule([(("v", 1), gate.wait), (("v", 2), _never)], seconds_key="v")
    assert worker.take_or_run(("v", 2), lambda: "now", seconds_key="v") == "now"
    gate.set()
    worker.wait_idle()


def test_a_failed_job_is_recomputed_where_its_error_is_shown(worker) -> None:
    _timed(worker, "v")

    def fails() -> None:
        raise ValueError("from the job")

    worker.schedule([(("v", 1), fails)], seconds_key="v")
    worker.wait_idle()
    assert worker.take_or_run(("v", 1), lambda: "again", seconds_key="v") == "again"
    worker.schedule([(("v", 2), fails)], seconds_key="v")
    worker.wait_idle()
    with pytest.raises(KeyError, match="on demand"):
        worker.take_or_run(("v", 2), lambda: {}["on demand"], seconds_key="v")


def test_the_worker_holds_few_results(worker) -> None:
    _timed(worker, "v")
    for k in range(prefetch.MAX_JOBS + 5):
        worker.schedule([(("v", k), lambda k=k: k)], seconds_key="v")
        worker.wait_idle()
    assert len(worker._jobs) == prefetch.MAX_JOBS
    assert worker.take_or_run(("v", 0), lambda: "gone", seconds_key="v") == "gone"  # oldest out
    last = prefetch.MAX_JOBS + 4
    assert worker.take_or_run(("v", last), _never, seconds_key="v") == last


def test_the_worker_runs_at_a_lower_priority(worker) -> None:
    _timed(worker, "v")
    own = __import__("os").getpriority(__import__("os").PRIO_PROCESS, 0)
    worker.schedule(
        [(("v", 1), lambda: __import__("os").getpriority(__import__("os").PRIO_PROCESS, 0))],
        seconds_key="v",
    )
    worker.wait_idle()
    assert worker.take_or_run(("v", 1), _never, seconds_key="v") == own + prefetch.WORKER_NICE


# --------------------------------------------------------------------------- in the app


@pytest.fixture
def app_prefetch(monkeypatch):
    """The app's prefetcher, on, fresh, and Streamlit's cache empty (so the page computes)."""
    import streamlit as st

    monkeypatch.setenv(prefetch.ENV_SWITCH, "1")
    # What these tests check does not depend on this machine's speed (a loaded machine may
    # take more than 0.5 s for a view; the rule itself is tested above).
    monkeypatch.setattr(prefetch, "PREFETCH_MAX_S", 60.0)
    st.cache_data.clear()
    prefetch.PREFETCHER.clear()
    yield prefetch.PREFETCHER
    prefetch.PREFETCHER.wait_idle()
    prefetch.PREFETCHER.clear()
    st.cache_data.clear()


def _shown(at) -> tuple:
    return (
        [(m.label, m.value) for m in at.metric],
        [t.value for t in at.text],
        [d.value.to_csv() for d in at.dataframe],
        [m.value for m in at.markdown],
    )


def test_a_step_to_a_prefetched_budget_shows_what_a_fresh_session_shows(app_prefetch) -> None:
    at = open_linked("pages/2_Compare.py", "sample:event-graph-50", "125")
    at_125 = _shown(at)
    app_prefetch.wait_idle()
    taken = app_prefetch.taken
    at.sidebar.slider[0].set_value(126.0).run()
    assert not at.exception
    assert app_prefetch.taken == taken + 1  # the view at 126 came from the worker
    stepped = _shown(at)
    at.sidebar.slider[0].set_value(125.0).run()  # back: Streamlit's own cache, nothing taken
    assert app_prefetch.taken == taken + 1
    app_prefetch.wait_idle()

    app_prefetch.clear()
    import streamlit as st

    st.cache_data.clear()
    fresh = open_linked("pages/2_Compare.py", "sample:event-graph-50", "126")
    assert _shown(fresh) == stepped
    assert stepped[0] != at_125[0]  # the tiles moved: OPT is 61.7 at 126, 61.4 at 125


def test_the_next_step_in_the_direction_of_travel_comes_first(app_prefetch) -> None:
    at = open_linked("pages/2_Compare.py", "sample:event-graph-50", "125")
    assert frame.budget_neighbours(125.0) == ()  # not this session's state (AppTest's own)
    assert at.session_state[frame.NEIGHBOURS_KEY] == (125.0, (126.0, 124.0))
    at.sidebar.slider[0].set_value(124.0).run()
    assert at.session_state[frame.NEIGHBOURS_KEY] == (124.0, (123.0, 125.0))
    at.sidebar.slider[0].set_value(0.0).run()  # the slider's end: one neighbour
    assert at.session_state[frame.NEIGHBOURS_KEY] == (0.0, (1.0,))


def test_the_prefetch_switch_turns_it_off(app_prefetch, monkeypatch) -> None:
    monkeypatch.setenv(prefetch.ENV_SWITCH, "0")
    open_linked("pages/2_Compare.py", "sample:event-graph-50", "125")
    app_prefetch.wait_idle()
    assert not app_prefetch._jobs
    at = open_linked("pages/2_Compare.py", "sample:event-graph-50", "126")
    assert not at.exception and app_prefetch.taken == 0


# --------------------------------------------------------------------------- one HiGHS at a time


def test_two_threads_never_solve_with_highs_at_once(monkeypatch) -> None:
    """Two threads solving with the MILP engine (as a page's script thread and the prefetch
    thread may): HiGHS is inside ``run`` for one of them at a time."""
    import highspy

    from memaudit_core.compiled import compile_package
    from memaudit_core.generators import generate
    from memaudit_core.solvers import solve

    inside, most = [0], [0]
    count_lock = threading.Lock()
    real_run = highspy.Highs.run

    def counted_run(self):
        with count_lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        try:
            time.sleep(0.05)  # long enough for the other thread to arrive
            return real_run(self)
        finally:
            with count_lock:
                inside[0] -= 1

    monkeypatch.setattr(highspy.Highs, "run", counted_run)
    inst = compile_package(generate("random_coverage", seed=3, n_groups=40))
    values = {}

    def solve_at(budget: float) -> None:
        values[budget] = solve(inst, budget, solver="milp").value

    threads = [threading.Thread(target=solve_at, args=(b,)) for b in (8.0, 12.0, 8.0, 12.0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1, f"{most[0]} HiGHS solves ran at once"
    assert set(values) == {8.0, 12.0}
    assert values[8.0] == solve(inst, 8.0, solver="milp").value


def test_a_plugin_writers_view_is_never_prefetched(app_prefetch, tmp_path, monkeypatch) -> None:
    """A plugin writer is the user's code (it may call a paid service): it runs when its view
    is asked for, not for the budgets either side."""
    from memaudit_core import plugins, writers

    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "pf_s54_plugin.py").write_text(
        "def keep_nothing(view):\n    return []\n", encoding="utf-8"
    )
    spec = "pf_s54_plugin:keep_nothing"
    plugins.register_module_writer(spec)
    try:
        at = open_linked(
            "pages/2_Compare.py", "sample:event-graph-50", "125", store=f"writer:{spec}"
        )
        assert at.session_state["ma_store"] == f"writer:{spec}"
        assert at.session_state[frame.NEIGHBOURS_KEY] == (125.0, (126.0, 124.0))
        app_prefetch.wait_idle()
        queued = [key for key in app_prefetch._jobs if key[0] == "compare_view"]
        assert queued == []
        # The same page with a reference writer is prefetched (so the check above can fail).
        at.sidebar.selectbox(key="w_store").set_value("writer:gvt").run()
        app_prefetch.wait_idle()
        queued = [key for key in app_prefetch._jobs if key[0] == "compare_view"]
        assert {dict(key[1:])["budget"] for key in queued} == {124.0, 126.0}
    finally:
        writers.unregister_writer(spec)


@pytest.mark.parametrize("page", ["app.py", "pages/3_Evidence_explorer.py"])
def test_the_overview_and_the_evidence_explorer_are_prefetched_too(app_prefetch, page) -> None:
    """After one step computed on demand (the Evidence explorer's first view picks its focus
    unit, which later views are asked with), the next step is taken from the worker."""
    at = open_linked(page, "sample:event-graph-50", "125")
    at.sidebar.slider[0].set_value(126.0).run()
    app_prefetch.wait_idle()
    taken = app_prefetch.taken
    at.sidebar.slider[0].set_value(127.0).run()
    assert not at.exception
    assert app_prefetch.taken == taken + 1


def test_a_run_asking_for_a_job_that_waits_for_it_computes_at_once(worker, monkeypatch) -> None:
    """A page asking, in the run that scheduled it, for a neighbour's view: the job waits for
    that run to end, so the run computes the view itself instead of waiting for the job."""
    monkeypatch.setattr(prefetch, "AFTER_RUN_WAIT_S", 3600.0)  # a wait would be a hang
    _timed(worker, "v")
    got = []

    def page_run() -> None:
        worker.schedule(
            [(("v", 1), lambda: "from the job")],
            seconds_key="v",
            after=threading.current_thread(),
        )
        while not worker._jobs[("v", 1)].running():
            time.sleep(0.01)  # the worker has started the job: it waits for this thread
        got.append(worker.take_or_run(("v", 1), lambda: "now", seconds_key="v"))

    run = threading.Thread(target=page_run)
    run.start()
    run.join(60)
    assert not run.is_alive(), "the run waited for a job that waits for the run"
    assert got == ["now"]
