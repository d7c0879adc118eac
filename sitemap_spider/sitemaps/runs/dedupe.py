"""Pages served under several URLs, listed once: of the entries sharing a ``content_digest``, the
first in loc order is published.

A set of every digest would grow with the site. Instead the digest of every entry is sorted on
disk (by the worker processes of ``scrapy publish``, each for its lines), and
``repeated_digests`` reads them once, merged, for the digests that come more than once: usually
few. The publishing loop keeps a set of those alone and, in the pass that writes the shards,
drops the later locs of each. A digest in the set because one page is listed twice (the
same loc, the same digest) drops nothing: repeated locs are dropped first.

When more digests than a set may hold come more than once, most often because many pages are
listed twice, ``unique_lines_and_shared`` writes the unique lines to a file and sorts their
digests again: those repeated among unique locs are the shared ones. If even these are too
many, ``without_content_duplicates`` finds the pages to drop in bounded memory.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import tempfile
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor
from pathlib import Path
from typing import Final

from sitemap_spider.sitemaps.runs.latest import latest_lines, whole_groups
from sitemap_spider.sitemaps.runs.lines import ABSENT, loc_and_digest, locs_and_digests
from sitemap_spider.sitemaps.runs.run_files import merge_blocks, read_blocks
from sitemap_spider.sitemaps.runs.sorting import MAX_MERGE_FAN_IN, LineSorter, merge_block_chars

#: Repeated digests kept in a set while the shards are written (some 100 bytes each); with
#: more, the unique lines are written to a file and their digests sorted again.
MAX_SHARED_DIGESTS: Final = 200_000
# Digest lines compared at a time by repeated_digests: the list of comparisons stays small.
_SCAN_SLICE: Final = 4096
# Characters read at a time from a file of unique lines.
_READ_BLOCK_CHARS: Final = 256 * 1024


def repeated_digests(blocks: Iterable[list[str]], limit: int = MAX_SHARED_DIGESTS) -> set[str] | None:
    """The digest lines that come more than once in the sorted ``blocks``; None if there are
    more than ``limit``.

    Every digest that several locs share is one of them; so is the digest of a page listed
    twice, which the publishing loop then keeps once like any repeated loc.
    """
    found: set[str] = set()
    last: str | None = None  # the line before the block
    for block in _slices(blocks):
        if not block:
            continue
        if block[0] == last:
            found.add(last)
        # Each line compared with the one before it in C, not in a Python step per line.
        same = list(map(operator.eq, block[1:], block[:-1]))
        if True in same:
            found.update(itertools.compress(block[1:], same))
        if len(found) > limit:
            return None
        last = block[-1]
    return found


def _slices(blocks: Iterable[list[str]]) -> Iterator[list[str]]:
    # Merged blocks can be large (a round of the merge of 100 runs emits up to 100 read
    # blocks): compared in slices, the list of comparisons stays small.
    for block in blocks:
        if len(block) <= _SCAN_SLICE:
            yield block
        else:
            yield from (block[start : start + _SCAN_SLICE] for start in range(0, len(block), _SCAN_SLICE))


def repeated_digests_in(
    runs: list[str], low: str | None, high: str | None, limit: int = MAX_SHARED_DIGESTS
) -> set[str] | None:
    """``repeated_digests`` of the lines from ``low`` (included) to ``high`` (excluded) of sorted
    run files; in any process, so that two halves of the digests are read at once.

    ``low`` and ``high`` are ``split_key`` values: all the lines of a digest are on one side.
    """
    return repeated_digests(_merged_range(runs, low, high), limit)


def split_key(runs: list[Path]) -> str | None:
    """A key near the middle of the lines of sorted run files, or None when they have none:
    the middle line of the biggest up to its first tab (the key of an entry's run line: its
    loc), or whole (a digest line). Every line of a key sorts on the same side of it.
    """
    if not runs:
        return None
    biggest = max(runs, key=lambda run: run.stat().st_size)
    with open(biggest, "rb") as run:
        run.seek(biggest.stat().st_size // 2)
        run.readline()  # to the start of a line
        middle = run.readline().decode("utf-8", "surrogateescape").rstrip("\n")
    tab = middle.find("\t")
    return middle[: tab + 1] if tab >= 0 else (middle or None)


def repeated_digests_of_runs(
    runs: list[str], workers: Executor | None, limit: int | None = None
) -> set[str] | None:
    """``repeated_digests`` of sorted run files of digest lines, or None if more than ``limit``
    (default MAX_SHARED_DIGESTS); two halves at once, one in ``workers``, when there are any."""
    limit = MAX_SHARED_DIGESTS if limit is None else limit
    split = split_key([Path(run) for run in runs]) if workers is not None else None
    if split is None:
        return repeated_digests_in(runs, None, None, limit)
    assert workers is not None
    low = workers.submit(repeated_digests_in, runs, None, split, limit)
    high = repeated_digests_in(runs, split, None, limit)
    found = low.result()
    if found is None or high is None or len(found) + len(high) > limit:
        return None
    found |= high  # in place: no third set
    return found


def _merged_range(runs: list[str], low: str | None, high: str | None) -> Iterator[list[str]]:
    # The lines of sorted run files from low (included) to high (excluded), merged, in blocks
    # sized by the number of runs (short digest lines: many lines each).
    size = merge_block_chars(len(runs))
    return merge_blocks([_range_blocks(Path(run), low, high, size) for run in runs])


def _range_blocks(path: Path, low: str | None, high: str | None, size: int) -> Iterator[list[str]]:
    # The lines of a sorted run from low (included) to high (excluded), ``size`` characters at a time.
    for block in read_blocks(path, size):
        if low is not None and block[-1] < low:
            continue
        start = 0 if low is None or block[0] >= low else bisect.bisect_left(block, low)
        if high is not None and block[-1] >= high:
            end = bisect.bisect_left(block, high, start)
            if end > start:
                yield block[start:end]
            return
        yield block[start:] if start else block


def write_unique(blocks: Iterable[list[str]], work_dir: Path, run_size: int) -> tuple[str, int, list[str]]:
    """Write the kept line (latest.py) of each loc of the sorted run lines ``blocks``
    (``encode_fields``: five fields each) to a new file in ``work_dir``. Return the file, the
    number of lines left out (repeated locs), and sorted run files in ``work_dir`` of the digest
    lines of the lines written (the caller removes them).

    A block at a time, as columns, in a few C-level passes.
    """
    digests = LineSorter(work_dir, run_size, unique=False)
    fd, name = tempfile.mkstemp(prefix="unique-", suffix=".tsv", dir=work_dir)
    repeats = 0
    try:
        with open(fd, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as out:
            # Every line of a loc in one block: the kept one is known within it.
            for block in whole_groups(blocks):
                locs, found = locs_and_digests(block)
                # Lines of one loc are adjacent: the first is kept, unless another has a later lastmod.
                new = list(map(operator.ne, locs, [None, *locs[:-1]]))
                if False in new:
                    kept = latest_lines(block, new)
                    repeats += len(block) - len(kept)
                    block = kept
                    found = locs_and_digests(block)[1]
                out.write("\n".join(block))
                out.write("\n")
                digests.add_lines(found if ABSENT not in found else [digest for digest in found if digest != ABSENT])
        return name, repeats, [str(run) for run in digests.run_files()]
    except BaseException:
        digests.close()
        Path(name).unlink(missing_ok=True)
        raise


def write_unique_in(
    runs: list[str], low: str | None, high: str | None, work_dir: str, run_size: int
) -> tuple[str, int, list[str]]:
    """``write_unique`` of the lines from ``low`` (included) to ``high`` (excluded) of sorted
    run files of entries; in any process. ``low`` and ``high`` are ``split_key`` values: every
    line of a loc is on one side."""
    return write_unique(_merged_range(runs, low, high), Path(work_dir), run_size)


def unique_lines_and_shared(
    sorter: LineSorter, run_size: int, workers: Executor | None = None, limit: int | None = None
) -> tuple[list[Path], int, set[str] | None]:
    """Write the first line of each loc of ``sorter`` (run lines of entries) to new files in its
    directory, in order; return them, the number of lines left out (repeated locs), and the
    digests, as ``+digest``, that more than one of the lines written has: the shared ones, each
    loc being there once; None if more than ``limit`` (default MAX_SHARED_DIGESTS).

    With ``workers``, the two halves of the locs are written at once, one in a worker process,
    and so are the two halves of their digests read. ``sorter`` can be read no more.
    """
    parts: list[tuple[str, int, list[str]]] = []
    try:
        if workers is None or len(sorter.runs) + 1 > MAX_MERGE_FAN_IN:
            parts.append(write_unique(sorter.iter_blocks(), sorter.work_dir, run_size))
        else:
            runs = [str(run) for run in sorter.run_files()]
            split = split_key([Path(run) for run in runs])
            if split is None:
                parts.append(write_unique_in(runs, None, None, str(sorter.work_dir), run_size))
            else:
                low = workers.submit(write_unique_in, runs, None, split, str(sorter.work_dir), run_size)
                try:
                    parts.append(write_unique_in(runs, split, None, str(sorter.work_dir), run_size))
                finally:
                    parts.insert(0, low.result())  # waited for even when this half failed
        digest_runs = [run for part in parts for run in part[2]]
        if len(digest_runs) <= MAX_MERGE_FAN_IN:
            shared = repeated_digests_of_runs(digest_runs, workers, limit)
        else:  # more files than are opened at once: a sorter merges them in rounds first
            merged = LineSorter(sorter.work_dir, run_size, unique=False)
            try:
                for run in digest_runs:
                    merged.add_run(Path(run), 0, 0)
                shared = repeated_digests(merged.iter_blocks(), MAX_SHARED_DIGESTS if limit is None else limit)
            finally:
                merged.close()
    except BaseException:
        for name, _, _ in parts:
            Path(name).unlink(missing_ok=True)
        raise
    finally:
        for _, _, digest_runs in parts:
            for run in digest_runs:
                Path(run).unlink(missing_ok=True)
    return [Path(part[0]) for part in parts], sum(part[1] for part in parts), shared


def read_unique_blocks(paths: list[Path]) -> Iterator[list[str]]:
    """The lines of the files written by ``unique_lines_and_shared``, in order, without their
    newlines, a list at a time."""
    for path in paths:
        yield from read_blocks(path, _READ_BLOCK_CHARS)


def read_lines(paths: list[Path]) -> Iterator[str]:
    """``read_unique_blocks``, a line at a time."""
    return itertools.chain.from_iterable(read_unique_blocks(paths))


def without_content_duplicates(
    lines: Iterator[str], work_dir: Path, run_size: int, on_drop: Callable[[str], None]
) -> Iterator[str]:
    """The sorted unique ``lines`` (``entry_lines.encode_fields``) but those whose digest an earlier
    loc has; ``on_drop`` is told of each line left out.

    The lines are kept in a file while ``digest<TAB>loc`` pairs are sorted on disk, which
    groups each digest's locs in loc order: all but the first of a group are dropped.
    """
    by_digest = LineSorter(work_dir, run_size, unique=False)
    fd, name = tempfile.mkstemp(prefix="unique-", suffix=".tsv", dir=work_dir)
    with open(fd, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as out:
        for line in lines:
            out.write(line + "\n")
            loc, digest = loc_and_digest(line)
            if digest is not None:
                by_digest.add_line(f"{digest}\t{loc}")
    dropped = LineSorter(work_dir, run_size)
    previous = None
    for pair in by_digest.iter_unique_lines():
        digest, _, loc = pair.partition("\t")
        if digest == previous:
            dropped.add_line(loc)
        previous = digest
    by_digest.close()
    drops = dropped.iter_unique_lines()
    next_drop = next(drops, None)
    prefix = None if next_drop is None else next_drop + "\t"
    try:
        with open(name, encoding="utf-8", errors="surrogateescape", newline="\n") as unique:
            for raw in unique:
                line = raw[:-1]
                if prefix is not None and line.startswith(prefix):
                    on_drop(line)
                    next_drop = next(drops, None)
                    prefix = None if next_drop is None else next_drop + "\t"
                    continue
                yield line
    finally:
        dropped.close()
        Path(name).unlink(missing_ok=True)
