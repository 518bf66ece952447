"""App defects found by the thirty-fifth session's fresh-eyes browser audit (AppTest)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parent.parent


def _run(page: str, package_key: str, budget: float, store: str | None = None) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params["package"] = package_key
    at.query_params["budget"] = str(budget)
    if store is not None:
        at.query_params["store"] = store
    at.run()
    if page != "app.py":
        at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def test_overview_scores_and_outlines_a_chosen_blind_writer() -> None:
    """The sidebar offers the bundled blind writers; chosen, one had no bar, no row and no
    "Outlined" caption on the Overview, while Compare showed it."""
    at = _run("app.py", "sample:update_chain", 6, store="writer:estimated_gvt")
    table = at.dataframe[0].value
    rows = table[table["writer / store"].str.contains("estimated_gvt")]
    assert len(rows) == 1
    assert rows["kind"].iloc[0] == "plugin"
    assert any(c.value.startswith("Outlined: estimated_gvt") for c in at.caption)
    # The same F as the Compare page shows for that writer at that budget.
    from memaudit_core.analysis import score
    from memaudit_core.package import load_package

    pkg = load_package(REPO / "sample_packages" / "update_chain.json")
    assert rows["F"].iloc[0] == round(score(pkg, 6, writer="estimated_gvt").value, 6)


def test_overview_with_a_reference_writer_lists_no_plugin_row() -> None:
    at = _run("app.py", "sample:update_chain", 6, store="writer:density")
    assert "plugin" not in set(at.dataframe[0].value["kind"])


def test_a_failed_upload_is_said_in_the_main_area_too() -> None:
    """The error sat at the bottom of the sidebar, below the fold, while the page stayed."""
    at = _run("app.py", "sample:update_chain", 6)
    at.file_uploader(key="w_upload").upload("broken.json", b"{not json", "application/json")
    at.run()
    main_errors = [e.value.replace("\\", "") for e in at.main.error]
    assert any(
        "broken.json was not loaded" in e and "listed in the sidebar" in e for e in main_errors
    )
    assert any("broken.json was not loaded" in e.value.replace("\\", "") for e in at.sidebar.error)
    assert at.session_state["ma_package"] == "sample:update_chain"


def test_budget_sweep_open_compare_picker_starts_at_the_sidebar_budget() -> None:
    """It started at the grid's first budget (3), not the sidebar's 6."""
    at = _run("pages/1_Budget_sweep.py", "sample:update_chain", 6)
    assert at.selectbox(key="sweep_open_budget").value == 6


def test_certification_offers_the_sidebar_budget_only_when_the_grid_lacks_it() -> None:
    from memaudit_core.package import load_package

    grid = load_package(REPO / "sample_packages" / "update_chain.json").budget_grid()
    inside = _run("pages/6_Certification.py", "sample:update_chain", grid[1])
    assert inside.checkbox(key="cert_add_budget").disabled
    off_grid = max(grid) + 0.5
    outside = _run("pages/6_Certification.py", "sample:update_chain", off_grid)
    assert not outside.checkbox(key="cert_add_budget").disabled


def test_union_chart_tells_two_exports_of_one_system_apart() -> None:
    """Two loaded Mem0 exports were both "Mem0 export" in the same red, told apart only by
    marker shape."""
    from memaudit_core.union import UnionCurveRow
    from memaudit_ui.figures import union_curve_lines

    def row(store_id: str, budget: float) -> UnionCurveRow:
        return UnionCurveRow(
            store_id, "Mem0 export", "mem0", budget, 1.0, 2.0, 3.0, 3.0, 0.33, 0.66, 0.5,
            False, True,
        )  # fmt: skip

    fig = union_curve_lines(
        [row("mem0-2", 6), row("mem0-2", 12), row("mem0-3", 6), row("mem0-3", 12)],
        "t",
        "words",
        budget=6,
    )
    # One legend entry per store (speaker QA, session 36: in both modes), named by its id.
    kept = {t.name: t.line.color for t in fig.data if t.name and t.name.startswith("Mem0")}
    assert set(kept) == {"Mem0 export (mem0-2)", "Mem0 export (mem0-3)"}
    assert len(set(kept.values())) == 2
    assert [a.text for a in fig.layout.annotations if a.text.startswith("budget")] == [
        "budget 6 words"
    ]
