"""Which fixes each cause gets. The fixes themselves (title, snippet, applier, numerics rule) live
in the catalog, ``oomtriage.fixkinds``: one module per kind the validator can apply, and
``fixkinds.advice`` for the rest. ``VALIDATABLE_KINDS`` is the catalog's: kinds with an applier."""

from __future__ import annotations

from oomtriage.fixkinds import VALIDATABLE_KINDS  # noqa: F401  (re-exported for the engine and the prompt)
from oomtriage.fixkinds.advice import (CHUNKED_LOSS, CUDNN, FREE_GPU, KV_CACHE, MAP_LOCATION, QUANTIZE, RANK_DEVICE, SHARD,
                                       SMALLER_MODEL, TF_GROWTH, TRT_WORKSPACE, UPGRADE, WORKERS)
from oomtriage.fixkinds.alloc_conf import ALLOC_CONF, JAX_ALLOCATOR
from oomtriage.fixkinds.backends import CUDA, Spelling, spell_fix
from oomtriage.fixkinds.batch_size import REDUCE_BATCH
from oomtriage.fixkinds.checkpointing import CHECKPOINTING
from oomtriage.fixkinds.detach_loss import DETACH_LOSS
from oomtriage.fixkinds.free_references import EVAL_ACCUMULATION, FREE_REFERENCES
from oomtriage.fixkinds.input_size import REDUCE_INPUT
from oomtriage.fixkinds.mixed_precision import HALF_WEIGHTS, MIXED_PRECISION
from oomtriage.fixkinds.no_grad import NO_GRAD_EVAL
from oomtriage.fixkinds.optimizer import OPTIMIZER_MEMORY
from oomtriage.fixkinds.sdpa import SDPA
from oomtriage.models import Fix

FIXES_BY_CAUSE: dict[str, list[Fix]] = {
    "batch_too_large": [REDUCE_BATCH, MIXED_PRECISION, CHECKPOINTING],
    "input_size_too_large": [REDUCE_INPUT, CHECKPOINTING, MIXED_PRECISION],
    "model_too_large": [QUANTIZE, SMALLER_MODEL, SHARD],
    "optimizer_state": [OPTIMIZER_MEMORY, SHARD],
    "missing_no_grad": [NO_GRAD_EVAL, REDUCE_BATCH],
    "graph_retained": [DETACH_LOSS, FREE_REFERENCES],
    "reference_leak": [FREE_REFERENCES, EVAL_ACCUMULATION],
    "fragmentation": [ALLOC_CONF, JAX_ALLOCATOR],
    "other_process_or_device": [FREE_GPU, TF_GROWTH, RANK_DEVICE],
    "full_precision": [HALF_WEIGHTS, MIXED_PRECISION],
    "large_logits": [CHUNKED_LOSS, REDUCE_BATCH],
    "attention_quadratic": [SDPA, REDUCE_INPUT],
    "kv_cache_or_generation": [KV_CACHE, QUANTIZE],
    "checkpoint_loading": [MAP_LOCATION, QUANTIZE],
    "dataloader_or_host": [WORKERS],
    "cudnn_or_workspace": [CUDNN, TRT_WORKSPACE, FREE_GPU],
    "distributed_replication": [SHARD, RANK_DEVICE],
    "framework_bug": [UPGRADE],
    "other": [REDUCE_BATCH],
}


def fixes_for(cause_id: str, *, framework: str = "pytorch", library: str | None = None,
              spelling: Spelling = CUDA) -> list[Fix]:
    """The cause's fixes for this framework and library, spelled for the card the message came from."""
    fixes = [fix.model_copy(deep=True) for fix in FIXES_BY_CAUSE.get(cause_id, [])]
    if cause_id == "fragmentation":
        wanted = "XLA_PYTHON_CLIENT_ALLOCATOR" if framework == "jax" else "PYTORCH_CUDA_ALLOC_CONF"
        fixes = [fix for fix in fixes if wanted in fix.env] or fixes
    if cause_id == "cudnn_or_workspace":
        # TensorRT's workspace is its builder's, not cuDNN's: each library gets its own knob.
        unwanted = CUDNN.kind if library == "tensorrt" else TRT_WORKSPACE.kind
        fixes = [fix for fix in fixes if fix.kind != unwanted]
    return [spelled for fix in fixes if (spelled := spell_fix(fix, spelling)) is not None]
