"""Rules keyed on what kind of message failed: host OOMs, library handles, NCCL, serving engines,
two frameworks on one GPU, version regressions."""

from __future__ import annotations

import re
from typing import Iterator

from oomtriage.gpus import LARGEST_CARD_BYTES
from oomtriage.sizes import SIZE_PATTERN, format_size, parse_size

from ..facts import CONTEXT_OVERHEAD
from . import RuleInput, Vote, rule


@rule
def host_memory(data: RuleInput) -> Iterator[Vote]:
    error = data.context.error
    if error is None or error.backend not in ("host", "cpu"):
        return
    message = error.raw_message
    if "Bus error" in message or "shared memory" in message:
        yield Vote("dataloader_or_host", 0.95, "A DataLoader worker died of a bus error: /dev/shm (shared memory) is too small.")
    elif error.format == "windows_commit_limit":
        loading = f" while a process loaded {error.library}" if error.library else ""
        yield Vote("dataloader_or_host", 0.92, f"Windows ran out of commit memory (RAM plus the paging file){loading}: every "
                   "DataLoader worker is a new process that loads torch's CUDA libraries again; use fewer workers "
                   "or a larger paging file.")
    elif error.backend == "host" and re.search(r"kill|SIGKILL", error.operation or ""):
        yield Vote("dataloader_or_host", 0.92, f"The process was killed for host RAM ({error.operation}), not by the GPU allocator.")
    elif error.backend == "host":
        # MemoryError, bad_alloc, ENOMEM: the process asked the host for memory and was refused
        yield Vote("dataloader_or_host", 0.92, f"A host allocation was refused ({error.operation}): RAM, or the process's "
                   "memory limit, is what ran out, not GPU memory.")
    else:
        yield Vote("dataloader_or_host", 0.6, "PyTorch's CPU allocator ran out of host RAM.")
        yield Vote("model_too_large", 0.3, "A CPU-side allocation of this size often comes from materialising the model.")
    if data.signals.phase == "loading":
        yield Vote("checkpoint_loading", 0.35, f"Host memory ran out while loading ({data.signals.phase_source}): "
                   "each rank may be materialising a full copy of the checkpoint.")


_LOOSE_MEMORY_WORD = re.compile(r"(?<!系统)(?<!主机)(?<!电脑)(?<!CPU)(?<!cpu)内存")
# The host named as such in either language, or the card's memory named beside it (显存): then "内存" is meant as RAM.
_HOST_MEMORY_NAMED = re.compile(r"显存|系统内存|主机内存|电脑内存|CPU\s?内存|物理内存|虚拟内存|\b(?:host|system|cpu) (?:ram|memory)\b|\bram\b|swap|交换", re.IGNORECASE)


@rule
def host_memory_in_the_note(data: RuleInput) -> Iterator[Vote]:
    """The note says what fills up is the machine's RAM: the data pipeline, pinned buffers or a
    model materialised on the CPU, whatever the GPU message says."""
    signals, error = data.signals, data.context.error
    if error and error.backend not in ("host", "cpu") and _LOOSE_MEMORY_WORD.search(data.context.note or "") \
            and not _HOST_MEMORY_NAMED.search(data.context.note or ""):
        # Chinese "内存" is the host's RAM, but many notes use it loosely for the card's memory
        # ("显示内存不够" beside CUDA's own message): with a device OOM in the log it restates that message.
        return
    if signals.host_ram and not (error and error.backend in ("host", "cpu")):
        # A kill by the kernel's (or a container's) OOM killer, said with no GPU message, is what the
        # host message would have said: the process died for RAM, whatever its input.
        killed = error is None and re.search(r"oom[- ]?kill|killed by (?:the )?(?:system|os|kernel|linux)|kernel killed",
                                             signals.evidence["host_ram"], re.IGNORECASE)
        yield Vote("dataloader_or_host", 0.8 if killed else 0.55, f'The note says host memory is what fills ("{signals.evidence["host_ram"]}"): '
                   "worker processes, pinned buffers and prefetched batches live in RAM, not on the GPU.")


@rule
def less_ram_than_the_card(data: RuleInput) -> Iterator[Vote]:
    """A machine with less RAM than its card, failing whatever the batch: the weights pass through
    host memory on their way to the device, and the driver commits host memory for device buffers
    (on Windows against RAM plus the page file), so the failure the tools report as VRAM can be the
    host's commit limit."""
    signals = data.signals
    ram, card = signals.host_ram_bytes, signals.note_gpu_capacity
    if not (ram and card and ram <= 0.5 * card and signals.batch_no_help):
        return
    windows = signals.windows
    yield Vote("dataloader_or_host", 0.65 if windows else 0.55, f"The machine has {ram / 1e9:.0f} GB of RAM for a {card / 1e9:.0f} GB card "
               "and the batch makes no difference: loading passes the weights through host memory and the driver commits host "
               "memory for device buffers" + (" (on Windows against RAM plus the page file: enlarge the page file)" if windows else "")
               + "; add RAM or swap, or load the weights straight to the device.")
    yield Vote("batch_too_large", -0.2, "A smaller batch made no difference.")


def _no_device_message(error) -> bool:
    """No accelerator said it ran out: no message at all, or a host/CPU one. A note's host-side
    reading (the data pipeline, a cache in RAM) is then what failed, not a bystander."""
    return error is None or error.backend in ("host", "cpu")


@rule
def dataset_cached_whole(data: RuleInput) -> Iterator[Vote]:
    """A dataset cached whole keeps every decoded element in host RAM (tf.data's cache() without a
    file, a loader's --cache ram); TensorFlow's file cache also buffered the whole set before
    writing in some releases. It fails once the set is larger than RAM, often before training starts."""
    signals, error = data.signals, data.context.error
    if signals.dataset_cached and _no_device_message(error):
        yield Vote("dataloader_or_host", 0.6, f'The dataset is cached ("{signals.evidence["dataset_cached"]}"): every decoded element '
                   "is kept in host RAM. Cache to a file on disk, cache a smaller (pre-resized) form, or do not cache.")


@rule
def data_preparation_in_host_processes(data: RuleInput) -> Iterator[Vote]:
    """Loading or mapping a dataset with worker processes (load_dataset, dataset.map with num_proc)
    runs on the host: each worker holds its shard's rows and writer buffers in RAM, and no GPU
    message is involved."""
    signals, error = data.signals, data.context.error
    if signals.host_data_job and _no_device_message(error):
        yield Vote("dataloader_or_host", 0.55, f'Data preparation in worker processes ("{signals.evidence["host_data_job"]}"): each '
                   "worker keeps its rows and write buffers in host RAM. Fewer processes (num_proc), a smaller "
                   "writer_batch_size, or a columnar source (Parquet/Arrow) instead of JSON.")


@rule
def failing_in_the_data_pipeline(data: RuleInput) -> Iterator[Vote]:
    """What failed is the data pipeline's own work (augmentations, transforms, decoding, collation):
    CPU work in the loader's processes, on arrays in host RAM. Only without a GPU message that
    says otherwise: GPU-side augmentation fails with one."""
    signals, error = data.signals, data.context.error
    if signals.data_pipeline_fails and _no_device_message(error):
        yield Vote("dataloader_or_host", 0.55, f'It failed in the data pipeline ("{signals.evidence["data_pipeline_fails"]}"): '
                   "augmentations and transforms run in the loader's processes on host RAM; large images multiply "
                   "what each worker holds (fewer workers, a smaller prefetch_factor, or downscale the images first).")
        yield Vote("input_size_too_large", -0.35, "The inputs are large, but what ran out held them on the host, "
                   "before any activation of the model existed.")


@rule
def memory_outside_pytorch(data: RuleInput) -> Iterator[Vote]:
    if data.signals.outside_pytorch:
        yield Vote("other_process_or_device", 0.6, f'The card is full while PyTorch\'s own figures are small ("{data.signals.evidence["outside_pytorch"]}"): '
                   "the memory is held outside PyTorch's cache, by another process, a library or framework in the same process.")


@rule
def only_when_compiled(data: RuleInput) -> Iterator[Vote]:
    """Eager fits and the compiled program does not: compilation's own memory (CUDA graphs' private
    pools, recompiled graphs kept per shape, fused kernels' buffers)."""
    if data.signals.only_compiled:
        said = data.signals.evidence["only_compiled"]
        yield Vote("framework_bug", 0.5, f'Only the compiled program runs out ("{said}"): '
                   "compilation's own memory (graphs recompiled per shape, fused buffers), a compiler issue to report or work around.")
        if not re.search(r"xla|jit_compile", said, re.IGNORECASE):
            yield Vote("other", 0.3, "CUDA graphs (mode=\"reduce-overhead\") keep private memory pools for as long as they live.")
        # The same code run eagerly does not run out: nothing the user's code keeps is what fills the card,
        # and the inputs it is given fit: one huge request is the compiler's buffer plan, not an activation.
        for kept in ("reference_leak", "graph_retained"):
            yield Vote(kept, -0.3, "The same code without compilation does not run out, so it keeps nothing that grows.")
        for workload in ("batch_too_large", "input_size_too_large"):
            yield Vote(workload, -0.25, "The same batch and inputs fit when the program is not compiled.")


@rule
def library_handles(data: RuleInput) -> Iterator[Vote]:
    error = data.context.error
    if error is None or error.library not in ("cublas", "cudnn", "cufft", "curand", "cusolver", "cusparse"):
        return
    if error.library == "cublas" and re.search(r"when calling `?cublas(?:Lt)?Create", error.raw_message):
        # PyTorch creates a cuBLAS handle lazily, at the first matrix product on each thread (the
        # backward runs on its own): a handle and a few MiB of workspace, asked of the driver while
        # the caching allocator keeps everything the program's tensors took. It fails only once the
        # program itself has filled the card, so what filled it is the cause.
        yield Vote("cudnn_or_workspace", 0.45, "cuBLAS could not create its handle: it needs only a few MiB, "
                   "allocated outside PyTorch's cache, so the card was already full of the program's own memory.")
        yield Vote("batch_too_large", 0.45, "PyTorch's cache held the whole card when cuBLAS asked for its handle: "
                   "the batch's activations are what usually fills it; a smaller batch leaves the library room.")
        yield Vote("input_size_too_large", 0.2, "Large inputs (resolution, length) fill the card the same way.")
    else:
        yield Vote("cudnn_or_workspace", 0.75, f"{error.library} could not allocate its handle or workspace: "
                   "library workspaces live outside the framework's pool and fail when the GPU is already full.")
    yield Vote("other_process_or_device", 0.35, "Library initialisation failing at start-up usually means something "
               "else already holds the GPU (another process, or TensorFlow's pre-allocation).")


@rule
def recomputation_that_costs_more(data: RuleInput) -> Iterator[Vote]:
    """Rematerialisation (gradient checkpointing, jax.checkpoint, nn.remat) only drops activations to
    recompute them: it can lower the peak, never raise it. Said to raise it, the compiler or the
    wrapper mishandles it (XLA scheduling the recomputation so both copies live, a wrapper that saves
    every input)."""
    signals = data.signals
    if signals.saver_costs_more and not signals.switch_no_effect:
        yield Vote("framework_bug", 0.6, f'Recomputation said to raise memory ("{signals.evidence["saver_costs_more"]}"): '
                   "it should only ever lower it; try another release, another backend, or the saver on fewer layers.")


@rule
def switch_without_effect(data: RuleInput) -> Iterator[Vote]:
    """A documented memory-saving switch (attention slicing, offload, a watermark, a memory cap)
    that changes nothing at all is not reaching the code that allocates: a pipeline or version that
    ignores it, or a setting read before it was set."""
    if data.signals.switch_no_effect:
        said = data.signals.evidence["switch_no_effect"]
        offload = bool(re.search(r"offload", said, re.IGNORECASE))
        if data.signals.saver_broke_fit:
            # the run fit until the switch was turned on: the user's own A/B test, like a version change
            yield Vote("framework_bug", 0.7, f'A memory-saving switch is what broke a run that fit ("{said}"): it costs more '
                       "than it saves on this code path (a library bug, or a combination it does not support).")
            for cause in ("model_too_large", "checkpoint_loading"):
                yield Vote(cause, -0.35, "Without the switch the same model loads and runs.")
        else:
            yield Vote("framework_bug", 0.65 if offload else 0.55, f'A memory-saving switch had no effect ("{said}"): '
                       "the code path that allocates ignores it (a library bug or an unsupported pipeline), or it is set too late to be read.")
        if offload:
            # Offload that works keeps the weights (or optimizer states) off the GPU whatever the input;
            # one that does not leaves them all there.
            yield Vote("input_size_too_large", -0.3, "With working offload the weights leave the GPU; an input of this size "
                       "would fit the room they leave.")
        if re.search(r"til|chunk|slic", data.signals.evidence["switch_no_effect"], re.IGNORECASE):
            # Tiling or chunking bounds the memory an input takes; at any setting the same failure
            # means the allocation happens outside the tiled path, not that the input is too large.
            yield Vote("input_size_too_large", -0.35, "Tiling/chunking the input at any size did not change the failure.")


@rule
def tensorrt_allocation(data: RuleInput) -> Iterator[Vote]:
    """TensorRT's builder times each layer's tactics inside a workspace pool it allocates up front;
    a workspace limit near the card's size (or the default, all of it) is what the allocator refuses."""
    error = data.context.error
    if error is None or error.library != "tensorrt":
        return
    yield Vote("cudnn_or_workspace", 0.7, f"TensorRT's allocator was refused ({error.raw_message[:90]}): the builder's tactic "
               "workspace is sized by its memory-pool limit, not by the model; a smaller limit trades a few tactics for memory.")
    yield Vote("model_too_large", 0.3, "The engine's weights and activations also live on the card beside the workspace.")


@rule
def library_named_in_the_note(data: RuleInput) -> Iterator[Vote]:
    error = data.context.error
    if data.signals.library_said and not (error and error.library in ("cublas", "cudnn")):
        yield Vote("cudnn_or_workspace", 0.65, f'The note names a math library\'s allocation ("{data.signals.evidence["library_said"]}"): '
                   "cuDNN/cuBLAS handles and workspaces are allocated outside the framework's pool, in whatever is left free.")


@rule
def behaviour_contrary_to_the_docs(data: RuleInput) -> Iterator[Vote]:
    """Two ways the documentation says are equivalent, one of which runs out of memory, or a setting
    documented to save memory that does not: the library (or its documentation) is at fault."""
    if data.signals.contrary_to_docs:
        yield Vote("framework_bug", 0.55, f'The library behaves otherwise than its documentation says ("{data.signals.evidence["contrary_to_docs"]}"): '
                   "report it with the two variants side by side, and use the one that works until it is fixed.")


@rule
def a_backend_turned_off_makes_it_fit(data: RuleInput) -> Iterator[Vote]:
    """The same run fits once a backend or kernel is off (cuDNN, xformers, a fused attention): memory
    that grows with it on is that library's leak; memory that fails at once is its workspace."""
    signals = data.signals
    if not signals.backend_off_fixes:
        return
    said = signals.evidence["backend_off_fixes"]
    if signals.growth:
        yield Vote("framework_bug", 0.65, f'Memory grows only with the backend on ("{said}"): the library keeps what it should free; '
                   "keep it off (or upgrade it) until the leak is fixed, and report it with the two runs side by side.")
        yield Vote("graph_retained", -0.3, "The same code stops growing with the backend off: the user's graph is not what grows.")
    else:
        yield Vote("cudnn_or_workspace", 0.55, f'It fits with the backend off ("{said}"): its workspace or algorithm search is what does '
                   "not fit; cap the workspace or turn benchmark mode off instead of the whole backend.")
        yield Vote("framework_bug", 0.25, "A backend that cannot run what the fallback runs may be a library bug.")


@rule
def a_known_bug_come_back(data: RuleInput) -> Iterator[Vote]:
    """A failure the note ties to a bug reported (and marked fixed) before: the fix missed this case,
    or the bug came back."""
    if data.signals.known_bug_back:
        yield Vote("framework_bug", 0.55, f'The note ties it to a known bug ("{data.signals.evidence["known_bug_back"]}"): a fix that '
                   "did not cover this case, or a regression; check the release the fix landed in and report it there.")


@rule
def nccl_buffers(data: RuleInput) -> Iterator[Vote]:
    error = data.context.error
    if error is None or error.library != "nccl":
        return
    yield Vote("cudnn_or_workspace", 0.45, "NCCL could not allocate its communication buffers: they live outside PyTorch's cache.")
    yield Vote("distributed_replication", 0.35, "Collective buffers fail first when every rank already holds a full replica.")
    yield Vote("batch_too_large", 0.25, "The GPU was full when NCCL needed memory.")


@rule
def serving_engine(data: RuleInput) -> Iterator[Vote]:
    error = data.context.error
    signals = data.signals
    if signals.engines_share_gpu and (signals.serving_engine or (error and error.format == "serving_kv_cache")):
        # The engine's budget is a share of the whole card, and memory the first engine already
        # holds is counted as used when the second one profiles: the second finds no room left.
        yield Vote("other_process_or_device", 0.9, f'Another engine or model already runs on the same GPU ("{signals.evidence["engines_share_gpu"]}"): '
                   "the memory it holds counts against this engine's gpu_memory_utilization, which is a fraction of the whole card; "
                   "give each engine a share that leaves room for the other's, or put them on separate GPUs.")
        yield Vote("kv_cache_or_generation", 0.5, "The KV cache reserved for max_model_len is what the second engine could not fit.")
        return
    if error and error.format == "serving_kv_cache":
        yield Vote("kv_cache_or_generation", 0.9, "The serving engine could not fit its KV cache in the memory left "
                   "after the weights: max_model_len / max_num_seqs ask for more cache than gpu_memory_utilization leaves.")
    elif signals.serving_engine:
        what = signals.evidence.get("serving_engine") or "the serving engine"
        if signals.host_only:
            return  # the server's host memory fills, with no GPU message (rule host_memory)
        if "diffusion" in signals.domains and "llm" not in signals.domains:
            return  # an engine serving an image or video model keeps no KV cache: its pipeline's weights and activations are the story
        # At start-up the engine's own reservation (KV cache, profile run) is what fails; under load
        # it is the per-request work on top of it (logits, long prompts).
        at_start = signals.immediate or signals.construction or signals.phase in ("loading", "unknown") or \
            re.search(r"start|init|launch|profile|boot|load", f"{data.context.note or ''} {signals.phase_source or ''}", re.IGNORECASE)
        weight = 0.45 if signals.under_load and not signals.immediate else 0.8 if at_start else 0.55
        if signals.engine_starting:
            weight = max(weight, 0.75)  # the engine's own start-up or wake-up failed: its reservation is what did not fit
        if signals.tool_misestimates:
            weight = min(weight, 0.45)  # the engine's own plan is said to be wrong (rule a_tools_own_estimate_is_wrong)
        elif signals.colocated and signals.phase in ("training", "unknown"):
            weight = 0.3  # the trainer beside the engine failed, not the engine's own reservation (rule trainer_beside_an_inference_engine)
        yield Vote("kv_cache_or_generation", weight, f"{what} reserves GPU memory for its KV cache up front "
                   "(and profiles with a worst-case batch); that reservation leaves little for anything else.")


# What llama.cpp / ggml was allocating when it failed, from the buffer named in its log: the
# model's weights, the KV cache for the context, or the compute graph's scratch buffers.
_GGML_BUFFERS = [
    ("kv_cache_or_generation", 0.75, r"\bKV (?:self |cache )?buffer|kv_cache_init|llama_kv_cache|init_kv|kv self size",
     "the KV cache, sized by the context length (-c / num_ctx) times the parallel sequences"),
    ("model_too_large", 0.75, r"llm_load_tensors|load_tensors|model buffer|failed to load model|error loading model|"
                              r"offloading \d+ (?:repeating )?layers",
     "the model's weights (fewer GPU layers, -ngl, or a smaller quantization)"),
    ("kv_cache_or_generation", 0.45, r"compute buffer|ggml_gallocr_reserve|graph_reserve|sched_reserve|failed to reserve",
     "the compute graph's buffers, which grow with the context and the batch (-b / -ub)"),
]


@rule
def ggml_buffer_kind(data: RuleInput) -> Iterator[Vote]:
    error = data.context.error
    if error is None or error.framework != "llama.cpp":
        return
    excerpt = data.context.excerpt.text if data.context.excerpt else ""
    failing = excerpt.find(error.raw_message)
    before = excerpt[:failing] if failing >= 0 else excerpt
    # The caller reports what it was setting up on the lines right after the allocator's failure
    # ("llama_kv_cache_init: failed to allocate buffer for kv cache").
    after = excerpt[failing + len(error.raw_message):][:400] if failing >= 0 else ""
    # The failing line names its buffer; then the caller's report; otherwise the last buffer the
    # log started to set up.
    candidates = []
    for cause, weight, pattern, meaning in _GGML_BUFFERS:
        on_line = re.search(pattern, error.raw_message, re.IGNORECASE)
        next_lines = re.search(pattern, after, re.IGNORECASE)
        earlier = list(re.finditer(pattern, before[-4000:], re.IGNORECASE))
        if on_line:
            candidates.append((10**9, cause, weight, meaning, on_line.group(0)))
        elif next_lines:
            candidates.append((10**8 - next_lines.start(), cause, weight, meaning, next_lines.group(0)))
        elif earlier:
            candidates.append((earlier[-1].start(), cause, weight, meaning, earlier[-1].group(0)))
    if candidates:
        _, cause, weight, meaning, said = max(candidates, key=lambda item: item[0])
        yield Vote(cause, weight, f"The buffer that failed is {meaning} (`{said}` in the log).")
        if meaning.startswith("the compute graph"):
            yield from _ggml_compute_buffer(error, before)


def _ggml_compute_buffer(error, before: str) -> Iterator[Vote]:
    """A compute (scratch) buffer is sized by the engine from the graph, the micro-batch and, under
    pipeline parallelism, the number of copies it keeps in flight (n_copies buffers per GPU)."""
    requested = error.requested_bytes
    copies = re.search(r"pipeline parallelism enabled \(n_copies=(\d+)\)", before)
    if requested and requested > LARGEST_CARD_BYTES:
        yield Vote("framework_bug", 0.7, f"A compute buffer of {format_size(requested)} is larger than any GPU made: the engine "
                   "sized its scratch space wrong for this model and these settings (update it; meanwhile try without pipeline "
                   "parallelism, GGML_SCHED_MAX_COPIES=1, and a smaller -ub).")
        for workload in ("input_size_too_large", "kv_cache_or_generation"):
            yield Vote(workload, -0.35, "No context or batch setting a card can hold asks for a scratch buffer that size.")
    elif copies and int(copies.group(1)) > 1:
        yield Vote("framework_bug", 0.35, f"Pipeline parallelism keeps {copies.group(1)} copies of the compute buffers on each "
                   "GPU; builds since llama.cpp's fallback retry without it when they do not fit (GGML_SCHED_MAX_COPIES=1 turns it off).")


# ggml's Metal backend reports each buffer it maps with the running total against the GPU's working
# set ("(19626.77 / 10922.67)") and warns once the total passes it: the model's own buffers (weights,
# KV cache) already exceed what the GPU may keep resident, before any compute runs.
_METAL_WORKING_SET = re.compile(r"\((\d{3,7}(?:\.\d+)?) / (\d{3,7}(?:\.\d+)?)\)\s*ggml_metal_add_buffer: warning: current allocated size is greater than the recommended max working set size")


@rule
def metal_working_set_exceeded(data: RuleInput) -> Iterator[Vote]:
    excerpt = data.context.excerpt.text if data.context.excerpt else ""
    if "recommended max working set" not in excerpt:
        return
    over = _METAL_WORKING_SET.search(excerpt[-200_000:])
    said = f" ({float(over.group(1)) / 1024:.1f} GiB of buffers against {float(over.group(2)) / 1024:.1f} GiB)" if over else ""
    yield Vote("model_too_large", 0.7, f"The Metal buffers the model maps already exceed the GPU's recommended working set{said}: "
               "a smaller or more quantized model, fewer layers on the GPU (-ngl), or a machine with more unified memory.")
    yield Vote("batch_too_large", -0.2, "The buffers past the working set are the model's own, mapped before any batch runs.")


# XLA's TPU buffer report prints, per large allocation, the memory its tiled layout adds
# ("Extra memory due to padding: 31.00G (32.0x expansion)") and what the program exceeded.
_TILE_PADDING = re.compile(rf"Extra memory due to padding: ({SIZE_PATTERN}) \((\d{{1,6}}(?:\.\d{{1,3}})?)x expansion\)")
_EXCEEDED_BY = re.compile(rf"Exceeded \w+ capacity by ({SIZE_PATTERN})")


@rule
def tpu_tile_padding(data: RuleInput) -> Iterator[Vote]:
    """XLA lays TPU arrays out in tiles of their two minor dimensions ((8, 128) for 32-bit values): an
    array whose last dimension is small is padded up to 128, so a [N, 8, 4] array takes 32 times its
    size. When padding is what the program is over by, the layout is the cause, not the data."""
    excerpt = data.context.excerpt.text if data.context.excerpt else ""
    if "due to padding" not in excerpt:
        return
    found = [(parse_size(match.group(1)), float(match.group(2))) for match in _TILE_PADDING.finditer(excerpt[-200_000:])]
    if not found:
        return
    extra = sum(size for size, _ in found)
    over = _EXCEEDED_BY.search(excerpt)
    over_bytes = parse_size(over.group(1)) if over else None
    used = data.context.error.allocated_bytes if data.context.error else None
    if (over_bytes and extra >= 0.5 * over_bytes) or (not over_bytes and used and extra >= 0.25 * used):
        worst = max(expansion for _, expansion in found)
        yield Vote("other", 0.75, f"TPU tile padding: {format_size(extra)} of the program's memory is layout padding (up to {worst:g}x "
                   "an array's size): XLA pads the two minor dimensions to (8, 128) tiles, so a small last dimension grows to 128; "
                   "lay the array out with a large last dimension (reshape, or move the small axes first).")
        for workload in ("batch_too_large", "input_size_too_large", "model_too_large"):
            yield Vote(workload, -0.2, "Most of what the program is over by is padding, not data.")


@rule
def two_frameworks(data: RuleInput) -> Iterator[Vote]:
    """TensorFlow or JAX in a process beside another framework: each pre-allocates most of the card
    on first use (TensorFlow nearly all, JAX 75%), leaving the other with what is left."""
    if data.signals.preallocating_framework_beside:
        yield Vote("other_process_or_device", 0.8, "Two frameworks share the GPU in one process: TensorFlow pre-allocates nearly "
                   "all GPU memory and JAX 75% on first use, leaving the other with the rest; set XLA_PYTHON_CLIENT_PREALLOCATE=false "
                   "(or TensorFlow's memory growth) before the import, or keep that framework off the GPU.")


@rule
def a_library_beside_a_framework(data: RuleInput) -> Iterator[Vote]:
    """A GPU library with its own allocator (faiss, CuPy, XGBoost, ONNX Runtime...) asks the driver
    directly, while the framework in the same process (PyTorch's caching allocator, TensorFlow's or
    JAX's pool) keeps what it holds or freed reserved: that memory is the other framework's."""
    signals = data.signals
    if signals.library_beside_framework:
        yield Vote("other_process_or_device", 0.6, f'The allocation that failed is a library\'s own ("{signals.evidence["library_beside_framework"]}"): '
                   "the framework in the same process holds (or keeps cached) the rest of the GPU; free its cache first "
                   "(torch.cuda.empty_cache()), cap its share, or let the library allocate through the framework.")


@rule
def another_process_started(data: RuleInput) -> Iterator[Vote]:
    """A second process of a pre-allocating framework (JAX takes 75% at start, TensorFlow ~all) or a
    job started beside another on the same device fails while the first holds the memory."""
    signals = data.signals
    if signals.other_process_hint and data.framework in ("jax", "tensorflow"):
        yield Vote("other_process_or_device", 0.6, f'{data.framework} pre-allocates most of the device at start, and the note '
                   f'says "{signals.evidence["other_process_hint"]}".')


@rule
def unequal_gpus_under_data_parallel(data: RuleInput) -> Iterator[Vote]:
    """DataParallel splits every batch evenly and keeps the model and outputs on the first GPU: a
    card with much less memory in its set (PyTorch warns about the imbalance) fills first."""
    signals = data.signals
    if signals.gpu_imbalance_warning:
        yield Vote("other_process_or_device", 0.65, f'PyTorch warned that the GPUs are unequal ("{signals.evidence["gpu_imbalance_warning"]}"): '
                   "an even split overfills the smaller card; leave it out (device_ids, CUDA_VISIBLE_DEVICES).")
        yield Vote("distributed_replication", -0.3, "The replicas are no larger than on equal cards; one card is smaller.")


@rule
def processes_sharing_one_gpu(data: RuleInput) -> Iterator[Vote]:
    """Several processes of the job on one GPU: each holds its own copy and its own cache (a
    fractional GPU request only tells the scheduler where to place it), and a pre-allocating
    framework's first process takes nearly the whole card before the next one starts."""
    signals = data.signals
    if not signals.several_processes_one_gpu:
        return
    said = signals.evidence["several_processes_one_gpu"]
    weight = 0.7 if data.framework in ("tensorflow", "jax") else 0.55
    if signals.fewer_processes_fit:
        weight += 0.25  # fewer processes on the node is shown to fit: the sharing is what ran out, not a guess
    yield Vote("other_process_or_device", weight, f'Several processes share one GPU ("{said}"): each one holds its own '
               "model and cache on it (TensorFlow and JAX reserve most of the card in the first one); give each its own "
               "GPU or cap each process's memory.")


# The workload is shown to fit where the run fails, so what failed is not the card's memory running out
# by volume but the software's path through it. Each row: the signal, the framework_bug vote and its
# reading, and the volume causes it counts against. One rule reads them all.
_FITS_ELSEWHERE: tuple[tuple[str, float, str, tuple[str, ...], float, str], ...] = (
    ("smaller_card_works", 0.6, "The same input runs on a card with less memory ({said}): the larger card fails for another "
     "reason; install a framework build for that card's architecture and driver, and read the error under the tool's message.",
     ("batch_too_large", "input_size_too_large", "model_too_large"), -0.4, "A smaller card holds the same workload."),
    ("other_backend_works", 0.55, "The same setup runs with another backend ({said}): the card holds the workload; the failing "
     "backend's allocator or kernels are short. Use the backend that works, update, or report it.",
     ("batch_too_large", "input_size_too_large", "model_too_large"), -0.3, "Another backend fits the same workload on the same card."),
    ("single_allocation_cap", 0.6, "An Intel GPU refusing one large buffer ({said}): its runtime caps a single allocation at 4 GB "
     "unless relaxed (UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1 under SYCL, a PyTorch XPU build that lifts it), however much of "
     "the card is free.", ("model_too_large",), -0.3, "The card's total is not what refuses one buffer over 4 GB."),
    ("placement_not_honoured", 0.55, "The library does not apply the placement it was given, or its automatic one fails ({said}): "
     "its memory planning, not the workload, is short; set the split by hand, update it, or report it.",
     ("batch_too_large",), -0.3, "What fails is where the library puts the memory, not how much one batch needs."),
    ("smaller_fails_larger_works", 0.6, "A smaller size fails where a larger one works ({said}): not memory running out by volume "
     "but one shape hitting a broken kernel or allocator path; report it with that shape, and pad to a size that works meanwhile.",
     ("batch_too_large", "input_size_too_large"), -0.5, "A larger size of the same input fits, so the size itself is not what runs out."),
)


@rule
def workload_fits_elsewhere(data: RuleInput) -> Iterator[Vote]:
    """A smaller card, another backend, a larger size or a manual split holds the workload, or one
    buffer is refused by a per-allocation cap: the failing path, not the memory's volume, is short."""
    signals = data.signals
    for name, weight, reading, against, penalty, why in _FITS_ELSEWHERE:
        if getattr(signals, name):
            yield Vote("framework_bug", weight, reading.format(said=f'"{signals.evidence[name]}"'))
            for cause in against:
                yield Vote(cause, penalty, why)


@rule
def a_saving_option_the_code_drops(data: RuleInput) -> Iterator[Vote]:
    """A memory-saving option that was asked for but that the code never applies (a config key read only
    on another branch, a flag not passed through): the run uses the memory the option was meant to save,
    which is a bug of the library or script, not of the workload."""
    signals = data.signals
    if not signals.saving_option_dropped:
        return
    yield Vote("framework_bug", 0.65, f'A memory-saving option was asked for and the code never applies it '
               f'("{signals.evidence["saving_option_dropped"]}"): pass it through, or apply it directly (for example '
               "model.gradient_checkpointing_enable()), and report it to the library.")
    yield Vote("batch_too_large", -0.3, "The memory the run needs was set to be lower by an option the code dropped.")
    if re.search(r"offload|memory|max_memory|device_map|gpu|vram|[48][- ]?bit|quantiz", signals.evidence["saving_option_dropped"], re.IGNORECASE):
        # the option was to keep part of the weights off the card (offload, a per-GPU memory cap,
        # quantization): weights too large for the card are what it was given to handle
        yield Vote("model_too_large", -0.3, "The option the code drops is what was to keep the weights within the card.")


@rule
def version_regression(data: RuleInput) -> Iterator[Vote]:
    signals = data.signals
    if signals.upgraded_to_torch_04:
        yield Vote("missing_no_grad", 0.85, "PyTorch 0.4 removed `volatile=True`: inference code written for 0.3 now "
                   "builds autograd graphs unless it runs under torch.no_grad().")
        yield Vote("framework_bug", 0.3, "The failure appeared with a version change.")
    elif signals.upgrade_regression:
        said = signals.evidence["upgrade_regression"]
        n = data.numbers
        # "it worked until two days ago" names no version: with the card full and PyTorch holding almost
        # none of it, what changed is more likely another process than a release
        no_version = not re.search(r"\d+\.\d+|\bv\d|version|upgrad|updat|release|install|nightly|commit|build", said, re.IGNORECASE)
        held_outside = bool(n.non_pytorch is not None and n.total and n.non_pytorch - CONTEXT_OVERHEAD > 0.5 * n.total)
        if no_version and held_outside:
            yield Vote("framework_bug", 0.35, f'The same workload worked until recently ("{said}"): if a framework or library was '
                       "updated since, pin the version that worked; the figures point at memory held outside PyTorch first.")
        else:
            yield Vote("framework_bug", 0.8, f'The same workload worked before a version change ("{said}"): '
                       "a regression in the framework or a library, fixed by pinning the version that worked or by its patch.")


@rule
def preallocation_refused(data: RuleInput) -> Iterator[Vote]:
    """TensorFlow reserves (nearly) the whole device when it creates it, retrying smaller sizes
    when the driver refuses: a refusal there means the memory was already taken."""
    error, total = data.context.error, data.signals.logged_device_total
    if not total and data.signals.note_gpu_capacity:
        # A card the note calls "8GB" has 8 GiB: memory is sold in binary units under decimal names.
        total = int(data.signals.note_gpu_capacity / 10**9 * 2**30)
    if error and error.format == "tensorflow_driver":
        if total and error.requested_bytes and error.requested_bytes >= 0.999 * total:
            # Asking for all of the device (or more) can never succeed: the driver's own context
            # always takes some. The pool size was computed from the total, not the free memory.
            yield Vote("framework_bug", 0.65, f"TensorFlow asked for the whole device at start ({format_size(error.requested_bytes)} "
                       f"of {format_size(total)}), which the driver never grants: set allow_growth or a memory fraction, or update "
                       "the build whose reservation is computed from the total instead of the free memory.")
            yield Vote("other_process_or_device", -0.4, "The request is refused for its size, whatever else holds the device.")
            # The pool's size comes from the device's memory, not from any tensor: no batch or input size changes it.
            for workload in ("input_size_too_large", "batch_too_large"):
                yield Vote(workload, -0.35, "The request is TensorFlow's memory pool, not one tensor of the program's.")
            return
        yield Vote("other_process_or_device", 0.65, "TensorFlow's start-up reservation was refused by the driver "
                   f"({error.raw_message[:90]}): another process already holds the device's memory.")


@rule
def algorithm_search(data: RuleInput) -> Iterator[Vote]:
    """cuDNN autotuning (TF/XLA's algorithm search, MXNet's autotune, torch's cudnn.benchmark) tries
    algorithms whose workspaces need free memory on top of the model's."""
    error = data.context.error
    excerpt = data.context.excerpt.text if data.context.excerpt else ""
    text = f"{error.raw_message if error else ''} {excerpt[-2000:]} {data.context.note or ''}"
    # (torch.compile's "max-autotune" mode tunes Triton kernels and records CUDA graphs, no cuDNN search)
    if re.search(r"(?<!max-)autotun\w*|algorithm (?:search|selection)|convolution algorithm|cudnn[._ ]benchmark|%cudnn|"
                 r"All algorithms tried|No algorithm worked|(?:cudnn|cublas|conv\w*) workspace|workspace (?:size|limit)", text, re.IGNORECASE):
        yield Vote("cudnn_or_workspace", 0.7, "The failure came from cuDNN's algorithm search: each candidate "
                   "algorithm needs a workspace in whatever memory the framework left free.")


@rule
def cpu_mode_but_gpu_oom(data: RuleInput) -> Iterator[Vote]:
    error = data.context.error
    if not data.signals.cpu_mode or (error and error.backend not in ("cuda", "hip", "unknown")):
        return
    if data.signals.host_only:
        return  # no GPU message, and the note says host memory fills: a CPU run running out of RAM
    if data.signals.phase == "loading":
        yield Vote("checkpoint_loading", 0.75, "The run was meant to use the CPU, yet the GPU ran out while loading: "
                   "torch.load restores tensors to the GPU they were saved from unless map_location is given.")
        yield Vote("other_process_or_device", 0.45, "Tensors landed on a GPU the run was not meant to use.")
    else:
        yield Vote("other_process_or_device", 0.7, "The run was meant to use the CPU, yet a GPU allocation failed: "
                   "some tensors or modules are placed on the wrong device.")


@rule
def dataframe_on_the_device(data: RuleInput) -> Iterator[Vote]:
    """A GPU dataframe (cuDF, dask-cudf, cuML through RMM) holds its whole table on the card, and a
    join, sort or groupby materialises several times the columns it touches: the data is the input,
    and there is no batch to shrink, only partitions."""
    error = data.context.error
    if error is None or error.library != "rmm":
        return
    yield Vote("input_size_too_large", 0.55, "RAPIDS' memory manager was refused: a GPU dataframe keeps the whole table on the "
               "card and joins, sorts and groupbys need several times the columns they touch; split it into partitions "
               "(dask-cudf), spill to host (managed memory / cuDF spilling) or select fewer columns first.")
    yield Vote("batch_too_large", -0.3, "A dataframe operation has no training batch: its size is the data's.")
