"""Review of s45 (round 1).

1. ``package_warnings`` of one in-process ``cli.main()`` call were listed in the next call's
   usage-error object.
2. The warning that no candidate fits the default budget was printed by ``solve --budget 3``
   (after OPT certified) and by a sweep whose budgets leave the default budget out; it had no
   rule.
3. A generated package's warnings were named ``random_coverage:1`` without ``--param
   n_groups=3``, and the closing line pointed at ``memaudit validate FILE``, which a generated
   package has no file for.
4. ``validate`` and ``score --external`` printed warnings in their own loops: control
   characters raw, an export's warnings uncapped.
5. Library argument mistakes (an empty budget list, a non-callable ``on_warnings``) were plain
   ``MemAuditError`` in some functions and ``UsageError`` in others.
6. ``UnionCurve(rows)`` and ``TimeShare.overrun_note(what, text)`` raised TypeError.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from cli_utils import run_cli

from memaudit_core import cli
from memaudit_core.analysis import sweep
from memaudit_core.audit import audit
from memaudit_core.curves import budget_curve
from memaudit_core.errors import ResultError, UsageError
from memaudit_core.generators import generate
from memaudit_core.package import dumps_package, load_package
from memaudit_core.results import read_result
from memaudit_core.solvers.timeshare import TimeShare
from memaudit_core.suites import sweep_suite
from memaudit_core.union import UnionCurve, union_curve

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_packages"
CLEAN = SAMPLES / "update_chain.json"
SMALL = SAMPLES / "memaudit-small-s0.json"
DEMO = SAMPLES / "external-stores-demo.json"
MEM0 = REPO / "tests" / "fixtures" / "importers" / "mem0_v2_results.json"
RULE = "(rule: budget-fits-nothing)"
NO_FIT = "no candidate fits the default budget"


def lookalike_package(path: Path) -> Path:
    """Candidates "c2" and "c2 " (a look-alike id warning), default budget 5."""
    doc = {
        "memaudit": 1,
        "id": path.stem,
        "budget": 5,
        "experiences": [{"id": "e1", "time": 0}, {"id": "e2", "time": 1}],
        "units": [{"id": "u1", "weight": 1}, {"id": "u2", "weight": 2}],
        "candidates": [
            {"id": "c2", "experience": "e1", "type": "raw_span", "cost": 4,
             "coverage": {"u1": 1}},
            {"id": "c2 ", "experience": "e2", "type": "raw_span", "cost": 3,
             "coverage": {"u2": 1}},
        ],
    }  # fmt: skip
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def small_package(tmp_path: Path, cost_unit: str | None = None) -> tuple[Path, float, float]:
    """A generated package whose default budget fits no candidate: (file, budget, cheapest)."""
    pkg = generate("random_coverage", 1, n_groups=3, units_per_group=1)
    doc = json.loads(dumps_package(pkg))
    if cost_unit is not None:
        doc["cost_unit"] = cost_unit
    path = tmp_path / "small.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    cheapest = min(c["cost"] for c in doc["candidates"])
    assert doc["budget"] < cheapest  # the repro holds
    return path, doc["budget"], cheapest


def no_fit_seeds(seeds: range, at_default_grid: bool) -> list[int]:
    """The random_coverage seeds (3 groups) whose default budget fits nothing and is run."""
    out = []
    for s in seeds:
        pkg = generate("random_coverage", s, n_groups=3)
        fits_nothing = pkg.budget < min(c.cost for c in pkg.candidates)
        if fits_nothing and at_default_grid and pkg.budget in pkg.budget_grid():
            out.append(s)
    return out


# --------------------------------------------------------------------------- 1: leak


def test_package_warnings_do_not_leak_into_the_next_calls_error(tmp_path: Path) -> None:
    look = lookalike_package(tmp_path / "look.json")
    code, out, err = run_cli("solve", str(look), "--budget", "3", "--json")
    assert code == 0, err
    assert json.loads(out)["package_warnings"][0]["file"] == str(look)
    code, out, _ = run_cli("solve", str(CLEAN), "--bogus", "--json")
    assert code == 2
    obj = json.loads(out)
    assert obj["error"]["type"] == "UsageError"
    assert "package_warnings" not in obj, obj


# --------------------------------------------------------------------------- 2: default budget


def test_solve_and_score_at_another_budget_do_not_say_it(tmp_path: Path) -> None:
    path, budget, cheapest = small_package(tmp_path)
    for command in (["solve"], ["score", "--writer", "gvt"]):
        code, out, err = run_cli(command[0], str(path), *command[1:], "--budget", "5", "--json")
        assert code == 0, err
        assert NO_FIT not in err, err
        assert json.loads(out)["package_warnings"] == []
    # At the default budget it is said, with its rule.
    code, _, err = run_cli("solve", str(path))
    assert code == 0, err
    [line] = [x for x in err.splitlines() if NO_FIT in x]
    assert line.startswith(f"{path}: warning: $.budget: ") and line.endswith(RULE), line
    code, _, err = run_cli("solve", str(path), "--budget", f"{budget!r}")
    assert code == 0 and NO_FIT in err, err


def test_validate_says_it_with_its_rule(tmp_path: Path) -> None:
    path, _, _ = small_package(tmp_path)
    code, out, err = run_cli("validate", str(path), "--json")
    assert code == 0, err
    [warning] = [w for w in json.loads(out)["warnings"] if NO_FIT in w]
    assert warning.startswith("$.budget: ") and warning.endswith(RULE)


def test_a_sweep_at_other_budgets_does_not_say_it() -> None:
    seeds = range(0, 10)
    assert no_fit_seeds(seeds, at_default_grid=True)  # some would be warned of
    code, out, err = run_cli(
        "sweep", "--family", "random_coverage:0-9", "--param", "n_groups=3", "--budgets", "2",
        "--writers", "gvt", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert NO_FIT not in err, err
    assert json.loads(out)["package_warnings"] == []


def test_audit_at_other_budgets_does_not_say_it() -> None:
    code, out, err = run_cli(
        "audit", "--family", "random_coverage:1", "--param", "n_groups=3", "--budgets", "2",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    assert NO_FIT not in err, err
    assert json.loads(out)["package_warnings"] == []


# --------------------------------------------------------------------------- 3: family labels


def test_generated_packages_are_named_with_their_params() -> None:
    seeds = range(0, 15)
    expected = no_fit_seeds(seeds, at_default_grid=True)
    assert len(expected) > cli.MAX_WARNED_FILES  # the closing line is printed
    code, out, err = run_cli(
        "sweep", "--family", "random_coverage:0-14", "--param", "n_groups=3", "--writers", "gvt",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    listed = json.loads(out)["package_warnings"]
    assert [w["file"] for w in listed] == [f"random_coverage:{s}:n_groups=3" for s in expected]
    assert all(RULE in ws for w in listed for ws in w["warnings"])
    [closing] = [x for x in err.splitlines() if "more package(s) with warnings" in x]
    more = len(expected) - cli.MAX_WARNED_FILES
    assert closing.startswith(f"memaudit: ... and {more} more package(s)"), closing
    assert "validate FILE" not in closing and "memaudit generate" in closing, closing


def test_sweep_suite_on_warnings_label_has_the_params() -> None:
    [seed] = no_fit_seeds(range(1, 2), at_default_grid=True)
    said: list[tuple[str, list[str]]] = []
    sweep_suite(
        families=[f"random_coverage:{seed}"],
        params={"n_groups": "3"},
        writers=["gvt"],
        on_warnings=lambda label, ws: said.append((label, list(ws))),
    )
    assert [label for label, _ in said] == [f"random_coverage:{seed}:n_groups=3"]


# --------------------------------------------------------------------------- 4: one printer


def test_validate_escapes_control_characters_in_warnings(tmp_path: Path) -> None:
    path, _, _ = small_package(tmp_path, cost_unit="u\x1b[31m")
    code, _, err = run_cli("validate", str(path))
    assert code == 0, err
    assert "\x1b" not in err
    assert "u\\x1b[31m" in err


def test_score_external_caps_the_exports_warnings(tmp_path: Path) -> None:
    doc = json.loads(MEM0.read_text(encoding="utf-8"))
    first = doc["results"][0]
    n = cli.MAX_WARNINGS_PER_FILE + 5
    doc["results"] = [
        {**copy.deepcopy(first), "id": f"m{i}", "hash": f"h{i}", "created_at": "garbage",
         "updated_at": None}
        for i in range(n)
    ]  # fmt: skip
    export = tmp_path / "many.json"
    export.write_text(json.dumps(doc), encoding="utf-8")
    code, out, err = run_cli(
        "score", str(SMALL), "--external", str(export), "--format", "mem0", "--budget", "10",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    listed = json.loads(out)["external_store"]["warnings"]
    assert sum("unreadable time" in w for w in listed) == n  # --json lists them all
    shown = [x for x in err.splitlines() if x.startswith(f"{export}: warning: ")]
    assert len(shown) == cli.MAX_WARNINGS_PER_FILE, err
    more = len(listed) - cli.MAX_WARNINGS_PER_FILE
    assert f"{export}: ... {more} more warning(s) (--json lists them all)" in err


# --------------------------------------------------------------------------- 5: UsageError


def test_library_argument_mistakes_are_usage_errors() -> None:
    pkg = load_package(DEMO)
    small = load_package(SMALL)
    with pytest.raises(UsageError, match="on_warnings"):
        sweep_suite(families=["update_chain"], writers=["gvt"], on_warnings=5)
    with pytest.raises(UsageError, match="no budgets"):
        union_curve(pkg, budgets=[])
    with pytest.raises(UsageError, match="empty"):
        budget_curve(small, [], ["gvt"])
    with pytest.raises(UsageError, match="no budgets"):
        sweep([small], [], ["gvt"])
    with pytest.raises(UsageError, match="no budgets"):
        audit(families=["update_chain"], budgets=[])
    with pytest.raises(UsageError, match="list of budgets"):
        union_curve(pkg, budgets="36")


# --------------------------------------------------------------------------- 6: compatibility


def test_union_curve_from_rows_alone() -> None:
    curve = union_curve(load_package(DEMO), budgets=[10])
    bare = UnionCurve(curve.rows)
    assert bare == tuple(curve.rows) and len(bare) == len(curve.rows) > 0
    assert (bare.package_id, bare.content_hash, bare.cost_unit) == (None, None, None)
    assert bare.keep == "recency" and bare.notes == ()
    assert UnionCurve(curve.rows, ["a note"]).notes == ("a note",)
    data = json.loads(json.dumps(bare.to_dict()))
    assert data["package_id"] is None and data["keep"] == "recency"
    assert len(data["rows"]) == len(curve.rows)
    with pytest.raises(ResultError) as info:
        read_result(data)
    assert info.value.path == "$.package_id" and info.value.rule == "not-null"
    assert "UnionCurve(rows)" in str(info.value)
    # The curve union_curve() returns still reads back equal.
    assert read_result(json.loads(json.dumps(curve.to_dict()))) == curve


def test_overrun_note_keeps_its_old_call() -> None:
    def share() -> TimeShare:
        return TimeShare(1.0, 2, clock=iter([0.0, 10.0, 10.0]).__next__)

    assert share().overrun_note("The run", "; it took long") == (
        "The run shared a total of 1 s; it took long."
    )
    # The old wording (writers named), as before ``writers`` was asked.
    old = (
        "The run shared a total of 1 s; it took 10.0 s in all, as its writers and the least "
        "each of its 0 solves needs are not interrupted."
    )
    assert share().overrun_note("The run") == old
