"""A-mem (agentic memory) notes -> an external store.

Accepted inputs (``store.meta["format_version"]``):

===================  =========================================================================
``notes-list``       a JSON list of note dicts (``MemoryNote`` fields: ``id``, ``content``,
                     ``keywords``, ``links``, ``retrieval_count``, ``timestamp``,
                     ``last_accessed``, ``context``, ``evolution_history``, ``category``,
                     ``tags``; the paper code adds ``importance_score``)
``notes-dict``       a JSON object mapping note id -> note dict (``AgenticMemorySystem.memories``
                     saved as JSON)
``chroma-get``       a Chroma ``collection.get(include=["documents", "metadatas"])`` dump:
                     ``{"ids": [...], "documents": [...], "metadatas": [...]}``
===================  =========================================================================

Chroma metadata comes back as strings: list fields (``keywords``, ``tags``, ``links``,
``evolution_history``) are decoded from their JSON strings and ``retrieval_count`` /
``importance_score`` back to numbers. A value that does not decode is kept as the string,
except a provenance link field (``evidence``, ``dia_id``, ...) whose text starts like a JSON
array: it is refused at its own path (rule ``json-syntax``), since split as plain text it
would give links like ``'["D9:1"'``.

``links`` is the note's own field (links to other notes, or positional indices in the
original A-mem) and stays in meta as exported; provenance links (``dia_id``, ``evidence``,
``session_id`` ... in the note's ``metadata``, else in the note) give coverage and are kept in
``meta["provenance_links"]`` (in ``meta["links"]``, as for other formats, when the note has no
``links`` field).

**Pickles are refused** (``.pkl`` / ``.pickle`` or a pickle header): unpickling runs code from
the file. Convert the paper repo's cached pickles to JSON in a trusted environment first.

``timestamp`` (``YYYYMMDDHHMM``, naive local time, or the free LoCoMo session text) becomes a
naive ISO ``created_at``: A-mem records no zone, so none is guessed
(``store.meta["time_zone"] == "naive"``). A 12-digit number is read as that stamp; any other
number or a boolean is refused (rule ``type``): 12345 would otherwise read as 1970.
``importance_score`` becomes the salience; one that is not a finite number (``"high"``, NaN,
Chroma's ``"NaN"`` string) is refused with rule ``finite``, as Mem0's ``score``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..package import Package, Store, _child_path, json_float, json_type
from ._common import (
    AMEM_STAMP,
    LINK_KEYS,
    Collector,
    Record,
    build_store,
    clean_meta,
    fail,
    finite_number,
    links_from,
    load_json_file,
    normalise_time,
    time_is_text,
    unit_refs_from,
    unusable,
)

_LIST_FIELDS = ("keywords", "tags", "links", "evolution_history")
_NUMBER_FIELDS = ("retrieval_count", "importance_score")
#: The fields of an A-Mem ``MemoryNote`` besides its id, content and timestamp.
NOTE_FIELDS = (
    "keywords",
    "links",
    "retrieval_count",
    "last_accessed",
    "context",
    "evolution_history",
    "category",
    "tags",
    "importance_score",
)


def coerce_chroma_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    """Undo Chroma's stringification of A-mem note metadata.

    Examples
    --------
    >>> coerce_chroma_metadata({"keywords": '["cat", "pet"]', "retrieval_count": "3"})
    {'keywords': ['cat', 'pet'], 'retrieval_count': 3}

    Provenance links stored as a JSON array are decoded too (annotator QA s38: ``'["u1",
    "u6"]'`` was split at its comma into the links ``'["u1"'`` and ``'"u6"]'``):

    >>> coerce_chroma_metadata({"evidence": '["u1", "u6"]', "session": "s1"})
    {'evidence': ['u1', 'u6'], 'session': 's1'}
    """
    out = dict(meta)
    for key in _LIST_FIELDS:
        value = out.get(key)
        if isinstance(value, str):
            try:
                # json_float: "1e-400" in the text is refused, not read as 0 (QA s44).
                decoded = json.loads(value, parse_float=json_float)
            except (ValueError, RecursionError):  # kept as the text it is (QA s44: deep nesting)
                continue
            if isinstance(decoded, list | dict):
                out[key] = decoded
    for key in LINK_KEYS:
        value = out.get(key)
        # Only an array: a plain id ("s1", "12") stays the text it is.
        if isinstance(value, str) and value.lstrip().startswith("["):
            try:
                decoded = json.loads(value, parse_float=json_float)
            except (ValueError, RecursionError):  # kept as the text it is (QA s44: deep nesting)
                continue
            if isinstance(decoded, list):
                out[key] = decoded
    for key in _NUMBER_FIELDS:
        value = out.get(key)
        if isinstance(value, str):
            try:
                number = json_float(value)  # "1e-400" is refused (unusable), not read as 0
            except ValueError:
                continue
            whole = type(number) is float and number.is_integer() and "." not in value
            out[key] = int(number) if whole else number
    return out


def _decoded_problems(
    meta: dict[str, Any], note: dict[str, Any], path: str, col: Collector
) -> bool:
    """Report what :func:`coerce_chroma_metadata` decoded from a Chroma string and the
    package would refuse (``"[\"a\", 1e-400]"``), at the string's own path in the export
    (QA s44: it was reported at the note's ``$.ids[i]``, as ``meta.retrieval_count``)."""
    found = False
    for key, value in note.items():
        if value is meta.get(key):
            continue  # not decoded: the export's own value, checked with the rest of it
        here = _child_path(path, key)
        for problem in unusable(value, here):
            inner = problem.path[len(here) :]
            message = problem.message
            if inner:
                message = f"in the JSON text of this field, at {inner}: {message}"
            col.add(here, problem.rule, message, problem.value)
            found = True
    return found


def _undecodable_links(meta: dict[str, Any], path: str, col: Collector) -> bool:
    """Report a provenance link field (:data:`LINK_KEYS`) written as a JSON array (as Chroma
    stores lists) whose text does not decode, at its own path; True when there was one.

    QA s48: ``'["D9:1"'`` was kept as text, split into the link ``'["D9:1"'`` and warned of
    as a link naming nothing in the package, located at the note's ``$.ids[i]``.
    """
    found = False
    for key in LINK_KEYS:
        value = meta.get(key)
        if not (isinstance(value, str) and value.lstrip().startswith("[")):
            continue
        try:
            json.loads(value, parse_float=json_float)
            continue
        except json.JSONDecodeError as exc:
            reason = f"{exc.msg} at character {exc.pos + 1}"
        except (ValueError, RecursionError):
            reason = "nested too deeply to read"
        col.add(
            _child_path(path, key),
            "json-syntax",
            "this provenance link field holds a JSON array as text (as Chroma stores lists), "
            f"but the text does not decode ({reason}): fix the array, or give the links as a "
            "plain id string",
            value,
        )
        found = True
    return found


def _note_record(
    note_id: Any,
    text: Any,
    note: dict[str, Any],
    path: str,
    text_path: str,
    id_path: str,
    *,
    fields_path: str,
    col: Collector,
) -> tuple[Record, bool]:
    meta: dict[str, Any] = {"kind": "note"}
    for key in NOTE_FIELDS:
        if key in note and note[key] is not None:
            meta[key] = clean_meta(note[key])
    stamp = note.get("timestamp")
    if isinstance(stamp, int) and not isinstance(stamp, bool) and AMEM_STAMP.match(str(stamp)):
        # A-Mem's own YYYYMMDDHHMM stamp, stored as a number (CLI QA: 202307010900 had been
        # read as epoch milliseconds, 1976-05-30, which reordered recency pruning).
        stamp = str(stamp)
    # Any other number would be read as epoch seconds, 12345 as 1970, unsaid (QA s46).
    if not time_is_text(
        col,
        f"{fields_path}.timestamp",
        stamp,
        "an A-Mem timestamp is a YYYYMMDDHHMM string (also as a 12-digit number) or text",
    ):
        stamp = None
    t = normalise_time(stamp)
    if note.get("timestamp") is not None:
        meta["timestamp_raw"] = note["timestamp"]
    salience = None
    if note.get("importance_score") is not None:
        salience = finite_number(note["importance_score"])
        if salience is None:
            # As Mem0's score (CLI QA: "high", NaN or Chroma's "NaN" were dropped silently).
            col.add(
                f"{fields_path}.importance_score",
                "finite",
                "importance_score must be a finite number",
                note["importance_score"],
            )
    own_metadata = isinstance(note.get("metadata"), dict)
    link_source = note["metadata"] if own_metadata else note
    links = links_from(link_source)
    unit_refs = unit_refs_from(
        link_source, f"{fields_path}.metadata" if own_metadata else fields_path
    )
    return (
        Record(
            id=note_id,
            text=text,
            path=path,
            text_path=text_path,
            id_path=id_path,
            created_at=t.iso,
            time_raw=t.raw,
            time_path=f"{fields_path}.timestamp",
            salience=salience,
            meta=meta,
            links=links,
            link_source=link_source,
            unit_refs=unit_refs,
        ),
        t.naive,
    )


def load_amem_store(
    path: str | Path,
    *,
    cost_rule: str = "words",
    store_id: str | None = None,
    package: Package | None = None,
) -> Store:
    """Read A-mem notes (JSON list / dict, or a Chroma ``get()`` dump) into a store.

    Parameters
    ----------
    path : str or Path
    cost_rule, store_id, package
        As :func:`memaudit_core.importers.load_external_store`.

    Returns
    -------
    Store

    Raises
    ------
    PackageError
        A pickle, a wrong shape, missing ``content``, misaligned Chroma arrays.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "c.json"
    >>> dump = {"ids": ["n1"], "documents": ["Caroline joined a support group."],
    ...         "metadatas": [{"tags": '["community"]', "timestamp": "202305081356"}]}
    >>> _ = f.write_text(json.dumps(dump))
    >>> s = load_amem_store(f)
    >>> s.meta["format_version"], s.memories[0].meta["tags"], s.memories[0].created_at
    ('chroma-get', ['community'], '2023-05-08T13:56:00')
    """
    source = str(path)
    doc = load_json_file(path)
    col = Collector(source)
    records: list[Record] = []
    naive = False
    if isinstance(doc, dict) and "ids" in doc and ("documents" in doc or "metadatas" in doc):
        version = "chroma-get"
        ids, docs, metas = doc.get("ids"), doc.get("documents"), doc.get("metadatas")
        for key, value in (("ids", ids), ("documents", docs)):
            if not isinstance(value, list):
                fail(
                    source,
                    f"$.{key}",
                    "type",
                    f"'{key}' must be an array (did you include documents in collection.get()?)",
                    json_type(value),
                )
        if metas is None:
            metas = [None] * len(ids)
        if not isinstance(metas, list):
            fail(source, "$.metadatas", "type", "'metadatas' must be an array", json_type(metas))
        for key, value in (("documents", docs), ("metadatas", metas)):
            if len(value) != len(ids):
                fail(
                    source,
                    f"$.{key}",
                    "aligned",
                    f"'{key}' has {len(value)} entries but 'ids' "
                    f"has {len(ids)}: the arrays must line up",
                )
        for i, (note_id, text, meta) in enumerate(zip(ids, docs, metas, strict=True)):
            if meta is not None and not isinstance(meta, dict):
                col.add(
                    f"$.metadatas[{i}]",
                    "type",
                    "metadata must be an object or null",
                    json_type(meta),
                )
                continue
            note = coerce_chroma_metadata(meta or {})
            # Both checks run, so that one run lists every problem of the note.
            decoded_bad = _decoded_problems(meta or {}, note, f"$.metadatas[{i}]", col)
            if _undecodable_links(meta or {}, f"$.metadatas[{i}]", col) or decoded_bad:
                continue
            rec, was_naive = _note_record(
                note_id,
                text,
                note,
                f"$.ids[{i}]",
                f"$.documents[{i}]",
                f"$.ids[{i}]",
                fields_path=f"$.metadatas[{i}]",
                col=col,
            )
            records.append(rec)
            naive |= was_naive
    elif isinstance(doc, list | dict):
        if isinstance(doc, list):
            version = "notes-list"
            items = [(None, note, f"$[{i}]") for i, note in enumerate(doc)]
        else:
            version = "notes-dict"
            items = [(key, note, f"$[{json.dumps(key)}]") for key, note in doc.items()]
        for key, note, npath in items:
            if not isinstance(note, dict):
                col.add(npath, "type", "each note must be an object", json_type(note))
                continue
            note_id = note.get("id", key)
            if key is not None and "id" in note and note["id"] != key:
                col.add(
                    f"{npath}.id",
                    "consistent-id",
                    f"note id differs from its key {key!r}",
                    note["id"],
                )
                continue
            rec, was_naive = _note_record(
                note_id,
                note.get("content"),
                note,
                npath,
                f"{npath}.content",
                f"{npath}.id",
                fields_path=npath,
                col=col,
            )
            records.append(rec)
            naive |= was_naive
    else:
        fail(
            source,
            "$",
            "amem-shape",
            "an A-mem export must be a list of notes, an object of "
            "notes by id, or a Chroma get() dump",
            json_type(doc),
        )
    meta: dict[str, Any] = {"deleted": [], "note": "A-mem deletes are hard deletes: no tombstones"}
    if naive:
        meta["time_zone"] = "naive"
    return build_store(
        records,
        collector=col,
        system="amem",
        format_version=version,
        cost_rule=cost_rule,
        store_id=store_id,
        package=package,
        label="A-mem export",
        meta=meta,
        doc=doc,
    )
