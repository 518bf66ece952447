"""QA s50 (a new user's first mistakes): the messages say what was meant.

1. A store saved as its own file: ``--store mystore.json`` said only "unknown store ...
   (known: none)", and ``--external mystore.json --format mem0`` only that Mem0 needs a
   'results' array. ``--store`` now says it takes a store id of the package's ``stores``
   array (or --external for an export); the importers (CLI, library and the app's External
   stores upload) recognise a MemAudit store object under rule ``format-hint``.
2. An unknown writer (``GVT``, ``my_writer.py``) listed the known names only: a slip now gets
   "did you mean", a file name how plugin writers are named (library and CLI alike); ``score
   --writers`` says score takes --writer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_utils import open_app
from cli_utils import run_cli

from memaudit_core.curves import resolve_methods
from memaudit_core.errors import PackageError, UnknownNameError
from memaudit_core.generators import generate
from memaudit_core.importers import load_external_store
from memaudit_core.writers import get_writer

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"
UPDATE_CHAIN = str(SAMPLES / "update_chain.json")
FORMATS = ("mem0", "letta", "amem", "zep")
#: A writer's store, as the QA report saved it, and a store of external memories.
SELECT_STORE = {"id": "mine", "select": ["update_1_tombstone"]}
MEMORY_STORE = {
    "id": "notes",
    "label": "My notes",
    "memories": [{"id": "m1", "text": "Pescatarian now", "cost": 2, "coverage": {"u:x": 1}}],
}
STORES_ARRAY = 'add it to the package\'s "stores" array'
STORE_ID_HINT = '--store takes the id of a store in the package\'s "stores" array, not a file'
BUILTIN = (
    "gvt, density, greedy, fact_only, summary_only, recency_raw, no_validity_gvt, recency, "
    "compact_validity, estimated_gvt"
)


def _known() -> str:
    """The names an unknown-writer message lists: the built-ins, then whatever earlier tests
    in this process registered or loaded (the full suite loads plugin fixtures first)."""
    from memaudit_core.writers import PLUGIN_WRITERS, WRITERS

    known = ", ".join([*WRITERS, *PLUGIN_WRITERS])
    assert known.startswith(BUILTIN), known
    return known


def _hint(fmt: str) -> str:
    return (
        "$: this is a MemAudit store object (an 'id' with 'select' and/or 'memories'), not an "
        f"export of format '{fmt}': {STORES_ARRAY} (package format: README.md) and score it by "
        "its id (memaudit score PACKAGE --store ID; in the app: upload the package that holds "
        "it) [rule: format-hint]"
    )


@pytest.mark.parametrize("store", [SELECT_STORE, MEMORY_STORE], ids=["select", "memories"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_store_object_given_as_an_export_is_named_as_one(tmp_path, fmt, store) -> None:
    path = tmp_path / "mystore.json"
    path.write_text(json.dumps(store))
    with pytest.raises(PackageError) as info:
        load_external_store(path, fmt)
    # The hint alone: the importer's own reading of a store's keys as notes or edges says
    # nothing true about the file.
    assert [(p.path, p.rule) for p in info.value.problems] == [("$", "format-hint")]
    rc, out, err = run_cli(
        "score", UPDATE_CHAIN, "--budget", "6", "--external", str(path), "--format", fmt
    )
    assert (rc, out) == (2, "")
    assert err.strip() == f"{path}: {_hint(fmt)}"


def test_store_given_a_file_says_what_store_takes(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("mystore.json").write_text(json.dumps(SELECT_STORE))
    Path("mystore").write_text(json.dumps(SELECT_STORE))  # an existing file without .json
    for value in ("mystore.json", "mystore", "missing.json"):
        rc, out, err = run_cli("score", UPDATE_CHAIN, "--budget", "6", "--store", value)
        assert (rc, out) == (2, ""), value
        assert err.startswith(
            f"memaudit score: error: unknown store '{value}' in package 'update_chain' (known: none); "
            f"{STORE_ID_HINT}: add the store object"
        ), err
        assert err.rstrip().endswith(
            "or score a memory-system export with --external FILE --format FMT"
        ), err
    # A plain id that is no store's is a typo, not a file: no word of files.
    rc, _, err = run_cli("score", UPDATE_CHAIN, "--budget", "6", "--store", "mine")
    assert rc == 2
    assert err.strip() == (
        "memaudit score: error: unknown store 'mine' in package 'update_chain' (known: none)"
    )


@pytest.mark.parametrize(
    ("name", "meant"), [("GVT", "gvt"), ("Density", "density"), ("densty", "density")]
)
def test_an_unknown_writer_gets_did_you_mean(name, meant) -> None:
    expected = f"unknown writer '{name}' (known: {_known()}); did you mean '{meant}'?"
    with pytest.raises(UnknownNameError) as info:
        get_writer(name)
    assert str(info.value).startswith(f"unknown writer '{name}' (known: gvt, density, ")
    assert str(info.value).endswith(f"; did you mean '{meant}'?")
    rc, out, err = run_cli("score", UPDATE_CHAIN, "--budget", "6", "--writer", name)
    assert (rc, out, err.strip()) == (2, "", f"memaudit score: error: {expected}")
    # The curves' method keys name writers too.
    with pytest.raises(UnknownNameError) as info:
        resolve_methods(generate("update_chain"), [f"writer:{name}"])
    assert str(info.value).endswith(f"; did you mean '{meant}'?")
    # A name far from every writer gets no guess.
    with pytest.raises(UnknownNameError) as info:
        get_writer("zzqx")
    assert str(info.value) == f"unknown writer 'zzqx' (known: {_known()})"


@pytest.mark.parametrize("name", ["my_writer.py", "plugins/my_writer.py"])
def test_a_writer_file_says_how_plugin_writers_are_named(name) -> None:
    hint = (
        "; a plugin writer is named MODULE:FUNCTION, not by its file: e.g. "
        "my_writer:cheapest_first for a function cheapest_first in my_writer.py (the module is "
        "found from the working folder or PYTHONPATH)"
    )
    with pytest.raises(UnknownNameError) as info:
        get_writer(name)
    assert str(info.value) == f"unknown writer '{name}' (known: {_known()}){hint}"
    rc, _, err = run_cli("score", UPDATE_CHAIN, "--writer", name)
    assert rc == 2
    assert (
        err.strip() == f"memaudit score: error: unknown writer '{name}' (known: {_known()}){hint}"
    )


def test_score_given_sweeps_list_options_says_to_use_the_single_ones() -> None:
    rc, out, err = run_cli("score", UPDATE_CHAIN, "--writers", "gvt")
    assert (rc, out) == (2, "")
    assert err.strip().endswith(
        "memaudit score: error: unrecognized arguments: --writers gvt; score scores one "
        "writer: use --writer NAME (sweep takes --writers) (see memaudit score --help)"
    ), err
    rc, _, err = run_cli("score", UPDATE_CHAIN, "--stores=mine")
    assert rc == 2
    assert err.strip().endswith(
        "unrecognized arguments: --stores=mine; score scores one store: use --store ID "
        "(sweep takes --stores) (see memaudit score --help)"
    ), err


def test_the_external_stores_upload_names_a_store_object() -> None:
    at = open_app("pages/4_External_stores.py", package="sample:veg-to-pescatarian")
    data = json.dumps(SELECT_STORE).encode()
    at.file_uploader(key="w_ext_upload").set_value(("mystore.json", data, "application/json")).run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value.replace("\\", "") for e in at.error]
    assert len(errors) == 1, errors
    assert "mystore.json was not loaded** as mem0" in errors[0], errors[0]
    assert "this is a MemAudit store object" in errors[0], errors[0]
    assert STORES_ARRAY.replace('"', "") in errors[0].replace('"', ""), errors[0]
    assert "format-hint" in errors[0], errors[0]
