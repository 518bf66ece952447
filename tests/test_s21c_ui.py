"""QA s21c: the app's upload registry is bounded, the Compare page's unit table puts what a
reader needs first, and the seed-band help tells an edited upload from a generated package.

Expected values are hand-computed (the eviction sequences), come from the package files the
tests write themselves (which units they edited), or from the generator called here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_utils import open_app, upload_file
from streamlit.testing.v1 import AppTest

from memaudit_ui import sources

REPO = Path(__file__).resolve().parent.parent


def _variant(cost_factor: float) -> bytes:
    """update_chain under one id, its costs scaled: distinct bytes, distinct uploads."""
    doc = json.loads((REPO / "sample_packages" / "update_chain.json").read_text())
    doc["id"] = "qa-s21c"
    for cand in doc["candidates"]:
        cand["cost"] = cand["cost"] * cost_factor
    return json.dumps(doc).encode()


_app = open_app


# --------------------------------------------------------------------------- upload registry


class _Pkg:
    """Stands in for a package: the registry stores and returns it, nothing else."""

    def __init__(self, name: str) -> None:
        self.id = name


def test_the_upload_registry_drops_the_least_recently_used_beyond_its_count() -> None:
    reg = sources.UploadRegistry(max_count=3, max_bytes=10**9)
    pkgs = {d: _Pkg(d) for d in "abcde"}
    for digest in "abc":
        reg.add(digest, pkgs[digest], 1)
    assert reg.get("a") is pkgs["a"]  # a use: order of use is now b, c, a
    reg.add("d", pkgs["d"], 1)  # four held: b, the least recently used, goes
    assert reg.keys() == ["c", "a", "d"]
    assert reg.get("b") is None and reg.was_evicted("b")
    assert reg.peek("c") is pkgs["c"]  # a label, not a use: c is still the oldest
    reg.add("e", pkgs["e"], 1)
    assert reg.keys() == ["a", "d", "e"]
    assert reg.was_evicted("c") and not reg.was_evicted("a") and not reg.was_evicted("zz")


def test_the_upload_registry_drops_the_least_recently_used_beyond_its_bytes() -> None:
    reg = sources.UploadRegistry(max_count=100, max_bytes=100)
    pkgs = {d: _Pkg(d) for d in "abcdef"}
    reg.add("a", pkgs["a"], 40)
    reg.add("b", pkgs["b"], 40)
    reg.get("a")
    reg.add("c", pkgs["c"], 30)  # 110 > 100: b (40) goes, 70 left
    assert reg.keys() == ["a", "c"] and reg.held_bytes() == 70
    reg.add("d", pkgs["d"], 95)  # 165: a (40) leaves 125, c (30) leaves 95
    assert reg.keys() == ["d"] and reg.held_bytes() == 95
    # The newest upload is held even alone above the limit (the upload cap keeps it sane).
    reg.add("e", pkgs["e"], 150)
    assert reg.keys() == ["e"] and reg.held_bytes() == 150
    # The same digest again: the package stored first stays (QA s20a) and is now the newest.
    reg = sources.UploadRegistry(max_count=2, max_bytes=100)
    reg.add("a", pkgs["a"], 10)
    reg.add("b", pkgs["b"], 10)
    assert reg.add("a", pkgs["f"], 10) is pkgs["a"]
    reg.add("c", pkgs["c"], 10)
    assert reg.keys() == ["a", "c"] and reg.held_bytes() == 20


def test_a_dropped_upload_can_be_registered_again() -> None:
    reg = sources.UploadRegistry(max_count=1, max_bytes=100)
    pkgs = {d: _Pkg(d) for d in "ab"}
    reg.add("a", pkgs["a"], 10)
    reg.add("b", pkgs["b"], 10)
    assert reg.was_evicted("a")
    reg.add("a", pkgs["a"], 10)
    assert reg.keys() == ["a"] and not reg.was_evicted("a") and reg.was_evicted("b")


def test_the_app_holds_a_bounded_number_of_uploads(monkeypatch) -> None:
    """Before: every distinct upload stayed for the server's life."""
    monkeypatch.setattr(sources, "MAX_HELD_UPLOADS", 2, raising=False)
    keys = [sources.register_upload(f"v{i}.json", _variant(1 + i))[0] for i in range(1, 5)]
    digests = [k.partition(":")[2] for k in keys]
    with pytest.raises(sources.MemAuditError, match="upload the file again"):
        sources.load_by_key(keys[0])
    # The two most recent are held.
    assert sources.load_by_key(keys[3]).id == "qa-s21c"
    assert sources.load_by_key(keys[2]).id == "qa-s21c"
    assert all(sources.describe_key(k).startswith("upload") for k in keys)
    assert digests[0] not in sources._upload_registry().keys()


def _plain(markdown: str) -> str:
    """Markdown as read: without escapes, the word joiners that break emoji shortcodes and the
    backticks of code spans."""
    return markdown.replace("\u2060", "").replace("\\", "").replace("`", "")


def _dropped_upload_errors(at: AppTest) -> list[str]:
    return [_plain(e.value) for e in at.error if "no longer holds that upload" in e.value]


def test_a_link_to_a_dropped_upload_gets_an_error_and_says_what_it_shows(monkeypatch) -> None:
    monkeypatch.setattr(sources, "MAX_HELD_UPLOADS", 1, raising=False)
    first, second = _variant(3.0), _variant(5.0)
    key_first = upload_file(_app(), "first.json", first)
    upload_file(_app(), "second.json", second)  # another session: the first upload is dropped

    at = _app(package=key_first)
    assert not at.exception, [e.value for e in at.exception]
    (message,) = _dropped_upload_errors(at)
    assert key_first in message
    assert "dropped to make room for newer uploads" in message
    assert "upload the file again" in message
    # Not a silent switch: the message names what the page shows instead, and so does the URL.
    fallback = sources.default_package_key()
    assert f"Showing {fallback}" in message
    assert at.session_state["ma_package"] == fallback
    assert at.query_params["package"] == fallback


def test_a_link_to_an_upload_this_server_never_held_says_so() -> None:
    at = _app(package="upload:0123456789abcdef")
    assert not at.exception, [e.value for e in at.exception]
    (message,) = _dropped_upload_errors(at)
    assert "uploads last only while the server that received them runs" in message
    assert "upload the file again" in message


def test_a_session_whose_upload_was_dropped_keeps_it_or_gets_the_error(monkeypatch) -> None:
    monkeypatch.setattr(sources, "MAX_HELD_UPLOADS", 1, raising=False)
    mine = _app()
    key_mine = upload_file(mine, "mine.json", _variant(7.0))
    upload_file(_app(), "theirs.json", _variant(9.0))  # another session drops mine
    # The session keeps working on its latest upload, on this page and on the next.
    mine.run()
    assert not mine.exception and not mine.error, [e.value for e in mine.error]
    assert mine.session_state["ma_package"] == key_mine
    upload_file(_app(), "theirs-again.json", _variant(10.0))
    mine.switch_page("pages/2_Compare.py").run()
    assert not mine.exception and not mine.error, [e.value for e in mine.error]
    assert mine.session_state["ma_package"] == key_mine
    mine.switch_page("app.py").run()
    # A newer upload of its own drops it (only the latest is kept), and the session picks it.
    upload_file(mine, "mine-v2.json", _variant(11.0))
    picker = mine.selectbox(key="w_package")
    picker.set_value(key_mine).run()
    assert not mine.exception, [e.value for e in mine.exception]
    (message,) = _dropped_upload_errors(mine)
    assert "mine.json" in message and "upload the file again" in message
    # The picker no longer offers the dropped upload.
    digest_start = key_mine.partition(":")[2][:8]
    assert not any(digest_start in o for o in mine.selectbox(key="w_package").options)


# --------------------------------------------------------------------------- seed-band help

SWEEP = "pages/1_Budget_sweep.py"


def _generated_doc(seed: int = 3) -> dict:
    from memaudit_core.generators import generate
    from memaudit_core.package import package_to_dict

    return package_to_dict(generate("memaudit-small", seed=seed))


def _edited(doc: dict) -> dict:
    """``doc`` edited by hand: the first unit's weight changed, the meta left as generated."""
    doc = json.loads(json.dumps(doc))
    doc["units"][0]["weight"] = doc["units"][0]["weight"] * 2 + 1
    return doc


def test_family_origin_tells_an_edited_package_from_the_generated_one() -> None:
    from memaudit_core.curves import family_origin
    from memaudit_core.package import parse_package

    doc = _generated_doc()
    same = family_origin(parse_package(json.loads(json.dumps(doc)), "generated.json"))
    assert same.regenerates is True and same.band_scope() is None
    assert same.seed_band_help().startswith("This package was generated by memaudit-small")
    edited = family_origin(parse_package(_edited(doc), "edited.json"))
    assert edited.regenerates is False
    assert (edited.source.family, edited.source.seed) == ("memaudit-small", 3)
    assert "differs" in edited.seed_band_help() and "was generated by" not in (
        edited.seed_band_help()
    )
    # Too large to regenerate under the cap: neither claim, and the reason.
    unchecked = family_origin(parse_package(_edited(doc), "edited.json"), max_size=1)
    assert unchecked.regenerates is None
    assert "not checked" in unchecked.seed_band_help()
    assert "generator-size" in unchecked.seed_band_help()


def _seed_toggle_help(data: bytes, name: str) -> str:
    at = _app(SWEEP, package="sample:update_chain")
    upload_file(at, name, data)
    (toggle,) = [t for t in at.toggle if t.key == "sweep_seed_range"]
    return toggle.help


def test_the_seed_band_help_says_generated_only_for_the_generators_own_package() -> None:
    """QA s21c: an edited generated package was described as "generated by memaudit-small
    with seed 3"."""
    help_text = _seed_toggle_help(json.dumps(_edited(_generated_doc())).encode(), "edited.json")
    assert "was generated by" not in help_text, help_text
    assert "meta names the generator memaudit-small with seed 3" in help_text, help_text
    assert "content differs" in help_text and "not over this one" in help_text, help_text
    # The generator's own package, uploaded unchanged, is still called generated.
    help_text = _seed_toggle_help(json.dumps(_generated_doc(seed=4)).encode(), "gen.json")
    assert help_text.startswith("This package was generated by memaudit-small with seed 4"), (
        help_text
    )


def test_the_seed_band_of_an_edited_upload_says_what_it_is_over() -> None:
    at = _app(SWEEP, package="sample:update_chain")
    upload_file(at, "edited.json", json.dumps(_edited(_generated_doc())).encode())
    at.toggle(key="sweep_seed_range").set_value(True).run()
    at.number_input(key="sweep_seed_to").set_value(2).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    captions = [_plain(c.value) for c in at.caption]
    assert any("not over this one" in c and "edited" in c for c in captions), captions


# --------------------------------------------------------------------------- compare table

COMPARE = "pages/2_Compare.py"


def _unit_texts(sample: str) -> dict[str, str]:
    doc = json.loads((REPO / "sample_packages" / f"{sample}.json").read_text())
    return {unit["id"]: unit["text"] for unit in doc["units"]}


def test_the_compare_unit_table_shows_the_unit_its_text_and_the_value_lost_first() -> None:
    """QA s21c: the text was the table's last column, off a 1280 px screen; it comes after
    what was lost and who covers the unit (QA s49: those were off a 1024 px screen)."""
    at = _app(COMPARE, package="sample:travel-assistant")
    assert not at.exception and not at.error
    (units,) = [d.value for d in at.dataframe if "covered in store by" in d.value.columns]
    assert list(units.columns[:5]) == [
        "unit",
        "value lost",
        "covered in OPT by",
        "covered in store by",
        "text",
    ], list(units.columns)
    texts = _unit_texts("travel-assistant")
    assert dict(zip(units["unit"], units["text"], strict=True)) == texts


def test_the_projector_unit_table_keeps_the_text() -> None:
    """On a projector the wide unit table lost its text column altogether (the rule for
    tables of six columns or more); now it has five, the text among them."""
    at = _app(COMPARE, package="sample:travel-assistant", present="1")
    assert not at.exception and not at.error
    (units,) = [t.value for t in at.table if "covered in store by" in t.value.columns]
    assert list(units.columns) == [
        "unit",
        "value lost",
        "covered in OPT by",
        "covered in store by",
        "text",
    ]
    # (The table's data; the projector's cell text cuts it at 60 characters when drawn.)
    assert dict(zip(units["unit"], units["text"], strict=True)) == _unit_texts("travel-assistant")


def test_the_picker_label_of_an_upload_starts_with_what_tells_it_apart() -> None:
    """QA s21c: the sidebar shows about 30 characters of a label, and "upload ·
    event-graph-n60-s5 · edi" hid the file name and the digest behind the package id."""
    at = _app()
    key = upload_file(at, "chain-v1.json", _variant(13.0))
    digest_start = key.partition(":")[2][:8]
    (label,) = [o for o in at.selectbox(key="w_package").options if digest_start in o]
    assert label.startswith(f"upload · chain-v1.json · {digest_start}"), label
    assert label.endswith("qa-s21c"), label
