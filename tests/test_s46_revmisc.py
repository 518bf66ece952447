"""QA s46 review (revmisc): four gaps between the CLI, the app and the registries.

(a) ``memaudit show`` of a family band over fewer than 10 seeds printed its CIs as n/a with no
    reason, where the app's caption gives one.
(b) The ``budget-above-total`` warning was said by ``sweep FILE --budgets`` alone: ``--out``,
    ``--family`` and ``audit`` swept budgets above every candidate's total without a word.
(c) The Certification page's audit offered its rows as CSV only, which ``show`` cannot read.
(d) The reserved colour slots were a list of seven writer names: a new reference writer was
    styled as a store is, by its place among the page's choices.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from app_utils import capture_downloads, offered_text, open_linked
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core.audit import AuditReport
from memaudit_core.curves import family_band
from memaudit_core.generators import generate
from memaudit_core.package import dumps_package
from memaudit_core.writers import BUILTIN_WRITERS, WriterInfo
from memaudit_ui.figures import EXTRA_PALETTE, METHOD_PALETTE, _slot_style, style_slots

ROOT = Path(__file__).resolve().parent.parent
UPDATE_CHAIN = ROOT / "sample_packages" / "update_chain.json"
RULE = "(rule: budget-above-total)"


def _total_cost(doc: dict[str, Any]) -> float:
    """A package's total candidate cost from its JSON, summed here."""
    return sum(float(c["cost"]) for c in doc["candidates"])


def _above(source: str, err: str) -> list[str]:
    return [
        line
        for line in err.splitlines()
        if line.startswith(f"{source}: warning: ") and line.endswith(RULE)
    ]


# ----------------------------------------------------------------------------- (a)


def test_show_says_why_a_small_band_has_no_interval(tmp_path) -> None:
    band = family_band("memaudit-small", [0, 1], None, [4.0, 8.0], ["writer:gvt"])
    path = tmp_path / "band.json"
    path.write_text(json.dumps(band.to_dict()))
    rc, out, err = run_cli("show", str(path))
    assert rc == 0, err
    assert "CI 2.5%" in out and " n/a " in out
    assert (
        "note: no interval with fewer than 10 seeds: over so few the bootstrap gives about "
        "their range, not a 95% interval"
    ) in out


# ----------------------------------------------------------------------------- (b)


@pytest.fixture(scope="module")
def chain_total() -> float:
    total = _total_cost(json.loads(UPDATE_CHAIN.read_text()))
    assert total == 51.0
    return total


def test_sweep_out_says_budgets_above_total(tmp_path, chain_total) -> None:
    rc, out, err = run_cli(
        "sweep", str(UPDATE_CHAIN), "--budgets", "6,1e308", "--out", str(tmp_path / "o"),
        "--no-figures", "--json",
    )  # fmt: skip
    assert rc == 0, err
    said = _above(str(UPDATE_CHAIN), err)
    assert said == [
        f"{UPDATE_CHAIN}: warning: 1 of the 2 budgets (1e+308) is above the package's total "
        f"candidate cost ({chain_total:g} words): every candidate fits there, so its point "
        f"equals the one at B = {chain_total:g} {RULE}"
    ]
    listed = json.loads(out)["package_warnings"]
    assert [e["file"] for e in listed] == [str(UPDATE_CHAIN)]
    assert [w for w in listed[0]["warnings"] if w.endswith(RULE)] == [said[0].split(": ", 2)[2]]


def test_family_sweep_says_it_once_per_generated_package() -> None:
    rc, _, err = run_cli(
        "sweep", "--family", "memaudit-small", "--seeds", "0-1", "--budgets", "6,1e308",
        "--writers", "gvt",
    )  # fmt: skip
    assert rc == 0, err
    for seed in (0, 1):
        total = _total_cost(json.loads(dumps_package(generate("memaudit-small", seed=seed))))
        said = _above(f"memaudit-small:{seed}", err)
        assert len(said) == 1, err
        assert f"total candidate cost ({total:g} words)" in said[0]


def test_family_sweep_caps_the_packages_said() -> None:
    rc, _, err = run_cli(
        "sweep", "--family", "memaudit-small", "--seeds", "0-6", "--budgets", "1e308",
        "--writers", "gvt",
    )  # fmt: skip
    assert rc == 0, err
    said = [line for line in err.splitlines() if line.endswith(RULE)]
    # The CLI's cap: five packages' warnings, then how many more (cli.MAX_WARNED_FILES).
    assert len(said) == 5
    assert "... and 2 more package(s) with warnings" in err
    assert all("the budget 1e+308 is above" in line for line in said)


def test_audit_says_budgets_above_total(chain_total) -> None:
    rc, out, err = run_cli("audit", str(UPDATE_CHAIN), "--budgets", "6,1e9", "--json")
    assert rc == 0, err
    said = _above(str(UPDATE_CHAIN), err)
    assert len(said) == 1
    assert "1 of the 2 budgets (1000000000) is above" in said[0]
    assert f"total candidate cost ({chain_total:g} words)" in said[0]
    listed = json.loads(out)["package_warnings"]
    assert any(w.endswith(RULE) for e in listed for w in e["warnings"])


def test_budgets_within_total_say_nothing(chain_total) -> None:
    rc, _, err = run_cli("audit", str(UPDATE_CHAIN), "--budgets", f"6,{chain_total:g}")
    assert rc == 0, err
    assert RULE not in err


# ----------------------------------------------------------------------------- (c)


def test_certification_audit_offers_json_that_show_reads(monkeypatch, tmp_path) -> None:
    offered = capture_downloads(monkeypatch)
    at = open_linked("pages/6_Certification.py", "sample:update_chain")
    at.button(key="cert_audit_run").click().run()
    assert not at.exception and not at.error
    offer = offered["cert_audit_json"]
    assert offer["mime"] == "application/json"
    assert offer["file_name"] == "update_chain-audit.json"
    path = tmp_path / offer["file_name"]
    path.write_text(offered_text(offer))
    rc, out, err = run_cli("show", str(path))
    assert rc == 0, err
    got = ma.read_result(path)
    assert isinstance(got, AuditReport)
    metrics = {m.label: m.value for m in at.metric}
    # update_chain alone (seed-invariant), at its grid 3, 6, 13, once per pool chosen.
    pools = {r.pool for r in got.rows}
    assert pools
    assert {r.budget for r in got.rows} == {3.0, 6.0, 13.0}
    assert got.n_tasks == 3 * len(pools) == int(metrics["Checks"])
    assert got.n_agree == int(metrics["Agree"])


# ----------------------------------------------------------------------------- (d)


def test_reference_writers_keep_todays_colours() -> None:
    names = ["gvt", "density", "greedy", "fact_only", "summary_only", "recency_raw"]
    names.append("no_validity_gvt")
    slots = style_slots([f"writer:{n}" for n in names], order=["store:s1"])
    # The colours chosen in QA s50 (gvt's ochre and recency_raw's olive were 24 apart; the
    # CLI report now draws these too).
    assert [_slot_style(slots[f"writer:{n}"])[0] for n in names] == [
        "#dd7711", "#11aa66", "#ee44cc", "#ee0044", "#5566ee", "#445500", "#882244",
    ]  # fmt: skip


def _fake_writer(name: str) -> WriterInfo:
    return WriterInfo(name, "a test's reference writer", "oracle", lambda inst, budget: [])


def test_a_new_reference_writer_gets_its_own_slot(monkeypatch) -> None:
    monkeypatch.setitem(BUILTIN_WRITERS, "zz_ref", _fake_writer("zz_ref"))
    keys = ["store:s1", "writer:zz_ref"]
    # Its slot is the eighth palette colour, whatever the page chose before it.
    for order in (["store:s1", "writer:zz_ref"], ["writer:zz_ref"], []):
        slots = style_slots(keys, order=order)
        assert slots["writer:zz_ref"] == 7
        assert _slot_style(slots["writer:zz_ref"])[0] == METHOD_PALETTE[7] == "#3388bb"
        assert _slot_style(slots["store:s1"])[0] == EXTRA_PALETTE[0] == "#ee4488"


def test_writers_past_the_palette_never_share_a_stores_style(monkeypatch) -> None:
    for name in ("zz_ref", "zz_ref2"):
        monkeypatch.setitem(BUILTIN_WRITERS, name, _fake_writer(name))
    keys = ["store:s1", "writer:plug", "writer:zz_ref", "writer:zz_ref2", "writer:gvt"]
    slots = style_slots(keys, order=["store:s1", "writer:plug"])
    styles = [_slot_style(slots[k]) for k in keys]
    assert len(set(styles)) == len(keys), styles
    # The ninth reference writer takes the first slot past the palette; the store and the
    # plugin the two after it.
    assert (slots["writer:zz_ref2"], slots["store:s1"], slots["writer:plug"]) == (8, 9, 10)
