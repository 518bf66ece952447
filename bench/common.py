"""Shared helpers for the benchmark scripts: machine description and timing."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"

#: The app's pages that draw charts on a sample package without a click (``AppTest`` paths).
CHART_PAGES = (
    "app.py",
    "pages/1_Budget_sweep.py",
    "pages/2_Compare.py",
    "pages/3_Evidence_explorer.py",
    "pages/5_Ablations_and_sensitivity.py",
    "pages/6_Certification.py",
)


def open_chart_page(app: Path, page: str, package: str, timeout: float = 300):
    """Streamlit's ``AppTest`` of ``app`` (an ``app.py``) with ``page`` opened by a link naming
    ``package`` (a link key, ``sample:NAME``), after one run; exits naming the page on an
    exception, an error, or another package than the one named (a bare name such as
    ``event-graph-500`` opens travel-assistant with an error)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(app), default_timeout=timeout)
    at.query_params["package"] = package
    at.run()
    if page != "app.py":
        at.switch_page(page).run()
    check_page(at, page, package)
    return at


def check_page(at, page: str, package: str) -> None:
    """Exit naming ``page`` if ``at``'s last run raised, showed an error or left ``package``."""
    problems = [e.value for e in [*at.exception, *at.error]]
    if problems or at.session_state["ma_package"] != package:
        raise SystemExit(f"{page} on {package}: {problems}")


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    from importlib.metadata import PackageNotFoundError, version

    try:
        hv = version("highspy")
    except PackageNotFoundError:
        hv = "not installed"
    return f"{cpu}, {os.cpu_count()} cores{mem}; Python {platform.python_version()}; highspy {hv}"


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def run_fresh(argv: list[str]) -> dict:
    """Run ``argv`` (a Python script's command line) in a fresh process; the JSON object it
    prints last. For measurements that need a process of their own (HiGHS fixes its thread
    pool once per process; a first call's costs)."""
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def save(name: str, payload: dict) -> Path:
    """Write ``payload`` as ``bench/out/<name>.json``. A bare file name keeps its ``.json``
    (``--out x.json`` writes ``bench/out/x.json``, as the scripts' help says; it used to land in
    the working folder); a ``name`` with a folder is used as given (``--out bench/out/x.json``,
    ``--out /tmp/x.json``)."""
    given = Path(name)
    if given.parent != Path("."):
        path = given
    else:
        path = OUT / (name if given.suffix == ".json" else f"{name}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2))
    return path
