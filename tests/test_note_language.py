"""Notes written in Chinese are read through the glossary (oomtriage/engine/note_language.py)."""

from __future__ import annotations

import pytest

from oomtriage.api import analyze_inputs
from oomtriage.context import build_context
from oomtriage.engine import read_signals
from oomtriage.engine.note_language import english_reading


def test_an_english_note_is_read_as_written():
    note = "Training fails at step 3; batch size 8 on a 24 GB card."
    assert english_reading(note) == note


@pytest.mark.parametrize("note", [
    "8卡训练，第一张卡显存爆了，其他卡都没有用满",
    "用4张显卡跑的时候，0号卡显存溢出，但是其余3张卡占用很少",
])
def test_the_first_gpu_fuller_than_the_others(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory", note=note))
    assert signals.rank0_heavy, english_reading(note)


@pytest.mark.parametrize("note", [
    "batch_size调小到1还是爆显存",
    "我把batch size改成1了也还是显存不足",
])
def test_a_smaller_batch_that_did_not_help(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory", note=note))
    assert signals.batch_no_help, english_reading(note)


@pytest.mark.parametrize("note", ["推理的时候显存不够用", "验证的时候显存爆了，训练没问题"])
def test_inference_and_validation_are_the_evaluation_phase(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory", note=note))
    assert signals.phase == "evaluation", (english_reading(note), signals.phase)


def test_memory_that_grows_with_training():
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory", note="随着训练显存不断增加，最后OOM了"))
    assert signals.growth


def test_a_chinese_note_that_says_the_run_ran_out_is_a_suspected_oom():
    report = analyze_inputs([], text="", note="微调的时候显存不足，程序直接退出了")
    assert report.suspected and not report.detected and report.causes


def test_the_users_note_is_kept_as_written():
    note = "第一张卡显存爆了"
    context = build_context(text="RuntimeError: CUDA out of memory", note=note)
    read_signals(context)
    assert context.note == note


@pytest.mark.parametrize("note", [
    "用np.zeros生成一个很大的矩阵时内存不够",
    "预处理数据的时候生成特征矩阵，内存溢出了",
])
def test_creating_an_array_is_not_generation(note):
    # "生成" is also "create": a matrix made during preprocessing is host memory, not a KV cache
    report = analyze_inputs([], text="", note=note)
    assert report.causes and report.causes[0].id == "dataloader_or_host", (english_reading(note), [c.id for c in report.causes])
    assert "generation" not in english_reading(note)


@pytest.mark.parametrize("note,phase", [("生成回答的时候显存不足", "generation"), ("生成图片时显存爆了", "generation")])
def test_generating_output_is_still_generation(note, phase):
    assert "during generation" in english_reading(note)


def test_a_denied_phase_stays_denied():
    reading = english_reading("错误发生在数据预处理阶段，不是训练阶段")
    assert "while preprocessing the data" in reading and "not during training" in reading


@pytest.mark.parametrize("note", [
    "학습을 실행하면 cuda out of memory가 발생합니다. 기본적으로 차지하고 있는 4기가 가량의 메모리가 있습니다.",
    "GPU 메모리가 부족합니다. nvidia-smi를 보면 이미 사용 중인 메모리가 10기가 정도 있습니다.",
])
def test_a_korean_note_about_memory_already_held(note):
    report = analyze_inputs([], text="", note=note)
    assert report.causes and report.causes[0].id == "other_process_or_device", (english_reading(note), [c.id for c in report.causes])


@pytest.mark.parametrize("note", [
    "배치 사이즈를 1로 줄여도 여전히 GPU 메모리가 부족합니다.",
    "배치 크기를 2로 낮춰도 그래픽 카드 메모리가 부족해요.",
])
def test_a_korean_smaller_batch_that_did_not_help(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory", note=note))
    assert signals.batch_no_help, english_reading(note)


@pytest.mark.parametrize("note,phase", [("추론할 때 GPU 메모리가 부족합니다", "evaluation"), ("학습 중에 메모리가 부족합니다", "training")])
def test_korean_phases(note, phase):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory", note=note))
    assert signals.phase == phase, (english_reading(note), signals.phase)


def test_korean_words_outside_the_glossary_are_left_out():
    reading = english_reading("저도 비슷한 문제를 겪고 있습니다")
    assert not any("\uac00" <= ch <= "\ud7a3" for ch in reading), reading


@pytest.mark.parametrize("note", ["训练到一半还是会有溢出问题", "batch设置为2，还是溢出"])
def test_overflow_alone_is_running_out(note):
    report = analyze_inputs([], text="", note=note)
    assert report.suspected and report.causes, english_reading(note)


@pytest.mark.parametrize("note", ["batchsize设置为4，还是会有溢出问题", "不管batch_size设置为多少都会爆显存", "batch_size设置无效，显存不足"])
def test_a_batch_that_made_no_difference_in_chinese(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory", note=note))
    assert signals.batch_no_help, english_reading(note)


@pytest.mark.parametrize("note", ["训练的时候可以正常运行，但是在evaluate的时候显存不足", "在eval的时候报错显存不够，训练正常"])
def test_an_english_phase_word_before_shi_hou_is_the_phase(note):
    signals = read_signals(build_context(text="RuntimeError: CUDA out of memory", note=note))
    assert signals.phase == "evaluation", (english_reading(note), signals.phase)


def test_a_test_set_is_not_a_test_phase():
    assert "evaluation" not in english_reading("训练数据集2000张，测试数据集500张，训练时显存不足")


def test_host_memory_growing_in_chinese_is_the_host():
    note = "执行eval.py时内存一直在增长，最后程序崩溃，显存正常"
    report = analyze_inputs([], text="", note=note)
    assert report.causes and report.causes[0].id == "dataloader_or_host", (english_reading(note), [c.id for c in report.causes])


def test_unsplit_long_audio_is_the_input():
    note = "训练时爆显存，不管batch_size设置为多少都是，中途报错。音频未切分，最长40s。"
    causes = [c.id for c in analyze_inputs([], text="", note=note).causes]
    assert causes[0] == "input_size_too_large", (english_reading(note), causes)
