"""Package format v1: loading, validation (malformed corpus), round trips, weights, schema.

The corpus in ``tests/malformed/`` holds one defect per file, each a small edit of
``_base_valid.json``; ``EXPECTED.json`` maps each file name to the JSON path and rule id of the
problem it must produce.
"""

from __future__ import annotations

import copy
import json
import math
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memaudit_core.compiled import compile_package
from memaudit_core.errors import PackageError
from memaudit_core.package import (
    content_hash,
    load_package,
    loads_package,
    package_json_schema,
    package_to_dict,
    parse_package,
    save_package,
)
from memaudit_core.solvers import solve

MALFORMED = Path(__file__).parent / "malformed"
BASE_FILE = MALFORMED / "_base_valid.json"
EXPECTED: dict[str, dict[str, str]] = json.loads((MALFORMED / "EXPECTED.json").read_text())
REPO_ROOT = Path(__file__).resolve().parent.parent

# Files whose one defect legitimately causes more than one problem: the references to the item
# that lost its id now point at nothing, and each reference is reported where it is.
EXPECTED_COUNTS = {
    "missing_experience_id.json": 3,  # + two candidates of e2
    "missing_unit_id.json": 4,  # + q2.requires and two coverage cells
    "unit_id_not_a_string.json": 3,  # + two coverage cells of u:meal:old
}


def base_doc() -> dict:
    return json.loads(BASE_FILE.read_text(encoding="utf-8"))


def problem_keys(err: PackageError) -> set[tuple[str, str]]:
    return {(p.path, p.rule) for p in err.problems}


# --------------------------------------------------------------------------- malformed corpus


def test_corpus_and_expected_match():
    on_disk = {p.name for p in MALFORMED.glob("*.json")} - {"EXPECTED.json", "_base_valid.json"}
    assert on_disk == set(EXPECTED), "every corpus file needs an EXPECTED.json entry and back"
    assert len(EXPECTED) >= 30
    for name, exp in EXPECTED.items():
        assert set(exp) == {"path", "rule"}, name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_malformed_file_rejected(name):
    path = MALFORMED / name
    expected = EXPECTED[name]
    with pytest.raises(PackageError) as info:
        load_package(path)
    err = info.value
    assert (expected["path"], expected["rule"]) in problem_keys(err), err.lines()
    assert len(err.problems) == EXPECTED_COUNTS.get(name, 1), err.lines()
    # The formatted message names the file, the JSON path and the rule on one line.
    matching = [
        line
        for line in err.lines()
        if line.startswith(f"{path}: ")
        and f": {expected['path']}: " in line
        and line.endswith(f"[rule: {expected['rule']}]")
    ]
    assert matching, err.lines()
    assert str(err).startswith(f"{path}: {len(err.problems)} problem(s) found")
    # Plain words: JSON type names, never Python ones.
    for line in err.lines():
        for python_name in ("dict", "list", "str", "NoneType", "float", "int"):
            assert f"(got '{python_name}')" not in line, line


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_malformed_bytes_rejected_by_loads_package(name):
    data = (MALFORMED / name).read_bytes()
    with pytest.raises(PackageError) as info:
        loads_package(data, source=name)
    assert (EXPECTED[name]["path"], EXPECTED[name]["rule"]) in problem_keys(info.value)
    assert all(line.startswith(f"{name}: ") for line in info.value.lines())


def test_missing_file_is_a_package_error(tmp_path):
    with pytest.raises(PackageError) as info:
        load_package(tmp_path / "nope.json")
    assert problem_keys(info.value) == {("$", "file-exists")}


def test_every_proper_prefix_is_reported_as_truncated():
    text = BASE_FILE.read_text(encoding="utf-8").rstrip()
    for cut in range(1, len(text)):
        with pytest.raises(PackageError) as info:
            loads_package(text[:cut])
        rules = [p.rule for p in info.value.problems]
        assert rules == ["truncated"], (cut, text[max(0, cut - 20) : cut], info.value.lines())


@pytest.mark.parametrize(
    "text", ["[1 2]", '{"a": 1.}', '{"a": nul}', "{'memaudit': 1}", '{"a": 1} {"b": 2}']
)
def test_syntax_errors_are_not_called_truncated(text):
    with pytest.raises(PackageError) as info:
        loads_package(text)
    assert [p.rule for p in info.value.problems] == ["json-syntax"]
    assert info.value.problems[0].path.startswith("$ (line 1, column ")


def test_pathological_json_is_a_package_error_not_a_crash():
    for text in ["[" * 100_000, "1" * 5000, '{"a": ' + "9" * 5000 + "}"]:
        with pytest.raises(PackageError):
            loads_package(text)


def test_unpaired_surrogate_escape_is_rejected():
    text = BASE_FILE.read_text(encoding="utf-8")
    text = text.replace("I am vegetarian.", "I am \\ud83d vegetarian.", 1)
    text = text.replace('"meta": {', '"meta": {"\\udc00": 1, ', 1)
    with pytest.raises(PackageError) as info:
        loads_package(text)
    assert problem_keys(info.value) == {
        ("$.experiences[0].text", "unicode"),
        ('$.meta["\\udc00"]', "unicode"),
    }
    # The report itself is printable UTF-8 text.
    str(info.value).encode("utf-8")


def test_several_defects_are_all_reported():
    doc = base_doc()
    doc["memaudit"] = 2  # 1
    doc["objective"]["saturation"] = "sqrt"  # 2
    doc["units"][0]["weight"] = -1  # 3
    doc["queries"][1]["requires"].append("u:nope")  # 4
    doc["candidates"][0]["cost"] = 0  # 5
    doc["candidates"][1]["cost"] = "2"  # 6
    doc["candidates"][2]["coverage"]["u:sister:city"] = 1.5  # 7
    doc["candidates"][3]["experience"] = "e9"  # 8
    doc["candidates"][4]["coverage"]["u:meal:current"] = math.nan  # 9
    del doc["candidates"][5]["id"]  # 10 (its other fields are still checked:)
    doc["candidates"][5]["cost"] = -1  # 11
    doc["candidates"][6]["bogus"] = True  # 12
    doc["stores"][0]["select"].append("e3:tombstone")  # 13 (e3:update already selected)
    doc["meta"]["x"] = [1.0, math.inf]  # 14
    doc["extra"] = 1  # 15
    with pytest.raises(PackageError) as info:
        parse_package(doc, source="multi.json")
    assert problem_keys(info.value) == {
        ("$.memaudit", "format-version"),
        ("$.objective.saturation", "known-saturation"),
        ("$.units[0].weight", "weight-range"),
        ("$.queries[1].requires[1]", "known-unit"),
        ("$.candidates[0].cost", "cost-positive"),
        ("$.candidates[1].cost", "type"),
        ('$.candidates[2].coverage["u:sister:city"]', "coverage-range"),
        ("$.candidates[3].experience", "known-experience"),
        ('$.candidates[4].coverage["u:meal:current"]', "finite"),
        ("$.candidates[5].id", "required"),
        ("$.candidates[5].cost", "cost-positive"),
        ("$.candidates[6].bogus", "known-field"),
        ("$.stores[0].select[2]", "one-per-group"),
        ("$.meta.x[1]", "finite"),
        ("$.extra", "known-field"),
    }
    assert len(info.value.problems) == 15
    assert len(info.value.lines()) == 15
    assert str(info.value).startswith("multi.json: 15 problem(s) found")


def test_unusable_array_does_not_cascade():
    doc = base_doc()
    doc["experiences"] = {"e1": {}}
    doc["units"] = "u1"
    with pytest.raises(PackageError) as info:
        parse_package(doc)
    assert problem_keys(info.value) == {("$.experiences", "type"), ("$.units", "type")}
    assert "(got 'object')" in info.value.lines()[0]
    assert "(got 'string')" in info.value.lines()[1]


def test_non_finite_value_is_reported_once():
    doc = base_doc()
    doc["candidates"][0]["cost"] = math.nan
    doc["units"][0]["weight"] = -math.inf
    with pytest.raises(PackageError) as info:
        parse_package(doc)
    assert [(p.path, p.rule) for p in info.value.problems] == [
        ("$.units[0].weight", "finite"),
        ("$.candidates[0].cost", "finite"),
    ]


def test_subnormal_numbers_are_refused_and_normal_extremes_solve():
    # Library QA: a weight of 1e-320 passed validation, then every solve raised a bare
    # OverflowError from the power-of-two rescaling.
    doc = base_doc()
    doc["units"][0]["weight"] = 1e-320
    doc["candidates"][0]["cost"] = 5e-324
    doc["candidates"][1]["coverage"] = {k: -1e-310 for k in doc["candidates"][1]["coverage"]}
    with pytest.raises(PackageError) as info:
        parse_package(doc)
    rules = {(p.path, p.rule) for p in info.value.problems}
    assert {("$.units[0].weight", "normal"), ("$.candidates[0].cost", "normal")} <= rules
    assert all(p.rule == "normal" for p in info.value.problems if "coverage" in p.path)
    # The smallest normal float is accepted, and the solve rescales it exactly.
    doc = base_doc()
    for unit in doc["units"]:
        unit["weight"] = sys.float_info.min
    pkg = parse_package(doc)
    result = solve(compile_package(pkg), pkg.budget)
    assert result.label == "OPT" and result.value > 0


def test_range_problem_shows_the_value_as_written():
    doc = base_doc()
    doc["candidates"][0]["cost"] = -2
    with pytest.raises(PackageError) as info:
        parse_package(doc, source="p.json")
    assert info.value.lines() == [
        "p.json: $.candidates[0].cost: must be greater than 0 (got -2) [rule: cost-positive]"
    ]


# --------------------------------------------------------------------------- base, round trips


def test_base_package_loads():
    pkg = load_package(BASE_FILE)
    assert (len(pkg.experiences), len(pkg.units), len(pkg.queries)) == (3, 4, 2)
    assert len(pkg.candidates) == 8 and len(pkg.stores) == 1
    assert {c.type for c in pkg.candidates} >= {"tombstone", "compound_update"}
    assert {u.kind for u in pkg.units} == {"stale", "current_truth", "invalidation", "fact"}
    assert pkg.store("writer-a").select == ("e2:fact", "e3:update")
    assert pkg.saturation == "cap1" and pkg.budget == 6 and pkg.budgets == (2, 4, 6, 8)
    assert pkg.source == str(BASE_FILE)
    assert pkg.warnings == ()


def test_round_trip_through_dict_and_file(tmp_path):
    pkg = load_package(BASE_FILE)
    again = parse_package(package_to_dict(pkg))
    assert content_hash(again) == content_hash(pkg) == pkg.content_hash()
    assert package_to_dict(again) == package_to_dict(pkg)
    out = tmp_path / "saved.json"
    save_package(pkg, out)
    reloaded = load_package(out)
    assert content_hash(reloaded) == content_hash(pkg)
    assert reloaded.unit_weights() == pkg.unit_weights()
    # Saving is canonical: a second save writes the same bytes.
    out2 = tmp_path / "saved2.json"
    save_package(reloaded, out2)
    assert out2.read_bytes() == out.read_bytes()


def _reverse_keys(node):
    if isinstance(node, dict):
        return {k: _reverse_keys(node[k]) for k in reversed(list(node))}
    if isinstance(node, list):
        return [_reverse_keys(v) for v in node]
    return node


def test_content_hash_ignores_key_order_and_whitespace_but_not_costs():
    doc = base_doc()
    h = content_hash(parse_package(doc))
    compact = json.dumps(_reverse_keys(doc), separators=(",", ":"))
    spaced = json.dumps(_reverse_keys(doc), indent=7)
    assert content_hash(loads_package(compact)) == h
    assert content_hash(loads_package(spaced.encode("utf-8"))) == h
    # An integral float is the same number as the integer.
    doc_f = base_doc()
    doc_f["candidates"][0]["cost"] = 3.0
    assert content_hash(parse_package(doc_f)) == h
    # A changed cost is a different package.
    doc_c = base_doc()
    doc_c["candidates"][0]["cost"] = 4
    assert content_hash(parse_package(doc_c)) != h
    doc_c["candidates"][0]["cost"] = 3.0000001
    assert content_hash(parse_package(doc_c)) != h


def test_utf8_bom_is_accepted():
    data = b"\xef\xbb\xbf" + BASE_FILE.read_bytes()
    assert content_hash(loads_package(data)) == content_hash(load_package(BASE_FILE))


# --------------------------------------------------------------------------- weights


def test_unit_weights_explicit_then_queries_then_zero_with_warning():
    doc = base_doc()
    doc["units"].append({"id": "u:orphan", "kind": "context"})
    doc["queries"].append({"id": "q3", "requires": ["u:meal:invalid", "u:meal:old"], "weight": 0.5})
    pkg = parse_package(doc)
    weights = pkg.unit_weights()
    assert weights["u:meal:current"] == 2.0  # explicit, although q1 (weight 2) requires it
    assert weights["u:meal:old"] == 0.2  # explicit wins over q3
    assert weights["u:meal:invalid"] == 2.5  # q1 (2) + q3 (0.5)
    assert weights["u:sister:city"] == 1.0  # q2 has no weight: default 1
    assert weights["u:orphan"] == 0.0
    assert len(pkg.warnings) == 1
    assert "u:orphan" in pkg.warnings[0] and "weighs 0" in pkg.warnings[0]


def test_explicit_zero_weight_is_not_replaced():
    doc = base_doc()
    doc["units"][3]["weight"] = 0
    pkg = parse_package(doc)
    assert pkg.unit_weights()["u:sister:city"] == 0.0
    assert pkg.warnings == ()


def test_all_zero_weights_warn():
    doc = base_doc()
    for unit in doc["units"]:
        unit["weight"] = 0
    pkg = parse_package(doc)
    assert any("every unit weighs 0" in w for w in pkg.warnings)


def test_numpy_scalars_are_numbers():
    """Library QA: np.int64 costs from a pandas column were "not a number"."""
    import numpy as np

    doc = base_doc()
    plain = parse_package(base_doc())
    doc["candidates"][0]["cost"] = np.int64(int(doc["candidates"][0]["cost"]))
    doc["units"][0]["weight"] = np.float64(doc["units"][0]["weight"])
    doc["budget"] = np.int32(4)
    pkg = parse_package(doc)
    assert type(pkg.candidates[0].cost) is float and type(pkg.budget) is float
    assert pkg.candidates[0].cost == plain.candidates[0].cost
    doc["candidates"][0]["cost"] = np.bool_(True)
    with pytest.raises(PackageError):
        parse_package(doc)


def test_an_empty_store_warns():
    doc = base_doc()
    doc["stores"] = [{"id": "blank"}, {"id": "one", "select": [doc["candidates"][0]["id"]]}]
    pkg = parse_package(doc)
    assert [w for w in pkg.warnings if "store" in w] == [
        "$.stores[0]: store 'blank' selects nothing and has no memories: it scores 0 "
        "(rule: store-empty)"
    ]


def test_query_answer_number_is_kept_as_text():
    doc = base_doc()
    doc["queries"][0]["answer"] = 42
    assert parse_package(doc).queries[0].answer == "42"


# --------------------------------------------------------------------------- non-integer numbers


def test_non_integer_costs_and_budgets_are_accepted_and_kept(tmp_path):
    doc = base_doc()
    doc["candidates"][0]["cost"] = 0.5
    doc["candidates"][1]["cost"] = 2.75
    doc["candidates"][2]["cost"] = 1e-9
    doc["budget"] = 3.5
    doc["budgets"] = [0.25, 1.5, 3.5, 0]
    doc["units"][0]["weight"] = 0.125
    doc["queries"][0]["weight"] = 1.5
    pkg = parse_package(doc)
    assert [c.cost for c in pkg.candidates[:3]] == [0.5, 2.75, 1e-9]
    assert pkg.budget == 3.5 and pkg.default_budget() == 3.5
    assert pkg.budgets == (0.25, 1.5, 3.5, 0.0)
    out = tmp_path / "p.json"
    save_package(pkg, out)
    again = load_package(out)
    assert [c.cost for c in again.candidates[:3]] == [0.5, 2.75, 1e-9]
    assert again.budgets == pkg.budgets and content_hash(again) == content_hash(pkg)


# --------------------------------------------------------------------------- JSON Schema


def _sample_and_generated_docs() -> list[tuple[str, dict]]:
    docs = [("_base_valid", base_doc())]
    sample_files = sorted(
        {
            *REPO_ROOT.glob("sample_packages/*.json"),
            *REPO_ROOT.glob("samples/*.json"),
            *REPO_ROOT.glob("memaudit_core/**/samples/*.json"),
        }
    )
    for path in sample_files:
        # The file as written, and its canonical form.
        docs.append((path.name, json.loads(path.read_text(encoding="utf-8"))))
        docs.append((f"{path.name} (canonical)", package_to_dict(load_package(path))))
    from memaudit_core.generators import FAMILIES, generate

    for name in sorted(FAMILIES):
        for seed in (0, 1):
            docs.append((f"{name}/{seed}", package_to_dict(generate(name, seed=seed))))
    return docs


def _validator():
    jsonschema = pytest.importorskip("jsonschema")
    schema = package_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_schema_accepts_base_samples_and_generated_packages():
    validator = _validator()
    docs = _sample_and_generated_docs()
    assert len(docs) >= 7  # base + at least the three paper families, two seeds each
    for name, doc in docs:
        errors = [e.message for e in validator.iter_errors(doc)]
        assert not errors, (name, errors[:3])
        # The parser agrees.
        parse_package(doc, source=name)


@pytest.mark.parametrize(
    "name",
    [
        "format_version_2.json",
        "cost_zero.json",
        "unknown_top_level_field.json",
        "cost_string.json",
        "coverage_above_one.json",
        "format_version_missing.json",
    ],
)
def test_schema_rejects_corpus_files(name):
    validator = _validator()
    doc = json.loads((MALFORMED / name).read_text(encoding="utf-8"))
    assert list(validator.iter_errors(doc)), name


# --------------------------------------------------------------------------- hypothesis

_ids = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=6
).filter(lambda s: s.strip() != "")
_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)
_nonneg = st.one_of(
    st.integers(0, 10**6),
    st.floats(0, 1e6, allow_nan=False, allow_infinity=False, allow_subnormal=False),
)
_cost = st.one_of(
    st.integers(1, 10**6), st.floats(1e-6, 1e6, allow_nan=False, allow_infinity=False)
)
_cov = st.one_of(st.sampled_from([0, 1]), st.floats(0, 1, allow_nan=False, allow_subnormal=False))
_json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    _text,
)
_meta = st.dictionaries(
    _ids,
    st.recursive(
        _json_leaf,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_ids, inner, max_size=3),
        max_leaves=6,
    ),
    max_size=3,
)


def _unique(prefix: str, n: int, draw) -> list[str]:
    raw = draw(st.lists(_ids, min_size=n, max_size=n, unique=True))
    return [f"{prefix}{x}" for x in raw]


@st.composite
def valid_docs(draw) -> dict:
    n_exp = draw(st.integers(1, 4))
    exp_ids = _unique("e", n_exp, draw)
    unit_ids = _unique("u", draw(st.integers(0, 5)), draw)
    units = []
    for uid in unit_ids:
        unit = {"id": uid, "kind": draw(st.sampled_from(["fact", "stale", "current_truth", "x"]))}
        if draw(st.booleans()):
            unit["weight"] = draw(_nonneg)
        if draw(st.booleans()):
            unit["text"] = draw(_text)
        units.append(unit)
    experiences = []
    for i, eid in enumerate(exp_ids):
        exp = {"id": eid}
        if draw(st.booleans()):
            exp["time"] = draw(
                st.one_of(st.integers(-5, 50), st.floats(-5, 50, allow_subnormal=False))
            )
        else:
            exp["time"] = i
        if draw(st.booleans()):
            exp["session"] = draw(_ids)
        experiences.append(exp)
    cand_ids = _unique("c", draw(st.integers(0, 8)), draw)
    candidates = []
    for cid in cand_ids:
        cov_units = draw(st.lists(st.sampled_from(unit_ids), unique=True)) if unit_ids else []
        cand = {
            "id": cid,
            "experience": draw(st.sampled_from(exp_ids)),
            "type": draw(st.sampled_from(["raw_span", "atomic_fact", "tombstone", "my_type"])),
            "cost": draw(_cost),
            "coverage": {u: draw(_cov) for u in cov_units},
        }
        if draw(st.booleans()):
            cand["meta"] = draw(_meta)
        candidates.append(cand)
    queries = []
    for qid in _unique("q", draw(st.integers(0, 3)), draw):
        query = {
            "id": qid,
            "requires": draw(st.lists(st.sampled_from(unit_ids), unique=True)) if unit_ids else [],
        }
        if draw(st.booleans()):
            query["weight"] = draw(_nonneg)
        if draw(st.booleans()):
            query["answer"] = draw(st.one_of(_text, st.integers(-99, 99)))
        queries.append(query)
    stores = []
    for sid in _unique("s", draw(st.integers(0, 2)), draw):
        chosen: dict[str, str] = {}
        for cand in draw(st.permutations(candidates)):
            if cand["experience"] not in chosen and draw(st.booleans()):
                chosen[cand["experience"]] = cand["id"]
        store: dict = {"id": sid, "select": list(chosen.values())}
        if draw(st.booleans()) and unit_ids:
            store["memories"] = [
                {
                    "id": f"m{j}",
                    "cost": draw(_cost),
                    "coverage": {draw(st.sampled_from(unit_ids)): draw(_cov)},
                }
                for j in range(draw(st.integers(1, 3)))
            ]
        stores.append(store)
    doc: dict = {
        "memaudit": 1,
        "id": draw(_ids),
        "objective": {"saturation": draw(st.sampled_from(["cap1", "linear", "log1p"]))},
        "experiences": experiences,
        "units": units,
        "candidates": candidates,
    }
    if queries:
        doc["queries"] = queries
    if stores:
        doc["stores"] = stores
    if draw(st.booleans()):
        doc["budget"] = draw(_nonneg)
    if draw(st.booleans()):
        doc["budgets"] = draw(st.lists(_nonneg, max_size=4))
    if draw(st.booleans()):
        doc["meta"] = draw(_meta)
    if draw(st.booleans()):
        doc["title"] = draw(_text)
    return doc


_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(valid_docs())
def test_random_valid_packages_parse_and_round_trip(doc):
    pkg = parse_package(doc)
    h = content_hash(pkg)
    again = parse_package(package_to_dict(pkg))
    assert content_hash(again) == h
    text = json.dumps(_reverse_keys(doc), indent=1, ensure_ascii=True)
    assert content_hash(loads_package(text.encode("utf-8"))) == h
    assert set(pkg.unit_weights()) == {u["id"] for u in doc["units"]}
    assert all(w >= 0 and math.isfinite(w) for w in pkg.unit_weights().values())


@_SETTINGS
@given(valid_docs())
def test_random_valid_packages_satisfy_the_schema(doc):
    validator = _validator()
    assert not [e.message for e in validator.iter_errors(doc)]
    assert not [e.message for e in validator.iter_errors(package_to_dict(parse_package(doc)))]


_any_json = st.recursive(
    st.one_of(
        _json_leaf,
        st.floats(),  # NaN and infinities included
        st.integers(-(10**400), 10**400),
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=5,
)


def _locations(node, here=()):
    yield here
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _locations(v, (*here, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _locations(v, (*here, i))


@_SETTINGS
@given(st.data())
def test_any_single_replacement_gives_a_package_or_a_package_error(data):
    doc = base_doc()
    where = data.draw(st.sampled_from(list(_locations(doc))[1:]))
    value = data.draw(_any_json)
    target = doc
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    try:
        pkg = parse_package(copy.deepcopy(doc))
    except PackageError as err:
        assert err.problems
        str(err).encode("utf-8")
    else:
        content_hash(pkg)
        assert content_hash(parse_package(package_to_dict(pkg))) == content_hash(pkg)


@_SETTINGS
@given(st.binary(max_size=200) | st.text(max_size=200))
def test_arbitrary_bytes_give_a_package_error_not_a_crash(data):
    with pytest.raises(PackageError):
        loads_package(data)


@pytest.mark.parametrize(
    ("where", "path"),
    [
        (lambda d: d["units"][0], "$.units[0].weight"),
        (lambda d: d["queries"][0], "$.queries[0].weight"),
        (lambda d: d["candidates"][0], "$.candidates[0].text"),
        (lambda d: d, "$.budget"),
        (lambda d: d, "$.title"),
        (lambda d: d["stores"][0], "$.stores[0].label"),
    ],
)
def test_null_is_refused_not_read_as_absent(where, path):
    """The published schema allows no null; reading one as "absent" would silently swap in
    a default (a unit weight derived from the queries, an empty text)."""
    doc = base_doc()
    where(doc)[path.rsplit(".", 1)[1]] = None
    with pytest.raises(PackageError) as info:
        parse_package(doc, "nulls.json")
    assert (path, "not-null") in problem_keys(info.value)
    assert "nulls.json" in str(info.value) and path in str(info.value)


def test_save_package_to_a_missing_folder_is_a_memaudit_error(tmp_path):
    """QA: a bare FileNotFoundError; the CLI wrapped it, the library did not."""
    from memaudit_core.errors import MemAuditError
    from memaudit_core.package import save_package

    with pytest.raises(MemAuditError, match="cannot write .*missing.*No such file"):
        save_package(parse_package(base_doc()), tmp_path / "missing" / "x.json")


def test_an_unknown_unit_with_a_bad_value_gets_both_problems():
    """CLI QA: the value of a coverage entry naming an unknown unit was not checked."""
    doc = base_doc()
    doc["candidates"][0]["coverage"]["u:nowhere"] = 1.7
    with pytest.raises(PackageError) as info:
        parse_package(doc, source="both.json")
    assert problem_keys(info.value) == {
        ('$.candidates[0].coverage["u:nowhere"]', "known-unit"),
        ('$.candidates[0].coverage["u:nowhere"]', "coverage-range"),
    }


def test_validation_knows_every_registered_saturation():
    """One saturation registry: one added to it is accepted by validation and used by F
    (review: validation kept its own list, so a new saturation would have been refused)."""
    import numpy as np
    from package_utils import SQRT, registered_saturation

    from memaudit_core.generators import generate
    from memaudit_core.objective import evaluate

    doc = package_to_dict(generate("update_chain"))
    doc["objective"] = {"saturation": "sqrt"}
    with registered_saturation(SQRT):
        pkg = parse_package(doc)
        inst = compile_package(pkg)
        every = tuple(range(len(pkg.candidates)))
        z = np.asarray(inst.coverage[list(every)].sum(axis=0)).ravel()
        assert evaluate(inst, every) == pytest.approx(float(np.dot(inst.weight, np.sqrt(z))))
    with pytest.raises(PackageError, match="known-saturation"):
        parse_package(doc)  # unregistered again
    doc["objective"] = {"saturation": "cube"}
    with pytest.raises(PackageError, match="known-saturation"):
        parse_package(doc)
