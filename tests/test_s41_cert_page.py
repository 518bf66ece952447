"""QA s41 (docs conformance, Certification page): the subtitle said "every exact engine, run
cold at every budget, cross-checked" while the body said "Budgets are certified by
branch-and-bound alone" on a log1p package. Enumeration is an exact engine the rest of the app
uses (the Overview's "enum = 5.382974, bnb = 5.382974"), but the certification report never ran
it, so nothing on a log1p package was cross-checked.

Fixed: :func:`memaudit_core.curves.certification_report` runs enumeration wherever the solver's
own cross-check would (at most ``ENUM_CROSS_MAX`` stores fit the budget), and the page states
the engines that ran, from the core.

Each test fails on the code before the fix (checked against a worktree of 765324a).
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

import memaudit_core as ma
from memaudit_core import curves
from memaudit_core.errors import ResultError

ROOT = Path(__file__).resolve().parent.parent

#: OPT at budget 3 of the tiny package, by hand: e1's raw span (cost 2: u1 and u2 at 1) with
#: e2's fact (cost 1: u2 at 0.5) gives z = (1, 1.5), F = 1 ln 2 + 2 ln 2.5 = 2.5257; the other
#: stores that fit give 3 ln 2 = 2.0794 (e1 fact + e2 raw) and ln 2 + 2 ln 1.5 = 1.5041.
OPT_3 = math.log(2) + 2 * math.log(2.5)
#: At budget 4 both raw spans fit: z = (1, 2), F = ln 2 + 2 ln 3.
OPT_4 = math.log(2) + 2 * math.log(3)


def _tiny_doc(saturation: str) -> dict[str, Any]:
    """Two experiences, two units (weights 1 and 2), a raw span and a fact each."""
    coverage = {
        ("e1", "raw"): {"u1": 1.0, "u2": 1.0},
        ("e1", "fact"): {"u1": 1.0},
        ("e2", "raw"): {"u2": 1.0},
        ("e2", "fact"): {"u2": 0.5},
    }
    return {
        "memaudit": 1,
        "id": f"tiny_{saturation}",
        "cost_unit": "words",
        "objective": {"saturation": saturation},
        "budget": 3,
        "budgets": [3, 4],
        "experiences": [
            {"id": e, "time": k, "text": f"turn {k}"} for k, e in enumerate(["e1", "e2"], 1)
        ],
        "units": [
            {"id": "u1", "kind": "fact", "text": "one", "weight": 1},
            {"id": "u2", "kind": "fact", "text": "two", "weight": 2},
        ],
        "candidates": [
            {
                "id": f"{e}:{form}",
                "experience": e,
                "type": "raw_span" if form == "raw" else "atomic_fact",
                "text": "x",
                "cost": 2 if form == "raw" else 1,
                "coverage": cov,
            }
            for (e, form), cov in coverage.items()
        ],
    }


def _package(tmp_path: Path, saturation: str) -> Any:
    path = tmp_path / f"tiny_{saturation}.json"
    path.write_text(json.dumps(_tiny_doc(saturation)))
    return ma.load_package(str(path))


@pytest.fixture(scope="module")
def log1p_report(tmp_path_factory: pytest.TempPathFactory) -> curves.CertificationReport:
    pkg = _package(tmp_path_factory.mktemp("log1p"), "log1p")
    return curves.certification_report(pkg, [3, 4], time_limit=10)


def test_log1p_report_cross_checks_enum_and_bnb(log1p_report: curves.CertificationReport) -> None:
    rep = log1p_report
    assert rep.engines == ("bnb", "milp", "enum")
    for row, opt in zip(rep.rows, (OPT_3, OPT_4), strict=True):
        bnb, enum, milp = row.run("bnb"), row.run("enum"), row.run("milp")
        assert bnb.certified and enum.certified
        assert bnb.value == pytest.approx(opt, rel=1e-12)
        assert enum.value == pytest.approx(opt, rel=1e-12)
        assert not milp.applicable and milp.note == curves.MILP_NA
        assert row.certified and row.message == "cross-checked: bnb = enum (proven optimal)"


def test_log1p_report_says_which_engines_ran(log1p_report: curves.CertificationReport) -> None:
    rep = log1p_report
    assert rep.verdict_name == "cross-checked"
    text = (
        "branch-and-bound and enumeration, each run cold at every budget, cross-checked; "
        "HiGHS MILP n/a (MILP covers cap1 and linear)"
    )
    assert rep.engines_text() == text
    level, messages = rep.banner()
    assert level == "success"
    assert messages == (
        "All 2 budgets cross-checked: branch-and-bound and enumeration proved the same optimum "
        "at every budget (identical values); F was recomputed on every returned store.",
    )


def test_log1p_report_reads_back(log1p_report: curves.CertificationReport) -> None:
    back = ma.read_result(json.loads(json.dumps(log1p_report.to_dict())))
    assert back.engines_text() == log1p_report.engines_text()
    assert [r.run("enum").value for r in back.rows] == pytest.approx([OPT_3, OPT_4], rel=1e-12)


def _refused(data: dict[str, Any]) -> ResultError:
    with pytest.raises(ResultError) as info:
        ma.read_result(data)
    assert info.value.rule == "inconsistent"
    return info.value


def test_run_marked_not_applicable_with_a_value_is_refused(
    log1p_report: curves.CertificationReport,
) -> None:
    """An n/a MILP run edited to carry a certified optimum would read back as a second engine."""
    d = copy.deepcopy(log1p_report.to_dict())
    run = d["rows"][0]["runs"][1]
    assert run["engine"] == "milp"
    run.update(value=OPT_3, recomputed=OPT_3, bound=OPT_3, gap=0.0)
    err = _refused(d)
    assert err.path == "$.rows[0].runs[1].value"


def test_run_of_an_engine_the_report_does_not_list_is_refused(tmp_path: Path) -> None:
    """Which engines ran is now stated from the runs: a run of an unlisted engine is refused."""
    rep = curves.certification_report(_package(tmp_path, "log1p"), [3], engines=("bnb", "enum"))
    d = copy.deepcopy(rep.to_dict())
    d["engines"] = ["bnb"]
    err = _refused(d)
    assert err.path == "$.rows[0].runs[1].engine"


def test_enum_is_left_out_where_too_many_stores_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The limit of the solver's own enumeration cross-check decides where enumeration runs
    (lowered here so update_chain passes it at budget 3 only)."""
    from memaudit_core.generators import generate

    pkg = generate("update_chain")
    monkeypatch.setattr(curves, "ENUM_CROSS_MAX", 100)
    plan = curves.certification_plan(pkg, [3, 13])
    # update_chain: 28 stores fit at budget 3 and 788 at 13 (combination_count).
    assert plan == ((3.0, ("bnb", "milp", "enum")), (13.0, ("bnb", "milp")))
    assert curves.engines_text(plan, curves.CERT_ENGINES) == (
        "branch-and-bound, HiGHS MILP and enumeration at budget 3; branch-and-bound and HiGHS "
        "MILP at budget 13; each run cold, cross-checked"
    )


# ------------------------------------------------------------------ the page


def _subtitle(tmp_path: Path, saturation: str) -> tuple[AppTest, str]:
    from memaudit_ui import sources

    key, _ = sources.register_upload(
        f"tiny_{saturation}.json", json.dumps(_tiny_doc(saturation)).encode()
    )
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params["package"] = key
    at.run()
    at.switch_page("pages/6_Certification.py").run()
    assert not at.exception
    head = [m.value for m in at.markdown if f"`tiny_{saturation}`" in m.value]
    assert len(head) == 1
    # As shown: the page escapes Markdown ("branch\\-and\\-bound" renders "branch-and-bound").
    return at, head[0].replace("\\", "")


def test_page_subtitle_for_a_log1p_package(tmp_path: Path) -> None:
    at, head = _subtitle(tmp_path, "log1p")
    assert head.endswith(
        "saturation `log1p` · branch-and-bound and enumeration, each run cold at every budget, "
        "cross-checked; HiGHS MILP n/a (MILP covers cap1 and linear)"
    )
    infos = [i.value.replace("\\", "") for i in at.info]
    assert not any("branch-and-bound alone" in i for i in infos)
    # The subtitle says which engines ran: no box repeats it (QA s41 round 2).
    assert not any(i.startswith("Engines:") for i in infos)


def test_page_subtitle_for_a_cap1_package(tmp_path: Path) -> None:
    at, head = _subtitle(tmp_path, "cap1")
    assert head.endswith(
        "saturation `cap1` · branch-and-bound, HiGHS MILP and enumeration, each run cold at "
        "every budget, cross-checked"
    )
    assert not any(i.value.startswith("Engines:") for i in at.info)
