"""Plotly figure builders: one function per chart, readable on a projector.

Builders take the core's frozen results (or plain columns from them) and only lay them out;
they never solve or score. Every figure has a title, axis labels with units and a legend.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

#: Colours by role, used consistently across pages.
COLORS = {
    "opt": "#1b4f8a",
    "bound": "#9bb7d8",
    "writer": "#e07b39",
    "store": "#3a9d5d",
    "external": "#8e5bb5",
    "ablation": "#7f7f7f",
    "lost": "#c43c39",
    "kept": "#3a9d5d",
}
#: Unit-kind colours (open vocabulary: unknown kinds fall back to grey).
KIND_COLORS = {
    "current_truth": "#1b4f8a",
    "invalidation": "#c43c39",
    "temporal_order": "#8e5bb5",
    "temporal_interval": "#b07cc6",
    "stale": "#9e9e9e",
    "fact": "#3a9d5d",
    "preference": "#e07b39",
    "context": "#c7a76c",
    "abstention": "#4bb3c8",
    "provenance": "#6b6b6b",
}


def base_layout(fig: go.Figure, title: str, present: bool = False, height: int = 420) -> go.Figure:
    size = 22 if present else 15
    fig.update_layout(
        title={"text": title, "font": {"size": size + 5}},
        font={"size": size},
        height=int(height * (1.35 if present else 1.0)),
        margin={"l": 70, "r": 30, "t": 70, "b": 60},
        template="plotly_white",
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "right", "x": 1},
    )
    return fig


def ratio_bars(
    labels: Sequence[str],
    ratios: Sequence[float | None],
    kinds: Sequence[str],
    title: str,
    present: bool = False,
) -> go.Figure:
    """Horizontal bars of F / OPT per writer or store; OPT drawn as the 1.0 line.

    ``None`` ratios (OPT = 0) are shown as an empty bar labelled "n/a".
    """
    fig = go.Figure()
    for kind in dict.fromkeys(kinds):
        idx = [i for i, k in enumerate(kinds) if k == kind]
        fig.add_bar(
            y=[labels[i] for i in idx],
            x=[ratios[i] if ratios[i] is not None else 0 for i in idx],
            text=[f"{ratios[i]:.3f}" if ratios[i] is not None else "n/a" for i in idx],
            textposition="outside",
            orientation="h",
            name={"writer": "reference writer", "store": "package store",
                  "external": "external store (union)"}.get(kind, kind),
            marker_color=COLORS.get(kind, "#555"),
            cliponaxis=False,
        )
    fig.add_vline(x=1.0, line_dash="dash", line_color=COLORS["opt"],
                  annotation_text="OPT", annotation_position="top")
    upper = max([1.0] + [r for r in ratios if r is not None])
    fig.update_xaxes(title_text="ratio F / OPT (1 = optimal)", range=[0, upper * 1.15])
    fig.update_yaxes(title_text="", autorange="reversed")
    return base_layout(fig, title, present, height=max(320, 60 + 38 * len(labels)))


def kind_loss_bars(
    kinds: Sequence[str],
    store_values: Sequence[float],
    opt_values: Sequence[float],
    title: str,
    cost_unit_label: str = "value (weighted coverage)",
    present: bool = False,
) -> go.Figure:
    """Grouped bars per unit kind: value kept by the store vs by the optimum."""
    fig = go.Figure()
    fig.add_bar(x=list(kinds), y=list(opt_values), name="optimum", marker_color=COLORS["opt"])
    fig.add_bar(x=list(kinds), y=list(store_values), name="store", marker_color=COLORS["writer"])
    fig.update_layout(barmode="group")
    fig.update_xaxes(title_text="evidence unit kind")
    fig.update_yaxes(title_text=cost_unit_label)
    return base_layout(fig, title, present)


def cost_histogram(
    costs: Sequence[float], types: Sequence[str], cost_unit: str, title: str, present: bool = False
) -> go.Figure:
    """Candidate costs, stacked by candidate type."""
    fig = go.Figure()
    for ctype in sorted(set(types)):
        fig.add_histogram(x=[c for c, t in zip(costs, types, strict=True) if t == ctype], name=ctype)
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title_text=f"candidate cost ({cost_unit})")
    fig.update_yaxes(title_text="candidates")
    return base_layout(fig, title, present, height=360)


def count_bars(labels: Sequence[str], counts: Sequence[int], title: str, axis: str,
               present: bool = False, color: str = "#1b4f8a") -> go.Figure:
    fig = go.Figure(go.Bar(x=list(labels), y=list(counts), marker_color=color, name=axis,
                           showlegend=False, text=list(counts), textposition="outside",
                           cliponaxis=False))
    fig.update_xaxes(title_text=axis)
    fig.update_yaxes(title_text="count")
    return base_layout(fig, title, present, height=340)
