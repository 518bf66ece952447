"""QA s39 (h6) plugin writers: a decorator name, a name with a comma, a slow writer.

Copied from QA's /tmp/qa39/h6/plug/h6named.py and h6w.py, renamed so that they take no name
another test file registers.
"""

from __future__ import annotations

import time

from memaudit_core.plugins import blind_writer


def _cheapest(view):
    kept, spent, seen = [], 0.0, set()
    for c in sorted(view.candidates, key=lambda c: (c.cost, c.id)):
        if c.experience not in seen and view.fits(spent, c.cost):
            kept.append(c.id)
            spent += c.cost
            seen.add(c.experience)
    return kept


@blind_writer("s39_cheap_first", "cheapest candidate per experience")
def named(view):
    return _cheapest(view)


@blind_writer("s39 has space, comma")
def comma(view):
    return _cheapest(view)


def slow(view):
    time.sleep(20)
    return []
