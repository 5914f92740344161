"""Append accepted fixes to the user's CHANGELOG.md (Keep a Changelog), under ``## [Unreleased]``.
Appends hold an exclusive lock on the file, so concurrent ranks never interleave, and only add
characters: entries go at the end of the Unreleased section, everything else stays byte for byte."""

from __future__ import annotations

import fcntl
import os
import re
from pathlib import Path

from oomtriage.errors import OomtriageError

HEADER = ("# Changelog\n\nAll notable changes to this project are documented in this file.\n"
          "The format is based on [Keep a Changelog](https://keepachangelog.com/en/1.1.0/).\n\n")


class ChangelogError(OomtriageError):
    """The changelog cannot be written (read-only, a folder, unreadable)."""


_UNRELEASED = re.compile(r"(?im)^## \[?Unreleased\]?[^\n]*\n")


def _after_last_content(text: str, start: int, end: int) -> int:
    """The position just after the last non-blank line in ``text[start:end]`` (``start`` if none)."""
    position = start
    for match in re.finditer(r"[^\n]*\n|[^\n]+$", text[start:end]):
        if match.group(0).strip():
            position = start + match.end()
    return position


def insert_entry(text: str, entry: str) -> str:
    """``entry`` (Markdown lines) at the end of ``## [Unreleased]`` / ``### Fixed``, creating them.
    Only characters are added: every byte of the file outside the new entry stays where it was."""
    entry = entry.rstrip("\n") + "\n"
    if not text.strip():
        return HEADER + "## [Unreleased]\n\n### Fixed\n\n" + entry
    if text and not text.endswith("\n"):
        text += "\n"
    unreleased = _UNRELEASED.search(text)
    if unreleased is None:
        first_release = re.search(r"(?m)^## ", text)
        at = first_release.start() if first_release else len(text)
        block = "## [Unreleased]\n\n### Fixed\n\n" + entry + "\n"
        lead = "" if at == 0 or text[:at].endswith("\n\n") else "\n"
        return text[:at] + lead + block + text[at:]
    section_end_match = re.search(r"(?m)^## ", text[unreleased.end():])
    section_end = unreleased.end() + section_end_match.start() if section_end_match else len(text)
    fixed = re.compile(r"(?m)^### Fixed[^\n]*\n").search(text, unreleased.end(), section_end)
    if fixed is None:
        at = _after_last_content(text, unreleased.end(), section_end)
        block = ("\n" if at > unreleased.end() else "") + "### Fixed\n\n" + entry
        tail = "" if text[at:section_end].startswith("\n") or at == len(text) else "\n"
        return text[:at] + block + tail + text[at:]
    next_heading = re.compile(r"(?m)^### ").search(text, fixed.end(), section_end)
    block_end = next_heading.start() if next_heading else section_end
    at = _after_last_content(text, fixed.end(), block_end)
    if at == fixed.end():  # an empty Fixed block: a blank line after its heading, one before what follows
        lead = ""
        if text[at:at + 1] == "\n":
            at += 1
        else:
            lead = "\n"
        tail = "\n" if text[at:at + 1] not in ("\n", "") else ""
        return text[:at] + lead + entry + tail + text[at:]
    return text[:at] + entry + text[at:]


def append_entry(path: str | Path, entry: str) -> None:
    """Add ``entry`` to the changelog in place, under an exclusive lock on the file itself: the
    file keeps its inode, mode and symlink, its line endings and its bytes (a non-UTF-8 file too),
    and no lock file is left behind. A file that cannot be written is refused in one line."""
    path = Path(path)
    target = path.resolve() if path.is_symlink() else path
    # A file without write bits is read-only by the user's choice, even to root (who could write it).
    if target.is_file() and (not os.access(target, os.W_OK) or not os.stat(target).st_mode & 0o222):
        raise ChangelogError(f"{path}: the changelog is read-only; the entry was not written")
    if target.is_dir():
        raise ChangelogError(f"{path}: is a folder, not a changelog file")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(target, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise ChangelogError(f"{path}: cannot write the changelog ({error.strerror})") from None
    with os.fdopen(descriptor, "r+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            raw = handle.read()
            text = raw.decode("utf-8", errors="surrogateescape")
            crlf = "\r\n" in text and text.count("\r\n") * 2 >= text.count("\n")
            updated = insert_entry(text.replace("\r\n", "\n") if crlf else text, entry)
            if crlf:
                updated = updated.replace("\n", "\r\n")
            data = updated.encode("utf-8", errors="surrogateescape")
            handle.seek(0)
            handle.write(data)
            handle.truncate()
            handle.flush()
            os.fsync(handle.fileno())
        except OSError as error:
            raise ChangelogError(f"{path}: cannot write the changelog ({error.strerror})") from None
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
