"""Reports as text (rich), Markdown or JSON. Pure functions from a report to a string."""

from __future__ import annotations

from oomtriage.fixkinds.backends import SHELL_COMMANDS
from oomtriage.models import TriageReport
from oomtriage.sizes import format_size


def to_json(report: TriageReport) -> str:
    return report.model_dump_json(indent=2)


def _headline(report: TriageReport) -> str:
    error = report.error
    if error is None:
        return "No out-of-memory error found." if not report.causes else "Suspected OOM (no message in the log)."
    where = f"{error.framework}/{error.backend}"
    # "more than 1EB" is stored as its floor; the headline keeps the message's own words for it.
    size = "more than 1 EiB" if "more than 1EB" in error.raw_message else format_size(error.requested_bytes)
    asked = f", tried to allocate {size}" if error.requested_bytes is not None else ""
    return f"OOM [{error.format}] on {where}{asked}"


def to_markdown(report: TriageReport) -> str:
    lines = [f"# oomtriage report", "", f"**{_headline(report)}**", ""]
    if report.error:
        lines += ["```", report.error.raw_message.strip(), "```", ""]
    if report.explanation:
        lines += ["## What the numbers say", ""] + [f"- {text}" for text in report.explanation] + [""]
    if report.llm_analysis:
        lines += ["## The model's analysis", "", report.llm_analysis, ""]
    if report.causes:
        lines += ["## Likely causes", ""]
        for rank, cause in enumerate(report.causes, 1):
            lines += [f"### {rank}. {cause.title} (`{cause.id}`, confidence {cause.confidence:.2f}{_agreement(cause)})", ""]
            lines += [f"- {item}" for item in cause.evidence]
            lines += [f"- against: {item}" for item in cause.counter_evidence] + [""]
            for fix in cause.fixes:
                saving = f" (saves: {fix.expected_saving})" if fix.expected_saving else ""
                lines += [f"**Fix: {fix.title}**{saving}. {fix.how}", ""]
                if fix.snippet:
                    lines += [f"```{_language(fix.snippet)}", fix.snippet, "```", ""]
    lines += _footer(report)
    return "\n".join(lines).rstrip() + "\n"


_AGREEMENT = {"both": "; model and rules agree", "llm_only": "; model only", "rules_only": "; rules only"}


def _agreement(cause) -> str:
    return _AGREEMENT.get(cause.agreement or "", "")


def _language(snippet: str) -> str:
    return "bash" if snippet.split(" ", 1)[0] in SHELL_COMMANDS else "python"


def _environment_line(report: TriageReport) -> str | None:
    env = report.environment
    parts = [f"torch {env.torch_version}" if env.torch_version else None,
             f"tensorflow {env.tensorflow_version}" if env.tensorflow_version else None,
             f"jax {env.jax_version}" if env.jax_version else None,
             f"CUDA {env.cuda_version}" if env.cuda_version else None,
             env.gpu_name, f"driver {env.driver_version}" if env.driver_version else None]
    parts += [f"{name}={value}" for name, value in env.allocator_env.items()]
    found = [part for part in parts if part]
    return "Environment: " + ", ".join(found) if found else None


ASK_A_MODEL = ("To ask a model as well: --engine llm (OpenAI's API with OPENAI_API_KEY), or --engine llm --base-url "
               "http://127.0.0.1:8080/v1 --offline for a local server; nothing is sent without it.")


def _footer(report: TriageReport) -> list[str]:
    lines = [line for line in [_environment_line(report)] if line]
    engine = report.engine
    produced = f"Ranked by: {'the rule engine' if engine.used == 'rules' else f'{engine.model} with the rule engine'}"
    if engine.fallback_reason:
        produced += f" (LLM not used: {engine.fallback_reason})"
    if engine.exchange_id:
        produced += f"; exchange {engine.exchange_id}"
    lines.append(produced)
    if engine.used == "rules" and not engine.fallback_reason and (report.detected or report.suspected):
        lines.append(ASK_A_MODEL)
    if engine.redactions:
        lines.append("Redacted before sending: " + ", ".join(f"{kind} x{count}" for kind, count in engine.redactions.items()))
    if engine.dropped:
        lines.append("Dropped to fit the token budget: " + "; ".join(engine.dropped))
    for warning in report.warnings:
        lines.append(f"Warning: {warning}")
    return lines


def to_text(report: TriageReport, *, color: bool = True, width: int | None = None) -> str:
    """A terminal report rendered with rich; returns the rendered string."""
    from rich.console import Console
    from rich.panel import Panel
    from rich.syntax import Syntax
    from rich.table import Table

    console = Console(record=True, width=width or 100, force_terminal=color, color_system="standard" if color else None,
                      file=_NullFile())
    from rich.markup import escape

    console.print(Panel(escape(_headline(report)), title="oomtriage", style="bold red" if report.error else "bold"))
    if report.error:
        console.print(report.error.raw_message.strip(), style="dim", markup=False, highlight=False)
    if report.explanation:
        console.print("\n[bold]What the numbers say[/bold]")
        for text in report.explanation:
            console.print(f"  • {text}", markup=False, highlight=False)
    if report.llm_analysis:
        console.print("\n[bold]The model's analysis[/bold]")
        console.print(f"  {report.llm_analysis}", markup=False, highlight=False)
    if report.causes:
        table = Table(title="Likely causes", show_lines=False, expand=True)
        table.add_column("#", justify="right", width=2)
        table.add_column("cause")
        table.add_column("confidence", justify="right", width=10)
        for rank, cause in enumerate(report.causes, 1):
            table.add_row(str(rank), f"{escape(cause.title)}\n[dim]{cause.id}{escape(_agreement(cause))}[/dim]", f"{cause.confidence:.2f}")
        console.print(table)
        for rank, cause in enumerate(report.causes[:3], 1):
            console.print(f"\n[bold]{rank}. {escape(cause.title)}[/bold] [dim]({cause.id})[/dim]")
            for item in cause.evidence:
                console.print(f"   evidence: {item}", markup=False, highlight=False)
            for item in cause.counter_evidence:
                console.print(f"   against: {item}", markup=False, highlight=False)
            for fix in cause.fixes[:2]:
                saving = f"  [saves {fix.expected_saving}]" if fix.expected_saving else ""
                console.print(f"   fix: {fix.title}{saving}", markup=False, highlight=False)
                if fix.snippet:
                    console.print(Syntax(fix.snippet, _language(fix.snippet), theme="ansi_dark", indent_guides=False, padding=(0, 5)))
    for line in _footer(report):
        console.print(line, style="dim", markup=False, highlight=False)
    return console.export_text(styles=color)


class _NullFile:
    def write(self, _: str) -> int:
        return 0

    def flush(self) -> None:
        pass


def validation_text(result) -> str:
    """A plain table of the validation: one line per fix."""
    lines = [result.summary, *result.warnings]
    if result.baseline_error is not None:
        return "\n".join(lines)
    if result.backend == "fake":
        lines.append(f"Measured on {result.backend_reason}.")
    if result.noise_floor:
        from oomtriage.validate.numerics import NOISE_FACTOR

        lines.append(f"The unchanged repro is not bit-reproducible: two runs differ by {result.noise_floor:.1e} (relative), "
                     f"so the numerics bounds are widened to {NOISE_FACTOR}x that.")
    lines += [""]
    lines.append(f"{'fix':<28} {'result':<9} {'peak allocated':<26} {'numerics':<22} reason")
    for fix in result.fixes:
        peaks = f"{format_size(fix.peak_before_bytes)} -> {format_size(fix.peak_after_bytes)}" if fix.peak_after_bytes is not None else "-"
        numerics = f"{fix.numerics.verdict} ({fix.numerics.max_relative_error:.1e})" if fix.numerics and fix.numerics.max_relative_error is not None \
            else (fix.numerics.verdict if fix.numerics else "-")
        lines.append(f"{fix.kind:<28} {_verdict(fix):<9} {peaks:<26} {numerics:<22} {fix.reason}")
        if fix.confinement:
            lines.append(f"{'':<28} {fix.confinement}")
    if not result.tree_unchanged:
        lines.append("WARNING: the project tree changed during validation")
    return "\n".join(lines) + "\n"


def _verdict(fix) -> str:
    if fix.accepted:
        return "ACCEPTED"
    if not fix.ran:
        return "advice" if fix.action.type == "advice" else "not run"
    return "unchecked" if fix.unchecked else "rejected"


def fit_text(result) -> str:
    """What fits the card, in a few lines and a table of the measured runs."""
    card = f"{result.card} ({format_size(result.card_bytes)} for PyTorch)"
    if result.error:
        return f"Could not measure the program for {card}: {result.error}\n"
    lines = [f"Peak for this configuration: {format_size(result.peak_allocated_bytes)} allocated, "
             f"{format_size(result.peak_reserved_bytes)} reserved ({'fake tensors' if result.backend == 'fake' else 'executed'}).",
             f"{'Fits' if result.fits else 'Does not fit'} {card}"
             + (f", {format_size(result.headroom_bytes)} headroom." if result.headroom_bytes is not None else ".")]
    if result.varied:
        largest = result.largest_fitting
        lines.append(f"Largest {result.varied} that fits: {largest} (now {result.current})." if largest is not None
                     else f"No value of {result.varied} fits (now {result.current}).")
        lines.append(f"  {'value':>8}  {'peak reserved':>14}  fits")
        for run in sorted(result.runs, key=lambda run: int(run.value or 0)):
            lines.append(f"  {run.value:>8}  {format_size(run.peak_reserved_bytes):>14}  "
                         + ("yes" if run.fits else "no" if run.fits is False else f"? {run.error or ''}"))
    for fix in result.fixes:
        verdict = "fits" if fix.fits else "does not fit" if fix.fits is False else f"not measured ({fix.error})"
        lines.append(f"Fix {fix.kind}: {fix.title} -> {format_size(fix.peak_reserved_bytes)} reserved, {verdict}.")
    if result.fixes:
        lines.append("Fix peaks are memory only: `oomtriage validate` checks a fix's numerics.")
    lines += result.notes
    return "\n".join(lines) + "\n"


RENDERERS = {"json": to_json, "markdown": to_markdown}
