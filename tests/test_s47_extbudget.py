"""QA s47 (extbudget): the budget was capped at the package's total candidate cost, which an
external store can exceed. veg-to-pescatarian (112 words of candidates) with an external
store ``notes`` of 7 memories at 25 words, one unit each: ``Compare?budget=175&store=
store:notes`` said "every candidate fits, so the budget is set to 112" and cut the store to
fit (F 3, ratio 0.353, where the CLI gives 8.5 = OPT_P+), the slider stopped at 112, and a
sweep of the store at 150 claimed its point repeats the one at 112.

Every expected value is computed here from the package's JSON: totals by summing costs, F and
OPT over the union package P+ by enumerating every feasible selection.
"""

from __future__ import annotations

import itertools
import json
from functools import cache
from pathlib import Path

from app_utils import APP, open_linked, upload_file
from cli_utils import run_cli
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parent.parent
COMPARE = "pages/2_Compare.py"
SWEEP = "pages/1_Budget_sweep.py"
RULE = "(rule: budget-above-total)"
MEMORY_COST = 25


@cache
def _doc() -> dict:
    doc = json.loads((REPO / "sample_packages" / "veg-to-pescatarian.json").read_text())
    memories = [
        {
            "id": f"note-{i}",
            "text": " ".join(["word"] * MEMORY_COST),
            "cost": MEMORY_COST,
            "coverage": {unit["id"]: 1},
        }
        for i, unit in enumerate(doc["units"])
    ]
    doc["stores"].append({"id": "notes", "label": "Notes", "system": "amem", "memories": memories})
    return doc


def _data() -> bytes:
    return json.dumps(_doc()).encode()


def _totals() -> tuple[float, float]:
    """(the candidates' total cost, the total of the union with the notes store)."""
    doc = _doc()
    package = sum(c["cost"] for c in doc["candidates"])
    return package, package + sum(m["cost"] for m in doc["stores"][-1]["memories"])


def _f(rows: list[dict]) -> float:
    """F under cap1, unit weights from the queries (no unit sets its own weight here)."""
    doc = _doc()
    assert all("weight" not in u for u in doc["units"])
    weights: dict[str, float] = {}
    for query in doc["queries"]:
        for unit in query["requires"]:
            weights[unit] = weights.get(unit, 0.0) + query["weight"]
    z: dict[str, float] = {}
    for row in rows:
        for unit, a in row["coverage"].items():
            z[unit] = z.get(unit, 0.0) + a
    return sum(w * min(1.0, z.get(u, 0.0)) for u, w in weights.items())


def _opt_union(budget: float) -> float:
    """OPT over P+ by enumeration: at most one candidate per experience, any memories."""
    doc = _doc()
    groups: dict[str, list[dict]] = {}
    for cand in doc["candidates"]:
        groups.setdefault(cand["experience"], []).append(cand)
    memories = doc["stores"][-1]["memories"]
    best = 0.0
    for pick in itertools.product(*([None, *g] for g in groups.values())):
        chosen = [c for c in pick if c is not None]
        cost = sum(c["cost"] for c in chosen)
        if cost > budget:
            continue
        for mask in range(1 << len(memories)):
            extra = [m for i, m in enumerate(memories) if mask >> i & 1]
            if cost + sum(m["cost"] for m in extra) <= budget:
                best = max(best, _f(chosen + extra))
    return best


def _best_store_subset(budget: float) -> float:
    """The most any subset of the store's memories within ``budget`` can score."""
    memories = _doc()["stores"][-1]["memories"]
    return max(
        _f(list(sub))
        for k in range(len(memories) + 1)
        for sub in itertools.combinations(memories, k)
        if sum(m["cost"] for m in sub) <= budget
    )


def test_the_package_built_here_is_what_the_tests_assume() -> None:
    package, union = _totals()
    assert (package, union) == (112, 287)
    whole = _f(_doc()["stores"][-1]["memories"])
    assert whole == 8.5 == _opt_union(175)
    # Cut below its 175 words the store scores less than whole: its points there differ.
    assert _best_store_subset(150) == 8.0 < whole


def _upload() -> str:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    return upload_file(at, "veg-notes.json", _data())


def _linked(key: str, budget: str) -> AppTest:
    """The app opened by ``package=KEY&budget=BUDGET&store=store:notes`` (its first run,
    where the link's problems are said)."""
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params["package"] = key
    at.query_params["budget"] = budget
    at.query_params["store"] = "store:notes"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _said(at: AppTest) -> list[str]:
    # As the reader sees it: the messages are Markdown-escaped.
    return [w.value.replace("\\", "") for w in (*at.warning, *at.error)]


def test_compare_at_175_keeps_the_whole_external_store() -> None:
    _, union = _totals()
    at = _linked(_upload(), "175")
    assert not [w for w in _said(at) if "total" in w], _said(at)
    at.switch_page(COMPARE).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["ma_budget"] == 175
    slider = at.slider(key="w_budget")
    assert slider.value == 175
    assert slider.max == union, slider.max
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["F (store)"]) == _f(_doc()["stores"][-1]["memories"]), metrics
    assert float(metrics["OPT over P+"]) == _opt_union(175), metrics
    assert metrics["Ratio F / OPT over P+"] == "1.000", metrics


def test_a_link_budget_above_the_union_total_is_set_to_it_and_said() -> None:
    _, union = _totals()
    at = _linked(_upload(), "300")
    said = [w for w in _said(at) if "budget=300" in w]
    assert len(said) == 1, _said(at)
    assert f"memories of store 'notes' ({union:g} words)" in said[0], said[0]
    assert f"the budget is set to {union:g}" in said[0], said[0]
    assert at.session_state["ma_budget"] == union


def _sweep(path: Path, budgets: str, *extra: str) -> tuple[list[dict], str]:
    rc, out, err = run_cli(
        "sweep",
        str(path),
        "--stores",
        "notes",
        "--writers",
        "",
        "--budgets",
        budgets,
        "--json",
        *extra,
    )
    assert rc == 0, err
    return json.loads(out)["rows"], err


def test_a_sweep_of_the_store_below_its_union_total_claims_no_repeat(tmp_path) -> None:
    package, union = _totals()
    path = tmp_path / "veg-notes.json"
    path.write_bytes(_data())
    for extra in ((), ("--out", str(tmp_path / "out"))):  # the file and the suite paths
        rows, err = _sweep(path, "100,150", *extra)
        assert RULE not in err, (extra, err)
        at_150 = next(r for r in rows if r["budget"] == 150)
        assert at_150["value"] <= _best_store_subset(150) < _f(_doc()["stores"][-1]["memories"])

        _, err = _sweep(path, f"150,{union + 13:g}", *extra)
        assert (
            f"1 of the 2 budgets ({union + 13:g}) is above the total cost of the package's "
            f"candidates plus the memories of store 'notes' ({union:g} words)" in err
        ), (extra, err)
        assert f"the one at B = {union:g} {RULE}" in err, err
    # Without the store the candidates' total is still the one that counts.
    rc, _, err = run_cli("sweep", str(path), "--writers", "gvt", "--budgets", "100,150")
    assert rc == 0, err
    assert f"above the package's total candidate cost ({package:g} words)" in err, err


def test_cost_total_counts_kept_memories_only() -> None:
    from memaudit_core.package import cost_total, parse_package

    package, union = _totals()
    doc = json.loads(json.dumps(_doc()))
    doc["stores"][-1]["memories"][0]["status"] = "deleted"
    pkg = parse_package(doc)
    assert cost_total(pkg).total == package  # no store named: the candidates alone
    assert cost_total(pkg, ["fact-only"]).total == package  # a store of candidates adds none
    full = cost_total(pkg, None)
    assert (full.total, full.store) == (union - MEMORY_COST, "notes")


def test_the_budget_sweep_counts_a_chosen_external_store() -> None:
    _, union = _totals()
    at = open_linked(SWEEP, _upload(), "12", methods="store:notes")
    assert at.multiselect(key="sweep_methods").value == ["store:notes"]
    at.radio(key="sweep_grid").set_value("range").run()
    at.number_input(key="sweep_start").set_value(50.0)
    at.number_input(key="sweep_stop").set_value(200.0)
    at.number_input(key="sweep_step").set_value(50.0).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [w for w in _said(at) if RULE in w], _said(at)
    at.number_input(key="sweep_stop").set_value(300.0).run()
    above = [w for w in _said(at) if RULE in w]
    assert len(above) == 1 and f"store 'notes' ({union:g} words)" in above[0], _said(at)
