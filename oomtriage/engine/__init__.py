"""The rule engine: facts first, then ranked causes with evidence and fixes. No model needed."""

from __future__ import annotations

import re
from collections import defaultdict

from oomtriage.models import Cause, EngineInfo, TriageContext, TriageReport
from oomtriage.fixkinds.backends import spell, spelling_of
from oomtriage.taxonomy import title_of

from .calibration import calibrate
from .facts import compute_numbers
from .fixes import fixes_for
from .rules import AUTOGRAD_CAUSES, RuleInput, Vote, all_rules
from .signals import HOW_TO_FIT_A_CARD, MEMORY_EXCEEDED, read_signals
from .note_language import english_reading

MAX_CAUSES = 6
MIN_CAUSES = 3
MAX_CONFIDENCE = 0.97
# What a note says when the run died, in the words users type ("runs out of GPU memory", "the job
# crashes", "memory error", "gets killed"), or that its memory climbs on the way there ("a memory
# leak", "memory usage keeps increasing"): enough to rank causes without the message.
_NOTE_SAYS_IT_DIED = re.compile(
    r"out[- ]of[- ](?:\w+ )?memory|\bout of (?:gpu |video )?(?:vram|video ram)\b|"
    # the largest batch that fits, said as a limit: "the max batch per GPU is 2, not 4"
    r"\b(?:max(?:imum)?|largest|biggest) (?:\w+ )?(?:batch(?:[ _-]?size)?|frames|images|samples|sequences)(?: per (?:gpu|card|device))? "
    r"(?:that fits |(?:i|we) can (?:fit|use|run|train with) )?(?:is|was) (?:only )?\d+\b|(?:runs?|ran) out of(?! (?:the )?(?:data|samples|batches|items|examples|files|steps|time|patience|disk|space|tokens|ideas|options)\b)|\bruns? out (?:first|too|early|quickly|soon)\b|"
    # "it takes more than 32G and runs out": run out of nothing named is out of memory
    r"\b(?:runs?|ran|running) out\b(?! of\b)(?!\w)|\bOOM(?:s|ed|'d|ing)?\b|OutOfMemory|RESOURCE_EXHAUSTED|ResourceExhausted|"
    # space on a GPU is its memory: "a GPU with 15GB and it runs out of space", "out of space on the GPU"
    r"\b(?:gpus?|vram|cards?|graphics cards?|\d+ ?gb)\b[^.;?]{0,40}?\b(?:runs?|ran|running|is|was|goes|went) out of space\b|"
    r"\bout of (?:gpu |vram |video memory )?space (?:on|in) (?:the |my |a )?(?:gpu|vram|card|graphics card)\b|"
    r"oom-?kill|memory (?:error|exception|issue|problem)|\bMemoryError\b|"
    # "it complains that there is no more memory on CUDA"
    r"\bno (?:more |free )?memory (?:left )?(?:on|in) (?:the )?(?:cuda|gpu|vram|device|card)\b|"
    # "there is just not enough memory for both models", "insufficient GPU memory"
    r"\b(?:not|isn't|is not|wasn't|was not|no longer) (?:enough|sufficient) (?:gpu |video |device |host |system |cuda )?(?:memory|vram|ram)\b|\binsufficient (?:gpu |video |device |cuda )?(?:memory|vram)\b|"
    # "it is impossible to run it with 8GB of VRAM", "can't load it on my 6 GB card"
    r"\b(?:impossible|unable|not able) to (?:run|fit|train|load|use)\b[^.;?]{0,30}?\b(?:with|on|in) (?:only |just |my |a |an )?\d+(?:\.\d+)? ?(?:GB|GiB|G)\b|"
    r"\b(?:can't|cannot|can not|couldn't|could not|won't|will not) (?:run|fit|train|load)\b[^.;?]{0,30}?\b(?:with|on|in) (?:only |just |my |a |an )?\d+(?:\.\d+)? ?(?:GB|GiB|G)\b|"
    # "my 10GB card cannot run it", "it no longer fits my 12 GB card", "the buffer cannot be allocated anymore"
    r"\b\d+(?:\.\d+)? ?(?:GB|GiB|G) (?:card|gpu|vram|graphics card)\b[^.;?]{0,20}?\b(?:can't|cannot|can not|couldn't|could not|is not able to|isn't able to) (?:run|fit|load|handle|train)\b|"
    r"\b(?:no longer|doesn't|does not|don't|do not|won't|will not|wouldn't|would not|didn't|did not|can't|cannot|can not|not) fits? (?:on |in |into )?(?:my |the |a |an |one |this )?(?:\d+(?:\.\d+)? ?(?:GB|GiB|G) )?(?:card|gpu|vram|device|graphics card)(?: memory)?\b|"
    r"\b(?:cannot|can't|could not|couldn't) be allocated\b|\bfail(?:s|ed)? to allocate\b|"
    # "it cannot allocate 568 MB", "won't load: the 4 GB buffer can't be allocated"
    r"\b(?:cannot|can't|can not|could not|couldn't|unable to) allocate (?:about |around |~ ?|even )?\d+(?:\.\d+)? ?(?:[KMGT]i?B|[MG])\b|"
    # the allocator's words retyped: "it tries to allocate 400 GB"
    r"\b(?:tries|tried|trying|attempts?|attempted|attempting) to allocate (?:about |around |~ ?)?\d|"
    # "training does not start when I set imgsz to 2880 ... can it be memory limitations?"
    r"\b(?:does not|doesn't|won't|will not|did not|didn't) (?:even )?start\b|\bmemory limit(?:ation)?s?\b|\boverload(?:s|ed|ing)? (?:the )?(?:gpu(?:'s)? )?(?:memory|vram)\b|"
    r"\boverload(?:s|ed|ing)? the memory of the gpu\b|"
    # "training filled the GPU memory", "it fills up all the VRAM"
    r"\bfill(?:s|ed|ing)? (?:up )?(?:all |the whole |the entire )?(?:of )?(?:the |my )?(?:\d+ ?[GM]i?B (?:of )?)?(?:gpu(?:'s)? |video )?(?:memory|vram)\b|\b(?:fail|crash|die|abort)(?:s|ed|es|ing)?\b|\bdied\b|"
    r"\bmemory leak|\bleak(?:s|ing)? (?:\w+ )?memory\b|"
    # "loading the model makes the memory surge to double", "a surge in GPU memory when it loads"
    r"\b(?:memory|vram|ram)\b[^.;]{0,30}?\bsurges?\b|\bsurges? (?:in|of) (?:gpu |host |cpu |video )?(?:memory|vram|ram)\b|"
    # "the memory just blows up", "VRAM explodes", "reserved grows until the device is full"
    r"\b(?:memory|vram|ram|usage)\b[^.;]{0,20}?\b(?:blows?|blew|blowing) up\b|\b(?:memory|vram|ram)(?: usage)? (?:explode|explodes|exploded|exploding|explosion)\b|"
    r"\b(?:blows?|blew|blowing) up (?:my |the |all (?:of )?(?:my |the )?)?(?:gpu |system |host )?(?:ram|memory|vram)\b|"
    # host memory gone to swap: "a tremendous memory usage that requires swapping on disk"
    r"\b(?:requires?|required|starts?|started|goes? into|went into|ends? up|ended up|forced? (?:in)?to)\b[^.;]{0,10}?\b(?:swapping|to swap|using (?:the )?swap)\b|"
    r"\buntil (?:the )?(?:device|gpu|card|vram|memory|ram)(?:'s memory)? (?:is |gets |becomes |was )?(?:completely )?full\b|"
    # "until out of my 64G ram", "it ran through all 24 GB of VRAM"
    r"\bout of (?:my |the |all (?:of )?(?:my |the )?)?\d+(?:\.\d+)? ?(?:GB|GiB|G)\b(?: of)? (?:\w+ )?(?:ram|memory|vram)\b|"
    # "a two-layer GCN eats all the host RAM", "the RAM gets exhausted"
    r"\b(?:eats?|ate|eating|uses? up|used up|using up|exhausts?|exhausted|exhausting|consumes?|consumed|takes? up|took up|hogs?) (?:all|every bit) (?:of )?(?:the |my |its )?(?:host |system |cpu |gpu |main |available )?(?:ram|memory|vram)\b|"
    r"\b(?:ram|memory|vram) (?:is |gets |got |was |becomes |became )?(?:completely |entirely )?(?:exhausted|used up|maxed out)\b|"
    r"\b(?:memory|vram|ram)(?: usage| use| consumption| footprint| occupied| used| in use)?(?: and \w+(?: \w+){0,2}?)? (?:keeps |keep |kept |is |was |steadily |constantly )?(?:\w+ly )?(?:increas|grow|climb|ris|spik)(?:e|es|ed|ing|s|ws|th)?\b|"
    # "the GPU gets more and more memory in the validation phase"
    r"\b(?:gets?|got|getting|takes?|took|taking|uses?|using|consumes?|consuming|occupies|occupying|allocates?|allocating|eats?|eating) more and more (?:gpu |cuda |video |device )?(?:memory|vram)\b|"
    # "a continuous rising of GPU memory", "the steady growth of VRAM usage"
    r"\b(?:continuous|constant|steady|gradual|ceaseless|unbounded|linear)(?:ly)? (?:rise|rising|increase|increasing|growth|growing|climb|climbing) (?:of|in) (?:the )?(?:gpu |cuda |video |host |cpu |device )?(?:memory|vram|ram)\b|"
    # memory one GPU holds beyond its share: "unbalanced GPU memory", "almost a GB each on GPU0"
    r"\b(?:unbalanced|imbalanced|uneven|lopsided) (?:gpu )?(?:memory|load|usage|vram)\b|"
    r"\b(?:gpu|memory|vram|load|usage)(?: load| memory| usage| use)? (?:is |was |gets |looks )?(?:unbalanced|uneven|imbalanced|lopsided)\b|"
    r"\b(?:GB|GiB|MB|MiB) (?:each |apiece )?on (?:gpu ?0|cuda:0|device 0|the first gpu)\b|"
    r"\b(?:gpu ?#?0|cuda:0|device 0|the first gpu)\b[^.;]{0,50}?\bprocess(?:es)? (?:\w+ )?(?:holding|using|taking|occupying|with) (?:~ ?|about |around )?\d|"
    r"\b(?:gpu ?#?0|rank ?0|cuda:0|device 0|the first gpu|one (?:of the )?gpus?)\b[^.;]{0,30}?\b(?:holds?|uses?|takes?|has|gets|needs?|allocates?) "
    r"(?:a lot |much |far |way )?(?:more|most|extra) (?:gpu |vram |video )?(?:memory|vram)\b|"
    rf"\bkill(?:s|ed)\b|\berror\b|\bexception\b|{MEMORY_EXCEEDED}|"
    # asking for a way to fit a card of a stated size says it does not fit as it is
    rf"{HOW_TO_FIT_A_CARD}", re.IGNORECASE)
_TEXT_SAYS_MEMORY_RAN_OUT = re.compile(
    r"\bOOM(?:s|ed|'d)?\b|out[- ]of[- ](?:gpu[- ]|cuda[- ]|video[- ]|device[- ])?memory\b|"
    r"\b(?:ran|runs?|running) out of (?:gpu |cuda |video |device )?(?:memory|vram)\b|"
    r"\b(?:not|isn't|is not) enough (?:gpu |cuda |video |device )?(?:memory|vram)\b", re.IGNORECASE)
_MEMORY_EXCEPTION = re.compile(r"memory|alloc|exhausted|\bOOM\b", re.IGNORECASE)


def suspect_an_oom(context: TriageContext) -> bool:
    """No OOM message: is there still a failure to rank? A traceback cut before its exception
    line, or a note that says the run died. A recognised non-OOM error, or a traceback that ends
    in an exception about something other than memory, is not one."""
    if context.non_oom_errors:
        return False
    stack = context.stack
    if stack and stack.exception_line and not _MEMORY_EXCEPTION.search(stack.exception_line):
        return False
    cut_traceback = bool(stack and stack.frames and not stack.exception_line)
    if cut_traceback or _NOTE_SAYS_IT_DIED.search(english_reading(context.note or "")):
        return True
    # A report pasted as prose rather than a log ("After 4 steps, the OOM occurs."): the text says in
    # words that memory ran out. Only memory words count here; a log's "error" or "failed" may be anything.
    text = context.excerpt.text if context.excerpt else ""
    return bool(text) and bool(_TEXT_SAYS_MEMORY_RAN_OUT.search(text[-20000:]))


def combine(votes: list[Vote]) -> dict[str, tuple[float, list[str], list[str]]]:
    """Noisy-or of the positive votes, scaled down by each negative one. Each cause keeps the texts
    for it and, apart, the texts against it: a reason that lowered a cause is not evidence of it."""
    positive: dict[str, float] = defaultdict(lambda: 1.0)
    negative: dict[str, float] = defaultdict(lambda: 1.0)
    evidence: dict[str, list[str]] = defaultdict(list)
    against: dict[str, list[str]] = defaultdict(list)
    seen: dict[str, None] = {}  # the causes in the order first voted on, so that ties keep one order
    for vote in votes:
        seen.setdefault(vote.cause)
        if vote.weight >= 0:
            positive[vote.cause] *= 1.0 - vote.weight
            texts = evidence[vote.cause]
        else:
            negative[vote.cause] *= 1.0 + vote.weight
            texts = against[vote.cause]
        if vote.evidence not in texts:
            texts.append(vote.evidence)
    scores = {}
    for cause in seen:
        score = (1.0 - positive[cause]) * negative[cause]
        scores[cause] = (round(min(MAX_CONFIDENCE, score), 3), evidence[cause], against[cause])
    return scores


def _other_title(votes: list[Vote]) -> str:
    """`other` is a cause outside the taxonomy, so its title says which: the strongest vote's own
    name for it ("TPU tile padding: ..." gives "Other: TPU tile padding")."""
    strongest = max((vote for vote in votes if vote.cause == "other" and vote.weight > 0), key=lambda vote: vote.weight, default=None)
    if strongest is None:
        return title_of("other")
    head = re.split(r"[:;(]|\. ", strongest.evidence, maxsplit=1)[0].strip().rstrip(".")
    if len(head) > 60:
        head = head[:60].rsplit(" ", 1)[0] + "..."
    return f"{title_of('other')}: {head}"


def rank_causes(context: TriageContext) -> tuple[list[Cause], RuleInput]:
    signals = read_signals(context)
    numbers = compute_numbers(context, signals)
    data = RuleInput(context=context, signals=signals, numbers=numbers)
    votes = [vote for rule in all_rules() for vote in rule(data)
             if data.has_autograd or vote.cause not in AUTOGRAD_CAUSES]
    scores = combine(votes)
    ordered = sorted(scores.items(), key=lambda item: item[1][0], reverse=True)
    keep = [item for index, item in enumerate(ordered) if item[1][0] > 0.05 or index < MIN_CAUSES][:MAX_CAUSES]
    framework = data.framework
    library = context.error.library if context.error else None
    spelling = spelling_of(context.error)
    causes = [
        Cause(id=cause, title=_other_title(votes) if cause == "other" else title_of(cause), confidence=calibrate(score), score=score,
              evidence=[spell(line, spelling) for line in evidence],
              counter_evidence=[spell(line, spelling) for line in against],
              fixes=fixes_for(cause, framework=framework, library=library, spelling=spelling))
        for cause, (score, evidence, against) in keep
    ]
    return causes, data


def triage(context: TriageContext) -> TriageReport:
    """Rank causes for the context's OOM (or for the note's, when the log lost the message)."""
    detected = context.error is not None
    suspected = not detected and suspect_an_oom(context)
    report = TriageReport(
        detected=detected,
        suspected=suspected,
        error=context.error,
        additional_ooms=context.additional_ooms,
        failing_ranks=context.failing_ranks,
        non_oom_errors=context.non_oom_errors,
        environment=context.environment,
        stack=context.stack,
        memory_summary=context.memory_summary,
        sources=context.sources,
        warnings=list(context.warnings),
        engine=EngineInfo(used="rules"),
    )
    if not detected and not suspected:
        if context.non_oom_errors:
            first = context.non_oom_errors[0]
            report.explanation.append(f"No out-of-memory error found. The error that is there is not an OOM: {first.operation}.")
        else:
            report.explanation.append("No out-of-memory error found in the input.")
        return report
    causes, data = rank_causes(context)
    report.causes = causes
    report.phase = data.signals.phase
    report.facts = data.numbers.facts
    report.explanation = list(data.numbers.explanation)
    if suspected:
        report.warnings.append("Suspected OOM: the input holds no OOM message; the ranking rests on the traceback, "
                               "the phase and the note.")
    if context.additional_ooms:
        report.explanation.append(f"{context.additional_ooms} more OOM(s) follow the first in the log; the first is analysed.")
    if data.signals.phase != "unknown":
        report.explanation.append(f"Phase: {data.signals.phase} ({data.signals.phase_source}).")
    return report
