"""Page reruns (warm caches) of the app in the current folder, for comparing two commits in
one sitting, as ``bench/ab_overview.py``::

    git worktree add /tmp/old <commit>
    for i in 1 2 3; do for w in /tmp/old /work/main; do
        (cd $w && /work/main/.venv/bin/python /work/main/bench/ab_page_rerun.py) >> ab.jsonl
    done; done

(run from the checkout's folder: its ``app.py`` and pages run, and its ``memaudit_core`` and
``memaudit_ui`` come first on ``sys.path``). Each page is opened by a link naming the package
(Streamlit's ``AppTest``), run once more untimed, then ``--reruns`` times: a rerun is the
script run a widget change starts when the page's data is cached, so its time is the charts'
construction and Streamlit's own work. One JSON line per run: the code's path and, per package
and page, the median milliseconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path.cwd()
sys.path[:0] = [str(ROOT)]

from common import CHART_PAGES, check_page, open_chart_page  # noqa: E402

import memaudit_ui  # noqa: E402

PAGES = CHART_PAGES
DEFAULT_PACKAGES = "sample:event-graph-50,sample:event-graph-500,sample:travel-assistant"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", default=DEFAULT_PACKAGES, help="link keys (sample:NAME)")
    parser.add_argument("--reruns", type=int, default=5)
    args = parser.parse_args()
    medians: dict[str, dict[str, float]] = {}
    for package in args.packages.split(","):
        for page in PAGES:
            at = open_chart_page(ROOT / "app.py", page, package)
            at.run()
            times = []
            for _ in range(args.reruns):
                t0 = time.perf_counter()
                at.run()
                times.append((time.perf_counter() - t0) * 1000)
            check_page(at, page, package)
            medians.setdefault(package, {})[page] = statistics.median(times)
    print(json.dumps({"code": str(Path(memaudit_ui.__file__).parent.parent), "ms": medians}))


if __name__ == "__main__":
    main()
