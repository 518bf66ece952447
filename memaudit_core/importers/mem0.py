"""Mem0 exports -> an external :class:`~memaudit_core.package.Store`.

Accepted shapes (the detected one is recorded in ``store.meta["format_version"]``):

===================  =========================================================================
``1.0``              ``get_all()`` / ``search()`` output as a bare list of memory items
``1.1``              ``{"results": [...], "relations": [...]}`` (graph store enabled, v1.x)
``2``                ``{"results": [...]}`` whose items carry v2-only fields
                     (``attributed_to``, ``expiration_date``)
``1.1-or-2``         ``{"results": [...]}`` without anything that tells v1.1 and v2 apart
``platform``         a paginated Platform page ``{"count", "next", "previous", "results"}``
``add``              ``add()`` output: items carrying an ``event`` (bare list or ``results``)
``qdrant``           a scroll of the vector store: a list of points ``{"id", "payload",
                     "vector"}`` (EXPORT_FORMATS 1.8 recommends it for full dumps)
``openmemory``       an OpenMemory backup: the zip ``POST /api/v1/backup/export`` returns
                     (``memories.json`` and/or ``memories.jsonl.gz`` inside), a bare
                     ``memories.json``, or a ``memories.jsonl`` / ``memories.jsonl.gz`` file
                     (see "OpenMemory backups" below)
===================  =========================================================================

A list of pages (``[{"results": [...]}, ...]``, with or without ``count`` / ``next``) is no
Mem0 output: it is refused (rule ``mem0-shape``, at ``$``) with the fix, joining every page's
``results`` into one list.

An item needs ``id`` and ``memory`` (the text). A raw vector-store payload is accepted too:
a Qdrant point's ``payload``, or the payload's keys at the item's top level; its text is
``data``, and, as Mem0 itself splits a payload on read, every payload key that is not one of
Mem0's own (``data``, ``hash``, ``created_at``, ``updated_at``, ``user_id``, ``agent_id``,
``run_id``, ``actor_id``, ``role``, ``attributed_to``, ``expiration_date``,
``text_lemmatized``, ``memory_type``) is user metadata, so a ``dia_id`` next to ``data`` is a
provenance link. ``created_at`` / ``updated_at`` are normalised to UTC ISO-8601 (0.1.x wrote
US/Pacific offsets, 1.x+ UTC, the Platform ``Z``); the original strings stay in ``meta``. Mem0
writes them as strings: a number or a boolean, in an item or a history row, is refused (rule
``type``; 12345 would otherwise read as 1970), and a string that does not parse is kept as
text (``meta["created_at_raw"]``) and said.
``metadata`` and the promoted scope keys (``user_id``, ``agent_id``, ``run_id``, ``actor_id``,
``role``, ...) are kept in ``meta``; ``hash`` is dropped (it is the md5 of the text), after
memories with the same text are reported in ``store.meta["warnings"]`` (both kept: the store
holds both); memories sharing a hash but not their text are not repeats: a warning names them
and the one(s) whose text the hash is not the md5 of (a stale hash). ``score`` (search
results) becomes the memory's salience.

Graph ``relations`` are not memories: live ones are reported in ``store.meta["relations"]``
(``source|relationship|target`` strings). A relation with ``valid: false`` (Mem0 1.x soft
delete, with ``invalidated_at``) is not live: it is listed in
``store.meta["invalidated_relations"]`` (``relation`` and ``invalidated_at``) and counted in a
warning. ``add()``'s graph result (``{"added_entities", "deleted_entities"}``), alone or under
``relations``, is refused with a message saying so (rule ``mem0-relations``): it lists one
call's changes, not the graph.

Mem0's raw LLM decision JSON (``{"memory": [{"id", "text", "event", "old_memory"}]}``, or its
entries in a list or under ``results``) is refused (rule ``mem0-shape``): Mem0 does not save
it, and its ids are small integers mapped back to the stored ids, so they name no memory.
An item without ``memory`` (or a payload's ``data``) that holds its text under another key
(``text``, ``content`` ...) is refused naming that key and the rename to make.

``add()`` results (``event`` ``ADD`` / ``UPDATE`` / ``DELETE``, and ``NONE``, the raw
decision JSON's name for an unchanged memory): an ``ADD``, ``UPDATE`` or ``NONE`` memory is
live (an ``UPDATE``'s ``previous_memory`` is kept in its ``meta`` and counted in
``superseded_versions``); a ``DELETE`` is **deleted**, as a history ``DELETE`` is: listed in
``store.meta["deleted"]`` (``from: "add event"``), not kept. A warning says the file is add()
output, which holds only the memories that call touched. Any other ``event`` value is
refused.

Expiration (``expiration_date``, v2 / Platform): the export says nothing of *when* it was
taken, so its own latest readable time (its items' ``created_at`` / ``updated_at``, those of
the memories it marks deleted too) stands in for "now": the export was taken no earlier. A
history's times do not: the history is another file (``history()`` rows or ``history.db``),
read when it was dumped, and it can run past the export, as an ``UPDATE`` dated after the
export's time for its memory shows (QA s51: such a history's last time marked a memory
expired while the same import said the export was older than the history). A memory whose
``expiration_date`` falls before that time (a date-only value lasts through that day; naive
times are compared as UTC) is marked ``status="expired"`` (an active one; a superseded one
keeps that status) and ``meta["expired_before_export"] = True``; it stays in the store and
counts like an active one (Mem0 v2 hides expired memories from ``get_all`` / ``search``
unless ``show_expired=True``). A warning says how many memories carry an
``expiration_date``, how many of them had expired, the time compared with and this rule
(and, when a history runs later than the export, that its times were not used). An export
with no readable time of its own marks none expired, and says so.

History (``history=`` a JSON list of rows, a ``{"results": [...]}`` page, or Mem0's SQLite
``history.db``; and/or a ``"history"`` key next to ``"results"`` in the export -- when both
are there, both are read and rows identical in the two are counted once, which a warning says).
``history.db`` is read in the current schema (``old_memory``, ``new_memory``, ``created_at``,
``updated_at``, ...; a migrated table's extra ``new_value`` is ignored) or in Mem0's first one
(``prev_value``, ``new_value``, ``timestamp``), whose columns are read as Mem0's own migration
copies them: ``prev_value`` is the old text, ``new_value`` the new one and ``timestamp`` the
row's time (``store.meta["history"]`` names the schema read); JSON rows with those keys (the
first ``history()`` output) are read alike. A table with ``old_memory`` and ``new_value`` but
no ``new_memory`` (no Mem0 release is known to have written one) is read with ``new_value`` as
the new text:

- every row needs a string ``memory_id`` and an ``event`` in ``ADD`` / ``UPDATE`` / ``DELETE``
  / ``NONE``, in the JSON history as in ``history.db`` (whose rows are located as
  ``history[row N]``, N counted in time order);
- a history page whose ``next`` is set (or whose ``count`` exceeds its rows) is read, and a
  warning says it is one page only, as for a paginated export;
- a memory whose last event is ``DELETE`` (or ``is_deleted``, which must be true, false, 0 or
  1, in the JSON history as in ``history.db``) is **deleted**: Mem0 removes it
  from the vector store, so it is *not* part of the store as kept. It is listed in
  ``store.meta["deleted"]`` (id, last text, ``deleted_at``, ``status: "deleted"``).
  ``deleted_at`` is the DELETE row's ``updated_at``, null when it has none: the row's
  ``created_at`` is the memory's creation time, not the deletion's (EXPORT_FORMATS 1.4).
  Events are read in time order; a memory with a history row that has no readable time
  keeps the file's order of its rows (``history.db``: its row order), and a warning says so.
  A ``DELETE`` / ``is_deleted`` row is always the memory's last event, whatever its time:
  Mem0 never reuses an id, and its own ``delete()`` writes that row with NULL times.
- every row ``id`` names one row: two rows with one id but different content are refused
  (rule ``unique-id``), in one file or across the export's history and a history file;
- a memory the export holds whose last event is an ``UPDATE`` to another text, dated after
  the export's ``updated_at`` (else ``created_at``), is kept as the export shows it, and a
  warning names it, both texts and both times: the export is older than the history.
- ``UPDATE`` rewrites a memory in place: the memory stays (``status`` active) and its earlier
  texts are listed in its ``meta["history"]``. ``store.meta["superseded_versions"]`` counts
  the texts replaced by an ``UPDATE`` that are no longer in the store: over the memories the
  store holds, each ``UPDATE`` row (and each add() ``UPDATE`` item) counts once unless the text
  it replaced (``old_memory``, else the text the row before wrote; add(): ``previous_memory``)
  is the text the store holds for that memory. An ``UPDATE`` dated after the export's time for
  the memory was not applied to the export, so it does not count (its replaced text is
  usually the text kept); nor do the ``UPDATE`` rows of a memory the export does not hold (a
  deleted one is listed in ``deleted``, a missing one in the truncation warning), nor those
  of a memory whose ``lifecycle_state`` is ``deleted``.
- a Platform memory with ``replaced_by`` (or ``lifecycle_state`` ``superseded``) is
  **superseded**: it is still in the store, so it is kept and marked ``status="superseded"``.
  ``lifecycle_state`` ``deleted`` is treated like a ``DELETE``; other states are kept as the
  memory's status, count as part of the store, and are listed in ``store.meta["warnings"]``.
- history that names memories the export does not hold (and that were not deleted) is reported
  in ``store.meta["warnings"]``: the export is probably truncated (``get_all`` defaults to 100
  items in v1 and 20 in v2; a Qdrant ``scroll`` to 10 points); when none of the memories the
  history names is in the export, the warning says instead that the history does not seem to
  be this export's.

OpenMemory backups (Mem0's self-hosted server, EXPORT_FORMATS 1.7; read by
:mod:`memaudit_core.importers.openmemory`), recognised by content and name under the same
format ``mem0``: any zip; a file named ``*.jsonl`` or ``*.jsonl.gz`` unless its first line is
an object without ``content`` (Mem0 items as JSON Lines keep the "wrap the lines in one array"
hint); JSON Lines or a gzip file of another name whose first line is a backup row (``id``,
``content``, ``state``); a JSON object with ``memories`` next to ``export_meta`` /
``status_history`` / ``memory_categories`` / ``apps``:

- a zip is read in memory (nothing is extracted to disk); its members are found by base name
  in any folder, as OpenMemory's own import finds them. A zip holding neither member is
  refused (rule ``openmemory-zip``), as are members beyond the limits of every zip read
  (:mod:`memaudit_core.importers._zip`, rules ``zip-size`` and ``zip-ratio``: a zip bomb is
  never inflated in full), a gzip stream that unpacks to more than
  :data:`~memaudit_core.importers.openmemory.MAX_MEMBER_BYTES` (rule ``size``) and a member
  that cannot be read (rules ``zip``, ``gzip``);
- when both members are there, ``memories.json`` is read (the richer one: ``deleted_at``,
  ``archived_at``, app and category tables, status history) and ``memories.jsonl.gz`` is read,
  checked and compared with it: ids, texts or states that differ are named in a warning;
- problems are located by member and JSON path (``memories.json:$.memories[2].state``) or by
  member and line (``memories.jsonl.gz:line 3.content``; a bare JSON Lines file ``line 3``);
- each memory needs a string ``id`` (unique) and a string ``content``; ``metadata`` is an
  object or null; ``state`` must be one of OpenMemory's ``MemoryState`` values ``active``,
  ``paused``, ``archived``, ``deleted`` (rule ``openmemory-state``; case is ignored);
- ``active`` is a live memory. ``deleted`` is **deleted**, as a Mem0 history ``DELETE`` is: not
  part of the store as kept, listed in ``store.meta["deleted"]`` (id, text, ``deleted_at``
  -- ``updated_at`` for a row without one, as in ``memories.jsonl.gz`` --,
  ``from: "openmemory state"``). ``paused`` and ``archived`` memories are kept with that status
  and counted as part of the store, as other ``lifecycle_state`` values are: OpenMemory keeps
  them in its database and vector store, but its list and search serve only ``active`` ones
  (``check_memory_access_permissions``), which a warning says, naming them;
- the state decides, not ``deleted_at``: OpenMemory re-adds a deleted memory by setting its
  state back to ``active`` and leaves ``deleted_at`` set, so such a memory is kept, and a
  warning names it. A memory without a state is read as OpenMemory's own import reads it
  (active), or as deleted when ``deleted_at`` is set, and a warning says so;
- ``created_at`` / ``updated_at`` / ``archived_at`` / ``deleted_at`` are normalised to UTC
  (the originals kept in ``meta`` when they differ; one that is not a string is refused,
  rule ``type``); ``metadata`` is kept in ``meta`` and its
  provenance keys (``dia_id``, ``unit_ids``, ...) are the memory's links, as for Mem0 items;
  ``user_id`` and ``app_id`` are kept in ``meta`` as written, with the app's ``name``
  (``meta["app"]``), the category ids and names (``meta["category_ids"]``,
  ``meta["categories"]``: ``category_ids`` and ``memory_categories`` rows, named by the
  ``categories`` table) and the memory's ``status_history`` (``meta["state_history"]``);
- ``store.meta`` adds ``openmemory_members`` (read), ``openmemory_read`` (the one the store
  comes from), ``openmemory_states`` (count per state), ``openmemory_user`` and
  ``export_meta``; a backup exported with ``app_id`` / ``from_date`` / ``to_date`` filters is
  said to hold only part of the user's memories. A Mem0 ``history`` is not read with a backup.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

from ..errors import PackageError, cut_repr, id_text
from ..package import Package, Store, _child_path, json_type
from . import openmemory
from ._common import (
    Collector,
    Record,
    build_store,
    clean_meta,
    common_path,
    decode_text,
    fail,
    finite_number,
    first_few,
    links_from,
    load_json_file,
    normalise_time,
    note,
    parse_json,
    read_bytes,
    time_is_text,
    unit_refs_from,
)

#: The message for a time that is not a string (rule ``type``).
_TIME_TYPE = "a Mem0 time is an ISO-8601 string (or null)"
_ROW_TIMES = ("created_at", "updated_at", "timestamp")  # timestamp: the first schema

_PROMOTED = (
    "user_id",
    "agent_id",
    "run_id",
    "actor_id",
    "role",
    "app_id",
    "session_id",
    "attributed_to",
    "expiration_date",
    "categories",
    "structured_attributes",
    "synthesized",
    "lifecycle_state",
    "replaced_by",
    "immutable",
)
_V2_FIELDS = ("attributed_to", "expiration_date")
_SKIP = {"hash", "text_lemmatized", "embedding", "vector"}
_SQLITE_MAGIC = b"SQLite format 3\x00"
_EVENTS = ("ADD", "UPDATE", "DELETE", "NONE")
#: How ``store.meta["history"]`` names each ``history.db`` layout read.
_SCHEMA_NAMES = {
    "current": "current schema",
    # QA s40 defect 2: Mem0's first table (mem0/memory/storage.py, 2024).
    "first": "Mem0's first schema: prev_value, new_value, timestamp",
    "new_value": "new_value schema",
}
#: Mem0's own payload keys (EXPORT_FORMATS 1.2): every other payload key is user metadata.
_PAYLOAD_RESERVED = frozenset(
    {
        "data",
        "hash",
        "created_at",
        "updated_at",
        "user_id",
        "agent_id",
        "run_id",
        "actor_id",
        "role",
        "attributed_to",
        "expiration_date",
        "text_lemmatized",
        "memory_type",
    }
)
#: Keys of an exported item around a flattened payload that are not user metadata either.
_ITEM_KEYS = frozenset({"id", "metadata", "score", "vector", "embedding", "payload", "event"})
#: Qdrant's ``scroll`` returns 10 points unless told otherwise.
_SCROLL_DEFAULT = 10


def _is_point(item: Any) -> bool:
    """A Qdrant point (``{"id", "payload", "vector"}``) rather than a get_all item."""
    return isinstance(item, dict) and "payload" in item and not {"memory", "data"} & set(item)


def _is_page(item: Any) -> bool:
    """A page of results (``{"results": [...]}``, a Platform page with ``count`` / ``next`` /
    ``previous`` too) rather than a memory: it has none of a memory's keys."""
    return (
        isinstance(item, dict)
        and isinstance(item.get("results"), list)
        and not {"memory", "data", "id", "payload", "event"} & set(item)
    )


def _is_history_row(item: Any) -> bool:
    """A row of Mem0's history (``history()`` / ``history.db``) rather than a memory."""
    return (
        isinstance(item, dict)
        and "memory_id" in item
        # prev_value / new_value: Mem0's first history() rows (QA s40 defect 2).
        and bool({"new_memory", "old_memory", "prev_value", "new_value"} & item.keys())
        and "memory" not in item
    )


def _refuse_history(items: list[Any], base: str, col: Collector) -> None:
    # Importer QA: history rows given as the export got one "missing the memory text" per
    # row and no word that they are a history.
    if items and all(_is_history_row(it) for it in items):
        fail(
            col.source,
            base,
            "format-hint",
            "these are Mem0 history rows (memory_id, old_memory, new_memory, event), not "
            "memories: give them as the export's history, beside the get_all() export "
            '(CLI --history, library history=, the app\'s "Mem0 history" upload)',
        )


def _is_memory_item(item: Any) -> bool:
    """A memory of an export (get_all item, raw payload or Qdrant point), not a history row:
    it has the memory's text (or a payload) and no ``memory_id``."""
    return (
        isinstance(item, dict)
        and "memory_id" not in item
        and bool({"memory", "data", "payload"} & item.keys())
    )


def _refuse_export_as_history(
    items: list[Any], base: str, col: Collector, *, file: bool, same: bool = False
) -> None:
    """Refuse memories given as the history (``file``: a history file, else the export's
    ``history`` key), with the hint alone: the mirror of :func:`_refuse_history`. QA s51
    defect 4: an export given as the history got one "history row needs a string
    'memory_id'" per memory (up to 1,000 lines for a real export). ``same``: the history file
    holds the export's own bytes."""
    if not items or not all(_is_memory_item(it) for it in items):
        return
    n = f"{len(items)} {'memory' if len(items) == 1 else 'memories'}"
    if not file:
        message = (
            f"the export's 'history' holds {n} ('id' and 'memory'), not history rows "
            "(memory_id, old_memory, new_memory, event): put its history() rows there, or "
            "remove the key"
        )
    else:
        message = (
            f"this file, given as the history, is a Mem0 export ({n} with 'id' and "
            "'memory'), not history rows "
            "(memory_id, old_memory, new_memory, event): "
            + (
                "it is the export itself, given again as its history; give as the history "
                "the history() rows or the history.db Mem0 wrote with it, or no history"
                if same
                else "give it as the export (CLI --external FILE --format mem0, or memaudit "
                "import mem0 FILE; in the app, the export upload), and as the history the "
                "history() rows or the history.db Mem0 wrote with it"
            )
        )
    fail(col.source, base, "format-hint", message)


def _is_decision(item: Any) -> bool:
    """An entry of Mem0's raw LLM decision JSON (``{"id", "text", "event", "old_memory"}``),
    not an add() result item (``{"id", "memory", "event"}``)."""
    return (
        isinstance(item, dict)
        and "event" in item
        and "text" in item
        and not {"memory", "data", "payload"} & set(item)
    )


def _refuse_decision_json(path: str, col: Collector) -> NoReturn:
    """Refuse Mem0's raw LLM decision JSON (EXPORT_FORMATS 1.3), located at ``path``.

    QA s49: ``{"memory": [...]}`` got the generic "needs a 'results' array"; its ids are the
    small integers Mem0 gives the LLM and maps back to uuids, so they name no stored memory
    and cannot be joined with a history or another export.
    """
    fail(
        col.source,
        path,
        "mem0-shape",
        'this looks like Mem0\'s raw LLM decision JSON ({"memory": [{id, text, event, '
        "old_memory}]}), which Mem0 does not save: its ids are small integers ('0', '1', ...) "
        "that Mem0 maps back to the real memory ids, so they cannot be trusted as ids; export "
        "the memories with get_all() (or give the results add() returned, whose ids are the "
        "stored ones)",
    )


def _detect(doc: Any, col: Collector) -> tuple[list[Any], str, str, list[Any], Any]:
    """(items, base path, version, relations, embedded history)."""
    if isinstance(doc, list):
        _refuse_history(doc, "$", col)
        if doc and all(_is_page(it) for it in doc):
            # QA s39 defect 6: a list of Platform pages got one "has no id" per page; QA s43:
            # so did pages saved without count / next ({"results": [...]} each). No Mem0 call
            # writes such a list (EXPORT_FORMATS 1.2: one page is one object), so it is
            # refused with the join rather than joined behind the user's back.
            platform = any({"count", "next", "previous"} & set(it) for it in doc)
            kind = "Platform pages ({count, next, results})" if platform else "result pages"
            last = f"$[{len(doc) - 1}].results"
            fail(
                col.source,
                "$",
                "mem0-shape",
                f"this is a list of {len(doc)} {kind} ($[0].results"
                + (f" ... {last}" if len(doc) > 1 else "")
                + "), not of memories: join every page's 'results' into one list and give "
                'that (a bare list, or {"results": [...]})',
                f"{len(doc)} page{'s' if len(doc) != 1 else ''}",
            )
        for i, it in enumerate(doc):
            if _is_decision(it):
                _refuse_decision_json(f"$[{i}]", col)
        if any(_is_point(it) for it in doc):
            return doc, "$", "qdrant", [], None
        if any(isinstance(it, dict) and it.get("event") is not None for it in doc):
            return doc, "$", "add", [], None
        return doc, "$", "1.0", [], None
    if not isinstance(doc, dict):
        fail(
            col.source,
            "$",
            "mem0-shape",
            "a Mem0 export must be a list of memories or an object with 'results'",
            json_type(doc),
        )
    if "results" not in doc:
        if {"added_entities", "deleted_entities"} & set(doc):
            # QA s49: the docstring promised this refusal; only a 'relations' key holding it
            # got it, a bare graph add() result the generic "needs a 'results' array".
            fail(
                col.source,
                "$",
                "mem0-relations",
                "this is the graph result of one add() call ('added_entities' / "
                "'deleted_entities'): one call's graph changes, not the graph, and no "
                'memories; export the memories with get_all() ({"results": [...]}, with '
                "'relations' when the graph store is on)",
                sorted(doc)[:8],
            )
        if isinstance(doc.get("memory"), list):
            _refuse_decision_json("$", col)
        if openmemory.looks_like_trimmed_backup(doc):
            # QA s40 defect 4: a memories.json without export_meta got only "needs a
            # 'results' array". Refused with a hint, not read: export_meta says whether the
            # backup was filtered (app_id / from_date / to_date) and so holds only part of
            # the user's memories, and a memories.json member without it is refused in a zip
            # too (rule openmemory-shape).
            fail(
                col.source,
                "$",
                "format-hint",
                "this looks like an OpenMemory backup's memories.json (rows with id, content, "
                "state) without its 'export_meta' (nor status_history, memory_categories or "
                "apps): give the backup as OpenMemory exported it (the zip of POST "
                "/api/v1/backup/export, its memories.json or memories.jsonl.gz), or put its "
                "'export_meta' back next to 'memories'",
                sorted(doc)[:8],
            )
        fail(
            col.source,
            "$",
            "mem0-shape",
            "a Mem0 export object needs a 'results' array (get_all / search output)",
            sorted(doc)[:8],
        )
    items = doc["results"]
    if not isinstance(items, list):
        fail(col.source, "$.results", "type", "'results' must be an array", json_type(items))
    _refuse_history(items, "$.results", col)
    for i, it in enumerate(items):
        if _is_decision(it):
            _refuse_decision_json(f"$.results[{i}]", col)
    relations = doc.get("relations") or []
    if isinstance(relations, dict) and {"added_entities", "deleted_entities"} & set(relations):
        # QA s25: add()'s graph result got only "'relations' must be an array".
        col.add(
            "$.relations",
            "mem0-relations",
            "'relations' holds 'added_entities' / 'deleted_entities': this looks like add() "
            "output (one call's graph changes), not the graph; export the relations with "
            "get_all() (an array of {source, relationship, target}) or remove the key",
            sorted(relations)[:8],
        )
        relations = []
    elif not isinstance(relations, list):
        col.add("$.relations", "type", "'relations' must be an array", json_type(relations))
        relations = []
    if any(isinstance(it, dict) and it.get("event") is not None for it in items):
        version = "add"
    elif any(_is_point(it) for it in items):
        version = "qdrant"
    elif {"count", "next", "previous"} & set(doc):
        version = "platform"
    elif "relations" in doc:
        version = "1.1"
    elif any(isinstance(it, dict) and any(k in it for k in _V2_FIELDS) for it in items):
        version = "2"
    else:
        version = "1.1-or-2"
    return items, "$.results", version, relations, doc.get("history")


# --------------------------------------------------------------------------- history


def _row_ok(row: dict[str, Any], path: str, col: Collector, absent: str) -> bool:
    """Check one history row (JSON or ``history.db``), adding located problems; True if fine."""
    for key in ("memory_id", "event"):
        if not isinstance(row.get(key), str) or not row.get(key):
            col.add(
                f"{path}.{key}", "required", f"history row needs a string '{key}'", row.get(key)
            )
            return False
    if row["event"].upper() not in _EVENTS:
        col.add(
            f"{path}.event", "mem0-event", "event must be ADD, UPDATE, DELETE or NONE", row["event"]
        )
        return False
    flag = row.get("is_deleted")
    if flag is not None and not (isinstance(flag, bool) or flag in (0, 1)):
        # "false" or "0" (a TEXT 'false' in history.db too) would read as deleted (CLI QA).
        col.add(f"{path}.is_deleted", "type", f"must be true, false, 0 or 1 (or {absent})", flag)
        return False
    # As an item's times: a number would order the memory's events as of 1970 (QA s46).
    return all([time_is_text(col, f"{path}.{key}", row.get(key), _TIME_TYPE) for key in _ROW_TIMES])


def _history_rows_from_sqlite(path: Path) -> tuple[list[dict[str, Any]], str]:
    """The rows of ``history.db`` (located, checked) and its layout, a key of
    :data:`_SCHEMA_NAMES`."""
    source = str(path)
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        fail(source, "$", "sqlite", f"cannot open the SQLite history database: {exc}")
    try:
        try:
            cols = [r[1] for r in con.execute("PRAGMA table_info(history)")]
        except sqlite3.DatabaseError as exc:
            fail(source, "$", "sqlite", f"not a readable SQLite database: {exc}")
        if not cols:
            fail(source, "history", "mem0-history", "the database has no 'history' table")
        missing = {"memory_id", "event"} - set(cols)
        if missing:
            fail(
                source,
                "history",
                "mem0-history",
                f"the 'history' table lacks column(s) {', '.join(sorted(missing))}",
                cols,
            )
        new_col = (
            "new_memory" if "new_memory" in cols else ("new_value" if "new_value" in cols else None)
        )
        # QA s40 defect 2: Mem0's first history table was (id, memory_id, prev_value,
        # new_value, event, timestamp, is_deleted) (mem0/memory/storage.py before the
        # old_memory / new_memory rename); its rows were read without their old texts and
        # times. Mem0's own migration copies prev_value to old_memory and timestamp to
        # created_at and updated_at; so does this reader.
        first_schema = "prev_value" in cols and "old_memory" not in cols
        wanted = [
            c
            for c in ("id", "memory_id", "old_memory", "event", "created_at", "updated_at")
            if c in cols
        ]
        if first_schema:
            wanted.append("prev_value AS old_memory")
        if "timestamp" in cols and not {"created_at", "updated_at"} & set(cols):
            wanted += ["timestamp AS created_at", "timestamp AS updated_at"]
        wanted += [c for c in ("is_deleted", "actor_id", "role") if c in cols]
        select = ", ".join(
            wanted + ([f"{new_col} AS new_memory"] if new_col else []) + ["rowid AS _rowid"]
        )
        # rowid breaks ties (QA s39 defect 1): rows of equal or NULL times keep the order
        # Mem0 wrote them in, not whatever order SQLite returns.
        time_cols = [c for c in ("created_at", "updated_at") if c in cols]
        if not time_cols and "timestamp" in cols:
            time_cols = ["timestamp"]
        order = ", ".join([*time_cols, "rowid"])
        try:
            cur = con.execute(f"SELECT {select} FROM history ORDER BY {order}")
            names = [d[0] for d in cur.description]
            rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
        except sqlite3.DatabaseError as exc:
            fail(source, "history", "sqlite", f"cannot read the 'history' table: {exc}")
    finally:
        con.close()
    if first_schema:
        schema = "first"
    elif new_col == "new_value":
        # old_memory beside new_value (no new_memory): a layout no Mem0 release is known to
        # have written (its migrated table has both new_memory and new_value); read alike.
        schema = "new_value"
    else:
        schema = "current"
    col = Collector(source)
    for i, row in enumerate(rows):
        row["_path"] = f"history[row {i + 1}]"
        # The rules of the JSON rows (QA s25: a NULL memory_id became a memory "None", and a
        # NULL or unknown event was read as no event at all).
        _row_ok(row, row["_path"], col, "NULL")
    col.raise_if_any()
    return rows, schema


#: Names of a SQLite history; such a file that is not SQLite is still read if it is JSON.
_SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


def _refuse_non_database(path: Path, data: bytes) -> None:
    """Refuse a ``.db`` (``.sqlite``, ``.sqlite3``) history that is neither SQLite nor JSON.

    QA s47: garbage named h.db was "$ (line 1, column 1): not valid JSON", as though JSON had
    been meant. A file that starts like JSON is left to the JSON reader, which locates its
    errors.
    """
    if path.suffix.lower() not in _SQLITE_SUFFIXES:
        return
    start = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if start in (b"[", b"{"):
        return
    what = "the file is empty" if not data else "no SQLite header"
    fail(
        str(path),
        "$",
        "file-type",
        f"not a SQLite history database ({what}) and not JSON: give Mem0's history.db "
        "(SQLite) or its history rows as JSON",
    )


def _history_rows(
    history: Any, col: Collector, warnings: list[str], export_raw: bytes | None = None
) -> tuple[list[dict[str, Any]], str]:
    """Rows from a path or already-decoded JSON, and a description of where they came from
    (``export_raw``: the export's bytes, to say so when the history file is the export)."""
    if isinstance(history, str | Path):
        path = Path(history)
        data = read_bytes(path)
        if data.startswith(_SQLITE_MAGIC):
            rows, schema = _history_rows_from_sqlite(path)
            kind = f"sqlite history.db ({_SCHEMA_NAMES[schema]})"
        else:
            _refuse_non_database(path, data)
            same = data == export_raw
            hcol = Collector(str(path))
            rows = _json_history(
                load_json_file(path),
                hcol,
                "$",
                warnings,
                f"history file {path}",
                file=True,
                same=same,
            )
            hcol.raise_if_any()
            kind = "json history"
        # Warnings are printed under the export's name: a row of another file says which.
        for row in rows:
            row["_path"] = f"{path}: {row['_path']}"
        return rows, kind
    rows = _json_history(history, col, "$.history", warnings, "history")
    return rows, "embedded history"


def _json_history(
    data: Any,
    col: Collector,
    base: str,
    warnings: list[str],
    what: str,
    *,
    file: bool = False,
    same: bool = False,
) -> list[dict[str, Any]]:
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        # QA s25: one page of /v1/memories/events/ was read as the whole history, so the
        # deletions on the other pages were missed without a word.
        warnings.extend(
            _page_warning(
                data,
                base,
                f"the {what} is one page of a paginated history",
                "rows",
                "read the whole history (deletions and updates on other pages are missed)",
            )
        )
        data, base = data["results"], f"{base}.results"
    if not isinstance(data, list):
        col.add(base, "mem0-history", "history must be a list of rows", json_type(data))
        return []
    _refuse_export_as_history(data, base, col, file=file, same=same)
    rows = []
    for i, row in enumerate(data):
        path = f"{base}[{i}]"
        if not isinstance(row, dict):
            col.add(path, "type", "each history row must be an object", json_type(row))
            continue
        if not _row_ok(row, path, col, "absent"):
            continue
        out = dict(row)
        if "new_memory" not in out and "new_value" in out:
            out["new_memory"] = out.pop("new_value")
        # QA s40 defect 2: Mem0's first get_history() rows name the old text prev_value and
        # the time timestamp; mapped as Mem0's own migration maps them.
        if "old_memory" not in out and "prev_value" in out:
            out["old_memory"] = out.pop("prev_value")
        if "timestamp" in out and "created_at" not in out and "updated_at" not in out:
            out["created_at"] = out["updated_at"] = out.pop("timestamp")
        out["_path"] = path
        rows.append(out)
    return rows


def _page_warning(
    page: dict[str, Any], path: str, what: str, items: str, purpose: str
) -> list[str]:
    """``[warning]`` when a ``{"count", "next", "results"}`` page (at ``path``) is one of
    several, else []."""
    count, next_page = page.get("count"), page.get("next")
    held = len(page["results"])
    more = isinstance(count, int) and not isinstance(count, bool) and count > held
    if not (next_page or more):
        return []
    return [
        note(
            path,
            f"{what}: it holds {held} "
            + (f"of {count} {items}" if more else items)
            + (f" (next page: {next_page})" if next_page else "")
            + f"; join every page's 'results' to {purpose}",
            "paginated",
        )
    ]


def _row_key(row: dict[str, Any]) -> str:
    """A row's content, for finding one row given both in the export and in a history file."""
    fields = {k: v for k, v in row.items() if not k.startswith("_") and v is not None}
    if "is_deleted" in fields:
        fields["is_deleted"] = bool(fields["is_deleted"])  # history.db's 0/1, JSON's bool
    fields["event"] = str(fields.get("event", "")).upper()
    return json.dumps(fields, sort_keys=True, default=str)


def _is_delete_row(row: dict[str, Any]) -> bool:
    """A history row that deletes its memory (``DELETE`` or ``is_deleted``)."""
    return str(row.get("event", "")).upper() == "DELETE" or bool(row.get("is_deleted"))


def _check_row_ids(rows: list[dict[str, Any]], col: Collector) -> None:
    """Refuse a history row id used by two rows of different content (rule unique-id).

    QA s39 defect 3: two different rows sharing id ``h1`` (in one file, or one in the export's
    history and one in the history file) were both read, unsaid. Identical rows given in both
    sources are the one row, counted once by the caller.
    """
    first: dict[str, tuple[str, str]] = {}
    for row in rows:
        row_id = row.get("id")
        if row_id is None:
            continue  # the old schema's rows may have no id
        key = str(row_id)
        content = _row_key(row)
        if key not in first:
            first[key] = (content, row["_path"])
        elif first[key][0] != content:
            col.add(
                f"{row['_path']}.id",
                "unique-id",
                f"history row id {cut_repr(row_id)} is also the id of {first[key][1]}, a row "
                "with other content: each history row needs its own id",
                row_id,
            )


def _newer_history(
    mem_id: str, text: Any, export_iso: str | None, last: dict[str, Any], ipath: str
) -> str | None:
    """A warning when the memory's last history event is an UPDATE to another text, dated
    after the export's time for it: the export predates the history (QA s39 defect 2: the
    newer text was ignored unsaid). The export's text is kept: it is the store exported."""
    if str(last.get("event", "")).upper() != "UPDATE":
        return None
    new = last.get("new_memory")
    if new is None or new == text:
        return None
    at_iso = _event_time(last)
    at, exported = _as_utc(at_iso), _as_utc(export_iso)
    if at is None or exported is None or at <= exported:
        return None
    return note(
        ipath,
        f"history ({last['_path']}) updates memory {mem_id!r} to "
        f"{cut_repr(new, 80)} at {_said_time(at_iso)}, after the export's time for it "
        f"({_said_time(export_iso or '')}), whose text is {cut_repr(text, 80)}: the export is "
        "older than the history; the export's text is kept (export the store again to score the "
        "newer one)",
        "history-newer",
    )


def _replaced_texts(events: list[dict[str, Any]], text: Any, export_iso: str | None) -> int:
    """How many texts a kept memory's history shows were replaced and are not in the store.

    An ``UPDATE`` counts unless its replaced text (``old_memory``, else the text the previous
    event wrote) is ``text``, the text the store holds, or the row is dated after
    ``export_iso`` (the export's ``updated_at`` / ``created_at`` for the memory): an UPDATE
    after the export's time was not applied to the exported store (QA s40 defect 1: the text
    it replaced is the one the store still holds, yet it was counted).
    An UPDATE whose replaced text is unknown counts (Mem0 writes UPDATE only for a changed
    text), as does one without a readable time (nothing says it came later).
    """
    exported = _as_utc(export_iso)
    count = 0
    previous: Any = None
    for row in events:
        old = row.get("old_memory")
        if old is None:
            old = previous
        if row.get("new_memory") is not None:
            previous = row["new_memory"]
        if str(row.get("event", "")).upper() != "UPDATE" or (old is not None and old == text):
            continue
        at = _as_utc(_event_time(row))
        if at is not None and exported is not None and at > exported:
            continue
        count += 1
    return count


def _event_time(row: dict[str, Any]) -> str:
    """When the row's event happened, "" when unknown. A DELETE row's ``created_at`` is the
    memory's creation time and its ``updated_at`` the deletion's (EXPORT_FORMATS 1.4): without
    ``updated_at`` the deletion time is unknown (QA s43: it was given as the creation time)."""
    updated = normalise_time(row.get("updated_at")).iso
    if updated or _is_delete_row(row):
        return updated or ""
    return normalise_time(row.get("created_at")).iso or ""


def _row_time(row: dict[str, Any]) -> str:
    """A time the row carries (``updated_at``, else ``created_at``; "" when none), whatever
    its event: a DELETE row's ``created_at`` still happened before the export was taken."""
    return (
        normalise_time(row.get("updated_at")).iso or normalise_time(row.get("created_at")).iso or ""
    )


def _said_time(iso: str) -> str:
    """A normalised ISO time as a message shows it: a naive one as written, marked as read as
    UTC. QA s39 round 2 defect 5: "2023-06-20T10:04:00" was shown as "...+00:00", a guessed
    zone presented as fact (EXPORT_FORMATS: never guess a zone)."""
    dt = datetime.fromisoformat(iso)
    return iso if dt.tzinfo else f"{iso}, with no zone: read as UTC to compare"


def _as_utc(iso: str | None) -> datetime | None:
    """A normalised ISO time as an aware datetime (naive ones read as UTC, for comparing)."""
    if not iso:
        return None
    dt = datetime.fromisoformat(iso)
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


# --------------------------------------------------------------------------- import


def load_mem0_store(
    path: str | Path,
    *,
    cost_rule: str = "words",
    store_id: str | None = None,
    package: Package | None = None,
    history: str | Path | list | None = None,
) -> Store:
    """Read a Mem0 export (and optional history) into a store.

    Parameters
    ----------
    path : str or Path
        The JSON export (``get_all`` / ``search`` / ``add`` output, a Platform page or a
        Qdrant scroll), or an OpenMemory backup (zip, ``memories.json``, JSON Lines).
    cost_rule : str
        A name in :data:`memaudit_core.costs.COST_RULES`.
    store_id : str, optional
        Default ``"mem0"``.
    package : Package, optional
        When given, provenance links in ``metadata`` (``dia_id``, ``unit_ids``, ``session_id``,
        ... see :data:`memaudit_core.importers._common.LINK_KEYS`) become coverage; a unit
        key's link that names nothing in the package is refused (rule ``known-unit``).
    history : path or list, optional
        History rows (JSON) or a ``history.db`` SQLite file. Read together with a ``history``
        the export itself carries.

    Returns
    -------
    Store

    Raises
    ------
    PackageError
        Wrong shape, missing ids or texts, unknown events, unreadable history; each problem
        located.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "m.json"
    >>> _ = f.write_text(json.dumps({"results": [{"id": "m1", "memory": "Lives in Lisbon"}]}))
    >>> s = load_mem0_store(f)
    >>> s.meta["format_version"], s.memories[0].cost
    ('1.1-or-2', 3.0)
    """
    source = str(path)
    raw = read_bytes(path)
    backup = openmemory.container_kind(raw, Path(path))
    doc: Any = None
    if backup is None:
        text = decode_text(raw, source)
        try:
            doc = parse_json(text, source)
        except PackageError:
            # A memories.jsonl saved under another name (an upload's .txt).
            if not openmemory.looks_like_rows(text):
                raise
            backup = "jsonl"
    if backup is not None or openmemory.is_backup_doc(doc):
        if history is not None:
            # QA s40 defect 5: the reason given was the backup's status_history, which a
            # memories.jsonl(.gz) does not have. What holds for every backup: each row's state
            # says which memories are live, paused, archived or deleted.
            fail(
                source,
                "$",
                "mem0-history",
                "this is an OpenMemory backup: each of its memories carries its own state "
                "(active, paused, archived or deleted), which says what the store holds, so a "
                "Mem0 history is not read with it: leave out the history",
            )
        return openmemory.load_openmemory_store(
            source,
            raw=raw,
            kind=backup,
            doc=doc if backup is None else None,
            cost_rule=cost_rule,
            store_id=store_id,
            package=package,
        )
    col = Collector(source)
    items, base, version, relations, embedded = _detect(doc, col)
    warnings: list[str] = []

    rows: list[dict[str, Any]] = []
    history_parts: list[str] = []
    if embedded is not None:
        rows, kind = _history_rows(embedded, col, warnings)
        history_parts.append(f"{kind}: {len(rows)} row(s)")
    if history is not None:
        given, kind = _history_rows(history, col, warnings, raw)
        history_parts.append(f"{kind}: {len(given)} row(s)")
        if embedded is not None:
            # QA s25: the export's own history was dropped without a word when a history
            # file was given too. Both are read; a row in both counts once.
            seen = {_row_key(r) for r in rows}
            fresh = [r for r in given if _row_key(r) not in seen]
            repeated = len(given) - len(fresh)
            history_parts.append(f"merged, {repeated} identical row(s) counted once")
            warnings.append(
                note(
                    "$.history",
                    f"the export carries its own history ({len(rows)} row(s)) and a history "
                    f"file was given too ({len(given)} row(s)): both are read, {repeated} "
                    "row(s) found in both counted once",
                    "history-both",
                )
            )
            rows = rows + fresh
        else:
            rows = given

    _check_row_ids(rows, col)
    col.raise_if_any()
    by_id: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_id.setdefault(str(row.get("memory_id")), []).append(row)
    timeless: list[str] = []
    timeless_row: str | None = None  # the first such memory's first row, for the note's path
    for mem_id, events in by_id.items():
        # QA s39 round 2 defect 4: Mem0's own delete writes its row with NULL times; such a
        # row is placed last below, so its order is certain and it alone is no cause for
        # the "taken in the file's order" warning (a real history.db lists every deleted
        # memory so).
        if all(_event_time(row) for row in events if not _is_delete_row(row)):
            events.sort(key=_event_time)
        else:
            # A row without a time sorted first would put a DELETE before the ADD it ends
            # (QA s20d): the file's own order is the only evidence left, and it is said.
            timeless.append(repr(mem_id))
            timeless_row = timeless_row or events[0]["_path"]
            if all("_rowid" in row for row in events):
                # history.db sorts NULL times first: its row order is the order written.
                events.sort(key=lambda row: row["_rowid"])
        # A DELETE ends its memory: Mem0 never reuses an id, so nothing can follow it. QA s39
        # defect 1: Mem0's own delete writes its row with NULL times, which history.db sorts
        # first; the memory was read as live and "missing from a truncated export".
        events.sort(key=_is_delete_row)

    records: list[Record] = []
    present: set[str] = set()
    deleted: list[dict[str, Any]] = []
    if timeless:
        # A row of a history file is named "FILE: $[i]" (a history.db's "FILE: row N"): the
        # note's path is then in that file, which the message names.
        row_file, _, row_path = str(timeless_row).rpartition(": ")
        in_file = f" in history file {row_file}" if row_file else ""
        warnings.append(
            note(
                row_path if row_path.startswith("$") else "$",
                f"history rows without a readable time for {len(timeless)} "
                f"memory(ies) ({first_few(timeless, 10)}){in_file}: their "
                "events are taken in the file's order (for a history.db, its row order), except "
                "that a DELETE (or is_deleted) row is always the memory's last event",
                "history-order",
            )
        )
    if version == "platform":
        # A page scored as the whole store would understate everything it holds.
        warnings.extend(
            _page_warning(
                doc,
                "$",
                "this is one page of a paginated Platform export",
                "memories",
                "score the whole store",
            )
        )
    elif version == "qdrant" and len(items) == _SCROLL_DEFAULT:
        warnings.append(
            note(
                base,
                f"the scroll holds exactly {_SCROLL_DEFAULT} points, Qdrant scroll's default "
                "limit: it may be truncated (scroll on with the returned offset)",
                "truncated-export",
            )
        )
    elif (
        version != "add"
        and history is None
        and embedded is None
        # v2 wraps its 20 in {"results": ...}; a bare list is v1's (QA: 20 said "v2").
        and len(items) in ((100,) if version == "1.0" else (100, 20))
    ):
        warnings.append(
            note(
                base,
                f"the export holds exactly {len(items)} memories, get_all's default limit "
                f"({'v1' if len(items) == 100 else 'v2'}): it may be truncated",
                "truncated-export",
            )
        )
    # The export's own times, for the expiration check: it has no "now" of its own. Not the
    # history's (QA s51: a history dumped after the export marked a memory expired by a time
    # the export never saw, while the same import said the export was older than the history).
    times: list[datetime] = []
    history_times = [t for t in (_as_utc(_row_time(r)) for r in rows) if t]
    expiring: list[tuple[Record, Any, str]] = []
    add_events: dict[str, int] = {}
    # QA s40 defect 1: replaced texts of the memories kept (see _replaced_texts); every
    # history UPDATE was counted, also one after the export's time and one of a memory the
    # export does not hold.
    superseded_versions = 0
    zone_offsets: set[str] = set()
    other_states: list[str] = []
    first_at: dict[str, str] = {}  # the first item each note names, for its path
    scopes: dict[str, dict[str, None]] = {"user_id": {}, "agent_id": {}}
    for i, item in enumerate(items):
        ipath = f"{base}[{i}]"
        if not isinstance(item, dict):
            col.add(ipath, "type", "each memory must be an object", json_type(item))
            continue
        # `fields` holds the memory's own keys, at `fpath`: a Qdrant point's payload, or the
        # item itself (QA s25: a scroll was refused as "missing the memory text").
        fields, fpath = item, ipath
        if _is_point(item):
            if not isinstance(item["payload"], dict):
                col.add(
                    f"{ipath}.payload",
                    "type",
                    "a Qdrant point's payload must be an object",
                    json_type(item["payload"]),
                )
                continue
            fields, fpath = item["payload"], f"{ipath}.payload"
        raw_payload = fields is not item or ("memory" not in item and "data" in item)
        if fields is item:
            text_key = "memory" if "memory" in item or "data" not in item else "data"
        else:  # a payload names its text `data`: a missing one is located there
            text_key = "memory" if "memory" in fields else "data"
        mem_id = item.get("id")
        if isinstance(mem_id, int) and not isinstance(mem_id, bool):
            # Qdrant point ids may be integers; build_store reads them as their text, so the
            # history and delete events must too (importer QA: memory 1 was kept and listed
            # as deleted, and its history was said to be missing from the export).
            mem_id = str(mem_id)
        if isinstance(mem_id, str):
            present.add(mem_id)
        meta: dict[str, Any] = {}
        metadata = fields.get("metadata") if fields is item else None
        if metadata is not None and not isinstance(metadata, dict):
            col.add(
                f"{ipath}.metadata",
                "type",
                "metadata must be an object or null",
                json_type(metadata),
            )
            metadata = None
        unit_refs = unit_refs_from(metadata, f"{ipath}.metadata")
        if raw_payload:
            # Mem0 stores user metadata flattened into the payload and splits it back out on
            # read (EXPORT_FORMATS 1.2): every key that is not its own is metadata.
            own = _PAYLOAD_RESERVED | (_ITEM_KEYS if fields is item else frozenset())
            flat = {k: v for k, v in fields.items() if k not in own and k not in (metadata or {})}
            unit_refs += unit_refs_from(flat, fpath)
            merged = dict(metadata or {})
            for key, value in fields.items():
                if key in own:
                    continue
                if key in merged and merged[key] != value:
                    col.add(
                        _child_path(fpath, key),  # a user's key, which may hold a space
                        "mem0-metadata",
                        "this payload key is also in 'metadata', with another value",
                        value,
                    )
                    continue
                merged[key] = value
            metadata = merged or None
            if fields.get("memory_type") is not None:
                meta["memory_type"] = clean_meta(fields["memory_type"])
        if metadata:
            meta["metadata"] = clean_meta(metadata)
        for key in _PROMOTED:
            if fields.get(key) is not None:
                meta[key] = clean_meta(fields[key])
        for key, seen_values in scopes.items():
            if isinstance(fields.get(key), str | int) and not isinstance(fields[key], bool):
                seen_values[str(fields[key])] = None
        # Mem0 writes ISO strings (EXPORT_FORMATS 1.2): QA s46 saw 12345 read as 1970 unsaid,
        # and true said "kept as text" while nothing was kept.
        times_ok = [
            time_is_text(col, f"{fpath}.{key}", fields.get(key), _TIME_TYPE)
            for key in ("created_at", "updated_at")
        ]
        if not all(times_ok):
            continue
        created = normalise_time(fields.get("created_at"))
        updated = normalise_time(fields.get("updated_at"))
        for key, t in (("created_at", created), ("updated_at", updated)):
            raw = fields.get(key)
            if raw is None:
                continue
            if t.iso is None:
                warnings.append(
                    note(
                        f"{fpath}.{key}",
                        f"unreadable time {raw!r} kept as text in meta.{key}_raw",
                        "time-unreadable",
                    )
                )
            else:
                times.append(_as_utc(t.iso))  # type: ignore[arg-type]
                if t.naive:
                    meta[f"{key}_naive"] = True
            if isinstance(raw, str) and raw != t.iso:
                meta[f"{key}_raw"] = raw
                if raw.endswith(("-07:00", "-08:00")):
                    zone_offsets.add(raw[-6:])
            if key == "updated_at" and t.iso:
                meta["updated_at"] = t.iso
        salience = None
        if "score" in item and item["score"] is not None:
            salience = finite_number(item["score"])
            if salience is None:
                col.add(f"{ipath}.score", "finite", "score must be a finite number", item["score"])
        event = item.get("event")
        if event is not None:
            # add() output (EXPORT_FORMATS 1.3). QA s25: a DELETE event was scored as a live
            # memory, and any event value was accepted.
            if not isinstance(event, str) or event.upper() not in _EVENTS:
                col.add(
                    f"{ipath}.event",
                    "mem0-event",
                    "an add() result event must be ADD, UPDATE, DELETE or NONE",
                    event,
                )
                continue
            event = event.upper()
            add_events[event] = add_events.get(event, 0) + 1
            first_at.setdefault("event", f"{ipath}.event")
            if event == "DELETE":
                if not isinstance(mem_id, str) or not mem_id.strip():
                    col.add(f"{ipath}.id", "required", "the deleted memory has no id", mem_id)
                    continue
                deleted.append(
                    {
                        "id": mem_id,
                        "text": fields.get(text_key),
                        "status": "deleted",
                        "deleted_at": updated.iso,
                        "from": "add event",
                    }
                )
                continue
            meta["event"] = event
            if event == "UPDATE":
                meta["previous_memory"] = clean_meta(item.get("previous_memory"))
        status = "active"
        state = fields.get("lifecycle_state")
        if fields.get("replaced_by"):
            status = "superseded"
        elif isinstance(state, str) and state.strip():
            status = state.strip().lower()
        if status == "replaced":
            status = "superseded"
        if status not in ("active", "superseded", "deleted") and isinstance(mem_id, str):
            other_states.append(f"{mem_id!r} ({status})")
            first_at.setdefault("state", f"{fpath}.lifecycle_state")
        events = by_id.get(str(mem_id), []) if isinstance(mem_id, str) else []
        if events:
            meta["history"] = [
                {
                    "event": str(e.get("event", "")).upper(),
                    "old": e.get("old_memory"),
                    "new": e.get("new_memory"),
                    "at": _event_time(e) or None,
                }
                for e in events
            ]
            last = events[-1]
            if str(last.get("event", "")).upper() == "DELETE" or bool(last.get("is_deleted")):
                warnings.append(
                    note(
                        ipath,
                        f"history says memory {mem_id!r} was deleted ({last['_path']}), "
                        "but the export still holds it; it is kept as the export shows it",
                        "history-deleted",
                    )
                )
            else:
                newer = _newer_history(
                    mem_id, fields.get(text_key), updated.iso or created.iso, last, ipath
                )
                if newer:
                    warnings.append(newer)
            replaced = _replaced_texts(events, fields.get(text_key), updated.iso or created.iso)
        elif event == "UPDATE":
            # add() output: the replaced text is no longer in the store, unless it is the
            # text the memory still holds.
            previous = item.get("previous_memory")
            replaced = int(previous is None or previous != fields.get(text_key))
        else:
            replaced = 0
        extra_links = []
        if metadata:
            extra_links = links_from(metadata)
        record = Record(
            id=mem_id,
            text=fields.get(text_key),
            path=ipath,
            text_path=f"{fpath}.{text_key}",
            text_from=fields,
            text_keys=("memory", "data"),
            created_at=created.iso,
            salience=salience,
            status=status,
            meta=meta,
            links=extra_links,
            link_source=metadata,
            link_path=f"{ipath}.metadata",
            unit_refs=unit_refs,
            content_hash=fields["hash"] if isinstance(fields.get("hash"), str) else None,
        )
        if status == "deleted":
            deleted.append(
                {
                    "id": mem_id,
                    "text": fields.get(text_key),
                    "status": "deleted",
                    "deleted_at": updated.iso,
                    "from": "lifecycle_state",
                }
            )
            continue
        if fields.get("expiration_date") is not None:
            expiring.append((record, fields["expiration_date"], f"{fpath}.expiration_date"))
        records.append(record)
        superseded_versions += replaced

    if expiring:
        # QA s25: a memory past its expiration_date was scored as plain active, unsaid.
        warnings.append(
            _mark_expired(
                expiring,
                max(times) if times else None,
                max(history_times) if history_times else None,
            )
        )
    if add_events:
        counts = ", ".join(f"{e} {add_events[e]}" for e in _EVENTS if e in add_events)
        warnings.append(
            note(
                first_at["event"],
                f"{sum(add_events.values())} item(s) carry add() result events ({counts}): this "
                "looks like add() output, which lists only the memories that call touched, not "
                "the whole store; DELETE events are listed as deleted (not kept), ADD, UPDATE "
                "and NONE ones are kept (an UPDATE's previous_memory in its meta)",
                "add-events",
            )
        )

    # History-only memories: deleted (tombstones) or missing from the export.
    missing = []
    for mem_id, events in by_id.items():
        if mem_id in present:
            continue
        last = events[-1]
        if str(last.get("event", "")).upper() == "DELETE" or bool(last.get("is_deleted")):
            last_text = next(
                (
                    e.get("new_memory") or e.get("old_memory")
                    for e in reversed(events)
                    if e.get("new_memory") or e.get("old_memory")
                ),
                None,
            )
            deleted.append(
                {
                    "id": mem_id,
                    "text": last_text,
                    "status": "deleted",
                    "deleted_at": _event_time(last) or None,
                    "from": "history",
                }
            )
        else:
            missing.append(mem_id)
    for key, seen_values in scopes.items():
        if len(seen_values) > 1:
            # Importer QA: a Qdrant scroll of the whole collection holds every user's
            # memories; they became one store unsaid.
            names = first_few(list(seen_values), 10, show=id_text)
            warnings.append(
                note(
                    base,
                    f"the export holds memories of {len(seen_values)} different {key}s "
                    f"({names}): they are one store here; export one "
                    f"{key.removesuffix('_id')}'s memories (get_all({key}=...) or a filtered "
                    "scroll) to score that memory alone",
                    "several-scopes",
                )
            )
    if other_states:
        # Counted like active ones (the union keeps all but deleted memories): said, since
        # an archived or paused memory may not be served (QA s20d).
        warnings.append(
            note(
                first_at["state"],
                f"{len(other_states)} memory(ies) have a lifecycle_state other than active, "
                f"superseded or deleted: {first_few(other_states, 10)}; each is kept with that "
                "status and "
                "counted as part of the store",
                "lifecycle-state",
            )
        )
    if missing and present and not present & set(by_id):
        # QA s51: another export's history (left in the app's history box) read as this one's
        # said "the export is probably truncated", sending the user the wrong way.
        named = list(by_id)
        warnings.append(
            note(
                # The export's own history, or the export as a whole beside a history file.
                "$.history" if history is None else "$",
                f"none of the {len(named)} memory(ies) the history names "
                f"({', '.join(map(id_text, named[:5]))}{'...' if len(named) > 5 else ''}) is in "
                "the export: this history does not seem to belong to this export (another "
                "user's, agent's or run's?); its deletions say nothing about this store. Give "
                "the history written with this export",
                "history-foreign",
            )
        )
    elif missing:
        warnings.append(
            note(
                base,
                f"history names {len(missing)} memory(ies) that are not deleted but not in the "
                f"export ({first_few(missing, 5, show=id_text)}): the "
                "export is probably truncated (get_all defaults to 100 items in v1 and 20 in v2)",
                "history-missing",
            )
        )

    live, invalidated = _read_relations(relations, col)
    if invalidated:
        warnings.append(
            note(
                "$.relations",
                f"{len(invalidated)} of {len(live) + len(invalidated)} graph relation(s) are "
                "invalidated (valid: false): listed in invalidated_relations, not as live "
                "relations",
                "relation-invalidated",
            )
        )

    meta: dict[str, Any] = {
        "memories_in_export": len(items),
        "deleted": deleted,
        "superseded_versions": superseded_versions,
    }
    if relations:
        meta["relations"] = live
    if invalidated:
        meta["invalidated_relations"] = invalidated
    if history_parts:
        meta["history"] = "; ".join(history_parts)
    if zone_offsets:
        meta["time_note"] = (
            f"timestamps carried US/Pacific offsets ({', '.join(sorted(zone_offsets))}, as Mem0 "
            "0.1.x wrote them); converted to UTC"
        )
    if warnings:
        meta["warnings"] = warnings
    return build_store(
        records,
        collector=col,
        system="mem0",
        format_version=version,
        cost_rule=cost_rule,
        store_id=store_id,
        package=package,
        label="Mem0 export",
        meta=meta,
        doc=doc,
    )


def _mark_expired(
    expiring: list[tuple[Record, Any, str]],
    latest: datetime | None,
    history_latest: datetime | None = None,
) -> str:
    """Mark the memories expired before ``latest`` (the export's own latest time); the warning.

    A date-only ``expiration_date`` (the Platform's ``YYYY-MM-DD``) lasts through that day,
    so it has expired when ``latest`` falls on a later date. ``history_latest`` (the history's
    latest time) is never compared with: the warning names it when it is later than
    ``latest`` (or ``latest`` is unknown), so the user sees which time was not used, and why.
    """
    expired: list[str] = []
    expired_at: list[str] = []
    unreadable: list[str] = []
    for record, raw, where in expiring:
        t = normalise_time(raw)
        when = _as_utc(t.iso)
        if when is None:
            unreadable.append(f"{where}: {raw!r}")
            continue
        if latest is None:
            continue
        date_only = isinstance(raw, str) and len(raw.strip()) == 10
        if (when.date() < latest.date()) if date_only else (when < latest):
            record.meta["expired_before_export"] = True
            if record.status == "active":
                record.status = "expired"
            expired.append(repr(record.id))
            expired_at.append(where)
    text = f"{len(expiring)} memory(ies) carry an expiration_date; "
    # The first expired memory's date, else the memories' array (the note counts them all).
    path = expired_at[0] if expired_at else common_path([w for _, _, w in expiring])
    if latest is None:
        text += (
            "the export's memories carry no readable created_at / updated_at to compare them "
            "with, so none is marked expired (each is kept as active)"
        )
    else:
        text += (
            f"{len(expired)} of them expire before the export's latest time "
            f"({latest.isoformat()})"
            + (
                f": {first_few(expired, 10)}; those are marked status 'expired' (a superseded "
                "one keeps that status) and still counted as part of the store (Mem0 v2 hides "
                "expired memories from get_all and search unless show_expired=True)"
                if expired
                else ", so none is marked expired"
            )
            + ". Rule: the export does not say when it was taken, so its memories' latest "
            "created_at / updated_at stands in for 'now' (it was taken no earlier)"
        )
    if history_latest is not None and (latest is None or history_latest > latest):
        text += (
            f"; the history's later times (up to {history_latest.isoformat()}) are not used: "
            "a history is read when it is dumped and can run past the export it goes with"
        )
    if unreadable:
        text += (
            f"; {len(unreadable)} expiration_date(s) cannot be read (first: {unreadable[0]}), "
            "so those memories are kept as active"
        )
    return note(path, text, "expiry")


def _read_relations(relations: list[Any], col: Collector) -> tuple[list[str], list[dict[str, Any]]]:
    """Live relations as ``source|relationship|target`` strings, and the invalidated ones.

    Mem0 1.x soft-deletes an edge (``valid = false``, ``invalidated_at``); get_all hides it,
    so it only appears in a direct graph dump (QA s25: it was listed as live).
    """
    live: list[str] = []
    invalidated: list[dict[str, Any]] = []
    for j, rel in enumerate(relations):
        rpath = f"$.relations[{j}]"
        if not isinstance(rel, dict):
            col.add(rpath, "type", "each relation must be an object", json_type(rel))
            continue
        valid = rel.get("valid")
        if valid is not None and not isinstance(valid, bool):
            col.add(f"{rpath}.valid", "type", "valid must be true, false or absent", valid)
            continue
        gone = rel.get("invalidated_at")
        if valid is True and gone is not None:
            col.add(
                f"{rpath}.invalidated_at",
                "mem0-relation-valid",
                "the relation says valid: true but has an invalidated_at time",
                gone,
            )
            continue
        target_key = "target" if "target" in rel or "destination" not in rel else "destination"
        ends = {"source": rel.get("source"), "relationship": rel.get("relationship")}
        ends[target_key] = rel.get(target_key)
        # Importer QA: a relation without 'relationship' was kept as "ann|None|x".
        bad = False
        for key, value in ends.items():
            if not isinstance(value, str) or not value.strip():
                col.add(
                    f"{rpath}.{key}",
                    "required" if value is None else "type",
                    f"a relation's {key} must be a non-empty string",
                    value,
                )
                bad = True
            else:
                bad = not col.check(f"{rpath}.{key}", value) or bad
        if bad:
            continue
        text = "|".join(ends.values())
        if valid is False or gone is not None:
            at = normalise_time(gone)
            invalidated.append(
                {"relation": text, "invalidated_at": at.iso if at.iso else clean_meta(gone)}
            )
        else:
            live.append(text)
    return live, invalidated
