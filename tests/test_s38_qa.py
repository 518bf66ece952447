"""Defects found by the thirty-eighth session's audit (charts' labels, and the findings of its
report-only reviewers: ablations, certification, generators, external stores, sweeps,
saturations, the package schema, deep links).

Each test fails on the code before its fix (checked against a worktree of the commit before).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from app_utils import open_app, upload_file
from cli_utils import run_cli
from package_utils import write_json
from streamlit.testing.v1 import AppTest

import memaudit_core as ma
from memaudit_core.curves import budget_curve
from memaudit_core.errors import MemAuditError, PackageError
from memaudit_core.explain import evidence_view
from memaudit_core.generators import generate
from memaudit_core.importers import load_external_store
from memaudit_ui.figures import budget_ratio_curve, budget_value_curve

REPO = Path(__file__).resolve().parent.parent


def _linked(page: str, /, **params) -> AppTest:
    at = open_app(page, **params)
    assert not at.exception, [e.value for e in at.exception]
    return at


def _link_messages(at) -> list[str]:
    # Without the backticks of the code spans that quote the link's values (QA s46).
    return [m.value.replace("`", "") for m in (*at.error, *at.warning)]


# --------------------------------------------------------------------------- charts


@pytest.fixture(scope="module")
def chain_curve():
    return budget_curve(generate("update_chain"), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], ["writer:gvt"])


def _budget_label(fig):
    return next(a for a in fig.layout.annotations if a.text.startswith("sidebar B = "))


def _opt_label(fig):
    return next(a for a in fig.layout.annotations if a.text == "OPT = 1")


@pytest.mark.parametrize("draw", [budget_value_curve, budget_ratio_curve])
def test_the_sidebar_budget_label_runs_towards_the_middle_of_the_plot(chain_curve, draw):
    # The label ran right of the line: at a budget near the right end it covered the largest
    # budgets' points (and widened the x-axis to fit itself).
    assert _budget_label(draw(chain_curve, "t", current_budget=5.5)).xanchor == "right"
    assert _budget_label(draw(chain_curve, "t", current_budget=1.5)).xanchor == "left"


def test_the_opt_line_label_sits_away_from_the_sidebar_budget_label(chain_curve):
    # "sidebar B = ..." and "OPT = 1" were drawn over each other at a budget near the right end.
    at_right = _opt_label(budget_ratio_curve(chain_curve, "t", current_budget=5.5))
    assert (at_right.x, at_right.xanchor) == (0, "left")
    at_left = _opt_label(budget_ratio_curve(chain_curve, "t", current_budget=1.5))
    assert (at_left.x, at_left.xanchor) == (1, "right")
    unmarked = _opt_label(budget_ratio_curve(chain_curve, "t"))
    assert (unmarked.x, unmarked.xanchor) == (1, "right")


def test_the_kind_bars_lie_flat_with_one_line_labels_that_fit():
    # Upright bars rotated the kind names at 1024 px and a narrow bar's "(lost x)" label ran
    # into its neighbour's on a projector.
    from memaudit_ui.figures import KIND_BARS_PLOT_PX, bucket_value_bars

    kinds = ["current truth", "invalidation / tombstones", "temporal order", "stale", "other"]
    for present in (False, True):
        fig = bucket_value_bars(
            kinds, [4, 0, 0, 0.9, 3.146], [33, 1.5, 0, 0.3, 0], "density", "OPT", "t", present
        )
        assert [t.orientation for t in fig.data] == ["h", "h"]
        assert list(fig.data[0].y) == kinds and fig.layout.yaxis.autorange == "reversed"
        assert fig.data[1].text[0] == "4 (lost 29)"
        assert not any("<br>" in text for t in fig.data for text in t.text)
        end = fig.layout.xaxis.range[1]
        font = fig.data[0].textfont.size
        for t in fig.data:
            for value, text in zip(t.x, t.text, strict=True):
                # The label's right end (about 0.6 em per character) stays inside the plot.
                assert value / end * KIND_BARS_PLOT_PX + 0.6 * font * len(text) <= KIND_BARS_PLOT_PX


# --------------------------------------------------------------------------- external stores


def _mini_doc() -> dict:
    """Four experiences, six units (one per kind the notes name), two candidates each."""
    kinds = ["current_truth", "invalidation", "stale", "fact", "temporal_order", "preference"]
    return {
        "memaudit": 1,
        "id": "mini",
        "cost_unit": "words",
        "budget": 10,
        "experiences": [{"id": f"e{k}", "time": k, "text": f"turn {k}"} for k in range(1, 5)],
        "units": [
            {"id": f"u{k}", "kind": kind, "text": kind, "weight": 1}
            for k, kind in enumerate(kinds, 1)
        ],
        "candidates": [
            {
                "id": f"e{k}:{form}",
                "experience": f"e{k}",
                "type": "raw_span" if form == "raw" else "atomic_fact",
                "text": "x",
                "cost": 6 if form == "raw" else 3,
                "coverage": {f"u{k}": 1.0, f"u{k + 2}": 0.5} if form == "raw" else {f"u{k}": 1},
            }
            for k in range(1, 5)
            for form in ("raw", "fact")
        ],
    }


@pytest.fixture
def mini(tmp_path):
    return write_json(tmp_path, "mini.json", _mini_doc())


def _mem0(*memories: tuple) -> dict:
    """A Mem0 export of ``(id, text, unit ids[, created_at])`` memories."""
    return {
        "results": [
            {"id": m[0], "memory": m[1], "metadata": {"unit_ids": list(m[2])}}
            | ({"created_at": m[3]} if len(m) > 3 else {})
            for m in memories
        ]
    }


def _letta_passages(tmp_path):
    passages = [
        {"id": "passage-1", "text": "User visited the museum", "metadata": {"unit_ids": ["u4"]}},
        {
            "id": "passage-2",
            "text": "User was vegetarian",
            "metadata": {"unit_ids": ["u3"]},
            "is_deleted": True,
        },
    ]
    return write_json(tmp_path, "letta_passages.json", passages)


def test_memories_the_importer_left_out_as_deleted_are_counted_and_named(mini, tmp_path):
    # The importer keeps a Letta is_deleted passage in store.meta["deleted"] only; the union
    # report said "Deleted (left out): 0" and no note named it.
    pkg = ma.load_package(mini)
    store = load_external_store(_letta_passages(tmp_path), "letta", package=pkg)
    assert [m.id for m in store.memories] == ["passage-1"]
    rep = ma.union_report(ma.with_store(pkg, store), store.id, 10)
    assert rep.deleted == ("passage-2",)
    assert any("marked deleted (passage-2)" in n for n in rep.notes)
    ev = ma.score(ma.with_store(pkg, store), 10, store_id=store.id)
    assert any("1 deleted memory is not part of it" in n for n in ev.notes)


def test_a_stores_import_warnings_and_coverage_come_back_with_its_score(mini, tmp_path):
    # Imported into a package (import -o), then scored: the import's warnings (a link that
    # matches nothing) were never shown again, and the diagnosis blamed extraction.
    mem0 = _mem0(("m1", "User is vegan", ["u1"]), ("m2", "User likes aisle seats", []))
    # A dia_id, as a unit id the package lacks is refused since QA s47.
    mem0["results"][1]["metadata"] = {"dia_id": "u99"}
    export = write_json(tmp_path, "mem0.json", mem0)
    out = tmp_path / "with_store.json"
    rc, _, err = run_cli("import", "mem0", str(export), "--package", str(mini), "-o", str(out))
    assert rc == 0, err
    rc, printed, err = run_cli("score", str(out), "--store", "mem0", "--budget", "10")
    assert rc == 0, err
    assert "'u99'" in printed and "At the import of" in printed
    assert "1 memory covers nothing until annotated (m2)" in printed
    assert "1 of them (m2) covers nothing until annotated" in printed


def test_chroma_provenance_arrays_stored_as_json_text_are_decoded(mini, tmp_path):
    # Chroma stores every list as JSON text; '["u1", "u6"]' was split at its comma into the
    # links '["u1"' and '"u6"]', which matched nothing.
    chroma = {
        "ids": ["c1"],
        "documents": ["User is vegan now and likes aisle seats"],
        "metadatas": [{"keywords": '["diet"]', "evidence": '["u1", "u6"]'}],
    }
    path = write_json(tmp_path, "chroma.json", chroma)
    store = load_external_store(path, "amem", package=ma.load_package(mini))
    assert dict(store.memories[0].coverage) == {"u1": 1.0, "u6": 1.0}
    assert "warnings" not in store.meta


def test_a_record_with_a_bad_id_still_has_its_text_checked(mini, tmp_path):
    # Only the duplicate id was reported; the empty text showed after the id was fixed.
    mem0 = {"results": [{"id": "a", "memory": "x y"}, {"id": "a", "memory": ""}]}
    path = write_json(tmp_path, "m.json", mem0)
    with pytest.raises(PackageError) as info:
        load_external_store(path, "mem0", package=ma.load_package(mini))
    rules = [(p.path, p.rule) for p in info.value.problems]
    assert ("$.results[1].id", "unique-id") in rules
    assert ("$.results[1].memory", "non-empty-text") in rules


def test_the_evidence_explorer_marks_a_store_memory_dropped_to_fit(mini, tmp_path):
    # Over budget, recency pruning drops the oldest memory: the table showed it as "not in
    # store", like a memory the store never wrote.
    text = "one two three four five six"
    mem0 = _mem0(
        ("old", text, ["u3"], "2025-01-01T00:00:00Z"), ("new", text, ["u1"], "2025-01-02T00:00:00Z")
    )
    pkg = ma.load_package(mini)
    store = load_external_store(write_json(tmp_path, "m.json", mem0), "mem0", package=pkg)
    view = evidence_view(ma.with_store(pkg, store), 10, store_id="mem0", focus_unit_id="u3")
    rows = {r["candidate"]: r for r in view.candidate_table()}
    assert rows["old"]["in store"] is False and rows["old"]["dropped to fit"] is True
    assert rows["e3:fact"]["dropped to fit"] is False
    plain = evidence_view(pkg, 10, writer="gvt", focus_unit_id="u3")
    assert "dropped to fit" not in plain.candidate_table()[0]


def test_the_union_header_says_1_word_not_1_words(mini, tmp_path):
    mem0 = _mem0(("m1", "vegan", ["u1"]))
    export = write_json(tmp_path, "m.json", mem0)
    rc, printed, err = run_cli(
        "score", str(mini), "--external", str(export), "--format", "mem0", "--budget", "1"
    )
    assert rc == 0, err
    assert "(1 memory, 1 word as written; budget 1 word)" in printed


# --------------------------------------------------------------------------- robustness


def test_a_limited_capacity_k_value_is_never_below_capacity_1():
    # Each k-run started from the smaller budget's k-store only: stopped early, it reported
    # OPT(2) = 95.28 below the certified OPT(1) = 99.63, which every capacity-2 store beats.
    import memaudit_core.robustness as rb

    pkg = generate("random_coverage", seed=1, n_groups=60)
    cap = rb.capacity_sensitivity(pkg, [10.0, 30.0], engine_time_limit=1e-3)
    for p in cap.points:
        assert p.certified_1
        assert p.opt_k >= p.opt_1 - 1e-9 * p.opt_1, (p.budget, p.opt_k, p.opt_1)


def test_capacity_sensitivity_counts_an_engine_named_twice_once():
    import memaudit_core.robustness as rb

    cap = rb.capacity_sensitivity(generate("update_chain"), [6], engines=["bnb", "bnb"])
    p = cap.points[0]
    assert p.engine_values == (("bnb", pytest.approx(7.85)),)
    assert p.cross_checked is False and p.agree is None


def test_capacity_1_values_are_the_ablation_tables_optima():
    # OPT(1) went through solve(), not opt_at's cache: under limits the page's two tables
    # showed two different incumbents for one optimum.
    import memaudit_core.robustness as rb
    from memaudit_core.analysis import _opt_cache, compile_cached

    pkg = generate("random_coverage", seed=2, n_groups=30)
    before = len(_opt_cache)
    cap = rb.capacity_sensitivity(pkg, [12.0])
    inst = compile_cached(pkg)
    assert len(_opt_cache) > before
    key = (inst.fingerprint, 12.0, "auto")
    hits = [v for k, v in _opt_cache.items() if k[:3] == key]
    assert hits and hits[0].value == cap.points[0].opt_1


def test_cost_rule_means_over_fewer_budgets_are_said():
    import memaudit_core.robustness as rb

    sens = rb.cost_rule_sensitivity(
        ma.load_package(REPO / "sample_packages" / "veg-to-pescatarian.json")
    )
    notes = sens.undefined_notes
    assert len(notes) == 1 and notes[0].startswith("bytes_overhead: OPT = 0 at budgets 4, 6")
    assert "over the other 5 of the 7 budgets" in notes[0]


def test_an_unfiltered_ablation_does_not_call_an_undefined_drop_0():
    import memaudit_core.robustness as rb

    curve = rb.ablation_curve(generate("update_chain"), [0.0, 3.0], ["x"])
    assert "so every drop is 0 (n/a where the full OPT is 0)." in " ".join(curve.notes)
    curve = rb.ablation_curve(generate("update_chain"), [3.0], ["x"])
    assert "so every drop is 0." in " ".join(curve.notes)


@pytest.mark.parametrize(
    "call",
    [
        lambda rb, pkg: rb.ablation_curve(pkg, [6], [1]),
        lambda rb, pkg: rb.ablation_curve(pkg, [6], [None]),
        lambda rb, pkg: rb.ablation_curve(pkg, [6], progress=5),
        lambda rb, pkg: rb.cost_rule_sensitivity(pkg, [6], progress=5),
        lambda rb, pkg: rb.capacity_sensitivity(pkg, [6], progress=5),
        lambda rb, pkg: rb.noise_sensitivity(pkg, draws=1, budgets=[6], progress=5),
        lambda rb, pkg: rb.perturb_coverage(ma.compile_package(pkg), "flip", 0.1, None),
        lambda rb, pkg: rb.kendall_tau([1, 2], [1]),
        lambda rb, pkg: rb.same_ranking([1, 2, 3], [1]),
        lambda rb, pkg: rb.kendall_tau([1, float("nan"), 0.5], [1, 0.2, 0.5]),
    ],
)
def test_robustness_inputs_are_refused_with_a_memaudit_error(call):
    import memaudit_core.robustness as rb

    with pytest.raises(MemAuditError):
        call(rb, generate("update_chain"))


def test_the_ablation_drop_chart_lies_flat_with_readable_labels():
    # Three pools over five budgets: upright bars so narrow that their labels shrank to 7 px.
    import memaudit_core.robustness as rb
    from memaudit_ui.figures import ablation_drop_chart

    pkg = generate("update_chain")
    curves = [rb.ablation_curve(pkg, preset="no_validity"), rb.ablation_curve(pkg, None, ["x"])]
    fig = ablation_drop_chart(curves, "t", "words", present=True)
    assert {t.orientation for t in fig.data} == {"h"}
    assert fig.layout.uniformtext.minsize == 18 and fig.layout.uniformtext.mode == "show"
    assert [t.name for t in fig.data] == ["OPT without validity types", "OPT without:x"]


# --------------------------------------------------------------------------- generators


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"n_groups": 2.5}, "parameter 'n_groups' must be an integer, got 2.5"),
        ({"candidates_per_group": 2.5}, "'candidates_per_group' must be an integer"),
        ({"units_per_group": 2.5}, "'units_per_group' must be an integer"),
        ({"min_cover": 2.5}, "'min_cover' must be an integer"),
        ({"max_cover": 7.5}, "'max_cover' must be an integer"),
        ({"cost_low": None}, "parameter 'cost_low' must be a number, got None"),
        ({"budget_fraction": 1e308}, "budget_fraction must be a number in (0, 1]"),
    ],
)
def test_random_coverage_parameters_of_the_wrong_type_are_refused(params, message):
    # A bare TypeError, or a package whose meta recorded min_cover=2.5 for candidates
    # covering 2 units; 1e308 was refused at the generated package's $.budget.
    with pytest.raises(MemAuditError) as info:
        generate("random_coverage", **params)
    assert message in str(info.value)
    assert generate("random_coverage", n_groups=3.0).meta["params"]["n_groups"] == 3


def test_event_graph_candidate_types_are_recorded_in_one_canonical_form():
    a = generate("event_graph", candidate_types="summary, raw_span,summary")
    b = generate("event_graph", candidate_types="raw_span,summary")
    assert a.id == b.id == "event-graph-n50-s0-candidate_types=raw_span+summary"
    assert a.meta["params"]["candidate_types"] == "raw_span,summary"
    assert a.content_hash() == b.content_hash()
    every = generate("event_graph", candidate_types="ALL ")
    assert (
        every.id == "event-graph-n50-s0"
        and every.content_hash() == generate("event_graph").content_hash()
    )


def test_temporal_interval_refuses_more_closures_than_intervals():
    with pytest.raises(MemAuditError, match=r"closures \(3\) must not exceed intervals \(1\)"):
        generate("temporal_interval", intervals=1, closures=3)
    assert len(generate("temporal_interval", intervals=2, closures=2).experiences) == 4


@pytest.mark.parametrize("seed_text", ["+3", "3_0", "٣"])
def test_a_generated_package_key_takes_a_seed_in_digits_only(seed_text):
    # int() read "+3" as 3 and "3_0" as 30, while the Generator form started from seed 0.
    from memaudit_ui import sources

    with pytest.raises(MemAuditError, match="a seed is written in digits 0-9 only"):
        sources.load_by_key(f"gen:memaudit-small:{seed_text}")


def test_the_generator_form_of_a_seed_invariant_family_shows_the_seed_it_builds():
    # The disabled box showed the link's seed 5 while Preview built seed 0.
    at = _linked("pages/7_Generator.py", package="gen:update_chain:5")
    assert at.number_input(key="gen_update_chain_seed").value == 0
    seeded = _linked("pages/7_Generator.py", package="gen:memaudit-small:5")
    assert seeded.number_input(key="gen_memaudit-small_seed").value == 5


# --------------------------------------------------------------------------- certification


def _milli_doc(small: float = 9e-7) -> dict:
    """Three experiences covering one unit of weight 0.001 by 0.7, 0.3 and ``small``
    (linear): the third is worth 0.001 x small, under the engines' absolute 1e-9."""
    cover = {"a": 0.7, "b": 0.3, "c": small}
    return {
        "memaudit": 1,
        "id": "milli",
        "objective": {"saturation": "linear"},
        "budget": 3,
        "experiences": [{"id": f"e{k}", "time": k} for k in range(3)],
        "units": [{"id": "u0", "kind": "fact", "weight": 0.001}],
        "candidates": [
            {
                "id": c,
                "experience": f"e{k}",
                "type": "atomic_fact",
                "cost": 1,
                "coverage": {"u0": v},
            }
            for k, (c, v) in enumerate(cover.items())
        ],
    }


def test_a_cross_checks_better_store_within_tolerance_is_the_one_returned(monkeypatch):
    # HiGHS kept the budget-2 optimum as its start at budget 3 (0.001, "optimal"); enum found
    # 0.0010000009 and agreed within 1e-9, and the worse store was returned as OPT. Since QA
    # s49 HiGHS sees a scaled objective and finds 0.0010000009 itself; unscaled, as here, it
    # misses it as it did, which is the case the cross-check's store must cover.
    from memaudit_core.objective import evaluate
    from memaudit_core.solvers import milp

    monkeypatch.setattr(milp, "objective_scale", lambda *args, **kwargs: 1.0)
    from memaudit_core.package import parse_package
    from memaudit_core.solvers import solve_budgets

    # Since s50 agreement is within 1e-9 of OPT itself (not of a value unit of 1): the third
    # candidate adds 5e-10 relative, within it. The engines see values lifted by 2^10 (OPT's
    # floor 0.0007 is below 2^-10), where that gain is 5.1e-10: above enum's zero-gain floor
    # (1e-12), below the absolute 1e-9 HiGHS's unscaled objective misses.
    inst = ma.compile_package(parse_package(_milli_doc(small=5e-10)))
    results = solve_budgets(inst, [2.0, 3.0], "milp", cross_check=True)
    top = results[-1]
    assert top.certified and top.selected == ("a", "b", "c")
    assert top.value == evaluate(inst, top.selected_idx) > 0.001
    assert "enum's store" in top.certificate.proof


def test_an_engine_disagreement_exits_1_with_enough_digits(tmp_path, monkeypatch):
    # It exited 2 ("bad input"), saying "relative difference 1e-09 > 1e-09". HiGHS takes
    # the store worth 1 and misses the 1e-9 that a second experience adds (its tolerance).
    # Since QA s49 HiGHS sees a scaled objective and finds it; unscaled, as here, it misses
    # it as it did, which is how an engine disagreement is made to happen. Costs of 0.01 to
    # 1000, a factor 1e5: where they span more, HiGHS's proof is no proof and enum's better
    # store is returned instead (session 51), no disagreement.
    from memaudit_core.solvers import milp

    monkeypatch.setattr(milp, "objective_scale", lambda *args, **kwargs: 1.0)
    spec = [  # (experience, type, cost, coverage of u0 or None)
        ("e0", "atomic_fact", 1, None),
        ("e0", "summary", 1, 1.0),
        ("e0", "tombstone", 0.01, None),
        ("e1", "tombstone", 1000, None),
        ("e1", "atomic_fact", 1000, None),
        ("e2", "atomic_fact", 1, None),
        ("e3", "atomic_fact", 1, 1e-09),
        ("e3", "tombstone", 1000, None),
        ("e3", "raw_span", 1000, None),
        ("e4", "atomic_fact", 0.01, None),
        ("e4", "atomic_fact", 0.01, None),
    ]
    doc = {
        "memaudit": 1,
        "id": "s148",
        "objective": {"saturation": "linear"},
        "budget": 1001,
        "experiences": [{"id": f"e{k}", "time": 3 if k == 3 else 0} for k in range(5)],
        "units": [{"id": "u0", "kind": "fact", "weight": 1}],
        "candidates": [
            {
                "id": f"c{k}",
                "experience": exp,
                "type": kind,
                "cost": cost,
                "coverage": {} if cover is None else {"u0": cover},
            }
            for k, (exp, kind, cost, cover) in enumerate(spec)
        ],
    }
    path = write_json(tmp_path, "s148.json", doc)
    rc, _, err = run_cli("solve", str(path), "--solver", "milp")
    assert rc == 1, err
    assert "exact solvers disagree" in err and "relative difference 1.0000000" in err


def test_an_audit_resumes_from_its_journal(tmp_path):
    # The sweep's row check threw away every audit line: --max-tasks 1 never finished, and
    # each run said "1 torn or unreadable journal line(s) dropped".
    out = tmp_path / "out"
    args = ("audit", str(REPO / "sample_packages" / "update_chain.json"), "--out", str(out))
    outputs = [run_cli(*args, "--max-tasks", "1", "--no-figures") for _ in range(3)]
    # INCOMPLETE twice (exit 3 since s52), then PASS.
    assert [rc for rc, _, _ in outputs] == [3, 3, 0]
    last = outputs[-1][1] + outputs[-1][2]
    assert "PASS: 3 of 3 checks" in last and "1 check(s) run now, 2 reused" in last
    assert not any("torn" in o + e for _, o, e in outputs)


def test_a_saved_audit_whose_rows_contradict_it_is_refused(tmp_path):
    import json

    from memaudit_core.audit import audit
    from memaudit_core.errors import ResultError

    saved = audit([str(REPO / "sample_packages" / "update_chain.json")], figures=False).to_dict()
    assert ma.read_result(json.loads(json.dumps(saved))).verdict == "PASS"
    bad_bound = json.loads(json.dumps(saved))
    bad_bound["rows"][1].update(milp_value=1.0, milp_bound=0.5, milp_status="limit")
    bad_status = json.loads(json.dumps(saved))
    bad_status["rows"][1]["milp_status"] = "limit"
    # Since s42 two agreeing proofs (bnb, enum) stand beside a limited MILP: limit enum too.
    bad_status["rows"][1]["enum_status"] = "limit"
    bad_count = json.loads(json.dumps(saved))
    bad_count["n_agree"] = 7
    for doc, where in (
        (bad_bound, "$.rows[1].milp_bound"),
        (bad_status, "$.rows[1].outcome"),
        (bad_count, "$.n_agree"),
    ):
        with pytest.raises(ResultError) as info:
            ma.read_result(doc)
        assert info.value.path == where and info.value.rule == "inconsistent"


def test_limited_and_skipped_audits_still_read_back(tmp_path):
    import json

    from memaudit_core.audit import audit

    doc = json.loads((REPO / "sample_packages" / "event-graph-50.json").read_text())
    # The MILP skips every check, and at 125 enumeration does not fit (s42: it checks log1p
    # packages it can take).
    doc["objective"] = {"saturation": "log1p"}
    skipped = audit([str(write_json(tmp_path, "log.json", doc))], budgets=[125], figures=False)
    assert skipped.verdict == "NOTHING CHECKED" and skipped.n_skipped > 0
    assert ma.read_result(json.loads(json.dumps(skipped.to_dict()))).n_skipped == skipped.n_skipped
    pkg = str(REPO / "sample_packages" / "event-graph-500.json")
    limited = audit([pkg], budgets=[1310], time_limit=1e-6, figures=False)
    assert limited.n_unproven == 1
    assert ma.read_result(json.loads(json.dumps(limited.to_dict()))).n_unproven == 1


def test_the_certification_page_does_not_call_skipped_checks_agreeing(tmp_path):
    # "All 9 instance checks agree." beside "0 / 0 / 0" when the MILP skipped all of them.
    import json

    # Too large to enumerate at its budgets (s42: enumeration checks log1p packages it can).
    doc = json.loads((REPO / "sample_packages" / "event-graph-50.json").read_text())
    doc["id"] = "eg-log1p"
    doc["objective"] = {"saturation": "log1p"}
    doc["budgets"] = [100, 125]
    at = open_app("app.py", 300, package="sample:update_chain")
    upload_file(at, "eg-log1p.json", json.dumps(doc).encode())
    at.switch_page("pages/6_Certification.py").run()
    at.button(key="cert_audit_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not any("agree." in s.value for s in at.success)
    assert any("Nothing was cross-checked" in w.value and "skipped" in w.value for w in at.warning)
    metrics = {m.label: m.value for m in at.metric}
    # Separate tiles since QA s40 (the one four-number tile was cut at 1024 px).
    assert (metrics["Agree"], metrics["Disagree"], metrics["Unproven"]) == ("0", "0", "0")
    assert metrics["Skipped"] != "0"


# --------------------------------------------------------------------------- sweeps


def _small_family_args():
    return ("sweep", "--family", "memaudit-small:0-3", "--budgets", "3", "--writers", "gvt")


@pytest.mark.parametrize("name", ["journal.jsonl", "report.md", "rows.csv", "figures/x.png"])
def test_sweep_o_may_not_name_a_file_of_its_out_folder(tmp_path, name):
    # -o out/journal.jsonl replaced the resume journal with the CSV, exit 0.
    out = tmp_path / "out"
    rc, _, err = run_cli(*_small_family_args(), "--out", str(out), "-o", str(out / name))
    assert rc == 2 and "is a file the run writes in --out" in err
    assert not (out / "journal.jsonl").exists()
    rc, _, err = run_cli(
        *_small_family_args(), "--out", str(out), "-o", str(out / "mine.csv"), "--no-figures"
    )
    assert rc == 0, err


def test_a_sweep_refused_on_a_bad_option_does_not_lock_its_out_folder(tmp_path):
    # The journal's header was written before the time limit was checked (per package, after
    # indexing); the next run with a good limit was refused as "other settings".
    out = tmp_path / "out"
    rc, _, err = run_cli(*_small_family_args(), "--out", str(out), "--time-limit", "0")
    assert rc == 2 and "--time-limit: must be a finite number of seconds > 0, got '0'" in err
    assert "memaudit-small:0" not in err
    rc, _, err = run_cli(
        *_small_family_args(), "--out", str(out), "--time-limit", "5", "--no-figures"
    )
    assert rc == 0, err


def test_a_journal_of_other_settings_without_results_starts_over(tmp_path):
    from memaudit_core.suites import Journal

    Journal(tmp_path, "sweep", {"solver": "enum"}, True).close()
    again = Journal(tmp_path, "sweep", {"solver": "auto"}, True)
    again.record([("k", {"value": 1.0, "opt": 1.0, "ratio": 1.0, "certified": True, "cost": 1})])
    again.close()
    with pytest.raises(MemAuditError, match="written with other settings"):
        Journal(tmp_path, "sweep", {"solver": "enum"}, True)


def test_a_fresh_sweep_removes_the_outputs_of_the_run_it_replaces(tmp_path):
    out = tmp_path / "out"
    rc, _, err = run_cli(*_small_family_args(), "--out", str(out), "--no-figures")
    assert rc == 0 and (out / "report.md").exists(), err
    rc, _, err = run_cli(*_small_family_args(), "--out", str(out), "--fresh", "--max-tasks", "1")
    assert rc == 3, err  # tasks left (s52: exit 0)
    # journal.lock: the lock a run holds on the folder (QA s44), kept for the next run.
    assert sorted(p.name for p in out.iterdir()) == ["journal.jsonl", "journal.lock"]


def test_a_plain_sweep_of_several_families_says_it_pools_them(tmp_path):
    files = [
        str(REPO / "sample_packages" / f"{name}.json")
        for name in ("update_chain", "temporal_interval", "travel-assistant")
    ]
    rc, printed, err = run_cli("sweep", *files, "--writers", "gvt", "--budgets", "4")
    assert rc == 0, err
    assert "The table above pools 3 families; by family:" in printed
    assert "note: the summary pools 3 families" in printed
    rc, saved, err = run_cli("sweep", *files, "--writers", "gvt", "--budgets", "4", "--json")
    assert any("pools 3 families" in n for n in __import__("json").loads(saved)["notes"])


def test_a_saved_sweep_whose_summary_contradicts_its_rows_is_refused(tmp_path):
    import json

    from memaudit_core.errors import ResultError

    rc, saved, err = run_cli(
        "sweep", "--family", "memaudit-small:0-5", "--budgets", "3", "--writers", "gvt", "--json"
    )
    assert rc == 0, err
    doc = json.loads(saved)
    assert ma.read_result(doc).summary[0].n == 6
    doc["summary"][0]["mean_ratio"] = 0.5
    with pytest.raises(ResultError) as info:
        ma.read_result(doc)
    assert info.value.path == "$.summary[0].mean_ratio" and info.value.rule == "inconsistent"


def test_rows_of_one_package_and_budget_share_one_optimum():
    # Resumed under a time limit, gvt's row kept bound 193.469 and density's 169.098 for
    # the same OPT 163.980.
    from memaudit_core.suites import SuiteRow, _one_denominator

    def row(method, value, opt, bound, certified=False, over="package"):
        return SuiteRow(
            "p",
            "p",
            "h",
            None,
            None,
            40.0,
            method,
            value,
            opt,
            value / opt,
            certified,
            1.0,
            bound,
            value / bound,
            over,
        )

    rows = [row("gvt", 150.0, 163.98, 193.469), row("density", 120.0, 160.0, 169.098)]
    a, b = _one_denominator(rows)
    assert (a.opt, a.opt_bound, b.opt, b.opt_bound) == (163.98, 169.098, 163.98, 169.098)
    assert b.ratio == pytest.approx(120.0 / 163.98) and a.ratio_low == pytest.approx(150 / 169.098)
    proven = _one_denominator([*rows, row("no_validity_opt", 150.0, 164.5, 164.5, True)])
    assert {(r.opt, r.certified) for r in proven} == {(164.5, True)}
    union = row("mem0", 1.0, 9.0, 9.0, True, "union")
    assert _one_denominator([rows[0], union])[1] is union


# --------------------------------------------------------------------------- package format


def _chain_doc() -> dict:
    import json

    return json.loads((REPO / "sample_packages" / "update_chain.json").read_text())


def _problems(doc: dict) -> list[tuple[str, str]]:
    from memaudit_core.package import parse_package

    with pytest.raises(PackageError) as info:
        parse_package(doc)
    return [(p.path, p.rule) for p in info.value.problems]


def test_format_version_1_0_is_version_1():
    # JSON Schema's const 1 takes 1.0; validate refused it as "unsupported (expected 1)".
    from memaudit_core.package import parse_package

    doc = _chain_doc()
    doc["memaudit"] = 1.0
    assert parse_package(doc).id == "update_chain"
    doc["memaudit"] = 1.5
    assert _problems(doc) == [("$.memaudit", "format-version")]


@pytest.mark.parametrize(
    ("where", "path"),
    [
        (lambda d: d.__setitem__("cost_unit", ""), "$.cost_unit"),
        (lambda d: d["units"][0].__setitem__("kind", " "), "$.units[0].kind"),
    ],
)
def test_an_empty_optional_string_is_refused_not_defaulted(where, path):
    # An empty unit kind became "fact" and an empty cost unit "units", without a word.
    doc = _chain_doc()
    where(doc)
    assert _problems(doc) == [(path, "non-empty")]


def test_an_empty_memory_status_is_refused(mini, tmp_path):
    import json

    doc = json.loads(mini.read_text())
    doc["stores"] = [
        {
            "id": "s",
            "memories": [{"id": "m1", "cost": 1, "coverage": {"u1": 1}, "status": ""}],
        }
    ]
    assert _problems(doc) == [("$.stores[0].memories[0].status", "non-empty")]


def test_paths_to_keys_with_dots_brackets_or_spaces_are_bracketed():
    doc = _chain_doc()
    doc["meta"] = {"a.b": float("nan"), "a": {"b": float("nan")}}
    doc["units[0]"] = 1
    doc["experiences"][0]["meta"] = {"": float("nan"), "x y": float("nan")}
    paths = {p for p, _ in _problems(doc)}
    assert {
        '$.meta["a.b"]',
        "$.meta.a.b",
        '$["units[0]"]',
        '$.experiences[0].meta[""]',
        '$.experiences[0].meta["x y"]',
    } <= paths


def test_the_schema_says_what_only_validate_checks():
    from memaudit_core.package import VALIDATOR_ONLY_RULES, package_json_schema

    schema = package_json_schema()
    for rule in ("unique-id", "normal", "finite-sum", "iso-8601", "duplicate-key", "unicode"):
        assert rule in schema["description"]
    assert all(rule in schema["description"] for rule in VALIDATOR_ONLY_RULES)
    units = schema["properties"]["units"]["items"]["properties"]
    assert units["kind"]["minLength"] == 1 and schema["properties"]["cost_unit"]["minLength"] == 1


def test_upload_problems_are_shown_verbatim_in_code_spans():
    # A word joiner (U+2060) guarded "u:hotel:current" from Streamlit's emoji shortcodes in
    # plain text, and came along when the id was copied.
    from memaudit_ui.frame import md_code_span, problem_list_md

    line = "p.json: $.units[3].id: duplicate (got 'u:hotel:current') [rule: unique-id]"
    shown = problem_list_md([line])
    assert shown == f"- `{line}`" and "\u2060" not in shown
    assert md_code_span("a `b` c") == "``a `b` c``"
    assert md_code_span("`x") == "`` `x ``"
    assert problem_list_md([f"l{k}" for k in range(32)]).endswith("\n- … and 2 more")


# --------------------------------------------------------------------------- deep links


def test_a_subnormal_budget_in_a_link_is_refused():
    # 1e-320 was shown as 1e-320, 9.999888672e-321 and 9.99989e-321 on one page.
    from memaudit_ui.state import parse_budget

    value, problem = parse_budget("1e-320")
    assert value is None and "below the smallest normal number" in problem
    assert parse_budget("1e-300") == (1e-300, None) and parse_budget("0") == (0.0, None)


@pytest.mark.parametrize("param", ["package", "store"])
def test_an_empty_link_value_is_named_not_dropped(param):
    params = {"package": "sample:update_chain", "budget": "6", param: ""}
    at = _linked("app.py", **params)
    assert any(f"ignored {param}='' in the link: empty" in m for m in _link_messages(at))


def test_a_very_long_link_value_is_cut_in_the_message():
    at = _linked("app.py", package="sample:" + "x" * 5000, budget="6")
    messages = _link_messages(at)
    assert any("5,007 characters" in m for m in messages), messages
    assert max(len(m) for m in messages) < 1500


def test_parameters_the_link_ignored_leave_the_url():
    at = _linked("app.py", package="sample:update_chain", budget="6", page="Compare")
    assert any("ignored page='Compare'" in m for m in _link_messages(at))
    assert "page" not in at.query_params


# --------------------------------------------------------------------------- writers


@pytest.mark.parametrize(("weight", "cost"), [(1.0, 1.0), (1e5, 1.0), (1e6, 1.0), (100.0, 1e-3)])
def test_gvt_keeps_its_store_when_every_weight_or_cost_is_rescaled(weight, cost):
    # At weight 1e6 the threshold pass refused b, whose density equals the threshold up to a
    # rounding error of 6e-11 (above the absolute 1e-12 allowance): the store became {a, c}.
    from memaudit_core.package import parse_package
    from memaudit_core.writers import run_writer

    doc = {
        "memaudit": 1,
        "id": "gvt-scale",
        "experiences": [{"id": f"e{k}", "time": k} for k in range(3)],
        "units": [{"id": "u", "weight": weight}],
        "candidates": [
            {"id": c, "experience": f"e{k}", "type": t, "cost": cost, "coverage": {"u": v}}
            for k, (c, t, v) in enumerate(
                [("a", "summary", 0.646), ("b", "atomic_fact", 0.3), ("c", "atomic_fact", 0.985)]
            )
        ],
    }
    inst = ma.compile_package(parse_package(doc))
    assert run_writer("gvt", inst, 2 * cost).selected == ("c",)
