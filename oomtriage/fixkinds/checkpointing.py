"""Activation (gradient) checkpointing: the program's own option where it has one
(``--gradient_checkpointing``), else a code change: ``model.gradient_checkpointing_enable()`` for a
Hugging Face model the script builds, or ``torch.utils.checkpoint`` around each block of a
``for block in self.blocks: x = block(x)`` loop in a module's ``forward``."""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from oomtriage.models import Fix

if TYPE_CHECKING:
    from .actions import FixSite, Proposal

from . import register
from .edits import SourceEdit, diff_proposal, edit_file, edit_script, ensure_import, replace_nodes

CHECKPOINTING = Fix(
    kind="gradient_checkpointing", title="Recompute activations in backward (activation checkpointing)",
    how="Checkpoint each block; HF models: model.gradient_checkpointing_enable().",
    snippet="from torch.utils.checkpoint import checkpoint\nx = checkpoint(block, x, use_reentrant=False)",
    expected_saving="most saved activations (-73% on a small GPT) for ~30% more compute")

_HF_BUILDERS = ("from_pretrained", "from_config")


@register("gradient_checkpointing", rule="reordered", varies_randomness=True)
def propose(site: FixSite, fix: Fix) -> list[Proposal]:
    from .actions import option_proposal
    from oomtriage.program.setting import express
    option = site.program.find("checkpointing")
    if option is not None:
        if option.current_bool():
            return []  # already on
        expressed = express(site.command, site.project, [(option, "True")])
        if expressed:
            title = f"Gradient checkpointing through the program's option ({' '.join(expressed.described)})"
            return [option_proposal(title, expressed)]
    hf = edit_script(site, enable_on_hf_model)
    if hf is not None:
        return diff_proposal(hf, "Enable the Hugging Face model's gradient checkpointing")
    for relative in _module_files(site):
        edit = edit_file(site, relative, checkpoint_block_loop)
        if edit is not None:
            return diff_proposal(edit, f"Checkpoint each repeated block in {relative} (torch.utils.checkpoint)")
    return []


def _module_files(site: FixSite) -> list[str]:
    """Files that may hold the model: the traceback's first, then the script, then the project's."""
    ordered = list(site.failing_lines)
    if site.script is not None:
        ordered.append(str(site.script.relative_to(site.project)))
    for path in sorted(site.project.rglob("*.py"))[:200]:
        relative = path.relative_to(site.project)
        if not any(part.startswith(".") or part in ("venv", "site-packages") for part in relative.parts):
            ordered.append(str(relative))
    return list(dict.fromkeys(ordered))


def enable_on_hf_model(source: str, lines: set[int]) -> str | None:
    """After ``model = X.from_pretrained(...)`` / ``from_config(...)``: ``model.gradient_checkpointing_enable()``."""
    if "gradient_checkpointing" in source:
        return None
    tree = ast.parse(source)
    hf_names = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and (node.module or "").split(".")[0] == "transformers" for alias in node.names}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], (ast.Name, ast.Attribute)) \
                and isinstance(node.value, ast.Call) and (_hf_builder(node.value) or (hf_names and _hf_class(node.value, hf_names))):
            rows = source.splitlines(keepends=True)
            indent = re.match(r"\s*", rows[node.lineno - 1]).group(0)
            target = ast.unparse(node.targets[0])
            rows.insert(node.end_lineno, f"{indent}{target}.gradient_checkpointing_enable()\n")
            return "".join(rows)
    return None


def _hf_builder(call: ast.Call) -> bool:
    """``AutoModelForCausalLM.from_pretrained(...)`` / ``from_config(...)``."""
    return isinstance(call.func, ast.Attribute) and call.func.attr in _HF_BUILDERS and "Model" in ast.unparse(call.func.value)


_HF_MODEL_CLASS = re.compile(r"(?:Model|LMHeadModel|For[A-Z]\w+)$")


def _hf_class(call: ast.Call, names: set[str]) -> bool:
    """``GPT2LMHeadModel(config)``: a model class imported from transformers, built from a config."""
    return isinstance(call.func, ast.Name) and call.func.id in names and bool(_HF_MODEL_CLASS.search(call.func.id))


def checkpoint_block_loop(source: str, lines: set[int]) -> str | None:
    """``for block in self.h: x = block(x, ...)`` in a ``forward`` -> the call checkpointed while
    gradients are on (the same RNG state is restored for the recomputation)."""
    if "torch.utils.checkpoint" in source or "checkpoint(" in source:
        return None
    tree = ast.parse(source)
    edits = []
    for function in ast.walk(tree):
        if not (isinstance(function, ast.FunctionDef) and function.name == "forward"):
            continue
        for loop in ast.walk(function):
            if not (isinstance(loop, ast.For) and isinstance(loop.target, ast.Name)
                    and isinstance(loop.iter, ast.Attribute) and ast.unparse(loop.iter).startswith("self.")):
                continue
            block = loop.target.id
            for statement in loop.body:
                call = statement.value if isinstance(statement, ast.Assign) else None
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == block and call.args:
                    arguments = ", ".join([block, *(ast.unparse(a) for a in call.args),
                                           *(ast.unparse(k) for k in call.keywords), "use_reentrant=False"])
                    edits.append((call, f"(torch.utils.checkpoint.checkpoint({arguments}) if torch.is_grad_enabled() "
                                        f"else {ast.unparse(call)})"))
    edits += _sequential_calls(tree)
    changed = replace_nodes(source, edits)
    return ensure_import(changed, "torch.utils.checkpoint") if changed else None


def _sequential_calls(tree: ast.AST) -> list[tuple[ast.AST, str]]:
    """``x = self.blocks(x)`` in a ``forward``, where ``__init__`` made ``self.blocks`` an
    ``nn.Sequential`` of several modules: checkpointed segment by segment."""
    edits = []
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        sequential = set()
        for node in ast.walk(cls):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute) \
                    and ast.unparse(node.targets[0]).startswith("self.") and isinstance(node.value, ast.Call) \
                    and ast.unparse(node.value.func).endswith("Sequential") and (len(node.value.args) > 1 or any(
                        isinstance(arg, ast.Starred) for arg in node.value.args)):
                sequential.add(ast.unparse(node.targets[0]))
        for function in cls.body:
            if not (isinstance(function, ast.FunctionDef) and function.name == "forward"):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.value.args) == 1 \
                        and not node.value.keywords and ast.unparse(node.value.func) in sequential:
                    call, blocks = node.value, ast.unparse(node.value.func)
                    argument = ast.unparse(call.args[0])
                    edits.append((call, f"(torch.utils.checkpoint.checkpoint_sequential({blocks}, len({blocks}), {argument}, "
                                        f"use_reentrant=False) if torch.is_grad_enabled() else {ast.unparse(call)})"))
    return edits
