"""The ``sitemap`` spider: finds the pages of one site and decides which belong in its sitemap."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from typing import Any

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response, TextResponse
from scrapy.settings import BaseSettings
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.response import get_meta_refresh
from twisted.python.failure import Failure

from sitemap_spider import request_meta as meta
from sitemap_spider import stats as keys
from sitemap_spider.config import CrawlTarget, SitemapConfig
from sitemap_spider.crawl.alternates import alternates_in_header
from sitemap_spider.crawl.enrich import Enricher
from sitemap_spider.crawl.links import LinkFinder
from sitemap_spider.crawl.middlewares import settle_bad_urls
from sitemap_spider.crawl.mode import Mode, mode_chooser
from sitemap_spider.crawl.canonicals import CanonicalMixin
from sitemap_spider.crawl.pages import RobotsDirectives, canonical_from_header, content_digest, content_type
from sitemap_spider.crawl.pages import is_html_response, robots_from_header, robots_from_meta
from sitemap_spider.crawl.recrawl import Recrawl, RecrawlMixin, response_facts
from sitemap_spider.crawl.report import CrawlReport, error_reason
from sitemap_spider.crawl.retries import DATALOSS_FLAG, RetryLater
from sitemap_spider.crawl.start_up import check_start_up, configure_settings
from sitemap_spider.crawl.urls import joined, repeated_segment_count, resolved
from sitemap_spider.render.browser import Browser, playwright_settings
from sitemap_spider.render.renderer import Pending
from sitemap_spider.render.spider_side import RenderingMixin
from sitemap_spider.rich_config import RichConfig
from sitemap_spider.sitemaps import MAX_LOC_LENGTH, RichEntry, SitemapEntry, SummarizedEntry, normalize_url

logger = logging.getLogger(__name__)


class SitemapSpider(CanonicalMixin, RecrawlMixin, RenderingMixin, Spider):
    """Crawl one site breadth-first; yield a :class:`SitemapEntry` for each indexable page.

    ``-a url=`` one or more start URLs (one origin); ``-a public_url=`` the
    origin to publish when crawling a staging or local copy.
    """

    name = "sitemap"
    config: SitemapConfig
    target: CrawlTarget
    crawl_mode: Mode
    link_finder: LinkFinder
    enricher: Enricher

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        super().update_settings(settings)
        configure_settings(settings)

    @classmethod
    def check_start_up(
        cls, settings: BaseSettings, arguments: dict[str, Any]
    ) -> tuple[SitemapConfig, CrawlTarget, Browser | None]:
        """Validate settings and arguments and find the browser; :class:`ConfigError` names the culprit."""
        return check_start_up(settings, arguments)

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> SitemapSpider:
        config, target, browser = cls.check_start_up(crawler.settings, kwargs)
        if browser is not None:
            # The spider is made before the settings freeze: the browser is ours to configure.
            crawler.settings.update(
                playwright_settings(browser, pages=config.render_pages, timeout=config.render_timeout),
                priority="addon",
            )
        spider: SitemapSpider = super().from_crawler(crawler, *args, **kwargs)
        spider.config = config
        spider.target = target
        # The settings chose the mode (SITEMAP_MODE_CHOOSER); the spider never asks which it is.
        spider.crawl_mode = mode_chooser(crawler.settings).for_crawler(crawler, config, target, kwargs)
        spider._set_up_rendering(crawler, browser)
        # Connected before the pipeline's handler, which publishes: it reuses this memory.
        crawler.signals.connect(spider._forget_links, signal=signals.spider_closed)
        spider.link_finder = LinkFinder(config.follow_nofollow)
        history = spider.crawl_mode.history
        kinds = RichConfig.DEFAULT_KINDS if history is None else history.extension_kinds(
            target.site.crawl_origin, RichConfig.DEFAULT_KINDS
        )
        spider.enricher = Enricher(config.rich, target.site, config.strip_params, spider._not_written, kinds)
        spider.crawl_mode.extension_kinds = spider.enricher.kinds
        if history is not None and spider.enricher.unknown_to_history and len(history):
            logger.info("%s: the listed pages are fetched whole once", spider.enricher.unknown_to_history)
        spider.recrawl = Recrawl(history, target, config.keep_failed_days, crawler, spider.enricher.knows,
                                 spider._fetch_whole)
        spider.crawl_mode.attach(spider._request, spider.link_finder.met)
        if browser is not None:
            logger.info("Rendering: %s, with %s", spider.renderer.mode, browser.description)
        return spider

    def _not_written(self, kind: str, reason: str, page: str, detail: str) -> None:
        self.report.not_written(kind, reason, page, detail)

    def _forget_links(self) -> None:
        self.link_finder.met.clear()

    @property
    def report(self) -> CrawlReport:
        """The crawl's ledger of URLs not listed (open once the crawl has started)."""
        report = self.crawl_mode.report
        assert report is not None
        return report

    async def start(self) -> AsyncIterator[Request]:
        if not self.crawl_mode.queues_start_urls():
            return
        for url in self.target.start_urls:
            yield self._request(url)
        self.crawl_mode.start_urls_queued()

    async def parse(self, response: Response) -> AsyncIterator[Request | SitemapEntry]:
        """Judge one downloaded page, or send it to the browser first; follow its links."""
        self.crawl_mode.page_seen()
        url = normalize_url(response.url, self.config.strip_params) or response.url
        if not self.target.site.in_scope(url):
            self.report.exclude(url, "offsite")
            return
        if response.status == 304:
            for result in self._not_modified(response, url):
                yield result
            return
        if response.status != 200:
            self.report.exclude(url, "status", str(response.status))
            return
        if DATALOSS_FLAG in response.flags:
            # Its links and content are incomplete (retries.py retried it): never judged.
            self.report.exclude(url, "error", "truncated body")
            return
        if not isinstance(response, TextResponse) or not is_html_response(response):
            self._left_out(url, response_facts(response), [], "non_html", content_type(response))
            return
        settle_bad_urls(response)  # the meta refresh middleware's, when it is on (crawl/middlewares.py)
        facts = self._static_facts(response, url)
        try:
            reason = await self.renderer.reason(response, lambda: self._has_site_links(response))
            if isinstance(reason, Pending):
                # The browser's verdict can take seconds (its start, a render): the static links go
                # first, so that the crawl goes on meanwhile. Judging the page follows them again,
                # which requests nothing twice and records them for the history.
                for request in self._follow(response, self._directives(response, facts)):
                    yield request
                reason = await reason
        except RetryLater:  # the crawl stopped while a script read or the probe waited (crawl/stopping.py,
            # render/download.py): the page is not judged, and not done (judged when the crawl resumes)
            response.meta[meta.NOT_DONE] = True
            return
        facts["history_render"] = self._history_mark(response, reason)  # for its record (crawl/recrawl.py)
        if reason is not None:
            for result in self._render(url, reason, facts):
                yield result
            return
        for result in self._judge(response, facts):
            yield result

    def _static_facts(self, response: TextResponse, url: str) -> dict[str, Any]:
        """What the static fetch says that rendering cannot change: the headers."""
        agents = self.config.robots_agents
        header_robots = robots_from_header(response.headers.getlist("X-Robots-Tag"), agents)
        header_canonical = canonical_from_header(response.headers.getlist("Link"))
        # Alternates of the Link header, resolved here: a rendered page keeps its headers.
        alternates = alternates_in_header(response.headers.getlist("Link")) if self.config.rich.hreflang else []
        return {
            "alternates": [(hreflang, joined(response.url, href) or href) for hreflang, href in alternates],
            "url": url,
            "noindex": header_robots.noindex,
            "nofollow": header_robots.nofollow,
            "canonical": self._resolve(response.url, header_canonical),
            **response_facts(response),
        }

    def _judge(self, response: TextResponse, facts: dict[str, Any]) -> Iterator[Request | SitemapEntry]:
        """Follow the page's links, then list it if it is indexable and canonical."""
        url: str = facts["url"]
        site = self.target.site
        directives = self._directives(response, facts)
        links: list[str] = []
        yield from self._follow(response, directives, links if self.recrawl.store is not None else None)

        canonical = self._canonical(response, facts)
        if canonical is not None:
            # A canonical URL is a link like the others: too long, a trap or denied, it is not fetched.
            if site.in_scope(canonical) and (request := self._link_request(canonical, response)) is not None:
                yield request
            links.append(canonical)  # one of its links, for a 304 of the page next time
        if directives.noindex and not self.config.include_noindex:
            self._left_out(url, facts, links, "noindex")
            return
        target = self._candidate(canonical)
        if target is not None and not site.in_scope(target):
            # Another site's page, which is neither fetched nor listed here: the canonical is believed.
            self._left_out(url, facts, links, "canonical", f"names {target}", target)
            return
        public = self._listable(url)
        if public is None:
            return
        # Rendered pages hash their DOM: an app shell is the same bytes on every route.
        digest = content_digest(response.body) if self.config.dedupe_content else None
        extensions = self.enricher.fields(response, public, facts.get("alternates", []))
        root = response.selector.root
        lastmod, record = self.recrawl.judge(url, public, facts, root, digest, links, extensions, target)
        entry = self._entry(public, lastmod, digest, extensions)
        if target is None:
            yield entry
        else:  # listed if its canonical URL is not, once the set is complete (canonicals.py)
            self.crawl_mode.take_candidate(entry, target)
        if record is not None:
            self.crawl_mode.observe(record)

    def _directives(self, response: TextResponse, facts: dict[str, Any]) -> RobotsDirectives:
        """The page's robots directives: its meta tags' and its headers'."""
        return robots_from_meta(response.selector, self.config.robots_agents).merge(
            RobotsDirectives(facts["noindex"], facts["nofollow"])
        )

    def _left_out(
        self, url: str, facts: dict[str, Any], links: list[str], reason: str, detail: str | None = None,
        canonical: str | None = None,
    ) -> None:  # fmt: skip
        """A page fetched well that is not listed for what it says of itself; its record asks for a 304 next time."""
        self.report.exclude(url, reason, detail)
        record = self.recrawl.left_out(url, facts, links, reason, detail, canonical)
        if record is not None:
            self.crawl_mode.observe(record)

    def _listable(self, url: str) -> str | None:
        """The public URL to list for a crawled one, or None (recorded) when its URL keeps it out."""
        public = self.target.site.to_public(url)
        if len(public) > MAX_LOC_LENGTH:
            self.report.exclude(url, "too_long")
            return None
        if not self.config.listable(public):
            self.report.exclude(url, "pattern")
            return None
        return public

    def _entry(
        self, public: str, lastmod: str | None, digest: str | None, extensions: Mapping[str, Any] | None = None
    ) -> SitemapEntry:
        rule = self.config.rule_for(public)
        kind = SummarizedEntry if extensions and "page" in extensions else RichEntry if extensions else SitemapEntry
        return kind(
            loc=public,
            lastmod=lastmod,
            changefreq=rule.changefreq if rule else None,
            priority=rule.priority if rule else None,
            content_digest=digest,
            **(extensions or {}),
        )

    def on_error(self, failure: Failure) -> Iterator[Request]:
        """A request that produced no page: record why (robots and scope record themselves).

        A page of the last set that fails for a reason that may pass (no response, 5xx,
        429) stays listed as it was, and its stored links are followed.
        """
        error = failure.value
        request: Request = failure.request  # type: ignore[attr-defined]
        if isinstance(error, RetryLater):
            return  # held for a retry: not done, nothing to record yet
        if isinstance(error, HttpError):
            response: Response = error.response
            url = normalize_url(response.url) or response.url
            if not (yield from self._keep(url, response.status, request)):
                self.report.exclude(url, "http_error", str(response.status))
        elif not isinstance(error, IgnoreRequest):  # IgnoreRequest: recorded where it was dropped
            logger.warning("Could not fetch %s: %s", request.url, failure.getErrorMessage())
            if not (yield from self._keep(request.url, 0, request)):
                self.report.exclude(request.url, error_reason(error), failure.getErrorMessage())
        self.crawl_mode.request_done(request)

    def _request(self, url: str, skip: str | None = None) -> Request:
        request = Request(url, callback=self.parse, errback=self.on_error, meta={meta.SKIP: skip} if skip else None)
        return request if skip else self.recrawl.prepare(request)

    def _follow(
        self, response: TextResponse, directives: RobotsDirectives, every: list[str] | None = None
    ) -> Iterator[Request]:
        """Request the page's new links; ``every`` receives all the links followed (for the history)."""
        if directives.nofollow and not self.config.follow_nofollow:
            return
        # Most links of a page point to pages met before (navigation, footers): the finder
        # drops them before they are resolved, normalised, made Requests and fingerprinted,
        # which was 2/3 of the crawl's CPU (BENCHMARKS.md).
        hrefs = self.link_finder.new_links(response, every)
        # Refreshes the MetaRefreshMiddleware did not take as redirects (long delays).
        refresh = get_meta_refresh(response)[1]
        if refresh:
            hrefs.append(refresh)
            if every is not None:
                every.append(refresh)
        yield from self._requests_for(hrefs, response)

    def _hand_over(self, url: str, response: Response | Request, skip: str | None = None) -> bool:
        """Send a URL another process owns to it (a crawl mode with more than one process)."""
        return self.crawl_mode.hand_over(url, response.meta.get("depth", 0) + 1, skip)

    def _requests_for(self, hrefs: Iterable[str], response: Response | Request) -> Iterator[Request]:
        """Requests for links found on a page (or stored for it: ``response`` may be its request)."""
        site = self.target.site
        offsite = 0
        for href in hrefs:
            url = normalize_url(href, self.config.strip_params)
            if url is None:
                continue
            url = site.to_crawl(url)
            if url != href and not self.link_finder.mark(url):
                continue  # another spelling of a link met before
            if not site.in_scope(url):
                offsite += 1
                continue
            if (request := self._link_request(url, response)) is not None:
                yield request
        if offsite:
            self.crawler.stats.inc_value(keys.LINKS_OFFSITE, offsite)

    def _link_request(self, url: str, source: Response | Request) -> Request | None:
        """A link's request (None: another process fetches it); one not to fetch says why (meta SKIP)."""
        skip = self._skip_reason(url)
        return None if self._hand_over(url, source, skip) else self._request(url, skip)

    def _skip_reason(self, url: str) -> str | None:
        """Why a link on the site is not to be fetched at all, if it is not."""
        public = self.target.site.to_public(url)
        if len(public) > MAX_LOC_LENGTH:
            return "too_long"
        if repeated_segment_count(url) > self.config.max_segment_repeats:
            return "trap"
        if any(pattern.search(public) for pattern in self.config.deny):
            return "denied"
        return None

    def _resolve(self, base: str, href: str | None) -> str | None:
        """An href as the normalised URL to fetch, or None."""
        # None for none, or for no URL: a canonical that is no URL is none.
        url = None if href is None else resolved(base, href, self.config.strip_params)
        return None if url is None else self.target.site.to_crawl(url)
