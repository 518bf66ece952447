"""QA s41 (Chromium, second round): three display defects.

1. Presentation mode's store timeline read "Fact<br>extract…hosen)" for the chosen store: a
   third wrapped line was joined to the second and cut in the middle, through " (chosen)".
2. The Certification page's run-time bound counted every engine at every budget ("at most
   5 × 3 × 30 s", "up to 450 s") on event-graph-500, where enumeration runs at no budget.
3. A number column with a missing cell became text: on a projector the enum gap read "0"
   beside "0.00%", and the interactive grid marked every "n/a" as text in a number column.

Each test fails on the code before the fix (checked against a worktree of d0b3468).
"""

from __future__ import annotations

import types
from typing import Any

import pandas as pd
import streamlit as st
from app_utils import open_linked

from memaudit_ui import render
from memaudit_ui.figures import TIMELINE_ROW_CHARS, _wrap_row_label

# ------------------------------------------------------------------ 1. row labels

#: By hand at 12 characters (presentation mode): words wrap at 12, a line may run to 14
#: rather than cut a word, and a name too long for one line of 14 beside its tag is cut in the
#: middle to 14 with the tag " (chosen)" whole on the second line.
WRAPPED_AT_12 = {
    # "Fact extractor" is 14: on one line, the tag below (was "Fact<br>extract…hosen)").
    "Fact extractor (chosen)": "Fact extractor<br>(chosen)",
    # "Fact-only writer" is 16: cut to 7 + "…" + 6 (was "Fact-only<br>writer …hosen)").
    "Fact-only writer (chosen)": "Fact-on…writer<br>(chosen)",
    # One 15-character word: cut to 14, the tag whole below.
    "no_validity_gvt (chosen)": "no_vali…ty_gvt<br>(chosen)",
    "Validity-aware summariser": "Validity-aware<br>summariser",
    "experiences": "experiences",
    "OPT (chosen)": "OPT (chosen)",
}

#: By hand at 14 characters (normal mode): words wrap at 14, a line runs to 16.
WRAPPED_AT_14 = {
    "Fact extractor (chosen)": "Fact extractor<br>(chosen)",
    "Fact-only writer (chosen)": "Fact-only<br>writer (chosen)",
    "no_validity_gvt (chosen)": "no_validity_gvt<br>(chosen)",
    # "Validity-aware summariser" is 25: cut to 8 + "…" + 7 (was
    # "Validity-aware<br>summari…hosen)").
    "Validity-aware summariser (chosen)": "Validity…mariser<br>(chosen)",
    "Validity-aware summariser": "Validity-aware<br>summariser",
}


def test_presentation_row_labels_wrap_at_words_and_keep_the_chosen_tag() -> None:
    assert TIMELINE_ROW_CHARS[True] == 12
    got = {text: _wrap_row_label(text, 12) for text in WRAPPED_AT_12}
    assert got == WRAPPED_AT_12


def test_normal_row_labels_wrap_at_words_and_keep_the_chosen_tag() -> None:
    assert TIMELINE_ROW_CHARS[False] == 14
    got = {text: _wrap_row_label(text, 14) for text in WRAPPED_AT_14}
    assert got == WRAPPED_AT_14


# ------------------------------------------------------------------ 3. tables

#: The Certification table's shape at budgets 13 and 25 of event-graph-50: enumeration runs
#: at 13 only, so its columns have a missing cell at 25.
CERT_ROWS = pd.DataFrame(
    {
        "budget": [13.0, 25.0],
        "bnb gap": [0.0, 0.0],
        "enum gap": [0.0, None],
        "enum value": [4.25, None],
    }
)
CERT_CONFIG = {
    "budget": st.column_config.NumberColumn("budget (words)", format="%g"),
    "bnb gap": st.column_config.NumberColumn(format="percent"),
    "enum gap": st.column_config.NumberColumn(format="percent"),
    "enum value": st.column_config.NumberColumn(format="%.6g"),
}


def _shown(monkeypatch, present: bool) -> dict[str, Any]:
    """What :func:`render.table` hands Streamlit for :data:`CERT_ROWS`: the static table's
    Styler (``table``) or the grid's frame and options (``dataframe``)."""
    seen: dict[str, Any] = {}

    def record(name: str):
        def call(data, *args, **kwargs):
            seen[name] = data
            seen[f"{name} kwargs"] = kwargs

        return call

    fake = types.SimpleNamespace(
        session_state={"ma_present": present},
        table=record("table"),
        dataframe=record("dataframe"),
        download_button=lambda *args, **kwargs: False,
    )
    monkeypatch.setattr(render, "st", fake)
    render.table(CERT_ROWS, "t", "t", column_config=CERT_CONFIG)
    return seen


def test_a_projector_table_formats_a_gap_column_with_a_missing_cell_as_percent(
    monkeypatch,
) -> None:
    styler = _shown(monkeypatch, present=True)["table"]
    text = styler.to_string(delimiter="|")
    assert text.splitlines() == [
        "budget (words)|bnb gap|enum gap|enum value",
        "13|0.00%|0.00%|4.25",
        "25|0.00%|n/a|n/a",
    ]


def test_the_grid_keeps_number_columns_numeric_and_shows_missing_as_na(monkeypatch) -> None:
    seen = _shown(monkeypatch, present=False)
    df = seen["dataframe"]
    assert [df[col].dtype.kind for col in df.columns] == ["f", "f", "f", "f"]
    assert df["enum gap"].isna().tolist() == [False, True]
    assert seen["dataframe kwargs"]["placeholder"] == "n/a"


# ------------------------------------------------------------------ 2. run-time bound


def test_the_run_time_bound_counts_only_the_engine_runs_that_happen() -> None:
    """event-graph-500 (1,595 candidates: no quick look) at its 5 budgets: enumeration runs
    at none (more than 100,000 stores fit at each), so 5 × 2 = 10 runs of 30 s: 300 s."""
    at = open_linked("pages/6_Certification.py", "sample:event-graph-500")
    subtitle = " ".join(m.value.replace("\\", "") for m in at.markdown)  # markdown-escaped
    assert "enumeration n/a (more than 100,000 stores fit at every budget)" in subtitle
    captions = [c.value for c in at.caption]
    assert any(c.endswith(" · at most 10 engine runs × 30 s") for c in captions), captions
    infos = [i.value for i in at.info]
    assert any("the audit may take up to 300 s, so it starts on request" in i for i in infos)


def test_the_run_time_bound_counts_enumeration_only_where_it_runs() -> None:
    """event-graph-50 at its 5 budgets: enumeration runs at budget 13 only, so 5 × 2 + 1 = 11
    runs of 30 s (was "at most 5 × 3 × 30 s")."""
    at = open_linked("pages/6_Certification.py", "sample:event-graph-50", None, present="1")
    subtitle = " ".join(m.value.replace("\\", "") for m in at.markdown)  # markdown-escaped
    assert "enumeration at budget 13;" in subtitle
    captions = [c.value for c in at.caption]
    assert any(c.endswith(" · at most 11 engine runs × 30 s") for c in captions), captions
