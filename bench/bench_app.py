"""App responsiveness in a real browser, against the core computing the same views directly.

Two measurements, one Streamlit server started by this script, Debian Chromium via Playwright:

1. **Budget change on Compare** (``sample:event-graph-50``): after a warm-up, the budget slider
   is moved 20 times with the keyboard (ArrowRight on the focused slider: one new budget each
   time, never seen before, so the solve runs). Timed in the browser from the key press to the
   end of the script run it triggers (``data-test-script-state`` back to ``notRunning``), then
   checked to stay idle. Baseline: the same 20 Compare views computed directly in Python
   (``memaudit_core.explain.view_for_key``, compiled instance warm, as in the server).
2. **First budget sweep** of ``sample:event-graph-500`` (Budget sweep page, cold cache: no
   session of this server has opened that package): wall time from opening the link to the
   page idle with its charts drawn. Baseline: ``memaudit_core.curves.budget_curve`` with the
   page's default grid, methods and ablation, in a fresh Python process (cold as well).

Prints a Markdown table and saves ``bench/out/app.json`` (``common.save("app", ...)``).
Pages that do not exist yet are reported as such and skipped.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests"), str(Path(__file__).resolve().parent)]

from browser_utils import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    start_streamlit,
    stop_streamlit,
    wait_idle,
)
from common import machine, save  # noqa: E402

COMPARE_PACKAGE = "sample:event-graph-50"
SWEEP_PACKAGE = "sample:event-graph-500"
N_CHANGES = 20
N_WARMUP = 2
LOAD_TIMEOUT_MS = 600_000

# Resolves when the script run started after the last arming has ended. performance.now() at
# the key press (keydown listener) and at the end of the run, in the browser's clock.
_ARM_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    window.__maT0 = null;
    document.addEventListener('keydown', () => { window.__maT0 = performance.now(); },
                              {once: true, capture: true});
    window.__maDone = new Promise(resolve => {
        let sawRun = false;
        const obs = new MutationObserver(() => {
            const s = app.getAttribute('data-test-script-state');
            if (s === 'running') sawRun = true;
            if (sawRun && s === 'notRunning') { obs.disconnect(); resolve(performance.now()); }
        });
        obs.observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
    });
}"""
_WAIT_JS = "async () => { const t1 = await window.__maDone; return t1 - window.__maT0; }"
_METRICS_JS = """() => [...document.querySelectorAll('[data-testid="stMetricValue"]')]
                      .map(e => e.innerText).join(' | ')"""


def _settle(page) -> None:
    wait_idle(page, timeout_ms=LOAD_TIMEOUT_MS)
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
                 .every(c => c.querySelector('.main-svg'))""",
        timeout=LOAD_TIMEOUT_MS,
    )


def _slider(page):
    return page.get_by_test_id("stSidebar").get_by_test_id("stSlider").locator("input[type=range]")


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def bench_compare(base_url: str, browser) -> dict:
    if not (REPO / "pages" / "2_Compare.py").exists():
        return {"skipped": "pages/2_Compare.py does not exist"}
    from memaudit_core.explain import view_for_key
    from memaudit_core.package import load_package
    from memaudit_ui.frame import default_store_key

    pkg = load_package(REPO / "sample_packages" / f"{COMPARE_PACKAGE.split(':', 1)[1]}.json")
    store_key = default_store_key(pkg)
    start_budget = int(pkg.default_budget())

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(LOAD_TIMEOUT_MS)
    t0 = time.perf_counter()
    page.goto(
        f"{base_url}/Compare?package={COMPARE_PACKAGE}&budget={start_budget}&store={store_key}"
    )
    page.locator("h1").first.wait_for()
    _settle(page)
    first_load = time.perf_counter() - t0

    slider = _slider(page)
    times, changed, budgets = [], 0, []
    for i in range(N_WARMUP + N_CHANGES):
        before = page.evaluate(_METRICS_JS)
        page.evaluate(_ARM_JS)
        slider.focus()
        slider.press("ArrowRight")
        ms = page.evaluate(_WAIT_JS)
        _settle(page)  # and it stays idle (no second run)
        budget = float(slider.input_value())
        if i >= N_WARMUP:
            times.append(ms / 1000)
            budgets.append(budget)
            changed += page.evaluate(_METRICS_JS) != before
    errors = page.get_by_test_id("stException").count()
    context.close()

    # Baseline: the same views, computed directly (compiled instance warm, as in the server).
    view_for_key(pkg, float(start_budget), store_key, view="compare")
    core = []
    for b in budgets:
        t = time.perf_counter()
        view_for_key(pkg, b, store_key, view="compare")
        core.append(time.perf_counter() - t)

    app_med, core_med = statistics.median(times), statistics.median(core)
    return {
        "package": COMPARE_PACKAGE,
        "store": store_key,
        "budgets": budgets,
        "first_load_s": first_load,
        "app_s": times,
        "app_median_s": app_med,
        "app_p90_s": _pct(times, 0.9),
        "core_s": core,
        "core_median_s": core_med,
        "core_p90_s": _pct(core, 0.9),
        "ratio_median": app_med / core_med if core_med > 0 else float("nan"),
        "overhead_median_s": app_med - core_med,
        "changes_with_new_metrics": changed,
        "tracebacks": errors,
    }


_SWEEP_BASELINE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
t = time.perf_counter()
from memaudit_core import curves
from memaudit_core.package import load_package
from memaudit_ui.frame import default_store_key, store_options
pkg = load_package(sys.argv[2])
options = store_options(pkg)
methods = tuple(k for k in dict.fromkeys([default_store_key(pkg), "writer:gvt", "writer:density"])
                if k in options)
grid = tuple(pkg.budget_grid())
t1 = time.perf_counter()
curves.budget_curve(pkg, grid, methods, ablations=("no_validity_opt",))
print(json.dumps({"total_s": time.perf_counter() - t, "sweep_s": time.perf_counter() - t1,
                  "grid": grid, "methods": methods}))
"""


def bench_sweep(base_url: str, browser) -> dict:
    if not (REPO / "pages" / "1_Budget_sweep.py").exists():
        return {"skipped": "pages/1_Budget_sweep.py does not exist"}
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(LOAD_TIMEOUT_MS)
    t0 = time.perf_counter()
    page.goto(f"{base_url}/Budget_sweep?package={SWEEP_PACKAGE}")
    page.locator("h1").first.wait_for()
    page.get_by_test_id("stPlotlyChart").first.wait_for()
    _settle(page)
    app_s = time.perf_counter() - t0
    errors = page.get_by_test_id("stException").count()
    context.close()

    path = REPO / "sample_packages" / f"{SWEEP_PACKAGE.split(':', 1)[1]}.json"
    out = subprocess.run(
        [sys.executable, "-c", _SWEEP_BASELINE, str(REPO), str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    core = json.loads(out.stdout.strip().splitlines()[-1])
    return {
        "package": SWEEP_PACKAGE,
        "app_first_sweep_s": app_s,
        "core_sweep_s": core["sweep_s"],
        "core_with_imports_and_load_s": core["total_s"],
        "grid": core["grid"],
        "methods": core["methods"],
        "ratio": app_s / core["total_s"] if core["total_s"] > 0 else float("nan"),
        "tracebacks": errors,
    }


def main() -> int:
    from playwright.sync_api import sync_playwright

    proc, base_url = start_streamlit(REPO / "bench" / "out" / "bench-app-server.log")
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            try:
                compare = bench_compare(base_url, browser)
                sweep = bench_sweep(base_url, browser)
            finally:
                browser.close()
    finally:
        stop_streamlit(proc)

    print(f"machine: {machine()}\n")
    print("| measurement | app (browser) | baseline (core, same run) | ratio |")
    print("|---|---|---|---|")
    if "skipped" in compare:
        print(f"| Compare budget change | skipped: {compare['skipped']} | | |")
    else:
        print(
            f"| Compare budget change, {compare['package']}, {N_CHANGES} changes: median / p90 "
            f"| {compare['app_median_s'] * 1000:.0f} / {compare['app_p90_s'] * 1000:.0f} ms "
            f"| {compare['core_median_s'] * 1000:.0f} / {compare['core_p90_s'] * 1000:.0f} ms "
            "(explain.view_for_key) "
            f"| {compare['ratio_median']:.1f}x |"
        )
    if "skipped" in sweep:
        print(f"| First budget sweep | skipped: {sweep['skipped']} | | |")
    else:
        print(
            f"| First budget sweep, {sweep['package']} (cold cache, {len(sweep['grid'])} budgets "
            f"x {len(sweep['methods'])} methods + ablation) "
            f"| {sweep['app_first_sweep_s']:.1f} s "
            f"| {sweep['core_with_imports_and_load_s']:.1f} s (fresh process; sweep alone "
            f"{sweep['core_sweep_s']:.1f} s) "
            f"| {sweep['ratio']:.2f}x |"
        )
    if "skipped" not in compare:
        print(
            f"\nCompare: first load {compare['first_load_s']:.1f} s; metrics changed on "
            f"{compare['changes_with_new_metrics']} of {N_CHANGES} budget changes; tracebacks: "
            f"{compare['tracebacks']}."
        )
    path = save("app", {"machine": machine(), "compare": compare, "sweep": sweep})
    print(f"saved {path}")
    bad = compare.get("tracebacks", 0) + sweep.get("tracebacks", 0)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
