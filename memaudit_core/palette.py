"""One colour and marker per method, for the app's charts and the CLI report's figures alike.

Researcher QA s50: the CLI report drew gvt blue and density red (plotly's colour cycle, by
position), the app ochre and green, so a writer changed colour between a paper figure and an
app screenshot. Both faces now read their styles here; this module imports neither plotly
nor streamlit.

Reference writers keep one slot each (:func:`writer_color_slots`), whatever else a chart
shows. Their seven colours, the OPT blue and the ablation grey are at least CIE76 40 apart
for normal vision and 18 under simulated protanopia, deuteranopia and tritanopia (QA s50:
gvt's ochre and recency_raw's olive were 24 apart and one colour on a projector); every slot
below, with OPT, the ablation grey and the package-OPT black, at least 12 under all four
(tests/test_s47_cvd.py, tests/test_s50_bandchart.py). Each is 3:1 or more on white (a thin
line on a projector), and each slot has its own marker so series never differ by colour
alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

#: OPT's line colour on every chart (the app's ``COLORS["opt"]``).
OPT_COLOR = "#1b4f8a"
#: Ablations (the optimum over a filtered pool): grey diamonds, dashed.
ABLATION_COLOR = "#777777"
ABLATION_SYMBOL = "diamond"

#: Reference writers' slots, in :data:`memaudit_core.writers.BUILTIN_WRITERS` order: gvt
#: orange, density green, greedy magenta, fact_only red, summary_only blue, recency_raw dark
#: olive, no_validity_gvt wine; slot 7 (teal) for an eighth reference writer.
METHOD_PALETTE = (
    "#dd7711",
    "#11aa66",
    "#ee44cc",
    "#ee0044",
    "#5566ee",
    "#445500",
    "#882244",
    "#3388bb",
)
METHOD_SYMBOLS = (
    "circle",
    "square",
    "triangle-up",
    "triangle-down",
    "star",
    "pentagon",
    "hexagon",
    "cross",
)
#: Stores and plugin writers: slots past the eight, so that they never take a reference
#: writer's style (speaker QA: a store drew in density's green squares once density was
#: unticked). Slot 8 + j gets colour j % 8 and symbol (j + j // 8) % 8, a distinct pair for 64.
#: Apart from the eight above, OPT, the ablation grey and the External stores chart's package
#: OPT (#222222); no "x" (that chart's cost-effect mark). No black and no circle-like marker:
#: QA s51 saw the fifth store there drawn black with octagons, read as the black package-OPT
#: line and the grey-circle "kept" key of its legend (violet and a star-triangle now).
EXTRA_PALETTE = (
    "#ee4488",
    "#111166",
    "#330044",
    "#995533",
    "#772255",
    "#443399",
    "#661111",
    "#7700ee",
)
EXTRA_SYMBOLS = (
    "hourglass",
    "triangle-left",
    "bowtie",
    "triangle-right",
    "hexagram",
    "star-square",
    "star-diamond",
    "star-triangle-up",
)


def writer_color_slots() -> dict[str, int]:
    """Reference writer name -> its palette slot, in the registry's order of the product's own
    writers (gvt, density, greedy, ...).

    Reference writers keep one colour on every chart and package (app QA: gvt was green on
    one chart and orange on the next, as colours followed the position in the chosen list).
    Read from :data:`memaudit_core.writers.BUILTIN_WRITERS` (QA s46 review: a list of seven
    names here gave a new reference writer a store's kind of slot, moving with the choices).
    """
    from .writers import BUILTIN_WRITERS

    return {name: k for k, name in enumerate(BUILTIN_WRITERS)}


def style_slots(keys: Sequence[str], order: Sequence[str] = ()) -> dict[str, int | None]:
    """Method key (``writer:NAME``, ``store:NAME``, ``ablation:NAME``) -> palette slot (see
    :func:`slot_style`); None for an ablation.

    Reference writers keep their own slot (:func:`writer_color_slots`). Stores and plugin
    writers take the slots after the palette and the reference writers', numbered by their
    place in ``order`` (the page's choices: the package's stores, then the writers), so that
    each keeps one style whatever else a chart shows and on every page; keys ``order`` lacks
    come after, in ``keys`` order.
    """
    reserved = writer_color_slots()
    # Past the reference writers' slots too: a ninth reference writer takes slot 8, not a
    # store's.
    first = max(len(METHOD_PALETTE), len(reserved))

    def writer_slot(key: str) -> int | None:
        return reserved.get(key[len("writer:") :]) if key.startswith("writer:") else None

    own = {
        key: first + j
        for j, key in enumerate(k for k in dict.fromkeys(order) if writer_slot(k) is None)
    }
    slots: dict[str, int | None] = {}
    for key in keys:
        if key.startswith("ablation:"):
            slots[key] = None
        elif writer_slot(key) is not None:
            slots[key] = writer_slot(key)
        elif key not in own:
            own[key] = first + len(own)
        slots.setdefault(key, own.get(key))
    return slots


def slot_style(slot: int | None) -> tuple[str, str]:
    """(colour, marker) of a palette slot from :func:`style_slots`; an ablation's for None."""
    if slot is None:
        return ABLATION_COLOR, ABLATION_SYMBOL
    if slot < len(METHOD_PALETTE):
        return METHOD_PALETTE[slot], METHOD_SYMBOLS[slot]
    j = slot - len(METHOD_PALETTE)
    n = len(EXTRA_PALETTE)
    return EXTRA_PALETTE[j % n], EXTRA_SYMBOLS[(j + j // n) % n]


def method_styles(keys: Sequence[str], order: Sequence[str] = ()) -> dict[str, tuple[str, str]]:
    """Method key -> (colour, marker), as every chart of the app and the CLI draws it."""
    return {key: slot_style(slot) for key, slot in style_slots(keys, order).items()}


def log_axis(values: Iterable[float]) -> dict[str, Any]:
    """A plotly log axis (``fig.update_xaxes(**log_axis(times))``) over the positive
    ``values``: whole decades at both ends, labelled as plain numbers; 1-2-5 labels over one or
    two decades, one label a decade over more.

    Plotly's own log ticks label the minor ones by their first digit: "3 4 5 … 9 1 2 3 … 10",
    where a "3" left of "1" meant 0.3 (QA s50, the audit's solve_times.png).

    >>> log_axis([0.3, 4.0])["tickvals"]
    [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
    >>> axis = log_axis([2e-4, 20.0]); axis["range"], "tickvals" in axis
    ([-4.0, 2.0], False)
    """
    axis: dict[str, Any] = {"type": "log", "dtick": 1, "tickformat": "~g"}
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    if not positive:
        return axis
    # Whole decades at both ends, so at least two ticks are labelled (a quick look's runs,
    # all within 0.02-0.6 s, showed a single "0.1").
    low = math.floor(math.log10(min(positive)))
    top = max(math.ceil(math.log10(max(positive))), low + 1)
    # A marker on the lowest decade was cut in half by the axis floor (projector QA).
    pad = 0.12 if math.log10(min(positive)) - low < 0.12 else 0.0
    axis["range"] = [low - pad, float(top)]
    if top - low <= 2:
        # Over one or two decades, 1-2-5 labels as full numbers (QA s48: runs all within
        # 0.1-0.6 s sat between two labels a decade apart).
        ticks = [m * 10.0**k for k in range(low, top) for m in (1, 2, 5)] + [10.0**top]
        axis.update(tickmode="array", tickvals=[float(f"{t:.12g}") for t in ticks])
    return axis
