"""The ``oomtriage`` command: a thin shell over library functions. Every command calls one library
function that returns a pydantic object, then renders it; ``OomtriageError`` becomes one line and
exit code 2."""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from .errors import OomtriageError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Turn a GPU out-of-memory failure into a ranked, evidence-backed diagnosis.")


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"


def fail(message: str) -> None:
    typer.echo(f"oomtriage: {message}", err=True)
    raise typer.Exit(2)


def read_stdin() -> str:
    if sys.stdin is None or sys.stdin.isatty():
        fail("no input: give a log file, or pipe the failed run's output into `oomtriage analyze -`")
    data = sys.stdin.buffer.read()
    if b"\x00" in data[:8192]:
        fail("<stdin>: looks like binary data, not a text log")
    return data.decode("utf-8", errors="replace")


def emit(text: str, output: Optional[Path]) -> None:
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as error:
        fail(f"{output}: cannot write ({error.strerror})")


@app.command()
def analyze(
    files: List[str] = typer.Argument(None, help="Log files, snapshots (.pickle), memory_stats/trace JSON; '-' for stdin."),
    note: Optional[str] = typer.Option(None, "--note", "-n", help='What you know: "fails during validation", "seq len 8192".'),
    output_format: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f", help="text, json or markdown."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the report to this file."),
) -> None:
    """Diagnose a failed run from its log (no model, no API key needed)."""
    from .api import analyze_inputs
    from .render import RENDERERS, to_text

    paths = [item for item in (files or []) if item != "-"]
    text = read_stdin() if (not files or "-" in files) else None
    try:
        report = analyze_inputs(paths, text=text, note=note)
    except OomtriageError as error:
        fail(str(error))
    if output_format is OutputFormat.text:
        rendered = to_text(report, color=output is None and sys.stdout.isatty())
    else:
        rendered = RENDERERS[output_format.value](report)
    emit(rendered, output)


def _print_version(value: bool) -> None:
    if value:
        from . import __version__

        typer.echo(__version__)
        raise typer.Exit(0)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def run(
    command: List[str] = typer.Argument(..., help="The command to run, after --: oomtriage run -- python train.py"),
    simulate_gpu: Optional[str] = typer.Option(None, "--simulate-gpu", help="Run on CPU against a simulated GPU of this size, e.g. 8GiB."),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", help="Stop cleanly after N optimizer steps."),
    report: Optional[Path] = typer.Option(None, "--report", help="Write the triage report (JSON, as analyze) here."),
    measure: Optional[Path] = typer.Option(None, "--measure", help="Write the run's peak memory (JSON) here."),
    report_dir: Optional[Path] = typer.Option(None, "--report-dir", help="Where the hook writes per-rank reports."),
    note: Optional[str] = typer.Option(None, "--note", "-n", help="What you know about the run."),
) -> None:
    """Run a command with OOM triage installed; returns the command's exit code."""
    from .render import to_text
    from .run import run_command
    from .sizes import parse_size_arg

    try:
        capacity = parse_size_arg(simulate_gpu) if simulate_gpu else None
    except ValueError:
        fail(f"--simulate-gpu: not a size: {simulate_gpu!r} (try 8GiB or 512MiB)")
    try:
        result = run_command(list(command), simulate_gpu=capacity, max_steps=max_steps,
                             measure_file=str(measure) if measure else None, note=note,
                             report_dir=str(report_dir) if report_dir else None)
    except OomtriageError as error:
        fail(str(error))
    if result.report is not None:
        sys.stderr.write(to_text(result.report, color=sys.stderr.isatty()))
        if report is not None:
            emit(result.report.model_dump_json(indent=2), report)
    raise typer.Exit(result.returncode)


@app.callback()
def main_options(
    version: bool = typer.Option(False, "--version", help="Print the version and exit.", is_eager=True, callback=_print_version),
) -> None:
    """Turn a GPU out-of-memory failure into a ranked, evidence-backed diagnosis."""


def main() -> None:
    # The CLI is its own process: skip pydantic's plugin discovery (an entry-point scan that costs
    # ~30 ms per start). The library never touches the environment of a process it is imported in.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        app()
    except OomtriageError as error:  # anything a command did not convert itself
        typer.echo(f"oomtriage: {error}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
