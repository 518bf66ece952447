"""Package helpers shared by tests (tests/ is on pytest's pythonpath)."""

from __future__ import annotations

import json

from memaudit_core.package import Package, package_to_dict, parse_package


def rescaled(pkg: Package, weight_scale: float, cost_scale: float) -> Package:
    """The same package with weights and costs in other units (plain multiplication).

    Unit and query weights are multiplied by ``weight_scale``, candidate costs and the budget
    by ``cost_scale``; the budget grid is dropped (it would need rescaling too).
    """
    doc = package_to_dict(pkg)
    for unit in doc["units"]:
        if unit.get("weight") is not None:
            unit["weight"] *= weight_scale
    for query in doc.get("queries", []):
        query["weight"] *= weight_scale
    for cand in doc["candidates"]:
        cand["cost"] *= cost_scale
    if doc.get("budget") is not None:
        doc["budget"] *= cost_scale
    doc.pop("budgets", None)
    return parse_package(json.loads(json.dumps(doc)))
