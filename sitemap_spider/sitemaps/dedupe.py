"""Pages served under several URLs, listed once: of the entries sharing a ``content_digest``, the
first in loc order is published.

A set of every digest would grow with the site. Instead the ``+digest<TAB>loc`` pairs of all
entries are sorted on disk (by the worker processes of ``scrapy publish``, each for its lines),
and ``shared_digests`` reads them once, merged, for the digests that more than one loc has:
usually few or none, and the publishing loop then drops repeats with a set of those alone, in
the pass that writes the shards. When there are too many for memory, ``without_content_duplicates``
does it in bounded memory, with a second pass over the unique lines.
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

#: Shared digests kept in a set while the shards are written (some 100 bytes each); with more,
#: the bounded-memory second pass is used.
MAX_SHARED_DIGESTS: Final = 200_000
# Pairs compared at a time by shared_digests: their two columns stay small.
_SCAN_SLICE: Final = 4096
# Characters read at a time from each run by shared_digests_in.
_RANGE_BLOCK_CHARS: Final = 64 * 1024


def digest_pair(digest: str, loc: str) -> str:
    """The line of a ``shared_digests`` input: ``+digest<TAB>loc`` (neither holds a tab)."""
    return f"+{digest}\t{loc}"


def shared_digests(blocks: Iterable[list[str]], limit: int = MAX_SHARED_DIGESTS) -> set[str] | None:
    """The digests, as ``+digest``, that come with more than one loc in the sorted pairs of
    ``blocks``; None if there are more than ``limit``."""
    found: set[str] = set()
    last: tuple[str, str] | None = None  # (digest, loc) of the pair before the block
    for block in _slices(blocks):
        if not block:
            continue
        # Neither part of a pair holds a tab: split at every tab, a block is two columns,
        # and each pair is compared with the one before it in C, not in a Python step.
        fields = "\t".join(block).split("\t")
        if len(fields) != 2 * len(block):
            raise ValueError(f"a content digest pair holds a tab or none: {block[0]!r}...")
        digests = fields[0::2]
        locs = fields[1::2]
        if last is not None and last[0] == digests[0] and last[1] != locs[0]:
            found.add(digests[0])
        # The same digest as the pair before: a shared one, unless it is the same loc again
        # (one page listed twice, in two runs or on a repeated line).
        same = list(map(operator.eq, digests[1:], digests[:-1]))
        if True in same:
            for index in itertools.compress(range(1, len(digests)), same):
                if locs[index] != locs[index - 1]:
                    found.add(digests[index])
        if len(found) > limit:
            return None
        last = (digests[-1], locs[-1])
    return found


def _slices(blocks: Iterable[list[str]]) -> Iterator[list[str]]:
    # Merged blocks can be large (a round of the merge of 100 runs emits up to 100 read
    # blocks): split, their columns would double their memory for as long as they are compared.
    for block in blocks:
        if len(block) <= _SCAN_SLICE:
            yield block
        else:
            yield from (block[start : start + _SCAN_SLICE] for start in range(0, len(block), _SCAN_SLICE))


def shared_digests_in(runs: list[str], low: str | None, high: str | None, limit: int = MAX_SHARED_DIGESTS) -> set[str] | None:
    """``shared_digests`` of the pairs from ``low`` (included) to ``high`` (excluded) of sorted
    run files; in any process, so that two halves of the digests are read at once.

    ``low`` and ``high`` are ``split_key`` values: all the pairs of a digest are on one side.
    """
    sources = [_range_blocks(Path(run), low, high) for run in runs]
    return shared_digests(merge_blocks(sources), limit)


def split_key(runs: list[Path]) -> str | None:
    """A key near the middle of the pairs of sorted run files: the ``+digest<TAB>`` of the middle
    pair of the biggest, or None when it has none. Every pair of a digest sorts on the same side.
    """
    if not runs:
        return None
    biggest = max(runs, key=lambda run: run.stat().st_size)
    with open(biggest, "rb") as run:
        run.seek(biggest.stat().st_size // 2)
        run.readline()  # to the start of a line
        middle = run.readline().decode("utf-8", "surrogateescape")
    tab = middle.find("\t")
    return middle[: tab + 1] if tab > 0 else None


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
