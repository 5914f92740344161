"""What a model wrote is screened before anything of it can run. A model's diff is refused when a
line it adds reaches beyond computing on tensors: processes, the network, the file system outside
the project, native code, or dynamic code. A model's environment variables are limited to the
allocator and framework settings that OOM fixes use. The screen is conservative on purpose: a
refusal costs a fix, a miss could cost the user's machine."""

from __future__ import annotations

import re

# (what it is, pattern over one added line)
_REFUSED: list[tuple[str, str]] = [
    ("starts a process", r"\bsubprocess\b|\bos\.(?:system|popen|exec\w*|spawn\w*|fork\w*|kill\w*|posix_spawn\w*)\b|\bpty\b|"
                         r"\bmultiprocessing\b|\bcommands\.|\bPopen\b"),
    ("uses the network", r"\bsocket\b|\burllib\b|\brequests\b|\bhttpx\b|\bhttp\.client\b|\baiohttp\b|\bftplib\b|\bsmtplib\b|"
                         r"\bparamiko\b|\bwebbrowser\b|\bxmlrpc\b|\btelnetlib\b"),
    ("changes the file system", r"\bshutil\b|\bos\.(?:remove|unlink|rmdir|removedirs|rename|replace|makedirs|mkdir|chmod|chown|"
                                r"symlink|link|truncate|utime)\b|\.(?:unlink|rmdir|rename|replace|chmod|symlink_to|hardlink_to|"
                                r"write_text|write_bytes|touch|mkdir)\(|\btempfile\b"),
    ("runs dynamic code", r"\beval\s*\(|\bexec\s*\(|\bcompile\s*\(|__import__|\bimportlib\b|\bctypes\b|\bcffi\b|"
                          r"\bgetattr\s*\(\s*(?:os|sys|builtins|__builtins__)\b|\bbuiltins\b|\bsys\.modules\b|\bpickle\b|\bmarshal\b"),
    ("reads the environment's secrets", r"\bos\.environ\b|\bgetenv\b|\.netrc\b|\.ssh\b|\.aws\b"),
]
_OPEN_FOR_WRITING = re.compile(r"\bopen\s*\((?P<args>[^)]*)\)")
_WRITE_MODE = re.compile(r"""['"][rbt]*[wax+][rbt+]*['"]|mode\s*=\s*['"][^'"]*[wax+]""")
_RELATIVE_LITERAL = re.compile(r"""^\s*(?:f?r?['"](?![/~\\])(?![A-Za-z]:)(?!.*\.\.)[^'"]*['"])""")

# Environment variables a model may set for a fix: allocator and framework memory settings only
# (never a loader or interpreter variable such as LD_PRELOAD or PYTHONPATH).
ALLOWED_ENV = re.compile(r"^(?:PYTORCH_(?:CUDA|HIP)_ALLOC_CONF|PYTORCH_NO_CUDA_MEMORY_CACHING|PYTORCH_MPS_HIGH_WATERMARK_RATIO|"
                         r"PYTORCH_MPS_LOW_WATERMARK_RATIO|XLA_PYTHON_CLIENT_(?:PREALLOCATE|MEM_FRACTION|ALLOCATOR)|"
                         r"TF_FORCE_GPU_ALLOW_GROWTH|TF_GPU_ALLOCATOR|CUBLAS_WORKSPACE_CONFIG|CUDNN_\w+|OMP_NUM_THREADS|"
                         r"TOKENIZERS_PARALLELISM|CUDA_LAUNCH_BLOCKING)$")


def added_lines(diff: str) -> list[str]:
    return [line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]


def screen_diff(diff: str) -> list[str]:
    """Why a model's diff may not run (empty: it passed the screen)."""
    reasons: list[str] = []
    for line in added_lines(diff):
        code = line.split("#", 1)[0]
        for what, pattern in _REFUSED:
            if re.search(pattern, code):
                reasons.append(f"it {what}: `{line.strip()[:80]}`")
                break
        else:
            for call in _OPEN_FOR_WRITING.finditer(code):
                args = call.group("args")
                if _WRITE_MODE.search(args) and not _RELATIVE_LITERAL.match(args):
                    reasons.append(f"it writes a file that may lie outside the project: `{line.strip()[:80]}`")
    return reasons


def screen_env(env: dict[str, str]) -> list[str]:
    return [f"it sets {name}, which is not an allocator or framework memory setting" for name in env if not ALLOWED_ENV.match(name)]
