"""Zep / Graphiti fact edges -> an external store.

Accepted inputs (``store.meta["format_version"]``):

=====================  =======================================================================
``graphiti-edges``     a list of ``EntityEdge.model_dump(mode="json")`` dicts (``uuid``,
                       ``fact``, ``episodes``, ``created_at``, ``valid_at``, ``invalid_at``,
                       ``expired_at``, ...), or ``{"edges": [...], "episodes": [...],
                       "nodes": [...]}`` holding them with episodic / entity nodes
``zep-v4``             the same with Zep Cloud v4 field names (``episode_uuids``,
                       ``graph_uuid``, ``source_node_name`` ...)
=====================  =======================================================================

One memory per edge: id ``uuid``, text ``fact``. Graphiti is bi-temporal and keeps
contradicted facts, so does this importer:

- ``expired_at`` set (system time: the store invalidated it) -> the fact is **superseded**:
  kept, ``status="superseded"``, with ``valid_at`` / ``invalid_at`` / ``expired_at`` in meta.
- ``invalid_at`` alone (world time: "lived in Berlin until 2022") is *not* a deletion or a
  supersession: the edge stays ``active``; the times are in meta.

Provenance: the explicit link keys of the edge's ``attributes`` (its custom data), those in
:data:`ATTRIBUTE_LINK_KEYS` (``unit_ids``, ``dia_id``, ``dia_ids``, ``evidence_ids``; a unit id
naming no unit of the package is refused, rule ``known-unit``; ``attributes`` that is not an
object is refused, rule ``type``). Graphiti fills ``attributes`` with the edge type's
LLM-extracted domain fields, so the other link keys a Mem0 ``metadata`` may use (``unit``,
``experience``, ``session`` ...) are facts there, not links (review s49 #3: ``{"unit": "kg"}``
refused the import). Links under those keys are the fact's own, so when there are any they
alone give its coverage (exact). Otherwise the edge's episode uuids and those of the episodes
whose ``entity_edges`` name the edge (listed in ``meta["episodes_from_entity_edges"]``), plus,
when the dump includes ``episodes``, their names (and ``episode_metadata`` links such as
``dia_id``), so a package whose experiences are named like the episodes gets coverage from them
(an upper estimate: every unit the episode names). An episode none of whose names matches the
package is reported in ``store.meta["warnings"]``, and so are edge ids that episodes'
``entity_edges`` name but the dump lacks (the dump may be partial). Entity-node summaries are
not memories; their count is ``store.meta["node_summaries"]``.

Times (``created_at`` and the three above) are ISO-8601 strings: a number or another JSON
type is refused (rule ``type``; a bare 12345 would otherwise read as 1970), a string that does
not parse is kept as text and said.

``score`` (v4: ``relevance``) becomes the salience; one that is not a finite number is refused
(rule ``finite``), as Mem0's. A v3 field that is null falls back to its v4 name
(``episodes`` -> ``episode_uuids``, ``score`` -> ``relevance``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..package import Package, Store, json_type
from ._common import (
    UNIT_LINK_KEYS,
    Collector,
    NotALink,
    Record,
    build_store,
    clean_meta,
    common_path,
    fail,
    finite_number,
    links_from,
    load_json_file,
    normalise_time,
    note,
    split_refs,
    time_is_text,
    unit_refs_from,
)

#: The keys of an edge's ``attributes`` read as provenance links: only explicit link keys that
#: an LLM-extracted domain field would not use (Graphiti's ``attributes`` are the edge type's
#: extracted fields, so ``unit``, ``units``, ``experience`` or ``session`` there are facts).
ATTRIBUTE_LINK_KEYS = ("unit_ids", "dia_id", "dia_ids", "evidence_ids")
#: Where this importer reads unit links, as its ``known-unit`` problems say (QA s51: they
#: listed Mem0's keys, and following them gave no coverage).
UNIT_LINK_KEYS_READ = (
    (".attributes", "in an edge's attributes (read under " + ", ".join(ATTRIBUTE_LINK_KEYS) + ")"),
    (".episode_metadata", "in an episode's metadata (under " + ", ".join(UNIT_LINK_KEYS) + ")"),
)

_V4_FIELDS = (
    "episode_uuids",
    "graph_uuid",
    "source_node_name",
    "target_node_name",
    "hyperedge_uuid",
)
_KEEP = (
    "name",
    "group_id",
    "graph_uuid",
    "source_node_uuid",
    "target_node_uuid",
    "source_node_name",
    "target_node_name",
    "attributes",
    "scope",
    "reference_time",
)


def _v3_or_v4(edge: dict[str, Any], v3: str, v4: str) -> Any:
    """The Graphiti (v3) field, or Zep v4's name for it when the v3 one is absent or null
    (CLI QA: ``"episodes": null`` hid ``episode_uuids``)."""
    value = edge.get(v3)
    return value if value is not None else edge.get(v4)


def _episode_links(
    episodes: list[Any], col: Collector
) -> tuple[
    dict[str, list[str]],
    dict[str, list[str]],
    dict[str, list[str]],
    dict[str, list[tuple[str, str | NotALink]]],
]:
    """Per episode uuid its names (uuid, name, metadata links); per edge uuid the episodes
    whose ``entity_edges`` name it; per edge uuid the ``entity_edges`` paths naming it; per
    episode uuid its metadata's unit links (:func:`unit_refs_from`)."""
    out: dict[str, list[str]] = {}
    unit_refs: dict[str, list[tuple[str, str | NotALink]]] = {}
    named: dict[str, list[str]] = {}
    where: dict[str, list[str]] = {}
    for i, ep in enumerate(episodes):
        if not isinstance(ep, dict):
            col.add(f"$.episodes[{i}]", "type", "each episode must be an object", json_type(ep))
            continue
        uuid = ep.get("uuid")
        if not isinstance(uuid, str):
            continue
        refs = [uuid]
        if isinstance(ep.get("name"), str):
            refs.append(ep["name"])
        refs += links_from(ep.get("episode_metadata"))
        out[uuid] = refs
        unit_refs[uuid] = unit_refs_from(
            ep.get("episode_metadata"), f"$.episodes[{i}].episode_metadata"
        )
        for edge_id in split_refs(ep.get("entity_edges")):
            if uuid not in named.setdefault(edge_id, []):
                named[edge_id].append(uuid)
            where.setdefault(edge_id, []).append(f"$.episodes[{i}].entity_edges")
    return out, named, where, unit_refs


def _missing_edges_warning(where: dict[str, list[str]], dumped: set[str]) -> str | None:
    """A warning for the edge ids that episodes' ``entity_edges`` name but the dump lacks.

    QA s41 defect 2: a paginated dump cut short (Zep's list endpoints page by <= 100) left
    edges out without a word, while Letta says when agents name blocks the file lacks.
    """
    by_path: dict[str, list[str]] = {}
    for edge_id, paths in where.items():
        if edge_id in dumped:
            continue
        for p in dict.fromkeys(paths):
            by_path.setdefault(p, []).append(edge_id)
    if not by_path:
        return None
    missing = {e for ids in by_path.values() for e in ids}
    shown: list[str] = []
    left = 10  # ids named in the message at most, over all paths
    for p, ids in by_path.items():
        if left <= 0:
            break
        shown.append(f"{p}: {', '.join(repr(e) for e in ids[:left])}")
        left -= len(ids)
    more = " ..." if left < 0 or len(shown) < len(by_path) else ""
    return note(
        # The episodes naming them: the message names each place.
        common_path(by_path),
        f"{len(missing)} edge id(s) named in episodes' entity_edges are not among the "
        f"dumped edges ({'; '.join(shown)}{more}): the "
        "dump may be partial (a paginated dump cut short?), so those facts are not in the "
        "store",
        "edges-missing",
    )


def load_zep_store(
    path: str | Path,
    *,
    cost_rule: str = "words",
    store_id: str | None = None,
    package: Package | None = None,
) -> Store:
    """Read Graphiti / Zep fact edges into a store (superseded facts kept and marked).

    Parameters
    ----------
    path : str or Path
    cost_rule, store_id, package
        As :func:`memaudit_core.importers.load_external_store`.

    Returns
    -------
    Store

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "edges.json"
    >>> edges = [{"uuid": "e1", "fact": "Alice lives in Berlin",
    ...           "valid_at": "2023-06-01T00:00:00Z", "invalid_at": "2024-03-01T00:00:00Z",
    ...           "expired_at": "2024-03-01T10:00:05Z"},
    ...          {"uuid": "e2", "fact": "Alice lives in Lisbon"}]
    >>> _ = f.write_text(json.dumps(edges))
    >>> [(m.id, m.status) for m in load_zep_store(f).memories]
    [('e1', 'superseded'), ('e2', 'active')]
    """
    source = str(path)
    doc = load_json_file(path)
    col = Collector(source)
    episodes: dict[str, list[str]] = {}
    named_by: dict[str, list[str]] = {}
    named_where: dict[str, list[str]] = {}
    episode_unit_refs: dict[str, list[tuple[str, str | NotALink]]] = {}
    n_summaries = 0
    if isinstance(doc, list):
        edges, base = doc, "$"
    elif isinstance(doc, dict) and "edges" in doc:
        edges, base = doc["edges"], "$.edges"
        if not isinstance(edges, list):
            fail(source, "$.edges", "type", "'edges' must be an array", json_type(edges))
        # QA s51: episodes or nodes that were no array were skipped without a word, and with
        # them the episodes' provenance (F = 0), where edges that are no array are refused.
        for key in ("episodes", "nodes"):
            if doc.get(key) is not None and not isinstance(doc[key], list):
                col.add(f"$.{key}", "type", f"{key!r} must be an array", json_type(doc[key]))
        if isinstance(doc.get("episodes"), list):
            episodes, named_by, named_where, episode_unit_refs = _episode_links(
                doc["episodes"], col
            )
        nodes = doc.get("nodes")
        if isinstance(nodes, list):
            n_summaries = sum(1 for n in nodes if isinstance(n, dict) and n.get("summary"))
    else:
        fail(
            source,
            "$",
            "zep-shape",
            "a Zep / Graphiti export must be a list of edges or an object with 'edges'",
            json_type(doc) if not isinstance(doc, dict) else sorted(doc),
        )
    version = "graphiti-edges"
    if any(isinstance(e, dict) and any(k in e for k in _V4_FIELDS) for e in edges):
        version = "zep-v4"

    records: list[Record] = []
    superseded = 0
    unreadable: list[str] = []
    unit_ids = {u.id for u in package.units} if package is not None else set()
    unread_links: list[str] = []
    for i, edge in enumerate(edges):
        epath = f"{base}[{i}]"
        if not isinstance(edge, dict):
            col.add(epath, "type", "each edge must be an object", json_type(edge))
            continue
        if "fact" not in edge:
            col.add(
                f"{epath}.fact",
                "required",
                "an edge needs its 'fact' text (is this a node or another system's export?)",
            )
            continue
        attributes = edge.get("attributes")
        if attributes is not None and not isinstance(attributes, dict):
            # Graphiti's EntityEdge.attributes is a dict; links in anything else would be lost.
            col.add(
                f"{epath}.attributes",
                "type",
                "an edge's attributes must be an object or null",
                json_type(attributes),
            )
            continue
        meta: dict[str, Any] = {"kind": "edge"}
        for key in _KEEP:
            if edge.get(key) not in (None, {}, []):
                meta[key] = clean_meta(edge[key])
        bad_time = False
        for key in ("created_at", "valid_at", "invalid_at", "expired_at"):
            raw = edge.get(key)
            if raw is None or (isinstance(raw, str) and not raw.strip()):
                # An empty time is no time, as null is (importer QA: expired_at "" was
                # called unreadable yet "marks the fact superseded", and did not).
                continue
            # Importer QA: 12345 was read as epoch seconds (1970) and, under expired_at,
            # marked the fact superseded without a word.
            if not time_is_text(
                col, f"{epath}.{key}", raw, "a Graphiti / Zep time is an ISO-8601 string (or null)"
            ):
                bad_time = True
                continue
            if key == "created_at":  # read below as the memory's time (said there if unreadable)
                continue
            t = normalise_time(raw)
            if t.iso is None:
                unreadable.append(f"{epath}.{key}")
            meta[key] = t.iso if t.iso else raw
        if bad_time:
            continue
        status = "active"
        if isinstance(edge.get("expired_at"), str) and edge["expired_at"].strip():
            status = "superseded"
            superseded += 1
        ep_ids = split_refs(_v3_or_v4(edge, "episodes", "episode_uuids"))
        # QA s39 defect 11: an edge with empty 'episodes' that an episode names in its
        # 'entity_edges' had no provenance; both directions of the link are read.
        from_episodes = [ep for ep in named_by.get(str(edge.get("uuid")), []) if ep not in ep_ids]
        if from_episodes:
            meta["episodes_from_entity_edges"] = from_episodes
            ep_ids = ep_ids + from_episodes
        # QA s49: links in the edge's own custom data (Graphiti keeps it in `attributes`,
        # EXPORT_FORMATS 4.1) were ignored, even a unit id naming no unit. They say what this
        # fact states, as a Mem0 memory's metadata does, so they alone give its coverage
        # (exact); its episodes' links say only what the episode held (an upper estimate).
        own = {k: attributes[k] for k in ATTRIBUTE_LINK_KEYS if k in (attributes or {})}
        unread_links.extend(_unread_unit_links(attributes, f"{epath}.attributes", unit_ids))
        links = links_from(own)
        groups: list[list[str]] = [[ref] for ref in links]
        inherited = not links
        if inherited:
            for ep in ep_ids:
                # An episode matches through its uuid, its name or its metadata's links.
                groups.append(episodes.get(ep, [ep]))
                for ref in groups[-1]:
                    if ref not in links:
                        links.append(ref)
        if ep_ids:
            meta["episodes"] = ep_ids
        score_key = "score" if edge.get("score") is not None else "relevance"
        salience = None
        if edge.get(score_key) is not None:
            salience = finite_number(edge[score_key])
            if salience is None:
                # As Mem0's score (CLI QA: "high" or NaN was dropped silently).
                col.add(
                    f"{epath}.{score_key}",
                    "finite",
                    f"{score_key} must be a finite number",
                    edge[score_key],
                )
        created = normalise_time(edge.get("created_at"))
        records.append(
            Record(
                id=edge.get("uuid"),
                text=edge.get("fact"),
                path=epath,
                text_path=f"{epath}.fact",
                id_path=f"{epath}.uuid",
                created_at=created.iso,
                time_raw=created.raw,
                salience=salience,
                status=status,
                meta=meta,
                links=links,
                links_inherited=inherited,
                link_groups=groups,
                link_source=own,
                link_path=f"{epath}.attributes",
                # Every unit link is checked, also an episode's the edge's own links outrank.
                unit_refs=unit_refs_from(own, f"{epath}.attributes")
                + [r for ep in ep_ids for r in episode_unit_refs.get(ep, [])],
            )
        )
    meta = {
        "deleted": [],
        "superseded": superseded,
        "episodes": len(episodes),
        "node_summaries": n_summaries,
    }
    warnings: list[str] = []
    if unreadable:
        warnings.append(
            note(
                common_path(unreadable),
                f"{len(unreadable)} time(s) do not parse as ISO-8601 (first: {unreadable[0]}); "
                "kept as text in meta, and an unreadable expired_at still marks the fact "
                "superseded",
                "time-unreadable",
            )
        )
    if unread_links:
        # QA s51: "u:seat" under attributes.unit gave no coverage (F = 0) without a word.
        warnings.append(
            note(
                common_path([u.split(" = ", 1)[0] for u in unread_links]),
                f"{len(unread_links)} edge attribute(s) name a unit of the package under a key "
                f"that is not read as a link (first: {unread_links[0]}): an edge's attributes "
                f"link only under {', '.join(ATTRIBUTE_LINK_KEYS)} (other keys are the edge "
                "type's own facts), so these give no coverage; rename the key to unit_ids to "
                "make them links",
                "link-key-unread",
            )
        )
    dumped = {str(e["uuid"]) for e in edges if isinstance(e, dict) and e.get("uuid") is not None}
    partial = _missing_edges_warning(named_where, dumped)
    if partial:
        warnings.append(partial)
    if warnings:
        meta["warnings"] = warnings
    return build_store(
        records,
        collector=col,
        system="zep",
        format_version=version,
        cost_rule=cost_rule,
        store_id=store_id,
        package=package,
        label="Zep / Graphiti export",
        meta=meta,
        doc=doc,
        unit_link_keys=UNIT_LINK_KEYS_READ,
    )


def _unread_unit_links(attributes: Any, path: str, unit_ids: set[str]) -> list[str]:
    """``PATH = 'value'`` for each value under a Mem0-style link key of ``attributes`` that
    this importer does not read (:data:`~._common.UNIT_LINK_KEYS` but not
    :data:`ATTRIBUTE_LINK_KEYS`) and that is exactly a unit id of the package: such a value
    is most likely a link the writer meant, yet it gives no coverage."""
    if not isinstance(attributes, dict) or not unit_ids:
        return []
    out = []
    for key in UNIT_LINK_KEYS:
        if key in ATTRIBUTE_LINK_KEYS or key not in attributes:
            continue
        value = attributes[key]
        values = value if isinstance(value, list) else [value]
        for j, v in enumerate(values):
            if isinstance(v, str) and v in unit_ids:
                here = f"{path}.{key}" + (f"[{j}]" if isinstance(value, list) else "")
                out.append(f"{here} = {v!r}")
    return out
