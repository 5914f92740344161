"""Allocator settings that fight fragmentation, set in the run's environment:
``PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`` (JAX: its platform allocator)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from oomtriage.models import Fix

if TYPE_CHECKING:
    from .actions import FixSite, Proposal

from . import register

ALLOC_CONF = Fix(
    kind="alloc_conf", title="Let the allocator grow segments instead of fragmenting them",
    how="Set the variable before the process starts (PyTorch >= 2.1; `PYTORCH_ALLOC_CONF` in newest releases).",
    snippet="export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
    expected_saving="most of the reserved-but-unallocated memory", env={"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})
JAX_ALLOCATOR = Fix(
    kind="alloc_conf", title="Use JAX's platform allocator (frees memory, no fragmentation of a fixed pool)",
    how="XLA's BFC pool fragments when many differently shaped arrays come and go; the platform allocator "
        "returns memory, at some speed cost.",
    snippet="export XLA_PYTHON_CLIENT_ALLOCATOR=platform", expected_saving="fragmented pool memory",
    env={"XLA_PYTHON_CLIENT_ALLOCATOR": "platform"})


@register("alloc_conf", rule="exact")
def propose(site: FixSite, fix: Fix) -> list[Proposal]:
    from .actions import FixAction, Proposal
    if not fix.env:
        return []
    shown = " ".join(f"{key}={value}" for key, value in fix.env.items())
    return [Proposal(title=fix.title, action=FixAction(type="env", env=dict(fix.env), described=shown))]
