"""External stores says when the sidebar names something the page cannot show (s40 left-alone
item): with a writer in the sidebar the page showed its first external store while the sidebar
and the link named the writer, unsaid."""

from __future__ import annotations

from app_utils import open_app

PAGE = "pages/4_External_stores.py"
PACKAGE = "sample:external-stores-demo"


def _captions(at) -> list[str]:
    return [c.value for c in at.caption]


def test_a_writer_in_the_sidebar_is_said_not_shown():
    at = open_app(PAGE, package=PACKAGE, store="writer:gvt")
    assert not at.exception
    said = [c for c in _captions(at) if c.startswith("The sidebar names writer · gvt")]
    assert said == [
        "The sidebar names writer · gvt \\(oracle\\), which is not an external store: this page "
        "shows `mem0` (Mem0 \\(extracted facts\\)). Picking a store in the box above "
        "makes it the sidebar's and the link's."
    ]


def test_an_external_store_in_the_sidebar_is_shown_without_the_note():
    """Regression guard: the note is only for a sidebar choice the page cannot show."""
    at = open_app(PAGE, package=PACKAGE, store="store:letta")
    assert not at.exception
    assert at.session_state["w_ext_store"] == "letta"
    assert not [c for c in _captions(at) if c.startswith("The sidebar names")]
    # Picking another store here makes it the sidebar's: still no note.
    at.selectbox(key="w_ext_store").set_value("mem0").run()
    assert at.session_state["ma_store"] == "store:mem0"
    assert not [c for c in _captions(at) if c.startswith("The sidebar names")]
