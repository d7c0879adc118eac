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
from pathlib import Path
from typing import Final

from sitemap_spider.sitemaps.runs import merge_blocks, read_blocks
from sitemap_spider.sitemaps.sorting import LineSorter

#: Repeated digests kept in a set while the shards are written (some 100 bytes each); with
#: more, the unique lines are written to a file and their digests sorted again.
MAX_SHARED_DIGESTS: Final = 200_000
# Digest lines compared at a time by repeated_digests: the list of comparisons stays small.
_SCAN_SLICE: Final = 4096
# Characters read at a time from each run by repeated_digests_in, and from the file of unique lines.
_RANGE_BLOCK_CHARS: Final = 64 * 1024


def digest_line(digest: str) -> str:
    """The line of a ``repeated_digests`` input, and the digest field of an entry's run line:
    ``+digest``."""
    return "+" + digest


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
    sources = [_range_blocks(Path(run), low, high) for run in runs]
    return repeated_digests(merge_blocks(sources), limit)


def split_key(runs: list[Path]) -> str | None:
    """A key near the middle of the digest lines of sorted run files: the middle line of the
    biggest, or None when it has none. Every line of a digest sorts on the same side.
    """
    if not runs:
        return None
    biggest = max(runs, key=lambda run: run.stat().st_size)
    with open(biggest, "rb") as run:
        run.seek(biggest.stat().st_size // 2)
        run.readline()  # to the start of a line
        middle = run.readline().decode("utf-8", "surrogateescape")
    return middle.rstrip("\n") or None


def _range_blocks(path: Path, low: str | None, high: str | None) -> Iterator[list[str]]:
    # The lines of a sorted run from low (included) to high (excluded), a block at a time.
    for block in read_blocks(path, _RANGE_BLOCK_CHARS):
        if low is not None and block[-1] < low:
            continue
        start = 0 if low is None or block[0] >= low else bisect.bisect_left(block, low)
        if high is not None and block[-1] >= high:
            end = bisect.bisect_left(block, high, start)
            if end > start:
                yield block[start:end]
            return
        yield block[start:] if start else block


def unique_lines_and_shared(
    blocks: Iterable[list[str]], work_dir: Path, run_size: int, limit: int | None = None
) -> tuple[Path, int, set[str] | None]:
    """Write the first line of each loc of the sorted run lines ``blocks`` (``encode_fields``:
    five fields each) to a new file in ``work_dir``. Return the file, the number of lines left
    out (repeated locs), and the digests, as ``+digest``, that more than one of the written
    lines has: the shared ones, each loc being there once; None if more than ``limit``
    (default MAX_SHARED_DIGESTS).

    A block at a time, as columns: this runs in one process while the workers wait.
    """
    limit = MAX_SHARED_DIGESTS if limit is None else limit
    digests = LineSorter(work_dir, run_size, unique=False)
    fd, name = tempfile.mkstemp(prefix="unique-", suffix=".tsv", dir=work_dir)
    path = Path(name)
    previous: str | None = None
    repeats = 0
    try:
        with open(fd, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as out:
            for block in blocks:
                if not block:
                    continue
                fields = "\t".join(block).split("\t")
                if len(fields) != 5 * len(block):
                    raise ValueError(f"a run line without its five fields: {block[0]!r}...")
                locs = fields[0::5]
                # Lines of one loc are adjacent: the first is kept.
                new = list(map(operator.ne, locs, [previous, *locs[:-1]]))
                previous = locs[-1]
                found = fields[4::5]
                if False in new:
                    block = list(itertools.compress(block, new))
                    found = list(itertools.compress(found, new))
                    repeats += len(new) - len(block)
                if block:  # not only repeats of the block before
                    out.write("\n".join(block))
                    out.write("\n")
                digests.add_lines(found if "-" not in found else [digest for digest in found if digest != "-"])
        shared = repeated_digests(digests.iter_blocks(), limit)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    finally:
        digests.close()
    return path, repeats, shared


def read_lines(path: Path) -> Iterator[str]:
    """The lines of a file written by ``unique_lines_and_shared``, without their newlines."""
    for block in read_blocks(path, _RANGE_BLOCK_CHARS):
        yield from block


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
            digest = line[line.rindex("\t") + 1 :]
            if digest != "-":  # "+digest" when present
                loc = line[: line.index("\t")]
                by_digest.add_line(f"{digest[1:]}\t{loc}")
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
