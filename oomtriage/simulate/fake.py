"""The fake backend: the user's script runs under ``FakeTensorMode`` on CPU, so every tensor has its
shape, dtype and storage size but no data. Nothing is computed and no memory is used, which lets
oomtriage measure the peak of a workload too large (or too slow) to execute on this machine. The
simulated device sits on top and counts the fake storages exactly as it counts real ones.

Fake CPU tensors, never fake CUDA ones: on a CPU build the first autograd op on a fake CUDA tensor
aborts the process (reference/memory_model_and_numerics.md §2.1).

What a fake run cannot give: values. A Python number read from a tensor (``.item()``, ``float()``,
``if loss.isnan():``) has no data behind it. A number reads as 1 (0 would divide by zero in Adam's
bias correction); a truth value reads as False, because the truth values a training loop reads are
almost always guards (``isnan``, ``isinf``, early stopping). So numerics are never checked here.
Sampled indices (``torch.randint``/``randperm``) are the exception: they are drawn for real, so a
batch sliced at random offsets has its real shape.

Checkpoints: ``torch.save`` of fake tensors writes nothing (there is no data, and a real checkpoint
of the user's must never be overwritten); it remembers the tensors' shapes, and a ``torch.load`` of
that path in the same run gives new fake tensors of those shapes, allocated as a real load would.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any, Callable

import torch
import torch.nn as nn
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode, unset_fake_temporarily
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

PLACEHOLDER_SCALAR = 1


class PlaceholderScalars(TorchDispatchMode):
    """Answers the one data-dependent op every ``.item()``/``float()``/``bool()`` goes through, and
    computes for real what only real tensors feed: the data pipeline's indices and slices."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        tensors = [item for item in tree_flatten((args, kwargs or {}))[0] if isinstance(item, torch.Tensor)]
        if tensors and not any(isinstance(item, FakeTensor) for item in tensors):
            # ``data[i:i + T]`` with a sampled ``i``: computed on real values, so offsets and shapes
            # are real (a placeholder offset would slice nothing and measure an empty batch).
            with unset_fake_temporarily():
                return func(*args, **(kwargs or {}))
        if func is torch.ops.aten._local_scalar_dense.default:
            tensor = args[0]
            if tensor.dtype == torch.bool:
                return False
            return float(PLACEHOLDER_SCALAR) if tensor.is_floating_point() else PLACEHOLDER_SCALAR
        return func(*args, **(kwargs or {}))


_original_numpy = torch.Tensor.numpy


def _placeholder_numpy(self: torch.Tensor, *, force: bool = False) -> Any:
    """``.numpy()`` of a fake tensor (metrics code calls it): the placeholder value in the tensor's
    shape and dtype, as a broadcast view that takes no memory, whatever the shape."""
    if not isinstance(self, FakeTensor):
        return _original_numpy(self, force=force)
    import numpy

    with unset_fake_temporarily():
        dtype = torch.empty((), dtype=self.dtype).numpy().dtype  # raises for bf16, as real torch does
    value = numpy.zeros((), dtype) if self.dtype == torch.bool else numpy.full((), PLACEHOLDER_SCALAR, dtype)
    return numpy.broadcast_to(value, tuple(self.shape))


_original_format = torch.Tensor.__format__


def _placeholder_format(self: torch.Tensor, format_spec: str) -> str:
    """``f"{loss:.4f}"`` of a fake 0-d tensor: the placeholder, formatted as the real value would be
    (``Tensor.__format__`` formats only plain tensors' values, and a FakeTensor is a subclass)."""
    if isinstance(self, FakeTensor) and self.dim() == 0 and format_spec:
        return format(self.item(), format_spec)
    return _original_format(self, format_spec)


# Sampled integers are real: a data pipeline slices its data at random offsets
# (``ix = torch.randint(len(data) - T, (B,))``, then ``data[i:i + T]``), and a placeholder offset would
# slice nothing and measure an empty batch. They are a few integers per batch.
REAL_SAMPLERS = ("randint", "randperm")


def _real_sampler(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def sample(*args: Any, **kwargs: Any) -> Any:
        with unset_fake_temporarily():
            return original(*args, **kwargs)

    return sample


def _has_fake_tensors(module: nn.Module) -> bool:
    return any(isinstance(t, FakeTensor) for t in (*module._parameters.values(), *module._buffers.values()))


_original_apply = nn.Module._apply


def _apply_to_fake(self: nn.Module, fn: Any, recurse: bool = True) -> nn.Module:
    """``Module._apply`` (behind ``.to()``, ``.cuda()``, ``.half()``) for fake parameters.

    PyTorch always swaps fake parameters with ``torch.utils.swap_tensors``, which refuses them
    because FakeTensorMode keeps weak references to them; a no-op move keeps the parameter and a
    real conversion (a dtype change) installs a new one, as ``.to()`` did before swapping existed.
    """
    if recurse:
        for child in self.children():
            child._apply(fn)
    if not _has_fake_tensors(self):
        return _original_apply(self, fn, recurse=False)
    for key, param in list(self._parameters.items()):
        if param is None:
            continue
        with torch.no_grad():
            applied = fn(param)
        if applied is not param:
            self._parameters[key] = nn.Parameter(applied, requires_grad=param.requires_grad)
    for key, buffer in list(self._buffers.items()):
        if buffer is not None:
            self._buffers[key] = fn(buffer)
    return self


@dataclass(frozen=True)
class _SavedTensor:
    shape: tuple[int, ...]
    dtype: torch.dtype
    requires_grad: bool


_saved: dict[str, Any] = {}  # checkpoint path -> the saved object with its tensors as _SavedTensor


def _checkpoint_key(target: Any) -> str | None:
    return os.path.abspath(os.fspath(target)) if isinstance(target, (str, os.PathLike)) else None


def _save_shapes(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def save(obj: Any, f: Any, *args: Any, **kwargs: Any) -> None:
        key = _checkpoint_key(f)
        if key is not None:
            _saved[key] = tree_map(lambda t: _SavedTensor(tuple(t.shape), t.dtype, t.requires_grad)
                                   if isinstance(t, torch.Tensor) else t, obj)
        # a file-like target (a buffer) gets nothing either: fake tensors have no bytes to write

    return save


def _load_shapes(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def load(f: Any, *args: Any, **kwargs: Any) -> Any:
        key = _checkpoint_key(f)
        if key is None or key not in _saved:
            return original(f, *args, **kwargs)  # a real checkpoint: its tensors become fake on use
        return tree_map(lambda spec: torch.empty(spec.shape, dtype=spec.dtype).requires_grad_(spec.requires_grad)
                        if isinstance(spec, _SavedTensor) else spec, _saved[key])

    return load


def enter() -> None:
    """Enter the fake backend for the rest of the process.

    The caller pushes the simulated device after this, so it sees every fake storage.
    """
    FakeTensorMode(allow_non_fake_inputs=True).__enter__()  # real tensors (loaded data) become fake on use
    PlaceholderScalars().__enter__()
    nn.Module._apply = _apply_to_fake  # type: ignore[method-assign]
    # Optimizers pick foreach (CUDA's default, +1x params at the step) only for the tensor types they
    # list; a FakeTensor is not one of them, so without this a fake run takes the leaner for-loop path.
    import torch.optim.optimizer as optimizer_module

    supported = getattr(optimizer_module, "_foreach_supported_types", None)
    if isinstance(supported, list) and FakeTensor not in supported:
        supported.append(FakeTensor)
    torch.Tensor.numpy = _placeholder_numpy  # type: ignore[method-assign]
    torch.Tensor.__format__ = _placeholder_format  # type: ignore[method-assign]
    for name in REAL_SAMPLERS:
        setattr(torch, name, _real_sampler(getattr(torch, name)))
    torch.save = _save_shapes(torch.save)
    torch.load = _load_shapes(torch.load)
