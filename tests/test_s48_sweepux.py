"""QA s48 (sweep): three findings, each test failing on the code before the fix.

1. A sweep of several packages said "store sel costs more than budgets 0.5, 0.6, ..." with
   every package's budgets pooled under one store id, which names a different store in each
   package: the note now says in which package each store was cut at which budgets.
2. The Budget sweep's seed-band chart left out the budgets where OPT = 0 at every seed, so
   its x axis started at the first defined mean while the ratio chart above spans the grid.
3. ``memaudit show`` of a sweep's ``--out`` folder said "a folder, not a result file [rule:
   file-exists]" of a folder that exists, and nothing of the report and tables in it.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_utils import run_cli

from memaudit_core.curves import budget_curve, family_band
from memaudit_core.generators import generate
from memaudit_ui import figures

REPO = Path(__file__).resolve().parent.parent

# ---------------------------------------------------------------- 1. the cut note per package


def _package(path: Path, pid: str, costs: list[float]) -> Path:
    """A package whose store ``s`` holds one raw span of each cost (it costs their sum)."""
    exps = [{"id": f"e{i}", "time": i} for i in range(len(costs))]
    doc = {
        "memaudit": 1,
        "id": pid,
        "cost_unit": "words",
        "experiences": exps,
        "units": [{"id": f"u{i}", "weight": 1} for i in range(len(costs))],
        "candidates": [
            {"id": f"e{i}:raw", "experience": f"e{i}", "type": "raw_span", "cost": c,
             "coverage": {f"u{i}": 1}}
            for i, c in enumerate(costs)
        ],
        "stores": [{"id": "s", "select": [f"e{i}:raw" for i in range(len(costs))]}],
    }  # fmt: skip
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_a_sweep_of_several_packages_says_which_package_each_cut_was_in(tmp_path: Path) -> None:
    folder = tmp_path / "pkgs"
    folder.mkdir()
    costs = {"pa": [2.0, 3.0], "pb": [1.0, 2.0], "pc": [1.0]}  # store s costs 5, 3 and 1
    for pid, c in costs.items():
        _package(folder / f"{pid}.json", pid, c)
    budgets = [2.0, 4.0, 6.0]
    code, out, err = run_cli(
        "sweep", str(folder), "--stores", "s", "--writers", "gvt",
        "--budgets", ",".join(map(str, budgets)), "--quiet", "--json",
    )  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    # Independently: a store is cut where its total cost exceeds the budget.
    over = {pid: [b for b in budgets if sum(c) > b] for pid, c in costs.items()}
    assert over == {"pa": [2.0, 4.0], "pb": [2.0], "pc": []}
    cut = {(r["package_id"], r["budget"]) for r in result["rows"] if r["store_cut"] > 0}
    assert cut == {(p, b) for p, bs in over.items() for b in bs}
    (note,) = [n for n in result["notes"] if "cut to what fits" in n]
    assert note.startswith("stores cost more than some budgets in 2 of the 3 swept packages: ")
    assert "in pa, store s (budgets 2, 4 words)" in note
    assert "in pb, store s (budget 2 words)" in note
    assert "pc" not in note


def test_the_cut_note_counts_the_packages_it_does_not_spell_out(tmp_path: Path) -> None:
    from types import SimpleNamespace as R

    from memaudit_core.analysis import cut_note

    rows = [
        R(package_id=f"p{i}", content_hash=f"h{i}", method="s", budget=1.0, store_cut=1)
        for i in range(5)
    ]
    note = cut_note(rows)
    assert note is not None
    assert note.startswith("stores cost more than some budgets in all 5 swept packages: ")
    assert "in p0, store s (budget 1); in p1, " in note
    assert "in p3" not in note and "and in 2 more packages (column package_id)" in note


# ------------------------------------------------------- 2. the seed band's x axis is the grid


def _xs(fig) -> list[float]:
    return [float(x) for t in fig.data for x in (t.x or ()) if isinstance(x, int | float)]


def test_the_seed_band_chart_spans_the_grid_as_the_ratio_chart_does() -> None:
    grid = [0.0, 0.5, 1.0, 1.5, 2.0]
    methods = ["writer:gvt", "writer:density"]
    seeds = range(12)
    # Independently: no candidate of any seed costs 0.5 or less, so OPT = 0 at 0 and 0.5 for
    # every seed (the ratio is n/a there), and something fits at 1.
    cheapest = [min(c.cost for c in generate("memaudit-small", s).candidates) for s in seeds]
    assert min(cheapest) > 0.5 and max(cheapest) <= 1.0
    curve = budget_curve(generate("memaudit-small", 0), grid, methods, ablations=())
    band = family_band("memaudit-small", seeds, {}, grid, methods, ablations=())
    ratio_fig = figures.budget_ratio_curve(curve, "ratio")
    band_fig = figures.family_band_curve(band, "band", curve.cost_unit)
    assert (min(_xs(ratio_fig)), max(_xs(ratio_fig))) == (0.0, 2.0)
    assert (min(_xs(band_fig)), max(_xs(band_fig))) == (0.0, 2.0)
    # The mean lines have a gap (no point) at the n/a budgets, a point elsewhere.
    lines = [t for t in band_fig.data if t.mode == "lines+markers"]
    assert len(lines) == len(methods)
    for t in lines:
        at = dict(zip(t.x, t.y, strict=True))
        assert list(at) == grid
        assert at[0.0] is None and at[0.5] is None
        assert all(at[b] is not None for b in (1.0, 1.5, 2.0))
        assert t.connectgaps is False


# ------------------------------------------------------- 3. show of a sweep's --out folder


def test_show_of_a_sweep_out_folder_points_at_its_files_and_the_json(tmp_path: Path) -> None:
    out = tmp_path / "o2"
    argv = ["sweep", str(REPO / "sample_packages" / "veg-to-pescatarian.json"), "--out",
            str(out), "--no-figures", "--quiet"]  # fmt: skip
    code, _, err = run_cli(*argv)
    assert code == 0, err
    code, stdout, err = run_cli("show", str(out))
    assert (code, stdout) == (2, "")
    assert err.startswith(f"{out}: $: a sweep's --out folder, not a result file: ")
    assert err.endswith("[rule: file-type]\n")
    assert "file-exists" not in err
    for name in ("report.md", "rows.csv", "summary.csv", "journal.jsonl", "--json"):
        assert name in err, name
    # The advice holds: the same sweep with --json solves nothing again, and show reads it.
    code, saved, err = run_cli(*argv, "--json")
    assert code == 0, err
    result = json.loads(saved)
    assert result["executed"] == 0 and result["reused"] == len(result["rows"]) > 0
    (tmp_path / "sweep.json").write_text(saved, encoding="utf-8")
    code, shown, err = run_cli("show", str(tmp_path / "sweep.json"))
    assert code == 0, err
    assert shown.startswith("saved sweep")


def test_show_of_another_folder_names_the_rule_that_fits(tmp_path: Path) -> None:
    (tmp_path / "adir").mkdir()
    code, out, err = run_cli("show", str(tmp_path / "adir"))
    assert (code, out) == (2, "")
    assert err == (
        f"{tmp_path / 'adir'}: $: a folder, not a result file: give a result's JSON file "
        "[rule: file-type]\n"
    )
