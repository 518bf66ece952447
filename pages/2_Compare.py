"""Compare: one store against the optimum at the budget — what it kept, what it missed, and what
the optimum kept instead."""

import pandas as pd
import streamlit as st

from memaudit_core.analysis import CUT_TO_FIT
from memaudit_core.explain import amount_text, kind_buckets_text
from memaudit_core.solvers import gap_text, value_text
from memaudit_ui import cached, figures, render
from memaudit_ui.annotations import not_applied_notice, store_id_of
from memaudit_ui.frame import frame, md_escape

EVIDENCE_PAGE = "pages/3_Evidence_explorer.py"
# Widths of the tables' leading text columns, so that what a store missed, what that cost and
# what the optimum kept instead fit the grid at 1024 px with the sidebar open (563 px inside
# its border) without scrolling sideways, and every leading text column at 1280 px (818 px);
# left to size themselves, long ids or lists pushed the last of them off screen (QA s21c,
# QA s43, QA s49). A cell cut to its column is read whole with a double-click, and in the CSV.
#: Unit table: the unit id, "value lost" (about 72 px) and who covers the unit in the optimum
#: take 382 px; with who covers it in the store, 532 px; with the text, 752 px.
UNIT_ID_WIDTH_PX = 160
UNIT_COVERED_WIDTH_PX = 150
UNIT_TEXT_WIDTH_PX = 220
#: A header's width per character, padding included (the grid's 14 px font).
HEADER_CHAR_PX = 7
#: Side by side: experience, match and what each side wrote; with the four cost and marginal
#: value columns (about 406 px, sized by their headers) they take 806 px.
EXP_ID_WIDTH_PX = 80
EXP_MATCH_WIDTH_PX = 120
EXP_STORE_WROTE_WIDTH_PX = 110
EXP_OPT_WROTE_WIDTH_PX = 90

ctx = frame("Compare")
pkg = ctx.package
if st.session_state.pop("ma_scroll_top", False):
    # Arrived from a click far down the Budget sweep: the page kept that scroll position and
    # opened in the middle of its tables (projector QA).
    st.html(
        "<script>document.querySelector('[data-testid=\"stMain\"]')?.scrollTo(0, 0)</script>",
        unsafe_allow_javascript=True,
    )
# The title first: a hard package can take the app's time limit to solve (app QA: a blank
# page for 22 s).
st.title("Compare: store vs optimum")
cv = cached.compare_view(pkg, pkg.content_hash(), ctx.budget, ctx.store_key)
unit = cv.cost_unit
opt_name = cv.opt_name

union = cv.source_kind == "external"
st.markdown(
    f"**{md_escape(ctx.store_label)}** against the "
    f"{'certified optimum' if cv.opt_certified else 'best known store (not proven optimal)'} "
    + ("over **P+** (the package's candidates plus the store's own memories) " if union else "")
    + f"at budget **{ctx.budget:.10g} {md_escape(unit)}** · `{cv.package_id}`"
)
# QA s40 (annotator journey, defect 1): annotations made on External stores were silently
# left out here; this page scores the store as loaded, so it says so.
annotations_notice = not_applied_notice(pkg, [store_id_of(ctx.store_key)])
if annotations_notice:
    st.info(annotations_notice, icon=":material/edit_note:")

# Two a row on a projector: at 1024 px four labels were cut (projector QA).
# Two a row in both modes: four cut "Cost used (of 20…" at 1024 px with the sidebar open.
cols = st.columns(2) + st.columns(2)
cols[0].metric(
    f"F (store, {CUT_TO_FIT})" if cv.evaluation.over_budget else "F (store)",
    value_text(cv.value, strip=False),
    help="F of the store as kept at this budget"
    + (
        ": it costs more than the budget as written, so it was cut (see Notes)."
        if cv.evaluation.over_budget
        else "."
    ),
)
if cv.opt_certified:
    cols[1].metric(
        opt_name,
        value_text(cv.opt_value, strip=False),
        help="Certified optimum at this budget"
        + (
            " over P+, the package plus this store's own memories (the package's own OPT, "
            "on Overview, is over its candidates alone)."
            if union
            else "."
        ),
    )
else:
    cols[1].metric(
        "incumbent",
        value_text(cv.opt_value, strip=False),
        delta=f"bound {value_text(cv.opt_bound, strip=False)}",
        delta_color="off",
        help=f"Not proven optimal (status {cv.opt_status}); proven upper bound "
        f"{value_text(cv.opt_bound, 6, strip=False)}, "
        f"{gap_text(cv.opt_value, cv.opt_gap, cv.opt_bound)}.",
    )
cols[2].metric(
    f"Ratio F / {opt_name}",
    cv.ratio_text,
    help="n/a when the optimum is 0 (nothing of value fits the budget).",
)
cols[3].metric(
    # The budget goes in the label: "107.761 of 107.816" was cut to "107.761 of 1…".
    f"Cost used (of {amount_text(ctx.budget, unit)})",
    # As many digits as the budget has (QA s47: ":g" read 99.9999999 as "100", over the
    # budget 99.9999999, and 1234567 as 1.23457e+06).
    render.amount_text(cv.cost, ctx.budget),
    help=f"The {'optimum' if cv.opt_certified else 'incumbent'} uses "
    f"{amount_text(cv.opt_cost, unit)}.",
)

if cv.notes:
    st.subheader("Notes")
    with st.container(border=True):
        for note in cv.notes:
            st.text(note)

st.subheader("Why this score")
with st.container(border=True):
    for paragraph in cv.explanation:
        st.text(paragraph)
# The view as the library saves it, under the paragraphs only it keeps: the CSVs are tables,
# without the explanation or the Notes (QA s47: an annotator could not save why a store
# scored what it did). Before the unit tables, which stop a package without units.
render.result_json(
    cv,
    "compare_json",
    render.store_filename(cv.package_id, cv.label, "compare", ctx.budget),
    "Compare result (JSON)",
)

# "Kind bucket", the word of the CLI's bucket column and of "Why this score": the CLI's
# "value by unit kind" lists each kind, these rows group them (QA s49).
st.subheader("Value by kind bucket")
buckets = cv.bucket_rows
# The Notes say what was dropped; the chart (and its PNG) says that the store was cut.
store_shown = figures.cut_name(cv.label, cv.evaluation.over_budget)
render.chart(
    figures.bucket_value_bars(
        [b.bucket for b in buckets],
        [b.store_value for b in buckets],
        [b.opt_value for b in buckets],
        store_shown,
        opt_name,
        f"Value kept by kind bucket at budget {amount_text(ctx.budget, unit)}: "
        f"{store_shown} vs {opt_name}",
        present=ctx.present,
    ),
    "compare_kinds",
    render.store_filename(cv.package_id, cv.label, "kinds", ctx.budget),
)
st.caption(
    "Bars show each bucket's value w·h(z) summed over its units; the store's bar is labelled "
    f"with the value it lost against the optimum. Buckets (unit kinds): {kind_buckets_text()}."
)
kind_df = pd.DataFrame(cv.bucket_table())
render.table(
    kind_df,
    "compare_kind_table",
    render.store_filename(cv.package_id, cv.label, "kinds", ctx.budget),
    # On a projector without the unit kinds of each bucket (the caption names them): with them
    # "value lost" was past the right edge at 1024 px with the sidebar open (speaker QA s45).
    # A package without units has no bucket rows, and no columns.
    present_df=kind_df.drop(columns=["unit kinds"], errors="ignore"),
    column_config={
        c: st.column_config.NumberColumn(format="%.4f")
        for c in ("weight", "store value", f"{opt_name} value", "value lost")
    },
)

st.subheader("Evidence units, by value lost")
unit_df = pd.DataFrame(cv.unit_table())
if unit_df.empty:
    # App QA: a package without evidence units raised a KeyError in the tables below.
    st.info("This package has no evidence units, so there is nothing to compare unit by unit.")
    st.stop()
number = st.column_config.NumberColumn
render.table(
    unit_df,
    "compare_units",
    render.store_filename(cv.package_id, cv.label, "units", ctx.budget),
    # On a projector: what the unit is, what was lost and who covers it (QA s18c: 11 columns
    # ran past a 1024 px screen). Five columns, so the text stays (cut to a line) under the
    # projector's rule for wide tables; the CSV keeps every column.
    present_df=unit_df[
        ["unit", "value lost", f"covered in {opt_name} by", "covered in store by", "text"]
    ],
    height=min(35 * (len(unit_df) + 1) + 3, 740),
    column_config={
        # Cut to the column's width (QA s21c: the text, uncut, pushed the columns after it
        # off screen).
        "text": st.column_config.TextColumn(
            width=UNIT_TEXT_WIDTH_PX,
            help="The unit's text, cut to the column's width: double-click a cell to read it "
            "whole (or drag the column wider). The CSV and the Evidence explorer have it too.",
        ),
        # At the grid's own width, ids such as "u:passport:advice" were cut. Not pinned: a
        # pinned column is drawn in grey, faint on a projector.
        "unit": st.column_config.TextColumn(width=UNIT_ID_WIDTH_PX),
        "covered in store by": st.column_config.TextColumn(width=UNIT_COVERED_WIDTH_PX),
        # Wider for a longer name, whose header was cut ("covered in OPT over P+ b").
        f"covered in {opt_name} by": st.column_config.TextColumn(
            width=max(UNIT_COVERED_WIDTH_PX, HEADER_CHAR_PX * len(f"covered in {opt_name} by"))
        ),
        "store coverage": number(format="%.3f", help="Summed coverage z (may exceed 1)."),
        f"{opt_name} coverage": number(format="%.3f"),
        "store value": number(format="%.4f", help="w · h(z) for the store."),
        f"{opt_name} value": number(format="%.4f"),
        "value lost": number(
            format="%.4f",
            help="Optimum's value minus the store's; negative where the store covers more.",
        ),
        "weight": number(format="%.3f"),
    },
)
st.caption(
    f"Sorted by value lost (largest first). Value lost = {opt_name}'s value on the unit minus the "
    f"store's; the column adds up to {opt_name} − F = "
    f"{value_text(cv.opt_value - cv.value, strip=False)}."
    + ("" if ctx.present else " Click a column header to re-sort.")
)

# From a miss to its evidence: the Evidence explorer focused on the unit (app QA: the ids
# were plain text, to be found again in the other page's picker).
# The core's verdict (QA s39: "> 0" offered a unit losing 5.55e-17 that the explanation does not
# count as missed); unit_rows are sorted by loss, largest first.
missed = [u.unit_id for u in cv.unit_rows if u.missed]
if missed:
    # The link under the picker, full width: beside it, its text was cut at 1024 px.
    picked = st.selectbox(
        "A missed unit, to see who covers it",
        missed,
        key="cmp_missed_unit",
        help="Units the optimum gets more value from than the store, largest loss first.",
    )
    st.page_link(
        EVIDENCE_PAGE,
        label=f"Open {picked} in the Evidence explorer",
        icon=":material/search:",
        query_params={**st.query_params.to_dict(), "unit": picked},
    )

st.subheader("Side by side, per experience (arrival order)")
# Numbers stay numbers, formatted in the grid only, so a header click sorts them as numbers
# and the CSV has every digit (QA s42 defect 1: as text, "10" sorted before "2" and the time
# 1714086400 read 1.71409e+09).
exp_df = pd.DataFrame(cv.experience_table())
# On a projector: fewer rows and columns, the types first; the CSV keeps everything.
brief = pd.DataFrame(cv.experience_brief(), columns=cv.experience_brief_columns)
render.table(
    exp_df,
    "compare_experiences",
    render.store_filename(cv.package_id, cv.label, "side-by-side", ctx.budget),
    present_df=brief,
    break_ids=[c for c in brief.columns if c.endswith(" wrote")],
    height=min(35 * (len(exp_df) + 1) + 3, 740),
    column_config={
        "experience": st.column_config.TextColumn(width=EXP_ID_WIDTH_PX),
        "match": st.column_config.TextColumn(
            width=EXP_MATCH_WIDTH_PX,
            help=f"same, different, only store, only {opt_name} or neither wrote; for a memory "
            "the store dropped for the budget, store's dropped (over budget), followed by "
            f'"{opt_name} keeps it" or "{opt_name} differs" when the optimum wrote one.',
        ),
        "store wrote": st.column_config.TextColumn(width=EXP_STORE_WROTE_WIDTH_PX),
        # A longer name ("OPT over P+", "incumbent") would be cut in the header: those tables
        # do not fit 1280 px whatever the widths, so that column sizes itself.
        f"{opt_name} wrote": st.column_config.TextColumn(
            width=EXP_OPT_WROTE_WIDTH_PX if opt_name == "OPT" else None
        ),
        # "%g" without a precision is every digit in the grid (sprintf.js).
        "time": number(format="%g"),
        "store cost": number(format="%g"),
        f"{opt_name} cost": number(format="%g"),
        "store marginal value": number(format="%.4f"),
        f"{opt_name} marginal value": number(format="%.4f"),
    },
)
if ctx.present:
    st.caption(
        f"Presentation mode: the {len(brief)} experiences either side wrote, without texts "
        "(all of them, with texts, in the CSV and outside presentation mode)."
    )
st.caption(
    "Marginal value of a memory u in a store X = F(X) − F(X − {u}): the value the store would "
    "lose if that memory alone were removed (the other memories stay). F is submodular, so a "
    "store's marginal values add up to at most its F — two memories covering the same unit each "
    "look less valuable than the pair. A cost or marginal value of n/a: nothing written for that "
    "experience on that side. A memory the store dropped for being over budget (a match "
    f'starting "store\'s dropped (over budget)", then "{opt_name} keeps it" or "{opt_name} '
    'differs" when the optimum wrote a memory for that experience) shows the cost it was '
    "written at and a marginal value of n/a, as it is not in the store. A time of n/a: an "
    "external memory (no experience)."
)
