"""Page-sized explanations of one store against the optimum: Compare and Evidence explorer.

Two frozen views, each computed once and only laid out by the app:

- :func:`compare_view` — one store (a reference writer's, a package store or an external
  export) against the optimum at a budget: the headline numbers, a side-by-side table per
  experience in arrival order with each memory's *marginal value*, per-unit and per-kind-bucket
  loss attribution, and a plain-language explanation computed from those numbers
  (:class:`CompareView`);
- :func:`evidence_view` — the evidence units (filterable by kind), one focus unit with the
  candidates covering it and the queries requiring it, a coverage heatmap, a timeline of what
  each store wrote per experience, and a layered experience -> candidate -> unit -> query graph
  (:class:`EvidenceView`).

Both are saved with ``to_dict()`` and read back equal with
:func:`memaudit_core.read_result` (a Compare view keeps the evaluation it is built from).
Both build on :func:`memaudit_core.analysis.score` (which compiles, writes or reads the store,
solves the optimum and attributes losses). Its result is kept in a small LRU keyed by content
hash, budget, store and solver, so changing the kind filter or the focus unit never re-solves.

**Marginal value** of a memory u in a store X is the value lost if u alone were removed:
F(X) - F(X - {u}). Because F is submodular, the marginal values of a store's memories add up
to *at most* F(X) (they overlap where two memories cover the same unit).

Examples
--------
>>> from memaudit_core.generators import generate
>>> cv = compare_view(generate("update_chain"), 6, writer="density")
>>> cv.ratio_text, cv.opt_label
('0.730', 'OPT')
>>> round(sum(u.lost for u in cv.unit_rows), 6) == round(cv.opt_value - cv.value, 6)
True
"""

from __future__ import annotations

import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from .analysis import (
    ZERO_OPT,
    StoreEvaluation,
    _prune_by_order,
    _store_members,
    amount_text,
    compile_cached,
    compile_union_cached,
    kind_sort_key,
    score,
)
from .analysis import loss_tolerance as loss_tolerance  # the verdict "missed" (QA s39)
from .analysis import unit_word as unit_word  # pages import it from here
from .compiled import CompiledInstance, budget_with_tolerance
from .errors import MemAuditError, UnknownNameError, check_names, closest_name, cut_repr, id_text
from .objective import coverage_of, get_saturation
from .package import Package, check_package
from .saturation_caches import forget_on_replace
from .shortrepr import brief, count, num, short_repr
from .solvers import check_budget, value_text
from .versions import EXPLANATION_WORDING, RESULT_VERSION

if TYPE_CHECKING:
    import networkx as nx

#: Kind buckets of the Compare page's loss chart: (label, kinds). Kinds not listed -> "other".
KIND_BUCKETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("current truth", ("current_truth",)),
    ("invalidation / tombstones", ("invalidation",)),
    ("temporal order", ("temporal_order", "temporal_interval")),
    ("stale", ("stale",)),
)
OTHER_BUCKET = "other"
#: Short nouns for the buckets in running text ("2 invalidation units").
_BUCKET_NOUN = {
    "current truth": "current-truth",
    "invalidation / tombstones": "invalidation",
    "temporal order": "temporal",
    "stale": "stale",
    # App QA: "mostly other units" read as plain English; QA s42 defect 3: '"other"-kind'
    # named a kind the units do not have (the table says preference, fact, ...).
    OTHER_BUCKET: '"other"-bucket',
}

#: Above this many candidates the heatmap keeps only candidates covering the filtered units.
HEATMAP_FILTER_ROWS = 150
#: Hard caps on the heatmap's size (rows x columns); a message says what was left out.
HEATMAP_MAX_ROWS = 150
HEATMAP_MAX_COLS = 120
#: Which candidates the heatmap's rows show: every one (the caps above still apply), those
#: kept by the chosen store or the optimum, or those covering the focus unit. The short views
#: answer "what did the optimum keep instead" without a 150-row chart (projector QA: 3,370 px).
HEATMAP_ROWS = {
    "all": "all candidates",
    "kept": "kept by the store or the optimum",
    "focus": "covering the focus unit",
}
#: What the evidence graph shows: every filtered unit (down to the focus unit's neighbourhood
#: above :data:`GRAPH_MAX_NODES`), or the focus unit's neighbourhood at any size (speaker QA:
#: the whole graph of a 39-candidate package was 2,124 px tall on a projector).
GRAPH_SCOPES = {
    "all": "every filtered unit",
    "focus": "the focus unit's neighbourhood",
}
#: Above this many nodes the graph shows only the focus unit's neighbourhood.
GRAPH_MAX_NODES = 90

GRAPH_LAYERS = ("experience", "candidate", "unit", "query")

_TEXT_CLIP = 160


def _over_union(source_kind: str) -> str:
    """The suffix naming an external store's denominator, the optimum over P+(Y)."""
    return " over P+" if source_kind == "external" else ""


def bucket_of(kind: str) -> str:
    """The Compare-page bucket of a unit kind.

    >>> bucket_of("temporal_interval"), bucket_of("preference")
    ('temporal order', 'other')
    """
    for label, kinds in KIND_BUCKETS:
        if kind in kinds:
            return label
    return OTHER_BUCKET


_BUCKET_ORDER = [label for label, _ in KIND_BUCKETS] + [OTHER_BUCKET]


def kind_buckets_text() -> str:
    """Each bucket with its unit kinds, for a legend (the Compare page's caption), from
    :data:`KIND_BUCKETS`, which :func:`bucket_of` reads too.

    >>> kind_buckets_text()[:52]
    'current truth (current_truth); invalidation / tombst'
    """
    named = [f"{label} ({', '.join(kinds)})" for label, kinds in KIND_BUCKETS]
    return "; ".join([*named, f"{OTHER_BUCKET} (every other kind)"])


def parse_store_key(key: str) -> tuple[str | None, str | None]:
    """``"writer:<name>"`` -> (name, None); ``"store:<id>"`` -> (None, id).

    >>> parse_store_key("writer:gvt"), parse_store_key("store:raw-logger")
    (('gvt', None), (None, 'raw-logger'))
    """
    kind, sep, name = key.partition(":")
    if not sep or not name or kind not in ("writer", "store"):
        raise MemAuditError(f"bad store key {cut_repr(key)} (expected writer:<name> or store:<id>)")
    return (name, None) if kind == "writer" else (None, name)


def _by_loss(lost: float, position: int) -> tuple[float, int]:
    """Sort key of "largest loss first, then package order" (``position``: the unit's place in
    the package). One order for Compare's unit table and the Evidence explorer's default focus
    and unit table (QA s39 round 2, defect 2: on a tie Compare listed u:dates:invalid first and
    the explorer focused u:hotel:current, its tie broken by kind order)."""
    return (-lost, position)


def _clip(text: str, n: int = _TEXT_CLIP) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _num(x: float) -> str:
    # The metric tiles' formatter (QA s39 defect 5: 4 significant digits read the published
    # optimum 10.635 as "10.63" beside a tile showing 10.635).
    return value_text(x)


# --------------------------------------------------------------------------- shared evaluation

_EVAL_CACHE_SIZE = 32
_eval_cache: OrderedDict[tuple, StoreEvaluation] = OrderedDict()
_eval_lock = threading.Lock()


def clear_caches() -> None:
    """Forget shared store evaluations (keyed on a content hash, which names a saturation but
    not its h: :func:`~memaudit_core.saturations.register_saturation` with ``replace=True``)."""
    with _eval_lock:
        _eval_cache.clear()


forget_on_replace(lambda name: clear_caches())  # keys name a saturation, not which h


def _evaluation(
    package: Package,
    budget: float,
    writer: str | None,
    store_id: str | None,
    solver: str,
    time_limit: float | None = None,
) -> StoreEvaluation:
    """:func:`analysis.score`, memoised by (content hash, budget, writer and its plugin file
    stamp, store, solver, limit)."""
    check_package(package, "package")
    from .plugins import writer_stamp

    # QA s42 (defect 1): keyed on a plugin writer's file stamp too, or an edited plugin's old
    # store came back at a budget seen before.
    stamp = writer_stamp([writer]) if writer else ()
    key = (
        package.content_hash(),
        check_budget(budget),
        writer,
        stamp,
        store_id,
        solver,
        time_limit,
    )
    with _eval_lock:
        ev = _eval_cache.get(key)
        if ev is not None:
            _eval_cache.move_to_end(key)
            return ev
    ev = score(
        package, budget, writer=writer, store_id=store_id, solver=solver, time_limit=time_limit
    )
    with _eval_lock:
        _eval_cache[key] = ev
        _eval_cache.move_to_end(key)
        while len(_eval_cache) > _EVAL_CACHE_SIZE:
            _eval_cache.popitem(last=False)
    return ev


def _eval_instance(package: Package, ev: StoreEvaluation) -> CompiledInstance:
    """The instance ``ev`` was scored in (the union package for an external store)."""
    if ev.source_kind == "external" and ev.store_id is not None:
        return compile_union_cached(package, package.store(ev.store_id))
    return compile_cached(package)


def marginal_values(inst: CompiledInstance, selected_idx: Sequence[int]) -> dict[int, float]:
    """F(X) - F(X - {u}) for every u in X (positions in ``inst``).

    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> inst = compile_package(generate("update_chain"))
    >>> marginal_values(inst, [])
    {}
    """
    idx = [int(i) for i in selected_idx]
    if not idx:
        return {}
    h = get_saturation(inst.saturation).h
    z = coverage_of(inst, idx)
    cov = inst.coverage
    out: dict[int, float] = {}
    for i in idx:
        lo, hi = cov.indptr[i], cov.indptr[i + 1]
        cols, data = cov.indices[lo:hi], cov.data[lo:hi]
        zc = z[cols]
        out[i] = float(np.dot(inst.weight[cols], h(zc) - h(np.maximum(zc - data, 0.0))))
    return out


# --------------------------------------------------------------------------- Compare records


@dataclass(frozen=True)
class MemoryCell:
    """One memory a store (or the optimum) holds, with its marginal value in that store."""

    candidate_id: str
    type: str
    cost: float
    text: str
    marginal: float
    kept: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidate_id": self.candidate_id,
            "type": self.type,
            "cost": self.cost,
            "text": self.text,
            "marginal": self.marginal,
            "kept": self.kept,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> MemoryCell:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input."""
        from .results import from_fields

        return from_fields(cls, data, path)


@dataclass(frozen=True)
class ExperienceRow:
    """One experience (group) in arrival order: what the store and the optimum wrote.

    External memories (union package) each form their own group, listed after the package's
    experiences with ``external=True`` and no time.
    """

    position: int
    experience_id: str
    time: float | None
    session: str | None
    text: str
    store: tuple[MemoryCell, ...]
    opt: tuple[MemoryCell, ...]
    external: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "experience_id": self.experience_id,
            "time": self.time,
            "session": self.session,
            "text": self.text,
            "external": self.external,
            "store": [m.to_dict() for m in self.store],
            "opt": [m.to_dict() for m in self.opt],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> ExperienceRow:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input."""
        from .results import from_fields

        return from_fields(cls, data, path)


@dataclass(frozen=True)
class UnitCompareRow:
    """One unit: coverage and value by store and optimum, value lost, who covers it."""

    unit_id: str
    kind: str
    bucket: str
    text: str
    weight: float
    store_coverage: float
    opt_coverage: float
    store_value: float
    opt_value: float
    lost: float
    #: ``lost`` above the evaluation's :func:`~memaudit_core.analysis.loss_tolerance`: the
    #: core's verdict, which the Compare page's "missed unit" picker filters on (QA s39).
    missed: bool
    store_covered_by: tuple[str, ...]
    opt_covered_by: tuple[str, ...]
    queries: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "unit_id": self.unit_id,
            "kind": self.kind,
            "bucket": self.bucket,
            "text": self.text,
            "weight": self.weight,
            "store_coverage": self.store_coverage,
            "opt_coverage": self.opt_coverage,
            "store_value": self.store_value,
            "opt_value": self.opt_value,
            "lost": self.lost,
            "missed": self.missed,
            "store_covered_by": list(self.store_covered_by),
            "opt_covered_by": list(self.opt_covered_by),
            "queries": list(self.queries),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> UnitCompareRow:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input."""
        from .results import from_fields

        return from_fields(cls, data, path)


@dataclass(frozen=True)
class BucketRow:
    """Units of one kind bucket added up (store value, optimum value, value lost)."""

    bucket: str
    kinds: tuple[str, ...]
    n_units: int
    n_missed: int
    weight: float
    store_value: float
    opt_value: float
    lost: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "bucket": self.bucket,
            "kinds": list(self.kinds),
            "n_units": self.n_units,
            "n_missed": self.n_missed,
            "weight": self.weight,
            "store_value": self.store_value,
            "opt_value": self.opt_value,
            "lost": self.lost,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> BucketRow:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input."""
        from .results import from_fields

        return from_fields(cls, data, path)


@short_repr
@dataclass(frozen=True)
class CompareView:
    """Everything the Compare page shows for one store at one budget.

    ``unit_rows`` are sorted by value lost (largest first, then package order); their
    ``lost`` add up to ``opt_value - value``. ``experience_rows`` follow arrival order.
    ``explanation`` is plain text (one paragraph per entry) computed from these numbers;
    ``notes`` are the :class:`~memaudit_core.analysis.StoreEvaluation` notes, verbatim.
    """

    package_id: str
    content_hash: str
    label: str
    source_kind: str
    budget: float
    cost_unit: str
    value: float
    opt_value: float
    opt_label: str
    opt_certified: bool
    opt_status: str
    opt_bound: float
    opt_gap: float
    ratio: float | None
    ratio_text: str
    cost: float
    store_cost: float
    opt_cost: float
    notes: tuple[str, ...]
    explanation: tuple[str, ...]
    experience_rows: tuple[ExperienceRow, ...]
    unit_rows: tuple[UnitCompareRow, ...]
    bucket_rows: tuple[BucketRow, ...]
    evaluation: StoreEvaluation
    #: :data:`~memaudit_core.versions.EXPLANATION_WORDING` of ``explanation``; None for a view
    #: saved before it was written (its explanation may be worded as an older MemAudit did).
    explanation_wording: int | None = None

    def _repr_summary(self) -> str:
        # QA s40 (defect 2): the numbers a reader looks for, not every row (the generated
        # repr was 489 KB for 500 experiences); shortrepr.short_repr caps the line.
        return (
            f"{brief(self.label)} @ {num(self.budget)} {self.cost_unit}: F={num(self.value)} / "
            f"{self.opt_label} {num(self.opt_value)}, ratio {self.ratio_text}, "
            f"{count(self.n_missed, 'unit')} missed, "
            f"{count(len(self.experience_rows), 'experience row')}, "
            f"{count(len(self.unit_rows), 'unit row')}, package {brief(self.package_id)}"
        )

    @property
    def n_missed(self) -> int:
        return sum(1 for u in self.unit_rows if u.missed)

    @property
    def opt_name(self) -> str:
        """``"OPT"`` when certified, else ``"incumbent"`` (for column and axis labels); with
        ``" over P+"`` for an external store, whose optimum is over the union package (app QA:
        plain "OPT" there showed 13.1 where Overview's OPT is 12.35)."""
        return ("OPT" if self.opt_certified else "incumbent") + _over_union(self.source_kind)

    def bucket_table(self) -> list[dict[str, Any]]:
        """One row per kind bucket (for a table / CSV)."""
        o = self.opt_name
        return [
            {
                # Named "bucket", as the CLI's column and "Why this score" name it: under a
                # "kind" heading "other 0 (lost 1)" read as a kind beside the CLI's
                # "preference lost 1" (QA s49).
                "bucket": b.bucket,
                # The values first, as the CLI prints them (store, optimum, lost): after the
                # unit kinds, "value lost" was off a 1024 px screen with the sidebar open
                # (QA s49).
                "store value": b.store_value,
                f"{o} value": b.opt_value,
                "value lost": b.lost,
                # Units over the per-unit tolerance (the verdict "missed"): "units losing
                # value" read 0 beside a value lost of 2.7 spread over three units losing 0.9
                # each under a tolerance of 1 (QA s39 round 2, defect 1); "Why this score"
                # names such a spread.
                "units missed": b.n_missed,
                "units": b.n_units,
                "weight": b.weight,
                "unit kinds": ", ".join(b.kinds),
            }
            for b in self.bucket_rows
        ]

    def unit_table(self) -> list[dict[str, Any]]:
        """One row per unit, sorted by value lost (for a table / CSV)."""
        o = self.opt_name
        return [
            {
                # The annotator's questions first: which unit, what it cost, what the optimum
                # kept instead; then what the store kept, and the text (app QA: at 1,400 px
                # "covered in OPT by" was the cut-off last column; QA s43: the kind pushed it
                # off at 1280 px; QA s49: after the text it was off a 1024 px screen with the
                # sidebar open).
                "unit": u.unit_id,
                "value lost": u.lost,
                f"covered in {o} by": ", ".join(u.opt_covered_by),
                "covered in store by": ", ".join(u.store_covered_by),
                "text": u.text,
                "kind": u.kind,
                "weight": u.weight,
                "store value": u.store_value,
                f"{o} value": u.opt_value,
                "store coverage": u.store_coverage,
                f"{o} coverage": u.opt_coverage,
                "queries": ", ".join(u.queries),
            }
            for u in self.unit_rows
        ]

    def experience_table(self) -> list[dict[str, Any]]:
        """One row per experience in arrival order: what the store and the optimum wrote.

        With one memory per experience (the package constraint) each side has at most one
        cell; a store pruned for the budget also lists its dropped memory, marked, with its
        cost (it was written) but no marginal value (it is not in the store). Times,
        costs and marginal values are numbers at full precision, NaN where there is none (no
        time for an external memory, nothing written on that side): a page formats them in its
        grid only (QA s42 defect 1: a text form sorted "10" before "2" and its ``:g`` read the
        time 1714086400 as 1.71409e+09, in the CSV too).
        """
        o = self.opt_name
        rows = []
        for r in self.experience_rows:
            kept = [m for m in r.store if m.kept]
            opt_ids = {m.candidate_id for m in r.opt}
            same = {m.candidate_id for m in kept} == opt_ids
            # A store holds at most one memory per experience, so a dropped one means nothing
            # kept: every such row's match starts with the same words, the ones the page's
            # caption names, and reads so in a narrow column (QA s43: with the optimum writing
            # something else it read "only OPT" beside the store's dropped memory and its cost).
            dropped = "store's dropped (over budget)"
            if not kept and not r.opt:
                match = dropped if r.store else "neither wrote"
            elif same:
                match = "same"
            elif not kept and r.store:
                keeps = opt_ids == {m.candidate_id for m in r.store}
                match = f"{dropped}; {o} {'keeps it' if keeps else 'differs'}"
            elif not kept:
                match = f"only {o}"
            elif not r.opt:
                match = "only store"
            else:
                match = "different"
            rows.append(
                {
                    # Who wrote what, at what cost and worth, before the types and the time:
                    # "OPT marginal value" was off a 1280 px screen behind them (QA s43).
                    "experience": r.experience_id,
                    "match": match,
                    "store wrote": "; ".join(
                        m.candidate_id + ("" if m.kept else " (dropped: over budget)")
                        for m in r.store
                    ),
                    f"{o} wrote": "; ".join(m.candidate_id for m in r.opt),
                    # What the store wrote, a memory dropped for the budget included (QA s42
                    # round 2, defect 4a: a dropped memory read n/a, which the caption said
                    # meant "nothing written"); "store wrote" and "match" say it was dropped.
                    "store cost": sum(m.cost for m in r.store) if r.store else math.nan,
                    f"{o} cost": sum(m.cost for m in r.opt) if r.opt else math.nan,
                    "store marginal value": sum(m.marginal for m in kept) if kept else math.nan,
                    f"{o} marginal value": sum(m.marginal for m in r.opt) if r.opt else math.nan,
                    "store type": "; ".join(m.type for m in r.store),
                    f"{o} type": "; ".join(m.type for m in r.opt),
                    "time": math.nan if r.time is None else r.time,
                    "experience text": r.text
                    if not r.external
                    else "(external memory: no experience)",
                    "store memory text": " | ".join(m.text for m in r.store),
                    f"{o} memory text": " | ".join(m.text for m in r.opt),
                }
            )
        return rows

    @property
    def experience_brief_columns(self) -> list[str]:
        """The columns of :meth:`experience_brief`, in their order."""
        o = self.opt_name
        return [
            "experience",
            "match",
            # The types a speaker points at ("a tombstone, the optimum a compound update")
            # before the long ids, which pushed them off a 1024 px projector (QA s49).
            "store type",
            f"{o} type",
            "store wrote",
            f"{o} wrote",
            "store cost",
            f"{o} cost",
            "store marginal value",
            f"{o} marginal value",
        ]

    def experience_brief(self) -> list[dict[str, Any]]:
        """:meth:`experience_table` for a projector: only the experiences either side wrote
        (app QA: every experience made a 10,000 px page), without the texts or the time (the
        rows are in arrival order; QA s18c: 11 columns ran past a 1024 px screen), and with the
        types before the ids (:attr:`experience_brief_columns`)."""
        columns = self.experience_brief_columns
        return [
            {c: row[c] for c in columns}
            for row in self.experience_table()
            if row["match"] != "neither wrote"
        ]

    #: ``result_kind`` in ``to_dict()`` (:data:`memaudit_core.results.RESULT_KINDS`).
    RESULT_KIND: ClassVar[str] = "compare_view"

    def to_dict(self) -> dict[str, Any]:
        return {
            "result_version": RESULT_VERSION,
            "result_kind": self.RESULT_KIND,
            "package_id": self.package_id,
            "content_hash": self.content_hash,
            "label": self.label,
            "source_kind": self.source_kind,
            "budget": self.budget,
            "cost_unit": self.cost_unit,
            "value": self.value,
            "opt_value": self.opt_value,
            "opt_label": self.opt_label,
            "opt_certified": self.opt_certified,
            "opt_status": self.opt_status,
            "opt_bound": self.opt_bound,
            "opt_gap": self.opt_gap,
            "ratio": self.ratio,
            "ratio_text": self.ratio_text,
            "cost": self.cost,
            "store_cost": self.store_cost,
            "opt_cost": self.opt_cost,
            "notes": list(self.notes),
            "explanation": list(self.explanation),
            "explanation_wording": self.explanation_wording,
            "experience_rows": [r.to_dict() for r in self.experience_rows],
            "unit_rows": [r.to_dict() for r in self.unit_rows],
            "bucket_rows": [r.to_dict() for r in self.bucket_rows],
            "evaluation": self.evaluation.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> CompareView:
        """The view whose :meth:`to_dict` is ``data`` (see :func:`memaudit_core.read_result`);
        a located ``ResultError`` on bad input or numbers that contradict the evaluation the
        view is built from.

        Examples
        --------
        >>> import json
        >>> from memaudit_core.generators import generate
        >>> cv = compare_view(generate("update_chain"), 6, writer="density")
        >>> CompareView.from_dict(json.loads(json.dumps(cv.to_dict()))) == cv
        True
        """
        from .results import from_fields, require_object

        # Session 41: views read back. One saved before has no evaluation to rebuild from.
        _check_saved_since_readable(require_object(data, path), path, "evaluation", "CompareView")
        res = from_fields(cls, data, path, kind=cls.RESULT_KIND, optional=("explanation_wording",))
        res._check_consistent(path)
        return res

    def _check_consistent(self, path: str) -> None:
        """Refuse a read-back view whose headline or rows contradict its evaluation (the
        evaluation checks itself against its optimum when it is read)."""
        from .results import check_quotient, check_ratio_text

        ev = self.evaluation
        copied = {
            "package_id": ev.package_id,
            "content_hash": ev.content_hash,
            "label": ev.label,
            "source_kind": ev.source_kind,
            "budget": ev.budget,
            "value": ev.value,
            "opt_value": ev.opt_value,
            "opt_label": ev.opt_label,
            "opt_certified": ev.opt_certified,
            "opt_status": ev.opt.status,
            "opt_bound": float(ev.opt.bound),
            "opt_gap": float(ev.opt.gap),
            "cost": ev.cost,
            "store_cost": ev.store_cost,
            "notes": ev.notes,
        }
        for name, want in copied.items():
            _check_same(f"{path}.{name}", getattr(self, name), want, "the evaluation's")
        check_quotient(f"{path}.ratio", self.ratio, self.value, self.opt_value, "value / opt")
        check_ratio_text(f"{path}.ratio_text", self.ratio_text, self.ratio)
        self._check_rows(path)
        self._check_explanation(path)

    def _check_explanation(self, path: str) -> None:
        """Refuse an explanation that is not the one the view's own numbers give (QA s46: a
        first paragraph edited to "F = 7.7 ... (ratio 0.995)" was printed under the true
        headline). :func:`_explain` wrote it and rebuilds it here; the clauses only the
        package's coverage matrix gives (what covered the missed units, what the store's own
        memories cover) match any text, every other word and number must be the same.

        Only a view of today's :data:`~memaudit_core.versions.EXPLANATION_WORDING` is held to
        every paragraph: one saved by an earlier MemAudit words its unit lists otherwise (QA
        s46: 54 genuine s41 views were refused), so it is held to its headline paragraph (F,
        OPT, budget, ratio and costs), worded alike by every version whose views read back."""
        from .errors import ResultError
        from .results import child

        wording = self.explanation_wording
        if wording is not None and wording < 1:
            raise ResultError(
                child(path, "explanation_wording"),
                "allowed-value",
                f"not a wording version (1 to {EXPLANATION_WORDING}, or absent in a view saved "
                "before it was written)",
                wording,
            )
        # A newer wording than this MemAudit's is held to the headline too: its other
        # paragraphs are worded in ways this version cannot rebuild.
        whole = wording == EXPLANATION_WORDING

        # A marker no saved paragraph holds, so that it stands for unknown text only.
        marker = "\x00"
        while any(marker in p for p in self.explanation):
            marker += "\x00"
        # _check_rows showed that the kept store cells are the evaluation's selected memories.
        cost_of = {c.candidate_id: c.cost for r in self.experience_rows for c in r.store if c.kept}
        want = _explain(
            self.evaluation,
            self.unit_rows,
            self.bucket_rows,
            self.cost_unit,
            self.opt_cost,
            cost_of,
            _Unknown(marker),
        )
        if len(self.explanation) != len(want) and (whole or not self.explanation):
            raise ResultError(
                f"{path}.explanation",
                "inconsistent",
                f"{count(len(self.explanation), 'paragraph')}, where the view's numbers give "
                f"{len(want)}",
            )
        checked = (
            zip(self.explanation, want, strict=True) if whole else [(self.explanation[0], want[0])]
        )
        for k, (got, text) in enumerate(checked):
            if not _matches(got, text.split(marker)):
                raise ResultError(
                    f"{path}.explanation[{k}]",
                    "inconsistent",
                    "not what the view's numbers say: "
                    + repr(text.replace(marker, "..."))
                    + (" (... stands for what only the package says)" if marker in text else ""),
                    got,
                )

    def _check_rows(self, path: str) -> None:
        """Each memory a row shows is one the evaluation's store or optimum holds; each unit
        row is one of its units, with its loss and the one verdict "missed"; each bucket
        counts its unit rows."""
        from .errors import ResultError

        ev = self.evaluation
        sides = {
            "store": (set(ev.selected), "the store's selected"),
            "dropped": (set(ev.dropped), "the store's dropped"),
            "opt": (set(ev.opt_selected), "the optimum's opt_selected"),
        }
        shown: dict[str, int] = dict.fromkeys(sides, 0)
        opt_cost = 0.0
        for k, row in enumerate(self.experience_rows):
            for side in ("store", "opt"):
                for j, cell in enumerate(getattr(row, side)):
                    which = side if cell.kept else "dropped"
                    ids, name = sides[which]
                    if cell.candidate_id not in ids:
                        raise ResultError(
                            f"{path}.experience_rows[{k}].{side}[{j}].candidate_id",
                            "inconsistent",
                            f"not one of {name} in the evaluation",
                            cell.candidate_id,
                        )
                    shown[which] += 1
                    opt_cost += cell.cost if side == "opt" else 0.0
        for which, (ids, name) in sides.items():
            if shown[which] != len(ids):
                raise ResultError(
                    f"{path}.experience_rows",
                    "inconsistent",
                    f"the rows show {shown[which]} of the {len(ids)} memories of {name}",
                )
        if not math.isclose(self.opt_cost, opt_cost, rel_tol=1e-9, abs_tol=1e-12):
            raise ResultError(
                f"{path}.opt_cost",
                "inconsistent",
                f"not the cost of the optimum's memories ({opt_cost!r})",
                self.opt_cost,
            )
        units = {u.unit_id: u for u in ev.unit_rows}
        tol = ev.loss_tol
        for k, u in enumerate(self.unit_rows):
            at = f"{path}.unit_rows[{k}]"
            if u.unit_id not in units:
                raise ResultError(
                    f"{at}.unit_id", "inconsistent", "not a unit of the evaluation", u.unit_id
                )
            _check_same(f"{at}.lost", u.lost, units[u.unit_id].lost, "the evaluation's")
            if u.missed != (u.lost > tol):
                raise ResultError(
                    f"{at}.missed",
                    "inconsistent",
                    f"a unit is missed when its loss {u.lost!r} exceeds the tolerance {tol!r}",
                    u.missed,
                )
            for side, ids, who in (
                ("store", ev.selected, "store"),
                ("opt", ev.opt_selected, "optimum"),
            ):
                strays = [c for c in getattr(u, f"{side}_covered_by") if c not in ids]
                if strays:
                    raise ResultError(
                        f"{at}.{side}_covered_by",
                        "inconsistent",
                        f"{strays[0]!r} is not kept by the {who}",
                    )
        for k, b in enumerate(self.bucket_rows):
            at = f"{path}.bucket_rows[{k}]"
            members = [u for u in self.unit_rows if u.bucket == b.bucket]
            for name, want in (
                ("n_units", len(members)),
                ("n_missed", sum(1 for u in members if u.missed)),
            ):
                if getattr(b, name) != want:
                    raise ResultError(
                        f"{at}.{name}",
                        "inconsistent",
                        f"the bucket has {want} such unit rows",
                        getattr(b, name),
                    )
            if not math.isclose(b.lost, b.opt_value - b.store_value, rel_tol=1e-9, abs_tol=1e-12):
                raise ResultError(
                    f"{at}.lost",
                    "inconsistent",
                    f"not opt_value - store_value = {b.opt_value - b.store_value!r}",
                    b.lost,
                )


# --------------------------------------------------------------------------- Compare builder


class _Lookup:
    """Text / experience / type lookups for candidates and external memories of an instance."""

    def __init__(self, package: Package, inst: CompiledInstance, ev: StoreEvaluation):
        self.inst = inst
        self.cand_text = {c.id: c.text for c in package.candidates}
        self.cand_exp = {c.id: c.experience for c in package.candidates}
        if ev.source_kind == "external" and ev.store_id is not None:
            for m in package.store(ev.store_id).memories:
                self.cand_text[m.id] = m.text
        self.queries_of: dict[str, list[str]] = {}
        for q in package.queries:
            for r in q.requires:
                self.queries_of.setdefault(r, []).append(q.id)

    def cell(self, i: int, marginal: float, kept: bool = True) -> MemoryCell:
        inst = self.inst
        cid = inst.candidate_ids[i]
        return MemoryCell(
            candidate_id=cid,
            type=inst.candidate_types[i],
            cost=float(inst.cost[i]),
            text=self.cand_text.get(cid, ""),
            marginal=float(marginal),
            kept=kept,
        )


def compare_view(
    package: Package,
    budget: float,
    *,
    writer: str | None = None,
    store_id: str | None = None,
    solver: str = "auto",
    time_limit: float | None = None,
) -> CompareView:
    """One store against the optimum at ``budget``, explained.

    Parameters
    ----------
    package : Package
    budget : float
    writer, store_id : str, optional
        Exactly one: a reference writer's store, or a store of the package.
    solver : str
        Passed to :func:`memaudit_core.solvers.solve`.
    time_limit : float, optional
        Seconds per engine run for the optimum; a limited run makes the view's denominator an
        incumbent with its bound (labelled so, never OPT).

    Returns
    -------
    CompareView

    Raises
    ------
    MemAuditError
        Neither or both of ``writer`` / ``store_id``; a bad budget.
    UnknownNameError
        An unknown writer or store.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> cv = compare_view(generate("update_chain"), 6, writer="density")
    >>> [b.bucket for b in cv.bucket_rows]
    ['current truth', 'invalidation / tombstones', 'stale']
    """
    ev = _evaluation(package, budget, writer, store_id, solver, time_limit)
    inst = _eval_instance(package, ev)
    look = _Lookup(package, inst, ev)
    store_idx = [inst.candidate_idx(c) for c in ev.selected]
    opt_idx = [inst.candidate_idx(c) for c in ev.opt_selected]
    dropped_idx = [inst.candidate_idx(c) for c in ev.dropped]
    store_marg = marginal_values(inst, store_idx)
    opt_marg = marginal_values(inst, opt_idx)

    # ---- per experience, arrival order (external singleton groups last)
    exp_by_id = {e.id: e for e in package.experiences}
    by_group_store: dict[int, list[MemoryCell]] = {}
    by_group_opt: dict[int, list[MemoryCell]] = {}
    for i in sorted(store_idx):
        by_group_store.setdefault(int(inst.group_idx[i]), []).append(look.cell(i, store_marg[i]))
    for i in sorted(dropped_idx):
        by_group_store.setdefault(int(inst.group_idx[i]), []).append(look.cell(i, 0.0, kept=False))
    for i in sorted(opt_idx):
        by_group_opt.setdefault(int(inst.group_idx[i]), []).append(look.cell(i, opt_marg[i]))
    experience_rows = []
    for g, gid in enumerate(inst.group_ids):
        exp = exp_by_id.get(gid)
        store_cells = tuple(by_group_store.get(g, ()))
        opt_cells = tuple(by_group_opt.get(g, ()))
        if exp is None and not store_cells and not opt_cells:
            continue  # an external memory neither side kept
        experience_rows.append(
            ExperienceRow(
                position=g,
                experience_id=gid,
                time=None if exp is None else float(exp.time),
                session=None if exp is None else exp.session,
                text="" if exp is None else exp.text,
                store=store_cells,
                opt=opt_cells,
                external=exp is None,
            )
        )

    # ---- per unit, sorted by loss
    # Who covers each unit comes with the evaluation (analysis.covered_by), as score says it.
    tol = ev.loss_tol
    rows = []
    for ur in ev.unit_rows:
        rows.append(
            UnitCompareRow(
                unit_id=ur.unit_id,
                kind=ur.kind,
                bucket=bucket_of(ur.kind),
                text=ur.text,
                weight=ur.weight,
                store_coverage=ur.store_coverage,
                opt_coverage=ur.opt_coverage,
                store_value=ur.store_value,
                opt_value=ur.opt_value,
                lost=ur.lost,
                missed=ur.lost > tol,
                store_covered_by=ur.store_covered_by or (),
                opt_covered_by=ur.opt_covered_by or (),
                queries=tuple(look.queries_of.get(ur.unit_id, ())),
            )
        )
    order = sorted(range(len(rows)), key=lambda k: _by_loss(rows[k].lost, k))
    unit_rows = tuple(rows[k] for k in order)

    # ---- per bucket
    bucket_rows = []
    for bucket in _BUCKET_ORDER:
        members = [u for u in rows if u.bucket == bucket]
        if not members:
            continue
        kinds = tuple(sorted({u.kind for u in members}, key=kind_sort_key))
        s = float(sum(u.store_value for u in members))
        o = float(sum(u.opt_value for u in members))
        bucket_rows.append(
            BucketRow(
                bucket=bucket,
                kinds=kinds,
                n_units=len(members),
                n_missed=sum(1 for u in members if u.missed),
                weight=float(sum(u.weight for u in members)),
                store_value=s,
                opt_value=o,
                lost=o - s,
            )
        )

    opt_cost = inst.selection_cost(opt_idx)  # the optimum shown, not the solver's
    explanation = _explain(
        ev,
        unit_rows,
        tuple(bucket_rows),
        package.cost_unit,
        opt_cost,
        {inst.candidate_ids[i]: float(inst.cost[i]) for i in store_idx},
        _PackageText(package, inst, ev, store_idx, opt_idx, store_marg),
    )
    return CompareView(
        package_id=package.id,
        content_hash=ev.content_hash,
        label=ev.label,
        source_kind=ev.source_kind,
        budget=ev.budget,
        cost_unit=package.cost_unit,
        value=ev.value,
        opt_value=ev.opt_value,
        opt_label=ev.opt_label,
        opt_certified=ev.opt_certified,
        opt_status=ev.opt.status,
        opt_bound=float(ev.opt.bound),
        opt_gap=float(ev.opt.gap),
        ratio=ev.ratio,
        ratio_text=ev.ratio_text,
        cost=ev.cost,
        store_cost=ev.store_cost,
        opt_cost=opt_cost,
        notes=ev.notes,
        explanation=explanation,
        experience_rows=tuple(experience_rows),
        unit_rows=unit_rows,
        bucket_rows=tuple(bucket_rows),
        evaluation=ev,
        explanation_wording=EXPLANATION_WORDING,
    )


def _n_shown(n: int, limit: int) -> int:
    """How many of ``n`` items a list capped at ``limit`` names: all of them when only one
    would be left out, since naming it costs no more than "and 1 more" (QA s43)."""
    return n if n <= limit + 1 else limit


def _list(ids: Sequence[str], limit: int = 6, quoted: bool = False) -> str:
    """``ids`` named as :func:`id_text` names each (``quoted``: texts that did so already),
    the first ``limit`` of them."""
    shown = _n_shown(len(ids), limit)
    return ", ".join(ids[:shown] if quoted else map(id_text, ids[:shown])) + (
        f" and {len(ids) - shown} more" if len(ids) > shown else ""
    )


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def _missed_units(missed: Sequence[UnitCompareRow], bucket: str) -> str:
    """ "2 invalidation units"; in the catch-all bucket the units' own kinds, which the unit
    table shows (QA s42 defect 3: a preference unit was called an "other"-kind unit).

    >>> row = lambda k: UnitCompareRow("u", k, bucket_of(k), "", 1, 0, 1, 0, 1, 1, True, (), (), ())
    >>> _missed_units([row("preference")], "other")
    '1 preference unit (in the "other" bucket)'
    >>> _missed_units([row("fact"), row("preference"), row("fact")], "other")
    '3 units in the "other" bucket (2 fact, 1 preference)'
    >>> _missed_units([row("invalidation")], "invalidation / tombstones")
    '1 invalidation unit'
    """
    if bucket != OTHER_BUCKET:
        return _plural(len(missed), _BUCKET_NOUN[bucket] + " unit")
    counts: dict[str, int] = {}
    for u in missed:
        counts[u.kind] = counts.get(u.kind, 0) + 1
    where = f'in the "{OTHER_BUCKET}" bucket'
    if len(counts) == 1:
        return f"{_plural(len(missed), next(iter(counts)) + ' unit')} ({where})"
    mix = ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{_plural(len(missed), 'unit')} {where} ({mix})"


class _PackageText:
    """The explanation's clauses that need the package's coverage matrix: which of the
    reference store's memories covered the missed units, and what the store's own memories
    cover. A saved view does not hold the matrix, so its read-back check stands
    :class:`_Unknown` in for these clauses (QA s46)."""

    def __init__(
        self,
        package: Package,
        inst: CompiledInstance,
        ev: StoreEvaluation,
        store_idx: Sequence[int],
        opt_idx: Sequence[int],
        store_marg: dict[int, float],
    ):
        self.unit = package.cost_unit
        self.inst, self.ev, self.store_marg = inst, ev, store_marg
        self.opt_set = set(int(i) for i in opt_idx)
        self.store_set = set(int(i) for i in store_idx)
        self.h = get_saturation(inst.saturation).h

    def covering(self, missed: Sequence[UnitCompareRow], ref: str) -> str:
        """``" The optimum covered them with ..."`` for one bucket's missed units, or ``""``."""
        inst, ev, unit, h = self.inst, self.ev, self.unit, self.h
        cov = inst.coverage
        # Which of the reference store's memories cover the missed units, by value alone.
        missed_pos = {inst.unit_index[u.unit_id] for u in missed}
        helpers: list[tuple[float, int, list[str]]] = []
        # Memories the store keeps too are not what the reference store covered the units
        # with instead (QA s39 round 2, defect 3: "covered it with a; b" where the store holds
        # a); they are named apart.
        shared_ids = [
            inst.candidate_ids[i]
            for i in sorted(self.opt_set & self.store_set)
            if any(
                int(r) in missed_pos and a > 0
                for r, a in zip(
                    cov.indices[cov.indptr[i] : cov.indptr[i + 1]],
                    cov.data[cov.indptr[i] : cov.indptr[i + 1]],
                    strict=True,
                )
            )
        ]
        for i in sorted(self.opt_set - self.store_set):
            lo, hi = cov.indptr[i], cov.indptr[i + 1]
            got = [
                (int(r), float(a))
                for r, a in zip(cov.indices[lo:hi], cov.data[lo:hi], strict=True)
                if int(r) in missed_pos and a > 0
            ]
            if got:
                val = float(sum(inst.weight[r] * h(np.array([a]))[0] for r, a in got))
                helpers.append((val, i, [inst.unit_ids[r] for r, _ in got]))
        if not helpers:
            return ""
        helpers.sort(key=lambda t: (-t[0], float(inst.cost[t[1]]), inst.candidate_ids[t[1]]))
        dropped = set(ev.dropped)
        shown = _n_shown(len(helpers), 4)
        parts = [
            # QA s45: a raw 'c2 ' read as the store's own c2, 'a, b' as two memories.
            f"{id_text(inst.candidate_ids[i])} ({inst.candidate_types[i]}, cost "
            f"{amount_text(float(inst.cost[i]), unit)}; covers {_list(us, 3)}"
            # Annotator QA: a memory of the store itself, cut to fit the budget, read
            # as if the optimum had found something the store never wrote.
            + (
                f"; this store's own memory, dropped by {ev.pruned or 'its'} pruning to fit "
                "the budget"
                if inst.candidate_ids[i] in dropped
                else ""
            )
            + ")"
            for _, i, us in helpers[:shown]
        ]
        more = f" and {len(helpers) - shown} more" if len(helpers) > shown else ""
        them = "it" if len(missed) == 1 else "them"
        also = f", besides {_list(shared_ids, 3)}, which the store keeps too" if shared_ids else ""
        text = f" {ref.capitalize()} covered {them} with {'; '.join(parts)}{more}{also}."
        if len(helpers) > shown:
            counts: dict[str, int] = {}
            for _, i, _ in helpers:
                counts[inst.candidate_types[i]] = counts.get(inst.candidate_types[i], 0) + 1
            mix = ", ".join(
                f"{n} {t}" for t, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            )
            text += (
                f" All {len(helpers)} are {next(iter(counts))}."
                if len(counts) == 1
                else f" By type, {ref}'s {len(helpers)} covering memories: {mix}."
            )
        return text

    def spent_on(self, only_store: Sequence[str], tol: float) -> tuple[str, str]:
        """The store's memories the reference store did not keep: (their ids, what they are
        by type: count, cost, marginal value and what they cover)."""
        inst, unit, h = self.inst, self.unit, self.h
        cov = inst.coverage
        idx = sorted(inst.candidate_idx(c) for c in only_store)
        kinds_of = np.array([bucket_of(k) for k in inst.unit_kinds], dtype=object)
        by_type: dict[str, dict[str, Any]] = {}
        for i in idx:
            t = inst.candidate_types[i]
            entry = by_type.setdefault(t, {"n": 0, "cost": 0.0, "marg": 0.0, "buckets": {}})
            entry["n"] += 1
            entry["cost"] += float(inst.cost[i])
            entry["marg"] += self.store_marg.get(i, 0.0)
            lo, hi = cov.indptr[i], cov.indptr[i + 1]
            for r, a in zip(cov.indices[lo:hi], cov.data[lo:hi], strict=True):
                b = kinds_of[int(r)]
                v = float(inst.weight[int(r)] * h(np.array([a]))[0])
                entry["buckets"][b] = entry["buckets"].get(b, 0.0) + v
        parts = [
            f"{e['n']} {t} ({amount_text(e['cost'], unit)}, marginal value {_num(e['marg'])}) "
            + _mostly(e["buckets"], tol)
            for t, e in sorted(by_type.items(), key=lambda kv: (-kv[1]["cost"], kv[0]))
        ]
        return _list([inst.candidate_ids[i] for i in idx], 4), "; ".join(parts)


@dataclass(frozen=True)
class _Unknown:
    """:class:`_PackageText` for a saved view: each clause only the package can give is
    ``marker``, which the read-back check matches with any text."""

    marker: str

    def covering(self, missed: Sequence[UnitCompareRow], ref: str) -> str:
        return self.marker

    def spent_on(self, only_store: Sequence[str], tol: float) -> tuple[str, str]:
        return self.marker, self.marker


def _explain(
    ev: StoreEvaluation,
    unit_rows: Sequence[UnitCompareRow],
    bucket_rows: Sequence[BucketRow],
    unit: str,
    opt_cost: float,
    cost_of: Mapping[str, float],
    package_text: _PackageText | _Unknown,
) -> tuple[str, ...]:
    """Plain-language paragraphs computed from the numbers (no Markdown).

    Everything but ``package_text``'s clauses comes from what a saved view holds (its
    evaluation, rows, cost unit, optimum cost and the costs ``cost_of`` of the store's
    memories), so that a view read back is checked against the explanation its own numbers
    give (QA s46: an edited headline F was shown under the true one)."""
    opt_name = ("OPT" if ev.opt_certified else f"the {ev.opt_label}") + _over_union(ev.source_kind)
    if not ev.opt_certified:
        opt_name += " (not proven optimal)"
    # The store it is compared with: "the optimum" only when proven (a limited run's best
    # store is the incumbent; calling it the optimum would claim what was not shown).
    ref = "the optimum" if ev.opt_certified else "the incumbent"
    paras: list[str] = []
    if ev.opt_value <= ZERO_OPT:
        paras.append(
            f"At budget {amount_text(ev.budget, unit)} the optimum is 0: nothing that fits covers "
            "a unit with positive weight, so the ratio is undefined (n/a) and there is nothing to "
            "explain."
        )
        return tuple(paras)

    lost_total = ev.opt_value - ev.value
    kept = _plural(len(ev.selected), "memory", "memories")
    paras.append(
        f"{ev.label} scores F = {_num(ev.value)} against {opt_name} = {_num(ev.opt_value)} at "
        f"budget {amount_text(ev.budget, unit)} (ratio {ev.ratio_text}). It keeps {kept} "
        f"costing {amount_text(ev.cost, unit)}; {ref} keeps {len(ev.opt_selected)} costing "
        f"{amount_text(opt_cost, unit)}."
    )
    # One tolerance relative to the package's values (QA s39 defect 1: an absolute 1e-9 called
    # a store of ratio 0.25 lossless in a package of weights 4e-10).
    tol = ev.loss_tol
    opt_set = set(ev.opt_selected)
    if lost_total <= tol and not any(u.missed for u in unit_rows):
        shared = len(set(ev.selected) & opt_set)
        paras.append(
            f"The store loses nothing against {ref}"
            + (
                " (it holds the same memories)."
                if shared == len(ev.selected) == len(ev.opt_selected)
                else f" (it shares {shared} of its memories with {ref} and reaches the same "
                "value with a different choice)."
            )
        )
        return tuple(paras)

    saturation = ev.opt.saturation
    for bucket in bucket_rows:
        missed = [u for u in unit_rows if u.bucket == bucket.bucket and u.missed]
        if not missed:
            continue
        lost = sum(u.lost for u in missed)
        ids = [u.unit_id for u in missed]
        partial = [u.unit_id for u in missed if u.store_value > tol]
        gained_here = [u for u in unit_rows if u.bucket == bucket.bucket and u.lost < -tol]
        noun = _BUCKET_NOUN[bucket.bucket]
        opt_name_short = "OPT" if ev.opt_certified else ref
        text = (
            f"The store missed {_missed_units(missed, bucket.bucket)}, losing {_num(lost)} of the "
            f"{_num(bucket.opt_value)} that {opt_name_short} gets from {noun} units: {_list(ids)}."
        )
        if partial:
            verb = "is" if len(partial) == 1 else "are"
            if saturation == "cap1":
                text += f" Of these, {_list(partial, 4)} {verb} only partly covered."
            else:
                # Under linear / log1p saturation a unit the store covers fully is still worth
                # more covered again; "only partly covered" was untrue there (QA s39 round 2,
                # defect 3).
                them_p = "it" if len(partial) == 1 else "them"
                text += (
                    f" Of these, {_list(partial, 4)} {verb} covered by the store too, but under "
                    f"{saturation} saturation every further cover adds value, and {ref} gets "
                    f"more from {them_p} by covering {them_p} again."
                )
        text += package_text.covering(missed, ref)
        if gained_here:
            # QA s39 (defect 2): the chart and kind table give the kind's net loss (2.5), this
            # sentence the missed units' (4); say both, and why they differ.
            if bucket.lost > tol:
                net = f"loses {_num(bucket.lost)} net"
            elif bucket.lost < -tol:
                net = f"gains {_num(-bucket.lost)} net"
            else:
                net = "loses nothing net"
            text += (
                f" Over all {noun} units the store {net} (the value-by-kind figure): it gets "
                f"{_num(-sum(u.lost for u in gained_here))} more than {ref} from "
                f"{_list([u.unit_id for u in gained_here], 4)}."
            )
        paras.append(text)

    # Losses below the per-unit verdict can add up to more than it (QA s39 round 2, defect 1:
    # 3 units losing 0.9 each, tolerance 1, lost 2.7 in all, and the explanation said nothing).
    # The verdict stays per unit; the spread is said here, with the units that carry it.
    spread = [u for u in unit_rows if not u.missed and u.lost > 0]
    spread_lost = float(sum(u.lost for u in spread))
    if spread_lost > tol:
        named = [f"{id_text(u.unit_id)} ({_num(u.lost)})" for u in spread]
        units_text = _list(named, 5, quoted=True)
        each = (
            f"each losing at most the comparison tolerance of {_num(tol)} (1e-9 of the larger of "
            f"{'OPT' if ev.opt_certified else ev.opt_label} and F), so none counts as a missed "
            "unit"
        )
        if any(u.missed for u in unit_rows):
            paras.append(
                f"Besides the missed units, the store loses {_num(spread_lost)} over "
                f"{_plural(len(spread), 'more unit')}, {each}: {units_text}."
            )
        else:
            paras.append(
                f"The store loses {_num(lost_total)} in all against {ref}, spread over "
                f"{_plural(len(spread), 'unit')} {each}: {units_text}."
            )

    gained = [u for u in unit_rows if u.lost < -tol]
    if gained:
        paras.append(
            f"In exchange the store covers {_plural(len(gained), 'unit')} better than {ref} "
            f"(value {_num(-sum(u.lost for u in gained))} more): "
            f"{_list([u.unit_id for u in gained])}."
        )

    # What the store spent its budget on instead (memories the optimum did not keep).
    only_store = [c for c in ev.selected if c not in opt_set]
    if only_store:
        # fsum: the same in any order, so the saved view's memory costs give the same text.
        spent = math.fsum(cost_of[c] for c in only_store)
        ids_text, parts = package_text.spent_on(only_store, tol)
        paras.append(
            f"Instead, the store spent {spent:.10g} of its {amount_text(ev.cost, unit)} on "
            f"{_plural(len(only_store), 'memory', 'memories')} {ref} did "
            f"not keep ({ids_text}): {parts}."
        )
    unused = ev.budget - ev.cost
    if unused > 1e-9 * max(1.0, ev.budget):
        paras.append(f"It left {amount_text(unused, unit)} of the budget unused.")
    return tuple(paras)


def _mostly(buckets: dict[str, float], tol: float) -> str:
    """How a memory's evidence value splits over kind buckets; values of at most ``tol`` (the
    evaluation's :func:`~memaudit_core.analysis.loss_tolerance`) count as none."""
    total = sum(buckets.values())
    if total <= tol:
        return "covering no weighted evidence"
    ranked = sorted(buckets.items(), key=lambda kv: (-kv[1], _BUCKET_ORDER.index(kv[0])))
    top, top_v = ranked[0]
    share = f"{100 * top_v / total:.0f}%"
    # "Mostly" only above half, as shown (QA s39 defect 3: an exact 50/50 split read "covering
    # mostly current-truth units (50% ...)"); an even split is a mix.
    if top_v > 0.5 * total and share != "50%":
        if share == "100%":
            return f"covering only {_BUCKET_NOUN[top]} units"
        return (
            f"covering mostly {_BUCKET_NOUN[top]} units ({share} of the evidence value it covers)"
        )
    # Every kind with a share, largest first (annotator QA: naming the top two left out a
    # current-truth quarter).
    shares = [(b, v) for b, v in ranked if v > tol]
    named = [f"{_BUCKET_NOUN[b]} ({100 * v / total:.0f}%)" for b, v in shares]
    listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
    return f"covering a mix of {listed} units"


# --------------------------------------------------------------------------- Evidence records


@dataclass(frozen=True)
class EvidenceUnit:
    unit_id: str
    kind: str
    text: str
    weight: float
    store_coverage: float
    opt_coverage: float
    lost: float
    n_candidates: int
    n_queries: int
    #: The unit's place in the package: ties in loss follow it (QA s39 round 2, defect 2).
    position: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "unit_id": self.unit_id,
            "kind": self.kind,
            "text": self.text,
            "weight": self.weight,
            "store_coverage": self.store_coverage,
            "opt_coverage": self.opt_coverage,
            "lost": self.lost,
            "n_candidates": self.n_candidates,
            "n_queries": self.n_queries,
            "position": self.position,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> EvidenceUnit:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input."""
        from .results import from_fields

        return from_fields(cls, data, path)


@dataclass(frozen=True)
class CoveringCandidate:
    candidate_id: str
    experience_id: str
    time: float | None
    type: str
    cost: float
    coverage: float
    text: str
    in_store: bool
    in_opt: bool
    #: The store's own memory, left out by its pruning to fit the budget (annotator QA s38:
    #: it read as a memory the store never wrote).
    dropped: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidate_id": self.candidate_id,
            "experience_id": self.experience_id,
            "time": self.time,
            "type": self.type,
            "cost": self.cost,
            "coverage": self.coverage,
            "text": self.text,
            "in_store": self.in_store,
            "in_opt": self.in_opt,
            "dropped": self.dropped,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> CoveringCandidate:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input."""
        from .results import from_fields

        return from_fields(cls, data, path)


@dataclass(frozen=True)
class QueryRow:
    query_id: str
    text: str
    answer: str
    weight: float
    requires: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "text": self.text,
            "answer": self.answer,
            "weight": self.weight,
            "requires": list(self.requires),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> QueryRow:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input."""
        from .results import from_fields

        return from_fields(cls, data, path)


def heatmap_row_rank(on_focus: bool, member: bool, position: int) -> tuple[int, int]:
    """Which heatmap rows are kept first when not all are shown: those covering the focus
    unit, then the store's and the optimum's, then by arrival (``position``)."""
    return (0 if on_focus else 1 if member else 2, position)


@short_repr
@dataclass(frozen=True)
class HeatmapData:
    """Candidates x units coverage (rows in arrival / (cost, id) order, columns by kind).

    ``z[i][j]`` is a_ur of row ``i``'s candidate on column ``j``'s unit (0 where absent).
    ``row_labels`` are candidate ids tagged ``[S]``, ``[O]`` or ``[S+O]`` for membership in
    the store / the optimum, ``[S cut]`` for a memory the store wrote and its recency cut
    dropped at this budget (``row_cut``).
    ``kind_spans`` are (kind, first column, last column) for the column groups.
    ``hover[i][j]`` describes a covering cell (the candidate's type, cost and text, the unit's
    kind and text; the viewer adds the ids and a) and is empty where ``z[i][j]`` is 0 (app QA:
    a text for each of 18,000 mostly empty cells made a 3.8 MB figure on event-graph-500).
    """

    row_ids: tuple[str, ...]
    row_labels: tuple[str, ...]
    row_types: tuple[str, ...]
    row_in_store: tuple[bool, ...]
    row_in_opt: tuple[bool, ...]
    col_ids: tuple[str, ...]
    col_kinds: tuple[str, ...]
    kind_spans: tuple[tuple[str, int, int], ...]
    z: tuple[tuple[float, ...], ...]
    hover: tuple[tuple[str, ...], ...]
    n_rows_total: int
    n_cols_total: int
    message: str
    #: Column of the focus unit (None when it is not shown), outlined by the viewer.
    focus_col_idx: int | None = None
    #: Rows the store wrote and its recency cut dropped to fit the budget (QA s49: the strip
    #: showed only the kept memories). Empty: none (as in views saved before session 49).
    row_cut: tuple[bool, ...] = ()

    def __post_init__(self) -> None:
        if not self.row_cut:
            object.__setattr__(self, "row_cut", (False,) * len(self.row_ids))

    def first_rows(self, n: int) -> HeatmapData:
        """The same heatmap on its ``n`` foremost rows, picked as :data:`HEATMAP_MAX_ROWS`
        picks (:func:`heatmap_row_rank`), drawn in arrival order; ``message`` unchanged.

        A projector names only the rows a screen holds (speaker QA s46: 150 rows of
        event-graph-500 were specks, ten of travel-assistant lost every other label).
        """
        if n >= len(self.row_ids):
            return self
        focus = self.focus_col_idx
        rank = [
            heatmap_row_rank(focus is not None and self.z[i][focus] > 0, s or o or c, i)
            for i, (s, o, c) in enumerate(
                zip(self.row_in_store, self.row_in_opt, self.row_cut, strict=True)
            )
        ]
        keep = sorted(sorted(range(len(rank)), key=rank.__getitem__)[: max(0, n)])

        def pick(values: tuple) -> tuple:
            return tuple(values[i] for i in keep)

        return replace(
            self,
            row_ids=pick(self.row_ids),
            row_labels=pick(self.row_labels),
            row_types=pick(self.row_types),
            row_in_store=pick(self.row_in_store),
            row_in_opt=pick(self.row_in_opt),
            z=pick(self.z),
            hover=pick(self.hover),
            row_cut=pick(self.row_cut),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "row_ids": list(self.row_ids),
            "row_labels": list(self.row_labels),
            "row_types": list(self.row_types),
            "row_in_store": list(self.row_in_store),
            "row_in_opt": list(self.row_in_opt),
            "col_ids": list(self.col_ids),
            "col_kinds": list(self.col_kinds),
            "kind_spans": [list(s) for s in self.kind_spans],
            "z": [list(r) for r in self.z],
            "hover": [list(r) for r in self.hover],
            "n_rows_total": self.n_rows_total,
            "n_cols_total": self.n_cols_total,
            "message": self.message,
            "focus_col_idx": self.focus_col_idx,
            "row_cut": list(self.row_cut),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> HeatmapData:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input or a grid
        whose rows and columns do not line up."""
        from .errors import ResultError
        from .results import from_fields

        # Views saved before session 49 have no cut rows.
        res = from_fields(cls, data, path, optional=("row_cut",))
        n_rows, n_cols = len(res.row_ids), len(res.col_ids)
        # The viewer zips these arrays: one of another length would shift every cell after it.
        sized = {
            "row_labels": (res.row_labels, n_rows, "row_ids"),
            "row_types": (res.row_types, n_rows, "row_ids"),
            "row_in_store": (res.row_in_store, n_rows, "row_ids"),
            "row_in_opt": (res.row_in_opt, n_rows, "row_ids"),
            "row_cut": (res.row_cut, n_rows, "row_ids"),
            "z": (res.z, n_rows, "row_ids"),
            "hover": (res.hover, n_rows, "row_ids"),
            "col_kinds": (res.col_kinds, n_cols, "col_ids"),
        }
        for name, (values, n, of) in sized.items():
            if len(values) != n:
                raise ResultError(
                    f"{path}.{name}",
                    "inconsistent",
                    f"{len(values)} items for the {n} of {of}",
                )
        for name in ("z", "hover"):
            for i, row in enumerate(getattr(res, name)):
                if len(row) != n_cols:
                    raise ResultError(
                        f"{path}.{name}[{i}]",
                        "inconsistent",
                        f"{len(row)} cells for the {n_cols} of col_ids",
                    )
        if res.focus_col_idx is not None and not 0 <= res.focus_col_idx < n_cols:
            raise ResultError(
                f"{path}.focus_col_idx",
                "inconsistent",
                f"not a column of the {n_cols} of col_ids",
                res.focus_col_idx,
            )
        return res


@dataclass(frozen=True)
class TimelinePoint:
    row: str
    experience_id: str
    time: float
    candidate_id: str
    type: str
    cost: float
    text: str
    #: A memory the row's package store wrote but its recency cut dropped to fit the budget
    #: (QA s49: a row drawn after the cut read as if the writer wrote nothing there).
    cut: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "row": self.row,
            "experience_id": self.experience_id,
            "time": self.time,
            "candidate_id": self.candidate_id,
            "type": self.type,
            "cost": self.cost,
            "text": self.text,
            "cut": self.cut,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> TimelinePoint:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input."""
        from .results import from_fields

        # Views saved before session 49 have no cut memories drawn.
        return from_fields(cls, data, path, optional=("cut",))


#: Above this many experiences the store timeline is dense: its markers overlap, so the note
#: says in words where the chosen store and the optimum differ (QA s47: on 3000 experiences
#: their rows were two identical-looking bands although they differed in 2 memories).
TIMELINE_DENSE = 80


@short_repr
@dataclass(frozen=True)
class TimelineData:
    """What each store wrote per experience: one row per store, points at experience times.

    ``rows`` are in display order (chosen store, optimum, every other package store);
    ``experiences`` are (id, time, text) of all experiences (the x axis). A package store's
    row also has the memories its recency cut dropped at this budget, as points with
    ``cut`` set.
    """

    rows: tuple[str, ...]
    points: tuple[TimelinePoint, ...]
    experiences: tuple[tuple[str, float, str], ...]
    types: tuple[str, ...]
    message: str

    @property
    def unshared(self) -> frozenset[str]:
        """Candidate ids drawn on exactly one of the chosen store's and the optimum's rows
        (the first two): where the store went another way than the optimum. Derived from the
        points, so a saved view needs no field for it."""
        if len(self.rows) < 2:
            return frozenset()
        chosen, opt = self.rows[0], self.rows[1]
        # A memory cut to fit the budget is not kept: it is crossed out, not ringed.
        mine = {p.candidate_id for p in self.points if p.row == chosen and not p.cut}
        theirs = {p.candidate_id for p in self.points if p.row == opt and not p.cut}
        return frozenset(mine ^ theirs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": list(self.rows),
            "points": [p.to_dict() for p in self.points],
            "experiences": [list(e) for e in self.experiences],
            "types": list(self.types),
            "message": self.message,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> TimelineData:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input."""
        from .results import from_fields

        return from_fields(cls, data, path)


@short_repr
@dataclass(frozen=True)
class GraphData:
    """A layered experience -> candidate -> unit -> query graph with positions.

    Layers sit at x = 0, 1, 2, 3; each layer spreads over y in [-1, 1] (arrival order for
    experiences and candidates, barycentre order for units and queries).

    Edges are drawn as polylines with ``None`` separators (``edge_x`` / ``edge_y``); edges
    touching the focus unit are repeated in ``focus_edge_x`` / ``focus_edge_y``.
    """

    node_ids: tuple[str, ...]
    node_labels: tuple[str, ...]
    node_layers: tuple[str, ...]
    node_x: tuple[float, ...]
    node_y: tuple[float, ...]
    node_hover: tuple[str, ...]
    node_in_store: tuple[bool, ...]
    node_in_opt: tuple[bool, ...]
    edge_x: tuple[float | None, ...]
    edge_y: tuple[float | None, ...]
    focus_edge_x: tuple[float | None, ...]
    focus_edge_y: tuple[float | None, ...]
    layer_x: tuple[tuple[str, float], ...]
    n_nodes: int
    n_edges: int
    message: str
    #: Candidates the store wrote and its recency cut dropped to fit the budget (QA s49: the
    #: graph marked only the kept ones). Empty: none (as in views saved before session 49).
    node_cut: tuple[bool, ...] = ()

    def __post_init__(self) -> None:
        if not self.node_cut:
            object.__setattr__(self, "node_cut", (False,) * len(self.node_ids))

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodes": [
                {
                    "id": n,
                    "label": lab,
                    "layer": layer,
                    "x": x,
                    "y": y,
                    "hover": h,
                    "in_store": s,
                    "in_opt": o,
                    "cut": c,
                }
                for n, lab, layer, x, y, h, s, o, c in zip(
                    self.node_ids,
                    self.node_labels,
                    self.node_layers,
                    self.node_x,
                    self.node_y,
                    self.node_hover,
                    self.node_in_store,
                    self.node_in_opt,
                    self.node_cut,
                    strict=True,
                )
            ],
            "edge_x": list(self.edge_x),
            "edge_y": list(self.edge_y),
            "focus_edge_x": list(self.focus_edge_x),
            "focus_edge_y": list(self.focus_edge_y),
            "layer_x": dict(self.layer_x),
            "n_nodes": self.n_nodes,
            "n_edges": self.n_edges,
            "message": self.message,
        }

    #: Node field -> its key in a node object of ``to_dict()``'s ``nodes``.
    _NODE_KEYS: ClassVar[dict[str, str]] = {
        "node_ids": "id",
        "node_labels": "label",
        "node_layers": "layer",
        "node_x": "x",
        "node_y": "y",
        "node_hover": "hover",
        "node_in_store": "in_store",
        "node_in_opt": "in_opt",
        "node_cut": "cut",
    }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> GraphData:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input or counts
        that contradict the nodes and edges."""
        from .errors import ResultError
        from .results import child, decode, field_value, from_fields, named, require_object

        data = require_object(data, path)
        at = child(path, "nodes")
        nodes = decode(tuple[Any, ...], field_value(data, "nodes", path), at)
        hints = {
            "node_x": float,
            "node_y": float,
            "node_in_store": bool,
            "node_in_opt": bool,
            "node_cut": bool,
        }
        columns: dict[str, list[Any]] = {name: [] for name in cls._NODE_KEYS}
        for k, node in enumerate(nodes):
            node = require_object(node, child(at, k))
            for name, key in cls._NODE_KEYS.items():
                if name == "node_cut" and key not in node:
                    continue  # saved before session 49: no cut memories marked
                raw = field_value(node, key, child(at, k))
                columns[name].append(decode(hints.get(name, str), raw, child(child(at, k), key)))
        # The nodes are one array of objects in the file, parallel arrays in the model.
        flat = {**data, **{name: values for name, values in columns.items()}}
        res = from_fields(cls, flat, path, convert={"layer_x": named(float)})
        if res.n_nodes != len(res.node_ids):
            raise ResultError(
                f"{path}.n_nodes", "inconsistent", f"not the {len(nodes)} nodes", res.n_nodes
            )
        if len(res.node_cut) != len(res.node_ids):
            raise ResultError(
                f"{path}.nodes",
                "inconsistent",
                f"{len(columns['node_cut'])} of the {len(nodes)} nodes say whether they are cut",
            )
        for x, y in (("edge_x", "edge_y"), ("focus_edge_x", "focus_edge_y")):
            xs, ys = getattr(res, x), getattr(res, y)
            # Each edge is a polyline x0, x1, None: three entries per edge, in both arrays.
            if len(xs) != len(ys) or len(xs) % 3:
                raise ResultError(
                    f"{path}.{y}",
                    "inconsistent",
                    f"{len(ys)} entries beside the {len(xs)} of {x} (three per edge)",
                )
        n_edges = (len(res.edge_x) + len(res.focus_edge_x)) // 3
        if res.n_edges != n_edges:
            raise ResultError(
                f"{path}.n_edges",
                "inconsistent",
                f"not the {n_edges} edges of edge_x and focus_edge_x",
                res.n_edges,
            )
        return res


@short_repr
@dataclass(frozen=True)
class EvidenceView:
    """Everything the Evidence explorer shows (all lists prepared; the page only draws)."""

    package_id: str
    content_hash: str
    budget: float
    cost_unit: str
    store_label: str
    source_kind: str
    opt_label: str
    all_kinds: tuple[str, ...]
    kinds: tuple[str, ...]
    units: tuple[EvidenceUnit, ...]
    focus_unit_id: str | None
    focus: EvidenceUnit | None
    focus_candidates: tuple[CoveringCandidate, ...]
    focus_queries: tuple[QueryRow, ...]
    heatmap: HeatmapData
    timeline: TimelineData
    graph: GraphData
    #: Why the focus is not the unit asked for (an unknown id, or a unit outside the filter).
    notes: tuple[str, ...] = ()
    #: The score's own notes (pruning, the optimum shown, an uncertified denominator...):
    #: app QA, the Evidence explorer showed a pruned store and a moved optimum unsaid.
    score_notes: tuple[str, ...] = ()

    @property
    def unit_ids(self) -> tuple[str, ...]:
        return tuple(u.unit_id for u in self.units)

    @property
    def opt_name(self) -> str:
        return ("OPT" if self.opt_label == "OPT" else "incumbent") + _over_union(self.source_kind)

    def unit_labels(self) -> dict[str, str]:
        """Unit id -> "id · kind" (for a picker)."""
        return {u.unit_id: f"{u.unit_id} · {u.kind}" for u in self.units}

    def unit_table(self) -> list[dict[str, Any]]:
        """One row per filtered unit, largest loss first, then package order: Compare's order,
        whose first unit is the default focus (QA s39 round 2, defect 2: a tie broken by kind
        order put u:hotel:current first here and u:dates:invalid first on Compare)."""
        o = self.opt_name
        return [
            # The sort column and the coverages before the wide text (app QA: at 1280 px
            # they were off-screen).
            {
                "unit": u.unit_id,
                "kind": u.kind,
                "value lost": u.lost,
                "weight": u.weight,
                "store coverage": u.store_coverage,
                f"{o} coverage": u.opt_coverage,
                "candidates covering": u.n_candidates,
                "queries requiring": u.n_queries,
                "text": u.text,
            }
            for u in sorted(self.units, key=lambda u: _by_loss(u.lost, u.position))
        ]

    def candidate_table(self) -> list[dict[str, Any]]:
        """The candidates covering the focus unit (largest coverage first)."""
        o = self.opt_name
        pruned = any(c.dropped for c in self.focus_candidates)
        return [
            {
                "candidate": c.candidate_id,
                "in store": c.in_store,
                # Only for a store pruned to fit the budget, and only if it matters here.
                **({"dropped to fit": c.dropped} if pruned else {}),
                f"in {o}": c.in_opt,
                "coverage a_ur": c.coverage,
                "cost": c.cost,
                "type": c.type,
                "experience": c.experience_id,
                "time": c.time,
                "text": c.text,
            }
            for c in self.focus_candidates
        ]

    def query_table(self) -> list[dict[str, Any]]:
        """The queries requiring the focus unit."""
        return [
            {
                "query": q.query_id,
                "text": q.text,
                "answer": q.answer,
                "weight": q.weight,
                "requires": ", ".join(q.requires),
            }
            for q in self.focus_queries
        ]

    #: ``result_kind`` in ``to_dict()`` (:data:`memaudit_core.results.RESULT_KINDS`).
    RESULT_KIND: ClassVar[str] = "evidence_view"

    def to_dict(self) -> dict[str, Any]:
        return {
            "result_version": RESULT_VERSION,
            "result_kind": self.RESULT_KIND,
            "package_id": self.package_id,
            "content_hash": self.content_hash,
            "budget": self.budget,
            "cost_unit": self.cost_unit,
            "store_label": self.store_label,
            "source_kind": self.source_kind,
            "opt_label": self.opt_label,
            "all_kinds": list(self.all_kinds),
            "kinds": list(self.kinds),
            "units": [u.to_dict() for u in self.units],
            "focus_unit_id": self.focus_unit_id,
            "focus_candidates": [c.to_dict() for c in self.focus_candidates],
            "focus_queries": [q.to_dict() for q in self.focus_queries],
            "heatmap": self.heatmap.to_dict(),
            "timeline": self.timeline.to_dict(),
            "graph": self.graph.to_dict(),
            "notes": list(self.notes),
            "score_notes": list(self.score_notes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> EvidenceView:
        """The view whose :meth:`to_dict` is ``data`` (see :func:`memaudit_core.read_result`);
        a located ``ResultError`` on bad input or a focus that contradicts the units.

        Examples
        --------
        >>> import json
        >>> from memaudit_core.generators import generate
        >>> view = evidence_view(generate("update_chain"), 6, writer="density")
        >>> EvidenceView.from_dict(json.loads(json.dumps(view.to_dict()))) == view
        True
        """
        import dataclasses

        from .results import from_fields, require_object

        # Session 41: views read back. One saved before lacks the fields written since.
        _check_saved_since_readable(require_object(data, path), path, "score_notes", "EvidenceView")
        # ``focus`` is the unit named by focus_unit_id, not written twice: read as None here
        # and found among the units below.
        res = from_fields(
            cls,
            data,
            path,
            kind=cls.RESULT_KIND,
            keys={"focus": "focus_unit_id"},
            convert={"focus": lambda _value, _at: None},
        )
        focus = {u.unit_id: u for u in res.units}.get(res.focus_unit_id or "")
        res = dataclasses.replace(res, focus=focus)
        res._check_consistent(path)
        return res

    def _check_consistent(self, path: str) -> None:
        """Refuse a read-back view whose focus is not one of its units, whose units leave its
        kind filter, or whose focus tables contradict the focus unit's counts."""
        from .errors import ResultError

        for k, kind in enumerate(self.kinds):
            if kind not in self.all_kinds:
                raise ResultError(
                    f"{path}.kinds[{k}]", "inconsistent", "not one of all_kinds", kind
                )
        for k, u in enumerate(self.units):
            if u.kind not in self.kinds:
                raise ResultError(
                    f"{path}.units[{k}].kind", "inconsistent", "not one of the view's kinds", u.kind
                )
        # The builder focuses a unit whenever the filter leaves one.
        if (self.focus is None) != (not self.units):
            raise ResultError(
                f"{path}.focus_unit_id",
                "inconsistent",
                "not one of the view's units" if self.units else "the view has no units to focus",
                self.focus_unit_id,
            )
        focus = self.focus
        counts = (
            ("focus_candidates", self.focus_candidates, 0 if focus is None else focus.n_candidates),
            ("focus_queries", self.focus_queries, 0 if focus is None else focus.n_queries),
        )
        for name, rows, want in counts:
            if len(rows) != want:
                raise ResultError(
                    f"{path}.{name}",
                    "inconsistent",
                    f"{len(rows)} rows, but the focus unit counts {want}",
                )
        for k, q in enumerate(self.focus_queries):
            if focus is not None and focus.unit_id not in q.requires:
                raise ResultError(
                    f"{path}.focus_queries[{k}].requires",
                    "inconsistent",
                    f"does not require the focus unit {focus.unit_id!r}",
                )
        for k, p in enumerate(self.timeline.points):
            if p.row not in self.timeline.rows:
                raise ResultError(
                    f"{path}.timeline.points[{k}].row",
                    "inconsistent",
                    "not one of the timeline's rows",
                    p.row,
                )


def _check_saved_since_readable(data: Mapping[str, Any], path: str, key: str, model: str) -> None:
    """Refuse a view saved before views read back (session 41) by the key written since."""
    from .errors import RULE_REQUIRED, ResultError
    from .results import child

    if key not in data:
        raise ResultError(
            child(path, key),
            RULE_REQUIRED,
            f"missing required field '{key}': a {model} saved before it could be read back "
            "(MemAudit wrote it without the fields needed to rebuild it); read it as JSON, or "
            "save the view again",
        )


def _matches(text: str, pieces: Sequence[str]) -> bool:
    """Whether ``text`` is ``pieces`` in order with any text between each two (a wildcard
    pattern; the leftmost place of each middle piece is the right one, so no backtracking).

    >>> _matches("F = 1. Covered by a, b.", ["F = 1. Covered by ", "."])
    True
    >>> _matches("F = 7. Covered by a.", ["F = 1. Covered by ", "."])
    False
    """
    if len(pieces) == 1:
        return text == pieces[0]
    first, *middle, last = pieces
    if not (len(text) >= len(first) + len(last) and text.startswith(first)):
        return False
    end = len(text) - len(last)
    at = len(first)
    for piece in middle:
        at = text.find(piece, at, end)
        if at < 0:
            return False
        at += len(piece)
    return text.endswith(last)


def _check_same(at: str, got: Any, want: Any, whose: str) -> None:
    """Refuse ``got`` unless it is ``want`` (NaN equal to NaN): a field copied from another."""
    same = got == want or (
        isinstance(got, float) and isinstance(want, float) and math.isnan(got) and math.isnan(want)
    )
    if not same:
        from .errors import ResultError

        raise ResultError(at, "inconsistent", f"not {whose} ({want!r})", _scalar(got))


def _scalar(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool) else None


# --------------------------------------------------------------------------- Evidence builder


def unit_kinds(package: Package) -> tuple[str, ...]:
    """The package's unit kinds in the order the views list them (:func:`kind_sort_key`): the
    Evidence explorer's kind filter, from the view and from a link alike."""
    return tuple(sorted({u.kind for u in package.units}, key=kind_sort_key))


def _unknown_kinds_note(
    unknown: Sequence[str], all_kinds: Sequence[str], package_id: str, shown_all: bool
) -> str:
    """The note for kinds asked for in an evidence filter that no unit of the package has.

    >>> note = _unknown_kinds_note(["Fact"], ["fact", "stale"], "p", True)
    >>> note.startswith("kind 'Fact' is not a unit kind of package 'p' (its kinds: fact, stale")
    True
    >>> note.endswith("; did you mean 'fact'?): every kind is shown")
    True
    """
    named = ", ".join(cut_repr(k) for k in unknown[:5])
    if len(unknown) > 5:
        named += f" and {len(unknown) - 5:,} more"
    what = (
        f"kind {named} is not a unit kind"
        if len(unknown) == 1
        else f"kinds {named} are not unit kinds"
    )
    near = [c for c in (closest_name(k, all_kinds) for k in unknown[:5]) if c is not None]
    hint = f"; did you mean {', '.join(repr(c) for c in dict.fromkeys(near))}?" if near else ""
    return (
        f"{what} of package {package_id!r} (its kinds: {', '.join(all_kinds) or 'none'}{hint}): "
        + ("every kind is shown" if shown_all else "left out of the filter")
    )


def evidence_view(
    package: Package,
    budget: float,
    *,
    writer: str | None = None,
    store_id: str | None = None,
    kinds: Iterable[str] | None = None,
    focus_unit_id: str | None = None,
    heatmap_rows: str = "all",
    graph_scope: str = "all",
    solver: str = "auto",
    time_limit: float | None = None,
) -> EvidenceView:
    """Units, one focus unit's candidates and queries, heatmap, timeline and graph.

    Parameters
    ----------
    package, budget, writer, store_id, solver, time_limit
        As for :func:`compare_view` (the chosen store and the optimum mark memberships).
    kinds : iterable of str, optional
        Unit kinds to show; ``None`` shows every kind and an empty filter none. Unknown kinds
        are ignored with a note in ``notes``; when *none* of the given kinds exists (a filter
        kept from another package), every kind is shown.
    focus_unit_id : str, optional
        The unit to inspect. ``None`` (or a unit outside the filter) picks the filtered unit
        with the largest loss (store vs optimum), else the first filtered unit.
    heatmap_rows : {"all", "kept", "focus"}
        The heatmap's candidate rows (:data:`HEATMAP_ROWS`): every candidate, those kept by
        the chosen store or the optimum, or those covering the focus unit.
    graph_scope : {"all", "focus"}
        The graph's extent (:data:`GRAPH_SCOPES`): every filtered unit, or the focus unit's
        neighbourhood.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> view = evidence_view(generate("update_chain"), 6, writer="density")
    >>> view.focus_unit_id in view.unit_ids, len(view.heatmap.z) == len(view.heatmap.row_ids)
    (True, True)
    """
    if heatmap_rows not in HEATMAP_ROWS:
        raise UnknownNameError(
            f"unknown heatmap_rows {cut_repr(heatmap_rows)} (known: {', '.join(HEATMAP_ROWS)})"
        )
    if graph_scope not in GRAPH_SCOPES:
        raise UnknownNameError(
            f"unknown graph_scope {cut_repr(graph_scope)} (known: {', '.join(GRAPH_SCOPES)})"
        )
    ev = _evaluation(package, budget, writer, store_id, solver, time_limit)
    inst = _eval_instance(package, ev)
    store_set = {inst.candidate_idx(c) for c in ev.selected}
    opt_set = {inst.candidate_idx(c) for c in ev.opt_selected}
    unit_by_id = {u.id: u for u in package.units}
    all_kinds = unit_kinds(package)
    # A lone "fact" is one kind, not its letters (library QA: it showed every kind).
    kinds = None if kinds is None else tuple(check_names(kinds, "kinds"))
    wanted = set(all_kinds) if kinds is None else {k for k in kinds if k in all_kinds}
    shown_all = bool(kinds) and not wanted
    if shown_all:
        wanted = set(all_kinds)  # a filter kept from another package: none of its kinds exist
    kinds_t = tuple(k for k in all_kinds if k in wanted)
    notes: list[str] = []
    unknown = list(dict.fromkeys(k for k in kinds or () if k not in all_kinds))
    if unknown:
        # Library QA s43: a misspelt kind was dropped, or every kind shown, without a word.
        notes.append(_unknown_kinds_note(unknown, all_kinds, package.id, shown_all))

    csc = inst.coverage_csc
    queries_of: dict[str, list[int]] = {}
    for qi, q in enumerate(package.queries):
        for r in q.requires:
            queries_of.setdefault(r, []).append(qi)

    # Units in the filter, ordered by kind then package order.
    unit_rows = {ur.unit_id: ur for ur in ev.unit_rows}
    filtered_pos = sorted(
        (r for r, k in enumerate(inst.unit_kinds) if k in wanted),
        key=lambda r: (kind_sort_key(inst.unit_kinds[r]), r),
    )
    units = []
    for r in filtered_pos:
        uid = inst.unit_ids[r]
        ur = unit_rows[uid]
        col = csc.data[csc.indptr[r] : csc.indptr[r + 1]]
        units.append(
            EvidenceUnit(
                unit_id=uid,
                kind=ur.kind,
                text=ur.text,
                weight=ur.weight,
                store_coverage=ur.store_coverage,
                opt_coverage=ur.opt_coverage,
                lost=ur.lost,
                n_candidates=int((col > 0).sum()),
                n_queries=len(queries_of.get(uid, ())),
                position=r,
            )
        )
    by_id = {u.unit_id: u for u in units}
    asked = focus_unit_id
    if focus_unit_id not in by_id:
        if units:
            # Largest loss, then package order: Compare's first unit (QA s39 round 2, defect 2).
            best = min(
                range(len(units)),
                key=lambda k: _by_loss(units[k].lost, units[k].position),
            )
            # The largest loss by the one verdict "missed" (QA s39: an absolute 1e-9 passed over
            # a package's largest loss of 4e-10).
            missed = units[best].lost > ev.loss_tol
            focus_unit_id = units[best].unit_id if missed else units[0].unit_id
        else:
            focus_unit_id = None
    focus = by_id.get(focus_unit_id) if focus_unit_id else None
    if asked is not None and asked != focus_unit_id:
        # Library QA: a misspelt id silently showed another unit.
        # Its kind named (QA s42 defect 4: removing a kind chip moved the focus unsaid).
        why = (
            f"is outside the kind filter (its kind {unit_by_id[asked].kind} is not shown)"
            if asked in unit_by_id
            else f"is not an evidence unit of package {package.id!r}"
        )
        instead = (
            f"showing {cut_repr(focus_unit_id)} instead" if focus_unit_id else "no unit is shown"
        )
        notes.append(f"focus unit {cut_repr(asked)} {why}: {instead}")

    look = _Lookup(package, inst, ev)
    dropped_ids = set(ev.dropped)
    # The store's memories its recency cut dropped: marked on every chart (QA s49).
    cut_idx = frozenset(inst.candidate_idx(c) for c in ev.dropped)
    exp_time = {e.id: float(e.time) for e in package.experiences}
    focus_candidates: list[CoveringCandidate] = []
    focus_queries: list[QueryRow] = []
    if focus is not None:
        r = inst.unit_index[focus.unit_id]
        lo, hi = csc.indptr[r], csc.indptr[r + 1]
        for i, a in zip(csc.indices[lo:hi], csc.data[lo:hi], strict=True):
            if a <= 0:
                continue
            i = int(i)
            cid = inst.candidate_ids[i]
            exp_id = look.cand_exp.get(cid, inst.group_ids[int(inst.group_idx[i])])
            focus_candidates.append(
                CoveringCandidate(
                    candidate_id=cid,
                    experience_id=exp_id,
                    time=exp_time.get(exp_id),
                    type=inst.candidate_types[i],
                    cost=float(inst.cost[i]),
                    coverage=float(a),
                    text=look.cand_text.get(cid, ""),
                    in_store=i in store_set,
                    in_opt=i in opt_set,
                    dropped=cid in dropped_ids,
                )
            )
        focus_candidates.sort(key=lambda c: (-c.coverage, c.cost, c.candidate_id))
        for qi in queries_of.get(focus.unit_id, ()):
            q = package.queries[qi]
            focus_queries.append(QueryRow(q.id, q.text, q.answer, float(q.weight), q.requires))

    # "incumbent" where the optimum is not proven (app QA: "optimum (incumbent)", "[O]").
    opt_word = "optimum" if ev.opt_certified else "incumbent"
    heatmap = _heatmap(
        inst,
        look,
        filtered_pos,
        focus_unit_id,
        store_set,
        opt_set,
        unit_by_id,
        opt_word,
        heatmap_rows,
        cut_set=cut_idx,
    )
    timeline = _timeline(package, inst, ev, look)
    graph = _graph(
        package,
        inst,
        look,
        filtered_pos,
        focus_unit_id,
        store_set,
        opt_set,
        queries_of,
        neighbourhood=graph_scope == "focus",
        cut_set=cut_idx,
    )
    return EvidenceView(
        package_id=package.id,
        content_hash=ev.content_hash,
        budget=ev.budget,
        cost_unit=package.cost_unit,
        store_label=ev.label,
        source_kind=ev.source_kind,
        opt_label=ev.opt_label,
        all_kinds=all_kinds,
        kinds=kinds_t,
        units=tuple(units),
        focus_unit_id=focus_unit_id,
        focus=focus,
        focus_candidates=tuple(focus_candidates),
        focus_queries=tuple(focus_queries),
        heatmap=heatmap,
        timeline=timeline,
        graph=graph,
        notes=tuple(notes),
        score_notes=ev.notes,
    )


def _membership_label(
    cid: str, in_store: bool, in_opt: bool, opt_tag: str = "O", cut: bool = False
) -> str:
    """``"e4:update [S+O]"``: the candidate id with its store (S) / optimum (O) membership
    (``opt_tag`` "I" for an incumbent that is not proven optimal); ``"e1:raw [S cut]"`` for a
    memory the store wrote and cut to fit the budget.

    >>> _membership_label("e1:raw", False, True, cut=True)
    'e1:raw [S cut+O]'
    """
    tag = "+".join(t for t, on in (("S", in_store), ("S cut", cut), (opt_tag, in_opt)) if on)
    return f"{cid} [{tag}]" if tag else cid


def _heatmap(
    inst: CompiledInstance,
    look: _Lookup,
    cols_pos: Sequence[int],
    focus_unit_id: str | None,
    store_set: set[int],
    opt_set: set[int],
    unit_by_id: dict[str, Any],
    opt_word: str = "optimum",
    rows_shown: str = "all",
    cut_set: frozenset[int] = frozenset(),
) -> HeatmapData:
    dense_cols = list(cols_pos)
    n_total = inst.n_candidates
    notes: list[str] = []
    if not dense_cols:
        return HeatmapData((), (), (), (), (), (), (), (), (), (), n_total, 0, "No units selected.")
    sub = inst.coverage[:, dense_cols].toarray() if n_total else np.zeros((0, len(dense_cols)))
    focus_col = dense_cols.index(inst.unit_index[focus_unit_id]) if focus_unit_id else None
    rows = list(range(n_total))
    if rows_shown == "kept":
        # With the store's memories cut to fit the budget: what the store wrote is the
        # question, and a projector opens on this view (QA s49).
        rows = sorted(store_set | opt_set | cut_set)
        n_kept = len(store_set | opt_set)
        n_cut = len(rows) - n_kept
        cut_text = f"{n_cut} the store wrote but cut to fit the budget"
        if not rows:
            notes.append(f"Neither the store nor the {opt_word} keeps a candidate at this budget.")
        elif not n_kept:
            notes.append(
                f"Neither the store nor the {opt_word} keeps a candidate at this budget; showing "
                f"the {cut_text}."
            )
        elif n_cut:
            notes.append(
                f"Showing {len(rows)} of {n_total} candidates: the {n_kept} kept by the store or "
                f"the {opt_word}, and {cut_text}."
            )
        else:
            notes.append(
                f"Showing the {len(rows)} of {n_total} candidates kept by the store or the "
                f"{opt_word}."
            )
    elif rows_shown == "focus":
        # The focus unit is in the filter, so its column is in ``sub`` (no focus: no rows).
        rows = [] if focus_col is None else [i for i in rows if sub[i, focus_col] > 0]
        notes.append(
            f"Showing the {len(rows)} of {n_total} candidates covering the focus unit "
            f"{id_text(focus_unit_id)}."
            if focus_unit_id is not None and focus_col is not None
            else "No focus unit: no candidate rows."
        )
    elif n_total > HEATMAP_FILTER_ROWS:
        rows = [i for i in rows if sub[i].max(initial=0.0) > 0]
        if len(rows) < n_total:  # "only the 200" of 200 said nothing (app QA)
            notes.append(
                f"The package has {n_total} candidates; only the {len(rows)} that cover a "
                "filtered unit are shown."
            )
    if len(rows) > HEATMAP_MAX_ROWS:

        def row_priority(i: int) -> tuple[int, int]:
            on_focus = focus_col is not None and sub[i, focus_col] > 0
            return heatmap_row_rank(on_focus, i in store_set or i in opt_set or i in cut_set, i)

        keep = sorted(sorted(rows, key=row_priority)[:HEATMAP_MAX_ROWS])
        notes.append(
            f"Showing {len(keep)} of {len(rows)} candidate rows (cap {HEATMAP_MAX_ROWS}), "
            f"picked in this order: those covering the focus unit, then the store's and the "
            f"{opt_word}'s, then by arrival; drawn in arrival order."
        )
        rows = keep
    col_order = list(range(len(dense_cols)))
    if len(col_order) > HEATMAP_MAX_COLS:
        counts = (sub[rows] > 0).sum(axis=0) if rows else np.zeros(len(dense_cols))

        def col_priority(j: int) -> tuple[int, int, int]:
            return (0 if j == focus_col else 1, -int(counts[j]), j)

        keep_c = sorted(sorted(col_order, key=col_priority)[:HEATMAP_MAX_COLS])
        notes.append(
            f"Showing {len(keep_c)} of {len(col_order)} unit columns (cap {HEATMAP_MAX_COLS}), "
            "picked in this order: the focus unit, then the units most often covered by the "
            "rows shown; drawn in the package's order."
        )
        col_order = keep_c
    z = sub[np.ix_(rows, col_order)] if rows else np.zeros((0, len(col_order)))
    col_pos = [dense_cols[j] for j in col_order]
    col_ids = tuple(inst.unit_ids[r] for r in col_pos)
    col_kinds = tuple(inst.unit_kinds[r] for r in col_pos)
    spans: list[tuple[str, int, int]] = []
    for j, k in enumerate(col_kinds):
        if spans and spans[-1][0] == k:
            spans[-1] = (k, spans[-1][1], j)
        else:
            spans.append((k, j, j))
    row_ids = tuple(inst.candidate_ids[i] for i in rows)
    hover = []
    for a, i in enumerate(rows):
        cid = inst.candidate_ids[i]
        head = (
            f"{inst.candidate_types[i]}, cost {float(inst.cost[i]):g}: "
            f"{_clip(look.cand_text.get(cid, ''), 90)}"
        )
        hover.append(
            tuple(
                f"{head}<br>{kind}: {_clip(getattr(unit_by_id.get(uid), 'text', ''), 90)}"
                if z[a, b] > 0
                else ""
                for b, (uid, kind) in enumerate(zip(col_ids, col_kinds, strict=True))
            )
        )
    return HeatmapData(
        row_ids=row_ids,
        row_labels=tuple(
            _membership_label(
                inst.candidate_ids[i],
                i in store_set,
                i in opt_set,
                opt_word[0].upper(),
                i in cut_set,
            )
            for i in rows
        ),
        row_types=tuple(inst.candidate_types[i] for i in rows),
        row_in_store=tuple(i in store_set for i in rows),
        row_in_opt=tuple(i in opt_set for i in rows),
        col_ids=col_ids,
        col_kinds=col_kinds,
        kind_spans=tuple(spans),
        z=tuple(tuple(float(v) for v in row) for row in z),
        hover=tuple(hover),
        n_rows_total=n_total,
        n_cols_total=len(dense_cols),
        message=" ".join(notes),
        focus_col_idx=col_order.index(focus_col) if focus_col in col_order else None,
        row_cut=tuple(i in cut_set for i in rows),
    )


def _timeline(
    package: Package, inst: CompiledInstance, ev: StoreEvaluation, look: _Lookup
) -> TimelineData:
    exps = sorted(package.experiences, key=lambda e: (e.time, e.id))
    exp_time = {e.id: float(e.time) for e in exps}
    unit = package.cost_unit
    # The page's name for the optimum: over P+ for an external store, as the heatmap, Compare
    # and the caption say (QA s47: "OPT" here beside "OPT over P+" everywhere else).
    opt_row = ("OPT" if ev.opt_certified else ev.opt_label) + _over_union(ev.source_kind)
    opt_word = "optimum" if ev.opt_certified else "incumbent"
    chosen_row = f"{ev.label} (chosen)"
    rows: list[tuple[str, list[str]]] = [
        (chosen_row, list(ev.selected)),
        (opt_row, list(ev.opt_selected)),
    ]
    #: Row -> the memories its package store wrote and its recency cut dropped: drawn as cut,
    #: so the chart of what each store wrote shows them (QA s49).
    cut: dict[str, list[str]] = {chosen_row: list(ev.dropped)}
    skipped: list[str] = []
    base = compile_cached(package)
    # Why a row is empty, where the numbers say so (QA s47: empty rows vanished unexplained).
    why_empty: dict[str, str] = {}
    limit = budget_with_tolerance(ev.budget)
    for s in package.stores:
        if s.is_external:
            if s.id != ev.store_id:
                skipped.append(s.display_name)
            continue
        members, _ = _store_members(base, s)
        row = chosen_row if s.id == ev.store_id else s.display_name
        if not members:
            why_empty[row] = "it holds no memory"
        elif min(float(base.cost[i]) for i in members) > limit:
            cheapest = min(float(base.cost[i]) for i in members)
            why_empty[row] = f"its cheapest memory costs {amount_text(cheapest, unit)}"
        if s.id == ev.store_id:
            continue
        kept, dropped = _prune_by_order(base, members, ev.budget)
        rows.append((s.display_name, [base.candidate_ids[i] for i in sorted(kept)]))
        cut[s.display_name] = [base.candidate_ids[i] for i in sorted(dropped)]
    if ev.opt_certified and ev.opt_value <= ZERO_OPT:
        why_empty[opt_row] = "the optimum is 0"
    points = []
    # Distinct memories: one kept by both the store and the optimum counts once (QA: 9 for 6).
    external_ids: set[str] = set()
    cut_external: set[str] = set()
    for row, ids in rows:
        for cid, is_cut in [*((c, False) for c in ids), *((c, True) for c in cut.get(row, ()))]:
            exp_id = look.cand_exp.get(cid)
            if exp_id is None:  # an external memory: no experience to place it at
                (cut_external if is_cut else external_ids).add(cid)
                continue
            i = base.candidate_idx(cid)
            points.append(
                TimelinePoint(
                    row=row,
                    experience_id=exp_id,
                    time=exp_time[exp_id],
                    candidate_id=cid,
                    type=base.candidate_types[i],
                    cost=float(base.cost[i]),
                    text=_clip(look.cand_text.get(cid, ""), 120),
                    cut=is_cut,
                )
            )
    notes = []
    external_left = len(external_ids)
    if external_left:
        notes.append(
            f"{_plural(external_left, 'external memory', 'external memories')} (in the chosen "
            f"store or the union optimum) {'belongs' if external_left == 1 else 'belong'} to no "
            "experience and cannot be placed on the timeline; the Compare page lists them."
        )
    if cut_external:
        n = len(cut_external)
        notes.append(
            f"{_plural(n, 'external memory', 'external memories')} the chosen store wrote and "
            f"cut to fit the budget {'is' if n == 1 else 'are'} not drawn either: "
            f"{_list(sorted(cut_external), 4)}."
        )
    if skipped:
        notes.append(f"External stores not shown: {', '.join(map(id_text, skipped))}.")
    budget_text = amount_text(ev.budget, unit)
    cheapest = float(base.cost.min()) if base.n_candidates else 0.0
    n_cut = Counter(p.row for p in points if p.cut)
    if all(not ids for _, ids in rows) and cheapest > limit:
        notes.append(
            f"Nothing fits budget {budget_text}: the package's cheapest memory costs "
            f"{amount_text(cheapest, unit)}, so every store and the {opt_word} kept nothing"
            + (
                "; what the package's stores wrote is drawn crossed out, as cut at this budget."
                if n_cut
                else " and every row is empty."
            )
        )
    else:
        empty = []
        all_cut = []
        for k, (row, ids) in enumerate(rows):
            # A row of external memories only is as blank as one with none (QA s47: Letta's
            # row was empty and no note named it).
            n_drawn = sum(1 for cid in ids if look.cand_exp.get(cid) is not None)
            if n_drawn:
                continue
            if n_cut[row]:
                # Not empty: its memories are drawn crossed out (QA s49).
                said = (
                    f"{id_text(row)} kept none of the "
                    f"{_plural(n_cut[row], 'memory', 'memories')} it wrote"
                )
                all_cut.append(f"{said} ({why_empty[row]})" if row in why_empty else said)
                continue
            if ids:
                empty.append(
                    f"{id_text(row)}: its {_plural(len(ids), 'kept memory', 'kept memories')} "
                    f"{'belongs' if len(ids) == 1 else 'belong'} to no experience (external), "
                    "so its row is empty"
                )
                continue
            said = f"{id_text(row)} {'kept' if k == 1 else 'wrote'} nothing"
            empty.append(f"{said} ({why_empty[row]})" if row in why_empty else said)
        if empty:
            notes.append(f"Empty rows at budget {budget_text}: {'; '.join(empty)}.")
        if all_cut:
            notes.append(
                f"Rows whose every memory is cut at budget {budget_text} (drawn crossed out): "
                f"{'; '.join(all_cut)}."
            )
    if len(exps) > TIMELINE_DENSE:
        notes.append(_timeline_difference(ev, chosen_row, opt_row, len(exps), external_ids))
    types = tuple(sorted({p.type for p in points}))
    return TimelineData(
        rows=tuple(r for r, _ in rows),
        points=tuple(points),
        experiences=tuple((e.id, float(e.time), _clip(e.text, 120)) for e in exps),
        types=types,
        message=" ".join(notes),
    )


def _timeline_difference(
    ev: StoreEvaluation, chosen_row: str, opt_row: str, n_exps: int, external_ids: set[str]
) -> str:
    """The note on a dense timeline naming where the chosen store and the optimum differ: at
    a few pixels per experience their rows look alike whatever they keep."""
    mine, theirs = set(ev.selected), set(ev.opt_selected)
    only_mine = sorted(mine - theirs)
    only_theirs = sorted(theirs - mine)
    n = len(only_mine) + len(only_theirs)
    if not n:
        return (
            f"{id_text(chosen_row)} keeps the same "
            f"{_plural(len(mine), 'memory', 'memories')} as {opt_row}."
        )
    sides = []
    if only_mine:
        sides.append(f"only {id_text(chosen_row)} keeps {_list(only_mine, 4)}")
    if only_theirs:
        sides.append(f"only {opt_row} keeps {_list(only_theirs, 4)}")
    n_external = len((mine ^ theirs) & external_ids)
    if not n_external:
        ringed = "it is ringed on its row" if n == 1 else "they are ringed on their rows"
    elif n_external == n:  # no experience to place them at
        ringed = "it is external and not drawn" if n == 1 else "they are external and not drawn"
    else:
        ringed = (
            f"{n - n_external} of them {'is' if n - n_external == 1 else 'are'} ringed, the "
            f"{_plural(n_external, 'external memory', 'external memories')} not drawn"
        )
    return (
        f"{id_text(chosen_row)} and {opt_row} differ in "
        f"{_plural(n, 'memory', 'memories')}: {'; '.join(sides)}. With {n_exps:,} experiences "
        f"the markers overlap and the two rows can look alike; {ringed}."
    )


def _graph(
    package: Package,
    inst: CompiledInstance,
    look: _Lookup,
    units_pos: Sequence[int],
    focus_unit_id: str | None,
    store_set: set[int],
    opt_set: set[int],
    queries_of: dict[str, list[int]],
    neighbourhood: bool = False,
    cut_set: frozenset[int] = frozenset(),
) -> GraphData:
    csc = inst.coverage_csc
    group_pos = {gid: k for k, gid in enumerate(inst.group_ids)}

    def covering(r: int) -> set[int]:
        lo, hi = csc.indptr[r], csc.indptr[r + 1]
        return {int(i) for i, a in zip(csc.indices[lo:hi], csc.data[lo:hi], strict=True) if a > 0}

    # Here, not with the module: 0.2 s that `score`, Compare and every app start paid for the
    # Evidence explorer's graph alone (s56).
    import networkx as nx

    def build(unit_positions: Sequence[int], only: set[int] | None = None) -> nx.DiGraph:
        g = nx.DiGraph()
        cands: set[int] = set()
        if only is not None:
            cands = set(only)
        else:
            for r in unit_positions:
                cands |= covering(r)
        exp_nodes = sorted(
            {
                look.cand_exp.get(inst.candidate_ids[i], inst.group_ids[int(inst.group_idx[i])])
                for i in cands
            },
            key=lambda gid: group_pos[gid],
        )
        for gid in exp_nodes:
            g.add_node(f"e|{gid}", layer=0, label=gid)
        for i in sorted(cands):
            g.add_node(f"c|{inst.candidate_ids[i]}", layer=1, label=inst.candidate_ids[i], idx=i)
        unit_set = set(unit_positions)
        for r in unit_positions:
            g.add_node(f"u|{inst.unit_ids[r]}", layer=2, label=inst.unit_ids[r], pos=r)
        q_nodes: list[int] = []
        for r in unit_positions:
            for qi in queries_of.get(inst.unit_ids[r], ()):
                if qi not in q_nodes:
                    q_nodes.append(qi)
        for qi in q_nodes:
            g.add_node(f"q|{package.queries[qi].id}", layer=3, label=package.queries[qi].id, qi=qi)
        for i in sorted(cands):
            cid = inst.candidate_ids[i]
            gid = look.cand_exp.get(cid, inst.group_ids[int(inst.group_idx[i])])
            g.add_edge(f"e|{gid}", f"c|{cid}")
            lo, hi = inst.coverage.indptr[i], inst.coverage.indptr[i + 1]
            for r, a in zip(inst.coverage.indices[lo:hi], inst.coverage.data[lo:hi], strict=True):
                if a > 0 and int(r) in unit_set:
                    g.add_edge(f"c|{cid}", f"u|{inst.unit_ids[int(r)]}", coverage=float(a))
        for qi in q_nodes:
            q = package.queries[qi]
            for uid in q.requires:
                r = inst.unit_index.get(uid)
                if r is not None and r in unit_set:
                    g.add_edge(f"u|{uid}", f"q|{q.id}")
        return g

    message = ""
    g = build(units_pos)
    too_big = g.number_of_nodes() > GRAPH_MAX_NODES
    if (too_big or neighbourhood) and focus_unit_id is not None:
        full = g.number_of_nodes()
        focus_r = inst.unit_index[focus_unit_id]
        near = covering(focus_r)
        # The focus unit's neighbourhood: its covering candidates, their experiences, the
        # filtered units those candidates also cover, and the queries requiring any of them.
        reach = {focus_r}
        for i in near:
            lo, hi = inst.coverage.indptr[i], inst.coverage.indptr[i + 1]
            reach.update(int(r) for r in inst.coverage.indices[lo:hi])
        in_filter = set(units_pos)
        units_near = [r for r in units_pos if r in reach and r in in_filter]
        g = build(units_near, only=near)
        what = "the other filtered units they cover and the queries requiring them"
        if g.number_of_nodes() > GRAPH_MAX_NODES:
            g = build([focus_r], only=near)
            what = "and the queries requiring it"
        message = (
            f"The filtered graph has {full} nodes; showing "
            + ("" if too_big else f"{g.number_of_nodes()} of them, ")
            + f"the neighbourhood of the focus unit {id_text(focus_unit_id)}: the candidates "
            f"covering it, their experiences, {what}."
        )
    if g.number_of_nodes() == 0:
        return GraphData(
            (),
            (),
            (),
            (),
            (),
            (),
            (),
            (),
            (),
            (),
            (),
            (),
            (),
            0,
            0,
            message or "No units selected.",
        )
    pos = _layered_positions(g)
    nodes = list(g.nodes)
    node_layers = tuple(GRAPH_LAYERS[g.nodes[n]["layer"]] for n in nodes)
    hover = []
    unit_by_id = {u.id: u for u in package.units}
    exp_by_id = {e.id: e for e in package.experiences}
    in_store, in_opt, in_cut = [], [], []
    for n in nodes:
        data = g.nodes[n]
        label = data["label"]
        layer = data["layer"]
        s = o = c = False
        if layer == 0:
            e = exp_by_id.get(label)
            hover.append(f"experience {label}<br>{_clip(e.text if e else '', 100)}")
        elif layer == 1:
            i = data["idx"]
            s, o, c = i in store_set, i in opt_set, i in cut_set
            store_says = "wrote it, cut at this budget" if c else "yes" if s else "no"
            hover.append(
                f"candidate {label} ({inst.candidate_types[i]}, cost {float(inst.cost[i]):g})"
                f"<br>{_clip(look.cand_text.get(label, ''), 100)}"
                f"<br>store: {store_says} · optimum: {'yes' if o else 'no'}"
            )
        elif layer == 2:
            u = unit_by_id.get(label)
            hover.append(
                f"unit {label} ({inst.unit_kinds[data['pos']]}, weight "
                f"{float(inst.weight[data['pos']]):.3g})<br>{_clip(u.text if u else '', 100)}"
            )
        else:
            q = package.queries[data["qi"]]
            hover.append(f"query {label} (weight {q.weight:g})<br>{_clip(q.text, 100)}")
        in_store.append(s)
        in_opt.append(o)
        in_cut.append(c)
    ex: list[float | None] = []
    ey: list[float | None] = []
    fx: list[float | None] = []
    fy: list[float | None] = []
    focus_node = f"u|{focus_unit_id}" if focus_unit_id else None
    for a, b in g.edges:
        (x0, y0), (x1, y1) = pos[a], pos[b]
        target = (fx, fy) if focus_node in (a, b) else (ex, ey)
        target[0].extend([float(x0), float(x1), None])
        target[1].extend([float(y0), float(y1), None])
    layer_x: dict[str, float] = {}
    for n, layer in zip(nodes, node_layers, strict=True):
        layer_x.setdefault(layer, float(pos[n][0]))
    return GraphData(
        node_ids=tuple(nodes),
        node_labels=tuple(g.nodes[n]["label"] for n in nodes),
        node_layers=node_layers,
        node_x=tuple(float(pos[n][0]) for n in nodes),
        node_y=tuple(float(pos[n][1]) for n in nodes),
        node_hover=tuple(hover),
        node_in_store=tuple(in_store),
        node_in_opt=tuple(in_opt),
        edge_x=tuple(ex),
        edge_y=tuple(ey),
        focus_edge_x=tuple(fx),
        focus_edge_y=tuple(fy),
        layer_x=tuple(layer_x.items()),
        n_nodes=g.number_of_nodes(),
        n_edges=g.number_of_edges(),
        message=message,
        node_cut=tuple(in_cut),
    )


def _layered_positions(g: nx.DiGraph) -> dict[str, tuple[float, float]]:
    """Layer ``k`` at x = k; inside a layer nodes spread evenly over y in [-1, 1], top down.

    Experiences keep arrival order and candidates canonical order (insertion order); units and
    queries are ordered by the barycentre of their predecessors (fewer crossing links), ties by
    insertion order.
    """
    layers: dict[int, list[str]] = {}
    for n, data in g.nodes(data=True):
        layers.setdefault(int(data["layer"]), []).append(n)
    rank: dict[str, float] = {}
    pos: dict[str, tuple[float, float]] = {}
    for k in sorted(layers):
        members = layers[k]
        if k >= 2:  # units, queries: barycentre of the previous layer's neighbours

            def bary(item: tuple[int, str]) -> tuple[float, int]:
                j, n = item
                preds = [rank[p] for p in g.predecessors(n) if p in rank]
                return (sum(preds) / len(preds) if preds else math.inf, j)

            members = [n for _, n in sorted(enumerate(members), key=bary)]
        count = len(members)
        for j, n in enumerate(members):
            rank[n] = float(j) / max(1, count - 1)
            pos[n] = (float(k), 1.0 - 2.0 * j / (count - 1) if count > 1 else 0.0)
    return pos


def view_for_key(
    package: Package,
    budget: float,
    store_key: str,
    *,
    view: str = "compare",
    kinds: Iterable[str] | None = None,
    focus_unit_id: str | None = None,
    heatmap_rows: str = "all",
    graph_scope: str = "all",
    solver: str = "auto",
    time_limit: float | None = None,
) -> CompareView | EvidenceView:
    """:func:`compare_view` or :func:`evidence_view` for a frame store key."""
    writer, store_id = parse_store_key(store_key)
    if view == "compare":
        return compare_view(
            package,
            budget,
            writer=writer,
            store_id=store_id,
            solver=solver,
            time_limit=time_limit,
        )
    if view == "evidence":
        return evidence_view(
            package,
            budget,
            writer=writer,
            store_id=store_id,
            kinds=kinds,
            focus_unit_id=focus_unit_id,
            heatmap_rows=heatmap_rows,
            graph_scope=graph_scope,
            solver=solver,
            time_limit=time_limit,
        )
    raise UnknownNameError(f"unknown view {cut_repr(view)} (known: compare, evidence)")


__all__ = [
    "BucketRow",
    "CompareView",
    "CoveringCandidate",
    "EvidenceUnit",
    "EvidenceView",
    "ExperienceRow",
    "GRAPH_MAX_NODES",
    "GRAPH_SCOPES",
    "GraphData",
    "HEATMAP_MAX_COLS",
    "HEATMAP_MAX_ROWS",
    "HEATMAP_ROWS",
    "HeatmapData",
    "KIND_BUCKETS",
    "MemoryCell",
    "QueryRow",
    "TimelineData",
    "TimelinePoint",
    "UnitCompareRow",
    "amount_text",
    "bucket_of",
    "compare_view",
    "evidence_view",
    "heatmap_row_rank",
    "kind_buckets_text",
    "marginal_values",
    "parse_store_key",
    "view_for_key",
]
