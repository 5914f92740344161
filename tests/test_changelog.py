"""The changelog keeps everything of the user's: line endings, mode, symlink, blank lines, bytes
that are not UTF-8, an `## Unreleased` heading without brackets; a read-only file is refused in one
line; no lock file is left."""

from __future__ import annotations

import os
import stat

import pytest

from oomtriage.validate.changelog import ChangelogError, append_entry

BASE = "# Changelog\n\n## [Unreleased]\n\n### Added\n\n- a feature\n\n\n## [1.0.0] - 2026-01-01\n\n- first\n"


def _only_added(before: str, after: str, entry: str) -> bool:
    """``after`` is ``before`` with characters inserted (the entry and at most a few newlines/headings)."""
    iterator = iter(after)
    return all(char in iterator for char in before) and entry in after


def test_bytes_outside_the_entry_stay(tmp_path):
    path = tmp_path / "CHANGELOG.md"
    path.write_text(BASE)
    append_entry(path, "- the fix")
    after = path.read_text()
    assert _only_added(BASE, after, "- the fix") and "\n\n\n## [1.0.0]" in after
    assert after.index("- the fix") < after.index("## [1.0.0]")
    assert sorted(os.listdir(tmp_path)) == ["CHANGELOG.md"]


def test_crlf_mode_and_symlink_are_kept(tmp_path):
    real = tmp_path / "docs" / "CHANGES.md"
    real.parent.mkdir()
    real.write_bytes(BASE.replace("\n", "\r\n").encode())
    os.chmod(real, 0o600)
    link = tmp_path / "CHANGELOG.md"
    link.symlink_to(real)
    append_entry(link, "- the fix")
    assert link.is_symlink() and os.readlink(link) == str(real)
    data = real.read_bytes()
    assert b"- the fix\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o600


def test_non_utf8_bytes_survive(tmp_path):
    path = tmp_path / "CHANGELOG.md"
    path.write_bytes(BASE.encode() + b"- caf\xe9 in latin-1\n")
    append_entry(path, "- the fix")
    assert b"- caf\xe9 in latin-1\n" in path.read_bytes()


def test_unreleased_without_brackets_gets_no_second_section(tmp_path):
    path = tmp_path / "CHANGELOG.md"
    path.write_text("# Changelog\n\n## Unreleased\n\n- pending\n\n## 1.0\n")
    append_entry(path, "- the fix")
    text = path.read_text()
    assert text.count("Unreleased") == 1 and text.index("- the fix") < text.index("## 1.0")


def test_read_only_file_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "CHANGELOG.md"
    path.write_text(BASE)
    os.chmod(path, 0o444)
    with pytest.raises(ChangelogError, match="read-only"):
        append_entry(path, "- the fix")
    assert path.read_text() == BASE and stat.S_IMODE(os.stat(path).st_mode) == 0o444
