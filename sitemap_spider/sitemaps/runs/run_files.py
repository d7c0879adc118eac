"""Sorted run files: writing a sorted run, reading it back a block at a time, merging runs.

The pieces of the external sort (sorting.py) that work on run files and blocks of lines, in
any process: ``scrapy publish`` workers sort their chunks into runs with ``sort_into_run``.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from sitemap_spider.sitemaps.runs.latest import later

logger = logging.getLogger(__name__)

# Lines joined into one write when a run is written.
_WRITE_BLOCK_LINES = 16 * 1024


def write_run(lines: Iterable[str], work_dir: Path, prefix: str = "") -> Path:
    """A new run file in ``work_dir`` of ``lines`` (sorted by the caller), each written after ``prefix``."""
    fd, name = tempfile.mkstemp(prefix="sort-run-", suffix=".tsv", dir=work_dir)
    # surrogateescape: a run file must hold whatever str it is given, checked or not.
    with open(fd, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as out:
        # Joined in C, a block at a time (lines may be a merge that does not fit in memory):
        # a Python step per line costs as much as the sort. The prefix goes in with the
        # separators, not into a new string per line.
        separator = "\n" + prefix
        remaining = iter(lines)
        while block := list(itertools.islice(remaining, _WRITE_BLOCK_LINES)):
            out.write(prefix)
            out.write(separator.join(block))
            out.write("\n")
    logger.debug("Wrote sort run %s", name)
    return Path(name)


def sort_into_run(lines: list[str], work_dir: Path, *, unique: bool = True) -> tuple[Path, int]:
    """Sort ``lines`` in place into a new run file in ``work_dir``: (its path, duplicates left out).

    With ``unique``, of lines with the same key (up to the first tab) only one is kept: of run
    lines of entries, the one with the latest lastmod (latest.py).
    """
    lines.sort()
    if not unique:
        return write_run(lines, work_dir), 0
    kept: list[str] = []
    previous = None
    for line in lines:
        tab = line.find("\t")
        key = line if tab < 0 else line[:tab]
        if key != previous:
            kept.append(line)
            previous = key
        elif later(line, kept[-1]):
            kept[-1] = line
    return write_run(kept, work_dir), len(lines) - len(kept)


def read_blocks(path: Path, size: int) -> Iterator[list[str]]:
    """The lines of a run file (without newlines), a list of about ``size`` characters at a time."""
    with open(path, encoding="utf-8", errors="surrogateescape", newline="\n") as run:
        rest = ""
        while chunk := run.read(size):
            # str.split in C instead of a Python-level step per line.
            lines = (rest + chunk).split("\n")
            rest = lines.pop()
            if lines:
                yield lines
        if rest:  # a run ends with a newline; a file cut short still yields what it has
            yield [rest]


def list_blocks(lines: list[str], count: int) -> Iterator[list[str]]:
    for start in range(0, len(lines), count):
        yield lines[start : start + count]


def merge_blocks(sources: list[Iterator[list[str]]]) -> Iterator[list[str]]:
    """Merge sources of sorted blocks (each source sorted as a whole) into sorted blocks.

    heapq.merge takes a few Python steps per line; this takes a few per block: every round
    emits, sorted, all lines up to the smallest last line of the current blocks, which no
    line still to come can be below.
    """
    heads: list[tuple[list[str], int, Iterator[list[str]]]] = []
    for source in sources:
        block = next(source, None)
        if block:
            heads.append((block, 0, source))
    while heads:
        bound = min(block[-1] for block, _, _ in heads)
        batch: list[str] = []
        remaining: list[tuple[list[str], int, Iterator[list[str]]]] = []
        for block, start, source in heads:
            cut = bisect.bisect_right(block, bound, start)
            batch += block[start:cut]
            if cut < len(block):
                remaining.append((block, cut, source))
            else:
                following = next(source, None)
                if following:
                    remaining.append((following, 0, source))
        heads = remaining
        # Timsort finds the sorted stretches the blocks are made of: a merge in C.
        batch.sort()
        yield batch
