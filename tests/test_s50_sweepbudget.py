"""QA s50 (families, findings 1 and 3): the Budget sweep marked "sidebar B = 6" between its
grid's 4 and 8, where no budget was swept, so the straight segments read there gave a wrong OPT
(8.58, true 9.0) and ratio; ``sweep --family memaudit-small:0-499`` never printed the paper's
headline budget 6 nor said so; and the seed band's heading and chart title named the family
without the parameters it was computed with.

Each test fails on the code before the fix (base commit b449ae6).
"""

from __future__ import annotations

import json
import re

import pytest
from app_utils import open_linked
from cli_utils import run_cli

from memaudit_core.compiled import compile_package
from memaudit_core.curves import family_band
from memaudit_core.generators import generate
from memaudit_core.package import save_package
from memaudit_core.solvers.brute import brute_force
from memaudit_core.writers import run_writer

SWEEP = "pages/1_Budget_sweep.py"
FAMILY_GRID = (1.0, 2.0, 4.0, 8.0, 16.0)  # memaudit-small's `budgets`; its `budget` is 6


def _specs(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def _chart(at, title_start: str) -> dict:
    (spec,) = [s for s in _specs(at) if s["layout"]["title"]["text"].startswith(title_start)]
    return spec


def _trace(spec: dict, name_start: str) -> dict:
    return next(t for t in spec["data"] if (t.get("name") or "").startswith(name_start))


def _marker_texts(spec: dict) -> list[str]:
    """The sidebar budget's label, and what is said under it."""
    return [
        a["text"]
        for a in spec["layout"].get("annotations", ())
        if "B = " in a["text"] or "swept" in a["text"]
    ]


def _budgets_caption(at) -> str:
    return next(c.value for c in at.caption if c.value.startswith("Budgets: "))


def _density_ratio_at(budget: float) -> float:
    """density's F at ``budget`` over the brute-force optimum, for memaudit-small seed 0."""
    inst = compile_package(generate("memaudit-small", seed=0))
    opt, _ = brute_force(inst, budget)
    return run_writer("density", inst, budget).value / opt


def test_the_sidebar_budget_is_swept_and_its_marker_sits_on_a_point() -> None:
    # Old links carry no add_budget: the default, on.
    at = open_linked(SWEEP, "gen:memaudit-small:0", "6")
    assert _budgets_caption(at) == "Budgets: 1, 2, 4, 6, 8, 16"
    box = at.checkbox(key="sweep_add_budget")
    assert box.label == "Add budget 6" and box.value is True
    pkg = generate("memaudit-small", seed=0)
    assert pkg.budget == 6 and tuple(pkg.budget_grid()) == FAMILY_GRID
    opt6, _ = brute_force(compile_package(pkg), 6.0)
    assert opt6 == pytest.approx(9.0)
    value = _chart(at, "F and OPT vs budget")
    opt_trace = _trace(value, "OPT")
    assert 6.0 in opt_trace["x"]
    assert opt_trace["y"][opt_trace["x"].index(6.0)] == pytest.approx(opt6, rel=1e-9)
    ratio = _chart(at, "Ratio F / OPT vs budget")
    density = _trace(ratio, "density")
    # The QA's own density writer gave 0.400 there; the segment from 4 to 8 read 0.343.
    assert _density_ratio_at(6.0) == pytest.approx(0.400, abs=5e-4)
    assert density["y"][density["x"].index(6.0)] == pytest.approx(_density_ratio_at(6.0))
    for spec in (value, ratio):
        assert _marker_texts(spec) == ["sidebar B = 6 words"]


def test_add_budget_0_leaves_it_out_and_the_marker_says_not_swept() -> None:
    at = open_linked(SWEEP, "gen:memaudit-small:0", "6", add_budget="0")
    assert _budgets_caption(at) == "Budgets: 1, 2, 4, 8, 16"
    assert at.checkbox(key="sweep_add_budget").value is False
    for title in ("F and OPT vs budget", "Ratio F / OPT vs budget"):
        spec = _chart(at, title)
        assert 6.0 not in _trace(spec, "OPT" if title.startswith("F") else "density")["x"]
        assert _marker_texts(spec) == ["sidebar B = 6 words", "(not swept)"]


def test_add_budget_in_range_mode_and_when_the_grid_holds_it() -> None:
    at = open_linked(
        SWEEP, "gen:memaudit-small:0", "5", grid="range", **{"from": "2", "to": "10", "step": "4"}
    )
    assert _budgets_caption(at) == "Budgets: 2, 5, 6, 10"
    assert at.checkbox(key="sweep_add_budget").label == "Add budget 5"
    # A budget the package grid holds: the box is off-limits and the link's value named.
    at = open_linked(SWEEP, "gen:memaudit-small:0", "4", add_budget="0")
    assert _budgets_caption(at) == "Budgets: 1, 2, 4, 8, 16"
    assert at.checkbox(key="sweep_add_budget").disabled
    assert any("the package grid already holds the budget 4" in w.value for w in at.warning), [
        w.value for w in at.warning
    ]


def test_the_seed_band_names_the_family_parameters() -> None:
    at = open_linked(
        SWEEP,
        "gen:memaudit-small:0:normal_count=4;update_count=3",
        "6",
        seed_band="1",
        first_seed="0",
        last_seed="2",
        methods="writer:density",
    )
    named = "memaudit-small (normal_count=4, update_count=3)"
    heading = next(h.value for h in at.subheader if h.value.startswith("Mean ratio over seeds"))
    assert re.sub(r"\\(.)", r"\1", heading) == f"Mean ratio over seeds 0–2 of {named}"
    (band,) = [s for s in _specs(at) if s["layout"]["title"]["text"].startswith("Mean ratio")]
    title = band["layout"]["title"]["text"].replace("<br>", " ")  # wrapped to the chart
    assert title.startswith(f"Mean ratio, 3 seeds of {named}")


def test_show_of_a_band_names_only_the_parameters_off_their_defaults(tmp_path) -> None:
    # normal_count=3 is the default: the band is of the update_count=4 variant alone.
    band = family_band(
        "memaudit-small", [0, 1], {"normal_count": 3, "update_count": 4}, [4.0], ["writer:gvt"]
    )
    path = tmp_path / "band.json"
    path.write_text(json.dumps(band.to_dict()))
    rc, out, err = run_cli("show", str(path))
    assert rc == 0, err
    assert "family memaudit-small (update_count=4); seeds 0, 1" in out


NOTE = (
    "the default budget 6 words of {whose} is not in {its} grid (1, 2, 4, 8, 16), so no row "
    "is at it; add it with --budgets 1,2,4,6,8,16"
)


def test_cli_sweep_of_a_family_says_its_default_budget_is_off_the_grid(tmp_path) -> None:
    rc, out, err = run_cli("sweep", "--family", "memaudit-small:0-1", "--writers", "gvt")
    assert rc == 0, err
    assert (
        "note: " + NOTE.format(whose="2 packages (memaudit-small-s0 and 1 more)", its="their")
        in out
    )
    # A package file at its own grid says it too; a --budgets grid is the user's choice.
    src = tmp_path / "p.json"
    save_package(generate("memaudit-small", seed=0), src)
    rc, out, err = run_cli("sweep", str(src), "--writers", "gvt")
    assert rc == 0, err
    assert "note: " + NOTE.format(whose="memaudit-small-s0", its="its") in out
    rc, out, err = run_cli("sweep", str(src), "--writers", "gvt", "--budgets", "4,6")
    assert rc == 0, err
    assert "default budget" not in out
