"""oomtriage: turn a GPU out-of-memory failure into a ranked, evidence-backed diagnosis.

Importing this package is cheap on purpose: torch, openai, jinja2 and rich are imported only by
the functions that need them, so ``import oomtriage; oomtriage.install()`` costs milliseconds.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "install", "load_ipython_extension"]


def install(report_dir: Any = None) -> bool:
    """Triage any OOM that escapes the program (see ``oomtriage.hook``)."""
    from .hook import install as install_hook

    return install_hook(report_dir)


def load_ipython_extension(ipython: Any) -> None:
    from .hook import load_ipython_extension as load

    load(ipython)
