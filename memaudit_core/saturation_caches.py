"""What :func:`~memaudit_core.saturations.register_saturation` with ``replace=True`` forgets.

Shared caches are keyed on a package's content hash, a fingerprint or a compiled instance,
which name a saturation but not its h: once the h registered under a name is replaced, what
they hold for that name was computed with the old h and must not be served. Each module that
keeps such a cache registers, next to the cache, what to drop (:func:`forget_on_replace`, or
:func:`instance_cache` for caches keyed weakly on compiled instances); the replacement runs
every registered hook (:func:`forget`). A module not imported yet has cached nothing.

Standard library only: :mod:`memaudit_core.plugins` registers its run cache here, and the
blind writers' worker imports that module without numpy.

Examples
--------
>>> runs = {("pkg", "my_h"): 1.0}
>>> @forget_on_replace
... def _drop(name):
...     for key in [k for k in runs if k[1] == name]:
...         del runs[key]
>>> forget("my_h")
>>> runs
{}
>>> _FORGET.remove(_drop)  # (this example's hook; a module's stays for the process)
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

#: One per cache that holds values computed under a saturation's h, called with its name.
_FORGET: list[Callable[[str], None]] = []


def forget_on_replace(hook: Callable[[str], None]) -> Callable[[str], None]:
    """Have ``hook(name)`` drop what its module cached under the saturation ``name`` whenever
    that name's h is replaced (usable as a decorator; returns ``hook``)."""
    _FORGET.append(hook)
    return hook


def instance_cache() -> weakref.WeakKeyDictionary:
    """A new cache keyed weakly on compiled instances, registered so that the entries of
    instances made with a replaced h go when it is replaced, not when their instance is
    collected (one in a reference cycle may outlive the replacement)."""
    cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def drop(name: str) -> None:
        # In a function of its own: a loop variable left in the caller's frame held the last
        # instance through its gc.collect(), and the replacement was refused as "still
        # referenced" (review s51).
        for inst in list(cache.keys()):
            if inst.saturation == name:
                cache.pop(inst, None)

    forget_on_replace(drop)
    return cache


def forget(name: str) -> None:
    """Run every registered hook for the saturation ``name`` (its h is being replaced)."""
    for hook in list(_FORGET):
        hook(name)
