"""QA s44 (zip bombs): a small zip that unpacks to hundreds of megabytes was read whole.

1. `memaudit validate` of a 306 KB artifact zip padded with 300 MiB of newlines ran 32 s in
   3.1 GB and said "valid": every member (up to 1 GiB each) was read at once, then split.
2. An OpenMemory zip of 120 MB of "0," held the External stores page for 60 s (+1 GB) before
   its shape error; a LoCoMo zip's members had no limit at all.
The limits are now one helper's (importers._zip): refused from the zip's directory before
inflating, by the total (rule zip-size) and the compression ratio (rule zip-ratio), and again
while reading; artifact tables are read line by line.
"""

from __future__ import annotations

import json
import tracemalloc
import zipfile
from pathlib import Path

from cli_utils import run_cli
from package_utils import refused

from memaudit_core.importers import artifact, import_package, load_external_store

ARTIFACT = Path(__file__).parent / "fixtures" / "importers" / "artifact_pkg"
TABLES = (
    "experiences.jsonl",
    "evidence_units.jsonl",
    "candidate_memories.jsonl",
    "coverage_matrix.jsonl",
)
PAD = 20_000_000  # bytes of padding: deflate packs a run of one byte about 1000 to 1


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_an_artifact_zip_padded_with_newlines_is_refused_not_valid(tmp_path):
    members = {f.name: f.read_bytes() for f in ARTIFACT.iterdir()}
    members["experiences.jsonl"] += b"\n" * PAD
    bomb = _zip(tmp_path / "bomb.zip", members)
    info = zipfile.ZipFile(bomb).getinfo("experiences.jsonl")
    assert info.file_size > 100 * info.compress_size  # what the test builds: a bomb
    rc, out, err = run_cli("validate", str(bomb))
    assert rc != 0 and "valid package" not in out
    assert f"{bomb}: experiences.jsonl: unpacks to {info.file_size:,} bytes" in err
    assert "[rule: zip-ratio]" in err


def test_an_openmemory_zip_of_repeated_values_is_refused_before_reading(tmp_path):
    bomb = _zip(tmp_path / "om.zip", {"memories.json": b"[" + b"0," * (PAD // 2) + b"0]"})
    assert refused(lambda: load_external_store(bomb, "mem0")) == [("memories.json", "zip-ratio")]


def test_a_locomo_zip_member_is_held_to_the_same_limits(tmp_path):
    bomb = _zip(tmp_path / "locomo.zip", {"conv-1.json": b" " * PAD + b"{}"})
    assert refused(lambda: import_package("locomo", bomb)) == [("conv-1.json", "zip-ratio")]


def test_the_total_cap_counts_every_table_read_and_names_the_one_crossing_it(tmp_path, monkeypatch):
    from memaudit_core.importers import _zip as zip_limits

    archive = _zip(tmp_path / "art.zip", {f.name: f.read_bytes() for f in ARTIFACT.iterdir()})
    sizes = [(ARTIFACT / name).stat().st_size for name in TABLES]
    # Each table fits; the first two together do not (the manifest, read first, is counted).
    manifest = (ARTIFACT / "meta.json").stat().st_size
    cap = manifest + sizes[0] + sizes[1] - 1
    assert max(sizes) <= cap
    monkeypatch.setattr(zip_limits, "MAX_ZIP_TOTAL_BYTES", cap)
    assert refused(lambda: artifact.load_artifact_package(archive)) == [
        ("evidence_units.jsonl", "zip-size")
    ]
    # Enforced while reading too (a header can lie): read without the directory check.
    with zipfile.ZipFile(archive) as zf:
        reader = zip_limits.ZipReader(zf, str(archive))
        monkeypatch.setattr(zip_limits, "MAX_ZIP_TOTAL_BYTES", 100)
        info = zf.getinfo("candidate_memories.jsonl")
        assert info.file_size > 100
        assert refused(lambda: reader.read(info, "candidate_memories.jsonl")) == [
            ("candidate_memories.jsonl", "zip-size")
        ]


def test_artifact_tables_are_read_line_by_line_with_their_line_numbers(tmp_path):
    folder = tmp_path / "padded"
    folder.mkdir()
    for f in ARTIFACT.iterdir():
        (folder / f.name).write_bytes(f.read_bytes())
    rows = (ARTIFACT / "experiences.jsonl").read_bytes().splitlines()
    blank = 8_000_000
    # Blank lines between the records, and a last record cut short without a newline.
    text = rows[0] + b"\n" * blank + b"\n".join(rows[1:]) + b"\n" + b'{"experience_id": "x'
    (folder / "experiences.jsonl").write_bytes(text)
    bad_line = 1 + blank + len(rows) - 1
    tracemalloc.start()
    try:
        problems = refused(lambda: artifact.load_artifact_package(folder))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert problems == [(f"experiences.jsonl:{bad_line}", "truncated")]
    # The file whole is 8 MB, its split ten times that; lines read in 1 MiB chunks are not.
    assert peak < blank, f"peak {peak:,} bytes"
    # The same table ending with a newline: an ordinary syntax error on that line.
    (folder / "experiences.jsonl").write_bytes(text + b"\n\n")
    assert refused(lambda: artifact.load_artifact_package(folder)) == [
        (f"experiences.jsonl:{bad_line}", "json-syntax")
    ]
    assert json.loads(rows[0])  # the fixture's lines are JSON records
