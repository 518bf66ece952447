"""Package format v1: typed model, loading, validation, saving and the content hash.

A package is one JSON document (DESIGN.md section 3). :func:`parse_package` validates a decoded
document and lists *every* problem with its JSON path, the offending value and the rule broken;
nothing is clamped or dropped silently. :func:`load_package` reads a file (or, through the
artifact importer, a coverage-package folder or zip). :func:`package_to_dict` and
:func:`save_package` write the canonical form back, and :func:`content_hash` is a stable hash of
that canonical form, used as the cache key everywhere.

Examples
--------
>>> pkg = parse_package({
...     "memaudit": 1, "id": "tiny",
...     "experiences": [{"id": "e1", "time": 0}],
...     "units": [{"id": "r1", "kind": "fact", "weight": 2.0}],
...     "candidates": [{"id": "e1:fact", "experience": "e1", "type": "atomic_fact",
...                     "cost": 1, "coverage": {"r1": 1.0}}],
... })
>>> pkg.unit_weights()
{'r1': 2.0}
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import os
import re
import stat
import sys
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .errors import (
    INVISIBLE_PRINTABLE,
    NORMAL_MIN_TEXT,
    RULE_FILE_EXISTS,
    RULE_FILE_TYPE,
    RULE_FORMAT_VERSION,
    RULE_KNOWN_FIELD,
    RULE_NOT_NULL,
    RULE_READABLE,
    RULE_REQUIRED,
    RULE_TYPE,
    RULE_UTF8,
    MemAuditError,
    PackageError,
    Problem,
    Problems,
    capped,
    check_type,
    closest_name,
    cut_repr,
    file_name_text,
    id_text,
    probe_path,
    shown_text,
)
from .grids import MAX_RANGE_BUDGETS
from .plugins import SATURATION_ROUTE
from .readonly import ReadOnlyDict
from .saturations import SATURATIONS, UNSENDABLE_SATURATIONS, get_saturation
from .shortrepr import brief, count, short_repr

FORMAT_VERSION = 1


def format_version_problem(version: object, newest: int = FORMAT_VERSION) -> str | None:
    """Why a package's format version ``version`` (its ``memaudit``) is not the one this
    MemAudit reads, ``newest``, or None when it is: a later version says it was written by a
    newer MemAudit, an earlier one by an older, as a saved result's version says (QA s51 #7:
    "unsupported format version (expected 1)" said neither). A JSON number: an integer, or
    1.0 as tools that write floats give it (schema QA s38: JSON Schema's const 1 takes 1.0);
    not ``np.bool_(True)`` nor ``Decimal(1)`` (library QA).

    >>> format_version_problem(1), format_version_problem(1.0)
    (None, None)
    >>> print(format_version_problem(2))
    written by a newer MemAudit (format version 2); this one reads format version 1
    >>> print(format_version_problem(1, newest=2))
    written by an older MemAudit (format version 1); this one reads format version 2
    >>> print(format_version_problem(0)); print(format_version_problem("1"))
    format versions start at 1; this MemAudit reads format version 1
    not a format version: a whole number is expected; this MemAudit reads format version 1
    """
    reads = f"this MemAudit reads format version {newest}"
    if (
        not isinstance(version, numbers.Integral | float)
        or isinstance(version, bool)
        or (isinstance(version, float) and not (math.isfinite(version) and version.is_integer()))
    ):
        return f"not a format version: a whole number is expected; {reads}"
    number = int(version)
    if number == newest:
        return None
    if number < 1:
        return f"format versions start at 1; {reads}"
    age = "a newer" if number > newest else "an older"
    return (
        f"written by {age} MemAudit (format version {number}); this one reads format "
        f"version {newest}"
    )


VALIDITY_TYPES = frozenset({"tombstone", "compound_update"})
GENERIC_TYPES = frozenset({"raw_span", "atomic_fact", "summary"})
UNIT_KINDS = (
    "current_truth",
    "invalidation",
    "stale",
    "temporal_order",
    "temporal_interval",
    "fact",
    "preference",
    "context",
    "abstention",
    "provenance",
)
CANDIDATE_TYPES = (
    "raw_span",
    "atomic_fact",
    "summary",
    "tombstone",
    "compound_update",
    "graph_edge",
    "interval_fact",
    "skill",
    "rule",
    "abstention",
    "uncertainty",
    "compound_evidence",
)


@dataclass(frozen=True)
class Experience:
    """One event of the stream (a turn, a message): its candidates are the ways to remember
    it, and a store holds at most one of them (the experience is their group).

    Examples
    --------
    >>> from memaudit_core import generate
    >>> pkg = generate("update_chain")
    >>> exp = pkg.experiences[1]
    >>> exp.id, exp.time, exp.text
    ('update_1', 1.0, 'The user updates the value to version 1.')
    >>> [c.type for c in pkg.candidates if c.experience == exp.id]
    ['raw_span', 'atomic_fact', 'tombstone', 'compound_update', 'summary']
    """

    id: str
    time: float
    session: str | None = None
    text: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Unit:
    """A unit of evidence a store can cover, with a ``kind`` and a ``weight`` (None: the sum
    of the weights of the queries that require it, :meth:`Package.unit_weights`).

    Examples
    --------
    >>> from memaudit_core import generate
    >>> pkg = generate("update_chain")
    >>> [(u.id, u.kind, u.weight) for u in pkg.units[2:5]]
    [('v_2', 'stale', 0.1), ('v_3', 'current_truth', 2.3), ('inv_0', 'invalidation', 1.85)]
    """

    id: str
    kind: str = "fact"
    text: str = ""
    weight: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)


def _freeze_sequence(obj: Any, name: str) -> None:
    """Store a list given for a sequence field as a tuple (QA s42 defect 2: a hand-built
    package kept the caller's ``requires`` / ``select`` lists, so changing them later changed
    scores under the same content hash, and a duplicate selection went unchecked)."""
    value = getattr(obj, name)
    if isinstance(value, list):
        object.__setattr__(obj, name, tuple(value))


@dataclass(frozen=True)
class Query:
    """A question the memory should answer: it requires units, and its ``weight`` goes to
    each of them that has no weight of its own.

    Examples
    --------
    >>> from memaudit_core import Candidate, Experience, Package, Query, Unit
    >>> pkg = Package(
    ...     id="trip",
    ...     experiences=(Experience("e1", time=0),),
    ...     units=(Unit("city"), Unit("date")),
    ...     candidates=(Candidate("e1_fact", "e1", "atomic_fact", 1, {"city": 1, "date": 1}),),
    ...     queries=(Query("where", requires="city", weight=2.0),
    ...              Query("when", requires=("city", "date"))),
    ... )
    >>> pkg.queries[0].requires  # a lone id is one id
    ('city',)
    >>> pkg.unit_weights()
    {'city': 3.0, 'date': 1.0}
    """

    id: str
    requires: tuple[str, ...]
    text: str = ""
    answer: str = ""
    weight: float = 1.0
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # A lone id is one id, as in Store.select (QA s42: "u1" was read as "u", "1").
        if isinstance(self.requires, str):
            object.__setattr__(self, "requires", (self.requires,))
        _freeze_sequence(self, "requires")


class FrozenDict(ReadOnlyDict):
    """A dict that refuses changes: a frozen package's coverage rows.

    Library QA: ``cand.coverage[u] = 0`` on a loaded package changed what the solvers saw,
    but not its cached content hash, so ``solve`` and ``score`` (compiled by hash) disagreed.
    A ``dict`` subclass, so JSON, ``dict(...)`` and ``isinstance(x, dict)`` work as before.

    >>> row = FrozenDict({"u1": 1.0})
    >>> try:
    ...     row["u1"] = 0.0
    ... except TypeError as exc:
    ...     print(exc)
    a package's coverage row cannot be changed: build a new package (parse_package)
    """

    #: What a change is told (a subclass names its own dict).
    REFUSAL = "a package's coverage row cannot be changed: build a new package (parse_package)"

    def refusal(self) -> Exception:
        return TypeError(self.REFUSAL)


def _freeze_coverage(obj: Any, kind: str) -> None:
    """Store ``obj.coverage`` (a mapping, or a list of ``(unit, value)`` pairs) as a
    :class:`FrozenDict`.

    QA s42 round 2 (defect 3): ``None`` and ``5`` raised a bare TypeError, ``"u1"`` a
    ValueError, the set ``{"u1"}`` became ``{'u': '1'}`` and a unit given twice kept its last
    value silently, where the JSON loader refuses a repeated key (duplicate-key). Each is now a
    :class:`PackageError` naming the field and the rule.
    """
    coverage = obj.coverage
    if isinstance(coverage, FrozenDict):
        return
    path = f"{kind}[{obj.id}].coverage"
    source = f"<memory> ({type(obj).__name__} {obj.id!r} built in Python)"
    if isinstance(coverage, Mapping):
        object.__setattr__(obj, "coverage", FrozenDict(coverage))
        return
    pairs = list(coverage) if isinstance(coverage, (list, tuple)) else None
    if pairs is None or not all(
        isinstance(pair, (list, tuple)) and len(pair) == 2 and isinstance(pair[0], Hashable)
        for pair in pairs
    ):
        raise PackageError(
            source,
            [
                Problem(
                    path,
                    RULE_TYPE,
                    "must be an object mapping unit ids to numbers (or a list of "
                    "(unit id, number) pairs)",
                    coverage,
                )
            ],
        )
    row: dict[Any, Any] = {}
    for unit, value in pairs:
        if unit in row:
            raise PackageError(
                source,
                [
                    Problem(
                        f"{path}[{unit}]",
                        "duplicate-key",
                        "this unit appears more than once in the coverage row "
                        "(only one value could be kept)",
                        unit,
                    )
                ],
            )
        row[unit] = value
    object.__setattr__(obj, "coverage", FrozenDict(row))


@dataclass(frozen=True)
class Candidate:
    """One way to remember an experience: a ``type`` (representation), a ``cost`` in the
    package's ``cost_unit`` and a coverage row (unit id -> share in [0, 1]).

    Examples
    --------
    >>> from memaudit_core import generate
    >>> pkg = generate("update_chain")
    >>> c = next(c for c in pkg.candidates if c.id == "update_1_compound_update")
    >>> c.experience, c.type, c.cost, dict(c.coverage)
    ('update_1', 'compound_update', 3.0, {'v_1': 0.95, 'inv_0': 1.0})
    """

    id: str
    experience: str
    type: str
    cost: float
    coverage: dict[str, float]
    text: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _freeze_coverage(self, "candidates")


@dataclass(frozen=True)
class ExternalMemory:
    """A memory written by an external system; not a package candidate (union package).

    Examples
    --------
    >>> from memaudit_core import ExternalMemory, Store, generate, score, with_store
    >>> mem = ExternalMemory("m1", cost=3, coverage={"v_3": 1}, text="value is version 3")
    >>> pkg = with_store(generate("update_chain"), Store("notes", memories=(mem,)))
    >>> ev = score(pkg, 6, store_id="notes")  # against OPT over the union package
    >>> ev.source_kind, ev.value, ev.ratio_text
    ('external', 2.3, '0.293')
    """

    id: str
    cost: float
    coverage: dict[str, float]
    text: str = ""
    created_at: str | None = None
    salience: float | None = None
    status: str = "active"
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _freeze_coverage(self, "memories")


@short_repr
@dataclass(frozen=True)
class Store:
    """A written store: package candidates it selects and/or external memories.

    Examples
    --------
    >>> from memaudit_core import Store, generate, score, with_store
    >>> mine = Store("mine", select=["update_3_atomic_fact", "update_2_tombstone"])
    >>> pkg = with_store(generate("update_chain"), mine)
    >>> ev = score(pkg, 6, store_id="mine")
    >>> ev.value, round(ev.opt.value, 3), ev.ratio_text
    (4.15, 7.735, '0.537')
    """

    id: str
    label: str = ""
    system: str | None = None
    select: tuple[str, ...] = ()
    memories: tuple[ExternalMemory, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # A lone id is one id (library QA: "abc" was read as the ids "a", "b", "c").
        if isinstance(self.select, str):
            object.__setattr__(self, "select", (self.select,))
        _freeze_sequence(self, "select")
        _freeze_sequence(self, "memories")

    @property
    def is_external(self) -> bool:
        return bool(self.memories)

    @property
    def display_name(self) -> str:
        return self.label or self.id


#: Memory statuses that mean the system removed the memory: it is not part of the store.
DELETED_STATUSES = frozenset({"deleted"})


def is_deleted(memory: Any) -> bool:
    """True for an external memory whose status says it was deleted (case-insensitive)."""
    return str(memory.status).strip().lower() in DELETED_STATUSES


def store_as_kept(store: Store) -> Store:
    """The store without its deleted memories (superseded ones stay: the system holds them).

    The one rule for what a store holds: union scoring, :func:`~memaudit_core.analysis.score`
    and :func:`~memaudit_core.compiled.compile_package` (QA s42: it counted deleted memories,
    so OPT+ and the upper-pruned bound disagreed with union_report) all take it from here.
    """
    if not any(is_deleted(m) for m in store.memories):
        return store
    return replace(store, memories=tuple(m for m in store.memories if not is_deleted(m)))


def parse_created_at(text: str) -> tuple[datetime, bool] | None:
    """An external memory's ``created_at`` as (aware UTC time, whether the text gave an
    offset), or None when it is not ISO-8601. A time without an offset is read as UTC.

    Recency pruning compares these, not the strings: "11:00-07:00" is after "17:00+00:00"
    (library QA: string order kept the older of the two).

    >>> parse_created_at("2024-05-01T11:00:00-07:00") > parse_created_at("2024-05-01T17:00:00Z")
    True
    >>> at, has_offset = parse_created_at("2025-01-02")
    >>> at.isoformat(), has_offset, parse_created_at("yesterday")
    ('2025-01-02T00:00:00+00:00', False, None)
    """
    try:
        moment = datetime.fromisoformat(text.strip())
    except (ValueError, AttributeError):
        return None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC), False
    return moment.astimezone(UTC), True


def _round_up(value: float) -> float:
    """``value`` rounded up to a whole number, or to 2 significant digits below 1 (CLI QA:
    costs summing to 0.6 made the default budget 1, which holds everything).

    Examples
    --------
    >>> _round_up(12.3), _round_up(0.06), _round_up(0.0123), _round_up(0.0)
    (13.0, 0.06, 0.013, 0.0)
    """
    if value >= 1 or value <= 0:
        return float(math.ceil(value))
    scale = 10.0 ** (1 - math.floor(math.log10(value)))
    return math.ceil(round(value * scale, 9)) / scale


#: True while :func:`_parse_package` builds a package it has just validated (QA s40 defect 1:
#: the parser's packages are not validated a second time; every other construction is).
_PARSED: ContextVar[bool] = ContextVar("memaudit_parsed_package", default=False)


@contextmanager
def _validated_construction() -> Iterator[None]:
    """Build :class:`Package` objects without the hand-built check (their content is validated
    by the caller, e.g. the parser that has just checked it)."""
    token = _PARSED.set(True)
    try:
        yield
    finally:
        _PARSED.reset(token)


#: Package fields that hold sequences; a hand-built list is stored as a tuple.
_SEQUENCE_FIELDS = (
    "experiences",
    "units",
    "candidates",
    "queries",
    "stores",
    "budgets",
    "warnings",
)


@short_repr
@dataclass(frozen=True)
class Package:
    """A validated package. Build it with :func:`parse_package` or :func:`load_package`, or
    by hand from :class:`Experience`, :class:`Unit`, :class:`Candidate`, ... objects.

    A package built by hand (``Package(...)``, ``dataclasses.replace(package, ...)``) is
    validated when it is built, with the rules of :func:`parse_package`: invalid content
    raises :class:`~memaudit_core.errors.PackageError` listing every problem by its JSON path
    in the :func:`package_to_dict` form (``$.candidates[0].cost`` is
    ``package.candidates[0].cost``) and rule. Lists given for the sequence fields are stored
    as tuples, and the parser's warnings are filled in when ``warnings`` is not given. The
    parser's own packages are not validated twice.

    Immutable by contract: the dataclasses are frozen and coverage rows are read-only
    :class:`FrozenDict` s, but ``meta`` dicts are plain (cheap to build and to pickle to
    worker processes). Editing one in place skips validation and leaves the memoised
    :meth:`content_hash`, and every cache keyed on it, describing the old content. To change a
    package, edit its dict form (:func:`package_to_dict`) and parse it again, or use
    :func:`replace_package`. Hashable by content (``functools.lru_cache`` takes packages).

    Examples
    --------
    A vegetarian who now eats fish: the update that also says the old fact is over is worth
    more than the bare new fact.

    >>> from memaudit_core import Candidate, Experience, Package, Unit, compile_package, solve
    >>> pkg = Package(
    ...     id="diet",
    ...     experiences=(Experience("e1", time=0), Experience("e2", time=1)),
    ...     units=(Unit("old", kind="stale", weight=0.2),
    ...            Unit("now", kind="current_truth", weight=2.0),
    ...            Unit("inv", kind="invalidation", weight=1.0)),
    ...     candidates=(Candidate("e1_fact", "e1", "atomic_fact", 2, {"old": 1}),
    ...                 Candidate("e2_fact", "e2", "atomic_fact", 2, {"now": 1}),
    ...                 Candidate("e2_update", "e2", "compound_update", 3, {"now": 1, "inv": 1})),
    ... )
    >>> opt = solve(compile_package(pkg), 3)
    >>> opt.label, opt.value, opt.selected
    ('OPT', 3.0, ('e2_update',))
    >>> from memaudit_core import PackageError
    >>> try:
    ...     Package(id="bad", experiences=pkg.experiences, units=pkg.units,
    ...             candidates=(Candidate("x", "e9", "atomic_fact", 2, {"now": 1}),))
    ... except PackageError as exc:
    ...     print(exc.problems[0].path, exc.problems[0].rule)
    $.candidates[0].experience known-experience
    """

    id: str
    experiences: tuple[Experience, ...]
    units: tuple[Unit, ...]
    candidates: tuple[Candidate, ...]
    queries: tuple[Query, ...] = ()
    stores: tuple[Store, ...] = ()
    title: str = ""
    description: str = ""
    cost_unit: str = "units"
    saturation: str = "cap1"
    budget: float | None = None
    budgets: tuple[float, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    source: str = "<memory>"

    def _repr_summary(self) -> str:
        # QA s40 (defect 2): the numbers a reader looks for, not every row (the generated
        # repr was 602 KB for 500 experiences); shortrepr.short_repr caps the line.
        return (
            f"{brief(self.id)}: {count(len(self.experiences), 'experience')}, "
            f"{count(len(self.candidates), 'candidate')}, {count(len(self.units), 'unit')}, "
            f"{count(len(self.queries), 'query', 'queries')}, {count(len(self.stores), 'store')}, "
            f"budget={brief(self.budget)}, cost_unit={brief(self.cost_unit)}, "
            f"saturation={brief(self.saturation)}, source={brief(self.source)}"
        )

    def __post_init__(self) -> None:
        if _PARSED.get():
            return
        # QA s40 defect 1: a hand-built package was never validated, so a coverage of 5.0 or a
        # cost of 0 or NaN was solved and certified OPT, and an unknown experience or unit, a
        # negative cost or a cost "1" crashed deep in compile or the solvers.
        for name in _SEQUENCE_FIELDS:
            _freeze_sequence(self, name)  # a list could be changed after validation
        parsed = _validate_built(self)
        if not self.warnings:
            object.__setattr__(self, "warnings", parsed.warnings)

    def unit_weights(self) -> dict[str, float]:
        """Resolved weights: explicit weight, else the sum of requiring queries' weights."""
        from_queries: dict[str, float] = {}
        for query in self.queries:
            for unit_id in query.requires:
                from_queries[unit_id] = from_queries.get(unit_id, 0.0) + query.weight
        return {
            u.id: (u.weight if u.weight is not None else from_queries.get(u.id, 0.0))
            for u in self.units
        }

    def total_cost(self) -> float:
        return float(sum(c.cost for c in self.candidates))

    def default_budget(self) -> float:
        """The package's budget, else 10% of the total candidate cost (rounded up, at least
        the cheapest candidate, whole when every cost is whole)."""
        if self.budget is not None:
            return float(self.budget)
        return self._useful_budgets((0.1 * self.total_cost(),))[0]

    def budget_grid(self) -> tuple[float, ...]:
        """The package's grid, else 1%, 2%, 5%, 10%, 20%, 50% of the total cost (rounded up
        as :meth:`default_budget` is)."""
        if self.budgets:
            return tuple(float(b) for b in self.budgets)
        total = self.total_cost()
        fractions = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5)
        return tuple(sorted(set(self._useful_budgets([f * total for f in fractions]))))

    def _useful_budgets(self, values: Sequence[float]) -> list[float]:
        # App QA: costs 1 and 3 opened at budget 0.4 (grid 0.04 .. 2), where nothing fits, so
        # OPT was 0 and every ratio n/a. A budget below the cheapest candidate shows nothing.
        # One pass over the costs for all values (packages of 66,000 candidates).
        costs = [c.cost for c in self.candidates]
        if not costs:
            return [_round_up(v) for v in values]
        cheapest = min(costs)
        whole = all(float(c).is_integer() for c in costs)
        return [
            float(math.ceil(max(v, cheapest))) if whole else _round_up(max(v, cheapest))
            for v in values
        ]

    def store(self, store_id: str) -> Store:
        from .errors import UnknownNameError

        for s in self.stores:
            if s.id == store_id:
                return s
        known = ", ".join(id_text(s.id) for s in self.stores) or "none"
        raise UnknownNameError(
            f"unknown store {cut_repr(store_id)} in package {self.id!r} (known: {known})"
        )

    def __hash__(self) -> int:
        # The generated hash failed on the meta dicts (library QA); equal packages have equal
        # content, so the content hash is consistent with ==.
        return hash(self.content_hash())

    def content_hash(self) -> str:
        # Frozen and immutable by contract, so the hash is computed once per object.
        cached = self.__dict__.get("_content_hash")
        if cached is None:
            cached = content_hash(self)
            object.__setattr__(self, "_content_hash", cached)
        return cached


# --------------------------------------------------------------------------- validation


def looks_like_package(data: Any) -> bool:
    """Whether decoded JSON is a MemAudit package: its format version field ``memaudit``, or
    the three arrays every package has. A hint for messages, never used to read a file; the
    one rule for the importers' and ``read_result``'s "this is a package" (review s49 #6:
    they disagreed).

    >>> looks_like_package({"memaudit": 1, "id": "p"}), looks_like_package({"results": []})
    (True, False)
    """
    return isinstance(data, dict) and (
        "memaudit" in data or {"experiences", "units", "candidates"} <= data.keys()
    )


#: The fields of a store object in a package's ``stores`` array (:class:`Store`).
_STORE_FIELDS = frozenset({"id", "label", "system", "select", "memories", "meta"})


def looks_like_store(data: Any) -> bool:
    """Whether decoded JSON is one MemAudit store object (an item of a package's ``stores``
    array: an ``id`` and ``select`` and/or ``memories``, nothing a store lacks). A hint for
    messages, never used to read a file, as :func:`looks_like_package` is.

    >>> looks_like_store({"id": "mine", "select": ["e1:fact"]}), looks_like_store({"id": "m1"})
    (True, False)
    """
    return (
        isinstance(data, dict)
        and "id" in data
        and bool({"select", "memories"} & data.keys())
        and data.keys() <= _STORE_FIELDS
    )


def json_type(value: object) -> str:
    """The JSON name of a decoded value's type (for messages in plain words).

    >>> json_type(True), json_type(2.5), json_type([1]), json_type(None)
    ('boolean', 'number', 'array', 'null')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


#: The smallest normal float: smaller nonzero numbers are refused (rule ``normal``).
_FLOAT_MIN = sys.float_info.min


class UnderflowFloat(float):
    """A JSON number written as non-zero that reads as 0.0 (``1e-400``: below the smallest
    double). Its value is 0.0; its text is kept, so that validation refuses it (rule
    ``normal``) quoting what was written. QA s44: such a coverage, weight or budget silently
    became 0, and a cost of 1e-400 was "must be greater than 0 (got 0.0)"."""

    __slots__ = ("literal",)

    literal: str

    def __new__(cls, literal: str) -> UnderflowFloat:
        self = super().__new__(cls, literal)
        self.literal = literal
        return self


class SubnormalFloat(float):
    """A JSON number below the normal range but not 0 (``3e-324``, read as 5e-324): its
    value, and its text as written, which rule ``normal`` quotes when it refuses it (QA s44:
    "3e-324" was quoted as the 5e-324 it decodes to). A copy or pickle is a plain float."""

    __slots__ = ("literal",)

    literal: str

    def __new__(cls, literal: str) -> SubnormalFloat:
        self = super().__new__(cls, literal)
        self.literal = literal
        return self

    def __reduce__(self) -> tuple[type, tuple[float]]:
        return float, (float(self),)


def json_float(literal: str) -> float:
    """``parse_float`` for every JSON reader of user numbers: ``float(literal)``, or an
    :class:`UnderflowFloat` when a non-zero literal reads as 0.0, or a :class:`SubnormalFloat`
    below the normal range (both keep the text, for rule ``normal`` to quote).

    >>> json_float("0.25"), json_float("-0.0e-999"), type(json_float("1e-400")).__name__
    (0.25, -0.0, 'UnderflowFloat')
    >>> json_float("3e-324"), json_float("3e-324").literal
    (5e-324, '3e-324')
    """
    value = float(literal)
    if -_FLOAT_MIN < value < _FLOAT_MIN:  # one comparison for the common, normal number
        if value != 0.0:
            return SubnormalFloat(literal)
        # Anything left of the mantissa but signs, zeros, points, underscores and spaces (what
        # float() takes around a 0) is a non-zero digit: the literal was not 0.
        if literal.lower().partition("e")[0].strip("+-0._ \t\n\r\f\v"):
            return UnderflowFloat(literal)
    return value


def underflow_message(zero_ok: bool = True) -> str:
    """What rule ``normal`` says of a number that underflows to 0 (:class:`UnderflowFloat`;
    the problem's value is its text as written); ``zero_ok``: whether 0 may be given there."""
    return (
        "too small for a double: it would read as 0; write "
        + ("0 or " if zero_ok else "")
        + f"a number at least {NORMAL_MIN_TEXT} in size"
    )


def underflow_problems(doc: object, base: str = "$") -> list[Problem]:
    """Rule ``normal`` problems for every :class:`UnderflowFloat` in ``doc`` (as decoded with
    :func:`json_float`), located by JSON path as the package loader locates them: for readers
    other than the package loader (exports, saved results); at most ``MAX_PROBLEMS + 1``."""
    return capped(_underflow_problems(doc, base))


def _underflow_problems(doc: object, base: str) -> Iterator[Problem]:
    stack: list[tuple[str, object]] = [(base, doc)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            stack.extend((_child_path(path, k), v) for k, v in reversed(node.items()))
        elif isinstance(node, list | tuple):
            stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(node))))
        elif type(node) is UnderflowFloat:
            yield Problem(path, "normal", underflow_message(), node.literal)


class _Checker(Problems):
    """Collects problems while walking a decoded JSON document (and stops the walk at
    :data:`~memaudit_core.errors.MAX_PROBLEMS`, as every collector does), and the warnings
    said of a valid package (the id look-alikes)."""

    def __init__(self, source: str) -> None:
        super().__init__(source)
        self.warnings: list[str] = []

    def string(
        self,
        obj: dict,
        key: str,
        path: str,
        required: bool,
        default: str = "",
        *,
        non_empty: bool = False,
    ) -> str:
        """The string at ``obj[key]`` (``default`` when absent); ``non_empty``: an optional
        field given as "" or spaces is refused, not read as its default (schema QA s38: an
        empty unit kind became "fact" without a word)."""
        if key not in obj:
            if required:
                self.add(f"{path}.{key}", RULE_REQUIRED, f"missing required field '{key}'")
            return default
        value = obj[key]
        if value is None:  # reported once, by _known_keys (rule not-null)
            return default
        if not isinstance(value, str):
            self.add(f"{path}.{key}", RULE_TYPE, "must be a string", value)
            return default
        if required and not value.strip():
            self.add(f"{path}.{key}", "non-empty", "must be a non-empty string", value)
        elif non_empty and not value.strip():
            self.add(
                f"{path}.{key}",
                "non-empty",
                f"must be a non-empty string (leave the field out for {default!r})",
                value,
            )
            return default
        return value

    def number(
        self,
        obj: dict,
        key: str,
        path: str,
        *,
        required: bool,
        minimum: float | None = None,
        exclusive_minimum: float | None = None,
        maximum: float | None = None,
        rule: str = "number",
    ) -> float | None:
        if key not in obj:
            if required:
                self.add(f"{path}.{key}", RULE_REQUIRED, f"missing required field '{key}'")
            return None
        if obj[key] is None:  # reported once, by _known_keys (rule not-null)
            return None
        return self.check_number(
            obj[key],
            f"{path}.{key}",
            minimum=minimum,
            exclusive_minimum=exclusive_minimum,
            maximum=maximum,
            rule=rule,
        )

    def check_number(
        self,
        value: object,
        path: str,
        *,
        minimum: float | None = None,
        exclusive_minimum: float | None = None,
        maximum: float | None = None,
        rule: str = "number",
    ) -> float | None:
        # numbers.Real: NumPy scalars from pandas / NumPy columns count too (library QA:
        # np.int64(2) was "not a number"). JSON's own float and int are tested first: the ABC
        # check took a third of validating a 36 MB package.
        kind = type(value)
        if kind is not float and kind is not int:
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                self.add(path, RULE_TYPE, "must be a number", value)
                return None
            if kind is UnderflowFloat:
                zero_ok = exclusive_minimum is None or exclusive_minimum < 0
                self.add(path, "normal", underflow_message(zero_ok), value.literal)
                return None
        try:
            number = float(value)
        except OverflowError:
            self.add(path, "finite", "must be a finite number (this one is too large)", value)
            return None
        if not math.isfinite(number):
            self.add(
                path, "finite", "must be a finite number (NaN and infinity are not allowed)", value
            )
            return None
        if number != 0.0 and abs(number) < sys.float_info.min:
            # Library QA: a weight of 1e-320 passed and every solve then failed with a bare
            # OverflowError (no power-of-two scale brings a subnormal top into range).
            zero_ok = exclusive_minimum is None or exclusive_minimum < 0
            self.add(
                path,
                "normal",
                # A cost may not be 0 (exactness QA: "must be 0 or ..." was said of one).
                ("must be 0 or at least" if zero_ok else "must be at least")
                + f" {NORMAL_MIN_TEXT} in size (a subnormal float has lost precision)",
                getattr(value, "literal", value),  # as written (SubnormalFloat)
            )
            return None
        if exclusive_minimum is not None and not number > exclusive_minimum:
            self.add(path, rule, f"must be greater than {exclusive_minimum:g}", value)
            return None
        if minimum is not None and number < minimum:
            self.add(path, rule, f"must be at least {minimum:g}", value)
            return None
        if maximum is not None and number > maximum:
            self.add(path, rule, f"must be at most {maximum:g}", value)
            return None
        return number

    def array(self, obj: dict, key: str, path: str, required: bool) -> list:
        if key not in obj or obj[key] is None:
            # A null is reported once, by _known_keys (rule not-null), not as missing too.
            if required and key not in obj:
                self.add(f"{path}.{key}", RULE_REQUIRED, f"missing required array '{key}'")
            return []
        value = obj[key]
        if not isinstance(value, list):
            self.add(f"{path}.{key}", RULE_TYPE, "must be an array", json_type(value))
            return []
        return value

    def mapping(self, obj: dict, key: str, path: str) -> dict:
        value = obj.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.add(f"{path}.{key}", RULE_TYPE, "must be an object", json_type(value))
            return {}
        return value

    def ids(self, items: list, path: str, what: str) -> list[str | None]:
        """Validate each item's id; report duplicates; warn of ids that look like others
        (:func:`_id_look_alikes`). Returns ids aligned with items."""
        seen: dict[str, int] = {}
        out: list[str | None] = []
        for i, item in enumerate(items):
            item_path = f"{path}[{i}]"
            if not isinstance(item, dict):
                self.add(item_path, RULE_TYPE, f"each {what} must be an object", json_type(item))
                out.append(None)
                continue
            item_id = self.string(item, "id", item_path, required=True)
            if not item_id:
                out.append(None)
                continue
            if item_id in seen:
                self.add(
                    f"{item_path}.id",
                    "unique-id",
                    f"duplicate {what} id (first used at {path}[{seen[item_id]}])",
                    item_id,
                )
            else:
                seen[item_id] = i
            out.append(item_id)
        self.warnings.extend(_id_look_alikes(out, seen, path, what))
        return out

    def coverage(self, obj: dict, path: str, unit_ids: set[str] | None) -> dict[str, float]:
        """Check a coverage row; ``unit_ids=None`` skips the reference check (no usable units)."""
        cov_path = f"{path}.coverage"
        raw = obj.get("coverage")
        if raw is None:
            self.add(
                cov_path, RULE_REQUIRED, "missing required object 'coverage' (use {} for none)"
            )
            return {}
        if not isinstance(raw, dict):
            self.add(cov_path, RULE_TYPE, "must be an object mapping unit ids to numbers", raw)
            return {}
        out: dict[str, float] = {}
        known = unit_ids if unit_ids is not None else ()
        for unit_id, value in raw.items():
            # The common cell, a known unit and a plain float in range, is taken without
            # building its path (a JSON dump per cell took a tenth of validating a large
            # package); anything else goes through every check below. A nonzero value below
            # the normal range (1e-320) fails ``value >= _FLOAT_MIN`` and is checked too.
            if (
                type(value) is float
                and unit_id in known
                and (value == 0.0 or _FLOAT_MIN <= value <= 1.0)
            ):
                out[unit_id] = value
                continue
            cell = f"{cov_path}[{json.dumps(unit_id)}]"
            unknown = unit_ids is not None and unit_id not in unit_ids
            if unknown:
                self.add(cell, "known-unit", "coverage refers to an unknown unit", unit_id)
            # The value is checked either way: every problem is listed (CLI QA: an unknown
            # unit with a value of 1.7 reported only the unit).
            number = self.check_number(value, cell, minimum=0.0, maximum=1.0, rule="coverage-range")
            if number is not None and not unknown:
                out[unit_id] = number
        return out


#: At most this many id look-alike warnings per list of ids; the rest are counted.
MAX_ID_WARNINGS = 5


def _id_look_alikes(
    ids: list[str | None],
    seen: dict[str, int],
    path: str,
    what: str,
    id_paths: list[str] | None = None,
) -> list[str]:
    """Warnings (rule ``id-lookalike``) on ids that differ from what they show: leading or
    trailing whitespace, invisible characters (format, e.g. zero-width or bidi overrides, and
    control characters), or equal to another id of the list once compared as they look
    (:func:`_look_key`). Ids are the user's, so not refused; but they match exactly, so a
    reference typed as the id looks matches the other one or none (QA s44: "c2" next to "c2 "
    and "c2\u200b" validated without a word).

    The joiners U+200C and U+200D are spelling, not hidden text (Persian writes "می‌خواهم"
    with a ZWNJ, an emoji family is joined by ZWJs), and variation selectors only pick a
    glyph's style: such ids are warned of only when they look like another one (QA s44).

    ``id_paths``: where each id is, when not at ``{path}[i].id`` (an importer's export,
    whose records lie at paths of their own); ``path`` then only names where the rest are.

    Only odd ids (not plain printable ASCII without edge spaces) are looked at one by one:
    two plain ids are alike only when equal, which rule ``unique-id`` refuses. ``seen`` maps
    each id to its first index; a twin is found by one lookup in it.
    """
    # The common case, every id plain, in a few C-level passes over the ids joined by spaces
    # (per id in Python it added a third to the id checks of a 36 MB package); a double
    # space is an edge space, or one inside an id (then looked at one by one, harmlessly).
    joined = " ".join(seen)
    if (
        joined.isascii()
        and joined.isprintable()
        and "  " not in joined
        and joined[:1] != " "
        and joined[-1:] != " "
    ):
        return []
    odd = [
        i
        for i, item_id in enumerate(ids)
        if item_id is not None
        and (
            not (item_id.isascii() and item_id.isprintable())
            or item_id[0] == " "
            or item_id[-1] == " "
        )
    ]
    import unicodedata  # here: only a package with odd ids gets this far

    def where(i: int) -> str:
        return id_paths[i] if id_paths is not None else f"{path}[{i}].id"

    out: list[str] = []
    more = 0
    odd_keys: dict[str, int] = {}
    for i in odd:
        item_id = ids[i]
        if item_id is None or seen[item_id] != i:
            continue  # the same id again: refused (rule unique-id)
        stripped = item_id.strip()
        parts = []
        if stripped != item_id:
            ends = (("leading", item_id[0]), ("trailing", item_id[-1]))
            parts.append(" and ".join(e for e, ch in ends if ch.isspace()) + " whitespace")
        # isprintable() is False for every format and control character: most ids are
        # decided without a per-character loop in Python.
        printable = stripped.isprintable()
        hidden = (
            []
            if printable
            else sorted(
                {
                    ch
                    for ch in stripped
                    if ch not in _JOINERS and unicodedata.category(ch) in ("Cf", "Cc")
                }
            )
        )
        if hidden:
            codes = ", ".join(f"U+{ord(ch):04X}" for ch in hidden)
            parts.append(f"invisible or control characters ({codes})")
        key = _look_key(stripped, printable)
        # The id written as it looks (a plain one, anywhere in the list), else an earlier
        # odd one.
        twin = seen.get(key)
        if twin is None or twin == i:
            twin = odd_keys.setdefault(key, i)
        if not parts and twin == i:
            continue
        if len(out) >= MAX_ID_WARNINGS:
            more += 1
            continue
        said = [f"has {' and '.join(parts)}"] if parts else []
        if twin != i:
            said.append(f"looks like {where(twin)} {shown_text(ids[twin] or '')}")
        out.append(
            package_warning(
                where(i),
                f"{shown_text(item_id)} {' and '.join(said)}; ids match exactly, character "
                "for character",
                "id-lookalike",
            )
        )
    if more:
        rest = f"... and {more} more {what} id(s) like these"
        # An importer's ``path`` names the export in words ("the export"), not a JSON path.
        out.append(
            package_warning(path, rest, "id-lookalike")
            if path.startswith("$")
            else f"{rest} under {path} (rule: id-lookalike)"
        )
    return out


#: Zero-width non-joiner and joiner: required spelling in some scripts and emoji sequences.
_JOINERS = frozenset("\u200c\u200d")


def _look_key(text: str, printable: bool) -> str:
    """``text`` (stripped) as it looks, to compare ids: in NFC, without format characters and
    :data:`~memaudit_core.errors.INVISIBLE_PRINTABLE` ones, every space separator (category
    Zs: no-break, ideographic, thin ... spaces) as " " (QA s44: "a b" and "a\u00a0b" print
    alike and were not warned of).

    Not NFKC: it also folds characters that print differently ("x²" and "x2", "①" and "1",
    "ﬁ" and "fi"), and fullwidth letters, ordinary spelling in CJK text; warnings about ids a
    reader tells apart would bury the real look-alikes.

    >>> _look_key("a\u3000b\u200d\ufe0f", False), _look_key("cafe\u0301", True)
    ('a b', 'café')
    """
    import unicodedata

    key = text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)
    key = INVISIBLE_PRINTABLE.sub("", key)
    if not printable:  # format and non-ASCII space characters are not printable
        key = "".join(
            " " if cat == "Zs" else "" if cat == "Cf" else ch
            for ch in key
            for cat in (unicodedata.category(ch),)
        )
    return key.strip()


def _known_keys(checker: _Checker, obj: dict, path: str, allowed: set[str]) -> None:
    for key in obj:
        if key not in allowed:
            # Objects without a meta of their own (the objective) must not point there
            # (conformance QA: "$.objective.meta: unknown field (put extra data under 'meta')").
            hint = (
                "put extra data under 'meta'"
                if "meta" in allowed
                else f"this object takes only {', '.join(map(repr, sorted(allowed)))}; put "
                "extra data under the package's 'meta'"
            )
            checker.add(_child_path(path, key), RULE_KNOWN_FIELD, f"unknown field ({hint})", key)
        elif obj[key] is None:
            # JSON null would otherwise read as "absent" and silently take the default.
            checker.add(
                _child_path(path, key),
                RULE_NOT_NULL,
                "null is not allowed here: give a value, or leave an optional field out to use "
                "its default",
            )


_TOP_KEYS = {
    "memaudit",
    "id",
    "title",
    "description",
    "cost_unit",
    "objective",
    "budget",
    "budgets",
    "experiences",
    "units",
    "queries",
    "candidates",
    "stores",
    "meta",
    "$schema",
}


def check_package(value: object, what: str) -> None:
    """Refuse anything but a :class:`Package` with a :class:`MemAuditError` saying what to pass
    (library QA s20d: a path or a dict gave AttributeError in several public functions)."""
    check_type(value, Package, what, "a Package (load_package(path) or parse_package(dict))")


def parse_package(doc: object, source: str = "<memory>") -> Package:
    """Validate a decoded JSON document and return a :class:`Package`.

    Raises
    ------
    PackageError
        Listing every problem found, each with its JSON path, value and rule.

    Examples
    --------
    >>> from memaudit_core import PackageError, generate, parse_package
    >>> from memaudit_core.package import package_to_dict
    >>> doc = package_to_dict(generate("update_chain"))  # the JSON file's form
    >>> doc["objective"]["saturation"] = "linear"
    >>> parse_package(doc, "mine.json").saturation
    'linear'
    >>> doc["candidates"][0]["cost"] = -1
    >>> try:
    ...     parse_package(doc, "mine.json")
    ... except PackageError as exc:
    ...     print(exc)
    mine.json: 1 problem(s) found
    mine.json: $.candidates[0].cost: must be greater than 0 (got -1) [rule: cost-positive]
    """
    return _parse_package(doc, source, suspect=None)


def _parse_package(doc: object, source: str, *, suspect: bool | None) -> Package:
    """:func:`parse_package`; ``suspect`` False is a promise (from :func:`_decode_json_text`)
    that the document holds nothing :func:`_has_suspect` looks for, None: look."""
    checker = _Checker(source)
    if not isinstance(doc, dict):
        # QA s39 (defect 12): "(got 'string')" read as if the package were the text 'string'.
        # The type is named in words; a scalar is shown as itself (an array or object is
        # not echoed whole).
        scalar = isinstance(doc, str | int | float) and not isinstance(doc, bool)
        checker.add(
            "$",
            RULE_TYPE,
            f"a package must be a JSON object, not a JSON {json_type(doc)}",
            doc if scalar else None,
        )
        raise PackageError(source, checker.problems)
    if suspect is None:
        suspect = _has_suspect(doc)  # one path-free pass; paths are built only when needed
    foreign = capped(_non_json_problems(doc)) if suspect else []
    if foreign:  # the checks below assume string keys
        raise PackageError(source, foreign)

    if "result_kind" in doc and "memaudit" not in doc:
        # Researcher QA: a saved result in a swept folder got one "unknown field" per key.
        kind = doc.get("result_kind")
        checker.add(
            "$.result_kind",
            "package",
            f"this is a saved MemAudit result ({kind!r}), not a package; `memaudit show` prints it",
            kind,
        )
        raise PackageError(source, checker.problems)
    _known_keys(checker, doc, "$", _TOP_KEYS)
    version = doc.get("memaudit")
    if "memaudit" not in doc:
        checker.add(
            "$.memaudit", RULE_REQUIRED, "missing format version field 'memaudit' (expected 1)"
        )
    elif version is not None and (problem := format_version_problem(version)) is not None:
        # An array raised a bare ValueError from a comparison (library QA): not compared.
        checker.add("$.memaudit", RULE_FORMAT_VERSION, problem, version)
    package_id = checker.string(doc, "id", "$", required=True)
    checker.string(doc, "$schema", "$", required=False)  # the schema says string (QA)
    title = checker.string(doc, "title", "$", required=False)
    description = checker.string(doc, "description", "$", required=False)
    cost_unit = checker.string(
        doc, "cost_unit", "$", required=False, default="units", non_empty=True
    )

    objective = checker.mapping(doc, "objective", "$")
    saturation = "cap1"
    if objective:
        _known_keys(checker, objective, "$.objective", {"saturation"})
        if "saturation" in objective:
            sat = objective["saturation"]
            if not isinstance(sat, str) or sat not in SATURATIONS:
                # In a worker: the parent's saturation it could not send, and why (s56).
                unsent = UNSENDABLE_SATURATIONS.get(sat) if isinstance(sat, str) else None
                checker.add(
                    "$.objective.saturation",
                    "known-saturation",
                    unsent
                    or f"unknown saturation (known: {', '.join(SATURATIONS)}); {SATURATION_ROUTE}",
                    sat,
                )
            else:
                saturation = sat

    budget = checker.number(doc, "budget", "$", required=False, minimum=0.0, rule="budget-range")
    budgets: list[float] = []
    budget_items = checker.array(doc, "budgets", "$", required=False)
    if len(budget_items) > MAX_RANGE_BUDGETS:
        # As --budgets (CLI QA: a grid of 100,000 budgets validated, and its sweep ran on).
        checker.add(
            "$.budgets",
            "max-budgets",
            f"{len(budget_items):,} budgets, more than the {MAX_RANGE_BUDGETS:,} a grid may hold",
        )
        budget_items = []
    for i, b in enumerate(budget_items):
        value = checker.check_number(b, f"$.budgets[{i}]", minimum=0.0, rule="budget-range")
        if value is not None:
            budgets.append(value)
    # QA s41 (defect 1): [4, 4, 6] swept two budgets and [] the default grid of six, and
    # validate said "valid" to both without a word. Both stay valid (a grid is a suggestion,
    # as --budgets 4,4,6 runs 4 once with a note), but they are warned about here.
    budget_warnings = budgets_field_warnings(doc.get("budgets"))

    meta = checker.mapping(doc, "meta", "$")

    # Items whose id is missing or invalid are still checked field by field (every problem is
    # listed), but they are not added to the package. When a whole array is missing or is not
    # an array, references into it are not checked: each would only repeat that one problem.

    # experiences
    exp_items = checker.array(doc, "experiences", "$", required=True)
    exp_ids = checker.ids(exp_items, "$.experiences", "experience")
    experiences: list[Experience] = []
    for i, (item, exp_id) in enumerate(zip(exp_items, exp_ids, strict=True)):
        if not isinstance(item, dict):
            continue
        path = f"$.experiences[{i}]"
        _known_keys(checker, item, path, {"id", "time", "session", "text", "meta"})
        time = checker.number(item, "time", path, required=False)
        session = checker.string(item, "session", path, required=False, default="") or None
        text = checker.string(item, "text", path, required=False)
        emeta = checker.mapping(item, "meta", path)
        if exp_id is not None:
            experiences.append(
                Experience(exp_id, float(i) if time is None else time, session, text, emeta)
            )
    known_exp = {e.id for e in experiences} if _is_array(doc, "experiences") else None

    # units
    unit_items = checker.array(doc, "units", "$", required=True)
    unit_id_list = checker.ids(unit_items, "$.units", "unit")
    units: list[Unit] = []
    for i, (item, unit_id) in enumerate(zip(unit_items, unit_id_list, strict=True)):
        if not isinstance(item, dict):
            continue
        path = f"$.units[{i}]"
        _known_keys(checker, item, path, {"id", "kind", "text", "weight", "meta"})
        kind = checker.string(item, "kind", path, required=False, default="fact", non_empty=True)
        text = checker.string(item, "text", path, required=False)
        weight = checker.number(
            item, "weight", path, required=False, minimum=0.0, rule="weight-range"
        )
        umeta = checker.mapping(item, "meta", path)
        if unit_id is not None:
            units.append(Unit(unit_id, kind, text, weight, umeta))
    known_units = {u.id for u in units} if _is_array(doc, "units") else None

    # queries
    query_items = checker.array(doc, "queries", "$", required=False)
    query_ids = checker.ids(query_items, "$.queries", "query")
    queries: list[Query] = []
    for i, (item, query_id) in enumerate(zip(query_items, query_ids, strict=True)):
        if not isinstance(item, dict):
            continue
        path = f"$.queries[{i}]"
        _known_keys(checker, item, path, {"id", "text", "answer", "requires", "weight", "meta"})
        text = checker.string(item, "text", path, required=False)
        answer_raw = item.get("answer")
        answer = ""
        if isinstance(answer_raw, str):
            answer = answer_raw
        elif isinstance(answer_raw, int | float) and not isinstance(answer_raw, bool):
            answer = str(answer_raw)
        elif answer_raw is not None:
            checker.add(f"{path}.answer", RULE_TYPE, "must be a string or a number", answer_raw)
        weight = checker.number(
            item, "weight", path, required=False, minimum=0.0, rule="weight-range"
        )
        requires: list[str] = []
        for j, unit_id in enumerate(checker.array(item, "requires", path, required=True)):
            if not isinstance(unit_id, str):
                checker.add(f"{path}.requires[{j}]", RULE_TYPE, "must be a unit id string", unit_id)
            elif known_units is not None and unit_id not in known_units:
                checker.add(
                    f"{path}.requires[{j}]", "known-unit", "requires an unknown unit", unit_id
                )
            elif unit_id in requires:
                checker.add(
                    f"{path}.requires[{j}]",
                    "unique-requirement",
                    "requires the same unit twice (it would count the query's weight twice)",
                    unit_id,
                )
            else:
                requires.append(unit_id)
        qmeta = checker.mapping(item, "meta", path)
        if query_id is not None:
            queries.append(
                Query(
                    query_id,
                    tuple(requires),
                    text,
                    answer,
                    1.0 if weight is None else weight,
                    qmeta,
                )
            )

    # candidates
    cand_items = checker.array(doc, "candidates", "$", required=True)
    cand_ids = checker.ids(cand_items, "$.candidates", "candidate")
    candidates: list[Candidate] = []
    for i, (item, cand_id) in enumerate(zip(cand_items, cand_ids, strict=True)):
        if not isinstance(item, dict):
            continue
        path = f"$.candidates[{i}]"
        _known_keys(
            checker, item, path, {"id", "experience", "type", "text", "cost", "coverage", "meta"}
        )
        exp_id = checker.string(item, "experience", path, required=True)
        if exp_id and known_exp is not None and exp_id not in known_exp:
            checker.add(
                f"{path}.experience", "known-experience", "refers to an unknown experience", exp_id
            )
        cand_type = checker.string(item, "type", path, required=True)
        text = checker.string(item, "text", path, required=False)
        cost = checker.number(
            item, "cost", path, required=True, exclusive_minimum=0.0, rule="cost-positive"
        )
        coverage = checker.coverage(item, path, known_units)
        cmeta = checker.mapping(item, "meta", path)
        if cand_id is not None:
            candidates.append(
                Candidate(cand_id, exp_id, cand_type, cost or 0.0, coverage, text, cmeta)
            )
    group_of = {c.id: c.experience for c in candidates}

    # stores
    store_items = checker.array(doc, "stores", "$", required=False)
    store_ids = checker.ids(store_items, "$.stores", "store")
    stores: list[Store] = []
    cand_id_set = set(group_of)
    cands_usable = _is_array(doc, "candidates")
    for i, (item, store_id) in enumerate(zip(store_items, store_ids, strict=True)):
        if not isinstance(item, dict):
            continue
        path = f"$.stores[{i}]"
        _known_keys(checker, item, path, {"id", "label", "system", "select", "memories", "meta"})
        label = checker.string(item, "label", path, required=False)
        system = checker.string(item, "system", path, required=False, default="") or None
        select: list[str] = []
        used_groups: dict[str, str] = {}
        for j, cand_id in enumerate(checker.array(item, "select", path, required=False)):
            sel_path = f"{path}.select[{j}]"
            if not isinstance(cand_id, str):
                checker.add(sel_path, RULE_TYPE, "must be a candidate id string", cand_id)
                continue
            if cand_id in select:
                checker.add(
                    sel_path, "unique-selection", "selects the same candidate twice", cand_id
                )
                continue
            if cand_id not in cand_id_set:
                if cands_usable:
                    checker.add(
                        sel_path, "known-candidate", "selects an unknown candidate", cand_id
                    )
                continue
            group = group_of[cand_id]
            if group in used_groups:
                checker.add(
                    sel_path,
                    "one-per-group",
                    f"selects a second candidate of experience {group!r} "
                    f"(already holds {used_groups[group]!r})",
                    cand_id,
                )
                continue
            used_groups[group] = cand_id
            select.append(cand_id)
        mem_items = checker.array(item, "memories", path, required=False)
        mem_ids = checker.ids(mem_items, f"{path}.memories", "memory")
        memories: list[ExternalMemory] = []
        for j, (mem, mem_id) in enumerate(zip(mem_items, mem_ids, strict=True)):
            if not isinstance(mem, dict):
                continue
            mpath = f"{path}.memories[{j}]"
            _known_keys(
                checker,
                mem,
                mpath,
                {"id", "text", "cost", "coverage", "created_at", "salience", "status", "meta"},
            )
            if mem_id is not None and mem_id in cand_id_set:
                checker.add(
                    f"{mpath}.id",
                    "unique-id",
                    "external memory id collides with a package candidate id",
                    mem_id,
                )
            text = checker.string(mem, "text", mpath, required=False)
            cost = checker.number(
                mem, "cost", mpath, required=True, exclusive_minimum=0.0, rule="cost-positive"
            )
            coverage = checker.coverage(mem, mpath, known_units)
            created_at: str | None = checker.string(
                mem, "created_at", mpath, required=False, default=""
            )
            # QA s42 defect 6: "" was read as no time without a word while "   " was refused;
            # a string given is checked whatever it holds (leave the field out when unknown).
            if not isinstance(mem.get("created_at"), str):
                created_at = None
            elif parse_created_at(created_at) is None:
                # Recency pruning orders by this time; a text it cannot read would be ordered
                # as text (library QA: "yesterday" was kept as the newest memory).
                checker.add(
                    f"{mpath}.created_at",
                    "iso-8601",
                    "must be an ISO-8601 date or time, e.g. 2025-04-20T09:02:00+00:00 (leave "
                    "the field out when unknown)",
                    created_at,
                )
            salience = checker.number(mem, "salience", mpath, required=False)
            status = checker.string(
                mem, "status", mpath, required=False, default="active", non_empty=True
            )
            mem_meta = checker.mapping(mem, "meta", mpath)
            if mem_id is not None:
                memories.append(
                    ExternalMemory(
                        mem_id, cost or 0.0, coverage, text, created_at, salience, status, mem_meta
                    )
                )
        store_meta = checker.mapping(item, "meta", path)
        if store_id is not None:
            stores.append(
                Store(store_id, label, system, tuple(select), tuple(memories), store_meta)
            )

    if suspect:
        _report_non_finite(checker, doc)
    if checker.problems:
        raise PackageError(source, checker.problems)

    warnings: list[str] = []
    with _validated_construction():  # checked above (QA s40 defect 1: not twice)
        package = Package(
            id=package_id,
            experiences=tuple(experiences),
            units=tuple(units),
            candidates=tuple(candidates),
            queries=tuple(queries),
            stores=tuple(stores),
            title=title,
            description=description,
            cost_unit=cost_unit,
            saturation=saturation,
            budget=budget,
            budgets=tuple(budgets),
            meta=meta,
            source=source,
        )
    weights = package.unit_weights()
    _check_sums(checker, package, weights)
    if checker.problems:
        raise PackageError(source, checker.problems)
    warnings.extend(_content_warnings(package, weights))
    warnings.extend(_unknown_type_warnings(package.candidates))
    warnings.extend(_precision_warnings(package, weights))
    warnings.extend(budget_warnings)
    warnings.extend(_default_budget_warnings(package))
    warnings.extend(checker.warnings)
    object.__setattr__(package, "warnings", tuple(warnings))
    return package


def package_warning(path: str, message: str, rule: str) -> str:
    """A package warning as every one is worded: ``JSON-PATH: MESSAGE (rule: RULE)``, the rule
    (kebab-case) last, so that :func:`warning_parts` reads both back from the text alone.

    QA s51 (cli, defect 8): six warnings ("query 'q7' requires no unit", "the package has no
    candidates", ...) had neither a path nor a rule, so a CI filter keyed on the rule missed
    them, while the README promised both.

    >>> package_warning("$.stores[0]", "store 's' selects nothing", "store-empty")
    "$.stores[0]: store 's' selects nothing (rule: store-empty)"
    """
    assert path.startswith("$") and _RULE_NAME.fullmatch(rule), (path, rule)
    return f"{path}: {message} (rule: {rule})"


#: A rule's name: kebab-case, lower-case letters and digits.
_RULE_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
#: A warning's JSON path: ``$`` and its steps up to the first ": " after them, a step being
#: ``[index]``, a bracketed JSON string, which may hold spaces and ": " (s56: ``$["Ann Lee"]``,
#: a LoCoMo speaker, gave no path or rule), or one character of a ``.key``: one character a
#: step, so that no text splits into steps in two ways (no backtracking blow-up on a long line
#: that is not a warning).
_WARNING_PATH = r'\$(?:\["(?:[^"\\]|\\.)*"\]|\[\d+\]|[^\s\["])*?'
#: :func:`package_warning`'s form; the rule is the closing parenthesis, whatever an id quoted
#: in the message holds.
_WARNING_FORM = re.compile(
    rf"(?P<path>{_WARNING_PATH}): (?P<message>.*) \(rule: (?P<rule>{_RULE_NAME.pattern})\)",
    re.DOTALL,
)


def warning_parts(warning: str) -> dict[str, str] | None:
    """``{"path", "rule", "message"}`` of a warning worded as :func:`package_warning` words it
    (every warning of :attr:`Package.warnings` is, and since session 53 every importer's note:
    ``memaudit_core.importers._common.note``), or None for another text (one saved by an older
    MemAudit). The CLI's ``--json`` lists these beside the warnings' text, to filter by rule.

    >>> warning_parts("$.units: the package has no evidence units (rule: no-units)")
    {'path': '$.units', 'rule': 'no-units', 'message': 'the package has no evidence units'}
    >>> warning_parts("the export holds no memories") is None
    True
    """
    match = _WARNING_FORM.fullmatch(warning) if isinstance(warning, str) else None
    if match is None:
        return None
    return {"path": match["path"], "rule": match["rule"], "message": match["message"]}


def warning_details(warnings: Iterable[str]) -> list[dict[str, str | None]]:
    """:func:`warning_parts` of each warning, in order; a warning not in that form (a note an
    older MemAudit saved in a package) has path and rule None and its whole text as the
    message."""
    return [warning_parts(w) or {"path": None, "rule": None, "message": str(w)} for w in warnings]


def _content_warnings(package: Package, weights: dict[str, float]) -> list[str]:
    """Warnings on what a valid package holds: a unit that weighs 0, a query that requires
    nothing, no candidates, no units, every weight 0, a store that selects nothing."""
    warnings = []
    required_by_query = {r for q in package.queries for r in q.requires}
    for i, unit in enumerate(package.units):
        if unit.weight is None and unit.id not in required_by_query:
            warnings.append(
                package_warning(
                    f"$.units[{i}]",
                    f"unit {unit.id!r} has no weight and no query requires it: it weighs 0",
                    "unit-weighs-nothing",
                )
            )
    for i, query in enumerate(package.queries):
        if not query.requires:  # conformance QA: only the orphaned unit was warned about
            warnings.append(
                package_warning(
                    f"$.queries[{i}].requires",
                    f"query {query.id!r} requires no unit: its weight goes nowhere",
                    "query-requires-nothing",
                )
            )
    if not package.candidates:
        warnings.append(
            package_warning(
                "$.candidates", "the package has no candidates: every optimum is 0", "no-candidates"
            )
        )
    if not package.units:  # app QA: said for no candidates and zero weights, not for this
        warnings.append(
            package_warning(
                "$.units", "the package has no evidence units: every store is worth 0", "no-units"
            )
        )
    if weights and all(w == 0 for w in weights.values()):
        warnings.append(
            package_warning(
                "$.units",
                "every unit weighs 0: every optimum is 0 and ratios are n/a",
                "all-weights-zero",
            )
        )
    for i, store in enumerate(package.stores):
        if not store.select and not store.memories:
            warnings.append(
                package_warning(
                    f"$.stores[{i}]",
                    f"store {store.id!r} selects nothing and has no memories: it scores 0",
                    "store-empty",
                )
            )
    return warnings


#: The warning for ``"budgets": []`` (read as "no grid given": the default grid is used).
EMPTY_BUDGETS_WARNING = (
    "$.budgets: the list is empty: read as no grid given, so a sweep uses the default grid "
    "(1%, 2%, 5%, 10%, 20% and 50% of the total cost) (rule: budgets-grid)"
)


def _default_budget_warnings(package: Package) -> list[str]:
    """A warning when the package's own budget is below its cheapest candidate: nothing fits
    there, so OPT = 0 and every ratio is n/a at the budget the app and CLI open at (QA s45:
    small generated packages, e.g. random_coverage with 3 groups, showed scores of 0 unsaid;
    their seeded budget_fraction rule stays as documented)."""
    from .feasibility import budget_with_tolerance, fits_limit
    from .shortrepr import cost_budget_text

    if package.budget is None or not package.candidates:
        return []
    cheapest = min(c.cost for c in package.candidates)
    if fits_limit([cheapest], budget_with_tolerance(package.budget)):
        return []
    cost, budget = cost_budget_text(cheapest, package.budget, 6)
    return [
        f"$.budget: no candidate fits the default budget B = {budget} {package.cost_unit}; the "
        f"cheapest costs {cost}, so OPT = 0 at B: every writer scores 0 and every ratio is n/a "
        f"there (a budget of at least {cost} {package.cost_unit} fits one) "
        f"(rule: {BUDGET_FITS_NOTHING})"
    ]


#: The rule of the warning that no candidate fits the package's default budget.
BUDGET_FITS_NOTHING = "budget-fits-nothing"


def _is_budget_fits_nothing(warning: str) -> bool:
    # By its JSON path and its closing rule: an id or a cost unit quoted inside another
    # warning cannot make it start with "$.budget: ".
    return warning.startswith("$.budget: ") and warning.endswith(f"(rule: {BUDGET_FITS_NOTHING})")


def warnings_at_budgets(
    warnings: Sequence[str], default_budget: float | None, budgets: Iterable[float]
) -> list[str]:
    """``warnings`` (a package's) as a run at ``budgets`` says them: the warning of rule
    ``budget-fits-nothing`` only when ``budgets`` include the package's ``default_budget``.

    QA s45 review: ``solve --budget 3`` printed OPT certified, then that OPT = 0 at the
    default budget it never ran; a sweep at ``--budgets 2`` said so for every small seed.

    >>> w = ["$.budget: no candidate fits ... (rule: budget-fits-nothing)", "other"]
    >>> warnings_at_budgets(w, 1.5, [1.5, 3]) == w, warnings_at_budgets(w, 1.5, [3])
    (True, ['other'])
    """
    if default_budget is not None and float(default_budget) in {float(b) for b in budgets}:
        return list(warnings)
    return [w for w in warnings if not _is_budget_fits_nothing(w)]


def budgets_field_warnings(value: Any) -> list[str]:
    """Warnings on a valid ``budgets`` field: an empty list, and each repeated budget by its
    JSON path (QA s41, defect 1: both changed the grid without a word)."""
    if not isinstance(value, list):
        return []
    if not value:
        return [EMPTY_BUDGETS_WARNING]
    first: dict[float, int] = {}
    warnings = []
    for i, b in enumerate(value):
        if isinstance(b, bool) or not isinstance(b, int | float):
            continue
        if isinstance(b, int) and abs(b) > sys.float_info.max:
            continue  # refused under rule finite; its repeat is not worth a line (nor a crash)
        if b in first:
            warnings.append(
                package_warning(
                    f"$.budgets[{i}]",
                    f"{b:.10g} repeats $.budgets[{first[b]}]; a sweep runs each budget once",
                    "budgets-distinct",
                )
            )
        else:
            first[b] = i
    return warnings


def budget_grid_notes(package: Package) -> list[str]:
    """What a sweep at ``package``'s own grid says about its ``budgets`` field: each repeat
    and an empty list, with the file (QA s41, defect 1)."""
    where = package.source if package.source not in ("", "<memory>") else package.id
    notes = []
    if EMPTY_BUDGETS_WARNING in package.warnings:
        grid = ", ".join(f"{b:.10g}" for b in package.budget_grid())
        notes.append(
            f"{where}: $.budgets is empty, read as no grid given: the default grid is used "
            f"({grid} {package.cost_unit})"
        )
    grid = package.budgets
    repeats = [(i, b) for i, b in enumerate(grid) if b in grid[:i]]
    if repeats:
        values = ", ".join(f"{b:.10g}" for b in sorted({b for _, b in repeats}))
        paths = ", ".join(f"$.budgets[{i}]" for i, _ in repeats)
        notes.append(
            f"{where}: $.budgets gives {values} more than once ({paths}; rule: "
            "budgets-distinct); each budget runs once"
        )
    return notes


def default_budget_off_grid_note(
    packages: Iterable[tuple[str, float | None, Sequence[float], str]],
) -> str | None:
    """What a sweep at each package's own grid says when a package's ``budget`` field (its
    default budget, where the app opens and a paper family's headline budget) is not in that
    grid, so no row is at it; None when every such budget is swept. ``packages`` gives each
    package's (id, budget field, grid, cost unit).

    QA s50: ``sweep --family memaudit-small:0-499`` swept the family's grid 1, 2, 4, 8, 16
    and never printed a row at its published budget 6. The grid stays the package's
    ``budgets``; this note says how to add the budget.

    >>> print(default_budget_off_grid_note([("p-s0", 6.0, (1, 2, 4, 8, 16), "words"),
    ...                                     ("p-s1", 6.0, (1, 2, 4, 8, 16), "words")]))
    the default budget 6 words of 2 packages (p-s0 and 1 more) is not in their grid (1, 2, 4, 8, 16), so no row is at it; add it with --budgets 1,2,4,6,8,16
    >>> default_budget_off_grid_note([("a", 4.0, (1, 2, 4), "words"), ("b", None, (1,), "words")])
    """  # noqa: E501
    off: dict[tuple[float, tuple[float, ...], str], list[str]] = {}
    for package_id, budget, grid, unit in packages:
        if budget is not None and budget not in set(grid):
            key = (float(budget), tuple(sorted({float(b) for b in grid})), unit)
            off.setdefault(key, []).append(package_id)
    if not off:
        return None
    parts = []
    for (budget, grid, unit), ids in off.items():
        whose = (
            f"of {id_text(ids[0])}"
            if len(ids) == 1
            else f"of {len(ids)} packages ({id_text(ids[0])} and {len(ids) - 1} more)"
        )
        parts.append(
            f"the default budget {budget:.10g} {unit} {whose} is not in "
            f"{'its' if len(ids) == 1 else 'their'} grid ({', '.join(f'{b:.10g}' for b in grid)})"
        )
    # One --budgets for every package: the grids and budgets named above, together.
    union = sorted({b for budget, grid, _ in off for b in (*grid, budget)})
    return (
        "; ".join(parts[:3])
        + (f"; and {len(parts) - 3} more such grid(s)" if len(parts) > 3 else "")
        + (", so no row is at it; add it" if len(off) == 1 else ", so no row is at them; add them")
        + " with --budgets "
        + ",".join(f"{b:.10g}" for b in union)
    )


def grid_notes_capped(notes: Sequence[str], limit: int = 5) -> list[str]:
    """The first ``limit`` of :func:`budget_grid_notes`' notes over many packages, and how
    many more there are (a suite of 300 packages with ``"budgets": []``)."""
    if len(notes) <= limit:
        return list(notes)
    return [*notes[:limit], f"... and {len(notes) - limit} more such note(s) on package grids"]


def _check_sums(checker: _Checker, package: Package, weights: dict[str, float]) -> None:
    """Refuse sums that overflow although every number in them is finite.

    Checked: the total cost (of the candidates, and with each store's memories) and the
    largest value F can take, sum_r w_r h(z_r) with every candidate selected. Past 1.8e308
    they are inf, and the app, the writers and the solvers would compare infinities.
    """
    rule = "finite-sum"
    hint = "more than the largest float (about 1.8e308): use a smaller unit"
    total_cost = float(sum(c.cost for c in package.candidates))
    if not math.isfinite(total_cost):
        checker.add("$.candidates", rule, f"the candidates' costs add up to {hint} of cost")
    from_queries = [u.id for u in package.units if u.weight is None]
    for unit_id in from_queries:
        if not math.isfinite(weights[unit_id]):
            checker.add(
                "$.queries",
                rule,
                f"the weights of the queries requiring unit {unit_id!r} add up to {hint}",
            )
            return
    h = get_saturation(package.saturation).h_scalar
    column: dict[str, float] = {}
    for cand in package.candidates:
        for unit_id, a in cand.coverage.items():
            column[unit_id] = column.get(unit_id, 0.0) + a

    def top_value(extra: tuple[ExternalMemory, ...] = ()) -> float:
        col = dict(column)
        for mem in extra:
            for unit_id, a in mem.coverage.items():
                col[unit_id] = col.get(unit_id, 0.0) + a
        return float(sum(weights[u] * h(z) for u, z in col.items() if weights.get(u)))

    if not math.isfinite(top_value()):
        checker.add(
            "$.units",
            rule,
            f"the largest value F can take (every candidate kept) comes to {hint} of weight",
        )
    for i, store in enumerate(package.stores):
        if not store.memories:
            continue
        path = f"$.stores[{i}].memories"
        if not math.isfinite(total_cost + sum(m.cost for m in store.memories)):
            checker.add(path, rule, f"the costs with this store's memories add up to {hint}")
        elif not math.isfinite(top_value(store.memories)):
            checker.add(path, rule, f"F with this store's memories can come to {hint}")


def _is_array(doc: dict, key: str) -> bool:
    return isinstance(doc.get(key), list)


def _report_non_finite(checker: _Checker, doc: object) -> None:
    """NaN or infinity anywhere (meta included) is an error, and so is a key that appears twice
    in one JSON object (the decoder would silently keep only the last value) and text holding an
    unpaired surrogate escape such as ``"\\ud83d"`` (valid JSON, but not text: it cannot be
    hashed or saved as UTF-8).

    A non-finite value already shown by an earlier problem at the same path is not repeated.
    Called only when :func:`_has_suspect` found something (the common case builds no paths).
    """
    shown = {
        p.path
        for p in checker.problems
        if (isinstance(p.value, float) and not math.isfinite(p.value)) or p.rule == "normal"
    }
    stack: list[tuple[str, object]] = [("$", doc)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            for key in getattr(node, "duplicate_keys", ()):
                checker.add(
                    _child_path(path, key),
                    "duplicate-key",
                    "this key appears more than once in the same JSON object "
                    "(only one value could be kept)",
                    key,
                )
            for key, value in node.items():
                sub = _child_path(path, key)
                if not _is_text(key):
                    checker.add(sub, "unicode", _SURROGATE_MESSAGE.format("key"), key)
                stack.append((sub, value))
        elif isinstance(node, list | tuple):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(node))
        elif isinstance(node, float) and not math.isfinite(node) and path not in shown:
            checker.add(
                path, "finite", "NaN and infinity are not allowed anywhere in a package", node
            )
        elif type(node) is UnderflowFloat and path not in shown:  # in meta too: never a 0
            checker.add(path, "normal", underflow_message(), node.literal)
        elif isinstance(node, str) and not _is_text(node):
            checker.add(path, "unicode", _SURROGATE_MESSAGE.format("text"), node)


#: The values ``json`` writes as themselves. ``meta`` is kept as given, so anything else there
#: (a set, a datetime, a NumPy scalar) would break the content hash and saving later.
_JSON_SCALARS = (str, int, float, bool, type(None))


def _non_json_problems(doc: dict) -> Iterator[Problem]:
    """Keys that are not strings (anywhere) and ``meta`` values JSON cannot hold, in the
    document's order (a generator: the caller takes as many as it lists).

    Only a dict built in Python has them (library QA s20d: an int key raised AttributeError,
    a set in meta a TypeError at the first content hash). Numeric fields take any real number
    (NumPy scalars included) and are converted, so only ``meta`` values are checked.
    """
    stack: list[tuple[str, object, bool]] = [("$", doc, False)]
    while stack:
        path, node, in_meta = stack.pop()
        if isinstance(node, dict):
            items = list(node.items())
            for key, value in reversed(items):  # popped in the document's order
                if not isinstance(key, str):
                    shown = key if isinstance(key, _JSON_SCALARS) else repr(key)
                    yield Problem(
                        f"{path}[{key!r}]",
                        RULE_TYPE,
                        "object keys must be strings (JSON has no other keys)",
                        shown,
                    )
                    continue
                meta_here = in_meta or (key == "meta" and not path.endswith(".coverage"))
                stack.append((_child_path(path, key), value, meta_here))
        elif isinstance(node, list | tuple):
            stack.extend((f"{path}[{i}]", v, in_meta) for i, v in reversed(list(enumerate(node))))
        elif in_meta and not isinstance(node, _JSON_SCALARS):
            yield Problem(
                path,
                RULE_TYPE,
                f"meta must hold JSON values only (objects, arrays, strings, numbers, "
                f"booleans, null), not a {type(node).__name__}",
            )


def _has_suspect(doc: object) -> bool:
    """Whether :func:`_non_json_problems` or :func:`_report_non_finite` may have anything to
    report (a path-free first pass; a False is final, a True is checked with paths).

    Nodes of the plain JSON types are told apart by their exact type first, and the keys of
    an object read in one join: the pass is over every value of every memory of a store (a
    union package of 30,000 memories spent 2.4 s in it). Subclasses (a dict marking repeated
    keys, a float that underflowed) take the general checks.
    """
    stack: list[object] = [doc]
    metas: list[object] = []
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is str:
            if not (node.isascii() or _is_text(node)):  # type: ignore[attr-defined]
                return True
        elif kind is dict:
            try:
                keys = "".join(node)  # type: ignore[arg-type]
            except TypeError:  # a key that is not text
                return True
            if not keys.isascii():
                for key in node:  # type: ignore[union-attr]
                    if not (key.isascii() or _is_text(key)):
                        return True
            if "meta" in node:  # type: ignore[operator]
                metas.append(node["meta"])  # type: ignore[index]
            stack.extend(node.values())  # type: ignore[union-attr]
        elif kind is list or kind is tuple:
            stack.extend(node)  # type: ignore[arg-type]
        elif kind is int or kind is bool or node is None:
            pass
        elif kind is float:
            if not math.isfinite(node):  # type: ignore[arg-type]
                return True
        elif isinstance(node, dict):
            if getattr(node, "duplicate_keys", ()):
                return True
            for key in node:
                if not isinstance(key, str) or not (key.isascii() or _is_text(key)):
                    return True
            if "meta" in node:
                metas.append(node["meta"])
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)
        elif isinstance(node, float):
            if not math.isfinite(node) or type(node) is UnderflowFloat:
                return True
        elif isinstance(node, str) and not (node.isascii() or _is_text(node)):
            return True
    while metas:
        node = metas.pop()
        if isinstance(node, dict):
            metas.extend(node.values())
        elif isinstance(node, list | tuple):
            metas.extend(node)
        elif not isinstance(node, _JSON_SCALARS):
            return True
    return False


_SURROGATE_MESSAGE = (
    "this {} contains an unpaired surrogate escape (like \\ud83d), which is not valid Unicode text"
)


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _child_path(path: str, key: str) -> str:
    """``path.key``; in brackets: coverage keys (unit ids), keys that are not valid text, and
    keys a dotted path would misread (schema QA s38: ``{"a.b": ...}`` and ``{"a": {"b":
    ...}}`` were both ``$.meta.a.b``; a key "units[0]" read as the first unit; "" and "x y")."""
    if (
        path.endswith(".coverage")
        or not _is_text(key)
        or not key
        or any(ch in key for ch in ".[]\"'")
        or any(ch.isspace() for ch in key)
    ):
        return f"{path}[{json.dumps(key)}]"
    return f"{path}.{key}"


class _ObjectWithDuplicateKeys(dict):
    """A decoded JSON object in which some key appeared more than once (last value kept)."""

    duplicate_keys: tuple[str, ...] = ()


def _object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    duplicates: list[str] = []
    for key, value in pairs:
        if key in out and key not in duplicates:
            duplicates.append(key)
        out[key] = value
    if not duplicates:
        return out
    marked = _ObjectWithDuplicateKeys(out)
    marked.duplicate_keys = tuple(duplicates)
    return marked


# --------------------------------------------------------------------------- loading / saving


# What is left at the error position when a file is cut inside a number or a literal
# ("1." / "2e" / "-" / "tr" / "nul" / "Infin" ...).
_PARTIAL_TAIL = re.compile(
    r"(\.[0-9]*)?([eE][+-]?[0-9]*)?|-|-?I(n(f(i(n(i(ty?)?)?)?)?)?)?|N(a)?|t(r(u)?)?|f(a(l(s)?)?)?|n(u(l)?)?"
)


#: What a JSON Lines file read as one JSON document is told (OpenMemory ships
#: ``memories.jsonl.gz``).
JSON_LINES_HINT = (
    "this looks like JSON Lines, one JSON value per line: wrap the lines in one array, "
    "[line 1, line 2, ...]"
)


def parse_json_text(
    text: str,
    source: str,
    *,
    refuse_repeated_keys: bool = False,
    refuse_underflow: bool = False,
    extra_data_hint: str = JSON_LINES_HINT,
) -> object:
    """Decode JSON text; a syntax error or truncation becomes a located :class:`PackageError`.

    The one JSON reader of packages, exports and saved results (QA s44: results were read
    with plain ``json.loads``, which kept the last of two equal keys without a word and let
    Python's own words through for deep nesting and 4,300-digit integers). Rules: ``empty``,
    ``truncated`` and ``json-syntax`` (with line and column), ``json-depth``.

    NaN / Infinity literals are decoded (so that validation can name where they are); a number
    too large for a float (``1e400``) decodes to an infinite :class:`OverflowedNumber`, one
    that underflows to 0 (``1e-400``) to an :class:`UnderflowFloat`. Keys
    repeated inside one object are remembered for validation to report, or, with
    ``refuse_repeated_keys``, refused here: every one named by its JSON path (``duplicate-key``);
    with ``refuse_underflow`` so is a number that underflows to 0 (``normal``), after the keys.
    Both walks run only when decoding saw such a thing. ``extra_data_hint`` is added when a
    second JSON value follows the first.

    >>> try:
    ...     parse_json_text('{"a": 1, "b": {"c": 2, "c": 3}, "a": 4}', "t.json",
    ...                     refuse_repeated_keys=True)
    ... except PackageError as exc:
    ...     print([(p.path, p.rule) for p in exc.problems])
    [('$.a', 'duplicate-key'), ('$.b.c', 'duplicate-key')]
    """
    doc, suspect = _decode_json_text(text, source, extra_data_hint)
    if suspect:
        for refuse, walk in (
            (refuse_repeated_keys, duplicate_key_problems),
            (refuse_underflow, underflow_problems),
        ):
            found = walk(doc) if refuse else []
            if found:
                raise PackageError(source, found)
    return doc


class OverflowedNumber(float):
    """A JSON number too large for a float (``1e400``), decoded as infinity: packages refuse it
    as they refuse any infinity; saved results, which write infinity as ``"Infinity"``, refuse
    it as they refuse an integer too large for a float, rather than read another number."""


def duplicate_key_problems(doc: Any, base: str = "$") -> list[Problem]:
    """``duplicate-key`` problems for every key repeated inside one object of ``doc`` (as
    decoded by :func:`parse_json_text` or with :func:`_object_pairs`), in document order,
    located by JSON path as the package loader locates them; at most ``MAX_PROBLEMS + 1``
    (:func:`~memaudit_core.errors.capped`)."""
    return capped(_duplicate_key_problems(doc, base))


def _duplicate_key_problems(doc: Any, base: str) -> Iterator[Problem]:
    stack: list[tuple[str, Any]] = [(base, doc)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            for key in getattr(node, "duplicate_keys", ()):
                yield Problem(
                    _child_path(path, key),
                    "duplicate-key",
                    "this key appears more than once in the same JSON object (only one "
                    "value could be kept): remove or rename one of them",
                    key,
                )
            stack.extend((_child_path(path, k), v) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(node))))


def has_duplicate_keys(doc: Any) -> bool:
    """Whether some object of ``doc`` repeats a key (a path-free first pass)."""
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if getattr(node, "duplicate_keys", ()):
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


#: A surrogate escape (like \\ud83d), and a surrogate character (text given as str): what may
#: decode to text that is not valid Unicode. A match only means "look".
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_CHARACTER = re.compile(r"[\ud800-\udfff]")


def _decode_json_text(
    text: str, source: str, extra_data_hint: str = JSON_LINES_HINT
) -> tuple[object, bool]:
    """(:func:`parse_json_text`'s document, whether it may hold what :func:`_has_suspect` looks
    for). JSON text cannot hold non-string keys or non-JSON values, so what remains is a
    repeated key, a NaN / Infinity literal, a number that overflows to infinity or underflows
    to 0 (:func:`json_float`), or a surrogate: all but the last are seen while decoding, the
    last by :data:`_SURROGATE_ESCAPE` and :data:`_SURROGATE_CHARACTER`, searched only when
    the text has a ``\\u`` escape or is not ASCII (a regular expression run over all of a
    large text costs more than the pass it spares). This spares the path-free pass over the
    whole document (0.9 s of 4.4 s on a 27 MB package)."""
    if not text.strip():
        raise PackageError(
            source, [Problem("$", "empty", "the file is empty (expected a JSON object)")]
        )
    seen = [False]

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) == len(items):
            return out
        seen[0] = True
        return _object_pairs(items)

    def constant(name: str) -> float:
        seen[0] = True
        return float(name)  # "NaN", "Infinity", "-Infinity"

    def number(literal: str) -> float:
        value = json_float(literal)
        if value - value != 0.0:  # 1e400 decodes to inf
            seen[0] = True
            return OverflowedNumber(value)
        if type(value) is UnderflowFloat:  # 1e-400
            seen[0] = True
        return value

    try:
        doc = json.loads(text, object_pairs_hook=pairs, parse_constant=constant, parse_float=number)
        surrogate = ("\\u" in text and _SURROGATE_ESCAPE.search(text) is not None) or (
            not text.isascii() and _SURROGATE_CHARACTER.search(text) is not None
        )
        return doc, seen[0] or surrogate
    except json.JSONDecodeError as exc:
        truncated = (
            exc.pos >= len(text.rstrip())
            or exc.msg.startswith("Unterminated string")
            or _PARTIAL_TAIL.fullmatch(text[exc.pos :].rstrip()) is not None
        )
        rule = "truncated" if truncated else "json-syntax"
        message = (
            "file ends before the JSON document is complete (truncated?)"
            if truncated
            else f"not valid JSON: {exc.msg}"
        )
        if exc.msg == "Extra data" and text[exc.pos : exc.pos + 1] in ("{", "["):
            message += f" ({extra_data_hint})"  # importer QA: JSONL got no hint
        raise PackageError(
            source, [Problem(f"$ (line {exc.lineno}, column {exc.colno})", rule, message)]
        ) from None
    except RecursionError:
        raise PackageError(
            source, [Problem("$", "json-depth", "the JSON document is nested too deeply to read")]
        ) from None
    except ValueError as exc:  # an integer literal longer than Python's digit limit
        if "digits" not in str(exc):
            problem = Problem("$", "json-syntax", f"not valid JSON: {exc}")
            raise PackageError(source, [problem]) from None
        # The decoder does not say where (QA s44: no line or column, unlike a syntax error).
        where = "$"
        pos = _long_integer_at(text)
        if pos is not None:
            line = text.count("\n", 0, pos) + 1
            column = pos - text.rfind("\n", 0, pos)  # as json.JSONDecodeError counts it
            where = f"$ (line {line}, column {column})"
        message = "not valid JSON: a number has too many digits to read"
        raise PackageError(source, [Problem(where, "json-syntax", message)]) from None


#: A JSON string (skipped whole, so digits inside it are not taken for a number) or a number.
_STRING_OR_NUMBER = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|-?(\d+)(\.\d+)?([eE][+-]?\d+)?')


def _long_integer_at(text: str) -> int | None:
    """Where the first integer literal of ``text`` longer than Python's digit limit starts
    (the one the decoder stopped at: the text before it decoded), or None.

    >>> _long_integer_at('{"a": "1111", "b": 2.5, "c": -' + "9" * 5000 + "}")
    29
    """
    limit = sys.get_int_max_str_digits()
    if not limit:
        return None
    for m in _STRING_OR_NUMBER.finditer(text):
        if m.group(1) is not None and m.group(2) is None and m.group(3) is None:
            if len(m.group(1)) > limit:
                return m.start()
    return None


def loads_package(data: bytes | str, source: str = "<upload>") -> Package:
    """Parse a package from JSON bytes or text (e.g. an upload)."""
    if isinstance(data, bytearray | memoryview):
        data = bytes(data)
    # Validation QA: None or a dict ended in "AttributeError: ... has no attribute 'strip'".
    check_type(data, (bytes, str), "loads_package()", "JSON bytes or text (a dict: parse_package)")
    if isinstance(data, bytes):
        kind = _binary_kind(data)
        if data[:4] in ZIP_MAGICS:
            # QA s47: a zip upload was refused under rule utf-8; what is wrong is the kind of
            # file, as for a zip given where an artifact's tables are not found (file-type).
            raise PackageError(source, [Problem("$", RULE_FILE_TYPE, kind)])
        if kind:
            raise PackageError(source, [Problem("$", RULE_UTF8, f"file is not UTF-8 text: {kind}")])
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise PackageError(
                source, [Problem("$", RULE_UTF8, f"file is not UTF-8 text (byte {exc.start})")]
            ) from None
    else:
        text = data
    doc, suspect = _decode_json_text(text, source)
    try:
        return _parse_package(doc, source, suspect=suspect)
    except PackageError as exc:
        hint = _import_hint(doc)
        if hint is None:
            raise
        # QA s39 defect 7: a LoCoMo file (or a Mem0 / Letta export) given as a package got
        # only "$: a package must be a JSON object"; the problems stay, one hint is added.
        # QA s39 round 2 defect 8: the hint came last (7th for a Mem0 export), so the app's
        # summary showed "First: $.results: unknown field"; it is the root cause, so first.
        # QA s50: and alone, as load_external_store gives its hint for a package: the package
        # problems only restate the wrong kind of file ("a package must be a JSON object", 14
        # "unknown field" lines for a Letta agent file) and buried it. A document that is a
        # package after all keeps its own problems after the hint.
        rest = exc.problems if looks_like_package(doc) else []
        raise PackageError(source, [Problem("$", "format-hint", hint), *rest]) from None


#: A benchmark format's name and the id ``--instance`` takes (EXPORT_FORMATS; the importers).
_BENCHMARKS = {"locomo": ("LoCoMo", "SAMPLE_ID"), "longmemeval": ("LongMemEval", "QUESTION_ID")}


def _import_hint(doc: object) -> str | None:
    """How to import ``doc`` when it looks like a benchmark file or an export, else None."""
    from .importers._common import FORMAT_HINTS, guess_format

    kind = guess_format(doc)
    if kind is None or kind not in FORMAT_HINTS:
        return None
    if kind in ("locomo", "longmemeval"):
        # QA s50: worded for the package box (the hint said "not a store", the app's External
        # stores wording), and saying the app has no converter, so the user knows to go to a
        # terminal.
        name, instance = _BENCHMARKS[kind]
        return (
            f"this is a {name} benchmark file, not a MemAudit package: convert it with "
            f"`memaudit import {kind} FILE --instance {instance} -o package.json` (the app "
            "cannot convert it), then give package.json to memaudit or upload it in the app"
        )
    if kind == "mem0-history-rows":
        return (
            f"this file looks like {FORMAT_HINTS[kind]}, not a package: give it beside its "
            "export with `memaudit import mem0 EXPORT --history FILE --package PACKAGE "
            "-o OUT.json`"
        )
    # QA s39 round 2 defect 8: worded for both faces (the app imports exports on its
    # External stores page; the CLI hint alone sent app users to a terminal).
    return (
        f"this file looks like {FORMAT_HINTS[kind]}, not a package: an export becomes an "
        f"external store of a package; import it with `memaudit import {kind} FILE --package "
        "PACKAGE -o OUT.json` or on the app's External stores page"
    )


#: A zip's first bytes: a local file header, or the end record of an empty archive.
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")


#: Largest span of a package's values (unit weight x coverage) a double still resolves: past
#: it, adding the smallest to a sum of the largest keeps few or no bits of it (2**53 ~ 9e15).
PRECISION_SPAN = 1e15


def _precision_warnings(package: Package, weights: dict[str, float]) -> list[str]:
    """A warning when the package's values span more than a double resolves.

    QA s42 defect 7: a unit weight of 2**70 next to weights near 1 made gains of 3.7 vanish in
    float, and the optimum was still certified. The values compared are w_r x a_ur over every
    nonzero coverage cell of the candidates and memories, in one vectorised pass (validation
    runs on packages of 10,000 experiences).
    """
    import numpy as np  # here, so that `import memaudit_core.package` stays cheap

    if not package.units:
        return []
    unit_pos = {u.id: i for i, u in enumerate(package.units)}
    rows = [*package.candidates, *(m for s in package.stores for m in s.memories)]
    where = np.fromiter((unit_pos[u] for r in rows for u in r.coverage), dtype=np.int64)
    cover = np.fromiter(
        (a for r in rows for a in r.coverage.values()), dtype=np.float64, count=where.size
    )
    weight = np.array([weights[u.id] for u in package.units], dtype=np.float64)
    value = weight[where] * cover
    live = value > 0
    if not live.any():
        return []
    value, where = value[live], where[live]
    big, small = int(np.argmax(value)), int(np.argmin(value))
    if value[big] <= PRECISION_SPAN * value[small]:
        return []
    big_unit, small_unit = int(where[big]), int(where[small])
    # In orders of magnitude: the ratio itself can overflow (1e300 over 1e-300).
    orders = math.log10(float(value[big])) - math.log10(float(value[small]))
    return [
        package_warning(
            f"$.units[{small_unit}]",
            f"unit weight x coverage spans {orders:.0f} orders of magnitude (largest "
            f"{value[big]:.6g} on unit {package.units[big_unit].id!r}, $.units[{big_unit}]; "
            f"smallest {value[small]:.6g} on unit {package.units[small_unit].id!r}, "
            f"$.units[{small_unit}]), beyond the {PRECISION_SPAN:.0e} a double resolves: small "
            "gains may be lost to rounding, so an optimum can be certified without them; "
            "rescale the weights (or drop the tiny coverage)",
            "value-span",
        )
    ]


def _unknown_type_warnings(candidates: Sequence[Candidate]) -> list[str]:
    """One warning per candidate type outside :data:`CANDIDATE_TYPES`.

    The type is open (a writer may add its own), but the ablation pools read it: CLI QA
    renamed every ``tombstone`` to ``Tombstone``, which validated without a word and moved
    the no_validity optimum from 3.965 to 6.3975.
    """
    by_type: dict[str, list[int]] = {}
    for i, cand in enumerate(candidates):
        if cand.type not in CANDIDATE_TYPES:
            by_type.setdefault(cand.type, []).append(i)
    out = []
    for name, where in by_type.items():
        close = closest_name(name, CANDIDATE_TYPES)
        out.append(
            package_warning(
                f"$.candidates[{where[0]}].type",
                f"candidate type {name!r} ({len(where)} candidate(s), first "
                f"{candidates[where[0]].id!r}) is not a known type ({', '.join(CANDIDATE_TYPES)}): "
                "the no_validity pool keeps it and the generic pool leaves it out"
                + (f"; did you mean {close!r}?" if close else ""),
                "candidate-type",
            )
        )
    return out


def _binary_kind(data: bytes) -> str:
    """What a file that is not UTF-8 JSON most likely is, in words, or ''.

    CLI QA: a gzip file and a UTF-16 file got "not UTF-8 text (byte 1)" and "not valid JSON:
    Expecting property name", which do not say what to do.

    >>> _binary_kind(b"\\x1f\\x8b\\x08"), _binary_kind('{"a": 1}'.encode("utf-16-le"))[:26]
    ('a gzip file; decompress it first (gunzip)', 'it looks like UTF-16 text;')
    """
    if data[:2] == b"\x1f\x8b":
        return "a gzip file; decompress it first (gunzip)"
    if data[:4] in ZIP_MAGICS:
        # Validation QA: "give it a .zip suffix" was said of an upload already named x.zip.
        return (
            "a zip file, not a JSON package; an artifact archive becomes one with "
            "`memaudit import artifact ARCHIVE.zip -o package.json`"
        )
    if data[:16] == b"SQLite format 3\x00":
        # Importer QA: a Mem0 history.db given as the export was "UTF-16 text" (its NULs).
        return "a SQLite database, not JSON (a Mem0 history.db is read with --history)"
    head = data[:200]
    if head[:2] in (b"\xff\xfe", b"\xfe\xff") or (
        b"\x00" in head and head.count(b"\x00") * 4 >= len(head)
    ):
        return "it looks like UTF-16 text; save it as UTF-8"
    return ""


def load_package(path: str | Path) -> Package:
    """Load and validate a package file (``.json``), or an artifact folder / zip.

    Raises
    ------
    PackageError
        For a missing file, bad JSON or any validation problem.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> from memaudit_core import PackageError, generate, load_package
    >>> from memaudit_core.package import package_to_dict
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "chain.json"
    >>> _ = path.write_text(json.dumps(package_to_dict(generate("update_chain"))))
    >>> pkg = load_package(path)
    >>> pkg.id, len(pkg.candidates), pkg.budget_grid()
    ('update_chain', 18, (3.0, 6.0, 13.0))
    >>> try:
    ...     load_package(path.with_name("missing.json"))
    ... except PackageError as exc:
    ...     print(exc.problems[0].rule)
    file-exists
    """
    check_type(
        path, str | os.PathLike, "load_package()", "a file path (parse_package takes a dict)"
    )
    p = Path(path)
    source = str(path)
    found, folder, unreadable = probe_path(path)
    if unreadable:  # a name too long for the file system (QA: an internal error)
        raise PackageError(file_name_text(source), [Problem("$", RULE_READABLE, unreadable)])
    if not found:
        raise PackageError(source, [Problem("$", RULE_FILE_EXISTS, "no such file or folder")])
    if folder or p.suffix.lower() == ".zip":
        from .importers.artifact import load_artifact_package

        return load_artifact_package(p)
    refuse_device(p, source)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise PackageError(
            source, [Problem("$", RULE_READABLE, f"cannot read file: {exc.strerror}")]
        ) from None
    return loads_package(data, source)


def refuse_device(path: Path, source: str) -> None:
    """Refuse a character or block device before reading it.

    CLI QA: ``validate /dev/urandom`` read until memory ran out and ended in an internal
    error. Pipes stay allowed, so ``<(zcat package.json.gz)`` works.
    """
    mode = path.stat().st_mode
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "character device" if stat.S_ISCHR(mode) else "block device"
        raise PackageError(
            source, [Problem("$", "regular-file", f"not a regular file ({kind}): give a file")]
        )


def _clean_number(x: float) -> int | float:
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else float(x)


def package_to_dict(package: Package) -> dict[str, Any]:
    """The canonical JSON form of a package (what :func:`save_package` writes)."""
    return _package_doc(package, _clean_number, list)


def _as_given(value: Any) -> Any:
    return value


def _as_array(value: Any) -> Any:
    """A tuple or list as a list; anything else as given, for the validator to name."""
    return list(value) if isinstance(value, tuple | list) else value


def _package_doc(
    package: Package, number: Callable[[Any], Any], array: Callable[[Any], Any]
) -> dict[str, Any]:
    """The dict form of ``package``: canonical with ``number=_clean_number, array=list``; the
    values as given with ``_as_given, _as_array`` (what :func:`_validate_built` checks:
    ``_clean_number`` turned a cost "1" into 1 or raised TypeError, QA s40 defect 1)."""
    doc: dict[str, Any] = {"memaudit": FORMAT_VERSION, "id": package.id}
    if package.title:
        doc["title"] = package.title
    if package.description:
        doc["description"] = package.description
    doc["cost_unit"] = package.cost_unit
    doc["objective"] = {"saturation": package.saturation}
    if package.budget is not None:
        doc["budget"] = number(package.budget)
    if package.budgets:
        doc["budgets"] = [number(b) for b in package.budgets]
    doc["experiences"] = [
        {
            "id": e.id,
            "time": number(e.time),
            **({"session": e.session} if e.session else {}),
            **({"text": e.text} if e.text else {}),
            **({"meta": e.meta} if e.meta else {}),
        }
        for e in package.experiences
    ]
    doc["units"] = [
        {
            "id": u.id,
            "kind": u.kind,
            **({"text": u.text} if u.text else {}),
            **({"weight": number(u.weight)} if u.weight is not None else {}),
            **({"meta": u.meta} if u.meta else {}),
        }
        for u in package.units
    ]
    if package.queries:
        doc["queries"] = [
            {
                "id": q.id,
                **({"text": q.text} if q.text else {}),
                **({"answer": q.answer} if q.answer else {}),
                "requires": array(q.requires),
                "weight": number(q.weight),
                **({"meta": q.meta} if q.meta else {}),
            }
            for q in package.queries
        ]
    doc["candidates"] = [
        {
            "id": c.id,
            "experience": c.experience,
            "type": c.type,
            **({"text": c.text} if c.text else {}),
            "cost": number(c.cost),
            "coverage": {k: number(v) for k, v in c.coverage.items()},
            **({"meta": c.meta} if c.meta else {}),
        }
        for c in package.candidates
    ]
    if package.stores:
        doc["stores"] = [_store_to_dict(s, number, array) for s in package.stores]
    if package.meta:
        doc["meta"] = package.meta
    return doc


def _store_to_dict(
    store: Store, number: Callable[[Any], Any], array: Callable[[Any], Any]
) -> dict[str, Any]:
    out: dict[str, Any] = {"id": store.id}
    if store.label:
        out["label"] = store.label
    if store.system:
        out["system"] = store.system
    if store.select or not store.memories:
        out["select"] = array(store.select)
    if store.memories:
        mems = []
        for m in store.memories:
            mem: dict[str, Any] = {"id": m.id}
            if m.text:
                mem["text"] = m.text
            mem["cost"] = number(m.cost)
            mem["coverage"] = {k: number(v) for k, v in m.coverage.items()}
            if m.created_at is not None:  # "" too, so a hand-built one is checked (QA s42)
                mem["created_at"] = m.created_at
            if m.salience is not None:
                mem["salience"] = number(m.salience)
            if m.status != "active":
                mem["status"] = m.status
            if m.meta:
                mem["meta"] = m.meta
            mems.append(mem)
        out["memories"] = mems
    if store.meta:
        out["meta"] = store.meta
    return out


def dumps_package(package: Package, indent: int | None = 2) -> str:
    return json.dumps(package_to_dict(package), indent=indent, ensure_ascii=False) + "\n"


def save_package(package: Package, path: str | Path) -> None:
    """Write the canonical JSON form (UTF-8, indented, trailing newline).

    Raises
    ------
    MemAuditError
        When the file cannot be written (a missing folder, no permission, a full disk).
    """
    text = dumps_package(package)
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise MemAuditError(f"cannot write {path}: {exc.strerror or exc}") from None


def content_hash(package: Package) -> str:
    """A stable SHA-256 over the canonical form (key order and formatting do not matter)."""
    canonical = json.dumps(
        package_to_dict(package), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def replace_package(package: Package, **changes: Any) -> Package:
    """A copy with some fields changed, re-validated through its dict form."""
    with _validated_construction():  # validated once, just below (not in __post_init__ too)
        changed = replace(package, **changes)
    return _parse_package(_validation_doc(changed, package.source), package.source, suspect=None)


#: The class each item of a package's sequence fields must be (``budgets``: the parser's).
_ITEM_CLASSES: dict[str, type] = {
    "experiences": Experience,
    "units": Unit,
    "queries": Query,
    "candidates": Candidate,
    "stores": Store,
}


def _a(name: str) -> str:
    return f"{'an' if name[:1] in 'AEIOU' else 'a'} {name}"


def _items_problems(value: object, path: str, cls: type) -> Iterator[Problem]:
    if not isinstance(value, tuple | list):
        yield Problem(path, RULE_TYPE, f"must be a tuple of {cls.__name__} objects", value)
        return
    for i, item in enumerate(value):
        if not isinstance(item, cls):
            yield Problem(
                f"{path}[{i}]",
                RULE_TYPE,
                f"must be {_a(cls.__name__)}, not {_a(type(item).__name__)}",
            )


def _validation_doc(package: Package, source: str) -> dict[str, Any]:
    """The dict form of a package built in Python, its values as given, for the validator.

    Raises
    ------
    PackageError
        When a field that holds items is not a sequence of the model's objects (a dict where a
        :class:`Candidate` belongs): its dict form cannot be built.
    """
    problems = Problems(source)
    for name, cls in _ITEM_CLASSES.items():
        problems.extend(_items_problems(getattr(package, name), f"$.{name}", cls))
    if not isinstance(package.budgets, tuple | list):
        problems.add("$.budgets", RULE_TYPE, "must be a tuple of numbers", package.budgets)
    if not problems.problems:
        for i, store in enumerate(package.stores):
            problems.extend(
                _items_problems(store.memories, f"$.stores[{i}].memories", ExternalMemory)
            )
    problems.raise_if_any()
    return _package_doc(package, _as_given, _as_array)


def _validate_built(package: Package) -> Package:
    """Validate a package built in Python with the rules of :func:`parse_package` (QA s40
    defect 1); returns the parsed copy (for its warnings).

    Raises
    ------
    PackageError
        Every problem, by its JSON path in the :func:`package_to_dict` form and its rule.
    """
    source = f"{package.source} (Package {package.id!r} built in Python)"
    return _parse_package(_validation_doc(package, source), source, suspect=None)


# --------------------------------------------------------------------------- JSON Schema


def _coverage_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "description": "unit id -> coverage in [0, 1]",
        "additionalProperties": {"type": "number", "minimum": 0, "maximum": 1},
    }


#: What :func:`parse_package` checks and the JSON Schema cannot say (schema QA s38: each of
#: these passed the schema and was refused by ``validate``, unsaid).
VALIDATOR_ONLY_RULES = (
    "ids unique within experiences, units, queries, candidates, stores and a store's memories, "
    "and a memory id distinct from every candidate id (unique-id)",
    "references to unknown experiences, units or candidates, and one candidate per "
    "experience in a store (known-experience, known-unit, known-candidate, one-per-group)",
    "numbers finite (no NaN, infinity, or integer literals past a float's range), normal (no "
    "subnormals such as 1e-310), and sums of costs and weights finite (finite, normal, "
    "finite-sum)",
    "created_at an ISO-8601 date-time (iso-8601)",
    "no key repeated within an object, and text that is valid Unicode (duplicate-key, unicode)",
)


def package_json_schema() -> dict[str, Any]:
    """The published JSON Schema (draft 2020-12) of package format v1.

    :data:`VALIDATOR_ONLY_RULES` are checked by :func:`parse_package` only (JSON Schema cannot
    express them); the schema's ``description`` lists them, so that a package valid under the
    schema alone is not taken for a valid package.
    """
    # A non-space character, as parse_package's non-empty rule (validation QA: " " passed).
    ident = {"type": "string", "minLength": 1, "pattern": r"\S"}
    number = {"type": "number"}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://memaudit.dev/schema/package-v1.json",
        "title": "MemAudit package v1",
        "description": "A MemAudit package (format v1). Beyond this schema, `memaudit validate` "
        "checks: " + "; ".join(VALIDATOR_ONLY_RULES) + ".",
        "type": "object",
        "required": ["memaudit", "id", "experiences", "units", "candidates"],
        "additionalProperties": False,
        "properties": {
            "$schema": {"type": "string"},
            "memaudit": {"const": FORMAT_VERSION},
            "id": ident,
            "title": {"type": "string"},
            "description": {"type": "string"},
            "cost_unit": ident,
            "objective": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"saturation": {"enum": list(SATURATIONS)}},
            },
            "budget": {"type": "number", "minimum": 0},
            "budgets": {
                "type": "array",
                "items": {"type": "number", "minimum": 0},
                "maxItems": MAX_RANGE_BUDGETS,
            },
            "experiences": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id"],
                    "additionalProperties": False,
                    "properties": {
                        "id": ident,
                        "time": number,
                        "session": {"type": "string"},
                        "text": {"type": "string"},
                        "meta": {"type": "object"},
                    },
                },
            },
            "units": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id"],
                    "additionalProperties": False,
                    "properties": {
                        "id": ident,
                        "kind": {**ident, "examples": list(UNIT_KINDS)},
                        "text": {"type": "string"},
                        "weight": {"type": "number", "minimum": 0},
                        "meta": {"type": "object"},
                    },
                },
            },
            "queries": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id", "requires"],
                    "additionalProperties": False,
                    "properties": {
                        "id": ident,
                        "text": {"type": "string"},
                        "answer": {"type": ["string", "number"]},
                        "requires": {"type": "array", "items": ident, "uniqueItems": True},
                        "weight": {"type": "number", "minimum": 0},
                        "meta": {"type": "object"},
                    },
                },
            },
            "candidates": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id", "experience", "type", "cost", "coverage"],
                    "additionalProperties": False,
                    "properties": {
                        "id": ident,
                        "experience": ident,
                        "type": {
                            "type": "string",
                            "pattern": r"\S",
                            "examples": list(CANDIDATE_TYPES),
                        },
                        "text": {"type": "string"},
                        "cost": {"type": "number", "exclusiveMinimum": 0},
                        "coverage": _coverage_schema(),
                        "meta": {"type": "object"},
                    },
                },
            },
            "stores": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id"],
                    "additionalProperties": False,
                    "properties": {
                        "id": ident,
                        "label": {"type": "string"},
                        "system": {"type": "string"},
                        "select": {"type": "array", "items": ident, "uniqueItems": True},
                        "memories": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["id", "cost", "coverage"],
                                "additionalProperties": False,
                                "properties": {
                                    "id": ident,
                                    "text": {"type": "string"},
                                    "cost": {"type": "number", "exclusiveMinimum": 0},
                                    "coverage": _coverage_schema(),
                                    # A hint: validate reads ISO-8601 forms beyond RFC 3339.
                                    "created_at": {"type": "string"},
                                    "salience": number,
                                    "status": ident,
                                    "meta": {"type": "object"},
                                },
                            },
                        },
                        "meta": {"type": "object"},
                    },
                },
            },
            "meta": {"type": "object"},
        },
    }


#: The rule of the note that some budgets of a sweep lie above the total cost of what they
#: choose from (where everything fits, so they add no information).
BUDGET_ABOVE_TOTAL = "budget-above-total"


@dataclass(frozen=True)
class CostTotal:
    """The budget past which a larger one changes nothing: the total cost of everything that
    can be chosen. ``store`` is the external store whose union package P+ (the package's
    candidates plus the memories the store keeps) sets it; None: the candidates alone.

    QA s47: the app and the sweep note used the candidates' total alone, so an external store
    costing more than the package was cut to fit a budget said to fit "every candidate".
    """

    total: float
    store: str | None = None

    def describe(self, cost_unit: str) -> str:
        """What the total is, with its amount: ``the package's total candidate cost (51
        words)``."""
        amount = f"{self.total:.10g} {cost_unit}"
        if self.store is None:
            return f"the package's total candidate cost ({amount})"
        return (
            f"the total cost of the package's candidates plus the memories of store "
            f"{cut_repr(self.store)} ({amount})"
        )

    @property
    def what_fits(self) -> str:
        return "every candidate" if self.store is None else "every candidate and memory"


def union_total_costs(package: Package) -> dict[str, float]:
    """Each external store's id and the total cost of its union package P+: the package's
    candidates plus the memories the store keeps (deleted ones are not part of it,
    :func:`store_as_kept`)."""
    total = package.total_cost()
    return {
        s.id: total + float(sum(m.cost for m in store_as_kept(s).memories))
        for s in package.stores
        if s.is_external
    }


def largest_cost_total(
    total: float, union_totals: Mapping[str, float], store_ids: Iterable[str] | None = ()
) -> CostTotal:
    """The largest of the candidates' ``total`` and the ``union_totals`` of the external
    stores in ``store_ids`` (None: every one; ids of other stores add nothing, as the
    candidates a store selects are counted in ``total``)."""
    wanted = None if store_ids is None else set(store_ids)
    best = CostTotal(float(total))
    for store_id, union_total in union_totals.items():
        if (wanted is None or store_id in wanted) and union_total > best.total:
            best = CostTotal(float(union_total), store_id)
    return best


def cost_total(package: Package, store_ids: Iterable[str] | None = ()) -> CostTotal:
    """:func:`largest_cost_total` of ``package``: above it every candidate (and every memory
    of the external stores in ``store_ids``; None: of every external store) fits, so a larger
    budget gives the same results. The app caps its budget here (``store_ids=None``: the
    budget is one for every page and store) and a sweep names the stores it runs.

    >>> from memaudit_core.generators import generate
    >>> cost_total(generate("update_chain"))
    CostTotal(total=51.0, store=None)
    """
    return largest_cost_total(package.total_cost(), union_total_costs(package), store_ids)


def budgets_above_total_note(
    package: Package, budgets: Iterable[float], store_ids: Iterable[str] | None = ()
) -> str | None:
    """What a sweep of ``package`` at ``budgets`` says about the budgets above its
    :func:`cost_total` (with the external stores in ``store_ids`` that the sweep runs), or
    None when there are none: everything fits there, so their points repeat the one at the
    total, and on a chart they squash the budgets that matter near 0.

    QA s18c (range mode) and s46 (the package grid's 1e6 and ``sweep --budgets 1e308`` were
    silent): the one wording for the app's grid and range modes and the CLI. QA s47: a swept
    external store costing more than the candidates is cut below its union's total, so the
    note counts from that total.

    >>> from memaudit_core.generators import generate
    >>> pkg = generate("update_chain")
    >>> budgets_above_total_note(pkg, [1, 2]) is None
    True
    >>> print(budgets_above_total_note(pkg, [1, 1e6, 2e6]).split(":")[0])
    2 of the 3 budgets (1000000 and up) are above the package's total candidate cost (51 words)
    """
    return above_total_note(cost_total(package, store_ids), package.cost_unit, budgets)


def above_total_note(
    total: float | CostTotal, cost_unit: str, budgets: Iterable[float]
) -> str | None:
    """:func:`budgets_above_total_note` from a :class:`CostTotal` (a number: the package's
    total candidate cost) and cost unit alone: a suite says it from its index entries,
    without the package (QA s46 review: only ``sweep FILE --budgets`` said it; ``--out``,
    ``--family`` and ``audit`` were silent).

    >>> print(above_total_note(10, "tokens", [5, 20]).split(":")[0])
    1 of the 2 budgets (20) is above the package's total candidate cost (10 tokens)
    """
    ceiling = total if isinstance(total, CostTotal) else CostTotal(float(total))
    grid = sorted(dict.fromkeys(float(b) for b in budgets))
    past = [b for b in grid if b > ceiling.total]
    if not past:
        return None
    if len(grid) == 1:
        which = f"the budget {past[0]:.10g} is"
    elif len(past) == 1:
        which = f"1 of the {len(grid)} budgets ({past[0]:.10g}) is"
    else:
        which = f"{len(past)} of the {len(grid)} budgets ({past[0]:.10g} and up) are"
    points = "their points equal" if len(past) > 1 else "its point equals"
    return (
        f"{which} above {ceiling.describe(cost_unit)}: {ceiling.what_fits} fits there, so "
        f"{points} the one at B = {ceiling.total:.10g} (rule: {BUDGET_ABOVE_TOTAL})"
    )
