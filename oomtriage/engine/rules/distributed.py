"""Rules on runs that share GPUs: one GPU holding more than its share, full copies per GPU or gathered on one rank, a trainer beside an inference engine."""

from __future__ import annotations

import re

from typing import Iterator

from oomtriage.sizes import format_size

from . import RuleInput, Vote, rule
from .sites import WHOLE_MODEL_MOVE
from ..signals import meaningful_frames


@rule
def one_gpu_heavier(data: RuleInput) -> Iterator[Vote]:
    """Every GPU of a data-parallel job should hold about the same; one that holds more is doing
    the others' work too (DataParallel's scatter/gather on GPU 0, every rank's context or loaded
    tensors on cuda:0, the loss or metrics computed on one device)."""
    signals = data.signals
    multi = signals.distributed or signals.data_parallel or signals.several_gpus
    if signals.separate_programs and not (signals.parallel_job_named or signals.data_parallel) and (signals.rank0_heavy or signals.ranks_on_gpu0):
        # Programs started apart share no replica: what each leaves on the first GPU is its CUDA
        # context (a few hundred MB) or tensors made on the default device before it chose its own.
        said = signals.evidence.get("rank0_heavy") or signals.evidence["ranks_on_gpu0"]
        yield Vote("other_process_or_device", 0.65, f'Separate programs, each given its own GPU, still use the first one ("{said}"): '
                   "each opened its CUDA context (or made tensors) on the default device, cuda:0, before choosing its own; start "
                   "each with CUDA_VISIBLE_DEVICES=N, or call torch.cuda.set_device(N) before anything touches CUDA.")
        yield Vote("distributed_replication", -0.3, "They are separate programs, not one job's ranks: there is no replica to shard.")
        return
    if signals.placed_on_gpu0 and multi and not signals.ranks_on_gpu0:
        # The weights themselves, not a context: every process built or moved its model on the default
        # device (model.cuda(), .to("cuda"), a library's own placement) before the launcher's device
        # was chosen, so the first GPU holds one copy per process.
        yield Vote("other_process_or_device", 0.7, f'Each process puts its tensors on the first GPU ("{signals.evidence["placed_on_gpu0"]}"): '
                   "they land on the default device, cuda:0, instead of the process's own; call torch.cuda.set_device(local_rank) "
                   "first thing, and place the model with .to(f'cuda:{local_rank}') (or the library's device argument).")
        yield Vote("distributed_replication", 0.3, "The first GPU holds the other processes' copies beside its own.")
    if signals.ranks_on_gpu0 and (multi or signals.rank0_heavy):
        # Each rank's own process on the first GPU: its CUDA context, or tensors it restored or created
        # there, because it had not chosen its device (torch.cuda.set_device(local_rank)) or loaded a
        # checkpoint without map_location (torch.load restores onto the device it was saved from).
        said = signals.evidence["ranks_on_gpu0"]
        loads = signals.loads_saved_state
        if loads:
            yield Vote("checkpoint_loading", 0.7, f'The other ranks hold memory on the first GPU ("{said}") and each loads saved state '
                       f'("{signals.evidence["loads_saved_state"]}"): torch.load restores tensors onto the GPU they were saved from; pass '
                       "map_location to the rank's own device (or the CPU).")
        yield Vote("distributed_replication", 0.55 if loads else 0.65, f'The other ranks have processes or memory on the first GPU '
                   f'("{said}"): each created its CUDA context or tensors on cuda:0; call torch.cuda.set_device(local_rank) first '
                   "thing in each process.")
        yield Vote("other_process_or_device", 0.3, "Each of those processes placed its context or tensors on a device that is not its own.")
    elif signals.rank0_heavy and multi and not signals.placed_on_gpu0:
        yield Vote("distributed_replication", 0.65, f'One GPU holds more than the others ("{signals.evidence["rank0_heavy"]}"): '
                   "in a data-parallel job that is work or copies that belong to the other ranks landing on it.")
        yield Vote("other_process_or_device", -0.3, "The extra processes or memory on that GPU are the job's own ranks.")
    if signals.data_parallel and signals.gpu_count != 1:
        yield Vote("distributed_replication", 0.45, "nn.DataParallel copies the model from GPU 0 every step and gathers all "
                   "outputs (and computes the loss) there, so GPU 0 needs more than the others; DistributedDataParallel "
                   "balances the load.")


@rule
def resumed_on_several_gpus(data: RuleInput) -> Iterator[Vote]:
    """A run started from saved state that fits on one GPU and fails only with several: every rank
    torch.load's the same checkpoint, and without map_location each copy is restored onto the GPU
    it was saved from (cuda:0), so the first GPU holds one copy per rank beside its own replica."""
    signals = data.signals
    if signals.phase == "loading" or not (signals.only_multi_gpu and signals.loads_saved_state):
        return  # (failing while loading, the loading rule weighs the same evidence)
    yield Vote("checkpoint_loading", 0.65, f'It loads saved state ("{signals.evidence["loads_saved_state"]}") and fails only on '
               f'several GPUs ("{signals.evidence["only_multi_gpu"]}"): every rank\'s torch.load restores the checkpoint onto the device it was '
               "saved from, cuda:0; load with map_location='cpu' (or the rank's own device) and free the loaded dict.")
    yield Vote("distributed_replication", 0.4, "The extra memory on the first GPU belongs to the other ranks' copies.")


@rule
def dispatch_undone(data: RuleInput) -> Iterator[Vote]:
    """from_pretrained(..., device_map="auto") spreads the layers over the GPUs (and the CPU); a
    `.cuda()` or `.to("cuda")` on the result moves every one of them back onto the current device, so
    the first GPU must hold the whole model the split was there to avoid."""
    if not data.signals.dispatch_undone:
        return
    yield Vote("other_process_or_device", 0.85, f'The model is split across devices by device_map and then moved whole to one '
               f'("{data.signals.evidence["dispatch_undone"]}"): the .cuda() / .to() gathers every layer on cuda:0; drop it '
               "and let device_map place the layers (move only the inputs to model.device).")
    yield Vote("model_too_large", -0.4, "Split as device_map placed it, the model fits the GPUs together; one GPU is full because the move gathered it.")
    yield Vote("distributed_replication", -0.4, "There is one model in one process, gathered by the move, not a replica per GPU.")
    yield Vote("checkpoint_loading", -0.3, "The loader placed the weights as asked; the move after it is what put them all on one GPU.")


@rule
def restored_onto_saved_gpu(data: RuleInput) -> Iterator[Vote]:
    """torch.load puts each saved tensor back on the device it was saved from (cuda:0 for most
    checkpoints) unless map_location says otherwise: the restored copy lands on that GPU beside
    whatever the program already holds there, not where the program meant it to go."""
    signals = data.signals
    if not (signals.restored_onto_saved_gpu and (signals.loads_saved_state or signals.phase == "loading")):
        return
    yield Vote("checkpoint_loading", 0.7, f'The saved weights are restored onto the GPU they were saved from '
               f'("{signals.evidence["restored_onto_saved_gpu"]}"): torch.load(path, map_location="cpu") (or the chosen '
               "device), then load_state_dict, and drop the loaded dict.")


@rule
def another_gpu_was_meant(data: RuleInput) -> Iterator[Vote]:
    """The note wants a GPU other than the one that ran out: the program never chose its device, so
    its tensors went to the default one (cuda:0, or the first card the runtime lists), which is
    smaller than the card meant or already holds someone else's work."""
    signals = data.signals
    if not signals.other_gpu_wanted:
        return
    yield Vote("other_process_or_device", 0.65, f'The note wants a different GPU from the one that ran out '
               f'("{signals.evidence["other_gpu_wanted"]}"): the tensors went to the default device; select the card with '
               "CUDA_VISIBLE_DEVICES=N, or torch.device('cuda:N') / torch.cuda.set_device(N) before anything touches CUDA.")


@rule
def gathered_for_saving(data: RuleInput) -> Iterator[Vote]:
    """Saving a sharded model (FSDP, ZeRO-3) gathers the full state dict, by default on one rank's
    GPU: the whole model in one place, which is what sharding was avoiding."""
    signals = data.signals
    # Only full sharding gathers anything: under DDP or ZeRO-1/2 every rank already holds the weights.
    if signals.saving and (signals.fsdp or signals.zero_stage == 3):
        yield Vote("distributed_replication", 0.6, f'It failed while saving ("{signals.evidence["saving"]}") in a sharded or '
                   "multi-GPU run: the full state dict is gathered on one rank's GPU (offload it to the CPU, rank 0 only, or "
                   "save sharded).")


@rule
def more_gpus_did_not_help(data: RuleInput) -> Iterator[Vote]:
    """Data parallelism splits the batch, not the model: each GPU still holds the whole model with
    its gradients and optimizer state, so adding GPUs leaves the per-GPU memory where it was."""
    signals = data.signals
    if signals.more_gpus_no_help:
        yield Vote("distributed_replication", 0.7, f'More GPUs did not lower the memory each one needs ("{signals.evidence["more_gpus_no_help"]}"): '
                   "every GPU holds a full replica of the model states; shard them (FSDP, ZeRO-3) instead.")


@rule
def sharding_not_in_place(data: RuleInput) -> Iterator[Vote]:
    """A multi-GPU recipe sized for ZeRO or FSDP run without it: each GPU then keeps the full
    weights, gradients and optimizer states the recipe meant to split."""
    signals = data.signals
    # (naming DeepSpeed, even to say it is absent, marks the run distributed: the GPU count decides)
    single = signals.gpu_count == 1 or re.search(r"\b(?:single|one|1) gpu\b|\bmy (?:only )?gpu\b", data.context.note or "", re.IGNORECASE)
    multi = (signals.gpu_count or 0) > 1 or (signals.distributed and not single)
    if signals.sharding_absent and multi and signals.phase in ("training", "optimizer_setup", "unknown"):
        yield Vote("distributed_replication", 0.55, f'The sharding is not in place ("{signals.evidence["sharding_absent"]}"): '
                   "without ZeRO/FSDP every GPU holds a full replica of the model states; install and enable it as the recipe expects.")


@rule
def replicated_training(data: RuleInput) -> Iterator[Vote]:
    """Full training of a language model on several GPUs without sharding: the replica of weights,
    gradients and Adam states on each GPU is the usual reason it does not fit."""
    signals = data.signals
    training = signals.phase in ("training", "optimizer_setup") or (signals.full_finetune and signals.phase == "unknown")
    multi = (signals.gpu_count or 0) > 1 or (signals.distributed and not signals.tpu)
    sharded = signals.fsdp or signals.zero_stage == 3
    if multi and training and not sharded and not signals.lora and "llm" in signals.domains and not signals.param_count:
        yield Vote("distributed_replication", 0.35, "Several GPUs train a language model without full sharding: each one "
                   "keeps all weights, gradients and optimizer states (16 bytes per parameter with Adam).")


@rule
def full_copy_per_gpu(data: RuleInput) -> Iterator[Vote]:
    """Data parallelism and ZeRO-1/2 keep every weight on every GPU (ZeRO-2 shards only gradients
    and optimizer states): weights alone that fill one GPU, but would fit once split over the job's
    GPUs, need ZeRO-3/FSDP (or a model split with device_map / tensor parallelism)."""
    signals, capacity = data.signals, data.numbers.capacity
    params, gpus = signals.param_count, signals.gpu_count or 1
    if not params or not capacity or gpus < 2 or signals.fsdp or signals.zero_stage == 3 or signals.splits_weights:
        return
    if signals.serving_engine or signals.phase in ("generation", "evaluation"):
        return  # inference engines place (and split) weights themselves
    if not (signals.distributed or signals.zero_stage or signals.phase in ("training", "optimizer_setup")):
        return
    per_weight = signals.weight_bytes or (2 if signals.low_precision or signals.zero_stage else 4)
    weights = per_weight * params
    full_training = signals.phase in ("training", "optimizer_setup") and not (signals.lora or signals.frozen)
    if full_training and 16 * params / gpus > 0.8 * capacity:
        return  # even sharded, full training's states do not fit: rule model_states says what to do then
    if weights > 0.8 * capacity and weights / gpus < 0.5 * capacity:
        how = f"ZeRO-{signals.zero_stage}" if signals.zero_stage else "data parallelism"
        yield Vote("distributed_replication", 0.7, f"With {how} each of the {gpus} GPUs holds all the weights "
                   f"({format_size(int(weights))} at {per_weight:g} B each) of {format_size(capacity)}; split over the GPUs "
                   f"(ZeRO-3, FSDP) they take {format_size(int(weights / gpus))} each.")


@rule
def whole_model_on_every_gpu(data: RuleInput) -> Iterator[Vote]:
    """A launcher that starts one process per GPU (torchrun, accelerate, a trainer's predict) makes
    each process load every weight onto its own GPU: the model is copied, not split, so a model the
    GPUs together would hold fails on each one. One process that splits it (device_map="auto",
    tensor parallelism, an inference server) or ZeRO-3 places each weight once."""
    signals, capacity = data.signals, data.numbers.capacity
    if not signals.copy_per_device or signals.ranks_on_gpu0 or signals.placed_on_gpu0:
        return  # (the other ranks' memory on the first GPU is rule one_gpu_heavier's)
    said = signals.evidence["copy_per_device"]
    params, gpus = signals.param_count, signals.gpu_count or 0
    whole = (signals.weight_bytes or 2) * params if params else None
    if whole and capacity and gpus > 1 and whole > 0.8 * capacity * gpus:
        return  # too large for all of the GPUs together: no placement fits it
    sizes = f" ({format_size(int(whole))} per copy, {format_size(int(whole / gpus))} per GPU if split over {gpus})" \
        if whole and gpus > 1 else ""
    yield Vote("distributed_replication", 0.75, f'Every GPU holds its own full copy of the model ("{said}"){sizes}: run one '
               "process that splits it (device_map=\"auto\", tensor parallelism, an inference server) or shard it with ZeRO-3.")


@rule
def whole_model_moved_under_sharding(data: RuleInput) -> Iterator[Vote]:
    """Full sharding (ZeRO-3, FSDP) only helps if the model never exists whole on one GPU: a model
    built normally and handed to the wrapper is first moved in full onto every rank's device; it has
    to be created partitioned (``deepspeed.zero.Init``, FSDP on the meta device or from CPU)."""
    signals = data.signals
    if not (signals.fsdp or signals.zero_stage == 3):
        return
    if signals.built_before_sharding:
        how = "FSDP" if signals.fsdp else "ZeRO-3"
        yield Vote("distributed_replication", 0.7, f'The model was built whole before {how} partitioned it '
                   f'("{signals.evidence["built_before_sharding"]}"): every rank holds a full copy until then; build it inside '
                   "deepspeed.zero.Init (or FSDP on the meta device or from the CPU) so each weight is created as a shard.")
        # (the whole copy lands before any optimizer state exists, and sharded the model fits)
        yield Vote("optimizer_state", -0.3, "The full copy fills each GPU before the optimizer's states are created.")
        yield Vote("model_too_large", -0.2, "Built as shards, the model is split over the ranks.")
        return
    frames = meaningful_frames(data.context)[:2]
    moved = next((frame for frame in frames if WHOLE_MODEL_MOVE.search(f"{frame.function or ''} {frame.code or ''}")), None)
    if moved:
        how = "FSDP" if signals.fsdp else "ZeRO-3"
        yield Vote("distributed_replication", 0.75, f"Under {how} the whole model was being moved onto one GPU "
                   f"(`{(moved.code or moved.function or '').strip()[:80]}`): every rank gets a full copy before anything "
                   "is sharded; create the model partitioned (deepspeed.zero.Init, FSDP from the meta device or CPU).")


@rule
def quantized_weights_under_zero3(data: RuleInput) -> Iterator[Vote]:
    """ZeRO-3 partitions parameters it can flatten; bitsandbytes' packed 4/8-bit weights are only
    sharded when stored in a float dtype (bnb_4bit_quant_storage), otherwise every rank loads the whole
    quantized model, which is what a large QLoRA run on small cards cannot hold."""
    signals, capacity = data.signals, data.numbers.capacity
    if signals.zero_stage != 3 or not signals.quantized_weights:
        return
    params, per_weight = signals.param_count, signals.weight_bytes or 0.5
    if params and capacity and per_weight * params < 0.5 * capacity:
        return  # the whole quantized model fits one GPU with room to spare
    whole = f" ({format_size(int(per_weight * params))} at {per_weight:g} B per weight)" if params else ""
    yield Vote("distributed_replication", 0.6, f"ZeRO-3 with a bitsandbytes-quantized model: unless the packed weights are "
               f"stored in a float dtype (bnb_4bit_quant_storage) every rank loads the whole quantized model{whole}; set the "
               "storage dtype, or shard with FSDP-QLoRA, or split the model with device_map.")


@rule
def trainer_beside_an_inference_engine(data: RuleInput) -> Iterator[Vote]:
    """RL fine-tuning (PPO, GRPO) alternates rollouts in an inference engine and training steps on
    the same GPUs: the engine's reservation is memory the trainer cannot use, and offloading and
    reloading between the phases strands cached blocks of the wrong sizes."""
    signals = data.signals
    if signals.colocated and (signals.serving_engine or signals.phase in ("training", "unknown", "generation")):
        said = signals.evidence["colocated"]
        if signals.rl_method_only and not signals.serving_engine:
            return  # an RL method named, no inference engine: the policy may generate its own rollouts
        if signals.engine_starting:
            # The engine failed as it started or woke up: its reservation (gpu_memory_utilization of the
            # whole card) is asked for on top of what the trainer still holds (rule serving_engine).
            yield Vote("fragmentation", 0.15, f'Training and rollouts share the GPUs ("{said}"): blocks the trainer '
                       "left cached can stand in the way of the engine's reservation.")
            return
        yield Vote("fragmentation", 0.55, f'Training and rollouts share the GPUs ("{said}"): offloading and reloading '
                   "between the phases leaves reserved-but-unallocated memory that large reloads cannot use "
                   "(expandable segments, where the engine allows them).")
        yield Vote("other_process_or_device", 0.35, "The inference engine keeps its own reservation (its memory "
                   "utilisation setting) on the same device while the trainer runs.")


@rule
def first_gpu_used_instead_of_the_one_chosen(data: RuleInput) -> Iterator[Vote]:
    """Another GPU was chosen, yet memory lands on GPU 0: a .cuda() or .to("cuda") without an index, a
    library's initialisation or torch.load without map_location uses the default device, which stays
    GPU 0 until torch.cuda.set_device (or CUDA_VISIBLE_DEVICES) says otherwise, often on a card that
    another job already fills."""
    signals = data.signals
    if not signals.gpu0_used_instead:
        return
    yield Vote("other_process_or_device", 0.75, f'Another GPU was chosen but memory lands on GPU 0 ("{signals.evidence["gpu0_used_instead"]}"): '
               "something uses the default device; set CUDA_VISIBLE_DEVICES=<n> (or torch.cuda.set_device(n)) before anything "
               "touches CUDA, and pass map_location to torch.load.")
    yield Vote("distributed_replication", -0.3, "One process on a device it did not choose, not a replica per rank.")
    yield Vote("model_too_large", -0.3, "The chosen GPU was not where the memory went.")

