"""The sitemap spider's render path: whether a page goes to the browser, and what comes back."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from scrapy import Request, signals
from scrapy.http import Response, TextResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.utils.response import get_base_url
from scrapy.utils.url import url_has_any_extension
from w3lib.html import strip_html5_whitespace

from sitemap_spider import request_meta as meta
from sitemap_spider import stats as keys
from sitemap_spider.crawl.links import DENY_EXTENSIONS, LINK_ATTRS, LINK_TAGS
from sitemap_spider.crawl.middlewares import settle_bad_urls
from sitemap_spider.crawl.pages import canonical_from_html, robots_from_meta
from sitemap_spider.crawl.retries import RetryLater
from sitemap_spider.crawl.urls import resolved
from sitemap_spider.render.known import ScriptSetKnowledge
from sitemap_spider.render.learning import PageReading
from sitemap_spider.render.renderer import HANDED_OVER, Renderer
from sitemap_spider.render.revisits import Revisits, history_mark
from sitemap_spider.sitemaps import normalize_url

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.link import Link
    from twisted.python.failure import Failure

    from sitemap_spider.config import CrawlTarget, SitemapConfig
    from sitemap_spider.crawl.links import LinkFinder
    from sitemap_spider.crawl.urls import Site
    from sitemap_spider.crawl.mode import Mode
    from sitemap_spider.render.browser import Browser
    from sitemap_spider.sitemaps import SitemapEntry


def links_to_site(response: TextResponse, site: Site, strip_params: Iterable[str] = ()) -> bool:
    """Whether the static HTML links a page on the site, as the spider's link extractor reads links.

    Asked of every page with navigation scripts, so it stops at the first such link instead
    of extracting them all: Scrapy's LinkExtractor here took 15% of a crawl's CPU on a real
    Hexo blog (py-spy), where every page loads the theme's scripts.
    """
    base = get_base_url(response)
    for element in response.selector.root.iter(*LINK_TAGS):
        for attribute in LINK_ATTRS:
            href = element.get(attribute)
            if not href:
                continue
            url = resolved(base, strip_html5_whitespace(href), strip_params)
            if url is not None and not url_has_any_extension(url, DENY_EXTENSIONS):
                if site.in_scope(site.to_crawl(url)):
                    return True
    return False


class RenderingMixin:
    """Rendering for :class:`~sitemap_spider.crawl.spider.SitemapSpider`.

    The spider gives it ``config``, ``target``, ``_request`` (a request to parse)
    and ``_judge`` (list a page and follow its links).
    """

    config: SitemapConfig
    target: CrawlTarget
    crawl_mode: Mode
    renderer: Renderer
    revisits: Revisits
    link_extractor: LinkExtractor
    link_finder: LinkFinder
    _links_cache: WeakKeyDictionary[TextResponse, list[Link]]

    if TYPE_CHECKING:  # defined by the spider; declared here for the type checker

        def _request(self, url: str, skip: str | None = None) -> Request: ...

        def _judge(self, response: TextResponse, facts: dict[str, Any]) -> Iterator[Request | SitemapEntry]: ...

    def _set_up_rendering(self, crawler: Crawler, browser: Browser | None) -> None:
        """The renderer, and the link extractor its decision reads; once config and target are set."""
        config = self.config
        self.renderer = Renderer(
            crawler,
            self.target.render_mode(config),
            browser,
            idle_timeout=config.render_idle_timeout,
            timeout=config.render_timeout,
            reading=PageReading(self._site_links, self._decisions),
            elsewhere=self._render_elsewhere,
        )
        crawler.signals.connect(self.renderer.log_unavailable, signal=signals.spider_closed)
        self.revisits = Revisits()
        history = self.crawl_mode.history
        if history is not None and self.renderer.mode == "auto":
            # Script sets whose probe found nothing in the last crawls are not probed again.
            renderer = self.renderer
            renderer.known = ScriptSetKnowledge(history.note("rendering", self.target.site.crawl_origin))
            self.crawl_mode.history_notes["rendering"] = lambda: renderer.known.dumps(renderer.script_digests)
        self._links_cache = WeakKeyDictionary()
        self.link_extractor = LinkExtractor(
            tags=LINK_TAGS,
            attrs=LINK_ATTRS,
            canonicalize=False,
            unique=True,
        )

    def _fetch_whole(self, mark: str | None) -> str | None:
        """Why a page the history knows is fetched whole for its render decision, not asked for a 304
        (None: a 304 will do); ``mark``: its record's (render/revisits.py). Only a crawl that renders asks."""
        return self.revisits.why(mark) if self.renderer.enabled else None

    def _history_mark(self, response: TextResponse, reason: object) -> str | None:
        """What the page's history record keeps of its render decision, ``reason`` (render/revisits.py)."""
        why = response.meta.get(meta.WHOLE_FOR_RENDER)
        if why:  # fetched whole for it, rather than asked for a 304
            self.crawler.stats.inc_value(keys.HISTORY_WHOLE_FOR_RENDER + why)  # type: ignore[attr-defined]
        # A page whose render or probe failed wants the browser still.
        failed = response.meta.get(meta.NO_RENDER) or response.meta.get(meta.PROBE_FAILED)
        browser = reason is not None or bool(failed)
        return history_mark(self.renderer.enabled, browser, response.meta.get(meta.SCRIPT_SET))

    def _render_elsewhere(self, response: TextResponse) -> bool:
        """Whether the crawl mode sends this page to another process to render (and judge)."""
        url = normalize_url(response.url, self.config.strip_params) or response.url
        return self.crawl_mode.hand_over_render(url, response.meta.get("depth", 0))

    def _render(self, url: str, reason: str, facts: dict[str, Any]) -> Iterator[Request | SitemapEntry]:
        """Send the page to the browser; or judge the DOM a probe of it built already."""
        if reason == HANDED_OVER:
            return
        probed = self.renderer.take_probed()
        if probed is None:
            yield self.renderer.request(url, reason, facts, self.parse_rendered, self.on_render_error)
            return
        self.renderer.carry_static_links(facts)
        yield from self._judge_rendered(probed, facts)

    def parse_rendered(self, response: Response) -> Iterator[Request | SitemapEntry]:
        """Judge a page by the DOM the browser built; headers are the static fetch's."""
        self.renderer.rendered()
        facts: dict[str, Any] = response.meta[meta.RENDER]
        if not isinstance(response, TextResponse):
            self.renderer.failed(facts["url"], "the browser returned no HTML")
            yield self._static_request(facts["url"])
            return
        yield from self._judge_rendered(response, facts)

    def _judge_rendered(self, response: TextResponse, facts: dict[str, Any]) -> Iterator[Request | SitemapEntry]:
        """Count what the DOM holds beyond the static HTML, then judge the page by it."""
        settle_bad_urls(response)  # a DOM's <base href> too (crawl/middlewares.py)
        static = frozenset(facts.get("static_links", ()))
        met = self.link_finder.met
        found = sum(1 for url in self._site_links(response) - static if url not in met)
        if found:
            self.crawler.stats.inc_value(keys.RENDER_URLS_FOUND, found)  # type: ignore[attr-defined]
        yield from self._judge(response, facts)

    def on_render_error(self, failure: Failure) -> Iterator[Request]:
        """A page the browser could not render is judged by its static HTML."""
        request: Request = failure.request  # type: ignore[attr-defined]
        if isinstance(failure.value, RetryLater):
            return  # the crawl stopped before the render again: not done (render/download.py)
        url = request.meta[meta.RENDER]["url"]
        self.renderer.failed(url, failure.getErrorMessage())
        yield self._static_request(url)
        self.crawl_mode.request_done(request)

    def _links(self, response: TextResponse) -> list[Link]:
        """The page's links, extracted once: the render decision may need them before _follow."""
        links = self._links_cache.get(response)
        if links is None:
            links = self._links_cache[response] = self.link_extractor.extract_links(response)
        return links

    def _site_links(self, response: TextResponse) -> frozenset[str]:
        """The page's links on the site, normalised as the crawl requests them."""
        site = self.target.site
        urls = set()
        for link in self._links(response):
            url = normalize_url(link.url, self.config.strip_params)
            if url is not None:
                url = site.to_crawl(url)
                if site.in_scope(url):
                    urls.add(url)
        return frozenset(urls)

    def _decisions(self, response: TextResponse) -> tuple[object, ...]:
        """What the page's HTML says of its listing: its robots directives and canonical link."""
        return robots_from_meta(response.selector, self.config.robots_agents), canonical_from_html(response.selector)

    def _has_site_links(self, response: TextResponse) -> bool:
        return links_to_site(response, self.target.site, self.config.strip_params)

    def _static_request(self, url: str) -> Request:
        request = self._request(url)
        request.meta[meta.NO_RENDER] = True
        return request.replace(dont_filter=True)
