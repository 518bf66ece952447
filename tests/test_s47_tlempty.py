"""QA s47: the Evidence explorer's timeline hid stores that wrote nothing, without a word.

travel-assistant at budget 5 with recency_raw drew only the experiences, recency_raw, OPT and
the Fact extractor; veg-to-pescatarian at budget 1 with gvt only "gvt (chosen)", on the plot's
edge, although the core's timeline has five rows in both (plotly's reversed autorange spans
only the rows with markers). Nothing said why the rows were empty. On 3000 experiences the
gvt and OPT rows were identical-looking bands although they differ in memories.

Expected rows and costs are read from the package JSON, not from the core.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memaudit_core.explain import TIMELINE_DENSE, evidence_view
from memaudit_core.generators import generate
from memaudit_core.package import load_package
from memaudit_ui.figures import store_timeline

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"
#: The two QA repros: package, budget, writer.
CASES = {
    "travel": ("travel-assistant", 5.0, "recency_raw"),
    "veg": ("veg-to-pescatarian", 1.0, "gvt"),
}


def _raw(name: str) -> dict:
    return json.loads((SAMPLES / f"{name}.json").read_text())


def _costs(raw: dict) -> dict[str, float]:
    return {c["id"]: float(c["cost"]) for c in raw["candidates"]}


def _expected_rows(raw: dict, writer: str) -> list[str]:
    """The rows the page should draw: experiences, the chosen writer, OPT, every store."""
    return ["experiences", f"{writer} (chosen)", "OPT"] + [
        s.get("label", s["id"]) for s in raw["stores"]
    ]


def _view(case: str):
    name, budget, writer = CASES[case]
    return evidence_view(load_package(SAMPLES / f"{name}.json"), budget, writer=writer)


def _label(text: str) -> str:
    return " ".join(text.replace("<br>", " ").split())


@pytest.mark.parametrize("present", [False, True])
@pytest.mark.parametrize("case", list(CASES))
def test_every_row_is_on_the_chart(case, present):
    name, _, writer = CASES[case]
    want = _expected_rows(_raw(name), writer)
    fig = store_timeline(_view(case).timeline, "Memory written", present=present)
    axis = fig.layout.yaxis
    # Each row's category, in order, top row first ...
    assert [_label(c) for c in axis.categoryarray] == want
    # ... and a range spanning all of them (category k sits at k), with room for the markers
    # of the first and last rows: plotly's autorange covered only the rows with markers.
    assert axis.autorange is False or axis.autorange is None
    assert axis.range is not None
    top, bottom = axis.range
    assert top > bottom  # reversed: the experiences on top
    assert bottom <= -0.5 and top >= len(want) - 1 + 0.5


def test_travel_note_names_the_empty_rows_and_why():
    raw = _raw("travel-assistant")
    costs = _costs(raw)
    budget = CASES["travel"][1]
    message = _view("travel").timeline.message
    assert "recency_raw (chosen) wrote nothing" in message
    empty = 0
    for store in raw["stores"]:
        member_costs = [costs[c] for c in store["select"]]
        # A store kept in its order keeps every memory that still fits: empty means none fits.
        if min(member_costs) > budget:
            empty += 1
            cheapest = min(member_costs)
            # Its memories are drawn crossed out, as cut (QA s49): it kept none of them.
            n = len(store["select"])
            assert (
                f"{store['label']} kept none of the {n} memor{'y' if n == 1 else 'ies'} it "
                f"wrote (its cheapest memory costs {cheapest:g} words)" in message
            )
        else:
            assert f"{store['label']} wrote nothing" not in message
    assert empty == 2  # Raw logger and Validity-aware summariser, as QA saw
    assert message.startswith("Empty rows at budget 5 words: ")


def test_veg_note_says_nothing_fits():
    raw = _raw("veg-to-pescatarian")
    cheapest = min(_costs(raw).values())
    assert cheapest > CASES["veg"][1]
    assert raw["stores"]  # whose memories are all cut: drawn crossed out (QA s49)
    message = _view("veg").timeline.message
    assert message == (
        f"Nothing fits budget 1 word: the package's cheapest memory costs {cheapest:g} words, "
        "so every store and the optimum kept nothing; what the package's stores wrote is drawn "
        "crossed out, as cut at this budget."
    )


def test_dense_timeline_marks_and_names_where_store_and_optimum_differ():
    pkg = generate("event_graph", seed=3, n_experiences=100)
    assert len(pkg.experiences) > TIMELINE_DENSE
    tl = evidence_view(pkg, pkg.default_budget(), writer="gvt").timeline
    chosen, opt = tl.rows[0], tl.rows[1]
    mine = {p.candidate_id for p in tl.points if p.row == chosen}
    theirs = {p.candidate_id for p in tl.points if p.row == opt}
    only_mine, only_theirs = sorted(mine - theirs), sorted(theirs - mine)
    assert only_mine and only_theirs  # this seed differs both ways
    n = len(only_mine) + len(only_theirs)
    m = re.match(r"gvt \(chosen\) and OPT differ in (\d+) memories: ", tl.message)
    assert m is not None and int(m.group(1)) == n
    assert f"only gvt (chosen) keeps {', '.join(only_mine[:4])}" in tl.message
    assert f"only OPT keeps {', '.join(only_theirs[:4])}" in tl.message
    assert "With 100 experiences the markers overlap" in tl.message
    # The figure rings exactly those memories on the two rows, under a legend entry.
    fig = store_timeline(tl, "Memory written")
    rings = [t for t in fig.data if t.name == "store ≠ OPT"]
    assert len(rings) == 1 and rings[0].showlegend is not False
    ring = rings[0]
    assert ring.marker.symbol == "circle-open"
    drawn = sorted(
        (_label(y), h.split("<br>")[0]) for y, h in zip(ring.y, ring.hovertext, strict=True)
    )
    want = sorted(
        [(chosen, f"only {chosen} keeps {c}") for c in only_mine]
        + [(opt, f"only {opt} keeps {c}") for c in only_theirs]
    )
    assert drawn == want


def test_sparse_timeline_rings_but_adds_no_note():
    # 13 experiences: the rings can be seen, so no words are added (the info box stays empty).
    travel = load_package(SAMPLES / "travel-assistant.json")
    tl = evidence_view(travel, 40, writer="density").timeline
    assert tl.message == ""
    fig = store_timeline(tl, "Memory written")
    assert [t.name for t in fig.data].count("store ≠ OPT") == 1
