"""Headless Chromium with the network off: load an HTML file, wait for its scripts, and return the
DOM they built, the console messages and a screenshot. Debian's ``chromium`` (``.ci/run`` installs it)."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

# Every host resolves to nothing and every request goes to a closed proxy: a page that needs the
# network fails to load what it asked for, and says so on the console.
NETWORK_OFF = ["--proxy-server=http://127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND"]
BASE = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
        "--disable-background-networking", "--virtual-time-budget=8000", *NETWORK_OFF]


@dataclass
class Loaded:
    dom: str
    console: list[str]
    errors: list[str]
    screenshot: Path

    def count(self, pattern: str) -> int:
        return len(re.findall(pattern, self.dom))


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("chromium is not installed (apt-get install chromium; .ci/run does)")
    return found


def load(page: Path, screenshot: Path, *, height: int = 2400) -> Loaded:
    browser = chromium()
    url = page.resolve().as_uri()
    dumped = subprocess.run([browser, *BASE, "--enable-logging=stderr", "--v=0", "--dump-dom", url],
                            capture_output=True, timeout=120)
    log = dumped.stderr.decode(errors="replace")
    console = [line for line in log.splitlines() if "CONSOLE" in line]
    errors = [line for line in console if re.search(r"error|uncaught|refused|failed", line, re.IGNORECASE)]
    errors += [line for line in log.splitlines() if "net::ERR" in line]
    subprocess.run([browser, *BASE, "--hide-scrollbars", f"--window-size=1280,{height}", f"--screenshot={screenshot}", url],
                   capture_output=True, timeout=120)
    return Loaded(dom=dumped.stdout.decode(errors="replace"), console=console, errors=errors, screenshot=screenshot)
