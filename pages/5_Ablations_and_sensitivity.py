"""Ablations & sensitivity: OPT over filtered candidate pools against the full OPT across the
package's budget grid and the sidebar's budget, and how the optimum and the writers' ratios
react to cost rules, group capacity and coverage-label noise."""

import pandas as pd
import streamlit as st

from memaudit_core import robustness
from memaudit_core.costs import COST_RULES, available_cost_rules
from memaudit_core.saturations import saturation_caption
from memaudit_ui import cached, figures, render
from memaudit_ui.frame import LinkSetting, frame, md_escape, page_time_select, page_time_setting

#: Packages this small (candidates x budgets) compute every sensitivity on sight; larger ones
#: wait for a Run button so a page visit stays quick.
AUTO_RUN_WORK = 200
#: Seconds per engine run for OPT(k) (a stopped run reports incumbent and bound).
CAPACITY_TIME_LIMIT = 10.0

#: The largest seed a number box shows exactly (a JavaScript number).
MAX_SEED = 2**53 - 1
#: Cost-rule choices: the stored costs and every rule.
RULE_OPTIONS = [robustness.AS_STORED, *COST_RULES]


REMOVED_LABEL = "Or remove your own set of candidate types"
#: The sensitivity tabs: their value in the link (``tab=``) -> label, in the page's order.
TABS = {"cost": "Cost rules", "capacity": "Group capacity", "noise": "Coverage noise"}
#: The link settings each tab shows: a link naming them but no tab opens their tab.
TAB_PARAMS = {
    "cost": ("rules",),
    "capacity": ("k",),
    "noise": ("noise", "level", "draws", "seed"),
}


def tab_of(params: set[str]) -> str | None:
    """The first tab showing one of ``params`` (a link's settings), or None.

    >>> tab_of({"k", "time"}), tab_of({"seed", "k"}), tab_of({"presets"})
    ('capacity', 'capacity', None)
    """
    return next((tab for tab, names in TAB_PARAMS.items() if params & set(names)), None)


def link_settings(pkg, store_key: str, budget: float) -> list[LinkSetting]:
    """The page's settings in its link (see ``memaudit_ui.frame.LinkSetting``); kept when the
    user leaves the page and comes back (projector QA; QA s18c: a noise mode set up for a demo
    was back to shrink after a visit to Compare)."""
    types = sorted({c.type for c in pkg.candidates})
    modes = list(robustness.NOISE_MODES)
    return [
        page_time_setting("abl_time"),
        LinkSetting("abl_presets", "presets", ["no_validity"], choices=list(robustness.PRESETS)),
        LinkSetting(
            "abl_removed",
            "removed",
            [],
            lambda v: [t for t in v if t in types],
            choices=types,
            label=REMOVED_LABEL,
        ),
        LinkSetting(
            "abl_rules",
            "rules",
            list(robustness.default_cost_rules()),
            lambda v: [r for r in v if r in RULE_OPTIONS],
            choices=RULE_OPTIONS,
        ),
        LinkSetting("abl_k", "k", 2, bounds=(2, 5)),
        LinkSetting("abl_noise_mode", "noise", modes[1], choices=modes),
        LinkSetting("abl_noise_level", "level", 0.2, bounds=(0.0, 1.0)),
        LinkSetting("abl_noise_draws", "draws", 20, bounds=(1, 200)),
        LinkSetting("abl_noise_seed", "seed", 0, bounds=(0, MAX_SEED)),
        # Last: the tab a link opens follows from the settings above it.
        LinkSetting("abl_tab", "tab", "cost", choices=list(TABS), implied=tab_of),
    ]


ctx = frame("Ablations & sensitivity", link_settings)
pkg = ctx.package
unit = pkg.cost_unit
content_hash = pkg.content_hash()
# The sidebar's budget joins the package's grid and its writer the reference writers; a
# package store cannot be re-solved, so the note names it as left out (QA s48: the page
# ignored both without a word).
store_kind, _, store_name = ctx.store_key.partition(":")
scope = robustness.sensitivity_scope(
    pkg,
    ctx.budget,
    writer=store_name if store_kind == "writer" else None,
    store=store_name if store_kind == "store" else None,
)
grid = scope.budgets
auto = len(pkg.candidates) * len(grid) <= AUTO_RUN_WORK
number = st.column_config.NumberColumn


#: A ratio in a table: the screen's three decimals (the CSV keeps every digit; QA s41).
RATIO = number(format="%.3f")


def fmt(x, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def armed(name: str, label: str, help_text: str) -> bool:
    """True once the user asked for this analysis on this package (or it is small enough)."""
    flag = f"abl_run_{name}_{content_hash}"
    if auto or st.session_state.get(flag):
        return True
    if st.button(label, key=f"abl_btn_{name}", help=help_text, type="primary"):
        st.session_state[flag] = True
        return True
    return False


st.title("Ablations & sensitivity")
st.markdown(
    f"**{md_escape(pkg.title or pkg.id)}** · `{pkg.id}` · budgets "
    + ", ".join(f"{b:.10g}" for b in grid)
    + f" {md_escape(unit)}"
)
(st.info if store_kind == "store" else st.caption)(md_escape(scope.note))
# Every OPT and ratio below is under the package's h (annotator QA s50: a log1p package's
# charts said no saturation).
st.caption(md_escape(saturation_caption(pkg.saturation)))

# ------------------------------------------------------------------ ablations
st.header("Ablations: OPT over a filtered candidate pool")
st.caption(
    "A drop (1 − pool OPT / OPT) shows how much of the optimum depends on candidates the pool "
    "lacks: a candidate-generation bottleneck, not a selection one. no_validity removes "
    "tombstone and compound_update; generic keeps only raw_span, atomic_fact and summary."
)
types = sorted({c.type for c in pkg.candidates})
if ctx.present:
    # One under the other: in three columns of a 524 px column (1024 px, sidebar open) each
    # box was 195 px, a second preset's chip ran out of its box and the box's icons wrapped
    # onto the time slider (speaker QA s46).
    a1, a2, a3 = st.container(), st.container(), st.container()
else:
    a1, a2, a3 = st.columns([2, 2, 1])
curve_time = page_time_select(
    "Time per analysis",
    ctx.kept("time"),
    a3,
    scope="Each analysis on this page gets this long: every ablation curve, and each "
    "sensitivity you run (a change reruns them all, so the page can take several times this).",
)
presets = a1.multiselect("Presets", list(robustness.PRESETS), **ctx.kept("presets"))
removed = a2.multiselect(
    REMOVED_LABEL,
    types,
    **ctx.kept("removed"),
    help="One extra curve: OPT without every type chosen here.",
)
removals = (tuple(removed),) if removed else ()
n_curves = len(presets) + len(removals)
curves = ()
if n_curves:
    bar, tick = cached.progress_bar("Solving the full and the filtered optima over the grid")
    # Every curve in one call, against one full OPT per budget; each still gets its time.
    curves = cached.ablation_curves(
        pkg, content_hash, grid, tuple(presets), removals, curve_time * n_curves, _progress=tick
    )
    bar.empty()
if not curves:
    st.info("Choose a preset or some candidate types to remove.")
else:
    for curve in curves:
        for note in curve.notes:
            st.info(f"{curve.pool}: {md_escape(note)}")
    # One chart per row, full width, in both modes: in two columns at 1024 px with the
    # sidebar open each was 274 px wide and its title was cut (app QA).
    left = right = st.container()
    with left:
        render.chart(
            figures.ablation_value_chart(
                curves, f"Full vs filtered OPT · {pkg.id}", unit, ctx.present
            ),
            "abl_value",
            f"{pkg.id}-ablation-opt",
        )
        # Curves with equal values hide each other: say so, or a legend entry has no line
        # and reads as missing (QA s43).
        hidden = robustness.coinciding_ablation_note(curves)
        if hidden:
            st.caption(md_escape(hidden))
    with right:
        render.chart(
            figures.ablation_drop_chart(
                curves, f"Drop 1 − pool OPT / OPT · {pkg.id}", unit, ctx.present
            ),
            "abl_drop",
            f"{pkg.id}-ablation-drop",
        )
    # The headers say "or incumbent" when any value is unproven (app QA: a column headed OPT
    # held an incumbent), with the bounds and the proven drop range then (QA s46); the core
    # rows keep numbers for the CSV (QA s41).
    render.table(
        pd.DataFrame(robustness.ablation_table_rows(curves)),
        "abl_table",
        f"{pkg.id}-ablations",
        column_config={
            "budget": number(f"budget ({unit})", format="%g"),
            **{col: number(format="%.4f") for col in robustness.ABLATION_VALUE_COLUMNS},
            **{col: RATIO for col in robustness.ABLATION_SHARE_COLUMNS},
            # In percent, as every face prints a gap (s52: fractions here, 1.23% in the CLI).
            **{col: render.gap_column() for col in ("OPT gap", "pool gap")},
        },
    )
    # One record per curve: a file holds one result for `memaudit show` (QA s46).
    json_row = st.container(horizontal=True, gap="small")
    for curve in curves:
        render.result_json(
            curve,
            f"abl_json_{curve.pool}",
            f"{pkg.id}-ablation-{curve.pool}-{render.budgets_filename(curve.budgets)}",
            f"Result (JSON) · {md_escape(curve.pool)}",
            where=json_row,
        )

# ------------------------------------------------------------------ sensitivity
st.header("Sensitivity")
# The open tab is in the link (QA s47: a link's k=3 opened on the cost-rule tab).
tab_cost, tab_cap, tab_noise = ctx.tabs("tab", TABS)

with tab_cost:
    rule_text = robustness.BUDGET_RULE[:1].upper() + robustness.BUDGET_RULE[1:]
    st.caption(
        "Candidate costs recomputed from candidate text by each rule; OPT and every writer "
        f"re-solved. {rule_text}. Candidates without text keep their stored cost. "
        "Ranking agreement: Kendall tau between the writers' ranking (by mean ratio) under the "
        "rule and as stored, both over the budgets where the rule and as stored have OPT > 0."
    )
    usable = set(available_cost_rules())
    rules = st.multiselect(
        "Cost rules",
        RULE_OPTIONS,
        **ctx.kept("rules"),
        format_func=lambda r: (
            r if r == robustness.AS_STORED or r in usable else f"{r} (unavailable)"
        ),
    )
    # As stored alone is compared with itself: tau 1 and "ranking holds" would say nothing
    # (QA s43: an emptied box ran as_stored alone and reported both).
    if not [r for r in rules if r != robustness.AS_STORED]:
        st.info("Choose a cost rule to compare with the costs as stored.")
    elif armed("cost", "Run cost-rule sensitivity", "Re-solves OPT and every writer per rule."):
        bar, tick = cached.progress_bar("Re-costing and re-solving per rule and budget")
        sens = cached.cost_rule_sensitivity(
            pkg, content_hash, grid, tuple(rules), curve_time, _progress=tick, writers=scope.writers
        )
        bar.empty()
        ok = [r for r in sens.rules if r.available]
        for r in sens.rules:
            if not r.available:
                st.warning(f"{r.rule}: {r.note}")
        # Rules that kept stored costs (QA s48: nothing re-costed still read "ranking holds").
        for note in sens.recost_notes:
            st.warning(md_escape(note))
        for note in sens.undefined_notes:
            st.info(md_escape(note))
        if sens.n_unproven:
            st.info(
                f"{sens.n_unproven} of {sum(len(r.rows) for r in ok)} rows rest on an optimum "
                f"not proven within the {curve_time:g} s this analysis shares: their ratio is "
                "against an incumbent (the `certified` column of the last table)."
            )
        for note in sens.notes:  # QA s45: a total far overrun was not said
            st.info(md_escape(note))
        render.chart(
            figures.cost_rule_ratio_chart(
                sens, f"Mean ratio per writer and cost rule · {pkg.id}", ctx.present
            ),
            "abl_cost_chart",
            f"{pkg.id}-cost-rules",
        )
        st.subheader("Ratio per writer (mean over the budgets compared)")
        render.table(
            pd.DataFrame(sens.ratio_rows()),
            "abl_cost_ratio",
            f"{pkg.id}-cost-rule-ratios",
            column_config={c.label: RATIO for c in robustness.cost_rule_ratio_columns(sens)},
        )
        st.subheader("Does the writers' ranking hold?")
        render.table(
            pd.DataFrame(sens.ranking_rows()),
            "abl_cost_rank",
            f"{pkg.id}-cost-rule-ranking",
            column_config={
                "Kendall tau vs as stored": RATIO,
                "budget scale": number(format="x%.4g"),
            },
        )
        with st.expander("Every writer, budget and rule"):
            render.table(
                pd.DataFrame([row.to_dict() for r in ok for row in r.rows]),
                "abl_cost_rows",
                f"{pkg.id}-cost-rule-rows",
            )
        rule_names = "_".join(r.rule for r in sens.rules)
        render.result_json(
            sens,
            "abl_cost_json",
            f"{pkg.id}-cost-rules-{rule_names}-{render.budgets_filename(sens.budgets)}",
        )

with tab_cap:
    st.caption(
        "OPT when a store may keep up to k candidates of one experience, against the one-per-"
        "group optimum, solved by each exact engine that can take the package and cross-checked "
        f"where both do; each engine run stops after {CAPACITY_TIME_LIMIT:g} s, or sooner when "
        "the time per analysis runs out, with its incumbent and bound."
    )
    k = int(
        st.columns(4)[0].number_input(
            "Group capacity k",
            min_value=2,
            max_value=5,
            step=1,
            **ctx.kept("k"),
        )
    )
    if armed("cap", "Run capacity sensitivity", "Solves OPT(k) with each exact engine per budget."):
        bar, tick = cached.progress_bar(f"Solving OPT(k = {k}) and OPT(k = 1) per budget")
        cap = cached.capacity_sensitivity(
            pkg, content_hash, grid, k, CAPACITY_TIME_LIMIT, curve_time, _progress=tick
        )
        bar.empty()
        # The engines that ran, from the result (QA s44: "both exact engines" of bnb alone).
        st.caption(md_escape(cap.engines_text()))
        for note in cap.notes:
            (st.error if "DISAGREEMENT" in note else st.info)(md_escape(note))
        render.chart(
            figures.capacity_chart(cap, f"OPT with k = {k} vs k = 1 · {pkg.id}", unit, ctx.present),
            "abl_cap_chart",
            f"{pkg.id}-capacity-k{k}",
        )
        # The k = 1 line under the k line reads as missing (QA s48), as on the ablation chart.
        hidden = cap.coinciding_note()
        if hidden:
            st.caption(md_escape(hidden))
        # "OPT(k=1)" only when every k = 1 solve was proven (app QA: limited ones read as OPT).
        head_1 = "OPT(k=1)" if all(p.certified_1 for p in cap.points) else "value (k=1)"
        render.table(
            pd.DataFrame(cap.table_rows()),
            "abl_cap_table",
            f"{pkg.id}-capacity-k{k}",
            column_config={
                "budget": number(f"budget ({unit})", format="%g"),
                head_1: number(format="%.4f"),
                f"value (k={k})": number(format="%.4f"),
                "OPT(k)/OPT(1)": RATIO,
            },
        )
        render.result_json(
            cap,
            "abl_cap_json",
            f"{pkg.id}-capacity-k{k}-{render.budgets_filename([p.budget for p in cap.points])}",
        )

with tab_noise:
    st.caption(
        "Coverage labels perturbed, OPT and every writer re-solved, per seeded draw. flip: each "
        "covered cell, with probability = level, is dropped or moved to a unit its candidate "
        "does not cover (half and half); shrink: with probability = level, multiplied by "
        "U(0.5, 1); jitter: N(0, σ = level) added to every covered cell, clipped to [0, 1]."
    )
    n1, n2, n3, n4 = st.columns(4)
    modes = list(robustness.NOISE_MODES)
    mode = n1.selectbox("Mode", modes, **ctx.kept("noise"))
    level = n2.number_input(
        "Level",
        min_value=0.0,
        max_value=1.0,
        step=0.05,
        # The value used, not rounded to two decimals (QA s41, defect 2: 0.123 shown as 0.12).
        format="%g",
        **ctx.kept("level"),
        help="Probability per cell (flip, shrink) or σ (jitter).",
    )
    draws = int(
        n3.number_input(
            "Draws",
            min_value=1,
            max_value=200,
            step=5,
            **ctx.kept("draws"),
        )
    )
    seed = int(n4.number_input("Seed", min_value=0, max_value=MAX_SEED, step=1, **ctx.kept("seed")))
    if armed("noise", "Run noise sensitivity", "Re-solves OPT and every writer per draw."):
        bar, tick = cached.progress_bar(f"Perturbing and re-solving {draws} draw(s)")
        ns = cached.noise_sensitivity(
            pkg,
            content_hash,
            mode,
            float(level),
            draws,
            seed,
            grid,
            curve_time,
            _progress=tick,
            writers=scope.writers,
        )
        bar.empty()
        # Every setting the draws depend on, in each download's name (QA s46: mode and level
        # only, so a figure could not be reproduced from its file).
        noise_name = (
            f"{pkg.id}-noise-{ns.mode}-level{ns.level:.10g}-draws{ns.draws}-seed{ns.seed}-"
            + render.budgets_filename(ns.budgets)
        )
        if ns.n_unproven:
            st.info(
                f"{ns.n_unproven} of {(ns.draws + 1) * len(ns.budgets)} optima (clean and "
                f"noisy) were not proven within the {curve_time:g} s this analysis shares: "
                "ratios there are against an incumbent."
            )
        for note in ns.notes:  # QA s45: a total far overrun was not said
            st.info(md_escape(note))
        m1, m2, m3, m4 = st.columns(4)
        m1.metric(
            "Mean Kendall tau",
            fmt(ns.mean_tau),
            help="Clean vs noisy writer ranking, per budget and draw.",
        )
        m2.metric("Lowest tau", fmt(ns.min_tau))
        m3.metric(
            "Ranking unchanged",
            "n/a" if ns.same_ranking_share is None else f"{ns.same_ranking_share:.0%}",
        )
        m4.metric("Mean |Δ OPT| / OPT", fmt(ns.mean_opt_change))
        st.caption(
            f"{ns.mean_cells_changed:.1f} of {ns.n_cells} covered cells changed per draw on "
            f"average; {ns.draws} draw(s) x {len(ns.budgets)} budget(s), seed {ns.seed}."
        )
        render.chart(
            figures.noise_delta_bars(
                ns,
                f"Mean |Δ ratio| per writer · {mode} {level:g} · tau {fmt(ns.mean_tau, 2)}",
                ctx.present,
            ),
            "abl_noise_chart",
            noise_name,
        )
        render.table(
            pd.DataFrame(ns.table_rows()),
            "abl_noise_table",
            noise_name,
            column_config={
                col: RATIO
                for col in (
                    "clean mean ratio",
                    "noisy mean ratio",
                    "mean |Δ ratio|",
                    "max |Δ ratio|",
                )
            },
        )
        # The seed, the draws and every per-draw tau, which the per-writer CSV does not hold.
        render.result_json(ns, "abl_noise_json", noise_name)
