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
from dask_utils import local_cluster

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
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
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


@pytest.mark.parametrize(
    "name", ["../../escape.zip", "..", "dir\\sub\\win.zip", "", "記" * 100 + ".zip"]
)
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


# --------------------------------------------------------------------------- notebook saturations
_NOTEBOOK = """
import dataclasses, json, math
import numpy as np
import memaudit_core as ma
from memaudit_core.saturations import Saturation, register_saturation
from memaudit_core.suites import sweep_suite

def h(z):
    return np.log1p(2 * np.asarray(z, float))

def h1(z):
    return math.log1p(2 * z)

def attempt(fn):
    try:
        return fn()
    except ma.MemAuditError as exc:
        return "ERROR " + str(exc)

def table(res):
    return sorted((r.package_id, r.budget, r.method, r.value, r.opt) for r in res.rows)

register_saturation(Saturation("s56_nb", h, h1, "h(z) = ln(1 + 2z)", math.inf))
pkgs = [ma.generate("memaudit-small", seed=s) for s in range(3)]
out = {
    "sweep": [attempt(lambda w=w: table(ma.sweep(pkgs, [2, 4], ["gvt"], workers=w)))
              for w in (1, 2)],
    "suite": [attempt(lambda w=w: table(sweep_suite(families=["memaudit-small:0-2"],
                                                    budgets=[2, 4], writers=["gvt"],
                                                    workers=w)))
              for w in (1, 2)],
}
mixed = [*pkgs[:2], dataclasses.replace(pkgs[2], saturation="s56_nb")]
out["mixed"] = attempt(lambda: table(ma.sweep(mixed, [2], ["gvt"], workers=2)))
print(json.dumps(out))
"""


def test_a_notebooks_saturation_refuses_only_the_pools_that_use_it(tmp_path):
    """A saturation registered in a notebook (here ``python -c``) cannot reach worker
    processes; a sweep or suite that does not use it runs on them (s56: it was refused)."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", _NOTEBOOK],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(root)},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    out = json.loads(done.stdout)
    for key in ("sweep", "suite"):
        one, two = out[key]
        assert isinstance(one, list) and len(one) == 6, one
        assert two == one, (key, two)
    assert out["mixed"].startswith("ERROR saturation 's56_nb' is defined in __main__"), out
    assert "workers=1" in out["mixed"]


@pytest.fixture
def unsent_nb():
    from memaudit_core import saturations

    yield
    saturations.UNSENDABLE_SATURATIONS.pop("nb", None)


def test_a_worker_names_why_a_saturation_was_not_sent(unsent_nb):
    """In a worker, a package naming a saturation its parent could not send is refused with
    the parent's reason, where it read "unknown saturation"."""
    from memaudit_core import saturations
    from memaudit_core.errors import PackageError, UnknownNameError
    from memaudit_core.package import package_to_dict, parse_package

    reason = "saturation 'nb' is defined in __main__ (a notebook ...)"
    saturations.install_saturations((), (("nb", reason),))
    with pytest.raises(ma.MemAuditError, match=r"defined in __main__") as info:
        saturations.get_saturation("nb")
    assert not isinstance(info.value, UnknownNameError)
    doc = package_to_dict(ma.generate("update_chain"))
    doc["objective"] = {"saturation": "nb"}
    with pytest.raises(PackageError) as info:
        parse_package(doc, "pkg.json")
    (problem,) = [p for p in info.value.problems if p.path == "$.objective.saturation"]
    assert (problem.rule, problem.message) == ("known-saturation", reason)
    with pytest.raises(UnknownNameError, match="unknown saturation 'other'"):
        saturations.get_saturation("other")


# --------------------------------------------------------------------------- Dask and artifacts
@pytest.fixture(scope="module")
def dask_scheduler():
    """A local Dask cluster of one worker process."""
    with local_cluster() as address:
        yield address


def test_a_dask_suite_sweeps_an_artifact_zip_as_one_process_does(tmp_path, dask_scheduler):
    from memaudit_core.suites import sweep_suite

    zipped = tmp_path / "veg.zip"
    zipped.write_bytes(_zip_bytes(_artifact_files()))
    plain = tmp_path / "chain.json"
    plain.write_bytes((SAMPLES / "update_chain.json").read_bytes())
    kw = {"paths": [str(zipped), str(plain)], "budgets": [4, 8], "writers": ["gvt", "density"]}
    alone = sweep_suite(**kw)
    on_dask = sweep_suite(**kw, scheduler=dask_scheduler)

    def table(res):
        return sorted((r.package_id, r.budget, r.method, r.value, r.opt) for r in res.rows)

    assert not alone.errors and not on_dask.errors, (alone.errors, on_dask.errors)
    assert {r.package_id for r in on_dask.rows} == {"artifact-veg", "update_chain"}
    assert table(on_dask) == table(alone) and len(table(alone)) == 8
    # A broken zip is still one located problem, listed like any other.
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(ma.MemAuditError, match=r"bad\.zip"):
        sweep_suite(paths=[str(bad)], budgets=[4], writers=["gvt"], scheduler=dask_scheduler)


# --------------------------------------------------------------------------- imports
def test_compare_score_and_the_apps_modules_import_without_networkx():
    """networkx (0.2 s) loads with the Evidence explorer's graph, not with explain: `score`,
    the Compare page and every app start imported it for nothing."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import memaudit_core as ma, memaudit_core.explain, memaudit_core.cli\n"
        "import memaudit_ui.frame, memaudit_ui.render, memaudit_ui.figures, memaudit_ui.cached\n"
        "print('networkx' in sys.modules)\n"
        "pkg = ma.generate('update_chain')\n"
        "ma.compare_view(pkg, 6, writer='density')\n"
        "print('networkx' in sys.modules)\n"
        "view = ma.evidence_view(pkg, 6, writer='density')\n"
        "print('networkx' in sys.modules, view.graph.n_nodes > 0)\n"
    )
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    ).stdout.split()
    assert out == ["False", "False", "True", "True"]


def test_an_artifact_zip_upload_is_capped_by_what_it_unpacks_to(tmp_path, monkeypatch):
    """A 50 MB zip of tables unpacks to about 500 MB: the upload cap holds for the unpacked
    size, and the server's upload registry counts that size."""
    import tempfile

    from memaudit_core.errors import PackageError
    from memaudit_ui import sources

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    files = _artifact_files()
    padded = {**files, "notes.txt": b" " * 200_000}  # compresses to almost nothing
    data = _zip_bytes(padded)
    unpacked = sum(len(v) for v in padded.values())
    assert len(data) < 0.1e6 < unpacked
    with pytest.raises(PackageError) as info:
        sources.register_upload("big.zip", data, max_mb=0.1)
    (problem,) = info.value.problems
    assert (problem.path, problem.rule) == ("$", "upload-size")
    assert f"the zip unpacks to {unpacked / 1e6:.1f} MB" in problem.message
    assert list(tmp_path.iterdir()) == []  # refused before anything was written
    registry = sources.UploadRegistry()
    monkeypatch.setattr(sources, "_upload_registry", lambda: registry)
    key, _pkg = sources.register_upload("big.zip", data, max_mb=1)
    assert registry._held[key.split(":", 1)[1]][1] == unpacked
