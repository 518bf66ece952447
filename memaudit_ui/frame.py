"""The shared frame every page calls first: page config, sidebar and shared choices.

Pages live in Streamlit's ``pages/`` folder (no ``st.navigation``; DESIGN.md section 8), so a
cold deep link may run a page without ``app.py``. Everything a page needs therefore happens
here: URL -> state on a session's first run, the sidebar (navigation, package picker with
upload, budget slider, writer / store picker, presentation toggle), and state -> URL.
"""

from __future__ import annotations

import gc
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import streamlit as st

from memaudit_core.errors import (
    PROBLEM_LIMIT_RULE,
    MemAuditError,
    PackageError,
    cut_repr,
    id_text,
)
from memaudit_core.package import Package, cost_total, warning_parts
from memaudit_core.writers import WRITERS, all_writers

from . import sources, state
from .state import md_code_span, md_value

REPO_ROOT = Path(__file__).resolve().parent.parent

#: (script path relative to the repo root, label) in sidebar order.
PAGES = [
    ("app.py", "Overview"),
    ("pages/1_Budget_sweep.py", "Budget sweep"),
    ("pages/2_Compare.py", "Compare"),
    ("pages/3_Evidence_explorer.py", "Evidence explorer"),
    ("pages/4_External_stores.py", "External stores"),
    ("pages/5_Ablations_and_sensitivity.py", "Ablations & sensitivity"),
    ("pages/6_Certification.py", "Certification"),
    ("pages/7_Generator.py", "Generator"),
]

PRESENT_CSS = """
<style>
html, body, [data-testid="stAppViewContainer"] { font-size: 20px; }
/* The sidebar keeps its usual size (projector QA: at 1280 x 720 the budget slider and the
   store picker were pushed below the fold, the package name clipped). */
[data-testid="stSidebarContent"] { zoom: 0.8; }
[data-testid="stMetricValue"] { font-size: 2.6rem; }
h1 { font-size: 3rem !important; }
/* A table still wider than the screen scrolls with a visible bar (QA s18c: the right-hand
   columns were clipped with no visible way to reach them). */
[data-testid="stTable"] > div { overflow-x: auto; scrollbar-width: auto; }
</style>
"""

#: Streamlit keeps the user's last sidebar choice in localStorage ("stSidebarCollapsed-<base
#: URL>": "true" collapsed, "false" expanded) and prefers it to ``initial_sidebar_state``: once
#: the speaker had opened the sidebar, every later present=1 link, reload or new tab opened with
#: it expanded (speaker QA s50). When presentation mode starts (a page load with present=1, or
#: the toggle turned on; ``__START__`` numbers the starts of the session, so reruns and page
#: links keep the speaker's own choice), the stored choice is set aside, so that Streamlit
#: falls back to "collapsed" when it draws the sidebar (or re-reads it on a resize), and a
#: sidebar drawn already is collapsed with its own button. When the page is left, a stored
#: "expanded" is dropped (it is what a page without present=1 opens with anyway, and kept it
#: would open the next present link expanded for a moment) and a "collapsed" set aside is put
#: back unless the speaker chose again: a page without present=1 still opens the sidebar as the
#: user left it there. The style keeps the script's element from adding a gap above the title.
PRESENT_SIDEBAR_HTML = """
<style>
[data-testid="stElementContainer"]:has(#memaudit-present-sidebar) { display: none; }
</style>
<script id="memaudit-present-sidebar">
(() => {
  const start = __START__;
  if (window.__memauditPresentStart === start) return;
  window.__memauditPresentStart = start;
  const store = window.localStorage;
  const prefix = "stSidebarCollapsed-";
  const keys = () => Object.keys(store).filter((k) => k.startsWith(prefix));
  const collapsedBefore = keys().filter((k) => store.getItem(k) === "true");
  const setAside = () => keys().forEach((k) => store.removeItem(k));
  setAside();
  const sidebar = document.querySelector('[data-testid="stSidebar"]');
  if (sidebar && sidebar.getAttribute("data-collapsed") === "false") {
    // At once, not in the 300 ms slide of a click: on a page load it has only just been drawn.
    sidebar.style.transition = "none";
    document.querySelector('[data-testid="stSidebarCollapseButton"] button')?.click();
    setAside();  // the button stored "collapsed" as if the user had chosen it
    requestAnimationFrame(() => requestAnimationFrame(() => (sidebar.style.transition = "")));
  }
  window.addEventListener("pagehide", () => {
    for (const k of keys()) if (store.getItem(k) === "false") store.removeItem(k);
    for (const k of collapsedBefore) if (store.getItem(k) === null) store.setItem(k, "true");
  });
})();
</script>
"""
#: Whether the previous run was in presentation mode, and how many times it started.
PRESENT_WAS_KEY = "ma_present_was"
PRESENT_STARTS_KEY = "ma_present_starts"

#: Streamlit writes its own server limit under the uploader ("200MB per file"); the app's
#: limit (sources.MAX_UPLOAD_MB, in the uploader's label) is lower, and the server's is set
#: above it only so that a file over the app's limit reaches the app's st.error instead of a
#: tooltip on the file chip (.streamlit/config.toml). Hide the contradicting line.
BASE_CSS = """
<style>
[data-testid="stFileUploaderDropzoneInstructions"] { display: none; }
/* Chosen writers wrap onto more lines instead of scrolling out of a faded edge (projector
   QA: the third chip of the Budget sweep's picker was cut off at 1280 x 720). */
[data-testid="stMultiSelectTagsContainer"],
[data-testid="stMultiSelectTagsContainer"] > span[role="group"] {
  flex-wrap: wrap !important; overflow: visible !important;
  mask-image: none !important; -webkit-mask-image: none !important;
}
[data-testid="stMultiSelect"] div[role="group"]:has(> [data-testid="stMultiSelectTagsContainer"]) {
  height: auto !important; max-height: none !important;
}
/* Keyboard focus in a ring of its own (QA s47: a focused page link got the same grey fill as
   the current page, and the slider's ring was a faint halo). The slider's thumb carries
   react-aria's data-focus-visible (its input is visually hidden). */
a[data-testid="stPageLink-NavLink"]:focus-visible,
button:focus-visible,
[role="tab"]:focus-visible,
[data-testid="stSlider"] [data-focus-visible="true"] {
  outline: 3px solid #1f5fa8 !important;
  outline-offset: 2px !important;
}
/* The thumb's own halo filled the gap and merged thumb and ring into one blue disc. */
[data-testid="stSlider"] [data-focus-visible="true"] {
  box-shadow: none !important; outline-offset: 3px !important;
}
</style>
"""


@dataclass(frozen=True)
class Frame:
    """What a page gets from the frame."""

    package_key: str
    package: Package
    budget: float
    store_key: str
    present: bool
    #: The page's link settings by parameter (:class:`LinkSetting`), as resolved this run.
    settings: dict[str, LinkSetting] = field(default_factory=dict)
    drop_note: DropNote | None = None

    @property
    def store_label(self) -> str:
        return store_label(self.package, self.store_key)

    @property
    def switched(self) -> bool:
        """True on the run right after the package was switched (:func:`switch_package`)."""
        return self.drop_note is not None and self.drop_note.switched

    def note_dropped(self, item: str) -> None:
        """Name a page choice of the previous package that this one does not have (Markdown,
        e.g. "focus unit `u:x`"), in the frame's note on the switch."""
        if self.drop_note is not None:
            self.drop_note.add(item)

    def kept(self, param: str) -> dict:
        """:func:`kept`'s keyword arguments for the link setting ``param``."""
        s = self.settings[param]
        return kept(s.widget_key, s.default, s.valid, s.scope)

    def tabs(self, param: str, labels: dict[str, str]) -> Sequence[Any]:
        """``st.tabs`` whose selected tab is the link setting ``param``: ``labels`` maps each
        of its values to its tab's label, in the tabs' order. A tab switch reruns the page,
        so the link follows it (QA s47: the tab was the browser's alone, and a shared link
        opened on the first tab)."""
        s = self.settings[param]
        sync_widget(s.widget_key, labels[_kept_value(s.mirror, s.default, s.valid)])
        return st.tabs(
            list(labels.values()),
            key=s.widget_key,
            on_change=_set_from_tab,
            args=(s.mirror, s.widget_key, {label: v for v, label in labels.items()}),
        )


def _set_from_tab(mirror: str, widget_key: str, values: dict[str, Any]) -> None:
    """A tab switch's callback: the chosen tab's value to the setting's mirror."""
    st.session_state[mirror] = values[st.session_state[widget_key]]


def store_options(package: Package) -> list[str]:
    # Reference writers, then plugin writers (bundled examples, entry points, registered
    # modules); store_label shows each writer's kind (oracle / blind).
    return [f"store:{s.id}" for s in package.stores] + [f"writer:{w}" for w in all_writers()]


def store_label(package: Package, key: str) -> str:
    kind, _, name = key.partition(":")
    if kind == "store":
        for s in package.stores:
            if s.id == name:
                suffix = " (external)" if s.is_external else ""
                return f"store · {s.display_name}{suffix}"
        return f"store · {name}"
    info = WRITERS.get(name)
    return f"writer · {name}" + (f" ({info.kind})" if info else "")


def default_store_key(package: Package) -> str:
    for s in package.stores:
        if not s.is_external:
            return f"store:{s.id}"
    return "writer:gvt"


def seconds_text(seconds: float) -> str:
    """A duration as a person says it.

    >>> seconds_text(20), seconds_text(120), seconds_text(90)
    ('20 s', '2 min', '1 min 30 s')
    """
    minutes, rest = divmod(int(round(seconds)), 60)
    if not minutes:
        return f"{seconds:g} s"
    return f"{minutes} min" + (f" {rest} s" if rest else "")


def page_time_setting(widget_key: str, url: str = "time") -> LinkSetting:
    """The :class:`LinkSetting` of a :func:`page_time_select`."""
    from .cached import PAGE_TIME_CHOICES_S, PAGE_TIME_S

    return LinkSetting(
        widget_key,
        url,
        PAGE_TIME_S,
        lambda v: v if v in PAGE_TIME_CHOICES_S else None,
        choices=PAGE_TIME_CHOICES_S,
    )


def page_time_select(label: str, kept_kwargs: dict, container=None, scope: str = "") -> float:
    """A choice of the seconds a sweep-like computation may spend on all its solves (its
    setting from :func:`page_time_setting`, drawn with ``ctx.kept(param)``); ``scope`` says
    what gets that time when it is not obvious."""
    from .cached import PAGE_TIME_CHOICES_S

    # Kept across page visits like the other page settings (QA s18c).
    return (container or st).select_slider(
        label,
        options=list(PAGE_TIME_CHOICES_S),
        format_func=seconds_text,
        **kept_kwargs,
        help=(scope + " " if scope else "")
        + "Shared by all the optima it solves: budgets proven quickly leave their time to "
        "the hard ones, and time left at the end goes to the unproven ones. An optimum not "
        "proven in time is shown as an incumbent with its proven upper bound, never as OPT.",
    )


#: The grid a page's "Add budget B" box adds to when it is the package's own.
PACKAGE_GRID = "the package grid"


def add_budget_setting(
    widget_key: str, budget: float, held_by: Callable[[dict[str, Any]], str | None]
) -> LinkSetting:
    """The :class:`LinkSetting` of an :func:`add_budget_box` (link parameter ``add_budget``,
    on by default): ``held_by``, given the values of the settings before it, names the grid
    they make when it already holds the sidebar's ``budget`` (the box is then unused), else
    None."""

    def unused(values: dict[str, Any]) -> str | None:
        grid_name = held_by(values)
        return None if grid_name is None else f"{grid_name} already holds the budget {budget:.10g}"

    return LinkSetting(widget_key, "add_budget", True, unused=unused)


def add_budget_box(
    container: Any, kept_kwargs: dict, budget: float, grid: Sequence[float], grid_name: str
) -> tuple[float, ...]:
    """The "Add budget B" box (setting from :func:`add_budget_setting`, drawn with
    ``ctx.kept("add_budget")``): ``grid`` with the sidebar's ``budget`` added while it is
    ticked, ascending. A page whose grid is drawn with the sidebar budget marked on it gives it
    a point there (QA s50: the Budget sweep marked B = 6 between its 4 and 8, where reading
    the straight segment gave a wrong OPT and ratio); ``grid_name`` names the grid."""
    in_grid = budget in set(grid)
    add = container.checkbox(
        f"Add budget {budget:.10g}",
        # App QA: offered, and doing nothing, when the grid already holds that budget.
        disabled=in_grid,
        # Short: "Also the sidebar budget (40)" was cut at 1024 px (speaker QA).
        help=f"The sidebar's budget. {grid_name[0].upper()}{grid_name[1:]} already holds it."
        if in_grid
        else f"The sidebar's budget, added to {grid_name} (on unless the link says add_budget=0).",
        **kept_kwargs,
    )
    return tuple(sorted(set(grid) | ({budget} if add else set())))


def budget_step(package: Package) -> float:
    costs = [c.cost for c in package.candidates]
    if all(float(c).is_integer() for c in costs):
        return 1.0
    return 0.1 if package.total_cost() < 500 else 1.0


def sync_widget(widget_key: str, value: object) -> None:
    """Seed a widget from its canonical key, every run, before the widget is drawn.

    Always assign, never "only if different": a widget's id includes the page, so after a page
    switch ``st.session_state[widget_key]`` can still report the previous page's widget value
    while the new page's widget would start from its default (seen in a real browser: the
    budget dropped to 0 on switching pages).
    """
    st.session_state[widget_key] = value


def set_from_widget(canonical: str, widget_key: str) -> None:
    """A widget's change callback: copy its value to the canonical key (a page setting in the
    link reaches the URL in the frame of the run the change starts)."""
    st.session_state[canonical] = st.session_state[widget_key]


def go_to(page: str) -> None:
    """``st.switch_page`` with the shared choices in the new page's URL: without them the
    switch also went through a URL without parameters, a dead Back press (QA). Streamlit
    still records the page left with the new choices, so Back takes two presses there."""
    title = dict(PAGES).get(page)
    params = state.page_link_params(title) if title else state.shared_params()
    st.switch_page(page, query_params=params)


def _mirror(widget_key: str, scope: str | None) -> str:
    return f"ma_kept_{widget_key}" + (f"@{scope}" if scope is not None else "")


def kept(widget_key: str, default: object, valid=None, scope: str | None = None) -> dict:
    """Keyword arguments that make a page's widget keep its value when the user leaves the
    page and comes back (Streamlit drops a widget's state with its page; projector QA: a
    sweep set up for a demo was reset by a visit to Compare).

    The value lives in a non-widget mirror, seeds the widget on every run and is updated by
    the widget's change callback. ``valid(value)`` returns the remembered value made valid for
    the current package (e.g. stores that exist), or None to fall back to ``default``.
    ``scope`` (e.g. the package id) keeps one value per scope. Pass no ``value=`` /
    ``default=`` of the widget's own. A setting that is part of the page's link is declared
    as a :class:`LinkSetting` and drawn with ``**ctx.kept(param)``.
    """
    mirror = _mirror(widget_key, scope)
    sync_widget(widget_key, _kept_value(mirror, default, valid))
    return {"key": widget_key, "on_change": set_from_widget, "args": (mirror, widget_key)}


def _kept_value(mirror: str, default: object, valid) -> object:
    value = st.session_state.get(mirror, default)
    if valid is not None and mirror in st.session_state:
        value = valid(value)
        if value is None:
            value = default
    return value


@dataclass(frozen=True)
class LinkSetting:
    """A page setting that is part of the page's link (``url`` is its parameter, declared in
    :data:`memaudit_ui.state.PAGE_URL_KEYS`).

    The page returns its settings from the function it gives :func:`frame`, which reads them
    from a link (on the session's first visit of the page, and after Back / Forward), checks
    them against ``choices`` (allowed values, or a list's items), ``bounds`` (a number's
    inclusive range) and ``valid`` (as :func:`kept`), names every value it refuses, and
    writes the settings that differ from ``default`` into the URL with the run's one URL
    write (QA s39: written by each widget in turn, a package change made one browser history
    entry per setting it changed, and Back stepped through views never shown). ``unused``,
    given the values of the settings before it (by parameter), says why the setting does not
    apply to this view (e.g. the range without ``grid=range``), or None. ``check``, given the
    values of the settings up to this one, says why the settings ``check_with`` (this one
    among them) cannot be used together (e.g. a range whose stop is below its start), or None;
    it is asked only when one of them came from the link this run, and then those settings
    all fall back to their defaults and the warning names the link's values and ``instead``
    (QA s41: a link's ``step=0`` left the Budget sweep on an error, with the value still in
    the URL); a switch listed in ``check_with`` goes back to its default too (QA s49: the
    Budget sweep's band stayed on after a refused seed range and ran the default seeds).
    """

    widget_key: str
    url: str
    default: object
    valid: Callable[[Any], Any] | None = None
    scope: str | None = None
    choices: Sequence[Any] | None = None
    bounds: tuple[float | None, float | None] = (None, None)
    unused: Callable[[dict[str, Any]], str | None] | None = None
    check: Callable[[dict[str, Any]], str | None] | None = None
    check_with: tuple[str, ...] = ()
    #: What the view shows in place of the values ``check`` refused, said in its warning (QA
    #: s49: a refused seed range ran the default band, a minute long, without a word on it).
    instead: str | None = None
    #: The widget's label, naming the setting in the note on a package switch (else ``url``).
    label: str | None = None
    #: Given the parameters of the settings before this one that a link names, the value they
    #: imply when the link does not name this setting (or names a value refused), or None for
    #: ``default``; the link then carries this setting only when its value differs from the
    #: one the link's other settings imply (QA s47: a link with the Ablations page's ``k=3``
    #: opened on the cost-rule tab, and nothing said the k result was behind another tab).
    implied: Callable[[set[str]], Any] | None = None

    @property
    def mirror(self) -> str:
        return _mirror(self.widget_key, self.scope)


def set_link_setting(page_title: str, setting: LinkSetting, value: object) -> None:
    """Set a page's link setting from the page, for a value known once the page has decided
    its view (the Generator's previewed package): its mirror and its text in the link, which
    the page's own :func:`state.sync_url` writes (``frame(..., page_writes_url=True)``)."""
    st.session_state[setting.mirror] = value
    stored = st.session_state.setdefault(state.PAGE_PARAMS_KEY, {}).setdefault(page_title, {})
    stored[setting.url] = None if value == setting.default else state.link_text(value)


#: Session-state key: (page title, parameter) of the page settings read from a link.
LINK_READ_KEY = "ma_link_settings_read"


def _resolve_link_settings(
    page_title: str, settings: Sequence[LinkSetting], note: DropNote | None = None
) -> list[str]:
    """Read, check and record a page's link settings (see :class:`LinkSetting`); the
    warnings for the values refused (Markdown, the link's values in code spans). On the run
    after a package switch, the values ``valid`` drops (e.g. stores the new package lacks) are
    named in ``note``."""
    adopted = bool(st.session_state.get(state.URL_ADOPTED_KEY))
    read = st.session_state.setdefault(LINK_READ_KEY, set())
    stored = st.session_state.setdefault(state.PAGE_PARAMS_KEY, {}).setdefault(page_title, {})
    values: dict[str, Any] = {}
    warnings: list[str] = []
    by_url = {setting.url: setting for setting in settings}
    from_link: dict[str, str] = {}  # parameter -> the link's text, for the values adopted
    link_names: set[str] = set()  # the parameters the link names, for an implied setting
    for setting in settings:
        fresh = adopted or (page_title, setting.url) not in read
        read.add((page_title, setting.url))
        given = st.query_params.get_all(setting.url) if fresh else []
        why_unused = setting.unused(values) if setting.unused is not None else None
        if why_unused is not None:
            if given:
                warnings.append(
                    f"ignored {_md_escape_inline(setting.url)}={md_value(given[-1])} in the "
                    f"link: {_md_escape_inline(why_unused)}"
                )
            values[setting.url] = _kept_value(setting.mirror, setting.default, setting.valid)
            stored[setting.url] = None  # kept for when it applies, but not this view's link
            continue
        taken = False
        if given:
            taken, warning = _adopt_link_value(setting, given)
            if warning:
                warnings.append(warning)
            if taken:
                # Only a value taken implies another setting (QA s48: a refused k=2.5 still
                # opened the Ablations page's capacity tab).
                link_names.add(setting.url)
                from_link[setting.url] = given[-1]
        elif fresh and adopted:
            # Back / Forward to a view whose link left the setting out: its default.
            st.session_state.pop(setting.mirror, None)
        if fresh and not taken and setting.implied is not None:
            implied = setting.implied(link_names & values.keys())
            if implied is not None:
                st.session_state[setting.mirror] = implied
        value = _kept_value(setting.mirror, setting.default, setting.valid)
        if note is not None and note.switched and not given:
            _note_dropped_setting(note, setting, value)
        values[setting.url] = value
        reference = setting.default
        if setting.implied is not None:
            in_link = {p for p in values if p != setting.url and stored.get(p) is not None}
            implied = setting.implied(in_link)
            reference = setting.default if implied is None else implied
        stored[setting.url] = None if value == reference else state.link_text(value)
        linked = {p: from_link[p] for p in setting.check_with if p in from_link}
        problem = setting.check(values) if setting.check is not None and linked else None
        if problem:
            # The link's values together are refused (QA s41: step=0, from=10&to=2): each
            # setting checked with them falls back to its default, and leaves the URL.
            named = ", ".join(
                f"{_md_escape_inline(p)}={md_value(text)}" for p, text in linked.items()
            )
            instead = f"; {_md_escape_inline(setting.instead)}" if setting.instead else ""
            warnings.append(f"ignored {named} in the link: {_md_escape_inline(problem)}{instead}")
            for p in setting.check_with:
                st.session_state.pop(by_url[p].mirror, None)
                values[p] = by_url[p].default
                stored[p] = None
                link_names.discard(p)
    return warnings


def _note_dropped_setting(note: DropNote, setting: LinkSetting, value: object) -> None:
    """Add to ``note`` what of the setting's kept value ``valid`` refused for this package
    (the mirror keeps it, so it comes back with a package that has it)."""
    if setting.valid is None or setting.mirror not in st.session_state:
        return
    held = st.session_state[setting.mirror]
    if isinstance(held, list):
        dropped = [v for v in held if v not in (value if isinstance(value, list) else [value])]
    else:
        dropped = [] if held == value else [held]
    if dropped:
        note.add(
            f"{_md_escape_inline(setting.label or setting.url)}: "
            + ", ".join(
                md_code_span(cut_repr(v, 60) if not isinstance(v, str) else v) for v in dropped
            )
        )


def _adopt_link_value(setting: LinkSetting, given: list[str]) -> tuple[bool, str | None]:
    """Put the link's value of ``setting`` into its mirror; whether it was taken (all or
    part of it), and the warning for what was refused (Markdown)."""
    text = given[-1]
    value, problem = state.parse_link_value(text, setting.default, setting.choices, setting.bounds)
    if value is not None and setting.valid is not None:
        checked = setting.valid(value)
        if checked is None:
            value, problem = None, problem or "not available for this package"
        elif checked != value:
            dropped = [v for v in value if v not in checked]
            value = checked
            problem = (problem + "; " if problem else "") + (
                ", ".join(md_value(v, 60) for v in dropped) + " not available for this package"
            )
    if problem and isinstance(value, list):
        problem += "; the rest is used"
    if len(given) > 1:
        problem = (problem + "; " if problem else "") + (
            f"given {len(given)} times, the last one is used"
        )
    if value is not None:
        st.session_state[setting.mirror] = value
    if not problem:
        return value is not None, None
    lead = "" if value is not None else "ignored "
    named = f"{_md_escape_inline(setting.url)}={md_value(text)}"
    return value is not None, f"{lead}{named} in the link: {problem}"


#: Session-state key: set by :func:`switch_package` for the frame of the next run, which checks
#: the choices kept across the switch against the new package (:class:`DropNote`).
SWITCH_KEY = "ma_package_switch"
#: Session-state key: whether the sidebar's store was the package's default, not a choice.
STORE_IS_DEFAULT_KEY = "ma_store_is_default"


def switch_package(key: str, *, listed: bool = False) -> None:
    """Open the package ``key`` at its default budget (a button callback: the sidebar and the
    link follow on the rerun). ``listed`` adds it to the sidebar's package list first (an
    upload or a generated package, which the list of samples does not hold).

    The one rule for what survives a switch (upload, sidebar picker, Generator, buttons): a
    writer / store chosen in the sidebar, the pages' choices of writers / stores and the
    Evidence explorer's focus unit are kept when the new package has them; those it lacks are
    named in one note (:class:`DropNote`; QA s43: the sidebar's store jumped to the default
    while the Budget sweep kept it, and choices vanished unsaid). The budget is the new
    package's default: budgets are in the package's own cost unit."""
    if listed:
        extras = st.session_state.setdefault("ma_extra_packages", [])
        if key not in extras:
            extras.append(key)
    if key != st.session_state.get("ma_package"):
        st.session_state[SWITCH_KEY] = True
    st.session_state["ma_package"] = key
    st.session_state["ma_budget"] = None
    if st.session_state.get(STORE_IS_DEFAULT_KEY, True):
        # The previous package's default was not a choice: the new package's default follows.
        st.session_state["ma_store"] = None


def _on_package_change() -> None:
    switch_package(st.session_state["w_package"])


class DropNote:
    """The run's one note on choices kept across a package switch that the package does not
    have (see :func:`switch_package`): the frame adds the sidebar's store and the page's link
    settings, a page its own choices (:meth:`Frame.note_dropped`)."""

    def __init__(self, package_name: str, switched: bool) -> None:
        self.package_name = package_name
        #: True on the run right after a switch; the frame notes its own choices only then.
        self.switched = switched
        self.items: list[str] = []
        self._box: Any = None

    def add(self, item: str) -> None:
        """Add ``item`` (Markdown, e.g. "focus unit `u:x`") and redraw the note."""
        self.items.append(item)
        self._draw()

    def place(self) -> None:
        """Reserve the note's place in the page (drawn there once it has an item)."""
        self._box = st.empty()
        self._draw()

    def _draw(self) -> None:
        if self._box is None or not self.items:
            return
        name = _md_escape_inline(self.package_name)
        lead = f"Opened {name}. " if self.switched else f"In {name}: "
        self._box.info(
            f"{lead}Not in this package, so not kept: " + "; ".join(self.items) + ".",
            icon=":material/swap_horiz:",
        )


def _handle_upload() -> None:
    upload = st.session_state.get("w_upload")
    if upload is None:  # the file was removed from the uploader
        st.session_state.pop("ma_upload_error", None)
        return
    # The error belongs to the package open when the upload failed: once the user opens
    # another one it is no longer news (QA: it stayed on every page).
    open_key = st.session_state.get("ma_package")
    try:
        key, _pkg = sources.register_upload(upload.name, upload.getvalue())
    except PackageError as exc:
        # Only what the page shows is kept (QA s44: a million problems' lines stayed in the
        # session, 1.9 GB, where 30 are shown).
        first = exc.lines()[0] if exc.problems else ""
        listing = package_error_md(exc)
        st.session_state["ma_upload_error"] = (
            exc.source,
            exc.count_text(),
            first,
            listing,
            open_key,
        )
        return
    except MemAuditError as exc:
        listing = problem_list_md([str(exc)])
        st.session_state["ma_upload_error"] = (
            upload.name,
            "1 problem(s)",
            str(exc),
            listing,
            open_key,
        )
        return
    st.session_state.pop("ma_upload_error", None)
    st.session_state.setdefault("ma_upload_names", {})[key] = upload.name
    st.session_state[LATEST_UPLOAD_KEY] = (key, upload.name, upload.getvalue())
    switch_package(key, listed=True)


#: Session-state key of the session's latest upload: (package key, file name, bytes).
LATEST_UPLOAD_KEY = "ma_latest_upload"


def _upload_from_session(key: str) -> Package | None:
    """The session's latest upload registered again, if ``key`` is it and the server dropped
    it for newer uploads. The session keeps that one file's bytes (at most an upload's 50 MB,
    under a third of the parsed package, for the session's life) so the package it is working on
    keeps working; earlier uploads of the session are not kept."""
    latest = st.session_state.get(LATEST_UPLOAD_KEY)
    if latest is None or latest[0] != key:
        return None
    _key, name, data = latest
    try:
        return sources.register_upload(name, data)[1]
    except MemAuditError:
        return None


def _resolve_package() -> tuple[str, Package]:
    key = st.session_state.get("ma_package") or sources.default_package_key()
    # One key per package (QA s40, defect 2): gen:update_chain:5 becomes gen:update_chain:0,
    # said once, so every page (the Generator's form included) works on the key it shows.
    key, note = sources.canonical_key(key)
    if note is not None:
        state.add_problem(note)
    try:
        try:
            pkg = sources.load_by_key(key)
        except sources.UploadNotHeldError:
            pkg = _upload_from_session(key)
            if pkg is None:
                raise
    except MemAuditError as exc:
        fallback = sources.default_package_key()
        # An error, shown before the link's warnings: the package asked for is not what the
        # page shows, and it is the root cause of the other problems (QA s18c: it came after
        # the budget and present warnings).
        file_name = st.session_state.get("ma_upload_names", {}).get(key)
        # Cut when long (deep-link QA s38: a 5,000-character name filled the screen twice).
        shown_key = id_text(key, 200)
        named = f" ({md_code_span(Path(file_name).name)})" if file_name else ""
        state.add_problem(
            f"Could not open the package {md_code_span(shown_key)}{named}: "
            f"{_md_escape_inline(str(exc))}. "
            f"Showing {md_code_span(fallback)} at its default budget instead.",
            first=True,
            error=True,
        )
        if isinstance(exc, sources.UploadNotHeldError):
            # Not offered again in the picker: it would only lead back to this error.
            extras = st.session_state.get("ma_extra_packages", [])
            st.session_state["ma_extra_packages"] = [k for k in extras if k != key]
        key, pkg = fallback, sources.load_by_key(fallback)
        # The budget was meant for the package that failed, and so was a store of its own; a
        # writer works on any package and is checked by the store picker like any other link
        # store. A dropped store is named (QA s18c: store=writer:nope vanished silently).
        st.session_state["ma_budget"] = None
        store = st.session_state.get("ma_store")
        if store is not None and str(store).startswith("store:"):
            if st.session_state.pop("ma_store_from_url", False):
                state.add_problem(
                    f"ignored store={md_value(str(store))} in the link: a "
                    "store of the "
                    "package that could not be opened; showing the default."
                )
            st.session_state["ma_store"] = None
    st.session_state["ma_package"] = key
    return key, pkg


def _fitting_step(step: float, budget: float) -> float:
    """The package step, or a finer one on which ``budget`` lies (e.g. 6.5 from a link)."""
    for candidate in (step, step / 2, step / 10, step / 100):
        ratio = budget / candidate
        if abs(ratio - round(ratio)) < 1e-9:
            return candidate
    return step


def _resolve_budget(pkg: Package) -> float:
    budget = st.session_state.get("ma_budget")
    from_url = st.session_state.pop("ma_budget_from_url", False)
    from_package = budget is None or not math.isfinite(budget) or budget < 0
    if from_package:
        budget = pkg.default_budget()
    # With every external store's memories (QA s47: a store costing more than the candidates
    # was cut to fit a budget said to fit everything). One cap for all stores: the budget is
    # shared by every page and store, and choosing another store must not clamp it.
    ceiling = cost_total(pkg, None)
    total = ceiling.total
    if budget > total and total > 0:
        # Never a silent clamp: a sweep range past the total cost, clicked on the Budget sweep,
        # reaches here without a link (review). The package's own budget gets the same rule
        # (QA s20a: "budget": 1e308 opened unclamped, with a slider to 1e308, and was clamped
        # on the next page as "The budget").
        where = "budget={:.10g} in the link" if from_url else "The budget {:.10g}"
        if from_package:
            where = "The package's budget {:.10g}"
        state.add_problem(
            f"{where.format(budget)} is above "
            f"{_md_escape_inline(ceiling.describe(pkg.cost_unit))}; {ceiling.what_fits} "
            f"fits, so the budget is set to {total:g}."
        )
        return state.normalise_budget(total)
    return float(budget)


#: Where :func:`budget_neighbours` finds this run's budget and the slider's step either side.
NEIGHBOURS_KEY = "ma_budget_neighbours"


def budget_neighbours(budget: float) -> tuple[float, ...]:
    """The budgets one slider step below and above ``budget`` (within the slider's range), the
    one in the direction of the last move first; empty unless ``budget`` is the sidebar's
    budget of this run. :mod:`memaudit_ui.prefetch` computes their views in the background.
    """
    recorded = st.session_state.get(NEIGHBOURS_KEY)
    if not recorded or recorded[0] != budget:
        return ()
    return recorded[1]


def _record_neighbours(budget: float, step: float, upper: float) -> None:
    below, above = state.normalise_budget(budget - step), state.normalise_budget(budget + step)
    previous = st.session_state.get(NEIGHBOURS_KEY)
    order = (below, above) if previous and previous[0] > budget else (above, below)
    neighbours = tuple(b for b in order if 0.0 <= b <= upper and b != budget)
    st.session_state[NEIGHBOURS_KEY] = (budget, neighbours)


def _budget_slider(pkg: Package, budget: float) -> float:
    ceiling = cost_total(pkg, None)
    total = ceiling.total
    step = _fitting_step(budget_step(pkg), budget)
    upper = max(total, budget, step)
    sync_widget("w_budget", float(budget))
    st.slider(
        f"Budget ({pkg.cost_unit})",
        min_value=0.0,
        max_value=float(upper),
        step=step,
        format="%g",
        key="w_budget",
        on_change=set_from_widget,
        args=("ma_budget", "w_budget"),
        help=f"0 to {_md_escape_inline(ceiling.describe(pkg.cost_unit))}; the package "
        f"default is "
        f"{pkg.default_budget():g}. Keyboard: focus the slider, then the arrow keys.",
    )
    chosen = state.normalise_budget(st.session_state["w_budget"])
    _record_neighbours(chosen, step, upper)
    return chosen


def _store_picker(pkg: Package, note: DropNote) -> str:
    opts = store_options(pkg)
    store_key = st.session_state.get("ma_store")
    from_url = st.session_state.pop("ma_store_from_url", False)
    if store_key not in opts:
        failed = _load_failure(store_key)
        if store_key is not None and note.switched and not from_url:
            # Chosen on the previous package (switch_package kept it), not here.
            note.add(
                f"the sidebar's writer / store {md_code_span(str(store_key))} (now "
                f"{_md_escape_inline(store_label(pkg, default_store_key(pkg)))})"
            )
        if failed is not None and from_url:
            # QA s42 (defect 4): a plugin named in MEMAUDIT_WRITER_MODULES that failed to load
            # was called "not a writer this server knows"; say it failed, and why.
            state.add_problem(
                f"store={md_value(str(store_key))} in the link: "
                f"{_md_escape_inline(failed)}; showing the default."
            )
        elif store_key is not None and from_url:
            state.add_problem(
                f"store={md_value(str(store_key))} in the link is not a "
                "store of this "
                "package or a writer this server knows (reference writers, and plugin writers "
                "installed as `memaudit.writers` entry points or named in "
                "MEMAUDIT_WRITER_MODULES when the app started); showing the default."
            )
        store_key = default_store_key(pkg)
    sync_widget("w_store", store_key)
    st.selectbox(
        "Writer / store",
        opts,
        key="w_store",
        format_func=lambda k: store_label(pkg, k),
        on_change=set_from_widget,
        args=("ma_store", "w_store"),
        help="The store the pages score: one of the package's stores, a reference writer or a "
        "plugin writer (blind: sees only texts, types and costs; oracle: exact marginals) "
        "run at the budget. Plugin writers: entry points of the `memaudit.writers` group, or "
        "MEMAUDIT_WRITER_MODULES=module:function when the app starts (see the README).",
    )
    # A plugin the CLI's `writers` would warn about was dropped here unsaid (plugin QA: an
    # entry point named gvt, a module that does not import).
    for warning in plugin_discovery_warnings():
        st.sidebar.warning(warning, icon="⚠️")
    for error in plugin_module_errors():
        st.sidebar.error(error, icon="🚨")
    return st.session_state["w_store"]


def _load_failure(store_key: object) -> str | None:
    """Why the plugin writer a ``writer:`` store key names failed to load, if it did."""
    from memaudit_core.plugins import LOAD_FAILURES

    kind, _, name = str(store_key).partition(":")
    return LOAD_FAILURES.get(name.strip()) if kind == "writer" else None


#: Why each MEMAUDIT_PLUGIN_MODULES module failed to import (None until imported).
_plugin_module_errors: list[str] | None = None


def plugin_module_errors() -> list[str]:
    """Import the modules named in MEMAUDIT_PLUGIN_MODULES, once per server process, and say
    why any failed: they register saturations that packages name (library QA s48: the app had
    no route for one), so this runs before the first package is read."""
    global _plugin_module_errors
    if _plugin_module_errors is None:
        from memaudit_core.plugins import PLUGIN_MODULES_ENV, env_plugin_modules
        from memaudit_core.plugins import import_plugin_modules as load

        failed = load(env_plugin_modules(), source=PLUGIN_MODULES_ENV)
        _plugin_module_errors = [str(e) for e in failed]
    return list(_plugin_module_errors)


def plugin_discovery_warnings() -> list[str]:
    """What plugin discovery could not register (all_writers() has run discovery)."""
    from memaudit_core.plugins import DISCOVERY_WARNINGS

    return list(DISCOVERY_WARNINGS)


#: Set once the long-lived heap has been frozen (:func:`_freeze_long_lived_heap`).
_heap_frozen = False


def _freeze_long_lived_heap() -> None:
    """Once per process: move what is alive now out of the garbage collector's reach.

    Streamlit runs a full ``gc.collect(2)`` after every script run (``runner.postScriptGC``),
    before the browser hears that the run has ended. Its cost grows with the number of objects
    the collector tracks, and the imports alone (Streamlit, Tornado, pandas, pyarrow, plotly,
    numpy, scipy, HiGHS, the core) leave a few hundred thousand: ~130 ms per rerun on this
    machine, more than the Compare page's whole script. ``gc.freeze`` moves them to the
    permanent generation, which collections skip; objects created later (views, caches,
    sessions) are collected as before. It runs once, after a collection, so it pins only
    objects alive at that moment (module-level state that lives as long as the server anyway,
    plus the first run's own short-lived objects: a bounded, one-off amount).
    """
    global _heap_frozen
    if _heap_frozen:
        return
    _heap_frozen = True
    # The heavy modules pages import lazily (first solve, first table, first chart), so they
    # are frozen too rather than scanned after every run.
    import pandas  # noqa: F401
    import plotly.graph_objects  # noqa: F401
    import pyarrow  # noqa: F401

    import memaudit_core.analysis  # noqa: F401
    import memaudit_core.explain  # noqa: F401
    import memaudit_core.reports  # noqa: F401

    gc.collect()
    gc.freeze()


def frame(
    page_title: str,
    settings: Callable[[Package, str, float], Sequence[LinkSetting]] | None = None,
    *,
    page_writes_url: bool = False,
) -> Frame:
    """Draw the shared sidebar and return the current choices. Call first on every page.

    ``settings(package, store_key, budget)`` returns the page's :class:`LinkSetting` list: resolved
    here, before the sidebar's links and the run's one URL write, so both carry them.
    ``page_writes_url``: the page makes that write itself (:func:`state.sync_url` with its
    page title), with a parameter known only once its view is computed (the Evidence
    explorer's focus unit); two writes in one run were two browser history entries, and Back
    stopped on the view in between (QA s47)."""
    _freeze_long_lived_heap()
    state.init_from_url(page_title)
    present = bool(st.session_state.get("ma_present", False))
    st.set_page_config(
        page_title=f"MemAudit · {page_title}",
        layout="wide",
        initial_sidebar_state="collapsed" if present else "expanded",
    )
    st.html(BASE_CSS + (PRESENT_CSS if present else ""))
    if present:
        if not st.session_state.get(PRESENT_WAS_KEY, False):
            st.session_state[PRESENT_STARTS_KEY] = st.session_state.get(PRESENT_STARTS_KEY, 0) + 1
        start = str(st.session_state[PRESENT_STARTS_KEY])
        st.html(PRESENT_SIDEBAR_HTML.replace("__START__", start), unsafe_allow_javascript=True)
    st.session_state[PRESENT_WAS_KEY] = present

    switched = bool(st.session_state.pop(SWITCH_KEY, False))
    plugin_module_errors()  # shown in the sidebar; before a package naming their saturation
    key, pkg = _resolve_package()
    upload_names = dict(st.session_state.get("ma_upload_names", {}))
    note = DropNote(sources.describe_key(key, upload_names.get(key)), switched)
    with st.sidebar:
        st.markdown("### MemAudit")
        # Filled once the package, budget and store are resolved below, so that the links
        # carry all of them (a link without store= made the next page push a second history
        # entry when it wrote its default store: Back then took two presses).
        links_box = st.container()
        # Between the page links and the package, in the divider's place: below the store
        # picker it sat under the fold of a 1280 x 720 screen (QA s44), and above the links it
        # pushed the store picker there instead.
        sync_widget("w_present", present)
        st.toggle(
            "Presentation mode",
            key="w_present",
            on_change=set_from_widget,
            args=("ma_present", "w_present"),
            help="Larger text and charts, one chart per screen, sidebar collapsed; kept in the "
            "link as present=1.",
        )

        options = list(sources.sample_files())
        for extra in st.session_state.get("ma_extra_packages", []):
            if extra not in options:
                options.append(extra)
        if key not in options:
            options.append(key)
        sync_widget("w_package", key)
        st.selectbox(
            "Package",
            options,
            key="w_package",
            format_func=lambda k: sources.describe_key(k, upload_names.get(k)),
            on_change=_on_package_change,
            help="Bundled samples, your uploads and packages made on the Generator page.",
        )
        budget = _budget_slider(pkg, _resolve_budget(pkg))
        st.session_state["ma_budget"] = budget
        store_key = _store_picker(pkg, note)
        st.session_state["ma_store"] = store_key
        st.session_state[STORE_IS_DEFAULT_KEY] = store_key == default_store_key(pkg)
        page_settings = list(settings(pkg, store_key, budget)) if settings is not None else []
        link_warnings = _resolve_link_settings(page_title, page_settings, note)

        # Below the controls a demo uses on every page: above them, the uploader pushed the
        # writer / store picker off a 1280 x 720 screen (QA s20c).
        st.file_uploader(
            f"Upload a package (.json, or an artifact .zip; at most {sources.MAX_UPLOAD_MB} MB)",
            # Any file is taken and validated, so a wrong one gets the app's located error
            # (Streamlit's own type check only shows a tooltip on the file chip).
            key="w_upload",
            on_change=_handle_upload,
            help=f"Validated before use; files above {sources.MAX_UPLOAD_MB} MB are refused. A "
            ".zip is read as an artifact package (its JSONL tables), as `memaudit import "
            f"artifact` reads it, if they unpack to at most {sources.MAX_UPLOAD_MB} MB.",
        )
        upload_error = st.session_state.get("ma_upload_error")
        if upload_error and upload_error[-1] != key:
            st.session_state.pop("ma_upload_error", None)
            upload_error = None
        if upload_error:
            source, count, _first, listing, _open_key = upload_error
            st.error(
                f"**{_md_escape_inline(source)} was not loaded** ({count}); the "
                f"previous package stays open.\n\n{listing}"
            )

        with links_box:
            for path, label in PAGES:
                if (REPO_ROOT / path).exists():
                    st.page_link(path, label=label, query_params=state.page_link_params(label))
    if upload_error:
        # App QA: the error sat below the fold of the sidebar while the page stayed as it
        # was, so a failed upload looked like no upload at all.
        source, count, first, _listing, _open_key = upload_error
        st.error(
            f"**{_md_escape_inline(source)} was not loaded** ({count}, listed in the sidebar "
            "under the uploader); the previous package stays open. "
            f"First: {md_code_span(first)}",
            icon=":material/upload_file:",
        )
    for error in state.pop_errors():
        st.error(_guard_shortcodes(error), icon=":material/link_off:")
    for problem in state.pop_problems():
        st.warning(_guard_shortcodes(problem), icon=":material/link_off:")
    for warning in link_warnings:
        st.warning(_guard_shortcodes(warning), icon=":material/link_off:")
    for link_note in state.pop_notes():
        st.info(_guard_shortcodes(link_note), icon=":material/link_off:")
    note.place()
    if not page_writes_url:
        state.sync_url(page_title=page_title)
    _check_plugin_writer(pkg, budget, store_key, page_title)
    return Frame(key, pkg, budget, store_key, present, {s.url: s for s in page_settings}, note)


#: Pages that score the sidebar's store: a failing plugin writer stops them with its error.
STORE_PAGES = {"Compare", "Evidence explorer"}


def _check_plugin_writer(pkg: Package, budget: float, store_key: str, page_title: str) -> None:
    """Run a plugin writer once (cached by content hash, writer and budget in
    :mod:`memaudit_core.plugins`, so reruns spawn no worker) and show its error, if any,
    without a traceback."""
    kind, _, name = store_key.partition(":")
    info = WRITERS.get(name) if kind == "writer" else None
    if info is None or not info.is_plugin:
        return
    from memaudit_core import plugins
    from memaudit_core.analysis import compile_cached
    from memaudit_core.writers import run_writer

    # Plugin QA: the page stayed blank for the whole of a slow writer's run.
    limit = f", at most {plugins.DEFAULT_TIMEOUT:g} s" if info.kind == "blind" else ""
    try:
        with st.spinner(f"Running the {info.kind} writer {name} at budget {budget:.10g}{limit}…"):
            run_writer(name, compile_cached(pkg), budget, package=pkg)
    except MemAuditError as exc:
        offending = getattr(exc, "offending", ())
        # Quoted and cut (QA s42, defects 2 and 3: a trailing space was invisible, and a
        # 10**7-character id made a 20 MB error box).
        shown = ", ".join(md_value(o) for o in offending[:20])
        more = f", ... ({len(offending) - 20:,} more)" if len(offending) > 20 else ""
        extra = f"\n\nOffending: {shown}{more}" if offending else ""
        st.error(
            f"**The {info.kind} writer {_md_escape_inline(name)} failed at budget {budget:.10g}.**"
            f"\n\n{_md_escape_inline(str(exc))}{extra}\n\nPick another writer or store in the "
            "sidebar.",
            icon=":material/extension_off:",
        )
        if page_title in STORE_PAGES:
            state.sync_url(page_title=page_title)  # the page stops before its own write
            st.stop()


_MD_SPECIAL = set("\\`*_{}[]()#+-.!|<>~$:=")


def _md_escape(text: str) -> str:
    """Escape Markdown so package-provided text renders literally.

    >>> print(_md_escape("*bold* [link](x)"))
    \\*bold\\* \\[link\\]\\(x\\)
    """
    return _guard_shortcodes("".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in text))


md_escape = _md_escape


def package_warning_md(warning: str) -> str:
    """A package warning for ``st.warning``: its JSON path in a code span and its rule, as the
    CLI names them (QA s51, cli defect 8), and the message escaped (its ``$`` paths and quoted
    ids are text: two ``$`` would otherwise open a formula). A text without path and rule is
    escaped whole.

    >>> print(package_warning_md("$.units[0]: unit 'u' weighs 0 (rule: unit-weighs-nothing)"))
    `$.units[0]`: unit 'u' weighs 0 (rule: unit-weighs-nothing)
    """
    parts = warning_parts(warning)
    if parts is None:
        return _md_escape_inline(warning)
    # The rule is kebab-case (letters, digits, "-"): nothing in it is Markdown.
    return (
        f"{md_code_span(parts['path'])}: {_md_escape_inline(parts['message'])} "
        f"(rule: {parts['rule']})"
    )


_MD_INLINE_SPECIAL = set("\\`*_{}[]()#+!|<>~$")
#: Streamlit turns ":name:" into an emoji even after a backslash ("sample:memo: ..." showed a
#: memo icon), but not inside a code span (remark-emoji's pattern, on the unescaped text).
_SHORTCODE = re.compile(r":[\w+-]+:")
#: A word of escaped Markdown: escapes and characters that are neither space nor Markdown
#: syntax left unescaped (``_`` is kept: "a:b_c:d" is one text, and ":b_c:" a shortcode).
_MD_WORD = re.compile(r"(?:\\[!-/:-@\[-`{-~]|[^\s\\*\[\](){}<>`!|~#$])+")
#: A backslash escape of CommonMark (only ASCII punctuation is escaped).
_MD_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
#: A word's opening brackets and closing punctuation, left outside its code span: "(u:a:b)."
#: quotes the id, not the sentence around it.
_WORD_EDGES = re.compile(r"^((?:\\[(\[{])*)(.*?)((?:\\?[.,;:!?]|\\[)\]}])*)$", re.DOTALL)


def problem_list_md(lines: Sequence[str], limit: int = 30) -> str:
    """A package's or an export's problems as a Markdown list, one code span each, the first
    ``limit`` of them and how many more."""
    shown = "\n".join(f"- {md_code_span(line)}" for line in lines[:limit])
    more = f"\n- … and {len(lines) - limit} more" if len(lines) > limit else ""
    return shown + more


def package_error_md(exc: PackageError, limit: int = 30) -> str:
    """:func:`problem_list_md` of ``exc``'s problems, then, when checking stopped at the
    problem cap, the line saying so (the "… and N more" counts problems found, not that line).
    """
    found = [p.format(exc.source) for p in exc.found]
    stop = [p.format(exc.source) for p in exc.problems if p.rule == PROBLEM_LIMIT_RULE]
    return problem_list_md(found, limit) + "".join(f"\n- {md_code_span(line)}" for line in stop)


def history_note(store: Any) -> str:
    """The clause of an import's success message (Markdown) that says which Mem0 history was
    read, then what the import kept and left out, in the CLI header's words and counts
    (:func:`memaudit_core.importers.import_counts_text`: QA s51 saw "1 superseded version"
    here and "0 superseded kept" in the CLI for one import).

    Without it a history upload looked the same whether it took effect or not.

    >>> from memaudit_core.package import Store
    >>> meta = {"history_file": "h.json", "history": "json history: 3 row(s)",
    ...         "deleted": [{"id": "m2"}], "superseded_versions": 1}
    >>> note = history_note(Store("s", meta=meta)).replace(chr(92), "")  # no Markdown escapes
    >>> print(note.replace("): ", "):\\n"))
    , with history h.json (json history: 3 row(s)):
    0 superseded kept, 1 earlier version replaced by an update (not kept), 1 deleted not kept (m2)

    An export that marks memories deleted itself (an OpenMemory backup's ``state``, Mem0
    ``add()`` output) says them without a history:

    >>> history_note(Store("s", meta={"deleted": [{"id": "m2"}]})).replace(chr(92), "")
    '; 0 superseded kept, 1 deleted not kept (m2)'
    >>> history_note(Store("s", meta={"deleted": []}))
    ''
    """
    from memaudit_core.importers import import_counts, import_counts_text

    meta = store.meta
    deleted = [str(d.get("id") if isinstance(d, dict) else d) for d in meta.get("deleted", [])]
    numbers = import_counts(store)
    counts = _md_escape(import_counts_text(numbers, deleted))
    read = meta.get("history")
    if not read:
        # Nothing superseded or left out is not worth a clause.
        quiet = not (numbers["superseded"] or numbers["superseded_versions"] or deleted)
        return "" if quiet else f"; {counts}"
    named = meta.get("history_file")
    return (
        f", with history {_md_escape(named) + ' ' if named else ''}{_md_escape(f'({read})')}: "
        f"{counts}"
    )


#: A code span of Markdown (a backtick run not escaped, its text, a run of the same length).
_CODE_SPAN = re.compile(r"(?<![\\`])(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)


def _guard_shortcodes(text: str) -> str:
    """``text`` (Markdown) with each word that holds a shortcode, outside code spans, put in a
    code span of its own: it shows no emoji, and what is copied is the text. QA s47: a word
    joiner (U+2060) after the colon guarded it before, and an id copied from a message (the
    Evidence explorer's "showing 'u:dates:invalid' instead") was not the id.

    >>> print(_guard_shortcodes(_md_escape("unit u:a:b: shown (x:y:z).")))
    unit `u:a:b`\\: shown \\(`x:y:z`\\)\\.
    >>> print(_guard_shortcodes(":smile: and 'u:heart:x' `a:b:c`"))
    `:smile:` and `'u:heart:x'` `a:b:c`
    """
    parts = []
    end = 0
    for span in _CODE_SPAN.finditer(text):
        parts.append(_MD_WORD.sub(_quote_shortcode_word, text[end : span.start()]))
        parts.append(span.group(0))
        end = span.end()
    parts.append(_MD_WORD.sub(_quote_shortcode_word, text[end:]))
    return "".join(parts)


def _quote_shortcode_word(word: re.Match[str]) -> str:
    """The Markdown ``word`` as it is, or in a code span if its text holds a shortcode."""
    plain = _MD_ESCAPED.sub(r"\1", word.group(0))
    if not _SHORTCODE.search(plain):
        return word.group(0)
    lead, core, trail = _WORD_EDGES.fullmatch(word.group(0)).groups()  # type: ignore[union-attr]
    core_plain = _MD_ESCAPED.sub(r"\1", core)
    if not _SHORTCODE.search(core_plain):
        # The shortcode ends in the trailing punctuation (":smile:"): all of it is quoted.
        return md_code_span(plain)
    return lead + md_code_span(core_plain) + trail


def _md_escape_inline(text: str) -> str:
    """Escape Markdown inside a line (keeps ``.``, ``-`` and ``:`` readable in raw text)."""
    escaped = "".join("\\" + ch if ch in _MD_INLINE_SPECIAL else ch for ch in text)
    return _guard_shortcodes(escaped)
