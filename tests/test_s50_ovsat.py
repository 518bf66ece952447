"""Annotator QA s50, findings 1 and 4 (Overview, Ablations & sensitivity).

1. A log1p package's Overview never said which saturation h its F used, and its glossary
   defined only cap1 ("a unit is worth its weight once fully covered"), false under log1p.
4. A reference writer keeping nothing (recency_raw at veg-to-pescatarian B = 6) showed
   ratio 0.000 with an empty notes cell.

Expected wording comes from the package files and the formulas, worked out here by hand.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from app_utils import open_app, upload_file

REPO = Path(__file__).resolve().parent.parent
VEG = REPO / "sample_packages" / "veg-to-pescatarian.json"


def _plain(text: str) -> str:
    return text.replace("\\", "")  # markdown escapes dropped


def _veg_log1p() -> bytes:
    doc = json.loads(VEG.read_text())
    doc["id"] = "veg-log1p"
    doc["objective"] = {"saturation": "log1p"}
    return json.dumps(doc).encode()


def _uploaded_log1p(**query: str):
    at = open_app(package="sample:veg-to-pescatarian", **query)
    upload_file(at, "veg-log1p.json", _veg_log1p())
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_overview_says_the_packages_saturation_near_opt_and_in_its_glossary() -> None:
    at = _uploaded_log1p(budget="12")
    captions = [_plain(c.value) for c in at.caption]
    # The formula of log1p, h(z) = ln(1 + z), beside OPT and F.
    assert any("saturation log1p" in c and "h(z) = ln(1 + z)" in c for c in captions), captions
    [glossary] = [e for e in at.expander if e.label.startswith("What the names mean")]
    text = _plain(" ".join(m.value for m in glossary.markdown))
    # This package's h, and what a unit covered once is worth under it: ln 2 of its weight.
    assert "**log1p**" in text, text
    assert f"is worth {math.log(2):.3g} x its weight" in text, text
    # Not cap1's "worth its weight once fully covered", false for this package.
    assert "**cap1**" not in text and "min(1" not in text, text


def test_a_cap1_packages_glossary_still_defines_cap1() -> None:
    at = open_app(package="sample:veg-to-pescatarian", budget="12")
    [glossary] = [e for e in at.expander if e.label.startswith("What the names mean")]
    text = _plain(" ".join(m.value for m in glossary.markdown))
    assert "**cap1**" in text and "h(z) = min(1, z)" in text, text
    assert "**log1p**" not in text, text


def test_ablations_page_says_the_packages_saturation() -> None:
    at = _uploaded_log1p(budget="12")
    at.switch_page("pages/5_Ablations_and_sensitivity.py").run()
    assert not at.exception, [e.value for e in at.exception]
    captions = [_plain(c.value) for c in at.caption]
    assert any("saturation log1p" in c and "h(z) = ln(1 + z)" in c for c in captions), captions


def test_overview_says_why_a_writer_kept_nothing() -> None:
    doc = json.loads(VEG.read_text())
    raw_costs = [c["cost"] for c in doc["candidates"] if c["type"] == "raw_span"]
    cheapest = min(raw_costs)
    assert cheapest > 6  # no raw span fits B = 6, and recency_raw takes raw spans only
    at = open_app(package="sample:veg-to-pescatarian", budget="6")
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value
    [row] = table[table["writer / store"] == "recency_raw"].to_dict("records")
    assert row["ratio"] == "0.000" and row["memories"] == 0
    assert row["notes"] == (
        f"No raw_span fits the budget of 6 words (the cheapest costs {cheapest:g} words), and "
        "recency_raw takes raw_span candidates only."
    ), row["notes"]


def test_a_writer_keeping_nothing_says_so_when_none_of_its_type_exists_or_adds_value() -> None:
    from memaudit_core.analysis import score
    from memaudit_core.package import parse_package

    doc = json.loads(VEG.read_text())
    # e2:raw (9 words) is the only raw span within 9 words; with no coverage it adds nothing.
    for c in doc["candidates"]:
        if c["id"] == "e2:raw":
            c["coverage"] = {}
    no_summaries = {
        **doc,
        "candidates": [c for c in doc["candidates"] if c["type"] != "summary"],
    }
    raw = score(parse_package(doc), 9, writer="recency_raw")
    assert raw.selected == () and raw.ratio is not None and raw.ratio == 0
    assert (
        "No raw_span that fits the budget adds value (F of the one that fits is 0 or less), and "
        "recency_raw takes raw_span candidates only."
    ) in raw.notes, raw.notes
    summary = score(parse_package(no_summaries), 6, writer="summary_only")
    assert summary.selected == () and summary.ratio == 0
    assert (
        "The package has no summary candidate, and summary_only takes summary candidates only."
    ) in summary.notes, summary.notes
