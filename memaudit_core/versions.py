"""Version numbers of MemAudit's output shapes.

:data:`RESULT_VERSION` is the first key of every result model's ``to_dict()`` (solve results,
store evaluations, sweeps, curves, sensitivity analyses, the app's views), so a result saved
from a notebook says which shape it has. It goes up when a key changes meaning or goes away;
new keys do not change it. Next to it, ``result_kind`` says which model a saved result is
(:data:`memaudit_core.results.RESULT_KINDS`), so :func:`memaudit_core.read_result` can read it
back. The CLI's ``--json`` objects carry their own ``json_output_version``
(:data:`JSON_OUTPUT_VERSION`).
"""

#: 2: ``EvidenceView``'s ``focus_unit`` is ``focus_unit_id`` (string ids end in ``_id``).
RESULT_VERSION = 2

#: Version of the CLI's ``--json`` output shapes, first key of every object the CLI prints:
#: raised when a field changes meaning or goes away (added fields do not raise it).
JSON_OUTPUT_VERSION = 1

#: The wording of a Compare view's explanation, written beside it since session 46 (QA s46: a
#: view saved by s41/s42, whose unit lists were worded otherwise, was refused as edited). Read
#: back, a view of this wording must give word for word the explanation its numbers give; an
#: older one (no ``explanation_wording``) is held to its headline paragraph, whose wording has
#: not changed since views read back. Raised whenever ``explain._explain`` words a paragraph
#: differently, so that files saved before are not refused for the new words. 2 (s53): an id
#: wider than 80 terminal columns is cut by columns (``errors.id_text``), so a CJK id of 41 to
#: 80 characters, named whole by wording 1, is cut. 3 (s56): an id is cut by the columns it
#: prints (escapes count), and an id taking no column is escaped, so an id holding zero-width
#: characters or only combining marks is named otherwise than by wording 2.
EXPLANATION_WORDING = 3

__all__ = ["EXPLANATION_WORDING", "JSON_OUTPUT_VERSION", "RESULT_VERSION"]
