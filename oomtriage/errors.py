"""One exception tree. The CLI turns any of these into one line and exit code 2."""

from __future__ import annotations


class OomtriageError(Exception):
    """Base class: ``str(error)`` is a one-line message that says what to do next."""


class InputError(OomtriageError):
    """The input cannot be analysed (missing, empty, binary, unreadable)."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path


class SnapshotError(InputError):
    """A memory snapshot pickle is malformed or holds something other than plain data."""


class LLMError(OomtriageError):
    """The LLM endpoint failed or answered with something unusable."""

    def __init__(self, message: str, *, reason: str = "error") -> None:
        super().__init__(message)
        self.reason = reason


class ConfigError(OomtriageError):
    """A flag, environment variable or config file is inconsistent."""
