"""AppTest and unit tests: what presentation mode (present=1) shows (QA s18c D1, D2)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace as NS

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from memaudit_ui import figures, render

REPO = Path(__file__).resolve().parent.parent


def _present(
    page: str, package_key: str, budget: float | None, store: str | None = None
) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=240)
    at.query_params["package"] = package_key
    if budget is not None:
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
    # The engines' display names, as in the chart (speaker QA s46).
    expected = {"branch-and-bound value", "branch-and-bound gap", "HiGHS MILP value"}
    assert expected | {"HiGHS MILP gap", "cross-checked"} <= set(columns), columns


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


# --------------------------------------------------------------------------- charts (D4, D7)

#: Content height a 1280 x 720 screen shows under the app's header in presentation mode.
SCREEN_PX = 645


def _chart_heights(at: AppTest) -> list[int]:
    """Heights of the charts drawn, except those built to scroll (``figures.allow_scroll``):
    rows of bars a projector could not read on one screen (speaker QA s46)."""
    layouts = [json.loads(c.proto.spec)["layout"] for c in at.get("plotly_chart")]
    tall = [layout for layout in layouts if (layout.get("meta") or {}).get(figures.SCROLLS_META)]
    # Marked only when they need it: each is taller than one screen.
    assert all(layout["height"] > figures.PRESENT_MAX_HEIGHT for layout in tall), tall
    return [layout["height"] for layout in layouts if layout not in tall]


@pytest.mark.parametrize(
    ("page", "package_key", "budget", "store"),
    [
        ("app.py", "sample:travel-assistant", 40, None),
        ("pages/1_Budget_sweep.py", "sample:travel-assistant", 40, None),
        ("pages/3_Evidence_explorer.py", "sample:travel-assistant", 40, "store:fact-extractor"),
        ("pages/3_Evidence_explorer.py", "sample:event-graph-500", None, None),
        ("pages/4_External_stores.py", "sample:external-stores-demo", 24, "store:mem0"),
        ("pages/5_Ablations_and_sensitivity.py", "sample:veg-to-pescatarian", 12, None),
    ],
)
def test_every_presentation_chart_fits_one_1280x720_screen(
    page: str, package_key: str, budget: float | None, store: str | None
) -> None:
    """QA s18c D4: 8 of 17 charts were taller than the 645 px a 1280 x 720 projector shows,
    an Evidence heatmap 3,132 px on event-graph-500."""
    at = _present(page, package_key, budget, store)
    heights = _chart_heights(at)
    assert heights, "no chart drawn"
    assert max(heights) <= SCREEN_PX, heights


def _sensitivities():
    writers = ["gvt", "density", "greedy", "fact_only", "summary_only", "recency_raw", "nv"]
    rules = [
        NS(
            rule=name,
            available=True,
            mean_ratio=tuple((w, 0.5) for w in writers),
            compared_budgets=(4.0, 8.0),
        )
        for name in ("as_stored", "words", "bytes_overhead", "tokens_o200k")
    ]
    cost = NS(writers=tuple(writers), rules=rules)
    noise = NS(
        writer_rows=[
            NS(writer="gvt", mean_abs_delta=0.022, max_abs_delta=0.43),
            NS(writer="density", mean_abs_delta=None, max_abs_delta=None),
        ]
    )
    return cost, noise


def test_cost_rule_value_labels_are_projector_size() -> None:
    """QA s18c D7.1: the bar labels were a fixed 11 px beside 19 px ticks."""
    cost, _ = _sensitivities()
    fig = figures.cost_rule_ratio_chart(cost, "t", present=True)
    sizes = {bar.textfont.size for bar in fig.data if bar.type == "bar"}
    assert sizes and min(sizes) >= 18, sizes
    assert fig.layout.height <= SCREEN_PX


def test_the_noise_whisker_label_names_the_mean_and_the_max() -> None:
    """QA s18c D7.6: at the end of a whisker reaching 0.43 the label said only "0.022"."""
    _, noise = _sensitivities()
    fig = figures.noise_delta_bars(noise, "t", present=True)
    labels = next(t.text for t in fig.data if t.type == "scatter" and t.mode == "text")
    assert labels[0].strip() == "mean 0.022 · max 0.430"
    assert labels[1] == "n/a"


def test_external_store_curve_legend_has_one_entry_per_store_and_line_style() -> None:
    """QA s18c D4: on a projector 3 stores x 3 lines took 40% of the figure's height."""
    stores = [("mem0", "Mem0"), ("letta", "Letta"), ("amem", "A-Mem")]
    rows = [
        NS(
            store_id=sid,
            label=label,
            system=None,
            budget=b,
            kept_value=1.0,
            upper_value=2.0,
            union_opt_value=3.0,
            package_opt_value=3.0,
            cost_effect=False,
            certified=True,
        )
        for sid, label in stores
        for b in (6.0, 12.0)
    ]
    # In both modes (speaker QA, session 36: at 1024 px the nine entries of normal mode took
    # the plot's width and cut the title).
    for present in (True, False):
        fig = figures.union_curve_lines(rows, "t", "words", budget=12, present=present)
        shown = [t.name for t in fig.data if t.showlegend is not False]
        assert shown == [
            "Mem0",
            "Letta",
            "A-Mem",
            "kept",
            "upper-pruned",
            "OPT over P+",
            "OPT (package candidates)",
        ]
        assert fig.layout.legend.orientation == "h" and fig.layout.height <= SCREEN_PX


def test_presentation_heatmap_sets_unit_ids_upright_with_the_legend_below() -> None:
    """QA s18c D7.3: at -45 degrees the 20 unit ids of travel-assistant overlapped at 1024 px,
    where the legend and colour bar beside the plot took 220 px of the width. QA s46: below,
    the legend's rows left the rows too little height; now it stands under the colour bar,
    short kind names a line each, in 20 px more width than the colour bar alone."""
    at = _present(
        "pages/3_Evidence_explorer.py", "sample:travel-assistant", 40, "store:fact-extractor"
    )
    heatmap = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]
    assert heatmap["xaxis2"]["tickangle"] == -90
    assert heatmap["legend"]["orientation"] == "v" and heatmap["margin"]["r"] <= 120 + 20
