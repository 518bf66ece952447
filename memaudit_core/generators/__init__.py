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

import math
import numbers
import sys
import warnings
from collections.abc import Mapping
from typing import Any

from ..errors import ParamError, UnknownNameError, UsageError, check_names, check_params, cut_repr
from ..package import Package
from ..specs import (
    PLAIN_INT_RULE,
    PLAIN_NUMBER_RULE,
    TooLargeNumber,
    TooSmallNumber,
    read_int,
    read_plain_number,
)
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
        "The paper's base family: plain facts and preference updates (by default 3 and 2, "
        "7 experiences).",
        {"normal_count": "plain-fact experiences", "update_count": "preference updates"},
        lambda normal_count, update_count: 8 * normal_count + 21 * update_count,
    )
)
register_family(
    Family(
        "update_chain",
        paper.update_chain,
        False,
        "A chain of supersessions (seed-invariant): validity types carry the value.",
        {"length": "number of updates after the initial version"},
        lambda length: 14 * length,
    )
)
register_family(
    Family(
        "temporal_interval",
        paper.temporal_interval,
        False,
        "Interval facts plus closures that invalidate open intervals (seed-invariant).",
        {"intervals": "interval experiences", "closures": "closure experiences"},
        lambda intervals, closures: 15 * intervals + 14 * closures,
    )
)

# Other generator modules each expose FAMILY_RECORDS: list[Family].
for _module in (stress, event_graph, synthetic):
    for _family in _module.FAMILY_RECORDS:
        register_family(_family)


_KIND_WORDS = {int: "an integer", float: "a number"}
_TRUE_WORDS = ("1", "true", "yes")
_FALSE_WORDS = ("0", "false", "no")
#: How a flag is written as text (QA s43: "maybe" was refused under the plain-number rule).
BOOLEAN_RULE = f"{' / '.join(_TRUE_WORDS)} or {' / '.join(_FALSE_WORDS)}, any case"


def _coerce(value: Any, default: Any, name: str) -> Any:
    if isinstance(value, str) and default is not None and not isinstance(default, str):
        try:
            if isinstance(default, bool):
                if value.lower() in _TRUE_WORDS:
                    return True
                if value.lower() in _FALSE_WORDS:
                    return False
                raise ParamError(
                    f"parameter {name!r} must be true or false ({BOOLEAN_RULE}), got "
                    f"{cut_repr(value)} [rule: boolean]",
                    (name,),
                )
            # Plain ASCII only (QA s40, defect 3: int() / float() read "1_0" as 10 and
            # Arabic-Indic digits, so one package had several names; "-0" made an id of its
            # own): the same rule for --param and the app's gen: links.
            if isinstance(default, int):
                return read_int(value)
            if isinstance(default, float):
                return read_plain_number(value)
            return type(default)(value)
        except (TooSmallNumber, TooLargeNumber) as exc:
            raise ParamError(f"parameter {name!r}: {exc}", (name,)) from None
        except ValueError:
            kind = _KIND_WORDS.get(type(default), f"a {type(default).__name__}")
            rule = {int: f" ({PLAIN_INT_RULE})", float: f" ({PLAIN_NUMBER_RULE})"}.get(
                type(default), ""
            )
            raise ParamError(
                f"parameter {name!r} must be {kind}{rule}, got {cut_repr(value)} "
                "[rule: plain-number]",
                (name,),
            ) from None
    if isinstance(default, bool):
        # A flag is a bool, or 0 / 1 (library QA: integer_costs=0 was recorded as 0; 2, None
        # and [] were taken as true or false and recorded as given).
        if isinstance(value, bool):
            return value
        if isinstance(value, numbers.Real) and value in (0, 1):
            return bool(value)
        raise ParamError(
            f"parameter {name!r} must be true or false, got {cut_repr(value)} [rule: boolean]",
            (name,),
        )
    # Numbers of the neighbouring type mean the same value (library QA: length=3.0 was
    # refused while "3" was accepted); any other value of a numeric or text parameter is
    # refused here, for every family (generator QA s38: random_coverage took n_groups=2.5 to
    # a bare TypeError and recorded min_cover=2.5 for candidates covering 2 units).
    number = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if isinstance(default, int):
        if number and math.isfinite(value) and float(value).is_integer():
            return int(value)
        raise ParamError(
            f"parameter {name!r} must be an integer, got {cut_repr(value)} [rule: plain-number]",
            (name,),
        )
    if isinstance(default, float):
        if number:
            return float(value) + 0.0  # -0.0 is 0.0's package, not one more id (QA s40)
        raise ParamError(
            f"parameter {name!r} must be a number, got {cut_repr(value)} [rule: plain-number]",
            (name,),
        )
    if isinstance(default, str) and not isinstance(value, str):
        raise ParamError(
            f"parameter {name!r} must be text, got {cut_repr(value)} [rule: text]", (name,)
        )
    return value


#: Largest package :func:`generate` builds, in estimated candidates plus coverage entries
#: (a 200,000-turn event graph, the largest that family allows, is about 1.7 million; the
#: 20,000-turn one, a 36 MB file, about 170,000).
MAX_GENERATED_SIZE = 2_000_000


def estimated_size(family: str, **params: Any) -> float | None:
    """Estimated candidates plus coverage entries of ``generate(family, **params)``.

    None when the family has no estimate or a parameter is not a number (the family's own
    checks then report it).

    Examples
    --------
    >>> estimated_size("memaudit-small", normal_count=1000) > 8000
    True
    """
    fam = _family(family)
    return _estimate(fam, _clean_params(fam, params))


def _estimate(fam: Family, clean: dict[str, Any]) -> float | None:
    if fam.size is None:
        return None
    try:
        return float(fam.size(**{**fam.defaults(), **clean}))
    except (TypeError, ValueError):
        return None


def _family(family: str) -> Family:
    if not isinstance(family, str):
        raise UsageError(
            f"a family name is a string, got {type(family).__name__} {cut_repr(family)}"
        )
    if family not in FAMILIES:
        raise UnknownNameError(
            f"unknown family {cut_repr(family)} (known: {', '.join(sorted(FAMILIES))})"
        )
    return FAMILIES[family]


def coerce_params(family: str, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` as :func:`generate` reads them: each value in its parameter's type.

    QA s42 (defect 2): the app's package keys name one package by the values it is built
    with, so ``normal_count=03`` and ``normal_count=3`` must read alike. QA s43: so must text
    parameters, each written in its family's canonical form (:attr:`Family.canonical`), as
    ``candidate_types="tombstone, atomic_fact"`` and ``"atomic_fact,tombstone"``. QA s47: and
    a value building what its default builds is the default (:func:`effective_params`).

    Raises
    ------
    UnknownNameError
        For an unknown family or parameter.
    UsageError
        For a value its parameter's type does not take.

    Examples
    --------
    >>> coerce_params("memaudit-small", {"normal_count": "03"})
    {'normal_count': 3}
    >>> coerce_params("event_graph", {"candidate_types": "tombstone, atomic_fact"})
    {'candidate_types': 'atomic_fact,tombstone'}
    """
    return _clean_params(_family(family), check_params(params))


def _clean_params(fam: Family, params: dict[str, Any]) -> dict[str, Any]:
    defaults = fam.defaults()
    clean: dict[str, Any] = {}
    for key, value in params.items():
        if key not in defaults:
            known = ", ".join(sorted(defaults)) or "none"
            raise UnknownNameError(
                f"family {fam.name!r} has no parameter {cut_repr(key)} (known: {known})"
            )
        clean[key] = _coerce(value, defaults[key], key)
        if key in fam.canonical:
            clean[key] = fam.canonical[key](clean[key])
    return _effective(fam, clean)


def effective_params(family: str, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` (each already in its parameter's type) with every value that builds what
    its parameter's default builds written as the default (:attr:`Family.effective`).

    :func:`coerce_params` (and so :func:`generate`) applies this; it is for callers that
    coerce parameters one at a time (the app's package keys keep a value the family refuses
    as given). Names the family does not have, and refused values, are passed through.

    QA s47: ``n_entities=2``, what event_graph's automatic 0 picks for 30 experiences, and
    random_coverage's ``max_cover=10`` for 10 units, which the default 12 is cut to, each
    gave a package equal to the default's a second id, meta and app key.

    >>> effective_params("event_graph", {"n_experiences": 30, "n_entities": 2})
    {'n_experiences': 30, 'n_entities': 0}
    """
    return _effective(_family(family), params)


def _effective(fam: Family, params: dict[str, Any]) -> dict[str, Any]:
    if fam.effective is None:
        return dict(params)
    defaults = fam.defaults()
    resolved = fam.effective({**defaults, **{k: v for k, v in params.items() if k in defaults}})
    return {k: resolved[k] if k in defaults else v for k, v in params.items()}


def generate(
    family: str, seed: int = 0, *, max_size: float = MAX_GENERATED_SIZE, **params: Any
) -> Package:
    """Build a package of a registered family.

    Parameters given as strings (from the CLI) are converted to the type of the default.
    ``max_size`` caps :func:`estimated_size` (the app passes a smaller cap than the CLI).

    A seed-invariant family (``update_chain``, ``temporal_interval``) has one package, built
    at seed 0 whatever ``seed`` says, with a :class:`UserWarning` naming the seed unused when
    it is not 0 (:func:`package_seed`): as ``memaudit generate --seed`` and the app's
    ``gen:`` links build it. QA s51 m1: ``generate("update_chain", seed=5)`` recorded seed 5,
    so one id (``update_chain``) had one content hash here and another in the CLI and the app.

    Raises
    ------
    UnknownNameError
        For an unknown family or parameter.
    UsageError
        For a seed that is not an integer >= 0, a parameter value the family refuses, or a
        package larger than ``max_size``.

    Examples
    --------
    >>> from memaudit_core import generate, sweep
    >>> pkg = generate("update_chain", length=2)  # a family's parameters by name
    >>> pkg.id, len(pkg.experiences), len(pkg.candidates)
    ('update_chain-length=2', 3, 13)
    >>> packages = [generate("density_trap", seed=s) for s in (1, 2)]  # seeded: two draws
    >>> [(p.id, p.content_hash() == packages[0].content_hash()) for p in packages]
    [('density_trap-s1', True), ('density_trap-s2', False)]
    >>> [s.n for s in sweep(packages, [6], ["density"]).summary]
    [2]
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as said:  # seed-invariant: seed 0's package
    ...     warnings.simplefilter("always")
    ...     same = generate("update_chain", seed=5)
    >>> same.meta["seed"], same.content_hash() == generate("update_chain").content_hash()
    (0, True)
    >>> str(said[0].message).startswith("update_chain is seed-invariant")
    True
    >>> from memaudit_core.errors import UnknownNameError
    >>> try:
    ...     generate("update_chain", lenght=2)
    ... except UnknownNameError as exc:
    ...     print(exc)
    family 'update_chain' has no parameter 'lenght' (known: length)
    """
    fam = _family(family)
    clean = _clean_params(fam, params)
    if isinstance(max_size, bool) or not isinstance(max_size, numbers.Real) or max_size < 0:
        # Library QA: "x" raised a TypeError from the comparison below.
        raise UsageError(f"generate(): max_size must be a number >= 0, got {cut_repr(max_size)}")
    size = _estimate(fam, clean)
    if size is not None and size > max_size:
        given = ", ".join(f"{k}={cut_repr(v)}" for k, v in clean.items()) or "its defaults"
        raise ParamError(
            f"{family} with {given} would make about {size:,.0f} candidates and coverage "
            f"entries, more than the {max_size:,.0f} allowed here [rule: generator-size]",
            tuple(clean),
        )
    built_seed, note = package_seed(family, seed)
    if note is not None:
        # Said the Python way (the library prints nothing): the caller's line is named. The
        # text leaves the seed out, so Python's default filter says it once per call site,
        # not once per seed of a loop over seeds 0-99.
        warnings.warn(note, stacklevel=2)
    return fam.build(seed=built_seed, **clean)


def param_text(value: object) -> str:
    """A generator parameter's value as package keys, ``gen:`` links and sweep rows write it:
    ``true`` / ``false``, a float's shortest round-trip digits (-0.0 as 0.0), else ``str``.

    >>> [param_text(v) for v in (True, 0.25, -0.0, 3, "all")]
    ['true', '0.25', '0.0', '3', 'all']
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value + 0.0)
    return str(value)


def recorded_params(meta: Mapping[str, Any]) -> str | None:
    """The parameters a generated package records (``meta["params"]``, its defaults included)
    as one canonical text, ``name=value;name=value`` sorted by name and percent-encoded as
    package keys are; None for a package that records no generator parameters (a hand-made
    file). Two packages of one family built with other parameters have other texts, even when
    their ids or sources do not say so (QA s51 M2: a sweep row of ``random_coverage:0`` read
    the same with and without ``--param n_groups=8``).

    >>> from memaudit_core import generate
    >>> recorded_params(generate("memaudit-small", normal_count=8).meta)
    'normal_count=8;update_count=2'
    >>> recorded_params({"generator": "x"}) is None
    True
    """
    from urllib.parse import quote

    params = meta.get("params") if isinstance(meta, Mapping) else None
    if not isinstance(meta.get("generator"), str) or not isinstance(params, Mapping):
        return None
    return ";".join(
        f"{quote(str(k), safe='')}={quote(param_text(v), safe=',.-_')}"
        for k, v in sorted(params.items(), key=lambda kv: str(kv[0]))
    )


def parse_recorded_params(text: str) -> dict[str, str]:
    """:func:`recorded_params`'s text back as ``{name: value text}`` (values decoded).

    >>> parse_recorded_params("candidate_types=atomic_fact%3Bx;n=3")
    {'candidate_types': 'atomic_fact;x', 'n': '3'}
    """
    from urllib.parse import unquote

    out: dict[str, str] = {}
    for item in filter(None, text.split(";")):
        name, _, value = item.partition("=")
        out[unquote(name)] = unquote(value)
    return out


def package_file_stem(package: Package) -> str:
    """The name a generated package's file is saved under, without ``.json``: its id, which
    names the seed of a seeded family (``memaudit-small-s4``) and none of a seed-invariant one
    (one package, seed 0's); ``-seed{N}`` is added only for an id that does not name it.

    QA s51 m6: the Generator's download was ``memaudit-small-s4-...-seed4.json`` and
    ``update_chain-length-6-seed0.json``.

    >>> package_file_stem(generate("memaudit-small", seed=4, normal_count=5))
    'memaudit-small-s4-normal_count=5'
    >>> package_file_stem(generate("update_chain", length=6))
    'update_chain-length=6'
    """
    meta = package.meta if isinstance(package.meta, Mapping) else {}
    family, seed = meta.get("generator"), meta.get("seed")
    fam = FAMILIES.get(family) if isinstance(family, str) else None
    if fam is None or not fam.seeded or not isinstance(seed, int) or isinstance(seed, bool):
        return package.id
    if f"-s{seed}" in {f"-{part}" for part in package.id.split("-")}:
        return package.id
    return f"{package.id}-seed{seed}"


def generate_command(package: Package, output: str | None = None) -> str | None:
    """The ``memaudit generate`` command that builds ``package`` from what its ``meta``
    records (family, seed, parameters), writing ``output`` when given; None for a package
    whose meta names no registered family or parameters it has.

    The parameters that differ from their defaults are given (one ``--param`` each, in the
    text :func:`param_text` writes, as the app's package keys hold them), and ``--seed`` for
    a seeded family. Each argument is quoted for a POSIX shell where it needs it. QA s51 m3:
    the Generator page named no CLI equivalent of the package it previews.

    >>> generate_command(generate("memaudit-small", seed=4, normal_count=5), "small.json")
    'memaudit generate memaudit-small --seed 4 --param normal_count=5 -o small.json'
    >>> generate_command(generate("event_graph", seed=2, candidate_types="tombstone, summary"))
    'memaudit generate event_graph --seed 2 --param candidate_types=summary,tombstone'
    >>> generate_command(generate("update_chain"))
    'memaudit generate update_chain'
    """
    import shlex

    meta = package.meta if isinstance(package.meta, Mapping) else {}
    family, seed, params = meta.get("generator"), meta.get("seed"), meta.get("params", {})
    fam = FAMILIES.get(family) if isinstance(family, str) else None
    if fam is None or not isinstance(params, Mapping):
        return None
    defaults = fam.defaults()
    if any(name not in defaults for name in params):
        return None
    params = _effective(fam, dict(params))
    words = ["memaudit", "generate", family]
    if fam.seeded:
        if not isinstance(seed, int) or isinstance(seed, bool):
            return None
        words += ["--seed", str(seed)]
    for name, value in sorted(params.items()):
        default = defaults[name]
        same = (
            value is default
            if isinstance(default, bool)
            else (type(value) is type(default) and value == default)
        )
        if not same:
            words += ["--param", f"{name}={param_text(value)}"]
    if output is not None:
        words += ["-o", output]
    return " ".join(shlex.quote(word) for word in words)


def package_seed(family: str, seed: object) -> tuple[int, str | None]:
    """The seed the one package of ``family`` at ``seed`` is built with, and a note when it
    is not ``seed``: a seed-invariant family has one package, built at seed 0.

    QA s40 (defect 2): ``generate update_chain --seed 5`` wrote a file recording seed 5, with
    another content hash than seed 0's for the same instance, which the app's form (its seed
    box fixed at 0) could not make, and a link ``gen:update_chain:5`` opened it while Preview
    switched to seed 0. The CLI's ``generate``, the app's links and suite sources
    (:func:`memaudit_core.suites.parse_family_spec`: ``update_chain:0-3`` is one source,
    ``update_chain:0``, swept once with a note, QA s44) use this, and so does :func:`generate`
    (QA s51 m1: it kept the seed it was given, so ``generate("update_chain", 3)`` had another
    content hash than the CLI's and the app's package of the same id), which warns with the
    note.

    Examples
    --------
    >>> package_seed("update_chain", 5)[0], package_seed("memaudit-small", 5)
    (0, (5, None))
    """
    fam = _family(family)
    checked = check_seed(seed)
    if fam.seeded or checked == 0:
        return checked, None
    return 0, (
        f"{family} is seed-invariant: it does not use the seed, so its one package is built "
        "at seed 0"
    )


def check_seed(seed: object) -> int:
    """``seed`` as an int, or a :class:`UsageError` for anything but an integer >= 0.

    Examples
    --------
    >>> check_seed(3), check_seed(4.0)
    (3, 4)
    """
    # Python's Random(-1) draws what Random(1) draws: a negative seed would be a copy of
    # another package under a different id. 1.7 would be truncated, "3" is a typing slip.
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        # Not through math.isfinite: an int past float's range (over 308 digits) raised
        # OverflowError there (QA s48: an internal error in the CLI, a crash in the app).
        limit = sys.get_int_max_str_digits()
        if limit and abs(seed) >= 10**limit:
            raise UsageError(_too_many_digits(f"more than {limit:,}", limit))
        if seed < 0:
            raise UsageError(seed_message(cut_repr(seed)))
        return int(seed)
    if (
        not isinstance(seed, numbers.Real)
        or isinstance(seed, bool)
        or not math.isfinite(seed)
        or seed != int(seed)
        or seed < 0
    ):
        raise UsageError(seed_message(cut_repr(seed)))
    return int(seed)


#: The rule every seed is read under (:func:`check_seed`, the CLI's ``--seed`` and seed lists).
SEED_RULE = "seed"


def seed_message(shown: str) -> str:
    """The refusal of a seed shown as ``shown`` (the value, or the text typed, quoted), under
    :data:`SEED_RULE`: one wording for the library, ``--seed``, ``--seeds`` and ``--family
    NAME:SEEDS`` (QA s49: ``--seed -1`` named neither the option nor a rule).

    >>> seed_message("'-1'")
    "seed must be an integer >= 0, got '-1' [rule: seed]"
    """
    return f"seed must be an integer >= 0, got {shown} [rule: {SEED_RULE}]"


def read_seed(text: str) -> int:
    """The seed a text of ASCII digits 0-9 writes (a link's ``gen:FAMILY:SEED``), or a
    :class:`UsageError` for one with more digits than a package file can record.

    QA s48: a link whose seed had 5,000 digits crashed the Generator page on ``int()``'s
    ValueError; leading zeros do not count (``007`` is seed 7).

    >>> read_seed("007")
    7
    """
    digits = text.lstrip("0")
    limit = sys.get_int_max_str_digits()
    if limit and len(digits) > limit:
        raise UsageError(_too_many_digits(f"{len(digits):,}", limit))
    return check_seed(int(digits or "0"))


def _too_many_digits(count: str, limit: int) -> str:
    # Python writes no int of more digits as text (sys.get_int_max_str_digits), so no package
    # file or key could record the seed.
    return (
        f"seed has {count} digits; a seed has at most {limit:,}, as many as a package file "
        "can record [rule: seed-digits]"
    )


def check_seeds(seeds: object, what: str) -> list[int]:
    """``seeds`` as a list of checked seeds (:func:`check_seed`), refusing a lone number.

    Library QA s43: ``family_band(family, 100, ...)``, meant as 100 seeds, built a band from
    seed 100 alone; a list is asked for, as :func:`~memaudit_core.errors.check_budget_list`
    asks for one of budgets.

    >>> check_seeds(range(3), "family_band()")
    [0, 1, 2]
    """
    if isinstance(seeds, numbers.Real):
        hint = f"for one seed: [{cut_repr(seeds)}]"
        if not isinstance(seeds, bool) and math.isfinite(seeds) and seeds == int(seeds) > 1:
            hint += f"; for seeds 0..{int(seeds) - 1}: range({int(seeds)})"
        raise UsageError(f"{what}: expected a list of seeds, got {cut_repr(seeds)} ({hint})")
    return [check_seed(s) for s in check_names(seeds, "seeds", strings=False)]
