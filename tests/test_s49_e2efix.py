"""End-to-end QA s49 (findings 2-5 of the e2e report).

2. A sweep row whose OPT was not certified could hold a store worth more than that OPT (ratio
   above 1, shown "1.000*"), while the note called the OPT "the best store found".
3. The Generator form wrote a refused parameter set into the link as ``preview=gen:...``,
   which the page's own link reader then refused.
4. A link's bad seed and a backwards ``--family NAME:A-B`` range named no rule.
5. A Zep warning about a link in an edge's ``attributes`` named the edge, not the key.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path
from types import SimpleNamespace

from app_utils import open_app, open_linked
from cli_utils import run_cli

import memaudit_core.analysis as analysis
from memaudit_core.analysis import uncertified_note
from memaudit_core.importers import load_external_store
from memaudit_core.package import load_package

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"
GENERATOR = "pages/7_Generator.py"


# --------------------------------------------------------------------------- finding 2


def test_an_unproven_sweep_opt_is_never_below_a_package_store_it_scores(monkeypatch):
    """A limited solve that only returns the incumbent it is given (the weakest honest limited
    engine): the row's OPT must still be at least the store the same task scores."""
    real = analysis.solve_budgets

    def limited(inst, grid, solver, *, incumbents=None, **kwargs):
        out = []
        for res, inc in zip(real(inst, grid, "bnb"), incumbents or [None] * len(grid), strict=True):
            idx = tuple(inc) if inc else ()
            out.append(
                dataclasses.replace(
                    res,
                    value=analysis.evaluate(inst, idx),
                    selected=inst.ids(idx),
                    selected_idx=idx,
                    cost=inst.selection_cost(idx),
                    status="limit",
                    certificate=None,
                )
            )
        return out

    monkeypatch.setattr(analysis, "solve_budgets", limited)
    pkg = load_package(SAMPLES / "veg-to-pescatarian.json")
    budget = 40.0
    keyed, failed = analysis.sweep_package(pkg, [budget], [], stores=["validity-aware"])
    assert failed == []
    (row,) = [r for key, r in keyed if key == "store:validity-aware"]
    # The store keeps e4:update and e2:fact at 40 words (10 words): a store of some value.
    assert row.value > 0 and row.cost <= budget
    assert not row.certified
    assert row.opt >= row.value, (row.opt, row.value)
    assert row.ratio <= 1 + 1e-12


def test_the_note_says_an_uncertified_opt_is_known_too_low_where_a_value_beats_it():
    rows = [
        SimpleNamespace(certified=False, value=1e9 + 0.5, opt=1e9, opt_bound=1.5e9, ratio=None),
        SimpleNamespace(certified=False, value=5.0, opt=6.0, opt_bound=7.0, ratio=None),
        SimpleNamespace(certified=True, value=5.0, opt=6.0, opt_bound=6.0, ratio=None),
    ]
    note = uncertified_note(rows, time_limit=1.0)
    assert "2 of 3 rows compare with an optimum that was not certified" in note
    assert "1 of them have a value above that OPT (ratio above 1)" in note
    assert "that OPT is known to be too low" in note
    # Without such a row the sentence is not there.
    assert "ratio above 1" not in uncertified_note(rows[1:], time_limit=1.0)


# --------------------------------------------------------------------------- finding 3


def test_a_refused_parameter_set_is_not_written_into_the_link():
    at = open_app(GENERATOR, package="gen:memaudit-small:0")
    assert not at.exception, [e.value for e in at.exception]
    at.text_input(key="gen_memaudit-small_normal_count").set_value("0")
    at.text_input(key="gen_memaudit-small_update_count").set_value("0")
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value.replace("\\", "") for e in at.error]
    assert any("These parameters do not make a package" in e for e in errors), errors
    assert "preview" not in at.query_params, dict(at.query_params)


# --------------------------------------------------------------------------- finding 4


def test_a_links_bad_seed_names_the_seed_rule():
    at = open_linked(GENERATOR, "gen:memaudit-small:0", None, preview="gen:memaudit-small:-1")
    shown = [e.value.replace("\\", "") for e in itertools.chain(at.error, at.warning, at.info)]
    hits = [m for m in shown if "'-1'" in m and "digits 0-9 only" in m]
    assert hits and all("[rule: seed]" in m for m in hits), shown


def test_a_backwards_seed_range_names_a_rule():
    code, _out, err = run_cli("sweep", "--family", "update_chain:3--1", "--budgets", "2")
    assert code == 2, err
    assert "'3--1' runs backwards" in err and "[rule: seed-range]" in err, err


# --------------------------------------------------------------------------- finding 5


def test_a_zep_attributes_link_naming_nothing_is_warned_of_at_its_key(tmp_path):
    edges = [
        {
            "uuid": "e1",
            "fact": "Alice prefers vegetarian meals",
            "episodes": [],
            "created_at": "2025-04-20T09:02:00Z",
            "attributes": {"unit_id": "u:meal:old"},
        },
        {
            "uuid": "e2",
            "fact": "Alice is pescatarian",
            "episodes": [],
            "created_at": "2025-05-03T18:25:00Z",
            "attributes": {"dia_id": "D9:9"},
        },
    ]
    path = tmp_path / "zep.json"
    path.write_text(json.dumps(edges))
    pkg = load_package(SAMPLES / "veg-to-pescatarian.json")
    store = load_external_store(path, "zep", package=pkg)
    warnings = " | ".join(store.meta.get("warnings", []))
    assert "$[1].attributes.dia_id: 'D9:9'" in warnings, warnings
