"""How long the Compare page's Python rerun takes after a budget change, without a browser.

Target 5 times a budget change in Chromium (``bench_app.py --only compare``: key press to the
end of the run). This opens the same page with Streamlit's AppTest (``sample:event-graph-50``,
its default store, its default budget), moves the budget slider ``--changes`` times to budgets
never seen before (each runs the solve) and prints each rerun's wall time in milliseconds and
their median: the server's share of the browser figure. The rest is the browser's (the
websocket, React and plotly drawing the page).

Usage::

    .venv/bin/python bench/exp_compare_rerun.py [--changes 15]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=15)
    args = parser.parse_args()
    from app_utils import open_linked

    from memaudit_core.package import load_package
    from memaudit_ui.frame import default_store_key

    pkg = load_package(ROOT / "sample_packages" / "event-graph-50.json")
    start = int(pkg.default_budget())
    at = open_linked(
        "pages/2_Compare.py", "sample:event-graph-50", str(start), store=default_store_key(pkg)
    )
    walls = []
    for k in range(1, args.changes + 1):
        t0 = time.perf_counter()
        at.slider(key="w_budget").set_value(float(start + k)).run()
        walls.append(time.perf_counter() - t0)
        if at.exception:
            raise SystemExit(f"the page raised: {[e.value for e in at.exception]}")
    ms = [round(w * 1000, 1) for w in walls]
    print(json.dumps({"rerun_ms": ms, "median_ms": statistics.median(ms)}))


if __name__ == "__main__":
    main()
