"""Page reruns with charts built as before (every update validated by plotly) and as shipped
(:func:`memaudit_ui.figures.new_figure`: traces validated once, layout updates taken as given).

Each page is opened by a link naming the package (Streamlit's ``AppTest``, in this process, so
that its caches are warm after the first run), then rerun ``--reruns`` times per mode, the two
modes alternating round by round. The "validated" mode is the shipped code with
``figures.new_figure`` replaced by plotly's validating constructor, which is what every builder
called until the sixty-first session; ``base_layout`` then sets the template by name, as it did.
A rerun is the script run a widget change starts when the page's data is cached (a new focus
unit, a toggle): its time is the charts' construction plus Streamlit's own work.

Run: ``.venv/bin/python bench/exp_figure_build.py [--packages sample:event-graph-50]
[--rounds 4] [--reruns 3]``; results in ``bench/out/figure-build.json``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import plotly.graph_objects as go
from common import CHART_PAGES, machine, open_chart_page, save

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests"), str(REPO)]

from memaudit_ui import figures  # noqa: E402

PAGES = CHART_PAGES
SHIPPED = figures.new_figure


def _validating(data=None, **kwargs) -> go.Figure:
    return go.Figure(data, **kwargs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--packages",
        default="sample:event-graph-50,sample:event-graph-500,sample:travel-assistant",
        help="package keys, as in a link (sample:NAME, gen:...)",
    )
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--reruns", type=int, default=3, help="reruns per mode and round")
    args = ap.parse_args()
    print(f"# {machine()}")
    print("| package | page | validated ms | shipped ms | ratio |")
    print("|---|---|---:|---:|---:|")
    rows = []
    for package in args.packages.split(","):
        for page in PAGES:
            at = open_chart_page(REPO / "app.py", page, package)
            times: dict[str, list[float]] = {"validated": [], "shipped": []}
            for r in range(args.rounds):
                order = ("validated", "shipped") if r % 2 == 0 else ("shipped", "validated")
                for mode in order:
                    figures.new_figure = _validating if mode == "validated" else SHIPPED
                    try:
                        at.run()  # the first rerun in a mode is not timed
                        for _ in range(args.reruns):
                            t0 = time.perf_counter()
                            at.run()
                            times[mode].append((time.perf_counter() - t0) * 1000)
                    finally:
                        figures.new_figure = SHIPPED
                    if at.exception:
                        raise SystemExit(f"{page} ({mode}): {[e.value for e in at.exception]}")
            old, new = (statistics.median(times[m]) for m in ("validated", "shipped"))
            rows.append(
                {
                    "package": package,
                    "page": page,
                    "validated_ms": times["validated"],
                    "shipped_ms": times["shipped"],
                    "validated_median_ms": old,
                    "shipped_median_ms": new,
                }
            )
            print(f"| {package} | {page} | {old:.0f} | {new:.0f} | {old / new:.2f}x |", flush=True)
    path = save(
        "figure-build",
        {"machine": machine(), "rounds": args.rounds, "reruns": args.reruns, "rows": rows},
    )
    print(f"# saved {path}")


if __name__ == "__main__":
    main()
