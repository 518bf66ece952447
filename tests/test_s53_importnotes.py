"""QA s52 follow-up: the importers' own notes were free text ("2 note(s) have a Chroma document
that differs ...", "q7 ($[0].qa[6]): no evidence listed", "not read: 1 other item(s) ..."),
so ``--json``'s ``warning_details`` gave them ``path: null, rule: null`` and a CI filter keyed
on the rule missed them, while the README promises a path and a rule for every warning.

Each note is now worded as a package warning, ``JSON-PATH: message (rule: RULE)``, the path
into the file read (the offending item, the array of the items a note lists, or ``$`` for the
whole file) and the rule one of :data:`IMPORT_NOTE_RULES`. Each test builds a small export
that triggers a note of one importer, resolves the note's path in the export's JSON, and
checks that ``memaudit import ... --json`` lists the note with that path and rule.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core.importers import load_external_store
from memaudit_core.importers._common import IMPORT_NOTE_RULES, common_path
from memaudit_core.package import save_package, warning_details, warning_parts

FIX = Path(__file__).parent / "fixtures" / "importers"
REPO = Path(__file__).resolve().parents[1]

_STEP = re.compile(r'\.([^.\[]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


def resolve(doc: Any, path: str) -> Any:
    """The value at JSON path ``path`` of ``doc`` (KeyError / IndexError when there is none)."""
    assert path.startswith("$"), path
    at, rest = doc, path[1:]
    while rest:
        m = _STEP.match(rest)
        assert m, (path, rest)
        if m[1] is not None:
            at = at[m[1]]
        elif m[2] is not None:
            assert isinstance(at, list), (path, m[0])
            at = at[int(m[2])]
        else:
            at = at[json.loads(m[3])]
        rest = rest[m.end() :]
    return at


def the_note(warnings: list[str], rule: str) -> dict[str, str]:
    """The one note of ``warnings`` with ``rule``, as ``warning_details`` gives it."""
    found = [d for d in warning_details(warnings) if d["rule"] == rule]
    assert len(found) == 1, (rule, warnings)
    return found[0]


def write(tmp_path: Path, name: str, doc: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def package_file(tmp_path: Path) -> Path:
    path = tmp_path / "pkg.json"
    save_package(ma.generate("update_chain"), path)
    return path


def imported(*argv: str) -> dict[str, Any]:
    """``memaudit import ARGV --json``'s ``imported`` object (it exits 0)."""
    rc, out, err = run_cli("import", *argv, "--json")
    assert rc == 0, err
    return json.loads(out)["imported"]


def listed(summary: dict[str, Any], rule: str) -> dict[str, str]:
    """The one ``warning_details`` entry of ``rule``; its text is in ``warnings`` beside."""
    found = [d for d in summary["warning_details"] if d["rule"] == rule]
    assert len(found) == 1, (rule, summary["warning_details"])
    assert len(summary["warning_details"]) == len(summary["warnings"])
    return found[0]


def test_mem0_notes_name_the_memory_and_their_rule(tmp_path: Path) -> None:
    doc = {
        "results": [
            {"id": "m1", "memory": "Likes green tea", "created_at": "2024-05-01T00:00:00Z"},
            {"id": "m2", "memory": "Paused one", "lifecycle_state": "paused"},
            {"id": "m3", "memory": "Likes green tea"},
            {"id": "m4", "memory": "Trip to Rome", "expiration_date": "2024-01-01"},
        ]
    }
    export = write(tmp_path, "mem0.json", doc)
    warnings = list(load_external_store(export, "mem0").meta["warnings"])
    expected = {
        "lifecycle-state": "$.results[1].lifecycle_state",
        "duplicate-memory": "$.results[2]",
        "expiry": "$.results[3].expiration_date",
    }
    for rule, path in expected.items():
        assert the_note(warnings, rule)["path"] == path
        resolve(doc, path)  # it is there
    assert resolve(doc, "$.results[1].lifecycle_state") == "paused"
    assert resolve(doc, "$.results[2]")["memory"] == doc["results"][0]["memory"]
    # The wording is kept: the message reads as before, only path and rule are added.
    assert the_note(warnings, "duplicate-memory")["message"].startswith(
        "1 memory(ies) repeat an earlier one: 'm1' = 'm3' (same text)"
    )
    summary = imported(
        "mem0",
        str(export),
        "--package",
        str(package_file(tmp_path)),
        "-o",
        str(tmp_path / "o.json"),
    )
    for rule, path in expected.items():
        assert listed(summary, rule)["path"] == path


def test_mem0_history_notes_name_the_history_row(tmp_path: Path) -> None:
    doc = {
        "results": [{"id": "m1", "memory": "Lives in Lisbon"}],
        "history": [
            {"memory_id": "m1", "event": "ADD", "new_memory": "Lives in Berlin"},
            {"memory_id": "m1", "event": "DELETE", "old_memory": "Lives in Berlin"},
        ],
    }
    export = write(tmp_path, "mem0h.json", doc)
    warnings = list(load_external_store(export, "mem0").meta["warnings"])
    order = the_note(warnings, "history-order")
    assert order["path"] == "$.history[0]" and resolve(doc, order["path"])["memory_id"] == "m1"
    deleted = the_note(warnings, "history-deleted")
    assert deleted["path"] == "$.results[0]" and resolve(doc, deleted["path"])["id"] == "m1"
    assert deleted["message"].startswith("history says memory 'm1' was deleted ($.history[1])")


def test_letta_notes_name_the_block(tmp_path: Path) -> None:
    doc = json.loads((FIX / "letta_v2.af").read_text(encoding="utf-8"))
    doc["blocks"].append({"id": "block-empty", "label": "todo", "value": "  "})
    doc["agents"][0]["block_ids"].append("block-empty")
    doc["agents"][0]["block_ids"].append("block-gone")
    export = write(tmp_path, "a.af", doc)
    warnings = list(load_external_store(export, "letta").meta["warnings"])
    empty = the_note(warnings, "block-empty")
    # The array of the blocks the message lists (each named there by its path).
    assert empty["path"] == "$.blocks" and isinstance(resolve(doc, "$.blocks"), list)
    k = len(doc["blocks"]) - 1
    assert f"$.blocks[{k}] 'todo'" in empty["message"]
    unknown = the_note(warnings, "block-unknown")
    assert unknown["path"] == "$.agents[0].block_ids"
    assert "block-gone" in resolve(doc, unknown["path"])
    summary = imported(
        "letta",
        str(export),
        "--package",
        str(package_file(tmp_path)),
        "-o",
        str(tmp_path / "o.json"),
    )
    assert listed(summary, "block-empty")["path"] == "$.blocks"
    assert listed(summary, "block-unknown")["path"] == "$.agents[0].block_ids"


def test_amem_chroma_document_note_names_the_documents(tmp_path: Path) -> None:
    doc = json.loads((FIX / "amem_chroma.json").read_text(encoding="utf-8"))
    doc["documents"][1] = "Melanie paints seascapes now."
    export = write(tmp_path, "chroma.json", doc)
    warnings = list(load_external_store(export, "amem").meta["warnings"])
    note = the_note(warnings, "document-differs")
    assert note["path"] == "$.documents" and resolve(doc, note["path"])[1] == doc["documents"][1]
    assert note["message"].startswith(
        "1 note(s) have a Chroma document that differs from their metadata's content: "
        "$.documents[1] vs $.metadatas[1].content"
    )
    summary = imported(
        "amem",
        str(export),
        "--package",
        str(package_file(tmp_path)),
        "-o",
        str(tmp_path / "o.json"),
    )
    assert listed(summary, "document-differs")["path"] == "$.documents"


def test_zep_time_note_names_the_edges(tmp_path: Path) -> None:
    doc = json.loads((FIX / "zep_graphiti.json").read_text(encoding="utf-8"))
    doc["edges"][1]["valid_at"] = "early July"
    export = write(tmp_path, "zep.json", doc)
    warnings = list(load_external_store(export, "zep").meta["warnings"])
    note = the_note(warnings, "time-unreadable")
    assert note["path"] == "$.edges"
    assert "(first: $.edges[1].valid_at)" in note["message"]
    assert resolve(doc, "$.edges[1].valid_at") == "early July"
    summary = imported(
        "zep", str(export), "--package", str(package_file(tmp_path)), "-o", str(tmp_path / "o.json")
    )
    assert listed(summary, "time-unreadable")["path"] == "$.edges"


def test_locomo_question_notes_name_the_question(tmp_path: Path) -> None:
    doc = json.loads((FIX / "locomo_small.json").read_text(encoding="utf-8"))
    doc[0]["qa"][1]["evidence"] = []
    del doc[0]["qa"][2]["category"]
    source = write(tmp_path, "locomo.json", doc)
    summary = imported(
        "locomo", str(source), "--instance", "conv-a", "-o", str(tmp_path / "o.json")
    )
    [none] = [d for d in summary["warning_details"] if d["message"].startswith("q2: ")]
    assert none["rule"] == "evidence-none"
    assert none["path"] == "$[0].qa[1]" and resolve(doc, none["path"])["evidence"] == []
    assert none["message"] == "q2: no evidence listed"
    no_cat = listed(summary, "question-no-category")
    assert no_cat["path"] == "$[0].qa[2]" and "category" not in resolve(doc, no_cat["path"])
    # The rule once, at the end, where warning_parts reads it (it was mid-text before).
    session = [d for d in summary["warning_details"] if d["rule"] == "dia-id-session"]
    assert all("(rule:" not in d["message"] for d in summary["warning_details"]), session


def test_longmemeval_notes_name_the_instance_field(tmp_path: Path) -> None:
    doc = json.loads((FIX / "longmemeval_small.json").read_text(encoding="utf-8"))
    inst = doc[0]
    inst["question_type"] = "trivia"
    inst["answer"] = ["a", "b"]
    source = write(tmp_path, "lme.json", doc)
    summary = imported(
        "longmemeval",
        str(source),
        "--instance",
        inst["question_id"],
        "-o",
        str(tmp_path / "o.json"),
    )
    qtype = listed(summary, "question-type")
    assert qtype["path"] == "$[0].question_type" and resolve(doc, qtype["path"]) == "trivia"
    answer = listed(summary, "answer-not-text")
    assert answer["path"] == "$[0].answer" and resolve(doc, answer["path"]) == ["a", "b"]
    # The path is said once, in front (it was the message's own prefix before).
    assert not qtype["message"].startswith("$")


def test_artifact_notes_name_the_manifest_key_and_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "art"
    shutil.copytree(FIX / "artifact_pkg", folder)
    (folder / "notes.txt").write_text("x", encoding="utf-8")
    manifest = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    manifest["stores"] = []
    (folder / "meta.json").write_text(json.dumps(manifest), encoding="utf-8")
    summary = imported("artifact", str(folder), "-o", str(tmp_path / "o.json"))
    field = listed(summary, "manifest-field")
    assert field["path"] == "$.stores" and resolve(manifest, field["path"]) == []
    assert field["message"].startswith("in meta.json: a package field an artifact does not read")
    other = listed(summary, "artifact-other")
    assert other["path"] == "$" and other["message"].startswith("not read: 1 other item(s)")
    rc, _out, err = run_cli("validate", str(folder), "--json")
    assert rc == 0, err
    details = json.loads(_out)["warning_details"]
    assert {"$.stores": "manifest-field", "$": "artifact-other"}.items() <= {
        d["path"]: d["rule"] for d in details
    }.items()


def test_cli_prints_each_note_with_one_path(tmp_path: Path) -> None:
    """``FILE: warning: PATH: message (rule: RULE)``: the path once, not the path the
    message used to start with after the one in front."""
    doc = json.loads((FIX / "longmemeval_small.json").read_text(encoding="utf-8"))
    doc[0]["question_type"] = "trivia"
    source = write(tmp_path, "lme.json", doc)
    rc, _out, err = run_cli(
        "import", "longmemeval", str(source), "--instance", doc[0]["question_id"], "-o",
        str(tmp_path / "o.json"),
    )  # fmt: skip
    assert rc == 0, err
    [line] = [x for x in err.splitlines() if "question-type" in x]
    assert line.startswith(f"{source}: warning: $[0].question_type: 'trivia' is not a ")
    assert line.count("$[0].question_type") == 1 and line.endswith("(rule: question-type)")


def test_every_note_rule_is_kebab_case_and_documented() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for rule, what in IMPORT_NOTE_RULES.items():
        assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", rule) and what
        assert f"`{rule}`" in readme, rule
    # Every rule the importers' code names is registered (note() asserts it at run time).
    used = set()
    for path in (REPO / "memaudit_core" / "importers").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        used |= set(re.findall(r'(?:note|import_note)\([^()]*?,\s*"([a-z0-9-]+)",?\s*\)', text))
    assert used and used <= set(IMPORT_NOTE_RULES), used - set(IMPORT_NOTE_RULES)


@pytest.mark.parametrize(
    ("paths", "common"),
    [
        (["$.results[0].memory", "$.results[3].memory"], "$.results"),
        (["$.results[2].memory"], "$.results"),
        (["$[2]"], "$"),
        (["$.blocks[0]", "$.passages[1].text"], "$"),
        (["$.a[0].b[2].c[1]", "$.a[0].b[4].c[0]"], "$.a[0].b"),
    ],
)
def test_common_path_is_the_array_holding_the_items(paths: list[str], common: str) -> None:
    assert common_path(paths) == common


def test_app_lists_importer_notes_with_path_and_rule(tmp_path: Path) -> None:
    """The External stores page shows a note's path in a code span and its rule."""
    from memaudit_ui.frame import package_warning_md

    store = load_external_store(
        write(tmp_path, "m.json", {"results": [{"id": "m1", "memory": "x", "lifecycle_state": "paused"}]}),
        "mem0",
    )  # fmt: skip
    [w] = store.meta["warnings"]
    assert warning_parts(w)["rule"] == "lifecycle-state"
    shown = package_warning_md(w)
    assert shown.startswith("`$.results[0].lifecycle_state`: 1 memory")
    assert shown.endswith("(rule: lifecycle-state)") and shown.count("$.results[0]") == 1
