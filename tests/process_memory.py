"""A crawl subprocess run to its end while its peak memory is read from /proc (Linux)."""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class MeasuredRun:
    """How a process ended, how long it took and its peak resident memory."""

    returncode: int
    seconds: float
    peak_mb: float  # the process itself: its VmHWM
    peak_with_children_mb: float  # the highest sum of its and its descendants' resident memory seen


def _status_kb(pid: int, field: str) -> int:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:  # the process is gone
        return 0
    for line in text.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _descendants(pid: int) -> list[int]:
    found: list[int] = []
    pending = [pid]
    while pending:
        parent = pending.pop()
        try:
            tasks = list(Path(f"/proc/{parent}/task").iterdir())
        except OSError:  # the process ended since it was listed (the crawl itself, at its end)
            continue
        for task in tasks:
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            found += children
            pending += children
    return found


def run_measured(args: list[str], cwd: Path, stderr_path: Path, timeout: float) -> MeasuredRun:
    """Run ``args`` to the end (killed after ``timeout`` s), sampling memory every 0.1 s."""
    started = time.monotonic()
    peak = peak_total = 0
    with stderr_path.open("w") as err:
        process = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        try:
            while process.poll() is None:
                if time.monotonic() - started > timeout:
                    raise AssertionError(f"the crawl did not end within {timeout} s")
                # VmHWM is the kernel's own high-water mark: a peak between samples is not missed.
                peak = max(peak, _status_kb(process.pid, "VmHWM"))
                total = sum(_status_kb(p, "VmRSS") for p in [process.pid, *_descendants(process.pid)])
                peak_total = max(peak_total, total)
                time.sleep(0.1)
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()
    return MeasuredRun(process.returncode, time.monotonic() - started, peak / 1024, peak_total / 1024)
