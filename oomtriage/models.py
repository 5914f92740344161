"""The typed spine: what collectors produce (``TriageContext``) and what the engine returns
(``TriageReport``). Both round-trip through JSON and carry a ``schema_version``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

SCHEMA_VERSION = 1
MAX_BYTES = 2**70  # no device holds this much: a larger figure is garbage
MAX_MESSAGE_CHARS = 4000

Framework = Literal["pytorch", "tensorflow", "jax", "paddle", "onnxruntime", "llama.cpp", "other", "unknown"]
# npu (Ascend, torch_npu), musa (Moore Threads) and mlu (Cambricon) ship copies of the CUDA caching
# allocator, messages and all.
Backend = Literal["cuda", "hip", "xpu", "npu", "musa", "mlu", "mps", "vulkan", "directml", "opencl", "webgpu", "cpu", "tpu", "host", "unknown"]
# The backends whose memory is an accelerator's own (not host RAM, not the CPU).
DEVICE_BACKENDS = frozenset({"cuda", "hip", "xpu", "npu", "musa", "mlu", "mps", "vulkan", "directml", "opencl", "webgpu", "tpu"})
Phase = Literal["training", "evaluation", "generation", "loading", "optimizer_setup", "data_loading", "unknown"]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class GpuProcess(Model):
    pid: int | None = None
    used_bytes: int
    is_self: bool = False


class OomError(Model):
    """One parsed out-of-memory message (or a recognised non-OOM error)."""

    is_oom: bool = True
    format: str = Field(description="id of the message format that matched, e.g. 'pytorch_sentence'")
    framework: Framework = "unknown"
    backend: Backend = "unknown"
    exception_type: str | None = None
    device_index: int | None = None
    requested_bytes: int | None = None
    total_bytes: int | None = None
    free_bytes: int | None = None
    allocated_bytes: int | None = None
    reserved_bytes: int | None = None
    reserved_unallocated_bytes: int | None = None
    allowed_bytes: int | None = None
    private_pool_bytes: int | None = None
    self_process_bytes: int | None = None
    processes: list[GpuProcess] = Field(default_factory=list)
    tensor_shape: list[int] | None = None
    tensor_dtype: str | None = None
    operation: str | None = None
    library: str | None = None
    rank: int | None = None
    line_number: int | None = None
    raw_message: str

    @field_validator("requested_bytes", "total_bytes", "free_bytes", "allocated_bytes", "reserved_bytes",
                     "reserved_unallocated_bytes", "allowed_bytes", "private_pool_bytes", "self_process_bytes", mode="before")
    @classmethod
    def _plausible_size(cls, value: object) -> object:
        """A figure beyond any device (or negative) is garbage from a mangled log: dropped, not trusted."""
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return int(value) if 0 <= value < MAX_BYTES and value == value else None
        return value

    @field_validator("tensor_shape", mode="before")
    @classmethod
    def _plausible_shape(cls, value: object) -> object:
        if isinstance(value, list) and (len(value) > 16 or any(not isinstance(d, int) or not 0 <= d < 2**40 for d in value)):
            return None
        return value

    @field_validator("raw_message", mode="before")
    @classmethod
    def _bounded_message(cls, value: object) -> object:
        return value[:MAX_MESSAGE_CHARS] if isinstance(value, str) else value


class Environment(Model):
    source: Literal["live", "log", "none"] = "none"
    python_version: str | None = None
    platform: str | None = None
    torch_version: str | None = None
    tensorflow_version: str | None = None
    jax_version: str | None = None
    cuda_version: str | None = None
    cudnn_version: str | None = None
    driver_version: str | None = None
    gpu_name: str | None = None
    gpu_capacity_bytes: int | None = None
    gpu_count: int | None = None
    allocator_env: dict[str, str] = Field(default_factory=dict)
    cuda_visible_devices: str | None = None
    rank: int | None = None
    local_rank: int | None = None
    world_size: int | None = None


class Frame(Model):
    filename: str
    lineno: int | None = None
    function: str | None = None
    code: str | None = None
    is_user: bool = True
    source_context: list[str] = Field(default_factory=list)
    context_first_line: int | None = None


class StackTrace(Model):
    frames: list[Frame] = Field(default_factory=list)
    exception_line: str | None = None
    chained: int = Field(0, description="earlier tracebacks chained to this one")
    rank: int | None = None

    @property
    def user_frames(self) -> list[Frame]:
        return [frame for frame in self.frames if frame.is_user]


class MemoryStats(Model):
    source: Literal["memory_stats", "memory_summary", "live"]
    allocated_bytes: int | None = None
    allocated_peak_bytes: int | None = None
    reserved_bytes: int | None = None
    reserved_peak_bytes: int | None = None
    active_bytes: int | None = None
    inactive_split_bytes: int | None = None
    non_releasable_bytes: int | None = None
    num_alloc_retries: int | None = None
    num_ooms: int | None = None
    raw: dict[str, float] = Field(default_factory=dict)


class AllocationSite(Model):
    location: str
    bytes: int
    count: int


class SnapshotDigest(Model):
    segments: int
    reserved_bytes: int
    allocated_bytes: int
    active_bytes: int
    inactive_bytes: int
    largest_free_block_bytes: int
    fragmentation: float = Field(description="1 - largest free block / all free cached bytes")
    expandable_segments: bool = False
    top_sites: list[AllocationSite] = Field(default_factory=list)
    oom_requested_bytes: int | None = None
    oom_device_free_bytes: int | None = None
    trace_entries: int = 0


class OpMemory(Model):
    name: str
    self_bytes: int = 0
    total_bytes: int = 0
    calls: int | None = None


class ProfilerSummary(Model):
    source: Literal["table", "chrome_trace"]
    device: str = "cuda"
    top_ops: list[OpMemory] = Field(default_factory=list)
    peak_allocated_bytes: int | None = None
    peak_reserved_bytes: int | None = None
    oom_events: int = 0


class LogExcerpt(Model):
    """The lines around the first OOM: what the LLM prompt quotes as evidence."""

    text: str
    first_line: int | None = None


class RuntimeInfo(Model):
    """What the process knew at the moment of the OOM (captured by the hook, not from a log)."""

    simulated: bool = False
    argv: list[str] = Field(default_factory=list)
    steps_completed: int | None = None
    grad_enabled: bool | None = None
    autocast_enabled: bool | None = None
    dtype_shares: dict[str, float] = Field(default_factory=dict, description="share of live tensor bytes per dtype")
    pid: int | None = None


class TriageContext(Model):
    """Everything the collectors found about one failure."""

    schema_version: int = SCHEMA_VERSION
    error: OomError | None = None
    additional_ooms: int = Field(0, description="further OOM messages after the first")
    failing_ranks: list[int] = Field(default_factory=list)
    non_oom_errors: list[OomError] = Field(default_factory=list)
    environment: Environment = Field(default_factory=Environment)
    stack: StackTrace | None = None
    memory_stats: MemoryStats | None = None
    memory_summary: str | None = Field(None, description="torch.cuda.memory_summary() of the failing device, as captured")
    snapshot: SnapshotDigest | None = None
    profiler: list[ProfilerSummary] = Field(default_factory=list)
    excerpt: LogExcerpt | None = None
    runtime: RuntimeInfo | None = None
    note: str | None = None
    sources: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


class Measurement(Model):
    """Peak memory and the numerics fingerprint of one run (written by the child at exit)."""

    schema_version: int = SCHEMA_VERSION
    device: Literal["cuda", "simulated", "fake", "cpu"] = Field(
        description="cuda: real GPU; simulated: real CPU run counted by the allocator model; fake: fake tensors, no values")
    capacity_bytes: int | None = None
    peak_allocated_bytes: int | None = None
    peak_reserved_bytes: int | None = None
    num_alloc_retries: int | None = None
    oom: bool = False
    exit: Literal["completed", "max_steps", "oom", "error"] = "completed"
    steps: int = 0
    losses: list[float] = Field(default_factory=list, description="every scalar backpropagated")
    step_losses: list[float] = Field(default_factory=list, description="loss per optimizer step (sum over micro-batches)")
    grad_norms: list[float] = Field(default_factory=list, description="global gradient norm of each step, before clipping")
    ooms_raised: int = Field(0, description="OOMs the device raised, including those the script caught itself")
    steps_counted_by: Literal["optimizer", "backward"] = Field(
        "optimizer", description="backward: no torch.optim optimizer was built, so each backward() was a step")
    backward_calls: int = 0
    stochastic_off: bool = Field(False, description="dropout was disabled for this run (like-with-like numerics)")
    dropout_seen: bool = Field(False, description="a dropout with p > 0 ran in training mode")
    last_oom_message: str | None = Field(None, description="the message of the last OOM raised (caught or not)")

    @property
    def caught_ooms(self) -> int:
        """OOMs the script caught and survived (auto batch-size finders, retry loops)."""
        return max(0, self.ooms_raised - (1 if self.oom else 0))


# --- report ---------------------------------------------------------------------------------


class Fix(Model):
    kind: str = Field(description="fix kind from the catalog (oomtriage.engine.fixes)")
    title: str
    how: str = Field(description="what to change, in words")
    snippet: str | None = None
    expected_saving: str | None = None
    env: dict[str, str] = Field(default_factory=dict, description="environment variables to set")
    diff: str | None = Field(None, description="a unified diff against the user's files")
    validation: str | None = Field(None, description="how to prove the fix (what to re-measure)")
    source: Literal["rules", "llm"] = "rules"


class Cause(Model):
    id: str
    title: str
    confidence: float = Field(ge=0.0, le=1.0, description="how likely this is the root cause (calibrated on real reports)")
    score: float | None = Field(default=None, ge=0.0, le=1.0,
                                description="the rule engine's combined vote before calibration (None for a model-only cause)")
    evidence: list[str] = Field(default_factory=list)
    counter_evidence: list[str] = Field(default_factory=list, description="what the rules read against this cause (it lowered the score)")
    fixes: list[Fix] = Field(default_factory=list)
    agreement: Literal["both", "rules_only", "llm_only"] | None = None


class Fact(Model):
    name: str
    value: float | int | str | bool | None
    text: str


class EngineInfo(Model):
    used: Literal["rules", "llm"] = "rules"
    model: str | None = None
    fallback_reason: str | None = None
    exchange_id: str | None = None
    prompt_tokens: int | None = None
    dropped: list[str] = Field(default_factory=list, description="what the token budget removed from the prompt")
    redactions: dict[str, int] = Field(default_factory=dict, description="secrets redacted, by kind")


class TriageReport(Model):
    schema_version: int = SCHEMA_VERSION
    detected: bool = Field(description="an OOM message was found in the input")
    suspected: bool = Field(False, description="no OOM message, but a cut traceback or the note says the run "
                                               "died: causes are ranked from the frames, phase and note")
    error: OomError | None = None
    additional_ooms: int = 0
    failing_ranks: list[int] = Field(default_factory=list)
    phase: Phase = "unknown"
    explanation: list[str] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)
    causes: list[Cause] = Field(default_factory=list)
    engine: EngineInfo = Field(default_factory=EngineInfo)
    non_oom_errors: list[OomError] = Field(default_factory=list)
    environment: Environment = Field(default_factory=Environment)
    stack: StackTrace | None = Field(None, description="the failing traceback: where code fixes are applied")
    memory_summary: str | None = Field(None, description="torch.cuda.memory_summary() captured at the OOM (live runs)")
    llm_analysis: str | None = None
    changelog_summary: str | None = None
    sources: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    def fact(self, name: str) -> Fact | None:
        return next((fact for fact in self.facts if fact.name == name), None)

    def _repr_html_(self) -> str:
        """Jupyter shows the report itself (the same HTML as ``--format html``, as a fragment)."""
        from .html_report import render_html

        return render_html(self, fragment=True)
