"""Notes written in Chinese or Korean, read through a glossary of the words people use about GPU memory.

Many OOM reports are written in Chinese (a large share of the model repositories people train and
serve with are). The note readers in `signals.py` are written in English, so a Chinese note is
first given an English reading: each term below becomes the English words the readers know
("显存" -> "GPU memory", "第一张卡" -> "the first GPU", "爆显存" -> "ran out of GPU memory"), with
spaces around it, since Chinese writes no spaces between words. Korean writes spaces but glues its
particles to the word before ("메모리가", "배치 사이즈를"), so its terms are matched with their particles
and its own glossary is read first. Text without CJK or Hangul characters is returned unchanged and
costs one search. Evidence quoted from such a note quotes this reading.
"""

from __future__ import annotations

import re
from functools import lru_cache

_CJK = re.compile(r"[\u3400-\u9fff\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")

# Korean: a particle after a noun (subject, object, topic, "with", "to") that the readers must not see.
_K_PARTICLE = r"(?:이|가|을|를|은|는|의|에|에서|로|으로|도|만)?"
_KOREAN_GLOSSARY: tuple[tuple[str, str], ...] = (
    # running out
    (rf"(?:GPU|그래픽\s?카드|그래픽|비디오|VRAM)\s?(?:메모리)?{_K_PARTICLE}\s?(?:부족|모자라\w*|모자람|초과|터졌\w*|터짐|터지\w*)", " ran out of GPU memory "),
    (rf"(?:시스템\s?메모리|램|RAM){_K_PARTICLE}\s?(?:부족|모자라\w*|초과)", " ran out of host RAM "),
    (rf"메모리{_K_PARTICLE}\s?(?:부족|모자라\w*|모자람|초과|터졌\w*|터짐|터지\w*)", " ran out of memory "),
    # memory already held before the run: "기본적으로 차지하고 있는 6기가" (6 GB taken from the start)
    (r"(?:기본적으로|이미|원래|처음부터)\s?(?:차지하고\s?있는|차지하는|차지한|점유하고\s?있는|점유된|점유\s?중인|사용\s?중인|잡혀\s?있는)", " already occupied "),
    (r"좀비\s?프로세스", " zombie process "),
    (r"다른\s?프로세스", " another process "),
    # which GPU
    (rf"(?:첫\s?번째|첫|0번)\s?(?:GPU|그래픽\s?카드|카드){_K_PARTICLE}", " the first GPU "),
    (rf"(?:나머지|다른)\s?(?:GPU|그래픽\s?카드|카드)(?:들)?{_K_PARTICLE}", " the other GPUs "),
    (rf"(?:멀티|다중|여러\s?(?:개의|장의|대의)?)\s?(?:GPU|그래픽\s?카드|카드){_K_PARTICLE}", " on several GPUs "),
    (rf"(?:단일|하나의|한\s?개의|한\s?장의)\s?(?:GPU|그래픽\s?카드|카드){_K_PARTICLE}", " on one GPU "),
    (rf"(\d+)\s?(?:개의|장의|대의)?\s?(?:GPU|그래픽\s?카드|카드){_K_PARTICLE}(?![a-z])", r" \1 GPUs "),
    (rf"(?:GPU|그래픽|비디오)\s?메모리{_K_PARTICLE}", " GPU memory "),
    (rf"그래픽\s?카드{_K_PARTICLE}", " GPU "),
    (rf"메모리{_K_PARTICLE}", " memory "),
    (r"(\d+(?:\.\d+)?)\s?(?:기가바이트|기가)", r" \1 GB "),
    (r"가량의|가량|정도의|정도", " "),
    # what was tried: "배치 사이즈를 1로 줄여도" (even with the batch lowered to 1)
    (rf"배치\s?(?:사이즈|크기){_K_PARTICLE}\s?(\d+)\s?(?:로|으로)\s?(?:줄여도|낮춰도|줄였는데도|낮췄는데도|줄였지만|낮췄지만|바꿔도|설정해도|해도)",
     r" even with batch size \1 it still "),
    (rf"배치\s?(?:사이즈|크기){_K_PARTICLE}\s?(\d+)\s?(?:로|으로)\s?(?:설정|지정|맞춰|두)\w*", r" batch size set to \1 "),
    (rf"배치\s?(?:사이즈|크기){_K_PARTICLE}", " batch size "),
    (r"(?:점점|계속|지속적으로|꾸준히)\s?(?:증가|늘어\w*|커지\w*|올라\w*)", " keeps growing "),
    (r"여전히|그래도|똑같이", " still "),
    # the phase
    (rf"(?:파인\s?튜닝|미세\s?조정){_K_PARTICLE}", " fine-tuning "),
    (rf"(?:학습|훈련)(?:\s?(?:중|도중|할\s?때|시|하는\s?중))?{_K_PARTICLE}", " during training "),
    (rf"추론(?:\s?(?:중|할\s?때|시))?{_K_PARTICLE}", " during inference "),
    (rf"(?:검증|평가)(?:\s?(?:중|할\s?때|시|단계))?{_K_PARTICLE}", " during evaluation "),
    (r"모델(?:을|를)?\s?(?:로드|불러오|로딩)\w*", " while loading the model "),
    (r"모델(?:을|를)?\s?저장\w*", " while saving the model "),
    (rf"(?:텍스트|문장|이미지|답변)\s?생성{_K_PARTICLE}|생성\s?(?:중|할\s?때|시)", " during generation "),
    (rf"전처리{_K_PARTICLE}", " while preprocessing the data "),
    (rf"해상도{_K_PARTICLE}", " resolution "),
    (rf"(?:시퀀스|문장|입력|컨텍스트)\s?길이{_K_PARTICLE}", " sequence length "),
    (rf"양자화{_K_PARTICLE}", " quantized "),
    (r"업그레이드\w*|업데이트\w*", " after upgrading "),
    (r"하지만|그런데|그러나", ", but "),
)

# Longest terms first where one contains another ("显存不足" before "显存"). Each entry is one
# thing users say; the English is what the readers in signals.py match.
_GLOSSARY: tuple[tuple[str, str], ...] = (
    # running out
    (r"爆显存|显存(?:会|就|直接|还是|仍然|依然|又)?(?:爆(?:了|掉)?|溢出|不足|不够(?:用)?|炸(?:了)?|撑爆)|(?:显存|内存)?OOM了?", " ran out of GPU memory "),
    (r"内存(?:不足|不够|溢出|爆(?:了)?)", " ran out of host RAM "),
    (r"(?:会|就)?(?:爆|炸)(?:了|掉)?", " ran out of memory "),
    # ("溢出" alone, "the overflow problem", is how these notes say it ran out)
    (r"(?:会有|出现)?溢出(?:问题|错误)?", " ran out of memory "),
    (r"内存占用(?:很高|太高|过高)?", " host RAM usage "),
    (r"内存", " host RAM "),
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
    # the data (before the phases: "测试数据集" is the test set, not a test phase)
    (r"训练集|训练数据集", " training set "),
    (r"(?:测试|验证)(?:数据)?集", " validation set "),
    (r"数据集", " dataset "),
    # the phase; an English word before "的时候" is the phase it names ("在evaluate的时候": during evaluate)
    (r"在?\s?([A-Za-z][A-Za-z_.]*)\s?(?:的)?(?:时候|时|阶段|过程中)", r" during \1 "),
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
    (r"(?:batch[_ ]?size|bs|批大小|批次大小)\s?(?:已经)?(?:调小|调低|改小|减小|降低|设为|设置为|改成|改为|调到|降到)(?:到|为|成)?\s?(\d+)?\s?(?:了)?\s?[，,]?\s?(?:也|还是|仍然|依然|都)",
     r" even with batch size \1 it still "),
    (r"(?:也|还是|仍然|依然)(?:会)?", " still "),
    (r"(?:而)?不是|并非|并不是", " not "),
    (r"随着(?:训练|迭代|步数|时间)?(?:的进行)?", " over time "),
    (r"(?:逐渐|不断|持续|一直)(?:在)?(?:增加|增长|上涨|变大|上升)", " keeps growing "),
    (r"(?:程序)?(?:崩溃|挂掉|挂了)(?:了)?", " crashed "),
    (r"(?:设置)?(?:无效|没用|没有用|不起作用|没有效果|没效果)", " did not help "),
    (r"不管|无论", " whatever the "),
    (r"(?:可以)?正常(?:运行|训练|跑|工作)", " works fine "),
    (r"(?:都)?正常", " are fine "),
    (r"中途|途中", " partway "),
    (r"未切分|没有切分|没切分|未切片|没有切片|未切割", " not split "),
    (r"最长", " longest "),
    (r"音频|语音", " audio "),
    (r"视频", " video "),
    (r"图片|图像", " images "),
    (r"尺寸|大小", " size "),
    (r"过大|太大", " too large "),
    (r"数据(?:读取|加载)", " data loading "),
    (r"进程", " processes "),
    (r"报错|出错|错误", " error "),
    (r"阶段|环节", " phase "),
    (r"每次", " every time "),
    (r"关闭", " disabling "),
    (r"不再", " no longer "),
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


@lru_cache(maxsize=2)
def _compiled(glossary: tuple[tuple[str, str], ...]) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(pattern, re.IGNORECASE), english) for pattern, english in glossary)


def english_reading(note: str) -> str:
    """The note as the English readers see it: unchanged unless it holds CJK characters."""
    if not note or not _CJK.search(note):
        return note
    if _HANGUL.search(note):
        for pattern, english in _compiled(_KOREAN_GLOSSARY):
            note = pattern.sub(english, note)
    for pattern, english in _compiled(_GLOSSARY):
        note = pattern.sub(english, note)
    # what the glossary does not know is left out: a reader must not match inside a CJK run
    note = _CJK.sub(" ", note)
    return re.sub(r"[ \t]{2,}", " ", note).strip()
