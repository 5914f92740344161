"""Scratch copies of the user's project and unified diffs applied to them, in Python: a diff may
only touch files inside the project, and nothing in it is ever run."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

from oomtriage.errors import OomtriageError

IGNORED = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".venv", "venv", "node_modules", "oomtriage-reports",
                                 ".pytest_cache", "*.egg-info")
MAX_PROJECT_BYTES = 512 * 1024 * 1024


class PatchError(OomtriageError):
    """A diff does not apply, or reaches outside the project."""


def scratch_copy(project: Path, destination: Path) -> Path:
    shutil.copytree(project, destination, ignore=IGNORED, symlinks=True)
    return destination


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree_digest(root: Path) -> str:
    """A hash of every file's path and bytes under ``root`` (to prove validation left it untouched)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts and "__pycache__" not in p.parts):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _inside(root: Path, relative: str) -> Path:
    if not relative or relative.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", relative) or ".." in Path(relative).parts:
        raise PatchError(f"the patch names {relative!r}, which is not a path inside the project")
    target = (root / relative).resolve()
    if not str(target).startswith(str(root.resolve()) + os.sep):
        raise PatchError(f"the patch reaches outside the project ({relative!r})")
    return target


def apply_unified_diff(root: Path, diff: str) -> list[str]:
    """Apply a unified diff to files under ``root``; returns the files changed. Context must match."""
    files = re.split(r"(?m)^--- ", diff)
    changed = []
    for block in files[1:]:
        header, _, body = block.partition("\n")
        plus = re.match(r"\+\+\+ (\S+)", body)
        if not plus:
            raise PatchError("malformed diff: a '--- ' header without '+++ '")
        name = re.sub(r"^[ab]/", "", plus.group(1))
        target = _inside(root, name)
        original = target.read_text(encoding="utf-8").splitlines(keepends=True) if target.exists() else []
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(_apply_hunks(original, body.split("\n", 1)[1] if "\n" in body else "", name)), encoding="utf-8")
        changed.append(name)
    if not changed:
        raise PatchError("the diff changes no file")
    return changed


def _apply_hunks(lines: list[str], hunks: str, name: str) -> list[str]:
    result, position = [], 0
    for hunk in re.split(r"(?m)^(?=@@ )", hunks):
        if not hunk.startswith("@@"):
            continue
        header = re.match(r"@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@", hunk)
        if not header:
            raise PatchError(f"malformed hunk header in {name}")
        old, new = [], []
        rows = hunk.split("\n")[1:]
        if rows and rows[-1] == "":
            rows = rows[:-1]  # the newline that ends the hunk, not an empty context line
        for row in rows:
            if row.startswith("\\"):
                continue
            if row.startswith((" ", "-")):
                old.append(row[1:])
            if row.startswith((" ", "+")):
                new.append(row[1:])
        start = _find(lines, old, max(position, int(header.group(1)) - 1 - 50), name)
        result += lines[position:start] + [line + "\n" for line in new]
        position = start + len(old)
    return result + lines[position:]


def _find(lines: list[str], old: list[str], hint: int, name: str) -> int:
    stripped = [line.rstrip("\n") for line in lines]
    for start in list(range(max(0, hint), len(stripped) - len(old) + 1)) + list(range(0, max(0, hint))):
        if stripped[start : start + len(old)] == old:
            return start
    raise PatchError(f"the diff does not apply to {name}: its context lines are not in the file")
