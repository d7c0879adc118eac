"""``scrapy publish``: the sitemap set of a crawl, built from a file of entries.

    scrapy publish entries.jl -s SITEMAP_OUTPUT_DIR=out -s SITEMAP_BASE_URL=https://www.example.com/

The input is JSON Lines (as ``scrapy crawl sitemap -o entries.jl`` writes it), CSV with a
``loc`` column, or one URL per line; ``-`` is standard input, gzip is read transparently.
It is streamed: memory does not depend on the number of entries. A bad line is reported
with its number and skipped (or, with ``SITEMAP_STOP_ON_BAD_INPUT``, ends the run with
nothing published). Exit code 0: published; 1: nothing published; 2: bad usage or setting.
"""

from __future__ import annotations

import contextlib
import gc
import io
import logging
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import TYPE_CHECKING, Any, ClassVar

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.utils.log import configure_logging

from sitemap_spider.config import ConfigError, SitemapConfig, apply_defaults
from sitemap_spider.indexnow import submit_in_thread
from sitemap_spider.sitemaps import (
    BATCH_FORMATS,
    FORMATS,
    INDEX_NAME,
    BadInput,
    EmptySitemapError,
    Ingest,
    PublishResult,
    SitemapError,
    Tally,
    describe_write_error,
    ingest_chunks,
    off_base_note,
    open_input,
    read_records,
)

if TYPE_CHECKING:
    import argparse
logger = logging.getLogger(__name__)

class Command(ScrapyCommand):
    # Registered as a `scrapy.commands` entry point: it runs in any project, and outside one
    # with Scrapy's defaults and the SITEMAP_* ones.
    requires_project = False
    requires_crawler_process = False
    # Scrapy's DEBUG default would log every spilled sort run.
    default_settings: ClassVar[dict[str, Any]] = {"LOG_LEVEL": "INFO"}

    def syntax(self) -> str:
        return "[options] <entries.jl | entries.csv | urls.txt | ->"

    def short_desc(self) -> str:
        return "Publish a sitemap set from a file of entries (JSON Lines, CSV or one URL per line)"

    def long_desc(self) -> str:
        return (
            "Build the same sorted, sharded, validated sitemap set as a crawl from JSON Lines "
            "(loc, lastmod, changefreq, priority, content_digest), CSV with a loc column, or one URL "
            "per line; '-' reads standard input, .gz is read transparently. SITEMAP_* settings apply."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "--format", choices=FORMATS, default=None, help="input format (default: from the extension or content)"
        )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            raise UsageError("give exactly one input file, or - for standard input")
        assert self.settings is not None
        configure_logging(self.settings)
        settings = self.settings.copy()
        apply_defaults(settings)
        try:
            config = SitemapConfig.from_settings(settings)
            if config.rich.llms_txt:
                raise ConfigError(
                    "SITEMAP_LLMS_TXT", "llms.txt is written by scrapy crawl sitemap, which reads the pages' titles; "
                    "scrapy publish has only their URLs"
                )
            stream, name = open_input(args[0])
        except (ConfigError, BadInput) as exc:
            print(f"error: {exc}", file=sys.stderr)
            self.exitcode = 2
            return
        # A regular file can be read in place by worker processes; anything else is spooled.
        regular = args[0] != "-" and isinstance(stream, io.BufferedReader) and stream.seekable()
        self._published = False
        with stream, _sigterm_as_interrupt() as self._terminated:
            try:
                self.exitcode = self._publish(
                    config, stream, name, args[0], opts.format, args[0] if regular else None
                )
            except KeyboardInterrupt:
                # Ctrl-C, or SIGTERM (a timeout, a stopped container): _publish's cleanup has run,
                # the staging directory and the worker processes are gone.
                if self._published:
                    print("warning: interrupted after publishing the set (IndexNow not told)",
                          file=sys.stderr)
                    self.exitcode = 0
                else:
                    print("error: nothing published: interrupted; the set published before is as it was",
                          file=sys.stderr)
                    self.exitcode = 1
        # The process ends next. Freezing what is alive spares the interpreter's last garbage
        # collection the ~60,000 objects of Scrapy's and Twisted's modules (0.07-0.12 s of a
        # 1M publish's 3.7). Nothing frozen holds output: every file is closed by now, and the
        # atexit handlers (logging's flush among them) still run.
        gc.freeze()

    def _publish(
        self,
        config: SitemapConfig,
        stream: io.BufferedIOBase,
        name: str,
        label: str,
        forced: str | None,
        path: str | None,
    ) -> int:
        ingest = Ingest(config.ingest_options())
        try:
            kind, records = read_records(stream, name, forced)
            logger.info("Reading %s as %s", label, kind)
            in_chunks = kind in BATCH_FORMATS
            for number, fields in records:
                if not ingest.record(number, fields):
                    break
                if in_chunks and ingest.builder is not None:
                    # The base URL is known: the rest of the lines can go to other processes.
                    # (This reader holds no line back: the stream is at line number + 1.)
                    ingest_chunks(ingest, kind, stream, path)
                    break
            if ingest.tally.stopped_at is not None:
                return 1
            if ingest.builder is None:
                raise EmptySitemapError("no valid entry in the input")
            if self._terminated.is_set():
                # Its KeyboardInterrupt can be lost: Python ignores what a fork's callbacks raise,
                # and the worker processes are forked while the lines are read.
                raise KeyboardInterrupt
            result = ingest.publish()
        except (BadInput, EmptySitemapError, SitemapError, OSError, EOFError) as exc:
            print(f"error: nothing published: {describe_write_error(exc, config.output_dir)}", file=sys.stderr)
            return 1
        finally:
            ingest.close()
            if ingest.builder is not None:
                ingest.builder.discard()  # a no-op after a successful publish
            ingest.report_hidden()
        self._published = True
        print(summary(label, ingest.tally, result))
        if result.changes is not None:
            with contextlib.closing(result.changes):
                announce(config, result)
        return 0


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[threading.Event]:
    """SIGTERM raises KeyboardInterrupt in this process meanwhile, as Ctrl-C does, so that the run
    cleans up: killed by it, the process left its staging directory (shards, sort runs) inside
    the output directory, and its worker processes, orphaned, waited for work for ever. The
    event yielded is set too, for a KeyboardInterrupt that got lost. A worker process (forked
    meanwhile) is stopped by SIGTERM as before (ingest.feed.start_pool)."""
    terminated = threading.Event()

    def interrupt(signum: int, frame: FrameType | None) -> None:
        terminated.set()
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield terminated
    finally:
        signal.signal(signal.SIGTERM, previous)


def announce(config: SitemapConfig, result: PublishResult) -> None:
    """IndexNow, when configured: its outcome is printed; a failure does not change the exit code."""
    if config.indexnow is None or result.changes is None:
        return
    base_url = result.index_url[: -len(INDEX_NAME)]
    outcome = submit_in_thread(config.indexnow, result.changes, base_url)
    if outcome.failed is not None:
        print(f"IndexNow: {outcome.not_submitted:,} URL(s) not submitted: {outcome.failed}", file=sys.stderr)
    elif result.changes.compared:
        print(f"IndexNow: {outcome.urls:,} URL(s) submitted in {outcome.requests} request(s)")


def summary(label: str, tally: Tally, result: PublishResult) -> str:
    """The closing paragraph: what was published, what was left out, the robots.txt line."""
    left_out = [f"{tally.bad:,} bad line(s) skipped"]
    if tally.normalised:
        left_out.append(
            f"{tally.normalised:,} URL(s) with raw UTF-8 or spaces percent-encoded or a #fragment dropped"
        )
    if result.duplicates:
        left_out.append(f"{result.duplicates:,} repeated URL(s) listed once")
    if result.content_duplicates:
        left_out.append(f"{result.content_duplicates:,} page(s) with the content of another left out")
    unchecked = tally.hreflang.get("unchecked", 0)
    unused = {reason: count for reason, count in sorted(tally.hreflang.items()) if reason != "unchecked"}
    if unused:
        reasons = ", ".join(f"{reason} {count:,}" for reason, count in unused.items())
        left_out.append(f"hreflang alternates left out: {reasons}")
    if unchecked:
        left_out.append(f"{unchecked:,} hreflang alternate(s) on other hosts written unchecked")
    if result.news_urls or result.news_too_old:
        left_out.append(f"{result.news_urls:,} article(s) in news files, {result.news_too_old:,} older than 2 days left out")
    odd = dict(result.odd_lastmods)
    if odd:
        kinds = [f"{odd[k]:,} {w}" for k, w in (("placeholder", "before 1991"), ("future", "later than now")) if k in odd]
        left_out.append(
            f"lastmods published as given but distrusted by search engines: {' and '.join(kinds)} "
            "(scrapy validate lists them)"
        )
    if result.off_base:
        base_url = result.index_url[: -len(INDEX_NAME)]
        left_out.append(off_base_note(result.off_base, base_url, result.off_base_example))
    groups = ", ".join(f"{group} {urls:,}" for group, urls in result.group_urls)
    return (
        f"Published {result.urls:,} URLs in {result.files} sitemap file(s) from {label} "
        f"({tally.lines:,} lines; {', '.join(left_out)}); index {result.index_path}. "
        + (f"By group: {groups}. " if groups else "")
        + f"Changed since the previous set: {result.changes.describe() if result.changes is not None else 'not compared'}. "
        f"Add this line to robots.txt:\nSitemap: {result.index_url}"
    )
