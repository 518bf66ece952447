"""External stores names the file and the format when an export holds no memories (QA s41, C4):
the page said only "The export holds no memories (as kept): nothing to score." while the CLI
names the file."""

from __future__ import annotations

import json

from app_utils import open_app

PAGE = "pages/4_External_stores.py"


def _plain(text: str) -> str:
    return text.replace("\\", "").replace("\u2060", "")


def test_an_empty_zep_dump_is_named_with_its_format():
    at = open_app(PAGE, package="sample:veg-to-pescatarian")
    at.selectbox(key="w_ext_format").set_value("zep").run()
    data = json.dumps({"edges": []}).encode()
    at.file_uploader(key="w_ext_upload").set_value(
        ("zep_empty.json", data, "application/json")
    ).run()
    assert not at.exception and not at.success
    assert [_plain(w.value) for w in at.warning] == [
        "**zep_empty.json holds no memories** as zep (as kept): nothing to score, so no store "
        "was added."
    ]
