"""Where a new browser tab's first page spends its time, up to its first chart drawn.

For each link in ``--links``, ``--rounds`` times, on one server started as ``make run`` starts it
(``python -m memaudit_ui.serve``, with ``bench/probe_site`` logging each script run): a new tab
opens the link and the script records, in seconds from ``goto``:

- the page's script run (start, end; from the server's probe log);
- the plotly chunk (``PlotlyChart.*.js``): requested, received, bytes over the wire (0 from the
  HTTP cache);
- the browser's long tasks (over 80 ms, ``PerformanceObserver``), among them the chunk's
  evaluation;
- ``drawn``: the first chart's SVG in the page.

``--profile fresh`` gives every tab a new browser context (an empty HTTP cache: a first visit);
``--profile persistent`` opens the tabs in one persistent profile (the HTTP cache and V8's code
cache kept, as for a returning user). The server's caches are warm after each link's first
round; round 0 is the first visit after the server started.

Run: ``.venv/bin/python bench/exp_first_tab.py [--profile fresh|persistent] [--rounds 3]
[--links /Compare?package=sample:event-graph-50,...] [--out NAME]`` (``bench/out/NAME.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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

DEFAULT_LINKS = (
    "/Compare?package=sample:event-graph-50",
    "/Ablations_and_sensitivity?package=sample:event-graph-500",
)
LONG_TASK_MS = 80
_OBSERVE = """window.__longTasks = [];
new PerformanceObserver(list => { for (const e of list.getEntries())
  window.__longTasks.push([e.startTime / 1000, e.duration / 1000]); })
  .observe({type: 'longtask', buffered: true});"""
_CHUNK = """performance.getEntriesByType('resource')
  .filter(e => e.name.includes('/PlotlyChart.'))
  .map(e => [e.startTime / 1000, e.responseEnd / 1000, e.transferSize])"""


def _runs_since(log: Path, started: float) -> list[dict]:
    if not log.exists():
        return []
    runs = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [
        {"start_s": r["start"] - started, "end_s": r["end"] - started, "cpu_s": r["cpu"]}
        for r in runs
        if r["start"] >= started
    ]


def open_tab(context, url: str, log: Path) -> dict:
    page = context.new_page()
    page.add_init_script(_OBSERVE)
    try:
        started = time.time()
        page.goto(url)
        page.get_by_test_id("stPlotlyChart").locator(".main-svg").first.wait_for(timeout=120_000)
        drawn = time.time() - started
        wait_idle(page, 120_000)
        # The browser's clock starts at navigation, a few ms after goto was called.
        offset = page.evaluate("performance.timeOrigin") / 1000 - started
        chunk = [
            {"requested_s": a + offset, "received_s": b + offset, "bytes": n}
            for a, b, n in page.evaluate(_CHUNK)
        ]
        tasks = [
            {"start_s": a + offset, "ms": round(d * 1000)}
            for a, d in page.evaluate("window.__longTasks")
            if d * 1000 > LONG_TASK_MS
        ]
        return {
            "drawn_s": drawn,
            "script_runs": _runs_since(log, started),
            "plotly_chunk": chunk,
            "long_tasks": tasks,
            "exceptions": page.get_by_test_id("stException").count(),
        }
    finally:
        page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", choices=("fresh", "persistent"), default="fresh")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--links", default=",".join(DEFAULT_LINKS))
    parser.add_argument("--out", help="save every measurement as bench/out/NAME.json")
    args = parser.parse_args()
    links = [link for link in args.links.split(",") if link]

    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="memaudit-first-tab-"))
    log = work / "probe.jsonl"
    os.environ["MA_PROBE_LOG"] = str(log)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(REPO / "bench" / "probe_site"), str(REPO), os.environ.get("PYTHONPATH", "")]
    )
    results: dict[str, list[dict]] = {link: [] for link in links}
    try:
        with sync_playwright() as pw:
            proc, base = start_streamlit(work / "server.log")
            try:
                if args.profile == "persistent":
                    browser = None
                    shared = pw.chromium.launch_persistent_context(
                        str(work / "profile"),
                        executable_path=CHROMIUM,
                        args=CHROMIUM_ARGS,
                        viewport={"width": 1280, "height": 900},
                    )
                else:
                    browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                    shared = None
                for rnd in range(args.rounds):
                    for link in links:
                        context = shared or browser.new_context(
                            viewport={"width": 1280, "height": 900}
                        )
                        try:
                            found = open_tab(context, base + link, log)
                        finally:
                            if shared is None:
                                context.close()
                        results[link].append(found)
                        runs = found["script_runs"]
                        chunk = found["plotly_chunk"][:1]
                        longest = max(found["long_tasks"], key=lambda t: t["ms"], default=None)
                        print(
                            f"round {rnd} {link}: drawn {found['drawn_s']:.2f} s; script "
                            + (
                                f"{runs[0]['start_s']:.2f}-{runs[-1]['end_s']:.2f} s"
                                if runs
                                else "not seen"
                            )
                            + (
                                f"; plotly chunk {chunk[0]['requested_s']:.2f}-"
                                f"{chunk[0]['received_s']:.2f} s ({chunk[0]['bytes']} bytes)"
                                if chunk
                                else ""
                            )
                            + (
                                f"; longest task {longest['ms']} ms at {longest['start_s']:.2f} s"
                                if longest
                                else ""
                            ),
                            flush=True,
                        )
                if shared is not None:
                    shared.close()
            finally:
                stop_streamlit(proc)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.out:
        save(args.out, {"machine": machine(), "profile": args.profile, "tabs": results})


if __name__ == "__main__":
    main()
