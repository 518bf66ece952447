"""OpenMemory backups read as ``mem0`` stores (format_version ``openmemory``).

The backups are built here in the shapes OpenMemory's ``POST /api/v1/backup/export`` wrote
(``openmemory/api/app/routers/backup.py``: a zip of ``memories.json``, pretty-printed, and
``memories.jsonl.gz``; EXPORT_FORMATS 1.7). Every expected value is written by hand from the
texts and rules below (the mem0 module docstring), never read back from the code under test.
"""

from __future__ import annotations

import copy
import gzip
import io
import json
import zipfile
from pathlib import Path

import pytest
from cli_utils import run_cli
from package_utils import refused, write_json

from memaudit_core.errors import PackageError
from memaudit_core.importers import _zip as zip_limits
from memaudit_core.importers import guess_store_format, load_external_store
from memaudit_core.importers import openmemory as om
from memaudit_core.importers.mem0 import load_mem0_store
from memaudit_core.package import parse_package

USER = "0b6a4a1e-0000-4000-8000-000000000001"
APP = "0b6a4a1e-0000-4000-8000-00000000a991"
CAT_PETS = "0b6a4a1e-0000-4000-8000-0000000c0001"
CAT_HOME = "0b6a4a1e-0000-4000-8000-0000000c0002"

#: memories.json as _export_sqlite builds it: one memory per state.
BACKUP = {
    "user": {
        "id": USER,
        "user_id": "alice",
        "name": None,
        "email": None,
        "metadata": {},
        "created_at": "2025-02-28T08:00:00+00:00",
        "updated_at": "2025-02-28T08:00:00+00:00",
    },
    "apps": [
        {
            "id": APP,
            "owner_id": USER,
            "name": "cursor",
            "description": None,
            "metadata": {},
            "is_active": True,
            "created_at": "2025-02-28T08:00:00+00:00",
            "updated_at": "2025-02-28T08:00:00+00:00",
        }
    ],
    "categories": [
        {"id": CAT_PETS, "name": "pets", "description": "", "created_at": None, "updated_at": None},
        {"id": CAT_HOME, "name": "home", "description": "", "created_at": None, "updated_at": None},
    ],
    "memories": [
        {
            "id": "a1",
            "user_id": USER,
            "app_id": APP,
            "content": "Ann adopted a cat",
            "metadata": {"source_app": "openmemory", "dia_id": "D1:1"},
            "state": "active",
            # A Pacific offset, to see the UTC normalisation.
            "created_at": "2025-03-01T09:30:00-08:00",
            "updated_at": "2025-03-01T17:30:00+00:00",
            "archived_at": None,
            "deleted_at": None,
            "category_ids": [CAT_PETS],
        },
        {
            "id": "p1",
            "user_id": USER,
            "app_id": APP,
            "content": "Ann moved to Lisbon",
            "metadata": {"session_id": "s2"},
            "state": "paused",
            "created_at": "2025-03-02T10:00:00+00:00",
            "updated_at": "2025-03-05T10:00:00+00:00",
            "archived_at": None,
            "deleted_at": None,
            "category_ids": [CAT_HOME],
        },
        {
            "id": "r1",
            "user_id": USER,
            "app_id": APP,
            "content": "The cat is orange",
            "metadata": None,
            "state": "archived",
            "created_at": "2025-03-02T11:00:00+00:00",
            "updated_at": "2025-03-06T11:00:00+00:00",
            "archived_at": "2025-03-06T11:00:00+00:00",
            "deleted_at": None,
            "category_ids": [],
        },
        {
            "id": "d1",
            "user_id": USER,
            "app_id": APP,
            "content": "Ann works at a bakery",
            "metadata": {},
            "state": "deleted",
            "created_at": "2025-03-03T12:00:00+00:00",
            "updated_at": "2025-03-04T12:00:00+00:00",
            "archived_at": None,
            "deleted_at": "2025-03-04T13:00:00+01:00",
            "category_ids": [],
        },
    ],
    "memory_categories": [
        {"memory_id": "a1", "category_id": CAT_PETS},
        {"memory_id": "p1", "category_id": CAT_HOME},
    ],
    "status_history": [
        {
            "id": "h2",
            "memory_id": "p1",
            "changed_by": USER,
            "old_state": "active",
            "new_state": "paused",
            "changed_at": "2025-03-05T10:00:00+00:00",
        },
        {
            "id": "h1",
            "memory_id": "p1",
            "changed_by": USER,
            "old_state": "deleted",
            "new_state": "active",
            "changed_at": "2025-03-02T10:00:00+00:00",
        },
    ],
    "access_controls": [],
    "export_meta": {
        "app_id_filter": None,
        "from_date": None,
        "to_date": None,
        "version": "1",
        "generated_at": "2025-03-07T00:00:00+00:00",
    },
}

#: memories.jsonl.gz's lines for the same memories (_export_logical_memories_gz).
LINES = [
    {
        "id": "a1",
        "content": "Ann adopted a cat",
        "metadata": {"source_app": "openmemory", "dia_id": "D1:1"},
        "created_at": "2025-03-01T17:30:00+00:00",
        "updated_at": "2025-03-01T17:30:00+00:00",
        "state": "active",
        "app": "cursor",
        "categories": ["pets"],
    },
    {
        "id": "p1",
        "content": "Ann moved to Lisbon",
        "metadata": {"session_id": "s2"},
        "created_at": "2025-03-02T10:00:00+00:00",
        "updated_at": "2025-03-05T10:00:00+00:00",
        "state": "paused",
        "app": "cursor",
        "categories": ["home"],
    },
    {
        "id": "r1",
        "content": "The cat is orange",
        "metadata": {},
        "created_at": "2025-03-02T11:00:00+00:00",
        "updated_at": "2025-03-06T11:00:00+00:00",
        "state": "archived",
        "app": "cursor",
        "categories": [],
    },
    {
        "id": "d1",
        "content": "Ann works at a bakery",
        "metadata": {},
        "created_at": "2025-03-03T12:00:00+00:00",
        "updated_at": "2025-03-04T12:00:00+00:00",
        "state": "deleted",
        "app": "cursor",
        "categories": [],
    },
]

#: What the store keeps: (id, status, chars cost) -- len() of each text, counted by hand:
#: "Ann adopted a cat" 3+1+7+1+1+1+3 = 17, "Ann moved to Lisbon" 3+1+5+1+2+1+6 = 19,
#: "The cat is orange" 3+1+3+1+2+1+6 = 17. d1 ("Ann works at a bakery") is deleted.
KEPT = [("a1", "active", 17.0), ("p1", "paused", 19.0), ("r1", "archived", 17.0)]
DELETED = [
    {
        "id": "d1",
        "text": "Ann works at a bakery",
        "status": "deleted",
        "deleted_at": "2025-03-04T12:00:00+00:00",
        "from": "openmemory state",
    }
]


def _jsonl_gz(lines: list) -> bytes:
    return gzip.compress("".join(json.dumps(x) + "\n" for x in lines).encode("utf-8"))


def _zip(folder: Path, members: dict[str, bytes], name: str = "backup.zip") -> Path:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for member, data in members.items():
            zf.writestr(member, data)
    path = folder / name
    path.write_bytes(buf.getvalue())
    return path


def _backup_zip(folder: Path, doc: dict = BACKUP, lines: list = LINES) -> Path:
    """The zip as POST /export returns it: memories.json (indent 2) and memories.jsonl.gz."""
    return _zip(
        folder,
        {
            "memories.json": json.dumps(doc, indent=2).encode("utf-8"),
            "memories.jsonl.gz": _jsonl_gz(lines),
        },
    )


def _package(tmp_path: Path) -> Path:
    """Two sessions, three units; costs in characters."""
    doc = {
        "memaudit": 1,
        "id": "tiny-chars",
        "cost_unit": "chars",
        "experiences": [{"id": "s1", "time": 0}, {"id": "s2", "time": 1}],
        "units": [
            {"id": "D1:1", "text": "Ann adopted a cat", "weight": 2},
            {"id": "D1:3", "text": "The cat is orange", "weight": 1},
            {"id": "D2:1", "text": "Ann moved to Lisbon", "weight": 1},
        ],
        "candidates": [
            {
                "id": "s1:raw",
                "experience": "s1",
                "type": "raw_span",
                "cost": 80,
                "coverage": {"D1:1": 1.0, "D1:3": 1.0},
            },
            {
                "id": "s2:raw",
                "experience": "s2",
                "type": "raw_span",
                "cost": 80,
                "coverage": {"D2:1": 1.0},
            },
        ],
    }
    return write_json(tmp_path, "tiny.json", doc)


# --------------------------------------------------------------------------- the zip


def test_zip_with_both_members(tmp_path):
    store = load_external_store(_backup_zip(tmp_path), "mem0", cost_rule="chars")
    assert store.meta["format"] == "mem0"
    assert store.meta["format_version"] == "openmemory"
    assert [(m.id, m.status, m.cost) for m in store.memories] == KEPT
    assert store.meta["deleted"] == DELETED
    assert store.meta["openmemory_members"] == ["memories.json", "memories.jsonl.gz"]
    assert store.meta["openmemory_read"] == "memories.json"
    assert store.meta["openmemory_states"] == {
        "active": 1,
        "archived": 1,
        "deleted": 1,
        "paused": 1,
    }
    assert store.meta["openmemory_user"] == "alice"
    # The members agree: no word about a disagreement; paused / archived are named.
    warnings = store.meta["warnings"]
    assert not any("disagree" in w for w in warnings)
    unserved = [w for w in warnings if "paused or archived" in w]
    assert len(unserved) == 1
    assert "'p1' (paused)" in unserved[0] and "'r1' (archived)" in unserved[0]
    assert "serves only active memories" in unserved[0]

    a1, p1, r1 = store.memories
    # -08:00 normalised to UTC; the original kept.
    assert a1.created_at == "2025-03-01T17:30:00+00:00"
    assert a1.meta["created_at_raw"] == "2025-03-01T09:30:00-08:00"
    assert a1.meta["metadata"] == {"source_app": "openmemory", "dia_id": "D1:1"}
    assert a1.meta["user_id"] == USER and a1.meta["app_id"] == APP
    assert a1.meta["app"] == "cursor"
    assert a1.meta["category_ids"] == [CAT_PETS] and a1.meta["categories"] == ["pets"]
    assert a1.meta["links"] == ["D1:1"]
    assert p1.meta["categories"] == ["home"]
    # The status history in time order, whatever the file's order.
    assert p1.meta["state_history"] == [
        {"old": "deleted", "new": "active", "at": "2025-03-02T10:00:00+00:00"},
        {"old": "active", "new": "paused", "at": "2025-03-05T10:00:00+00:00"},
    ]
    assert r1.meta["archived_at"] == "2025-03-06T11:00:00+00:00"
    assert "metadata" not in r1.meta and "categories" not in r1.meta
    assert guess_store_format(tmp_path / "backup.zip") == "mem0"


def test_members_that_disagree_are_said_and_memories_json_is_read(tmp_path):
    lines = copy.deepcopy(LINES)
    lines[0]["content"] = "Ann adopted a dog"
    lines[1]["state"] = "active"
    lines.append({"id": "x9", "content": "Extra", "state": "active", "metadata": {}})
    del lines[2]  # r1
    store = load_external_store(_backup_zip(tmp_path, lines=lines), "mem0", cost_rule="chars")
    assert [(m.id, m.status, m.cost) for m in store.memories] == KEPT
    said = [w for w in store.meta["warnings"] if "disagree" in w]
    assert len(said) == 1
    assert "1 id(s) only in memories.json ('r1')" in said[0]
    assert "1 id(s) only in memories.jsonl.gz ('x9')" in said[0]
    assert "'Ann adopted a cat' vs 'Ann adopted a dog'" in said[0]
    assert "'p1': paused vs active" in said[0]


def test_zip_with_the_jsonl_member_only(tmp_path):
    f = _zip(tmp_path, {"backup/memories.jsonl.gz": _jsonl_gz(LINES)})
    store = load_external_store(f, "mem0", cost_rule="chars")
    assert store.meta["format_version"] == "openmemory"
    assert store.meta["openmemory_read"] == "backup/memories.jsonl.gz"
    assert [(m.id, m.status, m.cost) for m in store.memories] == KEPT
    # The line has no deleted_at: the deletion's time is its updated_at.
    assert store.meta["deleted"] == DELETED


# --------------------------------------------------------------------------- bare files


def test_bare_memories_json(tmp_path):
    f = write_json(tmp_path, "memories.json", BACKUP)
    store = load_mem0_store(f, cost_rule="chars")
    assert store.meta["format_version"] == "openmemory"
    assert store.meta["openmemory_members"] == ["memories.json"]
    assert [(m.id, m.status, m.cost) for m in store.memories] == KEPT
    assert store.meta["deleted"] == DELETED
    assert store.memories[0].meta["categories"] == ["pets"]


def test_bare_jsonl_gz(tmp_path):
    f = tmp_path / "memories.jsonl.gz"
    f.write_bytes(_jsonl_gz(LINES))
    store = load_external_store(f, "mem0", cost_rule="chars")
    assert store.meta["format_version"] == "openmemory"
    assert [(m.id, m.status, m.cost) for m in store.memories] == KEPT
    assert store.meta["deleted"] == DELETED
    a1 = store.memories[0]
    assert a1.meta["app"] == "cursor" and a1.meta["categories"] == ["pets"]
    assert a1.created_at == "2025-03-01T17:30:00+00:00"


def test_bare_jsonl_and_jsonl_under_another_name(tmp_path):
    text = "".join(json.dumps(x) + "\n" for x in LINES)
    for name in ("memories.jsonl", "upload.txt"):
        f = tmp_path / name
        f.write_text(text, encoding="utf-8")
        store = load_external_store(f, "mem0", cost_rule="chars")
        assert store.meta["format_version"] == "openmemory"
        assert [(m.id, m.status, m.cost) for m in store.memories] == KEPT


def test_state_is_followed_over_deleted_at_and_missing_state(tmp_path):
    """A re-added memory: state active with deleted_at still set (OpenMemory's add path sets
    the state only) is kept; no state and a deleted_at is deleted."""
    doc = {
        "memories": [
            {"id": "m1", "content": "Back again", "state": "active", "deleted_at": "2025-01-01"},
            {"id": "m2", "content": "Gone", "deleted_at": "2025-01-02T00:00:00+00:00"},
            {"id": "m3", "content": "No state"},
        ],
        "export_meta": {"version": "1", "from_date": 1735689600},
    }
    store = load_external_store(write_json(tmp_path, "m.json", doc), "mem0", cost_rule="words")
    assert [(m.id, m.status, m.cost) for m in store.memories] == [
        ("m1", "active", 2.0),
        ("m3", "active", 2.0),
    ]
    assert [(d["id"], d["deleted_at"]) for d in store.meta["deleted"]] == [
        ("m2", "2025-01-02T00:00:00+00:00")
    ]
    warnings = " | ".join(store.meta["warnings"])
    assert "carry a deleted_at ('m1')" in warnings
    assert "have no state ('m2', 'm3')" in warnings
    assert "from_date=1735689600" in warnings and "only part" in warnings


# --------------------------------------------------------------------------- coverage + CLI


def test_provenance_links_give_coverage(tmp_path):
    pkg = parse_package(json.loads(_package(tmp_path).read_text()))
    store = load_external_store(_backup_zip(tmp_path), "mem0", package=pkg)
    assert store.meta["cost_rule"] == "chars"  # the package's unit
    assert [(m.id, m.coverage) for m in store.memories] == [
        ("a1", {"D1:1": 1.0}),  # metadata.dia_id names a unit
        ("p1", {"D2:1": 1.0}),  # metadata.session_id names experience s2
        ("r1", {}),
    ]
    assert store.meta["coverage"] == (
        "from provenance links: 1 from unit links (exact); 1 from experience links (upper "
        "estimate: the best coverage of that experience's package candidates); 1 without "
        "links (needs annotation)"
    )


def test_cli_scores_a_backup_zip(tmp_path):
    pkg, backup = _package(tmp_path), _backup_zip(tmp_path)
    argv = ["score", str(pkg), "--external", str(backup), "--format", "mem0", "--budget", "60"]
    rc, out, err = run_cli(*argv)
    assert rc == 0, err
    assert out.startswith(
        f"external store 'mem0' (OpenMemory · backup.zip) from {backup} (mem0 openmemory): 3 "
        "memories costed by chars, 0 superseded kept, 1 deleted not kept (d1); coverage: from "
        "provenance links"
    )
    # The whole store (17 + 19 + 17 = 53 chars) fits in 60: F = a1's D1:1 (2) + p1's D2:1
    # (1) = 3; the package's candidates (80 chars each) do not fit, so OPT over P+ is 3 too.
    assert "union metrics for 'OpenMemory · backup.zip' (3 memories, 53 chars as written" in out
    assert "union ratio     F(Y') / OPT_P+ = 1.000   (OPT_P+ = 3)" in out
    assert "'p1' (paused)" in err  # the warning, on stderr
    rc, out, err = run_cli(*argv, "--json")
    assert rc == 0, err
    result = json.loads(out)
    summary = result["external_store"]
    assert summary["format_version"] == "openmemory"
    assert (summary["memories"], summary["deleted_ids"]) == (3, ["d1"])
    assert (result["value"], result["opt_value"], result["store_cost"]) == (3.0, 3.0, 53.0)

    out_pkg = tmp_path / "with.json"
    rc, _, err = run_cli("import", "mem0", str(backup), "--package", str(pkg), "-o", str(out_pkg))
    assert rc == 0, err
    stores = json.loads(out_pkg.read_text())["stores"]
    assert [s["meta"]["format_version"] for s in stores] == ["openmemory"]
    assert [m["id"] for m in stores[0]["memories"]] == ["a1", "p1", "r1"]


# --------------------------------------------------------------------------- bad input


def test_zip_with_neither_member(tmp_path):
    f = _zip(tmp_path, {"export.json": b"{}", "notes.txt": b"hi"})
    with pytest.raises(PackageError) as info:
        load_external_store(f, "mem0")
    assert info.value.source == str(f)
    assert [(p.path, p.rule) for p in info.value.problems] == [("$", "openmemory-zip")]
    assert "neither memories.json nor memories.jsonl.gz" in str(info.value)
    assert "export.json, notes.txt" in str(info.value)


def test_corrupt_gzip(tmp_path):
    bare = tmp_path / "memories.jsonl.gz"
    bare.write_bytes(_jsonl_gz(LINES)[:40])  # cut short
    assert refused(lambda: load_external_store(bare, "mem0")) == [("$", "gzip")]
    f = _zip(
        tmp_path,
        {"memories.json": json.dumps(BACKUP).encode(), "memories.jsonl.gz": b"\x1f\x8bjunk"},
    )
    with pytest.raises(PackageError) as info:
        load_external_store(f, "mem0")
    assert info.value.source == str(f)
    assert [(p.path, p.rule) for p in info.value.problems] == [("memories.jsonl.gz", "gzip")]


def test_bad_json_line_is_located_by_line_number(tmp_path):
    text = json.dumps(LINES[0]) + "\n\n" + '{"id": "p1" "content": "x"}' + "\n"
    f = _zip(tmp_path, {"memories.jsonl.gz": gzip.compress(text.encode())})
    with pytest.raises(PackageError) as info:
        load_external_store(f, "mem0")
    assert [(p.path, p.rule) for p in info.value.problems] == [
        ("memories.jsonl.gz:line 3", "json-syntax")
    ]
    assert "(column 13)" in str(info.value)  # after '{"id": "p1" '
    bare = tmp_path / "memories.jsonl"
    bare.write_text(json.dumps(LINES[0]) + "\n[1, 2]\n", encoding="utf-8")
    assert refused(lambda: load_external_store(bare, "mem0")) == [("line 2", "type")]


def test_unknown_state_names_the_rule(tmp_path):
    doc = copy.deepcopy(BACKUP)
    doc["memories"][1]["state"] = "forgotten"
    f = _backup_zip(tmp_path, doc=doc)
    with pytest.raises(PackageError) as info:
        load_external_store(f, "mem0")
    assert [(p.path, p.rule) for p in info.value.problems] == [
        ("memories.json:$.memories[1].state", "openmemory-state")
    ]
    assert "active, paused, archived or deleted" in str(info.value)
    assert "'forgotten'" in str(info.value)


def test_memory_without_id_or_content(tmp_path):
    doc = copy.deepcopy(BACKUP)
    del doc["memories"][0]["id"]
    doc["memories"][3]["content"] = None  # a deleted one is checked too
    problems = refused(
        lambda: load_external_store(write_json(tmp_path, "memories.json", doc), "mem0")
    )
    assert problems == [("$.memories[0].id", "required"), ("$.memories[3].content", "required")]
    lines = copy.deepcopy(LINES)
    del lines[1]["content"]
    bare = tmp_path / "memories.jsonl.gz"
    bare.write_bytes(_jsonl_gz(lines))
    assert refused(lambda: load_external_store(bare, "mem0")) == [("line 2.content", "required")]


def test_members_above_the_size_cap_are_refused_unread(tmp_path, monkeypatch):
    monkeypatch.setattr(om, "MAX_MEMBER_BYTES", 1000)
    # s44: a zip's members are held to every importer's cap (importers._zip), gzip to this one.
    monkeypatch.setattr(zip_limits, "MAX_ZIP_TOTAL_BYTES", 1000)
    f = _backup_zip(tmp_path)  # memories.json, indented, is far above 1000 bytes
    assert refused(lambda: load_external_store(f, "mem0")) == [("memories.json", "zip-size")]
    # A small gzip stream that inflates past the cap (the bomb inside the zip).
    bomb = gzip.compress(b" " * 5000)
    g = _zip(tmp_path, {"memories.jsonl.gz": bomb}, name="bomb.zip")
    with pytest.raises(PackageError) as info:
        load_external_store(g, "mem0")
    assert [(p.path, p.rule) for p in info.value.problems] == [("memories.jsonl.gz", "size")]
    assert "1,000 bytes" in str(info.value)


def test_history_is_refused_with_a_backup(tmp_path):
    f = write_json(tmp_path, "memories.json", BACKUP)
    h = write_json(tmp_path, "h.json", [])
    assert refused(lambda: load_external_store(f, "mem0", history=h)) == [("$", "mem0-history")]


def test_cli_bad_backup_exits_2_located(tmp_path):
    doc = copy.deepcopy(BACKUP)
    doc["memories"][1]["state"] = "forgotten"
    f = _backup_zip(tmp_path, doc=doc)
    rc, out, err = run_cli(
        "score", str(_package(tmp_path)), "--external", str(f), "--format", "mem0"
    )
    assert rc == 2 and out == ""
    assert (
        f"{f}: memories.json:$.memories[1].state: state must be active, paused, archived or "
        "deleted (OpenMemory's MemoryState) (got 'forgotten') [rule: openmemory-state]"
    ) in err
    g = _zip(tmp_path, {"readme.txt": b"hi"}, name="other.zip")
    rc, _, err = run_cli("score", str(_package(tmp_path)), "--external", str(g), "--format", "mem0")
    assert rc == 2 and "[rule: openmemory-zip]" in err


# --------------------------------------------------------------------------- the app


def test_app_external_stores_page_reads_a_backup_zip(tmp_path):
    from app_utils import open_app

    at = open_app("pages/4_External_stores.py", package="sample:veg-to-pescatarian", budget="12")
    assert at.selectbox(key="w_ext_format").value == "mem0"
    data = _backup_zip(tmp_path).read_bytes()
    upload = ("memories_export_alice.zip", data, "application/zip")
    at.file_uploader(key="w_ext_upload").set_value(upload).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert [s.value for s in at.success][0].startswith("Loaded as store `mem0`")
    bad = ("other.zip", _zip_bytes(), "application/zip")
    at.file_uploader(key="w_ext_upload").set_value(bad).run()
    assert not at.exception
    errors = [e.value.replace("\\", "") for e in at.error]
    assert any("other.zip was not loaded" in e and "[rule: openmemory-zip]" in e for e in errors), (
        errors
    )


def _zip_bytes() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("readme.txt", "hi")
    return buf.getvalue()
