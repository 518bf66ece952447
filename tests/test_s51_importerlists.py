"""Review s51: the importers named the first few items of a long list in four wordings, each
copied by hand: "a; b; ... 2 more", "a, b ..." (no count), "a, b, ... (2 more)" and "a, b,
... (12 in all)". One helper (``importers._common.first_few``) now writes them all as
"a, b, ... 2 more"; these are one of each old wording, read through the importers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_utils import run_cli
from note_utils import message
from package_utils import write_json

from memaudit_core.errors import PackageError
from memaudit_core.importers import import_package, load_external_store

FIX = Path(__file__).parent / "fixtures" / "importers"
REPO = Path(__file__).resolve().parents[1]


def test_empty_letta_blocks_past_ten_are_counted(tmp_path: Path) -> None:
    """Was "...; $.blocks[9] 'b9' ...)": how many more went unsaid."""
    doc = json.loads((FIX / "letta_v2.af").read_text(encoding="utf-8"))
    for k in range(12):
        doc["blocks"].append({"id": f"block-e{k}", "label": f"e{k}", "value": " "})
    doc["agents"][0]["block_ids"] += [f"block-e{k}" for k in range(12)]
    store = load_external_store(write_json(tmp_path, "a.af", doc), "letta")
    [warning] = [message(w) for w in store.meta["warnings"] if "hold no text" in w]
    assert warning.startswith("12 block(s) hold no text ($.blocks[2] 'e0'; ")
    assert warning.endswith("; ... 2 more): no memories from them"), warning


def test_mem0_memories_in_other_states_past_ten_are_counted(tmp_path: Path) -> None:
    """Was "m0, ..., m9 ...; each is kept": how many more went unsaid."""
    items = [
        {"id": f"m{k}", "memory": f"memory {k}", "lifecycle_state": "archived"} for k in range(12)
    ]
    store = load_external_store(write_json(tmp_path, "m.json", {"results": items}), "mem0")
    [warning] = [w for w in store.meta["warnings"] if "lifecycle_state other than" in w]
    shown = ", ".join(f"'m{k}' (archived)" for k in range(10))
    assert f": {shown}, ... 2 more; each is kept with that status" in warning, warning


def test_unread_artifact_entries_past_ten_say_how_many_more(tmp_path: Path) -> None:
    """Was "f00.txt, ..., f09.txt, ... (2 more)"."""
    folder = tmp_path / "pkg"
    folder.mkdir()
    for src in (REPO / "tests" / "fixtures" / "importers" / "artifact_pkg").iterdir():
        if src.is_file():
            (folder / src.name).write_bytes(src.read_bytes())
    for k in range(12):
        (folder / f"f{k:02d}.txt").write_text("x", encoding="utf-8")
    rc, _out, err = run_cli("import", "artifact", str(folder), "-o", str(tmp_path / "o.json"))
    assert rc == 0, err
    [line] = [x for x in err.splitlines() if "not read" in x]
    shown = ", ".join(f"f{k:02d}.txt" for k in range(10))
    assert f"not read: 12 other item(s) in the folder: {shown}, ... 2 more (an artifact" in line


def test_longmemeval_instances_past_ten_say_how_many_more(tmp_path: Path) -> None:
    """Was "q0, ..., q9, ... (12 in all)", the total beside a list of ten."""
    [first, *_] = json.loads((FIX / "longmemeval_small.json").read_text(encoding="utf-8"))
    path = write_json(tmp_path, "lme.json", [{**first, "question_id": f"q{k}"} for k in range(12)])
    with pytest.raises(PackageError) as info:
        import_package("longmemeval", path)
    shown = ", ".join(f"q{k}" for k in range(10))
    assert f"(available: {shown}, ... 2 more)" in str(info.value), str(info.value)
