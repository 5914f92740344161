"""Scratch copies of the user's project and unified diffs applied to them, in Python: a diff may
only touch files inside the project, and nothing in it is ever run."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
from pathlib import Path

from oomtriage.errors import OomtriageError

IGNORED_PATTERNS = (".git", "__pycache__", "*.pyc", ".venv", "venv", "node_modules", "oomtriage-reports",
                    ".pytest_cache", "*.egg-info", "oomtriage-validate-*", "oomtriage-run-*")
IGNORED = shutil.ignore_patterns(*IGNORED_PATTERNS)
MAX_PROJECT_BYTES = 512 * 1024 * 1024
HASH_CHUNK = 1024 * 1024


class PatchError(OomtriageError):
    """A diff does not apply, or reaches outside the project."""


class ProjectError(OomtriageError):
    """The project cannot be copied for validation (too large, or it holds the scratch folder)."""


def _ignored(folder: str, names: list[str]) -> set[str]:
    """What a scratch copy leaves out: tool folders, oomtriage's own scratch, and anything that is not
    a regular file, a folder or a link (a FIFO would block the copy, a socket cannot be copied)."""
    skipped = set(IGNORED(folder, names))
    for name in names:
        if name in skipped:
            continue
        path = os.path.join(folder, name)
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            skipped.add(name)
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)) or \
                (stat.S_ISREG(mode) and not os.access(path, os.R_OK)):
            skipped.add(name)
    return skipped


def project_files(root: Path):
    """The regular files a scratch copy takes, walked without following links."""
    for folder, dirs, files in os.walk(root):
        skipped = _ignored(folder, [*dirs, *files])
        dirs[:] = sorted(name for name in dirs if name not in skipped)
        for name in sorted(files):
            if name not in skipped and not os.path.islink(os.path.join(folder, name)):
                yield Path(folder, name)


def special_files(root: Path) -> list[str]:
    """Entries a scratch copy skips because they are not regular files (or cannot be read)."""
    found = []
    for folder, dirs, files in os.walk(root):
        tool = set(IGNORED(folder, [*dirs, *files]))
        dirs[:] = [name for name in dirs if name not in tool]
        for name in files:
            if name not in tool and name in _ignored(folder, [name]):
                found.append(str(Path(folder, name).relative_to(root)))
    return found


def check_project(project: Path, scratch_root: Path) -> None:
    """Refuse what cannot be copied honestly: a project that holds the scratch folder, or one over the cap."""
    project, scratch_root = project.resolve(), scratch_root.resolve()
    if scratch_root == project or scratch_root.is_relative_to(project):
        raise ProjectError(f"the project folder {project} holds the scratch folder ({scratch_root}): run validate from "
                           "the script's own folder, or pass --project")
    total = 0
    for path in project_files(project):
        try:
            total += path.stat().st_size
        except OSError:
            continue
        if total > MAX_PROJECT_BYTES:
            raise ProjectError(f"the project folder {project} holds more than {MAX_PROJECT_BYTES // 2**20} MiB of files; "
                               "each fix gets its own copy, so point --project at the script's own folder")


def scratch_copy(project: Path, destination: Path) -> Path:
    shutil.copytree(project, destination, ignore=_ignored, symlinks=True)
    return destination


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(HASH_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def tree_digest(root: Path) -> str:
    """A hash of every file's path and bytes under ``root`` (to prove validation left it untouched),
    read in chunks."""
    digest = hashlib.sha256()
    for path in project_files(root):
        digest.update(str(path.relative_to(root)).encode())
        try:
            digest.update(file_hash(path).encode())
        except OSError:
            digest.update(b"<unreadable>")
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
