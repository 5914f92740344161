"""A fix is expressed in the program's own configuration: options are read from each style of
program (argparse, nanoGPT's configurator, HfArgumentParser, Hydra, LightningCLI, a YAML config, a
literal in the code) and each applier writes its change there; code changes are real diffs whose
patched programs compute the same thing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from oomtriage.engine.fixes import fixes_for
from oomtriage.fixkinds import KINDS
from oomtriage.program import read_program
from oomtriage.validate.candidates import fix_site
from oomtriage.validate.patching import apply_unified_diff
from tests.conftest import FIXTURES, ROOT

PROGRAMS = FIXTURES / "programs"


def _fix(kind: str):
    return next(fix for cause in ("batch_too_large", "input_size_too_large", "optimizer_state", "missing_no_grad",
                                  "reference_leak", "full_precision") for fix in fixes_for(cause) if fix.kind == kind)


def _propose(kind: str, command: list[str], project: Path, phase: str = "unknown"):
    site = fix_site(None, command, project)
    site.phase = phase
    return KINDS[kind].apply(site, _fix(kind))


def test_configurator_globals_config_files_and_key_value_arguments():
    project = PROGRAMS / "configurator"
    program = read_program(["python3", "train.py", "small.py", "--block_size=128"], project)
    assert "configurator" in program.styles
    assert program.find("batch").current == "32"  # small.py overrides the global 16
    assert program.find("sequence").current == "128"  # the --key=value argument wins
    assert program.find("accumulation").current == "1"
    batch = _propose("reduce_batch_size", ["python3", "train.py", "small.py"], project)
    assert batch[0].action.command == ["python3", "train.py", "small.py", "--batch_size=16", "--gradient_accumulation_steps=2"]
    assert batch[0].title.startswith("Micro-batch 32 -> 16 with 2 accumulation steps (effective batch 32 kept)")
    assert [proposal.size for proposal in batch] == [16, 8, 4, 2, 1]  # every divisor, largest first
    assert _propose("mixed_precision", ["python3", "train.py"], project)[0].action.command[-1] == "--dtype=bfloat16"


def test_nanogpt_style_arithmetic_defaults_are_read():
    program = read_program(["python3", "train.py"], ROOT / "tests" / "fixtures" / "programs" / "configurator")
    assert program.find("batch").value_type == "int"


def test_argparse_flags_and_defaults():
    command = ["python3", "examples/batch_too_large.py", "--batch-size", "4096"]
    program = read_program(command, ROOT)
    assert program.find("batch").flag == "--batch-size" and program.find("batch").current == "4096"
    assert program.find("accumulation").flag == "--accumulate" and program.find("accumulation").current == "1"
    proposal = _propose("reduce_batch_size", command, ROOT)[0]
    assert proposal.action.command == ["python3", "examples/batch_too_large.py", "--batch-size", "2048", "--accumulate", "2"]


def test_hf_arguments_training_arguments_and_the_scripts_dataclasses():
    project = PROGRAMS / "hf_trainer"
    command = ["python3", "train.py", "--output_dir", "out", "--per_device_train_batch_size", "16"]
    program = read_program(command, project)
    assert program.styles[0] == "hf_arguments"
    assert program.find("batch").name == "per_device_train_batch_size" and program.find("batch").current == "16"
    assert program.find("sequence").name == "block_size" and program.find("sequence").current == "64"
    batch = _propose("reduce_batch_size", command, project)[0]
    assert batch.action.command[-4:] == ["--per_device_train_batch_size", "8", "--gradient_accumulation_steps", "2"]
    assert _propose("gradient_checkpointing", command, project)[0].action.command[-2:] == ["--gradient_checkpointing", "True"]
    assert _propose("mixed_precision", command, project)[0].action.command[-2:] == ["--bf16", "True"]
    assert _propose("free_references", command, project)[0].action.command[-2:] == ["--eval_accumulation_steps", "1"]
    evaluation = _propose("reduce_batch_size", command, project, phase="evaluation")[0]
    assert evaluation.action.command[-2:] == ["--per_device_eval_batch_size", "4"] and evaluation.rule == "exact"
    already = command + ["--gradient_checkpointing"]
    assert _propose("gradient_checkpointing", already, project) == []  # already on: nothing to propose


def test_hydra_overrides():
    project = PROGRAMS / "hydra_app"
    program = read_program(["python3", "train.py", "data.batch_size=16"], project)
    assert program.find("batch").name == "data.batch_size" and program.find("batch").current == "16"
    assert program.find("sequence").name == "data.seq_len"
    proposal = _propose("reduce_input_size", ["python3", "train.py", "data.batch_size=16"], project)[0]
    assert proposal.action.command == ["python3", "train.py", "data.batch_size=16", "data.seq_len=64"]
    assert proposal.changes_workload  # a shorter sequence is a different workload: never judged as the same run


def test_lightning_cli_trainer_and_datamodule_options():
    project = PROGRAMS / "lightning_cli"
    command = ["python3", "train.py", "fit", "--data.batch_size", "64"]
    program = read_program(command, project)
    assert program.find("batch").name == "data.batch_size"
    assert program.find("accumulation").name == "trainer.accumulate_grad_batches"
    batch = _propose("reduce_batch_size", command, project)[0]
    assert batch.action.command[-4:] == ["--data.batch_size", "32", "--trainer.accumulate_grad_batches", "2"]
    assert _propose("mixed_precision", command, project)[0].action.command[-2:] == ["--trainer.precision", "bf16-mixed"]


def test_a_yaml_config_named_on_the_command_line_is_edited_as_a_diff(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(PROGRAMS / "argparse_yaml", project)
    command = ["python3", "train.py", "--config", "config.yaml"]
    proposal = _propose("reduce_batch_size", command, project)[0]
    assert proposal.action.type == "diff" and proposal.action.command == command
    apply_unified_diff(project, proposal.action.diff)
    import yaml

    assert yaml.safe_load((project / "config.yaml").read_text())["train"] == {"batch_size": 32, "grad_accum": 2}


def test_literals_in_the_code_are_edited_when_there_is_no_option(tmp_path):
    (tmp_path / "train.py").write_text("import torch\nBATCH_SIZE = 64\nloader = torch.utils.data.DataLoader([1], batch_size=BATCH_SIZE)\n"
                                       "trainer = Trainer(accumulate_grad_batches=1, precision='32-true')\n")
    proposal = _propose("reduce_batch_size", ["python3", "train.py"], tmp_path)[0]
    apply_unified_diff(tmp_path, proposal.action.diff)
    text = (tmp_path / "train.py").read_text()
    assert "BATCH_SIZE = 32" in text and "accumulate_grad_batches=2" in text


def _gpt_project(tmp_path: Path) -> Path:
    project = tmp_path / "gpt"
    shutil.copytree(PROGRAMS / "configurator", project)
    return project


def test_checkpointing_a_block_loop_computes_the_same_loss_and_gradients(tmp_path):
    """The rewritten forward recomputes each block in backward: same values, same gradients (CPU)."""
    import subprocess
    import sys

    project = _gpt_project(tmp_path)
    proposal = _propose("gradient_checkpointing", ["python3", "train.py"], project)[0]
    assert "torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)" in proposal.action.diff
    patched = tmp_path / "patched"
    shutil.copytree(project, patched)
    apply_unified_diff(patched, proposal.action.diff)
    outputs = [subprocess.run([sys.executable, "train.py", "--dropout=0.0"], cwd=folder, capture_output=True, text=True,
                              timeout=120) for folder in (project, patched)]
    assert all(output.returncode == 0 for output in outputs), outputs[1].stderr[-2000:]
    assert outputs[0].stdout == outputs[1].stdout and "iter 2: loss" in outputs[0].stdout


def test_autocast_wraps_the_statements_that_compute_the_loss(tmp_path):
    (tmp_path / "train.py").write_text(
        "import torch\nmodel = torch.nn.Linear(4, 1)\nfor step in range(2):\n    x = torch.randn(8, 4)\n"
        "    out = model(x)\n    loss = out.pow(2).mean()\n    loss.backward()\n")
    proposal = _propose("mixed_precision", ["python3", "train.py"], tmp_path)[0]
    apply_unified_diff(tmp_path, proposal.action.diff)
    text = (tmp_path / "train.py").read_text()
    assert "    with torch.autocast(device_type='cuda', dtype=torch.bfloat16):\n        x = torch.randn(8, 4)\n" in text
    assert "        loss = out.pow(2).mean()\n    loss.backward()" in text
    compile(text, "train.py", "exec")


def test_optimizer_foreach_off_keeps_the_call_as_written(tmp_path):
    (tmp_path / "train.py").write_text("import torch\nopt = torch.optim.AdamW(\n    params, lr=1e-3,\n)\n"
                                       "other = torch.optim.AdamW(params, **extra)\n")
    proposal = _propose("optimizer_memory", ["python3", "train.py"], tmp_path)[0]
    apply_unified_diff(tmp_path, proposal.action.diff)
    text = (tmp_path / "train.py").read_text()
    assert "torch.optim.AdamW(\n    params, lr=1e-3, foreach=False)" in text
    assert "AdamW(params, **extra)\n" in text  # **kwargs may already say fused=True: left alone


def test_a_program_with_no_option_for_a_fix_gets_no_proposal(tmp_path):
    (tmp_path / "train.py").write_text("print('no options here')\n")
    assert _propose("reduce_batch_size", ["python3", "train.py"], tmp_path) == []
    assert _propose("gradient_checkpointing", ["python3", "train.py"], tmp_path) == []


def test_checkpointing_an_nn_sequential_stack_keeps_the_values(tmp_path):
    import subprocess
    import sys

    script = ("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.blocks = nn.Sequential(*[nn.Sequential(nn.Linear(16, 16), nn.Tanh()) for _ in range(4)])\n\n"
              "    def forward(self, x):\n        x = self.blocks(x)\n        return x.sum()\n\n\ntorch.manual_seed(0)\nnet = Net()\n"
              "loss = net(torch.randn(8, 16))\nloss.backward()\nprint(repr(loss.item()), repr(net.blocks[0][0].weight.grad.sum().item()))\n")
    (tmp_path / "train.py").write_text(script)
    proposal = _propose("gradient_checkpointing", ["python3", "train.py"], tmp_path)[0]
    assert "checkpoint_sequential(self.blocks, len(self.blocks), x, use_reentrant=False)" in proposal.action.diff
    before = subprocess.run([sys.executable, "train.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    apply_unified_diff(tmp_path, proposal.action.diff)
    after = subprocess.run([sys.executable, "train.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert after.returncode == 0, after.stderr[-2000:]
    assert before.stdout == after.stdout


def test_hugging_face_scripts_get_a_leaner_optimizer_as_a_workload_change():
    project = PROGRAMS / "hf_trainer"
    proposal = _propose("optimizer_memory", ["python3", "train.py", "--output_dir", "out"], project)[0]
    assert proposal.action.command[-2:] == ["--optim", "adafactor"] and "adafactor" in proposal.changes_workload


def test_a_hugging_face_model_built_from_a_config_in_code(tmp_path):
    """TrainingArguments written in the script (no parser) and a model class built from a config."""
    (tmp_path / "train.py").write_text(
        "from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments\n"
        "model = GPT2LMHeadModel(GPT2Config(n_layer=2))\n"
        "args = TrainingArguments(output_dir='out', per_device_train_batch_size=4, gradient_accumulation_steps=4, fp16=False)\n")
    checkpointing = _propose("gradient_checkpointing", ["python3", "train.py"], tmp_path)[0]
    assert "+model.gradient_checkpointing_enable()" in checkpointing.action.diff
    precision = _propose("mixed_precision", ["python3", "train.py"], tmp_path)[0]
    assert precision.title.startswith("fp16 mixed precision") and "+args = TrainingArguments(" in precision.action.diff
    batch = _propose("reduce_batch_size", ["python3", "train.py"], tmp_path)[0]
    apply_unified_diff(tmp_path, batch.action.diff)
    assert "per_device_train_batch_size=2, gradient_accumulation_steps=8" in (tmp_path / "train.py").read_text()
