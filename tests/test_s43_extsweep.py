"""QA s43 (extsweep): a sweep over an external store whose coverage the import estimated said
nothing of it.

A Zep edge links only to its episode: the importer gives it the episode's unit links, or the
best coverage of that session's package candidates, both upper estimates. ``memaudit score``
warned ("... have coverage estimated ...: confirm it before trusting this"), but ``memaudit
sweep --stores`` printed 1.000 / 0.750 / 1.000, certified, with no note, no column; and the
External stores page's "Why is the package ratio above 1?" box credited cheaper evidence.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from app_utils import open_app, upload_file
from cli_utils import run_cli

from memaudit_core import read_result
from memaudit_core.analysis import SweepResult, SweepRow, score, sweep
from memaudit_core.package import load_package

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "importers" / "locomo_small.json"

#: Three Zep edges, none with a unit link of its own: z3's episode carries a dia_id (inherited
#: by the edge, an upper estimate), z1's and z2's episodes name sessions only (the sessions'
#: best candidate coverage, an upper estimate). So all 3 memories are estimated.
ZEP = {
    "edges": [
        {
            "uuid": "z1",
            "group_id": "ann",
            "name": "LIVES_IN",
            "fact": "Ann lives in Berlin",
            "source_node_uuid": "a",
            "target_node_uuid": "b",
            "episodes": ["ep2"],
            "created_at": "2023-05-20T10:00:00Z",
            "valid_at": "2023-05-01T00:00:00Z",
            "invalid_at": "2023-07-01T00:00:00Z",
            "expired_at": "2023-07-02T19:30:05Z",
            "attributes": {},
        },
        {
            "uuid": "z2",
            "group_id": "ann",
            "name": "LIVES_IN",
            "fact": "Ann moved to Lisbon on 1 July 2023",
            "source_node_uuid": "a",
            "target_node_uuid": "c",
            "episodes": ["ep10"],
            "created_at": "2023-07-02T19:30:00Z",
            "valid_at": "2023-07-01T00:00:00Z",
            "invalid_at": None,
            "expired_at": None,
            "attributes": {},
        },
        {
            "uuid": "z3",
            "group_id": "ann",
            "name": "HAS_PET",
            "fact": "Ann has a grey cat Miso",
            "source_node_uuid": "a",
            "target_node_uuid": "d",
            "episodes": ["ep1"],
            "created_at": "2023-05-08T14:00:00Z",
            "valid_at": None,
            "invalid_at": None,
            "expired_at": None,
            "attributes": {},
        },
    ],
    "episodes": [
        {
            "uuid": "ep1",
            "name": "session_1",
            "group_id": "ann",
            "source": "message",
            "content": "Ann: I adopted a cat named Miso",
            "valid_at": "2023-05-08T13:56:00Z",
            "entity_edges": ["z3"],
            "episode_metadata": {"dia_id": "D1:1"},
        },
        {
            "uuid": "ep2",
            "name": "session_2",
            "group_id": "ann",
            "source": "message",
            "content": "...",
            "valid_at": "2023-05-20T10:04:00Z",
            "entity_edges": ["z1"],
        },
        {
            "uuid": "ep10",
            "name": "session_10",
            "group_id": "ann",
            "source": "message",
            "content": "...",
            "valid_at": "2023-07-02T19:30:00Z",
            "entity_edges": ["z2"],
        },
    ],
}
N_ESTIMATED = 3
#: What the sweep's note says of the store, in the words ``score`` uses.
SAID = (
    "store zep: 3 of its memories have coverage estimated from the block, episode or "
    "experience they came from (an upper estimate, not read from their own text)"
)
CONFIRM = "confirm it before trusting this"


@pytest.fixture(scope="module")
def package_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("extsweep")
    conva, zep, out = tmp / "conva.json", tmp / "zep1.json", tmp / "conva_zep.json"
    rc, _, err = run_cli("import", "locomo", str(FIXTURE), "--instance", "conv-a", "-o", str(conva))
    assert rc == 0, err
    zep.write_text(json.dumps(ZEP), encoding="utf-8")
    rc, _, err = run_cli("import", "zep", str(zep), "--package", str(conva), "-o", str(out))
    assert rc == 0, err
    return out


def test_cli_sweep_notes_the_estimated_store(package_file: Path, tmp_path: Path) -> None:
    rows_csv = tmp_path / "rows.csv"
    rc, out, err = run_cli(
        "sweep",
        str(package_file),
        "--stores",
        "zep",
        "--budgets",
        "5,10,20",
        "--writers",
        "",
        "--quiet",
        "-o",
        str(rows_csv),
    )
    assert rc == 0, err
    notes = [line for line in out.splitlines() if line.startswith("note: ")]
    said = [n for n in notes if SAID in n]
    assert len(said) == 1, notes
    assert CONFIRM in said[0] and "certified or not" in said[0], said
    with rows_csv.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["budget"] for r in rows] == ["5.0", "10.0", "20.0"]
    assert [r["coverage_estimated"] for r in rows] == [str(N_ESTIMATED)] * 3


def test_cli_sweep_json_carries_the_count_and_reads_back(
    package_file: Path, tmp_path: Path
) -> None:
    rc, out, err = run_cli(
        "sweep", str(package_file), "--stores", "zep", "--budgets", "10", "--writers", "", "--json"
    )
    assert rc == 0, err
    doc = json.loads(out)
    assert [r["coverage_estimated"] for r in doc["rows"]] == [N_ESTIMATED]
    assert any(SAID in n for n in doc["notes"]), doc["notes"]
    saved = tmp_path / "sweep.json"
    saved.write_text(out, encoding="utf-8")
    assert read_result(saved).rows[0].coverage_estimated == N_ESTIMATED
    # A sweep saved before the column reads back, with no memory counted as estimated.
    for row in doc["rows"]:
        del row["coverage_estimated"]
    saved.write_text(json.dumps(doc), encoding="utf-8")
    assert read_result(saved).rows[0].coverage_estimated == 0


def test_folder_sweep_notes_the_estimated_store(package_file: Path, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "conva_zep.json").write_bytes(package_file.read_bytes())
    out_dir = tmp_path / "out"
    rc, out, err = run_cli(
        "sweep",
        str(folder),
        "--stores",
        "zep",
        "--budgets",
        "10",
        "--writers",
        "",
        "--quiet",
        "--no-figures",
        "--out",
        str(out_dir),
    )
    assert rc == 0, err
    assert any(SAID in line for line in out.splitlines() if line.startswith("note: ")), out
    with (out_dir / "rows.csv").open(encoding="utf-8") as f:
        assert [r["coverage_estimated"] for r in csv.DictReader(f)] == [str(N_ESTIMATED)]


def test_library_sweep_counts_only_estimated_stores(package_file: Path) -> None:
    pkg = load_package(package_file)
    # The LoCoMo import's observations store is external too, but each observation links the
    # evidence units it cites: exact coverage, nothing estimated.
    assert pkg.store("observations").is_external
    res = sweep([pkg], [10], [], stores=["zep", "observations"])
    by_method = {r.method: r.coverage_estimated for r in res.rows}
    assert by_method == {"zep": N_ESTIMATED, "observations": 0}
    assert sum(SAID in n for n in res.notes) == 1, res.notes
    back = SweepResult.from_dict(res.to_dict())
    assert [r.coverage_estimated for r in back.rows] == [r.coverage_estimated for r in res.rows]
    old = res.rows[0].to_dict()
    del old["coverage_estimated"]
    assert SweepRow.from_dict(old).coverage_estimated == 0


def test_score_above_one_note_names_the_estimated_memory(package_file: Path) -> None:
    pkg = load_package(package_file)
    ev = score(pkg, 10, store_id="zep")
    above = [n for n in ev.notes if "above 1" in n]
    assert len(above) == 1, ev.notes
    # At budget 10 the store keeps z2 only (recency), and z2's coverage is estimated.
    assert "But 1 of them (z2) has coverage estimated from the block, episode" in above[0]
    assert CONFIRM in above[0]


def test_external_stores_box_mentions_estimated_coverage(package_file: Path) -> None:
    at = open_app()
    key = upload_file(at, "conva_zep.json", package_file.read_bytes())
    at = open_app("pages/4_External_stores.py", package=key, budget="10", store="store:zep")
    assert not at.exception, [e.value for e in at.exception]
    boxes = [i.value for i in at.info if i.value.startswith("Why is the package ratio above 1?")]
    assert len(boxes) == 1, [i.value for i in at.info]
    assert (
        "But 3 of its memories (z1, z2, z3) have coverage estimated from the block, episode or "
        "experience they came from" in boxes[0]
    ), boxes[0]
