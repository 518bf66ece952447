"""External stores (QA s43): three small defects.

1. A store costed by another rule than the package's unit (Cost rule ``chars`` next to a words
   package) showed "Store cost (words) = 23", 23 being chars: the page labelled the memories'
   costs with the package's unit. The union report now carries the store's cost unit.
2. A Mem0 history DELETE row without ``updated_at`` gave the memory ``deleted_at`` = its
   creation time (the row's ``created_at``, EXPORT_FORMATS 1.4): the deletion time is unknown.
3. Several Mem0 result pages saved as one JSON list (``[{"results": [...]}, ...]``) got one
   "has no id" / "missing the memory text" per page instead of one message saying what it is.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_utils import open_app
from cli_utils import run_cli
from package_utils import mem0_history_db, write_json

from memaudit_core.errors import PackageError
from memaudit_core.importers import load_external_store
from memaudit_core.package import load_package
from memaudit_core.union import UnionReport, union_report, with_store

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_FILE = ROOT / "sample_packages" / "veg-to-pescatarian.json"
PAGE = "pages/4_External_stores.py"
TEXT = "User is pescatarian now"
#: One memory: 23 characters, 4 words (counted by hand).
EXPORT = {"results": [{"id": "m1", "memory": TEXT, "created_at": "2025-05-03T10:00:00Z"}]}
CHARS, WORDS = 23, 4


# --------------------------------------------------------------------------- 1. cost unit


def test_the_union_report_carries_the_stores_cost_unit(tmp_path: Path) -> None:
    pkg = load_package(PACKAGE_FILE)
    assert pkg.cost_unit == "words"
    f = write_json(tmp_path, "e.json", EXPORT)
    store = load_external_store(f, "mem0", cost_rule="chars", package=pkg)
    rep = union_report(with_store(pkg, store), store.id, 100)
    assert (rep.cost_unit, rep.memory_cost_unit, rep.memory_unit) == ("words", "chars", "chars")
    assert rep.store_cost == CHARS
    saved = rep.to_dict()
    assert saved["memory_cost_unit"] == "chars"
    assert UnionReport.from_dict(saved).memory_unit == "chars"
    # A report saved before the field existed reads back in the package's unit, as it showed.
    del saved["memory_cost_unit"]
    assert UnionReport.from_dict(saved).memory_unit == "words"
    # The package's own rule: one unit.
    words = load_external_store(f, "mem0", package=pkg)
    rep_w = union_report(with_store(pkg, words), words.id, 100)
    assert (rep_w.memory_unit, rep_w.store_cost) == ("words", WORDS)


def test_the_page_labels_the_store_cost_in_the_stores_unit() -> None:
    at = open_app(PAGE, package="sample:veg-to-pescatarian")
    at.selectbox(key="w_ext_cost_rule").set_value("chars").run()
    data = json.dumps(EXPORT).encode()
    at.file_uploader(key="w_ext_upload").set_value(("e.json", data, "application/json")).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    labels = {m.label: m for m in at.metric}
    assert "Store cost (words)" not in labels
    assert labels["Store cost (chars)"].value == str(CHARS)
    assert labels["Kept F(Y')"].help.endswith(" chars.")


# --------------------------------------------------------------------------- 2. deleted_at


def _history(delete_updated_at: str | None) -> list[dict]:
    created = "2023-05-01T00:00:00+00:00"
    return [
        {"id": "h1", "memory_id": "m9", "new_memory": "Ann has a hamster.", "event": "ADD",
         "created_at": created, "updated_at": None, "is_deleted": False},
        {"id": "h2", "memory_id": "m9", "old_memory": "Ann has a hamster.", "new_memory": None,
         "event": "DELETE", "created_at": created, "updated_at": delete_updated_at,
         "is_deleted": True},
    ]  # fmt: skip


def test_a_delete_row_without_updated_at_has_no_deletion_time(tmp_path: Path) -> None:
    f = write_json(tmp_path, "e.json", EXPORT)
    store = load_external_store(f, "mem0", history=_history(None))
    assert store.meta["deleted"] == [
        {
            "id": "m9",
            "text": "Ann has a hamster.",
            "status": "deleted",
            "deleted_at": None,
            "from": "history",
        }
    ]
    # Its order is certain (a DELETE ends its memory): no "without a readable time" warning.
    assert not [w for w in store.meta.get("warnings", []) if "readable time" in w]
    # With updated_at, that is the deletion time.
    dated = load_external_store(f, "mem0", history=_history("2023-06-02T08:00:00+00:00"))
    assert dated.meta["deleted"][0]["deleted_at"] == "2023-06-02T08:00:00+00:00"


def test_a_history_db_delete_row_without_updated_at_has_no_deletion_time(tmp_path: Path) -> None:
    db = mem0_history_db(
        tmp_path / "history.db",
        [
            ("h3", "m9", None, "Ann has a hamster.", "ADD", "2023-05-01T00:00:00-07:00", None,
             0, None, None),
            ("h4", "m9", "Ann has a hamster.", None, "DELETE", "2023-05-01T00:00:00-07:00", None,
             1, None, None),
        ],
    )  # fmt: skip
    f = write_json(tmp_path, "e.json", EXPORT)
    store = load_external_store(f, "mem0", history=db)
    assert [(d["id"], d["deleted_at"]) for d in store.meta["deleted"]] == [("m9", None)]


def test_a_kept_memorys_delete_event_has_no_time(tmp_path: Path) -> None:
    """The export still holds m9: its history's DELETE event time is unknown, not created_at."""
    export = {"results": [{"id": "m9", "memory": "Ann has a hamster."}]}
    f = write_json(tmp_path, "e.json", export)
    store = load_external_store(f, "mem0", history=_history(None))
    (memory,) = store.memories
    assert [(e["event"], e["at"]) for e in memory.meta["history"]] == [
        ("ADD", "2023-05-01T00:00:00+00:00"),
        ("DELETE", None),
    ]


# --------------------------------------------------------------------------- 3. pages


PAGES = [
    {"results": [{"id": "m1", "memory": "x y", "metadata": {"dia_id": "D1:1"}}]},
    {"results": [{"id": "m2", "memory": "x y z", "metadata": {"dia_id": "D1:3"}}]},
]


def test_a_list_of_result_pages_gets_one_message(tmp_path: Path) -> None:
    f = write_json(tmp_path, "pages.json", PAGES)
    with pytest.raises(PackageError) as info:
        load_external_store(f, "mem0")
    assert [(p.path, p.rule) for p in info.value.problems] == [("$", "mem0-shape")]
    message = info.value.problems[0].message
    assert message.startswith("this is a list of 2 result pages ($[0].results ... $[1].results)")
    assert "join every page's 'results' into one list" in message


def test_score_names_the_file_path_and_rule_for_a_list_of_pages(tmp_path: Path) -> None:
    f = write_json(tmp_path, "pages.json", PAGES)
    rc, out, err = run_cli("score", str(PACKAGE_FILE), "--external", str(f), "--format", "mem0")
    assert rc != 0 and out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith(f"{f}: $: this is a list of 2 result pages")
    assert line.endswith("[rule: mem0-shape]")
