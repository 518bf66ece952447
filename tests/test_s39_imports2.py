"""QA s39 round 2: importer hints and Mem0 history (A4, A5, A7, A8), suite source labels and
repeated files (B2, B3). Fixtures are QA's files (/tmp/qa39b/h4/imp, /tmp/qa39b/h3), inline.

Every expected value is written by hand from the documented rules (README, EXPORT_FORMATS.md,
the importers' docstrings), never read back from the code under test.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from cli_utils import run_cli
from package_utils import MEM0_EXPORT as EXPORT
from package_utils import mem0_history_db, write_json

from memaudit_core.errors import PackageError
from memaudit_core.importers import guess_store_format, load_external_store
from memaudit_core.package import load_package
from memaudit_core.suites import sweep_suite

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_packages"

# QA's history.db rows: Mem0's ADD, then its own delete (add_history(..., "DELETE",
# is_deleted=1) with NULL times).
ROWS = [
    (
        "h3",
        "m5",
        None,
        "Ann works at ACME",
        "ADD",
        "2023-05-08T07:03:00-07:00",
        None,
        0,
        None,
        None,
    ),
    ("h4", "m5", "Ann works at ACME", None, "DELETE", None, None, 1, None, None),
]
TIMELESS = "history rows without a readable time"


# --------------------------------------------------------------------------- A4 timeless DELETE


def test_mem0_own_delete_without_times_in_history_db_is_not_warned_about(tmp_path):
    """A4: the DELETE is always last, so the order is certain; the warning listed every
    memory Mem0 deleted itself."""
    db = mem0_history_db(tmp_path / "history.db", ROWS)
    store = load_external_store(write_json(tmp_path, "m.json", EXPORT), "mem0", history=db)
    assert [d["id"] for d in store.meta["deleted"]] == ["m5"]
    assert not any(TIMELESS in w for w in store.meta.get("warnings", []))


def test_mem0_timeless_delete_in_the_exports_own_history_is_not_warned_about(tmp_path):
    """A4 (QA's m0_naive.json history): JSON rows, the DELETE with null times, is_deleted."""
    doc = dict(EXPORT)
    doc["history"] = [
        {
            "id": "h3",
            "memory_id": "m5",
            "old_memory": None,
            "new_memory": "Ann works at ACME",
            "event": "ADD",
            "created_at": "2023-05-08T14:03:00+00:00",
            "updated_at": None,
            "is_deleted": False,
        },
        {
            "id": "h4",
            "memory_id": "m5",
            "old_memory": "Ann works at ACME",
            "new_memory": None,
            "event": "DELETE",
            "created_at": None,
            "updated_at": None,
            "is_deleted": True,
        },
    ]
    store = load_external_store(write_json(tmp_path, "m.json", doc), "mem0")
    assert [d["id"] for d in store.meta["deleted"]] == ["m5"]
    assert not any(TIMELESS in w for w in store.meta.get("warnings", []))


def test_a_timeless_update_is_still_warned_about(tmp_path):
    """Regression guard: an UPDATE without a time still leaves the order to the file."""
    rows = [
        ROWS[0],
        (
            "h5",
            "m5",
            "Ann works at ACME",
            "Ann works at Initech",
            "UPDATE",
            None,
            None,
            0,
            None,
            None,
        ),
    ]
    db = mem0_history_db(tmp_path / "history.db", rows)
    store = load_external_store(write_json(tmp_path, "m.json", EXPORT), "mem0", history=db)
    assert any(TIMELESS in w and "('m5')" in w for w in store.meta["warnings"])


# --------------------------------------------------------------------------- A5 naive time


def test_newer_history_warning_does_not_invent_a_zone_for_a_naive_export_time(tmp_path):
    """A5 (m0_naive.json): the export's updated_at "2023-06-20T10:04:00" has no zone; it was
    printed as "2023-06-20T10:04:00+00:00"."""
    doc = {
        "results": [
            {
                "id": "m3",
                "memory": "Ann lives in Berlin",
                "created_at": "2023-05-08T14:02:00+00:00",
                "updated_at": "2023-06-20T10:04:00",
            }
        ],
        "history": [
            {
                "id": "h2",
                "memory_id": "m3",
                "old_memory": "Ann lives in Berlin",
                "new_memory": "Ann lives in Lisbon",
                "event": "UPDATE",
                "created_at": "2023-05-08T14:02:00+00:00",
                "updated_at": "2023-06-20T10:05:00+00:00",
                "is_deleted": False,
            }
        ],
    }
    store = load_external_store(write_json(tmp_path, "m.json", doc), "mem0")
    (newer,) = [w for w in store.meta["warnings"] if "after the export's time" in w]
    assert "at 2023-06-20T10:05:00+00:00, after the export's time for it" in newer
    assert "(2023-06-20T10:04:00, with no zone: read as UTC to compare)" in newer
    assert "10:04:00+00:00" not in newer


# --------------------------------------------------------------------------- A7 format guess

COGNEE = {"nodes": [], "edges": [{"source": "a", "target": "b", "relationship_name": "x"}]}
HISTORY_ROWS = [
    {"id": "h1", "memory_id": "m1", "event": "ADD", "new_memory": "x", "old_memory": None}
]


def test_a_cognee_export_is_not_called_zep(tmp_path):
    """A7: any object with "edges" was hinted as Zep, whose import then failed on 'fact'."""
    f = write_json(tmp_path, "cognee.json", COGNEE)
    assert guess_store_format(f) is None
    with pytest.raises(PackageError) as info:
        load_package(f)
    assert not any(p.rule == "format-hint" for p in info.value.problems)
    assert "Zep" not in str(info.value)


@pytest.mark.parametrize(
    "doc",
    [
        {"edges": [{"uuid": "e1", "fact": "Ann lives in Lisbon"}]},
        {"edges": [{"uuid": "e1", "source_node_uuid": "n1", "target_node_uuid": "n2"}]},
    ],
    ids=["fact", "endpoints"],
)
def test_zep_edges_under_edges_are_still_zep(tmp_path, doc):
    """Regression guard for A7: the Zep shape (EXPORT_FORMATS 4.1) keeps its hint."""
    assert guess_store_format(write_json(tmp_path, "z.json", doc)) == "zep"


def test_an_empty_mem0_results_object_gets_the_mem0_hint(tmp_path):
    """A7 (m0_empty.json): {"results": []} got only the generic package problems."""
    f = write_json(tmp_path, "m0_empty.json", {"results": []})
    assert guess_store_format(f) == "mem0"
    with pytest.raises(PackageError) as info:
        load_package(f)
    first = info.value.problems[0]
    assert (first.path, first.rule) == ("$", "format-hint")
    assert "memaudit import mem0 FILE --package PACKAGE" in first.message


def test_mem0_history_rows_given_as_a_package_say_they_are_a_history(tmp_path):
    """A7 (histonly.json): only "$: a package must be a JSON object"."""
    f = write_json(tmp_path, "histonly.json", HISTORY_ROWS)
    assert guess_store_format(f) == "mem0-history-rows"
    with pytest.raises(PackageError) as info:
        load_package(f)
    first = info.value.problems[0]
    assert (first.path, first.rule) == ("$", "format-hint")
    assert "Mem0 history rows" in first.message
    assert "memaudit import mem0 EXPORT --history FILE --package PACKAGE" in first.message


def test_history_rows_read_as_mem0_keep_one_hint(tmp_path):
    """Regression guard for A7: now that the guess knows history rows, the Mem0 importer's
    own "these are history rows" is not doubled by the guessed format's hint."""
    f = write_json(tmp_path, "histonly.json", HISTORY_ROWS)
    with pytest.raises(PackageError) as info:
        load_external_store(f, "mem0")
    assert [p.rule for p in info.value.problems] == ["format-hint"]
    assert info.value.problems[0].message.startswith("these are Mem0 history rows")


# --------------------------------------------------------------------------- A8 hint first


def test_a_mem0_export_loaded_as_a_package_gets_the_hint_first_for_both_faces(tmp_path):
    """A8: the hint was the 7th problem and named the CLI only."""
    with pytest.raises(PackageError) as info:
        load_package(write_json(tmp_path, "m0.json", EXPORT))
    first, *rest = info.value.problems
    assert (first.path, first.rule) == ("$", "format-hint")
    assert "`memaudit import mem0 FILE --package PACKAGE -o OUT.json`" in first.message
    assert "External stores page" in first.message and "\n" not in first.message
    # QA s50: alone, as load_external_store gives its hint for a package.
    assert rest == []


def test_the_app_upload_of_a_mem0_export_shows_the_hint_first() -> None:
    """A8: the main area said "First: ... $.results: unknown field"."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["package"] = "sample:update_chain"
    at.run()
    at.file_uploader(key="w_upload").upload(
        "m0.json", json.dumps(EXPORT).encode(), "application/json"
    )
    at.run()
    (main,) = [
        e.value.replace("\\", "").replace("`", "") for e in at.main.error if "m0.json" in e.value
    ]
    first = main.split("First: ", 1)[1]
    assert first.startswith("m0.json: $: this file looks like a Mem0 export")
    assert "External stores page" in first


# --------------------------------------------------------------------------- B2 source labels


@pytest.fixture
def two_p(tmp_path, monkeypatch):
    """QA's h3 layout: A/p.json and B/p.json, lists A/l.txt, B/l.txt and top.txt."""
    for folder, sample in (("A", "update_chain.json"), ("B", "veg-to-pescatarian.json")):
        (tmp_path / folder).mkdir()
        shutil.copy(SAMPLES / sample, tmp_path / folder / "p.json")
        (tmp_path / folder / "l.txt").write_text("p.json\n", encoding="utf-8")
    (tmp_path / "top.txt").write_text("A/l.txt\nB/l.txt\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


SWEEP = ("--writers", "gvt", "--budgets", "4", "--quiet")


def _sources(*argv: str) -> list[str]:
    rc, out, err = run_cli("sweep", *argv, *SWEEP, "--json")
    assert rc == 0, err
    return [r["source"] for r in json.loads(out)["rows"]]


@pytest.mark.parametrize(
    "argv",
    [
        ("A", "B"),
        ("A/p.json", "B/p.json", "--out", "j2", "--no-figures"),
        ("A/p.json", "B/p.json", "--workers", "2"),
        ("top.txt",),
        ("A/l.txt", "B/l.txt"),
    ],
    ids=["folders", "files-out", "files-workers", "nested-lists", "lists"],
)
def test_suite_sources_are_labelled_by_the_path_as_named(two_p, argv):
    """B2: all of these gave source "p.json" twice."""
    assert _sources(*argv) == ["A/p.json", "B/p.json"]


def test_plain_and_suite_sweeps_label_a_file_alike(two_p):
    """B2: without --out the plain sweep said A/p.json; with --out, p.json."""
    plain = _sources("A/p.json", "B/p.json")
    assert plain == ["A/p.json", "B/p.json"]
    assert _sources("A/p.json", "B/p.json", "--out", "j", "--no-figures") == plain


def test_folder_member_of_a_folder_given_with_a_slash(two_p):
    """B2: the folder as given ("A/"), its member joined to it once."""
    assert _sources("A/", "--out", "j", "--no-figures") == ["A/p.json"]


def test_audit_sources_csv_labels_files_by_their_path(two_p):
    """B2: `audit A B --out ja` listed p.json twice in sources.csv."""
    rc, _, err = run_cli("audit", "A", "B", "--budgets", "4", "--out", "ja", "--no-figures")
    assert rc == 0, err
    with open(two_p / "ja" / "sources.csv", encoding="utf-8") as fh:
        assert [row["label"] for row in csv.DictReader(fh)] == ["A/p.json", "B/p.json"]


def test_a_relabelled_file_resumes_from_the_journal(two_p):
    """Regression guard for B2: the label is not the source's identity, so naming the file
    through its folder after naming it directly reuses the journal."""
    rc, _, err = run_cli("sweep", "A/p.json", *SWEEP, "--out", "r", "--no-figures")
    assert rc == 0, err
    rc, out, err = run_cli("sweep", "A", *SWEEP, "--out", "r", "--no-figures", "--json")
    assert rc == 0, err
    res = json.loads(out)
    assert (res["executed"], res["reused"]) == (0, 1)
    assert [r["source"] for r in res["rows"]] == ["A/p.json"]


# --------------------------------------------------------------------------- B3 repeats


def test_a_file_named_twice_in_a_suite_is_counted_once_and_said(two_p):
    """B3: `sweep A/p.json A/p.json --out D` gave n = 1 without a word."""
    rc, out, err = run_cli(
        "sweep", "A/p.json", "A/p.json", *SWEEP, "--out", "D", "--no-figures", "--json"
    )
    assert rc == 0, err
    res = json.loads(out)
    assert res["n_sources"] == 1 and [r["source"] for r in res["rows"]] == ["A/p.json"]
    assert (
        "1 package file(s) named more than once: A/p.json (2 times); each file is read and "
        "counted once"
    ) in res["notes"]


def test_a_file_reached_through_its_folder_and_directly_is_said_once(two_p):
    """B3: the folder A and the file A/p.json name one file: one source, 2 names."""
    res = sweep_suite(paths=["A", "A/p.json", "A/p.json"], writers=["gvt"], budgets=[4])
    assert res.n_sources == 1
    assert [n for n in res.notes if "named more than once" in n] == [
        "1 package file(s) named more than once: A/p.json (3 times); each file is read and "
        "counted once"
    ]


def test_distinct_files_bring_no_repeat_note(two_p):
    """Regression guard for B3: two files, no note."""
    res = sweep_suite(paths=["A", "B"], writers=["gvt"], budgets=[4])
    assert not any("named more than once" in n for n in res.notes)
