"""Generator QA (session 47).

1. An emptied number box on the Generator page (the Seed or a parameter) became 0 without a
   word, and Preview built that package: ``update_rate`` cleared gave "update_rate=0.0" with
   Open and Download; ``budget_fraction`` cleared was refused "(got 0.0)", a value never typed.
   The browser sends an empty box for text it cannot read as a number too ("abc", and a
   number too large to hold such as 1e400), so those took the same path. Now the box stays
   empty and Preview names the field.
2. A link's ``update_rate=1e400`` (a plain number) was read as inf, and the app said "got
   'inf'", a value the link never said; ``memaudit generate --param update_rate=1e400`` said
   "(got inf)". The plain-number rule now refuses a number too large to hold, quoting the text.
"""

from __future__ import annotations

import math
import re

import pytest
from app_utils import open_app
from cli_utils import run_cli
from playwright.sync_api import Page, expect
from streamlit.testing.v1 import AppTest

from memaudit_core.generators import FAMILIES
from memaudit_core.specs import PLAIN_INT_RULE, read_plain_number
from memaudit_ui import sources

GENERATOR = "pages/7_Generator.py"
LOAD_TIMEOUT_MS = 120_000
#: What the QA link asked for: 1e400 is beyond the largest float (about 1.8e308).
HUGE = "1e400"


def _generator(family: str) -> AppTest:
    at = open_app(GENERATOR, package=f"gen:{family}:0")
    assert not at.exception, [e.value for e in at.exception]
    return at


def _errors(at: AppTest) -> list[str]:
    return [e.value.replace("\\", "") for e in at.error]  # markdown escapes removed


def _preview_heads(at: AppTest) -> list[str]:
    return [h.value.replace("\\", "") for h in at.subheader if h.value.startswith("Preview")]


def _empty_rule() -> str:
    """The page's words for an empty box (say what the browser does, name no value)."""
    return (
        "type a number (the browser leaves a box empty when its text is not a number, such "
        "as abc, or is too large to hold, such as 1e400)"
    )


# --------------------------------------------------------------------------- defect 1


@pytest.mark.parametrize(
    ("family", "field"),
    [
        ("event_graph", "update_rate"),
        ("event_graph", "budget_fraction"),
        ("event_graph", "seed"),
        ("memaudit-small", "normal_count"),
    ],
)
def test_an_empty_box_is_named_and_refused_not_read_as_zero(family: str, field: str) -> None:
    at = _generator(family)
    # An integer parameter is a text box (QA s51 m2): its blank text is its empty value.
    text = field == "normal_count"
    box = (at.text_input if text else at.number_input)(key=f"gen_{family}_{field}")
    box.set_value("" if text else None)
    at.button[0].click().run()  # the form's only button before a preview: Preview
    assert not at.exception, [e.value for e in at.exception]
    label = "Seed" if field == "seed" else field
    errors = _errors(at)
    rule = f"type a whole number ({PLAIN_INT_RULE})" if text else _empty_rule()
    assert errors == [f"No preview: {label}: empty: {rule}"], errors
    assert _preview_heads(at) == []  # no package built from a 0 never typed
    assert not any("0.0" in e for e in errors), errors
    # The box stays empty on the next run, as the user left it (it showed 0).
    box = (at.text_input if text else at.number_input)(key=f"gen_{family}_{field}")
    assert box.value == ("" if text else None)


def test_every_empty_box_is_named_at_once() -> None:
    at = _generator("event_graph")
    for field in ("seed", "update_rate"):
        at.number_input(key=f"gen_event_graph_{field}").set_value(None)
    at.text_input(key="gen_event_graph_n_experiences").set_value("")
    at.button[0].click().run()
    assert _errors(at) == [f"No preview: Seed, n_experiences, update_rate: empty: {_empty_rule()}"]


def test_a_filled_box_still_builds_its_package() -> None:
    """Regression guard: a nullable box with a number builds as before."""
    at = _generator("event_graph")
    at.number_input(key="gen_event_graph_update_rate").set_value(0.5)
    at.button[0].click().run()
    assert _errors(at) == []
    assert _preview_heads(at) == ["Preview · Event graph (n=50, seed=0, update_rate=0.5)"]


# --------------------------------------------------------------------------- defect 2


@pytest.mark.parametrize("text", [HUGE, "-1e400", "2e308"])
def test_the_plain_number_rule_refuses_an_overflow(text: str) -> None:
    assert math.isinf(float(text))  # the independent reading: Python's float overflows
    with pytest.raises(ValueError, match=re.escape(f"{text!r} is too large to hold")):
        read_plain_number(text)


def test_the_cli_quotes_the_overflowing_parameter() -> None:
    code, out, err = run_cli("generate", "event_graph", "--param", f"update_rate={HUGE}")
    assert code == 2, (code, out, err)
    assert f"parameter 'update_rate': '{HUGE}' is too large to hold" in err, err
    assert "inf)" not in err.replace("read as inf", ""), err  # not "(got inf)"


def test_a_link_with_an_overflowing_parameter_is_refused_as_written() -> None:
    key = f"gen:event_graph:0:update_rate={HUGE}"
    assert "update_rate" in FAMILIES["event_graph"].defaults()
    # The app keeps the key as the link wrote it (it rewrote it to update_rate=inf).
    assert sources.canonical_key(key) == (key, None)
    at = open_app(package=key)
    assert not at.exception, [e.value for e in at.exception]
    errors = _errors(at)
    assert len(errors) == 1, errors
    assert errors[0].startswith(
        f"Could not open the package `{key}`: parameter 'update_rate': '{HUGE}' is too large to hold"
    ), errors
    assert "got 'inf'" not in errors[0] and "update_rate=inf" not in errors[0], errors


# --------------------------------------------------------------------------- browser


def test_the_browser_form_refuses_cleared_and_unholdable_boxes(streamlit_server, page: Page):
    """What the QA typed: the browser sends an empty box for 1e400 and for abc."""
    from browser_utils import wait_idle

    page.goto(f"{streamlit_server}/Generator?package=gen:event_graph:0")
    wait_idle(page, LOAD_TIMEOUT_MS)
    main = page.get_by_test_id("stMain")
    alerts = page.get_by_test_id("stAlert")
    heading = main.locator("h3").filter(has_text=re.compile(r"^Preview"))
    preview = main.get_by_role("button", name="Preview")
    restored = {"update_rate": "0.5", "Seed": "0", "n_experiences": "50"}
    built = "Preview · Event graph (n=50, seed=0, update_rate=0.5)"
    preview.click()
    wait_idle(page, LOAD_TIMEOUT_MS)
    expect(heading).to_have_text("Preview · Event graph (n=50, seed=0)")  # the defaults
    # n_experiences is a text box since QA s51 (m2): abc stays abc, refused by the core's rule.
    for name, text in [("update_rate", HUGE), ("Seed", ""), ("n_experiences", "abc")]:
        role = "textbox" if name == "n_experiences" else "spinbutton"
        box = main.get_by_role(role, name=name, exact=True)
        expect(box).not_to_have_value("", timeout=LOAD_TIMEOUT_MS)
        box.click()
        box.press("Control+a")
        box.press_sequentially(text) if text else box.press("Delete")
        box.press("Tab")
        wait_idle(page, LOAD_TIMEOUT_MS)
        preview.click()
        wait_idle(page, LOAD_TIMEOUT_MS)
        said = (
            "'n_experiences' must be an integer"
            if role == "textbox"
            else f"No preview: {name}: empty"
        )
        expect(alerts.filter(has_text=said)).to_be_visible()
        expect(heading).to_have_count(0)  # the last press's preview is gone, none built
        # A number box is left empty (it showed 0); a text box holds what was typed.
        expect(box).to_have_value(text if role == "textbox" else "")
        box.fill(restored[name])
        box.press("Tab")
        wait_idle(page, LOAD_TIMEOUT_MS)
        preview.click()
        wait_idle(page, LOAD_TIMEOUT_MS)
        expect(heading).to_have_text(built)
    expect(page.get_by_test_id("stException")).to_have_count(0)
