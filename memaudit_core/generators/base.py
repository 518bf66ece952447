"""The family record shared by every generator module."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..package import Package


@dataclass(frozen=True)
class Family:
    name: str
    build: Callable[..., Package]
    seeded: bool
    description: str
    param_help: dict[str, str] = field(default_factory=dict)
    #: Estimated candidates plus coverage entries for given parameters (every parameter
    #: passed, defaults filled in), so that :func:`~memaudit_core.generators.generate` can
    #: refuse a package too large to build before building it. None: no estimate.
    size: Callable[..., float] | None = None

    def defaults(self) -> dict[str, Any]:
        sig = inspect.signature(self.build)
        return {
            k: p.default
            for k, p in sig.parameters.items()
            if k != "seed" and p.default is not inspect.Parameter.empty
        }
