"""Decides which pages the browser renders, and builds the requests that render them."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.http import TextResponse
from scrapy.utils.response import get_base_url

from sitemap_spider import request_meta as meta
from sitemap_spider import stats as keys
from sitemap_spider.render.browser import INSTALL_HINT, Browser, settle
from sitemap_spider.render.signs import builds_navigation, site_script_urls, static_render_reason
from sitemap_spider.sitemaps.urls import origin_of

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

# Script verdicts kept; a site has far fewer distinct scripts than this.
_MAX_SCRIPTS = 10_000
_MAX_SCRIPT_BYTES = 4 * 1024 * 1024
# Renders that fail before the first success: the browser cannot work here.
_FAILURES_BEFORE_GIVING_UP = 3


class Renderer:
    """The ``render`` mode at work: which pages need a browser, and rendering them."""

    def __init__(
        self, crawler: Crawler, mode: str, browser: Browser | None, *, idle_timeout: float, timeout: float
    ) -> None:
        self.crawler = crawler
        self.mode = mode
        self.browser = browser
        self.idle_timeout = idle_timeout
        self.timeout = timeout
        self._scripts: dict[str, bool] = {}
        self._rendered_script_sets: set[tuple[str, ...]] = set()
        self._failures = 0
        self._successes = 0
        self.unavailable: Counter[str] = Counter()

    @property
    def enabled(self) -> bool:
        return self.mode != "never" and self.browser is not None

    def _inc(self, key: str) -> None:
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value(key)

    async def reason(self, response: TextResponse, has_site_links: Callable[[], bool]) -> str | None:
        """Why this static page should be rendered; ``None`` to judge it as it is.

        Navigation that shared script files build (a menu, a tree) is the same on
        every page that loads them: once one such page is rendered, a page with the
        same navigation scripts and links of its own in its static HTML is not.
        """
        if self.mode == "never" or response.meta.get(meta.NO_RENDER):
            return None
        if self.mode == "always":
            reason: str | None = "always"
        else:
            reason = static_render_reason(response.selector, get_base_url(response))
            if reason is None:
                scripts = await self._navigation_scripts(response)
                if scripts and scripts in self._rendered_script_sets and has_site_links():
                    self._inc(keys.RENDER_SKIPPED_SCRIPTS_RENDERED_BEFORE)
                    return None
                if scripts:
                    reason = "script_file"
                    if self.enabled and len(self._rendered_script_sets) < _MAX_SCRIPTS:
                        self._rendered_script_sets.add(scripts)
        if reason is None:
            return None
        if not self.enabled:
            self.unavailable[reason] += 1
            self._inc(keys.RENDER_UNAVAILABLE + reason)
            return None
        return reason

    def request(self, url: str, reason: str, facts: dict[str, Any], callback: Callable[..., Any],
                errback: Callable[..., Any]) -> Request:
        """A request that renders ``url`` in the browser, carrying its static facts."""
        from scrapy_playwright.page import PageMethod

        self._inc(keys.RENDER_REASON + reason)
        return Request(
            url,
            callback=callback,
            errback=errback,
            dont_filter=True,  # the static fetch of this URL went through the filter already
            meta={
                "playwright": True,
                "playwright_context": "sitemap",
                "playwright_page_goto_kwargs": {"wait_until": "load"},
                "playwright_page_methods": [PageMethod(settle, self.idle_timeout * 1000)],
                "download_timeout": self.timeout + self.idle_timeout + 5,
                "dont_retry": True,
                meta.RENDER: facts,
            },
        )

    def rendered(self) -> None:
        self._successes += 1
        self._inc(keys.RENDER_PAGES)

    def failed(self, url: str, error: str) -> None:
        """A render failed: the page falls back to its static HTML."""
        self._failures += 1
        self._inc(keys.RENDER_FAILED)
        level = logging.WARNING if self._failures <= 3 else logging.DEBUG
        logger.log(level, "Rendering %s failed (%s); using its static HTML", url, error)
        if self._successes == 0 and self._failures >= _FAILURES_BEFORE_GIVING_UP and self.browser:
            logger.error(
                "The browser (%s) failed %d times and never rendered a page; the crawl goes on "
                "without rendering. To fix: %s",
                self.browser.description,
                self._failures,
                INSTALL_HINT,
            )
            self.browser = None

    def log_unavailable(self) -> None:
        """Say once, at the end, how many pages would have needed a browser."""
        total = sum(self.unavailable.values())
        if total:
            reasons = ", ".join(f"{reason} {count}" for reason, count in self.unavailable.most_common())
            logger.warning(
                "%d page(s) looked JavaScript-built (%s) but no browser was available, so links "
                "that scripts build may be missing from the sitemap. To render them, %s.",
                total,
                reasons,
                INSTALL_HINT,
            )

    async def _navigation_scripts(self, response: TextResponse) -> tuple[str, ...]:
        """The page's same-site script files that build navigation."""
        found = []
        for url in site_script_urls(response.selector, get_base_url(response), origin_of(response.url)):
            verdict = self._scripts.get(url)
            if verdict is None:
                verdict = await self._inspect_script(url)
            if verdict:
                found.append(url)
        return tuple(sorted(found))

    async def _inspect_script(self, url: str) -> bool:
        assert self.crawler.engine is not None
        try:
            response = await self.crawler.engine.download_async(
                Request(
                    url,
                    meta={meta.RESOURCE: True, "dont_redirect": True, "download_timeout": self.timeout},
                )
            )
        except IgnoreRequest:
            verdict = False
        except Exception as exc:  # a script we cannot read builds nothing we can see
            logger.debug("Could not read script %s: %s", url, exc)
            verdict = False
        else:
            text = response.body[:_MAX_SCRIPT_BYTES].decode("utf-8", "replace")
            verdict = response.status == 200 and builds_navigation(text)
        self._inc(keys.RENDER_SCRIPTS_READ)
        if len(self._scripts) < _MAX_SCRIPTS:
            self._scripts[url] = verdict
        return verdict
