"""Rules keyed on when the run failed: evaluation, loading, generation, optimizer set-up, and
memory that grew over iterations."""

from __future__ import annotations

import re
from typing import Iterator

from oomtriage.sizes import format_size

from . import RuleInput, Vote, rule


@rule
def evaluation(data: RuleInput) -> Iterator[Vote]:
    signals = data.signals
    if signals.phase != "evaluation":
        return
    where = signals.phase_source
    if data.framework == "tensorflow":
        yield Vote("reference_leak", 0.55, f"It failed during evaluation ({where}); in TensorFlow/Keras evaluation "
                   "OOMs usually come from predictions or graphs accumulated across batches.")
        yield Vote("batch_too_large", 0.4, "Evaluation batch sizes are often set larger than training ones.")
        return
    if signals.hf_trainer_eval:
        yield Vote("reference_leak", 0.8, "HF Trainer's evaluation loop already runs without gradients but keeps every "
                   "batch's logits on the GPU until the end unless eval_accumulation_steps is set.")
        yield Vote("large_logits", 0.35, "The accumulated logits grow with vocabulary / item count x eval set size.")
        return
    n = data.numbers
    big_request = bool(n.requested and n.capacity and n.requested > 0.1 * n.capacity)
    if big_request:
        yield Vote("input_size_too_large", 0.5, f"One evaluation tensor of {n.requested / n.capacity:.0%} of the device: "
                   "evaluation inputs are often full-size where training used crops or shorter sequences.")
    if signals.long_input:
        yield Vote("input_size_too_large", 0.6, f'The inputs are large ("{signals.evidence["long_input"]}").')
    elif "detection" in signals.domains and not big_request and not signals.growth:
        # Dense prediction trains on crops and evaluates on whole images (Cityscapes: 512x1024 crops,
        # 1024x2048 at test time), so evaluation is where the largest activations appear.
        yield Vote("input_size_too_large", 0.45, "Segmentation and detection models train on crops but evaluate whole, "
                   "full-resolution images: evaluation activations are several times the training ones.")
    if signals.no_grad_already:
        yield Vote("missing_no_grad", -0.7, f'It already runs without gradients ("{signals.evidence["no_grad_already"]}").')
    elif signals.managed_eval:
        yield Vote("missing_no_grad", -0.45, f'The evaluation loop is the framework\'s ("{signals.evidence["managed_eval"]}"), '
                   "which already runs it without gradients.")
    yield Vote("missing_no_grad", 0.45 if big_request or signals.long_input else 0.6, f"It failed during evaluation ({where}): without "
               "torch.no_grad() every eval batch keeps its activations for a backward pass that never comes.")
    if signals.growth:
        # Without no_grad each batch's graph is freed when its outputs are rebound; memory that grows
        # batch after batch is outputs kept across batches, with their graphs (no no_grad) or without.
        said = signals.evidence["growth"]
        yield Vote("missing_no_grad", 0.45, f'Memory grew batch after batch in evaluation ("{said}").')
        yield Vote("graph_retained", 0.45, "Outputs kept across evaluation batches (for display, metrics, a list) "
                   "without .detach() keep each batch's whole autograd graph alive.")
        yield Vote("reference_leak", 0.3, "Outputs kept on the GPU across batches grow memory even when detached.")
    yield Vote("reference_leak", 0.35, "Evaluation loops often collect outputs in lists without .detach().cpu().")
    yield Vote("batch_too_large", 0.3, "Evaluation batch sizes are often set larger than training ones.")


@rule
def periodic_step(data: RuleInput) -> Iterator[Vote]:
    """A failure right after a round step number (1000, 5000) whatever the data: the periodic
    evaluation, sampling or logging step runs there, usually without no_grad."""
    signals = data.signals
    if signals.periodic_step and signals.phase in ("training", "unknown"):
        yield Vote("missing_no_grad", 0.55, f'It fails at a round step ("{signals.evidence["periodic_step"]}"), where '
                   "periodic evaluation, sampling or visualisation runs: without no_grad it keeps a graph for every image.")
        yield Vote("reference_leak", 0.3, "Periodic logging that keeps tensors (images, losses) grows memory at that step too.")


# A CUDA source file of the program or a library (not a framework's allocator) calling cudaMalloc.
# Each path is tried from its first character only (a lookbehind), or "0.0.0..." backtracks quadratically.
_LIBRARY_CUDA_MALLOC = re.compile(r"(?<![\w./-])[\w./-]+\.cu:\d+(?=[\s\S]{0,200}cudaMalloc)|cudaMalloc\w*\(&?[\w.>-]+,", re.IGNORECASE)


@rule
def memory_growth(data: RuleInput) -> Iterator[Vote]:
    signals = data.signals
    error = data.context.error
    if not signals.growth or signals.phase in ("evaluation", "data_loading", "loading"):
        return
    if (error and error.backend in ("host", "cpu")) or signals.host_ram:
        return  # host RAM that grows is the data pipeline's (rules host_memory*), not the GPU's
    said = signals.evidence["growth"]
    library = _LIBRARY_CUDA_MALLOC.search(error.raw_message) if error else None
    if library:
        # Not PyTorch's caching allocator: the library's own CUDA code asked the driver directly. A
        # framework's tensors would be freed and reused; device buffers that keep growing there are
        # the library's (allocated again each epoch and never freed).
        yield Vote("framework_bug", 0.65, f'Memory grew ("{said}") and the failing allocation is the library\'s own '
                   f"`{library.group(0).strip()}`, outside any framework's allocator: the library leaks device buffers.")
    if signals.frees_every_step:
        yield Vote("framework_bug", 0.6, f'Memory grew ("{said}") although the script frees its tensors every iteration '
                   f'("{signals.evidence["frees_every_step"]}"): what grows is held below the script (a leak in the framework, '
                   "an extension or a library); try another version.")
        yield Vote("graph_retained", -0.2, "The script's own references are dropped each iteration.")
        yield Vote("reference_leak", -0.2, "The script's own references are dropped each iteration.")
    if signals.phase == "generation":
        yield Vote("kv_cache_or_generation", 0.6, f'Memory grew while generating ("{said}"): the KV cache grows with every '
                   "generated token, times the number of sequences sampled at once.")
        return
    if data.framework == "jax":
        yield Vote("fragmentation", 0.4, f'JAX memory ran out partway ("{said}"): XLA\'s pre-allocated BFC pool '
                   "fragments as differently shaped arrays come and go.")
        yield Vote("reference_leak", 0.4, "Arrays kept in Python containers across the loop stay on the device.")
        return
    if signals.domains & {"detection", "variable_length"}:
        yield Vote("input_size_too_large", 0.6, f'It failed partway ("{said}") on a workload with variable-size inputs: '
                   "memory peaks when the largest images / longest sequences / most objects arrive.")
        yield Vote("graph_retained", 0.35, "A loss accumulated without .item() also grows memory every step.")
        yield Vote("fragmentation", 0.35, "Inputs of changing shape leave cached blocks sized for earlier batches that "
                   "the next, larger one cannot reuse: reserved memory climbs while live memory does not.")
        yield Vote("batch_too_large", 0.3, "The batch leaves no headroom for the largest inputs.")
    elif signals.phase == "training" or signals.full_finetune:
        yield Vote("graph_retained", 0.55, f'Memory grew during training ("{said}"): the classic cause is a loss or '
                   "metric accumulated as a tensor (`total_loss += loss`), keeping every step's graph.")
        yield Vote("reference_leak", 0.45, "Tensors appended to lists or caches each step grow memory the same way.")
        yield Vote("input_size_too_large", 0.2, "A rare large input can also arrive late in an epoch.")
    else:
        # No backward pass is named: growth without training is state that accumulates (metrics, caches, lists).
        yield Vote("reference_leak", 0.55, f'Memory grew batch after batch ("{said}") without a training step: '
                   "state kept across batches (a metric's accumulated inputs, a cache, a list of outputs).")
        yield Vote("graph_retained", 0.35, "Results kept with their autograd history grow memory the same way.")


@rule
def loading(data: RuleInput) -> Iterator[Vote]:
    signals, n = data.signals, data.numbers
    if signals.phase != "loading":
        return
    note = (data.context.note or "").lower()
    # torch.load (here or in the frames) restores every tensor to the device it was saved from.
    resuming = any(word in note for word in ("resum", "restor", "checkpoint", "ckpt", "optimizer state", "restart",
                                             "state dict", "state_dict", "second copy", "duplicate", "copies", "saved", "reload",
                                             "torch.load"))
    frames = " ".join((frame.code or "") + (frame.function or "") for frame in (data.context.stack.frames if data.context.stack else []))
    resuming = resuming or bool(re.search(r"torch\.load|optim\w*\.load_state_dict|load_\w*(?:opt|optim)\w*|restore|resume", frames))
    if resuming:
        yield Vote("checkpoint_loading", 0.75, f"It failed while restoring saved tensors ({signals.phase_source}): "
                   "torch.load puts every saved tensor back on the GPU it came from, next to the live model.")
        if signals.distributed:
            yield Vote("distributed_replication", 0.6, "In a multi-GPU job every rank that loads without map_location "
                       "(or without set_device) materialises its copy on cuda:0.")
        if signals.only_multi_gpu:
            yield Vote("distributed_replication", 0.7, f'Single-GPU runs are fine ("{signals.evidence["only_multi_gpu"]}"): the extra memory comes from the other ranks.')
    else:
        weights = _weights_bytes(signals)
        if weights and n.capacity and weights < 0.5 * n.capacity:
            # The model fits twice over: what ran out is the loading, not the model.
            yield Vote("checkpoint_loading", 0.7, f"The weights take about {format_size(int(weights))}, under half of the "
                       f"{format_size(n.capacity)} device, yet loading failed: the loader materialised extra copies "
                       "(a state dict on the GPU beside the model, no map_location / low_cpu_mem_usage).")
            yield Vote("model_too_large", -0.4, f"{format_size(int(weights))} of weights fit this device.")
        else:
            yield Vote("model_too_large", 0.65, f"It failed while the model's weights were loaded ({signals.phase_source}).")
            yield Vote("checkpoint_loading", 0.4, "Loaders can hold a second copy of the weights while loading "
                       "(no low_cpu_mem_usage / device_map).")
        if n.allocated and n.capacity and n.allocated > 0.85 * n.capacity:
            yield Vote("model_too_large", 0.4, f"The weights already filled {n.allocated / n.capacity:.0%} of the GPU.")
    if re.search(r"map_location|low_cpu_mem_usage", note):
        yield Vote("checkpoint_loading", 0.6, "The note names the loader's placement options (map_location / "
                   "low_cpu_mem_usage): where the loaded tensors land is the question.")
    if signals.distributed and not resuming and re.search(r"torch\.load|load_state_dict|from_pretrained", f"{frames} {note}", re.IGNORECASE):
        yield Vote("distributed_replication", 0.4, "In a multi-GPU job every rank loads its own full copy, on cuda:0 "
                   "unless each rank sets its device or loads to the CPU.")


def _weights_bytes(signals) -> float | None:
    """The weights' size from the note's parameter count, in the precision it names (fp32 if none:
    what PyTorch builds modules in)."""
    if not signals.param_count:
        return None
    per_weight = signals.weight_bytes or (2.0 if signals.low_precision else 4.0)
    return signals.param_count * per_weight


@rule
def data_loading(data: RuleInput) -> Iterator[Vote]:
    signals, error = data.signals, data.context.error
    if signals.phase != "data_loading" or (error and error.backend == "host"):
        return  # host kills have their own rule
    on_device = error is not None and error.backend in ("cuda", "hip", "xpu", "mps", "tpu")
    yield Vote("dataloader_or_host", 0.35 if on_device else 0.7, f"It failed in the data pipeline ({signals.phase_source}): "
               "worker processes, pinned (page-locked) buffers and prefetched batches live in host RAM.")
    if on_device:
        yield Vote("input_size_too_large", 0.3, "A batch moved to the device while loading is as large as its inputs.")


LARGE_FOR_ONE_DEVICE = 16 * 1024**3  # a V100-16GB, a TPU v3 core: the common single-device sizes


@rule
def model_construction(data: RuleInput) -> Iterator[Vote]:
    """Failing while the model is still being built, before any data: the program itself holds
    almost nothing yet, so the memory is someone else's (or on a device it did not mean to use)."""
    signals, n = data.signals, data.numbers
    if not signals.construction:
        return
    if signals.param_count and n.capacity and 4 * signals.param_count > 0.5 * n.capacity:
        return  # a model that big can fill the device on its own (rule inference_weights)
    if signals.param_count and not n.capacity and 4 * signals.param_count > LARGE_FOR_ONE_DEVICE:
        # The device's size is not in the log, but weights this large exceed most single devices
        # (or TPU cores) on their own: building the model is what fills it.
        yield Vote("model_too_large", 0.55, f"Building a {signals.param_count / 1e9:.1f}B-parameter model: its weights take "
                   f"{format_size(int(4 * signals.param_count))} in fp32, more than most single devices hold.")
        return
    yield Vote("other_process_or_device", 0.6, f'It failed while the model was built ("{signals.evidence["construction"]}"), '
               "before any batch: the program held almost nothing, so the memory was taken by another process or device.")


@rule
def diffusion_training(data: RuleInput) -> Iterator[Vote]:
    """Training a diffusion U-Net: self-attention over the latent's pixels is the largest activation
    (memory-efficient attention is the first lever), and a full fine-tune of a ~1B-parameter U-Net
    needs ~16 B per parameter in states, more than a small card holds."""
    signals, capacity = data.signals, data.numbers.capacity
    if "diffusion" not in signals.domains or signals.phase != "training":
        return
    yield Vote("attention_quadratic", 0.45, "Diffusion training runs self-attention over every latent pixel; without "
               "memory-efficient attention (SDPA, xformers) its score matrices dominate the activations.")
    if capacity and capacity < 12 * 10**9 and not signals.lora:
        yield Vote("model_too_large", 0.4 + (0.25 if signals.immediate else 0.0),
                   f"A full fine-tune of a diffusion U-Net needs ~14 GB of weights, gradients and Adam states: more than "
                   f"this {capacity / 10**9:.0f} GB card{' (it failed at once)' if signals.immediate else ''}.")


@rule
def generation(data: RuleInput) -> Iterator[Vote]:
    signals = data.signals
    if "diffusion" in signals.domains and signals.phase in ("generation", "evaluation", "unknown"):
        yield Vote("attention_quadratic", 0.55, "Diffusion U-Nets and upscalers run self-attention over every pixel of "
                   "the latent: the attention matrix grows with resolution to the fourth power.")
        return
    if signals.phase != "generation" or signals.serving_engine:
        return
    if "diffusion" in signals.domains:
        yield Vote("attention_quadratic", 0.6, "Diffusion U-Nets and upscalers run self-attention over every pixel of "
                   "the latent: the attention matrix grows with resolution to the fourth power.")
        return
    if signals.many_sequences:
        yield Vote("kv_cache_or_generation", 0.6, f'Many sequences are generated at once ("{signals.evidence["many_sequences"]}"): '
                   "the KV cache is kept for every one of them.")
    if "llm" in signals.domains or "generat" in (signals.phase_source or "") or "sampl" in (signals.phase_source or ""):
        yield Vote("kv_cache_or_generation", 0.5, f"It failed while generating ({signals.phase_source}): the KV cache "
                   "grows with batch x (prompt + generated) tokens x layers.")
    else:
        yield Vote("kv_cache_or_generation", 0.25, f"It failed during inference ({signals.phase_source}).")
        yield Vote("batch_too_large", 0.25, "Inference batches are often sized without headroom.")


@rule
def optimizer_setup(data: RuleInput) -> Iterator[Vote]:
    if data.signals.phase == "optimizer_setup":
        yield Vote("optimizer_state", 0.75, f"It failed while the optimizer was being set up ({data.signals.phase_source}), "
                   "before any activation existed: optimizer states (and fp32 master weights) do not fit.")


@rule
def gradients_left_on(data: RuleInput) -> Iterator[Vote]:
    signals = data.signals
    if signals.grad_left_on and signals.phase in ("evaluation", "generation", "unknown") and not signals.no_grad_already:
        yield Vote("missing_no_grad", 0.7, f'The note says gradients stay on where nothing is trained ("{signals.evidence["grad_left_on"]}"): '
                   "every forward keeps its activations for a backward that never comes (torch.no_grad() / inference_mode()).")


@rule
def kept_across_steps(data: RuleInput) -> Iterator[Vote]:
    """What the note says the code keeps from one step to the next: a loss summed as a tensor (or
    retain_graph) keeps every step's whole graph; outputs collected in a container keep their
    memory, and their graphs too when gradients are on."""
    signals = data.signals
    if signals.loss_kept:
        yield Vote("graph_retained", 0.7, f'The note describes a loss kept across steps ("{signals.evidence["loss_kept"]}"): '
                   "a loss tensor summed or stored without .item() (or retain_graph=True) keeps each step's graph and activations.")
    if signals.outputs_kept:
        yield Vote("reference_leak", 0.65, f'The note describes outputs kept across steps ("{signals.evidence["outputs_kept"]}"): '
                   "tensors held in a container stay on the GPU; move them off with .detach().cpu() or keep only what you need.")
        if signals.phase in ("training", "unknown") and not signals.no_grad_already:
            yield Vote("graph_retained", 0.3, "Kept outputs that still require grad hold their graphs as well.")


@rule
def optimizer_step_named(data: RuleInput) -> Iterator[Vote]:
    """The first optimizer step allocates the optimizer's state (Adam: two fp32 tensors per
    parameter, 8 bytes each parameter) on top of weights, gradients and whatever activations are
    still alive: a run whose forward and backward fit fails exactly there."""
    signals = data.signals
    if signals.optimizer_step:
        yield Vote("optimizer_state", 0.65, f'The note places the failure at the optimizer ("{signals.evidence["optimizer_step"]}"): '
                   "its first step creates per-parameter state (Adam/AdamW: 8 bytes per parameter; SGD with momentum: 4).")


@rule
def immediate_failure(data: RuleInput) -> Iterator[Vote]:
    signals = data.signals
    if signals.immediate and signals.phase == "training" and data.framework in ("pytorch", "tensorflow", "unknown"):
        yield Vote("batch_too_large", 0.3, f'It failed at once ("{signals.evidence["immediate"]}"): the first step '
                   "already needs more than the device has, which points at the configuration, not a leak.")
