"""The certification table keeps a limited run's gap for a package in tiny units (QA s41): a
fixed 1e-12 threshold emptied the gap cell of every run whose incumbent was below it, while
the run's own gap (in the package's units) was defined."""

from __future__ import annotations

import math

from memaudit_core.curves import CertificationReport, CertRow, EngineRun


def _table_row(value: float, bound: float, gap: float) -> dict:
    run = EngineRun(
        engine="bnb",
        applicable=True,
        status="limit",
        value=value,
        recomputed=value,
        bound=bound,
        gap=gap,
        time_s=0.5,
        nodes=10,
        selected=("a",),
        feasible=True,
        certified=False,
        hit_limit=True,
    )
    row = CertRow(
        budget=7.0,
        runs=(run,),
        agreement=None,
        disagreement=False,
        certified=False,
        message="bnb stopped at its limit",
    )
    report = CertificationReport(
        package_id="tiny",
        content_hash="0" * 64,
        saturation="cap1",
        cost_unit="words",
        engines=("bnb",),
        time_limit=1.0,
        rows=(row,),
        time_s=0.5,
    )
    (flat,) = report.table_rows()
    return flat


def test_a_tiny_incumbents_gap_stays_in_the_table():
    # F 1.0e-13 and bound 1.2e-13: gap 0.2 in the package's units, written by hand.
    assert _table_row(1.0e-13, 1.2e-13, 0.2)["bnb gap"] == 0.2


def test_a_zero_incumbents_gap_stays_empty():
    """Regression guard: over an incumbent of 0 the relative gap means nothing."""
    assert _table_row(0.0, 5.0, math.inf)["bnb gap"] is None
