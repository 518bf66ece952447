"""QA s43 (annotator QA of the Compare page at 1280x800 in Chromium).

1. The unit table's "covered in OPT by" and the side-by-side "OPT marginal value" were off a
   1280 px screen: the columns saying what the store missed, what that cost and what the
   optimum kept instead now come first, at widths that fit the main area.
2. A memory the store dropped for the budget read match "only OPT" beside "e2:raw (dropped:
   over budget)" whenever the optimum wrote something for that experience, while the caption
   named a match value used only when the optimum wrote nothing.
3. "Why this score" said "... e09:interval and 1 more": naming the fifth costs no more.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
from app_utils import open_app, upload_file

from memaudit_core import load_package, parse_package
from memaudit_core.explain import _list, compare_view
from memaudit_core.writers import writer_names

REPO = Path(__file__).resolve().parent.parent
TRAVEL = REPO / "sample_packages" / "travel-assistant.json"
DROPPED = "store's dropped (over budget)"

# ------------------------------------------------------------------- 1. columns that fit

#: The main area of a 1280 px window with the sidebar open, inside the grid's border
#: (Chromium: the grid box spans x = 380..1200).
GRID_INNER_PX = 818
#: Widths Chromium gave the number columns, sized by their headers ("value lost"; "store cost",
#: "OPT cost", "store marginal value", "OPT marginal value"), measured on this page.
VALUE_LOST_PX = 72
EXP_NUMBERS_PX = 73 + 68 + 135 + 130


def _widths(at, first_column: str) -> tuple[list[str], dict[str, int]]:
    (grid,) = [d for d in at.dataframe if list(d.value.columns)[0] == first_column]
    config = json.loads(grid.proto.columns)
    return list(grid.value.columns), {c: v["width"] for c, v in config.items() if "width" in v}


def test_what_was_missed_and_who_kept_it_instead_fit_a_1280_px_screen() -> None:
    at = open_app(
        "pages/2_Compare.py",
        package="sample:travel-assistant",
        budget="40",
        store="store:raw-logger",
    )
    assert not at.exception, [e.value for e in at.exception]

    columns, widths = _widths(at, "unit")
    # QA s49: who covers the unit before the text, which pushed it off a 1024 px screen.
    lead = ["unit", "value lost", "covered in OPT by", "covered in store by", "text"]
    assert columns[:5] == lead, columns
    # Every leading text column has a set width (left to size itself, a long id list pushed
    # the last one off screen), and with "value lost" they fit.
    text_lead = [c for c in lead if c != "value lost"]
    assert set(text_lead) <= set(widths), widths
    assert sum(widths[c] for c in text_lead) + VALUE_LOST_PX <= GRID_INNER_PX, widths

    columns, widths = _widths(at, "experience")
    lead = ["experience", "match", "store wrote", "OPT wrote"]
    numbers = ["store cost", "OPT cost", "store marginal value", "OPT marginal value"]
    assert columns[:8] == lead + numbers, columns
    assert set(lead) <= set(widths), widths
    assert sum(widths[c] for c in lead) + EXP_NUMBERS_PX <= GRID_INNER_PX, widths

    # The CSVs keep every column.
    cv = compare_view(load_package(TRAVEL), 40, store_id="raw-logger")
    assert set(cv.unit_table()[0]) == {
        "unit", "text", "value lost", "covered in store by", "covered in OPT by", "kind",
        "weight", "store value", "OPT value", "store coverage", "OPT coverage", "queries",
    }  # fmt: skip
    assert set(cv.experience_table()[0]) == {
        "experience", "time", "match", "store wrote", "OPT wrote", "store type", "OPT type",
        "store cost", "OPT cost", "store marginal value", "OPT marginal value",
        "experience text", "store memory text", "OPT memory text",
    }  # fmt: skip


# ----------------------------------------------------------- 2. a dropped memory's match

# cap1, weights a 2, b 1, c 1, d 0.5; one store writing e1:big, e2:raw, e3:raw, e4:raw (cost
# 27) at budget 7. Recency (newest first, each kept if it still fits): e4:raw (9) no, e3:raw (8)
# no, e2:raw (5) kept, e1:big (5, 10 in all) no. The optimum at 7 (by hand over the subsets that
# fit, one memory per experience): e1:big + e4:fact = 2.5, the only store worth that much
# (e2:raw + e4:fact 1.5, e1:big alone 2; e3:raw alone costs more than 7).
DROPS = {
    "memaudit": 1,
    "id": "s43-drops",
    "objective": {"saturation": "cap1"},
    "budget": 7,
    "experiences": [{"id": f"e{k}", "time": k} for k in range(1, 5)],
    "units": [
        {"id": "a", "kind": "fact", "weight": 2},
        {"id": "b", "kind": "fact", "weight": 1},
        {"id": "c", "kind": "fact", "weight": 1},
        {"id": "d", "kind": "fact", "weight": 0.5},
    ],
    "candidates": [
        {"id": "e1:big", "type": "summary", "experience": "e1", "cost": 5, "coverage": {"a": 1}},
        {"id": "e2:raw", "type": "raw_span", "experience": "e2", "cost": 5, "coverage": {"b": 1}},
        {"id": "e3:raw", "type": "raw_span", "experience": "e3", "cost": 8, "coverage": {"c": 1}},
        {"id": "e4:raw", "type": "raw_span", "experience": "e4", "cost": 9, "coverage": {"d": 1}},
        {
            "id": "e4:fact",
            "type": "atomic_fact",
            "experience": "e4",
            "cost": 2,
            "coverage": {"d": 1},
        },
    ],
    "stores": [{"id": "s", "label": "Raw", "select": ["e1:big", "e2:raw", "e3:raw", "e4:raw"]}],
}
EXPECTED_MATCH = {
    "e1": f"{DROPPED}; OPT keeps it",
    "e2": "only store",
    "e3": DROPPED,
    "e4": f"{DROPPED}; OPT differs",
}


def test_a_dropped_memory_never_reads_only_opt() -> None:
    cv = compare_view(parse_package(DROPS), 7, store_id="s")
    df = pd.DataFrame(cv.experience_table()).set_index("experience")
    assert df["match"].to_dict() == EXPECTED_MATCH
    assert df.loc["e4", "store wrote"] == "e4:raw (dropped: over budget)"
    assert df.loc["e4", "OPT wrote"] == "e4:fact"


def test_the_compare_caption_names_the_match_of_every_dropped_memory() -> None:
    at = open_app()
    upload_file(at, "s43-drops.json", json.dumps(DROPS).encode())
    at.selectbox(key="w_store").select("store:s").run()
    at.switch_page("pages/2_Compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    (df,) = [d.value for d in at.dataframe if "match" in d.value.columns]
    assert dict(zip(df["experience"], df["match"], strict=True)) == EXPECTED_MATCH
    captions = " ".join(c.value for c in at.caption)
    assert (
        f'A memory the store dropped for being over budget (a match starting "{DROPPED}", then '
        '"OPT keeps it" or "OPT differs" when the optimum wrote a memory for that experience)'
        in captions
    ), captions
    # What the caption says holds for every row the store dropped a memory in.
    dropped_rows = df[df["store wrote"].str.endswith("(dropped: over budget)")]
    assert len(dropped_rows) == 3
    assert dropped_rows["match"].str.startswith(DROPPED).all(), dropped_rows


# ----------------------------------------------------------------- 3. never "and 1 more"


def test_a_list_names_everything_when_only_one_would_be_left_out() -> None:
    assert _list(["a", "b", "c", "d", "e"], 4) == "a, b, c, d, e"
    assert _list(["a", "b", "c", "d", "e", "f"], 4) == "a, b, c, d and 2 more"
    assert _list(["a", "b", "c"], 4) == "a, b, c"


def test_why_this_score_names_all_five_memories_the_optimum_did_not_keep() -> None:
    """travel-assistant, density at 60 words (the QA's link)."""
    pkg = load_package(TRAVEL)
    cv = compare_view(pkg, 60, writer="density")
    ev = cv.evaluation
    only_store = set(ev.selected) - set(ev.opt_selected)
    ids = [c.id for c in pkg.candidates if c.id in only_store]  # package order
    assert len(ids) == 5, ids
    (para,) = [p for p in cv.explanation if p.startswith("Instead, the store spent")]
    assert f"the optimum did not keep ({', '.join(ids)}):" in para, para


# Five fact units, each covered by its own cheap fact; the store keeps only a memory of no
# evidence value, so the optimum at 5 covers all five missed units with five memories.
FIVE = {
    "memaudit": 1,
    "id": "s43-five",
    "objective": {"saturation": "cap1"},
    "budget": 5,
    "experiences": [{"id": f"e{k}", "time": k} for k in range(1, 7)],
    "units": [{"id": f"u{k}", "kind": "fact", "weight": 1} for k in range(1, 6)],
    "candidates": [
        {
            "id": f"e{k}:fact",
            "type": "atomic_fact",
            "experience": f"e{k}",
            "cost": 1,
            "coverage": {f"u{k}": 1},
        }
        for k in range(1, 6)
    ]
    + [{"id": "e6:note", "type": "summary", "experience": "e6", "cost": 1, "coverage": {}}],
    "stores": [{"id": "s", "label": "Note", "select": ["e6:note"]}],
}


def test_the_optimum_covering_five_units_names_all_five_memories() -> None:
    cv = compare_view(parse_package(FIVE), 5, store_id="s")
    text = " ".join(cv.explanation)
    assert "and 1 more" not in text, text
    assert "covered them with " in text, text
    for k in range(1, 6):
        assert f"e{k}:fact (" in text, text


def test_no_explanation_of_the_travel_sample_says_and_1_more() -> None:
    pkg = load_package(TRAVEL)
    seen = []
    for budget in pkg.budget_grid():
        views = [compare_view(pkg, budget, writer=w) for w in writer_names()]
        views += [compare_view(pkg, budget, store_id=s.id) for s in pkg.stores]
        for cv in views:
            seen += [
                (budget, cv.label, m) for p in cv.explanation for m in re.findall(r"and 1 more", p)
            ]
    assert seen == []
