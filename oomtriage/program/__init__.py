"""How a training program takes its options, read from its source and its command line, so a fix
is expressed in the program's own configuration (``--batch_size=8`` for nanoGPT's configurator,
``--per_device_train_batch_size 8`` for a Hugging Face script, ``data.batch_size=8`` for Hydra, an
edited YAML file) rather than as advice.

One reader per option style (``READERS``), each in its own module; each reads what it can and the
first option found for a role wins. Nothing here runs the user's code: sources are read with ``ast``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Callable, Literal

from pydantic import BaseModel, Field

Style = Literal["argparse", "configurator", "hf_arguments", "hydra", "lightning_cli", "config_file", "source"]
ValueType = Literal["int", "float", "bool", "str", "flag"]
Role = Literal["batch", "accumulation", "checkpointing", "precision", "sequence", "eval_batch", "eval_accumulation",
               "optimizer"]

# What an option is for, by its name (snake_case, dashes folded). The first pattern that matches wins;
# evaluation batches are their own role, so they never pass for the training batch.
ROLE_PATTERNS: list[tuple[Role, str]] = [
    ("eval_accumulation", r"^eval_accumulation_steps$"),
    ("eval_batch", r"(?:^|_)(?:eval|val|valid|validation|test|inference)_?(?:batch_size|bs)$|^per_device_eval_batch_size$"),
    ("accumulation", r"(?:^|_)(?:gradient_accumulation_steps|grad_accum(?:ulation)?(?:_steps)?|accumulate_grad_batches|"
                     r"accum(?:ulation)?_steps|accumulate|accumulation|grad_acc_steps|update_freq)$"),
    ("batch", r"^(?:(?:per_device_)?train_)?(?:micro_)?batch_size$|^(?:train_)?bs$|^mbs$|^micro_bs$|^batch$|"
              r"^train_micro_batch_size_per_gpu$|^(?:data_)?batch_size$"),
    ("checkpointing", r"(?:^|_)(?:gradient_checkpointing|grad_checkpoint(?:ing)?|activation_checkpointing|"
                      r"checkpoint_activations|grad_ckpt|use_checkpointing|gradient_checkpoint)$"),
    ("precision", r"^(?:bf16|fp16|amp|use_amp|mixed_precision|precision|dtype|half|use_bf16|use_fp16|autocast)$"),
    ("sequence", r"^(?:block_size|max_length|max_seq_length|max_seq_len|seq_len|seq_length|sequence_length|bptt|"
                 r"max_len|context_length|ctx_len|n_ctx|max_source_length|model_max_length|resolution|image_size|"
                 r"img_size|crop_size|input_size|max_tokens)$"),
    ("optimizer", r"^(?:optim|optimizer|optimizer_name|opt)$"),
]


class Option(BaseModel):
    """One option of the program, where it lives, and the value this command gives it."""

    name: str = Field(description="the option's name as the program knows it (nested with dots for Hydra/Lightning)")
    style: Style
    flag: str | None = Field(None, description="the command-line flag, e.g. --batch-size (None: key=value styles)")
    value_type: ValueType = "str"
    default: str | None = None
    current: str | None = Field(None, description="the value for this command: its own, else the config's, else the default")
    file: str | None = Field(None, description="config_file and source styles: the file (relative to the project) that holds it")
    span: tuple[int, int] | None = Field(None, description="source style: character offsets of the literal in the file")
    call: str | None = Field(None, description="source style: the call whose keyword this is (Trainer, DataLoader, ...)")
    choices: list[str] = Field(default_factory=list)

    @property
    def role(self) -> Role | None:
        return role_of(self.name)

    def current_int(self) -> int | None:
        value = (self.current or "").strip()
        return int(value) if re.fullmatch(r"\d+", value) else None

    def current_bool(self) -> bool:
        return (self.current or "").strip().lower() in ("1", "true", "yes", "on")


def role_of(name: str) -> Role | None:
    leaf = name.rsplit(".", 1)[-1].replace("-", "_").lower()
    for role, pattern in ROLE_PATTERNS:
        if re.search(pattern, leaf):
            return role
    return None


class ProgramOptions(BaseModel):
    """Every option found for one command, by the readers that recognised the program."""

    script: str | None = Field(None, description="the program's entry file, relative to the project")
    styles: list[Style] = Field(default_factory=list)
    options: list[Option] = Field(default_factory=list)

    def find(self, role: Role) -> Option | None:
        return next((option for option in self.options if option.role == role), None)

    def find_all(self, role: Role) -> list[Option]:
        return [option for option in self.options if option.role == role]


Reader = Callable[["ProgramSource"], list[Option]]
READERS: dict[Style, Reader] = {}


def reader(style: Style):
    def register(function: Reader) -> Reader:
        READERS[style] = function
        return function

    return register


class ProgramSource:
    """What readers look at: the command, the project, the entry script's source and parsed tree."""

    def __init__(self, command: list[str], project: Path) -> None:
        self.command, self.project = list(command), project
        self.script = entry_script(command, project)
        self.text = _read(self.script) if self.script else ""
        try:
            self.tree: ast.Module | None = ast.parse(self.text) if self.text else None
        except (SyntaxError, ValueError):
            self.tree = None
        index = self.command.index(str(self.script_argument)) if self.script_argument in self.command else 0
        self.arguments = self.command[index + 1:] if self.script_argument else []

    @property
    def script_argument(self) -> str | None:
        return next((item for item in self.command[1:] if item.endswith(".py") and (self.project / item).is_file()), None)

    def project_sources(self) -> dict[str, str]:
        """The project's own Python files (relative path -> text), the entry script first; at most 200."""
        found: dict[str, str] = {}
        if self.script is not None:
            found[str(self.script.relative_to(self.project))] = self.text
        for path in sorted(self.project.rglob("*.py"))[:400]:
            if len(found) >= 200:
                break
            relative = path.relative_to(self.project)
            if any(part.startswith(".") or part in ("venv", ".venv", "node_modules", "site-packages") for part in relative.parts):
                continue
            found.setdefault(str(relative), _read(path))
        return found


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def entry_script(command: list[str], project: Path) -> Path | None:
    for item in command[1:]:
        if item.endswith(".py") and (project / item).is_file():
            return (project / item).resolve()
    return None


def read_program(command: list[str], project: Path) -> ProgramOptions:
    """The options of the program ``command`` runs, by every reader that recognises it."""
    from . import argparse_source, config_file, configurator, hf_arguments, hydra, lightning_cli, source_values  # noqa: F401

    source = ProgramSource(command, project.resolve())
    result = ProgramOptions(script=str(source.script.relative_to(source.project)) if source.script else None)
    seen: set[str] = set()
    for style, read in READERS.items():
        try:
            options = read(source)
        except (SyntaxError, ValueError, OSError, RecursionError):
            options = []
        if options:
            result.styles.append(style)
        for option in options:
            if option.name not in seen:
                seen.add(option.name)
                result.options.append(option)
    return result


# --- setting options in a command ----------------------------------------------------------


def command_value(command: list[str], flag: str) -> str | None:
    """The value ``--flag v`` or ``--flag=v`` gives in ``command`` ('' for a bare flag), else None."""
    for index, item in enumerate(command):
        if item == flag:
            following = command[index + 1] if index + 1 < len(command) else None
            return following if following is not None and not following.startswith("--") else ""
        if item.startswith(flag + "="):
            return item[len(flag) + 1:]
    return None


def set_flag(command: list[str], flag: str, value: str | None, *, equals: bool = False) -> list[str]:
    """``--flag value`` (or ``--flag=value``; a bare ``--flag`` for None) replacing any the command has."""
    result, index = [], 0
    while index < len(command):
        item = command[index]
        if item == flag:
            following = command[index + 1] if index + 1 < len(command) else None
            index += 2 if following is not None and not following.startswith("--") else 1
            continue
        if item.startswith(flag + "="):
            index += 1
            continue
        result.append(item)
        index += 1
    if value is None:
        return result + [flag]
    return result + ([f"{flag}={value}"] if equals else [flag, value])


def set_key(command: list[str], key: str, value: str, *, prefix: str = "") -> list[str]:
    """Hydra/OmegaConf ``key=value`` (``+key=value`` for a key the config lacks), replacing any."""
    pattern = re.compile(rf"^[+~]*{re.escape(key)}=")
    return [item for item in command if not pattern.match(item)] + [f"{prefix}{key}={value}"]


def literal(node: ast.AST | None) -> tuple[ValueType, str | None]:
    """The type and text of a literal default (``16``, ``True``, ``'bfloat16'``); ('str', None) otherwise."""
    if node is None:
        return "str", None
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
        value = _arithmetic(node)
        if value is None:
            return "str", None
    return value_text(value)


def value_text(value: object) -> tuple[ValueType, str | None]:
    """The option type and text of a Python or YAML value; ('str', None) for what is not a scalar."""
    if isinstance(value, bool):
        return "bool", str(value)
    if isinstance(value, int):
        return "int", str(value)
    if isinstance(value, float):
        return "float", repr(value)
    if isinstance(value, str):
        return "str", value
    return "str", None


def _arithmetic(node: ast.AST, depth: int = 0) -> int | float | None:
    """``5 * 8``, ``2**10``, ``64 // 4``: integer arithmetic on literals, as configs write defaults."""
    if depth > 8:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Add, ast.Sub, ast.FloorDiv, ast.Pow)):
        left, right = _arithmetic(node.left, depth + 1), _arithmetic(node.right, depth + 1)
        if left is None or right is None or (isinstance(node.op, ast.Pow) and abs(right) > 64):
            return None
        if isinstance(node.op, ast.FloorDiv) and right == 0:
            return None
        return {ast.Mult: lambda: left * right, ast.Add: lambda: left + right, ast.Sub: lambda: left - right,
                ast.FloorDiv: lambda: left // right, ast.Pow: lambda: left ** right}[type(node.op)]()
    return None
