"""Package helpers shared by tests (tests/ is on pytest's pythonpath)."""

from __future__ import annotations

import contextlib
import json
import math
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from memaudit_core.errors import PackageError
from memaudit_core.package import Package, package_to_dict, parse_package
from memaudit_core.saturations import Saturation

#: A one-memory Mem0 export (m1, updated after it was created), for history tests.
MEM0_EXPORT = {
    "results": [
        {
            "id": "m1",
            "memory": "I live in Lisbon now.",
            "created_at": "2023-05-09T10:00:00+00:00",
            "updated_at": "2023-06-01T21:00:00+00:00",
        }
    ]
}


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


def write_json(folder: Path, name: str, obj: object) -> Path:
    """``obj`` as JSON in ``folder/name``; the file's path."""
    path = folder / name
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def refused(call: Callable[[], object]) -> list[tuple[str, str]]:
    """The (JSON path, rule) of each problem of the PackageError ``call()`` must raise."""
    with pytest.raises(PackageError) as info:
        call()
    return [(p.path, p.rule) for p in info.value.problems]


def mem0_history_db(path: Path, rows: list[tuple]) -> Path:
    """A Mem0 ``history.db`` (SQLite, the current ``history`` table's columns) holding
    ``rows``: (id, memory_id, old_memory, new_memory, event, created_at, updated_at,
    is_deleted, actor_id, role)."""
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE history (id TEXT PRIMARY KEY, memory_id TEXT, old_memory TEXT, "
        "new_memory TEXT, event TEXT, created_at DATETIME, updated_at DATETIME, "
        "is_deleted INTEGER, actor_id TEXT, role TEXT)"
    )
    con.executemany("INSERT INTO history VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
    con.commit()
    con.close()
    return path


def random_groups_with_store(n_groups: int = 100, n_memories: int = 40) -> Package:
    """``random_coverage`` seed 0 with one external store ``ext`` of ``n_memories`` memories,
    each covering 3 random units (seed 1): at 100 groups, a union curve no solve proves within
    a short time share."""
    import random
    from dataclasses import replace

    from memaudit_core.generators import generate
    from memaudit_core.package import load_package, replace_package

    demo = load_package(
        Path(__file__).resolve().parent.parent / "sample_packages" / "external-stores-demo.json"
    )
    template = next(s for s in demo.stores if s.is_external)
    pkg = generate("random_coverage", seed=0, n_groups=n_groups)
    rng = random.Random(1)
    units = [u.id for u in pkg.units]
    memories = tuple(
        replace(
            template.memories[0],
            id=f"x{i}",
            cost=round(rng.uniform(1, 6), 3),
            coverage={u: 1.0 for u in rng.sample(units, 3)},
            text=f"memory {i}",
            status="active",
            meta={},
            created_at=f"2025-04-{10 + i % 20:02d}T09:00:00+00:00",
        )
        for i in range(n_memories)
    )
    store = replace(template, id="ext", memories=memories)
    return replace_package(pkg, stores=(*pkg.stores, store))


@contextlib.contextmanager
def registered_saturation(sat: Saturation) -> Iterator[Saturation]:
    """``sat`` registered for the block and unregistered after it (the registry is
    process-wide, so a test must not leave its saturation behind)."""
    from memaudit_core.saturations import register_saturation, unregister_saturation

    register_saturation(sat)
    try:
        yield sat
    finally:
        unregister_saturation(sat.name)


def _sqrt(z: np.ndarray) -> np.ndarray:
    return np.sqrt(np.asarray(z, dtype=np.float64))


#: A concave saturation not built in (module-level functions, so that workers receive it).
SQRT = Saturation("sqrt", _sqrt, math.sqrt, "h(z) = sqrt(z)", math.inf)
