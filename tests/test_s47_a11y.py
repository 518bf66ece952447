"""QA s47, accessibility: every chart has a text alternative (its accessible name, starting
with its title), and keyboard focus has a visible ring of its own."""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from pathlib import Path

from app_utils import open_app

from memaudit_ui.frame import PAGES

DEMO = Path(__file__).resolve().parent.parent / "sample_packages" / "external-stores-demo.json"


def _leaves(node):
    children = getattr(node, "children", None)
    if children:
        for child in children.values() if isinstance(children, dict) else children:
            yield from _leaves(child)
    else:
        yield node


def _spoken(plotly_text: str) -> str:
    """A plotly title as read: tags as spaces, entities decoded, spaces collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]*>", " ", plotly_text)).split())


def _caption_text(markdown: str) -> str:
    """A caption's Markdown as shown: backslash escapes and word joiners removed."""
    return re.sub(r"\\(.)", r"\1", markdown).replace("\u2060", "")


def _charts_with_captions() -> list[tuple[str, str, str, str]]:
    """(page, chart title, alt, caption after the chart) for every chart on every page."""
    found = []
    for path, label in PAGES:
        at = open_app(path, 300, package="sample:external-stores-demo")
        assert not at.exception, (label, [e.value for e in at.exception])
        leaves = list(_leaves(at.main))
        for i, el in enumerate(leaves):
            if el.type != "plotly_chart":
                continue
            title = _spoken(json.loads(el.proto.spec)["layout"]["title"]["text"])
            after = leaves[i + 1]
            caption = _caption_text(after.value) if after.type == "caption" else ""
            found.append((label, title, el.proto.alt, caption))
    return found


def test_every_chart_has_a_text_alternative_naming_its_title():
    charts = _charts_with_captions()
    # The charts each page draws for this package (Ablations runs its analyses by itself:
    # two ablation charts and one per sensitivity tab).
    assert Counter(p for p, *_ in charts) == {
        "Overview": 4,
        "Budget sweep": 2,
        "Compare": 1,
        "Evidence explorer": 3,
        "External stores": 1,
        "Ablations & sensitivity": 5,
        "Certification": 1,
    }, [(p, t) for p, t, _, _ in charts]
    for page, title, alt, caption in charts:
        assert title, page
        assert alt.startswith(title), (page, title, alt)
        assert len(alt) > len(title) + 10, (page, alt)  # a summary, not the title alone
        assert caption != alt, (page, title)  # not repeated on screen under the chart

    by_title = {title: alt for _, title, alt, _ in charts}
    # The count charts name their largest bar, counted here from the package file.
    pkg = json.loads(DEMO.read_text())
    (top_type, n_top), *_ = Counter(c["type"] for c in pkg["candidates"]).most_common()
    n_types = len({c["type"] for c in pkg["candidates"]})
    assert f"{n_types} bars, highest {top_type} ({n_top})" in by_title["Candidates by type"]
    assert "Bar chart of count" in by_title["Evidence units by kind"]
    assert "Series: atomic_fact; compound_update" in by_title["Candidate cost distribution"]


def _focus_rules(css: str) -> dict[str, str]:
    """selector -> declarations of every rule whose selector names :focus-visible or
    react-aria's data-focus-visible."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    rules = {}
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        for sel in selectors.split(","):
            sel = " ".join(sel.split())
            if "focus-visible" in sel:
                rules[sel] = rules.get(sel, "") + body
    return rules


def test_keyboard_focus_has_a_visible_ring():
    at = open_app("app.py", 120, package="sample:external-stores-demo")
    css = "".join(h.proto.body for h in at.get("html"))
    rules = _focus_rules(css)
    wanted = [
        'a[data-testid="stPageLink-NavLink"]:focus-visible',
        "button:focus-visible",
        '[data-testid="stSlider"] [data-focus-visible="true"]',
    ]
    for sel in wanted:
        assert sel in rules, (sel, sorted(rules))
        width = re.search(r"outline:\s*(\d+)px\s+solid\s+#[0-9a-fA-F]{6}", rules[sel])
        assert width and 2 <= int(width.group(1)) <= 3, (sel, rules[sel])
