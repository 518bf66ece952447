"""Evidence explorer: evidence units by kind, one unit's candidates and queries, the coverage
heatmap, what each store wrote per experience, and the experience -> candidate -> unit -> query
graph."""

import functools

import pandas as pd
import streamlit as st

from memaudit_core.explain import GRAPH_SCOPES, HEATMAP_ROWS, amount_text, unit_kinds
from memaudit_ui import cached, figures, render, state
from memaudit_ui.annotations import not_applied_notice, store_id_of
from memaudit_ui.frame import LinkSetting, frame, md_code_span, md_escape, md_value


def link_settings(pkg, store_key: str, budget: float) -> list[LinkSetting]:
    """The view's settings in its link, as the other pages' (QA s47: a kind filter, heatmap
    rows or graph scope set up for a demo came back as the defaults on reload)."""
    kinds = unit_kinds(pkg)
    # On a projector the short views first (speaker QA: all 39 rows made a 1,826 px chart).
    present = bool(st.session_state.get("ma_present", False))
    return [
        LinkSetting(
            "ev_kinds",
            "kinds",
            list(kinds),
            # In the package's order, whatever order the chips were picked in: one filter,
            # one link.
            lambda v: [k for k in kinds if k in v],
            # Each package its own filter (QA s19d: the previous package's filter hid half
            # of the new package's units without a word).
            scope=pkg.content_hash(),
            choices=list(kinds),
            label="Unit kinds",
        ),
        LinkSetting(
            "ev_heatmap_rows",
            "rows",
            "kept" if present else "all",
            lambda v: v if v in HEATMAP_ROWS else None,
            choices=list(HEATMAP_ROWS),
            label="Rows",
        ),
        LinkSetting(
            "ev_graph_scope",
            "graph",
            "focus" if present else "all",
            lambda v: v if v in GRAPH_SCOPES else None,
            choices=list(GRAPH_SCOPES),
            label="Graph of",
        ),
    ]


# The page writes the URL, once its focus unit is known.
ctx = frame("Evidence explorer", link_settings, page_writes_url=True)
pkg = ctx.package
# The title first: a hard package can take the app's time limit to solve (app QA: a blank
# page for 22 s).
st.title("Evidence explorer")

# Page-local widget state (read before the call, written back sanitised before drawing).
focus_request = st.session_state.get("ev_focus")
linked_unit = None
#: (package key, named focus unit) of the last visit, kept across pages (projector QA: a
#: visit to Compare reset the focus the speaker had picked). The kind filter is a link
#: setting, kept by the frame.
KEPT = "ma_kept_evidence"
# Back / Forward brought an earlier URL back: its unit (or none: the default focus) is the
# view to show (QA: the page wrote its current focus back over it).
url_adopted = st.session_state.get(state.URL_ADOPTED_KEY, False)
#: The package the page-local state belongs to. A focus unit named on the previous package is
#: kept only if this one has it (QA s19d: a default focus was written into the link as if
#: picked).
OWNER = "ev_state_package"
previous_package = st.session_state.get(OWNER, ctx.package_key)
package_changed = previous_package != ctx.package_key
st.session_state[OWNER] = ctx.package_key
#: The focus unit named on the previous package, tried on this one (QA s43: it vanished
#: unsaid even when the new package had it); the frame's note names it if it is missing.
carried_unit = None
if package_changed and not url_adopted:
    kept_key, kept_unit = st.session_state.get(KEPT, (None, None))
    carried_unit = kept_unit if kept_key == previous_package else None
    focus_request = None
if focus_request is None or url_adopted:
    # A fresh visit of the page (Streamlit dropped the widget's state when it was left): the
    # link may name the focus unit; else the one picked on the last visit to this package.
    # After a package change in the sidebar, the URL's unit is the previous package's.
    linked_unit = None if package_changed and not url_adopted else st.query_params.get("unit")
    if linked_unit is not None and not linked_unit.strip():
        # Deep-link QA s38: unit= opened the default focus without a word.
        st.warning(
            f"ignored unit={md_value(linked_unit)} in the link: empty", icon=":material/link_off:"
        )
    linked_unit = linked_unit or None
    # After Back the link's kind filter comes back with its unit (app QA: removing a kind chip,
    # then Back, kept the filter and dropped the unit with a warning).
    focus_request = linked_unit
    st.session_state["ev_focus_named"] = linked_unit is not None
    kept_key, kept_unit = st.session_state.get(KEPT, (None, None))
    if kept_key == ctx.package_key and not url_adopted:
        if linked_unit is None and kept_unit is not None:
            focus_request = kept_unit
            st.session_state["ev_focus_named"] = True
if carried_unit is not None:
    focus_request = carried_unit
    st.session_state["ev_focus_named"] = True
# The settings are read before the call (the widgets are drawn with the parts they set, below).
kinds_kw = ctx.kept("kinds")
heatmap_rows_kw = ctx.kept("rows")
graph_scope_kw = ctx.kept("graph")
#: Whether the focus going in was picked or linked (not the default focus of the last run).
focus_was_named = st.session_state.get("ev_focus_named", False)
view = cached.evidence_view(
    pkg,
    pkg.content_hash(),
    ctx.budget,
    ctx.store_key,
    tuple(st.session_state["ev_kinds"]),
    focus_request,
    st.session_state["ev_heatmap_rows"],
    st.session_state["ev_graph_scope"],
)
st.session_state["ev_focus"] = view.focus_unit_id
if focus_request is not None and view.focus_unit_id != focus_request:
    # The named unit fell out of the kind filter: the fallback focus is the default one, not
    # a unit the user picked, so it stays out of the link (app QA: it was written there).
    st.session_state["ev_focus_named"] = False
    if carried_unit is not None:
        ctx.note_dropped(f"focus unit {md_code_span(carried_unit)}")
    elif linked_unit is None and focus_was_named and view.units:
        # QA s42 defect 4: removing the focus unit's kind from the filter moved the focus to
        # another unit and dropped unit= from the link without a word (a link's unit is
        # warned about below). The core's note names the unit, its kind and the new focus.
        # Not for the default focus, which the user never picked, nor when no unit is left:
        # the info below says so (QA s47: "pick it under Focus unit" with no kind shown).
        st.info(
            "The focus unit changed: "
            + md_escape("; ".join(view.notes))
            + ". Add its kind back and pick it under Focus unit to see it again.",
            icon=":material/filter_alt:",
        )
if linked_unit is not None and view.focus_unit_id != linked_unit:
    st.session_state["ev_focus_named"] = False
    # The core says why (an unknown id, or a unit outside the kind filter: QA, a Back press
    # to a filtered-out unit was called "no evidence unit with that id").
    st.warning(
        f"ignored unit={md_value(linked_unit)} in the link: "
        + md_escape("; ".join(view.notes) or "no such evidence unit"),
        icon=":material/link_off:",
    )
# A focus unit named by the link or picked here is part of the page's link, so a shared link
# opens on the same unit. The default focus (largest loss) is not written: the same link
# gives it again, and writing it pushed a browser history entry of its own (Back then stayed
# on the page).
named = st.session_state.get("ev_focus_named", False)
st.session_state[KEPT] = (ctx.package_key, view.focus_unit_id if named else None)
state.sync_url({"unit": view.focus_unit_id if named else None}, page_title="Evidence explorer")
opt_name = view.opt_name
number = st.column_config.NumberColumn

st.markdown(
    f"**{md_escape(ctx.store_label)}** and the "
    f"{'certified optimum' if view.opt_label == 'OPT' else 'best known store (not proven optimal)'}"
    + (" over P+" if view.source_kind == "external" else "")
    + " "
    f"at budget **{md_escape(amount_text(ctx.budget, view.cost_unit))}** · `{view.package_id}`"
)
# QA s40 (annotator journey, defect 1): annotations made on External stores were silently
# left out here; this page scores the store as loaded, so it says so.
annotations_notice = not_applied_notice(pkg, [store_id_of(ctx.store_key)])
if annotations_notice:
    st.info(annotations_notice, icon=":material/edit_note:")
if view.score_notes:
    with st.expander(f"Notes on this score ({len(view.score_notes)})", expanded=True):
        for note in view.score_notes:
            st.text(note)

# The kinds on a row of their own: beside the focus unit at 1280 px the chips of an 8-kind
# package were cut after the fourth ("temporal_…", QA s21). By the names the units table, the
# focus header and the CSV use (QA s49: "pref" beside "preference" did not match at a glance).
st.multiselect(
    "Unit kinds",
    list(view.all_kinds),
    help="Which evidence unit kinds to show in the unit list, the heatmap and the graph.",
    **kinds_kw,
)
st.selectbox(
    "Focus unit",
    list(view.unit_ids),
    key="ev_focus",
    on_change=lambda: st.session_state.__setitem__("ev_focus_named", True),
    format_func=view.unit_labels().get,
    help="Defaults to the unit where the store loses the most against the optimum.",
)

opt_word = "optimum" if view.opt_label == "OPT" else "incumbent"
opt_tag = opt_word[0].upper()
# The units, the focus and the heatmap need a unit; the timeline does not (QA s47: an empty
# kind filter stopped the page before it).
if not view.units:
    st.info("No evidence units match the kind filter: pick at least one kind.")
else:
    st.subheader(f"Evidence units ({len(view.units)}), by value lost")
    render.table(
        # The annotator's question first: the core's order, largest loss on top and ties in
        # package order, as Compare lists them (QA s39).
        pd.DataFrame(view.unit_table()),
        "evidence_units",
        # Store and budget in the name, as Compare names its downloads (QA s42 defect 2).
        render.store_filename(view.package_id, view.store_label, "units", ctx.budget),
        column_config={
            "weight": number(format="%.3f"),
            "store coverage": number(format="%.3f"),
            f"{opt_name} coverage": number(format="%.3f"),
            "value lost": number(format="%.4f", help=f"{opt_name}'s value minus the store's."),
        },
    )

    focus = view.focus
    st.subheader("Focus unit")
    st.text(f"{focus.unit_id} ({focus.kind})")
    if focus.text:
        st.text(focus.text)
    cols = st.columns(4)
    # One precision for all four, so a loss never reads larger than the weight (app QA).
    cols[0].metric("Weight", f"{focus.weight:.4g}")
    cols[1].metric("Store coverage", f"{focus.store_coverage:.4g}")
    cols[2].metric(f"{opt_name[:1].upper()}{opt_name[1:]} coverage", f"{focus.opt_coverage:.4g}")
    cols[3].metric("Value lost", f"{focus.lost:.4g}")

    # One above the other on a projector: side by side at 1024 px the queries' text wrapped to a
    # word a line and both tables were cut at the right (QA s18c).
    a, b = (st.container(), st.container()) if ctx.present else st.columns([3, 2])
    with a:
        st.markdown(f"**Candidates covering it** ({len(view.focus_candidates)})")
        if view.focus_candidates:
            candidates = pd.DataFrame(view.candidate_table())
            render.table(
                candidates,
                "evidence_candidates",
                render.store_filename(
                    view.package_id,
                    view.store_label,
                    f"{view.focus_unit_id}-candidates",
                    ctx.budget,
                ),
                # On a projector the coverage must fit beside the queries (app QA: it was cut off).
                present_df=candidates.drop(
                    columns=[c for c in ("experience", "time", "text") if c in candidates.columns]
                ),
                column_config={
                    # Words on screen, the field name (a_ur) in the CSV (speaker QA s46).
                    "coverage a_ur": st.column_config.ProgressColumn(
                        "coverage of this unit",
                        help="How much of the focus unit the candidate covers, 0 to 1 (a_ur in "
                        "the glossary and the CSV).",
                        format="%.2f",
                        min_value=0.0,
                        max_value=1.0,
                    ),
                    "cost": number(format="%g"),
                    "time": number(format="%g"),
                },
            )
        else:
            st.text("No candidate covers this unit: no store can earn its value.")
    with b:
        st.markdown(f"**Queries requiring it** ({len(view.focus_queries)})")
        if view.focus_queries:
            render.table(
                pd.DataFrame(view.query_table()),
                "evidence_queries",
                render.store_filename(
                    view.package_id, view.store_label, f"{view.focus_unit_id}-queries", ctx.budget
                ),
                column_config={"weight": number(format="%g")},
            )
        else:
            st.text("No query requires this unit (its weight is given explicitly or is 0).")

    st.subheader("Coverage heatmap")
    st.radio(
        "Rows",
        list(HEATMAP_ROWS),
        # "incumbent" where the optimum is not proven, as everywhere on the page (QA).
        format_func=lambda rows: HEATMAP_ROWS[rows].replace("the optimum", f"the {opt_word}"),
        horizontal=True,
        help="Which candidates the heatmap shows. The shorter views answer what the store and "
        f"the {opt_word} kept, or who could have covered the focus unit, in a chart that fits a "
        "screen.",
        **heatmap_rows_kw,
    )
    hm = view.heatmap
    if hm.message:
        st.info(md_escape(hm.message))
    if hm.row_ids:  # no rows: the info says why, and an empty chart only drew stray axes (QA)
        hm_title = (
            # QA s42 (defect 1): the store and the budget in the title and the file name, as the
            # timeline's and Compare's: two stores' exports had one name and title. In words, not
            # "Coverage a_ur · S = ..., B = ..." (speaker QA s46).
            f"Each candidate's coverage of each unit: {view.store_label}, "
            f"budget {amount_text(ctx.budget, view.cost_unit)}"
            # On a projector the counts (also in the caption under it) wrapped the title to
            # two lines, and the rows lost every other label to the taller margin (s42).
            + ("" if ctx.present else f" · {len(hm.row_ids)} candidates × {len(hm.col_ids)} units")
        )
        heatmap = functools.partial(
            figures.coverage_heatmap, hm, hm_title, present=ctx.present, opt_word=opt_word
        )
        render.chart(
            heatmap(),
            "evidence_heatmap",
            # The focus unit too: its column is outlined, so two exports of one store and
            # budget with different focus units differ (speaker QA s48: one file name).
            render.store_filename(
                view.package_id,
                view.store_label,
                f"{view.focus_unit_id}-coverage-heatmap",
                ctx.budget,
            ),
            # Its unit ids spaced for the export's width, as the timeline's and graph's.
            export=functools.partial(heatmap, width_px=figures.EXPORT_WIDTH_PX),
        )
        # On a projector it names the rows a screen holds, and how to see the others.
        st.caption(figures.heatmap_caption(hm, ctx.present, hm_title, opt_word))
    st.caption(
        "Rows: candidates in arrival order (experience time), then by (cost, id). The strip on the "
        "left and the tags mark membership: [S] kept by the store, "
        + (
            "[S cut] written by the store but cut to fit the budget (✕ in the strip), "
            if any(hm.row_cut)
            else ""
        )
        + f"[{opt_tag}] kept by the {opt_word}. Columns: "
        "evidence units grouped by kind (coloured band and separators); the focus unit's column is "
        "outlined and named above the plot. Hover a cell for the candidate, the unit and both "
        "texts."
    )

st.subheader("Timeline: what each store wrote per experience")
tl = view.timeline
if tl.message:
    st.info(md_escape(tl.message))
timeline = functools.partial(
    figures.store_timeline,
    tl,
    f"Memory written per experience at budget {amount_text(ctx.budget, view.cost_unit)}",
    present=ctx.present,
)
render.chart(
    timeline(),
    "evidence_timeline",
    render.store_filename(view.package_id, view.store_label, "timeline", ctx.budget),
    # The export laid out for its own width: its ids whole where they fit (speaker QA s48).
    export=functools.partial(timeline, width_px=figures.EXPORT_WIDTH_PX),
)
st.caption(
    f"One row per store: the chosen store, the {opt_word} and every package store. Marker shape "
    "and colour give the memory type — look for where a store writes a tombstone or compound "
    "update when a fact changes. A hollow crossed marker is a memory a package store wrote and "
    "its recency cut dropped to fit this budget. A magenta ring marks a memory that only one of "
    f"the chosen store and the {opt_word} keeps. Hover a marker for the memory text."
)

if not view.units:
    st.stop()  # the graph links units: none is shown

st.subheader("Graph: experience → candidate → unit → query")
st.radio(
    "Graph of",
    list(GRAPH_SCOPES),
    format_func=GRAPH_SCOPES.get,
    horizontal=True,
    help="The whole filtered graph (large packages fall back to the focus unit's "
    "neighbourhood), or the focus unit's neighbourhood, which fits a screen.",
    **graph_scope_kw,
)
gd = view.graph
if gd.message:
    st.info(md_escape(gd.message))
graph = functools.partial(
    figures.evidence_graph,
    gd,
    # QA s42 (defect 1): its squares and diamonds are the store's and the optimum's at
    # this budget, so the store and the budget are in the title and the file name.
    f"Evidence graph · {view.store_label}, budget "
    f"{amount_text(ctx.budget, view.cost_unit)}: "
    f"{gd.n_nodes} nodes, {gd.n_edges} links",
    present=ctx.present,
    opt_word=opt_word,
)
render.chart(
    graph(),
    "evidence_graph",
    # The focus unit too: its links are drawn red (speaker QA s48, as for the heatmap).
    render.store_filename(
        view.package_id, view.store_label, f"{view.focus_unit_id}-graph", ctx.budget
    ),
    export=functools.partial(graph, width_px=figures.EXPORT_WIDTH_PX),
)
st.caption(
    "Links: experience → the candidates written from it → the units each candidate covers "
    "(coverage above 0) → the queries requiring each unit. Red links touch the focus unit; "
    "squares mark the store's memories"
    + (", crossed squares those it wrote but cut to fit the budget" if any(gd.node_cut) else "")
    + f", diamonds the {opt_word}'s."
)
