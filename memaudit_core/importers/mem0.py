"""Mem0 exports -> an external :class:`~memaudit_core.package.Store`.

Accepted shapes (the detected one is recorded in ``store.meta["format_version"]``):

===================  =========================================================================
``1.0``              ``get_all()`` / ``search()`` output as a bare list of memory items
``1.1``              ``{"results": [...], "relations": [...]}`` (graph store enabled, v1.x)
``2``                ``{"results": [...]}`` whose items carry v2-only fields
                     (``attributed_to``, ``expiration_date``)
``1.1-or-2``         ``{"results": [...]}`` without anything that tells v1.1 and v2 apart
``platform``         a paginated Platform page ``{"count", "next", "previous", "results"}``
===================  =========================================================================

An item needs ``id`` and ``memory`` (the text; the raw payload key ``data`` is accepted too).
``created_at`` / ``updated_at`` are normalised to UTC ISO-8601 (0.1.x wrote US/Pacific
offsets, 1.x+ UTC, the Platform ``Z``); the original strings stay in ``meta``. ``metadata``
and the promoted scope keys (``user_id``, ``agent_id``, ``run_id``, ``actor_id``, ``role``,
...) are kept in ``meta``; ``hash`` is dropped (it is the md5 of the text), after memories
sharing one are reported in ``store.meta["warnings"]`` (both kept: the store holds both).
``score`` (search results) becomes the memory's salience. Graph ``relations`` are not
memories: they are reported in ``store.meta["relations"]`` (``source|relationship|target``
strings).

History (``history=`` a JSON list of rows, a ``{"results": [...]}`` page, or Mem0's SQLite
``history.db`` with either the current schema or the older ``new_value`` one; or a
``"history"`` key next to ``"results"`` in the export):

- a memory whose last event is ``DELETE`` (or ``is_deleted``, which must be true, false, 0 or
  1, in the JSON history as in ``history.db``) is **deleted**: Mem0 removes it
  from the vector store, so it is *not* part of the store as kept. It is listed in
  ``store.meta["deleted"]`` (id, last text, time, ``status: "deleted"``).
  Events are read in time order; a memory with a history row that has no readable time
  keeps the file's order of its rows, and a warning says so.
- ``UPDATE`` rewrites a memory in place: the memory stays (``status`` active) and its earlier
  texts are listed in its ``meta["history"]``; ``store.meta["superseded_versions"]`` counts
  those replaced texts, which are no longer in the store.
- a Platform memory with ``replaced_by`` (or ``lifecycle_state`` ``superseded``) is
  **superseded**: it is still in the store, so it is kept and marked ``status="superseded"``.
  ``lifecycle_state`` ``deleted`` is treated like a ``DELETE``; other states are kept as the
  memory's status, count as part of the store, and are listed in ``store.meta["warnings"]``.
- history that names memories the export does not hold (and that were not deleted) is reported
  in ``store.meta["warnings"]``: the export is probably truncated (``get_all`` defaults to 100
  items in v1 and 20 in v2).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from ..package import Package, Store, json_type
from ._common import (
    Collector,
    Record,
    build_store,
    clean_meta,
    fail,
    finite_number,
    links_from,
    load_json_file,
    normalise_time,
    read_bytes,
)

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


def _detect(doc: Any, col: Collector) -> tuple[list[Any], str, str, list[Any], Any]:
    """(items, base path, version, relations, embedded history)."""
    if isinstance(doc, list):
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
    relations = doc.get("relations") or []
    if not isinstance(relations, list):
        col.add("$.relations", "type", "'relations' must be an array", json_type(relations))
        relations = []
    if {"count", "next", "previous"} & set(doc):
        version = "platform"
    elif "relations" in doc:
        version = "1.1"
    elif any(isinstance(it, dict) and any(k in it for k in _V2_FIELDS) for it in items):
        version = "2"
    else:
        version = "1.1-or-2"
    return items, "$.results", version, relations, doc.get("history")


# --------------------------------------------------------------------------- history


def _history_rows_from_sqlite(path: Path) -> list[dict[str, Any]]:
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
        wanted = [
            c
            for c in (
                "id",
                "memory_id",
                "old_memory",
                "event",
                "created_at",
                "updated_at",
                "is_deleted",
                "actor_id",
                "role",
            )
            if c in cols
        ]
        select = ", ".join(wanted + ([f"{new_col} AS new_memory"] if new_col else []))
        order = ", ".join(c for c in ("created_at", "updated_at") if c in cols) or "rowid"
        try:
            cur = con.execute(f"SELECT {select} FROM history ORDER BY {order}")
            names = [d[0] for d in cur.description]
            rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
        except sqlite3.DatabaseError as exc:
            fail(source, "history", "sqlite", f"cannot read the 'history' table: {exc}")
    finally:
        con.close()
    col = Collector(source)
    for i, row in enumerate(rows):
        row["_path"] = f"history[row {i + 1}]"
        row["_schema"] = "new_value" if new_col == "new_value" else "current"
        flag = row.get("is_deleted")
        if flag is not None and not (isinstance(flag, bool) or flag in (0, 1)):
            # A TEXT 'false' read as deleted (CLI QA), as in the JSON history.
            col.add(
                f"{row['_path']}.is_deleted", "type", "must be true, false, 0 or 1 (or NULL)", flag
            )
    col.raise_if_any()
    return rows


def _history_rows(history: Any, col: Collector) -> tuple[list[dict[str, Any]], str]:
    """Rows from a path or already-decoded JSON, and a description of where they came from."""
    if isinstance(history, str | Path):
        path = Path(history)
        head = read_bytes(path)[:16]
        if head.startswith(_SQLITE_MAGIC):
            rows = _history_rows_from_sqlite(path)
            schema = rows[0]["_schema"] if rows else "current"
            return rows, f"sqlite history.db ({schema} schema)"
        data = load_json_file(path)
        hcol = Collector(str(path))
        rows = _json_history(data, hcol, "$")
        hcol.raise_if_any()
        return rows, "json history"
    rows = _json_history(history, col, "$.history")
    return rows, "embedded history"


def _json_history(data: Any, col: Collector, base: str) -> list[dict[str, Any]]:
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        data, base = data["results"], f"{base}.results"
    if not isinstance(data, list):
        col.add(base, "mem0-history", "history must be a list of rows", json_type(data))
        return []
    rows = []
    for i, row in enumerate(data):
        path = f"{base}[{i}]"
        if not isinstance(row, dict):
            col.add(path, "type", "each history row must be an object", json_type(row))
            continue
        for key in ("memory_id", "event"):
            if not isinstance(row.get(key), str) or not row.get(key):
                col.add(
                    f"{path}.{key}", "required", f"history row needs a string '{key}'", row.get(key)
                )
                break
        else:
            if row["event"].upper() not in ("ADD", "UPDATE", "DELETE", "NONE"):
                col.add(
                    f"{path}.event",
                    "mem0-event",
                    "event must be ADD, UPDATE, DELETE or NONE",
                    row["event"],
                )
                continue
            flag = row.get("is_deleted")
            if flag is not None and not (isinstance(flag, bool) or flag in (0, 1)):
                # "false" or "0" would read as deleted (CLI QA).
                col.add(
                    f"{path}.is_deleted", "type", "must be true, false, 0 or 1 (or absent)", flag
                )
                continue
            out = dict(row)
            if "new_memory" not in out and "new_value" in out:
                out["new_memory"] = out.pop("new_value")
            out["_path"] = path
            rows.append(out)
    return rows


def _event_time(row: dict[str, Any]) -> str:
    t = normalise_time(row.get("updated_at")).iso or normalise_time(row.get("created_at")).iso
    return t or ""


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
        The JSON export (``get_all`` / ``search`` output or a Platform page).
    cost_rule : str
        A name in :data:`memaudit_core.costs.COST_RULES`.
    store_id : str, optional
        Default ``"mem0"``.
    package : Package, optional
        When given, provenance links in ``metadata`` (``dia_id``, ``unit_ids``, ``session_id``,
        ... see :data:`memaudit_core.importers._common.LINK_KEYS`) become coverage.
    history : path or list, optional
        History rows (JSON) or a ``history.db`` SQLite file.

    Returns
    -------
    Store

    Raises
    ------
    PackageError
        Wrong shape, missing ids or texts, unreadable history; each problem located.

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
    doc = load_json_file(path)
    col = Collector(source)
    items, base, version, relations, embedded = _detect(doc, col)

    rows: list[dict[str, Any]] = []
    history_kind = None
    if history is not None or embedded is not None:
        rows, history_kind = _history_rows(history if history is not None else embedded, col)

    by_id: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_id.setdefault(str(row.get("memory_id")), []).append(row)
    timeless: list[str] = []
    for mem_id, events in by_id.items():
        if all(_event_time(row) for row in events):
            events.sort(key=_event_time)
        else:
            # A row without a time sorted first would put a DELETE before the ADD it ends
            # (QA s20d): the file's own order is the only evidence left, and it is said.
            timeless.append(repr(mem_id))

    records: list[Record] = []
    present: set[str] = set()
    deleted: list[dict[str, Any]] = []
    warnings: list[str] = []
    if timeless:
        warnings.append(
            f"history rows without a readable time for {len(timeless)} memory(ies) "
            f"({', '.join(timeless[:10])}{' ...' if len(timeless) > 10 else ''}): their "
            "events are taken in the file's order"
        )
    if version == "platform":
        count, next_page = doc.get("count"), doc.get("next")
        more = isinstance(count, int) and not isinstance(count, bool) and count > len(items)
        if next_page or more:
            # A page scored as the whole store would understate everything it holds.
            warnings.append(
                f"this is one page of a paginated Platform export: it holds {len(items)} "
                + (f"of {count} memories" if more else "memories")
                + (f" (next page: {next_page})" if next_page else "")
                + "; join every page's 'results' to score the whole store"
            )
    elif history is None and embedded is None and len(items) in (100, 20):
        warnings.append(
            f"the export holds exactly {len(items)} memories, get_all's default limit "
            f"({'v1' if len(items) == 100 else 'v2'}): it may be truncated"
        )
    zone_offsets: set[str] = set()
    other_states: list[str] = []
    for i, item in enumerate(items):
        ipath = f"{base}[{i}]"
        if not isinstance(item, dict):
            col.add(ipath, "type", "each memory must be an object", json_type(item))
            continue
        text_key = "memory" if "memory" in item or "data" not in item else "data"
        mem_id = item.get("id")
        if isinstance(mem_id, str):
            present.add(mem_id)
        meta: dict[str, Any] = {}
        metadata = item.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            col.add(
                f"{ipath}.metadata",
                "type",
                "metadata must be an object or null",
                json_type(metadata),
            )
            metadata = None
        if metadata:
            meta["metadata"] = clean_meta(metadata)
        for key in _PROMOTED:
            if item.get(key) is not None:
                meta[key] = clean_meta(item[key])
        created = normalise_time(item.get("created_at"))
        updated = normalise_time(item.get("updated_at"))
        for key, t in (("created_at", created), ("updated_at", updated)):
            raw = item.get(key)
            if raw is None:
                continue
            if t.iso is None:
                warnings.append(f"{ipath}.{key}: unreadable time {raw!r} kept as text")
            elif t.naive:
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
        status = "active"
        state = item.get("lifecycle_state")
        if item.get("replaced_by"):
            status = "superseded"
        elif isinstance(state, str) and state.strip():
            status = state.strip().lower()
        if status == "replaced":
            status = "superseded"
        if status not in ("active", "superseded", "deleted") and isinstance(mem_id, str):
            other_states.append(f"{mem_id!r} ({status})")
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
                    f"{ipath}: history says memory {mem_id!r} was deleted, but the export still "
                    "holds it; it is kept as the export shows it"
                )
        extra_links = []
        if metadata:
            extra_links = links_from(metadata)
        record = Record(
            id=mem_id,
            text=item.get(text_key),
            path=ipath,
            text_path=f"{ipath}.{text_key}",
            created_at=created.iso,
            salience=salience,
            status=status,
            meta=meta,
            links=extra_links,
            content_hash=item["hash"] if isinstance(item.get("hash"), str) else None,
        )
        if status == "deleted":
            deleted.append(
                {
                    "id": mem_id,
                    "text": item.get(text_key),
                    "status": "deleted",
                    "deleted_at": updated.iso,
                    "from": "lifecycle_state",
                }
            )
            continue
        records.append(record)

    # History-only memories: deleted (tombstones) or missing from the export.
    missing = []
    superseded_versions = 0
    for mem_id, events in by_id.items():
        superseded_versions += sum(1 for e in events if str(e.get("event")).upper() == "UPDATE")
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
    if other_states:
        # Counted like active ones (the union keeps all but deleted memories): said, since
        # an archived or paused memory may not be served (QA s20d).
        warnings.append(
            f"{len(other_states)} memory(ies) have a lifecycle_state other than active, "
            f"superseded or deleted: {', '.join(other_states[:10])}"
            f"{' ...' if len(other_states) > 10 else ''}; each is kept with that status and "
            "counted as part of the store"
        )
    if missing:
        warnings.append(
            f"history names {len(missing)} memory(ies) that are not deleted but not in the export "
            f"({', '.join(missing[:5])}{'...' if len(missing) > 5 else ''}): the export is "
            "probably truncated (get_all defaults to 100 items in v1 and 20 in v2)"
        )

    rel_strings: list[str] = []
    for j, rel in enumerate(relations):
        if not isinstance(rel, dict):
            col.add(f"$.relations[{j}]", "type", "each relation must be an object", json_type(rel))
            continue
        target = rel.get("target", rel.get("destination"))
        rel_strings.append(f"{rel.get('source')}|{rel.get('relationship')}|{target}")

    meta: dict[str, Any] = {
        "memories_in_export": len(items),
        "deleted": deleted,
        "superseded_versions": superseded_versions,
    }
    if relations:
        meta["relations"] = rel_strings
    if history_kind:
        meta["history"] = f"{history_kind}: {len(rows)} row(s)"
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
    )
