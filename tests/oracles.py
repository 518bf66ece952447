"""Brute-force oracles shared by tests (tests/ is on pytest's pythonpath).

Each is written from the package format (README, "Package format") in plain Python, and
shares nothing with memaudit_core's solvers or compiled instances: a compile or engine bug
must not be able to agree with itself through them (mutation testing: oracles over the
compiled arrays shared a compile bug).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

#: The built-in saturations' h, written out here rather than read from the registry.
BUILTIN_H: dict[str, Callable[[float], float]] = {
    "cap1": lambda z: min(1.0, z),
    "linear": lambda z: z,
    "log1p": math.log1p,
}


def unit_weights(doc: dict) -> dict[str, float]:
    """Each unit's weight: its ``weight``, else the sum of the weights (default 1) of the
    queries that require it."""
    weight = {u["id"]: float(u["weight"]) for u in doc["units"] if "weight" in u}
    for q in doc.get("queries", []):
        for u in q["requires"]:
            if u not in {x["id"] for x in doc["units"] if "weight" in x}:
                weight[u] = weight.get(u, 0.0) + float(q.get("weight", 1))
    return weight


def opt_by_enumeration(
    doc: dict, budget: float, h: Callable[[float], float] | None = None
) -> float:
    """OPT of a package dict: max F = sum_u w_u h(z_u) over every store of one candidate or
    none per experience whose cost is at most B (1 + 1e-9).

    ``h`` defaults to the written-out h of the package's built-in saturation (cap1 when it
    names none); pass one for a registered saturation.
    """
    if h is None:
        h = BUILTIN_H[doc.get("objective", {}).get("saturation", "cap1")]
    weight = unit_weights(doc)
    groups: dict[str, list[dict]] = {}
    for c in doc["candidates"]:
        groups.setdefault(c["experience"], []).append(c)
    best = 0.0
    for pick in itertools.product(*[[None, *g] for g in groups.values()]):
        chosen = [c for c in pick if c is not None]
        if sum(c["cost"] for c in chosen) > budget * (1 + 1e-9):
            continue
        z: dict[str, float] = {}
        for c in chosen:
            for u, a in c["coverage"].items():
                z[u] = z.get(u, 0.0) + a
        best = max(best, sum(w * h(z.get(u, 0.0)) for u, w in weight.items()))
    return best
