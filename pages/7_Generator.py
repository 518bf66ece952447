"""Generator: build a package from a registered family, preview it, open it or download it."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from memaudit_core.errors import MemAuditError
from memaudit_core.generators import (
    FAMILIES,
    MAX_GENERATED_SIZE,
    check_seed,
    estimated_size,
    generate_command,
    package_file_stem,
)
from memaudit_core.package import Package, dumps_package
from memaudit_core.specs import PLAIN_INT_RULE
from memaudit_ui import cached, render, sources, state
from memaudit_ui.frame import (
    LinkSetting,
    frame,
    go_to,
    md_escape,
    package_warning_md,
    set_link_setting,
    switch_package,
)

#: Rows shown in each sample table (the full package can be large).
SAMPLE_ROWS = 10
#: Non-widget key holding the last previewed spec (widget state is dropped between pages).
SPEC_KEY = "ma_gen_spec"
#: The largest seed the form holds: a browser's number box is exact up to 2^53 - 1.
MAX_FORM_SEED = 2**53 - 1
PAGE = "Generator"
#: Counts Preview presses; the run a press starts confirms it under the button and scrolls to
#: the preview (QA s51 m5: at 1280x800 a family with 6+ parameters fills the screen, so the
#: preview came below the fold and pressing Preview seemed to do nothing).
PRESSED_KEY = "ma_gen_pressed"
#: The preview heading's anchor, scrolled to after a press.
PREVIEW_ANCHOR = "gen-preview"
#: The link parameter naming the previewed package (its key), when it is not the open package:
#: a preview lived in the session only, so its link opened a blank form (QA s48).
PREVIEW = "preview"


def _preview_problem(values: dict[str, Any]) -> str | None:
    """Why the link's ``preview`` cannot be previewed, or None (asked only of a link's value)."""
    if not values[PREVIEW].strip():
        # No preview, as a link without it: the setting's default is "", and a text setting's
        # empty value is its default on every page (QA s48: `preview=` was warned about).
        return None
    try:
        _key, pkg, _note = sources.generated_package(values[PREVIEW])
    except MemAuditError as exc:
        return str(exc)
    seed = pkg.meta["seed"]
    if seed > MAX_FORM_SEED:
        return (
            f"its seed {seed} is larger than this form can hold ({MAX_FORM_SEED}); open it as "
            "package= instead"
        )
    return None


def _link_settings(*_: object) -> list[LinkSetting]:
    return [
        LinkSetting(
            "gen_preview",
            PREVIEW,
            "",
            check=_preview_problem,
            check_with=(PREVIEW,),
            label="previewed package",
        )
    ]


# The page writes the URL once it knows what it previews.
ctx = frame(PAGE, _link_settings, page_writes_url=True)
preview_setting = ctx.settings[PREVIEW]

st.title("Generator")
st.caption(
    "Build a package from one of the generator families, look at it, then open it in every "
    "page of the app or download its canonical JSON. A generated package is a pure function of "
    "family, seed and parameters, so its link works on any server."
)

#: Non-widget mirror of the inputs (widget key -> value). Widget state is dropped when the
#: user leaves the page, and a stale ``st.session_state[widget_key]`` can outlive it, so the
#: widgets are assigned from this mirror on every run and the mirror is updated in callbacks.
INPUTS_KEY = "ma_gen_inputs"

spec: dict[str, Any] | None = st.session_state.get(SPEC_KEY)
inputs: dict[str, Any] = st.session_state.setdefault(INPUTS_KEY, {})
names = list(FAMILIES)
# A blank link value is no preview (_preview_problem let it through).
linked_preview: str = st.session_state.get(preview_setting.mirror, "").strip()
linked_key, linked_package = ctx.package_key, ctx.package
if linked_preview and (spec is None or spec.get("key") != linked_preview):
    # A preview this session did not make: a shared link, or Back / Forward to one. The form
    # starts from it (as from an open generated package, below) and it is the preview.
    try:
        linked_key, linked_package, _note = sources.generated_package(linked_preview)
    except MemAuditError as exc:  # the frame checked a link's value; this is a stale one
        st.error(f"No preview of {state.md_value(linked_preview)}: {md_escape(str(exc))}")
        linked_preview = ""
    else:
        if _note:
            st.info(_note, icon=":material/link_off:")
        _meta = linked_package.meta
        spec = {"family": _meta["generator"], "seed": _meta["seed"], "key": linked_key}
        st.session_state[SPEC_KEY] = spec
        inputs.clear()
elif linked_preview:
    # The session's own preview: the form starts from it on every run, not from the open
    # package (a link's preview made no inputs of its own).
    try:
        linked_key, linked_package = linked_preview, sources.load_by_key(linked_preview)
    except MemAuditError:
        pass  # parameters that make no package: the form holds them, the error is below
elif st.session_state.get(state.URL_ADOPTED_KEY) and spec and spec.get("key") != ctx.package_key:
    # Back / Forward to a view that previewed nothing but the open package: so does the page.
    st.session_state.pop(SPEC_KEY, None)
    spec = None
    inputs.clear()


def _remember(*keys: str) -> None:
    for key in keys:
        if key in st.session_state:
            inputs[key] = st.session_state[key]


# A first visit opened on a generated package starts from its family and seed (app QA: it
# started on memaudit-small, seed 0, whatever the link said).
# Its parameters too, as the package records them (QA: a link with n_experiences=20 showed
# the default 50, and Preview built another package than the one open).
linked_family, linked_seed, linked_params = names[0], 0, {}
if linked_key.startswith("gen:"):
    _name, _, _tail = linked_key.removeprefix("gen:").partition(":")
    _seed_text = _tail.partition(":")[0]
    if _name in FAMILIES:
        linked_family = _name
        linked_seed = int(_seed_text) if _seed_text.isascii() and _seed_text.isdigit() else 0
        if linked_seed > MAX_FORM_SEED:
            # App QA: a seed of 3,000,000,000 (the CLI takes any) became 0 in the form without
            # a word, and Preview built another package.
            st.warning(
                f"The open package's seed ({linked_seed}) is larger than this form can hold "
                f"({MAX_FORM_SEED}); the form starts at seed 0. The package itself stays open; "
                "`memaudit generate` takes any seed."
            )
            linked_seed = 0
        _meta = linked_package.meta
        if _meta.get("generator") == _name and isinstance(_meta.get("params"), dict):
            linked_params = _meta["params"]
st.session_state["gen_family"] = inputs.get("gen_family", spec["family"] if spec else linked_family)
family = st.selectbox(
    "Family",
    names,
    key="gen_family",
    on_change=_remember,
    args=("gen_family",),
    help="Every registered generator family; its parameters appear below.",
)
fam = FAMILIES[family]
st.caption(md_escape(fam.description))
# QA s42 (defect 5): the app's cap was said only by a refusal, while the parameters' help (and
# `memaudit generate --list`) gives the CLI's ranges, e.g. event_graph up to 200,000 turns.
_turn_size = estimated_size("event_graph", n_experiences=1) or 1.0
st.caption(
    f"The app builds packages of at most {sources.APP_MAX_GENERATED_SIZE:,} estimated "
    "candidates plus coverage entries (an event_graph of at most "
    f"{int(sources.APP_MAX_GENERATED_SIZE // _turn_size):,} turns), since a link alone can ask "
    "for one. The parameters' help gives the ranges of `memaudit generate`, which builds up to "
    f"{MAX_GENERATED_SIZE:,}."
)
defaults = fam.defaults()
#: The integer parameters: text boxes read by the core's rule (see _param_input).
wholes = {n for n, d in defaults.items() if isinstance(d, int) and not isinstance(d, bool)}
previous = spec if spec and spec["family"] == family else None
seed_key = f"gen_{family}_seed"
param_keys = {name: f"gen_{family}_{name}" for name in defaults}


def _assign(key: str, default: object) -> None:
    st.session_state[key] = inputs.get(key, default)


def _param_input(name: str, default: object) -> None:
    key = param_keys[name]
    linked = linked_params.get(name, default) if family == linked_family else default
    linked = linked if type(linked) is type(default) else default
    # An integer field is a text box whose text goes to the core as typed (QA s51 m2): a
    # number box sends the browser's number, so 1e3 and 3.0 arrived as 1000 and 3 and were
    # built, while `memaudit generate --param` and gen: links refuse them by the core's rule
    # (ASCII digits with an optional sign). QA s40, defect 1: Streamlit's int box read 2.5
    # as 2 without a word.
    whole = isinstance(default, int) and not isinstance(default, bool)
    _assign(key, str(linked) if whole else linked)
    help_text = fam.param_help.get(name, "") + f" (default: {default!r})"
    # value=None: an emptied box stays empty (QA s47, defect 1: Streamlit's non-nullable box
    # put its default 0 back, and Preview built update_rate=0.0 without a word).
    if isinstance(default, bool):
        st.checkbox(name, key=key, help=help_text)
    elif whole:
        st.text_input(name, key=key, help=help_text + f"; a whole number ({PLAIN_INT_RULE})")
    elif isinstance(default, float):
        step = 0.05 if abs(default) <= 1 else 0.5
        st.number_input(name, value=None, step=step, format="%g", key=key, help=help_text)
    else:
        st.text_input(name, key=key, help=help_text)


def _whole(value: object) -> object:
    """A browser number as the user meant it: 1000.0 (typed 1e3) is 1000; 2.5 stays 2.5 for
    the core to refuse (JavaScript has one number type, so every box sends a float)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _form_error(label: str, value: object) -> str | None:
    """The form's own rule: a browser's number box is exact only up to 2^53 - 1, so a larger
    integer typed there may arrive as another one (9007199254740993 comes as ...992)."""
    if isinstance(value, float) and value.is_integer() and value > MAX_FORM_SEED:
        return (
            f"{label}: {value:.17g} is larger than this form can hold exactly "
            f"({MAX_FORM_SEED}); `memaudit generate` takes any seed."
        )
    return None


#: Why a number box arrives empty: the browser sends nothing for text it cannot read as a
#: number, and a number too large for it (1e400) is such text.
EMPTY_BOX = (
    "empty: type a number (the browser leaves a box empty when its text is not a number, "
    "such as abc, or is too large to hold, such as 1e400)"
)


def _form_spec() -> dict[str, Any]:
    """The spec of the form's submitted values: family, seed, params and the package key, or
    an ``error`` instead of the key. The values go to the core unbounded and unrounded: its
    messages name the field and the rule (the page's min_value / max_value made the browser
    refuse them without a word)."""
    raw = st.session_state[seed_key] if fam.seeded else 0
    params: dict[str, object] = {}
    for name in defaults:
        # An integer parameter's text as typed: the core reads it (QA s51 m2).
        params[name] = st.session_state[param_keys[name]]
    spec_now: dict[str, Any] = {"family": family, "seed": _whole(raw), "params": params}
    # Empty boxes, named at once: a number box the browser left empty (None) or an integer
    # parameter's blank text box.
    empty = [
        name
        for name, value in [("Seed", raw), *params.items()]
        if value is None or (name in wholes and isinstance(value, str) and not value.strip())
    ]
    whole_only = all(name in wholes for name in empty)
    rule = f"empty: type a whole number ({PLAIN_INT_RULE})" if whole_only else EMPTY_BOX
    # Only the seed: any seed is valid, so an inexact one would build another package without
    # a word; a parameter that large meets the core's size rule first.
    problem = f"{', '.join(empty)}: {rule}" if empty else _form_error("Seed", raw)
    if problem is None:
        try:
            seed = check_seed(_whole(raw))
        except MemAuditError as exc:
            problem = f"Seed: {exc}"
        else:
            spec_now["seed"] = seed
            # The parameters are checked where they are used, by generate() in
            # sources.load_by_key below: the CLI's own messages.
            spec_now["key"] = sources.generated_key(family, seed, params)
    if problem is not None:
        spec_now["error"] = problem
    return spec_now


def _on_preview() -> None:
    """Runs before the script, with the submitted values: remember them, fix the spec.

    Every press replaces the spec, so a refused one clears the old preview (QA s40, defect 2:
    the preview of seed 3 stayed, with Open and Download, under a form saying seed -1)."""
    _remember(seed_key, *param_keys.values())
    spec_now = _form_spec()
    st.session_state[SPEC_KEY] = spec_now
    # This run shows where its answer is (QA s51 m5, see PRESSED_KEY).
    st.session_state[PRESSED_KEY] = st.session_state.get(PRESSED_KEY, 0) + 1
    # In the link from this run's frame on, so the sidebar's links carry it too; only a key
    # that loads (QA s49), which the page loads again from the cache below.
    key_now = spec_now.get("key")
    if key_now is not None:
        try:
            sources.load_by_key(key_now)
        except MemAuditError:
            key_now = None
    set_link_setting(PAGE, preview_setting, _preview_param(key_now))


def _preview_param(key: str | None) -> str:
    """The link's ``preview`` for a preview of ``key``: none for the open package, which a
    link without it previews (QA s47)."""
    return "" if key is None or key == st.session_state.get("ma_package") else key


with st.form(f"gen_form_{family}"):
    # A seed-invariant family is built at seed 0 (see _on_preview): the disabled box shows
    # that, not a linked seed Preview would not use (generator QA s38).
    _assign(seed_key, float(linked_seed if family == linked_family and fam.seeded else 0))
    fields: list[tuple[str, object]] = [("Seed", None), *defaults.items()]
    for start in range(0, len(fields), 3):
        for col, (name, default) in zip(st.columns(3), fields[start : start + 3], strict=False):
            with col:
                if name == "Seed" and default is None:
                    # A float box without bounds, checked in _on_preview (QA s40, defects 1
                    # and 2: 1.5 became 1; -1 was refused by the browser without a word).
                    st.number_input(
                        "Seed",
                        value=None,  # an emptied box stays empty (see _param_input)
                        step=1.0,
                        format="%g",
                        key=seed_key,
                        disabled=not fam.seeded,
                        help="Every random draw derives from this seed."
                        if fam.seeded
                        else "This family is seed-invariant: every seed gives the same package.",
                    )
                else:
                    _param_input(name, default)
    st.form_submit_button(
        "Preview", type="primary", icon=":material/visibility:", on_click=_on_preview
    )
# Right under the button: what a press made (filled below, once the preview is known).
pressed_status = st.empty()
pressed = st.session_state.get(PRESSED_KEY, 0)
just_pressed = pressed != st.session_state.get(PRESSED_KEY + "_shown", 0)
st.session_state[PRESSED_KEY + "_shown"] = pressed

spec = st.session_state.get(SPEC_KEY)
previous = spec if spec and spec["family"] == family else None
if previous is None and ctx.package_key.startswith("gen:"):
    # Before any Preview, a form showing the open generated package previews it (QA s47: a
    # shared link filled the form and showed no package). Matched by key: another family, or
    # a seed the form cannot hold (started at 0), previews nothing until Preview is pressed.
    _linked_spec = _form_spec()
    if _linked_spec.get("key") == ctx.package_key:
        previous = _linked_spec
pkg: Package | None = None
load_error = ""
if previous is not None and "error" not in previous:
    try:
        pkg = sources.load_by_key(previous["key"])
    except MemAuditError as exc:
        load_error = str(exc)
# Only a key that loads goes into the link (QA s49: normal_count=0, update_count=0 was written
# as preview=gen:..., which the page's own link reader then refused), as for a refused seed.
set_link_setting(PAGE, preview_setting, _preview_param(None if pkg is None else previous["key"]))
state.sync_url(page_title=PAGE)
if previous is None:
    st.info("Set the parameters and press **Preview**.")
    st.stop()


def _reveal_refusal() -> None:
    """After a press that previews nothing, scroll just enough to show the refusal under the
    button (QA s51 m5: at 1280x800 it came below the fold, unseen)."""
    if just_pressed:
        st.html(
            f"<script>/* {pressed} */ const a = [...document.querySelectorAll("
            '\'[data-testid="stMain"] [data-testid="stAlert"]\')].pop();'
            "if (a) a.scrollIntoView({block: 'nearest'});</script>",
            unsafe_allow_javascript=True,
        )


if "error" in previous:
    st.error(f"No preview: {md_escape(previous['error'])}")
    _reveal_refusal()
    st.stop()
if pkg is None:
    st.error(f"These parameters do not make a package: {load_error}")
    _reveal_refusal()
    st.stop()
key = previous["key"]

stats = cached.package_stats_by_key(pkg, key)

st.subheader(f"Preview · {md_escape(stats.title)}", anchor=PREVIEW_ANCHOR)
if just_pressed:
    pressed_status.success(
        f"Previewed **{md_escape(stats.title)}** (key `{key}`): [see it below](#{PREVIEW_ANCHOR}).",
        icon=":material/arrow_downward:",
    )

# The full hash and the CLI command, each in a code block with a copy button (QA s51 m3: 16
# hex digits only, so a file could not be checked against a published hash); the file name
# is the id, which names the seed already (QA s51 m6: "...-s4-...-seed4.json").
file_name = render.safe_filename(package_file_stem(pkg)) + ".json"
st.caption(
    f"Package key `{key}` · id `{stats.package_id}` · content hash (SHA-256 of the canonical "
    "JSON, as `memaudit validate` prints it):"
)
st.code(stats.content_hash, language=None)
command = generate_command(pkg, file_name)
if command is not None:
    st.caption("The same file from the CLI, byte for byte what **Download JSON** gives:")
    st.code(command, language="bash")
for warning in stats.warnings:
    st.warning(package_warning_md(warning))

# Three a row with the sidebar open, as on the Overview: four cut "Default budget (words)" at
# 1024 px (demo QA s48).
per_row = 2 if ctx.present else 3
metrics = [
    ("Experiences", f"{stats.n_experiences:,}"),
    ("Sessions", f"{stats.n_sessions:,}"),
    ("Candidates", f"{stats.n_candidates:,}"),
    ("Evidence units", f"{stats.n_units:,}"),
    ("Queries", f"{stats.n_queries:,}"),
    (f"Total cost ({stats.cost_unit})", f"{stats.total_cost:,.6g}"),
    (f"Default budget ({stats.cost_unit})", f"{stats.default_budget:,.6g}"),
    ("Saturation", stats.saturation),
]
render.metric_grid(metrics, per_row)

# A row as wide as the labels, wrapping when they do not fit: a fifth of the page each cut
# them at 1024 px ("Open i…", "Downl…", demo QA s48), as on External stores (QA s46).
b1 = b2 = st.container(horizontal=True, gap="small")
open_clicked = b1.button(
    "Open in the app",
    type="primary",
    icon=":material/open_in_new:",
    help="Make this package the current one and go to the Overview page.",
)
b2.download_button(
    "Download JSON",
    lambda: dumps_package(pkg).encode("utf-8"),
    file_name=file_name,
    mime="application/json",
    on_click="ignore",
    key="gen_download",
    icon=":material/download:",
    help="The canonical package JSON (format v1), ready to upload or to diff.",
)
if open_clicked:
    switch_package(key, listed=True)
    go_to("app.py")

render.composition_charts(stats, ctx.present, "gen")


def _short(text: str, n: int = 120) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _samples(p: Package) -> dict[str, pd.DataFrame]:
    weights = p.unit_weights()
    return {
        "Experiences": pd.DataFrame(
            [
                {"id": e.id, "time": e.time, "session": e.session or "", "text": _short(e.text)}
                for e in p.experiences[:SAMPLE_ROWS]
            ]
        ),
        "Candidates": pd.DataFrame(
            [
                {
                    "id": c.id,
                    "experience": c.experience,
                    "type": c.type,
                    f"cost ({p.cost_unit})": c.cost,
                    "units covered": len(c.coverage),
                    "text": _short(c.text),
                }
                for c in p.candidates[:SAMPLE_ROWS]
            ]
        ),
        "Evidence units": pd.DataFrame(
            [
                {"id": u.id, "kind": u.kind, "weight": weights[u.id], "text": _short(u.text)}
                for u in p.units[:SAMPLE_ROWS]
            ]
        ),
        "Queries": pd.DataFrame(
            [
                {
                    "id": q.id,
                    "weight": q.weight,
                    "requires": ", ".join(q.requires),
                    "text": _short(q.text),
                    "answer": _short(q.answer, 60),
                }
                for q in p.queries[:SAMPLE_ROWS]
            ]
        ),
    }


st.subheader("Sample")
st.caption(f"The first {SAMPLE_ROWS} rows of each table; download the JSON for all of them.")
totals = {
    "Experiences": stats.n_experiences,
    "Candidates": stats.n_candidates,
    "Evidence units": stats.n_units,
    "Queries": stats.n_queries,
}
samples = _samples(pkg)
for tab, (name, df) in zip(
    st.tabs([f"{name} ({totals[name]:,})" for name in samples]), samples.items(), strict=True
):
    with tab:
        render.table(df, f"gen_sample_{name}", f"{stats.package_id}-{name}-sample")

if just_pressed:
    # Bring the preview into view, last so that the page below it is there to scroll; the
    # nonce makes each press's script a new element, which React runs again. scroll-margin
    # keeps the heading clear of the app's top bar.
    st.html(
        f"<script>/* {pressed} */ const h = document.getElementById('{PREVIEW_ANCHOR}');"
        "if (h) { h.style.scrollMarginTop = '4rem'; h.scrollIntoView({block: 'start'}); }"
        "</script>",
        unsafe_allow_javascript=True,
    )
