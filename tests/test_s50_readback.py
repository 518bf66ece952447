"""QA s50 (exact report, findings 3, 4 and 7): saved results whose numbers lie were read back.

3. A sweep file with two certified optima at one budget of one package (5.0 beside 5.4), or a
   certified optimum that fell as the budget grew (1.0 at budget 24 after 2.0 at budget 4),
   was shown by ``memaudit show``: OPT is one number per package content and budget, and
   nondecreasing in the budget (DESIGN §5).
4. A saved score whose ``package_id`` or ``content_hash`` differs from its optimum's, or whose
   ``source_kind`` is ``store`` beside ``writer: "gvt"``, was read back ("gvt (oracle) on
   'other'" beside update_chain's OPT).
7. A ``content_hash`` of ``"xyz"`` was read back, and an edited ``budget_note`` was rebuilt
   without a word.

Each edit starts from a genuine file the CLI or the library writes in the test; genuine files
of every sweep kind (ablations, stores cut to fit, external stores scored over P+, namesake
packages of other content, family seeds, time-limited rows) still read back.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core.errors import ResultError

SAMPLES = Path(__file__).resolve().parents[1] / "sample_packages"
UPDATE_CHAIN = SAMPLES / "update_chain.json"
VEG = SAMPLES / "veg-to-pescatarian.json"
EXTERNAL = SAMPLES / "external-stores-demo.json"
EVENT_GRAPH = SAMPLES / "event-graph-50.json"


def _cli_json(*argv: str) -> dict:
    quiet = ("--quiet",) if argv[0] == "sweep" else ()
    rc, out, err = run_cli(*argv, "--json", *quiet)
    assert rc == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def sweep_doc() -> dict:
    """``memaudit sweep update_chain veg-to-pescatarian --writers gvt,greedy --json``."""
    return _cli_json("sweep", str(UPDATE_CHAIN), str(VEG), "--writers", "gvt,greedy")


@pytest.fixture(scope="module")
def score_doc() -> dict:
    return _cli_json("score", str(UPDATE_CHAIN), "--budget", "6", "--writer", "gvt")


@pytest.fixture(scope="module")
def solve_doc() -> dict:
    return _cli_json("solve", str(UPDATE_CHAIN), "--budget", "6")


def _refused(tmp_path: Path, doc: dict, path: str, rule: str) -> str:
    """``memaudit show`` of ``doc`` fails naming its file, ``path`` and ``rule``; and
    ``read_result`` raises the same. Returns the CLI's message."""
    file = tmp_path / "edited.json"
    file.write_text(json.dumps(doc))
    rc, out, err = run_cli("show", str(file))
    assert rc != 0 and out == ""
    assert "edited.json" in err and f"{path}:" in err and f"[rule: {rule}]" in err, err
    assert "Traceback" not in err
    with pytest.raises(ResultError) as exc:
        ma.read_result(json.loads(json.dumps(doc)))
    assert (exc.value.path, exc.value.rule) == (path, rule)
    return err


def _accepted(tmp_path: Path, doc: dict) -> None:
    file = tmp_path / "genuine.json"
    file.write_text(json.dumps(doc))
    rc, out, err = run_cli("show", str(file))
    assert rc == 0, err
    assert out
    ma.read_result(json.loads(json.dumps(doc)))


def _row(doc: dict, package_id: str, budget: float, method: str) -> int:
    (k,) = [
        k
        for k, r in enumerate(doc["rows"])
        if (r["package_id"], r["budget"], r["method"]) == (package_id, budget, method)
    ]
    return k


def _set_opt(row: dict, opt: float, *, keep_ratio: bool) -> None:
    """A certified row's optimum moved to ``opt``, its other numbers left consistent: with
    ``keep_ratio`` the value follows (the ratio unchanged), else the ratio does."""
    if keep_ratio:
        row["value"] = row["ratio"] * opt
    row["opt"] = row["opt_bound"] = opt
    row["ratio"] = row["ratio_low"] = row["value"] / opt


# ------------------------------------------------------------------ 3: one OPT per problem


def test_genuine_cli_sweep_reads_back(tmp_path, sweep_doc):
    _accepted(tmp_path, sweep_doc)


def test_two_certified_optima_at_one_budget_are_refused(tmp_path, sweep_doc):
    doc = json.loads(json.dumps(sweep_doc))
    gvt = _row(doc, "veg-to-pescatarian", 6.0, "gvt")
    greedy = _row(doc, "veg-to-pescatarian", 6.0, "greedy")
    assert doc["rows"][gvt]["certified"] and doc["rows"][gvt]["opt"] == 5.4
    assert doc["rows"][gvt]["content_hash"] == doc["rows"][greedy]["content_hash"]
    assert gvt < greedy  # the later row is the one that contradicts the first
    _set_opt(doc["rows"][greedy], 5.0, keep_ratio=True)
    err = _refused(tmp_path, doc, f"$.rows[{greedy}].opt", "inconsistent")
    assert f"$.rows[{gvt}]" in err and "5.4" in err and "budget 6" in err


def test_certified_optimum_falling_with_the_budget_is_refused(tmp_path, sweep_doc):
    doc = json.loads(json.dumps(sweep_doc))
    at_4 = _row(doc, "veg-to-pescatarian", 4.0, "gvt")
    assert doc["rows"][at_4]["opt"] == 2.0 and doc["rows"][at_4]["certified"]
    rows_24 = [_row(doc, "veg-to-pescatarian", 24.0, m) for m in ("gvt", "greedy")]
    for k in rows_24:
        _set_opt(doc["rows"][k], 1.0, keep_ratio=True)
    # Every summary line still matches its rows: only the cross-row rule can refuse it.
    err = _refused(tmp_path, doc, f"$.rows[{rows_24[0]}].opt", "inconsistent")
    assert "DESIGN §5" in err and "budget 24" in err


def test_falling_optimum_below_the_smallest_budget_alone_is_refused(tmp_path, sweep_doc):
    # Only the rows at budgets 4 and 24 exist: the rule is OPT(4) <= OPT(24), not neighbours.
    doc = json.loads(json.dumps(sweep_doc))
    keep = {4.0, 24.0}
    doc["rows"] = [
        r for r in doc["rows"] if r["package_id"] != "veg-to-pescatarian" or r["budget"] in keep
    ]
    at_24 = _row(doc, "veg-to-pescatarian", 24.0, "gvt")
    assert doc["rows"][_row(doc, "veg-to-pescatarian", 4.0, "gvt")]["opt"] == 2.0
    for m in ("gvt", "greedy"):
        _set_opt(doc["rows"][_row(doc, "veg-to-pescatarian", 24.0, m)], 1.5, keep_ratio=True)
    with pytest.raises(ResultError) as exc:
        ma.read_result(doc)
    assert (exc.value.path, exc.value.rule) == (f"$.rows[{at_24}].opt", "inconsistent")


def test_incumbent_above_a_certified_optimum_is_refused(tmp_path, sweep_doc):
    doc = json.loads(json.dumps(sweep_doc))
    gvt = _row(doc, "veg-to-pescatarian", 6.0, "gvt")
    greedy = _row(doc, "veg-to-pescatarian", 6.0, "greedy")
    row = doc["rows"][greedy]
    assert row["ratio"] == 1.0
    # An unproven row whose store (5.6) beats the certified optimum 5.4 beside it; its ratio
    # and summary line stay consistent, so only the cross-row rule can refuse it.
    row.update(certified=False, value=5.6, opt=5.6, opt_bound=6.0, ratio_low=5.6 / 6.0)
    (line,) = [s for s in doc["summary"] if (s["method"], s["budget"]) == ("greedy", 6.0)]
    line["n_uncertified"] += 1
    err = _refused(tmp_path, doc, f"$.rows[{greedy}].opt", "inconsistent")
    assert f"$.rows[{gvt}]" in err


def test_namesakes_of_other_content_keep_their_own_optima(tmp_path):
    # Same package id, other weights: another problem, whose optimum may be anything.
    other = json.loads(UPDATE_CHAIN.read_text())
    other["units"][0]["weight"] *= 1.5
    path = tmp_path / "uc_other.json"
    path.write_text(json.dumps(other))
    doc = _cli_json("sweep", str(UPDATE_CHAIN), str(path), "--writers", "gvt,greedy")
    by_hash = {r["content_hash"] for r in doc["rows"]}
    assert len(by_hash) == 2 and {r["package_id"] for r in doc["rows"]} == {"update_chain"}
    _accepted(tmp_path, doc)


def test_union_rows_are_their_stores_own_problem(tmp_path):
    doc = _cli_json(
        "sweep",
        str(EXTERNAL),
        "--stores",
        "mem0,letta,amem",
        "--ablations",
        "no_validity",
        "--budgets",
        "1,3,6,12,40",
    )
    union = [r for r in doc["rows"] if r["opt_over"] == "package+store"]
    package = {r["budget"]: r["opt"] for r in doc["rows"] if r["opt_over"] == "package"}
    # P+ holds the store's memories too: its optimum may beat the package's at one budget,
    # so union rows are not the package's problem (nor another store's).
    assert any(r["opt"] > package[r["budget"]] for r in union)
    _accepted(tmp_path, doc)
    # A union optimum falling with the budget is refused like the package's.
    mem0 = sorted(
        (k for k, r in enumerate(doc["rows"]) if r["method"] == "mem0"),
        key=lambda k: doc["rows"][k]["budget"],
    )
    before, last = doc["rows"][mem0[-2]], doc["rows"][mem0[-1]]
    assert before["certified"] and last["certified"] and before["opt"] > 0
    last["value"] = 0.0
    _set_opt(last, before["opt"] / 2, keep_ratio=False)
    for s in doc["summary"]:
        if s["method"] == "mem0" and s["budget"] == last["budget"]:
            s["mean_ratio"] = s["min_ratio"] = s["max_ratio"] = 0.0
    err = _refused(tmp_path, doc, f"$.rows[{mem0[-1]}].opt", "inconsistent")
    assert "'mem0'" in err


def test_genuine_sweeps_with_ablations_and_cut_stores_read_back(tmp_path):
    doc = _cli_json(
        "sweep",
        str(VEG),
        "--stores",
        "fact-only,raw-logger,validity-aware",
        "--ablations",
        "no_validity,generic",
        "--budgets",
        "2,4,6,10,30",
    )
    assert any(r["store_cut"] for r in doc["rows"])
    assert {r["method"] for r in doc["rows"]} >= {"no_validity_opt", "generic_opt"}
    _accepted(tmp_path, doc)


def test_genuine_family_sweep_reads_back(tmp_path):
    doc = _cli_json("sweep", "--family", "memaudit-small:0-3", "--writers", "gvt,greedy,density")
    assert len({r["seed"] for r in doc["rows"]}) == 4
    _accepted(tmp_path, doc)


def test_genuine_time_limited_library_sweep_reads_back(tmp_path):
    pkg = ma.load_package(EVENT_GRAPH)
    res = ma.sweep(
        [pkg], [10, 30, 90], ["greedy"], solver="bnb", time_limit=1e-9, ablations=["generic_opt"]
    )
    doc = json.loads(json.dumps(res.to_dict()))
    assert ma.read_result(doc) == res
    _accepted(tmp_path, doc)


# ------------------------------------------------------------------ 4: a score's own optimum


def test_genuine_scores_read_back(tmp_path, score_doc):
    _accepted(tmp_path, score_doc)
    for store in ("fact-only", "raw-logger"):
        _accepted(tmp_path, _cli_json("score", str(VEG), "--budget", "4", "--store", store))
    _accepted(tmp_path, _cli_json("score", str(EXTERNAL), "--budget", "6", "--store", "mem0"))


@pytest.mark.parametrize(("key", "value"), [("package_id", "other"), ("content_hash", "0" * 64)])
def test_score_of_another_package_than_its_optimum_is_refused(tmp_path, score_doc, key, value):
    doc = json.loads(json.dumps(score_doc))
    assert doc[key] == doc["opt"][key] != value
    doc[key] = value
    err = _refused(tmp_path, doc, f"$.{key}", "inconsistent")
    assert repr(score_doc["opt"][key]) in err


def test_score_source_kind_contradicting_its_writer_is_refused(tmp_path, score_doc):
    doc = json.loads(json.dumps(score_doc))
    assert (doc["writer"], doc["store_id"]) == ("gvt", None)
    doc["source_kind"] = "store"
    err = _refused(tmp_path, doc, "$.source_kind", "inconsistent")
    assert "'writer'" in err
    doc["source_kind"] = "bogus"
    _refused(tmp_path, doc, "$.source_kind", "allowed-value")


def test_store_score_naming_a_writer_is_refused(tmp_path):
    doc = _cli_json("score", str(VEG), "--budget", "4", "--store", "fact-only")
    assert (doc["source_kind"], doc["writer"], doc["writer_kind"]) == ("store", None, None)
    doc["writer_kind"] = "oracle"
    _refused(tmp_path, doc, "$.writer_kind", "inconsistent")


# ------------------------------------------------------------------ 7: hashes and notes


def test_malformed_content_hash_is_refused(tmp_path, solve_doc, score_doc, sweep_doc):
    doc = json.loads(json.dumps(solve_doc))
    doc["content_hash"] = "xyz"
    _refused(tmp_path, doc, "$.content_hash", "allowed-value")
    doc = json.loads(json.dumps(score_doc))
    doc["opt"]["content_hash"] = doc["content_hash"] = "E" * 64  # not lowercase hex
    _refused(tmp_path, doc, "$.content_hash", "allowed-value")
    doc = json.loads(json.dumps(sweep_doc))
    doc["rows"][3]["content_hash"] = "xyz"
    _refused(tmp_path, doc, "$.rows[3].content_hash", "allowed-value")


def test_sweep_row_without_content_still_reads(tmp_path):
    # Rows saved before rows named their content have "" (SweepRow's default).
    res = ma.sweep([ma.load_package(UPDATE_CHAIN)], [3, 6], ["gvt"])
    doc = json.loads(json.dumps(res.to_dict()))
    for r in doc["rows"]:
        r["content_hash"] = ""
    ma.read_result(doc)


@pytest.mark.parametrize("key", ["budget_note", "saturation_note"])
def test_edited_derived_note_is_refused(tmp_path, solve_doc, key):
    assert solve_doc[key] is None
    doc = json.loads(json.dumps(solve_doc))
    doc[key] = "nothing"
    err = _refused(tmp_path, doc, f"$.{key}", "inconsistent")
    assert "expected null" in err
    del doc[key]  # a file without the derived key reads, as one without "label" does
    ma.read_result(doc)
