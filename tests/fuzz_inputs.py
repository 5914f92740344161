"""Generators of malformed inputs of every kind oomtriage reads (logs, memory_stats JSON, chrome
traces, saved contexts, snapshot pickles), from fixed seeds. Used by tests/test_fuzz.py (a few
hundred cases, in CI) and bench/fuzz.py (thousands, with time and memory figures)."""

from __future__ import annotations

import json
import pickle
import random
from pathlib import Path

LOGS = Path(__file__).resolve().parent / "fixtures" / "logs"
ODD_VALUES = [None, "abc", "", -1, 0, 1.5, float("nan"), float("inf"), 10**40, True, [], {}, [1, "x"], {"a": None}, "9" * 5000]


def _odd(rng: random.Random):
    return rng.choice(ODD_VALUES)


def mutate_log(rng: random.Random, text: str) -> bytes:
    data = bytearray(text.encode())
    for _ in range(rng.randint(1, 6)):
        choice = rng.randrange(9)
        position = rng.randrange(len(data) + 1)
        if choice == 0 and data:  # flip bytes
            for _ in range(rng.randint(1, 20)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        elif choice == 1:  # truncate
            del data[position:]
        elif choice == 2:  # a long digit run inside a size
            data[position:position] = ("9" * rng.randint(20, 5000)).encode()
        elif choice == 3:  # repeat a slice many times
            piece = bytes(data[position:position + rng.randint(1, 200)]) or b"out of memory "
            data[position:position] = piece * rng.randint(2, 300)
        elif choice == 4:  # odd unicode and control characters
            data[position:position] = rng.choice(["\u202e", "\x00", "\r", "\x1b[31m", "é", "\ufffd", "\t" * 50]).encode()
        elif choice == 5:  # huge numbers where numbers go
            data[position:position] = rng.choice([b"Tried to allocate ", b"(GPU ", b"line ", b"[rank"]) + b"7" * rng.randint(10, 400)
        elif choice == 6:  # a long run of one letter before a phrase
            data[position:position] = b"a" * rng.randint(100, 20000) + b" CUDA out of memory"
        elif choice == 7:
            data[position:position] = b"shape[" + b",".join(str(rng.randint(0, 10**20)).encode() for _ in range(rng.randint(1, 30))) + b"]"
        else:  # duplicate the whole thing
            data += bytes(data)[: 50_000]
    return bytes(data)


def memory_stats(rng: random.Random) -> str:
    stats: dict = {"allocated_bytes.all.current": 2**30, "reserved_bytes.all.current": 2**31, "num_alloc_retries": 3, "num_ooms": 1}
    for key in list(stats):
        if rng.random() < 0.5:
            stats[key] = _odd(rng)
    if rng.random() < 0.3:
        stats["allocated_bytes.all.peak"] = "NaN"
    text = json.dumps(stats, allow_nan=True)
    if rng.random() < 0.3:
        text = text.replace("1073741824", "1" * rng.randint(30, 5000))
    return text


def chrome_trace(rng: random.Random) -> str:
    events = []
    for _ in range(rng.randint(0, 30)):
        event = {"name": rng.choice(["[memory]", "[OutOfMemory]", "aten::mm", 5, None]), "ph": "i"}
        args = rng.choice([{"Total Allocated": rng.choice([10**9, _odd(rng)]), "Total Reserved": _odd(rng),
                            "Device Type": rng.choice([1, 0, "x", None])}, [1, 2], "args", None, _odd(rng)])
        event["args"] = args
        events.append(rng.choice([event, _odd(rng)]))
    return json.dumps({"traceEvents": events}, allow_nan=True)


def saved_context(rng: random.Random) -> str:
    context: dict = {"schema_version": 1, "environment": {"gpu_name": "A100"}, "note": "fails in eval",
                     "error": {"format": "pytorch_sentence", "raw_message": "CUDA out of memory", "requested_bytes": 2**20}}
    for _ in range(rng.randint(1, 4)):
        target = rng.choice([context, context["environment"], context["error"]])
        target[rng.choice(["requested_bytes", "gpu_name", "note", "stack", "extra_key", "framework", "processes"])] = _odd(rng)
    return json.dumps(context, allow_nan=True)


def deep_json(rng: random.Random) -> str:
    depth = rng.randint(500, 5000)
    return "[" * depth + "]" * depth


def snapshot(rng: random.Random) -> bytes:
    def block():
        return rng.choice([{"size": rng.choice([512, _odd(rng)]), "state": rng.choice(["active_allocated", "inactive", None]),
                            "frames": rng.choice([[{"filename": "train.py", "line": 3, "name": "f"}], _odd(rng), [_odd(rng)]])},
                           _odd(rng)])
    segment = {"total_size": rng.choice([2**21, _odd(rng)]), "active_size": _odd(rng), "is_expandable": _odd(rng),
               "blocks": rng.choice([[block() for _ in range(rng.randint(0, 20))], _odd(rng)])}
    snap = {"segments": rng.choice([[segment, _odd(rng)], [segment] * rng.randint(1, 50), _odd(rng)]),
            "device_traces": rng.choice([[[{"action": "oom", "size": _odd(rng), "device_free": _odd(rng)}]], _odd(rng), [_odd(rng)]]),
            "allocator_settings": _odd(rng)}
    data = pickle.dumps(snap, protocol=rng.choice([2, 4, 5]))
    if rng.random() < 0.3:  # corrupt or truncate
        cut = bytearray(data[: rng.randrange(1, len(data) + 1)])
        if cut and rng.random() < 0.5:
            cut[rng.randrange(len(cut))] = rng.randrange(256)
        data = bytes(cut)
    return data


def run_case(path: Path) -> str:
    """One input through the real entry point and every renderer: "report", or "error" for
    oomtriage's one-line error. Anything else is raised: that is a crash."""
    from oomtriage.api import analyze_inputs
    from oomtriage.errors import OomtriageError
    from oomtriage.render import RENDERERS, to_text

    try:
        report = analyze_inputs([path])
    except OomtriageError as error:
        if "\n" in str(error):
            raise AssertionError(f"{path.name}: a multi-line error") from None
        return "error"
    to_text(report, color=False)
    for render in RENDERERS.values():
        render(report)
    return "report"


def cases(seed: int, count: int):
    """(kind, file name, bytes) for ``count`` inputs of every kind, reproducibly."""
    rng = random.Random(seed)
    logs = sorted(LOGS.glob("*.log"))
    for index in range(count):
        kind = rng.choice(["log", "log", "log", "stats", "trace", "context", "deep", "snapshot"])
        if kind == "log":
            yield kind, f"case{index}.log", mutate_log(rng, rng.choice(logs).read_text(errors="replace"))
        elif kind == "stats":
            yield kind, f"case{index}.json", memory_stats(rng).encode()
        elif kind == "trace":
            yield kind, f"case{index}.json", chrome_trace(rng).encode()
        elif kind == "context":
            yield kind, f"case{index}.json", saved_context(rng).encode()
        elif kind == "deep":
            yield kind, f"case{index}.json", deep_json(rng).encode()
        else:
            yield kind, f"case{index}.pickle", snapshot(rng)
