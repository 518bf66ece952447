"""QA s49 (area clifam): generator refusals that named no option and no rule, an audit FAIL
headed "max difference 0", and a ``--param`` help silent on several ``--family``.

1. ``generate memaudit-small --seed -1`` said "seed must be an integer >= 0, got -1" (no
   ``--seed``, no rule, where ``--seed abc`` says both); ``--family memaudit-small:-1`` the
   same (no ``--family``); ``--param length=0`` "update_chain: length must be an integer >= 1
   (got 0)"; random_coverage's "need 1 <= min_cover <= max_cover" showed no values.
2. An audit whose engines reported values their stores do not have failed with "max difference
   0 (relative 0)" as its only figure.
3. ``sweep --help`` did not say that a ``--param`` applies to every ``--family``.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from app_utils import open_app
from cli_utils import run_cli

from memaudit_core import solvers
from memaudit_core.errors import MemAuditError, UsageError
from memaudit_core.generators import check_seed, generate
from memaudit_core.results import read_result

UPDATE_CHAIN = str(Path(__file__).resolve().parent.parent / "sample_packages" / "update_chain.json")
SWEEP = ("--budgets", "6", "--writers", "gvt")


# --------------------------------------------------------------------------- 1: seeds


def test_a_negative_seed_names_seed_quotes_the_text_and_a_rule():
    rc, _out, err = run_cli("generate", "memaudit-small", "--seed", "-1")
    assert rc == 2
    assert "argument --seed: seed must be an integer >= 0, got '-1' [rule: seed]" in err, err


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (("--family", "memaudit-small:-1"), "--family memaudit-small:-1: "),
        (("--family", "memaudit-small:0,-2"), "--family memaudit-small:0,-2: "),
        (("--family", "memaudit-small", "--seeds", "3,-2"), "--seeds: "),
    ],
)
def test_a_negative_seed_in_a_sweep_names_its_option(flags, named):
    rc, _out, err = run_cli("sweep", *flags, *SWEEP)
    quoted = "'-1'" if "-1" in " ".join(flags) else "'-2'"
    assert rc == 2
    assert f"{named}seed must be an integer >= 0, got {quoted} [rule: seed]" in err, err


def test_the_library_seed_refusal_carries_the_rule():
    with pytest.raises(UsageError) as info:
        check_seed(-1)
    assert str(info.value) == "seed must be an integer >= 0, got -1 [rule: seed]"


# --------------------------------------------------------------------------- 1: --param


@pytest.mark.parametrize(
    ("params", "prefix", "rest"),
    [
        (
            ["length=0"],
            "--param 'length=0': ",
            "update_chain: length must be an integer >= 1, got 0 [rule: count-range]",
        ),
    ],
)
@pytest.mark.parametrize("command", ["generate", "sweep", "audit"])
def test_a_refused_param_names_the_param_option(command, params, prefix, rest):
    flags = [x for p in params for x in ("--param", p)]
    if command == "generate":
        argv = ["generate", "update_chain", *flags]
    elif command == "sweep":
        argv = ["sweep", "--family", "update_chain", *flags, *SWEEP]
    else:
        argv = ["audit", "--family", "update_chain", *flags, "--budgets", "6", "--quiet"]
    rc, _out, err = run_cli(*argv)
    assert rc == 2
    assert f"memaudit {command}: error: {prefix}{rest}" in err, err


@pytest.mark.parametrize(
    ("family", "params", "expected"),
    [
        (
            "memaudit-small",
            ["normal_count=0", "update_count=0"],
            "--param 'normal_count=0', --param 'update_count=0': memaudit-small: normal_count + "
            "update_count must be at least 1, got normal_count=0, update_count=0 "
            "[rule: count-range]",
        ),
        (
            "random_coverage",
            ["min_cover=5", "max_cover=3"],
            "--param 'min_cover=5', --param 'max_cover=3': random_coverage: need 1 <= min_cover "
            "<= max_cover, got min_cover=5, max_cover=3 [rule: cover-range]",
        ),
        (
            # The default max_cover is not typed, so not named as an option.
            "random_coverage",
            ["min_cover=13"],
            "--param 'min_cover=13': random_coverage: need 1 <= min_cover <= max_cover, got "
            "min_cover=13, max_cover=12 [rule: cover-range]",
        ),
        (
            "event_graph",
            ["update_rate=1.5"],
            "--param 'update_rate=1.5': event_graph: update_rate must be a number in [0, 1], "
            "got 1.5 [rule: rate-range]",
        ),
        (
            "event_graph",
            ["n_entities=-1"],
            "--param 'n_entities=-1': event_graph: n_entities must be an integer from 0 "
            "(automatic) to ",
        ),
        (
            "temporal_interval",
            ["intervals=2", "closures=5"],
            "--param 'closures=5', --param 'intervals=2': temporal_interval: closures (5) must "
            "not exceed intervals (2): closure j closes interval j [rule: count-range]",
        ),
        (
            "density_trap",
            ["n_experiences=0"],
            "--param 'n_experiences=0': density_trap: n_experiences must be an integer >= 1, "
            "got 0 [rule: count-range]",
        ),
        (
            "update_chain",
            ["length=x"],
            "--param 'length=x': parameter 'length' must be an integer",
        ),
    ],
)
def test_generate_names_every_param_option_refused(family, params, expected):
    flags = [x for p in params for x in ("--param", p)]
    rc, _out, err = run_cli("generate", family, *flags)
    assert rc == 2
    assert f"memaudit generate: error: {expected}" in err, err
    assert "[rule: " in err, err


def test_a_refused_param_is_a_usage_error_under_json():
    rc, out, _err = run_cli("generate", "update_chain", "--param", "length=0", "--json")
    assert rc == 2
    error = json.loads(out)["error"]
    assert error == {
        "type": "UsageError",
        "message": "--param 'length=0': update_chain: length must be an integer >= 1, got 0 "
        "[rule: count-range]",
    }


@pytest.mark.parametrize(
    ("family", "params", "names", "rule"),
    [
        ("update_chain", {"length": 0}, ("length",), "count-range"),
        ("memaudit-small", {"normal_count": -1}, ("normal_count",), "count-range"),
        ("temporal_interval", {"intervals": 0}, ("intervals",), "count-range"),
        ("scope_shift", {"n_scopes": 0}, ("n_scopes",), "count-range"),
        ("random_coverage", {"n_groups": 0}, ("n_groups",), "count-range"),
        ("random_coverage", {"min_cover": 4, "max_cover": 2}, ("min_cover", "max_cover"), None),
        ("event_graph", {"n_experiences": 0}, ("n_experiences",), "count-range"),
        ("event_graph", {"distractor_rate": 1}, ("distractor_rate",), "rate-range"),
        ("event_graph", {"candidate_types": "lorem"}, ("candidate_types",), "candidate-types"),
        ("event_graph", {"cost_rule": "tokens"}, ("cost_rule",), "cost-rule"),
    ],
)
def test_the_library_names_the_family_the_params_and_a_rule(family, params, names, rule):
    with pytest.raises(UsageError) as info:
        generate(family, **params)
    message = str(info.value)
    assert message.startswith(f"{family}: "), message
    assert all(name in message for name in names), message
    assert message.endswith(f"[rule: {rule or 'cover-range'}]"), message
    assert set(info.value.params) >= set(names)  # what the CLI names its --param options by


# --------------------------------------------------------------------------- 1: the app


def test_the_generator_page_shows_the_rule_of_a_refused_parameter():
    at = open_app("pages/7_Generator.py", package="gen:memaudit-small:0")
    assert not at.exception, [e.value for e in at.exception]
    for name in ("normal_count", "update_count"):
        at.text_input(key=f"gen_memaudit-small_{name}").set_value("0")
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value.replace("\\", "") for e in at.error]
    assert errors == [
        "These parameters do not make a package: memaudit-small: normal_count + update_count "
        "must be at least 1, got normal_count=0, update_count=0 [rule: count-range]"
    ], errors


def test_the_generator_page_shows_the_seed_rule():
    at = open_app("pages/7_Generator.py", package="gen:memaudit-small:0")
    at.number_input(key="gen_memaudit-small_seed").set_value(-1.0)
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value.replace("\\", "") for e in at.error]
    assert errors == ["No preview: Seed: seed must be an integer >= 0, got -1 [rule: seed]"], errors


# --------------------------------------------------------------------------- 2: audit header

#: What the wrapped bnb adds to each value it reports (its stores are left as they are).
OVER = 1.25


@pytest.fixture
def bnb_over_reports(monkeypatch):
    real = solvers.run_engine

    def run_engine(name, inst, budget, **kw):
        raw, secs = real(name, inst, budget, **kw)
        if name == "bnb":
            raw = dataclasses.replace(raw, value=raw.value + OVER, bound=raw.bound + OVER)
        return raw, secs

    monkeypatch.setattr(solvers, "run_engine", run_engine)


def test_an_audit_fail_from_reported_values_says_the_gap(bnb_over_reports, tmp_path):
    rc, out, _err = run_cli("audit", UPDATE_CHAIN, "--budgets", "3,6", "--quiet")
    assert rc == 1
    lines = out.splitlines()
    assert lines[0].startswith("FAIL: 0 of 2 checks"), out
    # The engines' stores agree (0), and what failed the checks is said beside it.
    assert lines[2] == (
        "max difference 0 (relative 0) between the engines' stores; an engine's reported value "
        "is off its store's F by up to 1.25"
    ), out
    saved = tmp_path / "audit.json"
    rc, out_json, _err = run_cli("audit", UPDATE_CHAIN, "--budgets", "3,6", "--quiet", "--json")
    saved.write_text(out_json)
    rep = read_result(str(saved))
    assert rep.max_report_gap == pytest.approx(OVER, rel=1e-9)
    rc, shown, _err = run_cli("show", str(saved))
    assert shown.splitlines()[2] == lines[2], shown
    out_dir = tmp_path / "out"
    rc, _out, _err = run_cli(
        "audit", UPDATE_CHAIN, "--budgets", "3,6", "--quiet", "--out", str(out_dir), "--no-figures"
    )
    assert rc == 1
    report_md = (out_dir / "report.md").read_text()
    assert "- largest gap between an engine's reported value and its store's F: 1.25" in report_md


def test_a_passing_audit_header_is_unchanged():
    rc, out, _err = run_cli("audit", UPDATE_CHAIN, "--budgets", "3,6", "--quiet")
    assert rc == 0
    assert out.splitlines()[2] == "max difference 0 (relative 0)", out


# --------------------------------------------------------------------------- 3: --param help


@pytest.mark.parametrize("command", ["sweep", "audit"])
def test_param_help_says_it_applies_to_every_family(command):
    rc, out, _err = run_cli(command, "--help")
    assert rc == 0
    help_text = " ".join(out.split())
    assert "--param KEY=VALUE a --family parameter, applied to every --family given" in help_text


def test_a_param_one_family_lacks_is_still_refused():
    rc, _out, err = run_cli(
        "sweep",
        "--family",
        "update_chain",
        "--family",
        "memaudit-small",
        "--param",
        "length=5",
        *SWEEP,
    )
    assert rc == 2
    assert "family 'memaudit-small' has no parameter 'length'" in err, err


def test_param_error_pickles_with_its_params():
    import pickle

    try:
        generate("update_chain", length=0)
    except MemAuditError as exc:
        back = pickle.loads(pickle.dumps(exc))
    assert (type(back).__name__, str(back), back.params) == (
        "ParamError",
        "update_chain: length must be an integer >= 1, got 0 [rule: count-range]",
        ("length",),
    )
