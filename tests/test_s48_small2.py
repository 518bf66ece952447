"""End-to-end QA (session 48), findings 4a and 4c.

4a. ``/Generator?preview=`` warned "ignored preview='' in the link: empty". The preview
setting's default is no preview (a link without ``preview`` previews nothing but an open
generated package), and an empty text setting is its default on the other pages (the
External stores page's ``salience_field=``): an empty ``preview=`` now opens the page as a
link without it, without a word.

4c. At 1024 x 768 in presentation mode with the sidebar open (a 524 px column), the
Certification solve-time chart's legend entry "enumeration: n/a (at least 10^18 stores fit;
enumeration up to 100,000)" ran off the chart's right edge. Each entry is now on lines that
fit, every word of it kept (a downloaded chart has no other place for the reason).
"""

from __future__ import annotations

from app_utils import open_linked
from streamlit.testing.v1 import AppTest

from memaudit_core import curves
from memaudit_core.generators import generate
from memaudit_core.package import replace_package
from memaudit_ui import figures

GENERATOR = "pages/7_Generator.py"
OPEN = "sample:travel-assistant"
SEED3 = "gen:memaudit-small:3"


def _preview_keys(at: AppTest) -> list[str]:
    """The package key the preview's caption names (none without a preview)."""
    return [c.value.split("`")[1] for c in at.caption if c.value.startswith("Package key `")]


def _said(at: AppTest) -> list[str]:
    return [a.value for a in (*at.warning, *at.error)]


def test_an_empty_preview_in_a_link_is_no_preview_without_a_word() -> None:
    for value in ("", " "):
        at = open_linked(GENERATOR, OPEN, None, preview=value)
        assert _said(at) == [], (value, _said(at))
        assert _preview_keys(at) == []
        assert "preview" not in at.query_params
        assert [i.value for i in at.info] == ["Set the parameters and press **Preview**."]


def test_an_empty_preview_previews_the_open_generated_package_as_no_preview_does() -> None:
    at = open_linked(GENERATOR, SEED3, None, preview="")
    assert _said(at) == [], _said(at)
    assert _preview_keys(at) == [SEED3]
    assert "preview" not in at.query_params


# --------------------------------------------------------------------------- 4c

#: The presentation column at 1024 px with the sidebar open (QA: 524 px), less 4 px of slack.
COLUMN_PX = 520
#: A legend entry's symbol and gaps (px), and a character at about half the font's size (em):
#: Source Sans measured in Chromium at 21 px is narrower (about 0.4 em), so this errs wide.
SYMBOL_PX, EM_PER_CHAR = 40, 0.5
#: What the report's runs say of the engines that cannot run on this package (log1p, every
#: budget far past the stores enumeration takes): written here, not read from the code.
MILP_NOTE = "HiGHS MILP: n/a (MILP covers cap1 and linear)"
ENUM_NOTE = "enumeration: n/a (at least 10^18 stores fit; enumeration up to 100,000)"


def test_the_solve_time_legend_fits_a_presentation_column_every_word_kept() -> None:
    package = replace_package(generate("event_graph", seed=0), saturation="log1p")
    report = curves.certification_report(package, [242], total_time_limit=2.0)
    fig = figures.engine_time_curve(report, "Solve time per engine vs budget · x", True)
    font_px = fig.layout.legend.font.size
    # The legend starts at the plot's left edge, margin.l into the column.
    room_px = COLUMN_PX - fig.layout.margin.l
    names = [t.name for t in fig.data if t.name and t.showlegend is not False]
    assert {MILP_NOTE, ENUM_NOTE} <= {figures.plain_text(n) for n in names}, names
    for name in names:
        for line in name.split("<br>"):
            width_px = SYMBOL_PX + EM_PER_CHAR * font_px * len(line)
            assert width_px <= room_px, (line, width_px, room_px)
