"""AppTest: every page on every sample package renders without an exception."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parent.parent
SAMPLES = sorted(p.stem for p in (REPO / "sample_packages").glob("*.json"))
PAGES = ["app.py"] + sorted(str(p.relative_to(REPO)) for p in (REPO / "pages").glob("*.py"))
# The 500-experience sample is exercised by the benchmarks and one dedicated test.
FAST_SAMPLES = [s for s in SAMPLES if "500" not in s]


def _run(page: str, package_key: str, budget: float | None = None) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params["package"] = package_key
    if budget is not None:
        at.query_params["budget"] = str(budget)
    at.run()
    if page != "app.py":
        at.switch_page(page).run()
    return at


def _no_errors(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


@pytest.mark.parametrize("sample", FAST_SAMPLES)
@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_on_every_sample(page: str, sample: str) -> None:
    at = _run(page, f"sample:{sample}")
    _no_errors(at)
    assert at.session_state["ma_package"] == f"sample:{sample}"


def test_overview_shows_certified_opt_and_every_writer() -> None:
    from memaudit_core.writers import WRITERS

    at = _run("app.py", "sample:update_chain", budget=6)
    _no_errors(at)
    labels = [m.label for m in at.metric]
    assert "OPT" in labels
    opt_metric = next(m for m in at.metric if m.label == "OPT")
    # 7.735 is the paper's published OPT for update_chain at budget 6 (PAPER_FAMILIES.md).
    assert opt_metric.value == "7.7350"
    table = at.dataframe[0].value
    for name in WRITERS:
        assert any(name in str(label) for label in table["writer / store"]), name
    gvt_row = table[
        table["writer / store"].str.contains("gvt")
        & ~table["writer / store"].str.contains("no_validity")
    ]
    assert gvt_row["ratio"].iloc[0] == "1.000"
    assert any("Certified optimal" in s.value for s in at.success)


def test_ratio_chart_names_an_uncertified_denominator() -> None:
    """A limited run's incumbent is never drawn or labelled as OPT."""
    from memaudit_ui.figures import ratio_bars

    certified = ratio_bars(["gvt"], [0.9], ["writer"], "t")
    limited = ratio_bars(["gvt"], [0.9], ["writer"], "t", denominator="incumbent")
    assert certified.layout.xaxis.title.text == "ratio F / OPT (1 = optimal)"
    assert limited.layout.xaxis.title.text == "ratio F / incumbent (not a proven optimum)"
    assert [a.text for a in limited.layout.annotations] == ["incumbent = 1"]


def test_ratio_chart_outlines_the_chosen_store_and_labels_every_bar() -> None:
    from memaudit_ui.figures import ratio_bars

    fig = ratio_bars(["gvt", "mine", "empty"], [0.9, 0.1, None], ["writer"] * 3, "t", highlight=1)
    # The outline is a shape over that bar: a bar border also outlined the legend swatch.
    [outline] = [s for s in fig.layout.shapes if s.type == "rect"]
    assert (outline.y0, outline.x1) == ("mine", 0.1)
    assert fig.data[0].marker.line.width in (None, 0)
    # Short bars get their label outside ("auto" hid the labels of 0 and n/a).
    assert list(fig.data[0].text) == ["0.900", "0.100", "n/a"]
    assert list(fig.data[0].textposition) == ["inside", "outside", "outside"]


def test_overview_explains_the_names_it_uses() -> None:
    from memaudit_core.writers import WRITERS

    at = _run("app.py", "sample:update_chain")
    _no_errors(at)
    [glossary] = [e for e in at.expander if e.label.startswith("What the names mean")]
    text = " ".join(m.value for m in glossary.markdown)
    for name in [*WRITERS, "enum / bnb / milp", "P\\+", "cap1"]:
        assert f"**{name}**" in text, name


def test_budget_slider_changes_opt() -> None:
    at = _run("app.py", "sample:update_chain", budget=6)
    before = next(m.value for m in at.metric if m.label == "OPT")
    at.slider(key="w_budget").set_value(13.0).run()
    _no_errors(at)
    after = next(m.value for m in at.metric if m.label == "OPT")
    assert before == "7.7350" and after == "8.0250"
    assert at.session_state["ma_budget"] == 13.0


def test_zero_budget_shows_na_not_zero_or_one() -> None:
    at = _run("app.py", "sample:update_chain", budget=0)
    _no_errors(at)
    table = at.dataframe[0].value
    assert set(table["ratio"]) == {"n/a"}


def test_bad_upload_keeps_previous_package() -> None:
    at = _run("app.py", "sample:update_chain")
    at.file_uploader(key="w_upload").upload(
        "broken.json", b'{"memaudit": 1, "id": "x", ', "application/json"
    ).run()
    assert not at.exception
    assert at.session_state["ma_package"] == "sample:update_chain"
    assert any("broken.json" in e.value for e in at.error)


def test_good_upload_becomes_current_package() -> None:
    data = (
        (REPO / "sample_packages" / "update_chain.json")
        .read_bytes()
        .replace(b'"id": "update_chain"', b'"id": "uploaded-chain"')
    )
    at = _run("app.py", "sample:temporal_interval")
    at.file_uploader(key="w_upload").upload("chain.json", data, "application/json").run()
    _no_errors(at)
    assert at.session_state["ma_package"].startswith("upload:")


def test_a_link_to_a_huge_generated_package_is_refused_not_built() -> None:
    """QA: this link grew the server to 23.8 GB; now the size estimate refuses it at once."""
    at = _run("app.py", "gen:memaudit-small:0:normal_count=100000000")
    assert not at.exception
    # An error since QA s21c: the package asked for is not the one shown.
    errors = " ".join(e.value for e in at.error)
    assert "generator-size" in errors and "250,000" in errors, errors
    assert at.session_state["ma_package"] != "gen:memaudit-small:0:normal_count=100000000"


def test_an_upload_whose_costs_overflow_is_refused() -> None:
    doc = (REPO / "tests" / "malformed" / "costs_sum_overflows.json").read_bytes()
    at = _run("app.py", "sample:update_chain")
    at.file_uploader(key="w_upload").upload("huge.json", doc, "application/json").run()
    assert not at.exception
    shown = [e.value.replace("\\", "") for e in at.error]  # markdown-escaped
    assert any("finite-sum" in text and "huge.json" in text for text in shown), shown
    assert at.session_state["ma_package"] == "sample:update_chain"


def test_tables_show_missing_values_as_na() -> None:
    """QA: the metric said n/a and the table beside it said None for the same ratio. Text
    columns get "n/a" text; number columns stay numbers (QA s41: as text they lost their
    format), shown "n/a" by the grid's placeholder and the static table's formatter."""
    import math

    import pandas as pd

    from memaudit_ui.render import _present_cell_text, _with_na

    df = pd.DataFrame({"ratio": [0.5, None], "n": [1, 2], "name": ["a", None]})
    shown = _with_na(df)
    assert list(shown["name"]) == ["a", "n/a"]
    assert shown["ratio"].iloc[0] == 0.5 and math.isnan(shown["ratio"].iloc[1])
    assert _present_cell_text(shown["ratio"].iloc[1]) == "n/a"
    assert shown["n"].tolist() == [1, 2]  # columns without a gap keep their type
    complete = df[["n", "ratio"]]
    assert _with_na(complete) is complete  # no text column with a gap: shown as is
    blank = pd.DataFrame({"ratio": [None, None]})
    assert _with_na(blank) is blank  # no value at all: not made text either
    # Found by position: a repeated column name does not hide (or raise on) a gap.
    twin = pd.DataFrame([["x", None], ["y", "z"]], columns=["v", "v"])
    assert _with_na(twin).to_numpy().tolist() == [["x", "n/a"], ["y", "z"]]  # gap column only


def test_the_generator_starts_from_a_generated_package_in_the_link() -> None:
    at = _run("pages/7_Generator.py", "gen:random_coverage:3")
    _no_errors(at)
    assert at.selectbox(key="gen_family").value == "random_coverage"
    assert at.number_input(key="gen_random_coverage_seed").value == 3
    # Its parameters too, so that Preview builds the package that is open (app QA).
    at = _run("pages/7_Generator.py", "gen:event_graph:5:n_experiences=20")
    _no_errors(at)
    assert at.text_input(key="gen_event_graph_n_experiences").value == "20"


def test_external_stores_opens_the_demo_sample_in_one_click() -> None:
    at = _run("pages/4_External_stores.py", "sample:update_chain")
    _no_errors(at)
    [button] = [b for b in at.button if "external-stores-demo" in b.label]
    button.click().run()
    _no_errors(at)
    assert at.session_state["ma_package"] == "sample:external-stores-demo"


# Each page's main computation, and a sample on which the page reaches it.
CORE_CALLS = [
    ("app.py", "memaudit_core.reports.overview", "update_chain"),
    ("pages/1_Budget_sweep.py", "memaudit_core.curves.budget_curve", "update_chain"),
    ("pages/2_Compare.py", "memaudit_core.explain.view_for_key", "update_chain"),
    ("pages/3_Evidence_explorer.py", "memaudit_core.explain.view_for_key", "update_chain"),
    ("pages/4_External_stores.py", "memaudit_core.union.union_report", "external-stores-demo"),
    (
        "pages/5_Ablations_and_sensitivity.py",
        "memaudit_core.robustness.ablation_curves",
        "update_chain",
    ),
    ("pages/6_Certification.py", "memaudit_core.curves.certification_report", "update_chain"),
]


@pytest.mark.parametrize(("page", "target", "sample"), CORE_CALLS)
def test_a_user_error_from_the_core_is_an_error_message_not_a_traceback(
    page: str, target: str, sample: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import streamlit as st

    from memaudit_core.errors import SolverDisagreementError

    def disagree(*args: object, **kwargs: object) -> None:
        raise SolverDisagreementError("bnb=3.0 but milp=2.5 at budget 6")

    monkeypatch.setattr(target, disagree)
    st.cache_data.clear()  # a cached result from another test would never reach the patch
    at = _run(page, f"sample:{sample}")
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value.replace("\\", "") for e in at.error]  # shown with Markdown escapes
    assert any("exact engines disagree" in e and "bnb=3.0 but milp=2.5" in e for e in errors), (
        errors
    )


def test_a_budget_above_the_total_cost_is_never_lowered_silently() -> None:
    """A Budget sweep range may run past the total cost, and a click there opens Compare at
    that budget: it is set to the total, with a warning (review: only a link's was told)."""
    at = _run("pages/1_Budget_sweep.py", "sample:update_chain")
    # What the sweep's click handler does: the budget in the session, and in the URL of the
    # page it switches to.
    at.session_state["ma_budget"] = 200.0
    at.query_params["budget"] = "200"
    at.switch_page("pages/2_Compare.py").run()
    assert not at.exception
    assert at.session_state["ma_budget"] == 51.0  # update_chain's total cost
    assert any("The budget 200 is above" in w.value and "set to 51" in w.value for w in at.warning)


def test_a_link_budget_above_the_total_cost_is_named_as_the_links() -> None:
    at = _run("app.py", "sample:update_chain", budget=99999)
    assert not at.exception
    assert at.session_state["ma_budget"] == 51.0
    assert any("budget=99999 in the link is above" in w.value for w in at.warning)


def test_a_failing_seed_band_leaves_the_curve_and_names_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An error in the optional seed band: the package's own curve stays, the message says
    what failed, and no progress bar is left behind (regression QA)."""
    import streamlit as st

    from memaudit_core.errors import MemAuditError

    def refuse(*args: object, **kwargs: object) -> None:
        raise MemAuditError("memaudit-small: normal_count must be an integer >= 0 (got -3)")

    monkeypatch.setattr("memaudit_core.curves.family_band", refuse)
    st.cache_data.clear()
    at = _run("pages/1_Budget_sweep.py", "sample:memaudit-small-s0")
    at.toggle(key="sweep_seed_range").set_value(True).run()
    assert not at.exception
    errors = [e.value.replace("\\", "") for e in at.error]
    assert any("The seed band could not be computed" in e and "normal_count" in e for e in errors)
    headers = [h.value for h in at.subheader]
    assert "Value F against the budget" in headers
    assert not at.get("progress"), "a progress bar was left on the page"


def test_a_mixed_store_does_not_take_the_other_stores_curves_away() -> None:
    """A store that selects candidates and holds memories is valid but not union-scored: the
    External stores page names it and still draws every other store (regression QA)."""
    import json

    doc = json.loads((REPO / "sample_packages" / "external-stores-demo.json").read_text())
    doc["id"] = "demo-with-a-mixed-store"
    first = doc["candidates"][0]["id"]
    memory = dict(doc["stores"][0]["memories"][0], id="mixed-memory")
    doc["stores"].append({"id": "mixed", "select": [first], "memories": [memory]})
    at = _run("app.py", "sample:update_chain")
    at.file_uploader(key="w_upload").upload("mixed.json", json.dumps(doc).encode(), "x").run()
    at.switch_page("pages/4_External_stores.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Not union-scored here" in i.value and "mixed" in i.value for i in at.info)
    assert "Each store across budgets" in [h.value for h in at.subheader]
    assert "mixed" not in at.selectbox(key="w_ext_store").options


def test_an_export_of_any_file_type_is_read_and_a_bad_one_named_over_the_last_success() -> None:
    """External stores' export uploader: a .txt was refused by the browser with only a
    tooltip, and the previous file's "Loaded as" message stayed below it (QA s18c D6)."""
    at = _run("pages/4_External_stores.py", "sample:veg-to-pescatarian", budget=12)
    uploader = at.file_uploader(key="w_ext_upload")
    assert uploader.allowed_type == []  # no browser-side filter: the app reads every file
    export = b'{"results": [{"id": "m1", "memory": "User is vegetarian", "metadata": {}}]}'
    uploader.set_value(("mem0.json", export, "application/json")).run()
    assert [s.value for s in at.success][0].startswith("Loaded as store `mem0`")
    at.file_uploader(key="w_ext_upload").set_value(("notes.txt", b"hello\n", "text/plain")).run()
    assert not at.exception
    assert not at.success, [s.value for s in at.success]
    errors = [e.value.replace("\\", "") for e in at.error]
    assert any("notes.txt was not loaded" in e and "not valid JSON" in e for e in errors), errors


@pytest.mark.parametrize("store", ["writer:nope", "store:fact-extractor"])
def test_a_link_with_a_bad_package_names_its_store_too_and_the_package_first(store: str) -> None:
    """QA s18c D8: with the package bad, the store was dropped without a word, and the
    package (the root cause) was named after the budget and present problems."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params.update({"package": "bogus", "budget": "abc", "store": store, "present": "2"})
    at.run()
    assert not at.exception
    # The package's problem is an error (QA s21c), drawn above the link's warnings.
    (error,) = [e.value.replace("\\", "").replace("`", "") for e in at.error]
    assert error.startswith("Could not open the package bogus"), error
    warnings = [w.value.replace("\\", "").replace("`", "") for w in at.warning]
    assert any("budget='abc'" in w for w in warnings), warnings
    assert any(f"store={store!r} in the link" in w for w in warnings), warnings
    elements = [el.type for el in at.main if el.type in ("error", "warning")]
    assert elements.index("error") < elements.index("warning"), elements


def test_a_writer_in_a_link_with_a_bad_package_is_kept() -> None:
    """A reference writer works on any package: only the package falls back."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params.update({"package": "bogus", "store": "writer:gvt"})
    at.run()
    assert not at.exception
    assert at.session_state["ma_store"] == "writer:gvt"


def test_a_sweep_range_past_the_total_cost_says_so() -> None:
    """QA s18c D10: start 0, stop 1000, step 100 on a package costing 51 in all drew ten
    identical points without a word."""
    at = _run("pages/1_Budget_sweep.py", "sample:update_chain", budget=6)
    at.radio(key="sweep_grid").set_value("range").run()
    at.number_input(key="sweep_start").set_value(0.0)
    at.number_input(key="sweep_stop").set_value(1000.0)
    at.number_input(key="sweep_step").set_value(100.0).run()
    assert not at.exception and not at.error
    # As the reader sees it: the core's note is Markdown-escaped.
    warnings = [w.value.replace("\\", "") for w in at.warning]
    assert any(
        # 0 to 1000 and the sidebar's 6 (added since QA s50).
        "10 of the 12 budgets (100 and up) are above the package's total candidate cost (51" in w
        for w in warnings
    ), warnings


def test_a_page_parameter_in_a_link_is_named_not_silently_ignored() -> None:
    """Conformance QA: DESIGN lists the page among a link's parts; ?page=Compare opened the
    Overview without a word. The page is the link's path, and the warning says so."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params.update({"package": "sample:update_chain", "budget": "6", "page": "Compare"})
    at.run()
    assert not at.exception
    warnings = [w.value.replace("\\", "").replace("`", "") for w in at.warning]
    assert any("ignored page='Compare' in the link" in w and "/Compare?" in w for w in warnings)
