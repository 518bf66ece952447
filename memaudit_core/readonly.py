"""Dicts that refuse changes: the registries (writers, saturations) and a frozen package's
coverage rows.

One base, so that every mutating method is closed in one place (review s46: three classes
each listed them). A ``dict`` subclass, so that JSON, ``dict(...)`` and ``isinstance(x,
dict)`` work as before.
"""

from __future__ import annotations

from typing import Any


class ReadOnlyDict(dict):
    """A dict whose every mutating method raises :meth:`refusal`; subclasses say why.

    >>> class Fixed(ReadOnlyDict):
    ...     def refusal(self) -> Exception:
    ...         return TypeError("fixed")
    >>> d = Fixed({"a": 1})
    >>> try:
    ...     d["a"] = 2
    ... except TypeError as exc:
    ...     print(exc, d)
    fixed {'a': 1}
    """

    def refusal(self) -> Exception:
        """The error a change raises."""
        return TypeError(f"{type(self).__name__} cannot be changed")

    def _refuse(self, *_: object, **__: object) -> None:
        raise self.refusal()

    __setitem__ = __delitem__ = _refuse  # type: ignore[assignment]
    pop = popitem = update = setdefault = clear = _refuse  # type: ignore[assignment]
    __ior__ = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        # A copy or pickle rebuilds through the constructor: the default for a dict subclass
        # would call the refused __setitem__.
        return (type(self), (dict(self),))
