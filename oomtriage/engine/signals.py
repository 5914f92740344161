"""Signals read from the user's note, the command line, the stack trace and the log around the OOM:
the phase and timing of the failure, the workload (model size, batch, sequence length, GPUs), what
changed, and where the allocation was made. General knowledge about how OOMs arise lives in the
rules; this module only reads what was said, in the words users type (each pattern is written for
the many ways a person says one thing, never for the wording of one report)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from oomtriage.gpus import capacity_of_gpu, find_gpu_name
from oomtriage.models import Frame, Phase, TriageContext
from oomtriage.sizes import parse_size

# --- phases named by code: function names and source lines of the frames -----------------------
_PHASE_FRAME_PATTERNS: list[tuple[Phase, str]] = [
    ("data_loading", r"_worker_loop|dataloader|__getitem__|collate|pin_memory|_next_data"),
    # A call or a function named restore/resume, not a flag passed along ("restore=args.restore").
    ("loading", r"load_state_dict|torch\.load|\bload\(|from_pretrained|load_checkpoint|(?:^|[\s.])_?(?:restore|resume)\w*(?:\(|\s|$)|"
                r"load_\w*(?:state|ckpt|checkpoint|weights|model)|_load_from_state_dict|load_model|safe_open|load_file"),
    ("optimizer_setup", r"(?:init|initiali[sz]e|configure|setup|create|build)_\w*optim|deepspeed\.initialize|\binitialize\(|"
                        r"ZeroOptimizer|zero_optim|_init_zero|optimizer_and|and_optimizer"),
    ("generation", r"\bgenerate\b|beam_search|\bsample\(|greedy_search|past_key_values|\.chat\(|\bchat\b|decode_step|"
                   r"transcribe|pipeline\(|profile_run|determine_num_available_blocks|_profile"),
    ("evaluation", r"\beval(?:uate|uation)?\b|\bvalid(?:ate|ation)?\b|_?eval_?|_?val_?(?:step|epoch|loop)|validation_step|"
                   r"\btest(?:_step|_loop|_epoch)?\b|\bpredict(?:ion_step|ion_loop)?\b|\binference\b|evaluation_loop|\binfer\b|"
                   r"\bval_|_val\b|\bdemo\b"),
    ("training", r"backward|optimizer\.step|\.step\(\)|training_step|train_step|\btrain\b|train_epoch|\bfit\b|compute_loss|_train"),
]
# --- phases named in the note -------------------------------------------------------------------
_PHASE_NOTE_PATTERNS: list[tuple[Phase, str]] = [
    ("data_loading", r"data ?loader (?:worker|thread|process)|\bworkers? (?:\w+ )?(?:killed|died|crash)|"
                     r"(?:while|when) (?:loading|reading|iterating|fetching) (?:the )?(?:data|batches|dataset|dataloader)|"
                     r"iterating (?:over )?the data ?loader|pin(?:ned)?[- ]memory"),
    ("optimizer_setup", r"sets? up (?:the )?(?:\w+ )?optimi[sz]er|optimi[sz]er (?:set-?up|initiali[sz]ation|creation|construction)|"
                        r"(?:creat|initiali[sz]|construct|build)\w* (?:the )?(?:\w+ )?optimi[sz]er|before the first (?:training )?step"),
    ("loading", r"\bresum(?:e|ing|ed)\b|\brestor(?:e|ing|ed)\b|\breload(?:ing|ed)?\b|"
                r"(?:weights|model|checkpoint|state|ckpt)s? (?:are|is|were|was) (?:being )?load|"
                r"load(?:ing|s)? (?:the |a |my |its )?(?:\w+ ){0,2}(?:model|weights|checkpoint|state(?: dict)?|ckpt)|"
                r"from_pretrained|torch\.load\b|load_state_dict|(?:fail|crash|die)\w* (?:while|when) load"),
    ("generation", r"\bgenerat(?:e|es|ed|ion|ing)\b|\bbeam\b|\bserv(?:e|es|ed|ing|ice)\b|\b(?:model|inference|api|http|grpc|triton|llm|vllm|sglang|tgi|ollama|lmdeploy|openai-compatible|chat|serving) server\b|\bprompt tokens\b|\bchat\b|\.chat\(|\btranscri(?:be|bing|ption)|"
                   r"\binference (?:server|engine)|\bsampling\b|\bsample (?:from|text|tokens|images|sequences)\b|\bnum_samples\b|\bdecod(?:e|ing)\b|\bprefill\b"),
    ("evaluation", r"\bvalidat(?:e|ion|ing)\b|\bevaluat(?:e|ion|ing)\b|\beval\b|\btest(?:ing)? (?:loop|pass|set|phase|step|script|images?)\b|"
                   r"\btest\.py\b|\btest script\b|\btest(?:ing)? (?:the |a |my |our |this )?(?:\w+ )?(?:model|network|checkpoint)s?\b|\binference\b|\bpredict(?:ion|ions|ing|s)?\b|\bpredict\.py\b|"
                   r"\bval(?:idation)? (?:step|pass|loop)\b|evaluate\(\)|\bdemo\b|\binferenc(?:e|ing)\b|"
                   # Scoring text or images with a trained model: a loss or likelihood computed, no step taken.
                   r"\bperplexit(?:y|ies)\b|\bscor(?:e|es|ing) (?:a |the |my |each |some |every )?(?:\w+ )?(?:texts?|sentences?|samples?|documents?|prompts?|images?|completions?|sequences?)\b|\blog-?likelihoods?\b"),
    # "the trained model", "a pretrained / fine-tuned checkpoint" describe what is run, not training.
    # "we trained it for a day before the OOM" is training; "the GPU the model was trained on" is history
    ("training", r"\btrain(?:ing|s)?\b|\b(?:I|we|they) (?:\w+ )?trained\b|"
                 r"\bfine-?tun(?!ed\b)|\bpre-?train(?!ed\b)|\bfit\b|\bbackward\b|\bforward pass\b"),
]
_SERVING = (r"\bvllm\b|\btgi\b|text-generation-inference|lmdeploy|turbomind|sglang|ollama|llama\.cpp|\btensorrt-llm\b|"
            r"\btrt-llm\b|inference server|serving engine|\bengine (?:start|init)|gpu_memory_utilization|mem-fraction|"
            r"max_model_len|max-model-len|kv[- ]cache")
# --- timing -------------------------------------------------------------------------------------
_GROWTH = (r"climb\w*|creep\w*|keeps? (?:increas|grow|going up|rising|climbing)\w*|(?:rises?|rising|grows?|growing|increas\w*|goes up|going up)"
           # "increasing the batch size" is a setting that changed, not memory that grew
           r"(?! (?:the |my |our )?(?:batch|resolution|image|sequence|seq|context|input|model)\b)"
           r"(?: \w+){0,3} (?:every|each|over|with|after|batch|step|iteration|epoch)|"
           r"after (?:about |some |a few |several |many |(?<![\d.,])\d[\d,]* |the first )(?:\w+ )?(?:epochs?|iterations?|steps?|batches)\b|"
           r"(?:during|in|at) (?:epoch|iteration|step) \d+|(?<![\d.,])\d[\d,]* (?:epochs?|iterations?|steps?) (?:in|into|later)|"
           r"partway|part-way|mid-?(?:training|epoch|run|way)|midway|"
           r"first (?:few )?(?:\w+ )?(?:iterations?|steps?|epochs?|batches) (?:run|work|go|are|pass|succeed)|batch after batch|"
           r"for a while|memory leak|\bleak\w*|over time|eventually|occasionally|"
           r"(?:rising|rose|grew|growing|goes) from|"
           # "memory slowly grows", "VRAM usage accumulates", with no negation between subject and verb
           r"(?:memory|usage|vram|allocated|reserved)\b(?:(?!\bnot\b|n't\b|\bno\b|\bnever\b)[^.;]){0,40}?"
           r"\b(?:grows?|growing|grew|increases?|increasing|increased|rises?|rising|rose|climbs?|accumulat\w*|goes up|builds? up)\b|"
           r"(?:works?|runs?|ran|trains?|trained|goes|went|is fine) (?:fine |well |ok |normally )?for (?:about |around |~ ?)?"
           r"(?<![\d.,])\d[\d,]* (?:epochs?|iterations?|steps?|batches|hours?|minutes?)|"
           r"after (?:~ ?|around |roughly |approximately |over |more than )(?<![\d.,])\d[\d,.]*k? (?:\w+ )?(?:epochs?|iterations?|steps?|batches)")
# The script already drops its tensors and empties the cache every iteration: memory that still
# grows is not held by the script's references.
_FREES_EVERY_STEP = (r"(?:delet|del\b|free|releas|clear)\w* (?:the |all |my )?(?:[\w/]+(?:, | and | ?/ ?)){0,4}[\w/]+ "
                     r"(?:\w+ ){0,2}(?:every|each|after every|after each) (?:iteration|step|batch|epoch)|"
                     r"(?:every|each) (?:iteration|step|batch)[^.;]{0,50}\b(?:delete|del|free|empty_cache|gc\.collect)|"
                     r"empty_cache\(\)[^.;]{0,30}\b(?:every|each|after every|after each) (?:iteration|step|batch)")
# "the first step after evaluation" is not "at once": the run got through training and an evaluation.
_IMMEDIATE = (r"as soon as|immediately|right away|at once|first (?:training )?(?:step|iteration|batch|forward)\b(?! (?:after|following|once))|"
              r"(?:when|as) (?:training|the run|it) (?:starts|begins)|at (?:start-?up|the start|launch)|during (?:start-?up|initiali[sz]ation)|"
              r"before any|right after (?:start|launch)|very first|at the (?:very )?(?:beginning|start)\b|"
              r"before (?:a single|the first|one) (?:training )?(?:step|iteration|batch|epoch)")
# --- what the user tried and what changed -------------------------------------------------------
_SMALLER = r"(?:lower\w*|reduc\w*|smaller|decreas\w*|shrink\w*|halv\w*|cut\w*|even with|also with|still \w+ with|tried)"
_DID_NOT_HELP = r"(?:did ?n[o']t|does ?n[o']t|didn't|doesn't|no|not) (?:help|change|fix|work|matter|solve)|still (?:fails?|get|hit|oom|crash|run)|same error|no change|with no (?:change|effect)|no effect|nothing changed"
_BATCH_NO_HELP = (rf"{_SMALLER}.{{0,40}}batch.{{0,60}}(?:{_DID_NOT_HELP})|batch size (?:of |=\s?)?1\b.{{0,40}}(?:{_DID_NOT_HELP}|fails?|still)|"
                  rf"(?:even|still) (?:\w+ )?(?:with|at) (?:a )?(?:batch(?: size)? (?:of )?1|smaller batch)|"
                  rf"batch[_ ]size\s?=?\s?[12]\b.{{0,30}}(?:{_DID_NOT_HELP})|whatever the (?:batch|dataset)|"
                  # "even when going from batch size 12 to batch size 1"
                  r"(?:even|still)\b[^.;]{0,60}\bto (?:a )?(?:batch(?:[ _-]?size)?\s?(?:of |=\s?)?)?[12]\b(?! ?(?:gpus?|nodes?|cards?|epochs?))")
_INPUT_NO_HELP = rf"{_SMALLER}.{{0,30}}(?:pictures?|images?|inputs?|resolution|crops?|sequences?|files?).{{0,40}}(?:{_DID_NOT_HELP})|whatever the dataset size"
_REPEATED = (r"repeatedly|in a (?:python )?loop|(?:second|next|another|later) (?:\w+ )?(?:fit|call|run|time|model|task|evaluation)\b|"
             r"(?:after|once) the first (?:\w+ )?(?:evaluation|eval|epoch|fit|call|run|task)|one after another|in (?:sequence|succession|turn)|"
             r"(?:after|following) (?:an |the |each |every )?(?:evaluation|eval|validation)\b|"
             r"many (?:runs|fits|models|experiments|calls)|series of|several times|across (?:many|multiple) (?:calls|runs)|"
             r"on its own (?:works|is fine|runs)|different (?:sizes|shapes|dimensions)|varying (?:sizes|shapes)")
# A version is a dotted number, or a number the words "version", "release", "commit" name: "works
# with fp16" or "runs on 8 GPUs" is not a version that worked.
_A_VERSION = r"(?:(?:version|release|commit|build|tag) [\w.-]*\d[\w.-]*|v?\d+\.\d+[\w.+-]*)"
# A size or a count after "since" is not a version: "since 2.5 GB are free".
_A_VERSION_NOT_SIZE = rf"{_A_VERSION}(?!\s?(?:[KMGT]i?B|%|x\b|s\b|seconds?|minutes?|hours?|days?|epochs?|steps?))"
_LIBRARY_WORDS = r"torch|pytorch|vllm|transformers|tensorflow|jax|cuda|drivers?|deepspeed|accelerate|peft|diffusers|xformers|sglang|triton|nccl|cudnn|lightning"
_LIBRARY_NAMES = rf"(?:{_LIBRARY_WORDS})"
_VERSION_CHANGE = (rf"(?:after|since|when) (?:upgrad|updat|pull|bump)\w*|since (?:\w+ ){{0,2}}{_A_VERSION_NOT_SIZE}|"
                   # Two builds named, one that works and one that does not ("working: 2.1.0, broken: 2.2.0").
                   r"(?:after|since|with|from) (?:the |that )?(?:PR|pull request|merge request|commit|merge) ?#?\w*\d|(?:build|version|release|commit) (?:just )?before (?:that|the|this)|"
                   rf"\b(?:broken|bad|failing|regressed)\b(?: \([^)]{{0,30}}\))?(?: version| build)?\s?[:=]\s?(?:\S+ ){{0,2}}{_A_VERSION}|"
                   rf"(?:use|using|back to|revert\w* to|roll\w* back to|stay(?:ing)? on|stick\w* (?:to|with)|pin\w* (?:to )?) (?:the |an )?(?:old|older|previous|earlier) "
                   rf"(?:{_LIBRARY_NAMES}|version|release|build|commit)|no longer (?:fits?|works?|runs?|trains?|starts?|loads?)\b|"
                   rf"(?:can't|cannot|can not|could not|couldn't|won't) (?:[^.;]{{0,60}})\banymore\b|after (?:the |a |an )?(?:\w+ ){{0,3}}(?:update|upgrade)\b|(?:after|since|when) (?:moving|switching|going) to (?:the )?(?:new|newer|latest|{_A_VERSION})|"
                   rf"upgrad\w* (?:to|past|from)|(?:updat|bump)(?:ed|ing) (?:\w+ ){{0,2}}(?:to|past|from) [^.;]{{0,25}}(?:\d+\.\d+|version|release|latest|newest)|"
                   rf"downgrad\w*|(?:worked|works|ran|runs|was fine|fine) (?:\w+ ){{0,3}}(?:on|under|with|in|before) (?:\w+ )?{_A_VERSION}|"
                   rf"(?:disappears?|disappeared|goes away|went away|(?:does|did)(?: not|n't) (?:happen|occur|leak)|is gone) (?:\w+ ){{0,2}}(?:on|under|with|in|when using) (?:\w+ )?{_A_VERSION}|"
                   r"(?:older|previous|earlier|last) (?:version|release|build|commit)|a build from|\bnightly\b|(?:new|latest|recent) build|\bregress\w*|\bbisect\w*|"
                   r"newer (?:version|release|build)|new (?:version|release)|latest (?:commit|version|release|master|main)|"
                   r"used to (?:start|work|run|fit)|previously (?:working|worked|fine|fitting|ran|running)\b|"
                   r"(?:recent|latest|new|last) (?:\w+ ){0,2}(?:update|upgrade|release|version)s?\b[^.;]{0,60}\b(?:broke|breaks|broken|caused?|causes|leads? to|led to|multipl\w+|doubl\w+)\b|(?:worked|fine) (?:a few |some |several )?(?:weeks?|days?|months?) (?:ago|earlier)|"
                   r"(?:worked|ran|was fine|were fine|fit|fitted)[^.;]{0,20}\b(?:last (?:week|month|year)|yesterday)")
_OTHER_PROCESS = (r"(?:another|other|second|two|several|someone else'?s?|other people'?s?) (?:\w+ )?(?:process(?:es)?|jobs?|users?|programs?|runs?|"
                  r"copy|copies|instances?|scripts?|notebooks?|kernels?|sessions?|containers?|trainings?)\b|"
                  r"(?:gpu|card|device)s? (?:is |are |was |were )?(?:already )?(?:busy|in use|occupied|shared)|shared (?:gpu|machine|server|node|cluster)|"
                  r"already (?:in use|busy|running|occupied)|nvidia-smi shows? (?:\w+ ){0,4}(?:other|another|used by)|"
                  r"(?:held|used|taken|occupied) by (?:another|other|someone)|zombie|"
                  r"something else\b[^.;]{0,40}\b(?:uses?|holds?|takes?|occup\w+)\b|already (?:uses?|holds?|takes?) (?:most|all|much|\d+)|"
                  r"(?:colleague|coworker|co-worker|labmate|teammate|friend)'?s? (?:\w+ )?(?:jobs?|process\w*|runs?|training|notebooks?|models?)|orphan\w* process|"
                  r"(?:previous|earlier|old|last|crashed|dead) (?:\w+ )?(?:run|process|job|kernel|session)s? (?:is |are |was |were )?still|"
                  r"still (?:holds?|holding|occup\w+|using) (?:the |some |all )?(?:gpu |vram |video )?memory|"
                  # Other models served from the same card (an inference server hosting several).
                  r"(?:\d+|several|many|other|more) (?:other )?models? (?:are |were )?(?:\w+ ){0,3}(?:on|in) the same (?:gpu|card|server|device|machine|process)")
_ONLY_MULTI_GPU = (r"single-?gpu (?:\w+ )?(?:run|training|resume|job)?s? (?:does not|doesn't|do not|don't|works?|is fine|are fine|runs? fine)|"
                   r"(?:works?|fine|runs?|succeeds?) (?:fine |ok )?(?:on|with) (?:a |one )?single gpu|(?:on|with) (?:a |one )?single gpu (?:works|is fine)|"
                   r"only (?:with|on|when using) (?:multiple|several|more than one|all|\d+) gpus|"
                   r"(?:resum|train|run)\w* (?:on|with) (?:a |one )?single gpu works|(?:1|one) gpu works")
_CPU_MODE = r"\bcpu mode\b|--?(?:gpu|device)[= ](?:c|cpu|-1)\b|device=.?cpu|\bcpu[- ]only\b|on the cpu\b|meant to (?:use|run on) the cpu"
_CONSTRUCTION = (r"(?:while|when|during) (?:still )?(?:building|constructing|creating|initiali[sz]ing|instantiating) (?:the )?(?:\w+ ){0,3}"
                 r"(?:model|network|net|layers?|backbone|modules?)|before any (?:batch|data|step|input)|"
                 r"(?:during|in) (?:the )?(?:model|network) (?:construction|creation|building|initiali[sz]ation|instantiation)")
# The allocator's own settings against fragmentation, and whether the note says they helped.
_ALLOCATOR_SETTING = (r"expandable[_ ]segments|max_split_size_mb|garbage_collection_threshold|PYTORCH_CUDA_ALLOC_CONF|"
                      r"TF_GPU_ALLOCATOR\W{0,3}cuda_malloc_async|XLA_PYTHON_CLIENT_ALLOCATOR\W{0,3}platform|empty_cache\(\)")
_HELPED = r"\b(?:help(?:s|ed)?|fix(?:es|ed)?|solv(?:es|ed)|resolv(?:es|ed)|avoids?|avoided|works?|worked|goes away|went away|go away|disappear\w*|vanish\w*)\b"
_FRAGMENTATION_SAID = (r"\bfragment\w*|(?:reserved|cached) (?:memory )?(?:is |was |stays |grows )?(?:much |far |a lot )?(?:larger|bigger|higher|more) "
                       r"than (?:the )?allocated|(?:gap|difference) between (?:reserved|cached) and allocated")
# Training and an inference engine taking turns on the same GPUs (RL fine-tuning with rollouts).
_COLOCATED = (r"colocat\w*|co-locat\w*|\bgrpo\b|\bppo\b|\brlhf\b|\brollouts?\b|sleep[_ ]mode|wake[_ ]up|"
              r"offload\w* (?:and|/) (?:re)?load\w*|\bverl\b|openrlhf|nemo-rl")
# Optimizer states (or parameters) kept in host memory: ZeRO-Offload, FSDP's CPU offload.
_OFFLOAD = r"offload_(?:optimizer|param)\w*|cpu_offload|zero[-_ ]?\d?[-_ ]?offload|offload(?:ing|ed|s)? (?:the )?(?:optimizer|params|parameters|states?) (?:to|on) (?:the )?(?:cpu|host|nvme)|(?:cpu|nvme) offload"
# Host RAM, not the GPU, named as what fills up.
_HOST_RAM = (r"(?:system|host|cpu|main) (?:memory|ram)\b[^.;]{0,40}\b(?:fills?|filled|grows?|growing|climbs?|climbing|increas\w*|"
             r"runs? out|ran out|exhaust\w*|full|spikes?)|\b(?:ram|swap)\b (?:usage |use )?(?:fills?|grows?|climbs?|increas\w*|spikes?|runs? out|is full)|"
             r"oom[- ]kill(?:er|ed)|\bruns? out of (?:system |host |cpu )?ram\b|\bout of (?:system |host )?ram\b|\d+(?:\.\d+)? ?Gi?B of (?:system |host |cpu )?ram\b|"
             r"(?:exhaust\w*|fill\w*|us\w+ up|run\w* out of) (?:the )?(?:system|host|cpu|main) (?:memory|ram)\b|machine (?:freezes|hangs|becomes unresponsive)|(?:gpu|vram) (?:memory )?(?:is|looks|stays) (?:fine|ok|low)")
# The card full in nvidia-smi while PyTorch's own figures are small: memory outside PyTorch.
_OUTSIDE_PYTORCH = (r"(?:pytorch|torch|memory_allocated|memory_reserved|allocated)[^.;]{0,50}\b(?:small|low|only|little|tiny)\b"
                    r"[^.;]{0,60}nvidia-smi|nvidia-smi[^.;]{0,40}\b(?:full|much more|far more|almost all)\b[^.;]{0,60}"
                    r"(?:pytorch|torch|allocated|reserved)")
# The OOM appears only when compiling (torch.compile's graphs, CUDA graphs' pools, recompilations).
_ONLY_COMPILED = (r"(?:only|just) (?:happens |occurs |fails |ooms? )?(?:with|when (?:using|enabling|i use)) (?:torch\.)?compile|"
                  # Memory that grows or leaks with the compiled model and not without it.
                  r"\bleak\w* (?:\w+ ){0,2}(?:with|in|from|by|when using) (?:torch\.)?compile|(?:torch\.)?compile\w*[^.;]{0,30}\bleak\w*|"
                  r"without (?:torch\.)?compil\w*[^.;]{0,40}\b(?:flat|fine|works?|fits?|stable|constant|no leak|no growth|ok)\b|"
                  r"torch\.compile[^.;]{0,60}\b(?:ooms?|fails|out of memory)\b[^.;]{0,40}\b(?:eager|without)|"
                  r"(?:in )?eager (?:mode )?(?:it )?(?:works|is fine|fits|runs)[^.;]{0,40}(?:torch\.)?compile")
# The optimizer's step named as what fails, or an adaptive optimizer as the difference between
# fitting and not: its first step creates the per-parameter state.
_OPTIMIZER_STEP = (r"optimi[sz]er\.step\(\)|\boptimi[sz]er(?:'s)? (?:first )?step\b|\bopt\.step\(\)|"
                   # SGD keeps no (or one) state tensor per parameter, Adam two: one fitting where the other fails.
                   r"\bsgd\b(?:(?!\.\s)[^;\n]){0,60}\b(?:fits|works|is fine|runs|trains?|can train|no problem|ok|succeeds)\b(?:(?!\.\s)[^;\n]){0,60}\badam\w*|"
                   r"\badam\w*(?:(?!\.\s)[^;\n]){0,40}\b(?:ooms?|fails|runs? out|crash\w*|throws|gives|errors?)\b(?:(?!\.\s)[^;\n]){0,60}\bsgd\b|"
                   r"(?:mov|go|chang|switch)\w* (?:from \w+ )?to adam\w*|\b(?:first )?adam\w* step\b|\bexp_avg(?:_sq)?\b|momentum_buffer|"
                   r"optimi[sz]er'?s? moments?\b|(?:at|in|during) the (?:weight |parameter )?update\b|"
                   r"optimi[sz]er(?:'s)? states?\b[^.;]{0,40}\b(?:push\w*|too (?:big|large|much)|do(?:es)?(?:n't| not) fit|over the)|optimi[sz]er(?:'s)? states? (?:is |are )?(?:being )?(?:created|initiali[sz]ed|allocated)")
# Code the note quotes or describes that keeps each step's graph: a loss summed as a tensor,
# retain_graph, losses stored with their history.
# Every \w* that can precede "loss" starts at a word boundary: unanchored, a long word would be
# scanned again from each of its letters (quadratic).
_LOSS_KEPT = (r"\.append\(\s*\w*loss\w*\s*\)|\b(?P<sum>\w*loss\w*) ?= ?(?P=sum) ?\+ ?\w*loss\b(?!\.item)|\+= ?loss\b(?!\.item)|\b\w*loss\w* ?\+= ?\w*(?!\.item)|retain_graph ?= ?True|\bretain_graph\b|"
              r"(?:stor|keep|append|accumulat|sum|collect|sav|log)\w* (?:the |all |every |each )?(?:\w+ )?loss(?:es)?\b(?!\.item| ?values)|"
              # Any tensor summed across a loop while it requires grad keeps every iteration's graph.
              r"\b\w+ ?\+= ?\w+\b(?!\.item)[^\n]{0,200}requires_grad(?: is| =|=)? ?(?:on|true)|requires_grad(?: is| =|=)? ?(?:on|true)[^\n]{0,200}\b\w+ ?\+= ?\w+\b(?!\.item)")
# Outputs kept across steps: predictions, logits, features collected in a container.
_OUTPUTS_KEPT = (r"(?:keep|store|append|collect|cache|sav|accumulat|gather)\w* (?:all |the |every |each |my )?(?:\w+ )?"
                 r"(?:predictions|preds|outputs|logits|tensors|embeddings|features|results|activations|images|masks|"
                 r"hidden states|states|attention maps|maps|scores|probabilities|probs|latents)\b"
                 r"[^.;]{0,40}(?:\b(?:list|dict|array|cache|on the gpu|in memory)\b|\bself\.\w+)|"
                 # Loops that gather every batch's outputs for the end: Lightning's *_epoch_end hooks
                 # (up to 1.9 every step's returned dict stays on the GPU), fastai's get_preds.
                 r"\b(?:training|validation|test)_epoch_end\b|\bget_preds\b|"
                 r"\b(?:list|dict|cache|buffer|queue|deque) of (?:cached |stored |saved |gpu )?(?:\w+ )?"
                 r"(?:tensors|outputs|predictions|features|embeddings|logits|activations)\b")
# Attention named where the note says it failed, or the memory-efficient kernels it lacks.
_ATTENTION_SAID = (r"\b(?:self-|cross-)?attention\b|\battn\b|\bqk\^?t\b|without (?:flash|memory[- ]efficient|sdpa|xformers)|"
                   r"(?:flash[- ]?attention|xformers|sdpa) (?:is )?(?:not|n't) (?:installed|available|enabled|used)")
# A naive attention named anywhere in the note (the implementation, not only where it failed).
_NAIVE_ATTENTION = (r"(?:naive|vanilla|eager|plain|standard|manual|hand-written) attention|attn_implementation\W{0,3}eager|"
                    r"no[-_ ]mem(?:ory)?[-_ ]?(?:efficient[-_ ])?attention|without (?:a )?(?:memory[- ]efficient|flash|xformers|fused)\w* attention|"
                    r"\bseq(?:uence)? ?(?:x|×|by) ?seq(?:uence)?\b|quadratic (?:attention|memory)|attention (?:matrix|scores?) (?:is|are|grows?) quadratic")
# A memory-saving switch a library documents that the note says changed nothing at all.
_SWITCH_NO_EFFECT = (r"(?:enable_\w+|attention[_ ]slicing|vae[_ ]slicing|vae[_ ]tiling|cpu[_ ]offload\w*|sequential[_ ]offload\w*|low_cpu_mem_usage|"
                     r"PYTORCH_MPS_HIGH_WATERMARK_RATIO|gpu[_-]memory[_-]utilization|max[_-]memory)\b(?:(?!\.\s)[^;\n]){0,80}?"
                     r"(?:makes? no difference|made no difference|(?:has|had|have) no (?:\w+ )?effect|no (?:noticeable |visible )?effect|"
                     r"(?:is|was|gets?) ignored|(?:is|was) not applied|either way|seems? to have no)")
# A math library's handle or workspace named in the note.
_LIBRARY_SAID = (r"\bcu(?:dnn|blas\w*)\b[^.;]{0,40}\b(?:workspace|handle|alloc\w*)|CUBLAS_STATUS_ALLOC_FAILED|"
                 r"CUDNN_STATUS_(?:ALLOC_FAILED|INTERNAL_ERROR|NOT_INITIALIZED|EXECUTION_FAILED)|cudnn\w* workspace")
# The batch size raised as what made it fail ("from 8 to 32", "increasing the batch size").
_BATCH_RAISED = (r"(?:increas|rais|doubl|bump|go)\w* (?:up )?(?:the |my )?(?!from |down |back )(?:\w+ )?batch(?:[ _-]?size)?\b|"
                 r"batch(?:[ _-]?size)? (?:of |=\s?)?\d+ (?:works?|fits?|is fine|runs?)[^.;]{0,30}\b(?:but|while|and)\b[^.;]{0,20}\d+|"
                 r"works? (?:fine )?(?:with|at) (?:a )?batch(?:[ _-]?size)?\s?(?:of |=\s?)?\d+ but|"
                 r"(?:bigger|larger|higher) (?:mini-?)?batch(?:es| sizes?)?\b|above a (?:mini-?)?batch|"
                 r"\d+ (?:\w+ )?per (?:mini-?)?batch\b[^.;]{0,40}\b\d+ (?:\w+ )?per (?:mini-?)?batch")
# Gradients left on where nothing is trained: what the note says about requires_grad and no_grad.
_GRAD_LEFT_ON = (r"requires_grad(?: is| =|=)? ?(?:on|true|enabled)|grad(?:ients?)? (?:are |is )?(?:still )?(?:on|enabled)\b|"
                 r"keeps? (?:a|the) (?:computation(?:al)? |autograd )?graph|never (?:wrapped|used|put) (?:it |them )?(?:in|under) (?:torch\.)?no_grad|"
                 r"without (?:torch\.)?(?:no_grad|inference_mode)|forgot (?:to use |the )?(?:torch\.)?no_grad|no no_grad")
# The output layer named where the note says it failed: logits, the LM head, the loss over classes.
_LOGITS_SAID = (r"\blogits?\b|\blm[_ ]head\b|cross[- _]?entropy|\blog[_ ]?softmax\b|\boutput (?:layer|projection|embedding|softmax)|"
                r"(?:huge|large|big|enormous) (?:vocab\w*|number of (?:classes|labels|tokens))|"
                r"softmax over (?:the )?(?:vocab\w*|classes|labels|tokens)")
# More GPUs that did not lower the memory each one needs: every GPU holds a full replica.
_MORE_GPUS_NO_HELP = (r"(?:more|additional|extra|adding|\d+|two|four|eight) (?:\w+ )?(?:gpus?|cards|devices)\b[^.;]{0,40}"
                      r"(?:did ?n[o']t|does ?n[o']t|didn't|doesn't|not|never) (?:help|reduce|lower|change|fix|matter|make a difference)|"
                      r"(?:same|still|also) (?:\w+ ){0,4}(?:oom|error|out of memory|fails?)[^.;]{0,20} (?:with|on|across) "
                      r"(?:\d+|two|four|eight|more|multiple|several) (?:\w+ )?(?:gpus|cards|devices)|"
                      r"(?:memory|usage) (?:per|on each|of each) (?:gpu|card|device) (?:is |stays |remains )?(?:the same|unchanged|identical)|"
                      r"each (?:gpu|card|device|rank) (?:\w+ ){0,3}(?:full|whole|entire|complete) (?:copy|model|replica)|"
                      r"(?:each|every) (?:one|gpu|card|device|rank)\b[^.;]{0,30}\b(?:needs|uses|takes|holds) the same (?:memory|amount)|"
                      r"each (?:one |gpu |rank )?still (?:holds|keeps|has) the (?:full|whole|entire|complete) (?:model|copy|replica)")
# The cache growing while live tensors do not: the allocator keeps carving new blocks.
_RESERVED_GROWS = (r"allocated(?:\(\))?(?: memory)? (?:is|stays|remains|looks) (?:flat|constant|stable|the same|unchanged|steady|put)|"
                   r"(?:reserved|cached)(?: memory)?[^.;]{0,40}\b(?:grows?|growing|increas\w*|rises?|rising|climbs?|going up|goes up)\b[^.;]{0,60}"
                   r"allocated[^.;]{0,30}\b(?:stable|constant|flat|the same|steady|unchanged|does not|doesn't|stays put)|"
                   r"allocated[^.;]{0,30}\b(?:stable|constant|flat|the same|steady|unchanged)\b[^.;]{0,60}(?:reserved|cached)"
                   r"[^.;]{0,30}\b(?:grows?|growing|increas\w*|rises?|climbs?)")
# One GPU (the first, rank 0) holding more than the others in a multi-GPU run.
_ZEROTH = r"(?:gpu|card|device|rank|cuda:?)[- ]?#?0\b|(?:first|main|master) (?:gpu|card|device|rank)\b"
_HEAVIER = (r"\b(?:more|most|higher|larger|extra|a lot|lots|much|heavier|all (?:the )?(?:gpu |vram |video )?memory|"
            r"occupied|fills? up|full)\b")
_RANK0_HEAVY = (rf"(?:{_ZEROTH})[^.;]{{0,60}}?{_HEAVIER}|{_HEAVIER}[^.;]{{0,40}}?\b(?:on|by|in|of) (?:the )?(?:{_ZEROTH})|"
                rf"(?:several|multiple|many|\d+|extra|other) (?:\w+ )?processes (?:\w+ ){{0,2}}on (?:the )?(?:{_ZEROTH})|"
                r"(?:only|just) (?:on )?(?:the )?(?:first gpu|gpu ?0|rank ?0|device ?0|cuda:0)|"
                r"(?:every|each|all)(?: the)? (?:\w+ )?(?:ranks?|process(?:es)?|workers?)\b[^.;]{0,50}(?:cuda:0|gpu ?0|the same gpu|the first gpu|one gpu)|"
                r"\b(?:unbalanced|imbalanced|imbalance|uneven\w*)\b|other gpus? (?:\w+ ){0,4}(?:less|only|barely|half|far below)")
# More than one GPU, said without a count: "my GPUs are TITAN Xp", "more than the others".
_SEVERAL_GPUS = r"\b(?:my|our|the|both|all|two|several|multiple|these) (?:\w+ )?(?:gpus|cards)\b|than (?:all )?the (?:others|other (?:gpus|cards|devices|ranks)|rest)\b"
# Many sequences decoded at once (samples, beams, returned sequences): a KV cache for each.
_MANY_SEQUENCES = r"num[-_ ]?(?:samples|return_sequences|beams|sequences)|beams?\b|\b\d+ (?:samples|sequences|completions)"
# A serving engine failing under traffic rather than at start-up.
_UNDER_LOAD = r"under load|requests?\b|concurren|traffic|scor(?:e|ing)|logprob"
# Inference that spreads one model's weights over the GPUs it names.
_SPLITS_WEIGHTS = (r"device_map|tensor[ _-]?parallel\w*|--tp\b|\btp[ =_]?\d|tensor-split|--split-mode|\bsplit[_ ]mode|"
                   r"model[ _-]parallel|pipeline[ _-]parallel|--num-shard|\bllama\.cpp\b|\bollama\b|llama-cpp|\bgguf\b|accelerate")
_DATA_PARALLEL = r"(?<!Distributed)(?<!Distributed )\bDataParallel\b"
_SAVING = (r"\bsav(?:e|es|ed|ing)\b (?:the |a |my )?(?:\w+ )?(?:model|checkpoint|state|weights)|save_(?:model|pretrained|checkpoint|state)|"
           r"(?:full_)?state_dict\(\)|consolidat\w*|gather(?:ing|ed)? (?:the )?(?:full )?(?:state|weights|parameters)")
_NO_GRAD_ALREADY = r"(?:already|is|are|runs?) (?:\w+ )?(?:under|in|with) (?:torch\.)?(?:no_grad|inference_mode)|frozen inference"
_FREE_AT_FAILURE = (r"(?:gpu|card|device|vram)(?: memory)? (?:is |was )?(?:(?:almost|nearly|mostly) )?(?:empty|free|idle|unused)|"
                    r"(?:plenty|lots|enough) of (?:free )?(?:gpu )?memory|only (?:about )?[\d.]+ ?G?B (?:is |are |was )?(?:in use|used)|"
                    r"shows? (?:only )?(?:about )?[\d.]+ ?G?B (?:in use|used)|(?:gpu|memory) (?:is |was )?otherwise idle|even though the gpu|"
                    r"should (?:easily |comfortably |still )?fit|(?:easily|comfortably) fit|fits? (?:easily|comfortably)|"
                    r"more than enough (?:gpu |free )?(?:memory|vram|room|space)|well within (?:the )?(?:gpu'?s? )?(?:memory|capacity|vram)")
_PERIODIC = r"(?:right |just )?(?:after|at) (?:iteration|step|iter|epoch)s? (?:\d*[1-9]0{2,})\b|every (?:\d*[1-9]0{2,}) (?:iterations|steps)"
_LOGPROBS = r"log ?prob\w*|log probabilit\w*|prompt_logprobs|\bscor(?:e|es|ing) (?:text|prompts?|sequences|tokens)|perplexity"
_LONG_INPUT = (r"(?:(?<![\w.,])\d[\d.,]*|\b(?:one|two|three|four|five|six|ten|twenty|thirty|ninety))[- ]?(?:minutes?|min|hours?|h|seconds?|s)(?:[- ]long)? "
               r"(?:\w+ )?(?:audio|recording|file|wav|clip|video|speech|podcast|meeting|lecture|interview)|"
               r"\blong (?:audio|recordings?|files?|videos?|sequences?|inputs?|documents?|contexts?|prompts?)|"
               r"\b(?:sequences?|samples?|inputs?|prompts?|documents?|examples?|texts?) (?:that are |which are )?(?:longer than|exceeding|over) (?:the )?(?:max\w*|limit|\d+)|"
               r"\b(?:sequences?|inputs?|prompts?|contexts?|documents?|samples?) (?:is|are|was|were|get|gets|got) (?:too|very|really|so) long\b|"
               r"\b(?:larger|bigger|high|higher|full|huge|very large|large) (?:\w+ )?(?:resolution|images?|inputs?|files?|point clouds?|scenes?|volumes?)\b|"
               r"\b\d{3,5} ?x ?\d{3,5}\b|full[- ]res|whole (?:file|recording|image|video|document)|my own (?:large |big )?(?:point cloud|data|images)|"
               r"\bvoxel\b|\bpoint clouds?\b|(?:inputs?|sequences?|prompts?|documents?|contexts?) of [\d.]+ ?[kK]?[- ]?tokens")
_DETECTION = r"\bdetect(?:or|ion)\b|segmentation|instance|\byolo\w*|r-?cnn|retinanet|\bssd\d*\b|bounding box|anchors?|point ?cloud"
_VARIABLE_LENGTH = (r"translation|\bnmt\b|seq2seq|speech|\basr\b|transducer|\brnnt\b|audio|sentences?\b|variable[- ]length|bucket|"
                    r"max[-_ ]?duration|utterances?|\bwav\b|(?:varying|different|dynamic|variable) (?:input |sequence |image )?(?:lengths?|sizes?|shapes?)")
# Generating images or video (not tokens) is a diffusion model's sampling loop, not a KV cache.
_DIFFUSION = (r"diffusion|unet2dcondition|upscal\w*|diffusers|\bsdxl\b|\bsd ?(?:v?[12](?:\.\d)?|x\d)\b|img2img|txt2img|text-to-image|image-to-video|dreambooth|text-to-video|video model|"
              r"\bgenerat\w* (?:\w+ ){0,3}(?:images?|pictures?|pics|photos?|videos?|artworks?)\b|\bimage generation\b")
_LLM = (r"\bllama|\bgpt|mistral|qwen|deepseek|falcon|\bphi-?\d|gemma|\bopt-\d|bloom|\bllms?\b|\bchat\b|-chat\b|coder|"
        r"causal ?lm|language model|\b\d+(?:\.\d+)?\s?[bB]\b(?= |-|$)")
_TRANSFORMER_ENCODER = r"\bbert\b|roberta|electra|deberta|\bencoder\b|\bvit\b|transformer|wav2vec|whisper|conformer"
# "a fine-tuned / pretrained model" names what is run, not training that is running.
_FULL_FINETUNE = (r"full(?:-| )?(?:parameter )?fine-?tun\w*|full fine-?tune|\bpre-?training\b|\bpre-?train(?:s|ing)? (?:a|an|the)\b|"
                  r"full-parameter|from scratch|(?:fine-?tun\w*|train\w*|updat\w*) all (?:the |of the )?(?:model'?s? )?(?:parameters|params|weights)\b|\bfine-?tun(?!ed\b)\w*|\btrain(?:ing|s)? (?:a |an |the )?(?:\w+ )?(?:model|llm|network)")
_LORA = r"\blora\b|\bqlora\b|\bpeft\b|adapter"
# Most parameters frozen: the optimizer holds state for the trainable part only.
_FROZEN = (r"\bfrozen\b|\bfreez(?:e|es|ing)\b|requires_grad ?= ?False|requires_grad_\(False\)|"
           r"only (?:train\w*|fine-?tun\w*|updat\w*) (?:the )?(?:head|last|top|final|classifier|adapters?|\w+ layers?)")
# Optimizers that keep 8-bit or factored state: ~2 bytes per parameter instead of Adam's 8.
_SMALL_STATE_OPTIMIZER = r"8-?bit (?:adam\w*|optimi[sz]er)|adam\w*_8bit|adam\w*8bit|paged_adam\w*|bnb\.optim|adafactor|\bgalore\b"
# What a user types when the model runs in 32-bit floats (A1111's --no-half/--precision full included).
_FULL_PRECISION = (r"\bfp32\b|\bfloat32\b|\bfloat ?32\b|torch\.float\b|full[-_ ]precision|single[- ]precision|--no-half\b|"
                   r"--precision[= ]full|\bno-half\b|32[- ]bit (?:floats?|weights|precision)|\bin fp ?32\b")
_LOW_PRECISION = (r"\bfp16\b|\bbf16\b|bfloat16|float16|half precision|(?<!no-)(?<!no )\bhalf\b|\bint8\b|\bint4\b|\b[48]-?bit\b|quantiz\w*|\bamp\b|"
                  r"mixed[_ ]precision|mixed_float16|torch_dtype|\bq[2-8](?:_\w+)?\b|\bfp8\b|\bgguf\b|\bawq\b|\bgptq\b")
_ADAM = r"\badam\w*"
# Evaluation loops that a framework runs for the user, already under no_grad / inference_mode:
# Lightning's validation/test/predict, Keras' evaluate/predict, detection toolkits' test tools,
# Ultralytics' val, pipelines and generate().
_MANAGED_EVAL = (r"\blightning\b|validation_step|test_step|predict_step|trainer\.(?:validate|test|predict)\(|\bkeras\b|"
                 r"model\.(?:evaluate|predict)\(|\bdetectron2\b|\bmmdet\w*|\bmmseg\w*|\bmmdet3d\b|\bultralytics\b|"
                 r"\bpipeline\(|\bdiffusers\b|\.generate\(|fairseq-generate|\bsklearn\b|torch\.inference_mode")
_HF_TRAINER = r"(?:transformers\.|\bhf |hugging ?face'?s? |seq2seq|sft)trainer\b"
_HF_TRAINER_EVAL = (r"trainer\.(?:evaluate|predict)|evaluation_loop|prediction_loop|prediction_step|eval_accumulation_steps|Trainer'?s? evaluat|evaluate\(\)/predict\(\)|"
                    rf"{_HF_TRAINER}[^\n]{{0,200}}\bevaluat|\bevaluat[^\n]{{0,200}}{_HF_TRAINER}")
_TPU = r"\btpu\b|\bhbm\b"
# Cloud TPU generations and the HBM per core (v2: 8 GiB, v3: 16 GiB, v4: 32 GiB per chip).
_TPU_HBM = {"2": 8 * 1024**3, "3": 16 * 1024**3, "4": 32 * 1024**3, "5e": 16 * 1024**3, "5p": 95 * 1024**3}


@dataclass
class Signals:
    phase: Phase = "unknown"
    phase_source: str | None = None
    growth: bool = False
    frees_every_step: bool = False
    immediate: bool = False
    batch_no_help: bool = False
    input_no_help: bool = False
    repeated_calls: bool = False
    upgrade_regression: bool = False
    upgraded_to_torch_04: bool = False
    only_multi_gpu: bool = False
    other_process_hint: bool = False
    cpu_mode: bool = False
    serving_engine: bool = False
    construction: bool = False
    no_grad_already: bool = False
    free_at_failure: bool = False
    periodic_step: bool = False
    long_input: bool = False
    distributed: bool = False
    zero_stage: int | None = None
    fsdp: bool = False
    gpu_count: int | None = None
    full_finetune: bool = False
    lora: bool = False
    frozen: bool = False
    small_state_optimizer: bool = False
    low_precision: bool = False
    full_precision_said: bool = False
    allocator_setting: bool = False
    allocator_setting_helped: bool | None = None  # None: used or named, and the note does not say how it went
    expandable_segments_on: bool = False
    fragmentation_said: bool = False
    rank0_heavy: bool = False
    several_gpus: bool = False
    splits_weights: bool = False
    switch_no_effect: bool = False
    many_sequences: bool = False
    under_load: bool = False
    more_gpus_no_help: bool = False
    logits_said: bool = False
    colocated: bool = False
    offload: bool = False
    host_ram: bool = False
    optimizer_step: bool = False
    loss_kept: bool = False
    grad_left_on: bool = False
    outputs_kept: bool = False
    attention_said: bool = False
    naive_attention: bool = False
    library_said: bool = False
    batch_raised: bool = False
    outside_pytorch: bool = False
    only_compiled: bool = False
    reserved_grows: bool = False
    data_parallel: bool = False
    saving: bool = False
    uses_adam: bool = False
    hf_trainer_eval: bool = False
    managed_eval: bool = False
    tensorflow_with_jax: bool = False
    logprobs: bool = False
    tpu: bool = False
    domains: set[str] = field(default_factory=set)
    batch_size: int | None = None
    seq_len: int | None = None
    vocab_size: int | None = None
    param_count: float | None = None
    weight_bytes: float | None = None
    note_gpu_capacity: int | None = None
    note_shapes: list[tuple[int, ...]] = field(default_factory=list)
    note_reserved: int | None = None  # "reserved is 20 GB", as the note states PyTorch's figures
    note_allocated: int | None = None
    note_unallocated: int | None = None
    evidence: dict[str, str] = field(default_factory=dict)


def _search(pattern: str, text: str) -> re.Match[str] | None:
    # Nothing to read, nothing to compile: compiling these patterns is most of a note-less run's cost.
    return re.search(pattern, text, re.IGNORECASE) if text and not text.isspace() else None


# A negation just before a match in the same clause says the opposite ("nvidia-smi shows no other
# process", "without fp16", "memory does not keep growing").
_NEGATION_WORDS = "no|not|never|without|none|nothing|nor"
_NEGATION = re.compile(rf"\b(?:{_NEGATION_WORDS})\b|n't\b|\bnon-", re.IGNORECASE)
# Signals whose pattern names a thing that a negation in front of it denies.
_NEGATABLE = {"other_process_hint", "growth", "host_ram", "loss_kept", "outputs_kept", "fragmentation_said", "rank0_heavy", "low_precision", "full_precision_said", "repeated_calls", "cpu_mode"}


def _affirmed_search(pattern: str, text: str) -> re.Match[str] | None:
    """The first match of ``pattern`` that no negation in its clause denies."""
    if not text or text.isspace():
        return None
    for match in re.finditer(pattern, text, re.IGNORECASE):
        before = text[max(0, match.start() - 30):match.start()]
        clause = re.split(r"[,;.:!?()]|\b(?:but|although|though|while|and)\b", before)[-1]
        # A negation among the match's first words counts when it stands as a word ("nvidia-smi
        # shows no other process"), not as part of a flag ("--no-half").
        if not _NEGATION.search(clause) and not re.match(rf"(?:\S+\s+){{0,3}}(?:{_NEGATION_WORDS})\s", match.group(0), re.IGNORECASE):
            return match
    return None


_MULTIPLIERS = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "b": 1e9, "billion": 1e9, "t": 1e12, "trillion": 1e12}


def _number(text: str) -> float:
    text = text.replace(",", "").strip().lower()
    for suffix in sorted(_MULTIPLIERS, key=len, reverse=True):
        if text.endswith(suffix):
            return float(text[: -len(suffix)].strip()) * _MULTIPLIERS[suffix]
    return float(text)


def _param_count(text: str) -> float | None:
    """Model size as people write it: "7B", "13b", "1.1 billion parameters", "350M params", "GPT-J-6B"."""
    spelled = _search(r"(\d+(?:\.\d+)?)[\s-]?(billion|million)[\s-]+(?:\w+ )?param", text)
    if spelled:
        return _number(spelled.group(1) + spelled.group(2))
    # A mixture of experts, "8x7B": the experts share attention and embeddings, so the total is
    # about 80% of experts x expert size.
    experts = _search(r"(?<![\w.])(\d{1,3})\s?x\s?(\d+(?:\.\d+)?)\s?[bB]\b", text)
    if experts:
        return 0.8 * int(experts.group(1)) * float(experts.group(2)) * 1e9
    counted = _search(r"((?<![\d,])\d[\d,]{6,})\s+(?:trainable )?param", text)
    if counted:
        return float(counted.group(1).replace(",", ""))
    # "13B", "7b-chat", "-6B", "(350M)": a size suffix not followed by a memory unit.
    for match in re.finditer(r"(?<![\w.])(\d+(?:\.\d+)?)\s?([bBmM])(?![\w/])(?!\s?(?:of )?(?:ram|memory|vram|gpu memory|bytes?))"
                             # "2B tokens", "5M images": a dataset's size, not the model's
                             r"(?!\s?(?:\w+ )?(?:tokens?|images?|samples?|examples?|words?|rows?|records?|pairs?|steps?|sentences?|"
                             r"documents?|frames?|points?|nodes?|edges?|requests?)\b)",
                             text, re.IGNORECASE):
        value = float(match.group(1)) * (1e9 if match.group(2).lower() == "b" else 1e6)
        if 1e7 <= value <= 2e12:
            return value
    return None


def _weight_bytes(text: str) -> float | None:
    """Bytes per weight when the note names a storage precision (None: not said)."""
    # ggml's k-quants store n bits per weight plus block scales: about (n + 0.5) / 8 bytes.
    ggml = _search(r"\bi?q([2-6])_(?:k|0|1|xs|xxs|s|m|l)\w*|\b([23])-?bit\b", text)
    if ggml:
        return (int(ggml.group(1) or ggml.group(2)) + 0.5) / 8
    if _search(r"\b4-?bit\b|\bint4\b|\bq4\w*|\bawq\b|\bgptq\b|\bnf4\b|\bqlora\b", text):
        return 0.5
    if _search(r"\b8-?bit\b|\bint8\b|\bfp8\b|\bq8\w*", text):
        return 1.0
    if _search(r"\bfp16\b|\bbf16\b|bfloat16|float16|half precision|\bhalf\b|torch_dtype", text):
        return 2.0
    return None


_SHAPE = re.compile(r"(?:torch\.Size\(\s*)?[(\[]\s*(\d+(?:\s*,\s*\d+)*)\s*,?\s*[)\]]")


def tensor_shapes(text: str) -> list[tuple[int, ...]]:
    """Tensor shapes written in the note: "(500, 1, 3)", "[64, 128]", "(4096,)", "torch.Size([8, 1024])"."""
    shapes = []
    for match in _SHAPE.finditer(text or ""):
        dims = tuple(int(dim) for dim in re.split(r"\s*,\s*", match.group(1)))
        # One number in brackets is a shape only when it is large ("[1]" is a footnote).
        if (2 <= len(dims) <= 8 or (len(dims) == 1 and dims[0] >= 1000)) and all(dim < 2**40 for dim in dims):
            shapes.append(dims)
    return shapes[:8]


_NOTE_SIZE = r"(\d+(?:\.\d+)?\s?[GM]i?B)\b"


def _stated_bytes(subject: str, note: str) -> int | None:
    """A memory figure the note gives for ``subject``: "reserved is 20 GB", "allocated only 12GB"."""
    match = _search(rf"\b{subject}(?: memory)?(?: is| was| at| of|:|=)?(?: only| just| about| around| ~)?\s*{_NOTE_SIZE}", note)
    return parse_size(match.group(1)) if match else None


def read_numbers(note: str, signals: Signals) -> None:
    batch = _search(r"\b(\d+) (?:\w+ )?per (?:mini-?)?batch\b|\bbs\s*[=:]\s*(\d+)\b|(?:per[-_ ]device[-_ ](?:train[-_ ])?|micro[-_ ]?|train(?:ing)?[-_ ])?batch(?:[ _-]?size)?\s*(?:of|=|:|is|to|set to|lowered to)?\s*(\d+)\b", note)
    if batch:
        signals.batch_size = int(next(group for group in batch.groups() if group))
    seq = _search(r"(?:seq(?:uence)?[ _-]?len(?:gth)?|context(?:[ _-]length)?|max[_ -](?:seq[_ -])?(?:length|len)|block[_ -]size|"
                  r"max[_ -]model[_ -]len|ctx)\s*(?:of|=|:|is)?\s*(\d+(?:\.\d+)?\s?[kK]?)\b", note) \
        or _search(r"((?<![\d.,])\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?\s?[kK]?)[- ](?:token|tok)s?\b(?! vocab)", note) or _search(r"(\d+[kK])[- ]context", note) \
        or _search(r"(\d+(?:\.\d+)?\s?[kK]?)[- ](?:sequence|context|seq|token)[- ]?(?:length|len|window)", note)
    if seq:  # "8K tokens" means 8192 in this field
        value = seq.group(1).replace(" ", "").replace(",", "")
        signals.seq_len = int(float(value[:-1]) * 1024) if value[-1] in "kK" else int(float(value))
    vocab = _search(r"((?<![\d.,])\d[\d,.]*\s?(?:million|[kKmM])?)\s?\(\s?vocab", note) or \
        _search(r"((?<![\d.,])\d[\d,.]*\s?(?:million|[kKmM])?)[- ](?:token|word|entry|entries|piece|subword)s? vocab", note) or \
        _search(r"vocab(?:ulary)?(?:[ _]file| size)?\D{0,25}?((?<![\d.,])\d[\d,.]*\s?(?:million|[kKmM])?)\b", note) or \
        _search(r"((?<![\d.,])\d[\d,.]*\s?(?:million|[kKmM])?)\s(?:words?|tokens?|entries|classes|labels|items)\s?(?:vocab|output)", note) or \
        _search(r"((?<![\d.,])\d[\d,.]*\s?[kKmM]) vocab", note) or \
        _search(r"\bdict(?:ionary)?\b(?:(?!\.\s)[^;\n]){0,40}?((?<![\d.,])\d[\d,.]*\s?(?:million|[kKmM])?)\s(?:lines|entries|words|tokens|types)\b", note) or _search(r"((?<![\d.,])\d[\d,.]*\s?(?:million|[kKmM])?) (?:output )?classes", note)
    if vocab:
        try:
            signals.vocab_size = int(_number(vocab.group(1)))
        except ValueError:
            pass
    signals.param_count = _param_count(note)
    signals.note_shapes = tensor_shapes(note)
    signals.note_reserved = _stated_bytes(r"(?:reserved|cached)", note)
    signals.note_allocated = _stated_bytes(r"allocated", note)
    idle = _search(rf"{_NOTE_SIZE} (?:\w+ )?(?:is |was |were )?reserved but (?:not |un)allocated|"
                   rf"reserved[- ]but[- ]unallocated(?: memory)?(?: is| was|:|=| of)? ?{_NOTE_SIZE}", note)
    if idle:
        signals.note_unallocated = parse_size(idle.group(1) or idle.group(2))
    gpu = _search(r"\b[A-Z]{1,3}\d{2,4}\w* (\d{1,3})\s?GB\b", note) or \
        _search(r"(\d{1,3}(?:\.\d+)?)\s?GB(?: of (?:GPU |video |device )?memory| GPUs?| cards?| VRAM| (?:NVIDIA |Tesla )?(?:[A-Z]{1,3}\d{2,4}\w*)s?)", note) \
        or _search(r"(?:GPU|card)s? (?:with|of) (\d{1,3})\s?GB", note) or _search(r"(\d{1,3})\s?GB\)?\s*(?:\w+ )?GPU", note) \
        or _search(r"\b(\d{1,3})\s?G (?:(?:\w+ )?(?:gpus?|cards?|vram|graphics)\b)", note)  # "a single 24G card"
    if gpu and gpu.group(0).lower().endswith(" of memory") and \
            _search(r"(?:system|host|cpu|ram|machine|server|node|computer|laptop|desktop|workstation|instance)\W+(?:\w+\W+){0,3}$",
                    note[max(0, gpu.start() - 40):gpu.start()]):
        gpu = None  # "a machine with 64 GB of memory" is the host's RAM, not the card
    have = _search(r"\b(?:i|we) (?:only )?have (?:a |an |only |just )?(\d{1,3}(?:\.\d+)?)\s?(?:GB\b|G\b)?(?= ?(?:GB|of vram|vram|\.|,|;|$))", note)
    vram = _search(r"(\d+(?:\.\d+)?)\s?([GM])i?B? (?:of )?(?:VRAM|video memory)|(\d+(?:\.\d+)?)\s?GB (?:\w+ )?assigned to the (?:GPU|iGPU)", note)
    if vram:
        amount = float(vram.group(1) or vram.group(3))
        signals.note_gpu_capacity = int(amount * (10**6 if vram.group(2) and vram.group(2).upper() == "M" else 10**9))
    elif gpu:
        signals.note_gpu_capacity = int(float(gpu.group(1)) * 10**9)
    elif have:
        signals.note_gpu_capacity = int(float(have.group(1)) * 10**9)
    else:
        name = find_gpu_name(note, bare=True)
        if name:
            signals.note_gpu_capacity = capacity_of_gpu(name)
    tpu = _search(r"\btpu[- ]?v?(\d(?:e|p)?)(?:-\d+)?\b|\bv(\d(?:e|p)?)-\d+\b", note)
    signals.weight_bytes = _weight_bytes(note)
    if tpu and (tpu.group(1) or tpu.group(2)) in _TPU_HBM and signals.note_gpu_capacity is None:
        signals.note_gpu_capacity = _TPU_HBM[tpu.group(1) or tpu.group(2)]
    count = _search(r"\b(\d+)\s?x\s?(?:[A-Z]|\d{2} ?GB)", note) or \
        _search(r"\b(two|three|four|six|eight|sixteen|\d{1,3})\b(?! ?GB) (?:(?!GB\b)[\w-]+ ){0,3}(?:GPUs|cards|[A-Z]?\d{2,4}s|ranks|devices|chips)\b", note) \
        or _search(r"\b(?:tp|tensor[ _-]parallel(?:ism)?|tp_size)[ =_]*(\d+)\b", note)
    if count:
        words = {"two": 2, "three": 3, "four": 4, "six": 6, "eight": 8, "sixteen": 16}
        value = count.group(1).lower()
        signals.gpu_count = words.get(value) or int(value)
    # Launchers say how many processes (one GPU each) they start.
    launched = _search(r"--nproc[_-]per[_-]node[= ](\d+)|--num[_-]gpus[= ](\d+)|--gpus[= ](\d+)\b|--num_processes[= ](\d+)|"
                       r"\bmpirun -np (\d+)|horovodrun -np (\d+)|CUDA_VISIBLE_DEVICES=((?:\d,)+\d)\b", note)
    if launched and signals.gpu_count is None:
        value = next(group for group in launched.groups() if group)
        signals.gpu_count = value.count(",") + 1 if "," in value else int(value)
    # "8 nodes x 8 A100", "2 machines with 8 GPUs each": every node's GPUs count.
    nodes = _search(r"\b(\d{1,4}) (?:nodes?|machines?|hosts?|servers?)\s?(?:x|\*|×|with|of)\s?(\d{1,2})\b", note)
    if nodes:
        signals.gpu_count = int(nodes.group(1)) * int(nodes.group(2))
    zero = _search(r"zero[- _]?(?:stage[- _]?)?([123])(?!\d)|stage[- _]?([123]) zero|zero stage ([123])", note)
    if zero:
        signals.zero_stage = int(next(group for group in zero.groups() if group))


def frame_text(context: TriageContext) -> str:
    if not context.stack:
        return ""
    return "\n".join(f"{frame.function or ''} {frame.code or ''} {frame.filename}" for frame in context.stack.frames)


_FAILURE_WORDS = (r"\bdo(?:es)?(?:n't| not) fit\b|\bexplod\w*|\bblows? up\b|\bfail|\bcrash|\bdies\b|\bdied\b|\bruns? out\b|\bran out\b|\bexhaust\w*|\bOOM|out-of-memory|out of memory|\berror|\babort|"
                  r"\bstops\b|\bkilled\b|\bexception|\bbreaks\b")
# "after training" says training was over, so "after" is not a where-word.
_WHERE = r"\b(?:during|inside|in|while|when|at|on|into|within)\b((?:[^,;.]|\.(?!\s)){0,60})"
_NOTE_ONLY_IN_FAILURE: set[Phase] = {"data_loading"}  # "from a dataloader" alone says where data comes from, not where it died


# A clause that says a part of the run went well names the phase that did NOT fail ("the test
# script fails, while the training script runs fine").
_CLAUSE = re.compile(r"[,;]|\b(?:while|whereas|but|although|though)\b", re.IGNORECASE)
_WENT_WELL = (r"\b(?:runs?|ran|works?|worked|working|is|was|are|were|goes|went|completes?|completed|finish(?:es|ed)?|"
              r"succeeds?|succeeded|pass(?:es|ed)?)\s+(?:just )?(?:fine|ok|okay|well|normally|smoothly|without (?:any )?"
              r"(?:issues?|problems?|errors?))\b|\bno (?:issues?|problems?)\b|\bhas no problem\b|\b(?:works|succeeds)\s*$")


def _without_what_went_well(sentence: str) -> str:
    """The sentence with the clauses that say something worked removed (a where-word before such a
    clause, "while the training runs fine", goes with it)."""
    kept, start = [], 0
    for boundary in [*_CLAUSE.finditer(sentence), None]:
        end = boundary.start() if boundary else len(sentence)
        clause = sentence[start:end]
        if not (_search(_WENT_WELL, clause) and not _search(_FAILURE_WORDS, clause)):
            kept.append(clause)
        if boundary is None:
            break
        if boundary.group(0) in ",;":
            kept.append(boundary.group(0))
        start = boundary.end() if boundary.group(0) in ",;" else boundary.start()
    return "".join(kept)


_EVAL_WITHIN_TRAINING = (r"\b(?:evaluation|validation|eval|evaluating|validating|testing)\b (?:\w+ ){0,2}"
                         r"(?:during|in the middle of|while|mid-?|partway through|between epochs of) ?(?:the )?training\b")


def note_phase(note: str) -> tuple[Phase, str] | None:
    """The phase named where the note says the run failed ("fails inside loss.backward()"), else anywhere."""
    sentences = re.split(r"(?<=[\w)\]])\.\s+(?=[A-Z])|;\s+|\n", note)
    sentences = [_without_what_went_well(sentence) for sentence in sentences]
    note = " ".join(sentences)
    failing = [sentence for sentence in sentences if _search(_FAILURE_WORDS, sentence)]
    for sentence in failing:
        # "the evaluation during training runs out": the evaluation is what ran, training is when.
        periodic = _search(_EVAL_WITHIN_TRAINING, sentence)
        if periodic:
            return "evaluation", f'the note says "{periodic.group(0)}"'
    scopes = [*failing, note]
    for index, scope in enumerate(scopes):
        # By position, not identity: " ".join of one sentence is that very string object.
        whole_note = index == len(scopes) - 1 and len(failing) > 0
        for where in re.finditer(_WHERE, scope, re.IGNORECASE):
            for phase, pattern in _PHASE_NOTE_PATTERNS:
                if whole_note and phase in _NOTE_ONLY_IN_FAILURE:
                    continue
                if _search(pattern, where.group(1)):
                    return phase, f'the note says "{where.group(0).strip()}"'
        for phase, pattern in _PHASE_NOTE_PATTERNS:
            if (whole_note or not failing) and phase in _NOTE_ONLY_IN_FAILURE:
                continue
            match = _search(pattern, scope)
            if match:
                return phase, f'the note says "{match.group(0)}"'
    return None


# Frames that oomtriage's own simulator or PyTorch's dispatch machinery add around every op: they
# are never where the program asked for memory.
_MACHINERY = re.compile(r"torch/overrides\.py|torch/utils/_python_dispatch|oomtriage/|torch/_tensor\.py|torch/autograd/|"
                        r"torch/nn/modules/module\.py|_call_impl|_wrapped_call_impl")


def meaningful_frames(context: TriageContext) -> list[Frame]:
    """The stack innermost first, without dispatch machinery and oomtriage's own frames."""
    if not context.stack:
        return []
    return [frame for frame in reversed(context.stack.frames) if not _MACHINERY.search(frame.filename or "")
            and not _MACHINERY.search(frame.function or "")]


def failing_frame(context: TriageContext) -> Frame | None:
    frames = meaningful_frames(context)
    return frames[0] if frames else None


def detect_phase(context: TriageContext, note: str) -> tuple[Phase, str | None]:
    """The innermost frame that names a phase wins; the note decides when frames say nothing."""
    if context.error and context.error.backend == "host" and "DataLoader" in (context.error.raw_message or ""):
        return "data_loading", "a DataLoader worker died"
    text = context.error.raw_message if context.error else (context.excerpt.text if context.excerpt else "")
    if re.search(r"pin memory thread|pin_memory|DataLoader worker", text or "", re.IGNORECASE):
        return "data_loading", "the DataLoader's pin-memory thread failed"
    stack = meaningful_frames(context)
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
    if steps and signals.phase == "unknown":
        signals.phase, signals.phase_source = "training", f"{steps} optimizer steps completed"
    if steps is not None and signals.phase in ("training", "unknown"):
        if steps == 0:
            signals.immediate = True
            signals.evidence["immediate"] = "no optimizer step completed before the OOM"
        elif steps >= 2:
            signals.growth = True
            signals.evidence["growth"] = f"{steps} optimizer steps completed before the OOM"


_SENTENCE_END = re.compile(r"(?<=[\w)\]])\.\s+|;\s+|:\s+|\n")


def _failing_sentences(note: str) -> str:
    """The note's sentences that say the run failed (what they name is where it failed)."""
    return " ".join(sentence for sentence in _SENTENCE_END.split(note) if _search(_FAILURE_WORDS, sentence))


def _setting_helped(note: str) -> bool | None:
    """Did the allocator setting the note names help? Read in the sentence that names it."""
    for sentence in _SENTENCE_END.split(note):
        if not _search(_ALLOCATOR_SETTING, sentence):
            continue
        if _search(_DID_NOT_HELP, sentence) or _search(r"\beven with\b|\balready\b|\bstill\b", sentence):
            return False
        if _affirmed_search(_HELPED, sentence):
            return True
    return None


# Two builds of one library compared: dotted versions that share their major number ("2.0.1" and
# "2.1.0", "0.2.5" and "0.2.6"), near each other, with an outcome word between or around them.
_DOTTED_VERSION = re.compile(r"(?<![\w.])v?(\d{1,3})\.(\d{1,4})(?:\.[\w+-]+)?(?!\s?(?:[KMGT]i?B|%|x\b|s\b|seconds?|minutes?|hours?|epochs?|steps?|ms\b))")
_OUTCOME = re.compile(r"\b(?:works?|worked|fine|ok|fits?|fitted|fails?|failed|breaks?|broke|broken|ooms?|crash\w*|runs?|ran|good|bad)\b", re.IGNORECASE)


_VERSION_CUE = re.compile(rf"(?:\bv|\b(?:version|release|build|{_LIBRARY_WORDS}|jaxlib|keras|tf|python)[\s=:-]*)$", re.IGNORECASE)


def _looks_like_a_version(match: re.Match[str], note: str) -> bool:
    """x.y.z, or x.y right after "v", "version" or a library's name: "0.001" and "0.1" are settings."""
    return match.group(0).lstrip("v").count(".") >= 2 or match.group(0).startswith("v") or \
        bool(_VERSION_CUE.search(note[max(0, match.start() - 16):match.start()]))


def _two_builds_compared(note: str) -> str | None:
    versions = list(_DOTTED_VERSION.finditer(note))
    for first, second in zip(versions, versions[1:]):
        one, other = first.group(0).lstrip("v"), second.group(0).lstrip("v")
        if first.group(1) != second.group(1) or one == other or one.count(".") != other.count("."):
            continue
        # One of the pair must read as a version; the other is then the same library's.
        if not (_looks_like_a_version(first, note) or _looks_like_a_version(second, note)):
            continue
        if second.start() - first.end() > 120:
            continue
        around = note[max(0, first.start() - 60):second.end() + 60]
        if re.search(r"\b(?:both|either|neither|all|every|any|regardless|same (?:on|with|in))\b", around, re.IGNORECASE):
            continue  # the same outcome on both builds: no regression between them
        if _OUTCOME.search(around):
            return note[first.start():second.end()]
    return None


def read_signals(context: TriageContext) -> Signals:
    note = context.note or ""
    frames = frame_text(context)
    message = context.error.raw_message if context.error else ""
    everything = "\n".join([note, frames, message])
    signals = Signals()
    failing = _failing_sentences(note)
    signals.phase, signals.phase_source = detect_phase(context, note)
    read_numbers(note, signals)
    if signals.batch_size is not None:
        signals.evidence.setdefault("batch_size", "the note")
    if context.runtime:
        read_runtime(context, signals)
    flags = {
        "growth": (_GROWTH, note), "frees_every_step": (_FREES_EVERY_STEP, note), "immediate": (_IMMEDIATE, note), "batch_no_help": (_BATCH_NO_HELP, note),
        "input_no_help": (_INPUT_NO_HELP, note), "repeated_calls": (_REPEATED, note), "upgrade_regression": (_VERSION_CHANGE, note),
        "other_process_hint": (_OTHER_PROCESS, note), "cpu_mode": (_CPU_MODE, note), "construction": (_CONSTRUCTION, note),
        "no_grad_already": (_NO_GRAD_ALREADY, note), "free_at_failure": (_FREE_AT_FAILURE, note),
        "periodic_step": (_PERIODIC, note), "long_input": (_LONG_INPUT, note),
        "serving_engine": (_SERVING, everything), "full_finetune": (_FULL_FINETUNE, note),
        "frozen": (_FROZEN, note), "small_state_optimizer": (_SMALL_STATE_OPTIMIZER, note),
        # "LoRA works, full training dies": adapters named in a clause that went well are not what failed
        "lora": (_LORA, " ".join(_without_what_went_well(sentence) for sentence in _SENTENCE_END.split(note))),
        "low_precision": (_LOW_PRECISION, note), "full_precision_said": (_FULL_PRECISION, note), "allocator_setting": (_ALLOCATOR_SETTING, note),
        "fragmentation_said": (_FRAGMENTATION_SAID, note), "rank0_heavy": (_RANK0_HEAVY, note), "several_gpus": (_SEVERAL_GPUS, note), "splits_weights": (_SPLITS_WEIGHTS, everything), "switch_no_effect": (_SWITCH_NO_EFFECT, note), "many_sequences": (_MANY_SEQUENCES, note), "under_load": (_UNDER_LOAD, note),
        "more_gpus_no_help": (_MORE_GPUS_NO_HELP, note),
        "logits_said": (_LOGITS_SAID, failing), "colocated": (_COLOCATED, everything), "offload": (_OFFLOAD, everything), "host_ram": (_HOST_RAM, note), "optimizer_step": (_OPTIMIZER_STEP, note),
        "loss_kept": (_LOSS_KEPT, note), "grad_left_on": (_GRAD_LEFT_ON, note), "outputs_kept": (_OUTPUTS_KEPT, note), "attention_said": (_ATTENTION_SAID, failing), "naive_attention": (_NAIVE_ATTENTION, note),
        "library_said": (_LIBRARY_SAID, note), "batch_raised": (_BATCH_RAISED, note),
        "outside_pytorch": (_OUTSIDE_PYTORCH, note), "only_compiled": (_ONLY_COMPILED, note), "reserved_grows": (_RESERVED_GROWS, note), "data_parallel": (_DATA_PARALLEL, everything),
        "saving": (_SAVING, f"{failing}\n{frames}"), "uses_adam": (_ADAM, everything),
        "hf_trainer_eval": (_HF_TRAINER_EVAL, everything), "managed_eval": (_MANAGED_EVAL, everything), "logprobs": (_LOGPROBS, everything), "only_multi_gpu": (_ONLY_MULTI_GPU, note), "tpu": (_TPU, everything),
    }
    for name, (pattern, text) in flags.items():
        match = _affirmed_search(pattern, text) if name in _NEGATABLE else _search(pattern, text)
        if match:
            setattr(signals, name, True)
            signals.evidence[name] = match.group(0)
    if not signals.upgrade_regression:
        compared = _two_builds_compared(note)
        if compared:
            signals.upgrade_regression = True
            signals.evidence["upgrade_regression"] = compared
    if signals.allocator_setting:
        signals.allocator_setting_helped = _setting_helped(note)
        signals.expandable_segments_on = bool(_search(r"expandable[_ ]segments(?! ?[:=] ?(?:false|0|off))", note))
    if _search(r"0\.3(?:\.\d)?\b.{0,60}0\.4|0\.4(?:\.\d)?\b.{0,40}(?:from|after) 0\.3", note) and signals.upgrade_regression:
        signals.upgraded_to_torch_04 = True
    signals.distributed = bool(_search(r"multi-?gpu|\bddp\b|distributed|torchrun|deepspeed|\bzero\b|zero-?[123]|fsdp|\branks?\b|"
                                       r"model[- ]parallel|data[- ]?parallel|tensor[- ]parallel|accelerate launch|multi-node|\btp\d|"
                                       r"all_gather|all_reduce|broadcast", everything)) \
        or (signals.gpu_count or 0) > 1 or len(context.failing_ranks) > 1 or (context.environment.world_size or 1) > 1 \
        or bool(re.search(r"ranks?|process|workers?", signals.evidence.get("rank0_heavy", ""), re.IGNORECASE))  # "every worker on GPU 0"
    signals.fsdp = bool(_search(r"\bfsdp\b|fully_shard|FullyShardedDataParallel", everything))
    # XLA's sources live under org_tensorflow/tensorflow/compiler: a path there is JAX, not TensorFlow.
    tf = _search(r"tensorflow(?!/compiler|/core/platform)(?<!org_tensorflow)|\btf\b|keras|\btfds\b",
                 re.sub(r"org_tensorflow/tensorflow/\S*|external/org_tensorflow\S*", "", everything))
    jax = _search(r"\bjax\b|flax|\bxla\b|haiku", everything) or (context.error and context.error.framework == "jax")
    torch = _search(r"\btorch\b|pytorch", everything) or (context.error and context.error.framework == "pytorch")
    signals.tensorflow_with_jax = bool(tf and (jax or (torch and not _search(r"tensorboard", everything)))) and \
        not (context.error and context.error.framework == "tensorflow" and not (jax or torch))
    for name, pattern in (("detection", _DETECTION), ("variable_length", _VARIABLE_LENGTH), ("diffusion", _DIFFUSION),
                          ("llm", _LLM), ("encoder", _TRANSFORMER_ENCODER)):
        if _search(pattern, everything):
            signals.domains.add(name)
    return signals
