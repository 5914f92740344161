"""Rules keyed on when the run failed: evaluation, loading, generation, optimizer set-up, and
memory that grew over iterations."""

from __future__ import annotations

import re
from typing import Iterator

from oomtriage.models import DEVICE_BACKENDS
from oomtriage.sizes import format_size

from ..facts import held_outside_the_cache

from . import RuleInput, Vote, rule


# An evaluation that decodes text: "the model generates summaries for every validation batch",
# Seq2SeqTrainer's predict_with_generate, beam search over the dev set, captions or translations.
_EVALUATION_GENERATES = re.compile(
    r"\bpredict_with_generate\b|\bgenerate\(\)|\.generate\(|\bgenerat(?:es|ed|ing) (?:\w+ ){0,2}(?:summar\w*|translations?|captions?|answers?|texts?|sequences?|tokens|outputs?|responses?|transcri\w+)\b|"
    r"\b(?:beam search|num_beams|max_length|max_new_tokens|generation_max_length|decod(?:e|es|ing))\b", re.IGNORECASE)


@rule
def evaluation_that_generates(data: RuleInput) -> Iterator[Vote]:
    """An evaluation that generates (summaries, translations, captions, beam search over the dev
    set) runs a decoding loop: its KV cache grows with batch x beams x max_length, and generate()
    already runs without gradients."""
    signals = data.signals
    if signals.phase != "evaluation" or "diffusion" in signals.domains or signals.host_only:
        return
    said = _EVALUATION_GENERATES.search(data.context.note or "")
    if not said:
        return
    yield Vote("kv_cache_or_generation", 0.6, f'The evaluation generates ("{said.group(0)}"): its cache grows with batch x beams x '
               "the generation length; cap the evaluation's max_length / num_beams or its batch.")
    yield Vote("missing_no_grad", -0.35, "generate() runs without gradients itself.")
    if signals.hf_trainer_eval and re.search(r"predict_with_generate", data.context.note or ""):
        # the trainer then keeps the generated ids, not the logits over the vocabulary
        yield Vote("reference_leak", -0.3, "With predict_with_generate the trainer keeps generated token ids, not logits.")


@rule
def evaluation(data: RuleInput) -> Iterator[Vote]:
    signals = data.signals
    if signals.phase != "evaluation":
        return
    if signals.host_only:
        return  # host memory is what fills, with no GPU message: the host rule says it
    where = signals.phase_source
    if data.framework == "tensorflow":
        # (A workload that fitted on an earlier release is the release's before it is the usual suspect.)
        yield Vote("reference_leak", 0.35 if signals.upgrade_regression else 0.55, f"It failed during evaluation ({where}); in "
                   "TensorFlow/Keras evaluation OOMs usually come from predictions or graphs accumulated across batches.")
        if not (signals.growth or signals.keras_call_in_loop):  # memory that grew call after call is no batch too large from the start
            yield Vote("batch_too_large", 0.4, "Evaluation batch sizes are often set larger than training ones.")
        return
    if signals.hf_trainer_eval:
        # Every card loading its own full copy fills it before any logits pile up: the copies are
        # the lead then (rule copies_per_device), the accumulated logits a second one.
        yield Vote("reference_leak", 0.4 if signals.copy_per_device else 0.8, "HF Trainer's evaluation loop already runs without gradients but keeps every "
                   "batch's logits on the GPU until the end unless eval_accumulation_steps is set.")
        yield Vote("large_logits", 0.35, "The accumulated logits grow with vocabulary / item count x eval set size.")
        return
    n = data.numbers
    big_request = bool(n.requested and n.capacity and n.requested > 0.1 * n.capacity)
    if big_request:
        yield Vote("input_size_too_large", 0.5, f"One evaluation tensor of {n.requested / n.capacity:.0%} of the device: "
                   "evaluation inputs are often full-size where training used crops or shorter sequences.")
    # whether a reading of evaluation's inputs as larger than training's was given (below, it rules out
    # reading "training fits, evaluation fails" as a kept graph)
    larger_inputs = big_request or signals.long_input
    if signals.long_input:
        yield Vote("input_size_too_large", 0.6, f'The inputs are large ("{signals.evidence["long_input"]}").')
    elif signals.crops_named and not signals.growth:
        larger_inputs = True
        yield Vote("input_size_too_large", 0.55, f'Training runs on pieces of the inputs ("{signals.evidence["crops_named"]}"), '
                   "while evaluation usually runs whole ones: evaluate on tiles (chop the input) or at a lower resolution.")
    elif "audio" in signals.domains and not signals.growth:
        larger_inputs = True
        # Speech training crops or filters utterances by duration; validation runs whole recordings.
        yield Vote("input_size_too_large", 0.5, "Speech models train on utterances capped or bucketed by duration but often "
                   "validate on whole recordings: the longest one sets evaluation's peak.")
    elif "detection" in signals.domains and not big_request and not signals.growth:
        larger_inputs = True
        # Dense prediction trains on crops and evaluates on whole images (Cityscapes: 512x1024 crops,
        # 1024x2048 at test time), so evaluation is where the largest activations appear.
        yield Vote("input_size_too_large", 0.45, "Segmentation and detection models train on crops but evaluate whole, "
                   "full-resolution images: evaluation activations are several times the training ones.")
    if signals.no_grad_already:
        yield Vote("missing_no_grad", -0.7, f'It already runs without gradients ("{signals.evidence["no_grad_already"]}").')
    elif signals.managed_eval and not signals.own_code:  # the user's own code runs outside the framework's no_grad
        yield Vote("missing_no_grad", -0.45, f'The evaluation loop is the framework\'s ("{signals.evidence["managed_eval"]}"), '
                   "which already runs it without gradients.")
    elif signals.serving_engine:
        yield Vote("missing_no_grad", -0.6, f'A serving engine runs the model ("{signals.evidence["serving_engine"]}"), '
                   "always under inference mode.")
    long_context = signals.long_input or (signals.seq_len or 0) >= 8192 or ("audio" in signals.domains and not signals.growth)
    # "running inference", "predict.py": a project's own inference script, which wraps its forward in
    # no_grad far more often than a training script's evaluation loop does
    inference_script = bool(re.search(r'"[^"]*\b(?:infer\w*|predict\w*)', where or "", re.IGNORECASE)) and not signals.growth
    base = 0.45 if big_request or long_context or inference_script else 0.6
    yield Vote("missing_no_grad", base, f"It failed during evaluation ({where}): without "
               "torch.no_grad() every eval batch keeps its activations for a backward pass that never comes.")
    if signals.own_code and not signals.no_grad_already and not signals.serving_engine:
        # a library's own predict or evaluate wraps no_grad; a loop the user wrote around the model's
        # forward or step function runs with autograd on unless it says otherwise
        yield Vote("missing_no_grad", 0.3, f'The loop is the user\'s own ("{signals.evidence["own_code"]}"): nothing around it '
                   "turns autograd off unless the code does; wrap it in torch.no_grad() or torch.inference_mode().")
    if signals.eval_fails_at_start and not signals.growth:
        # A first evaluation batch keeps no more than a training step's forward pass, gradients on
        # or off: failing there, the evaluation's batch or inputs are larger than training's.
        said = signals.evidence["eval_fails_at_start"]
        yield Vote("missing_no_grad", -0.3, f'It fails as the evaluation starts ("{said}"): even with gradients on, one '
                   "evaluation batch keeps no more than a training step's forward pass, which fitted.")
        yield Vote("batch_too_large", 0.35, "An evaluation that fails on its first batch is given more at once than a "
                   "training step: its batch size (or the whole set in one batch).")
        yield Vote("input_size_too_large", 0.2, "...or inputs larger than training's (whole images or recordings where "
                   "training used crops).")
    if signals.growth_across_epochs or (signals.growth and signals.leak_in_eval):
        # Each evaluation's graphs go when it ends; memory that climbs from one epoch to the next
        # outlives every evaluation: state kept between them (also where the note places the leak in
        # the validation run between training epochs).
        yield Vote("reference_leak", 0.5, f'Memory grew across epochs ("{signals.evidence["growth"]}"): what one evaluation '
                   "leaves behind for the next (metric states, lists of results, caches) is kept between them.")
        yield Vote("missing_no_grad", -0.25, "A missing no_grad keeps graphs only until its evaluation ends, not from one epoch "
                   "to the next.")
    if signals.growth:
        # Without no_grad each batch's graph is freed when its outputs are rebound; memory that grows
        # batch after batch is outputs kept across batches, with their graphs (no no_grad) or without.
        said = signals.evidence["growth"]
        yield Vote("missing_no_grad", 0.45, f'Memory grew batch after batch in evaluation ("{said}").')
        if big_request:
            # One large request at the end of a climb is the kept results joined into one tensor
            # (torch.cat / a concatenation of every batch's predictions), which grows with the batches
            # seen so far: no input is that large, and graphs are never joined into one allocation.
            yield Vote("reference_leak", 0.55, f"Memory climbed batch after batch and then one {format_size(n.requested)} "
                       "request failed: the results kept so far, concatenated into one tensor; reduce them per batch "
                       "(argmax, metrics) and move them to the CPU as they come.")
            yield Vote("input_size_too_large", -0.45, "The large request grew with the batches seen, not with any one input.")
        if signals.no_grad_already or (signals.managed_eval and not signals.own_code):
            # Under no_grad there is no graph to keep: what grows is the outputs, metrics or logged
            # values held on the GPU from batch to batch.
            yield Vote("reference_leak", 0.55, f'Memory grew batch after batch in an evaluation that runs without gradients '
                       f'("{said}"): outputs, metrics or logged tensors are kept on the GPU across batches.')
        else:
            yield Vote("graph_retained", 0.45, "Outputs kept across evaluation batches (for display, metrics, a list) "
                       "without .detach() keep each batch's whole autograd graph alive.")
            yield Vote("reference_leak", 0.3, "Outputs kept on the GPU across batches grow memory even when detached.")
    yield Vote("reference_leak", 0.35, "Evaluation loops often collect outputs in lists without .detach().cpu().")
    if signals.eval_only_fails and not (larger_inputs or signals.no_grad_already or signals.managed_eval or signals.serving_engine or signals.growth):
        # A training step at that batch keeps its activations for the backward and fits; an
        # evaluation under no_grad keeps far less. Failing there, the evaluation keeps a graph too, on
        # top of what the last training step left referenced (its loss, outputs, gradients).
        said = signals.evidence["eval_only_fails"]
        yield Vote("missing_no_grad", 0.3, f'Training fits and only its evaluation fails ("{said}"): under no_grad an '
                   "evaluation holds far less than the training step that fitted, so it is keeping a graph.")
        yield Vote("batch_too_large", -0.15, "The batch fitted a training step, which holds more than an evaluation's forward.")
    else:
        yield Vote("batch_too_large", 0.3, "Evaluation batch sizes are often set larger than training ones.")


@rule
def periodic_step(data: RuleInput) -> Iterator[Vote]:
    """A failure right after a round step number (1000, 5000) whatever the data: the periodic
    evaluation, sampling or logging step runs there, usually without no_grad."""
    signals = data.signals
    if signals.periodic_step and signals.phase in ("training", "unknown"):
        yield Vote("missing_no_grad", 0.55, f'It fails at a round step ("{signals.evidence["periodic_step"]}"), where '
                   "periodic evaluation, sampling or visualisation runs: without no_grad it keeps a graph for every image.")
        yield Vote("reference_leak", 0.3, "Periodic logging that keeps tensors (images, losses) grows memory at that step too.")


# A CUDA source file of the program or a library (not a framework's allocator) calling cudaMalloc.
# Each path is tried from its first character only (a lookbehind), or "0.0.0..." backtracks quadratically.
_LIBRARY_CUDA_MALLOC = re.compile(r"(?<![\w./-])[\w./-]+\.cu:\d+(?=[\s\S]{0,200}cudaMalloc)|cudaMalloc\w*\(&?[\w.>-]+,", re.IGNORECASE)


@rule
def held_until_the_epoch_ends(data: RuleInput) -> Iterator[Vote]:
    """Memory that climbs through an epoch and comes back when it ends is every step's results
    kept for the end of the epoch: training code that returns tensors to the framework's epoch-end
    hook (Lightning keeps them all), a metric that accumulates its inputs, a list of predictions."""
    signals = data.signals
    if signals.freed_at_epoch_end:
        yield Vote("reference_leak", 0.65, f'Memory comes back when the epoch ends ("{signals.evidence["freed_at_epoch_end"]}"): '
                   "something keeps every step's results until then (outputs returned for an epoch-end hook, a metric's "
                   "accumulated state, a list); return only what is needed, detached and on the CPU.")
        yield Vote("input_size_too_large", -0.3, "A large input would fail on its own step, not build up over the epoch.")


@rule
def training_after_an_evaluation(data: RuleInput) -> Iterator[Vote]:
    """Training that fails in the step after an evaluation pass (the first step of the next epoch
    when a test runs after each one) meets what the evaluation left: without no_grad its last
    batch's graph stays referenced by the outputs and loss that outlive the loop, and its tensors of
    other shapes leave cached blocks the training step cannot reuse."""
    signals, n = data.signals, data.numbers
    between = signals.eval_between_training
    if not between or signals.phase not in ("training", "unknown"):
        return
    said = signals.evidence["eval_between_training"]
    placed = _AFTER_EVAL_STEP.search(said) or signals.later_epoch_training
    if not placed:
        return  # an evaluation per epoch, but nothing puts the failure right after one
    if n.unallocated and n.capacity and n.unallocated > 0.15 * n.capacity:
        return  # the cache's idle blocks are in the figures: the allocator rules say it
    if signals.no_grad_already:
        yield Vote("fragmentation", 0.45, f'The training step after an evaluation fails ("{said}"), which already runs '
                   "without gradients: its tensors of other shapes left cached blocks the training step cannot reuse.")
        return
    yield Vote("missing_no_grad", 0.5, f'Training fails right after an evaluation pass ("{said}"): an evaluation run without '
               "torch.no_grad() keeps its last batch's graph alive through the outputs and loss that outlive its loop, on top of "
               "the next training step. Wrap it in torch.no_grad() and drop its outputs.")
    yield Vote("fragmentation", 0.3, "Or the evaluation's tensors of other shapes left cached blocks the training step cannot reuse.")
    yield Vote("framework_bug", -0.35, "What the training loop frees says nothing of the evaluation code that runs between its epochs.")


_AFTER_EVAL_STEP = re.compile(r"\b(?:first|next|following) (?:training )?(?:step|batch|iteration|backward)|\b(?:after|once|following) (?:the |an |each |every )?"
                              r"(?:test(?:ing|s)?|eval\w*|validat\w*)", re.IGNORECASE)


@rule
def a_notebook_cell_run_again(data: RuleInput) -> Iterator[Vote]:
    """Running a notebook cell again builds a new model (and optimizer, and outputs) while the
    previous ones stay referenced by the session: its variables, the Out[] history, the traceback of
    the last exception. empty_cache() frees only what nothing references, so each run adds a copy."""
    signals = data.signals
    if not signals.interactive_rerun:
        return
    yield Vote("reference_leak", 0.55, f'A notebook cell runs again ("{signals.evidence["interactive_rerun"]}"): the previous run\'s '
               "model, optimizer and outputs stay referenced by the session (its variables, Out[], the last exception's "
               "traceback), which empty_cache() cannot free; del them and gc.collect() before the cell builds new ones, or "
               "restart the kernel.")
    # The same code with the same model and inputs fit on its first run in this session: nothing
    # that one run needs (its weights, activations, scores, logits, cache) is what is missing.
    for workload in ("input_size_too_large", "batch_too_large", "model_too_large", "attention_quadratic", "large_logits",
                     "kv_cache_or_generation", "full_precision"):
        yield Vote(workload, -0.25, "The same cell, with the same model and inputs, ran on its first run.")


@rule
def memory_held_after_a_phase(data: RuleInput) -> Iterator[Vote]:
    """Memory an evaluation or generation used that is still held once it is over is held by a
    reference that outlives it (outputs cached for an epoch-end hook, a list of predictions, a
    metric's state): activations kept for a backward that never comes go with their outputs."""
    signals = data.signals
    if signals.held_after_phase:
        said = signals.evidence["held_after_phase"]
        yield Vote("reference_leak", 0.6, f'The memory outlives the phase that used it ("{said}"): something keeps its '
                   "results (outputs returned to a hook, predictions in a list, a metric's state); keep only what is "
                   "needed, detached and on the CPU, and drop it when the phase ends.")
        yield Vote("fragmentation", 0.15, "Or the cached blocks it left are the wrong sizes for the next phase's tensors.")
        yield Vote("missing_no_grad", -0.25, "Activations kept without no_grad are freed with their outputs when the "
                   "phase ends; memory that stays is held by a reference.")


@rule
def gradients_keep_their_graph(data: RuleInput) -> Iterator[Vote]:
    """With create_graph=True, backward records the graph of the gradient computation so it can be
    differentiated again, and every gradient holds that graph (and the forward's saved tensors it
    reaches). Gradients that outlive the step (accumulated in .grad across steps, summed into a
    penalty that is logged, kept in a list) keep one graph per step: memory that grows every step."""
    signals = data.signals
    if not signals.graph_of_gradients or not (signals.growth or signals.reserved_grows):
        return
    yield Vote("graph_retained", 0.55, f'The gradients carry a graph of their own ("{signals.evidence["graph_of_gradients"]}") and the memory '
               "grows: each gradient keeps the graph of its own computation, so any that outlive the step (left in .grad, "
               "summed, logged or stored) keep a graph per step; zero .grad with set_to_none, take .item() of what is "
               "logged, or use torch.autograd.grad(..., inputs=...) and drop its result before the next step.")


@rule
def generator_run_for_images(data: RuleInput) -> Iterator[Vote]:
    """A GAN's or VAE's generator makes its images in one forward pass. Called directly from a script
    (no pipeline around it wraps no_grad), autograd keeps every layer's activations, the last ones at
    output resolution, for a backward that never comes; and each row of the latent batch is an image."""
    signals = data.signals
    if not signals.image_generator_inference or signals.no_grad_already:
        return
    said = signals.evidence["image_generator_inference"]
    yield Vote("missing_no_grad", 0.35, f'A generator is run to make images ("{said}"), not trained: outside torch.no_grad() '
               "each call keeps every layer's activations, the last ones at full output resolution, for a backward that "
               "never comes; wrap the sampling in torch.no_grad() (or inference_mode).")
    yield Vote("batch_too_large", 0.2, "Every row of the latent batch is one image, so generate fewer at once (a per-layer "
               "code passed without its batch dimension is read as one image per layer).")


@rule
def another_loader_loads_the_same_weights(data: RuleInput) -> Iterator[Vote]:
    """The same checkpoint loads one way and not another: the weights fit, and what the failing
    loader adds (a second copy on the GPU, tensors materialised before the model's own are freed)
    is the difference."""
    signals = data.signals
    if not signals.other_loader_works:
        return
    yield Vote("checkpoint_loading", 0.7, f'The same weights load another way ("{signals.evidence["other_loader_works"]}"): '
               "the failing loader holds extra copies on the GPU while it fills the model; load to the CPU first "
               "(device='cpu' / map_location='cpu'), or with low_cpu_mem_usage / device_map so the weights are placed once.")
    yield Vote("model_too_large", -0.5, "The model fits once loaded the other way.")


@rule
def model_loaded_again_and_again(data: RuleInput) -> Iterator[Vote]:
    """A long-running process that loads a model again and again (self-play reloading the newest
    weights, a server loading per request, a hyper-parameter loop) builds a new model each time; when
    the old ones stay referenced, every load adds a model's memory until the card is full."""
    signals = data.signals
    if not signals.repeated_loading or signals.host_only:
        return
    yield Vote("reference_leak", 0.6, f'The model is loaded again and again in one process ("{signals.evidence["repeated_loading"]}"): '
               "each load builds a new model while the previous ones stay referenced (Keras' global graph, a list, a closure); "
               "load the weights into the one model you have (load_weights / load_state_dict), or free the old one first "
               "(del, gc.collect(), tf.keras.backend.clear_session()).")
    yield Vote("checkpoint_loading", -0.3, "One load fits (the first ones went through): it is their sum that does not.")


@rule
def samples_generated_during_training(data: RuleInput) -> Iterator[Vote]:
    """Samples or previews made between training steps run the generator outside the optimised step:
    unless that sampling is wrapped in no_grad, autograd keeps its activations (at output resolution)
    on top of the training step's."""
    signals = data.signals
    if not signals.samples_in_training or signals.no_grad_already:
        return
    said = signals.evidence["samples_in_training"]
    weight = 0.65 if signals.sampling_removed_helps else 0.45
    yield Vote("missing_no_grad", weight, f'Samples are generated during training ("{said}"): unless that call runs under torch.no_grad(), '
               "autograd keeps the generator's activations for a backward that never comes; wrap the sampling in torch.no_grad() "
               "(and move the images to the CPU before saving them).")


@rule
def leak_in_one_library_part(data: RuleInput) -> Iterator[Vote]:
    """A leak pinned to one component of a library, where its equivalents (other metrics, the same
    computation written by hand) hold no memory, is that library's bug."""
    signals = data.signals
    if signals.library_part_isolated and (signals.growth or signals.reserved_grows):
        yield Vote("framework_bug", 0.6, f'The growth is pinned to one library component ("{signals.evidence["library_part_isolated"]}") '
                   "while its equivalents stay flat: that component keeps memory it should free; upgrade it or use the "
                   "functional / hand-written form.")
        for cause in ("graph_retained", "missing_no_grad"):
            yield Vote(cause, -0.3, "The script's own tensors and graphs are the same with and without that component.")


@rule
def models_built_in_a_loop(data: RuleInput) -> Iterator[Vote]:
    """Models built one after another in one process keep what each one allocated unless it is
    freed: Keras and TensorFlow hold every model's variables and graph in the global session until
    clear_session(); in PyTorch a reference left to an old model (a list of results, the optimizer, a
    closure) keeps its weights."""
    signals = data.signals
    if not signals.models_in_a_loop:
        return
    # (Keras's own calls name it too: model.compile(loss=...), Sequential())
    keras = data.framework == "tensorflow" or re.search(r"\bkeras\b|tensorflow|\btf\.|\.compile\((?:loss|optimizer)\b|\bSequential\(\)",
                                                         data.context.note or "", re.IGNORECASE)
    how = "K.clear_session() (and del model, gc.collect()) after each one" if keras else \
        "del model and its optimizer, gc.collect() and torch.cuda.empty_cache() after each one"
    yield Vote("reference_leak", 0.6, f'Models are built one after another in one process ("{signals.evidence["models_in_a_loop"]}"): '
               f"what each one allocated stays unless it is freed; call {how}, or run each in its own process.")
    yield Vote("framework_bug", -0.2, "Models that are never freed are the script's to free, whatever the framework keeps.")
    for cause in ("model_too_large", "checkpoint_loading"):
        yield Vote(cause, -0.35, "The first models were built and loaded, so one of them fits: what runs out is the ones kept.")


@rule
def a_model_loaded_again(data: RuleInput) -> Iterator[Vote]:
    """A model loaded again, or replaced by another, in a process that keeps running (a notebook
    cell rerun, an app switching checkpoints): the old model is still referenced while the new one
    loads, so two sets of weights meet on the GPU. Free the old one (del, gc.collect(),
    torch.cuda.empty_cache()) before loading."""
    signals = data.signals
    if not signals.model_replaced or signals.models_in_a_loop:
        return
    said = signals.evidence["model_replaced"]
    if re.search(r"\b(?:larger|bigger|heavier)\b", _sentence_of(data.context.note or "", said), re.IGNORECASE):
        return  # a larger model replacing a smaller one may simply not fit
    freed = signals.freed_not_released
    yield Vote("reference_leak", 0.3 if freed else 0.6, f'A model is loaded again while the process keeps running ("{said}"): the previous '
               "one is still referenced when the next arrives; free it first (del it and what holds it, gc.collect(), "
               "torch.cuda.empty_cache()).")
    for cause in ("checkpoint_loading", "model_too_large", "full_precision"):
        yield Vote(cause, -0.35, "The same loading fitted the first time: what fills the GPU is the model kept from before.")


@rule
def freed_but_not_released(data: RuleInput) -> Iterator[Vote]:
    """The program deleted what it held (del, gc.collect, an unload call) and the memory did not
    come back. In PyTorch something still references the tensors (an optimizer, a closure, outputs,
    a notebook's output history); a native library (llama.cpp, ONNX Runtime, TensorRT, CTranslate2)
    that keeps its device buffers after its object is gone is the library's leak."""
    signals = data.signals
    if not signals.freed_not_released:
        return
    said = signals.evidence["freed_not_released"]
    if data.framework in ("pytorch", "tensorflow", "jax", "unknown"):
        yield Vote("reference_leak", 0.55, f'The memory stayed after the objects were deleted ("{said}"): something still references '
                   "them (an optimizer, a closure, kept outputs, a notebook's output history).")
        if signals.forward_outputs_bound and not signals.no_grad_already and signals.phase not in ("training", "optimizer_setup"):
            # Outputs computed with gradients on hold the graph, and the graph holds the weights it
            # used: while the outputs live, deleting the module frees none of it.
            yield Vote("missing_no_grad", 0.6, f'The outputs of the forward are kept ("{signals.evidence["forward_outputs_bound"]}"), and '
                       "with no training step they still carry the autograd graph, which holds the weights and activations: "
                       "run the forward under torch.no_grad() / inference_mode(), or detach what you keep.")
    else:
        yield Vote("framework_bug", 0.6, f'The memory stayed after the library\'s objects were deleted ("{said}"): the library keeps '
                   "its device buffers; upgrade it, or load once and reuse the object (or run each load in its own process).")
    if signals.phase == "loading":
        for cause in ("checkpoint_loading", "model_too_large"):
            yield Vote(cause, -0.3, "A load fitted before: the memory is the previous load's, never returned.")


def _sentence_of(note: str, said: str) -> str:
    for sentence in re.split(r"(?<=[.!?;])\s+|\n", note):
        if said in sentence:
            return sentence
    return note


@rule
def state_carried_over(data: RuleInput) -> Iterator[Vote]:
    """A tensor one iteration produced that the next one starts from (an RNN's hidden state, the
    previous step's output or prediction) keeps that iteration's graph attached: every backward
    reaches back through all earlier iterations and none of them is freed. Detaching it at each
    iteration (h = h.detach(), truncated backpropagation) cuts the chain."""
    signals = data.signals
    if not signals.state_carried or signals.phase in ("evaluation", "generation", "loading"):
        return
    yield Vote("graph_retained", 0.65, f'What one iteration produced is carried into the next ("{signals.evidence["state_carried"]}"): '
               "without .detach() it chains every iteration's graph to the next, so memory grows with each one. Detach it at "
               "each iteration (truncated backpropagation).")
    yield Vote("reference_leak", -0.2, "What grows is the autograd graph behind the carried tensor, not a container of tensors.")


@rule
def memory_growth(data: RuleInput) -> Iterator[Vote]:
    signals = data.signals
    error = data.context.error
    if not signals.growth or signals.phase in ("evaluation", "data_loading", "loading"):
        return
    if (error and error.backend in ("host", "cpu")) or signals.host_ram:
        # Host RAM that grows is mostly the data pipeline's (rules host_memory*), not the GPU's; but
        # when it climbs through the training loop itself and nothing names the loader, a run whose
        # tensors live in host memory keeps its graph there the same way a GPU run does.
        if signals.phase == "training" and not (signals.loader_settings or signals.metric_object):
            said = signals.evidence["growth"]
            yield Vote("graph_retained", 0.35, f'Host memory climbs through training ("{said}"): a loss or output summed '
                       "without .item() or .detach() keeps every step's graph alive, in host RAM when the tensors are on the CPU.")
            yield Vote("reference_leak", 0.25, "Tensors kept in a list across steps grow host memory the same way.")
        return
    if signals.colocated and signals.serving_engine and not signals.rl_method_only:
        return  # a trainer taking turns with an inference engine: the phases' hand-over (rule trainer_beside_an_inference_engine)
    said = signals.evidence["growth"]
    library = _LIBRARY_CUDA_MALLOC.search(error.raw_message) if error else None
    if library:
        # Not PyTorch's caching allocator: the library's own CUDA code asked the driver directly. A
        # framework's tensors would be freed and reused; device buffers that keep growing there are
        # the library's (allocated again each epoch and never freed).
        yield Vote("framework_bug", 0.65, f'Memory grew ("{said}") and the failing allocation is the library\'s own '
                   f"`{library.group(0).strip()}`, outside any framework's allocator: the library leaks device buffers.")
    if signals.frees_every_step:
        yield Vote("framework_bug", 0.6, f'Memory grew ("{said}") although the script frees its tensors every iteration '
                   f'("{signals.evidence["frees_every_step"]}"): what grows is held below the script (a leak in the framework, '
                   "an extension or a library); try another version.")
        yield Vote("graph_retained", -0.2, "The script's own references are dropped each iteration.")
        yield Vote("reference_leak", -0.2, "The script's own references are dropped each iteration.")
    if signals.unmodified_recipe:
        yield Vote("framework_bug", 0.6, f'Memory grew ("{said}") in a library\'s own recipe, run as published '
                   f'("{signals.evidence["unmodified_recipe"]}"): no code of the user\'s keeps anything, so the library '
                   "(or a model it ships) leaks; look for its fix in a newer release or its issue tracker.")
        yield Vote("graph_retained", -0.2, "No loop of the user's accumulates losses here.")
        yield Vote("reference_leak", -0.15, "No code of the user's keeps tensors here.")
    if signals.metric_object:
        yield Vote("reference_leak", 0.6, f'Memory grew ("{said}") with a metric object in the loop ("{signals.evidence["metric_object"]}"): '
                   "many metrics keep every batch's predictions and targets as their state until compute(); call reset() after "
                   "each compute, keep the metric's state on the CPU, or use a variant that keeps running sums.")
    if signals.phase == "generation" and "llm" not in signals.domains and signals.domains & {"audio", "encoder", "detection", "diffusion"}:
        # A recognizer, an encoder or a detector served call after call has no KV cache to grow: what
        # outlives each call is state the model keeps between calls (a streaming cache, hidden
        # states), and without no_grad each piece of it holds the graph of the call that made it.
        if not signals.no_grad_already:
            yield Vote("missing_no_grad", 0.55, f'Memory grew call after call while serving a model with no KV cache ("{said}"): '
                       "run it under torch.no_grad() / inference_mode(), so that whatever it keeps between calls holds no graph.")
        yield Vote("reference_leak", 0.45, "Outputs or states kept between calls (a cache, a list of results) grow memory the same way.")
        return
    if signals.phase == "generation":
        yield Vote("kv_cache_or_generation", 0.6, f'Memory grew while generating ("{said}"): the KV cache grows with every '
                   "generated token, times the number of sequences sampled at once.")
        return
    if data.framework == "jax":
        yield Vote("fragmentation", 0.4, f'JAX memory ran out partway ("{said}"): XLA\'s pre-allocated BFC pool '
                   "fragments as differently shaped arrays come and go.")
        yield Vote("reference_leak", 0.4, "Arrays kept in Python containers across the loop stay on the device.")
        return
    if signals.domains & {"detection", "variable_length"} and not (signals.growth_across_epochs or signals.metric_object or
                                                                    (signals.bulk_outputs and signals.phase != "training")):
        # (memory that climbs from epoch to epoch, beside a metric that keeps its inputs, or while a result is
        # computed for every item of a data set, outlives any one large input)
        yield Vote("input_size_too_large", 0.6, f'It failed partway ("{said}") on a workload with variable-size inputs: '
                   "memory peaks when the largest images / longest sequences / most objects arrive.")
        yield Vote("graph_retained", 0.35, "A loss accumulated without .item() also grows memory every step.")
        yield Vote("fragmentation", 0.35, "Inputs of changing shape leave cached blocks sized for earlier batches that "
                   "the next, larger one cannot reuse: reserved memory climbs while live memory does not.")
        yield Vote("batch_too_large", 0.3, "The batch leaves no headroom for the largest inputs.")
    elif (signals.phase == "training" or signals.full_finetune) and signals.leak_in_eval:
        yield Vote("reference_leak", 0.6, f'Memory grew in the evaluation between epochs ("{signals.evidence["leak_in_eval"]}"): '
                   "evaluation runs no backward, so what piles up is results and metric state kept from batch to batch "
                   "(predictions, outputs returned from each validation step, bootstrapped metrics); move them to the CPU or keep running sums.")
        yield Vote("graph_retained", 0.3, "A validation loss accumulated as a tensor outside no_grad keeps its graph the same way.")
    elif signals.phase == "training" or signals.full_finetune:
        yield Vote("graph_retained", 0.55, f'Memory grew during training ("{said}"): the classic cause is a loss or '
                   "metric accumulated as a tensor (`total_loss += loss`), keeping every step's graph.")
        yield Vote("reference_leak", 0.45, "Tensors appended to lists or caches each step grow memory the same way.")
        yield Vote("input_size_too_large", 0.2, "A rare large input can also arrive late in an epoch.")
    else:
        # No backward pass is named: growth without training is state that accumulates (metrics, caches, lists).
        yield Vote("reference_leak", 0.55, f'Memory grew batch after batch ("{said}") without a training step: '
                   "state kept across batches (a metric's accumulated inputs, a cache, a list of outputs).")
        yield Vote("graph_retained", 0.35, "Results kept with their autograd history grow memory the same way.")


@rule
def keras_calls_in_a_loop(data: RuleInput) -> Iterator[Vote]:
    """Keras' predict/fit/evaluate build (TF1: add to the graph; TF2: trace a new function for) their
    step on each call; called from a Python loop, what each call leaves behind accumulates until the
    device is full, however small the batch. A framework behaviour, not the user's tensors."""
    signals = data.signals
    if not signals.keras_call_in_loop or data.framework not in ("tensorflow", "unknown"):
        return
    if data.framework == "unknown" and not _KERAS_SAID.search(data.context.note or ""):
        return
    said = signals.evidence["keras_call_in_loop"]
    call = re.search(r"predict_on_batch|train_on_batch|predict_generator|fit_generator|predict|fit|evaluate", said, re.IGNORECASE)
    yield Vote("framework_bug", 0.6 if signals.growth else 0.45,
               f'Keras\' {call.group(0) if call else "predict"}() is called from a loop ("{said}"): each call builds or retraces its step function '
               "and what it leaves behind accumulates. Call the model directly (model(x, training=False)) or "
               "predict_on_batch inside loops, clear_session() between models, or use a TensorFlow release that fixed the leak.")


@rule
def compiled_once_per_shape(data: RuleInput) -> Iterator[Vote]:
    """A tracing compiler (jax.jit, XLA, tf.function) builds one executable per distinct input shape
    and caches it: operands whose shapes keep changing fill that cache, in host memory for the
    compiled code and on the device for its buffers, however small each call is."""
    signals = data.signals
    if not (signals.varying_shapes and signals.tracing_compiler):
        return
    said = signals.evidence["varying_shapes"]
    yield Vote("reference_leak", 0.6, f'Operands of changing shapes under a tracing compiler ("{said}", '
               f'"{signals.evidence["tracing_compiler"]}"): every new shape compiles and caches another executable. Pad or '
               "bucket inputs to a few fixed shapes, or clear the compilation caches (jax.clear_caches(), "
               "tf.keras.backend.clear_session()) between phases.")
    yield Vote("framework_bug", 0.25, "The cache is bounded by its number of entries, not their size.")
    error = data.context.error
    if error and error.backend == "host":
        yield Vote("dataloader_or_host", -0.35, "Host memory ran out, but what filled it is compiled code, not a data pipeline.")


@rule
def fft_plan_cache(data: RuleInput) -> Iterator[Vote]:
    """cuFFT needs a plan per distinct size, layout and dtype, and PyTorch and CuPy cache up to
    thousands of them with their work areas: FFTs over many different lengths grow memory that
    empty_cache() does not return, until the cache is capped or cleared."""
    signals = data.signals
    if not signals.fft_named or not (signals.growth or signals.varying_shapes or signals.freed_not_released):
        return
    yield Vote("cudnn_or_workspace", 0.65, f'FFTs ("{signals.evidence["fft_named"]}") over changing sizes: each size\'s cuFFT plan '
               "and its work area stay cached. Cap the cache (torch.backends.cuda.cufft_plan_cache.max_size = 32), clear it "
               "(torch.backends.cuda.cufft_plan_cache.clear(); CuPy: cupy.fft.config.get_plan_cache().set_size(...)), or pad to a few lengths.")
    yield Vote("input_size_too_large", -0.25, "The memory grows with the number of distinct sizes seen, not with the largest input.")


@rule
def garbage_collector_run_by_hand(data: RuleInput) -> Iterator[Vote]:
    """Calling the garbage collector by hand said to avoid the failure: the memory was held by
    objects nothing referenced any more. Julia frees GPU arrays only when its collector runs, and an
    allocator that fails before running it is the library's fault; in Python, tensors caught in
    reference cycles wait for the cycle collector."""
    signals = data.signals
    if not signals.collector_helps:
        return
    said = signals.evidence["collector_helps"]
    if signals.julia:
        yield Vote("framework_bug", 0.7, f'Running Julia\'s collector by hand avoids it ("{said}"): unreachable GPU arrays are freed '
                   "only when the GC runs, and the allocator failed without running it first. Upgrade CUDA.jl / CuArrays "
                   "(later releases collect and retry before failing) or call GC.gc(); CUDA.reclaim() between batches.")
        yield Vote("cudnn_or_workspace", -0.3, "The library's workspace failed only because collectable arrays still held the card.")
    else:
        yield Vote("reference_leak", 0.55, f'Collecting garbage by hand avoids it ("{said}"): tensors are held by reference cycles '
                   "(closures, modules that reference each other, an exception's traceback) until the cycle collector runs; break the cycle.")


_KERAS_SAID = re.compile(r"\bkeras\b|tensorflow|\btf\.", re.IGNORECASE)
_LOAD_DOUBLES = re.compile(r"\b(?:double|twice|2x|two times)(?: (?:the|as much))? (?:\w+ )?(?:memory|vram|size|usage)\b|"
                           r"\b(?:memory|vram|usage)\b[^.;]{0,20}?\b(?:doubles|doubled|doubling|double)\b(?![- ](?:precision|buffer\w*|float|check\w*))", re.IGNORECASE)


@rule
def loading(data: RuleInput) -> Iterator[Vote]:
    signals, n = data.signals, data.numbers
    if signals.phase != "loading":
        return
    if signals.host_only:
        return  # host memory is what fills while loading, with no GPU message: the host rule says it
    note = (data.context.note or "").lower()
    # torch.load (here or in the frames) restores every tensor to the device it was saved from.
    resuming = any(word in note for word in ("resum", "restor", "checkpoint", "ckpt", "optimizer state", "restart",
                                             "state dict", "state_dict", "second copy", "duplicate", "copies", "saved", "reload",
                                             "torch.load"))
    frames = " ".join((frame.code or "") + (frame.function or "") for frame in (data.context.stack.frames if data.context.stack else []))
    resuming = resuming or bool(re.search(r"torch\.load|optim\w*\.load_state_dict|load_\w*(?:opt|optim)\w*|restore|resume", frames))
    # The model already trained in this process sits on the GPU while its checkpoint is read back.
    resuming = resuming or signals.reload_in_process
    # Memory that doubles while loading ("a surge of approximately double the memory") is the saved
    # copy materialised beside the model it is loaded into.
    resuming = resuming or bool(_LOAD_DOUBLES.search(note))
    # torch.load's tensors land in this process's caching allocator; on one GPU, memory held outside
    # it (beyond a context) is not the restored copy but another process's. (Under several ranks it
    # can be: the other ranks' copies, loaded onto cuda:0.)
    held_outside = held_outside_the_cache(n) and not signals.distributed and (signals.gpu_count or 1) == 1
    if resuming and held_outside:
        yield Vote("checkpoint_loading", 0.3, f"It failed while restoring saved tensors ({signals.phase_source}), but those "
                   f"land in PyTorch's cache, and {format_size(n.non_pytorch)} of the card is held outside it.")
    elif resuming:
        yield Vote("checkpoint_loading", 0.75, f"It failed while restoring saved tensors ({signals.phase_source}): "
                   "torch.load puts every saved tensor back on the GPU it came from, next to the live model.")
        if signals.distributed:
            yield Vote("distributed_replication", 0.6, "In a multi-GPU job every rank that loads without map_location "
                       "(or without set_device) materialises its copy on cuda:0.")
        if signals.only_multi_gpu:
            yield Vote("distributed_replication", 0.7, f'Single-GPU runs are fine ("{signals.evidence["only_multi_gpu"]}"): the extra memory comes from the other ranks.')
    else:
        weights = _weights_bytes(signals)
        if weights and n.capacity and weights < 0.5 * n.capacity:
            # The model fits twice over: what ran out is the loading, not the model.
            yield Vote("checkpoint_loading", 0.7, f"The weights take about {format_size(int(weights))}, under half of the "
                       f"{format_size(n.capacity)} device, yet loading failed: the loader materialised extra copies "
                       "(a state dict on the GPU beside the model, no map_location / low_cpu_mem_usage).")
            yield Vote("model_too_large", -0.4, f"{format_size(int(weights))} of weights fit this device.")
        elif signals.host_ram and signals.free_at_failure:
            # Host RAM filled while the GPU still had room: the loader stages the weights in RAM (a
            # whole file read, a copy per offloaded layer) before they reach the card.
            yield Vote("dataloader_or_host", 0.55, f'Loading filled host RAM ("{signals.evidence["host_ram"]}") while the GPU had room '
                       f'("{signals.evidence["free_at_failure"]}"): the loader stages the weights in RAM first; memory-map the file, '
                       "load shard by shard, or add RAM or swap.")
            yield Vote("model_too_large", 0.25, f"It failed while the model's weights were loaded ({signals.phase_source}).")
        else:
            # (with the card said to be held by other processes, or the same model loaded many times
            # before, the weights alone may well fit)
            yield Vote("model_too_large", 0.2 if signals.repeated_loading else 0.4 if signals.other_process_hint else 0.65,
                       f"It failed while the model's weights were loaded ({signals.phase_source}).")
            yield Vote("checkpoint_loading", 0.4, "Loaders can hold a second copy of the weights while loading "
                       "(no low_cpu_mem_usage / device_map).")
        if n.allocated and n.capacity and n.allocated > 0.85 * n.capacity:
            yield Vote("model_too_large", 0.4, f"The weights already filled {n.allocated / n.capacity:.0%} of the GPU.")
    if re.search(r"map_location|low_cpu_mem_usage", note):
        yield Vote("checkpoint_loading", 0.6, "The note names the loader's placement options (map_location / "
                   "low_cpu_mem_usage): where the loaded tensors land is the question.")
    if signals.distributed and not resuming and re.search(r"torch\.load|load_state_dict|from_pretrained", f"{frames} {note}", re.IGNORECASE):
        yield Vote("distributed_replication", 0.4, "In a multi-GPU job every rank loads its own full copy, on cuda:0 "
                   "unless each rank sets its device or loads to the CPU.")


def _weights_bytes(signals) -> float | None:
    """The weights' size from the note's parameter count, in the precision it names (fp32 if none:
    what PyTorch builds modules in)."""
    if not signals.param_count:
        return None
    per_weight = signals.weight_bytes or (2.0 if signals.low_precision else 4.0)
    return signals.param_count * per_weight


@rule
def data_loading(data: RuleInput) -> Iterator[Vote]:
    signals, error = data.signals, data.context.error
    if signals.phase != "data_loading" or (error and error.backend == "host"):
        return  # host kills have their own rule
    on_device = error is not None and error.backend in DEVICE_BACKENDS
    if "pin" in (signals.phase_source or "").lower() or "pin memory thread" in (error.raw_message if error else "").lower():
        # pin_memory() asks the driver for page-locked host memory (cudaHostAlloc), which reports a
        # CUDA "out of memory" when the host's pinnable memory runs out, with the GPU half empty.
        yield Vote("dataloader_or_host", 0.75, f"It failed while pinning a batch ({signals.phase_source}): pinned memory is "
                   "page-locked host RAM, capped well below the RAM (tightly under WSL); set pin_memory=False or prefetch fewer batches.")
        return
    yield Vote("dataloader_or_host", 0.35 if on_device else 0.7, f"It failed in the data pipeline ({signals.phase_source}): "
               "worker processes, pinned (page-locked) buffers and prefetched batches live in host RAM.")
    if on_device:
        yield Vote("input_size_too_large", 0.3, "A batch moved to the device while loading is as large as its inputs.")


@rule
def memory_that_follows_the_worker_count(data: RuleInput) -> Iterator[Vote]:
    """Memory that rises with the DataLoader's workers is host memory: each worker is a process of
    its own, and the Python objects of the dataset it touches are copied into it (reference counts
    write to every page they read, which breaks copy-on-write), so N workers hold up to N copies."""
    signals = data.signals
    if not signals.memory_follows_workers:
        return
    yield Vote("dataloader_or_host", 0.65, f'The memory follows the DataLoader\'s workers ("{signals.evidence["memory_follows_workers"]}"): '
               "each worker process copies what it touches of the dataset; keep the dataset in numpy arrays or tensors rather "
               "than Python lists and dicts, or lower num_workers.")
    for cause in ("graph_retained", "reference_leak"):
        yield Vote(cause, -0.35, "The memory follows the number of worker processes, not tensors the training loop keeps.")


@rule
def a_device_query_that_reports_out_of_memory(data: RuleInput) -> Iterator[Vote]:
    """An out-of-memory error from a call that allocates no tensor (counting devices, initialising
    the driver, choosing a device): only the device context is being made, and it needs a few hundred
    MB that a card already full cannot give; where nothing else runs, the driver or the platform's GPU
    layer (WSL, a container runtime) is what fails."""
    signals = data.signals
    if not signals.device_query_fails or signals.growth:
        return
    said = signals.evidence["device_query_fails"]
    yield Vote("framework_bug", 0.6 if signals.wsl else 0.4, f'It fails at a call that allocates no tensor ("{said}")'
               + (", under WSL" if signals.wsl else "") + ": the driver or the platform's GPU layer cannot create the device "
               "context; update the driver (and WSL / the container runtime), or check nvidia-smi outside it.")
    # (on a machine others share, a card already full is the likelier reason the context cannot be made)
    shared = signals.shared_machine and not signals.wsl
    yield Vote("other_process_or_device", 0.55 if shared else 0.4, "A card already full (another process, a crashed job) cannot "
               "host a new context either" + (f' and the machine is shared ("{signals.evidence["shared_machine"]}"): '
                                             "nvidia-smi shows who holds it" if shared else "") + ".")
    for cause in ("batch_too_large", "input_size_too_large", "model_too_large"):
        yield Vote(cause, -0.4, "No tensor of the program exists yet at that call.")


@rule
def pinned_memory_under_wsl(data: RuleInput) -> Iterator[Vote]:
    """Under WSL the CUDA driver caps page-locked (pinned) host memory far below the RAM, and a
    DataLoader with pinned, prefetched batches across workers needs a lot of it; its failure is
    reported as a CUDA out-of-memory error."""
    signals = data.signals
    if signals.wsl and signals.loader_settings and signals.phase != "data_loading":
        yield Vote("dataloader_or_host", 0.55, f'The DataLoader pins and prefetches batches ("{signals.evidence["loader_settings"]}") '
                   "under WSL, where pinnable host memory is capped: set pin_memory=False or lower prefetch_factor / num_workers.")
    elif signals.wsl and signals.native_fits and signals.phase != "data_loading":
        # The same program fits outside WSL, or fails with half the card unused: what WSL caps is
        # pinned host memory and the driver's residency, not the card.
        yield Vote("dataloader_or_host", 0.5, f'It fits natively but not under WSL ("{signals.evidence["native_fits"]}"): WSL caps '
                   "page-locked host memory (and what the driver makes resident) below what nvidia-smi shows free; a "
                   "DataLoader's pin_memory=True is the usual consumer: set it to False, or run natively.")


LARGE_FOR_ONE_DEVICE = 16 * 1024**3  # a V100-16GB, a TPU v3 core: the common single-device sizes


@rule
def model_construction(data: RuleInput) -> Iterator[Vote]:
    """Failing while the model is still being built, before any data: the program itself holds
    almost nothing yet, so the memory is someone else's (or on a device it did not mean to use)."""
    signals, n = data.signals, data.numbers
    if not signals.construction:
        return
    if signals.param_count and n.capacity and 4 * signals.param_count > 0.5 * n.capacity:
        return  # a model that big can fill the device on its own (rule inference_weights)
    if signals.param_count and not n.capacity and 4 * signals.param_count > LARGE_FOR_ONE_DEVICE:
        # The device's size is not in the log, but weights this large exceed most single devices
        # (or TPU cores) on their own: building the model is what fills it.
        yield Vote("model_too_large", 0.55, f"Building a {signals.param_count / 1e9:.1f}B-parameter model: its weights take "
                   f"{format_size(int(4 * signals.param_count))} in fp32, more than most single devices hold.")
        return
    yield Vote("other_process_or_device", 0.6, f'It failed while the model was built ("{signals.evidence["construction"]}"), '
               "before any batch: the program held almost nothing, so the memory was taken by another process or device.")


@rule
def diffusion_training(data: RuleInput) -> Iterator[Vote]:
    """Training a diffusion U-Net: self-attention over the latent's pixels is the largest activation
    (memory-efficient attention is the first lever), and a full fine-tune of a ~1B-parameter U-Net
    needs ~16 B per parameter in states, more than a small card holds."""
    signals, capacity = data.signals, data.numbers.capacity
    if "diffusion" not in signals.domains or signals.phase != "training":
        return
    yield Vote("attention_quadratic", 0.45, "Diffusion training runs self-attention over every latent pixel; without "
               "memory-efficient attention (SDPA, xformers) its score matrices dominate the activations.")
    if capacity and capacity < 12 * 10**9 and not signals.lora:
        yield Vote("model_too_large", 0.4 + (0.25 if signals.immediate else 0.0),
                   f"A full fine-tune of a diffusion U-Net needs ~14 GB of weights, gradients and Adam states: more than "
                   f"this {capacity / 10**9:.0f} GB card{' (it failed at once)' if signals.immediate else ''}.")


# Cards of 8 GB or less: a diffusion pipeline's components alone take most of one.
SMALL_CARD_BYTES = 8.6 * 10**9


def _on_a_small_card(data: RuleInput) -> bool:
    return bool(data.numbers.capacity and data.numbers.capacity <= SMALL_CARD_BYTES)


def _small_card_mode_asked(signals) -> str | None:
    """What the note said asking for a small-card mode or the memory the code needs, if it did."""
    return signals.evidence["memory_requirement_asked"] if signals.memory_requirement_asked else None


@rule
def diffusion_pipeline_on_a_small_card(data: RuleInput) -> Iterator[Vote]:
    """A diffusion pipeline keeps its text encoder(s), U-Net or transformer and VAE on the GPU together:
    about 2 GB in fp16 for SD 1.x, 7 GB for SDXL, over 20 GB for Flux. On a card of 8 GB or less
    (or where the user asks for a small-card mode) the resident weights are what leaves no room;
    offloading the idle components is the lever, before attention slicing. (A named model whose
    weights are counted against the card is rule inference_weights'.)"""
    signals, capacity = data.signals, data.numbers.capacity
    if "diffusion" not in signals.domains or signals.phase == "training" or signals.param_count:
        return
    small_card, asked = _on_a_small_card(data), _small_card_mode_asked(signals)
    if not (small_card or asked):
        return
    why = f"on this {capacity / 10**9:.0f} GB card" if small_card else f'and the note asks for a small-card mode ("{asked}")'
    # (a large image said is the activations' case: the weights stay a second reading)
    weight = 0.3 if signals.long_input else 0.6 if small_card and asked else 0.5 if small_card else 0.45
    yield Vote("model_too_large", weight,
               f"A diffusion pipeline keeps its text encoders, denoiser and VAE on the GPU together (about 2 GB in fp16 for "
               f"SD 1.x, 7 GB for SDXL, over 20 GB for Flux) {why}: offload the idle components (enable_model_cpu_offload, "
               "or enable_sequential_cpu_offload at about 1 GB; ComfyUI's --lowvram) or use a quantized denoiser.")


@rule
def a_small_card_mode_asked(data: RuleInput) -> Iterator[Vote]:
    """Outside training, a note that asks for a low-VRAM mode or a smaller minimum card ("please add
    support for 6 GB of VRAM") is asking to keep less of the model resident: offload or quantize the
    weights. (A diffusion pipeline's components: rule diffusion_pipeline_on_a_small_card.)"""
    signals = data.signals
    asked = _small_card_mode_asked(signals)
    if not asked or signals.phase in ("training", "optimizer_setup") or "diffusion" in signals.domains:
        return
    if signals.long_input or signals.growth:
        return
    yield Vote("model_too_large", 0.4, f'The note asks for a mode for smaller cards ("{asked}"): '
               "what such modes take off the card is the model's resident weights; offload the idle parts to the CPU "
               "(sequential or model offload, device_map with a max_memory) or load them quantized.")


@rule
def generation(data: RuleInput) -> Iterator[Vote]:
    signals = data.signals
    if "diffusion" in signals.domains and signals.while_building and not signals.attention_said:
        return  # it failed while the pipeline was being built: no denoising step had run yet
    if "diffusion" in signals.domains and signals.phase in ("generation", "evaluation", "unknown"):
        # (on a card of 8 GB or less, with no large image said, the pipeline's resident weights weigh
        # as much: rule diffusion_pipeline_on_a_small_card)
        small_card = _on_a_small_card(data) and not signals.long_input
        yield Vote("attention_quadratic", 0.45 if small_card else 0.55, "Diffusion U-Nets and upscalers run self-attention over "
                   "every pixel of the latent: the attention matrix grows with resolution to the fourth power.")
        return
    if "rendering" in signals.domains and "llm" not in signals.domains and signals.phase in ("generation", "evaluation"):
        # A renderer's images come from rays marched through a small network, a chunk of rays at a
        # time: that chunk (and the samples per ray) is its batch; there is no KV cache. (A loop that
        # fails after N images keeps them: rule memory_scales_with_the_inputs_processed.)
        if not (signals.dataset_size_matters or signals.growth):
            yield Vote("batch_too_large", 0.35, "A renderer evaluates rays a chunk at a time: the rays per chunk (and samples "
                       "per ray) are its batch; lower the chunk sizes for rendering.")
        return
    if signals.outputs_per_prompt and "llm" not in signals.domains and signals.phase in ("generation", "evaluation", "unknown") \
            and not signals.serving_engine:
        # (a language model's several sequences per prompt are its KV cache: many_sequences below)
        yield Vote("batch_too_large", 0.6, f'Several outputs are generated for each prompt ("{signals.evidence["outputs_per_prompt"]}"): '
                   "they go through the network together, so the batch is prompts x outputs per prompt; generate one at a time.")
    if signals.phase != "generation" or signals.serving_engine:
        return
    if "diffusion" in signals.domains:
        yield Vote("attention_quadratic", 0.6, "Diffusion U-Nets and upscalers run self-attention over every pixel of "
                   "the latent: the attention matrix grows with resolution to the fourth power.")
        return
    if signals.many_sequences and signals.whole_set_one_batch:
        # the many are the inputs, passed in one call: splitting them into batches is the fix, before any
        # generation setting
        yield Vote("batch_too_large", 0.5, f'The prompts all go to generate in one batch ("{signals.evidence["whole_set_one_batch"]}"): '
                   "loop over them in batches of a size that fits; the KV cache of each batch then stays within the card.")
        yield Vote("kv_cache_or_generation", 0.3, "Each prompt in that batch keeps its own KV cache while it is generated.")
    elif signals.many_sequences:
        yield Vote("kv_cache_or_generation", 0.6, f'Many sequences are generated at once ("{signals.evidence["many_sequences"]}"): '
                   "the KV cache is kept for every one of them.")
    if "llm" in signals.domains or "generat" in (signals.phase_source or "") or "sampl" in (signals.phase_source or ""):
        yield Vote("kv_cache_or_generation", 0.5, f"It failed while generating ({signals.phase_source}): the KV cache "
                   "grows with batch x (prompt + generated) tokens x layers.")
    else:
        yield Vote("kv_cache_or_generation", 0.25, f"It failed during inference ({signals.phase_source}).")
        yield Vote("batch_too_large", 0.25, "Inference batches are often sized without headroom.")


@rule
def saving_allocates_on_the_gpu(data: RuleInput) -> Iterator[Vote]:
    """Writing a checkpoint only reads the weights (torch.save copies each tensor to the host): a
    save that runs out of GPU memory after the steps themselves fit is the save path making copies on
    the device (dequantizing 8-bit or 4-bit weights, making tensors contiguous, merging adapters), a
    library's behaviour fixed by a version change or by moving the state to the CPU first. Sharded
    runs gather the full state instead (rule gathered_for_saving); a merge to full weights is its
    own rule."""
    signals = data.signals
    if not signals.saving or signals.fsdp or signals.zero_stage == 3 or signals.merge_to_full_weights:
        return
    if signals.phase in ("evaluation", "generation", "loading"):
        return
    yield Vote("framework_bug", 0.45, f'It failed while saving ("{signals.evidence["saving"]}"): a checkpoint only reads '
               "the weights, so a save that allocates on the GPU is the save path copying them there; move the state "
               "to the CPU before saving, or change the library's version (8-bit and adapter save paths have regressed).")


@rule
def optimizer_setup(data: RuleInput) -> Iterator[Vote]:
    if data.signals.phase == "optimizer_setup":
        yield Vote("optimizer_state", 0.75, f"It failed while the optimizer was being set up ({data.signals.phase_source}), "
                   "before any activation existed: optimizer states (and fp32 master weights) do not fit.")


@rule
def gradients_left_on(data: RuleInput) -> Iterator[Vote]:
    signals = data.signals
    if signals.grad_left_on and signals.phase in ("evaluation", "generation", "unknown") and not signals.no_grad_already:
        yield Vote("missing_no_grad", 0.7, f'The note says gradients stay on where nothing is trained ("{signals.evidence["grad_left_on"]}"): '
                   "every forward keeps its activations for a backward that never comes (torch.no_grad() / inference_mode()).")


@rule
def kept_across_steps(data: RuleInput) -> Iterator[Vote]:
    """What the note says the code keeps from one step to the next: a loss summed as a tensor (or
    retain_graph) keeps every step's whole graph; outputs collected in a container keep their
    memory, and their graphs too when gradients are on."""
    signals = data.signals
    if signals.loss_kept:
        yield Vote("graph_retained", 0.7, f'The note describes a loss kept across steps ("{signals.evidence["loss_kept"]}"): '
                   "a loss tensor summed or stored without .item() (or retain_graph=True) keeps each step's graph and activations.")
    if signals.outputs_kept:
        yield Vote("reference_leak", 0.4 if signals.kept_with_graph else 0.65, f'The note describes outputs kept across steps '
                   f'("{signals.evidence["outputs_kept"]}"): tensors held in a container stay on the GPU; move them off with '
                   ".detach().cpu() or keep only what you need.")
        if signals.kept_with_graph:
            yield Vote("graph_retained", 0.6, f'The kept tensors still carry their graph ("{signals.evidence["kept_with_graph"]}"): '
                       "each one holds its whole forward pass; keep `.detach()`ed copies.")
        elif signals.phase in ("training", "unknown") and not signals.no_grad_already:
            yield Vote("graph_retained", 0.3, "Kept outputs that still require grad hold their graphs as well.")


@rule
def peak_at_the_start_then_lower(data: RuleInput) -> Iterator[Vote]:
    """A run whose memory is far higher in its first iterations than once it settles: an autotuner
    trying algorithms with their workspaces (cudnn.benchmark on each new input shape, compiler
    autotuning), which a steady-state step never needs again."""
    signals = data.signals
    if signals.start_peak_then_lower:
        yield Vote("cudnn_or_workspace", 0.65, f'Memory peaks at the start and settles lower ("{signals.evidence["start_peak_then_lower"]}"): '
                   "cudnn.benchmark tries every convolution algorithm with its workspace on the first iterations of each input "
                   "shape; set torch.backends.cudnn.benchmark = False (or cap the workspace) to keep that peak away.")
        for cause in ("graph_retained", "reference_leak"):
            yield Vote(cause, -0.3, "Memory that goes down again is not kept from step to step.")
        yield Vote("batch_too_large", -0.3, "The settled steps leave room: what does not fit is the start's peak, not the batch's activations.")


@rule
def memory_scales_with_the_inputs_processed(data: RuleInput) -> Iterator[Vote]:
    """Memory that a batch size does not bound but the number of inputs in one call does (a
    million records fit, ten million do not): each batch's results stay on the device until the
    call returns (embeddings kept as GPU tensors, predictions appended)."""
    signals = data.signals
    said_count = signals.evidence.get("dataset_size_matters", "")
    if signals.dataset_size_matters and "video" in signals.domains and re.search(r"\bframes?\b", said_count):
        # A video model's frames go through together (a clip is one input): more frames is a
        # longer input, not more outputs kept.
        yield Vote("input_size_too_large", 0.6, f'A video model takes its frames together ("{said_count}"): every '
                   "activation (and its temporal attention) grows with the frame count; generate fewer frames per pass, "
                   "or in overlapping windows (a context length), or at a lower resolution.")
    elif signals.training_set_size_matters and signals.phase == "training" and not signals.host_ram:
        said = signals.evidence["training_set_size_matters"]
        yield Vote("graph_retained", 0.45, f'It fails only once the training set is large enough ("{said}"): each batch is the '
                   "same size, so what runs out is kept batch after batch through the epoch, most often a loss summed without "
                   ".item() that holds every batch's graph.")
        yield Vote("reference_leak", 0.3, "Outputs or tensors appended to a list each batch grow with the epoch the same way.")
    elif signals.bulk_outputs and signals.growth and signals.phase not in ("training", "optimizer_setup", "loading"):
        yield Vote("reference_leak", 0.6, f'Memory grew ("{signals.evidence["growth"]}") while computing a result for every item '
                   f'of a collection ("{signals.evidence["bulk_outputs"]}"): the results kept for the end stay on the GPU batch '
                   "after batch; move each batch's results to the CPU (or convert them to numpy) before keeping them.")
    elif signals.dataset_size_matters and signals.phase not in ("training", "optimizer_setup", "loading"):
        yield Vote("reference_leak", 0.6, f'How many inputs one call gets decides whether it fits ("{signals.evidence["dataset_size_matters"]}"): '
                   "every batch's results stay on the GPU until the end; move them to the CPU per batch or process the inputs in chunks.")


@rule
def automatic_batch_size(data: RuleInput) -> Iterator[Vote]:
    """A batch size found automatically is measured once, on the inputs that came first (an earlier
    task, shorter sequences) and then reused: longer inputs later, or another task in the same
    process, ask for more than the measurement allowed."""
    signals, n = data.signals, data.numbers
    if not signals.auto_batch:
        return
    larger_than_card = bool(n.requested and n.capacity and n.requested > n.capacity)
    if signals.repeated_calls or larger_than_card:
        yield Vote("framework_bug", 0.5, f'The batch size was found automatically ("{signals.evidence["auto_batch"]}") and '
                   "reused for inputs it was not measured on (another task in the same process, longer sequences): "
                   "detect it again per task, or set it by hand.")
        yield Vote("batch_too_large", 0.35, "The reused batch is too large for the longer inputs.")
    elif not signals.immediate:
        # The finder measured a few steps of one shape; the run then went further than it looked
        # (evaluation, later epochs, larger inputs) and needed what the estimate left out.
        yield Vote("framework_bug", 0.6, f'The batch size was chosen automatically ("{signals.evidence["auto_batch"]}") '
                   "and the run failed after it had started: the finder's estimate left out what the later steps need "
                   "(evaluation, augmentation, larger inputs); set the batch by hand below its pick, or update the library.")
        yield Vote("batch_too_large", 0.3, "The chosen batch leaves no headroom for the later steps.")


@rule
def second_round_fails(data: RuleInput) -> Iterator[Vote]:
    """The first batch runs and the second fails: outside training what the first left behind (its
    outputs, hidden states kept in a variable or a list) is still referenced when the second needs
    the same room. In training the first optimizer step's state is the other candidate."""
    signals = data.signals
    if not signals.second_round_fails or signals.phase in ("training", "optimizer_setup", "loading", "data_loading"):
        return
    said = signals.evidence["second_round_fails"]
    graphs_kept = (signals.phase in ("evaluation", "generation") or (signals.phase == "unknown" and signals.forward_outputs_bound)) \
        and not signals.no_grad_already
    yield Vote("reference_leak", 0.3 if graphs_kept else 0.5, f'It fails once one batch has run ("{said}"): the first batch\'s '
               "results are still referenced (a variable, a list, outputs with hidden states) when the next one runs; drop "
               "them (`del outputs`) or keep only what is needed on the CPU.")
    if graphs_kept:
        yield Vote("missing_no_grad", 0.3, "Without no_grad the results that outlive their batch keep its whole graph "
                   "and activations with them.")
    if signals.phase == "unknown":
        yield Vote("optimizer_state", 0.2, "In training, the first optimizer step creates the optimizer's state, "
                   "which the second step then has to fit beside.")


@rule
def optimizer_step_named(data: RuleInput) -> Iterator[Vote]:
    """The first optimizer step allocates the optimizer's state (Adam: two fp32 tensors per
    parameter, 8 bytes each parameter) on top of weights, gradients and whatever activations are
    still alive: a run whose forward and backward fit fails exactly there."""
    signals = data.signals
    if signals.optimizer_step:
        # (The state is created once, on the first step: memory said to grow with every step is not it.)
        grows = signals.growth and re.search(r"\bevery\b|\beach\b|grow|increas|leak|climb|ris(?:e|es|ing)\b",
                                             signals.evidence.get("growth", ""), re.IGNORECASE)
        yield Vote("optimizer_state", 0.3 if grows else 0.65, f'The note places the failure at the optimizer ("{signals.evidence["optimizer_step"]}"): '
                   "its first step creates per-parameter state (Adam/AdamW: 8 bytes per parameter; SGD with momentum: 4).")


@rule
def immediate_failure(data: RuleInput) -> Iterator[Vote]:
    signals = data.signals
    if signals.immediate and signals.phase == "training" and data.framework in ("pytorch", "tensorflow", "unknown"):
        yield Vote("batch_too_large", 0.3, f'It failed at once ("{signals.evidence["immediate"]}"): the first step '
                   "already needs more than the device has, which points at the configuration, not a leak.")
