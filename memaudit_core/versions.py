"""Version numbers of MemAudit's output shapes.

:data:`RESULT_VERSION` is the first key of every result model's ``to_dict()`` (solve results,
store evaluations, sweeps, curves, sensitivity analyses, the app's views), so a result saved
from a notebook says which shape it has. It goes up when a key changes meaning or goes away;
new keys do not change it. The CLI's ``--json`` objects carry their own
``json_output_version``.
"""

#: 2: ``EvidenceView``'s ``focus_unit`` is ``focus_unit_id`` (string ids end in ``_id``).
RESULT_VERSION = 2

__all__ = ["RESULT_VERSION"]
