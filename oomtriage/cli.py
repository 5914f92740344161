"""The ``oomtriage`` command: a thin shell over library functions. Every command calls one library
function that returns a pydantic object, then renders it; ``OomtriageError`` becomes one line and
exit code 2."""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import List, Optional, get_args

import typer

from .backend import Backend
from .errors import OomtriageError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Turn a GPU out-of-memory failure into a ranked, evidence-backed diagnosis.")


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"
    html = "html"


# typer wants an Enum for a choice; its members are the Backend literal's values.
MeasureBackend = Enum("MeasureBackend", {name: name for name in get_args(Backend)}, type=str)


def _quiet_stdout() -> None:
    """After a failed write, point stdout at /dev/null so the interpreter's final flush is silent."""
    try:
        sys.stdout = open(os.devnull, "w")
    except OSError:
        pass


def is_terminal(stream) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (ValueError, OSError):
        return False


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
        if sys.stdout is None:
            fail("standard output is closed: pass -o FILE to write the report")
        try:
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_stdout()
            raise typer.Exit(0)  # the reader went away (| head): not an error of ours
        except OSError as error:
            _quiet_stdout()
            fail(f"cannot write to standard output ({error.strerror or error})")
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as error:
        fail(f"{output}: cannot write ({error.strerror})")


class ValidationFormat(str, Enum):
    text = "text"
    json = "json"


class ResultFormat(str, Enum):
    text = "text"
    json = "json"
    html = "html"


def html_page(report=None, *, timeline=None, validation=None, title: str = "oomtriage report") -> str:
    from .html_report import render_html

    return render_html(report, timeline=timeline, validation=validation, title=title)


def input_timeline(paths: list[str]):
    """The memory timeline of the first snapshot among the inputs (None: no snapshot, or no trace)."""
    from .context import classify_file
    from .timeline import timeline_from_snapshot_file

    for path in paths:
        try:
            if classify_file(Path(path)) == "snapshot":
                return timeline_from_snapshot_file(path)
        except OomtriageError:
            return None  # analyze already said why this input could not be read
    return None


class Engine(str, Enum):
    rules = "rules"
    llm = "llm"
    auto = "auto"


ENGINE = typer.Option(None, "--engine", help="rules (default), llm, or auto (the LLM when oomtriage's own endpoint "
                      "setting is there: --base-url, OOMTRIAGE_BASE_URL/OOMTRIAGE_API_KEY or the config file).", case_sensitive=False)
BASE_URL = typer.Option(None, "--base-url", help="An OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 (Ollama, vLLM, llama.cpp, LM Studio).")
MODEL = typer.Option(None, "--model", help="Model name (default: $OOMTRIAGE_MODEL, gpt-4o-mini on OpenAI).")
OFFLINE = typer.Option(False, "--offline", help="Refuse any endpoint that is not on this machine (also OOMTRIAGE_OFFLINE=1).")
NO_CACHE = typer.Option(False, "--no-cache", help="Ask the model even if this prompt was answered before.")
NO_REDACT = typer.Option(False, "--no-redact", help="Send secrets, e-mails and paths unredacted (not recommended).")
PROMPTS = typer.Option(None, "--prompts", help="A folder of .j2 templates that override the built-in ones.")
MAX_TOKENS = typer.Option(None, "--max-prompt-tokens", help="Token budget of the prompt (default 6000).")
TIMEOUT = typer.Option(None, "--llm-timeout", "--timeout", help="Seconds the whole exchange with the model may take "
                       "(default 120; --timeout is the old name).")
SOURCE = typer.Option(None, "--source", help="A folder whose files the traceback may quote (repeatable). Default: the "
                      "current directory for log files, nothing for a log on stdin; files elsewhere are never read.")


def source_roots(folders: Optional[List[Path]]) -> Optional[list[Path]]:
    if not folders:
        return None  # the defaults of build_context: cwd for files, nothing for stdin
    return [Path.cwd(), *folders]


def llm_config(engine: Optional[Engine], base_url: Optional[str], model: Optional[str], offline: bool, no_cache: bool,
               no_redact: bool, prompts: Optional[Path], max_prompt_tokens: Optional[int], timeout: Optional[float]):
    from .llm.config import load_config

    try:
        return load_config(engine=engine.value if engine else None, base_url=base_url, model=model,
                           offline=offline or None, cache=False if no_cache else None, redact=False if no_redact else None,
                           prompts_dir=prompts, max_prompt_tokens=max_prompt_tokens, timeout=timeout)
    except OomtriageError as error:
        fail(str(error))


def _several(reports, output_format, *, color: bool) -> str:
    """One report per log: JSON holds {"reports": [{"input": ..., "report": ...}]}; text and Markdown
    give each log's report under its name, after a one-line-per-log table."""
    import json

    from .render import RENDERERS, to_text

    if output_format is OutputFormat.json:
        return json.dumps({"reports": [{"input": name, "report": json.loads(report.model_dump_json())} for name, report in reports]},
                          indent=2)
    table = [f"{len(reports)} logs, each triaged on its own:"]
    for name, report in reports:
        top = report.causes[0].id if report.causes else "-"
        state = "OOM" if report.detected else ("suspected OOM" if report.suspected else "no OOM")
        table.append(f"  {name}: {state}, top cause {top}")
    parts = ["\n".join(table)]
    for name, report in reports:
        body = to_text(report, color=color) if output_format is OutputFormat.text else RENDERERS[output_format.value](report)
        parts.append(f"\n== {name} ==\n{body}")
    return "\n".join(parts)


def read_inputs(files: Optional[List[str]]) -> tuple[list[str], Optional[str]]:
    paths = [item for item in (files or []) if item != "-"]
    return paths, read_stdin() if (not files or "-" in files) else None


@app.command()
def analyze(
    files: List[str] = typer.Argument(None, help="Log files, snapshots (.pickle), memory_stats/trace JSON; '-' for stdin."),
    note: Optional[str] = typer.Option(None, "--note", "-n", help='What you know: "fails during validation", "seq len 8192".'),
    output_format: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f", help=(
        "text (default), json, markdown or html (one self-contained file, with the memory timeline of a snapshot input).")),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the report to this file (default: standard output)."),
    engine: Optional[Engine] = ENGINE, base_url: Optional[str] = BASE_URL, model: Optional[str] = MODEL,
    offline: bool = OFFLINE, no_cache: bool = NO_CACHE, no_redact: bool = NO_REDACT, prompts: Optional[Path] = PROMPTS,
    max_prompt_tokens: Optional[int] = MAX_TOKENS, timeout: Optional[float] = TIMEOUT,
    source: Optional[List[Path]] = SOURCE,
) -> None:
    """Diagnose a failed run from its log: rules by default; an LLM only when you ask for one (--engine llm)."""
    from .api import analyze_inputs
    from .render import RENDERERS, to_text

    config = llm_config(engine, base_url, model, offline, no_cache, no_redact, prompts, max_prompt_tokens, timeout)
    paths, text = read_inputs(files)
    try:
        if text is None and len(paths) > 1:
            from .api import analyze_each

            reports = analyze_each(paths, note=note, llm=config, source_roots=source_roots(source))
        else:
            reports = [("", analyze_inputs(paths, text=text, note=note, llm=config, source_roots=source_roots(source)))]
    except OomtriageError as error:
        fail(str(error))
    if len(reports) > 1:
        if output_format is OutputFormat.html:
            from .scan import summary_html, summarise

            emit(summary_html(summarise(reports), reports=[report for _, report in reports]), output)
            return
        emit(_several(reports, output_format, color=output is None and is_terminal(sys.stdout)), output)
        return
    report = reports[0][1]
    if output_format is OutputFormat.html:
        try:
            timeline = input_timeline(paths)
        except OomtriageError as error:
            fail(str(error))
        emit(html_page(report, timeline=timeline), output)
        return
    if output_format is OutputFormat.text:
        rendered = to_text(report, color=output is None and is_terminal(sys.stdout))
    else:
        rendered = RENDERERS[output_format.value](report)
    emit(rendered, output)


def _print_version(value: bool) -> None:
    if value:
        from . import __version__

        typer.echo(__version__)
        raise typer.Exit(0)


@app.command()
def prompt(
    files: List[str] = typer.Argument(None, help="Log files etc., as for analyze; '-' for stdin."),
    note: Optional[str] = typer.Option(None, "--note", "-n"),
    model: Optional[str] = MODEL, no_redact: bool = NO_REDACT, prompts: Optional[Path] = PROMPTS,
    max_prompt_tokens: Optional[int] = MAX_TOKENS, source: Optional[List[Path]] = SOURCE,
) -> None:
    """Print the prompt exactly as it would be sent (redacted, within budget); token counts go to stderr."""
    from .context import build_context
    from .engine import triage
    from .llm.prompt import render_prompt

    config = llm_config(Engine.rules, None, model, False, False, no_redact, prompts, max_prompt_tokens, None)
    paths, text = read_inputs(files)
    try:
        context = build_context(paths, text=text, note=note, roots=source_roots(source))
        rendered = render_prompt(context, triage(context), max_tokens=config.max_prompt_tokens,
                                 model=config.model_name if model else None, prompts_dir=config.prompts_dir,
                                 redact_secrets=config.redact)
    except OomtriageError as error:
        fail(str(error))
    except Exception as error:  # a user's template with an error
        if type(error).__module__.startswith("jinja2"):
            fail(f"prompt template error: {error}")
        raise
    sys.stdout.write(f"[system]\n{rendered.system}\n\n[user]\n{rendered.user}")
    lines = [f"{name:>16}  {tokens:>6}" for name, tokens in rendered.section_tokens.items()]
    lines.append(f"{'total':>16}  {rendered.total_tokens:>6} of {rendered.budget} ({rendered.encoding})")
    if rendered.dropped:
        lines.append("dropped to fit: " + "; ".join(rendered.dropped))
    if rendered.redactions:
        lines.append("redacted: " + ", ".join(f"{kind} x{count}" for kind, count in rendered.redactions.items()))
    sys.stderr.write("\n".join(lines) + "\n")


CPU_VISIBLE = typer.Option(False, "--cpu-visible", help=(
    "Under --simulate-gpu, keep torch.cuda.is_available() False, so the script takes its CPU path "
    "(default: the simulated card looks like a GPU to the script)."))


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def run(
    command: List[str] = typer.Argument(..., help="The command to run, after --: oomtriage run -- python train.py"),
    simulate_gpu: Optional[str] = typer.Option(None, "--simulate-gpu", help="Run on CPU against a simulated GPU of this size, e.g. 8GiB (default: no simulation)."),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", help="Stop cleanly after N optimizer steps (default: no limit)."),
    report: Optional[Path] = typer.Option(None, "--report", help="Write the triage report (JSON, as analyze) here."),
    output_format: ResultFormat = typer.Option(ResultFormat.text, "--format", "-f", help=(
        "What -o gets: text, json (the report, as analyze) or html (the report with the run's memory timeline).")),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the report in --format to this file."),
    snapshot: Optional[Path] = typer.Option(None, "--snapshot", help=(
        "Record the memory history and write it here in PyTorch's snapshot format (opens in PyTorch's memory_viz; "
        "oomtriage analyze reads it).")),
    measure: Optional[Path] = typer.Option(None, "--measure", help="Write the run's peak memory (JSON) here."),
    report_dir: Optional[Path] = typer.Option(None, "--report-dir", help="Where the hook writes per-rank reports (default: $OOMTRIAGE_REPORT_DIR, else a temporary folder removed after the run)."),
    note: Optional[str] = typer.Option(None, "--note", "-n", help="What you know about the run."),
    backend: MeasureBackend = typer.Option(MeasureBackend.auto, "--backend", help=(
        "With --simulate-gpu: execute the script, or fake (shapes only: no compute, no memory, no values); "
        "auto (default) fakes only a card larger than half of this machine's available memory.")),
    cpu_visible: bool = CPU_VISIBLE,
) -> None:
    """Run a command with OOM triage installed; returns the command's exit code."""
    from .render import to_text
    from .run import run_command
    from .sizes import parse_size_arg

    try:
        capacity = parse_size_arg(simulate_gpu) if simulate_gpu else None
    except ValueError as error:
        fail(f"--simulate-gpu: {error}")
    from .backend import choose_backend

    fake, why = choose_backend(backend.value, capacity)
    if fake:
        sys.stderr.write(f"oomtriage: measuring with {why}\n")
    if output_format is not ResultFormat.text and output is None:
        fail(f"--format {output_format.value} needs -o FILE (the command's own output goes to standard output)")
    if snapshot is not None and not (snapshot.parent.is_dir() and os.access(snapshot.parent, os.W_OK)):
        fail(f"--snapshot {snapshot}: its folder does not exist or is not writable")
    import tempfile

    with tempfile.TemporaryDirectory(prefix="oomtriage-snapshot-") as folder:
        snapshot_file = str(snapshot) if snapshot else (str(Path(folder) / "snapshot.pickle")
                                                         if output_format is ResultFormat.html else None)
        try:
            result = run_command(list(command), simulate_gpu=capacity, max_steps=max_steps,
                                 measure_file=str(measure) if measure else None, note=note,
                                 report_dir=str(report_dir) if report_dir else None, fake=fake, cpu_visible=cpu_visible,
                                 snapshot_file=snapshot_file)
        except OomtriageError as error:
            fail(str(error))
        if snapshot:
            Path(str(snapshot) + ".timeline.json").unlink(missing_ok=True)
    _say_what_the_run_hid(result, max_steps)
    if result.report is not None:
        sys.stderr.write(to_text(result.report, color=sys.stderr.isatty()))
        if report is not None:
            emit(result.report.model_dump_json(indent=2), report)
    if output is not None:
        if output_format is ResultFormat.html:
            emit(html_page(result.report, timeline=result.timeline, title="oomtriage run: " + " ".join(command)), output)
        elif output_format is ResultFormat.json:
            emit(result.model_dump_json(indent=2), output)
        elif result.report is not None:
            emit(to_text(result.report, color=False), output)
        else:
            emit(f"No OOM: the command exited with code {result.returncode}.", output)
    if snapshot and not snapshot.exists():
        sys.stderr.write(f"oomtriage: no snapshot was written to {snapshot} (no Python process of the command wrote one)\n")
    raise typer.Exit(result.returncode)


def _say_what_the_run_hid(result, max_steps: int | None) -> None:
    """OOMs the script caught itself, and a step limit that never fired, are told, not hidden."""
    measured = result.measurement
    if measured is None:
        return
    if measured.caught_ooms:
        sys.stderr.write(f"oomtriage: the script raised {measured.caught_ooms} OOM(s) and caught them itself "
                         "(a batch-size finder or a retry loop): it did not fit as first configured\n")
    if max_steps is not None and measured.steps == 0 and measured.exit == "completed":
        sys.stderr.write("oomtriage: --max-steps never fired: no optimizer step and no backward() was seen\n")
    elif max_steps is not None and measured.steps_counted_by == "backward":
        sys.stderr.write("oomtriage: no torch.optim optimizer was built, so --max-steps counted backward() calls\n")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def validate(
    command: List[str] = typer.Argument(..., help="The repro, after --: oomtriage validate -- python train.py"),
    simulate_gpu: Optional[str] = typer.Option(None, "--simulate-gpu", help="Validate against a simulated GPU of this size, e.g. 100MiB (default: the real device)."),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", help="Stop each run after N optimizer steps (default: no limit)."),
    fixes: Optional[Path] = typer.Option(None, "--fixes", help="A report JSON whose fixes to validate (default: triage the repro's OOM)."),
    changelog: Optional[Path] = typer.Option(None, "--changelog", help="Append accepted fixes to this CHANGELOG.md."),
    output_format: ResultFormat = typer.Option("text", "--format", "-f", help=(
        "text, json (what `oomtriage apply` reads) or html (peaks against the card, loss per step, the baseline's "
        "memory timeline); default text.")),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the result to this file."),
    project: Path = typer.Option(Path("."), "--project", help="The project folder that scratch copies are made of (default: the current folder)."),
    kind: Optional[List[str]] = typer.Option(None, "--kind", help="Only validate fixes of this kind (repeatable)."),
    timeout: float = typer.Option(600.0, "--timeout", help="Stop a run that takes longer than this (seconds, default 600)."),
    backend: MeasureBackend = typer.Option(MeasureBackend.auto, "--backend", help=(
        "execute: run the repro for real (CPU or GPU); fake: shapes only, no compute and no memory, numerics not "
        "checked; auto (default): fake only when the simulated card is larger than half of this machine's "
        "available memory.")),
    run_model_patches: bool = typer.Option(False, "--run-model-patches", help=(
        "Run the changes a model wrote (after a static screen, confined: no network, only the scratch folder "
        "writable where bubblewrap works). Default: shown, never run.")),
    cpu_visible: bool = CPU_VISIBLE,
) -> None:
    """Apply each suggested fix alone in a scratch copy, re-measure, check numerics, record accepted fixes."""
    from .models import TriageReport
    from .sizes import parse_size_arg
    from .validate.changelog import append_entry
    from .validate.loop import changelog_entry, validate as run_validation

    try:
        capacity = parse_size_arg(simulate_gpu) if simulate_gpu else None
    except ValueError as error:
        fail(f"--simulate-gpu: {error}")
    report = None
    if fixes is not None:
        try:
            report = TriageReport.model_validate_json(fixes.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            fail(f"{fixes}: not a readable oomtriage report ({str(error).splitlines()[0]})")
    if not project.is_dir():
        fail(f"{project}: not a folder")
    from .progress import for_terminal

    try:
        with for_terminal() as progress:
            result = run_validation(list(command), project=project, capacity=capacity, max_steps=max_steps, report=report,
                                    timeout=timeout, kinds=set(kind) if kind else None, progress=progress,
                                    backend=backend.value, run_model_patches=run_model_patches, cpu_visible=cpu_visible,
                                    timeline=output_format is ResultFormat.html)
    except OomtriageError as error:
        fail(str(error))
    changelog_failure = None
    if changelog is not None:
        try:
            for fix in result.fixes:
                if fix.accepted:
                    append_entry(changelog, changelog_entry(result, fix))
        except OomtriageError as error:  # the validation result is printed all the same
            changelog_failure = str(error)
    if output_format is ResultFormat.json:
        emit(result.model_dump_json(indent=2), output)
    elif output_format is ResultFormat.html:
        emit(html_page(result.report, timeline=result.baseline_timeline, validation=result,
                       title="oomtriage validate: " + " ".join(command)), output)
    else:
        from .render import validation_text

        emit(validation_text(result), output)
    if changelog_failure:
        fail(changelog_failure)
    if result.baseline_error is not None:
        raise typer.Exit(1)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def fit(
    command: List[str] = typer.Argument(..., help="The training command, after --: oomtriage fit --gpu 'A100 40GB' -- python train.py"),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="The card by name, e.g. 'H100 80GB', 'RTX 4090' (its memory minus the CUDA context)."),
    simulate_gpu: Optional[str] = typer.Option(None, "--simulate-gpu", help="Or the memory PyTorch may use, e.g. 10GiB."),
    vary: Optional[str] = typer.Option(None, "--vary", help="The option to search (default: the batch option found on the command line or in the script; seq_len for the sequence length)."),
    max_steps: int = typer.Option(2, "--max-steps", help="Optimizer steps per measured run (default 2: the first step creates the optimizer state)."),
    backend: MeasureBackend = typer.Option(MeasureBackend.fake, "--backend", help="fake (default): shapes only, no compute; execute: run on the CPU against the simulated card."),
    output_format: ValidationFormat = typer.Option("text", "--format", "-f", help="text or json (default text)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the result to this file."),
    project: Path = typer.Option(Path("."), "--project", help="The project folder (default: the current folder)."),
    timeout: float = typer.Option(600.0, "--timeout", help="Stop a run that takes longer than this (seconds, default 600)."),
    cpu_visible: bool = CPU_VISIBLE,
) -> None:
    """Say what fits a card before the run: the peak of this configuration, the largest batch that fits, and fixes that would make it fit."""
    from .fit import CardSize, card_by_name, fit as run_fit
    from .sizes import parse_size_arg

    if (gpu is None) == (simulate_gpu is None):
        fail("name the card with --gpu NAME or its usable memory with --simulate-gpu SIZE (one of them)")
    try:
        card = card_by_name(gpu) if gpu else CardSize(name=f"simulated {simulate_gpu}", spec_bytes=parse_size_arg(simulate_gpu),
                                                      reserve_bytes=0)
    except ValueError as error:
        fail(f"--simulate-gpu: {error}")
    except OomtriageError as error:
        fail(str(error))
    if not project.is_dir():
        fail(f"{project}: not a folder")
    try:
        result = run_fit(list(command), project=project, card=card, vary=vary, max_steps=max_steps, timeout=timeout,
                         backend="execute" if backend is MeasureBackend.execute else "fake", cpu_visible=cpu_visible)
    except OomtriageError as error:
        fail(str(error))
    if output_format is ValidationFormat.json:
        emit(result.model_dump_json(indent=2), output)
    else:
        from .render import fit_text

        emit(fit_text(result), output)
    if result.error is not None:
        raise typer.Exit(1)


class ScanFormat(str, Enum):
    text = "text"
    jsonl = "jsonl"
    html = "html"


@app.command()
def scan(
    paths: List[str] = typer.Argument(..., help="Log files, folders (searched recursively) or globs ('runs/**/*.log')."),
    output_format: ScanFormat = typer.Option(ScanFormat.text, "--format", "-f", help=(
        "text (a line per input, then the counts), jsonl (one JSON object per input, streamed) or html "
        "(the counts as charts and a table linking each input's own report; needs -o).")),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write here (html: the summary page; each "
                                          "input's report goes in a folder beside it)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help="Worker processes (default: the CPU count)."),
    note: Optional[str] = typer.Option(None, "--note", "-n", help="A note that applies to every input."),
) -> None:
    """Triage many failures at once (a folder of logs, a job array): one result per input, and the counts."""
    import json

    from .scan import expand, record_line, scan as scan_all, summarise, summary_html, summary_text

    if jobs is not None and jobs < 1:
        fail("--jobs must be at least 1")
    if output_format is ScanFormat.html and output is None:
        fail("--format html needs -o FILE (each input's report is written in a folder beside it)")
    try:
        files = expand(paths)
    except OomtriageError as error:
        fail(str(error))
    report_dir = None
    if output_format is ScanFormat.html:
        report_dir = output.with_name(output.stem + "-reports")
        try:
            report_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            fail(f"{report_dir}: cannot create ({error.strerror})")
    try:
        sink = open(output, "w", encoding="utf-8") if output is not None and output_format is not ScanFormat.html else sys.stdout
    except OSError as error:
        fail(f"{output}: cannot write ({error.strerror})")
    records = scan_all(files, jobs=jobs, note=note, report_dir=report_dir)

    def streamed():
        for record in records:
            line = record.model_dump_json(exclude_none=True) if output_format is ScanFormat.jsonl else record_line(record)
            if output_format is not ScanFormat.html:
                try:
                    sink.write(line + "\n")
                    sink.flush()
                except BrokenPipeError:
                    _quiet_stdout()
                    raise typer.Exit(0)
            yield record

    summary = summarise(streamed(), keep=output_format is ScanFormat.html)
    if output_format is ScanFormat.html:
        emit(summary_html(summary, link_base=output.parent), output)
        sys.stderr.write(summary_text(summary))
    elif output_format is ScanFormat.text:
        sink.write("\n" + summary_text(summary))
    else:
        sys.stderr.write(summary_text(summary))
    if sink is not sys.stdout:
        sink.close()


@app.command()
def apply(
    validation: Path = typer.Argument(..., help="The JSON that `oomtriage validate --format json` printed."),
    kind: str = typer.Option(..., "--kind", help="The accepted fix to apply, by kind."),
    project: Path = typer.Option(Path("."), "--project", help="The project the validation was run on."),
) -> None:
    """Apply an accepted fix to your tree, only if its files are unchanged since validation; shows the diff."""
    from .validate.loop import ValidationResult, apply_accepted

    try:
        result = ValidationResult.model_validate_json(validation.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        fail(f"{validation}: not a readable validation result ({str(error).splitlines()[0]})")
    try:
        fix = apply_accepted(result, kind, project)
    except OomtriageError as error:
        fail(str(error))
    emit(f"applied {fix.kind} ({fix.title}):\n{fix.action.diff}", None)


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
    except SystemExit:  # every normal exit: leave without importing the validation loop
        raise
    except BaseException as error:  # SIGTERM/SIGHUP during validate, after its clean-up
        from .validate.loop import Stopped

        if isinstance(error, Stopped):
            sys.stderr.write(f"oomtriage: stopped by signal {error.signum}; scratch folders and the repro were cleaned up\n")
            sys.exit(128 + error.signum)
        raise
