"""Fix kinds with no applier: changes oomtriage cannot make and measure on one machine (sharding
over GPUs, quantized loading, freeing another process's memory, a version pin, ...). They are shown
as advice and never called validated. A kind moves out of here when it gets an applier module."""

from __future__ import annotations

from oomtriage.models import Fix


def _fix(kind: str, title: str, how: str, snippet: str | None = None, saving: str | None = None,
         env: dict[str, str] | None = None) -> Fix:
    return Fix(kind=kind, title=title, how=how, snippet=snippet, expected_saving=saving, env=env or {})


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
TRT_WORKSPACE = _fix(
    "tensorrt_workspace", "Cap TensorRT's builder workspace",
    "TensorRT's builder times each layer's tactics inside a workspace pool (by default as large as the "
    "free memory); a cap leaves room for the weights and activations at the cost of a few tactics.",
    "config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 1 << 30)  # 1 GiB\n"
    "# trtexec: --memPoolSize=workspace:1024",
    "the workspace above the cap")
SMALLER_MODEL = _fix(
    "shard_model", "Split, offload or shrink the model",
    "The weights alone do not fit: spread layers over GPUs (device_map='auto'), offload to CPU, quantize, "
    "or pick a smaller variant.",
    "model = AutoModel.from_pretrained(name, device_map='auto', torch_dtype=torch.float16)",
    "weights spread over devices")
