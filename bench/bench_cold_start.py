"""The first page after the app starts: ``python -m memaudit_ui.serve`` against ``streamlit run``.

A Streamlit server imports the page scripts' modules in the first session's first run, so the
first page a user opens after starting the app waits for them. ``make run`` starts the app with
``python -m memaudit_ui.serve``, which imports them (and runs one small Overview) before the
server starts; the baseline is the plain ``streamlit run app.py`` of the same checkout, timed in
the same run.

Per round, for each way of starting (their order alternates between rounds, so that drift in
the host's speed falls on both), and for each link in ``--links``: a fresh server, then

- **first page**: a fresh browser context (empty HTTP cache, as a first visit) opens the link;
  wall time from ``goto`` to the app idle (no script run, no status widget; the 300 ms settle
  of ``wait_idle`` subtracted), and to the page drawn (also no grey placeholder left: a fresh
  context loads the elements' JavaScript lazily, after the run);
- **second page**: another fresh context opens the same link on the same server (the server's
  modules and caches warm, the browser's cache cold): what is left of the first page's cost
  once the server is warm;
- **ready**: seconds from the server process's start to its health endpoint answering (the
  warm start is slower there: it imports before it listens).

Prints medians and the ratio first page (streamlit run) / first page (serve) per link, and
saves every measurement with ``--out NAME`` (``bench/out/NAME.json``).

Run: ``.venv/bin/python bench/bench_cold_start.py [--rounds 5] [--links /,/Compare?package=...]
[--out NAME]`` (about 20 s per round and link).
"""

from __future__ import annotations

import argparse
import statistics
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

DEFAULT_LINKS = ("/", "/Compare?package=sample:event-graph-50")
SETTLE_MS = 300
STARTS = {"streamlit run": False, "memaudit_ui.serve": True}


def _open(browser, url: str) -> float:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        started = time.perf_counter()
        page.goto(url)
        wait_idle(page, 120_000, settle_ms=SETTLE_MS)
        idle = time.perf_counter() - started - SETTLE_MS / 1000
        # A fresh context loads the elements' JavaScript lazily: for a second or two after the
        # run the sidebar and metrics are still grey placeholders (stSkeleton).
        page.wait_for_function(
            "() => !document.querySelector('[data-testid=stSkeleton]')", timeout=120_000
        )
        drawn = max(idle, time.perf_counter() - started - SETTLE_MS / 1000)
        errors = page.locator("[data-testid=stException]").count()
        if errors:
            raise RuntimeError(f"{url}: {errors} exception(s) on the page")
        return idle, drawn
    finally:
        context.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--links", default=",".join(DEFAULT_LINKS))
    parser.add_argument("--out", help="save every measurement as bench/out/NAME.json")
    args = parser.parse_args(argv)
    links = [link for link in args.links.split(",") if link]

    from playwright.sync_api import sync_playwright

    rows = []
    log = Path("/tmp/memaudit-bench-cold-start.log")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for round_idx in range(args.rounds):
            order = list(STARTS) if round_idx % 2 == 0 else list(STARTS)[::-1]
            for start_name in order:
                for link in links:
                    t0 = time.perf_counter()
                    proc, base_url = start_streamlit(log, warm=STARTS[start_name])
                    ready = time.perf_counter() - t0
                    try:
                        first, first_drawn = _open(browser, base_url + link)
                        second, second_drawn = _open(browser, base_url + link)
                    finally:
                        stop_streamlit(proc)
                    row = {
                        "round": round_idx,
                        "start": start_name,
                        "link": link,
                        "ready_s": ready,
                        "first_s": first,
                        "first_drawn_s": first_drawn,
                        "second_s": second,
                        "second_drawn_s": second_drawn,
                    }
                    rows.append(row)
                    print(
                        f"  round {round_idx} {start_name:18s} {link:45s} ready {ready:5.2f} s  "
                        f"first {first:5.2f} s (drawn {first_drawn:5.2f} s)  "
                        f"second {second:5.2f} s (drawn {second_drawn:5.2f} s)",
                        flush=True,
                    )
        browser.close()

    summary = {}
    print(f"\nMachine: {machine()}; {args.rounds} rounds; medians in seconds\n")
    print("| link | start | server ready | first page: idle / drawn | second page: idle / drawn |")
    print("|---|---|---:|---:|---:|")
    for link in links:
        for start_name in STARTS:
            mine = [r for r in rows if r["link"] == link and r["start"] == start_name]
            keys = ("ready_s", "first_s", "first_drawn_s", "second_s", "second_drawn_s")
            med = {k: statistics.median(r[k] for r in mine) for k in keys}
            summary[f"{link} | {start_name}"] = med
            print(
                f"| `{link}` | {start_name} | {med['ready_s']:.2f} | {med['first_s']:.2f} / "
                f"{med['first_drawn_s']:.2f} | {med['second_s']:.2f} / "
                f"{med['second_drawn_s']:.2f} |"
            )
    print()
    for link in links:
        for key in ("first_s", "first_drawn_s"):
            plain = summary[f"{link} | streamlit run"][key]
            warm = summary[f"{link} | memaudit_ui.serve"][key]
            print(f"{key} `{link}`: streamlit run / serve = {plain / warm:.2f}x")
    if args.out:
        path = save(args.out, {"machine": machine(), "rows": rows, "medians": summary})
        print(f"saved {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
