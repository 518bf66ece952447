"""The family record shared by every generator module."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ParamError, cut_repr
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
    #: Per text parameter, the one way of writing a value (raising UsageError for one the
    #: family refuses), so that package keys, links and ``meta["params"]`` name one package
    #: alike (QA s43: "tombstone,atomic_fact" and "atomic_fact, tombstone" were three keys).
    canonical: dict[str, Callable[[Any], Any]] = field(default_factory=dict)
    #: Every parameter (defaults filled in, each in its type) -> the same, with each value
    #: that builds what the parameter's default builds (an automatic value given explicitly,
    #: a value the family cuts to the default's) written as the default, so that ids,
    #: ``meta["params"]`` and package keys name one package alike (QA s47: n_entities=2, what
    #: 0 picks for 30 experiences, was a second id for one package). Values the family
    #: refuses are passed through, for it to name. None: every value builds its own package.
    effective: Callable[[dict[str, Any]], dict[str, Any]] | None = None

    def defaults(self) -> dict[str, Any]:
        sig = inspect.signature(self.build)
        return {
            k: p.default
            for k, p in sig.parameters.items()
            if k != "seed" and p.default is not inspect.Parameter.empty
        }


def param_error(family: str, params: str | tuple[str, ...], message: str, rule: str) -> ParamError:
    """The error for a value ``family`` refuses for ``params``: ``FAMILY: MESSAGE [rule: RULE]``,
    the one shape of every family's parameter messages, carrying the parameters' names so that
    the CLI names the ``--param`` options typed (QA s49)."""
    names = (params,) if isinstance(params, str) else params
    return ParamError(f"{family}: {message} [rule: {rule}]", names)


def check_count(
    family: str, name: str, value: object, minimum: int, maximum: int | None = None
) -> int:
    """``value`` if it is an integer from ``minimum`` (to ``maximum``), else :func:`param_error`
    under the rule ``count-range``: the check of every family's count parameters."""
    low_ok = isinstance(value, int) and not isinstance(value, bool) and value >= minimum
    if low_ok and (maximum is None or value <= maximum):  # type: ignore[operator]
        return value  # type: ignore[return-value]
    what = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum}"
    raise param_error(
        family, name, f"{name} must be an integer {what}, got {cut_repr(value)}", "count-range"
    )


def _tag_value(value: Any) -> str:
    if isinstance(value, float):
        short = f"{value:g}"
        # CLI QA: 0.9999999 was tagged "1", the id of another package; :g only when exact.
        value = short if float(short) == value else repr(value)
    # Ids end up in file names and links: keep them to a safe alphabet. "-" is in it, since
    # a minus sign turned "+" made 1e-06 read as 1e+06.
    return "".join(ch if ch.isalnum() or ch in "._+-" else "+" for ch in str(value))


def variant_names(
    build: Callable[..., Any], params: dict[str, Any], shown: tuple[str, ...] = ()
) -> tuple[str, list[str]]:
    """The id suffix and title details naming the parameters that differ from the defaults.

    Packages generated with different parameters would otherwise share an id (and so a
    download file name and a row label in a sweep). ``shown`` lists parameters the id names
    already.

    Examples
    --------
    >>> def fam(seed=0, n=3, rate=0.25): ...
    >>> variant_names(fam, {"n": 3, "rate": 0.5})
    ('-rate=0.5', ['rate=0.5'])
    >>> variant_names(fam, {"n": 3, "rate": 0.25})
    ('', [])
    """
    sig = inspect.signature(build)
    changed = [
        (key, value)
        for key, value in params.items()
        if key not in shown
        and key in sig.parameters
        and sig.parameters[key].default is not inspect.Parameter.empty
        and value != sig.parameters[key].default
    ]
    return "".join(f"-{key}={_tag_value(value)}" for key, value in changed), [
        f"{key}={value}" for key, value in changed
    ]


def titled(name: str, details: list[str]) -> str:
    """``"name (a, b)"``, or ``name`` alone without details.

    >>> titled("update_chain", []), titled("memaudit-small", ["seed 3", "normal_count=5"])
    ('update_chain', 'memaudit-small (seed 3, normal_count=5)')
    """
    return f"{name} ({', '.join(details)})" if details else name
