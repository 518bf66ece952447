"""MemAudit core: score LLM memory stores against the exact, certified optimum of a package.

Data flows one way: load -> validate (:mod:`.package`) -> compile (:mod:`.compiled`) ->
solve / write / sweep (:mod:`.solvers`, :mod:`.writers`, :mod:`.analysis`) -> frozen results ->
render (the CLI in :mod:`.cli`, the Streamlit app in ``app.py`` + ``pages/``).

The names most scripts need are importable from here (each loads its module on first use, so
``import memaudit_core`` stays cheap):

>>> import memaudit_core as ma
>>> pkg = ma.generate("update_chain")
>>> opt = ma.solve(ma.compile_package(pkg), 6)
>>> opt.label, round(opt.value, 3)
('OPT', 7.735)
>>> ev = ma.score_selection(pkg, 6, ["update_1_tombstone", "update_2_tombstone"])
>>> ev.ratio_text
'0.478'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the lazy names below, for type checkers and IDEs (library QA: seen as Any)
    from .analysis import StoreEvaluation, SweepResult, score, score_selection, sweep  # noqa: F401
    from .compiled import CompiledInstance, compile_package  # noqa: F401
    from .curves import budget_curve  # noqa: F401
    from .errors import (  # noqa: F401
        MemAuditError,
        PackageError,
        ResultError,
        SaturationError,
        UsageError,
        WriterError,
    )
    from .explain import compare_view, evidence_view  # noqa: F401
    from .generators import FAMILIES, generate  # noqa: F401
    from .importers import load_external_store  # noqa: F401
    from .package import (  # noqa: F401
        Candidate,
        Experience,
        ExternalMemory,
        Package,
        Query,
        Store,
        Unit,
        load_package,
        parse_package,
    )
    from .results import read_result  # noqa: F401
    from .saturations import (  # noqa: F401
        SATURATIONS,
        Saturation,
        register_saturation,
        unregister_saturation,
    )
    from .solvers import SolveResult, solve, solve_budgets  # noqa: F401
    from .union import UnionScore, union_report, with_store  # noqa: F401
    from .writers import (  # noqa: F401
        WRITERS,
        WriterInfo,
        register_writer,
        run_writer,
        unregister_writer,
    )

__version__ = "0.1.0"

#: Public name -> the module that defines it. No name may equal a submodule's (``audit`` the
#: function would shadow ``memaudit_core.audit`` the module, depending on import order).
_EXPORTS = {
    "load_package": "package",
    "parse_package": "package",
    "Package": "package",
    # QA s42 defect 5: Package's docstring says to build one from these; they were not here.
    "Experience": "package",
    "Unit": "package",
    "Candidate": "package",
    "Query": "package",
    "Store": "package",
    "ExternalMemory": "package",
    "compile_package": "compiled",
    "CompiledInstance": "compiled",
    "solve": "solvers",
    "solve_budgets": "solvers",
    "SolveResult": "solvers",
    "score": "analysis",
    "score_selection": "analysis",
    "sweep": "analysis",
    "StoreEvaluation": "analysis",
    "SweepResult": "analysis",
    "budget_curve": "curves",
    "compare_view": "explain",
    "evidence_view": "explain",
    "union_report": "union",
    "with_store": "union",
    "load_external_store": "importers",
    "generate": "generators",
    "FAMILIES": "generators",
    "run_writer": "writers",
    "register_writer": "writers",
    "unregister_writer": "writers",
    "WriterInfo": "writers",
    "WRITERS": "writers",
    # QA s46: saturations are a registry too, read-only, added to through a checked function.
    "register_saturation": "saturations",
    "unregister_saturation": "saturations",
    "Saturation": "saturations",
    "SATURATIONS": "saturations",
    "MemAuditError": "errors",
    "UsageError": "errors",
    "PackageError": "errors",
    "WriterError": "errors",
    "ResultError": "errors",
    "SaturationError": "errors",
    "read_result": "results",
    "UnionScore": "union",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'memaudit_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
