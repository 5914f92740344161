"""The environment: from log text (``collect_env`` output, ``nvidia-smi`` tables, version banners,
env var dumps) or live from the running process (``collect_live_environment``)."""

from __future__ import annotations

import os
import platform
import re
import sys

from oomtriage.gpus import capacity_of_gpu, find_gpu_name
from oomtriage.logread import LogView
from oomtriage.models import Environment, TriageContext

from . import ContextPart, register

ALLOCATOR_ENV_VARS = (
    "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING",
    "XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR",
    "TF_FORCE_GPU_ALLOW_GROWTH", "TF_GPU_ALLOCATOR", "PYTORCH_MPS_HIGH_WATERMARK_RATIO",
)
_VERSION = r"(\d+\.\d+(?:\.\d+)?(?:[+.][\w.]+)?)"
_PATTERNS = {
    "torch_version": [rf"PyTorch version:\s*{_VERSION}", rf"\btorch(?:==|\s+version[:\s]+|\s+|-){_VERSION}",
                      rf"torch\.__version__\s*[=:]?\s*'?{_VERSION}"],
    "tensorflow_version": [rf"TensorFlow version:?\s*{_VERSION}", rf"\btensorflow(?:-gpu)?(?:==|\s+){_VERSION}"],
    "jax_version": [rf"\bjax(?:==|\s+version[:\s]+|\s+){_VERSION}", rf"\bjaxlib(?:==|\s+){_VERSION}"],
    "cuda_version": [rf"CUDA used to build PyTorch:\s*{_VERSION}", rf"CUDA Version:\s*{_VERSION}",
                     rf"\bcuda(?:toolkit)?[ =]+{_VERSION}", r"\+cu(\d{2,3})\b"],
    "cudnn_version": [r"cuDNN version:\s*(\S+)", rf"cudnn(?:==|\s+version[:\s]+){_VERSION}"],
    "driver_version": [rf"Driver Version:\s*{_VERSION}", rf"Nvidia driver version:\s*{_VERSION}"],
    "python_version": [rf"Python version:\s*{_VERSION}", r"\bPython (3\.\d+\.\d+)\b", r"/python(3\.\d+)/"],
}


def _first(patterns: list[str], text: str) -> str | None:
    for pattern in patterns:
        match = re.search(pattern, text)
        if match:
            return match.group(1)
    return None


def parse_environment_text(text: str) -> Environment:
    """Everything about the environment that a log states in passing."""
    fields: dict[str, object] = {"source": "log"}
    for name, patterns in _PATTERNS.items():
        value = _first(patterns, text)
        if value:
            fields[name] = value
    cuda = fields.get("cuda_version")
    if isinstance(cuda, str) and cuda.isdigit():  # "+cu121" -> "12.1"
        fields["cuda_version"] = f"{cuda[:-1]}.{cuda[-1]}"
    gpu = find_gpu_name(text)
    if gpu:
        fields["gpu_name"] = gpu
        fields["gpu_capacity_bytes"] = capacity_of_gpu(gpu)
    # PyTorch's own OOM hint says "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True": not a setting.
    allocator_env = {
        match.group(1): match.group(2)
        for match in re.finditer(rf"\b({'|'.join(ALLOCATOR_ENV_VARS)})=([^\s'\"]+)", text)
        if "setting" not in text[max(0, match.start() - 16) : match.start()]
    }
    if allocator_env:
        fields["allocator_env"] = allocator_env
    visible = re.search(r"CUDA_VISIBLE_DEVICES=([\d,]+)", text)
    if visible:
        fields["cuda_visible_devices"] = visible.group(1)
    world = re.search(r"\bWORLD_SIZE[=:]\s*(\d+)|world_size[=:]\s*(\d+)", text)
    if world:
        fields["world_size"] = int(world.group(1) or world.group(2))
    return Environment(**fields)


def collect_live_environment() -> Environment:
    """The running process's environment. Imports torch only if the process already did."""
    env = Environment(
        source="live",
        python_version=platform.python_version(),
        platform=platform.platform(),
        allocator_env={name: os.environ[name] for name in ALLOCATOR_ENV_VARS if name in os.environ},
        cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
        rank=_int_env("RANK"),
        local_rank=_int_env("LOCAL_RANK"),
        world_size=_int_env("WORLD_SIZE"),
    )
    torch = sys.modules.get("torch")
    if torch is None:
        return env
    update: dict[str, object] = {"torch_version": torch.__version__, "cuda_version": torch.version.cuda}
    try:
        if torch.cuda.is_available():
            device = torch.cuda.current_device()
            props = torch.cuda.get_device_properties(device)
            update.update(gpu_name=props.name, gpu_capacity_bytes=int(props.total_memory),
                          gpu_count=torch.cuda.device_count(),
                          cudnn_version=str(torch.backends.cudnn.version()))
            driver = _nvml_driver_version()
            if driver:
                update["driver_version"] = driver
    except Exception as error:  # a broken CUDA install must not stop triage
        update["platform"] = f"{env.platform} (CUDA query failed: {type(error).__name__})"
    return env.model_copy(update=update)


def _nvml_driver_version() -> str | None:
    try:
        import pynvml  # optional

        pynvml.nvmlInit()
        version = pynvml.nvmlSystemGetDriverVersion()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:
        return None


def _int_env(name: str) -> int | None:
    value = os.environ.get(name, "")
    return int(value) if value.isdigit() else None


class LogEnvironmentCollector:
    name = "environment"

    def collect(self, source: LogView, context: TriageContext) -> ContextPart:
        text = "\n".join([source.head, *(region.text for region in source.regions), source.tail])
        found = parse_environment_text(text)
        rank_match = re.search(r"\bRANK[=:]\s*(\d+)", text)
        merged = context.environment.model_copy(
            update={k: v for k, v in found.model_dump(exclude_defaults=True).items() if v}
        )
        if rank_match and merged.rank is None:
            merged.rank = int(rank_match.group(1))
        error = context.error
        if error and error.total_bytes:  # the allocator's own figure beats a marketing capacity
            merged.gpu_capacity_bytes = error.total_bytes
        return {"environment": merged}


register(LogEnvironmentCollector())
