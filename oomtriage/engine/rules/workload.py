"""Rules on the workload's size: model states against the device, precision, vocabulary, batch."""

from __future__ import annotations

from math import prod
from typing import Iterator

from oomtriage.sizes import format_size

from . import RuleInput, Vote, rule


@rule
def model_states(data: RuleInput) -> Iterator[Vote]:
    """Weights, gradients and Adam states (16 B/param in mixed precision) against the GPU, per sharding."""
    signals, capacity = data.signals, data.numbers.capacity
    params = signals.param_count
    if not params or not capacity or signals.phase in ("generation", "loading"):
        return
    training = signals.full_finetune or signals.phase in ("training", "optimizer_setup")
    if not training or signals.lora or signals.frozen:
        return  # adapters or a frozen backbone: most weights need no gradients or moments, and the count says not how many
    gpus = max(1, signals.gpu_count or 1)
    if signals.offload:
        # The optimizer's moments and fp32 master weights live in host memory: the GPU keeps bf16
        # weights and gradients (4 B/param, sharded under ZeRO-3/FSDP), so states rarely explain it.
        on_gpu = 4 * params / (gpus if signals.zero_stage == 3 or signals.fsdp else 1)
        if on_gpu > 0.8 * capacity:
            yield Vote("model_too_large", 0.6, f"Even with the optimizer offloaded, bf16 weights and gradients take "
                       f"{format_size(int(on_gpu))} per GPU of {format_size(capacity)}.")
        return
    # Adam keeps two fp32 moments (8 B/param, plus a 4 B master copy in mixed precision); 8-bit and
    # factored optimizers keep about 2 B/param.
    full = 10 * params if signals.small_state_optimizer else 16 * params
    stage = signals.zero_stage
    if stage == 3 or signals.fsdp:
        per_gpu = full / gpus
        if per_gpu > 0.5 * capacity:
            yield Vote("optimizer_state", 0.7, f"Fully sharded model states still need {format_size(int(per_gpu))} per GPU "
                       f"({params / 1e9:.0f}B params x 16 B / {gpus} GPUs) of {format_size(capacity)}: offload the optimizer.")
            yield Vote("model_too_large", 0.45, "The model is too large for this many GPUs without offload.")
        return
    if gpus == 1 and signals.distributed and not stage and full / 8 < 0.8 * capacity:
        # Several GPUs, how many unsaid, nothing sharded: every GPU keeps all the model states.
        # (Only when sharding over a node's 8 GPUs would fit; beyond that the model is the story.)
        if full > 0.8 * capacity:
            yield Vote("distributed_replication", 0.6, f"Each GPU of a data-parallel run keeps all {format_size(int(full))} of "
                       "model states (weights, gradients, Adam's moments); ZeRO-3/FSDP would split them across the GPUs.")
            yield Vote("optimizer_state", 0.45, f"Optimizer states are 12 of the 16 bytes per parameter ({format_size(int(12 * params))} in all).")
        return
    if gpus > 1:
        replicated = {1: 4 * params + 12 * params / gpus, 2: 2 * params + 14 * params / gpus}.get(stage or 0, full)
        sharded = full / gpus
        if replicated > 0.8 * capacity and sharded < 0.8 * replicated:
            what = f"ZeRO-{stage}" if stage else "data parallelism without sharding"
            yield Vote("distributed_replication", 0.7, f"With {what} each GPU keeps {format_size(int(replicated))} of model "
                       f"states; full sharding (ZeRO-3/FSDP) would need {format_size(int(sharded))}.")
            yield Vote("optimizer_state", 0.5, f"Optimizer states are 12 of the 16 bytes per parameter ({format_size(int(12 * params))} in all).")
        return
    if full > capacity:
        # The taxonomy's line between the two: the weights and their gradients alone (fp32: 8 B per
        # parameter, bf16 throughout: 4) not fitting is a model too large; fitting, and the
        # optimizer's moments pushing it over, is the optimizer state.
        weights_and_grads = (4 if signals.low_precision else 8) * params
        if 2 * params > 0.8 * capacity:
            yield Vote("model_too_large", 0.8, f"Even bf16 weights ({format_size(int(2 * params))}) nearly fill the GPU.")
        elif weights_and_grads > capacity:
            yield Vote("model_too_large", 0.75, f"The weights and their gradients alone need {format_size(int(weights_and_grads))} "
                       f"of {format_size(capacity)}, before any optimizer state or activation: shard, offload or train fewer parameters.")
            yield Vote("optimizer_state", 0.45, f"The optimizer's moments would add {format_size(int(8 * params))} more.")
        else:
            yield Vote("optimizer_state", 0.45 if signals.small_state_optimizer else 0.6,
                       f"Training states need {format_size(int(full))}; the weights alone fit.")
            yield Vote("model_too_large", 0.45, "Full training of this model does not fit one GPU.")


@rule
def inference_weights(data: RuleInput) -> Iterator[Vote]:
    """fp32 weights that would fit in half precision, or weights that fill the device either way."""
    signals, capacity = data.signals, data.numbers.capacity
    params = signals.param_count
    if not params or not capacity or signals.full_finetune or signals.phase in ("training", "optimizer_setup"):
        return
    if (signals.gpu_count or 1) > 1 and signals.splits_weights:
        # llama.cpp, device_map="auto" and tensor parallelism spread the weights over every GPU.
        capacity *= signals.gpu_count
    if signals.weight_bytes is not None and signals.weight_bytes < 2:
        stored = signals.weight_bytes * params
        if stored > 0.8 * capacity:
            yield Vote("model_too_large", 0.75, f"Even quantized ({signals.weight_bytes:g} B/weight) the weights take "
                       f"{format_size(int(stored))} of {format_size(capacity)}.")
        return
    fp32, half = 4 * params, 2 * params
    if signals.serving_engine and not half > 0.8 * capacity:
        return  # serving engines load half-precision weights by default: their KV cache is the variable part
    if half > 0.8 * capacity:
        yield Vote("model_too_large", 0.8, f"Even in fp16 the weights take {format_size(int(half))} of {format_size(capacity)}.")
    elif fp32 > 0.9 * capacity and not signals.low_precision:
        yield Vote("full_precision", 0.75, f"In fp32 the weights take {format_size(int(fp32))} (more than the GPU's "
                   f"{format_size(capacity)}) but only {format_size(int(half))} in fp16/bf16, and no dtype was given: "
                   "many loaders default to fp32.")
        yield Vote("model_too_large", 0.35, "The model is large for this GPU.")
    elif fp32 > 0.4 * capacity:
        yield Vote("model_too_large", 0.5, f"The weights take {format_size(int(fp32))} in fp32, "
                   f"{fp32 / capacity:.0%} of the GPU, leaving little for activations.")
        if not signals.low_precision:
            yield Vote("full_precision", 0.3, "Loading in fp16/bf16 would halve them.")
    allocated = data.numbers.allocated
    if allocated and fp32 * 0.9 <= allocated and half * 1.3 < allocated and not signals.low_precision and fp32 > 0.5 * capacity:
        yield Vote("full_precision", 0.3, f"{format_size(allocated)} allocated matches fp32 weights, not fp16.")


@rule
def precision(data: RuleInput) -> Iterator[Vote]:
    """32-bit floats take 4 bytes per weight, activation and gradient where bf16/fp16 take 2. PyTorch
    builds modules in fp32 and many pipelines keep that dtype unless told otherwise, so inference of
    a large generative model whose weights fill the card is, by default, inference in fp32."""
    signals, n = data.signals, data.numbers
    if signals.full_precision_said:
        said = signals.evidence["full_precision_said"]
        # Failing while the weights are loaded in fp32 is the weights being twice their half size.
        weight = 0.35 if signals.low_precision else 0.8 if signals.phase == "loading" else 0.7
        yield Vote("full_precision", weight, f'The model runs in 32-bit floats ("{said}"): '
                   "every weight and activation takes twice what bf16/fp16 (or autocast) needs.")
        return
    training = signals.full_finetune or signals.lora or signals.phase in ("training", "optimizer_setup")
    generative = signals.domains & {"diffusion", "llm"}
    if not generative or training or signals.low_precision or signals.weight_bytes is not None or signals.serving_engine:
        return
    if data.framework not in ("pytorch", "unknown") or signals.phase not in ("generation", "evaluation", "unknown"):
        return
    filled = bool(n.allocated and n.capacity and n.allocated > 0.6 * n.capacity)
    small_request = bool(n.requested and n.capacity and n.requested < 0.1 * n.capacity)
    if filled and small_request:
        yield Vote("full_precision", 0.45 if "diffusion" in generative else 0.3,
                   f"Inference of a generative model whose live tensors fill {n.allocated / n.capacity:.0%} of the device "
                   "while asking for little more, and no dtype was given: weights left in PyTorch's default fp32 take twice "
                   "the memory of fp16/bf16.")


def broadcast_shape(first: tuple[int, ...], second: tuple[int, ...]) -> tuple[int, ...] | None:
    """The shape an elementwise op of the two gives (trailing dimensions aligned), or None when
    they do not broadcast."""
    result = []
    for index in range(1, max(len(first), len(second)) + 1):
        a = first[-index] if index <= len(first) else 1
        b = second[-index] if index <= len(second) else 1
        if a != b and 1 not in (a, b):
            return None
        result.append(max(a, b))
    return tuple(reversed(result))


@rule
def broadcasting_blowup(data: RuleInput) -> Iterator[Vote]:
    """Elementwise ops align trailing dimensions: (N, 1) with (N,) or (N, 1, 1) with (N, 1) gives an
    N x N result. Two shapes in the note whose broadcast is vastly larger than either input is an
    accidental outer product, whatever the model."""
    shapes = data.signals.note_shapes
    for i, first in enumerate(shapes):
        for second in shapes[i + 1:]:
            result = broadcast_shape(first, second)
            if result is None:
                continue
            biggest = max(prod(first), prod(second))
            size = 4 * prod(result)
            if prod(result) >= 100 * biggest and size > 1024**3:
                yield Vote("other", 0.9, f"Broadcasting {first} with {second} gives a {result} tensor "
                           f"({format_size(size)} in fp32): the trailing dimensions align, so the op builds an outer "
                           "product neither input intended (unintended broadcasting; check the shapes with .shape or "
                           "squeeze the extra dimension).")
                return


# Vocabulary sizes of widely used tokenizers (GPT-2 50,257; LLaMA/Mistral 32,000; LLaMA-3
# 128,256; Qwen 151,936/152,064; Gemma 256,000; multilingual T5/XLM-R ~250k; others): a request
# that is exactly tokens x one of them x 2 or 4 bytes is the logits.
_COMMON_VOCABS = (30522, 32000, 32064, 32768, 49152, 50257, 50304, 51200, 65024, 65536, 100352, 102400, 128000, 128256,
                  131072, 151646, 151936, 152064, 200064, 250002, 250880, 256000, 262144)


@rule
def request_is_the_logits(data: RuleInput) -> Iterator[Vote]:
    """The failing request matches batch x sequence x a common vocabulary x 2 or 4 bytes."""
    signals, n = data.signals, data.numbers
    if not n.requested or not signals.seq_len or n.requested < 64 * 1024**2 or "llm" not in signals.domains:
        return
    batch = signals.batch_size or 1
    # Within what the message's two printed decimals can hide, and no looser: ~90 products are
    # tried, and a loose window would match any large request.
    matches = [(abs(n.requested - tokens * vocab * width), tokens, vocab, width)
               for tokens in {batch * signals.seq_len, signals.seq_len} for vocab in _COMMON_VOCABS for width in (4, 2)
               # A vocabulary that is a multiple of the sequence length gives the size of an attention
               # matrix (heads x seq x seq) just as well: no evidence either way.
               if vocab % signals.seq_len]
    error, tokens, vocab, width = min(matches)
    if error <= 0.004 * n.requested:
        yield Vote("large_logits", 0.75, f"The {format_size(n.requested)} request is {tokens:,} tokens x a "
                   f"{vocab:,}-entry vocabulary x {width} bytes: the logits (or their softmax) over the vocabulary.")


@rule
def vocabulary(data: RuleInput) -> Iterator[Vote]:
    error, signals = data.context.error, data.signals
    shape = error.tensor_shape if error else None
    if shape and len(shape) >= 2 and shape[-1] >= 30_000:
        yield Vote("large_logits", 0.8, f"The tensor that failed has shape {shape}: its last dimension "
                   f"({shape[-1]:,}) is a vocabulary or class count, so this is the output layer's logits.")
    # Where it failed (the output layer named) and how big the vocabulary is are separate facts,
    # unless the note's words for the place were the vocabulary's size ("a huge vocabulary").
    said_size_only = "vocab" in signals.evidence.get("logits_said", "").lower()
    if signals.logits_said and not (said_size_only and signals.vocab_size and signals.vocab_size >= 50_000):
        yield Vote("large_logits", 0.6, f'The note places the failure at the output layer ("{signals.evidence["logits_said"]}"): '
                   "logits are batch x tokens x classes, often in fp32 for the loss, and the largest tensor of the step.")
    if signals.vocab_size and signals.vocab_size >= 50_000:
        yield Vote("large_logits", 0.85 if signals.vocab_size >= 1_000_000 else 0.6,
                   f"The vocabulary has ~{signals.vocab_size:,} entries: logits are batch x tokens x vocabulary.")


@rule
def stated_batch(data: RuleInput) -> Iterator[Vote]:
    error, signals = data.context.error, data.signals
    shape = error.tensor_shape if error else None
    said = signals.evidence.get("batch_size", "the note")
    where = f"the command line ({said.split(': ', 1)[-1][:80]})" if said.startswith("the command line") else "the note"
    if shape and signals.batch_size and shape[0] == signals.batch_size and signals.batch_size > 1:
        yield Vote("batch_too_large", 0.75, f"The failing tensor {shape} starts with the batch size "
                   f"({signals.batch_size}) from {where}.")
    elif signals.batch_size and signals.batch_size > 1 and not signals.batch_no_help:
        yield Vote("batch_too_large", 0.45 if signals.batch_size >= 16 else 0.3,
                   f"The batch size is {signals.batch_size}, from {where}.")
    if signals.batch_no_help:
        yield Vote("batch_too_large", -0.6, f'A smaller batch did not help ("{signals.evidence["batch_no_help"]}").')
        for cause in ("missing_no_grad", "reference_leak", "graph_retained"):
            yield Vote(cause, 0.3, "Memory that a smaller batch cannot fix is memory kept from earlier batches.")


@rule
def batch_raised(data: RuleInput) -> Iterator[Vote]:
    signals = data.signals
    if signals.batch_raised and not signals.batch_no_help:
        yield Vote("batch_too_large", 0.7, f'A larger batch is what made it fail ("{signals.evidence["batch_raised"]}"): '
                   "activations scale with the batch; keep the size that fits and accumulate gradients for the rest.")


@rule
def attention_named(data: RuleInput) -> Iterator[Vote]:
    """Attention named where the note says it failed: without a fused kernel its scores are a
    sequence x sequence matrix per head."""
    signals = data.signals
    if signals.naive_attention:
        yield Vote("attention_quadratic", 0.65, f'The note names an attention that materialises its scores ("{signals.evidence["naive_attention"]}"): '
                   "batch x heads x sequence² per layer, which fused kernels (SDPA, FlashAttention) never allocate.")
    if signals.attention_said:
        said = signals.evidence["attention_said"]
        weight = 0.6 if said.lower().startswith(("without", "flash", "xformers", "sdpa")) else 0.5
        if (signals.seq_len or 0) >= 4096 or signals.long_input:
            weight += 0.15  # the square of a long sequence is what attention adds over every other activation
        yield Vote("attention_quadratic", weight, f'The note places the failure in attention ("{said}"): without a fused '
                   "kernel (SDPA, FlashAttention, xformers) its scores take batch x heads x sequence² memory.")


@rule
def logits_of_every_token(data: RuleInput) -> Iterator[Vote]:
    """Scoring text (prompt log-probabilities, perplexity) or a long prefill computes logits for every
    prompt token, not just the last one: prompt length x vocabulary x 4 bytes in one tensor."""
    signals, n = data.signals, data.numbers
    if signals.logprobs:
        yield Vote("large_logits", 0.65, f'Log-probabilities of the prompt are asked for ("{signals.evidence["logprobs"]}"): '
                   "logits over the whole vocabulary are materialised for every prompt token.")
    elif ("llm" in signals.domains or signals.serving_engine) and signals.phase == "generation" and n.requested and \
            (signals.seq_len or 0) >= 4096 and n.capacity and n.requested > 0.25 * n.capacity:
        yield Vote("large_logits", 0.55, f"One {format_size(n.requested)} tensor while prefilling {signals.seq_len} tokens: "
                   "the prompt's logits (tokens x vocabulary), which attention kernels never allocate at that size.")


@rule
def smaller_inputs_did_not_help(data: RuleInput) -> Iterator[Vote]:
    """Smaller inputs did not help: the memory is not in activations but in model states."""
    signals = data.signals
    if not signals.input_no_help:
        return
    said = signals.evidence["input_no_help"]
    yield Vote("input_size_too_large", -0.5, f'Smaller inputs did not help ("{said}").')
    if signals.phase in ("training", "unknown") or signals.full_finetune:
        yield Vote("optimizer_state", 0.45, "What inputs cannot change in training is the model states: weights, "
                   "gradients and the optimizer's moments (Adam: 8 bytes per parameter).")
        yield Vote("model_too_large", 0.35, "The weights and gradients alone may already fill the device.")


@rule
def large_inputs(data: RuleInput) -> Iterator[Vote]:
    signals = data.signals
    if signals.long_input and not signals.input_no_help and signals.phase != "evaluation":
        yield Vote("input_size_too_large", 0.55, f'The inputs are large ("{signals.evidence["long_input"]}"): every '
                   "activation scales with their length or resolution.")
        if signals.domains & {"encoder", "llm"}:
            yield Vote("attention_quadratic", 0.3, "In a transformer, attention over a long input grows with its square.")


@rule
def long_sequences(data: RuleInput) -> Iterator[Vote]:
    signals = data.signals
    if signals.seq_len and signals.seq_len >= 8192 and not signals.domains & {"llm", "encoder"}:
        yield Vote("input_size_too_large", 0.45, f"A sequence length of {signals.seq_len} scales every activation.")
    if signals.seq_len and signals.seq_len >= 4096 and signals.domains & {"llm", "encoder"}:
        yield Vote("attention_quadratic", 0.5, f"At {signals.seq_len} tokens a naive attention matrix is "
                   f"{signals.seq_len}² x heads x 4 bytes per layer.")
        yield Vote("input_size_too_large", 0.45, f"A sequence length of {signals.seq_len} scales every activation.")


# Base rates: how often each cause is behind an OOM of this framework in this phase, when nothing
# more specific is known. Weak on purpose (every rule with evidence outweighs them), but they give
# a report the usual suspects in a sensible order.
_PRIORS: dict[tuple[str, str], list[tuple[str, float]]] = {
    ("pytorch", "training"): [("batch_too_large", 0.25), ("input_size_too_large", 0.15), ("graph_retained", 0.1),
                              ("full_precision", 0.1)],
    ("pytorch", "evaluation"): [("batch_too_large", 0.2), ("input_size_too_large", 0.2), ("reference_leak", 0.1)],
    # PyTorch builds modules in fp32 and many loaders keep that dtype: inference of a large model in
    # full precision is as common a story as its KV cache.
    ("pytorch", "generation"): [("kv_cache_or_generation", 0.3), ("model_too_large", 0.2), ("full_precision", 0.15),
                                ("batch_too_large", 0.12)],
    ("pytorch", "loading"): [("checkpoint_loading", 0.3), ("model_too_large", 0.3), ("full_precision", 0.1)],
    ("pytorch", "unknown"): [("batch_too_large", 0.25), ("input_size_too_large", 0.15), ("full_precision", 0.12),
                             ("graph_retained", 0.1)],
    ("tensorflow", "*"): [("batch_too_large", 0.45), ("input_size_too_large", 0.2), ("other_process_or_device", 0.15)],
    ("jax", "*"): [("batch_too_large", 0.25), ("input_size_too_large", 0.2), ("other_process_or_device", 0.15),
                   ("fragmentation", 0.12)],
    ("tpu", "*"): [("batch_too_large", 0.3), ("model_too_large", 0.25), ("input_size_too_large", 0.15)],
    ("llama.cpp", "*"): [("kv_cache_or_generation", 0.4), ("model_too_large", 0.35), ("framework_bug", 0.15)],
    ("onnxruntime", "*"): [("input_size_too_large", 0.35), ("batch_too_large", 0.25), ("attention_quadratic", 0.2)],
    ("other", "*"): [("batch_too_large", 0.2), ("input_size_too_large", 0.2), ("framework_bug", 0.15)],
}


def priors_for(framework: str, phase: str, tpu: bool = False) -> list[tuple[str, float]]:
    if tpu:
        return _PRIORS[("tpu", "*")]
    key = framework if framework in ("pytorch", "tensorflow", "jax", "llama.cpp", "onnxruntime", "other") else "pytorch"
    return _PRIORS.get((key, phase)) or _PRIORS.get((key, "*")) or _PRIORS[("pytorch", "unknown")]


@rule
def framework_priors(data: RuleInput) -> Iterator[Vote]:
    """Weak base rates by framework and phase, so a report always ranks the usual suspects."""
    framework = data.framework
    for cause, weight in priors_for(framework, data.signals.phase, data.signals.tpu):
        yield Vote(cause, weight, f"A common cause of {framework if framework != 'unknown' else 'GPU'} OOMs "
                   f"{'in ' + data.signals.phase + ' ' if data.signals.phase != 'unknown' else ''}(base rate).")
