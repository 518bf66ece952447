"""QA s42: the Compare page's side-by-side table and "Why this score", the Evidence explorer's
download names and its kind filter.

1. Compare's "Side by side, per experience" table held its times, costs and marginal values
   as text: a header click sorted them alphabetically (0, 1, 10, 2, ...) and ``:g`` read the
   time 1714086400 as 1.71409e+09, in the CSV too.
2. The Evidence explorer's CSVs were named without the store and the budget their contents
   depend on (external-stores-demo-units.csv).
3. "Why this score" called a missed preference unit an "other"-kind unit.
4. Removing the focus unit's kind from the kind filter moved the focus to another unit without
   a word.

Expected values are worked out by hand from the packages (the sample's units and stores, or
packages built here). Each test failed on the code before the fix.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import streamlit as st
from app_utils import APP, upload_file
from streamlit.testing.v1 import AppTest

from memaudit_core.explain import compare_view
from memaudit_core.package import load_package, parse_package
from memaudit_ui import render

ROOT = Path(__file__).resolve().parent.parent
VEG = ROOT / "sample_packages" / "veg-to-pescatarian.json"
COMPARE = "pages/2_Compare.py"
EVIDENCE = "pages/3_Evidence_explorer.py"
EPOCH = 1714000000
DAY = 86400


def _offered(monkeypatch) -> dict[str, dict[str, Any]]:
    """Every ``st.download_button`` call of the runs to come, by widget key (the tables' CSV
    buttons; the charts' PNG / SVG buttons are drawn through a container)."""
    offered: dict[str, dict[str, Any]] = {}

    def fake_download_button(label, data, **kwargs):
        offered[kwargs["key"]] = {"data": data, **kwargs}
        return False

    monkeypatch.setattr(st, "download_button", fake_download_button)
    return offered


def _csv(offer: dict[str, Any]) -> pd.DataFrame:
    data = offer["data"]
    return pd.read_csv(io.BytesIO(data() if callable(data) else data))


def _linked(page: str, first: dict[str, str], then: dict[str, str] | None = None) -> AppTest:
    """``page`` opened from a link: the app runs with ``first`` (shared choices), then the
    page's own parameters ``then`` join the link and the page opens."""
    at = AppTest.from_file(str(APP), default_timeout=120)
    for name, value in first.items():
        at.query_params[name] = value
    at.run()
    for name, value in (then or {}).items():
        at.query_params[name] = value
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _side_by_side(at: AppTest) -> pd.DataFrame:
    (df,) = [d.value for d in at.dataframe if "match" in d.value.columns]
    return df


# --------------------------------------------------------------------- 1. numbers as numbers


def test_side_by_side_times_costs_and_marginal_values_are_numbers() -> None:
    """event-graph-50 has 50 experiences at times 0..49: as text, "10" sorted before "2"."""
    doc = json.loads((ROOT / "sample_packages" / "event-graph-50.json").read_text())
    at = _linked(
        COMPARE,
        {"package": "sample:event-graph-50", "budget": "63", "store": "writer:density"},
    )
    df = _side_by_side(at)
    for col in ("time", "store cost", "OPT cost", "store marginal value", "OPT marginal value"):
        assert pd.api.types.is_float_dtype(df[col]), (col, df[col].dtype)
    assert list(df["time"]) == [float(e["time"]) for e in doc["experiences"]]
    # Nothing written on a side: a missing number (the grid shows n/a), not an empty string.
    neither = df[df["match"] == "neither wrote"]
    assert len(neither) > 0
    assert neither["store cost"].isna().all() and neither["OPT marginal value"].isna().all()


def _epoch_doc() -> dict[str, Any]:
    """veg-to-pescatarian with its experiences at Unix times one day apart."""
    doc = json.loads(VEG.read_text())
    doc["id"] = "veg-epoch-s42"
    for i, exp in enumerate(doc["experiences"]):
        exp["time"] = EPOCH + i * DAY
    return doc


def test_side_by_side_keeps_every_digit_in_grid_and_csv(monkeypatch) -> None:
    """At Unix times, ``:g`` read 1714086400 as 1.71409e+09, and the CSV held the marginal
    values as "0.5000" text. Fact-only writer at budget 12 keeps e1:fact (marginal 0.5) and
    e4:fact (2); the optimum keeps e2:fact (1) and e4:update (5.4); costs 4 / 5 and 4 / 6."""
    offered = _offered(monkeypatch)
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    upload_file(at, "veg-epoch-s42.json", json.dumps(_epoch_doc()).encode())
    at.selectbox(key="w_store").select("store:fact-only").run()
    at.switch_page(COMPARE).run()
    assert not at.exception, [e.value for e in at.exception]
    times = [float(EPOCH + i * DAY) for i in range(5)]
    assert list(_side_by_side(at)["time"]) == times
    csv = _csv(offered["compare_experiences_csv"])
    assert list(csv["time"]) == times
    assert list(csv["experience"]) == ["e1", "e2", "e3", "e4", "e5"]
    assert csv["store marginal value"].tolist()[0] == 0.5
    assert csv["store marginal value"].tolist()[3] == 2.0
    assert csv["OPT marginal value"].tolist()[1] == 1.0
    assert csv["OPT marginal value"].tolist()[3] == pytest.approx(5.4, abs=1e-12)
    assert pd.api.types.is_float_dtype(csv["store marginal value"])
    assert math.isnan(csv["store cost"].tolist()[1])
    assert csv["OPT cost"].tolist()[3] == 6.0


def test_projector_table_shows_percent_g_with_every_digit() -> None:
    """Presentation mode draws a static table with Python's "%g" (6 digits); the grid's
    sprintf.js "%g" without a precision shows every digit."""
    fmt = render._number_formatter("%g")
    assert fmt(1714086400.0) == "1714086400"
    assert fmt(2.5) == "2.5"
    assert fmt(float("nan")) == "n/a"


# --------------------------------------------------------------------- 2. download names


def test_evidence_csv_names_carry_store_and_budget_like_compare(monkeypatch) -> None:
    offered = _offered(monkeypatch)
    first = {"package": "sample:veg-to-pescatarian", "budget": "12", "store": "store:fact-only"}
    _linked(EVIDENCE, first, {"unit": "u:meal:invalid"})
    stem = "veg-to-pescatarian-Fact-only-writer"
    assert offered["evidence_units_csv"]["file_name"] == f"{stem}-units-B12.csv"
    assert (
        offered["evidence_candidates_csv"]["file_name"]
        == f"{stem}-u-meal-invalid-candidates-B12.csv"
    )
    assert offered["evidence_queries_csv"]["file_name"] == f"{stem}-u-meal-invalid-queries-B12.csv"
    _linked(COMPARE, first)
    # Compare's name for the same units' CSV (QA's download: unchanged by the fix).
    assert offered["compare_units_csv"]["file_name"] == f"{stem}-units-B12.csv"


# --------------------------------------------------------------------- 3. the real kind


def test_why_this_score_names_the_missed_units_own_kind() -> None:
    """Fact-only writer at budget 12 misses u:seat, a preference unit (weight 1)."""
    cv = compare_view(load_package(VEG), 12, store_id="fact-only")
    (para,) = [p for p in cv.explanation if "u:seat" in p and p.startswith("The store missed")]
    assert para.startswith(
        'The store missed 1 preference unit (in the "other" bucket), losing 1 of the 1 that OPT '
        'gets from "other"-bucket units: u:seat.'
    ), para
    assert '"other"-kind' not in " ".join(cv.explanation)


def test_why_this_score_counts_each_kind_in_the_other_bucket() -> None:
    """Three units of two kinds outside the named buckets, each worth 1 and covered by a
    candidate of cost 1; the store keeps only c4 (a current-truth unit worth 0.1). At budget 4
    the optimum keeps all four: the store misses f1, p1 and f2."""
    doc = {
        "memaudit": 1,
        "id": "other-mix",
        "experiences": [{"id": f"e{i}", "time": i} for i in (1, 2, 3, 4)],
        "units": [
            {"id": "f1", "kind": "fact", "weight": 1},
            {"id": "p1", "kind": "preference", "weight": 1},
            {"id": "f2", "kind": "fact", "weight": 1},
            {"id": "t1", "kind": "current_truth", "weight": 0.1},
        ],
        "candidates": [
            {
                "id": f"c{i}",
                "experience": f"e{i}",
                "type": "atomic_fact",
                "cost": 1,
                "coverage": {unit: 1},
            }
            for i, unit in ((1, "f1"), (2, "p1"), (3, "f2"), (4, "t1"))
        ],  # fmt: skip
        "stores": [{"id": "w", "select": ["c4"]}],
    }
    cv = compare_view(parse_package(doc), 4, store_id="w")
    (para,) = [p for p in cv.explanation if p.startswith("The store missed")]
    assert para.startswith(
        'The store missed 3 units in the "other" bucket (2 fact, 1 preference), losing 3 of the '
        '3 that OPT gets from "other"-bucket units: f1, p1, f2.'
    ), para


# --------------------------------------------------------------------- 4. the focus unit moved


def test_removing_the_focus_units_kind_says_which_unit_is_now_in_focus() -> None:
    """u:meal:invalid is the only invalidation unit; without it the store's largest loss is
    u:seat's (1: the optimum covers it, the store does not)."""
    at = _linked(
        EVIDENCE,
        {"package": "sample:veg-to-pescatarian", "budget": "12", "store": "store:fact-only"},
        {"unit": "u:meal:invalid"},
    )
    assert at.selectbox(key="ev_focus").value == "u:meal:invalid"
    assert not at.info
    at.multiselect(key="ev_kinds").unselect("invalidation").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="ev_focus").value == "u:seat"
    # Read as shown: without md_escape's backslashes and word joiners.
    shown = [i.value.replace("\\", "").replace("\u2060", "") for i in at.info]
    infos = [text for text in shown if "u:meal:invalid" in text]
    assert len(infos) == 1, shown
    assert "invalidation" in infos[0] and "u:seat" in infos[0], infos[0]
    assert "kind filter" in infos[0], infos[0]
    assert "unit" not in at.query_params  # the fallback focus is not a pick
