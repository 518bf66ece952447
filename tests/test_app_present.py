"""AppTest and unit tests: what presentation mode (present=1) shows (QA s18c D1, D2)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

from memaudit_ui import render

REPO = Path(__file__).resolve().parent.parent


def _present(page: str, package_key: str, budget: float, store: str | None = None) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params["package"] = package_key
    at.query_params["budget"] = str(budget)
    at.query_params["present"] = "1"
    if store is not None:
        at.query_params["store"] = store
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_wide_table_drops_a_prose_column_on_a_projector_whatever_its_name() -> None:
    df = pd.DataFrame(
        {
            "budget": [10.0, 20.0],
            "bnb value": [1.0, 2.0],
            "milp value": [1.0, 2.0],
            "bnb status": ["optimal", "optimal"],
            "covered by": ["e01:fact, e02:raw, e03:update, e04:fact", ""],
            "verdict": [
                "cross-checked: bnb = milp (proven optimal)",
                "certified by bnb alone (milp stopped)",
            ],
        }
    )
    assert list(render._fit_projector(df).columns) == [
        "budget",
        "bnb value",
        "milp value",
        "bnb status",
        "covered by",  # a list of ids is not prose
    ]


def test_certification_table_on_a_projector_keeps_to_the_columns_that_fit() -> None:
    at = _present("pages/6_Certification.py", "sample:travel-assistant", 40)
    columns = list(at.table[0].value.columns)
    assert "verdict" not in columns
    assert not [c for c in columns if c.endswith((" bound", " nodes"))], columns
    assert {"bnb value", "bnb gap", "milp value", "milp gap", "cross-checked"} <= set(columns)


def test_compare_tables_on_a_projector_leave_out_the_redundant_columns() -> None:
    at = _present("pages/2_Compare.py", "sample:travel-assistant", 40, store="store:fact-extractor")
    headers = [list(t.value.columns) for t in at.table]
    units = next(h for h in headers if "covered in store by" in h)
    experiences = next(h for h in headers if "store wrote" in h)
    assert "store coverage" not in units and "OPT coverage" not in units, units
    assert "time" not in experiences, experiences


def test_evidence_focus_tables_are_stacked_on_a_projector() -> None:
    at = _present(
        "pages/3_Evidence_explorer.py", "sample:travel-assistant", 40, "store:fact-extractor"
    )
    # Side by side they sat in two columns; now no table is inside a column.
    assert len(at.table) == 3  # units, candidates covering the focus unit, queries requiring it
    assert sum(len(column.table) for column in at.columns) == 0
