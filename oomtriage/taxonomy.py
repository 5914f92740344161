"""The cause ids of ``taxonomy.md`` (shipped with the package; the contract for ranked causes)."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

SHORT_TITLES = {
    "batch_too_large": "Batch size too large for the device",
    "input_size_too_large": "Inputs too large (sequence length / resolution / count)",
    "model_too_large": "Model weights do not fit",
    "optimizer_state": "Optimizer state pushes the step over",
    "missing_no_grad": "Evaluation runs with autograd on (missing no_grad)",
    "graph_retained": "Autograd graph kept alive across iterations",
    "reference_leak": "Tensors kept alive in Python references",
    "fragmentation": "Allocator fragmentation (reserved but unusable memory)",
    "other_process_or_device": "Another process, framework or device placement holds the memory",
    "full_precision": "Running in fp32 where half precision would fit",
    "large_logits": "Output logits over a large vocabulary dominate",
    "attention_quadratic": "Naive attention stores the sequence x sequence matrix",
    "kv_cache_or_generation": "KV cache / generation / serving reservation",
    "checkpoint_loading": "Checkpoint loading materialises copies on the GPU",
    "dataloader_or_host": "Host RAM / DataLoader workers, not GPU memory",
    "cudnn_or_workspace": "cuDNN / cuBLAS workspace or handle allocation",
    "distributed_replication": "Full replicas per GPU where sharding is needed",
    "framework_bug": "A bug or regression in the framework or library",
    "other": "Other",
}


@lru_cache(maxsize=1)
def taxonomy() -> dict[str, str]:
    """id -> description, read from the packaged taxonomy.md."""
    text = resources.files("oomtriage").joinpath("taxonomy.md").read_text(encoding="utf-8")
    return {cause: meaning.strip() for cause, meaning in re.findall(r"^\| ([a-z_]+) \| (.+?) \|$", text, re.MULTILINE) if cause != "id"}


def cause_ids() -> list[str]:
    return list(taxonomy())


def is_cause_id(value: str) -> bool:
    return value in taxonomy()


def title_of(cause_id: str) -> str:
    return SHORT_TITLES.get(cause_id, cause_id.replace("_", " "))
