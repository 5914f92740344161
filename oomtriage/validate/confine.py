"""Confinement for runs of a model-written patch: where the platform allows it, the repro runs with
no network and with only oomtriage's scratch folder writable (Linux: bubblewrap; else `unshare -n`
for the network alone). The report says which confinement was in place."""

from __future__ import annotations

import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=None)
def _works(*probe: str) -> bool:
    """Whether a confinement tool is installed and allowed here (namespaces may be forbidden)."""
    if not shutil.which(probe[0]) or not sys.platform.startswith("linux"):
        return False
    try:
        return subprocess.run(list(probe), capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def confinement(writable: Path, cwd: Path) -> tuple[list[str] | None, str]:
    """A command prefix that confines a run, and a sentence that says what it does."""
    if _works("bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "--", "true"):
        # The whole file system read-only (the interpreter and oomtriage may live anywhere, /tmp
        # included), the scratch folder writable, and a temporary folder inside it for the run.
        scratch_tmp = writable / ".tmp"
        scratch_tmp.mkdir(exist_ok=True)
        prefix = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                  "--bind", str(writable), str(writable), "--setenv", "TMPDIR", str(scratch_tmp),
                  "--unshare-net", "--die-with-parent", "--chdir", str(cwd), "--"]
        return prefix, "confined with bubblewrap: no network, only the scratch folder writable"
    if _works("unshare", "--net", "--map-root-user", "true"):
        return ["unshare", "--net", "--map-root-user", "--"], "confined with unshare: no network (the file system is not confined)"
    return None, "NOT confined: neither bubblewrap nor unshare works here"
