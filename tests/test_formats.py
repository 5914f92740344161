"""Every OOM format of the reference, through the real CLI, with the fields each format carries."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from oomtriage.api import analyze_inputs
from oomtriage.cli import app
from tests.conftest import LOGS

GIB = 1024**3
MIB = 1024**2

# fixture -> (format, backend, expected error fields (bytes rounded to 0.01 of the printed unit))
EXPECTED = {
    "pytorch_a_thc.log": ("pytorch_thc", "cuda", {"exception_type": "RuntimeError"}),
    "pytorch_b_cached.log": ("pytorch_parenthesised", "cuda", {"requested_bytes": 16 * GIB, "device_index": 0, "allocated_bytes": 4 * GIB}),
    "pytorch_c_reserved.log": ("pytorch_parenthesised", "cuda", {"requested_bytes": 152 * MIB, "reserved_bytes": round(30.70 * GIB)}),
    "pytorch_c_hint.log": ("pytorch_parenthesised", "cuda", {"exception_type": "OutOfMemoryError", "free_bytes": round(1.04 * GIB)}),
    "pytorch_c_allowed.log": ("pytorch_parenthesised", "cuda", {"allowed_bytes": 4 * GIB}),
    "pytorch_d1_capacty.log": ("pytorch_sentence", "cuda", {"total_bytes": round(15.90 * GIB), "reserved_unallocated_bytes": round(410.41 * MIB),
                                                           "self_process_bytes": round(15.32 * GIB)}),
    "pytorch_d2_expandable.log": ("pytorch_sentence", "cuda", {"requested_bytes": round(19.68 * GIB), "free_bytes": round(11.88 * GIB)}),
    "pytorch_d3_other_process.log": ("pytorch_sentence", "cuda", {"device_index": 1, "exception_type": "torch.OutOfMemoryError"}),
    "pytorch_d3_private_pools_hip.log": ("pytorch_sentence", "hip", {"private_pool_bytes": 17 * MIB, "allowed_bytes": round(1.05 * GIB)}),
    "pytorch_hip.log": ("pytorch_sentence", "hip", {"allocated_bytes": 0, "requested_bytes": 16 * GIB}),
    "pytorch_xpu.log": ("pytorch_sentence", "xpu", {"requested_bytes": 4 * GIB}),
    "pytorch_mps.log": ("pytorch_mps", "mps", {"requested_bytes": GIB, "allowed_bytes": round(18.13 * GIB)}),
    "pytorch_cuda_malloc_async.log": ("pytorch_cuda_malloc_async", "cuda", {"requested_bytes": round(1.5 * GIB), "free_bytes": round(18.06 * MIB)}),
    "pytorch_cpu_allocator.log": ("pytorch_cpu_allocator", "cpu", {"requested_bytes": 137438953472}),
    "cuda_raw_accelerator.log": ("cuda_runtime_error", "cuda", {"exception_type": "torch.AcceleratorError"}),
    "cublas_alloc.log": ("cublas_alloc_failed", "cuda", {"library": "cublas"}),
    "cudnn_alloc.log": ("cudnn_alloc_failed", "cuda", {"library": "cudnn"}),
    "nccl_oom.log": ("nccl_cuda_oom", "cuda", {"library": "nccl", "rank": 7}),
    "cupy_pool.log": ("cupy_memory_pool", "cuda", {"library": "cupy", "requested_bytes": 163840000, "allocated_bytes": 1673061376 - 163840000}),
    "tensorrt_builder.log": ("tensorrt_alloc_failed", "cuda", {"library": "tensorrt", "requested_bytes": 16 * GIB}),
    "tf1_graph.log": ("tensorflow_oom_tensor", "cuda", {"tensor_shape": [64, 2016, 9, 9], "tensor_dtype": "float"}),
    "tf2_fit.log": ("tensorflow_oom_tensor", "cuda", {"tensor_shape": [16, 64, 64, 64], "exception_type": "ResourceExhaustedError"}),
    "tf_eager.log": ("tensorflow_oom_tensor", "cuda", {"operation": "FusedBatchNorm"}),
    "tf_driver.log": ("tensorflow_driver", "cuda", {"requested_bytes": 33554432}),
    "jax_buffer_dump.log": ("xla_resource_exhausted", "cuda", {"requested_bytes": 2110783616, "tensor_shape": [5104, 257152]}),
    "jax_xla_runtime.log": ("xla_resource_exhausted", "cuda", {"requested_bytes": 34912723376}),
    "jax_rocm.log": ("xla_failed_request", "unknown", {"requested_bytes": round(154.06 * GIB)}),
    "tpu_compile.log": ("xla_tpu_compile", "tpu", {"total_bytes": 32 * GIB}),
    "metal_command_buffer.log": ("metal_command_buffer", "mps", {"library": "mlx"}),
    "host_dataloader_killed.log": ("dataloader_worker_killed", "host", {}),
    "host_bus_error.log": ("dataloader_worker_killed", "host", {}),
    "host_killed.log": ("process_killed", "host", {}),
    "host_slurm.log": ("cgroup_oom_kill", "host", {}),
    "chained_traceback.log": ("pytorch_sentence", "cuda", {"requested_bytes": 20 * MIB}),
    "multirank_torchrun.log": ("pytorch_sentence", "cuda", {"rank": 1}),
    "memory_summary_old.log": ("pytorch_parenthesised", "cuda", {"requested_bytes": round(9.91 * GIB)}),
}
NOT_OOM = {
    "not_oom_illegal_access.log": "cuda_illegal_address",
    "not_oom_device_assert.log": "cuda_device_assert",
    "not_oom_launch_resources.log": "cuda_launch_resources",
    "tf_not_a_failure.log": "tensorflow_not_a_failure",
    "not_oom_triton_shared_memory.log": "triton_shared_memory",
}
runner = CliRunner()


def analyze(path) -> dict:
    result = runner.invoke(app, ["analyze", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_every_fixture_is_covered():
    assert set(EXPECTED) | set(NOT_OOM) == {path.name for path in LOGS.glob("*.log")}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_oom_format_is_parsed(name):
    report = analyze(LOGS / name)
    expected_format, backend, fields = EXPECTED[name]
    assert report["detected"] is True
    error = report["error"]
    assert error["format"] == expected_format
    assert error["backend"] == backend
    for key, value in fields.items():
        if isinstance(value, int) and not isinstance(value, bool) and key.endswith("_bytes") and value > 1024:
            assert error[key] == pytest.approx(value, rel=0.001), key  # printed with two decimals
        else:
            assert error[key] == value, key
    assert report["causes"], "an OOM always gets ranked causes"
    assert all(0 <= cause["confidence"] <= 1 and cause["evidence"] for cause in report["causes"])


@pytest.mark.parametrize("name", sorted(NOT_OOM))
def test_non_oom_errors_are_not_alarms(name):
    report = analyze(LOGS / name)
    assert report["detected"] is False
    assert report["causes"] == []
    assert report["non_oom_errors"][0]["format"] == NOT_OOM[name]
    assert "not" in report["explanation"][0].lower()


def test_multirank_log_counts_ranks_and_extra_ooms():
    report = analyze(LOGS / "multirank_torchrun.log")
    assert report["failing_ranks"] == [0, 1]
    assert report["additional_ooms"] == 1


def test_sentence_form_explains_numbers_in_plain_words():
    report = analyze(LOGS / "pytorch_d1_capacty.log")
    text = " ".join(report["explanation"])
    assert "reserved but not in use" in text and "free" in text
    names = {fact["name"] for fact in report["facts"]}
    assert {"requested_bytes", "capacity_bytes", "allocated_bytes", "reserved_unallocated_bytes", "free_bytes"} <= names


def test_other_process_is_named_and_ranked_first():
    report = analyze(LOGS / "pytorch_d3_other_process.log")
    assert report["causes"][0]["id"] == "other_process_or_device"
    other = next(f for f in report["facts"] if f["name"] == "other_processes_bytes")
    assert other["value"] == pytest.approx(51.82 * GIB, rel=0.001)


def test_request_larger_than_device_is_flagged():
    report = analyze(LOGS / "pytorch_hip.log")
    exceeds = next(f for f in report["facts"] if f["name"] == "request_exceeds_device")
    assert exceeds["value"] is True
    assert report["causes"][0]["id"] in {"input_size_too_large", "batch_too_large", "attention_quadratic", "large_logits"}


def test_allowed_cap_is_reported():
    report = analyze(LOGS / "pytorch_c_allowed.log")
    assert report["causes"][0]["id"] == "other"
    assert "memory fraction" in report["causes"][0]["evidence"][0] or "caps" in report["causes"][0]["evidence"][0]


def test_memory_summary_in_log_is_parsed():
    from oomtriage.context import build_context

    context = build_context([LOGS / "memory_summary_old.log"])
    assert context.memory_stats.source == "memory_summary"
    assert context.memory_stats.reserved_bytes == 12420 * MIB
    assert context.memory_stats.allocated_peak_bytes == 4877 * MIB
    assert context.memory_stats.num_alloc_retries == 1


def test_tensorflow_driver_line_without_the_byte_count():
    from oomtriage.context import build_context

    context = build_context(text="failed to allocate 3.50G from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory")
    assert context.error.format == "tensorflow_driver"
    assert context.error.requested_bytes == int(3.5 * 2**30)


@pytest.mark.parametrize(("text", "requested"), [
    ("ggml_vulkan: Device memory allocation of size 2147483648 failed.\nggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory", 2 * 2**30),
    ("vkAllocateMemory returned VK_ERROR_OUT_OF_DEVICE_MEMORY", None),
])
def test_vulkan_device_memory_failures(text, requested):
    from oomtriage.context import build_context

    context = build_context(text=text)
    assert context.error.format == "vulkan_device_memory"
    assert context.error.backend == "vulkan"
    assert context.error.requested_bytes == requested


def test_a_lost_vulkan_device_is_no_oom():
    from oomtriage.context import build_context

    assert build_context(text="ggml_vulkan: vk::Queue::submit: ErrorDeviceLost").error is None


@pytest.mark.parametrize(("text", "requested", "framework"), [
    ("RuntimeError: Could not allocate tensor with 536870912 bytes. There is not enough GPU video memory available!", 2**29, "pytorch"),
    ("[W dml_heap_allocator.cc:120] DML allocator out of memory!\nRuntimeError: Unknown error -2147024882", None, "pytorch"),
])
def test_directml_allocation_failures(text, requested, framework):
    from oomtriage.context import build_context

    context = build_context(text=text)
    assert context.error.format == "directml_allocator"
    assert context.error.backend == "directml"
    assert context.error.requested_bytes == requested
    assert context.error.framework == framework


@pytest.mark.parametrize(("text", "requested"), [
    ("MemoryError: std::bad_alloc: out_of_memory: CUDA error (failed to allocate 8589934592 bytes) at: "
     "/opt/conda/include/rmm/mr/device/cuda_memory_resource.hpp:60: cudaErrorMemoryAllocation out of memory", 8 * 2**30),
    ("terminate called after throwing an instance of 'rmm::out_of_memory'\n  what():  std::bad_alloc: out_of_memory: "
     "RMM failure at:/opt/include/rmm/mr/device/pool_memory_resource.hpp:196: Maximum pool size exceeded", None),
    ("RMM call failed with result RMM_ERROR_OUT_OF_MEMORY (4) Attempted to allocate: 1000000000 bytes.\n"
     "Exception: MemoryError('std::bad_alloc')", 10**9),
])
def test_rapids_memory_manager_failures_are_gpu_ooms(text, requested):
    from oomtriage.context import build_context

    context = build_context(text=text)
    assert context.error.format == "rmm_out_of_memory"
    assert context.error.backend == "cuda" and context.error.library == "rmm"
    assert context.error.requested_bytes == requested
    from oomtriage.api import analyze_inputs

    assert analyze_inputs([], text=text, note=None).causes[0].id == "input_size_too_large"


def test_a_plain_host_bad_alloc_stays_a_host_failure():
    from oomtriage.context import build_context

    assert build_context(text="MemoryError: std::bad_alloc").error.backend == "host"


@pytest.mark.parametrize("text", [
    "Resource exhausted: OOM when allocating tensor with shape[16,128,98,98] and type float on "
    "/job:localhost/replica:0/task:0/device:DML:0 by allocator DmlAllocator",
    "W tensorflow/core/common_runtime/bfc_allocator.cc:440] Allocator (DmlAllocator) ran out of memory trying to allocate "
    "5.49MiB (rounded to 5760000).  Current allocation summary follows.",
])
def test_tensorflow_directml_ooms_name_the_directml_backend(text):
    from oomtriage.context import build_context

    error = build_context(text=text).error
    assert error.framework == "tensorflow" and error.backend == "directml"


@pytest.mark.parametrize(("text", "fmt", "requested", "allocated", "free"), [
    ("Out of memory error on GPU 0. Cannot allocate 2.250000GB memory on GPU 0, available memory is only 300.500000MB.\n\n"
     "Please check whether there is any other process using GPU 0.", "paddle_out_of_memory", round(2.25 * GIB), None, round(300.5 * MIB)),
    ("Out of memory error on GPU 1. Cannot allocate 64.000000MB memory on GPU 1, 11.250000GB memory has been allocated and "
     "available memory is only 40.000000MB.", "paddle_out_of_memory", 64 * MIB, round(11.25 * GIB), 40 * MIB),
    ("Cannot malloc 120.5 MB GPU memory. Please shrink FLAGS_fraction_of_gpu_memory_to_use or FLAGS_initial_gpu_memory_in_mb "
     "environment variable to a lower value.", "paddle_cannot_malloc", round(120.5 * MIB), None, None),
    # Paddle 2.x prints its exception's name alone on a line, the allocator's message two lines below
    ("ResourceExhaustedError: \n\nOut of memory error on GPU 0. Cannot allocate 512.000244MB memory on GPU 0, 7.500000GB memory has "
     "been allocated and available memory is only 100.000000MB.\n\nPlease check whether there is any other process using GPU 0.",
     "paddle_out_of_memory", round(512.000244 * MIB), round(7.5 * GIB), 100 * MIB),
    ("SystemError: (Fatal) Operator matmul raises an paddle::memory::allocation::BadAlloc exception.\nThe exception content is\n"
     ":ResourceExhaustedError: \n\nOut of memory error on GPU 2. Cannot allocate 2.000000GB memory on GPU 2, 13.000000GB memory has "
     "been allocated and available memory is only 1.000000GB.", "paddle_out_of_memory", 2 * GIB, 13 * GIB, GIB),
])
def test_paddlepaddle_allocator_messages(text, fmt, requested, allocated, free):
    result = CliRunner().invoke(app, ["analyze", "-", "--format", "json"], input=text)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    error = report["error"]
    assert (error["format"], error["framework"], error["backend"]) == (fmt, "paddle", "cuda")
    assert (error["requested_bytes"], error["allocated_bytes"], error["free_bytes"]) == (requested, allocated, free)
    # Paddle's own advice to look for another process is boilerplate, not a sign of one
    assert report["causes"][0]["id"] != "other_process_or_device"


@pytest.mark.parametrize(("text", "backend", "requested", "free", "device"), [
    # torch_npu (Ascend) mirrors the caching allocator's parenthesised form, with a "current active" segment
    ("RuntimeError: NPU out of memory. Tried to allocate 96.00 MiB (NPU 2; 29.50 GiB total capacity; 20.00 GiB already "
     "allocated; 20.00 GiB current active; 12.00 MiB free; 21.00 GiB reserved in total by PyTorch)", "npu", 96 * MIB, 12 * MIB, 2),
    ("torch.OutOfMemoryError: MUSA out of memory. Tried to allocate 2.00 GiB (GPU 0; 47.00 GiB total capacity; 44.00 GiB "
     "already allocated; 1.00 GiB free; 45.00 GiB reserved in total by PyTorch)", "musa", 2 * GIB, GIB, 0),
    ("RuntimeError: MLU out of memory. Tried to allocate 512.00 MiB (MLU 1; 15.00 GiB total capacity; 14.00 GiB already "
     "allocated; 300.00 MiB free; 14.50 GiB reserved in total by PyTorch)", "mlu", 512 * MIB, 300 * MIB, 1),
])
def test_out_of_tree_pytorch_backends_carry_the_allocator_figures(text, backend, requested, free, device):
    result = CliRunner().invoke(app, ["analyze", "-", "--format", "json"], input=text)
    assert result.exit_code == 0, result.output
    error = json.loads(result.stdout)["error"]
    assert (error["framework"], error["backend"], error["format"]) == ("pytorch", backend, "pytorch_parenthesised")
    assert (error["requested_bytes"], error["free_bytes"], error["device_index"]) == (requested, free, device)


def test_a_request_past_the_printers_range_is_read_as_its_floor():
    result = CliRunner().invoke(app, ["analyze", "-", "--format", "json"], input="NPU out of memory. Tried to allocate more than 1EB memory\n")
    report = json.loads(result.stdout)
    assert report["error"]["backend"] == "npu" and report["error"]["requested_bytes"] == 2**60
    assert report["causes"][0]["id"] == "framework_bug"


@pytest.mark.parametrize(("text", "library"), [
    ('OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading '
     '"C:\\envs\\sr\\lib\\site-packages\\torch\\lib\\cudnn_ops_infer64_8.dll" or one of its dependencies.', "cudnn_ops_infer64_8.dll"),
    ('OSError: [WinError 1455] 页面文件太小，无法完成操作。 Error loading "E:\\py\\torch\\lib\\c10_cuda.dll" or one of its dependencies.',
     "c10_cuda.dll"),
    ("OSError: [WinError 1455] ページング ファイルが小さすぎるため、この操作を完了できません。", None),
    ("  File \"multiprocessing\\heap.py\", line 55, in __setstate__\nOSError: [WinError 1455] The paging file is too small for this "
     "operation to complete", None),
])
def test_windows_commit_limit_is_a_host_failure(text, library):
    result = CliRunner().invoke(app, ["analyze", "-", "--format", "json"], input=text)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["detected"] and report["error"]["format"] == "windows_commit_limit"
    assert report["error"]["backend"] == "host" and report["error"]["library"] == library
    assert report["causes"][0]["id"] == "dataloader_or_host"
    assert "paging file" in " ".join(report["causes"][0]["evidence"])


@pytest.mark.parametrize("text", [
    "OSError: [Errno 12] Cannot allocate memory",
    "RuntimeError: DataLoader worker exited unexpectedly\nOSError: [Errno 12] Cannot allocate memory",
    "LLVM ERROR: JIT session error: Cannot allocate memory",
])
def test_enomem_is_a_refused_host_allocation(text):
    report = json.loads(CliRunner().invoke(app, ["analyze", "-", "--format", "json"], input=text).stdout)
    assert report["detected"] and report["error"]["format"] == "host_enomem" and report["error"]["backend"] == "host"
    top = report["causes"][0]
    assert top["id"] == "dataloader_or_host" and "killed" not in " ".join(top["evidence"])


@pytest.mark.parametrize("text", [
    'Error: Warmup(Generation("Not enough memory to handle 8192 prefill tokens. You need to decrease `--max-batch-prefill-tokens`"))',
    "Not enough memory to handle 32000 total tokens with 512 prefill tokens. You need to decrease `--max-batch-total-tokens` "
    "or `--max-batch-prefill-tokens`",
])
def test_text_generation_inference_warmup_failures(text):
    report = json.loads(CliRunner().invoke(app, ["analyze", "-", "--format", "json"], input=text).stdout)
    assert report["detected"] and report["error"]["format"] == "serving_kv_cache"
    assert report["causes"][0]["id"] == "kv_cache_or_generation"


def test_cuda_jl_out_of_gpu_memory_carries_the_pools_figures():
    text = ("ERROR: LoadError: Out of GPU memory trying to allocate 768.000 MiB\n"
            "Effective GPU memory usage: 98.20% (7.660 GiB/7.800 GiB)\n"
            "Memory pool usage: 6.000 GiB (7.000 GiB reserved)\n"
            "Stacktrace:\n  [1] macro expansion\n    @ ~/.julia/packages/CUDA/pool.jl:411 [inlined]\n")
    report = json.loads(CliRunner().invoke(app, ["analyze", "-", "--format", "json"], input=text).stdout)
    error = report["error"]
    assert report["detected"] and error["format"] == "cuda_jl_out_of_memory" and error["library"] == "CUDA.jl"
    assert error["requested_bytes"] == 768 * MIB and error["total_bytes"] == pytest.approx(7.8 * GIB, rel=0.001)
    assert (error["allocated_bytes"], error["reserved_bytes"]) == (6 * GIB, 7 * GIB)
    assert error["free_bytes"] == pytest.approx(0.14 * GIB, rel=0.01)
    explanation = " ".join(report["explanation"])
    assert "CUDA.jl's memory pool" in explanation and "PyTorch" not in explanation


@pytest.mark.parametrize("text", [
    "(raylet) node_manager.cc:3084: 2 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to "
    "other reasons at node (ID: 5d, IP: 10.0.0.9) over the last time period.",
    "The actor is dead because its worker process has died. Worker exit type: NODE_OUT_OF_MEMORY",
    "Refer to the documentation on how to address the out of memory issue: "
    "https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html. Consider provisioning more memory on this node",
])
def test_the_raylets_summaries_of_a_memory_kill(text):
    report = json.loads(CliRunner().invoke(app, ["analyze", "-", "--format", "json"], input=text).stdout)
    assert report["detected"] and report["error"]["format"] == "ray_memory_monitor"
    assert report["causes"][0]["id"] == "dataloader_or_host"


def test_rays_memory_monitor_is_a_host_failure():
    text = ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n"
            "Memory on the node (IP: 10.1.2.3, ID: 9f) where the task was running was 30.40GB / 32.00GB (0.95), which exceeds "
            "the memory usage threshold of 0.95. Ray killed this worker (ID: 77) because it was the most recently scheduled task")
    report = json.loads(CliRunner().invoke(app, ["analyze", "-", "--format", "json"], input=text).stdout)
    assert report["error"]["format"] == "ray_memory_monitor" and report["error"]["backend"] == "host"
    assert report["causes"][0]["id"] == "dataloader_or_host"


@pytest.mark.parametrize("text", [
    "ray.memory_monitor.RayOutOfMemoryError: More than 95% of the memory on node worker-3 is used (121.6 / 128.0 GB). "
    "The top 10 memory consumers are:",
    "RayTaskError(RayOutOfMemoryError): ray::Learner.train() (pid=4411, ip=10.0.0.5)\n"
    "ray.memory_monitor.RayOutOfMemoryError: More than 90% of the memory on node gpu-node-01 is used (28.9 / 31.4 GB).",
])
def test_the_older_ray_memory_monitor_is_a_host_failure(text):
    # Ray 1.x raised from memory_monitor.py before the node ran out, whatever device the task used
    report = json.loads(CliRunner().invoke(app, ["analyze", "-", "--format", "json"], input=text).stdout)
    assert report["detected"] and report["error"]["format"] == "ray_memory_monitor"
    assert report["error"]["backend"] == "host" and report["causes"][0]["id"] == "dataloader_or_host"


@pytest.mark.parametrize("text", [
    "[ERROR] MD(901,7f,python):2024-01-01-10:00:00.000.001 [minddata/dataset/util/arena.cc:250] Init] cudaHostAlloc failed, ret[2], out of memory",
    "E0101 cuMemHostAlloc failed: out of memory",
    "RuntimeError: failed to allocate 8.00 GiB of pinned host memory",
])
def test_pinned_host_memory_failures_are_the_hosts(text):
    report = json.loads(CliRunner().invoke(app, ["analyze", "-", "--format", "json"], input=text).stdout)
    assert report["error"]["format"] == "pinned_host_alloc" and report["error"]["backend"] == "host"
    assert report["causes"][0]["id"] == "dataloader_or_host"


def test_a_cuda_error_in_the_pin_memory_thread_is_the_hosts_pinning():
    text = ('Traceback (most recent call last):\n  File "/opt/py/torch/utils/data/_utils/pin_memory.py", line 18, in _pin_memory_loop\n'
            "    data = pin_memory(data, device)\nRuntimeError: CUDA error: out of memory\n")
    report = json.loads(CliRunner().invoke(app, ["analyze", "-", "--format", "json"], input=text).stdout)
    assert report["causes"][0]["id"] == "dataloader_or_host"


@pytest.mark.parametrize("line, fmt", [
    ("[>>>>>     ] 1022/5000, 1.5 task/s, elapsed: 673s已杀死", "process_killed"),
    ('OSError: [WinError 1455] 页面文件太小，无法完成操作。 Error loading "D:\\\\venv\\\\torch\\\\lib\\\\c10.dll"', "windows_commit_limit"),
    ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 65536.", None),
])
def test_new_forms_are_found_in_a_log_too_large_to_read_whole(tmp_path, line, fmt):
    # past the head kept whole, only lines holding a prefilter key are examined
    filler = "epoch 3 step 1200 loss 0.4312 lr 2.0e-05 throughput 311 samples/s\n" * 6000
    log = tmp_path / "train.log"
    log.write_text(filler + line + "\n" + filler, encoding="utf-8")
    report = analyze_inputs([str(log)])
    if fmt:
        assert report.detected and report.error.format == fmt
    else:
        assert not report.detected and report.non_oom_errors[0].format == "triton_shared_memory"


@pytest.mark.parametrize("text", [
    "[ERROR] RecentErrMsg: [PID: 5150] 2026-01-02-03:04:05.678.901 Memory_Allocation_Failure(EL0004): Failed to allocate memory.\n"
    "        Possible Cause: Available memory is insufficient.\n        Solution: Close applications not in use.",
    "RuntimeError: call aclrtMalloc failed, error code: ACL_ERROR_RT_MEMORY_ALLOCATION",
])
def test_ascend_cann_allocation_failures(text):
    report = json.loads(CliRunner().invoke(app, ["analyze", "-", "--format", "json"], input=text).stdout)
    assert report["detected"] and report["error"]["format"] == "ascend_memory_allocation"
    assert report["error"]["backend"] == "npu"
    # CANN's printed advice to close other applications is boilerplate, not a sign of another holder
    assert report["causes"][0]["id"] != "other_process_or_device"


def test_the_headline_reads_huge_requests_in_a_persons_units():
    from oomtriage.render import to_markdown
    from oomtriage.sizes import format_size, pytorch_format_size
    report = analyze_inputs([], text="NPU out of memory. Tried to allocate more than 1EB memory\n")
    assert "tried to allocate more than 1 EiB" in to_markdown(report) and "1073741824" not in to_markdown(report)
    assert format_size(3 * 1024**4) == "3.00 TiB" and format_size(5 * 1024**5) == "5.00 PiB"
    assert format_size(597 * 1024**3) == "597.00 GiB" and format_size(1024**4) == "1024.00 GiB"
    # the simulated GPU's messages keep PyTorch's own units, as the caching allocator prints them
    assert pytorch_format_size(3 * 1024**4) == "3072.00 GiB"


# GPU libraries outside the deep-learning frameworks, each in its own words (wordings written from
# each library's source format, figures invented).
@pytest.mark.parametrize(("text", "fmt", "library", "backend", "figures"), [
    ("catboost/cuda/cuda_lib/memory_pool/stack_like_memory_pool.h:303: Error: Out of memory. Requested 2048 MB; Free 1536.5 MB",
     "catboost_memory_pool", "catboost", "cuda", {"requested_bytes": 2048 * MIB, "free_bytes": int(1536.5 * MIB)}),
    ("(NCudaLib::TOutOfMemoryError) stack_like_memory_pool.h:294: Error: Out of memory. Requested 300.25; Free 120.5",
     "catboost_memory_pool", "catboost", "cuda", {"requested_bytes": int(300.25 * MIB), "free_bytes": int(120.5 * MIB)}),
    ("RuntimeError: Error in virtual void* faiss::gpu::StandardGpuResourcesImpl::allocMemory(...): Error: 'err == cudaSuccess' "
     "failed: StandardGpuResources: alloc fail type IVFLists dev 1 space Device stream 0x1 size 3221225472 bytes (cudaMalloc error out of memory [2])",
     "faiss_gpu_alloc", "faiss", "cuda", {"requested_bytes": 3221225472, "device_index": 1}),
    ("Faiss assertion 'cudaMalloc(p, size) == cudaSuccess' failed in allocMemorySpace at utils/MemorySpace.cpp:19; details: Failed to cudaMalloc 65536 bytes",
     "faiss_gpu_alloc", "faiss", "cuda", {"requested_bytes": 65536}),
    ("Error allocating 5000000 bytes of device memory (out of memory). Driver report 1000000 bytes free and 2147483648 bytes total",
     "theano_device_alloc", "theano", "cuda", {"requested_bytes": 5000000, "free_bytes": 1000000, "total_bytes": 2147483648}),
    ("RuntimeError: CudaNdarray_NewDims: allocation failed.", "theano_device_alloc", "theano", "cuda", {}),
    ("F1203 10:00:00.000000  4242 syncedmem.cpp:56] Check failed: error == cudaSuccess (2 vs. 0)  out of memory",
     "caffe_cuda_check", "caffe", "cuda", {}),
    ("what():  OpenCV(4.8.0) /opencv/modules/core/src/cuda/gpu_mat.cu:116: error: (-217:Gpu API call) out of memory in function 'allocate'",
     "opencv_cuda_alloc", "opencv", "cuda", {"operation": "OpenCV allocate"}),
    ("pycuda._driver.MemoryError: cuMemAlloc failed: out of memory", "pycuda_alloc", "pycuda", "cuda", {}),
    ("pyopencl._cl.MemoryError: clEnqueueNDRangeKernel failed: MEM_OBJECT_ALLOCATION_FAILURE",
     "opencl_mem_object_alloc", "pyopencl", "opencl", {}),
    ("Exception from src/plugins/intel_gpu/src/runtime/ocl/ocl_memory.cpp:42:\n[GPU] out of GPU resources",
     "openvino_gpu_resources", "openvino", "opencl", {}),
    ("RuntimeError: Exception from src/plugins/intel_gpu/src/graph/network.cpp:100:\n[GPU] clEnqueueWriteBuffer, error code: -5 CL_OUT_OF_RESOURCES",
     "openvino_gpu_resources", "openvino", "opencl", {}),
    ("MESA: error: amdgpu: Failed to allocate a buffer:\nMESA: error: amdgpu:    size      : 1073741824 bytes",
     "mesa_buffer_alloc", "mesa", "opencl", {"requested_bytes": 1073741824}),
])
def test_gpu_libraries_outside_the_frameworks_are_read_with_their_figures(text, fmt, library, backend, figures):
    report = analyze_inputs([], text=text)
    assert report.detected, text
    error = report.error
    assert (error.format, error.library, error.backend, error.framework) == (fmt, library, backend, "other")
    for field, value in figures.items():
        assert getattr(error, field) == value, field


def test_a_bare_opencl_out_of_resources_is_not_called_an_oom():
    # OpenCL uses CL_OUT_OF_RESOURCES for kernel launch limits too; only OpenVINO's GPU plugin is read.
    report = analyze_inputs([], text="clEnqueueNDRangeKernel returned CL_OUT_OF_RESOURCES (-5)")
    assert not report.detected


def test_a_memory_error_raised_in_a_device_runtime_is_that_devices_oom():
    frames = ('Traceback (most recent call last):\n  File "/home/u/train.py", line 10, in <module>\n    out = model(x).realize()\n'
              '  File "/home/u/tinygrad/tinygrad/device.py", line 200, in alloc\n    return self._alloc(size, options)\n'
              '  File "/home/u/tinygrad/tinygrad/runtime/ops_{name}.py", line 480, in _alloc\n    raise MemoryError(msg)\n'
              'MemoryError: Cannot allocate 68719476736 bytes: no memory is available.\n')
    for name, backend in (("amd", "hip"), ("nv", "cuda"), ("metal", "mps"), ("gpu", "opencl")):
        error = analyze_inputs([], text=frames.format(name=name)).error
        assert (error.backend, error.library) == (backend, "tinygrad"), name
    # the same exception from the user's own code is the host's, as before
    host = ('Traceback (most recent call last):\n  File "/home/u/prep.py", line 3, in <module>\n    x = np.zeros((10**6, 10**6))\n'
            'MemoryError: Unable to allocate 7.28 TiB for an array with shape (1000000, 1000000) and data type float64\n')
    assert analyze_inputs([], text=host).error.backend == "host"


def test_webgpu_is_its_own_backend():
    error = analyze_inputs([], text="[E:onnxruntime:Default, webgpu_context.cc:120 operator()] WebGPU device error(2): Out of memory").error
    assert error.backend == "webgpu"


@pytest.mark.parametrize(("text", "oom"), [
    ("RuntimeError: ops/spconv/src/indice.cu 120\ncuda execution failed with error 2", True),
    ("CUDA error 2: out of memory (in gpu_kernel.cu:88)", True),
    ("RuntimeError: ops/spconv/src/reordering_cuda.cu 57\ncuda execution failed with error 9", False),
    ("cuda execution failed with error 20", False),
    ("CUDA error 209: no kernel image is available", False),
])
def test_cuda_error_code_2_is_an_oom_and_other_codes_are_not(text, oom):
    assert analyze_inputs([], text=text).detected is oom


def test_pinned_host_memory_said_failed_first_is_the_hosts():
    text = ("Error: 'err == cudaSuccess' failed: failed to cudaHostAlloc 268435456 bytes for CPU <-> GPU async copy buffer "
            "(error 2 out of memory)")
    error = analyze_inputs([], text=text).error
    assert (error.format, error.backend) == ("pinned_host_alloc", "host")


def test_card_names_with_ti_glued_on():
    from oomtriage.gpus import capacity_of_gpu, find_gpu_name
    assert find_gpu_name("on a 1050ti machine", bare=True) == "1050ti" and capacity_of_gpu("1050ti") == 4 * 10**9
    assert capacity_of_gpu("GTX 1080Ti") == 11 * 10**9 and capacity_of_gpu("3080TI") == 12 * 10**9


@pytest.mark.parametrize(("text", "fmt", "library", "backend", "requested"), [
    ("terminate called after throwing an instance of 'oneflow::RuntimeException'\n  what():  Error: CUDA out of memory. Tried to allocate 3.2 GB",
     "oneflow_out_of_memory", "oneflow", "cuda", 3_200_000_000),
    ("  what():  Error: CPU can't allocate memory. Tried to allocate 40.0 GB", "oneflow_out_of_memory", "oneflow", "host", 40_000_000_000),
    ("RuntimeError: out of memory while requesting 1073741824 bytes; you can try setting MGB_CUDA_RESERVE_MEMORY to reserve all memory.",
     "megengine_out_of_memory", "megengine", "cuda", 1073741824),
])
def test_frameworks_whose_wording_overlaps_pytorchs_are_told_apart(text, fmt, library, backend, requested):
    error = analyze_inputs([], text=text).error
    assert (error.format, error.library, error.backend, error.framework, error.requested_bytes) == (fmt, library, backend, "other", requested)
    # PyTorch's own sentence is still PyTorch's
    assert analyze_inputs([], text="torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.20 GiB.").error.framework == "pytorch"


def test_a_memory_error_in_cupys_pool_names_cupy():
    text = ('Traceback (most recent call last):\n  File "/home/u/run.py", line 5, in <module>\n    x = cp.zeros((10**6, 10**5))\n'
            '  File "/usr/lib/python3/site-packages/cupy/cuda/memory.py", line 1400, in malloc\n    raise MemoryError(msg)\n'
            'MemoryError: Cannot allocate 800000000000 bytes\n')
    error = analyze_inputs([], text=text).error
    assert (error.backend, error.library) == ("cuda", "cupy")


def test_an_xla_buffer_dump_without_its_message_is_still_an_oom_with_its_largest_buffer():
    from oomtriage.api import analyze_inputs
    dump = ("Peak buffers:\n    Buffer 1:\n        Size: 1.50GiB\n        Operator: op_name=\"jit(step)/conv_general_dilated\"\n"
            "        XLA Label: fusion\n        Shape: f32[1,96,2048,2048]\n        ==========================\n\n"
            "    Buffer 2:\n        Size: 256.00MiB\n        XLA Label: custom-call\n        Shape: bf16[4,32,1024,1024]\n")
    report = analyze_inputs([], text=dump)
    assert report.detected and report.error.framework == "jax"
    assert report.error.tensor_shape == [1, 96, 2048, 2048]
    assert report.causes[0].id == "input_size_too_large"


def test_an_xla_buffer_dump_after_its_message_leaves_the_message_in_charge():
    from oomtriage.api import analyze_inputs
    text = ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1610612736 bytes.\n"
            "BufferAssignment OOM Debugging.\nPeak buffers:\n    Buffer 1:\n        Size: 1.50GiB\n        XLA Label: fusion\n"
            "        Shape: f32[8,96,512,1024]\n")
    report = analyze_inputs([], text=text)
    assert report.error.format == "xla_resource_exhausted" and report.error.requested_bytes == 1610612736
    assert report.additional_ooms == 0


@pytest.mark.parametrize(("text", "requested"), [
    ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144.00 MiB on device 4: cudaMalloc failed: out of memory", 144 * 2**20),
    ("ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 137438953504\n"
     "llama_kv_cache_init: failed to allocate buffer for kv cache", 137438953504),
])
def test_ggml_states_the_size_it_asked_for(text, requested):
    from oomtriage.context import build_context
    assert build_context(text=text).error.requested_bytes == requested


@pytest.mark.parametrize(("text", "framework"), [
    ("From /job:worker/replica:0/task:0:\nCompilation failure: Ran out of memory in memory space hbm. Used 41.74G of 16.00G hbm. "
     "Exceeded hbm capacity by 25.74G.", "tensorflow"),
    ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space "
     "hbm. Used 21.90G of 7.48G hbm. Exceeded hbm capacity by 14.42G.", "jax"),
])
def test_xla_on_tpu_is_read_as_the_framework_that_compiled(text, framework):
    from oomtriage.context import build_context
    error = build_context(text=text).error
    assert error.backend == "tpu" and error.framework == framework


@pytest.mark.parametrize("before", [
    'Traceback (most recent call last):\n  File "/opt/venv/lib/python3.8/site-packages/tensorflow/python/client/session.py", line 1365, in _do_call\n'
    "    return fn(*args)\ntensorflow.python.framework.errors_impl.ResourceExhaustedError: 2 root error(s) found.",
    "W tensorflow/core/common_runtime/bfc_allocator.cc:431] ****_____****\nResourceExhaustedError: 1 root error(s) found.",
    '  File "train.py", line 88, in train_step\n    logits = model(images, training=True)  # tf.function(jit_compile=True)\n'
    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: 1 root error(s) found.",
])
def test_an_xla_status_under_tensorflow_is_tensorflows(before):
    """TensorFlow's XLA raises the same status lines as JAX's, inside its own exception and frames."""
    text = f"{before}\n  (0) Resource exhausted: Out of memory while trying to allocate 34359738368 bytes.\n\t [[{{{{node cluster_3_1/xla_run}}}}]]"
    report = analyze_inputs([], text=text)
    assert report.error.format == "xla_resource_exhausted" and report.error.framework == "tensorflow"
    assert "other_process_or_device" not in [cause.id for cause in report.causes[:1]]


def test_an_xla_status_under_jax_stays_jaxs():
    text = ('  File "/usr/lib/python3.11/site-packages/jax/_src/interpreters/pxla.py", line 1229, in __call__\n'
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 34359738368 bytes.")
    assert analyze_inputs([], text=text).error.framework == "jax"


METAL_MAPPED = """ggml_metal_init: recommendedMaxWorkingSetSize  = {ws:.2f} MB
ggml_metal_add_buffer: allocated 'data            ' buffer, size =  8192.00 MiB, offs =            0
ggml_metal_add_buffer: allocated 'data            ' buffer, size =  {last:.2f} MiB, offs =  8482390016, ({total:.2f} / {ws:.2f})ggml_metal_add_buffer: warning: current allocated size is greater than the recommended max working set size
"""


@pytest.mark.parametrize(("ws", "last"), [(10922.67, 3241.14), (5461.34, 1024.0)])
def test_metal_buffers_past_the_working_set_are_the_model(ws, last):
    """ggml's Metal backend warns when the model's mapped buffers pass the GPU's working set."""
    text = METAL_MAPPED.format(ws=ws, last=last, total=8192.0 + last)
    report = analyze_inputs([], text=text, note="running a quantized model on my MacBook fails")
    assert report.causes and report.causes[0].id == "model_too_large"
