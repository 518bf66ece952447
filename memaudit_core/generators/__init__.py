"""Package sources: the one family registry and :func:`generate`.

A family is a function ``(seed=..., **params) -> Package``. :data:`FAMILIES` maps its name to a
:class:`Family` record that says whether the seed matters and documents its parameters.

Examples
--------
>>> pkg = generate("memaudit-small", seed=3)
>>> pkg.meta["generator"], pkg.meta["seed"]
('memaudit-small', 3)
"""

from __future__ import annotations

from typing import Any

from ..errors import MemAuditError, UnknownNameError
from ..package import Package
from . import event_graph, paper, stress, synthetic
from .base import Family

FAMILIES: dict[str, Family] = {}


def register_family(family: Family) -> Family:
    FAMILIES[family.name] = family
    return family


register_family(
    Family(
        "memaudit-small",
        paper.memaudit_small,
        True,
        "The paper's base family: 3 plain facts and 2 preference updates (7 experiences).",
        {"normal_count": "plain-fact experiences", "update_count": "preference updates"},
    )
)
register_family(
    Family(
        "update_chain",
        paper.update_chain,
        False,
        "A chain of supersessions (seed-invariant): validity types carry the value.",
        {"length": "number of updates after the initial version"},
    )
)
register_family(
    Family(
        "temporal_interval",
        paper.temporal_interval,
        False,
        "Interval facts plus closures that invalidate open intervals (seed-invariant).",
        {"intervals": "interval experiences", "closures": "closure experiences"},
    )
)

# Other generator modules each expose FAMILY_RECORDS: list[Family].
for _module in (stress, event_graph, synthetic):
    for _family in _module.FAMILY_RECORDS:
        register_family(_family)


_KIND_WORDS = {bool: "true or false", int: "an integer", float: "a number"}


def _coerce(value: Any, default: Any, name: str) -> Any:
    if isinstance(value, str) and default is not None and not isinstance(default, str):
        try:
            if isinstance(default, bool):
                if value.lower() in ("1", "true", "yes"):
                    return True
                if value.lower() in ("0", "false", "no"):
                    return False
                raise ValueError(value)
            return type(default)(value)
        except ValueError:
            kind = _KIND_WORDS.get(type(default), f"a {type(default).__name__}")
            raise MemAuditError(f"parameter {name!r} must be {kind}, got {value!r}") from None
    return value


def generate(family: str, seed: int = 0, **params: Any) -> Package:
    """Build a package of a registered family.

    Parameters given as strings (from the CLI) are converted to the type of the default.

    Raises
    ------
    UnknownNameError
        For an unknown family or parameter.
    MemAuditError
        For a seed that is not an integer >= 0.
    """
    if family not in FAMILIES:
        raise UnknownNameError(f"unknown family {family!r} (known: {', '.join(sorted(FAMILIES))})")
    fam = FAMILIES[family]
    defaults = fam.defaults()
    clean: dict[str, Any] = {}
    for key, value in params.items():
        if key not in defaults:
            known = ", ".join(sorted(defaults)) or "none"
            raise UnknownNameError(f"family {family!r} has no parameter {key!r} (known: {known})")
        clean[key] = _coerce(value, defaults[key], key)
    if isinstance(seed, bool) or int(seed) != seed or seed < 0:
        # Python's Random(-1) draws what Random(1) draws: a negative seed would be a copy of
        # another package under a different id.
        raise MemAuditError(f"seed must be an integer >= 0, got {seed!r}")
    return fam.build(seed=int(seed), **clean)
