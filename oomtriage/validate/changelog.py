"""Append accepted fixes to the user's CHANGELOG.md (Keep a Changelog), under ``## [Unreleased]``.
Appends hold an exclusive lock and replace the file whole, so concurrent ranks never interleave and
an existing changelog is never corrupted or reordered: entries go at the end of the Unreleased
section, everything else stays byte for byte."""

from __future__ import annotations

import fcntl
import os
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

HEADER = ("# Changelog\n\nAll notable changes to this project are documented in this file.\n"
          "The format is based on [Keep a Changelog](https://keepachangelog.com/en/1.1.0/).\n\n")


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    lock_path = path.with_name(path.name + ".lock")
    with open(lock_path, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def insert_entry(text: str, entry: str) -> str:
    """``entry`` (Markdown lines) at the end of ``## [Unreleased]`` / ``### Fixed``, creating them."""
    entry = entry.rstrip("\n") + "\n"
    if not text.strip():
        text = HEADER
    unreleased = re.search(r"(?im)^## \[Unreleased\][^\n]*\n", text)
    if unreleased is None:
        first_release = re.search(r"(?m)^## ", text)
        at = first_release.start() if first_release else len(text)
        prefix = text[:at] if text[:at].endswith("\n\n") or not text[:at] else text[:at].rstrip("\n") + "\n\n"
        text = prefix + "## [Unreleased]\n\n" + text[at:]
        unreleased = re.search(r"(?im)^## \[Unreleased\][^\n]*\n", text)
    section_end_match = re.search(r"(?m)^## ", text[unreleased.end():])
    section_end = unreleased.end() + section_end_match.start() if section_end_match else len(text)
    section = text[unreleased.end():section_end]
    fixed = re.search(r"(?m)^### Fixed[^\n]*\n", section)
    if fixed is None:
        body = section.rstrip("\n")
        section = (body + "\n\n" if body.strip() else "\n") + "### Fixed\n\n" + entry + "\n"
    else:
        next_heading = re.search(r"(?m)^### ", section[fixed.end():])
        end = fixed.end() + next_heading.start() if next_heading else len(section)
        block = section[fixed.end():end].rstrip("\n")
        section = section[:fixed.end()] + (block + "\n" if block.strip() else "\n") + entry + "\n" + section[end:].lstrip("\n")
    return text[:unreleased.end()] + section + text[section_end:]


def append_entry(path: str | Path, entry: str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_text(insert_entry(current, entry), encoding="utf-8")
        os.replace(temporary, path)
