"""QA s42 (library): seven defects found by the library and validation QA passes.

1. ``compile_package(pkg, external=store)`` compiled memories marked deleted, which union
   scoring, ``score(store_id=...)`` and ``sweep(stores=...)`` leave out of the store.
2. A hand-built package kept the caller's ``Query.requires`` / ``Store.select`` lists, so
   changing them later changed scores under the same content hash.
3. ``CompiledInstance.indices("c1")`` read a lone id as its characters.
4. ``read_result`` refused a results file with a UTF-8 byte-order mark.
5. ``Experience``, ``Unit``, ``Candidate`` and ``Query`` were not exported from
   ``memaudit_core``; the README did not say how to build a package by hand nor where its
   warnings are.
6. A memory's ``created_at: ""`` was read as no time while ``"   "`` was refused (iso-8601).
7. Unit weights spanning beyond what a double resolves validated without a warning.

Expected values are stated by hand from the tiny packages built here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import memaudit_core as ma
from memaudit_core import package as package_module
from memaudit_core.package import (
    Candidate,
    Experience,
    ExternalMemory,
    Package,
    Query,
    Store,
    Unit,
    parse_package,
)
from memaudit_core.union import union_report

README = Path(__file__).resolve().parents[1] / "README.md"


def _tiny(memories: tuple[ExternalMemory, ...] = ()) -> Package:
    """Units r1, r2 of weight 1; one candidate c1 (cost 4) covering both; an optional store."""
    stores = (Store("ext", system="mem0", memories=memories),) if memories else ()
    return Package(
        "tiny",
        (Experience("e1", 0),),
        (Unit("r1", weight=1.0), Unit("r2", weight=1.0)),
        (Candidate("c1", "e1", "atomic_fact", 4, {"r1": 1.0, "r2": 1.0}),),
        stores=stores,
    )


# m1 (deleted) covers both units at cost 1; m2 covers r2 only at cost 1.
_MEMORIES = (
    ExternalMemory("m1", 1, {"r1": 1.0, "r2": 1.0}, status="deleted", created_at="2024-01-01"),
    ExternalMemory("m2", 1, {"r2": 1.0}, created_at="2024-01-02"),
)


# --------------------------------------------------------------------------- defect 1


def test_compile_external_leaves_deleted_memories_out() -> None:
    pkg = _tiny(_MEMORIES)
    inst = ma.compile_package(pkg, external=pkg.store("ext"))
    assert inst.candidate_ids == ("c1", "m2")
    # At budget 2, c1 (cost 4) does not fit; m2 alone is worth 1 (m1 would have made it 2).
    res = ma.solve(inst, 2)
    assert (res.label, res.value, res.selected) == ("OPT", 1.0, ("m2",))


def test_compile_external_only_leaves_deleted_memories_out() -> None:
    pkg = _tiny(_MEMORIES)
    only = ma.compile_package(pkg, external=pkg.store("ext"), include_package_candidates=False)
    assert only.candidate_ids == ("m2",)
    assert only.group_ids == ("e1", "ext/m2")
    assert ma.solve(only, 2).value == 1.0


def test_compile_external_agrees_with_union_report() -> None:
    pkg = _tiny(_MEMORIES)
    report = union_report(pkg, "ext", 2)
    full = ma.solve(ma.compile_package(pkg, external=pkg.store("ext")), 2)
    only = ma.solve(
        ma.compile_package(pkg, external=pkg.store("ext"), include_package_candidates=False), 2
    )
    assert report.deleted == ("m1",)
    assert (full.value, only.value) == (report.union_opt_value, report.upper_value) == (1.0, 1.0)


def test_compile_external_store_of_deleted_memories_only_has_no_candidates() -> None:
    pkg = _tiny(_MEMORIES[:1])
    only = ma.compile_package(pkg, external=pkg.store("ext"), include_package_candidates=False)
    assert only.candidate_ids == ()
    assert ma.solve(only, 2).value == 0.0


# --------------------------------------------------------------------------- defect 2


def test_hand_built_package_does_not_follow_the_callers_lists() -> None:
    requires, select = ["r1"], ["c1"]
    pkg = Package(
        "p",
        [Experience("e1", 0), Experience("e2", 1)],
        [Unit("r1"), Unit("r2")],
        [
            Candidate("c1", "e1", "atomic_fact", 1, {"r1": 1.0}),
            Candidate("c2", "e2", "atomic_fact", 1, {"r2": 1.0}),
        ],
        queries=[Query("q", requires)],
        stores=[Store("s", select=select)],
        budget=1,
    )
    digest = pkg.content_hash()
    requires.append("r2")
    select[0] = "c2"
    select.append("c1")
    assert pkg.queries[0].requires == ("r1",)
    assert pkg.stores[0].select == ("c1",)
    assert pkg.unit_weights() == {"r1": 1.0, "r2": 0.0}
    assert package_module.content_hash(pkg) == digest
    ev = ma.score(pkg, 1, store_id="s")
    assert (ev.value, ev.selected) == (1.0, ("c1",))


def test_nested_lists_are_stored_as_tuples() -> None:
    memory = ExternalMemory("m1", 1, {"r1": 1.0})
    assert Query("q", ["r1", "r2"]).requires == ("r1", "r2")
    assert Query("q", "r1").requires == ("r1",)  # a lone id is one id, as in Store.select
    store = Store("s", select=["c1"], memories=[memory])
    assert (store.select, store.memories) == (("c1",), (memory,))
    pkg = _tiny()
    built = Package("p", pkg.experiences, pkg.units, pkg.candidates, warnings=["mine"])
    assert built.warnings == ("mine",)


# --------------------------------------------------------------------------- defect 3


def test_indices_reads_a_lone_id_as_one_id() -> None:
    inst = ma.compile_package(ma.load_package(Path(__file__).parents[1] / "sample_packages"
                                              / "update_chain.json"))  # fmt: skip
    position = inst.candidate_ids.index("update_1_tombstone")
    assert inst.indices("update_1_tombstone").tolist() == [position]
    assert inst.indices(["update_1_tombstone"]).tolist() == [position]


# --------------------------------------------------------------------------- defect 4


def test_read_result_accepts_a_byte_order_mark(tmp_path: Path) -> None:
    pkg = _tiny()
    res = ma.solve(ma.compile_package(pkg), 4)
    path = tmp_path / "bom_result.json"
    path.write_text(json.dumps(res.to_dict()), encoding="utf-8-sig")
    assert path.read_bytes()[:3] == b"\xef\xbb\xbf"
    again = ma.read_result(path)
    assert again == res
    assert (again.value, again.selected) == (2.0, ("c1",))


# --------------------------------------------------------------------------- defect 5


@pytest.mark.parametrize(
    "name, cls", [("Experience", Experience), ("Unit", Unit), ("Candidate", Candidate),
                  ("Query", Query)],
)  # fmt: skip
def test_building_blocks_are_exported(name: str, cls: type) -> None:
    assert name in ma.__all__
    assert getattr(ma, name) is cls


def _readme_library_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Library\n")
    return text[start : text.index("\n## ", start + 1)]


def test_readme_library_section_builds_a_package_by_hand() -> None:
    section = _readme_library_section()
    block = section[section.index("```python\n") + len("```python\n") : section.index("```\n")]
    lines = block.splitlines()
    first = next(i for i, line in enumerate(lines) if "ma.Package(" in line)
    end = next(i for i in range(first, len(lines)) if lines[i].rstrip().endswith(")"))
    source = "\n".join(line.strip() for line in lines[first : end + 1])
    names: dict[str, object] = {"ma": ma}
    exec(source, names)  # the README's own lines: they must run as written
    tiny = names["tiny"]
    assert isinstance(tiny, Package)
    assert tiny.unit_weights() == {"u1": 1.0}
    assert tiny.warnings == ()


def test_readme_library_section_says_where_package_warnings_are() -> None:
    section = _readme_library_section()
    assert re.search(r"`pkg\.warnings`", section)


# --------------------------------------------------------------------------- defect 6


def _doc_with_memory(**fields: object) -> dict:
    return {
        "memaudit": 1,
        "id": "t",
        "experiences": [{"id": "e1", "time": 0}],
        "units": [{"id": "r1", "weight": 1.0}],
        "candidates": [
            {"id": "c1", "experience": "e1", "type": "atomic_fact", "cost": 1,
             "coverage": {"r1": 1.0}}
        ],
        "stores": [{"id": "ext", "memories": [{"id": "m1", "cost": 1, "coverage": {"r1": 1.0},
                                               **fields}]}],
    }  # fmt: skip


def _created_at_problems(text: str) -> tuple[list[tuple[str, str, object]], str]:
    with pytest.raises(ma.PackageError) as caught:
        parse_package(_doc_with_memory(created_at=text), source="mem.json")
    return [(p.path, p.rule, p.value) for p in caught.value.problems], str(caught.value)


def test_empty_created_at_is_refused_like_blank() -> None:
    problems, message = _created_at_problems("")
    assert problems == [("$.stores[0].memories[0].created_at", "iso-8601", "")]
    assert "mem.json: $.stores[0].memories[0].created_at: must be an ISO-8601" in message
    blank, _ = _created_at_problems("   ")
    assert [(path, rule) for path, rule, _ in blank] == [(path, rule) for path, rule, _ in problems]


def test_empty_created_at_is_refused_in_a_hand_built_store() -> None:
    pkg = _tiny()
    with pytest.raises(ma.PackageError) as caught:
        Package(
            "p",
            pkg.experiences,
            pkg.units,
            pkg.candidates,
            stores=(Store("ext", memories=(ExternalMemory("m1", 1, {"r1": 1.0}, created_at=""),)),),
        )
    assert [(p.path, p.rule) for p in caught.value.problems] == [
        ("$.stores[0].memories[0].created_at", "iso-8601")
    ]


def test_absent_created_at_is_still_no_time() -> None:
    """Regression guard: leaving the field out stays valid (no time)."""
    pkg = parse_package(_doc_with_memory())
    assert pkg.stores[0].memories[0].created_at is None


# --------------------------------------------------------------------------- defect 7


def _weighted(weights: list[float]) -> dict:
    return {
        "memaudit": 1,
        "id": "w",
        "experiences": [{"id": f"e{i}", "time": i} for i in range(len(weights))],
        "units": [{"id": f"r{i}", "weight": w} for i, w in enumerate(weights)],
        "candidates": [
            {"id": f"c{i}", "experience": f"e{i}", "type": "atomic_fact", "cost": 1,
             "coverage": {f"r{i}": 1.0}}
            for i in range(len(weights))
        ],
    }  # fmt: skip


def test_weights_beyond_double_precision_are_warned_about() -> None:
    pkg = parse_package(_weighted([2.0**70, 1.0, 3.7]), source="big.json")
    found = [w for w in pkg.warnings if "rounding" in w]
    assert len(found) == 1
    assert "'r0', $.units[0]" in found[0]
    assert "'r1', $.units[1]" in found[0]
    # 2**70 + 3.7 == 2**70 in a double: the gain the warning is about.
    assert 2.0**70 + 3.7 == 2.0**70


def test_precision_warning_counts_coverage_and_memories() -> None:
    doc = _weighted([1.0, 1.0])
    doc["stores"] = [{"id": "ext", "memories": [{"id": "m1", "cost": 1,
                                                 "coverage": {"r1": 1e-16}}]}]  # fmt: skip
    pkg = parse_package(doc)
    assert [w for w in pkg.warnings if "rounding" in w] != []
    assert "smallest 1e-16 on unit 'r1'" in " ".join(pkg.warnings)


def test_weights_within_double_precision_are_not_warned_about() -> None:
    """Regression guard: a span of 1e14 (within what a double resolves) stays silent."""
    pkg = parse_package(_weighted([1e14, 1.0]))
    assert pkg.warnings == ()
