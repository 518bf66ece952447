"""Speaker QA s49: at 1024 x 768 in presentation mode (sidebar closed, an 824 px main column)
Compare's "Side by side, per experience" table was 1007 px wide: ids such as
"update_3_compound_update" have no space to break at, and the type columns, what a speaker
points at ("the store wrote a tombstone, the optimum a compound update"), came last, "store
type" cut at "compound" and "OPT type" off the screen.

On a projector the table now puts the types right after "match", before the long ids, and an id
may break after an underscore; the CSV and the normal-mode grid keep their columns.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from app_utils import open_app
from playwright.sync_api import Page, expect
from test_browser import LOAD_TIMEOUT_MS, assert_no_traceback, open_view

REPO = Path(__file__).resolve().parent.parent
UPDATE_CHAIN = json.loads((REPO / "sample_packages" / "update_chain.json").read_text())

#: The projector's columns, written out: the types before the ids they are cut behind.
PRESENT_COLUMNS = [
    "experience",
    "match",
    "store type",
    "OPT type",
    "store wrote",
    "OPT wrote",
    "store cost",
    "OPT cost",
    "store marginal value",
    "OPT marginal value",
]

#: Zero-width space: a line-break opportunity that draws nothing.
ZWSP = "\u200b"


def _side_by_side(at):
    return next(t for t in at.table if "store wrote" in t.value.columns)


def test_projector_side_by_side_puts_the_types_before_the_ids() -> None:
    at = open_app("pages/2_Compare.py", 240, package="sample:update_chain", present="1")
    assert not at.exception, [e.value for e in at.exception]
    table = _side_by_side(at)
    assert list(table.value.columns) == PRESENT_COLUMNS, list(table.value.columns)

    # The package's own candidates, read from its file: id -> type.
    types = {c["id"]: c["type"] for c in UPDATE_CHAIN["candidates"]}
    raw = table.value
    for side in ("store", "OPT"):
        for wrote, kind in zip(raw[f"{side} wrote"], raw[f"{side} type"], strict=True):
            assert types[wrote] == kind, (side, wrote, kind)
    # update_3's memory (an id of three underscores, the one that held the table wide).
    assert "update_3_compound_update" in set(raw["store wrote"]), list(raw["store wrote"])

    # On screen an id may break after each underscore; the table's own values (and the CSV)
    # keep it whole.
    shown = pa.ipc.open_stream(table.proto.arrow_data.styler.display_values).read_pandas()
    for side in ("store", "OPT"):
        for cell, wrote in zip(shown[f"{side} wrote"], raw[f"{side} wrote"], strict=True):
            assert cell == wrote.replace("_", "_" + ZWSP), (cell, wrote)
    # The types stay whole: they are short, and what the speaker reads out.
    assert list(shown["store type"]) == list(raw["store type"])


def test_normal_mode_side_by_side_keeps_every_column() -> None:
    at = open_app("pages/2_Compare.py", 240, package="sample:update_chain")
    assert not at.exception, [e.value for e in at.exception]
    frame = next(d.value for d in at.dataframe if "store wrote" in d.value.columns)
    assert set(PRESENT_COLUMNS) < set(frame.columns), list(frame.columns)
    assert "update_3_compound_update" in set(frame["store wrote"])


#: The QA's two links: 1007 px and 878 px wide in an 822 px box.
VIEWS = [
    "package=sample:update_chain&present=1",
    "package=sample:event-graph-50&store=writer:density&present=1",
]


@pytest.mark.parametrize("query_text", VIEWS)
def test_side_by_side_fits_a_1024_projector(streamlit_server, page: Page, query_text) -> None:
    page.set_viewport_size({"width": 1024, "height": 768})
    open_view(page, streamlit_server, "/Compare", query_text)
    assert_no_traceback(page)
    heading = page.get_by_text("Side by side, per experience")
    expect(heading).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    table = page.get_by_test_id("stTable").filter(has_text="store wrote")
    expect(table).to_have_count(1, timeout=LOAD_TIMEOUT_MS)
    fit = table.evaluate(
        """t => {
            const box = t.getBoundingClientRect();
            const cells = [...t.querySelectorAll('thead th')];
            const right = name => cells.find(c => c.innerText.trim() === name)
                .getBoundingClientRect().right;
            return {box: box.width, left: box.left, table: t.querySelector('table')
                    .getBoundingClientRect().width, store: right('store type'),
                    opt: right('OPT type')};
        }"""
    )
    # The sidebar is closed: the 824 px column of the QA's report.
    assert fit["box"] >= 800, fit
    assert fit["table"] <= fit["box"] + 1, fit
    # Both type columns end inside the box (their headers' right edges).
    assert max(fit["store"], fit["opt"]) <= fit["left"] + fit["box"] + 1, fit
