"""``scrapy audit``: what is wrong in a site's sitemaps compared with the live site?

    scrapy audit https://www.example.com/ [-a sitemap=https://www.example.com/sitemap.xml] [--json]

Two crawls in one process: the validate spider reads the sitemaps (robots.txt Sitemap: lines,
else /sitemap.xml, or the one ``-a sitemap=`` names) and keeps every listed URL; then the
sitemap spider crawls the site as ``scrapy crawl sitemap`` does, from the start page and every
listed URL of the site, with ``SITEMAP_PUBLISH=False`` and without the crawl history: nothing is
published, and the site is described as it answers now. The findings are the validate rules plus
the audit rules (README). Exit code 0: no error; 1: errors; 2: no sitemap could be read, the crawl
could not run, or it was stopped before it finished (a crawl cut short by a limit is audited as
far as it went). ``-s SITEMAP_REPORT=audit.html`` (or ``.json``): the crawl's report, written
after the comparison, with every finding.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import TYPE_CHECKING, Any, ClassVar, Final

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings
from scrapy.utils.log import configure_logging
from twisted.internet.defer import Deferred

from sitemap_spider import stats as keys
from sitemap_spider.checking.audit import AuditedCrawl, AuditSession, CrawlEnd, compare, crawl_facts, url_key
from sitemap_spider.checking.audit_output import terminal_lines, where_all_are
from sitemap_spider.checking.report import as_json, as_text, exit_code, summary
from sitemap_spider.commands.audit_report import write_without_crawl
from sitemap_spider.commands.validate_spider import ValidateSpider
from sitemap_spider.config import ConfigError, SitemapConfig, apply_defaults
from sitemap_spider.crawl.spider import SitemapSpider
from sitemap_spider.modes.collecting import CollectingMode
from sitemap_spider.sitemaps import origin_of

if TYPE_CHECKING:
    import argparse
    from typing import Self

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: Whatever the settings say: the audit's crawl publishes nothing and keeps what it found in one
#: process; and it describes the site as it answers now, so it neither reads the crawl history
#: (no conditional request, no failing page kept as the last crawl saw it) nor writes it.
FORCED_SETTINGS: Final[dict[str, object]] = {
    "SITEMAP_PUBLISH": False,
    "SITEMAP_WORKERS": "1",
    "SITEMAP_HISTORY": "off",
}
#: Retries for an audit, unless ``-s`` names them: a crawl that publishes waits up to a minute
#: and a half for a page that fails (a page missing from a sitemap is lost for days), and 15
#: minutes for a site that answers nothing but faults; an audit reports what the site answers
#: now, so a page that still fails after a few seconds is reported, and a site that has answered
#: nothing but faults for half a minute is down (a two-page site answering 503 to every page:
#: 978 s to say so with the crawl's budget of 900 s, 41 s with this one).
AUDIT_RETRIES: Final[dict[str, object]] = {
    "SITEMAP_RETRY_TIMES": 2,
    "SITEMAP_RETRY_DELAY": 0.5,
    "SITEMAP_RETRY_LAST_PASS_DELAY": 2.0,
    "SITEMAP_RETRY_BUDGET": 30.0,
}


def use_audit_settings(settings: BaseSettings) -> None:
    """Set the audit's FORCED_SETTINGS, and its AUDIT_RETRIES where ``-s`` did not name them."""
    for name, value in FORCED_SETTINGS.items():
        settings.set(name, value, priority="cmdline")
    for name, value in AUDIT_RETRIES.items():
        if (settings.getpriority(name) or 0) < SETTINGS_PRIORITIES["cmdline"]:
            settings.set(name, value, priority="cmdline")


class Command(ScrapyCommand):
    # Registered as a `scrapy.commands` entry point: it runs in any project, and outside one
    # with Scrapy's defaults and the SITEMAP_* ones.
    requires_project = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_LEVEL": "WARNING"}

    def syntax(self) -> str:
        return "[options] <site URL>"

    def short_desc(self) -> str:
        return "Compare a site's sitemaps with a crawl of the site (nothing is published)"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--json", action="store_true", help="print the findings as JSON")
        parser.add_argument(
            "-a", dest="arguments", action="append", default=[], metavar="NAME=VALUE", help="sitemap=URL"
        )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1 or not args[0].lower().startswith(("http://", "https://")):
            raise UsageError("give the site's URL")
        sitemap = self._sitemap_argument(opts.arguments)
        assert self.settings is not None and self.crawler_process is not None
        process = self.crawler_process
        configure_logging(self.settings)
        site = origin_of(url_key(args[0])) + "/"
        session = AuditSession()
        held: list[Crawler] = []
        # Set on the process: a Crawler object given to crawl() gets the process settings again.
        use_audit_settings(self.settings)
        config = self._config()
        if config is None:
            return

        def crawl_site(_: object) -> None:
            if session.unread_inputs or not session.listed_urls:
                return
            starts = [
                site,
                *sorted(k for k in session.listed_urls if k != site and origin_of(k) + "/" == site),
            ]
            process.crawl(AuditedSiteSpider, url=" ".join(starts))
            # Crawlers leave process.crawlers when they end: keep this one.
            held.extend(c for c in process.crawlers if c.spidercls.name == "sitemap")

        # The crawl of the site starts when the sitemaps have been read; the process runs
        # until both crawls have ended (its join() waits while a crawl is active).
        first = process.crawl(ValidateSpider, session=session, urls=[sitemap or site])
        held.extend(process.crawlers)
        if isinstance(first, Deferred):
            first.addBoth(crawl_site)
        elif isinstance(first, asyncio.Future):
            first.add_done_callback(crawl_site)
        process.start()
        spiders = [crawler.spider for crawler in held]
        robots = next((s.robots_sitemaps for s in spiders if isinstance(s, ValidateSpider)), {})
        session.resolve_cross_submission(robots)
        modes = [mode for s in spiders if isinstance(mode := getattr(s, "crawl_mode", None), CollectingMode)]
        self.exitcode, crawl = self._compare(session, modes[0] if modes else None, site)
        extra = {**({"crawl": crawl.as_json()} if crawl else {}), "exit_code": self.exitcode}
        audit = {**summary(session), **extra}
        # SITEMAP_REPORT: the crawl's report with every finding; without a crawl, the findings alone.
        findings = [finding.as_json() for finding in session.log.listed]
        if modes:
            modes[0].write_report(findings, {"audit": audit})
        elif config.report_path is not None:
            write_without_crawl(config.report_path, site, audit, findings)
        if opts.json:
            print(as_json(session, extra=extra))
        else:
            lines = terminal_lines(session.log.listed, where_all_are(config.report_path))
            print(as_text(session, finding_lines=lines + ([f"crawl: {crawl.verdict()}"] if crawl else [])))
        sys.stdout.flush()

    def _config(self) -> SitemapConfig | None:
        """The crawl's settings, checked before anything is fetched; None (exit 2) when one is bad."""
        assert self.settings is not None
        settings = self.settings.copy()
        apply_defaults(settings)
        try:
            return SitemapConfig.from_settings(settings)
        except ConfigError as exc:
            print(f"error: {exc}", file=sys.stderr)
            self.exitcode = 2
            return None

    @staticmethod
    def _sitemap_argument(arguments: list[str]) -> str | None:
        sitemap = None
        for argument in arguments:
            name, _, value = argument.partition("=")
            if name != "sitemap" or not value.lower().startswith(("http://", "https://")):
                raise UsageError(f"unknown argument {argument!r}: the one argument is sitemap=<URL>")
            sitemap = value
        return sitemap

    @staticmethod
    def _compare(
        session: AuditSession, mode: CollectingMode | None, site: str
    ) -> tuple[int, AuditedCrawl | None]:
        """The exit code, and what the audit says of its crawl (None when no crawl ran)."""
        if mode is None:
            if not session.unread_inputs:
                print(
                    "error: the sitemaps list no URL to audit, or the crawl could not start", file=sys.stderr
                )
            return 2, None
        end = crawl_end(mode)
        entries = [(entry.loc, entry.lastmod) for entry in mode.entries]
        crawl = compare(session, crawl_facts(entries, mode.excluded, mode.linked, mode.depths, end), site)
        if end.stopped:
            # Audited as far as it went (audit.crawl_incomplete says so), but not an audit of the site.
            print(f"error: the crawl was stopped before it finished ({end.reason})", file=sys.stderr)
            return 2, crawl
        return exit_code(session), crawl


def crawl_end(mode: CollectingMode) -> CrawlEnd:
    """How the audit's crawl ended, from its mode, settings and stats."""
    crawler = mode.crawler
    stats = crawler.stats.get_stats() if crawler.stats is not None else {}
    dropped = stats.get("depth/request_ignored_count", 0)
    return CrawlEnd(
        mode.end_reason or "unknown",
        crawler.settings.getint("DEPTH_LIMIT"),
        int(dropped),
        _robots_failed(stats),
    )


def _robots_failed(stats: dict[str, Any]) -> str:
    """How the site's robots.txt failed, when every try did and the crawl read no rules (crawl/robots.py)."""
    if not stats.get(keys.ROBOTS_NONE):
        return ""
    tries = sorted(
        (k.removeprefix(keys.ROBOTS_UNAVAILABLE), n)
        for k, n in stats.items()
        if k.startswith(keys.ROBOTS_UNAVAILABLE)
    )
    return ", ".join(f"{cause} x{count}" for cause, count in tries) or "no answer"


class AuditedSiteSpider(SitemapSpider):
    """The sitemap spider, its report (``SITEMAP_REPORT``) left to the audit, which adds its findings."""

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        spider = super().from_crawler(crawler, *args, **kwargs)
        assert isinstance(spider, cls)
        if isinstance(spider.crawl_mode, CollectingMode):
            spider.crawl_mode.hold_report()
        return spider
