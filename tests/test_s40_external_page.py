"""External stores (QA s40, annotator journey): what the page and the others say about this
session's annotations and loaded exports, the salience caption, the export uploader's label.

1. Annotations made on External stores were silently left out of Compare, the Evidence explorer
   and the Overview; each now says so for the store it scores, and External stores says they
   apply there only.
2. A loaded export (and its annotations) lives in the browser session only, and the URL still
   named the sidebar's store; the page now says both next to the store shown.
3. "salience" on a store without numeric salience claimed a salience selection.
4. The uploader's label did not name the OpenMemory backup files the mem0 importer reads.
"""

from __future__ import annotations

import json

from app_utils import open_app

DEMO = "sample:external-stores-demo"
PAGE = "pages/4_External_stores.py"

#: How the annotations are kept and used everywhere, as every notice ends.
KEEP = (
    "They live in this browser session only: the link does not carry them and a reload "
    "loses them. To use them on every page, download the annotated package on External "
    "stores (Save) and open it with the sidebar's upload."
)
#: What External stores says once mem0's 3 suggestions are confirmed.
HERE = (
    "**The 3 annotation decisions on `mem0` apply on this page only.** The Overview, Compare "
    "and the Evidence explorer score the store as loaded. " + KEEP
)
#: What Compare, the Evidence explorer and the Overview say then.
ELSEWHERE = (
    "**This session's annotations are not applied here.** The coverage annotations made on "
    "External stores for `mem0` (3 decisions) are scored there only; this page scores the "
    "store as loaded. " + KEEP
)
#: The editor's caption, from before the first edit on.
EDITOR_NOTE = (
    "Annotations apply on this page only and live in this browser session: not in the link, "
    "lost on reload. Download the annotated package (Save, below) and open it with the "
    "sidebar's upload to keep them and use them on every page."
)

#: A Mem0 export of two memories, each with a lexical suggestion in the demo package.
EXPORT = json.dumps(
    {
        "results": [
            {
                "id": "x1",
                "memory": "The user would like a window seat",
                "created_at": "2025-05-03T10:00:00Z",
            },
            {
                "id": "x2",
                "memory": "Ana is allergic to peanuts",
                "created_at": "2025-05-03T11:00:00Z",
            },
        ]
    }
).encode()


def _loaded_warning(tail: str) -> str:
    return (
        "**`mem0-2` is a loaded export: it lives in this browser session only.** No link can "
        "name it: this page's link names the sidebar's store, `store:letta`, and opens that "
        f"store, not this one. A reload loses this export {tail}. To keep them, download the "
        "annotated package (Save, below) and open it with the sidebar's upload; only then can "
        "the Overview, Compare and the Evidence explorer score it."
    )


def _page(store: str):
    at = open_app(PAGE, package=DEMO, budget="24", store=store)
    assert not at.exception, [e.value for e in at.exception]
    return at


def _infos(at) -> list[str]:
    return [i.value for i in at.info]


def _confirm(at, n: int):
    button = at.button(key="w_ext_confirm")
    assert button.label == f"Confirm all {n} suggestions"
    button.click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def test_external_stores_says_its_annotations_apply_there_only() -> None:
    at = _page("store:mem0")
    assert HERE not in _infos(at)  # nothing annotated yet
    (editor_caption,) = [c.value for c in at.caption if c.value.startswith("Choose full")]
    assert editor_caption.endswith(EDITOR_NOTE)
    _confirm(at, 3)
    assert HERE in _infos(at)


def test_compare_evidence_and_overview_say_the_annotations_are_not_applied() -> None:
    at = _page("store:mem0")
    at.switch_page("pages/2_Compare.py").run()
    assert ELSEWHERE not in _infos(at)  # nothing annotated yet
    at.switch_page(PAGE).run()
    _confirm(at, 3)
    for page in ("pages/2_Compare.py", "pages/3_Evidence_explorer.py", "app.py"):
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert ELSEWHERE in _infos(at), page
    # Another store, without annotations, is scored without the notice.
    at.switch_page("pages/2_Compare.py").run()
    at.selectbox(key="w_store").set_value("store:letta").run()
    assert not at.exception
    assert not [i for i in _infos(at) if "annotations are not applied" in i]


def test_a_loaded_export_says_it_is_in_no_link_and_a_reload_loses_it() -> None:
    at = _page("store:letta")
    at.file_uploader(key="w_ext_upload").set_value(("e.json", EXPORT, "application/json")).run()
    assert not at.exception and not at.error
    assert at.selectbox(key="w_ext_store").value == "mem0-2"
    assert at.query_params["store"] == "store:letta"  # what the warning names
    assert [w.value for w in at.warning] == [_loaded_warning("and any annotation of it")]
    _confirm(at, 2)
    assert [w.value for w in at.warning] == [_loaded_warning("and its 2 annotation decisions")]


def test_salience_without_numeric_salience_says_recency_is_used() -> None:
    at = _page("store:letta")
    at.radio(key="w_ext_keep").set_value("salience").run()
    assert not at.exception
    captions = [c.value for c in at.caption]
    assert (
        "No memory of this store has a numeric salience, so there is no salience selection: "
        "Y' here is the recency one, as on the Overview, Compare and the Evidence explorer."
    ) in captions
    assert not [c for c in captions if c.startswith("Y' here is the salience selection")]


def test_salience_with_numeric_salience_keeps_its_caption() -> None:
    """Regression guard (passes before the fix too): A-Mem's notes have a salience, so Y' is
    the salience selection and the caption says the other pages score recency's."""
    at = _page("store:amem")
    at.radio(key="w_ext_keep").set_value("salience").run()
    assert not at.exception
    captions = [c.value for c in at.caption]
    (caption,) = [c for c in captions if c.startswith("Y' here is the salience selection")]
    assert caption.startswith(
        "Y' here is the salience selection. The Overview, Compare and the Evidence explorer "
        "score the recency one (F = "
    )
    assert not [c for c in captions if c.startswith("No memory of this store")]


def test_the_export_uploader_names_the_openmemory_backup_files() -> None:
    at = _page("store:mem0")
    uploader = at.file_uploader(key="w_ext_upload")
    assert uploader.label == "Export file (.json, .af, .zip, .jsonl, .jsonl.gz; at most 50 MB)"
    assert uploader.help == (
        "Read by the importer of the chosen format. Under mem0: a Mem0 export, or an "
        "OpenMemory backup (the zip its export returns, memories.json, or memories.jsonl / "
        "memories.jsonl.gz). Pickles are refused; files above 50 MB are refused. The package "
        "file itself is never changed."
    )
