"""QA s47: the External stores page's "Y' when over budget" choice and its "Salience meta
field" were kept in the session only, so a reload or a shared link showed recency's headline
numbers after salience's (Union ratio 0.398 -> 0.208 on the demo's A-Mem store at 36 words)
with no warning. Both are now link settings (``keep``, ``salience_field``)."""

from __future__ import annotations

from pathlib import Path

from app_utils import APP
from streamlit.testing.v1 import AppTest

from memaudit_core.package import load_package
from memaudit_core.union import union_report

PAGE = "pages/4_External_stores.py"
DEMO = "sample:external-stores-demo"
DEMO_FILE = Path(__file__).resolve().parent.parent / "sample_packages" / "external-stores-demo.json"


def _expected(**kw: str) -> dict[str, str]:
    """The headline metrics as the core scores the A-Mem store at 36, outside the app."""
    rep = union_report(load_package(DEMO_FILE), "amem", 36, **kw)
    return {
        "Union ratio": rep.union_ratio_text,
        "Selection": rep.selection_text,
        "Kept F(Y')": f"{rep.value:.4g}",
    }


def _shown(at) -> dict[str, str]:
    return {
        m.label: m.value for m in at.metric if m.label in ("Union ratio", "Selection", "Kept F(Y')")
    }


def _open(**settings: str) -> AppTest:
    """The page opened by a link naming the demo, budget 36, A-Mem's store and ``settings``
    (as ``app_utils.open_linked``, with the store in the first run's link)."""
    at = AppTest.from_file(str(APP), default_timeout=120)
    for name, value in {"package": DEMO, "budget": "36", "store": "store:amem"}.items():
        at.query_params[name] = value
    at.run()
    for name, value in settings.items():
        at.query_params[name] = value
    at.switch_page(PAGE).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params["store"] == "store:amem"
    return at


def test_a_link_with_keep_salience_shows_the_salience_numbers() -> None:
    salience = _expected(keep="salience")
    # The defect's numbers, so the test checks a view that differs from the default one.
    assert salience == {"Union ratio": "0.398", "Selection": "1.000", "Kept F(Y')": "5.75"}
    assert _expected() != salience
    at = _open(keep="salience")
    assert _shown(at) == salience
    assert at.radio(key="w_ext_keep").value == "salience"
    assert at.query_params["keep"] == "salience"
    assert not at.warning


def test_a_link_names_the_salience_field() -> None:
    """A field no memory has: Y' falls back to recency, and the note names the field."""
    at = _open(keep="salience", salience_field="nope")
    assert at.text_input(key="w_ext_salience").value == "nope"
    assert _shown(at) == _expected(keep="salience", salience_field="nope")
    assert _shown(at) != _expected(keep="salience")
    assert at.query_params["salience_field"] == "nope"


def test_choosing_on_the_page_writes_the_link() -> None:
    at = _open()
    assert "keep" not in at.query_params and "salience_field" not in at.query_params
    at.radio(key="w_ext_keep").set_value("salience").run()
    assert at.query_params["keep"] == "salience"
    assert _shown(at) == _expected(keep="salience")
    at.text_input(key="w_ext_salience").set_value("retrieval_count").run()
    assert at.query_params["salience_field"] == "retrieval_count"
    # Back to the defaults: the link leaves them out.
    at.radio(key="w_ext_keep").set_value("recency").run()
    at.text_input(key="w_ext_salience").set_value("").run()
    assert "keep" not in at.query_params and "salience_field" not in at.query_params
    assert _shown(at) == _expected()


def test_a_bad_keep_in_the_link_is_warned_about() -> None:
    at = _open(keep="newest")
    assert [w.value for w in at.warning] == [
        "ignored keep=`'newest'` in the link: not one of: `'recency'`, `'salience'`"
    ]
    assert at.radio(key="w_ext_keep").value == "recency"
    assert _shown(at) == _expected()
    assert "keep" not in at.query_params
