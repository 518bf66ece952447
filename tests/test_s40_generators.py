"""QA s40, package generation: random_coverage's cost rounding, seed-invariant families
recorded under any seed, and loose number parsing of --param, --seed and gen: links."""

from __future__ import annotations

import hashlib
import json

import pytest
from app_utils import open_app
from cli_utils import run_cli

from memaudit_core.errors import MemAuditError
from memaudit_core.generators import generate
from memaudit_core.package import dumps_package, load_package
from memaudit_core.specs import parse_seeds

# --------------------------------------------------------------------------- defect 1


@pytest.mark.parametrize(
    ("low", "high"),
    [(0.00001, 0.00004), (0.00001, 0.001), (1.00001, 1.00004), (0.00016, 0.00024)],
)
def test_random_coverage_costs_stay_inside_a_fine_range(low, high):
    # Costs were rounded to 4 decimals: 0 (an invalid package blamed on its candidates),
    # all 1 for [1.00001, 1.00004], all 0.0002 for [0.00016, 0.00024].
    pkg = generate("random_coverage", n_groups=3, cost_low=low, cost_high=high)
    costs = [c.cost for c in pkg.candidates]
    assert len(costs) == 12
    assert all(low <= cost <= high and cost > 0 for cost in costs), costs
    assert len(set(costs)) == 12, costs  # drawn, not collapsed onto one rounded value
    assert pkg.budget > 0 and all(b > 0 for b in pkg.budgets), (pkg.budget, pkg.budgets)


def test_generate_cli_writes_the_tiny_cost_package_of_the_qa_report(tmp_path):
    out = tmp_path / "rc.json"
    argv = ["generate", "random_coverage", "--param", "cost_low=0.00001"]
    argv += ["--param", "cost_high=0.00004", "--param", "n_groups=3", "-o", str(out)]
    code, _, err = run_cli(*argv)
    assert code == 0, err
    costs = [c["cost"] for c in json.loads(out.read_text())["candidates"]]
    assert min(costs) >= 0.00001 and max(costs) <= 0.00004, costs


def test_random_coverage_states_its_real_lower_cost_limit():
    # A subnormal range passed "0 < cost_low" and failed as an invalid package.
    with pytest.raises(MemAuditError) as info:
        generate("random_coverage", n_groups=3, cost_low=1e-310, cost_high=1e-309)
    message = str(info.value)
    assert "need 1e-100 <= cost_low <= cost_high <= 1e+12" in message, message
    assert "cost_low=1e-310" in message and "[rule: cost-range]" in message, message


#: SHA-256 of ``dumps_package(generate("random_coverage", seed=SEED, **PARAMS))``, captured
#: from the base commit 8ca4966 (before the QA s40 fix) in a worktree of that commit, with
#: PYTHONPATH on it: a script looping over these cases and printing hashlib.sha256 of the text.
BASE_DIGESTS = [
    ({}, 0, "e6fde6d5d16037197a4cfc17185aecd5d51d5cde215d12a1c5312b5d5f7a04c4"),
    ({}, 1, "13243bfa0095b152f3b0d234ba853cc585af0e06ad9b5519d167a7255eded85d"),
    ({}, 7, "94eab2a9e610f3a05996d7087229a783ac1e19279529aec3cb08394dc16941a1"),
    (
        {"n_groups": 200, "budget_fraction": 0.05},
        0,
        "e446e90b08894e5c6f5846345b6c856d495468cc98a18396007da8f40972232f",
    ),
    (
        {"n_groups": 200, "budget_fraction": 0.1},
        1,
        "33ab94573f51538421e0de013cc1254ccefaf68f24c5eb3f8d717263f878d0db",
    ),
    ({"n_groups": 100}, 0, "99340703d99c8fe84f67e71f47d25b4835a568bd340629c45f7fdf5088ac3117"),
    (
        {"n_groups": 12, "integer_costs": True},
        2,
        "7af042518f6fd4a0f93174c3c5e566d76318b04cdf623803f04cd88e6547d1ed",
    ),
    (
        {"n_groups": 5, "cost_low": 0.5, "cost_high": 2.0},
        3,
        "ba4971237e89c9955a7f60ebd25de4172d4369b52e4edc3f2fe315acc1736bc9",
    ),
]


@pytest.mark.parametrize(("params", "seed", "digest"), BASE_DIGESTS)
def test_random_coverage_packages_of_ordinary_ranges_are_byte_identical(params, seed, digest):
    """Regression guard (passes before the fix too): default ranges (bench targets 2 and 3,
    tests, recorded results) keep their exact bytes under the new rounding rule."""
    text = dumps_package(generate("random_coverage", seed=seed, **params))
    assert hashlib.sha256(text.encode()).hexdigest() == digest


# --------------------------------------------------------------------------- defect 2


@pytest.mark.parametrize("family", ["update_chain", "temporal_interval"])
def test_generate_cli_writes_one_package_for_a_seed_invariant_family(family, tmp_path):
    five, zero = tmp_path / "s5.json", tmp_path / "s0.json"
    code, _, err = run_cli("generate", family, "--seed", "5", "-o", str(five))
    assert code == 0, err
    assert f"--seed 5: {family} is seed-invariant: it does not use the seed" in err, err
    code, _, err0 = run_cli("generate", family, "-o", str(zero))
    assert code == 0 and "seed-invariant" not in err0, err0
    assert five.read_bytes() == zero.read_bytes()
    assert load_package(five).meta["seed"] == 0
    # A seeded family keeps its seed, without a note.
    seeded = tmp_path / "small5.json"
    code, _, err = run_cli("generate", "memaudit-small", "--seed", "5", "-o", str(seeded))
    assert code == 0 and "note" not in err, err
    assert load_package(seeded).meta["seed"] == 5


def test_a_seed_invariant_link_names_and_opens_seed_0():
    from memaudit_ui import sources

    key, note = sources.canonical_key("gen:update_chain:5:length=4")
    assert key == "gen:update_chain:0:length=4"
    assert note is not None and "does not use the seed" in note, note
    assert sources.canonical_key("gen:memaudit-small:5") == ("gen:memaudit-small:5", None)
    assert sources.generated_key("temporal_interval", 5) == "gen:temporal_interval:0"
    pkg = sources.load_by_key("gen:update_chain:5")
    assert pkg.meta["seed"] == 0
    assert pkg.content_hash() == generate("update_chain").content_hash()


def test_the_app_opens_a_seed_5_link_of_a_seed_invariant_family_at_seed_0():
    at = open_app("app.py", package="gen:update_chain:5")
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["ma_package"] == "gen:update_chain:0"
    warnings = [w.value for w in at.warning]
    assert any("is seed-invariant: it does not use the seed" in w for w in warnings), warnings
    # The key in a code span: copied as it is (QA s46).
    assert any("opened `'gen:update_chain:0'`" in w for w in warnings), warnings
    assert not at.error, [e.value for e in at.error]


# --------------------------------------------------------------------------- defect 3


@pytest.mark.parametrize("text", ["1_0", "٣", "３", " 3", "+ 3"])
def test_an_integer_parameter_is_read_in_plain_ascii_only(text):
    with pytest.raises(MemAuditError) as info:
        generate("memaudit-small", normal_count=text)
    message = str(info.value)
    assert "parameter 'normal_count' must be an integer (ASCII digits 0-9" in message, message
    assert "[rule: plain-number]" in message, message


@pytest.mark.parametrize("text", ["1_0", "١٠", "1e1_0", "nan", "inf"])
def test_a_number_parameter_is_read_in_plain_ascii_only(text):
    # "1_0" and "١٠" read as 10.0, a valid cost_low (cost_high defaults to 10).
    with pytest.raises(MemAuditError, match=r"parameter 'cost_low' must be a number \(ASCII"):
        generate("random_coverage", n_groups=3, cost_low=text)


def test_plain_numbers_are_still_read():
    """Regression guard (passes before the fix too): sign, point and exponent are read."""
    pkg = generate("random_coverage", n_groups=3, cost_low="+1.5e0", cost_high="2.")
    assert pkg.meta["params"]["cost_low"] == 1.5 and pkg.meta["params"]["cost_high"] == 2.0
    assert generate("memaudit-small", normal_count="+4").meta["params"]["normal_count"] == 4


@pytest.mark.parametrize("text", ["1_0", "٣"])
def test_generate_cli_reads_the_seed_in_ascii_digits_only(text):
    code, _, err = run_cli("generate", "memaudit-small", "--seed", text, "-o", "-")
    assert code == 2, err
    assert "argument --seed: a seed is an integer >= 0 written in ASCII digits 0-9" in err, err


@pytest.mark.parametrize("text", ["1_0", "٣", "0-1_0"])
def test_a_seed_list_is_read_in_ascii_digits_only(text):
    with pytest.raises(MemAuditError, match="--seeds: cannot read"):
        parse_seeds(text)


def test_a_link_parameter_is_read_in_plain_ascii_only():
    from memaudit_ui import sources

    with pytest.raises(MemAuditError, match="parameter 'normal_count' must be an integer"):
        sources.load_by_key("gen:memaudit-small:0:normal_count=1_0")


@pytest.mark.parametrize("zero", ["-0", "-0.0", -0.0])
def test_minus_zero_is_the_package_of_zero(zero):
    # update_rate=-0 made the id event-graph-n10-s0-update_rate=-0, title -0.0.
    pkg = generate("event_graph", n_experiences=10, update_rate=zero)
    plain = generate("event_graph", n_experiences=10, update_rate=0)
    assert pkg.id == plain.id == "event-graph-n10-s0-update_rate=0"
    assert pkg.content_hash() == plain.content_hash()
    assert "-0" not in pkg.title, pkg.title


def test_the_app_key_of_minus_zero_is_the_key_of_zero():
    from memaudit_ui import sources

    key = sources.generated_key("event_graph", 0, {"update_rate": -0.0})
    assert key == "gen:event_graph:0:update_rate=0.0"
