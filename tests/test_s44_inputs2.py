"""QA s44, second look at the new input checks.

1. A 33.5 MB artifact zip of the generator's largest package (320 MiB unpacked, 7-13x) was
   refused with zip-size: the total cap was 256 MiB. Caps are now 1 GiB per member (256 MiB
   for an OpenMemory backup's) and 4 GiB in all; the ratio rule refuses bombs.
2. A-Mem Chroma list fields read "1e-400" as 0 silently; a decoded number field was reported
   at ``$.ids[i]`` as ``meta.retrieval_count``, not where it is in the export.
3. The underflow message advised "at least 2.2e-308", which is then refused (the minimum is
   2.2250738585072014e-308); a subnormal "3e-324" was quoted as the 5e-324 it decodes to.
4. Persian ids (ZWNJ is spelling) and emoji ZWJ sequences were warned of as look-alikes, the
   whole id printed escaped.
5. "a b" next to "a\\u00a0b" or "a\\u3000b" (they print alike) was not warned of.
"""

from __future__ import annotations

import json
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from package_utils import refused
from test_s40_openmemory import _backup_zip
from test_s44_underflow import TEXT, _with_candidate_ids

from memaudit_core.errors import PackageError, shown_text
from memaudit_core.importers import _zip as zip_limits
from memaudit_core.importers import artifact, load_external_store
from memaudit_core.importers import openmemory as om
from memaudit_core.package import loads_package

FIX = Path(__file__).parent / "fixtures" / "importers"
ARTIFACT = FIX / "artifact_pkg"
MiB = 1 << 20

#: (member, unpacked bytes, compressed bytes) of the QA zip: `generate event_graph --param
#: n_experiences=200000`, written as artifact tables and zipped (deflate).
ZIP_200K = [
    ("meta.json", 72, 65),
    ("experiences.jsonl", 31_819_750, 4_374_159),
    ("evidence_units.jsonl", 33_749_521, 3_053_445),
    ("candidate_memories.jsonl", 123_408_105, 14_595_595),
    ("coverage_matrix.jsonl", 101_570_624, 7_533_367),
    ("queries.jsonl", 45_124_580, 4_006_764),
]


def _declared(rows: list[tuple[str, int, int]]) -> list[tuple[zipfile.ZipInfo, str]]:
    out = []
    for name, size, packed in rows:
        info = zipfile.ZipInfo(name)
        info.file_size, info.compress_size = size, packed
        out.append((info, name))
    return out


def _message(call: Callable[[], object]) -> str:
    with pytest.raises(PackageError) as info:
        call()
    return str(info.value)


def _lookalikes(first: str, second: str) -> list[str]:
    pkg = loads_package(_with_candidate_ids(first, second))
    return [w for w in pkg.warnings if "id-lookalike" in w]


# ----------------------------------------------------------------------------- 1. zip caps


def test_the_largest_generated_artifact_zip_passes_the_directory_check(tmp_path):
    total = sum(size for _, size, _ in ZIP_200K)
    assert total > 256 * MiB  # what refused it
    with zipfile.ZipFile(tmp_path / "empty.zip", "w"):
        pass
    with zipfile.ZipFile(tmp_path / "empty.zip") as zf:
        reader = zip_limits.ZipReader(zf, "art200k.zip")
        reader.check(_declared(ZIP_200K))  # no PackageError
        # A member past 1 GiB, at a normal ratio, is refused by size from the directory.
        big = [("coverage_matrix.jsonl", (1 << 30) + 1, 100 * MiB)]
        assert refused(lambda: reader.check(_declared(big))) == [
            ("coverage_matrix.jsonl", "zip-size")
        ]
        # And five of 1 GiB each, 5 GiB in all, by the total of 4 GiB, at the fifth.
        tables = [(f"t{i}.jsonl", 1 << 30, 100 * MiB) for i in range(5)]
        assert refused(lambda: reader.check(_declared(tables))) == [("t4.jsonl", "zip-size")]


def test_the_member_cap_holds_while_reading_an_artifact_zip(tmp_path, monkeypatch):
    archive = tmp_path / "art.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in ARTIFACT.iterdir():
            zf.write(f, f.name)
    sizes = {f.name: f.stat().st_size for f in ARTIFACT.iterdir()}
    # Below every table but the manifest (read first); the first table read crosses it.
    cap = sizes["meta.json"]
    assert sizes["experiences.jsonl"] > cap
    monkeypatch.setattr(zip_limits, "MAX_ZIP_MEMBER_BYTES", cap)
    assert refused(lambda: artifact.load_artifact_package(archive)) == [
        ("experiences.jsonl", "zip-size")
    ]
    # Enforced while reading too (a header can lie): read without the directory check.
    with zipfile.ZipFile(archive) as zf:
        reader = zip_limits.ZipReader(zf, str(archive))
        info = zf.getinfo("candidate_memories.jsonl")
        assert refused(lambda: reader.read(info, "candidate_memories.jsonl")) == [
            ("candidate_memories.jsonl", "zip-size")
        ]


def test_an_openmemory_backup_member_keeps_its_own_cap(tmp_path, monkeypatch):
    f = _backup_zip(tmp_path)
    size = zipfile.ZipFile(f).getinfo("memories.json").file_size
    monkeypatch.setattr(om, "MAX_MEMBER_BYTES", size - 1)
    assert refused(lambda: load_external_store(f, "mem0")) == [("memories.json", "zip-size")]
    monkeypatch.setattr(om, "MAX_MEMBER_BYTES", size)
    assert load_external_store(f, "mem0").meta["openmemory_read"] == "memories.json"


# ----------------------------------------------------------------------------- 2. A-Mem


def _amem(tmp_path: Path, **fields: str) -> Path:
    doc = json.loads((FIX / "amem_chroma.json").read_text())
    doc["metadatas"][1].update(fields)
    out = tmp_path / "amem.json"
    out.write_text(json.dumps(doc))
    return out


def test_amem_chroma_list_fields_refuse_a_number_that_underflows(tmp_path):
    f = _amem(tmp_path, keywords='["painting", 1e-400]', links='["n-1", 1e-400]')
    assert refused(lambda: load_external_store(f, "amem")) == [
        ("$.metadatas[1].keywords", "normal"),
        ("$.metadatas[1].links", "normal"),
    ]
    text = _message(lambda: load_external_store(f, "amem"))
    assert "$.metadatas[1].keywords: in the JSON text of this field, at [1]:" in text
    assert "(got '1e-400')" in text


def test_amem_chroma_number_field_is_located_where_it_is(tmp_path):
    f = _amem(tmp_path, retrieval_count="1e-400")
    assert refused(lambda: load_external_store(f, "amem")) == [
        ("$.metadatas[1].retrieval_count", "normal")
    ]


# ----------------------------------------------------------------------------- 3. the minimum


def _weight(literal: str) -> str:
    return TEXT.replace('"weight": 1.0}, {"id": "u2"', f'"weight": {literal}}}, {{"id": "u2"')


def test_the_advised_minimum_is_itself_allowed_and_the_text_is_quoted_as_written():
    smallest_normal = 2.0**-1022  # IEEE 754 double: the smallest normal number
    assert smallest_normal == sys.float_info.min
    text = _message(lambda: loads_package(_weight("1e-400")))
    advised = text.split("a number at least ")[1].split(" ")[0]
    assert advised == "2.23e-308" and float(advised) >= smallest_normal
    loads_package(_weight(advised))  # valid
    text = _message(lambda: loads_package(_weight("2.2e-308")))
    assert "must be 0 or at least 2.23e-308 in size" in text and "(got '2.2e-308')" in text
    text = _message(lambda: loads_package(_weight("3e-324")))
    assert "(got '3e-324')" in text and "5e-324" not in text


# ----------------------------------------------------------------------------- 4, 5. ids


def test_persian_and_emoji_ids_are_not_look_alikes():
    assert _lookalikes("می\u200cخواهم", "c2") == []
    assert _lookalikes("\U0001f468\u200d\U0001f469\u200d\U0001f467 family", "c2") == []
    assert _lookalikes("\u2764\ufe0f", "c2") == []
    # Joiners and selectors still count when they are all that tells two ids apart.
    [said] = _lookalikes("ab", "a\u200db")
    assert said.startswith("$.candidates[1].id: 'a\\u200db' looks like $.candidates[0].id 'ab'")
    [said] = _lookalikes("\u2764", "\u2764\ufe0f")
    assert "looks like $.candidates[0].id" in said


def test_messages_escape_only_what_does_not_show():
    # Readable letters; the ZWNJ spelled out.
    [said] = _lookalikes("می\u200cخواهم", "می\u200dخواهم")
    assert "'می\\u200dخواهم' looks like $.candidates[0].id 'می\\u200cخواهم'" in said
    assert shown_text("नमस्ते") == "'नमस्ते'"  # combining signs of NFC text stay
    assert shown_text("cafe\u0301") == "'cafe\\u0301'"  # a decomposed é is the difference
    assert shown_text("a\x07b\u200bc") == "'a\\x07b\\u200bc'"
    assert shown_text("x\u3164") == "'x\\u3164'"  # a Hangul filler draws as blank space


def test_ids_differing_by_a_unicode_space_are_look_alikes():
    for first, second, shown in [
        ("a b", "a\u00a0b", "'a\\xa0b'"),
        ("a b", "a\u3000b", "'a\\u3000b'"),
        ("a\u2009b", "a\u202fb", "'a\\u202fb'"),
    ]:
        [said] = _lookalikes(first, second)
        assert said.startswith(f"$.candidates[1].id: {shown} looks like $.candidates[0].id")
    # Not NFKC: ids that print differently are not warned of.
    assert _lookalikes("x2", "x\u00b2") == []
    assert _lookalikes("A1", "\uff21\uff11") == []
