"""Signals read from the user's note, the stack trace and the log around the OOM: what phase the
run was in, what the workload is, the numbers the user gave (batch size, sequence length, model
size, GPU memory). General knowledge about how OOMs arise lives in the rules; this module only
reads what was said."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from oomtriage.gpus import capacity_of_gpu, find_gpu_name
from oomtriage.models import Phase, TriageContext

_PHASE_FRAME_PATTERNS: list[tuple[Phase, str]] = [
    ("data_loading", r"_worker_loop|dataloader|__getitem__|collate"),
    ("loading", r"load_state_dict|torch\.load|\bload\(|from_pretrained|load_checkpoint|restore|resume|"
                r"load_opt_state|_load_from_state_dict|load_model|safe_open|load_file"),
    ("optimizer_setup", r"(?:init|initiali[sz]e|configure|setup|create|build)_\w*optim|deepspeed\.initialize|\binitialize\(|ZeroOptimizer|setup_model_and_optimizer"),
    ("generation", r"\bgenerate\b|beam_search|\bsample\(|greedy_search|past_key_values|\.chat\(|\bchat\b|decode_step|transcribe|pipeline\("),
    ("evaluation", r"\beval(?:uate|uation)?\b|\bvalid(?:ate|ation)?\b|epochval|val_step|validation_step|\btest(?:_step|_loop)?\b|"
                   r"\bpredict(?:ion_step|ion_loop)?\b|\binference\b|evaluation_loop|\binfer\b|\bval_|_val\b|run_test"),
    ("training", r"backward|optimizer\.step|\.step\(\)|training_step|train_step|\btrain\b|train_epoch|\bfit\b|compute_loss|_train"),
]
_PHASE_NOTE_PATTERNS: list[tuple[Phase, str]] = [
    ("data_loading", r"dataloader worker|data ?loader|workers?\b.*killed"),
    ("optimizer_setup", r"sets? up (?:the )?(?:\w+ )?optimizer|optimizer (?:set-?up|initiali[sz]ation)|before the first (?:training )?step"),
    ("loading", r"\bresum(?:e|ing|ed)\b|\brestor(?:e|ing|ed)\b|(?:weights|model|checkpoint|state)s? (?:are|is|were|was) (?:being )?load|"
                r"load(?:ing)? (?:the )?(?:saved |converted |pretrained )?(?:model|weights|checkpoint|state)|from_pretrained|fails? while load"),
    ("generation", r"\bgenerat(?:e|ion|ing)\b|\bbeam\b|\bserving\b|\bserve[sd]?\b|\bchat\(|\.chat\b|\btranscrib|\binference server|"
                   r"\bvllm\b|\btgi\b|lmdeploy|ollama|sglang|llama\.cpp|\bsampling\b|\bdecod(?:e|ing)\b|\brequests?\b"),
    ("evaluation", r"\bvalidat(?:e|ion|ing)\b|\bevaluat(?:e|ion|ing)\b|\beval\b|\btest(?:ing)? (?:loop|pass|set|phase)\b|\binference\b|\bpredict|"
                   r"\bval(?:idation)? (?:step|pass|loop)\b|evaluate\(\)|run_test"),
    ("training", r"\btrain(?:ing|s|ed)?\b|\bfine-?tun|\bpre-?train|\bfit\b|\bbackward\b"),
]
_SERVING = r"\bvllm\b|\btgi\b|text-generation-inference|lmdeploy|turbomind|sglang|ollama|llama\.cpp|\btensorrt-llm\b"
_GROWTH = (r"climb|creep|keeps? (?:increas|grow|going up|rising)|grows?\b|growing|increas(?:es|ing) (?:every|each|over|with)|"
           r"after (?:about |some |a few |several |\d+ )?(?:\w+ )?(?:epochs?|iterations?|steps?|batches)|partway|part-way|"
           r"first (?:few )?(?:iterations?|steps?|epochs?|batches) (?:run|work|go|are)|batch after batch|for a while|"
           r"memory leak|leak|over time|eventually|occasionally|mid-training|midway")
_IMMEDIATE = (r"as soon as|immediately|right away|first (?:training )?(?:step|iteration|batch|forward)\b|when training starts|"
              r"at (?:start-?up|the start)|during startup|before any|right after (?:start|launch)")
_BATCH_NO_HELP = r"(?:lower|reduc|smaller|decreas)\w* (?:the )?batch(?: size)?.{0,30}(?:did not|didn't|does not|doesn't|no) help|even with (?:a )?smaller batch|batch size (?:of )?1\b"
_REPEATED = (r"repeatedly|in a (?:python )?loop|second (?:fit|call|run|time|epoch)|the second\b|after the first (?:evaluation|eval|epoch|fit)|"
             r"completes? the first evaluation|long series|one after another|many (?:runs|fits|models|experiments)|"
             r"series of|across (?:many|multiple) (?:calls|runs)")
_UPGRADE = (r"after (?:upgrading|updating|the upgrade|an upgrade)|since (?:upgrading|updating)|worked (?:fine )?(?:on|under|with|in) "
            r"(?:version |v)?\d|ran (?:fine )?on [\w.]+ \d|\bregression (?:in|since|after|from|with)\b|\bregressed\b|newer version|new version")
_OTHER_PROCESS = (r"another process|other process|other (?:jobs?|work|users?|programs?)|busy with|shared (?:gpu|machine)|"
                  r"jupyter kernel|already (?:in use|busy|running)|second process|display|other notebook")
_ONLY_MULTI_GPU = (r"single-?gpu (?:run )?(?:does not|doesn't|works|is fine|runs fine)|works? (?:fine )?on (?:a )?single gpu|"
                   r"only (?:with|on|when using) (?:multiple|several|more than one) gpus|restarting a single-gpu run does not")
_CPU_MODE = r"cpu mode|-gpu c\b|on (?:the )?cpu\b|device=.?cpu|cpu only|cpu-only"
_DETECTION = r"mmdet|detectron|\byolo|mask ?r-?cnn|faster ?r-?cnn|retinanet|detector|detection|segmentation|rotated-box"
_VARIABLE_LENGTH = r"opennmt|translation|\bnmt\b|seq2seq|speech|\basr\b|transducer|librispeech|audio|sentences?\b|variable[- ]length|bucket"
_DIFFUSION = r"diffusion|\bunet\b|upscal|diffusers|deepfloyd|\bsdxl\b|\bsd ?[12x]|img2img|text-to-image|\bif-i"
_LLM = r"\bllama|\bgpt|mistral|qwen|baichuan|internlm|deepseek|falcon|\bphi-?\d|gemma|\bopt-\d|bloom|\bllm\b|chat\b|-chat\b|coder"
_ENCODER = r"\bbert\b|roberta|mmbert|electra|deberta|encoder|classifier"
_ADAM = r"adam|adamw"
_FULL_FINETUNE = r"full(?:-| )?(?:parameter )?fine-?tun|full fine-?tune|\bpre-?training\b|\bpre-?train(?:s|ed)? (?:a|an|the)\b|full-parameter|from scratch"
_LOW_PRECISION = r"\bfp16\b|\bbf16\b|bfloat16|float16|half precision|\bhalf\b|\bint8\b|\bint4\b|4-?bit|8-?bit|quantiz|\bamp\b|mixed precision|torch_dtype"
_HF_TRAINER = r"trainer\.evaluate|trainer\.predict|evaluation_loop|prediction_loop|\bTrainer\b|transformers4rec"


@dataclass
class Signals:
    phase: Phase = "unknown"
    phase_source: str | None = None
    growth: bool = False
    immediate: bool = False
    batch_no_help: bool = False
    repeated_calls: bool = False
    upgrade_regression: bool = False
    upgraded_to_torch_04: bool = False
    only_multi_gpu: bool = False
    other_process_hint: bool = False
    cpu_mode: bool = False
    serving_engine: bool = False
    distributed: bool = False
    zero_stage: int | None = None
    fsdp: bool = False
    gpu_count: int | None = None
    full_finetune: bool = False
    low_precision: bool = False
    uses_adam: bool = False
    hf_trainer_eval: bool = False
    tensorflow_with_jax: bool = False
    domains: set[str] = field(default_factory=set)
    batch_size: int | None = None
    seq_len: int | None = None
    vocab_size: int | None = None
    param_count: float | None = None
    note_gpu_capacity: int | None = None
    evidence: dict[str, str] = field(default_factory=dict)


def _search(pattern: str, text: str) -> re.Match[str] | None:
    return re.search(pattern, text, re.IGNORECASE)


def _number(text: str) -> float:
    text = text.replace(",", "").lower()
    multiplier = 1
    for suffix, value in (("k", 1e3), ("m", 1e6), ("million", 1e6), ("b", 1e9), ("billion", 1e9)):
        if text.endswith(suffix):
            multiplier, text = value, text[: -len(suffix)].strip()
            break
    return float(text) * multiplier


def read_numbers(note: str, signals: Signals) -> None:
    batch = _search(r"(?:per-device |micro[- ]?|train(?:ing)? )?batch(?:[ _-]?size)?\s*(?:of|=|:|is|lowered to|set to)?\s*(\d+)\b", note)
    if batch:
        signals.batch_size = int(batch.group(1))
    seq = _search(r"(?:seq(?:uence)?[ _-]?len(?:gth)?|context(?: length)?|cutoff(?: length)?|max[_ ]length|block[_ ]size)\s*(?:of|=|:)?\s*(\d+(?:\.\d+)?\s?[kK]?)\b", note) \
        or _search(r"(\d+(?:\.\d+)?\s?[kK]?)[- ]token(?:s)?\b(?! vocab)", note) or _search(r"(\d+)[kK] context", note)
    if seq:  # "8K tokens" means 8192 in this field
        value = seq.group(1).replace(" ", "")
        signals.seq_len = int(float(value[:-1]) * 1024) if value[-1] in "kK" else int(float(value))
    vocab = _search(r"vocab(?:ulary)?(?: file| size)?\D{0,25}?(\d[\d,.]*\s?(?:million|[kKmM])?)\b", note) or \
        _search(r"(\d[\d,.]*\s?(?:million|[kKmM])?)\s(?:word|token)s? vocab", note) or _search(r"(\d[\d,.]*\s?[kKmM]) vocab", note)
    if vocab:
        signals.vocab_size = int(_number(vocab.group(1).strip()))
    params = _search(r"\b(\d+(?:\.\d+)?)\s?([bBmM])\b(?![/ ]?(?:ytes|s\b|yte))(?!\s?GB)", note)
    if params and not _search(r"\d+\s?[bBmM]\s?(?:of )?(?:ram|memory)", note):
        signals.param_count = float(params.group(1)) * (1e9 if params.group(2).lower() == "b" else 1e6)
    elif _search(r"under (\d+)\s?b\b", note):
        signals.param_count = float(_search(r"under (\d+)\s?b\b", note).group(1)) * 1e9 * 0.8
    elif _search(r"whisper[- ](?:the )?large|large whisper|whisper (?:model )?\(?(?:default )?(?:whisper )?large", note) or _search(r"default whisper large", note):
        signals.param_count = 1.55e9
    gpu = _search(r"\b[A-Z]{1,3}\d{2,4}\w* (\d{2,3})\s?GB\b", note) or _search(r"(\d{1,3})\s?GB(?: of (?:GPU|video) memory| GPUs?| cards?| (?:NVIDIA |Tesla )?(?:[A-Z]{1,3}\d{2,4}\w*)s?)", note) \
        or _search(r"(?:GPU|card)s? (?:with|of) (\d{1,3})\s?GB", note) or _search(r"(\d{1,3})\s?GB\)?\s*(?:\w+ )?GPU", note)
    if gpu:
        signals.note_gpu_capacity = int(gpu.group(1)) * 10**9
    else:
        name = find_gpu_name(note)
        if name:
            signals.note_gpu_capacity = capacity_of_gpu(name)
    count = _search(r"\b(\d+)\s?x\s?(?:[A-Z]|\d{2} ?GB)", note) or \
        _search(r"\b(two|three|four|six|eight|\d{1,2})\b(?! ?GB) (?:(?!GB\b)[\w-]+ ){0,3}(?:GPUs|cards|V100s|A100s|H100s|ranks|nodes)", note)
    if count:
        words = {"two": 2, "three": 3, "four": 4, "six": 6, "eight": 8}
        value = count.group(1).lower()
        signals.gpu_count = words.get(value) or int(value)
    zero = _search(r"zero[- ]?(?:stage[- ]?)?([123])\b|stage ([123]) zero|zero stage ([123])", note)
    if zero:
        signals.zero_stage = int(next(group for group in zero.groups() if group))


def frame_text(context: TriageContext) -> str:
    if not context.stack:
        return ""
    return "\n".join(f"{frame.function or ''} {frame.code or ''} {frame.filename}" for frame in context.stack.frames)


_FAILURE_WORDS = r"\bfail|\bcrash|\bdies\b|\bdied\b|\bruns? out of|\bOOM|out-of-memory|\berror|\babort|\bstops\b|\bkilled\b"
_WHERE = r"\b(?:during|inside|in|while|when|at|on|into)\b((?:[^,;.]|\.(?!\s)){0,60})"


def note_phase(note: str) -> tuple[Phase, str] | None:
    """The phase named where the note says the run failed ("fails inside loss.backward()"), else anywhere."""
    sentences = re.split(r"(?<=[\w)\]])[.;]\s+(?=[A-Z])|\n", note)
    failing = [sentence for sentence in sentences if _search(_FAILURE_WORDS, sentence)]
    for scope in [*failing, note]:
        for where in re.finditer(_WHERE, scope, re.IGNORECASE):
            for phase, pattern in _PHASE_NOTE_PATTERNS:
                match = _search(pattern, where.group(1))
                if match:
                    return phase, f'the note says "{where.group(0).strip()}"'
        for phase, pattern in _PHASE_NOTE_PATTERNS:
            match = _search(pattern, scope)
            if match:
                return phase, f'the note says "{match.group(0)}"'
    return None


def detect_phase(context: TriageContext, note: str) -> tuple[Phase, str | None]:
    """The innermost frame that names a phase wins; the note decides when frames say nothing."""
    if context.error and context.error.backend == "host" and "DataLoader" in (context.error.raw_message or ""):
        return "data_loading", "a DataLoader worker died"
    stack = list(reversed(context.stack.frames)) if context.stack else []
    # Innermost first, the user's own frames before library frames: the user's frame nearest the
    # failure names the phase (a library's `_engine_run_backward` says less than `validate()`).
    frames = [frame for frame in stack if frame.is_user] + [frame for frame in stack if not frame.is_user]
    for frame in frames:
        text = f"{frame.function or ''} {frame.code or ''}"
        for phase, pattern in _PHASE_FRAME_PATTERNS:
            if _search(pattern, text):
                return phase, f"stack frame `{(frame.code or frame.function or '').strip()[:80]}`"
    phase = note_phase(note)
    if phase:
        return phase
    return "unknown", None


def read_runtime(context: TriageContext, signals: Signals) -> None:
    """What the live process told the hook: its arguments, steps done, grad and autocast state."""
    runtime = context.runtime
    from_argv = Signals()
    read_numbers(" ".join(runtime.argv[1:]), from_argv)
    for name in ("batch_size", "seq_len"):
        if getattr(signals, name) is None and getattr(from_argv, name) is not None:
            setattr(signals, name, getattr(from_argv, name))
            signals.evidence[name] = f"the command line: {' '.join(runtime.argv[1:])[:120]}"
    steps = runtime.steps_completed
    if steps is not None and signals.phase in ("training", "unknown"):
        if steps == 0:
            signals.immediate = True
            signals.evidence["immediate"] = "no optimizer step completed before the OOM"
        elif steps >= 2:
            signals.growth = True
            signals.evidence["growth"] = f"{steps} optimizer steps completed before the OOM"


def read_signals(context: TriageContext) -> Signals:
    note = context.note or ""
    frames = frame_text(context)
    everything = "\n".join([note, frames, context.error.raw_message if context.error else ""])
    signals = Signals()
    signals.phase, signals.phase_source = detect_phase(context, note)
    read_numbers(note, signals)
    if context.runtime:
        read_runtime(context, signals)
    flags = {
        "growth": (_GROWTH, note), "immediate": (_IMMEDIATE, note), "batch_no_help": (_BATCH_NO_HELP, note),
        "repeated_calls": (_REPEATED, note), "upgrade_regression": (_UPGRADE, note),
        "other_process_hint": (_OTHER_PROCESS, note), "cpu_mode": (_CPU_MODE, note),
        "serving_engine": (_SERVING, everything), "full_finetune": (_FULL_FINETUNE, note),
        "low_precision": (_LOW_PRECISION, note), "uses_adam": (_ADAM, everything),
        "hf_trainer_eval": (_HF_TRAINER, everything), "only_multi_gpu": (_ONLY_MULTI_GPU, note),
    }
    for name, (pattern, text) in flags.items():
        match = _search(pattern, text)
        if match:
            setattr(signals, name, True)
            signals.evidence[name] = match.group(0)
    if _search(r"0\.3(?:\.\d)?\b.{0,60}0\.4|0\.4(?:\.\d)?\b.{0,40}(?:from|after) 0\.3", note) and signals.upgrade_regression:
        signals.upgraded_to_torch_04 = True
    signals.distributed = bool(_search(r"multi-?gpu|\bddp\b|distributed|torchrun|deepspeed|\bzero\b|zero-?[123]|fsdp|\branks?\b|"
                                       r"model[- ]parallel|data[- ]parallel|accelerate launch|multi-node", everything)) \
        or (signals.gpu_count or 0) > 1 or len(context.failing_ranks) > 1 or (context.environment.world_size or 1) > 1
    signals.fsdp = bool(_search(r"\bfsdp\b|fully_shard|FullyShardedDataParallel", everything))
    tf = _search(r"tensorflow|\btf\b|keras|tensorflow_datasets|\btfds\b", everything)
    jax = _search(r"\bjax\b|flax|\bxla\b|haiku|acme", everything) or (context.error and context.error.framework == "jax")
    signals.tensorflow_with_jax = bool(tf and jax) or bool(_search(r"tensorflow.{0,40}(?:beside|with|alongside|and) (?:jax|pytorch|torch)|"
                                                                  r"(?:jax|pytorch|torch).{0,60}tensorflow", note))
    for name, pattern in (("detection", _DETECTION), ("variable_length", _VARIABLE_LENGTH), ("diffusion", _DIFFUSION),
                          ("llm", _LLM), ("encoder", _ENCODER)):
        if _search(pattern, everything):
            signals.domains.add(name)
    return signals
