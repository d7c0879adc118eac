"""The spider's side of the crawl history: conditional requests, dates from history, pages kept on a bad day.

The crawl mode opens the history (``crawl_mode.history``) and stages what the spider
observes (``crawl_mode.observe``) until the set is published; this module reads the
records and builds the new ones. Without a history, only the dates a page gives itself
(Last-Modified, metadata) are used, and every request is unconditional.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from scrapy import Request

from sitemap_spider import request_meta as meta
from sitemap_spider import stats as keys
from sitemap_spider.crawl.dates import (
    Evidence,
    Prior,
    choose_lastmod,
    metadata_date,
    parse_http_date,
    stored_lastmod,
)
from sitemap_spider.crawl.fingerprint import content_fingerprint, same_content
from sitemap_spider.history.record import EXTENSIONS_UNKNOWN, PageRecord, exclusion, pack_links
from sitemap_spider.sitemaps import fields_json

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from sitemap_spider.config import CrawlTarget
    from sitemap_spider.crawl.enrich import Enricher
    from sitemap_spider.crawl.links import LinkFinder
    from sitemap_spider.crawl.mode import Mode
    from sitemap_spider.crawl.report import CrawlReport
    from sitemap_spider.history.record import Outcome
    from sitemap_spider.history.store import HistoryStore
    from sitemap_spider.sitemaps import SitemapEntry

logger = logging.getLogger(__name__)

DAY = 86_400.0
#: Statuses after which a page of the last set is kept listed (with no response at all: 0).
TRANSIENT_STATUSES = frozenset({0, 408, 429})


def is_transient(status: int) -> bool:
    """Whether a failure may be over tomorrow: no response, a timeout, 429 or a 5xx."""
    return status in TRANSIENT_STATUSES or 500 <= status < 600


def response_facts(response: Response) -> dict[str, Any]:
    """What the static fetch says of the page's date and validators (carried to a render)."""
    fetched_at = time.time()
    sent = parse_http_date(response.headers.get("Date"))
    header = response.headers.get("Last-Modified")
    etag = response.headers.get("ETag")
    return {
        "last_modified": header.decode("latin-1") if header else None,
        "etag": etag.decode("latin-1") if etag else None,
        # A server's clock ahead of ours would let its Date vouch for a lastmod in the future: the
        # response is never later than its receipt.
        "response_time": min(sent.timestamp(), fetched_at) if sent is not None else fetched_at,
        "fetched_at": fetched_at,
    }


class Recrawl:
    """Reads the history for the spider and builds this crawl's records."""

    def __init__(
        self,
        store: HistoryStore | None,
        target: CrawlTarget,
        keep_failed_days: float,
        crawler: Crawler,
        knows_extensions: Callable[[str | None], bool] = lambda stored: True,
        fetch_whole: Callable[[str | None], str | None] = lambda render: None,
    ) -> None:
        """``knows_extensions``: whether a listed page's stored extensions hold all a 304 of it
        needs (Enricher.knows); ``fetch_whole``: why a page whose record holds this render decision
        is fetched whole, or None (render/revisits.py)."""
        self.store = store
        self.origin = target.site.crawl_origin
        # Links written with the public origin (a staging copy's) are the crawled origin's.
        self._link_origins = (self.origin, target.site.public_origin)
        self.keep_seconds = keep_failed_days * DAY
        self.crawler = crawler
        self.knows_extensions = knows_extensions
        self.fetch_whole = fetch_whole

    @property
    def stats(self) -> StatsCollector:
        assert self.crawler.stats is not None  # the crawl has started
        return self.crawler.stats

    def record(self, url: str) -> PageRecord | None:
        """The page's record, its lastmod left out if the date rules now refuse it (a placeholder
        an earlier release kept): the 304, kept-page and unchanged-content paths all read it here."""
        record = None if self.store is None else self.store.get(url)
        if record is None or record.lastmod is None:
            return record
        lastmod = stored_lastmod(record.lastmod, record.last_modified)
        return record if lastmod == record.lastmod else dataclasses.replace(record, lastmod=lastmod)

    def prepare(self, request: Request) -> Request:
        """Ask the server whether the page changed since the last crawl, when the history knows it."""
        record = self.record(request.url)
        # A record that does not know the page's extensions could not list it from a 304, nor
        # one of an earlier version that left out a page for any canonical elsewhere (canonicals.py).
        if (
            record is None
            or record.extensions == EXTENSIONS_UNKNOWN
            or not (record.etag or record.last_modified)
            or (record.excluded is None and not self.knows_extensions(record.extensions))
            or (record.canonical is None and (record.exclusion or ("",))[0] == "canonical")
            or self._for_render(record, request)
        ):
            return request
        if record.etag:
            request.headers[b"If-None-Match"] = record.etag
        if record.last_modified:
            request.headers[b"If-Modified-Since"] = record.last_modified
        request.meta[meta.CONDITIONAL] = True
        # A 304 comes to the callback (HttpErrorMiddleware would drop it; Redirect and
        # Retry middlewares leave it alone).
        request.meta["handle_httpstatus_list"] = [304]
        return request

    def _for_render(self, record: PageRecord, request: Request) -> bool:
        """Whether the page is fetched whole for its render decision: what its scripts build may differ."""
        why = self.fetch_whole(record.render)
        if why is not None:
            request.meta[meta.WHOLE_FOR_RENDER] = why  # counted when it is judged (render/spider_side.py)
        return why is not None

    def judge(
        self,
        url: str,
        loc: str,
        facts: dict[str, Any],
        root: Any,
        digest: str | None,
        links: list[str],
        extensions: Mapping[str, Any],
        canonical: str | None = None,
    ) -> tuple[str | None, PageRecord | None]:
        """The page's lastmod, and its new record (None without a history); ``extensions``: the
        page's RichEntry fields, kept in the record; ``canonical``: the other URL it names as
        canonical when it waits on it (canonicals.py)."""
        response_time = datetime.fromtimestamp(facts["response_time"], UTC)
        fetched_at = datetime.fromtimestamp(facts["fetched_at"], UTC)
        prior = self.record(url)
        fingerprint = content_fingerprint(root) if self.store is not None else None
        evidence = Evidence(
            last_modified=facts["last_modified"],
            response_time=response_time,
            metadata=metadata_date(root, response_time),
            fingerprint=fingerprint,
            fetched_at=fetched_at,
        )
        lastmod = choose_lastmod(evidence, None if prior is None else Prior(
            prior.fingerprint, prior.last_modified, prior.lastmod
        ))
        if self.store is None:
            return lastmod, None
        outcome: Outcome = (
            "new" if prior is None else "unchanged" if same_content(prior.fingerprint, fingerprint) else "changed"
        )
        self.stats.inc_value(keys.HISTORY + outcome)
        now = facts["fetched_at"]
        record = PageRecord(
            url=url,
            loc=loc,
            fingerprint=fingerprint,
            last_modified=facts["last_modified"],
            etag=facts["etag"],
            first_seen=now if prior is None else prior.first_seen,
            changed_at=prior.changed_at if prior is not None and outcome == "unchanged" else now,
            lastmod=lastmod,
            status=200,
            last_ok=now,
            outlinks=pack_links(links, *self._link_origins),
            content_digest=digest,
            outcome=outcome,
            extensions=fields_json(extensions) if extensions else None,
            render=facts.get("history_render"),
            canonical=canonical,
        )
        return lastmod, record

    def left_out(
        self,
        url: str,
        facts: dict[str, Any],
        links: list[str],
        reason: str,
        detail: str | None,
        canonical: str | None = None,
    ) -> PageRecord | None:
        """The record of a page fetched well but not listed for what it says of itself (None without a history).

        Kept so that the next crawl asks for it conditionally: a 304 gives the same verdict and
        its stored links lead on, where it used to be fetched whole at every recrawl.
        """
        if self.store is None or not (facts["etag"] or facts["last_modified"]):
            return None  # nothing to revalidate with: it is fetched whole anyway
        prior = self.record(url)
        now = facts["fetched_at"]
        return PageRecord(
            url=url,
            loc="",
            fingerprint=None,
            last_modified=facts["last_modified"],
            etag=facts["etag"],
            first_seen=now if prior is None else prior.first_seen,
            changed_at=None,
            lastmod=None,
            status=200,
            last_ok=now,
            outlinks=pack_links(links, *self._link_origins),
            outcome="new" if prior is None else "unchanged",
            excluded=exclusion(reason, detail),
            render=facts.get("history_render"),
            canonical=canonical,
        )

    def not_modified(self, url: str, response: Response) -> PageRecord | None:
        """The record of a page that answered 304: as before, fetched well now; None if we did not ask."""
        record = self.record(url)
        if record is None or not response.meta.get(meta.CONDITIONAL):
            return None
        self.stats.inc_value(keys.HISTORY_NOT_MODIFIED)
        etag = response.headers.get("ETag")  # a 304 may carry the validator anew
        return dataclasses.replace(
            record,
            etag=etag.decode("latin-1") if etag else record.etag,
            status=304,
            last_ok=time.time(),
            outcome="not_modified",
        )

    def kept(self, url: str, status: int) -> PageRecord | None:
        """The record of a page of the last set that failed now but is kept listed, or None."""
        record = self.record(url)
        if record is None or record.excluded is not None or not is_transient(status):
            return None  # unknown, left out last time too, or gone for good
        if time.time() - record.last_ok > self.keep_seconds:
            return None
        return dataclasses.replace(record, status=status, outcome="kept")


class RecrawlMixin:
    """The spider's answers to a 304 and to a failure of a page the history knows.

    :class:`~sitemap_spider.crawl.spider.SitemapSpider` gives it the report, the crawl
    mode, the link finder, and how it lists a URL and requests links.
    """

    recrawl: Recrawl
    crawl_mode: Mode
    link_finder: LinkFinder
    enricher: Enricher
    target: CrawlTarget

    if TYPE_CHECKING:  # defined by the spider; declared here for the type checker

        @property
        def report(self) -> CrawlReport: ...

        def _listable(self, url: str) -> str | None: ...

        def _entry(
            self, public: str, lastmod: str | None, digest: str | None, extensions: Mapping[str, Any] | None = None
        ) -> SitemapEntry: ...

        def _candidate(self, canonical: str | None) -> str | None: ...

        def _requests_for(self, hrefs: Iterable[str], response: Response | Request) -> Iterator[Request]: ...

    def _stored_links(self, record: PageRecord, source: Response | Request) -> Iterator[Request]:
        links = [link for link in record.links(self.target.site.crawl_origin) if self.link_finder.mark(link)]
        return self._requests_for(links, source)

    def _stored_entry(self, public: str, record: PageRecord) -> tuple[SitemapEntry, str | None]:
        """The entry of a page as its record has it, with its extensions (those the settings still ask
        for), and the other URL it names as canonical when it waits on it (canonicals.py)."""
        extensions = self.enricher.restored(record.extensions)
        entry = self._entry(public, record.lastmod, record.content_digest, extensions)
        return entry, self._candidate(record.canonical)

    def _not_modified(self, response: Response, url: str) -> Iterator[Request | SitemapEntry]:
        """A 304: the page is as the history has it; its stored links lead the crawl on."""
        record = self.recrawl.not_modified(url, response)
        if record is None:
            self.report.exclude(url, "status", "304 without a history record")
            return
        yield from self._stored_links(record, response)
        left_out = record.exclusion
        if left_out is not None:
            # Unchanged since it was left out: the same verdict, without reading it again.
            self.report.exclude(url, *left_out)
            self.crawl_mode.observe(record)
            return
        public = self._listable(url)
        if public is not None:
            entry, canonical = self._stored_entry(public, record)
            if canonical is None:
                yield entry
            else:
                self.crawl_mode.take_candidate(entry, canonical)
            self.crawl_mode.observe(record)

    def _keep(self, url: str, status: int, request: Request) -> Generator[Request, None, bool]:
        """List a page of the last set that failed now as it was, follow its stored links; whether it was kept."""
        record = self.recrawl.kept(url, status)
        public = None if record is None else self._listable(url)
        if record is None or public is None:
            return False
        logger.warning("Kept %s listed as the last crawl saw it (this crawl: %s)", url, status or "no response")
        self.crawl_mode.keep_previous(*self._stored_entry(public, record), record)
        yield from self._stored_links(record, request)
        return True
