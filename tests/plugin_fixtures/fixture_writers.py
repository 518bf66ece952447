"""Test plugin writers: one valid writer, and one for each way a writer can go wrong."""

from __future__ import annotations

import os
import sys
import time

from memaudit_core.plugins import blind_writer, oracle_writer


def _cheapest_newest(view):
    kept, spent = [], 0.0
    for exp in view.newest_first():
        cands = view.candidates_of(exp.id)
        # Prefer the most expensive candidate that fits (different from the bundled recency).
        for c in sorted(cands, key=lambda c: (-c.cost, c.id)):
            if view.fits(spent, c.cost):
                kept.append(c.id)
                spent += c.cost
                break
    return kept


@blind_writer("fixture_rich", "Test: newest first, the most expensive candidate that fits.")
def rich(view):
    return _cheapest_newest(view)


def unnamed(view):
    """Test: no name attribute, so its name is module:function."""
    return _cheapest_newest(view)[:1]


def unknown_ids(view):
    return ["no-such-candidate", view.candidates[0].id, "also-missing"]


def two_per_group(view):
    for exp in view.experiences:
        cands = view.candidates_of(exp.id)
        if len(cands) >= 2:
            return [cands[0].id, cands[1].id]
    return []


def over_budget(view):
    return [view.candidates_of(e.id)[0].id for e in view.experiences if view.candidates_of(e.id)]


def over_budget_small(view):
    """Valid at large budgets, over budget below 10."""
    picks = over_budget(view)
    return picks if view.budget < 10 else _cheapest_newest(view)


def duplicates(view):
    cid = view.candidates[0].id
    return [cid, cid]


def not_a_list(view):
    return view.candidates[0].id  # a bare string


def a_dict(view):
    return {"keep": [view.candidates[0].id]}


def non_string_items(view):
    return [1, None, view.candidates[0].id]


def _deep_helper(x):
    raise ValueError(f"boom from plugin at budget {x:g}")


def raises(view):
    return _deep_helper(view.budget)


def slow(view):
    time.sleep(30)
    return []


def crash(view):
    sys.stderr.write("about to crash\n")
    os._exit(3)


def noisy(view):
    print("hello from a noisy plugin on stdout")
    print('{"event": "result", "i": 0, "ok": true}')
    return _cheapest_newest(view)


def uses_numpy(view):
    import numpy as np

    costs = np.array([c.cost for c in view.candidates])
    order = np.argsort(costs, kind="stable")
    kept, spent, groups = [], 0.0, set()
    for i in order.tolist():
        c = view.candidates[i]
        if c.experience not in groups and view.fits(spent, c.cost):
            kept.append(c.id)
            groups.add(c.experience)
            spent += c.cost
    return kept


def mutate_view(view):
    """Tries to change the view; returns what happened as an (invalid) id."""
    results = []
    for attempt in (
        lambda: setattr(view, "budget", 1e9),
        lambda: setattr(view.candidates[0], "cost", 0.0),
        lambda: view.candidates.__setitem__(0, None),
        lambda: view._candidate_index.__setitem__("x", None),
    ):
        try:
            attempt()
            results.append("changed")
        except (AttributeError, TypeError) as exc:
            results.append(type(exc).__name__)
    return ["MUTATE:" + ",".join(results)]


def probe_file(view):
    """Reads the file named in the first experience's text; reports what happened."""
    path = view.experiences[0].text.split("PROBE=", 1)[1].strip()
    try:
        with open(path, encoding="utf-8") as fh:
            return ["READ:" + fh.read()[:40]]
    except OSError as exc:
        return ["DENIED:" + type(exc).__name__]


@oracle_writer("fixture_oracle", "Test oracle plugin: gvt's store, as candidate ids.")
def oracle_gvt(inst, budget):
    from memaudit_core.writers import run_writer

    return list(run_writer("gvt", inst, budget).selected)


@oracle_writer("fixture_oracle_noisy", "Test oracle plugin that prints on stdout.")
def oracle_noisy(inst, budget):
    print("ORACLE NOISE ON STDOUT")
    return oracle_gvt(inst, budget)
