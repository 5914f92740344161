"""Notes written in Chinese, read through a glossary of the words people use about GPU memory.

Many OOM reports are written in Chinese (a large share of the model repositories people train and
serve with are). The note readers in `signals.py` are written in English, so a Chinese note is
first given an English reading: each term below becomes the English words the readers know
("显存" -> "GPU memory", "第一张卡" -> "the first GPU", "爆显存" -> "ran out of GPU memory"), with
spaces around it, since Chinese writes no spaces between words. Text without CJK characters is
returned unchanged and costs one search. Evidence quoted from such a note quotes this reading.
"""

from __future__ import annotations

import re
from functools import lru_cache

_CJK = re.compile(r"[\u3400-\u9fff]")

# Longest terms first where one contains another ("显存不足" before "显存"). Each entry is one
# thing users say; the English is what the readers in signals.py match.
_GLOSSARY: tuple[tuple[str, str], ...] = (
    # running out
    (r"爆显存|显存(?:会|就|直接|还是|仍然|依然|又)?(?:爆(?:了|掉)?|溢出|不足|不够(?:用)?|炸(?:了)?|撑爆)|(?:显存|内存)?OOM了?", " ran out of GPU memory "),
    (r"内存(?:不足|不够|溢出|爆(?:了)?)", " ran out of host RAM "),
    (r"(?:会|就)?(?:爆|炸)(?:了|掉)?", " ran out of memory "),
    # (the negated form first: "没有用满" holds "用满")
    (r"(?:都)?没有?(?:用|占)满|没满|(?:占用|用)(?:得)?(?:很|比较)?(?:少|低)|空闲", " are not full "),
    (r"占满(?:了)?|用满(?:了)?|满了", " is full "),
    # which GPU
    (r"第一张(?:显)?卡|第一块(?:显)?卡|第一个(?:GPU|显卡|卡)|0\s?号(?:显)?卡|卡\s?0|主卡", " the first GPU "),
    (r"(?:其他|其它|其余|剩余|剩下)的?\s?(\d+|[一二三四五六七八九两])?\s?(?:张|块|个)?(?:显卡|卡|GPU)", " the other GPUs "),
    (r"单机多卡|多卡|多张(?:显)?卡|多块(?:显)?卡|多GPU", " on several GPUs "),
    (r"单卡|一张(?:显)?卡|单个GPU|单GPU", " on one GPU "),
    (r"(\d+)\s?(?:张|块)?(?:显)?卡", r" \1 GPUs "),
    (r"显存", " GPU memory "),
    (r"显卡", " GPU "),
    # the phase
    (r"全量微调|全参数?微调", " full fine-tuning "),
    (r"微调", " fine-tuning "),
    (r"训练(?:的)?(?:时候|时|过程中)?", " during training "),
    (r"推理(?:的)?(?:时候|时|阶段)?", " during inference "),
    (r"(?:验证|评估|测试)(?:的)?(?:时候|时|阶段)?", " during evaluation "),
    (r"加载模型|模型加载|载入模型", " while loading the model "),
    (r"保存模型|模型保存|保存(?:权重|checkpoint)", " while saving the model "),
    # "生成" is also "create" ("用np.zeros生成矩阵"): it is generation only of output or at a time
    (r"生成(?:的)?(?:时候|时|阶段|过程中)|生成(?=文本|文字|图片|图像|视频|音频|回答|答案|回复|结果|token|句子|序列)", " during generation "),
    (r"(?:数据)?预处理(?:的)?(?:时候|时|阶段)?", " while preprocessing the data "),
    # what was tried and what changed
    (r"(?:batch[_ ]?size|bs|批大小|批次大小)\s?(?:已经)?(?:调小|调低|改小|减小|降低|设为|设置为|改成|改为|调到|降到)(?:到|为|成)?\s?(\d+)?\s?(?:了)?\s?(?:也|还是|仍然|依然|都)",
     r" even with batch size \1 it still "),
    (r"(?:也|还是|仍然|依然)(?:会)?", " still "),
    (r"(?:而)?不是|并非|并不是", " not "),
    (r"随着(?:训练|迭代|步数|时间)?(?:的进行)?", " over time "),
    (r"(?:逐渐|不断|持续|一直)(?:增加|增长|上涨|变大|上升)", " keeps growing "),
    (r"其他进程|别的进程|另一个进程", " another process "),
    (r"分辨率", " resolution "),
    (r"序列长度|文本长度|上下文长度", " sequence length "),
    (r"量化", " quantized "),
    (r"升级(?:了)?|更新(?:了)?(?:版本)?", " after upgrading "),
    (r"设置(?:为|成)?", " set to "),
    (r"的时候|时候|的时", " when "),
    (r"但是|但|可是|然而", ", but "),
    (r"[，、]", ", "),
    (r"[。！？；]", ". "),
    (r"[（(]", " ("),
    (r"[）)]", ") "),
    (r"[：]", ": "),
)


@lru_cache(maxsize=1)
def _compiled() -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(pattern, re.IGNORECASE), english) for pattern, english in _GLOSSARY)


def english_reading(note: str) -> str:
    """The note as the English readers see it: unchanged unless it holds CJK characters."""
    if not note or not _CJK.search(note):
        return note
    for pattern, english in _compiled():
        note = pattern.sub(english, note)
    # what the glossary does not know is left out: a reader must not match inside a CJK run
    note = _CJK.sub(" ", note)
    return re.sub(r"[ \t]{2,}", " ", note).strip()
