"""Budget sweep: OPT(B) and each chosen writer's / store's F(B) and ratio over a budget grid, the
no-validity optimum as a dashed curve, and for a generated family a mean-ratio band over seeds.
Click a writer's, store's or OPT point to open Compare at that budget."""

import pandas as pd
import streamlit as st

from memaudit_core import curves
from memaudit_core.analysis import BOOTSTRAP_TEXT
from memaudit_core.errors import MemAuditError
from memaudit_core.grids import nearest_index
from memaudit_core.package import budget_grid_notes, budgets_above_total_note
from memaudit_ui import cached, figures, render
from memaudit_ui.annotations import store_id_of
from memaudit_ui.frame import (
    PACKAGE_GRID,
    REPO_ROOT,
    LinkSetting,
    add_budget_box,
    add_budget_setting,
    budget_step,
    frame,
    go_to,
    md_escape,
    page_time_select,
    page_time_setting,
    store_label,
    store_options,
)
from memaudit_ui.state import link_text

COMPARE_PAGE = "pages/2_Compare.py"
GRID_MODES = ["package grid", "range"]
#: The range mode's grid, as the "Add budget B" box names it.
RANGE_GRID = "the range"
METHODS_LABEL = "Writers / stores"
#: The largest seed a number box shows exactly (a JavaScript number).
MAX_SEED = 2**53 - 1
#: The seed band's default seeds.
FIRST_SEED, LAST_SEED = 0, 49


def range_default(pkg) -> tuple[float, float, float]:
    """The range mode's start, stop and step before the user sets them: the package grid's
    ends, about 20 steps."""
    grid = pkg.budget_grid()
    lo, hi = min(grid), max(grid)
    step_unit = budget_step(pkg)
    return (
        float(lo),
        float(hi),
        float(max(step_unit, round((hi - lo) / 20 / step_unit) * step_unit)),
    )


def seed_range_problem(first: int, last: int) -> str | None:
    """Why the seed band cannot run over ``first`` .. ``last`` (a link's warning, a box's
    error), or None."""
    if last < first:
        return f"the last seed ({last}) is below the first ({first})"
    if last - first + 1 > curves.MAX_SEEDS:
        return f"at most {curves.MAX_SEEDS} seeds at once; {last - first + 1} asked for"
    return None


def range_problem(values: dict) -> str | None:
    """The core's refusal of the range ``from`` / ``to`` / ``step`` in ``values``, or None."""
    try:
        curves.budget_range(values["from"], values["to"], values["step"])
    except MemAuditError as exc:
        return str(exc)
    return None


def grid_holding(pkg, budget: float, values: dict) -> str | None:
    """The name of the grid the link's ``values`` make when it holds ``budget``, else None
    (one the core refuses holds nothing: the page says why it does not run)."""
    try:
        if values["grid"] == "range":
            grid, name = (
                curves.budget_range(values["from"], values["to"], values["step"]),
                RANGE_GRID,
            )
        else:
            grid, name = curves.sweep_grid(pkg.budget_grid()), PACKAGE_GRID
    except MemAuditError:
        return None
    return name if budget in set(grid) else None


def link_settings(pkg, store_key: str, budget: float) -> list[LinkSetting]:
    """The page's settings in its link (see ``memaudit_ui.frame.LinkSetting``)."""
    content_hash = pkg.content_hash()
    lo, hi, step = range_default(pkg)
    options = store_options(pkg)
    default_methods = [
        k for k in dict.fromkeys([store_key, "writer:gvt", "writer:density"]) if k in options
    ]

    def known_methods(value: list) -> list | None:
        # Kept across pages and packages; stores another package does not have are dropped
        # (named by the frame after a package switch), and if that leaves nothing, the
        # defaults. An empty choice stays empty (QA: "Clear all" snapped
        # back to the defaults).
        known = [k for k in value if k in options]
        return known if known or not value else None

    # The core says why there is no seed band (QA s40, defect 3: "names no generator family"
    # was said of update_chain packages, whose family just does not use the seed).
    no_family = curves.no_seed_band_reason(pkg)

    def range_only(values: dict) -> str | None:
        return None if values["grid"] == "range" else "used only with grid=range"

    def band_only(values: dict) -> str | None:
        return no_family or (None if values["seed_band"] else "used only with seed_band=1")

    # The range is the package's own: kept per package content (QA: one package's range came
    # back on another; s20a: also on an upload of the same id with other costs).
    per_package = {"scope": content_hash, "unused": range_only}
    seed = {"bounds": (0, MAX_SEED), "unused": band_only}
    return [
        LinkSetting("sweep_grid", "grid", "package grid", choices=GRID_MODES),
        LinkSetting("sweep_start", "from", lo, **per_package),
        LinkSetting("sweep_stop", "to", hi, **per_package),
        # A range the core refuses, or a seed range the page would stop on, falls back to the
        # defaults when it comes from a link (QA s41: step=0 or from=10&to=2 in a link showed
        # only an error, and the URL kept the values); typed into the boxes it stays an error.
        LinkSetting(
            "sweep_step",
            "step",
            step,
            **per_package,
            check=range_problem,
            check_with=("from", "to", "step"),
            instead=f"showing the default range {link_text(lo)} to {link_text(hi)} step "
            f"{link_text(step)}",
        ),
        # On by default, as on Certification (QA s50: the paper families' headline budget 6
        # was marked between the grid's 4 and 8, where the lines read a wrong OPT and ratio).
        add_budget_setting("sweep_add_budget", budget, lambda v: grid_holding(pkg, budget, v)),
        LinkSetting(
            "sweep_methods",
            "methods",
            default_methods,
            known_methods,
            choices=options,
            label=METHODS_LABEL,
        ),
        LinkSetting("sweep_ablation", "ablation", True),
        page_time_setting("sweep_time"),
        LinkSetting("sweep_seed_range", "seed_band", False, unused=lambda values: no_family),
        LinkSetting("sweep_seed_from", "first_seed", FIRST_SEED, **seed),
        LinkSetting(
            "sweep_seed_to",
            "last_seed",
            LAST_SEED,
            **seed,
            check=lambda values: seed_range_problem(values["first_seed"], values["last_seed"]),
            # The band is turned off with them: the default seeds are a computation of a minute
            # or more that the link did not ask for (QA s49).
            check_with=("seed_band", "first_seed", "last_seed"),
            instead=f"the seed band is off until you turn it on (default seeds {FIRST_SEED} to "
            f"{LAST_SEED})",
        ),
    ]


ctx = frame("Budget sweep", link_settings)
pkg = ctx.package
unit = pkg.cost_unit
content_hash = pkg.content_hash()
compare_ready = (REPO_ROOT / COMPARE_PAGE).exists()


def open_compare(store_key: str | None, budget: float) -> None:
    """Make (store, budget) the shared choice and go to Compare."""
    st.session_state["ma_budget"] = float(budget)
    if store_key:
        st.session_state["ma_store"] = store_key
    if compare_ready:
        st.session_state["ma_scroll_top"] = True
        go_to(COMPARE_PAGE)


st.title("Budget sweep")
st.markdown(
    f"**{md_escape(pkg.title or pkg.id)}** · `{pkg.id}` · OPT and every chosen writer / store "
    f"over a budget grid ({md_escape(unit)})"
)

# ------------------------------------------------------------------ inputs
grid_default = pkg.budget_grid()
c1, c2 = st.columns([2, 3])
with c1:
    grid_mode = st.radio(
        "Budgets",
        GRID_MODES,
        **ctx.kept("grid"),
        horizontal=True,
        help="The package's suggested grid, or start / stop / step of your own.",
    )
    if grid_mode == "range":
        step_unit = budget_step(pkg)
        r1, r2, r3 = st.columns(3)

        # No min_value on these three: Streamlit keeps a value below it in the box, marks it
        # with a small "!" and goes on with the previous one (app QA); budget_range's located
        # st.error below says what is wrong instead.
        start = r1.number_input(
            f"start ({unit})",
            step=step_unit,
            format="%g",  # "1.00 / 16.00" read oddly for whole words (speaker QA)
            **ctx.kept("from"),
        )
        stop = r2.number_input(
            f"stop ({unit})",
            step=step_unit,
            format="%g",  # "1.00 / 16.00" read oddly for whole words (speaker QA)
            **ctx.kept("to"),
        )
        step = r3.number_input(
            f"step ({unit})",
            step=step_unit,
            format="%g",  # "1.00 / 16.00" read oddly for whole words (speaker QA)
            **ctx.kept("step"),
        )
        try:
            grid = curves.budget_range(start, stop, step)
        except MemAuditError as exc:
            st.error(str(exc))
            st.stop()
    else:
        # The grid the sweep runs, each budget once and ascending (QA s41: the caption listed
        # a package's "budgets": [4, 4, 6, 3] as given while the chart ran 3, 4, 6).
        try:
            grid = curves.sweep_grid(grid_default)
        except MemAuditError as exc:
            st.error(str(exc))
            st.stop()
        # QA s41 (defect 1): a package's `"budgets": []` gave the default grid and [4, 4, 6]
        # a grid with a repeat, both unsaid here.
        for note in budget_grid_notes(pkg):
            st.info(md_escape(note))
    grid = add_budget_box(
        st,
        ctx.kept("add_budget"),
        ctx.budget,
        grid,
        RANGE_GRID if grid_mode == "range" else PACKAGE_GRID,
    )
with c2:
    chosen = st.multiselect(
        METHODS_LABEL,
        store_options(pkg),
        **ctx.kept("methods"),
        format_func=lambda k: store_label(pkg, k),
        help="Default: the sidebar's choice plus gvt and density (the negative control).",
    )
    show_ablation = st.checkbox(
        # The ablation's own name, short enough for 250 px at the presentation font: "Show
        # the optimum without validity types (dashed)" was cut there (speaker QA s46).
        curves.ABLATION_LABELS["no_validity_opt"],
        **ctx.kept("ablation"),
        help="Also draw, dashed, OPT over the candidates other than tombstone and compound_update.",
    )
    page_time = page_time_select(
        "Time for the sweep's solves",
        ctx.kept("time"),
        scope="The curve's solves share this time; a seed band, when shown, gets as much again.",
    )
with c1:
    # Never silent, in either mode, as the sidebar's budget above the total is not (QA s18c:
    # 10 identical points from 100 to 1000 on a package costing 51; s46: a grid's 1e6 too),
    # counted with the chosen external stores' memories (QA s47), so after the choice.
    above_total = budgets_above_total_note(pkg, grid, filter(None, map(store_id_of, chosen)))
    if above_total:
        st.warning(md_escape(above_total))
    st.caption("Budgets: " + ", ".join(f"{b:.10g}" for b in grid))
ablations = ("no_validity_opt",) if show_ablation else ()

origin = cached.family_origin(pkg, content_hash)
source = origin.source if origin is not None else None
seeds: tuple[int, ...] = ()
if source is not None:
    s1, s2, s3 = st.columns([2, 1, 1])
    seed_range = s1.toggle(
        # The family is named in the help: "Seed range of the event_graph family" was cut in
        # this column at 1024 px on a projector (speaker QA s46).
        "Family seed range",
        **ctx.kept("seed_band"),
        # An edited upload keeps the meta of the package it was made from (QA s21c: it was
        # described as generated by the family with that seed).
        help=origin.seed_band_help(),
    )
    if seed_range:
        first = s2.number_input("first seed", 0, MAX_SEED, step=1, **ctx.kept("first_seed"))
        last = s3.number_input("last seed", 0, MAX_SEED, step=1, **ctx.kept("last_seed"))
        problem = seed_range_problem(first, last)
        if problem:
            st.error(problem[0].upper() + problem[1:] + ".")
            st.stop()
        seeds = tuple(range(int(first), int(last) + 1))

# ------------------------------------------------------------------ compute (cached)
bar, tick = cached.progress_bar("Solving OPT and running the writers over the grid")

curve = cached.budget_curve(
    pkg, content_hash, tuple(grid), tuple(chosen), ablations, page_time, _progress=tick
)
bar.empty()

# A failed writer is an error, not information (QA s39, defect 8); the core keeps them apart.
for error in curve.errors:
    st.error(md_escape(error))
for note in curve.notes:
    st.info(md_escape(note))

# ------------------------------------------------------------------ charts
# "OPT" only when every denominator is proven (app QA: incumbents were called OPT).
opt_word = curve.opt_word
# Every choice's style comes from its place among all the choices, not among those chosen
# (speaker QA: a store took density's green squares when density was unticked).
styles = store_options(pkg)
st.subheader("Value F against the budget")
event = render.chart(
    figures.budget_value_curve(
        curve,
        f"F and {opt_word} vs budget · {pkg.id}",
        ctx.present,
        current_budget=ctx.budget,
        order=styles,
    ),
    "sweep_value",
    f"{pkg.id}-sweep-F",
    selectable=True,
)
render.selection_notice("sweep_value")
if curve.external_caption:
    st.caption(md_escape(curve.external_caption))
st.caption(
    "Filled blue markers: certified OPT. Hollow markers (if any): incumbent of a run stopped at "
    "a limit, with a bar up to its proven bound. Dashed: the optimum when validity types "
    "(tombstone, compound_update) cannot be written. " + figures.SWEEP_CLICK_CAPTION
)
hits = [("sweep_value", figures.sweep_click(event))]

# QA s41, defect 3: with no writer, store or dashed optimum chosen the ratio chart was empty
# (its x axis off the grid), the CSV 0 bytes and nothing said why.
NOTHING_CHOSEN = (
    "No writer, store or dashed optimum is chosen: choose one under “Writers / stores” (or "
    f"tick “{curves.ABLATION_LABELS['no_validity_opt']}”) for its F and ratio per budget. "
    "Only OPT is shown."
)
st.subheader(f"Ratio F / {opt_word} against the budget")
if not curve.methods:
    st.info(NOTHING_CHOSEN)
    event = None
else:
    event = render.chart(
        figures.budget_ratio_curve(
            curve,
            f"Ratio F / {opt_word} vs budget · {pkg.id}",
            ctx.present,
            current_budget=ctx.budget,
            order=styles,
        ),
        "sweep_ratio",
        f"{pkg.id}-sweep-ratio",
        selectable=True,
    )
    render.selection_notice("sweep_ratio")
    st.caption(
        "Gaps in a line are budgets where OPT = 0: the ratio is undefined (n/a) there. "
        + figures.SWEEP_CLICK_CAPTION
    )
hits = [(k, h) for k, h in [*hits, ("sweep_ratio", figures.sweep_click(event))] if h]
# A point that opens Compare wins over a dashed one still selected on the other chart (QA s41,
# defect 1: a dashed point opened Compare for the sidebar's writer; now it says why not).
chart_key, hit = next(
    ((k, h) for k, h in hits if h.refusal is None), hits[0] if hits else (None, None)
)
if hit is not None and hit.refusal is not None:
    # Said under the chart clicked, with its selection cleared (QA s41: the answer was drawn
    # under the ratio chart, off-screen, and the other markers stayed dimmed).
    render.drop_selection(chart_key, hit.refusal)
elif hit is not None:
    if compare_ready:
        open_compare(hit.store_key, hit.budget)
    else:
        st.info(f"Compare is not available yet; budget {hit.budget:g} is now the sidebar budget.")
        st.session_state["ma_budget"] = hit.budget

# ------------------------------------------------------------------ open Compare (fallback)
store_methods = [m.key for m in curve.methods if m.store_key]
# The button as wide as its label, the two boxes sharing the rest (QA s43: in a quarter
# column it read "Open Compare at …" at 1024 px).
row = st.container(border=True, horizontal=True, vertical_alignment="bottom")
with row:
    o1, o2 = st.columns([1, 2], vertical_alignment="bottom")
    open_budget = o1.selectbox(
        f"Budget ({unit})",
        list(curve.budgets),
        # App QA: started at the grid's first budget, not the one the sidebar shows.
        index=nearest_index(curve.budgets, ctx.budget),
        key="sweep_open_budget",
        format_func=lambda b: f"{b:.10g}",
    )
    open_method = o2.selectbox(
        "Writer / store",
        store_methods or [ctx.store_key],
        key="sweep_open_method",
        format_func=lambda k: store_label(pkg, k),
    )
    if row.button(
        "Open Compare at budget",
        key="sweep_open",
        disabled=not compare_ready,
        help=None if compare_ready else "The Compare page is not installed.",
    ):
        open_compare(open_method, open_budget)

# ------------------------------------------------------------------ tables
st.subheader("Optimum per budget")
number = st.column_config.NumberColumn
render.table(
    pd.DataFrame(curve.opt_rows()),
    "sweep_opt_table",
    f"{pkg.id}-sweep-opt",
    column_config={
        "budget": number(f"budget ({unit})", format="%g"),
        # Six significant digits: four decimals read 0.0000 for a package in units of 1e-14
        # (QA s41 #1); "%.6g" still shows 14.3 as 14.3000, not "14.300000" (QA s20c).
        "value": number("value", format="%.6g", help="OPT when certified, else the incumbent."),
        "bound": number("proven bound", format="%.6g"),
        # Never "0%" for a gap that is not 0 (QA s43): significant digits.
        "gap": render.gap_column("gap"),
    },
)
# No rows, no table: its CSV was 0 bytes, no header (QA s41, defect 3).
if curve.methods:
    st.subheader("Writers and stores per budget")
    points_df = pd.DataFrame(curve.point_rows())
    render.table(
        points_df,
        "sweep_points_table",
        f"{pkg.id}-sweep-points",
        # The method's name says it; its internal key ("store:fact-extractor") is for the CSV
        # (QA s20c: a projector column of ids beside the names).
        present_df=points_df.drop(columns=["key"], errors="ignore"),  # no rows: no columns
        column_config={
            "budget": number(f"budget ({unit})", format="%g"),
            "method": st.column_config.TextColumn(width="medium"),
            "F": number(format="%.6g"),
            "OPT": number(
                opt_word,
                format="%.6g",
                help="The denominator (union OPT for external stores); an incumbent where the "
                "certified column is unticked.",
            ),
            # Numbers in the core rows (QA s41: the CSV held "0.486" text); three decimals here.
            "ratio": number(format="%.3f"),
            "opt_bound": number(
                "proven bound",
                format="%.6g",
                help="Proven upper bound on the denominator (equal to it when certified).",
            ),
            "ratio_low": number(
                "ratio ≥",
                format="%.3f",
                help="F / proven bound: a proven lower bound on the true ratio.",
            ),
            "cost": number(f"cost ({unit})", format="%g"),
            "store_cut": number(
                "store_cut", format="%d", help="The store's memories dropped to fit the budget."
            ),
        },
    )

# Naming its package's key (QA s51 m4: the file named neither source nor settings; the curve
# records the generator and settings, and is cached per content, which several keys share).
render.result_json(
    curve.with_source(ctx.package_key), "sweep_json", f"{pkg.id}-sweep", "Sweep result (JSON)"
)

# ------------------------------------------------------------------ seed band
# Computed after the package's own curve is drawn: it takes longer, and when it fails the
# curve above stays on the page (QA: a refused family parameter blanked the whole page).
# No band without a method: it is a band of ratios (QA s41, defect 3).
if seeds and curve.methods:
    # With the family's parameters (QA s50: a band of normal_count=4 read as one of the
    # defaults, whose values differ).
    st.subheader(
        f"Mean ratio over seeds {seeds[0]}–{seeds[-1]} of {md_escape(source.family_label)}"
    )
    bar, tick = cached.progress_bar(f"Solving the seed band over {len(seeds)} seeds")
    band = cached.family_band(
        source.family,
        seeds,
        source.params,
        tuple(grid),
        tuple(chosen),
        ablations,
        page_time,
        _progress=tick,
        # The grid is in this package's unit; the core says when the family's differs.
        budget_unit=unit,
    )
    bar.empty()
    scope = origin.band_scope()
    if scope is not None:
        st.caption(md_escape(scope))
    for error in band.errors:
        st.error(md_escape(error))
    for note in band.notes:
        st.info(md_escape(note))
    render.chart(
        figures.family_band_curve(
            band,
            # Short enough for a 564 px chart at 1024 px (app QA: "...bootstrap ban").
            f"Mean ratio, {len(band.seeds)} seeds of {band.label}"
            + (" (95% band)" if band.has_interval else ""),
            # The band's own packages' unit (QA s44): an edited package may have another.
            band.cost_unit,
            ctx.present,
            order=styles,
        ),
        "sweep_band",
        f"{band.name}-band",
    )
    no_band = band.interval_note()
    st.caption(
        f"Band: {BOOTSTRAP_TEXT}"
        + (f"; {no_band}" if no_band else "")
        + ". Seeds where OPT = 0 at a budget have no ratio there and are counted, not averaged; "
        "a gap in a line is a budget where OPT = 0 at every seed (n/a)."
    )
    render.table(
        pd.DataFrame(band.table_rows()),
        "sweep_band_table",
        f"{band.name}-band",
        # Counts that are the same on every row, said once above the table: the ten columns
        # ran past a 1400 px screen with the sidebar open (QA s49).
        said_once=("seeds unproven", "seeds with OPT > 0", "seeds with OPT = 0"),
        column_config={
            "budget": number(f"budget ({band.cost_unit})", format="%g"),
            "method": st.column_config.TextColumn(width="medium"),
            **{
                c: number(format="%.3f")
                for c in ("mean ratio", "CI 2.5%", "CI 97.5%", "min", "max")
            },
        },
    )
    render.result_json(band, "sweep_band_json", f"{band.name}-band", "Band result (JSON)")
