"""OpenMemory backups, read as a ``mem0`` store (``format_version`` ``"openmemory"``).

:func:`memaudit_core.importers.mem0.load_mem0_store` hands a backup here; what is accepted and
what each state becomes is documented in :mod:`memaudit_core.importers.mem0` (section
"OpenMemory backups"). The shapes are those OpenMemory's ``POST /api/v1/backup/export``
wrote (``openmemory/api/app/routers/backup.py`` in ``mem0ai/mem0``, removed from the
monorepo in 2026; EXPORT_FORMATS 1.7):

- ``memories.json``: ``{"user", "apps", "categories", "memories", "memory_categories",
  "status_history", "access_controls", "export_meta"}``, each memory ``{"id", "user_id",
  "app_id", "content", "metadata", "state", "created_at", "updated_at", "archived_at",
  "deleted_at", "category_ids"}``;
- ``memories.jsonl.gz``: one ``{"id", "content", "metadata", "created_at", "updated_at",
  "state", "app", "categories"}`` per line (app and category *names*).

Nothing is extracted to disk: zip members are read in memory within the limits of
:mod:`memaudit_core.importers._zip` (every importer's), zip members and gzip streams at most
:data:`MAX_MEMBER_BYTES` uncompressed bytes each.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import Any, NoReturn

from ..errors import PackageError, Problem, cut_repr, id_text
from ..package import Package, Store, json_type
from ._common import (
    Collector,
    Record,
    build_store,
    clean_meta,
    decode_text,
    fail,
    first_few,
    links_from,
    normalise_time,
    note,
    parse_json,
    time_is_text,
    unit_refs_from,
)
from ._zip import NonblankLines, ZipReader

#: The largest uncompressed size read from one gzip stream or one zip member of a backup
#: (256 MiB): a backup is read whole into memory, and a gzip bomb (a small file that inflates
#: to gigabytes) is refused before it fills it.
MAX_MEMBER_BYTES = 1 << 28
JSON_MEMBER = "memories.json"
JSONL_MEMBER = "memories.jsonl.gz"
#: OpenMemory's ``MemoryState`` enum (``openmemory/api/app/models.py``).
STATES = ("active", "paused", "archived", "deleted")
_TIMES = ("created_at", "updated_at", "archived_at", "deleted_at")
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
_GZIP_MAGIC = b"\x1f\x8b"
#: Top-level keys only ``memories.json`` has, next to ``memories``.
_BACKUP_KEYS = frozenset({"export_meta", "status_history", "memory_categories", "apps"})


# --------------------------------------------------------------------------- recognising


def is_backup_doc(doc: Any) -> bool:
    """Whether decoded JSON is an OpenMemory ``memories.json``.

    >>> is_backup_doc({"user": {}, "memories": [], "export_meta": {"version": "1"}})
    True
    >>> is_backup_doc({"results": []})
    False
    """
    return (
        isinstance(doc, dict)
        and "results" not in doc
        and "memories" in doc
        and bool(_BACKUP_KEYS & doc.keys())
    )


def looks_like_trimmed_backup(doc: Any) -> bool:
    """Whether decoded JSON is a ``memories.json`` stripped of the keys that mark it
    (:func:`is_backup_doc`): ``{"memories": [...]}`` whose first object row has ``id``,
    ``content`` and ``state`` (QA s40 defect 4: a hint, never read as a backup).

    >>> looks_like_trimmed_backup({"memories": [{"id": "m1", "content": "x", "state": "active"}]})
    True
    >>> looks_like_trimmed_backup({"memories": [{"id": "m1", "memory": "x"}]})
    False
    """
    if not isinstance(doc, dict) or "results" in doc or is_backup_doc(doc):
        return False
    rows = doc.get("memories")
    first = next((r for r in rows if isinstance(r, dict)), None) if isinstance(rows, list) else None
    return first is not None and {"id", "content", "state"} <= first.keys()


def _looks_like_row(line: str) -> bool:
    """Whether one line is an OpenMemory ``memories.jsonl`` row (a hint, never a rule)."""
    try:
        row = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(row, dict) and {"id", "content"} <= row.keys() and "state" in row


def looks_like_rows(text: str) -> bool:
    """Whether text is OpenMemory JSON Lines: its first non-empty line is a backup row.

    >>> looks_like_rows('\\n{"id": "m1", "content": "Likes tea", "state": "active"}\\n')
    True
    >>> looks_like_rows('{"id": "m1", "memory": "Likes tea"}')
    False
    """
    first = next((line for line in text.splitlines() if line.strip()), "")
    return _looks_like_row(first)


def _other_rows(text: str) -> bool:
    """Whether JSON Lines are some other export's: the first line is an object without
    ``content`` (Mem0 items carry ``memory``; they get the package loader's JSON Lines hint)."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        row = json.loads(first)
    except (ValueError, RecursionError):
        return False  # a damaged first line of a backup is located by the backup reader
    return isinstance(row, dict) and "content" not in row


def container_kind(raw: bytes, path: Path) -> str | None:
    """``"zip"``, ``"gzip"`` or ``"jsonl"`` when the file is read as an OpenMemory backup by
    its bytes or name, else None (it is then read as JSON).

    Any zip is a backup (a zip without its members is refused as such). A file named
    ``*.jsonl`` / ``*.jsonl.gz`` is one unless its first line is an object without
    ``content``; a gzip file of another name only when its first line is a backup row. Other
    gzip files keep the "decompress it first" message.

    >>> from pathlib import Path
    >>> container_kind(b"PK\\x03\\x04...", Path("backup.zip"))
    'zip'
    >>> container_kind(b'{"id": "m1", "memory": "x"}', Path("mem0.jsonl")) is None
    True
    """
    name = path.name.lower()
    if raw[:4] in _ZIP_MAGICS:
        return "zip"
    if raw[:2] == _GZIP_MAGIC:
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as gz:
                head = gz.read(65536).decode("utf-8", "replace")
        except (OSError, EOFError, zlib.error):
            # Damaged: said by the backup reader when the name says it is one.
            return "gzip" if name.endswith(".jsonl.gz") else None
        if name.endswith(".jsonl.gz"):
            return None if _other_rows(head) else "gzip"
        return "gzip" if looks_like_rows(head) else None
    if name.endswith(".jsonl"):
        head = raw[:65536].decode("utf-8", "replace")
        return None if _other_rows(head) else "jsonl"
    return None


# --------------------------------------------------------------------------- reading


_SYNTAX_AT = re.compile(r"^\$ \(line 1, column (\d+)\)$")


def _relocated(exc: PackageError, base: str, *, one_line: bool = False) -> list[Problem]:
    """The problems of a member or line parsed on its own, located under ``base``.

    A syntax error in one JSON line is at "line 1" of that line: the path names the file's
    line (``base``) and the message its column.
    """
    out = []
    for p in exc.problems:
        at = _SYNTAX_AT.match(p.path) if one_line else None
        if at:
            out.append(Problem(base, p.rule, f"{p.message} (column {at[1]})", p.value))
        else:
            path = base + p.path[1:] if p.path.startswith("$") else f"{base} {p.path}"
            out.append(Problem(path, p.rule, p.message, p.value))
    return out


def _too_big(source: str, where: str) -> NoReturn:
    """Refuse a gzip stream above the cap."""
    fail(
        source,
        where,
        "size",
        f"unpacks to more than {MAX_MEMBER_BYTES:,} bytes, the most read from one gzip stream "
        "of a backup (a gzip bomb, or not an OpenMemory backup?); unpack it yourself and check "
        "it",
    )


def _gunzip(blob: bytes, source: str, where: str) -> bytes:
    """The bytes of a gzip stream, at most :data:`MAX_MEMBER_BYTES`; located errors."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(blob)) as gz:
            data = gz.read(MAX_MEMBER_BYTES + 1)
    except (OSError, EOFError, zlib.error) as exc:
        fail(
            source,
            where,
            "gzip",
            f"not a readable gzip stream ({exc}): the file is damaged or truncated",
        )
    if len(data) > MAX_MEMBER_BYTES:
        _too_big(source, where)
    return data


def _read_zip(raw: bytes, source: str) -> tuple[dict[str, tuple[str, bytes]], list[str]]:
    """{wanted base name: (member name, bytes)} and every member's name."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(raw))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        fail(source, "$", "zip", f"not a readable zip archive ({exc})")
    with zf:
        infos = [
            i
            for i in zf.infolist()
            if not i.is_dir() and "__MACOSX" not in PurePosixPath(i.filename).parts
        ]
        names = [i.filename for i in infos]
        picked: list[tuple[str, zipfile.ZipInfo]] = []
        for wanted in (JSON_MEMBER, JSONL_MEMBER):
            # OpenMemory's own import matches members by base name, in any folder.
            matches = [i for i in infos if PurePosixPath(i.filename).name == wanted]
            if len(matches) > 1:
                fail(
                    source,
                    wanted,
                    "unique-file",
                    "the zip holds this file more than once: zip one backup per file",
                    [i.filename for i in matches],
                )
            if matches:
                picked.append((wanted, matches[0]))
        # QA s44: a 122 KB zip of 120 MB of "0," held the app for 60 s and 1 GB before its
        # shape error; the limits are every importer's (._zip), checked before inflating.
        reader = ZipReader(zf, source, MAX_MEMBER_BYTES)
        reader.check([(info, info.filename) for _, info in picked])
        found = {
            wanted: (info.filename, reader.read(info, info.filename)) for wanted, info in picked
        }
    if not found:
        shown = first_few(names, 8, show=id_text)
        fail(
            source,
            "$",
            "openmemory-zip",
            f"the zip holds neither {JSON_MEMBER} nor {JSONL_MEMBER}, the members of an "
            "OpenMemory backup (POST /api/v1/backup/export); for a Mem0 export, unzip it and "
            "give the JSON file inside",
            f"members: {shown}" if names else "an empty zip",
        )
    return found, names


def _json_doc(data: bytes, source: str, member: str) -> Any:
    base = f"{member}:$"
    try:
        return parse_json(decode_text(data, source), source)
    except PackageError as exc:
        raise PackageError(source, _relocated(exc, base)) from None


def _jsonl_rows(data: bytes, source: str, prefix: str, col: Collector) -> list[tuple[str, Any]]:
    """[(path of the line, decoded value)] of JSON Lines, problems located by line number."""
    rows: list[tuple[str, Any]] = []
    # Line by line (QA s44: a split of the whole stream held ten times its size).
    for n, offset, raw in NonblankLines(io.BytesIO(data)):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            fail(
                source, f"{prefix}line {n}", "utf-8", f"not UTF-8 text (byte {offset + exc.start})"
            )
        if not line.strip():
            continue
        where = f"{prefix}line {n}"
        try:
            value = parse_json(line, source)
        except PackageError as exc:
            col.extend(_relocated(exc, where, one_line=True))
            continue
        rows.append((where, value))
    return rows


# --------------------------------------------------------------------------- rows -> records


def _names(table: Any, path: str, col: Collector) -> dict[str, str]:
    """{id: name} of the backup's ``apps`` or ``categories`` table (absent: {})."""
    if table is None:
        return {}
    if not isinstance(table, list):
        col.add(path, "type", "must be an array", json_type(table))
        return {}
    out: dict[str, str] = {}
    for j, row in enumerate(table):
        if isinstance(row, dict) and isinstance(row.get("name"), str) and row.get("id"):
            out[str(row["id"])] = row["name"]
        elif not isinstance(row, dict):
            col.add(f"{path}[{j}]", "type", "each row must be an object", json_type(row))
    return out


def _state_history(doc: dict[str, Any], base: str, col: Collector) -> dict[str, list[dict]]:
    """``status_history`` rows per memory id, in time order (``changed_at``)."""
    rows = doc.get("status_history")
    if rows is None:
        return {}
    path = f"{base}.status_history"
    if not isinstance(rows, list):
        col.add(path, "type", "status_history must be an array", json_type(rows))
        return {}
    out: dict[str, list[dict]] = {}
    for j, row in enumerate(rows):
        rpath = f"{path}[{j}]"
        if not isinstance(row, dict):
            col.add(rpath, "type", "each status_history row must be an object", json_type(row))
            continue
        bad = False
        for key in ("old_state", "new_state"):
            value = row.get(key)
            if value is not None and (not isinstance(value, str) or value.lower() not in STATES):
                col.add(
                    f"{rpath}.{key}",
                    "openmemory-state",
                    "a state must be active, paused, archived or deleted (OpenMemory's "
                    "MemoryState)",
                    value,
                )
                bad = True
        if bad or row.get("memory_id") is None:
            continue
        at = normalise_time(row.get("changed_at"))
        out.setdefault(str(row["memory_id"]), []).append(
            {
                "old": row.get("old_state"),
                "new": row.get("new_state"),
                "at": at.iso or clean_meta(row.get("changed_at")),
            }
        )
    for events in out.values():
        events.sort(key=lambda e: str(e["at"] or ""))
    return out


def _categories(
    row: dict[str, Any], links: dict[str, list[str]], cat_names: dict[str, str]
) -> tuple[list[str], list[str]]:
    """(category ids, category names) of one ``memories.json`` row: its ``category_ids``
    and the ``memory_categories`` rows naming it, names resolved by the ``categories``
    table."""
    ids = [str(c) for c in row.get("category_ids") or [] if c is not None]
    for cid in links.get(str(row.get("id")), []):
        if cid not in ids:
            ids.append(cid)
    return ids, [cat_names[c] for c in ids if c in cat_names]


def _memory_links(doc: dict[str, Any], base: str, col: Collector) -> dict[str, list[str]]:
    rows = doc.get("memory_categories")
    if rows is None:
        return {}
    if not isinstance(rows, list):
        col.add(f"{base}.memory_categories", "type", "must be an array", json_type(rows))
        return {}
    out: dict[str, list[str]] = {}
    for row in rows:
        if isinstance(row, dict) and row.get("memory_id") and row.get("category_id"):
            out.setdefault(str(row["memory_id"]), []).append(str(row["category_id"]))
    return out


class _Rows:
    """The memories of one backup member, checked, as records and deleted entries."""

    def __init__(self, col: Collector) -> None:
        self.col = col
        self.records: list[Record] = []
        self.deleted: list[dict[str, Any]] = []
        self.states: dict[str, int] = {}
        self.unserved: list[str] = []
        self.revived: list[str] = []
        self.stateless: list[str] = []
        self.times: list[str] = []
        #: id -> (text, state) as read, for comparing the two members.
        self.seen: dict[str, tuple[Any, str]] = {}

    def add(self, path: str, row: Any, extra: dict[str, Any]) -> None:
        col = self.col
        if not isinstance(row, dict):
            col.add(path, "type", "each memory must be an object", json_type(row))
            return
        mem_id = row.get("id")
        ok = True
        if mem_id is None or (isinstance(mem_id, str) and not mem_id.strip()):
            col.add(f"{path}.id", "required", "the memory has no id", mem_id)
            ok = False
        elif not isinstance(mem_id, str):
            col.add(f"{path}.id", "type", "the memory id must be a string", mem_id)
            ok = False
        elif mem_id in self.seen:
            col.add(f"{path}.id", "unique-id", "duplicate memory id", mem_id)
            ok = False
        text = row.get("content")
        if text is None:
            col.add(f"{path}.content", "required", "missing the memory text")
            ok = False
        elif not isinstance(text, str):
            col.add(f"{path}.content", "type", "the memory text must be a string", text)
            ok = False
        metadata = row.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            col.add(f"{path}.metadata", "type", "metadata must be an object or null", metadata)
            ok = False
        raw_state = row.get("state")
        state = raw_state.strip().lower() if isinstance(raw_state, str) else raw_state
        if state is not None and state not in STATES:
            col.add(
                f"{path}.state",
                "openmemory-state",
                "state must be active, paused, archived or deleted (OpenMemory's MemoryState)",
                raw_state,
            )
            ok = False
        for key in _TIMES:
            # OpenMemory writes ISO strings: 12345 would read as 1970, unsaid (QA s46).
            if not time_is_text(
                col, f"{path}.{key}", row.get(key), "an OpenMemory time is an ISO-8601 string"
            ):
                ok = False
        if not ok:
            return
        deleted_at = normalise_time(row.get("deleted_at"))
        if state is None:
            # OpenMemory's own import reads a missing state as active; a deleted_at is then
            # the only sign left, and is followed.
            state = "deleted" if row.get("deleted_at") else "active"
            self.stateless.append(repr(mem_id))
        self.seen[mem_id] = (text, state)
        self.states[state] = self.states.get(state, 0) + 1
        meta: dict[str, Any] = {}
        if metadata:
            meta["metadata"] = clean_meta(metadata)
        for key, value in extra.items():
            if value not in (None, [], ""):
                meta[key] = clean_meta(value)
        created = normalise_time(row.get("created_at"))
        for key in ("created_at", "updated_at", "archived_at", "deleted_at"):
            raw = row.get(key)
            if raw is None:
                continue
            t = normalise_time(raw)
            if t.iso is None:
                meta[f"{key}_raw"] = clean_meta(raw)
                continue
            self.times.append(t.iso)
            if key != "created_at":
                meta[key] = t.iso
            if isinstance(raw, str) and raw != t.iso:
                meta[f"{key}_raw"] = raw
            if t.naive:
                meta[f"{key}_naive"] = True
        if state == "deleted":
            self.deleted.append(
                {
                    "id": mem_id,
                    "text": text,
                    "status": "deleted",
                    "deleted_at": deleted_at.iso or normalise_time(row.get("updated_at")).iso,
                    "from": "openmemory state",
                }
            )
            return
        if state in ("paused", "archived"):
            self.unserved.append(f"{mem_id!r} ({state})")
        if row.get("deleted_at") is not None:
            # OpenMemory re-adds a deleted memory by setting its state back to active and
            # leaves deleted_at set; its list and search read the state only.
            self.revived.append(repr(mem_id))
        self.records.append(
            Record(
                id=mem_id,
                text=text,
                path=path,
                text_path=f"{path}.content",
                created_at=created.iso,
                status=state,
                meta=meta,
                links=links_from(metadata),
                link_source=metadata,
                link_path=f"{path}.metadata",
                unit_refs=unit_refs_from(metadata, f"{path}.metadata"),
                time_raw=row.get("created_at") if created.iso is None else None,
                time_path=f"{path}.created_at",
            )
        )


def _read_json_member(doc: Any, prefix: str, col: Collector) -> tuple[_Rows, dict[str, Any]]:
    """The memories of ``memories.json`` (decoded), and store meta from its other tables."""
    base = f"{prefix}$"
    rows = _Rows(col)
    memories = doc.get("memories")
    if not isinstance(memories, list):
        fail(
            col.source,
            f"{base}.memories",
            "type",
            "'memories' must be an array of memories",
            json_type(memories),
        )
    app_names = _names(doc.get("apps"), f"{base}.apps", col)
    cat_names = _names(doc.get("categories"), f"{base}.categories", col)
    cat_links = _memory_links(doc, base, col)
    history = _state_history(doc, base, col)
    for i, row in enumerate(memories):
        extra: dict[str, Any] = {}
        if isinstance(row, dict):
            if not isinstance(row.get("category_ids"), list | None):
                col.add(
                    f"{base}.memories[{i}].category_ids",
                    "type",
                    "category_ids must be an array of category ids",
                    json_type(row["category_ids"]),
                )
                row = {**row, "category_ids": None}
            ids, names = _categories(row, cat_links, cat_names)
            extra = {
                "user_id": row.get("user_id"),
                "app_id": row.get("app_id"),
                "app": app_names.get(str(row.get("app_id"))),
                "categories": names,
                "category_ids": ids,
                "state_history": history.get(str(row.get("id"))),
            }
        rows.add(f"{base}.memories[{i}]", row, extra)
    meta: dict[str, Any] = {}
    user = doc.get("user")
    if isinstance(user, dict) and user.get("user_id") is not None:
        meta["openmemory_user"] = clean_meta(user["user_id"])
    export_meta = doc.get("export_meta")
    if isinstance(export_meta, dict):
        meta["export_meta"] = clean_meta(export_meta)
    return rows, meta


def _read_jsonl_member(lines: list[tuple[str, Any]], col: Collector) -> _Rows:
    rows = _Rows(col)
    for where, row in lines:
        extra: dict[str, Any] = {}
        if isinstance(row, dict):
            cats = row.get("categories")
            extra = {"app": row.get("app"), "categories": cats}
        rows.add(where, row, extra)
    return rows


def _disagreement(json_rows: _Rows, jsonl_rows: _Rows, json_name: str, jsonl_name: str) -> str:
    """A warning naming what the two members of one backup hold differently, or ''."""
    a, b = json_rows.seen, jsonl_rows.seen
    only_a = [k for k in a if k not in b]
    only_b = [k for k in b if k not in a]
    text = [k for k in a if k in b and a[k][0] != b[k][0]]
    state = [k for k in a if k in b and a[k][1] != b[k][1]]
    if not (only_a or only_b or text or state):
        return ""

    def ids(keys: list[str]) -> str:
        return first_few(keys, 5, show=repr)

    parts = []
    if only_a:
        parts.append(f"{len(only_a)} id(s) only in {json_name} ({ids(only_a)})")
    if only_b:
        parts.append(f"{len(only_b)} id(s) only in {jsonl_name} ({ids(only_b)})")
    if text:
        k = text[0]
        parts.append(
            f"{len(text)} memory(ies) with another text ({ids(text)}; first: "
            f"{cut_repr(a[k][0], 60)} vs {cut_repr(b[k][0], 60)})"
        )
    if state:
        parts.append(
            f"{len(state)} memory(ies) with another state ("
            + first_few(state, 5, show=lambda k: f"{k!r}: {a[k][1]} vs {b[k][1]}")
            + ")"
        )
    return (
        f"the backup's two members disagree: {'; '.join(parts)}; {json_name} is read (the "
        f"richer one: deleted_at, apps, categories and status history), {jsonl_name} only "
        "compared"
    )


# --------------------------------------------------------------------------- import


def load_openmemory_store(
    source: str,
    *,
    raw: bytes | None = None,
    kind: str | None = None,
    doc: Any = None,
    cost_rule: str,
    store_id: str | None,
    package: Package | None,
) -> Store:
    """Read an OpenMemory backup into a ``mem0`` store (``format_version`` ``"openmemory"``).

    Give ``doc`` (a decoded ``memories.json``), or the file's bytes ``raw`` with ``kind``
    (``"zip"``, ``"gzip"`` or ``"jsonl"``, see :func:`container_kind`).
    Called by :func:`memaudit_core.importers.mem0.load_mem0_store`, which documents the rules.

    Examples
    --------
    >>> doc = {"memories": [{"id": "o1", "content": "Lives in Lisbon", "state": "active"}],
    ...        "export_meta": {"version": "1"}}
    >>> s = load_openmemory_store("b.json", doc=doc, cost_rule="words", store_id=None,
    ...                           package=None)
    >>> s.meta["format_version"], s.memories[0].status, s.memories[0].cost
    ('openmemory', 'active', 3.0)
    """
    col = Collector(source)
    warnings: list[str] = []
    meta: dict[str, Any] = {}
    json_rows: _Rows | None = None
    jsonl_rows: _Rows | None = None
    json_name = jsonl_name = ""
    if doc is not None:
        json_rows, meta = _read_json_member(doc, "", col)
        json_name = Path(source).name
        meta["openmemory_members"] = [json_name]
    elif kind == "jsonl":
        data = raw or b""
        jsonl_rows = _read_jsonl_member(_jsonl_rows(data, source, "", col), col)
        jsonl_name = Path(source).name
        meta["openmemory_members"] = [jsonl_name]
    elif kind == "gzip":
        data = _gunzip(raw or b"", source, "$")
        jsonl_rows = _read_jsonl_member(_jsonl_rows(data, source, "", col), col)
        jsonl_name = Path(source).name
        meta["openmemory_members"] = [jsonl_name]
    else:
        found, _ = _read_zip(raw or b"", source)
        if JSON_MEMBER in found:
            json_name, blob = found[JSON_MEMBER]
            member_doc = _json_doc(blob, source, json_name)
            if not is_backup_doc(member_doc):
                fail(
                    source,
                    f"{json_name}:$",
                    "openmemory-shape",
                    "an OpenMemory memories.json is an object with 'memories' and "
                    "'export_meta' (user, apps, categories, status_history...)",
                    sorted(member_doc)[:8]
                    if isinstance(member_doc, dict)
                    else json_type(member_doc),
                )
            json_rows, meta = _read_json_member(member_doc, f"{json_name}:", col)
        if JSONL_MEMBER in found:
            # Read and checked even when memories.json is there: a damaged member is said,
            # not skipped, and the two are compared.
            jsonl_name, blob = found[JSONL_MEMBER]
            data = _gunzip(blob, source, jsonl_name)
            lines = _jsonl_rows(data, source, f"{jsonl_name}:", col)
            jsonl_rows = _read_jsonl_member(lines, col)
        meta["openmemory_members"] = [name for name in (json_name, jsonl_name) if name]
    col.raise_if_any()
    rows = json_rows if json_rows is not None else jsonl_rows
    assert rows is not None
    meta["openmemory_read"] = json_name if json_rows is not None else jsonl_name
    # The notes' paths: in the member read (memories.json's array, or the JSONL's lines).
    listed = "$.memories" if json_rows is not None else "$"
    if json_rows is not None and jsonl_rows is not None:
        said = _disagreement(json_rows, jsonl_rows, json_name, jsonl_name)
        if said:
            warnings.append(note("$", said, "backup-other"))
    if rows.unserved:
        # Kept and counted like Mem0's lifecycle states (the store holds them); said, since
        # OpenMemory serves only active memories: its list and search check state == active
        # (app/utils/permissions.py check_memory_access_permissions).
        warnings.append(
            note(
                listed,
                f"{len(rows.unserved)} memory(ies) are paused or archived: "
                f"{first_few(rows.unserved, 10)}; "
                "OpenMemory keeps them in its database but serves only active memories (list "
                "and search), so they are kept with that status and counted as part of the store",
                "lifecycle-state",
            )
        )
    if rows.revived:
        warnings.append(
            note(
                listed,
                f"{len(rows.revived)} memory(ies) are not deleted by state but carry a "
                f"deleted_at ({first_few(rows.revived, 10)}): "
                "OpenMemory sets a re-added memory's state back to active and leaves "
                "deleted_at; the state is followed, so they are kept",
                "lifecycle-state",
            )
        )
    if rows.stateless:
        warnings.append(
            note(
                listed,
                f"{len(rows.stateless)} memory(ies) have no state "
                f"({first_few(rows.stateless, 10)}): "
                "read as active (as OpenMemory's own import does), or as deleted when "
                "deleted_at is set",
                "lifecycle-state",
            )
        )
    filters = meta.get("export_meta") or {}
    narrowed = {
        k: filters.get(k)
        for k in ("app_id_filter", "from_date", "to_date")
        if filters.get(k) is not None
    }
    if narrowed:
        warnings.append(
            note(
                "$.export_meta" if json_rows is not None else "$",
                "the backup was filtered when exported ("
                + ", ".join(f"{k}={v!r}" for k, v in narrowed.items())
                + "): it holds only part of the user's memories",
                "backup-other",
            )
        )
    meta.update(
        {
            "memories_in_export": sum(rows.states.values()),
            "openmemory_states": dict(sorted(rows.states.items())),
            "deleted": rows.deleted,
        }
    )
    if warnings:
        meta["warnings"] = warnings
    return build_store(
        rows.records,
        collector=col,
        system="mem0",
        format_version="openmemory",
        cost_rule=cost_rule,
        store_id=store_id,
        package=package,
        label="OpenMemory backup",
        meta=meta,
        doc=doc,
    )
