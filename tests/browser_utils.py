"""Helpers for the real-Chromium browser tests (see tests/conftest.py for the fixtures).

Import in tests as ``from browser_utils import wait_idle`` (tests/ is on pytest's pythonpath).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

# Streamlit's root element carries data-test-script-state
# ("initial" | "running" | "notRunning" | "rerunRequested" | ...).
_IDLE_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app) return false;
    const state = app.getAttribute('data-test-script-state');
    if (state !== null && state !== 'notRunning') return false;
    return !document.querySelector('[data-testid="stStatusWidget"]');
}"""


def wait_idle(page, timeout_ms: int = 60_000, settle_ms: int = 300) -> None:
    """Wait until the Streamlit app is rendered and no script run is in progress.

    Waits for ``[data-testid=stApp]``, then until the script state is ``notRunning`` and no
    ``[data-testid=stStatusWidget]`` exists, and requires that to still hold ``settle_ms``
    later (a rerun can start right after a widget change).
    """
    deadline = time.monotonic() + timeout_ms / 1000
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout_ms)
    while True:
        remaining = max(1, int((deadline - time.monotonic()) * 1000))
        page.wait_for_function(_IDLE_JS, timeout=remaining)
        page.wait_for_timeout(settle_ms)
        if page.evaluate(_IDLE_JS):
            if "present=1" in page.url:
                # Presentation mode's sidebar script (memaudit_ui.frame) loads lazily and
                # collapses the sidebar when it runs: a test that expanded it first saw its
                # link slide away (a full run, s50). Idle means after the script has run.
                page.wait_for_function(
                    "() => window.__memauditPresentStart !== undefined",
                    timeout=max(1, int((deadline - time.monotonic()) * 1000)),
                )
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"Streamlit app not idle after {timeout_ms} ms")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_streamlit(
    log_path: Path,
    port: int | None = None,
    timeout_s: float = 60.0,
    *,
    prefetch: bool = True,
    warm: bool = True,
):
    """Start the app on 127.0.0.1; return (process, base_url) once healthy.
    ``prefetch``: the app's background views of neighbouring budgets (on, as shipped).
    ``warm``: as ``make run`` starts it (``python -m memaudit_ui.serve``: the app's modules
    imported before the server starts); False: plain ``streamlit run app.py``."""
    port = port or free_port()
    entry = ["memaudit_ui.serve"] if warm else ["streamlit", "run", "app.py"]
    cmd = [
        sys.executable,
        "-m",
        *entry,
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = open(log_path, "wb")  # closed by stop_streamlit
    # The app as shipped: the in-process test default turns the prefetch off (conftest).
    env = dict(os.environ, PYTHONUNBUFFERED="1", MEMAUDIT_APP_PREFETCH="1" if prefetch else "0")
    proc = subprocess.Popen(
        cmd,
        cwd=REPO_ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    proc._memaudit_log = log  # type: ignore[attr-defined]
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            stop_streamlit(proc)
            raise RuntimeError(
                f"streamlit exited with code {proc.returncode} before becoming healthy; "
                f"log:\n{_tail(log_path)}"
            )
        try:
            with urllib.request.urlopen(f"{base_url}/_stcore/health", timeout=2) as r:
                if r.read().decode().strip() == "ok":
                    return proc, base_url
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        if time.monotonic() > deadline:
            stop_streamlit(proc)
            raise RuntimeError(
                f"streamlit not healthy after {timeout_s:.0f} s; log:\n{_tail(log_path)}"
            )
        time.sleep(0.2)


def stop_streamlit(proc: subprocess.Popen) -> None:
    """SIGTERM the server process, wait up to 10 s, then SIGKILL it (this PID only)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    log = getattr(proc, "_memaudit_log", None)
    if log is not None and not log.closed:
        log.close()


def _tail(path: Path, n: int = 60) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "<no log>"


#: Every plotly chart on the page: its title, the margins its figure asked for and the ones
#: plotly used ([l, r, t, b]; automargin pushes the used ones wider, which draws the chart
#: twice, s53-s54), its y tick labels, where each starts right of the chart's left edge (px),
#: and how many legend entries it shows.
CHART_MARGINS_JS = """() => [...document.querySelectorAll(
        '[data-testid="stPlotlyChart"] .js-plotly-plot')].map(g => {
    const svg = g.querySelector('.main-svg').getBoundingClientRect();
    const ticks = [...g.querySelectorAll('.ytick text')];
    const m = g.layout.margin, s = g._fullLayout._size;
    return {title: g.querySelector('.gtitle').textContent,
            names: ticks.map(t => t.textContent),
            lefts: ticks.map(t => t.getBoundingClientRect().left - svg.left),
            legend: g.querySelectorAll('.legend .traces').length,
            asked: [m.l, m.r, m.t, m.b], used: [s.l, s.r, s.t, s.b].map(Math.round)};
})"""


def chart_margins(page, url: str, min_ticks: int, width: int = 1024) -> list[dict]:
    """:data:`CHART_MARGINS_JS` of the page at ``url`` (``width`` px wide), once it is idle and
    its charts show more than ``min_ticks`` y tick labels between them."""
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(url)
    page.locator("[data-testid=stPlotlyChart] .main-svg").first.wait_for(timeout=120_000)
    wait_idle(page, timeout_ms=120_000)
    page.wait_for_function(
        "n => document.querySelectorAll('[data-testid=stPlotlyChart] .ytick text').length > n",
        arg=min_ticks,
        timeout=60_000,
    )
    return page.evaluate(CHART_MARGINS_JS)
