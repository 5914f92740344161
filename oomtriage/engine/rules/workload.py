"""Rules on the workload's size: model states against the device, precision, vocabulary, batch."""

from __future__ import annotations

import re
from math import prod
from typing import Iterator

from oomtriage.sizes import format_size

from . import RuleInput, Vote, rule
from .sites import innermost_site


# Weights split across the GPUs by tensor or model parallelism ("--model_parallel_size 2", "tp_size=4").
_WEIGHTS_SPLIT = re.compile(r"\b(?:tensor|model|pipeline)[-_ ]parallel(?:ism)?(?:[-_ ]size)?\s?[=: ]?\s?(?:[2-9]|\d{2})\b|(?<![\w-])(?:-tp|--tp|tp_size\s?=)\s?[2-9]\b",
                            re.IGNORECASE)


@rule
def model_states(data: RuleInput) -> Iterator[Vote]:
    """Weights, gradients and Adam states (16 B/param in mixed precision) against the GPU, per sharding."""
    signals, capacity = data.signals, data.numbers.capacity
    params = signals.param_count
    if not params or not capacity or signals.phase in ("generation", "loading"):
        return
    # A fine-tune named in a note whose failure came in evaluation ("fine-tuning is fine, but generating
    # with the trained model fails") is what went well, not what failed.
    training = signals.phase in ("training", "optimizer_setup") or (signals.full_finetune and signals.phase == "unknown")
    frozen_weights = (signals.weight_bytes or 2) * params
    # (on several GPUs too when one card cannot hold even the frozen weights: a data-parallel copy on
    # each GPU is no smaller, only sharding or device_map splits them)
    whole_copy_too_large = frozen_weights > 0.9 * capacity and not (signals.splits_weights or signals.zero_stage == 3 or signals.fsdp)
    if training and (signals.lora or signals.frozen) and not signals.offload and ((signals.gpu_count or 1) == 1 or whole_copy_too_large):
        # Adapters train few parameters, but the frozen base is still on the GPU: weights that
        # fill it leave nothing for the activations whatever the adapter's rank or the batch.
        # (On several GPUs a whole copy on each is the replication rules' story.) Allocator
        # figures that show less in use than the estimate say the weights are smaller than assumed
        # (quantized without saying so).
        weights = (signals.weight_bytes or 2) * params
        error = data.context.error
        in_use = (error.total_bytes - error.free_bytes) if error and error.total_bytes and error.free_bytes is not None else None
        if weights > 0.8 * capacity and not (in_use is not None and in_use < weights):
            if signals.growth:
                # The weights were all there at the first step; memory that climbs step after step
                # on top of them is something the steps keep.
                yield Vote("model_too_large", 0.25, f"The frozen weights take {format_size(int(weights))} of {format_size(capacity)} "
                           "and leave little room, but they do not grow: what climbs step after step is kept by the steps.")
            else:
                yield Vote("model_too_large", 0.7, f"The frozen weights alone take {format_size(int(weights))} of "
                           f"{format_size(capacity)}: load them quantized (4-bit, QLoRA), split them over GPUs, or use a larger GPU.")
            yield Vote("batch_too_large", -0.3, "A smaller batch cannot make room the weights already take.")
    if not training or signals.lora or signals.frozen:
        return  # adapters or a frozen backbone: most weights need no gradients or moments, and the count says not how many
    if signals.saving:
        return  # it trained with these states and failed when saving (rule gathered_for_saving)
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
        # (the taxonomy's line, per GPU: the weights and their gradients as this setup holds them fitting
        # while Adam's moments push the share over is the optimizer's state. ZeRO-1/2 and plain data
        # parallelism keep every weight on every GPU, ZeRO-2 splits the gradients; ZeRO-3, FSDP and
        # tensor or model parallelism split both.)
        per_param = 2 if signals.low_precision else 4
        split_weights = stage == 3 or signals.fsdp or bool(_WEIGHTS_SPLIT.search(data.context.note or ""))
        weights_and_grads_share = (2 * per_param * params / gpus if split_weights else
                                   per_param * params * (1 + 1 / gpus) if stage == 2 else 2 * per_param * params)
        if replicated > 0.8 * capacity and sharded > 0.8 * capacity and weights_and_grads_share < 0.8 * capacity \
                and not signals.small_state_optimizer:
            yield Vote("optimizer_state", 0.7, f"Split over {gpus} GPUs the weights and their gradients take "
                       f"{format_size(int(weights_and_grads_share))} per GPU of {format_size(capacity)}; Adam's states, 12 of the 16 "
                       f"bytes per parameter ({format_size(int(12 * params))} in all), are what push the share over: offload or "
                       "shard the optimizer (ZeRO), use an 8-bit or factored one, or train fewer parameters (LoRA).")
            yield Vote("model_too_large", 0.4, f"Even fully sharded the model states take {format_size(int(sharded))} per GPU.")
        elif replicated > 0.8 * capacity and sharded > 0.8 * capacity:
            # Even split across every GPU the states do not fit: no sharding stage is the fix.
            yield Vote("model_too_large", 0.65, f"Even fully sharded over {gpus} GPUs (ZeRO-3/FSDP) the model states take "
                       f"{format_size(int(sharded))} per GPU of {format_size(capacity)}: offload them (ZeRO-3 offload), "
                       "train fewer parameters (LoRA) or use more GPUs.")
            yield Vote("optimizer_state", 0.45, f"Optimizer states are 12 of the 16 bytes per parameter ({format_size(int(12 * params))} in all).")
            yield Vote("distributed_replication", 0.3, f"Unsharded, each GPU keeps {format_size(int(replicated))} of model states.")
        elif replicated > 0.8 * capacity and sharded < 0.8 * replicated:
            what = f"ZeRO-{stage}" if stage else "data parallelism without sharding"
            yield Vote("distributed_replication", 0.7, f"With {what} each GPU keeps {format_size(int(replicated))} of model "
                       f"states; full sharding (ZeRO-3/FSDP) would need {format_size(int(sharded))}.")
            yield Vote("optimizer_state", 0.5, f"Optimizer states are 12 of the 16 bytes per parameter ({format_size(int(12 * params))} in all).")
        elif replicated > 0.6 * capacity and replicated - sharded > 0.25 * capacity:
            # The states fit, but leave each GPU too little for a step's activations: what sharding
            # would give back is more than any batch or length cut could.
            what = f"ZeRO-{stage}" if stage else "data parallelism without sharding"
            yield Vote("distributed_replication", 0.5, f"With {what} the model states alone take {format_size(int(replicated))} of "
                       f"each GPU's {format_size(capacity)} ({replicated / capacity:.0%}) before any activation; full sharding "
                       f"(ZeRO-3/FSDP) would need {format_size(int(sharded))}.")
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
    elif full > 0.75 * capacity and not signals.small_state_optimizer:
        # The states fit, but leave less than a quarter of the card for every activation of a step:
        # Adam's moments (8 of the 16 bytes) are what a smaller-state optimizer would give back.
        # the fuller the card, the less any batch or length could fit beside the states
        yield Vote("optimizer_state", min(0.7, 0.5 + 2 * (full / capacity - 0.75)), f"Weights, gradients and Adam's moments take {format_size(int(full))} of "
                   f"{format_size(capacity)} ({full / capacity:.0%}) before any activation: an 8-bit or factored "
                   "optimizer (Adafactor) frees most of the moments' share.")
        yield Vote("model_too_large", 0.25, "Full training of this model leaves little of one GPU for activations.")
    elif full <= 0.5 * capacity and not signals.growth and not signals.large_vocab_said and (signals.family_vocab or 0) < 100_000:
        # The named model's states leave half the card or more: what filled it is a step's
        # activations, which scale with the batch and the input's length. (Of a family with a
        # vocabulary of 100k tokens and more, the largest activation is the logits: rule
        # small_model_large_vocabulary.)
        yield Vote("batch_too_large", 0.3, f"The model's training states ({params / 1e6:.0f}M params x 16 B = {format_size(int(full))}) "
                   f"take at most half of {format_size(capacity)}: the rest went to the step's activations, which scale with "
                   "the batch and the input length; lower the batch (with gradient accumulation) or the maximum length.")
        yield Vote("model_too_large", -0.3, f"The model's states ({format_size(int(full))}) fit with room to spare.")


@rule
def inference_weights(data: RuleInput) -> Iterator[Vote]:
    """fp32 weights that would fit in half precision, or weights that fill the device either way."""
    signals, capacity = data.signals, data.numbers.capacity
    params = signals.param_count
    if not (params or signals.measured_weights) or not capacity or signals.full_finetune or signals.phase in ("training", "optimizer_setup"):
        return
    if (signals.gpu_count or 1) > 1 and signals.splits_weights:
        # llama.cpp, device_map="auto" and tensor parallelism spread the weights over every GPU.
        capacity *= signals.gpu_count
    elif (signals.gpu_count or 1) > 1 and signals.copy_per_device and params and \
            (signals.weight_bytes or 2) * params < 0.8 * capacity * signals.gpu_count:
        # Each GPU loads the whole model: one process per GPU, each with every weight (rule
        # whole_model_on_every_gpu); the job's GPUs together would hold it.
        return
    if signals.smaller_input_fits or signals.smaller_batch_fits:
        return  # the same weights loaded and ran with a smaller input or batch: they fit
    if signals.measured_weights:
        # The engine measured what it loaded: no estimate from a parameter count and a guessed dtype.
        if signals.tool_memory_cap and signals.measured_weights <= capacity:
            return  # the card holds them: a tool's own cap is the limit (rule a_tools_own_memory_cap)
        if signals.measured_weights > 0.8 * capacity:
            yield Vote("model_too_large", 0.85, f'The loaded weights take {format_size(signals.measured_weights)} '
                       f'("{signals.evidence["measured_weights"]}") of {format_size(capacity)}.')
        return
    if signals.weight_bytes is not None and signals.weight_bytes < 2:
        stored = signals.weight_bytes * params
        if stored > 0.8 * capacity:
            yield Vote("model_too_large", 0.75, f"Even quantized ({signals.weight_bytes:g} B/weight) the weights take "
                       f"{format_size(int(stored))} of {format_size(capacity)}.")
        return
    fp32, half = 4 * params, 2 * params
    if signals.serving_engine and not half > 0.8 * capacity:
        return  # serving engines load half-precision weights by default: their KV cache is the variable part
    if signals.tool_memory_cap and half <= capacity:
        return  # the card holds the half-precision weights: a tool's own cap is the limit (rule a_tools_own_memory_cap)
    if half > capacity:
        # No setting of the allocator, the batch or the cache makes weights larger than the card fit.
        yield Vote("model_too_large", 0.92, f"Even in fp16 the weights take {format_size(int(half))}, more than the "
                   f"{format_size(capacity)} card: quantize, shard over GPUs, offload or use a smaller model.")
    elif half > 0.8 * capacity:
        yield Vote("model_too_large", 0.8, f"Even in fp16 the weights take {format_size(int(half))} of {format_size(capacity)}.")
    elif fp32 > 0.9 * capacity and not signals.low_precision:
        yield Vote("full_precision", 0.75, f"In fp32 the weights take {format_size(int(fp32))} (more than the GPU's "
                   f"{format_size(capacity)}) but only {format_size(int(half))} in fp16/bf16, and no dtype was given: "
                   "many loaders default to fp32.")
        yield Vote("model_too_large", 0.35, "The model is large for this GPU.")
    elif signals.low_precision and signals.phase == "loading" and half <= 0.65 * capacity and fp32 > 0.8 * capacity:
        # Loading asked for half precision, whose weights fit with room to spare, and it fails before any
        # activation exists: the loader put them on the device in fp32 and cast them there.
        yield Vote("full_precision", 0.5, f"In half precision the weights take {format_size(int(half))} of "
                   f"{format_size(capacity)}, in fp32 {format_size(int(fp32))}: failing while loading, they reached the "
                   "device in fp32 before the cast; cast them on the CPU first (load with the dtype, then .to(device)).")
        yield Vote("framework_bug", 0.45, "When the loader is a library's, its order (move, then cast) is the bug; a newer release may cast first.")
        yield Vote("model_too_large", -0.3, "In the precision asked for, the weights fit.")
    elif signals.low_precision and half > 0.4 * capacity:
        yield Vote("model_too_large", 0.45, f"The weights take {format_size(int(half))} in half precision, "
                   f"{half / capacity:.0%} of the GPU, leaving little for activations.")
    elif fp32 > 0.4 * capacity and not signals.low_precision:
        yield Vote("model_too_large", 0.5, f"The weights take {format_size(int(fp32))} in fp32, "
                   f"{fp32 / capacity:.0%} of the GPU, leaving little for activations.")
        yield Vote("full_precision", 0.3, "Loading in fp16/bf16 would halve them.")
    allocated = data.numbers.allocated
    if allocated and fp32 * 0.9 <= allocated and half * 1.3 < allocated and not signals.low_precision and fp32 > 0.5 * capacity:
        yield Vote("full_precision", 0.3, f"{format_size(allocated)} allocated matches fp32 weights, not fp16.")


@rule
def training_with_no_smaller_batch_left(data: RuleInput) -> Iterator[Vote]:
    """Training on a card of a few GB, or on a card short of what the project asks for, with no batch
    above one left to cut: with no parameter count to weigh, the model's own states (weights,
    gradients, the optimizer's moments) are what no batch setting can shrink."""
    signals, capacity = data.signals, data.numbers.capacity
    if signals.phase not in ("training", "unknown") or signals.param_count or signals.growth or signals.long_input or signals.host_only:
        return
    if signals.other_process_hint or signals.lora or signals.frozen:
        return
    at_one = bool((signals.batch_no_help and signals.batch_size == 1) or signals.one_input_only)
    if (signals.batch_size or 1) > 1 and not (signals.batch_no_help or signals.one_input_only):
        return  # a batch above one is stated: a smaller batch is still left to try (rule stated_batch)
    shape = data.context.error.tensor_shape if data.context.error else None
    if shape and len(shape) >= 3 and shape[0] > 1 and not signals.batch_no_help:
        return  # the failing activation leads with a batch above one ("shape[24,128,75,75]"): one is left
    # (a phase left unknown counts where a smaller batch was already tried: nothing but training
    # has a batch people cut to make a run fit)
    small_card = bool(capacity and capacity <= 4.3 * 2**30 and (signals.phase == "training" or signals.batch_no_help))
    asked = signals.memory_requirement_asked
    if not (small_card or asked):
        # a batch of one that fails alone says as much about one sample's size (a high-resolution
        # image, a long recording): rule stated_batch
        return
    if small_card:
        why = f"the card has {format_size(int(capacity))} in all" + (" and it fails at a batch of one" if at_one else "")
    elif signals.one_input_only:
        why = (f'the note asks what memory the code needs ("{signals.evidence["memory_requirement_asked"]}") '
               f'and it fails on one input alone ("{signals.evidence["one_input_only"]}")')
    else:
        why = f'the note asks what memory the code needs ("{signals.evidence["memory_requirement_asked"]}")'
    # each independent reason adds; a card of 2.5 GB or less holds few current models' states at all
    weight = 0.35 + 0.1 * (at_one + small_card + asked) + (0.1 if small_card and capacity <= 2.5 * 2**30 else 0.0)
    lead = ("Training" if signals.phase == "training" else "A smaller batch did not help" if signals.batch_no_help
            else "The phase is unsaid")
    if "detection" in signals.domains and not signals.domains & {"llm", "diffusion"} and not (capacity and capacity <= 2.5 * 2**30):
        # Segmentation and detection networks are convolutional backbones of tens of millions of
        # parameters (well under a GB of states with Adam); their activations are kept at the input's
        # full resolution, so at a batch this small the image size is what fills the card. (On a card
        # of 2.5 GB or less the CUDA context and those states leave almost nothing: the model's case.)
        yield Vote("input_size_too_large", weight + 0.05, f"{lead}, and {why}: a segmentation or detection network's own states "
                   "take well under a GB, while its activations are kept at the input's full resolution; downsample the "
                   "images or train on crops.")
        weight -= 0.15
    yield Vote("model_too_large", weight,
               f"{lead}, and {why}: the weights, their gradients and the optimizer's moments come before any batch; "
               "use a smaller variant, half precision, an 8-bit optimizer, gradient checkpointing, or a larger card.")
    yield Vote("optimizer_state", 0.2, "Adam's two moments are half of those states.")


@rule
def inference_asked_what_card_it_needs(data: RuleInput) -> Iterator[Vote]:
    """Inference that fails at once, with the note asking what card or memory the model needs: its
    steady need (the weights, then one request's activations) is the question, not a batch or a leak."""
    signals = data.signals
    if not signals.memory_requirement_asked or signals.phase not in ("evaluation", "generation", "loading"):
        return
    if signals.growth or signals.long_input or (signals.batch_size or 1) > 1 or signals.full_finetune or signals.lora:
        return  # a leak, a long input or a batch is what a larger card only postpones or absorbs
    yield Vote("model_too_large", 0.5, f'Inference, and the note asks what the model needs ("{signals.evidence["memory_requirement_asked"]}"): '
               "its steady need, mostly the weights, is more than this card holds; load it in half precision or quantized, "
               "offload part of it, or use a larger card.")


@rule
def a_larger_card_fits(data: RuleInput) -> Iterator[Vote]:
    """Inference that fits a card with more memory, at one request and with nothing said to grow:
    its steady need, mostly the weights, is more than this card has."""
    signals = data.signals
    if not signals.larger_card_fits or signals.phase not in ("generation", "loading", "evaluation", "unknown"):
        return
    if signals.growth or signals.long_input or (signals.batch_size or 1) > 1 or signals.full_finetune:
        return  # a leak, a long input or a batch is what a larger card only postpones or absorbs
    yield Vote("model_too_large", 0.45, f'It fits a card with more memory ("{signals.evidence["larger_card_fits"]}"): what one '
               "request needs, mostly the weights, is more than this card holds; quantize further, offload or use the larger card.")


@rule
def weights_beyond_the_engines_share(data: RuleInput) -> Iterator[Vote]:
    """A serving engine takes only its configured share of the card for weights and KV cache: weights
    larger than that share cannot load at any cache size, and lowering the share makes it worse."""
    signals, capacity = data.signals, data.numbers.capacity
    fraction, params = signals.engine_memory_fraction, signals.param_count
    if not (signals.serving_engine and fraction and params and capacity) or signals.phase == "training":
        return
    if (signals.gpu_count or 1) > 1 and signals.splits_weights:
        capacity *= signals.gpu_count  # tensor parallelism: each GPU holds its share of the weights
    weights = (signals.weight_bytes or 2) * params  # engines load half precision unless told to quantize
    share = fraction * capacity
    if weights <= share:
        return
    yield Vote("model_too_large", 0.75, f"The weights take about {format_size(int(weights))}, more than the "
               f"{fraction:g} x {format_size(capacity)} = {format_size(int(share))} the engine may use for weights and KV cache: "
               "a lower memory fraction only makes it worse; quantize, shard over more GPUs or use a smaller model.")
    yield Vote("kv_cache_or_generation", -0.3, "No cache size can fit beside weights larger than the engine's share.")


@rule
def language_model_inference_beyond_weights(data: RuleInput) -> Iterator[Vote]:
    """A language model run without training keeps little besides its weights but the KV cache
    (2 x layers x tokens x hidden per sequence; reference implementations preallocate it for the
    largest batch and length they accept): live memory far beyond weights that fit is that cache."""
    signals, n = data.signals, data.numbers
    params = signals.param_count
    if "llm" not in signals.domains or not params or not n.capacity or not n.allocated:
        return
    if signals.full_finetune or signals.phase in ("training", "optimizer_setup", "loading") or signals.serving_engine:
        return
    weights = (signals.weight_bytes or (2 if signals.low_precision else 4)) * params
    beyond = n.allocated - weights
    if weights < 0.75 * n.capacity and beyond > 0.2 * n.capacity:
        yield Vote("kv_cache_or_generation", 0.55, f"{format_size(int(n.allocated))} is live but the weights take about "
                   f"{format_size(int(weights))}: the other {format_size(int(beyond))} of a language model that is not "
                   "training is its KV cache (sized by the batch and maximum length it was set up for: lower max_batch_size / "
                   "max_seq_len).")


@rule
def precision(data: RuleInput) -> Iterator[Vote]:
    """32-bit floats take 4 bytes per weight, activation and gradient where bf16/fp16 take 2. PyTorch
    builds modules in fp32 and many pipelines keep that dtype unless told otherwise, so inference of
    a large generative model whose weights fill the card is, by default, inference in fp32."""
    signals, n = data.signals, data.numbers
    if signals.half_needs_more:
        yield Vote("framework_bug", 0.6, f'Half precision needs more memory than fp32 here ("{signals.evidence["half_needs_more"]}"): '
                   "the dtype does not reach the model (a setting dropped on its way to the loader), or the weights are loaded "
                   "twice; check the dtype of the loaded parameters.")
        yield Vote("full_precision", -0.4, "Full precision is what fits here, not what fails.")
        return
    if signals.load_without_dtype and signals.phase not in ("training", "optimizer_setup") and not signals.lora:
        said = signals.evidence["load_without_dtype"]
        # (half precision named in another call of the note is that call's, not this one's)
        yield Vote("full_precision", 0.6 if signals.low_precision else 0.45, f'The model is loaded with "{said}", which names no '
                   "dtype: transformers and diffusers load fp32 weights then, twice what fp16/bf16 takes, whatever an earlier "
                   "call asked for; pass torch_dtype=torch.float16 (or bfloat16) to this call too.")
    if signals.full_precision_said:
        said = signals.evidence["full_precision_said"]
        # Failing while the weights are loaded in fp32 is the weights being twice their half size.
        # (Half precision named beside it is an alternative, unless the note says that run works.)
        weight = 0.75 if signals.half_fits else 0.35 if signals.low_precision else 0.8 if signals.phase == "loading" else 0.7
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


def pairwise_idiom(first: tuple[int, ...], second: tuple[int, ...]) -> bool:
    """Shapes of equal rank sharing a last (feature) dimension, each with 1 exactly where the other
    has a size: ``x[None, :, :]`` against ``y[:, None, :]``."""
    if len(first) != len(second) or len(first) < 3 or first[-1] != second[-1] or first[-1] == 1:
        return False
    return all((a == 1) != (b == 1) for a, b in zip(first[:-1], second[:-1]))


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
            if prod(result) >= 100 * biggest and size > 1024**3 and pairwise_idiom(first, second):
                # (1, N, D) with (M, 1, D): the written idiom for all pairs of two sets of D-vectors,
                # so the N x M x D tensor is what the op means; its size is the inputs' product.
                yield Vote("input_size_too_large", 0.45, f"Broadcasting {first} with {second} builds all pairs, a "
                           f"{result} tensor ({format_size(size)} in fp32): a pairwise op whose memory is the product of "
                           "the two sets' sizes; compute it in chunks of rows or with a matrix product (torch.cdist, x @ y.T).")
                return
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
    # The failing op named as the output layer ("logits/MatMul", "softmax_cross_entropy"): TensorFlow
    # and XLA print the node's scope, which is the layer's name.
    output_op = bool(error and error.operation and re.search(r"(?<![a-z])logits\b|logits/|cross_?entropy|\blm_head\b",
                                                               error.operation, re.IGNORECASE))
    if output_op and not (shape and len(shape) >= 2 and shape[-1] >= 30_000):
        yield Vote("large_logits", 0.65, f"The op that failed is the output layer's ({error.operation}): logits are "
                   "batch x tokens x classes, the largest tensor of the step; shrink the tokens per step or chunk the loss.")
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
    elif signals.large_vocab_said and not signals.logits_said and not (signals.vocab_size and signals.vocab_size < 50_000):
        yield Vote("large_logits", 0.6, f'The note says the output is large ("{signals.evidence["large_vocab_said"]}"): '
                   "logits are batch x tokens x vocabulary, the largest tensor of the step.")


@rule
def transducer_joint(data: RuleInput) -> Iterator[Vote]:
    """An RNN-T (transducer) model's joint network scores every pair of an encoder frame and a label
    position over the whole vocabulary: batch x frames x label length x vocabulary logits, kept for the
    loss's backward. It is the model's largest tensor by orders of magnitude."""
    signals = data.signals
    if not signals.transducer:
        return
    vocab = f" (here x {signals.vocab_size:,})" if signals.vocab_size else ""
    # The longest utterance in a batch sets frames x label length: "fails a few batches in" is this
    # same tensor at its largest, so the vote holds against the variable-length reading.
    yield Vote("large_logits", 0.75 if signals.vocab_size and signals.vocab_size >= 1000 else 0.65,
               f'A transducer ("{signals.evidence["transducer"]}"): its joint network outputs batch x frames x label length '
               f"x vocabulary logits{vocab}; use a pruned or fused RNN-T loss (k2's pruned loss, a fused joint that "
               "splits the batch), a smaller vocabulary, or fewer frames (more subsampling).")


@rule
def another_framework_fits(data: RuleInput) -> Iterator[Vote]:
    """The same model loads or runs in another framework on this device: its weights fit, so what
    fails is how this framework builds them (Flax initialises random parameters and then loads the
    checkpoint over them: two copies; `_do_init=False` loads one)."""
    signals = data.signals
    if not signals.other_framework_fits:
        return
    said = signals.evidence["other_framework_fits"]
    if signals.phase == "loading":
        yield Vote("checkpoint_loading", 0.65, f'The same model loads in another framework on this device ("{said}"): the '
                   "weights fit, so this loader holds more than one copy (randomly initialised parameters and the "
                   "checkpoint, or fp32 and the target dtype); load without initialising first (Flax: _do_init=False).")
        yield Vote("model_too_large", -0.4, f'The weights fit on this device in another framework ("{said}").')
    else:
        yield Vote("framework_bug", 0.45, f'The same model runs in another framework on this device ("{said}"): this '
                   "framework's implementation of it needs more memory than the model does.")


@rule
def the_dataset_on_disk(data: RuleInput) -> Iterator[Vote]:
    """A training run that fits with less data and fails with more, at the same batch. A GPU message
    says the device filled: a larger dataset holds longer or larger examples, and the longest in a
    batch sets its padded size. Otherwise what grew is the dataset held in host memory (tokenised,
    grouped or shuffled in RAM)."""
    signals, error = data.signals, data.context.error
    if not (signals.dataset_bytes_matter or signals.dataset_decides) or signals.phase not in ("training", "unknown", "data_loading"):
        return
    said = signals.evidence.get("dataset_bytes_matter") or signals.evidence["dataset_decides"]
    gpu_message = bool(error and error.backend not in ("host", "cpu", "unknown"))
    if gpu_message:
        yield Vote("input_size_too_large", 0.5, f'How much data there is decides whether it fits ("{said}"), and the GPU '
                   "filled: more data brings longer or larger examples, and the longest one in a batch sets its padded "
                   "size; cap the length (max_seq_length, a crop) or filter the outliers.")
    else:
        yield Vote("dataloader_or_host", 0.6, f'The dataset\'s size decides whether it fits ("{said}"): the batch is the same, '
                   "so what grows is the dataset held in host memory; stream it (datasets' streaming=True), memory-map it, "
                   "or preprocess it to disk in shards.")
    yield Vote("batch_too_large", -0.3, "The same batch fits with less data.")


@rule
def the_example_fits_a_larger_batch(data: RuleInput) -> Iterator[Vote]:
    """The library's own example fits a batch at least as large as the one that fails here: the
    model and the code are the same, so what differs is this data's inputs (longer texts, larger
    images)."""
    signals = data.signals
    fits = signals.example_fits_batch
    # (A batch equal to the example's may be the example's own number read as the run's.)
    if not fits or not signals.batch_size or signals.batch_size >= fits:
        return
    said = signals.evidence["example_fits_batch"]
    yield Vote("input_size_too_large", 0.5, f'The example fits a batch of {fits} ("{said}") where this run fails at '
               f"{signals.batch_size}: the same model, so this data's inputs are larger (longer sequences, bigger "
               "images); cap them (max_seq_length, a crop or resize).")
    yield Vote("batch_too_large", -0.3, f"A batch of {fits} fits the same model on the example's data.")


@rule
def the_number_of_classes(data: RuleInput) -> Iterator[Vote]:
    """A run that fits with fewer classes and fails with many: what grows is everything sized by the
    class count (the classifier or its proxies, the logits, a loss's class x class matrices)."""
    signals = data.signals
    if signals.classes_matter:
        yield Vote("large_logits", 0.6, f'The failure follows the number of classes ("{signals.evidence["classes_matter"]}"): the '
                   "output layer, the logits and any class x class terms of the loss grow with it; shrink what scales with "
                   "the classes (fewer proxies or centers per class, a smaller embedding, a sampled or chunked softmax).")
        yield Vote("batch_too_large", -0.2, "The batch did not change between the run that fit and the one that failed.")


@rule
def many_boxes_in_one_image(data: RuleInput) -> Iterator[Vote]:
    """Detectors match every anchor or proposal against every ground-truth box of an image: with
    hundreds of boxes those IoU matrices and the per-box targets dominate a training step."""
    if data.signals.many_boxes:
        yield Vote("input_size_too_large", 0.55, f'The images hold many ground-truth boxes ("{data.signals.evidence["many_boxes"]}"): '
                   "label assignment builds anchors x boxes matrices per image; assign on the CPU past a box count "
                   "(mmdetection's gpu_assign_thr) or cap the boxes per image.")


@rule
def a_self_attention_vision_model(data: RuleInput) -> Iterator[Vote]:
    """A model built from self-attention (stand-alone self-attention, attention-based vision models)
    computes scores over every pair of positions: one request this large is that score matrix."""
    signals, n = data.signals, data.numbers
    if signals.attention_model_named and n.requested and n.capacity and n.requested > 0.2 * n.capacity:
        yield Vote("attention_quadratic", 0.55, f"A self-attention model asked for {format_size(n.requested)} in one piece "
                   f"({n.requested / n.capacity:.0%} of the device): the attention scores over all position pairs, which grow "
                   "with the square of the positions; use a memory-efficient attention kernel or smaller inputs.")


@rule
def small_model_large_vocabulary(data: RuleInput) -> Iterator[Vote]:
    """A small language model (up to ~2B parameters) of a large-vocabulary family (Qwen, Llama 3,
    Gemma: 128k-262k tokens): per token its logits (one fp32 score per vocabulary entry, kept with the
    softmax for the loss) rival all its layers' activations, so training and scoring run out on them."""
    signals = data.signals
    vocab, params = signals.family_vocab, signals.param_count
    if signals.vocab_size or not vocab or not params or params > 2e9 or signals.serving_engine:
        return
    if signals.phase not in ("training", "evaluation"):
        return
    yield Vote("large_logits", 0.4, f'{signals.evidence["family_vocab"]} has a ~{vocab:,}-token vocabulary: at {params / 1e9:g}B '
               "parameters its logits (batch x tokens x vocabulary, fp32 for the loss) rival all the layers' activations per token; "
               "compute the loss in chunks or with a fused linear cross-entropy, and drop the tokens that carry no label.")


@rule
def embedding_tables(data: RuleInput) -> Iterator[Vote]:
    """Recommenders and graph embeddings keep one row per user, item or entity: with millions of
    rows the tables are the model (rows x dimension x 4 B, and Adam's two moments on top in training),
    whatever the batch. Shard them, keep them on the host with a GPU cache, or hash them smaller."""
    signals = data.signals
    rows = signals.embedding_rows
    # (host RAM said to fill: the tables built there are host memory's business)
    if not rows or signals.phase in ("generation", "data_loading") or signals.host_only:
        return
    yield Vote("model_too_large", 0.5, f"Embedding tables for ~{rows:,} rows: at d dimensions they hold rows x d x 4 bytes "
               "(x4 with Adam's moments in training), which is the model itself; shard the tables, keep them in host memory "
               "with a GPU cache, or hash the ids into fewer rows.")


@rule
def attention_free_models(data: RuleInput) -> Iterator[Vote]:
    """State-space models (Mamba, RWKV, Hyena) replace attention with a scan whose memory grows
    linearly with the length: there is no score matrix to blame, the length itself is the lever."""
    signals = data.signals
    if signals.attention_free:
        yield Vote("attention_quadratic", -0.35, f'"{signals.evidence["attention_free"]}" has no (or few) attention layers: '
                   "no sequence x sequence score matrix to materialise.")
        if signals.long_input or (signals.seq_len or 0) >= 8192:
            yield Vote("input_size_too_large", 0.35, "Its scan's activations and states still grow linearly with the length.")


@rule
def policy_beside_a_reference_model(data: RuleInput) -> Iterator[Vote]:
    """Preference and RL fine-tuning (DPO, PPO, KTO) keeps a frozen copy of the model as its reference
    beside the one it trains: twice the weights of supervised fine-tuning, which is why a run whose
    SFT fitted fails at this stage. A LoRA policy can serve as its own reference (adapter off)."""
    signals, capacity = data.signals, data.numbers.capacity
    if not signals.reference_model_method or signals.lora or signals.phase not in ("training", "unknown", "optimizer_setup"):
        return
    if signals.colocated and signals.serving_engine:
        return  # the rollout engine beside the trainer is the story there (rule trainer_beside_an_inference_engine)
    params = signals.param_count
    if params and capacity and 2 * (signals.weight_bytes or 2) * params < 0.3 * capacity:
        return  # two copies of these weights take little of this card
    yield Vote("model_too_large", 0.45, f'"{signals.evidence["reference_model_method"]}" trains the model beside a frozen '
               "reference copy: two sets of weights where supervised fine-tuning had one. Train LoRA adapters (the base with "
               "adapters off is the reference), precompute the reference log-probs, or shard both models (ZeRO-3).")


@rule
def merged_into_full_weights(data: RuleInput) -> Iterator[Vote]:
    """Merging LoRA adapters into the base model (or saving it merged in 16 bits) dequantizes every
    weight: the model that trained in 4 bits is materialised at 2 B per parameter, on the device it
    sits on, whatever the batch was during training."""
    signals = data.signals
    if not signals.merge_to_full_weights or signals.host_only:
        return  # host memory filling is the host rule's story
    yield Vote("model_too_large", 0.55, f'"{signals.evidence["merge_to_full_weights"]}" writes every weight out in full '
               "precision (16 bits for a 4-bit model: four times its size): merge on the CPU (device_map='cpu', "
               "low_cpu_mem_usage), shard by shard, or keep the adapters separate and load them at inference.")


@rule
def diffusion_vae_decode(data: RuleInput) -> Iterator[Vote]:
    """The VAE decode is a diffusion pipeline's last step: the latents become full-resolution pixels
    while the text encoders and the denoiser, done with, still sit on the GPU. Offloading finished
    components (enable_model_cpu_offload) frees their weights; tiled or sliced decoding bounds the
    decoder's activations."""
    signals = data.signals
    note = data.context.note or ""
    decode = re.search(r"\bvae[ _.-]?decod\w*|\bdecod\w* (?:the )?latents\b|\bdecode_latents\b", note, re.IGNORECASE)
    if not decode or signals.phase in ("training", "optimizer_setup") or signals.full_finetune or signals.lora:
        return
    n = data.numbers
    # (a VAE decode generates no tokens: "sampling" before it was the denoising loop, with no KV cache)
    yield Vote("kv_cache_or_generation", -0.4, f'The failure is at the VAE decode ("{decode.group(0)}"), which keeps no KV cache.')
    tiling = re.search(r"\btil(?:ed|ing|es?)\b", note, re.IGNORECASE)
    # "is there a way to enable tiled vae decode?": tiling asked for, not on yet
    tiling_asked = tiling and re.search(r"\b(?:enable|turn on|use|force|switch to|try)\b[^.;?]{0,30}\btil(?:ed|ing)\b[^.;]{0,60}\?|"
                                        r"\b(?:is there|how (?:do|can|to))\b[^.;?]{0,40}\btil(?:ed|ing)\b", note, re.IGNORECASE)
    if tiling_asked:
        yield Vote("input_size_too_large", 0.55, f'It failed at the VAE decode ("{decode.group(0)}"), untiled: the decoder\'s activations at '
                   "full output resolution (every frame of a video) are what tiled or sliced decoding bounds (enable_vae_tiling).")
        yield Vote("attention_quadratic", -0.2, "The denoising steps, where the pipeline's attention runs, had already finished.")
        return
    if (n.requested and n.capacity and n.requested > 0.1 * n.capacity) or tiling:
        return  # one large activation, or a decoder already tiled: the decode's own size is the story (rule large_inputs)
    yield Vote("model_too_large", 0.45, f'It failed at the VAE decode ("{decode.group(0)}"), with every component of the pipeline still on '
               "the GPU: offload the finished ones (enable_model_cpu_offload) or move the VAE decode to its own device.")
    yield Vote("input_size_too_large", 0.3, "The decoder's activations are at full output resolution: vae tiling / slicing "
               "(enable_vae_tiling) bounds them.")
    yield Vote("attention_quadratic", -0.2, "The denoising steps, where the pipeline's attention runs, had already finished.")


@rule
def a_variant_of_an_implementation(data: RuleInput) -> Iterator[Vote]:
    """The same inputs and model fit with the original implementation but not with a variant of it
    (a fork, a "fast" or optimized version, a wrapper): the extra memory is the variant's."""
    signals = data.signals
    if not signals.original_fits:
        return
    if signals.accumulation_named:
        # The variant is the optimizer wrapped to accumulate: its extra memory is its buffers, one the
        # size of each weight (Keras/TF wrappers, JAX's accumulate steps), not a bug.
        yield Vote("optimizer_state", 0.6, f'Gradient accumulation was added to a run that fit ("{signals.evidence["accumulation_named"]}"): '
                   "an accumulating optimizer keeps a buffer as large as the weights beside its moments; accumulate into the "
                   "gradients the framework already keeps (backward several times, step once), or use a lighter optimizer.")
        yield Vote("batch_too_large", -0.3, "A smaller batch with accumulation fails where a larger one without it fit.")
        return
    yield Vote("framework_bug", 0.65, f'The original implementation fits the same work ("{signals.evidence["original_fits"]}"): '
               "the variant that fails adds the memory (its caching, compiled kernels or batching); report it there, or use the original.")
    for cause in ("input_size_too_large", "batch_too_large"):
        yield Vote(cause, -0.25, "The same inputs and batch fit with the original implementation.")
    yield Vote("model_too_large", -0.3, "A variant of the same model fits, so its weights are not what the card lacks.")


@rule
def failed_while_constructing(data: RuleInput) -> Iterator[Vote]:
    """An OOM raised inside a constructor, before any input ran: the object was placing its weights
    (an inference engine's model, a module created on the GPU)."""
    if data.signals.constructing:
        yield Vote("model_too_large", 0.4, f'It failed while an object was being constructed ({data.signals.evidence["constructing"]}), '
                   "before any input ran: the weights it places do not fit what is free. Use a smaller model or a lower-precision "
                   "compute type, or free the GPU.")


@rule
def weights_said_to_fill_the_gpus(data: RuleInput) -> Iterator[Vote]:
    """Placement that fills each GPU with weights up to its capacity (device_map="auto" without
    max_memory) leaves nothing for the activations of even a short input."""
    if data.signals.weights_fill_gpus:
        yield Vote("model_too_large", 0.6, f'The weights fill the GPUs ("{data.signals.evidence["weights_fill_gpus"]}"): leave room '
                   "for activations (max_memory per GPU below its capacity, more GPUs, or quantized weights).")


@rule
def a_tools_own_memory_cap(data: RuleInput) -> Iterator[Vote]:
    """A tool that caps the GPU memory it will use (a fraction of the card, a per-GPU maximum in its
    loader) can leave less than the model needs on a card that would hold it."""
    signals = data.signals
    if not signals.tool_memory_cap:
        return
    yield Vote("framework_bug", 0.6, f'The tool caps the memory it uses ("{signals.evidence["tool_memory_cap"]}"): its limit, not '
               "the card, is what the model does not fit; raise the cap (or pass the tool's max-memory option per GPU).")
    yield Vote("model_too_large", -0.2, "The card itself holds more than the cap lets the tool use.")


@rule
def a_tools_own_estimate_is_wrong(data: RuleInput) -> Iterator[Vote]:
    """Tools that decide themselves what goes on the GPU (llama.cpp front ends choosing how many
    layers to offload, servers sizing their cache) plan from an estimate; one that leaves out a part
    (the context's KV cache, the compute buffers) overfills a card that would hold a smaller plan."""
    signals = data.signals
    if signals.tool_misestimates:
        yield Vote("framework_bug", 0.75, f'The tool\'s own plan of what fits is said to be wrong ("{signals.evidence["tool_misestimates"]}"): '
                   "upgrade it (such estimates get fixed), or set the offload / memory budget yourself with headroom.")


@rule
def offload_not_applied(data: RuleInput) -> Iterator[Vote]:
    """With a pipeline's CPU offload on, weights go to the GPU one component at a time as each runs:
    running out while the pipeline is still being built means something was placed on the GPU
    regardless (a constructor that moves its encoders or VAE to the device, a flag the version
    ignores), not that the run needs more memory than the card."""
    signals = data.signals
    if not signals.pipeline_offload or signals.phase in ("training", "optimizer_setup"):
        return
    if not (signals.while_building or signals.phase == "loading"):
        return
    yield Vote("framework_bug", 0.55, f'CPU offload was asked for ("{signals.evidence["pipeline_offload"]}"), yet memory ran out '
               "while the model was being built: a component went to the GPU regardless. Check the version's handling of the "
               "flag (upgrade), or move that component to the CPU yourself.")
    yield Vote("model_too_large", 0.2, "Or a single component is larger than the card even alone.")


@rule
def failing_tensor_dimensions(data: RuleInput) -> Iterator[Vote]:
    """The failing tensor's own shape (TensorFlow and XLA print it): a batch dimension of one cannot
    be made smaller, and an image-like tensor with sides in the thousands is the resolution."""
    error = data.context.error
    shape = error.tensor_shape if error else None
    if not shape or len(shape) < 3:
        return
    # NHWC or NCHW: the two largest of the three trailing dimensions are the sides of an image
    # (unless the op is attention: then they are its N x N score matrix, rule attention_op_in_the_message).
    attention = bool(error.operation and shape[-1] == shape[-2] and re.search(r"attention|attn|multi_?head|dot_product",
                                                                              error.operation, re.IGNORECASE))
    sides = sorted(shape[1:], reverse=True)[:2] if len(shape) == 4 and not attention else []
    large_sides = bool(sides) and min(sides) >= 1000
    # NDHWC or NCDHW: the three largest trailing dimensions of a 5-D activation are a volume's sides;
    # from about 128³ voxels a volume's activations dwarf any batch of them
    volume = sorted(shape[1:], reverse=True)[:3] if len(shape) == 5 else []
    if volume and volume[0] * volume[1] * volume[2] >= 2**21:
        large_sides = True
        sides = [volume[1], volume[0]]
    if shape[0] == 1:
        yield Vote("batch_too_large", -0.4, f"The failing tensor {shape} holds a batch of one: there is no smaller batch.")
        if large_sides or max(shape[1:]) >= 8192:
            yield Vote("input_size_too_large", 0.6, f"The failing tensor {shape} is one input, and it is large: its size "
                       "is the input's resolution or length (downscale, tile or crop it).")
    elif large_sides:
        yield Vote("input_size_too_large", 0.45, f"The failing tensor {shape} has sides of {sides[1]:,} and {sides[0]:,}: "
                   "activations of a full-resolution image.")


@rule
def stated_batch(data: RuleInput) -> Iterator[Vote]:
    error, signals = data.context.error, data.signals
    shape = error.tensor_shape if error else None
    said = signals.evidence.get("batch_size", "the note")
    where = f"the command line ({said.split(': ', 1)[-1][:80]})" if said.startswith("the command line") else "the note"
    if signals.smaller_batch_fits and not signals.growth:
        yield Vote("batch_too_large", 0.7, f'A smaller batch fits where this one fails ("{signals.evidence["smaller_batch_fits"]}"): '
                   "the activations of the larger batch are what does not fit; use the largest batch that fits, with "
                   "gradient accumulation for the effective batch you want.")
        for cause in ("cudnn_or_workspace", "fragmentation"):
            yield Vote(cause, -0.3, "The same setup fits at the smaller batch: what changed between the two runs is the batch.")
    if signals.larger_batch_fails_sooner and not signals.batch_no_help:
        yield Vote("batch_too_large", 0.55, f'A larger batch fails at once where a smaller one runs a while first '
                   f'("{signals.evidence["larger_batch_fails_sooner"]}"): the batch sets every step\'s peak, and the later failure '
                   "is a step whose inputs are larger than the first ones (a longer clip or text, more objects); a leak would "
                   "not stop the larger batch before its first step. Use a batch below both, or cap the input length.")
        for cause in ("graph_retained", "reference_leak"):
            yield Vote(cause, -0.3, "How soon it fails follows the batch: the first step of the larger batch already does not fit.")
    if shape and signals.batch_size and shape[0] == signals.batch_size and signals.batch_size > 1:
        yield Vote("batch_too_large", 0.75, f"The failing tensor {shape} starts with the batch size "
                   f"({signals.batch_size}) from {where}.")
    elif signals.batch_size and signals.batch_size > 1 and not signals.batch_no_help and not signals.stated_batch_fits:
        # Memory that grew step after step is no batch too large from the start: the batch is a
        # weaker lead then.
        yield Vote("batch_too_large", 0.2 if signals.growth else 0.45 if signals.batch_size >= 16 else 0.3,
                   f"The batch size is {signals.batch_size}, from {where}.")
    elif signals.batch_size == 1 and not (signals.batch_no_help or signals.stated_batch_fits or signals.stated_batch_worked
                                                                     or signals.smaller_batch_fits):
        # The failing run's batch is already one sample: there is no smaller batch to fall back to. After
        # steps or epochs that went through at that batch, the batch is ruled out; failing at once it may
        # still be a buffer sized for a larger maximum batch than the one passed (a benchmark's max_batch_size).
        ran_first = bool(signals.later_epoch_training or signals.growth)
        yield Vote("batch_too_large", -0.8 if ran_first else -0.4, f"The batch size is already 1 (from {where}): there is no smaller batch"
                   + (", and steps at that batch went through first." if ran_first else "."))
    if signals.whole_set_one_batch and not signals.batch_no_help:
        yield Vote("batch_too_large", 0.55, f'Every item goes through in one batch ("{signals.evidence["whole_set_one_batch"]}"): the '
                   "batch is the whole set, whatever its size; split it into mini-batches and concatenate the results.")
    if signals.batch_no_help:
        yield Vote("batch_too_large", -0.6, f'A smaller batch did not help ("{signals.evidence["batch_no_help"]}").')
        for cause in ("missing_no_grad", "reference_leak", "graph_retained"):
            yield Vote(cause, 0.3, "Memory that a smaller batch cannot fix is memory kept from earlier batches.")
        n = data.numbers
        whole_device = bool(n.requested and n.capacity and n.requested >= 0.9 * n.capacity)
        if not signals.growth and not whole_device and signals.phase not in ("training", "optimizer_setup", "loading"):
            # Nothing grew and nothing trains: a single input is already too large for what is left.
            yield Vote("input_size_too_large", 0.4, "Without growth, memory a smaller batch cannot fix is one input's own size "
                       "(its length, resolution or number of prompts).")
        elif not signals.growth and not whole_device and signals.phase == "training":
            # In training the model's states take their share too, but with no growth said, what a
            # smaller batch leaves is still each sample's activations: its resolution or length.
            yield Vote("input_size_too_large", 0.3, "With no growth said, memory a smaller batch cannot fix in training is each "
                       "sample's own size (resolution, length) or the model's states.")


@rule
def tiled_and_still_too_large(data: RuleInput) -> Iterator[Vote]:
    """A run that already processes its input one tile at a time holds one tile's activations (with
    the overlap around it) at its peak: when that still does not fit, the tile is too large, and a
    smaller tile (or a lower output scale) is the knob, not the batch."""
    signals = data.signals
    if not signals.tiling_in_use or signals.switch_no_effect or signals.tiled_input or signals.growth:
        return  # a tile size that changes nothing, or tiles batched together, is another mechanism
    yield Vote("input_size_too_large", 0.45, f'The run already works in tiles ("{signals.evidence["tiling_in_use"]}") and '
               "still runs out: one tile's activations, with its overlap, set the peak; use a smaller tile.")


@rule
def replay_memory_on_the_device(data: RuleInput) -> Iterator[Vote]:
    """A reinforcement-learning agent stores each transition (observation, action, reward, next
    observation) in a replay memory. Stored as GPU tensors (the observation moved to the device
    before it is stored), that memory grows with every step of the environment until the buffer's
    capacity, far past what one update needs: keep it on the CPU (frames as uint8) and move only the
    sampled batch to the GPU. Language-model RL (PPO/RLHF) keeps no such memory."""
    signals = data.signals
    if not signals.experience_replay or "llm" in signals.domains or signals.phase in ("evaluation", "generation", "loading"):
        return
    if signals.kept_with_graph:
        return  # what is stored carries its autograd graph: that rule (a retained graph) says what grows
    weight = 0.55 if signals.growth else 0.4
    yield Vote("reference_leak", weight, f'A reinforcement-learning agent ("{signals.evidence["experience_replay"]}") keeps every '
               "transition in its replay memory: stored as GPU tensors it grows each step until the buffer is full; keep it on "
               "the CPU and move only the sampled batch to the GPU.")


@rule
def tiles_of_one_input(data: RuleInput) -> Iterator[Vote]:
    """An input cut into fixed-size tiles (patches, windows) that go through the network together:
    each tile's activations stay the same, the number of tiles grows with the input's area, so a
    larger input is a larger batch."""
    signals = data.signals
    if signals.sliding_window and signals.long_input and not signals.switch_no_effect:
        # A sliding-window inferer runs its windows in small batches already, but stitches every
        # window's output into one buffer the size of the whole input, kept on the device.
        yield Vote("input_size_too_large", 0.4, f'The input is large ("{signals.evidence["long_input"]}") and inferred in sliding windows: '
                   "the windows run a few at a time, but their outputs are stitched into one buffer (classes x the whole input) on the GPU; "
                   "keep that buffer on the CPU (MONAI's device='cpu') or infer a downsampled or cropped input.")
        yield Vote("batch_too_large", 0.3, "Fewer windows per batch (sw_batch_size) lower the network's share.")
    elif signals.tiled_input and not signals.switch_no_effect:
        yield Vote("batch_too_large", 0.55, f'The input is cut into tiles ("{signals.evidence["tiled_input"]}"): when they '
                   "go through the network at once, a larger input is a larger batch of tiles; run them in mini-batches.")
        yield Vote("input_size_too_large", -0.3, "Each tile has the same size whatever the input's, so the input's "
                   "resolution is not what grows the activations.")


@rule
def pair_representation_models(data: RuleInput) -> Iterator[Vote]:
    """Protein structure models (AlphaFold, ESMFold, OpenFold) keep an N x N pair representation and
    run triangular attention over it: memory grows with the square, and attention with the cube, of
    the residue count; low-memory attention and chunking are the levers before a larger card."""
    signals = data.signals
    if signals.pair_representation_model:
        yield Vote("attention_quadratic", 0.55, f'A structure model with a pair representation ("{signals.evidence["pair_representation_model"]}"): '
                   "its triangular attention grows with the cube of the length; enable its low-memory attention or chunking.")
        yield Vote("input_size_too_large", 0.35, "The pair representation alone grows with the square of the residue count.")


@rule
def whole_graph_at_once(data: RuleInput) -> Iterator[Vote]:
    """A graph network trained on the whole graph at once (full-batch, or one big graph that a
    loader can only hand over whole): every layer's activations are nodes x features and the
    messages edges x features, which no batch size divides. A fully connected graph is the same in
    another form: its edges are the node count squared."""
    signals = data.signals
    if signals.whole_graph:
        # nodes x features is linear in the graph; a dense attention's scores are nodes², the largest term
        # (named in the note, or the failing line builds a tensor over every pair of nodes)
        dense_attention = signals.naive_attention or innermost_site(data.context) == "attention_quadratic"
        yield Vote("input_size_too_large", 0.3 if dense_attention else 0.6, f'The whole graph goes through at once ("{signals.evidence["whole_graph"]}"): '
                   "activations scale with its nodes and edges; sample neighbourhoods or clusters (NeighborLoader, "
                   "ClusterGCN) or use sparse, memory-efficient aggregation.")
        yield Vote("batch_too_large", -0.3, "A batch size does not bound one graph's nodes and edges.")
        if dense_attention:
            yield Vote("attention_quadratic", 0.3, "Over a whole graph, an attention that scores every pair of nodes takes "
                       "nodes² memory per head, far above the nodes x features of every other layer; use the sparse, per-edge form.")
    if signals.dense_graph:
        yield Vote("input_size_too_large", 0.55, f'The graph joins every pair of nodes ("{signals.evidence["dense_graph"]}"): '
                   "edges and messages grow with the square of the node count; connect only neighbours within a "
                   "distance cutoff or k nearest, or split large graphs.")
        yield Vote("batch_too_large", -0.2, "One dense graph's edges grow with its nodes squared, whatever the batch size.")


@rule
def teacher_beside_the_student(data: RuleInput) -> Iterator[Vote]:
    """Distillation runs a teacher, usually the larger model, beside the student: its weights (and
    its activations for every batch) sit on the card on top of everything training the student
    needs. Outputs saved once ahead of time, or a teacher on another device or quantized, take
    that off."""
    signals = data.signals
    if signals.teacher_resident and signals.phase in ("training", "unknown", "loading"):
        note = data.context.note or ""
        loaded = re.search(r"\bload\w*\b[^.;]{0,30}\bteacher\b|\bteacher\b[^.;]{0,30}\bload", note, re.IGNORECASE)
        # the teacher run beside the student: "the teacher's logits computed on the fly", "on the same GPU"
        beside = loaded or re.search(r"\bteacher\W{0,3}s? (?:logits|outputs|predictions|forward|soft labels)\b[^.;]{0,40}"
                                     r"\b(?:on the fly|online|every (?:step|batch|iteration))\b|\b(?:on|in) the same (?:gpu|card|device)\b", note, re.IGNORECASE)
        # Distillation alone says nothing of the teacher's size (a BERT teacher is small): a
        # billion-parameter model named, or the teacher said to be loaded and run beside the student, does.
        large = (signals.param_count or 0) >= 1e9
        if not (large or beside):
            return
        yield Vote("model_too_large", 0.5 if large and beside else 0.45, f'A distillation teacher is held on the GPU ("{signals.evidence["teacher_resident"]}"): '
                   "its weights come on top of the student's weights, gradients and optimizer states; precompute the "
                   "teacher's outputs once and train without it, or put it on another GPU or quantize it.")
        if loaded:
            # the teacher is a second model that stays, not a transient copy of a checkpoint
            yield Vote("checkpoint_loading", -0.3, "What is loaded is a second model that stays resident, not a copy made while loading.")


@rule
def card_smaller_than_the_tool(data: RuleInput) -> Iterator[Vote]:
    """A card of 4 GB or less keeps a few hundred MB for the CUDA context and the framework; what is
    left holds little more than the weights of a current model (a separation, detection or speech
    model of a few hundred million parameters in fp32 with its largest activations). Running a
    published tool as it ships, without training, the card is what is short: a smaller variant,
    half precision, or the CPU."""
    signals, capacity = data.signals, data.numbers.capacity
    if not capacity or capacity > 4.3 * 2**30 or signals.phase in ("training", "optimizer_setup", "data_loading"):
        return
    if signals.other_process_hint or signals.growth or signals.host_only:
        return
    # (at 4 GB a batch or an input setting is as likely the lever; at 2 GB the weights are)
    yield Vote("model_too_large", 0.45 if capacity <= 2.5 * 2**30 else 0.2, f"The card has {format_size(int(capacity))} in all: after the CUDA context, "
               "little more than a current model's weights and its largest activations fit; use a smaller variant, "
               "half precision, or run it on the CPU.")


@rule
def visual_tokens_of_a_vision_language_model(data: RuleInput) -> Iterator[Vote]:
    """A vision-language model turns every image into visual tokens in proportion to its pixels
    (Qwen2-VL one per 28x28 patch, up to 16384 an image unless max_pixels says less; LLaVA-NeXT and
    InternVL tile it), so a document page at full resolution or a prompt with several images is a
    long sequence for the language model, in training and inference alike."""
    signals = data.signals
    note = data.context.note or ""
    if not signals.vision_language_model or signals.phase in ("loading", "data_loading"):
        return
    images_named = re.search(r"\bimages?\b|\bphotos?\b|\bpictures?\b|\bpages?\b|\bscreenshots?\b|\bdocuments?\b|\bocr\b|\bvideos?\b|\bframes?\b|\bpixels?\b",
                             note, re.IGNORECASE)
    # The dynamic-resolution families give an image as many tokens as its pixels allow (Qwen2-VL's
    # default max_pixels is 16384 tokens an image): their images are the input, named or not.
    dynamic = re.search(r"qwen[\d.]*-?vl|minicpm-?v|internvl|llava-?(?:next|onevision)", signals.evidence["vision_language_model"], re.IGNORECASE)
    if not (images_named or dynamic):
        return
    numbers = data.numbers
    if numbers.requested and numbers.capacity and numbers.requested > numbers.capacity:
        return  # one tensor larger than the card over that sequence is attention's score matrix (rule sites)
    # (its inference entry points, generate() and pipelines, already run without gradients)
    weight = (0.55 if signals.phase in ("evaluation", "generation") else 0.5) if images_named else 0.45
    yield Vote("input_size_too_large", weight, f'A vision-language model ("{signals.evidence["vision_language_model"]}") turns each '
               "image into visual tokens in proportion to its pixels: high-resolution or many images make a long sequence; "
               "cap them (max_pixels / image size, fewer images per prompt) before anything else.")


@rule
def pairwise_matrix_named(data: RuleInput) -> Iterator[Vote]:
    """A similarity, distance or affinity matrix over every pair of pixels or points has
    positions² entries per image: it grows with the square of the resolution (or point count),
    and is what pooling or chunking the positions shrinks."""
    signals = data.signals
    if signals.pairwise_said and not signals.attention_said:
        yield Vote("input_size_too_large", 0.45, f'A matrix over every pair of positions ("{signals.evidence["pairwise_said"]}"): '
                   "positions² entries per sample, the square of the resolution or point count; pool or subsample the "
                   "positions first, or compute it in chunks.")


@rule
def recipe_sized_for_larger_hardware(data: RuleInput) -> Iterator[Vote]:
    """A published recipe's batch (per GPU, or a total budget such as batch_bins) was sized for the
    cards it was run on: on fewer or smaller ones the same setting asks for their memory."""
    signals = data.signals
    if signals.recipe_on_smaller_hardware and signals.phase in ("training", "unknown") and not signals.batch_no_help:
        yield Vote("batch_too_large", 0.45, f'The recipe was sized for other hardware ("{signals.evidence["recipe_on_smaller_hardware"]}"): '
                   "its batch setting assumes their memory; scale it down by the ratio of memory and accumulate gradients to keep the effective batch.")


@rule
def batch_sized_in_another_unit(data: RuleInput) -> Iterator[Vote]:
    """Speech and translation recipes size a batch by its total seconds of audio or tokens rather
    than by a count of examples: that budget is the batch size."""
    signals = data.signals
    if signals.batch_budget and not signals.batch_no_help:
        yield Vote("batch_too_large", 0.45, f'The batch is set by a total budget ("{signals.evidence["batch_budget"]}"): '
                   "activations scale with it like with a batch size; lower it (and drop the longest examples if one alone is too large).")


@rule
def accumulating_and_still_out_of_memory(data: RuleInput) -> Iterator[Vote]:
    """Gradient accumulation already splits the effective batch into small steps; a run that still
    runs out at that step size is held by what does not shrink with the batch: the weights, their
    gradients, the optimizer's moments and any EMA copy."""
    signals = data.signals
    if not signals.accumulation_named or signals.original_fits or not signals.still_fails:
        return
    yield Vote("model_too_large", 0.4, f'The batch is already accumulated over small steps ("{signals.evidence["accumulation_named"]}") '
               "and it still does not fit: what stays is the model's states (weights, gradients, optimizer moments, EMA copies); "
               "use a smaller model, half precision, an 8-bit or lighter optimizer, or a larger card.")
    yield Vote("batch_too_large", -0.25, "The step's batch was already cut down by accumulating.")


@rule
def asks_about_smaller_inputs(data: RuleInput) -> Iterator[Vote]:
    """A note asking whether smaller inputs would fit says its inputs are large for what it runs; with
    nothing kept across batches and no batch to cut, one input's activations are the lead."""
    signals = data.signals
    if not signals.asks_smaller_input or signals.growth or signals.input_no_help:
        return
    yield Vote("input_size_too_large", 0.4, f'The note asks about smaller inputs ("{signals.evidence["asks_smaller_input"]}"): each '
               "input's activations grow with its pixels or length; resize, tile or crop it and try.")


@rule
def input_larger_than_what_fit(data: RuleInput) -> Iterator[Vote]:
    """An input larger than the ones that fit is what failed: the input made larger (an image size
    doubled, a higher resolution, a longer length), or one input longer than the rest arriving after
    many short ones. Activations are sized by the input (four times for a doubled side, attention by
    the square of the length); the steps before were waiting for it, not accumulating anything."""
    signals = data.signals
    if signals.input_no_help:
        return
    if signals.input_raised:
        yield Vote("input_size_too_large", 0.65, f'A larger input is what made it fail ("{signals.evidence["input_raised"]}"): activations '
                   "grow with the pixels (four times for a doubled side) or the tokens; keep the size that fit, or tile the input.")
    elif signals.longer_item_at_failure:
        yield Vote("input_size_too_large", 0.65, f'It fails on an input longer than the rest ("{signals.evidence["longer_item_at_failure"]}"): '
                   "cap the length (truncate, or filter out inputs above a maximum), or bucket by length so the longest ones get a smaller batch.")
    else:
        return
    for cause in ("reference_leak", "graph_retained"):
        yield Vote(cause, -0.3 if signals.longer_item_at_failure and not signals.input_raised else -0.25,
                   "What changed between the inputs that fit and the one that fails is its size; nothing said accumulates.")


@rule
def stated_requirement_above_the_card(data: RuleInput) -> Iterator[Vote]:
    """The note gives what the model is said to need ("recommends 12 GB or more") and the card holds
    less: the model (and what its use needs beside it) is larger than the card, before any batch."""
    signals, n = data.signals, data.numbers
    card = signals.note_gpu_capacity or (int(n.total / 2**30 * 10**9) if n.total else None)  # a person's GB against a card's
    if not (signals.stated_requirement and card) or card >= 0.97 * signals.stated_requirement:
        return
    yield Vote("model_too_large", 0.7, f'The model is said to need more than this card holds ("{signals.evidence["stated_requirement"]}", '
               f"against about {card / 10**9:.0f} GB): use its smaller variant, a quantized or half-precision copy, offload, or a larger card.")
    yield Vote("batch_too_large", -0.2, "What the model needs by itself exceeds the card before any batch.")


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
def a_smaller_input_fits(data: RuleInput) -> Iterator[Vote]:
    """The same run fits once its inputs are smaller (a size knob lowered, inputs cropped, cut or
    filtered by length): the activations that do not fit are the input's size."""
    signals = data.signals
    if signals.smaller_input_fits and not signals.input_no_help:
        yield Vote("input_size_too_large", 0.6, f'A smaller input fits ("{signals.evidence["smaller_input_fits"]}"): the '
                   "activations grow with the input's length or resolution; cap it (crop, tile, filter or split long inputs).")


@rule
def a_smaller_width_fits(data: RuleInput) -> Iterator[Vote]:
    """The same model fits at a smaller width (hidden or embedding dimension): what does not fit is
    the model itself, whose weights (and an embedding table per item) grow with that width."""
    signals = data.signals
    if not signals.smaller_width_fits:
        return
    yield Vote("model_too_large", 0.55, f'A narrower model fits ("{signals.evidence["smaller_width_fits"]}"): the weights and their '
               "training states (an embedding row per item, matrices in the square of the width) are what the card lacks; keep "
               "the width and shard, offload or keep large tables on the CPU.")
    yield Vote("batch_too_large", -0.2, "The batch was the same at both widths.")


@rule
def whole_dataset_on_the_device(data: RuleInput) -> Iterator[Vote]:
    """Gradient-boosted trees (XGBoost's gpu_hist, LightGBM, CatBoost) and GPU dataframes keep the
    whole training matrix on the device with its quantile sketches and per-node histograms, which
    grow with rows x features (x bins): there is no batch to shrink."""
    signals = data.signals
    if "tabular" not in signals.domains or signals.host_only:
        return
    yield Vote("input_size_too_large", 0.5, "Gradient-boosted trees and GPU dataframes hold the whole training matrix and its "
               "histograms on the GPU: memory grows with rows x features. Use fewer or sparser features, sample rows, fewer "
               "bins (max_bin), or external-memory / multi-GPU training.")
    yield Vote("batch_too_large", -0.4, "There is no batch: the whole dataset is on the device at once.")


@rule
def speech_inputs(data: RuleInput) -> Iterator[Vote]:
    """Speech corpora have a long tail of durations, and the longest utterance sets the peak: in
    training when no cap filters them, in validation where recordings are run whole."""
    signals = data.signals
    if "audio" not in signals.domains or signals.long_input or signals.host_only or signals.growth:
        return
    # (A training step that fails right after an evaluation is what the evaluation left: rule
    # training_after_an_evaluation.)
    if signals.phase == "training" and not (signals.batch_budget or signals.eval_between_training or signals.later_epoch_training):
        yield Vote("input_size_too_large", 0.3, "Speech corpora have a long tail of utterance durations: the longest one in a "
                   "batch sets the peak. Cap or filter the duration (or batch by total duration).")


@rule
def video_inputs(data: RuleInput) -> Iterator[Vote]:
    """A video model's activations grow with frames x height x width: a clip is a batch of frames
    before the batch size counts."""
    signals = data.signals
    if "video" not in signals.domains or signals.long_input or signals.host_only or signals.growth:
        return
    if signals.phase == "training" and not signals.batch_budget:
        yield Vote("input_size_too_large", 0.35, "Video activations grow with frames x height x width: fewer frames per clip or "
                   "a lower resolution shrink every layer's activations (the batch multiplies them).")


@rule
def attention_materialised(data: RuleInput) -> Iterator[Vote]:
    """Two kinds of evidence that the attention scores are materialised: the memory changes many-fold
    with and without a fused kernel (a naive path keeps heads x L x L scores, a fused one none), or it
    grows with the square of the length (activations and the KV cache grow linearly)."""
    signals = data.signals
    if signals.attention_kernel_decides:
        yield Vote("attention_quadratic", 0.75, f'The memory depends on the attention kernel ("{signals.evidence["attention_kernel_decides"]}"): '
                   "without the fused kernel the score matrix over every pair of positions is materialised; install it (or use "
                   "SDPA / xformers) for the card, or fall back to a memory-efficient attention.")
        yield Vote("model_too_large", -0.4, "The same weights fit with the fused kernel: what the naive path adds is the scores.")
    if signals.quadratic_in_length:
        yield Vote("attention_quadratic", 0.65, f'Memory grows with the square of the length ("{signals.evidence["quadratic_in_length"]}"): '
                   "only the attention scores do (activations and the KV cache grow linearly); use a fused kernel (flash / SDPA), "
                   "or process the prompt in chunks.")
        yield Vote("kv_cache_or_generation", -0.25, "A KV cache grows linearly with the tokens, not with their square.")


@rule
def gradient_accumulator_buffer(data: RuleInput) -> Iterator[Vote]:
    """In JAX and TensorFlow gradient accumulation keeps an accumulator the size of the parameters
    (optax.MultiSteps, a custom loop's running sum) beside the step's own gradients; PyTorch
    accumulates in .grad, which already exists, so there the step count adds nothing."""
    signals, error = data.signals, data.context.error
    if not signals.accumulation_adds_memory or not (error and error.framework in ("jax", "tensorflow")):
        return
    yield Vote("optimizer_state", 0.6, f'Accumulating gradients is what fails ("{signals.evidence["accumulation_adds_memory"]}"): the '
               "accumulator is one more array per parameter (in the optimizer state of optax.MultiSteps or a custom loop), as large "
               "as the gradients; shard it with the optimizer state, keep it in bf16, or fit the effective batch by a smaller "
               "micro-batch without accumulation.")


@rule
def context_window_of_an_inference_runtime(data: RuleInput) -> Iterator[Vote]:
    """An inference runtime (llama.cpp, Ollama, vLLM) reserves the KV cache for its whole context
    window when it starts, so a larger window fails at once even with a short prompt: the cache, not
    the prompt's activations, is what grew."""
    signals = data.signals
    if not signals.context_window_set or signals.phase == "training" or signals.host_only:
        return
    yield Vote("kv_cache_or_generation", 0.7, f'The note sets the context window ("{signals.evidence["context_window_set"]}"): '
               "the runtime reserves KV cache for the whole window up front, for every parallel slot; lower the window "
               "(num_ctx / -c / max_model_len), quantize the KV cache, or offload fewer layers.")
    if not signals.quadratic_in_length:
        # a smaller window that worked is a smaller reservation, not a shorter input
        yield Vote("input_size_too_large", -0.4 if signals.smaller_input_fits else -0.25,
                   "The window is reserved whatever the prompts' length: the cache is sized by the setting, not by the input.")
        yield Vote("attention_quadratic", -0.2, "These runtimes attend in chunks over the cache; the reservation, not a score matrix, is what grows.")


@rule
def long_sequences(data: RuleInput) -> Iterator[Vote]:
    signals = data.signals
    if signals.seq_len and signals.seq_len >= 8192 and not signals.domains & {"llm", "encoder"}:
        yield Vote("input_size_too_large", 0.45, f"A sequence length of {signals.seq_len} scales every activation.")
    if signals.seq_len and signals.seq_len >= 4096 and signals.domains & {"llm", "encoder"}:
        if signals.fused_attention:
            # a fused kernel never materialises the score matrix: what grows is every activation, linearly
            yield Vote("attention_quadratic", 0.15, f'At {signals.seq_len} tokens a naive attention matrix would be '
                       f'{signals.seq_len}² x heads per layer, but a fused kernel is named ("{signals.evidence["fused_attention"]}"), '
                       "which keeps none: check that it is really the one used.")
        else:
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
