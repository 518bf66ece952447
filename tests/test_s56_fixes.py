"""Fifty-sixth session: two CLI texts left open by earlier sessions.

- ``memaudit show`` of a saved Compare view printed each "why this score" paragraph as one
  line of 200-400 characters; ``score`` wraps the same paragraphs at 100 columns.
- ``id_text`` cut an id by the columns of the id itself, not of what it prints: an id of
  zero-width characters was printed whole as hundreds of columns of escapes and said to be
  cut, and an id of combining marks only printed as nothing.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core.errors import display_width, id_text

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"


def _why_lines(out: str) -> list[str]:
    lines = out.splitlines()
    why = lines[lines.index("why this score") + 1 :]
    notes = [k for k, line in enumerate(why) if line.startswith("note: ")]
    return why[: notes[0]] if notes else why


@pytest.mark.parametrize(
    "name, budget, writer",
    [("veg-to-pescatarian", 12, "fact_only"), ("travel-assistant", 40, "gvt")],
)
def test_show_of_a_saved_compare_view_wraps_as_score_does(tmp_path, name, budget, writer):
    path = SAMPLES / f"{name}.json"
    view = ma.compare_view(ma.load_package(path), budget, writer=writer)
    saved = tmp_path / "view.json"
    saved.write_text(json.dumps(view.to_dict()), encoding="utf-8")
    rc, shown, err = run_cli("show", str(saved))
    assert (rc, err) == (0, "")
    rc, scored, err = run_cli("score", str(path), "--budget", str(budget), "--writer", writer)
    assert rc == 0, err
    why = _why_lines(shown)
    assert why == _why_lines(scored)
    assert max(display_width(line) for line in why) <= 100
    # Every paragraph is there, word for word.
    assert " ".join(" ".join(why).split()) == " ".join(" ".join(view.explanation).split())
    assert any(len(p) > 100 for p in view.explanation)  # so the wrap was needed


def test_id_text_escapes_invisible_ids():
    assert id_text("\u0301" * 3) == "'\\u0301\\u0301\\u0301'"  # combining marks only
    assert id_text("\u200b\u200b") == "'\\u200b\\u200b'"  # format characters only
    assert id_text("caf\u00e9") == "caf\u00e9"  # a visible id reads as itself
    assert id_text("cafe\u0301") == "cafe\u0301"


@pytest.mark.parametrize(
    argnames="value, kept",
    ids=["zero-width", "combining", "mixed"],
    argvalues=[
        ("\u200b" * 100, "\u200b" * 12),  # 12 escapes of 6 columns: 72 columns
        ("a" + "\u0301" * 10_000, "a" + "\u0301" * 143),  # 144 characters in the quotes
        ("z" + "\u200b" * 30, "z" + "\u200b" * 11),  # 1 + 66 columns, the next is 78
    ],
)
def test_id_text_cuts_by_what_it_prints(value, kept):
    shown = id_text(value)
    assert shown == repr(kept) + f"... ({len(value):,} characters)"
    assert display_width(shown) <= 100 and len(shown) <= 170


def test_id_text_says_cut_only_when_it_cut():
    rng = random.Random(56)
    alphabet = ["a", "Z", "7", "_", ":", "記", "ユ", "\u0301", "\u200b", "\n", " ", "'", "\\"]
    for _ in range(3_000):
        value = "".join(rng.choice(alphabet) for _ in range(rng.choice([1, 5, 40, 90, 300])))
        shown = id_text(value)
        assert display_width(shown) <= 100, (value, shown)
        assert len(shown) <= 170, (value, shown)
        if shown.endswith(f"... ({len(value):,} characters)"):
            start = shown[: -len(f"... ({len(value):,} characters)")]
            # A quoted proper start of the id: something was cut.
            cut = next(
                k for k in range(len(value) + 1) if start in (repr(value[:k]), ascii(value[:k]))
            )
            assert cut < len(value), (value, shown)
        else:
            assert shown in (value, repr(value), ascii(value)), (value, shown)


def _zero_width_package(tmp_path: Path) -> Path:
    """update_chain with every candidate and unit id followed by 20 zero-width spaces."""
    text = (SAMPLES / "update_chain.json").read_text("utf-8")
    doc = json.loads(text)
    ids = [c["id"] for c in doc["candidates"]] + [u["id"] for u in doc["units"]]
    for i, old in enumerate(sorted(ids, key=len, reverse=True)):
        text = text.replace(f'"{old}"', json.dumps(f"x{i}" + "\u200b" * 20, ensure_ascii=False))
    path = tmp_path / "zero-width.json"
    path.write_text(text, "utf-8")
    return path


def test_a_view_naming_zero_width_ids_reads_back_under_either_wording(tmp_path):
    view = ma.compare_view(ma.load_package(_zero_width_package(tmp_path)), 6, writer="density")
    doc = json.loads(json.dumps(view.to_dict()))
    assert doc["explanation_wording"] == 3
    assert ma.read_result(doc) == view
    missed = [r["unit_id"] for r in doc["unit_rows"] if r["missed"]]
    assert missed and any(id_text(u) in p for u in missed for p in doc["explanation"])
    # Wording 2 printed such an id whole, escaped, and called it cut (its 0 columns fit).
    before = json.loads(json.dumps(doc))
    for u in {r["unit_id"] for r in doc["unit_rows"]}:
        before["explanation"] = [
            p.replace(id_text(u), f"{u!r}... ({len(u)} characters)") for p in before["explanation"]
        ]
    assert before["explanation"] != doc["explanation"]
    # A file saved so by wording 2 still reads (held to its headline) ...
    old = {**before, "explanation_wording": 2}
    assert ma.read_result(old).explanation == tuple(before["explanation"])
    # ... and the same words claimed as today's wording are refused.
    with pytest.raises(ma.ResultError) as info:
        ma.read_result(before)
    assert info.value.path.startswith("$.explanation[")


# --------------------------------------------------------------------------- artifact uploads
ARTIFACT = Path(__file__).resolve().parent / "fixtures" / "importers" / "artifact_pkg"


def _zip_bytes(files: dict[str, bytes]) -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _artifact_files(**edits: bytes | None) -> dict[str, bytes]:
    files = {f.name: f.read_bytes() for f in sorted(ARTIFACT.iterdir())}
    for name, data in edits.items():
        name = name.replace("_jsonl", ".jsonl").replace("_json", ".json")
        if data is None:
            files.pop(name)
        else:
            files[name] = data
    return files


def _upload(name: str, data: bytes):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(SAMPLES.parent / "app.py"), default_timeout=120)
    at.query_params["package"] = "sample:update_chain"
    at.run()
    at.file_uploader(key="w_upload").upload(name, data, "application/zip").run()
    assert not at.exception
    return at


def test_the_sidebar_reads_an_artifact_zip_as_the_cli_does(tmp_path):
    # Without its manifest the package is named after the zip, as the CLI names it.
    data = _zip_bytes(_artifact_files(meta_json=None))
    path = tmp_path / "my artifact.zip"
    path.write_bytes(data)
    rc, out, err = run_cli("validate", str(path), "--json")
    assert rc == 0, err
    cli = ma.load_package(path)
    assert cli.id == "my-artifact"
    at = _upload("my artifact.zip", data)
    key = at.session_state["ma_package"]
    assert key.startswith("upload:") and not at.error
    from memaudit_ui.sources import load_by_key

    opened = load_by_key(key)
    assert (opened.id, opened.content_hash()) == (cli.id, cli.content_hash())
    (picker,) = [s for s in at.sidebar.selectbox if s.value == key]
    assert any(o.startswith("upload · my artifact.zip · ") for o in picker.options), picker.options


def test_a_bad_artifact_zip_upload_names_the_file_member_line_and_rule():
    lines = (ARTIFACT / "coverage_matrix.jsonl").read_text("utf-8").splitlines()
    row = json.loads(lines[2])
    row["value"] = 7
    lines[2] = json.dumps(row)
    bad = _zip_bytes(_artifact_files(coverage_matrix_jsonl=("\n".join(lines) + "\n").encode()))
    at = _upload("bad.zip", bad)
    assert at.session_state["ma_package"] == "sample:update_chain"  # the previous one stays
    shown = " ".join(e.value.replace("\\", "") for e in at.error)
    assert "bad.zip was not loaded" in shown, shown
    assert "bad.zip: coverage_matrix.jsonl:3.value: must be at most 1 (got 7)" in shown, shown
    assert "[rule: coverage-range]" in shown, shown


def test_a_zipped_package_upload_says_to_unzip_it():
    zipped = _zip_bytes({"update_chain.json": (SAMPLES / "update_chain.json").read_bytes()})
    at = _upload("packaged.zip", zipped)
    assert at.session_state["ma_package"] == "sample:update_chain"
    shown = " ".join(e.value.replace("\\", "") for e in at.error)
    assert "It holds 1 .json file(s) (update_chain.json): unzip it" in shown, shown
    assert "[rule: file-type]" in shown, shown


@pytest.mark.parametrize("name", ["../../escape.zip", "..", "dir\\sub\\win.zip", ""])
def test_an_upload_name_never_leaves_the_temporary_folder(tmp_path, monkeypatch, name):
    import tempfile

    from memaudit_ui import sources

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    key, pkg = sources.register_upload(name, _zip_bytes(_artifact_files()))
    assert key.startswith("upload:") and pkg.id == "artifact-veg"  # the manifest's id
    assert list(tmp_path.iterdir()) == []  # the copy read is gone, nothing written beside it


# --------------------------------------------------------------------------- warning paths
@pytest.mark.parametrize(
    "path",
    [
        "$",
        "$.units[3]",
        '$["Ann Lee"]',
        '$[0].observation.session_2_observation["Bo Lee"][2]',
        '$.meta["a: b"].c',
        '$.x["q\\" : (rule: y)"]',
    ],
)
def test_warning_parts_reads_back_every_path_a_warning_is_given(path):
    from memaudit_core.package import package_warning, warning_parts

    text = package_warning(path, 'a message: with "quotes" (and parentheses)', "some-rule")
    assert warning_parts(text) == {
        "path": path,
        "rule": "some-rule",
        "message": 'a message: with "quotes" (and parentheses)',
    }


def test_warning_parts_refuses_long_non_warnings_at_once():
    from memaudit_core.package import warning_parts

    # Shapes that would backtrack exponentially under nested quantifiers; each is not a
    # warning (no ": " after a path, or no rule).
    for text in ("$" + "a" * 20_000, "$" + '["a' * 5_000, "$" + "[0" * 5_000 + ": x (rule: a"):
        assert warning_parts(text) is None


def test_a_locomo_speaker_with_a_space_gives_a_readable_warning_path(tmp_path):
    from memaudit_core.importers.locomo import import_locomo
    from memaudit_core.package import warning_details

    doc = json.loads((ARTIFACT.parent / "locomo_small.json").read_text("utf-8"))
    observed = doc[0]["observation"]["session_2_observation"]
    observed["Bo Lee"] = [*observed.pop("Bo"), ["Bo Lee paints.", "D2:99"]]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(doc), "utf-8")
    pkg = import_locomo(path, instance=doc[0]["sample_id"])
    found = [d for d in warning_details(pkg.meta["warnings"]) if "D2:99" in d["message"]]
    assert found == [
        {
            "path": '$[0].observation.session_2_observation["Bo Lee"][2]',
            "rule": "evidence-unknown",
            "message": "evidence link D2:99 names no turn",
        }
    ]
