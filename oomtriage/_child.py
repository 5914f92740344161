"""``python -m oomtriage._child [-m MODULE | SCRIPT] ARGS...``: run a Python program the way
``python`` would, with the OOM hook installed and, when asked through the environment, a simulated
GPU, ``--max-steps`` and a peak-memory measurement. ``oomtriage run`` starts this; users don't.

Environment: OOMTRIAGE_SIMULATE_GPU (bytes), OOMTRIAGE_MAX_STEPS, OOMTRIAGE_MEASURE_FILE,
OOMTRIAGE_FINGERPRINT=1, OOMTRIAGE_FAKE=1, OOMTRIAGE_STOCHASTIC_OFF=1, OOMTRIAGE_CPU_VISIBLE=1,
OOMTRIAGE_SNAPSHOT_FILE (write the memory history there, in PyTorch's snapshot format),
OOMTRIAGE_REPORT_DIR, OOMTRIAGE_NOTE.
"""

from __future__ import annotations

import os
import runpy
import sys
from types import TracebackType


def _int_env(name: str) -> int | None:
    value = os.environ.get(name, "").strip()
    return int(value) if value.isdigit() else None


_OWN_FRAMES = (os.path.abspath(__file__), runpy.__file__, "<frozen runpy>")
# Frames of the simulated device (and torch's dispatch wrappers just above it) end a simulated
# OOM's traceback; on a real GPU the traceback ends at the op, so they are trimmed to match.
_SIMULATOR_TAIL = (os.sep + os.path.join("oomtriage", "simulate") + os.sep, os.path.join("torch", "_compile.py"),
                   os.path.join("torch", "_dynamo", "eval_frame.py"))


def _user_traceback(tb: TracebackType | None) -> TracebackType | None:
    """The traceback python itself would have printed for the user's program."""
    while tb is not None and (os.path.abspath(tb.tb_frame.f_code.co_filename) in _OWN_FRAMES
                              or tb.tb_frame.f_code.co_filename in _OWN_FRAMES):
        tb = tb.tb_next
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    simulated = [i for i, entry in enumerate(entries) if _SIMULATOR_TAIL[0] in entry.tb_frame.f_code.co_filename]
    if simulated:
        cut = simulated[0]
        while cut > 0 and entries[cut - 1].tb_frame.f_code.co_filename.endswith(_SIMULATOR_TAIL[1:]):
            cut -= 1
        if cut > 0:
            entries[cut - 1].tb_next = None
    return entries[0] if entries else None


def setup_from_env() -> None:
    """Install the hook and, when the environment asks for it, the simulated GPU and measurement."""
    from oomtriage import hook

    hook.install()
    capacity = _int_env("OOMTRIAGE_SIMULATE_GPU")
    max_steps = _int_env("OOMTRIAGE_MAX_STEPS")
    measure_file = os.environ.get("OOMTRIAGE_MEASURE_FILE") or None
    fake = os.environ.get("OOMTRIAGE_FAKE") == "1"
    snapshot_file = os.environ.get("OOMTRIAGE_SNAPSHOT_FILE") or None
    if capacity or max_steps or measure_file or fake or snapshot_file:
        try:
            from oomtriage import runtime

            runtime.start(capacity=capacity, simulate=capacity is not None, max_steps=max_steps,
                          measure_file=measure_file, fingerprint=os.environ.get("OOMTRIAGE_FINGERPRINT") == "1", fake=fake,
                          stochastic_off=os.environ.get("OOMTRIAGE_STOCHASTIC_OFF") == "1",
                          cpu_visible=os.environ.get("OOMTRIAGE_CPU_VISIBLE") == "1", snapshot_file=snapshot_file)
        except Exception as error:  # the user's program still runs, unmeasured
            sys.stderr.write(f"oomtriage: could not set up measurement ({type(error).__name__}: {error}); running without it\n")


def main(argv: list[str]) -> int:
    if not argv:
        sys.stderr.write("usage: python -m oomtriage._child [-m MODULE | SCRIPT] ARGS...\n")
        return 2
    setup_from_env()
    try:
        if argv[0] == "-m":
            sys.argv = argv[1:]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(argv)
            sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit:
        raise
    except BaseException as error:  # noqa: BLE001 - reported exactly as python would report it
        if "oomtriage.runtime" in sys.modules:
            sys.modules["oomtriage.runtime"].STATE["exit"] = "error"
        trimmed = _user_traceback(error.__traceback__)
        # Python 3.11+ prints the exception's own __traceback__, whatever traceback it is handed.
        sys.excepthook(type(error), error.with_traceback(trimmed), trimmed)
        return 130 if isinstance(error, KeyboardInterrupt) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
