"""Write a synthetic training log of a given size with one OOM near the middle (for benchmarks)."""

from __future__ import annotations

import random
import sys

OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
    "79.10 GiB of which 3.06 MiB is free. Including non-PyTorch memory, this process has 79.09 GiB memory in use. "
    "Of the allocated memory 77.20 GiB is allocated by PyTorch, and 1.23 GiB is reserved by PyTorch but unallocated."
)


def write_log(path: str, megabytes: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    words = "epoch step loss lr grad norm tokens per second throughput warmup scheduler iteration train val".split()
    block = "".join(
        f"2026-01-01 12:00:{i % 60:02d} INFO step {i} {' '.join(rng.choice(words) for _ in range(10))} loss={rng.random():.4f}\n"
        for i in range(10_000)
    ).encode()
    target = megabytes * 1024 * 1024
    with open(path, "wb") as handle:
        written = 0
        while written < target:
            handle.write(block)
            written += len(block)
            if written >= target // 2 and written - len(block) < target // 2:
                handle.write(b"Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    loss.backward()\n")
                handle.write(OOM.encode() + b"\n")


if __name__ == "__main__":
    write_log(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 100)
