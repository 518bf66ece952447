"""QA s47 (cutmark): in presentation mode the Overview's table of writers and stores drops its
notes column as prose, and that column was the only one saying a store had been cut to fit
the budget: the cut store's F, ratio and cost then read as the store's own. The table now has
a short "cut to fit" column, kept on a projector, and the banner above it points there (it
sent the audience to the notes, a column presentation mode does not show).

Which stores are cut comes from the package file: a store is cut when its cost as written
(summed from the listed costs, deleted memories left out) exceeds the budget; the memories it
held are counted from the file too.
"""

from __future__ import annotations

import re

import pytest
from app_utils import open_app
from test_s44_overview import _doc, _written_costs

COLUMN = "cut to fit"


def _written_counts(doc: dict) -> dict[str, int]:
    """Each store's label -> how many memories (or candidates) it holds as written."""
    out = {}
    for store in doc["stores"]:
        if "memories" in store:
            out[store["label"]] = sum(m.get("status") != "deleted" for m in store["memories"])
        else:
            out[store["label"]] = len(store["select"])
    return out


def _scores_table(at, present: bool):
    """The Overview's table of writers and stores as shown: a static table on a projector,
    the grid otherwise."""
    shown = at.table if present else at.dataframe
    tables = [t.value for t in shown if "writer / store" in t.value.columns]
    assert len(tables) == 1, [list(t.value.columns) for t in shown]
    return tables[0]


@pytest.mark.parametrize(
    ("package", "budget", "n_cut"),
    # 24: the QA case, all three external stores cut; 30: Mem0 (27 words) fits whole;
    # 9.5: the Fact-only writer's store (9 words) fits whole.
    [
        ("external-stores-demo", 24, 3),
        ("external-stores-demo", 30, 2),
        ("veg-to-pescatarian", 9.5, 2),
    ],
)
@pytest.mark.parametrize("present", [True, False])
def test_scores_table_says_which_stores_were_cut(
    package: str, budget: float, n_cut: int, present: bool
) -> None:
    doc = _doc(package)
    written = _written_costs(doc)
    counts = _written_counts(doc)
    expected_cut = {label for label, cost in written.items() if cost > budget}
    assert len(expected_cut) == n_cut

    query = {"package": f"sample:{package}", "budget": f"{budget:g}"}
    at = open_app(**query, **({"present": "1"} if present else {}))
    assert not at.exception, [e.value for e in at.exception]
    table = _scores_table(at, present)
    if present:
        # The QA case's condition: the notes, which also say what was cut, are not shown.
        assert "notes" not in table.columns, list(table.columns)
    assert COLUMN in table.columns, list(table.columns)
    marks = dict(zip(table["writer / store"], table[COLUMN], strict=True))
    assert set(written) <= set(marks), (written, marks)
    for label, mark in marks.items():
        if label in expected_cut:
            found = re.fullmatch(r"yes: (\d+) of (\d+) dropped", mark)
            assert found, (label, mark)
            dropped, held = map(int, found.groups())
            assert held == counts[label] and 0 < dropped <= held, (label, mark)
        else:
            # The reference writers fit the budget by construction, and so do the others.
            assert mark == "no", (label, mark)


def test_banner_points_at_a_column_the_projector_shows() -> None:
    at = open_app(package="sample:external-stores-demo", budget="24", present="1")
    assert not at.exception, [e.value for e in at.exception]
    banners = [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning]
    banners = [b for b in banners if "cut to what fits" in b]
    assert len(banners) == 1, [w.value for w in at.warning]
    (banner,) = banners
    assert f'"{COLUMN}" column' in banner, banner
    assert "notes column" not in banner, banner
    assert COLUMN in _scores_table(at, present=True).columns


def test_no_column_when_nothing_was_cut() -> None:
    """Budget 48 holds every store of veg-to-pescatarian as written: no column of "no"."""
    doc = _doc("veg-to-pescatarian")
    assert max(_written_costs(doc).values()) <= 48
    at = open_app(package="sample:veg-to-pescatarian", budget="48", present="1")
    assert not at.exception, [e.value for e in at.exception]
    assert COLUMN not in _scores_table(at, present=True).columns
