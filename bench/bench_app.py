"""App responsiveness in a real browser, against the core computing the same views directly.

Four measurements, selectable with ``--only compare,sweep,upload,memory`` (default: all). A
Streamlit server started by this script (the memory run gets its own), Debian Chromium via
Playwright:

1. **compare — budget change on Compare** (``sample:event-graph-50``): after a warm-up, the
   budget slider is moved 20 times with the keyboard (ArrowRight on the focused slider: one new
   budget each time, never seen before, so the solve runs). Timed in the browser from the key
   press to the end of the script run it triggers (``data-test-script-state`` back to
   ``notRunning``), then checked to stay idle. Baseline: the same 20 Compare views computed
   directly in Python (``memaudit_core.explain.view_for_key``, compiled instance warm, as in
   the server).
2. **sweep — first budget sweep** of ``sample:event-graph-500`` (Budget sweep page, cold cache:
   no session of this server has opened that package): wall time from opening the link to the
   page idle with its charts drawn. Baseline: ``memaudit_core.curves.budget_curve`` with the
   page's default grid, methods and ablation, in a fresh Python process (cold as well).
3. **upload — a 5 MB package through the sidebar uploader**: a valid package generated here
   (``event_graph``, seed 0, 3,000 experiences: 5.2 MiB of canonical JSON) and the same file
   with one bad coverage value in its last candidate. Each repetition opens a fresh session on
   the Generator page (it solves nothing, so the page's idle time is transfer + validation +
   rerun), calls ``set_input_files`` on the uploader's ``<input type=file>`` and times, from
   that call, until the app is idle with the Package picker showing the upload (valid file) or
   with the sidebar ``st.error`` naming the file and the bad field (invalid file; the upload
   stays open). Once more on the Overview page: time to the package summary and to the page
   idle (which includes the OPT solve at the default budget, not part of validation).
   Baseline: what the upload does in Python on the same bytes
   (``memaudit_core.package.loads_package`` = parse + validate, plus the SHA-256 that keys the
   upload registry), and, for reference, the content hash and compile that the Overview adds.
4. **memory — RSS across 200 budget changes** on Compare (``sample:event-graph-50``), on a
   fresh server: RSS of the server process and its children (psutil) before the first change,
   every 20 changes, and 2 s after the last; start, end, max and a least-squares slope in MB
   per 100 changes over the second half (samples at 100..200 changes). Each change is timed as
   in 1, so this also gives the median over 200 changes.

Prints a Markdown table and saves ``bench/out/app.json`` (``common.save("app", ...)``; a run
with ``--only`` saves ``app-<names>.json`` so it never overwrites the full run).
Pages that do not exist yet are reported as such and skipped.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
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
MEASUREMENTS = ("compare", "sweep", "upload", "memory")

# Upload: event_graph at 3,000 experiences is the smallest round size above 5 MiB (canonical,
# indented JSON as `memaudit generate` writes it).
UPLOAD_FAMILY = "event_graph"
UPLOAD_SEED = 0
UPLOAD_PARAMS = {"n_experiences": 3000}
UPLOAD_REPEATS = 3
# The Generator page draws only the sidebar until a preview is asked for, so its idle time
# after an upload is the upload itself, not a solve.
UPLOAD_PAGE = "/Generator"

MEMORY_CHANGES = 200
MEMORY_EVERY = 20

# Resolves when the script run started after the last arming has ended. performance.now() at
# the key press (keydown listener) and at the end of the run, in the browser's clock.
# The end is the first DOM commit where the app's script state is "notRunning" after either the
# state was seen "running" or the main area changed. A fast rerun (tens of ms) can start and
# finish within one React commit, so the attribute never visibly leaves "notRunning"; then the
# main area's new content marks the end. The sidebar is not watched (the slider itself changes
# on the key press, before any run). Rejects after RUN_TIMEOUT_MS instead of hanging.
RUN_TIMEOUT_MS = 120_000
_ARM_JS = (
    """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    const main = document.querySelector('[data-testid="stMain"]');
    window.__maT0 = null;
    document.addEventListener('keydown', () => { window.__maT0 = performance.now(); },
                              {once: true, capture: true});
    window.__maDone = new Promise((resolve, reject) => {
        let sawRun = false, sawMain = false;
        const obs = new MutationObserver(records => {
            const s = app.getAttribute('data-test-script-state');
            if (s === 'running') sawRun = true;
            if (!sawMain && main && records.some(r => main.contains(r.target))) sawMain = true;
            if ((sawRun || sawMain) && s === 'notRunning') {
                obs.disconnect(); clearTimeout(timer); resolve(performance.now());
            }
        });
        const timer = setTimeout(() => {
            obs.disconnect(); reject(new Error('no script run ended after the key press'));
        }, """
    + str(RUN_TIMEOUT_MS)
    + """);
        obs.observe(app, {attributes: true, attributeFilter: ['data-test-script-state'],
                          childList: true, characterData: true, subtree: true});
    });
}"""
)
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


def _budget_change(page, slider) -> tuple[float, float]:
    """One ArrowRight on the budget slider: (ms from key press to end of the run, new budget)."""
    page.evaluate(_ARM_JS)
    slider.focus()
    slider.press("ArrowRight")
    ms = page.evaluate(_WAIT_JS)
    _settle(page)  # and it stays idle (no second run)
    return ms, float(slider.input_value())


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
    times, changed, budgets, from_budgets = [], 0, [], []
    for i in range(N_WARMUP + N_CHANGES):
        before = page.evaluate(_METRICS_JS)
        from_budget = float(slider.input_value())
        ms, budget = _budget_change(page, slider)
        if i >= N_WARMUP:
            times.append(ms / 1000)
            budgets.append(budget)
            from_budgets.append(from_budget)
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

    # A budget step that changes none of the four tiles (F, OPT, ratio, cost: the optimum and
    # the store stay as they were) leaves the metrics as they were, rightly.
    tiles = {}
    for b in {*from_budgets, *budgets}:
        cv = view_for_key(pkg, b, store_key, view="compare")
        tiles[b] = (cv.value, cv.opt_value, cv.ratio_text, cv.cost)
    expected = sum(tiles[a] != tiles[b] for a, b in zip(from_budgets, budgets, strict=True))

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
        "changes_with_new_core_view": expected,
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


# --------------------------------------------------------------------------- upload

# Both resolve only while the app is idle (script state notRunning, no status widget), so the
# time they stop is the end of the rerun the upload triggered, not an intermediate frame.
_IDLE_EXPR = """(() => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app) return false;
    const s = app.getAttribute('data-test-script-state');
    if (s !== null && s !== 'notRunning') return false;
    return !document.querySelector('[data-testid="stStatusWidget"]');
})()"""
# An upload's picker label (memaudit_ui.sources.describe_key): "upload · <file name> ·
# <digest prefix> · <package id>".
_PICKER_SHOWS_JS = f"""([head, tail]) => {_IDLE_EXPR} &&
    [...document.querySelectorAll('[data-testid="stSidebar"] input[role="combobox"]')]
        .some(b => b.value.startsWith(head) && b.value.endsWith(tail))"""
_SIDEBAR_ERROR_JS = f"""(name) => {_IDLE_EXPR} &&
    [...document.querySelectorAll('[data-testid="stSidebar"] [data-testid="stAlert"]')]
        .some(a => a.innerText.includes(name) && a.innerText.includes('was not loaded'))"""
_SIDEBAR_ERROR_TEXT_JS = """() =>
    [...document.querySelectorAll('[data-testid="stSidebar"] [data-testid="stAlert"]')]
        .map(a => a.innerText).join('\\n')"""
# The Overview's package line renders the package id as inline code, before the OPT solve.
_SUMMARY_SHOWS_JS = """(pid) => [...document.querySelectorAll('[data-testid="stMain"] code')]
    .some(c => c.innerText.trim() === pid)"""


def _upload_files(tmp: Path) -> dict:
    """Write the valid ~5 MB package and its one-bad-field twin; describe both."""
    from memaudit_core.generators import generate
    from memaudit_core.package import dumps_package

    t = time.perf_counter()
    pkg = generate(UPLOAD_FAMILY, seed=UPLOAD_SEED, **UPLOAD_PARAMS)
    gen_s = time.perf_counter() - t
    text = dumps_package(pkg)
    good = tmp / f"{pkg.id}.json"
    good.write_text(text, encoding="utf-8")

    # One coverage value out of [0, 1] in the last candidate: deep in the file, so the whole
    # document is parsed before the problem is found, and the message has to point at it.
    doc = json.loads(text)
    idx = len(doc["candidates"]) - 1
    unit = next(iter(doc["candidates"][idx]["coverage"]))
    doc["candidates"][idx]["coverage"][unit] = 1.5
    bad = tmp / f"{pkg.id}-bad.json"
    bad.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return {
        "generator": UPLOAD_FAMILY,
        "seed": UPLOAD_SEED,
        "params": UPLOAD_PARAMS,
        "generate_s": gen_s,
        "package_id": pkg.id,
        "n_experiences": len(pkg.experiences),
        "n_candidates": len(pkg.candidates),
        "n_units": len(pkg.units),
        "valid_path": str(good),
        "valid_bytes": good.stat().st_size,
        "invalid_path": str(bad),
        "invalid_bytes": bad.stat().st_size,
        "invalid_field": f"$.candidates[{idx}].coverage",
        "invalid_value": f"{unit!r}: 1.5 (coverage must be in [0, 1])",
    }


def _upload_baseline(good: bytes, bad: bytes) -> dict:
    """What the app does with the uploaded bytes, done directly (median of UPLOAD_REPEATS)."""
    from memaudit_core.compiled import compile_package
    from memaudit_core.errors import PackageError
    from memaudit_core.package import loads_package

    parse, digest, chash, comp, invalid = [], [], [], [], []
    problems: list[str] = []
    for _ in range(UPLOAD_REPEATS):
        t = time.perf_counter()
        pkg = loads_package(good, source="upload.json")
        parse.append(time.perf_counter() - t)
        t = time.perf_counter()
        hashlib.sha256(good).hexdigest()  # the upload registry's key (sources.register_upload)
        digest.append(time.perf_counter() - t)
        t = time.perf_counter()
        pkg.content_hash()  # fresh object: computed, not the per-object memo
        chash.append(time.perf_counter() - t)
        t = time.perf_counter()
        compile_package(pkg)
        comp.append(time.perf_counter() - t)
        t = time.perf_counter()
        try:
            loads_package(bad, source="upload-bad.json")
        except PackageError as exc:
            problems = exc.lines()
        invalid.append(time.perf_counter() - t)
    med = statistics.median
    return {
        "parse_validate_s": parse,
        "sha256_s": digest,
        "content_hash_s": chash,
        "compile_s": comp,
        "invalid_parse_validate_s": invalid,
        "invalid_problems": problems,
        # register_upload = loads_package + sha256: the part of an upload that is ours.
        "valid_median_s": med(parse) + med(digest),
        "invalid_median_s": med(invalid),
        "content_hash_median_s": med(chash),
        "compile_median_s": med(comp),
    }


def _fresh_page(browser, url: str) -> tuple:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(LOAD_TIMEOUT_MS)
    page.goto(url)
    page.locator("h1").first.wait_for()
    # Charts drawn too: right after the script goes idle, Chromium is still laying out the
    # Overview's plotly charts, which delayed the upload's start by up to 2 s in a trial run.
    _settle(page)
    return context, page


def _uploader(page):  # -> playwright Locator
    return (
        page.get_by_test_id("stSidebar")
        .get_by_test_id("stFileUploader")
        .locator("input[type=file]")
    )


def bench_upload(base_url: str, browser) -> dict:
    from memaudit_ui.sources import MAX_UPLOAD_MB

    with tempfile.TemporaryDirectory(prefix="memaudit-bench-upload-") as tmp_name:
        files = _upload_files(Path(tmp_name))
        good_path, bad_path = Path(files["valid_path"]), Path(files["invalid_path"])
        baseline = _upload_baseline(good_path.read_bytes(), bad_path.read_bytes())
        shown = [f"upload · {good_path.name} · ", f" · {files['package_id']}"]
        field = files["invalid_field"]

        valid, valid_set, invalid, invalid_set, checks = [], [], [], [], []
        for _ in range(UPLOAD_REPEATS):
            # A fresh session each time: the picker starts on the default sample again.
            context, page = _fresh_page(browser, f"{base_url}{UPLOAD_PAGE}")
            uploader = _uploader(page)

            t0 = time.perf_counter()
            uploader.set_input_files(str(good_path))
            valid_set.append(time.perf_counter() - t0)
            page.wait_for_function(_PICKER_SHOWS_JS, arg=shown, timeout=LOAD_TIMEOUT_MS)
            valid.append(time.perf_counter() - t0)
            wait_idle(page, timeout_ms=LOAD_TIMEOUT_MS)  # and it stays idle
            valid_errors = page.get_by_test_id("stAlert").filter(has_text="not loaded").count()
            valid_package = page.evaluate(
                "() => new URLSearchParams(location.search).get('package')"
            )

            t0 = time.perf_counter()
            uploader.set_input_files(str(bad_path))
            invalid_set.append(time.perf_counter() - t0)
            page.wait_for_function(_SIDEBAR_ERROR_JS, arg=bad_path.name, timeout=LOAD_TIMEOUT_MS)
            invalid.append(time.perf_counter() - t0)
            wait_idle(page, timeout_ms=LOAD_TIMEOUT_MS)
            error_text = page.evaluate(_SIDEBAR_ERROR_TEXT_JS)
            kept = page.evaluate(_PICKER_SHOWS_JS, shown)  # the valid upload stays open
            checks.append(
                {
                    "valid_url_package": valid_package,
                    "valid_upload_errors": valid_errors,
                    "invalid_error_names_file": bad_path.name in error_text,
                    "invalid_error_names_field": field in error_text,
                    "invalid_keeps_previous_package": bool(kept),
                    "invalid_error_text": error_text,
                    "tracebacks": page.get_by_test_id("stException").count(),
                }
            )
            context.close()

        # Once on the Overview (home page): the summary appears before the OPT solve.
        context, page = _fresh_page(browser, f"{base_url}/")
        t0 = time.perf_counter()
        _uploader(page).set_input_files(str(good_path))
        page.wait_for_function(_SUMMARY_SHOWS_JS, arg=files["package_id"], timeout=LOAD_TIMEOUT_MS)
        overview_summary = time.perf_counter() - t0
        wait_idle(page, timeout_ms=LOAD_TIMEOUT_MS, settle_ms=0)
        overview_idle = time.perf_counter() - t0
        wait_idle(page, timeout_ms=LOAD_TIMEOUT_MS)
        overview_tracebacks = page.get_by_test_id("stException").count()
        overview_errors = page.get_by_test_id("stAlert").filter(has_text="not loaded").count()
        context.close()

    for key in ("valid_path", "invalid_path"):  # temporary; the name is what matters
        files[key] = Path(files[key]).name
    ok = all(
        c["valid_upload_errors"] == 0
        and (c["valid_url_package"] or "").startswith("upload:")
        and c["invalid_error_names_file"]
        and c["invalid_error_names_field"]
        and c["invalid_keeps_previous_package"]
        and c["tracebacks"] == 0
        for c in checks
    ) and not (overview_tracebacks or overview_errors)
    med = statistics.median
    return {
        "files": files,
        "max_upload_mb": MAX_UPLOAD_MB,
        "page": UPLOAD_PAGE,
        "valid_s": valid,
        "valid_set_input_files_s": valid_set,
        "valid_median_s": med(valid),
        "invalid_s": invalid,
        "invalid_set_input_files_s": invalid_set,
        "invalid_median_s": med(invalid),
        "overview_summary_s": overview_summary,
        "overview_idle_s": overview_idle,
        "baseline": baseline,
        "ratio_valid": med(valid) / baseline["valid_median_s"],
        "ratio_invalid": med(invalid) / baseline["invalid_median_s"],
        "checks": checks,
        "checks_ok": ok,
        "tracebacks": sum(c["tracebacks"] for c in checks) + overview_tracebacks,
    }


# --------------------------------------------------------------------------- memory


def _rss_mb(pid: int) -> float:
    """RSS of a process and all its descendants, in MiB."""
    try:
        import psutil
    except ImportError:  # top-level process only
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")
    proc = psutil.Process(pid)
    total = proc.memory_info().rss
    for child in proc.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total / 2**20


def _slope_per_100(points: list[tuple[int, float]]) -> float:
    """Least-squares slope of (changes, MiB), in MiB per 100 changes."""
    n = len(points)
    if n < 2:
        return float("nan")
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    return 100 * sxy / sxx if sxx else float("nan")


def bench_memory(browser) -> dict:
    if not (REPO / "pages" / "2_Compare.py").exists():
        return {"skipped": "pages/2_Compare.py does not exist"}
    from memaudit_core.package import load_package
    from memaudit_ui.frame import default_store_key

    pkg = load_package(REPO / "sample_packages" / f"{COMPARE_PACKAGE.split(':', 1)[1]}.json")
    store_key = default_store_key(pkg)
    start_budget = int(pkg.default_budget())

    # Its own server: the RSS then belongs to this scenario only (no upload or sweep caches).
    proc, base_url = start_streamlit(REPO / "bench" / "out" / "bench-app-memory-server.log")
    try:
        rss_server_start = _rss_mb(proc.pid)
        context, page = _fresh_page(
            browser,
            f"{base_url}/Compare?package={COMPARE_PACKAGE}&budget={start_budget}&store={store_key}",
        )
        slider = _slider(page)
        for _ in range(N_WARMUP):  # first solves import and compile; not part of the trend
            _budget_change(page, slider)
        samples = [(0, _rss_mb(proc.pid))]
        times, budgets = [], []
        for i in range(1, MEMORY_CHANGES + 1):
            ms, budget = _budget_change(page, slider)
            times.append(ms / 1000)
            budgets.append(budget)
            if i % MEMORY_EVERY == 0:
                samples.append((i, _rss_mb(proc.pid)))
        tracebacks = page.get_by_test_id("stException").count()
        time.sleep(2.0)  # let the last run's garbage go before the final sample
        rss_after = _rss_mb(proc.pid)
        context.close()
    finally:
        stop_streamlit(proc)

    values = [mb for _, mb in samples]
    second_half = [(x, mb) for x, mb in samples if x >= MEMORY_CHANGES // 2]
    return {
        "package": COMPARE_PACKAGE,
        "store": store_key,
        "budgets": [budgets[0], budgets[-1]],
        "changes": MEMORY_CHANGES,
        "rss_server_started_mb": rss_server_start,
        "samples_mb": samples,
        "rss_after_2s_mb": rss_after,
        "start_mb": values[0],
        "end_mb": rss_after,
        "max_mb": max([*values, rss_after]),
        "slope_second_half_mb_per_100": _slope_per_100(second_half),
        "slope_all_mb_per_100": _slope_per_100(samples),
        "app_s": times,
        "app_median_s": statistics.median(times),
        "app_p90_s": _pct(times, 0.9),
        "tracebacks": tracebacks,
    }


# --------------------------------------------------------------------------- report


def _print_table(results: dict) -> None:
    compare, sweep = results.get("compare"), results.get("sweep")
    upload, memory = results.get("upload"), results.get("memory")
    print(f"machine: {machine()}\n")
    print("| measurement | app (browser) | baseline (core, same run) | ratio |")
    print("|---|---|---|---|")
    if compare is not None and "skipped" in compare:
        print(f"| Compare budget change | skipped: {compare['skipped']} | | |")
    elif compare is not None:
        print(
            f"| Compare budget change, {compare['package']}, {N_CHANGES} changes: median / p90 "
            f"| {compare['app_median_s'] * 1000:.0f} / {compare['app_p90_s'] * 1000:.0f} ms "
            f"| {compare['core_median_s'] * 1000:.0f} / {compare['core_p90_s'] * 1000:.0f} ms "
            "(explain.view_for_key) "
            f"| {compare['ratio_median']:.1f}x |"
        )
    if sweep is not None and "skipped" in sweep:
        print(f"| First budget sweep | skipped: {sweep['skipped']} | | |")
    elif sweep is not None:
        print(
            f"| First budget sweep, {sweep['package']} (cold cache, {len(sweep['grid'])} budgets "
            f"x {len(sweep['methods'])} methods + ablation) "
            f"| {sweep['app_first_sweep_s']:.1f} s "
            f"| {sweep['core_with_imports_and_load_s']:.1f} s (fresh process; sweep alone "
            f"{sweep['core_sweep_s']:.1f} s) "
            f"| {sweep['ratio']:.2f}x |"
        )
    if upload is not None:
        f, b = upload["files"], upload["baseline"]
        size = f"{f['valid_bytes'] / 2**20:.2f} MiB"
        print(
            f"| Upload valid {size} package ({f['generator']} seed {f['seed']}, "
            f"{f['n_experiences']:,} experiences), {UPLOAD_PAGE} page, median of "
            f"{UPLOAD_REPEATS} "
            f"| {upload['valid_median_s']:.2f} s "
            f"({', '.join(f'{x:.2f}' for x in upload['valid_s'])}) "
            f"| {b['valid_median_s']:.2f} s (loads_package + sha256) "
            f"| {upload['ratio_valid']:.1f}x |"
        )
        print(
            f"| Upload invalid {f['invalid_bytes'] / 2**20:.2f} MiB package "
            f"(bad {f['invalid_field']}): st.error shown, median of {UPLOAD_REPEATS} "
            f"| {upload['invalid_median_s']:.2f} s "
            f"({', '.join(f'{x:.2f}' for x in upload['invalid_s'])}) "
            f"| {b['invalid_median_s']:.2f} s (loads_package raising) "
            f"| {upload['ratio_invalid']:.1f}x |"
        )
        print(
            f"| Upload valid {size} on the Overview: package summary shown / page idle "
            f"(incl. OPT at the default budget) "
            f"| {upload['overview_summary_s']:.2f} / {upload['overview_idle_s']:.1f} s "
            f"| content hash {b['content_hash_median_s']:.2f} s, compile "
            f"{b['compile_median_s']:.2f} s | |"
        )
    if memory is not None and "skipped" in memory:
        print(f"| Memory over 200 budget changes | skipped: {memory['skipped']} | | |")
    elif memory is not None:
        print(
            f"| Server RSS over {memory['changes']} budget changes on Compare "
            f"({memory['package']}): start / end / max; slope over the second half "
            f"| {memory['start_mb']:.0f} / {memory['end_mb']:.0f} / {memory['max_mb']:.0f} MiB; "
            f"{memory['slope_second_half_mb_per_100']:+.2f} MiB per 100 changes "
            f"| | |"
        )
        print(
            f"| Compare budget change over those {memory['changes']} changes: median / p90 "
            f"| {memory['app_median_s'] * 1000:.0f} / {memory['app_p90_s'] * 1000:.0f} ms | | |"
        )
    if compare is not None and "skipped" not in compare:
        print(
            f"\nCompare: first load {compare['first_load_s']:.1f} s; metrics changed on "
            f"{compare['changes_with_new_metrics']} of {N_CHANGES} budget changes (the core's "
            f"tiles change on {compare['changes_with_new_core_view']}); tracebacks: "
            f"{compare['tracebacks']}."
        )
    if upload is not None:
        print(f"Upload checks passed: {upload['checks_ok']}.")
        print(f"Invalid upload error: {upload['checks'][0]['invalid_error_text']!r}")
    if memory is not None and "skipped" not in memory:
        trend = ", ".join(f"{x}: {mb:.1f}" for x, mb in memory["samples_mb"])
        print(f"Memory (changes: MiB): {trend}; 2 s after: {memory['rss_after_2s_mb']:.1f}.")


#: Measurements that share one server, in run order (memory starts its own).
_SHARED_SERVER = {"compare": bench_compare, "sweep": bench_sweep, "upload": bench_upload}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        default=",".join(MEASUREMENTS),
        help=f"comma-separated subset of {', '.join(MEASUREMENTS)} (default: all)",
    )
    parser.add_argument(
        "--prefetch",
        choices=("on", "off"),
        default="on",
        help="the app's background views of the budgets one slider step either side (on, as "
        "shipped; off times every budget change as a cache miss, e.g. a jump by mouse)",
    )
    args = parser.parse_args(argv)
    only = [m.strip() for m in args.only.split(",") if m.strip()]
    unknown = sorted(set(only) - set(MEASUREMENTS))
    if unknown or not only:
        parser.error(f"unknown measurement(s) {unknown}; choose from {', '.join(MEASUREMENTS)}")

    from playwright.sync_api import sync_playwright

    results: dict[str, dict] = {}
    load_start = os.getloadavg()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            shared = [m for m in MEASUREMENTS if m in only and m != "memory"]
            if shared:
                proc, base_url = start_streamlit(
                    REPO / "bench" / "out" / "bench-app-server.log",
                    prefetch=args.prefetch == "on",
                )
                try:
                    for name in shared:
                        results[name] = _SHARED_SERVER[name](base_url, browser)
                finally:
                    stop_streamlit(proc)
            if "memory" in only:
                results["memory"] = bench_memory(browser)
        finally:
            browser.close()

    _print_table(results)
    payload = {
        "machine": machine(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "loadavg_start": load_start,
        "loadavg_end": os.getloadavg(),
        "measurements": [m for m in MEASUREMENTS if m in only],
        "prefetch": args.prefetch,
        **results,
    }
    name = (
        "app"
        if set(only) == set(MEASUREMENTS)
        else "app-" + "-".join(m for m in MEASUREMENTS if m in only)
    ) + ("-noprefetch" if args.prefetch == "off" else "")
    path = save(name, payload)
    print(f"saved {path}")
    bad = sum(r.get("tracebacks", 0) for r in results.values())
    if "upload" in results and not results["upload"]["checks_ok"]:
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
