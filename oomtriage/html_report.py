"""The report as one self-contained HTML file: plotly.js inlined (nothing fetched, it opens offline),
the page from ``templates/report.html.j2``, the plots built with plotly's figure objects.

Sections, each when its data is there: the memory timeline (allocated and reserved, the card, the
phases, the optimizer steps, the OOM), what held the memory at the OOM (by allocation site and by
kind), the causes with their evidence and fixes (diffs highlighted), and for ``validate`` each fix's
peak against the card and its loss per step against the baseline.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .models import TriageReport
from .sizes import format_size

if TYPE_CHECKING:
    from .timeline import MemoryTimeline
    from .validate.loop import ValidationResult

MIB = float(1 << 20)
MAX_STEP_LINES = 200  # optimizer steps marked on the timeline; beyond that every n-th
MAX_PHASE_SPANS = 400
PHASE_COLOURS = {"forward": "#4e79a7", "backward": "#f28e2c", "optimizer step": "#59a14f", "no-grad (evaluation)": "#af7aa1"}
KIND_COLOURS = {"parameters": "#4e79a7", "gradients": "#f28e2c", "optimizer state": "#59a14f", "activations": "#e15759",
                "backward buffers": "#edc949", "optimizer step buffers": "#76b7b2", "no-grad buffers": "#af7aa1",
                "other": "#bab0ab"}


@lru_cache(maxsize=1)
def plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


@lru_cache(maxsize=1)
def _template():
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    folder = Path(__file__).resolve().parent / "templates"
    environment = Environment(loader=FileSystemLoader(folder), autoescape=select_autoescape(["html", "j2"]),
                              trim_blocks=True, lstrip_blocks=True)
    environment.filters["size"] = format_size
    return environment.get_template("report.html.j2")


def _figure_html(figure: Any, element_id: str) -> str:
    import plotly.io as pio

    return pio.to_html(figure, include_plotlyjs=False, full_html=False, div_id=element_id,
                       config={"displaylogo": False, "responsive": True})


def timeline_figure(timeline: "MemoryTimeline") -> Any:
    import plotly.graph_objects as go

    figure = go.Figure()
    x = timeline.index
    figure.add_trace(go.Scatter(x=x, y=[value / MIB for value in timeline.reserved], name="reserved", mode="lines",
                                line={"shape": "hv", "color": "#9c755f", "width": 1.5},
                                hovertemplate="event %{x}<br>reserved %{y:.1f} MiB<extra></extra>"))
    figure.add_trace(go.Scatter(x=x, y=[value / MIB for value in timeline.allocated], name="allocated", mode="lines",
                                fill="tozeroy", line={"shape": "hv", "color": "#4e79a7", "width": 1.5},
                                hovertemplate="event %{x}<br>allocated %{y:.1f} MiB<extra></extra>"))
    shapes = []
    for span in _merged_phases(timeline):
        shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": span[0], "x1": span[1], "y0": 0, "y1": 1,
                       "fillcolor": PHASE_COLOURS.get(span[2], "#bab0ab"), "opacity": 0.08, "line": {"width": 0}, "layer": "below"})
    every = max(1, len(timeline.steps) // MAX_STEP_LINES)
    for number, at in enumerate(timeline.steps, 1):
        if number % every == 0 or number == len(timeline.steps):
            shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": at, "x1": at, "y0": 0, "y1": 1,
                           "line": {"color": "#59a14f", "width": 1, "dash": "dot"}})
    if timeline.capacity_bytes:
        figure.add_hline(y=timeline.capacity_bytes / MIB, line={"color": "#e15759", "width": 2, "dash": "dash"},
                         annotation_text=f"card {format_size(timeline.capacity_bytes)}", annotation_position="top left")
    if timeline.oom_at is not None:
        figure.add_vline(x=timeline.oom_at, line={"color": "#e15759", "width": 2},
                         annotation_text=f"OOM: {format_size(timeline.oom_requested_bytes)} requested",
                         annotation_position="top right")
    if timeline.peak_at is not None:
        figure.add_trace(go.Scatter(x=[timeline.peak_at], y=[timeline.peak_allocated_bytes / MIB], mode="markers",
                                    name="peak allocated", marker={"color": "#e15759", "size": 9, "symbol": "diamond"},
                                    hovertemplate=f"peak allocated {format_size(timeline.peak_allocated_bytes)}<extra></extra>"))
    for name, colour in PHASE_COLOURS.items():  # a legend entry per phase that appears
        if any(span.name == name for span in timeline.phases):
            figure.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name,
                                        marker={"color": colour, "size": 10, "symbol": "square", "opacity": 0.4}))
    if timeline.steps:
        figure.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name="optimizer step ends",
                                    line={"color": "#59a14f", "dash": "dot"}))
    figure.update_layout(shapes=[*figure.layout.shapes, *shapes],
                         xaxis_title="allocator event", yaxis_title="MiB", hovermode="x unified", height=420,
                         margin={"l": 60, "r": 20, "t": 30, "b": 50}, legend={"orientation": "h", "y": -0.2},
                         template="plotly_white")
    return figure


def _merged_phases(timeline: "MemoryTimeline") -> list[tuple[int, int, str]]:
    """Phase spans to shade; when there are too many, the shortest give way (the plot can't show them)."""
    spans = [(span.start, span.end, span.name) for span in timeline.phases]
    if len(spans) <= MAX_PHASE_SPANS:
        return spans
    keep = sorted(spans, key=lambda span: span[1] - span[0], reverse=True)[:MAX_PHASE_SPANS]
    return sorted(keep)


def held_figures(timeline: "MemoryTimeline") -> tuple[Any, Any]:
    import plotly.graph_objects as go

    sites = list(reversed(timeline.held_by_site))
    by_site = go.Figure(go.Bar(
        x=[site.bytes / MIB for site in sites], y=[_short_site(site.location) for site in sites], orientation="h",
        customdata=[[site.location, site.count, format_size(site.bytes)] for site in sites], marker={"color": "#4e79a7"},
        hovertemplate="%{customdata[0]}<br>%{customdata[2]} in %{customdata[1]} blocks<extra></extra>"))
    by_site.update_layout(xaxis_title="MiB live", height=max(240, 34 * len(sites) + 80), template="plotly_white",
                          margin={"l": 10, "r": 20, "t": 20, "b": 50}, yaxis={"automargin": True})
    kinds = timeline.held_by_kind
    by_kind = go.Figure(go.Pie(labels=list(kinds), values=[value / MIB for value in kinds.values()], hole=0.45, sort=False,
                               marker={"colors": [KIND_COLOURS.get(kind, "#bab0ab") for kind in kinds]},
                               customdata=[format_size(value) for value in kinds.values()],
                               hovertemplate="%{label}: %{customdata} (%{percent})<extra></extra>"))
    by_kind.update_layout(height=320, margin={"l": 10, "r": 10, "t": 20, "b": 20}, template="plotly_white")
    return by_site, by_kind


def _short_site(location: str) -> str:
    path, _, rest = location.partition(":")
    return f"{Path(path).name}:{rest}" if rest else location[-60:]


def validation_figures(result: "ValidationResult") -> tuple[Any, Any | None]:
    import plotly.graph_objects as go

    measured = [fix for fix in result.fixes if fix.reserved_after_bytes is not None]
    names = [f"{fix.kind}" for fix in measured]
    peaks = go.Figure()
    peaks.add_trace(go.Bar(name="before", x=names, y=[(fix.reserved_before_bytes or 0) / MIB for fix in measured],
                           marker={"color": "#bab0ab"}, hovertemplate="%{x}: %{y:.1f} MiB reserved before<extra></extra>"))
    peaks.add_trace(go.Bar(name="after", x=names, y=[(fix.reserved_after_bytes or 0) / MIB for fix in measured],
                           marker={"color": ["#59a14f" if fix.accepted else "#e15759" for fix in measured]},
                           customdata=[fix.title for fix in measured],
                           hovertemplate="%{customdata}<br>%{y:.1f} MiB reserved after<extra></extra>"))
    if result.capacity_bytes:
        peaks.add_hline(y=result.capacity_bytes / MIB, line={"color": "#e15759", "dash": "dash"},
                        annotation_text=f"card {format_size(result.capacity_bytes)}")
    peaks.update_layout(barmode="group", yaxis_title="peak reserved (MiB)", height=360, template="plotly_white",
                        margin={"l": 60, "r": 20, "t": 30, "b": 60})
    series = [fix for fix in result.fixes if fix.numerics is not None and fix.numerics.fix_step_losses]
    if not series:
        return peaks, None
    from plotly.subplots import make_subplots

    # The gate compares both per step: a fix can keep the loss and still change the gradients.
    numerics = make_subplots(rows=1, cols=2, subplot_titles=("loss per step (sum over micro-batches)", "gradient norm per step"))
    first = series[0].numerics
    colours = ["#e15759", "#59a14f", "#4e79a7", "#f28e2c", "#af7aa1", "#76b7b2"]
    for column, (values, key) in enumerate(((first.baseline_step_losses, "fix_step_losses"),
                                            (first.baseline_grad_norms, "fix_grad_norms")), 1):
        numerics.add_trace(go.Scatter(x=list(range(1, len(values) + 1)), y=values, name="baseline", mode="lines+markers",
                                      line={"color": "#333", "width": 3}, legendgroup="baseline", showlegend=column == 1),
                           row=1, col=column)
        for number, fix in enumerate(series):
            fixed = getattr(fix.numerics, key)
            numerics.add_trace(go.Scatter(x=list(range(1, len(fixed) + 1)), y=fixed, mode="lines+markers",
                                          name=f"{fix.kind} ({fix.numerics.verdict})", legendgroup=fix.kind,
                                          showlegend=column == 1, line={"dash": "dot", "color": colours[number % len(colours)]}),
                               row=1, col=column)
    ticks = {"tickformat": "d", "dtick": 1 if len(first.baseline_step_losses) <= 20 else None, "title": "optimizer step"}
    numerics.update_xaxes(**ticks)
    numerics.update_layout(height=360, template="plotly_white", margin={"l": 60, "r": 20, "t": 40, "b": 50})
    return peaks, numerics


def _diff_lines(diff: str) -> list[tuple[str, str]]:
    kinds = []
    for line in diff.splitlines():
        kind = ("meta" if line.startswith(("+++", "---", "@@")) else "add" if line.startswith("+")
                else "del" if line.startswith("-") else "ctx")
        kinds.append((kind, line))
    return kinds


def render_html(report: TriageReport | None = None, *, timeline: "MemoryTimeline | None" = None,
                validation: "ValidationResult | None" = None, title: str = "oomtriage report", fragment: bool = False) -> str:
    """One HTML page; every part that has data is drawn. ``fragment``: without the page around it
    (a notebook cell's output), its styles scoped to the report."""
    from .render import _footer, _headline, _verdict

    if report is None and validation is not None:
        report = validation.report
    figures: dict[str, str] = {}
    if timeline is not None and timeline.events:
        figures["timeline"] = _figure_html(timeline_figure(timeline), "timeline")
        if timeline.held_by_site:
            by_site, by_kind = held_figures(timeline)
            figures["held_by_site"] = _figure_html(by_site, "held-by-site")
            figures["held_by_kind"] = _figure_html(by_kind, "held-by-kind")
    if validation is not None:
        peaks, numerics = validation_figures(validation)
        if any(fix.reserved_after_bytes is not None for fix in validation.fixes):
            figures["peaks"] = _figure_html(peaks, "fix-peaks")
        if numerics is not None:
            figures["numerics"] = _figure_html(numerics, "fix-numerics")
    causes = []
    for cause in (report.causes if report else []):
        fixes = [{"fix": fix, "diff": _diff_lines(fix.diff) if fix.diff else None} for fix in cause.fixes]
        causes.append({"cause": cause, "fixes": fixes})
    validated = []
    for fix in (validation.fixes if validation else []):
        validated.append({"fix": fix, "diff": _diff_lines(fix.action.diff) if fix.action.diff else None,
                          "verdict": _verdict(fix)})
    return _template().render(
        title=title, fragment=fragment, report=report, headline=_headline(report) if report else None, footer=_footer(report) if report else [],
        causes=causes, timeline=timeline, validation=validation, validated=validated, figures=figures,
        plotly_js=plotly_js() if figures else "")


def _count_figure(counts: dict[str, int], axis_title: str, colour: str) -> Any:
    import plotly.graph_objects as go

    names = list(reversed(list(counts)))
    figure = go.Figure(go.Bar(x=[counts[name] for name in names], y=names, orientation="h", marker={"color": colour},
                              hovertemplate="%{y}: %{x}<extra></extra>"))
    figure.update_layout(xaxis={"title": axis_title, "tickformat": "d", "dtick": 1 if max(counts.values()) <= 10 else None},
                         height=max(220, 28 * len(names) + 90), template="plotly_white",
                         margin={"l": 10, "r": 20, "t": 20, "b": 50}, yaxis={"automargin": True})
    return figure


def render_scan_html(summary: Any, *, link_base: Path | None = None, reports: list[TriageReport] | None = None) -> str:
    """The summary of a scan: counts as charts, and a table with a link to each log's own report
    (relative to ``link_base``, the folder the page is written to). ``reports``: each record's
    report, drawn on the same page below the table (``analyze a.log b.log --format html``)."""
    import os

    figures = {}
    for key, counts, title, colour in (("causes", summary.by_cause, "OOMs (top cause)", "#e15759"),
                                       ("gpus", summary.by_gpu, "OOMs", "#4e79a7"),
                                       ("frameworks", summary.by_framework, "OOMs", "#59a14f")):
        if counts:
            figures[key] = _figure_html(_count_figure(counts, title, colour), f"by-{key}")
    rows = []
    for number, record in enumerate(summary.records):
        link = f"#report-{number}" if reports else None
        if record.report_file:
            link = os.path.relpath(record.report_file, link_base) if link_base is not None else record.report_file
        rows.append({"record": record, "link": link})
    sections = [render_html(report, title=record.input, fragment=True) for record, report in zip(summary.records, reports or [])]
    return _scan_template().render(summary=summary, rows=rows, figures=figures, plotly_js=plotly_js() if figures else "",
                                   sections=sections)


@lru_cache(maxsize=1)
def _scan_template():
    return _template().environment.get_template("scan.html.j2")
