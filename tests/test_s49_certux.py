"""Speaker QA s49 on the Certification page and the words around it: the sidebar's budget is
in the audit unless a link or the box leaves it out (and then the page says so), the audit
table leads with its verdict and numbers and says once what every row shares, every view
names the exact engines alike, and a cut store's note says the most recent memories are kept."""

from __future__ import annotations

from types import SimpleNamespace

from app_utils import APP, open_app, open_linked
from streamlit.testing.v1 import AppTest

from memaudit_core.analysis import cut_note
from memaudit_core.generators import generate
from memaudit_core.package import load_package

CERT = "pages/6_Certification.py"
VEG = "sample:veg-to-pescatarian"


def _veg_grid() -> list[float]:
    """The package grid, read from the package file itself."""
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "sample_packages" / "veg-to-pescatarian.json"
    return sorted(load_package(path).budget_grid())


def _plain(text: str) -> str:
    return text.replace("\\", "")


def _budgets_caption(at) -> str:
    (caption,) = [c.value for c in at.caption if c.value.startswith("Budgets (")]
    return caption


def test_sidebar_budget_off_the_grid_is_audited_by_default() -> None:
    """Budget 11 (not on the grid) is audited, and the banner counts it."""
    grid = _veg_grid()
    assert 11.0 not in grid
    expected = sorted([*grid, 11.0])
    at = open_app(CERT, 300, package=VEG, budget="11")
    assert not at.exception and not at.error
    assert at.checkbox(key="cert_add_budget").value is True
    assert _budgets_caption(at).startswith(
        "Budgets (words): " + ", ".join(f"{b:g}" for b in expected) + " ·"
    )
    assert list(at.dataframe[0].value["budget"]) == expected
    assert any(f"All {len(expected)} budgets cross-checked" in _plain(s.value) for s in at.success)
    # On by default, so a link that opens it this way does not name it.
    assert "add_budget" not in at.query_params
    assert not at.warning


def test_a_link_with_add_budget_0_leaves_it_out_and_the_page_says_so() -> None:
    grid = _veg_grid()
    at = open_linked(CERT, VEG, "11", add_budget="0")
    assert at.checkbox(key="cert_add_budget").value is False
    assert list(at.dataframe[0].value["budget"]) == grid
    assert any(f"All {len(grid)} budgets cross-checked" in _plain(s.value) for s in at.success)
    assert [_plain(w.value) for w in at.warning] == [
        'The sidebar\'s budget 11 words is not in this audit: "Add budget 11" is off.'
    ]
    assert at.query_params["add_budget"] in ("0", ["0"])


def test_unticking_the_box_writes_the_link_that_opens_the_same_view() -> None:
    grid = _veg_grid()
    at = open_app(CERT, 300, package=VEG, budget="11")
    at.checkbox(key="cert_add_budget").uncheck().run()
    assert list(at.dataframe[0].value["budget"]) == grid
    link = {k: at.query_params[k] for k in at.query_params}
    link = {k: v[-1] if isinstance(v, list) else v for k, v in link.items()}
    assert link["add_budget"] == "0"
    # The link written opens the view shown.
    assert (link["package"], link["budget"]) == (VEG, "11")
    again = open_linked(CERT, VEG, "11", add_budget=link["add_budget"])
    assert again.checkbox(key="cert_add_budget").value is False
    assert list(again.dataframe[0].value["budget"]) == grid
    # A link of before (add_budget=1) still adds the budget.
    old = open_linked(CERT, VEG, "11", add_budget="1")
    assert list(old.dataframe[0].value["budget"]) == sorted([*grid, 11.0])


def test_audit_table_leads_with_the_verdict_and_says_shared_columns_once() -> None:
    """At 1024 px "outcome" was cut at the right edge behind package id, pool, budget,
    sources, source and family, the last two the same on all 60 rows."""
    at = AppTest.from_file(str(APP), default_timeout=300)
    at.query_params.update(package="sample:memaudit-small-s0", budget="8", present="1")
    at.run()
    at.query_params["seeds"] = "3"
    at.switch_page(CERT).run()
    assert at.session_state["ma_present"] is True
    at.button(key="cert_audit_run").click().run()
    assert not at.exception and not at.error
    (grid,) = [d.value for d in at.dataframe if "outcome" in d.value.columns]
    # Seeds 0 to 3, the three pools, the package grid: one row each.
    n_budgets = len(generate("memaudit-small", seed=0).budget_grid())
    assert len(grid) == 4 * 3 * n_budgets
    columns = list(grid.columns)
    # e2e QA s49: the package id, which tells the seeds' rows apart, right after the verdict.
    assert columns[:6] == [
        "outcome",
        "package id",
        "budget",
        "bnb value",
        "milp value",
        "enum value",
    ]
    assert set(grid["package id"]) == {generate("memaudit-small", seed=s).id for s in range(4)}
    # Shared by every row: said once above the table, not in it.
    for gone in ("family", "sources", "source", "bnb status", "milp status", "enum status"):
        assert gone not in columns, gone
    (once,) = [_plain(c.value) for c in at.caption if c.value.startswith("On every row")]
    assert "family memaudit-small" in once and "sources 1" in once
    assert "branch-and-bound status optimal" in once


def test_overview_and_audit_notes_name_the_engines_as_the_certification_page_does() -> None:
    at = open_app("app.py", 300, package="sample:update_chain", budget="6")
    (banner,) = [s.value for s in at.success if s.value.startswith("Certified optimal")]
    assert "branch-and-bound = " in banner
    for short in ("bnb =", "milp =", "enum ="):
        assert short not in banner, banner

    cert = open_app(CERT, 300, package="sample:update_chain", budget="6")
    cert.button(key="cert_audit_run").click().run()
    (note,) = [t.value for t in cert.text if "ran on" in t.value]
    assert note.startswith("enumeration (enum) ran on"), note
    assert "branch-and-bound (bnb)" in note and "bnb and milp" not in note


def test_a_cut_note_says_the_most_recent_memories_are_kept() -> None:
    note = cut_note([SimpleNamespace(method="w", budget=10.0, store_cut=2)])
    assert note is not None
    assert "keeping the most recent memories that fit" in note
    assert "most recent memories first" not in note
