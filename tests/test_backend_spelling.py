"""Fixes and evidence are spelled for the card the message came from: an Ascend user is told
PYTORCH_NPU_ALLOC_CONF and torch.npu.empty_cache(), a ROCm user rocm-smi, an MPS user no allocator
variable at all (MPS has none)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from oomtriage.api import analyze_inputs
from oomtriage.cli import app
from oomtriage.fixkinds.backends import CUDA, SPELLINGS, spell, spelling_for
from oomtriage.render import to_markdown

# A fragmented cache: a small request fails while several GiB are reserved and unused.
FRAGMENTED = ("RuntimeError: {name} out of memory. Tried to allocate 256.00 MiB ({dev} 0; 31.00 GiB total capacity; "
              "20.00 GiB already allocated; 100.00 MiB free; 29.00 GiB reserved in total by PyTorch) If reserved memory is "
              ">> allocated memory try setting max_split_size_mb to avoid fragmentation.")


def _fixes(report, cause_id):
    return next(cause.fixes for cause in report.causes if cause.id == cause_id)


@pytest.mark.parametrize(("name", "dev", "variable"), [
    ("NPU", "NPU", "PYTORCH_NPU_ALLOC_CONF"), ("MUSA", "GPU", "PYTORCH_MUSA_ALLOC_CONF"), ("MLU", "MLU", "PYTORCH_MLU_ALLOC_CONF"),
])
def test_the_allocator_setting_is_named_as_the_backend_reads_it(name, dev, variable):
    report = analyze_inputs([], text=FRAGMENTED.format(name=name, dev=dev))
    assert report.causes[0].id == "fragmentation"
    (fix,) = [fix for fix in _fixes(report, "fragmentation") if fix.kind == "alloc_conf"]
    assert fix.env == {variable: "expandable_segments:True"}
    assert fix.snippet == f"export {variable}=expandable_segments:True"
    assert "PYTORCH_CUDA_ALLOC_CONF" not in report.model_dump_json()


def test_a_cuda_message_keeps_cudas_names():
    report = analyze_inputs([], text=FRAGMENTED.format(name="CUDA", dev="GPU"))
    (fix,) = [fix for fix in _fixes(report, "fragmentation") if fix.kind == "alloc_conf"]
    assert fix.env == {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}


def test_a_message_that_names_its_own_variable_wins():
    # Some ROCm builds print CUDA's variable, others HIP's: what the message says this build reads.
    for printed in ("PYTORCH_HIP_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"):
        text = ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 23.98 GiB "
                "of which 300.00 MiB is free. Of the allocated memory 14.00 GiB is allocated by PyTorch, and 9.00 GiB is reserved "
                f"by PyTorch but unallocated. If reserved but unallocated memory is large try setting {printed}=expandable_segments:True "
                "to avoid fragmentation.")
        report = analyze_inputs([], text=text)
        assert report.error.backend == "hip"
        (fix,) = [fix for fix in _fixes(report, "fragmentation") if fix.kind == "alloc_conf"]
        assert list(fix.env) == [printed]


def test_other_processes_are_listed_with_the_cards_own_tool():
    text = ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.98 GiB "
            "of which 1.00 GiB is free. Of the allocated memory 2.00 GiB is allocated by PyTorch, and 100.00 MiB is reserved "
            "by PyTorch but unallocated.")
    report = analyze_inputs([], text=text)
    assert report.causes[0].id == "other_process_or_device"
    (free_gpu,) = [fix for fix in report.causes[0].fixes if fix.kind == "free_other_process"]
    assert free_gpu.snippet == "rocm-smi --showpids"
    assert "rocm-smi" in free_gpu.how and "HIP_VISIBLE_DEVICES" in free_gpu.how and "nvidia-smi" not in free_gpu.how
    # and the report highlights the command as shell, not Python
    assert "```bash\nrocm-smi --showpids\n```" in to_markdown(report)


def test_mps_gets_no_allocator_variable_it_does_not_have():
    text = ("RuntimeError: MPS backend out of memory (MPS allocated: 17.50 GB, other allocations: 900.00 MB, max allowed: "
            "18.13 GB). Tried to allocate 256.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper "
            "limit for memory allocations (may cause system failure).")
    report = analyze_inputs([], text=text)
    assert report.error.backend == "mps"
    dumped = report.model_dump_json()
    assert "PYTORCH_CUDA_ALLOC_CONF" not in dumped and "torch.cuda." not in dumped and "nvidia-smi" not in dumped
    assert all(fix.kind != "alloc_conf" for cause in report.causes for fix in cause.fixes)
    autocast = [fix.snippet for cause in report.causes for fix in cause.fixes if fix.snippet and "autocast" in fix.snippet]
    assert autocast and all("device_type='mps'" in snippet for snippet in autocast)


def test_fragmentation_on_mps_offers_no_cuda_setting():
    from oomtriage.engine.fixes import fixes_for
    assert [fix.kind for fix in fixes_for("fragmentation", spelling=spelling_for("mps"))] == []
    assert [fix.env for fix in fixes_for("fragmentation", spelling=spelling_for("xpu"))] == [{"PYTORCH_XPU_ALLOC_CONF": "expandable_segments:True"}]


@pytest.mark.parametrize(("backend", "text", "expected"), [
    ("npu", "local_rank = int(os.environ['LOCAL_RANK'])\ntorch.cuda.set_device(local_rank)\n"
            "state = torch.load(path, map_location=f'cuda:{local_rank}')",
     "local_rank = int(os.environ['LOCAL_RANK'])\ntorch.npu.set_device(local_rank)\n"
     "state = torch.load(path, map_location=f'npu:{local_rank}')"),
    ("xpu", "with torch.autocast(device_type='cuda', dtype=torch.bfloat16):", "with torch.autocast(device_type='xpu', dtype=torch.bfloat16):"),
    ("musa", "each created its CUDA context on cuda:0; call gc.collect() and torch.cuda.empty_cache()",
     "each created its CUDA context on musa:0; call gc.collect() and torch.musa.empty_cache()"),
    # PyTorch's ROCm build keeps torch.cuda and 'cuda' devices: only the tools and variables change
    ("hip", "torch.cuda.empty_cache() on 'cuda:0'; pick a card with CUDA_VISIBLE_DEVICES",
     "torch.cuda.empty_cache() on 'cuda:0'; pick a card with HIP_VISIBLE_DEVICES"),
    ("cuda", "torch.cuda.empty_cache() and nvidia-smi", "torch.cuda.empty_cache() and nvidia-smi"),
])
def test_spell_rewrites_cudas_names_only(backend, text, expected):
    assert spell(text, spelling_for(backend)) == expected


def test_unknown_and_host_backends_are_spelled_as_cuda():
    assert spelling_for("unknown") is CUDA and spelling_for("host") is CUDA and spelling_for(None) is CUDA
    assert set(SPELLINGS) == {"hip", "npu", "musa", "mlu", "xpu", "mps"}


def test_the_cli_report_for_an_ascend_run_names_ascend_tools():
    result = CliRunner().invoke(app, ["analyze", "-", "--format", "json"], input=FRAGMENTED.format(name="NPU", dev="NPU"))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    snippets = [fix["snippet"] for cause in report["causes"] for fix in cause["fixes"] if fix["snippet"]]
    assert "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True" in snippets
    assert not any("PYTORCH_CUDA_ALLOC_CONF" in snippet or "nvidia-smi" in snippet for snippet in snippets)


def test_a_cause_only_the_model_proposed_gets_fixes_spelled_for_the_card():
    from oomtriage.llm.merge import merge_answer
    from oomtriage.llm.schema import LLMAnswer, LLMCause

    # A HIP message whose figures point at another process: the rules do not rank fragmentation,
    # the model does, and its catalog fixes must name the variable the ROCm build reads.
    text = ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.98 GiB "
            "of which 1.00 GiB is free. Of the allocated memory 2.00 GiB is allocated by PyTorch, and 100.00 MiB is reserved "
            "by PyTorch but unallocated.")
    rules = analyze_inputs([], text=text)
    assert "fragmentation" not in [cause.id for cause in rules.causes]
    answer = LLMAnswer(analysis="the cache may be fragmented", causes=[LLMCause(
        reasoning="many differently sized requests", evidence=["2 GiB requested"], id="fragmentation", title="Fragmentation", confidence=0.4)])
    merged = merge_answer(rules, answer, model="test", exchange_id="x")
    (cause,) = [cause for cause in merged.causes if cause.id == "fragmentation"]
    assert [fix.env for fix in cause.fixes if fix.kind == "alloc_conf"] == [{"PYTORCH_HIP_ALLOC_CONF": "expandable_segments:True"}]
