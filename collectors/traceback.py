"""Python tracebacks from logs: plain and chained tracebacks, IPython/Jupyter tracebacks,
interleaved multi-rank output (``[rank3]:`` prefixes) and torchrun's error summary. Frames are
marked as the user's or a library's, and the user's source lines are read where the files exist."""

from __future__ import annotations

import re
from pathlib import Path

from oomtriage.logread import LogView
from oomtriage.models import Frame, StackTrace, TriageContext

from . import ContextPart, register
from .oom_messages import join_continuations, split_rank

PLAIN_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d{1,9})(?:, in (?P<func>.+))?\s*$')
IPYTHON_FRAME = re.compile(r"^\s*File (?P<file>/\S+?\.py):(?P<line>\d{1,9}), in (?P<func>[\w.<>]+)")
IPYTHON_CELL = re.compile(r"^\s*(?:Cell In\s*\[(?P<cell>\d*)\], line (?P<line>\d{1,9})|Input In \[\d+\], in <cell line: (?P<line2>\d{1,9})>)")
# Older IPython and Colab: "/path/file.py in func(args)", Colab's "[/path/file.py](link) in func(args)",
# "<ipython-input-7-...> in <cell line: 1>()"; the line number is on the "---> 781" arrow below.
IPYTHON_OLD_FRAME = re.compile(r"^\s*(?:\[(?P<file>[^\]\s]+?\.py)\]\([^)\s]*\)|(?P<file2>/\S+?\.py)|(?P<cell2><ipython-input-[\w-]+>))"
                               r"\s+in\s+(?P<func><?[\w.]+(?: line: \d+>)?>?)\(")
IPYTHON_ARROW = re.compile(r"^\s*-+>\s*(?P<line>\d{1,9})?\s*(?P<code>.*)$")
TRACEBACK_START = re.compile(r"Traceback \(most recent call last\)|^\S*(?:Error|Exception)\s+Traceback \(most recent call last\)")
CHAIN_MARKERS = ("During handling of the above exception", "The above exception was the direct cause")
TORCHRUN_ROOT = re.compile(r"rank\s*:\s*(\d+)\s*\(local_rank:\s*(\d+)\)")
LIBRARY_PATH = re.compile(
    r"site-packages|dist-packages|/lib/python\d|<frozen|/torch/|/tensorflow/|/jax/|/jaxlib/|\\lib\\|"
    r"/usr/lib/|/opt/conda/lib|<string>|/transformers/|/accelerate/|/deepspeed/"
)
CONTEXT_LINES = 8  # enough to show the loop around the failing line (where leaks live)
SUSPECT_LINES = 400  # how far back from the end of a log without an OOM message a traceback is looked for


def is_library_path(filename: str) -> bool:
    return bool(LIBRARY_PATH.search(filename))


def _inside(path: Path, roots: list[Path]) -> bool:
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):
        return False
    return any(resolved.is_relative_to(root.resolve()) for root in roots)


def source_context(filename: str, lineno: int | None, roots: list[Path]) -> tuple[list[str], int | None]:
    """Lines around ``lineno`` when the file lies inside one of ``roots`` (the project, or folders
    the user named): a log can name any path, and only the user's own files may reach a prompt."""
    if lineno is None or not roots:
        return [], None
    candidates = [Path(filename)] + [root / filename for root in roots if not Path(filename).is_absolute()]
    for candidate in candidates:
        if not _inside(candidate, roots):
            continue
        try:
            if candidate.is_file() and candidate.stat().st_size < 5_000_000:
                lines = candidate.read_text(encoding="utf-8", errors="replace").splitlines()
            else:
                continue
        except OSError:
            continue
        first = max(1, lineno - CONTEXT_LINES)
        return lines[first - 1 : lineno + CONTEXT_LINES], first
    return [], None


def parse_traceback(lines: list[str], roots: list[Path] | None = None) -> StackTrace | None:
    """The last traceback in ``lines`` (which end at or just after the exception line)."""
    starts = [index for index, line in enumerate(lines) if TRACEBACK_START.search(line)]
    chained = sum(1 for line in lines if any(marker in line for marker in CHAIN_MARKERS))
    start = starts[-1] if starts else 0
    frames: list[Frame] = []
    exception_line = None
    index = start + 1 if starts else 0
    while index < len(lines):
        line = lines[index]
        plain = PLAIN_FRAME.match(line)
        notebook = IPYTHON_FRAME.match(line) or IPYTHON_CELL.match(line) or IPYTHON_OLD_FRAME.match(line)
        if plain or notebook:
            match = plain or notebook
            groups = match.groupdict()
            filename = groups.get("file") or groups.get("file2") or groups.get("cell2") or \
                f"<cell {groups.get('cell') or ''}>".replace(" >", ">")
            lineno = groups.get("line") or groups.get("line2")
            if notebook and not lineno:
                lineno = _notebook_arrow_line(lines, index)
            code = None
            if plain and index + 1 < len(lines) and not PLAIN_FRAME.match(lines[index + 1]) and lines[index + 1].startswith((" ", "\t")):
                code = lines[index + 1].strip() or None
            if notebook:
                code = _notebook_code(lines, index)
            frames.append(Frame(filename=filename, lineno=int(lineno) if lineno else None,
                                function=(groups.get("func") or "").strip() or None, code=code,
                                is_user=not is_library_path(filename)))
        elif frames and re.match(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exhausted)\b", line.strip()):
            exception_line = line.strip()
            break
        index += 1
    if not frames:
        frames = _bare_failing_line(lines)
        if not frames:
            return None
    for frame in frames:
        if frame.is_user and not frame.filename.startswith("<"):
            frame.source_context, frame.context_first_line = source_context(frame.filename, frame.lineno, roots or [])
    return StackTrace(frames=frames, exception_line=exception_line, chained=chained)


# A pasted excerpt that kept only the failing source line of its traceback ("    y = attn(q, k)"
# right above "torch.OutOfMemoryError: ..."): that line is still what asked for the memory.
_EXCEPTION_LINE = re.compile(r"^\s*(?:[A-Za-z_][\w.]*\.)?[A-Za-z_]\w*(?:Error|Exception|Exhausted)\b")
_CODE_LINE = re.compile(r"^(?:\s{2,}|\t)(?![-=*#|>]|File\b|Traceback\b)[A-Za-z_(\[][^\n]*(?:=|\()[^\n]*$")


def _bare_failing_line(lines: list[str]) -> list[Frame]:
    for index, line in enumerate(lines):
        if index and _EXCEPTION_LINE.match(line) and _CODE_LINE.match(lines[index - 1]):
            return [Frame(filename="<pasted excerpt>", lineno=None, function=None, code=lines[index - 1].strip(), is_user=False)]
    return []


def _notebook_arrow_line(lines: list[str], index: int) -> str | None:
    for line in lines[index + 1 : index + 12]:
        arrow = IPYTHON_ARROW.match(line)
        if arrow:
            return arrow.group("line")
        if IPYTHON_FRAME.match(line) or IPYTHON_CELL.match(line) or IPYTHON_OLD_FRAME.match(line):
            return None
    return None


def _notebook_code(lines: list[str], index: int) -> str | None:
    for line in lines[index + 1 : index + 12]:
        arrow = IPYTHON_ARROW.match(line)
        if arrow:
            return arrow.group("code").strip() or None
        if IPYTHON_FRAME.match(line) or IPYTHON_CELL.match(line) or IPYTHON_OLD_FRAME.match(line):
            return None
    return None


def lines_for_rank(text: str, rank: int | None) -> list[str]:
    split = [split_rank(line) for line in join_continuations(text.split("\n"))]
    if rank is None:
        return [body for _, body in split]
    return [body for line_rank, body in split if line_rank == rank]


def torchrun_failing_ranks(text: str) -> list[int]:
    """Ranks named in torchrun's ``ChildFailedError`` summary."""
    if "ChildFailedError" not in text and "Root Cause" not in text:
        return []
    return sorted({int(rank) for rank, _ in TORCHRUN_ROOT.findall(text)})


class TracebackCollector:
    """Parses the traceback that leads to the first OOM line (needs ``error.line_number`` or text)."""

    name = "traceback"

    def __init__(self, roots: list[Path] | None = None) -> None:
        self.roots = [Path.cwd()] if roots is None else roots

    def collect(self, source: LogView, context: TriageContext) -> ContextPart:
        part: ContextPart = {}
        error = context.error
        if error is None:
            # No OOM message (a traceback cut before it, or a log that lost it): the last traceback
            # near the end of the log is still evidence for a suspected OOM.
            if context.stack is None and not context.non_oom_errors:
                text = source.whole if source.whole is not None else source.tail
                lines = lines_for_rank(text, None)[-SUSPECT_LINES:]
                stack = parse_traceback(lines, self.roots)
                if stack:
                    part["stack"] = stack
            return part
        rank = error.rank
        for region in source.regions:
            lines = lines_for_rank(region.text, rank)
            cut = _index_of(lines, error.raw_message)
            if cut is None:
                continue
            # A notebook prints the exception name first and the frames after it.
            scope = lines[cut:] if TRACEBACK_START.search(lines[cut]) else lines[: cut + 1]
            stack = parse_traceback(scope, self.roots)
            following = lines[cut + 1:]
            if stack is None and any(TRACEBACK_START.search(line) for line in following[:FOLLOWING_TRACEBACK_LINES]):
                # A log line first (TensorFlow's "Resource exhausted" warning), then the Python
                # traceback of the same failure, whose exception line may be cut off.
                stack = parse_traceback(following, self.roots)
            if stack:
                stack.rank = rank
                part["stack"] = stack
            break
        ranks = sorted({*context.failing_ranks, *(r for region in source.regions for r in torchrun_failing_ranks(region.text))})
        if ranks:
            part["failing_ranks"] = ranks
        return part


# How near after a log-line message a traceback must start to be the same failure's.
FOLLOWING_TRACEBACK_LINES = 6


def _index_of(lines: list[str], message: str | None) -> int | None:
    if not message:
        return None
    probe = " ".join(message.split())[:60]
    for index, line in enumerate(lines):
        if probe and probe in " ".join(line.split()):
            return index
    first_words = " ".join(message.split()[:4])
    for index, line in enumerate(lines):
        if first_words and first_words in line:
            return index
    return None


register(TracebackCollector())
