"""Generator: build a package from a registered family, preview it, open it or download it."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from memaudit_core.errors import MemAuditError
from memaudit_core.generators import FAMILIES
from memaudit_core.package import Package, dumps_package
from memaudit_ui import cached, figures, render, sources
from memaudit_ui.frame import frame, md_escape

#: Rows shown in each sample table (the full package can be large).
SAMPLE_ROWS = 12
#: Non-widget key holding the last previewed spec (widget state is dropped between pages).
SPEC_KEY = "ma_gen_spec"

ctx = frame("Generator")

st.title("Generator")
st.caption(
    "Build a package from one of the generator families, look at it, then open it in every "
    "page of the app or download its canonical JSON. A generated package is a pure function of "
    "family, seed and parameters, so its link works on any server."
)

spec: dict[str, Any] | None = st.session_state.get(SPEC_KEY)
names = list(FAMILIES)
if "gen_family" not in st.session_state:
    st.session_state["gen_family"] = spec["family"] if spec else names[0]
family = st.selectbox(
    "Family",
    names,
    key="gen_family",
    format_func=lambda n: f"{n} — {FAMILIES[n].description}",
)
fam = FAMILIES[family]
defaults = fam.defaults()
previous = spec if spec and spec["family"] == family else None


def _seed_widget(key: str, value: object) -> None:
    # Seed a widget from the last preview (or the default) without passing value= as well.
    if key not in st.session_state:
        st.session_state[key] = value


def _param_input(name: str, default: object) -> object:
    key = f"gen_{family}_{name}"
    value = previous["params"].get(name, default) if previous else default
    _seed_widget(key, value)
    help_text = fam.param_help.get(name, "") + f" (default: {default!r})"
    if isinstance(default, bool):
        return st.checkbox(name, key=key, help=help_text)
    if isinstance(default, int):
        return int(st.number_input(name, step=1, key=key, help=help_text))
    if isinstance(default, float):
        step = 0.05 if abs(default) <= 1 else 0.5
        return float(st.number_input(name, step=step, format="%g", key=key, help=help_text))
    return st.text_input(name, key=key, help=help_text)


with st.form(f"gen_form_{family}"):
    seed_key = f"gen_{family}_seed"
    _seed_widget(seed_key, previous["seed"] if previous else 0)
    seed = int(
        st.number_input(
            "Seed",
            min_value=0,
            max_value=2**31 - 1,
            step=1,
            key=seed_key,
            disabled=not fam.seeded,
            help="Every random draw derives from this seed."
            if fam.seeded
            else "This family is seed-invariant: every seed gives the same package.",
        )
    )
    if not fam.seeded:
        seed = 0
    params: dict[str, object] = {}
    items = list(defaults.items())
    for start in range(0, len(items), 3):
        for col, (name, default) in zip(st.columns(3), items[start : start + 3], strict=False):
            with col:
                params[name] = _param_input(name, default)
    if not items:
        st.caption("This family has no parameters.")
    if st.form_submit_button("Preview", type="primary", icon=":material/visibility:"):
        spec = {
            "family": family,
            "seed": seed,
            "params": params,
            "key": sources.generated_key(family, seed, params),
        }
        st.session_state[SPEC_KEY] = spec
        previous = spec

if previous is None:
    st.info("Set the parameters and press **Preview**.")
    st.stop()

key = previous["key"]
try:
    pkg: Package = sources.load_by_key(key)
except MemAuditError as exc:
    st.error(f"These parameters do not make a package: {exc}")
    st.stop()

stats = cached.package_stats_by_key(pkg, key)

st.subheader(f"Preview · {md_escape(stats.title)}")
st.caption(
    f"Package key `{key}` · id `{stats.package_id}` · content hash `{stats.content_hash[:16]}`"
)
for warning in stats.warnings:
    st.warning(warning)

per_row = 2 if ctx.present else 4
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
for start in range(0, len(metrics), per_row):
    cols = st.columns(per_row)
    for col, (label, value) in zip(cols, metrics[start : start + per_row], strict=False):
        col.metric(label, value)

b1, b2, _ = st.columns([1, 1, 3])
open_clicked = b1.button(
    "Open in the app",
    type="primary",
    icon=":material/open_in_new:",
    help="Make this package the current one and go to the Overview page.",
)
b2.download_button(
    "Download JSON",
    lambda: dumps_package(pkg).encode("utf-8"),
    file_name=render.safe_filename(f"{stats.package_id}-seed{previous['seed']}") + ".json",
    mime="application/json",
    on_click="ignore",
    icon=":material/download:",
    help="The canonical package JSON (format v1), ready to upload or to diff.",
)
if open_clicked:
    extras = st.session_state.setdefault("ma_extra_packages", [])
    if key not in extras:
        extras.append(key)
    st.session_state["ma_package"] = key
    st.session_state["ma_budget"] = None
    st.session_state["ma_store"] = None
    st.switch_page("app.py")

types, counts = (
    zip(*stats.candidates_by_type, strict=True) if stats.candidates_by_type else ((), ())
)
kinds = [k for k, _, _ in stats.units_by_kind]
type_fig = figures.count_bars(types, counts, "Candidates by type", "candidate type", ctx.present)
kind_fig = figures.count_bars(
    kinds,
    [n for _, n, _ in stats.units_by_kind],
    "Evidence units by kind",
    "unit kind",
    ctx.present,
    color="#3a9d5d",
)
if ctx.present:
    render.chart(type_fig, "gen_types", f"{stats.package_id}-candidate-types")
    render.chart(kind_fig, "gen_kinds", f"{stats.package_id}-unit-kinds")
else:
    left, right = st.columns(2)
    with left:
        render.chart(type_fig, "gen_types", f"{stats.package_id}-candidate-types")
    with right:
        render.chart(kind_fig, "gen_kinds", f"{stats.package_id}-unit-kinds")


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
