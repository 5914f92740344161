"""How CUDA's names are spelled on the other accelerators a message can come from.

ROCm (hipified PyTorch), Ascend (torch_npu), Moore Threads (torch_musa), Cambricon (torch_mlu) and
Intel GPUs (XPU) ship the same caching allocator as CUDA, so the same fixes hold there; only the names
differ: the variable the allocator reads its settings from, the torch module (``torch.npu.empty_cache()``),
the device string, the tool that lists a card's processes and the variable that picks a card. Advice
that names CUDA's spelling to an Ascend user is advice they cannot type, so every fix and every piece
of evidence is spelled here, in one table, for the card the message came from. Apple's MPS has no
allocator settings variable (its one knob is a high-watermark ratio, not a cure for fragmentation).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from oomtriage.models import Fix, OomError


@dataclass(frozen=True)
class Spelling:
    alloc_conf: str | None  # None: this allocator reads no settings variable
    module: str             # torch.cuda's counterpart
    device: str             # the device string in torch.device / autocast / map_location
    monitor: str            # the tool that shows the card's memory and processes
    process_list: str       # its command that lists the processes on the card
    visible_devices: str | None


CUDA = Spelling("PYTORCH_CUDA_ALLOC_CONF", "torch.cuda", "cuda", "nvidia-smi",
                "nvidia-smi --query-compute-apps=pid,used_memory --format=csv", "CUDA_VISIBLE_DEVICES")
SPELLINGS: dict[str, Spelling] = {
    # PyTorch's ROCm build keeps the torch.cuda API and the 'cuda' device string; only the variables differ.
    "hip": Spelling("PYTORCH_HIP_ALLOC_CONF", "torch.cuda", "cuda", "rocm-smi", "rocm-smi --showpids", "HIP_VISIBLE_DEVICES"),
    "npu": Spelling("PYTORCH_NPU_ALLOC_CONF", "torch.npu", "npu", "npu-smi info", "npu-smi info", "ASCEND_RT_VISIBLE_DEVICES"),
    "musa": Spelling("PYTORCH_MUSA_ALLOC_CONF", "torch.musa", "musa", "mthreads-gmi", "mthreads-gmi", "MUSA_VISIBLE_DEVICES"),
    "mlu": Spelling("PYTORCH_MLU_ALLOC_CONF", "torch.mlu", "mlu", "cnmon", "cnmon", "MLU_VISIBLE_DEVICES"),
    "xpu": Spelling("PYTORCH_XPU_ALLOC_CONF", "torch.xpu", "xpu", "xpu-smi", "xpu-smi ps", "ZE_AFFINITY_MASK"),
    "mps": Spelling(None, "torch.mps", "mps", "Activity Monitor", "top -o mem", None),  # memory is shared with the host
}
# The first words of snippets that are shell commands, not Python (how a report highlights them).
SHELL_COMMANDS = frozenset({"export", "pip", "docker"} | {spelling.process_list.split(" ", 1)[0]
                                                          for spelling in (CUDA, *SPELLINGS.values())})
# A message that names its own settings variable ("try setting PYTORCH_HIP_ALLOC_CONF=...") knows
# which one this build reads: some ROCm releases print CUDA's name, others HIP's.
ALLOC_CONF_VARIABLE = r"PYTORCH_(?:[A-Z]+_)?ALLOC_CONF"  # every backend's name for the caching allocator's settings
_NAMED_ALLOC_CONF = re.compile(rf"\b{ALLOC_CONF_VARIABLE}\b")


def spelling_for(backend: str | None, raw_message: str | None = None) -> Spelling:
    spelling = SPELLINGS.get(backend or "", CUDA)
    named = _NAMED_ALLOC_CONF.search(raw_message or "")
    if named and spelling.alloc_conf is not None and named.group(0) != spelling.alloc_conf:
        spelling = dataclasses.replace(spelling, alloc_conf=named.group(0))
    return spelling


def spelling_of(error: OomError | None) -> Spelling:
    """The spelling for the card an error came from (CUDA's when there is no message)."""
    return spelling_for(error.backend, error.raw_message) if error is not None else CUDA


def spell(text: str, spelling: Spelling) -> str:
    """CUDA's names in ``text`` as ``spelling`` writes them."""
    if spelling == CUDA or not text:
        return text
    text = text.replace(CUDA.process_list, spelling.process_list).replace(CUDA.monitor, spelling.monitor)
    if spelling.alloc_conf:
        text = text.replace(CUDA.alloc_conf, spelling.alloc_conf)
    if spelling.visible_devices:
        text = text.replace(CUDA.visible_devices, spelling.visible_devices)
    if spelling.module != CUDA.module:
        text = text.replace(CUDA.module + ".", spelling.module + ".")
    if spelling.device != CUDA.device:
        text = re.sub(r"(['\"])cuda(?=[:'\"])", rf"\g<1>{spelling.device}", text)
        text = re.sub(r"\bcuda:(\d|\{)", rf"{spelling.device}:\1", text)
    return text


def spell_fix(fix: Fix, spelling: Spelling) -> Fix | None:
    """The fix as this card's user types it; None when it rests on a setting the card lacks."""
    if spelling == CUDA:
        return fix
    if CUDA.alloc_conf in fix.env and spelling.alloc_conf is None:
        return None
    env = {(spelling.alloc_conf if key == CUDA.alloc_conf and spelling.alloc_conf else key): value
           for key, value in fix.env.items()}
    return fix.model_copy(update={
        "title": spell(fix.title, spelling), "how": spell(fix.how, spelling),
        "snippet": spell(fix.snippet, spelling) if fix.snippet else fix.snippet, "env": env})
