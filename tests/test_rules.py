"""One test per rule of the engine, each on a synthetic input written from the mechanism the rule
states (never copied from a real case), plus the note signals in several wordings a user would
type. Each test fails if its rule is removed or stops firing."""

from __future__ import annotations

import pytest

from oomtriage.api import analyze_inputs
from oomtriage.context import build_context
from oomtriage.engine import read_signals
from oomtriage.models import Cause

GIB_MSG = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total capacity of {total} "
           "of which {free} is free. Of the allocated memory {alloc} is allocated by PyTorch, and {unalloc} is reserved "
           "by PyTorch but unallocated.")


def sentence(req="512.00 MiB", total="23.65 GiB", free="100.00 MiB", alloc="22.00 GiB", unalloc="200.00 MiB") -> str:
    return GIB_MSG.format(req=req, total=total, free=free, alloc=alloc, unalloc=unalloc)


def ranked(text: str, note: str | None = None) -> list[Cause]:
    return analyze_inputs([], text=text, note=note).causes


def ids(text: str, note: str | None = None) -> list[str]:
    return [cause.id for cause in ranked(text, note)]


def evidence_of(text: str, note: str | None, cause_id: str) -> str:
    return " ".join(next(cause.evidence for cause in ranked(text, note) if cause.id == cause_id))


def against_of(text: str, note: str | None, cause_id: str) -> str:
    return " ".join(next(cause.counter_evidence for cause in ranked(text, note) if cause.id == cause_id))


TRACE = '''Traceback (most recent call last):
  File "run.py", line 40, in <module>
    main()
  File "run.py", line 31, in {function}
    {code}
{message}'''


def trace(function: str, code: str, message: str | None = None) -> str:
    return TRACE.format(function=function, code=code, message=message or sentence())


# --- the allocator's figures -------------------------------------------------------------------

def test_fragmentation_scales_with_the_unused_cache_share():
    big = sentence(req="2.00 GiB", free="500.00 MiB", alloc="12.00 GiB", unalloc="9.00 GiB")
    sliver = sentence(req="600.00 MiB", free="500.00 MiB", alloc="22.00 GiB", unalloc="300.00 MiB")
    assert ids(big)[0] == "fragmentation"
    assert "fragmentation" not in ids(sliver)[:1]


def test_other_processes_holding_the_card_lead():
    text = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB "
            "of which 10.00 MiB is free. Process 4242 has 21.00 GiB memory in use. Process 777 has 2.40 GiB memory in use. "
            "Of the allocated memory 2.10 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated.")
    assert ids(text)[0] == "other_process_or_device"


def test_a_request_the_driver_had_room_for_is_not_the_workload():
    text = sentence(req="1.00 GiB", free="12.00 GiB", alloc="0 bytes", unalloc="0 bytes")
    assert "framework_bug" in ids(text)[:2]


def test_runtime_seeing_less_memory_than_the_device_has():
    text = sentence(req="8.00 GiB", total="15.00 GiB", free="14.90 GiB", alloc="0 bytes", unalloc="0 bytes")
    assert ids(text, "an APU with 64 GB of VRAM assigned; every allocation above about 15 GB fails")[0] == "framework_bug"


def test_single_request_larger_than_any_card_is_the_input():
    assert ids("RuntimeError: CUDA out of memory. Tried to allocate 300.00 GiB", "a custom op on my data")[0] == "input_size_too_large"


def test_power_of_two_request_in_a_transformer_is_attention():
    text = sentence(req="4.00 GiB", total="39.39 GiB", free="1.00 GiB", alloc="33.00 GiB", unalloc="1.00 GiB")
    assert ids(text, "fine-tuning a BERT encoder")[0] == "attention_quadratic"


def test_mps_watermark_cap():
    text = ("RuntimeError: MPS backend out of memory (MPS allocated: 10.00 MB, other allocations: 0 bytes, max allowed: 2.00 GB). "
            "Tried to allocate 1.00 MB on private pool.")
    assert ids(text)[0] == "other"


# --- the allocation site -------------------------------------------------------------------------

@pytest.mark.parametrize("function, code, expected", [
    ("loss_fn", "loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))", "large_logits"),
    ("step", "exp_avg_sq = torch.zeros_like(p, memory_format=torch.preserve_format)", "optimizer_state"),
    ("merge", "torch.distributed.all_gather_object(gathered, local_results)", "distributed_replication"),
    ("forward", "attn_weights = torch.softmax(scores / scale, dim=-1)", "attention_quadratic"),
    ("distances", "d = torch.zeros((n_points, n_points), device='cuda')", "input_size_too_large"),
])
def test_allocation_site_names_the_mechanism(function, code, expected):
    assert ids(trace(function, code))[0] == expected


def test_fused_attention_is_not_blamed_for_a_score_matrix():
    text = trace("forward", "y = F.scaled_dot_product_attention(q, k, v, is_causal=True)")
    assert "attention_quadratic" not in ids(text)[:3]


def test_simulator_frames_do_not_hide_the_failing_op():
    text = '''Traceback (most recent call last):
  File "train.py", line 20, in <module>
    loss = F.log_softmax(logits, dim=-1)
  File "/usr/lib/python3/site-packages/torch/overrides.py", line 1720, in handle_torch_function
    result = mode.__torch_function__(public_api, types, args, kwargs)
  File "/x/oomtriage/simulate/tracker.py", line 50, in __torch_function__
    return func(*args, **kwargs)
''' + sentence()
    assert ids(text)[0] == "large_logits"


def test_only_executed_lines_are_code_evidence(tmp_path, monkeypatch):
    script = tmp_path / "model.py"
    script.write_text("def forward(q, k, v, fused):\n"
                      "    if fused:\n"
                      "        return F.scaled_dot_product_attention(q, k, v)\n"
                      "    else:\n"
                      "        att = torch.softmax(q @ k.transpose(-2, -1), dim=-1)\n"
                      "        return att @ v\n")
    monkeypatch.chdir(tmp_path)
    text = f'''Traceback (most recent call last):
  File "{script}", line 3, in forward
    return F.scaled_dot_product_attention(q, k, v)
''' + sentence()
    context = build_context([], text=text, roots=[tmp_path])
    assert context.stack.frames[0].source_context, "the source was read"
    causes = [cause.id for cause in analyze_inputs([], text=text, source_roots=[tmp_path]).causes]
    assert "attention_quadratic" not in causes[:2]


def test_accumulated_loss_in_the_loop_is_graph_retained(tmp_path, monkeypatch):
    script = tmp_path / "train.py"
    script.write_text("total = 0\n"
                      "for x, y in loader:\n"
                      "    loss = crit(model(x), y)\n"
                      "    total += loss\n"
                      "    loss.backward()\n")
    monkeypatch.chdir(tmp_path)
    text = f'''Traceback (most recent call last):
  File "{script}", line 5, in <module>
    loss.backward()
''' + sentence()
    report = analyze_inputs([], text=text, note="it fails", source_roots=[tmp_path])
    assert report.causes[0].id == "graph_retained" and "accumulates a tensor" in " ".join(report.causes[0].evidence)


# --- phase and timing ------------------------------------------------------------------------------

@pytest.mark.parametrize("note", [
    "it crashes during validation",
    "the eval loop runs out of memory",
    "training is fine but evaluating on the test set fails",
    "OOM while running predictions with predict.py",
])
def test_evaluation_without_no_grad(note):
    assert ids("RuntimeError: CUDA error: out of memory", note)[0] == "missing_no_grad"


def test_evaluation_already_under_no_grad_is_not_missing_no_grad():
    assert ids("RuntimeError: CUDA error: out of memory", "inference is already wrapped in torch.no_grad() and it fails")[0] != "missing_no_grad"


@pytest.mark.parametrize("note", [
    "memory usage keeps increasing every iteration until it crashes",
    "it trains for a few epochs, then runs out of memory; nvidia-smi shows usage creeping up",
    "GPU memory grows with each step during training and finally OOMs",
])
def test_growth_during_training_is_a_kept_graph_or_reference(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] in ("graph_retained", "reference_leak")


def test_growth_while_generating_is_the_kv_cache():
    assert ids("RuntimeError: CUDA out of memory.", "generating long outputs; memory keeps rising with each token until it fails")[0] \
        == "kv_cache_or_generation"


@pytest.mark.parametrize("note", [
    "resuming from my last checkpoint fails with OOM",
    "when I restore the saved model and optimizer it runs out of memory",
    "reloading a checkpoint to continue training crashes",
])
def test_resume_is_checkpoint_loading(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "checkpoint_loading"


def test_failure_in_the_data_pipeline_is_host_memory():
    assert ids("RuntimeError: Caught RuntimeError in pin memory thread for device 0.", "it dies while iterating the dataloader")[0] \
        == "dataloader_or_host"


@pytest.mark.parametrize("note", [
    "it fails while constructing the model, before any batch is loaded",
    "crashes when building the network layers, before any data",
])
def test_failing_while_the_model_is_built_means_someone_else_holds_the_card(note):
    assert ids("RuntimeError: CUDA error: out of memory", note)[0] == "other_process_or_device"


def test_periodic_step_without_no_grad():
    assert ids("RuntimeError: CUDA out of memory.", "training always crashes right after iteration 2000, whatever the dataset")[0] \
        == "missing_no_grad"


def test_optimizer_setup():
    assert ids("RuntimeError: CUDA out of memory.", "it fails while creating the optimizer, before the first step")[0] == "optimizer_state"


def test_diffusion_training_on_a_small_card():
    causes = ids("RuntimeError: CUDA out of memory.", "full DreamBooth fine-tuning of a Stable Diffusion model on an 8 GB card "
                                                      "fails as soon as training begins")
    assert causes[0] == "model_too_large" and "attention_quadratic" in causes[:3]


def test_many_sequences_generated_at_once():
    assert ids("RuntimeError: CUDA out of memory.", "sampling with num_return_sequences=64 fails during generation")[0] == "kv_cache_or_generation"


# --- the workload ------------------------------------------------------------------------------------

@pytest.mark.parametrize("note", [
    "full fine-tuning a 13B model on one 40 GB A100",
    "pre-training a 7B LLM from scratch on a single 24 GB GPU",
])
def test_model_states_against_the_card(note):
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] in ("model_too_large", "optimizer_state")


@pytest.mark.parametrize("note", [
    "full fine-tuning a 4B model on one 24 GB GPU",
    "training all 4 billion parameters of the model on a single 24GB card",
])
def test_weights_and_gradients_that_do_not_fit_are_a_model_too_large(note):
    # 4B x (4 B weights + 4 B gradients) = 32 GB: more than the card before any optimizer state
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[:2] == ["model_too_large", "optimizer_state"]


def test_moments_that_push_fitting_weights_and_gradients_over_are_the_optimizer_state():
    # 2B: 16 GB of weights and gradients fit 24 GB; with Adam's two moments (32 GB in all) they do not
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", "full fine-tuning a 2B model on one 24 GB GPU")[0] == "optimizer_state"


@pytest.mark.parametrize("note", [
    "it fails while building the model: a 7B checkpoint converted on the accelerator",
    "crashes during model construction of the 7 billion parameter network",
])
def test_building_a_model_too_large_for_any_single_device(note):
    # no device size in the log; 7B x 4 B = 28 GB exceeds most single devices on its own
    assert ids("RESOURCE_EXHAUSTED: Failed to allocate request for 256.00MiB on device ordinal 0", note)[0] == "model_too_large"


def test_fp32_weights_that_would_fit_in_half():
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", "running chat inference with a 7B model on a 24 GB GPU")[0] == "full_precision"


def test_quantized_weights_are_counted_at_their_size():
    causes = ids("torch.OutOfMemoryError: CUDA out of memory.", "chat inference with a 4-bit 7B model on a 24 GB GPU")
    assert causes[0] != "full_precision"


def test_vocabulary_logits():
    assert ids("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[2048,250000]")[0] \
        == "large_logits"


def test_prompt_logprobs_materialise_every_tokens_logits():
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", "our vLLM server returns prompt log probabilities for scoring; "
                                                            "under load it crashes")[0] == "large_logits"


@pytest.mark.parametrize("note", [
    "batch size 64 on a 12 GB card",
    "running with --batch-size 128",
    "per-device batch size of 32",
])
def test_stated_batch(note):
    assert ids("RuntimeError: CUDA out of memory.", f"training a CNN, {note}; it fails at the first step")[0] == "batch_too_large"


@pytest.mark.parametrize("note", [
    "lowering the batch size did not help",
    "even with batch size 1 it still fails",
    "I reduced the batch to 2 but got the same error",
])
def test_a_batch_that_did_not_help_is_not_the_batch(note):
    assert "batch_too_large" not in ids("RuntimeError: CUDA out of memory.", f"training fails; {note}")[:1]


@pytest.mark.parametrize("note", [
    "smaller images did not help",
    "I tried smaller pictures and it still fails",
])
def test_smaller_inputs_that_did_not_help_point_at_model_states(note):
    causes = ids("RuntimeError: CUDA out of memory.", f"fine-tuning the model on a 24 GB card runs out of memory; {note}")
    assert causes[0] in ("optimizer_state", "model_too_large")


@pytest.mark.parametrize("note", [
    "transcribing a 2-hour recording fails",
    "it works on small images but not on larger images",
    "segmenting 4000x4000 satellite tiles crashes",
])
def test_large_inputs(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "input_size_too_large"


def test_long_sequences_in_a_transformer():
    causes = ids("RuntimeError: CUDA out of memory.", "training a GPT model with seq len 16384 fails")
    assert {"attention_quadratic", "input_size_too_large"} <= set(causes[:3])


# --- the framework and the environment ----------------------------------------------------------------

@pytest.mark.parametrize("note", [
    "it worked fine on version 2.1 but fails after upgrading to 2.3",
    "downgrading the library to the previous release makes it work again",
    "this regressed since the latest commit",
])
def test_version_change_is_a_framework_bug(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "framework_bug"


@pytest.mark.parametrize("note", [
    "another process is using the same GPU",
    "the card is shared with other users' jobs",
    "starting a second copy of the script on the same card fails",
])
def test_other_process_in_the_note(note):
    assert ids("RuntimeError: CUDA error: out of memory", note)[0] == "other_process_or_device"


def test_tensorflow_beside_another_framework():
    assert ids("failed to create cublas handle: CUBLAS_STATUS_ALLOC_FAILED",
               "a JAX training script that reads its data with tensorflow_datasets")[0] == "other_process_or_device"


def test_tensorflow_reservation_refused_at_start():
    text = ("2024-01-01 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_driver.cc:800] failed to allocate 10.50G "
            "(11274289152 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory")
    assert ids(text)[0] == "other_process_or_device"


def test_algorithm_search_is_a_workspace_failure():
    assert ids("RuntimeError: Failed to determine best cudnn convolution algorithm for: %cudnn-conv = (f32[8,64,64,16])")[0] \
        == "cudnn_or_workspace"


def test_library_handle_failure():
    # cuDNN's handle and its algorithms' workspaces are the library's own memory (a PyTorch cuBLAS
    # handle is not: see test_a_cublas_handle_pytorch_could_not_create_means_the_program_filled_the_card)
    assert ids("RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED")[0] == "cudnn_or_workspace"


def test_nccl_buffers():
    assert "cudnn_or_workspace" in ids("NCCL WARN Cuda failure 'out of memory'")[:2]


def test_serving_engine_reservation_at_start():
    assert ids("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`")[0] \
        == "kv_cache_or_generation"


def test_cpu_mode_but_gpu_oom():
    assert ids("RuntimeError: CUDA error: out of memory", "I run it in cpu mode (--device cpu) on a box whose GPU I do not use")[0] \
        == "other_process_or_device"


def test_host_kill_is_host_memory():
    assert ids("RuntimeError: DataLoader worker (pid 123) is killed by signal: Killed.")[0] == "dataloader_or_host"


def test_jax_growth_in_one_process_can_be_its_pool():
    assert "fragmentation" in ids("jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 3.00GiB.",
                                  "a loop over many inputs of varying shapes in one process fails partway")[:3]


def test_base_rates_follow_framework_and_phase():
    assert ids("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM")[0] == "batch_too_large"
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", "it fails while loading the weights")[0] in ("model_too_large", "checkpoint_loading")


def test_batch_from_the_command_line_says_so():
    context = build_context([], text="RuntimeError: CUDA out of memory.", note=None)
    from oomtriage.models import RuntimeInfo

    context.runtime = RuntimeInfo(argv=["train.py", "--batch-size", "256"], steps_completed=0)
    signals = read_signals(context)
    assert signals.batch_size == 256 and signals.evidence["batch_size"].startswith("the command line")
    from oomtriage.engine import triage

    evidence = " ".join(next(cause.evidence for cause in triage(context).causes if cause.id == "batch_too_large"))
    assert "command line" in evidence and "the note" not in evidence


# --- suspected OOMs ------------------------------------------------------------------------------------

def test_cut_traceback_is_suspected_and_ranked():
    text = '''Traceback (most recent call last):
  File "train.py", line 10, in <module>
    validate(model)
  File "train.py", line 5, in validate
    out = model(batch)
[...]'''
    report = analyze_inputs([], text=text)
    assert report.suspected and not report.detected and report.causes[0].id == "missing_no_grad"


def test_a_non_memory_exception_is_not_suspected():
    text = '''Traceback (most recent call last):
  File "train.py", line 10, in <module>
    x = cfg["lr"]
KeyError: 'lr'
'''
    report = analyze_inputs([], text=text, note="the run crashes")
    assert not report.suspected and not report.causes


def test_note_alone_that_says_the_run_died():
    report = analyze_inputs([], text="epoch 3 loss 0.41\n", note="training runs out of GPU memory after a few epochs")
    assert report.suspected and report.causes


@pytest.mark.parametrize("note", ["there is a memory leak in my inference loop", "GPU memory usage keeps increasing every epoch",
                                  "the VRAM keeps climbing while I call predict in a loop", "this script leaks memory on every request"])
def test_note_alone_that_says_memory_keeps_growing(note):
    report = analyze_inputs([], text="", note=note)
    assert report.suspected and not report.detected and report.causes


def test_a_note_about_memory_that_stays_flat_is_nothing_to_rank():
    report = analyze_inputs([], text="epoch 3 loss 0.41\n", note="memory stays at 3 GB the whole time and the loss goes down")
    assert not report.suspected and not report.causes


def test_nothing_to_rank():
    report = analyze_inputs([], text="epoch 3 loss 0.41\nepoch 4 loss 0.39\n")
    assert not report.suspected and not report.detected and not report.causes


def test_repeated_work_in_one_process_fragments_the_cache():
    note = "each fit() works on its own, but the second call in a loop fails"
    assert "fragmentation" in ids("RuntimeError: CUDA out of memory.", note)[:2]
    assert "repeated work" in evidence_of("RuntimeError: CUDA out of memory.", note, "fragmentation")


def test_loading_fresh_weights_is_the_model():
    note = "it fails while loading the pretrained weights"
    assert "weights were loaded" in evidence_of("torch.OutOfMemoryError: CUDA out of memory.", note, "model_too_large")


def test_generating_with_an_llm_is_the_kv_cache():
    note = "the llama model fails while generating the answer"
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "kv_cache_or_generation"
    assert "KV cache grows" in evidence_of("torch.OutOfMemoryError: CUDA out of memory.", note, "kv_cache_or_generation")


def test_failing_at_once_points_at_the_configuration():
    note = "training crashes immediately at the first step"
    assert "failed at once" in evidence_of("torch.OutOfMemoryError: CUDA out of memory.", note, "batch_too_large")


def test_second_process_of_a_preallocating_framework():
    text = "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1.00GiB."
    note = "the script works alone, but a second copy started beside it fails"
    assert ids(text, note)[0] == "other_process_or_device"
    assert "pre-allocates" in evidence_of(text, note, "other_process_or_device")


def test_autotuning_named_in_the_message():
    text = "mxnet.base.MXNetError: autotune of the convolution failed: CUDA out of memory error"
    assert "algorithm search" in evidence_of(text, None, "cudnn_or_workspace")


def _live(note: str, **runtime):
    from oomtriage.engine import triage
    from oomtriage.models import RuntimeInfo

    context = build_context([], text="torch.OutOfMemoryError: CUDA out of memory.", note=note)
    context.runtime = RuntimeInfo(**runtime)
    return triage(context).causes


def test_live_autograd_state_in_evaluation():
    assert _live("fails during validation", grad_enabled=True)[0].id == "missing_no_grad"
    assert "missing_no_grad" not in [cause.id for cause in _live("fails during validation", grad_enabled=False)][:1]


def test_live_fp32_memory_without_autocast():
    causes = _live("it fails in training", dtype_shares={"float32": 0.99}, autocast_enabled=False, argv=["t.py", "--batch-size", "4"])
    assert "float32" in " ".join(next(cause.evidence for cause in causes if cause.id == "full_precision"))


def test_live_large_batch_that_failed_at_once():
    causes = _live("it fails in training", argv=["t.py", "--batch-size", "512"], steps_completed=0)
    assert causes[0].id == "batch_too_large" and any("512" in item for item in causes[0].evidence)


def test_allocator_retries_in_memory_stats(tmp_path):
    import json

    stats = tmp_path / "stats.json"
    stats.write_text(json.dumps({"allocated_bytes.all.current": 10 * 2**30, "reserved_bytes.all.current": 20 * 2**30,
                                 "num_alloc_retries": 9, "num_ooms": 1}))
    report = analyze_inputs([stats], text=sentence(req="2.00 GiB", free="500.00 MiB", alloc="10.00 GiB", unalloc="10.00 GiB"))
    assert "num_alloc_retries" in " ".join(next(cause.evidence for cause in report.causes if cause.id == "fragmentation"))


def test_live_small_batch_counts_against_the_batch():
    causes = _live("it fails in training", argv=["t.py", "--batch-size", "2"], steps_completed=5)
    batch = next((cause for cause in causes if cause.id == "batch_too_large"), None)
    assert batch is None or any("already 2" in item for item in batch.counter_evidence)
    assert batch is None or not any("already 2" in item for item in batch.evidence)
    assert "batch_too_large" not in [cause.id for cause in causes][:1]


def test_the_first_step_after_evaluation_is_not_at_once():
    signals = read_signals(build_context([], text="torch.OutOfMemoryError: CUDA out of memory.",
                                         note="fails on the first training step after evaluation"))
    assert not signals.immediate and signals.repeated_calls


@pytest.mark.parametrize("note, phase", [
    ("the test script fails with CUDA out of memory, while the training script runs fine", "evaluation"),
    ("Training works fine but evaluation runs out of memory.", "evaluation"),
    ("inference is fine; fine-tuning crashes with an OOM", "training"),
    ("validation ran without problems, then the next training epoch died", "training"),
    ("it crashes in the eval loop although training goes smoothly", "evaluation"),
])
def test_the_phase_that_went_well_is_not_where_it_failed(note, phase):
    from oomtriage.engine.signals import note_phase

    assert note_phase(note)[0] == phase



@pytest.mark.parametrize("note", [
    "usage rises every epoch until it dies in epoch 5",
    "memory keeps growing over time and it eventually crashes",
])
def test_growth_in_a_librarys_own_cuda_malloc_is_the_library(note):
    message = ("CUDA Runtime Error at: /opt/lib/src/buffers_cuda.cu:120\nout of memory cudaMalloc(&this->d_buffer, n * sizeof(float))")
    assert ids(message, note)[0] == "framework_bug"
    # the same growth in PyTorch's allocator is the program's (a kept graph or reference)
    assert ids("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.", f"training: {note}")[0] != "framework_bug"


@pytest.mark.parametrize("note, phase", [
    ("training a ResNet on our 16 GB GPU server dies in epoch 4", "training"),
    ("starting a vLLM server on one 24 GB GPU fails", "generation"),
    ("the inference server crashes when two requests arrive", "generation"),
])
def test_a_server_is_serving_only_when_it_serves_a_model(note, phase):
    from oomtriage.engine.signals import note_phase

    assert note_phase(note)[0] == phase



@pytest.mark.parametrize("note", [
    "every iteration I delete the loss, outputs and targets and call torch.cuda.empty_cache(), yet after some iterations it runs out of memory",
    "I free all tensors after each step and memory still keeps growing until it crashes",
    "memory grows over time even though I call empty_cache() after every batch and del the outputs every iteration",
])
def test_growth_although_the_script_frees_everything_each_iteration(note):
    assert ids("RuntimeError: CUDA out of memory.", f"training a small conv net: {note}")[0] == "framework_bug"



def test_a_request_beyond_what_the_runtime_sees_but_within_the_device():
    message = ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 16.00 GiB. GPU 0 has a total capacity of 15.24 GiB of "
               "which 15.00 GiB is free.")
    causes = ids(message, "the APU has 96 GB of memory assigned to the GPU, yet any allocation of 16 GB fails")
    assert causes[0] == "framework_bug"
    # without the device's real size, one tensor larger than the device is the input's
    assert ids(message, "segmenting large volumes fails")[0] == "input_size_too_large"



@pytest.mark.parametrize("code", [
    "state['exp_avg_sq'] = torch.zeros_like(p, memory_format=torch.preserve_format)",
    "model.load_state_dict(torch.load(path))",
])
def test_a_large_request_from_state_or_weights_is_not_an_activation(code):
    causes = ranked(trace("step", code, sentence(req="6.00 GiB")))
    assert causes[0].id in ("optimizer_state", "checkpoint_loading")
    assert not any("activation" in item for cause in causes for item in cause.evidence if cause.id == "batch_too_large")


# --- the job's own ranks, 32-bit floats, negated notes -------------------------------------------

def _processes_message(*used: str) -> str:
    listed = " ".join(f"Process {4000 + index} has {size} memory in use." for index, size in enumerate(used))
    return ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of "
            f"39.39 GiB of which 12.00 MiB is free. {listed} Including non-PyTorch memory, this process has 30.10 GiB "
            "memory in use. Of the allocated memory 28.20 GiB is allocated by PyTorch, and 900.00 MiB is reserved by "
            "PyTorch but unallocated.")


def test_identical_small_processes_on_one_gpu_are_the_jobs_own_ranks():
    text = _processes_message("1.02 GiB", "1.02 GiB", "1.03 GiB", "1.02 GiB", "1.01 GiB", "1.02 GiB", "1.02 GiB")
    causes = ids(text)
    assert causes[0] == "distributed_replication"
    assert "set_device" in evidence_of(text, None, "distributed_replication")


def test_two_alike_processes_are_ranks_only_in_a_distributed_job():
    text = _processes_message("850.00 MiB", "870.00 MiB")
    assert "distributed_replication" not in ids(text)[:1]
    assert ids(text, "launched with torchrun on 2 GPUs, one process per GPU")[0] == "distributed_replication"


def test_unlike_processes_are_someone_else():
    text = _processes_message("6.00 GiB", "1.10 GiB", "2.50 GiB")
    assert ids(text)[0] != "distributed_replication"


@pytest.mark.parametrize("note", [
    "memory rises with every test image until it fails",
    "GPU usage keeps growing batch after batch while evaluating",
    "running inference over the dataset, memory climbs steadily and then OOMs",
])
def test_growth_in_evaluation_is_outputs_kept_across_batches(note):
    top3 = ids("RuntimeError: CUDA out of memory.", note)[:3]
    assert "graph_retained" in top3 and "missing_no_grad" in top3


@pytest.mark.parametrize("note", [
    "the model is loaded in fp32",
    "I run it with --no-half because of black images",
    "weights stay float32, the default dtype",
    "inference in full precision on a 12 GB card",
    "the pipeline uses torch.float for everything",
])
def test_a_note_that_says_32_bit_floats(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "full_precision"


@pytest.mark.parametrize("note", ["I already use fp16", "loaded with torch_dtype=torch.bfloat16", "it runs in half precision now"])
def test_half_precision_is_not_full_precision(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert signals.low_precision


def test_generative_inference_whose_tensors_fill_the_card_suggests_fp32_weights():
    text = sentence(req="40.00 MiB", total="11.00 GiB", free="30.00 MiB", alloc="10.20 GiB", unalloc="100.00 MiB")
    note = "running a text-to-image diffusion pipeline's inference script on one GPU"
    assert "full_precision" in ids(text, note)[:3]
    assert "full_precision" not in ids(text, note + " with torch_dtype=torch.float16")[:3]
    # Training is not inference: its memory is gradients and optimizer state as much as weights.
    assert "full_precision" not in ids(text, "fine-tuning a diffusion model")[:2]


@pytest.mark.parametrize("note", [
    "nvidia-smi shows no other process on the GPU",
    "there is no other job on this card",
    "I am not running any other program",
])
def test_a_denied_other_process_is_no_other_process(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert not signals.other_process_hint


def test_free_memory_just_above_the_request_is_not_room():
    barely = sentence(req="20.00 MiB", total="10.73 GiB", free="20.06 MiB", alloc="9.87 GiB", unalloc="10.00 MiB")
    plenty = sentence(req="1.00 GiB", total="10.73 GiB", free="6.00 GiB", alloc="3.00 GiB", unalloc="10.00 MiB")
    assert "framework_bug" not in ids(barely)[:3]
    assert "framework_bug" in ids(plenty)[:2]
    # The facts say the same as the rules: no "more free than requested" for a rounding's worth.
    def facts(text):
        return {fact.name for fact in analyze_inputs([], text=text).facts}
    assert "request_below_free" not in facts(barely) and "request_below_free" in facts(plenty)


@pytest.mark.parametrize(("note", "phase"), [
    ("Testing the trained model gives CUDA out of memory.", "evaluation"),
    ("Running inference with a pretrained checkpoint on a folder of images fails.", "evaluation"),
    ("Predicting with my fine-tuned model runs out of memory.", "evaluation"),
    ("torch.load of the saved model fails.", "loading"),
    ("The dataloader workers get killed.", "data_loading"),
    ("We trained it for a day before the OOM.", "training"),
])
def test_note_phase_reads_what_is_run_not_how_it_was_made(note, phase):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert signals.phase == phase


@pytest.mark.parametrize(("note", "flag"), [
    ("usage slowly grows during training", "growth"),
    ("it works for 3 epochs and then OOMs", "growth"),
    ("after ~2000 iterations it runs out of memory", "growth"),
    ("VRAM usage accumulates over the epoch", "growth"),
    ("OOM right at the beginning of training", "immediate"),
    ("it fails before a single step completes", "immediate"),
    ("nvidia-smi shows a zombie process holding 10 GB", "other_process_hint"),
    ("a previous run is still holding the memory", "other_process_hint"),
    ("worked fine last month, now fails", "upgrade_regression"),
])
def test_note_signals_in_more_wordings(note, flag):
    assert getattr(read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)), flag)


@pytest.mark.parametrize("note", ["memory does not grow over time, it fails at once", "the memory never increases"])
def test_denied_growth_is_no_growth(note):
    assert not read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).growth


@pytest.mark.parametrize(("note", "name", "value"), [
    ("a 7-billion-parameter model", "param_count", 7e9),
    ("serving Mixtral 8x7B", "param_count", 45e9),
    ("on a 4090", "note_gpu_capacity", 24e9),
    ("Colab's free T4", "note_gpu_capacity", 16e9),
    ("my 3060 Ti", "note_gpu_capacity", 8e9),
    ("bs=32", "batch_size", 32),
    ("4k context", "seq_len", 4096),
    ("two RTX 3090s", "gpu_count", 2),
])
def test_workload_numbers_in_more_wordings(note, name, value):
    got = getattr(read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)), name)
    assert got is not None and abs(got - value) <= 0.1 * value


@pytest.mark.parametrize("note", ["images of 1920x1080", "a 1080p video", "the year 2080 model"])
def test_a_bare_number_is_not_a_gpu(note):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).note_gpu_capacity is None


# --- the allocator's settings, one GPU heavier than the others, gathering to save ----------------

@pytest.mark.parametrize("note", [
    "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True fixed it",
    "with max_split_size_mb=512 the run works",
    "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True and the error goes away",
])
def test_an_allocator_setting_that_helped_is_fragmentation(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "fragmentation"


def test_an_allocator_setting_that_did_not_help_is_not_fragmentation():
    text = sentence(req="2.00 GiB", free="500.00 MiB", alloc="18.00 GiB", unalloc="3.00 GiB")
    def confidence(note):  # the combined vote, before calibration
        return next(cause.score for cause in ranked(text, note) if cause.id == "fragmentation")

    assert ids(text)[0] == "fragmentation"
    assert confidence("I tried max_split_size_mb:128 but it did not help") <= confidence(None) - 0.2


def test_a_large_idle_cache_despite_expandable_segments_is_a_setting_not_taking_effect():
    text = sentence(req="1.00 GiB", free="300.00 MiB", alloc="19.00 GiB", unalloc="3.50 GiB")
    note = "running with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True exported in the launcher"
    assert "framework_bug" in ids(text, note)[:2]
    assert "did not take effect" in evidence_of(text, note, "framework_bug")


@pytest.mark.parametrize("note", ["it looks like fragmentation to me", "reserved memory is much larger than allocated"])
def test_fragmentation_in_the_note(note):
    assert "fragmentation" in ids("RuntimeError: CUDA out of memory.", note)[:2]


def test_an_idle_cache_larger_than_a_large_request_is_fragmentation_evidence():
    text = sentence(req="600.00 MiB", total="15.77 GiB", free="500.00 MiB", alloc="14.20 GiB", unalloc="800.00 MiB")
    small = sentence(req="20.00 MiB", total="15.77 GiB", free="10.00 MiB", alloc="15.20 GiB", unalloc="30.00 MiB")
    assert "fragmentation" in ids(text)[:2]
    assert "fragmentation" not in ids(small)[:3]


@pytest.mark.parametrize("note", [
    "training on 4 GPUs with DDP, GPU 0 uses far more memory than the others and runs out",
    "with torchrun on 8 GPUs only rank 0 runs out of memory",
    "multi-GPU training: the memory is unbalanced, the first GPU fills up while the other GPUs use half",
    "training on 8 GPUs, all the GPU memory is occupied by card 0 and then it OOMs",
    "multi-GPU training, GPU 0 uses a lot of memory so I cannot use a big batch size",
    "horovod on 8 GPUs: there are several processes on gpu 0 taking memory",
])
def test_one_gpu_heavier_than_the_others(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "distributed_replication"


def test_data_parallel_gathers_on_gpu_zero():
    note = "wrapping the model in nn.DataParallel over 2 GPUs and training"
    assert "distributed_replication" in ids("RuntimeError: CUDA out of memory.", note)[:2]
    assert "gathers" in evidence_of("RuntimeError: CUDA out of memory.", note, "distributed_replication")


@pytest.mark.parametrize("note", [
    "FSDP training on 8 GPUs works, but it runs out of memory when saving the checkpoint",
    "with DeepSpeed ZeRO-3 the OOM happens in save_model at the end of the epoch",
])
def test_saving_a_sharded_model_gathers_it_on_one_rank(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "distributed_replication"


def test_saving_mentioned_outside_the_failure_is_not_where_it_failed():
    note = "I save the checkpoint every epoch. Training on 2 GPUs with DDP fails in the first epoch with OOM."
    assert not read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).saving


def test_a_model_that_fits_twice_over_failing_to_load_is_the_loading():
    text = sentence(req="500.00 MiB", total="23.65 GiB", free="200.00 MiB", alloc="21.50 GiB", unalloc="300.00 MiB")
    small = "loading the weights of a 1.3B model from_pretrained on a 24 GB card fails"
    huge = "loading the weights of a 13B model from_pretrained on a 24 GB card fails"
    assert ids(text, small)[0] == "checkpoint_loading"
    assert ids(text, huge)[0] in ("model_too_large", "full_precision")


def test_the_loaders_placement_options_in_the_note():
    assert ids("RuntimeError: CUDA out of memory.", "loading the model weights fails; should I pass map_location?")[0] == "checkpoint_loading"


def test_every_rank_loading_its_own_copy():
    note = "with torchrun on 4 GPUs, each process calls torch.load on the pretrained weights and loading fails"
    assert "distributed_replication" in ids("RuntimeError: CUDA out of memory.", note)[:3]


@pytest.mark.parametrize("note", [
    "going from 2 to 8 GPUs did not reduce the memory each GPU needs",
    "I get the same out of memory error with 4 GPUs as with one",
    "memory per GPU stays the same when I add cards",
    "with DDP each GPU keeps a full copy of the model and it does not fit",
])
def test_more_gpus_that_did_not_help_is_replication(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "distributed_replication"


def test_unsharded_multi_gpu_training_of_a_language_model_suggests_replication():
    note = "full fine-tuning of a llama model with torchrun on 4 GPUs"
    assert "distributed_replication" in ids("RuntimeError: CUDA out of memory.", note)[:3]
    assert "distributed_replication" not in ids("RuntimeError: CUDA out of memory.", note + " with FSDP")[:1]


@pytest.mark.parametrize("note", [
    "reserved memory keeps growing while allocated memory stays constant",
    "allocated is stable at 6 GB but cached memory increases every epoch",
])
def test_a_growing_cache_over_flat_tensors_is_fragmentation(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "fragmentation"


@pytest.mark.parametrize("note", [
    "setting TF_GPU_ALLOCATOR=cuda_malloc_async fixed it",
    "XLA_PYTHON_CLIENT_ALLOCATOR=platform solved the OOM",
])
def test_other_frameworks_allocator_settings_that_helped(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "fragmentation"


@pytest.mark.parametrize("note", [
    "the OOM is raised when computing the cross-entropy loss",
    "it fails in the lm_head projection of the last layer",
    "training crashes at the output layer, we have a huge vocabulary",
])
def test_the_output_layer_named_where_it_failed(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "large_logits"


def test_logits_named_outside_the_failure_are_not_where_it_failed():
    note = "We log the logits for debugging. Evaluation crashes with an OOM."
    assert not read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).logits_said


@pytest.mark.parametrize("note", ["it works with fp16 but OOMs with fp32", "it runs on 8 GPUs but not on 2",
                                  "a 7B model would fit in 24 GB", "after switching to a bigger model it fails"])
def test_a_number_that_is_not_a_version_is_no_version_change(note):
    assert not read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).upgrade_regression


@pytest.mark.parametrize("note", ["it worked on version 1.12", "worked with torch 2.0.1, fails on 2.1",
                                  "since updating transformers to 4.40 it fails", "it used to work"])
def test_a_version_that_worked(note):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).upgrade_regression


def test_a_failure_on_gpu_zero_is_not_gpu_zero_holding_more():
    assert not read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                          note="training on 2 GPUs fails with an OOM on GPU 0")).rank0_heavy


def test_saving_under_plain_ddp_gathers_nothing():
    note = "DDP training on 4 GPUs runs out of memory when saving the checkpoint"
    assert "gathered" not in evidence_of("RuntimeError: CUDA out of memory.", note, ids("RuntimeError: CUDA out of memory.", note)[0])


def test_variable_size_inputs_failing_partway_include_fragmentation():
    note = "training a speech recognition model on utterances of variable length, it fails after a few thousand steps"
    assert "fragmentation" in ids("RuntimeError: CUDA out of memory.", note)[:4]


@pytest.mark.parametrize("note", [
    "GRPO training with vLLM rollouts colocated on the same 8 GPUs fails at the second step",
    "PPO with the inference engine in sleep mode between rollouts runs out of memory when the actor reloads",
])
def test_a_trainer_beside_an_inference_engine(note):
    top3 = ids("RuntimeError: CUDA out of memory.", note)[:3]
    assert "fragmentation" in top3 and "other_process_or_device" in top3


def test_torch_load_restoring_storages_on_the_gpu_is_checkpoint_loading():
    text = '''Traceback (most recent call last):
  File "demo.py", line 50, in <module>
    checkpoint = torch.load(args.weights)
  File "/usr/lib/python3/site-packages/torch/serialization.py", line 426, in load
    return _load(f, map_location, pickle_module, **pickle_load_args)
  File "/usr/lib/python3/site-packages/torch/serialization.py", line 613, in _load
    result = unpickler.load()
  File "/usr/lib/python3/site-packages/torch/serialization.py", line 576, in persistent_load
    deserialized_objects[root_key] = restore_location(obj, location)
  File "/usr/lib/python3/site-packages/torch/serialization.py", line 155, in default_restore_location
    result = fn(storage, location)
  File "/usr/lib/python3/site-packages/torch/serialization.py", line 135, in _cuda_deserialize
    return storage_type(obj.size())
  File "/usr/lib/python3/site-packages/torch/cuda/__init__.py", line 634, in _lazy_new
    return super(_CudaBase, cls).__new__(cls, *args, **kwargs)
RuntimeError: CUDA error: out of memory'''
    assert ids(text)[0] == "checkpoint_loading"


@pytest.mark.parametrize("note", [
    "the OOM happens in validation_step of my LightningModule",
    "running trainer.validate() with PyTorch Lightning fails",
    "evaluating with mmdet's test tool on the val set fails",
])
def test_a_framework_run_evaluation_already_has_no_grad(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] != "missing_no_grad"
    assert ids("RuntimeError: CUDA out of memory.", "my own evaluation loop fails")[0] == "missing_no_grad"


@pytest.mark.parametrize("note", [
    "adding two tensors of shapes (200000, 1) and (200000,) runs out of memory",
    "loss = (pred - target) ** 2 with pred of shape [100000, 1] and target [100000] fails",
    "multiplying torch.Size([300000, 1, 1]) by a torch.Size([300000, 1]) mask fails with OOM",
])
def test_shapes_whose_broadcast_is_an_outer_product(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "other"
    assert "broadcast" in ranked("RuntimeError: CUDA out of memory.", note)[0].title.lower() + \
        " ".join(ranked("RuntimeError: CUDA out of memory.", note)[0].evidence).lower()


def test_shapes_that_broadcast_modestly_are_no_blowup():
    assert "other" not in ids("RuntimeError: CUDA out of memory.", "a (64, 512) tensor plus a (1, 512) bias")[:1]


@pytest.mark.parametrize("note", [
    "two 4 GiB buffers on a 32 GB card should fit easily, yet the second allocation fails",
    "the tensors are well within the GPU's memory and the allocation still fails",
    "there is more than enough free memory and it still cannot allocate",
])
def test_a_request_the_user_knows_fits_is_below_the_workload(note):
    assert ids("MemoryError: std::bad_alloc: CUDA error: cudaErrorMemoryAllocation out of memory", note)[0] == "framework_bug"


def test_offloaded_optimizer_states_are_not_on_the_gpu():
    text = sentence(req="1.00 GiB", total="23.65 GiB", free="300.00 MiB", alloc="22.00 GiB", unalloc="200.00 MiB")
    note = "full fine-tuning of a 7B model with DeepSpeed ZeRO-3 on 4 GPUs of 24 GB"
    assert ids(text, note)[0] == "optimizer_state"
    offloaded = ids(text, note + " with offload_optimizer to cpu")
    assert offloaded[0] != "optimizer_state"


@pytest.mark.parametrize("note", [
    "system RAM usage climbs until the machine freezes, GPU memory is fine",
    "the job gets killed by the oom-killer while the dataset is read",
    "host memory runs out during the first epoch",
])
def test_host_ram_named_in_the_note(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "dataloader_or_host"


def test_a_card_full_outside_pytorch():
    note = "the memory used by pytorch is small but nvidia-smi shows the card full"
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "other_process_or_device"


@pytest.mark.parametrize("note", ["only happens with torch.compile; eager mode works",
                                  "in eager mode it fits, with torch.compile it runs out of memory"])
def test_only_the_compiled_program_runs_out(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "framework_bug"


GGML_LOG = """llm_load_tensors: offloading 32 repeating layers to GPU
llm_load_tensors: CUDA0 buffer size = 3820.93 MiB
{middle}ggml_backend_cuda_buffer_type_alloc_buffer: allocating {size} MiB on device 0: cudaMalloc failed: out of memory
{after}"""


@pytest.mark.parametrize(("middle", "after", "cause"), [
    ("llama_kv_cache_init: allocating the KV cache for 32768 tokens\n", "llama_kv_cache_init: failed to allocate buffer for kv cache\n",
     "kv_cache_or_generation"),
    ("", "llama_model_load: error loading model: unable to allocate CUDA0 buffer\n", "model_too_large"),
])
def test_which_llama_cpp_buffer_failed(middle, after, cause):
    text = GGML_LOG.format(middle=middle, after=after, size="4096.00")
    assert ids(text)[0] == cause
    assert "The buffer that failed is" in evidence_of(text, None, cause)


def test_a_bfc_pool_with_room_for_the_request_is_fragmented():
    stats = ("W tensorflow/core/common_runtime/bfc_allocator.cc:456] Allocator (GPU_0_bfc) ran out of memory trying to allocate "
             "1.50GiB (rounded to 1610612736)requested by op Conv2D\n"
             "I tensorflow/core/common_runtime/bfc_allocator.cc:1040] Stats:\n"
             "Limit:                 15000000000\nInUse:                  9000000000\nMaxInUse:              12000000000\n"
             "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape"
             "[64,256,128,96] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc")
    full = stats.replace("InUse:                  9000000000", "InUse:                 14500000000")
    assert "fragmentation" in ids(stats)[:2]
    assert "the pool is fragmented" in evidence_of(stats, None, "fragmentation")
    assert "fragmentation" not in ids(full)[:2]


def test_a_collective_of_the_set_up_failing_is_every_rank_on_gpu_zero():
    text = '''Traceback (most recent call last):
  File "train_ddp.py", line 88, in <module>
    main()
  File "train_ddp.py", line 40, in main
    torch.distributed.barrier()
  File "/opt/venv/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 3680, in barrier
    work = default_pg.barrier(opts=opts)
RuntimeError: CUDA error: out of memory'''
    assert ids(text)[0] == "distributed_replication"
    assert "set_device" in evidence_of(text, None, "distributed_replication")


def test_a_request_the_size_of_the_logits_over_a_common_vocabulary():
    # 4 x 2048 tokens x 128,256 entries x 4 bytes = 3.91 GiB
    text = sentence(req="3.91 GiB", total="79.15 GiB", free="2.10 GiB", alloc="74.00 GiB", unalloc="1.00 GiB")
    note = "fine-tuning a llama model with batch size 4 and max_seq_length 2048"
    assert ids(text, note)[0] == "large_logits"
    assert "8,192 tokens x a 128," in evidence_of(text, note, "large_logits")
    assert "large_logits" not in ids(sentence(req="1.37 GiB", total="79.15 GiB", free="1.00 GiB", alloc="74.00 GiB",
                                               unalloc="1.00 GiB"), note)[:1]
    # 1.50 GiB is 8192 tokens x 49,152 x 4 bytes and also 6 heads x 8192² x 4 bytes: no evidence.
    attention = sentence(req="1.50 GiB", total="79.15 GiB", free="1.00 GiB", alloc="74.00 GiB", unalloc="1.00 GiB")
    assert "large_logits" not in ids(attention, "a llama model at seq_len 8192")[:1]


def test_confidences_are_calibrated_and_keep_the_order():
    from oomtriage.engine.calibration import calibrate

    causes = ranked(sentence(req="2.00 GiB", free="500.00 MiB", alloc="12.00 GiB", unalloc="9.00 GiB"), "it crashes during validation")
    assert [cause.confidence for cause in causes] == sorted((cause.confidence for cause in causes), reverse=True)
    assert all(cause.confidence == calibrate(cause.score) for cause in causes)
    # A lone base-rate vote is rarely the root cause on real reports; a decisive figure usually is.
    assert calibrate(0.2) < 0.05 and calibrate(0.95) > 0.9
    assert all(calibrate(a / 100) <= calibrate(b / 100) for a, b in zip(range(100), range(1, 101)))


@pytest.mark.parametrize("note", [
    "the OOM happens at the first optimizer.step()",
    "forward and backward work but the optimizer step runs out of memory",
    "with AdamW it OOMs, with SGD it fits",
    "switching from SGD to Adam makes it run out of memory",
])
def test_the_optimizer_step_named_as_what_fails(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "optimizer_state"


# --- every cause from a note alone, in the words a user types (no figures in the message) --------

NOTE_ONLY_CASES = {
 "batch_too_large": ["training ResNet-50 with batch size 256 on an 8 GB card fails on the first step",
                     "it works with batch_size=16 but OOMs at 64", "increasing the batch size from 8 to 32 makes it run out of memory"],
 "input_size_too_large": ["it works on 512x512 images but fails on 2048x2048", "long audio files of 30 minutes crash inference",
                          "it fails only on the largest point clouds in the dataset"],
 "model_too_large": ["loading a 70B model on a single 24 GB card fails", "even in 4-bit the 65B model does not fit on my 16 GB GPU",
                     "a 13B model in fp16 on a 12 GB card runs out of memory while loading"],
 "optimizer_state": ["full fine-tuning of a 7B model with AdamW on an 80 GB A100 fails at the first step",
                     "with AdamW it OOMs, with SGD it fits", "it fails when the optimizer state is created"],
 "missing_no_grad": ["my eval loop runs out of memory although training works", "the predict function fails after a few hundred images",
                     "inference on the test set crashes with OOM"],
 "graph_retained": ["I accumulate total_loss += loss every step and memory keeps growing",
                    "memory grows every iteration since I added retain_graph=True", "storing the losses in a list makes memory grow each step"],
 "reference_leak": ["I keep all predictions in a list on the GPU and memory grows", "memory grows every batch because I cache the outputs in a dict",
                    "appending the output tensors to a list each step leaks GPU memory"],
 "fragmentation": ["reserved memory is much larger than allocated when it fails", "setting expandable_segments:True fixed it",
                   "it fails after many iterations with varying sequence lengths although allocated memory is flat"],
 "other_process_or_device": ["another process is using the GPU", "nvidia-smi shows a zombie process holding 10 GB",
                             "the memory used by pytorch is small but nvidia-smi shows the card full"],
 "full_precision": ["the model runs in fp32 on a 12 GB card", "inference with --no-half fails", "weights are float32; in fp16 it would fit"],
 "large_logits": ["it fails computing the cross-entropy over a 250k vocabulary", "the lm_head output is huge and it OOMs there",
                  "extreme classification with 1 million classes runs out of memory at the softmax"],
 "attention_quadratic": ["at 16k sequence length the attention runs out of memory",
                         "the self-attention over 64x64 latents OOMs"],
 "kv_cache_or_generation": ["generate() with num_beams=8 runs out of memory", "vLLM fails at startup: not enough memory for the KV cache",
                            "memory grows with every generated token until OOM"],
 "checkpoint_loading": ["torch.load of the checkpoint runs out of GPU memory", "resuming from a checkpoint fails with OOM",
                        "loading the state dict puts a second copy on the GPU"],
 "dataloader_or_host": ["system RAM fills up with num_workers=16", "the job gets killed by the oom-killer"],
 "cudnn_or_workspace": ["with cudnn.benchmark = True it fails", "cuDNN fails to allocate its workspace", "CUBLAS_STATUS_ALLOC_FAILED at start-up"],
 "distributed_replication": ["with DDP on 8 GPUs, GPU 0 holds far more memory than the others",
                             "adding more GPUs did not reduce per-GPU memory", "every rank loads the checkpoint onto cuda:0"],
 "framework_bug": ["it started after upgrading to torch 2.1", "the same script worked on version 1.13", "memory grows although I free everything every iteration"],
}


@pytest.mark.parametrize(("label", "note"), [(label, note) for label, notes in NOTE_ONLY_CASES.items() for note in notes])
def test_each_cause_from_a_note_alone(label, note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == label


# The same causes in other words (written without looking at the readers' patterns).
NOTE_ONLY_REWORDED = {
 "batch_too_large": ["bs 128 crashes right away, bs 32 trains fine", "I set a batch size of 512 and the first forward pass fails"],
 "input_size_too_large": ["high resolution 4K images make the network run out of memory", "sequences of 32k tokens fail while 2k ones pass"],
 "model_too_large": ["trying to load llama 70b on one 3090", "the 30B model alone is bigger than my 24GB card even in fp16"],
 "optimizer_state": ["OOM exactly when the first Adam step runs", "the optimizer states of Adam push it over the limit"],
 "missing_no_grad": ["validation after each epoch crashes, training itself is fine", "running model(x) in a loop over test images fills the GPU"],
 "graph_retained": ["running_loss = running_loss + loss grows memory", "I added loss.backward(retain_graph=True) and memory climbs"],
 "reference_leak": ["I save every batch's embeddings into a python list and memory grows", "metrics store all outputs on the GPU until the epoch ends"],
 "fragmentation": ["reserved is 20 GB but allocated only 12 GB when it dies", "using PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solved it"],
 "other_process_or_device": ["a second training job runs on the same card", "someone else's notebook holds most of the GPU memory"],
 "full_precision": ["everything runs in float32 on my 8 GB laptop GPU", "the pipeline is loaded without torch_dtype so it uses fp32 and OOMs"],
 "large_logits": ["the logits tensor over our 200k vocabulary is what fails", "computing cross entropy over 500k classes runs out of memory"],
 "attention_quadratic": ["the attention matrix at 32k context does not fit", "self-attention over long sequences explodes memory"],
 "kv_cache_or_generation": ["beam search with 16 beams runs out of memory", "the KV cache for 128k context does not fit"],
 "checkpoint_loading": ["torch.load(ckpt) without map_location fails on the busy GPU", "restoring the checkpoint puts every tensor on cuda:0 and OOMs"],
 "dataloader_or_host": ["the machine's RAM runs out with 32 dataloader workers", "host memory exhausted while pinning memory"],
 "cudnn_or_workspace": ["turning on torch.backends.cudnn.benchmark makes it run out of memory", "cudnn could not allocate a workspace for the convolution"],
 "distributed_replication": ["with 4 GPUs each one still needs the same memory as with one", "all processes end up on GPU 0 with torchrun"],
 "framework_bug": ["after updating pytorch to 2.2 the same training OOMs", "worked yesterday with the previous release, fails with the new one"],
}


@pytest.mark.parametrize(("label", "note"), [(label, note) for label, notes in NOTE_ONLY_REWORDED.items() for note in notes])
def test_each_cause_from_a_reworded_note(label, note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == label


@pytest.mark.parametrize("note", ["reserved is 20 GB but allocated only 12 GB when it dies",
                                  "allocated memory was 9.5GB and reserved memory was 14GB at the crash"])
def test_reserved_and_allocated_figures_in_the_note(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert signals.note_reserved > signals.note_allocated > 0
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "fragmentation"


# A third wording, longer and closer to how a report reads.
NOTE_ONLY_THIRD_WORDING = {
 "batch_too_large": ["My UNet trains with 4 images per batch, with 16 per batch it dies on iteration 0.", "Can't go above a mini-batch of 8 on my 2080, bigger mini-batches crash."],
 "input_size_too_large": ["Segmentation on whole-slide images at full resolution crashes; downsampled tiles are fine.", "Transcribing a two-hour podcast in one go fails, short clips work."],
 "model_too_large": ["Just moving the 40B model to the GPU with .cuda() fails before any input.", "The weights of the 34B checkpoint are 68 GB in bf16 and my A100 has 40 GB."],
 "optimizer_state": ["Forward and backward complete, then opt.step() raises the OOM.", "Full fine-tune with Adam of a 3B model on 24GB: LoRA works, full training dies at the update."],
 "missing_no_grad": ["During the test phase, memory increases until crash; I never wrapped it in no_grad.", "Inference script keeps a graph for every sample since requires_grad is on."],
 "graph_retained": ["I log loss to a list (not loss.item()) and memory goes up every iteration.", "epoch_loss += criterion(out, y) each step, memory climbs each step."],
 "reference_leak": ["We cache the hidden states of every batch in self.cache and it grows.", "All attention maps are appended to a global list for visualisation, memory climbs."],
 "fragmentation": ["torch.cuda.memory_reserved() keeps going up though memory_allocated() stays put.", "Lots of free memory in the cache but not in one piece: fragmentation?"],
 "other_process_or_device": ["My colleague's job occupies the same GPU.", "An old Jupyter kernel still holds GPU memory."],
 "full_precision": ["I never enabled mixed precision; everything is fp32.", "Loading the diffusion pipeline in torch.float32 on a 10GB card."],
 "large_logits": ["The loss over a 256000-token vocabulary is where it dies.", "The final classifier has 2 million output classes and the softmax OOMs."],
 "attention_quadratic": ["Vanilla attention without FlashAttention at 8192 tokens OOMs.", "The QK^T scores matrix for long inputs is what runs out."],
 "kv_cache_or_generation": ["model.generate with max_new_tokens=4096 runs out after a while.", "num_return_sequences=20 during sampling crashes."],
 "checkpoint_loading": ["torch.load restores the optimizer tensors onto the GPU and it fails.", "Reloading the saved model on a different GPU than it was saved on fails with OOM."],
 "dataloader_or_host": ["The container gets OOM-killed; dmesg shows the python process using 60 GB of RAM.", "Pinned memory with large prefetch_factor exhausts host memory."],
 "cudnn_or_workspace": ["cudnn.benchmark=True triggers the OOM during algorithm search.", "CUDNN_STATUS_ALLOC_FAILED in the first convolution."],
 "distributed_replication": ["Every DDP process creates a context on GPU 0.", "Adding GPUs with plain DDP did not help; each still holds the full model and optimizer."],
 "framework_bug": ["Since the nightly build from last week, the same job runs out of memory.", "Downgrading to the previous release fixes the OOM."],
}


@pytest.mark.parametrize(("label", "note"), [(label, note) for label, notes in NOTE_ONLY_THIRD_WORDING.items() for note in notes])
def test_each_cause_from_a_third_wording(label, note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == label


def test_adapters_named_as_what_worked_are_not_what_failed():
    note = "LoRA works, full training dies at the update"
    assert not read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).lora


def test_a_data_sample_is_not_generation():
    note = "the inference script fails on the first sample"
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).phase == "evaluation"


def test_a_fine_tuned_model_run_for_inference_is_not_training():
    text = sentence(req="200.00 MiB", total="23.65 GiB", free="100.00 MiB", alloc="22.50 GiB", unalloc="100.00 MiB")
    note = "running inference with my fine-tuned 7B model on a 24 GB card"
    signals = read_signals(build_context(text=text, note=note))
    assert not signals.full_finetune
    assert ids(text, note)[0] != "optimizer_state"


# A fourth wording (measured before the readers were extended for it: see BENCHMARKS.md).
NOTE_ONLY_FOURTH_WORDING = {
 "batch_too_large": ["Went from batch 32 to batch 128 to speed things up and now step one OOMs.", "The default batch of 64 is too much for a 6 GB card."],
 "input_size_too_large": ["Works on 256px crops; on the full 4000x3000 photos it crashes.", "Our documents are 50k tokens long and the encoder cannot handle them."],
 "model_too_large": ["Trying to run a 180B model on two 24 GB cards.", "The 20B checkpoint alone needs 40 GB in half precision; I have 16."],
 "optimizer_state": ["The OOM comes from exp_avg_sq being allocated in the first step.", "Moving from SGD to AdamW doubled memory and now it doesn't fit."],
 "missing_no_grad": ["My evaluate() runs the model on the val loader without torch.no_grad and dies.", "Inference memory grows per image because autograd is still recording."],
 "graph_retained": ["We sum the losses of all steps into one tensor for logging.", "history.append(loss) each iteration makes memory increase."],
 "reference_leak": ["I collect the output features of each batch in a list on cuda for later clustering.", "A dict of cached tensors grows forever during training."],
 "fragmentation": ["memory_summary shows 6 GB reserved but unallocated right before the OOM.", "expandable segments made the OOM go away."],
 "other_process_or_device": ["Another user's process on the shared server takes 20 GB of the card.", "Something else on the machine already uses most of the VRAM."],
 "full_precision": ["The model is loaded as float32 by default and that takes 28 GB.", "Running in single precision; switching to bf16 might fit."],
 "large_logits": ["The OOM is in the softmax over the output vocabulary of 300k words.", "It dies at the LM head when computing logits for 8k tokens."],
 "attention_quadratic": ["The naive attention implementation materialises seq x seq scores at 16k.", "OOM inside the attention softmax for long prompts."],
 "kv_cache_or_generation": ["Generating 2000 new tokens per prompt fills the GPU.", "Sampling 32 completions per prompt at once runs out of memory."],
 "checkpoint_loading": ["Resuming with torch.load puts the saved optimizer state on the GPU next to the live one.", "load_state_dict from a checkpoint on cuda:1 fails."],
 "dataloader_or_host": ["The kernel dies because the system runs out of RAM while building the dataset.", "Each of the 24 dataloader workers copies the dataset and RAM fills up."],
 "cudnn_or_workspace": ["The failure is in cudnnFindConvolutionForwardAlgorithm during autotuning.", "cuBLAS cannot create its handle, the GPU is nearly full at start."],
 "distributed_replication": ["In the multi-GPU run, rank 0 uses 10 GB more than the other ranks.", "All eight workers allocate memory on the first GPU."],
 "framework_bug": ["A regression: version 0.9 of the library OOMs where 0.8 did not.", "After the driver and CUDA update the same training fails."],
}


@pytest.mark.parametrize(("label", "note"), [(label, note) for label, notes in NOTE_ONLY_FOURTH_WORDING.items() for note in notes])
def test_each_cause_from_a_fourth_wording(label, note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == label


@pytest.mark.parametrize("note", ["I have 2 GPUs", "we have 8 nodes"])
def test_a_count_of_things_is_not_the_cards_size(note):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).note_gpu_capacity is None


def test_a_frozen_backbone_is_not_full_model_states():
    text = sentence(req="1.00 GiB", total="23.65 GiB", free="300.00 MiB", alloc="22.00 GiB", unalloc="200.00 MiB")
    note = "training a 3B model on a 24 GB card"
    assert "optimizer_state" in ids(text, note)[:2]
    frozen = ranked(text, note + " with the backbone frozen, only the head is trained")
    assert not any("Training states need" in " ".join(cause.evidence) for cause in frozen)


def test_an_eight_bit_optimizer_keeps_two_bytes_per_parameter():
    text = sentence(req="1.00 GiB", total="23.65 GiB", free="300.00 MiB", alloc="22.00 GiB", unalloc="200.00 MiB")
    # 2B parameters: Adam's 16 B/param = 32 GB does not fit 25 GB; 8-bit Adam's 10 B/param = 20 GB does
    assert "Training states need" in evidence_of(text, "full fine-tuning a 2B model with AdamW on 24 GB", "optimizer_state")
    eight_bit = ranked(text, "full fine-tuning a 2B model with adamw_8bit on 24 GB")
    assert not any("Training states need" in " ".join(cause.evidence) for cause in eight_bit)


def test_a_model_that_was_trained_is_history_not_the_phase():
    note = "loading the weights fails when the GPU the model was trained on is busy"
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).phase == "loading"


def test_torch_load_named_in_the_note_restores_to_the_saved_device():
    note = "eval.py calls torch.load on the saved model and loading fails with OOM"
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "checkpoint_loading"


@pytest.mark.parametrize("note", [
    "multi-node training with 8 GPUs per node: the rank-0 GPU uses an extra 2 GB compared with the others",
    "with mpirun -np 4, several processes sit on gpu 0 and rank 0 runs out of memory",
])
def test_processes_or_memory_on_gpu_zero_of_a_multi_gpu_job_are_its_own_ranks(note):
    causes = ids("RuntimeError: CUDA out of memory.", note)
    assert causes[0] == "distributed_replication"


def test_a_colocated_trainer_failing_in_backward_is_not_the_engines_reservation():
    note = "PPO training with the vLLM engine colocated on the same GPUs fails in the backward pass of the second step"
    top = ids("RuntimeError: CUDA out of memory.", note)
    assert top[0] == "fragmentation" and top.index("kv_cache_or_generation") > 1


@pytest.mark.parametrize("note", ["the evaluation during training runs out of memory",
                                  "validation in the middle of training crashes with OOM"])
def test_an_evaluation_inside_training_is_the_evaluation(note):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).phase == "evaluation"


def test_dense_prediction_evaluated_on_whole_images():
    note = "semantic segmentation: training on crops works, the evaluation during training runs out of memory"
    assert "input_size_too_large" in ids("RuntimeError: CUDA out of memory.", note)[:2]
    growing = "semantic segmentation: memory keeps growing batch after batch during evaluation"
    assert "input_size_too_large" not in ids("RuntimeError: CUDA out of memory.", growing)[:2]


@pytest.mark.parametrize(("note", "params"), [("pretraining a 1B model on 2B tokens", 1e9), ("fine-tuning on 5M images", None),
                                              ("a 13b chat model trained on 1T tokens", 13e9)])
def test_a_datasets_size_is_not_the_models(note, params):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).param_count == params


@pytest.mark.parametrize(("note", "capacity"), [("a machine with 64 GB of memory and an RTX 3060", 12e9),
                                                ("the server has 256 GB of memory and 8 A100s", 40e9),
                                                ("a GPU with 24 GB of memory", 24e9)])
def test_the_hosts_memory_is_not_the_cards(note, capacity):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).note_gpu_capacity == capacity


# --- what changed, said in more ways ------------------------------------------------------------

@pytest.mark.parametrize("note", [
    "Since vLLM 0.2.5 the 70B model no longer starts on the same four cards.",
    "Since torch 2.3 this fine-tuning script OOMs.",
    "Working: torch 2.1.0+cu121. Broken: torch 2.2.0+cu121.",
    "We had to go back to the old transformers to get it running.",
    "The same model no longer fits on my card.",
    "I can't run this config anymore.",
])
def test_what_used_to_work_is_a_change_said_in_many_ways(note):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).upgrade_regression


@pytest.mark.parametrize("note", ["since 2.5 GB are free it should fit", "it has been failing since 1.5 hours into the run",
                                  "we use the old model from last year", "since the batch is 32 it should fit"])
def test_a_size_or_a_model_after_since_is_no_version(note):
    assert not read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).upgrade_regression


def test_two_builds_one_broken_lead_to_a_regression():
    note = "It fit on 4 GPUs before. Working: torch 2.11.0.dev20260129. Broken: torch 2.11.0.dev20260202, even when going from batch size 12 to batch size 1."
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "framework_bug"


@pytest.mark.parametrize("note", ["it still fails even when going from batch size 12 to batch size 1",
                                  "even after dropping to a batch of 1 it runs out",
                                  "still OOM after lowering the batch size from 64 to 2"])
def test_lowering_the_batch_is_not_raising_it(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert not signals.batch_raised
    assert signals.batch_no_help


@pytest.mark.parametrize("note", ["GPU memory leaks with torch.compile: it grows every step until OOM.",
                                  "The compiled model leaks memory every iteration until it runs out.",
                                  "Memory grows every iteration; without torch.compile it is flat."])
def test_memory_that_grows_only_when_compiled_is_the_compiler(note):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).only_compiled
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "framework_bug"


@pytest.mark.parametrize("note", [
    "With optim.SGD I can train at batch size 8, but torch.optim.Adam throws the OOM error at the same batch size.",
    "SGD trains fine but Adam runs out of memory after the first iteration.",
    "AdamW gives an out of memory error where plain SGD works.",
])
def test_adam_failing_where_sgd_fits_is_the_optimizer_states(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "optimizer_state"


@pytest.mark.parametrize("note", ["It runs out of memory when computing the log_softmax.",
                                  "The OOM happens in log softmax at the end of the decoder."])
def test_log_softmax_named_where_it_failed_is_the_output_layer(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "large_logits"


@pytest.mark.parametrize(("note", "size"), [("The dict.en.txt file has more than 500,000 lines.", 500_000),
                                            ("my dictionary holds 1.2M entries", 1_200_000),
                                            ("the target dictionary has 250k words", 250_000)])
def test_a_dictionary_file_gives_the_vocabulary(note, size):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).vocab_size == size
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "large_logits"


@pytest.mark.parametrize("message", [
    "[E] [TRT] C:\\source\\rtSafe\\safeRuntime.cpp (25) - Cuda Error in nvinfer1::internal::DefaultAllocator::allocate: 2 (out of memory)",
    "[TRT] [E] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: Cuda Runtime (out of memory)",
    "[W] [TRT] Requested amount of GPU memory (8589934592 bytes) could not be allocated. There may not be enough free memory.",
])
def test_tensorrt_allocation_failures_are_its_workspace(message):
    report = analyze_inputs([], text=message)
    assert report.detected and report.error.library == "tensorrt"
    assert report.causes[0].id == "cudnn_or_workspace"


@pytest.mark.parametrize(("function", "code"), [("train_model", "sess.run(tf.global_variables_initializer())"),
                                                ("build", "sess.run(tf.initialize_all_variables())"),
                                                ("create_state", "params = model.init(rng, dummy_input)")])
def test_creating_the_variables_is_the_weights(function, code):
    text = trace(function, code, "Resource exhausted: OOM when allocating tensor with shape[25088,4096] and type float")
    assert ids(text)[0] == "model_too_large"


def test_a_traceback_printed_after_a_log_line_is_that_failures_stack():
    text = ("W tensorflow/core/framework/op_kernel.cc:1152] Resource exhausted: OOM when allocating tensor with shape[25088,4096]\n"
            "Traceback (most recent call last):\n"
            '  File "train.py", line 40, in <module>\n    main()\n'
            '  File "train.py", line 31, in train_model\n    sess.run(tf.global_variables_initializer())\n')
    context = build_context(text=text)
    assert [frame.function for frame in context.stack.frames] == ["<module>", "train_model"]


def test_a_restore_flag_passed_along_is_not_loading():
    text = trace("main", "train_net(network, imdb, restore=bool(int(args.restore)))",
                 "Resource exhausted: OOM when allocating tensor with shape[64,512,28,28] and type float")
    assert read_signals(build_context(text=text)).phase != "loading"


@pytest.mark.parametrize("note", ["My main problem is that GPU 0 gets more memory than the others.",
                                  "My GPUs are two 2080 Ti and the first GPU fills up while the rest stay half empty.",
                                  "Card 0 uses much more than the other cards."])
def test_one_gpu_heavier_than_the_others_is_a_multi_gpu_imbalance(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "distributed_replication"


def test_gpu_zero_named_on_a_single_card_is_no_imbalance():
    assert ids("RuntimeError: CUDA out of memory.", "GPU 0 gets full after a few steps.")[0] != "distributed_replication"


@pytest.mark.parametrize("note", ["Pre-training with transformers.Trainer, the evaluation runs out of memory.",
                                  "The evaluation inside the HF Trainer OOMs while training is fine.",
                                  "evaluation crashes with Seq2SeqTrainer and compute_metrics"])
def test_the_hf_trainers_evaluation_keeps_the_logits(note):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).hf_trainer_eval
    assert ids("RuntimeError: CUDA out of memory.", note)[0] != "missing_no_grad"


def test_a_lightning_trainer_is_not_the_hf_trainer():
    note = "the lightning trainer runs the evaluation and runs out of memory"
    assert not read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).hf_trainer_eval


@pytest.mark.parametrize("note", ["samples with sequences longer than max_seq_len result in CUDA OOM",
                                  "inputs exceeding the max length blow up",
                                  "prompts over 4096 tokens run out of memory"])
def test_inputs_longer_than_the_limit_are_the_input_size(note):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).long_input
    assert "input_size_too_large" in ids("RuntimeError: CUDA out of memory.", note)[:2]


@pytest.mark.parametrize(("note", "size"), [("32k*151936(vocab_size)*4 bytes", 151_936), ("logits of 128256 (vocab) entries", 128_256)])
def test_a_number_before_the_word_vocab_in_brackets_is_the_vocabulary(note, size):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).vocab_size == size


def test_an_odd_factor_over_the_squared_length_is_no_score_matrix():
    text = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 49.00 GiB. GPU 0 has a total capacity of "
            "79.15 GiB of which 20.31 GiB is free.")
    note = "Training a 7B model with max_length=32k fails."
    assert "sequence x sequence attention matrix" not in " ".join(evidence_of(text, note, "attention_quadratic").split("\n"))
    even = text.replace("49.00 GiB.", "48.00 GiB.", 1)
    assert "sequence x sequence attention matrix" in evidence_of(even, note, "attention_quadratic")


@pytest.mark.parametrize(("note", "stage", "offload"), [("trained with zero3_offload", 3, True), ("deepspeed zero2 config", 2, False),
                                                        ("ZeRO-3 with cpu_offload", 3, True)])
def test_zero_stages_and_offload_written_as_one_word(note, stage, offload):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert (signals.zero_stage, signals.offload) == (stage, offload)


@pytest.mark.parametrize(("note", "count"), [("8 nodes x 8 A100", 64), ("2 machines with 8 GPUs each", 16), ("4 nodes * 4 cards", 16)])
def test_nodes_times_gpus_per_node_is_the_gpu_count(note, count):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).gpu_count == count


def test_the_output_layer_named_and_a_large_vocabulary_add_up():
    note = "The allocation in logits.float() is too large and OOMs. The vocabulary has 151936 tokens."
    causes = ranked("RuntimeError: CUDA out of memory.", note)
    logits = next(cause for cause in causes if cause.id == "large_logits")
    assert causes[0].id == "large_logits" and len(logits.evidence) >= 2


def test_the_line_after_a_ggml_allocation_failure_names_the_buffer():
    text = ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 204800.00 MiB on device 0: cudaMalloc failed: out of memory\n"
            "llama_kv_cache_init: failed to allocate buffer for kv cache\n"
            "llama_init_from_model: llama_kv_cache_init() failed for self-attention cache\n")
    assert ids(text)[0] == "kv_cache_or_generation"
    assert "kv_cache" in evidence_of(text, None, "kv_cache_or_generation")


@pytest.mark.parametrize(("note", "bytes_per_weight"), [("the Q2_K_L quantized model", 2.5 / 8), ("a q5_k_m gguf", 5.5 / 8),
                                                        ("IQ3_XS weights", 3.5 / 8), ("a 4-bit AWQ checkpoint", 0.5)])
def test_ggml_quantizations_give_their_bytes_per_weight(note, bytes_per_weight):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).weight_bytes == pytest.approx(bytes_per_weight)


def test_weights_spread_over_the_gpus_are_compared_with_all_of_them():
    text = "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 20480.00 MiB on device 0: cudaMalloc failed: out of memory"
    one = "Loading a 70B Q8_0 gguf with llama.cpp on one A100 80GB."
    four = "Loading a 70B Q8_0 gguf with llama.cpp on 4 x A100 80GB."
    assert "the weights take" in evidence_of(text, one, "model_too_large")
    assert "the weights take" not in evidence_of(text, four, "model_too_large")


@pytest.mark.parametrize("note", ["Out of memory after PR #13746; the build before that PR loads the model fine.",
                                  "It broke with commit a1b2c3d4: the same model no longer loads."])
def test_a_named_change_to_the_code_is_a_version_change(note):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).upgrade_regression


@pytest.mark.parametrize("note", ["OOM when computing model(input_ids, labels=input_ids).loss to score a text.",
                                  "Computing the perplexity of each document runs out of memory.",
                                  "It crashes while scoring every sentence of the test file."])
def test_scoring_texts_with_a_model_is_evaluation(note):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).phase == "evaluation"


@pytest.mark.parametrize(("note", "count"), [("torchrun --nproc_per_node=4 train.py", 4), ("deepspeed --num_gpus 8 train.py", 8),
                                             ("CUDA_VISIBLE_DEVICES=0,1,2 python train.py", 3), ("horovodrun -np 16 python train.py", 16)])
def test_a_launcher_says_how_many_gpus(note, count):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).gpu_count == count


def test_unsharded_data_parallel_training_keeps_every_state_on_every_gpu():
    note = "Full fine-tuning of a 7B model with DDP on our A100 40GB GPUs fails in the first step."
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "distributed_replication"


def test_a_model_no_node_could_shard_is_too_large_not_replicated():
    note = "Full fine-tuning of a 70B model with deepspeed on A100 40GB GPUs runs out of memory."
    assert ids("RuntimeError: CUDA out of memory.", note)[0] != "distributed_replication"


@pytest.mark.parametrize("note", ["In my loop I do I_total += I_i and requires_grad is True; memory grows every iteration.",
                                  "requires_grad = True on the field, and acc += field in the loop: GPU memory keeps increasing."])
def test_a_tensor_summed_in_a_loop_while_it_requires_grad_keeps_the_graphs(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "graph_retained"


@pytest.mark.parametrize("note", ["Resolutions over 1000x1000 fill the whole VRAM with --opt-sdp-no-mem-attention.",
                                  "Upscaling to 2048x2048 without memory-efficient attention runs out of memory."])
def test_attention_without_a_memory_efficient_kernel_at_high_resolution(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "attention_quadratic"


@pytest.mark.parametrize("note", ["The in-painting pipeline runs out of memory; enable_attention_slicing() has no noticeable effect for it.",
                                  "With or without cpu_offload it makes no difference, the same OOM.",
                                  "I set PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 but it seems to have no effect."])
def test_a_memory_saving_switch_with_no_effect_is_the_library(note):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).switch_no_effect
    assert "framework_bug" in ids("RuntimeError: CUDA out of memory.", note)[:2]


def test_a_switch_that_helped_is_not_without_effect():
    note = "enable_attention_slicing() fixed it at 512x512, but 1024x1024 still runs out"
    assert not read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).switch_no_effect


@pytest.mark.parametrize("note", ["It generates plain green images, and with --full_precision it runs out of memory.",
                                  "Generating 4 pictures at once at 768x768 runs out of memory."])
def test_generating_images_is_a_diffusion_sampler_not_a_kv_cache(note):
    assert "diffusion" in read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).domains
    assert ids("RuntimeError: CUDA out of memory.", note)[0] != "kv_cache_or_generation"


def test_generating_text_is_still_the_kv_cache():
    assert "diffusion" not in read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                                         note="generating long answers with llama-2-7b")).domains


@pytest.mark.parametrize("note", ["The leak disappears with v1.14.", "On tensorflow 2.3 it goes away with 2.4.1.",
                                  "It does not happen on version 0.9."])
def test_a_version_where_the_problem_goes_away(note):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).upgrade_regression


@pytest.mark.parametrize(("message", "held", "limit"), [
    ("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 25,600,000 bytes (allocated so far: 3,635,267,072 bytes).", 3_635_267_072, None),
    ("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 512 bytes (allocated so far: 1,024 bytes, limit set to: 2,048 bytes).", 1024, 2048),
    ("cupy.cuda.memory.OutOfMemoryError: out of memory to allocate 1073741824 bytes (total 12373894656 bytes)", 12_373_894_656 - 1_073_741_824, None),
])
def test_cupy_pool_messages_of_both_generations(message, held, limit):
    error = analyze_inputs([], text=message).error
    assert (error.format, error.library, error.allocated_bytes, error.allowed_bytes) == ("cupy_memory_pool", "cupy", held, limit)


@pytest.mark.parametrize("note", ["There are 7 other models hosted on the same server and they work fine; adding this one breaks it.",
                                  "Several models are loaded on the same GPU by our inference service."])
def test_other_models_on_the_same_card_hold_its_memory(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "other_process_or_device"


@pytest.mark.parametrize(("note", "seq_len"), [("the prompts reach 12,000-13,000 tokens", 13000), ("a 32,768 token context", 32768)])
def test_token_counts_with_thousands_separators(note, seq_len):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).seq_len == seq_len


@pytest.mark.parametrize("note", ["Fine-tuning it, the sequence is too long and it returns CUDA OOM.",
                                  "Our documents are very long, and training runs out of memory."])
def test_inputs_said_to_be_too_long(note):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).long_input


@pytest.mark.parametrize("note", ["On 2.0.1 it is fine; 2.1.0 OOMs.", "transformers 4.36 OK vs 4.40 OOM",
                                  "vLLM 0.2.5 fails where 0.2.4 worked", "torch 2.1 works, torch 2.2 runs out of memory"])
def test_two_builds_of_one_library_compared_are_a_version_change(note):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).upgrade_regression


@pytest.mark.parametrize("note", ["voxel size 0.001 (knn radius 0.1) fails", "dropout 0.1 and 0.2 fail the same way",
                                  "with CUDA 11.8 and torch 2.1 it fails", "torch 2.1 and 2.2 both fail"])
def test_settings_or_two_libraries_are_no_two_builds(note):
    assert not read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).upgrade_regression


@pytest.mark.parametrize("note", ["The recent Transformers update broke this repo: VRAM consumption multiplied.",
                                  "Previously working setups are now unusable.",
                                  "The latest driver release caused the OOM on the same job."])
def test_a_recent_update_that_broke_a_working_setup(note):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).upgrade_regression


def test_a_second_round_that_fails_with_the_card_full_of_live_tensors_kept_the_first():
    text = sentence(req="500.00 MiB", total="39.39 GiB", free="41.94 MiB", alloc="37.87 GiB", unalloc="977.13 MiB")
    note = "Evaluating a second model in the same run OOMs, although one model alone is fine."
    assert "reference_leak" in ids(text, note)[:3]
    assert "is live at the failure" in evidence_of(text, note, "reference_leak")


def test_a_second_round_with_a_large_idle_cache_is_still_fragmentation():
    text = sentence(req="2.00 GiB", total="24.00 GiB", free="500.00 MiB", alloc="12.00 GiB", unalloc="9.00 GiB")
    assert ids(text, "the second fit with other shapes fails")[0] == "fragmentation"


@pytest.mark.parametrize("note", ["After implementing training_epoch_end, training runs out of GPU memory.",
                                  "validation_epoch_end collects the outputs and then it OOMs",
                                  "learn.get_preds on a big validation set runs out of memory"])
def test_loops_that_gather_every_batchs_outputs_keep_them(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "reference_leak"


@pytest.mark.parametrize(("note", "capacity"), [("fine-tuning on a single 24G card", 24e9), ("my 12G GPU", 12e9), ("an 8 G graphics card", 8e9)])
def test_a_card_size_written_with_g_alone(note, capacity):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).note_gpu_capacity == capacity


@pytest.mark.parametrize("note", ["I fine-tune all parameters of a 5.7B model", "training all the weights of the 7B model"])
def test_training_all_the_parameters_is_a_full_fine_tune(note):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).full_finetune


def test_a_request_a_hundred_cards_big_is_a_size_computed_wrong():
    text = sentence(req="538976288.13 GiB", total="47.54 GiB", free="43.55 GiB", alloc="3.19 GiB", unalloc="478.31 MiB")
    assert "framework_bug" in ids(text)[:2]
    plausible = sentence(req="60.00 GiB", total="47.54 GiB", free="43.55 GiB", alloc="3.19 GiB", unalloc="478.31 MiB")
    assert "framework_bug" not in ids(plausible)[:2]


def test_a_request_ten_thousand_cards_big_outranks_the_workload_the_note_names():
    text = sentence(req="900000.00 GiB", total="23.64 GiB", free="20.00 GiB", alloc="3.00 GiB", unalloc="100.00 MiB")
    note = "model.generate with num_beams=4 and max_new_tokens=512 on a long prompt"
    assert ids(text, note)[0] == "framework_bug"
    merely_huge = sentence(req="2000.00 GiB", total="23.64 GiB", free="20.00 GiB", alloc="3.00 GiB", unalloc="100.00 MiB")
    assert "kv_cache_or_generation" in ids(merely_huge, note)[:2]


@pytest.mark.parametrize(("note", "flag"), [("generate with num_beams=8 runs out", "many_sequences"),
                                            ("sampling 16 completions per prompt", "many_sequences"),
                                            ("the vLLM server fails under load", "under_load"),
                                            ("it crashes with many concurrent requests", "under_load")])
def test_generation_and_serving_readers_are_signals(note, flag):
    assert getattr(read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)), flag)


def test_tensorrt_gets_its_workspace_cap_and_cudnn_keeps_its_own():
    trt = ranked("[TRT] [E] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: Cuda Runtime (out of memory)")[0]
    assert trt.id == "cudnn_or_workspace"
    kinds = [fix.kind for fix in trt.fixes]
    assert kinds[0] == "tensorrt_workspace" and "cudnn_workspace" not in kinds
    cudnn = ranked("RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED")[0]
    assert cudnn.id == "cudnn_or_workspace"
    assert [fix.kind for fix in cudnn.fixes][0] == "cudnn_workspace" and "tensorrt_workspace" not in [fix.kind for fix in cudnn.fixes]


@pytest.mark.parametrize("note", ["with torch 2.0.1 it fails; torch 1.13.1 works", "the snippet runs on tensorflow 1.15.5 and OOMs on tensorflow 2.4.1",
                                  "it ran fine two years ago", "the same script trained without trouble a few months ago"])
def test_builds_of_different_majors_and_time_ago_are_a_version_change(note):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).upgrade_regression


@pytest.mark.parametrize("note", ["PyTorch 1.2 and Python 3.6: it crashes", "learning rate 0.001 and weight decay 1.5 fail"])
def test_two_libraries_of_different_majors_are_no_version_change(note):
    assert not read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).upgrade_regression


def test_the_pairwise_idiom_is_the_inputs_size_and_a_stray_axis_is_an_accident():
    text = sentence(req="2.29 GiB", total="15.75 GiB", free="1.00 GiB", alloc="12.00 GiB", unalloc="100.00 MiB")
    pairwise = ids(text, "pairwise distances: x of shape (1, 3000, 64) minus y of shape (3000, 1, 64)")
    assert pairwise[0] == "input_size_too_large" and "other" not in pairwise[:1]
    stray = ids(text, "adding a of shape (200000, 1, 1) to b of shape (200000, 1)")
    assert stray[0] == "other"


def test_half_precision_weights_larger_than_the_card_outweigh_a_coincidence_of_arithmetic():
    # 224 MiB happens to be 14 x 4096² bytes; a 13B model's fp16 weights (26 GB) cannot fit 16 GB anyway.
    text = sentence(req="224.00 MiB", total="15.75 GiB", free="40.00 MiB", alloc="15.30 GiB", unalloc="10.00 MiB")
    causes = ranked(text, "Serving a 13B model in fp16 on one card with max_model_len 4096.")
    assert causes[0].id == "model_too_large" and causes[0].confidence >= 0.9


def test_the_engines_measured_weights_replace_the_parameter_estimate():
    log = ("INFO worker.py:267] model weights take 4.10GiB; non_torch_memory takes 0.03GiB; PyTorch activation peak memory "
           "takes 1.40GiB; the rest of the memory reserved for KV Cache is -0.90GiB.\n"
           "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.")
    note = "Serving a quantized 7B model on an 8 GB laptop GPU."
    assert read_signals(build_context(text=log, note=note)).measured_weights == int(4.10 * 1024**3)
    assert ids(log, note)[0] == "kv_cache_or_generation"


def test_one_tensor_larger_than_the_card_in_a_transformer_is_its_score_matrix():
    text = sentence(req="61.50 GiB", total="39.39 GiB", free="30.00 GiB", alloc="8.00 GiB", unalloc="200.00 MiB")
    assert ids(text, "A vision-language model reading a scanned page.")[0] == "attention_quadratic"
    # The same request with no transformer named stays the input's size.
    assert ids(text, "A segmentation network on a scanned page.")[0] != "attention_quadratic"


@pytest.mark.parametrize(("note", "phase"), [
    ("python finetune.py trains, but with --resume_from last.ckpt it runs out of memory", "loading"),
    ("The demo runs, but evaluating the test split dies.", "evaluation"),
])
def test_a_clause_ending_on_what_worked_is_not_where_it_failed(note, phase):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).phase == phase


@pytest.mark.parametrize("note", ["Predicting frames one by one, memory climbs until it crashes, and the only workaround is to reload the model every hour.",
                                  "Scoring images in a loop fails after a while; to avoid it I restart and reload the weights."])
def test_a_workaround_clause_is_not_where_it_failed(note):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).phase != "loading"


@pytest.mark.parametrize("note", ["Calling model.fit repeatedly in a for loop for cross-validation with Keras, memory grows until it fails.",
                                  "model.predict() on every frame of the video with tf.keras; the GPU fills up over a few minutes."])
def test_keras_entry_points_called_from_a_loop_accumulate_in_the_framework(note):
    text = "ResourceExhaustedError: OOM when allocating tensor with shape[32,64,112,112] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"
    assert read_signals(build_context(text=text, note=note)).keras_call_in_loop
    assert "framework_bug" in ids(text, note)[:2]
    # PyTorch's tensors are the script's: the same words there do not point at Keras.
    assert not any(c.id == "framework_bug" and "Keras" in " ".join(c.evidence) for c in ranked(sentence(), note.replace("Keras", "PyTorch").replace("tf.keras", "torch")))


@pytest.mark.parametrize("note", ["Training on a build of the master branch leaks until it fails.",
                                  "after switching back to version 0.2.0 there is no leak", "we rolled back to 1.12.1 and it fits",
                                  "with 2.3.1 there was no OOM"])
def test_a_development_build_or_a_return_to_an_older_one_is_a_version_change(note):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).upgrade_regression


@pytest.mark.parametrize("note", ["I switched back to the cpu and it works", "going back to batch size 2 fits"])
def test_going_back_to_a_device_or_a_setting_is_no_version_change(note):
    assert not read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).upgrade_regression


def test_metal_command_buffers_without_memory_are_detected_in_both_libraries():
    for text in ("libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer "
                 "execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)",
                 "ggml_metal_graph_compute: command buffer 0 failed with status 5\n"
                 "error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)"):
        report = analyze_inputs([], text=text, note="serving a 30B model on a 64 GB Mac")
        assert report.detected and report.error.backend == "mps" and report.causes


def signals_of(note: str, text: str = "RuntimeError: CUDA out of memory."):
    return read_signals(build_context(text=text, note=note))


@pytest.mark.parametrize(("note", "vocab"), [("Qwen3.5 (vocabulary about 248k) in RL", 248_000), ("a model2.0 (vocab 50k)", 50_000),
                                             ("the vocabulary is very large on an 8 GB GPU", None)])
def test_vocabulary_sizes_are_not_read_from_model_names_or_card_sizes(note, vocab):
    assert signals_of(note).vocab_size == vocab


@pytest.mark.parametrize("note", ["Training an NMT model whose target vocabulary is very large.",
                                  "The number of classes is huge (an extreme multi-label task).", "a giant output layer over every product id"])
def test_a_vocabulary_said_to_be_large_points_at_the_logits(note):
    assert signals_of(note).large_vocab_said
    assert "large_logits" in ids("RuntimeError: CUDA out of memory.", note)[:2]


def test_weights_copied_to_every_gpu_need_full_sharding():
    # (16 GPUs: fully sharded, 13B x 16 B of states take 13 GB of each 24 GB GPU.)
    note = "Fine-tuning a 13B model in bf16 with DeepSpeed ZeRO stage 2 on 16 GPUs of 24 GB fails."
    assert ids("torch.cuda.OutOfMemoryError: CUDA out of memory.", note)[0] == "distributed_replication"
    sharded = note.replace("ZeRO stage 2", "ZeRO stage 3")
    assert not any("holds all the weights" in " ".join(c.evidence) for c in ranked("torch.cuda.OutOfMemoryError: CUDA out of memory.", sharded))


def test_a_setting_named_only_in_the_clause_that_worked_is_not_the_failing_runs():
    assert not signals_of("with device_map='auto' and no DeepSpeed it trains, but ZeRO-2 runs out of memory").splits_weights
    assert signals_of("loading with device_map='auto' across two GPUs runs out of memory").splits_weights


@pytest.mark.parametrize("note", [
    "It builds one 11 GB buffer in the first iteration and frees it; recreating it in the second iteration fails.",
    "We delete the big attention cache after each sample, and allocating it again for the next sample fails.",
    "Re-allocating the workspace after it was freed runs out of memory.",
])
def test_a_large_tensor_freed_and_asked_for_again_is_fragmentation(note):
    assert signals_of(note).freed_then_again
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "fragmentation"


@pytest.mark.parametrize(("note", "free", "low"), [("about half of the GPU memory is never used", True, False),
                                                   ("40% of the VRAM stays free when it fails", True, False),
                                                   ("90% of the memory is used", False, False), ("the model runs in half precision", False, True)])
def test_half_of_the_memory_is_free_memory_and_half_precision_is_a_dtype(note, free, low):
    signals = signals_of(note)
    assert signals.free_at_failure == free and signals.low_precision == low


def test_a_first_round_that_ran_is_not_a_failure_at_once():
    assert not signals_of("The first training iteration finishes; the second iteration fails.").immediate
    assert signals_of("It fails on the first training iteration.").immediate


@pytest.mark.parametrize(("note", "growth"), [("it runs out of memory at step 2", False), ("it fails at step 250", True),
                                              ("the crash comes in epoch 3", True)])
def test_a_failure_on_the_second_step_is_no_growth(note, growth):
    assert signals_of(note).growth == growth


@pytest.mark.parametrize("note", ["PyTorch training hits CUDA OOM in the load_best_model stage.",
                                  "it dies inside load_pretrained_weights"])
def test_a_loaders_name_in_the_note_is_the_loading_phase(note):
    assert signals_of(note).phase == "loading"


def test_training_beside_a_colocated_inference_engine_is_fragmentation_first():
    note = "PPO with the trainer and the vLLM rollout engine colocated (sleep mode) runs out of memory at step 3."
    assert ids("torch.cuda.OutOfMemoryError: CUDA out of memory.", note)[0] == "fragmentation"


def test_half_precision_weights_are_counted_at_two_bytes():
    text = sentence(req="256.00 MiB", total="24.00 GiB", free="0 bytes", alloc="23.17 GiB", unalloc="10.00 MiB")
    note = "Running a 7B LLaMA model with model.half() for text completion on one 24 GB card."
    assert "in fp32" not in evidence_of(text, note, "model_too_large")
    assert ids(text, note)[0] == "kv_cache_or_generation"


def test_a_language_models_memory_beyond_its_weights_is_the_cache_only_outside_training():
    text = sentence(req="256.00 MiB", total="24.00 GiB", free="0 bytes", alloc="23.17 GiB", unalloc="10.00 MiB")
    assert ids(text, "Fine-tuning a 7B LLaMA model in bf16 on one 24 GB card.")[0] != "kv_cache_or_generation"


@pytest.mark.parametrize("note", ["Loading the best checkpoint after training runs out of GPU memory.",
                                  "At the end of training, restoring the best model fails with OOM."])
def test_weights_read_back_into_the_process_that_trained_them_are_a_second_copy(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "checkpoint_loading"


def test_outputs_converted_to_fp32_by_a_mixed_precision_wrapper_are_the_logits():
    text = trace("_convert_to_fp32", "return tensor.float()",
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.50 GiB. GPU 0 has a total capacity of 14.75 GiB of which 2.00 GiB is free.")
    assert "large_logits" in ids(text, "LoRA fine-tuning a 8B model with 16k-token texts")[:2]


def test_a_lone_process_in_a_cut_message_is_the_failing_one():
    text = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 14.75 GiB "
            "of which 1.20 GiB is free. Process 4242 has 13.54 GiB memory in use.")
    assert ids(text, "fine-tuning a small model in a notebook")[0] != "other_process_or_device"
    two = text.replace("Process 4242 has 13.54 GiB memory in use.", "Process 4242 has 9.00 GiB memory in use. Process 77 has 4.54 GiB memory in use.")
    assert "other_process_or_device" in ids(two)[:2]


@pytest.mark.parametrize(("note", "diffusion"), [("Upscaling photos 4x with Real-ESRGAN", False),
                                                 ("Upscaling a generated image with an ESRGAN model", False),
                                                 ("running stable-diffusion-x4-upscaler on a photo", True),
                                                 ("generating images with SDXL", True)])
def test_upscalers_and_generated_images_are_not_diffusion_by_themselves(note, diffusion):
    assert ("diffusion" in signals_of(note).domains) == diffusion


def test_an_image_that_was_generated_is_not_a_run_that_generates():
    assert signals_of("Upscaling a generated image fails").phase != "generation"
    assert signals_of("it fails while generating the answer").phase == "generation"


@pytest.mark.parametrize("note", ["Upscaling a huge scan fails whatever --tile size I pass, even 32.",
                                  "Even with a chunk size of 1 the very large input still runs out of memory."])
def test_tiling_at_any_size_that_changes_nothing_is_the_code_path(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "framework_bug"


def test_a_failure_while_pinning_a_batch_is_host_memory():
    text = ("RuntimeError: Caught RuntimeError in pin memory thread for device 0.\nOriginal Traceback (most recent call last):\n"
            '  File "/usr/lib/python3/site-packages/torch/utils/data/_utils/pin_memory.py", line 37, in do_one_step\n'
            "    data = pin_memory(data, device)\nRuntimeError: CUDA error: out of memory")
    assert ids(text, "training a detector; the GPU has plenty of free memory")[0] == "dataloader_or_host"


@pytest.mark.parametrize("note", ["Under WSL2 the training dies with CUDA OOM; the DataLoader has pin_memory=True and num_workers=8.",
                                  "running in WSL, prefetch_factor=8 with persistent_workers, it runs out of memory"])
def test_pinned_prefetched_batches_under_wsl_are_host_memory(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "dataloader_or_host"
    assert not signals_of(note.replace("WSL2", "Linux").replace("WSL", "Linux")).wsl


@pytest.mark.parametrize("note", ["Running the detector over the frames of a video fails after the first frame.",
                                  "running my segmentation model on a folder of images dies after the first image"])
def test_running_a_model_over_many_inputs_is_inference_that_repeats(note):
    signals = signals_of(note)
    assert signals.phase == "evaluation" and signals.repeated_calls


def test_the_users_own_code_around_a_frameworks_predictor_is_not_under_its_no_grad():
    note = "Running a detectron2 model over the frames of a video and extracting features with a custom function fails."
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "missing_no_grad"
    assert ids("RuntimeError: CUDA out of memory.", "Running a detectron2 model over the frames of a video fails.")[0] != "missing_no_grad"


@pytest.mark.parametrize(("note", "batch"), [("256 sequences per device for both train and eval", 256), ("32 images per GPU", 32)])
def test_a_batch_given_as_items_per_device(note, batch):
    assert signals_of(note).batch_size == batch


@pytest.mark.parametrize("note", ["256 sequences per device for both train and eval; it dies with OOM",
                                  "the train/eval batch sizes are 64 and it runs out of memory"])
def test_a_setting_for_training_and_evaluation_names_the_training_run(note):
    assert signals_of(note).phase == "training"


@pytest.mark.parametrize("note", ["It crashes while the VGG base is still being built, before loading any batch.",
                                  "the OOM comes while the network was being constructed"])
def test_construction_said_in_the_passive(note):
    assert signals_of(note).construction


@pytest.mark.parametrize("note", ["ollama 0.1.11 ran this model, the upgraded version does not.",
                                  "the upgraded build fails on the same prompt"])
def test_a_version_that_ran_named_before_the_verb(note):
    assert signals_of(note).upgrade_regression


@pytest.mark.parametrize("note", ["nvidia-smi shows only ~4.3 GB used when it fails", "only around 3 GB is in use"])
def test_little_in_use_written_with_a_tilde_or_around(note):
    assert signals_of(note).free_at_failure


def test_deleting_and_emptying_the_cache_each_iteration_in_one_sentence():
    note = "I del loss, outputs and targets and call torch.cuda.empty_cache() each iteration, still OOM after a number of iterations."
    signals = signals_of(note)
    assert signals.frees_every_step and signals.growth
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "framework_bug"


def test_a_single_gpu_restart_that_works():
    assert signals_of("A single-GPU restart is fine.").only_multi_gpu


def test_a_serving_engine_runs_without_gradients():
    note = "The vLLM engine of a KAITO inference workspace dies with CUDA out of memory on a 16 GB GPU."
    assert "missing_no_grad" not in ids("torch.cuda.OutOfMemoryError: CUDA out of memory.", note)[:2]


@pytest.mark.parametrize(("note", "count"), [("a single node of four A800 80GB cards", 4), ("8 NVIDIA A100 40GB GPUs", 8),
                                             ("ZeRO stage 2 on 8 GPUs", 8)])
def test_gpu_counts_with_a_card_size_between(note, count):
    assert signals_of(note).gpu_count == count


@pytest.mark.parametrize(("note", "load"), [("it crashes at engine start-up, before the first request", False),
                                            ("the server dies with many concurrent requests", True),
                                            ("fails once 16 prompts are in flight", True)])
def test_under_load_means_many_requests_not_the_word_request(note, load):
    assert signals_of(note).under_load == load


def test_engine_start_up_and_the_first_step_running_out_are_at_once_not_growth():
    assert signals_of("the vLLM engine crashes at engine start-up").immediate
    signals = signals_of("the forward pass of the first step runs out of memory")
    assert signals.immediate and not signals.growth


@pytest.mark.parametrize("note", ["on PyTorch 0.4: the training batches pass, but during validation memory climbs until it dies",
                                  "the first epochs go through, but the evaluation afterwards runs out of memory"])
def test_a_plural_clause_that_went_well_is_not_where_it_failed(note):
    assert signals_of(note).phase == "evaluation"


@pytest.mark.parametrize("note", ["it fails while the model is built", "the OOM comes while the network gets created"])
def test_construction_in_the_simple_passive(note):
    assert signals_of(note).construction


@pytest.mark.parametrize("note", ["Encoding sentences with a sentence encoder: anything beyond 5-10 million records throws CUDA OOM.",
                                  "predicting on more than 200k images in one call runs out of GPU memory"])
def test_a_failure_decided_by_how_many_inputs_one_call_gets_is_results_kept(note):
    assert signals_of(note).dataset_size_matters
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "reference_leak"


@pytest.mark.parametrize(("note", "long"), [("a dense model with more than 20 million points", True), ("1.2M gaussians after densification", True),
                                            ("training on 8 nodes", False), ("a graph of 50,000 nodes", True)])
def test_counts_of_elements_are_large_inputs_but_a_few_nodes_are_machines(note, long):
    assert signals_of(note).long_input == long


@pytest.mark.parametrize(("note", "count"), [("tensor_parallel_size 8", 8), ("on 8 A100 80GB", 8), ("2 RTX 3090s", 2)])
def test_gpu_counts_from_parallel_sizes_and_card_models(note, count):
    assert signals_of(note).gpu_count == count


def test_work_that_runs_alone_but_not_after_others_is_not_the_inputs_size():
    text = sentence(req="31.50 GiB", total="23.69 GiB", free="10.00 GiB", alloc="12.00 GiB", unalloc="100.00 MiB")
    note = "Seven evaluation tasks one after another with batch_size auto: the fifth crashes, although it alone runs."
    signals = signals_of(note)
    assert signals.works_alone and signals.auto_batch
    assert "input_size_too_large" not in ids(text, note)[:1]
    assert "framework_bug" in ids(text, note)[:3]


@pytest.mark.parametrize("note", ["batch size 8 trains with SGD, but with Adam it runs out of memory at batch 8",
                                  "Adam crashes where plain SGD was fine"])
def test_sgd_fitting_where_adam_fails_in_any_word_order(note):
    assert signals_of(note).optimizer_step


def test_sgd_and_adam_failing_alike_are_no_contrast():
    assert not signals_of("both SGD and Adam run out of memory").optimizer_step


@pytest.mark.parametrize(("note", "growth"), [("it runs out of memory after the first iteration", False),
                                              ("memory is fine after the first few iterations but it dies later", True)])
def test_after_the_first_iteration_is_the_second_step_not_growth(note, growth):
    assert signals_of(note).growth == growth


@pytest.mark.parametrize("note", ["examples whose sequence exceeds max_seq_len end in OOM", "inputs beyond the limit crash"])
def test_inputs_exceeding_the_limit_in_other_words(note):
    assert signals_of(note).long_input


@pytest.mark.parametrize(("note", "shared"), [("four Ray Serve replicas on the same GPU with num_gpus=0.25", True),
                                              ("two training processes running on one GPU", True),
                                              ("workers_per_replica set to 3", True),
                                              ("every worker but one fails to start", True),
                                              ("two processes, each on its own GPU", False)])
def test_several_processes_on_one_gpu_in_several_wordings(note, shared):
    assert signals_of(note).several_processes_one_gpu == shared


def test_processes_sharing_one_gpu_is_another_process_holding_the_card():
    text = ("2023-01-01 10:00:00 W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of "
            "memory trying to allocate 256.00MiB (rounded to 268435456)requested by op MatMul")
    note = "three TensorFlow workers placed on the same GPU; the first one starts, the others fail"
    assert ids(text, note)[0] == "other_process_or_device"


@pytest.mark.parametrize("note", ["it started failing since the allocator rewrite", "after the cuDNN port it runs out of memory"])
def test_a_named_rewrite_or_port_is_a_version_change(note):
    assert signals_of(note).upgrade_regression


def tf_tensor(shape: str) -> str:
    return f"tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[{shape}] and type float"


def test_a_failing_tensor_of_one_large_image_is_the_resolution_not_the_batch():
    assert ids(tf_tensor("1,2160,3840,3"))[0] == "input_size_too_large"
    assert ids(tf_tensor("1,3,4096,4096"))[0] == "input_size_too_large"
    # A large batch of small images is still the batch.
    assert ids(tf_tensor("512,64,56,56"))[0] != "input_size_too_large"


WHOLE_MODEL_MOVE = '''Traceback (most recent call last):
  File "pretrain.py", line 60, in <module>
    engine, *_ = deepspeed.initialize(model=net, config=cfg)
  File "/opt/venv/lib/python3.11/site-packages/deepspeed/runtime/engine.py", line 1200, in _configure_distributed_model
    self.module.to(self.device)
torch.OutOfMemoryError: CUDA out of memory.'''


@pytest.mark.parametrize("note", ["ZeRO stage 3 on 4 GPUs for a 20B model", "FSDP (fully_shard) over 8 GPUs"])
def test_the_whole_model_moved_to_one_gpu_under_full_sharding_is_a_full_copy_per_gpu(note):
    ranked_ids = ids(WHOLE_MODEL_MOVE, note)
    assert ranked_ids[0] == "distributed_replication"
    assert "optimizer_state" not in ranked_ids[:1]


def test_the_whole_model_moved_without_sharding_is_the_weights_not_the_optimizer():
    text = trace("setup", "model.to(device)", "torch.OutOfMemoryError: CUDA out of memory.")
    assert "model_too_large" in ids(text)[:2]
    assert ids(WHOLE_MODEL_MOVE, "DDP on 2 GPUs")[0] != "optimizer_state"


@pytest.mark.parametrize("note", ["it peaks at 5 GB while the ZeRO optimizer initializes", "fails when the optimizer states are created",
                                  "the peak comes as the optimizer is being initialized"])
def test_the_optimizer_initialising_after_its_name_is_the_optimizer_set_up(note):
    assert signals_of(note).phase == "optimizer_setup"


def test_a_where_clause_ends_at_a_colon():
    note = "on 2 GPUs with ZeRO-3: training stays at 3 GB but it fails while the optimizer initializes"
    assert signals_of(note).phase == "optimizer_setup"


@pytest.mark.parametrize(("note", "tiled"), [("the inferer tiles each image into subwindows and runs them together", True),
                                             ("we split every large scene into 512 px patches", True),
                                             ("sliding-window inference over the volume", True),
                                             ("the image is resized to 512 before inference", False)])
def test_inputs_cut_into_tiles_in_several_wordings(note, tiled):
    assert signals_of(note).tiled_input == tiled


def test_tiles_of_one_input_going_through_together_are_the_batch():
    text = sentence(req="2.00 GiB", total="11.93 GiB", free="700.00 MiB", alloc="8.75 GiB", unalloc="1.90 GiB")
    note = "inference on 8000x8000 aerial images; the script cuts each image into tiles and runs them through the network"
    assert ids(text, note)[0] == "batch_too_large"


@pytest.mark.parametrize(("note", "freed"), [("memory climbs during every epoch and drops once the epoch ends", True),
                                             ("usage grows over the epoch and is released at the end of each epoch", True),
                                             ("VRAM goes back down when an epoch is over, then builds up again", True),
                                             ("memory is fine at the end of each epoch", False)])
def test_memory_given_back_when_the_epoch_ends_in_several_wordings(note, freed):
    assert signals_of(note).freed_at_epoch_end == freed


def test_memory_held_until_the_epoch_ends_is_every_steps_results_kept():
    note = "Training a segmentation model: GPU memory grows through each epoch and falls back when the epoch finishes, until one epoch runs out"
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "reference_leak"


@pytest.mark.parametrize(("note", "isolated"), [("after bisecting, only the SSIM metric causes the growth", True),
                                                ("I isolated the leak to nn.MultiheadAttention", True),
                                                ("the same loss computed manually with torch.mean does not grow", True),
                                                ("there is a memory leak in nn.Embedding, memory grows every batch", True),
                                                ("tf.map_fn leaks on every call and the GPU fills up", True),
                                                ("nn.LookupTable seems to be leaking: memory leak every iteration", True),
                                                ("a memory leak in my training loop: memory grows every batch", False),
                                                ("only after 3 epochs does it grow", False)])
def test_a_leak_pinned_to_one_library_part_in_several_wordings(note, isolated):
    assert signals_of(note).library_part_isolated == isolated
    if isolated and "memory leak" in note:
        assert ids("RuntimeError: CUDA out of memory.", note)[0] == "framework_bug"


def test_a_leak_in_one_library_component_is_that_librarys_bug():
    note = ("memory grows every iteration of my evaluation loop; I isolated it to the library's F1 metric, "
            "and computing F1 by hand does not leak")
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "framework_bug"


def test_the_start_of_a_growth_is_its_baseline_not_a_failure_at_once():
    note = "At the beginning of training it uses 5 GB; it gradually increases to 11 GB over 20 epochs and then crashes"
    signals = signals_of(note)
    assert signals.growth and not signals.immediate
    assert signals_of("it crashes right at the start of training").immediate


@pytest.mark.parametrize("note", ["multiple-instance learning on whole-slide images", "training on a p3 instance with one V100"])
def test_the_word_instance_alone_is_no_detection_workload(note):
    assert "detection" not in signals_of(note).domains


@pytest.mark.parametrize("warning", [
    "Token indices sequence length is longer than the specified maximum sequence length for this model (3071 > 512). Running this sequence through the model will result in indexing errors",
    "Your input_length: 2048 is bigger than 0.9 * max_length: 256. You might consider increasing your max_length manually",
])
def test_a_librarys_warning_that_inputs_exceed_their_maximum_is_a_long_input(warning):
    text = f"{warning}\n{sentence(req='20.00 MiB', free='8.00 MiB', alloc='23.00 GiB', unalloc='300.00 MiB')}"
    assert signals_of("", text).long_input
    assert ids(text)[0] == "input_size_too_large"


@pytest.mark.parametrize(("note", "phase"), [("translating documents with an NLLB checkpoint fails", "generation"),
                                             ("training a translation model fails", "training")])
def test_translating_with_a_model_is_inference_but_a_translation_model_is_what_trains(note, phase):
    assert signals_of(note).phase == phase


@pytest.mark.parametrize("note", ["batch size 1 trains, but batch size 8 or 16 fails", "with batch size 4 it ran, while 32 runs out of memory"])
def test_a_small_batch_that_trains_beside_a_larger_one_that_fails_is_the_batch(note):
    signals = signals_of(note)
    assert signals.batch_raised and not signals.batch_no_help
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "batch_too_large"


def test_batch_size_one_failing_is_still_a_batch_that_did_not_help():
    assert signals_of("even batch size 1 fails").batch_no_help
    assert signals_of("batch size 1 still runs out of memory").batch_no_help


@pytest.mark.parametrize(("note", "peak"), [("at the start of training memory is very high (11.5 GB) but after a few iterations it settles at 3 GB", True),
                                            ("when the run starts usage spikes to 15 GB, then drops to 6 GB", True),
                                            ("memory peaks in the first few iterations and then stabilizes", True),
                                            ("at the start it uses 5 GB and then it keeps growing until it fails", False)])
def test_a_peak_at_the_start_that_settles_lower_in_several_wordings(note, peak):
    assert signals_of(note).start_peak_then_lower == peak


def test_a_peak_at_the_start_that_settles_lower_is_an_autotuners_workspace():
    note = ("segmentation training: at the start memory use is very high, 14.1 of 16 GB, and after some iterations it "
            "drops to 5 GB, so larger crops run out of memory at the start")
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "cudnn_or_workspace"


def test_a_quantized_model_under_zero3_is_loaded_whole_on_every_gpu():
    note = "QLoRA (4-bit bitsandbytes) fine-tuning of a 65B model on 8 x 24 GB GPUs with DeepSpeed ZeRO-3 runs out of memory while loading"
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "distributed_replication"
    # A quantized model small enough for one GPU is not that.
    small = "QLoRA (4-bit) fine-tuning of a 7B model on 8 x 80 GB GPUs with ZeRO-3 runs out of memory"
    assert "distributed_replication" not in ids("torch.OutOfMemoryError: CUDA out of memory.", small)[:1]


@pytest.mark.parametrize("note", ["encoding the whole corpus with a sentence-transformers model", "running predictions on a very large dataset in one call",
                                  "embedding over an entire dataset of product descriptions"])
def test_one_inference_call_over_a_whole_large_collection_in_several_wordings(note):
    assert signals_of(note).dataset_size_matters


@pytest.mark.parametrize(("note", "whole"), [("full-batch training of a GCN on ogbn-arxiv", True),
                                             ("a GNN trained full batch on the citation graph", True),
                                             ("one big graph handed to a DataLoader with batch_size=16", True),
                                             ("a graph with 2,000,000 edges", True),
                                             ("full batch gradient descent on a linear model", False)])
def test_a_whole_graph_at_once_in_several_wordings(note, whole):
    assert signals_of(note).whole_graph == whole


def test_a_whole_graph_through_a_gnn_is_the_input_not_the_batch():
    note = "training GraphSAGE full-batch on a social graph runs out of memory in the first epoch"
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "input_size_too_large"


@pytest.mark.parametrize("note", ["even with batch_size=1 it fails", "still with a batch size of 1", "even at batch-size 1"])
def test_batch_one_failing_in_several_spellings(note):
    assert signals_of(note).batch_no_help


def test_tensorflow_asking_for_the_whole_device_at_start_is_its_own_reservation():
    whole = ("I tensorflow/core/common_runtime/gpu/gpu_device.cc:1030] Found device 0 with properties: name: GeForce GTX 1080 "
             "totalMemory: 7.92GiB freeMemory: 7.60GiB\n"
             "E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed to allocate 7.92G (8503820288 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY")
    assert ids(whole)[0] == "framework_bug"
    # Asking for what was free when another process took it in between is the other process.
    part = whole.replace("failed to allocate 7.92G (8503820288 bytes)", "failed to allocate 7.20G (7730941132 bytes)")
    assert ids(part)[0] == "other_process_or_device"


@pytest.mark.parametrize("note", ["usage starts at 12.7 GB when training begins and comes down to 4.7 GB later on",
                                  "memory is around 9 GB in the first iterations and then settles at 1.4 GB"])
def test_a_start_peak_named_after_its_size_still_settles_lower(note):
    assert signals_of(note).start_peak_then_lower


@pytest.mark.parametrize("note", ["peak allocation happens during the optimizer's state initialization",
                                  "it dies at optimizer state allocation"])
def test_the_optimizers_state_initialisation_is_its_set_up(note):
    assert signals_of(note).phase == "optimizer_setup"


@pytest.mark.parametrize("note", ["I narrowed the leak down to one metric", "the plain L1 and MSE losses next to it do not grow",
                                  "traced the memory growth down to the custom CUDA op"])
def test_narrowing_a_leak_down_to_one_part_in_several_wordings(note):
    assert signals_of(note).library_part_isolated


@pytest.mark.parametrize("note", ["there is a per-epoch memory growth", "I see an increase in GPU memory every step", "a slow memory creep"])
def test_growth_said_as_a_noun(note):
    assert signals_of(note).growth


def test_released_once_that_epoch_finishes():
    assert signals_of("usage rises across an epoch and is released once that epoch finishes").freed_at_epoch_end


@pytest.mark.parametrize(("note", "phase"), [("generating sentence embeddings for a corpus fails", "unknown"),
                                             ("generating depth maps for every frame", "unknown"),
                                             ("generating text with sampling fails", "generation")])
def test_generating_embeddings_or_maps_is_no_text_generation(note, phase):
    assert (signals_of(note).phase == "generation") == (phase == "generation")


def test_protein_sequences_are_not_work_done_in_sequence():
    assert not signals_of("embeddings for protein sequences of a large family").repeated_calls
    assert signals_of("three models evaluated in sequence in one process").repeated_calls


@pytest.mark.parametrize("note", ["a protein of 6800 residues", "sequences (longer than 4700) fail", "a complex with total length 2664",
                                  "a 12,000 bp genomic window"])
def test_biological_sequence_lengths_are_long_inputs(note):
    assert signals_of(note).long_input


@pytest.mark.parametrize(("note", "length"), [("with the length set to 20k", 20480), ("input length of 8192", 8192)])
def test_a_length_set_in_words_is_the_sequence_length(note, length):
    assert signals_of(note).seq_len == length


def test_long_context_inference_of_a_language_model_is_its_attention():
    note = "evaluating a 7B llama with the length set to 32k runs out of memory on an 80 GB card"
    ranked_ids = ids("torch.OutOfMemoryError: CUDA out of memory.", note)
    assert "attention_quadratic" in ranked_ids[:2]
    assert ranked_ids.index("attention_quadratic") < ranked_ids.index("missing_no_grad")


def test_a_structure_model_on_a_long_protein_is_its_pair_attention():
    note = "ESMFold on a 1,900-residue complex runs out of memory on a 24 GB GPU"
    assert "attention_quadratic" in ids("torch.OutOfMemoryError: CUDA out of memory.", note)[:2]


def xpu_message(request: str, allocated: str = "0 bytes") -> str:
    return (f"torch.OutOfMemoryError: XPU out of memory. Tried to allocate {request}. GPU 0 has a total capacity of 15.11 GiB. "
            f"Of the allocated memory {allocated} is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.")


def test_one_allocation_of_four_gigabytes_on_an_idle_intel_gpu_is_its_runtime_limit():
    assert ids(xpu_message("6.00 GiB"))[0] == "framework_bug"
    # A small request on a full Intel card is the workload as anywhere else.
    assert ids(xpu_message("512.00 MiB", allocated="14.50 GiB"))[0] != "framework_bug"


@pytest.mark.parametrize("note", ["it fails although the memory is free", "even though VRAM is available it crashes",
                                  "despite plenty of memory being free"])
def test_a_failure_despite_free_memory_in_several_wordings(note):
    assert signals_of(note).free_at_failure


@pytest.mark.parametrize("note", ["train.py --max-duration 1200 runs out of memory", "fairseq-train ... --max-tokens 16000 fails",
                                  "batch_bins: 20000000 in the ESPnet config"])
def test_a_batch_sized_in_seconds_or_tokens_is_the_batch(note):
    assert signals_of(note).batch_budget
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "batch_too_large"


@pytest.mark.parametrize(("note", "long"), [("I keep utterances longer than 40 seconds", True), ("clips of up to 3 minutes", True),
                                            ("training on my own dataset", False)])
def test_audio_kept_up_to_a_length_is_long_input_and_my_own_data_is_not(note, long):
    assert signals_of(note).long_input == long


@pytest.mark.parametrize("note", ["PPO with a colocated sglang engine: it dies when sglang launches its server on the training GPUs",
                                  "RLHF run, CUDA out of memory while initializing the vllm engine next to the policy",
                                  "our GRPO job crashes as vLLM wakes up from sleep mode before a rollout"])
def test_an_inference_engine_failing_as_it_starts_beside_a_trainer_is_its_reservation(note):
    assert signals_of(note).engine_starting
    ranked_ids = ids("torch.OutOfMemoryError: CUDA out of memory.", note)
    assert ranked_ids[0] == "kv_cache_or_generation"


def test_an_engine_frame_at_wake_up_is_the_engine_starting():
    text = TRACE.format(function="rollout", code="engine.wake_up()", message="RuntimeError: CUDA Error: out of memory") \
        .replace('  File "run.py", line 31', '  File "/venv/lib/python3.11/site-packages/vllm/device_allocator/cumem.py", line 31')
    context = build_context(text=text, note="PPO training with vllm colocated")
    assert read_signals(context).engine_starting


@pytest.mark.parametrize("note", ["PPO with vLLM colocated: the engine starts fine, but the training step after a rollout runs out of memory",
                                  "GRPO with sleep mode: vLLM is created without errors; the OOM comes in the second training step"])
def test_a_trainer_failing_beside_an_engine_that_started_is_not_the_engine_starting(note):
    assert not signals_of(note).engine_starting
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "fragmentation"


@pytest.mark.parametrize("note", ["upscaling a photo 4x with a tiled VAE runs out of memory while decoding",
                                  "the autoencoder crashes when it decodes the latents of a 2048x2048 image"])
def test_decoding_latents_or_images_is_no_text_generation(note):
    assert signals_of(note).phase != "generation"
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] != "kv_cache_or_generation"


def test_decoding_tokens_is_still_generation():
    assert signals_of("a 7B llama runs out of memory while decoding 2,000 new tokens").phase == "generation"


def test_an_encoder_decoder_is_no_code_model():
    assert "llm" not in signals_of("a small image encoder-decoder for segmentation runs out of memory").domains
    assert "llm" in signals_of("fine-tuning starcoder runs out of memory").domains


@pytest.mark.parametrize("note", ["the memory used by validation is not freed when validation is over, and the next training step OOMs",
                                  "After the evaluation loop finishes the GPU memory stays allocated and the next epoch dies",
                                  "VRAM never goes back down once inference is done, so training afterwards crashes"])
def test_memory_still_held_after_evaluation_is_a_reference(note):
    assert signals_of(note).held_after_phase
    ranked_ids = ids("torch.OutOfMemoryError: CUDA out of memory.", note)
    assert ranked_ids[0] == "reference_leak"
    assert ranked_ids.index("reference_leak") < ranked_ids.index("missing_no_grad") if "missing_no_grad" in ranked_ids else True


def test_memory_released_after_evaluation_is_not_held():
    assert not signals_of("memory is released after validation ends, then training OOMs").held_after_phase


@pytest.mark.parametrize("note", ["one of the GPUs is usually in use by someone else", "GPU 0 is busy by another job most days",
                                  "the first card is often in use by a colleague"])
def test_a_gpu_in_use_by_someone_else_in_several_wordings(note):
    assert signals_of(note).other_process_hint


@pytest.mark.parametrize("note", ["nvidia-smi shows 12 GB in use and no processes are listed",
                                  "even when none of my jobs is running... even when no training process is running the card has 11 GB allocated",
                                  "the first run works; after the process ended its GPU memory remains occupied and the next run fails",
                                  "I killed the script but the VRAM stays allocated",
                                  "memory is still in use after the job crashed",
                                  "12.8 GB of the card are taken, yet there isn't a single process in its list",
                                  "none of my scripts are running and the GPU is half full"])
def test_memory_held_with_no_process_of_the_users_running_is_another_process(note):
    assert signals_of(note).other_process_hint
    assert ids("", f"{note}; then it runs out of memory")[0] == "other_process_or_device"


@pytest.mark.parametrize("note", ["training finished epoch 1 and memory remains high during epoch 2",
                                  "the run finished the first epoch, then memory still grows",
                                  "nvidia-smi shows no other process"])
def test_a_finished_epoch_or_a_denied_process_is_no_dead_process(note):
    assert not signals_of(note).other_process_hint


@pytest.mark.parametrize("note", ["Speech model on train-960: training works at batch 8, and after two epochs it runs out of memory in validation",
                                  "CTC model, train_2 split: I lowered the batch to 6 to fit, then it fails during evaluation"])
def test_the_failing_clause_names_the_phase_not_a_split_name(note):
    assert signals_of(note).phase == "evaluation"


@pytest.mark.parametrize("note", ["a 3D segmentation network on 160x192x160 MRI crops", "volumes resampled to 96^3 for my 3D UNet",
                                  "training a 3D UNet on CT scans with batch size 2"])
def test_a_volume_is_a_large_input_in_several_wordings(note):
    assert signals_of(note).long_input
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "input_size_too_large"


def test_logits_returned_by_the_whole_model_are_not_the_output_layer():
    whole = TRACE.format(function="train", code="logits = net(images)", message="RuntimeError: CUDA out of memory.")
    assert ids(whole)[0] != "large_logits"
    head = TRACE.format(function="forward", code="logits = self.lm_head(hidden_states)", message="RuntimeError: CUDA out of memory.")
    assert ids(head)[0] == "large_logits"


@pytest.mark.parametrize("note", ["the repo's train.py with the default settings: after 30000 iterations it runs out of memory",
                                  "the official config, no changes to the code; memory keeps growing until it fails in epoch 12",
                                  "run out of the box, GPU memory climbs every epoch and it dies partway"])
def test_growth_in_a_library_recipe_run_as_published_is_the_library(note):
    assert signals_of(note).unmodified_recipe
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "framework_bug"


def test_a_recipe_the_user_changed_is_their_own_code():
    note = "the official config with some parameters changed: memory keeps growing until it fails after 2000 iterations"
    assert not signals_of(note).unmodified_recipe
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] != "framework_bug"


@pytest.mark.parametrize("note", ["it runs out of memory during the 23rd epoch", "fails in the 5th epoch", "crashes at the 140th iteration"])
def test_a_failure_in_a_late_numbered_epoch_is_growth(note):
    assert signals_of(note).growth


@pytest.mark.parametrize("note", ["memory grows every step on a nightly build; commit 3f9a2c1 works fine",
                                  "on the latest PyTorch main it runs out, with 2.4.0 it peaks at half the card"])
def test_a_build_named_by_its_commit_or_the_latest_main_is_a_version_contrast(note):
    assert signals_of(note).upgrade_regression


def test_describing_the_build_used_is_no_version_contrast():
    assert not signals_of("I run the model on current main with a 4090 and it runs out at 8k tokens").upgrade_regression


@pytest.mark.parametrize("note", ["the batch is already 1 and it still fails", "I already use a batch size of 1",
                                  "batch size was already set to 1"])
def test_a_batch_already_at_one_in_several_wordings(note):
    assert signals_of(note).batch_no_help


def test_a_one_image_tensor_about_a_thousand_pixels_a_side_is_the_resolution():
    text = "ResourceExhaustedError: OOM when allocating tensor with shape[1,128,1000,1000] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"
    assert ids(text)[0] == "input_size_too_large"


@pytest.mark.parametrize("note", ["my sentiment prediction model runs out of memory while training", "a link prediction task on a big graph"])
def test_a_prediction_task_named_is_no_evaluation(note):
    assert signals_of(note).phase != "evaluation"


def test_predicting_with_a_model_is_still_evaluation():
    assert signals_of("it runs out of memory during prediction on the test set").phase == "evaluation"


@pytest.mark.parametrize("note", ["with allow_growth=True the RNN runs out of memory; without allow_growth it fits",
                                  "disabling set_memory_growth the same job works fine, with it it OOMs",
                                  "it only works without memory growth enabled"])
def test_fitting_only_without_tensorflow_growth_mode_is_fragmentation(note):
    assert signals_of(note).fits_without_growth_mode
    text = "Resource exhausted: OOM when allocating tensor with shape[64,512,512] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"
    assert ids(text, note)[0] == "fragmentation"


def test_growth_mode_set_as_an_attempted_fix_is_no_evidence():
    assert not signals_of("I set allow_growth = True but it still runs out of memory").fits_without_growth_mode


def test_data_parallel_over_unequal_gpus_is_the_device_set():
    text = ("UserWarning:\nThere is an imbalance between your GPUs. You may want to exclude GPU 1 which\nhas less than 75% of the "
            "memory or cores of GPU 0.\nRuntimeError: CUDA out of memory. Tried to allocate 64.00 MiB")
    ranked_ids = ids(text, "training a resnet with nn.DataParallel on two cards")
    assert ranked_ids[0] == "other_process_or_device"


@pytest.mark.parametrize("note", ["yolo train model=yolov8n.pt batch=-1 data=coco.yaml survives epoch 1 and dies in epoch 2",
                                  "with AutoBatch the training fails partway through the second epoch",
                                  "Lightning's auto_scale_batch_size picked 512, then it crashes after a few epochs"])
def test_an_automatic_batch_that_fails_after_the_start_is_the_finders_estimate(note):
    assert signals_of(note).auto_batch
    assert "framework_bug" in ids("torch.OutOfMemoryError: CUDA out of memory.", note)[:3]


@pytest.mark.parametrize("note", ["my feature extraction script fails after one batch has run, every time",
                                  "it always runs out on the second batch", "CUDA OOM after the first request is done"])
def test_a_second_batch_that_fails_outside_training_is_what_the_first_left(note):
    assert signals_of(note).second_round_fails
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "reference_leak"


def test_a_second_batch_failing_in_training_is_left_to_the_training_rules():
    note = "training fails on the second batch"
    assert signals_of(note).second_round_fails
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] != "reference_leak"


@pytest.mark.parametrize("note", ["even batch=16 stops with the same error", "even with batch size 8 it still fails"])
def test_even_a_smaller_batch_that_fails_in_several_wordings(note):
    assert signals_of(note).batch_no_help


@pytest.mark.parametrize("note", ["it dies at around 22k iterations", "crashes by 15000 steps", "fails at about 3.5k iters"])
def test_a_failure_at_a_late_iteration_count_is_growth(note):
    assert signals_of(note).growth


def test_the_newest_build_named_is_a_version_contrast():
    assert signals_of("on the newest PyTorch nightly it runs out; 2.3.1 peaks at half the card").upgrade_regression


@pytest.mark.parametrize("note", ["the same runs fit once allow_growth is off", "with set_memory_growth switched off it trains",
                                  "it works when TF_FORCE_GPU_ALLOW_GROWTH=false"])
def test_fitting_with_growth_mode_off_in_any_word_order(note):
    assert signals_of(note).fits_without_growth_mode


def test_a_pasted_failing_line_without_its_file_line_is_still_the_site():
    text = ("    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d)\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 GiB.")
    assert ids(text)[0] == "attention_quadratic"


def test_a_huge_request_from_elsewhere_stays_the_input():
    text = "    out = self.decoder(latents)\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 GiB."
    assert ids(text)[0] == "input_size_too_large"


@pytest.mark.parametrize("note", ["I call the model with output_attentions=True to plot the maps", "the model returns attention weights for every layer"])
def test_returning_attention_weights_is_a_materialised_attention(note):
    assert signals_of(note).naive_attention


@pytest.mark.parametrize("note", ["appending each batch's hidden_states to a list during inference", "I store all the hidden states in a list on the GPU"])
def test_hidden_states_kept_in_a_list_in_several_wordings(note):
    assert signals_of(note).outputs_kept


def test_a_transformers_model_class_beside_the_trainer_is_hugging_faces_trainer():
    note = "a RobertaForSequenceClassification trained with the Trainer runs out of memory in evaluation"
    assert signals_of(note).hf_trainer_eval
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "reference_leak"


@pytest.mark.parametrize("note", ["DPO fine-tuning with the model loaded via AutoModelForCausalLM.from_pretrained runs out",
                                  "training, with the weights loaded using torch.load(path), dies at step 3"])
def test_how_the_model_was_loaded_is_no_loading_phase(note):
    assert signals_of(note).phase == "training"


def test_a_small_model_of_a_large_vocabulary_family_is_its_logits():
    note = "fine-tuning Qwen2.5-0.5B with SFT runs out of memory on a 24 GB card"
    assert signals_of(note).family_vocab == 151_936
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "large_logits"
    # The same family at 72B: the weights, not the logits.
    assert "large_logits" not in ids("torch.OutOfMemoryError: CUDA out of memory.", "fine-tuning Qwen2.5-72B runs out of memory")[:1]


@pytest.mark.parametrize("note", ["SFT runs on one card but the DPO stage goes out of memory",
                                  "PPO with the reference model on the same GPU runs out of memory during training"])
def test_preference_tuning_beside_a_frozen_reference_is_two_copies_of_the_weights(note):
    assert signals_of(note).reference_model_method
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "model_too_large"


def test_a_lora_policy_is_its_own_reference():
    note = "DPO with LoRA adapters runs out of memory during training"
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] != "model_too_large"


def test_a_transformers_model_class_alone_is_no_trainer_evaluation():
    assert not signals_of("model = AutoModelForCausalLM.from_pretrained(path).to(device) fails on a 24 GB card").hf_trainer_eval


def test_a_feed_forward_activation_of_a_power_of_two_size_is_no_attention_matrix():
    text = ("    hidden = hidden * F.silu(gate)\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 2.00 GiB is free.")
    note = "a 7B llama at 128k tokens runs out of memory"
    assert ids(text, note)[0] != "attention_quadratic"


@pytest.mark.parametrize("note", ["a Mamba2 model at 300k tokens runs out of memory", "RWKV on very long inputs runs out of memory"])
def test_attention_free_models_are_their_length_not_attention(note):
    assert signals_of(note).attention_free
    ranked_ids = ids("torch.OutOfMemoryError: CUDA out of memory.", note)
    assert ranked_ids[0] == "input_size_too_large"


@pytest.mark.parametrize("note", ["the replay buffer keeps the last 1000 outputs, inside the autograd.record block",
                                  "I store the fake images in a list without detaching them"])
def test_kept_tensors_that_carry_their_graph_are_a_retained_graph(note):
    signals = signals_of(note)
    assert signals.outputs_kept and signals.kept_with_graph
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "graph_retained"


@pytest.mark.parametrize("note", ["my CycleGAN runs out of memory after the generated images are shown",
                                  "training a GAN: the discriminator sees the generated images and it OOMs"])
def test_a_gans_generated_images_are_no_text_generation_nor_diffusion(note):
    signals = signals_of(note)
    assert signals.phase != "generation"
    assert "diffusion" not in signals.domains


@pytest.mark.parametrize(("note", "params"), [("SDXL txt2img on my 8 GB card", 3.5e9), ("flux.1 dev in ComfyUI", 16.9e9),
                                              ("Stable Diffusion 1.5 on a laptop", 1.07e9)])
def test_image_generation_families_give_their_parameter_count(note, params):
    assert signals_of(note).param_count == params


def test_sdxl_on_an_8_gb_card_is_its_weights():
    note = "SD 1.5 works at any size on my RTX 3060 Ti but an SDXL checkpoint runs out of memory"
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "model_too_large"


@pytest.mark.parametrize("note", ["a two-tower recommender with embeddings for 12M users and 3M items",
                                  "entity embeddings for 25,000,000 entities in PyTorch-BigGraph on one GPU"])
def test_embedding_tables_of_millions_of_rows_are_the_model(note):
    assert signals_of(note).embedding_rows >= 1_000_000
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "model_too_large"


def test_a_free_colab_and_the_newest_cards_have_a_capacity():
    assert signals_of("SDXL with a ControlNet on a free Colab").note_gpu_capacity == 15 * 10**9
    assert signals_of("running it on an RTX 5070").note_gpu_capacity == 12 * 10**9
    assert signals_of("finetuning in Google Colab").note_gpu_capacity == 15 * 10**9
    assert signals_of("a Kaggle notebook").note_gpu_capacity == 15 * 10**9
    assert signals_of("Colab with an A100 40GB").note_gpu_capacity == 40 * 10**9


@pytest.mark.parametrize("note", ["finetuning a 774M model with Adam on a 15 GB card", "full fine-tune of a 0.8B model with AdamW on one 16GB GPU"])
def test_model_states_that_leave_little_of_the_card_are_the_optimizers(note):
    ranked = ids("ResourceExhaustedError: OOM when allocating tensor with shape[1280,5120]", note)
    assert ranked[0] == "optimizer_state"


def test_model_states_that_leave_most_of_the_card_free_are_no_optimizer_state():
    assert "optimizer_state" not in ids("RuntimeError: CUDA out of memory.", "finetuning a 124M model with Adam on a 24 GB card")[:1]


def test_a_diffusion_transformer_is_image_generation():
    assert "diffusion" in signals_of("serving a 6B DiT image model").domains


@pytest.mark.parametrize("note", ["SD 1.5 works but SDXL fails", "Llama 3.1 runs while the 70B does not"])
def test_a_model_familys_number_is_no_version(note):
    assert not signals_of(note).upgrade_regression


@pytest.mark.parametrize("note", ["it runs out after training on a few thousand examples", "fails after 5000 samples have gone through"])
def test_a_failure_after_many_examples_is_growth(note):
    assert signals_of(note).growth


def test_two_different_runs_are_no_other_process():
    assert not signals_of("it fails on two accounts with two different trainings").other_process_hint
    assert signals_of("two training processes share the GPU").other_process_hint


@pytest.mark.parametrize("note", ["the OOM started two days ago without any change on my side",
                                  "a week ago this notebook suddenly began to run out of memory",
                                  "since yesterday the same training suddenly fails"])
def test_a_failure_that_began_recently_is_a_change_underneath(note):
    assert signals_of(note).upgrade_regression


def test_a_recent_failure_after_the_users_own_change_is_no_regression():
    assert not signals_of("two days ago I increased the resolution and it suddenly began to fail").upgrade_regression


@pytest.mark.parametrize("note", ["the loader sorts sequences from the shortest to the longest and memory keeps growing",
                                  "batches are sorted by length, and memory grows until the OOM",
                                  "with increasing sequence lengths the reserved memory climbs"])
def test_inputs_that_grow_through_the_run_are_fragmentation(note):
    assert signals_of(note).lengths_increasing
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "fragmentation"


@pytest.mark.parametrize("note", ["it goes OOM once a few thousand examples have been trained on", "when 20k samples have been processed it fails"])
def test_growth_after_many_examples_in_other_words(note):
    assert signals_of(note).growth


@pytest.mark.parametrize("note", ["the fake-image pool of 50 images gets filled every step", "a replay buffer of outputs is appended to each step"])
def test_a_container_of_outputs_that_fills_is_outputs_kept(note):
    assert signals_of(note).outputs_kept


@pytest.mark.parametrize("note", ["the DPO quickstart with a 0.5B model runs out", "GRPO of a 1B model OOMs on one card", "SFT of my model fails"])
def test_preference_and_supervised_tuning_are_training(note):
    assert signals_of(note).phase == "training"


def test_no_longer_fitting_past_a_size_is_no_regression():
    assert not signals_of("embeddings wider than 100 dimensions no longer fit on the card").upgrade_regression
    assert signals_of("since the update the model no longer fits on the card").upgrade_regression


@pytest.mark.parametrize("note", ["after QLoRA training, merge_and_unload on the GPU runs out of memory",
                                  "saving with save_method='merged_16bit' fails with OOM",
                                  "merging the LoRA adapters into the 70B base model OOMs",
                                  "it dequantizes the model to fp16 for the export and dies"])
def test_merging_adapters_materialises_full_weights(note):
    assert signals_of(note).merge_to_full_weights
    assert ids("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 500.00 MiB.", note)[0] == "model_too_large"


def test_a_dequantize_kernel_in_the_forward_pass_is_no_merge():
    assert not signals_of("the QLoRA forward pass calls the dequantize kernel for each layer and OOMs at batch 32").merge_to_full_weights


@pytest.mark.parametrize("note", ["merge_and_unload on the CPU: I'm near the CPU memory limit of my machine and it crashes",
                                  "merging LoRA into the base on CPU hits the host RAM limit and the process is killed"])
def test_a_merge_on_the_cpu_that_fills_host_memory_is_host(note):
    assert signals_of(note).host_ram
    assert ids("", note)[0] == "dataloader_or_host"


def test_a_cpu_run_with_no_gpu_message_and_host_memory_full_is_not_wrong_device():
    assert ids("", "the model is on the CPU and the job is killed; we are near the CPU memory limit")[0] == "dataloader_or_host"


@pytest.mark.parametrize("note", ["fine-tuning with LLaMA-Factory, training fits but it OOMs as soon as the eval step starts",
                                  "axolotl run: OOM during evaluation, training was fine",
                                  "at the eval step of my TRL run memory runs out"])
def test_trainer_based_frameworks_evaluate_in_the_trainer_loop(note):
    assert signals_of(note).hf_trainer_eval
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "reference_leak"


@pytest.mark.parametrize(("note", "capacity"), [("8x A100 80G for the job", 80 * 10**9), ("on a 24 GB 4090", 24 * 10**9),
                                                ("one H100 80GB", 80 * 10**9)])
def test_card_sizes_written_with_g_alone_or_before_a_bare_number(note, capacity):
    assert signals_of(note).note_gpu_capacity == capacity


@pytest.mark.parametrize(("note", "params"), [("the llama2_7b model", 7e9), ("config qwen2_1.5b_instruct", 1.5e9), ("a conv_3x3 stem", None)])
def test_model_sizes_after_an_underscore(note, params):
    assert signals_of(note).param_count == params


def test_fp32_weights_of_a_named_model_that_fit_in_half_precision():
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", "generating with the llama2_7b model on a 24 GB 4090")[0] == "full_precision"


@pytest.mark.parametrize("note", ["predict on a 72B model with 8x A100 80G OOMs: every GPU loads the whole model at once",
                                  "inference of a 70B model on 4 A100 80GB cards: the model is not spread over the cards, each card loads it once",
                                  "running a 30B model on 8 GPUs, all 8 processes load a full copy of the weights and it runs out"])
def test_each_gpu_loading_its_own_copy_is_replication(note):
    assert signals_of(note).copy_per_device
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "distributed_replication"


@pytest.mark.parametrize("note", ["the model is split across all GPUs with device_map and still OOMs",
                                  "each GPU runs out of memory at step 10"])
def test_a_model_split_over_gpus_is_no_copy_per_device(note):
    assert not signals_of(note).copy_per_device


def test_a_model_too_large_for_all_the_gpus_together_is_not_replication():
    note = "a 400B model on 2x A100 80GB: each GPU loads the whole model and fails"
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "model_too_large"


@pytest.mark.parametrize("note", ["serving an image model with --enable-cpu-offload on an L4 fails while the pipeline is constructed",
                                  "with enable_model_cpu_offload() the pipeline still runs out of memory during initialization"])
def test_offload_asked_for_yet_failing_while_building_is_the_framework(note):
    assert signals_of(note).pipeline_offload and signals_of(note).while_building
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "framework_bug"


def test_offloading_an_optimizer_is_no_pipeline_offload():
    assert not signals_of("DeepSpeed ZeRO-2 with offload_optimizer to the cpu, OOM during initialization").pipeline_offload


@pytest.mark.parametrize("note", ["the example runs out of memory at the VAE decode step on a 24 GB card",
                                  "the image pipeline OOMs while decoding the latents at the end (vae.decode)"])
def test_the_vae_decode_step_with_every_component_resident(note):
    assert ids("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB.", note)[0] == "model_too_large"


def test_a_tiled_decode_that_still_fails_is_no_resident_component():
    note = "stable diffusion upscaling with a tiled VAE decoder runs out of memory while decoding"
    assert ids("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB.", note)[0] != "model_too_large"


def test_an_engine_serving_an_image_model_keeps_no_kv_cache():
    assert "kv_cache_or_generation" not in ids("torch.OutOfMemoryError: CUDA out of memory.",
                                               "serving FLUX.1-dev with vllm-omni on one L4 runs out of memory while the pipeline is constructed")[:1]


@pytest.mark.parametrize(("note", "count", "capacity"), [("on eight 80 GB A100s", 8, 80 * 10**9), ("four 3090s in one box", 4, 24 * 10**9),
                                                         ("two 1080 Tis", 2, 11 * 10**9)])
def test_gpu_counts_and_sizes_with_the_size_between_or_a_plural_card(note, count, capacity):
    signals = signals_of(note)
    assert (signals.gpu_count, signals.note_gpu_capacity) == (count, capacity)


def test_each_of_the_gpus_loading_a_complete_copy():
    assert signals_of("it fails because each of the GPUs loads a complete copy of the 72B model").copy_per_device


@pytest.mark.parametrize("note", ["the first epoch is fine, the second crashes in backward; the test accuracy is computed after every epoch",
                                  "we validate after each epoch; the first epoch goes through, then it runs out of memory in the second",
                                  "after each epoch we evaluate on the dev set, and the second epoch runs out of memory"])
def test_training_that_fails_right_after_an_evaluation(note):
    signals = signals_of(note)
    assert signals.eval_between_training
    assert ids("RuntimeError: CUDA error: out of memory", note)[0] == "missing_no_grad"


def test_an_evaluation_under_no_grad_before_the_failing_step_is_the_cache():
    note = "validation runs under torch.no_grad() after each epoch, and the second epoch fails at its first step"
    assert ids("RuntimeError: CUDA error: out of memory", note)[0] == "fragmentation"


def test_a_later_epoch_that_runs_out_is_no_other_process():
    assert not signals_of("the second epoch runs out of memory").other_process_hint


def test_an_evaluation_per_epoch_with_no_failure_placed_after_it_adds_nothing():
    note = "we validate after every epoch; memory grows steadily during the first epoch's training until it fails"
    assert "missing_no_grad" not in ids("RuntimeError: CUDA error: out of memory", note)[:1]


@pytest.mark.parametrize("note", ["every time I continue it from a checkpoint it hits CUDA OOM",
                                  "restarting from the saved checkpoint dies when the Trainer restores the optimizer state",
                                  "picking the training up from the last checkpoint runs out of memory"])
def test_a_resume_in_other_words_is_loading(note):
    signals = signals_of(note)
    assert signals.phase == "loading"
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "checkpoint_loading"


@pytest.mark.parametrize(("note", "count"), [("training on gpus='0,1,2,3'", 4), ("DataParallel(model, device_ids=[0, 1])", 2)])
def test_a_list_of_device_ids_counts_the_gpus(note, count):
    assert signals_of(note).gpu_count == count


@pytest.mark.parametrize("note", ["each validation raises GPU memory and it is never released",
                                  "every epoch increases the memory usage a little more"])
def test_memory_as_the_object_of_a_verb_of_increase_is_growth(note):
    assert signals_of(note).growth


def test_raising_a_memory_limit_is_no_growth():
    assert not signals_of("I tried raising the GPU memory utilization and the memory fraction").growth


@pytest.mark.parametrize("note", ["each card ends up holding the entire model and it OOMs",
                                  "with 4 GPUs every rank has a complete copy of the weights"])
def test_each_device_holding_the_whole_model_in_other_verbs(note):
    assert signals_of(note).copy_per_device


@pytest.mark.parametrize("note", ["each epoch ends with a validation pass, and that is where CUDA runs out of memory",
                                  "memory keeps going up while it validates, until the OOM"])
def test_a_validation_pass_and_validates_name_the_evaluation(note):
    assert signals_of(note).phase == "evaluation"


@pytest.mark.parametrize("note", ["the Triton server already hosts 7 models that run fine; adding mine breaks it",
                                  "this GPU is serving three other models for the team"])
def test_a_server_hosting_other_models(note):
    assert signals_of(note).other_process_hint


def test_a_script_that_runs_two_models_is_no_other_process():
    assert not signals_of("distillation: the script runs two models, teacher and student").other_process_hint


@pytest.mark.parametrize("note", ["an LSTM trained batch by batch, passing the hidden state from each batch into the next: memory grows",
                                  "I carry the hidden state over to the next batch and memory keeps growing",
                                  "the GRU state is reused across batches of one long stream and it goes OOM after a while"])
def test_a_recurrent_state_carried_across_batches_keeps_the_graph(note):
    assert signals_of(note).state_carried
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "graph_retained"


@pytest.mark.parametrize("note", ["each iteration starts from a clone of the previous iteration's output, and memory grows until OOM",
                                  "training a video model, the output of the last frame is fed in as the next input; memory climbs every frame",
                                  "I refine the estimate from the previous step in a loop during training and it runs out of memory after 30 steps"])
def test_an_output_carried_into_the_next_iteration_keeps_the_graph(note):
    assert signals_of(note).state_carried
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "graph_retained"


def test_an_output_carried_in_evaluation_is_not_a_training_graph():
    note = "during evaluation the previous frame's prediction is the next input"
    assert signals_of(note).state_carried
    assert "graph_retained" not in ids("RuntimeError: CUDA out of memory.", note)[:1]


@pytest.mark.parametrize("note", ["in distributed apex amp training, torch.load(ckpt_f) without a device id goes out of memory",
                                  "In DDP training, torch.load(checkpoint) without map_location runs out of memory"])
def test_the_failing_clauses_own_subject_names_the_phase(note):
    assert signals_of(note).phase == "loading"


def test_a_phase_after_until_is_when_it_ended():
    from oomtriage.engine.signals import note_phase
    assert note_phase("resuming from the old checkpoint, GPU0 fills up on it until CUDA OOM ends training")[0] == "loading"


@pytest.mark.parametrize("note", ["this setup worked before; now it crashes on the small card",
                                  "the same notebook ran fine before, now it runs out of memory"])
def test_worked_before_and_now_fails_is_a_change_underneath(note):
    assert signals_of(note).upgrade_regression


def test_worked_before_a_change_of_ones_own_is_no_regression():
    assert not signals_of("it worked before I increased the batch size, now it fails").upgrade_regression


@pytest.mark.parametrize(("note", "count", "capacity"), [("a VM with two 24 GB L4s", 2, 24 * 10**9),
                                                         ("four 12.2GB GPUs and one 4GB GPU", 4, None)])
def test_counts_with_single_digit_cards_and_decimal_sizes(note, count, capacity):
    signals = signals_of(note)
    assert signals.gpu_count == count
    if capacity:
        assert signals.note_gpu_capacity == capacity


def test_a_range_of_counts_is_no_model_size():
    assert signals_of("past 5-10M sentences on one V100 it fails").param_count is None


def test_a_bare_count_past_which_an_encode_fails_is_the_dataset_size():
    note = "encode over ~100M tiny sentences: past 5-10M on one V100 it throws CUDA OOM"
    assert signals_of(note).dataset_size_matters


def test_a_switch_that_does_not_help():
    assert signals_of("the inpainting pipeline OOMs at once and attention slicing doesn't help it").switch_no_effect


@pytest.mark.parametrize("note", ["ZeRO-3 on 8 GPUs: training and evaluation run at 10GB per GPU, but the saving step runs out of memory",
                                  "FSDP full shard trains fine and it fails when saving"])
def test_a_sharded_run_failing_at_its_saving_step(note):
    assert signals_of(note).saving
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "distributed_replication"


@pytest.mark.parametrize("note", ["the fast variant goes OOM on a 1024x1024 image; with the stock SAM this problem does not exist",
                                  "the original implementation runs fine on the same images, the optimized fork runs out of memory"])
def test_the_original_implementation_fitting_is_the_variant(note):
    assert signals_of(note).original_fits
    assert ids("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", note)[0] == "framework_bug"


def test_memory_going_up_to_a_size_is_a_peak_not_growth():
    assert not signals_of("GPU memory goes up to 55GB and it fails").growth
    assert signals_of("GPU memory goes up to 55GB over the epochs").growth


@pytest.mark.parametrize("note", ["points_per_batch seems not to affect the memory", "the batch size has no effect on the memory use"])
def test_a_batch_knob_without_effect(note):
    assert signals_of(note).batch_no_help


def test_inference_that_a_batch_knob_cannot_fix_is_one_inputs_size():
    note = "mask generation with the default parameters runs out of memory; points_per_batch seems not to affect the memory"
    assert "input_size_too_large" in ids("torch.OutOfMemoryError: CUDA out of memory.", note)[:2]


@pytest.mark.parametrize("note", ["multi-GPU training: the memory is clearly not allocated evenly across the GPUs",
                                  "with DataParallel the load isn't balanced between the cards and it OOMs after some epochs"])
def test_memory_not_spread_evenly_over_the_gpus_is_one_gpu_heavier(note):
    assert signals_of(note).rank0_heavy
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "distributed_replication"


def test_a_failure_inside_a_constructor_without_figures_is_placing_weights():
    log = ('Traceback (most recent call last):\n  File "/app/run.py", line 12, in main\n    engine = Engine(args.model)\n'
           '  File "/opt/lib/engine.py", line 40, in __init__\n    self._load()\nRuntimeError: CUDA failed with error out of memory')
    assert ids(log, "running the tool with its large model on my GPU")[0] == "model_too_large"


def test_a_dataset_constructor_is_no_weights():
    log = ('Traceback (most recent call last):\n  File "/app/train.py", line 12, in main\n    ds = GpuDataset(path)\n'
           '  File "/app/data.py", line 40, in __init__\n    self.x = torch.load(path).cuda()\nRuntimeError: CUDA error: out of memory')
    assert "model_too_large" not in ids(log, "training my classifier")[:1]


@pytest.mark.parametrize("note", ["with device_map='auto' the GPUs were maxed out to their capacity by the weights and a short input OOMs",
                                  "the model's weights fill all four GPUs, so the first forward runs out"])
def test_weights_said_to_fill_the_gpus(note):
    assert signals_of(note).weights_fill_gpus
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "model_too_large"


def test_a_tools_own_memory_cap_under_the_card():
    note = "on two 32GB GPUs the 13B model needs 26GB, but model_adapter.py sets the GPU memory use to 85%, so it runs out"
    assert signals_of(note).tool_memory_cap
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "framework_bug"


@pytest.mark.parametrize(("note", "size"), [("loading all 5 models takes about 3.3GB of VRAM", 3.3e9),
                                            ("the weights use 7 GB once loaded", 7e9)])
def test_the_weights_size_stated_in_the_note(note, size):
    assert signals_of(note).measured_weights == pytest.approx(size, rel=0.08)


@pytest.mark.parametrize("note", ["RAM (not GPU memory) grows with every request until the system kills the process",
                                  "the inference server's RAM grows until the OS kills it"])
def test_host_ram_said_with_an_aside_and_a_kill(note):
    signals = signals_of(note, text="")
    assert signals.host_ram
    assert ids("", note)[0] == "dataloader_or_host"


@pytest.mark.parametrize("note", ["rank 0 needs a lot of system memory and gets killed after several hours",
                                  "the process is killed by the system after two hours of training",
                                  "the preprocessing eats up all the host RAM, then it dies",
                                  "after some hours the OS kills rank 0; its resident memory climbs past 200G",
                                  "the worker's RSS grows to 60 GB and then it dies"])
def test_host_ram_said_as_a_need_or_a_kill_by_the_system(note):
    signals = signals_of(note, text="")
    assert signals.host_ram and not signals.rank0_heavy
    assert ids("", note)[0] == "dataloader_or_host"


@pytest.mark.parametrize(("note", "card"), [("GPU 1 is busy with another job; my model only uses 1G on GPU 0", None),
                                            ("it uses 10GB on GPU 0 and fails", None), ("a single 24G card", 24e9)])
def test_an_amount_on_a_gpu_is_not_the_cards_size(note, card):
    assert signals_of(note).note_gpu_capacity == card


@pytest.mark.parametrize("note", ["calling load_model and then predict repeatedly in a for loop, memory grows every round until it fails",
                                  "I load the saved model again for each of the 10 folds and memory keeps climbing",
                                  "loading the same model over and over in a notebook ends in out of memory"])
def test_models_loaded_again_and_again_are_the_models_kept(note):
    assert signals_of(note).models_in_a_loop
    ranked = ids("", note)
    assert ranked[0] == "reference_leak"


@pytest.mark.parametrize("note", ["training on 4k photos, the random crop and flip augmentation runs out of memory",
                                  "the job dies inside the transforms when it resizes the biggest scans",
                                  "memory error in the collate function with variable-size point clouds"])
def test_a_failure_in_the_data_pipeline_without_a_gpu_message_is_host_memory(note):
    assert signals_of(note, text="").data_pipeline_fails
    assert ids("", note)[0] == "dataloader_or_host"


def test_a_gpu_message_keeps_a_data_pipeline_word_from_meaning_host_memory():
    note = "kornia's GPU augmentation fails with CUDA out of memory on large images"
    text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
    assert "dataloader_or_host" not in ids(text, note)[:1]


@pytest.mark.parametrize("note", ["with torch.compile mode default memory is stable, with reduce-overhead it leaks until OOM",
                                  "max-autotune makes memory grow every iteration; the default mode does not",
                                  "it only goes out of memory when using cuda graphs"])
def test_compile_modes_that_record_cuda_graphs_are_the_compiled_program(note):
    assert signals_of(note).only_compiled
    ranked = ids("torch.OutOfMemoryError: CUDA out of memory.", note)
    assert ranked[0] == "framework_bug" and "cudnn_or_workspace" not in ranked[:2]


@pytest.mark.parametrize("note", ["my dataset image size is particularly large: 5184*3456", "inputs of 4000×3000 pixels",
                                  "the input resolution is very high"])
def test_large_images_said_in_other_notations_are_long_inputs(note):
    assert signals_of(note).long_input


@pytest.mark.parametrize("note", ["running full_batch.py for node classification on a V100", "full-batch GCN training on the whole graph",
                                  "the sampler takes all neighbors at every layer", "train_neighbor_sampling: type: ALL for the three layers"])
def test_a_whole_graph_in_one_step_is_a_large_input(note):
    assert signals_of(note).long_input
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "input_size_too_large"


def test_neighbor_sampling_that_did_not_help_at_all_is_no_large_input():
    assert not signals_of("neighbor sampling didn't help at all").long_input


@pytest.mark.parametrize("note", ["if I don't set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True I get OOM",
                                  "without expandable_segments it fails after a few batches",
                                  "unless I set max_split_size_mb:128 the run crashes"])
def test_a_run_that_fails_only_without_the_allocator_setting_is_fragmentation(note):
    assert signals_of(note).allocator_setting_helped is True
    assert ids("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.", note)[0] == "fragmentation"


@pytest.mark.parametrize("note", ["I set PYTORCH_ALLOC_CONF=expandable_segments:True but the allocator settings say expandable_segments is False",
                                  "this torch build silently ignores PYTORCH_ALLOC_CONF, 1.9 GiB stays reserved-but-unallocated",
                                  "the expandable_segments flag never takes effect in my launcher",
                                  "PYTORCH_ALLOC_CONF=expandable_segments:True is set, yet the allocator reports expandable segments as disabled"])
def test_an_allocator_setting_that_did_not_take_effect_is_the_framework(note):
    assert signals_of(note).setting_ignored
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", f"training at batch 64 OOMs. {note}")[0] == "framework_bug"


def test_a_stated_reserved_but_unallocated_figure_with_hyphens_is_read():
    assert signals_of("with 1.91 GiB stuck reserved-but-unallocated").note_unallocated == pytest.approx(1.91 * 2**30, rel=0.01)


@pytest.mark.parametrize("note", ["it goes OOM while building the causal mask at 32k tokens", "the 4D mask for a 100k sequence runs out of memory"])
def test_an_expanded_attention_mask_is_the_attention(note):
    assert signals_of(note).attention_said


def test_a_sequence_length_with_a_tilde_is_read():
    assert signals_of("the sequence length is ~200k").seq_len == 200 * 1024


def test_a_note_that_says_memory_spikes_is_ranked():
    report = analyze_inputs([], text="", note="while loading the model, RAM consumption spikes to 70GB")
    assert report.suspected and report.causes


@pytest.mark.parametrize("note", ["reverting to an earlier ComfyUI commit resolved it", "I went back to an older torch version and it fits"])
def test_going_back_to_an_earlier_build_of_a_named_tool_is_a_version_change(note):
    assert signals_of(note).upgrade_regression


def test_an_older_card_is_no_version_change():
    assert not signals_of("I use an older GPU").upgrade_regression


@pytest.mark.parametrize("note", ["fp16 flux-dev runs without any issues, but the Q8_0 gguf throws out of memory",
                                  "the bf16 checkpoint fits fine while the int8 version OOMs"])
def test_the_full_precision_model_fitting_where_its_quantized_variant_fails_is_the_variant(note):
    assert signals_of(note).original_fits
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "framework_bug"


def test_a_flux_fill_model_has_its_familys_size():
    assert signals_of("the Flux fill dev model on a 12 GB card").param_count == pytest.approx(16.9e9)


def test_a_numbered_gpu_that_is_busy_is_another_process():
    assert signals_of("GPU 0 and 2 are idle while GPU 1 is busy").other_process_hint


@pytest.mark.parametrize("note", ["tuning a CNN over a table of hyper-parameters in a set of loops, the GPU memory is never freed between models",
                                  "a grid search with KerasClassifier runs out once the grid gets larger",
                                  "k-fold cross-validation that builds a fresh model per fold dies after a few folds",
                                  "the pipeline creates many models which are later discarded, and after a couple of steps it OOMs"])
def test_models_built_one_after_another_in_one_process(note):
    assert signals_of(note).models_in_a_loop
    assert ids("ResourceExhaustedError: OOM when allocating tensor", note)[0] == "reference_leak"


def test_a_single_model_trained_in_a_loop_is_no_model_loop():
    assert not signals_of("my training loop runs out of memory after 100 iterations").models_in_a_loop


def test_not_being_able_to_free_memory_is_no_freeing():
    assert not signals_of("I can't free the GPU memory after each iteration").frees_every_step


@pytest.mark.parametrize("note", ["every evaluation round blows past the GPU memory", "the second epoch exceeds the GPU memory"])
def test_a_note_that_says_memory_was_exceeded_is_a_failure(note):
    report = analyze_inputs([], text="", note=note)
    assert report.suspected and report.causes


def test_a_running_loss_that_sums_every_batchs_loss_keeps_the_graph():
    assert signals_of("running_loss sums every batch's loss and memory goes up each batch").loss_kept


@pytest.mark.parametrize("note", ["log_w keeps its gradient and is accumulated into the estimate every step, until OOM",
                                  "the penalty term still has its grad_fn when it is added to the total each iteration",
                                  "scores are summed over the loop while they still require grad",
                                  "each step I add log_f to logw, and log_f still has its computation graph attached",
                                  "I sum val_loss into val_losses each batch without converting it to a float"])
def test_a_tensor_with_its_graph_summed_in_a_loop_said_in_words(note):
    assert signals_of(note).loss_kept
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "graph_retained"


def test_a_summed_value_without_its_graph_is_not_kept():
    assert not signals_of("the accuracy is summed as a Python float each step").loss_kept


@pytest.mark.parametrize("note", ["epoch one is fine but backward OOMs in epoch two; the test accuracy runs at the end of every epoch"])
def test_a_later_epoch_in_digits_and_words(note):
    assert signals_of(note).later_epoch_training and signals_of(note).eval_between_training


def test_writing_the_checkpoint_is_saving():
    assert signals_of("ZeRO-3 train and eval stay near 10GB per GPU, yet writing the checkpoint OOMs").saving


def test_the_original_handling_the_same_settings_fine():
    assert signals_of("the fork needs 55GB and fails, while the original SAM handles the same settings fine").original_fits


def test_memory_that_differs_between_the_cards_is_uneven():
    assert signals_of("training on several GPUs, memory use differs a lot between the cards").rank0_heavy


def test_gpus_packed_with_weights_up_to_capacity():
    assert signals_of("device_map packed each GPU with weights right up to its capacity").weights_fill_gpus


def test_training_without_trouble_went_well():
    from oomtriage.engine.signals import note_phase
    assert note_phase("fine-tuning in LLaMA-Factory trains without trouble, but every evaluation round runs out of memory")[0] == "evaluation"


@pytest.mark.parametrize("note", ["with 1k classes everything works, with 50k classes it runs out of memory",
                                  "a dataset of 8k+ classes fails; with 3k classes or fewer everything is fine",
                                  "training on 20000 identities goes OOM"])
def test_a_failure_that_follows_the_number_of_classes(note):
    assert signals_of(note).classes_matter
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "large_logits"


def test_a_few_classes_do_not_matter():
    assert signals_of("a 10 classes image classifier runs out of memory at batch 512").classes_matter is None


def test_a_self_attention_vision_model_asking_for_a_large_piece():
    text = ("RuntimeError: CUDA out of memory. Tried to allocate 3.66 GiB (GPU 0; 10.91 GiB total capacity; "
            "8.04 GiB already allocated; 1.66 GiB free; 8.05 GiB reserved in total by PyTorch)")
    assert ids(text, "training the stand-alone self-attention model on ImageNet")[0] == "attention_quadratic"


@pytest.mark.parametrize("note", ["training a detector on aerial photos with very many gt boxes in a single photo",
                                  "a custom dataset with more than 100 ground truths per image runs out after some epochs"])
def test_many_ground_truth_boxes_per_image_are_the_input(note):
    assert signals_of(note).many_boxes
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "input_size_too_large"


def test_a_box_assigners_iou_matrix_is_the_input():
    log = ('  File "/home/user/mmdetection/mmdet/core/bbox/assigners/max_iou_assigner.py", line 72, in assign\n'
           '    overlaps = bbox_overlaps(bboxes, gt_bboxes)\nRuntimeError: CUDA error: out of memory')
    assert ids(log, "training a retinanet on my dataset")[0] == "input_size_too_large"


def test_many_models_are_no_boxes():
    assert not signals_of("the server hosts many models and one more breaks it").many_boxes


# --- tenth round: mechanisms read from sets 62 of real threads (wordings are my own) ---------------

def _signals(note: str, text: str = "RuntimeError: CUDA out of memory."):
    return read_signals(build_context(text=text, note=note))


@pytest.mark.parametrize("note", [
    "A segmentation net: with crop_size 512 it dies, with crop_size = 256 it works.",
    "max_length 1024 fails; setting max_length to 384 it trains fine",
    "after filtering out recordings longer than 15 seconds the training goes through",
    "it only works if I downscale the images first",
    "cropping the photos to 1024 px fixed it",
])
def test_a_smaller_input_that_fits_is_the_input_size(note):
    assert _signals(note).smaller_input_fits
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "input_size_too_large"


@pytest.mark.parametrize("note", ["with batch size 4 it works", "reducing the image size does not fix it",
                                  "lowering the resolution did not solve the problem"])
def test_a_smaller_input_not_said_to_fit(note):
    assert not _signals(note).smaller_input_fits


@pytest.mark.parametrize("note", [
    "xgboost with tree_method='gpu_hist' on 2 million rows and 5000 features runs out of GPU memory",
    "Training an XGBRegressor on the GPU fails on my wide dataset, the CPU version works",
    "LightGBM with device='gpu' crashes on a large training table",
])
def test_gradient_boosting_holds_the_whole_dataset(note):
    causes = ranked("XGBoostError: Memory allocation error on worker 0: std::bad_alloc: cudaErrorMemoryAllocation: out of memory", note)
    assert causes[0].id == "input_size_too_large"
    batch = next((cause.confidence for cause in causes if cause.id == "batch_too_large"), 0.0)
    assert batch < causes[0].confidence / 3


def test_an_attention_op_named_by_tensorflow_is_the_score_matrix():
    attention = ("ResourceExhaustedError: OOM when allocating tensor with shape[16,8,2048,2048] and type float on "
                 "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n"
                 "\t [[{{node encoder/block_3/multi_head_attention/einsum/Einsum}}]]")
    conv = ("ResourceExhaustedError: OOM when allocating tensor with shape[16,64,2048,2048] and type float on "
            "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n\t [[{{node decoder/conv2d_4/Conv2D}}]]")
    assert ids(attention, "batch size 16")[0] == "attention_quadratic"
    assert ids(conv, "batch size 16")[0] != "attention_quadratic"


@pytest.mark.parametrize("note", [
    "training the ASR model is fine, it runs out of memory in the validation step",
    "my text-to-speech model crashes during validation, training epochs are OK",
    "the voice activity detector fine-tunes normally but the evaluation phase OOMs",
])
def test_speech_validation_runs_whole_recordings(note):
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "input_size_too_large"


def test_image_validation_still_suspects_no_grad():
    note = "training the image classifier is fine, it runs out of memory in the validation step"
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "missing_no_grad"


@pytest.mark.parametrize("note", ["training a conformer speech recognizer on my corpus runs out of memory",
                                  "fine-tuning a TTS model on my own recordings fails with CUDA OOM"])
def test_speech_training_long_tail_of_durations(note):
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "input_size_too_large"


@pytest.mark.parametrize("note", [
    "DeepSpeed ZeRO-3 offload does not work: it still runs out of GPU memory",
    "cpu_offload is not working, the weights stay on the card and it OOMs",
    "NVMe offload doesn't seem to work for me",
])
def test_an_offload_that_does_not_work_is_the_library(note):
    text = sentence(req="978.00 MiB", total="4.00 GiB", free="0 bytes", alloc="1.70 GiB", unalloc="1.00 GiB")
    assert ids(text, note)[0] == "framework_bug"


@pytest.mark.parametrize("note", ["out of memory even with a batch size of 2", "it OOMs even at batch size 1",
                                  "fails even with batch_size=2"])
def test_failure_even_at_a_tiny_batch(note):
    assert _signals(note).batch_no_help


@pytest.mark.parametrize("note", ["my dataset is 96 kHz recordings", "the clips are 48kHz wav files", "audio at 44.1 kHz"])
def test_high_sample_rates_are_long_inputs(note):
    assert _signals(note).long_input


@pytest.mark.parametrize("note", ["python tools/train.py -c configs/det.yml --eval", "running train.py --eval --amp on one GPU"])
def test_an_eval_flag_of_a_training_command_is_not_the_phase(note):
    assert _signals(note).phase != "evaluation"


def test_rendered_images_are_not_diffusion():
    note = "After training my NeRF, rendering the test views generates 10 images and then fails"
    signals = _signals(note)
    assert "diffusion" not in signals.domains and "rendering" in signals.domains
    ranking = ids("torch.OutOfMemoryError: CUDA out of memory.", note)
    assert "kv_cache_or_generation" not in ranking[:3] and "attention_quadratic" not in ranking[:3]
    assert "reference_leak" in ranking[:2]


@pytest.mark.parametrize("note", ["rendering novel views of my radiance field runs out of memory",
                                  "Gaussian splatting: render the test views and it OOMs"])
def test_a_renderers_chunk_of_rays_is_its_batch(note):
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "batch_too_large"


@pytest.mark.parametrize("note", [
    "encoding my rows: up to 2-3 million rows it works, beyond that CUDA OOM",
    "not more than 500k sentences fit in one encode call",
    "the predictor produces 40 frames and then the memory is gone",
    "it transcribes 12 files and then crashes with out of memory",
])
def test_the_number_of_inputs_processed_decides(note):
    assert _signals(note).dataset_size_matters


@pytest.mark.parametrize("note", [
    "each step the agent moves the transition to the GPU and appends it to self.replay",
    "every experience is sent to the GPU with .cuda() and stored in the memory buffer",
    "I push them to a deque as CUDA tensors",
])
def test_tensors_appended_to_a_container(note):
    assert _signals(note).outputs_kept


@pytest.mark.parametrize("note", [
    "the first validation finishes, then loss.backward() of the next training step fails",
    "evaluation completed and then the following training iteration ran out of memory",
])
def test_an_evaluation_that_finished_before_the_failing_training_step(note):
    signals = _signals(note)
    assert signals.eval_between_training and signals.phase == "training"


@pytest.mark.parametrize("note", [
    "with the library at 2.4.1 it OOMs whatever the batch; reverting the library back to 2.4.0 it trains",
    "downgrading peft back to 0.10.0 makes it fit again",
])
def test_a_package_reverted_to_an_earlier_release(note):
    assert _signals(note).upgrade_regression


def test_fsdps_state_dict_warning_is_the_save():
    text = ("torch/distributed/fsdp/_state_dict_utils.py:312: UserWarning: Failed to clone() tensor with name "
            "_fsdp_wrapped_module.encoder.layers.11.fc2.weight on rank 3. This may mean that this state_dict entry could point to "
            "invalid memory regions after returning from state_dict() call if this parameter is managed by FSDP. Error: CUDA out of "
            "memory. Tried to allocate 128.00 MiB (GPU 3; 39.39 GiB total capacity; 37.80 GiB already allocated; 60.00 MiB free; "
            "38.20 GiB reserved in total by PyTorch)")
    signals = read_signals(build_context(text=text, note="it dies once training is over"))
    assert signals.saving and signals.fsdp
    assert ids(text, "it dies once training is over")[0] == "distributed_replication"


@pytest.mark.parametrize("note,expected", [("serving a quantized 13B model", 1.0), ("the model is quantized", 1.0),
                                           ("quantized: yes", 1.0), ("a 13B model in fp16", 2.0), ("a 13B model", None)])
def test_a_quantized_model_without_its_bits(note, expected):
    assert _signals(note).weight_bytes == expected


@pytest.mark.parametrize("note", [
    "in Jupyter, running the cell that loads the model a second time gives CUDA out of memory",
    "whenever I rerun the notebook cell that builds the pipeline it OOMs",
    "switching the checkpoint from v1-5 to v2-1 in the web UI fails with out of memory",
    "loading the model again in the same session runs out of memory",
])
def test_a_model_loaded_again_in_a_running_process(note):
    assert _signals(note).model_replaced
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "reference_leak"


def test_switching_to_a_larger_model_is_not_a_kept_model():
    note = "switching the model from 7b to 70b, a larger one, runs out of memory"
    assert "reference_leak" not in ids("torch.OutOfMemoryError: CUDA out of memory.", note)[:1]


def test_memory_a_native_library_never_returns():
    note = "I del the object and call gc.collect() before loading the next model, yet the VRAM is never released"
    native = "CUDA error 2 at ggml-cuda.cu:512: out of memory"
    torch_text = "torch.OutOfMemoryError: CUDA out of memory."
    assert _signals(note).freed_not_released
    assert ids(native, note)[0] == "framework_bug"
    assert ids(torch_text, note)[0] == "reference_leak"


@pytest.mark.parametrize("note", ["training a video VAE with the default script runs out of memory",
                                  "fine-tuning the text-to-video model on my clips gives CUDA OOM"])
def test_video_training_scales_with_frames_and_resolution(note):
    assert "input_size_too_large" in ids("torch.OutOfMemoryError: CUDA out of memory.", note)[:2]


@pytest.mark.parametrize("note,expected", [("on the CPU it is fine, the GPU run dies", False), ("it works on the CPU", False),
                                           ("I set it to run on the CPU but a CUDA allocation fails", True)])
def test_a_cpu_run_compared_is_not_cpu_mode(note, expected):
    assert _signals(note).cpu_mode is expected


def test_validation_failing_after_training_epochs_completed_stays_evaluation():
    signals = _signals("each training epoch completes, but validation crashes with CUDA out of memory")
    assert signals.phase == "evaluation"


@pytest.mark.parametrize("note", ["I turned on ZeRO offload but the offloading doesn't seem to work",
                                  "offload is enabled and has no effect at all"])
def test_offloading_said_not_to_work(note):
    assert _signals(note).switch_no_effect


@pytest.mark.parametrize("note", ["12 frames come out and then it crashes", "20 images were saved before it ran out of memory"])
def test_outputs_that_came_out_before_the_failure(note):
    assert _signals(note).dataset_size_matters


def test_a_model_served_with_quantization():
    assert _signals("serving a 12B model with bitsandbytes quantization").weight_bytes == 1.0


@pytest.mark.parametrize("note", ["testing with the pretrained model it fails", "the error comes after testing 500 images",
                                  "while testing on the checkpoint from epoch 20 it runs out of memory"])
def test_testing_a_model_is_evaluation(note):
    assert _signals(note).phase == "evaluation"


@pytest.mark.parametrize("note", [
    "GPU memory is unbalanced in my DDP job: 3 additional processes sit on GPU0 with 600 MB each",
    "with 4 GPUs the processes of the other GPUs each take about 700 MB on GPU 0",
    "GPU 0 holds an extra 900 MiB from each of the other 7 processes, so it runs out first",
])
def test_the_other_ranks_on_the_first_gpu(note):
    report = analyze_inputs([], text="", note=note)
    assert report.suspected and not report.detected
    # (A rank's context on another rank's GPU is the job's own replication; the corpus files it so.)
    assert report.causes[0].id == "distributed_replication"
    assert "other_process_or_device" in [cause.id for cause in report.causes[:3]]


def test_the_other_ranks_on_the_first_gpu_after_loading_a_checkpoint():
    note = ("on 4 GPUs each process loads the saved checkpoint at start, and the processes of GPUs 1-3 each use "
            "almost a GB on GPU0")
    assert ids("", note)[0] == "checkpoint_loading"


def test_a_batch_size_in_parentheses():
    assert _signals("the default batchSize (64) does not fit").batch_size == 64


@pytest.mark.parametrize("note", ["the float32 script runs out of memory, the fp16 one works well",
                                  "in fp32 it OOMs on 24 GB; it fits in bf16"])
def test_half_precision_said_to_fit_where_fp32_fails(note):
    assert _signals(note).half_fits
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "full_precision"


def test_half_precision_said_not_to_work():
    assert not _signals("in fp32 it OOMs and fp16 does not work either").half_fits


@pytest.mark.parametrize("note", ["In my DDP run GPU0 carries 3 extra processes of ~400 MB each, so GPU memory use is lopsided",
                                  "GPU 0 shows the other five processes holding ~800 MiB apiece in distributed training"])
def test_the_other_ranks_on_the_first_gpu_in_other_words(note):
    report = analyze_inputs([], text="", note=note)
    assert report.suspected and report.causes[0].id == "distributed_replication"


@pytest.mark.parametrize("text,note", [
    ("RuntimeError: Error in faiss::gpu::StandardGpuResourcesImpl::allocMemory: StandardGpuResources: alloc fail type "
     "TemporaryMemoryBuffer dev 0 space Device size 1610612736 bytes (cudaMalloc error out of memory [2])",
     "computing embeddings with a pytorch model, then building the index in the same script"),
    ("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 536,870,912 bytes (allocated so far: 0 bytes).",
     "I call cupy right after my torch training loop in the same process"),
])
def test_a_gpu_library_beside_a_framework_in_one_process(text, note):
    assert _signals(note, text).library_beside_framework
    assert ids(text, note)[0] == "other_process_or_device"


@pytest.mark.parametrize("note", ["GPU 0 holds more memory than the other GPUs in my DDP run",
                                  "one GPU uses far more memory than the others with DataParallel"])
def test_one_gpu_holding_more_than_its_share_is_a_suspected_oom(note):
    report = analyze_inputs([], text="", note=note)
    assert report.suspected and not report.detected and report.causes


@pytest.mark.parametrize("note", [
    "it seems to calculate how many layers to offload from the model alone, ignoring the context size",
    "the launcher offloads too many layers to the GPU once the context is large",
    "the server underestimates the memory its KV cache needs",
])
def test_a_tools_own_estimate_said_to_be_wrong(note):
    assert _signals(note).tool_misestimates
    assert ids("CUDA error: out of memory", note)[0] == "framework_bug"


@pytest.mark.parametrize("note", ["it offloads from the model to the CPU and still fails", "I unload the model between runs"])
def test_offload_and_unload_are_not_loading(note):
    assert _signals(note).phase != "loading"


@pytest.mark.parametrize("note", ["It happens on TensorFlow 2.6 to 2.10 but not on 2.5.",
                                  "the leak appears with version 1.13.1 and not with 1.12.0"])
def test_a_failure_on_some_releases_and_not_on_an_earlier_one(note):
    assert _signals(note).upgrade_regression


@pytest.mark.parametrize("note,expected", [("OCR with det_limit_side_len=20000 on long scans", True), ("imgsz: 4096 for the detector", True),
                                           ("image_size=512", False)])
def test_an_image_side_limit_of_thousands_of_pixels(note, expected):
    assert _signals(note).long_input is expected


def test_a_release_regression_outranks_the_keras_evaluation_default():
    note = "model.predict on a big numpy array runs out of GPU memory with TensorFlow 2.9 but not with 2.4"
    assert ids("ResourceExhaustedError: OOM when allocating tensor", note)[0] == "framework_bug"


@pytest.mark.parametrize("note", ["every one of my six 40G A100s loads its own full copy of the model",
                                  "each of the four 3090s holds the whole model"])
def test_each_card_named_by_its_model_holding_a_copy(note):
    assert _signals(note).copy_per_device


def test_an_image_side_limit_raised_in_words():
    assert _signals("I raised det_limit_side_len to 20000 so tall pages are not shrunk").long_input


def test_no_reader_or_rule_is_defined_twice():
    """A module-level pattern or rule defined twice silently replaces the first (a new reader once
    took an older one's name): every top-level name of the engine's modules is bound once."""
    import ast
    import collections
    from pathlib import Path

    engine = Path(read_signals.__code__.co_filename).parent
    for path in [engine / "signals.py", *sorted((engine / "rules").glob("*.py"))]:
        counts = collections.Counter()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            counts.update(target.id for target in targets if isinstance(target, ast.Name))
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                counts[node.name] += 1
        assert not [name for name, count in counts.items() if count > 1], path.name


# --- eleventh round: mechanisms behind fresh real threads (set 72), in wordings of my own ---------

@pytest.mark.parametrize("note", ["it crashes as soon as test() is called at the end of the script",
                                  "the OOM comes from inside run_validation() after epoch 3",
                                  "the error is raised in my eval_epoch() function"])
def test_a_test_or_validation_function_called_by_name_is_evaluation(note):
    report = analyze_inputs([], text=sentence(), note=note)
    assert report.phase == "evaluation"


def test_a_test_function_after_training_is_a_missing_no_grad():
    note = "Training with batch 1 is fine; the run dies when test() runs once training has finished."
    assert ids(sentence(req="2.00 MiB", free="2.00 MiB"), note)[0] == "missing_no_grad"


@pytest.mark.parametrize("note", ["the pairwise features scale quadratically with the number of objects per scene",
                                  "memory grows quadratically in the count of atoms",
                                  "this layer is quadratic in the number of nodes of each sample"])
def test_a_cost_said_to_grow_quadratically_is_the_input_size(note):
    assert _signals(note).long_input
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "input_size_too_large"


@pytest.mark.parametrize("note", ["the predictions of each validation batch are stored by the loop until the epoch ends",
                                  "it looks like the outputs of every test step get kept by the trainer",
                                  "all the logits are accumulated on the GPU"])
def test_outputs_kept_said_in_the_passive(note):
    assert _signals(note).outputs_kept


def test_growth_in_an_evaluation_that_runs_without_gradients_is_kept_outputs():
    note = ("In my Lightning module memory is constant while training, but in validation after about 60 of the 150 steps "
            "it runs out on every GPU; I log metrics from on_validation_batch_end.")
    top = ids(sentence(), note)
    assert top[0] == "reference_leak"
    assert "graph_retained" not in top[:1]


@pytest.mark.parametrize("note,expected", [("memory shows a steady growth over the epoch", True),
                                           ("after roughly 300 of the 900 iterations it stops", True),
                                           ("the model has 300 of its 900 layers frozen", False)])
def test_growth_said_as_a_noun_or_partway_through_the_steps(note, expected):
    assert _signals(note).growth is expected


def test_memory_and_something_else_said_to_increase_is_a_suspected_oom():
    report = analyze_inputs([], text="", note="GPU memory usage and epoch time both increase a lot after the first epoch")
    assert report.suspected and report.causes


@pytest.mark.parametrize("note", ["The TensorFlow version of the same model loads fine on this GPU.",
                                  "the PyTorch checkpoint loads and runs fine",
                                  "with torch it works without any problems"])
def test_another_framework_said_to_fit(note):
    assert _signals(note).other_framework_fits


def test_loading_that_fits_in_another_framework_is_the_loader():
    note = "FlaxAutoModel.from_pretrained of a 3B model fails on the TPU, while the PyTorch version loads fine."
    top = ids("RuntimeError: Resource exhausted: Failed to allocate request for 64.00MiB (67108864B) on device ordinal 0", note)
    assert top[0] == "checkpoint_loading"


@pytest.mark.parametrize("note", ["pre-training works with 40GB of text, but with a dataset larger than 60GB it fails at the same batch size",
                                  "when the corpus is over 100 GB the job dies; I split the data into 30 GB shards to work around it"])
def test_a_dataset_size_on_disk_that_decides_is_host_memory(note):
    assert _signals(note).dataset_bytes_matter
    assert ids("RESOURCE_EXHAUSTED: Out of memory", note)[0] == "dataloader_or_host"


def test_a_dataset_of_a_few_gigabytes_named_without_a_threshold_is_no_signal():
    assert not _signals("I train on the 12GB ImageNet subset with batch 64").dataset_bytes_matter


@pytest.mark.parametrize("op,expected", [("logits/MatMul", True), ("loss/softmax_cross_entropy_with_logits", True),
                                         ("attention/Softmax", False), ("conv2d_3/Conv2D", False)])
def test_a_failing_op_named_after_the_output_layer(op, expected):
    text = (f"ResourceExhaustedError: OOM when allocating tensor with shape[8192,12000] and type float\n"
            f"\t [[Node: {op} = MatMul[T=DT_FLOAT](Reshape, w/read)]]")
    assert (ids(text)[0] == "large_logits") is expected


def test_a_task_named_property_prediction_is_not_evaluation():
    report = analyze_inputs([], text=sentence(), note="training a GNN for node property prediction on a big graph")
    assert report.phase != "evaluation"


@pytest.mark.parametrize("note", ["training a QuartzNet model with NeMo on my own data", "fine-tuning HiFi-GAN on a new voice",
                                  "jasper10x5 on two 2080Ti"])
def test_speech_model_families_by_name_are_audio(note):
    assert "audio" in _signals(note).domains


def test_the_original_implementation_fitting_after_several_words():
    note = "The fork's mask generator uses 50GB; with the stock model and the very same settings this problem does not exist."
    assert _signals(note).original_fits
    assert ids(sentence(), note)[0] == "framework_bug"


@pytest.mark.parametrize("note", ["mask_generator = SamAutomaticMaskGenerator(sam); masks = mask_generator.generate(image)",
                                  "segment-anything's generator.generate(img) on a 4 GB laptop GPU"])
def test_a_mask_generator_generating_is_no_token_generation(note):
    assert analyze_inputs([], text=sentence(), note=note).phase != "generation"


def test_a_generate_script_is_generation():
    note = "The LoRA fine-tune itself was fine, but when I run the trained model in the generate script I get this error."
    report = analyze_inputs([], text="torch.cuda.OutOfMemoryError: CUDA out of memory.", note=note)
    assert report.phase == "generation"
    assert report.causes[0].id == "kv_cache_or_generation"


def test_a_fine_tune_that_went_well_gives_no_gradients_to_an_evaluation_failure():
    """Model states (gradients, moments) exist only while training: a 7B fine-tune named in a note whose
    failure came at inference is no reason for 'weights and gradients do not fit'."""
    note = "Fine-tuning a 7b model works on my A10 24GB, but running inference with the result runs out of memory."
    text = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 22.35 GiB total capacity; 21.50 GiB already allocated; 5.00 MiB free; 21.90 GiB reserved in total by PyTorch)"
    gradients = [c for c in ranked(text, note) if "gradients alone" in " ".join(c.evidence)]
    assert not gradients


@pytest.mark.parametrize("note", ["with ~2000 masks it overloads the GPU memory", "this overloads the memory of the GPU"])
def test_a_note_that_the_memory_was_overloaded_is_a_suspected_oom(note):
    report = analyze_inputs([], text="", note=note)
    assert report.suspected


def test_every_card_loading_a_copy_outranks_the_trainer_keeping_logits():
    note = ("Evaluate & Predict in the web UI after a 30B fine-tune: each of my four 48G cards loads its own full copy "
            "of the model and they all fill up while the shards load.")
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "distributed_replication"


@pytest.mark.parametrize("note", ["nvidia-smi shows no processes associated with the memory used on GPU 1",
                                  "the worker processes are still mapped to the GPUs after the trial ended",
                                  "after several trial terminations by the scheduler the next trial cannot get memory",
                                  "I expected Ray to stop each trial and release its GPU memory"])
def test_memory_kept_by_stopped_workers_is_another_process(note):
    assert _signals(note).orphaned_memory
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "other_process_or_device"


@pytest.mark.parametrize("note,expected", [("I am sure there was no leak in earlier KeOps versions", True),
                                           ("it ran on previous releases of the library", True),
                                           ("the earlier layers of the network", False)])
def test_an_earlier_version_named_with_its_library(note, expected):
    assert _signals(note).upgrade_regression is expected


@pytest.mark.parametrize("note", ["only with max_im_shrink set to 0.5 does it not overflow",
                                  "with test_scale at 600 it runs, with 1000 it fails"])
def test_a_shrink_or_scale_knob_set_lower_fits(note):
    assert _signals(note).smaller_input_fits


@pytest.mark.parametrize("note", ["a super-resolution net with non-local blocks", "our non-local attention module over feature maps"])
def test_a_non_local_block_is_naive_attention(note):
    assert _signals(note).naive_attention


@pytest.mark.parametrize("note", ["training on the dense cloud filled the GPU memory", "it fills up all the VRAM and stops"])
def test_a_note_that_memory_filled_up_is_a_suspected_oom(note):
    assert analyze_inputs([], text="", note=note).suspected


@pytest.mark.parametrize("line", ["numpy.core._exceptions.MemoryError: Unable to allocate 26.3 GiB for an array with shape (250000, 4, 84, 84) and data type uint8",
                                  "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 8.00 GiB for an array with shape (1000000, 2048) and data type float32"])
def test_numpy_memory_errors_are_host_ooms(line):
    report = analyze_inputs([], text=line)
    assert report.detected and report.causes[0].id == "dataloader_or_host"


def test_a_cuda_out_of_memory_error_class_is_not_a_host_memory_error():
    report = analyze_inputs([], text="torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    assert report.causes[0].id != "dataloader_or_host"


@pytest.mark.parametrize("note", ["the size of my training set decides whether fine-tuning fits, with the same batch size",
                                  "it trains on a subset of the data but the full dataset runs out of memory",
                                  "with the whole corpus it fails at batch 16"])
def test_how_much_data_decides_under_a_gpu_message_is_the_input_size(note):
    assert _signals(note).dataset_decides
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "input_size_too_large"


def test_how_much_data_decides_without_a_gpu_message_is_host_memory():
    note = "preprocessing works on a subset of the data but the full dataset gets the job killed"
    assert ids("Killed", note)[0] == "dataloader_or_host"


@pytest.mark.parametrize("note,fits", [("the library's STS example works up to batch 32, my data fails at batch 16", 32),
                                       ("with the official example I was able to set batch size to 64; on my texts batch 8 OOMs", 64)])
def test_the_example_fitting_a_larger_batch_is_this_datas_input_size(note, fits):
    assert _signals(note).example_fits_batch == fits
    assert ids(sentence(), note)[0] == "input_size_too_large"


def test_the_example_fitting_only_a_smaller_batch_says_nothing_of_the_inputs():
    note = "the example works with batch 8, I use batch 64"
    assert _signals(note).example_fits_batch == 8
    top = ranked(sentence(), note)
    assert not any("The example fits a batch" in " ".join(c.evidence) for c in top)


@pytest.mark.parametrize("note", ["no traceback, the job just dies: it's a CPU OOM",
                                  "the model sits on the cpu and I am near the memory limit of my machine when it crashes"])
def test_a_cpu_oom_said_in_words_is_host_memory(note):
    assert _signals(note).host_ram
    assert ids("", note)[0] == "dataloader_or_host"


def test_a_cost_with_the_square_of_a_count_is_the_input_size_and_no_growth():
    note = "the pairwise head's memory goes up with the square of the number of objects; 50 objects need 9 GiB"
    signals = _signals(note)
    assert signals.long_input and not signals.growth
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "input_size_too_large"


def test_the_original_implementation_said_not_to_have_the_problem():
    note = "the fast fork climbs to 40GB; the original model with the same settings does not have this problem"
    assert _signals(note).original_fits


@pytest.mark.parametrize("note", ["after a few trials were stopped by the pruner the next one cannot allocate",
                                  "pruned trials never release their GPU memory",
                                  "nvidia-smi shows no process associated with this memory"])
def test_stopped_trials_keeping_memory_in_other_words(note):
    assert _signals(note).orphaned_memory


def test_a_knob_that_stops_the_overflow():
    assert _signals("it only stops running out of memory when test_scale is 0.5").smaller_input_fits


def test_a_gpu_filled_with_a_stated_size_is_a_suspected_oom():
    assert analyze_inputs([], text="", note="the dense cloud fills all 24 GB of VRAM").suspected


def test_states_that_do_not_fit_even_fully_sharded_are_a_model_too_large():
    """13B x 16 B of training states over 8 GPUs of 24 GB is 26 GB per GPU: no sharding stage fits,
    only offload, fewer trained parameters or more GPUs do."""
    note = "Fine-tuning a 13B model in bf16 with DeepSpeed ZeRO stage 2 on 8 GPUs of 24 GB fails."
    top = ranked("torch.cuda.OutOfMemoryError: CUDA out of memory.", note)
    assert top[0].id == "model_too_large"
    assert "Even fully sharded over 8 GPUs" in " ".join(top[0].evidence)


@pytest.mark.parametrize("note", ["I set gpus to 0,1,2,3 but the memory is only used on the first GPU", "memory is only allocated on cuda:0"])
def test_memory_only_on_the_first_gpu_is_one_gpu_heavier(note):
    assert _signals(note).rank0_heavy


def test_frozen_weights_that_fill_the_gpu_are_a_model_too_large_under_lora():
    note = "LoRA fine-tuning of a 13B model on one 24 GB card fails even with lora_r=4 and batch size 8"
    top = ranked("torch.cuda.OutOfMemoryError: CUDA out of memory.", note)
    assert top[0].id == "model_too_large"
    assert "frozen weights alone" in " ".join(top[0].evidence)


def test_frozen_weights_smaller_than_the_allocator_shows_are_not_assumed_to_fill():
    # 8B in bf16 is 16 GB, but the message shows only 12.75 GiB in use: the weights are smaller
    # than assumed (quantized), so nothing is concluded from the estimate.
    text = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.50 GiB. GPU 0 has a total capacity "
            "of 14.75 GiB of which 2.00 GiB is free.")
    evidence = " ".join(e for c in ranked(text, "LoRA fine-tuning a 8B model") for e in c.evidence)
    assert "frozen weights alone" not in evidence


@pytest.mark.parametrize("note,capacity", [("on a T4 15 GB; on a 25 GB GPU it works", 15 * 10**9),
                                            ("an A10 24GB", 24 * 10**9)])
def test_a_short_card_name_then_its_size(note, capacity):
    assert _signals(note).note_gpu_capacity == capacity


@pytest.mark.parametrize("note", ["the RAM usage is maxed and the notebook crashes", "it maxes out the system RAM",
                                  "RAM goes to 100% then the kernel dies"])
def test_ram_maxed_out_is_host_memory(note):
    assert _signals(note).host_ram


@pytest.mark.parametrize("note,params", [("fine-tuning whisper-large-v2 on 24 GB", 1.55e9), ("flan-t5-xl with LoRA", 3e9),
                                         ("gpt2-large from scratch", 774e6), ("seamlessM4T_v2_large fine-tuning", 2.3e9),
                                         ("whisper-large-v3-turbo transcription", None)])
def test_released_checkpoints_named_by_their_size_word(note, params):
    assert _signals(note).param_count == params


def test_runs_as_a_noun_is_no_clause_that_went_well():
    assert _signals("the auto device map is different between runs; it OOMs with the model on two cards").splits_weights


@pytest.mark.parametrize("note", ["with accelerate launch the model is copied four times onto the 4 GPUs",
                                  "the checkpoint gets replicated 8 times across the 8 gpus"])
def test_a_model_copied_n_times_onto_the_gpus(note):
    assert _signals(note).copy_per_device


@pytest.mark.parametrize("note", ["infer_auto_device_map doesn't give a consistent result: the whole decoder lands on GPU 0",
                                  "the layers all go to the CPU instead of using the other GPUs"])
def test_a_device_map_placed_inconsistently_is_the_library(note):
    assert _signals(note).tool_misestimates


@pytest.mark.parametrize("note", ["under WSL2 it fails; the same script works natively on Windows",
                                  "in WSL the GPU memory graphs only reach about half of the available GPU RAM before the error"])
def test_fitting_natively_but_not_under_wsl_is_pinned_host_memory(note):
    assert _signals(note).native_fits
    assert ids("RuntimeError: CUDA error: out of memory", note)[0] == "dataloader_or_host"


def test_fitting_natively_without_wsl_says_nothing_of_pinned_memory():
    assert "dataloader_or_host" not in ids("RuntimeError: CUDA error: out of memory", "it runs natively on my laptop")[:1]


@pytest.mark.parametrize("note", ["it loads a second copy onto GPU zero while GPU 1 stays empty",
                                  "both processes use the first GPU; the second card sits idle"])
def test_another_gpu_left_empty_is_one_gpu_heavier(note):
    assert _signals(note).rank0_heavy


@pytest.mark.parametrize("note", ["AnimateDiff in ComfyUI fails with more than 48 frames", "stable video diffusion runs out beyond 25 frames"])
def test_more_frames_in_a_video_generator_is_a_longer_input(note):
    signals = _signals(note)
    assert "video" in signals.domains
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "input_size_too_large"



def test_a_copy_per_gpu_said_with_rather_than_split():
    assert _signals("the model gets loaded whole on each of the 4 GPUs rather than split").copy_per_device
    assert not _signals("the model gets loaded split over each of the 4 GPUs").copy_per_device


@pytest.mark.parametrize("note,count", [("across two 4-GPU servers of A100 40GB", 8), ("on 2 8-GPU nodes", 16)])
def test_servers_of_a_stated_gpu_count(note, count):
    assert _signals(note).gpu_count == count


def test_growth_with_every_call_of_a_library_part_cleared_of_the_users_code_is_the_library():
    note = ("GPU memory grows with every call of the optimizer step until it runs out. I checked my loop carefully; "
            "it is not caused by my code, and an older PyTorch version does not do it.")
    top = ids("RuntimeError: CUDA out of memory.", note)
    assert top[0] == "framework_bug"
    assert "optimizer_state" not in top[:1]


@pytest.mark.parametrize("note", ["the predictions and labels are appended to a list during evaluation",
                                  "the model's outputs of each batch stay on the GPU until the epoch's metrics are computed"])
def test_outputs_added_to_a_list_or_left_on_the_gpu(note):
    assert _signals(note).outputs_kept


# --- round twelve: graphs, data sampling, a process killed with 137 -------------------------------

@pytest.mark.parametrize("note", ["the loader uses weighted random sampling with replacement over the training graphs",
                                  "running the neighbour sampling example of the graph library on a large social graph",
                                  "training a link predictor with negative sampling of 50 per edge",
                                  "class-balanced sampling picks the long recordings more often"])
def test_sampling_data_is_no_generation(note):
    assert _signals(note).phase != "generation"


@pytest.mark.parametrize("note", ["sampling 64 completions per prompt from the fine-tuned model",
                                  "it dies while sampling from the diffusion model at step 30"])
def test_sampling_from_a_model_is_still_generation(note):
    assert _signals(note).phase == "generation"


@pytest.mark.parametrize("text", ["Process finished with exit code 137 (interrupted by signal 9: SIGKILL)",
                                  "error: the training container exited with code 137",
                                  "job step 0 terminated: exit status 137"])
def test_exit_code_137_is_the_host_killing_the_process(text):
    result = analyze_inputs([], text=text, note="the evaluation on the full dataset never finishes")
    assert result.detected and result.error.backend == "host"
    assert result.causes[0].id == "dataloader_or_host"


def test_a_137_elsewhere_in_a_number_is_no_kill():
    result = analyze_inputs([], text="step 137 loss 0.52 | exit code 1370 is unknown | batch 1137 done")
    assert not result.detected


@pytest.mark.parametrize("note", ["my config leaves out the edge cutoff, so every molecule's graph is fully connected",
                                  "each point cloud becomes a complete graph before the message passing",
                                  "there is no distance cutoff when the edges are built, edges between all pairs of atoms"])
def test_a_fully_connected_graph_is_a_large_input(note):
    assert _signals(note).dense_graph
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "input_size_too_large"


@pytest.mark.parametrize("note", ["the classifier ends in two fully connected layers", "a dense layer on top of the graph encoder"])
def test_a_fully_connected_layer_is_no_dense_graph(note):
    assert not _signals(note).dense_graph


@pytest.mark.parametrize("note", ["our graph attention layer computes all pairs of nodes, on a graph of 3000 nodes",
                                  "training a dense GAT that scores every pair of nodes of one citation graph with 5000 nodes"])
def test_attention_over_every_pair_of_a_whole_graph_leads(note):
    signals = _signals(note)
    assert signals.naive_attention
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "attention_quadratic"


@pytest.mark.parametrize("note", ["I build a fresh SetFitModel and trainer in every iteration of a loop over the languages",
                                  "each run of the outer loop creates a new UNet for the next patient group",
                                  "a new classifier is initialised in each pass of my evaluation loop"])
def test_a_new_model_in_every_pass_of_a_loop(note):
    assert _signals(note).models_in_a_loop
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "reference_leak"


def test_one_model_and_a_loop_of_steps_is_no_model_loop():
    assert not _signals("the model is created once and then every iteration of the loop runs one batch").models_in_a_loop


@pytest.mark.parametrize("note", ["knowledge distillation of a 1B student from a 13B teacher on one 24 GB card",
                                  "training the student: the outputs of the teacher were saved to disk already, but the script still loads the teacher model",
                                  "the student trains against the teacher's logits computed on the fly"])
def test_a_distillation_teacher_held_on_the_gpu(note):
    assert _signals(note).teacher_resident
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "model_too_large"


@pytest.mark.parametrize("note", ["my teacher told me to lower the batch size", "a teacher forcing ratio of 0.5 in the decoder"])
def test_a_teacher_that_is_no_model(note):
    assert not _signals(note).teacher_resident


def test_distillation_named_without_a_size_or_a_resident_teacher_does_not_blame_the_weights():
    note = "distilling a small student from a BERT teacher, and the loss is summed over the epoch for logging"
    assert _signals(note).teacher_resident
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] != "model_too_large"


@pytest.mark.parametrize("note", ["the vocab_size of my Embedding layer is about 500000 words",
                                  "an nn.Embedding over 300k item ids with 256 dimensions",
                                  "my embedding table has input_dim=800000 after tokenising the corpus"])
def test_an_embedding_table_sized_by_its_vocabulary(note):
    assert (_signals(note).embedding_rows or 0) >= 100_000
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "model_too_large"


def test_a_language_models_vocabulary_at_the_logits_is_no_embedding_table():
    assert not _signals("the embedding and the logits softmax run over a vocabulary of 250000 tokens").embedding_rows


def test_embedding_tables_built_in_host_memory_are_the_hosts():
    note = "the machine's RAM fills up while the embedding for 3 million users is built, before training starts"
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "dataloader_or_host"


def test_a_tensor_with_a_vocabulary_dimension_at_the_failing_line_is_the_logits():
    text = trace("sparse_head", "weights = torch.zeros(input_ids.size(0), input_ids.size(1), self.vocab_size, device=device)",
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.00 GiB.")
    assert ids(text)[0] == "large_logits"


@pytest.mark.parametrize("note", ["the recipe was trained on 4 V100 32GB; my machine has one T4 with 16 GB",
                                  "the paper used 8 A100 GPUs for this config, I only have a single 3090",
                                  "the official config was tuned on A100 80GB cards and I have a 24 GB card"])
def test_a_recipe_sized_for_larger_hardware_is_the_batch(note):
    assert _signals(note).recipe_on_smaller_hardware
    assert ids("RuntimeError: CUDA out of memory.", note + ", training fails at the first step")[0] == "batch_too_large"


def test_one_gpu_named_is_no_recipe_comparison():
    assert not _signals("training on my 24 GB card with the default config").recipe_on_smaller_hardware


@pytest.mark.parametrize("note", ["with --load-8bit it takes way more VRAM than in fp16 and runs out",
                                  "turning on gradient checkpointing, training uses more memory than without it",
                                  "loading in 4-bit needs more GPU memory than the fp16 checkpoint did"])
def test_a_memory_saver_that_costs_more_than_going_without(note):
    assert _signals(note).switch_no_effect
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "framework_bug"


def test_a_larger_model_taking_more_memory_is_no_backfiring_saver():
    assert not _signals("the 13B model in 8-bit is fine; the 30B one needs more memory than my card has").switch_no_effect


@pytest.mark.parametrize("note", ["the loss builds pixel-to-pixel similarity matrices between two feature maps",
                                  "a pairwise distance matrix between all points of the cloud is computed in the loss",
                                  "the affinity matrix over all pixels of the 256x256 feature map"])
def test_a_matrix_over_every_pair_of_positions_is_the_input_squared(note):
    assert _signals(note).pairwise_said
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "input_size_too_large"


@pytest.mark.parametrize("note", ["training on 8 A100 GPUs with the provided config; deepspeed is not installed in my environment",
                                  "I launch it with torchrun on 4 GPUs without DeepSpeed, plain DDP",
                                  "fine-tuning on two GPUs, not using FSDP or ZeRO"])
def test_a_multi_gpu_recipe_without_its_sharding_is_replication(note):
    assert _signals(note).sharding_absent
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "distributed_replication"


def test_one_gpu_without_deepspeed_is_no_replication():
    note = "training on my single GPU without deepspeed"
    assert "distributed_replication" not in ids("torch.OutOfMemoryError: CUDA out of memory.", note)[:1]


@pytest.mark.parametrize("note", ["exporting with torch.onnx.export(model, torch.randn(1, 1, 128, 128, 128, device='cuda'))",
                                  "the dummy input is torch.zeros(2, 4, 96, 160, 160) for the 3D UNet"])
def test_a_five_dimensional_tensor_in_the_note_is_a_volume(note):
    assert _signals(note).long_input
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "input_size_too_large"


@pytest.mark.parametrize("note", ["my PC: an i5, a GTX 1050 with 4 GB, 16 GB of RAM", "a laptop with 8 GB of RAM and an MX150"])
def test_the_machines_ram_listed_as_a_spec_is_not_host_memory_filling(note):
    assert not _signals(note).host_ram


@pytest.mark.parametrize("note", ["the script uses 60 GB of RAM before it dies", "the machine's memory (not the GPU's) runs full during loading"])
def test_ram_used_or_the_machines_memory_running_full_is_host_memory(note):
    assert _signals(note).host_ram


def test_a_2_gb_card_running_a_tool_is_short_of_room_for_the_model():
    text = ("RuntimeError: CUDA out of memory. Tried to allocate 158.00 MiB (GPU 0; 2.00 GiB total capacity; "
            "1.12 GiB already allocated; 119.35 MiB free; 20.06 MiB cached)")
    assert ids(text, "running the separation script on one song")[0] == "model_too_large"


def test_a_small_card_in_training_leaves_the_batch_in_play():
    text = ("RuntimeError: CUDA out of memory. Tried to allocate 158.00 MiB (GPU 0; 2.00 GiB total capacity; "
            "1.12 GiB already allocated; 119.35 MiB free; 20.06 MiB cached)")
    assert "batch_too_large" in ids(text, "training my CNN with batch size 256")[:2]


@pytest.mark.parametrize("note", ["graph regression on molecules with PyG", "a linear regression head on top of the encoder",
                                  "the regression loss is an MSE over 10 targets"])
def test_a_regression_task_is_no_version_regression(note):
    assert not _signals(note).upgrade_regression


def test_a_regression_between_releases_is_still_one():
    assert _signals("this looks like a regression: 2.1 fits the same batch, 2.3 does not").upgrade_regression


@pytest.mark.parametrize("note", ["edges are created between all pairs of atoms", "I did not set a distance threshold when building the graph"])
def test_a_dense_graph_said_as_edges_between_all_pairs_or_no_threshold(note):
    assert _signals(note).dense_graph


def test_a_diffusion_model_over_molecules_is_no_image_diffusion():
    assert "diffusion" not in _signals("an equivariant diffusion model that generates ligands for a protein pocket").domains
    assert "diffusion" in _signals("a latent diffusion model that generates images at 1024 px").domains


def test_a_note_that_says_the_host_memory_is_eaten_is_ranked_without_a_message():
    result = analyze_inputs([], text="", note="the GCN sampling example eats all the host RAM after the first epoch")
    assert result.suspected and result.causes[0].id == "dataloader_or_host"


@pytest.mark.parametrize("note", ["the predict loop converts to numpy only once for the final result",
                                  "each batch's logits are moved to the CPU only at the end of the test set"])
def test_outputs_moved_off_the_gpu_only_at_the_end_are_kept(note):
    assert _signals(note).outputs_kept
    assert ids("RuntimeError: CUDA out of memory.", note + ", and a large test set runs out of memory")[0] == "reference_leak"


@pytest.mark.parametrize("note", ["training several Keras models one after another in a for loop",
                                  "the script fits 127 small models in a loop over the targets"])
def test_several_models_trained_in_a_loop_are_a_model_loop(note):
    assert _signals(note).models_in_a_loop
    assert ids("Resource exhausted: OOM when allocating tensor with shape[256,128]", note)[0] == "reference_leak"


def test_one_model_trained_for_several_epochs_in_a_loop_is_no_model_loop():
    assert not _signals("training one model for 50 epochs in a for loop").models_in_a_loop


@pytest.mark.parametrize("note", ["fine-tuning Qwen2-VL-7B with LoRA on scanned document pages",
                                  "LLaVA-NeXT answering questions about 4K screenshots",
                                  "a vision-language model fed eight photos in one prompt"])
def test_a_vision_language_models_images_are_its_sequence(note):
    assert _signals(note).vision_language_model
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "input_size_too_large"


def test_a_vision_language_model_named_without_images_is_no_visual_token_vote():
    note = "Qwen2-VL-7B chat about text only, the memory keeps increasing every step"
    assert "input_size_too_large" not in ids("torch.OutOfMemoryError: CUDA out of memory.", note)[:1]


def test_loading_that_reports_no_shortage_is_not_where_it_failed():
    note = "loading the model reports no shortage of memory, but running inference on one image gives the error"
    assert _signals(note).phase != "loading"


@pytest.mark.parametrize("note", ["validation at the end of the first epoch, where the model generates summaries up to max_length",
                                  "the Seq2SeqTrainer evaluation with predict_with_generate=True and num_beams=5 on the dev set",
                                  "evaluating the captioning model, which decodes captions for every validation image"])
def test_an_evaluation_that_generates_is_the_decoding_loop(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "kv_cache_or_generation"


def test_an_evaluation_that_only_classifies_keeps_its_usual_suspects():
    note = "the validation loop of my image classifier runs out of memory"
    assert "kv_cache_or_generation" not in ids("RuntimeError: CUDA out of memory.", note)[:1]


@pytest.mark.parametrize("note", ["the card fills up over the run until the job dies",
                                  "VRAM filled during training until it crashed at some point",
                                  "memory fills up throughout the whole training session"])
def test_memory_filling_over_the_run_is_growth(note):
    assert _signals(note).growth


def test_a_card_that_fills_up_at_once_is_no_growth():
    assert not _signals("the card fills up at once when the first batch arrives").growth


@pytest.mark.parametrize("note", ["the sampler keeps a replay buffer of past trajectories on the GPU",
                                  "it only happens when the memory bank is enabled",
                                  "experience replay holding the last 100k transitions, training with it switched on"])
def test_a_buffer_of_past_samples_is_kept_memory(note):
    assert _signals(note).outputs_kept
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] in ("reference_leak", "graph_retained")


def test_a_replay_buffer_named_without_what_it_keeps_is_no_kept_memory():
    assert not _signals("I use a replay buffer of size 1000 and PPO").outputs_kept


@pytest.mark.parametrize("note", ["text-to-audio inference, generating several candidates per text and keeping the best",
                                  "the pipeline makes 4 images for each prompt when I sample",
                                  "sampling with num_images_per_prompt=8 from the image generator"])
def test_several_outputs_per_prompt_are_a_batch(note):
    assert _signals(note).outputs_per_prompt
    causes = ids("torch.OutOfMemoryError: CUDA out of memory.", note)
    assert "batch_too_large" in causes[:2]


def test_one_output_per_prompt_is_no_batch_of_outputs():
    assert not _signals("generating one image per prompt in a loop over the prompts").outputs_per_prompt


@pytest.mark.parametrize("note", ["training the detector on my dataset; lowering the batch size to 1 did not help",
                                  "fine-tuning the segmentation network, a smaller batch still runs out of memory"])
def test_training_that_a_smaller_batch_cannot_fix_without_growth_is_the_samples_size(note):
    causes = ids("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB", note)
    assert causes[0] == "input_size_too_large"


@pytest.mark.parametrize("note", ["fine-tuning the ASR model on 200 hours of transcribed speech",
                                  "training on our own audio with transcriptions made by hand",
                                  "the recognizer is trained on transcription files exported from the call centre"])
def test_transcribed_data_in_training_is_no_transcribing(note):
    assert _signals(note).phase != "generation"


def test_transcribing_a_file_is_still_inference():
    assert _signals("transcribing one podcast episode with the speech model").phase == "generation"


@pytest.mark.parametrize("note", ["training the speech recogniser with max_duration = 60 s and batch 8",
                                  "the manifest keeps clips up to max_audio_len: 45 seconds",
                                  "the data config sets max_duration to 90"])
def test_clips_admitted_up_to_half_a_minute_are_long_inputs(note):
    assert _signals(note).long_input


def test_short_clips_are_no_long_input():
    assert not _signals("training with max_duration = 16.7 s and batch 32").long_input


@pytest.mark.parametrize("note", ["training is fine; as soon as the validation starts it runs out of memory",
                                  "it crashes at the very start of validation after the first epoch",
                                  "the first eval batch already fails with OOM, although the training epoch went through"])
def test_an_evaluation_failing_on_its_first_batch_is_given_more_than_a_training_step(note):
    signals = _signals(note)
    assert signals.eval_fails_at_start and signals.phase == "evaluation"
    causes = ids("RuntimeError: CUDA out of memory.", note)
    assert causes[0] == "batch_too_large"


def test_an_evaluation_that_fails_partway_keeps_its_usual_lead():
    note = "the validation runs out of memory after a few hundred batches"
    assert not _signals(note).eval_fails_at_start
    assert ids("RuntimeError: CUDA out of memory.", note)[0] != "batch_too_large"


@pytest.mark.parametrize("note", ["the run dies after 80 epochs; the leak seems to be in the validation loop",
                                  "validation memory grows every epoch until it fails in evaluation at epoch 40"])
def test_evaluation_memory_growing_across_epochs_is_state_kept_between_evaluations(note):
    causes = ranked("RuntimeError: CUDA out of memory.", note)
    assert causes[0].id == "reference_leak"
    assert any("across epochs" in line for line in causes[0].evidence)


@pytest.mark.parametrize("note", ["the first eval batch already fails with OOM while training steps fit",
                                  "evaluation runs out of memory, whereas the training batches fit"])
def test_a_clause_saying_training_fits_is_not_where_it_failed(note):
    assert _signals(note).phase == "evaluation"


@pytest.mark.parametrize("note", ["it fails during nlp.update (not evaluation) even at batch size 1",
                                  "the OOM comes in the training step, never in validation"])
def test_a_denied_phase_is_not_the_phase(note):
    assert _signals(note).phase != "evaluation"


@pytest.mark.parametrize("note", ["GPU memory keeps climbing during inference; it looks like a memory leak in DirectML",
                                  "my guess is a leak inside the ROCm runtime, memory grows every call",
                                  "TensorFlow itself seems to have a memory leak: usage increases with every batch"])
def test_a_leak_the_note_puts_in_the_framework_is_the_frameworks(note):
    assert _signals(note).library_part_isolated
    assert "framework_bug" in ids("RuntimeError: CUDA out of memory.", note)[:2]


def test_a_leak_in_the_users_training_code_is_not_the_frameworks():
    assert not _signals("there must be a leak in the training code, memory grows every epoch").library_part_isolated


@pytest.mark.parametrize("note", ["dropping the batch to 2 changed nothing, it still dies",
                                  "bringing the batch size down to 4 made no difference"])
def test_a_smaller_batch_that_made_no_difference_did_not_help(note):
    assert _signals(note).batch_no_help


@pytest.mark.parametrize("note", ["the OOM only shows up once I switch the replay buffer on",
                                  "the buffer stores previously sampled trajectories on the device"])
def test_more_wordings_of_a_buffer_of_past_samples(note):
    assert _signals(note).outputs_kept


def test_the_moment_validation_begins_is_its_first_batch():
    assert _signals("training runs, then the moment validation begins it throws OutOfMemoryError").eval_fails_at_start


def test_several_outputs_per_prompt_outside_a_named_generation_phase():
    note = "sampling 3 candidate clips per prompt and keeping the best one, a 60 s request dies"
    assert "batch_too_large" in ids("torch.OutOfMemoryError: CUDA out of memory.", note)[:2]


def test_a_framework_said_to_be_leaking_is_the_frameworks():
    assert _signals("memory climbs every call; I suspect DirectML is leaking memory").library_part_isolated


@pytest.mark.parametrize("note", ["the GPU memory keeps increasing batch after batch until it runs out",
                                  "usage is rising batch by batch during the embedding loop"])
def test_memory_increasing_batch_after_batch_is_growth_not_a_larger_batch(note):
    signals = _signals(note)
    assert signals.growth and not signals.batch_raised


def test_increasing_the_batch_size_is_still_a_larger_batch():
    assert _signals("after increasing the batch size to 64 it fails").batch_raised


@pytest.mark.parametrize("note", ["one sentence of 2115 characters tokenizes to 580 tokens, longer than the max_seq_length",
                                  "a few utterances in the set exceed the model's maximum length",
                                  "some paragraphs are longer than the limit of the encoder"])
def test_sentences_utterances_and_tokens_over_the_limit_are_long_inputs(note):
    assert _signals(note).long_input


def test_growth_within_one_evaluation_is_not_growth_across_epochs():
    signals = _signals("the validation memory keeps increasing batch after batch until it fails")
    assert signals.growth and not signals.growth_across_epochs
    assert _signals("validation memory grows every epoch until it fails at epoch 40").growth_across_epochs


def test_a_directml_oom_in_the_data_pipeline_counts_as_a_device_oom_like_cudas():
    trace = ("Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n    for batch in loader:\n"
             "  File \"data.py\", line 30, in __getitem__\n    image = torch.from_numpy(array).to(device)\n{message}")
    def host_confidence(message):
        causes = ranked(trace.format(message=message))
        return next(cause.confidence for cause in causes if cause.id == "dataloader_or_host")
    directml = host_confidence("RuntimeError: Could not allocate tensor with 268435456 bytes. There is not enough GPU video memory available!")
    cuda = host_confidence("RuntimeError: CUDA error: out of memory")
    assert directml == pytest.approx(cuda)


# --- fourteenth round: mechanisms read from sets 109-112 of real threads (wordings are my own) -----

@pytest.mark.parametrize("note", [
    "the job fit with 2.4.0.dev20240301 and runs out of memory with 2.4.0.dev20240315",
    "peak memory went from 9 GB on jax 0.4.20 to 13 GB on 0.4.23",
    "with lightning 2.1.3 it trains, on 2.2.0 it OOMs",
])
def test_two_builds_of_one_library_compared_are_a_regression(note):
    signals = _signals(note)
    assert signals.upgrade_regression
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "framework_bug"


def test_two_builds_of_a_serving_engine_compared_rank_the_regression_beside_its_cache():
    note = "with vllm 0.5.1 it loads, on 0.5.3 it OOMs"
    assert _signals(note).upgrade_regression
    assert "framework_bug" in ids("torch.OutOfMemoryError: CUDA out of memory.", note)[:2]


@pytest.mark.parametrize("note", [
    "torch 2.1.0 and transformers 2.4.0 on a 24 GB card, 16 GB of it used",
    "it OOMs on both 2.3.1 and 2.4.0, 20 GB then 21 GB",
])
def test_two_libraries_or_the_same_outcome_on_both_builds_are_no_regression(note):
    assert not _signals(note).upgrade_regression


@pytest.mark.parametrize("note", [
    "the snapshot shows the big segment is now split into lots of small blocks, a few of them still active",
    "a third of my GPU memory can never be reused once the first step is done",
    "the cache gets carved up into small pieces by tiny tensors",
])
def test_a_large_block_carved_up_by_small_ones_is_fragmentation(note):
    assert _signals(note).fragmentation_said
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "fragmentation"


@pytest.mark.parametrize("note", ["I split the dataset into small chunks to save memory",
                                  "the model is split into many parts across the GPUs"])
def test_splitting_data_or_a_model_is_not_fragmentation(note):
    assert not _signals(note).fragmentation_said


@pytest.mark.parametrize("note", [
    "serving a 13B model with vllm, gpu_memory_utilization=0.5, on a 24 GB card",
    "sglang with a 14B model; I lowered --mem-fraction-static to 0.5 on my 24 GB GPU and it still fails",
])
def test_weights_beyond_a_serving_engines_share_are_a_model_too_large(note):
    text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 200.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 150.00 MiB is free."
    assert _signals(note, text).engine_memory_fraction == 0.5
    assert ids(text, note)[0] == "model_too_large"


def test_weights_inside_the_engines_share_are_not_the_story():
    text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.00 GiB is free."
    note = "serving a 7B model with vllm at gpu_memory_utilization 0.9 with many concurrent requests"
    assert "model_too_large" not in ids(text, note)[:1]
    assert "weights take" not in evidence_of(text, note, "kv_cache_or_generation")


@pytest.mark.parametrize("note", [
    "after each deployment is removed, its worker processes keep holding GPU memory, and the next deployment fails",
    "the old containers continue to occupy the GPU memory after they are stopped",
])
def test_processes_that_keep_holding_memory_are_another_process(note):
    assert _signals(note).other_process_hint
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "other_process_or_device"


@pytest.mark.parametrize("note", ["predict.py fails, while main.py --eval works on the same card, per another user",
                                  "another user reported the same error on a 3090"])
def test_another_user_in_the_thread_is_no_process_on_the_card(note):
    assert not _signals(note).other_process_hint


@pytest.mark.parametrize("note", [
    "with DDP on gpus 2 and 3, GPU 0 is always used at start-up even though I never selected it",
    "cuda:0 gets memory allocated on it although it is not one of the devices I passed to the trainer",
])
def test_gpu0_used_although_not_chosen_is_the_ranks_default_device(note):
    assert _signals(note).ranks_on_gpu0


@pytest.mark.parametrize("note", ["inference with the demo script: on a GPU with 48G it works",
                                  "chatting with the model runs fine on an 80 GB A100 but not here",
                                  "a bigger card solved it for a friend"])
def test_inference_that_fits_a_larger_card_is_the_model(note):
    assert _signals(note).larger_card_fits
    assert "model_too_large" in ids("torch.OutOfMemoryError: CUDA out of memory.", note)[:2]


def test_a_larger_card_does_not_decide_a_growing_run():
    note = "memory grows with every request until it fails; on a GPU with 48G it works for longer"
    assert "a card with more memory" not in " ".join(" ".join(cause.evidence) for cause in ranked("torch.OutOfMemoryError: CUDA out of memory.", note))


@pytest.mark.parametrize("note", ["when the number of points is more than 50000 the OOM error appears",
                                  "it only fails once the number of vertices exceeds 2 million"])
def test_a_count_of_elements_after_its_noun_is_a_large_input(note):
    assert _signals(note).long_input
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "input_size_too_large"


def test_a_small_count_of_machines_is_no_large_input():
    assert not _signals("the number of nodes is more than 8 in our cluster").long_input


@pytest.mark.parametrize("note", ["validation takes more than 24G on my 24G card and runs out",
                                  "with 4 workers it ran out after an hour"])
def test_running_out_with_nothing_named_is_a_suspected_oom(note):
    report = analyze_inputs([], text="Epoch 3: 100%|#####| 500/500\n", note=note)
    assert report.suspected and not report.detected and report.causes


def test_running_out_of_something_else_is_no_oom():
    report = analyze_inputs([], text="Epoch 3: 100%|#####| 500/500\n", note="the sampler runs out of data before the epoch ends")
    assert not report.suspected and not report.causes


@pytest.mark.parametrize("note", ["training worked fine until I turned on mixed precision; now it runs out of memory",
                                  "it fits well until we enable gradient_checkpointing, then the step OOMs"])
def test_a_memory_saver_that_broke_a_run_that_fit_is_the_library(note):
    signals = _signals(note)
    assert signals.switch_no_effect and signals.saver_broke_fit
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "framework_bug"


def test_a_batch_that_broke_a_run_that_fit_is_no_saver():
    assert not _signals("it worked fine until I set the batch size to 64").switch_no_effect
    # a saver with no effect at all is no A/B test: the weaker vote
    assert not _signals("attention slicing makes no difference, it still runs out").saver_broke_fit


def test_a_constructor_whose_underscores_markdown_ate_is_still_a_constructor():
    text = ('Traceback (most recent call last):\n  File "app/main.py", line 40, in cli\n'
            '  File "speechlib/transcribe.py", line 125, in init\nRuntimeError: CUDA failed with error out of memory')
    signals = _signals("it fails right away", text)
    assert signals.constructing and "init" in signals.evidence["constructing"]
    assert ids(text, "it fails right away")[0] == "model_too_large"


@pytest.mark.parametrize("note", ["for step in range(5000): out, hidden = lstm(batch, hidden) and the memory grows until it fails",
                                  "in my loop I do state = cell(x_t, state) for every chunk of the stream; memory keeps increasing"])
def test_a_recurrent_state_fed_back_into_its_own_call_keeps_the_graph(note):
    assert _signals(note).state_carried
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "graph_retained"


def test_a_layer_output_is_not_a_carried_state():
    assert not _signals("x = self.conv(x) then x = self.pool(x); it runs out of memory at batch 64").state_carried


@pytest.mark.parametrize("note", ["Is there a way to convert the model to half precision? I cannot run it with 8GB of VRAM.",
                                  "how can I load it in fp16? it is impossible to run it on my 6 GB card"])
def test_asking_for_half_precision_means_the_run_is_full_precision(note):
    report = analyze_inputs([], text="Loading checkpoint...\n", note=note)
    assert report.suspected
    signals = _signals(note)
    assert signals.full_precision_said and not signals.low_precision
    assert report.causes[0].id == "full_precision"


def test_a_run_already_in_half_precision_is_not_asked_for():
    signals = _signals("I already run it in fp16 and it is impossible to run with 8GB")
    assert signals.low_precision and not signals.full_precision_said


def test_embeddings_said_to_be_stored_on_the_gpu_are_outputs_kept():
    note = "fitting the detector on the whole dataset, the 50000 embeddings and labels extracted are all stored on the GPU and it runs out"
    assert _signals(note).outputs_kept
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "reference_leak"


def test_pythons_memory_error_is_host_memory():
    note = "I get a MemoryError when saving the extracted features; the machine has 8GB of RAM"
    report = analyze_inputs([], text="Extracting features...\n", note=note)
    assert report.suspected and _signals(note).host_ram
    assert report.causes[0].id == "dataloader_or_host"
    assert not _signals("torch.OutOfMemoryError was raised by the model").host_ram


@pytest.mark.parametrize("text, note", [
    ("RuntimeError: CUDA out of memory.", "fine-tuning on my 3 GB laptop GPU fails even with batch size 1"),
    ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor",
     "my card only has 2GB of VRAM and the training always ends with tensorflow running out of memory"),
    ("RuntimeError: CUDA out of memory.", "what is the minimum GPU memory required for training? it runs out of memory on my RTX 3060"),
])
def test_training_with_no_smaller_batch_left_is_the_models_states(text, note):
    assert ids(text, note)[0] == "model_too_large"


def test_a_small_card_with_a_batch_still_to_cut_is_not_the_models_states():
    note = "training on a 2 GB card with batch_size 24 fails; what is the minimum GPU memory required?"
    assert "no smaller batch" not in evidence_of("RuntimeError: CUDA out of memory.", note, "batch_too_large")
    assert "come before any batch" not in " ".join(" ".join(c.evidence) for c in ranked("RuntimeError: CUDA out of memory.", note))
    shape = "Resource exhausted: OOM when allocating tensor with shape[16,64,150,150]"
    assert "come before any batch" not in " ".join(" ".join(c.evidence) for c in ranked(shape, "training on my 2GB card fails"))


def test_someone_else_who_tried_is_no_process_on_the_card():
    assert not _signals("someone else tried training on two 12 GB cards and also ran out").other_process_hint
    assert _signals("someone else's job holds 10 GB of this GPU").other_process_hint


@pytest.mark.parametrize("note", ["the memory usage (RAM, not GPU memory) kept increasing until the system killed the job",
                                  "usage (host RAM) grows every epoch", "after two days the OS killed the training"])
def test_host_memory_said_in_a_parenthesis_or_by_the_system_that_killed(note):
    assert _signals(note).host_ram


def test_a_gpu_memory_parenthesis_is_not_host_memory():
    assert not _signals("the memory usage (GPU 0, not GPU 1) kept increasing").host_ram


@pytest.mark.parametrize("name, gigabytes", [("a 4GB GTX 1650", 4), ("my GTX 750 Ti", 2), ("an RTX 2060", 6),
                                             ("RTX 2060 SUPER", 8), ("GTX 970", 4), ("GTX 1050 Ti", 4), ("RTX 4050 laptop", 6)])
def test_consumer_cards_people_name_have_their_memory(name, gigabytes):
    from oomtriage.gpus import capacity_of_gpu, find_gpu_name
    assert capacity_of_gpu(find_gpu_name(name, bare=True)) == gigabytes * 10**9


@pytest.mark.parametrize("note", ["after the model is unloaded its worker processes continue to use the GPU memory and the next load fails",
                                  "the old pods continued holding GPU memory, so the new deployment ran out"])
def test_processes_that_continue_to_use_memory_are_another_process(note):
    assert _signals(note).other_process_hint
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "other_process_or_device"


@pytest.mark.parametrize("note", ["with the new release it no longer fits my 12 GB card",
                                  "my 10GB card cannot run it at all",
                                  "on the second pass the buffer cannot be allocated"])
def test_a_run_that_does_not_fit_the_card_is_an_oom_said(note):
    assert analyze_inputs([], text="step 10 done\n", note=note).suspected


def test_a_model_that_does_not_fit_the_data_is_no_oom():
    assert not analyze_inputs([], text="step 10 done\n", note="the model does not fit the data well, the loss stays flat").suspected


def test_anymore_about_a_later_step_is_no_regression():
    assert not _signals("step 1 is fine; on step 2 the same buffer cannot be allocated anymore").upgrade_regression
    assert _signals("since last week the same job cannot start anymore").upgrade_regression


@pytest.mark.parametrize("note", ["generating works; then I switch to the openpose preprocessor and model, click generate and it errors",
                                  "the old checkpoint does not get unloaded from VRAM when I switch models in the UI, so the second one fails"])
def test_switching_models_in_a_running_app_keeps_the_old_one(note):
    assert _signals(note).model_replaced
    assert "reference_leak" in ids("torch.OutOfMemoryError: CUDA out of memory.", note)[:2]


@pytest.mark.parametrize("note", ["python train.py --imgsz 1920 --batch 8: training does not even start",
                                  "with image_size: 1536 the detector fine-tune fails; is it memory limitations?"])
def test_a_detector_image_size_well_above_its_default_is_a_large_input(note):
    report = analyze_inputs([], text="Starting training for 300 epochs...\n", note=note)
    assert report.suspected and _signals(note).long_input
    assert report.causes[0].id == "input_size_too_large"


def test_a_default_detector_image_size_is_no_large_input():
    assert not _signals("python train.py --imgsz 640 --batch 64 fails").long_input


@pytest.mark.parametrize("note", ["FSDP training runs a whole epoch, then OOMs; with model checkpointing disabled it goes away",
                                  "under FSDP the ModelCheckpoint callback seems to collate all the parameters onto rank 0 and it runs out of memory"])
def test_a_trainers_checkpoint_callback_under_sharding_is_saving(note):
    assert _signals(note).saving
    assert ids("torch.OutOfMemoryError: CUDA out of memory.", note)[0] == "distributed_replication"


def test_gradient_checkpointing_is_no_saving():
    assert not _signals("with FSDP and gradient checkpointing enabled the first step OOMs").saving
    assert not _signals("disabling gradient checkpointing makes it worse").saving


@pytest.mark.parametrize("note", ["with big datasets the images accumulate on the GPU until it runs out",
                                  "the predictions pile up in GPU memory during the test loop and it fails"])
def test_data_said_to_accumulate_on_the_gpu_is_outputs_kept(note):
    assert _signals(note).outputs_kept
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "reference_leak"


@pytest.mark.parametrize("note", ["with hidden dimension 1024 it runs out of memory; with smaller dimensions it trains",
                                  "d_model 2048 OOMs, smaller ones work fine", "reducing the embedding size to 64 fixed it"])
def test_a_narrower_model_that_fits_is_the_model(note):
    assert _signals(note).smaller_width_fits
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "model_too_large"


def test_a_smaller_batch_beside_a_width_is_no_narrower_model():
    assert not _signals("with hidden_size 4096 it fails while a smaller batch works").smaller_width_fits


def test_two_widths_compared_with_the_smaller_one_fitting_is_the_model():
    note = "hidden_size 4096 runs out of memory on my card; with hidden_size 2048 the same script trains fine"
    assert _signals(note).smaller_width_fits
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "model_too_large"
    assert not _signals("hidden_size 1024 runs out of memory; with hidden_size 2048 it trains fine").smaller_width_fits


def test_a_patch_or_crop_size_in_the_thousands_is_a_large_input():
    assert _signals("training with patch_size 2048 fails").long_input
    assert not _signals("training with patch_size 256 fails").long_input


def test_cudnns_handle_failing_to_initialise_is_a_masked_oom():
    text = "  File \"train.py\", line 9, in step\n    out = self.conv1(x)\nRuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED"
    report = analyze_inputs([], text=text)
    assert report.detected and report.error.library == "cudnn"
    assert report.causes[0].id == "cudnn_or_workspace"


def test_a_first_iteration_far_above_the_next_is_the_start_peak():
    note = "max_memory_allocated reads 11.2 GB in the first iteration and 6.1 GB in the second, and it OOMs at the start"
    assert _signals(note).start_peak_then_lower
    assert not _signals("4.0 GB in the first iteration and 6.1 GB in the second, growing until it OOMs").start_peak_then_lower


def test_a_request_of_exabytes_is_a_shape_computed_wrong():
    from oomtriage.sizes import parse_size
    assert parse_size("16.00 EiB") == 16 * 2**60
    message = "RuntimeError: CUDA out of memory. Tried to allocate 16.00 EiB (GPU 0; 10.76 GiB total capacity; 2.12 GiB already allocated)"
    assert ids(message)[0] == "framework_bug"
    assert ids("step 3\n", "the forward pass dies trying to allocate 16 EiB on my card")[0] == "framework_bug"


def test_another_setup_that_is_healthy_is_no_other_process():
    assert not _signals("it OOMs here; another container with CUDA 9.0 and PyTorch 0.4.1 is healthy").other_process_hint


# --- fifteenth round: mechanisms from sets 129-137, each in wordings of my own ------------------

@pytest.mark.parametrize("note", [
    "with retain_graph=True on every backward the GPU memory blows up after a few hundred steps",
    "VRAM usage explodes when the second model is loaded",
    "reserved keeps climbing each epoch until the card is full",
    "the memory used increases after every validation round",
])
def test_a_note_that_says_memory_blew_up_or_filled_the_card_is_an_oom(note):
    assert ranked("step 12 done\n", note), note


def test_a_runtime_api_call_that_returned_out_of_memory_is_detected():
    text = "jaxlib error: cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 98304): out of memory."
    report = analyze_inputs([], text=text)
    assert report.detected and report.error.format == "cuda_runtime_error"
    assert not analyze_inputs([], text="cudaSetDevice(1) returned cudaSuccess").detected


def test_a_hand_retyped_allocator_message_still_gives_its_figures():
    text = "cuda out of memory. tried to allocate 64MiB(GPU 0; 3.95GiB totalcapacity;3.10GiB already allocated; 20.5MiB free;3.20 GiB reserved in total by PyTorch)"
    error = analyze_inputs([], text=text).error
    assert abs(error.total_bytes - 3.95 * 2**30) < 2**20 and error.requested_bytes == 64 * 2**20
    assert error.free_bytes is not None and error.allocated_bytes is not None


@pytest.mark.parametrize("note", [
    "Fine-tuning it on two 16 GB cards with a single sample still fails. Is there a GPU requirement?",
    "Fine-tuning the decoder on my 12 GB card runs out even with only one image; it seems the model needs a lot of memory",
    "I fine-tune with just 1 example and get CUDA OOM on a 24GB GPU. Will it run if I add more 24GB GPUs?",
    "Even with a single training example my three 24 GB cards run out while fine-tuning. What is the minimum memory per GPU?",
])
def test_training_on_one_input_with_the_requirement_asked_is_the_models_own_states(note):
    assert ids("Epoch 0\n", note)[0] == "model_too_large", note


def test_one_input_alone_without_a_small_card_or_a_question_points_nowhere_in_particular():
    assert _signals("fine-tuning with just 1 example on a 24GB GPU runs out of memory").one_input_only
    assert ids("Epoch 0\n", "fine-tuning with just 1 example on a 24GB GPU runs out of memory")[0] != "model_too_large"


def test_a_card_of_two_gigabytes_where_a_smaller_batch_did_not_help_is_too_small():
    text = ("RuntimeError: CUDA out of memory. Tried to allocate 40.00 MiB (GPU 0; 1.95 GiB total capacity; 1.30 GiB "
            "already allocated; 30.00 MiB free; 1.35 GiB reserved in total by PyTorch)")
    assert ids(text, "running the detector's train script; going down to a batch size of 1 did not help")[0] == "model_too_large"


@pytest.mark.parametrize("note", [
    "Running the inference demo on my 8GB laptop GPU gives CUDA out of memory. Does it need a bigger GPU?",
    "the released checkpoint fails with OOM at inference on my 16GB card; is 16GB not enough?",
])
def test_inference_with_the_card_it_needs_asked_is_the_model(note):
    assert ids("frame 0\n", note)[0] == "model_too_large", note


def test_inference_that_grows_is_no_question_of_the_card():
    note = "Running inference over the whole folder, memory keeps increasing with every image until OOM. Does it need a bigger GPU?"
    assert ids("frame 0\n", note)[0] != "model_too_large"


def test_an_earlier_job_that_crashed_leaves_its_memory_to_the_next_ones():
    note = "our cluster job crashed overnight, and afterwards every new job on that node fails with out of memory"
    assert _signals(note).orphaned_memory
    assert ids("RuntimeError: CUDA error: out of memory\n", note)[0] == "other_process_or_device"


def test_a_recognizer_served_call_after_call_that_grows_has_no_kv_cache():
    note = ("we serve a speech recognition encoder behind a FastAPI endpoint; memory is never released and it OOMs "
            "after some time")
    assert _signals(note).growth
    assert ids("request 812\n", note)[0] == "missing_no_grad"
    llm = "serving a llama chat model behind an endpoint; memory keeps growing with every request until OOM"
    assert ids("request 812\n", llm)[0] == "kv_cache_or_generation"


def test_results_concatenated_onto_themselves_are_outputs_kept():
    assert _signals("in the test loop I do all_out = torch.cat([all_out, out]) and memory keeps increasing").outputs_kept
    assert _signals("I accumulate all the predictions with torch.cat across batches and it runs out").outputs_kept
    assert not _signals("x = torch.cat([a, b]) inside the block and it runs out").outputs_kept


def test_copies_moved_to_the_cpu_while_gpu_memory_grows_still_carry_their_graph():
    note = ("predicting a big test set, I keep each batch's scores with scores.cpu() in a list, but GPU memory "
            "increases until out of memory")
    signals = _signals(note)
    assert signals.kept_with_graph and not signals.cpu_mode
    assert "graph_retained" in ids("batch 400\n", note)[:2]


def test_two_builds_that_both_fail_are_no_regression():
    assert not _signals("it leaks on 1.13 and the nightly alike, memory keeps increasing until OOM").upgrade_regression
    assert _signals("the nightly from last week leaks, memory keeps increasing until OOM").upgrade_regression


def test_training_on_patches_then_evaluating_whole_images():
    note = "the super-resolution training with 96px patches is fine, but the evaluation goes out of memory"
    assert ids("validating\n", note)[0] == "input_size_too_large"
    assert ids("validating\n", "the training is fine, but the evaluation goes out of memory")[0] != "input_size_too_large"


def test_reserved_climbing_past_an_ellipsis_while_allocated_stays_low_is_the_cache():
    note = "reserved goes 1,200 ... 9,800 MiB over the cycles while allocated stays between 80 and 400 MiB, until the device is full"
    assert _signals(note).reserved_grows
    assert ids("cycle 40\n", note)[0] == "fragmentation"


@pytest.mark.parametrize("text", [
    "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
    "ERROR: Unexpected BUS error encountered in DataLoader worker. This might be caused by insufficient shared memory (shm), check /dev/shm",
])
def test_a_workers_bus_error_is_the_shared_memory_filling(text):
    report = analyze_inputs([], text=f"epoch 3\n{text}\n")
    assert report.detected and report.error.backend == "host"
    assert report.causes[0].id == "dataloader_or_host"


def test_shared_memory_named_in_a_note_is_the_hosts():
    note = "my training crashes with a bus error, the message blames insufficient shared memory, but I am not in a container"
    assert _signals(note).host_ram
    assert ids("epoch 2\n", note)[0] == "dataloader_or_host"


def test_an_earlier_build_that_fitted_more_is_a_regression():
    note = "now a (64, 1024, 1024) buffer runs out on 24 GB; on 2.1.0 I could allocate four times that"
    assert _signals(note).upgrade_regression
    assert not _signals("on 2.1.0 it runs out as well, at the same size").upgrade_regression


@pytest.mark.parametrize("note", [
    "odd: with --fp16 the fine-tuning uses more memory than with fp32, and runs out at batch 8",
    "I can train bigger models using fp32 than with bf16, which goes OOM even for the 1B one",
])
def test_half_precision_that_needs_more_than_fp32_is_a_dropped_dtype(note):
    assert _signals(note).half_needs_more
    assert ids("step 0\n", note)[0] == "framework_bug"
    assert not _signals("bf16 uses less memory than fp32 but it still runs out").half_needs_more


def test_half_weights_that_fit_failing_while_loading_reached_the_device_in_fp32():
    note = "loading the 5B checkpoint in bf16 onto a 24 GB card fails with OOM, although 10 GB of weights should fit"
    top = ids("loading shards\n", note)[:3]
    assert "full_precision" in top and "framework_bug" in top
    assert ids("loading shards\n", "loading the 5B checkpoint in bf16 onto a 12 GB card fails with OOM")[0] == "model_too_large"


@pytest.mark.parametrize("note", [
    "training a GAN, the torchmetrics FID I update every step makes GPU memory grow until OOM",
    "our segmentation training leaks: memory keeps increasing each epoch since we added the dice metric",
])
def test_a_metric_object_in_a_loop_that_grows_keeps_every_batch(note):
    assert _signals(note).metric_object
    assert ids("step 900\n", note)[0] == "reference_leak"


def test_outputs_kept_from_a_forward_hold_the_weights_after_the_module_is_deleted():
    note = ("scoring in a loop: net = Net().cuda(); logits, feats = net(batch); del net; yet memory_allocated() stays the "
            "same and the second pass runs out")
    signals = _signals(note)
    assert signals.forward_outputs_bound and signals.freed_not_released and signals.second_round_fails
    assert ids("pass 2\n", note)[0] == "missing_no_grad"
    assert not _signals("net = Net().cuda() and then del net; memory_allocated() stays the same").forward_outputs_bound


def test_a_device_query_that_reports_out_of_memory_is_the_driver_or_a_full_card():
    note = "under WSL2, torch.cuda.device_count() already fails with CUDA error: out of memory, before anything is loaded"
    assert ids("RuntimeError: CUDA error: out of memory\n", note)[0] == "framework_bug"
    bare = "torch.cuda.set_device() fails with out of memory on the shared server"
    assert ids("RuntimeError: CUDA error: out of memory\n", bare)[:2] and "batch_too_large" not in ids(
        "RuntimeError: CUDA error: out of memory\n", bare)[:2]


@pytest.mark.parametrize("note", [
    "Building the engine works with batch size 4, but with batch size 32 I get out of memory.",
    "batch 8 fits; at batch size 24 the step fails with CUDA OOM",
])
def test_a_smaller_batch_that_fits_beside_a_larger_that_fails_is_the_batch(note):
    signals = _signals(note)
    assert signals.smaller_batch_fits and signals.batch_size in (32, 24)
    assert ids("[E] OutOfMemory\n", note)[0] == "batch_too_large"
    assert not _signals("batch size 32 fails, and batch size 4 fails too").smaller_batch_fits


def test_a_question_mark_ends_a_sentence():
    from oomtriage.engine.signals import _SENTENCE_END
    assert _SENTENCE_END.split("Why does it fail? It works fine on the laptop.") == ["Why does it fail", "It works fine on the laptop."]


def test_oom_even_with_another_setting_and_a_tiny_batch_lowered_is_no_batch_left():
    note = "training the base model on my 4GB card I get out of memory even with max_len = 128 and batch_size = 2"
    assert _signals(note).batch_no_help
    assert ids("step 0\n", note)[0] == "model_too_large"
    assert not _signals("out of memory even with max_len = 128, and batch_size = 64 is what I need").batch_no_help


def test_the_minimum_gpu_spec_asked_is_the_requirement():
    assert _signals("what is the minimum GPU spec to fine-tune the small model? it OOMs on mine").memory_requirement_asked


def test_the_cpu_asked_for_in_a_question_is_not_where_the_run_was():
    assert not _signals("it fits for training but the merge runs out of memory; can the merge be done on the CPU?").cpu_mode
    assert _signals("I run it on the cpu and it still reports a CUDA allocation").cpu_mode


def test_the_longest_item_singled_out_is_a_long_input():
    note = "most of my clips are 5 seconds but the longest one is 90 seconds, and training runs out of memory"
    assert _signals(note).long_input
    assert ids("epoch 1\n", note)[0] == "input_size_too_large"


@pytest.mark.parametrize("note, capacity, count", [
    ("fine-tuning on 8x80G A100 with ZeRO-2 runs out", 80 * 10**9, 8),
    ("two 40G A100s, and it still fails", 40 * 10**9, 2),
])
def test_a_card_size_written_with_a_bare_g_before_its_name(note, capacity, count):
    signals = _signals(note)
    assert signals.note_gpu_capacity == capacity and signals.gpu_count == count


@pytest.mark.parametrize("note", [
    "after a git pull the server runs out of memory at startup; I bisected it down to commit 4e2f1a9",
    "I updated the package this morning and it now throws CUDA out of memory on the same prompt",
])
def test_a_failure_traced_to_a_change_or_an_update_is_a_regression(note):
    assert _signals(note).upgrade_regression


def test_a_reload_that_names_no_dtype_is_fp32_whatever_an_earlier_call_asked():
    note = ("I first built the pipeline with from_pretrained(repo, torch_dtype=torch.float16) and saved it; the service "
            "then loads it with StableDiffusionPipeline.from_pretrained(local_dir) and runs out of memory")
    signals = _signals(note)
    assert signals.load_without_dtype and signals.weight_bytes == 4.0
    assert "full_precision" in ids("x\n", note)[:2]
    assert not _signals("pipe = Pipeline.from_pretrained(repo, torch_dtype=torch.bfloat16) runs out of memory").load_without_dtype


def test_gradient_accumulation_added_to_a_run_that_fit_is_its_buffers():
    note = ("with the original optimizer it trains at batch 32; wrapped with gradient accumulation (accum_steps=8) "
            "even batch 8 goes OOM")
    signals = _signals(note)
    assert signals.accumulation_named and signals.batch_size == 8
    assert ids("Resource exhausted: OOM when allocating tensor with shape[1024,4096]\n", note)[0] == "optimizer_state"


@pytest.mark.parametrize("note", [
    "preprocessing 30M documents keeps blowing up my RAM",
    "the tokenizer map ends up swapping to disk and then the machine stalls",
])
def test_ram_blown_up_or_gone_to_swap_is_the_hosts(note):
    assert _signals(note).host_ram
    assert ids("map 40%\n", note)[0] == "dataloader_or_host"


def test_models_compiled_inside_a_loop_are_kept_by_the_session():
    note = ("each round I call model.compile(loss='mse', optimizer='adam') inside the loop and then model.fit; "
            "memory climbs every round until it runs out")
    assert _signals(note).models_in_a_loop
    assert ids("round 14\n", note)[0] == "reference_leak"
    assert "clear_session" in evidence_of("round 14\n", note, "reference_leak")


@pytest.mark.parametrize("note", [
    "there is not enough memory on my card for the large model",
    "it stops with insufficient GPU memory halfway through",
])
def test_not_enough_memory_said_is_an_oom(note):
    assert ids("", note)
    assert not ids("", "there is enough memory on my card for the large model")


def test_a_pipelines_first_model_not_freed_before_the_next_is_kept():
    note = ("the detector runs first, then the captioner; the detector model is not properly garbage collected, so "
            "there is not enough memory for the captioner on my 8GB card")
    assert _signals(note).model_replaced
    assert ids("", note)[0] == "reference_leak"
    assert _signals("both the denoiser and the vocoder models are loaded at the same time and it runs out").model_replaced


@pytest.mark.parametrize("note, capacity", [
    ("it runs out of memory on my 6GB RTX 3060", 6 * 10**9),
    ("it runs out of memory on my RTX 3060 (6GB)", 6 * 10**9),
    ("it runs out of memory on my RTX 3060", 12 * 10**9),
    ("it runs out on a GTX 1060 (3 GB)", 3 * 10**9),
])
def test_a_size_stated_beside_a_cards_name_is_that_cards(note, capacity):
    assert _signals(note).note_gpu_capacity == capacity


def test_an_amount_used_across_cards_is_no_cards_size():
    assert _signals("it uses 8 GB on 2 GPUs and then fails").note_gpu_capacity is None


_EVAL_FRAME = 'Traceback (most recent call last):\n  File "run.py", line 40, in evaluate\n    out = net(x)\nRuntimeError: CUDA out of memory.\n'


def test_training_that_fits_beside_an_evaluation_that_fails_keeps_a_graph():
    note = "training works fine at batch 64; it's only when the evaluate() function is called that it runs out of memory"
    signals = _signals(note, _EVAL_FRAME)
    assert signals.eval_only_fails and signals.phase == "evaluation"
    assert ids(_EVAL_FRAME, note)[0] == "missing_no_grad"
    # training on patches and evaluating whole images: the inputs differ, the rule stays out
    patches = "training on 96x96 patches works fine, but evaluation on the full images runs out of memory"
    assert not any("Training fits and only its evaluation fails" in e for c in ranked(_EVAL_FRAME, patches) for e in c.evidence)


def test_a_function_restoring_something_other_than_saved_state_is_no_loading():
    def frame(name: str) -> str:
        return f'Traceback (most recent call last):\n  File "t.py", line 9, in {name}\n    y = f(x)\nRuntimeError: CUDA out of memory.\n'
    assert _signals("it fails", frame("restore_speech_timestamps")).phase != "loading"
    assert _signals("it fails", frame("restore_checkpoint")).phase == "loading"


def test_memory_used_exponentially_is_growth():
    assert _signals("after a few episodes it started to use memory exponentially").growth


@pytest.mark.parametrize("note", [
    "the training script imports jax in the same file as the torch setup, and PyTorch then runs out of memory",
    "I run both torch and jax in one process; torch goes OOM with most of the card free",
])
def test_jax_imported_into_a_pytorch_program_preallocates_the_card(note):
    assert _signals(note).preallocating_framework_beside
    assert ids("RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB\n", note)[0] == "other_process_or_device"
    # two ports compared, each in its own process
    assert not _signals("I tried both: the jax version of the model fits, the torch one runs out of memory").preallocating_framework_beside


def test_a_serving_engines_shards_under_tensor_parallelism_are_no_copies():
    note = ("vllm serve qwen-72b-int8 -tp 4: loading model weights took 18 GB on each worker, then it runs out; "
            "lowering gpu_memory_utilization didn't help")
    signals = _signals(note)
    assert not signals.copy_per_device
    assert "distributed_replication" != ids("torch.cuda.OutOfMemoryError: CUDA out of memory.\n", note)[0]


def test_another_setting_that_did_not_help_is_not_more_gpus():
    assert not _signals("on 4 GPUs, and modifying gpu_memory_utilization didn't help").more_gpus_no_help
    assert _signals("moving from 2 GPUs to 4 GPUs didn't help at all").more_gpus_no_help


@pytest.mark.parametrize("note", [
    "before the weights load it has already consumed 18.7G VRAM",
    "the model uses 10 GB VRAM and then it fails",
])
def test_an_amount_of_vram_used_is_no_cards_size(note):
    assert _signals(note).note_gpu_capacity is None


def test_a_request_of_a_few_bytes_per_pair_of_positions_is_a_square_tensor():
    note = "with a context of about 160k tokens, building the causal mask tries to allocate 400 GB"
    assert ids("", note)[0] == "attention_quadratic"
    # the same sizes with nothing that names a square tensor: no such reading
    assert not any("every pair of positions" in e for c in ranked("", "with a context of about 160k tokens it tries to allocate 400 GB")
                   for e in c.evidence)


def test_memory_that_doubles_while_loading_is_the_saved_copy():
    note = "loading my trained model makes the GPU memory roughly double and it runs out"
    assert ids("", note)[0] == "checkpoint_loading"


def test_a_peak_placed_in_the_optimizers_initialization_is_its_states():
    note = ("training a 350M encoder with ZeRO-3 on two cards: the 5 GB peak occurs in the initialization of the ZeRO "
            "optimizer, steps afterwards use 3 GB, and that initialization goes OOM on a 4 GB card")
    assert _signals(note).phase == "optimizer_setup"
    assert ids("", note)[0] == "optimizer_state"


@pytest.mark.parametrize("note", [
    "with ZeRO-3 I build the model normally and then call deepspeed.zero.Init(module=model); it runs out of memory",
    "under FSDP the model is moved with .cuda() before wrapping, and every rank runs out of memory",
])
def test_a_model_built_whole_before_full_sharding_is_a_copy_per_rank(note):
    assert _signals(note).built_before_sharding
    assert ids("torch.cuda.OutOfMemoryError: CUDA out of memory.\n", note)[0] == "distributed_replication"


def test_a_tensor_over_every_pair_of_nodes_is_quadratic():
    text = ('Traceback (most recent call last):\n  File "layers.py", line 60, in _prepare_input\n'
            "    all_combinations_matrix = torch.cat([repeated_in_chunks, repeated_alternating], dim=1)\n"
            "RuntimeError: CUDA out of memory. Tried to allocate 900.00 MiB (GPU 0; 6.00 GiB total capacity; "
            "4.10 GiB already allocated; 160.00 MiB free; 4.50 GiB reserved in total by PyTorch)\n")
    assert ids(text, "a graph of 3000 nodes runs out of memory")[0] == "attention_quadratic"


def test_a_graph_of_a_few_thousand_nodes_is_no_large_input():
    assert not _signals("a graph of 2708 nodes runs out of memory").long_input
    assert _signals("a graph of 2,400,000 nodes runs out of memory").long_input


def test_an_image_size_written_as_a_tuple_is_read():
    assert _signals("the default image size is (1333, 800) but my images are (2048, 1080)").long_input
    assert not _signals("my images are (640, 480) and it runs out").long_input


def test_one_release_installed_two_ways_one_leaking_is_the_builds():
    note = ("the pip wheel torch==2.3.0+cu118 has a memory leak in my loop, while the conda build of the same 2.3 release "
            "is fine on the same machine")
    assert _signals(note).upgrade_regression
    assert ids("", note)[0] == "framework_bug"
    assert not _signals("the pip wheel has a memory leak in my loop and I kept the outputs in a list").upgrade_regression


def test_host_memory_filled_while_loading_is_the_hosts():
    note = ("loading a 65B 4-bit model with every layer offloaded: system RAM fills up and it fails with CUDA out of memory "
            "while about 12GB of VRAM is still free")
    assert ids("", note)[0] == "dataloader_or_host"


def test_memory_still_free_when_it_failed_is_no_cards_size():
    assert _signals("it fails with about 12GB of VRAM still free").note_gpu_capacity is None
    assert _signals("I only have a GPU with 2 GB free").note_gpu_capacity == 2 * 10**9


def test_a_swap_size_stated_is_host_memory_and_always_growing_is_growth():
    note = "after a few epochs it runs out of memory; the replay buffer is always growing, and the box has 64GB and 16GB swap"
    signals = _signals(note, "")
    assert signals.host_ram and signals.growth
    assert ids("", note)[0] == "dataloader_or_host"


def test_shapes_said_to_be_fixed_are_no_variable_length_workload():
    assert "variable_length" not in _signals("it leaks until OOM; I'm not using dynamic shapes").domains
    assert "variable_length" in _signals("it leaks until OOM with dynamic shapes").domains


def test_rewordings_of_this_rounds_readers():
    # training that fits with words between ("training at batch 128 is fine"), the phase alone failing
    assert _signals("Training at batch 128 is fine for the whole epoch; only the validation function crashes", _EVAL_FRAME).eval_only_fails
    # a first model not freed before the next one loads, whatever it is called
    assert _signals("the recognizer isn't freed before the second model is loaded and it runs out").model_replaced
    # a model built whole before ZeRO-3 fails before the first step: the copy, not the optimizer
    note = "with ZeRO stage 3 I instantiate the 13B model outside the deepspeed.zero.Init context and every rank runs out before the first step"
    assert ids("torch.cuda.OutOfMemoryError: CUDA out of memory.\n", note)[0] == "distributed_replication"


def test_every_item_in_one_batch_is_the_batch():
    note = "embed() pads all the sentences of a document to max_len and builds one batch tensor from all of them"
    assert _signals(note).whole_set_one_batch
    text = "RuntimeError: CUDA out of memory. Tried to allocate 15.00 GiB (GPU 0; 15.90 GiB total capacity; 200.00 MiB already allocated; 14.00 GiB free; 300.00 MiB reserved in total by PyTorch)\n"
    assert ids(text, note)[0] == "batch_too_large"


def test_a_failure_that_started_recently_with_the_card_held_outside_pytorch_is_the_other_process():
    text = ("RuntimeError: CUDA out of memory. Tried to allocate 90.00 MiB (GPU 0; 14.76 GiB total capacity; 0 bytes already "
            "allocated; 43.44 MiB free; 0 bytes reserved in total by PyTorch)\n")
    note = "it worked normally until two days ago and now suddenly fails with the same code"
    assert ids(text, note)[0] == "other_process_or_device"
    # with a version named, the regression stays the lead
    assert ids(text, "it worked on 1.6.0 and suddenly fails on 1.7.0 with the same code")[0] == "framework_bug"


def test_llama_factorys_cutoff_len_is_the_sequence_length():
    assert _signals("LoRA on a 7B with cutoff_len: 32768 and batch 1 runs out of memory").seq_len == 32768


def test_an_amd_cards_xtx_suffix_is_no_gpu_count():
    assert _signals("OOM on my 7900xtx at the end").gpu_count in (None, 1)
    assert _signals("training on 4x A100 runs out").gpu_count == 4


def test_a_vae_decode_that_asks_for_tiling_is_the_decoders_activations():
    note = "sampling finishes, then it runs out of memory at the VAE decode stage; is there a way to enable tiled vae decode?"
    assert ids("", note)[0] == "input_size_too_large"
    assert "keeps no KV cache" in against_of("", note, "kv_cache_or_generation")
    assert "keeps no KV cache" not in evidence_of("", note, "kv_cache_or_generation")


def test_a_tiling_switch_that_overflows_a_run_that_fit_is_the_librarys():
    note = "vae.enable_tiling() then decoding a 1024x1024 image: enable_tiling causes an out of memory overflow, it is normal without it"
    assert _signals(note).saver_broke_fit
    assert ids("", note)[0] == "framework_bug"


def test_an_input_size_said_to_fit_that_is_the_one_that_failed_is_no_smaller_input():
    note = ("after increasing imgsz from 640 to 1280 it runs out of memory with the automatic batch of 6; I set the batch "
            "to 3 with imgsz=1280 and then it succeeded")
    assert not _signals(note).smaller_input_fits
    assert _signals("imgsz 1280 runs out of memory; with imgsz=640 it succeeded").smaller_input_fits


def test_closing_the_first_notebook_frees_the_second():
    note = "the first notebook works but the next one fails with out of memory; once I closed the first notebook, the next one worked"
    assert _signals(note).other_process_hint
    assert ids("", note)[0] == "other_process_or_device"


@pytest.mark.parametrize("note, fused", [
    ("LoRA on a 7B with flash_attn: fa2 and cutoff_len: 32768 runs out of memory", True),
    ("attn_implementation='flash_attention_2', max_seq_length 16384, it goes OOM", True),
    ("without flash attention a 32k context runs out of memory", False),
    ("flash attention is not installed and the 16k run goes OOM", False),
])
def test_a_fused_attention_kernel_named_is_no_naive_attention_matrix(note, fused):
    assert _signals(note).fused_attention is fused
    top = ids("", note)
    assert (top[0] == "input_size_too_large") if fused else ("attention_quadratic" in top[:2])


def test_a_petabyte_request_without_the_cards_size_is_a_size_computed_wrong():
    assert ids("RuntimeError: NPU out of memory. Tried to allocate 4.00 PiB")[0] == "framework_bug"
    # a large but possible request on an unknown card stays the input's
    assert ids("RuntimeError: NPU out of memory. Tried to allocate 60.00 GiB")[0] != "framework_bug"


@pytest.mark.parametrize("note", [
    "running a text-to-video model on an Ascend 910B with 64 GB",
    "inference on two ascend-910B cards",
])
def test_an_npu_model_number_is_no_parameter_count(note):
    assert _signals(note).param_count is None
    assert "model_too_large" not in ids("NPU out of memory. Tried to allocate 20.00 GiB (NPU 0; 60.00 GiB total capacity; "
                                        "30.00 GiB already allocated; 10.00 GiB free; 31.00 GiB reserved in total by PyTorch)", note)[:1]


@pytest.mark.parametrize("note", [
    "training an RNN-T on 16 GB, vocab of 5000 word pieces, it runs out of memory in the loss",
    "my conformer transducer runs out of memory on an 11 GB card",
    "the joint network is where it dies, with torchaudio's RNNTLoss",
    "rnnt_loss fails with out of memory on long utterances",
])
def test_a_transducers_joint_network_is_the_logits(note):
    assert _signals(note).transducer
    assert ids("CUDA out of memory", note)[0] == "large_logits"
    # failing a few batches in, the longest utterance competes: the joint still ranks beside it
    assert "large_logits" in ids("CUDA out of memory", "my conformer transducer goes OOM after a few batches")[:2]
    assert not _signals("a CTC model with a 5000-token vocabulary runs out of memory").transducer


@pytest.mark.parametrize("note", [
    "the video tracker works on the demo clip but my own video runs out of GPU memory",
    "propagate_in_video fails with CUDA out of memory after 40 frames",
    "segmenting videos longer than two minutes goes OOM",
])
def test_a_video_longer_than_the_example_is_the_input_that_grew(note):
    assert _signals(note).long_input
    assert ids("", note)[0] == "input_size_too_large"


@pytest.mark.parametrize("note", [
    "it runs out of memory; system memory peaked at 97% of 64 GB while the predictor state was built",
    "host RAM usage reached 100% and the job died",
    "out of memory, the system memory usage hit 92 % during loading",
])
def test_host_memory_nearly_all_in_use_is_the_hosts(note):
    assert _signals(note).host_ram
    assert ids("", note)[0] == "dataloader_or_host"
    assert not _signals("system memory peaked at 30%, only the card is out of memory").host_ram


@pytest.mark.parametrize("note", [
    "training DeepLabV3 on Cityscapes with batch 8 runs out of memory",
    "semantic segmentation on Mapillary Vistas at full size goes OOM",
    "fine-tuning on the DOTA aerial images fails with CUDA out of memory",
])
def test_a_dataset_of_multi_megapixel_images_is_a_large_input(note):
    assert _signals(note).long_input
    assert ids("", note)[0] == "input_size_too_large"


@pytest.mark.parametrize("note", [
    "with torch 2.3.1 the loop's memory climbs every step, with torch 2.2.0 it stays flat",
    "on jaxlib 0.4.30 it runs out of memory after a while; on jaxlib 0.4.26 the same script works",
])
def test_two_builds_contrasted_are_a_version_change(note):
    assert _signals(note).upgrade_regression
    assert ids("", note)[0] == "framework_bug"


@pytest.mark.parametrize("note", [
    "turning on gradient checkpointing increases the peak from 20 GB to 26 GB and it goes OOM",
    "memory jumps from 9 GB to 14 GB when adding jax.checkpoint around the blocks, then out of memory",
    "with nn.remat on every layer it uses more memory than without and runs out",
])
def test_recomputation_that_raises_memory_is_the_librarys(note):
    assert _signals(note).saver_costs_more
    assert ids("", note)[0] == "framework_bug"
    assert not _signals("gradient checkpointing lowers memory from 20 GB to 12 GB but the step still runs out").saver_costs_more


@pytest.mark.parametrize("note", [
    "I call a jitted function on arrays of varying shapes in a loop and host memory keeps growing until it dies",
    "tf.function keeps retracing for every new batch shape and memory grows until out of memory",
    "jnp operations on many distinct shapes; after an hour the process runs out of memory",
])
def test_a_tracing_compiler_fed_changing_shapes_grows_its_cache(note):
    signals = _signals(note)
    assert signals.varying_shapes and signals.tracing_compiler
    assert ids("", note)[0] == "reference_leak"
    # changing shapes without a tracing compiler are no compilation cache
    assert not _signals("inputs of varying shapes in PyTorch eager mode go OOM").tracing_compiler


@pytest.mark.parametrize("note, cpu_mode", [
    ("separating on the GPU runs out of memory; it works flawlessly on the CPU", False),
    ("the same script runs perfectly on the CPU, only CUDA fails", False),
    ("I set device=cpu and it still hits a CUDA OOM", True),
])
def test_a_run_that_succeeded_on_the_cpu_was_not_meant_for_it(note, cpu_mode):
    assert _signals(note).cpu_mode is cpu_mode


@pytest.mark.parametrize("note", [
    "the pod is OOMKilled with exit code 137 after a long file",
    "the container gets oom-killed halfway through",
    "the job was killed by the kernel while separating a 2-hour recording",
])
def test_a_kill_said_in_the_note_is_the_hosts(note):
    assert _signals(note, text="").host_ram
    assert ids("", note)[0] == "dataloader_or_host"


@pytest.mark.parametrize("note", [
    "the track is 4356 seconds long and CUDA runs out of memory at the end",
    "separating a 70-minute song goes OOM on a 16 GB card",
    "my recordings are about 45 minutes and transcription fails with out of memory",
])
def test_an_audio_length_said_is_a_long_input(note):
    assert _signals(note).long_input
    assert ids("", note)[0] == "input_size_too_large"


@pytest.mark.parametrize("note", [
    "memory keeps growing as I call torch.fft.rfft on signals of many different lengths",
    "cupy.fft.fft over arrays of varying shapes: GPU usage climbs until out of memory and empty_cache does not bring it back",
    "an stft per file, every file a different length, and memory grows until OOM",
])
def test_ffts_over_many_sizes_fill_the_plan_cache(note):
    assert _signals(note).fft_named
    assert ids("", note)[0] == "cudnn_or_workspace"
    # one large FFT is the input's size, not the plan cache
    assert ids("CUDA out of memory", "rfft on a signal of 2**30 samples fails with out of memory")[0] != "cudnn_or_workspace"


@pytest.mark.parametrize("note, cause", [
    ("Flux training on CUDA.jl runs out of GPU memory after a few batches; inserting GC.gc() every 10 steps avoids it", "framework_bug"),
    ("Julia 1.9 with Lux.jl: the only way to keep going is calling GC.gc() by hand", "framework_bug"),
    ("PyTorch: memory grows every epoch unless I call gc.collect(), which fixes it", "reference_leak"),
])
def test_a_garbage_collection_by_hand_that_helps(note, cause):
    assert _signals(note).collector_helps
    assert ids("CUDA out of memory", note)[0] == cause
    assert not _signals("I call gc.collect() before the next model, yet the VRAM is never released").collector_helps


@pytest.mark.parametrize("note", [
    "the memory of my server runs out during training",
    "the RAM of the machine fills up and the job is killed",
])
def test_the_memory_of_the_machine_said_to_run_out_is_the_hosts(note):
    assert _signals(note, text="").host_ram
    assert ids("", note)[0] == "dataloader_or_host"


@pytest.mark.parametrize("note", [
    "train_ds = train_ds.cache().shuffle(1000) and the process dies of memory on the second dataset",
    "I cache the whole dataset with tf.data so the epochs are fast, and it runs out of memory",
    "yolo train --cache ram on 300k images: out of memory",
])
def test_a_dataset_cached_whole_fills_host_ram(note):
    assert _signals(note).dataset_cached
    assert ids("", note)[0] == "dataloader_or_host"
    assert not _signals("the KV cache fills the card").dataset_cached


def test_a_data_writers_batch_is_no_training_batch():
    assert _signals("dataset.map(fn, num_proc=8, writer_batch_size=1000) runs out of memory").batch_size is None
    assert _signals("per_device_train_batch_size=16 goes OOM").batch_size == 16


def test_a_listed_process_that_cannot_be_another_is_this_one():
    # 40 GiB listed beside PyTorch's own 30 GiB reserved on a 45 GiB card: both cannot be there at once
    text = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 100.00 MiB. GPU 0 has a total capacity of 45.00 GiB "
            "of which 50.00 MiB is free. Process 4242 has 44.90 GiB memory in use. Of the allocated memory 29.50 GiB is allocated "
            "by PyTorch, and 500.00 MiB is reserved by PyTorch but unallocated.")
    context = build_context(text=text)
    assert "other_process_or_device" not in ids(text)[:1]
    from oomtriage.engine.facts import compute_numbers
    assert compute_numbers(context, read_signals(context)).other_processes == 0
    # a process that leaves room for PyTorch's reserve is another one
    other = text.replace("44.90 GiB memory in use", "14.00 GiB memory in use")
    assert ids(other)[0] == "other_process_or_device"


@pytest.mark.parametrize("note", [
    "load_dataset('json', data_dir=..., num_proc=16) runs out of memory on a 256 GB node",
    "tokenizing with ds.map(tokenize, batched=True, num_proc=24): RAM climbs and the process is OOM",
])
def test_dataset_preparation_in_worker_processes_is_the_hosts(note):
    assert _signals(note).host_data_job
    assert ids("", note)[0] == "dataloader_or_host"
    # the same preparation beside a GPU message is not what failed
    assert ids("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
               "after ds.map(tokenize, num_proc=8) the training step runs out of memory")[0] != "dataloader_or_host"


@pytest.mark.parametrize("note", [
    "video generation with a DiT on an 80 GB card: it fails in F.scaled_dot_product_attention",
    "HunyuanVideo at 720p runs out of memory",
])
def test_video_generation_is_a_denoising_loop_not_a_kv_cache(note):
    assert "diffusion" in _signals(note).domains
    assert ids("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 30.00 GiB", note)[0] != "kv_cache_or_generation"


def test_recomputation_that_makes_the_peak_go_up():
    note = "enabling activation checkpointing makes the peak go up, not down, and now it runs out of memory"
    assert _signals(note).saver_costs_more
    assert ids("", note)[0] == "framework_bug"


@pytest.mark.parametrize("note", [
    "the transformer pipeline runs out of CUDA memory on a text of about 500,000 characters",
    "a 40k-token document fails even alone",
    "with longer documents nlp() runs out of memory",
])
def test_a_document_of_tens_of_thousands_of_characters_is_a_long_input(note):
    assert _signals(note).long_input
    assert ids("CUDA out of memory", note)[0] == "input_size_too_large"
    assert not _signals("the target dictionary has 250k words").long_input


@pytest.mark.parametrize("note, host", [
    ("evaluation gets slower and slower and then the process is killed", True),
    ("after 3000 images the python process got killed", True),
    ("I pressed ctrl-c and the process was killed by me", False),
])
def test_a_process_said_killed_without_a_gpu_message_is_the_oom_killers(note, host):
    assert _signals(note, text="").host_ram is host


def test_the_shells_killed_in_a_chinese_locale():
    report = analyze_inputs([], text="[>>>>>>      ] 812/4000, 2.1 task/s, elapsed: 390s, ETA:  1520s已杀死", note=None)
    assert report.detected and report.error.format == "process_killed"
    assert report.causes[0].id == "dataloader_or_host"


@pytest.mark.parametrize("note", [
    "LoRA on Qwen2.5-VL-3B runs out of memory on a 24 GB card",
    "MiniCPM-V fine-tuning goes OOM at batch 1",
])
def test_a_dynamic_resolution_vision_language_model_reads_as_its_images(note):
    assert ids("", note)[0] == "input_size_too_large"
    # a fixed-resolution one needs its images named to be read that way
    assert "input_size_too_large" not in ids("", "PaliGemma fine-tuning goes OOM at batch 1")[:1]


# --- runtimes without autograd, chats that grow, sizes that fail below a size that works ---------

@pytest.mark.parametrize("text", [
    "Check failed: error == cudaSuccess (2 vs. 0)  out of memory",
    "error: (-217:Gpu API call) out of memory in function 'allocate'",
    "Error: Out of memory. Requested 900 MB; Free 300 MB",
    "StandardGpuResources: alloc fail type FlatData dev 0 space Device stream 0x0 size 2147483648 bytes (cudaMalloc error out of memory [2])",
])
def test_a_runtime_without_autograd_is_never_told_about_no_grad_or_kept_graphs(text):
    for note in ("the demo crashes during inference", "memory keeps growing every iteration of my evaluation loop"):
        ranked_ids = ids(text, note)
        assert ranked_ids and not {"missing_no_grad", "graph_retained"} & set(ranked_ids), (text, note)
    # PyTorch's own message keeps them
    assert "missing_no_grad" in ids(sentence(), "the demo crashes during inference")


@pytest.mark.parametrize("note", [
    "CPU mode works for both datasets; GPU mode fails on the bigger one",
    "In CPU mode it runs, on the GPU it runs out of memory with the full table",
    "cpu mode is fine, only the gpu run dies",
])
def test_a_cpu_run_that_succeeded_is_not_a_run_meant_for_the_cpu(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert not signals.cpu_mode
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note="I launched it in cpu mode")).cpu_mode


@pytest.mark.parametrize("note", [
    "The first few cycles are normal, but the error occurs when the number of cycles increases.",
    "the first loops go through, it dies as the number of iterations grows",
    "it only fails once the count of frames processed gets larger",
    "early iterations work, then as the loop count grows it dies",
])
def test_failing_only_after_many_repetitions_reads_as_growth(note):
    signals = read_signals(build_context(text="error: (-217:Gpu API call) out of memory in function 'allocate'", note=note))
    assert signals.growth, note
    assert ids("error: (-217:Gpu API call) out of memory in function 'allocate'", note + " I process video frames in a loop")[0] == "reference_leak"


@pytest.mark.parametrize("note", [
    "The assistant answers quickly, but after several conversation turns it fails.",
    "chat works for the first questions, then after a few messages the GPU runs out",
    "It crashes at around 6 turns of the chat; lowering max_new_tokens lets it go a bit longer.",
    "After 3 or 4 rounds of conversation the plugin errors out.",
])
def test_a_chat_that_fails_after_some_turns_is_its_growing_context(note):
    assert ids("[GPU] CL_OUT_OF_RESOURCES exception", note)[0] == "kv_cache_or_generation", note


def test_an_update_that_helped_is_no_regression():
    text = "RuntimeError: CUDA out of memory."
    for note in ("It improved after updating the nightly, but still fails later", "it got better after upgrading to 2.4"):
        assert not read_signals(build_context(text=text, note=note)).upgrade_regression, note
    assert read_signals(build_context(text=text, note="it started failing after updating to 2.4")).upgrade_regression


@pytest.mark.parametrize("note", [
    "When the input shape is 1,47 it always fails; when I make it 1,48 it does not.",
    "It fails with 47 tokens but works with 48 or 64 tokens.",
    "A batch of 7 crashes while a batch of 8 runs fine.",
    "images of 300x300 error out, yet 512x512 images work",
])
def test_a_smaller_size_failing_where_a_larger_works_is_a_broken_path(note):
    causes = ranked("[GPU] CL_OUT_OF_RESOURCES exception", note)
    assert causes[0].id == "framework_bug", note
    assert "larger one works" in " ".join(causes[0].evidence)


@pytest.mark.parametrize("note", [
    "It works with batch 8 but fails with batch 16.",
    "It fails on 1 GPU but works on 2 GPUs.",
    "Training at 512 px works; at 1024 px it fails.",
    "it fails on 1 node but works on 2 nodes",
    "fails after 3 epochs, while 10 epochs of the small model were fine",
])
def test_larger_sizes_failing_or_other_counts_are_not_a_broken_path(note):
    assert not read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).smaller_fails_larger_works, note


def test_a_card_size_in_brackets_after_gpu_is_the_cards():
    for note in ("my laptop GPU (2 GB) crashes with the demo", "on a card (4GB) it fails"):
        assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).note_gpu_capacity in (2 * 10**9, 4 * 10**9)


@pytest.mark.parametrize("note", [
    "fine-tuning with keras.distribution.ModelParallel on the jax backend runs out of memory",
    "KERAS_BACKEND=jax, keras_hub Gemma, the fit call dies",
    "I use the torch backend of keras 3 and training fails",
])
def test_keras_on_another_backend_is_one_framework(note):
    signals = read_signals(build_context(text="RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1.50GiB.", note=note))
    assert not signals.preallocating_framework_beside, note
    assert read_signals(build_context(text="RESOURCE_EXHAUSTED: Out of memory", note="I import tensorflow and jax in the same script")).preallocating_framework_beside


@pytest.mark.parametrize("note", [
    "With SGD I can train at 4k tokens with batch 1. With AdamW I can't train at all, whatever the length.",
    "Using AdamW it is impossible, I cannot even start. Using SGD training goes through at full length.",
])
def test_sgd_fitting_and_adam_failing_in_separate_sentences_is_the_optimizer(note):
    assert ids("", note + " It is an OOM.")[0] == "optimizer_state"


@pytest.mark.parametrize("note", [
    "the loader doesn't respect gpu_split and always OOMs on the first card",
    "OOM with gpu_split_auto, I must specify the split manually",
    "it seems to ignore max_memory completely and fills GPU 0",
    "device_map seems to be ignored, everything lands on cuda:0",
    "auto split fails but a manual split works",
])
def test_a_placement_the_library_does_not_apply_is_its_bug(note):
    causes = ranked("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.", note)
    assert "framework_bug" in [cause.id for cause in causes[:2]], note


@pytest.mark.parametrize("note", [
    "I split the model manually across two GPUs and it still does not fit",
    "with gpu_split 20,24 it loads, the memory limit works fine",
    "I respect the memory limit of the cluster",
])
def test_placements_that_were_applied_are_no_bug(note):
    assert not read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).placement_not_honoured, note


@pytest.mark.parametrize("note", [
    "With the same inputs a 1050ti machine is slow but I get a result; on a 3060 machine I get this error.",
    "It runs on my GTX 1080 without problems but fails on the RTX 3090.",
])
def test_the_same_input_running_on_a_smaller_card_is_no_memory_shortage(note):
    causes = ranked("RuntimeError: CUDA out of memory.", note)
    assert causes[0].id == "framework_bug", note
    assert "less memory" in " ".join(causes[0].evidence)


def test_a_larger_card_working_where_a_smaller_fails_is_ordinary():
    note = "It fails on my GTX 1080 but works on the RTX 3090."
    assert not read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).smaller_card_works


def test_a_middle_size_failing_between_sizes_that_work_is_a_broken_path():
    note = "It works with the full 800k rows and with 150k, but datasets of 300k or 350k crash with this error."
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).smaller_fails_larger_works
    assert not read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                          note="It works with 100k rows, but 300k or 350k crash.")).smaller_fails_larger_works


@pytest.mark.parametrize("note", [
    "Nothing fails when I run the same model and context with the Vulkan backend; with SYCL it runs out of memory.",
    "SYCL dies at load, the vulkan backend handles the same split correctly",
])
def test_another_backend_holding_the_same_setup_is_the_failing_backends_bug(note):
    assert ranked("level_zero backend failed with error: 39 [UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY]", note)[0].id == "framework_bug", note


@pytest.mark.parametrize("note", [
    "it works with the CPU backend but not on the GPU",
    "the CUDA backend works with the smaller model",
])
def test_the_cpu_or_the_same_backend_working_is_no_other_backend(note):
    text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
    assert not read_signals(build_context(text=text, note=note)).other_backend_works, note


@pytest.mark.parametrize(("note", "capped"), [
    ("On my Arc A770 only models whose buffer size is below ~4100MiB load; bigger quants fail", True),
    ("Intel iGPU: with UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1 the matmul passes", True),
    ("On my RTX 4090 buffers above 4 GB fail", False),
])
def test_intels_single_allocation_cap(note, capped):
    assert read_signals(build_context(text="", note=note + ". It runs out of memory.")).single_allocation_cap is capped


@pytest.mark.parametrize(("text", "backend"), [
    ("level_zero backend failed with error: 39 [UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY]", "xpu"),
    ("terminate called: ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", "xpu"),
    ("Exception caught at file:ggml-sycl.cpp, line:3954: UR_RESULT_ERROR_OUT_OF_HOST_MEMORY", "host"),
])
def test_level_zero_results_are_read(text, backend):
    error = analyze_inputs([], text=text).error
    assert (error.format, error.backend, error.library) == ("level_zero_out_of_memory", backend, "level_zero")


def test_a_quantized_files_size_is_its_weights_and_no_card():
    note = "Offloading to my GPUs (4x 24 GB) fails with either quant: Q4_K_M (140 GB) or IQ2_XS (90 GB)."
    signals = read_signals(build_context(text="", note=note))
    assert signals.measured_weights == 90 * 10**9 and signals.note_gpu_capacity == 24 * 10**9 and signals.splits_weights
    assert ids("", note)[0] == "model_too_large"


def test_a_large_free_amount_at_the_failure():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note="it fails at the matmul with 27GB free"))
    assert signals.free_at_failure
    assert not read_signals(build_context(text="RuntimeError: CUDA out of memory.", note="it fails with 1 GB free")).free_at_failure


@pytest.mark.parametrize("note", [
    "though Vulkan runs it fine, SYCL runs out of device memory",
    "With Vulkan the identical long-prompt run works; with SYCL it cannot allocate 568 MB.",
])
def test_another_backend_said_without_the_word_backend(note):
    assert read_signals(build_context(text="", note=note)).other_backend_works, note
    assert ids("", note)[0] == "framework_bug", note


def test_a_note_that_a_model_wont_load_on_a_card_of_a_size_is_a_suspected_oom():
    report = analyze_inputs([], text="", note="Any GGUF whose SYCL0 buffer is over 4 GB won't load on my 16 GB Arc card")
    assert report.suspected and report.causes[0].id == "framework_bug"


@pytest.mark.parametrize("variable", ["PYTORCH_NPU_ALLOC_CONF", "PYTORCH_MUSA_ALLOC_CONF", "PYTORCH_XPU_ALLOC_CONF"])
def test_every_backends_allocator_variable_is_an_allocator_setting(variable):
    signals = read_signals(build_context(text="RuntimeError: NPU out of memory.", note=f"I set {variable}=expandable_segments:True and it still fails"))
    assert signals.allocator_setting
    assert read_signals(build_context(text="RuntimeError: NPU out of memory.", note=f"{variable} is silently ignored")).setting_ignored


@pytest.mark.parametrize("note", [
    "I already run the upscaler with --tile 400 and it still runs out of memory on a 12 GB card",
    "Tiled mode is on (tile_size=768) but the super-resolution script still dies with OOM",
    "even using the tile strategy the sampler fails with CUDA out of memory on my 16G card",
    "I enabled vae tiling and the decode still OOMs",
])
def test_a_run_already_in_tiles_that_still_fails_has_a_tile_too_large(note):
    assert read_signals(build_context(text="", note=note)).tiling_in_use, note
    assert ids(sentence(), note)[0] == "input_size_too_large", note


@pytest.mark.parametrize("note", [
    "with --tile 0 the whole photo goes in at once and it runs out of memory",  # 0 is no tiling
    "it crashes with OOM whatever --tile size I give it",  # a tile that changes nothing
])
def test_no_tiling_or_a_tile_that_changes_nothing_is_not_a_tile_too_large(note):
    assert "The run already works in tiles" not in " ".join(e for c in ranked(sentence(), note) for e in c.evidence), note


@pytest.mark.parametrize("note", [
    "It fails when the photo is a 4K image; smaller ones are fine",
    "out of memory whenever the resolution of the frames is around 2k",
    "Upscaling 8k renders runs out of GPU memory",
])
def test_a_resolution_written_in_k_is_a_large_input(note):
    assert read_signals(build_context(text="", note=note)).long_input, note


@pytest.mark.parametrize("note", [
    "the 4k context model runs out of memory",
    "after 2k steps training stops with OOM",
])
def test_k_for_tokens_or_steps_is_no_resolution(note):
    assert not read_signals(build_context(text="", note=note)).long_input, note


@pytest.mark.parametrize("note", [
    "Training runs at about 15 GB, but it runs out of memory the moment the trainer saves the checkpoint",
    "every step fits; model.save_pretrained() is where the OOM happens",
    "the OOM occurs while saving the model at the end of the epoch",
])
def test_a_single_gpu_run_that_fails_only_when_saving_is_the_save_path(note):
    assert ids(sentence(), note)[0] == "framework_bug", note


def test_a_sharded_run_that_fails_when_saving_is_the_gather_not_a_library_bug():
    note = "With FSDP on 8 GPUs training fits, but it runs out of memory when saving the model"
    assert ids(sentence(), note)[0] == "distributed_replication"


@pytest.mark.parametrize("note", [
    "GPU 0 runs out of memory while the other GPUs are not full",
    "rank 0 dies with OOM though the remaining 7 cards still have plenty of free memory",
])
def test_the_first_gpu_failing_while_the_others_have_room(note):
    signals = read_signals(build_context(text="", note=note))
    assert signals.rank0_heavy, note


def test_the_phase_left_unsaid_is_not_called_a_smaller_batch_that_did_not_help():
    note = "What are the GPU memory requirements of this model? I have a 12 GB card."
    evidence = evidence_of(sentence(req="132.00 MiB", total="11.93 GiB", free="100.00 MiB", alloc="11.00 GiB", unalloc="300.00 MiB"),
                           note, "model_too_large")
    assert "A smaller batch did not help" not in evidence and "The phase is unsaid" in evidence


@pytest.mark.parametrize("note", [
    "My DQN agent runs out of GPU memory after an hour of training",
    "I keep the transitions in a replay buffer on the GPU and it fills up after a few thousand episodes",
    "Training agents to play Atari games; the card is full after a while",
    "it crashes once the RL agent starts training",
])
def test_a_reinforcement_learning_agent_points_to_its_replay_memory(note):
    assert ids("RuntimeError: CUDA error: out of memory", note)[0] == "reference_leak", note


@pytest.mark.parametrize("note", [
    "PPO fine-tuning of a 7B language model runs out of memory",     # RLHF keeps no replay memory
    "the agent framework calls the model; generation runs out of memory",
])
def test_language_model_rl_and_llm_agents_are_not_a_replay_memory(note):
    causes = ranked("RuntimeError: CUDA error: out of memory", note)
    assert not any("replay memory" in " ".join(cause.evidence) for cause in causes), note


@pytest.mark.parametrize("note", [
    "Watching nvidia-smi I saw a constant incremental of the memory use",
    "there is a steady rise in VRAM usage and then it dies",
    "we see a gradual increase of GPU memory until the crash",
])
def test_a_steady_increase_of_memory_is_growth(note):
    assert read_signals(build_context(text="", note=note)).growth, note


def test_a_steady_increase_of_something_else_is_no_growth():
    assert not read_signals(build_context(text="", note="a linear increase of the learning rate during warmup")).growth


def test_fewer_images_in_the_dataset_is_not_a_smaller_input():
    # a smaller dataset changes no step's activations: it says nothing against the input's size
    for note in ("I reduced the number of training images but it did not help",
                 "tried fewer source images, still out of memory"):
        assert not read_signals(build_context(text="", note=note)).input_no_help, note
    assert read_signals(build_context(text="", note="I reduced the image resolution but it did not help")).input_no_help


@pytest.mark.parametrize(("note", "capacity"), [
    ("a Tesla V100 with 32G memory", 32e9),
    ("my V100 with 32 GB of VRAM", 32e9),
    ("on a laptop GeForce MX250", 2e9),
    ("an MX 150 notebook GPU", 2e9),
])
def test_a_cards_size_said_beside_its_name_and_laptop_cards(note, capacity):
    assert read_signals(build_context(text="", note=note)).note_gpu_capacity == capacity, note


def test_a_model_with_a_size_beside_it_is_no_card():
    assert read_signals(build_context(text="", note="T5 with 3G memory use")).note_gpu_capacity is None


@pytest.mark.parametrize("note", [
    "I detach the frozen encoder's output and train a small LSTM on top of it. Is there an inference mode I can use to save memory?",
    "Training my classifier head on long documents runs out of memory; is there any inference mode for the frozen encoder?",
])
def test_asking_for_an_inference_mode_is_not_the_evaluation_phase(note):
    # the question names a remedy the user hopes for; it does not say the failing run was inference
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert signals.phase != "evaluation", signals.phase


def test_failing_in_inference_mode_is_still_inference():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="It runs out of memory in inference mode on the test images."))
    assert signals.phase == "evaluation", signals.phase


@pytest.mark.parametrize("note", [
    "My card has 12GB and it runs out of space as soon as I train with 64 clips per step.",
    "Training goes out of space on the GPU once I use 40 samples at a time.",
    "The 24 GB GPU ran out of space halfway through the first epoch.",
])
def test_space_on_a_gpu_is_its_memory(note):
    # no message at all: the note alone says the card's memory ran out, so causes are ranked
    report = analyze_inputs([], text="", note=note)
    assert report.suspected and report.causes, note


@pytest.mark.parametrize("note", [
    "The disk runs out of space while saving checkpoints.",
    "The dataloader ran out of space in /tmp after an hour.",
])
def test_space_on_a_disk_is_not_an_oom(note):
    report = analyze_inputs([], text="", note=note)
    assert not report.suspected, note


@pytest.mark.parametrize("note", [
    "The input video is only 10 seconds, yet the depth model runs out of memory.",
    "My clip is just 12 seconds long and it still fails.",
    "The recordings are only 90 seconds and it does not fit.",
])
def test_a_short_sounding_duration_is_still_the_input_length(note):
    # "only" softens the number, it does not remove it: every frame or second is activations
    signals = read_signals(build_context(text="torch.OutOfMemoryError: CUDA out of memory.", note=note))
    assert signals.long_input, note


@pytest.mark.parametrize("note", [
    "RasterizationSettings(image_size=256, faces_per_pixel=100) and it runs out of memory in the renderer.",
    "With 50 faces per pixel the soft rasterizer fails on an 11 GB card.",
])
def test_many_faces_per_pixel_is_a_large_input(note):
    # the rasterizer's outputs are (N, H, W, K): K faces kept for every pixel
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "input_size_too_large", note


def test_few_faces_per_pixel_is_not_evidence():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="RasterizationSettings(image_size=256, faces_per_pixel=1) at batch 64."))
    assert not signals.long_input


@pytest.mark.parametrize("note", [
    "After training several epochs, CUDA out of memory on my detector.",
    "It dies after training for 3 epochs; before that the memory looked fine.",
])
def test_after_training_for_a_while_is_not_training_over(note):
    # how long training ran before it failed, not a model reloaded once training finished
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert not signals.reload_in_process, note


def test_after_training_is_still_training_over():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="After training, loading the best checkpoint for testing runs out of memory."))
    assert signals.reload_in_process


@pytest.mark.parametrize("note", [
    "The first time it ran out at the second epoch, the second time at the fifth epoch.",
    "I started it twice: the first time OOM was reported at epoch 3, the second time it failed at the seventh epoch.",
])
def test_attempts_failing_at_different_epochs_are_not_repeated_work(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert not signals.repeated_calls, note


def test_a_second_run_in_the_same_process_is_still_repeated_work():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="The second run of fit() in the same notebook fails."))
    assert signals.repeated_calls


@pytest.mark.parametrize("note", [
    "GPU memory usage keeps ceaselessly growing while training my GAN, and finally it blows up.",
    "Continuous rising of GPU memory during training.",
    "I see a steady growth of VRAM in the training loop.",
])
def test_memory_said_to_climb_is_a_suspected_oom_with_growth(note):
    report = analyze_inputs([], text="", note=note)
    assert report.suspected and report.causes, note
    assert {c.id for c in report.causes[:3]} & {"graph_retained", "reference_leak"}, [c.id for c in report.causes]


@pytest.mark.parametrize("note", [
    "My host RAM keeps increasing during training on the CPU until the 64 GB are gone.",
    "Training on the CPU only: the RAM usage grows every iteration until the machine runs out of memory.",
])
def test_host_memory_climbing_through_training_can_be_a_kept_graph(note):
    top3 = [c.id for c in analyze_inputs([], text="", note=note).causes[:3]]
    assert "graph_retained" in top3, top3


def test_host_memory_climbing_with_loader_workers_stays_the_pipeline():
    note = "Host RAM keeps increasing during training with num_workers=8 in the DataLoader until it is killed."
    causes = [c.id for c in analyze_inputs([], text="", note=note).causes]
    assert causes[0] == "dataloader_or_host", causes


@pytest.mark.parametrize("note", [
    "For a large enough training set my GPU runs out of memory during training; small sets train fine.",
    "Training works until the dataset is big enough, then the GPU runs out of memory in the training loop.",
])
def test_failing_only_for_a_large_enough_training_set_is_kept_across_the_epoch(note):
    causes = [c.id for c in analyze_inputs([], text="", note=note).causes]
    assert causes[0] in ("graph_retained", "reference_leak"), causes


@pytest.mark.parametrize("note", [
    "Batch size 4 and lower works, but when I try a batch size like 8 or 16 it doesn't work.",
    "Anything at batch 2 or lower trains; but once I set the batch size to 12 it fails.",
])
def test_a_smaller_batch_that_works_beside_a_larger_that_fails_is_no_batch_that_did_not_help(note):
    # "lower works, but a larger batch fails" says the batch decides, not that lowering it did not help
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert not signals.batch_no_help, signals.evidence.get("batch_no_help")
    assert analyze_inputs([], text="RuntimeError: CUDA out of memory.", note=note).causes[0].id == "batch_too_large"


def test_a_lowered_batch_that_still_fails_still_did_not_help():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="I lowered the batch size to 2 but it still fails."))
    assert signals.batch_no_help


@pytest.mark.parametrize("note", [
    "During validation the GPU gets more and more memory until it stops.",
    "My eval loop takes more and more GPU memory with every batch.",
    "In the validation phase it keeps using more and more VRAM.",
])
def test_more_and_more_memory_in_evaluation_is_growth_without_no_grad(note):
    report = analyze_inputs([], text="", note=note)
    assert report.suspected and report.causes, note
    assert report.causes[0].id == "missing_no_grad", [c.id for c in report.causes]


def test_more_and_more_of_something_else_is_no_growth():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="The paper uses more and more layers; mine has 48 and fails at the first step."))
    assert not signals.growth


@pytest.mark.parametrize("note", [
    "With 40 MPI processes on one node the GPUs run out of memory; reducing the number of processes per node to 20 resolves it.",
    "CUDA OOM with many ranks; fewer ranks per node (8 instead of 32) fixes it, though each uses only a few MB.",
])
def test_fewer_processes_per_node_that_fit_are_processes_sharing_the_gpus(note):
    signals = read_signals(build_context(text="", note=note))
    assert signals.several_processes_one_gpu, note
    assert analyze_inputs([], text="", note=note).causes[0].id == "other_process_or_device"


def test_processes_per_node_without_a_fix_are_not_evidence():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="I run 8 processes per node, one per GPU, and the first step fails."))
    assert not signals.several_processes_one_gpu


@pytest.mark.parametrize("note", [
    "With batch size 32 it doesn't even start training; with 24 it runs and fails after 300 iterations.",
    "Batch 64 crashes immediately, 48 takes a while, 32 even longer but also crashes at around 9000 steps.",
    "I set the batch size to 12 and it fails after a few epochs, and if I try something like 20 it fails right away.",
])
def test_a_larger_batch_failing_sooner_is_the_batch_not_a_leak(note):
    signals = read_signals(build_context(text="", note=note))
    assert signals.larger_batch_fails_sooner, note
    causes = [c.id for c in analyze_inputs([], text="RuntimeError: CUDA out of memory.", note=note).causes]
    assert causes[0] == "batch_too_large", causes


def test_one_batch_failing_later_is_not_a_comparison():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="With batch size 16 it fails after 2000 iterations, every time."))
    assert not signals.larger_batch_fails_sooner


@pytest.mark.parametrize("note", [
    "Even this simple recommender with 2M user embeddings doesn't fit into GPU memory.",
    "The model would not fit into GPU memory on my card, whatever I try.",
    "It can't fit in GPU memory with the full vocabulary.",
])
def test_a_model_that_does_not_fit_into_gpu_memory_is_a_suspected_oom(note):
    report = analyze_inputs([], text="", note=note)
    assert report.suspected and report.causes, note


def test_fitting_a_curve_is_no_suspected_oom():
    report = analyze_inputs([], text="", note="The regression does not fit the data well; what loss should I use?")
    assert not report.causes


@pytest.mark.parametrize("note", [
    "I train with increase_seq_length_train = True and a factor of 2, and after many epochs it runs out of memory.",
    "The sequence length doubles every epoch in my curriculum and at epoch 6 CUDA runs out of memory.",
    "With progressive resizing the last stage at 512 px fails with out of memory.",
    "The trainer raises the crop size every stage, and by the third stage the GPU runs out of memory.",
])
def test_an_input_size_raised_on_a_schedule_is_the_input(note):
    signals = read_signals(build_context(text="", note=note))
    assert signals.length_schedule_grows, note
    causes = [c.id for c in analyze_inputs([], text="RuntimeError: CUDA out of memory.", note=note).causes]
    assert causes[0] == "input_size_too_large", causes


def test_a_learning_rate_that_increases_every_epoch_is_no_input_schedule():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="The learning rate increases every epoch during warmup; the input size is fixed at 224."))
    assert not signals.length_schedule_grows


@pytest.mark.parametrize("note", [
    "It crashes in the middle of training with the Trainer on my seq2seq data.",
    "Fine-tuning T5 fails at 1200/9000 steps with CUDA OOM.",
])
def test_a_failure_partway_through_training_is_read_as_later(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert signals.growth, note


def test_the_first_of_many_steps_is_no_later_failure():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note="It fails at 1/9000 steps, right away."))
    assert not signals.growth


@pytest.mark.parametrize("note", ["PaddleSeg's evaluation runs out of memory, training is fine.",
                                  "mmocr's test step fails with out of memory after training works."])
def test_a_toolkits_own_evaluation_already_runs_without_gradients(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert signals.managed_eval, note


@pytest.mark.parametrize("note", [
    "It ran fine at 512, but when I tried to increase the size of the images to 1024 it runs out of memory.",
    "Doubling the resolution of the input frames gives CUDA out of memory.",
    "With a larger image size (768 instead of 384) training fails at the first step.",
])
def test_a_larger_input_that_made_it_fail_is_the_input(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert signals.input_raised and not signals.growth, (signals.evidence, note)
    causes = [c.id for c in analyze_inputs([], text="RuntimeError: CUDA out of memory.", note=note).causes]
    assert causes[0] == "input_size_too_large", causes


def test_raising_the_batch_is_not_a_larger_input():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="When I increase the batch size to 64 it fails."))
    assert not signals.input_raised and signals.batch_raised


def test_memory_that_increases_is_still_growth():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="GPU memory increases every iteration until it fails."))
    assert signals.growth


@pytest.mark.parametrize("note", [
    "I already tried to set the batch size down to 4 without any improvement.",
    "Lowering the batch to 2, without success: still out of memory.",
])
def test_a_smaller_batch_without_improvement_did_not_help(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert signals.batch_no_help, note


@pytest.mark.parametrize("note", [
    "Batch size 4 with gradient_accumulation_steps=64 on my 8 GB card still runs out of memory.",
    "I set num_D_accumulations to 32 and the batch to 8; it still fails with CUDA out of memory.",
])
def test_accumulating_and_still_out_of_memory_is_the_models_states(note):
    causes = [c.id for c in analyze_inputs([], text="RuntimeError: CUDA out of memory.", note=note).causes]
    assert causes[0] == "model_too_large", causes


def test_accumulation_that_fits_is_no_evidence_for_the_model():
    report = analyze_inputs([], text="RuntimeError: CUDA out of memory.",
                            note="With gradient accumulation over 8 steps it works; at batch 64 without it, it fails.")
    assert not any("already accumulated" in e for c in report.causes for e in c.evidence)


@pytest.mark.parametrize(("text", "note"), [
    ("RuntimeError: CUDA out of memory. Tried to allocate 40.00 GiB (GPU 0; 23.65 GiB total capacity; 3.00 GiB already allocated; "
     "19.00 GiB free; 3.10 GiB reserved in total by PyTorch)",
     "A Conv3d on an input of shape (8, 16, 128, 256, 256) in half precision fails like this."),
    ("RuntimeError: CUDA out of memory. Tried to allocate 24.00 GiB (GPU 0; 15.78 GiB total capacity; 2.00 GiB already allocated; "
     "13.00 GiB free; 2.10 GiB reserved in total by PyTorch)",
     "conv_transpose2d on a float tensor of shape (16, 8, 512, 512) asks for this."),
])
def test_a_convolution_asking_many_times_its_tensor_is_the_workspace(text, note):
    causes = [c.id for c in analyze_inputs([], text=text, note=note).causes]
    assert causes[0] == "cudnn_or_workspace", causes


def test_a_convolution_asking_about_its_tensor_is_no_workspace():
    text = ("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 7.79 GiB total capacity; 5.00 GiB already allocated; "
            "1.00 GiB free; 5.10 GiB reserved in total by PyTorch)")
    report = analyze_inputs([], text=text, note="A Conv2d on a float input of shape (32, 64, 512, 512) fails.")
    assert report.causes[0].id != "cudnn_or_workspace", [c.id for c in report.causes]


@pytest.mark.parametrize("note", [
    "Out of VRAM on Windows with 16GB RAM and a 48GB card, no matter how small the batch size is.",
    "My PC has 8 GB RAM and a 24GB GPU; even with batch size 1 it fails loading, whatever the batch.",
    "12GB RAM beside a 24GB card: out of memory no matter what batch I pick.",
])
def test_less_ram_than_the_card_whatever_the_batch_is_the_host(note):
    causes = [c.id for c in analyze_inputs([], text="", note=note).causes]
    assert causes and causes[0] == "dataloader_or_host", causes


def test_more_ram_than_the_card_is_no_host_lead():
    report = analyze_inputs([], text="RuntimeError: CUDA out of memory.",
                            note="64GB RAM and an 8GB card; no matter how small the batch, it fails.")
    assert report.causes[0].id != "dataloader_or_host", [c.id for c in report.causes]


@pytest.mark.parametrize("note", [
    "When flash attention is uninstalled the 1.3b model tries to use 48 GB VRAM; with flash attention it uses 6.5 GB.",
    "Without xformers the same generation needs 22 GB and runs out of memory on my 12 GB card.",
    "With sdpa disabled it takes 30 GB at 1024 px.",
])
def test_memory_that_depends_on_the_attention_kernel_is_the_attention(note):
    signals = read_signals(build_context(text="torch.OutOfMemoryError: CUDA out of memory.", note=note))
    assert signals.attention_kernel_decides, note
    causes = [c.id for c in analyze_inputs([], text="torch.OutOfMemoryError: CUDA out of memory.", note=note).causes]
    assert causes[0] == "attention_quadratic", causes


def test_a_fused_kernel_named_is_no_kernel_that_decides():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="I use flash attention 2 and a 7B model in 16 GB; it fails at 8k tokens."))
    assert not signals.attention_kernel_decides


@pytest.mark.parametrize("note", [
    "The prefill runs out of memory at 32768 tokens; the peak grows 4x when the prompt length doubles.",
    "Memory use is quadratic in the sequence length, and at 20k tokens it fails.",
    "Peak memory looks like O(L^2): fine at 4k, out of memory at 16k.",
])
def test_memory_growing_with_the_square_of_the_length_is_the_attention(note):
    signals = read_signals(build_context(text="", note=note))
    assert signals.quadratic_in_length, note
    causes = [c.id for c in analyze_inputs([], text="RuntimeError: CUDA out of memory.", note=note).causes]
    assert causes[0] == "attention_quadratic", causes


def test_memory_growing_linearly_with_the_length_is_not_quadratic():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="The peak grows 2x when the prompt length doubles, linear in the tokens."))
    assert not signals.quadratic_in_length


@pytest.mark.parametrize("note", ["The max batch size per GPU is 2 on my 1080 Ti, not 4 as in the README.",
                                  "The largest batch I can fit is 6 on this card."])
def test_the_largest_batch_that_fits_is_a_suspected_oom(note):
    report = analyze_inputs([], text="", note=note)
    assert report.suspected and report.causes, note


@pytest.mark.parametrize("note", [
    "LoRA fine-tuning of a 70B model in bf16 on 2 A100 80GB with DDP runs out of memory at micro batch 1.",
    "Adapter training of falcon-40b in bf16 fails on one A100 80GB, and on 4 of them too.",
])
def test_frozen_weights_larger_than_one_card_are_the_model_on_several_gpus_too(note):
    causes = [c.id for c in analyze_inputs([], text="torch.cuda.OutOfMemoryError: CUDA out of memory.", note=note).causes]
    assert causes[0] == "model_too_large", causes


@pytest.mark.parametrize("note", [
    "Full fine-tuning of Llama-2-7b fails on 16GB GPUs. How do I set QLoRA with 4-bit NF4 to reduce memory?",
    "Training a 7B model fails on my 16 GB card; I want to try 8-bit loading next.",
])
def test_a_precision_asked_about_is_not_the_runs(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert signals.weight_bytes not in (0.5, 1.0) and not signals.quantized_weights, (signals.weight_bytes, note)


def test_a_precision_in_use_is_still_read():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="QLoRA with 4-bit NF4 on a 13B model fails on my 12 GB card."))
    assert signals.weight_bytes == 0.5


@pytest.mark.parametrize("note", [
    "The jax + torch tutorial notebook sets XLA_PYTHON_CLIENT_ALLOCATOR=platform; without it the notebook hits CUDA OOM.",
    "My PyTorch training uses a JAX data augmentation step and runs out of memory; XLA_PYTHON_CLIENT_PREALLOCATE is not set.",
])
def test_jax_beside_torch_in_one_program_is_its_preallocation(note):
    causes = [c.id for c in analyze_inputs([], text="", note=note).causes]
    assert causes and causes[0] == "other_process_or_device", causes


@pytest.mark.parametrize("note", [
    "Inference on a 12GB GPU always reports not enough CUDA memory. Should I use smaller resized pictures?",
    "Predicting on my scans fails with OOM; can I feed smaller crops instead?",
])
def test_a_note_asking_about_smaller_inputs_points_at_the_input(note):
    causes = [c.id for c in analyze_inputs([], text="", note=note).causes]
    assert causes and causes[0] == "input_size_too_large", causes


@pytest.mark.parametrize("note", ["At inference the 80G GPU runs out; my input image shape is (750, 1000).",
                                  "Test image size [1, 2048, 1536] gives CUDA out of memory."])
def test_an_image_shape_written_as_a_tuple_is_its_size(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert signals.long_input, note


def test_a_small_image_shape_is_not_a_large_input():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="My input image shape is (224, 224) and the batch is 512."))
    assert not signals.long_input


@pytest.mark.parametrize("note", [
    "validation_step returns a dict and my callbacks log the validation outputs to an external service; memory keeps growing.",
    "Metrics go to a logging service after each validation batch, and the GPU memory climbs until it fails.",
])
def test_a_logging_service_is_not_serving_a_model(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert signals.phase != "generation", signals.phase_source


def test_a_model_service_is_still_serving():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="Our inference service runs out of memory after a few hundred requests."))
    assert signals.phase == "generation", signals.phase_source


@pytest.mark.parametrize("note", [
    "At 512x512 with batch 16 training memory is constant, but in the validation stage I go through the first ~100 "
    "steps without an issue, then it spikes and OOMs.",
    "The memory stays flat during training; during evaluation it fails with OOM.",
])
def test_memory_that_stays_constant_is_the_phase_that_went_well(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert signals.phase == "evaluation", signals.phase_source


@pytest.mark.parametrize(("note", "windows"), [
    ("Out of VRAM on Windows with 16GB RAM and a 48GB card.", True),
    ("Windows 11, 12GB RAM, a 24GB card.", True),
    ("Sliding windows of 512 tokens over a 16k document.", False),
    ("Under WSL (Windows Subsystem for Linux) it fails.", False),
])
def test_windows_is_the_operating_system_not_a_window(note, windows):
    assert read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note)).windows is windows


def test_the_page_file_lead_is_stronger_on_windows():
    def host_score(note):
        return next(c.score for c in analyze_inputs([], text="", note=note).causes if c.id == "dataloader_or_host")
    assert host_score("On Windows, 16GB RAM and a 48GB card: out of VRAM no matter how small the batch.") > \
        host_score("16GB RAM and a 48GB card: out of VRAM no matter how small the batch.")


# --- set 188 (nineteenth round) -------------------------------------------------------------------

@pytest.mark.parametrize("note", [
    "Our embedding job reports its stack (torch 2.1.0, transformers 4.35.2, sentence-transformers 2.2.2) and runs out of memory.",
    "Using transformers 4.30.0 with sentence-transformers 2.2.0, the GPU fills up.",
])
def test_a_hyphenated_library_is_not_the_library_inside_its_name(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert not signals.upgrade_regression, signals.evidence.get("upgrade_regression")


def test_two_builds_of_one_library_are_still_compared():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="With transformers 4.30.0 it fits, with transformers 4.36.0 it runs out of memory."))
    assert signals.upgrade_regression


@pytest.mark.parametrize("note", [
    "The loop over my documents runs out of CUDA memory after 10-20 iterations.",
    "It dies after 5 to 8 iterations of the scoring loop.",
    "After 3 – 4 steps the card is full.",
])
def test_a_range_of_iterations_before_the_failure_is_growth(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert signals.growth, note


@pytest.mark.parametrize(("note", "long"), [
    ("I preallocate the results with torch.empty(size=(50000, 1024)).cuda() and fill it row by row.", False),
    ("out = torch.zeros(size=(4096, 4096), device='cuda')", False),
    ("My input size is (2048, 1536) and it fails at inference.", True),
])
def test_a_shape_passed_to_a_tensor_constructor_is_not_an_input_size(note, long):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert signals.long_input is long, note


@pytest.mark.parametrize("note", [
    "Sampling with --video_length 48 on a 24 GB card runs out of memory.",
    "With num_frames=64 the text-to-video pipeline fails; how do I run it?",
    "I set n_frames: 120 for the clip and inference OOMs on a 4090.",
])
def test_a_frame_count_of_dozens_is_a_long_input(note):
    causes = [c.id for c in analyze_inputs([], text="RuntimeError: CUDA out of memory.", note=note).causes]
    assert causes and causes[0] == "input_size_too_large", causes


def test_a_short_clip_length_is_not_a_long_input():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="Training the video classifier with num_frames=16 and batch 64 runs out of memory."))
    assert not signals.long_input


@pytest.mark.parametrize("note", [
    "On my 11 GB card it runs out of memory in the matcher.",
    "With a 16GB GPU it runs into OOM at the first image.",
])
def test_a_card_that_runs_out_is_not_a_card_that_fits(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.", note=note))
    assert not signals.larger_card_fits, signals.evidence.get("larger_card_fits")


def test_a_larger_card_that_runs_still_fits():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="It runs out of memory on my laptop; on a 24 GB card it runs fine."))
    assert signals.larger_card_fits


@pytest.mark.parametrize("note", [
    "The matcher runs out of CUDA memory on an 11 GB card. Is there a way to cut memory other than reducing the image size?",
    "Dense matching OOMs in the correlation step; any trick besides lowering the resolution?",
    "Is there any option apart from downscaling the frames? The flow model is out of memory.",
])
def test_a_note_asking_for_a_way_beside_a_smaller_input_points_at_the_input(note):
    causes = [c.id for c in analyze_inputs([], text="", note=note).causes]
    assert causes and causes[0] == "input_size_too_large", causes


@pytest.mark.parametrize("note", [
    "Computing text embeddings for my corpus with model.encode, the VRAM usage keeps growing until CUDA out of memory.",
    "I'm extracting image features of all the images in the folder; GPU memory climbs batch after batch and it fails.",
    "Encoding the whole dataset of sentences, memory grows over time until it crashes.",
])
def test_results_computed_for_every_item_while_memory_grows_are_kept_results(note):
    causes = [c.id for c in analyze_inputs([], text="CUDA out of memory", note=note).causes]
    assert causes and causes[0] == "reference_leak", causes


def test_bulk_results_in_training_are_not_the_bulk_rule():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory.",
                                         note="Training on my corpus of sentences, memory grows every epoch."))
    assert not signals.bulk_outputs


@pytest.mark.parametrize("note", [
    "GPU memory keeps increasing as the tracker runs. I installed a newer PyTorch than the one the repository was written for.",
    "Memory climbs over time. The README requires torch 0.4.1 but I use 1.13.",
    "I am on a more recent version of torch than the project's requirements.txt asks for, and memory leaks each frame.",
])
def test_code_run_on_another_release_than_it_was_written_for_is_a_version_change(note):
    causes = [c.id for c in analyze_inputs([], text="CUDA out of memory", note=note).causes]
    assert causes and causes[0] == "framework_bug", causes


@pytest.mark.parametrize("note", [
    "Training a model larger than one GPU with ZeRO stage 3 and CPU offload; deepspeed.initialize runs out of memory at self.module.to(self.device).",
    "With ZeRO-3 the engine moves the whole model to the GPU during initialize and it runs out of memory there.",
    "FSDP full sharding: the strategy moved the entire model onto the device before wrapping and OOMed.",
])
def test_the_wrapper_moving_the_whole_model_under_full_sharding_is_replication(note):
    causes = [c.id for c in analyze_inputs([], text="", note=note).causes]
    assert causes and causes[0] == "distributed_replication", causes


def test_a_module_moved_without_full_sharding_is_not_the_sharding_rule():
    causes = [c.id for c in analyze_inputs([], text="", note="Plain single-GPU training runs out of memory at self.module.to(self.device).").causes]
    assert "distributed_replication" not in causes[:1], causes


PAIRWISE_TRACE = '''Traceback (most recent call last):
  File "/home/me/retrieval/match.py", line 57, in find_pairs
    {code}
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 96.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 20.10 GiB is free. Of the allocated memory 1.20 GiB is allocated by PyTorch, and 20.00 MiB is reserved by PyTorch but unallocated.'''


@pytest.mark.parametrize("code", [
    "scores = torch.einsum('nd,md->nm', queries, gallery)",
    "dist = torch.cdist(features_a, features_b)",
    "sims = q_emb @ db_emb.T",
    "s = torch.mm(left, right.t())",
])
def test_a_matrix_of_every_pair_of_two_collections_is_the_input_size(code):
    causes = [c.id for c in analyze_inputs([], text=PAIRWISE_TRACE.format(code=code),
                                            note="Matching every query against a database of 200,000 images.").causes]
    assert causes and causes[0] == "input_size_too_large", causes


@pytest.mark.parametrize("code", [
    "attn = torch.einsum('bhid,bhjd->bhij', q, k)",
    "y = torch.einsum('ij,jk->ik', a, b)",
    "probs = torch.softmax(q @ k.T, dim=-1)",
])
def test_other_products_are_not_the_pairwise_matrix_rule(code):
    from oomtriage.engine.rules.code import pairwise_matrix_line
    assert not pairwise_matrix_line(code)


@pytest.mark.parametrize("note", ["The job OOMed at step 3.", "Training keeps OOMing on the first batch.", "It OOM'd right away."])
def test_a_note_that_says_it_oomed_is_a_suspected_oom(note):
    report = analyze_inputs([], text="", note=note)
    assert report.suspected and report.causes, note


# --- set 190 (twentieth round): a tensor built afresh from data, replay memories --------------------------------

@pytest.mark.parametrize("code", ["state = torch.tensor(state).cuda()", "obs = torch.as_tensor(obs, device='cuda')",
                                  "memory = torch.from_numpy(memory).to(device)", "hidden = np.asarray(hidden)"])
def test_a_tensor_built_afresh_from_data_carries_no_graph(code):
    # torch.tensor / as_tensor / from_numpy copy or wrap values: the new tensor has no history to chain
    assert not _signals(f"every step I do {code} before the forward pass; memory grows until it fails").state_carried


@pytest.mark.parametrize("note", [
    "GPU memory goes up every episode. In the agent I convert each transition with state = torch.tensor(state).cuda() "
    "and then self.buffer.append((state, action, reward, next_state)).",
    "Each step the agent does obs = torch.as_tensor(obs, device='cuda') and pushes it into its replay memory; usage climbs "
    "steadily until CUDA runs out.",
])
def test_transitions_kept_on_the_gpu_are_kept_references_not_a_carried_graph(note):
    causes = ids("RuntimeError: CUDA error: out of memory", note)
    assert causes[0] == "reference_leak", causes


# --- set 191: a downsample factor that fits, a shared workstation, fit() handed its validation data ------------

@pytest.mark.parametrize("note", [
    "Training on my scene runs out of memory, but the code works well with factor=8.",
    "It runs fine at img_size 320; at the default it dies.",
    "With downscale_factor=4 it trains, the full-resolution images do not fit.",
    "Everything fits when setting downsample to 2.",
])
def test_a_smaller_input_that_fits_in_either_order(note):
    assert _signals(note).smaller_input_fits, note


@pytest.mark.parametrize("note", [
    "It doesn't work with resolution 512 either.",
    "The growth factor of the scheduler is 2 and training works.",
    "The model works well with 8 GPUs.",
])
def test_no_smaller_input_read_where_none_fits(note):
    assert not _signals(note).smaller_input_fits, note


@pytest.mark.parametrize("note", [
    "Our lab's server has 8 GPUs, of which two are usually in use by other projects; my job fails when it starts.",
    "The workstation has four cards and one of them is always busy, so I pick the others, yet DDP dies at init.",
    "We share 6 devices of which only 1 is currently occupied.",
])
def test_a_shared_workstation_with_busy_cards_is_another_process(note):
    assert _signals(note).other_process_hint, note
    assert ids("RuntimeError: CUDA error: out of memory", note)[0] == "other_process_or_device"


def test_no_busy_card_read_from_free_cards():
    assert not _signals("The server has 4 GPUs of which all are free and idle.").other_process_hint


@pytest.mark.parametrize("code", ["trainer.fit(model, train_data, val_data)", "train(model, train_loader, val_loader)",
                                  "history = model.fit(x, y, validation_data=(x_val_set, y_val_set))"])
def test_a_training_call_handed_its_validation_data_is_training(code):
    text = trace("main", code, "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB")
    assert _signals("", text).phase == "training", code


def test_a_forward_on_validation_inputs_is_still_evaluation():
    text = trace("main", "outputs = model(x_val)", "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB")
    assert _signals("", text).phase == "evaluation"


# --- set 192: Chinese "内存" beside a device OOM, a build that did better ---------------------------------------

@pytest.mark.parametrize("note", ["显示内存不够，想把batch size改小一些但是找不到在哪里。", "训练的时候内存不足，怎么办？"])
def test_the_loose_chinese_word_for_memory_restates_a_device_oom(note):
    # "内存" (RAM) is used loosely for the card's memory; CUDA's own message says which ran out
    causes = ids("RuntimeError: CUDA error: out of memory", note)
    assert causes and causes[0] != "dataloader_or_host", causes


@pytest.mark.parametrize("note", ["系统内存不够，训练进程被杀", "内存一直在增长，最后程序崩溃，显存正常"])
def test_chinese_ram_named_as_the_host_or_beside_gpu_memory_is_the_host(note):
    assert ids("RuntimeError: CUDA error: out of memory", note)[0] == "dataloader_or_host"


@pytest.mark.parametrize("note", ["It was significantly better on 2.3.1; on 2.6 the same module fails.",
                                  "Peak memory was much lower with torch 2.1.0, now it OOMs.",
                                  "The same script ran fine with v0.4.2 of the library."])
def test_a_build_that_did_better_is_a_version_change(note):
    assert _signals(note).upgrade_regression, note


# --- what counts against a cause is shown apart from what supports it ---------------------------

def test_combine_keeps_the_texts_against_a_cause_apart_from_its_evidence():
    from oomtriage.engine import combine
    from oomtriage.engine.rules import Vote
    scores = combine([Vote("batch_too_large", 0.6, "for it"), Vote("batch_too_large", -0.5, "against it"),
                      Vote("fragmentation", -0.3, "only against")])
    score, evidence, against = scores["batch_too_large"]
    assert (evidence, against) == (["for it"], ["against it"])
    assert score == pytest.approx(0.3)
    assert scores["fragmentation"] == (0.0, [], ["only against"])


@pytest.mark.parametrize("note", ["a smaller batch made no difference, it still runs out",
                                  "reducing the batch size did not help at all"])
def test_a_reason_that_lowers_a_cause_is_listed_against_it_not_as_its_evidence(note):
    from oomtriage.render import to_markdown
    report = analyze_inputs([], text="RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB", note=note)
    batch = next(cause for cause in report.causes if cause.id == "batch_too_large")
    assert any(item.startswith("A smaller batch did not help") for item in batch.counter_evidence)
    assert not any("smaller batch did not help" in item for item in batch.evidence)
    assert "- against: A smaller batch did not help" in to_markdown(report)


# --- which GPU: separate programs on the first card, a card other than the one meant -------------

@pytest.mark.parametrize("note", [
    "I start 4 training scripts, each one on a specific GPU with torch.device(f'cuda:{k}'), and GPU 0 holds memory of every one of them",
    "two independent runs with their own GPU each, yet the first GPU gets more memory than the others and the second run fails",
])
def test_separate_programs_that_all_touch_the_first_gpu_leave_their_context_there(note):
    assert _signals(note).separate_programs
    ranking = ids("RuntimeError: CUDA error: out of memory", note)
    assert ranking[0] == "other_process_or_device"
    assert "set_device" in evidence_of("RuntimeError: CUDA error: out of memory", note, "other_process_or_device")


def test_the_ranks_of_one_job_on_the_first_gpu_stay_a_replication():
    note = "DDP with torchrun: 4 ranks, each on a specific GPU, and GPU 0 holds memory of every rank"
    assert ids("RuntimeError: CUDA error: out of memory", note)[0] == "distributed_replication"


@pytest.mark.parametrize("note", ["the 0 GPU gets much more memory than others", "in multi-GPU training the 0th card fills up"])
def test_the_zeroth_gpu_said_number_first_is_one_gpu_heavier(note):
    assert _signals(note).rank0_heavy


@pytest.mark.parametrize("note", [
    "My laptop lists an integrated GPU as GPU 0; what I want is to use my GPU 1, the RTX card",
    "how do I run it on the second GPU? It always picks the first",
    "Is there any option I can pass to select my cuda:1 device?",
    "it runs on the Intel graphics instead of the NVIDIA card",
    "model.cuda()\nshould be model.cuda(args.gpu)?",
])
def test_a_gpu_other_than_the_one_that_failed_was_meant(note):
    assert _signals(note).other_gpu_wanted, note
    assert ids("RuntimeError: CUDA out of memory. Tried to allocate 80.00 MiB (GPU 0; 1.95 GiB total capacity; "
               "1.20 GiB already allocated; 60.00 MiB free; 30.00 MiB cached)", note)[0] == "other_process_or_device"


@pytest.mark.parametrize("note", ["I don't want to use GPU 1, it is busy", "I used GPU 1 before and it worked"])
def test_a_card_not_wanted_or_only_mentioned_is_no_wish_for_it(note):
    assert not _signals(note).other_gpu_wanted


def test_the_size_of_the_card_meant_is_not_a_runtime_limit_of_the_card_that_failed():
    text = ("RuntimeError: CUDA out of memory. Tried to allocate 80.00 MiB (GPU 0; 1.95 GiB total capacity; "
            "1.20 GiB already allocated; 60.00 MiB free; 30.00 MiB cached)")
    note = "how can I use my GPU 1? It is a GTX card with 8GB"
    assert "the build or driver sees only part of it" not in " ".join(" ".join(cause.evidence) for cause in ranked(text, note))
    assert "the build or driver sees only part of it" in evidence_of(text, "my GTX 1080 has 8GB of memory", "framework_bug")


@pytest.mark.parametrize("note", ["if torch.cuda.is_available():\n    x = x.cuda()", "if not torch.cuda.is_available(): device = 'cpu'"])
def test_a_device_query_as_the_guard_of_pasted_code_is_no_failing_call(note):
    assert not _signals(note).device_query_fails
    assert _signals("torch.cuda.is_available() itself reports out of memory").device_query_fails


# --- a conv frame: its workspace, or only the next activation -----------------------------------

CONV_TRACE = '''Traceback (most recent call last):
  File "train.py", line 12, in <module>
    y = net(x)
  File "/usr/lib/python3.10/site-packages/torch/nn/modules/conv.py", line 456, in _conv_forward
    return F.conv2d(input, weight, bias, self.stride, self.padding)
'''


def test_a_small_request_from_a_convolution_into_a_full_card_is_an_activation_not_a_workspace():
    full = CONV_TRACE + ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 100.00 MiB. GPU 0 has a total capacity of "
                         "7.79 GiB of which 40.00 MiB is free. Of the allocated memory 6.90 GiB is allocated by PyTorch, and "
                         "120.00 MiB is reserved by PyTorch but unallocated.")
    assert "cuDNN's algorithms take a workspace" not in " ".join(" ".join(cause.evidence) for cause in ranked(full))
    assert ids(full)[0] != "cudnn_or_workspace"
    roomy = CONV_TRACE + ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of "
                          "7.79 GiB of which 2.00 GiB is free. Of the allocated memory 2.50 GiB is allocated by PyTorch, and "
                          "120.00 MiB is reserved by PyTorch but unallocated.")
    assert "cuDNN's algorithms take a workspace" in evidence_of(roomy, None, "cudnn_or_workspace")


# --- a note that says the memory ran away, in looser words --------------------------------------

@pytest.mark.parametrize("note", ["during validation the GPU memory explode after a few batches",
                                  "the cpu ram keep increasing every epoch",
                                  "it eats memory until out of my 32G ram"])
def test_loose_words_for_memory_running_away_rank_a_suspected_oom(note):
    report = analyze_inputs([], text="", note=note)
    assert report.suspected and not report.detected and report.causes


def test_a_request_retyped_as_trying_to_allocate_is_read():
    report = analyze_inputs([], text="CUDA out of memory when trying to allocate 16 EiB")
    assert report.error.requested_bytes == 16 * 1024**6
    assert report.causes[0].id == "framework_bug"


@pytest.mark.parametrize("note", ["the process takes twice as much RAM when num_workers is 4 as with 0, until it runs out of RAM",
                                  "with num_workers=0 it works, with 8 workers the memory keeps growing until it dies",
                                  "host memory grows with the number of workers"])
def test_memory_that_follows_the_dataloader_workers_is_host_memory(note):
    assert _signals(note).memory_follows_workers
    assert ids("", note)[0] == "dataloader_or_host"
    assert "The memory follows the number of worker processes" in against_of("", note, "graph_retained")


def test_workers_set_to_zero_that_still_fail_do_not_follow_the_workers():
    assert not _signals("with num_workers=0 it still fails after 300 steps").memory_follows_workers


# --- kept outputs, growth and failure in more of the words users type ---------------------------

@pytest.mark.parametrize("note", ["the forward hook does self.features.append(out) for every image",
                                  "activations and gradients are getting accumulated in cuda memory by the hook",
                                  "I cannot get the outputs of the encoder to leave the GPU"])
def test_outputs_appended_or_stuck_on_the_device_are_kept_references(note):
    assert _signals(note).outputs_kept, note
    assert ids("RuntimeError: CUDA out of memory.", note + ", and memory grows every batch")[0] == "reference_leak"


@pytest.mark.parametrize("note", ["memory keeps piling up with every call", "the RAM is piling up after each loop"])
def test_memory_piling_up_is_growth(note):
    assert _signals(note).growth


@pytest.mark.parametrize("note", ["after a while the memory overflows", "the GPU memory overflowed at the third image"])
def test_memory_that_overflows_is_a_run_that_died(note):
    report = analyze_inputs([], text="", note=note)
    assert report.suspected and report.causes


def test_an_idle_cache_that_alone_held_the_request_outranks_the_size_of_the_tensor():
    text = sentence(req="4.00 GiB", total="15.75 GiB", free="1.00 GiB", alloc="8.00 GiB", unalloc="6.00 GiB")
    note = "it fails on a long input"
    assert ids(text, note)[0] == "fragmentation"
    assert "in pieces" in against_of(text, note, "input_size_too_large")
    # a cache that is a sliver of the card does not decide it, however it compares with the request
    small = sentence(req="300.00 MiB", total="23.65 GiB", free="100.00 MiB", alloc="22.00 GiB", unalloc="400.00 MiB")
    assert "in pieces" not in " ".join(" ".join(cause.counter_evidence) for cause in ranked(small, note))


@pytest.mark.parametrize("note", ["it runs out because the chunks are too long", "my segments are way too long for the model"])
def test_pieces_of_the_input_said_too_long_are_a_long_input(note):
    assert _signals(note).long_input


@pytest.mark.parametrize("note", ["when I load the trained model the memory surges to about double",
                                  "there is a surge in GPU memory when the checkpoint is loaded"])
def test_a_memory_surge_while_loading_is_ranked(note):
    report = analyze_inputs([], text="", note=note)
    assert report.suspected and report.causes[0].id == "checkpoint_loading"


@pytest.mark.parametrize("note", ["gradient checkpointing is never enabled on the transformers path, so training runs out of memory",
                                  "the --offload_optimizer flag is silently ignored by the launcher and it OOMs",
                                  "fails with OOM: the config's bf16 option is ignored and the model loads in fp32"])
def test_a_saving_option_the_code_never_applies_is_a_library_bug(note):
    assert _signals(note).saving_option_dropped, note
    assert ids("", note)[0] == "framework_bug"


def test_a_saving_option_that_helped_too_little_is_not_dropped():
    assert not _signals("gradient checkpointing is enabled but it still runs out of memory").saving_option_dropped


@pytest.mark.parametrize("note", ["after a change in one of our dependencies the compiled graphs grew and it now runs out of memory",
                                  "some graph breaks in our dependencies were removed, and now it OOMs"])
def test_a_dependency_that_changed_under_the_code_is_a_version_change(note):
    assert _signals(note).upgrade_regression


# --- a run started from a checkpoint that fails only on several GPUs -----------------------------

DDP_STEP = '''Traceback (most recent call last):
  File "fit.py", line 120, in step
    out = model(batch)
  File "/usr/lib/python3/site-packages/torch/nn/parallel/distributed.py", line 1500, in forward
    return self.module(*inputs, **kwargs)
''' + "RuntimeError: CUDA out of memory. Tried to allocate 64.00 MiB (GPU 0; 11.00 GiB total capacity; 10.10 GiB already allocated; 30.00 MiB free; 10.30 GiB reserved in total by PyTorch)"


@pytest.mark.parametrize("note", [
    "Fine-tuning from my checkpoint: with one GPU, torchrun --nproc_per_node=1 fit.py --init weights/last.pth works. "
    "With 2 GPUs, same command, I get out of memory.",
    "I continue training from a saved snapshot. On a single GPU it runs fine; on 4 GPUs it crashes with OOM on GPU 0.",
    "Starting from the pretrained checkpoint on 8 GPUs fails with CUDA OOM, while with a single GPU I can train it.",
])
def test_a_checkpoint_each_rank_restores_onto_the_first_gpu(note):
    # (where the note makes the phase "loading", the loading rule may put the ranks' replication
    # first: the same copies on cuda:0, both causes lead)
    assert {"checkpoint_loading", "distributed_replication"} <= set(ids(DDP_STEP, note)[:2])
    assert "torch.load" in evidence_of(DDP_STEP, note, "checkpoint_loading")


def test_a_training_step_after_a_multi_gpu_resume_blames_the_load_first():
    note = "Fine-tuning from my checkpoint: with one GPU, torchrun --nproc_per_node=1 fit.py --init weights/last.pth works. With 2 GPUs, same command, I get out of memory."
    assert ids(DDP_STEP, note)[0] == "checkpoint_loading"


@pytest.mark.parametrize("note", [
    "with a single GPU, python train.py --batch 8 works",
    "On one GPU I can train it without problems.",
    "with 4 GPUs I run into CUDA out of memory",
    "using multiple GPUs it fails with an OOM",
])
def test_only_the_multi_gpu_run_failing_is_read_in_either_order(note):
    assert _signals(note).only_multi_gpu


@pytest.mark.parametrize("note", [
    "training starting from a specific checkpoint",
    "I continue from my last snapshot",
    "python train.py --ckpt runs/step_9000.pt",
    "--load-weights=out/model.safetensors",
])
def test_a_run_started_from_saved_state(note):
    assert _signals(note).loads_saved_state


def test_a_checkpoint_and_one_gpu_alone_is_not_the_multi_gpu_load():
    note = "Starting from a saved checkpoint on my single GPU it runs out of memory."
    assert not _signals(note).only_multi_gpu
    assert "fails only on several GPUs" not in " ".join(e for c in ranked(DDP_STEP, note) for e in c.evidence)


# --- the loading named as a stage; the idle cache it leaves --------------------------------------

@pytest.mark.parametrize("note", [
    "It runs out of memory during the model loading phase.",
    "The OOM happens at the weights-load step, before any inference.",
    "it crashes in the loading stage of the pipeline",
    "fails while in the load phase",
])
def test_the_loading_named_as_a_stage_is_the_loading_phase(note):
    assert _signals(note).phase == "loading"


def test_an_idle_cache_while_loading_is_the_loaders_copies():
    text = sentence(req="1.00 GiB", total="23.65 GiB", free="300.00 MiB", alloc="14.00 GiB", unalloc="8.00 GiB")
    loading_note = "The OOM happens during the model loading phase, far above what the model itself needs."
    assert ids(text, loading_note)[0] == "checkpoint_loading"
    assert "map_location" in evidence_of(text, loading_note, "checkpoint_loading")
    # the same figures in a training step stay fragmentation
    assert ids(text, "It runs out of memory after a few hundred training steps.")[0] == "fragmentation"


# --- gradients that carry the graph of their own computation --------------------------------------

GRAD_PENALTY_STEP = trace("train_step", "grads = torch.autograd.grad(outputs=d_out.sum(), inputs=x, create_graph=True)")


@pytest.mark.parametrize("note", [
    "Memory keeps increasing every iteration until it runs out after about 300 steps.",
    "GPU usage grows slowly each step and then the job dies with OOM.",
    "There is a steady increase in memory over training; it is a leak in torch.autograd.grad, I think.",
])
def test_gradients_built_with_create_graph_that_grow_keep_a_graph_per_step(note):
    assert _signals(note, GRAD_PENALTY_STEP).graph_of_gradients
    assert ids(GRAD_PENALTY_STEP, note)[0] == "graph_retained"
    assert "create_graph=True" in evidence_of(GRAD_PENALTY_STEP, note, "graph_retained")


def test_a_leak_put_in_autograd_is_not_a_library_component_leak():
    assert not _signals("It looks like a memory leak in torch.autograd.grad.").library_part_isolated
    assert not _signals("torch.autograd.grad seems to leak memory").library_part_isolated
    # a layer of the library is still one
    assert _signals("There is a memory leak in nn.Embedding on this version.").library_part_isolated
    assert _signals("I believe there is a leak in pytorch itself").library_part_isolated


def test_create_graph_without_growth_is_not_the_retained_graph():
    note = "It runs out of memory at the very first step."
    assert "graph_retained" not in ids(GRAD_PENALTY_STEP, note)[:1]


# --- a generator run to make images -------------------------------------------------------------

GENERATOR_MSG = sentence(req="294.00 MiB", total="15.90 GiB", free="259.75 MiB", alloc="14.58 GiB", unalloc="190.00 MiB")


@pytest.mark.parametrize("note", [
    "I want images from a 18x512 latent vector: img = g(codes). It runs out of memory.",
    "I sample 64 faces from my trained DCGAN generator and it crashes with OOM",
    "Generating pictures with the pretrained StyleGAN2 weights dies with CUDA out of memory.",
    "Feeding random latent codes to my VAE decoder to generate images runs out of memory.",
])
def test_a_generator_run_to_make_images_keeps_its_graph_without_no_grad(note):
    signals = _signals(note, GENERATOR_MSG)
    assert signals.image_generator_inference and signals.phase == "evaluation"
    assert "diffusion" not in signals.domains
    assert ids(GENERATOR_MSG, note)[0] == "missing_no_grad"
    assert "kv_cache_or_generation" not in ids(GENERATOR_MSG, note)[:3]


def test_a_generator_under_no_grad_or_in_training_is_not_the_missing_no_grad():
    under = "Sampling images from the StyleGAN generator under torch.no_grad() still runs out of memory"
    assert _signals(under, GENERATOR_MSG).no_grad_already
    assert "missing_no_grad" not in ids(GENERATOR_MSG, under)[:2]
    training = "Training my GAN: generating the fake batch for the discriminator runs out of memory"
    assert not _signals(training, GENERATOR_MSG).image_generator_inference
    assert _signals(training, GENERATOR_MSG).phase == "training"


def test_a_diffusion_model_fed_latents_stays_a_diffusion_model():
    note = "Generating images from latents with Stable Diffusion runs out of memory at 1024px"
    signals = _signals(note, GENERATOR_MSG)
    assert "diffusion" in signals.domains and not signals.image_generator_inference


@pytest.mark.parametrize("note", ["It runs out of memory at test time.", "The OOM comes during testing.",
                                  "test-time augmentation with 8 flips runs out of memory"])
def test_test_time_is_the_evaluation_phase(note):
    assert _signals(note).phase == "evaluation"


def test_a_question_about_no_grad_is_not_no_grad_in_use():
    assert not _signals("Should I run it under no_grad? It goes out of memory in evaluation.").no_grad_already
    assert _signals("The evaluation already runs under torch.no_grad() and still goes OOM.").no_grad_already


# --- a diffusion pipeline on a small card --------------------------------------------------------

ALLOCATION_ON_DEVICE = "torch.OutOfMemoryError: Allocation on device"


@pytest.mark.parametrize("note", [
    "Please add a low VRAM mode: on my 8GB card the diffusers outpaint pipeline fails.",
    "Running the Stable Diffusion inpainting pipeline: my GPU has 6 GB and it dies at once.",
    "img2img with diffusers on an RTX 3060 Ti runs out of memory",
    "What is the minimum VRAM for this diffusion pipeline? My 4 GB laptop card gives OOM.",
])
def test_a_diffusion_pipeline_on_a_small_card_is_its_resident_weights_first(note):
    assert ids(ALLOCATION_ON_DEVICE, note)[0] == "model_too_large"
    assert "enable_model_cpu_offload" in evidence_of(ALLOCATION_ON_DEVICE, note, "model_too_large")


def test_a_diffusion_pipeline_on_a_large_card_or_a_huge_image_is_not_the_weights_first():
    large_card = "Generating images with the diffusers pipeline on my 24GB card runs out of memory"
    assert ids(ALLOCATION_ON_DEVICE, large_card)[0] == "attention_quadratic"
    huge_image = "Upscaling a 4096x4096 image with the diffusion upscaler on my 8GB card runs out of memory"
    assert ids(ALLOCATION_ON_DEVICE, huge_image)[0] != "model_too_large"


@pytest.mark.parametrize("note, expected", [
    ("my GPU has 8GB", 8 * 10**9), ("the card has only 6 GB, and it fails", 6 * 10**9),
    ("my card is 12GB", 12 * 10**9), ("the GPU has 8GB free", None),
])
def test_the_card_size_said_as_what_the_card_has(note, expected):
    assert _signals(note).note_gpu_capacity == expected


@pytest.mark.parametrize("note", ["Please add a low-vram option", "How much VRAM does this need?",
                                  "what are the VRAM requirements", "I run it with --lowvram"])
def test_a_small_card_mode_asked_about(note):
    assert _signals(note).memory_requirement_asked


# --- a device context that cannot be made on a shared machine ----------------------------------------

JAVA_CONTEXT_FAILURE = """Exception in thread "main" jcuda.CudaException: CUDA_ERROR_OUT_OF_MEMORY
    at jcuda.driver.JCudaDriver.checkResult(JCudaDriver.java:330)
    at jcuda.driver.JCudaDriver.cuCtxCreate(JCudaDriver.java:1500)
    at org.example.gpu.Device.<init>(Device.java:40)"""


@pytest.mark.parametrize("note", [
    "Running our solver on gpu-node3 of the cluster fails straight away.",
    "This is on the shared server of our lab; the script only lists the GPUs.",
    "On the university cluster under slurm it fails when the GPU is opened.",
])
def test_a_context_that_cannot_be_made_on_a_shared_machine_is_another_process(note):
    signals = _signals(note, JAVA_CONTEXT_FAILURE)
    assert signals.device_query_fails and signals.shared_machine
    assert ids(JAVA_CONTEXT_FAILURE, note)[0] == "other_process_or_device"


def test_a_driver_call_is_read_from_a_native_stack_not_from_prose():
    assert _signals("It fails when it starts.", JAVA_CONTEXT_FAILURE).device_query_fails
    prose = "CUDA_ERROR_OUT_OF_MEMORY\nI read that cuCtxCreate can fail like this."
    assert not _signals("It fails when it starts.", prose).device_query_fails


@pytest.mark.parametrize("note", ["I run it on my desktop at home.", "A laptop with one GPU."])
def test_a_machine_of_ones_own_is_not_a_shared_one(note):
    assert not _signals(note).shared_machine


# --- a segmentation network at a batch of one on a small card --------------------------------------

@pytest.mark.parametrize("note", [
    "Training SegNet on my 4GB GTX 980 fails right away, even with batch size 1.",
    "Training DeepLabv3 for semantic segmentation on a 4 GB card: out of memory at once, with a batch size of 1.",
    "A PSPNet on a GTX 1050 Ti (4GB) runs out of memory immediately even at batch 1.",
])
def test_a_dense_prediction_network_at_a_batch_of_one_is_its_input_size(note):
    text = "Check failed: error == cudaSuccess (2 vs. 0)  out of memory"
    assert "detection" in _signals(note, text).domains
    assert ids(text, note)[0] == "input_size_too_large"


def test_a_classifier_at_a_batch_of_one_on_a_small_card_stays_its_states():
    text = "Check failed: error == cudaSuccess (2 vs. 0)  out of memory"
    note = "Training the language model on my 4GB GTX 980 fails right away, even with batch size 1."
    assert ids(text, note)[0] == "model_too_large"


# --- MPS at its high-watermark limit ---------------------------------------------------------------

MPS_AT_THE_LIMIT = ("RuntimeError: MPS backend out of memory (MPS allocated: 8.60 GB, other allocations: 300.00 MB, max allowed: "
                    "9.07 GB). Tried to allocate 48.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable "
                    "upper limit for memory allocations (may cause system failure).")


@pytest.mark.parametrize("note", [None, "Running the image app on my MacBook Air M2.",
                                  "It fails on my Mac mini while training a small CNN."])
def test_mps_full_up_to_its_limit_is_the_watermark_cap(note):
    assert ids(MPS_AT_THE_LIMIT, note)[0] == "other"
    assert "before torch is imported" in evidence_of(MPS_AT_THE_LIMIT, note, "other")


def test_mps_whose_cap_was_lifted_to_no_effect_is_not_the_cap():
    note = "Setting PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 had no effect, it still fails."
    assert "before torch is imported" not in " ".join(e for c in ranked(MPS_AT_THE_LIMIT, note) for e in c.evidence)


@pytest.mark.parametrize("note", [
    "Training a WGAN-GP: memory keeps increasing in each iteration until it runs out.",
    "The GPU memory grows every step since I added the R1 penalty to the discriminator loss.",
    "With compute_gradient_penalty() in the loop, memory climbs steadily and then OOM.",
])
def test_a_gradient_penalty_that_grows_keeps_a_graph_per_step(note):
    assert _signals(note).graph_of_gradients
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "graph_retained"


@pytest.mark.parametrize("note", [
    "I tried the current master and an older commit; with both versions the memory keeps increasing until OOM.",
    "It is the same on all versions I tried: 1.8, 1.12 and 2.0 all fail with OOM after an hour.",
])
def test_versions_that_fail_alike_are_no_regression(note):
    assert not _signals(note).upgrade_regression


def test_a_version_that_worked_is_still_a_regression():
    assert _signals("With 1.8 it fits; after upgrading to 1.12 it runs out of memory.").upgrade_regression


@pytest.mark.parametrize("note, large", [
    ("A single 256x256 image runs out of memory.", False),
    ("Images of 128 x 128 fail.", False),
    ("A single 1024x1024 image runs out of memory.", True),
    ("At 512x768 it fails.", True),
])
def test_an_image_size_is_large_from_a_side_of_512(note, large):
    assert _signals(note).long_input is large


def test_the_dtype_of_an_input_is_not_the_models_precision():
    note = "I pass in a single image of shape (1,3,256,256), dtype torch.float32, into the model's forward pass."
    assert not _signals(note).full_precision_said
    assert _signals("The model runs in float32 and it fails.").full_precision_said


@pytest.mark.parametrize("note", ["It runs out of memory with long audios.", "OOM on an audio of 8min",
                                  "a recording of 2 hours fails", "the lecture videos of about 90 minutes crash it"])
def test_long_recordings_said_in_more_wordings(note):
    assert _signals(note).long_input


@pytest.mark.parametrize("note", ["It works fine for short audios (<1min) but an 8 min one fails.",
                                  "runs well on small images, fails on the big scans",
                                  "the model works with shorter sequences but not long ones"])
def test_what_fits_on_short_inputs_is_read(note):
    assert _signals(note).smaller_input_fits


def test_short_inputs_that_fail_too_are_not_what_fits():
    assert not _signals("It doesn't work for short audios either.").smaller_input_fits


@pytest.mark.parametrize("note", ["How to achieve it under 8G VRAM?", "How can I run this on a 6 GB card?",
                                  "how do I get it to train with only 12GB?"])
def test_asking_how_to_fit_a_card_of_a_size_is_a_suspected_oom_and_a_requirement(note):
    report = analyze_inputs([], text=None, note=note)
    assert report.suspected and not report.detected and report.causes
    assert _signals(note).memory_requirement_asked


def test_asking_how_to_run_it_with_no_size_is_no_oom():
    assert not analyze_inputs([], text=None, note="How can I run this on Windows?").suspected


# --- a notebook cell run again -------------------------------------------------------------------

@pytest.mark.parametrize("note", [
    "In Jupyter, running the training cell a second time... executing the same cell twice ends in CUDA OOM.",
    "Each time I re-run the cell that loads the model in my notebook, memory goes up until it runs out of memory.",
    "The VRAM doesn't get freed when I run cell 7 again in Colab; then it OOMs.",
])
def test_a_notebook_cell_run_again_keeps_the_previous_objects(note):
    assert _signals(note).interactive_rerun
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "reference_leak"
    assert "del them" in evidence_of("RuntimeError: CUDA out of memory.", note, "reference_leak")


def test_a_script_run_again_is_not_a_notebook_rerun():
    assert not _signals("I ran the script again with a smaller batch and it still fails.").interactive_rerun


def test_no_more_memory_on_the_gpu_is_a_suspected_oom():
    assert analyze_inputs([], text=None, note="It complains that there is no more memory on CUDA.").suspected


# --- a named small model whose states leave the card half empty ----------------------------------

@pytest.mark.parametrize("note, count", [
    ("Fine-tuning roberta-base for NER", 125e6), ("training bert-base-uncased", 125e6),
    ("a deberta-v3-base classifier", 184e6), ("xlm-roberta-base on my data", 278e6),
    ("distilbert fine-tuning", 82e6), ("xlm-roberta-large", 560e6),
])
def test_encoder_sizes_by_their_size_word(note, count):
    assert _signals(note).param_count == count


def test_a_small_model_whose_states_fit_is_the_batch_not_the_model():
    text = sentence(req="20.00 MiB", total="3.82 GiB", free="200.00 KiB", alloc="2.90 GiB", unalloc="30.00 MiB")
    note = "Training NER with roberta-base on my GPU runs out of memory."
    assert ids(text, note)[0] == "batch_too_large"
    assert "16 B" in evidence_of(text, note, "batch_too_large")


@pytest.mark.parametrize("note", ["I set the batch size to 4 and finally can train normally.",
                                  "with batch size 4 it trains fine",
                                  "After several OOM errors I set the batch size to 4 and now it trains."])
def test_the_one_batch_said_to_work_is_no_lead_to_a_batch_too_large(note):
    assert _signals(note).stated_batch_fits
    assert "The batch size is 4" not in " ".join(e for c in ranked("RuntimeError: CUDA out of memory.", note) for e in c.evidence)


@pytest.mark.parametrize("note", ["batch size 16 fails", "with batch size 4 it trains fine for an hour and then runs out of memory"])
def test_a_batch_stated_beside_a_failure_is_still_the_runs_batch(note):
    assert not _signals(note).stated_batch_fits


@pytest.mark.parametrize("note", ["Please update the node for minimum VRAM: 6 gb, it fails with Allocation on device.",
                                  "Could you add a low VRAM mode? The app dies on my laptop GPU as it starts."])
def test_a_small_card_mode_asked_outside_training_is_the_resident_weights(note):
    assert ids("torch.OutOfMemoryError: Allocation on device", note)[0] == "model_too_large"
    assert "offload" in evidence_of("torch.OutOfMemoryError: Allocation on device", note, "model_too_large")


def test_a_small_card_mode_asked_while_training_is_not_the_weights_rule():
    note = "Is there a low VRAM mode for training? It runs out of memory at batch 32."
    assert "what such modes take off the card" not in " ".join(
        e for c in ranked("torch.OutOfMemoryError: Allocation on device", note) for e in c.evidence)


@pytest.mark.parametrize("note", ["server.py seems to ignore --gpu-memory when --load-in-4bit is given, then it fills the VRAM until it OOMs.",
                                  "The loader ignores max_memory and fills GPU 0 until out of memory.",
                                  "It silently ignores gradient_checkpointing and runs out of memory."])
def test_a_program_that_ignores_a_memory_option_drops_it(note):
    assert _signals(note).saving_option_dropped
    assert ids("", note)[0] == "framework_bug"


def test_the_user_ignoring_an_option_is_not_the_program_dropping_it():
    assert not _signals("I ignored the offload option and it ran out of memory.").saving_option_dropped


def test_weights_a_dropped_offload_was_to_handle_are_not_the_first_cause():
    note = "Loading a 30B 4-bit model on my 12GB card: server.py seems to ignore --gpu-memory 6, it fills the VRAM until it OOMs."
    assert ids("", note)[0] == "framework_bug"


# --- models trained in turn, a larger input swapped in, a save announced, prose reports ---------------

@pytest.mark.parametrize("note", ["I train a series of small Keras dense networks one after another in a for loop.",
                                  "We fit 40 different conv nets in a loop, one per hyper-parameter set.",
                                  "Training several small models one after the other in the same script; the first ones train fine."])
def test_models_trained_in_turn_in_one_process_keep_what_each_held(note):
    assert _signals(note).models_in_a_loop
    assert ids("ResourceExhaustedError: OOM when allocating tensor with shape[512,512]", note)[0] == "reference_leak"


@pytest.mark.parametrize("note", ["Each model is built fresh and trained for ten epochs.",
                                  "The network is constructed from the config, then trained; it fails at epoch 3."])
def test_how_a_model_is_built_is_not_a_failure_while_building(note):
    assert not _signals(note).construction


@pytest.mark.parametrize("note", ["It fails while the model is built, before any batch.",
                                  "OOM as the backbone is still being initialized."])
def test_a_failure_while_the_model_is_built_is_still_read(note):
    assert _signals(note).construction


@pytest.mark.parametrize("note", ["It fails after switching to the new, larger template mesh.",
                                  "Since moving to the higher-resolution scans the training step runs out of memory.",
                                  "after switching to the new bigger point clouds it dies in the loss"])
def test_a_larger_input_swapped_in_is_the_input_not_a_new_version(note):
    signals = _signals(note)
    assert signals.input_raised and not signals.upgrade_regression
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "input_size_too_large"


@pytest.mark.parametrize("note", ["It runs out of memory after switching to the new version.",
                                  "Since moving to the latest torch release the same job fails."])
def test_a_new_release_switched_to_is_still_a_version_change(note):
    assert _signals(note).upgrade_regression


@pytest.mark.parametrize("note", ["Fine-tuning with FSDP on 8 GPUs (torchrun, micro batch 1, pure bf16, nightly PyTorch).",
                                  "Setup: a nightly build of torch and four A100s."])
def test_a_nightly_named_among_the_settings_is_no_version_change(note):
    assert not _signals(note).upgrade_regression


@pytest.mark.parametrize("log", [
    "epoch 1 done\n[INFO] Saving model checkpoint to out/ckpt-1000\nTraceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    main()\n",
    "eval loss 1.93\nwe are about to save the PEFT modules",
    "step 400 | loss 2.1\nwriting the final weights\nRuntimeError: CUDA out of memory.",
])
def test_a_save_the_program_announced_last_is_what_was_running(log):
    note = "LoRA training with FSDP on 8 GPUs; the first epoch went well, then it ran out of memory."
    assert _signals(note, text=log).saving
    assert ids(log, note)[0] == "distributed_replication"


def test_a_save_printed_long_before_the_failure_is_not_the_failing_step():
    log = "[INFO] Saving model checkpoint to out/ckpt-500\nstep 501\nstep 502\nstep 503\nRuntimeError: CUDA out of memory."
    assert not _signals("training with FSDP on 8 GPUs", text=log).saving


@pytest.mark.parametrize("text", ["After 4 steps, the OOM occurs.", "It runs out of memory at the second epoch.",
                                  "There is not enough memory on the card once training starts."])
def test_a_report_in_prose_that_memory_ran_out_is_ranked_as_suspected(text):
    report = analyze_inputs([], text=text, note="Fine-tuning a 7B model with LoRA on one 24 GB GPU.")
    assert report.causes and not report.detected


def test_prose_without_memory_words_is_not_an_oom():
    report = analyze_inputs([], text="The training stopped after four steps.", note=None)
    assert not report.causes


@pytest.mark.parametrize("note", ["I would like an option to make it run on the CPU instead.",
                                  "Could it fall back to running on the CPU instead?"])
def test_asking_to_run_on_the_cpu_instead_is_not_a_cpu_run(note):
    assert not _signals(note).cpu_mode


@pytest.mark.parametrize("note, batch", [("Cascade R-CNN with samples_per_gpu = 4 and num_workers = 2", 4),
                                         ("imgs_per_gpu=2 on one card", 2), ("cfg.SOLVER.IMS_PER_BATCH = 8", 8)])
def test_detection_frameworks_batch_knobs_are_the_batch(note, batch):
    assert _signals(note).batch_size == batch


@pytest.mark.parametrize("note", ["The first time it ran out of memory at the second epoch, the second time at the fifth.",
                                  "On one try it failed in the 3rd epoch; the next time in the 7th."])
def test_separate_tries_failing_at_different_epochs_are_not_repeated_work(note):
    assert not _signals(note).repeated_calls


@pytest.mark.parametrize("note", ["DreamBooth extension (latest dev commit, torch 1.13.1) at 1024 pixels on an A100.",
                                  "Using the newest release of the app on Windows, 12 GB card."])
def test_the_newest_build_named_among_the_settings_is_no_version_change(note):
    assert not _signals(note).upgrade_regression


@pytest.mark.parametrize("note", ["On the latest commit it runs out; the previous one worked.",
                                  "The newest release leaks memory every step."])
def test_the_newest_build_set_beside_another_is_still_a_version_change(note):
    assert _signals(note).upgrade_regression


# --- a cuBLAS handle PyTorch could not create, a reservation the size of the card, Radeon names,
# --- a UI's walkthrough --------------------------------------------------------------------------

_TORCH_CUBLAS = "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"


@pytest.mark.parametrize("note", [None, "Training a ResNet on my own images.", "It crashes when I train the model on a 6 GB laptop GPU.",
                                  "The backward pass dies with this error."])
def test_a_cublas_handle_pytorch_could_not_create_means_the_program_filled_the_card(note):
    causes = ids(_TORCH_CUBLAS, note)
    assert causes[0] == "batch_too_large" and "cudnn_or_workspace" in causes[:3]


def test_tensorflow_failing_to_create_a_cublas_handle_is_still_the_library_workspace():
    text = "2020-01-01 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_blas.cc:238] failed to create cublas handle: CUBLAS_STATUS_ALLOC_FAILED"
    assert ids(text, "Running a Keras model on my GPU.")[0] == "cudnn_or_workspace"


_TF_REFUSED = "E tensorflow/stream_executor/rocm/rocm_driver.cc:601] failed to allocate {} from device: hipError_t(1002)"


@pytest.mark.parametrize("note", ["Running the example on an AMD RX 580 with 8GB.", "My card has 8 GB.",
                                  "I only have 8GB of VRAM on this machine.", "A GTX 1070 (8GB) runs the test script."])
def test_a_start_up_reservation_of_the_whole_card_named_in_the_note_is_the_frameworks_sizing(note):
    causes = ranked(_TF_REFUSED.format("8.00G (8589934592 bytes)"), note)
    assert causes[0].id == "framework_bug"
    assert "input_size_too_large" not in [cause.id for cause in causes[:1]]


def test_a_start_up_reservation_below_the_card_is_refused_for_what_others_hold():
    assert ids(_TF_REFUSED.format("6.50G (6979321856 bytes)"), "Running the example on an AMD RX 580 with 8GB.")[0] == "other_process_or_device"


@pytest.mark.parametrize(("note", "capacity"), [("an AMD RX 580", 8e9), ("a Radeon RX 6800 XT", 16e9), ("two RX 7900 XT cards", 20e9),
                                                ("an RX 6700 XT", 12e9)])
def test_radeon_cards_are_known_by_name(note, capacity):
    assert _signals(f"Training on {note}.").note_gpu_capacity == capacity


@pytest.mark.parametrize("note", ["The model never shows up in the inference dropdown after training.",
                                  "Training finishes but the Inference tab stays empty.",
                                  "I trained it and pressed the inference button; this is what training printed."])
def test_an_inference_page_of_a_ui_is_not_the_failing_phase(note):
    assert _signals(note).phase != "evaluation"


@pytest.mark.parametrize("note", ["It runs out of memory during inference.", "Inference on one image fails."])
def test_inference_itself_is_still_the_evaluation_phase(note):
    assert _signals(note).phase == "evaluation"


@pytest.mark.parametrize("note", ["Steps 1 and 2 work; in step 3, click One-click training, and it fails.",
                                  "In the web UI, step 2: press the Process button, then it dies in step 3.",
                                  "The Train tab: in step 3 it crashes."])
def test_a_uis_numbered_stages_are_not_training_steps(note):
    assert not _signals(note).growth


@pytest.mark.parametrize("note", ["It runs out in step 3 of the training loop.", "In the web UI it fails at step 3000 of training."])
def test_training_steps_still_count_beside_a_ui(note):
    assert _signals(note).growth


# --- smaller inputs that failed too, frozen weights under a climbing curve, a resume beside memory
# --- held outside PyTorch ------------------------------------------------------------------------

@pytest.mark.parametrize("note", ["Runs with context lengths 8, 4 and 1 all grow until they crash.",
                                  "With a sequence length of 256 it still runs out of memory.",
                                  "Images resized to 512 px fail as well."])
def test_smaller_inputs_that_also_fail_do_not_fit(note):
    assert not _signals(note).smaller_input_fits


@pytest.mark.parametrize("note", ["With a sequence length of 256 it runs fine.", "Cropping the images to 512 px works."])
def test_a_smaller_input_that_runs_still_fits(note):
    assert _signals(note).smaller_input_fits


_LORA_7B_ON_16GB = "LoRA fine-tuning of a 7B model in fp16 on a 16 GB V100."


@pytest.mark.parametrize("growth", ["GPU memory climbs linearly with the steps until it crashes.",
                                    "Memory usage keeps growing every iteration and it dies after a while."])
def test_frozen_weights_are_not_what_climbs_step_after_step(growth):
    causes = ids("", f"{_LORA_7B_ON_16GB} {growth}")
    assert causes[0] in ("graph_retained", "reference_leak") and causes.index("model_too_large") > 1


def test_frozen_weights_that_fill_the_card_without_growth_are_the_model():
    assert ids("torch.cuda.OutOfMemoryError: CUDA out of memory.", f"{_LORA_7B_ON_16GB} It fails at the first step.")[0] == "model_too_large"


_OLD_FORM = ("RuntimeError: CUDA out of memory. Tried to allocate 40.00 MiB (GPU 0; {total} total capacity; {alloc} already allocated; "
             "{free} free; {reserved} reserved in total by PyTorch)")


@pytest.mark.parametrize("note", ["Resuming training from my last checkpoint on the same machine gives this.",
                                  "It happens when I restore the saved state to continue training."])
def test_a_resume_on_one_gpu_with_the_card_held_outside_pytorch_is_another_process(note):
    text = _OLD_FORM.format(total="7.80 GiB", alloc="4.60 GiB", free="10.00 MiB", reserved="4.70 GiB")
    causes = ids(text, note)
    assert causes[0] == "other_process_or_device" and "checkpoint_loading" in causes[:3]


def test_a_resume_whose_memory_is_pytorchs_own_is_the_checkpoint():
    text = _OLD_FORM.format(total="7.80 GiB", alloc="7.10 GiB", free="10.00 MiB", reserved="7.20 GiB")
    assert ids(text, "Resuming training from my last checkpoint on the same machine gives this.")[0] == "checkpoint_loading"


def test_a_resume_over_several_ranks_keeps_the_restored_copies_on_gpu0_in_view():
    text = _OLD_FORM.format(total="7.80 GiB", alloc="4.60 GiB", free="10.00 MiB", reserved="4.70 GiB")
    causes = ids(text, "Resuming a DDP run on 4 GPUs from the last checkpoint runs out of memory on GPU 0.")
    assert causes[0] in ("checkpoint_loading", "distributed_replication")


@pytest.mark.parametrize("note", ["I train five small models in a loop, one after another.", "We fit a dozen classifiers in a loop.",
                                  "Training two models in the same script one after another."])
def test_models_counted_in_words_and_trained_in_turn_keep_the_earlier_ones(note):
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "reference_leak"


# --- llama.cpp's compute buffers: larger than any card, or kept in copies for pipeline parallelism

_GGML_COMPUTE = ("llama_new_context_with_model: KV self size  = 1005.79 MiB\n{pipeline}"
                 "ggml_backend_cuda_buffer_type_alloc_buffer: allocating {size} MiB on device 0: cudaMalloc failed: out of memory\n"
                 "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size {bytes}\n")


def _ggml_compute(mib: float, pipeline: str = "") -> str:
    return _GGML_COMPUTE.format(pipeline=pipeline, size=f"{mib:.2f}", bytes=int(mib * 2**20))


@pytest.mark.parametrize("pipeline", ["", "llama_new_context_with_model: pipeline parallelism enabled (n_copies=4)\n"])
def test_a_compute_buffer_larger_than_any_card_is_the_engines_sizing(pipeline):
    causes = ids(_ggml_compute(279356.51, pipeline), "Serving a model split over 8 GPUs.")
    assert causes[0] == "framework_bug"


def test_a_compute_buffer_kept_in_copies_for_pipeline_parallelism_names_the_copies():
    text = _ggml_compute(144.0, "llama_new_context_with_model: pipeline parallelism enabled (n_copies=4)\n")
    assert "copies of the compute buffers" in evidence_of(text, "Serving a model over five GPUs.", "framework_bug")


def test_a_compute_buffer_a_card_can_hold_is_still_the_context_and_batch():
    assert ids(_ggml_compute(3000.0), "Serving a model with an 8k context on one 24 GB GPU.")[0] == "kv_cache_or_generation"


# --- a notebook session's code run again, XLA's tile padding on TPUs -----------------------------

@pytest.mark.parametrize("note", ["I ran the sampling colab on my TPU server. It ran fine the first time, but when I ran the script again I got this error.",
                                  "In my Jupyter notebook the code works once; running the code again fails with OOM.",
                                  "Working in a Kaggle kernel: re-running it gives the error."])
def test_a_notebook_sessions_code_run_again_is_a_rerun(note):
    assert _signals(note).interactive_rerun


@pytest.mark.parametrize("note", ["I ran the script again from the shell and got the same error.",
                                  "In the notebook I ran it again and it worked."])
def test_a_script_run_again_outside_a_notebook_or_without_failing_is_no_rerun(note):
    assert not _signals(note).interactive_rerun


def test_a_rerun_in_a_notebook_is_not_the_inputs_size():
    text = ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 15.65G. "
            "That was not possible. There are 11.08G free.; (0x0x0_HBM0)")
    note = "Sampling from a 2B model in a colab notebook on TPU. It ran fine the first time; when I ran the script again I got this error."
    assert ids(text, note)[0] == "reference_leak"


_TPU_REPORT = """Compilation failure: Ran out of memory in memory space hbm. Used {used} of 16.00G hbm. Exceeded hbm capacity by {over}.

  Largest program allocations in hbm:

  1. Size: {size}
     Shape: s32[4194304,8,4]{{2,1,0:T(8,128)}}
     Unpadded size: {unpadded}
     Extra memory due to padding: {extra} ({expansion}x expansion)
"""


def test_a_program_over_by_its_tile_padding_is_the_layout():
    text = _TPU_REPORT.format(used="24.00G", over="8.00G", size="16.00G", unpadded="512.00M", extra="15.50G", expansion="32.0")
    causes = ranked(text, "Training a particle simulation on a TPU.")
    assert causes[0].id == "other" and "padding" in causes[0].evidence[0]


def test_a_little_padding_is_not_the_cause():
    text = _TPU_REPORT.format(used="24.00G", over="8.00G", size="2.10G", unpadded="2.00G", extra="100.00M", expansion="1.1")
    assert ids(text, "Training a particle simulation on a TPU.")[0] != "other"


@pytest.mark.parametrize(("text", "note", "named"), [
    (_TPU_REPORT.format(used="24.00G", over="8.00G", size="16.00G", unpadded="512.00M", extra="15.50G", expansion="32.0"),
     "Training a particle simulation on a TPU.", "TPU tile padding"),
    ("RuntimeError: MPS backend out of memory (MPS allocated: 8.93 GB, other allocations: 120.39 MB, max allowed: 9.07 GB). "
     "Tried to allocate 25.00 MB on private pool.", None, "MPS"),
])
def test_a_cause_outside_the_taxonomy_says_what_it_is(text, note, named):
    other = next(cause for cause in ranked(text, note) if cause.id == "other")
    assert other.title.startswith("Other: ") and named in other.title


@pytest.mark.parametrize("note", [
    "MacOS, the web UI opened fine, but generating an image gives this error. python: 3.10.10 torch: 1.12.1 xformers: N/A gradio: 3.16.2",
    "Setup: python: 3.10.6, gradio: 3.41.2, sd-webui: 1.6.0. It fails on every image.",
    "Environment: torch==2.1.0, comfyui-manager==2.3.1; the first sample runs out of memory.",
])
def test_a_listing_of_packages_and_their_versions_is_no_version_change(note):
    """Each version in a settings listing belongs to the label before it: two labels, two packages."""
    assert not _signals(note).upgrade_regression


@pytest.mark.parametrize("note", ["with torch: 2.0.1 it fails; torch: 1.13.1 works", "version: 1.2 fails, version: 1.1 works"])
def test_one_package_labelled_twice_is_still_a_version_change(note):
    assert _signals(note).upgrade_regression


XLA_OOM = ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: 2 root error(s) found.\n"
           "  (0) Resource exhausted: Out of memory while trying to allocate 68852648264 bytes.\n\t [[{{node cluster_0_1/xla_run}}]]")


@pytest.mark.parametrize("note", [
    "Enabling XLA causes a memory error: the benchmark script fails once I pass --use_xla.",
    "It runs out of memory as soon as I turn on jit_compile=True in model.compile.",
    "Without --use_xla it trains fine; with it the first step dies.",
])
def test_tensorflows_compiler_switched_on_is_the_compilers_memory(note):
    """The same program fits without XLA: the one huge request is the compiler's buffer plan, and XLA
    named beside TensorFlow is its compiler, not JAX in the same process."""
    signals = _signals(note, text=XLA_OOM)
    assert signals.only_compiled and not signals.preallocating_framework_beside
    ranking = ids(XLA_OOM, note)
    assert ranking[0] == "framework_bug" and "other_process_or_device" not in ranking[:2]


def test_xla_on_a_tpu_is_no_compiler_switch():
    assert not _signals("I train with XLA on a TPU v3-8 and it fails", text=XLA_OOM).only_compiled


@pytest.mark.parametrize("note", [
    "torchrun --nproc_per_node=2 script.py: all tensor be sent to the cuda:0 first, then cuda:0 OOM. Why all of the weights be loaded to the cuda0 first?",
    "DDP on two cards: why are all the parameters placed on cuda:0 before training starts?",
    "With DDP on 8 GPUs all of the models are moved to the first GPU and it crashes.",
])
def test_each_process_placing_its_weights_on_the_first_gpu_is_the_device(note):
    """Every process of the launch puts its model on the default device before choosing its own."""
    assert _signals(note).placed_on_gpu0
    ranking = ids("torch.OutOfMemoryError: CUDA out of memory.", note)
    assert ranking[0] == "other_process_or_device" and "distributed_replication" in ranking[:3]


def test_weights_placed_on_the_first_gpu_of_one_process_is_no_launch():
    note = "On my single GPU all the weights are loaded to cuda:0 and it fails."
    assert "other_process_or_device" not in ids("torch.OutOfMemoryError: CUDA out of memory.", note)[:1]


@pytest.mark.parametrize("note", [
    "Memory consumption is constant in general but after about 50 steps an OOM is raised. I logged the lengths: "
    "all other samples are <= 650 tokens until this point, the failing one has 1079.",
    "Fine-tuning a 7B model: it crashes on the longest sequence of the dataset, every time.",
    "It trains for hours, then it dies at a 3000-token example.",
    "Whenever a very long document comes in, the training step OOMs.",
])
def test_a_failure_on_one_input_longer_than_the_rest_is_the_input(note):
    assert _signals(note).longer_item_at_failure
    ranking = ids("torch.OutOfMemoryError: CUDA out of memory.", note)
    assert ranking[0] == "input_size_too_large" and ranking[1:2] != ["reference_leak"]


@pytest.mark.parametrize("note", ["it crashes after 100 samples", "after 300 iterations memory keeps growing until it runs out"])
def test_a_count_of_inputs_is_no_longer_input(note):
    assert not _signals(note).longer_item_at_failure


@pytest.mark.parametrize("note", ["The memory usage stays flat, yet after 300 iterations it runs out.",
                                  "VRAM consumption is stable; after about 2000 steps the OOM comes."])
def test_steps_before_a_failure_with_memory_said_level_are_no_growth(note):
    assert not _signals(note).growth


MPS_AT_CAP = ("RuntimeError: MPS backend out of memory (MPS allocated: 6.04 GB, other allocations: 1.04 GB, max allowed: 6.77 GB). "
              "Tried to allocate 459.07 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for "
              "memory allocations (may cause system failure)")


@pytest.mark.parametrize("note", ["Generating an image with the stable diffusion web UI on my Mac fails.",
                                  "An image-to-text captioning pass on an M1 MacBook, mode best, fails like this."])
def test_mps_at_its_watermark_is_the_cap_before_the_pipelines_size(note):
    """PyTorch caps MPS at a multiple of the recommended working set; that cap, which can be lifted, is what stopped it."""
    assert ids(MPS_AT_CAP, note)[0] == "other"


def test_a_checkpoint_every_rank_restores_on_the_first_gpu_stays_the_ranks_copies():
    assert not _signals("every rank loads the checkpoint onto cuda:0").placed_on_gpu0


LOADING_OOM = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 172.00 MiB (GPU 0; 23.65 GiB total capacity; "
               "22.99 GiB already allocated; 154.06 MiB free; 22.99 GiB reserved in total by PyTorch)")


@pytest.mark.parametrize("note", [
    'On 4 GPUs: model = AutoModelForCausalLM.from_pretrained(name, device_map="auto", torch_dtype=torch.float16).cuda() fails; '
    "the first GPU runs out while loading.",
    "I load the 13B model with device_map='balanced' and then call .to('cuda') on it; GPU 0 fills up.",
    'pipe = Pipeline.from_pretrained(path, device_map="auto").to("cuda") runs out of memory on two cards',
])
def test_a_model_split_by_device_map_then_moved_to_one_gpu_is_the_device(note):
    """.cuda() / .to() after device_map gathers every layer back onto one GPU."""
    assert _signals(note, text=LOADING_OOM).dispatch_undone
    ranking = ids(LOADING_OOM, note)
    assert ranking[0] == "other_process_or_device" and "distributed_replication" not in ranking[:1]


def test_device_map_alone_is_no_move():
    note = 'model = AutoModelForCausalLM.from_pretrained(name, device_map="auto") on 4 GPUs; the first GPU runs out while loading.'
    assert not _signals(note, text=LOADING_OOM).dispatch_undone


@pytest.mark.parametrize("note", [
    "The code loads the pretrained weight which is mapped at gpu index:0, not the GPU I selected.",
    "It restores the checkpoint with torch.load without map_location, while the model runs on cuda:3.",
    "Loading the saved state dict: I think it should be mapped to 'cpu' first and then copied.",
])
def test_saved_weights_restored_onto_the_gpu_they_came_from_is_the_loading(note):
    assert _signals(note).restored_onto_saved_gpu
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "checkpoint_loading"


def test_a_tensor_put_on_gpu_0_with_nothing_loaded_is_no_restore():
    assert "checkpoint_loading" not in ids("RuntimeError: CUDA out of memory.", "the images are put on gpu 0 for the forward pass")[:1]


EVAL_BIG = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.44 GiB. GPU 0 has a total capacity of 10.58 GiB of "
            "which 4.44 GiB is free. Of the allocated memory 5.77 GiB is allocated by PyTorch, and 178.42 MiB is reserved by PyTorch but unallocated.")


@pytest.mark.parametrize("note", [
    "It always fails in the evaluation phase of fine-tuning: memory starts to creep up batch after batch until it overflows.",
    "Validation: the GPU memory keeps growing with every batch and then it crashes.",
    "During evaluation the memory increases step by step until this error.",
])
def test_one_large_request_after_evaluation_memory_climbed_is_the_kept_results(note):
    """A single large request at the end of a climb in evaluation is the kept results joined into one tensor."""
    ranking = ids(EVAL_BIG, note)
    assert ranking[0] == "reference_leak" and "input_size_too_large" not in ranking[:1]


def test_one_large_request_at_evaluation_with_no_climb_stays_the_input():
    assert "input_size_too_large" in ids(EVAL_BIG, "It fails in the evaluation phase, on the first batch.")[:2]


TWO_GB_CARD = ("RuntimeError: CUDA out of memory. Tried to allocate 539.12 MiB (GPU 0; 1.96 GiB total capacity; "
               "731.36 MiB already allocated; 533.31 MiB free; 90.77 MiB cached)")


@pytest.mark.parametrize("note", ["I have 19gb of memory so this is surprising; my card is a GTX 1050.",
                                  "We have 32 GB of memory and an MX150 in this laptop."])
def test_memory_far_from_the_named_cards_size_is_the_machines(note):
    """A bare "N GB of memory" far from what the named card holds is RAM, not the card."""
    signals = _signals(note, text=TWO_GB_CARD)
    assert signals.note_gpu_capacity is not None and signals.note_gpu_capacity <= 8 * 10**9
    assert ids(TWO_GB_CARD, note)[0] != "framework_bug"


def test_a_gtx_1050_holds_two_gigabytes_and_its_ti_four():
    from oomtriage.gpus import capacity_of_gpu
    assert capacity_of_gpu("GTX 1050") == 2 * 10**9 and capacity_of_gpu("GTX 1050 Ti") == 4 * 10**9


@pytest.mark.parametrize("note", ["It occurs when I increase my example.txt size from one to a few sentences.",
                                  "It worked when I lengthened the prompt from one to three paragraphs? No: then it fails.",
                                  "Going from a single page to 20 pages of text it runs out."])
def test_one_input_made_longer_is_the_input(note):
    assert _signals(note).input_raised


@pytest.mark.parametrize("note", [
    "OOM when running models one by one:\nfor i in range(3):\n    model, optimizer, scheduler = build_training_objects(cfg)\n"
    "    train(model, optimizer)\n    del model\n    torch.cuda.empty_cache()",
    "Cross-validation:\nfor fold in range(5):\n    net = UNet(3, 2).cuda()\n    fit(net, folds[fold])",
    "for seed in seeds:\n    clf = build_classifier(seed)\n    clf.fit(x, y)",
])
def test_a_model_built_in_a_loop_body_of_pasted_code_is_kept_models(note):
    assert _signals(note).models_in_a_loop
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "reference_leak"


@pytest.mark.parametrize("note", ["for batch in loader:\n    model = model.to(device)\n    out = model(batch)",
                                  "for batch in loader:\n    out = model(batch)\n    loss = crit(out, y)"])
def test_a_loop_that_reuses_its_model_builds_none(note):
    assert not _signals(note).models_in_a_loop


@pytest.mark.parametrize("note", [
    "My loop:\nfor batch in loader:\n    loss = model(**batch).loss\n    loss.backward()\n    optimizer.step()\n    optimizer.zero_grad()",
    "Here is the training code\n  outputs = model(x)\n  loss.backward()\n  optimizer.step()",
])
def test_an_optimizer_step_in_pasted_code_is_not_where_it_failed(note):
    assert not _signals(note).optimizer_step


def test_an_optimizer_step_said_in_prose_is_still_where_it_failed():
    assert _signals("It crashes at optimizer.step() on the very first iteration.").optimizer_step


@pytest.mark.parametrize("note", [
    "When the training is start, the memory usage is very high (12756MiB / 16276MiB) and drops to normal after a while (4689MiB).",
    "When it started the GPU usage was huge, then it went down after some iterations.",
])
def test_a_peak_when_training_starts_that_settles_is_the_algorithm_search(note):
    assert _signals(note).start_peak_then_lower
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "cudnn_or_workspace"


@pytest.mark.parametrize("note", [
    "Full fine-tuning of a 13B model on 2 A100 40GB GPUs in bf16 with torchrun --model_parallel_size 2; batch size 1 still OOMs.",
    "Full fine-tuning of a 13B model in bf16 on 4 A100 40GB GPUs with tensor parallel size 4 runs out of memory at batch 1.",
])
def test_split_weights_and_gradients_that_fit_leave_the_optimizer_state_over(note):
    """Per GPU, the taxonomy's line: the weights and gradients, split by model parallelism, fit; Adam's moments
    push the share over."""
    assert ids("torch.cuda.OutOfMemoryError: CUDA out of memory.", note)[0] == "optimizer_state"


def test_weights_every_gpu_keeps_whole_that_do_not_fit_stay_the_model():
    """Plain data parallelism (or ZeRO-1/2) keeps every weight on every GPU: 13B bf16 weights and gradients
    take 52 GB of each 40 GB card, so the model itself is too large there."""
    note = "Full fine-tuning of a 13B model on 2 A100 40GB GPUs in bf16 with torchrun; batch size 1 still OOMs."
    assert ids("torch.cuda.OutOfMemoryError: CUDA out of memory.", note)[0] == "model_too_large"


def test_sharded_weights_that_do_not_fit_stay_the_model():
    note = "Full fine-tuning of a 70B model on 2 A100 40GB GPUs in bf16 with torchrun; batch size 1 still OOMs."
    assert ids("torch.cuda.OutOfMemoryError: CUDA out of memory.", note)[0] == "model_too_large"


@pytest.mark.parametrize("note", [
    "Using the vit_h checkpoint gives an OOM error: my GPU is an RTX 2080 Ti with only 11G VRAM, and vit_h officially recommends 12G or more VRAM.",
    "The README says the model needs at least 24 GB of VRAM; I have a 3060 with 12GB.",
    "Minimum VRAM: 16 GB according to the model card, and my laptop card has 8 GB.",
])
def test_a_stated_requirement_above_the_card_is_the_model(note):
    assert _signals(note).stated_requirement
    assert ids("torch.cuda.OutOfMemoryError: CUDA out of memory.", note)[0] == "model_too_large"


@pytest.mark.parametrize("note", ["It needs 2 GB more than the card has.", "The batch needs 3 GB at this resolution.",
                                  "The model needs 8 GB and my card has 24 GB, yet the batch of 64 fails."])
def test_a_part_needing_more_or_a_requirement_the_card_meets_is_no_model_verdict(note):
    signals = _signals(note)
    assert not signals.stated_requirement or (signals.note_gpu_capacity or 0) >= signals.stated_requirement


@pytest.mark.parametrize("note", ["Is my 8G video memory not enough? It works on the CPU.", "is my 6GB card not enough for this?"])
def test_asking_whether_the_cards_memory_is_enough_is_a_requirement_question(note):
    assert _signals(note).memory_requirement_asked


@pytest.mark.parametrize("note", ["The program takes a lot of memory in GPU0 but much less memory in others. Why would this happen?",
                                  "Imbalanced GPU memory: cuda:0 is nearly full from the start.",
                                  "GPU 0 uses far more than the rest and runs out."])
def test_memory_compared_across_gpus_says_there_are_several(note):
    signals = _signals(note)
    assert signals.several_gpus and signals.rank0_heavy
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "distributed_replication"


def test_one_gpu_filling_up_names_no_other():
    assert not _signals("GPU 0 fills up after a few steps and it crashes.").several_gpus


@pytest.mark.parametrize("note", ["It fails for photos larger than 640x480px on my 12 GB card.",
                                  "The image resolutions were 4000 by 3000.",
                                  "Frames sized 1920 by 1080 run out of memory."])
def test_an_image_size_written_in_pixels_or_words_is_a_large_input(note):
    assert _signals(note).long_input


def test_a_count_by_a_count_is_no_image_size():
    assert not _signals("we went from 100 by 100 batches to 200").long_input


VAE_ENCODE = ('  File "pipeline.py", line 412, in __call__\n'
              "    latents = self.vae.encode(image * 2 - 1).latent_dist.sample()\ntorch.cuda.OutOfMemoryError: CUDA out of memory.")


def test_a_vae_drawing_its_latent_is_no_generation_loop():
    assert _signals("super-resolution of one photo", text=VAE_ENCODE).phase != "generation"
    assert "kv_cache_or_generation" not in ids(VAE_ENCODE, "super-resolution of one photo")[:1]


def test_a_model_sampling_tokens_is_still_generation():
    text = '  File "run.py", line 9, in main\n    out = model.sample(input_ids, max_new_tokens=512)\ntorch.cuda.OutOfMemoryError: CUDA out of memory.'
    assert _signals("", text=text).phase == "generation"


@pytest.mark.parametrize("note", [
    "I'm able to train only if I set the batch size to 8. I also get the same CUDA out of memory error at inference time, where the batch size is set to 1.",
    "Training works with batch 4; evaluation with batch 1 fails on the full-resolution images.",
])
def test_a_smaller_batch_failing_in_another_phase_is_no_size_inversion(note):
    assert not _signals(note).smaller_fails_larger_works


def test_a_smaller_size_failing_in_the_same_phase_is_still_an_inversion():
    assert _signals("Training at batch 8 works, but training at batch 4 fails.").smaller_fails_larger_works


@pytest.mark.parametrize("note", ["Chatting with OpenAssistant_oasst-sft-4-pythia-12b in the web UI runs out after a few messages.",
                                  "Serving the llama-2-7b-dpo-merged model fails on the first request."])
def test_a_training_method_inside_a_models_name_is_no_training(note):
    assert _signals(note).phase != "training"


def test_a_training_method_named_on_its_own_is_training():
    assert _signals("SFT of a 7B model on one GPU fails at the first step.").phase == "training"


@pytest.mark.parametrize("note", ["Mask evaluation runs out of memory: paste_mask scales the masks back to 4288x2848.",
                                  "During eval the MaskDINO model fails in pairwise_iou.",
                                  "Evaluating a DETR model on full-size images fails."])
def test_detections_post_processing_names_a_detection_model(note):
    signals = _signals(note)
    assert "detection" in signals.domains
    assert "input_size_too_large" in ids("RuntimeError: CUDA out of memory.", note)[:2]


@pytest.mark.parametrize("note", [
    "When running model.generate with a Seq2SeqLM I get OOM in Colab when passing in a large batch (i.e. 1000 samples).",
    "I call pipe(texts) on a batch of 5000 prompts at once and generation runs out of memory.",
])
def test_every_prompt_passed_to_generate_in_one_batch_is_the_batch(note):
    assert _signals(note).whole_set_one_batch
    assert ids("torch.cuda.OutOfMemoryError: CUDA out of memory.", note)[0] == "batch_too_large"


def test_many_return_sequences_for_one_prompt_stay_the_cache():
    note = "model.generate(input_ids, num_return_sequences=64, max_new_tokens=1024) on one prompt runs out of memory"
    assert ids("torch.cuda.OutOfMemoryError: CUDA out of memory.", note)[0] == "kv_cache_or_generation"


@pytest.mark.parametrize("note", ["Even with batch size 1 and seq length = 256, getting this error.",
                                  "It still fails at batch size 1 and a max length of 128."])
def test_the_input_cut_beside_the_batch_is_no_input_left_to_cut(note):
    signals = _signals(note)
    assert signals.batch_no_help and signals.input_no_help
    assert ids("RuntimeError: CUDA out of memory.", note)[0] not in ("batch_too_large", "input_size_too_large")


def test_a_long_input_beside_batch_one_is_still_the_input():
    assert not _signals("Even with batch size 1 and seq length = 32768 it fails.").input_no_help


@pytest.mark.parametrize("note", [
    "A month ago I trained it on 4 A100s with per_device_train_batch_size=4; here transformers==4.28.1. Today I retrain with the same "
    "hardware and the same code, but there is an OOM; it only works with batch size 1. I found the installed version is transformers==4.31.dev0.",
    "When using 4.35 to load the model for training, the memory usage has nearly quadrupled. When switched to 4.34, the memory usage decreases.",
    "fp16 tensors are converted to fp32, which runs out of memory, starting in transformers 4.26.0.",
    "Since the last two diffusers releases the same pipeline no longer fits.",
])
def test_one_library_at_two_builds_or_a_recent_release_is_a_version_change(note):
    assert _signals(note).upgrade_regression


@pytest.mark.parametrize("note", ["Setting dropout to 0.35 made training slower; reverting the learning rate 0.34 did not help.",
                                  "Starting with a batch of 32 it fails."])
def test_settings_and_sizes_are_no_version_change(note):
    assert not _signals(note).upgrade_regression


@pytest.mark.parametrize("note", ["The clip model crashes once the video frames exceed 60, even though the epoch count is set to 1.",
                                  "Training dies as soon as a sample has more than 64 frames.",
                                  "It runs out of memory when the number of frames is above 120."])
def test_frames_counted_past_a_few_dozen_are_the_input(note):
    signals = _signals(note)
    assert signals.long_input and not signals.batch_no_help
    assert ids("torch.cuda.OutOfMemoryError: CUDA out of memory.", note)[0] == "input_size_too_large"


@pytest.mark.parametrize("note", ["The agent fails after 10 million frames of training.", "It crashed once the replay held 5000000 frames."])
def test_millions_of_frames_are_a_runs_steps_not_an_input(note):
    assert not _signals(note).long_input


@pytest.mark.parametrize("note", ["It crashes even though the training epoch is set to 1.",
                                  "It still fails after I set num_workers to 2."])
def test_a_setting_lowered_to_one_is_no_smaller_batch(note):
    assert not _signals(note).batch_no_help


def test_a_batch_lowered_to_one_that_still_fails_stays_no_help():
    assert _signals("It still fails when I lowered the batch from 8 to 1.").batch_no_help


@pytest.mark.parametrize("note", ["I ran it on a single 2080ti with the batch size set to 1. Why does memory burst after the second epoch?",
                                  "With batch_size = 1 the whole thing crashes after 3 epochs on a 6GB card.",
                                  "My batch size is 1; memory keeps growing and it fails after 500 steps."])
def test_a_batch_of_one_that_ran_steps_first_is_no_batch_too_large(note):
    assert _signals(note).batch_size == 1
    causes = ranked("RuntimeError: CUDA out of memory.", note)
    assert "batch_too_large" not in [cause.id for cause in causes[:2]]
    batch = next((cause for cause in causes if cause.id == "batch_too_large"), None)
    assert batch is None or "there is no smaller batch" in " ".join(batch.counter_evidence)


@pytest.mark.parametrize("note", ["With a batch size of 1 it trains, with 8 it runs out.", "I set the batch size to 4 and it ran fine."])
def test_a_batch_said_to_work_is_not_vetoed(note):
    assert "there is no smaller batch" not in " ".join(
        next((cause.counter_evidence for cause in ranked("RuntimeError: CUDA out of memory.", note) if cause.id == "batch_too_large"), []))


def test_running_a_program_somewhere_is_no_batch_that_went_through():
    signals = _signals("I ran on a single 2080ti and adjusted the batch size to 2. Why does it burst after the second epoch?")
    assert not signals.stated_batch_fits and not signals.stated_batch_worked


@pytest.mark.parametrize("note", ["I use the detectron2 API to process a video in a FOR loop, image after image, and it runs out after one image.",
                                  "Running inference with detectron2 on a folder of images in a for loop runs out of memory after a few images.",
                                  "Calling the mmdetection API for inference from a python loop over video frames runs out after some frames."])
def test_a_frameworks_model_called_from_the_users_own_loop_is_own_code(note):
    signals = _signals(note)
    assert signals.own_code
    assert ids("RuntimeError: CUDA out of memory.", note)[0] in ("missing_no_grad", "reference_leak")


def test_the_frameworks_own_evaluation_stays_managed():
    assert not _signals("detectron2 evaluation on COCO runs out of memory at the end of inference.").own_code


@pytest.mark.parametrize("note", [
    "FSDP training goes well but I get cuda oom when saving the final checkpoint: the entire fp32 state dict cannot fit in my gpu memory.",
    "Saving the float32 checkpoint at the end of training with FSDP runs out of GPU memory.",
])
def test_the_precision_of_a_saved_state_dict_is_not_the_runs(note):
    assert not _signals(note).full_precision_said
    assert ids("torch.cuda.OutOfMemoryError: CUDA out of memory.", note)[0] == "distributed_replication"


def test_training_in_fp32_is_still_full_precision():
    assert _signals("Training LLaMA-7B in fp32 on 8 A100s fails at the first step.").full_precision_said


@pytest.mark.parametrize("note", [
    "There appears to be a memory leak during the validation routine: the A40 runs out after training for 125 epochs.",
    "Training itself is fine but GPU memory keeps growing in the validation loop every epoch until it crashes.",
    "The eval loop leaks: after each evaluation the memory goes up and training dies after 10 epochs.",
])
def test_growth_placed_in_the_evaluation_between_epochs_is_kept_results(note):
    assert _signals(note).leak_in_eval
    assert ids("RuntimeError: CUDA error: out of memory", note)[0] == "reference_leak"


def test_a_leak_in_an_evaluation_script_alone_is_not_between_epochs():
    assert not _signals("Memory leaks during the evaluation of my saved model on the test set.").leak_in_eval


def test_growth_during_training_alone_stays_a_retained_graph():
    note = "Memory keeps growing during training until OOM after 2000 steps."
    assert not _signals(note).leak_in_eval
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "graph_retained"


@pytest.mark.parametrize("note", ["In loops/batch/training_batch_loop.py, training_step_and_backward keeps the loss; memory rises after a few iterations.",
                                  "Memory grows inside my train_one_epoch function.",
                                  "My training_step returns the whole output dict and memory climbs."])
def test_code_named_for_the_training_step_is_training(note):
    assert _signals(note).phase == "training"


def test_a_datasets_split_name_is_no_training():
    assert _signals("Using the train_2 split for eval runs out.").phase != "training"


@pytest.mark.parametrize("note", ["Is there a way to do graph convolution on huge graphs? A single GPU runs out of memory.",
                                  "GCN training on a very large citation graph runs out of memory.",
                                  "Full training on a giant graph dies at the first epoch."])
def test_a_graph_said_to_be_huge_is_the_input(note):
    assert _signals(note).long_input
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "input_size_too_large"


def test_a_huge_autograd_graph_is_no_input():
    assert not _signals("A huge graph is kept across iterations because I accumulate the loss.").long_input


# --- twenty-sixth round: sets 232-233 -------------------------------------------------------------

@pytest.mark.parametrize("name, gigabytes", [("four V100-32G cards", 32), ("8 x A100-80G", 80), ("a V100-32GB", 32), ("V100", 16)])
def test_a_card_name_that_carries_its_size_has_that_size(name, gigabytes):
    from oomtriage.gpus import capacity_of_gpu, find_gpu_name
    assert capacity_of_gpu(find_gpu_name(name, bare=True)) == gigabytes * 10**9


@pytest.mark.parametrize("note", ["the single scale test uses about 9000M video memory on an 11G card",
                                  "it already takes 7500M of GPU memory before the first batch",
                                  "nvidia-smi says 6000M graphics memory is used"])
def test_megabytes_of_memory_are_no_parameter_count(note):
    assert _signals(note).param_count is None


def test_a_model_size_in_millions_is_still_a_parameter_count():
    assert _signals("fine-tuning a 350M model on one card").param_count == 350e6


@pytest.mark.parametrize("note", ["With the latest version of the code, fine-tuning the same 7B model with LoRA runs out of memory.",
                                  "On the current master the config from the README OOMs at the first step.",
                                  "Using the newest commit of the repo, training crashes with out of memory."])
def test_the_newest_code_named_as_the_condition_of_the_failure_is_a_version_change(note):
    assert _signals(note).upgrade_regression
    assert ids("torch.cuda.OutOfMemoryError: CUDA out of memory.", note)[0] == "framework_bug"


def test_the_latest_version_said_in_passing_is_no_version_change():
    assert not _signals("I have tested with the latest version of the code. Batch size 64 on a 3090.").upgrade_regression


_NO_CACHE_BLOCKS = ("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
                    "when initializing the engine.")


@pytest.mark.parametrize("note", ["A second vLLM instance of the same small model on the same GPU fails to start, the first one runs.",
                                  "I serve two models on one A100 with gpu_memory_utilization 0.4 each.",
                                  "When I launch the 13B server first and then the 7B one, the 7B one refuses to start.",
                                  "Both servers start fine when they are launched separately."])
def test_a_second_engine_on_a_card_another_uses_is_the_other_process(note):
    assert _signals(note, _NO_CACHE_BLOCKS).engines_share_gpu
    assert ids(_NO_CACHE_BLOCKS, note)[0] == "other_process_or_device"


def test_one_engine_alone_keeps_its_kv_cache_reservation():
    note = "vllm serve of a 70B model with max_model_len 32768 on four GPUs"
    assert not _signals(note, _NO_CACHE_BLOCKS).engines_share_gpu
    assert ids(_NO_CACHE_BLOCKS, note)[0] == "kv_cache_or_generation"


@pytest.mark.parametrize("note", ["Running llama3 70b in ollama with num_ctx 65536 crashes as soon as the model loads.",
                                  "llama.cpp server with -c 32768 is out of memory right away, with -c 4096 it works.",
                                  "Raising the context length to 16384 for my gguf model makes it fail at load, even with short prompts."])
def test_a_context_window_set_for_an_inference_runtime_is_its_kv_cache(note):
    assert _signals(note).context_window_set
    assert ids("CUDA error: out of memory", note)[0] == "kv_cache_or_generation"


def test_a_context_length_in_training_is_no_runtime_reservation():
    note = "Fine-tuning llama with a context length of 8192 on one A100 runs out of memory in the backward."
    assert not _signals(note).context_window_set


@pytest.mark.parametrize("note, capacity", [("a 34B gguf on my 2080 Ti (22 GB) loads fine", 22e9),
                                            ("on a 2080 Ti (22 GB VRAM) it ran", 22e9)])
def test_a_size_the_note_states_overrides_the_table_for_the_cards_name(note, capacity):
    from oomtriage.engine.facts import compute_numbers
    context = build_context(text="CUDA error: out of memory", note=note)
    assert compute_numbers(context, read_signals(context)).capacity == capacity


def test_weights_that_ran_with_a_smaller_input_are_not_too_large():
    note = "A 34B Q4_K_M gguf on a 16 GB card runs without a problem with context length 2048, but 4096 fails."
    assert "model_too_large" not in ids("CUDA error: out of memory", note)[:2]


@pytest.mark.parametrize("note", ["Loading a 65B 4bit model fills system RAM and it fails while 12GB of VRAM is still free.",
                                  "While the checkpoint loads the host RAM fills up, the GPU stays mostly empty, then CUDA out of memory."])
def test_loading_that_fills_host_ram_while_the_card_has_room_is_the_host(note):
    assert ids("CUDA error: out of memory", note)[0] == "dataloader_or_host"


@pytest.mark.parametrize("note", ["make_grid(netG(fixed_noise)) every 100 steps eats a lot of memory; commenting it out fixes the OOM.",
                                  "I save sample images every epoch during training and it runs out of memory at the second one.",
                                  "Generating preview images between training steps uses several GB; after removing it training fits."])
def test_samples_generated_during_training_without_no_grad(note):
    assert _signals(note).samples_in_training
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "missing_no_grad"


def test_samples_generated_under_no_grad_are_not_blamed():
    note = "I save sample images every epoch during training, under torch.no_grad(), and it runs out of memory."
    assert "missing_no_grad" not in ids("RuntimeError: CUDA out of memory.", note)[:1]


@pytest.mark.parametrize("note", ["The inferer puts all tiles of the image into one batch, so large scenes run out of memory.",
                                  "It stacks every patch of the slide into a single batch before the forward.",
                                  "The script feeds all the crops of a 4000x3000 photo through the network as one batch."])
def test_every_tile_sent_in_one_batch_is_the_batch(note):
    assert _signals(note).tiled_input
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "batch_too_large"


def test_sliding_window_inference_of_a_large_volume_is_its_stitched_output():
    note = "Sliding window inference on large 3D volumes of 512x512x400 runs out of GPU memory during validation."
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "input_size_too_large"


@pytest.mark.parametrize("note", ["when the points number is over 60000 it runs out of memory",
                                  "once the point count exceeds 100k the KNN fails"])
def test_an_element_count_written_after_the_elements_is_the_input(note):
    assert _signals(note).long_input


def test_a_huge_request_to_the_host_allocator_is_host_ram():
    text = ("RuntimeError: [enforce fail at alloc_cpu.cpp:83] . DefaultCPUAllocator: can't allocate memory: you tried "
            "to allocate 80000000000 bytes. Error code 12 (Cannot allocate memory)")
    assert ids(text, "it fails in the test function")[0] == "dataloader_or_host"


@pytest.mark.parametrize("note", ["The self-play worker loads the newest model again and again and after a few hours it dies.",
                                  "We reload the checkpoint every round of the tournament; memory is full after 30 rounds.",
                                  "After 50 times of load_model() in the same process TensorFlow raises OOM."])
def test_a_model_loaded_again_and_again_in_one_process_is_kept_models(note):
    assert _signals(note).repeated_loading
    assert ids("ResourceExhaustedError: OOM when allocating tensor with shape[512,512,3,3]", note)[0] == "reference_leak"


def test_one_load_of_a_checkpoint_is_no_repeated_loading():
    assert not _signals("Loading the checkpoint once at start-up runs out of memory.").repeated_loading


@pytest.mark.parametrize("note", ["Llama 70b with a 128k context doesn't fit 96Gb.", "The model is too big to fit in 24 GB.",
                                  "It will not fit on one card."])
def test_memory_that_does_not_fit_is_no_keras_fit(note):
    assert _signals(note).phase != "training"


@pytest.mark.parametrize("text", [
    "E tensorflow/stream_executor/cuda/cuda_driver.cc:955] failed to alloc 17179869184 bytes on host: CUDA_ERROR_OUT_OF_MEMORY",
    "W tensorflow/core/common_runtime/gpu/pool_allocator.h:195] could not allocate pinned host memory of size: 17179869184"])
def test_tensorflows_host_allocations_are_host_memory(text):
    context = build_context(text=text)
    assert context.error is not None and context.error.backend == "host"
    assert ids(text, "predicting over a few million images")[0] == "dataloader_or_host"


@pytest.mark.parametrize("text", ["RuntimeError: offload initialization failed: can't allocate memory",
                                  "ERROR: cant allocate memory for the optimizer states on the host"])
def test_cant_allocate_memory_from_a_wrapping_library_is_host_memory(text):
    context = build_context(text=text)
    assert context.error is not None and context.error.backend == "host"


@pytest.mark.parametrize("note", ["According to the docs, passing the model to zero.Init should behave just like building it inside, but it OOMs.",
                                  "The documentation says this flag lowers peak memory, but memory is the same with it.",
                                  "Contrary to the documentation, offloading the optimizer keeps it on the GPU."])
def test_behaviour_contrary_to_the_documentation_is_the_library(note):
    assert _signals(note).contrary_to_docs
    assert "framework_bug" in ids("torch.cuda.OutOfMemoryError: CUDA out of memory.", note)[:2]


def test_a_remote_device_for_offload_is_no_cpu_run():
    assert not _signals("with deepspeed.zero.Init(config_dict_or_path=cfg, remote_device='cpu'): build the model").cpu_mode
    assert _signals("I run it with device='cpu' and it still asks for CUDA memory").cpu_mode


@pytest.mark.parametrize("note", ["At test time I call model.step(frame) for every frame of my video in a for loop.",
                                  "I use the model's API on each image of a folder in a for loop and memory climbs."])
def test_the_users_own_inference_loop_needs_its_own_no_grad(note):
    evidence = evidence_of("torch.cuda.OutOfMemoryError: CUDA out of memory.", f"When testing: {note}", "missing_no_grad")
    assert "the user's own" in evidence


@pytest.mark.parametrize("shape", ["[1,256,256,256,16]", "[2,32,192,192,192]"])
def test_a_failing_five_dimensional_tensor_of_a_large_volume_is_the_input(shape):
    text = (f"Resource exhausted: OOM when allocating tensor with shape{shape} and type float on "
            "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc")
    assert ids(text, "it fails at the first step")[0] == "input_size_too_large"
    assert "The failing tensor" in evidence_of(text, "it fails at the first step", "input_size_too_large")


def test_a_small_five_dimensional_tensor_is_no_large_volume():
    text = ("Resource exhausted: OOM when allocating tensor with shape[64,16,32,32,32] and type float on "
            "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc")
    assert "The failing tensor" not in evidence_of(text, None, "input_size_too_large")


@pytest.mark.parametrize("note", ["With safetensors I get an OOM while torch.load() just works for the same 13B checkpoint.",
                                  "Loading the .bin files works, but with safetensors it runs out of memory on the same card.",
                                  "Using from_pretrained the weights load fine, but via load_state_dict it fails with OOM."])
def test_weights_that_load_another_way_are_the_loaders_copies(note):
    assert _signals(note).other_loader_works
    ranking = ids("torch.cuda.OutOfMemoryError: CUDA out of memory.", note)
    assert ranking[0] == "checkpoint_loading"


_XLA_HBM = ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory "
            "in memory space hbm. Used 20.10G of 15.48G hbm. Exceeded hbm capacity by 4.62G.")


@pytest.mark.parametrize("note", ["With accumulate_gradient_steps=1 it is normal, but with accumulate_gradient_steps=4 it runs out of memory.",
                                  "optax.MultiSteps with anything above 1 gives an OOM.",
                                  "When I turn on gradient accumulation the same model fails with OOM."])
def test_turning_on_gradient_accumulation_in_jax_is_the_accumulator(note):
    assert _signals(note, _XLA_HBM).accumulation_adds_memory
    assert ids(_XLA_HBM, note)[0] == "optimizer_state"


def test_gradient_accumulation_in_pytorch_adds_no_accumulator():
    note = "With gradient_accumulation_steps=1 it is fine, but with gradient_accumulation_steps=8 it runs out of memory."
    assert "optimizer_state" not in ids("torch.cuda.OutOfMemoryError: CUDA out of memory.", note)[:1]


@pytest.mark.parametrize("note", ["python -m models.llama.llama_train --fsdp=True dies", "run_train.py crashes at once",
                                  "gradient accumulation of 4 steps on a small card"])
def test_a_training_script_or_accumulated_gradients_are_training(note):
    assert _signals(note).phase == "training"


def test_a_data_split_named_train_is_no_training_script():
    assert _signals("model.predict(x_train) runs out of memory").phase != "training"


@pytest.mark.parametrize("note", ["A smaller beam worked for some files, but some longer files still fail.",
                                  "Lowering the batch helped for most prompts, but the longest ones still OOM.",
                                  "It runs for the short recordings while the long ones crash."])
def test_a_remedy_that_helps_only_shorter_inputs_leaves_the_input(note):
    assert _signals(note).longer_item_at_failure


@pytest.mark.parametrize("note", ["I pass device='cuda:2' to the pipeline but it still allocates memory on cuda:0, which is full.",
                                  "I can't make it use gpu 1, it always uses gpu 0.",
                                  "With --gpus \"1,\" the GPU 0 memory still gets used for the GPU 1 job while the model loads."])
def test_memory_on_gpu0_when_another_gpu_was_chosen_is_the_device(note):
    assert _signals(note).gpu0_used_instead
    assert ids("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.", note)[0] == "other_process_or_device"


def test_choosing_gpu0_itself_is_no_other_device():
    assert not _signals("I run on cuda:0 and it uses most of gpu 0 memory").gpu0_used_instead


@pytest.mark.parametrize("note", ["The memory used by the LSTM in train mode increases linearly until OOM.",
                                  "GPU usage grows steadily over the run.", "VRAM climbs constantly while it trains."])
def test_memory_said_to_grow_with_an_adverb_after_the_verb_is_growth(note):
    assert _signals(note).growth


@pytest.mark.parametrize("note", ["With cudnn the memory increases linearly; with torch.backends.cudnn.enabled = False it stays as expected.",
                                  "Memory grows every step, but after disabling xformers the leak is gone."])
def test_growth_that_stops_with_the_backend_off_is_the_library(note):
    assert _signals(note).backend_off_fixes
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "framework_bug"


def test_a_failure_that_stops_with_cudnn_off_at_once_is_its_workspace():
    note = "It fails at the first conv; with torch.backends.cudnn.enabled = False it works."
    assert ids("RuntimeError: CUDA out of memory.", note)[0] == "cudnn_or_workspace"


@pytest.mark.parametrize("note", ["This looks closely related to previous bugs which have already been fixed.",
                                  "It is the same as an earlier issue that was marked as fixed, but it still happens on 2.1."])
def test_a_known_bug_said_to_be_back_is_the_library(note):
    assert _signals(note).known_bug_back
    assert "framework_bug" in ids("RuntimeError: CUDA out of memory.", note)[:2]
