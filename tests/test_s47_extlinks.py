"""Session 47 QA (importers): links to unknown units, export id look-alikes, the app's words.

(a) A memory whose metadata names a unit the package lacks under a unit key (``unit_ids``,
    ``units``, ``unit_id``, ``unit``) was imported with a warning, exit 0, the link dropped. It
    is a missing reference: refused with the file, the JSON path of the id and rule
    ``known-unit``, in every importer that reads metadata links (Mem0, OpenMemory, Letta,
    A-Mem, Zep). ``dia_id`` and session links may come from another conversation and stay
    warnings (tests/test_importers_edges.py).
(b) A memory id with edge whitespace got no id look-alike warning at import, while
    ``validate`` of the written package gave one: the import now says it, at the export's path.
(c) The External stores page showed importer warnings as plain text under the green "Loaded"
    box; they are an st.warning now, and a missing unit an st.error.

Expected paths and messages are written by hand from the exports below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_utils import open_app
from cli_utils import run_cli
from package_utils import refused, write_json
from test_s40_openmemory import BACKUP

from memaudit_core.importers import load_external_store
from memaudit_core.package import load_package

REPO = Path(__file__).resolve().parents[1]
TRAVEL = REPO / "sample_packages" / "travel-assistant.json"
VEG = REPO / "sample_packages" / "veg-to-pescatarian.json"
RULE = "[rule: known-unit]"

#: Mem0 memories: one naming a unit of travel-assistant and one it lacks (the QA file).
MEM0 = {
    "results": [
        {"id": "m1", "memory": "The trip is to Lisbon", "metadata": {"unit_ids": ["u:trip"]}},
        {"id": "m2", "memory": "I live in Lisbon now.", "metadata": {"unit_ids": ["u:nope"]}},
    ]
}


def test_cli_import_refuses_a_unit_id_the_package_lacks(tmp_path: Path) -> None:
    export = write_json(tmp_path, "m_missunit.json", MEM0)
    out = tmp_path / "o.json"
    rc, _, err = run_cli("import", "mem0", str(export), "--package", str(TRAVEL), "-o", str(out))
    assert rc == 2, err
    assert f"{export}: $.results[1].metadata.unit_ids[0]: " in err, err
    assert "names no unit (nor experience or turn) of package 'travel-assistant'" in err
    assert f"(got 'u:nope') {RULE}" in err
    assert "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("fmt", "doc", "expected"),
    [
        # A Qdrant point: Mem0 flattens metadata into the payload.
        (
            "mem0",
            [{"id": "q1", "payload": {"data": "I live in Lisbon", "units": "u:trip;u:nope"}}],
            [("$[0].payload.units", "known-unit")],
        ),
        (
            "mem0",  # an OpenMemory backup's memories.json
            {
                **BACKUP,
                "memories": [
                    {**BACKUP["memories"][0], "metadata": {"unit_id": "u:nope"}},
                    *BACKUP["memories"][1:],
                ],
            },
            [("$.memories[0].metadata.unit_id", "known-unit")],
        ),
        (
            "letta",  # archival passages
            [{"id": "p1", "text": "I live in Lisbon", "metadata": {"unit_ids": ["u:trip", "x"]}}],
            [("$[0].metadata.unit_ids[1]", "known-unit")],
        ),
        (
            "amem",  # notes without a metadata object keep their links on the note
            [{"id": "n1", "content": "I live in Lisbon", "unit": "u:nope"}],
            [("$[0].unit", "known-unit")],
        ),
        (
            "zep",  # two edges of one episode: its metadata's link is refused once
            {
                "edges": [
                    {"uuid": "e1", "fact": "Ann lives in Lisbon", "episodes": ["ep1"]},
                    {"uuid": "e2", "fact": "Ann has a cat", "episodes": ["ep1"]},
                ],
                "episodes": [
                    {"uuid": "ep1", "name": "s1", "episode_metadata": {"unit_ids": ["u:nope"]}}
                ],
            },
            [("$.episodes[0].episode_metadata.unit_ids[0]", "known-unit")],
        ),
    ],
)
def test_every_importer_refuses_a_unit_link_the_package_lacks(
    tmp_path: Path, fmt: str, doc: object, expected: list[tuple[str, str]]
) -> None:
    pkg = load_package(TRAVEL)
    path = write_json(tmp_path, "export.json", doc)
    assert refused(lambda: load_external_store(path, fmt, package=pkg)) == expected


def test_a_letta_block_unit_link_is_refused_once_for_all_its_lines(tmp_path: Path) -> None:
    af = json.loads((REPO / "tests" / "fixtures" / "importers" / "letta_v2.af").read_text())
    af["blocks"][0]["metadata"] = {"unit_ids": ["u:nope"]}
    assert af["blocks"][0]["value"].count("\n") >= 2  # several lines, so several memories
    path = write_json(tmp_path, "agent.af", af)
    got = refused(lambda: load_external_store(path, "letta", package=load_package(TRAVEL)))
    assert got == [("$.blocks[0].metadata.unit_ids[0]", "known-unit")]


def test_import_warns_of_an_id_with_edge_whitespace_as_validate_does(tmp_path: Path) -> None:
    doc = {"results": [{"id": " e3e4-0001 ", "memory": "I live in Lisbon now."}]}
    export = write_json(tmp_path, "m_wsid.json", doc)
    out = tmp_path / "o.json"
    rc, _, err = run_cli("import", "mem0", str(export), "--package", str(TRAVEL), "-o", str(out))
    assert rc == 0, err
    said = (
        "' e3e4-0001 ' has leading and trailing whitespace; ids match exactly, character for "
        "character (rule: id-lookalike)"
    )
    assert f"{export}: warning: $.results[0].id: {said}" in err.splitlines(), err
    # validate says the same of the written store (its fourth, after the sample's three).
    rc, _, verr = run_cli("validate", str(out))
    assert rc == 0
    assert f"{out}: warning: $.stores[3].memories[0].id: {said}" in verr.splitlines(), verr


def _upload(doc: object) -> object:
    at = open_app("pages/4_External_stores.py", package="sample:veg-to-pescatarian")
    data = json.dumps(doc).encode()
    at.file_uploader(key="w_ext_upload").upload("m.json", data, "application/json").run()
    assert not at.exception
    return at


def test_app_shows_a_missing_unit_as_an_error_and_adds_nothing() -> None:
    doc = [{"id": "m1", "memory": "Ann eats fish", "metadata": {"unit_ids": ["u:seat", "u:nope"]}}]
    at = _upload(doc)
    assert not at.success
    (error,) = [e.value.replace("\\", "") for e in at.error]
    assert error.startswith("**m.json was not loaded** as mem0"), error
    assert "m.json: $[0].metadata.unit_ids[1]: names no unit" in error, error
    assert RULE in error
    assert not any(at.session_state["ma_ann_imports"].values())  # no store added


def test_app_shows_importer_warnings_as_a_warning_not_plain_text() -> None:
    # A dia_id the package lacks stays a warning (it may name another conversation's turn).
    doc = [{"id": "m1", "memory": "Ann eats fish", "metadata": {"dia_id": "D9:9"}}]
    at = _upload(doc)
    assert not at.error
    assert [s.value.split(":")[0] for s in at.success] == [
        "Loaded as store `mem0` (Mem0 · m\\.json)"
    ]
    assert not [t.value for t in at.text if t.value.startswith("warning")]
    (box,) = [w.value.replace("\\", "") for w in at.warning if "importer warning" in w.value]
    # Its path in a code span, as the page shows a package's warnings (session 53).
    assert box.startswith("**1 importer warning(s)** for m.json:\n\n- `$`: 1 memory(ies) have ")
    assert box.endswith("(rule: link-unresolved)")
    assert "$[0].metadata.dia_id: 'D9:9'" in box
