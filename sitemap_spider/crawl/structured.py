"""Videos and articles a page describes: schema.org in JSON-LD and microdata, ``<video>``, Open Graph.

Pure functions on the tree parsel built; values as written (URLs unresolved, dates as found).
The caller (enrich.py) resolves, checks and reports.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from parsel import Selector

logger = logging.getLogger(__name__)

ARTICLE_TYPES: Final = frozenset({"NewsArticle", "Article", "BlogPosting", "ReportageNewsArticle", "AnalysisNewsArticle"})
_DURATION: Final = re.compile(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?", re.IGNORECASE)
# Half of a character: JSON may escape one ("\ud83d") where no text can hold it, not UTF-8 (a feed
# export, the report), not XML (the sitemap's validation failed the whole set on one page).
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_VIDEO_PROPS: Final = ("thumbnailUrl", "name", "description", "contentUrl", "embedUrl", "duration", "uploadDate", "expires")


@dataclass(frozen=True)
class RawVideo:
    """A video's fields as the page gives them (schema.org names), "" where missing."""

    thumbnail: str = ""
    title: str = ""
    description: str = ""
    content: str = ""
    player: str = ""
    duration: str = ""
    published: str = ""
    expires: str = ""


@dataclass(frozen=True)
class RawArticle:
    """An article's headline and publication date, as the page gives them."""

    title: str
    published: str


def json_ld(selector: Selector) -> list[dict[str, Any]]:
    """Every JSON-LD object of the page (``@graph`` members and nested objects included)."""
    objects: list[dict[str, Any]] = []
    for text in selector.xpath('//script[@type="application/ld+json"]/text()').getall():
        try:
            data = json.loads(text)
        except ValueError:
            logger.debug("Unreadable JSON-LD skipped")
            continue
        objects.extend(_objects(data))
    return objects


def _objects(data: Any) -> Iterator[dict[str, Any]]:
    if isinstance(data, list):
        for item in data:
            yield from _objects(item)
    elif isinstance(data, dict):
        yield data
        for value in data.values():
            if isinstance(value, (dict, list)):
                yield from _objects(value)


def _types(item: dict[str, Any]) -> set[str]:
    kind = item.get("@type")
    names = kind if isinstance(kind, list) else [kind]
    return {str(name).rsplit("/", 1)[-1] for name in names if name}


def _text(value: Any) -> str:
    """A schema.org value as text: a string, the first of a list, the url of an object."""
    if isinstance(value, list):
        return _text(value[0]) if value else ""
    if isinstance(value, dict):
        return _text(value.get("url") or value.get("contentUrl") or value.get("@id") or "")
    text = "" if value is None else str(value).strip()
    return text if text.isascii() else _LONE_SURROGATE.sub("", text)


def videos_in_json_ld(objects: list[dict[str, Any]]) -> list[RawVideo]:
    return [_raw_video({name: _text(item.get(name)) for name in _VIDEO_PROPS}) for item in objects if "VideoObject" in _types(item)]


def videos_in_microdata(selector: Selector) -> list[RawVideo]:
    videos = []
    for scope in selector.xpath('//*[@itemscope and contains(@itemtype, "VideoObject")]'):
        values: dict[str, str] = {}
        for prop in scope.xpath(".//*[@itemprop]"):
            name = prop.attrib.get("itemprop", "")
            if name in _VIDEO_PROPS and name not in values:
                attributes = prop.attrib
                value = attributes.get("content") or attributes.get("href") or attributes.get("src")
                values[name] = (value or prop.xpath("normalize-space(.)").get() or "").strip()
        videos.append(_raw_video(values))
    return videos


def videos_in_elements(selector: Selector) -> list[RawVideo]:
    """``<video>`` elements: ``poster``, ``src`` (or a ``<source src>``), ``title`` / ``aria-label``,
    and ``aria-description`` as the description (HTML has no other place for one)."""
    videos = []
    for video in selector.xpath("//video"):
        attributes = video.attrib
        source = attributes.get("src") or video.xpath("./source/@src").get() or ""
        videos.append(
            RawVideo(
                thumbnail=(attributes.get("poster") or "").strip(),
                title=(attributes.get("title") or attributes.get("aria-label") or "").strip(),
                description=(attributes.get("aria-description") or "").strip(),
                content=source.strip(),
            )
        )
    return videos


def _raw_video(values: dict[str, str]) -> RawVideo:
    get = values.get
    return RawVideo(
        thumbnail=get("thumbnailUrl", ""),
        title=get("name", ""),
        description=get("description", ""),
        content=get("contentUrl", ""),
        player=get("embedUrl", ""),
        duration=get("duration", ""),
        published=get("uploadDate", ""),
        expires=get("expires", ""),
    )


def duration_seconds(value: str) -> int | None:
    """An ISO 8601 duration (``PT1M33S``) in whole seconds, or None."""
    match = _DURATION.fullmatch(value.strip()) if value else None
    if match is None or not any(match.groups()):
        return None
    days, hours, minutes, seconds = match.groups()
    return int(int(days or 0) * 86400 + int(hours or 0) * 3600 + int(minutes or 0) * 60 + float(seconds or 0))


def article(selector: Selector, objects: list[dict[str, Any]]) -> RawArticle | None:
    """The page's article: a schema.org NewsArticle / Article / BlogPosting with a date, else
    ``article:published_time`` with the page's og:title or <title>; None when it is none."""
    for item in objects:
        if _types(item) & ARTICLE_TYPES and _text(item.get("datePublished")):
            title = _text(item.get("headline") or item.get("name"))
            return RawArticle(title or _page_title(selector), _text(item.get("datePublished")))
    published = selector.xpath('//meta[@property="article:published_time"]/@content').get()
    if published and published.strip():
        return RawArticle(_page_title(selector), published.strip())
    return None


def _page_title(selector: Selector) -> str:
    title = selector.xpath('//meta[@property="og:title"]/@content').get() or selector.xpath("//title/text()").get()
    return " ".join((title or "").split())


def html_lang(selector: Selector) -> str | None:
    return selector.xpath("/html/@lang").get()
