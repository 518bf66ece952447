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
``session_id`` ...) give coverage and are kept in ``meta["provenance_links"]`` (in
``meta["links"]``, as for other formats, when the note has no ``links`` field). They are read
from the note's own keys and from its ``metadata`` object, both (QA s50: a ``metadata`` object
hid the note's own ``dia_id``, and its ``unit_ids`` from the ``known-unit`` check); a link key
given in both places with different links is refused (rule ``consistent-links``), as Mem0
refuses a payload key that ``metadata`` contradicts: which one is right cannot be told, and
their union would credit coverage neither place claims alone. A ``metadata`` that is text
holding a JSON object (as A-Mem's Chroma retriever ``json.dumps`` a dict) is decoded; any other
non-object ``metadata`` is warned of at its path, and gives no links.

In a Chroma dump the note's text is ``documents[i]`` (what Chroma stores and searches); when
``metadatas[i].content`` says otherwise a warning names both paths, since the cost is counted
from ``documents[i]``.

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
    NotALink,
    Record,
    _a_json_type,
    build_store,
    clean_meta,
    common_path,
    fail,
    finite_number,
    first_few,
    links_from,
    load_json_file,
    normalise_time,
    split_refs,
    time_is_text,
    unit_refs_from,
    unusable,
)
from ._common import note as import_note  # `note` is an A-mem note in this module

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


def metadata_object(value: Any) -> dict[str, Any] | None:
    """The object a note's ``metadata`` text holds as JSON (A-Mem's Chroma retriever
    ``json.dumps`` dict values); None when ``value`` is no such text.

    >>> metadata_object('{"dia_id": "D1:1"}'), metadata_object("from LoCoMo")
    ({'dia_id': 'D1:1'}, None)
    """
    if not (isinstance(value, str) and value.lstrip().startswith("{")):
        return None
    try:
        decoded = json.loads(value, parse_float=json_float)
    except (ValueError, RecursionError):  # kept as text, and warned of by the caller
        return None
    return decoded if isinstance(decoded, dict) else None


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


def _link_sources(
    note: dict[str, Any], fields_path: str, col: Collector, odd_metadata: list[str]
) -> tuple[dict[str, Any], str | None, list[tuple[str, str | NotALink]]]:
    """The provenance link keys of a note, read from its own keys and its ``metadata``
    object alike: ``(link keys -> value, the JSON path they are all at or None, unit refs)``.

    A key given in both places with different links is refused (rule ``consistent-links``);
    a ``metadata`` that is not an object (nor JSON text of one) is added to ``odd_metadata``.
    """
    metadata = note.get("metadata")
    meta_path = f"{fields_path}.metadata"
    if isinstance(metadata, str) and (decoded := metadata_object(metadata)) is not None:
        # Read for its links only, in a Chroma dump or a notes list copied from one: the
        # metadata is not copied into the store, so what else it holds is not checked.
        metadata = decoded
    if metadata is not None and not isinstance(metadata, dict):
        shown = f"{metadata!r:.60}" if isinstance(metadata, str) else _a_json_type(metadata)
        odd_metadata.append(f"{meta_path}: {shown}")
        metadata = None
    places = [(fields_path, note)] + ([(meta_path, metadata)] if metadata else [])
    merged: dict[str, Any] = {}
    paths: set[str] = set()
    for key in LINK_KEYS:
        given = [(where, place[key]) for where, place in places if place.get(key) is not None]
        if not given:
            continue
        (first_path, first), (last_path, last) = given[0], given[-1]
        if first != last and set(split_refs(first)) != set(split_refs(last)):
            col.add(
                _child_path(last_path, key),
                "consistent-links",
                f"{key!r} is given both here and at {_child_path(first_path, key)} "
                f"({first!r}), with other links: keep one, or give the same links in both "
                "(which is right cannot be told, and their union would claim coverage that "
                "neither place claims)",
                last,
            )
        merged[key] = last
        paths.update(where for where, _ in given)
    unit_refs = [ref for where, place in places for ref in unit_refs_from(place, where)]
    return merged, (paths.pop() if len(paths) == 1 else None), unit_refs


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
    odd_metadata: list[str],
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
    link_source, link_path, unit_refs = _link_sources(note, fields_path, col, odd_metadata)
    links = links_from(link_source)
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
            link_path=link_path,
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
    odd_metadata: list[str] = []
    #: Chroma notes whose document and metadata ``content`` differ (QA s50: the document's
    #: text was costed without a word).
    two_texts: list[str] = []
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
            content = (meta or {}).get("content")
            if isinstance(text, str) and isinstance(content, str) and text != content:
                two_texts.append(f"$.documents[{i}] vs $.metadatas[{i}].content")
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
                odd_metadata=odd_metadata,
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
                odd_metadata=odd_metadata,
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
    warnings: list[str] = []
    if two_texts:
        warnings.append(
            import_note(
                # The documents array: the message names each document and its content.
                common_path([t.split(" vs ")[0] for t in two_texts]),
                f"{len(two_texts)} note(s) have a Chroma document that differs from their "
                f"metadata's content: {first_few(two_texts, 5, '; ')}"
                + ". The text, and so the cost, is the document's (what Chroma stores and "
                "searches), not the content's",
                "document-differs",
            )
        )
    if odd_metadata:
        warnings.append(
            import_note(
                common_path([m.split(": ", 1)[0] for m in odd_metadata]),
                f"{len(odd_metadata)} note(s) have a 'metadata' that is neither an object nor "
                f"the JSON text of one: {first_few(odd_metadata, 5, '; ')}"
                + ". No provenance links are read from it (the note's own keys still are)",
                "metadata-unreadable",
            )
        )
    if warnings:
        meta["warnings"] = warnings
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
