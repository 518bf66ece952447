"""Plotly figure builders: one function per chart, readable on a projector.

Builders take the core's frozen results (or plain columns from them) and only lay them out;
they never solve or score. Every figure has a title, axis labels with units and a legend.
"""

from __future__ import annotations

import copy
import functools
import html
import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from memaudit_core import palette
from memaudit_core.analysis import CUT_TO_FIT, loss_tolerance, ratio_text
from memaudit_core.curves import ABLATION_LABELS, ENGINE_LABELS
from memaudit_core.explain import HEATMAP_ROWS, TIMELINE_DENSE
from memaudit_core.robustness import (
    FULL_OPT_LABEL,
    RatioColumn,
    ablation_label,
    cost_rule_ratio_columns,
)
from memaudit_core.solvers import gap_percent, value_text

if TYPE_CHECKING:
    from memaudit_core.explain import GraphData, HeatmapData, TimelineData
    from memaudit_core.robustness import (
        CapacitySensitivity,
        CostRuleSensitivity,
        NoiseSensitivity,
    )

#: Colours by role, used consistently across pages.
#:
#: Every set of colours one chart can show (OPT, the ablation grey and the writers' and
#: stores' palettes on the budget curves; the ablation pools; the candidate types on the
#: timeline; the unit kinds; the graph layers; the engines) keeps each pair of colours at a
#: CIE76 distance of 12 or more under normal vision and simulated protanopia, deuteranopia and
#: tritanopia (Machado et al. 2009, severity 1), and each line colour at 3:1 contrast or more
#: on white (WCAG 1.4.11: a thin line on a projector). QA s47: no_validity_gvt's purple and the
#: OPT blue were one colour (distance 2.6) to a protanope, fact_only and recency_raw 3.1, and
#: the timeline drew graph_edge and external alike; tests/test_s47_cvd.py checks every set.
COLORS = {
    "opt": palette.OPT_COLOR,
    "bound": "#9bb7d8",
    "writer": "#e69f00",
    "store": "#009e73",
    "external": "#cc79a7",
    "plugin": "#56b4e9",
    "ablation": palette.ABLATION_COLOR,
    "lost": "#c43c39",
    "kept": "#3a9d5d",
}
#: Outline of the focus unit's column in the coverage heatmap (Okabe-Ito vermillion: apart
#: from the blues of the cells).
FOCUS_COLOR = "#d55e00"
#: Unit-kind colours (open vocabulary: unknown kinds fall back to grey).
KIND_COLORS = {
    "current_truth": "#1b4f8a",
    "invalidation": "#bb3333",
    "temporal_order": "#8866cc",
    "temporal_interval": "#aa77cc",
    "stale": "#888888",
    "fact": "#006622",
    "preference": "#cc7733",
    "context": "#aa8855",
    "abstention": "#3399aa",
    "provenance": "#776655",
}

#: Tallest chart in presentation mode: a 1280 x 720 screen shows 645 px under the app's
#: header, and a chart there is title, plot and legend on one screen (QA s18c: 8 of 17 charts
#: were taller, an Evidence heatmap 3,132 px). render.chart holds every chart to it but
#: those marked by :func:`allow_scroll`.
PRESENT_MAX_HEIGHT = 630
#: Key of ``layout.meta`` by which a presentation chart says it may be taller than
#: :data:`PRESENT_MAX_HEIGHT`: its rows of bars need more than one screen to stay readable,
#: and held to one screen they overprinted (speaker QA s46: the cost-rule panels' 7 writers
#: in 40 px rows, the drop chart's 21 value labels). render.chart shows it whole; the page
#: scrolls.
SCROLLS_META = "memaudit_scrolls"


def allow_scroll(fig: go.Figure) -> go.Figure:
    """Mark ``fig`` as one that may be taller than a screen in presentation mode."""
    meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
    fig.update_layout(meta={**meta, SCROLLS_META: True})
    return fig


def scrolls(fig: go.Figure) -> bool:
    """True when ``fig`` was marked by :func:`allow_scroll`."""
    meta = fig.layout.meta
    return isinstance(meta, dict) and meta.get(SCROLLS_META) is True


#: Chart widths (px) the legend below a chart is laid out for: a chart at least this wide
#: shows every legend row above the figure's bottom edge. Presentation: a 1024 px projector
#: with the sidebar open (524 px), which the speaker opens for the page links and the budget
#: and which then stays open (speaker QA s45: designed for 780 px, legends lost their last
#: rows there); normal: 1024 px with the sidebar open (564 px); half: a chart in one of two
#: columns there (274 px). The Evidence explorer's timeline and graph space their labels and
#: markers for the same widths (speaker QA s46: at 780 px the timeline's last marker was cut
#: and the graph's layer names ran together); in presentation mode the graph then cuts long
#: labels sooner, on a wider screen too (the hover has them whole).
LEGEND_DESIGN_PX = {"present": 520, "normal": 564, "half": 274}
#: Width (px) of a chart's PNG / SVG export (render.chart). The Evidence explorer's timeline
#: and graph are laid out again for it: laid out for the screen's design width, a 1400 px
#: export cut its ids as for a 520 px column (speaker QA s48).
EXPORT_WIDTH_PX = 1400

#: Space (px) between the plot area and its axes' tick labels. Streamlit's chart theme sets
#: ``margin.pad`` = 10 in the browser, while a PNG / SVG export (kaleido) has plotly's 0: the
#: exported Overview bars had their names flush against the values inside the bars ("gvt"
#: touching "0.969", QA s43), where the app shows a gap. Set on every figure, so both agree.
AXIS_PAD_PX = 10

#: The plotly template every figure uses (:func:`base_layout`, :func:`base_layout_dict`).
TEMPLATE = "plotly_white"
#: One name for F on every value axis (the objective: weighted evidence value).
VALUE_AXIS = "F (weighted evidence value)"


#: Text colour of every chart: Streamlit's chart theme draws axis text in a light grey
#: (3.7:1 on white, projector QA), so it is set explicitly.
TEXT_COLOR = "#262730"


#: Where a long title may break, best first: (separator, what ends the line, what starts the
#: next). A space next to "=" is no break: "B = 40" stays on one line (QA s42 round 2).
_TITLE_BREAKS = ((": ", ":", ""), (" · ", " ·", ""), (", ", ",", ""), (" vs ", "", "vs "))
_TITLE_SPACE = re.compile(r"(?<!=) (?!=)")


#: Width of a title character, in em, that every line is held to: the app's long titles in
#: Source Sans ran 0.40-0.435 em a character in Chromium (QA s43, each title's box measured
#: against its SVG); a little more leaves room for capitals and digits ("OPT", "1310").
TITLE_EM_PER_CHAR = 0.45
#: Where plotly starts a title: 5 % into the figure (its default ``title.x``).
TITLE_X = 0.05


def title_line_limit(present: bool, half: bool = False) -> int:
    """The most characters a title line may have on a chart of this width class.

    Normal mode is sized for the narrowest chart it is designed for, full width at 1024 px
    with the sidebar open (``LEGEND_DESIGN_PX["normal"]``, 564 px): 80 characters ran 125 px
    past it (QA s43: "...: Validity-aware summariser vs OPT" cut at "summ"). A title that fits
    there stays on one line at 1920 px too; a longer one wraps at every width, as no width is
    known when the figure is built.

    >>> title_line_limit(False)
    59
    """
    if present:
        # A 1024 px projector with the sidebar open (``LEGEND_DESIGN_PX["present"]``): 52
        # characters, tuned for it closed (824 px), cut "veg-to-pescatarian" (speaker QA s45).
        font_px = 22 + 5  # base_layout's title font in presentation mode
        return int((1 - TITLE_X) * LEGEND_DESIGN_PX["present"] / (TITLE_EM_PER_CHAR * font_px))
    if half:
        # A chart in one of two columns is about 600 px wide at 1280 px (app QA: a title
        # ran off its column at "external-stores-dem").
        return 44
    room = (1 - TITLE_X) * LEGEND_DESIGN_PX["normal"]
    font_px = 15 + 5  # base_layout's title font in normal mode
    return int(room / (TITLE_EM_PER_CHAR * font_px))


def wrap_title(title: str, present: bool, half: bool = False) -> str:
    """``title`` broken onto lines (``<br>``) that fit a chart's width.

    Breaks after the last ": ", " · ", ", " or " vs " before the limit, else at a space (never
    one beside "=", so "B = 40" is never split), so a long store name never runs off the edge
    or into the legend (projector QA, 1024-1280 px); what is left is wrapped the same way.

    >>> wrap_title("Value kept by unit kind at budget 24 words: Letta vs OPT over P+", False)
    'Value kept by unit kind at budget 24 words:<br>Letta vs OPT over P+'
    """
    limit = title_line_limit(present, half)
    if "<br>" in title:
        return title
    lines = []
    rest = title
    while len(rest) > limit:
        line, rest = _title_cut(rest, limit)
        if not rest:
            break
        lines.append(line)
    lines.append(rest if rest else line)
    return "<br>".join(lines)


def _title_cut(title: str, limit: int) -> tuple[str, str]:
    """The first line of ``title`` (at most ``limit`` characters where a break allows) and
    the rest. A title with no break at all is cut inside its longest run, so no line is
    longer than ``limit``.

    QA s42 round 2 (defect 2): "Coverage a_ur · S = Validity-aware summariser, B = 40 words:
    8 candidates × 20 units" broke inside "B = 40", its ": " being past the limit."""
    for sep, end, start in _TITLE_BREAKS:
        cut = title.rfind(sep, 0, limit)
        if cut > limit // 3:
            return title[:cut] + end, start + title[cut + len(sep) :]
    # The whole title searched: a search cut at ``limit`` does not see an "=" just past it.
    spaces = [m.start() for m in _TITLE_SPACE.finditer(title) if m.start() < limit]
    # A number keeps its unit where another space allows ("budget 24<br>words" read badly
    # once presentation lines were cut to 40 characters, s45).
    after_word = [s for s in spaces if not title[s - 1].isdigit()]
    for found in (after_word, spaces):
        if found and found[-1] > limit // 3:
            return title[: found[-1]], title[found[-1] + 1 :]
    # An earlier break, then a cut inside one long run (QA s42: a generated package's id,
    # "event-graph-n20-s3-n_entities=3-update_rate=0.5-...", 140 characters without a space,
    # ran off the chart and off its PNG: its " · " came before a third of the line).
    for sep, end, start in _TITLE_BREAKS:
        cut = title.rfind(sep, 0, limit)
        if cut > 0:
            return title[:cut] + end, start + title[cut + len(sep) :]
    if spaces and spaces[-1] > 0:
        return title[: spaces[-1]], title[spaces[-1] + 1 :]
    cut = max(title.rfind(ch, 0, limit) for ch in "-_+;,=")
    if cut > 0:
        return title[: cut + 1], title[cut + 1 :]
    return title[:limit], title[limit:]


def _title_and_margin(title: str, present: bool, size: int, half: bool = False) -> tuple[dict, int]:
    text = wrap_title(title, present, half)
    extra = text.count("<br>")
    # Pinned to the top of the figure, and pushed down per extra line: plotly anchors a
    # multi-line title by its first line, so the first line rose above the figure (QA: cut
    # by 15 px in presentation mode).
    return {
        "text": text,
        "font": {"size": size + 5, "color": TEXT_COLOR},
        "yref": "container",
        "y": 1,
        "yanchor": "top",
        "pad": {"t": 12 + (size + 10) * extra},
    }, 70 + 2 * (size + 10) * extra


def base_layout(
    fig: go.Figure, title: str, present: bool = False, height: int = 420, half: bool = False
) -> go.Figure:
    """Fonts, margins, title and legend every chart shares; ``half`` for a chart drawn in one
    of two columns (its title wraps sooner)."""
    size = 22 if present else 15
    title_dict, top = _title_and_margin(title, present, size, half)
    merge_layout(
        fig,
        title=title_dict,
        font={"size": size, "color": TEXT_COLOR},
        height=max(int(height * 1.35), 560) if present else height,
        margin={"l": 70, "r": 30, "t": top, "b": 60, "pad": AXIS_PAD_PX},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "right", "x": 1},
    )
    _set_template(fig)
    if fig.layout.legend.font.size is None:
        merge_layout(fig, legend={"font": {"size": size - 1, "color": TEXT_COLOR}})

    # Streamlit's chart theme shrinks tick labels (12 px) and axis titles (17.5 px in
    # presentation mode); set them explicitly so charts read from the back of a room,
    # except where a builder already chose a size.
    for axis in _axes(fig):
        update = {}
        if axis.tickfont.size is None:
            update["tickfont"] = {"size": size - (3 if present else 1), "color": TEXT_COLOR}
        if axis.title.font.size is None:
            update["title"] = {"font": {"size": size, "color": TEXT_COLOR}}
        merge_axis(fig, axis, update)
    return fig


def _merged(old: Any, new: Any) -> Any:
    """``new`` over ``old``, dicts merged key by key, as plotly's ``update`` merges them.

    >>> _merged({"font": {"size": 12, "color": "red"}, "x": 1}, {"font": {"size": 14}})
    {'font': {'size': 14, 'color': 'red'}, 'x': 1}
    """
    if isinstance(old, dict) and isinstance(new, dict):
        return {**old, **{key: _merged(old.get(key), value) for key, value in new.items()}}
    return new


def merge_layout(fig: go.Figure, **updates: Any) -> go.Figure:
    """``fig.update_layout(**updates)`` for plain values and nested dicts (no ``a_b`` paths),
    without plotly's update machinery: each property's current value and its update are
    merged, then assigned. On a :func:`new_figure` a chart's shared settings take 1.6 ms this
    way against 6-10 ms through ``update_layout``, which works through every key path even
    when it validates nothing."""
    for prop, value in updates.items():
        current = fig.layout[prop]
        old = current.to_plotly_json() if hasattr(current, "to_plotly_json") else current
        fig.layout[prop] = _merged(old, value)
    return fig


def _axes(fig: go.Figure) -> list[Any]:
    """Every x and y axis of ``fig`` (each subplot's), x axes first."""
    return [*fig.select_xaxes(), *fig.select_yaxes()]


def merge_axis(fig: go.Figure, axis: Any, update: Mapping[str, Any]) -> None:
    """``axis.update(update)`` (nested dicts) for one axis of ``fig``, as :func:`merge_layout`
    does it: assigned to the layout, which a :func:`new_figure` takes as given."""
    if update:
        fig.layout[axis.plotly_name] = _merged(axis.to_plotly_json(), dict(update))


@functools.cache
def _template_json(name: str) -> dict:
    """A named plotly template as plain JSON, validated once per process.

    Setting ``template="plotly_white"`` on a figure validates and copies the whole template
    (every trace type's defaults) each time: about 10 ms per figure.
    """
    return pio.templates[name].to_plotly_json()


def _set_template(fig: go.Figure) -> None:
    """The app's template on ``fig``: by name on a validating figure (plotly copies its
    registered template), as the template's JSON, copied, on a :func:`new_figure` (which takes
    it as given: 1 ms against 14-22 ms)."""
    if getattr(fig, "_validate", True):
        fig.update_layout(template=TEMPLATE)
    else:
        # Assigned, not passed to update_layout: an update walks the template's every key
        # (0.46 s) even when it does not validate them.
        fig.layout.template = copy.deepcopy(_template_json(TEMPLATE))


def new_figure(data: Any = None, **kwargs: Any) -> go.Figure:
    """``go.Figure(data, **kwargs)`` whose later updates plotly does not validate again.

    Every builder starts its figure here. Its traces are validated where the builder makes
    them (``go.Scatter(...)``); the figure then takes them, and its layout updates, as given.
    Validating them again made a rerun of the Overview, the Budget sweep, the Evidence
    explorer and the Ablations page 1.2-1.7x slower on the sample packages (sixty-first
    session, warm caches, ``bench/exp_figure_build.py``).
    A test rebuilds every chart the pages draw through plotly's validating constructor and
    compares the JSON (``tests/test_s61_figures_unvalidated.py``), so no builder relies on
    a coercion that only validation makes (such as a title given as a bare string).
    ``data`` may be a figure (from ``make_subplots``): its grid comes along.

    Examples
    --------
    >>> fig = new_figure(go.Bar(x=["a"], y=[1]))
    >>> fig.update_layout(title={"text": "t"}).layout.title.text
    't'
    """
    return go.Figure(data, _validate=False, **kwargs)


def base_layout_dict(title: str, present: bool = False, height: int = 420) -> dict:
    """:func:`base_layout` as a plain layout dict, for :func:`prevalidated_figure`.

    Axis tick fonts are left to the caller (``base_layout`` sets them only where a builder
    has not chosen a size).
    """
    size = 22 if present else 15
    title_dict, top = _title_and_margin(title, present, size)
    return {
        "title": title_dict,
        "font": {"size": size, "color": TEXT_COLOR},
        "height": max(int(height * 1.35), 560) if present else height,
        "margin": {"l": 70, "r": 30, "t": top, "b": 60, "pad": AXIS_PAD_PX},
        "template": _template_json(TEMPLATE),
        "legend": {
            "orientation": "h",
            "yanchor": "bottom",
            "y": 1.02,
            "xanchor": "right",
            "x": 1,
            "font": {"size": size - 1, "color": TEXT_COLOR},
        },
    }


def prevalidated_figure(data: list[dict], layout: dict) -> go.Figure:
    """A figure from plain trace and layout dicts, skipping plotly's property validation.

    Only for builders whose dicts have a fixed, tested shape (a test rebuilds each one through
    the validating constructor and compares): validation is most of the cost of a small
    figure. The figure deep-copies ``data`` and ``layout``, so the cached template is never
    shared with, or changed through, a figure.
    """
    return go.Figure({"data": data, "layout": layout}, _validate=False)


#: What a ratio chart adds to the name of a store scored cut to fit the budget.
CUT_MARK = f"({CUT_TO_FIT})"
#: Names up to this long keep :data:`CUT_MARK` on their line ("Raw logger (cut to fit)").
CUT_MARK_INLINE_MAX = 12


def cut_name(name: str, cut: bool) -> str:
    """``name`` with :data:`CUT_MARK` when the store was scored cut to fit the budget: a chart
    exported from the Compare page showed a pruned store as if whole (QA s44).

    >>> cut_name("Raw logger", True), cut_name("Raw logger", False)
    ('Raw logger (cut to fit)', 'Raw logger')
    """
    return f"{name} {CUT_MARK}" if cut else name


def ratio_bars(
    labels: Sequence[str],
    ratios: Sequence[float | None],
    kinds: Sequence[str],
    title: str,
    present: bool = False,
    denominator: str = "OPT",
    highlight: int | None = None,
    cut: Sequence[bool] | None = None,
) -> go.Figure:
    """Horizontal bars of F / OPT per writer or store; OPT drawn as the 1.0 line.

    ``None`` ratios (OPT = 0) are shown as an empty bar labelled "n/a". ``denominator`` names
    what the ratios divide by: a limited run's ``"incumbent"`` is not called OPT.
    ``highlight`` is the position of a bar to outline (the store chosen in the sidebar).
    ``cut`` flags the stores that cost more than the budget and were scored cut to fit: their
    names say so, in the app and in the exported image.
    """
    if cut is not None:
        # QA s44: a cut store's "1.000" read as the store as written scoring the optimum; only
        # the table's last column, off-screen in presentation mode, said it was cut.
        # A long name takes the mark on a line of its own, as the timeline's "(chosen)": on
        # one line, "Letta (core memory + archival) (cut to fit)" left the bars a third of the
        # chart at 1024 px. Not in presentation mode: the sidebar is closed, the chart wide,
        # and two lines of its larger text did not fit a row.
        wrap = CUT_MARK_INLINE_MAX if not present else math.inf
        labels = [
            (f"{name}<br>{CUT_MARK}" if len(name) > wrap else f"{name} {CUT_MARK}") if c else name
            for name, c in zip(labels, cut, strict=True)
        ]
    fig = new_figure()
    for kind in dict.fromkeys(kinds):
        idx = [i for i, k in enumerate(kinds) if k == kind]
        fig.add_bar(
            y=[labels[i] for i in idx],
            x=[ratios[i] if ratios[i] is not None else 0 for i in idx],
            text=[f"{ratios[i]:.3f}" if ratios[i] is not None else "n/a" for i in idx],
            # Inside the bar, outside the short ones, where "auto" hid them (app QA: 0 and n/a
            # had no label).
            textposition=[
                "inside" if ratios[i] is not None and ratios[i] >= 0.25 else "outside" for i in idx
            ],
            # At the bar's start, so no label reaches the OPT line at 1 (QA s42, defect 3: at
            # the bar's end, the "1.000" of a bar at ratio 1 was drawn over the dashed line; a
            # short bar's label outside it ends before 0.25 + its width, far from the line).
            insidetextanchor="start",
            orientation="h",
            name={
                "writer": "reference writer",
                "store": "package store",
                "plugin": "plugin writer (chosen in the sidebar)",
                "external": "external store: F / OPT over P+ (its memories added)",
            }.get(kind, kind),
            marker_color=COLORS.get(kind, "#555"),
            cliponaxis=False,
        )
    if highlight is not None:
        # An outline drawn as a shape, not as the bar's border: a border also outlined the
        # legend swatch of the bar's whole group (projector QA).
        fig.add_shape(
            type="rect",
            xref="x",
            yref="y",
            x0=0,
            x1=ratios[highlight] or 0,
            y0=labels[highlight],
            y1=labels[highlight],
            y0shift=-0.4,
            y1shift=0.4,
            line={"color": "#111111", "width": 3},
            fillcolor="rgba(0,0,0,0)",
        )
    size = 22 if present else 15  # base_layout's font, the label's
    fig.add_vline(
        x=1.0,
        line_dash="dash",
        line_color=COLORS["opt"],
        annotation_text=f"{denominator} = 1",
        # Above the plot, ending at the line: no bar reaches it there (QA s42 round 2, defect
        # 4c: right of the line at the bottom it sat flush against a bar ending at 1), and it
        # takes no width from the bars. Speaker QA s50: right of the line it needed ~110 px
        # of range and margin past 1, and at 1024 px with the sidebar open in presentation
        # mode the bars had 140 px for 0..1 (0.969 and 0.725 35 px apart).
        annotation_position="top left",
        annotation_yanchor="bottom",
        annotation_yshift=2,
    )
    upper = max([1.0] + [r for r in ratios if r is not None])
    meaning = "1 = optimal" if denominator == "OPT" else "not a proven optimum"
    # A little room past the largest bar, so the dashed line at 1 is not the plot's edge.
    fig.update_xaxes(title_text=f"ratio F / {denominator} ({meaning})", range=[0, upper * 1.04])
    # No y title at all: an empty one ("") still had plotly's automargin keep its standoff and
    # a line for it (45 px of the plot at 1024 px, speaker QA s50).
    fig.update_yaxes(title_text=None, autorange="reversed")
    # Rows of two lines (a cut store's mark below its name) get room for the second line.
    two_line = sum("<br>" in name for name in labels)
    fig = base_layout(fig, title, present, height=max(340, 110 + 38 * len(labels) + 18 * two_line))
    # The OPT label's line above the plot, below the title.
    fig.update_layout(margin={"t": fig.layout.margin.t + math.ceil(1.4 * size)})
    # The legend goes below the axis title so it never collides with the OPT label.
    fig.update_layout(
        legend={
            "orientation": "h",
            "yanchor": "top",
            "y": RATIO_LEGEND_Y,
            "x": 0,
            "xanchor": "left",
        },
        margin={"b": 110},
    )
    # One size for every bar label: plotly shrank a label inside a bar to the bar's height
    # (QA s42 round 2, defect 4b: ~12 px inside beside ~15 px outside); "show" keeps the size
    # even where the label is taller than the bar.
    fig.update_traces(textfont={"size": size}, selector={"type": "bar"})
    fig.update_layout(uniformtext={"minsize": size, "mode": "show"})
    _ratio_bars_margins(fig, labels, present)
    return fig


#: What the ratio bars' left margin holds besides the widest name: the tick labels' pad and
#: plotly's automargin pad (measured in Chromium on the Overview, s54: 22.4 to 23.0 px at 14
#: and 19 px tick labels; no y title).
RATIO_BARS_NAME_ROOM_PX = 23.0
#: The legend below the ratio bars (``y`` = -0.18 of the plot, top-anchored): a row's height
#: by presentation mode, and what plotly's automargin adds to the rows (the legend's border
#: and padding, 11 px, and its 12 px pad), measured in Chromium (s54: 32, 53 px for one and two
#: rows at 14 px; 41, 71 px at 21 px; pushed 12 px more).
RATIO_LEGEND_ROW_PX = {False: 21, True: 30}
RATIO_LEGEND_EXTRA_PX = 23
RATIO_LEGEND_Y = -0.18


def _ratio_bars_margins(fig: go.Figure, labels: Sequence[str], present: bool) -> None:
    """Ask for the left and bottom margins plotly's ``automargin`` finds, so the Overview's
    ratio bars are drawn once (see :func:`label_margin_px`).

    The chart's title names the budget, so every budget change drew it from scratch; with the
    70 px left margin the writer names were measured and the margin widened (113 px, 146 px in
    presentation mode), and the chart drawn again (s54). The bottom margin holds the legend
    (bars of two kinds or more) below the axis title, where it was: a legend at ``y`` = -0.18
    of the plot, in a chart ``H`` tall with top margin ``t``, needs the ``b`` with
    ``b = 0.18 (H - t - b) + legend`` (plotly.js's ``doAutoMargin``). Its rows are counted at
    the chart's width at 1024 px (:data:`LEGEND_DESIGN_PX`, sidebar open; presentation mode
    opens with it closed, :data:`PRESENT_CHART_PX`): a chart where it takes more rows gets
    them from plotly as before, one where it takes fewer keeps the room under it.
    """
    if present and (fig.layout.height or 0) > PRESENT_MAX_HEIGHT:
        fig.update_layout(height=PRESENT_MAX_HEIGHT)  # what render.chart shows anyway
    # A name and its cut mark on two lines take the longer line's width.
    lines = [line for label in labels for line in str(label).split("<br>")]
    font = fig.layout.yaxis.tickfont.size
    left = max(fig.layout.margin.l, label_margin_px(lines, font, RATIO_BARS_NAME_ROOM_PX))
    bottom = fig.layout.margin.b
    shown = [str(t.name) for t in fig.data if t.name and t.showlegend is not False]
    if len(shown) > 1:  # plotly shows no legend for one trace
        legend_px = fig.layout.legend.font.size
        room = (PRESENT_CHART_PX if present else LEGEND_DESIGN_PX["normal"]) - left
        # Side by side if they all fit, else a grid of the widest entry (plotly.js).
        entries = [text_em(name) * legend_px + LEGEND_ENTRY_PX for name in shown]
        per_row = len(entries) if sum(entries) <= room else max(1, int(room // max(entries)))
        rows = math.ceil(len(entries) / per_row)
        legend = rows * RATIO_LEGEND_ROW_PX[present] + RATIO_LEGEND_EXTRA_PX
        share = -RATIO_LEGEND_Y
        plot_top = fig.layout.height - fig.layout.margin.t
        bottom = max(bottom, math.ceil((legend + share * plot_top) / (1 + share)))
    fig.update_layout(margin={"l": left, "b": bottom})


#: Longest axis title line (characters) a chart in presentation mode keeps on one line: the
#: plot of a 520 px chart beside its tick labels is about 280 px, 27 characters at 21-22 px
#: (speaker QA s45: "F kept (weighted evidence value)" was cut to "...value" at 1024 px with
#: the sidebar open).
PRESENT_AXIS_TITLE_CHARS = 27


def _axis_title(text: str, font_px: float, present: bool) -> str:
    """``text`` broken before its parenthesis (``<br>``) in presentation mode when longer than
    :data:`PRESENT_AXIS_TITLE_CHARS`; unchanged otherwise.

    >>> _axis_title("F kept (weighted evidence value)", 21, True)
    'F kept<br>(weighted evidence value)'
    """
    if not present or len(text) <= PRESENT_AXIS_TITLE_CHARS or " (" not in text:
        return text
    head, tail = text.split(" (", 1)
    return f"{head}<br>({tail}"


def kind_loss_bars(
    kinds: Sequence[str],
    store_values: Sequence[float],
    opt_values: Sequence[float],
    title: str,
    cost_unit_label: str = "F kept (weighted evidence value)",
    present: bool = False,
) -> go.Figure:
    """Grouped bars per unit kind: value kept by the store vs by the optimum."""
    fig = new_figure()
    fig.add_bar(x=list(kinds), y=list(opt_values), name="optimum", marker_color=COLORS["opt"])
    fig.add_bar(x=list(kinds), y=list(store_values), name="store", marker_color=COLORS["writer"])
    fig.update_layout(barmode="group")
    fig.update_xaxes(title_text="evidence unit kind")
    fig.update_yaxes(title_text=cost_unit_label)
    return base_layout(fig, title, present)


#: Fill patterns of the cost histogram's candidate types, in sorted type order (solid first).
_TYPE_PATTERNS = ("", "/", "x", ".", "\\", "+", "-", "|")


#: At most this many bars in the cost histogram: eight "35–39" labels fit under a half-width
#: chart at 1024 px without plotly turning them on their side (onto the legend).
COST_BINS_MAX = 8


@dataclass(frozen=True)
class CostBins:
    """Equal-width bins ``[start + k * width, start + (k + 1) * width)`` over some costs.

    ``whole``: every cost is a whole number, so a bin holds the costs ``low`` to
    ``low + width - 1`` and is named by them (``"5–9"``).
    """

    start: float
    width: float
    count: int
    whole: bool

    def edge(self, k: int) -> float:
        return self.start + k * self.width

    def index(self, cost: float) -> int:
        # The tolerance keeps a cost on an edge in the bin it opens despite float division
        # (0.3 / 0.1 is 2.9999999999999996).
        k = math.floor((cost - self.start) / self.width + 1e-9)
        return min(max(k, 0), self.count - 1)

    def number(self, value: float) -> str:
        """A bound as the axis writes it: "1,000", not "1e+03"; no float noise.

        Other than whole costs, as many decimals as the width has (trailing zeros dropped):
        six significant digits named the edges of 0.05-wide bins at 123,456.7 all "123,457"
        and a bin from 2e8 "2e+08" (app QA s44).

        >>> b = cost_bins([123456.7, 123456.9])
        >>> [b.label(k) for k in range(b.count)][:2]
        ['123,456.7 to under 123,456.75', '123,456.75 to under 123,456.8']
        """
        if self.whole:
            return f"{int(value):,}"
        text = f"{value:,.{self.decimals}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text

    @property
    def decimals(self) -> int:
        """The decimals that write the width, hence every edge, exactly (0.25: 2; 2e8: 0)."""
        d = 0
        while d < 30 and abs(round(self.width, d) - self.width) > 1e-9 * self.width:
            d += 1
        return d

    def label(self, k: int) -> str:
        low, n = self.edge(k), self.number
        if not self.whole:
            return f"{n(low)} to under {n(self.edge(k + 1))}"
        return n(low) if self.width == 1 else f"{n(low)}–{n(low + self.width - 1)}"


def cost_bins(costs: Sequence[float], max_bins: int = COST_BINS_MAX) -> CostBins:
    """The narrowest 1, 2, 2.5 or 5 x 10^k wide bins (whole widths for whole costs), edges at
    multiples of the width, that hold ``costs`` in at most ``max_bins`` bins.

    >>> b = cost_bins([2, 3, 5, 6, 7, 8, 9, 12, 37])
    >>> b.start, b.width, b.count, b.label(1)
    (0, 5, 8, '5–9')
    >>> cost_bins([4, 4]).label(0), cost_bins([0.15, 0.95]).label(0)
    ('4', '0 to under 0.2')
    """
    lo, hi = min(costs), max(costs)
    whole = all(float(c).is_integer() for c in costs)
    span = hi - lo
    magnitude = 10.0 ** math.floor(math.log10(span / max_bins)) if span > 0 else 1.0
    if whole:
        magnitude = max(1, int(magnitude))
    while True:
        for factor in (1, 2, 2.5, 5):
            width = factor * magnitude
            if whole and width != int(width):
                continue
            if whole:
                width = int(width)
            start = math.floor(lo / width) * width
            count = math.floor((hi - start) / width + 1e-9) + 1
            if count <= max_bins:
                return CostBins(start, width, count, whole)
        magnitude *= 10


def _cost_bars(
    fig: go.Figure, costs: Sequence[float], types: Sequence[str], cost_unit: str
) -> None:
    """The histogram's stacked bars, one trace per candidate type, and its x ticks."""
    bins = cost_bins(costs)
    counts = Counter((t, bins.index(c)) for c, t in zip(costs, types, strict=True))
    totals = Counter(bins.index(c) for c in costs)
    ks = range(bins.count)
    centres = [bins.edge(k) + bins.width / 2 for k in ks]
    names = [bins.label(k) for k in ks]
    for k, ctype in enumerate(sorted(set(types))):
        fig.add_bar(
            x=centres,
            y=[counts[(ctype, j)] for j in ks],
            width=bins.width,
            name=ctype,
            # Names and unit as data, not template text: a "%{" in them is not a field.
            customdata=[[names[j], totals[j], cost_unit, ctype] for j in ks],
            hovertemplate="cost %{customdata[0]} %{customdata[2]}<br>%{customdata[3]}: %{y} "
            "of %{customdata[1]} candidates<extra></extra>",
            # The type colours of the Evidence explorer, not plotly's defaults (projector QA),
            # and a fill pattern per type: under deuteranopia the tombstone red and the
            # atomic-fact green, stacked in one bar, are the same olive (QA s20c).
            marker_color=TYPE_COLORS.get(ctype),
            marker_pattern_shape=_TYPE_PATTERNS[k % len(_TYPE_PATTERNS)],
            marker_line={"color": "white", "width": 1},
        )
    edges = [bins.edge(k) for k in range(bins.count + 1)]
    if bins.whole:
        fig.update_xaxes(tickmode="array", tickvals=centres, ticktext=names)
    else:
        fig.update_xaxes(tickmode="array", tickvals=edges, ticktext=[bins.number(e) for e in edges])
    fig.update_xaxes(range=[edges[0], edges[-1]])


def cost_histogram(
    costs: Sequence[float], types: Sequence[str], cost_unit: str, title: str, present: bool = False
) -> go.Figure:
    """Candidate costs, stacked by candidate type, in bins whose bounds the axis names.

    QA s44: plotly's own bins were 5 wide from -0.5 with ticks at their centres, so the bar
    over "7" (costs 5 to 9) read as 21 candidates costing 7 words. Whole costs: each bar is
    named by the costs it holds ("5–9"); other costs: ticks at the bin edges.
    """
    fig = new_figure()
    if len(costs):
        _cost_bars(fig, costs, types, cost_unit)
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title_text=f"candidate cost ({cost_unit})")
    fig.update_yaxes(title_text="candidates")
    base_layout(fig, title, present, height=360)
    _legend_below(fig, present)  # five types above the plot ran into the title (QA)
    return fig


#: Row pitch (px) of a horizontal count chart, per category: a 14-19 px tick label with room
#: between rows (QA s40: 12 ticks crammed into 90 px overprinted at 1024 px).
COUNT_ROW_PX = 30
#: Rows' worth of height every count chart gets, so one or two categories are not a sliver.
COUNT_MIN_ROWS = 3


def count_dtick(largest: int, max_steps: int) -> int:
    """The smallest whole-number tick step of 1, 2, 2.5 or 5 x 10^k that reaches ``largest``
    from 0 in at most ``max_steps`` steps.

    >>> [count_dtick(n, 4) for n in (0, 2, 8, 11, 60, 87, 130)]
    [1, 1, 2, 5, 20, 25, 50]
    >>> count_dtick(8, 1), count_dtick(87, 3)
    (10, 50)
    """
    magnitude = 1
    while True:
        for factor in (1, 2, 2.5, 5):
            step = factor * magnitude
            if step == int(step) and largest <= step * max(1, max_steps):
                return int(step)
        magnitude *= 10


def count_bars(
    labels: Sequence[str],
    counts: Sequence[int],
    title: str,
    axis: str,
    present: bool = False,
    color: str = "#1b4f8a",
    rows: int | None = None,
) -> go.Figure:
    """Horizontal bars of counts per category (``axis`` names them), the first one on top.

    Horizontal so the names read level at any width, and as tall as the categories need
    (QA s40: upright bars in one of two columns at 1024 px rotated the names until they ran
    together, "compound_updatetombstone", and a fixed 340 px crammed ticks 0-11 into 90 px).
    ``rows`` is the number of rows to size for (at least ``len(labels)``): two charts shown
    side by side pass the larger count so they line up.
    """
    n_rows = max(len(labels), rows or 0, COUNT_MIN_ROWS)
    font = 20 if present else 14
    tick_font = 19 if present else 14  # base_layout's tick size
    largest = max(counts, default=0)
    text = [str(c) for c in counts]
    # The count labels sit outside the bars: leave them room at the end of the value axis in
    # the narrowest plot the chart is drawn in (one of two columns at 1024 px; full width on a
    # projector).
    plot_px = COUNT_BARS_PRESENT_PLOT_PX if present else COUNT_BARS_PLOT_PX
    end = max(float(max(largest, 1)), _label_room_range(counts, text, font, plot_px))
    # Whole-number ticks (app QA: 0.5, 1.5, ... on a chart of counts), as many as fit that
    # plot side by side (about 0.6 em a digit and 10 px apart), five at most.
    digits = len(str(int(end)))
    max_steps = max(1, min(4, int(plot_px // (0.6 * tick_font * digits + 10))))
    dtick = count_dtick(int(end), max_steps)
    fig = new_figure(
        go.Bar(
            y=list(labels),
            x=list(counts),
            orientation="h",
            marker_color=color,
            name=axis,
            showlegend=False,
            text=text,
            textposition="outside",
            textfont={"size": font, "color": TEXT_COLOR},
            constraintext="none",
            cliponaxis=False,
            hovertemplate=f"%{{y}}: %{{x}}<extra>{_plain(axis)}</extra>",
        )
    )
    fig.update_xaxes(title_text="count", tickformat="d", tick0=0, dtick=dtick, range=[0, end])
    # No title beside the names: the chart's title names them ("Candidates by type"), and in a
    # 274 px column the rotated axis title took a fifth of the plot's width (QA s40).
    fig.update_yaxes(title_text="", autorange="reversed", automargin=True, ticklabelstandoff=6)
    return base_layout(fig, title, present, height=150 + COUNT_ROW_PX * n_rows, half=not present)


# --------------------------------------------------------------------------- Compare / Evidence

#: Marker symbol and colour per candidate type (timeline; open vocabulary, unknown -> default).
TYPE_SYMBOLS = {
    "raw_span": "square",
    "atomic_fact": "circle",
    "summary": "diamond",
    "tombstone": "x",
    "compound_update": "star",
    "graph_edge": "triangle-up",
    "interval_fact": "hexagon",
    "skill": "pentagon",
    "rule": "triangle-down",
    "abstention": "cross",
    "uncertainty": "hourglass",
    "compound_evidence": "star-diamond",
    "external": "circle-open",
}
TYPE_COLORS = {
    "raw_span": "#777777",
    "atomic_fact": "#006622",
    "summary": "#aa8855",
    "tombstone": "#bb3333",
    "compound_update": "#115599",
    "graph_edge": "#8866cc",
    "interval_fact": "#aa77cc",
    "skill": "#3399aa",
    "rule": "#776655",
    "abstention": "#cc7733",
    "uncertainty": "#bb8800",
    "compound_evidence": "#007788",
    "external": "#dd66aa",
}
#: Graph layer colours (experience -> candidate -> unit -> query): neutral greys, lighter to
#: darker along the links. The x axis names each layer under its column, so the colour only
#: tells neighbouring layers apart; borrowed unit-kind colours made every unit the "fact"
#: green and every candidate the "context" tan beside the heatmap's kind legend and the
#: timeline's atomic_fact / summary markers (QA s47). No grey here is one of those charts'
#: greys (stale, raw_span, the unknown fallback), and each pair stays 12 apart (CIE76).
LAYER_COLORS = {
    "experience": "#6a6a6a",
    "candidate": "#4a4a4a",
    "unit": "#2a2a2a",
    "query": "#000000",
}


#: Narrowest plot width (px) the Compare page's kind bars are laid out for: what Streamlit's
#: main column at 1024 px with the sidebar open leaves beside the kind names (measured 280-300
#: px). A figure cannot ask the browser, so the value axis leaves room for the bar labels at
#: this width.
KIND_BARS_PLOT_PX = 300


#: Narrowest plot width (px) of a count chart (:func:`count_bars`): one of two columns at
#: 1024 px (274 px) less the category names ("compound_update", "temporal_interval") and the
#: right margin (measured 85-100 px in Chromium).
COUNT_BARS_PLOT_PX = 80
#: ... and in presentation mode, one chart a row: 780 px at 1280 px with the sidebar open,
#: less the names at 19 px.
COUNT_BARS_PRESENT_PLOT_PX = 400


#: Advance widths (em) of the app's chart font (Source Sans, Streamlit's), by character:
#: measured in Chromium (canvas ``measureText`` at 100 px in the font plotly's tick labels use
#: on the Budget sweep page, s54; plotly's own tick boxes agreed, 17.4 px for "0.2" at 14 px).
#: A character not listed is taken at :data:`TEXT_EM_DEFAULT`; kerning is not counted.
TEXT_EM = {
    **dict.fromkeys("0123456789#$+<=>^~", 0.497),
    **dict.fromkeys(".,:;'", 0.249),
    **dict.fromkeys("()[]{}", 0.303),
    **dict.fromkeys("/\\", 0.35),
    " ": 0.2, "!": 0.289, '"': 0.426, "%": 0.824, "&": 0.609, "*": 0.418, "-": 0.311,
    "?": 0.425, "@": 0.847, "_": 0.5, "`": 0.542, "|": 0.241,
    "A": 0.543, "B": 0.588, "C": 0.571, "D": 0.615, "E": 0.527, "F": 0.494, "G": 0.617,
    "H": 0.652, "I": 0.263, "J": 0.479, "K": 0.579, "L": 0.486, "M": 0.727, "N": 0.647,
    "O": 0.664, "P": 0.566, "Q": 0.664, "R": 0.569, "S": 0.534, "T": 0.536, "U": 0.645,
    "V": 0.515, "W": 0.786, "X": 0.513, "Y": 0.476, "Z": 0.539,
    "a": 0.504, "b": 0.553, "c": 0.456, "d": 0.555, "e": 0.496, "f": 0.292, "g": 0.504,
    "h": 0.544, "i": 0.246, "j": 0.247, "k": 0.495, "l": 0.255, "m": 0.829, "n": 0.547,
    "o": 0.542, "p": 0.555, "q": 0.555, "r": 0.347, "s": 0.419, "t": 0.338, "u": 0.544,
    "v": 0.467, "w": 0.719, "x": 0.446, "y": 0.467, "z": 0.425,
}  # fmt: skip
TEXT_EM_DEFAULT = 0.6
#: Widths (em) of whole labels as plotly drew them in Chromium, where they differ from the sum
#: of :data:`TEXT_EM` (the kind-bucket names on the Compare page: 149.7 px for "invalidation /
#: tombstones" at 14 px, 213.8 px at 20 px).
LABEL_EM = {
    "current truth": 5.38,
    "invalidation / tombstones": 10.69,
    "temporal order": 6.31,
    "stale": 1.97,
    "other": 2.26,
}
#: What the kind bars' left margin holds besides the names, at tick font size f: the rotated
#: axis title, its standoff and the names' (measured 65.3 px at f = 14, 75.2 px at f = 20).
BUCKET_MARGIN_BASE_PX = 42.2
BUCKET_MARGIN_PER_FONT_PX = 1.65
#: Added so that a rounding in the browser never leaves plotly a pixel to push.
LABEL_MARGIN_SPARE_PX = 3


def text_em(text: str) -> float:
    """Width of a one-line label in em of the app's chart font (:data:`LABEL_EM`, else the sum
    of :data:`TEXT_EM`).

    >>> text_em("0.2"), text_em("stale")
    (1.243, 1.97)
    """
    if text in LABEL_EM:
        return LABEL_EM[text]
    return round(sum(TEXT_EM.get(ch, TEXT_EM_DEFAULT) for ch in text), 3)


def label_margin_px(labels: Sequence[str], font: float, room_px: float) -> int:
    """The margin beside an axis that plotly's ``automargin`` finds for tick ``labels`` drawn
    at ``font`` px, ``room_px`` being what it holds besides the widest label (the axis title,
    the standoffs and the pad, measured for each chart).

    A chart whose figure changes on a rerun is a new chart to Streamlit and is drawn from
    scratch. Asked for a margin too small, plotly drew it, measured the labels, widened the
    margin and drew it again: 42 ms of the browser's time per change on the Compare page, 20
    ms when the margin already fits (s53). ``automargin`` stays on, so a wider font still gets
    its room.
    """
    widest = max((text_em(str(label)) for label in labels), default=0.0)
    return math.ceil(widest * font + room_px + LABEL_MARGIN_SPARE_PX)


def bucket_margin_px(buckets: Sequence[str], font: int) -> int:
    """The kind bars' left margin: what plotly's automargin finds for these names (the Compare
    page redraws the chart on every budget change; see :func:`label_margin_px`).

    >>> bucket_margin_px(["current truth", "invalidation / tombstones"], 14)
    218
    """
    room = BUCKET_MARGIN_BASE_PX + BUCKET_MARGIN_PER_FONT_PX * font
    return label_margin_px(buckets, font, room)


def _label_room_range(
    values: Sequence[float], labels: Sequence[str], font: int, plot_px: float = KIND_BARS_PLOT_PX
) -> float:
    """The value-axis end that leaves each bar's outside label inside a plot ``plot_px`` wide
    (:data:`KIND_BARS_PLOT_PX` by default; about 0.6 em per character)."""
    end = max([0.0, *values]) * 1.15
    for value, label in zip(values, labels, strict=True):
        share = min(0.6, (len(label) + 1) * 0.6 * font / plot_px)
        end = max(end, value / (1.0 - share))
    return end if end > 0 else 1.0


def bucket_value_bars(
    buckets: Sequence[str],
    store_values: Sequence[float],
    opt_values: Sequence[float],
    store_name: str,
    opt_name: str,
    title: str,
    present: bool = False,
) -> go.Figure:
    """Bars per unit-kind bucket, side by side: value the store keeps vs the optimum, the
    store's bar labelled with what it lost.

    Horizontal: upright kind names, and one-line labels that have the value axis's length to
    run in (upright bars rotated the names at 1024 px, and "(lost x)" over a narrow bar ran
    into its neighbour's label on a projector, s38).

    Built from plain dicts (:func:`prevalidated_figure`): this chart is redrawn on every budget
    change of the Compare page, where plotly's per-property validation took 20-80 ms of the
    rerun. The result is the same figure :func:`base_layout` and :func:`_explain_fonts` would
    give (tests check it against plotly's validated constructor).
    """
    font = 20 if present else 14
    lost = [o - s for s, o in zip(store_values, opt_values, strict=True)]
    # The core's tolerance over the buckets' totals (OPT and F): a fixed 1e-9 left a package in
    # units of 1e-10 without "(lost ...)" labels and labelled a rounding in one of 1e12 (QA s39).
    tol = loss_tolerance(sum(opt_values), sum(store_values))
    # The metric tiles' and the CLI's numbers (value_text): at 4 significant digits the labels
    # did not add up, OPT 318.1 beside "110 (lost 208)" for 318.06 / 110.04 / 208.02 (QA s40).
    opt_text = [value_text(v) for v in opt_values]
    store_text = [
        f"{value_text(s)} (lost {value_text(d)})" if d > tol else value_text(s)
        for s, d in zip(store_values, lost, strict=True)
    ]
    end = _label_room_range([*opt_values, *store_values], [*opt_text, *store_text], font)
    bar = {
        "type": "bar",
        "orientation": "h",
        "y": list(buckets),
        "textposition": "outside",
        "cliponaxis": False,
        "textfont": {"size": font},
    }
    data = [
        {
            **bar,
            "x": list(opt_values),
            "name": opt_name,
            "text": opt_text,
            "marker": {"color": COLORS["opt"]},
        },
        {
            **bar,
            "x": list(store_values),
            "name": store_name,
            "text": store_text,
            "marker": {"color": COLORS["writer"]},
        },
    ]
    axis_fonts = {"tickfont": {"size": font, "color": TEXT_COLOR}}
    title_font = {"size": font + 1, "color": TEXT_COLOR}
    value_title = _axis_title("F kept (weighted evidence value)", font + 1, present)
    n_buckets = max(1, len(buckets))
    layout = {
        **base_layout_dict(title, present, height=max(460, 110 + 70 * n_buckets)),
        "barmode": "group",
        "bargap": 0.25,
        "xaxis": {
            "title": {"text": value_title, "font": title_font},
            "range": [0, end],
            **axis_fonts,
        },
        "yaxis": {
            "title": {"text": "kind bucket", "font": title_font},
            # The first kind on top, and within a kind the optimum's bar above the store's.
            "autorange": "reversed",
            "automargin": True,
            "ticklabelstandoff": 8,
            **axis_fonts,
        },
    }
    # Below the plot, so a long store name in the legend never meets the title; the value
    # labels keep their size ("(lost x)" shrank to 8 px on narrow bars, projector QA).
    # Placed in pixels under the value axis's ticks and title, as _legend_below does.
    title_lines = value_title.count("<br>") + 1
    below_px = font + 8 + 1.3 * (font + 1) * title_lines + LEGEND_GAP_PX
    layout["margin"] = {
        **layout["margin"],
        "l": bucket_margin_px(buckets, font),
        "b": int(below_px + 2.5 * font),
    }
    plot_px = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    layout["legend"] = {
        "orientation": "h",
        "yanchor": "top",
        "y": -below_px / max(100, plot_px),
        "xanchor": "left",
        "x": 0,
        "font": {"size": font, "color": TEXT_COLOR},
        "title": {"font": {"size": font, "color": TEXT_COLOR}},
    }
    layout["uniformtext"] = {"minsize": font - 2, "mode": "show"}
    return prevalidated_figure(data, layout)


#: Short names of the unit kinds for narrow places (the Evidence explorer's kind chips): eight
#: full names did not fit the multiselect at 1280 px, which cut the last chip ("temporal_…").
#: A kind without an entry (a plugin's) shows in full.
KIND_SHORT_LABELS = {
    "current_truth": "current",
    "invalidation": "invalid",
    "temporal_order": "order",
    "temporal_interval": "interval",
    "stale": "stale",
    "fact": "fact",
    "preference": "pref",
    "context": "context",
    "abstention": "abstain",
    "provenance": "prov",
}


def kind_short_label(kind: str) -> str:
    """The short display name of a unit kind (:data:`KIND_SHORT_LABELS`, else the kind)."""
    return KIND_SHORT_LABELS.get(kind, kind)


#: Width of the heatmap's chart on the narrowest screen it is made for (1280 px): Streamlit's
#: main column with the sidebar open (normal) or collapsed (presentation). A figure cannot ask
#: the browser, so the unit labels are spaced for this width; wider screens only gain room.
HEATMAP_CHART_PX = {False: 820, True: 1080}
#: The rest of the chart's width beside the row labels: the left margin, the y title and (on a
#: projector, with its larger fonts) the colour bar's overhang; measured in Chromium (QA s21:
#: 420 and 616 px plots at 1280 px on a 69-unit package).
HEATMAP_OTHER_PX = {False: 52, True: 120}
#: Top margin (px) of the heatmap in normal mode, under a one-line title: the title, the kind
#: band and the focus marker above it. :func:`coverage_heatmap` adds a wrapped title's lines.
HEATMAP_TOP_PX = 100
#: Height (px) of a line of the heatmap's kinds legend in normal mode (14 px font; measured
#: 21.5 px in Chromium), the gap under it and the shortest colour bar under that.
HEATMAP_LEGEND_LINE_PX = 22
HEATMAP_COLORBAR_GAP_PX = 30
HEATMAP_COLORBAR_MIN_PX = 100
#: Right margin of the heatmap: the colour bar and, in normal mode, the kinds legend (in
#: presentation mode the legend's widest line can ask for more, :func:`heatmap_geometry`).
HEATMAP_RIGHT_PX = {False: 190, True: 120}
#: Unit-id tick font (px) for at most :data:`HEATMAP_FEW_COLS` units, and for more.
HEATMAP_TICK_PX = {False: (14, 12), True: (18, 16)}
#: Up to this many units the ids are written at the larger size (angled in normal mode).
HEATMAP_FEW_COLS = 25
#: The longest unit label drawn (characters; a longer id keeps its distinctive tail after an
#: ellipsis, the full id is in the hover). Shortest on a projector with many units, where the
#: labels' height is taken from a plot capped at one screen.
HEATMAP_LABEL_CHARS = {False: (22, 22), True: (18, 14)}
#: Upright labels need this many line heights (font px x 1.25) between centres to not touch.
_LINE_FACTOR = 1.25
#: Average glyph width as a fraction of the font size (a conservative bound for ids).
_CHAR_FACTOR = 0.6
#: ... and of the candidate ids of the rows (measured: 0.52 on memaudit-small-s0's 38-character
#: labels), kept low so the plot's width is not underestimated.
_ROW_CHAR_FACTOR = 0.55
#: Presentation mode's row labels (px) and the rows' pitch: a line of the label and the
#: cells' 1 px gap. Plotly names every row only where the axis has about 1.2 font sizes a row
#: (speaker QA s46: ten rows of travel-assistant on a 165 px plot, every other one unnamed).
HEATMAP_PRESENT_ROW_FONT_PX = 18
HEATMAP_PRESENT_ROW_PX = math.ceil(_LINE_FACTOR * HEATMAP_PRESENT_ROW_FONT_PX) + 1
#: Presentation mode's top margin under a one-line title (the title, the focus marker and the
#: kind band) and what each further title line adds: measured 41 px in Chromium, the line
#: and the title's pad (base_layout's 64 px left travel-assistant's tenth row off, QA s46).
HEATMAP_PRESENT_TOP_PX = 90
HEATMAP_PRESENT_TITLE_LINE_PX = 42
#: Presentation mode, under the unit ids: a line of the x title (21 px font; measured 28 px)
#: and the room around its lines.
HEATMAP_PRESENT_XTITLE_LINE_PX = 28
HEATMAP_PRESENT_XTITLE_PAD_PX = 16
#: Presentation mode, right of the plot: the colour bar (px, its title along it; shortened
#: down to the minimum where the legend needs the room), the gap, then the kinds legend, a
#: kind a line (20 px font; measured 30.5 px in Chromium), no lower than the unit ids: below
#: them the x title, centred under a narrow plot, ran into it at 1024 px. Upright, the legend
#: takes the same height on every screen: wrapped under the plot it took one row at 1920 px
#: and four at 1024 px, and the margin kept for four stood empty (speaker QA s46).
HEATMAP_PRESENT_COLORBAR_PX = 150
HEATMAP_PRESENT_COLORBAR_MIN_PX = 100
HEATMAP_PRESENT_LEGEND_GAP_PX = 16
HEATMAP_PRESENT_LEGEND_LINE_PX = 31
#: The legend's symbol and gaps beside a kind's name (px), and a name character (em).
HEATMAP_PRESENT_LEGEND_SYMBOL_PX = 50
HEATMAP_PRESENT_LEGEND_EM = 0.5


@dataclass(frozen=True)
class HeatmapGeometry:
    """Where the coverage heatmap's labels go, decided from the counts before drawing.

    ``label_idx`` are the columns whose unit id is written under the plot (every
    ``label_step``-th one, spaced for a plot ``plot_px`` wide, at ``tick_angle`` degrees and
    ``tick_px`` font); ``labels`` their (shortened) text. ``height`` is the figure's height
    (in normal mode without a wrapped title's extra lines, which :func:`coverage_heatmap`
    adds) and ``bottom_px`` the margin the labels take.
    """

    plot_px: float
    tick_px: int
    tick_angle: int
    label_step: int
    label_idx: tuple[int, ...]
    labels: tuple[str, ...]
    bottom_px: int
    height: int
    #: The colour bar's length as a fraction of the plot (normal mode: under the kinds legend).
    colorbar_len: float
    #: How many of the rows are drawn: all but in presentation mode, where only as many as a
    #: screen names are (:meth:`HeatmapData.first_rows` picks them).
    rows_drawn: int = 0
    #: Presentation mode: the top and right margins, the plot's height, the colour bar's
    #: length and the kinds legend's height (px).
    top_px: int = 0
    right_px: int = 0
    plot_height_px: int = 0
    colorbar_px: int = 0
    legend_px: int = 0


def short_unit_label(unit_id: str, max_chars: int) -> str:
    """``unit_id``, or an ellipsis and its last ``max_chars - 1`` characters."""
    return unit_id if len(unit_id) <= max_chars else "…" + unit_id[-(max_chars - 1) :]


def heatmap_col_labels(unit_ids: Sequence[str], max_chars: int) -> tuple[str, ...]:
    """The heatmap's column labels: each id's tail (:func:`short_unit_label`), unless two
    different ids would read the same, as ids that differ only early on do; then
    :func:`distinct_cuts` for all, so that no label names two units (QA s48, as graph labels
    and timeline ticks did).

    >>> heatmap_col_labels(["u:invalid:pref:3:0", "u:current:pref:3:0"], 10)
    ('u:inv…:3:0', 'u:cur…:3:0')
    >>> heatmap_col_labels(["u:dates:current", "u:dates:invalid"], 10)
    ('…s:current', '…s:invalid')
    """
    tails = tuple(short_unit_label(u, max_chars) for u in unit_ids)
    if len(set(tails)) == len(set(unit_ids)):
        return tails
    return tuple(distinct_cuts(unit_ids, max_chars))


def _heatmap_present_legend_px(heatmap_data: HeatmapData) -> tuple[int, int]:
    """Width and height (px) of presentation mode's kinds legend: a title line, a kind a line."""
    font_px = 20  # _explain_fonts in presentation mode
    names = ["unit kind", *(kind_short_label(k) for k in dict.fromkeys(heatmap_data.col_kinds))]
    width = HEATMAP_PRESENT_LEGEND_SYMBOL_PX + HEATMAP_PRESENT_LEGEND_EM * font_px * max(
        len(n) for n in names
    )
    return math.ceil(width), HEATMAP_PRESENT_LEGEND_LINE_PX * len(names) + 10


def heatmap_geometry(
    heatmap_data: HeatmapData,
    present: bool = False,
    title: str = "",
    width_px: int | None = None,
) -> HeatmapGeometry:
    """Label spacing and figure size of :func:`coverage_heatmap` for ``heatmap_data``.

    The plot's width on the narrowest screen (:data:`HEATMAP_CHART_PX`, or a chart
    ``width_px`` wide such as an export, less the margins and the row labels) decides how
    many unit ids fit side by side upright; every
    ``label_step``-th is written (QA s21: all 69 ids of an event-graph package were drawn on
    6 px columns and overlapped). The height grows with the rows. On a projector (``title``:
    the chart's, for its lines) every row drawn is named: the figure is the title, a row pitch
    of :data:`HEATMAP_PRESENT_ROW_PX` per row and the unit ids' and x title's height, at most
    :data:`PRESENT_MAX_HEIGHT`; rows beyond that are not drawn (``rows_drawn``).
    """
    n_rows, n_cols = len(heatmap_data.row_ids), len(heatmap_data.col_ids)
    row_font = (14 if n_rows <= 40 else 12 if n_rows <= 90 else 10) + (4 if present else 0)
    if present:
        row_font = HEATMAP_PRESENT_ROW_FONT_PX
    row_label_px = (
        _ROW_CHAR_FACTOR * row_font * max((len(r) for r in heatmap_data.row_labels), default=1)
    )
    right_px = HEATMAP_RIGHT_PX[present]
    legend_w, legend_h = _heatmap_present_legend_px(heatmap_data)
    if present:
        right_px = max(right_px, legend_w)
    # The heat takes 94 % of what the margins and row labels leave (the strip 6 %).
    chart_px = width_px or HEATMAP_CHART_PX[present]
    plot_px = 0.94 * (chart_px - HEATMAP_OTHER_PX[present] - row_label_px - right_px)
    plot_px = max(plot_px, 100.0)
    many = n_cols > HEATMAP_FEW_COLS
    tick_px = HEATMAP_TICK_PX[present][many]
    upright_fit = max(1, math.floor(plot_px / (_LINE_FACTOR * tick_px)))
    # Angled labels need 1/sin(45 deg) times the upright spacing along the axis. Upright on a
    # projector (QA s18c: at -45 degrees 20 ids at projector size overlapped at 1024 px), and
    # wherever angled ids would not all fit: every id upright beats every other id angled.
    angled_fit = math.floor(plot_px / (_LINE_FACTOR * tick_px * math.sqrt(2)))
    tick_angle = -45 if not present and not many and n_cols <= angled_fit else -90
    fit = upright_fit
    label_step = max(1, math.ceil(n_cols / fit))
    label_idx = tuple(range(0, n_cols, label_step))
    max_chars = HEATMAP_LABEL_CHARS[present][many]
    labels = heatmap_col_labels([heatmap_data.col_ids[j] for j in label_idx], max_chars)
    longest = max((len(t) for t in labels), default=0)
    # Upright ids (angled when few and short) and the axis title below them.
    bottom_px = int(_CHAR_FACTOR * tick_px * longest) + 60
    colorbar_len = min(0.5, 260 / max(1, 24 * n_rows)) if n_rows > 12 else 0.45
    rows_drawn, top_px, plot_h, colorbar_px = n_rows, 0, 0, 0
    if present:
        # The upright ids as long as the longest one written (GRAPH_CHAR_EM: Source Sans
        # measured 0.45 em on travel-assistant's ids; a fixed 0.6 em and 60 px, with the
        # legend's rows, left a 165 px plot, QA s46) and the x title's two lines.
        ids_px = math.ceil(GRAPH_CHAR_EM * tick_px * longest + AXIS_PAD_PX)
        bottom_px = ids_px + 2 * HEATMAP_PRESENT_XTITLE_LINE_PX + HEATMAP_PRESENT_XTITLE_PAD_PX
        extra_lines = wrap_title(title, True).count("<br>") if title else 1
        top_px = HEATMAP_PRESENT_TOP_PX + HEATMAP_PRESENT_TITLE_LINE_PX * extra_lines
        room = PRESENT_MAX_HEIGHT - top_px - bottom_px
        rows_drawn = min(n_rows, max(1, room // HEATMAP_PRESENT_ROW_PX))
        # The colour bar and the kinds legend beside the plot and its unit ids: a taller plot
        # (fewer, taller rows) where they need it, then a shorter colour bar.
        beside = HEATMAP_PRESENT_COLORBAR_PX + HEATMAP_PRESENT_LEGEND_GAP_PX + legend_h
        plot_h = max(rows_drawn * HEATMAP_PRESENT_ROW_PX, min(beside - ids_px, room))
        colorbar_px = min(
            HEATMAP_PRESENT_COLORBAR_PX,
            max(
                HEATMAP_PRESENT_COLORBAR_MIN_PX,
                plot_h + ids_px - HEATMAP_PRESENT_LEGEND_GAP_PX - legend_h,
            ),
        )
        height = top_px + plot_h + bottom_px
    else:
        # The top margin (band, focus marker), the rows and what the labels take below: a
        # flat 220 px and 26 px rows made veg-to-pescatarian's 14 rows 761 px, the unit axis
        # off a 1280 x 720 screen (QA s44). Rows of 22 px hold the 14 px labels (1.25 lines);
        # angled ids take sin 45 degrees of their length.
        row_px = 22 if n_rows <= 40 else 18 if n_rows <= 90 else 14
        if tick_angle != -90:
            bottom_px = int(math.sqrt(0.5) * _CHAR_FACTOR * tick_px * (longest + 1)) + 60
        # The kinds legend (a title and a line per kind, from the plot's top) and under it a
        # colour bar of at least HEATMAP_COLORBAR_MIN_PX: the plot is at least that tall.
        legend_px = HEATMAP_LEGEND_LINE_PX * (len(set(heatmap_data.col_kinds)) + 1)
        under_legend = legend_px + HEATMAP_COLORBAR_GAP_PX
        plot_h = max(row_px * max(n_rows, 10), under_legend + HEATMAP_COLORBAR_MIN_PX)
        height = min(HEATMAP_TOP_PX + plot_h + bottom_px, 3200)
        colorbar_len = min(colorbar_len, (plot_h - under_legend) / plot_h)
    return HeatmapGeometry(
        plot_px=plot_px,
        tick_px=tick_px,
        tick_angle=tick_angle,
        label_step=label_step,
        label_idx=label_idx,
        labels=labels,
        bottom_px=bottom_px,
        height=height,
        colorbar_len=colorbar_len,
        rows_drawn=rows_drawn,
        top_px=top_px,
        right_px=right_px,
        plot_height_px=plot_h,
        colorbar_px=colorbar_px,
        legend_px=legend_h,
    )


def heatmap_caption(
    heatmap_data: HeatmapData, present: bool = False, title: str = "", opt_word: str = "optimum"
) -> str:
    """What the heatmap shows of what: candidates and units drawn of the totals, and which
    unit ids are written (never a silent drop: the caps and thinned labels are said).
    ``title`` and ``opt_word`` as given to :func:`coverage_heatmap`."""
    geometry = heatmap_geometry(heatmap_data, present, title)
    n_rows, n_cols = len(heatmap_data.row_ids), len(heatmap_data.col_ids)
    labelled = len(geometry.label_idx)
    ids = (
        "every unit id is written under its column"
        if geometry.label_step == 1
        else f"{labelled} of the {n_cols} unit ids are written (one per {geometry.label_step} "
        "columns); hover a cell for any id"
    )
    caption = (
        f"Shown: {geometry.rows_drawn} of {heatmap_data.n_rows_total} candidates × {n_cols} of "
        f"the {heatmap_data.n_cols_total} units of the kinds picked; {ids}."
    )
    if geometry.rows_drawn < n_rows:
        caption += (
            f" A projector's screen names {geometry.rows_drawn} of these {n_rows} rows: those "
            f"covering the focus unit first, then the store's and the {opt_word}'s, then by "
            f"arrival. For the others pick Rows: {HEATMAP_ROWS['focus']}, or turn "
            f"Presentation mode off to see all {n_rows}."
        )
    return caption


def coverage_heatmap(
    heatmap_data: HeatmapData,
    title: str,
    present: bool = False,
    opt_word: str = "optimum",
    width_px: int | None = None,
) -> go.Figure:
    """Candidates x units coverage a_ur with a store / optimum membership strip on the left.

    ``opt_word`` is "incumbent" when the optimum is not proven (its tag is then I, not O).
    ``width_px``: the unit ids spaced for a chart that wide, such as an export (speaker QA
    s48: the 1400 px PNG wrote one id per 2 columns of 40 px, as for an 820 px screen).
    """
    opt_tag = opt_word[0].upper()
    from plotly.subplots import make_subplots

    geometry = heatmap_geometry(heatmap_data, present, title, width_px)
    # On a projector only the rows a screen names (the caption says which and how many).
    heatmap_data = heatmap_data.first_rows(geometry.rows_drawn)
    n_rows = len(heatmap_data.row_ids)
    fig = new_figure(
        make_subplots(
            rows=1, cols=2, shared_yaxes=True, column_widths=[0.06, 0.94], horizontal_spacing=0.006
        )
    )
    # 0 neither, 1 written by the store and cut to fit the budget, 2 the store's, 3 the
    # optimum's (QA s49: a cut memory's strip cell was blank, as for one never written).
    flags = list(
        zip(heatmap_data.row_in_store, heatmap_data.row_cut, heatmap_data.row_in_opt, strict=True)
    )
    strip = [[2 if s else 1 if c else 0, 3 if o else 0] for s, c, o in flags]
    off = "#f1f1f1"
    cut_fill = _rgba(COLORS["writer"], 0.3)

    def in_store(rid: str, s: bool, c: bool) -> str:
        if c:
            return f"{rid}: written by the store, cut to fit the budget"
        return f"{rid}: {'in' if s else 'not in'} the store"

    fig.add_trace(
        go.Heatmap(
            z=strip,
            # The tags of the y axis's title (S = store, O = optimum / I = incumbent): whole
            # words did not fit the narrow strip ("incumbent" was cut off, and the rotated
            # "store" and "OPT" touched).
            x=["S", opt_tag],
            y=list(heatmap_data.row_labels),
            zmin=0,
            zmax=3,
            colorscale=[
                [0, off],
                [0.25, off],
                [0.25, cut_fill],
                [0.5, cut_fill],
                [0.5, COLORS["writer"]],
                [0.75, COLORS["writer"]],
                [0.75, COLORS["opt"]],
                [1, COLORS["opt"]],
            ],
            showscale=False,
            xgap=1,
            ygap=1,
            # A cross in a cut memory's cell, as on the timeline and the graph.
            text=[["✕" if c else "", ""] for _, c, _ in flags],
            texttemplate="%{text}",
            textfont={"color": TEXT_COLOR},
            hovertext=[
                [in_store(rid, s, c), f"{rid}: {'in' if o else 'not in'} the {opt_word}"]
                for rid, (s, c, o) in zip(heatmap_data.row_ids, flags, strict=True)
            ],
            hoverinfo="text",
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Heatmap(
            # Arrays, not lists: plotly validates a list cell by cell (57 of 69 ms for this
            # trace on event-graph-500's 150 x 120 cells) and serialises z as a typed array.
            z=np.asarray(heatmap_data.z, dtype=float),
            x=list(heatmap_data.col_ids),
            y=list(heatmap_data.row_labels),
            zmin=0,
            zmax=1,
            colorscale="Blues",
            xgap=1,
            ygap=1,
            # The core describes covering cells only; an empty one is named by its ids.
            text=np.asarray(heatmap_data.hover, dtype=object),
            hovertemplate="%{y} · unit %{x}<br>a = %{z:.3g}<br>%{text}<extra></extra>",
            colorbar={
                "title": {"text": "coverage a<sub>ur</sub>", "side": "right"},
                "len": geometry.colorbar_len,
                "y": 0.0,
                "yanchor": "bottom",
                "x": 1.02,
                "xanchor": "left",
                "thickness": 18,
            },
        ),
        row=1,
        col=2,
    )
    # Kind groups: a coloured band above the columns and separators between groups (set in
    # one call: each add_shape re-validates every earlier shape).
    shapes: list[dict] = []
    band_top = 1.0 + min(0.03, 12 / max(300, 18 * n_rows))
    for kind, j0, j1 in heatmap_data.kind_spans:
        shapes.append(
            {
                "type": "rect",
                "xref": "x2",
                "yref": "paper",
                "x0": j0 - 0.5,
                "x1": j1 + 0.5,
                "y0": 1.003,
                "y1": band_top,
                "fillcolor": KIND_COLORS.get(kind, "#555"),
                "line": {"width": 0},
            }
        )
        if j0 > 0:
            shapes.append(
                {
                    "type": "line",
                    "xref": "x2",
                    "yref": "paper",
                    "x0": j0 - 0.5,
                    "x1": j0 - 0.5,
                    "y0": 0,
                    "y1": 1,
                    "line": {"color": "#333", "width": 1.5},
                }
            )
    focus_idx = heatmap_data.focus_col_idx
    if focus_idx is not None:  # the annotator's unit, found at a glance among 50+ columns
        shapes.append(
            {
                "type": "rect",
                "xref": "x2",
                "yref": "paper",
                "x0": focus_idx - 0.5,
                "x1": focus_idx + 0.5,
                "y0": 0,
                "y1": 1,
                "line": {"color": FOCUS_COLOR, "width": 3},
                "fillcolor": "rgba(0,0,0,0)",
            }
        )
    if shapes:
        fig.update_layout(shapes=[*fig.layout.shapes, *shapes])
    # On a projector the kinds by their short names, under the legend's own title
    # (:func:`_heatmap_on_one_screen`); on a screen in a titled group.
    group = {} if present else {"legendgroup": "kinds", "legendgrouptitle_text": "unit kind"}
    for kind in dict.fromkeys(heatmap_data.col_kinds):  # legend entries for the band colours
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=kind_short_label(kind) if present else kind,
                marker={"symbol": "square", "size": 14, "color": KIND_COLORS.get(kind, "#555")},
                **group,
            ),
            row=1,
            col=2,
        )
    base = 22 if present else 15
    row_tick = 14 if n_rows <= 40 else 12 if n_rows <= 90 else 10
    fig.update_xaxes(title_text="evidence unit (grouped by kind)", row=1, col=2)
    fig.update_yaxes(
        autorange="reversed",
        title_text=f"candidate (S = store, {opt_tag} = {opt_word})",
        row=1,
        col=1,
    )
    fig.update_yaxes(autorange="reversed", row=1, col=2)
    base_layout(fig, title, present)
    # The room base_layout gave the title's extra lines (70 px is its one-line margin): kept
    # over the heatmap's own top margin (QA s42 round 2, defect 2: a fixed t=100 drew a
    # wrapped title's second line over the kind band).
    title_px = int(fig.layout.margin.t) - 70
    _explain_fonts(fig, present)
    fig.update_xaxes(
        tickfont={"size": geometry.tick_px}, tickangle=geometry.tick_angle, automargin=True
    )
    # Every label drawn on the strip (app QA: plotly's automatic skipping left "OPT"
    # unlabelled without a word).
    fig.update_xaxes(tickmode="array", tickvals=["S", opt_tag], tickangle=0, row=1, col=1)
    # Only the ids that fit side by side (every label_step-th; the caption says so, the hover
    # gives every id): all 69 ids of an event-graph package overlapped (QA s21). The focus
    # unit's id is in vermillion where it is among them; its marker is above the plot.
    ticktext = [
        f'<span style="color:{FOCUS_COLOR}"><b>{text}</b></span>' if j == focus_idx else text
        for j, text in zip(geometry.label_idx, geometry.labels, strict=True)
    ]
    fig.update_xaxes(
        tickmode="array",
        tickvals=[heatmap_data.col_ids[j] for j in geometry.label_idx],
        ticktext=ticktext,
        title_text=(
            "evidence unit (grouped by kind)"
            if geometry.label_step == 1
            else f"evidence unit (grouped by kind; one id per {geometry.label_step} columns)"
        ),
        row=1,
        col=2,
    )
    if focus_idx is not None:
        # Above the kind band, clear of the unit ids below (QA s21: the bold focus id
        # collided with its neighbours). The text runs towards the plot's middle.
        left_half = focus_idx < len(heatmap_data.col_ids) / 2
        fig.add_annotation(
            x=focus_idx,
            xref="x2",
            y=band_top,
            yref="paper",
            yshift=2,
            yanchor="bottom",
            xanchor="left" if left_half else "right",
            xshift=-7 if left_half else 7,
            text=(
                f"▼ focus {heatmap_data.col_ids[focus_idx]}"
                if left_half
                else f"focus {heatmap_data.col_ids[focus_idx]} ▼"
            ),
            showarrow=False,
            font={"color": FOCUS_COLOR, "size": base - 2},
        )
    fig.update_yaxes(tickfont={"size": row_tick + (4 if present else 0)}, row=1, col=1)
    fig.update_layout(
        font={"size": base},
        height=geometry.height + (0 if present else title_px),
        margin={"l": 10, "r": HEATMAP_RIGHT_PX[present], "t": HEATMAP_TOP_PX + title_px, "b": 40},
        legend={
            "orientation": "v",
            "yanchor": "top",
            "y": 1.0,
            "xanchor": "left",
            "x": 1.02,
            "font": {"size": base - 1},
        },
        plot_bgcolor="white",
    )
    if present:
        _heatmap_on_one_screen(fig, geometry)
    return fig


def _heatmap_on_one_screen(fig: go.Figure, geometry: HeatmapGeometry) -> None:
    """A projector's heatmap at most :data:`PRESENT_MAX_HEIGHT` tall, every row drawn named.

    QA s18c: 808 px (3,132 on a 500-experience package) ran past a 1280 x 720 screen. The
    margins and the plot's height are :func:`heatmap_geometry`'s; the colour bar and, under
    it, the kinds legend (one kind a line) stand right of the plot: below it the legend took
    the width the unit ids needed (QA s21), and a margin for the rows it took at 1024 px
    stood empty at 1920 px (QA s46).
    """
    plot_px = geometry.plot_height_px
    for shape in fig.layout.shapes:  # the kind bands: 12 px above the plot at any height
        if shape.type == "rect" and shape.y0 > 1:
            shape.y1 = 1.0 + 12 / plot_px
    for note in fig.layout.annotations:  # the focus marker stays on top of its band
        if note.yref == "paper" and note.xref == "x2":
            note.y = 1.0 + 12 / plot_px
    legend_top = 1 - (geometry.colorbar_px + HEATMAP_PRESENT_LEGEND_GAP_PX) / plot_px
    fig.update_layout(
        height=geometry.height,
        margin={"l": 10, "r": geometry.right_px, "t": geometry.top_px, "b": geometry.bottom_px},
        legend={
            "orientation": "v",
            "yref": "paper",
            "y": legend_top,
            "yanchor": "top",
            "xref": "paper",
            "xanchor": "left",
            "x": 1.01,
            # Plotly holds a legend beside the plot to the plot's height and scrolls the rest.
            "maxheight": geometry.legend_px,
        },
    )
    # The tags' meaning joins the x title, on its own line (one line ran past a 520 px chart):
    # beside a short plot the y title ran into the chart's title.
    tags = fig.layout.yaxis.title.text
    fig.update_yaxes(title_text="candidate", row=1, col=1)
    step = geometry.label_step
    fig.update_xaxes(
        title_text=(
            "evidence unit (grouped by kind)"
            if step == 1
            else f"evidence unit (one id per {step} columns)"
        )
        + f"<br>{tags[tags.find('(') + 1 : -1]}",
        row=1,
        col=2,
    )
    fig.update_traces(
        colorbar={
            "len": geometry.colorbar_px,
            "lenmode": "pixels",
            "y": 1.0,
            "yanchor": "top",
            "x": 1.01,
        },
        selector={"type": "heatmap"},
    )
    # The kinds' legend entries have short names and no group here (coverage_heatmap): the
    # legend's own title names them.
    fig.update_layout(legend_title={"text": "unit kind", "side": "top"})


#: Memory marker size (px) when the experiences are far enough apart (normal, present).
TIMELINE_MARKER_PX = {False: 15, True: 20}
#: Smallest memory marker (px): below this the symbols cannot be told apart.
TIMELINE_MIN_MARKER_PX = 7
#: Characters per line of a row (store) label before it wraps; two lines at most.
TIMELINE_ROW_CHARS = {False: 14, True: 12}
#: Longest experience id shown as a tick label (cut in the middle beyond; the hover has it).
TIMELINE_TICK_CHARS = 10
#: Above this many experiences the x axis shows times, not experience ids.
TIMELINE_ID_TICKS_MAX = 25
#: The timeline's right margin (px): half the last tick label.
TIMELINE_RIGHT_MARGIN_PX = 24
#: Memory types drawn last, on top of the others (QA s41: on event-graph-50 a tombstone was
#: hidden under the compound-update stars of the neighbouring experiences).
TIMELINE_ON_TOP = ("tombstone",)
#: The ring around a memory only one of the chosen store and the optimum keeps: how much
#: wider than the memory marker (px) and its colour (magenta: no memory type uses it).
TIMELINE_RING_PX = 8
TIMELINE_RING_COLOR = "#d6197f"
#: The rings' legend group: how the ring trace is told from the memory traces.
TIMELINE_RING_GROUP = "store-vs-opt"
#: A memory a package store wrote and its recency cut dropped at this budget: its type's
#: symbol hollow under a dark cross, in a legend group of its own (QA s49: the row was blank
#: there, and the chart is titled what each store wrote).
TIMELINE_CUT_NAME = "written, cut at this budget"
TIMELINE_CUT_GROUP = "cut"
TIMELINE_CUT_COLOR = "#222222"


def hollow_symbol(symbol: str) -> str:
    """The open variant of a plotly marker symbol (``"square"`` -> ``"square-open"``)."""
    return symbol if symbol.endswith("-open") else f"{symbol}-open"


@dataclass(frozen=True)
class TimelineGeometry:
    """Where the store timeline's rows, ticks and markers go at the design width
    (:data:`LEGEND_DESIGN_PX`): see :func:`timeline_geometry`."""

    font: int  # tick font size (px)
    row_labels: dict[str, str]  # row -> its axis label (wrapped with <br>)
    margin_l: int  # px left of the plot (the row labels)
    margin_r: int  # px right of the plot
    plot_px: float  # the plot's width at the design width
    x_range: tuple[float, float]
    marker: int  # memory marker size (px)
    tick_vals: tuple[float, ...]  # experience ticks (empty: plotly's numeric time ticks)
    tick_text: tuple[str, ...]
    x_offsets: tuple[float, ...]  # per timeline point: its shift within its cell (x units)
    tick_lines: int = 1  # lines the tick labels take (2: staggered, see _timeline_tick_picks)


#: A row label's trailing tag, e.g. " (chosen)": kept whole on the label's last line.
_ROW_TAG = re.compile(r"\s+(\([^()\s]+\))$")


def _greedy_lines(words: Sequence[str], width: int) -> list[str]:
    """``words`` filled into lines of at most ``width`` characters (a longer word alone)."""
    lines: list[str] = []
    for word in words:
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def _wrap_row_label(text: str, limit: int) -> str:
    """``text`` on at most two lines of about ``limit`` characters (``<br>`` between): words
    wrap greedily at ``limit``, a line may run to ``limit`` + 2 rather than be cut, and only a
    name too long for that is shortened (in the middle); a trailing tag such as " (chosen)"
    is never cut (the hover has the full name).

    QA s41 (presentation mode, 12 characters): "Fact extractor (chosen)" read
    "Fact<br>extract…hosen)": the third line was joined to the second and cut in the middle,
    through the tag that says which store is the chosen one.

    >>> _wrap_row_label("Validity-aware summariser", 14)
    'Validity-aware<br>summariser'
    >>> _wrap_row_label("OPT", 14)
    'OPT'
    >>> _wrap_row_label("Fact extractor (chosen)", 12)
    'Fact extractor<br>(chosen)'
    """
    words = text.split()
    lines = _greedy_lines(words, limit)
    if len(lines) > 2 and len(" ".join(lines[1:])) <= limit + 2:
        lines = [lines[0], " ".join(lines[1:])]  # the rest fits one line
    if len(lines) > 2:
        lines = _greedy_lines(words, limit + 2)
    if len(lines) > 2:
        tag = _ROW_TAG.search(text)
        if tag is not None:
            # The name alone on the first line (shortened), the tag whole on the second.
            lines = [text[: tag.start()].strip(), tag.group(1)]
        else:
            lines = [lines[0], " ".join(lines[1:])]  # no tag: the rest, shortened
    return "<br>".join(_cut_label(line, limit + 2) for line in lines)


def timeline_geometry(
    timeline_data: TimelineData, present: bool = False, width_px: int | None = None
) -> TimelineGeometry:
    """The store timeline's layout at the design width (or a chart ``width_px`` wide, as an
    export), so that the plot gets most of the width, tick labels do not run together and
    markers do not hide each other.

    QA s41 (1024 px): the legend right of the plot and the long row labels left the plot 152
    of 564 px, the 13 ids ran together ("e01e02e03...") and 15 px markers 12 px apart
    overlapped. Now the row labels wrap to two short lines, the legend goes below the plot
    (:func:`_legend_below`), ids are thinned to what fits side by side, memory markers shrink
    to the experiences' spacing, and memories of one row at one experience sit side by side.
    """
    font = 20 if present else 14  # _explain_fonts' tick size
    limit = TIMELINE_ROW_CHARS[present]
    rows = ["experiences", *timeline_data.rows]
    row_labels = {row: _wrap_row_label(row, limit) for row in rows}
    longest = max(len(line) for label in row_labels.values() for line in label.split("<br>"))
    # About 0.55 em a character and the tick's standoff: plotly's automargin measured 20 px
    # more than 0.52 em + 16 px at 1024 px.
    margin_l = int(0.55 * font * longest) + 28
    margin_r = TIMELINE_RIGHT_MARGIN_PX
    design_px = width_px or LEGEND_DESIGN_PX["present" if present else "normal"]

    times = sorted(
        {float(e[1]) for e in timeline_data.experiences}
        | {float(p.time) for p in timeline_data.points}
    )
    big = TIMELINE_MARKER_PX[present]
    # Room for the largest marker at each end, or for its ring (QA s47) where there are rings.
    pad_px = (big + (TIMELINE_RING_PX if timeline_data.unshared else 0)) / 2 + 4

    ids = [str(e[0]) for e in timeline_data.experiences]
    id_ticks = len(ids) <= TIMELINE_ID_TICKS_MAX

    def tick_labels(plot: float) -> list[str]:
        # Ids as long as the experiences' mean spacing holds (whole in a wide export), never
        # cut below TIMELINE_TICK_CHARS; distinct cuts, so that no two ticks read the same.
        room = (plot - 2 * pad_px) / max(len(times) - 1, 1)
        return distinct_cuts(ids, max(TIMELINE_TICK_CHARS, int((room - 8) / (0.5 * font))))

    labels = tick_labels(design_px - margin_l - margin_r) if id_ticks and ids else []
    if labels:
        # The last id is centred pad_px inside the plot: the rest of its half width takes the
        # right margin, or plotly drops it for leaving the figure (QA s48: the 1400 px export
        # lost its last tick, s3_pref_1_update).
        need = math.ceil(0.25 * font * len(labels[-1]) - pad_px) + 2
        if need > margin_r:
            margin_r = need
            labels = tick_labels(design_px - margin_l - margin_r)
    plot_px = float(design_px - margin_l - margin_r)
    if len(times) < 2:
        centre = times[0] if times else 0.0
        x_range = (centre - 1.0, centre + 1.0)
        per_px = plot_px / 2.0
        pitch = plot_px
    else:
        span = times[-1] - times[0]
        per_px = (plot_px - 2 * pad_px) / span  # px per time unit
        pad = pad_px / per_px
        x_range = (times[0] - pad, times[-1] + pad)
        pitch = min(b - a for a, b in zip(times, times[1:], strict=False)) * per_px
    # Neighbouring experiences' markers just touch, never cover each other.
    marker = int(max(TIMELINE_MIN_MARKER_PX, min(big, math.floor(pitch))))

    tick_vals: list[float] = []
    tick_text: list[str] = []
    tick_lines = 1
    if labels:
        shown = _timeline_tick_picks(timeline_data, labels, font, per_px)
        # Ids on two staggered lines where one line leaves experiences with a store's or the
        # optimum's memory unnamed that two would name (the second line's ids start with a
        # line break).
        marked = _timeline_marked(timeline_data)
        two = _timeline_tick_picks(timeline_data, labels, font, per_px, lines=2)
        named = {i for i, _ in shown}
        # Or where the second line names every experience that one line leaves unnamed.
        if sum(i in marked for i, _ in two) > sum(i in marked for i in named) or (
            len(two) == len(labels) > len(shown)
        ):
            shown, tick_lines = two, 2
        tick_vals = [float(timeline_data.experiences[i][1]) for i, _ in shown]
        tick_text = ["<br>" * line + labels[i] for i, line in shown]

    # Several memories of one row at one experience: side by side in the cell, in draw order
    # (TIMELINE_ON_TOP last), so no marker sits exactly on another.
    order = _timeline_type_order(timeline_data.types)
    cells: dict[tuple[str, float], list[int]] = {}
    for i, p in sorted(
        enumerate(timeline_data.points), key=lambda ip: (order.index(ip[1].type), ip[0])
    ):
        cells.setdefault((p.row, float(p.time)), []).append(i)
    offsets = [0.0] * len(timeline_data.points)
    for members in cells.values():
        k = len(members)
        if k > 1:
            step_px = max(3.0, min(0.75 * marker, 0.9 * pitch / k))
            for j, i in enumerate(members):
                offsets[i] = (j - (k - 1) / 2) * step_px / per_px
    return TimelineGeometry(
        font=font,
        row_labels=row_labels,
        margin_l=margin_l,
        margin_r=margin_r,
        plot_px=plot_px,
        x_range=x_range,
        marker=marker,
        tick_vals=tuple(tick_vals),
        tick_text=tuple(tick_text),
        x_offsets=tuple(offsets),
        tick_lines=tick_lines,
    )


def _timeline_marked(timeline_data: TimelineData) -> set[int]:
    """Indices of the experiences with a memory of the chosen store or the optimum (the
    first two rows)."""
    mine = set(timeline_data.rows[:2])
    ids = {p.experience_id for p in timeline_data.points if p.row in mine}
    return {i for i, e in enumerate(timeline_data.experiences) if str(e[0]) in ids}


def _timeline_tick_picks(
    timeline_data: TimelineData, labels: Sequence[str], font: int, per_px: float, lines: int = 1
) -> list[tuple[int, int]]:
    """Which experiences get their id ``labels`` under the axis, on which of ``lines`` lines:
    (index, line) in time order. As many as fit side by side on each line, those with a
    memory of the chosen store or the optimum first, then those with another store's, then
    the rest.

    Speaker QA s48: thinned from the left, the 520 px projector timeline labelled s3_fact_0,
    s3_fact_2 and an experience nobody wrote from, and neither of the two the optimum keeps.
    Within a rank the labels go in by where they end (leftmost right edge first), each on
    the first line it fits: on one line that labels the most of that rank around those
    already placed (interval scheduling).
    """
    marked = _timeline_marked(timeline_data)
    others = {p.experience_id for p in timeline_data.points}
    # About 0.5 em a character (Source Sans digits), and 8 px between labels.
    spans = []
    for i, (label, (eid, time, _)) in enumerate(
        zip(labels, timeline_data.experiences, strict=True)
    ):
        half = (0.5 * font * max(len(label), 1) + 8) / 2
        rank = 0 if i in marked else 1 if str(eid) in others else 2
        spans.append((rank, float(time) * per_px + half, i, half))

    def place(order: Sequence[tuple[int, float, int, float]]) -> list[tuple[int, int]]:
        placed: list[list[tuple[float, float]]] = [[] for _ in range(lines)]  # (centre, half)
        picks: list[tuple[int, int]] = []
        for _, right, i, half in order:
            centre = right - half
            for line, shown in enumerate(placed):
                if all(abs(centre - c) >= half + h for c, h in shown):
                    shown.append((centre, half))
                    picks.append((i, line))
                    break
        return sorted(picks)

    # Every id when they all fit: taken by where they start, each on the first line it fits,
    # which places all of them whenever any placement can (interval colouring). Speaker QA
    # s50: by rank, e10 took the line e09 needed, and e09 (no store wrote it) had no label on
    # a 13-experience axis with room for all 13 on two lines.
    every = place(sorted(spans, key=lambda s: (s[1] - 2 * s[3], s[2])))
    if len(every) == len(spans):
        return every
    return place(sorted(spans))


def _timeline_type_order(types: Sequence[str]) -> list[str]:
    """The memory types in drawing order: :data:`TIMELINE_ON_TOP` last (on top)."""
    return [t for t in types if t not in TIMELINE_ON_TOP] + [
        t for t in TIMELINE_ON_TOP if t in types
    ]


def _timeline_cut(fig: go.Figure, timeline_data: TimelineData, geo: TimelineGeometry) -> None:
    """The memories the stores wrote and their recency cut dropped: each its type's symbol
    hollow in its type's colour, crossed, on top of the rest; one legend entry for both."""
    idx = [i for i, p in enumerate(timeline_data.points) if p.cut]
    if not idx:
        return
    pts = [timeline_data.points[i] for i in idx]
    xs = [p.time + geo.x_offsets[i] for i, p in zip(idx, pts, strict=True)]
    ys = [geo.row_labels[p.row] for p in pts]
    hover = [
        f"{p.row}<br>{p.experience_id} (time {p.time:g}) → {p.candidate_id}"
        f"<br>written, cut to fit the budget<br>{p.type}, cost {p.cost:g}<br>{p.text}"
        for p in pts
    ]
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="markers",
            name=TIMELINE_CUT_NAME,
            legendgroup=TIMELINE_CUT_GROUP,
            showlegend=False,
            marker={
                "symbol": [hollow_symbol(TYPE_SYMBOLS.get(p.type, "circle")) for p in pts],
                "size": geo.marker,
                "color": [TYPE_COLORS.get(p.type, "#555") for p in pts],
                "line": {"width": 2},
            },
            hovertext=hover,
            hoverinfo="text",
        )
    )
    # The cross and the legend's entry: one symbol for every type, so the entry shows it.
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="markers",
            name=TIMELINE_CUT_NAME,
            legendgroup=TIMELINE_CUT_GROUP,
            marker={
                "symbol": "x-thin-open",
                "size": geo.marker,
                "color": TIMELINE_CUT_COLOR,
                "line": {"width": 2, "color": TIMELINE_CUT_COLOR},
            },
            hovertext=hover,
            hoverinfo="text",
        )
    )


def store_timeline(
    timeline_data: TimelineData, title: str, present: bool = False, width_px: int | None = None
) -> go.Figure:
    """What each store wrote per experience ("tombstone timeline").

    One row per store, a marker per memory at its experience's time; symbol and colour give the
    candidate type. A memory a package store wrote and cut to fit the budget is drawn hollow
    and crossed (:data:`TIMELINE_CUT_NAME`). Layout: :func:`timeline_geometry` (``width_px``:
    for a chart that wide, such as an export, instead of the design width).
    """
    geo = timeline_geometry(timeline_data, present, width_px)
    fig = new_figure()
    exp_row = "experiences"
    # Hundreds of experiences on one axis: full-size ticks merge into a solid band, so a dense
    # timeline draws them thinner and lighter (the memory markers follow the spacing).
    dense = len(timeline_data.experiences) > TIMELINE_DENSE
    fig.add_trace(
        go.Scatter(
            x=[e[1] for e in timeline_data.experiences],
            y=[geo.row_labels[exp_row]] * len(timeline_data.experiences),
            mode="markers",
            name="experience",
            marker={
                "symbol": "line-ns-open",
                "size": 10 if dense else 16,
                "color": "#bdbdbd" if dense else "#9e9e9e",
                "line": {"width": 1 if dense else 2},
            },
            hovertext=[f"{e[0]} (time {e[1]:g})<br>{e[2]}" for e in timeline_data.experiences],
            hoverinfo="text",
        )
    )
    unshared = timeline_data.unshared
    if unshared:
        # A ring around each memory only one of the store and the optimum keeps: on a dense
        # timeline the two rows are bands of overlapping markers that look alike (QA s47).
        # Drawn first, under the memories: it is wider than the band, so it shows above and
        # below it, and it hides no marker.
        mine = set(timeline_data.rows[:2])
        idx = [
            i
            for i, p in enumerate(timeline_data.points)
            if p.row in mine and p.candidate_id in unshared and not p.cut
        ]
        pts = [timeline_data.points[i] for i in idx]
        fig.add_trace(
            go.Scatter(
                x=[p.time + geo.x_offsets[i] for i, p in zip(idx, pts, strict=True)],
                y=[geo.row_labels[p.row] for p in pts],
                mode="markers",
                name=f"store ≠ {timeline_data.rows[1]}",
                legendgroup=TIMELINE_RING_GROUP,
                marker={
                    "symbol": "circle-open",
                    "size": geo.marker + TIMELINE_RING_PX,
                    "color": TIMELINE_RING_COLOR,
                    "line": {"width": 2.5},
                },
                hovertext=[
                    f"only {p.row} keeps {p.candidate_id}<br>{p.experience_id} (time {p.time:g})"
                    f"<br>{p.type}, cost {p.cost:g}<br>{p.text}"
                    for p in pts
                ],
                hoverinfo="text",
            )
        )
    small = geo.marker < TIMELINE_MARKER_PX[present]
    for ctype in _timeline_type_order(timeline_data.types):
        idx = [i for i, p in enumerate(timeline_data.points) if p.type == ctype and not p.cut]
        pts = [timeline_data.points[i] for i in idx]
        # A type only cut memories have keeps its legend entry (a point drawn nowhere): the
        # hollow marker's shape and colour are the type's (plotly leaves an empty trace out).
        fig.add_trace(
            go.Scatter(
                x=[p.time + geo.x_offsets[i] for i, p in zip(idx, pts, strict=True)] or [None],
                y=[geo.row_labels[p.row] for p in pts] or [None],
                mode="markers",
                name=ctype,
                marker={
                    "symbol": TYPE_SYMBOLS.get(ctype, "circle"),
                    "size": geo.marker,
                    "color": TYPE_COLORS.get(ctype, "#555"),
                    "line": {"width": 0.5 if small else 1, "color": "#222"},
                },
                hovertext=[
                    f"{p.row}<br>{p.experience_id} (time {p.time:g}) → {p.candidate_id}"
                    f"<br>{p.type}, cost {p.cost:g}<br>{p.text}"
                    for p in pts
                ],
                hoverinfo="text",
            )
        )
    _timeline_cut(fig, timeline_data, geo)
    rows = [exp_row, *timeline_data.rows]
    # No axis title beside the rows: the caption names them, and it took width from the plot.
    # An explicit range, top row first: "reversed" autorange spans only the rows with markers,
    # and rows of stores that wrote nothing vanished, the last drawn row on the plot's edge
    # with its markers cut in half (QA s47).
    fig.update_yaxes(
        type="category",
        categoryorder="array",
        categoryarray=[geo.row_labels[r] for r in rows],
        range=[len(rows) - 0.5, -0.5],
        autorange=False,
        title_text="",
        automargin=True,
    )
    fig.update_xaxes(
        title_text="experience (by time)", showgrid=True, range=list(geo.x_range), tickangle=0
    )
    if geo.tick_vals:  # label experiences by id (time in the hover), thinned to fit
        fig.update_xaxes(tickvals=list(geo.tick_vals), ticktext=list(geo.tick_text))
    # A second line of ids takes its room below the plot, not from it.
    extra_px = (geo.tick_lines - 1) * math.ceil(1.25 * geo.font)
    base_layout(fig, title, present, height=190 + 62 * len(rows) + extra_px)
    _explain_fonts(fig, present)
    fig.update_layout(
        legend={"itemsizing": "constant", "title": {"text": ""}},
        margin={"l": geo.margin_l, "r": geo.margin_r},
    )
    _legend_below(fig, present, tick_lines=geo.tick_lines)
    return fig


#: Evidence graph label geometry (QA s40, defect 2: at 1024 px candidate labels ran into the
#: unit nodes, unit labels onto the links and the query labels off the right edge). Labels sit
#: on the outer side of each layer: experiences and candidates left of their nodes, units above,
#: queries right; the layers are spaced in pixels at the design width for the labels' widths.
#: Estimated width of a label character, in em (Source Sans measures about 0.51 in Chromium).
GRAPH_CHAR_EM = 0.52
#: Free length of a link between a label's end and the next node (px).
GRAPH_LINK_GAP_PX = 16
#: The graph's left and right margins (px).
GRAPH_SIDE_MARGIN_PX = 12
#: Half the width of the store / optimum outline around a candidate (normal, present): the
#: 26 / 30 px diamond. Normal mode's are smaller so the candidates' pitch (set by two
#: adjacent diamonds) is 30 px, not 34: the 14 candidates of veg-to-pescatarian then fit a
#: 1280 x 720 screen with the title and the legend (QA s44: 741 px).
GRAPH_OUTLINE_PX = {False: 15, True: 17}
#: Marker sizes (px) of the store's square and the optimum's diamond (normal, present).
GRAPH_OUTLINE_MARKERS = {False: (22, 26), True: (24, 30)}
#: Smallest label font the graph shrinks to before cutting labels (px; normal, present).
GRAPH_MIN_FONT = {False: 12, True: 16}
#: Shortest a cut label gets (characters, with the ellipsis).
GRAPH_MIN_LABEL_CHARS = 8
#: The x-axis names of the layers (short: adjacent layers may be 60 px apart).
GRAPH_LAYER_NAMES = {
    "experience": "experiences",
    "candidate": "candidates",
    "unit": "units",
    "query": "queries",
}


@dataclass(frozen=True)
class GraphGeometry:
    """Where the evidence graph's layers and labels go, in pixels at the design width
    (:data:`LEGEND_DESIGN_PX`): see :func:`graph_geometry`."""

    font: int  # label font size (px)
    marker: int  # node marker size (px)
    labels: tuple[str, ...]  # the label shown per node ("" without labels), maybe cut, raw
    layer_x: dict[str, float]  # layer -> x (px from the plot's left edge at the design width)
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    plot_height: float  # px
    # layer -> (xanchor, yanchor, xshift, yshift) of its labels
    placement: dict[str, tuple[str, str, int, int]]


def _cut_label(text: str, limit: int) -> str:
    """``text`` cut in the middle to ``limit`` characters (the ends of ids differ most).

    >>> _cut_label("q:still:nina:drink:0", 12)
    'q:stil…ink:0'
    """
    if len(text) <= limit:
        return text
    tail = (limit - 1) // 2
    return text[: limit - 1 - tail] + "…" + text[len(text) - tail :]


def _cut_options(text: str, limit: int) -> Iterator[tuple[int, int]]:
    """The (head, tail) lengths a cut of ``text`` may keep, best first: ``limit`` characters
    cut in the middle, then the cut moved away from the middle, then a character longer, and
    so on. Each end keeps at least a quarter of the characters kept: a label like "s…0_update"
    says little of what the id is."""
    for size in range(max(limit, 3), len(text)):
        keep = size - 1  # the ellipsis takes one
        middle, least = keep // 2, max(1, keep // 4)
        # Tails by their distance from the middle, the longer of two as far.
        for away in range(max(middle - least, keep - least - middle) + 1):
            for tail in (middle + away, middle - away) if away else (middle,):
                if least <= tail <= keep - least:
                    yield keep - tail, tail


def _shared_lengths(texts: Sequence[str]) -> np.ndarray:
    """How many leading characters each two of ``texts`` share (an n x n array; 0 on the
    diagonal). Sorted, what two texts share is the least any two neighbours between them
    share: characters are compared only between neighbours."""
    n = len(texts)
    order = sorted(range(n), key=texts.__getitem__)
    next_shares = np.zeros(max(n - 1, 0), dtype=np.int64)
    for pos, (i, j) in enumerate(zip(order, order[1:], strict=False)):
        a, b = texts[i], texts[j]
        m, k = min(len(a), len(b)), 0
        while k < m and a[k] == b[k]:
            k += 1
        next_shares[pos] = k
    by_rank = np.zeros((n, n), dtype=np.int64)
    for pos in range(n - 1):
        by_rank[pos, pos + 1 :] = np.minimum.accumulate(next_shares[pos:])
    by_rank = np.maximum(by_rank, by_rank.T)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    return by_rank[np.ix_(rank, rank)]


def distinct_cuts(texts: Sequence[str], limit: int) -> list[str]:
    """``texts`` cut to about ``limit`` characters so that every cut names one text only.

    A cut in the middle alone gave different ids the same label: experience s3_pref_0_update
    and candidate s3_pref_0_update_compound_update both read "s3_pref…_update", and two
    timeline ticks "s3_pr…date" (speaker QA s48). A cut here keeps a head and a tail that no
    other text of ``texts`` starts and ends with, moving the cut or keeping more characters
    where the middle cut would be ambiguous; a text no cut tells apart is shown whole.

    >>> distinct_cuts(["s3_pref_0_update", "s3_pref_1_update", "s3_pref_0_old"], 10)
    ['s3…0_update', 's3…1_update', 's3_pr…_old']
    """
    unique = list(dict.fromkeys(texts))
    if all(len(text) <= limit for text in unique):
        return list(texts)
    # Checking each cut tried against every other text made this O(n^2 L^2) (11.7 s for 200
    # ids sharing heads and tails, reviewer s48). Another text reads as a cut keeping h
    # leading and k trailing characters when it shares at least those and is longer than
    # h + k (one character at least for the ellipsis); so per text, from the characters each
    # other text shares with it at either end: for each h the largest k some other text
    # still reads as, and each cut tried is one comparison.
    heads = _shared_lengths(unique)
    tails = _shared_lengths([text[::-1] for text in unique])
    lengths = np.array([len(text) for text in unique], dtype=np.int64)
    by_text = {text: text for text in unique}
    for i, text in enumerate(unique):
        if len(text) <= limit:
            continue
        near = np.flatnonzero((heads[i] > 0) & (tails[i] > 0))
        h = np.arange(len(text))[:, None]
        reads_as = np.where(
            heads[i, near] >= h, np.minimum(tails[i, near], lengths[near] - h - 1), 0
        )
        # reaches[h]: cuts keeping h leading characters and at most reaches[h] trailing
        # ones read as another text too.
        reaches = reads_as.max(axis=1, initial=0).tolist()
        # A shorter cut keeps no more at either end than some longest cut does (an end's
        # least share grows slower than the size), and a text reading as that longest cut
        # reads as the shorter one too: when every longest cut reads as another text, every
        # cut does, and the text is shown whole without trying them all.
        keep = len(text) - 2
        least = max(1, keep // 4)
        if not any(tail > reaches[keep - tail] for tail in range(least, keep - least + 1)):
            continue
        for head, tail in _cut_options(text, limit):
            if tail > reaches[head]:
                by_text[text] = text[:head] + "…" + text[len(text) - tail :]
                break
    return [by_text[t] for t in texts]


def graph_geometry(
    graph_data: GraphData, present: bool = False, width_px: int | None = None
) -> GraphGeometry:
    """The evidence graph's layout: layer positions, label font and texts, axis ranges and
    plot height, so that at the design width (or a chart ``width_px`` wide, as an export) no
    label meets another label or a node, the labels stay inside the figure and the unit
    labels have room above their nodes. Labels cut to fit are :func:`distinct_cuts`."""
    layers = [name for name, _ in graph_data.layer_x]
    show_text = graph_data.n_nodes <= 100
    marker = 18 if present else 14
    r = marker / 2
    outline_px = GRAPH_OUTLINE_PX[present]
    design_px = width_px or LEGEND_DESIGN_PX["present" if present else "normal"]
    plot_px = design_px - 2 * GRAPH_SIDE_MARGIN_PX
    tick_px = 20 if present else 14  # _explain_fonts' tick size
    placement = {
        "experience": ("right", "middle", -int(r + 5), 0),
        "candidate": ("right", "middle", -(outline_px + 4), 0),
        "unit": ("center", "bottom", 0, int(r + 2)),
        "query": ("left", "middle", int(r + 4), 0),
    }
    full = [str(t) if show_text else "" for t in graph_data.node_labels]

    def layout(font: int, labels: list[str]) -> tuple[dict[str, float], float]:
        def width(layer: str) -> float:
            pairs = zip(labels, graph_data.node_layers, strict=True)
            chars = [len(t) for t, ly in pairs if ly == layer]
            longest = max(chars, default=0)
            return GRAPH_CHAR_EM * font * longest + 4 if longest else 0.0

        def extent(layer: str) -> tuple[float, float]:  # px left and right of a node
            w = width(layer)
            outline = outline_px if layer == "candidate" else r
            if layer in ("experience", "candidate"):
                return (-placement[layer][2] + w if w else outline), outline
            if layer == "unit":
                return max(r, w / 2), max(r, w / 2)
            return r, (placement[layer][2] + w if w else r)

        def tick_half(layer: str) -> float:
            return 0.5 * 0.5 * tick_px * len(GRAPH_LAYER_NAMES[layer])

        xs: dict[str, float] = {}
        x = 0.0
        for k, layer in enumerate(layers):
            left, _ = extent(layer)
            if k == 0:
                x = max(left, tick_half(layer)) + 4
            else:
                prev = layers[k - 1]
                gap = max(
                    extent(prev)[1] + GRAPH_LINK_GAP_PX + left,
                    tick_half(prev) + tick_half(layer) + 8,
                )
                x = xs[prev] + gap
            xs[layer] = x
        end = x + (max(extent(layers[-1])[1], tick_half(layers[-1])) + 4 if layers else 0)
        return xs, end

    font = 18 if present else 13
    labels = list(full)
    xs, end = layout(font, labels)
    while end > plot_px and font > GRAPH_MIN_FONT[present]:
        font -= 1
        xs, end = layout(font, labels)
    limit = max((len(t) for t in labels), default=0)
    # Still too wide at the smallest font: cut the longest labels (the hover has them whole).
    # A distinct cut is never shorter than the middle cut, so no limit the middle cuts
    # overflow can fit: find the first that fits with those (cheap), and only from there
    # ask for distinct cuts, shortening further while they are still too wide (reviewer s48:
    # a distinct_cuts call per limit tried, about 50 a graph).
    cut_limit, cut_end = limit, end
    while cut_end > plot_px and cut_limit > GRAPH_MIN_LABEL_CHARS:
        cut_limit -= 1
        cut_end = layout(font, [_cut_label(t, cut_limit) for t in full])[1]
    if cut_limit < limit:
        limit = cut_limit + 1
        while end > plot_px and limit > GRAPH_MIN_LABEL_CHARS:
            limit -= 1
            labels = distinct_cuts(full, limit)
            xs, end = layout(font, labels)

    # Vertical: the pitch each layer's nodes need, the largest layer spread over y in [-1, 1].
    line = 1.25 * font + 4  # a label's box
    pitch = {
        "experience": max(line, marker) + 4,
        "candidate": max(line, 2 * (outline_px - 2)) + 4,
        "unit": marker + placement["unit"][3] + (line if show_text else 0) + 2,
        "query": max(line, marker) + 4,
    }
    span = 200.0
    for layer in layers:
        n = sum(1 for ly in graph_data.node_layers if ly == layer)
        span = max(span, (n - 1) * pitch[layer])
    top = r + placement["unit"][3] + (line if show_text else 0) + 4
    bottom = outline_px + 6
    per_px = 2.0 / span
    return GraphGeometry(
        font=font,
        marker=marker,
        labels=tuple(labels),
        layer_x=xs,
        # A chart of a given width (an export) spreads the layers over it, as a screen wider
        # than the design width does: kept at its own pixels, a 1400 px export drew the graph
        # in its left half.
        x_range=(0.0, end if width_px else max(end, plot_px)),
        y_range=(-1.0 - bottom * per_px, 1.0 + top * per_px),
        plot_height=span + top + bottom,
        placement=placement,
    )


#: Tallest evidence graph (px): past it the plot is squeezed (its labels may then overlap).
GRAPH_MAX_HEIGHT_PX = 2400
#: Legend name of a candidate the store wrote and its recency cut dropped at this budget.
GRAPH_CUT_NAME = "written by the store, cut at this budget"


def evidence_graph(
    graph_data: GraphData,
    title: str,
    present: bool = False,
    opt_word: str = "optimum",
    width_px: int | None = None,
) -> go.Figure:
    """Layered experience -> candidate -> unit -> query graph (layout: :func:`graph_geometry`;
    ``width_px``: for a chart that wide, such as an export, instead of the design width)."""
    geo = graph_geometry(graph_data, present, width_px)
    # The core places layer k at x = k; the figure spaces the layers for their labels.
    new_x = {old: geo.layer_x[name] for name, old in graph_data.layer_x}

    def remap(xs: Sequence[float | None]) -> list[float | None]:
        return [None if x is None else new_x.get(x, x) for x in xs]

    node_x = remap(graph_data.node_x)
    fig = new_figure()
    fig.add_trace(
        go.Scatter(
            x=remap(graph_data.edge_x),
            y=list(graph_data.edge_y),
            mode="lines",
            name="link",
            line={"color": "#c8c8c8", "width": 1},
            hoverinfo="skip",
        )
    )
    if graph_data.focus_edge_x:
        fig.add_trace(
            go.Scatter(
                x=remap(graph_data.focus_edge_x),
                y=list(graph_data.focus_edge_y),
                mode="lines",
                name="link of the focus unit",
                line={"color": COLORS["lost"], "width": 2.5},
                hoverinfo="skip",
            )
        )
    # Labels as annotations on a white box, so links do not run through the text. Collected
    # and set once: each add_annotation re-validates every earlier annotation, which made this
    # figure quadratic (0.86 s for 84 labels).
    annotations: list[dict] = []
    for layer in ("experience", "candidate", "unit", "query"):
        idx = [i for i, ly in enumerate(graph_data.node_layers) if ly == layer]
        if not idx:
            continue
        xa, ya, dx, dy = geo.placement[layer]
        annotations.extend(
            {
                "x": node_x[i],
                "y": graph_data.node_y[i],
                "text": _plain(geo.labels[i]),
                "showarrow": False,
                "xanchor": xa,
                "yanchor": ya,
                "xshift": dx,
                "yshift": dy,
                "font": {"size": geo.font, "color": "#222"},
                "bgcolor": "rgba(255,255,255,0.95)",
                "borderpad": 1,
                "hovertext": graph_data.node_hover[i],
            }
            for i in idx
            if geo.labels[i]
        )
        fig.add_trace(
            go.Scatter(
                x=[node_x[i] for i in idx],
                y=[graph_data.node_y[i] for i in idx],
                mode="markers",
                name=layer,
                # The x axis names every layer under its column: legend entries of their own
                # took two of the legend's four rows (QA s44).
                showlegend=False,
                marker={
                    "size": geo.marker,
                    "color": LAYER_COLORS[layer],
                    "line": {"width": 1, "color": "#333"},
                },
                hovertext=[graph_data.node_hover[i] for i in idx],
                hoverinfo="text",
            )
        )
    square_px, diamond_px = GRAPH_OUTLINE_MARKERS[present]
    outlines = [
        (graph_data.node_in_store, "held by the store", "square-open", COLORS["writer"], square_px),
        (
            graph_data.node_in_opt,
            f"held by the {opt_word}",
            "diamond-open",
            COLORS["opt"],
            diamond_px,
        ),
    ]
    if any(graph_data.node_cut):
        # The store's square crossed out: written, then cut to fit the budget (QA s49).
        outlines.insert(
            1,
            (graph_data.node_cut, GRAPH_CUT_NAME, "square-x-open", COLORS["writer"], square_px),
        )
    for flag, name, symbol, color, size in outlines:
        idx = [i for i, f in enumerate(flag) if f]
        fig.add_trace(
            go.Scatter(
                x=[node_x[i] for i in idx],
                y=[graph_data.node_y[i] for i in idx],
                mode="markers",
                name=name,
                marker={
                    "symbol": symbol,
                    "size": size,
                    "color": color,
                    "line": {"width": 3, "color": color},
                },
                hovertext=[graph_data.node_hover[i] for i in idx],
                hoverinfo="text",
            )
        )
    if annotations:
        fig.update_layout(annotations=[*fig.layout.annotations, *annotations])
    fig.update_xaxes(
        tickvals=[geo.layer_x[n] for n, _ in graph_data.layer_x],
        ticktext=[GRAPH_LAYER_NAMES[n] for n, _ in graph_data.layer_x],
        title_text="layer (experience → candidate → unit → query)",
        showgrid=False,
        zeroline=False,
        range=list(geo.x_range),
    )
    fig.update_yaxes(
        showticklabels=False, showgrid=False, zeroline=False, title_text="", range=list(geo.y_range)
    )
    if present:
        # The y axis shows nothing, yet plotly's automargin kept 45 px left of the plot for it:
        # in the 524 px column the layers were spaced for 496 px and drawn in 455, and the
        # layer names ran together (speaker QA s46). Normal mode keeps its 1280 px layout.
        fig.update_yaxes(automargin=False)
    base_layout(fig, title, present)
    _explain_fonts(fig, present)
    # The plot as tall as its labels need (the legend's rows are added below it).
    floor_px = 150 if present else 120
    top_px = fig.layout.margin.t or 70
    height = int(math.ceil(top_px + geo.plot_height + floor_px))
    fig.update_layout(
        height=min(height, GRAPH_MAX_HEIGHT_PX),
        margin={"l": GRAPH_SIDE_MARGIN_PX, "r": GRAPH_SIDE_MARGIN_PX},
    )
    # From the figure's bottom edge (speaker QA s39: placed as a fraction of the plot, the
    # legend sat on the axis title after the sidebar was closed in presentation mode). On a
    # projector the plot keeps the height its labels need and the page scrolls: held to one
    # screen, the whole graph of memaudit-small's 43 nodes drew its 25 candidates in 400 px,
    # labels and store / optimum marks on top of each other (speaker QA s48).
    need = min(geo.plot_height, GRAPH_MAX_HEIGHT_PX - top_px - floor_px)
    _legend_below(fig, present, min_plot_px=need if present else None)
    return fig


# --------------------------------------------------------------------------- budget curves
# (Budget sweep and Certification pages; builders take memaudit_core.curves results.)

#: Line colours and markers for writers / stores on the budget curves: one palette with the
#: CLI report's figures (:mod:`memaudit_core.palette`; researcher QA s50: the report drew gvt
#: blue, the app ochre). Apart from each other, the OPT blue and the ablation grey under
#: colour-vision deficiencies (see :data:`COLORS`).
METHOD_PALETTE, METHOD_SYMBOLS = palette.METHOD_PALETTE, palette.METHOD_SYMBOLS
EXTRA_PALETTE, EXTRA_SYMBOLS = palette.EXTRA_PALETTE, palette.EXTRA_SYMBOLS
#: OPT's blue and unit kinds' colours (preference, fact, temporal order): apart as those are.
ENGINE_COLORS = {
    "bnb": COLORS["opt"],
    "milp": KIND_COLORS["preference"],
    "enum": KIND_COLORS["fact"],
    "brute": KIND_COLORS["temporal_order"],
}
#: The core's display names, so a chart and the table beside it name an engine alike (s46).
ENGINE_NAMES = ENGINE_LABELS


def _plain(text: str) -> str:
    """Package-provided text for plotly labels: escape its pseudo-HTML (<b>, <a href>, ...)."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_TAG = re.compile(r"<[^>]*>")
#: Series named in a chart's text alternative before "and N more": the caption stays a line
#: or two on a projector.
ALT_MAX_SERIES = 4


def plain_text(text: object) -> str:
    """A plotly label as a screen reader should hear it: tags (``<br>``, ``<b>``) as spaces,
    entities (:func:`_plain`'s ``&lt;``) decoded, whitespace collapsed.

    >>> plain_text("Coverage:<br>gvt &amp; OPT")
    'Coverage: gvt & OPT'
    """
    return " ".join(html.unescape(_TAG.sub(" ", str(text))).split())


def _axis_text(axis: Any) -> str:
    return plain_text(axis.title.text) if axis and axis.title and axis.title.text else ""


def _chart_kind(traces: Sequence[Any]) -> str:
    types = {t.type for t in traces}
    if "heatmap" in types:
        return "Heatmap"
    if "bar" in types:
        return "Bar chart"
    modes = {t.mode or "lines+markers" for t in traces if t.type == "scatter"}
    if modes and all("lines" in m for m in modes):
        return "Line chart"
    if modes and not any("lines" in m for m in modes):
        return "Point chart"
    return "Chart"


def _largest_bar(trace: Any) -> str:
    """How many bars a single-series bar chart has and its tallest ("5 bars, highest x (12)"),
    or "" when its values are not all numbers."""
    horizontal = getattr(trace, "orientation", None) == "h"
    values = list(trace.x if horizontal else trace.y or ())
    labels = list(trace.y if horizontal else trace.x or ())
    if not values or len(labels) != len(values):
        return ""
    if not all(isinstance(v, int | float) and math.isfinite(v) for v in values):
        return ""
    top = max(range(len(values)), key=lambda i: values[i])
    return f"{len(values)} bars, highest {plain_text(labels[top])} ({values[top]:.4g})"


def text_alternative(fig: go.Figure) -> str:
    """The chart in one line for readers who cannot see it (QA s47: the 14 charts had no
    accessible name): its title, its kind, what its axes measure, its named series, and for a
    single bar series its largest bar. Read from the figure alone, so every chart, whatever
    page builds it, says the same things the drawing shows."""
    title = plain_text(fig.layout.title.text or "") if fig.layout.title else ""
    traces = [t for t in fig.data if t.visible not in (False, "legendonly")]
    x, y = _axis_text(fig.layout.xaxis), _axis_text(fig.layout.yaxis)
    heat = [t for t in traces if t.type == "heatmap" and t.z is not None and len(t.z)]
    if heat:
        z = max(heat, key=lambda t: len(t.z) * len(t.z[0])).z
        what = f"{len(z)} rows × {len(z[0])} columns" + (f" of {y}" if y else "")
    else:
        horizontal = bool(traces) and getattr(traces[0], "orientation", None) == "h"
        value, category = (x, y) if horizontal else (y, x)
        if value and category:
            link = "per" if "bar" in {t.type for t in traces} else "against"
            what = f"{value} {link} {category}"
        else:
            what = value or category
    parts = [_chart_kind(traces) + (f" of {what}" if what else "")]
    names = list(
        dict.fromkeys(plain_text(t.name) for t in traces if t.name and t.showlegend is not False)
    )
    if len(names) > 1:
        shown = names[:ALT_MAX_SERIES]
        more = len(names) - len(shown)
        # Names hold commas ("OPT, one per group (k = 1)"): semicolons keep them apart.
        parts.append("Series: " + "; ".join(shown) + (f"; and {more} more" if more else ""))
    bars = [t for t in traces if t.type == "bar"]
    if len(bars) == 1 and len(traces) == 1:
        top = _largest_bar(bars[0])
        if top:
            parts[-1] += f", {top}"
    summary = ". ".join(parts) + "."
    return f"{title.rstrip('.')}. {summary}" if title else summary


writer_color_slots = palette.writer_color_slots
style_slots = palette.style_slots


def _method_slots(methods, order: Sequence[str] = ()) -> dict[str, int | None]:
    """:func:`style_slots` of ``methods`` (memaudit_core.curves.Method)."""
    return style_slots([m.key for m in methods], order)


_slot_style = palette.slot_style


def _method_colors(methods, order: Sequence[str] = ()) -> dict[str, str]:
    """Method key -> line colour (see :func:`style_slots`); ablations grey."""
    return {
        key: COLORS["ablation"] if slot is None else _slot_style(slot)[0]
        for key, slot in _method_slots(methods, order).items()
    }


def _method_symbols(methods, order: Sequence[str] = ()) -> dict[str, str]:
    """Method key -> marker shape, one per palette slot; ablations are diamonds."""
    return {
        key: "diamond" if slot is None else _slot_style(slot)[1]
        for key, slot in _method_slots(methods, order).items()
    }


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


#: Room between the x-axis title and a legend below the plot.
LEGEND_GAP_PX = 24


#: Smallest plot area (px) of a chart with a legend of :func:`_legend_below` in presentation
#: mode, at :data:`LEGEND_DESIGN_PX` where the legend takes the most rows; on a wider screen the
#: legend takes fewer rows and the plot their room. Speaker QA s46: the Budget sweep's 9 curves
#: left a 159 px plot in a 630 px chart at every width (the margin held the 9 rows the legend
#: took at 520 px), the y-axis title ran into the chart title, and at 1920 px 270 px stayed
#: empty under a one-row legend.
PRESENT_MIN_PLOT_PX = 300


def _legend_rows(fig: go.Figure, font_px: float, width_px: float) -> int:
    """How many rows plotly's horizontal legend takes in ``width_px`` (the chart's width from
    the plot's left edge): one if every entry fits side by side, else a grid whose columns
    are as wide as the widest entry.

    >>> fig = go.Figure([go.Scatter(name=n) for n in ("OPT (certified)", "gvt", "density")])
    >>> _legend_rows(fig, 15, 600), _legend_rows(fig, 15, 380), _legend_rows(fig, 15, 150)
    (1, 2, 3)

    A ``grouped`` legend stacks each legend group's entries and wraps whole groups, first
    fit (the cost-rule chart's reference with its rule); each group counts as one entry as
    wide as its widest and as tall as its entries' lines:

    >>> _ = fig.update_traces(legendgroup="g", selector=lambda t: t.name != "OPT (certified)")
    >>> _ = fig.update_layout(legend_traceorder="grouped")
    >>> _legend_rows(fig, 15, 600), _legend_rows(fig, 15, 150)
    (2, 3)
    """
    shown = [t for t in fig.data if t.name and t.showlegend is not False and t.visible is not False]
    if not shown:
        return 0
    names = [str(t.name).split("<br>") for t in shown]
    # Symbol and padding, about 0.5 em per character (Source Sans is a little narrower,
    # Arial in exported images a little wider: measured in Chromium at 14 and 21 px), and
    # plotly's gap between entries. An entry of several lines (``<br>``) takes a row per line.
    widths = [40 + 0.5 * font_px * max(len(line) for line in name) + 30 for name in names]
    if "grouped" in str(fig.layout.legend.traceorder or ""):
        return _grouped_legend_rows(shown, names, widths, width_px)
    if sum(widths) <= width_px:
        return max(len(name) for name in names)
    per_row = max(1, int(width_px // max(widths)))
    return sum(
        max(len(name) for name in names[k : k + per_row]) for k in range(0, len(names), per_row)
    )


def _grouped_legend_rows(
    traces: Sequence[Any], names: list[list[str]], widths: list[float], width_px: float
) -> int:
    """:func:`_legend_rows` of a ``grouped`` horizontal legend: groups side by side, each
    one's entries stacked, a group that does not fit the row starting the next (plotly.js's
    first-fit layout); a trace without a group is a group of its own."""
    groups: dict[Any, list[int]] = {}
    for k, t in enumerate(traces):
        groups.setdefault(t.legendgroup or ("", k), []).append(k)
    rows, used, tallest = 0, 0.0, 0
    for members in groups.values():
        width = max(widths[k] for k in members)
        lines = sum(len(names[k]) for k in members)
        if used and used + width > width_px:
            rows, used, tallest = rows + tallest, 0.0, 0
        used += width
        tallest = max(tallest, lines)
    return rows + tallest


def _legend_below(
    fig: go.Figure,
    present: bool,
    rotated_ticks: bool = False,
    half: bool = False,
    min_plot_px: float | None = None,
    tick_lines: int = 1,
) -> None:
    """The legend under the x-axis title, placed in pixels from the fonts the axis uses.

    Many curves: a legend above the plot would collide with the title on a projector. A
    fixed fraction of the plot's height (-0.2) put the legend on the axis title of a short
    plot (QA s20c: the Overview's cost histogram, 170 px of plot, legend 34 px below it).
    Call after :func:`base_layout`, which sets the height and the fonts.

    The legend is placed from the figure's bottom edge (``yref="container"``) with a bottom
    margin for the rows it takes at :data:`LEGEND_DESIGN_PX`: placed as a fraction of the plot
    (``yref="paper"``), a legend that wrapped to more rows than the margin held made plotly
    push the margin, and after the sidebar was closed the legend stayed where the pushed
    layout had put it, on the axis title (speaker QA s39, Budget sweep in presentation mode).

    A chart taller than :data:`PRESENT_MAX_HEIGHT` (many rows in normal mode) gets its legend
    above the plot instead, under the title (:func:`_legend_above`). In presentation mode
    plotly reserves the legend's rows at the width it draws the chart (:func:`_legend_fit`),
    the plot kept at least :data:`PRESENT_MIN_PLOT_PX` tall. ``min_plot_px``: the
    plot is at least this tall, the chart growing past one screen if it must (the caller
    marks it with :func:`allow_scroll`). ``tick_lines``: the x tick labels' lines (the
    timeline's staggered ids take two).
    """
    if present and (fig.layout.height or 0) > PRESENT_MAX_HEIGHT:
        fig.update_layout(height=PRESENT_MAX_HEIGHT)  # what render.chart shows anyway
    axis = fig.layout.xaxis
    tick_px = axis.tickfont.size or fig.layout.font.size or 15
    title_px = axis.title.font.size or fig.layout.font.size or 15
    legend_px = fig.layout.legend.font.size or fig.layout.font.size or 15
    # Tick labels (with the tick's pad), the axis title's line, then the gap; rotated tick
    # labels take 60 px more (app QA: the ablation drop chart's budgets).
    # Tick labels on ``tick_lines`` lines (staggered) take a line's height each.
    ticks_px = (60 if rotated_ticks else 0) + (tick_lines - 1) * math.ceil(1.25 * tick_px)
    offset = tick_px + 8 + 1.3 * title_px + LEGEND_GAP_PX + ticks_px
    design_px = LEGEND_DESIGN_PX["half" if half else "present" if present else "normal"]
    # The legend starts at the plot's left edge (x = 0) and may run into the right margin.
    rows = max(1, _legend_rows(fig, legend_px, design_px - (fig.layout.margin.l or 0)))
    floor_px = (150 if present else 120) + ticks_px
    bottom = max(floor_px, offset + rows * 1.6 * legend_px + 10)
    height = fig.layout.height or 450
    if bottom > floor_px and not (present and height >= PRESENT_MAX_HEIGHT):
        # The extra rows take room below, not from the plot.
        height = height + (bottom - max(floor_px, offset + 2 * legend_px))
        if present:
            height = min(height, PRESENT_MAX_HEIGHT)
    if present:
        min_plot_px = max(min_plot_px or 0.0, PRESENT_MIN_PLOT_PX)
    if min_plot_px is not None:
        height = max(height, math.ceil((fig.layout.margin.t or 70) + min_plot_px + bottom))
    if present:
        # Above the plot past one screen, for the reason below.
        _legend_fit(fig, height, offset - LEGEND_GAP_PX, above=height > PRESENT_MAX_HEIGHT)
        return
    if height > PRESENT_MAX_HEIGHT:
        # Taller than a 1280 x 720 screen: below the plot, the legend was never on screen with
        # the title it explains (QA s44: the cost-rule chart at 840 px, the evidence graph at
        # 741 px). Between the title and the plot, in the rows it takes; the plot keeps its
        # size.
        plot_px = height - (fig.layout.margin.t or 70) - bottom
        _legend_above(fig, rows, legend_px, plot_px, offset - LEGEND_GAP_PX)
        return
    fig.update_layout(
        height=height,
        legend={
            "orientation": "h",
            "yref": "container",
            "yanchor": "top",
            "y": (bottom - offset) / height,
            "xanchor": "left",
            "x": 0,
        },
        margin={"b": bottom},
    )


def _legend_fit(fig: go.Figure, height: int, axis_px: float, above: bool) -> None:
    """A presentation chart's legend under the title (``above``) or along the bottom edge,
    the plot taking what the legend's rows leave as plotly draws them at the chart's width.

    Plotly.js reserves a container-placed legend's room beyond the margin the axes push
    (``automargin``): a legend wrapping to more rows on a narrow screen takes room from the
    plot, one that fits a row on a wide screen gives it back, and a resize recomputes it (the
    legend placed in the plot's fractions was pushed onto the axis title once the sidebar
    closed: speaker QA s39). ``height`` holds the plot at :data:`PRESENT_MIN_PLOT_PX` with the
    rows the legend takes at :data:`LEGEND_DESIGN_PX`; ``axis_px``: room for the x axis's
    ticks and title until plotly has measured them. Taller than one screen, the chart scrolls.
    """
    title_top = fig.layout.margin.t or 70
    # Under the title's last line (see _legend_above).
    y = 1 - (title_top - 26) / height if above else 0
    fig.update_layout(
        height=height,
        legend={
            "orientation": "h",
            "yref": "container",
            "yanchor": "top" if above else "bottom",
            "y": y,
            "xanchor": "left",
            "x": 0,
        },
        margin={"b": math.ceil(axis_px)},
    )
    fig.update_xaxes(automargin=True)
    if height > PRESENT_MAX_HEIGHT:
        allow_scroll(fig)


def _legend_above(
    fig: go.Figure, rows: int, legend_px: float, plot_px: float, bottom_px: float
) -> None:
    """A horizontal legend of ``rows`` rows between the title and a plot ``plot_px`` tall,
    ``bottom_px`` left under the plot for its tick labels and axis title.

    Placed from the figure's top edge in pixels (``yref="container"``), as
    :func:`_legend_below` places its legend from the bottom edge: under the title's last
    line, whose bottom is about 32 px above :func:`base_layout`'s top margin at any number
    of lines (:func:`_title_and_margin`).
    """
    title_top = fig.layout.margin.t or 70
    legend_top = title_top - 26
    top = int(math.ceil(legend_top + rows * 1.6 * legend_px + 14))
    bottom = int(math.ceil(max(60.0, bottom_px)))
    height = int(math.ceil(top + plot_px + bottom))
    fig.update_layout(
        height=height,
        legend={
            "orientation": "h",
            "yref": "container",
            "yanchor": "top",
            "y": 1 - legend_top / height,
            "xanchor": "left",
            "x": 0,
        },
        margin={"t": top, "b": bottom},
    )


def _hollow_legend(fig: go.Figure, name: str) -> None:
    """A legend-only entry saying what a hollow marker means (no data point of its own)."""
    fig.add_scatter(
        x=[None],
        y=[None],
        mode="markers",
        name=name,
        marker={"symbol": "circle-open", "size": 10, "color": "#555"},
        hoverinfo="skip",
    )


def _budget_on_right(fig: go.Figure, budget: float) -> bool:
    """Whether ``budget`` lies in the right half of the budgets the figure's traces span."""
    xs = [
        float(x)
        for trace in fig.data
        for x in (trace.x or ())
        if isinstance(x, (int, float)) and not isinstance(x, bool)
    ]
    if not xs:
        return False
    return budget > (min(xs) + max(xs)) / 2


def _outside_grid(fig: go.Figure, budget: float | None) -> bool:
    """Whether ``budget`` lies outside the budgets the figure's traces span (False when the
    figure has no budgets yet).

    QA s42 (Budget sweep, defect 2): the sidebar's "B = 12 words" beside a 1-3 grid stretched
    the x-axis fourfold to reach a line no point of the chart is near."""
    xs = _budgets_drawn(fig)
    return budget is not None and bool(xs) and not min(xs) <= budget <= max(xs)


def _budgets_drawn(fig: go.Figure) -> list[float]:
    """The x values (budgets) of the figure's traces."""
    return [
        float(x)
        for trace in fig.data
        for x in (trace.x or ())
        if isinstance(x, (int, float)) and not isinstance(x, bool)
    ]


def _swept(fig: go.Figure, budget: float | None) -> bool:
    """Whether some trace of the figure has a point (a budget of the grid) at ``budget``."""
    return budget in set(_budgets_drawn(fig))


def _budget_text(budget: float, unit: str, present: bool) -> str:
    """The sidebar budget's label ("sidebar" only where a sidebar is shown)."""
    return f"{'' if present else 'sidebar '}B = {budget:.10g} {unit}"


#: Said under the sidebar budget's label where the chart has no point at that budget (QA s50:
#: the Budget sweep's "B = 6" between its 4 and 8 read as a budget of the chart, the straight
#: segments through it as its values). No longer than the shortest label above it, so the
#: placement worked out for that label holds for both.
NOT_SWEPT_TEXT = "(not swept)"


def _mark_budget(
    fig: go.Figure,
    budget: float | None,
    unit: str,
    present: bool = False,
    xanchor: str | None = None,
    swept: bool = True,
) -> None:
    if budget is None or _outside_grid(fig, budget):
        # Outside the grid the line marks no budget of the chart: not drawn (QA s42, defect 2).
        return
    fig.add_vline(x=budget, line_dash="dot", line_color="#999")
    # Inside the plot's top edge, below the title (app QA: above the plot area the label
    # touched the title). The label runs towards the middle of the plot unless ``xanchor``
    # says otherwise: to the right of a budget at the right end it drew over the largest
    # budgets' points and the "OPT = 1" label (s38), and widened the x-axis to fit.
    if xanchor is None:
        xanchor = "right" if _budget_on_right(fig, budget) else "left"
    fig.add_annotation(
        x=budget,
        y=1.0,
        yref="paper",
        yanchor="top",
        xanchor=xanchor,
        showarrow=False,
        text=_budget_text(budget, unit, present),
        font={"color": "#666"},
        bgcolor="rgba(255,255,255,0.8)",
    )
    if not swept:
        fig.add_annotation(
            x=budget,
            y=1.0,
            yref="paper",
            yanchor="top",
            # One line down: about 1.5 times the chart's font (base_layout's 15 / 22 px).
            yshift=-(33 if present else 23),
            xanchor=xanchor,
            showarrow=False,
            text=NOT_SWEPT_TEXT,
            font={"color": "#666"},
            bgcolor="rgba(255,255,255,0.8)",
        )


#: Width of a character of a chart's labels, in em: the estimate tick labels and bar labels
#: use here (Source Sans is narrower; an overestimate only moves a label sooner).
LABEL_EM_PER_CHAR = 0.6


def _label_px(text: str, font_px: float) -> float:
    """Estimated width (px) of a one-line label, with its 4 px padding either side."""
    return LABEL_EM_PER_CHAR * font_px * len(text) + 8


def _top_labels(
    fig: go.Figure, budget: float | None, budget_text: str, opt_text: str, present: bool
) -> tuple[str | None, str]:
    """Where the ratio chart's two labels at its top go: the sidebar budget label's xanchor
    and the "OPT = 1" line's annotation position.

    QA s41 (Budget sweep, event-graph-500 at budget 1310 on a 131-2620 grid): the budget
    label, just left of the middle, ran right into "OPT or incumbent = 1" at the top right.
    The labels are placed by their estimated widths (:data:`LABEL_EM_PER_CHAR`) on the
    narrowest plot the chart is designed for (:data:`LEGEND_DESIGN_PX` less the margins of
    :func:`base_layout`): the budget label towards the middle and the OPT label at the far
    end if they fit, else the other ends, else the OPT label below its line."""
    if budget is None:
        return None, "top right"
    xs = [
        float(x)
        for trace in fig.data
        for x in (trace.x or ())
        if isinstance(x, (int, float)) and not isinstance(x, bool)
    ] + [float(budget)]
    lo, hi = min(xs), max(xs)
    plot_px = LEGEND_DESIGN_PX["present" if present else "normal"] - 70 - 30
    font_px = 22 if present else 15
    at = plot_px * ((budget - lo) / (hi - lo) if hi > lo else 0.5)
    budget_w, opt_w = _label_px(budget_text, font_px), _label_px(opt_text, font_px)
    budget_span = {"left": (at, at + budget_w), "right": (at - budget_w, at)}
    opt_span = {"top right": (plot_px - opt_w, plot_px), "top left": (0.0, opt_w)}
    toward_middle = "right" if _budget_on_right(fig, budget) else "left"
    far_end = "top left" if toward_middle == "right" else "top right"
    sides = [toward_middle, "left" if toward_middle == "right" else "right"]
    ends = [far_end, "top right" if far_end == "top left" else "top left"]
    for side in sides:
        b0, b1 = budget_span[side]
        if b0 < 0 or b1 > plot_px:
            continue
        for end in ends:
            o0, o1 = opt_span[end]
            if b1 <= o0 or o1 <= b0:
                return side, end
    return toward_middle, far_end.replace("top", "bottom")


#: What the Budget sweep's points open when clicked (QA s41, defect 1: the caption said "Click
#: a point to open Compare there" and a dashed ablation point opened Compare for another writer).
SWEEP_CLICK_CAPTION = (
    "Click a writer's or store's point to open Compare for it at that budget, or an OPT point "
    "to open Compare at that budget for the sidebar's writer / store. Dashed points (optima "
    "without some candidate types) are not a writer or store and open nothing."
)


@dataclass(frozen=True)
class SweepClick:
    """A clicked Budget sweep point: where Compare opens, or why it does not."""

    budget: float
    #: The writer / store key Compare opens; "" for an OPT point (the sidebar's choice stays).
    store_key: str
    #: Why this point opens no Compare (an ablation optimum), else None.
    refusal: str | None = None


def _click_key(method) -> str:
    """customdata[0] of a method's points: its store key, or its ``ablation:`` method key (an
    ablation has no store; QA s41, defect 1: "" made it read as an OPT point)."""
    return method.store_key or method.key


def sweep_click(event: Any) -> SweepClick | None:
    """The first selected point of a Budget sweep chart's selection ``event`` (customdata
    ``[click key, budget, ...]``, see :func:`budget_value_curve`), None when nothing is selected.

    customdata may come back as a dict keyed by string index (STACK_NOTES 4.4).
    """
    points = (event or {}).get("selection", {}).get("points", []) if event else []
    for point in points:
        data = point.get("customdata")
        if isinstance(data, dict):
            data = [data.get(str(i)) for i in range(len(data))]
        if not data or len(data) < 2 or data[1] is None:
            continue
        key, budget = str(data[0] or ""), float(data[1])
        if key.startswith("ablation:"):
            name = key.partition(":")[2]
            label = ABLATION_LABELS.get(name, name)
            return SweepClick(
                budget,
                "",
                f"“{label}” at B = {budget:.10g} is an optimum, not a writer or store: there "
                "is no store to open on Compare. Click a writer's or store's point, or an OPT "
                "point.",
            )
        return SweepClick(budget, key)
    return None


#: What a Budget sweep chart's margins hold besides its tick labels, by presentation mode
#: (:func:`base_layout`'s fonts), measured in Chromium on the page (s54): left of the widest y
#: tick label, its pad, the rotated y title and its standoff; below the plot, the x tick
#: labels, the x title and their standoffs (plotly's ``automargin`` pushes).
SWEEP_AXIS_ROOM_PX = {False: {"l": 57.5, "b": 72.5}, True: {"l": 68.4, "b": 88.4}}
#: What a one-row legend at the figure's bottom edge (presentation mode, :func:`_legend_fit`)
#: takes below the axis's room (measured 41 px at 21 px).
PRESENT_LEGEND_ROW_PX = 41
#: A presentation chart's width at 1024 px with the sidebar closed, as presentation mode
#: opens (measured 824 px): a legend of one row there is asked for; more rows, or the sidebar
#: opened (:data:`LEGEND_DESIGN_PX`), and plotly widens the margin for them as before.
PRESENT_CHART_PX = 824
#: What a horizontal legend entry takes besides its text: the symbol and the gaps (px).
LEGEND_ENTRY_PX = 50
#: Plotly's autorange of a lines+markers y axis: 5 % of the plot's length past the highest
#: point, and the marker's radius and line (the OPT curve's 15 px markers).
AUTORANGE_PAD_SHARE = 0.05
AUTORANGE_MARKER_PX = 9.5


def linear_tick_labels(lo: float, hi: float, length_px: float) -> list[str]:
    """The tick labels plotly draws on a linear y axis over ``[lo, hi]`` ``length_px`` long
    with automatic ticks (about one per 40 px, 5 to 10 of them, steps of 1, 2 or 5 times a
    power of ten), or [] where its labels would take another form (a "k" suffix).

    >>> linear_tick_labels(0, 1.15, 243)
    ['0', '0.2', '0.4', '0.6', '0.8', '1']
    >>> linear_tick_labels(0, 81.6, 283)
    ['0', '20', '40', '60', '80']
    """
    span = hi - lo
    if not span > 0 or max(abs(lo), abs(hi)) >= 1e4:
        return []
    rough = span / (min(max(length_px / 40, 4), 9) + 1)
    base = 10 ** math.floor(math.log10(rough))
    step = base * next(m for m in (2, 5, 10) if m >= rough / base - 1e-9)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    first = math.ceil(lo / step - 1e-9)
    labels = []
    k = first
    while k * step <= hi + 1e-9 * span:
        text = f"{k * step:.{decimals}f}"
        labels.append(text.rstrip("0").rstrip(".") if "." in text else text)
        k += 1
    return ["0" if t in ("-0", "") else t for t in labels]


def _y_data_top(fig: go.Figure) -> float:
    """The highest y a figure's traces draw, error bars included."""
    top = 0.0
    for trace in fig.data:
        ys = [y for y in (trace.y or ()) if isinstance(y, (int, float))]
        ups = list(trace.error_y.array or ()) if trace.error_y.visible is not False else []
        for k, y in enumerate(ys):
            top = max(top, y + (ups[k] if k < len(ups) and ups[k] is not None else 0.0))
    return top


def _sweep_margins(fig: go.Figure, present: bool) -> None:
    """Ask for the left and bottom margins plotly's ``automargin`` finds, so a Budget sweep
    chart is drawn once (see :func:`label_margin_px`).

    Its figure changes with the sidebar's budget (the dotted line), so every budget change drew
    it from scratch; with the 70 px left margin and a bottom margin a few px short of the x
    axis's ticks and title, plotly drew each chart twice (s54). The legend is where
    :func:`_legend_below` put it: below, plotly keeps a container-placed legend clear of the
    axis by widening the margin, so the margin asked is the legend's room plus the axis's. In
    presentation mode the legend is along the bottom edge and plotly reserves the rows it takes
    at the width it draws: the margin asked holds one row where the legend takes one at
    :data:`PRESENT_CHART_PX`, else plotly widens it as before.
    """
    room = SWEEP_AXIS_ROOM_PX[present]
    legend = fig.layout.legend
    height = fig.layout.height
    bottom = fig.layout.margin.b
    if legend.yref == "container" and legend.yanchor == "top" and legend.y < 0.5:
        # Normal mode, below the plot: the legend's top stays where it is.
        bottom = max(bottom, legend.y * height + room["b"])
    elif legend.yref == "container" and legend.yanchor == "bottom" and legend.y == 0:
        legend_px = legend.font.size or fig.layout.font.size
        # Its entries in the app's font, each with its symbol and gaps (plotly's 40 + 10 px);
        # from the plot's left edge, a horizontal legend may run into the right margin.
        shown = [t.name for t in fig.data if t.name and t.showlegend is not False]
        entries = sum(text_em(str(name)) * legend_px + LEGEND_ENTRY_PX for name in shown)
        # The plot starts after the y tick labels and title (up to about 110 px).
        if "<br>" not in "".join(map(str, shown)) and entries <= PRESENT_CHART_PX - 110:
            bottom = max(bottom, room["b"] + PRESENT_LEGEND_ROW_PX)
    bottom = math.ceil(bottom)
    length = height - fig.layout.margin.t - bottom
    axis = fig.layout.yaxis
    if axis.range is not None:
        lo, hi = axis.range
    else:  # rangemode "tozero"
        pad = AUTORANGE_PAD_SHARE * length + AUTORANGE_MARKER_PX
        lo, hi = 0.0, _y_data_top(fig) * length / max(1.0, length - pad)
    labels = linear_tick_labels(lo, hi, length)
    left = fig.layout.margin.l
    if labels:
        left = max(left, label_margin_px(labels, axis.tickfont.size, room["l"]))
    fig.update_layout(margin={"l": left, "b": bottom})


def budget_value_curve(
    curve, title: str, present: bool = False, current_budget=None, order: Sequence[str] = ()
):
    """F vs budget: OPT solid (filled markers = certified; hollow markers with an error bar up to
    the proven bound = uncertified incumbent), writers / stores as lines, ablations dashed.

    Every point carries ``customdata = [click key, budget, ...]`` for click-to-compare (see
    :func:`sweep_click`): "" on OPT points, the store key on a writer's / store's, the
    ``ablation:`` key on an ablation's. ``order`` gives stores their styles
    (:func:`style_slots`).
    """
    fig = new_figure()
    opt = curve.opt
    xs = [p.budget for p in opt]
    fig.add_scatter(
        x=xs,
        y=[p.value for p in opt],
        mode="lines+markers",
        # QA s41, defect 4: an external store's F above this line (its ratio is over P+'s
        # optimum) read as a point above the optimum; the legend says whose optimum it is.
        name=("OPT (certified)" if curve.all_certified else "OPT / incumbent")
        + (" of package P, not P+" if curve.has_external else ""),
        # Wide line and large markers underneath: a writer that matches OPT (drawn on top,
        # thinner) leaves a visible blue halo instead of hiding the optimum.
        line={"color": COLORS["opt"], "width": 7},
        marker={
            "size": 15,
            "color": [COLORS["opt"] if p.certified else "white" for p in opt],
            "line": {"color": COLORS["opt"], "width": 2},
            "symbol": ["circle" if p.certified else "circle-open" for p in opt],
        },
        customdata=[["", p.budget, p.label, p.bound] for p in opt],
        hovertemplate="%{customdata[2]}<br>B = %{x:~g}<br>value = %{y:.4f}"
        "<br>proven bound = %{customdata[3]:.4f}<extra></extra>",
    )
    uncert = [p for p in opt if not p.certified]
    if uncert:
        fig.add_scatter(
            x=[p.budget for p in uncert],
            y=[p.value for p in uncert],
            mode="markers",
            # Words, not glyphs: a trailing "┬" read as a typo (app QA).
            name="not proven: incumbent (hollow), whisker up to its proven bound",
            marker={
                "size": 13,
                "symbol": "circle-open",
                "color": COLORS["opt"],
                "line": {"width": 2},
            },
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [max(p.bound - p.value, 0.0) for p in uncert],
                "arrayminus": [0.0] * len(uncert),
                "color": COLORS["bound"],
                "thickness": 3,
                "width": 10,
            },
            # The gap as every face prints it (s52: the tables showed fractions).
            customdata=[["", p.budget, p.label, p.bound, gap_percent(p.gap)] for p in uncert],
            hovertemplate="incumbent %{y:.4f}<br>proven bound %{customdata[3]:.4f} "
            "(gap %{customdata[4]})<br>B = %{x:~g}<extra></extra>",
        )
    colors, symbols = _method_colors(curve.methods, order), _method_symbols(curve.methods, order)
    for m in curve.methods:
        pts = curve.series(m.key)
        dashed = m.kind == "ablation"
        fig.add_scatter(
            x=[p.budget for p in pts],
            y=[p.value for p in pts],
            mode="lines+markers",
            name=_plain(m.label),
            line={"color": colors[m.key], "width": 3, "dash": "dash" if dashed else "solid"},
            marker={"size": 8 if dashed else 11, "symbol": symbols[m.key]},
            customdata=[[_click_key(m), p.budget, p.ratio_text] for p in pts],
            hovertemplate="%{fullData.name}<br>B = %{x:~g}<br>F = %{y:.4f}"
            "<br>ratio = %{customdata[2]}<extra></extra>",
        )
    unit = curve.cost_unit
    fig.update_xaxes(title_text=f"budget B ({unit})")
    fig.update_yaxes(title_text=VALUE_AXIS, rangemode="tozero")
    _mark_budget(fig, current_budget, unit, present, swept=_swept(fig, current_budget))
    base_layout(fig, _plain(title), present, height=480)
    _legend_below(fig, present)
    _sweep_margins(fig, present)
    # Points at 0 (or 1) sit on the plot edge: drawn whole, not halved (app QA).
    fig.update_traces(cliponaxis=False, selector={"type": "scatter"})
    return fig


def budget_ratio_curve(
    curve, title: str, present: bool = False, current_budget=None, order: Sequence[str] = ()
):
    """Ratio F / OPT vs budget per method; undefined ratios (OPT = 0) leave a gap, and when
    every ratio is undefined the chart says n/a. ``current_budget`` (the sidebar's) is marked
    only where it lies within the grid. ``order`` gives stores their styles
    (:func:`style_slots`)."""
    fig = new_figure()
    colors, symbols = _method_colors(curve.methods, order), _method_symbols(curve.methods, order)
    top = 1.0
    # A ratio over an unproven incumbent is drawn hollow with its proven range down to
    # F / bound (app QA: the ratio chart drew it like the certified points).
    bound_at = {o.budget: o.bound for o in curve.opt if not o.certified}
    any_open = False
    for m in curve.methods:
        pts = curve.series(m.key)
        top = max([top] + [p.ratio for p in pts if p.ratio is not None])
        dashed = m.kind == "ablation"
        shape = symbols[m.key]
        below = []
        for p in pts:
            bound = bound_at.get(p.budget) if m.kind in ("writer", "store") else None
            low = p.value / bound if p.ratio is not None and bound else None
            below.append(p.ratio - low if low is not None and not p.certified else 0.0)
        any_open = any_open or any(not p.certified for p in pts)
        name = _plain(m.label)
        if dashed and not all(p.certified for p in pts):
            # App QA: "OPT without validity types" named a line of unproven incumbents.
            name += " (hollow: incumbent)"
        fig.add_scatter(
            x=[p.budget for p in pts],
            y=[p.ratio for p in pts],
            mode="lines+markers",
            name=name,
            line={"color": colors[m.key], "width": 3, "dash": "dash" if dashed else "solid"},
            marker={
                "size": 8 if dashed else 10,
                "symbol": [shape if p.certified else f"{shape}-open" for p in pts],
                "line": {"width": 2, "color": colors[m.key]},
            },
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [0.0] * len(pts),
                "arrayminus": below,
                "visible": any(v > 0 for v in below),
                "color": colors[m.key],
                "thickness": 1.5,
                "width": 5,
            },
            customdata=[[_click_key(m), p.budget, p.value] for p in pts],
            hovertemplate="%{fullData.name}<br>B = %{x:~g}<br>ratio = %{y:.3f}"
            "<br>F = %{customdata[2]:.4f}<extra></extra>",
            connectgaps=False,
        )
    # QA s42 (defect 2): with OPT = 0 at every budget no ratio is defined; the chart drew no
    # marks under a legend of every series. It says n/a, as the Overview's bars do.
    all_na = bool(curve.methods) and all(
        p.ratio is None for m in curve.methods for p in curve.series(m.key)
    )
    if any_open and not all_na:
        _hollow_legend(fig, "over an unproven incumbent (bar: down to F / bound)")
    unit = curve.cost_unit
    # App QA: "OPT = 1" stood over budgets where no optimum was proven.
    denominator = "OPT or incumbent" if any_open else "OPT"
    opt_text = f"{denominator} = 1"
    if all_na:
        fig.update_traces(showlegend=False)
        fig.add_annotation(
            x=0.5,
            y=0.5,
            xref="paper",
            yref="paper",
            showarrow=False,
            text=f"n/a: {denominator} is 0 at every budget of the grid",
            bgcolor="rgba(255,255,255,0.9)",
        )
        # No marks to autorange on: the axis spans the grid swept, not plotly's default.
        budgets = [p.budget for p in curve.series(curve.methods[0].key)]
        lo, hi = min(budgets), max(budgets)
        pad = (hi - lo) * 0.05 if hi > lo else max(abs(lo) * 0.1, 0.5)
        # Budgets are >= 0: a grid of budget 0 alone showed ticks at -0.4 and -0.2 (QA s42).
        fig.update_xaxes(range=[max(lo - pad, 0.0) if lo >= 0 else lo - pad, hi + pad])
    if _outside_grid(fig, current_budget):
        current_budget = None  # not drawn by _mark_budget either (QA s42, defect 2)
    swept = _swept(fig, current_budget)
    budget_text = None if current_budget is None else _budget_text(current_budget, unit, present)
    budget_anchor, opt_position = _top_labels(
        fig, current_budget, budget_text or "", opt_text, present
    )
    fig.add_hline(
        y=1.0,
        line_dash="dash",
        line_color=COLORS["opt"],
        annotation_text=opt_text,
        annotation_position=opt_position,
    )
    fig.update_xaxes(title_text=f"budget B ({unit})")
    fig.update_yaxes(
        title_text="ratio F / OPT (1 = optimal)" if not any_open else "ratio F / OPT or incumbent",
        range=[0, top * 1.15],
    )
    _mark_budget(fig, current_budget, unit, present, budget_anchor, swept)
    base_layout(fig, _plain(title), present, height=440)
    _legend_below(fig, present)
    _sweep_margins(fig, present)
    # Points at 0 (or 1) sit on the plot edge: drawn whole, not halved (app QA).
    fig.update_traces(cliponaxis=False, selector={"type": "scatter"})
    return fig


#: The seed band's legend entry for its intervals, by (any shaded, any as bars).
BAND_CI_NAMES = {
    (True, False): "shaded: 95% bootstrap CI of the mean",
    (False, True): "bars: 95% bootstrap CI of the mean",
    (True, True): "95% bootstrap CI of the mean: shaded, or bars at isolated budgets",
}


def _lone_interval(cis: Sequence[tuple[float | None, float | None]], k: int) -> bool:
    """Whether point ``k`` has an interval and neither neighbour has one (no band to shade)."""
    return cis[k][0] is not None and all(
        not 0 <= j < len(cis) or cis[j][0] is None for j in (k - 1, k + 1)
    )


def family_band_curve(
    band,
    title: str,
    cost_unit: str = "units",
    present: bool = False,
    order: Sequence[str] = (),
):
    """Mean ratio per method over seeds with its 95% bootstrap band (shaded, or error bars at
    a budget whose neighbours have no interval); hollow markers where some seed's ratio is
    against an unproven incumbent. ``order``: see :func:`style_slots`."""
    from memaudit_core.analysis import MIN_CI_N, shown_interval

    fig = new_figure()
    colors, symbols = _method_colors(band.methods, order), _method_symbols(band.methods, order)
    any_unproven = False
    shaded = barred = False
    for m in band.methods:
        # Every budget of the grid, n/a ones (OPT = 0 at every seed) as gaps: left out, the
        # axis started at the first defined mean while the ratio chart above spans the grid
        # (QA s48).
        rows = list(band.series(m.key))
        if all(r.mean_ratio is None for r in rows):
            continue
        xs = [r.budget for r in rows]
        color = colors[m.key]
        # No band below MIN_CI_N seeds (QA s46: over 2 seeds the "95%" band was their range).
        cis = [shown_interval(r) or (None, None) for r in rows]
        fig.add_scatter(
            x=xs,
            y=[hi for _, hi in cis],
            mode="lines",
            line={"width": 0, "color": color},
            legendgroup=m.key,
            showlegend=False,
            hoverinfo="skip",
        )
        fig.add_scatter(
            x=xs,
            y=[lo for lo, _ in cis],
            mode="lines",
            line={"width": 0, "color": color},
            fill="tonexty",
            fillcolor=_rgba(color, 0.18),
            legendgroup=m.key,
            showlegend=False,
            hoverinfo="skip",
        )
        # The shading between two budgets has no area at a lone one (a one-budget grid, or
        # next to n/a budgets): there the interval is an error bar (researcher QA s50: the
        # legend said "shaded" over markers with no interval drawn).
        lone = [k for k in range(len(rows)) if _lone_interval(cis, k)]
        shaded = shaded or len(lone) < sum(lo is not None for lo, _ in cis)
        if lone:
            barred = True
            # Before the means: the marker stays on top of its bar.
            fig.add_scatter(
                x=[xs[k] for k in lone],
                y=[rows[k].mean_ratio for k in lone],
                mode="markers",
                marker={"size": 1, "opacity": 0, "color": color},
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": [cis[k][1] - rows[k].mean_ratio for k in lone],
                    "arrayminus": [rows[k].mean_ratio - cis[k][0] for k in lone],
                    "color": color,
                    "thickness": 2.5,
                    "width": 8,
                },
                name=f"{_plain(m.label)}: 95% CI",
                legendgroup=m.key,
                showlegend=False,
                hoverinfo="skip",
            )
        fig.add_scatter(
            x=xs,
            y=[r.mean_ratio for r in rows],
            mode="lines+markers",
            name=_plain(m.label),
            legendgroup=m.key,
            line={"color": color, "width": 3, "dash": "dash" if m.kind == "ablation" else "solid"},
            connectgaps=False,
            # Hollow where some seed's ratio is against an unproven incumbent, as on the
            # value and ratio curves.
            marker={
                "size": [11 if r.n_unproven else 9 for r in rows],
                "symbol": [
                    f"{symbols[m.key]}-open" if r.n_unproven else symbols[m.key] for r in rows
                ],
                "line": {"width": 2, "color": color},
            },
            customdata=[
                [
                    "n/a" if lo is None else f"[{lo:.3f}, {hi:.3f}]",
                    r.n,
                    r.n_unproven,
                ]
                for r, (lo, hi) in zip(rows, cis, strict=True)
            ],
            hovertemplate="%{fullData.name}<br>B = %{x:~g}<br>mean ratio = %{y:.3f}"
            "<br>95% CI %{customdata[0]}"
            "<br>seeds with OPT > 0: %{customdata[1]}"
            "<br>seeds over an unproven incumbent: %{customdata[2]}<extra></extra>",
        )
        any_unproven = any_unproven or any(r.n_unproven for r in rows)
    # A legend entry explaining the shading (or bars), and why a mean has none (said once).
    if shaded or barred:
        fig.add_scatter(
            x=[None],
            y=[None],
            mode="lines" if shaded else "markers",
            name=BAND_CI_NAMES[shaded, barred],
            line={"width": 10, "color": _rgba("#888888", 0.3)},
            marker={"symbol": "line-ns-open", "size": 14, "color": "#888888"},
            hoverinfo="skip",
        )
    if band.interval_note() is not None:
        fig.add_scatter(
            x=[None],
            y=[None],
            mode="markers",
            name=f"no band with fewer than {MIN_CI_N} seeds",
            marker={"color": "rgba(0,0,0,0)"},
            hoverinfo="skip",
        )
    if any_unproven:
        _hollow_legend(fig, "some seeds over an unproven incumbent")
    # The line's label and the axis title alike, as on the ratio chart (QA s46: the axis said
    # "F / OPT" over ratios against incumbents).
    denominator = "OPT or incumbent" if any_unproven else "OPT"
    fig.add_hline(
        y=1.0,
        line_dash="dash",
        line_color=COLORS["opt"],
        annotation_text=f"{denominator} = 1",
        annotation_position="top right",
    )
    fig.update_xaxes(title_text=f"budget B ({cost_unit})")
    top = max([1.0] + [ci[1] for r in band.rows if (ci := shown_interval(r))])
    # The title above names the seeds: "over seeds" after "OPT or incumbent" ran into it on a
    # 1024 px projector.
    axis = "mean ratio F / OPT or incumbent" if any_unproven else "mean ratio F / OPT over seeds"
    fig.update_yaxes(title_text=axis, range=[0, top * 1.15])
    base_layout(fig, _plain(title), present, height=440)
    _legend_below(fig, present)
    # Points at 0 (or 1) sit on the plot edge: drawn whole, not halved (app QA).
    fig.update_traces(cliponaxis=False, selector={"type": "scatter"})
    return fig


def engine_time_curve(report, title: str, present: bool = False):
    """Wall time per engine vs budget (log y); crosses = stopped at the time limit (or, in a
    quick look with a shared total, at the run's share of it)."""
    fig = new_figure()
    shared = getattr(report, "total_time_limit", None)
    stop = f"its share of {shared:g} s" if shared else "the limit"
    for engine in report.engines:
        name = ENGINE_NAMES.get(engine, engine)
        if not report.applicable(engine):
            note = next(
                (e.note for r in report.rows for e in r.runs if e.engine == engine and e.note),
                "n/a",
            )
            fig.add_scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=f"{name}: {note}",
                marker={"color": "#bbb"},
                hoverinfo="skip",
            )
            continue
        pts = [(r.budget, r.run(engine)) for r in report.rows]
        pts = [(b, e) for b, e in pts if e is not None and e.time_s is not None]
        color = ENGINE_COLORS.get(engine, "#555")
        fig.add_scatter(
            x=[b for b, _ in pts],
            y=[max(e.time_s, 1e-4) for _, e in pts],
            mode="lines+markers",
            name=name,
            line={"color": color, "width": 3},
            marker={"size": 12, "color": color},
            customdata=[[e.status, e.nodes] for _, e in pts],
            hovertemplate=f"{name}<br>B = %{{x:~g}}<br>time = %{{y:.3g}} s"
            "<br>status %{customdata[0]}, nodes %{customdata[1]}<extra></extra>",
        )
        limited = [(b, e) for b, e in pts if e.hit_limit]
        if limited:
            # A cross over a run stopped at the limit: a hollow circle on the red limit line
            # was practically invisible (app QA).
            fig.add_scatter(
                x=[b for b, _ in limited],
                y=[max(e.time_s, 1e-4) for _, e in limited],
                mode="markers",
                name=f"{name}: stopped at {stop}",
                marker={"size": 18, "color": color, "symbol": "x", "line": {"width": 1}},
                hoverinfo="skip",
            )
    budgets = [r.budget for r in report.rows]
    # A quick look's runs stop at their shares of its total, far below the per-run limit:
    # a line at that limit would say they stopped there.
    if report.time_limit and budgets and not shared:
        # A trace, not add_hline: annotations on a log axis take log10 coordinates.
        fig.add_scatter(
            x=[min(budgets), max(budgets)],
            y=[report.time_limit, report.time_limit],
            mode="lines",
            name=f"time limit ({report.time_limit:g} s)",
            line={"color": COLORS["lost"], "dash": "dash", "width": 2},
            hoverinfo="skip",
        )
    fig.update_xaxes(title_text=f"budget B ({report.cost_unit})")
    times = [e.time_s for r in report.rows for e in r.runs if e.time_s and e.time_s > 0]
    if report.time_limit and not shared:
        times.append(report.time_limit)
    # Plain numbers (no SI "m"/"μ"), labels 1-2-5 or a decade apart (palette.log_axis, shared
    # with the CLI report's figure).
    fig.update_yaxes(title_text="wall time per solve (s, log scale)", **palette.log_axis(times))
    base_layout(fig, _plain(title), present, height=420)
    if present:
        # On lines the 524 px column holds (QA s48: enumeration's n/a entry, with its reason,
        # ran 130 px past the chart's right edge at 1024 px with the sidebar open). Wrapped,
        # not cut: a downloaded chart has no other place for the reason.
        _wrap_legend_names(fig, fig.layout.margin.l or 0)
    _legend_below(fig, present)
    return fig


# --------------------------------------------------------------------------- External stores

_OPEN_MARKER = {"size": 7, "symbol": "circle-open"}


#: The three lines drawn per external store: (row field, name, line style, marker). No line
#: thinner than 2 px: a 1.5 px dotted line vanished on a projector (QA s20c).
UNION_LINES = (
    ("kept_value", "kept", {"width": 3}, {"size": 9}),
    ("upper_value", "upper-pruned", {"width": 2, "dash": "dash"}, _OPEN_MARKER),
    ("union_opt_value", "OPT over P+", {"width": 2, "dash": "dot"}, None),
)
#: OPT over the package candidates: dark dash-dot, not the grey dotted key of "OPT over P+"
#: in presentation mode (speaker QA: the two legend entries looked the same).
PACKAGE_OPT_LINE = {"color": "#222222", "width": 3, "dash": "dashdot"}
_DASH_WORDS = {"solid": "solid", "dash": "dashed", "dot": "dotted", "dashdot": "dash-dot"}
_COLOUR_WORDS = {"#222222": "black"}


def _line_words(line: Mapping[str, Any]) -> str:
    """How a plotly line dict looks, in words ("dotted", "black dash-dot")."""
    dash = _DASH_WORDS[line.get("dash", "solid")]
    return f"{_COLOUR_WORDS[line['color']]} {dash}" if "color" in line else dash


#: The union curve's line styles in words, by field, made from the dicts the figure draws
#: with: QA s40 found the page's caption saying "Grey dotted" for a dark dash-dot line.
UNION_LINE_WORDS: dict[str, str] = {
    **{field: _line_words(line) for field, _what, line, _marker in UNION_LINES},
    "package_opt_value": _line_words(PACKAGE_OPT_LINE),
}
#: What each union curve line means, in words, for its hover: the title is in words and the
#: legend keeps the terms (speaker QA s46), so a hover says what a term stands for.
UNION_LINE_MEANING: dict[str, str] = {
    "kept_value": "value the store keeps at this budget, F(Y')",
    "upper_value": "best subset of the store's own memories within the budget",
    "union_opt_value": "over the package candidates plus the store's memories (P+)",
    "package_opt_value": "over the package candidates alone",
}


def union_curve_lines(
    rows: Sequence,
    title: str,
    cost_unit: str,
    budget: float | None = None,
    present: bool = False,
    order: Sequence[str] = (),
) -> go.Figure:
    """Kept F(Y') (solid) vs the exact upper-pruned bound (dashed) and the union optimum
    (dotted) per external store across budgets, each store in its Budget sweep colour and
    marker (:func:`style_slots` over ``order``, the page's store choices); OPT over the package
    candidates as a black dash-dot line (``UNION_LINE_WORDS`` says so in words).

    ``rows`` are :class:`memaudit_core.union.UnionCurveRow`. Points where the store's smallest
    memory exceeds the budget (a cost effect) get an ``x`` marker. The optima's lines are
    named OPT only when every row's are proven, else the best found, not all proven
    (:func:`~memaudit_core.union.union_opt_name`; QA s45: the legend said "OPT over P+" beside
    incumbents).
    """
    import html

    from memaudit_core.union import union_opt_name

    rows = list(rows)
    unproven = "" if all(r.certified for r in rows) else " (not all proven)"
    names = {
        "union_opt_value": union_opt_name(rows) + unproven,
        "package_opt_value": union_opt_name(rows, package=True) + unproven,
    }
    lines = tuple(
        (field, names.get(field, what), line, marker) for field, what, line, marker in UNION_LINES
    )
    fig = new_figure()
    stores = list(dict.fromkeys(r.store_id for r in rows))
    labels = {r.store_id: r.label for r in rows}
    label_count = Counter(labels.values())
    # The store's style on the Budget sweep (speaker QA: per system here, by free slot there,
    # so one store had two styles); two loaded Mem0 exports differ in it, and by their ids.
    slots = style_slots([f"store:{sid}" for sid in stores], order)
    for sid in stores:
        pts = [r for r in rows if r.store_id == sid]
        color, symbol = _slot_style(slots[f"store:{sid}"])
        label = pts[0].label
        name = html.escape(f"{label} ({sid})" if label_count[label] > 1 else label)
        xs = [r.budget for r in pts]
        # Kept (solid), the best the store's own memories allow (dashed) and the store's union
        # optimum OPT over P+ (dotted): dashed up to dotted is extraction (app QA: the caption
        # named this gap, and the chart did not draw its top).
        # One shape per trace: the legend draws a trace's first marker, and a store whose
        # smallest budget was a cost effect showed an x for "kept" (QA s20c); the x markers
        # are a trace of their own, drawn over the line.
        kept_marker = {"size": 10, "symbol": symbol}
        open_marker = {"size": 8, "symbol": f"{symbol}-open"}
        # One legend entry per store (its colour and shape) and one per line style: 3
        # stores x 3 lines took 40% of a projector's figure (QA s18c), and at 1024 px in
        # either mode the legend of nine took the plot's width and cut the title.
        fig.add_scatter(
            x=[None],
            y=[None],
            mode="lines+markers",
            name=name,
            legendgroup=sid,
            line={"color": color, "width": 4},
            marker={"symbol": symbol, "size": 12},
        )
        for field, what, line, marker in lines:
            if field == "kept_value":
                marker = kept_marker
            elif marker is not None:
                marker = open_marker
            fig.add_scatter(
                x=xs,
                y=[getattr(r, field) for r in pts],
                mode="lines+markers" if marker else "lines",
                name=what,
                legendgroup=sid,
                showlegend=False,
                line={"color": color, **line},
                marker=marker,
                hovertemplate=f"budget %{{x}}<br>{what} %{{y:.4g}}<br>"
                f"{UNION_LINE_MEANING[field]}<extra>{name}</extra>",
            )
        effect = [r for r in pts if r.cost_effect]
        if effect:
            fig.add_scatter(
                x=[r.budget for r in effect],
                y=[r.kept_value for r in effect],
                mode="markers",
                name=f"{name}: cost effect",
                legendgroup=sid,
                showlegend=False,
                marker={"size": 14, "symbol": "x", "color": color},
                # They sit at F = 0: clipped at the axis, half an x did not read as one.
                cliponaxis=False,
                hovertemplate="budget %{x}: below the store's smallest memory"
                f"<extra>{name}</extra>",
            )
    if any(r.cost_effect for r in rows):
        fig.add_scatter(
            x=[None],
            y=[None],
            mode="markers",
            name="x: budget below the store's smallest memory",
            marker={"size": 12, "symbol": "x", "color": "#555555"},
            hoverinfo="skip",
        )
    if rows:
        for _field, what, line, marker in lines:
            fig.add_scatter(
                x=[None],
                y=[None],
                mode="lines+markers" if marker else "lines",
                name=what,
                line={"color": "#555555", **line},
                marker=marker,
            )
    opt = {r.budget: r.package_opt_value for r in rows}
    if opt:
        xs = sorted(opt)
        fig.add_scatter(
            x=xs,
            y=[opt[b] for b in xs],
            mode="lines",
            name=names["package_opt_value"],
            line=dict(PACKAGE_OPT_LINE),
            hovertemplate="budget %{x}<br>"
            + names["package_opt_value"]
            + " %{y:.4g}<br>"
            + UNION_LINE_MEANING["package_opt_value"]
            + "<extra></extra>",
        )
    # The budget axis from 0: QA s51 saw it start near -10 at 1280 px, widened by autorange
    # to fit the budget line's label left of a small budget (a "0" tick beside nothing).
    top = max([r.budget for r in rows] + ([budget] if budget is not None else []), default=0)
    x_range = [0.0, top * 1.03] if top > 0 else None
    if budget is not None:
        fig.add_vline(
            x=budget,
            line_color="#999999",
            line_width=1,
            annotation_text=f"budget {budget:.10g} {html.escape(cost_unit)}",
            # Its label on the side with room: left of the line in the left half it would run
            # past the axis.
            annotation_position="top left" if budget > top / 2 else "top right",
        )
    fig.update_xaxes(title_text=f"budget ({cost_unit})", range=x_range)
    fig.update_yaxes(title_text=VALUE_AXIS, rangemode="tozero")
    # A legend on the right took 40% of a 1024 px projector (projector QA), and at 1024 px in
    # normal mode too (speaker QA): below the plot, in the rows it needs (about 4 short entries
    # a row); the plot gets what title and legend leave.
    n_rows = math.ceil(sum(1 for t in fig.data if t.showlegend is not False) / 4)
    bottom = 100 + (34 if present else 28) * n_rows
    height = int(PRESENT_MAX_HEIGHT / 1.35) if present else 420 + 28 * n_rows
    fig = base_layout(fig, title, present, height=height)
    fig.update_layout(
        legend={
            "orientation": "h",
            "yref": "container",
            "y": 0,
            "yanchor": "bottom",
            "xanchor": "left",
            "x": 0,
        },
        margin={"b": bottom},
    )
    return fig


def _explain_fonts(fig: go.Figure, present: bool = False) -> go.Figure:
    """Explicit tick, axis-title and legend sizes (the app theme would otherwise shrink them)."""
    size = 20 if present else 14
    tick, title = {"size": size, "color": TEXT_COLOR}, {"size": size + 1, "color": TEXT_COLOR}
    for axis in _axes(fig):
        merge_axis(fig, axis, {"tickfont": tick, "title": {"font": title}})
    return merge_layout(fig, legend={"font": tick, "title": {"font": tick}})


# ---------------------------------------------------------------- Ablations & sensitivity

#: Colours of successive ablation pools (the first is the Budget sweep's ablation grey).
ABLATION_PALETTE = (COLORS["ablation"], "#333333", "#aa7722", "#555555", "#5544aa")
#: Dash styles for successive ablation pools on one chart.
_POOL_DASHES = ("dash", "dot", "dashdot", "longdash", "longdashdot")


def _bound_hover(point: Any, which: str) -> str:
    """The hover line of an unproven optimum's proven bound ('' for OPT or no saved bound)."""
    if getattr(point, f"{which}_label") == "OPT":
        return ""
    bound, gap = point.bound_and_gap(which)
    return "" if bound is None else f"<br>proven bound {bound:.4g} (gap {gap_percent(gap)})"


def _drop_text(point: Any) -> str:
    """A drop's label: the drop; between unproven values, starred and as the range the
    bounds prove ("0.0–1.5%*"; the drop alone for a point saved without bounds)."""
    if point.drop is None:
        return "n/a"
    if point.certified:
        return f"{point.drop:.1%}"
    proven = point.drop_interval
    if proven is None:
        return f"{point.drop:.1%}*"
    return f"{proven[0]:.1%}–{proven[1]:.1%}*"


def ablation_value_chart(curves: Sequence, title: str, cost_unit: str, present: bool = False):
    """Full OPT (solid) and each ablation pool's OPT (dashed) against the budget."""
    fig = new_figure()
    if curves:
        # The curves of one robustness.ablation_curves call share their full optima (QA s43).
        pts = curves[0].points
        # An unproven value (an incumbent) is a hollow marker, here as on the other pages
        # (app QA: it was drawn like the certified optima).
        fig.add_scatter(
            x=[p.budget for p in pts],
            y=[p.full_opt for p in pts],
            mode="lines+markers",
            name=FULL_OPT_LABEL,
            line={"color": COLORS["opt"], "width": 4},
            marker={
                "size": 10,
                "symbol": ["circle" if p.full_label == "OPT" else "circle-open" for p in pts],
                "line": {"width": 2, "color": COLORS["opt"]},
            },
            customdata=[[p.full_label, _bound_hover(p, "full")] for p in pts],
            hovertemplate="B = %{x:~g}<br>%{customdata[0]} = %{y:.4g}%{customdata[1]}"
            "<extra></extra>",
        )
    for k, curve in enumerate(curves):
        # Ablation greys and diamonds, and the Budget sweep's names: the writers' palette made
        # the no-validity optimum look like gvt (projector QA).
        color = ABLATION_PALETTE[k % len(ABLATION_PALETTE)]
        fig.add_scatter(
            x=[p.budget for p in curve.points],
            y=[p.pool_opt for p in curve.points],
            mode="lines+markers",
            name=_plain(ablation_label(curve.pool)),
            line={"color": color, "width": 3, "dash": _POOL_DASHES[k % len(_POOL_DASHES)]},
            marker={
                "size": 9,
                "symbol": [
                    "diamond" if p.pool_label == "OPT" else "diamond-open" for p in curve.points
                ],
                "line": {"width": 2, "color": color},
            },
            customdata=[
                [_drop_text(p), p.pool_label] + [_bound_hover(p, "pool")] for p in curve.points
            ],
            hovertemplate="B = %{x:~g}<br>pool %{customdata[1]} = %{y:.4g}%{customdata[2]}"
            "<br>drop %{customdata[0]}<extra></extra>",
        )
    unproven = any(p.full_label != "OPT" or p.pool_label != "OPT" for c in curves for p in c.points)
    if unproven:
        _hollow_legend(fig, "incumbent (not proven optimal)")
    fig.update_xaxes(title_text=f"budget B ({cost_unit})")
    fig.update_yaxes(
        title_text="OPT = max F (weighted evidence value)"
        if not unproven
        else "OPT or incumbent (weighted evidence value)",
        rangemode="tozero",
    )
    # Full width in both modes (the page draws one chart per row): sized as half, the title
    # wrapped on a 1,460 px chart (QA s43).
    base_layout(fig, _plain(title), present, height=440)
    _legend_below(fig, present)
    return fig


def ablation_drop_chart(curves: Sequence, title: str, cost_unit: str, present: bool = False):
    """Drop 1 - pool OPT / full OPT per budget, grouped by pool; n/a where OPT = 0.

    Horizontal, budgets down the side: with three pools over five budgets the upright bars
    were so narrow that plotly shrank their labels to 7 px and ran them together
    ("27.3%27.3%", projector QA s38); lying flat, each label has the value axis to run in.
    """
    fig = new_figure()
    budgets = list(dict.fromkeys(f"{p.budget:.10g}" for c in curves for p in c.points))
    font = 20 if present else 14
    for k, curve in enumerate(curves):
        # A drop between unproven values is hatched and starred (app QA: it looked proven),
        # and its whisker and label give the range the bounds prove (QA s46: "0.0%*" alone
        # hid a true drop of 1.3%); the meanings are in the legend.
        ranges = [None if p.certified else p.drop_interval for p in curve.points]
        fig.add_bar(
            y=[f"{p.budget:.10g}" for p in curve.points],
            x=[0 if p.drop is None else p.drop for p in curve.points],
            orientation="h",
            error_x={
                "type": "data",
                "symmetric": False,
                "array": [
                    0 if r is None else r[1] - p.drop
                    for r, p in zip(ranges, curve.points, strict=True)
                ],
                "arrayminus": [
                    0 if r is None else p.drop - r[0]
                    for r, p in zip(ranges, curve.points, strict=True)
                ],
                "color": "#333",
                "thickness": 2,
                "visible": any(r is not None for r in ranges),
            },
            # A range's label stands past its whisker (the text trace below), not on it.
            text=["" if r else _drop_text(p) for r, p in zip(ranges, curve.points, strict=True)],
            textposition="outside",
            textfont={"size": font},
            cliponaxis=False,
            # Named as in the value chart beside it (QA s38: "without:summary" there was
            # "OPT without:summary" here).
            name=_plain(ablation_label(curve.pool)),
            marker_color=ABLATION_PALETTE[k % len(ABLATION_PALETTE)],
            marker_pattern_shape=["" if p.certified else "/" for p in curve.points],
            offsetgroup=str(k),
        )
        if any(ranges):
            ranged = [(r, p) for r, p in zip(ranges, curve.points, strict=True) if r]
            fig.add_scatter(
                y=[f"{p.budget:.10g}" for _, p in ranged],
                x=[r[1] for r, _ in ranged],
                mode="text",
                text=[" " + _drop_text(p) for _, p in ranged],
                textposition="middle right",
                textfont={"size": font},
                cliponaxis=False,
                orientation="h",
                offsetgroup=str(k),
                showlegend=False,
                hoverinfo="skip",
            )
    if any(not p.certified for c in curves for p in c.points):
        proven = any(not p.certified and p.drop_interval for c in curves for p in c.points)
        fig.add_bar(
            x=[None],
            y=[None],
            orientation="h",
            name="* hatched: between unproven values (incumbents)"
            + ("; whisker and label: the proven range of the drop" if proven else ""),
            marker_color="#bbb",
            marker_pattern_shape="/",
        )
    # The legend names the pool even when there is one (plotly hides a one-trace legend).
    fig.update_layout(
        barmode="group",
        scattermode="group",
        bargap=DROP_BARGAP,
        uniformtext={"minsize": font - 2, "mode": "show"},
        showlegend=True,
    )
    fig.update_yaxes(
        title_text=f"budget B ({cost_unit})",
        type="category",
        categoryorder="array",
        categoryarray=budgets,
        autorange="reversed",
        ticklabelstandoff=8,
    )
    fig.update_xaxes(
        title_text="drop 1 − pool OPT / OPT",
        tickformat=".0%",
        range=[0, _drop_axis_end(curves, budgets, font, present)],
    )
    n_bars = max(1, len(budgets)) * max(1, len(curves))
    # Full width, as the value chart above it (QA s43: its title wrapped at 1920 px).
    base_layout(fig, _plain(title), present, height=max(400, 170 + 26 * n_bars))
    min_plot_px = None
    if present:
        # On lines the 524 px column holds (speaker QA s46: the hatched entry's one line,
        # with the whisker's meaning, ran 400 px off its edge).
        _wrap_legend_names(fig, _drop_left_px(budgets, font))
        # Every bar a label's height (each label sits beside its bar's middle, and the bars
        # of a group touch): on one screen 3 pools x 7 budgets left 11 px a bar for 20 px
        # labels, "27.3%" printed over "27.3%" (speaker QA s46). With offset groups set,
        # plotly gives each pool's group a slot in each budget's row (its bar, whisker and
        # range label share it); the hatched legend entry, in none, takes none.
        slots = max(1, len(curves))
        pitch_px = DROP_LABEL_PITCH_EM * font
        min_plot_px = max(1, len(budgets)) * slots * pitch_px / (1 - DROP_BARGAP)
    _legend_below(fig, present, min_plot_px=min_plot_px)
    if present and (fig.layout.height or 0) > PRESENT_MAX_HEIGHT:
        allow_scroll(fig)
    return fig


#: Gap between the drop chart's groups of bars (a fraction of a budget's row).
DROP_BARGAP = 0.2
#: Gap (px) plotly leaves between a bar's end and its outside label.
BAR_TEXT_PAD_PX = 3
#: Room (em of the label font) each of the drop chart's bars gets in presentation mode: a
#: value label's line with a gap to its neighbours' (digits and "%" are about 0.75 em tall).
DROP_LABEL_PITCH_EM = 1.2


def _drop_left_px(budgets: Sequence[str], font_px: float) -> float:
    """An upper estimate (px) of the drop chart's left margin once plotly's automargin has
    made room for the budgets (tick labels no larger than the value labels' ``font_px``) and,
    in 70 px, their standoff and pad and the rotated axis title: 106 px for three-digit
    budgets in presentation mode, where Chromium draws 93 px."""
    longest = max((len(b) for b in budgets), default=1)
    return 70.0 + LABEL_EM_PER_CHAR * font_px * longest


def _drop_axis_end(
    curves: Sequence, budgets: Sequence[str], font_px: float, present: bool
) -> float:
    """The drop axis's end: 30% past the longest bar or whisker, further if a value label
    ("27.3%", " 0.0%–1.5%*" past its whisker) would run past the chart's right edge at the
    design width (:data:`LEGEND_DESIGN_PX`).

    A label's end at ``x`` is ``x / end * plot + label`` px from the plot's left, at most
    ``plot`` + the right margin it may run into (speaker QA s46: at 524 px in presentation
    mode " 25.3%–28.8%*" ran 16 px off the chart)."""
    placed = []  # (where the label starts, in data units; its width with its pad, px)
    for curve in curves:
        for p in curve.points:
            if p.drop is None:
                continue
            ranged = not p.certified and p.drop_interval is not None
            text = (" " if ranged else "") + _drop_text(p)
            pad = 0 if ranged else BAR_TEXT_PAD_PX
            placed.append((p.drop_high if ranged else p.drop, pad + _label_px(text, font_px)))
    end = min(1.0, max([0.1] + [x for x, _ in placed])) * 1.3
    right_px = 30  # base_layout's right margin
    plot_px = LEGEND_DESIGN_PX["present" if present else "normal"] - right_px
    plot_px -= _drop_left_px(budgets, font_px)
    for x, label_px in placed:
        room = plot_px + right_px - label_px
        if x > 0 and room > 0:
            end = max(end, x * plot_px / room)
    return end


def _wrap_legend_names(fig: go.Figure, left_px: float) -> None:
    """Break each legend name of a presentation chart (after :func:`base_layout`) onto lines
    (``<br>``, counted by :func:`_legend_rows`) that fit the design width
    (:data:`LEGEND_DESIGN_PX`) right of the plot's left edge ``left_px`` and the symbol."""
    legend_px = fig.layout.legend.font.size or fig.layout.font.size or 15
    # About 0.5 em a character, as _legend_rows counts; 40 px for the symbol.
    limit = int((LEGEND_DESIGN_PX["present"] - left_px - 40) / (0.5 * legend_px))
    for trace in fig.data:
        if trace.name and len(trace.name) > limit and "<br>" not in trace.name:
            trace.name = "<br>".join(_greedy_lines(trace.name.split(), limit))


def cost_rule_ratio_chart(sensitivity: CostRuleSensitivity, title: str, present: bool = False):
    """Mean ratio per writer (over the budgets) under each cost rule, grouped horizontal bars.

    Horizontal: writer names read without rotation and the value labels stay upright (app QA:
    at 1024 px on a projector the rotated names ran into the legend and the upright-rotated
    labels were 8 px).
    """
    rules = [r for r in sensitivity.rules if r.available]
    colors = {r.rule: _rule_color(k) for k, r in enumerate(rules)}
    columns = cost_rule_ratio_columns(sensitivity)
    axis = _cost_rule_axis(columns)
    writers = list(sensitivity.writers)
    if present and columns:
        return _cost_rule_panels(columns, colors, writers, title, axis)
    fig = new_figure()
    for column in columns:
        # Bar-thick text, not shrunk further by plotly (it drew 7 px labels); 12 px, the
        # smallest a projector shows (QA s20c: 11 px), on bars 15 px thick.
        fig.add_bar(**_rule_bar(column, colors, writers, label_px=12))
    # Writers top to bottom in registry order; rules in legend order within each group. A
    # rule's legend entry sits beside its as_stored reference's, in the bars' order (QA s50:
    # the three references' entries wrapped into a column of their own, in no bar's order).
    # A click still hides one series, not its rule's pair.
    fig.update_layout(barmode="group", legend={"traceorder": "grouped", "groupclick": "toggleitem"})
    fig.update_yaxes(title_text="writer", autorange="reversed")
    # Room past 1 for the "1.000" labels, but no tick there: a ratio never exceeds 1.
    fig.update_xaxes(title_text=axis, range=[0, 1.2], tickvals=[0, 0.2, 0.4, 0.6, 0.8, 1.0])
    height = 150 + len(writers) * (max(len(columns), 1) * 15 + 14)
    # base_layout scales a projector's chart by 1.35: 500 becomes 675 px, legend included,
    # which a 720 px screen shows whole (QA: 1,017 px, the legend off screen).
    base_layout(fig, _plain(title), present, height=min(height, 500) if present else height)
    _legend_below(fig, present)
    return fig


def _rule_color(k: int) -> str:
    return COLORS["opt"] if k == 0 else METHOD_PALETTE[(k - 1) % len(METHOD_PALETTE)]


def _cost_rule_axis(columns: Sequence[RatioColumn]) -> str:
    """The ratio axis: which budgets the means are over, said when a rule is compared with
    as stored over fewer budgets than as stored's own (QA s43: "over the budgets" then
    covered 5 budgets in one bar and 7 in the next)."""
    if any(c.reference for c in columns):
        # Two lines: as one, "> 0" was cut off a 1,024 px screen (QA s44).
        return "mean ratio F / OPT over the budgets<br>where the rule and as_stored have OPT > 0"
    return "mean ratio F / OPT over the budgets"


def _rule_bar(
    column: RatioColumn, colors: dict[str, str], writers: list[str], *, label_px: int
) -> dict[str, Any]:
    """One ratio column's horizontal bars of mean ratios per writer, labelled outside the bar
    with three decimals as the ratio table beside it (QA s50: at two, greedy's 0.996 read
    "1.00" like gvt's 1); as stored's means over another rule's budgets hatched in that
    rule's colour and grouped with it in the legend.

    QA s50: the references were all hatched in as stored's blue, so three legend entries and
    a writer's three hatched bars (0.40, 0.45, 0.40) looked alike; only the bar order tied a
    reference to its rule.
    """
    means = column.means
    style: dict[str, Any] = {"marker_color": colors[column.rule]}
    if column.reference:
        # Stripes of the rule's colour on white, outlined: of one hue with the rule's solid bar
        # below it, yet not read as the rule's own value.
        style.update(
            marker_pattern={"shape": "/", "fillmode": "replace", "solidity": 0.5, "size": 8},
            marker_line={"color": colors[column.rule], "width": 1.5},
        )
    else:
        style["marker_pattern_shape"] = ""
    return {
        "y": writers,
        "x": [means.get(w) or 0 for w in writers],
        "orientation": "h",
        "text": [ratio_text(means.get(w)) for w in writers],
        "textposition": "outside",
        "textangle": 0,
        "textfont": {"size": label_px},
        "constraintext": "none",
        "cliponaxis": False,
        "name": column.label,
        "legendgroup": column.rule,
        **style,
    }


#: Narrowest cost-rule panel (px) in presentation mode: a full bar, its "1.000" and the 0 / 1
#: ticks upright. Five panels a row left 62 px each at 1024 px with the sidebar open, where
#: the ticks turned and the labels ran into the next panel (speaker QA s45); panels wrap into
#: rows instead.
COST_RULE_PANEL_MIN_PX = 100
#: The cost-rule panels' value labels and ticks (px) on a projector.
COST_RULE_LABEL_PX = 18
#: From the panels' bottom edge to the axis text under them: the 0 / 1 ticks and their pad.
COST_RULE_AXIS_SHIFT_PX = 42
#: Height (px) a writer's row takes in every cost-rule panel on a projector: its name (19 px
#: ticks) and value label (:data:`COST_RULE_LABEL_PX`) with a gap to the next row's.
COST_RULE_WRITER_PX = 24
#: Shortest cost-rule panel (px), however few the writers.
COST_RULE_PANEL_MIN_HEIGHT_PX = 100


def _cost_rule_names_px(writers: Sequence[str]) -> float:
    """Room (px) left of the cost-rule panels: the writer names at 19 px and their standoff
    (no axis title: the names say what they are), at least base_layout's 70 px margin."""
    return max(70.0, 20 + 0.5 * 19 * max((len(w) for w in writers), default=0))


def cost_rule_panel_columns(n_panels: int, writers: Sequence[str]) -> int:
    """Panels a row of the projector's cost-rule chart: as many as are
    :data:`COST_RULE_PANEL_MIN_PX` wide beside the writer names at the design width
    (:data:`LEGEND_DESIGN_PX`).

    >>> cost_rule_panel_columns(5, ["gvt", "no_validity_gvt"]), cost_rule_panel_columns(2, ["a"])
    (3, 2)
    """
    room = LEGEND_DESIGN_PX["present"] - _cost_rule_names_px(writers)
    return max(1, min(n_panels, int(room // COST_RULE_PANEL_MIN_PX)))


def _cost_rule_panels(
    columns: Sequence[RatioColumn],
    colors: dict[str, str],
    writers: list[str],
    title: str,
    axis: str,
) -> go.Figure:
    """The cost-rule chart on a projector: one panel per rule, named above it, writers shared,
    in rows of :func:`cost_rule_panel_columns` panels.

    Grouped, 7 writers x 4 rules made bars 11 px thick, too thin for a projector-size value
    label (QA s18c: the labels were a fixed 11 px); one bar per writer and panel leaves room
    for labels as large as the ticks, and the panel titles replace the legend.
    """
    from plotly.subplots import make_subplots

    n_cols = cost_rule_panel_columns(len(columns), writers)
    n_rows = math.ceil(len(columns) / n_cols)
    titles, title_px = _panel_titles([c.label for c in columns], writers)
    row_titles = [titles[r * n_cols : (r + 1) * n_cols] for r in range(n_rows)]
    lines = [max(t.count("<br>") + 1 for t in row) for row in row_titles]
    axis_px = 22
    axis_lines = axis.count("<br>") + 1
    # The title's last line ends about 26 px above its margin (_legend_above).
    top = _title_and_margin(_plain(title), True, 22)[1] - 18 + int(1.3 * title_px * lines[0])
    # The ticks (COST_RULE_AXIS_SHIFT_PX), then the axis text's lines.
    bottom = COST_RULE_AXIS_SHIFT_PX + int(1.3 * axis_px * axis_lines) + 10
    # Between two rows: the upper row's ticks and the lower row's titles.
    gap_px = max([COST_RULE_AXIS_SHIFT_PX + 1.3 * title_px * n for n in lines[1:]], default=0)
    # Every row of panels gives each writer COST_RULE_WRITER_PX: held to one screen, two or
    # more rows of panels left 40 px for 7 writers and their names and labels overprinted
    # (speaker QA s46); such a chart is taller than the screen and the page scrolls.
    panel_px = max(COST_RULE_PANEL_MIN_HEIGHT_PX, COST_RULE_WRITER_PX * len(writers))
    height = math.ceil(top + bottom + n_rows * panel_px + (n_rows - 1) * gap_px)
    if n_rows == 1:
        # Fits a 1280 x 720 projector screen whole with its title (base_layout scales by
        # 1.35), the panels as tall as the screen leaves them.
        height = max(height, max(int(min(180 + 48 * len(writers), 460) * 1.35), 560))
    plot_px = height - top - bottom
    fig = new_figure(
        make_subplots(
            rows=n_rows,
            cols=n_cols,
            shared_yaxes=True,
            subplot_titles=titles,
            horizontal_spacing=0.04,
            vertical_spacing=gap_px / plot_px,
        )
    )
    for k, column in enumerate(columns):
        fig.add_bar(
            **_rule_bar(column, colors, writers, label_px=COST_RULE_LABEL_PX),
            showlegend=False,
            row=k // n_cols + 1,
            col=k % n_cols + 1,
        )
    # Room for "1.000" past a full bar inside a narrow panel; two ticks stay upright where
    # three turned (speaker QA s45).
    fig.update_xaxes(range=[0, 1.7], tickvals=[0, 1], ticktext=["0", "1"])
    # Every writer named: on rows of 20 px plotly named every other one (two rows of panels).
    fig.update_yaxes(autorange="reversed", tickmode="array", tickvals=writers)
    base_layout(fig, _plain(title), True, height=height / 1.35)
    fig.update_annotations(font={"size": title_px, "color": TEXT_COLOR})  # the panel titles
    fig.add_annotation(
        text=axis,
        xref="paper",
        yref="paper",
        x=0.5,
        y=0,
        yshift=-COST_RULE_AXIS_SHIFT_PX,
        # Centred on the figure, not on the panels right of the names: there its second line
        # ran past a 524 px chart ("... have OPT >", speaker QA s45).
        xshift=-(_cost_rule_names_px(writers) - (fig.layout.margin.r or 0)) / 2,
        yanchor="top",
        showarrow=False,
        font={"size": axis_px, "color": TEXT_COLOR},
    )
    # Panel titles grow upwards from the panel, the axis text down from the ticks.
    fig.update_layout(height=height, margin={"b": bottom, "t": top})
    if height > PRESENT_MAX_HEIGHT:
        allow_scroll(fig)
    return fig


def _panel_titles(labels: Sequence[str], writers: Sequence[str]) -> tuple[list[str], int]:
    """The cost-rule panels' titles wrapped (``<br>``) to the width of one panel at the
    projector design width, and their font size in px.

    QA s44: "as_stored on bytes_overhead's 5 budgets" was one line over a 110 px panel and
    printed on top of its neighbours "words" and "bytes_overhead" at 1280 and 1024 px. A
    title's last line sits on the panel, so only last lines have neighbours. A word longer
    than a line breaks after an underscore.

    >>> labels = ["as_stored", "words", "as_stored on the 5 budgets of bytes_overhead", "b", "c"]
    >>> _panel_titles(labels, ["gvt", "no_validity_gvt"])[0][1:3]
    ['words', 'as_stored on the<br>5 budgets of<br>bytes_overhead']
    """
    n = max(1, len(labels))
    cols = cost_rule_panel_columns(n, writers)
    title_px = 20 if n <= 2 else 18 if n <= 3 else 16
    pitch = (LEGEND_DESIGN_PX["present"] - _cost_rule_names_px(writers)) / cols
    limit = max(8, int(pitch / (TITLE_EM_PER_CHAR * title_px)))
    return [_wrap_at_underscores(t, limit) for t in labels], title_px


def _wrap_at_underscores(text: str, limit: int) -> str:
    """``text`` in lines of at most ``limit`` characters (``<br>``), a longer word broken
    after its underscores ("bytes_" / "overhead's")."""
    lines: list[str] = []
    for word in text.split():
        parts = re.split(r"(?<=_)(?=.)", word) if len(word) > limit else [word]
        for k, part in enumerate(parts):
            glue = "" if k else " "
            if lines and len(lines[-1]) + len(glue) + len(part) <= limit:
                lines[-1] += glue + part
            else:
                lines.append(part)
    return "<br>".join(lines)


def capacity_chart(
    capacity: CapacitySensitivity, title: str, cost_unit: str, present: bool = False
):
    """OPT with one candidate per group vs OPT with up to k, against the budget.

    Hollow markers on the k-curve: no engine proved the value (an incumbent).
    """
    pts = capacity.points
    fig = new_figure()
    # Each curve says "incumbent" when any of its points is unproven, and those points are
    # hollow (app QA: limited k = 1 solves were drawn and named as OPT).
    open_1 = not all(p.certified_1 for p in pts)
    open_k = not all(p.proven for p in pts)
    what_1, what_k = ("OPT or incumbent" if o else "OPT" for o in (open_1, open_k))
    opt_color = COLORS["opt"]
    fig.add_scatter(
        x=[p.budget for p in pts],
        y=[p.opt_1 for p in pts],
        mode="lines+markers",
        name=f"{what_1}, one per group (k = 1)",
        line={"color": opt_color, "width": 4},
        marker={
            "size": 10,
            "symbol": ["circle" if p.certified_1 else "circle-open" for p in pts],
            "color": [opt_color if p.certified_1 else "white" for p in pts],
            "line": {"color": opt_color, "width": 2},
        },
        customdata=[[p.label_1] for p in pts],
        hovertemplate="B = %{x:~g}<br>%{customdata[0]} (k = 1) = %{y:.4g}<extra></extra>",
    )
    color = COLORS["writer"]
    fig.add_scatter(
        x=[p.budget for p in pts],
        y=[p.opt_k for p in pts],
        mode="lines+markers",
        name=f"{what_k}, up to {capacity.k} per group (k = {capacity.k})",
        line={"color": color, "width": 3, "dash": "dash"},
        marker={
            "size": 11,
            "symbol": ["circle" if p.proven else "circle-open" for p in pts],
            "color": [color if p.proven else "white" for p in pts],
            "line": {"color": color, "width": 2},
        },
        customdata=[["n/a" if p.gain is None else f"{p.gain:.3f}", p.label] for p in pts],
        hovertemplate="B = %{x:~g}<br>%{customdata[1]} = %{y:.4g}<br>OPT(k)/OPT(1) = "
        "%{customdata[0]}<extra></extra>",
    )
    fig.update_xaxes(title_text=f"budget B ({cost_unit})")
    if open_1 or open_k:
        _hollow_legend(fig, "not proven (a limit stopped the engines): incumbent")
    fig.update_yaxes(
        title_text="OPT = max F (weighted evidence value)"
        if not (open_1 or open_k)
        else "OPT or incumbent (weighted evidence value)",
        rangemode="tozero",
    )
    base_layout(fig, _plain(title), present, height=420)
    _legend_below(fig, present)
    return fig


def noise_delta_bars(noise_sensitivity: NoiseSensitivity, title: str, present: bool = False):
    """Mean |Δ ratio| per writer under coverage noise, a whisker up to the largest |Δ|.

    Horizontal, as the cost-rule chart: writer names need no rotation (at 1024 px they ran
    into the legend). The value labels sit past the whisker, not on it (app QA: the
    whiskers struck through them), and the legend says what the whisker is.
    """
    rows = noise_sensitivity.writer_rows
    means = [r.mean_abs_delta or 0.0 for r in rows]
    tops = [max(r.max_abs_delta or 0.0, m) for r, m in zip(rows, means, strict=True)]
    writers = [r.writer for r in rows]
    fig = new_figure(
        go.Bar(
            y=writers,
            x=means,
            orientation="h",
            error_x={
                "type": "data",
                "symmetric": False,
                "array": [t - m for t, m in zip(tops, means, strict=True)],
                "arrayminus": [0.0] * len(rows),
                "color": "#555",
                "thickness": 2,
                "width": 8,
            },
            marker_color=COLORS["writer"],
            name="mean |Δ ratio| over the draws",
            hovertemplate="%{y}<br>mean |Δ ratio| = %{x:.4f}<extra></extra>",
        )
    )
    fig.add_scatter(
        y=writers,
        x=tops,
        mode="text",
        # Both numbers, each named: the label sits at the whisker's end, and a bare mean there
        # read as the maximum (QA s18c: "0.022" at a whisker reaching 0.43).
        text=[
            "n/a"
            if r.mean_abs_delta is None
            else f"  mean {r.mean_abs_delta:.3f} · max {r.max_abs_delta or 0.0:.3f}"
            for r in rows
        ],
        textposition="middle right",
        textfont={"size": 18 if present else 14},
        cliponaxis=False,
        showlegend=False,
        hoverinfo="skip",
    )
    fig.add_scatter(  # legend entry for the whisker
        x=[None],
        y=[None],
        mode="lines",
        line={"color": "#555", "width": 2},
        name="whisker: largest |Δ ratio| over the draws",
    )
    fig.update_yaxes(title_text="reference writer", autorange="reversed")
    fig.update_xaxes(
        # Room past the longest whisker for its "mean … · max …" label.
        title_text="mean |noisy ratio − clean ratio|",
        range=[0, max(tops + [1e-3]) * (1.9 if present else 1.7)],
    )
    base_layout(fig, _plain(title), present, height=max(420, 180 + 44 * len(rows)))
    _legend_below(fig, present)
    return fig
