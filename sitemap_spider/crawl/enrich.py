"""The extension data of a listed page: its hreflang alternates, images, videos and article.

The spider asks once per listed page; with every feature off, or a page that has none of
them, the page is listed as a plain SitemapEntry. What cannot be written (a video without a
title, an article without a language) is counted and reported here; alternates are checked
when the set is published (sitemaps/xml/hreflang.py), where reciprocity is known.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any, Final
from urllib.parse import urlsplit

from scrapy.http import TextResponse
from scrapy.utils.response import get_base_url

from sitemap_spider import default_settings
from sitemap_spider.crawl.alternates import alternates_in_html
from sitemap_spider.crawl.media import image_sources
from sitemap_spider.crawl.pages import page_summary
from sitemap_spider.crawl.structured import (
    RawVideo,
    article,
    duration_seconds,
    html_lang,
    json_ld,
    videos_in_elements,
    videos_in_json_ld,
    videos_in_microdata,
)
from sitemap_spider.crawl.urls import Site, resolved
from sitemap_spider.history.record import EXTENSIONS_UNKNOWN
from sitemap_spider.rich_config import RichConfig, noted_kinds
from sitemap_spider.sitemaps import (
    MAX_IMAGES,
    MAX_VIDEO_DURATION,
    Alternate,
    InvalidEntryError,
    News,
    Video,
    check_loc,
    missing_video_field,
    news_language,
    page_summary_of,
    parse_lastmod,
    rich_fields,
)

#: Told of what a page has that cannot be written: (kind, reason, page, detail).
Problem = Callable[[str, str, str, str], None]
_DATE_ONLY: Final = 10
_DEFAULT_STRIP: Final = sorted({name.lower() for name in default_settings.SITEMAP_STRIP_PARAMS})


class Enricher:
    """Reads the extension data of listed pages, as the settings ask."""

    def __init__(
        self, config: RichConfig, site: Site, strip_params: tuple[str, ...], problem: Problem,
        history_kinds: str = RichConfig.DEFAULT_KINDS,
    ) -> None:
        """``history_kinds``: the extension kinds the crawl history's records were written with
        (HistoryStore.extension_kinds)."""
        self.config = config
        self.site = site
        self.strip_params = strip_params
        self.problem = problem
        #: The extension kinds this crawl reads, as the history notes them (RichConfig.kinds).
        self.kinds = config.kinds(url_form(site, strip_params))
        # A kind turned on since the history was written, or read under other settings (another
        # SITEMAP_IMAGE_MIN_SIZE, say): no record holds it as this crawl reads it, every listed
        # page is fetched whole once (a 304 would list it without its images, or the old ones).
        before = noted_kinds(history_kinds)
        self._new_kinds = set(noted_kinds(self.kinds)) - set(before)
        self._kinds_before = {kind[0] for kind in before}
        hosts = {urlsplit(site.public_origin).netloc, urlsplit(site.crawl_origin).netloc}
        self.image_hosts = frozenset(hosts | set(config.image_hosts))

    def fields(self, response: TextResponse, page: str, header_alternates: list[tuple[str, str]]) -> dict[str, Any]:
        """The RichEntry fields of the listed page ``page`` (its public URL); {} when it has none."""
        config = self.config
        fields: dict[str, Any] = {}
        if config.llms_txt:
            fields["page"] = page_summary(response.selector)
        declared = header_alternates if config.hreflang else []
        # A walk over the tree's <link> elements costs about 60 us a page, an XPath 70 (bench/run.py's
        # pages, a loaded machine); a look for the word in the page's bytes, 4: most pages have none.
        if config.hreflang and b"hreflang" in response.body.lower():
            declared = alternates_in_html(response.selector) + declared
        if not (declared or config.images or config.videos or config.news):
            return fields  # most pages of most sites: nothing more
        base = get_base_url(response)
        if declared:
            fields["alternates"] = tuple(Alternate(hreflang, self._url(base, href) or href) for hreflang, href in declared)
        if config.images:
            images = self._images(response, base, page)
            if images:
                fields["images"] = images
        if config.videos or config.news:
            objects = json_ld(response.selector)
            if config.videos:
                videos = self._videos(response, base, page, objects)
                if videos:
                    fields["videos"] = videos
            if config.news:
                news = self._news(response, page, objects)
                if news is not None:
                    fields["news"] = news
        return fields

    def restored(self, stored: str | None) -> dict[str, Any]:
        """The RichEntry fields of a history record's ``extensions`` text, of the kinds the settings ask for."""
        if not stored or stored == EXTENSIONS_UNKNOWN:
            return {}
        config = self.config
        wanted = {"alternates": config.hreflang, "images": config.images, "videos": config.videos, "news": config.news}
        record = json.loads(stored)
        fields = {name: value for name, value in (rich_fields(record) or {}).items() if value and wanted[name]}
        if "news" in fields and config.news_name is not None:  # the name is the setting's, not the page's
            fields["news"] = dataclasses.replace(fields["news"], name=config.news_name)
        if config.llms_txt and (page := page_summary_of(record)) is not None:
            fields["page"] = page
        return fields

    @property
    def unknown_to_history(self) -> str:
        """What this crawl reads that the history's records do not hold, for the log ("" when none):
        kinds turned on since it was written, kinds read under other settings."""
        names = RichConfig.KIND_NAMES
        turned_on = sorted(names[kind[0]] for kind in self._new_kinds if kind[0] not in self._kinds_before)
        changed = sorted(names[kind[0]] for kind in self._new_kinds if kind[0] in self._kinds_before)
        said = []
        if turned_on:
            said.append(f"Extensions turned on since the last crawl ({', '.join(turned_on)})")
        if changed:
            said.append(f"Extension settings changed since the last crawl ({', '.join(changed)})")
        return "; ".join(said)

    def knows(self, stored: str | None) -> bool:
        """Whether a listed page's stored extensions hold all a 304 of it needs: every kind the
        settings ask for was read when the history was written, and its summary, with llms.txt
        on (a history kept without either has none: the page is fetched whole once)."""
        if self._new_kinds:
            return False
        return not self.config.llms_txt or (stored is not None and '"page":' in stored)

    def _url(self, base: str, href: str) -> str | None:
        url = resolved(base, href, self.strip_params)
        return None if url is None else self.site.to_public(self.site.to_crawl(url))

    def _writable_url(self, base: str, href: str) -> str | None:
        """``_url``, or None for a URL no sitemap may hold (over 2,048 characters, ...): one bad
        image or video URL must not make the page's whole entry invalid."""
        url = self._url(base, href)
        try:
            check_loc(url)
        except InvalidEntryError:
            return None
        return url

    def _images(self, response: TextResponse, base: str, page: str) -> tuple[str, ...]:
        found: dict[str, None] = {}  # each image once, in page order
        for source in image_sources(response.selector, self.config.image_min_size):
            url = self._writable_url(base, source)
            if url is not None and urlsplit(url).netloc in self.image_hosts:
                found[url] = None
        if len(found) > MAX_IMAGES:
            self.problem("images", "over_limit", page, f"{len(found)} images, the first {MAX_IMAGES} written")
        return tuple(itertools.islice(found, MAX_IMAGES))

    def _videos(self, response: TextResponse, base: str, page: str, objects: list[dict[str, Any]]) -> tuple[Video, ...]:
        selector = response.selector
        videos: dict[str, Video] = {}  # by content or player URL: a VideoObject describing a <video> wins
        for raw in videos_in_json_ld(objects) + videos_in_microdata(selector) + videos_in_elements(selector):
            video = self._video(raw, base)
            missing = missing_video_field(video)
            key = video.content_loc or video.player_loc or ""
            if key and key in videos:
                continue
            if missing is not None:
                self.problem("video", "missing_field", page, f"{missing} ({key or video.title or 'no URL'})")
                continue
            videos[key] = video
        return tuple(videos.values())

    def _video(self, raw: RawVideo, base: str) -> Video:
        def url(value: str) -> str | None:
            return self._writable_url(base, value) if value else None

        duration = duration_seconds(raw.duration)
        return Video(
            thumbnail_loc=url(raw.thumbnail) or "",
            title=raw.title,
            description=raw.description,
            content_loc=url(raw.content),
            player_loc=url(raw.player),
            duration=duration if duration is not None and duration <= MAX_VIDEO_DURATION else None,
            publication_date=w3c_date(raw.published),
            expiration_date=w3c_date(raw.expires),
        )

    def _news(self, response: TextResponse, page: str, objects: list[dict[str, Any]]) -> News | None:
        found = article(response.selector, objects)
        if found is None:
            return None
        published = w3c_date(found.published)
        language = news_language(html_lang(response.selector)) or self.config.news_language
        reason = "bad_date" if published is None else "no_title" if not found.title else "no_language" if language is None else None
        if reason is not None:
            self.problem("news", reason, page, found.published)
            return None
        assert published is not None and language is not None and self.config.news_name is not None
        return News(self.config.news_name, language, published, found.title)


def url_form(site: Site, strip_params: tuple[str, ...]) -> str:
    """How a crawl writes the URLs a page's extensions hold, for the history's note: "" when as by
    default (the public origin the crawled one, SITEMAP_STRIP_PARAMS the defaults')."""
    public = "" if site.public_origin == site.crawl_origin else site.public_origin
    strip = sorted(set(strip_params))
    return "" if not public and strip == _DEFAULT_STRIP else repr((public, strip))


def w3c_date(value: str) -> str | None:
    """A date as sitemaps take it: as written when it is one, an ISO 8601 instant in W3C form
    (``2024-05-01T10:00:00+02:00``), else None (a time without a zone names no instant)."""
    value = value.strip()
    if not value:
        return None
    try:
        parse_lastmod(value)
        return value
    except InvalidEntryError:
        pass
    try:
        instant = datetime.fromisoformat(value)
    except ValueError:
        return None
    if len(value) == _DATE_ONLY:
        return instant.date().isoformat()
    if instant.tzinfo is None:
        return None
    return instant.replace(microsecond=0).isoformat()
