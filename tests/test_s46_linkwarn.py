"""QA s46 (linkwarn): the app's link warnings quoted a value with an invisible word joiner
(U+2060) after its first colon, so a value copied back into a link did not match; and the
Overview's notes column repeated one long note on all of its rows."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest
from app_utils import open_app, open_linked

from memaudit_core import reports
from memaudit_ui.frame import _guard_shortcodes

JOINER = "\u2060"


def _messages(at) -> list[str]:
    return [m.value for m in (*at.error, *at.warning)]


@pytest.mark.parametrize(
    ("query", "span"),
    [
        ({"package": "sample:nope", "budget": "6"}, "`sample:nope`"),
        (
            {"package": "gen:event_graph:0:n_experiences=30000"},
            "`gen:event_graph:0:n_experiences=30000`",
        ),
        ({"package": "sample:update_chain", "store": "writer:nope:x"}, "`'writer:nope:x'`"),
        # A generated key the app rewrites: both keys of the note.
        ({"package": "gen:update_chain:5"}, "`'gen:update_chain:5'`"),
    ],
)
def test_a_link_warning_quotes_the_value_in_a_code_span_without_a_word_joiner(query, span):
    at = open_app("app.py", 300, **query)
    assert not at.exception, [e.value for e in at.exception]
    messages = _messages(at)
    assert any(span in m for m in messages), messages
    assert not any(JOINER in m for m in messages), messages


def test_a_page_setting_in_a_link_is_quoted_in_a_code_span():
    at = open_linked("pages/1_Budget_sweep.py", "sample:update_chain", None, methods="u:a:b")
    messages = _messages(at)
    assert any("methods=`'u:a:b'` in the link" in m for m in messages), messages
    assert any("`'u:a:b'` is not one of:" in m for m in messages), messages
    assert not any(JOINER in m for m in messages), messages


def test_the_shortcode_guard_leaves_code_spans_alone():
    # Outside a code span ":b:" would become an emoji: the word goes in a code span of its own
    # (QA s47: a word joiner did that before, and was copied with the id).
    assert _guard_shortcodes("x:b:c `x:b:c` ``y:`b`:c``") == "`x:b:c` `x:b:c` ``y:`b`:c``"


def test_the_overview_leaves_out_the_note_on_lost_units_it_does_not_list():
    # travel-assistant at its default budget 40: every row's only note was "Not every equally
    # good store was compared ... some units listed as lost may be kept", repeated on ten
    # rows; the Overview lists no lost units, so the note has nothing to qualify there.
    at = open_app("app.py", 300)
    assert not at.exception, [e.value for e in at.exception]
    lead = "Not every equally good store was compared"
    assert not [c.value for c in at.caption if lead in c.value]
    (table,) = [d.value for d in at.dataframe if "writer / store" in d.value.columns]
    assert len(table) == 10
    assert "notes" not in table.columns, table.columns
    # The note is still on the score itself, where the optimum's lost units are shown.
    from memaudit_core.package import load_package

    ov = reports.overview(
        load_package(Path(__file__).parents[1] / "sample_packages" / "travel-assistant.json"), 40
    )
    assert all(any(n.startswith(lead) for n in e.notes) for e in ov.evaluations)


def test_the_overview_model_splits_shared_and_row_notes():
    from memaudit_core.generators import generate

    ov = reports.overview(generate("update_chain"), 6)
    rows = [
        SimpleNamespace(score_notes=("shared.", "only a.")),
        SimpleNamespace(score_notes=("shared.",)),
        SimpleNamespace(score_notes=("b.", "shared.")),
    ]
    fake = dataclasses.replace(ov, evaluations=tuple(rows))
    assert fake.shared_notes == ("shared.",)
    assert fake.row_notes == ("only a.", "", "b.")
    # One row: its notes stay on the row.
    single = dataclasses.replace(ov, evaluations=(rows[0],))
    assert single.shared_notes == () and single.row_notes == ("shared. only a.",)
