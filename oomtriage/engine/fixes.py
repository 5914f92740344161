"""The fix catalog: for each cause, concrete changes with a snippet and the saving to expect.
Kinds in ``VALIDATABLE_KINDS`` can be applied and measured by the validator; the rest are advice."""

from __future__ import annotations

from oomtriage.models import Fix

# Only kinds the validator has an applier for (the script's options, an environment variable, or
# an AST rewrite in oomtriage.validate.rewrite): gradient_checkpointing, optimizer_memory and
# reduce_input_size have none yet, so they are advice, and the model is told so.
VALIDATABLE_KINDS = {
    "reduce_batch_size", "mixed_precision", "no_grad_eval", "detach_accumulated_loss", "free_references",
    "alloc_conf", "sdpa_attention",
}


def _fix(kind: str, title: str, how: str, snippet: str | None = None, saving: str | None = None,
         env: dict[str, str] | None = None) -> Fix:
    return Fix(kind=kind, title=title, how=how, snippet=snippet, expected_saving=saving, env=env or {})


REDUCE_BATCH = _fix(
    "reduce_batch_size", "Halve the micro-batch and accumulate gradients",
    "Keep the effective batch by accumulating gradients over k micro-batches; divide the loss by k.",
    "for i, (x, y) in enumerate(loader):          # loader batch = old_batch // k\n"
    "    loss = model(x, y) / k\n    loss.backward()\n    if (i + 1) % k == 0:\n"
    "        optimizer.step(); optimizer.zero_grad(set_to_none=True)",
    "activations shrink ~linearly with the micro-batch (÷2 halves them)")
MIXED_PRECISION = _fix(
    "mixed_precision", "Run forward/backward under bf16 autocast",
    "Wrap the forward pass and loss in autocast; keep the optimizer step outside.",
    "with torch.autocast(device_type='cuda', dtype=torch.bfloat16):\n    loss = model(x, y)\nloss.backward()",
    "~35-50% of activation memory (measured -37% on a small GPT)")
CHECKPOINTING = _fix(
    "gradient_checkpointing", "Recompute activations in backward (activation checkpointing)",
    "Checkpoint each block; HF models: model.gradient_checkpointing_enable().",
    "from torch.utils.checkpoint import checkpoint\nx = checkpoint(block, x, use_reentrant=False)",
    "most saved activations (-73% on a small GPT) for ~30% more compute")
NO_GRAD_EVAL = _fix(
    "no_grad_eval", "Evaluate under torch.no_grad() / inference_mode()",
    "Without it every eval batch builds an autograd graph and keeps its activations.",
    "model.eval()\nwith torch.no_grad():\n    for x, y in val_loader:\n        out = model(x)",
    "all activations saved for backward during evaluation")
DETACH_LOSS = _fix(
    "detach_accumulated_loss", "Accumulate Python numbers, not graph-carrying tensors",
    "`total_loss += loss` keeps every iteration's graph alive; use `.item()` (or `.detach()`).",
    "total_loss += loss.item()", "one iteration's graph per step that was being kept")
FREE_REFERENCES = _fix(
    "free_references", "Store detached CPU copies of outputs you keep",
    "Lists, dicts and caches of outputs keep GPU memory (and graphs) alive for the whole loop.",
    "preds.append(out.detach().cpu())   # not preds.append(out)",
    "everything the kept outputs pinned on the GPU")
ALLOC_CONF = _fix(
    "alloc_conf", "Let the allocator grow segments instead of fragmenting them",
    "Set the variable before the process starts (PyTorch >= 2.1; `PYTORCH_ALLOC_CONF` in newest releases).",
    "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
    "most of the reserved-but-unallocated memory", env={"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})
SDPA = _fix(
    "sdpa_attention", "Use fused scaled_dot_product_attention",
    "Replace softmax(q @ k.T * scale) @ v with the fused kernel (flash / memory-efficient), which never "
    "stores the sequence x sequence matrix; for diffusers use enable_xformers_memory_efficient_attention() or "
    "attention slicing.",
    "import torch.nn.functional as F\nout = F.scaled_dot_product_attention(q, k, v, is_causal=True)",
    "the T x T attention matrices: ~10x at 2K tokens, ~20x at 4K")
OPTIMIZER_MEMORY = _fix(
    "optimizer_memory", "Shrink optimizer state",
    "Adam keeps two fp32 moments per parameter (8 B/param). Use foreach=False to drop the step's transient "
    "copy, an 8-bit optimizer (bitsandbytes), or offload the optimizer (ZeRO-Offload / FSDP CPUOffload).",
    "optimizer = torch.optim.AdamW(model.parameters(), lr=lr, foreach=False)\n"
    "# or: import bitsandbytes as bnb; optimizer = bnb.optim.AdamW8bit(model.parameters(), lr=lr)",
    "8-bit Adam: 6 of 8 bytes/param; foreach=False: ~1x params at the step peak")
REDUCE_INPUT = _fix(
    "reduce_input_size", "Cap the input size (sequence length, resolution, boxes per image)",
    "Truncate or bucket long inputs, cap max length / resolution / detections, or filter outliers.",
    "tokens = tokenizer(text, truncation=True, max_length=2048)",
    "activations scale linearly (quadratically for naive attention) with sequence length")
SHARD = _fix(
    "shard_model", "Shard model states across GPUs (FSDP / ZeRO-3)",
    "ZeRO-1/2 and DDP keep a full copy of the weights on every GPU; ZeRO-3 / FSDP FULL_SHARD divide "
    "weights, gradients and optimizer state by the number of GPUs.",
    '"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}',
    "model states ÷ number of GPUs")
QUANTIZE = _fix(
    "quantize_weights", "Load the weights in half precision or quantized",
    "Load in bf16/fp16 (2 B/param) or 8/4-bit (bitsandbytes) instead of fp32 (4 B/param); for training use LoRA/QLoRA.",
    "model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.bfloat16, device_map='auto')",
    "fp32 -> bf16 halves the weights; 4-bit quarters them again")
HALF_WEIGHTS = _fix(
    "mixed_precision", "Load and run the model in bf16/fp16",
    "Many loaders default to fp32; pass the dtype explicitly.",
    "model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.float16)\n# or: model.half()",
    "half of the weights and activations")
MAP_LOCATION = _fix(
    "map_location", "Load checkpoints to the CPU first",
    "torch.load restores tensors to the device they were saved from; load to CPU, copy into the model, then free.",
    "state = torch.load(path, map_location='cpu')\nmodel.load_state_dict(state['model'])\n"
    "optimizer.load_state_dict(state['optimizer'])\ndel state",
    "a full extra copy of weights and optimizer state on the GPU")
RANK_DEVICE = _fix(
    "set_rank_device", "Give each rank its own GPU (and map loads to it)",
    "Without torch.cuda.set_device(local_rank), every rank allocates on cuda:0 and loads checkpoints there.",
    "local_rank = int(os.environ['LOCAL_RANK'])\ntorch.cuda.set_device(local_rank)\n"
    "state = torch.load(path, map_location=f'cuda:{local_rank}')",
    "the other ranks' memory on GPU 0")
FREE_GPU = _fix(
    "free_other_process", "Free the GPU of other processes",
    "Check `nvidia-smi` for other processes (stale jobs, notebooks, a second framework) and stop them, "
    "or pick an idle GPU with CUDA_VISIBLE_DEVICES.",
    "nvidia-smi --query-compute-apps=pid,used_memory --format=csv", "whatever the other processes hold")
TF_GROWTH = _fix(
    "framework_memory_growth", "Stop TensorFlow/JAX from pre-allocating the GPU",
    "TensorFlow grabs nearly all GPU memory and JAX 75% at start-up; next to another framework, limit them.",
    "tf.config.experimental.set_memory_growth(gpu, True)   # or tf.config.set_visible_devices([], 'GPU')\n"
    "export XLA_PYTHON_CLIENT_PREALLOCATE=false",
    "the pre-allocated pool", env={"TF_FORCE_GPU_ALLOW_GROWTH": "true", "XLA_PYTHON_CLIENT_PREALLOCATE": "false"})
JAX_ALLOCATOR = _fix(
    "alloc_conf", "Use JAX's platform allocator (frees memory, no fragmentation of a fixed pool)",
    "XLA's BFC pool fragments when many differently shaped arrays come and go; the platform allocator "
    "returns memory, at some speed cost.",
    "export XLA_PYTHON_CLIENT_ALLOCATOR=platform", "fragmented pool memory",
    env={"XLA_PYTHON_CLIENT_ALLOCATOR": "platform"})
EVAL_ACCUMULATION = _fix(
    "free_references", "Move evaluation outputs off the GPU as you go",
    "HF Trainer keeps all eval logits on the GPU until the end unless eval_accumulation_steps is set; "
    "reduce logits to predictions before storing them.",
    "TrainingArguments(..., eval_accumulation_steps=8)\n"
    "def preprocess_logits_for_metrics(logits, labels):\n    return logits.argmax(-1)",
    "all accumulated eval logits")
CHUNKED_LOSS = _fix(
    "chunked_loss", "Compute the output layer and loss in chunks (or sample the softmax)",
    "Logits are batch x tokens x vocab; chunk over tokens, use sampled/adaptive softmax or a fused "
    "cross-entropy kernel so the full logits tensor never exists.",
    "for chunk in hidden.split(1024, dim=1):\n    loss += F.cross_entropy(head(chunk).flatten(0, 1), ...) ",
    "the logits (batch x tokens x vocab x 4 bytes) and their gradient")
KV_CACHE = _fix(
    "limit_kv_cache", "Bound the KV cache / serving reservation",
    "Lower max_model_len / max_num_seqs (vLLM), cache_max_entry_count (lmdeploy), num_ctx (ollama), "
    "beams or max_new_tokens; for multimodal models also limit images per prompt.",
    "LLM(model=name, max_model_len=8192, gpu_memory_utilization=0.85, max_num_seqs=64)",
    "KV cache = 2 x layers x heads x head_dim x tokens x bytes")
WORKERS = _fix(
    "dataloader_memory", "Reduce host memory use of data loading",
    "Lower num_workers, avoid copying large Python lists into every worker (use numpy arrays), raise "
    "/dev/shm (docker --shm-size) for 'Bus error', request more RAM from the scheduler.",
    "DataLoader(ds, num_workers=2, persistent_workers=False, pin_memory=False)",
    "one copy of the dataset per worker")
UPGRADE = _fix(
    "pin_version", "Pin the last working version or upgrade past the bug",
    "A regression between versions needs no change to your code: pin the version that worked and report it upstream.",
    "pip install 'package==<last working version>'", "back to what the old version used")
CUDNN = _fix(
    "cudnn_workspace", "Leave room for cuDNN/cuBLAS workspaces",
    "Library handles and workspaces are allocated outside the framework's pool; when another process or "
    "TensorFlow's pre-allocation fills the GPU they fail to initialise. Enable memory growth, free the GPU, "
    "or disable cudnn.benchmark.",
    "tf.config.experimental.set_memory_growth(gpu, True)\n# PyTorch: torch.backends.cudnn.benchmark = False",
    "tens to hundreds of MiB of workspace")
SMALLER_MODEL = _fix(
    "shard_model", "Split, offload or shrink the model",
    "The weights alone do not fit: spread layers over GPUs (device_map='auto'), offload to CPU, quantize, "
    "or pick a smaller variant.",
    "model = AutoModel.from_pretrained(name, device_map='auto', torch_dtype=torch.float16)",
    "weights spread over devices")

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
    "cudnn_or_workspace": [CUDNN, FREE_GPU],
    "distributed_replication": [SHARD, RANK_DEVICE],
    "framework_bug": [UPGRADE],
    "other": [REDUCE_BATCH],
}


def fixes_for(cause_id: str, *, framework: str = "pytorch") -> list[Fix]:
    fixes = [fix.model_copy(deep=True) for fix in FIXES_BY_CAUSE.get(cause_id, [])]
    if cause_id == "fragmentation":
        wanted = "XLA_PYTHON_CLIENT_ALLOCATOR" if framework == "jax" else "PYTORCH_CUDA_ALLOC_CONF"
        fixes = [fix for fix in fixes if wanted in fix.env] or fixes
    return fixes
