"""Decides which pages the browser renders, and builds the requests that render them."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Coroutine, Generator
from typing import TYPE_CHECKING, Any, Final

from scrapy import Request
from scrapy.http import TextResponse
from scrapy.utils.response import get_base_url

from sitemap_spider import request_meta as meta
from sitemap_spider import stats as keys
from sitemap_spider.crawl.retries import RetryLater
from sitemap_spider.crawl.stopping import closing
from sitemap_spider.render.browser import INSTALL_HINT, Browser
from sitemap_spider.render.known import ScriptSetKnowledge, quiet_render, script_digest
from sitemap_spider.render.learning import RENDERS_TO_LEARN, PageReading, Plan, TemplateLearner
from sitemap_spider.render.learning import template_signature
from sitemap_spider.render.ready import settle
from sitemap_spider.render.revisits import script_set_key
from sitemap_spider.render.signs import builds_navigation, site_script_urls, static_render_reason
from sitemap_spider.sitemaps import origin_of

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

# Script verdicts kept; a site has far fewer distinct scripts than this.
_MAX_SCRIPTS = 10_000
_MAX_SCRIPT_BYTES = 4 * 1024 * 1024
# Renders that fail before the first success: the browser cannot work here.
_FAILURES_BEFORE_GIVING_UP = 3
# Ahead of every static fetch (DEPTH_PRIORITY lowers a request's priority by one per level): a
# render queued behind the whole next level ran at the end of the crawl, and the pages only it
# finds were fetched after that, one more round trip on the crawl's wall time.
RENDER_PRIORITY: Final = 1_000
#: What :meth:`Renderer.reason` says of a page another process renders and judges: drop it here.
HANDED_OVER: Final = "handed_over"


class Pending:
    """A render decision that waits for the browser: a probe of the page's template, or another page's.

    Awaiting it gives the reason (or ``None``). The browser may take seconds to start and render,
    so the spider follows the page's static links first: the crawl goes on meanwhile.
    """

    __slots__ = ("_verdict",)

    def __init__(self, verdict: Coroutine[Any, Any, str | None]) -> None:
        self._verdict = verdict

    def __await__(self) -> Generator[Any, None, str | None]:
        return self._verdict.__await__()


class Renderer:
    """The ``render`` mode at work: which pages need a browser, and rendering them."""

    def __init__(
        self,
        crawler: Crawler,
        mode: str,
        browser: Browser | None,
        *,
        idle_timeout: float,
        timeout: float,
        reading: PageReading,
        elsewhere: Callable[[TextResponse], bool] = lambda response: False,
    ) -> None:
        self.crawler = crawler
        self.mode = mode
        self.browser = browser
        self.idle_timeout = idle_timeout
        self.timeout = timeout
        self._scripts: dict[str, bool] = {}
        self.script_digests: dict[str, str] = {}  # the script files read, as known.py recognises them
        self._rendered_script_sets: set[tuple[str, ...]] = set()
        self.known = ScriptSetKnowledge()  # what probes of script sets found, earlier crawls' too
        self._failures = 0
        self._successes = 0
        self.unavailable: Counter[str] = Counter()
        self.reading = reading
        self.elsewhere = elsewhere
        # The static links of the page reason() just sent to the browser: the spider asks for
        # its request at once (no await in between), and the request carries them.
        self._static_links: frozenset[str] | None = None
        # The DOM a probe of that same page built, when it gained: the spider judges it instead
        # of rendering the page a second time.
        self._probed: TextResponse | None = None
        self.learner = TemplateLearner()

    @property
    def enabled(self) -> bool:
        return self.mode != "never" and self.browser is not None

    def _inc(self, key: str) -> None:
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value(key)

    async def reason(self, response: TextResponse, has_site_links: Callable[[], bool]) -> str | Pending | None:
        """Why this static page should be rendered; ``None`` to judge it as it is; or :class:`Pending`.

        Navigation that shared script files build (a menu, a tree) is the same on
        every page that loads them: once one such page is rendered, a page with the
        same navigation scripts and links of its own in its static HTML is not.
        Past that, whether rendering pays is learnt per template (render/learning.py):
        the first pages of a template are rendered as probes, and judged statically
        when their render found nothing the static HTML lacked. Until a probe has
        answered, the reason is :class:`Pending`.
        """
        self._probed = None
        if self.mode == "never" or response.meta.get(meta.NO_RENDER):
            return None
        if self.mode == "always":
            return self._keep_links(response, self._wanted("always"))
        reason = static_render_reason(response.selector, get_base_url(response))
        script_files: tuple[str, ...] = ()
        if reason is None:
            script_files = await self._navigation_scripts(response)
            if script_files:  # for the page's history record (render/revisits.py)
                response.meta[meta.SCRIPT_SET] = script_set_key(script_files)
            if script_files and script_files in self._rendered_script_sets and has_site_links():
                self._inc(keys.RENDER_SKIPPED_SCRIPTS_RENDERED_BEFORE)
                return None
            found_nothing = script_files and self.known.found_nothing_before(script_files, self.script_digests)
            if found_nothing and has_site_links():
                self._inc(keys.RENDER_SKIPPED_SCRIPTS_FOUND_NOTHING_BEFORE)
                return None
            if script_files:
                reason = "script_file"
                if self.enabled and len(self._rendered_script_sets) < _MAX_SCRIPTS:
                    self._rendered_script_sets.add(script_files)
        if reason is None or not self.enabled:
            return self._wanted(reason)
        if self.elsewhere(response):
            self._inc(keys.RENDER_HANDED_OVER)
            return HANDED_OVER
        return self._learnt(response, reason, script_files)

    def _keep_links(self, response: TextResponse, reason: str | None) -> str | None:
        """Remember the static links of a page going to the browser: what rendering finds beyond them is its gain."""
        self._static_links = None if reason is None else self.reading.site_links(response)
        return reason

    def _wanted(self, reason: str | None) -> str | None:
        """The page goes to the browser for ``reason``; None when there is none, or no browser."""
        if reason is None:
            return None
        if not self.enabled:
            self.unavailable[reason] += 1
            self._inc(keys.RENDER_UNAVAILABLE + reason)
            return None
        self._inc(keys.RENDER_REASON + reason)
        return reason

    def _learnt(self, response: TextResponse, reason: str, navigation: tuple[str, ...]) -> str | Pending | None:
        """``reason`` unless the page's template has shown that rendering it finds nothing."""
        script_files = site_script_urls(response.selector, get_base_url(response), origin_of(response.url))
        signature = template_signature(response.selector, script_files)
        plan = self.learner.plan(signature)
        if plan is Plan.RENDER or plan is Plan.SKIP:
            return self._keep_links(response, self._planned(reason, plan))
        return Pending(self._verdict(response, reason, signature, plan, navigation))

    def _planned(self, reason: str, plan: Plan) -> str | None:
        if plan is Plan.RENDER:
            return self._wanted(reason)
        self._inc(keys.RENDER_SKIPPED_NO_GAIN)
        return None

    async def _verdict(self, response: TextResponse, reason: str, signature: str, plan: Plan,
                       navigation: tuple[str, ...]) -> str | None:
        """What a probe of this page (or of another page of its template, awaited) says of it."""
        while plan is Plan.WAIT:
            await self.learner.wait(signature)
            if not self.enabled:
                return self._keep_links(response, self._wanted(reason))
            plan = self.learner.plan(signature)
        if plan is Plan.RENDER or plan is Plan.SKIP:
            return self._keep_links(response, self._planned(reason, plan))
        if plan is Plan.SAMPLE:
            self._inc(keys.RENDER_SAMPLES)
        try:
            if closing(self.crawler):  # a page woken by a probe that a stop ended: no new probe
                raise RetryLater(f"the crawl stopped before {response.url} was probed")
            rendered = None if self._wanted(reason) is None else await self._probe(response, reason)
        except RetryLater:  # the crawl stopped while the probe waited (render/download.py)
            self.learner.failed(signature)  # it taught nothing: the pages waiting for it go on
            raise
        if rendered is None:  # no browser, or the render failed: the static HTML is all there is
            self.learner.failed(signature)
            response.meta[meta.PROBE_FAILED] = True
            return self._keep_links(response, None)
        gained = self.reading.gain(response, rendered)
        if navigation:  # kept for the next crawls only if its scripts wrote no link (known.py)
            self.known.learn(navigation, gained or not quiet_render(response, rendered), self.script_digests)
        dropped, regained = self.learner.dropped, self.learner.regained
        self.learner.learn(signature, gained)
        if self.learner.dropped > dropped:
            self._inc(keys.RENDER_TEMPLATES_NO_GAIN)
            logger.info("Rendering found nothing on %d pages like %s: their template is judged statically now",
                        RENDERS_TO_LEARN, response.url)
        if self.learner.regained > regained:
            self._inc(keys.RENDER_TEMPLATES_REGAINED)
            logger.info("A sample render of %s found more than its static HTML: its template is rendered again",
                        response.url)
        if not gained:
            return self._keep_links(response, None)
        # Nothing is awaited from here until the spider takes the probed DOM and the static links.
        self._probed = rendered
        return self._keep_links(response, reason)

    def take_probed(self) -> TextResponse | None:
        """The DOM that probing the page :meth:`reason` just sent to the browser built, if any."""
        probed, self._probed = self._probed, None
        return probed

    async def _probe(self, response: TextResponse, reason: str) -> TextResponse | None:
        """Render the page now to see whether it gains anything; None when the render failed.

        The render is fetched by the engine directly, not through the scheduler: pages of
        the template wait for it, and waiting pages must not hold up their own answer.
        """
        assert self.crawler.engine is not None
        request = self.request(response.url, reason, {}, None, None)
        # The spider may judge this DOM in place of the page's: its links are one level deeper.
        request.meta["depth"] = response.meta.get("depth", 0)
        try:
            rendered = await self.crawler.engine.download_async(request)
        except RetryLater:
            raise
        except Exception as exc:  # any failure of the browser: the page keeps its static HTML
            self.failed(response.url, str(exc) or type(exc).__name__)
            return None
        if not isinstance(rendered, TextResponse) or not 200 <= rendered.status < 300:
            # An error page (a 503 in an outage, a 429) is not the page's DOM: judged against it, the
            # probe "found nothing" and counted the page's template towards static judging.
            got = f"got a {rendered.status}" if isinstance(rendered, TextResponse) else "returned no HTML"
            self.failed(response.url, f"the browser {got}")
            return None
        self._successes += 1
        self._inc(keys.RENDER_PROBES)
        return rendered

    def request(self, url: str, reason: str, facts: dict[str, Any], callback: Callable[..., Any] | None,
                errback: Callable[..., Any] | None) -> Request:
        """A request that renders ``url`` in the browser, carrying its static facts."""
        from scrapy_playwright.page import PageMethod

        self.carry_static_links(facts)
        return Request(
            url,
            callback=callback,
            errback=errback,
            dont_filter=True,  # the static fetch of this URL went through the filter already
            priority=RENDER_PRIORITY,
            meta={
                "playwright": True,
                "playwright_context": "sitemap",
                "playwright_page_goto_kwargs": {"wait_until": "load"},
                "playwright_page_methods": [PageMethod(settle, self.idle_timeout * 1000)],
                "download_timeout": self.timeout + self.idle_timeout + 5,
                "dont_retry": True,
                # A render takes far longer than a fetch; AutoThrottle would read that as a slow
                # server and space out every request to the site.
                "autothrottle_dont_adjust_delay": True,
                meta.RENDER: facts,
            },
        )

    def carry_static_links(self, facts: dict[str, Any]) -> None:
        """Put the static links of the page :meth:`reason` sent to the browser into its ``facts``."""
        if facts and self._static_links is not None:
            facts["static_links"] = sorted(self._static_links)
            self._static_links = None

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
                "without rendering. To fix: %s", self.browser.description, self._failures, INSTALL_HINT,
            )  # fmt: skip
            self.browser = None

    def log_unavailable(self) -> None:
        """Say once, at the end, how many pages would have needed a browser."""
        total = sum(self.unavailable.values())
        if total:
            reasons = ", ".join(f"{reason} {count}" for reason, count in self.unavailable.most_common())
            logger.warning(
                "%d page(s) looked JavaScript-built (%s) but no browser was available, so links "
                "that scripts build may be missing from the sitemap. To render them, %s.",
                total, reasons, INSTALL_HINT,
            )  # fmt: skip

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
        resource = {meta.RESOURCE: True, "dont_redirect": True, "download_timeout": self.timeout}
        try:
            response = await self.crawler.engine.download_async(Request(url, meta=resource))
        except RetryLater:  # let go unread at a stop (crawl/stopping.py): no verdict, the page is not done
            raise
        except Exception as exc:  # a script we cannot read (an error, robots.txt) builds nothing we can see
            logger.debug("Could not read script %s: %s", url, exc)
            verdict = False
        else:
            text = response.body[:_MAX_SCRIPT_BYTES].decode("utf-8", "replace")
            verdict = response.status == 200 and builds_navigation(text)
            if response.status == 200 and len(self.script_digests) < _MAX_SCRIPTS:
                self.script_digests[url] = script_digest(response.body)
        self._inc(keys.RENDER_SCRIPTS_READ)
        if len(self._scripts) < _MAX_SCRIPTS:
            self._scripts[url] = verdict
        return verdict
