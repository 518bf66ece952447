"""Where a Compare budget change's time goes: the server's script run, the messages it sends,
the browser's main thread (experiment for target 5; s53).

Starts a Streamlit server on ``--repo``'s app with the timing hooks of ``bench/probe_site``
(script runs and sent messages, in the server process), opens Compare on
``sample:event-graph-50`` in Debian Chromium, and makes ``--changes`` budget changes as
``bench_app.py`` does (ArrowRight on the sidebar's budget slider, each budget new). Per
change, in ms from the key press: the script run's start and end and its CPU time, the last
message the server sent, when the browser's JavaScript handled the first and last message,
the end of the run as the page sees it (``bench_app.py``'s figure), and the renderer's task
and script time over the change (Chrome's Performance metrics). Prints the medians and the
message timeline of the last change, and with ``--out FILE`` saves every row as JSON.

Run ``python bench/exp_compare_timeline.py --repo PATH`` for two checkouts alternately to
compare them in one sitting (the median of one run moves by 30-60 ms on two shared cores).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Record, in the page, when its JavaScript handles each websocket message (a busy main thread
# handles them late: that delay is part of what the user waits for).
_SOCKET_LOG_JS = """
(() => {
  window.__maSocketLog = [];
  const Native = window.WebSocket;
  function Logged(...args) {
    const socket = new Native(...args);
    socket.addEventListener('message', event => {
      const size = event.data.byteLength ?? event.data.size ?? event.data.length;
      window.__maSocketLog.push([performance.timeOrigin + performance.now(), size]);
    });
    return socket;
  }
  Logged.prototype = Native.prototype;
  Object.assign(Logged, Native);
  window.WebSocket = Logged;
})();
"""


def _median(rows: list[dict], key: str) -> float:
    values = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(values) if values else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=HERE.parent, help="checkout to serve")
    parser.add_argument("--changes", type=int, default=20, help="budget changes timed")
    parser.add_argument("--out", type=Path, help="save every change's figures as JSON")
    parser.add_argument(
        "--prefetch",
        choices=("on", "off", "default"),
        default="default",
        help="the app's prefetch of neighbouring budgets (s54); default: the checkout's own "
        "default (checkouts from before it have none)",
    )
    args = parser.parse_args(argv)
    repo = args.repo.resolve()
    sys.path[:0] = [str(repo), str(repo / "tests"), str(HERE)]

    import bench_app
    import browser_utils
    from playwright.sync_api import sync_playwright

    browser_utils.REPO_ROOT = repo  # the server runs the checkout's app.py
    work = Path(tempfile.mkdtemp(prefix="ma-timeline-"))
    log = work / "runs.jsonl"
    os.environ["MA_PROBE_LOG"] = str(log)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(HERE / "probe_site"), str(repo), os.environ.get("PYTHONPATH", "")]
    )
    switch = {} if args.prefetch == "default" else {"prefetch": args.prefetch == "on"}
    proc, base_url = browser_utils.start_streamlit(work / "server.log", **switch)
    rows = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=browser_utils.CHROMIUM, args=browser_utils.CHROMIUM_ARGS
            )
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            context.add_init_script(_SOCKET_LOG_JS)
            page = context.new_page()
            page.set_default_timeout(bench_app.LOAD_TIMEOUT_MS)
            cdp = context.new_cdp_session(page)
            cdp.send("Performance.enable")

            def renderer() -> dict[str, float]:
                metrics = cdp.send("Performance.getMetrics")["metrics"]
                return {m["name"]: m["value"] for m in metrics}

            page.goto(f"{base_url}/Compare?package={bench_app.COMPARE_PACKAGE}")
            page.locator("[data-testid=stPlotlyChart] .main-svg").first.wait_for()
            bench_app._settle(page)
            slider = bench_app._slider(page)
            for i in range(bench_app.N_WARMUP + args.changes):
                page.evaluate("() => { window.__maSocketLog = []; }")
                before = renderer()
                page.evaluate(bench_app._ARM_JS)
                slider.focus()
                slider.press("ArrowRight")
                total_ms = page.evaluate(bench_app._WAIT_JS)
                after = renderer()
                key_s = page.evaluate("() => performance.timeOrigin + window.__maT0") / 1000
                bench_app._settle(page)
                handled = page.evaluate("() => window.__maSocketLog")
                if i < bench_app.N_WARMUP:
                    continue
                rows.append(
                    {
                        "key_s": key_s,
                        "total_ms": total_ms,
                        "handled": [(t / 1000 - key_s) * 1000 for t, _ in handled],
                        "renderer_task_ms": (after["TaskDuration"] - before["TaskDuration"]) * 1000,
                        "renderer_script_ms": (after["ScriptDuration"] - before["ScriptDuration"])
                        * 1000,
                    }
                )
            browser.close()
    finally:
        browser_utils.stop_streamlit(proc)

    runs = [json.loads(line) for line in log.read_text().splitlines()]
    sends = [line.split() for line in Path(f"{log}.send").read_text().splitlines()]
    for row in rows:
        key_s = row["key_s"]
        run = min((r for r in runs if r["start"] >= key_s - 0.05), key=lambda r: r["start"])
        mine = [(float(t) - key_s) * 1000 for t, _, _ in sends if run["start"] <= float(t)]
        mine = [t for t in mine if t <= (run["end"] - key_s) * 1000 + 50]
        row.update(
            run_start_ms=(run["start"] - key_s) * 1000,
            run_end_ms=(run["end"] - key_s) * 1000,
            run_cpu_ms=run["cpu"] * 1000,
            last_sent_ms=max(mine) if mine else None,
            first_handled_ms=min(row["handled"]) if row["handled"] else None,
            last_handled_ms=max(row["handled"]) if row["handled"] else None,
            messages=len(row["handled"]),
        )
    keys = [
        "run_start_ms",
        "run_end_ms",
        "run_cpu_ms",
        "last_sent_ms",
        "first_handled_ms",
        "last_handled_ms",
        "total_ms",
        "renderer_task_ms",
        "renderer_script_ms",
        "messages",
    ]
    print(f"{args.repo}: {len(rows)} budget changes, medians in ms from the key press")
    for key in keys:
        print(f"  {key:20s} {_median(rows, key):8.1f}")
    last = rows[-1]
    timeline = [
        (round((float(t) - last["key_s"]) * 1000), int(n), kind)
        for t, n, kind in sends
        if float(t) >= last["key_s"] - 0.01
    ]
    print("last change, sent by the server (ms, bytes, type):", timeline)
    if args.out:
        args.out.write_text(json.dumps({"repo": str(repo), "rows": rows}, indent=1))
        print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
