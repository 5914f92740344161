"""Express option changes in the program's own form: flags on the command line, ``key=value``
overrides, or an edit of a config file or of a literal in the source (a unified diff, applied only
in a scratch copy)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import Option, set_flag, set_key


@dataclass
class Expressed:
    command: list[str]
    edits: dict[str, tuple[str, str]] = field(default_factory=dict)  # file -> (original, changed)
    described: list[str] = field(default_factory=list)

    @property
    def diff(self) -> str | None:
        if not self.edits:
            return None
        return "".join("".join(difflib.unified_diff(original.splitlines(keepends=True), changed.splitlines(keepends=True),
                                                    fromfile=f"a/{name}", tofile=f"b/{name}"))
                       for name, (original, changed) in sorted(self.edits.items()))


def _python_literal(option: Option, value: str) -> str:
    if option.value_type in ("int", "float"):
        return value
    if option.value_type in ("bool", "flag"):
        return "True" if value.lower() in ("true", "1") else "False"
    return repr(value)


def _edit_config_text(text: str, option: Option, value: str, yaml_file: bool) -> str | None:
    leaf = option.name.rsplit(".", 1)[-1]
    if yaml_file:
        pattern = re.compile(rf"(?m)^(\s*{re.escape(leaf)}\s*:[ \t]*)([^#\n]*?)([ \t]*(?:#.*)?)$")
        rendered = value if option.value_type != "bool" else value.lower()
    else:
        pattern = re.compile(rf'("{re.escape(leaf)}"\s*:\s*)("(?:[^"\\]|\\.)*"|[^,}}\s\]]+)()')
        rendered = (value.lower() if option.value_type == "bool" else value if option.value_type in ("int", "float")
                    else f'"{value}"')
    matches = list(pattern.finditer(text))
    if len(matches) != 1:
        return None  # absent, or the same key in several sections: not edited blindly
    match = matches[0]
    return text[:match.start(2)] + rendered + text[match.end(2):]


def express(command: list[str], project: Path, changes: list[tuple[Option, str | None]]) -> Expressed | None:
    """The command and file edits that give each option its value; None when one cannot be expressed."""
    result = Expressed(command=list(command))
    texts: dict[str, str] = {}
    literals: dict[str, dict[tuple[int, int], str]] = {}  # file -> span -> new literal, applied from the end
    for option, value in changes:
        shown = value if value is not None else "on"
        if option.style in ("argparse", "hf_arguments", "lightning_cli"):
            if option.value_type == "flag":
                if (value or "").lower() not in ("true", "1"):
                    return None  # a store_true flag cannot be turned off from the command line
                result.command = set_flag(result.command, option.flag, None)
            elif option.value_type == "bool" and option.style == "hf_arguments":
                result.command = set_flag(result.command, option.flag, "True" if (value or "").lower() in ("true", "1") else "False")
            else:
                result.command = set_flag(result.command, option.flag, value or "")
            result.described.append(f"{option.flag} {shown}")
        elif option.style == "configurator":
            result.command = set_flag(result.command, option.flag, value or "", equals=True)
            result.described.append(f"{option.flag}={shown}")
        elif option.style == "hydra":
            result.command = set_key(result.command, option.name, value or "")
            result.described.append(f"{option.name}={shown}")
        elif option.style in ("config_file", "source") and option.file:
            path = project / option.file
            original = texts.setdefault(option.file, _read(path))
            if original is None:
                return None
            current = result.edits.get(option.file, (original, original))[1]
            if option.style == "source":
                if option.span is None:
                    return None
                literals.setdefault(option.file, {})[tuple(option.span)] = _python_literal(option, value or "")
                changed = original
                for (start, stop), text in sorted(literals[option.file].items(), reverse=True):
                    changed = changed[:start] + text + changed[stop:]
            else:
                changed = _edit_config_text(current, option, value or "", yaml_file=not option.file.endswith(".json"))
                if changed is None:
                    return None
            result.edits[option.file] = (original, changed)
            result.described.append(f"{option.name} = {shown} in {option.file}")
        else:
            return None
    return result


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
