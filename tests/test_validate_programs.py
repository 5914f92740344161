"""validate and fit on small programs in the styles real projects use (nanoGPT's configurator
globals, HfArgumentParser + Trainer on a GPT-2 built from a config, LightningCLI): fixes are
expressed in the program's own options or as a diff of its model, the batch search keeps the
effective batch, numerics are compared like with like (dropout off in both runs), the changelog
entry is written and the tree is left byte-identical."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from tests.conftest import FIXTURES, run_cli

PROGRAMS = FIXTURES / "programs"
MIB = 1 << 20

pytestmark = [pytest.mark.usefixtures("isolated_home"), pytest.mark.slow]


def _copy(tmp_path, name: str):
    project = tmp_path / name
    shutil.copytree(PROGRAMS / name, project)
    return project


def _validate(project, *args: str, card: str, kinds: tuple[str, ...] = ()) -> dict:
    changelog = project.parent / "CHANGELOG.md"
    options = [item for kind in kinds for item in ("--kind", kind)]
    result = run_cli("validate", "--simulate-gpu", card, *options, "--format", "json", "--changelog", str(changelog), "--",
                     sys.executable, *args, cwd=project, timeout=900)
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    validation = json.loads(result.stdout)
    validation["changelog"] = changelog.read_text() if changelog.exists() else ""
    return validation


def _fix(validation: dict, kind: str) -> dict:
    return next(fix for fix in validation["fixes"] if fix["kind"] == kind)


def test_configurator_program_batch_search_and_checkpointing_are_accepted(tmp_path):
    project = _copy(tmp_path, "configurator")
    before = {path.name: path.read_bytes() for path in project.iterdir()}
    validation = _validate(project, "train.py", "--batch_size=32", "--block_size=128", card="40MiB",
                           kinds=("reduce_batch_size", "gradient_checkpointing"))
    assert validation["baseline"]["oom"] and validation["tree_unchanged"]
    batch = _fix(validation, "reduce_batch_size")
    # Divisors of 32 are searched; 16 is the largest micro-batch that fits, with the effective batch kept.
    assert batch["accepted"] and batch["change"] == "--batch_size=16 --gradient_accumulation_steps=2"
    assert batch["title"].startswith("Micro-batch 32 -> 16 with 2 accumulation steps")
    assert [probe["size"] for probe in batch["searched"]][-1] == 16 and all(probe["fits"] for probe in batch["searched"])
    assert batch["headroom_bytes"] > 0 and batch["reserved_after_bytes"] <= 40 * MIB
    assert "dropout disabled in both" in batch["numerics"]["compared_on"] and batch["numerics"]["verdict"] == "passed"
    checkpointing = _fix(validation, "gradient_checkpointing")
    assert checkpointing["accepted"] and "torch.utils.checkpoint.checkpoint(block, x" in checkpointing["action"]["diff"]
    assert checkpointing["peak_after_bytes"] < 0.6 * checkpointing["peak_before_bytes"]
    assert "Micro-batch 32 -> 16" in validation["changelog"] and "torch.utils.checkpoint" in validation["changelog"]
    assert {path.name: path.read_bytes() for path in project.iterdir()} == before


def test_hf_trainer_fixes_through_training_arguments(tmp_path):
    pytest.importorskip("transformers")
    project = _copy(tmp_path, "hf_trainer")
    validation = _validate(project, "train.py", "--output_dir", "out", "--per_device_train_batch_size", "16", "--max_steps",
                           "3", "--report_to", "none", "--save_strategy", "no", "--n_layer", "4", card="32MiB",
                           kinds=("reduce_batch_size", "gradient_checkpointing"))
    batch = _fix(validation, "reduce_batch_size")
    assert batch["accepted"], batch["reason"]
    assert batch["change"] == "--per_device_train_batch_size 8 --gradient_accumulation_steps 2"
    assert batch["numerics"]["steps_compared"] == 3
    checkpointing = _fix(validation, "gradient_checkpointing")
    assert checkpointing["accepted"] and checkpointing["change"] == "--gradient_checkpointing True"
    assert validation["tree_unchanged"] and not (project / "out").exists()


def test_lightning_cli_batch_with_accumulate_grad_batches(tmp_path):
    pytest.importorskip("lightning")
    pytest.importorskip("jsonargparse")
    project = _copy(tmp_path, "lightning_cli")
    validation = _validate(project, "train.py", "fit", "--data.batch_size", "512", "--model.width", "2048",
                           "--trainer.max_steps", "2", "--trainer.logger", "false", "--trainer.enable_checkpointing", "false",
                           "--trainer.enable_progress_bar", "false", card="20MiB", kinds=("reduce_batch_size",))
    batch = _fix(validation, "reduce_batch_size")
    assert batch["accepted"], batch["reason"]
    assert "--trainer.accumulate_grad_batches" in batch["change"] and batch["reserved_after_bytes"] <= 20 * MIB


def test_fit_finds_the_largest_batch_and_matches_the_executed_peak(tmp_path):
    project = _copy(tmp_path, "configurator")
    result = run_cli("fit", "--simulate-gpu", "40MiB", "--format", "json", "--", sys.executable, "train.py",
                     "--batch_size=32", "--block_size=128", cwd=project, timeout=900)
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    fit = json.loads(result.stdout)
    assert fit["card_bytes"] == 40 * MIB and fit["fits"] is False and fit["varied"] == "batch_size"
    runs = {int(run["value"]): run for run in fit["runs"]}
    largest = fit["largest_fitting"]
    assert fit["largest_proved"] and runs[largest]["fits"] and runs[largest + 1]["fits"] is False
    fixes = {fix["kind"]: fix for fix in fit["fixes"]}
    assert fixes["reduce_batch_size"]["fits"] and fixes["gradient_checkpointing"]["fits"]
    # The fake-tensor peak is the executed peak (same program, same allocator model).
    measure = tmp_path / "executed.json"
    executed = run_cli("run", "--measure", str(measure), "--max-steps", "2", "--", sys.executable, "train.py",
                       "--batch_size=32", "--block_size=128", cwd=project, timeout=300)
    assert executed.returncode == 0
    peak = json.loads(measure.read_text())["peak_allocated_bytes"]
    assert abs(fit["peak_allocated_bytes"] - peak) <= 0.01 * peak


def test_fit_refuses_an_unknown_card_in_one_line(tmp_path):
    result = run_cli("fit", "--gpu", "Imaginary 9000", "--", sys.executable, "train.py", cwd=tmp_path)
    assert result.returncode == 2 and b"unknown GPU" in result.stderr and b"Traceback" not in result.stderr
