"""This session's coverage annotations (made on External stores), as other pages see them.

The External stores page keeps each store's annotation decisions in session state under
``ma_ann_logs``, keyed ``"<package content hash>:<store id>"``, and scores the store with
them. The Overview, Compare and the Evidence explorer score the package as loaded: applying
session-only edits there would make their scores differ from what their own link reproduces
(the link names the package file, not this session's edits). So those pages say when the
store they score has annotations they do not apply (QA s40, annotator journey defect 1).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import streamlit as st

from memaudit_core.package import Package, Store
from memaudit_ui.frame import md_code_span

#: Session-state key of the External stores page's annotation logs.
LOGS_KEY = "ma_ann_logs"

#: How the annotations are kept and used everywhere (shared by every notice).
KEEP_THEM = (
    "They live in this browser session only: the link does not carry them and a reload "
    "loses them. To use them on every page, download the annotated package on External "
    "stores (Save) and open it with the sidebar's upload."
)


def session_annotation_counts(package: Package) -> dict[str, int]:
    """Store id -> number of this session's annotation decisions, for the package's stores
    that have any (loaded exports are not the package's: no other page shows them)."""
    logs = st.session_state.get(LOGS_KEY) or {}
    if not logs:
        return {}
    phash = package.content_hash()
    out: dict[str, int] = {}
    for store in package.stores:
        n = len(logs.get(f"{phash}:{store.id}") or ())
        if n:
            out[store.id] = n
    return out


def not_applied_notice(package: Package, store_ids: Iterable[str | None]) -> str | None:
    """The Markdown notice for a page that scores ``store_ids`` (None: a writer, skipped)
    without this session's annotations, or None when none of them has any."""
    counts = session_annotation_counts(package)
    shown = [sid for sid in dict.fromkeys(store_ids) if sid is not None and sid in counts]
    if not shown:
        return None
    named = ", ".join(
        f"{md_code_span(sid)} ({counts[sid]} decision{'' if counts[sid] == 1 else 's'})"
        for sid in shown
    )
    which = "the store" if len(shown) == 1 else "the stores"
    return (
        f"**This session's annotations are not applied here.** The coverage annotations made "
        f"on External stores for {named} are scored there only; this page scores {which} as "
        f"loaded. {KEEP_THEM}"
    )


def store_id_of(store_key: str) -> str | None:
    """The store id a sidebar key ``store:<id>`` names, else None (a writer).

    >>> store_id_of("store:mem0"), store_id_of("writer:greedy")
    ('mem0', None)
    """
    kind, _, name = store_key.partition(":")
    return name if kind == "store" else None


def replaced_import(imports: dict[str, dict[str, Any]], key: tuple[Any, ...]) -> str | None:
    """The loaded store that uploads ``key`` (export digest, history digest or None, format,
    cost rule) replace: when ``key`` carries a history, the store of the same export, format
    and cost rule read without one; else None.

    A history changes what an export's store is (its deleted memories left out), so the bare
    reading is stale: QA s46 saw both as two stores, both in Compare and the annotated
    package, nothing saying which was current. Readings with different histories stay side by
    side, each labelled with its history (QA s40), as do other cost rules (a deliberate other
    costing).

    >>> imports = {"mem0": {"digest": ("e1", None, "mem0", "words"), "store": None}}
    >>> replaced_import(imports, ("e1", "h1", "mem0", "words"))
    'mem0'
    >>> replaced_import(imports, ("e1", "h1", "mem0", "chars")) is None
    True
    """
    digest, hdigest, fmt, rule = key
    if hdigest is None:
        return None
    bare = (digest, None, fmt, rule)
    return next((sid for sid, item in imports.items() if tuple(item["digest"]) == bare), None)


def replace_import(
    imports: dict[str, dict[str, Any]],
    logs: dict[str, list[dict[str, Any]]],
    log_key: str,
    store_id: str,
    key: tuple[Any, ...],
    store: Store,
) -> None:
    """Put ``store`` (loaded from uploads ``key``) in ``imports`` under ``store_id``, in place
    of the store it replaces there (:func:`replaced_import`), if any.

    The replaced store's annotation decisions (``logs[log_key]``) stay with the id for the
    memories ``store`` holds; those on memories it no longer holds (deleted by the history)
    are dropped, and ``imports[store_id]["replaced"]`` says so (Markdown), with what was
    replaced: decisions on an absent memory would stop the page.
    """
    old = imports.get(store_id)
    note = ""
    if old is not None:
        note = " It replaces the store loaded before from the same export without a history."
        held = {m.id for m in store.memories}
        decisions = logs.get(log_key, [])
        kept = [d for d in decisions if d.get("memory") in held]
        if len(kept) < len(decisions):
            logs[log_key] = kept
            dropped = len(decisions) - len(kept)
            note += (
                f" {dropped} annotation decision{'' if dropped == 1 else 's'} on memories "
                f"this store no longer holds {'was' if dropped == 1 else 'were'} dropped."
            )
    imports[store_id] = {"digest": key, "store": store, "replaced": note}
