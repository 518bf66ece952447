"""External stores: score a memory system's store in the union package P+(Y), split a low score
into extraction and selection, annotate each memory's coverage and save it as a new package."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pandas as pd
import streamlit as st

from memaudit_core.analysis import CONFIRM_ESTIMATE, estimated_coverage_clause
from memaudit_core.costs import COST_RULES, cost_rule_for_unit
from memaudit_core.errors import MemAuditError, PackageError
from memaudit_core.explain import amount_text
from memaudit_core.importers import STORE_FORMATS
from memaudit_core.package import dumps_package, warning_parts
from memaudit_core.union import (
    AnnotationChange,
    apply_annotations,
    coverage_changes,
    external_stores,
    mixed_stores,
    suggestion_changes,
    union_curve_title,
    union_opt_name,
    unique_store_id,
    with_stores,
)
from memaudit_ui import cached, figures, render
from memaudit_ui.annotations import KEEP_THEM, replace_import, replaced_import
from memaudit_ui.frame import (
    LinkSetting,
    frame,
    history_note,
    md_code_span,
    md_escape,
    package_error_md,
    package_warning_md,
    set_from_widget,
    store_options,
    switch_package,
    sync_widget,
)
from memaudit_ui.sources import MAX_UPLOAD_MB

#: The salience field box's label, also named by the union report's note that suggests a field.
SALIENCE_LABEL = "Salience meta field"

#: Session-state keys of this page (not widget keys, so they survive leaving the page).
ANN_KEYS = {
    "ma_ann_imports": "package hash -> {store id: {'digest', 'store', 'replaced'}} of uploaded "
    "exports (digest: export's, history's or None, format, cost rule; 'replaced': the note "
    "when a reading with a history took the place of the bare one)",
    "ma_ann_logs": "'<package hash>:<store id>' -> annotation decisions (AnnotationChange dicts)",
    "ma_ann_store": "'<package hash>:<store id>' of the store shown",
    "ma_ann_resolved": "'<package hash>:<upload key>' the uploads resolved to at the last run "
    "(the store they resolve to is shown when it changes)",
    "ma_ann_sidebar_seen": "the sidebar's store key at the last run (the page follows a change)",
    "ma_ann_who": "annotator name written into the log",
    "ma_ext_history_ties": "history upload's file id -> (SHA-256, name) of the export it was "
    "uploaded with: it is read with that export only",
    "ma_ann_editor_version": "bumped after each edit so the editor redraws from the log",
}
SUGGESTION_COL = "suggestion (not counted until confirmed)"
FORMATS = [f for f in ("mem0", "letta", "amem", "zep") if f in STORE_FORMATS]
RULES = [name for name, rule in COST_RULES.items() if rule.available]
#: Y' when the store is over budget: newest created_at first, or highest salience first.
KEEP_RULES = ["recency", "salience"]


def link_settings(pkg, store_key: str, budget: float) -> list[LinkSetting]:
    """The scoring options in the page's link, as the other pages' settings (QA s47: the
    salience choice changed the headline numbers, yet a reload or a shared link showed
    recency's without a word)."""
    return [
        LinkSetting(
            "w_ext_keep", "keep", "recency", choices=KEEP_RULES, label="Y' when over budget"
        ),
        # Any text: a field no memory has is named by the union report's note.
        LinkSetting("w_ext_salience", "salience_field", "", label=SALIENCE_LABEL),
    ]


ctx = frame("External stores", link_settings)
pkg = ctx.package
phash = pkg.content_hash()
state = st.session_state
imports = state.setdefault("ma_ann_imports", {}).setdefault(phash, {})
logs = state.setdefault("ma_ann_logs", {})
state.setdefault("ma_ann_who", "annotator")
state.setdefault("ma_ann_editor_version", 0)


def _warning_list(warnings: list[str]) -> str:
    """Markdown bullets of the first ten warnings, and the count of the rest (QA s39 defect
    12a: warnings past the tenth were dropped without a word); each with its JSON path in a
    code span and its rule, as the package's warnings are shown (QA s52: importer notes)."""
    more = len(warnings) - 10
    return "".join(f"\n\n- {package_warning_md(w)}" for w in warnings[:10]) + (
        f"\n\n... and {more} more warning(s)" if more > 0 else ""
    )


def _log_key(store_id: str) -> str:
    return f"{phash}:{store_id}"


def _changes(store_id: str) -> list[AnnotationChange]:
    return [AnnotationChange.from_dict(d) for d in logs.get(_log_key(store_id), [])]


def _record(store_id: str, changes) -> None:
    if changes:
        logs.setdefault(_log_key(store_id), []).extend(c.to_dict() for c in changes)
        state["ma_ann_editor_version"] += 1


st.title("External stores (union scoring)")
st.markdown(
    "An external store is what a memory system (Mem0, Letta, A-Mem, Zep) actually wrote. Its "
    "memories are not package candidates, so each becomes a candidate in its own group: the "
    "**union package** P+. The **union ratio** F(Y') / OPT over P+ is the fair score; the "
    "**upper-pruned bound** (the exact best affordable subset of the store) splits a low score "
    "into **extraction** (upper-pruned / OPT over P+: are the right memories written at all?) "
    "and "
    "**selection** (F(Y') / upper: does the store keep the right ones at this budget?)."
)

# --------------------------------------------------------------------------- load an export

with st.expander("Load a memory-system export next to this package", expanded=False):
    c1, c2, c3 = st.columns([3, 1, 1])
    upload = c1.file_uploader(
        # QA s40 defect 4: the mem0 importer also reads OpenMemory backups (zip, JSON Lines),
        # which the label did not name.
        f"Export file (.json, .af, .zip, .jsonl, .jsonl.gz; at most {MAX_UPLOAD_MB} MB)",
        # Any file is taken and read by the importer, as in the sidebar: Streamlit's own type
        # check refused a .txt with only a tooltip on the file chip and left the previous
        # file's "Loaded as" message on screen (QA s18c); exports saved as .txt or .jsonl are
        # read when their content is right, and get a located st.error naming them otherwise.
        key="w_ext_upload",
        help="Read by the importer of the chosen format. Under mem0: a Mem0 export, or an "
        "OpenMemory backup (the zip its export returns, memories.json, or memories.jsonl / "
        f"memories.jsonl.gz). Pickles are refused; files above {MAX_UPLOAD_MB} MB are "
        "refused. The package file itself is never changed.",
    )
    fmt = c2.selectbox("Format", FORMATS, key="w_ext_format")
    package_rule = cost_rule_for_unit(pkg.cost_unit)
    rule = c3.selectbox(
        "Cost rule",
        RULES,
        # The rule counting the package's unit, so memories and candidates share one unit.
        index=RULES.index(package_rule) if package_rule in RULES else 0,
        key="w_ext_cost_rule",
        format_func=lambda r: f"{r} — {COST_RULES[r].description}",
        # QA s43: "in the package's unit" was said of every rule, chars beside words too.
        help="How each memory is costed. The default counts the package's unit; another "
        "rule's costs are compared with the budget as plain numbers (a note says so).",
    )
    # Shown for mem0, and kept on screen while it holds a file under another format: a
    # widget left out of a run loses its file, so switching formats would drop it unsaid.
    history_upload = None
    if fmt == "mem0" or state.get("w_ext_history") is not None:
        history_upload = c1.file_uploader(
            "Mem0 history (optional: JSON rows or history.db)",
            key="w_ext_history",
            help="Mem0 only, as the CLI's --history: history() rows (JSON), a page "
            '{"results": [...]} of them, or Mem0\'s SQLite history.db. Deleted memories are '
            "left out of the store and updates counted as superseded versions. Files above "
            f"{MAX_UPLOAD_MB} MB are refused.",
        )
    history = history_upload if fmt == "mem0" else None
    data = None if upload is None else upload.getvalue()
    sha = None if data is None else hashlib.sha256(data).hexdigest()
    # A history belongs to the export it was uploaded with (QA s51: left in its box, it was
    # read with the next Mem0 export, whose store then "left out" another export's deleted
    # memory and was called truncated). Tied by the history upload's file id, so uploading
    # the file again ties it to the export then shown.
    ties = state.setdefault("ma_ext_history_ties", {})
    stale_history = None
    if history is not None and upload is not None:
        tied_sha, tied_name = ties.setdefault(history.file_id, (sha, upload.name))
        if tied_sha != sha:
            stale_history, stale_export, history = history, tied_name, None
    # Filled once the export's outcome is known, in this place on screen: QA s40 (defect 2)
    # saw "The export is loaded without it" under an error saying it was not loaded, and with
    # no export uploaded at all.
    not_read = st.empty() if history_upload is not None and history is None else None
    if upload is None and history is not None:
        st.info("The history is read with its export: upload the Mem0 export above.")
    found = None
    if upload is None:
        # Another upload of the same content is a change too: it shows its store again.
        state.pop("ma_ann_resolved", None)
    else:
        digest = sha[:16]
        hdata = None if history is None else history.getvalue()
        hsha = None if hdata is None else hashlib.sha256(hdata).hexdigest()
        hdigest = None if hsha is None else hsha[:16]
        # The history is part of the key: the bare export found again would hide its effect.
        key = (digest, hdigest, fmt, rule)
        found = next((sid for sid, item in imports.items() if item["digest"] == key), None)
        # QA s51: re-opening the annotated package (Save) with its export still in this box
        # imported the export again, as an unannotated duplicate shown in place of the saved
        # store. A store of the package read from these very files, format and cost rule is
        # that export: it is shown, not imported again.
        in_package = found is None and next(
            (
                s.id
                for s in external_stores(pkg)
                if s.meta.get("source_sha256") == sha
                and s.meta.get("history_sha256") == hsha
                and s.meta.get("format") == fmt
                and s.meta.get("cost_rule") == rule
            ),
            None,
        )
        if in_package:
            found = in_package
        with_history = "" if history is None else f" with history {md_escape(history.name)}"
        too_big = [
            (f.name, len(b))
            for f, b in ((upload, data), (history, hdata))
            if b is not None and len(b) > MAX_UPLOAD_MB * 1e6
        ]
        if too_big:
            for big_name, size in too_big:
                st.error(
                    f"{md_escape(big_name)}: file is {size / 1e6:.1f} MB; uploads above "
                    f"{MAX_UPLOAD_MB} MB are refused [rule: upload-size]. Nothing was added."
                )
        elif found is None:
            # The export's bare reading, stale once its history is read, gives up its id.
            store_id = replaced_import(imports, key) or unique_store_id(pkg, fmt, taken=imports)
            try:
                new_store = cached.import_export(
                    pkg,
                    phash,
                    data,
                    upload.name,
                    fmt,
                    rule,
                    store_id,
                    history=hdata,
                    history_name=None if history is None else history.name,
                )
            except PackageError as exc:
                st.error(
                    f"**{md_escape(upload.name)}{with_history} was not loaded** as {fmt} "
                    f"({exc.count_text()}); nothing was added.\n\n" + package_error_md(exc)
                )
            except MemAuditError as exc:
                st.error(
                    f"**{md_escape(upload.name)}{with_history} was not loaded** as {fmt}: "
                    f"{md_escape(str(exc))}"
                )
            else:
                if new_store.memories:
                    replace_import(imports, logs, _log_key(store_id), store_id, key, new_store)
                    state["ma_ann_editor_version"] += 1  # its rows may be another store's now
                    found = store_id
                else:
                    # QA s41 (C4): the message named neither the file nor the format, and the
                    # importer's warnings (which often say why: all deleted, all filtered) were
                    # not shown, while the CLI names the file.
                    why = [
                        w
                        for w in new_store.meta.get("warnings", [])
                        if (warning_parts(w) or {}).get("rule") != "export-empty"
                    ]
                    st.warning(
                        f"**{md_escape(upload.name)}{with_history} holds no memories** as {fmt} "
                        "(as kept): nothing to score, so no store was added." + _warning_list(why)
                    )
        # QA s40 defect 1: only a new import became the store shown, so a store found again
        # by its key (history removed, an earlier history re-uploaded, letta -> mem0) was
        # named in the message while the previous one stayed shown and scored. The store the
        # uploads resolve to is shown whenever the uploads' key changes; reruns with the same
        # key leave a later pick in the store box alone.
        resolved = f"{phash}:{key}"
        if state.get("ma_ann_resolved") != resolved:
            state["ma_ann_resolved"] = resolved
            if found is not None and not too_big:
                state["ma_ann_store"] = _log_key(found)
        if in_package:
            st.info(
                f"**{md_escape(upload.name)}{with_history} is already in this package** as "
                f"store {md_code_span(found)} ({md_escape(pkg.store(found).display_name)}), "
                f"read as {fmt} with the {rule} cost rule: it was not imported again. The "
                "store shown is the package's, with the annotations saved in it.",
                icon=":material/inventory_2:",
            )
        elif found is not None:
            loaded = imports[found]["store"]
            meta = loaded.meta
            n_mem = len(loaded.memories)
            st.success(
                f"Loaded as store `{found}` ({md_escape(loaded.display_name)}): {n_mem} "
                f"{'memory' if n_mem == 1 else 'memories'} "
                f"costed by {meta.get('cost_rule')}{history_note(loaded)}."
                f"{imports[found].get('replaced', '')} Annotate its coverage below."
            )
            st.text(f"coverage: {meta.get('coverage', '')}")
            warnings = meta.get("warnings", [])
            if warnings:
                # QA s47: plain text under the green box read as part of "Loaded".
                st.warning(
                    f"**{len(warnings)} importer warning(s)** for {md_escape(upload.name)}:"
                    + _warning_list(warnings)
                )

    if not_read is not None and stale_history is not None:
        not_read.warning(
            f"The Mem0 history {md_escape(stale_history.name)} is **not read** with "
            f"{md_escape(upload.name)}: it was uploaded with the export "
            f"{md_escape(stale_export)}, and a history belongs to the export it was written "
            "with. Remove it, or upload it again to read it with this export."
        )
    elif not_read is not None:
        base = (
            f"The Mem0 history {md_escape(history_upload.name)} is **not read**: a history "
            f"applies to mem0 exports only, and the format is {fmt}. "
        )
        if upload is None:
            tail = "Choose mem0 and upload its Mem0 export to apply it, or remove it."
        elif found is None:
            tail = "Choose mem0 to apply it, or remove it."
        else:
            tail = "The export is loaded without it; choose mem0 to apply it, or remove it."
        not_read.warning(base + tail)

# --------------------------------------------------------------------------- the store shown

base_stores = {s.id: s for s in external_stores(pkg)}
base_stores.update({sid: item["store"] for sid, item in imports.items()})
mixed = mixed_stores(pkg)
if mixed:
    st.info(
        "Not union-scored here: "
        # Code spans as they are (QA s47: md_escape's backslashes showed inside the backticks).
        + ", ".join(md_code_span(s.id) for s in mixed)
        + " — each selects package candidates and also holds its own memories. Compare "
        "scores such a store (pick it in the sidebar)."
    )

if not base_stores:
    st.info(
        "This package has no external stores. Load an export above, or open the sample "
        "package 'external-stores-demo' (Mem0, Letta and A-Mem stores of one story)."
    )
    # One click for a speaker, instead of a trip to the sidebar (app QA).
    st.button(
        "Open the external-stores-demo sample here",
        icon=":material/open_in_new:",
        on_click=switch_package,
        args=("sample:external-stores-demo",),
    )
else:
    working = [apply_annotations(s, _changes(sid)) for sid, s in base_stores.items()]
    try:
        wpkg = with_stores(pkg, working)
    except PackageError as exc:  # e.g. an imported store that no longer fits the package
        st.error(
            "The annotated stores do not validate against this package:\n\n" + package_error_md(exc)
        )
        st.stop()
    whash = wpkg.content_hash()
    ids = list(base_stores)
    sidebar_choice = ctx.store_key.partition(":")[2] if ctx.store_key.startswith("store:") else ""
    current = state.get("ma_ann_store", "")
    sidebar_moved = state.get("ma_ann_sidebar_seen") != ctx.store_key
    state["ma_ann_sidebar_seen"] = ctx.store_key
    if sidebar_choice in ids and (sidebar_moved or current.partition(":")[0] != phash):
        current = _log_key(sidebar_choice)  # the sidebar (and the link) name the store shown
    elif current.partition(":")[0] != phash or current.partition(":")[2] not in ids:
        current = _log_key(ids[0])
    state["ma_ann_store"] = current
    sync_widget("w_ext_store", current.partition(":")[2])

    def _picked() -> None:
        """The store picked here becomes the sidebar's and the link's (app QA: a copied link
        reopened the previous store), when it is one of the package's stores."""
        sid = state["w_ext_store"]
        state["ma_ann_store"] = _log_key(sid)
        if f"store:{sid}" in store_options(pkg):
            state["ma_store"] = f"store:{sid}"
            state["ma_ann_sidebar_seen"] = f"store:{sid}"

    def _relabel(sid: str) -> None:
        """The label box's text becomes the loaded export's label (empty: its file's)."""
        item = imports[sid]
        store = item["store"]
        text = " ".join(state[f"w_ext_label_{sid}"].split())
        if not text:
            text = item.setdefault("file_label", store.label)
        else:
            item.setdefault("file_label", store.label)
        item["store"] = replace(store, label=text)

    st.subheader("Store and scoring options")
    # The store box has a row of its own: in a fifth of the width at 1024 px its options were
    # cut after "Mem0 export + his", hiding which history a store carries (QA s40 defect 1).
    st.selectbox(
        "External store",
        ids,
        key="w_ext_store",
        format_func=lambda sid: (
            f"{sid} · {base_stores[sid].display_name}"
            + (" (loaded export)" if sid in imports else "")
        ),
        on_change=_picked,
    )
    store_id = state["w_ext_store"]
    if store_id in imports:
        # QA s51: a loaded export is labelled by its file; the researcher may name it (the
        # legend, the curve table and the saved package show the label).
        sync_widget(f"w_ext_label_{store_id}", base_stores[store_id].display_name)
        st.text_input(
            "Label of this loaded export",
            key=f"w_ext_label_{store_id}",
            max_chars=80,
            on_change=_relabel,
            args=(store_id,),
            help="Shown in the store box, the chart's legend, the curve table and the saved "
            "package. Default: the system and the export's file name. Empty: back to it.",
        )
    o2, o3, o4 = st.columns(3)  # filled below; the notice on the store shown comes after them
    session_n = len(logs.get(_log_key(store_id), []))
    decisions = f"{session_n} annotation decision{'' if session_n == 1 else 's'}"
    if store_id in imports:
        # QA s40 defect 2: after loading an export the URL still named the sidebar's store
        # (a copied link opened it, not the export) and a reload lost the export and its
        # annotations without a word. No link can name a loaded export, so the page says so.
        st.warning(
            f"**{md_code_span(store_id)} is a loaded export: it lives in this browser session "
            "only.** No link can name it: this page's link names the sidebar's store, "
            f"{md_code_span(ctx.store_key)}, and opens that store, not this one. A reload loses "
            "this export"
            + (f" and its {decisions}" if session_n else " and any annotation of it")
            + ". To keep them, download the annotated package (Save, below) and open it with "
            "the sidebar's upload; only then can the Overview, Compare and the Evidence "
            "explorer score it.",
            icon=":material/link_off:",
        )
    elif ctx.store_key != f"store:{store_id}":
        # s40 left-alone item: with a writer (or an internal store) in the sidebar this page
        # showed its first external store while the sidebar and the link named the writer.
        st.caption(
            f"The sidebar names {md_escape(ctx.store_label)}, which is not an external store: "
            f"this page shows {md_code_span(store_id)} "
            f"({md_escape(base_stores[store_id].display_name)}). Picking a store in the box "
            "above makes "
            "it the sidebar's and the link's."
        )
    if store_id not in imports and session_n:
        # QA s40 defect 1: the other pages scored the store without these annotations, unsaid.
        st.info(
            f"**The {decisions} on {md_code_span(store_id)} apply on this page only.** The "
            f"Overview, Compare and the Evidence explorer score the store as loaded. {KEEP_THEM}",
            icon=":material/edit_note:",
        )
    o2.radio(
        "Y' when over budget",
        KEEP_RULES,
        **ctx.kept("keep"),
        help="Which memories the store keeps when it does not fit: newest created_at first, "
        "or highest salience first. Both pruned selections are shown below either way. This "
        "page only: the Overview, Compare and the Evidence explorer keep the recency selection, "
        "as `memaudit score` does.",
    )
    o3.text_input(
        SALIENCE_LABEL,
        **ctx.kept("salience_field"),
        help="Empty: the memory's salience. Otherwise a (dotted) field of each memory's meta, "
        "e.g. importance_score.",
    )
    sync_widget("w_ext_who", state["ma_ann_who"])
    o4.text_input(
        "Annotator",
        key="w_ext_who",
        on_change=set_from_widget,
        args=("ma_ann_who", "w_ext_who"),
        help="Written into the annotation log with each decision.",
    )
    keep = state["w_ext_keep"]
    salience_field = state["w_ext_salience"].strip() or None
    rep = cached.union_report(
        wpkg,
        whash,
        store_id,
        ctx.budget,
        salience_field,
        keep,
        salience_control=f"the {SALIENCE_LABEL!r} box",
    )
    # The budget is in the package's unit; the memories' costs in the store's cost rule's
    # (QA s43: a chars-costed store showed "Store cost (words) = 86", 86 chars).
    unit, memory_unit = rep.cost_unit, rep.memory_unit

    # ----------------------------------------------------------------------- metrics
    st.subheader(f"Union metrics at budget {amount_text(ctx.budget, unit)}")

    # Three a row, as on the Overview: six cut their labels ("Union r…") at 1024 px with the
    # sidebar open, in either mode (speaker QA).
    def metric_row() -> list:
        return st.columns(3) + st.columns(3)

    m = metric_row()
    m[0].metric(
        "Union ratio",
        rep.union_ratio_text,
        help="F(Y') / OPT over the union package P+ (package candidates and these memories). "
        "n/a when that optimum is 0.",
    )
    m[1].metric(
        "Package ratio",
        rep.package_ratio_text,
        help="F(Y') / OPT over the package candidates alone. It can exceed 1: see the notes.",
    )
    m[2].metric(
        "Upper-pruned",
        f"{rep.upper_value:.4g}",
        help="Exact maximum of F over subsets of this store that fit the budget (solved, not "
        f"greedy; {rep.upper.label}).",
    )
    m[3].metric(
        "Extraction",
        rep.extraction_text,
        help="upper-pruned / OPT over P+ (n/a when that optimum is 0)",
    )
    m[4].metric(
        "Selection", rep.selection_text, help="F(Y') / upper-pruned (n/a when upper-pruned is 0)"
    )
    m[5].metric(
        "Kept F(Y')",
        f"{rep.value:.4g}",
        help=f"{len(rep.kept)} of {rep.n_memories} memories, "
        f"{render.amount_text(rep.cost)} {memory_unit}.",
    )
    n = metric_row()
    n[0].metric(f"{rep.union_opt.label} over P+", f"{rep.union_opt_value:.4g}")
    n[1].metric(f"{rep.package_opt.label} (package only)", f"{rep.package_opt_value:.4g}")
    n[2].metric(
        f"Store cost ({memory_unit})",
        render.amount_text(rep.store_cost),
        help="As written, deleted excluded.",
    )
    n[3].metric("Memories kept", f"{len(rep.kept)} of {rep.n_memories}")
    n[4].metric("Superseded", len(rep.superseded), help="Still held by the system: they count.")
    n[5].metric("Deleted (left out)", len(rep.deleted))
    if keep == "salience" and rep.keep_rule == "salience":
        # Annotator QA: the choice looked global, but the other pages kept recency's F.
        st.caption(
            f"Y' here is the salience selection. The Overview, Compare and the Evidence "
            f"explorer score the recency one (F = {rep.recency.value:.4g}), as `memaudit "
            "score` does."
        )
    elif keep == "salience" and rep.keep_rule == "recency":
        # QA s40 defect 3: with no numeric salience Y' falls back to recency, yet the caption
        # claimed a salience selection (the condition tested rep.recency, not rep.salience).
        # The field the box names, in the core's words (QA s49: "no numeric salience" was
        # said of a store whose memories lack the field the link chose).
        st.caption(
            f"No memory of this store has a {md_escape(rep.salience_source)}, so there is no "
            "salience selection: Y' here is the recency one, as on the Overview, Compare and "
            "the Evidence explorer."
        )

    if rep.cost_effect:
        st.warning(
            "Cost effect: every memory of this store is longer than the budget, so nothing fits "
            "and it scores 0. That says nothing about what the memories cover; raise the budget "
            "to see their content score."
        )
    if rep.package_ratio is not None and rep.package_ratio > 1:
        # QA s43: the box credited cheaper evidence where the import had estimated coverage.
        guessed = rep.estimated_coverage
        st.info(
            "Why is the package ratio above 1? The optimum over package candidates can only use "
            "the package's own candidates (one per experience). This store's memories are "
            "outside that pool, and some cover the same evidence more cheaply (or merge several "
            "experiences), so they beat it. Compare against the union optimum instead."
            + (
                f" But {estimated_coverage_clause(len(guessed), 'its memories', guessed)}, so "
                f"the ratio above 1 may come from that estimate: {CONFIRM_ESTIMATE} (see the "
                "notes)."
                if guessed
                else ""
            )
        )
    with st.container(border=True):
        st.caption("Notes")
        for note in rep.notes:
            st.text(note)

    # ----------------------------------------------------------------------- memories
    st.subheader("Memories and the selections that keep them")
    rows = rep.memory_rows
    columns = {
        "memory": [r.id for r in rows],
        "text": [r.text for r in rows],
        "status": [r.status for r in rows],
        f"cost ({memory_unit})": [r.cost for r in rows],
        "units covered": [r.units_covered for r in rows],
        "F alone": [round(r.alone_value, 4) for r in rows],
        "kept (Y')": [r.kept for r in rows],
        "upper-pruned": [r.in_upper for r in rows],
    }
    if rep.recency is not None:
        columns["recency-pruned"] = [r.in_recency for r in rows]
    if rep.salience is not None:
        columns["salience-pruned"] = [r.in_salience for r in rows]
    columns["in OPT over P+"] = [r.in_union_opt for r in rows]
    columns["created_at"] = [r.created_at or "" for r in rows]
    if any(r.salience is not None for r in rows):
        columns["salience"] = [r.salience for r in rows]
    mem_df = pd.DataFrame(columns)
    render.table(
        mem_df,
        "ext_memories",
        f"{rep.package_id}-{store_id}-memories-B{ctx.budget:.10g}",
        # A medium text column keeps the selection columns in view; the memory id stays pinned
        # while the table scrolls sideways to created_at and salience.
        column_config={
            "memory": st.column_config.TextColumn("memory", pinned=True),
            "text": st.column_config.TextColumn("text", width="medium"),
        },
    )
    pruned = [p for p in (rep.recency, rep.salience) if p is not None]
    if pruned:
        pr_df = pd.DataFrame(
            {
                "policy": [p.rule for p in pruned],
                "order": [p.order for p in pruned],
                "F": [round(p.value, 4) for p in pruned],
                "union ratio": [p.union_ratio for p in pruned],
                "selection": [p.selection for p in pruned],
                f"cost ({memory_unit})": [p.cost for p in pruned],
                "kept": [", ".join(p.kept) for p in pruned],
                "dropped": [", ".join(p.dropped) for p in pruned],
            }
        )
        st.caption("The store is over budget: each pruning policy's selection, scored.")
        render.table(
            pr_df,
            "ext_pruned",
            f"{rep.package_id}-{store_id}-pruned-B{ctx.budget:.10g}",
            # As the metrics and the curve table (app QA: 0.9924 beside 0.992).
            column_config={
                "union ratio": st.column_config.NumberColumn(format="%.3f"),
                "selection": st.column_config.NumberColumn(format="%.3f"),
            },
        )

    # ----------------------------------------------------------------------- coverage editor
    st.subheader("Coverage of each memory")
    st.caption(
        "Choose full (1.0), partial (0.5) or none (0) per memory and evidence unit. The "
        "suggestion column is a lexical guess: it is not counted until you set the cell (or "
        "confirm all suggestions). Every change is logged and the metrics above update. "
        # QA s40 defects 1 and 2: said before the first edit, not only after it.
        "Annotations apply on this page only and live in this browser session: not in the "
        "link, lost on reload. Download the annotated package (Save, below) and open it with "
        "the sidebar's upload to keep them and use them on every page."
    )
    wstore = wpkg.store(store_id)
    all_units = [u.id for u in wpkg.units]
    units: tuple[str, ...] | None = None
    if len(all_units) > 16:
        used = [u for u in all_units if any(u in mm.coverage for mm in wstore.memories)]
        chosen = st.multiselect(
            "Units shown in the editor",
            all_units,
            default=used[:16] or all_units[:16],
            key=f"w_ext_units_{store_id}",
        )
        units = tuple(chosen)
    grid = cached.annotation_grid(wpkg, whash, store_id, units)
    row_ids = [r.memory_id for r in grid.rows]
    grid_df = pd.DataFrame(
        [
            {
                "memory": r.memory_id,
                "text": r.text,
                SUGGESTION_COL: r.suggestion_text,
                "status": r.status,
                **r.cells,
            }
            for r in grid.rows
        ]
    )
    column_config = {
        u: st.column_config.SelectboxColumn(
            u, options=list(grid.options[u]), required=True, help=grid.unit_help[u]
        )
        for u in grid.unit_ids
    }
    column_config["memory"] = st.column_config.TextColumn("memory", pinned=True)
    column_config["text"] = st.column_config.TextColumn("text", width="medium")
    column_config[SUGGESTION_COL] = st.column_config.TextColumn(SUGGESTION_COL, width=300)
    editor_key = f"w_ext_editor_{store_id}_{state['ma_ann_editor_version']}"
    suggestions = {r.memory_id: r.suggestion for r in grid.rows}

    def _on_edit(key: str, sid: str, rows: list[str], store, shown) -> None:
        edited = state.get(key, {}).get("edited_rows", {})
        edits = {rows[int(pos)]: cells for pos, cells in edited.items()}
        try:
            changes = coverage_changes(
                store, edits, who=state["ma_ann_who"] or "annotator", suggestions=shown
            )
        except MemAuditError as exc:
            state["ma_ann_edit_error"] = str(exc)
            return
        _record(sid, changes)

    st.data_editor(
        grid_df,
        key=editor_key,
        hide_index=True,
        disabled=["memory", "text", SUGGESTION_COL, "status"],
        column_config=column_config,
        on_change=_on_edit,
        args=(editor_key, store_id, row_ids, wstore, suggestions),
    )
    edit_error = state.pop("ma_ann_edit_error", None)
    if edit_error:
        st.error(md_escape(edit_error))
    # A row as wide as the labels, wrapping when they do not fit: in fixed columns at 1024 px
    # with the sidebar open each label was cut ("Discard this se…", speaker QA s46).
    b1 = b2 = st.container(horizontal=True, gap="small")
    pending = suggestion_changes(
        wpkg, wstore, who=state["ma_ann_who"] or "annotator", suggestions=suggestions
    )
    if b1.button(
        (
            "Confirm the 1 suggestion"
            if len(pending) == 1
            else f"Confirm all {len(pending)} suggestions"
        )
        if pending
        else "No suggestions to confirm",
        key="w_ext_confirm",
        # App QA: with nothing pending the button stayed enabled and logged 0 decisions.
        disabled=not pending,
        help="Sets each suggested "
        "cell that is still empty to full (score >= 0.75) or partial; logged.",
    ):
        _record(store_id, pending)
        st.rerun()
    if b2.button(
        "Discard this session's annotations",
        key="w_ext_discard",
        disabled=not logs.get(_log_key(store_id)),
    ):
        logs.pop(_log_key(store_id), None)
        state["ma_ann_editor_version"] += 1
        st.rerun()

    # ----------------------------------------------------------------------- save
    st.subheader("Save")
    log_rows = list(wstore.meta.get("annotation_log", []))
    st.caption(
        f"{session_n} decision(s) in this session for this store ({len(log_rows)} in its log). "
        "The download is a new package file with every external store shown here (loaded "
        "exports included) and each store's annotation log in its meta; the original package "
        "is never overwritten. Open the new file with the sidebar's upload to continue."
    )
    s1 = s2 = st.container(horizontal=True, gap="small")  # as b1, b2 (speaker QA s46)
    s1.download_button(
        "Annotated package (JSON)",
        dumps_package(wpkg).encode("utf-8"),
        file_name=render.safe_filename(f"{wpkg.id}-annotated") + ".json",
        mime="application/json",
        key="w_ext_save",
        on_click="ignore",
        icon=":material/download:",
    )
    log_df = pd.DataFrame(
        log_rows,
        columns=[
            "who",
            "when",
            "store",
            "memory",
            "unit",
            "old",
            "new",
            "old_label",
            "new_label",
            "suggested",
            "via",
        ],
    )
    s2.download_button(
        "Annotation log (CSV)",
        log_df.to_csv(index=False).encode("utf-8"),
        file_name=render.safe_filename(f"{wpkg.id}-{store_id}-annotation-log") + ".csv",
        mime="text/csv",
        key="w_ext_log_csv",
        on_click="ignore",
        icon=":material/download:",
    )
    if log_rows:
        st.dataframe(log_df.tail(20), hide_index=True, key="ext_log_tail")

    # ----------------------------------------------------------------------- across budgets
    st.subheader("Each store across budgets")
    budgets = tuple(sorted({*wpkg.budget_grid(), float(ctx.budget)}))
    curve = cached.union_curve(wpkg, whash, tuple(ids), budgets, salience_field, keep)
    render.chart(
        figures.union_curve_lines(
            curve,
            # In words, one line at 1024 px; the legend keeps the terms (speaker QA s46).
            union_curve_title(curve),
            unit,
            budget=ctx.budget,
            present=ctx.present,
            # Each store in its Budget sweep style (loaded exports come after the package's).
            order=store_options(wpkg),
        ),
        "ext_curve",
        f"{wpkg.id}-external-kept-vs-upper",
    )
    # The style words come from the figure's own line dicts (QA s40: the caption said "Grey
    # dotted" for OPT over the package candidates, drawn as a dark dash-dot line).
    style = figures.UNION_LINE_WORDS
    kept_s, upper_s = style["kept_value"], style["upper_value"]
    union_s, package_s = style["union_opt_value"], style["package_opt_value"]
    st.caption(
        f"{kept_s.capitalize()}: what each store keeps at the budget. {upper_s.capitalize()}: "
        f"the best it could keep from its own memories (exact). {union_s.capitalize()}, same "
        f"colour: the union optimum OPT over P+. The gap from {kept_s} to {upper_s} is "
        f"selection; from {upper_s} up to {union_s}, extraction. {package_s.capitalize()}: "
        "OPT over the package candidates. An x marks a budget below the store's smallest "
        "memory (cost effect)."
    )
    if curve.n_unproven:
        st.info(
            f"{curve.n_unproven} of {len(curve)} points rest on an optimum not proven within the "
            f"{cached.PAGE_TIME_S:g} s the curve's solves share: there the {upper_s}, {union_s} "
            f"and {package_s} lines show the best store found (at most the optimum); the "
            "table's `certified` column (in the CSV on a projector) says which."
        )
    for note in curve.notes:  # QA s45: a total far overrun was not said
        st.info(md_escape(note))
    curve_df = pd.DataFrame([r.to_dict() for r in curve])
    # On a projector: the current budget only, readable headers, 3 decimals (app QA: 21 rows of
    # snake_case headers and 6 decimals, 2,290 px tall). The CSV keeps every budget.
    present_df = pd.DataFrame(curve.present_rows(ctx.budget, unit))
    # The grid shows the names the chart and the metrics use (QA s20c: snake_case field names
    # such as union_opt_value); the CSV keeps the field names of the export format.
    number = st.column_config.NumberColumn
    render.table(
        curve_df,
        "ext_curve_table",
        f"{wpkg.id}-external-kept-vs-upper",
        present_df=present_df,
        column_config={
            "store_id": st.column_config.TextColumn("store id"),
            "label": st.column_config.TextColumn("store"),
            "budget": number(f"budget ({unit})", format="%g"),
            "kept_value": number("kept F(Y')", format="%.4g"),
            "upper_value": number("upper-pruned", format="%.4g"),
            # An unproven optimum is the best store found, not OPT (QA s45).
            "union_opt_value": number(union_opt_name(curve), format="%.4g"),
            "package_opt_value": number(union_opt_name(curve, package=True), format="%.4g"),
            "union_ratio": number("union ratio", format="%.3f"),
            "extraction": number("extraction", format="%.3f"),
            "selection": number("selection", format="%.3f"),
            "cost_effect": st.column_config.CheckboxColumn("cost effect"),
            "upper_bound": number("upper-pruned bound", format="%.4g"),
            "union_opt_bound": number("OPT over P+ bound", format="%.4g"),
            "min_memory_cost": number("smallest memory cost", format="%g"),
        },
    )
