"""Generator demo QA (session 48).

Finding 1: a preview was not in the link.

On the Generator (open package ``sample:travel-assistant``), Seed = 3 and Preview showed the
seed-3 package, but the URL kept only the open package, budget and store: pasted into a fresh
browser it showed a blank form ("Set the parameters and press Preview."), although the page
says a generated package's link works on any server. The previewed package is now the link's
``preview=`` (its key, as "Open in the app" writes it), unless it is the open package, which a
link previews already (QA s47); a bad ``preview=`` is named in a warning.

Finding 2: at 1024 x 768 the preview's buttons read "Open i…" / "Downl…" (each in a fifth of
the main column) and, with the sidebar open, the metric "Default budget (wo…" (four a row);
the browser test below measures every label at that size, with and without present=1.

Expected values are computed independently of the page: the key by hand from the family, seed
and parameters; the counts from the generator itself.
"""

from __future__ import annotations

import pytest
from app_utils import open_app, open_linked
from playwright.sync_api import Browser
from streamlit.testing.v1 import AppTest

from memaudit_core.generators import generate

GENERATOR = "pages/7_Generator.py"
OPEN = "sample:travel-assistant"
#: Seed 3 of memaudit-small with its defaults: the QA report's preview.
SEED3 = "gen:memaudit-small:3"
#: A non-default parameter too: n_experiences=20 of event_graph, seed 7.
EVENT20 = "gen:event_graph:7:n_experiences=20"


def _query(at: AppTest) -> dict[str, str]:
    return {k: v[-1] if isinstance(v, list) else v for k, v in at.query_params.items()}


def _preview_keys(at: AppTest) -> list[str]:
    """The package key the preview's caption names (none without a preview)."""
    assert not at.exception, [e.value for e in at.exception]
    return [c.value.split("`")[1] for c in at.caption if c.value.startswith("Package key `")]


def _metric(at: AppTest, label: str) -> str:
    (value,) = [m.value for m in at.metric if m.label == label]
    return value


def _warnings(at: AppTest) -> list[str]:
    return [w.value.replace("\\", "") for w in at.warning]


def test_a_preview_is_in_the_link_and_the_link_opens_it_fresh() -> None:
    at = open_app(GENERATOR)
    assert _query(at)["package"] == OPEN
    at.number_input(key="gen_memaudit-small_seed").set_value(3)
    at.button[0].click().run()  # Preview
    assert _preview_keys(at) == [SEED3]
    link = _query(at)
    assert link.get("preview") == SEED3, link
    # The link, pasted into a fresh session: the seed-3 preview, its form at seed 3.
    fresh = open_linked(GENERATOR, link["package"], link["budget"], preview=link["preview"])
    assert "Set the parameters and press **Preview**." not in [i.value for i in fresh.info]
    assert _preview_keys(fresh) == [SEED3]
    assert fresh.number_input(key="gen_memaudit-small_seed").value == 3
    expected = generate("memaudit-small", seed=3)
    assert _metric(fresh, "Experiences") == f"{len(expected.experiences):,}"
    assert _metric(fresh, "Candidates") == f"{len(expected.candidates):,}"
    assert _query(fresh) == link
    assert _warnings(fresh) == []


def test_a_linked_preview_fills_the_form_with_its_parameters() -> None:
    at = open_linked(GENERATOR, OPEN, None, preview=EVENT20)
    assert _preview_keys(at) == [EVENT20]
    assert at.selectbox(key="gen_family").value == "event_graph"
    assert at.number_input(key="gen_event_graph_seed").value == 7
    assert at.text_input(key="gen_event_graph_n_experiences").value == "20"
    assert _metric(at, "Experiences") == "20"
    # Pressing Preview on that form builds the same package, and the link stays.
    at.button[0].click().run()
    assert _preview_keys(at) == [EVENT20]
    assert _query(at)["preview"] == EVENT20


def test_a_hand_written_preview_is_kept_as_the_form_writes_it() -> None:
    at = open_linked(GENERATOR, OPEN, None, preview="gen:memaudit-small:03:normal_count=3;")
    assert _preview_keys(at) == [SEED3]
    assert _query(at)["preview"] == SEED3
    assert _warnings(at) == []


def test_the_open_package_needs_no_preview_parameter() -> None:
    # QA s47's link (package=gen:...) previews the open package already: no second copy.
    at = open_linked(GENERATOR, EVENT20)
    assert _preview_keys(at) == [EVENT20]
    assert "preview" not in _query(at)
    # Another seed of it is a preview of its own, in the link.
    at.number_input(key="gen_event_graph_seed").set_value(8)
    at.button[0].click().run()
    assert _preview_keys(at) == ["gen:event_graph:8:n_experiences=20"]
    assert _query(at)["preview"] == "gen:event_graph:8:n_experiences=20"


def test_a_refused_preview_leaves_the_link() -> None:
    at = open_linked(GENERATOR, OPEN, None, preview=SEED3)
    assert _query(at)["preview"] == SEED3
    at.number_input(key="gen_memaudit-small_seed").set_value(-1)
    at.button[0].click().run()
    assert _preview_keys(at) == []
    assert [e.value for e in at.error]  # the form's own message (QA s40)
    assert "preview" not in _query(at)


def test_another_family_in_the_form_leaves_the_link() -> None:
    at = open_linked(GENERATOR, OPEN, None, preview=SEED3)
    at.selectbox(key="gen_family").set_value("event_graph").run()
    assert _preview_keys(at) == []
    assert "preview" not in _query(at)
    # Back to its family: the preview and its link come back.
    at.selectbox(key="gen_family").set_value("memaudit-small").run()
    assert _preview_keys(at) == [SEED3]
    assert _query(at)["preview"] == SEED3


def test_a_bad_preview_in_a_link_is_named_not_a_traceback() -> None:
    cases = {
        "gen:nofam:1": "unknown family 'nofam'",
        "sample:travel-assistant": "is not a generated package's key",
        "gen:memaudit-small:1:bogus=2": "has no parameter 'bogus'",
        "gen:memaudit-small:-1": "a seed is written in digits 0-9 only",
        "gen:event_graph:1:n_experiences=99999999": "[rule: generator-size]",
        "gen:memaudit-small:9007199254740993": "larger than this form can hold",
    }
    for value, reason in cases.items():
        at = open_linked(GENERATOR, OPEN, None, preview=value)
        said = _warnings(at)
        assert len(said) == 1, (value, said)
        assert said[0].startswith(f"ignored preview=`{value!r}` in the link: "), said
        assert reason in said[0], (value, said)
        assert _preview_keys(at) == []
        assert "preview" not in _query(at)


def test_a_seed_invariant_familys_preview_says_it_is_seed_0s() -> None:
    at = open_linked(GENERATOR, OPEN, None, preview="gen:update_chain:5")
    assert _preview_keys(at) == ["gen:update_chain:0"]
    assert _query(at)["preview"] == "gen:update_chain:0"
    notes = [i.value for i in at.info if "seed-invariant" in i.value]
    assert len(notes) == 1 and "previewed `'gen:update_chain:0'`" in notes[0], notes


# --------------------------------------------------------------------------- browser

#: Every element of the preview's metric labels and buttons whose text overflows its box
#: (Streamlit cuts it with an ellipsis); each as "text scrollWidth>clientWidth".
CUT_JS = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const labels = [...main.querySelectorAll('[data-testid="stMetricLabel"]')];
  // Streamlit keeps an unsized copy of a horizontal row's buttons (to measure them).
  const buttons = [...main.querySelectorAll('button')].filter(b =>
    b.getBoundingClientRect().width > 0 &&
    ['Open in the app', 'Download JSON'].some(t => b.textContent.includes(t)));
  const cut = [];
  for (const el of [...labels, ...buttons])
    for (const e of [el, ...el.querySelectorAll('*')])
      if (e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)
        cut.push(`${e.textContent.trim()} ${e.scrollWidth}>${e.clientWidth}`);
  return [labels.length, buttons.length, cut];
}"""


@pytest.mark.parametrize("present", [False, True], ids=["sidebar", "present"])
def test_at_1024_the_preview_link_opens_with_every_label_whole(
    streamlit_server: str, browser: Browser, present: bool
) -> None:
    from browser_utils import wait_idle

    query = f"package={OPEN}" + ("&present=1" if present else "")
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    try:
        page = context.new_page()
        page.goto(f"{streamlit_server}/Generator?{query}")
        wait_idle(page, 120_000)
        seed = page.get_by_test_id("stMain").get_by_role("spinbutton", name="Seed", exact=True)
        seed.fill("3")
        seed.press("Tab")
        page.get_by_test_id("stMain").get_by_role("button", name="Preview").click()
        wait_idle(page, 120_000)
        link = page.url
    finally:
        context.close()
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    try:
        page = context.new_page()
        page.goto(link)  # pasted into a fresh browser
        wait_idle(page, 120_000)
        main = page.get_by_test_id("stMain")
        main.get_by_role("button", name="Open in the app").scroll_into_view_if_needed()
        assert main.get_by_role("heading", name="Preview · memaudit-small (seed 3)").count() == 1
        assert "Set the parameters and press" not in main.inner_text()
        # A horizontal row lays its buttons out after a measuring pass: a CI run (s49) read
        # one sized button right after the run ended. Wait for both, then measure.
        page.wait_for_function(f"() => ({CUT_JS})()[1] === 2", timeout=30_000)
        n_labels, n_buttons, cut = page.evaluate(CUT_JS)
        assert (n_labels, n_buttons) == (8, 2)
        assert cut == []
    finally:
        context.close()
