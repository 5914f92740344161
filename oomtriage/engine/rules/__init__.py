"""The rule registry. A rule reads the facts and signals and votes for causes with a weight and
the evidence behind it; ``oomtriage.engine.rank`` combines the votes. Rules live in themed modules
(``messages``, ``numbers``, ``phases``, ``workload``, ``code``, ``sites``, ``live``, ``distributed``); adding a rule is adding one function."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from oomtriage.models import TriageContext

from ..facts import Numbers
from ..signals import Signals


@dataclass(frozen=True)
class Vote:
    cause: str
    weight: float  # in (0, 1]; negative weights count against the cause
    evidence: str


@dataclass(frozen=True)
class RuleInput:
    context: TriageContext
    signals: Signals
    numbers: Numbers

    @property
    def framework(self) -> str:
        return self.context.error.framework if self.context.error else "unknown"

    @property
    def has_autograd(self) -> bool:
        """Whether the failing runtime keeps an autograd graph at all: an OOM raised by an inference
        engine, a gradient-boosting library, an image library or a raw CUDA binding cannot be a
        missing ``no_grad`` or a retained graph."""
        error = self.context.error
        if error is None:
            return True
        return not (error.framework in ("onnxruntime", "llama.cpp") or (error.library or "").lower() in RUNTIMES_WITHOUT_AUTOGRAD)


# Libraries whose own allocation failed *as the whole runtime* (not a library called from inside a
# PyTorch or TensorFlow step, as cuBLAS, cuDNN or NCCL are): none of them records a backward graph.
RUNTIMES_WITHOUT_AUTOGRAD = frozenset({"caffe", "opencv", "catboost", "faiss", "openvino", "tensorrt", "pycuda", "cupy",
                                       "rmm", "cudf", "mesa", "pyopencl", "theano"})
# The causes that exist only where an autograd graph is recorded.
AUTOGRAD_CAUSES = frozenset({"missing_no_grad", "graph_retained"})


Rule = Callable[[RuleInput], Iterable[Vote]]
RULES: list[Rule] = []


def rule(function: Rule) -> Rule:
    RULES.append(function)
    return function


def all_rules() -> list[Rule]:
    from . import code, distributed, live, messages, numbers, phases, sites, workload  # noqa: F401  (registration)

    return RULES
