"""The paper's controlled package families (reference/PAPER_FAMILIES.md).

Each family is a function ``(seed, **params) -> Package`` registered in
:data:`memaudit_core.generators.FAMILIES`. The order of random draws follows the published
protocol exactly, so ``memaudit-small`` reproduces the published controlled results from its
seed. Every package records generator, parameters and seed in ``meta``.
"""

from __future__ import annotations

import random
from typing import Any

from ..package import Package, parse_package
from .base import check_count, param_error, titled, variant_names


class _Builder:
    """Accumulates experiences, units and candidates in the package's JSON shape."""

    def __init__(self) -> None:
        self.experiences: list[dict[str, Any]] = []
        self.units: dict[str, dict[str, Any]] = {}
        self.candidates: list[dict[str, Any]] = []

    def unit(self, unit_id: str, kind: str, weight: float, text: str = "") -> str:
        if unit_id not in self.units:
            self.units[unit_id] = {"id": unit_id, "kind": kind, "weight": weight, "text": text}
        return unit_id

    def experience(self, exp_id: str, time: int, text: str = "", session: str | None = None) -> str:
        exp: dict[str, Any] = {"id": exp_id, "time": time, "text": text}
        if session:
            exp["session"] = session
        self.experiences.append(exp)
        return exp_id

    def candidate(
        self, exp_id: str, ctype: str, cost: float, coverage: dict[str, float], text: str = ""
    ) -> None:
        self.candidates.append(
            {
                "id": f"{exp_id}_{ctype}",
                "experience": exp_id,
                "type": ctype,
                "cost": cost,
                "coverage": coverage,
                "text": text,
            }
        )

    def package(
        self,
        package_id: str,
        title: str,
        description: str,
        meta: dict[str, Any],
        budgets: list[float],
        budget: float,
    ) -> Package:
        doc = {
            "memaudit": 1,
            "id": package_id,
            "title": title,
            "description": description,
            "cost_unit": "words",
            "objective": {"saturation": "cap1"},
            "budget": budget,
            "budgets": budgets,
            "experiences": self.experiences,
            "units": list(self.units.values()),
            "candidates": self.candidates,
            "meta": meta,
        }
        return parse_package(doc, source=f"generated:{package_id}")


PAPER_BUDGETS = [1, 2, 4, 8, 16]


def memaudit_small(seed: int = 0, normal_count: int = 3, update_count: int = 2) -> Package:
    """The paper's base family: plain facts plus preference updates needing invalidation.

    Examples
    --------
    >>> pkg = memaudit_small(seed=0)
    >>> len(pkg.experiences), len(pkg.candidates), len(pkg.units)
    (7, 25, 11)
    """
    check_count("memaudit-small", "normal_count", normal_count, 0)
    check_count("memaudit-small", "update_count", update_count, 0)
    if normal_count + update_count == 0:
        raise param_error(
            "memaudit-small",
            ("normal_count", "update_count"),
            "normal_count + update_count must be at least 1, got normal_count=0, update_count=0",
            "count-range",
        )
    rng = random.Random(seed)
    b = _Builder()
    t = 0
    for i in range(normal_count):
        fact = b.unit(f"fact:{seed}:{i}", "fact", rng.choice([1.0, 1.2, 1.4]), f"plain fact {i}")
        context = b.unit(f"context:{seed}:{i // 2}", "context", 0.35, f"context of facts {i // 2}")
        exp = b.experience(f"s{seed}_fact_{i}", t, f"The user states plain fact {i}.")
        t += 1
        b.candidate(
            exp,
            "raw_span",
            5 + rng.randint(0, 1),
            {fact: 1.0, context: 0.4},
            f"raw turn stating fact {i} with its context",
        )
        b.candidate(exp, "atomic_fact", 2, {fact: 1.0}, f"fact {i}")
        b.candidate(exp, "summary", 3, {fact: 0.7, context: 0.5}, f"summary of fact {i}")
    for k in range(update_count):
        stale = b.unit(f"stale:pref:{seed}:{k}:old", "stale", 0.15, f"old preference {k}")
        current_w = 2.0 + 0.25 * rng.randint(0, 2)
        invalid_w = 2.0 + 0.25 * rng.randint(0, 2)
        current = b.unit(
            f"current:pref:{seed}:{k}", "current_truth", current_w, f"current preference {k}"
        )
        invalid = b.unit(
            f"invalid:pref:{seed}:{k}",
            "invalidation",
            invalid_w,
            f"old preference {k} no longer holds",
        )
        old = b.experience(
            f"s{seed}_pref_{k}_old", t, f"The user states preference {k} (old value)."
        )
        t += 1
        b.candidate(old, "raw_span", 4, {stale: 1}, f"raw turn: old preference {k}")
        b.candidate(old, "atomic_fact", 2, {stale: 1}, f"old preference {k}")
        b.candidate(old, "summary", 3, {stale: 0.75}, f"summary: old preference {k}")
        upd = b.experience(f"s{seed}_pref_{k}_update", t, f"The user changes preference {k}.")
        t += 1
        b.candidate(
            upd,
            "raw_span",
            6,
            {current: 1, invalid: 0.45, stale: 0.2},
            f"raw turn: preference {k} changed",
        )
        b.candidate(upd, "atomic_fact", 2, {current: 1}, f"current preference {k}")
        b.candidate(upd, "tombstone", 1, {invalid: 1}, f"old preference {k} is no longer true")
        b.candidate(
            upd,
            "compound_update",
            3,
            {current: 1, invalid: 1},
            f"preference {k}: old value superseded by new value",
        )
        b.candidate(
            upd,
            "summary",
            4,
            {current: 0.75, invalid: 0.75, stale: 0.1},
            f"summary: preference {k} changed",
        )
    params = {"normal_count": normal_count, "update_count": update_count}
    id_tag, details = variant_names(memaudit_small, params)
    return b.package(
        f"memaudit-small-s{seed}{id_tag}",
        titled("memaudit-small", [f"seed {seed}", *details]),
        "The paper's base family: plain facts with context, and preference updates whose "
        "current truth and invalidation must both survive.",
        {"generator": "memaudit-small", "params": params, "seed": seed},
        PAPER_BUDGETS,
        6,
    )


def update_chain(seed: int = 0, length: int = 3) -> Package:
    """A chain of supersessions; seed-invariant (the seed is recorded but draws nothing).

    Examples
    --------
    >>> pkg = update_chain()
    >>> len(pkg.experiences), len(pkg.candidates), len(pkg.units), pkg.total_cost()
    (4, 18, 7, 51.0)
    """
    check_count("update_chain", "length", length, 1)
    b = _Builder()
    v = [b.unit(f"v_{s}", "stale", 0.1, f"value version {s}") for s in range(length)]
    v.append(b.unit(f"v_{length}", "current_truth", 2.3, f"value version {length} (current)"))
    inv = [
        b.unit(f"inv_{s}", "invalidation", 1.85, f"version {s} is no longer current")
        for s in range(length)
    ]
    # Keep unit order readable: versions then invalidations.
    b.units = {u: b.units[u] for u in v + inv}
    e0 = b.experience("version_0", 0, "The user states the initial value.")
    b.candidate(e0, "raw_span", 4, {v[0]: 1}, "raw turn: initial value")
    b.candidate(e0, "atomic_fact", 2, {v[0]: 1}, "value = version 0")
    b.candidate(e0, "summary", 3, {v[0]: 0.7}, "summary: initial value")
    for s in range(1, length + 1):
        e = b.experience(f"update_{s}", s, f"The user updates the value to version {s}.")
        b.candidate(
            e,
            "raw_span",
            5,
            {v[s]: 1, inv[s - 1]: 0.35, v[s - 1]: 0.15},
            f"raw turn: value changed to version {s}",
        )
        b.candidate(e, "atomic_fact", 2, {v[s]: 1}, f"value = version {s}")
        b.candidate(e, "tombstone", 1, {inv[s - 1]: 1}, f"version {s - 1} is no longer true")
        b.candidate(
            e,
            "compound_update",
            3,
            {v[s]: 0.95, inv[s - 1]: 1},
            f"version {s - 1} superseded by version {s}",
        )
        b.candidate(e, "summary", 3, {v[s]: 0.65, inv[s - 1]: 0.65}, f"summary: now version {s}")
    id_tag, details = variant_names(update_chain, {"length": length})
    return b.package(
        f"update_chain{id_tag}",
        titled("update_chain", details),
        "Validity stress: a chain of supersessions where tombstones and compound updates carry "
        "most of the value.",
        {"generator": "update_chain", "params": {"length": length}, "seed": seed},
        [3, 6, 13],
        6,
    )


def temporal_interval(seed: int = 0, intervals: int = 5, closures: int = 2) -> Package:
    """Interval facts plus closures that invalidate open intervals; seed-invariant.

    Examples
    --------
    >>> pkg = temporal_interval()
    >>> len(pkg.experiences), len(pkg.candidates), len(pkg.units), pkg.total_cost()
    (7, 30, 26, 88.0)
    """
    check_count("temporal_interval", "intervals", intervals, 1)
    check_count("temporal_interval", "closures", closures, 0)
    if closures > intervals:
        # Closure j closes interval j: more closures than intervals closed intervals that were
        # never opened (generator QA s38).
        raise param_error(
            "temporal_interval",
            ("closures", "intervals"),
            f"closures ({closures}) must not exceed intervals ({intervals}): closure j closes "
            "interval j",
            "count-range",
        )
    b = _Builder()
    for j in range(intervals):
        label = b.unit(f"label_{j}", "fact", 0.9, f"what interval {j} is")
        start = b.unit(f"start_{j}", "temporal_interval", 0.75, f"start of interval {j}")
        end = b.unit(f"end_{j}", "temporal_interval", 0.85, f"end of interval {j}")
        duration = b.unit(f"duration_{j}", "temporal_interval", 0.55, f"duration of interval {j}")
        e = b.experience(f"interval_{j}", j, f"The user describes interval {j}.")
        b.candidate(e, "atomic_fact", 2, {label: 1}, f"interval {j} happened")
        b.candidate(
            e, "interval_fact", 3, {start: 1, end: 1, duration: 0.7}, f"interval {j}: start, end"
        )
        b.candidate(
            e, "summary", 2, {label: 0.85, start: 0.35, end: 0.35}, f"summary of interval {j}"
        )
        b.candidate(
            e,
            "raw_span",
            5,
            {label: 1, start: 1, end: 1, duration: 1},
            f"raw turn describing interval {j}",
        )
    for j in range(closures):
        open_u = b.unit(f"open_{j}", "stale", 0.1, f"interval {j} is open")
        closed = b.unit(f"closed_{j}", "current_truth", 1.4, f"interval {j} is closed")
        inv = b.unit(
            f"invalid_open_{j}", "invalidation", 1.6, f"'interval {j} open' no longer holds"
        )
        e = b.experience(f"closure_{j}", intervals + j, f"The user closes interval {j}.")
        b.candidate(e, "raw_span", 5, {closed: 1, inv: 0.45, open_u: 0.15}, f"raw turn: {j} closed")
        b.candidate(e, "atomic_fact", 2, {closed: 1}, f"interval {j} is closed")
        b.candidate(e, "tombstone", 1, {inv: 1}, f"interval {j} is no longer open")
        b.candidate(e, "compound_update", 3, {closed: 1, inv: 1}, f"interval {j}: open -> closed")
        b.candidate(e, "summary", 3, {closed: 0.7, inv: 0.7}, f"summary: interval {j} closed")
    id_tag, details = variant_names(
        temporal_interval, {"intervals": intervals, "closures": closures}
    )
    return b.package(
        f"temporal_interval{id_tag}",
        titled("temporal_interval", details),
        "Temporal stress: interval facts (start, end, duration) and closures that invalidate "
        "open intervals.",
        {
            "generator": "temporal_interval",
            "params": {"intervals": intervals, "closures": closures},
            "seed": seed,
        },
        [3, 6, 13],
        6,
    )
