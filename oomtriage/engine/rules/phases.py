"""Rules keyed on when the run failed: evaluation, loading, generation, optimizer set-up, and
memory that grew over iterations."""

from __future__ import annotations

from typing import Iterator

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
    yield Vote("missing_no_grad", 0.6, f"It failed during evaluation ({where}): without torch.no_grad() every eval "
               "batch keeps its activations for a backward pass that never comes.")
    if signals.growth:
        yield Vote("missing_no_grad", 0.45, f'Memory grew batch after batch in evaluation ("{signals.evidence["growth"]}").')
    yield Vote("reference_leak", 0.35, "Evaluation loops often collect outputs in lists without .detach().cpu().")
    yield Vote("batch_too_large", 0.3, "Evaluation batch sizes are often set larger than training ones.")


@rule
def memory_growth(data: RuleInput) -> Iterator[Vote]:
    signals = data.signals
    if not signals.growth or signals.phase in ("evaluation", "data_loading", "loading"):
        return
    said = signals.evidence["growth"]
    if data.framework == "jax":
        yield Vote("fragmentation", 0.6, f'JAX memory ran out partway ("{said}"): XLA\'s pre-allocated BFC pool '
                   "fragments as differently shaped arrays come and go.")
        yield Vote("reference_leak", 0.4, "Arrays kept in Python containers across the loop stay on the device.")
        return
    if signals.domains & {"detection", "variable_length"}:
        yield Vote("input_size_too_large", 0.6, f'It failed partway ("{said}") on a workload with variable-size inputs: '
                   "memory peaks when the largest images / longest sequences / most objects arrive.")
        yield Vote("graph_retained", 0.35, "A loss accumulated without .item() also grows memory every step.")
        yield Vote("batch_too_large", 0.3, "The batch leaves no headroom for the largest inputs.")
    else:
        yield Vote("graph_retained", 0.55, f'Memory grew during training ("{said}"): the classic cause is a loss or '
                   "metric accumulated as a tensor (`total_loss += loss`), keeping every step's graph.")
        yield Vote("reference_leak", 0.45, "Tensors appended to lists or caches each step grow memory the same way.")
        yield Vote("input_size_too_large", 0.2, "A rare large input can also arrive late in an epoch.")


@rule
def loading(data: RuleInput) -> Iterator[Vote]:
    signals, n = data.signals, data.numbers
    if signals.phase != "loading":
        return
    note = (data.context.note or "").lower()
    resuming = any(word in note for word in ("resum", "restor", "checkpoint", "ckpt", "optimizer state", "restart"))
    frames = " ".join((frame.code or "") + (frame.function or "") for frame in (data.context.stack.frames if data.context.stack else []))
    resuming = resuming or any(word in frames for word in ("torch.load", "load_opt_state", "restore", "resume"))
    if resuming:
        yield Vote("checkpoint_loading", 0.75, f"It failed while restoring a checkpoint ({signals.phase_source}): "
                   "torch.load puts every saved tensor back on the GPU it came from, next to the live model.")
        if signals.distributed:
            yield Vote("distributed_replication", 0.6, "In a multi-GPU job every rank that loads without map_location "
                       "(or without set_device) materialises its copy on cuda:0.")
        if signals.only_multi_gpu:
            yield Vote("distributed_replication", 0.7, f'Single-GPU runs are fine ("{signals.evidence["only_multi_gpu"]}"): the extra memory comes from the other ranks.')
    else:
        yield Vote("model_too_large", 0.65, f"It failed while the model's weights were loaded ({signals.phase_source}).")
        yield Vote("checkpoint_loading", 0.4, "Loaders can hold a second copy of the weights while loading "
                   "(no low_cpu_mem_usage / device_map).")
        if n.allocated and n.capacity and n.allocated > 0.85 * n.capacity:
            yield Vote("model_too_large", 0.4, f"The weights already filled {n.allocated / n.capacity:.0%} of the GPU.")


@rule
def generation(data: RuleInput) -> Iterator[Vote]:
    signals = data.signals
    if signals.phase != "generation" or signals.serving_engine:
        return
    if "diffusion" in signals.domains:
        yield Vote("attention_quadratic", 0.6, "Diffusion U-Nets and upscalers run self-attention over every pixel of "
                   "the latent: the attention matrix grows with resolution to the fourth power.")
        return
    if "llm" in signals.domains or "generat" in (signals.phase_source or "") or "beam" in (data.context.note or ""):
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
def immediate_failure(data: RuleInput) -> Iterator[Vote]:
    signals = data.signals
    if signals.immediate and signals.phase == "training" and data.framework in ("pytorch", "tensorflow", "unknown"):
        yield Vote("batch_too_large", 0.3, f'It failed at once ("{signals.evidence["immediate"]}"): the first step '
                   "already needs more than the device has, which points at the configuration, not a leak.")
