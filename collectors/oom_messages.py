"""Find and parse every error message in a scanned log: the first OOM becomes ``context.error``,
later ones are counted, and recognised non-OOM errors are kept so the report can say "not an OOM"."""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass

from pydantic import ValidationError

from oomtriage.logread import TRIGGER_TEXT, LogView
from oomtriage.models import OomError

from . import ContextPart, register
from .message_formats import FORMATS, Window

# Formats are tried in this module order: specific before generic, non-OOM look-alikes first.
FORMAT_MODULES = ("not_oom", "oom_other_frameworks", "oom_pytorch", "oom_tensorflow", "oom_jax", "oom_paddle", "oom_libraries", "oom_rapids", "oom_julia", "oom_gpu_libraries", "oom_opencl", "oom_metal", "oom_host", "oom_runtime")
for _module in FORMAT_MODULES:
    importlib.import_module(f"{__package__}.{_module}")

RANK_PREFIX = re.compile(r"^\s*\[(?:rank|default)(\d{1,7})\]:?\s?|^\s*rank(\d{1,7})\]?:\s")
# Bounded repetitions: a run of 64 KB of letters must not make this quadratic.
EXCEPTION_PREFIX = re.compile(r"([A-Za-z_][\w.]{0,150}(?:Error|Exception|Exhausted))(?: \(see above for traceback\))?\s{0,4}:?\s{0,4}$")
PREFIX_CHARS = 240  # the exception name sits just before the message
WINDOW_LINES = 40
SAME_EVENT_CHARS = 30_000
MAX_PARSED_PER_REGION = 64  # trigger lines parsed per region; the rest are counted, not parsed


@dataclass
class FoundMessage:
    error: OomError
    primary: bool
    position: int  # absolute character position in the log, for ordering and de-duplication


def split_rank(line: str) -> tuple[int | None, str]:
    match = RANK_PREFIX.match(line)
    if not match:
        return None, line
    return int(match.group(1) or match.group(2)), line[match.end() :]


def join_continuations(lines: list[str]) -> list[str]:
    """Lines ending in a backslash were wrapped by hand (``alread\\`` / ``y allocated``): rejoin them."""
    joined: list[str] = []
    carry = ""
    for line in lines:
        if line.endswith("\\"):
            carry += line[:-1]
            continue
        joined.append(carry + line)
        carry = ""
    if carry:
        joined.append(carry)
    return joined


def _flat(text: str) -> str:
    return " ".join(text.split())


def parse_window(lines: list[str], rank: int | None, line_number: int | None) -> tuple[OomError, bool] | None:
    """Try every registered format on a window whose first line is the anchor."""
    flat = _flat(" \n ".join(lines))
    window = Window(lines=lines, flat=flat, anchor_length=len(_flat(lines[0])))
    for message_format in FORMATS:
        match = message_format.pattern.search(flat)
        if not match or match.start() >= window.anchor_length:
            continue
        try:
            fields = message_format.parse(match, window)
        except (ValueError, TypeError, AttributeError, IndexError):
            continue  # a garbled or truncated message: a looser format may still match
        fields.setdefault("format", message_format.name)
        if "exception_type" not in fields:
            prefix = EXCEPTION_PREFIX.search(flat[max(0, match.start() - PREFIX_CHARS) : match.start()])
            if prefix:
                fields["exception_type"] = prefix.group(1)
        fields = {key: value for key, value in fields.items() if value is not None}
        try:
            error = OomError(is_oom=message_format.is_oom, rank=rank, line_number=line_number, **fields)
        except ValidationError:
            continue  # a format that extracted nonsense is skipped; a looser one may still match
        return error, message_format.primary
    return None


def find_messages(text: str, offset: int = 0, first_line: int | None = None) -> list[FoundMessage]:
    lines = join_continuations(text.split("\n"))
    split = [split_rank(line) for line in lines]
    found: list[FoundMessage] = []
    position = offset
    tried = 0
    for index, (rank, content) in enumerate(split):
        line_position = position
        position += len(lines[index]) + 1
        if not TRIGGER_TEXT.search(content):
            continue
        tried += 1
        if tried > MAX_PARSED_PER_REGION:
            break
        window = [body for line_rank, body in split[index : index + 3 * WINDOW_LINES] if line_rank == rank]
        line_number = first_line + index if first_line is not None else None
        parsed = parse_window(window[:WINDOW_LINES], rank, line_number)
        if parsed:
            error = parsed[0]
            if error.framework == "jax" and error.format.startswith("xla"):
                before = [body for line_rank, body in split[max(0, index - XLA_LOOKBACK_LINES):index] if line_rank == rank]
                error = _xla_compiled_by(error, "\n".join(before + window[:WINDOW_LINES]))
            found.append(FoundMessage(error, parsed[1], line_position))
    return found


# XLA's status lines read the same whichever framework compiled the program: TensorFlow's XLA
# (jit_compile, --use_xla, tf.function) raises them inside its own exception and frames, which
# precede the status line; a JAX program names jax, jaxlib or flax there.
XLA_LOOKBACK_LINES = 12
_TENSORFLOW_AROUND = re.compile(r"\btensorflow[/\\.]|\btf\.(?:function|keras|compat|Session)\b|\bkeras[/\\.]|\bxla_run\b")
_JAX_AROUND = re.compile(r"\bjax(?:lib)?[/\\._]|\bflax[/\\.]|\bjax\b")


def _xla_compiled_by(error: OomError, around: str) -> OomError:
    if _TENSORFLOW_AROUND.search(around) and not _JAX_AROUND.search(around):
        return error.model_copy(update={"framework": "tensorflow"})
    return error


def _same_event(a: FoundMessage, b: FoundMessage) -> bool:
    if a.error.raw_message == b.error.raw_message and a.error.rank == b.error.rank:
        return abs(a.position - b.position) < SAME_EVENT_CHARS
    key_a = (a.error.framework, a.error.requested_bytes, a.error.tensor_shape, a.error.rank)
    key_b = (b.error.framework, b.error.requested_bytes, b.error.tensor_shape, b.error.rank)
    return key_a == key_b and abs(a.position - b.position) < SAME_EVENT_CHARS


def _merge_supporting(error: OomError, supporting: list[FoundMessage], position: int) -> OomError:
    """Fill gaps in the exception's fields from log lines just before it (TF's BFC lines, say)."""
    updates = {}
    for message in supporting:
        if abs(message.position - position) > SAME_EVENT_CHARS or message.error.framework not in (error.framework, "unknown"):
            continue
        for name in ("requested_bytes", "total_bytes", "allocated_bytes", "free_bytes", "backend"):
            value = getattr(message.error, name)
            if getattr(error, name) in (None, "unknown") and value not in (None, "unknown"):
                updates[name] = value
    return error.model_copy(update=updates) if updates else error


def summarise(found: list[FoundMessage], regions_dropped: int = 0) -> ContextPart:
    ooms = [message for message in found if message.error.is_oom]
    primaries = [message for message in ooms if message.primary]
    supporting = [message for message in ooms if not message.primary]
    events: list[FoundMessage] = []
    for message in primaries or supporting[:1]:
        if not any(_same_event(message, event) for event in events):
            events.append(message)
    part: ContextPart = {
        "non_oom_errors": [message.error for message in found if not message.error.is_oom][:5],
    }
    if events:
        first = events[0]
        part["error"] = _merge_supporting(first.error, supporting, first.position)
        part["additional_ooms"] = len(events) - 1 + regions_dropped
        ranks = sorted({event.error.rank for event in events if event.error.rank is not None})
        part["failing_ranks"] = ranks
    return part


class OomMessageCollector:
    name = "oom_messages"

    def collect(self, source: LogView, context: object = None) -> ContextPart:
        found: list[FoundMessage] = []
        for region in source.regions:
            found.extend(find_messages(region.text, region.offset, region.first_line))
        part = summarise(found, source.regions_dropped)
        if source.saturated and context is not None:
            part["warnings"] = [*getattr(context, "warnings", []), f"{source.name}: the log holds more OOM-like lines than "
                                "oomtriage examines; the first ones are analysed and later ones are not counted"]
        return part


register(OomMessageCollector())
