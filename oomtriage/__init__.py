"""oomtriage: turn a GPU out-of-memory failure into a ranked, evidence-backed diagnosis.

Importing this package is cheap on purpose: torch, openai, jinja2 and rich are imported only by
the functions that need them, so ``import oomtriage; oomtriage.install()`` costs milliseconds.
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
