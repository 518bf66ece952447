"""The saturation registry: every concave h the objective F = sum_r w_r h(z_r) may use.

A leaf module, so that package validation (which names the known saturations) and the
objective (which evaluates them) read one table; :mod:`memaudit_core.objective` re-exports it.

Examples
--------
>>> sorted(SATURATIONS)
['cap1', 'linear', 'log1p']
>>> get_saturation("cap1").h_scalar(1.7)
1.0

:data:`SATURATIONS` is read-only: :func:`register_saturation` adds one after checking that its
h is 0 at 0, nondecreasing and concave, which every exact engine's bounds assume (QA s46: a
convex ``z ** 2`` put straight into the table had branch-and-bound certify 18 as OPT where 19
was feasible). Those checks sample h, so results under a registered saturation note that
their OPT assumes h concave (:func:`assumed_saturation_note`).
"""

from __future__ import annotations

import gc
import math
import numbers
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

import numpy as np

from . import saturation_caches
from .errors import MemAuditError, SaturationError, UnknownNameError, cut_repr
from .readonly import ReadOnlyDict


@dataclass(frozen=True)
class Saturation:
    """A concave, nondecreasing h with h(0) = 0 (vectorised and scalar forms).

    Add one with :func:`register_saturation`, which checks those properties numerically.

    Examples
    --------
    >>> import math
    >>> import numpy as np
    >>> import memaudit_core as ma
    >>> cap1 = ma.SATURATIONS["cap1"]  # the default: a unit is covered at most once
    >>> cap1.description, cap1.h_scalar(1.5), cap1.h(np.array([0.5, 2.0])).tolist()
    ('h(z) = min(1, z)', 1.0, [0.5, 1.0])

    A saturation of one's own, named by a package's ``objective.saturation`` (module-level
    functions, so that worker processes receive it):

    >>> sat = ma.register_saturation(
    ...     ma.Saturation("doc_sqrt", np.sqrt, math.sqrt, "h(z) = sqrt(z)", math.inf))
    >>> from memaudit_core.package import package_to_dict
    >>> doc = package_to_dict(ma.generate("update_chain"))
    >>> doc["objective"]["saturation"] = "doc_sqrt"
    >>> opt = ma.solve(ma.compile_package(ma.parse_package(doc)), 6)
    >>> opt.label, round(opt.value, 3), len(opt.notes)  # the note: concavity is assumed
    ('OPT', 7.792, 1)
    >>> ma.unregister_saturation("doc_sqrt")
    """

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


class _Registry(ReadOnlyDict):
    """The saturations by name; read-only, so that every one passed :func:`register_saturation`."""

    def refusal(self) -> Exception:
        # QA s46: SATURATIONS["square"] = ... slipped a convex h past every check.
        return SaturationError(
            "SATURATIONS is read-only: add a saturation with register_saturation(Saturation(...)) "
            "and remove it with unregister_saturation(name)"
        )

    def __reduce__(self) -> tuple[type, tuple[dict[str, Saturation]]]:
        # A copy or pickle is a plain snapshot.
        return (dict, (dict(self),))


# Module-level functions, not lambdas, so that a Saturation pickles (library QA).
_BUILTIN = (
    Saturation("cap1", _cap1, _cap1_scalar, "h(z) = min(1, z)", 1.0),
    Saturation("linear", _linear, _linear_scalar, "h(z) = z", math.inf),
    Saturation("log1p", np.log1p, math.log1p, "h(z) = ln(1 + z)", math.inf),
)
#: Every saturation a package may name: the built-in ones, then those registered.
SATURATIONS: _Registry = _Registry()
for _sat in _BUILTIN:
    dict.__setitem__(SATURATIONS, _sat.name, _sat)
#: The product's own saturations (never replaced or removed).
BUILTIN_SATURATIONS: tuple[str, ...] = tuple(s.name for s in _BUILTIN)
#: Saturations unregistered in this process: their names may come back with the same
#: functions, or others with replace=True, since optima cached for packages naming them were
#: computed with that h.
_RETIRED: dict[str, Saturation] = {}
#: The compiled instances alive under each registered saturation's name (see note_compiled).
_COMPILED: dict[str, weakref.WeakSet] = {}
#: How far from 0 each registered saturation's h has been checked.
_CHECKED_UP_TO: dict[str, float] = {}

#: The range of z :func:`register_saturation` checks, [0, CHECK_RANGE]. A unit's coverage z
#: is the sum of its coverage values (each in [0, 1]) over a store, so it reaches past this
#: only with over a million covering candidates; :func:`check_saturation_range` checks such
#: a package's own range when it is compiled.
CHECK_RANGE = 1e6
#: Relative slack of the numeric checks (floating-point rounding, not a licence to bend).
CHECK_TOL = 1e-9


def check_grid(upper: float) -> np.ndarray:
    """The sorted points of [0, ``upper``] where h is checked: a dense uniform grid near 0
    (where coverage sums of a few candidates fall, integers and 1/256 steps included), a
    uniform and a geometric grid over the whole range, and random points from a fixed seed.

    >>> g = check_grid(1e6)
    >>> float(g[0]), float(g[-1]), bool(np.all(np.diff(g) > 0))
    (0.0, 1000000.0, True)
    """
    rng = np.random.default_rng(46)
    near = min(upper, 16.0)
    parts = [
        np.linspace(0.0, near, 4097),
        np.linspace(0.0, upper, 4097),
        rng.uniform(0.0, near, 1000),
        rng.uniform(0.0, upper, 1000),
    ]
    if upper > 1e-6:
        parts.append(np.geomspace(1e-6, upper, 2401))
        parts.append(10.0 ** rng.uniform(-6.0, math.log10(upper), 1000))
    grid = np.unique(np.concatenate(parts))
    return grid[(grid >= 0.0) & (grid <= upper)]


def _refuse(sat: Saturation, rule: str, detail: str) -> SaturationError:
    return SaturationError(f"saturation {sat.name!r} refused: {detail} [rule: {rule}]")


def _num(x: float) -> str:
    return f"{x:.6g}"


def check_saturation(
    sat: Saturation, upper: float = CHECK_RANGE, extra: np.ndarray | None = None
) -> None:
    """Check numerically, on :func:`check_grid` of [0, ``upper``] (and the points ``extra``
    in that range, e.g. a package's own coverage sums), that ``sat.h`` is finite, 0 at 0,
    nondecreasing, concave, at most ``sat.cap`` and equal to ``sat.h_scalar`` (at a sample of
    the grid and at every point of ``extra``); a
    :class:`~memaudit_core.errors.SaturationError` naming the saturation and the rule if not.

    >>> check_saturation(get_saturation("log1p"))
    >>> try:
    ...     check_saturation(Saturation("square", np.square, lambda z: z * z, "z^2", math.inf))
    ... except SaturationError as exc:
    ...     print(exc)  # doctest: +ELLIPSIS
    saturation 'square' refused: h must be concave, but h(...) = ... lies below the chord ...
    """
    z = check_grid(upper)
    points = np.zeros(0)
    if extra is not None and extra.size:
        points = extra[(extra >= 0.0) & (extra <= upper)]
        z = np.unique(np.concatenate([z, points]))
    hz = _vector_values(sat, z)
    bad = np.flatnonzero(~np.isfinite(hz))
    if bad.size:
        i = bad[0]
        raise _refuse(
            sat, "finite", f"h must be finite on [0, {_num(upper)}], h({_num(z[i])}) = {hz[i]}"
        )
    if abs(hz[0]) > 1e-12:
        raise _refuse(sat, "h(0)=0", f"h(0) must be 0, got {float(hz[0])!r}")
    scale = np.maximum(1.0, np.abs(hz))
    # Nondecreasing against the running maximum, so that many tiny drops cannot add up.
    top = np.maximum.accumulate(hz)
    bad = np.flatnonzero(hz < top - CHECK_TOL * scale)
    if bad.size:
        i = bad[0]
        j = int(np.argmax(hz[:i]))
        raise _refuse(
            sat,
            "nondecreasing",
            f"h must be nondecreasing, but h({_num(z[i])}) = {_num(hz[i])} < "
            f"h({_num(z[j])}) = {_num(hz[j])}",
        )
    # Concave, locally: each point on or above the chord of its neighbours (scale-free form).
    a, b, c = z[:-2], z[1:-1], z[2:]
    ha, hb, hc = hz[:-2], hz[1:-1], hz[2:]
    chord = ha + (hc - ha) * ((b - a) / (c - a))
    slack = CHECK_TOL * (np.abs(ha) + np.abs(hb) + np.abs(hc)) + 1e-12
    short = chord - hb
    if np.any(short > slack):
        i = int(np.argmax(short / np.maximum(1.0, np.abs(hb))))  # the clearest case
        raise _refuse(
            sat,
            "concave",
            f"h must be concave, but h({_num(b[i])}) = {_num(hb[i])} lies below the chord "
            f"from h({_num(a[i])}) = {_num(ha[i])} to h({_num(c[i])}) = {_num(hc[i])} "
            f"by {_num(short[i])}",
        )
    # ... and globally: h(z) / z never rises (concave with h(0) = 0), against the running
    # minimum so that slight convexity spread over many points is caught too.
    zp, hp = z[z > 0], hz[z > 0]
    ratio = hp / zp
    rise = np.flatnonzero(ratio > np.minimum.accumulate(ratio) * (1 + CHECK_TOL) + 1e-12)
    if rise.size:
        i = int(rise[0])
        j = int(np.argmin(ratio[:i]))
        raise _refuse(
            sat,
            "concave",
            f"h must be concave, but h(z) / z rises from {_num(ratio[j])} at z = "
            f"{_num(zp[j])} to {_num(ratio[i])} at z = {_num(zp[i])}",
        )
    if math.isfinite(sat.cap):
        bad = np.flatnonzero(hz > sat.cap + CHECK_TOL * scale)
        if bad.size:
            i = bad[0]
            raise _refuse(
                sat, "cap", f"h({_num(z[i])}) = {_num(hz[i])} exceeds its cap {sat.cap!r}"
            )
    # The scalar form runs in the frontier engine and recomputes a result's unit values when
    # it is read back: it must be the same function. A sample of the grid, and every point
    # of ``extra`` (QA s48: an h_scalar wrong only at a sum the package reaches was accepted,
    # and the library's own result then failed to read back).
    at_points = np.zeros(z.size, dtype=bool)
    at_points[np.searchsorted(z, points)] = True  # z holds each of them (np.unique above)
    sample = np.zeros(z.size, dtype=bool)
    sample[:: max(1, z.size // 300)] = True
    ks = np.flatnonzero(sample | at_points)
    _check_forms(sat, z[sample], hz[sample])
    got = _scalar_values(sat, z[ks].tolist(), hz[ks], at_points[ks])
    bad = np.flatnonzero(~np.isfinite(got) | (np.abs(got - hz[ks]) > CHECK_TOL * scale[ks]))
    if bad.size:
        i = int(bad[0])
        _refuse_scalar(sat, float(z[ks[i]]), float(got[i]), float(hz[ks[i]]), at_points[ks[i]])


#: What every engine needs of h: the forms it is called in (QA s50: a per-element loop, an h
#: returning a list and one changing its argument in place all passed registration, then
#: crashed every solve on a 2-D array, a difference of two results or a read-only slice).
VECTORISED_RULE = (
    "h must accept a read-only 1-D or 2-D float array and return a float array of its shape, "
    "the same values row by row (vectorised, not changing its input)"
)


def _vector_call(sat: Saturation, z: np.ndarray, form: str) -> np.ndarray:
    """``sat.h(z)``, or the refusal naming the form of z that it failed on."""
    try:
        with np.errstate(all="ignore"):  # an overflow is reported later, as the rule broken
            hz = sat.h(z)
    except Exception as exc:  # a user's function: any failure is a refusal, not a traceback
        # ``z *= 2`` on a read-only array says only "output array is read-only".
        hint = " (h writes into its argument)" if "read-only" in str(exc) else ""
        raise _refuse(
            sat,
            "vectorised",
            f"{VECTORISED_RULE}; h({form}) raised {type(exc).__name__}: {exc}{hint}",
        ) from None
    if not (
        isinstance(hz, np.ndarray) and hz.shape == z.shape and np.issubdtype(hz.dtype, np.floating)
    ):
        got = (
            f"a {hz.dtype} array of shape {hz.shape}"
            if isinstance(hz, np.ndarray)
            else f"{type(hz).__name__} {cut_repr(hz)}"
        )
        raise _refuse(sat, "vectorised", f"{VECTORISED_RULE}; h({form}) returned {got}")
    return hz.astype(np.float64, copy=False)


def _vector_values(sat: Saturation, z: np.ndarray) -> np.ndarray:
    """h on all of ``z``, read-only as the engines' coverage slices are."""
    frozen = z.copy()
    frozen.setflags(write=False)
    return _vector_call(sat, frozen, f"read-only 1-D array of {z.size} values")


def _check_forms(sat: Saturation, z: np.ndarray, hz: np.ndarray) -> None:
    """h in the other forms the engines call it in, at the points ``z`` where it gave ``hz``:
    a read-only 2-D array (enumeration's stores by units) whose rows must give the 1-D
    values, and a writable array, which h must leave as it was (running coverage sums)."""
    rows = z[: z.size - z.size % 3].reshape(3, -1)
    rows.setflags(write=False)
    h2 = _vector_call(sat, rows, f"read-only 2-D array of shape {rows.shape}")
    want = hz[: rows.size].reshape(rows.shape)
    tol = CHECK_TOL * np.maximum(1.0, np.abs(want))
    bad = np.argwhere(~(np.abs(h2 - want) <= tol))
    if bad.size:
        i, j = bad[0]
        raise _refuse(
            sat,
            "vectorised",
            f"{VECTORISED_RULE}; at z = {_num(rows[i, j])} h gives {_num(h2[i, j])} in row {i} "
            f"of a 2-D array and {_num(want[i, j])} in a 1-D array",
        )
    mine = z.copy()
    _vector_call(sat, mine, f"writable 1-D array of {z.size} values")
    if not np.array_equal(mine, z):
        k = int(np.flatnonzero(mine != z)[0])
        raise _refuse(
            sat,
            "vectorised",
            f"{VECTORISED_RULE}; h changed its argument in place (z = {_num(z[k])} became "
            f"{_num(mine[k])})",
        )


def _refuse_scalar(sat: Saturation, z: float, one: object, h: float, reached: bool) -> NoReturn:
    where = ", a coverage sum this package reaches," if reached else ""
    raise _refuse(
        sat,
        "h_scalar",
        f"h_scalar must equal h, but at z = {_num(z)}{where} h_scalar gives {cut_repr(one)} "
        f"and h gives {_num(h)}",
    )


def _real(v: object) -> bool:
    try:  # an int too large for a float is no value h can have either
        return isinstance(v, numbers.Real) and math.isfinite(v)
    except (OverflowError, TypeError, ValueError):
        return False


def _scalar_values(
    sat: Saturation, xs: list[float], hz: np.ndarray, reached: np.ndarray
) -> np.ndarray:
    """``sat.h_scalar`` at each of ``xs``, or its refusal naming the first z where it raised
    or gave no finite real number. In one comprehension first: a package can reach a million
    coverage sums, and a guarded call per point cost seconds there."""
    try:
        got = [sat.h_scalar(x) for x in xs]
        # Each type once: an isinstance per value doubled the time.
        if all(issubclass(t, numbers.Real) for t in set(map(type, got))):
            values = np.asarray(got, dtype=np.float64)
            if np.all(np.isfinite(values)):
                return values
    except Exception:
        pass  # found again below, point by point, to name the z
    out = np.empty(len(xs))
    for i, x in enumerate(xs):
        try:
            one = sat.h_scalar(x)
        except Exception as exc:
            raise _refuse(
                sat, "h_scalar", f"h_scalar({_num(x)}) raised {type(exc).__name__}: {exc}"
            ) from None
        if not _real(one):
            _refuse_scalar(sat, x, one, float(hz[i]), bool(reached[i]))
        out[i] = float(one)
    return out


def _check_record(sat: object) -> Saturation:
    if not isinstance(sat, Saturation):
        raise SaturationError(
            f"register_saturation takes a Saturation, got {type(sat).__name__} "
            "[rule: saturation-record]"
        )
    name = sat.name
    if not isinstance(name, str) or not name.strip() or name != name.strip() or "," in name:
        # A comma would split the name in the lists messages and options give.
        raise SaturationError(
            "a saturation name must be a non-empty string without commas or surrounding "
            f"spaces, got {cut_repr(name)} [rule: saturation-name]"
        )
    for field in ("h", "h_scalar"):
        if not callable(getattr(sat, field)):
            raise _refuse(
                sat,
                "saturation-record",
                f"{field} must be callable, got {cut_repr(getattr(sat, field))}",
            )
    if not isinstance(sat.description, str):
        raise _refuse(
            sat,
            "saturation-record",
            f"description must be a string, got {cut_repr(sat.description)}",
        )
    cap = sat.cap
    if isinstance(cap, bool) or not isinstance(cap, numbers.Real) or not cap > 0:
        raise _refuse(
            sat,
            "saturation-record",
            f"cap must be a number > 0 (math.inf when h is unbounded), got {cut_repr(cap)}",
        )
    return sat


def register_saturation(saturation: Saturation, *, replace: bool = False) -> Saturation:
    """Add ``saturation`` to :data:`SATURATIONS`, so that packages may name it in
    ``objective.saturation``, after checking it (:func:`check_saturation` on
    [0, :data:`CHECK_RANGE`]): h(0) = 0, h nondecreasing and concave, which make F monotone and
    submodular, the property every exact engine's bound relies on, and h vectorised (a
    read-only 1-D or 2-D array in, a float array of its shape out, its input unchanged). A name
    that is not a non-empty string without commas, or a built-in one, is refused too; each
    refusal is a :class:`~memaudit_core.errors.SaturationError` naming the saturation and the
    rule.

    Registering the same functions again under a name (a notebook cell run twice, before or
    after :func:`unregister_saturation`) is accepted: same code, constants, defaults and the
    globals they read, same cap and description. Different functions under a name registered
    earlier in this process are refused unless ``replace=True``, which forgets the optima,
    compiled instances and scores cached under the name (they were computed with the old h);
    it is refused while an instance compiled with the old h is still referenced, since its
    cached values would mix the two.

    These checks are numeric, at sample points only: concavity of an arbitrary function
    cannot be proven from samples, and a convex dent between them passes (QA s46). A package
    naming the saturation has it checked again at coverage sums its units reach when it is
    compiled (:func:`check_saturation_on_package`), which still samples. So an OPT computed
    under a registered saturation is proven on the assumption that h is concave and
    nondecreasing, as the caller declares by registering it; every result under it says so
    in its notes (:func:`assumed_saturation_note`). Built-in saturations carry no such note.

    Examples
    --------
    >>> import math
    >>> import numpy as np
    >>> def h(z): return np.log1p(2 * np.asarray(z, float))
    >>> def h1(z): return math.log1p(2 * z)
    >>> sat = register_saturation(Saturation("doc_log2", h, h1, "h(z) = ln(1 + 2z)", math.inf))
    >>> "doc_log2" in SATURATIONS
    True
    >>> sat = register_saturation(Saturation("doc_log2", h, h1, "h(z) = ln(1 + 2z)", math.inf))
    >>> unregister_saturation("doc_log2")
    >>> try:
    ...     register_saturation(Saturation("cap1", h, h1, "mine", math.inf))
    ... except SaturationError as exc:
    ...     print(exc)
    saturation 'cap1' refused: the name is a built-in saturation's [rule: saturation-name-taken]
    """
    sat = _check_record(saturation)
    if sat.name in BUILTIN_SATURATIONS:
        raise _refuse(sat, "saturation-name-taken", "the name is a built-in saturation's")
    registered = dict.get(SATURATIONS, sat.name)
    earlier = registered if registered is not None else _RETIRED.get(sat.name)
    changed = earlier is not None and not same_saturation(earlier, sat)
    if changed and not replace:
        # QA s50: the advice was unregister_saturation(name), after which the same cell was
        # refused again (a retired name came back with identical functions only).
        where = (
            "a saturation of that name is already registered with other functions"
            if registered is not None
            else "the name was registered for other functions earlier in this process"
        )
        raise _refuse(
            sat,
            "saturation-name-taken",
            f"{where}: pass replace=True to replace them (optima cached under the name are "
            "then forgotten), or choose a new name",
        )
    check_saturation(sat, CHECK_RANGE)
    if changed:
        _forget_cached(sat.name)
    _RETIRED.pop(sat.name, None)
    dict.__setitem__(SATURATIONS, sat.name, sat)
    _CHECKED_UP_TO[sat.name] = CHECK_RANGE
    return sat


def _forget_cached(name: str) -> None:
    """Drop what was computed with the h registered as ``name`` before: the shared caches
    (compiled instances, optima, scores, plugin runs; every one registered in
    :mod:`~memaudit_core.saturation_caches`), which are keyed on the saturation's name only;
    an instance still referenced elsewhere refuses the replacement."""
    # Each module registers its caches where it keeps them (saturation_caches), so that a
    # new one cannot be left out of a list kept here.
    saturation_caches.forget(name)
    gc.collect()  # instances in reference cycles (views of views) go now, not later
    alive = len(_COMPILED.get(name, ()))
    if alive:
        raise SaturationError(
            f"saturation {name!r} refused: {alive} compiled instance(s) made with the h "
            "registered under that name before are still referenced, and their cached values "
            "would mix the two: delete them (del inst) before replacing it, or choose a new "
            "name [rule: saturation-name-taken]"
        )


def note_compiled(inst: object, name: str) -> None:
    """Remember that ``inst`` was built with the h now registered as ``name``, for as long
    as it lives (:func:`register_saturation` with ``replace=True`` refuses while it does)."""
    if name not in BUILTIN_SATURATIONS:
        _COMPILED.setdefault(name, weakref.WeakSet()).add(inst)


def _same_value(a: object, b: object, depth: int) -> bool:
    if a is b:
        return True
    if isinstance(a, types.FunctionType) and isinstance(b, types.FunctionType):
        return depth > 0 and _same_function(a, b, depth - 1)
    if type(a) is not type(b):
        return False
    if isinstance(a, int | float | complex | str | bytes | bool | type(None)):
        return a == b or (a != a and b != b)  # NaN constants are equal too
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(_same_value(x, y, depth) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k], depth) for k in a)
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    return False


def _global_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _same_function(f: object, g: object, depth: int = 3) -> bool:
    """Whether ``f`` and ``g`` compute the same thing: the same object, or Python functions
    with equal code whose defaults, closure cells and the globals their code names hold the
    same values (a notebook cell run again defines new but identical functions)."""
    if f is g:
        return True
    if not (isinstance(f, types.FunctionType) and isinstance(g, types.FunctionType)):
        return False
    if f.__code__ != g.__code__:
        return False
    if not _same_value(f.__defaults__, g.__defaults__, depth):
        return False
    if not _same_value(f.__kwdefaults__, g.__kwdefaults__, depth):
        return False
    cells_f, cells_g = f.__closure__ or (), g.__closure__ or ()
    try:
        if not _same_value(
            tuple(c.cell_contents for c in cells_f), tuple(c.cell_contents for c in cells_g), depth
        ):
            return False
    except ValueError:  # an empty cell
        return False
    missing = object()
    for name in _global_names(f.__code__):
        a = f.__globals__.get(name, missing)
        b = g.__globals__.get(name, missing)
        if not _same_value(a, b, depth):
            return False
    return True


def same_saturation(a: Saturation, b: Saturation) -> bool:
    """Whether registering ``b`` where ``a`` was registered changes nothing a result could
    depend on (:func:`_same_function` on both forms, equal cap and description)."""
    return (
        a.name == b.name
        and _same_value(a.cap, b.cap, 0)
        and a.description == b.description
        and _same_function(a.h, b.h)
        and _same_function(a.h_scalar, b.h_scalar)
    )


def unregister_saturation(name: str) -> None:
    """Undo :func:`register_saturation` (a built-in saturation cannot be removed).

    Examples
    --------
    >>> import math
    >>> import numpy as np
    >>> import memaudit_core as ma
    >>> root = ma.Saturation("doc_root", np.sqrt, math.sqrt, "h(z) = sqrt(z)", math.inf)
    >>> _ = ma.register_saturation(root)
    >>> "doc_root" in ma.SATURATIONS
    True
    >>> ma.unregister_saturation("doc_root")
    >>> "doc_root" in ma.SATURATIONS
    False
    >>> try:
    ...     ma.unregister_saturation("cap1")
    ... except ma.SaturationError as exc:
    ...     print(exc)
    saturation 'cap1' is built in and cannot be unregistered [rule: builtin]
    """
    if isinstance(name, str) and name in BUILTIN_SATURATIONS:
        raise SaturationError(
            f"saturation {name!r} is built in and cannot be unregistered [rule: builtin]"
        )
    try:
        sat = dict.__getitem__(SATURATIONS, name)
    except (KeyError, TypeError):
        raise UnknownNameError(f"no saturation {cut_repr(name)} is registered") from None
    dict.__delitem__(SATURATIONS, name)
    _CHECKED_UP_TO.pop(name, None)
    _RETIRED[name] = sat


def check_saturation_range(name: str, upper: float) -> None:
    """Check a registered saturation on [0, ``upper``] too when that reaches past the range
    it was checked on (a package whose units can collect coverage past :data:`CHECK_RANGE`);
    built-in saturations hold everywhere."""
    if name in BUILTIN_SATURATIONS or not upper > _CHECKED_UP_TO.get(name, math.inf):
        return
    check_saturation(get_saturation(name), float(upper))
    _CHECKED_UP_TO[name] = float(upper)


def check_saturation_on_package(name: str, points: np.ndarray) -> None:
    """Check a registered saturation again where a package's stores take it: on
    :func:`check_grid` of [0, the range it was checked on or the largest of ``points``]
    together with ``points``, coverage sums the package's units can reach (see
    :func:`~memaudit_core.compiled.reachable_coverage_sums`). Branch-and-bound prunes on a
    unit's marginal gain h(s + a) - h(s) not rising with s, so a convex dent between the
    registration's grid points but at sums this package reaches is refused here rather than
    certified around. Built-in saturations hold everywhere."""
    if name in BUILTIN_SATURATIONS:
        return
    top = float(np.max(points)) if points.size else 0.0
    upper = max(top, _CHECKED_UP_TO.get(name, CHECK_RANGE))
    check_saturation(get_saturation(name), upper, points)
    _CHECKED_UP_TO[name] = upper


#: What a result computed under a registered saturation says of its OPT (None for built-in).
ASSUMED_CONCAVE_NOTE = (
    "OPT under saturation {name!r} is proven on the assumption that its h is concave and "
    "nondecreasing with h(0) = 0, as its registration declares: MemAudit checked that only "
    "at sample points (a grid over [0, 1e6] and coverage sums this package reaches), not "
    "everywhere, so a dent between those points could make the certified value too low."
)


def assumed_saturation_note(name: str) -> str | None:
    """The caveat a result under saturation ``name`` carries when ``name`` is not built in:
    its OPT is proven only on the assumption that h is concave and nondecreasing, which
    :func:`register_saturation` checks at sample points only; None for a built-in one.

    >>> assumed_saturation_note("cap1") is None
    True
    >>> assumed_saturation_note("mine")  # doctest: +ELLIPSIS
    "OPT under saturation 'mine' is proven on the assumption that its h is concave ..."
    """
    if name in BUILTIN_SATURATIONS:
        return None
    return ASSUMED_CONCAVE_NOTE.format(name=name)


def _times_weight(x: float) -> str:
    return "its weight" if x == 1 else f"{x:.3g} x its weight"


def saturation_caption(name: str) -> str:
    """The one line a page shows beside F and OPT naming the package's saturation and its
    description (annotator QA s50: a log1p package's Overview never said which h its F used,
    so F and the values lost could not be read by hand).

    >>> saturation_caption("log1p")
    'F uses saturation log1p, h(z) = ln(1 + z): each evidence unit adds its weight x h(z), z \
its coverage summed over the store.'
    """
    sat = get_saturation(name)
    described = f", {sat.description.strip()}" if sat.description.strip() else ""
    return (
        f"F uses saturation {sat.name}{described}: each evidence unit adds its weight x h(z), "
        "z its coverage summed over the store."
    )


def saturation_glossary_entry(name: str) -> tuple[str, str]:
    """(term, meaning) defining the saturation ``name`` in a glossary: its description and
    what a unit covered once is worth, from its h and cap (so a registered one reads as true
    as a built-in one).

    >>> saturation_glossary_entry("cap1")
    ('cap1', "this package's saturation h(z) = min(1, z), z a unit's summed coverage: a unit \
is worth its weight once fully covered (z = 1), and no more")
    >>> saturation_glossary_entry("log1p")[1]
    "this package's saturation h(z) = ln(1 + z), z a unit's summed coverage: a unit covered \
once (z = 1) is worth 0.693 x its weight, and h has no cap: more coverage can add more"
    """
    sat = get_saturation(name)
    once = float(sat.h_scalar(1.0))
    if math.isfinite(sat.cap) and once >= sat.cap * (1 - CHECK_TOL):
        worth = f"a unit is worth {_times_weight(sat.cap)} once fully covered (z = 1), and no more"
    elif math.isfinite(sat.cap):
        worth = (
            f"a unit covered once (z = 1) is worth {_times_weight(once)}, and at most "
            f"{_times_weight(sat.cap)}"
        )
    else:
        worth = (
            f"a unit covered once (z = 1) is worth {_times_weight(once)}, and h has no cap: "
            "more coverage can add more"
        )
    formula = sat.description.strip() or f"h = {sat.name}"
    return sat.name, f"this package's saturation {formula}, z a unit's summed coverage: {worth}"


def registered_saturations() -> tuple[Saturation, ...]:
    """The saturations added with :func:`register_saturation`, in registration order."""
    return tuple(s for n, s in SATURATIONS.items() if n not in BUILTIN_SATURATIONS)


#: In a worker process: the parent's saturations that could not be sent to it (defined in a
#: notebook's ``__main__``, a lambda, ...), each with the parent's reason. Only a package
#: naming one is refused, with that reason (s56: one such saturation registered refused
#: every pool, whatever the packages used).
UNSENDABLE_SATURATIONS: dict[str, str] = {}


def install_saturations(
    sats: tuple[Saturation, ...], unsendable: tuple[tuple[str, str], ...] = ()
) -> None:
    """Give a worker process the saturations its parent registered (and checked): workers
    start from a fresh import, which knows the built-in ones only. ``unsendable``: (name,
    reason) of those the parent could not send (:data:`UNSENDABLE_SATURATIONS`)."""
    for sat in sats:
        if not dict.__contains__(SATURATIONS, sat.name):
            dict.__setitem__(SATURATIONS, sat.name, sat)
            _CHECKED_UP_TO[sat.name] = CHECK_RANGE
    UNSENDABLE_SATURATIONS.update(unsendable)


def get_saturation(name: str) -> Saturation:
    """The saturation named ``name``, or an :class:`UnknownNameError` listing the known ones
    (in a worker, for one its parent could not send, the parent's reason)."""
    try:
        return dict.__getitem__(SATURATIONS, name)
    except (KeyError, TypeError):  # TypeError: an unhashable name such as a list
        reason = UNSENDABLE_SATURATIONS.get(name) if isinstance(name, str) else None
        if reason is not None:
            raise MemAuditError(reason) from None
        raise UnknownNameError(
            f"unknown saturation {cut_repr(name)} (known: {', '.join(SATURATIONS)})"
        ) from None


__all__ = [
    "ASSUMED_CONCAVE_NOTE",
    "BUILTIN_SATURATIONS",
    "CHECK_RANGE",
    "SATURATIONS",
    "Saturation",
    "UNSENDABLE_SATURATIONS",
    "assumed_saturation_note",
    "check_saturation",
    "check_saturation_on_package",
    "check_saturation_range",
    "get_saturation",
    "install_saturations",
    "note_compiled",
    "register_saturation",
    "same_saturation",
    "registered_saturations",
    "saturation_caption",
    "saturation_glossary_entry",
    "unregister_saturation",
]
