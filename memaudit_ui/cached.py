"""Cached calls into the core, keyed by the package's content hash.

The package object is passed as ``_package`` (excluded from Streamlit's argument hashing) and
the ``content_hash`` string stands for it, so identical content shares one cache entry whatever
its source. Solver objects and sparse matrices never cross this boundary.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from memaudit_core import reports
from memaudit_core.errors import MemAuditError, PackageError, SolverDisagreementError
from memaudit_core.package import Package, Store

from . import prefetch

if TYPE_CHECKING:  # the modules themselves load on first use (a page imports only its own)
    from memaudit_core import audit, curves, explain, robustness, union

_P = ParamSpec("_P")
_R = TypeVar("_R")


def user_error_text(exc: MemAuditError) -> str:
    """Markdown for a user error raised by the core: a package's problems one per line, and for
    two exact engines that disagree, that it is a defect to report (DESIGN §5: shown, never
    hidden)."""
    from .frame import md_escape, package_error_md

    if isinstance(exc, PackageError):
        return f"**{md_escape(exc.source)}: {exc.count_text()}**\n\n{package_error_md(exc)}"
    if isinstance(exc, SolverDisagreementError):
        return (
            "**The exact engines disagree, so no optimum is shown.** This is a defect in "
            f"MemAudit; please report it with the package.\n\n{md_escape(str(exc))}"
        )
    return md_escape(str(exc))


def _user_errors(
    fn: Callable[_P, _R] | None = None, *, what: str | None = None
) -> Callable[_P, _R] | Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Wrap a cached call so that a :class:`MemAuditError` from the core ends the page with an
    ``st.error`` instead of a traceback (the one guard every page's computation goes through;
    app QA: a solver disagreement showed a stack trace on four pages).

    ``what`` names the computation in the message (for an optional section, so the reader
    knows what failed). The progress bar passed as ``_progress`` is cleared first (QA: an
    empty bar stayed above the error). The guard sits outside ``st.cache_data``: an error is
    not cached, so the next run tries again.
    """

    def wrap(inner: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(inner)
        def guarded(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            try:
                return inner(*args, **kwargs)
            except MemAuditError as exc:
                bar = getattr(kwargs.get("_progress"), "bar", None)
                if bar is not None:
                    bar.empty()
                head = f"**{what} could not be computed.**\n\n" if what else ""
                st.error(head + user_error_text(exc), icon=":material/error:")
                st.stop()
                raise  # not reached: st.stop() raises

        return guarded

    return wrap if fn is None else wrap(fn)


def _writer_names(value: object) -> Iterable[str]:
    """Writer names in a store key (``writer:NAME``) or a tuple of method keys or names (a
    plugin's own name may hold a colon: ``module:function``)."""
    items = (value,) if isinstance(value, str) else tuple(value or ())
    names = []
    for item in map(str, items):
        kind, _, name = item.partition(":")
        if kind == "writer":
            names.append(name)
        elif kind not in ("store", "external", "ablation"):
            names.append(item)
    return names


def _writer_stamped(argument: str) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Pass a cached function ``writer_stamp=``, the file stamps of the plugin writers its
    ``argument`` names, so that ``st.cache_data`` keys on them.

    QA s42 (defect 1): after a plugin's file was edited, a new session showed its old F at a
    budget seen before (cached) next to its new F at another. The stamp is the one the plugin
    runner's own cache keys on (:func:`memaudit_core.plugins.writer_stamp`); it is computed on
    every call, outside the cache, and costs a stat per plugin writer.
    """

    def wrap(inner: Callable[_P, _R]) -> Callable[_P, _R]:
        signature = inspect.signature(inner)

        @functools.wraps(inner)
        def stamped(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            from memaudit_core.plugins import writer_stamp

            bound = signature.bind_partial(*args, **kwargs)
            names = _writer_names(bound.arguments.get(argument))
            kwargs["writer_stamp"] = writer_stamp(names)
            return inner(*args, **kwargs)

        return stamped

    return wrap


def _call_key(
    fn: Callable, signature: inspect.Signature, args: tuple, kwargs: dict
) -> tuple | None:
    """What names one call of a cached view: the function and every argument Streamlit hashes
    (those not starting with ``_``), as the cache itself keys it; None when an argument is not
    hashable (Streamlit hashes a list; such a call is neither prefetched nor taken)."""
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    key = (fn.__qualname__,) + tuple(
        (name, value) for name, value in bound.arguments.items() if not name.startswith("_")
    )
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _budget_view(**cache_kwargs: object) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """``st.cache_data(**cache_kwargs)`` for a view of one budget (an argument ``budget``),
    with the view one slider step either side prefetched after each call
    (:mod:`memaudit_ui.prefetch`): a cache miss takes the prefetched result when there is one.

    The neighbours are the ones :func:`memaudit_ui.frame.budget_neighbours` recorded for this
    run's budget; a call at another budget (a page's own) prefetches nothing, nor does a view
    that runs a plugin writer (a ``writer_stamp``).
    """

    def wrap(compute: Callable[_P, _R]) -> Callable[_P, _R]:
        signature = inspect.signature(compute)

        def timing_key(key: tuple) -> tuple:
            # The view's cost hardly moves from one budget to the next: keyed without it.
            return tuple(i for i in key if not (isinstance(i, tuple) and i[0] == "budget"))

        @st.cache_data(**cache_kwargs)
        @functools.wraps(compute)
        def cached_view(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            key = _call_key(compute, signature, args, kwargs)
            if key is None:
                return compute(*args, **kwargs)
            return prefetch.PREFETCHER.take_or_run(
                key, lambda: compute(*args, **kwargs), seconds_key=timing_key(key)
            )

        @functools.wraps(compute)
        def view(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            result = cached_view(*args, **kwargs)
            if not prefetch.enabled():
                return result
            from .frame import budget_neighbours

            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            if bound.arguments.get("writer_stamp"):
                # A plugin writer is the user's code, which may call a paid service: it runs
                # when its view is asked for, never on speculation.
                return result
            jobs = []
            for budget in budget_neighbours(bound.arguments["budget"]):
                moved = {**bound.arguments, "budget": budget}
                key = _call_key(compute, signature, (), moved)
                if key is not None:
                    jobs.append((key, functools.partial(compute, **moved)))
            if jobs:
                prefetch.PREFETCHER.schedule(
                    jobs, seconds_key=timing_key(jobs[0][0]), after=threading.current_thread()
                )
            return result

        view.clear = cached_view.clear  # type: ignore[attr-defined]
        return view

    return wrap


#: Per-solve time limit in the app: past it a page shows incumbent, bound and gap, not OPT.
APP_TIME_LIMIT_S = 20.0
#: What a sweep-like page (a budget curve, a seed band, an ablation curve) may spend on all
#: its solves together, unless the user picks another of :data:`PAGE_TIME_CHOICES_S`.
PAGE_TIME_S = 20.0
PAGE_TIME_CHOICES_S = (5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0)
#: Byte cap (pickled) on each per-budget view cache, on top of its entry cap: every budget
#: change adds an entry, and an entry's size grows with the package (a Compare view is 33 KB
#: at 50 experiences, 313 KB at 500; an Overview 66 KB and 611 KB), so an entry cap alone lets
#: a large package hold hundreds of MB. Least-recently-used entries go first.
VIEW_CACHE_MAX_SIZE = "64MB"


@_user_errors
@_writer_stamped("extra_writers")
@_budget_view(
    show_spinner="Solving the optimum and scoring every writer…",
    max_entries=256,
    max_size=VIEW_CACHE_MAX_SIZE,
)
def overview(
    _package: Package,
    content_hash: str,
    budget: float,
    extra_writers: tuple[str, ...] = (),
    writer_stamp: tuple[object, ...] = (),
) -> reports.Overview:
    """The Overview at ``budget``; ``extra_writers``: the sidebar's writer when it is not a
    reference writer (keyed apart, so choosing among reference writers reuses one entry)."""
    return reports.overview(
        _package, budget, time_limit=APP_TIME_LIMIT_S, extra_writers=extra_writers
    )


@_user_errors
@st.cache_data(show_spinner=False, max_entries=64)
def package_stats(_package: Package, content_hash: str) -> reports.PackageStats:
    return reports.package_stats(_package)


@_user_errors
@st.cache_data(show_spinner="Summarising the package…", max_entries=32)
def package_stats_by_key(_package: Package, package_key: str) -> reports.PackageStats:
    """:func:`package_stats` keyed by a package key whose content is fixed by the key itself.

    For ``gen:`` keys (a generated package is a pure function of family, seed and parameters),
    this skips hashing the canonical JSON, which takes about a second at 10,000 experiences.
    """
    return reports.package_stats(_package)


@_user_errors
@_writer_stamped("store_key")
@_budget_view(
    show_spinner=f"Solving the optimum (at most {APP_TIME_LIMIT_S:g} s; an unproven result is "
    "labelled incumbent) and explaining the store…",
    max_entries=128,
    max_size=VIEW_CACHE_MAX_SIZE,
)
def compare_view(
    _package: Package,
    content_hash: str,
    budget: float,
    store_key: str,
    writer_stamp: tuple[object, ...] = (),
) -> explain.CompareView:
    """:func:`memaudit_core.explain.compare_view` for a frame store key."""
    from memaudit_core import explain

    return explain.view_for_key(
        _package, budget, store_key, view="compare", time_limit=APP_TIME_LIMIT_S
    )


@_user_errors
@_writer_stamped("store_key")
@_budget_view(
    show_spinner=f"Solving the optimum (at most {APP_TIME_LIMIT_S:g} s) and preparing the "
    "evidence views…",
    max_entries=128,
    max_size=VIEW_CACHE_MAX_SIZE,
)
def evidence_view(
    _package: Package,
    content_hash: str,
    budget: float,
    store_key: str,
    kinds: tuple[str, ...] | None,
    focus_unit_id: str | None,
    heatmap_rows: str = "all",
    graph_scope: str = "all",
    writer_stamp: tuple[object, ...] = (),
) -> explain.EvidenceView:
    """:func:`memaudit_core.explain.evidence_view` for a frame store key."""
    from memaudit_core import explain

    return explain.view_for_key(
        _package,
        budget,
        store_key,
        view="evidence",
        kinds=kinds,
        focus_unit_id=focus_unit_id,
        heatmap_rows=heatmap_rows,
        graph_scope=graph_scope,
        time_limit=APP_TIME_LIMIT_S,
    )


# --------------------------------------------------------------------------- budget curves
# Progress callbacks are passed as ``_progress`` (not hashed). A cache hit never calls them.


@_user_errors
@_writer_stamped("methods")
@st.cache_data(show_spinner=False, max_entries=64)
def budget_curve(
    _package: Package,
    content_hash: str,
    budgets: tuple[float, ...],
    methods: tuple[str, ...],
    ablations: tuple[str, ...],
    total_time_limit: float = PAGE_TIME_S,
    _progress=None,
    writer_stamp: tuple[object, ...] = (),
) -> curves.BudgetCurve:
    """:func:`memaudit_core.curves.budget_curve` keyed by content hash, grid and methods.

    All the curve's solves share ``total_time_limit`` (app QA: with 20 s per solve a hard
    package's six-budget sweep took 49-54 s, and a 20-budget range could take minutes); a
    budget not proven in its share is drawn as an incumbent with its proven bound, never as
    OPT.
    """
    from memaudit_core import curves

    return curves.budget_curve(
        _package,
        budgets,
        methods,
        ablations=ablations,
        total_time_limit=total_time_limit,
        progress=_progress,
    )


@_user_errors(what="The seed band")
@_writer_stamped("methods")
@st.cache_data(show_spinner=False, max_entries=32)
def family_band(
    family: str,
    seeds: tuple[int, ...],
    params: tuple[tuple[str, object], ...],
    budgets: tuple[float, ...],
    methods: tuple[str, ...],
    ablations: tuple[str, ...],
    total_time_limit: float = PAGE_TIME_S,
    _progress=None,
    writer_stamp: tuple[object, ...] = (),
    budget_unit: str | None = None,
) -> curves.FamilyBand:
    """:func:`memaudit_core.curves.family_band`; generated packages are fixed by family, seeds
    and parameters, so those are the key. Every seed's solves share ``total_time_limit``;
    ``budgets`` are in ``budget_unit`` (the page package's)."""
    from memaudit_core import curves

    return curves.family_band(
        family,
        seeds,
        dict(params),
        budgets,
        methods,
        ablations=ablations,
        total_time_limit=total_time_limit,
        progress=_progress,
        budget_unit=budget_unit,
    )


@st.cache_data(show_spinner="Checking the package against its generator…", max_entries=64)
def family_origin(_package: Package, content_hash: str) -> curves.FamilyOrigin | None:
    """:func:`memaudit_core.curves.family_origin` keyed by content hash: the generator runs
    once per package content, at the app's size cap (a larger one is reported unchecked)."""
    from memaudit_core import curves

    from .sources import APP_MAX_GENERATED_SIZE

    return curves.family_origin(_package, max_size=APP_MAX_GENERATED_SIZE)


@_user_errors
@st.cache_data(show_spinner=False, max_entries=64)
def certification_plan(
    _package: Package, content_hash: str, budgets: tuple[float, ...], engines: tuple[str, ...]
) -> tuple[tuple[float, tuple[str, ...]], ...]:
    """:func:`memaudit_core.curves.certification_plan` keyed by content hash: the engines the
    certification runs at each budget, before it runs (the page's subtitle and its run-time
    bound both come from it; QA s41: the bound counted enumeration where it never runs)."""
    from memaudit_core import curves

    return curves.certification_plan(_package, budgets, engines)


def certification_subtitle(
    _package: Package, content_hash: str, budgets: tuple[float, ...], engines: tuple[str, ...]
) -> str:
    """The engines the certification runs at ``budgets``, in words
    (:func:`memaudit_core.curves.engines_text` of :func:`certification_plan`)."""
    from memaudit_core import curves

    plan = certification_plan(_package, content_hash, budgets, engines)
    return curves.engines_text(plan, engines)


@_user_errors
@st.cache_data(show_spinner=False, max_entries=64)
def certification_report(
    _package: Package,
    content_hash: str,
    budgets: tuple[float, ...],
    engines: tuple[str, ...],
    time_limit: float,
    total_time_limit: float | None = None,
    _progress=None,
) -> curves.CertificationReport:
    """:func:`memaudit_core.curves.certification_report` keyed by content hash and settings."""
    from memaudit_core import curves

    return curves.certification_report(
        _package,
        budgets,
        engines=engines,
        time_limit=time_limit,
        total_time_limit=total_time_limit,
        progress=_progress,
    )


# --------------------------------------------------------------------------- external stores


@_user_errors
@st.cache_data(
    show_spinner="Scoring the store in its union package…",
    max_entries=128,
    max_size=VIEW_CACHE_MAX_SIZE,
)
def union_report(
    _package: Package,
    content_hash: str,
    store_id: str,
    budget: float,
    salience_field: str | None = None,
    keep: str = "recency",
    salience_control: str = "the salience field",
) -> union.UnionReport:
    """:func:`memaudit_core.union.union_report` keyed by content hash, store and budget;
    ``salience_control`` is how the page names its salience field control."""
    from memaudit_core import union

    return union.union_report(
        _package,
        store_id,
        budget,
        salience_field=salience_field,
        keep=keep,
        time_limit=APP_TIME_LIMIT_S,
        salience_control=salience_control,
    )


@_user_errors
@st.cache_data(show_spinner="Solving kept vs upper-pruned across budgets…", max_entries=32)
def union_curve(
    _package: Package,
    content_hash: str,
    store_ids: tuple[str, ...],
    budgets: tuple[float, ...],
    salience_field: str | None = None,
    keep: str = "recency",
) -> union.UnionCurve:
    """:func:`memaudit_core.union.union_curve` keyed by content hash, stores and budgets; its
    solves share :data:`PAGE_TIME_S`, as a budget sweep's do."""
    from memaudit_core import union

    return union.union_curve(
        _package,
        store_ids,
        budgets,
        keep=keep,
        salience_field=salience_field,
        total_time_limit=PAGE_TIME_S,
    )


@_user_errors
@st.cache_data(show_spinner="Computing coverage suggestions…", max_entries=64)
def annotation_grid(
    _package: Package, content_hash: str, store_id: str, units: tuple[str, ...] | None
) -> union.AnnotationGrid:
    """:func:`memaudit_core.union.annotation_grid` for one store of the package."""
    from memaudit_core import union

    return union.annotation_grid(_package, _package.store(store_id), units)


@st.cache_data(show_spinner="Reading the export…", max_entries=32)
def import_export(
    _package: Package,
    content_hash: str,
    data: bytes,
    filename: str,
    fmt: str,
    cost_rule: str,
    store_id: str,
    history: bytes | None = None,
    history_name: str | None = None,
) -> Store:
    """:func:`memaudit_core.importers.load_external_store` on uploaded bytes.

    The bytes go to a temporary file named like the upload (so pickles are refused by name
    too); problems are reported against the upload's name, not the temporary path.
    ``history`` (mem0 only) is a history upload (JSON rows, a ``{"results": [...]}`` page or
    a ``history.db``), read as the CLI's ``--history`` is, from a temporary file named like
    ``history_name``: its problems, and the warnings that cite its rows, name the upload.
    The bytes are part of the cache key, so the same export with another history (or none)
    is another store. ``meta["history_file"]`` records the history's name, and the store's
    label names both files (``"Mem0 · e.json + history h.json"``,
    :func:`memaudit_core.importers.export_label`).
    """
    import tempfile
    from dataclasses import replace
    from pathlib import Path

    from memaudit_core.errors import PackageError
    from memaudit_core.importers import load_external_store

    name = Path(filename).name or "export.json"
    history_file = Path(history_name or "").name or "history.json"
    with tempfile.TemporaryDirectory() as tmp:
        # One folder each: an export and a history may be uploaded under one name.
        path = Path(tmp) / "export" / name
        path.parent.mkdir()
        path.write_bytes(data)
        names = {str(path): name}
        history_path = None
        if history is not None:
            history_path = Path(tmp) / "history" / history_file
            history_path.parent.mkdir()
            history_path.write_bytes(history)
            names[str(history_path)] = history_file
        try:
            store = load_external_store(
                path,
                fmt,
                cost_rule=cost_rule,
                store_id=store_id,
                package=_package,
                history=history_path,
            )
        except PackageError as exc:
            problems = [
                replace(
                    p,
                    path=_renamed(p.path, names),
                    message=_renamed(p.message, names),
                    value=_renamed(p.value, names),
                )
                for p in exc.problems
            ]
            raise PackageError(names.get(exc.source, name), problems) from None
    # The importer cites a history row by its file's path (the temporary one here).
    meta = _renamed(dict(store.meta), names)
    meta["source_file"] = name
    if history_path is not None:
        meta["history_file"] = history_file
    # The label names the upload and its history (QA s40 defect 1: each history swap added a
    # store, all "Mem0 export"; QA s51: nothing named the file): the importer's default from
    # the temporary files, which are named like the uploads.
    return replace(store, meta=meta)


def _renamed(value: object, names: dict[str, str]) -> object:
    """``value`` with each temporary path of ``names`` replaced by its upload's name, in
    strings nested in lists and dicts."""
    if isinstance(value, str):
        for tmp_path, name in names.items():
            value = value.replace(tmp_path, name)
        return value
    if isinstance(value, list | tuple):
        return type(value)(_renamed(v, names) for v in value)
    if isinstance(value, dict):
        return {k: _renamed(v, names) for k, v in value.items()}
    return value


def progress_bar(label: str) -> tuple[DeltaGenerator, Callable[[int, int], None]]:
    """An ``st.progress`` bar and a ``progress(done, total)`` callback to pass as ``_progress``.

    The callback updates the bar in the caller's context (a :mod:`contextvars` copy taken
    here, outside any cached function), so the update is not recorded as part of the cached
    function's output: a cache hit neither replays stale progress nor fails with
    ``CacheReplayClosureError`` (the bar is a block created outside the function).
    Call ``bar.empty()`` when done.
    """
    import contextvars

    bar = st.progress(0.0, text=label)
    outer = contextvars.copy_context()

    def update(done: int, total: int) -> None:
        frac = min(max(done / total, 0.0), 1.0) if total else 1.0
        outer.run(bar.progress, frac, text=f"{label} ({done} of {total})")

    update.bar = bar  # type: ignore[attr-defined]  # for _user_errors to clear
    return bar, update


# ---------------------------------------------------------------- ablations & sensitivity


@_user_errors
@st.cache_data(show_spinner=False, max_entries=128)
def ablation_curves(
    _package: Package,
    content_hash: str,
    budgets: tuple[float, ...],
    presets: tuple[str, ...],
    removals: tuple[tuple[str, ...], ...],
    total_time_limit: float = PAGE_TIME_S,
    _progress=None,
) -> tuple[robustness.AblationCurve, ...]:
    """:func:`memaudit_core.robustness.ablation_curves` keyed by content hash, grid and pools;
    all the curves' solves share ``total_time_limit``. One call for every curve of the page:
    curves cached one by one each kept the full optimum of their own run (QA s43: one budget
    showed an incumbent in one curve and a proven OPT in the other)."""
    from memaudit_core import robustness

    return robustness.ablation_curves(
        _package,
        budgets,
        presets,
        removals,
        total_time_limit=total_time_limit,
        progress=_progress,
    )


@_user_errors
@st.cache_data(show_spinner=False, max_entries=32)
def cost_rule_sensitivity(
    _package: Package,
    content_hash: str,
    budgets: tuple[float, ...],
    rules: tuple[str, ...],
    total_time_limit: float = PAGE_TIME_S,
    _progress=None,
    writers: tuple[str, ...] | None = None,
) -> robustness.CostRuleSensitivity:
    """:func:`memaudit_core.robustness.cost_rule_sensitivity` (``writers``, default every
    reference writer); its solves share ``total_time_limit``."""
    from memaudit_core import robustness

    return robustness.cost_rule_sensitivity(
        _package, budgets, rules, writers, total_time_limit=total_time_limit, progress=_progress
    )


@_user_errors
@st.cache_data(show_spinner=False, max_entries=32)
def capacity_sensitivity(
    _package: Package,
    content_hash: str,
    budgets: tuple[float, ...],
    k: int,
    engine_time_limit: float,
    total_time_limit: float = PAGE_TIME_S,
    _progress=None,
) -> robustness.CapacitySensitivity:
    """:func:`memaudit_core.robustness.capacity_sensitivity` (bnb and milp on OPT(k), where
    the package allows); its runs share ``total_time_limit``, each at most
    ``engine_time_limit``."""
    from memaudit_core import robustness

    return robustness.capacity_sensitivity(
        _package,
        budgets,
        k,
        time_limit=APP_TIME_LIMIT_S,
        engine_time_limit=engine_time_limit,
        total_time_limit=total_time_limit,
        progress=_progress,
    )


@_user_errors
@st.cache_data(show_spinner=False, max_entries=64)
def noise_sensitivity(
    _package: Package,
    content_hash: str,
    mode: str,
    level: float,
    draws: int,
    seed: int,
    budgets: tuple[float, ...],
    total_time_limit: float = PAGE_TIME_S,
    _progress=None,
    writers: tuple[str, ...] | None = None,
) -> robustness.NoiseSensitivity:
    """:func:`memaudit_core.robustness.noise_sensitivity` keyed by every draw setting and
    ``writers`` (default every reference writer)."""
    from memaudit_core import robustness

    return robustness.noise_sensitivity(
        _package,
        mode,
        level,
        draws,
        seed,
        budgets,
        writers,
        total_time_limit=total_time_limit,
        progress=_progress,
    )


@_user_errors(what="The audit across seeds")
@st.cache_data(show_spinner=False, max_entries=32)
def family_audit(
    family: str,
    params: tuple[tuple[str, object], ...],
    seed_hi: int,
    budgets: tuple[float, ...],
    pools: tuple[str, ...],
    time_limit: float,
    _progress=None,
) -> audit.AuditReport:
    """:func:`memaudit_core.audit.audit` over seeds 0 to ``seed_hi`` of a family, generated
    with ``params`` (a package's own, from :func:`memaudit_core.curves.family_source`)."""
    from memaudit_core import audit

    return audit.audit(
        families=[f"{family}:0-{seed_hi}"],
        params=dict(params),
        budgets=budgets,
        pools=pools,
        time_limit=time_limit,
        figures=False,
        progress=_progress,
    )


@_user_errors(what="The audit across pools")
@st.cache_data(show_spinner=False, max_entries=32)
def pool_audit(
    _package: Package,
    content_hash: str,
    budgets: tuple[float, ...],
    pools: tuple[str, ...],
    time_limit: float,
    _progress=None,
) -> audit.AuditReport:
    """:func:`memaudit_core.audit.audit_summary_for_package` for this package's pools."""
    from memaudit_core import audit

    return audit.audit_summary_for_package(
        _package, budgets, pools, time_limit=time_limit, progress=_progress
    )
