"""Signals read from the user's note, the command line, the stack trace and the log around the OOM:
the phase and timing of the failure, the workload (model size, batch, sequence length, GPUs), what
changed, and where the allocation was made. General knowledge about how OOMs arise lives in the
rules; this module only reads what was said, in the words users type (each pattern is written for
the many ways a person says one thing, never for the wording of one report)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from oomtriage.fixkinds.backends import ALLOC_CONF_VARIABLE
from oomtriage.gpus import capacity_of_gpu, find_gpu_name
from oomtriage.models import Frame, Phase, TriageContext
from oomtriage.sizes import SIZE_PATTERN, parse_size
from .note_language import english_reading

# --- phases named by code: function names and source lines of the frames -----------------------
_PHASE_FRAME_PATTERNS: list[tuple[Phase, str]] = [
    ("data_loading", r"_worker_loop|dataloader|__getitem__|collate|pin_memory|_next_data"),
    # A call or a function named restore/resume, not a flag passed along ("restore=args.restore"),
    # and what it restores is saved state (restore_speech_timestamps restores none).
    ("loading", r"load_state_dict|torch\.load|\bload\(|from_pretrained|load_checkpoint|"
                r"(?:^|[\s.])_?(?:restore|resume)(?:_(?:from\w*|checkpoints?|ckpts?|models?|weights?|states?|params|parameters|variables|session|training|train|"
                r"optimi[sz]er\w*|latest|last|best|nets?|networks?|snapshots?|saved\w*))?(?:\(|\s|$)|"
                r"load_\w*(?:state|ckpt|checkpoint|weights|model)|_load_from_state_dict|load_model|safe_open|load_file"),
    ("optimizer_setup", r"(?:init|initiali[sz]e|configure|setup|create|build)_\w*optim|deepspeed\.initialize|\binitialize\(|"
                        r"ZeroOptimizer|zero_optim|_init_zero|optimizer_and|and_optimizer"),
    # (a VAE's `latent_dist.sample()` / `posterior.sample()` draws from a distribution: no decoding loop)
    ("generation", r"\bgenerate\b|beam_search|(?<!dist\.)(?<!posterior\.)\bsample\(|greedy_search|past_key_values|\.chat\(|\bchat\b|decode_step|"
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
    ("optimizer_setup", r"sets? up (?:the )?(?:\w+ )?optimi[sz]er|optimi[sz]er(?:'s)? (?:states? )?(?:set-?up|initiali[sz]ation|creation|construction|allocation)|"
                        r"(?:creat|initiali[sz]|construct|build)\w* (?:the )?(?:\w+ )?optimi[sz]er|before the first (?:training )?step|"
                        # "while the ZeRO optimizer initializes", "when the optimizer states are created"
                        r"optimi[sz]er(?: states?)? (?:initiali[sz]es|initiali[sz]ing|(?:is|are|was|were|gets?|got) (?:being )?(?:initiali[sz]|creat|allocat|buil|construct)\w*)|"
                        # "in the initialization of the ZeRO optimizer, in initialize_optimizer_states"
                        r"\b(?:initiali[sz]ation|creation|construction|set-?up) of (?:the )?(?:\w+ )?optimi[sz]er\b|\binit(?:iali[sz]e)?_optimi[sz]er\w*"),
    ("loading", r"\bresum(?:e|es|ing|ed)(?:_\w+)?\b|\brestor(?:e|es|ing|ed)\b|\breload(?:ing|ed)?\b|"
                # "continue it from a checkpoint", "restarting from the saved checkpoint": a resume in other words
                r"\b(?:restart|continu|pick|carr|start)\w*(?: (?:it|them|the run|the job|training|the training|up|on|again)){0,2} from "
                r"(?:a |the |my |its |an |that )?(?:saved |last |previous |earlier |latest )?(?:checkpoint|ckpt|snapshot)s?\b|"
                r"(?:weights|model|checkpoint|state|ckpt)s? (?:are|is|were|was) (?:being )?load|"
                # ("offload from the model", "unload the model" are no loading)
                r"(?<![\w-])(?:re|pre)?load(?:ing|s)? (?:the |a |my |its )?(?:[\w.-]+ ){0,3}(?:model|weights|checkpoint|state(?: dict)?|ckpt)|"
                r"from_pretrained|torch\.load\b|load_state_dict|(?:fail|crash|die)\w* (?:while|when) load|"
                # a loader's own name: load_best_model, load_checkpoint, load_pretrained_weights
                r"\bload_\w*(?:state|ckpt|checkpoint|weights|model)\w*|"
                # the loading named as a stage of the run: "during the model loading phase", "at the
                # weights-load step", "in the load stage"
                r"\b(?:model|weights?|checkpoint|ckpt|state[- ]dict)[- ]load(?:ing)?(?: (?:phase|stage|step|time))?\b|"
                r"\b(?:during|in|at|while in) (?:the )?load(?:ing)? (?:phase|stage|step)\b"),
    ("generation", r"(?<!\ba )(?<!\ban )(?<!\bthe )(?<!\bmy )(?<!\bsome )\bgenerat(?:e|es|ed|ion|ing)\b(?! (?:[\w.-]+ ){0,3}(?:embeddings?|representations?|features?|feature maps?|vectors?|masks?|labels?|predictions?|depth maps?|reports?)\b)|\bbeam\b|\bserv(?:e|es|ed|ing)\b(?! as\b)|\b(?:model|inference|prediction|llm|api|generation|chat) service\b|\b(?:model|inference|api|http|grpc|triton|llm|vllm|sglang|tgi|ollama|lmdeploy|openai-compatible|chat|serving) server\b|\bprompt tokens\b|\bchat\b|\.chat\(|\btranscri(?:be(?!d\b)|bing|ption(?!s\b| (?:data|labels?|files?|texts?)\b))|"
                   r"\binference (?:server|engine)|\bgenerat(?:e|ion)(?:\.py\b| script\b)|\btranslat(?:es|ing) (?:with|a |the |texts?|documents?|sentences?)|(?<!random )(?<!weighted )(?<!negative )(?<!neighbor )(?<!neighbour )(?<!importance )(?<!stratified )(?<!uniform )(?<!balanced )(?<!node )(?<!edge )(?<!graph )(?<!class )(?<!data )(?<!batch )(?<!subgraph )\bsampling\b(?! with(?:out)? replacement| (?:example|examples|method|strategy|rate|ratio|weights?|probabilit\w+|of (?:neighbou?rs|nodes|edges|subgraphs))\b)|\bsample (?:from|text|tokens|images|sequences)\b|\bnum_samples\b|\bdecod(?:e|ing)\b|\bprefill\b|"
                   # a chat's turns and the generation length settings: the model is answering
                   r"\b(?:conversation|chat|dialogue|dialog) (?:turns?|rounds?|history)\b|\b(?:turns|rounds) of (?:the |a )?(?:conversation|chat|dialog(?:ue)?)\b|"
                   r"\bmax_new_tokens\b|\bmax_tokens\b"),
    # ("train.py --eval" evaluates between epochs: a flag of the training command, not the failing phase)
    ("evaluation", r"(?<!-)\bvalidat(?:e|es|ed|ion|ing)\b|(?<!-)\bevaluat(?:e|es|ed|ion|ing)\b|(?<!-)\beval\b|\btest[- ]time\b|\b(?:at|during|while|when) test(?:ing)?\b|\btest(?:ing)? (?:loop|pass|set|phase|step|script|images?)\b|"
                   r"\btest\.py\b|\btest script\b|\btest(?:ing)? (?:with |on |using )?(?:the |a |my |our |this )?(?:\w+ )?(?:model|network|checkpoint|weights)s?\b|"
                   r"\b(?:after |while |when )?testing (?:about |around |~ ?)?\d[\d,]* (?:images|samples|examples|files|videos|sentences)\b|\binference\b(?! (?:dropdown|drop-down|tab|menu|page|panel|list|button|section|box|field|ui|window)s?\b)|(?<!property )(?<!link )\bpredict(?:ion|ions|ing|s)?\b(?! (?:model|task|head|network|problem|objective|loss)s?\b)|\bpredict\.py\b|"
                   r"\bval(?:idation)? (?:step|pass|loop)\b|evaluate\(\)|\bdemo\b|"
                   # a test or validation function called by name: "when test() runs", "in run_test()"
                   r"\b(?:\w+_)?(?:test|valid|validate|validation|val|eval)(?:_\w+)?\(\)|\binferencing\b|"
                   # Scoring text or images with a trained model: a loss or likelihood computed, no step taken.
                   # a trained model run over many inputs: "running the model over the frames of a video"
                   r"\brun(?:s|ning)? (?:a |the |my |our )?(?:\w+ )?(?:model|network|detector|predictor) (?:over|on) (?:all |each |every |the )?(?:frames?|images?|videos?|photos?|a (?:video|folder|directory|dataset))\b|"
                   r"\bperplexit(?:y|ies)\b|\bscor(?:e|es|ing) (?:a |the |my |each |some |every )?(?:\w+ )?(?:texts?|sentences?|samples?|documents?|prompts?|images?|completions?|sequences?)\b|\blog-?likelihoods?\b"),
    # "the trained model", "a pretrained / fine-tuned checkpoint" describe what is run, not training.
    # "we trained it for a day before the OOM" is training; "the GPU the model was trained on" is history
    # "at the end of training", "after training" say training was over: when, not what ran.
    # "train-100", "train_2" name a dataset's split, not the training run.
    ("training", r"(?<!end of )(?<!after )(?<!once )(?<!finish )(?<!finished )\btrain(?:ing|s)?\b(?![-_]\d)|(?<![\w-])(?:dpo|ppo|kto|orpo|grpo|sft|rlhf)(?![\w-])|\b(?:I|we|they) (?:\w+ )?trained\b|\btrained (?:batch by batch|step by step|epoch after epoch)\b|"
                 r"\bfine-?tun(?!ed\b)|\bpre-?train(?!ed\b)|"
                 # Keras' fit, not memory that fits: "doesn't fit 96Gb", "to fit in 24 GB", "won't fit on one card"
                 r"(?<!n't )(?<!not )(?<!to )(?<!can )(?<!could )(?<!would )(?<!will )(?<!does )(?<!do )(?<!it )(?<!that )\bfit\b(?! (?:in|into|on|onto|within|inside|the (?:gpu|card|memory|vram))\b)(?! ~?\d)|\bbackward\b|\bforward pass\b|"
                 # code named for the training step quoted in the note: training_step_and_backward, training_batch_loop.py, train_one_epoch
                 r"\b\w*(?:training|train)_(?:step|loop|batch|epoch|one_epoch|iter)\w*|"
                 # a training script or module named as such ("EasyLM.models.llama.llama_train", "run_train.py"),
                 # not a data split ("x_train") ...
                 r"(?<![\w])(?![xXyY]_train\b)\w+_train(?:\.py)?\b(?![_\d])|"
                 # ... and gradients accumulated over steps, which only training does
                 r"\bgradient[_ ]accumulation\b|\baccumulate[_ ]grad\w*|\bgrad(?:ient)?_accum\w*"),
]
_SERVING = (r"\bvllm\b|\btgi\b|text-generation-inference|lmdeploy|turbomind|sglang|ollama|llama\.cpp|\btensorrt-llm\b|"
            r"\btrt-llm\b|inference server|serving engine|\bengine (?:start|init)|gpu_memory_utilization|mem-fraction|"
            r"max_model_len|max-model-len|kv[- ]cache")
# --- timing -------------------------------------------------------------------------------------
_GROWTH = (# "a constant incremental of the use of its memory", "a steady rise in VRAM usage"
           r"\b(?:constant|steady|continuous|continual|gradual|linear|permanent|ceaseless|unbounded)(?:ly)? (?:increments?|incremental|increases?|increasing|rises?|rising|growth|growing)\b[^.;]{0,30}?\b(?:memory|vram|usage)\b|"
           # the adverb after the verb: "the memory used by the LSTM increases linearly"
           r"\b(?:memory|vram|usage)\b(?: [\w.-]+){0,12}? (?:increases?|grows?|rises?|climbs?|goes up)\b (?:linearly|steadily|continuously|constantly|gradually|monotonically)\b|"
           r"\b(?:rais|increas|bump|push)\w* (?:the )?(?:gpu |vram |cuda |device )?(?:memory|vram)(?: usage| use)?\b(?! ?(?:limit|fraction|cap|utili[sz]ation|allocation|budget))|climb\w*|creep\w*|keeps? (?:\w+ly )?(?:increas|grow|going up|rising|climbing|piling up)\w*|\bpil(?:e|es|ed|ing) up (?:with|after|over|on|in) (?:every|each)\b|(?:rises?|rising|grows?|growing|increas\w*|goes up|going up)"
           # "increasing the batch size" is a setting that changed, not memory that grew
           r"(?! (?:the |my |our )?(?:batch|resolution|image|sequence|seq|context|input|model)\b)"
           r"(?: \w+){0,3} (?:every|each|over|with(?! the square\b)|after|batch|step|iteration|epoch)|"
           # ("after the first iteration" is the second step, where optimizer states appear: no growth)
           r"after (?:about |some |a few |several |many |(?<![\d.,])\d[\d,]*(?: ?[-–] ?\d[\d,]*| (?:or|to) \d[\d,]*)? |a (?:number|couple|bunch|handful|lot) of )(?:\w+ )?(?:epochs?|iterations?|steps?|batches)\b|"
           # "after several conversation turns", "after a few questions": a chat whose context grew
           r"after (?:about |some |a few |several |many |(?<![\d.,])\d{1,4}(?: (?:or|to) \d{1,4}|-\d{1,4})? |a (?:number|couple|bunch|handful|lot) of )(?:\w+ )?(?:turns|rounds|questions|messages|exchanges|prompts|requests)\b|"
           r"\b(?:fails?|failed|crash\w*|dies|died)\b[^.;]{0,20}\b(?:around|about|at|after) (?<![\d.,])\d{1,3} (?:turns|rounds|questions|messages)\b|"
           # "after training on a few thousand examples": that many inputs went through first
           r"\b(?:after|once|when) (?:\w+ ){0,3}(?:a few|several|many|some|(?<![\d.,])\d[\d,.]*k?) (?:hundred |thousand )?(?:examples|samples|images|sentences|utterances|documents|sequences)\b|"
           r"after the first (?:few |several |\d+ )?(?:\w+ )?(?:epochs|iterations|steps|batches)\b|"
           r"(?:during|in|at) (?:epoch \d+|(?:iteration|step) (?:[3-9]|[1-9]\d+)\b)|(?<![\d.,])\d[\d,]* (?:epochs?|iterations?|steps?) (?:in|into|later)|"
           r"partway|part-way|mid-?(?:training|epoch|run|way)|midway|\bin the middle of (?:the |an? |my |our )?(?:training|epoch|run|fine-?tuning)\b|"
           # "it fails at 5906/30625 steps": that many steps went through first
           r"(?<![\d.,/])[1-9]\d{1,}/\d{3,} (?:steps|iterations|iters|its|batches)\b|"
           # "dies at around 22k iterations": the iterations before it ran
           r"\b(?:at|around|by) (?:around |about |roughly |approximately |~ ?)?(?<![\d.,])(?:[1-9]\d{2,}|\d+(?:\.\d+)?k) (?:\w+ )?(?:iterations|steps|iters)\b|"
           # "during the 23rd epoch": the epochs before it ran
           r"(?:during|in|at|on) the (?:[3-9]|[1-9]\d+)(?:st|nd|rd|th) (?:training )?(?:epoch|iteration|step|batch)\b|"
           r"first (?:few )?(?:\w+ )?(?:iterations?|steps?|epochs?|batches|cycles?|loops?|rounds?|frames|calls|requests) (?:run|work|go|are|pass|succeed)(?!s? out)|batch after batch|"
           # "the error occurs when the number of cycles increases": the repetitions before it went through
           r"\b(?:as|when|once|while) the (?:number|count) of (?:\w+ )?(?:cycles|iterations|loops|steps|frames|calls|requests|epochs|rounds|batches) (?:\w+ )?(?:increases|grows|goes up|rises|gets (?:larger|bigger|higher))\b|"
           r"\b(?:as|when|once|while) the (?:loop|iteration|cycle|frame|step|call|request|batch) (?:count|number|index) (?:\w+ )?(?:increases|grows|goes up|rises|gets (?:larger|bigger|higher))\b|"
           r"\bearly (?:iterations|cycles|loops|frames|steps|batches|calls|rounds) (?:work|run|go through|pass|are fine|succeed)\b|"
           r"for a while|after (?:some|a) (?:time|while)\b|memory leak|\bleak\w*|over time|eventually|occasionally|"
           # the noun: "a per-epoch memory growth", "an increase in memory every step"
           r"\bmemory (?:growth|increase|creep)\b|\b(?:keeps?|shows?|has|have|see|saw) (?:a |an )?(?:bounded |steady |slow |constant |linear |continuous |gradual )?(?:growth|increase) (?:in |of |during |over )|"
           # "after about 100 of the ~200 validation steps": the steps before it ran went through
           r"\bafter (?:about |around |roughly |~ ?)?(?<![\d.,])\d[\d,]* of (?:the |all )?(?:about |around |~ ?)?\d[\d,]* (?:\w+ )?(?:steps|iterations|batches)\b|\b(?:growth|increase|rise) (?:in|of) (?:\w+ )?(?:memory|vram|usage)\b|\bper-?(?:epoch|step|iteration|batch) (?:memory )?(?:growth|increase)\b|"
           # "the GPU fills up over a few minutes", "VRAM gradually fills"
           r"\bfill(?:s|ing)? up (?:over|after|within|in the course of) (?:a few |several |some |many )?(?:\w+ )?(?:seconds?|minutes?|hours?|iterations?|steps?|epochs?|calls?|batches|frames|time)\b|"
           # "the card fills up over the run", "fills during training until it fails"
           r"\bfill(?:s|ed|ing)? (?:up )?(?:over|during|in the course of|throughout) (?:the |a |my |our )?(?:whole |entire )?(?:run|training|session|episode|course of (?:the )?(?:run|training))\b|"
           r"\b(?:gradually|slowly|steadily|progressively|continuously|constantly|always|ever) (?:fill\w*|grow\w*|increas\w*|climb\w*|ris\w*|accumulat\w*)|\bever-growing\b|"
           # "it started to use memory exponentially"
           r"\b(?:us|consum|eat|tak)(?:e|es|ed|ing|s)? (?:up )?(?:more and more |ever more )?(?:gpu |vram |host |cpu |system )?(?:memory|ram|vram) (?:exponentially|linearly)\b|"
           r"(?:rising|rose|grew|growing|goes) from|"
           # "the GPU gets more and more memory", "it takes more and more VRAM each epoch"
           r"\b(?:gets?|got|getting|takes?|took|taking|uses?|used|using|consumes?|consumed|consuming|occupies|occupied|occupying|allocates?|allocated|allocating|needs?|eats?|ate|eating) "
           r"more and more (?:gpu |cuda |video |device |host |system )?(?:memory|vram|ram)\b|"
           # "memory slowly grows", "VRAM usage accumulates", with no negation between subject and verb
           r"(?:memory|usage|vram|allocated|reserved)\b(?:(?!\bnot\b|n't\b|\bno\b|\bnever\b)[^.;]){0,40}?"
           r"(?<!\bto )(?<!\btry )(?<!\btried )\b(?:grows?|growing|grew|increases?|increasing|increased|rises?|rising|rose|climbs?|accumulat\w*|goes up|builds? up|(?:gets?|getting|got) (?:bigger|larger|higher))\b"
           # ("when I tried to increase the size of the image" is a setting raised, not memory growing)
           # ("rising batch by batch" is memory growing: a bare "batch" is a setting only as "batch size")
           r"(?! (?:(?:the |my |our |its |an? )(?:size|resolution|batch|image|input|sequence|length|number|dimension|width|height|crop|model)s?\b|"
           r"(?:size|resolution|image|input|sequence|length|number|dimension|width|height|crop|model)s?\b|batch[ _-]?size\b))"
           # "memory goes up with the square of the count" is how it scales, not a growth over time
           r"(?! (?:with|as|in proportion to|proportionally|linearly|quadratically|by the square)\b)|"
           r"(?:works?|runs?|ran|trains?|trained|goes|went|is fine) (?:fine |well |ok |normally )?for (?:about |around |~ ?)?"
           r"(?<![\d.,])\d[\d,]* (?:epochs?|iterations?|steps?|batches|hours?|minutes?)|"
           r"after (?:~ ?|around |roughly |approximately |over |more than )(?<![\d.,])\d[\d,.]*k? (?:\w+ )?(?:epochs?|iterations?|steps?|batches)")
# The script already drops its tensors and empties the cache every iteration: memory that still
# grows is not held by the script's references.
_FREES_EVERY_STEP = (# "I del loss, outputs and targets and call torch.cuda.empty_cache() each iteration"
                     r"(?:\bdel\b|delet\w*|\bfree\w*)[^.;]{0,80}?\b(?:empty_cache|gc\.collect)\b[^.;]{0,30}?\b(?:every|each|after every|after each) (?:iteration|step|batch|epoch)|"
r"(?:delet|del\b|free|releas|clear)\w* (?:the |all |my )?(?:[\w/]+(?:, | and | ?/ ?)){0,4}[\w/]+ "
                     r"(?:\w+ ){0,2}(?:every|each|after every|after each) (?:iteration|step|batch|epoch)|"
                     r"(?:every|each) (?:iteration|step|batch)[^.;]{0,50}\b(?:delete|del|free|empty_cache|gc\.collect)|"
                     r"empty_cache\(\)[^.;]{0,30}\b(?:every|each|after every|after each) (?:iteration|step|batch)")
# An evaluation or test pass that runs between training epochs (or right before the failing training
# step): what it leaves behind meets the next training step.
_EVAL_WORD = r"(?:test(?:ing|s)?|eval\w*|validat\w*)"
_EVAL_BETWEEN_TRAINING = (rf"\b{_EVAL_WORD}\b(?:[^.;]|\.(?=\S)){{0,60}}\b(?:after|at the end of|following|between) (?:every|each|the|all) (?:\w+ )?(?:epochs?|training epochs?)\b|"
                          rf"\b(?:every|each|per) (?:training )?epoch\b(?:[^.;]|\.(?=\S)){{0,40}}\b{_EVAL_WORD}\b|\bbetween (?:training )?epochs\b(?:[^.;]|\.(?=\S)){{0,40}}\b{_EVAL_WORD}\b|"
                          rf"\b(?:first|next|following) (?:training )?(?:step|batch|iteration|backward)s? (?:right )?(?:after|following|once) (?:the |an |each |every )?{_EVAL_WORD}\b|"
                          rf"\b(?:after|once|following) (?:the |an |each |every )?{_EVAL_WORD}(?: (?:step|phase|loop|run|pass|round))?,? (?:the |when |as )?(?:training|the next (?:training )?step|backward|next epoch)\b|"
                          # "the first evaluation finishes, then the next training step's backward fails"
                          rf"\b{_EVAL_WORD}(?: (?:step|phase|loop|run|pass|round))? (?:finishes|finished|completes|completed|ends|ended|is done|was done|passes|passed|goes through|went through)\b"
                          r"[^.;]{0,20}?\b(?:then|and then|after which|but then)\b(?:[^.;]|\.(?=\w)){0,60}?\b(?:training|backward|(?:next|following) (?:training )?(?:step|batch|iteration))\b")
# The failure placed in the second (or a later) epoch's training, after a first that went through.
_LATER_EPOCH_TRAINING = (r"\b(?:after|in|during|at the start of|by) (?:the )?(?:2|two|second|3rd|third)(?:nd)? epochs?\b|"
                         r"\b(?:first epoch|epoch (?:1|one)) (?:is|was|goes|went|runs?|ran) (?:fine|ok|okay|well|through)|\bsecond epoch\b|"
                         r"\b(?:in|during|at) epoch (?:2|two)\b")
# "the first step after evaluation" is not "at once": the run got through training and an evaluation.
_IMMEDIATE = (r"as soon as|immediately|right away|at once|first (?:training )?(?:step|iteration|batch|forward)\b(?! (?:after|following|once))|"
              r"(?:when|as) (?:training|the run|it) (?:starts|begins)|at (?:\w+ )?(?:start-?up|the start|launch)|during (?:\w+ )?(?:start-?up|initiali[sz]ation)|"
              r"before (?:the first|any) (?:request|prompt|query|input)\b|"
              r"before any|right after (?:start|launch)|very first|at the (?:very )?(?:beginning|start)\b|"
              r"before (?:a single|the first|one) (?:training )?(?:step|iteration|batch|epoch)")
# A large tensor freed and then asked for again (the next iteration, a re-allocation): the request
# that fit before now needs a contiguous block the cache has split up.
_FREED_THEN_AGAIN = (r"\b(?:free[sd]?|freeing|delet\w*|del\b|releas\w*)\b[^.]{0,60}?\b(?:recreat\w*|re-?allocat\w*|"
                     r"allocat\w* (?:it |them )?again|creat\w* (?:it |them )?again|(?:in|on) the (?:second|next) (?:iteration|step|pass|call))|"
                     r"\b(?:recreat\w*|re-?allocat\w*)\b[^.;]{0,60}?\b(?:after|once) (?:it (?:is|was) )?(?:free[sd]?|freeing|delet\w*|releas\w*)")
# Weights loaded into a process whose model is already on the GPU: the best checkpoint reloaded at
# the end of training, a model restored over the one just trained.
# ("after training several epochs" is how long training ran before it failed, not training over)
_RELOAD_IN_PROCESS = (r"\bbest[_ ](?:model|checkpoint|weights)\b|\bload_best\w*|"
                      r"\bafter (?:the )?training\b(?! (?:for )?(?:several|a few|some|many|\d+|one|two|three|four|five|ten|a couple of) (?:more )?(?:epochs?|steps?|iterations?|iters?|batches|hours?|minutes?|days?)\b)|"
                      r"\b(?:at )?the end of (?:the )?training\b|\bonce training (?:is )?(?:done|finished|over)\b")
# --- what the user tried and what changed -------------------------------------------------------
_SMALLER = r"(?:lower\w*|reduc\w*|smaller|decreas\w*|shrink\w*|halv\w*|cut\w*|dropp\w*|bring\w*|brought|even with|also with|still \w+ with|tried)"
_DID_NOT_HELP = r"(?:did ?n[o']t|does ?n[o']t|didn't|doesn't|no|not) (?:seem to )?(?:help|change|fix|work|matter|solve|affect)|without (?:any )?(?:improvement|success|effect|change|difference)|(?:seems?|seemed) not to (?:help|change|affect|matter)|still (?:fails?|get|hit|oom|crash|run)|same error|no change|with no (?:change|effect)|no effect|nothing changed|changed nothing|made no difference|makes no difference|(?:did ?n[o']t|didn't) make (?:a|any) difference|to no avail|no luck"
# (the smaller batch and the batch that failed are one clause: "8 and lower works, but when I try a
# batch size like 16 it doesn't work" says the larger batch fails, not that lowering did not help)
_BATCH_NO_HELP = (rf"{_SMALLER}(?:(?!\bbut\b).){{0,40}}batch.{{0,60}}(?:{_DID_NOT_HELP})|"
                  # "points_per_batch seems not to affect the memory": the batch knob has no effect
                  r"(?<![A-Za-z])batch\w{0,30}\b[^.;]{0,30}?\b(?:seems?|seemed) not to (?:affect|help|change|matter)\b|"
                  r"(?<![A-Za-z])batch\w{0,30}\b[^.;]{0,30}?\b(?:does ?n[o']t|did ?n[o']t|has no|had no) (?:seem to )?(?:affect|effect|help|change|matter)\b|batch size (?:of |=\s?)?1\b(?:(?!\bbut\b|\bwhile\b|\bwhereas\b|\d)[^.;]){{0,40}}(?:{_DID_NOT_HELP}|fails?|still)|"
                  rf"(?:even|still) (?:\w+ )?(?:with|at) (?:a )?(?:batch(?:[ _-]?size)?\s?(?:of |=\s?)?1\b|smaller batch)|"
                  rf"batch[_ ]size\s?=?\s?[12]\b.{{0,30}}(?:{_DID_NOT_HELP})|whatever the (?:batch|dataset)|no matter (?:how (?:small|low|little) |what )(?:the |my )?batch|"
                  # "even batch=36 stops", "even with batch size 8 it still fails"
                  r"\beven (?:with |at )?(?:a )?batch(?:[ _-]?size)?\s?(?:of |[=:]\s?)?\d+\b[^.;]{0,30}?\b(?:stops|stopped|fails|failed|crashes|crashed|still|runs out|ran out|ooms|dies|died)\b|"
                  # "the batch is already 1", "I already use a batch size of 1"
                  r"\bbatch(?:[ _-]?size)? (?:is|was) already (?:at |set to |only )?1\b|\balready (?:use |using |at |train \w+ )?(?:a )?batch(?:[ _-]?size)? (?:of |=\s?)?1\b|"
                  # "even when going from batch size 12 to batch size 1"
                  # (the lowered setting has to be the batch: "even though the epoch is set to 1" is not)
                  r"(?:even|still)\b(?=[^.;]{0,60}\bbatch)[^.;]{0,60}\bto (?:a )?(?:batch(?:[ _-]?size)?\s?(?:of |=\s?)?)?[12]\b(?! ?(?:gpus?|nodes?|cards?|epochs?))|"
                  # the failure first, the tiny batch after: "out of memory even with a batch size of 2"
                  r"\b(?:out of memory|ooms?|fails?|failed|crash\w*|runs? out|ran out|errors?)\b[^.;]{0,15}?\beven (?:with|at|for) (?:a |the )?"
                  r"batch(?:[ _-]?size)?\s?(?:of |=\s?)?[1-4]\b(?! ?(?:gpus?|nodes?|cards?))|"
                  # ... or with another setting lowered beside it: "OOM even with seq_len = 200 and batch_size = 4"
                  r"\b(?:out of memory|ooms?|fails?|failed|crash\w*|runs? out|ran out|problems?)\b[^.;]{0,15}?\beven (?:with|at|for|if i (?:reduce|lower)(?: \w+)? to)\b"
                  r"[^.;]{0,40}?\band (?:a |the )?batch(?:[ _-]?size)?\s?(?:of |[=:]\s?)?[1-4]\b(?! ?(?:gpus?|nodes?|cards?))")
_INPUT_NO_HELP = rf"{_SMALLER}.{{0,30}}(?:pictures?|images?|inputs?|resolution|crops?|sequences?|files?).{{0,40}}(?:{_DID_NOT_HELP})|whatever the dataset size"
# ("the first time it fails at epoch 2, the second time at the fifth epoch": attempts of one run, each
# failing at its own point, not repeated work in one process)
_REPEATED = (r"repeatedly|in a (?:python )?loop|(?:second|next|another|later) (?:\w+ )?(?:fit|call|run|time(?!,? (?:it |oom |out of memory )?(?:(?:is |was )?(?:reported |raised |thrown |happened |occurred |came |fails? |failed |crashed |died )?)?(?:at|in|on|after) (?:the )?(?:\w+ )?(?:epoch|step|iteration|iter)\b)(?!,? (?:it |oom |out of memory )?(?:(?:is |was )?(?:reported |raised |thrown |happened |occurred |came |fails? |failed |crashed |died )?)?(?:at|in|on|after) (?:the )?(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th))\b)|model|task|evaluation)\b|"
             # ("the first time it failed at the second epoch, the second time at the fifth": separate tries, each
             # failing at an epoch of its own)
             r"(?:after|once) the first (?:\w+ )?(?:evaluation|eval|epoch|fit|call|run|task|image|frame|video|sample|request|prompt|file|item)\b|one after another|\bin (?:sequence|succession|turn)\b|"
             r"(?:after|following) (?:an |the |each |every )?(?:evaluation|eval|validation)\b|"
             r"many (?:runs|fits|models|experiments|calls)|series of|several times|across (?:many|multiple) (?:calls|runs)|"
             r"(?:on its own|alone|by itself|individually|separately) (?:works|is fine|runs|fits|passes)|different (?:sizes|shapes|dimensions)|varying (?:sizes|shapes)")
# Keras' whole-dataset entry points called again and again from a Python loop ("model.predict in a
# loop", "calling fit repeatedly", "predict() on every frame").
_KERAS_CALL = r"(?:model\.|\.)?(?:predict|fit|evaluate|train_on_batch|predict_on_batch|predict_generator|fit_generator)\b(?:\(\))?"
_KERAS_CALL_IN_LOOP = (rf"{_KERAS_CALL}[^.;]{{0,40}}\b(?:in a (?:python |for |while )?loop|repeatedly|(?:each|every) (?:call|time|iteration|frame|image|request)|"
                       rf"many times|over and over|again and again)|"
                       rf"(?:in a (?:python |for |while )?loop|repeatedly)[^.;]{{0,30}}\b{_KERAS_CALL}")
# A version is a dotted number, or a number the words "version", "release", "commit" name: "works
# with fp16" or "runs on 8 GPUs" is not a version that worked.
# (A number right after a model family's name, "SD 1.5", "Llama 3.1", "Qwen 2.5", names a model, not a build.)
_A_VERSION = (r"(?:(?:version|release|commit|build|tag) [\w.-]*\d[\w.-]*|"
              r"(?<!\bsd )(?<!\bsd)(?<!\bllama )(?<!\bqwen )(?<!\bgemma )(?<!\bphi )(?<!\bmistral )(?<!\bgpt-)(?<!\bgpt )(?<!\bwan )"
              r"v?\d+\.\d+[\w.+-]*)")
# A size or a count after "since" is not a version: "since 2.5 GB are free".
_A_VERSION_NOT_SIZE = rf"{_A_VERSION}(?!\s?(?:[KMGT]i?B|%|x\b|s\b|seconds?|minutes?|hours?|days?|epochs?|steps?))"
_LIBRARY_WORDS = r"torch|pytorch|vllm|transformers|tensorflow|jax|cuda|drivers?|deepspeed|accelerate|peft|diffusers|xformers|sglang|triton|nccl|cudnn|lightning"
_LIBRARY_NAMES = rf"(?:{_LIBRARY_WORDS})"
_VERSION_CHANGE = (rf"(?:after|since|when) (?:upgrad|updat|pull|bump)\w*|since (?:\w+ ){{0,2}}{_A_VERSION_NOT_SIZE}|"
                   # "starting in transformers 4.26.0", "since the last two transformers releases"
                   rf"\b(?:starting|beginning) (?:in|with|from) (?:\w+ ){{0,2}}{_A_VERSION_NOT_SIZE}|"
                   r"\b(?:since|in|over|with) the (?:last|latest|past|recent) (?:two|three|few|couple of|\d) (?:[\w-]+ )?(?:releases|versions|updates)\b|"
                   # a dependency that changed under the code: "some graph breaks in our dependencies were evened
                   # out", "after a change in one of the dependencies"
                   r"\b(?:changes?|updates?|upgrades?|bumps?) (?:in|of|to) (?:one of )?(?:our |the |its |a |some |their )?dependenc(?:y|ies)\b|"
                   r"\b(?:in|from) (?:our |the |its |some |their )?dependenc(?:y|ies)\b[^.;]{0,20}?\b(?:were|was|got|have been|has been) (?:\w+ )?(?:changed|updated|upgraded|evened out|removed|bumped)\b|"
                   # Two builds named, one that works and one that does not ("working: 2.1.0, broken: 2.2.0").
                   r"(?:after|since|with|from) (?:the |that )?(?:PR|pull request|merge request|commit|merge) ?#?\w*\d|"
                   # "I backtracked and traced the issue to PR #13746", "bisected it down to commit 4e2f1a"
                   r"\b(?:traced|bisected|narrowed|tracked)\b[^.;]{0,25}?\b(?:down )?to (?:the |a |one )?(?:PR|pull request|merge request|commit|merge|change)\b|"
                   # The code was written for another release than the one installed: "a newer PyTorch than the
                   # one the repository was written for", "the repo requires torch 0.3.1 but I use 1.0"
                   rf"\b(?:newer|later|more recent|older|earlier) (?:version of |release of )?(?:{_LIBRARY_NAMES}|version|release|build)\b[^.;]{{0,15}}?\bthan "
                   r"(?:the one |the version |the release |what |that )?(?:the |this |its )?(?:repo(?:sitory)?|project|code(?:base)?|readme|requirements?(?:\.txt)?|authors?|paper|original)\b|"
                   rf"\b(?:repo(?:sitory)?|project|code(?:base)?|readme|requirements?(?:\.txt)?) (?:was written for|requires?|asks for|specifies|pins|targets|was tested (?:on|with)|lists) "
                   rf"(?:{_LIBRARY_NAMES} )?{_A_VERSION}[^.;]{{0,40}}?\b(?:but|while|whereas) (?:i|we) (?:use|have|run|installed|am using|'m using|are using)\b|"
                   # "I've updated llama-server today and it now throws out of memory errors"
                   r"\bupdated\b[^.;]{0,40}?\b(?:and|,) (?:it |this |that )?(?:now |suddenly |since then )?(?:throws|fails|crashes|runs out|ooms|gives|reports|errors)\b|"
                   # the newest code named as the condition of the failure: "with the latest version of the code,
                   # finetuning runs out of memory", "on the current master the same config OOMs"
                   r"\b(?:with|using|on|in) (?:the )?(?:latest|newest|current) (?:version of the |release of the |commit of the )?(?:code(?:base)?|repo(?:sitory)?|master|main branch|dev branch|nightly)\b"
                   r"[^.;]{0,60}?\b(?:runs? out of memory|ran out of memory|out of memory|ooms?|oomed|fails?|crash(?:es)?)\b|"
                   # "since the libcudf++ merge", "after the allocator rewrite"
                   r"(?:since|after) (?:the |that )?[\w+.-]+ (?:merge|refactor|rewrite|port|migration)\b|(?:build|version|release|commit) (?:just )?before (?:that|the|this)|"
                   rf"\b(?:broken|bad|failing|regressed)\b(?: \([^)]{{0,30}}\))?(?: version| build)?\s?[:=]\s?(?:\S+ ){{0,2}}{_A_VERSION}|"
                   rf"(?:use|using|back to|revert\w* to|roll\w* back to|stay(?:ing)? on|stick\w* (?:to|with)|pin\w* (?:to )?) (?:the |an |a )?(?:old|older|previous|earlier) "
                   rf"(?:[\w.-]+ )?(?:{_LIBRARY_NAMES}|version|release|build|commit)|no longer (?:fits?|works?|runs?|trains?|starts?|loads?)\b|"
                   rf"(?:can't|cannot|can not|could not|couldn't|won't) (?:[^.;]{{0,60}})\banymore\b|after (?:the |a |an )?(?:\w+ ){{0,3}}(?:update|upgrade)\b|(?:after|since|when) (?:moving|switching|going) to (?:the )?(?:(?:new|newer|latest)(?=\s?(?:[.;)]|$)|\s(?:[\w.-]+ )?(?:{_LIBRARY_NAMES}|versions?|releases?|builds?|nightly|commits?|drivers?|api|branch|master|main)\b)|{_A_VERSION})|"
                   rf"upgrad\w* (?:to|past|from)|(?:updat|bump)(?:ed|ing) (?:\w+ ){{0,2}}(?:to|past|from) [^.;]{{0,25}}(?:\d+\.\d+|version|release|latest|newest)|"
                   rf"downgrad\w*|(?:worked|works|ran|runs|was fine|fine) (?:\w+ ){{0,3}}(?:on|under|with|in|before) (?:\w+ )?{_A_VERSION}|"
                   rf"(?:disappears?|disappeared|goes away|went away|(?:does|did)(?: not|n't) (?:happen|occur|leak)|is gone) (?:\w+ ){{0,2}}(?:on|under|with|in|when using) (?:\w+ )?{_A_VERSION}|"
                   rf"(?:on|under|with|in) (?:\w+ )?{_A_VERSION}[^.;]{{0,30}}\bthere (?:is|was) no (?:leak|oom|problem|issue|error|crash)\b|"
                   # "it was significantly better on 2.3.1", "memory use was much lower with torch 2.1": a build that did better
                   rf"\b(?:was|were|is|ran|runs|worked|works)(?: (?:significantly|much|a lot|far|way|noticeably))? (?:better|lower|smaller|less|fine)\b (?:on|with|in|under) (?:\w+ )?{_A_VERSION_NOT_SIZE}|"
                   # "on 2.3.1 I could use (256, 2048, 2048)": an earlier build that fitted more
                   rf"(?:on|under|with|in) (?:\w+ )?{_A_VERSION},? (?:i|we|it|this|the same code) (?:could|was able to|were able to) (?:use|run|fit|train|load|allocate|go)\b|"
                   # "it happens on TensorFlow 2.6 to 2.10 but not on 2.5"
                   rf"\b(?:happens?|occurs?|appears?|fails?|ooms?|breaks?)\b[^.;]{{0,15}}?\b(?:on|in|with|under|since) (?:\w+ )?{_A_VERSION}(?:[^.;]|\.(?=\d)){{0,30}}?\b(?:but|and|yet) not (?:on|in|with|under) (?:\w+ )?{_A_VERSION}|"
                   # "ollama 0.1.11 ran this model, the upgraded version does not"
                   rf"(?<![\w.]){_A_VERSION_NOT_SIZE} (?:ran|runs|worked|works|was fine|is fine|fit|fits|handled)\b|\bupgraded (?:version|build|release|package|install\w*)\b|"
                   r"(?:older|previous|earlier|last) (?:[\w.+-]+ )?(?:versions?|releases?|builds?|commits?)\b|a build from|(?<!\band )(?<!\band the )(?<!\bboth )\bnightly\b|(?:new|latest|recent) build|"
                   # ("graph regression", "a linear regression head", "the regression loss" name a task)
                   r"(?<!graph )(?<!linear )(?<!logistic )(?<!ridge )(?<!lasso )(?<!poisson )(?<!quantile )(?<!polynomial )(?<!kernel )(?<!box )(?<!bbox )(?<!bounding box )(?<!symbolic )(?<!ordinal )(?<!image )(?<!node )(?<!property )"
                   r"\bregress\w*(?!\w)(?! (?:tasks?|problems?|models?|heads?|loss\w*|targets?|outputs?|layers?|networks?|trees?|on|of|with)\b)|\bbisect\w*|"
                   # "a build of the master branch", "switching back to version 0.2.0 there is no leak"
                   r"\bbuild (?:of|from) (?:the )?(?:\w+ )?(?:master|main|dev|development) (?:branch|head)\b|\b(?:master|main) branch build\b|"
                   rf"(?:switch|go|went|roll|revert|fall|move|downgrad)\w* (?:[\w.-]+ ){{0,2}}back to (?:\w+ )?(?:version |release |build )?{_A_VERSION}|"
                   r"newer (?:version|release|build)|new (?:version|release)|(?:latest|newest) (?:\w+ )?(?:commit|version|release|master|main|nightly|build)\b|"
                   # "revision 7b33ef4 works fine": a build named by its commit, beside one that fails
                   r"\b(?:revision|commit|rev|build|sha)\s?[0-9a-f]{7,40}\b[^.;]{0,40}?\b(?:works?|worked|ran|runs|is fine|was fine|fits?|fine)\b|"
                   r"used to (?:start|work|run|fit)|previously (?:working|worked|fine|fitting|ran|running)\b|"
                   r"(?:recent|latest|new|last) (?:\w+ ){0,2}(?:update|upgrade|release|version)s?\b[^.;]{0,60}\b(?:broke|breaks|broken|caused?|causes|leads? to|led to|multipl\w+|doubl\w+)\b|"
                   # "it worked a few weeks ago", "the same code ran without trouble a year ago"
                   r"(?:worked|fine|ran|fit|fitted|trained)\b[^.;]{0,40}?\b(?:a|an|one|two|three|\d+|a few|few|some|several|a couple of) ?(?:weeks?|days?|months?|years?) (?:ago|earlier)|"
                   r"(?:worked|ran|was fine|were fine|fit|fitted)[^.;]{0,20}\b(?:last (?:week|month|year)|yesterday)")
# "This setup worked before; now it crashes": the same setup, failing now, with nothing the user changed.
_WORKED_BEFORE_NOW = (r"\b(?:worked|ran|was fine|were fine|was working|used to run|fit|fitted|trained)\b(?: (?:fine|ok|okay|well|perfectly))? before\b"
                      r"(?! (?:i|we|adding|changing|increasing|switching|moving|upgrading|updating|the (?:change|update|upgrade)))[^.]{0,40}?\bnow\b")
# What people in a thread do ("another user reported", "someone else tried"): a person, not a process.
_PERSON_VERBS = (r"(?:tried|tries|attempted|reproduced|tested|reports?|reported|says|said|mentions?|mentioned|confirms?|confirmed|"
                 r"suggests?|suggested|commented|asked|wrote)")
_OTHER_PROCESS = (r"(?<!\bper )(?<!\baccording to )\b(?:another|other|second|two|several|someone else'?s?|other people'?s?) "
                  rf"(?!(?:different|{_PERSON_VERBS})\b)"
                  r"(?:(?!(?:steps?|iterations?|epochs?|batch(?:es)?|pass(?:es)?|rounds?|stages?|phases?)\b)\w+ )?(?:process(?:es)?|jobs?|users?|programs?|runs?|"
                  # ("the second training step" is a step of this run)
                  r"copy|copies|instances?|scripts?|notebooks?|kernels?|sessions?|containers?|trainings?)\b"
                  r"(?! (?:steps?|iterations?|epochs?|batch(?:es)?|pass(?:es)?|rounds?)\b)"
                  # "another container with CUDA 9.0 and PyTorch 0.4.1 is healthy": a setup compared, not a process
                  r"(?! (?:with|on|using|running)\b(?:[^.;]|\.(?=\d)){0,60}?\b(?:is|was|are|were) (?:healthy|fine|ok|okay|working)\b)"
                  # "another user reported the same": a person in the thread, not a process on the card
                  rf"(?! (?:\w+ )?{_PERSON_VERBS}\b)|"
                  r"(?:gpu|card|device)s?(?: ?#?\d+)? (?:is |are |was |were )?(?:already )?(?:busy|in use|occupied|shared)|shared (?:gpu|machine|server|node|cluster)|"
                  r"already (?:in use|busy|running|occupied)|nvidia-smi shows? (?:\w+ ){0,4}(?:other|another|used by)|"
                  # a shared workstation: "10 GPUs, of which 1 is usually in use", "one of the cards is always busy"
                  r"\b(?:gpus|cards|devices)\b[^.;]{0,40}?\bof which (?:only )?(?:\w+ )(?:only )?(?:is|are) (?:usually |often |always |normally |typically |currently |mostly )?(?:in use|busy|occupied|taken)\b|"
                  r"\b(?:one|some|two|\d+|a few) of (?:them|the (?:gpus|cards|devices)) (?:is|are) (?:usually |often |always |normally |typically |currently |mostly )?(?:in use|busy|occupied|taken)\b|"
                  # "once I closed the first notebook, the second worked"
                  r"\b(?:clos|kill|stopp?|shut|terminat|exit|quit)\w* (?:down )?(?:the |my )?(?:first|other|previous|old|earlier|older) (?:\w+ )?(?:notebooks?|kernels?|process(?:es)?|sessions?|scripts?|jobs?|instances?|programs?|tabs?)\b|"
                  r"(?:held|used|taken|occupied|in use|busy|allocated|reserved) by (?:another|other|someone|somebody|a colleague|a coworker)|zombie|"
                  r"something else\b[^.;]{0,40}\b(?:uses?|holds?|takes?|occup\w+)\b|already (?:uses?|holds?|takes?) (?:most|all|much|\d+)|"
                  r"(?:colleague|coworker|co-worker|labmate|teammate|friend)'?s? (?:\w+ )?(?:jobs?|process\w*|runs?|training|notebooks?|models?)|orphan\w* process|"
                  r"(?:previous|earlier|old|last|crashed|dead) (?:\w+ )?(?:run|process|job|kernel|session)s? (?:is |are |was |were )?still|"
                  r"still (?:holds?|holding|occup\w+|using) (?:the |some |all )?(?:gpu |vram |video )?memory|"
                  # "its child processes keep holding GPU memory after the deployment is removed"
                  r"\b(?:process(?:es)?|children|jobs?|containers?|pods?|instances?)\b[^.;]{0,40}?\b(?:(?:keeps?|kept|still|remains?) (?:hold\w*|occup\w*|retain\w*|using)|"
                  r"(?:continues?|continued) (?:to (?:hold|occupy|retain|use|take)|holding|occupying|retaining|using)) (?:on to |onto )?(?:the |some |all |significant |a lot of |most of the )?(?:gpu |vram |video |device |cuda )?memory|"
                  # Other models served from the same card (an inference server hosting several).
                  r"(?:\d+|several|many|other|more) (?:other )?models? (?:are |were )?(?:\w+ ){0,3}(?:on|in) the same (?:gpu|card|server|device|machine|process)|"
                  # "the server already hosts 7 models", "the GPU serves three other models"
                  r"\b(?:already |also )?(?:hosts?|hosting|serves?|serving) (?:\d+|several|many|other|more|two|three|four|five|six|seven|eight) "
                  r"(?:other )?models\b")
# A process of the user's that has ended ("the job was killed", "I stopped the script").
_PROCESS_GONE = (r"(?:(?:process|job|run|program|script|training|kernel|notebook)(?:es)? (?:has |had |have |is |was )?"
                 r"(?:ended|exited|finished|terminated|(?:been |got )?killed|died|crashed|stopped|closed)"
                 r"|\b(?:i|we) (?:killed|stopped|terminated|closed|interrupted|exited) (?:the |my |our )?(?:\w+ )?"
                 r"(?:process|job|run|program|script|training|kernel|notebook)(?:es)?)"
                 # "training finished its first epoch" is a phase of a run that goes on
                 r"(?! (?:(?:the|its|my|a) )?(?:first |second |last |next |\d+\w* )?(?:epochs?|steps?|iterations?|batch(?:es)?|rounds?)\b| \d)")
# Memory in use while nothing of the user's runs, or after the process that took it is gone: a
# dead process's memory, or someone else's. Read apart from _OTHER_PROCESS because its own words
# are negations ("no process is listed") that would deny it there.
_ORPHANED_MEMORY = (# "nvidia-smi shows no processes associated with the memory used", "ray processes still mapped to the GPUs"
                    r"\bshows? no (?:\w+ )?process(?:es)? (?:associated|attached|linked|tied|belonging) (?:with|to) (?:the |that |this |their |its )?(?:memory|vram|gpus?)\b|"
                    r"\bafter (?:a number of|several|many|a few|some|\d+) (?:\w+ ){0,2}(?:trials?|workers?|actors?) (?:have been |had been |were |got |are )?(?:\w+ )?(?:stopped|terminated|killed|pruned|cancelled)\b|"
                    r"\b(?:stopped|terminated|killed|pruned|finished|cancelled|ended) (?:trials?|workers?|actors?|jobs?|processes)\b[^.;]{0,30}?"
                    r"\b(?:do(?:es)?n't|do(?:es)? not|never) (?:seem to )?(?:give back|release|free|return) (?:their |its |the )?(?:gpu |vram )?memory\b|"
                    r"\bprocess(?:es)? (?:are |is |were |was )?still (?:memory-mapped|mapped|attached|holding|using|alive|running) (?:to |on )?(?:the )?(?:gpus?|cards?|devices?|memory)\b|"
                    # workers a scheduler or pool stopped that keep their memory: "after several trial
                    # terminations", "the scheduler should stop a trial and release its GPU memory"
                    r"\bafter (?:several|many|a few|some|\d+) (?:\w+ ){0,3}(?:terminations|stopped trials|killed workers|cancelled trials)\b|"
                    r"\b(?:stop|terminat|kill|prun|cancel)\w* (?:a |the |each |every )?(?:trials?|workers?|actors?)\b[^.;]{0,40}?\b(?:and )?(?:release|free)\w* (?:its |their |the )?(?:gpu |vram )?(?:memory|vram)\b|"
                    r"\b(?:even )?(?:when|while|with|though|although) (?:there (?:is|are) )?no (?:\w+ )?(?:process(?:es)?|jobs?|programs?|scripts?|runs?|trainings?) "
                    r"(?:is |are |was |were )?(?:running|listed|shown|active|alive)|"
                    r"\bno (?:process(?:es)?|pids?) (?:is |are )?(?:listed|shown|visible)\b|"
                    r"\b(?:isn't|is not|aren't|are not|without|with no) (?:a single |any |one )?(?:process(?:es)?|pids?) (?:in (?:the|its|their) (?:process )?list|listed|shown|visible)\b|"
                    r"\bnone of (?:my|our|the) (?:\w+ )?(?:scripts|jobs|processes|programs|runs|notebooks|trainings) (?:is|are|was|were) (?:running|active|alive)\b|"
                    rf"\b{_PROCESS_GONE}[^.;]{{0,60}}?\b(?:memory|vram)\b[^.;]{{0,30}}?\b(?:remains?|remained|stays?|stayed|still|(?:is|was|are|were)n't released|not (?:released|freed))|"
                    r"\b(?:memory|vram) (?:remains?|remained|stays?|stayed|is still|was still) (?:\w+ )?(?:occupied|allocated|in use|used|held|taken)\b"
                    rf"[^.;]{{0,30}}?\b(?:after|though|when|once) (?:the |my |its )?(?:\w+ )?{_PROCESS_GONE}|"
                    # an earlier job that crashed or was killed, then new jobs fail: "we crashed during a 2D
                    # job; afterwards users starting new jobs got out of memory errors"
                    r"\b(?:crash(?:ed|es)?|was killed|got killed|were killed|died|hung|froze)\b[^.;]{0,60}?[.;,]?\s*(?:and )?(?:after(?:wards)?|since then|from then on|now)\b[^.;]{0,40}?"
                    r"\b(?:new|later|next|subsequent|other|every|any) (?:\w+ )?(?:jobs?|runs?|processes|trainings?|sessions?|launch\w*)\b|"
                    r"\bafter (?:a |the |an )?(?:previous |earlier |last )?(?:\w+ )?(?:job|run|process|training|session) (?:crash(?:ed|es)?|was killed|got killed|died)\b")
_ONLY_MULTI_GPU = (r"single-?gpu (?:\w+ )?(?:(?:run|training|resume|restart|job)s? )?(?:does not|doesn't|do not|don't|works?|is fine|are fine|runs? fine)|"
                   r"(?:works?|fine|runs?|succeeds?) (?:fine |ok )?(?:on|with) (?:a |one )?single gpu|(?:on|with) (?:a |one )?single gpu (?:works|is fine)|"
                   r"only (?:with|on|when using) (?:multiple|several|more than one|all|\d+) gpus|"
                   r"(?:resum|train|run)\w* (?:on|with) (?:a |one )?single gpu works|(?:1|one) gpu works|"
                   # the single-GPU run told first, its command in between: "with a single GPU, python
                   # train.py --batch 16 ... works", "on one GPU I can train it"
                   r"\b(?:with|on|using) (?:a |one |1 )(?:single )?gpu\b,?(?:[^.;]|\.(?=\S)){0,160}?\b(?:works|worked|is fine|was fine|runs? fine|ran fine|trains? fine|succeeds|succeeded|(?:i )?can (?:train|run|resume))\b|"
                   # the multi-GPU run told as the one that fails: "with 4 GPUs I run into CUDA out of memory"
                   r"\b(?:with|on|using|across) (?:\d+|two|three|four|eight|multiple|several|more) gpus\b[^.;]{0,60}?\b(?:i |it |we |training |the job )?"
                   r"(?:run into|ran into|runs? out|ran out|gets?|got|hits?|throws?|fails?|failed|crash\w*)\b[^.;]{0,20}?\b(?:out of memory|oom)\b")
# ("an option to run it on the CPU instead" asks for another place to run: the run was on the GPU)
# ("on the CPU it is fine" compares with the CPU run: the GPU run is the one that failed.)
# ("CPU mode works for big and small pools": the run that succeeded, not the one that failed.)
# ("remote_device='cpu'", "offload_device=cpu" name where an offload puts tensors, not a run on the CPU)
_CPU_MODE = (r"\bcpu mode\b(?!,? (?:it |this |that |everything |training )?(?:is|was|works?|worked|runs?|ran|fits?|trains?|goes|went|succeeds?|succeeded)\b)|--?(?:gpu|device)[= ](?:c|cpu|-1)\b|(?<![\w_])device=.?cpu|\bcpu[- ]only\b|"
             # ("can merging be done on the CPU?" asks for it: the run was not there)
             # ("it works flawlessly on the CPU": a run that succeeded there, not one meant for it)
             r"(?<!works )(?<!worked )(?<!fine )(?<!runs )(?<!ran )(?<!ok )(?<!okay )(?<!flawlessly )(?<!perfectly )(?<!well )(?<!properly )"
             r"(?<!correctly )(?<!normally )(?<!successfully )(?<!great )(?<!result )(?<!results )(?<!outputs )(?<!predictions )(?<!them )on the cpu\b(?! instead\b)(?!,? (?:it |this |that |everything |training )?(?:is|was|works?|worked|runs?|ran|fits?|goes|went|trains?)\b)(?! with (?:torch\.cat|\w+ ?=))(?![^.;]{0,12}\?)|"
             r"meant to (?:use|run on) the cpu")
_CONSTRUCTION = (r"(?:while|when|during) (?:still )?(?:building|constructing|creating|initiali[sz]ing|instantiating) (?:the )?(?:\w+ ){0,3}"
                 r"(?:model|network|net|layers?|backbone|modules?)|before (?:loading |reading |processing |seeing )?any (?:batch|data|step|input|sample)|"
                 # passive: "while the VGG base is still being built", "while the model is built"
                 # ("each model is built fresh" says how, not when it failed: the clause must be the failure's time)
                 r"\b(?:while|when|as|before|until) (?:the |my |its |our |a )?(?:[\w-]+ ){0,2}(?:model|network|net|backbone|base|layers?|modules?)\b[^.;]{0,20}?\b(?:is|was|are|were|gets|got) (?:still )?(?:being )?(?:built|constructed|created|initiali[sz]ed|instantiated)\b|"
                 r"(?:during|in) (?:the )?(?:model|network) (?:construction|creation|building|initiali[sz]ation|instantiation)")
# The allocator's own settings against fragmentation, and whether the note says they helped.
_ALLOCATOR_SETTING = (rf"expandable[_ ]segments|max_split_size_mb|garbage_collection_threshold|{ALLOC_CONF_VARIABLE}|"
                      r"TF_GPU_ALLOCATOR\W{0,3}cuda_malloc_async|XLA_PYTHON_CLIENT_ALLOCATOR\W{0,3}platform|empty_cache\(\)")
_HELPED = r"\b(?:help(?:s|ed)?|fix(?:es|ed)?|solv(?:es|ed)|resolv(?:es|ed)|avoids?|avoided|works?|worked|goes away|went away|go away|disappear\w*|vanish\w*)\b"
_FRAGMENTATION_SAID = (r"\bfragment\w*|(?:reserved|cached) (?:memory )?(?:is |was |stays |grows )?(?:much |far |a lot )?(?:larger|bigger|higher|more) "
                       r"than (?:the )?allocated|(?:gap|difference) between (?:reserved|cached) and allocated|"
                       # a freed large block now carved up by small live ones: the same request cannot be served again
                       r"\b(?:segments?|blocks?|memory|cache|pool|region)\b[^.;]{0,40}?\b(?:split|broken|chopped|carved|cut|divided) (?:up )?into "
                       r"(?:many |lots of |several |a (?:lot|number) of |numerous )?(?:small\w* |tiny )?(?:blocks|pieces|chunks|fragments|parts|holes)\b|"
                       r"\b(?:half|\d{1,2} ?%|part|much|a (?:lot|third|quarter)) of (?:the |my )?(?:card'?s? |gpu'?s? |device'?s? )?(?:memory|vram) "
                       r"(?:can(?:not|'t| never| not)|could(?:n't| not| never)|is never|never gets?) (?:ever )?(?:be )?(?:used|utili[sz]ed|reserved|allocated|reused)\b|"
                       r"\bnon-?releasable\b")
# Training and an inference engine taking turns on the same GPUs (RL fine-tuning with rollouts).
_COLOCATED = (r"colocat\w*|co-locat\w*|\bgrpo\b|\bppo\b|\brlhf\b|\brollouts?\b|sleep[_ ]mode|wake[_ ]up|"
              r"offload\w* (?:and|/) (?:re)?load\w*|\bverl\b|openrlhf|nemo-rl")
# A context window set for an inference runtime: llama.cpp, Ollama and vLLM reserve the KV cache
# for the whole window up front, whatever the length of the prompts actually sent. The runtimes' own
# knobs name the runtime (num_ctx is Ollama's, n_ctx / -c llama.cpp's, max_model_len vLLM's); a context
# length said in words counts where a runtime or its model files (GGUF, ggml) are named.
_RUNTIME_CONTEXT_KNOB = r"\b(?:num_ctx|n_ctx|ctx[_-]size|--ctx-size|max_model_len|max-model-len|max_seq_len_to_capture)\b|(?<![\w-])-c \d{3,}\b"
_CONTEXT_LENGTH_SAID = (r"\bcontext (?:length|size|window|len)\b[^.;]{0,20}?\b(?:to |of |= ?|at |: ?)?\d+(?:\.\d+)?\s?k?\b|"
                        r"\b\d+(?:\.\d+)?\s?k (?:token )?context\b")
_LOCAL_RUNTIME = r"\b(?:gguf|ggml\w*|llama[_-]cpp\w*|koboldcpp|lm studio|exllama\w*)\b|\.gguf\b"
# Samples, previews or grids generated between training steps (a GAN's fixed-noise grid, a diffusion
# model's preview images): the generator runs with autograd on unless the sampling is wrapped in
# no_grad, and its activations stay for a backward that never comes.
_SAMPLES_IN_TRAINING = (r"\b(?:create|make|save|log|plot|show|draw)_?(?:image_?|sample_?)?grids?\b|"
                        r"\b(?:self\.)?(?:gen|generator|net_?g|g_ema|g|decoder|model)\((?:self\.)?(?:fixed|sample|eval|test|val|vis|viz|preview)\w*\)|"
                        r"\b(?:generat|sampl|sav|log|render|produc|preview|visuali[sz])\w*\b[^.;]{0,40}?\b(?:sample|preview|progress|example|fake|generated|intermediate|visuali[sz]ation) "
                        r"(?:images?|grids?|pictures?|outputs?|audio|clips?|videos?|frames)\b[^.;]{0,40}?\b(?:during|while|in|every|each|between|after)\b[^.;]{0,20}?\b(?:training|epochs?|steps?|iterations?)\b")
_SAMPLING_REMOVED_HELPS = (r"\b(?:after|by|when|once) (?:removing|commenting(?: out)?|disabling|skipping|turning off|dropping) (?:it|that|this|them|the (?:sampling|grid|preview|visuali[sz]ation|logging)\w*)\b|"
                           r"\b(?:remov|comment|disabl|skipp)\w* (?:it|that|this|them)(?: out)?\b[^.;]{0,40}?\b(?:fix|solv|help|freed|free|went from|works?|no more)\w*")
# A model loaded again and again in one long-running process ("model.load() many times during
# self-play", "I reload the newest weights every round"): each load builds another model, and the
# old ones stay referenced (Keras' global graph, a list, a closure) unless freed.
_REPEATED_LOADING = (r"\b(?:re)?load\w*\b[^.;]{0,50}?\b(?:again and again|over and over|many times|multiple times|repeatedly|"
                     r"every (?:iteration|step|epoch|round|time|generation|game|episode|request|call)|each (?:iteration|step|epoch|round|generation|time|game|episode|request|call)|"
                     r"in a (?:for |while )?loop|\d{2,} times)\b|"
                     r"\b(?:many|several|multiple|repeated|\d{2,}) (?:times of |rounds of )?(?:\w+[ .])?(?:re)?load\w*|"
                     r"\b(?:repeatedly|again and again|over and over)\b[^.;]{0,20}?\b(?:re)?load\w*")
# The library said to behave otherwise than its documentation promises: "according to the docs the
# out-of-context creation should behave just like the in-context one", "the docs say X, but".
_CONTRARY_TO_DOCS = (r"\b(?:according to|as (?:per|stated in|described in|documented in)|per) (?:the |its |their )?(?:docs?|documentation|docstrings?|readme|api reference)\b(?:[^.;]|\.(?=\S)){0,120}?\b(?:should|is supposed to|must|would)\b|"
                     r"\b(?:the |its |their )?(?:docs?|documentation|docstrings?|readme) (?:says?|said|states?|claims?|promises?|describes?)\b[^.;]{0,100}?\b(?:but|yet|however|instead)\b|"
                     r"\b(?:contrary to|unlike what|not what) (?:the |its )?(?:docs?|documentation|docstrings?)\b|\bdocumented (?:behaviou?r|to)\b[^.;]{0,60}?\b(?:but|yet|instead|not)\b")
# The same weights loaded two ways, one that fails and one that works ("with safetensors I get an
# OOM error while torch.load() just works"): the weights fit; the failing loader's copies do not.
_LOADER = (r"(?:safetensors|torch\.load(?:\(\))?|load_state_dict(?:\(\))?|from_pretrained(?:\(\))?|load_file(?:\(\))?|safe_open|mmap(?:=True)?|"
           r"low_cpu_mem_usage(?:=True)?|device_map(?:=\S+)?|pickle|the (?:old|legacy|new|other) loader|\.bin (?:files?|checkpoints?)|\.safetensors (?:files?|checkpoints?))")
_OTHER_LOADER_WORKS = (rf"\b(?:with|using|via|through) {_LOADER}[^.;]{{0,60}}?\b(?:oom|out of memory|runs? out|fails?|crash\w*|error)\b[^.;]{{0,40}}?\b(?:while|but|whereas|yet)\b"
                       rf"[^.;]{{0,20}}?(?:(?:with|using|via) )?{_LOADER}[^.;]{{0,20}}?\b(?:just |still )?(?:works?|loads?|fits?|is fine|succeeds?)\b|"
                       rf"{_LOADER}[^.;]{{0,30}}?\b(?:just |still )?(?:works?|loads? fine|fits?|is fine)\b[^.;]{{0,40}}?\b(?:but|while|whereas)\b[^.;]{{0,20}}?(?:(?:with|using|via) )?{_LOADER}[^.;]{{0,40}}?"
                       r"\b(?:oom|out of memory|runs? out|fails?|crash\w*)")
# Gradient accumulation turned on (or above one step) is what fails: "accumulate_gradient_steps=1 is
# normal, =2 OOMs", "anything above 1 gives an OOM with MultiSteps".
_ACCUMULATION_ADDS_MEMORY = (r"\b(?:accumulat\w*|multisteps?|grad(?:ient)?_accum\w*)\b[^;]{0,60}?(?:=|to|of|is|:)\s?1\b[^;]{0,60}?\b(?:normal|works?|fine|ok|okay|fits?|runs?)\b"
                             r"[^;]{0,80}?(?:=|to|of|is|:)\s?(?:[2-9]|\d{2,})\b[^;]{0,40}?\b(?:oom|out of memory|fails?|occurs|crash\w*|runs? out)|"
                             r"\b(?:accumulat\w*|multisteps?)\b[^.;]{0,60}?\b(?:anything|any value|every value|values?) (?:above|over|greater than|more than|>) 1\b[^.;]{0,30}?\b(?:oom|out of memory|fails?|crash\w*)|"
                             r"\b(?:when|once|after|if) (?:i |we )?(?:turn on|enable|use|add|switch on)\w* (?:the )?(?:gradient )?accumulation\b[^.;]{0,40}?\b(?:oom|out of memory|fails?|crash\w*|runs? out)")
# A backend or library turned off is what makes it fit: "with torch.backends.cudnn.enabled = False memory
# stays as expected", "disabling cudnn fixes it", "without xformers the leak is gone".
_BACKEND_OFF_FIXES = (r"(?:cudnn\.enabled\s?=\s?false|\b(?:disabl\w*|turn\w* off|switch\w* off|without) (?:the )?(?:cudnn|cudnn backend|xformers|flash[- ]attention|sdpa|the fused kernel|tf32|jit|torch\.compile)\b|"
                      r"\b(?:cudnn|xformers|flash[- ]attention)\b (?:is )?(?:disabled|off|turned off))[^.;]{0,80}?\b(?:works?|fix\w*|solv\w*|stays?|stable|as expected|fine|no (?:more )?(?:leak|oom|growth)|"
                      r"(?:leak|growth|problem|oom) (?:is )?(?:gone|disappears?))\b")
# A known bug said to be back: "closely related to previous bugs which have already been fixed", "the same
# issue as #2287 which was marked fixed".
_KNOWN_BUG_BACK = (r"\b(?:related to|same as|similar to|like) (?:a |the |some )?(?:previous|earlier|known|old|reported|prior) (?:bugs?|issues?)\b|"
                   r"\b(?:bugs?|issues?|leaks?) (?:which|that) (?:have|has|had|was|were) (?:already )?(?:been )?(?:fixed|marked (?:as )?fixed|closed)\b|"
                   r"\b(?:was|is|were) (?:marked|reported) (?:as )?fixed\b[^.;]{0,60}?\b(?:still|again|but)\b")
# Two engines or models served from one card: each engine's memory budget (vLLM's
# gpu_memory_utilization) is a fraction of the whole card, and what the first one already holds
# counts against the second's ("a second identical model on the same GPU", "when I start the 72B
# first and then the 14B", "both work when run separately").
_SERVED_THING = r"(?:models?|instances?|servers?|engines?|copies|replicas?|deployments?|workers?)"
_ONE_CARD = r"(?:the same|one|a single|a shared|one shared|the one) (?:\w+ )?(?:gpus?|cards?|devices?|a100|h100|l40s?|a10g?|\d+ ?gb? (?:gpu|card))\b"
_ENGINES_SHARE_GPU = (rf"\b(?:second|another|two|both|multiple|several|more than one) (?:\w+[ -]){{0,3}}{_SERVED_THING}\b[^.;]{{0,60}}?\b(?:on|in|into|onto|to|with|from|sharing|share) {_ONE_CARD}|"
                      rf"\b(?:on|in|into) {_ONE_CARD}[^.;]{{0,40}}?\b(?:second|another|two|both|multiple|several) (?:\w+[ -]){{0,3}}{_SERVED_THING}\b|"
                      r"\b(?:start|launch|run|load|bring up|serve)\w* (?:the )?[\w.-]+ (?:model |server |instance |engine )?first,? (?:and )?then\b|"
                      rf"\b(?:both|each)\b[^.;]{{0,60}}?\b(?:succeed|work|run|start|load)\w*\b[^.;]{{0,30}}?\b(?:when|if) (?:\w+ ){{0,2}}(?:run|started|launched|loaded|used|served|deployed) "
                      r"(?:separately|alone|individually|one at a time|on (?:their|its) own)\b")
# The inference engine's own start-up or wake-up is what failed (its KV cache and profile run
# reserved on top of what the trainer beside it holds), read from the engine's frames or from a
# clause of the note that names the engine beside a start or wake verb.
_ENGINE_STARTING_FRAMES = (r"\bwake_up\b|cumem_allocator|device_allocator/cumem|_initialize_kv_caches|initialize_cache|"
                           r"determine_num_available_blocks|profile_run|(?:llm_engine|async_llm|entrypoints/llm)\.py\S* in __init__|"
                           r"\bLLM\(|from_engine_args")
_ENGINE_START_VERB = (r"\b(?:wak(?:e|es|ing)|woke) (?:it |them )?up\b|\bwake[_-]up\b|\bstart(?:s|ed|ing)?(?: up)?\b|\bstart-?up\b|"
                      r"\binit\b|\binitiali[sz]\w*|\bset(?:s|ting)? up\b|\bsetup\b|\blaunch\w*|\bcreat\w*|"
                      r"\bspin(?:s|ning)? up\b|\bboot\w*|\bload(?:s|ing)? (?:the |its )?(?:model|weights)\b")
# Optimizer states (or parameters) kept in host memory: ZeRO-Offload, FSDP's CPU offload.
_OFFLOAD = r"offload_(?:optimizer|param)\w*|cpu_offload|zero[-_ ]?\d?[-_ ]?offload|offload(?:ing|ed|s)? (?:the )?(?:optimizer|params|parameters|states?) (?:to|on) (?:the )?(?:cpu|host|nvme)|(?:cpu|nvme)[- ]offload"
# A notebook or interactive session whose cell runs again (or whose memory does not clear between
# runs of a cell): the previous run's objects are still referenced by the session
_INTERACTIVE_RERUN = (r"\b(?:re-?run\w*|re-?execut\w*|(?:run|ran|execut)\w* (?:it |them |the (?:same )?cells? |a cell )?(?:again|twice|multiple times|several times|repeatedly))\b"
                      r"[^.;]{0,60}?\b(?:cells?|notebooks?|jupyter|kernel|colab|ipython)\b|"
                      r"\b(?:cells?|notebooks?)\b[^.;]{0,60}?\b(?:re-?run\w*|re-?execut\w*|(?:run|ran|execut)\w* (?:again|twice|multiple times|several times|repeatedly))\b|"
                      r"\b(?:execut|run)\w* the same cell\b|"
                      r"\b(?:vram|gpu memory|cuda memory|memory)\b[^.;]{0,30}?\b(?:does ?n[o']t|is ?n[o']t|never|not|won't) (?:get )?"
                      r"(?:clear|cleared|free|freed|release|released|clean(?:ed)? up)\b[^.;]{0,60}?\b(?:cells?|notebooks?|kernel)\b")
# In a notebook session ("the colab", "my Jupyter notebook") the code run again in the same kernel
# ("when I ran the script again, I got this error") is a rerun there, said in another sentence.
_NOTEBOOK_SESSION = r"\b(?:colab|jupyter|notebooks?|ipython|ipynb|kaggle kernel)\b"
_RAN_AGAIN = (r"\b(?:re-?ran|re-?run\w*|re-?execut\w*|(?:run|ran|running|execut\w*) (?:it|them|the (?:same |whole )?(?:script|code|notebook|program|cells?))"
              r" (?:again|a second time|twice|once more))\b")
# Offloading a model's components to the CPU, asked of a pipeline or a server (not an optimizer's
# states): the weights should then reach the GPU one component at a time, when used.
_PIPELINE_OFFLOAD = (r"enable_(?:model|sequential)_cpu_offload|--(?:enable-)?(?:cpu|model)-offload\b|--offload-model\b|"
                     r"\b(?:model|sequential|pipeline) (?:cpu )?offload(?:ing)?\b|\bcpu offload(?:ing)? (?:is )?(?:enabled|on)\b")
# The failure placed while the model or pipeline was being built, before any input ran.
_WHILE_BUILDING = (r"\b(?:while|when|as|during)\b[^.;]{0,40}\b(?:construct\w*|initiali[sz]\w*|set(?:ting)? up|built|building|"
                   r"instantiat\w*)\b|\b(?:construction|initiali[sz]ation|start-?up)\b")
# The DataLoader's host-side settings named (pinned buffers, prefetched batches, worker processes),
# and Windows' Linux layer, where page-locked (pinned) host memory is tightly capped.
_LOADER_SETTINGS = r"\bpin_memory\b|\bprefetch_factor\b|\bpersistent_workers\b|\bnum_workers\s?=\s?[1-9]"
# Memory said to follow the DataLoader's worker count ("uses 3x more memory when num_workers > 0",
# "with num_workers=0 it fits"): each worker is a process with its own copy of what it touches.
_WORKERS = r"(?:num_workers|n_workers|(?:dataloader |data loader |loader )?workers)"
_MEMORY_FOLLOWS_WORKERS = (rf"\b(?:more|\d+(?:\.\d+)?x|twice|double|triple|three times|much more|a lot more)(?: as much)? (?:\w+ )?(?:memory|ram)\b[^.;]{{0,30}}?"
                           rf"\b(?:when|with|if|once|for) (?:using |setting |i use |i set )?(?:more )?{_WORKERS}\b|"
                           rf"\b{_WORKERS}\s*(?:=|==|is|are|set to|at|of|to)?\s*(?:0|zero)\b[^.;]{{0,40}}?\b(?:works?|worked|fits?|fine|ok|no (?:oom|error|problem|crash)|solves?|solved|fixe[sd]|helps?|helped)\b|"
                           rf"\b(?:memory|ram)\b[^.;]{{0,30}}?\b(?:grows?|scales?|increases?|goes up|rises?) with (?:the )?(?:number of )?{_WORKERS}\b")
_WSL = r"\bwsl2?\b|windows subsystem for linux"
# A machine other people's jobs run on: a cluster, a lab's server, a numbered compute node
_SHARED_MACHINE = (r"\bshared (?:gpus?|machines?|servers?|nodes?|clusters?|workstations?)\b|\b(?:gpu|compute)[-_](?:node|compute|server)?[-_]?\d+\b|"
                   r"\bcompute nodes?\b|\b(?:our|the|a) (?:lab'?s?|university'?s?|department'?s?|group'?s?|school'?s?) (?:gpu |gpus |servers?|clusters?|machines?)|"
                   r"\bhpc\b|\bslurm\b|\b(?:on|in|of) (?:the|our|a|my) (?:university |lab |school |company |shared )?cluster\b")
# A call that allocates nothing but the device context failing ("cudaGetDeviceCount fails with out
# of memory", "torch.cuda.is_available() reports out of memory"): no tensor of the program is involved.
# (Not the guard of pasted code, "if torch.cuda.is_available():", which says nothing failed there.)
_DEVICE_QUERY_FAILS = (r"\b(?:cudaGetDeviceCount|cuInit|cudaSetDevice|cudaFree\(0\)|cuDeviceGet\w*|cuCtxCreate\w*|nvmlInit\w*|"
                       r"(?<!\bif )(?<!\bif not )torch\.cuda\.(?:is_available|device_count|init|set_device)\(\)|tf\.config\.list_physical_devices\(\))")
# The same program said to fit natively (on Windows itself, outside the VM or container).
_NATIVE_FITS = (r"\b(?:runs?|works?|worked|ran|fits?|is fine|was fine|trains?)\b[^.;]{0,20}?\bnative(?:ly)?\b|"
                r"\bnative(?:ly)?(?: on windows)?\b[^.;]{0,20}?\b(?:works?|worked|runs?|ran|is fine|fits?)\b|"
                r"\b(?:on|under|in) (?:plain |native )?windows\b[^.;]{0,30}?\b(?:works?|worked|runs?|ran|is fine|was fine|fits?)\b|"
                r"\b(?:only|just) (?:reach\w*|uses?|used|gets?) (?:about |around |roughly )?half (?:of )?(?:the )?(?:available |free )?(?:gpu |video )?(?:ram|memory|vram)\b|"
                r"\breach (?:only )?(?:about |around |roughly )?half (?:of )?(?:the )?(?:available )?(?:gpu |video )?(?:ram|memory|vram)\b")
# Host RAM, not the GPU, named as what fills up.
_HOST_RAM = (# "it's a CPU OOM", "near the memory limit of my machine"
             r"\b(?:cpu|host|system|ram)[- ]oom\b|\boom on (?:the )?(?:cpu|host)\b|"
             # "the tokenizing keeps blowing up my RAM", "it requires swapping on disk"
             r"\b(?:blows?|blew|blowing) up (?:my |the |all (?:of )?(?:my |the )?)?(?:system |host )?ram\b|"
             r"\b(?:requires?|required|starts?|started|goes? into|went into|ends? up|ended up)\b[^.;]{0,10}?\b(?:swapping|to swap|using (?:the )?swap)\b|"
             # the data loader's workers share batches through /dev/shm: "insufficient shared memory (shm)"
             r"\b(?:insufficient|out of|not enough|too little|more|enlarge\w*|increas\w*|rais\w*) (?:the )?shared memory\b|\bshared memory (?:\(shm\) )?(?:limit|size)\b|/dev/shm\b|--shm-size\b|"
             # Python's own exception when the process cannot get host memory (not OutOfMemoryError)
             r"\bMemoryError\b|"
             # "the RAM usage is maxed and the notebook crashes"
             r"\b(?:system |host |cpu )?ram(?: usage| use)? (?:is |gets |got )?(?:maxed|maxes|maxing)(?: out)?\b|\bmax(?:es|ed)? out (?:the |my |all )?(?:system |host )?ram\b|"
             r"\bram (?:usage )?(?:goes|went|climbs|climbed|jumps|jumped) (?:up )?to (?:100|9\d) ?%|"
             r"\bnear (?:the |my |its )?(?:cpu |host |system |ram )?memory limit (?:on|of) (?:my |the |this )?(?:machine|node|host|server|box)\b|"
             r"(?:system|host|cpu|main) (?:memory|ram)\b[^.;]{0,40}\b(?:fills?|filled|grows?|growing|climbs?|climbing|increas\w*|"
             r"runs? out|ran out|exhaust\w*|full|spikes?)|\b(?:ram|swap)\b(?: \([^)]{0,40}\))? (?:usage |use )?(?:fills?|grows?|climbs?|increas\w*|spikes?|runs? out|is full)|"
             r"oom[- ]?kill(?:er|ed)|\bruns? out of (?:system |host |cpu )?ram\b|\bout of (?:system |host )?ram\b|"
             # "system memory peaked at 95% of 256 GB": nearly all of the host's RAM in use
             r"\b(?:system|host|cpu|main) (?:memory|ram)(?: usage| use)?\b[^.;]{0,20}?\b(?:peak\w*|reach\w*|hit\w*|at|to) (?:about |around |over |nearly |almost |~ ?)?(?:100|9\d|8[5-9])(?:\.\d+)? ?%|"
             # a swap size stated is the host's memory talked about: "my server has 52GB and 10GB swap"
             r"(?<![\d.])\d+(?:\.\d+)? ?Gi?B? (?:of )?swap\b|"
             # an amount of RAM used, not the machine's size: "it takes 60 GB of RAM" (a spec, "a 1050 Ti
             # with 4 GB, 12 GB of RAM", says nothing of what filled)
             r"\b(?:uses?|using|used|takes?|taking|took|eats?|ate|consum\w*|fills?|filled|needs?|needed|requires?|required|allocat\w*|grabs?|grabbed|"
             r"exceed\w*|reach\w*|hits?|up to|over|beyond|climbs? to|grows? to|goes to|went to) (?:up )?(?:about |around |over |nearly |almost |all |~ ?)?"
             r"(?<![\d.])\d+(?:\.\d+)? ?Gi?B? of (?:system |host |cpu )?ram\b|"
             r"(?:exhaust\w*|fill\w*|us\w+ up|run\w* out of) (?:the )?(?:system|host|cpu|main) (?:memory|ram)\b|"
             # "the machine's memory (not GPU memory) runs full"
             r"\b(?:machine|computer|pc|laptop|server|node|instance)(?:'s)? (?:memory|ram)\b[^.;]{0,60}?\b(?:fills?|filled|runs? (?:full|out)|ran (?:full|out)|is full|exhaust\w*|maxe[sd] out)\b|"
             r"\b(?:memory|ram) of (?:my|the|our|this) (?:machine|computer|pc|laptop|server|node|instance|host)\b[^.;]{0,40}?\b(?:fills?|filled|runs? (?:full|out)|ran (?:full|out)|is full|exhaust\w*|maxe[sd] out)\b|"
             r"\b(?:needs?|requires?|uses?|using|consum\w+|takes?|eats?) (?:up )?(?:a lot of|lots of|so much|too much|huge amounts of|more and more|most of|all) "
             r"(?:the |my |its )?(?:system|host|cpu|main) (?:memory|ram)\b|"
             # the kernel's OOM killer is what kills a process "by the system"
             r"\bkilled by (?:the )?(?:system|os|operating system|kernel|linux)\b|\b(?:the )?(?:system|os|operating system|kernel|linux|oom killer) kill(?:s|ed)\b|"
             # "the memory usage (RAM, not GPU memory) kept increasing"
             r"\b(?:memory|usage)\b[^.;(]{0,10}\((?:system |host |cpu |main )?ram\b[^)]{0,30}\)[^.;]{0,20}?\b(?:increas\w*|grow\w*|grew|climb\w*|ris\w*|rose|fill\w*|spik\w*)|"
             # a process's resident set is host memory
             r"\b(?:resident (?:set|memory)|rss)\b[^.;]{0,30}\b(?:grows?|climbs?|increas\w*|rises?|reach\w*|\d)|"
             r"\b(?:near|at|hit\w*|reach\w*|over|above|exceed\w*|past) (?:the |my |its )?(?:machine'?s? |node'?s? )?(?:system|host|cpu|main) (?:memory|ram) (?:limit|capacity|ceiling)|machine (?:freezes|hangs|becomes unresponsive)|(?:gpu|vram) (?:memory )?(?:is|looks|stays) (?:fine|ok|low)")
# The card full in nvidia-smi while PyTorch's own figures are small: memory outside PyTorch.
_OUTSIDE_PYTORCH = (r"(?:pytorch|torch|memory_allocated|memory_reserved|allocated)[^.;]{0,50}\b(?:small|low|only|little|tiny)\b"
                    r"[^.;]{0,60}nvidia-smi|nvidia-smi[^.;]{0,40}\b(?:full|much more|far more|almost all)\b[^.;]{0,60}"
                    r"(?:pytorch|torch|allocated|reserved)")
# The OOM appears only when compiling (torch.compile's graphs, CUDA graphs' pools, recompilations).
# The failing clause names the data pipeline's own work (augmentations, transforms, decoding,
# collation): CPU work in the loader's processes, whose memory is the host's.
_DATA_PIPELINE_FAILS = (r"\b(?:augment\w*|transforms?|pre-?processing|collat\w*|data ?loading|image decoding|"
                        r"random (?:crop|flip|resiz\w*|rotat\w*|scal\w*)\w*|mosaic|mixup)\b")
# Hugging Face datasets' loading and map workers: data preparation in host processes, no GPU in it.
_HOST_DATA_JOB = r"\bload_dataset\(|\b\w*(?:dataset|ds)\w*\.map\(|\bnum_proc\b|\bsave_to_disk\("
_XLA_SWITCH = r"(?:xla|jit_compile(?:\s?=\s?true)?|--?use[_-]xla|--?xla|tf\.function\(jit_compile\s?=\s?true\))"
_ONLY_COMPILED = (r"(?:only|just) (?:happens |occurs |fails |ooms? )?(?:with|when (?:using|enabling|i use)) (?:torch\.)?compile|"
                  # TensorFlow's compiler switched on: "enabling XLA causes a memory error", "it OOMs once I
                  # turn on jit_compile", "without --use_xla it trains fine"
                  rf"\b(?:enabl\w*|turn\w* on|switch\w* on|activat\w*|adding) (?:the )?{_XLA_SWITCH}(?![\w-])[^.;]{{0,40}}?"
                  r"\b(?:causes?|caused|gives?|gave|leads? to|led to|results? in|triggers?|ooms?|fails?|out of memory|memory errors?|crash\w*)|"
                  rf"\b(?:ooms?|fails?|out of memory|memory errors?|crash\w*)\b[^.;]{{0,40}}?\b(?:when|after|once|as soon as|if) (?:i |we )?"
                  rf"(?:enabl\w*|turn\w* on|switch\w* on|us\w*|add\w*|pass\w*|set\w*) (?:the )?{_XLA_SWITCH}(?![\w-])|"
                  rf"\bwithout (?:the )?{_XLA_SWITCH}(?![\w-])[^.;]{{0,40}}?\b(?:fine|works?|fits?|runs?|trains?|ok)\b|"
                  # Memory that grows or leaks with the compiled model and not without it.
                  r"\bleak\w* (?:\w+ ){0,2}(?:with|in|from|by|when using) (?:torch\.)?compile|(?:torch\.)?compile\w*[^.;]{0,30}\bleak\w*|"
                  r"without (?:torch\.)?compil\w*[^.;]{0,40}\b(?:flat|fine|works?|fits?|stable|constant|no leak|no growth|ok)\b|"
                  r"torch\.compile[^.;]{0,60}\b(?:ooms?|fails|out of memory)\b[^.;]{0,40}\b(?:eager|without)|"
                  r"(?:in )?eager (?:mode )?(?:it )?(?:works|is fine|fits|runs)[^.;]{0,40}(?:torch\.)?compile|"
                  # the compile modes that record CUDA graphs, named beside the growth or the failure
                  r"\b(?:reduce-overhead|max-autotune|cuda ?graphs?)\b[^.;]{0,60}\b(?:leak\w*|ooms?|out of memory|grows?|growing|increas\w*)\b|"
                  r"\b(?:leak\w*|ooms?|out of memory)\b[^.;]{0,40}\b(?:with|in|when using) (?:the )?(?:reduce-overhead|max-autotune|cuda ?graphs?)\b")
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
              r"(?:stor|keep|append|accumulat|sum|collect|sav|log)\w* (?:the |all |every |each )?(?:\w+ )?\w*loss(?:es)?\b(?!\.item| ?values)|"
              r"\b(?:running|total|epoch|cumulative|summed|train)[_ ]loss\b[^.;]{0,20}\b(?:sums?|adds?(?: up)?|accumulat\w*|collects?|keeps?)\b[^.;]{0,30}\bloss(?:es)?\b(?!\.item)|"
              # Any tensor summed across a loop while it requires grad keeps every iteration's graph.
              r"\b\w+ ?\+= ?\w+\b(?!\.item)[^\n]{0,200}requires_grad(?: is| =|=)? ?(?:on|true)|requires_grad(?: is| =|=)? ?(?:on|true)[^\n]{0,200}\b\w+ ?\+= ?\w+\b(?!\.item)|"
              # said in words: "x keeps its gradient and is accumulated into y every step"
              # ("with gradient accumulation" names the training technique, not a tensor that keeps its graph)
              r"\b(?:keeps?|kept|has|have|with|carr\w*|still requir\w*) (?:its |their |the )?(?:grad(?:ient)?s?|autograd history|(?:computation(?:al)? )?graph|grad_fn)\b(?![ _]accumulat)"
              r"[^.;]{0,40}?\b(?:accumulat\w*|summ\w*|sums?|add(?:s|ed|ing)?|append\w*|collect\w*)\b|"
              r"\b(?:accumulat\w*|summ\w*|sums?|add(?:s|ed|ing)?|append\w*|collect\w*)\b[^.;]{0,60}?\b(?:still )?(?:keeps?|has|have|requires?|carr\w*) "
              r"(?:its |their |a |the )?(?:(?:computation(?:al)? )?graph|grad(?:ient)?s?|grad_fn|autograd history)\b(?! (?:disabled|off))")
# Outputs kept across steps: predictions, logits, features collected in a container.
_OUTPUTS_KEPT = (# "the outputs of the model and the labels are added to a list and thus remain in GPU memory"
                 r"\b(?:predictions|preds|outputs|logits|results|embeddings|features)\b[^.;]{0,60}?\b(?:are|is|get|gets|got|were|was) "
                 r"(?:all )?(?:added|appended|put|pushed) (?:to|into|onto) (?:a |the |one )?(?:python )?(?:list|dict\w*|buffer|array|deque)\b|"
                 r"\b(?:predictions|preds|outputs|logits|results|embeddings|features)\b[^.;]{0,80}?\b(?:remain|remains|stay|stays|sit|sits|are kept|is kept) "
                 r"(?:in|on) (?:the )?(?:gpu|cuda|device)(?: memory)?\b|"
                 # passive: "the outputs of every validation step seem to be cached by the trainer"
                 r"\b(?:predictions|preds|outputs|logits|results|embeddings|features|activations)\b(?: of (?:every|each|all) (?:the )?[\w ]{1,30}?)?"
                 # ("the teacher's outputs were saved to disk" keeps nothing on the GPU)
                 r"[^.;]{0,40}?\b(?:are|is|get|gets|got|seem to be|seems to be|were|was|being|stay|stays) (?:all )?(?:cached|stored|kept|accumulated|collected|retained|appended|saved)\b"
                 r"(?! (?:\w+ )?(?:to|on|in|into) (?:the |a |my )?(?:disk|disc|files?|ssd|hdd|drive|storage|npy|csv|json)\b)|"
                 r"(?:keep|store|append|collect|cache|sav|accumulat|gather)\w* (?:all |the |every |each |my )?(?:[\w']+ )?"
                 r"(?:predictions|preds|outputs|logits|tensors|embeddings|features|results|activations|images|masks|"
                 r"hidden[ _]states|states|attention maps|maps|scores|probabilities|probs|latents)\b"
                 # (a method call's dot is no sentence end: "with scores.cpu() in a list")
                 r"(?:[^.;]|\.(?=\w)){0,40}(?:\b(?:list|dict|array|cache|pool|buffer|history|queue|on the gpu|in memory)\b|\bself\.\w+)|"
                 # "the images accumulate on the GPU", "outputs pile up in GPU memory"
                 r"\b(?:images|tensors|data|datasets?|features|outputs|frames|batches|embeddings|predictions|results|activations|gradients)\b "
                 r"(?:keep |seem to |are |is |get |gets |are getting |is getting |are being |is being )?"
                 r"(?:accumulat\w*|pil(?:e|es|ed|ing) up|build(?:s|ing)? up|stack(?:s|ing)? up) (?:on|in) (?:the )?(?:gpu|vram|device|cuda)\b|"
                 # a hook or loop appending the output itself: "the hook does self.activations.append(output)"
                 r"\.append\((?:self\.)?\w*(?:output|out|activation|grad|feature|pred|logit|hidden)\w*\)|"
                 # "I can't get the results of S1D(x) to leave the GPU"
                 r"\b(?:can't|cannot|can not|couldn't|could not|unable to) (?:get|make|force) (?:the |my |its )?(?:results|outputs|predictions|tensors|activations|features)\b"
                 r"(?:[^.;]|\.(?=\w)){0,40}?\bto (?:leave|get off|come off|move off) (?:the )?(?:gpu|device|card|vram)\b|"
                 # "the image pool that keeps 50 generated images", "a replay buffer holding the last outputs"
                 r"\b(?:pool|buffer|history|queue|cache)\b[^.;]{0,30}?\b(?:keeps?|holds?|stores?|collects?)\b[^.;]{0,20}?"
                 r"(?:images|outputs|tensors|samples|features|predictions|logits|states|trajectories|transitions|experiences|episodes|rollouts)\b|"
                 # "the fake-image pool of 50 images gets filled", "a buffer of outputs is appended to"
                 r"\b(?:[\w-]{1,40} )?(?:pool|buffer|history|queue)\b (?:of|with) (?:\d+ |the |all |every )?(?:[\w-]{1,40} )?"
                 r"(?:images|outputs|tensors|samples|features|predictions|logits|states)\b[^.;]{0,30}?\b(?:fill\w*|filled|append\w*|push\w*|grow\w*|updat\w*)\b|"
                 # outputs moved off the GPU only once, at the end: "converts to numpy only once for the final
                 # result", "they are moved to the CPU only after the last batch"
                 r"\b(?:to numpy|to the cpu|to cpu|to the host|\.cpu\(\)|to_np|\.numpy\(\))[^.;]{0,30}?\bonly (?:once|at the (?:very )?end|after the last (?:batch|step)|for the final (?:result|output)s?)\b|"
                 r"\bonly (?:once|at the (?:very )?end)\b[^.;]{0,30}?\b(?:to numpy|to the cpu|to cpu|\.cpu\(\)|to_np)\b|"
                 # Loops that gather every batch's outputs for the end: Lightning's *_epoch_end hooks
                 # (up to 1.9 every step's returned dict stays on the GPU), fastai's get_preds.
                 r"\b(?:training|validation|test)_epoch_end\b|\bget_preds\b|"
                 # a result grown by concatenating each batch onto itself: "preds = torch.cat((preds, out))"
                 r"\b(\w+) ?= ?(?:torch\.|tf\.|np\.|jnp\.)?(?:cat|concat|concatenate|vstack|hstack|stack)\(\s?[(\[]\s?\1\s?,|"
                 r"\baccumulat\w* (?:(?:the|all|every|each|my) ){0,2}(?:results?|outputs?|predictions?|preds|logits|embeddings)\b[^.;]{0,40}?\b(?:torch\.cat|concatenat\w*)\b|"
                 # "sends every experience to the GPU and appends it to self.memory"
                 r"\b(?:append|push|add|stor|cach|insert)\w* (?:it|them|each one|every one|the (?:tensors?|results?|outputs?|transitions?|experiences?)) "
                 r"(?:to|in|into|on(?:to)?) (?:a |the |my |its )?(?:self\.\w+|python list|list|deque|dict\w*|buffer|replay (?:buffer|memory)|memory buffer|cache|queue)\b|"
                 # a buffer of past samples kept between steps ("a replay buffer of past trajectories",
                 # "it only fails when the memory bank is on"): whatever it keeps stays on the device
                 r"\b(?:replay (?:buffer|memory)|experience replay|memory bank|trajectory buffer)\b[^.;]{0,20}?\b(?:of|with|holding|storing|keeping|that (?:keeps|holds|stores)) "
                 r"(?:the |all )?(?:past|previous|earlier|old|older|recent|last|generated|sampled|visited)\b|"
                 r"\bonly\b[^.;]{0,30}?\b(?:when|with|if|once|after) (?:\w+ ){0,3}?(?:the |a |its |my )?"
                 r"(?:replay (?:buffer|memory)|experience replay|memory bank|trajectory buffer)\b|"
                 # an agent's experience memory kept as GPU tensors
                 r"\b(?:experiences?|transitions?|observations|rollouts?)\b(?:[^.;]|\.(?=\w)){0,40}?(?:\.cuda\(\)|\bto the gpu|\bon the gpu|\.to\(device\))"
                 r"(?:[^.;]|\.(?=\w)){0,40}?\b(?:append\w*|stor\w*|cach\w*|push\w*|memory|buffer)\b|"
                 r"\b(?:list|dict|cache|buffer|queue|deque) of (?:cached |stored |saved |gpu )?(?:\w+ )?"
                 r"(?:tensors|outputs|predictions|features|embeddings|logits|activations)\b")
# Attention named where the note says it failed, or the memory-efficient kernels it lacks.
_ATTENTION_SAID = (r"\b(?:self-|cross-)?attention\b|\battn\b|\bqk\^?t\b|without (?:flash|memory[- ]efficient|sdpa|xformers)|"
                   # an attention mask expanded to batch x heads x sequence² is the scores' twin
                   r"\b(?:causal|4-?d) masks?\b|\bexpand\w*_mask\w*|"
                   r"(?:flash[- ]?attention|xformers|sdpa) (?:is )?(?:not|n't) (?:installed|available|enabled|used)")
# A naive attention named anywhere in the note (the implementation, not only where it failed).
_NAIVE_ATTENTION = (r"(?:naive|vanilla|eager|plain|standard|manual|hand-written) attention|"
                    # a non-local block attends from every position to every other: (H x W)^2 scores
                    r"\bnon-?local (?:blocks?|modules?|layers?|attention|operations?|neural networks?)\b|attn_implementation\W{0,3}eager|"
                    # returning the attention weights needs them materialised: fused kernels never build them
                    r"output_attentions\s?=\s?(?:True|1)\b|\breturn(?:s|ing)? (?:the |all )?attention (?:weights|maps|probs|probabilities)\b|"
                    r"no[-_ ]mem(?:ory)?[-_ ]?(?:efficient[-_ ])?attention|without (?:a )?(?:memory[- ]efficient|flash|xformers|fused)\w* attention|"
                    r"\bseq(?:uence)? ?(?:x|×|by) ?seq(?:uence)?\b|quadratic (?:attention|memory)|attention (?:matrix|scores?) (?:is|are|grows?) quadratic|"
                    # a dense graph attention layer scores every pair of nodes: "the GAT layer builds every pair of nodes"
                    r"\b(?:gat|graph attention|attention)(?: \w+){0,3} (?:builds?|scores?|computes?|materiali[sz]es?|concatenates?|over|for|across) (?:all |every |each )(?:possible )?pairs? of (?:nodes|tokens|positions|points|atoms|pixels|residues)\b|"
                    r"\b(?:every|all) pairs? of (?:nodes|tokens|positions|points|atoms)\b[^.;]{0,40}\b(?:gat|graph attention|attention)\b")
# A memory-saving switch a library documents that the note says changed nothing at all.
_SWITCH_NO_EFFECT = (r"(?:enable_\w+|attention[_ ]slicing|vae[_ ]slicing|vae[_ ]tiling|(?:cpu|nvme|zero-?[123]?)[_ -]offload\w*|\boffload(?:ing)?\b|sequential[_ ]offload\w*|low_cpu_mem_usage|"
                     r"PYTORCH_MPS_HIGH_WATERMARK_RATIO|gpu[_-]memory[_-]utilization|max[_-]memory)\b(?:(?!\.\s)[^;\n]){0,80}?"
                     r"(?:makes? no difference|made no difference|(?:has|had|have) no (?:\w+ )?effect|no (?:noticeable |visible )?effect|"
                     r"(?:is|was|gets?) ignored|(?:is|was) not applied|either way|seems? to have no|(?:does ?n[o']t|did ?n[o']t|does not|did not|won't|will not) help|"
                     # "ZeRO-3 CPU offload does not work", "cpu_offload is not working"
                     r"(?:do|does|did) ?(?:n[o']t|not) (?:seem to )?work|(?:is|are|was|were) ?(?:n't|not) working|not working)|"
                     # a memory knob at any value: "whatever --tile size is given", "regardless of the chunk size"
                     r"(?:whatever|regardless of|no matter (?:what|which|how small)?) (?:the |a )?(?:\w+ ){0,2}?(?:--?tile\w*|tile[_ ]size|tiles?|tiling|chunk\w*|slic\w*)\b|"
                     r"(?:--?tile\w*|tile[_ ]size|tiling|chunk[_ ]size|slice[_ ]size)\b[^.;]{0,60}?\b(?:whatever|regardless|no matter|any (?:value|size)|even (?:with )?(?:a |an )?(?:\w+ ){0,2}of 1\b)|"
                     r"\beven (?:with )?(?:a |an )?(?:--?tile\w*|tile[_ ]size|chunk[_ ]size|slice[_ ]size) (?:of |=\s?)?1\b|"
                     # a saver that costs more than going without: "with --load-8bit it takes way more VRAM than fp16"
                     r"(?:--?load[-_]?[48]-?bit|load_in_[48]bit|\b[48]-?bit\b|\bquantiz\w*|\boffload\w*|gradient[_ ]checkpointing|attention[_ ]slicing|\blow_cpu_mem_usage)"
                     r"[^.;]{0,80}?\b(?:takes?|taking|uses?|using|needs?|consumes?|took|used|needed|requires?) (?:way |much |even |a lot |far |significantly )?more "
                     r"(?:vram|memory|gpu memory|video memory)\b[^.;]{0,30}?\bthan\b")
# The saver is what broke a run that fit ("everything is fine until I add use_amp: true"): the
# user's own A/B test of the switch.
_SAVER_BROKE_FIT = (r"\b(?:fine|well|ok|okay|works?|worked|fits?|fitted) (?:\w+ ){0,3}?until (?:i|we) (?:add|enable|set|turn(?:ed)? on|switch(?:ed)? (?:on|to)|use|start(?:ed)? using|pass)\w* "
                    r"(?:the |a )?`?(?:--?)?(?:use_amp|amp|autocast|mixed[ _-]precision|fp16|bf16|half[ _-]precision|gradient[_ ]checkpointing|8-?bit|4-?bit|quantiz\w*|offload\w*)\b|"
                    # "using enable_vae_tiling instead causes an overflow of memory, and it is normal without it"
                    r"\b(?:using |with |enabling |turning on )?(?:`?\w+\.)?`?(?:enable_(?:vae_)?(?:tiling|slicing)|enable_\w*cpu_offload|gradient_checkpointing_enable|(?:vae )?til(?:ing|ed vae))\b`?(?:\(\))?"
                    r"[^.;]{0,40}?\b(?:causes?|leads? to|gives?|makes?|results? in)\b[^.;]{0,30}?\b(?:overflow|oom|out of memory|more memory)\b[^.;]{0,40}?\b(?:normal|fine|works?|fits?) without\b")
# FFTs on the GPU: cuFFT keeps a plan (with its work area) per distinct size and layout, cached.
_FFT = r"\b(?:torch|cupy|jnp|np|tf)?\.?fft\.\w+|\b[ir]?fft[n2]?\b|\bstft\b|\bcufft\w*"
# Running the garbage collector by hand said to avoid the failure ("only calling GC.gc() helps").
_COLLECTOR_HELPS = (r"\b(?:GC\.gc\(\w*\)|gc\.collect\(\))[^.;]{0,60}?\b(?:helps?|helped|fix\w*|solv\w*|avoids?|avoided|goes away|go away|"
                    r"prevents?|works?|worked|resolv\w*)|\b(?:only way|only thing|only fix)\b[^.;]{0,60}?\b(?:GC\.gc|gc\.collect)\b")
# Julia's GPU stack: arrays are freed by Julia's garbage collector, not when the last name goes.
_JULIA = r"\bjulia\b|\bcuarrays(?:\.jl)?\b|\bcuda\.jl\b|\bflux(?:\.jl)? \d|\bflux\.jl\b|\bknet\b|\blux\.jl\b|\bGC\.gc\("
# A dataset cached whole (tf.data's cache(), a loader's in-memory cache): every element kept in RAM.
_DATASET_CACHED = (r"\b(?:dataset|ds|data|train_ds|train_data)\.cache\(|\bcach(?:e|es|ed|ing) (?:the |my |a |our )?(?:whole |entire |full )?"
                   r"(?:tf\.data )?(?:data ?set|training (?:data|set)|images)\b(?! (?:on|to) (?:the )?(?:gpu|device))|--cache(?:[ =]ram)?\b|\bcache ?= ?['\"]?ram\b")
# Recomputation said to raise memory: "memory goes from 8 GB to 11 GB with remat", "gradient
# checkpointing uses more memory than without".
_SAVER_RECOMPUTE = r"(?:remat\w*|rematerial\w*|(?:gradient|activation) checkpointing|checkpoint_sequential|jax\.checkpoint)"
_SAVER_COSTS_MORE = (rf"\b{_SAVER_RECOMPUTE}\b[^.;]{{0,100}}?\b(?:increas\w*|raises?|uses? more|needs? more|takes? more|more memory|"
                     r"(?:go|goes|went|going) up\b(?!,? (?:and|then) (?:down|back))|"
                     r"(?:goes|went|grows?|grew|jumps?|jumped|rises?|rose) (?:up )?from \d[\d.]* ?\w* to \d)|"
                     rf"\b(?:goes|went|grows?|grew|jumps?|jumped|rises?|rose|increases?|increased) (?:up )?from \d[^.;]{{0,20}}? to \d[^.;]{{0,20}}? "
                     rf"(?:with|when (?:adding|using|enabling)|after adding) (?:the |an? )?(?:@?\w+\.)?{_SAVER_RECOMPUTE}")
# Operands of shapes that keep changing: under a tracing compiler each new shape is a new program.
_VARYING_SHAPES = (r"\b(?:varying|various|different|changing|variable|new|many distinct|distinct) (?:input |operand |array |tensor )?shapes?\b|"
                   r"\bshapes? (?:that )?(?:vary|varies|change|changes|keep changing)\b|\bretrac(?:e|es|ed|ing)\b")
_TRACING_COMPILER = r"\bjax\b|\bjnp\b|\bjit(?:ted|ting|-compiled)?\b|@jit\b|\bxla\b|tf\.function|@tf\.function|\bretrac(?:e|es|ed|ing)\b"
# A math library's handle or workspace named in the note.
_LIBRARY_SAID = (r"\bcu(?:dnn|blas\w*)\b[^.;]{0,40}\b(?:workspace|handle|alloc\w*)|CUBLAS_STATUS_ALLOC_FAILED|"
                 r"CUDNN_STATUS_(?:ALLOC_FAILED|INTERNAL_ERROR|NOT_INITIALIZED|EXECUTION_FAILED)|cudnn\w* workspace")
# The batch size raised as what made it fail ("from 8 to 32", "increasing the batch size").
# ("memory keeps increasing batch after batch" is memory growing, not a larger batch)
_BATCH_RAISED = (r"(?:increas|rais|doubl|bump|go)\w* (?:up )?(?:the |my )?(?!from |down |back )(?:\w+ )?batch(?:[ _-]?size)?\b(?! (?:after|by|to|per) (?:the next )?batch\b)|"
                 r"batch(?:[ _-]?size)? (?:of |=\s?)?\d+,? (?:it |this |training |the (?:model|script|run) )?(?:works?|worked|fits?|fitted|is fine|is ok|runs?|ran|trains?|trained|succeeds?|passes)[^.;]{0,30}\b(?:but|while|and)\b[^.;]{0,20}\d+|"
                 r"works? (?:fine )?(?:with|at) (?:a )?batch(?:[ _-]?size)?\s?(?:of |=\s?)?\d+ but|"
                 r"(?:bigger|larger|higher) (?:mini-?)?batch(?:es| sizes?)?\b|above a (?:mini-?)?batch|"
                 r"\d+ (?:\w+ )?per (?:mini-?)?batch\b[^.;]{0,40}\b\d+ (?:\w+ )?per (?:mini-?)?batch")
# The input made larger as what made it fail ("when I tried to increase the size of the image", "doubling
# the resolution", "a larger image size"): each activation grows with it.
_INPUT_RAISED = (# one input made longer: "when I increase my example.txt size from one to a few sentences",
                 # "going from a 10-second clip to two minutes"
                 r"\b(?:increas|rais|grow|extend|lengthen|go|going|went)\w* (?:the |my |our )?(?:[\w.-]+ )?(?:size |length )?from (?:one|a single|a|an|\d+)[- ]?(?:\w+ )?"
                 r"to (?:a few|several|many|multiple|two|three|\d+)[- ]?(?:\w+ )?(?:sentences?|words?|tokens?|lines?|paragraphs?|pages?|seconds?|minutes?|frames?)\b|"
                 r"\b(?:increas|rais|doubl|bump|enlarg|upscal)\w* (?:the |my |our )?(?:\w+ )?(?:size|resolution|dimensions?|side|length) of (?:the |my |our |each |every )?"
                 r"(?:images?|pictures?|photos?|inputs?|frames?|crops?|patch(?:es)?|renders?|outputs?|sequences?|videos?)\b|"
                 r"\b(?:increas|rais|doubl|bump|enlarg)\w* (?:the |my |our )?(?:image|input|crop|patch|render|output|training|default) ?(?:size|resolution|length|side)s?\b|"
                 r"\b(?:larger|bigger|higher) (?:image|input|crop|patch|output|render) ?(?:sizes?|resolutions?)\b|"
                 # a larger input object swapped in: "after switching to the new, larger template mesh",
                 # "moving to higher-resolution scans" (a larger data set is more items, not a larger item)
                 r"\b(?:switch\w*|mov(?:e|es|ed|ing)|chang\w*|go(?:es|ing)?|went) (?:over )?to (?:the |a |an |our )?(?:new,? )?"
                 r"(?:larger|bigger|denser|finer|longer|higher[- ]resolution|high[- ]res(?:olution)?)\b,? (?:[\w-]+,? ){0,3}?"
                 r"(?:mesh(?:es)?|templates?|images?|pictures?|photos?|grids?|volumes?|scans?|point ?clouds?|inputs?|crops?|patch(?:es)?|"
                 r"frames?|videos?|sequences?|clips?|graphs?|molecules?|resolutions?)\b")
# The failure falls on one input longer than the rest ("it happens exactly after the 1079-token sample;
# all other samples are <= 650", "it crashes on the longest sequence", "whenever a very long document
# comes in it OOMs"): activations are sized by that input, not by anything that accumulates.
_ITEM_NOUN = r"(?:samples?|sequences?|examples?|inputs?|documents?|sentences?|utterances?|records?|prompts?|texts?|images?|audio files?|clips?)"
# one input, not a kind of input ("fails on long utterances" says what is long, not which one came)
_ITEM_ONE = r"(?:sample|sequence|example|input|document|sentence|utterance|record|prompt|text|image|audio file|clip)(?!s)"
_LONGER_ITEM_AT_FAILURE = (rf"\b(?:fails?|failed|crash\w*|happens?|happened|occurs?|occurred|ooms?|oomed|dies|died|runs? out|ran out|breaks?|broke)\b[^.;]{{0,40}}?"
                           rf"\b(?:on|at|with|after|when it (?:hits|reaches|gets to))\b (?:exactly |right |just |precisely )?(?:the |a |an |one )?"
                           rf"(?:very |extra |unusually |particularly |really |exceptionally )?(?:longest|longer|long|largest|biggest|\d+[- ]?(?:tokens?|words?|characters?|chars?|frames?)(?:[- ]long)?) "
                           rf"(?:\w+ )?{_ITEM_ONE}\b|"
                           rf"\ball (?:the )?other {_ITEM_NOUN} (?:are|were|have been|had been|stay(?:ed)?|being) (?:<=|≤|<|under|below|shorter|smaller|at most|less than|up to|no (?:longer|larger) than)|"
                           rf"\b(?:whenever|when|once|as soon as|every time) (?:a |an |the |one )?(?:very |extra |unusually |particularly |really |exceptionally )?"
                           rf"(?:long|longer|longest|large|larger|big|bigger|huge) (?:\w+ )?{_ITEM_ONE}\b (?:\w+ ){{0,3}}?"
                           r"(?:comes?|came|appears?|appeared|shows? up|showed up|arrives?|arrived|occurs?|occurred|is (?:reached|encountered|processed|fed|sampled|drawn)|gets? (?:sampled|fed|processed|drawn))")
# A remedy that helped for some inputs and not the longer ones: "it worked for some files, but some
# longer files still fail", "fine for short prompts, the longer ones still OOM".
_REMEDY_ITEM = rf"(?:{_ITEM_NOUN}|files?|recordings?|videos?|audios?|songs?|tracks?|pages?)"
_LONGER_ITEM_AT_FAILURE += (rf"|\b(?:works?|worked|fits?|fitted|helps?|helped|is fine|was fine|runs?|ran)\b (?:\w+ )?(?:for|on|with) (?:(?:some|most|many|the|all the) )?(?:(?:short(?:er)?|small(?:er)?|other) )?{_REMEDY_ITEM}\b"
                            rf"[^.;]{{0,30}}?\b(?:but|while|yet|whereas)\b (?:\w+ )?(?:some |the |a few |my )?(?:very |much )?(?:longer|longest|larger|largest|bigger|biggest|long) (?:ones|{_REMEDY_ITEM})\b"
                            r"[^.;]{0,20}?\b(?:still )?(?:fail\w*|crash\w*|oom\w*|runs? out|ran out|die\w*|break\w*)")
# Memory said to stay level ("memory consumption is constant in general", "the usage stays flat").
_MEMORY_SAID_FLAT = (r"\b(?:memory|usage|vram|consumption|footprint)(?: (?:usage|consumption|use))? (?:is|was|stays|stayed|remains|remained|keeps|kept|looks|seems) "
                     r"(?:\w+ )?(?:constant|stable|flat|steady|level|the same|unchanged)\b"
                     # ("constant while training, but in validation it runs out": level in one phase only)
                     r"(?!,? (?:while|during|in|when|for|at|through) (?:the |my |its )?(?:train|validat|eval|test|infer|generat|predict|first|warm))")
# The note asks whether smaller inputs would do ("should I use smaller resized pictures?"): the user's
# inputs are large enough that they suspect them.
_ASKS_SMALLER_INPUT = (r"\b(?:should|could|can|do|would|must) (?:i|we) (?:use|try|feed|pass|give it|resize (?:to|into)?) (?:a |the |some )?"
                       r"(?:smaller|lower|reduced|shorter)(?:[- ]resolution| resized| sized?)? (?:resized )?(?:\w+ )?(?:pictures?|images?|inputs?|photos?|frames?|resolutions?|crops?|clips?)\b|"
                       # a way asked for beside the one known to work: "other than reducing the image size?"
                       r"\b(?:other than|besides|apart from|except|instead of|without) (?:by )?(?:reducing|lowering|decreasing|shrinking|downscaling|downsampling|resizing|cutting) "
                       r"(?:the |my |our )?(?:image |input |frame |video |picture |photo |sequence |context )?(?:size|resolution|dimensions?|length|images?|inputs?|frames?)\b")
# Gradients left on where nothing is trained: what the note says about requires_grad and no_grad.
_GRAD_LEFT_ON = (r"requires_grad(?: is| =|=)? ?(?:on|true|enabled)|grad(?:ients?)? (?:are |is )?(?:still )?(?:on|enabled)\b|"
                 r"keeps? (?:a|the) (?:computation(?:al)? |autograd )?graph|never (?:wrapped|used|put) (?:it |them )?(?:in|under) (?:torch\.)?no_grad|"
                 r"without (?:torch\.)?(?:no_grad|inference_mode)|forgot (?:to use |the )?(?:torch\.)?no_grad|no no_grad")
# The output layer named where the note says it failed: logits, the LM head, the loss over classes.
_LOGITS_SAID = (r"\blogits?\b|\blm[_ ]head\b|cross[- _]?entropy|\blog[_ ]?softmax\b|\boutput (?:layer|projection|embedding|softmax)|"
                r"(?:huge|large|big|enormous) (?:vocab\w*|number of (?:classes|labels|tokens))|"
                r"softmax over (?:the )?(?:vocab\w*|classes|labels|tokens)")
# A transducer (RNN-T) model: its joint network scores every (frame, label position) pair.
_TRANSDUCER = r"\brnn-?t\b|\brnnt\w*|\btransducers?\b|\bjoiner\b|\bjoint (?:network|layer|net)\b"
# A vocabulary or class count said to be large, in either word order, anywhere in the note.
_LARGE_VOCAB_SAID = (r"\b(?:very |extremely |really |quite |too |so )?(?:huge|large|big|enormous|massive|giant) (?:target |output |source |word |token )?"
                     r"(?:vocab\w*|number of (?:classes|labels|categories|output tokens)|label space|output (?:layer|space))|"
                     r"\b(?:vocab\w*|number of (?:classes|labels|categories))\b(?: size)? (?:is |are |was |gets |being )?(?:very |extremely |really |quite |too |so )?"
                     r"(?:huge|large|big|enormous|massive)\b")
# More GPUs that did not lower the memory each one needs: every GPU holds a full replica.
# Tensor parallelism over more than one card ("tensor_parallel_size=4", "-tp 2", "with tensor parallel on 4 GPUs").
_TENSOR_PARALLEL_SPLIT = (r"\btensor[-_ ]parallel(?:ism)?(?:[-_ ]size)?\b(?!\s?[=: ]\s?1\b)|(?<![\w-])(?:-tp|--tp|tp_size\s?=)\s?[2-9]\b")
# ("4 GPUs, and lowering gpu_memory_utilization didn't help": another setting is what did not help)
_MORE_GPUS_NO_HELP = (r"(?:more|additional|extra|adding|\d+|two|four|eight) (?:\w+ )?(?:gpus?|cards|devices)\b"
                      r"(?:(?!\b(?:and|but|setting|changing|modifying|lowering|raising|increasing|decreasing|reducing|tuning|adjusting|playing)\b)[^.;]){0,40}"
                      r"(?:did ?n[o']t|does ?n[o']t|didn't|doesn't|not|never) (?:help|reduce|lower|change|fix|matter|make a difference)|"
                      r"(?:same|still|also) (?:\w+ ){0,4}(?:oom|error|out of memory|fails?)[^.;]{0,20} (?:with|on|across) "
                      r"(?:\d+|two|four|eight|more|multiple|several) (?:\w+ )?(?:gpus|cards|devices)|"
                      r"(?:memory|usage) (?:per|on each|of each) (?:gpu|card|device) (?:is |stays |remains )?(?:the same|unchanged|identical)|"
                      r"each (?:gpu|card|device|rank) (?:\w+ ){0,3}(?:full|whole|entire|complete) (?:copy|model|replica)|"
                      r"(?:each|every) (?:one|gpu|card|device|rank)\b[^.;]{0,30}\b(?:needs|uses|takes|holds) the same (?:memory|amount)|"
                      r"each (?:one |gpu |rank )?still (?:holds|keeps|has) the (?:full|whole|entire|complete) (?:model|copy|replica)")
# The cache growing while live tensors do not: the allocator keeps carving new blocks.
_RESERVED_GROWS = (r"allocated(?:\(\))?(?: memory)? (?:is|stays|remains|looks) (?:flat|constant|stable|the same|unchanged|steady|put)|"
                   # ("reserved grows by 138 MiB per cycle (220, 2,980 ... 14,060 MiB) while allocated stays between
                   # 66 and 306 MiB": an ellipsis inside the figures is no sentence end)
                   r"(?:reserved|cached)(?: memory)?[^.;]{0,40}\b(?:grows?|growing|increas\w*|rises?|rising|climbs?|going up|goes up|(?:goes|went) (?:from )?(?=\d))(?:[^.;]|\.(?!\s[A-Z])){0,100}"
                   r"allocated[^.;]{0,30}\b(?:stable|constant|flat|the same|steady|unchanged|does not|doesn't|stays put|stays? (?:between|within|around|under|below))|"
                   r"allocated[^.;]{0,30}\b(?:stable|constant|flat|the same|steady|unchanged)\b[^.;]{0,60}(?:reserved|cached)"
                   r"[^.;]{0,30}\b(?:grows?|growing|increas\w*|rises?|climbs?)")
# One GPU (the first, rank 0) holding more than the others in a multi-GPU run.
_ZEROTH = (r"(?:gpu|card|device|rank|cuda:?)[- ]?#?0\b|(?:gpu|card|device|rank) zero\b|(?:first|main|master) (?:gpu|card|device|rank)\b|"
           # the number before the noun: "the 0 GPU gets more memory", "the 0th card"
           r"\bthe 0(?:th)? (?:gpu|card|device)\b")
# Another GPU chosen, yet memory lands on the first one: "despite setting device='cuda:1' the model still
# allocates on cuda:0", "I can't set the gpu to 1, it always uses gpu 0", "GPU 0 resources still get used
# for the GPU 1 job".
_CHOSE_OTHER_GPU = (r"(?:device\s?=\s?[\"']?cuda:[1-9]|\bcuda:[1-9]|\bgpu ?[1-9]\b|--gpus? [\"']?[1-9],?[\"']?|\bdevice(?:_id|[_ ]index)?\s?[=:]?\s?[\"']?[1-9]\b|"
                    r"set_device\([1-9]\)|kCUDA, ?[1-9])")
_GPU0_USED_INSTEAD = (rf"{_CHOSE_OTHER_GPU}[^.;]{{0,80}}?\b(?:still|but|yet|always|however|nevertheless)\b[^.;]{{0,50}}?"
                      rf"\b(?:uses?|used|using|allocates?|allocated|allocating|goes? to|went to|lands? on|runs? on|puts? it on|loads? (?:it )?(?:on|to|onto))\b[^.;]{{0,25}}?(?:{_ZEROTH})|"
                      rf"\b(?:it|the model|memory|everything|pytorch|torch) (?:\w+ )?(?:always|still) (?:uses?|allocates?(?: memory)? on|goes to|runs? on|lands? on) (?:{_ZEROTH})|"
                      rf"(?:{_ZEROTH})[^.;]{{0,30}}?\b(?:resources|memory)\b[^.;]{{0,20}}?\b(?:still |also )?(?:get|gets|got|are|is|were|was) used for the (?:gpu ?[1-9]|cuda:[1-9]|second gpu|other gpu)")
_HEAVIER = (r"\b(?:more|most|higher|larger|extra|a lot|lots|much|heavier|all (?:the )?(?:gpu |vram |video )?memory|"
            r"occupied|fills? up|full)\b(?! (?:of )?(?:the )?(?:system|host|cpu|main) (?:memory|ram)\b)")  # rank 0's host RAM is no GPU imbalance
_RANK0_HEAVY = (rf"(?:{_ZEROTH})[^.;]{{0,60}}?{_HEAVIER}|{_HEAVIER}[^.;]{{0,40}}?\b(?:on|by|in|of) (?:the )?(?:{_ZEROTH})|"
                rf"(?:several|multiple|many|\d+|extra|other) (?:\w+ )?processes (?:\w+ ){{0,2}}on (?:the )?(?:{_ZEROTH})|"
                r"(?:only|just) (?:on )?(?:the )?(?:first gpu|gpu ?0|rank ?0|device ?0|cuda:0)|"
                # "the memory is only used on the first GPU"
                r"(?:only|just) (?:\w+ ){1,2}(?:on|in|by) (?:the )?(?:first gpu|gpu ?0|rank ?0|device ?0|cuda:0)\b|"
                r"(?:every|each|all)(?: the)? (?:\w+ )?(?:ranks?|process(?:es)?|workers?)\b[^.;]{0,50}(?:cuda:0|gpu ?0|the same gpu|the first gpu|one gpu)|"
                r"\b(?:unbalanced|imbalanced|imbalance|uneven\w*|unequal\w*)\b|other gpus? (?:\w+ ){0,4}(?:less|only|barely|half|far below)|"
                # "GPU 0 runs out while the other GPUs are not full", "... the rest still have free memory"
                r"\b(?:the )?(?:other|remaining|rest of the) (?:\d+ |seven |three )?(?:gpus|cards|devices)\b[^.;]{0,30}?\b(?:are not|aren't|were not|weren't|never|not|nowhere near) (?:\w+ )?(?:full|filled)\b|"
                r"\b(?:the )?(?:other|remaining|rest of the) (?:\d+ )?(?:gpus|cards|devices)\b[^.;]{0,30}?\b(?:have|had|still have|with) (?:plenty of |lots of |a lot of |enough )?(?:free|spare|unused) (?:memory|room|vram|space)\b|"
                # "GPU 1 stays empty", "the second card sits idle"
                r"\b(?:gpu ?#?[1-9]|cuda:[1-9]|the other (?:gpus?|cards?)|the second (?:gpu|card))\b[^.;]{0,12}?\b(?:stays?|is|remains?|are|sits?|looks?) (?:almost |nearly |completely )?(?:empty|idle|unused)\b")
# The job's other ranks showing up on the first GPU (a process of each, or memory "from each of the
# other processes"): each made a CUDA context or placed tensors on cuda:0 before (or without)
# choosing its own device.
_FEW = r"(?:\d+|two|three|four|five|six|seven|eight|nine|ten|fifteen|several|multiple|many|extra|additional|other|the other)"
_RANKS_ON_GPU0 = (rf"\b{_FEW} (?:\w+ ){{0,2}}process(?:es)? (?:\w+ ){{0,3}}on (?:the )?(?:{_ZEROTH})|"
                  # "GPU0 carries 7 extra processes", "GPU 0 shows the other seven processes"
                  rf"(?:{_ZEROTH})[^.;]{{0,30}}?\b(?:carries|carried|has|had|hosts|holds|shows|showed|gets|lists)\b[^.;]{{0,15}}?\b{_FEW} (?:\w+ )?process(?:es)?\b|"
                  rf"\bprocess(?:es)? (?:of|for|from) (?:the )?(?:other )?(?:gpus?|ranks?|cards?)\b[^.;]{{0,50}}?\bon (?:the )?(?:{_ZEROTH})|"
                  rf"(?:{_ZEROTH})[^.;]{{0,60}}?\bfrom (?:each|every one|all) of the (?:other )?(?:\d+ )?(?:processes|ranks|workers)\b|"
                  # "GPU 0 holds memory of every rank", "the first card has memory from all of them"
                  rf"(?:{_ZEROTH})[^.;]{{0,30}}?\b(?:holds?|held|has|had|shows?|gets?|got|carries) (?:\w+ )?memory (?:of|from|for) (?:each|every|all)\b|"
                  rf"\b(?:each|every) (?:other )?(?:rank|process|worker)\b[^.;]{{0,50}}?\b(?:context|memory)\b[^.;]{{0,20}}?\bon (?:the )?(?:{_ZEROTH})|"
                  # "GPU 0 is always used in initialization even when it is not one of the GPUs I chose"
                  rf"(?:{_ZEROTH})[^.;]{{0,30}}?\b(?:is |gets |got |was )?(?:always |still |also )?(?:used|touched|initiali[sz]ed|allocated on|occupied)\b[^.;]{{0,50}}?"
                  rf"\b(?:even (?:when|if|though)|although|though|despite)\b[^.;]{{0,50}}?\b(?:not (?:one of|among|in|part of)|(?:not|never|n't) (?:\w+ )?(?:specified|selected|chosen|requested|listed|set|asked for|passed))")
# Each process of a multi-GPU launch putting the weights or tensors themselves on the first GPU ("all
# tensors are sent to cuda:0 first", "every rank loads the model onto GPU 0", "why are all the weights
# loaded to cuda0?"): code that moves the model to the default device before choosing its own. (A
# checkpoint each rank restores onto cuda:0 is torch.load's map_location: _RANKS_ON_GPU0's rule.)
_GPU0_TARGET = r"(?:the )?(?:cuda ?:? ?0|gpu ?#?0|device ?0|first (?:gpu|card|device))\b"
_WEIGHTS_NOUN = r"(?:tensors?|weights|parameters|params|models?|data|inputs)"
_PLACED_VERB = r"(?:sent|loaded|put|placed|moved|copied|allocated|created|pushed|materiali[sz]ed|initiali[sz]ed|transferred)"
_PLACED_ON_GPU0 = (rf"\ball (?:of )?(?:the |my |our )?(?:\w+ )?{_WEIGHTS_NOUN}\b (?:\w+ )?(?:be|are|were|get|gets|got|is|was|being|getting) (?:first |all |always )?"
                   rf"{_PLACED_VERB} (?:first )?(?:to|on|onto|into|in) {_GPU0_TARGET}|"
                   rf"\b(?:every|each) (?:rank|process|worker|gpu process)\b[^.;]{{0,30}}?\b(?:loads?|puts?|sends?|moves?|places?|creates?|copies|allocates?) "
                   rf"(?:its |the |a |their )?(?:own )?(?:\w+ )?{_WEIGHTS_NOUN}\b (?:\w+ )?(?:on|to|onto|into) {_GPU0_TARGET}|"
                   rf"\bwhy (?:are |is |do |does |would )?(?:all (?:of )?)?(?:the |my )?{_WEIGHTS_NOUN}\b (?:be |get |being )?{_PLACED_VERB} (?:first )?(?:to|on|onto|into) {_GPU0_TARGET}")
# A model dispatched across GPUs (device_map="auto") and then moved whole to one device: `.cuda()` or
# `.to("cuda")` after from_pretrained(..., device_map=...) gathers every layer back onto cuda:0.
_DISPATCH_UNDONE = (r"device_map\s?=\s?[^\n]{0,120}?\)\s?\.(?:cuda|to)\(|"
                    r"\bdevice_map\b[^.;\n]{0,60}?\b(?:and|then|followed by|plus)\b (?:then |also |afterwards )?(?:call\w* |add\w* |us\w* )?(?:a |an )?\.?(?:cuda|to)\(")
# Saved weights restored onto the GPU they were saved from instead of the one chosen ("the code loads
# the pretrained weight mapped at gpu index:0", "it should be mapped to 'cpu' first", "torch.load without
# map_location puts it on cuda:0").
_RESTORED_ONTO_SAVED_GPU = (r"\b(?:mapped|maps?|loaded|loads|restored|restores|put|puts|placed|lands?|landed|goes|went) (?:\w+ ){0,2}(?:at|to|onto|on|in) "
                            r"(?:the )?(?:global )?(?:gpu|cuda|device)(?: index)? ?:? ?0\b|"
                            r"\b(?:without|no|missing|forgot(?: to (?:pass|set|use))?|not (?:passing|setting|using)) (?:a |the )?map_location\b|"
                            r"\b(?:should|must|needs? to|ought to|has to) (?:\w+ )?(?:be )?(?:mapped|loaded|restored) (?:to|on|onto|into) (?:the )?['\"]?cpu\b")
# Programs started apart, each given its own GPU ("7 training scripts, each on a specific gpu",
# "independent runs with different seeds, one per card"): not one job's ranks, so what each leaves on
# the first GPU is its own CUDA context or tensors made before it chose its device.
_SEPARATE_PROGRAMS = (r"\b(?:\d+|two|three|four|five|six|seven|eight|several|multiple|many) (?:separate |independent |different )?(?:training |python )?"
                      r"(?:scripts?|programs?|runs|jobs|experiments|trainings|instances)\b[^\n]{0,100}?\b(?:each|every one|one per|per)\b[^\n]{0,60}?"
                      r"\b(?:gpus?|cards?|devices?|cuda:\{?\w+\}?)|"
                      r"\b(?:independent|separate) (?:training )?(?:runs|processes|trainings|jobs|scripts|programs)\b[^.]{0,60}?\b(?:own|specific|different|separate|one) (?:gpu|card|device)s?\b")
# The note wants a GPU other than the one that ran out ("what I want is to use my GPU 1", "how do I
# run it on the second card", "it picks the Intel one instead of the NVIDIA", "net.cuda() should be
# net.cuda(cfg.gpu)"): the program never chose its device, so it went to the default one.
_OTHER_GPU = r"(?:gpu|card|device|cuda:?) ?#?[1-9]\b|(?:second|other|dedicated|discrete|nvidia|2nd) (?:\w+ )?(?:gpu|card|graphics|device)\b"
_OTHER_GPU_WANTED = (rf"\b(?:want|wanted|wants|would like|'d like|need|needs|needed|trying|tried|try|intend|intended|meant|mean)(?: is| was)? to "
                     rf"(?:use|run (?:it |this |the \w+ |my \w+ )?on|train (?:it )?on|select|choose|pick|switch to|work (?:with|on)) (?:my |the |a )?(?:{_OTHER_GPU})|"
                     rf"\bhow (?:do i |can i |could i |would i |should i |to )(?:use|run (?:it |this )?on|train on|select|choose|pick|set|switch to) (?:my |the |a )?(?:{_OTHER_GPU})|"
                     rf"\b(?:any|some) (?:way|code|option|setting|flag|argument)s? (?:\w+ ){{0,5}}?(?:to |for )?(?:use|run (?:it |this )?on|select|choose|pick|set|switch to) (?:my |the |a )?(?:{_OTHER_GPU})|"
                     rf"\b(?:uses?|used|using|runs? on|ran on|running on|picks?|picked|selects?|selected|chooses?|chose|goes to|went to|defaults? to|lands? on|landed on) "
                     rf"(?:the |my )?(?:gpu ?#?0|cuda:0|first (?:gpu|card)|intel\b(?: \w+)?|integrated (?:gpu|graphics)|onboard \w+)[^.;?]{{0,20}}?\binstead of (?:on )?(?:my |the |a )?"
                     rf"(?:{_OTHER_GPU}|gpu i (?:set|chose|selected|specified|asked for))|"
                     r"\.(?:cuda|to)\(\)\s*(?:should|must|needs? to|has to|ought to) (?:be|read|become)\b[^.;?\n]{0,40}?\.(?:cuda|to)\((?!\))")
_LOADS_SAVED_STATE = (r"\bload\w* (?:\w+ ){0,4}(?:from )?(?:a |the |its |their |my )?(?:saved )?(?:checkpoints?|state[_ ]dicts?|weights|parameters|ckpt)\b|"
                      r"\btorch\.load\b|\bresum\w*|\brestor\w*|\bpretrained weights?\b|"
                      # a run started from saved state: "training starting from a specific checkpoint",
                      # "continue from my snapshot", or a flag that names a checkpoint file
                      r"\b(?:start\w*|continu\w*|initiali[sz]\w*|init\w*|pick\w* up|warm[- ]start\w*) (?:\w+ ){0,2}from (?:a |an |the |my |our |its |this |that )?(?:\w+ ){0,2}(?:checkpoints?|ckpt|snapshots?|saved (?:model|state|weights))\b|"
                      r"--?(?:ckpt|checkpoint|resume|restore|load|init|weights)[\w-]*[= ]\S+\.(?:pt|pth|ckpt|pkl|bin|tar|safetensors)\b")
# "The memory is not allocated evenly across the GPUs": an imbalance said through its negation (read
# with a plain search: the negation is the statement).
_NOT_EVEN_ACROSS = (r"(?:\bnot|n't) (?:\w+ ){0,3}(?:evenly|equally|uniformly|balanced)\b[^.;]{0,30}\b(?:gpus|cards|devices|ranks)\b|"
                    r"\b(?:memory|usage|vram)\b[^.;]{0,20}\b(?:differs?|varies|vary|differ) (?:a lot |greatly |widely |much |very much )?(?:between|across|among) (?:the )?(?:gpus|cards|devices|ranks)\b")
# More than one GPU, said without a count: "my GPUs are TITAN Xp", "more than the others".
_SEVERAL_GPUS = (r"\b(?:my|our|the|both|all|two|several|multiple|these) (?:\w+ )?(?:gpus|cards)\b|than (?:all )?(?:the )?(?:others|other (?:gpus|cards|devices|ranks)|rest)\b|"
                 # "a lot of memory in GPU0 but much less in others", "imbalanced GPU memory": memory compared across GPUs
                 r"\b(?:less|more|fewer|lower|higher) (?:\w+ ){0,2}(?:in|on|of|by|for) (?:the |all )?(?:others|other (?:gpus|cards|devices|ranks)|rest)\b|"
                 r"\b(?:imbalanced|unbalanced|uneven|unequal) (?:gpu |vram |video )?(?:memory|vram|gpu memory)(?: usage| use)?\b")
# Many sequences decoded at once (samples, beams, returned sequences): a KV cache for each.
# Several outputs generated for each prompt (candidates to pick from, images per prompt): they go
# through the network together, so the batch is prompts x outputs per prompt.
_OUTPUTS_PER_PROMPT = (r"\b(?:several|multiple|many|a few|\d+) (?:\w+ )?(?:candidates?|samples?|images?|outputs?|variations?|versions?|generations?|clips?|waveforms?|pictures?|audios?)"
                       r" (?:per|for each|for every|of each|from each|for one|for a single) (?:\w+ )?(?:text|prompt|input|caption|description|request|query|condition)s?\b|"
                       r"\b(?:num_images_per_prompt|num_waveforms_per_prompt|n_candidates?\w*|num_samples_per_\w+|n_samples_per_\w+|samples_per_prompt)\b")
_MANY_SEQUENCES = r"num[-_ ]?(?:samples|return_sequences|beams|sequences)|beams?\b|\b\d+ (?:samples|sequences|completions)"
# A serving engine failing under traffic rather than at start-up.
# Many requests at once, not any mention of one ("before the first request is served").
_UNDER_LOAD = (r"under (?:heavy |high |real )?load|(?:many|several|multiple|parallel|more|batched|\d+) (?:\w+ )?(?:requests|prompts|users|clients)\b|"
               r"requests? (?:per second|at once|in parallel|at the same time)|concurren|traffic|scor(?:e|ing)|logprob")
# Inference that spreads one model's weights over the GPUs it names.
_SPLITS_WEIGHTS = (r"device_map|\bdevice maps?\b|tensor[ _-]?parallel\w*|--tp\b|\btp[ =_]?\d|tensor-split|--split-mode|\bsplit[_ ]mode|"
                   r"model[ _-]parallel|pipeline[ _-]parallel|--num-shard|\bllama\.cpp\b|\bollama\b|llama-cpp|\bgguf\b|accelerate|"
                   # a GGUF quantization's name ("UD-Q4_K_XL", "IQ2_M") is llama.cpp's, which splits layers over the GPUs
                   r"\b(?:UD-)?I?Q[1-8]_[0-9A-Z]")
_DATA_PARALLEL = r"(?<!Distributed)(?<!Distributed )\bDataParallel\b"
_SAVING = (r"\bsav(?:e|es|ed|ing)\b (?:the |a |my )?(?:\w+ )?(?:model|checkpoint|state|weights)|save_(?:model|pretrained|checkpoint|state)|"
           r"\b(?:saving|save|checkpointing) (?:step|stage|phase)\b|\b(?:when|while|during|at) (?:the )?(?:saving|save)\b|"
           r"\bwrit(?:e|es|ing) (?:the |a |out the )?(?:\w+ )?checkpoints?\b|\bcheckpoints? (?:gets |is |was )?(?:written|saved)\b|"
           r"(?:full_)?state_dict\(\)|consolidat\w*|gather(?:ing|ed)? (?:the )?(?:full )?(?:state|weights|parameters)|"
           # a trainer's checkpoint callback ("model checkpointing", not gradient checkpointing)
           r"\b(?:model|weights?) checkpointing\b|\bModelCheckpoint\b|\b(?:disabl|turn\w* off|remov)\w* (?:the )?(?:model )?checkpointing\b|"
           r"\bcollat\w* (?:all )?(?:of )?(?:the )?(?:parameters|weights|state)\b[^.;]{0,20}?\bon(?:to)? (?:the )?(?:rank ?0|first|one)\b")
# A program's own log line that it is saving, the last thing it printed before the failure.
_SAVE_ANNOUNCED = (r"\b(?:about to|going to|now|start(?:s|ing)? to|begin(?:s|ning)? to|will now) (?:sav(?:e|ing)|writ(?:e|ing)|export(?:ing)?)\b|"
                   r"(?m:^)\W{0,4}(?:\[[^\]]{0,40}\]\s*|\S+:\s*){0,3}(?:saving|writing|exporting) (?:the |a |model |final )?(?:\w+ ){0,2}"
                   r"(?:model|checkpoint|weights|state(?: dict)?|modules?|adapters?)\b")
_FSDP_STATE_DICT_GATHER = r"Failed to clone\(\) tensor with name [\w.]+|fsdp/_state_dict_utils\.py|_full_pre_state_dict_hook|_common_unshard_pre_state_dict_hook"
_NO_GRAD_ALREADY = (r"(?:already|is|are|runs?) (?:\w+ )?(?:under|in|with) (?:torch\.)?(?:no_grad|inference_mode)|frozen inference|"
                    # "sampling under torch.no_grad() still runs out": the remedy tried, and the failure after it
                    r"\b(?:under|inside|within|with) (?:a |the )?(?:torch\.)?(?:no_grad|inference_mode)\b(?:\(\))?[^.;?]{0,60}?\b(?:still|yet|anyway|as well)\b")
_FREE_AT_FAILURE = (r"(?:gpu|card|device|vram)(?: memory)? (?:is |was )?(?:(?:almost|nearly|mostly) )?(?:empty|free|idle|unused)|"
                    # "while 12GB of VRAM is still free", "with 30 GB of GPU memory still available"
                    r"\b\d+(?:\.\d+)? ?gi?b (?:of )?(?:the )?(?:gpu |vram|video memory|gpu memory)\w*\b[^.;]{0,12}?\b(?:is |are |was |were )?(?:still )?(?:free|available|unused|left)\b|"
                    # "about half of the GPU memory is never used", "40% of the VRAM stays free"
                    r"\b(?:half|most|much|a (?:third|quarter|lot)|\d+ ?%) of (?:the )?(?:gpu'?s? |card'?s? |device'?s? )?(?:memory|vram)\b[^.;]{0,20}?"
                    r"\b(?:unused|free|empty|available|idle|never used|not used)\b|"
                    r"(?:plenty|lots|enough) of (?:free )?(?:gpu )?memory|only (?:about |around |roughly |~ ?)?[\d.]+ ?G?B (?:is |are |was )?(?:in use|used)|"
                    # "fails although the memory is free", "even though memory is available"
                    r"\b(?:although|though|even though|while|despite) (?:the |there is |there's )?(?:gpu |device |enough |plenty of )?(?:memory|vram) (?:is |being )?(?:free|available|unused)\b|"
                    r"shows? (?:only )?(?:about |around |roughly |~ ?)?[\d.]+ ?G?B (?:in use|used)|(?:gpu|memory) (?:is |was )?otherwise idle|even though the gpu|"
                    r"should (?:easily |comfortably |still )?fit|(?:easily|comfortably) fit|fits? (?:easily|comfortably)|"
                    r"more than enough (?:gpu |free )?(?:memory|vram|room|space)|well within (?:the )?(?:gpu'?s? )?(?:memory|capacity|vram)")
_PERIODIC = r"(?:right |just )?(?:after|at) (?:iteration|step|iter|epoch)s? (?:\d*[1-9]0{2,})\b|every (?:\d*[1-9]0{2,}) (?:iterations|steps)"
_LOGPROBS = r"log ?prob\w*|log probabilit\w*|prompt_logprobs|\bscor(?:e|es|ing) (?:text|prompts?|sequences|tokens)|perplexity"
_LONG_INPUT = (# the pieces the input is cut into said to be too long: "because the chunks are too long"
               r"\b(?:chunks?|segments?|clips?|windows?|utterances?|sentences?|sequences?|sounds?|recordings?|passages?|documents?|prompts?) "
               r"(?:are|is|were|was|being|get|gets|got) (?:much |far |way )?too (?:long|large|big)\b|"
               # an image's shape written as a tuple: "my input image shape is (750, 1000)", "image size [1024, 2048, 3]"
               r"\b(?:images?|pictures?|photos?|frames?|inputs?)(?:'s)? (?:\w+ )?(?:shape|size|resolution|dimensions?) (?:is |of |are |=\s?|:\s?)?"
               r"[(\[]\s?(?:[1-9]\d?\s?,\s?)?(?:[5-9]\d{2}|\d{4,5})\s?,\s?(?:[5-9]\d{2}|\d{4,5})(?:\s?,\s?[1-4])?\s?[)\]]|"
               r"(?:(?<![\w.,])\d[\d.,]*|\b(?:one|two|three|four|five|six|ten|twenty|thirty|ninety))[- ]?(?:minutes?|min|hours?|h|seconds?|s)(?:[- ]long)? "
               r"(?:\w+ )?(?:audio|recording|file|wav|clip|video|speech|podcast|meeting|lecture|interview|track|song)|"
               # "the track is 4356 seconds long", "my recordings are about 40 minutes"
               r"\b(?:track|song|audio|recording|clip|video|file|podcast|lecture)s? (?:is|are|was|were) (?:only |just |about |around |over |nearly |~ ?)?"
               r"\d[\d.,]* ?(?:seconds?|secs?|minutes?|mins?|hours?)\b|"
               r"\blong(?:er)? (?:audios?|recordings?|files?|videos?|sequences?|inputs?|documents?|contexts?|prompts?|texts?)\b|"
               # "an audio of 8min", "a recording of 2 hours"
               r"\b(?:audios?|recordings?|audio files?|clips?|videos?|tracks?|podcasts?|lectures?) of (?:about |around |over |nearly |~ ?)?"
               r"\d+(?:\.\d+)? ?(?:min(?:ute)?s?|h(?:ours?)?|hrs?)\b|"
               # a document of tens of thousands of characters or tokens: "a text of about 360,000 characters"
               r"\b(?:documents?|texts?|docs?|articles?|books?|files?|inputs?|prompts?|transcripts?|pages?|passages?) (?:of|with|has|have|having|containing) "
               r"(?:about |around |over |nearly |almost |~ ?)?(?:\d{2,3},\d{3}(?:,\d{3})?|\d{5,}|[1-9]\d{1,2}(?:\.\d+)?k) (?:characters|chars|tokens|words)\b|"
               r"(?<![\w.,])(?:\d{2,3},\d{3}|\d{5,}|[1-9]\d{1,2}k)-(?:character|char|token|word) (?:documents?|texts?|docs?|articles?|books?|files?|inputs?|prompts?|transcripts?)\b|"
               # a video tracker keeps state for every frame it has seen: the user's own (longer) video
               # against the example's short clip is the input that grew
               r"\b(?:my own|our own|a longer|longer|custom) videos?\b|\bpropagate_in_video\b|\bvideos? (?:longer|with more frames) than\b|"
               # datasets whose images are two megapixels or more at full size: Cityscapes and GTA5 (2048x1024,
               # 1914x1052), Mapillary Vistas and DOTA/iSAID aerial tiles (up to 4000x3000 and beyond),
               # DeepGlobe (2448x2448), DIV2K's 2K images
               r"\b(?:cityscapes|mapillary(?: vistas)?|gta-?5|dota(?:-?v?1\.[05])?|isaid|deepglobe|div2k)\b|"
               # the longest item singled out: "only a few sentences exceed 150 words, the longest has 234"
               r"\bthe longest (?:one |sentence |sequence |sample |example |document |utterance |recording |text |image |prompt )?(?:has|is|was|contains|reaches|goes up to)\b|"
               r"\b(?:sequences?|samples?|inputs?|prompts?|documents?|examples?|texts?)\b[^.;]{0,20}?\b(?:longer than|exceeds?|exceeding|exceeded|beyond|over|above) (?:the )?(?:max\w*|limit|\d+)|"
               # ("beyond 5 million sentences" counts them: only a length over the limit here)
               r"\b(?:sentences?|utterances?|paragraphs?|lines?|articles?|tokens)\b[^.;]{0,40}?\b(?:longer than|exceeds?|exceeding|exceeded) (?:the )?(?:model'?s? )?(?:max\w*|limit|\d+)|"
               r"\b(?:sequences?|inputs?|prompts?|contexts?|documents?|samples?) (?:is|are|was|were|get|gets|got) (?:too|very|really|so) long\b|"
               r"\b(?:larger|bigger|high|higher|full|huge|very large|large) (?:\w+ )?(?:resolution|images?|inputs?|files?|point clouds?|scenes?|volumes?)\b|"
               # (a side of 512 or more: 256x256 is a small image today)
               # ("640x480px"; "resolutions were 4000 by 3000")
               r"\b(?:[5-9]\d{2}|\d{4,5}) ?[x×*] ?\d{3,5}(?:px|p)?\b|\b\d{3,5} ?[x×*] ?(?:[5-9]\d{2}|\d{4,5})(?:px|p)?\b|full[- ]res|"
               r"\b(?:resolutions?|images?|photos?|pictures?|frames?|sized?)\b[^.;]{0,20}?\b(?:[5-9]\d{2}|\d{4,5}) by \d{3,5}\b|"
               # a resolution written in thousands of pixels across: "4K video", "a resolution around 2k"
               r"\b[2-8] ?k (?:resolution|images?|pictures?|photos?|videos?|frames?|footage|renders?|textures?|inputs?|scans?)\b|"
               r"\b(?:resolution|images?|pictures?|photos?|videos?|frames?|footage|renders?|textures?)\b[^.;,]{0,30}?\b(?:is|are|of|at|around|about|near|up to) (?:about |around |roughly |nearly |over )?[2-8] ?k\b(?! ?(?:tokens?|steps?|iterations?|samples?|rows?|words?|context))|"
               # an image size written as a tuple of 1600 px and up: "my own data is (2048, 1080)"
               # ("torch.empty(size=(20000, 768))" is a tensor's shape given as an argument, not an image's size)
               r"(?<!\()(?<!, )\b(?:images?|img|inputs?|pictures?|photos?|frames?|data|resolution|size)\b(?!=\()[^.;()]{0,40}\((?:1[6-9]\d\d|[2-9]\d{3}|\d{5}), ?\d{3,5}\)|"
               # an image-side limit set to thousands of pixels: "det_limit_side_len=20000", "imgsz: 4096"
               # (1280 and up: twice the 640 most detectors train at is four times their activations)
               r"\b\w*(?:side_len|side_limit|max_side|img_?size|image_?size|imgsz|max_size|long_side|short_side|resolution|patch_?size|crop_?size|tile_?size)\w*(?:\s?[=:]\s?| (?:to|of|at) |\s)(?:1[2-9]\d\d|[2-9]\d{3}|\d{5,})\b|"
               # a video's frame count set to a few dozen or more: "--video_length 49", "num_frames=64" (every
               # frame of a clip goes through the model together; 16-frame clips are the common default)
               r"\b\w*(?:video_?len(?:gth)?|num_?frames|n_?frames|frame_?num|nframes|clip_?len(?:gth)?|max_?frames|frames_?per_?clip)\w*(?:\s?[=:]\s?| (?:to|of|at) |\s)(?:[3-9]\d|[1-9]\d{2,})\b|"
               # ... or said in words: "if the image frames exceed 60", "more than 64 frames", "the number of frames is
               # above 120" (a few dozen to hundreds: millions of frames are a reinforcement-learning run's steps)
               r"\bframes\b[^.;]{0,15}?\b(?:exceeds?|exceeding|exceeded|(?:is |are |goes |go )?(?:over|above|more than|beyond|past|greater than|larger than)|>) ?(?:[3-9]\d|[1-9]\d{2})\b(?![.,]\d| ?(?:k\b|m\b|million|thousand))|"
               r"\b(?:more than|over|above|beyond) (?:[3-9]\d|[1-9]\d{2}) (?:\w+ )?frames\b|"
               # audio at a high sample rate: every second is twice (or four times) the frames of 22 kHz
               r"(?<![\w.,])(?:44[.,]1|48|88[.,]2|96|192) ?khz\b|"
               # clips admitted up to half a minute or more: "max_duration = 65 s", "max_audio_len: 40"
               # (from 300 up it is a batch's total seconds, lhotse's --max-duration: rule batch_budget)
               r"\bmax[_ -]?(?:duration|audio[_ ]?(?:len\w*|duration)|utterance[_ ]?len\w*|clip[_ ]?len\w*)\w*\s?(?:=|:|of|to|is|at)?\s?(?:[3-9]\d|[12]\d\d)(?:\.\d+)?\s?(?:s\b|secs?\b|seconds\b)?(?![\d.])|"
               r"\b(?:image|input|picture|photo|frame|patch|crop|tile)s?(?:'s)? (?:size|resolution|dimension)s? (?:is|are|was|were) (?:\w+ )?(?:large|big|huge|high|enormous)\b|"
               # a volume: "128^3", "160x192x160", "3D CT scans", "a 3D UNet" (activations grow with its cube)
               r"\b\d{2,4} ?(?:\^|\*\*) ?3\b|\b\d{2,4} ?[x×] ?\d{2,4} ?[x×] ?\d{2,4}\b|"
               r"\b3-?d (?:\w+ ){0,2}(?:images?|volumes?|scans?|ct|mri|segmentation|u-?nets?)\b|"
               # a five-dimensional tensor made in code is a volume: torch.randn(1, 1, 128, 128, 128)
               r"\b(?:randn?|zeros|ones|empty|full|rand_like)\(\s*\d+\s*,\s*\d+\s*,\s*\d{2,4}\s*,\s*\d{2,4}\s*,\s*\d{2,4}\s*[,)]|whole (?:file|recording|image|video|document)|my own (?:large|big|high-res\w*|huge) (?:point clouds?|data|images)\b|"
               # audio kept up to a length: "utterances longer than 50 seconds", "clips of up to 3 minutes"
               r"\b(?:utterances?|clips?|recordings?|segments?|audio files?)\b[^.;]{0,30}?\b(?:longer than|over|above|up to|of up to|exceeding) \d+ ?(?:s\b|secs?\b|seconds|minutes?|min\b)|"
               # a whole graph or dataset in one step: full-batch training, every neighbour sampled
               # ... or a graph said to be huge ("graph convolution on huge graphs"): the graph is the input, not the autograd's
               r"\b(?:huge|giant|very large|massive|enormous|big) (?:input |social |knowledge |citation )?graphs?\b(?! (?:is|are|was|gets?|got) (?:kept|retained|stored|built|saved))|"
               r"\bfull[- _]?batch\b|\b(?:all|every) (?:the )?neighbou?rs?\b|neighbou?r[_ ]sampling\b[^.;]{0,40}\b(?:type:? ?|= ?)all\b|\bfan-?out (?:of |= ?)?-1\b|"
               # a cost said to grow with the square of an input's element count: "the edge outputs scale
               # quadratically with the number of strokes"
               r"\b(?:scal\w*|grow\w*|increas\w*|blows? up) quadratically (?:with|in)\b|\bquadratic (?:in|with) (?:the )?(?:number|count|length|size)\b|"
               r"\b(?:with|as|by) the square of (?:the )?(?:number|count|length|size|\w+ count)\b|"
               # a rasterizer keeps K faces for every pixel: its outputs are (N, H, W, K), the image times K
               r"\bfaces_per_pixel\s?[=:]\s?(?:[2-9]\d|\d{3,})\b|\b(?:[2-9]\d|\d{3,}) faces per pixel\b|"
               r"\bvoxel\b|\bpoint clouds?\b|(?:inputs?|sequences?|prompts?|documents?|contexts?) of [\d.]+ ?[kK]?[- ]?tokens|"
               # counts of elements an input is made of: "20 million points", "1.2M gaussians", "500k vertices"
               # (a magnitude or four digits: "8 nodes" are machines; a graph of a few thousand nodes, Cora's
               # 2708, is small: nodes and edges from five digits)
               r"(?<![\w.,])(?:\d[\d.,]* ?(?:million|[mMkK]\b|thousand)|\d{1,3}(?:,\d{3})+|\d{4,}) ?(?:points|vertices|gaussians|voxels|faces|triangles|atoms|particles)\b|"
               r"(?<![\w.,])(?:\d[\d.,]* ?(?:million|[mMkK]\b|thousand)|\d{1,3}(?:,\d{3})+|\d{5,}) ?(?:nodes|edges)\b|"
               # the count after the elements: "when the number of points is more than 50000"
               r"\b(?:number of (?:points|vertices|gaussians|voxels|faces|triangles|nodes|edges|atoms|particles)|(?:points?|vertices|gaussians|voxels|faces|triangles|atoms|particles) (?:number|count|num))\b[^.;]{0,15}?\b(?:is |are |gets |goes )?(?:more than|over|above|exceeds?|exceeding|larger than|greater than|beyond|past|>) ?"
               r"(?:about |around |~ ?)?(?<![\w.,])(?:\d[\d.,]* ?(?:million|[mMkK]\b|thousand)|\d{1,3}(?:,\d{3})+|\d{4,})|"
               # a biological sequence's length: "6800 residues", "sequences longer than 4700", "a 3 kb region"
               r"(?<![\w.,])\d[\d,]{2,} ?(?:residues|amino acids|aa\b|base pairs|bp\b|nucleotides)|"
               r"\b(?:sequences?|proteins?|chains?|complex(?:es)?)\b[^.;]{0,20}?\((?:longer than|over|above|>) ?\d{3,}\)|\b(?:total )?length (?:of |is |=\s?)?\d{4,}\b")
# How many inputs one call processes decides whether it fits ("beyond 5-10 million records", "more
# than 50k sentences"): what grows is kept per input, not the batch.
# A failure that comes only once the training set is large enough: the batch is the same, so what
# grows is kept per batch through the epoch ("for a large enough training set my GPU runs out").
_TRAINING_SET_SIZE_MATTERS = (r"\ba (?:large|big) enough (?:training |train )?(?:set|dataset|data ?set|corpus)\b|"
                              r"\b(?:training |train )?(?:set|dataset|data ?set)s? (?:is |are |gets |get )?(?:large|big) enough\b")
_DATASET_SIZE_MATTERS = (r"\b(?:beyond|more than|over|above|past|exceeding) (?:about |around |~ ?)?(?<![\w.,])\d[\d.,]*(?:\s?-\s?\d[\d.,]*)? ?(?:million|thousand|[mMkK]\b)? ?"
                         r"(?:records|sentences|documents|texts|samples|items|rows|examples|passages|queries|embeddings|images|frames)\b|"
                         r"\b(?:up to|only|at most|not more than|no more than) (?:about |around |~ ?)?\d[\d.,]*(?:\s?-\s?\d[\d.,]*)? ?(?:million|thousand|[mMkK]\b)? (?:records|sentences|documents|texts|samples|items|rows|passages|embeddings)\b[^.;]{0,30}\b(?:fit|work|succeed|go through)|"
                         # an inference loop that gets through a number of outputs first: "it generates 15
                         # pictures and then fails", "after rendering 20 views it runs out"
                         r"\b(?:generat|render|produc|sav|writ|predict|transcrib|encod|embedd?|process)\w* (?:about |around |~ ?)?(?<![\w.,])\d+ (?:\w+ )?"
                         r"(?:pictures|images|frames|views|videos|clips|files|samples|outputs|sentences|documents|pages|results|predictions)\b"
                         r"[^.;]{0,25}?\b(?:and )?(?:then|before|after which|until)\b|"
                         # "15 images come out and then it crashes"
                         r"(?<![\w.,])\d+ (?:\w+ )?(?:pictures|images|frames|views|videos|clips|files|samples|outputs|renders|results|predictions) "
                         r"(?:come out|came out|are (?:generated|rendered|produced|saved|written|done)|were (?:generated|rendered|produced|saved|written)|"
                         r"get (?:generated|rendered|saved|written)|go through|went through)[^.;]{0,25}?\b(?:and )?(?:then|before|after which|until)\b|"
                         # one inference call over a whole large collection: "encode over a large dataset"
                         r"\b(?:encod\w*|embed\w*|predict\w*|infer\w*|transcrib\w*|scor\w*|run\w*|calls?)\b[^.;]{0,60}\b(?:(?:over|on|for) )?(?:a |the |my |our )?(?:whole |entire |full )?(?:very )?(?:large|big|huge|whole|entire|full) (?:dataset|corpus|collection|set of (?:documents|texts|images))\b")
# Inference that computes one result for every item of a collection ("getting sentence embeddings for my
# data set", "extracting features of all the images"): the results are usually kept until the end, and
# kept on the device they grow with every batch.
_BULK_OUTPUTS = (r"\b(?:(?:get|getting|gets|compute|computing|computes|extract|extracting|extracts|produce|producing|calculat\w*|obtain\w*) (?:the )?"
                 r"(?:sentence |text |image |document |token |word |clip |audio )?(?:embeddings?|features|encodings|vectors|representations|predictions)|"
                 r"encod(?:e|es|ing)|embed(?:s|ding)?)\b[^.;]{0,40}?\b(?:for|of|over|on|from) (?:(?:my|the|our|a|an|all|every|each|whole|entire|full) ){0,2}"
                 r"(?:(?:\w+ )?(?:data ?set|corpus|collection|documents|sentences|texts|images|records|items|samples|passages)\b|data\b)")
# A smaller input said to fit: a size knob set lower ("with cut_off_size = 300 it works"), inputs
# cropped, shortened or filtered ("after removing clips longer than 20 s it trains").
_INPUT_KNOB = (r"(?:cut_?off\w*|max[_ -]?(?:len\w*|length|seq\w*|source\w*|target\w*|duration|tokens)|resolution|"
               r"img[_ -]?size|image[_ -]?size|imgsz|--img(?:-size)?|crop[_ -]?size|input[_ -]?size|patch[_ -]?size|"
               r"seq(?:uence)?[_ -]?len\w*|context[_ -]?(?:len\w*|size|window)|num_ctx|n_ctx|max_model_len|image (?:side|dimension)s?|"
               # a scale the image is resized by: "max_im_shrink", "test_scale", "img_scale"
               r"\w*_shrink\w*|\w*(?:im|img|image|test)_?scales?\b|"
               # a factor the images are downsampled by (LLFF's and nerfstudio's "factor", "downscale_factor")
               r"down(?:sampl|scal)\w*(?:[_ -]?(?:factor|rate|ratio))?|(?<![\w.])factor(?=\s?[=:]\s?\d))")
_WORKS = (r"(?:works?|worked|runs?(?! out)|ran(?! out)|fits?|fitted|trains?|trained|succeeds?|succeeded|goes through|went through|is fine|was fine|"
          r"without (?:a |any )?(?:problems?|issues?|errors?|trouble)|"
          r"fix(?:es|ed)? (?:it|this|the (?:problem|issue|error))|solv(?:es|ed) (?:it|this|the (?:problem|issue|error)))")
_SHRUNK_INPUT = (r"(?:downscal|downsampl|resiz|crop|shrink|shrunk|reduc|lower|decreas|cut|truncat|shorten|limit|restrict|filter|remov|split|chunk|resampl)\w*")
_INPUT_NOUN = (r"(?:images?|pictures?|photos?|resolution|inputs?|audio|clips?|utterances?|recordings?|sequences?|(?:sequence |audio |input |context )?length|"
               r"files?|documents?|texts?|sentences?|samples? longer|(?:image |input |crop |patch )?size|features|columns)")
_NOT_DENIED = r"(?:(?!\bnot\b|n't\b|\bno\b|\bnever\b|\bnor\b)[^.;])"  # a gap no negation sits in
_SMALLER_INPUT_FITS = (rf"\b{_INPUT_KNOB}\b{_NOT_DENIED}{{0,12}}?(?:to |= ?|of |at |: ?)?\d+\w*{_NOT_DENIED}{{0,25}}?\b(?:it |this |that |training |everything |then )?{_WORKS}\b|"
                       # the knob named after the verb: "the code works well with factor=8", "runs fine at img_size 320"
                       rf"(?<!n't )(?<!not )(?<!never )\b{_WORKS}(?: well| fine| ok| okay)? (?:with|at|using|for|when setting) (?:a |the |my )?{_INPUT_KNOB}\s?(?:of |= ?|: ?|set to |to )?\d+|"
                       # "it only stops overflowing when max_im_shrink is set to 1"
                       rf"\b(?:only )?(?:stops?|quits?) (?:overflowing|running out(?: of memory)?|failing|crashing|ooming)(?: only)? (?:when|if|once|after|with) (?:the |my )?{_INPUT_KNOB}\b|"
                       # "only with max_im_shrink set to 1 does it not overflow"
                       rf"\bonly (?:with|when|if|at|after setting) (?:the |my )?{_INPUT_KNOB}\b[^.;]{{0,20}}?\d[\d.]*\w*[^.;]{{0,12}}?\b(?:does|do|did)(?: it| this| that)?(?:n't| not) (?:it |this |that )?(?:overflow|oom|fail|crash|run out)\w*|"
                       rf"\b{_SHRUNK_INPUT} (?:the |all |my |our |each |every )?(?:\w+ ){{0,2}}?{_INPUT_NOUN}\b{_NOT_DENIED}{{0,50}}?\b(?:it |this |that |training |everything |finally |then |now )*{_WORKS}\b|"
                       rf"\b(?:only )?{_WORKS} (?:only )?(?:if|when|after|once) (?:i |we |you )?{_SHRUNK_INPUT} (?:the |all |my |our )?(?:\w+ ){{0,2}}?{_INPUT_NOUN}\b|"
                       # "it works fine for short audios (<1min)", "runs well on small images"
                       rf"(?<!n't )(?<!not )(?<!never )\b{_WORKS}(?: well| fine| ok| okay)? (?:for|with|on) (?:the )?(?:short|small|shorter|smaller|tiny) (?:\w+ )?{_INPUT_NOUN}")
# Memory high at the start of a run that settles lower after some iterations: an autotuner's trials
# (cudnn.benchmark tries every convolution algorithm with its workspace on each new input shape).
_START_PEAK_THEN_LOWER = (r"\b(?:at the (?:very )?(?:beginning|start)|when (?:the )?(?:training|it|the run) (?:is |was |gets )?(?:starts?|started|starting|begins?|began|beginning)|(?:in|during|for) the first (?:few |couple of )?(?:iterations?|steps?|batches)|"
                          r"(?:starts?|begins?) (?:out )?at (?:about |around )?\d[\d.]* ?(?:GB|GiB|G|MiB|MB))\b")
# ... and what it settles to afterwards, in the same sentence
_SETTLES_LOWER = (r"\b(?:drops?|dropping|dropped|falls?|fell|goes down|went down|decreases?|decreased|comes down|came down|settles?|settled|"
                  r"(?:is |becomes |stays |remains )?stable|stabili[sz]es?|back to normal|lower later)\b")
_HIGH_OR_SIZE = r"\b(?:high|huge|large|big|spikes?|peaks?|(?<![\d.])\d[\d.]* ?(?:GB|GiB|G|MiB|MB))\b"
# A whole graph through the network at once (full-batch GNN training, one big graph in a loader):
# nodes and edges, not a batch size, set the activations.
_WHOLE_GRAPH = (r"\bfull[- _]?batch(?:\.py)?\b(?=[^.;]{0,80}\b(?:graph|gnn|gcn|gat|nodes?|edges?|ogbn|ogbl|pyg|geometric|dgl)\b)|"
                r"\b(?:graph|gnn|gcn|gat|ogbn|ogbl|pyg|dgl)\w*\b[^.;]{0,80}\bfull[- _]?batch\b|"
                r"\b(?:one|a|single|the) (?:big|large|huge|single|whole|entire) graph\b|\bwhole graph\b|\bentire graph\b|"
                r"\bgraph (?:with|of|has) (?:(?:\d[\d,.]* ?(?:million|[mMkK]\b)|\d{1,3}(?:,\d{3})+|\d{5,}) ?nodes|(?:\d[\d,.]* ?(?:million|[mMkK]\b)|\d{1,3}(?:,\d{3})+|\d{5,}) ?edges)")
# Distillation that keeps the teacher on the GPU beside the student: "knowledge distillation from a
# 7B teacher", "the script still loads the teacher model".
_TEACHER_RESIDENT = (r"\bteacher(?:'s)? (?:model|network|net|llm|weights)?\b[^.;]{0,60}\b(?:load\w*|on (?:the )?(?:gpu|cuda|device)|in (?:gpu |vram|memory))\b|"
                     r"\b(?:load\w*|keeps?|kept|holds?)\b[^.;]{0,30}\bteacher\b|"
                     r"\b(?:knowledge[- ])?distill\w*\b[^.;]{0,80}\bteacher\b|\bteacher\b[^.;]{0,80}\bstudent\b|\bstudent\b[^.;]{0,80}\bteacher\b|"
                     r"\bdistill\w* (?:\w+ ){0,6}from (?:a |an |the |my )?(?:[\w.-]+ ){0,3}(?:target |teacher |larger |bigger )?(?:model|llm)\b")
# A matrix over every pair of positions named in the note: "pixel-to-pixel similarity matrices", "a
# pairwise distance matrix between all points", "an (HW x HW) affinity".
_PAIRWISE_SAID = (r"\b(?:pixel|point|patch|location|position|voxel|region|anchor)[- ]to[- ](?:pixel|point|patch|location|position|voxel|region|anchor)\b[^.;]{0,20}?"
                  r"\b(?:similarit\w*|affinit\w*|distances?|correlations?|relations?|attention)\b|"
                  r"\bpairwise (?:\w+ )?(?:similarit\w*|distances?|affinit\w*|correlations?)(?: matri\w*)?\b[^.;]{0,30}?\b(?:between|over|of|for) (?:all |every |each )?(?:the )?(?:pixels|points|locations|positions|voxels|patches|features|samples)\b|"
                  r"\b(?:similarity|affinity|distance|correlation) matri(?:x|ces)\b[^.;]{0,20}?\b(?:between|over|of|across) (?:all |every |each )?(?:the )?(?:pairs of )?(?:pixels|points|locations|positions|voxels|patches)\b|"
                  r"\(?\bhw ?[x×] ?hw\b\)?")
# The sharding a recipe relies on is not in place: "deepspeed is not installed in my environment",
# "I run it without DeepSpeed", "not using ZeRO or FSDP".
_SHARDING_ABSENT = (r"\b(?:deepspeed|fsdp|zero(?:-?[23])?|sharding)\b[^.;]{0,20}?\b(?:is|was|isn't|wasn't)? ?(?:not|n't) (?:installed|enabled|available|used|set up|configured|turned on)\b|"
                    r"\b(?:without|no|not using|not with|didn't use|did not use|never used|isn't using|is not using)\b (?:the |any |a )?(?:deepspeed|fsdp|zero(?:-?[23])?(?: stage \d)?|sharding)\b")
# Vision-language models turn each image into visual tokens whose count grows with its pixels
# (Qwen2-VL: one per 28x28 patch, up to 16384 an image by default; LLaVA-NeXT and InternVL tile the
# image): a high-resolution page or several images make the language model's sequence long.
_VISION_LANGUAGE_MODEL = (r"\bqwen[\d.]*-?vl\w*|\bllava\w*|\binternvl\w*|\bminicpm-?v\w*|\bidefics\w*|\bpixtral\b|\bpaligemma\w*|\bcogvlm\w*|"
                          r"\bfuyu\b|\bmolmo\b|\bphi-?3(?:\.5)?-vision\b|\bllama[- ]?3\.2[- ](?:\d+b[- ])?vision\b|\bglm-4v\b|\bdeepseek-vl\w*|"
                          r"\bvision[- ]language models?\b|\bmultimodal (?:llms?|language models?)\b|\bvlms?\b")
# A recipe, config or paper run on more or larger GPUs than the user's: "the recipe was trained on 4
# V100 32GB; my machine has one T4 with 15 GB", "the paper used 8 A100s, I only have a 3090".
_GPU_NAMED = r"(?:\d+ ?(?:x ?)?)?(?:[\w-]+ ){0,2}(?:\d+ ?gi?b\b|v100s?|a100s?|h100s?|a6000s?|a40s?|l40s?|tpus?|gpus?|cards?)"
_RECIPE_HARDWARE = (r"\b(?:recipe|config\w*|yaml|script|paper|authors?|official \w+|original \w+|example)\b[^.;]{0,60}\b"
                    r"(?:trained|made|designed|meant|tuned|tested|run|ran|succeeded|used|uses|needs?|requires?|was done)\b[^.;]{0,30}?"
                    rf"\b(?:on|with|using|for)? ?{_GPU_NAMED}|\b(?:they|the authors) (?:used|trained on|train on|ran it on) {_GPU_NAMED}")
_OWN_SMALLER_HARDWARE = (r"\b(?:my (?:machine|computer|pc|server|box|laptop|gpu|card)|i (?:only )?(?:have|own|use|got)|we (?:only )?have|mine (?:is|has)|"
                         r"i'm on|i am on|i only have|only (?:one|a single|1))\b[^.;]{0,50}?\b(?:\d+ ?gi?b\b|gpu|card|t4|tesla|rtx|gtx|\d{4}(?:ti)?\b)")
# A graph whose edges join every pair of nodes: its edge count, and every message, grows with the
# square of the node count. "the molecule graph is fully connected", "no edge cutoff", "radius graph
# without a cutoff" (a "fully connected layer" is no graph).
_DENSE_GRAPH = (r"\b(?:fully[- ]connected|complete|dense) (?:\w+ )?graphs?\b|\bgraphs? (?:is |are )?fully[- ]connected\b|"
                r"\bno (?:edge|distance|radius|neighbou?r)[- _]?(?:cutoff|cut-off|threshold|radius)\b|"
                r"\bwithout (?:an? |the )?(?:edge|distance|radius)[- _]?(?:cutoff|cut-off|threshold)\b|\bedge_cutoff\s?[:=]\s?(?:none|null)\b|"
                r"\b(?:edges?|messages?)\b[^.;]{0,30}?\bbetween (?:all|every|each) (?:pairs? of )?(?:nodes|atoms|points|particles|residues)\b|"
                r"\b(?:did ?n[o']t|do ?n[o']t|never|not) (?:set|use|define|specify|give)\w* (?:a |an |the |any )?(?:edge|distance|radius|neighbou?r)[- _]?(?:cutoff|cut-off|threshold|radius)\b")
# A batch sized in another unit: seconds of audio (lhotse/icefall --max-duration), tokens (fairseq
# --max-tokens, max_batch_tokens), ESPnet's batch_bins.
_BATCH_BUDGET = r"--?max[-_]duration[ =]?\d+|--?max[-_]tokens[ =]?\d+|\bmax_batch_tokens\s?[=:]?\s?\d+|\bbatch[-_]bins\s?[=:]?\s?\d+|--?max[-_]frames[ =]?\d+"
# Protein structure models, which keep an N x N pair representation with triangular attention over it.
_PAIR_REPRESENTATION_MODEL = (r"\b(?:alphafold\d?|esmfold|openfold|colabfold|rosettafold|boltz-?\d?|chai-?1)\b|\bevoformer\b|"
                              r"\bpair (?:representation|repr)\b|\btriangle (?:attention|multiplication)\b|\bprotein structure prediction\b|"
                              r"\bpredict\w* the structure of\b")
# bitsandbytes' packed 4/8-bit weights (QLoRA and its kin).
_QUANTIZED_WEIGHTS = r"\bqlora\b|bitsandbytes|\bbnb\b|load_in_[48]bit|\b[48]-?bit (?:base|model|weights|quantiz\w*|lora)|\bnf4\b"
# Merging adapters into their base, or dequantizing it, writes the whole model out in 16 or 32 bits:
# a 4-bit model that trained in a quarter of the card needs four times its weights to be merged.
_MERGE_TO_FULL_WEIGHTS = (r"\bmerge_and_unload\b|\bsave_pretrained_merged\b|\bmerged_(?:16|4)bit\b|"
                          r"\bdequantiz\w* (?:the |my |its )?(?:whole |full )?(?:model|weights|it|base)\b|\bdequantiz\w* (?:it )?(?:to|into) (?:fp|bf|float)?(?:16|32)|"
                          r"\bmerg\w* (?:the |my |its |(?:lora|peft|qlora) )*(?:lora|peft|adapters?|weights) (?:in)?to\b|"
                          r"\bmerg\w* (?:the |my )?(?:lora|qlora|peft)(?: adapters?| weights)?\b")
# A recurrent model's state carried from one batch into the next (truncated backpropagation through
# time): without .detach() each batch's graph stays attached to the next one's.
_STATE_CARRIED = (r"\b(?:hidden|cell|recurrent|lstm|rnn|gru|memory) states?\b[^.;]{0,60}\b(?:from (?:each|one|every|the (?:previous|last)) "
                  r"(?:batch|step|iteration|chunk|segment|window)\w*|(?:in)?to the next|into the next|across (?:batches|steps|iterations|chunks)|"
                  r"between (?:batches|steps|iterations|chunks))|"
                  r"\b(?:carr\w*|pass\w*|fe(?:e|)d\w*|reus\w*|kept|keep\w*)\b[^.;]{0,30}\b(?:hidden|cell|recurrent) states?\b[^.;]{0,40}\b(?:next|each|every|across|over)\b|"
                  # Any tensor one iteration produced that the next starts from ("each step starts from a
                  # clone of the previous step's output", "the prediction of the last frame is the next input").
                  r"\b(?:previous|last|prior|preceding) (?:iteration|step|batch|frame|round|pass|chunk)(?:'s|s')? (?:\w+ )?(?:outputs?|results?|predictions?|tensors?|estimates?|latents?)\b|"
                  r"\b(?:outputs?|results?|predictions?|estimates?|latents?) (?:tensors? )?(?:of|from) (?:the |each )?(?:previous|last|prior|preceding) (?:iteration|step|batch|frame|round|pass|chunk)\b|"
                  # in code: a recurrent state fed back into the call that returned it, "out, hidden = rnn(x, hidden)";
                  # not a tensor built afresh from data ("state = torch.tensor(state).cuda()"), which has no graph to carry
                  r"\b((?:hidden|hx|h0|state|states|cell|carry|mems?|memory|past)\w*)\s*(?:,\s*\w+\s*)*=\s*"
                  r"(?!(?:torch|np|numpy|jnp)\.(?:tensor|as_tensor|asarray|array|from_numpy|FloatTensor|LongTensor|Tensor)\()"
                  r"[\w.]+\((?:[^()]{0,80}?[,(\s])?\1\s*[,)]")
# The same work fits with the original implementation and fails with a variant of it (a fork, an
# optimized or "fast" version, a wrapper): the variant adds the memory.
# Gradient accumulation named ("extend_with_gradient_accumulation", "accumulate_gradient_steps=2",
# "grad_accum_steps"): an optimizer wrapper that accumulates keeps a buffer the size of every weight.
_ACCUMULATION_NAMED = (r"\bgradient[ _]accumulation\w*|\bgrad(?:ient)?_accum\w*|\baccum(?:ulate)?_grad\w*|\baccumulate_gradient\w*|"
                       # BigGAN-style "num_G_accumulations", "num_accumulation_steps"
                       r"\bnum_\w*accumulat\w*|\baccumulation[_ ]steps\b|"
                       r"\baccumulat\w* (?:the )?gradients?\b")
_ORIGINAL_FITS = (r"\b(?:with|using|in|on) (?:the )?(?:stock|original|vanilla|upstream|plain|official|reference) (?:\w+ ){0,3}?"
                  # "with stock SAM and the same settings this problem does not exist"
                  r"(?:(?:and|with|at|using) (?:the )?(?:very )?same (?:settings|config\w*|parameters|arguments|options|inputs|images|data) )?"
                  r"(?:(?:this|the|that) )?(?:problem|issue|error|oom)?\s?(?:does ?n[o']t (?:exist|happen|occur)|does not (?:exist|happen|occur)|"
                  r"(?:works?|worked|runs?|ran|fits?|fitted) (?:fine|ok|okay|well)?|is fine|was fine|there is no (?:problem|issue))|"
                  r"\b(?:the )?(?:stock|original|vanilla|upstream|plain|official|reference) (?:\w+ ){0,2}?(?:works?|worked|runs?|ran|fits?|fitted|is fine|has no (?:problem|issue))\b|"
                  # "with the original optimizer it trains at batch 32"
                  r"\b(?:with|using) (?:the )?(?:stock|original|vanilla|plain) (?:\w+ ){0,2}?(?:it |this |training )?(?:trains?|trained|runs?|ran|works?|worked|fits?)\b(?! out\b)|"
                  # "the original SAM with identical settings does not have this problem"
                  r"\b(?:the )?(?:stock|original|vanilla|upstream|plain|official) (?:\w+ ){0,2}?(?:(?:with|at|using) (?:the )?(?:very )?(?:same|identical) (?:settings|config\w*|parameters|arguments|options|inputs) )?"
                  r"(?:does ?n[o']t|does not|did ?n[o']t|did not) (?:have|show|hit|get|see) (?:this|the|that|any|such) (?:problem|issue|error|oom|leak)\b|"
                  r"\b(?:the )?(?:stock|original|vanilla|upstream|plain|official|reference) (?:\w+ ){0,2}?(?:handles?|handled|copes? with|manages?|managed|runs?|ran) "
                  r"(?:the same|these|those|it|them)\b[^.;]{0,30}\b(?:fine|ok|okay|well|without (?:a )?(?:problem|issue|oom))\b|"
                  # the full-precision model runs where its smaller quantized variant fails
                  r"\b(?:fp16|bf16|fp32|full[- ]precision|unquantized)\b[^.;]{0,60}?\b(?:without (?:any )?(?:issues?|problems?)|works?|worked|fine|fits?|runs?)\b"
                  r"[^.;]{0,40}?\b(?:but|while|whereas|yet)\b[^.;]{0,40}?(?:\bq\d\w*|gguf\b|\bint[48]\b|\bfp8\b|\bnf4\b|\b[48]-?bit\b|quantiz\w*|\bawq\b|\bgptq\b)")
# The same model said to load or run in another framework on the same device ("the PyTorch version
# loads and runs fine"): the weights fit, so what fails is this framework's way of building them.
_OTHER_FRAMEWORK_FITS = (r"\b(?:the |its |a )?(?:pytorch|torch|tensorflow|tf|keras|flax|jax|onnx|safetensors)(?: (?:version|port|implementation|model|checkpoint|weights))?"
                         r"(?: of (?:the same|this|that|the) (?:\w+ )?model)? (?:loads?|loaded|works?|worked|runs?|ran|fits?|is fine|was fine)\b"
                         r"(?: and (?:runs?|ran|works?|worked))?(?: just)?(?: fine| ok| okay| well| without (?:a |any )?(?:problems?|issues?|errors?))|"
                         # "with torch it works without any problems"
                         r"\b(?:with|in|using|under) (?:pytorch|torch|tensorflow|keras|flax|jax)\b,? (?:it |the model |everything )?"
                         r"(?:loads?|loaded|works?|worked|runs?|ran|fits?)(?: just)?(?: fine| ok| okay| well| without (?:a |any )?(?:problems?|issues?|errors?))")
# A dataset's size on disk deciding whether a training run fits, with the same batch ("with a dataset
# over 50GB it fails, up to 50GB it works"): the dataset is held in host memory, not the GPU's.
_DATASET_BYTES_MATTER = (r"\b(?:datasets?|corpus|corpora|data)\b[^.;]{0,20}?\b(?:over|more than|larger than|bigger than|above|beyond|exceeding|>) ?"
                         r"(?:about |around |~ ?)?\d[\d.,]* ?(?:GB|GiB|TB|TiB|G)\b|"
                         r"\b(?:split|shard|chunk)\w* (?:the |my |a )?(?:\d[\d.,]* ?(?:GB|TB) )?(?:corpus|dataset|data)\b[^.;]{0,20}?\binto \d[\d.,]* ?(?:GB|TB)\b")
# How much data there is said to decide whether training fits, at the same batch ("the size of the
# data set decides whether training works", "a subset of the data trains, the full dataset fails").
_DATASET_DECIDES = (r"\b(?:size|length) of (?:the |my |our )?(?:data ?set|training (?:data|set)|corpus)\b[^.;]{0,40}?"
                    r"\b(?:decides|determines|influences|affects|changes|has (?:an |some )?influence on|matters)\b|"
                    r"\b(?:works?|fits?|trains?|runs?) (?:fine )?(?:with|on) (?:a |the )?(?:subset|part|fraction|smaller (?:part|portion|sample|slice)) "
                    r"of (?:the |my |our )?(?:data|dataset|training data|corpus)\b[^.;]{0,40}?\b(?:but|while|whereas)\b|"
                    r"\b(?:with|on) (?:the )?(?:whole|full|entire|complete) (?:data ?set|training (?:data|set)|corpus)\b[^.;]{0,30}?"
                    r"\b(?:fails?|ooms?|runs? out|crash\w*|dies)\b")
# The library's own example, on its own data, said to fit a batch as large or larger ("the STS
# example works up to batch 32"): the same model, so what differs is this data's inputs.
_EXAMPLE_FITS_BATCH = (r"\b(?:example|tutorial|demo|sample script|reference script|quickstart)s?\b[^.;]{0,50}?"
                       r"\b(?:works?|worked|runs?|ran|fits?|fitted|trains?|trained|(?:was|am|is) able to (?:set|use|run|train))\b[^.;]{0,25}?"
                       r"\b(?:up to |with |at |until )?(?:a )?(?:batch(?:[ _-]?size)?|bs)\s?(?:of |=\s?|: ?|up to |to )?(?:up to )?(?P<batch>\d+)\b")
# The same run fits a card with more memory ("on a GPU with 32G it works", "runs fine on an 80 GB
# A100"): what it needs at its steadiest exceeds this card, rather than growing without bound.
_CARD = r"(?:gpus?|cards?|graphics cards?|a100s?|h100s?|v100s?|a6000s?|devices?)"
_LARGER_CARD_FITS = (rf"\b(?:on|with|using|use) (?:a |an |the )?(?:{_CARD} (?:with|of|that has) (?:\d+ ?(?:g(?:i?b)?\b|vram\b)|more (?:memory|vram))|(?:\d+ ?g(?:i?b)?|bigger|larger) (?:vram )?{_CARD})"
                     # ("on an 11 GB card it runs out of memory" is the card that failed)
                     rf"[^.;]{{0,30}}?\b(?:it |this |everything )?(?:works?|worked|runs?|ran|fits?|is fine|was fine|goes through|(?:is |was )?(?:not|no) (?:a )?(?:big )?problem)\b(?! (?:out|into|short)\b)|"
                     rf"\b(?:works?|worked|runs?|ran|fits?) (?:fine |well |ok |without (?:a |any )?(?:problem|issue|error)s? )?on (?:a |an |the )?(?:\d+ ?g(?:i?b)? |bigger |larger )(?:vram )?{_CARD}|"
                     rf"\b(?:a |an )?(?:bigger|larger) {_CARD} (?:fixe[sd]|solve[sd]|works?|worked|helps?|helped)\b")
# The user asks how much memory the code needs ("how much GPU memory is required for training?",
# "what is the minimum VRAM?"): their card fell short of what the project was run on.
# Asking how to fit a card of a stated size ("how to achieve it under 8G VRAM?", "how can I run it on
# a 6 GB card?"): it does not fit as it is (also read by the engine as a note that says the run died)
HOW_TO_FIT_A_CARD = (r"\bhow (?:to|can (?:i|we|one)|do (?:i|we)|could (?:i|we)|would (?:i|we)) (?:\w+ ){0,2}?(?:run|achieve|fit|use|train|load|make|get)\b[^.;?]{0,40}?"
                     r"\b(?:under|within|with|on|in|below) (?:only |just |a |an |my |the )?\d+(?:\.\d+)? ?(?:GB|GiB|G)\b")
_MEMORY_REQUIREMENT_ASKED = (HOW_TO_FIT_A_CARD + "|"
                             # a mode for small cards asked for: "please add a low VRAM mode", "--lowvram",
                             # "minimum VRAM: 6 GB", "the recommended GPU memory"
                             r"\blow[- ]?vram\b|--(?:low|med)vram\b|\b(?:minimum|min\.?|minimal|required|recommended) (?:vram|gpu memory|video memory|gpu ram)\b|"
                             r"\bhow much (?:gpu |video |cuda )?(?:memory|vram|ram)\b[^.;?]{0,40}?\b(?:is |are |do (?:i|we|you) |does (?:it|this|one) )?(?:required|needed|need|necessary|requires?)\b|"
                             r"\b(?:minimum|minimal|min\.?) (?:amount of )?(?:gpu |video )?(?:memory|vram)\b[^.;?]{0,30}?\b(?:required|needed|for|to|per)\b|"
                             r"\bwhat (?:gpu|card|hardware)s? (?:did|do) you (?:use|train)\b|"
                             # "what is the minimum GPU spec for running the base model?"
                             r"\b(?:minimum|minimal|min\.?|recommended) (?:gpu|hardware|system|card) (?:spec\w*|requirements?|needed|required|size)\b|"
                             # "is there a per-GPU memory requirement?", "the GPU requirements for fine-tuning"
                             r"\b(?:per-gpu |gpu |vram |video memory |hardware |memory )(?:memory )?requirements?\b|"
                             # "does the model really need a higher-capability GPU?", "is 24GB enough?"
                             r"\b(?:needs?|needed|requires?|required)\b (?:a |an )?(?:bigger|larger|higher[- ](?:capability|capacity|end|memory)|stronger|more powerful|better|beefier) (?:gpu|card|graphics card)s?\b|"
                             r"\bneeds? (?:quite |so |very |such )?(?:a lot of|lots of|large|much|huge|big|that much|so much) (?:gpu |video |cuda )?memory\b|"
                             r"\bis (?:\d+(?:\.\d+)? ?(?:GB|GiB|G) |(?:my|this|a|one|the) (?:[\w-]+ ){0,3}(?:gpu|card) )(?:of (?:vram|memory) )?(?:not )?(?:enough|sufficient)\b|"
                             # "is my 8G video memory not enough?"
                             r"\bis (?:my|this|the|a|our) (?:\d+(?:\.\d+)? ?(?:GB|GiB|G) )(?:of )?(?:video |gpu |graphics )?(?:memory|vram|card|gpu) (?:really )?(?:not )?(?:enough|sufficient)\b|"
                             # "or will it run if I add more 24 GB GPUs?": more cards asked about, not tried
                             r"\b(?:if|when) (?:i|we) (?:add|use|get) more (?:[\w-]+ ){0,3}gpus\b|\b(?:does|would|will|can) (?:adding|using|getting) more (?:[\w-]+ ){0,3}gpus\b")
# A memory requirement stated for the model ("sam_vit_h officially recommends 12G or more VRAM", "the
# README says it needs at least 24 GB", "requires 16GB of VRAM"): the size it is said to need, read
# against the card's.
_STATED_REQUIREMENT = re.compile(
    r"\b(?:officially |it |the model |this model |which )?(?:recommends?|recommended|requires?|required|needs?|needed|asks for|calls for)"
    r"(?: at least| a minimum of| minimum| over| more than| about| around)? (\d{1,3}(?:\.\d+)?) ?(?:GB|GiB|G)\b(?: or (?:more|higher|above))?"
    r"(?: (?:of )?(?:vram|gpu memory|video memory|gpu ram|memory))?|"
    r"\b(?:minimum|min\.?|recommended|required) (?:vram|gpu memory|video memory)(?: is| of|:)? (?:at least )?(\d{1,3}(?:\.\d+)?) ?(?:GB|GiB|G)\b",
    re.IGNORECASE)
# Only one input in the whole run ("using only 1 example for now", "with a single image"): no batch
# is left to cut, whatever the batch setting says.
_ONE_INPUT_ONLY = (r"\b(?:only|just|even with|even on) (?:only |just )?(?:a single |one |1 )(?:training )?(?:example|sample|image|picture|item|instance|sequence|sentence|prompt|video|clip)\b|"
                   r"\b(?:a single|one|1) (?:training )?(?:example|sample)s? (?:for now|only|to (?:start|test))\b")
# Patches or crops named ("is the evaluation patch size the same as in training?", "trained on 512
# crops"): training saw pieces of the images, and an evaluation that runs whole ones is larger.
_CROPS_NAMED = r"\b(?:patch|crop)(?:es|s|ped)?\b|\b(?:patch|crop)_size\b"
# The same model fits at a smaller width ("with hidden dimension 1024 it runs out; with smaller
# dimensions it runs"): its weights, their states and every activation grow with the width.
_WIDTH = r"(?:hidden|embedding|embed|model|latent|feature)[ _-]?(?:dim(?:ension)?s?|size|width|channels)|d_model|n_embd|hidden_channels"
_SMALLER_WIDTH_FITS = (rf"\b(?:{_WIDTH})\b[^.;]{{0,20}}?\d+[^.;]{{0,60}}?(?:\.\s+|;\s*|,\s*|\b(?:but|while|whereas)\b)[^.;]{{0,20}}?\b(?:smaller|lower|less|reduced) (?:hidden |embedding |model )?(?:dim\w*|widths?|sizes?|ones?|values?)\b[^.;]{{0,30}}?"
                       r"\b(?:runs?|ran|works?|worked|fits?|fine|trains?|trained|goes through|without (?:an? )?(?:error|oom))\b|"
                       rf"\b(?:smaller|lower|reduc\w*|decreas\w*) (?:the )?(?:{_WIDTH})\b[^.;]{{0,30}}?\b(?:runs?|ran|works?|worked|fits?|fixe[sd]|solve[sd]|helps?|helped)\b")
# The weights said to fill the GPUs ("the GPUs were maxed out to their capacity by the weights"):
# nothing is left for activations.
_WEIGHTS_FILL_GPUS = (r"\b(?:weights|parameters)\b[^.;]{0,40}\b(?:fill(?:s|ed|ing)?|max(?:es|ed|ing)? out|take up|took up|occup\w+)\b[^.;]{0,30}\b(?:gpus?|cards?|vram|capacity)\b|"
                      r"\b(?:gpus?|cards?)\b[^.;]{0,20}\b(?:(?:are|were|is|was|got|get) )?(?:maxed out|filled|full)\b[^.;]{0,40}\bby the (?:weights|model|parameters)\b|"
                      r"\b(?:pack\w*|fill\w*|load\w*|stuff\w*)\b[^.;]{0,20}\b(?:gpus?|cards?)\b[^.;]{0,10}\bwith (?:the )?(?:weights|parameters|layers)\b[^.;]{0,30}\b(?:capacity|full|limit|brim)\b")
# A tool or library capping the GPU memory it uses ("model_adapter.py sets the GPU memory use to 85%"):
# its own limit, under what the card holds.
_TOOL_MEMORY_CAP = (r"\b(?:it|the (?:code|library|tool|script|server|framework|launcher|loader)|(?<![\w.-])[\w-]+(?:\.[\w-]+)*\.py)\s+(?:sets|caps|limits|restricts|reserves)\s+"
                    r"(?:the )?(?:gpu |vram |device )?memory(?: use| usage)?\s+(?:to|at)\s+(?:about |only )?\d{1,3}\s?%")
# The tool's own plan of what fits said to be wrong: it counts the layers to put on the GPU, or the
# memory it needs, without something that also takes memory ("calculates how many layers to offload
# from the model alone, ignoring the context size", "offloads too many layers", "underestimates").
_TOOL_MISESTIMATES = (r"\b(?:calculat|estimat|comput|decid|determin|pick|choos)\w* (?:how many|the number of) (?:\w+ )?layers\b"
                      r"(?:[^.;]|\.(?=\w)){0,80}?\b(?:ignor\w*|without (?:count|consider|includ|account)\w*|not (?:count|consider|includ|account)\w*|from the model alone)|"
                      r"\b(?:offloads?|offloading|puts?|loads?|places?) too many (?:\w+ )?layers\b|"
                      # a device map placed inconsistently from run to run (weights said to fill the cards
                      # are the weights' size: rule weights_fill_the_gpus)
                      r"\b(?:infer_auto_device_map|auto device map|device_map ?= ?['\"]?auto['\"]?|accelerate)\b[^.;:]{0,40}?"
                      r"\b(?:(?:does ?n[o']t|does not|did ?n[o']t) give a consistent|(?:is|are) (?:not |n't )?inconsistent)|"
                      r"\binstead of using the other gpus\b|"
                      r"\b(?:under-?estimat\w*|mis-?calculat\w*|mis-?estimat\w*|wrongly estimat\w*) (?:the |its |how much )?(?:gpu |vram |video )?(?:memory|vram|context|kv|space|room)")
# The weights' size stated in the note ("loading all 5 models takes about 3.3GB of VRAM").
# A quantized model file named with its size ("UD-IQ2_M (239 GB)", "Q4_K_M: 40 GB"): its weights' size.
_QUANT_FILE_SIZE = (r"\b(?:UD-)?(?:I?Q[1-8](?:_[A-Z0-9]{1,4}){0,3}|F16|BF16)\b\s*(?:\(|:|is|=|at|of)\s*(\d{1,4}(?:\.\d+)?)\s?(GB|GiB|G)\b\)?")
_STATED_WEIGHTS = (r"\b(?:loading )?(?:the |all |my )?(?:(?:\d+|two|three|four|five) )?(?:models?|weights)\b[^.;]{0,15}?\b(?:takes?|took|uses?|used|occup\w+|needs?)\s+"
                   r"(?:about |around |~ ?|roughly )?(\d+(?:\.\d+)?)\s?(GiB|GB|G|MiB|MB)\b")
# Many models built one after another in one process (a k-fold loop, a grid or hyper-parameter
# search, a pipeline that creates and discards models): each one's weights and graph stay unless it is
# freed (Keras/TensorFlow keep them in the global session until clear_session()).
_MODEL_LOOP = (r"\b(?:k-?fold|(?:each|every|per) (?:fold|trial|configuration|combination)|(?:each|every) of the (?:\d+ )?(?:folds|trials|configurations|combinations)|grid ?search\w*|gridsearchcv|"
               r"hyper-?parameter (?:search|tuning|sweep|grid|optimi[sz]ation|table)|hyperopt|optuna|sweep\w*|(?:in|inside|within) (?:a|the|each) (?:for |while )?loop|set of loops|"
               r"repeatedly|over and over|again and again|one after (?:another|the other)|"
               # "a new model in every iteration of a loop", "in each iteration of the outer loop"
               r"(?:each|every) (?:iteration|pass|round|run) of (?:a|the|my|an|our) (?:\w+ )?loop|"
               r"(?:large|bigger|larger) grids?|many models|several models|multiple models)\b")
_MODEL_CREATED = (r"\bload_model\b|\b\w*(?:model|net)\w*\.compile\(|\bload(?:s|ed|ing)? (?:the |a |my )?(?:saved |same |trained |stored )?models?\b|"
                  # (compiling a Keras model builds its training graph anew in the session)
                  r"(?:\b(?:build\w*|built|compil\w*|creat\w*|new|fresh|initiali[sz]\w*|instantiat\w*|construct\w*)|(?<![-\w])tun(?:e|es|ed|ing))\b"
                  # a library's model class counts as a model: "a new SetFitModel", "a fresh UNet"
                  r"[^.;]{0,40}(?:\b(?:models?|networks?|nets?|cnns?|classifiers?|estimators?)|[a-z](?:Model|Net|Classifier|Regressor)s?)\b|\b(?:models?|networks?|cnns?|classifiers?)\b[^.;]{0,30}\b(?:discarded|created|built|initiali[sz]ed)\b")


def _lines_before_failure(excerpt: str, count: int = 3) -> str:
    """The last lines a program printed before it failed: those before its traceback (or before the
    OOM message), else the excerpt's last lines. A save announced there is what was running."""
    lines = excerpt[-20000:].splitlines()
    end = len(lines)
    for index, line in enumerate(lines):
        if line.lstrip().startswith("Traceback (most recent call last)") or _search(r"out of memory|\bOOM\b|OutOfMemory", line):
            end = index
            break
    kept = [line for line in lines[:end] if line.strip()][-count:]
    return "\n".join(kept)


# Code in the note whose loop body builds a model each time round ("for i in range(2):\n    model,
# optimizer, scheduler = get_training_obj(params)", "for fold in folds:\n    net = Net()"): what the
# previous round left referenced (its optimizer, outputs, a list) keeps that model while the next is built.
_MODEL_BUILT_IN_LOOP_CODE = re.compile(
    r"^([ \t]*)for \w+(?:\s*,\s*\w+)* in [^\n:]{1,80}:[ \t]*\n(?:\1[ \t]+[^\n]*\n){0,3}?\1[ \t]+"
    r"((?:\w+\s*,\s*){0,3}(?:(?:model|net|network|classifier|learner)\w*(?:\s*,\s*\w+){0,3}\s*=\s*(?!\s*(?:model|net)\w*\s*\.)[\w.]+|"
    r"\w+(?:\s*,\s*\w+){0,3}\s*=\s*[\w.]*(?:model|net|network|classifier|regressor|learner|estimator|from_pretrained)(?<!\bmodel)(?<!\bnet)\w*)\()",
    re.IGNORECASE | re.MULTILINE)


def _models_built_in_a_loop(note: str) -> str | None:
    """The sentence that says models are built over and over in one process."""
    code = _MODEL_BUILT_IN_LOOP_CODE.search(note)
    if code:
        return code.group(2)
    for sentence in _SENTENCE_END.split(note):
        looped, created = _search(_MODEL_LOOP, sentence), _search(_MODEL_CREATED, sentence)
        # A grid or hyper-parameter search, a k-fold run, fits a model per point by itself.
        searches = looped and _search(r"k-?fold|grid|hyper-?parameter|hyperopt|optuna|sweep", looped.group(0))
        # "the model is created once and then every iteration of the loop runs a batch": one model
        if created and _search(r"\b(?:only |just )?once\b|\bbefore the loop\b|\boutside (?:of )?the loop\b", sentence[created.start():created.end() + 30]):
            created = None
        # "training several Keras models one after another": each one trained is one built
        if not created:
            created = _search(r"\b(?:train\w*|fit\w*|run\w*) (?:\w+ ){0,2}(?:several|many|multiple|a number of|a series of|dozens of|hundreds of|a dozen|\d+|two|three|four|five|six|seven|eight|nine|ten|twenty) (?:[\w-]+ ){0,3}(?:models|networks|nets|classifiers)\b", sentence)
        if looped and (created or (searches and _search(r"\b(?:models?|networks?|cnns?|classifiers?|estimators?|keras\w*)\b", sentence))):
            return looped.group(0)
    return None


# A model loaded again, or replaced by another, while the process keeps running (a notebook cell
# that loads it rerun, an app switching models): the previous one is still referenced when the next
# one arrives.
_MODEL_WORD = r"(?:models?|pipelines?|networks?|llms?|checkpoints?|weights)"
# Said not to be freed: "is not properly garbage collected", "never gets unloaded".
_NOT_FREED = (r"(?:is not|isn't|was not|wasn't|are not|aren't|were not|weren't|never (?:gets?|got)|is never|are never|does not get|doesn't get|"
              r"do not get|don't get) (?:properly |correctly |ever |really )?(?:garbage[- ]collected|gc'?e?d|freed|unloaded|released|deleted|cleared)\b")
_MODEL_REPLACED = (rf"\b(?:re-?run\w*|re-?execut\w*|run\w* (?:it |the cell |that cell )?again|execut\w* (?:it |the cell )?again)\b[^.;]{{0,60}}?"
                   rf"\b(?:load\w*|creat\w*|build\w*|instantiat\w*) (?:the |a |my )?(?:\w+ )?{_MODEL_WORD}\b|"
                   rf"\b(?:cell|code|function|block)\b[^.;]{{0,20}}?\b(?:that |which )?(?:load\w*|creat\w*|build\w*) (?:the |a |my )?(?:\w+ )?{_MODEL_WORD}\b"
                   r"[^.;]{0,30}?\b(?:re-?runs?|re-?ran|re-?run\w*|runs? again|ran again|re-?execut\w*|(?:a|the) second time|twice)\b|"
                   rf"\b(?:re)?load\w* (?:it|the model|the same model|a (?:new|different|second|another) model|another model) again\b|"
                   rf"\bload(?:ing)? (?:it |the model )?(?:a|the) second time\b|"
                   # an app switching what it serves: "changing the model from sd1.5 to sd2"
                   rf"\b(?:chang|switch|swap)\w* (?:the |my |our )?(?:\w+ )?{_MODEL_WORD} from [\w./-]+ to [\w./-]+|"
                   r"\b(?:use|using|select\w*|pick\w*|load\w*) (?:a |one )?(?:different|another) (?:model|checkpoint|control\w*|lora)\b[^.;]{0,40}?\b(?:then|and then)\b|"
                   # "switch to the canny preprocessor and model, click generate and it errors"; "the previous model
                   # doesn't get taken out of memory when switching"
                   r"\b(?:switch\w*|swap\w*) (?:back )?to (?:the |a |another |a different )?(?:[\w-]+ ){0,2}(?:model|checkpoint|preprocessor|controlnet|lora|pipeline)s?\b|"
                   r"\b(?:doesn't|does not|don't|do not|aren't|are not|isn't|is not|never) (?:get |gets )?(?:taken out of|removed from|unloaded from|freed from|released from|evicted from) "
                   r"(?:the )?(?:(?:gpu |vram |video )?memory|v?ram|gpu) when (?:you |i |we )?(?:switch|swap|change|load)\w*|"
                   # a pipeline's first model kept while the next loads: "after the transcription the Whisper model is
                   # not properly garbage collected", "both models are loaded at the same time"
                   # (whatever it is called when the next one is named: "the recognizer isn't freed before the second model")
                   rf"\b{_MODEL_WORD}\b[^.;]{{0,20}}?\b{_NOT_FREED}|\b{_NOT_FREED}[^.;]{{0,20}}?\bbefore (?:the |a )?(?:next|second|other|new|following)\b|"
                   rf"(?:\bboth (?:the |my )?[\w-]+ (?:{_MODEL_WORD} )?and (?:the |my )?[\w-]+ (?:{_MODEL_WORD} )?|\b(?:both|the two|two) (?:of (?:the |my )?)?{_MODEL_WORD} )(?:are |get |stay |sit )?(?:loaded|kept|held|resident) "
                   r"(?:on the gpu |in (?:gpu |video )?memory |into (?:gpu |video )?memory )?(?:at the same time|at once|together|simultaneously)\b")
# The program freed what it held and the memory did not come back.
_FREED_BY_THE_PROGRAM = r"\bdel\b|\bdelet\w*|gc\.collect|\bunload\w*|\bfree(?:d|s|ing)? (?:the |it|them|my )"
_MEMORY_STAYED = (r"\b(?:(?:is|was|are|were|gets?|got) (?:never|not) (?:released|freed|returned|given back)|never (?:released|freed|returned|given back|goes? down|comes? back)|"
                 r"(?:isn't|wasn't|aren't|weren't) (?:released|freed|returned)|not (?:released|freed)|"
                 r"(?:stays?|remains?|stayed|remained) (?:allocated|occupied|in use|reserved))\b|"
                 # the allocator's own count unchanged: "memory_allocated() stays at 4584986624"
                 r"\bmemory_(?:allocated|reserved)\(\)[^.;]{0,20}?\b(?:stays?|stayed|remains?|remained|is still|still reads|does(?: not|n't) (?:drop|change|go down))\b")
# A forward's outputs bound to names in the note ("policy, value = model(x)", "out = net(batch)"):
# outside no_grad they hold the graph, and through it the weights, for as long as the names live.
# (a lower-case callee: "model = Model(...)" builds a module, it runs no forward)
_FORWARD_OUTPUTS_BOUND = r"\b\w{1,40}(?:, ?\w{1,40}){0,5} ?= ?(?-i:(?:self\.)?(?:[a-z_]\w*?)?(?:model|net|network|encoder|decoder|policy)\w*)\((?!\s?\))"
# Several processes of one program on one GPU: workers, replicas or actors sharing a card (each
# TensorFlow or JAX process reserves most of it at start; fractional GPU requests are only a schedule).
_SEVERAL_PROCESSES_ONE_GPU = (r"\bworkers_per_replica\b|\b(?:workers?|processes|replicas?) per (?:gpu|replica|card|device)\b|"
                              r"\bnum_gpus\s?[=:]\s?0?\.\d+|\bfractional (?:num_gpus|gpus?)\b|\bevery (?:worker|replica|process|actor) but one\b|"
                              r"\b(?:several|multiple|two|three|four|\d+|more than one) (?:\w+ ){0,2}(?:workers|replicas|processes|instances|copies|actors|deployments|pipelines)\b"
                              r"[^.;]{0,60}\b(?:one|a single|the same|same) (?:gpu|card|device)\b")
# Fewer processes on the node is what fits: "reducing the number of processes per node (21 instead of
# 42) resolves it" says they were sharing its GPUs, shown rather than guessed.
_FEWER_PROCESSES_FIT = (r"\b(?:reduc\w*|lower\w*|decreas\w*|fewer|less)\b[^.;]{0,20}?\b(?:number of )?(?:mpi )?(?:processes|ranks|workers|instances|jobs)"
                        r" per (?:node|machine|host|gpu|card|device)\b[^.;]{0,60}?\b(?:resolves?|resolved|solves?|solved|fix(?:es|ed)?|helps?|helped|works?|worked|fits?|avoids?)\b")
# Gradient accumulation named beside a failure that persists: "batch 4 with gradient_accumulation_steps=64
# still runs out of memory".
_STILL_FAILS = r"\bstill\b[^.;]{0,40}?\b(?:runs?|ran|fails?|failed|ooms?|out of memory|crash\w*|errors?|breaks?)\b"
# (the operating system, not sliding or attention "windows")
_WINDOWS = (r"\b(?:on|under|with|using|running|in) (?:native |plain )?windows\b(?! subsystem)|\bwindows ?(?:7|10|11|server)\b|"
            r"\bwindows (?:machine|pc|laptop|computer|box|host|desktop)\b|\bwin ?1[01]\b|\bpage ?file\b")
# A sliding-window inferer: its windows run a few at a time, and their outputs are stitched into one
# buffer the size of the whole input.
_SLIDING_WINDOW = r"\bsliding[- ]window (?:inference|prediction|evaluation)\b"
# An input cut into tiles, patches or windows that go through the network together: the tile has a
# fixed size, so a larger input means more tiles in one batch, not larger activations per tile.
_TILED_INPUT = (r"\b(?:tiles?|tiling|split(?:s|ting)?|cuts?|cutting|chops?|chopping|slices?|slicing|divides?|dividing|breaks?|breaking)"
                r" (?:each |every |the |an? |my |our |large |big )*(?:\w+ )?(?:images?|pictures?|photos?|scenes?|frames?|volumes?|slides?|rasters?|inputs?|documents?)"
                r"(?: up)? into (?:\w+ ){0,2}(?:tiles|sub-?windows|patches|crops|chunks|windows|sub-?images|pieces)\b|"
                rf"{_SLIDING_WINDOW}|"
                # every tile sent in one batch: "the tiler puts all subwindows of a large image into a single batch"
                r"\b(?:puts?|putting|places?|stacks?|stacking|sends?|feeds?|passes?|runs?|batches) (?:all|every|each of) (?:the |its )?(?:\w+ )?"
                r"(?:tiles?|sub-?windows?|windows?|patch(?:es)?|crops?|chunks?|sub-?images?|pieces?|slices?)\b[^.;]{0,60}?\b(?:in|into|as|through) (?:a |one |the same )?(?:single )?batch\b")
# The run already works in tiles, one at a time: a tile option set above 0 ("--tile 512": 0 means
# the whole image at once), a tile size, a tiled VAE or upscaler, a "tile command" or "tile strategy".
_TILING_IN_USE = (r"\btil(?:e|ed|ing) (?:command|strategy|mode|option|script|setting)s?\b|(?<![\w-])--?tile(?:[_-]?size)?(?:\s?=\s?|\s)[1-9]\d*\b|"
                  r"\btile[_ ]?(?:size|width|height)\b\s?(?:=|:|of|to|is)?\s?[1-9]\d*\b|\benable_(?:vae_)?tiling\b|"
                  r"\b(?:with|using|use|used|enabled?|enabling|turn(?:ed)? on|tried) (?:the |a )?(?:vae |decoder )?til(?:ing|ed (?:vae|decod\w*|mode|processing|inference))\b|"
                  r"\btiled (?:vae|decod\w*|diffusion|upscal\w*|inference|processing|mode)\b")
# A reinforcement-learning agent, whose experience replay memory stores every transition it sees:
# "the replay buffer", "DQN on Atari", "training the agents to play", "when the agent starts training".
_EXPERIENCE_REPLAY = (r"\b(?:replay[ _](?:buffer|memory)|experience replay|reinforcement learning|RL (?:agents?|training|algorithms?)|"
                      r"D{1,2}QN|DDPG|TD3|atari|gym(?:nasium)? env\w*|agents? to play|(?:the|an?|my|our) (?:rl |dqn )?agents? (?:starts?|learns?|trains?|plays?)|"
                      r"train\w* (?:the |an? |my |our )?(?:rl )?agents?)\b")
# The evaluation fails on its first batch: "when the validation process starts", "upon the start
# of validation", "the first eval batch already fails".
_EVAL_FAILS_AT_START = (r"\b(?:when|as soon as|once|upon|at|right at|on|in) (?:the )?(?:very )?(?:start|beginning|first (?:batch|step|iteration)) of (?:the |each |every )?(?:first )?"
                        r"(?:validation|evaluation|eval|test(?:ing)?|val)\b|"
                        r"\b(?:when|as soon as|once|right when|just as|the (?:moment|instant|second|minute)) (?:the )?(?:validation|evaluation|eval|testing|val)(?: process| loop| phase| step| run)? "
                        r"(?:starts|begins|kicks in|is started|gets started|starts running)\b|"
                        r"\b(?:the )?first (?:validation|evaluation|eval|test|val) (?:batch|step|iteration)\b(?! (?:runs|works|passes|succeeds|goes|is fine))")
# A fused attention kernel named as in use: "flash_attn: fa2", attn_implementation="flash_attention_2",
# SDPA, xformers (negations are checked where it is read).
# ("without flash attention" is denied where it is read, _NEGATABLE; "xformers: false" and "flash attention
# is not installed" here)
_FUSED_ATTENTION = (r"(?:\bflash[-_ ]?attn(?:[-_ ]?(?:2|v2|3))?\b|\bflash[-_ ]?attention(?:[-_ ]?[23])?\b|\bfa[23]\b|"
                    r"\battn_implementation\s?[=:]\s?['\"]?(?:flash_attention_[23]|sdpa)\b|\bscaled_dot_product_attention\b|\bsdpa\b|"
                    r"\bxformers\b|\bmemory[-_ ]efficient attention\b)"
                    r"(?![^.;]{0,25}?\b(?:not|n't) (?:installed|available|enabled|used|supported|working)\b|\s?[=:]\s?['\"]?(?:false|off|none|disabled)\b)")
# The memory depends on whether a fused attention kernel is present: "when flash attention is uninstalled
# the model tries to use 48 GB, with it 6.5 GB", "without xformers it needs 20 GB".
_KERNEL = r"(?:flash[-_ ]?attn\w*|flash[-_ ]?attention\w*|xformers|sdpa|memory[-_ ]efficient attention)"
_ATTENTION_KERNEL_DECIDES = (rf"\b{_KERNEL}\s(?:is |was |are |gets? )?(?:uninstalled|removed|disabled|not installed|missing|turned off|off)\b(?:[^.;]|\.(?=\d)){{0,60}}?\b\d+(?:\.\d+)? ?(?:GB|GiB|G)\b|"
                             rf"\b(?:without|uninstalling|removing|disabling|no) (?:the )?{_KERNEL}\b(?:[^.;]|\.(?=\d)){{0,60}}?\b\d+(?:\.\d+)? ?(?:GB|GiB|G)\b")
# Memory said to grow with the square of the length: "the peak grows 4x when the prompt length doubles",
# "O(L^2) in the sequence length": what grows so is a score matrix over every pair of positions.
_QUADRATIC_IN_LENGTH = (r"\b(?:grows?|goes up|increases?|scales?|rises?|jumps?|quadruples?)\b[^.;]{0,20}?\b(?:4x|4 ?times|four ?fold|fourfold|by a factor of (?:4|four))\b[^.;]{0,30}?"
                        r"\b(?:when|as|if|each time) (?:the )?(?:\w+ )?(?:length|tokens?|sequence|context|prompt|input)\b[^.;]{0,20}?\b(?:doubles?|doubled|is doubled|x ?2|2x)\b|"
                        r"\bquadratic(?:ally)? (?:in|with) (?:the )?(?:(?:sequence|context|prompt|input|token) )?(?:length|tokens|token count)\b|"
                        r"\bO\((?:L|N|n|T|S|seq_len|seq)\s?(?:\^\s?2|²|\*\*\s?2)\)")
# Every item of a set in one batch: "builds one batch_input_ids tensor from all of them", "all the
# sentences of a document at once", "the whole test set in a single forward".
_SET_ITEMS = r"(?:sentences|images|samples|documents|examples|items|inputs|texts|rows|frames|pages|prompts|queries|passages|chunks)"
_WHOLE_SET_ONE_BATCH = (r"\b(?:one|a single|a) (?:big |huge |giant |single )?batch\w*(?: tensor)? (?:from|of|with|containing|out of) (?:all|every)\b|"
                        rf"\ball (?:of )?(?:the |my |its )?(?:\w+ )?{_SET_ITEMS}\b[^.;]{{0,40}}?\b(?:at once|in one batch|in a single batch|in one go|in one forward|as one batch)\b|"
                        r"\b(?:whole|entire|full) (?:data ?set|test set|validation set|eval set|corpus|document) (?:in|as|through) (?:one|a single) (?:batch|forward|pass)\b|"
                        # "passing in a large batch (i.e. 1000 samples)", "a batch of 5000 prompts at once"
                        rf"\b(?:a |one )?(?:large|big|huge|giant|single) batch\b[^.;]{{0,12}}?\(?(?:i\.e\.|e\.g\.|of|with|like)? ?(?:\d{{1,3}},)?\d{{3,}} {_SET_ITEMS}\b|"
                        rf"\ba batch of (?:\d{{1,3}},)?\d{{4,}} {_SET_ITEMS}\b")
# A model built whole and then handed to full sharding: "deepspeed.zero.Init(module=model)", created
# outside the zero.Init context, moved to the GPU before FSDP wraps it.
_BUILT_BEFORE_SHARDING = (r"\bzero\.Init\(\s?module\s?=|\b(?:outside|out of|without|not (?:inside|within|in|under)) (?:of )?(?:the |a )?`?(?:deepspeed\.)?zero\.Init\b|"
                          r"(?:\.cuda\(\)|\.to\((?:device|['\"]cuda\S*['\"])\))[^.;]{0,40}?\bbefore (?:wrapping|fsdp|FullyShardedDataParallel|sharding)\b|"
                          # the note names where it failed: the wrapper's own move of the whole module
                          # ("it runs out at self.module.to(self.device)", "where the engine moves the model to the GPU")
                          r"\b(?:self\.)?module\.to\(self\.device\)|"
                          r"\b(?:engine|wrapper|initiali[sz]e\w*|strategy)\b[^.;]{0,40}?\bmov(?:es|ed|ing) (?:the )?(?:whole |full |entire )?(?:module|model) (?:on)?to (?:the )?(?:device|gpu|cuda)\b")
# Training that fits while its evaluation fails: "the training loop works perfectly fine with batch
# sizes of 96-128; it's only when validate() is called", "training is fine, validation runs out".
_EVAL_ONLY_FAILS = (r"\btrain\w*(?: (?!(?:but|and|only|until|except)\b)\w+){0,4}? (?:works|runs|goes|is|went|ran|worked|was)(?: \w+)? (?:fine|well|ok|okay|through|without (?:a |any )?(?:problems?|issues?|errors?))\b"
                    rf"[^;]{{0,120}}?\b(?:only|but|until|except)\b[^.;]{{0,40}}?\b{_EVAL_WORD}|"
                    rf"\b(?:it'?s |it is )?only (?:when |during |in |at |once )?(?:the )?{_EVAL_WORD}\w*(?:\(\))?(?: (?:step|phase|loop|function|stage|pass))? (?:is |gets )?(?:called|run|starts?|begins?|kicks in|crash\w*|fails?|runs? out|ooms?|dies)?")
# Growth counted in epochs ("memory grows every epoch", "after 80 epochs"): it outlives each epoch's
# evaluation.
_ACROSS_EPOCHS = r"\b(?:every|each|per|across|over|from one|between) epochs?\b|\bafter (?:\d+|many|several|a few|some) epochs\b"
# The growth placed in the evaluation that runs between training epochs: "a memory leak during the
# validation routine", "the validation loop keeps growing". Evaluation runs no backward, so what it piles
# up is results and metric state kept from batch to batch, not a training step's graph.
_LEAK_IN_EVAL = (r"\b(?:leak\w*|grow\w*|increas\w*|accumulat\w*|climb\w*|piles? up)\b[^.;]{0,40}?\b(?:during|in|inside|within|while|at) "
                 r"(?:the |each |every |a )?(?:validation|evaluation|eval|val)(?:[ _](?:routine|loop|step|phase|stage|run|pass|epochs?))?\b|"
                 r"\b(?:validation|evaluation|eval|val)[ _](?:routine|loop|step|phase)s? (?:leaks?|is leaking|keeps? growing|grows|accumulates)\b")
# A metric object named ("torchmetrics' FID", "the lightning metric SSIM", "the AUROC metric"): many
# keep every batch's predictions and targets as their state until compute() and reset().
_METRIC_OBJECT = (r"\btorchmetrics\b|\b(?:pl|pytorch[ _]lightning|lightning)(?:\.| )metrics?\b|\bmetric (?:object|class|state|collection)s?\b|"
                  r"\b(?:ssim|psnr|fid|lpips|auroc|auc|roc|map|iou|dice|f1|accuracy|precision|recall|bleu|rouge|wer) metrics?\b|"
                  r"\bmetrics?[ .]?(?:ssim|psnr|fid|lpips|auroc|auc|map|iou|dice)\b|\b\w+_metric\.(?:update|compute)\(")
# Memory that builds up over an epoch and comes back when the epoch ends: every step's results are
# kept for the epoch's end (Lightning's outputs for *_epoch_end, a metric's accumulated state, a list).
_FREED_AT_EPOCH_END = (r"\b(?:drops?|dropping|falls?|goes (?:back )?down|freed|released|comes back|resets?|is reclaimed)\b[^.;]{0,40}?"
                       r"\b(?:when|at|after|once|as) (?:the |each |every |an |that |this |its |the current )?epoch (?:ends|is over|finishes|is done|completes|is finished|is complete)\b|"
                       r"\b(?:drops?|falls?|goes (?:back )?down|freed|released|resets?)\b[^.;]{0,30}?\bat (?:the )?end of (?:the |each |every |an )?epoch\b")
# Memory an evaluation (or a generation) used is still held once it is over: something outlives
# the phase (its outputs cached for a hook, a list of predictions), since activations kept for a
# backward that never comes are freed with those outputs.
_NOT_RELEASED = (r"(?:(?:is|are|was|were|does|do|did|gets?|got)\s(?:not|never)|isn't|aren't|wasn't|weren't|doesn't|don't|didn't|never) "
                 r"(?:\w+ )?(?:released|freed|free[ds]?|given back|returned|cleared|deallocated|reclaimed|"
                 r"go(?:es)? (?:back )?down|drop(?:s|ped)?|come(?:s)? back)\b")
_PHASE_OVER = (r"\b(?:after|when|once|at the end of|as soon as) (?:the |each |every |a |an |my |our )?"
               r"(?:validation|evaluation|eval|evaluating|validating|testing|test|inference|prediction|predicting|generation|sampling)"
               r"(?: (?:loop|phase|step|pass|run|epoch|stage))?"
               r"(?: (?:ends|ended|is over|was over|finishes|finished|is done|was done|completes|completed|is finished|has finished|returns))?\b")
_HELD_AFTER_PHASE = (rf"{_NOT_RELEASED}[^.;]{{0,40}}?{_PHASE_OVER}|{_PHASE_OVER}[^.;]{{0,50}}?{_NOT_RELEASED}|"
                     rf"\b(?:stays?|stayed|remains?|remained|is still|are still) (?:\w+ )?(?:allocated|occupied|reserved|in use|held|high|taken)\b[^.;]{{0,30}}?{_PHASE_OVER}|"
                     rf"{_PHASE_OVER}[^.;]{{0,50}}?\b(?:stays?|stayed|remains?|remained|is still|are still) (?:\w+ )?(?:allocated|occupied|reserved|in use|held|high|taken)\b")
# The run is a library's own published recipe, unchanged ("with the default settings", "the
# official config, no modifications"): memory that grows there is not the user's code's.
_UNMODIFIED_RECIPE = (r"\b(?:with |using |on |at )?(?:the |its |their )?default (?:settings|config(?:uration)?s?|hyper-?parameters|parameters|options|recipe)\b|"
                      r"\bofficial (?:\w+ )?(?:configs?|scripts?|examples?|recipes?|code|implementation)\b|"
                      r"\b(?:provided|stock|reference) (?:\w+ )?(?:configs?|scripts?|examples?|recipes?)\b|\bunmodified\b|"
                      r"\bwithout (?:any )?(?:modifications?|changes|changing anything)\b|"
                      r"\b(?:did ?n[o']t|didn't|haven't|have not|no) (?:modif\w*|chang\w*|touch\w*|edit\w*) (?:anything|to the (?:code|config)|the (?:code|config|script))\b|"
                      r"\bout of the box\b")
_RECIPE_CHANGED = r"\b(?:changed|modified|adapted|customi[sz]ed|edited|tweaked|my own|custom)\b"
# TensorFlow's growth mode (allow_growth, set_memory_growth) extends its pool piece by piece; a run
# that fits without it and fails with it lost to the pieces, not to the workload.
_GROWTH_MODE = r"allow_growth|set_memory_growth|memory growth|TF_FORCE_GPU_ALLOW_GROWTH"
_GROWTH_MODE_OFF = (r"\b(?:without|disabl\w*|turn(?:ing|ed|s)? (?:it )?off|switch(?:ing|ed|es)? (?:it )?off|remov\w*|unset\w*|no)\b|"
                    r"\b(?:is|are|set to|=)\s?(?:off|false|0)\b")
_FITS_SAID = r"\b(?:fits?|fit fine|works?|worked|runs? fine|ran fine|trains?|succeeds?|is fine|no (?:oom|error))\b"
# PyTorch's DataParallel warns when one of its GPUs has much less memory or fewer cores than another.
_GPU_IMBALANCE_WARNING = r"There is an imbalance between your GPUs|exclude GPU \d+ which\s+has less than 75% of the memory"
# The first batch runs and the second one fails, every time: what the first left behind is still
# held when the second needs the same room.
_SECOND_ROUND_FAILS = (r"\bafter (?:a single|one|the first|1) (?:\w+ )?(?:batch|iteration|step|call|forward(?: pass)?|sample|image|input|request)\b(?: (?:has |had )?(?:run|ran|finished|completed|is done|was done))?|"
                       r"\b(?:on|at|in|during) the (?:second|2nd) (?:\w+ )?(?:batch|iteration|call|forward(?: pass)?|pass|sample|image|input|request)\b|"
                       r"\b(?:the )?(?:second|2nd) (?:batch|iteration|call|forward(?: pass)?|pass|request) (?:always )?(?:fails|crashes|runs out|ooms|dies)\b")
# Vocabulary sizes of language-model families, from their published configs: a small model of a
# large-vocabulary family spends more memory on its logits than on its weights.
_FAMILY_VOCAB: list[tuple[str, int]] = [
    (r"\bqwen[- ]?(?:1\.5|2|2\.5|3)\b", 151_936),
    (r"\bllama[- ]?3(?:\.\d)?\b", 128_256),
    (r"\bgemma[- ]?3\b", 262_144),
    (r"\bgemma(?:[- ]?2)?\b", 256_000),
    (r"\bbloom(?:z)?\b", 250_880),
    (r"\bmistral[- ]?nemo\b", 131_072),
    (r"\b(?:mt5|mbart|xlm-?r(?:oberta)?)\b", 250_000),
]
# Parameter counts of image-generation families whose names carry none (all components, from
# their published configs): what their weights take when the note gives no size.
_FAMILY_PARAMS: list[tuple[str, float]] = [
    (r"\bsdxl\b|stable[- ]diffusion[- ]xl", 3.5e9),
    (r"\bflux\.?1\b|\bflux[- ](?:(?:fill|redux|depth|canny)[- ])?(?:dev|schnell|kontext|fill|pro)\b", 16.9e9),
    (r"\bsd ?3(?:\.5)?[- ]?large\b", 12.7e9),
    (r"\bsd ?3(?:\.5)?(?:[- ]?medium)?\b|stable[- ]diffusion[- ]3", 7.0e9),
    (r"\bsd ?(?:v?1\.[45]|v?2(?:\.[01])?)\b|stable[- ]diffusion[- ](?:v?1\.[45]|v?2)", 1.07e9),
    # Released checkpoints named by their size word (model cards' parameter counts): a report that
    # names one says how large the model is without a number.
    (r"\bwhisper[- _](?:large(?:[- _]v[23])?(?![- _]v3[- _]turbo|[- _]turbo))\b|\bwhisper large\b", 1.55e9),
    (r"\bwhisper[- _]medium\b", 769e6),
    (r"\bwhisper[- _]small\b", 244e6),
    (r"\bseamless ?m4t[- _]?(?:v2[- _])?large\b|\bseamlessm4t_v2_large\b", 2.3e9),
    (r"\bseamless ?m4t[- _]?medium\b", 1.2e9),
    (r"\b(?:flan[- _])?t5[- _]xxl\b|\bt5[- _]11b\b", 11e9),
    (r"\b(?:flan[- _])?t5[- _]xl\b|\bt5[- _]3b\b", 3e9),
    (r"\b(?:flan[- _])?t5[- _]large\b", 770e6),
    (r"\bgpt-?2[- _]xl\b", 1.5e9),
    (r"\bgpt-?2[- _]large\b", 774e6),
    (r"\bgpt-?2[- _]medium\b", 355e6),
    (r"\bxlm-roberta[- _]large\b", 560e6),
    (r"\b(?:bert|roberta|deberta(?:-v3)?)[- _]large\b", 355e6),
    (r"\bxlm-roberta[- _]base\b", 278e6),
    (r"\bdeberta(?:-v3)?[- _]base\b", 184e6),
    (r"\b(?:bert|roberta|electra)[- _]base\b", 125e6),
    (r"\bdistil(?:bert|roberta)(?:[- _]base)?\b", 82e6),
    (r"\bvit[- _]h(?:uge)?(?:[- _/]\d+)?\b", 632e6),
    (r"\bwav2vec ?2(?:\.0)?[- _]large\b|\bhubert[- _]large\b|\bwavlm[- _]large\b", 317e6),
]
# Embedding tables with millions of rows (users, items, entities): in recommenders and graph
# embeddings the tables are the model.
_EMBEDDING_ROWS = (r"((?<![\w.,])\d+(?:\.\d+)?\s?(?:[mM]\b|million)|(?<![\w.,])\d{1,3}(?:,\d{3}){2,}|(?<![\w.,])\d{7,}) "
                   r"(?:\w+ )?(?:items|users|products|entities|ids|categories|rows|customers|ads|songs|movies)\b")
# Preference and RL fine-tuning that scores every batch against a frozen reference model: two copies
# of the weights, and chosen and rejected answers run together.
_REFERENCE_MODEL_METHOD = r"\b(?:dpo|ppo|kto|ipo|rlhf|simpo)\b|DPOTrainer|PPOTrainer|KTOTrainer|\bref(?:erence)?[_ ]model\b"
# Sequence models without (or with few) attention layers: state-space models and their relatives.
_ATTENTION_FREE = r"\b(?:mamba\d?|bamba|jamba|rwkv\w*|hyena|retnet|state[- ]space models?|s4|ssm)\b"
# Kept tensors that still carry their graph: kept inside a gradient-recording block, or said to
# keep it ("without detaching", "with requires_grad").
_KEPT_WITH_GRAPH = (r"\binside (?:the |an? )?(?:autograd\.record\(\)|autograd\.record|gradienttape|tape|grad(?:ient)?[- ]recording)\b|"
                    r"\bwithout (?:\.?detach\w*|calling \.?detach\(\))|\b(?:not|never|n't) detach\w*\b|still requir\w* grad|"
                    # copies moved to the CPU, yet GPU memory grows: what stays behind on the GPU is each
                    # copy's autograd history ("I accumulate on the CPU with .cpu(), but GPU memory increases")
                    r"(?:\.cpu\(\)|on the cpu\b|to the cpu\b).{0,120}?\b(?:gpu|cuda) memory (?:\w+ ){0,2}?(?:increas|grow|climb|ris)\w*|"
                    r"\b(?:gpu|cuda) memory (?:\w+ ){0,2}?(?:increas|grow|climb|ris)\w*[^.;]{0,80}?(?:although|though|even though|yet|but)\b[^.;]{0,40}?(?:\.cpu\(\)|on the cpu\b|to the cpu\b)")
# Generative adversarial networks: their "generated images" are a generator's forward pass.
_GAN = r"\bgans?\b|pix2pix\w*|cyclegan|stylegan\w*|\bdcgan\b|\bsrgan\b|esrgan|discriminator"
# A generator fed a latent vector or code (a GAN's z or w, a VAE's code): one forward pass makes
# the image, with no denoising loop, no prompt and no tokens.
_LATENT_CODE_INPUT = (r"\blatent (?:vectors?|codes?|z)\b|\binput_is_latent\b|"
                      r"\b(?:from|with|feed\w*|pass\w*|give\w*) (?:an? |the |my |some |random )?(?:\d+ ?x ?\d+ )?(?:random )?(?:latents?|noise vectors?|z vectors?)\b")
def _image_generator(note: str) -> re.Match[str] | None:
    """A GAN named, or a generator fed latent codes that is no denoising model: one forward pass
    makes its images."""
    return _search(_GAN, note) or (None if _search(_DENOISING_MODEL, note) else _search(_LATENT_CODE_INPUT, note))


# A denoising model named as such (its "latents" are the denoising loop's)
_DENOISING_MODEL = r"diffusion|diffusers|\bunet\b|\bsd(?:xl)?\b|\bprompts?\b|text-to-image|\bdenois\w*|\bsampler\b|\bscheduler\b"
# What says the run is training the model, not using it
_TRAINS_THE_MODEL = r"\btrain(?!ed\b)\w*|\bfine-?tun\w*|\bepochs?\b|\bbackward\b|\bloss\b|\boptimi[sz]er\b|\bdiscriminator\b"
# Batches whose inputs grow as the run goes (sorted shortest first): each one asks for blocks larger
# than any the cache kept, so cached memory piles up in sizes no later batch can use.
_LENGTHS_INCREASING = (r"\b(?:shortest|smallest)\b[^.;]{0,40}?\b(?:to|then|before|up to)\b[^.;]{0,20}?\b(?:longest|largest|biggest)\b|"
                       r"\bsorted (?:by|on) (?:\w+ )?(?:length|size)s?\b(?![^.;]{0,20}\bdescending\b)|"
                       r"\b(?:increasing|ascending|growing) (?:sequence |input |batch |sample )?(?:lengths?|sizes?|shapes?)\b")
# An input size that grows on a schedule as training goes on ("increase_seq_length_train = True", "the
# sequence length doubles every epoch", progressive resizing): the later epochs' inputs are larger
# than the first ones, so the run fits for a while and then cannot.
_LENGTH_SCHEDULE_GROWS = (r"\bincreas\w*[_ ](?:the )?(?:seq(?:uence)?|context|input|image|crop|patch|max)[_ ]?(?:len(?:gth)?|size|resolution)s?(?:[_ ]\w+)?\s?(?:=|:)\s?(?:true|1|yes)\b|"
                          r"\b(?:seq(?:uence)?|context|input|image|crop)[_ ]?(?:len(?:gth)?|size|resolution)s?\b[^.;]{0,40}?\b(?:doubles?|doubled|doubling|multipl\w*|grows?|increases?|is increased) "
                          r"(?:by \w+ )?(?:every|each|per|after|with (?:each|every)) (?:\w+ )?(?:epochs?|stages?|phases?|rounds?)\b|"
                          # the verb first: "my curriculum doubles the sequence length every two epochs"
                          r"\b(?:doubl|increas|multipl|rais|grow)\w* (?:the |its |my )?(?:seq(?:uence)?|context|input|image|crop)[_ ]?(?:len(?:gth)?|size|resolution)s? "
                          r"(?:by \w+ )?(?:every|each|per|after) (?:\w+ )?(?:epochs?|stages?|phases?|rounds?)\b|"
                          r"\bprogressive (?:resizing|growing|resolution)\b|\bcurriculum (?:on|over|by) (?:sequence |input )?(?:length|size)\b")
# A failure that began a few days ago on a setup that had run, with nothing of the user's said to
# have changed: a hosted notebook, an image or a dependency updated underneath.
_STARTED_RECENTLY = (r"\b(?:(?:a|one|two|three|four|five|a few|few|couple of|\d+(?:\.\d+)?)\s+(?:and a half\s+)?(?:days?|weeks?)\s+ago|yesterday|last week|since this morning)\b")
_STARTED_WORD = r"\b(?:started|begun|began|appeared|shows? up|showed up|suddenly|out of (?:the )?blue|all of a sudden)\b"
# A leak pinned to one library component: that metric, layer or function grows memory, while its
# equivalents (other metrics, the same computation written by hand) do not.
# Higher-order gradients (gradient penalties, meta-learning, Hessian-vector products): backward
# records the graph of the gradient computation, which the gradients then keep alive.
# A gradient penalty (WGAN-GP, R1, path-length regularisation) and the other second-order methods
# need that graph by construction: they differentiate a gradient.
_GRAPH_OF_GRADIENTS = (r"\bcreate_graph\s*=\s*true\b|\bgradient[_ ]penalt(?:y|ies)\b|\b(?:calc|calculate|compute|get)_gradient_penalty\b|"
                       r"\bwgan[-_ ]?gp\b|\br1[-_ ](?:penalty|regulari[sz]\w*|reg)\b|\bpath[-_ ]length (?:penalty|regulari[sz]\w*)\b|"
                       r"\bdouble[- ]backward\b|\b(?:second|higher)[- ]order (?:gradients?|derivatives?)\b|\bhessian[- ]vector products?\b|\bmaml\b")
_LIBRARY_PART_ISOLATED = (# growth tied to each call of a library component and the user's code cleared ("memory grows with
                          # every call of the Adam optimizer step ... not caused by this repo's code")
                          r"\b(?:grows?|increases?|leaks?|goes up|climbs?) with (?:every|each) (?:call|invocation|use) (?:of|to) (?:the )?"
                          r"(?:[\w.]+ ){0,2}(?:optimi[sz]er|library|layer|op|operator|function|kernel|module|step)\b"
                          r"(?=[\s\S]{0,200}?\b(?:not (?:caused by|in|from) (?:this|the|my|our) (?:repo|code|project|script)|a (?:pytorch|torch|tensorflow|library) (?:problem|bug)|(?:other|another|older|newer|different) (?:pytorch |torch |tensorflow )?version))|"
                          # a leak the user locates in a library's own layer or function ("a leak in nn.Embedding", "tf.map_fn leaks")
                          # (autograd excepted: it frees a graph once nothing references it, so a leak "in
                          # torch.autograd.grad" is a graph the caller's tensors keep)
                          r"\bleak\w* (?:in|inside|from) (?:the )?(?:(?:nn|torch|tf|keras|jax|F|cunn|cutorch|tfa|layers)\.)(?!autograd\b)[\w.]+|"
                          r"\b(?:(?:nn|torch|tf|keras|jax|F|cunn|cutorch|layers)\.)(?!autograd\b)[\w.]+(?:\(\))? (?:itself )?(?:seems to |appears to |keeps |is |must be )?(?:be )?leak(?:s|ing)\b|"
                          # a leak the user puts in the framework or runtime itself ("a memory leak in DirectML")
                          r"\bleak\w* (?:in|inside|of|within) (?:the )?(?:pytorch|torch|tensorflow|keras|jax|xla|directml|rocm|mps|metal|onnx ?runtime|cudnn|cupy|"
                          r"(?:gpu |cuda |nvidia )?driver|framework|runtime|backend)\b(?! (?:code|script)s?\b)(?!\.\w)|"
                          r"\b(?:pytorch|tensorflow|keras|jax|directml|rocm|onnx ?runtime) (?:itself )?(?:has|have|seems to have|must have) a (?:memory )?leak\b|"
                          r"\b(?:pytorch|tensorflow|keras|jax|directml|rocm|onnx ?runtime|the (?:driver|framework|runtime))\b (?:itself )?(?:is|are|seems to be|must be|might be|could be) leak(?:ing|s)?\b|"
                          r"\bonly (?:the |this |that |one )?[\w.]+(?: \w+)? (?:metric|layer|op|operator|function|module|class|call|loss)\b[^.;]{0,30}\b(?:causes?|leaks?|grows?|is responsible)|"
                          r"\bisolat\w* (?:it |the (?:leak|growth|problem|issue) )?to (?:the |a |one )?[\w.()]+|"
                          r"\b(?:narrow\w*|track\w*|trac\w*|pinn\w*|bisect\w*) (?:it |this |the (?:leak|growth|problem|issue) |(?:a |the )?(?:[\w-]+ )?(?:memory )?(?:leak|growth) )?down to\b|"
                          r"\b(?:the )?(?:other|plain|built-in|standard) (?:[\w/.-]+ ){1,4}(?:next to it |beside it |alongside )?(?:do not|don't|does not|doesn't|never) (?:grow|leak|increase)\b|"
                          r"\b(?:by hand|manually|hand-?written|my own (?:implementation|version|code)|plain torch)\b(?:[^.;]|\.(?!\s)){0,40}?\b(?:does not|doesn't|did not|didn't|no leak|stays (?:flat|constant)|is fine)")
# Tokenizers and generation utilities warn when an input is longer than the length set for it
# (transformers' "Token indices sequence length is longer than the specified maximum sequence length").
_OVERLONG_INPUT_WARNING = (r"Token indices sequence length is longer than the specified maximum sequence length[^\n]{0,40}|"
                           r"input_length: \d+ is bigger than [^\n]{0,30}max_length: \d+|"
                           r"\b(?:sequence|input|prompt) length \(?\d+\)? (?:exceeds|is longer than|is greater than) (?:the )?(?:model'?s? )?(?:maximum|max)\b[^\n]{0,30}")
# The same work succeeding when nothing runs before it in the process.
_WORKS_ALONE = r"\b(?:on its own|alone|by itself|individually|separately|in isolation) (?:works|worked|is fine|runs|ran|fits|passes|succeeds)\b"
# The batch size found automatically (lm-eval's batch_size auto, accelerate's find_executable_batch_size,
# the HF Trainer's auto_find_batch_size): measured once, on whatever inputs came first.
_AUTO_BATCH = (r"batch[_ ]size[ =:]*auto\b|auto_find_batch_size|find_executable_batch_size|auto[- ]?detect\w* (?:the )?batch|"
               # Ultralytics' AutoBatch (batch=-1), Lightning's batch-size finder
               r"\bautobatch\b|\bbatch\s?=\s?-1\b|auto_scale_batch_size|scale_batch_size|batch[_ ]size (?:finder|tuner)")
_DETECTION = (r"\bdetect(?:or|ion)\b|segmentation|\byolo\w*|r-?cnn|retinanet|\bssd\d*\b|bounding box|anchors?|point ?cloud|"
              # segmentation architectures by family name
              r"\bseg(?:net|former)\b|\bdeeplab\w*|\bpspnet\b|\bfcn\b|\bmask ?former\b|\bsemantic seg\w*|"
              # detection's own post-processing: masks pasted back at the image's size, box IoU matrices,
              # DETR-family detectors ("mask evaluation", "paste_mask", "pairwise_iou", "Mask2Former", "MaskDINO")
              r"\bmask (?:evaluation|eval|head|predictions?)\b|\bpaste_masks?\b|\bpairwise_iou\b|\bbox_iou\b|\bmask\d?(?:former|dino)\b|\bdetr\w*|\bdino\b")
_VARIABLE_LENGTH = (r"translation|\bnmt\b|seq2seq|speech|\basr\b|transducer|\brnnt\b|audio|sentences?\b|variable[- ]length|bucket|"
                    r"max[-_ ]?duration|utterances?|\bwav\b|"
                    # ("I'm not using dynamic shapes" says the shapes are fixed)
                    r"(?<!\bno )(?<!\bnot )(?<!\bnot using )(?<!\bwithout )(?<!\bnor )(?:varying|different|dynamic|variable) (?:input |sequence |image )?(?:lengths?|sizes?|shapes?)")
# Generating images or video (not tokens) is a diffusion model's sampling loop, not a KV cache.
_DIFFUSION = (r"diffusion|unet2dcondition|x4[- ]upscaler|diffusers|\bsdxl\b|\bsd ?(?:v?[12](?:\.\d)?|x\d)\b|img2img|txt2img|text-to-image|image-to-video|dreambooth|text-to-video|video model|"
              r"\bdit\b|diffusion transformer|\bflux\.?[12]\b|\bflux\.?[12]?[- ](?:dev|schnell|kontext|klein|pro)\b|\bsd ?3(?:\.5)?\b|pixart|controlnet|cogview|cogvideo\w*|"
              r"(?<!\ba )(?<!\ban )(?<!\bthe )(?<!\bmy )\bgenerat\w* (?:\w+ ){0,3}(?:images?|pictures?|pics|photos?|videos?|artworks?)\b|"
              r"\b(?:image|video|picture|art) generation\b|\bhunyuan ?video\b|\bwan ?2\.[12]\b|\bltx-?video\b")
# Speech and audio models: their inputs are recordings whose durations have a long tail.
_AUDIO = (r"speech|\basr\b|\btts\b|\bvad\b|voice activity|vocoder|tacotron|wav2vec|whisper|conformer|transducer|\brnnt\b|"
          # speech model families by name (acoustic models, TTS models, neural codecs)
          r"\bjasper\d*|\bquartznet|\bcitrinet|fastspeech|hifi-?gan|\bvits\b|deepspeech|wavlm|\bhubert\b|\bespnet|encodec|"
          r"\bvoices?\b(?! (?:of|in) (?:the|my) )|"
          r"utterances?|\baudio\b|\bwavs?\b|\bspeakers?\b|diari[sz]\w*|\bmel[- ]?spectrograms?\b|\bkhz\b|recordings?\b")
# Gradient-boosted trees and GPU dataframes: the whole training matrix (and its histograms) lives on
# the device; there is no batch to make smaller.
_GRADIENT_BOOSTING = (r"\bxgboost\b|\bxgb\.|gpu_hist|tree_method|\bdmatrix\b|XGB(?:Classifier|Regressor|Ranker)|lightgbm|\blgbm\b|"
                      r"catboost|\bcuml\b|\bcudf\b|\brapids\b")
# Video models: activations grow with frames x height x width.
_VIDEO = (r"\bvideos?\b|\bnum_frames\b|\b\d+ frames (?:per|each|a) (?:clip|sample|video)\b|\bframes per clip\b|\bclips? of \d+ frames\b|"
          r"\btext-to-video\b|\bimage-to-video\b|\bt2v\b|\bi2v\b|"
          # video generators and motion modules by name: their frames are denoised together
          r"\banimatediff\b|\bstable[- ]video[- ]diffusion\b|\bsvd(?:[- _]xt)?\b|\bcogvideox?\b|\bhunyuan[- ]?video\b|\bltx[- ]?video\b|\bmotion[_ ]module\b")
# GPU libraries with their own allocator (they cudaMalloc directly, outside a framework's cache).
_OWN_ALLOCATOR_LIBRARY = r"\bfaiss\b|\bcupy\b|\bnumba\b|\bxgboost\b|\bcudf\b|\bcuml\b|\bonnxruntime\b|\btensorrt\b|\bctranslate2\b"
_DL_FRAMEWORK = r"\b(?:pytorch|torch|tensorflow|keras|jax)\b"
# Images produced by rendering a scene (radiance fields, Gaussian splatting), not by a diffusion model.
_RENDERER = r"\bnerfs?\b|radiance fields?|gaussian splatting|\b3dgs\b|\bsplat\w*|\brender(?:s|ed|ing)? (?:a |the |novel )?(?:views?|rays?|scenes?)\b|\brays?[_ ]?chunk"
_LLM = (r"\bllama|\bgpt|mistral|qwen|deepseek|falcon|\bphi-?\d|gemma|\bopt-\d|bloom|\bllms?\b|\bchat\b|-chat\b|(?<!de)(?<!en)coder|"
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
# Asking how to run in half precision: the run is in full precision now ("is there a way to
# convert it to half precision?", "how can I load the model in fp16").
_HALF_WANTED = (r"\b(?:is there a way|is it possible|how (?:do|can|could) (?:i|we|you)|can (?:i|we|you)|could (?:i|we|you)|any way|want to|would like to|need to)\b"
                r"[^.;?]{0,40}?\b(?:convert|cast|switch|change|run|load|use|put)\w*\b[^.;?]{0,30}?\b(?:to|in|into|as|with) (?:half(?:[- ]precision)?|fp16|float16|bf16|bfloat16)\b")
_LOW_PRECISION = (r"\bfp16\b|\bbf16\b|bfloat16|float16|half precision|(?<!no-)(?<!no )\bhalf\b(?! (?:of|the|an?|as|way|an hour|a day)\b)(?!-(?:way|full|empty))|\bint8\b|\bint4\b|\b[48]-?bit\b|quantiz\w*|\bamp\b|"
                  r"mixed[_ ]precision|mixed_float16|torch_dtype|\bq[2-8](?:_\w+)?\b|\bfp8\b|\bgguf\b|\bawq\b|\bgptq\b")
_ADAM = r"\badam\w*"
# The half-precision run said to work where the 32-bit one fails ("the fp16 script works well").
_HALF_FITS = (rf"\b(?:fp16|float16|bf16|bfloat16|half[- ]precision|half)\b{_NOT_DENIED}{{0,40}}?\b(?:works?|worked|is fine|was fine|fits?|fitted|runs? fine|ran fine)\b|"
              rf"\b(?:works?|worked|fits?|runs? fine|ran fine|is fine)\b{_NOT_DENIED}{{0,20}}?\b(?:in|with|at|using) (?:fp16|float16|bf16|bfloat16|half precision)\b")
# Half precision that needs more than fp32 ("larger models fit using float32 than using bfloat16",
# "with --fp16 it takes more memory than without"): the dtype does not reach the model, or the weights
# are loaded twice.
_HALF = r"(?:fp16|float16|bf16|bfloat16|half(?:[- ]precision)?)"
_FULL = r"(?:fp32|float32|full[- ]precision)"
_HALF_NEEDS_MORE = (rf"\b(?:larger|bigger) models?\b[^.;]{{0,30}}?\b(?:using|with|in) {_FULL}\b[^.;]{{0,10}}?\bthan\b[^.;]{{0,20}}?\b{_HALF}\b|"
                    rf"\b{_HALF}\b[^.;]{{0,40}}?\b(?:uses?|using|takes?|needs?|consumes?|requires?)\b[^.;]{{0,10}}?\bmore (?:gpu |video )?(?:memory|vram)\b[^.;]{{0,15}}?\bthan\b[^.;]{{0,20}}?\b{_FULL}\b")
# Evaluation loops that a framework runs for the user, already under no_grad / inference_mode:
# Lightning's validation/test/predict, Keras' evaluate/predict, detection toolkits' test tools,
# Ultralytics' val, pipelines and generate().
_MANAGED_EVAL = (r"\blightning\b|validation_step|test_step|predict_step|trainer\.(?:validate|test|predict)\(|\bkeras\b|"
                 r"model\.(?:evaluate|predict)\(|\bdetectron2\b|\bmm(?:det|seg|ocr|pose|action|rotate|track|pretrain|cls)\w*|"
                 r"\bpaddle(?:ocr|seg|detection|det|nlp|clas|video|x)\b|\bultralytics\b|\byolov?(?:5|8|9|1[0-2])\w*|"
                 r"\bpipeline\(|\bdiffusers\b|\.generate\(|fairseq-generate|\bsklearn\b|torch\.inference_mode")
# The user's own code around a framework's predictor ("features extracted with a custom function"):
# it runs outside the framework's no_grad.
# (a framework's model called from the user's own loop, "I use the detectron2 API on a video with a FOR loop",
# runs outside the framework's evaluation loop and its no_grad)
_OWN_CODE = (r"\b(?:custom|own|my|hand-?written|self-?written) (?:\w+ )?(?:function|code|loop|script|feature extract\w*|post-?process\w*|hook)s?\b|"
             r"\b(?:with|in|inside|within|through|from|using) (?:a |my |our |an? own )?(?:for|while|python)[- ]loop\b|"
             r"\b(?:use|using|call|calling|through) (?:the |its )?\w+(?:'s)? (?:python )?api\b")
_HF_TRAINER = r"(?:transformers\.|\bhf |hugging ?face'?s? |seq2seq|sft)trainer\b"
# Fine-tuning frameworks whose evaluation is Hugging Face's Trainer loop underneath.
_HF_TRAINER_BASED = r"\bllama[- ]?factory\b|\baxolotl\b|\bms-swift\b|\bunsloth\b|\btrl\b"
_HF_MODEL_CLASS = (r"(?:\b\w+For(?:SequenceClassification|TokenClassification|CausalLM|MaskedLM|QuestionAnswering|ConditionalGeneration|"
                   r"MultipleChoice|ImageClassification|AudioClassification|SpeechSeq2Seq|Seq2SeqLM)\b|\bAutoModel\w*)")
_HF_TRAINER_EVAL = (r"trainer\.(?:evaluate|predict)|evaluation_loop|prediction_loop|prediction_step|eval_accumulation_steps|Trainer'?s? evaluat|evaluate\(\)/predict\(\)|"
                    rf"{_HF_TRAINER}[^\n]{{0,200}}\bevaluat|\bevaluat[^\n]{{0,200}}{_HF_TRAINER}|"
                    rf"(?:{_HF_TRAINER_BASED})[^\n]{{0,200}}\beval(?:uat\w*|uation)?\b|\beval(?:uat\w*)?\b[^\n]{{0,200}}(?:{_HF_TRAINER_BASED})|"
                    # a transformers model class named beside "the Trainer": Hugging Face's Trainer
                    rf"{_HF_MODEL_CLASS}[^\n]{{0,200}}\btrainer\b[^\n]{{0,200}}\bevaluat|{_HF_MODEL_CLASS}[^\n]{{0,200}}\bevaluat[^\n]{{0,200}}\btrainer\b")
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
    keras_call_in_loop: bool = False
    large_vocab_said: bool = False
    freed_then_again: bool = False
    reload_in_process: bool = False
    loader_settings: bool = False
    wsl: bool = False
    own_code: bool = False
    dataset_size_matters: bool = False
    bulk_outputs: bool = False  # one output computed for every item of a data set (embeddings, features, predictions)
    training_set_size_matters: bool = False
    other_framework_fits: bool = False  # the same model loads or runs in another framework on this device
    dataset_bytes_matter: bool = False  # the dataset's size on disk decides whether training fits
    dataset_decides: bool = False  # how much data there is decides whether training fits, at the same batch
    example_fits_batch: int | None = None  # the batch the library's own example is said to fit
    native_fits: bool = False  # the same program fits natively, or fails with half the card unused
    tool_misestimates: bool = False  # the tool's own plan of what fits on the GPU is said to be wrong
    half_fits: bool = False  # a half-precision run said to work where the 32-bit one fails
    smaller_input_fits: bool = False  # a smaller input (a size knob lowered, inputs cropped or filtered) is said to fit
    model_replaced: bool = False  # a model loaded again, or switched for another, in a process that keeps running
    freed_not_released: bool = False  # the program deleted what it held and the memory did not come back
    library_beside_framework: bool = False  # a GPU library with its own allocator failed beside a framework in the same process
    ranks_on_gpu0: bool = False  # the job's other ranks have processes or memory on the first GPU
    placed_on_gpu0: bool = False  # each process of a multi-GPU launch puts the weights or tensors on the first GPU
    dispatch_undone: bool = False  # a model split across GPUs by device_map, then moved whole onto one
    restored_onto_saved_gpu: bool = False  # saved weights restored onto the GPU they came from (no map_location)
    stated_requirement: int | None = None  # the memory the note says the model needs (bytes, as people write GB)
    separate_programs: bool = False  # programs started apart, each given its own GPU (not one job's ranks)
    memory_follows_workers: bool = False  # memory said to rise with the DataLoader's worker count
    saving_option_dropped: bool = False  # a memory-saving option asked for that the code never applies
    parallel_job_named: bool = False  # a multi-GPU job named (DDP, torchrun, ranks, FSDP...), not only a count of GPUs
    other_gpu_wanted: bool = False  # the note wants a GPU other than the one that ran out
    loads_saved_state: bool = False  # the note says the run loads saved weights or state (a checkpoint, torch.load, a resume)
    auto_batch: bool = False
    works_alone: bool = False
    several_processes_one_gpu: bool = False
    fewer_processes_fit: bool = False  # fewer processes per node (or per GPU) is said to fit
    still_fails: bool = False  # the note says the failure persisted after what was tried
    windows: bool = False  # the machine runs Windows natively (not WSL)
    tiled_input: bool = False
    sliding_window: bool = False
    tiling_in_use: bool = False  # the run already processes its input one tile at a time
    experience_replay: bool = False  # a reinforcement-learning agent, which keeps a replay memory of transitions
    outputs_per_prompt: bool = False
    freed_at_epoch_end: bool = False
    eval_fails_at_start: bool = False
    eval_only_fails: bool = False  # training fits, its evaluation fails
    built_before_sharding: bool = False  # a model built whole, then handed to ZeRO-3 / FSDP
    whole_set_one_batch: bool = False  # every item of a set sent through in one batch
    fused_attention: bool = False  # a fused attention kernel named as in use (flash attention, SDPA, xformers)
    growth_across_epochs: bool = False
    start_peak_then_lower: bool = False
    whole_graph: bool = False
    pair_representation_model: bool = False
    batch_budget: bool = False
    quantized_weights: bool = False
    merge_to_full_weights: bool = False
    host_only: bool = False  # the note says host memory fills and no GPU message says otherwise
    copy_per_device: bool = False
    state_carried: bool = False
    original_fits: bool = False
    constructing: bool = False
    weights_fill_gpus: bool = False
    larger_card_fits: bool = False
    saver_broke_fit: bool = False  # also sets switch_no_effect: the same switch, tested by the user
    memory_requirement_asked: bool = False
    one_input_only: bool = False
    crops_named: bool = False
    half_needs_more: bool = False
    metric_object: bool = False
    leak_in_eval: bool = False  # the growth is placed in the evaluation between training epochs
    forward_outputs_bound: bool = False
    device_query_fails: bool = False
    smaller_batch_fits: bool = False
    asks_smaller_input: bool = False  # the note asks whether smaller inputs would fit
    attention_kernel_decides: bool = False  # the memory differs with and without a fused attention kernel
    quadratic_in_length: bool = False  # memory said to grow with the square of the length
    host_ram_bytes: int | None = None  # the machine's RAM, where the note says it ("16GB RAM")
    input_raised: bool = False  # a larger input (image size, resolution, length) is what made it fail
    longer_item_at_failure: bool = False  # the failure falls on one input longer than the rest
    length_schedule_grows: bool = False  # the input size is raised on a schedule as training goes on
    larger_batch_fails_sooner: bool = False  # a larger batch fails at once where a smaller one runs a while first
    load_without_dtype: bool = False
    accumulation_named: bool = False
    smaller_width_fits: bool = False
    tool_memory_cap: bool = False
    models_in_a_loop: bool = False
    classes_matter: int | None = None  # a class count the note ties the failure to ("fine with 1k classes, OOM with 50k")
    attention_model_named: bool = False
    many_boxes: bool = False
    pipeline_offload: bool = False
    eval_between_training: bool = False
    later_epoch_training: bool = False
    while_building: bool = False
    library_part_isolated: bool = False
    graph_of_gradients: bool = False  # create_graph=True: the gradients carry a graph of their own computation
    shared_machine: bool = False  # a cluster, a lab's server, a numbered compute node: other people's jobs run there
    interactive_rerun: bool = False  # a notebook cell run again: the previous run's objects stay referenced
    stated_batch_fits: bool = False  # the one batch stated is said to work ("set it to 4 and it trains")
    stated_batch_worked: bool = False  # the clause stating the batch says it went through ("at 1 it trains, at 8 ...")
    image_generator_inference: bool = False  # a GAN's or latent-code generator run to make images, not trained
    upgrade_regression: bool = False
    smaller_fails_larger_works: bool = False
    smaller_card_works: bool = False
    other_backend_works: bool = False  # the same setup runs on another accelerator backend (Vulkan beside SYCL)
    single_allocation_cap: bool = False  # Intel's runtime refusing one buffer of 4 GB or more
    upgraded_to_torch_04: bool = False
    only_multi_gpu: bool = False
    other_process_hint: bool = False
    note_capacity_stated: bool = False  # the note states the card's size in figures, not only its name
    samples_in_training: bool = False  # samples or previews generated between training steps
    sampling_removed_helps: bool = False  # leaving that sampling out is said to free the memory
    repeated_loading: bool = False  # a model loaded again and again in one process
    contrary_to_docs: bool = False  # the library said to behave otherwise than its documentation
    other_loader_works: bool = False  # the same weights load another way
    accumulation_adds_memory: bool = False  # turning gradient accumulation on is what fails
    gpu0_used_instead: bool = False  # another GPU was chosen and memory landed on GPU 0
    backend_off_fixes: bool = False  # turning a backend or kernel off is said to make it fit
    known_bug_back: bool = False  # the failure said to be a known bug (one marked fixed) come back
    context_window_set: bool = False  # a context window the note sets for an inference runtime
    engines_share_gpu: bool = False  # a second serving engine or model started on a card another already uses
    setting_ignored: bool = False  # an allocator setting given that did not take effect
    placement_not_honoured: bool = False  # a library ignoring the split or memory cap it was given
    data_pipeline_fails: bool = False  # the failing clause names augmentations, transforms or collation
    orphaned_memory: bool = False  # memory in use with no process of the user's running, or after it ended
    cpu_mode: bool = False
    serving_engine: bool = False
    # The share of the card a serving engine is told it may take for weights and cache
    # (vLLM's gpu_memory_utilization, SGLang's mem_fraction_static): the largest one named.
    engine_memory_fraction: float | None = None
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
    transducer: bool = False
    saver_costs_more: bool = False
    fft_named: bool = False
    collector_helps: bool = False
    julia: bool = False
    dataset_cached: bool = False
    host_data_job: bool = False
    varying_shapes: bool = False
    tracing_compiler: bool = False
    colocated: bool = False
    engine_starting: bool = False
    held_after_phase: bool = False
    unmodified_recipe: bool = False
    fits_without_growth_mode: bool = False
    gpu_imbalance_warning: bool = False
    second_round_fails: bool = False
    family_vocab: int | None = None
    reference_model_method: bool = False
    rl_method_only: bool = False
    attention_free: bool = False
    kept_with_graph: bool = False
    embedding_rows: int | None = None
    lengths_increasing: bool = False
    offload: bool = False
    host_ram: bool = False
    optimizer_step: bool = False
    loss_kept: bool = False
    grad_left_on: bool = False
    outputs_kept: bool = False
    attention_said: bool = False
    dense_graph: bool = False
    teacher_resident: bool = False
    recipe_on_smaller_hardware: bool = False
    pairwise_said: bool = False
    sharding_absent: bool = False
    vision_language_model: bool = False
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
    preallocating_framework_beside: bool = False  # TensorFlow or JAX pre-allocating beside another framework in one process
    logprobs: bool = False
    tpu: bool = False
    domains: set[str] = field(default_factory=set)
    batch_size: int | None = None
    seq_len: int | None = None
    vocab_size: int | None = None
    param_count: float | None = None
    weight_bytes: float | None = None
    measured_weights: int | None = None  # what the log says the loaded weights occupy ("model weights take 5.20GiB")
    logged_device_total: int | None = None  # the device's memory as the framework logged it ("totalMemory: 10.92GiB")
    note_gpu_capacity: int | None = None
    note_shapes: list[tuple[int, ...]] = field(default_factory=list)
    note_reserved: int | None = None  # "reserved is 20 GB", as the note states PyTorch's figures
    note_allocated: int | None = None
    note_requested: int | None = None
    note_unallocated: int | None = None
    evidence: dict[str, str] = field(default_factory=dict)


@functools.lru_cache(maxsize=None)
def _compiled(pattern: str) -> re.Pattern[str]:
    # The readers use more distinct patterns than `re`'s own cache holds (512): past it, every call
    # recompiled its pattern (a third of the per-case time). The patterns are fixed strings, so
    # each is compiled once, on first use.
    return re.compile(pattern, re.IGNORECASE)


def _search(pattern: str, text: str) -> re.Match[str] | None:
    # Nothing to read, nothing to compile: compiling these patterns is most of a note-less run's cost.
    return _compiled(pattern).search(text) if text and not text.isspace() else None


# A negation just before a match in the same clause says the opposite ("nvidia-smi shows no other
# process", "without fp16", "memory does not keep growing").
_NEGATION_WORDS = "no|not|never|without|none|nothing|nor"
_NEGATION = re.compile(rf"\b(?:{_NEGATION_WORDS})\b|n't\b|\bnon-", re.IGNORECASE)
# Signals whose pattern names a thing that a negation in front of it denies.
_NEGATABLE = {"other_process_hint", "other_gpu_wanted", "growth", "host_ram", "loss_kept", "outputs_kept", "fragmentation_said", "rank0_heavy", "low_precision", "full_precision_said", "repeated_calls", "cpu_mode",
              "frees_every_step", "smaller_input_fits", "fused_attention"}  # "I can't free the GPU memory after each iteration" frees nothing


def _affirmed_search(pattern: str, text: str) -> re.Match[str] | None:
    """The first match of ``pattern`` that no negation in its clause denies."""
    if not text or text.isspace():
        return None
    for match in _compiled(pattern).finditer(text):
        before = text[max(0, match.start() - 30):match.start()]
        clause = re.split(r"[,;.:!?()]|\b(?:but|although|though|while|and)\b", before)[-1]
        # A negation among the match's first words counts when it stands as a word ("nvidia-smi
        # shows no other process"), not as part of a flag ("--no-half").
        # ("without a problem" affirms: it is how a run that worked is said)
        if not _NEGATION.search(clause) and not re.match(rf"(?:\S+\s+){{0,3}}(?:{_NEGATION_WORDS})\s(?!(?:a |any )?(?:problems?|issues?|errors?|trouble)\b)",
                                                         match.group(0), re.IGNORECASE):
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
    # "13B", "7b-chat", "-6B", "(350M)": a size suffix not followed by a memory unit. Not a chip's
    # model number: Huawei's "Ascend 910B" is an NPU, not 910 billion parameters.
    for match in re.finditer(r"(?<![A-Za-z0-9.])(?<!ascend )(?<!ascend-)(?<![\s(~]\d-)(?<![\s(~]\d\d-)(?<![\s(~]\d–)(\d+(?:\.\d+)?)\s?([bBmM])(?![A-Za-z0-9/])(?!\s?(?:of )?(?:(?:video|graphics|gpu|cuda|device|system|host) )?(?:ram|memory|vram|bytes?))"
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
    # "a quantized 12B model" without the bits: at most one byte a weight (8-bit is the usual default
    # of the loaders and servers that quantize on load), not the fp16 estimate.
    if _search(r"\bquantized (?:\w+[- ]?){0,2}(?:model|weights|checkpoint|version|variant|\d+(?:\.\d+)?\s?b\b)|\b(?:model|weights) (?:is |are )?quantized\b|"
               r"\bwith (?:\w+ )?quantization\b(?! of the (?:kv|cache))|\bquantization (?:on|enabled)\b|--quantize\b|"
               r"\bquantized: ?(?:yes|true)\b|\bquantized (?:[\w.-]+ ){0,2}(?:[\w.-]*-)?\d+(?:\.\d+)?b\b", text):
        return 1.0
    if _search(r"\bfp16\b|\bbf16\b|bfloat16|float16|half precision|\bhalf\b(?! (?:of|the|an?|as|way|an hour|a day)\b)(?!-(?:way|full|empty))|torch_dtype", text):
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


_NOTE_SIZE = r"(?<![\d.])(\d+(?:\.\d+)?\s?[GM]i?B)\b"  # from a number's first digit only (a run of digits stays linear)


def _stated_bytes(subject: str, note: str) -> int | None:
    """A memory figure the note gives for ``subject``: "reserved is 20 GB", "allocated only 12GB"."""
    match = _search(rf"\b{subject}(?: memory)?(?: is| was| at| of|:|=)?(?: only| just| about| around| ~)?\s*{_NOTE_SIZE}", note)
    return parse_size(match.group(1)) if match else None


_BATCH_STATED = (r"\b(\d+) (?:\w+ )?per (?:mini-?)?batch\b|"
                 # detection frameworks' batch knobs: mmdetection's samples_per_gpu / imgs_per_gpu, detectron2's IMS_PER_BATCH
                 r"\b(?:samples|imgs|images)_per_gpu\s*[=:]\s*(\d+)\b|\bIMS_PER_BATCH\s*[=:]?\s*(\d+)\b|\b(\d+) (?:sequences|samples|images|examples|items|prompts|sentences) per (?:device|gpu|core|step|replica)\b|\bbs\s*[=:]\s*(\d+)\b|"
                 # (not a data writer's or reader's rows per write: HF datasets' writer_batch_size)
                 r"(?<!writer_)(?<!write_)(?<!reader_)(?<!read_)(?<!io_)(?:per[-_ ]device[-_ ](?:train[-_ ])?|micro[-_ ]?|train(?:ing)?[-_ ])?batch(?:[ _-]?size)?\s*(?:of|=|:|is|to|set to|lowered to|like|such as)?\s*\(?(\d+)\b")


# A clause that says its batch went through: "works with batch size 2", "batch 8 fits", "at 4 it trains".
# ("I ran on a single 2080ti", "I run it on Colab": running a program somewhere is not a batch going through)
_BATCH_WORKED = (r"\b(?:works?|worked|fits?|fitted|runs?(?! (?:on|it|the|my|this)\b)|ran(?! (?:on|it|the|my|this)\b)|trains?|trained|is fine|"
                 r"was fine|goes through|went through|succeeds?|succeeded|ok|okay)\b")


def _went_through(clause: str) -> bool:
    """The clause says its batch went through and names no failure ("with a batch size of 1 it trains")."""
    return bool(_search(_BATCH_WORKED, clause)) and not _search(_FAILURE_WORDS, clause)


def _batches_in(text: str) -> list[int]:
    return [int(next(group for group in match.groups() if group)) for match in re.finditer(_BATCH_STATED, text, re.IGNORECASE)]


# Batch sizes that fail at different times: the larger at once (or before training starts), a smaller one
# only after a while ("22 doesn't even start, 16 fails after 10 iterations"). A number in such a clause
# is a batch when the note names a batch at all; counts of steps, GPUs, gigabytes are not.
_FAILS_AT_ONCE = (r"\b(?:immediately|at once|right away|instantly|straight away|from the (?:first|very first) (?:step|iteration|batch))\b|"
                  r"\b(?:does ?n[o']t|did ?n[o']t|doesn't|didn't|never|won't|will not|can ?not|cannot|can't) (?:even )?(?:start|begin|get going|run (?:a|one|the first) (?:single )?(?:step|iteration|batch))\b")
_FAILS_LATER = (r"\bafter (?:about |around |some |a few |several |many |\d[\d,]* )(?:\w+ )?(?:iterations?|steps?|batches|epochs?|minutes?|hours?)\b|"
                r"\btakes? (?:a (?:little )?while|longer|some time)\b|\b(?:even |much |a bit )?longer\b|\blater\b|\beventually\b|"
                r"\bat (?:around |about |roughly |~ ?)?\d[\d,.]*k? (?:iterations|steps|iters|batches)\b")
_BARE_BATCH = r"(?<![\w.,])(\d{1,4})(?![\w.,]| ?(?:%|gb|gib|mb|mib|g\b|x\b|\*|gpus?|cards?|nodes?|steps?|iterations?|iters?|epochs?|batches|minutes?|hours?|seconds?|images?|frames?|workers?|processes))"


def _larger_batch_fails_sooner(note: str) -> str | None:
    if not re.search(r"\bbatch", note, re.IGNORECASE):
        return None
    at_once: list[int] = []
    later: list[int] = []
    for clause in re.split(r"[,;.]\s+|\n", note):
        sizes = [int(match.group(1)) for match in re.finditer(_BARE_BATCH, clause, re.IGNORECASE)]
        if not sizes:
            continue
        if _search(_FAILS_AT_ONCE, clause):
            at_once += sizes
        elif _search(_FAILS_LATER, clause) and _search(_FAILURE_WORDS + r"|\btakes?\b|\blonger\b", clause):
            later += sizes
    if at_once and later and max(at_once) > min(later):
        return f"batch {max(at_once)} fails at once, {min(later)} only later"
    return None


def _without_leading_history(sentence: str) -> str:
    """The sentence after an opening clause of what happened before ("After several OOM errors, I
    set the batch size to 4 and it trains"): those failures came before the batch that now works."""
    return re.sub(r"^\s*after (?:[^,;]{0,80},|(?:\w+ ){0,4}?(?:errors?|failures?|crashes|tries|attempts|times)\b)", " ", sentence, flags=re.IGNORECASE)


def read_numbers(note: str, signals: Signals, what_failed: str | None = None) -> None:
    # The batch a library's example fits is not this run's ("the example works up to batch 32, mine
    # fails at 16"): read the run's batch from the rest.
    run_note = re.sub(_EXAMPLE_FITS_BATCH, " ", note, flags=re.IGNORECASE)
    # A batch said to work beside one that fails ("works with batch size 2, but with 16 it runs out"):
    # the run's batch is the failing one, and a smaller batch fitting is itself a lead.
    failing = re.sub(_EXAMPLE_FITS_BATCH, " ", what_failed, flags=re.IGNORECASE) if what_failed is not None else run_note
    worked, failed = [], []
    # (only a note that states two batches can compare them: one pass over it decides)
    for sentence in _SENTENCE_END.split(run_note) if len(_batches_in(run_note)) >= 2 else ():
        for clause in _CLAUSE.split(sentence):
            sizes = _batches_in(clause)
            if not sizes:
                continue
            if _search(_FAILURE_WORDS, clause):
                failed += sizes
            elif _went_through(clause):
                worked += sizes
    batch = _search(_BATCH_STATED, failing) or _search(_BATCH_STATED, run_note)
    if batch:
        signals.batch_size = int(next(group for group in batch.groups() if group))
        # "I set the batch size to 4 and finally can train normally": the one batch stated is said to
        # work, in sentences that say nothing failed: a batch that fits, no lead to a batch too large
        stating = [sentence for sentence in _SENTENCE_END.split(run_note) if _batches_in(sentence)]
        if stating and len(set(_batches_in(run_note))) == 1 and all(
                _search(_BATCH_WORKED, sentence) and not _search(_FAILURE_WORDS, _without_leading_history(sentence)) for sentence in stating):
            signals.stated_batch_fits = True
            signals.evidence["stated_batch_fits"] = stating[0].strip()[:120]
        # the clause that states the batch says it went through ("with a batch size of 1 it trains, with 8 ...")
        clause = next((part for part in _CLAUSE.split(run_note) if batch.group(0) in part), "")
        signals.stated_batch_worked = _went_through(clause)
    if worked and failed:
        signals.batch_size = failed[0]  # the run's batch is the one that failed, not the one said to work
    # (only "RAM" said as such: "6GB of memory" is as often the card's; "\bRAM" never matches inside "VRAM")
    ram = _search(r"(?<![\d.])(\d+(?:\.\d+)?)\s?(?:GB|GiB|G)\s?(?:of )?(?:system |host |cpu |ddr\d? )?RAM\b|\bRAM\s?(?::|=|of|is)?\s?(\d+(?:\.\d+)?)\s?(?:GB|GiB|G)\b", note)
    if ram:
        signals.host_ram_bytes = int(float(next(group for group in ram.groups() if group)) * 1e9)
    sooner = _larger_batch_fails_sooner(run_note)
    if sooner:
        signals.larger_batch_fails_sooner = True
        signals.evidence["larger_batch_fails_sooner"] = sooner
    if worked and failed and max(worked) < max(failed):
        signals.batch_size = max(failed)
        signals.smaller_batch_fits = True
        signals.evidence["smaller_batch_fits"] = f"batch {max(worked)} works, {max(failed)} fails"
    # (LLaMA-Factory's cutoff_len, the model_max_length of HF scripts and max_source_length of seq2seq ones)
    seq = _search(r"(?:seq(?:uence)?[ _-]?len(?:gth)?|context(?:[ _-]length)?|max[_ -](?:seq[_ -])?(?:length|len)|block[_ -]size|cutoff[_ -]len(?:gth)?|"
                  r"model[_ -]max[_ -]length|max[_ -]source[_ -]length|"
                  r"max[_ -]model[_ -]len|ctx|(?:input |prompt |the )?length)\s*(?:of|=|:|is|set to|to)?\s*(?:~ ?|about |around |approximately |roughly |over )?(\d+(?:\.\d+)?\s?[kK]|\d{4,})\b", note) \
        or _search(r"((?<![\d.,])\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?\s?[kK]?)[- ](?:token|tok)s?\b(?! vocab)", note) or _search(r"(\d+[kK])[- ]context", note) \
        or _search(r"(\d+(?:\.\d+)?\s?[kK]?)[- ](?:sequence|context|seq|token)[- ]?(?:length|len|window)", note)
    if seq:  # "8K tokens" means 8192 in this field
        value = seq.group(1).replace(" ", "").replace(",", "")
        signals.seq_len = int(float(value[:-1]) * 1024) if value[-1] in "kK" else int(float(value))
    vocab = _search(r"((?<![\w.,])\d[\d,.]*\s?(?:million|[kKmM])?)\s?\(\s?vocab", note) or \
        _search(r"((?<![\w.,])\d[\d,.]*\s?(?:million|[kKmM])?)[- ](?:token|word|entry|entries|piece|subword)s? vocab", note) or \
        _search(r"vocab(?:ulary)?(?:[ _]file| size)?\D{0,25}?((?<![\w.,])\d[\d,.]*\s?(?:million|[kKmM])?)\b", note) or \
        _search(r"((?<![\w.,])\d[\d,.]*\s?(?:million|[kKmM])?)\s(?:words?|tokens?|entries|classes|labels|items)\s?(?:vocab|output)", note) or \
        _search(r"((?<![\w.,])\d[\d,.]*\s?[kKmM]) vocab", note) or \
        _search(r"\bdict(?:ionary)?\b(?:(?!\.\s)[^;\n]){0,40}?((?<![\w.,])\d[\d,.]*\s?(?:million|[kKmM])?)\s(?:lines|entries|words|tokens|types)\b", note) or _search(r"((?<![\w.,])\d[\d,.]*\s?(?:million|[kKmM])?) (?:output )?classes", note)
    if vocab and re.match(r"\s?(?:[KMGT]i?B|G\b)", note[vocab.end(1):vocab.end(1) + 5]):
        vocab = None  # "the vocabulary is large on an 8 GB card": a memory size, not a count
    if vocab:
        try:
            signals.vocab_size = int(_number(vocab.group(1)))
        except ValueError:
            pass
    fractions = [float(value) for value in re.findall(
        r"(?:gpu[_-]memory[_-]utili[sz]ation|mem(?:ory)?[_-]fraction(?:[_-]static)?)\W{0,3}(?:(?:is |was |set |lowered |reduced |raised |changed |down |up )*(?:to|=|:|at|of|is) ?)?(0?\.\d+|1\.0*)(?![\d.])",
        note, re.IGNORECASE)]
    if fractions and 0 < max(fractions) <= 1:
        signals.engine_memory_fraction = max(fractions)
    signals.param_count = _param_count(note)
    if signals.param_count is None:
        for family, count in _FAMILY_PARAMS:
            named = _search(family, note)
            if named:
                signals.param_count = count
                signals.evidence["param_count"] = f"{named.group(0)} (about {count / 1e9:g}B parameters in all)"
                break
    if _search(r"\bembedding", note):
        rows = [_number(found.group(1)) for found in re.finditer(_EMBEDDING_ROWS, note, re.IGNORECASE)]
        if rows and sum(rows) >= 1e6:
            signals.embedding_rows = int(sum(rows))
        else:
            # a vocabulary or id count given for the embedding itself: "the Embedding layer's vocab_size is 500000"
            table = _embedding_table_rows(note)
            if table:
                signals.embedding_rows, signals.evidence["embedding_rows"] = table
    for family, size in _FAMILY_VOCAB:
        named = _search(family, note)
        if named:
            signals.family_vocab = size
            signals.evidence["family_vocab"] = named.group(0)
            break
    signals.note_shapes = tensor_shapes(note)
    signals.note_reserved = _stated_bytes(r"(?:reserved|cached)", note)
    signals.note_allocated = _stated_bytes(r"allocated", note)
    asked = _search(rf"\b(?:tried|trying|tries|try|attempt\w*) to allocate (?:about |around )?({SIZE_PATTERN})", note)
    if asked:
        try:
            signals.note_requested = parse_size(asked.group(1))
        except ValueError:
            pass  # a size beyond any unit's range says nothing more
    idle = _search(rf"{_NOTE_SIZE} (?:\w+ )?(?:is |was |were )?reserved[- ]but[- ](?:not[- ]|un)allocated|"
                   rf"reserved[- ]but[- ]unallocated(?: memory)?(?: is| was|:|=| of)? ?{_NOTE_SIZE}", note)
    if idle:
        signals.note_unallocated = parse_size(idle.group(1) or idle.group(2))
    # "uses 1G on GPU 0" is an amount on a card, not the card's size
    not_a_place = r"(?!(?:on|in|of|per|from|to|at|for)\b)"
    # "my RTX 3060 (6GB)", "a 6GB RTX 3060": a size stated beside a card's name is that card's (the
    # name alone is read below, and several cards ship in more than one size)
    # ("UD-Q4_K_XL (467 GB)", "IQ2_M (239 GB)": a quantization's file size, not a card)
    gpu = _search(r"\b(?:(?:RTX|GTX|RX|MX) ?\d{3,4}|(?!I?Q\d)[A-Z]{1,3}\d{1,4}|(?<![\w.])[1-5]0[5-9]0)\w*(?: ?ti| super)? \((\d{1,3}(?:\.\d)?)\s?G(?:i?B)?(?: (?:of )?(?:VRAM|memory))?\)", note) or \
        _search(r"\b[A-Z]{1,3}\d{1,4}\w* (\d{1,3})\s?G(?:i?B)?\b", note) or \
        _search(r"(\d{1,3}(?:\.\d+)?)\s?GB(?: of (?:GPU |video |device )?memory| (?:Arc |Radeon |Intel |AMD )?GPUs?| (?:Arc |Radeon |Intel |AMD )?cards?| VRAM| (?:NVIDIA |Tesla |GeForce )?"
                r"(?:[A-Z]{1,3}\d{1,4}\w*|(?:RTX|GTX|RX|MX) \d{3,4}\w*)s?)", note) \
        or _search(r"(?:\b(?:a|an|one|single|two|three|four|six|eight|\d{1,3})\s?[x*]?\s?|(?<=\d[x*]))(\d{2,3})\s?G (?:NVIDIA |Tesla )?(?-i:[AHLV]\d{2,3})s?\b", note) \
        or _search(r"(?:GPU|card)s? (?:with|of) (\d{1,3})\s?GB|\b(?:GPU|card) \((\d{1,3}(?:\.\d)?)\s?G(?:i?B)?\)|"
                   r"\b(?:GPUs?|cards?) \(\d{1,2}\s?[x×*]\s?(\d{1,3})\s?G(?:i?B)?\)", note) or _search(rf"(\d{{1,3}})\s?GB\)?\s*(?:{not_a_place}\w+ )?GPU", note) \
        or _search(rf"(?<![\d.])\b(\d{{1,3}})\s?G (?:(?:{not_a_place}\w+ )?(?:gpus?|cards?|vram|graphics)\b)", note)  # "a single 24G card"
    if not gpu:
        # "a Tesla V100 with 32G memory", "an RX 580 with 8GB": the size said beside a card's name (V100s
        # ship in 16 and 32 GB; "with 8GB of RAM" is the host's)
        sized = _search(r"\b(?:(?:Tesla|Quadro|GeForce|RTX|GTX) )?[A-Z]{1,3} ?\d{2,4}\w* with (\d{1,3})\s?G(?:i?B)?(?: (?:of )?(?:GPU |video |device )?(?:memory|VRAM)\b|"
                        r"(?<=B)(?! (?:of )?(?:system |host |cpu )?(?:ram|memory)\b)(?=[\s.,;)]|$))", note)
        gpu = sized if sized and find_gpu_name(sized.group(0), bare=True) else None
    if gpu and gpu.group(0).lower().endswith(" of memory") and \
            _search(r"(?:system|host|cpu|ram|machine|server|node|computer|laptop|desktop|workstation|instance)\W+(?:\w+\W+){0,3}$",
                    note[max(0, gpu.start() - 40):gpu.start()]):
        gpu = None  # "a machine with 64 GB of memory" is the host's RAM, not the card
    if gpu and gpu.group(0).lower().endswith(" of memory"):
        # "I have 19gb of memory ... on a GTX 1050": a bare "of memory" far from the size of the card the
        # note names is the machine's RAM; the named card says what the GPU holds
        named = find_gpu_name(note, bare=True)
        named_capacity = capacity_of_gpu(named) if named else None
        said = float(next(group for group in gpu.groups() if group)) * 10**9
        if named_capacity and not 0.5 <= said / named_capacity <= 2:
            gpu = None
    # ("I have 19gb of memory" beside a 2 GB card's message is the machine's RAM: "of memory" or "of RAM"
    # without a GPU word names no card)
    have = _search(r"\b(?:i|we) (?:only )?have (?:a |an |only |just )?(\d{1,3}(?:\.\d+)?)\s?(?:GB\b|G\b)?(?= ?(?:GB|of vram|vram|\.|,|;|$))"
                   r"(?! ?(?:GB|G)? (?:of )?(?:system |host |cpu |main )?(?:memory|ram)\b)", note)
    # "my GPU has 8GB", "the card has only 6 GB" (not "the GPU has 8GB free": what was left)
    have = have or _search(r"\b(?:gpu|card|graphics card|video card)(?:'s memory)? (?:only |just )?(?:has|is) (?:only |just )?(\d{1,3}(?:\.\d+)?)\s?Gi?B\b"
                           r"(?! (?:of (?:it |that |them )?)?(?:is |are |was )?(?:still )?(?:free|left|available|remaining|unused|in use|used))", note)
    vram = _search(r"(\d+(?:\.\d+)?)\s?([GM])i?B? (?:of )?(?:VRAM|video memory)|(\d+(?:\.\d+)?)\s?GB (?:\w+ )?assigned to the (?:GPU|iGPU)", note)
    def used_before(match: re.Match[str] | None) -> bool:
        return bool(match and _search(r"\b(?:consum\w*|us(?:e|es|ed|ing)|tak(?:e|es|ing)|took|occup\w*|allocat\w*|eat\w*|ate|needs?|needed|requir\w*|fill\w*|hold\w*|held)"
                                      r"(?: up)?(?: (?:about|around|roughly|almost|nearly|over|only|just|already|~|at least|a minimum of|more than))?\s?$", note[max(0, match.start() - 40):match.start()]))
    def free_after(match: re.Match[str] | None) -> bool:
        return bool(match and _search(r"^\W{0,3}(?:is |are |was |were )?still (?:free|left|available|unused|remaining)\b",
                                      note[match.end():match.end() + 30]))
    # "it already consumed 18.7G VRAM" is an amount used, "12GB of VRAM is still free" what was left when it
    # failed: neither is the card's size ("a GPU with 2 GB free" is what the run has, and stays)
    vram = None if used_before(vram) or free_after(vram) else vram
    gpu = None if used_before(gpu) or free_after(gpu) else gpu
    if vram:
        amount = float(vram.group(1) or vram.group(3))
        signals.note_gpu_capacity = int(amount * (10**6 if vram.group(2) and vram.group(2).upper() == "M" else 10**9))
    elif gpu:
        signals.note_gpu_capacity = int(float(next(group for group in gpu.groups() if group)) * 10**9)
    elif have:
        signals.note_gpu_capacity = int(float(have.group(1)) * 10**9)
    else:
        name = find_gpu_name(note, bare=True)
        if name:
            signals.note_gpu_capacity = capacity_of_gpu(name)
        elif _search(r"\bfree (?:tier )?(?:google )?colab\b|\bcolab(?:'s)? free (?:tier|plan|gpu)\b|\b(?:google )?colab\b|\bkaggle\b", note):
            # Colab's free tier lends a T4 (15 GB usable), the GPU a Colab or Kaggle notebook gets
            # unless it says which; paid cards are named when they are used.
            signals.note_gpu_capacity = 15 * 10**9
    signals.note_capacity_stated = bool(vram or gpu or have)
    required = _STATED_REQUIREMENT.search(note)
    if required and (_search(r"^\s?(?:more|extra|additional)\b", note[required.end():required.end() + 12]) or
                     _search(r"\b(?:batch(?:es)?|steps?|activations?|layers?|requests?|allocations?|tensors?|buffers?)\s?$", note[max(0, required.start() - 20):required.start()])):
        required = None  # "it needs 2 GB more", "the batch needs 3 GB": what one part needs on top, not the model
    if required:
        signals.stated_requirement = int(float(required.group(1) or required.group(2)) * 10**9)
        signals.evidence["stated_requirement"] = required.group(0).strip()
    tpu = _search(r"\btpu[- ]?v?(\d(?:e|p)?)(?:-\d+)?\b|\bv(\d(?:e|p)?)-\d+\b", note)
    # (the precision the run stores its weights in, not one the note asks how to set)
    signals.weight_bytes = _weight_bytes(_without_wishes(note))
    if tpu and (tpu.group(1) or tpu.group(2)) in _TPU_HBM and signals.note_gpu_capacity is None:
        signals.note_gpu_capacity = _TPU_HBM[tpu.group(1) or tpu.group(2)]
    # ("a 7900xtx", "an RX 6900 XT" are a card's name, not 7900 of them)
    count = _search(r"\b(\d{1,3})\s?[x*](?!tx?\b)\s?(?:[A-Z]|\d{2} ?GB?\b)", note) or \
        _search(r"\b(two|three|four|six|eight|sixteen|\d{1,3})\b(?! ?GB) (?:\d{1,3}(?:\.\d)? ?GB )?(?:(?!GB\b|(?:on|with|across|over|using|of|per|in|and|to|from)\b|\d+ )[\w-]+ ){0,3}(?:GPUs|cards|[A-Z]?\d{2,4}s|[A-Z]\d{1,4}s|ranks|devices|chips)\b", note) \
        or _search(r"\b(?:tp|tensor[ _-]parallel(?:ism)?(?:[ _-]size)?|tp_size)[ =_:]*(\d+)\b", note) \
        or _search(r"\b(\d{1,3}) (?:x )?(?:nvidia |tesla )?(?:[ahvlb]\d{2,3}|rtx ?\d{4}|gtx ?\d{3,4}|mi\d{3}x?)s?\b", note) \
        or _search(r"\b(two|three|four|six|eight|\d)\s+(?:rtx |gtx )?(?:[2345]0[5-9]0|1[06-9][5-8]0)(?: ?ti| super)?s?\b(?!p)", note)
    if count:
        words = {"two": 2, "three": 3, "four": 4, "six": 6, "eight": 8, "sixteen": 16}
        value = count.group(1).lower()
        signals.gpu_count = words.get(value) or int(value)
    # Launchers say how many processes (one GPU each) they start.
    launched = _search(r"--nproc[_-]per[_-]node[= ](\d+)|--num[_-]gpus[= ](\d+)|--gpus[= ](\d+)\b|--num_processes[= ](\d+)|"
                       r"\bmpirun -np (\d+)|horovodrun -np (\d+)|CUDA_VISIBLE_DEVICES=((?:\d,)+\d)\b|"
                       # a list of device ids handed to the script: gpus='0,1,2,3', device_ids=[0, 1]
                       r"\b(?:gpus?|gpu_ids|device_ids|devices)\s?[=:]\s?[\[(]?['\"]?(\d(?:\s?,\s?\d)+)\b", note)
    if launched and signals.gpu_count is None:
        value = next(group for group in launched.groups() if group)
        signals.gpu_count = value.count(",") + 1 if "," in value else int(value)
    # "8 nodes x 8 A100", "2 machines with 8 GPUs each": every node's GPUs count.
    nodes = _search(r"\b(\d{1,4}) (?:nodes?|machines?|hosts?|servers?)\s?(?:x|\*|×|with|of)\s?(\d{1,2})\b", note)
    if nodes:
        signals.gpu_count = int(nodes.group(1)) * int(nodes.group(2))
    # "two 4-GPU servers", "2 8-GPU nodes"
    sized_nodes = _search(r"\b(two|three|four|\d{1,3}) (\d{1,2})[- ]?gpu (?:nodes?|machines?|hosts?|servers?|boxes)\b", note)
    if sized_nodes:
        words = {"two": 2, "three": 3, "four": 4}
        signals.gpu_count = (words.get(sized_nodes.group(1).lower()) or int(sized_nodes.group(1))) * int(sized_nodes.group(2))
    zero = _search(r"zero[- _]?(?:stage[- _]?)?([123])(?!\d)|stage[- _]?([123]) zero|zero stage ([123])", note)
    if zero:
        signals.zero_stage = int(next(group for group in zero.groups() if group))


def frame_text(context: TriageContext) -> str:
    if not context.stack:
        return ""
    return "\n".join(f"{frame.function or ''} {frame.code or ''} {frame.filename}" for frame in context.stack.frames)


# A note that says the memory was overrun ("blows past the GPU memory", "exceeds the VRAM"): a failure,
# for the phase readers here and for the engine's "did the run die" check.
MEMORY_EXCEEDED = (r"\b(?:blows?|blew|goes|went) (?:past|through|over) (?:the |its |my )?(?:gpu |device |video )?(?:memory|vram|ram)\b|"
                   r"\b(?:exceed\w*|overflow\w*) (?:the |its |my )?(?:gpu |device |video )?(?:memory|vram|capacity)\b|"
                   # "eventually the memory overflows"
                   r"\b(?:memory|vram)\b (?:\w+ )?overflow(?:s|ed|ing)?\b")
_FAILURE_WORDS = (r"\bdo(?:es)?(?:n't| not) fit\b|\b(?:do(?:es)?|did)(?:n't| not) work\b|\bexplod\w*|\bblows? up\b|\bfail|\bcrash|\bdies\b|\bdied\b|\bruns? out\b|\bran out\b|\bexhaust\w*|\bOOM|out-of-memory|out of memory|\berror|\babort|"
                  rf"\bstops\b|\bkill(?:s|ed)\b|\bexception|\bbreaks\b|{MEMORY_EXCEEDED}|"
                  # where a peak is placed is where it fails: "the 4.9 GB occurs in the optimizer's initialization"
                  r"\b\d+(?:\.\d+)? ?(?:GB|GiB|MB|MiB|G)\b (?:\w+ ){0,2}(?:occurs|occurred|happens|happened|appears|appeared|is reached|was reached)\b")
# "after training" says training was over, so "after" is not a where-word.
_WHERE = r"\b(?:during|inside|in|while|when|at|on|into|within)\b((?:[^,;.:]|\.(?!\s)){0,60})"
_NOTE_ONLY_IN_FAILURE: set[Phase] = {"data_loading"}  # "from a dataloader" alone says where data comes from, not where it died


# A clause that says a part of the run went well names the phase that did NOT fail ("the test
# script fails, while the training script runs fine").
_CLAUSE = re.compile(r"[,;]|\b(?:while|whereas|but|although|though)\b", re.IGNORECASE)
_WENT_WELL = (r"\b(?:runs?|ran|works?|worked|working|is|was|are|were|goes|went|completes?|completed|finish(?:es|ed)?|"
              r"succeeds?|succeeded|pass(?:es|ed)?|trains?|trained|fits?)\s+(?:just )?(?:fine|ok|okay|well|normally|smoothly|without (?:any )?"
              r"(?:issues?|problems?|errors?|trouble|a hitch|hiccups?))\b|\bno (?:issues?|problems?)\b|\bhas no problem\b|"
              # "training memory is constant", "the memory stays flat during training"
              r"\b(?:memory|usage|vram)(?: usage)? (?:is|was|stays|stayed|remains|remained|keeps|kept) (?:constant|stable|flat|steady|the same)\b|"
              # "loading the model reports no shortage of memory", "the start-up shows no error"
              r"\b(?:reports?|reported|shows?|showed|gives?|gave|raises?|raised|throws?|threw) no (?:shortage|lack|error|problem|issue|warning)s?\b|\bno (?:shortage|lack) of (?:gpu )?memory\b|"
              # a clause that ends on the verb: "train.py alone trains, but with --resume it dies"
              # ("consistent between runs", "across several runs": the noun, not the verb)
              r"(?<!\bbetween )(?<!\bacross )(?<!\bseveral )(?<!\bmultiple )(?<!\bdifferent )(?<!\bother )(?<!\bmany )(?<!\bsome )"
              r"\b(?:works|worked|work|succeeds|succeeded|trains|runs|ran|fits|(?<!\bto )(?<!n't )(?<!\bnot )fit|loads|(?<!\bforward )(?<!\bbackward )(?<!\bvalidation )(?<!\bevaluation )(?<!\beval )(?<!\btest )(?<!\btesting )(?<!\btraining )(?<!\binference )(?<!\bfirst )(?<!\bsecond )(?<!\bsingle )(?<!\bone )(?<!\bthe )(?<!\ba )(?<!\beach )(?<!\bevery )(?<!\bval )(?:passes|pass)|go through|completes|is fine|was fine|are fine)\s*$")
# A clause saying what the user does to get around the failure ("the only way around it is to reload
# the model", "as a workaround I restart") names a remedy, not where the run failed.
_WORKAROUND = (r"\b(?:the )?(?:only )?way (?:around|round) (?:it|this|that)\b|\bwork-?arounds?\b|"
               r"\bto (?:avoid|get around|prevent|work around) (?:it|this|that|the (?:oom|error|problem|crash))\b|"
               r"\bthe only (?:fix|solution|remedy|thing that helps)\b")


# Memory stated per round: "9.8 GB in the first iteration, 5.0 GB in the second".
_SIZE_IN_FIRST_ROUND = rf"{_NOTE_SIZE}[^.;,]{{0,30}}?\b(?:in|at|for|during|after|on) the first(?: \w+)? (?:iterations?|steps?|batch(?:es)?|epochs?)\b"
_SIZE_IN_LATER_ROUND = rf"{_NOTE_SIZE}[^.;,]{{0,30}}?\b(?:in|at|for|during|after|on) the (?:second|third|next|following|later|last|other)\b"


def _start_peak_then_lower(note: str) -> str | None:
    """The sentence that puts a high memory use at the start of the run and a lower one after it,
    in whatever order the words come ("starts at 12 GB when training begins and comes down to 5"),
    or two sizes stated per round ("9.8 GB in the first iteration, 5.0 GB in the second")."""
    for match in re.finditer(rf"{_SIZE_IN_FIRST_ROUND}[^;]{{0,40}}?{_SIZE_IN_LATER_ROUND}", note, re.IGNORECASE):
        try:
            first, later = parse_size(match.group(1)), parse_size(match.group(2))
        except ValueError:
            continue  # a size out of any unit's range says nothing
        if first > 1.3 * later:
            return match.group(0)[:160]
    for sentence in _SENTENCE_END.split(note):
        start, lower = _search(_START_PEAK_THEN_LOWER, sentence), _search(_SETTLES_LOWER, sentence)
        if start and lower and lower.start() > start.start() and _search(_HIGH_OR_SIZE, sentence) \
                and not _search(r"\b(?:keeps? (?:growing|increasing|rising|climbing)|grows|grew|climbs|until it (?:fails|crashes|runs out))\b", sentence[start.end():]):
            return sentence.strip()[:160]
    return None


def _engine_starting(note: str, frames: str) -> str | None:
    """What says the inference engine was starting or waking up when memory ran out: one of its
    start-up frames, or a clause of a failing sentence naming the engine and a start or wake verb
    ("when the trainer sets up vLLM", "as vLLM wakes up"); a clause that went well does not count."""
    framed = _search(_ENGINE_STARTING_FRAMES, frames)
    if framed:
        return framed.group(0)
    for sentence in _SENTENCE_END.split(note):
        if not _search(_FAILURE_WORDS, sentence):
            continue
        for clause in _CLAUSE.split(_without_what_went_well(sentence)):
            engine, verb = _search(_SERVING, clause), _search(_ENGINE_START_VERB, clause)
            went_well = _search(r"\bwithout (?:any )?(?:errors?|problems?|issues?)\b", clause) or \
                (_search(r"\b(?:fine|ok|okay|successfully|normally)\b", clause) and not _search(_FAILURE_WORDS, clause))
            if engine and verb and not went_well:
                return clause.strip()[:120]
    return None


def _unmodified_recipe(note: str) -> str | None:
    """Where the note says the run is a library's recipe as published: a sentence that names the
    default settings or official config and no change to them ("the official config, with some
    parameters changed" is the user's variant)."""
    for sentence in _SENTENCE_END.split(note):
        said = _search(_UNMODIFIED_RECIPE, sentence)
        if said and not _search(_RECIPE_CHANGED, sentence.replace(said.group(0), " ")):
            return said.group(0).strip()
    return None


def _fits_without_growth_mode(note: str) -> str | None:
    """The clause that says the run fits with TensorFlow's growth mode off, in any order of its
    words ("without allow_growth it fits", "the same run fits once allow_growth is off")."""
    for sentence in _SENTENCE_END.split(note):
        for clause in re.split(r"[,;]\s|\bbut\b|\bwhereas\b|\bwhile\b", sentence):
            mode = _search(_GROWTH_MODE, clause)
            if mode and _search(_GROWTH_MODE_OFF, clause) and _search(_FITS_SAID, clause) and not _search(_FAILURE_WORDS, clause):
                return clause.strip()[:120]
    return None


# "Every GPU loads the whole model", "each card loads it once", "not spread over the cards": one full
# copy of the weights per device (a process per GPU each loading everything), not a model too large
# for the job's GPUs together.
# (a card named by its model counts as a device: "each of my six 40G A100s", "both 3090s")
_DEVICE_NOUN = r"(?:gpus?|cards?|ranks?|processe?s?|devices?|workers?|[ahlvt]\d{2,3}s|rtx ?\d{4}s|\d{4}s)"
_EACH_DEVICE = (rf"\b(?:every|each(?: of the)?|all(?: (?:the|\d+|of the))?|both)\s+(?:\w+\s+)?{_DEVICE_NOUN}\b|"
                rf"\b(?:every|each)(?: one)? of (?:my |the |our |its |these )?(?:[\w-]+\s+){{0,3}}?{_DEVICE_NOUN}\b|"
                r"\bper (?:gpu|card|rank|process|device)\b")
_LOADS_A_COPY = (r"\bload(?:s|ed|ing)?\b|\bcop(?:y|ies)\b|\breplicat\w*|\bduplicat\w*|"
                 r"\b(?:hold(?:s|ing)?|ha(?:s|ve|ving)|keep(?:s|ing)?|get(?:s|ting)?|receiv\w*) (?:a |the |its own |an )?(?:whole|full|entire|complete)\b")
_SPREAD = r"\b(?:across|split\w*|shard\w*|spread\w*|distribut\w*|divid\w*|partition\w*)\b"
_NOT_SPREAD = (r"\b(?:not|n't|never|instead of being)\s+(?:\w+\s+)?(?:spread|split|sharded|distributed|divided|partitioned|"
               r"allocated across|placed across)\b[^.;]{0,30}\b(?:over|across|among|between|to|on)\b[^.;]{0,20}\b(?:gpus|cards|devices)\b|"
               # "it is copied four times onto the 4 GPUs"
               r"\b(?:cop(?:ied|ies)|replicated|duplicated|loaded) (?:\w+ )?times (?:onto|on|to|into|across) (?:the |all |my )?(?:\d+ )?(?:gpus|cards|devices)\b")


def _copy_per_device(note: str) -> str | None:
    """The clause that says each GPU (or process) loads its own full copy of the model, or that the
    model was not spread over the cards."""
    not_spread = _search(_NOT_SPREAD, note)
    if not_spread:
        return not_spread.group(0)
    for sentence in _SENTENCE_END.split(note):
        for clause in _CLAUSE.split(sentence):
            each, loads = _search(_EACH_DEVICE, clause), _search(_LOADS_A_COPY, clause)
            # ("loaded whole on each GPU rather than split": the spread is what did not happen)
            spread = re.sub(rf"\b(?:rather than|instead of|and not|not|n't|never) (?:being )?{_SPREAD}", " ", clause, flags=re.IGNORECASE)
            if each and loads and _search(r"\b(?:model|weights|it|checkpoint|copy|parameters)\b", clause) \
                    and not _search(_SPREAD, spread):
                return clause.strip()[:120]
    return None


def _after(note: str, said: str, length: int) -> str:
    """The `length` characters of the note that follow the first occurrence of `said`."""
    at = note.find(said)
    return note[at + len(said): at + len(said) + length] if at >= 0 else ""


def _class_count_that_matters(note: str) -> tuple[int, str] | None:
    """The largest class count the note gives (5,000 or more), when a smaller count is said to fit or
    its own clause says the run failed ("fine with 1k classes, OOM with 50k")."""
    counts = [(int(_number(found.group(1).rstrip("+"))), found) for found in
              re.finditer(r"((?<![\w.,])\d[\d,.]*\s?[kK]?\+?)\s(?:output |target |different )?(?:classes|identities|categories|labels)\b", note)
              if re.fullmatch(r"[\d,.]+\s?[kK]?\+?", found.group(1))]
    if not counts:
        return None
    largest, where = max(counts, key=lambda pair: pair[0])
    smaller_fits = any(count < largest and _search(_WENT_WELL + r"|\b(?:works?|fine|everything is fine|runs?)\b",
                                                   _clause_around(note, found.group(0))) for count, found in counts)
    if largest >= 5000 and (smaller_fits or _search(_FAILURE_WORDS, _clause_around(note, where.group(0)))):
        return largest, where.group(0)
    return None


# An embedding table's rows: a vocabulary, users, items, ids or hash buckets ("the vocab_size of the
# Embedding layer is about 500000", "nn.Embedding(5_000_000, 128) for the item ids").
_EMBEDDING_WORDS = r"\bembedding(?:s)?(?: layer| table| matrix| lookup)?\b|\bnn\.Embedding\b|\bEmbedding\(|\bembedding_column\b|\binput_dim\b"
_TABLE_ROWS = (r"((?<![\w.,])\d[\d,._]*\s?(?:[kKmM]\b|million\b|thousand\b)?)(?:\s?(?:unique |distinct |different )?"
               r"(?:words|tokens|items|users|ids|entities|products|buckets|rows|categories|features|vocab\w*))?")


def _embedding_table_rows(note: str) -> tuple[int, str] | None:
    """The row count of an embedding table the note sizes (100,000 rows or more), read from the
    sentence that names the embedding and a vocabulary, id or bucket count."""
    for sentence in _SENTENCE_END.split(note):
        named = _search(_EMBEDDING_WORDS, sentence)
        if not named or not _search(r"vocab\w*|input_dim|\bitems?\b|\busers?\b|\bids?\b|entities|buckets|\brows\b|categor\w+|\bEmbedding\(", sentence):
            continue
        # the output side of a language model is the logits' business, not a table of weights
        if _search(r"\blogits?\b|\blm[_ ]head\b|softmax|cross[- _]?entropy", sentence):
            continue
        for found in re.finditer(_TABLE_ROWS, sentence):
            try:
                rows = int(_number(found.group(1).replace("_", "")))
            except ValueError:
                continue
            if rows >= 100_000:
                return rows, _clause_around(sentence, found.group(0)).strip()[:120]
    return None


# "when input_ids is 1,47 it always reproduces; with 1,48 it does not", "a batch of 7 crashes while a
# batch of 8 runs fine": a size that fails where a *larger* one of the same kind works is not memory
# running out by volume; it is one shape hitting a kernel, a tiling or an allocator path that breaks.
_CLAUSE_SPLIT = re.compile(r";\s*|(?<=[\w)\]])[.?!]\s+|,?\s+(?:but|while|whereas|yet)\s+|\n")
_SIZE_WORDS = re.compile(r"\b(?:input_ids|tokens?|length|len|seq\w*|dimension|dim|size|batch\w*|shape|resolution|pixels?|images?|"
                         r"samples?|frames|points|rows)\b|\d\s?,\s?\d{1,2}\b|\d\s?x\s?\d", re.IGNORECASE)
_FAILS = re.compile(r"\b(?:fails?|failed|failing|crash\w*|errors?|ooms?|out of memory|reproduces?|reproduced|breaks?|dies|died|throws)\b", re.IGNORECASE)
# what the run at the other size did: the note's words for a run that went through, or the failure denied
_SIZE_WORKS = re.compile(rf"\b(?:{_WORKS}|fine|passes|passed|does not|doesn't|did not|didn't|no (?:error|crash|oom)s?|(?:get|gets|got) (?:a |the )?results?)\b", re.IGNORECASE)
# a number that measures the workload: not a size in bytes, a count of GPUs, a duration or a version
# ("800k items" is 800 thousand; "16G" and "512MB" are sizes in bytes, not counts)
_WORKLOAD_NUMBER = re.compile(r"(?<![\d.,v])(\d{1,6})(?:\s?,\s?(\d{1,2}))?(k\b)?(?![\d.]|,\d{3}|\s?(?:[KMGT]i?B|[MGT]\b|%|gpus?|cards?|"
                              r"epochs?|steps?|iterations?|hours?|minutes?|seconds?|s\b|ms\b|days?|workers?|nodes?|threads?|cores?|processes|ranks?|"
                              r"machines?|instances?|replicas?|devices?|times?))", re.IGNORECASE)


def _clause_sizes(clause: str) -> list[int]:
    return [int(match.group(2) or match.group(1)) * (1000 if match.group(3) else 1) for match in _WORKLOAD_NUMBER.finditer(clause)]


def _works_then_fails(parts: list[str]):
    """(working, failing) for each pair of neighbouring parts where one says a run went through and
    the other that it failed (in either order)."""
    for first, second in zip(parts, parts[1:]):
        for working, failing in ((first, second), (second, first)):
            if _SIZE_WORKS.search(working) and _FAILS.search(failing) and not _SIZE_WORKS.search(failing):
                yield working, failing


def smaller_fails_larger_works(note: str) -> str | None:
    """The clause that names a failing size smaller than one that works, if the note has one."""
    if not note or not _SIZE_WORDS.search(note):
        return None
    clauses = [clause for clause in _CLAUSE_SPLIT.split(note[:4000]) if clause and clause.strip()]
    for working, failing in _works_then_fails(clauses):
        # "it trains at batch 32; wrapped with accumulation even batch 8 fails": the setup changed
        # between the two runs, so the sizes are not all that differs
        if _search(r"\beven\b", failing) or _search(r"\b(?:original|wrapped|added|adding|enabled|enabling|switched|instead|another|different)\b", failing + " " + working):
            continue
        # ("training fits at batch 8 ... and at inference even batch 1 fails": two phases with their own inputs)
        phases = [bool(_search(r"\btrain", clause)) for clause in (working, failing)], \
            [bool(_search(r"\b(?:inference|infer\w*|eval\w*|test\w*|validat\w*|predict\w*)\b", clause)) for clause in (working, failing)]
        if phases[0][0] != phases[0][1] and phases[1][0] != phases[1][1]:
            continue
        # ("works with the full 800k and with 150k, but 300k crashes": some working size is larger)
        failing_sizes, working_sizes = _clause_sizes(failing), _clause_sizes(working)
        if failing_sizes and working_sizes and 0 < min(failing_sizes) < max(working_sizes):
            return f"{failing.strip()}; {working.strip()}"[:160]
    return None


# "No error appears when running the same setup with the VULKAN backend", "the Vulkan backend handles
# multi-GPU splitting correctly": another backend on the same card holds the same workload, so the one
# that fails is short of something other than the card's memory.
_BACKEND_NAMES = r"(?:vulkan|cuda|rocm|hip|sycl|metal|opencl|directml|dml|mps|xpu|level[ _]zero|zluda|ipex)"
_OTHER_BACKEND_WORKS = (rf"\b(?:no error|no errors|nothing fails|never fails|does(?:n't| not) fail|works?|worked|runs? fine|ran fine|is fine|fine|succeeds?|handles? (?:\w+ ){{0,3}}correctly)\b[^.;]{{0,60}}?"
                        rf"\b(?:with|on|using|in|under) (?:the )?({_BACKEND_NAMES}) backend\b|"
                        rf"\bthe ({_BACKEND_NAMES}) backend (?:\w+ )?(?:works|worked|handles|runs|ran|is fine|succeeds|has no)\b|"
                        # "though Vulkan runs it fine", "with Vulkan the identical run works"
                        rf"\b({_BACKEND_NAMES}) (?:runs?|ran|handles?|handled|works?|worked|loads?|loaded) (?:it |them |this |that |the same \w+ )?"
                        r"(?:fine|correctly|without (?:a |any )?(?:problem|issue|error)s?)\b|"
                        rf"\bwith ({_BACKEND_NAMES})\b,? (?:the |this |my )?(?:identical |same )?(?:[\w-]+ ){{0,4}}(?:works|runs fine|is fine|succeeds|goes through)\b")
# Intel's GPU runtimes refuse one allocation of 4 GB or more unless told otherwise (Level Zero's
# UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS, a PyTorch XPU build that lifts it).
_SINGLE_ALLOCATION_CAP = (r"RELAXED_ALLOCATION_LIMITS|\b(?:buffers?|allocations?|tensors?|weights?)\b(?: buffer)?(?: size)?[^.;]{0,40}?"
                          r"(?:below|under|above|over|larger than|bigger than|more than|exceeds?|>)\s?~?\s?(?:4\s?GB|4\s?GiB|4[0-2]\d\d\s?MiB|4096\s?MB)\b")
_INTEL_GPU = r"\b(?:intel|arc|sycl|xpu|level[ _]zero|oneapi|iris|battlemage|lunar lake)\b"


def smaller_card_works(note: str) -> str | None:
    """"With the same inputs a 1050 Ti gets a result, a 3060 gets this error": the clause pair naming a
    card that works and a card with more memory that fails, if the note has one."""
    # (cheap checks first: most notes name no card, or only one)
    if not note or not _FAILS.search(note) or len(set(re.findall(r"\d{3,4}", note))) < 2 or not find_gpu_name(note, bare=True):
        return None
    # (a sentence keeps "slow but I get a result" with its card; a clause splits "works on X but fails on Y")
    sentences = [part for part in _SENTENCE_END.split(note[:4000]) if part and part.strip()]
    clauses = [clause for clause in _CLAUSE_SPLIT.split(note[:4000]) if clause and clause.strip()]
    for working, failing in [*_works_then_fails(sentences), *_works_then_fails(clauses)]:
        small_card, large_card = find_gpu_name(working, bare=True), find_gpu_name(failing, bare=True)
        small, large = (capacity_of_gpu(small_card) if small_card else None), (capacity_of_gpu(large_card) if large_card else None)
        if small and large and small < large:
            return f"{working.strip()}; {failing.strip()}"[:160]
    return None


def _clause_around(note: str, said: str) -> str:
    """The clause of the note (a sentence cut at commas and but/while/although) holding `said`."""
    for sentence in _SENTENCE_END.split(note):
        for clause in _CLAUSE.split(sentence):
            if said in clause:
                return clause
    return note


def _without_what_went_well(sentence: str) -> str:
    """The sentence with the clauses that say something worked removed (a where-word before such a
    clause, "while the training runs fine", goes with it)."""
    kept, start = [], 0
    for boundary in [*_CLAUSE.finditer(sentence), None]:
        end = boundary.start() if boundary else len(sentence)
        clause = sentence[start:end]
        if not (_search(_WENT_WELL, clause) and not _search(_FAILURE_WORDS, clause)) and not _search(_WORKAROUND, clause):
            kept.append(clause)
        if boundary is None:
            break
        if boundary.group(0) in ",;":
            kept.append(boundary.group(0))
        start = boundary.end() if boundary.group(0) in ",;" else boundary.start()
    return "".join(kept)


_EVAL_WITHIN_TRAINING = (r"\b(?:evaluation|validation|eval|evaluating|validating|testing)\b (?:\w+ ){0,2}"
                         r"(?:during|in the middle of|while|mid-?|partway through|between epochs of) ?(?:the )?training\b")

# Decoders of images and latents (a VAE's, a super-resolution model's): their "decoding" is no
# token-by-token generation.
_IMAGE_DECODER = (r"\bvae\b|\blatents?\b|super-?resolution|\bupscal\w*|\bimages?\b|\bvideos?\b|\bframes?\b|"
                  r"\bpixels?\b|\bautoencoder\b|\bunet\b|\bdiffusion\b")

def _before_when_words(place: str) -> str:
    """A where-phrase up to a when-word: in "on it until the OOM ends training" the training is when
    it ended, not where it failed."""
    return re.split(r"\b(?:until|till|before|after|then|so that)\b", place, maxsplit=1, flags=re.IGNORECASE)[0]


def note_phase(note: str) -> tuple[Phase, str] | None:
    """The phase named where the note says the run failed ("fails inside loss.backward()"), else anywhere."""
    # "256 per device for both train and eval", "train/eval batch sizes": a setting for both
    # phases names the training run, not an evaluation.
    note = re.sub(r"\btrain(?:ing)?\s*(?:and|/|&)\s*(?:eval(?:uation)?|validation|val|test)\b|"
                  r"\b(?:eval(?:uation)?|validation|val|test)\s*(?:and|/|&)\s*train(?:ing)?\b", "training", note, flags=re.IGNORECASE)
    # "the model loaded with AutoModel.from_pretrained" says how the model was set up, not that the
    # failure came while loading it.
    note = re.sub(r"\b(?:loaded|created|instantiated|initiali[sz]ed|built|made) (?:with|using|via|by|through|from) "
                  r"(?:[\w]+\.)*(?:from_pretrained|torch\.load|load_state_dict|load_checkpoint)\w*(?:\([^)]*\))?",
                  "set up", note, flags=re.IGNORECASE)
    # "is there an inference mode I can use?": a mode asked for names a remedy, not where it failed
    note = re.sub(r"\b(?:is there|are there|there is|there's|is there any|any|an|some) (?:\w+ )?(?:torch\.)?inference[ _]mode\b",
                  " ", note, flags=re.IGNORECASE)
    # "during nlp.update (not evaluation)", "in training, never in validation": a phase denied
    note = re.sub(r"\b(?:not|never|no|rather than) (?:during |in |at |while |the )*(?:evaluation|evaluating|validation|validating|eval|inference|testing)\b",
                  " ", note, flags=re.IGNORECASE)
    if _image_generator(note) and not _search(r"\btokens?\b|\bprompts?\b|\btext\b", note):
        # A GAN's generator "generates" in every training step: no sampling loop, no KV cache. Outside
        # training, "generating" with it (or with any generator fed latent codes) is one forward
        # pass per batch of images: inference.
        note = re.sub(r"\bgenerat(?:e|es|ed|ion|ing)\b|\bsampl(?:e|es|ed|ing)\b(?= (?:\w+ ){0,3}(?:images?|faces?|pictures?|samples?|outputs?|from)\b)",
                      "produced" if _search(_TRAINS_THE_MODEL, note) else "running inference",
                      note, flags=re.IGNORECASE)
    if _search(r"mask ?generator|\bsam\b|segment[- ]anything|\bsam2?_", note) and not _search(_LLM, note):
        # A mask generator's generate() segments one image: no tokens are generated.
        note = re.sub(r"\bgenerat(?:e|es|ed|ion|ing|or)\b", "segment", note, flags=re.IGNORECASE)
    if _search(_IMAGE_DECODER, note) and not _search(_LLM, note) and not _search(r"\btokens?\b|\bprompts?\b", note):
        # A VAE or image decoder "decoding" latents runs one forward pass: no tokens are generated.
        note = re.sub(r"\bdecod(?:e|es|ing)\b", "reconstructing", note, flags=re.IGNORECASE)
    sentences = re.split(r"(?<=[\w)\]])\.\s+(?=[A-Z])|;\s+|\n", note)
    sentences = [_without_what_went_well(sentence) for sentence in sentences]
    note = " ".join(sentences)
    failing = [sentence for sentence in sentences if _search(_FAILURE_WORDS, sentence)]
    for sentence in failing:
        # "the evaluation during training runs out": the evaluation is what ran, training is when.
        periodic = _search(_EVAL_WITHIN_TRAINING, sentence)
        if periodic:
            return "evaluation", f'the note says "{periodic.group(0)}"'
    # A where-phrase in the clause that says it failed names where ("Training on train-100 works at
    # batch 4, and after an epoch it runs out of memory in validation"); bare phase words there are
    # often only when ("fails before training", "until training exits").
    for sentence in failing:
        for clause in re.split(r"[,;:]\s", sentence):
            if clause == sentence or not _search(_FAILURE_WORDS, clause):
                continue
            for where in re.finditer(_WHERE, clause, re.IGNORECASE):
                for phase, pattern in _PHASE_NOTE_PATTERNS:
                    if _search(pattern, _before_when_words(where.group(1))):
                        return phase, f'the note says "{where.group(0).strip()}"'
            # The failing clause's own subject ("torch.load(ckpt) goes out of memory", "generate()
            # OOMs") names where, over a where-phrase elsewhere in the sentence ("in DDP training, ...").
            for phase, pattern in _PHASE_NOTE_PATTERNS:
                if phase in ("loading", "optimizer_setup", "generation"):
                    match = _search(pattern, clause)
                    if match:
                        return phase, f'the note says "{match.group(0)}"'
    scopes = [*failing, note]
    for index, scope in enumerate(scopes):
        # By position, not identity: " ".join of one sentence is that very string object.
        whole_note = index == len(scopes) - 1 and len(failing) > 0
        for where in re.finditer(_WHERE, scope, re.IGNORECASE):
            for phase, pattern in _PHASE_NOTE_PATTERNS:
                if whole_note and phase in _NOTE_ONLY_IN_FAILURE:
                    continue
                if _search(pattern, _before_when_words(where.group(1))):
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


# A training entry point handed its validation data ("trainer.fit(model, train_data, val_data)",
# "train(model, train_loader, val_loader)"): the call trains, the validation set is an argument.
_TRAINING_CALL = re.compile(r"(?:^|[\s.=])(?:fit|train|train_model|fit_model)\s*\(")
_EVAL_DATA_ARGUMENT = re.compile(r"\b\w*(?:val|valid|validation|eval|test)_?(?:data\w*|loaders?|sets?|ds|dataloaders?|iter\w*)\b", re.IGNORECASE)


def _without_eval_data_arguments(code: str) -> str:
    return _EVAL_DATA_ARGUMENT.sub("data", code) if _TRAINING_CALL.search(code) else code


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
        text = f"{frame.function or ''} {_without_eval_data_arguments(frame.code or '')}"
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


_SENTENCE_END = re.compile(r"(?<=[\w)\]])[.?!]\s+|;\s+|:\s+|\n")


def _failing_sentences(note: str) -> str:
    """The note's sentences that say the run failed (what they name is where it failed)."""
    return " ".join(sentence for sentence in _SENTENCE_END.split(note) if _search(_FAILURE_WORDS, sentence))


# The allocator setting was given but did not take effect ("the allocator settings say
# expandable_segments is False", "PYTORCH_ALLOC_CONF is silently ignored").
# A library that does not apply the placement or cap it was given ("doesn't respect gpu_split, OOMs on
# the first GPU no matter what"), or whose automatic split fails where one set by hand loads ("OOM with
# gpu_split_auto, must specify the split manually"): the library's planning, not the workload, is short.
_PLACEMENT_SETTING = (r"(?:gpu[_ ]split|(?:auto[_ ]?)?split|device_map|max_memory|memory (?:limit|cap|fraction)|"
                      r"per-gpu (?:limit|memory)|layer (?:split|allocation)|tensor_split|--[\w-]*(?:split|memory|limit)\w*)")
_PLACEMENT_NOT_HONOURED = (rf"\b(?:does ?n[o']t|did ?n[o']t|does not|did not|won't|will not|never) (?:seem to )?(?:respect|honou?r|obey|adhere to|follow|apply)\b[^.;]{{0,30}}?\b{_PLACEMENT_SETTING}|"
                           rf"\b(?:ignores?|ignored|ignoring)\b (?:my |the |any |its )?{_PLACEMENT_SETTING}|"
                           rf"\b{_PLACEMENT_SETTING}\b[^.;]{{0,30}}?\b(?:is|was|gets?|got|seems? to be|appears? to be|is being) (?:silently |completely )?ignored\b|"
                           r"(?<![a-z])(?:auto[_ -]?(?:split|splitting|placement)|(?:split|splitting)[_ -]auto)\b[^.;]{0,80}?\b(?:must|have to|need to|had to)\b[^.;]{0,30}?\bmanual\w*|"
                           r"(?<![a-z])auto[_ -]?(?:split|splitting)\b[^.;]{0,40}?\b(?:ooms?|fails?|crash\w*|runs? out)\b[^.;]{0,60}?\bmanual\w* (?:split|splitting)?\b[^.;]{0,20}?\b(?:works?|loads?|fits?)\b")
_SETTING_IGNORED = (r"\b(?:reports?|shows?|says?|lists?|prints?) (?:the )?(?:expandable[_ ]segments|max_split_size_mb) (?:as |is |=\s?)?(?:false|off|disabled)\b|"
                    rf"\b(?:expandable[_ ]segments|max_split_size_mb|{ALLOC_CONF_VARIABLE})\b[^.;]{{0,30}}?\b(?:is|was|stays|shows?|reads?|reported as) "
                    r"(?:still )?(?:false|off|disabled|not (?:enabled|applied|set|honou?red|picked up))\b|"
                    rf"\bignor\w* (?:the )?(?:expandable[_ ]segments|{ALLOC_CONF_VARIABLE}|allocator (?:setting|config\w*))|"
                    rf"\b(?:expandable[_ ]segments|{ALLOC_CONF_VARIABLE})\b[^.;]{{0,30}}?\b(?:is|was|gets?|got) (?:silently )?ignored\b|"
                    r"\b(?:setting|env(?:ironment)? var\w*|flag)\b[^.;]{0,30}?\bnever (?:takes?|took) effect|\bdoes(?:n't| not) take effect\b")
# A memory-saving option asked for that the code never applies ("gradient checkpointing is never enabled
# on that path", "the offload flag is silently ignored"): the library or script drops it.
# (a bounded, word-initial prefix: "\w+_checkpointing" tried at every letter of a long word is quadratic)
_SAVING_OPTION = (r"(?:gradient|activation)[_ ]checkpointing|\b\w{1,40}_checkpointing\b|\boffload\w*|\bload_in_[48]bit\b|\b[48][- ]?bit\b|"
                  r"\bquantiz\w*|\bmixed[_ ]precision\b|\bfp16\b|\bbf16\b|flash[_ ]attention|\bxformers\b|\bsdpa\b")
_SAVING_OPTION_DROPPED = (rf"(?:{_SAVING_OPTION})[^.;]{{0,60}}?\b(?:is|was|are|were|gets?|got) never (?:enabled|applied|passed|used|read|honou?red|turned on)\b|"
                          r"\b(?:setting|option|flag|argument|parameter)s? (?:is|was|are|were|stays?) silently (?:inert|ignored|dropped|unused|discarded)\b|"
                          rf"(?:{_SAVING_OPTION})[^.;]{{0,40}}?\b(?:is|was|are|were|gets?|got) (?:silently )?(?:ignored|dropped|discarded)\b|"
                          # the program said to ignore the option: "server.py seems to ignore --gpu-memory when
                          # --load-in-4bit is given" (not "I ignored ...": the user's choice)
                          rf"(?<!\bi )(?<!\bwe )(?<!\bi just )\b(?:seems? to |appears? to |silently |just |completely )?ignor(?:es|ing|e) (?:the |my |its )?"
                          rf"(?:(?:{_SAVING_OPTION})|--[\w-]*(?:memory|mem|offload|gpu|vram|device)[\w-]*|max_memory|(?:memory|vram) (?:limits?|caps?|settings?|options?))")
# The run fails only without the setting ("if I don't set expandable_segments I get OOM").
_NEEDS_THE_SETTING = (r"\b(?:without (?:setting |using |enabling )?|if (?:i|we) (?:don't|do not|didn't|did not) (?:set|use|enable|add)|"
                      r"unless (?:i|we) (?:set|use|enable|add))\b[^.;]{0,80}?\b(?:ooms?|out of memory|fails?|crash\w*|errors?)\b")


def _setting_helped(note: str) -> bool | None:
    """Did the allocator setting the note names help? Read in the sentence that names it."""
    for sentence in _SENTENCE_END.split(note):
        if not _search(_ALLOCATOR_SETTING, sentence):
            continue
        if _search(_NEEDS_THE_SETTING, sentence):
            return True  # "without it, OOM": the setting is what makes it fit
        if _search(_DID_NOT_HELP, sentence) or _search(r"\beven with\b|\balready\b|\bstill\b", sentence):
            return False
        if _affirmed_search(_HELPED, sentence):
            return True
    return None


# Two builds of one library compared: dotted versions that share their major number ("2.0.1" and
# "2.1.0", "0.2.5" and "0.2.6"), near each other, with an outcome word between or around them.
_DOTTED_VERSION = re.compile(r"(?<![\w.])v?(\d{1,3})\.(\d{1,4})(?:\.[\w+-]+)*(?!\s?(?:[KMGT]i?B|%|x\b|s\b|seconds?|minutes?|hours?|epochs?|steps?|ms\b))")
_OUTCOME = re.compile(r"\b(?:works?|worked|fine|ok|fits?|fitted|fails?|failed|breaks?|broke|broken|ooms?|crash\w*|runs?|ran|good|bad|"
                      r"grows?|grew|growing|climbs?|climbing|increas\w*|leaks?|leaking|flat|stable|"
                      # memory said to change between the builds: "has nearly quadrupled", "decreases by four times"
                      r"decreas\w*|doubled|tripled|quadrupled|halved|drops?|dropped|spikes?|spiked|blows? up|blew up)\b", re.IGNORECASE)


_SIZE_STATED = re.compile(_NOTE_SIZE)


_VERSION_CUE = re.compile(rf"(?:\bv|\b(?:version|release|build|{_LIBRARY_WORDS}|jaxlib|keras|tf|python)[\s=:-]*|"
                          # "when switched to 4.34", "downgrading to 0.9" (a setting is set, not switched back to)
                          r"\b(?:switch(?:ed|ing)?|downgrad(?:e|ed|ing)|upgrad(?:e|ed|ing)|revert(?:ed|ing)?|roll(?:ed|ing)? back|go(?:ing)? back|went back) to )$",
                          re.IGNORECASE)


def _looks_like_a_version(match: re.Match[str], note: str) -> bool:
    """x.y.z, or x.y right after "v", "version" or a library's name: "0.001" and "0.1" are settings."""
    return match.group(0).lstrip("v").count(".") >= 2 or match.group(0).startswith("v") or \
        bool(_VERSION_CUE.search(note[max(0, match.start() - 16):match.start()]))


# (a hyphenated name is its own library: "sentence-transformers 0.3.7" is not transformers)
# A settings listing labels each version with its package, known or not ("gradio: 3.16.2",
# "diffusers==0.21.4", "xformers = 0.0.20"): two versions under two labels are two packages.
_NAME_LABELS_VERSION = re.compile(r"(?<![\w-])([A-Za-z][\w.+-]{1,28}?)\s?(?::|==|=)\s?v?$")
_LIBRARY_BEFORE = re.compile(rf"(?<![\w-])((?:\w+-)*(?:{_LIBRARY_WORDS}|jaxlib|keras|tf|python|numpy))\W{{0,3}}$", re.IGNORECASE)


def _same_library(first: re.Match[str], second: re.Match[str], note: str) -> bool:
    """The library named right before each version, where both name one, is the same ("torch 1.11.0
    ... torch 2.0.1", not "PyTorch 1.2 and Python 3.6")."""
    names = [_LIBRARY_BEFORE.search(note[max(0, match.start() - 16):match.start()]) or
             _NAME_LABELS_VERSION.search(note[max(0, match.start() - 30):match.start()]) for match in (first, second)]
    def library(name: re.Match[str]) -> str:
        return {"pytorch": "torch", "tf": "tensorflow"}.get(name.group(1).lower(), name.group(1).lower())
    return not all(names) or library(names[0]) == library(names[1])


# A run that works once the checkpoint callback is off (not gradient or activation checkpointing).
_WORKS_WITHOUT_SAVING = (r"\b(?:(?:with|after) (?:the )?(?:model |weights? )?checkpointing (?:disabled|off|turned off|removed)|"
                         r"(?:disabling|turning off|removing|without) (?:the )?(?:model |weights? )?checkpointing)\b[^.;]{0,40}?"
                         r"\b(?:goes away|went away|disappears?|disappeared|works?|worked|is fine|runs? fine|ran fine|fixe[sd]|no (?:more )?(?:oom|error))")
# Two widths named with a number each, the smaller one fitting: "n_embd 2048 runs out of memory; at
# n_embd 1024 the same config trains fine".
_TWO_WIDTHS = (rf"\b(?:{_WIDTH})\b\s*(?:[=:]|of|is)?\s*(\d+)[^.;]{{0,60}}?(?:\.\s|;|,|\bbut\b|\bwhile\b)[^.;]{{0,20}}?"
               rf"\b(?:{_WIDTH})\b\s*(?:[=:]|of|is)?\s*(\d+)[^.;]{{0,40}}?\b(?:works?|worked|runs?|ran|fits?|fine|trains?|trained)\b")


def _two_widths_compared(note: str) -> str | None:
    for pair in re.finditer(_TWO_WIDTHS, note, re.IGNORECASE):
        if int(pair.group(2)) < int(pair.group(1)):
            return pair.group(0)[:120]
    return None


# One release installed two ways, one leaking and the other not: "pip install torch==1.4.0+cu100 has a
# memory leak, while conda install pytorch (also 1.4) is ok" (a packaging or bundled-library bug).
_INSTALL_WORD = r"\b(?:pip|conda|docker|wheels?|binar(?:y|ies)|source|ngc|container|image)\b"
_TWO_INSTALLS = (rf"{_INSTALL_WORD}(?:[^.;]|\.(?=\S)){{0,120}}?\b(?:leak\w*|fails?|runs? out|ooms?|has (?:a |the )?(?:memory )?(?:leak|problem|issue))\b"
                 rf"(?:[^.;]|\.(?=\S)){{0,40}}?\b(?:while|but|whereas)\b(?:[^.;]|\.(?=\S)){{0,20}}?{_INSTALL_WORD}(?:[^.;]|\.(?=\S)){{0,120}}?"
                 r"\b(?:is ok|is okay|is fine|works|worked|no (?:memory )?leak|does not leak|doesn't leak|did not leak|didn't leak)\b")


def _found(pattern: str, note: str) -> str | None:
    match = _search(pattern, note)
    return match.group(0)[:120] if match else None


def _two_builds_compared(note: str) -> str | None:
    versions = list(_DOTTED_VERSION.finditer(note))
    # Each version against the next few, not only the next: "with jax 0.2.12 / jaxlib 0.1.65 it grows,
    # with jax 0.2.9 / jaxlib 0.1.59 it stays flat" pairs the two jax builds across a jaxlib one.
    pairs = ((first, second) for index, first in enumerate(versions) for second in versions[index + 1:index + 4])
    for first, second in pairs:
        one, other = first.group(0).lstrip("v"), second.group(0).lstrip("v")
        if one == other or one.count(".") != other.count("."):
            continue
        # One of the pair must read as a version; the other is then the same library's. Builds of
        # different majors ("1.11.0" and "2.0.1") must both read as versions: "0.001" and "1.5" are settings.
        both = _looks_like_a_version(first, note) and _looks_like_a_version(second, note)
        if not _same_library(first, second, note) or first.group(1) != second.group(1) and not both:
            continue  # "torch 2.1.0 and transformers 2.4.0": two libraries, not two builds
        if not (both or _looks_like_a_version(first, note) or _looks_like_a_version(second, note)):
            continue
        if second.start() - first.end() > 120:
            # ("Here transformers==4.28.1. Today, same code and hardware, ... transformers==4.31.dev0": one
            # library named at both, sentences apart)
            names = [_LIBRARY_BEFORE.search(note[max(0, match.start() - 16):match.start()]) or
                     _NAME_LABELS_VERSION.search(note[max(0, match.start() - 30):match.start()]) for match in (first, second)]
            if not (all(names) and second.start() - first.end() <= 400 and _same_library(first, second, note)):
                continue
        if re.fullmatch(r"\s*(?:,|/|&|and|or)\s*(?:and\s+|or\s+)?", note[first.end():second.start()]):
            continue  # "on 2.4.1, 2.5.0 and nightly": builds listed together, one outcome for all
        around = note[max(0, first.start() - 60):second.end() + 60]
        # the clause that holds the pair: "both" in the next clause is about something else
        clause = re.split(r";|\.\s", note[max(0, first.start() - 60):first.start()])[-1] + note[first.start():second.end()] + \
            re.split(r";|\.\s", note[second.end():second.end() + 60])[0]
        # ("every step" counts steps, not builds)
        if re.search(r"\b(?:both|either|neither|regardless|same (?:on|with|in))\b|\b(?:all|every|any) (?:of (?:them|these|those)|versions?|builds?|releases?|tags?)\b|"
                     r"\b(?:all|any)\b(?! (?:the )?(?:steps?|epochs?|batch\w*|iterations?|the time|memory|ram|vram|gpus?|cards?)\b)", clause, re.IGNORECASE):
            continue  # the same outcome on both builds: no regression between them
        # an outcome, or memory measured on each build ("from 11 GB on 2.9.1 to 14.5 GB on 2.10.0")
        if _OUTCOME.search(around) or len(_SIZE_STATED.findall(clause)) >= 2:
            return note[first.start():second.end()]
    return None


# A serving engine's own account of the loaded weights (vLLM's memory profile and load lines): a
# measurement, better than any estimate from the parameter count and a guessed precision.
_MEASURED_WEIGHTS = (r"model weights take (\d+(?:\.\d+)?\s?[KMGT]i?B)|Loading (?:model )?weights took (\d+(?:\.\d+)?\s?[KMGT]i?B)|"
                     r"Model loading took (\d+(?:\.\d+)?\s?[KMGT]i?B)")


_PERSON_UNITS = {"GIB": 2**30, "GB": 10**9, "G": 10**9, "MIB": 2**20, "MB": 10**6}


def _said_bytes(number: str, unit: str) -> int:
    """A size a person wrote: their "GB" is 10^9 bytes (a log's "GB" is PyTorch's GiB: `_stated_size`)."""
    return int(float(number) * _PERSON_UNITS[unit.upper()])


def _stated_size(match: re.Match[str] | None) -> int | None:
    """The size a log line states, from the first group that matched (None when out of range)."""
    if not match:
        return None
    try:
        return parse_size(next(group for group in match.groups() if group))
    except ValueError:
        return None  # a figure out of range is no measurement


def _sgd_fits_adam_fails(note: str) -> bool:
    """One sentence naming SGD and Adam and a failure: the optimizer is the difference (Adam keeps
    two states per parameter, SGD none or one), in whatever order the words come."""
    sentences = _SENTENCE_END.split(note)
    if any(_search(r"\bsgd\b", sentence) and _search(r"\badam\w*", sentence) and _search(_FAILURE_WORDS, sentence)
           and not _search(r"\bboth\b|\beither\b|\bneither\b", sentence) for sentence in sentences):
        return True
    # across two sentences: "With SGD I can train at 4k tokens. With AdamW I can't train at all."
    cannot = rf"{_FAILURE_WORDS}|\b(?:can't|cannot|can not|unable to|not able to)\b"
    for first, second in zip(sentences, sentences[1:]):
        for fits, fails in ((first, second), (second, first)):
            if _search(r"\bsgd\b", fits) and not _search(r"\badam\w*", fits) and not _search(cannot, fits) \
                    and _search(r"\badam\w*", fails) and not _search(r"\bsgd\b", fails) and _search(cannot, fails):
                return True
    return False


_LATER_ROUND_FAILED = r"\b(?:second|next|2nd|third|later|following) (?:training )?(?:iteration|step|epoch|batch|pass|round)\b"


# A run of more digits than any size, count or version has: cut to this many before the note is read,
# since the readers' number patterns would otherwise try every digit of it as a start.
_LONGEST_NUMBER = 24


def _mark(signals: Signals, name: str, match: re.Match[str] | None) -> bool:
    """Set a flag read outside the flags table, with what was said as its evidence."""
    if match:
        setattr(signals, name, True)
        signals.evidence[name] = match.group(0)
    return bool(match)


# A sentence that asks how to set something up, or says it is wanted, names a remedy the run does not
# use yet: "How do I set QLoRA (4-bit NF4) to reduce memory?", "I want to try 8-bit Adam".
_WISH = re.compile(r"\bhow (?:do|can|could|should|would) (?:i|we|you|one)\b|\bhow to\b|\b(?:want|wanted|would like|wish|plan|planning|hope|hoping|"
                   r"thinking of|considering|going) to (?:use|try|set|enable|switch|load|apply|run)\b|\bis it possible to\b|\bis there a way to\b", re.IGNORECASE)


def _without_wishes(note: str) -> str:
    if not _WISH.search(note):
        return note
    # (the separators are kept: "quantized: yes" stays one reading)
    pieces = re.split(f"({_SENTENCE_END.pattern})", note)
    return "".join(piece for index, piece in enumerate(pieces) if index % 2 or not _WISH.search(piece))


# What sets a build named only as the newest ("nightly", "the latest dev commit") beside another build or
# beside a change it brought: "since the nightly", "commit 3f9a2c1 works fine", "the nightly leaks",
# "the latest driver caused it", "2.4.0 peaks at half the card".
_NEWEST_BUILD_COMPARED = (r"(?<![\w-])(?:since|caused|caus(?:es|ing)|regress\w*|leak\w*|works?|worked|was fine|is fine|runs? fine|better|worse|"
                          r"previous|older|earlier|used to|downgrad\w*|upgrad\w*|updat\w*|stable|than|peaks?|grow\w*|increas\w*|"
                          r"commits? [0-9a-f]{7,}|revisions?)(?![\w-])")
# The note says every version it tried fails alike ("with both versions", "on all releases I tried")
_EVERY_VERSION_FAILS = (r"\b(?:with|in|on|for|under|using) (?:both|all|either|every|each) (?:of (?:the|these|those) )?(?:\w+ )?"
                        r"(?:versions?|releases?|builds?|commits?|revisions?)\b|"
                        r"\b(?:both|all) (?:the )?(?:\w+ )?(?:versions?|releases?|builds?) (?:\w+ )?(?:fail|leak|show|have|give|crash|behave)")


def _native_stack_lines(context: TriageContext) -> str:
    """The native frames of the log around the message (a Java or C++ stack: "at
    jcuda.driver.JCudaDriver.cuCtxCreate(...)", "#3 cuInit"), which the Python traceback reader does
    not parse: where a driver call in them failed is executed code, not text."""
    excerpt = context.excerpt.text if context.excerpt else ""
    return "\n".join(line.strip() for line in excerpt[:20000].splitlines()
                     if re.match(r"\s*(?:at [\w.$<>]+\(|#\d+\s+(?:0x[0-9a-f]+ in )?\w|@\s+0x[0-9a-f]+ )", line))


def _without_questions(note: str) -> str:
    """The note without its questions: "should I run it under no_grad?" asks about a remedy, it
    does not say the run has it."""
    if "?" not in note:
        return note
    # (split, not a pattern that scans ahead for the "?" from every position: linear in the note)
    pieces = re.split(r"([.!?\n])", note)
    return "".join(" " if index + 1 < len(pieces) and pieces[index + 1] == "?" or piece == "?" else piece
                   for index, piece in enumerate(pieces))


# A web UI's walkthrough ("in step 3, one-click training"; "step 2: click Process") numbers the
# stages of its procedure: a low-numbered "step" there is a stage, not the third training iteration.
_UI_WALKTHROUGH = r"\bclick(?:s|ed|ing)?\b|\b(?:tab|button|dropdown|drop-down|menu)s?\b|\bweb ?ui\b|\bgui\b"


# A line of code pasted in a note: indented, or a statement (an assignment, a call, a loop header).
_CODE_LINE = re.compile(r"^(?:[ \t]{2,}\S|[ \t]*(?:for|while|if|elif|with|def|return|import)\b[^\n]*:?\s*$|"
                        r"[ \t]*[\w.\[\]'\"]+(?:\s*,\s*[\w.]+)*\s*=[^=][^\n]*$|[ \t]*[\w.]+\([^\n]*\)\s*$)", re.MULTILINE)


def _without_code_lines(note: str) -> str:
    """The note's prose: a training loop pasted into it lists every call it makes (optimizer.step(),
    loss.backward()), which says what the code does, not where it failed."""
    if "\n" not in note:
        return note
    return "\n".join(line for line in note.split("\n") if not _CODE_LINE.match(line))


def _without_walkthrough_steps(note: str) -> str:
    if not _search(_UI_WALKTHROUGH, note):
        return note
    return re.sub(r"\bsteps? (?:[1-9]|one|two|three|four|five|six)\b(?![\d,.])|\bsteps? (?:[1-9])(?=[,.:;)]|$)", "stage", note,
                  flags=re.IGNORECASE)


_ALSO_FAILS = (r"\b(?:all|also|still|too|as well|each|both|every one|all of them|likewise)\b[^.;]{0,20}?"
               r"\b(?:grows?|grew|growing|fails?|failed|crash\w*|oom\w*|run(?:s)? out|ran out|die[sd]?|climbs?)\b|"
               r"\b(?:grows?|grew|fails?|failed|crash(?:es|ed)?|run(?:s)? out|ran out)\b[^.;]{0,12}\b(?:all|too|as well|alike|likewise)\b")


def _smaller_inputs_also_fail(note: str, said: str) -> bool:
    """The sentence that names the smaller input goes on to say it failed (or grew) as well."""
    start = note.find(said) if said else -1
    if start < 0:
        return False
    rest = re.split(r"(?<=[\w)\]])\.\s|;\s|\n", note[start + len(said):], maxsplit=1)[0]
    return bool(_search(_ALSO_FAILS, rest))


def read_signals(context: TriageContext) -> Signals:
    note = re.sub(rf"\d{{{_LONGEST_NUMBER + 1},}}", lambda run: run.group(0)[:_LONGEST_NUMBER], english_reading(context.note or ""))
    frames = frame_text(context)
    message = context.error.raw_message if context.error else ""
    everything = "\n".join([note, frames, message])
    signals = Signals()
    failing = _failing_sentences(note)
    # The note without the clauses that say what worked: a setting named there is the alternative
    # that ran, not the failing run's ("with device_map='auto' it trains").
    what_failed = " ".join(_without_what_went_well(sentence) for sentence in _SENTENCE_END.split(note))
    signals.phase, signals.phase_source = detect_phase(context, note)
    read_numbers(note, signals, what_failed)
    if signals.batch_size is not None:
        signals.evidence.setdefault("batch_size", "the note")
    if context.runtime:
        read_runtime(context, signals)
    flags = {
        "growth": (_GROWTH, _without_walkthrough_steps(note)), "frees_every_step": (_FREES_EVERY_STEP, note), "immediate": (_IMMEDIATE, note), "batch_no_help": (_BATCH_NO_HELP, note),
        "input_no_help": (_INPUT_NO_HELP, note), "repeated_calls": (_REPEATED, note), "upgrade_regression": (f"{_VERSION_CHANGE}|{_WORKED_BEFORE_NOW}", note),
        "other_process_hint": (_OTHER_PROCESS, note), "orphaned_memory": (_ORPHANED_MEMORY, note), "cpu_mode": (_CPU_MODE, note), "construction": (_CONSTRUCTION, note),
        "no_grad_already": (_NO_GRAD_ALREADY, _without_questions(_without_wishes(note))), "free_at_failure": (_FREE_AT_FAILURE, note),
        "periodic_step": (_PERIODIC, note), "long_input": (_LONG_INPUT, note),
        "serving_engine": (_SERVING, everything), "full_finetune": (_FULL_FINETUNE, note),
        "frozen": (_FROZEN, note), "small_state_optimizer": (_SMALL_STATE_OPTIMIZER, note),
        # "LoRA works, full training dies": adapters named in a clause that went well are not what failed
        "lora": (_LORA, _without_wishes(what_failed)),
        "low_precision": (_LOW_PRECISION, note), "full_precision_said": (_FULL_PRECISION, note), "allocator_setting": (_ALLOCATOR_SETTING, note),
        "fragmentation_said": (_FRAGMENTATION_SAID, note), "rank0_heavy": (_RANK0_HEAVY, note), "ranks_on_gpu0": (_RANKS_ON_GPU0, note), "placed_on_gpu0": (_PLACED_ON_GPU0, note), "dispatch_undone": (_DISPATCH_UNDONE, everything), "restored_onto_saved_gpu": (_RESTORED_ONTO_SAVED_GPU, note), "separate_programs": (_SEPARATE_PROGRAMS, note), "memory_follows_workers": (_MEMORY_FOLLOWS_WORKERS, note), "saving_option_dropped": (_SAVING_OPTION_DROPPED, note), "other_gpu_wanted": (_OTHER_GPU_WANTED, note), "loads_saved_state": (_LOADS_SAVED_STATE, note), "several_gpus": (_SEVERAL_GPUS, note), "splits_weights": (_SPLITS_WEIGHTS, f"{what_failed}\n{frames}\n{message}"), "switch_no_effect": (_SWITCH_NO_EFFECT, note), "many_sequences": (_MANY_SEQUENCES, note), "under_load": (_UNDER_LOAD, note),
        "more_gpus_no_help": (_MORE_GPUS_NO_HELP, note),
        "logits_said": (_LOGITS_SAID, failing), "transducer": (_TRANSDUCER, everything), "saver_costs_more": (_SAVER_COSTS_MORE, note), "fft_named": (_FFT, everything),
        "collector_helps": (_COLLECTOR_HELPS, note), "julia": (_JULIA, everything), "dataset_cached": (_DATASET_CACHED, note), "host_data_job": (_HOST_DATA_JOB, note),
        "varying_shapes": (_VARYING_SHAPES, note), "tracing_compiler": (_TRACING_COMPILER, f"{note}\n{message}"), "colocated": (_COLOCATED, everything), "engines_share_gpu": (_ENGINES_SHARE_GPU, note), "context_window_set": (_RUNTIME_CONTEXT_KNOB, note), "backend_off_fixes": (_BACKEND_OFF_FIXES, note), "known_bug_back": (_KNOWN_BUG_BACK, note), "gpu0_used_instead": (_GPU0_USED_INSTEAD, note), "accumulation_adds_memory": (_ACCUMULATION_ADDS_MEMORY, note), "other_loader_works": (_OTHER_LOADER_WORKS, note), "contrary_to_docs": (_CONTRARY_TO_DOCS, note), "repeated_loading": (_REPEATED_LOADING, note), "samples_in_training": (_SAMPLES_IN_TRAINING, note), "sampling_removed_helps": (_SAMPLING_REMOVED_HELPS, note), "offload": (_OFFLOAD, everything), "host_ram": (_HOST_RAM, note), "optimizer_step": (_OPTIMIZER_STEP, _without_code_lines(note)),
        "loss_kept": (_LOSS_KEPT, note), "grad_left_on": (_GRAD_LEFT_ON, note), "outputs_kept": (_OUTPUTS_KEPT, note), "attention_said": (_ATTENTION_SAID, failing), "naive_attention": (_NAIVE_ATTENTION, note),
        "library_said": (_LIBRARY_SAID, note), "keras_call_in_loop": (_KERAS_CALL_IN_LOOP, note), "large_vocab_said": (_LARGE_VOCAB_SAID, note), "freed_then_again": (_FREED_THEN_AGAIN, note), "reload_in_process": (_RELOAD_IN_PROCESS, note), "loader_settings": (_LOADER_SETTINGS, note), "wsl": (_WSL, everything), "native_fits": (_NATIVE_FITS, note), "own_code": (_OWN_CODE, note), "dataset_size_matters": (_DATASET_SIZE_MATTERS, note), "bulk_outputs": (_BULK_OUTPUTS, note), "training_set_size_matters": (_TRAINING_SET_SIZE_MATTERS, note), "smaller_input_fits": (_SMALLER_INPUT_FITS, note), "half_fits": (_HALF_FITS, note), "tool_misestimates": (_TOOL_MISESTIMATES, note), "other_framework_fits": (_OTHER_FRAMEWORK_FITS, note), "dataset_bytes_matter": (_DATASET_BYTES_MATTER, note), "dataset_decides": (_DATASET_DECIDES, note), "model_replaced": (_MODEL_REPLACED, note), "auto_batch": (_AUTO_BATCH, everything), "works_alone": (_WORKS_ALONE, note), "several_processes_one_gpu": (_SEVERAL_PROCESSES_ONE_GPU, note), "fewer_processes_fit": (_FEWER_PROCESSES_FIT, note), "still_fails": (_STILL_FAILS, note), "windows": (_WINDOWS, note), "tiled_input": (_TILED_INPUT, note), "sliding_window": (_SLIDING_WINDOW, note), "tiling_in_use": (_TILING_IN_USE, note), "experience_replay": (_EXPERIENCE_REPLAY, note), "outputs_per_prompt": (_OUTPUTS_PER_PROMPT, note), "freed_at_epoch_end": (_FREED_AT_EPOCH_END, note), "eval_fails_at_start": (_EVAL_FAILS_AT_START, note), "eval_only_fails": (_EVAL_ONLY_FAILS, note), "built_before_sharding": (_BUILT_BEFORE_SHARDING, note), "whole_set_one_batch": (_WHOLE_SET_ONE_BATCH, note), "fused_attention": (_FUSED_ATTENTION, note), "held_after_phase": (_HELD_AFTER_PHASE, note), "second_round_fails": (_SECOND_ROUND_FAILS, failing), "reference_model_method": (_REFERENCE_MODEL_METHOD, everything), "attention_free": (_ATTENTION_FREE, note), "kept_with_graph": (_KEPT_WITH_GRAPH, note), "lengths_increasing": (_LENGTHS_INCREASING, note), "asks_smaller_input": (_ASKS_SMALLER_INPUT, note), "attention_kernel_decides": (_ATTENTION_KERNEL_DECIDES, note), "quadratic_in_length": (_QUADRATIC_IN_LENGTH, note), "input_raised": (_INPUT_RAISED, note), "longer_item_at_failure": (_LONGER_ITEM_AT_FAILURE, note), "length_schedule_grows": (_LENGTH_SCHEDULE_GROWS, note), "whole_graph": (_WHOLE_GRAPH, note), "dense_graph": (_DENSE_GRAPH, note), "teacher_resident": (_TEACHER_RESIDENT, note), "pairwise_said": (_PAIRWISE_SAID, note), "sharding_absent": (_SHARDING_ABSENT, note), "vision_language_model": (_VISION_LANGUAGE_MODEL, note), "batch_budget": (_BATCH_BUDGET, everything),
        "pair_representation_model": (_PAIR_REPRESENTATION_MODEL, everything), "quantized_weights": (_QUANTIZED_WEIGHTS, "\n".join([_without_wishes(note), frames, message])), "merge_to_full_weights": (_MERGE_TO_FULL_WEIGHTS, everything), "pipeline_offload": (_PIPELINE_OFFLOAD, everything), "state_carried": (_STATE_CARRIED, note), "original_fits": (_ORIGINAL_FITS, note), "weights_fill_gpus": (_WEIGHTS_FILL_GPUS, note), "larger_card_fits": (_LARGER_CARD_FITS, note), "saver_broke_fit": (_SAVER_BROKE_FIT, note), "memory_requirement_asked": (_MEMORY_REQUIREMENT_ASKED, note), "one_input_only": (_ONE_INPUT_ONLY, note), "crops_named": (_CROPS_NAMED, note), "half_needs_more": (_HALF_NEEDS_MORE, note), "metric_object": (_METRIC_OBJECT, note), "leak_in_eval": (_LEAK_IN_EVAL, note), "forward_outputs_bound": (_FORWARD_OUTPUTS_BOUND, note), "device_query_fails": (_DEVICE_QUERY_FAILS, f"{note}\n{frames}\n{_native_stack_lines(context)}"), "accumulation_named": (_ACCUMULATION_NAMED, note), "smaller_width_fits": (_SMALLER_WIDTH_FITS, note), "tool_memory_cap": (_TOOL_MEMORY_CAP, note), "eval_between_training": (_EVAL_BETWEEN_TRAINING, note), "later_epoch_training": (_LATER_EPOCH_TRAINING, note), "while_building": (_WHILE_BUILDING, note), "library_part_isolated": (_LIBRARY_PART_ISOLATED, note), "graph_of_gradients": (_GRAPH_OF_GRADIENTS, everything), "interactive_rerun": (_INTERACTIVE_RERUN, note), "shared_machine": (_SHARED_MACHINE, note), "batch_raised": (_BATCH_RAISED, note),
        "data_pipeline_fails": (_DATA_PIPELINE_FAILS, failing), "outside_pytorch": (_OUTSIDE_PYTORCH, note), "only_compiled": (_ONLY_COMPILED, note), "reserved_grows": (_RESERVED_GROWS, note), "data_parallel": (_DATA_PARALLEL, everything),
        "saving": (_SAVING, f"{failing}\n{frames}"), "uses_adam": (_ADAM, everything),
        "placement_not_honoured": (_PLACEMENT_NOT_HONOURED, note),
        "hf_trainer_eval": (_HF_TRAINER_EVAL, everything), "managed_eval": (_MANAGED_EVAL, everything), "logprobs": (_LOGPROBS, everything), "only_multi_gpu": (_ONLY_MULTI_GPU, note), "tpu": (_TPU, everything),
    }
    for name, (pattern, text) in flags.items():
        match = _affirmed_search(pattern, text) if name in _NEGATABLE else _search(pattern, text)
        if match:
            setattr(signals, name, True)
            signals.evidence[name] = match.group(0)
    if signals.orphaned_memory and not signals.other_process_hint:
        signals.other_process_hint = True  # a dead process's memory is memory another process holds
        signals.evidence["other_process_hint"] = signals.evidence["orphaned_memory"]
    excerpt = context.excerpt.text if context.excerpt else ""
    measured = _search(_MEASURED_WEIGHTS, f"{message}\n{excerpt[-20000:]}")
    signals.measured_weights = _stated_size(measured)
    if signals.measured_weights:
        signals.evidence["measured_weights"] = measured.group(0)
    elif (quants := [(_said_bytes(match.group(1), match.group(2)), match) for match in _compiled(_QUANT_FILE_SIZE).finditer(note[:20000])]):
        # several quantizations tried, all failing: the smallest is what did not fit
        signals.measured_weights, match = min(quants, key=lambda item: item[0])
        signals.evidence["measured_weights"] = match.group(0)
    else:
        stated = _search(_STATED_WEIGHTS, note)
        if stated:
            signals.measured_weights = _said_bytes(stated.group(1), stated.group(2))
            signals.evidence["measured_weights"] = stated.group(0)
    # TensorFlow logs each device's memory when it creates it ("totalMemory: 10.92GiB freeMemory: ...",
    # older "Total memory: 8.00GiB", TF 2 "deviceMemorySize: 15.98GiB").
    signals.logged_device_total = _stated_size(re.search(r"\b(?:totalMemory|Total memory|deviceMemorySize):\s*(\d+(?:\.\d+)?\s?[KMGT]i?B)\b",
                                                         f"{message}\n{excerpt[:200000]}"))
    failing_library = _search(_OWN_ALLOCATOR_LIBRARY, f"{message}\n{frames}")
    framework_in_note = _search(_DL_FRAMEWORK, note)
    if failing_library and framework_in_note and not _search(_OWN_ALLOCATOR_LIBRARY, framework_in_note.group(0)):
        signals.library_beside_framework = True
        signals.evidence["library_beside_framework"] = f"{failing_library.group(0)} beside {framework_in_note.group(0)}"
    if _search(_FREED_BY_THE_PROGRAM, note):
        _mark(signals, "freed_not_released", _search(_MEMORY_STAYED, note) or _search(_NOT_RELEASED, note))
    # The last from_pretrained(...) in the note names no dtype ("...from_pretrained(cache_path)") while
    # half precision is named elsewhere: the load that ran takes the library's default, fp32.
    loads = list(re.finditer(r"\bfrom_pretrained\(([^()]{0,300})\)", note))
    if loads and not re.search(r"\b(?:torch_)?dtype\s?=|load_in_(?:4|8)bit|quantization_config", loads[-1].group(1)):
        signals.load_without_dtype = True
        signals.evidence["load_without_dtype"] = loads[-1].group(0)
        if signals.weight_bytes == 2.0:
            signals.weight_bytes = 4.0  # the half precision named was another call's; this load is fp32
    if signals.reserved_grows and signals.freed_not_released and not _search(r"reserved|cached", signals.evidence["reserved_grows"]):
        # "del net; memory_allocated() stays the same": the count that did not drop after a delete is
        # memory still referenced, not a cache growing beside flat live memory.
        signals.reserved_grows = False
        signals.evidence.pop("reserved_grows", None)
    log_tail = f"{message}\n{excerpt[-20000:]}"
    if not signals.saving:
        # FSDP's own warning when gathering a full state dict runs out ("Failed to clone() tensor ...
        # state_dict() call"): the failure is the save, whatever the note says.
        _mark(signals, "saving", _search(_FSDP_STATE_DICT_GATHER, log_tail))
    if not signals.saving:
        _mark(signals, "saving", _search(_SAVE_ANNOUNCED, _lines_before_failure(excerpt)))
    _mark(signals, "gpu_imbalance_warning", _search(_GPU_IMBALANCE_WARNING, log_tail))
    if not signals.long_input:
        _mark(signals, "long_input", _search(_OVERLONG_INPUT_WARNING, f"{everything}\n{excerpt[-20000:]}"))
    if not signals.optimizer_step and _sgd_fits_adam_fails(note):
        signals.optimizer_step = True
        signals.evidence["optimizer_step"] = "SGD fits where Adam fails"
    if signals.samples_in_training:
        # "I save samples every epoch, under torch.no_grad()": the sampling is already outside autograd
        said = signals.evidence["samples_in_training"]
        sentence = next((part for part in _SENTENCE_END.split(note) if said in part), said)
        if _search(r"\bno_grad\b|inference_mode|\bno grad\b|\bwithout (?:gradients|grad)\b", sentence):
            signals.samples_in_training = False
            signals.evidence.pop("samples_in_training", None)
    # A context length said in words is a runtime's window when a runtime (or its model files) is named
    if not signals.context_window_set and (signals.serving_engine or _search(_LOCAL_RUNTIME, everything)):
        said = _search(_CONTEXT_LENGTH_SAID, note)
        if said:
            signals.context_window_set = True
            signals.evidence["context_window_set"] = said.group(0)
    if signals.colocated and not _search(_COLOCATED, re.sub(r"\b(?:grpo|ppo|rlhf)\b", " ", everything, flags=re.IGNORECASE)):
        # Only an RL method is named (PPO, GRPO): nothing says an inference engine shares the GPUs.
        signals.rl_method_only = True
    if signals.serving_engine:
        starting = _engine_starting(note, frames)
        if starting:
            signals.engine_starting = True
            signals.evidence["engine_starting"] = starting
    growth_mode = _fits_without_growth_mode(note)
    if growth_mode:
        signals.fits_without_growth_mode = True
        signals.evidence["fits_without_growth_mode"] = growth_mode
    between = signals.evidence.get("eval_between_training", "")
    after_eval = between[m.end():] if (m := re.search(_EVAL_WORD, between, re.IGNORECASE)) else between
    if signals.eval_between_training and signals.phase == "evaluation" and (
            signals.later_epoch_training or _search(r"\b(?:first|next|following) (?:training )?(?:step|batch|iteration|backward)|"
                                                    r"\b(?:training|backward|next epoch)\b", after_eval)):
        # (Only what comes after the evaluation counts: "every training epoch completes, but
        # validation fails" names the training that went well before it.)
        # "the second epoch fails; we validate after each one": the failing step is training's, the
        # evaluation is what ran before it (rule training_after_an_evaluation).
        signals.phase, signals.phase_source = "training", f'the note says "{signals.evidence["eval_between_training"]}"'
    if signals.growth and re.search(r"(?:goes|went|going|rises?|rose|increas\w*|climbs?|grows?|grew) up to|(?:goes|went|rises?|rose|climbs?|grows?|grew|increas\w*) to",
                                    signals.evidence["growth"] + _after(note, signals.evidence["growth"], 10), re.IGNORECASE) \
            and _search(r"\bto (?:about |around |~ ?)?\d[\d.,]*\s?(?:[GM]i?B|G)\b", _after(note, signals.evidence["growth"], 25)) \
            and not _search(r"\b(?:each|every|over|after|per|epochs?|steps?|iterations?|batch(?:es)?|calls?|time|gradually|slowly|steadily|keeps?)\b",
                            _clause_around(note, signals.evidence["growth"])):
        # "GPU memory goes up to 55GB and it fails": the peak it reached, with nothing saying over what.
        signals.growth = False
        signals.evidence.pop("growth", None)
    if signals.growth and not _search(r"grow|grew|increas|climb|ris(?:e|es|ing)|rose|leak|creep|accumulat|fill|up\b", signals.evidence["growth"]) \
            and _search(_MEMORY_SAID_FLAT, note):
        # "memory consumption is constant, but after about 50 steps it OOMs": a count of steps before the
        # failure, with the memory said to stay level until then, is no growth.
        signals.growth = False
        signals.evidence.pop("growth", None)
    if signals.eval_between_training and signals.later_epoch_training and signals.growth and \
            not _search(r"grow|grew|increas|climb|ris(?:e|es|ing)|rose|leak|creep|accumulat|fill", signals.evidence["growth"]):
        # "the first epoch goes through, the second fails; we validate after each": one epoch of progress
        # and a failure after the evaluation between them, not memory said to grow.
        signals.growth = False
        signals.evidence.pop("growth", None)
    if signals.batch_no_help and not signals.input_no_help:
        # "even with batch size 1 and seq length = 256 it fails": the input's size was cut in the same breath
        # as the batch, to a size that is small, and it still fails
        cut = _search(r"\b(?:batch(?:[ _]size)?|bs)\s?(?:of|=|:)?\s?1\b[^.;]{0,20}?\band (?:a |the )?(?:seq(?:uence)?|max|context|block|input|image|crop|prompt)[ _]?"
                      r"(?:length|len|size|resolution|window)?\s?(?:of|=|:)?\s?(\d{2,4})\b", note)
        if cut and int(cut.group(1)) <= 512:
            signals.input_no_help = True
            signals.evidence["input_no_help"] = cut.group(0)
    if not signals.dataset_size_matters:
        # "encode ~100M sentences: past 5-10M it fails": a bare count past which it fails, in a note
        # that says what is counted.
        counted = _search(r"\b(?:records|sentences|documents|texts|samples|items|rows|passages|queries|embeddings)\b", note)
        for bare in re.finditer(r"\b(?:beyond|more than|over|above|past|exceeding) (?:about |around |~ ?)?(?<![\w.,])\d[\d.,]*"
                                r"(?:\s?-\s?\d[\d.,]*)? ?(?:million|thousand|[mMkK])\b", note, re.IGNORECASE):
            if counted and _search(_FAILURE_WORDS, _clause_around(note, bare.group(0))):
                signals.dataset_size_matters = True
                signals.evidence["dataset_size_matters"] = bare.group(0)
                break
    example = re.search(_EXAMPLE_FITS_BATCH, note, re.IGNORECASE)
    if example:
        signals.example_fits_batch = int(example.group("batch"))
        signals.evidence["example_fits_batch"] = example.group(0)
    error = context.error
    if error is None and not signals.host_ram:
        # With no GPU message, a process said to have been killed was killed by the OOM killer:
        # "the process is killed" is what a shell shows for it ("Killed"), whatever the user calls it.
        killed = _search(r"\b(?:process|job|script|program|run|training|python|kernel|container|pod)\b(?: \w+)? (?:is|was|gets|got|being) killed\b"
                         r"(?! (?:by|with) (?:ctrl|me|the user|keyboard|sigint|sigterm))", note)
        if killed:
            signals.host_ram = True
            signals.evidence["host_ram"] = killed.group(0)
    signals.host_only = signals.host_ram and (error is None or error.backend in ("host", "cpu"))
    stack = meaningful_frames(context)
    figures = bool(error and (error.requested_bytes or error.total_bytes or error.allocated_bytes or error.free_bytes))
    # ("init": a traceback pasted into Markdown loses the underscores of `__init__`; an `init`
    # method, such as Flax's, builds the parameters too)
    if stack and stack[0].function in ("__init__", "init") and not figures and signals.phase == "unknown" and \
            not re.search(r"data|loader|sampler|collat", f"{stack[0].filename} {stack[0].code or ''}", re.IGNORECASE):
        # The failure inside a constructor, no allocator figures and no phase: an object building its
        # model (a wrapper's engine, a module creating its weights) is placing weights.
        signals.constructing = True
        signals.evidence["constructing"] = f"`{stack[0].function}` in {stack[0].filename.replace(chr(92), '/').rsplit('/', 1)[-1]}"
    if not signals.rank0_heavy:
        uneven = _search(_NOT_EVEN_ACROSS, note)
        if uneven:
            signals.rank0_heavy = True
            signals.evidence["rank0_heavy"] = uneven.group(0)
    classes = _class_count_that_matters(note)
    if classes:
        signals.classes_matter, signals.evidence["classes_matter"] = classes
    boxes = _search(r"\b(?:so |very |too )?many (?:gt |ground[- ]truth |annotated |labell?ed )?(?:boxes|bboxes|objects|instances|annotations|ground[- ]truths)\b|"
                    r"\b(?:more than |over |>\s?)?(?:\d{3,}|\d+k)\+? (?:gt |ground[- ]truth )?(?:boxes|bboxes|objects|instances|annotations|ground[- ]truths)"
                    r"(?: per (?:image|img|photo|picture|frame|sample))?\b", note)
    if boxes and ("detection" in signals.domains or
                  _search(r"\b(?:gt|ground[- ]truth)\b|per (?:image|img|photo)|in (?:a|one|each) (?:single )?(?:image|photo|picture)", note)):
        signals.many_boxes = True
        signals.evidence["many_boxes"] = boxes.group(0)
    if _search(r"\bself-?attention (?:model|network|net)\b|\bstand-?alone self-?attention\b|\battention-?based (?:vision |image )?model\b", note):
        signals.attention_model_named = True
    recipe_hardware = _search(_RECIPE_HARDWARE, note)
    if recipe_hardware and _search(_OWN_SMALLER_HARDWARE, note[recipe_hardware.end():] + " " + note[:recipe_hardware.start()]):
        signals.recipe_on_smaller_hardware = True
        signals.evidence["recipe_on_smaller_hardware"] = recipe_hardware.group(0)
    looped = _models_built_in_a_loop(note)
    if looped:
        signals.models_in_a_loop = True
        signals.evidence["models_in_a_loop"] = looped
    copy = _copy_per_device(note)
    # (tensor parallelism splits every weight matrix over the cards: each worker's share is a shard)
    if copy and ((signals.gpu_count or 0) > 1 or signals.distributed or _search(_EACH_DEVICE, copy)) and not _search(_TENSOR_PARALLEL_SPLIT, note):
        signals.copy_per_device = True
        signals.evidence["copy_per_device"] = copy
    recipe = _unmodified_recipe(note)
    if recipe and not signals.own_code:
        signals.unmodified_recipe = True
        signals.evidence["unmodified_recipe"] = recipe
    if signals.input_no_help and _search(r"\b(?:number|count|amount) of (?:\w+ )?(?:pictures|images|inputs|sequences|files|samples)\b|\bfewer\b",
                                         signals.evidence["input_no_help"]):
        # "I reduced the number of source images, it did not help": fewer items is a smaller dataset, not a
        # smaller input; each step's activations, and what they say about the cause, are the same
        signals.input_no_help = False
        signals.evidence.pop("input_no_help", None)
    peak = _start_peak_then_lower(note)
    if peak:
        signals.start_peak_then_lower = True
        signals.evidence["start_peak_then_lower"] = peak
    if signals.start_peak_then_lower and signals.growth and signals.evidence["growth"] in signals.evidence["start_peak_then_lower"]:
        # "high at the start, and after some iterations it drops": the iterations say when it fell.
        signals.growth = False
        signals.evidence.pop("growth", None)
    if signals.immediate and signals.growth and not _search(_FAILURE_WORDS, _clause_around(note, signals.evidence["immediate"])):
        # "At the start it uses 7 GB, but it rises to 10 GB and fails": the start is the baseline
        # the growth is measured from, not when it failed.
        signals.immediate = False
        signals.evidence.pop("immediate", None)
    if signals.immediate and _search(_LATER_ROUND_FAILED, failing):
        # "creates it in the first iteration; the second iteration fails": the first round ran.
        signals.immediate = False
        signals.evidence.pop("immediate", None)
    if signals.upgrade_regression and re.match(r"no longer", signals.evidence.get("upgrade_regression", ""), re.IGNORECASE) \
            and _search(r"\b(?:wider|larger|bigger|longer|more|higher|greater|deeper) than\b|\babove\b|\bbeyond\b|\bpast\b",
                        _clause_around(note, signals.evidence["upgrade_regression"])):
        # "embeddings wider than 100 dims no longer fit": a threshold of the workload, not a build that broke
        signals.upgrade_regression = False
        signals.evidence.pop("upgrade_regression", None)
    if signals.upgrade_regression and re.search(r"\banymore\b", signals.evidence.get("upgrade_regression", ""), re.IGNORECASE) \
            and _search(r"\b(?:step|iteration|epoch|batch|round|pass|call)s? ?\d|\b(?:second|next|following|later) (?:step|iteration|epoch|batch|round|pass|call)\b",
                        _clause_around(note, signals.evidence["upgrade_regression"])):
        # "on step 2 the same buffer cannot be allocated anymore": a later step of this run, not a build that broke
        signals.upgrade_regression = False
        signals.evidence.pop("upgrade_regression", None)
    if signals.leak_in_eval and not _search(r"\btrain\w*|\bepochs?\b|\bfine-?tun\w*", note):
        # a leak in an evaluation script run on its own is not the evaluation between training epochs
        signals.leak_in_eval = False
        signals.evidence.pop("leak_in_eval", None)
    # A precision word that qualifies something other than the run's compute is no full-precision run:
    # "a single image of shape (1, 3, 256, 256), dtype torch.float32" (the input's dtype), "the entire fp32
    # state dict cannot fit" while saving (the copy being gathered and written)
    precision_word = signals.evidence.get("full_precision_said", "")
    if signals.full_precision_said and (any(
            precision_word in sentence and
            _search(r"\b(?:images?|inputs?|tensors?|arrays?|batch(?:es)?|samples?)\b[^.;]{0,80}?\bdtype\W{0,3}(?:torch\.|np\.)?float ?32\b", sentence)
            for sentence in _SENTENCE_END.split(note)) or _search(
            rf"{re.escape(precision_word)} (?:\w+ )?(?:state[ _-]?dicts?|checkpoints?|ckpts?|consolidated (?:weights|model)|weights? (?:file|files|saved|to save))\b", note)):
        signals.full_precision_said = False
        signals.evidence.pop("full_precision_said", None)
    if signals.upgrade_regression and re.fullmatch(r"nightly|(?:latest|newest) [\w ]{0,30}", signals.evidence.get("upgrade_regression", ""), re.IGNORECASE) \
            and not _search(_NEWEST_BUILD_COMPARED, note) \
            and len({version.group(0) for version in _compiled(_A_VERSION_NOT_SIZE).finditer(note)}) < 2:
        # "(torchrun ..., nightly PyTorch)", "(latest dev commit, torch 1.13.1)": the build the run uses, named
        # among its settings; the newest build is a change only where the note sets it beside another build
        # or beside what it changed
        signals.upgrade_regression = False
        signals.evidence.pop("upgrade_regression", None)
    if signals.upgrade_regression and _search(_EVERY_VERSION_FAILS, note):
        # "with both versions the memory keeps increasing": the versions compared fail alike, so no
        # version change is what broke it
        signals.upgrade_regression = False
        signals.evidence.pop("upgrade_regression", None)
    works = _search(_OTHER_BACKEND_WORKS, note)
    failing_backend = context.error.backend if context.error else None
    if works and (next((group for group in works.groups() if group), "")).lower() not in ("cpu", failing_backend or "") \
            and not _search(r"\b(?:only|just) (?:with|on|using) (?:the )?" + _BACKEND_NAMES + r" backend\b[^.;]{0,30}\bfails?\b", note):
        signals.other_backend_works = True
        signals.evidence["other_backend_works"] = works.group(0)
    cap = _search(_SINGLE_ALLOCATION_CAP, note) or _search(_SINGLE_ALLOCATION_CAP, message)
    if cap and (_search(_INTEL_GPU, f"{note}\n{message}") or (context.error and context.error.backend == "xpu")):
        signals.single_allocation_cap = True
        signals.evidence["single_allocation_cap"] = cap.group(0)
    free = _search(r"\bwith (?:about |around |~ ?|still )?(\d+(?:\.\d+)?) ?(GB|GiB|G) (?:still )?free\b", note)
    if free and not signals.free_at_failure:
        amount = _said_bytes(free.group(1), free.group(2))
        known = signals.note_gpu_capacity
        if amount >= 4 * 10**9 and (not known or amount >= 0.25 * known):
            # "fails at MUL_MAT with 27GB free": a large share of the card was free when it failed
            signals.free_at_failure = True
            signals.evidence["free_at_failure"] = free.group(0)
    for name, reader in (("smaller_card_works", smaller_card_works), ("smaller_fails_larger_works", smaller_fails_larger_works)):
        if said := reader(note):
            setattr(signals, name, True)
            signals.evidence[name] = said
    if signals.upgrade_regression and re.match(r"(?:after|since|when) ", signals.evidence.get("upgrade_regression", ""), re.IGNORECASE):
        at = note.lower().find(signals.evidence["upgrade_regression"].lower())
        if at >= 0 and _search(r"\b(?:improv\w*|got better|better|helped|fixed|solved|resolved|went away|disappeared)\s*$", note[max(0, at - 30):at]):
            # "it improved after updating nightly": the update helped, so the new build is no regression
            signals.upgrade_regression = False
            signals.evidence.pop("upgrade_regression", None)
    if not signals.upgrade_regression:
        for sentence in _SENTENCE_END.split(note):
            when = _search(_STARTED_RECENTLY, sentence)
            if when and _search(_STARTED_WORD, sentence) and not _search(r"\b(?:i|we) (?:\w+ )?(?:changed|added|switched|increased|modified)\b", sentence):
                signals.upgrade_regression = True
                signals.evidence["upgrade_regression"] = sentence.strip()[:120]
                break
    if not signals.upgrade_regression:
        compared = _two_builds_compared(note) or _found(_TWO_INSTALLS, note)
        if compared:
            signals.upgrade_regression = True
            signals.evidence["upgrade_regression"] = compared
    if signals.saver_broke_fit and not signals.switch_no_effect:
        signals.switch_no_effect = True
        signals.evidence["switch_no_effect"] = signals.evidence["saver_broke_fit"]
    if not signals.saving:
        # "with model checkpointing disabled it goes away": what went well without saving says saving failed
        without = _search(_WORKS_WITHOUT_SAVING, note)
        if without:
            signals.saving = True
            signals.evidence["saving"] = without.group(0)
    if not signals.smaller_width_fits:
        compared = _two_widths_compared(note)
        if compared:
            signals.smaller_width_fits = True
            signals.evidence["smaller_width_fits"] = compared
    if signals.smaller_width_fits and signals.smaller_input_fits and _search(_WIDTH, signals.evidence.get("smaller_input_fits", "")):
        # "reducing the embedding size fixed it" is the model's width, not an input's size
        signals.smaller_input_fits = False
        signals.evidence.pop("smaller_input_fits", None)
    if not signals.interactive_rerun and _search(_NOTEBOOK_SESSION, note):
        for sentence in _SENTENCE_END.split(note):
            again = _search(_FAILURE_WORDS, sentence) and _search(_RAN_AGAIN, sentence)
            if again:
                signals.interactive_rerun = True
                signals.evidence["interactive_rerun"] = again.group(0)
                break
    if signals.smaller_input_fits and _smaller_inputs_also_fail(note, signals.evidence.get("smaller_input_fits", "")):
        # "runs with context lengths 8, 4 and 1 all grow": the smaller inputs were tried and did not fit
        signals.smaller_input_fits = False
        signals.evidence.pop("smaller_input_fits", None)
    if signals.smaller_input_fits:
        # "after increasing imgsz from 640 to 1024 ... set the batch to 4 with imgsz=1024 and it succeeded": the
        # size said to fit is the one that failed, so something else (the batch) is what changed
        said = signals.evidence.get("smaller_input_fits", "")
        value = re.search(r"\d+", said)
        before = note[:max(0, note.find(said))]
        if value and re.search(rf"\b(?:increas|rais|bump|chang|went|go|going|set)\w*\b[^.;]{{0,60}}?\bto {value.group(0)}\b", before, re.IGNORECASE):
            signals.smaller_input_fits = False
            signals.evidence.pop("smaller_input_fits", None)
    wanted = _search(_HALF_WANTED, note)
    if wanted and not signals.full_precision_said:
        signals.full_precision_said = True
        signals.evidence["full_precision_said"] = wanted.group(0)
    if wanted:
        signals.low_precision = False  # the half precision named is the one asked for, not the one in use
        signals.evidence.pop("low_precision", None)
    if signals.allocator_setting:
        signals.allocator_setting_helped = _setting_helped(note)
        signals.expandable_segments_on = bool(_search(r"expandable[_ ]segments(?! ?[:=] ?(?:false|0|off))", note))
        ignored = _search(_SETTING_IGNORED, note)
        signals.setting_ignored = bool(ignored)
        if ignored:
            signals.evidence["setting_ignored"] = ignored.group(0)
    if _search(r"0\.3(?:\.\d)?\b.{0,60}0\.4|0\.4(?:\.\d)?\b.{0,40}(?:from|after) 0\.3", note) and signals.upgrade_regression:
        signals.upgraded_to_torch_04 = True
    signals.growth_across_epochs = signals.growth and bool(re.search(r"\bepochs?\b", signals.evidence.get("growth", ""))
                                                           or _search(_ACROSS_EPOCHS, note))
    signals.parallel_job_named = bool(_search(r"multi-?gpu|\bddp\b|distributed|torchrun|deepspeed|\bzero\b|zero-?[123]|fsdp|\branks?\b|"
                                              r"model[- ]parallel|data[- ]?parallel|tensor[- ]parallel|accelerate launch|multi-node|\btp\d|"
                                              r"all_gather|all_reduce|broadcast", everything))
    signals.distributed = signals.parallel_job_named \
        or (signals.gpu_count or 0) > 1 or len(context.failing_ranks) > 1 or (context.environment.world_size or 1) > 1 \
        or bool(re.search(r"ranks?|process|workers?", signals.evidence.get("rank0_heavy", ""), re.IGNORECASE))  # "every worker on GPU 0"
    signals.fsdp = bool(_search(r"\bfsdp\b|fully_shard|FullyShardedDataParallel", f"{everything}\n{excerpt[-20000:]}"))
    # XLA's sources live under org_tensorflow/tensorflow/compiler: a path there is JAX, not TensorFlow.
    # Keras 3 runs on JAX or PyTorch as well: "keras with the jax backend" is one framework, not TensorFlow beside JAX.
    # (dots inside "keras.distribution.ModelParallel" do not end the sentence; ". " does)
    keras_elsewhere = _search(r"KERAS_BACKEND\W{0,3}(?:jax|torch)|\bkeras\b(?:(?!\. )[^;\n]){0,80}?\b(?:jax|torch|pytorch) backend|"
                              r"\b(?:jax|torch|pytorch) backend\b(?:(?!\. )[^;\n]){0,80}?\bkeras\b|use_backend\(\W?(?:jax|torch)", everything)
    tf = _search(r"tensorflow(?!/compiler|/core/platform)(?<!org_tensorflow)|\btf\b|\btfds\b" + ("" if keras_elsewhere else r"|keras"),
                 re.sub(r"org_tensorflow/tensorflow/\S*|external/org_tensorflow\S*", "", everything))
    # XLA is TensorFlow's compiler too (jit_compile, --use_xla): beside TensorFlow alone it is no second framework
    jax = _search(r"\bjax\b|flax|haiku", everything) or (_search(r"\bxla\b", everything) and not tf) or \
        (context.error and context.error.framework == "jax")
    torch = _search(r"\btorch\b|pytorch", everything) or (context.error and context.error.framework == "pytorch")
    # JAX (and torch_xla's PJRT client) pre-allocates 75% of the card on first use, so JAX imported
    # into a PyTorch program takes what PyTorch would have had; a note comparing the two frameworks
    # ("in JAX it fits") is no such process, hence the words that put both in one.
    ported = r"(?:jax|flax|torch|pytorch)(?: (?:version|port|implementation|one|code))"
    jax_in_torch = bool(jax and torch and not _search(_OTHER_FRAMEWORK_FITS, note) and not _search(rf"\b{ported}\b[^.;]{{0,80}}?\b{ported}\b", note) and
                        _search(r"\bimport\w*\b|\bsame (?:process|script|file|program|notebook|python)\b|\bboth\b|\btogether\b|\balongside\b|\bbeside\b|"
                                # "the jax + torch notebook", and JAX's own allocator settings named beside torch
                                r"\bjax\s?(?:\+|&|and|with)\s?(?:py)?torch\b|\b(?:py)?torch\s?(?:\+|&|and|with)\s?jax\b|\bXLA_PYTHON_CLIENT_\w+", note))
    if signals.fewer_processes_fit and not signals.several_processes_one_gpu:
        # fewer processes fitting is itself evidence that they shared the GPUs
        signals.several_processes_one_gpu = True
        signals.evidence["several_processes_one_gpu"] = signals.evidence["fewer_processes_fit"]
    signals.preallocating_framework_beside = (bool(tf and (jax or (torch and not _search(r"tensorboard", everything)))) and
                                              not (context.error and context.error.framework == "tensorflow" and not (jax or torch))) or jax_in_torch
    for name, pattern in (("detection", _DETECTION), ("variable_length", _VARIABLE_LENGTH), ("diffusion", _DIFFUSION),
                          ("llm", _LLM), ("encoder", _TRANSFORMER_ENCODER), ("audio", _AUDIO), ("tabular", _GRADIENT_BOOSTING),
                          ("rendering", _RENDERER), ("video", _VIDEO)):
        if _search(pattern, everything):
            signals.domains.add(name)
    if "diffusion" in signals.domains and _search(r"\b(?:molecul\w*|ligands?|proteins?|atoms?|conformers?|equivariant|point clouds?|graphs?)\b", everything) \
            and not _search(r"diffusers|\bunet\b|\bsd(?:xl)?\b|images?|pictures?|videos?|latents?|pixels?|text-to-image", everything):
        # A diffusion model over molecules or graphs denoises coordinates and features, not an
        # image's latent pixels: no pixel self-attention to blame.
        signals.domains.discard("diffusion")
    if "diffusion" in signals.domains and (_search(_GAN, everything) or _search(_RENDERER, everything) or _search(_LATENT_CODE_INPUT, note)) and \
            not _search(r"diffusion|diffusers|\bunet\b|\bsd(?:xl)?\b", everything):
        # A GAN's generated images come from one forward pass, a renderer's (NeRF, Gaussian splatting)
        # from rays through a small network: neither is a denoising loop.
        signals.domains.discard("diffusion")
    if "rendering" in signals.domains and signals.phase == "generation" and not signals.domains & {"llm", "diffusion"}:
        # A renderer "generating" its images is running inference over views: no tokens, no KV cache.
        signals.phase = "evaluation"
    generator = _image_generator(note)
    if generator and not _search(_TRAINS_THE_MODEL, note) and "llm" not in signals.domains:
        if signals.phase == "unknown" and _search(_LATENT_CODE_INPUT, note):
            # images asked of a generator fed latent codes, with no training named: its forward is inference
            signals.phase, signals.phase_source = "evaluation", f'the note feeds a generator "{generator.group(0)}"'
        if signals.phase == "evaluation":
            signals.image_generator_inference = True
            signals.evidence["image_generator_inference"] = generator.group(0)
    return signals
