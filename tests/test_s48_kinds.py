"""QA s48 (library report, findings 4 and 5).

4. ``ma.sweep``'s result had no ``method_kinds``: ``memaudit show`` of its saved file printed
   its writers without ``(oracle)`` / ``(blind)``, which the CLI sweep's file has.
5. A writer that failed on some packages at a budget had a summary line averaged over the
   others, beside lines over every package, with no flag in the terminal, ``show`` or
   report.md.
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
SMALL = SAMPLES / "memaudit-small-s0.json"
BLIND = "plugin_fixtures.fixture_writers:unnamed"
HALF = "s48_half"  # fails on update_chain only


def _half(inst, budget):
    # An oracle writer that fails on one of the two packages: its line averages the other.
    if inst.package_id == "update_chain":
        raise RuntimeError("s48: fails on update_chain")
    return []


@pytest.fixture
def half():
    ma.register_writer(ma.WriterInfo(HALF, "QA s48", "oracle", _half), replace=True)
    yield HALF
    ma.unregister_writer(HALF)


def _line(text: str, method: str, budget: str) -> str:
    """The summary table's line of ``method`` (with its kind) at ``budget``."""
    return next(ln for ln in text.splitlines() if ln.split()[:3] == [*method.split(), budget])


# ------------------------------------------------------------------ 4: library method kinds


def test_library_sweep_saves_method_kinds_and_show_labels_them(tmp_path):
    pkg = ma.load_package(UPDATE_CHAIN)
    res = ma.sweep([pkg], [3, 6], ["gvt", BLIND], ablations=["no_validity_opt"])
    saved = res.to_dict()
    # gvt is an oracle reference writer, the fixture a plain (blind) view function.
    assert saved["method_kinds"] == {
        "gvt": "oracle",
        BLIND: "blind",
        "no_validity_opt": "ablation",
    }
    assert ma.read_result(json.loads(json.dumps(saved))) == res
    path = tmp_path / "lib_sweep.json"
    path.write_text(json.dumps(saved))
    rc, out, err = run_cli("show", str(path))
    assert rc == 0, err
    assert _line(out, "gvt (oracle)", "3")
    assert _line(out, f"{BLIND} (blind)", "6")
    assert _line(out, "no_validity_opt (ablation)", "6")


def test_library_sweep_kinds_match_the_cli_sweep_file(tmp_path):
    pkg = ma.load_package(UPDATE_CHAIN)
    lib = ma.sweep([pkg], [4], ["gvt", "density"]).to_dict()
    rc, out, err = run_cli(
        "sweep", str(UPDATE_CHAIN), "--budgets", "4", "--writers", "gvt,density", "--json"
    )
    assert rc == 0, err
    assert (
        lib["method_kinds"]
        == json.loads(out)["method_kinds"]
        == {
            "gvt": "oracle",
            "density": "oracle",
        }
    )


def test_library_sweep_saved_before_kinds_reads_and_a_wrong_kind_is_refused(tmp_path):
    saved = ma.sweep([ma.load_package(UPDATE_CHAIN)], [3], ["gvt"]).to_dict()
    old = {k: v for k, v in saved.items() if k != "method_kinds"}
    assert ma.read_result(old).method_kinds == ()
    with pytest.raises(ResultError) as exc:
        ma.read_result({**saved, "method_kinds": {"gvt": "blind"}})
    assert str(exc.value).startswith("$.method_kinds.gvt:")
    with pytest.raises(ResultError) as exc:
        ma.read_result({**saved, "method_kinds": {"gvt": "weird"}})
    assert "[rule: allowed-value]" in str(exc.value)


# ------------------------------------------------------- 5: a mean over fewer packages, flagged


def test_sweep_flags_a_line_averaged_over_fewer_packages(half, tmp_path):
    rc, out, _ = run_cli(
        "sweep", str(UPDATE_CHAIN), str(SMALL), "--budgets", "6", "--writers", f"gvt,{HALF}"
    )
    assert rc == 2  # a failing writer is a user error; the table is still printed
    flagged = _line(out, f"{HALF} (oracle)", "6")
    assert flagged.split()[4] == "1"  # n: the one package where it did not fail
    assert flagged.split()[5] == "0.000†"  # its empty store scores 0 there
    assert "†" not in _line(out, "gvt (oracle)", "6")
    assert (
        "†: 1 line(s) average fewer packages than were swept at their budget: the writer "
        "failed there on 1 package x budget cell(s) in all" in out
    )
    # Every cell failed: that line is n/a, which the n/a footnote explains already.
    rc, out, _ = run_cli("sweep", str(UPDATE_CHAIN), "--budgets", "6", "--writers", f"gvt,{HALF}")
    assert rc == 2
    assert _line(out, f"{HALF} (oracle)", "6").split()[5] == "n/a"
    assert "†" not in out


def test_show_of_a_library_sweep_flags_the_line(half, tmp_path):
    res = ma.sweep([ma.load_package(UPDATE_CHAIN), ma.load_package(SMALL)], [3, 6], ["gvt", HALF])
    assert len(res.errors) == 2  # update_chain at both budgets
    path = tmp_path / "half.json"
    path.write_text(json.dumps(res.to_dict()))
    rc, out, err = run_cli("show", str(path))
    assert rc == 0, err
    for budget in ("3", "6"):
        assert _line(out, f"{HALF} (oracle)", budget).split()[5] == "0.000†"
        assert "†" not in _line(out, "gvt (oracle)", budget)
    assert "failed there on 2 package x budget cell(s) in all" in out


def test_report_md_flags_the_line(half, tmp_path):
    out_dir = tmp_path / "out"
    rc, _, err = run_cli(
        "sweep",
        str(UPDATE_CHAIN),
        str(SMALL),
        "--budgets",
        "6",
        "--writers",
        f"gvt,{HALF}",
        "--out",
        str(out_dir),
        "--no-figures",
        "--quiet",
    )
    assert rc == 2, err
    report = (out_dir / "report.md").read_text()
    row = next(ln for ln in report.splitlines() if ln.startswith(f"| {HALF} | 6 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3:5] == ["1", "0.000†"]
    assert cells[-1] == "1"  # column failed
    assert "| gvt | 6 | words | 2 | 1.000 |" in report
    assert "†: 1 line(s) average fewer packages" in report
