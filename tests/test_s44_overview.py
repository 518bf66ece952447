"""QA s44, the Overview page:

1. A store that costs more than the budget was scored cut to fit, but its bar in the ratio
   chart (and the chart's exported image) read like the store as written: "Validity-aware
   writer 1.000". Only the table's last column said so. The chart now marks the cut stores and
   a banner names them in the Budget sweep's words (the core's ``cut_note``).
2. The "Presentation mode" toggle sat below the store picker, under the fold of a 1280 x 720
   sidebar: it now comes before the package, budget and store pickers.
3. The candidate cost histogram left its bins to plotly: 5 wide from -0.5, ticks at the
   centres, so the bar over "7" held the 21 candidates costing 5 to 9 words. Each bar is now
   named by the costs it holds.

Expected values come from the sample packages' JSON: store costs as written are sums of the
listed costs, histogram counts are counts of the listed candidate costs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from app_utils import open_app

from memaudit_ui import figures, render

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"
MARK = "(cut to fit)"


def _doc(name: str) -> dict:
    return json.loads((SAMPLES / f"{name}.json").read_text(encoding="utf-8"))


def _written_costs(doc: dict) -> dict[str, float]:
    """Each store's label -> its cost as written, summed from the package file: a package
    store's selected candidates, an external store's memories less the deleted ones."""
    cost = {c["id"]: c["cost"] for c in doc["candidates"]}
    out = {}
    for store in doc["stores"]:
        if "memories" in store:
            total = sum(m["cost"] for m in store["memories"] if m.get("status") != "deleted")
        else:
            total = sum(cost[c] for c in store["select"])
        out[store["label"]] = total
    return out


def _ratio_chart_names(at) -> tuple[set[str], set[str]]:
    """The Overview ratio chart's bar names: (all of them, those marked as cut), each without
    the mark."""
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["layout"]["title"]["text"].startswith("Ratio F / ")
    names = [name for trace in spec["data"] for name in trace["y"]]
    bare = {name.replace("<br>", " ").replace(f" {MARK}", "") for name in names}
    cut = {name.replace("<br>", " ").replace(f" {MARK}", "") for name in names if MARK in name}
    return bare, cut


@pytest.mark.parametrize(
    ("package", "budget", "n_whole"),
    # 9.5: Fact-only writer (9 words) fits whole; 30: Mem0 (27) does.
    [
        ("veg-to-pescatarian", 7.25, 0),
        ("veg-to-pescatarian", 9.5, 1),
        ("external-stores-demo", 30, 1),
    ],
)
def test_overview_marks_and_names_the_stores_cut_to_fit(
    package: str, budget: float, n_whole: int
) -> None:
    written = _written_costs(_doc(package))
    expected_cut = {label for label, cost in written.items() if cost > budget}
    kept_whole = set(written) - expected_cut
    assert len(kept_whole) == n_whole and len(expected_cut) == len(written) - n_whole

    at = open_app(package=f"sample:{package}", budget=f"{budget:g}", store="writer:greedy")
    assert not at.exception, [e.value for e in at.exception]

    names, cut = _ratio_chart_names(at)
    assert set(written) <= names
    assert cut == expected_cut, (cut, expected_cut)

    # The banner is Markdown: its punctuation comes escaped ("7\\.25").
    banners = [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning]
    banners = [b for b in banners if "cut to what fits" in b]
    assert len(banners) == 1, [w.value for w in at.warning]
    (banner,) = banners
    assert f"more than budget {budget:g}" in banner
    for label in expected_cut:
        assert label in banner, (label, banner)
    for label in kept_whole:
        assert label not in banner, (label, banner)


@pytest.fixture
def kaleido_server():
    yield
    render._stop_kaleido()


def test_exported_ratio_chart_says_which_store_was_cut(kaleido_server) -> None:
    """The chart's download (the app's own export path) carries the mark."""
    fig = figures.ratio_bars(
        ["gvt", "Raw logger", "Validity-aware writer"],
        [1.0, 0.0, 1.0],
        ["writer", "store", "store"],
        "Ratio F / OPT at budget 7.25 words",
        cut=[False, True, True],
    )
    svg = render._image(fig, "svg")().decode("utf-8")
    ticks = re.findall(r'<g class="ytick">(.*?)</g>', svg)
    text = [re.sub(r"<[^>]+>", " ", t) for t in ticks]
    assert sum(MARK in t for t in text) == 2, text
    assert any("Raw logger" in t and MARK in t for t in text), text
    assert any(t.strip() == "gvt" for t in text), text


def _sidebar_keys(at) -> list[str]:
    """Widget keys in the order the sidebar draws them."""
    keys: list[str] = []

    def walk(node) -> None:
        key = getattr(node, "key", None)
        if isinstance(key, str) and key.startswith("w_"):
            keys.append(key)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.sidebar)
    return keys


def test_presentation_toggle_comes_before_the_pickers_and_still_works() -> None:
    at = open_app(package="sample:veg-to-pescatarian", budget="7.25")
    keys = _sidebar_keys(at)
    for picker in ("w_package", "w_budget", "w_store"):
        assert keys.index("w_present") < keys.index(picker), keys
    at.toggle(key="w_present").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["ma_present"] is True
    assert at.query_params.get("present") == "1"


def _bin_range(label: str) -> tuple[int, int]:
    low, _, high = label.replace(",", "").partition("–")
    return int(low), int(high or low)


@pytest.mark.parametrize("package", ["travel-assistant", "veg-to-pescatarian", "event-graph-50"])
def test_cost_histogram_names_the_costs_each_bar_holds(package: str) -> None:
    doc = _doc(package)
    costs = [c["cost"] for c in doc["candidates"]]
    types = [c["type"] for c in doc["candidates"]]
    assert all(float(c).is_integer() for c in costs)
    fig = figures.cost_histogram(costs, types, doc["cost_unit"], "Candidate cost distribution")
    assert fig.layout.xaxis.title.text == f"candidate cost ({doc['cost_unit']})"
    ticks = list(fig.layout.xaxis.ticktext)
    ranges = [_bin_range(t) for t in ticks]
    # Equal, adjacent, whole ranges covering every cost.
    widths = {high - low + 1 for low, high in ranges}
    assert len(widths) == 1, ranges
    assert all(a[1] + 1 == b[0] for a, b in zip(ranges, ranges[1:], strict=False)), ranges
    assert ranges[0][0] <= min(costs) and max(costs) <= ranges[-1][1]
    # Each bar (stacked over the types) holds exactly the candidates its label names.
    totals = [sum(trace.y[k] for trace in fig.data) for k in range(len(ticks))]
    assert totals == [sum(low <= c <= high for c in costs) for low, high in ranges]
    by_type = {t.name: list(t.y) for t in fig.data}
    for ctype in set(types):
        want = [
            sum(low <= c <= high for c, t in zip(costs, types, strict=True) if t == ctype)
            for low, high in ranges
        ]
        assert by_type[ctype] == want, ctype
    # A bar's hover names its range and total.
    assert "%{customdata[0]}" in fig.data[0].hovertemplate
    assert [row[0] for row in fig.data[0].customdata] == ticks


def test_travel_assistant_bar_of_21_candidates_is_named_5_to_9() -> None:
    """The QA case: 21 candidates cost 5 to 9 words; that bar is named "5–9", not "7"."""
    doc = _doc("travel-assistant")
    costs = [c["cost"] for c in doc["candidates"]]
    assert sum(5 <= c <= 9 for c in costs) == 21
    fig = figures.cost_histogram(costs, [c["type"] for c in doc["candidates"]], "words", "t")
    ticks = list(fig.layout.xaxis.ticktext)
    k = ticks.index("5–9")
    assert sum(trace.y[k] for trace in fig.data) == 21
    assert "7" not in ticks
