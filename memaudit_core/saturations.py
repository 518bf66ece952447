"""The saturation registry: every concave h the objective F = sum_r w_r h(z_r) may use.

A leaf module, so that package validation (which names the known saturations) and the
objective (which evaluates them) read one table; :mod:`memaudit_core.objective` re-exports it.

Examples
--------
>>> sorted(SATURATIONS)
['cap1', 'linear', 'log1p']
>>> get_saturation("cap1").h_scalar(1.7)
1.0
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .errors import UnknownNameError, cut_repr


@dataclass(frozen=True)
class Saturation:
    """A concave, nondecreasing h with h(0) = 0 (vectorised and scalar forms)."""

    name: str
    h: Callable[[np.ndarray], np.ndarray]
    h_scalar: Callable[[float], float]
    description: str
    #: The largest value h can add for one unit of weight (inf when unbounded).
    cap: float


def _cap1(z: np.ndarray) -> np.ndarray:
    return np.minimum(1.0, z)


def _cap1_scalar(z: float) -> float:
    return min(1.0, z)


def _linear(z: np.ndarray) -> np.ndarray:
    return np.asarray(z, float)


def _linear_scalar(z: float) -> float:
    return z


# Module-level functions, not lambdas, so that a Saturation pickles (library QA).
SATURATIONS: dict[str, Saturation] = {
    "cap1": Saturation("cap1", _cap1, _cap1_scalar, "h(z) = min(1, z)", 1.0),
    "linear": Saturation("linear", _linear, _linear_scalar, "h(z) = z", math.inf),
    "log1p": Saturation("log1p", np.log1p, math.log1p, "h(z) = ln(1 + z)", math.inf),
}


def get_saturation(name: str) -> Saturation:
    """The saturation named ``name``, or an :class:`UnknownNameError` listing the known ones."""
    try:
        return SATURATIONS[name]
    except (KeyError, TypeError):  # TypeError: an unhashable name such as a list
        raise UnknownNameError(
            f"unknown saturation {cut_repr(name)} (known: {', '.join(SATURATIONS)})"
        ) from None


__all__ = ["SATURATIONS", "Saturation", "get_saturation"]
