"""The compact text specs the CLI reads and the library's suites parse too: number lists and
ranges (``2,4,8`` / ``0:20:5``), seed lists (``0-499,7``) and generator parameters
(``key=value``). Kept out of :mod:`memaudit_core.cli` so that the library never imports the
command line.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Sequence

from .errors import NORMAL_MIN_TEXT, UsageError, check_type, count_text
from .grids import MAX_RANGE_BUDGETS, budget_range

#: Most values a --budgets / --seeds list may expand to (a range like 0:1e9:1 would not fit
#: in memory; 10,000 budgets is already far beyond any plot).
MAX_LIST_VALUES = MAX_RANGE_BUDGETS

#: The ``solver`` names :func:`memaudit_core.solve` takes (also ``--solver``'s choices); kept
#: here, with no solver imported, so that the CLI's parser is built without numpy and scipy.
SOLVER_CHOICES = ("auto", "bnb", "milp", "enum", "brute")

#: The names of the candidate pools of :data:`memaudit_core.compiled.POOLS`, in its order
#: (a test holds the two equal), for the same reason.
POOL_NAMES = ("full", "no_validity", "generic")
#: Ablation method name -> candidate pool: the optimum over every pool but the full one.
ABLATIONS = {f"{pool}_opt": pool for pool in POOL_NAMES if pool != "full"}
#: Every name an audit takes for a candidate pool (``memaudit audit --pools``) -> the pool:
#: each pool, then its optimum's method name, as :data:`ABLATIONS` names them (``full_opt``
#: too). The audit checks against it and its help lists it (s53: the help left ``full_opt``
#: out).
AUDIT_POOL_NAMES = {
    **{pool: pool for pool in POOL_NAMES},
    **{f"{pool}_opt": pool for pool in POOL_NAMES},
}


class TooSmallNumber(ValueError):
    """A nonzero number written too small for a float (it would read as 0)."""


class TooLargeNumber(ValueError):
    """A number written in digits too large for a float (it would read as inf)."""


def read_number(text: str) -> float:
    """``float(text)``, refusing a nonzero number written too small to hold (it would read as
    0: CLI QA, ``--budget 1e-400`` ran at budget 0 without a word).

    Examples
    --------
    >>> read_number("2.5"), read_number("0e5")
    (2.5, 0.0)
    """
    if not text.strip().isascii() or "_" in text:
        # float() reads "1_000", full-width "１２" and Arabic-Indic digits (validation QA); a
        # budget is written in plain ASCII, as in the package file.
        raise ValueError(f"{text.strip()!r} is not a plain number (ASCII digits, no '_')")
    value = float(text)
    mantissa = text.strip().lower().split("e")[0]
    if value == 0 and any(ch in "123456789" for ch in mantissa):
        raise TooSmallNumber(f"{text.strip()!r} is too small to hold: it would read as 0")
    return value


#: A plain integer: an optional sign and ASCII digits (QA s40, defect 3: int() also read
#: "1_0" as 10 and Arabic-Indic digits, so one package went under several names).
_PLAIN_INT = re.compile(r"[+-]?[0-9]+")
#: A plain number: sign, ASCII digits, a decimal point and an exponent, nothing else (no
#: underscores, other digits, "nan" or "inf" words).
_PLAIN_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
#: The rules the messages quote.
PLAIN_INT_RULE = "ASCII digits 0-9 with an optional sign, no '_'"
PLAIN_NUMBER_RULE = (
    "ASCII digits 0-9 with an optional sign, decimal point and exponent, as 0.25 or 1e-3, no '_'"
)


def read_int(text: str) -> int:
    """The integer ``text`` writes in plain ASCII (:data:`PLAIN_INT_RULE`), else ValueError.

    Examples
    --------
    >>> read_int("12"), read_int("-0")
    (12, 0)
    """
    if not isinstance(text, str) or not _PLAIN_INT.fullmatch(text):
        raise ValueError(f"{text!r} is not a plain integer ({PLAIN_INT_RULE})")
    return int(text)


def read_plain_number(text: str) -> float:
    """The number ``text`` writes in plain ASCII (:data:`PLAIN_NUMBER_RULE`), ``-0`` read as
    0; ValueError otherwise (:class:`TooSmallNumber` / :class:`TooLargeNumber` for one too
    small / too large to hold).

    Examples
    --------
    >>> read_plain_number("2.5"), read_plain_number("-0"), read_plain_number("1e-3")
    (2.5, 0.0, 0.001)
    """
    if not isinstance(text, str) or not _PLAIN_NUMBER.fullmatch(text):
        raise ValueError(f"{text!r} is not a plain number ({PLAIN_NUMBER_RULE})")
    value = read_number(text)
    if math.isinf(value):
        # The rule admits no "inf" word, so inf here is an overflow: "1e400" was read as inf,
        # and a gen: link's key was rewritten to "update_rate=inf", which the link never said
        # (QA s47, defect 2).
        raise TooLargeNumber(f"{text!r} is too large to hold: it would read as {value}")
    # + 0.0: "-0" is the package of "0", not another one with the id "...=-0" (QA s40).
    return value + 0.0


def parse_number_list(text: str, what: str = "budgets") -> list[float]:
    """Parse ``"2,4,8"`` or ``"1:10"`` (step 1) or ``"0:20:5"`` into numbers.

    A range ``START:STOP:STEP`` follows :func:`memaudit_core.grids.budget_range`, the app's
    rule: it ends on STOP even when the steps miss it.

    Examples
    --------
    >>> parse_number_list("2,4,8.5")
    [2.0, 4.0, 8.5]
    >>> parse_number_list("0:20:5")
    [0.0, 5.0, 10.0, 15.0, 20.0]
    >>> parse_number_list("1:2:0.3")
    [1.0, 1.3, 1.6, 1.9, 2.0]
    """
    values: list[float] = []
    # The item each value came from: an out-of-range value is reported as typed (QA s43
    # recheck: "--budgets 1e309" said "got inf", as --budget did before it quoted the text).
    items: list[str] = []
    check_type(text, str, f"--{what}", "text such as '2,4,8' or '0:20:5'")
    if not text.strip():
        raise UsageError(f"--{what}: no values given (an empty list)")
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise UsageError(f"--{what}: empty item in {text!r}")
        try:
            if ":" in part:
                bits = [read_number(b) for b in part.split(":")]
                if len(bits) == 2:
                    bits.append(1.0)
                if len(bits) != 3:
                    raise ValueError
                start, stop, step = bits
                values.extend(
                    budget_range(
                        start,
                        stop,
                        step,
                        max_budgets=max(MAX_LIST_VALUES - len(values), 0),
                        what=f"--{what}: {part!r}",
                    )
                )
            else:
                values.append(read_number(part))
            items.extend([part] * (len(values) - len(items)))
        except ValueError as exc:
            raise UsageError(
                f"--{what}: {exc}"
                if isinstance(exc, TooSmallNumber)
                else f"--{what}: cannot read {part!r}; "
                "use a comma list like 2,4,8 or a range like 0:20:5"
            ) from None
    bad = [item for v, item in zip(values, items, strict=True) if not math.isfinite(v) or v < 0]
    if bad:
        raise UsageError(f"--{what}: values must be finite numbers >= 0, got {bad[0]!r}")
    tiny = [v for v in values if 0 < v < sys.float_info.min]
    if tiny:
        # The package rule "normal" (CLI QA: 1e-320 was swept and shown as 9.99989e-321).
        raise UsageError(
            f"--{what}: values must be 0 or at least {NORMAL_MIN_TEXT} (a subnormal float has lost "
            f"precision), got {tiny[0]!r}"
        )
    if not values:
        raise UsageError(f"--{what}: no values given")
    if len(values) > MAX_LIST_VALUES:
        raise UsageError(
            f"--{what}: {count_text(len(values))} values, more than {MAX_LIST_VALUES:,}"
        )
    # A repeated budget is one budget; + 0.0 turns -0 into 0 (echoed as "-0", CLI QA).
    return list(dict.fromkeys(v + 0.0 for v in values))


def parse_seeds(text: str, what: str = "--seeds", *, keep_repeats: bool = False) -> list[int]:
    """Parse ``"0-499"`` or ``"1,2,5"`` (or a mix) into seeds, each once; with
    ``keep_repeats`` a seed given twice is listed twice (so that a suite can say so).

    Examples
    --------
    >>> parse_seeds("0-3,7"), parse_seeds("0-2,1", keep_repeats=True)
    ([0, 1, 2, 3, 7], [0, 1, 2, 1])
    """
    seeds: list[int] = []
    check_type(text, str, what, "text such as '0-499' or '1,2,5'")
    if not text.strip():
        raise UsageError(f"{what}: no seeds given")
    for part in text.split(","):
        part = part.strip()
        if not part:  # as --budgets: ",," is usually a typo (CLI QA)
            raise UsageError(f"{what}: empty item in {text!r}")
        try:
            if "-" in part[1:]:
                a, b = part.split("-", 1) if not part.startswith("-") else (part, "")
                # Plain digits, as --seed and links (QA s40, defect 3: "1_0" read as 10).
                lo, hi = read_int(a.strip()), read_int(b.strip())
                if hi < lo:
                    raise UsageError(
                        f"{what}: {part!r} runs backwards; write A-B with A <= B [rule: seed-range]"
                    )
                if len(seeds) + hi - lo + 1 > MAX_LIST_VALUES:
                    raise UsageError(
                        f"{what}: {part!r} makes {count_text(hi - lo + 1)} seeds, more than "
                        f"the {MAX_LIST_VALUES:,} allowed"
                    )
                seeds.extend(range(lo, hi + 1))
            else:
                seeds.append(read_int(part))
                if seeds[-1] < 0:  # only a lone item can be: "-1-3" is not read as a range
                    # Named here, with the option and the text typed (QA s49: "--family
                    # memaudit-small:-1" said only "seed must be an integer >= 0, got -1").
                    from .generators import seed_message

                    raise UsageError(f"{what}: {seed_message(repr(part))}")
        except ValueError:
            raise UsageError(f"{what}: cannot read {part!r}; use A-B or a comma list") from None
    if not seeds:
        raise UsageError(f"{what}: no seeds given")
    given = seeds
    seeds = list(dict.fromkeys(seeds))
    if len(seeds) > MAX_LIST_VALUES:  # single seeds after ranges (library QA: 0-9999,10000)
        raise UsageError(f"{what}: {len(seeds):,} seeds, more than the {MAX_LIST_VALUES:,} allowed")
    return given if keep_repeats else seeds


def parse_params(items: Sequence[str]) -> dict[str, str]:
    """``--param key=value`` items into ``{key: value}`` (values stay text; the generator
    coerces them to its parameters' types).

    >>> parse_params(["n_experiences=20", "cost_rule = chars"])
    {'n_experiences': '20', 'cost_rule': 'chars'}
    """
    params: dict[str, str] = {}
    if isinstance(items, str):  # one item, not its letters (library QA)
        items = [items]
    for item in items or ():
        if not isinstance(item, str) or "=" not in item:
            raise UsageError(f"--param {item!r}: use key=value")
        key, value = item.split("=", 1)
        if not key.strip():
            raise UsageError(f"--param {item!r}: the key before '=' is empty")
        key = key.strip()
        if key in params and params[key] != value.strip():
            # CLI QA: the last of two silently won, as argparse does for a repeated option.
            raise UsageError(
                f"--param {key} given twice ({params[key]!r} and {value.strip()!r}); give it once"
            )
        params[key] = value.strip()
    return params


__all__ = [
    "MAX_LIST_VALUES",
    "parse_number_list",
    "parse_params",
    "parse_seeds",
    "read_int",
    "read_plain_number",
]
