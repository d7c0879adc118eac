"""``scrapy validate``: is this sitemap (index, .xml.gz, text file, site) valid?

    scrapy validate sitemaps/sitemap_index.xml
    scrapy validate https://www.example.com/ --json

Local files are read directly; URLs are fetched by a small Scrapy crawl (robots.txt obeyed,
the project's user agent). A site URL (no path) is read through its robots.txt Sitemap:
lines. Exit code 0: valid (warnings allowed, unless --strict); 1: errors; 2: an input could not be read.
The rules are listed in the README (checking/findings.py holds them).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, ClassVar

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.utils.log import configure_logging

from sitemap_spider.checking.local import validate_paths
from sitemap_spider.checking.report import as_json, as_text, exit_code
from sitemap_spider.checking.session import DEFAULT_MAX_DEPTH, Session
from sitemap_spider.commands.validate_spider import ValidateSpider

if TYPE_CHECKING:
    import argparse


def is_url(argument: str) -> bool:
    return argument.lower().startswith(("http://", "https://"))


class Command(ScrapyCommand):
    # Registered as a `scrapy.commands` entry point: it runs in any project, and outside one
    # with Scrapy's defaults and the SITEMAP_* ones.
    requires_project = False
    # Scrapy's DEBUG default would log every request of the fetching crawl.
    default_settings: ClassVar[dict[str, Any]] = {"LOG_LEVEL": "WARNING"}

    def syntax(self) -> str:
        return "[options] <file | URL> ..."

    def short_desc(self) -> str:
        return "Validate sitemaps, sitemap indexes (and their sitemaps), .xml.gz and text sitemaps"

    def long_desc(self) -> str:
        return (
            "Check files or URLs against the sitemaps protocol and the official XSDs (with the image, "
            "video, news and xhtml extensions): limits, loc, lastmod, changefreq, priority, duplicates, "
            "cross-submission. A site URL is read through its robots.txt Sitemap: lines. "
            "Exit code 0: valid; 1: errors found (or, with --strict, warnings); 2: an input could not be read."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--json", action="store_true", help="print the findings as JSON")
        parser.add_argument(
            "--max-depth",
            type=int,
            default=DEFAULT_MAX_DEPTH,
            help=f"index levels followed below an input (default {DEFAULT_MAX_DEPTH})",
        )
        parser.add_argument(
            "--base-url", default=None, help="where local files are served, for the cross-submission rule"
        )
        parser.add_argument(
            "--strict", action="store_true", help="warnings fail too (exit code 1), for CI pipelines"
        )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args:
            raise UsageError("give at least one sitemap file or URL")
        if opts.max_depth < 0:
            raise UsageError("--max-depth must be 0 or more")
        if opts.base_url is not None and not (is_url(opts.base_url) and opts.base_url.endswith("/")):
            raise UsageError("--base-url must be an http(s) URL ending with '/'")
        assert self.settings is not None and self.crawler_process is not None
        configure_logging(self.settings)
        session = Session(max_depth=opts.max_depth)
        validate_paths(session, [arg for arg in args if not is_url(arg)], opts.base_url)
        urls = [arg for arg in args if is_url(arg)]
        robots: dict[str, set[str]] | None = None
        if urls:
            self.crawler_process.crawl(ValidateSpider, session=session, urls=urls)
            crawler = next(iter(self.crawler_process.crawlers))
            self.crawler_process.start()
            robots = crawler.spider.robots_sitemaps if isinstance(crawler.spider, ValidateSpider) else {}
        session.resolve_cross_submission(robots)
        print(as_json(session, opts.strict) if opts.json else as_text(session, opts.strict))
        sys.stdout.flush()
        self.exitcode = exit_code(session, opts.strict)
