"""Letta / MemGPT exports -> an external store.

Accepted inputs (``store.meta["format_version"]``):

===================  =========================================================================
``af-v2``            Agent File, current layout: top-level ``agents`` and ``blocks`` (with
                     ``metadata.revision_id`` recorded when present)
``af-legacy``        Agent File, letta 0.6.x layout: a single agent with ``core_memory``
                     (its ``version`` is recorded)
``passages``         the archival-memory REST list (``GET /v1/agents/{id}/archival-memory``):
                     a list of passages with ``text`` (or ``{"passages": [...]}``); an item
                     without ``text`` that carries an A-Mem note's own keys (``keywords``,
                     ``links``, ``retrieval_count`` ...) is refused (rule ``format-hint``)
===================  =========================================================================

Agent files that are JSON-encoded twice (the file decodes to a string holding JSON) are
decoded again (``store.meta["double_encoded"]``).

Memories:

- **core memory**: each block ``value`` is split into lines; every non-empty line is one memory
  with id ``block-<label>-<k>`` (``k`` counts the block's non-empty lines from 0). When two
  blocks share a label, the second one's ids read ``block-<label>.2-<k>`` and so on, skipping
  a suffix that is itself a label in the file (labels ``a``, ``a``, ``a.2`` give ``a``,
  ``a.3``, ``a.2``). A block whose value is empty yields no memory (a block is a container,
  not a memory). An agent's ``block_ids`` naming no block of the file are reported in
  ``store.meta["warnings"]``.
- **archival passages**: one memory per passage (its ``id``; ``text``). A passage with
  ``is_deleted: true`` (or 1) is not part of the store as kept; it is listed in
  ``store.meta["deleted"]``. An ``is_deleted`` other than true, false, 0 or 1 is refused (rule
  ``type``): the string ``"false"`` must not read as deleted. Embeddings are dropped. Links
  come from ``metadata`` (or ``metadata_``); a tag is a link only when it names a unit,
  experience or turn of the package (a ``dia_id`` as a tag), else it is a topic label
  (``preferences``), kept in ``meta["tags"]`` and not reported as a link that names nothing.
- **messages** (recall memory) are not memories: ``store.meta["messages"]`` counts them, and
  ``store.meta["memory_edits"]`` counts memory-editing tool calls (``core_memory_replace``,
  ``core_memory_append``, ``memory_replace``, ``memory_insert``, ``archival_memory_insert``...).

Times are UTC ISO; legacy naive times are read as UTC (as the Agent File writer produced them).
A time that is not a string (a number, a boolean) is refused (rule ``type``): 12345 would
otherwise read as 1970.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import cut_repr, id_text
from ..package import Package, Store, json_type
from ._common import (
    FORMAT_HINTS,
    Collector,
    Record,
    build_store,
    clean_meta,
    common_path,
    fail,
    first_few,
    links_from,
    load_json_file,
    normalise_time,
    note,
    parse_json,
    time_is_text,
    unit_refs_from,
)
from .amem import NOTE_FIELDS

_EDIT_TOOLS = (
    "core_memory_replace",
    "core_memory_append",
    "memory_replace",
    "memory_insert",
    "memory_rethink",
    "memory_apply_patch",
    "archival_memory_insert",
)


#: Keys of an A-Mem ``MemoryNote`` (EXPORT_FORMATS 3.1; ``importance_score`` from the paper
#: repo) that neither a Letta ``Passage`` (2.4) nor Letta's archival search tool result
#: (``{id, timestamp, content, tags}``) has: the note's fields but ``tags``.
_AMEM_ONLY_KEYS = frozenset(NOTE_FIELDS) - {"tags"}


def _amem_note_index(items: list[Any]) -> int | None:
    """The index of the first item that is an A-Mem note rather than a Letta passage, or None.

    QA s41 defect 1: A-Mem notes read as format 'letta' were scored (their ``content`` taken
    as passage text, their top-level ``dia_id`` links lost) with only a warning, where every
    other wrong format is refused. The rule, from the real shapes (EXPORT_FORMATS 2.4, 3.1):
    an item without ``text`` whose ``content`` is read as its text is an A-Mem note when it
    carries a key only a MemoryNote has (:data:`_AMEM_ONLY_KEYS`). An item of only ``id``,
    ``timestamp``, ``content`` and ``tags`` is genuinely ambiguous (Letta's archival search
    tool returns exactly that, and it is a subset of a note): it is read as Letta and the
    "looks like A-Mem notes" warning stays.
    """
    for i, p in enumerate(items):
        if (
            isinstance(p, dict)
            and "text" not in p
            and "content" in p
            and _AMEM_ONLY_KEYS & p.keys()
        ):
            return i
    return None


def _decode_twice(doc: Any, source: str) -> tuple[Any, bool]:
    if isinstance(doc, str):
        return parse_json(doc, f"{source} (decoded string)"), True
    return doc, False


def _times_are_text(item: dict[str, Any], keys: tuple[str, ...], path: str, col: Collector) -> bool:
    """Letta writes ISO strings (the agent-side ``timestamp`` a formatted one): a number would
    be read as epoch seconds, 12345 as 1970, unsaid (QA s46, as Zep and Mem0)."""
    return all(
        [
            time_is_text(col, f"{path}.{key}", item.get(key), "a Letta time is a string (or null)")
            for key in keys
        ]
    )


def _block_records(
    blocks: list[Any], base: str, col: Collector, warnings: list[str]
) -> tuple[list[Record], dict[str, int]]:
    records: list[Record] = []
    empty: list[str] = []
    empty_at: list[str] = []
    label_seen: dict[str, int] = {}
    # A generated tag must not be another block's real label (CLI QA: labels a, a, a.2 gave
    # the second "a" and "a.2" the same ids).
    taken = {b["label"] for b in blocks if isinstance(b, dict) and isinstance(b.get("label"), str)}
    for b, block in enumerate(blocks):
        bpath = f"{base}[{b}]"
        if not isinstance(block, dict):
            col.add(bpath, "type", "each block must be an object", json_type(block))
            continue
        label = block.get("label")
        if not isinstance(label, str) or not label.strip():
            col.add(f"{bpath}.label", "required", "a block needs a string 'label'", label)
            continue
        value = block.get("value")
        if value is None:
            col.add(f"{bpath}.value", "required", "a block needs a 'value' (its text)")
            continue
        if not isinstance(value, str):
            col.add(f"{bpath}.value", "type", "a block's value must be a string", json_type(value))
            continue
        label_seen[label] = label_seen.get(label, 0) + 1
        tag = label
        if label_seen[label] > 1:
            n = label_seen[label]
            while f"{label}.{n}" in taken:
                n += 1
            tag = f"{label}.{n}"
            taken.add(tag)
        if not _times_are_text(block, ("created_at", "updated_at"), bpath, col):
            continue
        t = normalise_time(block.get("created_at") or block.get("updated_at"), naive_is_utc=True)
        meta_key = "metadata" if "metadata" in block else "metadata_"
        meta_src = block.get(meta_key)
        block_unit_refs = unit_refs_from(meta_src, f"{bpath}.{meta_key}")
        if not value.strip():
            empty.append(f"{bpath} {label!r}")
            empty_at.append(bpath)
        k = 0
        for n, line in enumerate(value.split("\n")):
            if not line.strip():
                continue
            records.append(
                Record(
                    id=f"block-{tag}-{k}",
                    text=line.strip(),
                    path=bpath,
                    text_path=f"{bpath}.value (line {n + 1})",
                    created_at=t.iso,
                    time_raw=t.raw,
                    meta={
                        "kind": "block_line",
                        "block": block.get("id"),
                        "label": label,
                        "line": n + 1,
                        **({"limit": block["limit"]} if "limit" in block else {}),
                        **({"read_only": block["read_only"]} if block.get("read_only") else {}),
                    },
                    links=links_from(meta_src),
                    link_source=meta_src,
                    unit_refs=block_unit_refs,
                    # The block's links, not this line's: an upper estimate (CLI QA).
                    links_inherited=True,
                )
            )
            k += 1
    if empty:
        # Importer QA: a block of only whitespace gave no memory without a word (an empty
        # Mem0 text is refused; an empty block is normal in Letta, so it is said, not refused).
        warnings.append(
            note(
                common_path(empty_at),
                f"{len(empty)} block(s) hold no text ({first_few(empty, 10, '; ')}): no "
                "memories from them",
                "block-empty",
            )
        )
    return records, label_seen


def _message_text(msg: dict[str, Any]) -> str:
    content = msg.get("content", msg.get("text"))
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _count_messages(messages: Any, path: str, col: Collector) -> tuple[int, dict[str, int], int]:
    """(messages, per-role counts, memory-edit tool calls).

    Messages are only counted, but a wrong type is still named: ``"messages": "oops"`` read
    as 0 messages, and ``"tool_calls": 3`` stopped the import with a TypeError (importer QA).
    """
    if messages is None:
        return 0, {}, 0
    if not isinstance(messages, list):
        col.add(path, "type", "'messages' must be an array of messages", json_type(messages))
        return 0, {}, 0
    roles: dict[str, int] = {}
    edits = 0
    for k, msg in enumerate(messages):
        if not isinstance(msg, dict):
            col.add(f"{path}[{k}]", "type", "each message must be an object", json_type(msg))
            continue
        role = str(msg.get("role", "?"))
        roles[role] = roles.get(role, 0) + 1
        calls = msg.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            col.add(
                f"{path}[{k}].tool_calls", "type", "'tool_calls' must be an array", json_type(calls)
            )
            continue
        for call in calls or []:
            if not isinstance(call, dict):
                continue
            fn = call.get("function") if isinstance(call.get("function"), dict) else {}
            name = fn.get("name") or call.get("name")
            if name in _EDIT_TOOLS:
                edits += 1
    return sum(roles.values()), roles, edits


def _passage_records(
    items: list[Any], base: str, col: Collector
) -> tuple[list[Record], list[dict[str, Any]]]:
    records: list[Record] = []
    deleted: list[dict[str, Any]] = []
    for i, p in enumerate(items):
        ppath = f"{base}[{i}]"
        if not isinstance(p, dict):
            col.add(ppath, "type", "each passage must be an object", json_type(p))
            continue
        text_key = "text" if "text" in p or "content" not in p else "content"
        if not _times_are_text(p, ("created_at", "timestamp", "updated_at"), ppath, col):
            continue
        t = normalise_time(p.get("created_at") or p.get("timestamp"), naive_is_utc=True)
        meta: dict[str, Any] = {"kind": "passage"}
        for key in (
            "archive_id",
            "file_id",
            "file_name",
            "source_id",
            "tags",
            "metadata",
            "updated_at",
        ):
            if p.get(key) not in (None, [], {}):
                meta[key] = clean_meta(p[key])
        if p.get("metadata_") and "metadata" not in meta:
            meta["metadata"] = clean_meta(p["metadata_"])
        raw_tags = p.get("tags")
        if raw_tags is not None and not (
            isinstance(raw_tags, list) and all(isinstance(t, str) for t in raw_tags)
        ):
            # A string was read letter by letter, each letter an unresolved link (QA).
            col.add(f"{ppath}.tags", "type", "'tags' must be an array of strings", raw_tags)
            continue
        meta_key = "metadata" if p.get("metadata") else "metadata_"
        link_source = p.get(meta_key)
        links = links_from(link_source)
        # Metadata links are provenance; tags may be (a dia_id as a tag, QA s18b) or may not
        # ("preferences"): build_store reads a tag as a link only when it names something of
        # the package (QA s50: topic tags were warned of as broken links).
        tags = [(f"{ppath}.tags[{k}]", t) for k, t in enumerate(raw_tags or []) if t not in links]
        flag = p.get("is_deleted")
        if flag is not None and not (isinstance(flag, bool) or flag in (0, 1)):
            # "false" or "0" would read as deleted, dropping a live memory (CLI QA).
            col.add(f"{ppath}.is_deleted", "type", "must be true, false, 0 or 1 (or absent)", flag)
            continue
        if flag:
            deleted.append(
                {
                    "id": p.get("id"),
                    "text": p.get(text_key),
                    "status": "deleted",
                    "deleted_at": normalise_time(p.get("updated_at")).iso,
                }
            )
            continue
        records.append(
            Record(
                id=p.get("id"),
                text=p.get(text_key),
                path=ppath,
                text_path=f"{ppath}.{text_key}",
                text_from=p,
                text_keys=("text", "content"),
                created_at=t.iso,
                time_raw=t.raw,
                meta=meta,
                links=links,
                link_source=link_source,
                link_path=f"{ppath}.{meta_key}",
                tag_links=tags,
                unit_refs=unit_refs_from(link_source, f"{ppath}.{meta_key}"),
            )
        )
    return records, deleted


def load_letta_store(
    path: str | Path,
    *,
    cost_rule: str = "words",
    store_id: str | None = None,
    package: Package | None = None,
) -> Store:
    """Read a Letta Agent File (``.af``, v2 or legacy) or an archival-passages dump.

    Parameters
    ----------
    path : str or Path
    cost_rule, store_id, package
        As :func:`memaudit_core.importers.load_external_store`.

    Returns
    -------
    Store
        Block lines and/or passages; ``meta["messages"]`` counts the recall messages.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "a.af"
    >>> af = {"agents": [{"id": "agent-0", "block_ids": ["block-0"], "messages": []}],
    ...       "blocks": [{"id": "block-0", "label": "human", "value": "Name: Sam\\nLikes tea"}]}
    >>> _ = f.write_text(json.dumps(json.dumps(af)))  # double-encoded, as some files are
    >>> s = load_letta_store(f)
    >>> [m.id for m in s.memories], s.meta["double_encoded"]
    (['block-human-0', 'block-human-1'], True)
    """
    source = str(path)
    doc, twice = _decode_twice(load_json_file(path), source)
    col = Collector(source)
    meta: dict[str, Any] = {"double_encoded": twice}
    records: list[Record] = []
    deleted: list[dict[str, Any]] = []

    if isinstance(doc, dict) and "agents" in doc:
        agents = doc["agents"]
        if not isinstance(agents, list):
            fail(source, "$.agents", "type", "'agents' must be an array", json_type(agents))
        blocks = doc.get("blocks", [])
        if not isinstance(blocks, list):
            fail(source, "$.blocks", "type", "'blocks' must be an array", json_type(blocks))
        revision = (
            (doc.get("metadata") or {}).get("revision_id")
            if isinstance(doc.get("metadata"), dict)
            else None
        )
        version = "af-v2"
        meta["revision_id"] = revision
        block_warnings: list[str] = []
        records, labels = _block_records(blocks, "$.blocks", col, block_warnings)
        n_msgs, roles, edits = 0, {}, 0
        block_ids = {
            b["id"] for b in blocks if isinstance(b, dict) and isinstance(b.get("id"), str)
        }
        unknown_blocks: list[str] = []
        unknown_at: list[str] = []
        held: set[str] = set()
        for a, agent in enumerate(agents):
            if not isinstance(agent, dict):
                col.add(f"$.agents[{a}]", "type", "each agent must be an object", json_type(agent))
                continue
            wanted = agent.get("block_ids")
            if wanted is not None and not isinstance(wanted, list):
                col.add(
                    f"$.agents[{a}].block_ids",
                    "type",
                    "'block_ids' must be an array of block ids",
                    json_type(wanted),
                )
            for j, bid in enumerate(wanted if isinstance(wanted, list) else []):
                if isinstance(bid, str):
                    held.add(bid)
                if not isinstance(bid, str) or bid not in block_ids:
                    # The agent's core memory holds a block the file lacks (CLI QA: ignored).
                    unknown_blocks.append(f"$.agents[{a}].block_ids[{j}] {cut_repr(bid)}")
                    unknown_at.append(f"$.agents[{a}].block_ids[{j}]")
            n, r, e = _count_messages(agent.get("messages"), f"$.agents[{a}].messages", col)
            n_msgs += n
            edits += e
            for k, v in r.items():
                roles[k] = roles.get(k, 0) + v
        meta.update(
            agents=[a.get("name") or a.get("id") for a in agents if isinstance(a, dict)],
            blocks=len(blocks),
            messages=n_msgs,
            message_roles=roles,
            memory_edits=edits,
        )
        if unknown_blocks:
            block_warnings.append(
                note(
                    common_path(unknown_at),
                    f"{len(unknown_blocks)} block id(s) of the agents name no block in 'blocks' "
                    f"({first_few(unknown_blocks, 10, '; ')}):"
                    " those blocks are not in the file, so their memories are not in the store",
                    "block-unknown",
                )
            )
        # Importer QA: several agents, and blocks no agent holds, became one store unsaid.
        named = [str(a.get("name") or a.get("id")) for a in agents if isinstance(a, dict)]
        if len(named) > 1:
            block_warnings.append(
                note(
                    "$.agents",
                    f"the file holds {len(named)} agents ({first_few(named, 10, show=id_text)}): "
                    "their blocks are one store here; export one agent to score one agent's "
                    "memory",
                    "several-agents",
                )
            )
        if any(isinstance(a, dict) and isinstance(a.get("block_ids"), list) for a in agents):
            orphans = sorted(block_ids - held)
            if orphans:
                first = next(
                    i
                    for i, b in enumerate(blocks)
                    if isinstance(b, dict) and b.get("id") in orphans
                )
                block_warnings.append(
                    note(
                        f"$.blocks[{first}]",
                        f"{len(orphans)} block(s) of the file belong to no agent's block_ids "
                        f"({first_few(orphans, 10)}): they are counted as memory",
                        "block-orphan",
                    )
                )
        if block_warnings:
            meta["warnings"] = block_warnings
        for key in ("passages", "archival_memory"):  # not in .af today, but accept if present
            if isinstance(doc.get(key), list):
                more, gone = _passage_records(doc[key], f"$.{key}", col)
                records += more
                deleted += gone
    elif isinstance(doc, dict) and "core_memory" in doc:
        blocks = doc["core_memory"]
        if not isinstance(blocks, list):
            fail(
                source,
                "$.core_memory",
                "type",
                "'core_memory' must be an array of blocks",
                json_type(blocks),
            )
        version = "af-legacy"
        meta["letta_version"] = doc.get("version")
        block_warnings = []
        records, _ = _block_records(blocks, "$.core_memory", col, block_warnings)
        if block_warnings:
            meta["warnings"] = block_warnings
        n, roles, edits = _count_messages(doc.get("messages"), "$.messages", col)
        meta.update(
            agents=[doc.get("name")],
            blocks=len(blocks),
            messages=n,
            message_roles=roles,
            memory_edits=edits,
        )
    elif isinstance(doc, list) or (isinstance(doc, dict) and isinstance(doc.get("passages"), list)):
        items, base = (doc, "$") if isinstance(doc, list) else (doc["passages"], "$.passages")
        if items and all(
            isinstance(p, dict) and "text" not in p and "content" not in p for p in items
        ):
            fail(
                source,
                f"{base}[0].text",
                "required",
                "a passage needs its 'text' (is this a Letta archival-memory list?)",
            )
        amem_at = _amem_note_index(items)
        if amem_at is not None:
            keys = sorted(_AMEM_ONLY_KEYS & items[amem_at].keys())
            fail(
                source,
                f"{base}[{amem_at}]",
                "format-hint",
                f"this file looks like {FORMAT_HINTS['amem']}, not an export of format 'letta': "
                f"this item has 'content' but no 'text' and carries A-Mem note keys "
                f"({', '.join(keys)}) that no Letta passage has",
            )
        version = "passages"
        records, deleted = _passage_records(items, base, col)
        meta["messages"] = 0
    else:
        fail(
            source,
            "$",
            "letta-shape",
            "not a Letta export: expected an Agent File with 'agents' (v2) or 'core_memory' "
            "(legacy), or a list of archival passages",
            json_type(doc) if not isinstance(doc, dict) else sorted(doc)[:8],
        )
    meta["deleted"] = deleted
    return build_store(
        records,
        collector=col,
        system="letta",
        format_version=version,
        cost_rule=cost_rule,
        store_id=store_id,
        package=package,
        label="Letta export",
        meta=meta,
        doc=doc,
    )


def message_texts(path: str | Path) -> list[str]:
    """The recall messages' texts of an Agent File (reported separately, never memories)."""
    doc, _ = _decode_twice(load_json_file(path), str(path))
    msgs: list[Any] = []
    if isinstance(doc, dict) and isinstance(doc.get("agents"), list):
        for agent in doc["agents"]:
            if isinstance(agent, dict) and isinstance(agent.get("messages"), list):
                msgs += agent["messages"]
    elif isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        msgs = doc["messages"]
    out = []
    for m in msgs:
        if isinstance(m, dict):
            text = _message_text(m)
            try:  # legacy user turns are JSON strings {"type": "user_message", "message": ...}
                inner = json.loads(text)
                if isinstance(inner, dict) and isinstance(inner.get("message"), str):
                    text = inner["message"]
            except (ValueError, TypeError, RecursionError):
                pass
            out.append(text)
    return out
