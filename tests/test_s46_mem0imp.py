"""QA s46, importers: Mem0 times, Mem0 hashes, and an export's store once its history is read.

(a) A number or a boolean in a Mem0 ``created_at`` was read as epoch time (12345 became
    1970-01-01T03:25:45, the oldest memory for recency pruning) with no word, and ``true`` was
    said "kept as text" while nothing was kept. Mem0 writes ISO strings (EXPORT_FORMATS 1.2):
    a time that is not a string is refused with rule ``type``, as Zep's; Letta, A-Mem and
    OpenMemory times likewise.
(b) Two memories sharing a Mem0 ``hash`` but not their text were called one fact paid twice.
    Mem0's hash is ``hashlib.md5(text.encode()).hexdigest()``: such a hash is stale.
(c) External stores: an export, then its history, left the bare store and the one with the
    history side by side, both in Compare and the annotated package, nothing saying one was
    stale. The reading with the history replaces the bare one.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from app_utils import open_app
from cli_utils import run_cli
from note_utils import messages, unruled

from memaudit_core.errors import PackageError
from memaudit_core.importers import load_external_store
from memaudit_core.package import ExternalMemory, Store

PACKAGE = "sample:veg-to-pescatarian"
PAGE = "pages/4_External_stores.py"
PKG_FILE = str(Path(__file__).resolve().parents[1] / "sample_packages" / "veg-to-pescatarian.json")


def _write(tmp_path: Path, name: str, obj: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def _problems(exc: PackageError) -> list[tuple[str, str]]:
    return [(p.path, p.rule) for p in exc.problems]


# --------------------------------------------------------------------------- (a) times


def test_mem0_cli_refuses_numeric_and_boolean_times_with_path_and_rule(tmp_path) -> None:
    """The QA file: an epoch, 12345 and true, each named by file, JSON path and rule."""
    doc = {
        "results": [
            {"id": "a", "memory": "Ann cat", "created_at": 1683554160},
            {"id": "b", "memory": "Bo x", "created_at": 12345},
            {"id": "c", "memory": "Bo y", "created_at": True},
        ]
    }
    src = _write(tmp_path, "mem0_num.json", doc)
    out = tmp_path / "out.json"
    rc, _, err = run_cli("import", "mem0", str(src), "--package", PKG_FILE, "-o", str(out))
    assert rc != 0
    assert not out.exists()
    for i, value in enumerate(("1683554160", "12345", "true")):
        line = (
            f"{src}: $.results[{i}].created_at: a Mem0 time is an ISO-8601 string (or null) "
            f"(got {value}) [rule: type]"
        )
        assert line in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("item", "path"),
    [
        ({"updated_at": 12345}, "$.results[0].updated_at"),
        ({"created_at": False}, "$.results[0].created_at"),
        ({"created_at": 1.5e9}, "$.results[0].created_at"),
    ],
)
def test_mem0_item_times_that_are_not_strings_are_refused(tmp_path, item, path) -> None:
    src = _write(tmp_path, "m.json", {"results": [{"id": "m1", "memory": "Ann cat", **item}]})
    with pytest.raises(PackageError) as info:
        load_external_store(src, "mem0")
    assert _problems(info.value) == [(path, "type")]


def test_mem0_history_row_times_that_are_not_strings_are_refused(tmp_path) -> None:
    export = {
        "results": [{"id": "m1", "memory": "Ann cat", "created_at": "2025-05-03T10:00:00Z"}],
        "history": [
            {"id": "h1", "memory_id": "m1", "new_memory": "Ann cat", "event": "ADD",
             "created_at": 12345},
            {"id": "h2", "memory_id": "m1", "new_memory": "Ann cat", "event": "NONE",
             "timestamp": True},
        ],
    }  # fmt: skip
    with pytest.raises(PackageError) as info:
        load_external_store(_write(tmp_path, "m.json", export), "mem0")
    assert _problems(info.value) == [
        ("$.history[0].created_at", "type"),
        ("$.history[1].timestamp", "type"),
    ]


def test_an_unreadable_mem0_time_is_kept_where_the_warning_says(tmp_path) -> None:
    src = _write(
        tmp_path, "m.json", {"results": [{"id": "m1", "memory": "Ann", "created_at": "soon"}]}
    )
    store = load_external_store(src, "mem0")
    (mem,) = store.memories
    assert mem.created_at is None
    assert mem.meta["created_at_raw"] == "soon"
    assert (
        "$.results[0].created_at: unreadable time 'soon' kept as text in meta.created_at_raw"
        in [unruled(w) for w in store.meta["warnings"]]
    )


def test_letta_passage_and_block_times_that_are_not_strings_are_refused(tmp_path) -> None:
    passages = [
        {"id": "p1", "text": "Ann has a cat", "created_at": 12345},
        {"id": "p2", "text": "Bo lives in Lisbon", "timestamp": True},
    ]
    with pytest.raises(PackageError) as info:
        load_external_store(_write(tmp_path, "p.json", passages), "letta")
    assert _problems(info.value) == [("$[0].created_at", "type"), ("$[1].timestamp", "type")]
    agent = {"core_memory": [{"label": "human", "value": "Ann", "updated_at": 1700000000}]}
    with pytest.raises(PackageError) as info:
        load_external_store(_write(tmp_path, "a.af", agent), "letta")
    assert _problems(info.value) == [("$.core_memory[0].updated_at", "type")]


def test_amem_a_timestamp_number_that_is_no_stamp_is_refused(tmp_path) -> None:
    notes = [
        {"id": "n1", "content": "Ann has a cat", "timestamp": 12345},
        {"id": "n2", "content": "Bo lives in Lisbon", "timestamp": 202307010900},
    ]
    with pytest.raises(PackageError) as info:
        load_external_store(_write(tmp_path, "n.json", notes), "amem")
    assert _problems(info.value) == [("$[0].timestamp", "type")]
    # The 12-digit number is A-Mem's own stamp, read as before.
    store = load_external_store(_write(tmp_path, "ok.json", notes[1:]), "amem")
    assert store.memories[0].created_at == "2023-07-01T09:00:00"


def test_openmemory_times_that_are_not_strings_are_refused(tmp_path) -> None:
    backup = {
        "export_meta": {},
        "memories": [
            {"id": "o1", "content": "Ann has a cat", "state": "active", "created_at": 12345}
        ],
    }
    with pytest.raises(PackageError) as info:
        load_external_store(_write(tmp_path, "memories.json", backup), "mem0")
    assert [rule for _, rule in _problems(info.value)] == ["type"]
    assert _problems(info.value)[0][0].endswith("$.memories[0].created_at")


# --------------------------------------------------------------------------- (b) hashes


def test_a_shared_hash_over_different_texts_is_stale_not_a_repeat(tmp_path) -> None:
    cat = hashlib.md5(b"Ann adopted a cat").hexdigest()  # Mem0: md5(data.encode())
    export = {
        "results": [
            {"id": "m1", "memory": "Ann adopted a cat", "hash": cat},
            {"id": "m8", "memory": "Ann adopted a dog", "hash": cat},
            {"id": "m9", "memory": "Ann  adopted a cat", "hash": "0" * 32},
        ]
    }
    store = load_external_store(_write(tmp_path, "m.json", export), "mem0")
    assert [m.id for m in store.memories] == ["m1", "m8", "m9"]
    repeat, stale = messages(store.meta["warnings"])
    # The same text (whitespace aside) is still one fact twice...
    assert repeat.startswith("1 memory(ies) repeat an earlier one: 'm1' = 'm9' (same text).")
    # ...a shared hash is not: it names only the memory whose text it is not the md5 of.
    assert stale.startswith(
        "1 memory(ies) share a hash with an earlier memory whose text differs: 'm1' and 'm8' "
        f"(hash {cat!r} is not the md5 of the text of 'm8'). "
    )
    assert "not repeats" in stale
    assert "'m8' (same hash)" not in repeat


def test_the_qa_file_no_longer_calls_m1_and_m8_one_fact(tmp_path) -> None:
    """QA's mem0_badts.json: m1 and m8 carry hash "h1" (no md5) over different texts."""
    export = {
        "results": [
            {"id": "m1", "memory": "Ann adopted a cat named Miso", "hash": "h1"},
            {"id": "m8", "memory": "x", "hash": "h1"},
        ]
    }
    store = load_external_store(_write(tmp_path, "m.json", export), "mem0")
    (warning,) = store.meta["warnings"]
    assert "pays twice" not in warning
    assert "(hash 'h1' is not the md5 of the text of 'm1' nor 'm8')" in warning


# --------------------------------------------------------------------------- (c) the page

EXPORT = json.dumps(
    {
        "results": [
            {"id": "m1", "memory": "User is pescatarian now", "created_at": "2025-05-03T10:00:00Z"},
            {"id": "m2", "memory": "User eats meat", "created_at": "2025-05-01T10:00:00Z"},
        ]
    }
).encode()
#: m3 added, then deleted before the export was taken.
HISTORY = json.dumps(
    [
        {"id": "h1", "memory_id": "m3", "new_memory": "User eats eggs", "event": "ADD"},
        {"id": "h2", "memory_id": "m3", "old_memory": "User eats eggs", "event": "DELETE"},
    ]
).encode()


def _upload(at, key: str, name: str, data: bytes) -> None:
    at.file_uploader(key=key).set_value((name, data, "application/octet-stream")).run()
    assert not at.exception, [e.value for e in at.exception]


def _decision(memory: str) -> dict:
    return {"who": "qa", "when": "2026-01-01T00:00:00Z", "store": "mem0", "memory": memory,
            "unit": "u:meal:current", "old": 0.0, "new": 1.0}  # fmt: skip


def test_the_history_replaces_the_bare_store_and_keeps_its_annotations() -> None:
    at = open_app(PAGE, package=PACKAGE)
    _upload(at, "w_ext_upload", "e.json", EXPORT)
    ((phash, imports),) = at.session_state["ma_ann_imports"].items()
    assert list(imports) == ["mem0"]
    # A decision made on the bare store, which the reading with the history inherits.
    at.session_state["ma_ann_logs"] = {f"{phash}:mem0": [_decision("m1")]}
    _upload(at, "w_ext_history", "h.json", HISTORY)
    assert not at.error, [e.value for e in at.error]
    ((_, imports),) = at.session_state["ma_ann_imports"].items()
    assert list(imports) == ["mem0"]
    assert [d["id"] for d in imports["mem0"]["store"].meta["deleted"]] == ["m3"]
    assert imports["mem0"]["store"].meta["history_file"] == "h.json"
    # One store for the export in the box (so in Compare and the saved package), not two.
    assert at.selectbox(key="w_ext_store").options == [
        "mem0 · Mem0 · e.json + history h.json (loaded export)"
    ]
    (success,) = [s.value.replace("\\", "").replace("\u2060", "") for s in at.success]
    assert success.startswith(
        "Loaded as store `mem0` (Mem0 · e.json + history h.json): 2 memories costed by words, "
        "with history"
    )
    assert success.endswith(
        "It replaces the store loaded before from the same export without a history. "
        "Annotate its coverage below."
    ), success
    assert at.session_state["ma_ann_logs"][f"{phash}:mem0"] == [_decision("m1")]
    # The page still counts the decision on the store shown.
    assert any("and its 1 annotation decision" in w.value for w in at.warning)


def _store(sid: str, ids: list[str], meta: dict | None = None) -> Store:
    memories = tuple(ExternalMemory(id=i, cost=1.0, coverage={}, text=i) for i in ids)
    return Store(id=sid, label="Mem0 export", system="mem0", memories=memories, meta=meta or {})


def test_replace_import_without_an_earlier_store_adds_it_unnoted() -> None:
    from memaudit_ui.annotations import replace_import  # new in s46

    imports: dict = {}
    logs: dict = {"p:mem0": [_decision("m9")]}
    key = ("e1", None, "mem0", "words")
    replace_import(imports, logs, "p:mem0", "mem0", key, _store("mem0", ["m1"]))
    assert imports["mem0"]["digest"] == key and imports["mem0"]["replaced"] == ""
    assert logs == {"p:mem0": [_decision("m9")]}  # nothing replaced: the log is left alone


def test_replace_import_drops_only_decisions_on_memories_the_new_store_lacks() -> None:
    from memaudit_ui.annotations import replace_import  # new in s46

    bare = ("e1", None, "mem0", "words")
    imports: dict = {"mem0": {"digest": bare, "store": _store("mem0", ["m1", "m2"])}}
    logs: dict = {"p:mem0": [_decision("m1"), _decision("m2"), _decision("m1")]}
    key = ("e1", "h1", "mem0", "words")
    replace_import(imports, logs, "p:mem0", "mem0", key, _store("mem0", ["m1"]))
    assert list(imports) == ["mem0"] and imports["mem0"]["digest"] == key
    assert logs == {"p:mem0": [_decision("m1"), _decision("m1")]}
    assert imports["mem0"]["replaced"] == (
        " It replaces the store loaded before from the same export without a history. 1 "
        "annotation decision on memories this store no longer holds was dropped."
    )
