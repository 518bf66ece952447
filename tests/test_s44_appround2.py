"""App QA s44, round 2:

1. The Budget sweep's seed band took the page package's budgets (in its unit) as budgets of
   the family's packages: a memaudit-small package edited to chars, budgets 20..100 chars,
   banded the family's word packages at 20..100 words, where nearly everything fits. The band
   now runs at the family's own grid and says so.
2. The Overview's cut-to-fit banner said "more than budget 24" without the unit.
3. Presentation mode's static table dropped a printf format with text around it: the budget
   scale "x%.4g" read "1.32143" on a projector and "x1.321" in the grid.
4. The cost histogram's edge labels (six significant digits) named every bin of
   [123456.7, 123456.9] "123,457 to under 123,457" and wrote "2e+08".

Expected values come from the package files and generator output read directly, and from
Python's own printf.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pytest
import streamlit as st
from app_utils import open_app, upload_file

from memaudit_core.curves import family_band
from memaudit_core.generators import generate
from memaudit_core.package import dumps_package
from memaudit_ui import figures, render

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"


def _chars_package() -> dict:
    """memaudit-small seed 0 edited to chars: costs len(text), budgets 20..100 (QA's repro)."""
    doc = json.loads(dumps_package(generate("memaudit-small", seed=0)))
    doc["cost_unit"] = "chars"
    for c in doc["candidates"]:
        c["cost"] = len(c["text"])
    doc["budget"] = 60
    doc["budgets"] = [20, 40, 60, 80, 100]
    doc.pop("stores", None)
    return doc


def _family_budgets(seeds) -> list[float]:
    """The family's own grid, read from its generated packages' budgets field."""
    grids = {
        tuple(json.loads(dumps_package(generate("memaudit-small", seed=s)))["budgets"])
        for s in seeds
    }
    assert len(grids) == 1, grids
    return sorted(float(b) for b in grids.pop())


def test_a_band_in_another_unit_runs_at_the_familys_own_grid() -> None:
    family = _family_budgets(range(3))
    assert max(family) < 20  # the page's budgets would all be past the family's grid
    band = family_band(
        "memaudit-small",
        range(3),
        {},
        [20, 40, 60],
        ["writer:gvt"],
        ablations=(),
        budget_unit="chars",
    )
    assert list(band.budgets) == family
    assert sorted({r.budget for r in band.rows}) == family
    assert band.cost_unit == "words"
    assert any("in chars" in n and "words" in n for n in band.notes), band.notes
    # Same unit: the budgets given are the band's.
    same = family_band(
        "memaudit-small", range(3), {}, [3, 5], ["writer:gvt"], ablations=(), budget_unit="words"
    )
    assert list(same.budgets) == [3.0, 5.0]


def test_the_budget_sweep_band_of_a_chars_package_uses_the_familys_word_budgets() -> None:
    st.cache_data.clear()
    at = open_app()
    upload_file(at, "ms0-chars.json", json.dumps(_chars_package()).encode())
    at.switch_page("pages/1_Budget_sweep.py").run()
    at.toggle(key="sweep_seed_range").set_value(True).run()
    at.number_input(key="sweep_seed_to").set_value(2).run()
    assert not at.exception, [e.value for e in at.exception]
    band = next(d for d in at.dataframe if "mean ratio" in d.value.columns)
    assert sorted(set(band.value["budget"])) == _family_budgets(range(3))
    infos = [i.value.replace("\\", "") for i in at.info]
    assert any("are in chars" in i and "1, 2, 4, 8, 16 words" in i for i in infos), infos


def test_the_overview_cut_banner_names_the_unit() -> None:
    doc = json.loads((SAMPLES / "veg-to-pescatarian.json").read_text(encoding="utf-8"))
    unit = doc["cost_unit"]
    at = open_app(package="sample:veg-to-pescatarian", budget="7.25", store="writer:greedy")
    assert not at.exception, [e.value for e in at.exception]
    banners = [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning]
    banners = [b for b in banners if "cut to what fits" in b]
    assert len(banners) == 1, banners
    assert f"more than budget 7.25 {unit};" in banners[0], banners[0]


def test_presentation_table_keeps_a_printf_format_with_text_around_it() -> None:
    fmt = st.column_config.NumberColumn(format="x%.4g")["type_config"]["format"]
    cell = render._number_formatter(fmt)
    assert [cell(1.0), cell(37 / 28)] == ["x1", "x1.321"]
    # A bare %g inside text keeps the grid's every digit, as a bare "%g" does.
    assert render._number_formatter("x%g")(1714086400.5) == "x1714086400.5"


def test_ablations_ranking_table_in_presentation_mode_shows_the_scale_format() -> None:
    at = open_app(
        "pages/5_Ablations_and_sensitivity.py", package="sample:veg-to-pescatarian", present="1"
    )
    assert not at.exception, [e.value for e in at.exception]
    tables = [t for t in at.table if "budget scale" in t.value.columns]
    assert tables, "no ranking table"
    shown = pa.ipc.open_stream(tables[0].proto.arrow_data.styler.display_values).read_pandas()
    scales = dict(zip(shown["rule"], shown["budget scale"], strict=True))
    # The grid's "x%.4g" of each rule's scale, from the table's own numbers.
    numbers = dict(zip(tables[0].value["rule"], tables[0].value["budget scale"], strict=True))
    assert scales == {rule: f"x{v:.4g}" for rule, v in numbers.items()}, scales
    assert scales["as_stored"] == "x1"


@pytest.mark.parametrize(
    ("costs", "first_two"),
    [
        (
            [123456.7, 123456.9],
            ["123,456.7 to under 123,456.75", "123,456.75 to under 123,456.8"],
        ),
        ([1e-9, 1e9], ["0 to under 200,000,000", "200,000,000 to under 400,000,000"]),
    ],
)
def test_cost_histogram_labels_tell_the_bins_apart(costs, first_two) -> None:
    bins = figures.cost_bins(costs)
    labels = [bins.label(k) for k in range(bins.count)]
    assert labels[:2] == first_two
    assert len(set(labels)) == len(labels)
    assert not any("e+" in x or "e-" in x for x in labels)
