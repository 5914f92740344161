"""Rules on the allocation site: which frame or op asked for the memory that was refused. The
innermost meaningful frame (dispatch machinery and oomtriage's own simulator frames skipped) names
the mechanism: optimizer state creation, attention scores, logits over a vocabulary, a
convolution's workspace, a collective's buffers, a pairwise matrix."""

from __future__ import annotations

import re
from typing import Iterator

from ..signals import meaningful_frames
from . import RuleInput, Vote, rule

# The whole module moved onto the device at once (a wrapper's set-up or the user's own `.to`): the
# request is the weights themselves, before any activation or optimizer state exists.
_WHOLE_MODEL_MOVE_PATTERN = (r"\b(?:self\.)?(?:module|model|net|network)\.(?:to\((?:self\.)?(?:device|local_rank|rank|['\"]cuda)|cuda\()|"
                             r"_configure_distributed_model\b")
# (cause, weight, pattern over "function code filename" of a frame, what it means)
_SITES: list[tuple[str, float, str, str]] = [
    ("optimizer_state", 0.6, r"exp_avg(?:_sq)?|_init_group|\bstate\[['\"](?:exp_avg|momentum_buffer)|fused_adam|_multi_tensor_adam|"
                             r"zeros_like\(p|optim/\w+\.py|optimizer\.step\(|_init_optimizer_states|init_fn.*(?:adam|opt)",
     "the optimizer creating or updating its per-parameter state (Adam: two fp32 tensors per parameter)"),
    ("large_logits", 0.65, r"log_softmax|cross_entropy|CrossEntropyLoss|\blm_head\b|compute_logits|_get_logits|logits_processor|"
                           r"gather_logits|logprob|\blogits\s*=(?!\s*(?:self\.)?\w*(?:model|net|module|encoder|backbone)\w*\()|\.logits\b|nll_loss",
     "the output layer: logits over the vocabulary (batch x tokens x vocabulary, in fp32 for the loss)"),
    # A tensor with a vocabulary-sized dimension per token (a sparse lexical head, a one-hot over the
    # vocabulary): batch x tokens x vocabulary, the logits' size whatever the name.
    ("large_logits", 0.6, r"(?:zeros|ones|empty|full|new_zeros|new_empty|one_hot)\w*\([^\n]*\b(?:vocab_size|n_vocab|vocab|vocabulary_size|num_tokens)\b",
     "a tensor with a vocabulary-sized dimension for every token (batch x tokens x vocabulary)"),
    # Mixed-precision wrappers hand the model's outputs back in fp32 (accelerate's
    # convert_outputs_to_fp32): for a language model that output is the logits, doubled in size.
    ("large_logits", 0.65, r"_convert_to_fp32|convert_outputs_to_fp32|ConvertOutputsToFp32|upcast_logits|logits\.float\(\)",
     "the model's outputs (a language model's logits, batch x tokens x vocabulary) converted to fp32"),
    ("attention_quadratic", 0.55, r"\bsoftmax\b.*(?:attn|attention|scores?|qk)|(?:attn|attention)_(?:weights|scores|probs)|"
                                  r"baddbmm|_attn\(|self_attn|Attention\.forward|attention\.py|scores\s*=.*matmul",
     "attention scores: a sequence x sequence matrix per head"),
    # A tensor built over every pair of items (a dense graph attention's all_combinations_matrix)
    ("attention_quadratic", 0.55, r"\ball_(?:combinations|pairs)\w*|\bpairwise_(?:matrix|features|scores|input)\w*",
     "a tensor over every pair of items (nodes, tokens): it grows with the square of their count"),
    ("distributed_replication", 0.65, r"all_gather_object|broadcast_object_list|gather_object|scatter_object_list|"
                                      r"_object_to_tensor|all_gather\(",
     "a collective that gathers every rank's data onto each GPU"),
    ("distributed_replication", 0.6, r"\bbarrier\(|init_process_group|_distributed_broadcast_coalesced|_sync_module_states|"
                                     r"_sync_params_and_buffers|broadcast_coalesced|_verify_param_shape_across_processes",
     "a collective of the job's set-up, which every rank runs on its current device (cuda:0 unless it called "
     "torch.cuda.set_device(local_rank) first)"),
    # The DataLoader's pin_memory thread copies each batch into page-locked host memory: a CUDA
    # "out of memory" there is the host's pinning failing, not the card.
    ("dataloader_or_host", 0.6, r"_pin_memory_loop|pin_memory\.py|\.pin_memory\(|CachingHostAllocator",
     "pinning a batch in page-locked host memory (the DataLoader's pin_memory thread)"),
    ("kv_cache_or_generation", 0.5, r"past_key_values|kv_cache|key_cache|cache_engine|_allocate_kv_cache|profile_run|"
                                    r"determine_num_available_blocks|\.generate\(|generation/utils\.py",
     "the KV cache or the generation loop"),
    ("cudnn_or_workspace", 0.3, r"_conv_forward|conv[123]d\(|F\.conv|cudnn_convolution|convolution_backward",
     "a convolution: cuDNN's algorithms take a workspace on top of the output"),
    ("model_too_large", 0.6, r"global_variables_initializer|variables_initializer|initialize_all_variables|"
                             r"\b(?:model|module|net|network)\.init\(",
     "creating the model's variables (TensorFlow's variable initializer, Flax's `init`): the weights themselves"),
    ("model_too_large", 0.5, _WHOLE_MODEL_MOVE_PATTERN, "moving the whole model onto the GPU: the weights themselves"),
    # A detector's label assignment: IoU of every anchor or proposal with every ground-truth box,
    # anchors x boxes, which grows with the boxes in one image (mmdetection moves it to the CPU past
    # gpu_assign_thr boxes).
    ("input_size_too_large", 0.55, r"bbox_overlaps|box_iou|\bassigners?/|max_iou_assigner|\bassign\(|iou_calculator|"
                                   r"pairwise_iou|generalized_box_iou",
     "a detector's label assignment: the IoU of every anchor with every ground-truth box in the image"),
    ("checkpoint_loading", 0.55, r"torch\.load\(|load_state_dict\(|_load_from_state_dict|safe_open|load_checkpoint|"
                                 r"from_pretrained\(|\brestore_\w+\(|torch/serialization\.py|restore_location|_cuda_deserialize|"
                                 r"persistent_load",
     "loading saved weights or optimizer state"),
]
WHOLE_MODEL_MOVE = re.compile(_WHOLE_MODEL_MOVE_PATTERN)
_FUSED_ATTENTION = re.compile(r"scaled_dot_product_attention|flash_attn|memory_efficient_attention|xformers")
_PAIRWISE = re.compile(r"zeros\(\s*\(\s*(\w+)\s*,\s*\1\s*\)|ones\(\s*\(\s*(\w+)\s*,\s*\2\s*\)|empty\(\s*\(\s*(\w+)\s*,\s*\3\s*\)|"
                       r"\bcdist\(|\bpdist\(|@\s*\w+\.T\b|\bouter\(|\[:, *None\].*\[None")


def innermost_site(context) -> str | None:
    """The cause the allocating frame (or its caller) names, when one of the sites above does."""
    for frame in meaningful_frames(context)[:2]:
        text = f"{frame.function or ''} {frame.code or ''} {frame.filename or ''}"
        for cause, _, pattern, _ in _SITES:
            if re.search(pattern, text):
                return cause
    return None


# An op the framework names in its message (TensorFlow's node, XLA's op_name) that computes attention.
_ATTENTION_OP = re.compile(r"attention|attn|\bmha\b|multi_?head|self_?att|scores?\b|dot_product", re.IGNORECASE)


@rule
def attention_op_in_the_message(data: RuleInput) -> Iterator[Vote]:
    """TensorFlow and XLA name the op that failed. An attention op whose output ends in two equal,
    long dimensions ([batch, heads, N, N]) is the score matrix itself, which grows with the square
    of the sequence (or of the pixels an attention layer over a feature map attends across), where
    the batch only scales it linearly."""
    error = data.context.error
    shape = error.tensor_shape if error else None
    if not error or not error.operation or not shape or len(shape) < 3 or not _ATTENTION_OP.search(error.operation):
        return
    if shape[-1] == shape[-2] and shape[-1] >= 512:
        yield Vote("attention_quadratic", 0.8, f"The failing op is attention (`{error.operation[:80]}`) and its tensor {shape} ends "
                   f"in a {shape[-1]:,} x {shape[-1]:,} score matrix: it grows with the square of the sequence or feature map.")
        yield Vote("batch_too_large", -0.3, "The batch scales the score matrix only linearly; its size is the square of the length.")


def _an_ordinary_activation(numbers) -> bool:
    """A small request into a card that its live tensors already fill: the next activation (a
    convolution's output), not a workspace, which is asked for in large pieces on top of them."""
    n = numbers
    return bool(n.requested and n.capacity and n.allocated is not None
                and n.requested < 0.05 * n.capacity and n.allocated >= 0.7 * n.capacity)


@rule
def allocation_site(data: RuleInput) -> Iterator[Vote]:
    frames = meaningful_frames(data.context)[:6]
    if not frames:
        return
    seen: set[str] = set()
    for depth, frame in enumerate(frames):
        text = f"{frame.function or ''} {frame.code or ''} {frame.filename or ''}"
        shown = (frame.code or frame.function or frame.filename or "").strip()[:90]
        if depth == 0 and _FUSED_ATTENTION.search(text):
            yield Vote("attention_quadratic", -0.5, f"It failed inside fused attention (`{shown}`), which never "
                       "materialises the score matrix.")
            yield Vote("input_size_too_large", 0.35, "Fused attention's memory still grows with batch x sequence length.")
            seen.add("attention_quadratic")
        if depth == 0 and frame.is_user and frame.code and _PAIRWISE.search(frame.code):
            yield Vote("input_size_too_large", 0.6, f"`{shown}` builds a pairwise (N x N) matrix: its size is the "
                       "square of the input's.")
        if depth == 0 and WHOLE_MODEL_MOVE.search(text):
            yield Vote("optimizer_state", -0.5, f"The failing line moves the model itself (`{shown}`): no optimizer state "
                       "exists yet, whatever set-up call it runs under.")
        for cause, weight, pattern, meaning in _SITES:
            if cause in seen or not re.search(pattern, text):
                continue
            if cause == "cudnn_or_workspace" and _an_ordinary_activation(data.numbers):
                continue
            seen.add(cause)
            # The innermost frames are the allocation site; outer ones only say what was running.
            scale = 1.0 if depth == 0 else 0.8 if depth < 3 else 0.55
            yield Vote(cause, round(weight * scale, 3), f"The memory was requested by {meaning} (`{shown}`).")
