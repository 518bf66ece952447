"""QA s41: the CSV downloads of the Budget sweep and the Ablations and sensitivity pages.

The sweep's points CSV had no ``store_cut`` column although the page's note sends the reader
to it, held the ratio as rounded text ("0.486", "n/a"), carried no bound or low ratio for rows
on an unproven optimum, and every table's CSV rounded numbers to 12 digits (and turned a
column with a missing value into 6-digit text). The Ablations page's tables were 3-decimal
strings. Expected values below are worked out by hand from packages built here.

Each test failed on the code before the fix.
"""

from __future__ import annotations

import io
import math
from typing import Any

import pandas as pd
import pytest
import streamlit as st

from memaudit_core.curves import budget_curve
from memaudit_core.package import parse_package
from memaudit_core.robustness import (
    CapacityPoint,
    CapacitySensitivity,
    CostRuleResult,
    CostRuleSensitivity,
    NoiseSensitivity,
    NoiseWriterRow,
    ablation_curve,
)
from memaudit_ui import render


def _doc(candidates: list[dict[str, Any]], stores: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "memaudit": 1,
        "id": "csv41",
        "experiences": [{"id": f"s{i}", "time": i} for i in (1, 2, 3)],
        "units": [
            {"id": "u1", "weight": 3},
            {"id": "u2", "weight": 7},
            {"id": "u3", "weight": 1},
        ],
        "candidates": candidates,
        "stores": stores,
    }


def _raw(exp: str, cost: float, unit: str, kind: str = "raw_span") -> dict[str, Any]:
    return {"id": f"{exp}:{kind}", "experience": exp, "type": kind, "cost": cost,
            "coverage": {unit: 1}}  # fmt: skip


def store_package():
    """u1 (weight 3) costs 4, u2 (7) costs 6, u3 (1) costs 3 and is the most recent; the
    store ``w`` keeps u1 and u3 (cost 7).

    Budget 2: nothing fits, OPT = 0, the store is cut to nothing (2 dropped), ratio n/a.
    Budget 6: OPT = 7 (u2); the store keeps its most recent memory u3 (F = 1, 1 dropped).
    Budget 10: OPT = 10 (u1 + u2); the store fits whole, F = 4, ratio 0.4.
    Budget 13: OPT = 11 (u1 + u2 + u3 costs 13: all fit), F = 4, ratio 4/11."""
    doc = _doc(
        [_raw("s1", 4, "u1"), _raw("s2", 6, "u2"), _raw("s3", 3, "u3")],
        [{"id": "w", "select": ["s1:raw_span", "s3:raw_span"]}],
    )
    return parse_package(doc)


def read_csv(data: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(data))


def offered_csv(monkeypatch, df: pd.DataFrame) -> bytes:
    """The bytes ``render.table``'s CSV button offers for ``df`` (its deferred data, made as
    a click would make it)."""
    offered: dict[str, Any] = {}

    def fake_download_button(label, data, **kwargs):
        offered[kwargs["key"]] = data
        return False

    monkeypatch.setattr(st, "download_button", fake_download_button)
    render.table(df, "t41", "t41")
    data = offered["t41_csv"]
    return data() if callable(data) else data


def test_sweep_points_csv_has_numeric_ratio_and_store_cut(monkeypatch) -> None:
    curve = budget_curve(store_package(), [2, 6, 10, 13], ["store:w"], ablations=())
    df = read_csv(offered_csv(monkeypatch, pd.DataFrame(curve.point_rows())))
    assert list(df["budget"]) == [2.0, 6.0, 10.0, 13.0]
    for col in ("F", "OPT", "ratio", "opt_bound", "ratio_low", "store_cut"):
        assert df[col].dtype.kind in "fi", (col, df[col].dtype)
    assert list(df["store_cut"]) == [2, 1, 0, 0]
    assert list(df["F"]) == [0.0, 1.0, 4.0, 4.0]
    assert list(df["OPT"]) == [0.0, 7.0, 10.0, 11.0]
    # OPT = 0: an empty cell, not "n/a"; the others at full precision (1/7, not 0.143).
    assert math.isnan(df["ratio"][0])
    assert list(df["ratio"][1:]) == [1 / 7, 0.4, 4 / 11]
    # Every optimum is proven: the bound is OPT and the low ratio the ratio.
    assert list(df["opt_bound"]) == [0.0, 7.0, 10.0, 11.0]
    assert math.isnan(df["ratio_low"][0])
    assert list(df["ratio_low"][1:]) == [1 / 7, 0.4, 4 / 11]


def test_sweep_note_names_the_store_cut_column_the_csv_has() -> None:
    curve = budget_curve(store_package(), [2, 6], ["store:w"], ablations=())
    assert any("store_cut in the CSV" in n for n in curve.notes), curve.notes
    assert "store_cut" in curve.point_rows()[0]


def test_unproven_optimum_rows_carry_bound_and_low_ratio() -> None:
    """With no time to prove it, event-graph-500's optimum is an incumbent: its rows say the
    proven bound and F / bound, named as in ``memaudit sweep -o``'s CSV."""
    from pathlib import Path

    from memaudit_core.package import load_package

    pkg = load_package(Path(__file__).resolve().parent.parent / "sample_packages"
                       / "event-graph-500.json")  # fmt: skip
    curve = budget_curve(pkg, [40], ["writer:gvt"], ablations=(), time_limit=0.01)
    (row,) = curve.point_rows()
    assert row["certified"] is False
    assert row["opt_bound"] > row["OPT"]
    assert row["ratio_low"] == row["F"] / row["opt_bound"]
    assert row["ratio"] == row["F"] / row["OPT"]


def test_table_csv_keeps_full_precision_and_empty_missing(monkeypatch) -> None:
    """A column with one missing value was written as 6-digit text with "n/a"; the rest at 12
    digits (19.599999999999998 came out as 19.6)."""
    df = pd.DataFrame({"x": [0.48603603603603596, None], "y": [19.599999999999998, 1.0]})
    out = read_csv(offered_csv(monkeypatch, df))
    assert out["x"].dtype.kind == "f"
    assert out["x"][0] == 0.48603603603603596
    assert math.isnan(out["x"][1])
    assert list(out["y"]) == [19.599999999999998, 1.0]
    assert b"n/a" not in render.csv_bytes(df)


def ablation_package():
    """u1 (weight 3) as a raw span costing 4, u2 (7) as a tombstone costing 3. Without the
    validity types the pool keeps only the raw span.

    Budget 2: both optima 0, ratio and drop n/a. Budget 4: OPT 7 (the tombstone), pool 3:
    ratio 3/7. Budget 7: OPT 10, pool 3: ratio 0.3."""
    doc = _doc([_raw("s1", 4, "u1"), _raw("s2", 3, "u2", "tombstone")], [])
    return parse_package(doc)


def test_ablation_table_csv_is_numeric(monkeypatch) -> None:
    from memaudit_core.robustness import ablation_table_rows  # added by the QA s41 fix

    curve = ablation_curve(ablation_package(), [2, 4, 7], preset="no_validity")
    df = read_csv(offered_csv(monkeypatch, pd.DataFrame(ablation_table_rows([curve]))))
    assert list(df["OPT"]) == [0.0, 7.0, 10.0]
    assert list(df["pool OPT"]) == [0.0, 3.0, 3.0]
    assert df["pool / OPT"].dtype.kind == "f" and df["drop"].dtype.kind == "f"
    assert math.isnan(df["pool / OPT"][0]) and math.isnan(df["drop"][0])
    assert list(df["pool / OPT"][1:]) == [3 / 7, 3 / 10]
    assert list(df["drop"][1:]) == [1 - 3 / 7, 1 - 3 / 10]


def _rule(name: str, tau: float | None, mean: dict[str, float | None]) -> CostRuleResult:
    return CostRuleResult(
        rule=name, available=True, note="", n_recosted=3, n_kept_stored=0, total_cost=13.0,
        scale=1.2345678, rows=(), mean_ratio=tuple(mean.items()),
        mean_abs_delta=tuple((w, None) for w in mean), tau=tau, tau_by_budget=(),
        rankings_hold=None,
    )  # fmt: skip


def test_cost_rule_tables_csv_is_numeric(monkeypatch) -> None:
    sens = CostRuleSensitivity(
        package_id="p", content_hash="h", cost_unit="tokens", budgets=(4.0,),
        writers=("gvt", "density"),
        rules=(
            _rule("as_stored", 1.0, {"gvt": 0.48603603603603596, "density": None}),
            _rule("chars", None, {"gvt": 2 / 3, "density": 0.25}),
        ),
        budget_rule="budgets scale",
    )  # fmt: skip
    ratios = read_csv(offered_csv(monkeypatch, pd.DataFrame(sens.ratio_rows())))
    assert list(ratios["writer"]) == ["gvt", "density"]
    assert ratios["as_stored"][0] == 0.48603603603603596
    assert math.isnan(ratios["as_stored"][1])
    assert list(ratios["chars"]) == [2 / 3, 0.25]
    ranking = read_csv(offered_csv(monkeypatch, pd.DataFrame(sens.ranking_rows())))
    assert ranking["Kendall tau vs as stored"][0] == 1.0
    assert math.isnan(ranking["Kendall tau vs as stored"][1])
    assert list(ranking["budget scale"]) == [1.2345678, 1.2345678]


def test_capacity_and_noise_tables_csv_are_numeric(monkeypatch) -> None:
    point = CapacityPoint(
        budget=4.0, opt_1=3.0, opt_k=7.0, gain=7 / 3, certified_1=True,
        engine_values=(("bnb", 7.0),), engine_status=(("bnb", "optimal"),),
        engine_bounds=(("bnb", 7.0),), engine_times=(("bnb", 0.1),), agree=None,
        cross_checked=False, proven=True, multi_groups=1, selected_k=("a", "b"),
    )  # fmt: skip
    cap = CapacitySensitivity(package_id="p", content_hash="h", k=2, points=(point,), notes=())
    df = read_csv(offered_csv(monkeypatch, pd.DataFrame(cap.table_rows())))
    assert df["OPT(k)/OPT(1)"][0] == 7 / 3
    noise = NoiseSensitivity(
        package_id="p", content_hash="h", mode="flip", level=0.1, draws=2, seed=0,
        budgets=(4.0,), writers=("gvt", "density"),
        writer_rows=(
            NoiseWriterRow("gvt", 1 / 3, 2 / 7, 0.047619047619047616, 0.1, 2),
            NoiseWriterRow("density", None, None, None, None, 0),
        ),
        mean_tau=None, min_tau=None, same_ranking_share=None, mean_opt_change=None,
        mean_cells_changed=0.0, n_cells=3, taus=(),
    )  # fmt: skip
    df = read_csv(offered_csv(monkeypatch, pd.DataFrame(noise.table_rows())))
    assert df["clean mean ratio"][0] == 1 / 3
    assert df["noisy mean ratio"][0] == 2 / 7
    assert df["mean |Δ ratio|"][0] == 0.047619047619047616
    assert df["max |Δ ratio|"][0] == 0.1
    assert math.isnan(df["clean mean ratio"][1])
    assert list(df["pairs"]) == [2, 0]


@pytest.fixture(autouse=True)
def _bare_streamlit(monkeypatch):
    """render.table outside a running app (bare mode): no presentation mode."""
    monkeypatch.setattr(st, "dataframe", lambda *a, **k: None)
