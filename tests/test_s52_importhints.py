"""QA s51, "external", items 4, 7 and 10: format hints and the export's "now" for expiry.

4. A Mem0 export given as the history (``--history``, the app's "Mem0 history" upload) got
   one ``$.results[i].memory_id: history row needs a string 'memory_id'`` per memory (up to
   1,000 lines for a real export); it now gets one ``format-hint`` naming the history file.
7. A Zep file given as ``--format mem0`` got the format hint, then per edge "the memory has no
   id" and "it has 'fact' ... rename it to 'memory'": advice to rewrite it into a broken Mem0
   export. A file that looks like another format now gets the hint alone.
10. The "now" that marks a Mem0 memory expired was the latest time of the export *and its
    history*, so a history dumped after the export marked a memory expired by a time the
    export never saw, while the same import said "the export is older than the history". It
    is now the export's own latest ``created_at`` / ``updated_at`` (the export does not say
    when it was taken, and was taken no earlier; EXPORT_FORMATS 1.4: the history is a separate
    table, dumped on its own), and the warning says the rule and the time not used.

Expected values are written by hand from those rules, never read back from the code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_utils import open_app
from cli_utils import run_cli
from note_utils import message

from memaudit_core.errors import PackageError
from memaudit_core.importers import load_external_store

PACKAGE = "sample:veg-to-pescatarian"
PAGE = "pages/4_External_stores.py"
PKG_FILE = Path(__file__).resolve().parents[1] / "sample_packages" / "veg-to-pescatarian.json"

#: A Mem0 v2 export of two memories.
EXPORT = {
    "results": [
        {"id": "m1", "memory": "User is pescatarian now", "created_at": "2025-05-03T10:00:00Z"},
        {"id": "m2", "memory": "User sits by the window", "created_at": "2025-05-01T10:00:00Z"},
    ]
}
#: Two Zep v4 edges (episode_uuids, graph_uuid), as the QA's zep_v4.json.
ZEP = [
    {
        "uuid": "z1",
        "fact": "User now eats fish",
        "episode_uuids": ["ep1"],
        "graph_uuid": "g1",
        "created_at": "2025-05-01T10:00:00Z",
    },
    {
        "uuid": "z2",
        "fact": "User sits by the window",
        "episode_uuids": ["ep2"],
        "graph_uuid": "g1",
        "created_at": "2025-05-02T10:00:00Z",
    },
]
#: A Platform page taken at 2025-03-15T17:00Z at the latest (its memories' latest time). p5
#: expires on 2025-03-20, after that; p6 on 2025-03-10, before it.
PLATFORM = {
    "count": 3,
    "next": None,
    "previous": None,
    "results": [
        {
            "id": "p2",
            "memory": "Prefers ryokan inns now",
            "created_at": "2025-03-15T17:00:00Z",
            "updated_at": "2025-03-15T17:00:00Z",
        },
        {
            "id": "p5",
            "memory": "Passport valid until May 2",
            "created_at": "2025-03-01T17:00:00Z",
            "updated_at": "2025-03-01T17:00:00Z",
            "expiration_date": "2025-03-20",
        },
        {
            "id": "p6",
            "memory": "Visa appointment March 9",
            "created_at": "2025-03-01T17:00:00Z",
            "updated_at": "2025-03-01T17:00:00Z",
            "expiration_date": "2025-03-10",
        },
    ],
}
#: A history dumped later than PLATFORM: it updates p2 on 2025-04-02, after the export's time.
LATER_HISTORY = [
    {
        "id": "k2",
        "memory_id": "p2",
        "old_memory": "Prefers ryokan inns now",
        "new_memory": "Prefers ryokan inns, definitely not chains",
        "event": "UPDATE",
        "created_at": "2025-03-15T17:00:00Z",
        "updated_at": "2025-04-02T00:00:00Z",
        "is_deleted": False,
    }
]
EXPORT_HINT = (
    "this file, given as the history, is a Mem0 export (2 memories with 'id' and 'memory'), "
    "not history rows (memory_id, old_memory, new_memory, event): "
)
ZEP_HINT = (
    "this file looks like Zep / Graphiti fact edges (format 'zep'), not an export of format 'mem0'"
)


def _write(tmp_path: Path, name: str, doc: object) -> Path:
    path = tmp_path / name
    path.write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc).encode())
    return path


def _problems(call) -> tuple[str, list[tuple[str, str, str]]]:
    with pytest.raises(PackageError) as info:
        call()
    return info.value.source, [(p.path, p.rule, p.message) for p in info.value.problems]


def _plain(text: str) -> str:
    """A Markdown message as the reader sees it (escapes, code marks around times and word
    joiners removed)."""
    return text.replace("\\", "").replace("`", "").replace("\u2060", "")


def _upload(at, key: str, name: str, data: bytes):
    at.file_uploader(key=key).set_value((name, data, "application/octet-stream")).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


# --------------------------------------------------------------- 4. an export as the history


def test_an_export_given_as_the_history_gets_one_hint_naming_the_history_file(tmp_path):
    export = _write(tmp_path, "e.json", EXPORT)
    other = _write(tmp_path, "other.json", {"results": [{"id": "o1", "memory": "Tea"}]})
    source, problems = _problems(lambda: load_external_store(other, "mem0", history=export))
    assert source == str(export)
    ((path, rule, message),) = problems
    assert (path, rule) == ("$.results", "format-hint")
    assert message == EXPORT_HINT + (
        "give it as the export (CLI --external FILE --format mem0, or memaudit import mem0 "
        "FILE; in the app, the export upload), and as the history the history() rows or the "
        "history.db Mem0 wrote with it"
    )
    # History rows, one of them broken, still get that row's located problem, not the hint.
    rows = _write(tmp_path, "h.json", [*LATER_HISTORY, {"memory_id": "p2", "new_memory": "y"}])
    _, problems = _problems(lambda: load_external_store(other, "mem0", history=rows))
    assert [(p, r) for p, r, _ in problems] == [("$[1].event", "required")]


def test_the_export_given_again_as_its_own_history_is_said_so(tmp_path):
    export = _write(tmp_path, "e.json", EXPORT)
    copy = _write(tmp_path, "copy.json", EXPORT)
    _, problems = _problems(lambda: load_external_store(export, "mem0", history=copy))
    ((path, rule, message),) = problems
    assert (path, rule) == ("$.results", "format-hint")
    assert message == EXPORT_HINT + (
        "it is the export itself, given again as its history; give as the history the "
        "history() rows or the history.db Mem0 wrote with it, or no history"
    )


def test_a_bare_list_export_as_the_history_is_hinted_at_its_root(tmp_path):
    export = _write(tmp_path, "e.json", EXPORT)
    v1 = _write(tmp_path, "v1.json", EXPORT["results"])
    _, problems = _problems(lambda: load_external_store(export, "mem0", history=v1))
    assert [(p, r) for p, r, _ in problems] == [("$", "format-hint")]


def test_memories_under_an_exports_history_key_get_one_hint(tmp_path):
    doc = {**EXPORT, "history": EXPORT["results"]}
    source, problems = _problems(
        lambda: load_external_store(_write(tmp_path, "e.json", doc), "mem0")
    )
    assert source.endswith("e.json")
    ((path, rule, message),) = problems
    assert (path, rule) == ("$.history", "format-hint")
    assert message.startswith("the export's 'history' holds 2 memories ('id' and 'memory')")


def test_cli_an_export_given_as_the_history_is_one_line(tmp_path):
    export = _write(tmp_path, "e.json", EXPORT)
    copy = _write(tmp_path, "copy.json", EXPORT)
    for argv in (
        ("score", str(PKG_FILE), "--external", str(export), "--format", "mem0"),
        ("import", "mem0", str(export), "--package", str(PKG_FILE)),
    ):
        rc, _, err = run_cli(*argv, "--history", str(copy), *(("-o", str(tmp_path / "o.json"))
                             if argv[0] == "import" else ()))  # fmt: skip
        assert rc == 2, err
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith(f"{copy}: $.results: {EXPORT_HINT}"), lines[0]
        assert lines[0].endswith("[rule: format-hint]"), lines[0]


def test_app_an_export_given_as_the_history_is_one_error_naming_the_history_upload():
    at = open_app(PAGE, package=PACKAGE)
    _upload(at, "w_ext_upload", "e.json", json.dumps(EXPORT).encode())
    assert not at.error, [e.value for e in at.error]
    _upload(at, "w_ext_history", "h.json", json.dumps(EXPORT).encode())
    (error,) = [_plain(e.value) for e in at.error]
    assert "was not loaded" in error, error
    assert f"h.json: $.results: {EXPORT_HINT}it is the export itself" in error, error
    assert error.count("[rule: ") == 1 and "[rule: format-hint]" in error, error
    assert "memory_id" not in error.replace("(memory_id, old_memory", ""), error


# ---------------------------------------------------------------- 7. another format's file


def test_a_zep_file_given_as_mem0_gets_the_hint_alone(tmp_path):
    zep = _write(tmp_path, "zep_v4.json", ZEP)
    source, problems = _problems(lambda: load_external_store(zep, "mem0"))
    assert source == str(zep)
    assert problems == [("$", "format-hint", ZEP_HINT)]


def test_a_mem0_export_given_as_zep_gets_the_hint_alone(tmp_path):
    export = _write(tmp_path, "e.json", EXPORT)
    _, problems = _problems(lambda: load_external_store(export, "zep"))
    assert problems == [
        (
            "$",
            "format-hint",
            "this file looks like a Mem0 export or OpenMemory backup (format 'mem0'), not an "
            "export of format 'zep'",
        )
    ]


def test_cli_a_zep_file_given_as_mem0_is_one_line(tmp_path):
    zep = _write(tmp_path, "zep_v4.json", ZEP)
    for argv in (
        ("score", str(PKG_FILE), "--external", str(zep), "--format", "mem0"),
        ("import", "mem0", str(zep), "--package", str(PKG_FILE), "-o", str(tmp_path / "o.json")),
    ):
        rc, _, err = run_cli(*argv)
        assert rc == 2, err
        assert err.strip().splitlines() == [f"{zep}: $: {ZEP_HINT} [rule: format-hint]"], err


def test_app_a_zep_file_uploaded_as_mem0_is_the_hint_alone():
    at = open_app(PAGE, package=PACKAGE)
    assert at.selectbox(key="w_ext_format").value == "mem0"
    _upload(at, "w_ext_upload", "zep_v4.json", json.dumps(ZEP).encode())
    (error,) = [_plain(e.value) for e in at.error]
    assert f"zep_v4.json: $: {ZEP_HINT} [rule: format-hint]" in error, error
    assert error.count("[rule: ") == 1, error
    assert "rename it" not in error and "has no id" not in error, error


# ------------------------------------------------------------------ 10. the export's "now"

RULE = (
    ". Rule: the export does not say when it was taken, so its memories' latest created_at / "
    "updated_at stands in for 'now' (it was taken no earlier)"
)
NOT_USED = (
    "; the history's later times (up to 2025-04-02T00:00:00+00:00) are not used: a history is "
    "read when it is dumped and can run past the export it goes with"
)


def _expiry_warning(warnings: list[str]) -> str:
    (warning,) = [message(w) for w in warnings if "expiration_date" in w]
    return warning


def test_expiry_is_judged_at_the_exports_own_time_not_a_later_historys(tmp_path):
    export = _write(tmp_path, "platform.json", PLATFORM)
    history = _write(tmp_path, "hist.json", LATER_HISTORY)
    store = load_external_store(export, "mem0", history=history)
    status = {m.id: m.status for m in store.memories}
    # p6 expired on 2025-03-10, before 2025-03-15; p5 (2025-03-20) had not, though the
    # history runs to 2025-04-02: the export is older than that history, as the import says.
    assert status == {"p2": "active", "p5": "active", "p6": "expired"}
    assert "expired_before_export" not in next(m for m in store.memories if m.id == "p5").meta
    warnings = store.meta["warnings"]
    assert any("the export is older than the history" in w for w in warnings)
    assert _expiry_warning(warnings) == (
        "2 memory(ies) carry an expiration_date; 1 of them expire before the export's latest "
        "time (2025-03-15T17:00:00+00:00): 'p6'; those are marked status 'expired' (a "
        "superseded one keeps that status) and still counted as part of the store (Mem0 v2 "
        "hides expired memories from get_all and search unless show_expired=True)" + RULE + NOT_USED
    )


def test_without_times_of_its_own_an_export_marks_none_expired_whatever_its_history(tmp_path):
    doc = {"results": [{"id": "p2", "memory": "Prefers ryokan inns now",
                        "expiration_date": "2025-03-20"}]}  # fmt: skip
    store = load_external_store(
        _write(tmp_path, "e.json", doc), "mem0", history=_write(tmp_path, "h.json", LATER_HISTORY)
    )
    assert [m.status for m in store.memories] == ["active"]
    assert _expiry_warning(store.meta["warnings"]) == (
        "1 memory(ies) carry an expiration_date; the export's memories carry no readable "
        "created_at / updated_at to compare them with, so none is marked expired (each is kept "
        "as active)" + NOT_USED
    )


def test_none_expired_is_said_as_such(tmp_path):
    doc = {"results": [{**PLATFORM["results"][1], "expiration_date": "2030-01-01"}]}
    store = load_external_store(_write(tmp_path, "e.json", doc), "mem0")
    assert _expiry_warning(store.meta["warnings"]) == (
        "1 memory(ies) carry an expiration_date; 0 of them expire before the export's latest "
        "time (2025-03-01T17:00:00+00:00), so none is marked expired" + RULE
    )


def test_cli_the_expiry_note_names_the_exports_time_and_the_rule(tmp_path):
    export = _write(tmp_path, "platform.json", PLATFORM)
    history = _write(tmp_path, "hist.json", LATER_HISTORY)
    rc, out, err = run_cli("score", str(PKG_FILE), "--external", str(export), "--format", "mem0",
                           "--history", str(history))  # fmt: skip
    assert rc == 0, err
    (warning,) = [line for line in err.splitlines() if "expiration_date" in line]
    assert warning.startswith(
        f"{export}: warning: $.results[2].expiration_date: 2 memory(ies) carry an expiration_date; "
    )
    assert "before the export's latest time (2025-03-15T17:00:00+00:00): 'p6'" in warning
    assert warning.endswith(RULE + NOT_USED + " (rule: expiry)"), warning
    (note,) = [line for line in out.splitlines() if "expiration_date" in line]
    assert note.startswith(
        f"note: At the import of {export}: $.results[2].expiration_date: 2 memory(ies)"
    ), note
    assert note.endswith(RULE + NOT_USED + " (rule: expiry)"), note


def test_app_the_expiry_warning_names_the_exports_time_and_the_rule():
    at = open_app(PAGE, package=PACKAGE)
    _upload(at, "w_ext_upload", "platform.json", json.dumps(PLATFORM).encode())
    _upload(at, "w_ext_history", "hist.json", json.dumps(LATER_HISTORY).encode())
    assert not at.error, [e.value for e in at.error]
    (success,) = [_plain(s.value) for s in at.success]
    assert "with history hist.json" in success, success
    (warning,) = [w for w in map(_plain, (w.value for w in at.warning)) if "expiration_date" in w]
    assert "before the export's latest time (2025-03-15T17:00:00+00:00): 'p6'" in warning
    assert (RULE + NOT_USED) in warning, warning
    ((_, imports),) = at.session_state["ma_ann_imports"].items()
    store = imports["mem0"]["store"]
    assert {m.id: m.status for m in store.memories} == {
        "p2": "active",
        "p5": "active",
        "p6": "expired",
    }
