"""Feeding parsed input into a sitemap set: line by line, or in chunks parsed by worker processes.

Workers read their own byte ranges of the input and sort their entries into runs the
builder merges, so ``scrapy publish`` uses both cores and its memory does not grow with
the input. Bad lines are reported in input order, with their numbers.
"""

from __future__ import annotations

import collections
import io
import itertools
import logging
import os
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from sitemap_spider.sitemaps.ingest.chunk import EncodedChunk, encode_chunk
from sitemap_spider.sitemaps.entry import RichEntry
from sitemap_spider.sitemaps.runs.lines import DIGEST_LINE_PREFIX, Fields
from sitemap_spider.sitemaps.errors import InvalidEntryError
from sitemap_spider.sitemaps.xml.extensions import rich_fields
from sitemap_spider.sitemaps.xml.hreflang import HreflangListener
from sitemap_spider.sitemaps.ingest.pool import start_pool
from sitemap_spider.sitemaps.ingest.inputs import MAX_REPORTED_BAD_LINES
from sitemap_spider.sitemaps.item_entries import taken_fields
from sitemap_spider.sitemaps.options import OutputOptions
from sitemap_spider.sitemaps.shards.set_builder import PublishResult, SitemapSetBuilder
from sitemap_spider.sitemaps.runs.run_files import sort_into_run, write_run
from sitemap_spider.sitemaps.urls import base_url_of
from sitemap_spider.sitemaps.rules import check_fields

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class IngestOptions:
    """How a set is published from input records.

    ``base_url`` None: the origin of the first entry; ``output`` makes the set's output
    options for the base URL.
    """

    base_url: str | None
    stop_on_bad_input: bool
    sort_run_size: int
    output: Callable[[str], OutputOptions]


@dataclass
class Tally:
    """What became of the input lines."""

    lines: int = 0
    bad: int = 0
    normalised: int = 0  # entries whose loc was taken in its normal form (iri.py: IRIs, spaces)
    stopped_at: int | None = None
    # hreflang alternates not written, by reason, and those written unchecked (xml/hreflang.py)
    hreflang: collections.Counter[str] = field(default_factory=collections.Counter)

    def hreflang_problem(self, page: str, href: str, hreflang: str, reason: str) -> None:
        """hreflang.HreflangListener: count, and log at debug level."""
        self.hreflang[reason] += 1
        logger.debug("hreflang %s -> %s (%s) of %s", reason, href, hreflang, page)


class Ingest:
    """Turns records into entries of the sitemap set, and counts and reports bad lines."""

    def __init__(self, options: IngestOptions) -> None:
        self.options = options
        self.tally = Tally()
        self.builder: SitemapSetBuilder | None = None
        # The worker processes, once started: they parse the input, then (idle otherwise)
        # compress and validate the shards the builder writes.
        self.pool: ProcessPoolExecutor | None = None
        self.pool_size = 0
        self.last_record = 0  # number of the last line that was an entry or a bad line

    def publish(self) -> PublishResult:
        """Publish the set of the entries taken so far (see ``SitemapSetBuilder.publish``)."""
        assert self.builder is not None
        return self.builder.publish(workers=self.pool, worker_count=self.pool_size)

    def close(self) -> None:
        """Stop the worker processes; idempotent."""
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None

    def record(self, number: int, fields: dict[str, Any] | str) -> bool:
        """Add the entry of one record; False when the run must stop."""
        self.tally.lines = self.last_record = number
        try:
            if isinstance(fields, str):
                raise InvalidEntryError(fields)
            entry, normalised = taken_fields(fields)
            extras = rich_fields(fields)
            if self.builder is None:
                self.builder = new_builder(self.options, entry, self.tally.hreflang_problem)
            if extras is None:
                self.builder.add_fields(*entry)
            else:
                self.builder.add(RichEntry(*entry, **extras))
        except InvalidEntryError as exc:
            return self.bad(number, str(exc))
        self.tally.normalised += normalised
        return True

    def chunk(self, done: ChunkResult) -> bool:
        """Take the result of ``parse_chunk``; False when the run must stop."""
        assert self.builder is not None
        first = self.tally.lines
        self.tally.lines += done.lines
        if done.last_record:
            self.last_record = first + done.last_record
        for number, reason in done.bad:
            if not self.bad(first + number, reason):
                return False
        self.tally.bad += done.bad_count - len(done.bad)  # beyond the first ones: counted only
        self.tally.normalised += done.normalised
        for problem in done.hreflang_problems:
            self.builder.hreflang_problem(*problem)
        if done.run is not None:
            digest_run = None if done.digest_run is None else Path(done.digest_run)
            alternates_run = None if done.alternates_run is None else Path(done.alternates_run)
            self.builder.add_sorted_run(
                Path(done.run), done.entries, done.duplicates, done.digests, digest_run, verbatim=done.verbatim,
                rich=done.rich, alternates_run=alternates_run, alternates=done.alternates,
            )
        return True

    def bad(self, number: int, reason: str) -> bool:
        """Count (and maybe log) a bad line; False when the run must stop."""
        self.tally.bad += 1
        if self.options.stop_on_bad_input:
            self.tally.stopped_at = number
            logger.error("line %d: %s; stopping: SITEMAP_STOP_ON_BAD_INPUT is set, nothing is published", number, reason)
            return False
        if self.tally.bad <= MAX_REPORTED_BAD_LINES:
            logger.warning("line %d: %s; skipped", number, reason)
        return True

    def report_hidden(self) -> None:
        hidden = self.tally.bad - MAX_REPORTED_BAD_LINES
        if hidden > 0 and self.tally.stopped_at is None:
            logger.warning("... and %d more bad lines skipped (%d in all)", hidden, self.tally.bad)


def new_builder(
    options: IngestOptions, first: Fields, on_hreflang: HreflangListener | None = None
) -> SitemapSetBuilder:
    """The sitemap set builder, for the base URL of the settings or else of the first entry."""
    base_url = options.base_url
    if base_url is None:
        # Not checked yet: an invalid first entry must stay a bad line, not name the site.
        check_fields(*first[:4])
        base_url = base_url_of(first[0])
        logger.info("SITEMAP_BASE_URL not set: using %s, the origin of the first entry", base_url)
    return SitemapSetBuilder(options.output(base_url), on_hreflang)


# --- Big inputs: lines parsed and checked on every core -----------------------------
# JSON Lines and plain text are line by line, so chunks of the input can be parsed, checked,
# encoded and sorted into runs by worker processes (JSON decoding alone is half of the time
# of a publish); CSV is not (a quoted cell may span lines) and stays in this process.
# Workers read their chunk from the file themselves: this process only plans byte ranges,
# so its memory does not depend on the chunk size. Standard input and gzip are first copied
# chunk by chunk into spool files.
BATCH_FORMATS: Final = ("jsonl", "txt")
# Lines read here to estimate the line length, and so the bytes of a chunk of SITEMAP_SORT_RUN_SIZE lines.
_SAMPLE_BYTES: Final = 1 << 20
# A worker holds a chunk's bytes, its run lines and its digest lines at once (about three times
# the chunk): long URLs make chunks of fewer lines, not a bigger worker (2,000-character URLs
# took 665 MB with chunks of SITEMAP_SORT_RUN_SIZE lines).
MAX_CHUNK_BYTES: Final = 24 * 1024 * 1024


@dataclass(frozen=True)
class ChunkResult:
    """What a worker made of a chunk of lines; line numbers are counted from the chunk's start."""

    lines: int
    entries: int
    duplicates: int
    digests: int
    bad: list[tuple[int, str]]  # the first MAX_REPORTED_BAD_LINES, with their reasons
    bad_count: int
    run: str | None  # sorted run file in the builder's sort_dir; None when stopped or empty
    digest_run: str | None = None  # sorted digest lines (dedupe.digest_line) of the entries with a digest
    last_record: int = 0  # the last line that was an entry or a bad line; 0: none
    verbatim: bool = False  # every loc and lastmod of the run goes into the XML as it is (EncodedChunk.verbatim)
    normalised: int = 0  # entries whose loc was taken in its normal form (EncodedChunk.normalised)
    rich: bool = False  # some entry has extensions (EncodedChunk.rich)
    alternates_run: str | None = None  # sorted hreflang.alternate_lines of the entries
    alternates: int = 0  # lines in alternates_run
    hreflang_problems: list[tuple[str, str, str, str]] = field(default_factory=list)


def parse_chunk(kind: str, path: str, start: int, length: int, run_dir: str, stop: bool, spool: bool) -> ChunkResult:
    """Parse, check and encode the lines of ``length`` bytes of ``path`` from ``start``; sort them into a run."""
    # Numbered from 1 within the chunk; the input's first line is never in one (read before).
    done = encode_chunk(kind, _read_chunk(path, start, length, spool), 1, stop, bom_line=0)
    return _sorted_runs(done, Path(run_dir), stop, 1)


def _sorted_runs(done: EncodedChunk, run_dir: Path, stop: bool, first_number: int) -> ChunkResult:
    lines = done.line_count
    bad = [(number - first_number + 1, reason) for number, reason in done.bad]
    last = done.last_record - first_number + 1 if done.last_record else 0
    if not done.lines or (stop and bad):
        return ChunkResult(
            lines, 0, 0, 0, bad, done.bad_count, None, last_record=last, normalised=done.normalised,
            hreflang_problems=done.hreflang_problems,
        )
    # Repeated URLs are left for the final merge to drop (and count): one pass fewer here.
    run, duplicates = sort_into_run(done.lines, run_dir, unique=False)
    digest_run = None
    if done.digests:
        # Sorted bare: the same order as with the prefix every line gets as it is written.
        done.digests.sort()
        digest_run = str(write_run(done.digests, run_dir, prefix=DIGEST_LINE_PREFIX))
    digests = len(done.digests)
    alternates_run = None
    if done.alternates:
        done.alternates.sort()
        alternates_run = str(write_run(done.alternates, run_dir))
    return ChunkResult(
        lines, len(done.lines), duplicates, digests, bad, done.bad_count, str(run), digest_run, last, done.verbatim,
        done.normalised, done.rich, alternates_run, len(done.alternates), done.hreflang_problems,
    )


def _chunks(stream: io.BufferedIOBase, path: str | None, size: int, spool_dir: Path) -> Iterator[tuple[str, int, int, bool]]:
    """``(file, start, length, spooled)`` of chunks of about ``size`` lines, each ending at a line end."""
    here = stream.tell() if path is not None else 0
    sample = stream.read(_SAMPLE_BYTES) + stream.readline()
    average = max(1.0, len(sample) / max(1, sample.count(b"\n")))
    chunk_bytes = max(1, min(int(average * size), MAX_CHUNK_BYTES))
    if path is not None:  # a regular file: workers read it in place
        end = os.fstat(stream.fileno()).st_size
        stream.seek(here)
        while here < end:
            stream.seek(min(end, here + chunk_bytes))
            stream.readline()
            stop = stream.tell()
            yield path, here, stop - here, False
            here = stop
        return
    data = sample  # read already: it ends at a line end
    for number in itertools.count():
        if len(data) < chunk_bytes:
            data += stream.read(chunk_bytes - len(data))
            data += stream.readline()
            chunk, data = data, b""
        else:  # the sample holds more than a chunk
            cut = data.find(b"\n", chunk_bytes - 1) + 1 or len(data)
            chunk, data = data[:cut], data[cut:]
        if not chunk:
            return
        spool = spool_dir / f"input-{number:06d}.raw"
        spool.write_bytes(chunk)
        yield str(spool), 0, len(chunk), True


def ingest_chunks(ingest: Ingest, kind: str, stream: io.BufferedIOBase, path: str | None) -> None:
    """Feed the rest of ``stream`` to ``ingest`` through worker processes, in input order."""
    assert ingest.builder is not None
    sort_dir = ingest.builder.sort_dir
    chunks = _chunks(stream, path, ingest.options.sort_run_size, sort_dir)
    first = next(chunks, None)
    following = next(chunks, None)
    if first is None:
        return
    if following is None:  # one chunk: starting processes would cost more than they save
        if _ingest_here(ingest, kind, *first):
            _count_to_last_record(ingest)
        return
    stop = ingest.options.stop_on_bad_input
    workers = max(1, min(os.cpu_count() or 1, 8))
    if ingest.pool is None:  # the caller stops it (Ingest.close), after publishing
        ingest.pool = start_pool(workers)
        ingest.pool_size = workers
    pool = ingest.pool
    pending: collections.deque[Future[ChunkResult]] = collections.deque()
    try:
        for chunk in itertools.chain([first, following], chunks, [None]):
            if chunk is not None:
                pending.append(pool.submit(parse_chunk, kind, *chunk[:3], str(sort_dir), stop, chunk[3]))
            # Results are taken in input order: bad lines are numbered and reported in order,
            # and in strict mode the first bad line of the input is the one that stops the run.
            while pending and (chunk is None or len(pending) > workers):
                if not ingest.chunk(pending.popleft().result()):
                    return
        _count_to_last_record(ingest)
    finally:
        for job in pending:
            job.cancel()


def _read_chunk(path: str, start: int, length: int, spooled: bool) -> bytes:
    with open(path, "rb") as source:
        source.seek(start)
        data = source.read(length)
    if spooled:
        os.unlink(path)
    # encode_chunk splits it on b"\n" only, as iterating over a binary file does: the same line numbers.
    return data


def _ingest_here(ingest: Ingest, kind: str, path: str, start: int, length: int, spooled: bool) -> bool:
    assert ingest.builder is not None
    first = ingest.tally.lines + 1
    stop = ingest.options.stop_on_bad_input
    done = encode_chunk(kind, _read_chunk(path, start, length, spooled), first, stop)
    return ingest.chunk(_sorted_runs(done, ingest.builder.sort_dir, stop, first))


def _count_to_last_record(ingest: Ingest) -> None:
    # Lines are counted up to the last one that was an entry or a bad line, as when they are
    # read one by one (blank lines and comments at the end are not), however many chunks.
    ingest.tally.lines = ingest.last_record
