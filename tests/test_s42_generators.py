"""Generator QA (session 42): a link's parameter given twice, one key per generated package,
random_coverage's budget_fraction rule, ``-o NAME/`` and the app's size limit documented.

Expected values are written out here (keys, messages, numbers), not computed by the code
under test.
"""

from __future__ import annotations

import hashlib
import statistics
from pathlib import Path

import pytest
from app_utils import open_app
from cli_utils import run_cli

from memaudit_core.errors import MemAuditError
from memaudit_core.generators import estimated_size, generate
from memaudit_core.package import dumps_package
from memaudit_ui import sources

REPO = Path(__file__).resolve().parent.parent
GENERATOR = "pages/7_Generator.py"


def _clean(text: str) -> str:
    """An element's text without markdown escapes, word joiners and code spans' backticks."""
    return text.replace("\\", "").replace("\u2060", "").replace("`", "")


# --------------------------------------------------------------------------- defect 1


def test_load_by_key_refuses_a_generator_parameter_given_twice() -> None:
    """QA s42 (defect 1): length=2;length=5 silently built length 5, where the CLI refuses
    ``--param length`` given twice."""
    with pytest.raises(MemAuditError) as info:
        sources.load_by_key("gen:update_chain:0:length=2;length=5")
    message = str(info.value)
    assert "generator parameter 'length' given twice" in message, message
    assert "('2' and '5')" in message and "[rule: parameter-once]" in message, message


def test_a_link_giving_a_parameter_twice_is_not_opened_and_falls_back() -> None:
    """QA s42 (defect 1): the link opened n_experiences=30 without a word."""
    key = "gen:event_graph:2:n_experiences=20;n_experiences=30"
    at = open_app(package=key)
    assert not at.exception, [e.value for e in at.exception]
    errors = [_clean(e.value) for e in at.error]
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"Could not open the package {key}: "), errors
    assert "'n_experiences' given twice in a package key ('20' and '30')" in errors[0], errors
    assert "Showing sample:travel-assistant at its default budget instead" in errors[0], errors
    assert at.session_state["ma_package"] == "sample:travel-assistant"


# --------------------------------------------------------------------------- defect 2


@pytest.mark.parametrize(
    ("key", "canonical"),
    [
        ("gen:memaudit-small:0:normal_count=3", "gen:memaudit-small:0"),  # the default
        ("gen:memaudit-small:0:normal_count=03", "gen:memaudit-small:0"),
        ("gen:memaudit-small:0:normal_count=%35", "gen:memaudit-small:0:normal_count=5"),
        ("gen:memaudit-small:0:", "gen:memaudit-small:0"),
        ("gen:memaudit-small:0:normal_count=5;;", "gen:memaudit-small:0:normal_count=5"),
        ("gen:memaudit-small:0:normal_count=5;", "gen:memaudit-small:0:normal_count=5"),
        ("gen:memaudit-small:4:normal_count=007", "gen:memaudit-small:4:normal_count=7"),
        (
            "gen:event_graph:2:update_rate=0.50;n_experiences=20",
            "gen:event_graph:2:n_experiences=20;update_rate=0.5",
        ),
        (
            "gen:event_graph:2:cost_rule=words;n_experiences=20",
            "gen:event_graph:2:n_experiences=20",
        ),
        (
            "gen:random_coverage:3:integer_costs=1;budget_fraction=1e-1",
            "gen:random_coverage:3:integer_costs=true",
        ),
        ("gen:update_chain:0:length=04", "gen:update_chain:0:length=4"),
    ],
)
def test_a_generated_package_has_one_key_whatever_the_link_wrote(key: str, canonical: str) -> None:
    """QA s42 (defect 2): each of these kept a key of its own for one package."""
    assert sources.canonical_key(key) == (canonical, None)
    assert sources.canonical_key(canonical) == (canonical, None)  # canonical stays canonical


def test_the_canonical_key_is_what_the_generators_open_in_the_app_writes() -> None:
    """QA s42 (defect 2): the Generator's form sends typed values; a caller giving the text a
    link holds ("03", "0.50") gets the same key."""
    assert sources.generated_key("memaudit-small", 0, {"normal_count": 3}) == (
        "gen:memaudit-small:0"
    )
    assert sources.generated_key("memaudit-small", 0, {"normal_count": "03"}) == (
        "gen:memaudit-small:0"
    )
    assert sources.generated_key(
        "event_graph", 2, {"n_experiences": "20", "update_rate": "0.50"}
    ) == ("gen:event_graph:2:n_experiences=20;update_rate=0.5")


@pytest.mark.parametrize(
    "key",
    [
        "gen:memaudit-small:0:normal_count=5",
        "gen:event_graph:2:n_experiences=20;update_rate=0.5",
        "gen:memaudit-small:0:nope=3",  # unknown: load_by_key names it
        "gen:memaudit-small:0:normal_count=2.5",  # refused: load_by_key names it
        "gen:event_graph:2:n_experiences=20;n_experiences=30",  # refused (defect 1)
        "sample:update_chain",
    ],
)
def test_canonical_and_unusable_keys_are_kept_as_they_are(key: str) -> None:
    """Regression guard (QA s42, defect 2): a canonical link, and one the app cannot open
    (whose error names the link as written), keep their text."""
    assert sources.canonical_key(key) == (key, None)


def test_a_link_with_a_default_parameter_written_with_a_leading_zero_opens_the_one_key() -> None:
    """QA s42 (defect 2): the session (and so the URL) kept gen:memaudit-small:0:normal_count=03."""
    at = open_app(package="gen:memaudit-small:0:normal_count=03")
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["ma_package"] == "gen:memaudit-small:0"


# --------------------------------------------------------------------------- defect 3


@pytest.mark.parametrize("value", [0, 2, 1.5, -0.1, "0", "2"])
def test_random_coverage_budget_fraction_is_a_number_in_0_1(value: object) -> None:
    """QA s42 (defect 3): random_coverage took [0, 1e6], event_graph (0, 1]."""
    with pytest.raises(MemAuditError) as info:
        generate("random_coverage", budget_fraction=value)
    message = str(info.value)
    assert message.startswith("random_coverage: budget_fraction must be a number in (0, 1]"), (
        message
    )


def test_a_tiny_budget_fraction_keeps_a_positive_budget() -> None:
    """QA s42 (defect 3): 1e-300 rounded to a budget of 0 without a word."""
    pkg = generate("random_coverage", budget_fraction=1e-300)
    mean_cost = statistics.fmean(c.cost for c in pkg.candidates)
    assert pkg.budget > 0
    assert pkg.budget == pytest.approx(1e-300 * 50 * mean_cost, rel=1e-9)


def test_integer_costs_with_a_small_fraction_keep_a_positive_budget() -> None:
    """QA s42 (defect 3): the floor of 0.05 x 2 groups x mean cost (0.525) was 0."""
    pkg = generate(
        "random_coverage",
        n_groups=2,
        min_cover=1,
        max_cover=3,
        integer_costs=True,
        budget_fraction=0.05,
    )
    mean_cost = statistics.fmean(c.cost for c in pkg.candidates)
    assert all(float(c.cost).is_integer() for c in pkg.candidates)
    assert pkg.budget > 0
    assert pkg.budget == pytest.approx(0.05 * 2 * mean_cost, rel=1e-12)


def test_a_budget_too_small_to_hold_is_refused_naming_budget_fraction() -> None:
    """QA s42 (defect 3): 1e-300 of costs near 1e-100 is 0 in floating point."""
    with pytest.raises(MemAuditError) as info:
        generate("random_coverage", cost_low=1e-100, cost_high=1e-99, budget_fraction=1e-300)
    message = str(info.value)
    assert message.startswith("random_coverage: budget_fraction=1e-300 makes a default budget"), (
        message
    )
    assert "too small to hold" in message and "[rule: budget-fraction]" in message, message


@pytest.mark.parametrize(
    ("params", "digest"),
    [
        ({}, "e6fde6d5d160"),
        ({"seed": 1}, "13243bfa0095"),
        ({"seed": 2}, "8ac071f51647"),
    ],
)
def test_random_coverage_default_packages_are_unchanged(params: dict, digest: str) -> None:
    """Regression guard (QA s42, defect 3): the benchmarks' packages (bench/, RESULTS.md) use
    the defaults; their bytes must not change (digests of the base commit's packages)."""
    text = dumps_package(generate("random_coverage", **params))
    assert hashlib.sha256(text.encode("utf-8")).hexdigest()[:12] == digest


def test_generate_list_states_the_budget_fraction_range_of_both_families() -> None:
    """QA s42 (defect 3): neither family's help said the range."""
    rc, out, err = run_cli("generate", "--list")
    assert rc == 0, err
    lines = [line for line in out.splitlines() if "--param budget_fraction=" in line]
    assert len(lines) == 2, lines
    assert all(line.rstrip().endswith(", in (0, 1]") for line in lines), lines


def test_generate_refuses_budget_fraction_2_for_random_coverage() -> None:
    """QA s42 (defect 3): the CLI wrote a package with twice the groups' mean cost."""
    rc, out, err = run_cli("generate", "random_coverage", "--param", "budget_fraction=2")
    assert rc == 2 and out == ""
    assert "budget_fraction must be a number in (0, 1], got 2.0" in err, err


# --------------------------------------------------------------------------- defect 4


def test_generate_refuses_an_output_name_ending_with_a_separator(tmp_path: Path) -> None:
    """QA s42 (defect 4): wrote a file named dir.json and said "wrote dir.json/"."""
    target = f"{tmp_path}/dir.json/"
    rc, out, err = run_cli("generate", "update_chain", "-o", target)
    assert rc == 2 and out == ""
    assert f"-o {target}: the name ends with a path separator" in err, err
    assert "(rule: output-file)" in err, err
    assert list(tmp_path.iterdir()) == []


def test_sweep_refuses_an_output_name_ending_with_a_separator(tmp_path: Path) -> None:
    """QA s42 (defect 4): the same check for every command's -o (sweep's CSV rows)."""
    target = f"{tmp_path}/rows.csv/"
    package = str(REPO / "sample_packages" / "update_chain.json")
    rc, out, err = run_cli("sweep", package, "--budgets", "2", "--writers", "gvt", "-o", target)
    assert rc == 2, (out, err)
    assert f"-o {target}: the name ends with a path separator" in err, err
    assert list(tmp_path.iterdir()) == []


def test_import_refuses_an_output_name_ending_with_a_separator(tmp_path: Path) -> None:
    """QA s42 (defect 4): the same check for import's package."""
    source = REPO / "tests" / "fixtures" / "importers" / "locomo_small.json"
    target = f"{tmp_path}/out.json/"
    rc, out, err = run_cli(
        "import", "locomo", str(source), "--instance", "conv-a", "-o", target, "--json"
    )
    assert rc == 2, (out, err)
    assert f"-o {target}: the name ends with a path separator" in out, out
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- defect 5


def test_the_generator_page_states_the_apps_size_limit() -> None:
    """QA s42 (defect 5): the form's help says event_graph runs to 200,000 turns; the app
    refuses more than 27,777 and said so only on refusal."""
    at = open_app(GENERATOR)
    assert not at.exception, [e.value for e in at.exception]
    captions = [_clean(c.value) for c in at.caption]
    assert any(
        "at most 250,000 estimated candidates plus coverage entries" in c
        and "an event_graph of at most 27,777 turns" in c
        and "builds up to 2,000,000" in c
        for c in captions
    ), captions


def test_readme_states_the_apps_size_limit_on_the_generator_page() -> None:
    """QA s42 (defect 5)."""
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert "The Generator page builds a package of any registered family" in readme
    assert "at most 250,000 estimated candidates plus coverage entries" in readme
    assert "an `event_graph` of at most 27,777 turns" in readme


def test_the_documented_app_limit_is_the_one_the_app_applies() -> None:
    """Regression guard (QA s42, defect 5): the numbers the page and README state."""
    assert sources.APP_MAX_GENERATED_SIZE == 250_000
    assert estimated_size("event_graph", n_experiences=27_777) <= 250_000
    with pytest.raises(MemAuditError, match=r"more than the 250,000 allowed here"):
        generate("event_graph", n_experiences=27_778, max_size=sources.APP_MAX_GENERATED_SIZE)
