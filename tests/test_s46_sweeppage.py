"""QA s46 (Budget sweep page): the seed band's axis called incumbents OPT; a package grid's
budget far above the total cost (and ``sweep --budgets 1e308``) was silent; nothing the page
downloads could be read back by ``memaudit show`` (which called a CSV "not valid JSON"); and the
band's downloads left the family's parameters out of their names.

Each test fails on the code before its fix (commit c3ce9ef).
"""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import streamlit as st
from app_utils import open_linked, upload_file
from cli_utils import run_cli
from streamlit.testing.v1 import AppTest

import memaudit_core as ma
from memaudit_core.curves import family_band
from memaudit_ui import figures

REPO = Path(__file__).resolve().parent.parent
SWEEP = "pages/1_Budget_sweep.py"
CHAIN = REPO / "sample_packages" / "update_chain.json"


def _offered(monkeypatch) -> dict[str, dict[str, Any]]:
    """Every ``st.download_button`` call of the runs to come, by widget key (tables' CSVs and
    the JSON results; the charts' images are drawn through a container)."""
    offered: dict[str, dict[str, Any]] = {}

    def fake_download_button(label, data, **kwargs):
        offered[kwargs["key"]] = {"label": label, "data": data, **kwargs}
        return False

    monkeypatch.setattr(st, "download_button", fake_download_button)
    return offered


def _bytes(offer: dict[str, Any]) -> bytes:
    data = offer["data"]
    data = data() if callable(data) else data
    return data.encode() if isinstance(data, str) else data


# ----------------------------------------------------------------------- (a) band axis title


@pytest.fixture(scope="module")
def small_band():
    return family_band("memaudit-small", [0, 1], {}, [4.0, 8.0], ["writer:gvt"], ablations=())


def test_the_band_axis_says_incumbent_when_some_seed_is_unproven(small_band):
    # The repro's band: "20 of 24 measurements rest on an uncertified optimum", its line said
    # "OPT or incumbent = 1", its axis "mean ratio F / OPT over seeds".
    unproven = replace(small_band, rows=tuple(replace(r, n_unproven=1) for r in small_band.rows))
    fig = figures.family_band_curve(unproven, "t")
    title = fig.layout.yaxis.title.text
    assert "OPT or incumbent" in title, title
    assert "F / OPT over" not in title, title


def test_the_band_axis_says_opt_when_every_seed_is_proven(small_band):
    assert all(r.n_unproven == 0 for r in small_band.rows)
    fig = figures.family_band_curve(small_band, "t")
    assert fig.layout.yaxis.title.text == "mean ratio F / OPT over seeds"


# ----------------------------------------------------------- (b) budgets above the total cost


def _chain_with_grid(budgets: list[float]) -> tuple[bytes, float]:
    """update_chain with its own ``budgets`` field, and its total candidate cost summed here."""
    doc = json.loads(CHAIN.read_text())
    doc["budgets"] = budgets
    total = sum(c["cost"] for c in doc["candidates"])
    return json.dumps(doc).encode(), total


def test_the_package_grid_mode_warns_of_a_budget_above_the_total_cost():
    data, total = _chain_with_grid([0, 3.5, 7, 1e6])
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    upload_file(at, "cap.json", data)
    at.switch_page(SWEEP).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.radio(key="sweep_grid").value == "package grid"
    # As the reader sees it (the page escapes Markdown).
    warnings = [w.value.replace("\\", "") for w in at.warning]
    expected = (
        # The grid and the sidebar's budget, the package's own (added since QA s50).
        f"1 of the 5 budgets (1000000) is above the package's total candidate cost ({total:g}"
    )
    assert any(expected in w for w in warnings), warnings


def test_cli_sweep_says_when_its_budgets_are_above_the_total_cost(tmp_path):
    data, total = _chain_with_grid([3, 6])
    pkg = tmp_path / "chain.json"
    pkg.write_bytes(data)
    rc, _, err = run_cli("sweep", str(pkg), "--budgets", "1e308", "--writers", "gvt")
    assert rc == 0, err
    assert f"the budget 1e+308 is above the package's total candidate cost ({total:g}" in err, err
    assert "(rule: budget-above-total)" in err, err


# ------------------------------------------------------------------ (c) a JSON show reads back


def test_the_sweep_offers_a_json_result_that_show_reads_back(monkeypatch, tmp_path):
    offered = _offered(monkeypatch)
    open_linked(SWEEP, "sample:update_chain", methods="writer:gvt", ablation="0")
    offer = offered["sweep_json"]
    assert offer["file_name"] == "update_chain-sweep.json"
    data = json.loads(_bytes(offer))
    assert data["result_kind"] == "budget_curve"
    grid = sorted(set(json.loads(CHAIN.read_text())["budgets"]))
    assert list(ma.read_result(data).budgets) == grid
    saved = tmp_path / offer["file_name"]
    saved.write_bytes(_bytes(offer))
    rc, out, err = run_cli("show", str(saved))
    assert rc == 0, err
    assert out.startswith(f"saved budget_curve {saved}"), out
    # A JSON result named .csv still reads: the suffix only names what a non-JSON file is.
    renamed = saved.with_suffix(".csv")
    saved.rename(renamed)
    assert run_cli("show", str(renamed))[0] == 0


def test_show_of_the_pages_csv_says_it_is_a_table_not_a_result(monkeypatch, tmp_path):
    # show said only "not valid JSON [rule: json-syntax]" of a CSV download.
    offered = _offered(monkeypatch)
    open_linked(SWEEP, "sample:update_chain", methods="writer:gvt", ablation="0")
    table = tmp_path / offered["sweep_opt_table_csv"]["file_name"]
    table.write_bytes(_bytes(offered["sweep_opt_table_csv"]))
    grid = sorted(set(json.loads(CHAIN.read_text())["budgets"]))
    assert list(pd.read_csv(io.BytesIO(table.read_bytes())).budget) == grid
    rc, out, err = run_cli("show", str(table))
    assert rc == 2
    assert "a CSV table, not a saved result" in err, err
    assert "JSON results the CLI saves" in err and "[rule: file-type]" in err, err


# -------------------------------------------------------- (d) the band's file names its params


def test_the_band_downloads_name_the_family_parameters(monkeypatch):
    offered = _offered(monkeypatch)
    open_linked(
        SWEEP,
        "gen:memaudit-small:3:normal_count=5",
        methods="writer:gvt",
        ablation="0",
        seed_band="1",
        first_seed="0",
        last_seed="4",
    )
    stem = "memaudit-small-normal_count-5-seeds-0-4-band"
    assert offered["sweep_band_table_csv"]["file_name"] == f"{stem}.csv"
    assert offered["sweep_band_json"]["file_name"] == f"{stem}.json"
    band = ma.read_result(json.loads(_bytes(offered["sweep_band_json"])))
    assert dict(band.params)["normal_count"] == 5
    assert band.seeds == (0, 1, 2, 3, 4)
