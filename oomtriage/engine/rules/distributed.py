"""Rules on runs that share GPUs: one GPU holding more than its share, full copies per GPU or gathered on one rank, a trainer beside an inference engine."""

from __future__ import annotations

from typing import Iterator

from . import RuleInput, Vote, rule


@rule
def one_gpu_heavier(data: RuleInput) -> Iterator[Vote]:
    """Every GPU of a data-parallel job should hold about the same; one that holds more is doing
    the others' work too (DataParallel's scatter/gather on GPU 0, every rank's context or loaded
    tensors on cuda:0, the loss or metrics computed on one device)."""
    signals = data.signals
    multi = signals.distributed or signals.data_parallel or signals.several_gpus
    if signals.rank0_heavy and multi:
        yield Vote("distributed_replication", 0.65, f'One GPU holds more than the others ("{signals.evidence["rank0_heavy"]}"): '
                   "in a data-parallel job that is work or copies that belong to the other ranks landing on it.")
        yield Vote("other_process_or_device", -0.3, "The extra processes or memory on that GPU are the job's own ranks.")
    if signals.data_parallel and signals.gpu_count != 1:
        yield Vote("distributed_replication", 0.45, "nn.DataParallel copies the model from GPU 0 every step and gathers all "
                   "outputs (and computes the loss) there, so GPU 0 needs more than the others; DistributedDataParallel "
                   "balances the load.")


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
def trainer_beside_an_inference_engine(data: RuleInput) -> Iterator[Vote]:
    """RL fine-tuning (PPO, GRPO) alternates rollouts in an inference engine and training steps on
    the same GPUs: the engine's reservation is memory the trainer cannot use, and offloading and
    reloading between the phases strands cached blocks of the wrong sizes."""
    signals = data.signals
    if signals.colocated and (signals.serving_engine or signals.phase in ("training", "unknown", "generation")):
        said = signals.evidence["colocated"]
        yield Vote("fragmentation", 0.4, f'Training and rollouts share the GPUs ("{said}"): offloading and reloading '
                   "between the phases leaves reserved-but-unallocated memory that large reloads cannot use "
                   "(expandable segments, where the engine allows them).")
        yield Vote("other_process_or_device", 0.35, "The inference engine keeps its own reservation (its memory "
                   "utilisation setting) on the same device while the trainer runs.")
