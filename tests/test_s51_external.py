"""QA s51, "external": Mem0 / Zep exports scored against a package (CLI + External stores).

1. Loaded exports could not be told apart: every import was "Mem0 export" or "Zep / Graphiti
   export" with an id such as ``mem0-3``; the file name appeared nowhere. A store is now
   labelled by its system and file (cut in the middle when long); ``--label`` and the page's
   label box name it.
2. Re-opening the downloaded annotated package with the export still in the page's uploader
   imported it again as an unannotated duplicate, shown in place of the saved store.
3. Zep ``episodes`` / ``nodes`` that were no arrays were skipped without a word (F = 0).
5. Zep's ``known-unit`` message listed Mem0's link keys; following it gave F = 0 unsaid.
6. A Mem0 history left in its box was read with the next (other) Mem0 export.
8. The union chart's budget axis ran into negative budgets with a small budget.
9. The fifth store on that chart was black with octagons: the package OPT line's colour and
   the "kept" key's round marker.
11. The CLI said "0 superseded kept" where the app said "1 superseded version" of one import.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_utils import capture_downloads, open_app, upload_file
from cli_utils import run_cli
from note_utils import message
from test_s40_history_upload import EXPORT, HISTORY
from test_s47_cvd import _delta_e

from memaudit_core.errors import PackageError
from memaudit_core.importers import load_external_store
from memaudit_core.package import load_package
from memaudit_core.palette import EXTRA_SYMBOLS, METHOD_PALETTE, OPT_COLOR, slot_style

PACKAGE = "sample:veg-to-pescatarian"
PAGE = "pages/4_External_stores.py"
PKG_FILE = Path(__file__).resolve().parents[1] / "sample_packages" / "veg-to-pescatarian.json"
#: Two Zep facts, linked to units of veg-to-pescatarian.
ZEP = json.dumps(
    {
        "edges": [
            {
                "uuid": "z1",
                "fact": "User now eats fish",
                "created_at": "2025-05-01T10:00:00Z",
                "attributes": {"unit_ids": ["u:meal:current"]},
            },
            {"uuid": "z2", "fact": "User sits by the window", "attributes": {"unit_ids": "u:seat"}},
        ]
    }
).encode()
#: A Mem0 export that shares no memory with EXPORT (m1) or its HISTORY (m1, m2).
OTHER = json.dumps({"results": [{"id": "o1", "memory": "User likes window seats"}]}).encode()


def _write(tmp_path: Path, name: str, data: bytes | object) -> Path:
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode())
    return path


def _plain(text: str) -> str:
    return text.replace("\\", "").replace("\u2060", "")


def _upload(at, key: str, name: str, data: bytes):
    at.file_uploader(key=key).set_value((name, data, "application/octet-stream")).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _legend(at) -> set[str]:
    (chart,) = [c for c in at.get("plotly_chart") if "upper-pruned" in c.proto.spec]
    return {t.get("name") for t in json.loads(chart.proto.spec)["data"]}


# --------------------------------------------------------------------------- 1. labels


def test_an_export_is_labelled_by_its_system_and_file(tmp_path) -> None:
    pkg = load_package(PKG_FILE)
    path = _write(tmp_path, "mem0_v1_list.json", EXPORT)
    assert load_external_store(path, "mem0", package=pkg).label == "Mem0 · mem0_v1_list.json"
    zep = _write(tmp_path, "zep_graphiti.json", ZEP)
    assert load_external_store(zep, "zep", package=pkg).label == "Zep · zep_graphiti.json"
    # A long name is cut in the middle: its start and its extension stay, short for a legend.
    long_name = "locomo-conv-26-mem0-platform-export-user-17-run-2025-04-02.json"
    label = load_external_store(_write(tmp_path, long_name, EXPORT), "mem0").label
    assert label.startswith("Mem0 · locomo-conv") and label.endswith("04-02.json"), label
    assert "…" in label and len(label) <= 40, label
    named = load_external_store(path, "mem0", label="v1 run", store_id="a")
    assert (named.id, named.label) == ("a", "v1 run")


def test_cli_label_and_store_id_name_the_store(tmp_path) -> None:
    src = _write(tmp_path, "run3.json", EXPORT)
    out = tmp_path / "out.json"
    argv = ["import", "mem0", str(src), "--package", str(PKG_FILE), "-o", str(out)]
    rc, _, err = run_cli(*argv, "--store-id", "run3")
    assert rc == 0, err
    assert "external store 'run3' (Mem0 · run3.json) from" in err
    (store,) = [s for s in load_package(out).stores if s.id == "run3"]
    assert store.label == "Mem0 · run3.json"
    rc, _, err = run_cli(*argv, "--store-id", "run3", "--label", "Mem0 run 3 (gpt-4o)")
    assert rc == 0, err
    (store,) = [s for s in load_package(out).stores if s.id == "run3"]
    assert store.label == "Mem0 run 3 (gpt-4o)"
    rc, out_json, err = run_cli(
        "score", str(PKG_FILE), "--external", str(src), "--format", "mem0", "--label", "B",
        "--json",
    )  # fmt: skip
    assert rc == 0, err
    result = json.loads(out_json)
    assert result["label"] == "B" and result["external_store"]["label"] == "B"
    rc, _, err = run_cli("import", "locomo", str(src), "-o", str(out), "--label", "x")
    assert rc != 0 and "--label does not apply to the locomo format" in err


def test_the_page_names_each_loaded_export_by_its_file_and_lets_it_be_renamed() -> None:
    at = open_app(PAGE, package=PACKAGE)
    _upload(at, "w_ext_upload", "a.json", EXPORT)
    _upload(at, "w_ext_upload", "b.json", OTHER)
    options = at.selectbox(key="w_ext_store").options
    assert "mem0 · Mem0 · a.json (loaded export)" in options, options
    assert "mem0-2 · Mem0 · b.json (loaded export)" in options, options
    assert {"Mem0 · a.json", "Mem0 · b.json"} <= _legend(at)
    (success,) = [_plain(s.value) for s in at.success]
    assert success.startswith("Loaded as store `mem0-2` (Mem0 · b.json): 1 memory"), success
    # The label box renames the store shown; its id stays.
    at.text_input(key="w_ext_label_mem0-2").set_value("Mem0 run B").run()
    assert not at.exception
    assert "mem0-2 · Mem0 run B (loaded export)" in at.selectbox(key="w_ext_store").options
    assert "Mem0 run B" in _legend(at)


# --------------------------------------------------------------------------- 2. re-open


def test_reopening_the_annotated_package_does_not_import_its_export_again(monkeypatch) -> None:
    offered = capture_downloads(monkeypatch)
    at = open_app(PAGE, package=PACKAGE)
    at.selectbox(key="w_ext_format").set_value("zep").run()
    _upload(at, "w_ext_upload", "zep_graphiti.json", ZEP)
    assert at.selectbox(key="w_ext_store").value == "zep"
    saved = offered["w_ext_save"]["data"]
    # The page's advice: open the download with the sidebar's upload (the export stays in the
    # page's uploader).
    upload_file(at, "annotated.json", saved)
    assert not at.exception, [e.value for e in at.exception]
    imports = at.session_state["ma_ann_imports"]
    phash = load_package(PKG_FILE).content_hash()
    new = {h: ids for h, ids in imports.items() if h != phash}
    assert all(not ids for ids in new.values()), new  # nothing imported into the new package
    box = at.selectbox(key="w_ext_store")
    assert box.value == "zep" and not any(o.startswith("zep-2") for o in box.options), box.options
    (info,) = [_plain(i.value) for i in at.info if "already in this package" in i.value]
    assert "**zep_graphiti.json is already in this package** as store `zep`" in info, info
    assert not [w for w in at.warning if "is a loaded export" in w.value]


# --------------------------------------------------------------------------- 3, 5. Zep


@pytest.mark.parametrize(
    ("key", "value", "got"),
    [("episodes", {"ep1": {"uuid": "ep1"}}, "object"), ("nodes", "n1", "string")],
)
def test_zep_episodes_or_nodes_that_are_no_array_are_refused(tmp_path, key, value, got) -> None:
    doc = json.loads(ZEP)
    doc[key] = value
    with pytest.raises(PackageError) as err:
        load_external_store(_write(tmp_path, "z.json", doc), "zep")
    (problem,) = err.value.problems
    assert (problem.path, problem.rule) == (f"$.{key}", "type")
    assert f"'{key}' must be an array (got '{got}')" in problem.format("z.json")


def test_zep_known_unit_names_the_keys_zep_reads_and_an_unread_key_is_warned_of(tmp_path) -> None:
    pkg = load_package(PKG_FILE)
    doc = {"edges": [{"uuid": "z1", "fact": "Eats fish", "attributes": {"unit_ids": ["u:nope"]}}]}
    with pytest.raises(PackageError) as err:
        load_external_store(_write(tmp_path, "z.json", doc), "zep", package=pkg)
    (problem,) = err.value.problems
    assert problem.rule == "known-unit"
    assert "unit_ids, dia_id, dia_ids, evidence_ids" in problem.message, problem.message
    assert "unit_id, unit" not in problem.message, problem.message
    # Following Mem0's keys (unit, units) gives no coverage: said, naming the key Zep reads.
    doc = {
        "edges": [
            {"uuid": "z1", "fact": "Sits by the window", "attributes": {"unit": "u:seat"}},
            {"uuid": "z2", "fact": "Eats fish", "attributes": {"units": ["x", "u:meal:current"]}},
            {"uuid": "z3", "fact": "Weighs 3", "attributes": {"unit": "kg"}},  # a fact, unsaid
        ]
    }
    store = load_external_store(_write(tmp_path, "z.json", doc), "zep", package=pkg)
    (warning,) = [message(w) for w in store.meta["warnings"] if "not read as a link" in w]
    assert warning.startswith("2 edge attribute(s) name a unit of the package"), warning
    assert "$.edges[0].attributes.unit = 'u:seat'" in warning and "unit_ids" in warning


# --------------------------------------------------------------------------- 6. history


def test_a_history_is_not_read_with_another_export_than_its_own() -> None:
    at = open_app(PAGE, package=PACKAGE)
    _upload(at, "w_ext_history", "h.json", HISTORY)
    _upload(at, "w_ext_upload", "e.json", EXPORT)
    (success,) = [_plain(s.value) for s in at.success]
    assert "with history h.json" in success
    # Another export, the history still in its box: not read with it, and said.
    _upload(at, "w_ext_upload", "other.json", OTHER)
    (success,) = [_plain(s.value) for s in at.success]
    assert success.startswith("Loaded as store `mem0-2` (Mem0 · other.json): 1 memory"), success
    assert "history" not in success and "deleted" not in success, success
    (warning,) = [_plain(w.value) for w in at.warning if "h.json" in _plain(w.value)]
    assert "is **not read** with other.json: it was uploaded with the export e.json" in warning
    ((_, imports),) = at.session_state["ma_ann_imports"].items()
    assert "history_file" not in imports["mem0-2"]["store"].meta
    # Uploaded again, the history is read with the export then shown.
    _upload(at, "w_ext_history", "h.json", HISTORY)
    (success,) = [_plain(s.value) for s in at.success]
    assert "with history h.json" in success, success


def test_a_history_none_of_whose_memories_is_in_the_export_is_not_called_truncation(
    tmp_path,
) -> None:
    store = load_external_store(
        _write(tmp_path, "other.json", OTHER), "mem0", history=_write(tmp_path, "h.json", HISTORY)
    )
    text = " ".join(store.meta["warnings"])
    assert "does not seem to belong to this export" in text, text
    assert "probably truncated" not in text, text


# --------------------------------------------------------------------------- 8, 9. chart


def _rows(stores: list[str], budgets: list[float]):
    from memaudit_core.union import UnionCurveRow

    return [
        UnionCurveRow(sid, f"Mem0 · {sid}.json", "mem0", b, 1.0, 2.0, 3.0, 3.0, 0.3, 0.6, 0.5,
                      b < 12, True, min_memory_cost=12.0)
        for sid in stores
        for b in budgets
    ]  # fmt: skip


def test_the_union_chart_budget_axis_starts_at_0_with_a_small_budget() -> None:
    from memaudit_ui.figures import union_curve_lines

    fig = union_curve_lines(_rows(["a", "b"], [10, 20, 40, 120]), "t", "words", budget=11)
    low, high = fig.layout.xaxis.range
    assert low == 0 and high >= 120, (low, high)
    # The budget's label sits right of its line when the line is near the axis's start.
    (note,) = [a for a in fig.layout.annotations if a.text == "budget 11 words"]
    assert note.xanchor == "left", note


def test_no_store_is_drawn_in_a_reference_line_s_colour_or_a_round_marker() -> None:
    from memaudit_ui.figures import PACKAGE_OPT_LINE, union_curve_lines

    # Every store slot (past the reference writers'): far from the package OPT black and the
    # OPT blue, and never a round marker like the "kept" key.
    for slot in range(len(METHOD_PALETTE), len(METHOD_PALETTE) + 64):
        colour, symbol = slot_style(slot)
        for ref in (PACKAGE_OPT_LINE["color"], OPT_COLOR, "#000000"):
            assert _delta_e(colour, ref, "normal") >= 20, (slot, colour, ref)
        assert symbol not in ("circle", "octagon"), (slot, symbol)
    assert "octagon" not in EXTRA_SYMBOLS
    # The QA's chart: seven stores, the fifth one on was black with octagons.
    stores = [f"s{k}" for k in range(9)]
    fig = union_curve_lines(_rows(stores, [10, 40]), "t", "words", order=[])
    keys = [t for t in fig.data if t.legendgroup in stores and t.showlegend is not False]
    assert len(keys) == 9
    for trace in keys:
        assert trace.line.color.lower() not in ("#000000", "#222222"), trace.name
        assert trace.marker.symbol not in ("circle", "octagon"), trace.name


# --------------------------------------------------------------------------- 11. counts

#: What EXPORT with HISTORY kept and left out, in the CLI's and the app's words.
COUNTS = "0 superseded kept, 1 earlier version replaced by an update (not kept), 1 deleted not kept"


def test_cli_and_app_say_one_count_of_superseded_versions(tmp_path) -> None:
    src, hist = _write(tmp_path, "e.json", EXPORT), _write(tmp_path, "h.json", HISTORY)
    argv = ["score", str(PKG_FILE), "--external", str(src), "--format", "mem0"]
    rc, out, err = run_cli(*argv, "--history", str(hist))
    assert rc == 0, err
    assert f"costed by words, {COUNTS} (m2); coverage" in out.splitlines()[0], out
    rc, out, err = run_cli(*argv, "--history", str(hist), "--json")
    summary = json.loads(out)["external_store"]
    assert (summary["superseded"], summary["superseded_versions"], summary["deleted"]) == (0, 1, 1)
    at = open_app(PAGE, package=PACKAGE)
    _upload(at, "w_ext_history", "h.json", HISTORY)
    _upload(at, "w_ext_upload", "e.json", EXPORT)
    (success,) = [_plain(s.value) for s in at.success]
    assert f"{COUNTS} (m2)" in success, success
