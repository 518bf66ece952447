"""QA s48, Certification page: the quick look's shared total goes to the runs that happen (it
was split over MILP runs on log1p and enumeration runs too large to make), and the solve-time
chart labels enough ticks to read a time off it."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from memaudit_core import curves
from memaudit_core.generators import generate
from memaudit_core.package import load_package, replace_package
from memaudit_ui import figures

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"
TOTAL_S = 60.0


def _limits_given(monkeypatch, package, budgets) -> list[float]:
    """The time limit each engine run was given, with the total shared and no per-run limit."""
    seen: list[float] = []
    real = curves.run_engine

    def recording(engine, inst, budget, *, time_limit=None, **kw):
        seen.append(time_limit)
        return real(engine, inst, budget, time_limit=time_limit, **kw)

    monkeypatch.setattr(curves, "run_engine", recording)
    curves.certification_report(package, budgets, time_limit=None, total_time_limit=TOTAL_S)
    return seen


@pytest.mark.parametrize(
    ("package", "budgets", "n_runs"),
    [
        # log1p: MILP does not apply; enumeration does (864 stores in all): 2 engines x 3.
        (replace_package(generate("update_chain"), saturation="log1p"), [3, 6, 13], 6),
        # cap1: enumeration applies at budget 13 only (too many stores fit above): 5 + 5 + 1.
        (load_package(SAMPLES / "event-graph-50.json"), [13, 25, 63, 125, 250], 11),
    ],
    ids=["log1p-no-milp", "cap1-enum-too-large"],
)
def test_the_shared_total_is_split_over_the_runs_that_happen(
    monkeypatch, package, budgets, n_runs
) -> None:
    limits = _limits_given(monkeypatch, package, budgets)
    assert len(limits) == n_runs  # the runs made, counted from outside the report
    # The first run's fair share: the whole total over the runs that will be made (was the
    # total over every engine at every budget, 9 and 15 here).
    assert limits[0] == pytest.approx(TOTAL_S / n_runs, rel=0.01)


def _report_with_times(times: list[float], total_s: float | None) -> curves.CertificationReport:
    """A real report of update_chain whose branch-and-bound runs took ``times`` seconds, a
    quick look sharing ``total_s`` (no line at the 30 s per-run limit) unless None."""
    rep = curves.certification_report(generate("update_chain"), [3, 6, 13], engines=("bnb",))
    rows = tuple(
        dataclasses.replace(row, runs=tuple(dataclasses.replace(run, time_s=t) for run in row.runs))
        for row, t in zip(rep.rows, times, strict=True)
    )
    return dataclasses.replace(rep, rows=rows, total_time_limit=total_s)


def _labelled_ticks(axis) -> list[float]:
    """The y values labelled on a log axis as plotly draws them: the listed tick values, or
    with ``dtick=1`` one per decade, within the axis range (log10 units)."""
    low, high = axis.range
    if axis.tickmode == "array":
        values = list(axis.tickvals)
    else:
        assert axis.dtick == 1
        values = [10.0**k for k in range(math.floor(low), math.ceil(high) + 1)]
    return [v for v in values if low - 1e-9 <= math.log10(v) <= high + 1e-9]


def test_solve_times_lie_between_labelled_ticks() -> None:
    # The QA repro's quick look: every run between 0.1 and 0.6 s.
    fig = figures.engine_time_curve(_report_with_times([0.12, 0.3, 0.55], 5.0), "t")
    ticks = _labelled_ticks(fig.layout.yaxis)
    assert fig.layout.yaxis.type == "log"
    inside = [v for v in ticks if 0.12 < v < 0.55]
    assert inside, f"no labelled tick between the fastest and slowest run: {ticks}"
    assert len(ticks) >= 4, ticks
    # Over many decades one label a decade stays enough (and 1-2-5 would crowd the axis).
    fig = figures.engine_time_curve(_report_with_times([2e-4, 0.3, 20.0], None), "t")
    ticks = _labelled_ticks(fig.layout.yaxis)
    assert ticks == pytest.approx([1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0])
