"""Shared pytest fixtures.

Browser fixtures (``streamlit_server``, ``browser``, ``page``) start lazily: only tests that
request them need Chromium or a running server. Tests using them are auto-marked ``browser``,
so ``pytest -m "not browser"`` skips them.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from browser_utils import (
    CHROMIUM,
    CHROMIUM_ARGS,
    REPO_ROOT,
    start_streamlit,
    stop_streamlit,
    wait_idle,
)

__all__ = ["wait_idle"]

# A single solve's progress lines on stderr (memaudit_core.cli.PROGRESS_AFTER_S) only where a
# test asks for them: a slow machine would otherwise add lines to stderr that tests compare.
os.environ.setdefault("MEMAUDIT_PROGRESS_AFTER", "off")
# The app's background prefetch of neighbouring budgets (memaudit_ui.prefetch) off in this
# process: AppTest runs that clear Streamlit's cache and patch the core must not be handed a
# view prefetched before the patch. Its own tests turn it on; the browser tests' servers run
# it as shipped (browser_utils.start_streamlit).
os.environ.setdefault("MEMAUDIT_APP_PREFETCH", "0")

OUTPUT_DIR = REPO_ROOT / "test-output"
_BROWSER_FIXTURES = {"streamlit_server", "browser", "page"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _BROWSER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.browser)


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    path = OUTPUT_DIR / "screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def streamlit_server():
    """Base URL (http://127.0.0.1:PORT) of a Streamlit server running app.py for the session."""
    proc, base_url = start_streamlit(OUTPUT_DIR / "streamlit-server.log", timeout_s=60)
    try:
        yield base_url
    finally:
        stop_streamlit(proc)


@pytest.fixture(scope="session")
def browser():
    """Headless Debian Chromium driven by Playwright (never `playwright install`)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} not found: run `make chromium` (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()
    finally:
        pw.stop()


@pytest.fixture
def page(browser, request, artifacts_dir):
    """A fresh browser context + page per test (1400x1000). Screenshot saved on failure."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    try:
        yield pg
    finally:
        rep = getattr(request.node, "rep_call", None)
        if rep is not None and rep.failed:
            name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.nodeid)[-150:]
            try:
                pg.screenshot(path=str(artifacts_dir / f"FAILED-{name}.png"), full_page=True)
            except Exception:  # best effort only
                pass
        context.close()


@pytest.fixture
def stopped_milp(monkeypatch):
    """HiGHS stopped at 0 nodes with no heuristic start and no writer lifting its incumbent, as
    a time limit stops it on a 15,000-experience package (a real limited run, on a small one)."""
    from memaudit_core import analysis
    from memaudit_core.solvers import certify, milp

    real = milp._run_highs
    monkeypatch.setattr(milp, "_run_highs", lambda model, t, n, start: real(model, t, 0, start))
    monkeypatch.setattr(milp, "HEURISTIC_START_MAX_COLUMNS", 0)
    monkeypatch.setattr(certify, "LIMITED_INCUMBENT_WRITERS", {"gvt": 0, "greedy": 0})
    analysis._opt_cache.clear()
    yield
    analysis._opt_cache.clear()


@pytest.fixture
def late_clock(monkeypatch):
    """Every TimeShare made while the test runs reads a clock 100 s later at each call, so a
    total time limit is spent at once and far overrun, with no timing in the test."""
    import itertools

    from memaudit_core.solvers import timeshare

    class LateShare(timeshare.TimeShare):
        def __init__(self, total_s: float, expected_runs: int, *, clock=None) -> None:
            ticks = itertools.count(0.0, 100.0)
            super().__init__(total_s, expected_runs, clock=lambda: next(ticks))

    monkeypatch.setattr(timeshare, "TimeShare", LateShare)
