"""QA s47 (evxids): the app's messages guarded an id's colons from Streamlit's emoji shortcodes
with an invisible word joiner (U+2060), so an id copied from the Evidence explorer's warnings
and notes ("showing 'u:dates:invalid' instead") was not the id. A word holding a shortcode now
goes in a code span of its own, which Streamlit shows as it is."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from app_utils import open_app, open_linked

from memaudit_ui.frame import _guard_shortcodes, md_escape

REPO = Path(__file__).resolve().parent.parent
JOINER = "\u2060"
EVIDENCE = "pages/3_Evidence_explorer.py"
#: The travel assistant's default focus unit, and its kind, as the package file has them.
FOCUS, FOCUS_KIND = "u:dates:invalid", "invalidation"


def _shown_text(markdown: str) -> str:
    """What remark-emoji sees of ``markdown``: its text outside code spans, unescaped."""
    outside = re.sub(r"(`+).+?\1", " ", markdown)
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", outside)


def test_the_package_file_has_the_focus_unit_and_its_kind():
    doc = json.loads((REPO / "sample_packages" / "travel-assistant.json").read_text())
    assert {"id": FOCUS, "kind": FOCUS_KIND} in [
        {"id": u["id"], "kind": u["kind"]} for u in doc["units"]
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The repro: the id and its quotes in a code span, the sentence's colon outside it.
        (
            "focus unit 'nope' is not an evidence unit: showing 'u:dates:invalid' instead",
            "focus unit 'nope' is not an evidence unit\\: showing `'u:dates:invalid'` instead",
        ),
        ("covering the focus unit u:meal:invalid.", "covering the focus unit `u:meal:invalid`\\."),
        (":smile:", "`:smile:`"),
        ("ids (u:heart:x, a:b_c:d)", "ids \\(`u:heart:x`, `a:b_c:d`\\)"),
        # No shortcode: escaped as before, no code span.
        ("a:b c-d", "a\\:b c\\-d"),
    ],
)
def test_md_escape_quotes_a_word_with_a_shortcode_in_a_code_span(text, expected):
    shown = md_escape(text)
    assert shown == expected
    assert JOINER not in shown
    assert not re.search(r":[\w+-]+:", _shown_text(shown)), shown


def test_the_guard_leaves_markup_and_code_spans_as_they_are():
    assert _guard_shortcodes("**u:a:b** `x:y:z` ok") == "**`u:a:b`** `x:y:z` ok"


def _texts(elements) -> list[str]:
    return [e.value for e in elements]


def test_a_link_unit_warning_names_the_shown_unit_as_it_is():
    at = open_linked(EVIDENCE, "sample:travel-assistant", None, unit="nope")
    warnings = _texts(at.warning)
    assert any(f"showing `'{FOCUS}'` instead" in w for w in warnings), warnings
    assert not any(JOINER in w for w in warnings), warnings


def test_the_heatmap_and_graph_notes_name_the_focus_unit_as_it_is():
    at = open_linked(EVIDENCE, "sample:travel-assistant", None)
    at.radio(key="ev_heatmap_rows").set_value("focus")
    at.radio(key="ev_graph_scope").set_value("focus").run()
    assert not at.exception, [e.value for e in at.exception]
    infos = _texts(at.info)
    assert any(f"covering the focus unit `{FOCUS}`" in i for i in infos), infos
    assert any(f"neighbourhood of the focus unit `{FOCUS}`" in i for i in infos), infos
    assert not any(JOINER in i for i in infos), infos


def test_the_focus_unit_changed_note_names_it_as_it_is():
    # A unit the user picks (the default focus moving is not announced, QA s47 urlstate).
    picked = "u:hotel:invalid"  # kind invalidation, as FOCUS
    at = open_linked(EVIDENCE, "sample:travel-assistant", None)
    at.selectbox(key="ev_focus").set_value(picked).run()
    kinds = at.multiselect(key="ev_kinds").value
    at.multiselect(key="ev_kinds").set_value([k for k in kinds if k != FOCUS_KIND]).run()
    assert not at.exception, [e.value for e in at.exception]
    (changed,) = [i for i in _texts(at.info) if i.startswith("The focus unit changed")]
    assert f"focus unit `'{picked}'` is outside the kind filter" in changed, changed
    assert JOINER not in changed


def test_a_mixed_store_is_named_without_escapes_in_its_code_span():
    doc = json.loads((REPO / "sample_packages" / "external-stores-demo.json").read_text())
    doc["id"] = "demo-with-a-mixed-store"
    memory = dict(doc["stores"][0]["memories"][0], id="mixed-memory")
    store = "mix-ed:store:x"
    doc["stores"].append(
        {"id": store, "select": [doc["candidates"][0]["id"]], "memories": [memory]}
    )
    at = open_app("app.py", 120, package="sample:update_chain")
    at.file_uploader(key="w_upload").upload("mixed.json", json.dumps(doc).encode(), "x").run()
    at.switch_page("pages/4_External_stores.py").run()
    assert not at.exception, [e.value for e in at.exception]
    (note,) = [i for i in _texts(at.info) if i.startswith("Not union-scored here")]
    assert f"`{store}` — each selects" in note, note
