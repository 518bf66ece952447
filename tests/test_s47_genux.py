"""Generator UX QA (session 47).

1. A link to a generated package (``package=gen:event_graph:7:n_experiences=20;...``) filled
   the Generator's form but said "Set the parameters and press Preview." instead of previewing
   the package open: whoever followed a shared link saw no package.
2. ``memaudit generate ... --param budget_fraction=0.001 -o bf.json`` said only "wrote ...";
   ``validate bf.json`` then warned that no candidate fits the default budget (OPT = 0, every
   ratio n/a). generate now says the package's warnings as validate does, and lists them in
   ``--json`` (``generated.warnings``, as ``imported.warnings``).
"""

from __future__ import annotations

import json
from pathlib import Path

from app_utils import open_app
from cli_utils import run_cli
from streamlit.testing.v1 import AppTest

GENERATOR = "pages/7_Generator.py"
LINK = "gen:event_graph:7:n_experiences=20;update_rate=0.5"
#: event_graph at a budget fraction whose default budget (1 word) is below every candidate.
TINY_BUDGET = ["--seed", "3", "--param", "n_experiences=20", "--param", "budget_fraction=0.001"]
TINY_LINK = "gen:event_graph:3:budget_fraction=0.001;n_experiences=20"
RULE = "(rule: budget-fits-nothing)"


def _clean(texts) -> list[str]:
    return [t.value.replace("\\", "") for t in texts]  # markdown escapes removed


def _previewed(at: AppTest) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """The preview's heading, key caption and metrics (label, value)."""
    assert not at.exception, [e.value for e in at.exception]
    heads = [h for h in _clean(at.subheader) if h.startswith("Preview")]
    keys = [c for c in _clean(at.caption) if c.startswith("Package key")]
    metrics = [(m.label, m.value) for m in at.metric]
    return heads, keys, metrics


# --------------------------------------------------------------------------- defect 1


def test_a_link_to_a_generated_package_previews_it() -> None:
    at = open_app(GENERATOR, package=LINK)
    assert at.number_input(key="gen_event_graph_seed").value == 7
    assert at.text_input(key="gen_event_graph_n_experiences").value == "20"
    assert at.number_input(key="gen_event_graph_update_rate").value == 0.5
    assert "Set the parameters and press **Preview**." not in [i.value for i in at.info]
    heads, keys, metrics = _previewed(at)
    assert len(heads) == 1, heads
    assert keys and keys[0].startswith(f"Package key `{LINK}`"), keys
    assert ("Experiences", "20") in metrics
    assert [b.label for b in at.button if b.label == "Open in the app"] == ["Open in the app"]
    # The same content as after pressing Preview on that form.
    at.button[0].click().run()
    assert _previewed(at) == (heads, keys, metrics)


def test_a_link_previews_the_packages_warnings() -> None:
    at = open_app(GENERATOR, package=TINY_LINK)
    heads, keys, _ = _previewed(at)
    assert len(heads) == 1 and keys[0].startswith(f"Package key `{TINY_LINK}`"), (heads, keys)
    assert [w for w in _clean(at.warning) if RULE in w and "OPT = 0" in w], _clean(at.warning)


def test_another_family_than_the_link_still_asks_for_preview() -> None:
    at = open_app(GENERATOR, package=LINK)
    at.selectbox(key="gen_family").set_value("memaudit-small").run()
    heads, _, _ = _previewed(at)
    assert heads == []
    assert "Set the parameters and press **Preview**." in [i.value for i in at.info]


# --------------------------------------------------------------------------- defect 2


def _tiny_package_facts(path: Path) -> tuple[float, float]:
    """(default budget, cheapest candidate) read from the written JSON itself."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    return doc["budget"], min(c["cost"] for c in doc["candidates"])


def test_generate_says_the_warnings_validate_says(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    rc, _, err = run_cli("generate", "event_graph", *TINY_BUDGET, "-o", "bf.json")
    assert rc == 0, err
    budget, cheapest = _tiny_package_facts(tmp_path / "bf.json")
    assert budget < cheapest  # the file itself: no candidate fits its default budget
    said = [line for line in err.splitlines() if line.startswith("bf.json: warning: ")]
    assert len(said) == 1 and RULE in said[0], err
    rc, _, validated = run_cli("validate", "bf.json")
    assert rc == 0
    assert said == [line for line in validated.splitlines() if ": warning: " in line]


def test_generate_json_lists_the_warnings(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    rc, out, err = run_cli("generate", "event_graph", *TINY_BUDGET, "-o", "bf.json", "--json")
    assert rc == 0, err
    listed = json.loads(out)["generated"]["warnings"]
    rc, checked, _ = run_cli("validate", "bf.json", "--json")
    assert rc == 0
    assert listed == json.loads(checked)["warnings"]
    assert len(listed) == 1 and listed[0].endswith(RULE)
    assert f"bf.json: warning: {listed[0]}" in err.splitlines()


def test_generate_to_stdout_names_the_package_by_its_source() -> None:
    rc, out, err = run_cli("generate", "event_graph", *TINY_BUDGET)
    assert rc == 0
    assert json.loads(out)["budget"] < min(c["cost"] for c in json.loads(out)["candidates"])
    prefix = "event_graph:3:budget_fraction=0.001;n_experiences=20: warning: $.budget: "
    assert [line for line in err.splitlines() if RULE in line][0].startswith(prefix), err


def test_a_clean_package_is_written_without_warnings(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    rc, out, err = run_cli("generate", "event_graph", "--seed", "3", "-o", "ok.json", "--json")
    assert rc == 0
    assert json.loads(out)["generated"]["warnings"] == []
    assert "warning" not in err
