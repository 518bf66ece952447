"""Generator page QA (session 40): integer fields that truncated what was typed, out-of-range
values that left an old preview on screen, and the seed-band pages' "names no generator
family" said of a package whose family just does not use the seed.

AppTest drives the form with numbers (what the browser sends); the browser test types the
text, where Streamlit's integer box cut 2.5 to 2 and 1e3 to 1 (parseInt) and refused -1
without a word.
"""

from __future__ import annotations

import re
from pathlib import Path

from app_utils import open_app, open_linked
from playwright.sync_api import Page, expect
from streamlit.testing.v1 import AppTest

from memaudit_core.generators import generate
from memaudit_core.package import load_package

GENERATOR = "pages/7_Generator.py"
SWEEP = "pages/1_Budget_sweep.py"
CERTIFICATION = "pages/6_Certification.py"
SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"
LOAD_TIMEOUT_MS = 120_000


def _generator(package: str = "gen:memaudit-small:0") -> AppTest:
    at = open_app(GENERATOR, package=package)
    assert not at.exception, [e.value for e in at.exception]
    return at


def _preview(at: AppTest, **fields: float | str) -> AppTest:
    """Set the memaudit-small form's fields (``seed``, a number box, or a parameter, a text
    box since QA s51) and press Preview."""
    for name, value in fields.items():
        key = f"gen_memaudit-small_{name}"
        box = at.number_input(key=key) if name == "seed" else at.text_input(key=key)
        box.set_value(value)
    at.button[0].click().run()  # the form's only button before a preview: Preview
    assert not at.exception, [e.value for e in at.exception]
    return at


def _errors(at: AppTest) -> list[str]:
    return [e.value.replace("\\", "") for e in at.error]  # markdown escapes removed


def _preview_heads(at: AppTest) -> list[str]:
    return [h.value.replace("\\", "") for h in at.subheader if h.value.startswith("Preview")]


# --------------------------------------------------------------------------- defect 1


def test_a_fractional_parameter_is_refused_with_the_cli_message():
    at = _preview(_generator(), update_count="2.5")
    errors = _errors(at)
    assert any("'update_count' must be an integer" in e and "2.5" in e for e in errors), errors
    assert _preview_heads(at) == []  # no package built from a truncated 2


def test_a_fractional_seed_is_refused_not_truncated():
    at = _preview(_generator(), seed=1.5)
    errors = _errors(at)
    assert any("Seed: seed must be an integer >= 0, got 1.5" in e for e in errors), errors
    assert _preview_heads(at) == []


def test_an_integral_number_is_kept_exactly():
    """Regression guard in AppTest: 1000 typed builds update_count=1000."""
    at = _preview(_generator(), update_count="1000")
    assert _errors(at) == []
    assert _preview_heads(at) == ["Preview · memaudit-small (seed 0, update_count=1000)"]


# --------------------------------------------------------------------------- defect 2


def test_a_negative_seed_clears_the_old_preview_and_names_the_rule():
    at = _preview(_generator(), seed=3)
    assert _preview_heads(at) == ["Preview · memaudit-small (seed 3)"]
    _preview(at, seed=-1, normal_count="5")
    errors = _errors(at)
    assert any("Seed: seed must be an integer >= 0, got -1" in e for e in errors), errors
    assert _preview_heads(at) == []
    assert [b.label for b in at.button if b.label == "Open in the app"] == []


def test_a_seed_past_the_browsers_exact_integers_is_refused():
    # 2^53 + 1 arrives as 2^53 from a browser's number box: another package without a word.
    at = _preview(_generator(), seed=float(2**53))
    errors = _errors(at)
    assert any(
        "Seed: 9007199254740992 is larger than this form can hold exactly (9007199254740991)" in e
        for e in errors
    ), errors
    assert _preview_heads(at) == []


# --------------------------------------------------------------------------- defect 3


def test_the_core_says_why_a_package_has_no_seed_band():
    from memaudit_core.curves import no_seed_band_reason

    assert no_seed_band_reason(generate("memaudit-small", seed=3)) is None
    assert no_seed_band_reason(generate("update_chain")) == (
        "its family update_chain does not use the seed, so a seed range would repeat one package"
    )
    assert no_seed_band_reason(load_package(SAMPLES / "temporal_interval.json")) == (
        "its family temporal_interval does not use the seed, so a seed range would repeat one "
        "package"
    )
    assert no_seed_band_reason(load_package(SAMPLES / "travel-assistant.json")) == (
        "this package names no generator family"
    )


def _linked(page: str, package: str, **settings: str) -> AppTest:
    return open_linked(page, package, **settings)


def _notes(at: AppTest) -> list[str]:
    # As read: without Markdown escapes and the backticks of the values' code spans.
    return [m.value.replace("\\", "").replace("`", "") for m in (*at.warning, *at.error, *at.info)]


def test_budget_sweep_link_says_the_family_does_not_use_the_seed():
    at = _linked(SWEEP, "gen:update_chain:0", seed_band="1", first_seed="0", last_seed="4")
    notes = _notes(at)
    assert any(
        "ignored seed_band='1' in the link: its family update_chain does not use the seed" in n
        for n in notes
    ), notes
    assert not any("names no generator family" in n for n in notes), notes


def test_certification_link_and_box_say_the_family_does_not_use_the_seed():
    at = _linked(CERTIFICATION, "sample:temporal_interval", seeds="5")
    notes = _notes(at)
    assert any(
        "seeds='5' in the link: its family temporal_interval does not use the seed" in n
        for n in notes
    ), notes
    assert not any("names no generator family" in n for n in notes), notes
    box = at.number_input(key="cert_audit_seeds")
    assert "temporal_interval does not use the seed" in box.help, box.help


# --------------------------------------------------------------------------- browser


def _typed(page: Page, name: str, text: str) -> None:
    main = page.get_by_test_id("stMain")
    # The seed is a number box; an integer parameter a text box (QA s51 m2).
    field = main.get_by_role("spinbutton", name=name, exact=True).or_(
        main.get_by_role("textbox", name=name, exact=True)
    )
    field.fill(text)
    field.press("Tab")


def _press_preview(page: Page) -> None:
    from browser_utils import wait_idle

    page.get_by_test_id("stMain").get_by_role("button", name="Preview").click()
    wait_idle(page, LOAD_TIMEOUT_MS)


def test_the_browser_form_neither_truncates_nor_silently_refuses(streamlit_server, page):
    from browser_utils import wait_idle

    page.goto(f"{streamlit_server}/Generator?package=gen:memaudit-small:0")
    wait_idle(page, LOAD_TIMEOUT_MS)
    main = page.get_by_test_id("stMain")
    alerts = page.get_by_test_id("stAlert")
    heading = main.locator("h3").filter(has_text=re.compile(r"^Preview"))

    # 1000 builds (Streamlit's integer box read 1e3 as 1; since QA s51 1e3 is refused by the
    # CLI's rule, as in `generate --param` and gen: links, see test_s51_repro).
    _typed(page, "update_count", "1000")
    _press_preview(page)
    expect(heading).to_have_text("Preview · memaudit-small (seed 0, update_count=1000)")

    # 2.5 is refused with the CLI's message (it became 2), and the 1000 preview is gone.
    _typed(page, "update_count", "2.5")
    _press_preview(page)
    expect(alerts.filter(has_text="'update_count' must be an integer")).to_be_visible()
    expect(heading).to_have_count(0)

    # Seed 3, then -1: the message names the seed's rule; the seed-3 preview does not stay
    # (Streamlit's min_value=0 refused -1 in the browser without a word).
    _typed(page, "update_count", "2")
    _typed(page, "Seed", "3")
    _press_preview(page)
    expect(heading).to_have_text("Preview · memaudit-small (seed 3)")
    _typed(page, "Seed", "-1")
    _typed(page, "normal_count", "5")
    _press_preview(page)
    # Streamlit's markdown draws >= as ≥.
    rule = re.compile(r"Seed: seed must be an integer (>=|≥) 0, got -1")
    expect(alerts.filter(has_text=rule)).to_be_visible()
    expect(heading).to_have_count(0)
    expect(main.get_by_role("button", name="Open in the app")).to_have_count(0)

    # Past the browser's integer range: the core's size rule, naming the field.
    _typed(page, "Seed", "0")
    _typed(page, "normal_count", "99999999999999999999")
    _press_preview(page)
    expect(alerts.filter(has_text="generator-size")).to_contain_text("normal_count=")
    expect(page.get_by_test_id("stException")).to_have_count(0)
