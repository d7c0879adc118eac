"""Extension data of an entry (images, video, news, hreflang alternates): checked, rendered, read.

Images and videos are rendered here, once, when the entry is added: the ``<url>`` element of a
rich entry is its plain element plus this XML. It is ASCII (other characters as character
references) without tabs or newlines, so that it travels inside a sort-run line and the shard
writer's limits count characters as bytes. News goes into its own files (news.py) and
alternates are joined at publish time (hreflang.py): both are kept apart here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from sitemap_spider.sitemaps.entry import Alternate, News, PageSummary, RichEntry, SitemapEntry, SummarizedEntry, Video
from sitemap_spider.sitemaps.errors import InvalidEntryError
from sitemap_spider.sitemaps.rules import check_loc, parse_lastmod
from sitemap_spider.sitemaps.xml.elements import URLSET_OPEN, escape

NAMESPACES: Final = {
    "xhtml": "http://www.w3.org/1999/xhtml",
    "image": "http://www.google.com/schemas/sitemap-image/1.1",
    "video": "http://www.google.com/schemas/sitemap-video/1.1",
    "news": "http://www.google.com/schemas/sitemap-news/0.9",
}
#: Item and JSON Lines fields of the extensions (README, "Rich sitemaps").
FIELDS: Final = ("alternates", "images", "videos", "news")
MAX_IMAGES: Final = 1000  # image:image per <url> (sitemap-image.xsd's documentation, Google)
MAX_VIDEO_TITLE: Final = 100  # sitemap-video.xsd maxLength
MAX_VIDEO_DESCRIPTION: Final = 2048
MAX_VIDEO_DURATION: Final = 28800
# A BCP 47 language, an optional script, an optional region (ISO 3166 or UN M.49); or x-default.
_HREFLANG: Final = re.compile(r"([a-z]{2,3})(?:-([a-z]{4}))?(?:-([a-z]{2}|[0-9]{3}))?", re.ASCII | re.IGNORECASE)
# Characters XML 1.0 does not allow, and those a run line cannot hold as they are; a surrogate
# in a str is always a lone half (a JSON escape such as "\ud83d" in a page's JSON-LD).
_NOT_XML: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_NEWS_LANGUAGE: Final = re.compile(r"zh-cn|zh-tw|[a-z]{2,3}")


def xml_text(text: str) -> str:
    """``text`` as ASCII XML character data: escaped, other characters as references."""
    text = escape(_NOT_XML.sub("", text))
    text = text.replace("\t", "&#9;").replace("\n", "&#10;").replace("\r", "&#13;")
    return text if text.isascii() else text.encode("ascii", "xmlcharrefreplace").decode("ascii")


def normal_hreflang(value: str) -> str | None:
    """``value`` in its canonical case ("en-GB", "zh-Hant-TW", "x-default"), or None if it is not one."""
    if value.lower() == "x-default":
        return "x-default"
    match = _HREFLANG.fullmatch(value.strip())
    if match is None:
        return None
    language, script, region = match.groups()
    parts = [language.lower()]
    if script:
        parts.append(script.title())
    if region:
        parts.append(region.upper())
    return "-".join(parts)


def clean_alternates(alternates: tuple[Alternate, ...]) -> tuple[list[Alternate], list[tuple[Alternate, str]]]:
    """The usable alternates of one page, sorted, and the others with why: ``bad_hreflang``,
    ``duplicate_hreflang`` (one hreflang for two URLs: neither is used), ``target_not_listed``
    (an href that is not a URL a sitemap may list)."""
    problems: list[tuple[Alternate, str]] = []
    by_language: dict[str, set[str]] = {}
    for alternate in alternates:
        hreflang = normal_hreflang(alternate.hreflang)
        if hreflang is None:
            problems.append((alternate, "bad_hreflang"))
            continue
        try:
            check_loc(alternate.href)
        except InvalidEntryError:
            problems.append((alternate, "target_not_listed"))
            continue
        by_language.setdefault(hreflang, set()).add(alternate.href)
    kept: list[Alternate] = []
    for hreflang, hrefs in sorted(by_language.items()):
        if len(hrefs) > 1:
            problems += ((Alternate(hreflang, href), "duplicate_hreflang") for href in sorted(hrefs))
        else:
            kept.append(Alternate(hreflang, hrefs.pop()))
    return kept, problems


def url_extensions_xml(images: tuple[str, ...], videos: tuple[Video, ...]) -> str:
    """The ``image:image`` and ``video:video`` elements of a ``<url>``; InvalidEntryError if one cannot be written."""
    if len(images) > MAX_IMAGES:
        raise InvalidEntryError(f"{len(images)} images, a <url> holds at most {MAX_IMAGES}")
    parts: list[str] = []
    for image in images:
        check_loc(image)
        parts.append(f"<image:image><image:loc>{escape(image)}</image:loc></image:image>")
    parts += map(video_xml, videos)
    return "".join(parts)


def missing_video_field(video: Video) -> str | None:
    """The first required field a video lacks ("content_loc or player_loc" for both), or None."""
    for name in ("thumbnail_loc", "title", "description"):
        if not getattr(video, name):
            return name
    if not video.content_loc and not video.player_loc:
        return "content_loc or player_loc"
    return None


def video_xml(video: Video) -> str:
    """One ``video:video`` element, its children in sitemap-video.xsd's order."""
    missing = missing_video_field(video)
    if missing is not None:
        raise InvalidEntryError(f"a video without {missing}")
    for loc in (video.thumbnail_loc, video.content_loc, video.player_loc):
        if loc is not None:
            check_loc(loc)
    parts = [
        f"<video:video><video:thumbnail_loc>{escape(video.thumbnail_loc)}</video:thumbnail_loc>",
        f"<video:title>{xml_text(video.title[:MAX_VIDEO_TITLE])}</video:title>",
        f"<video:description>{xml_text(video.description[:MAX_VIDEO_DESCRIPTION])}</video:description>",
    ]
    if video.content_loc:
        parts.append(f"<video:content_loc>{escape(video.content_loc)}</video:content_loc>")
    if video.player_loc:
        parts.append(f"<video:player_loc>{escape(video.player_loc)}</video:player_loc>")
    if video.duration is not None:
        if not 0 <= video.duration <= MAX_VIDEO_DURATION:
            raise InvalidEntryError(f"video duration {video.duration} s is outside 0-{MAX_VIDEO_DURATION}")
        parts.append(f"<video:duration>{video.duration}</video:duration>")
    if video.expiration_date is not None:
        parse_lastmod(video.expiration_date)
        parts.append(f"<video:expiration_date>{video.expiration_date}</video:expiration_date>")
    if video.publication_date is not None:
        parse_lastmod(video.publication_date)
        parts.append(f"<video:publication_date>{video.publication_date}</video:publication_date>")
    parts.append("</video:video>")
    return "".join(parts)


def news_xml(news: News) -> str:
    """The ``news:news`` element of an article."""
    if not news.name or not news.title:
        raise InvalidEntryError("news needs a publication name and a title")
    if not _NEWS_LANGUAGE.fullmatch(news.language):
        raise InvalidEntryError(f"news language {news.language!r} is not an ISO 639 code (zh-cn, zh-tw allowed)")
    parse_lastmod(news.publication_date)
    return (
        f"<news:news><news:publication><news:name>{xml_text(news.name)}</news:name>"
        f"<news:language>{news.language}</news:language></news:publication>"
        f"<news:publication_date>{news.publication_date}</news:publication_date>"
        f"<news:title>{xml_text(news.title)}</news:title></news:news>"
    )


def news_language(value: str | None) -> str | None:
    """The news:language of an ``<html lang>`` ("en-US" -> "en", "zh-TW" -> "zh-tw"), or None."""
    if not value:
        return None
    lowered = value.strip().lower().replace("_", "-")
    if lowered.startswith(("zh-tw", "zh-hant")):
        return "zh-tw"
    if lowered.startswith(("zh-cn", "zh-hans")):
        return "zh-cn"
    language = lowered.split("-", 1)[0]
    return language if _NEWS_LANGUAGE.fullmatch(language) else None


@dataclass(frozen=True)
class Rendered:
    """What a rich entry adds to its line: alternates (joined later), the XML of its images and
    videos, its news element and date (news files), and the alternates it could not use."""

    alternates: list[Alternate]
    url_xml: str
    news_date: str
    news_xml: str
    problems: list[tuple[Alternate, str]]


def render(entry: RichEntry) -> Rendered:
    """Check and render the extension data of ``entry``; InvalidEntryError if it cannot be written."""
    alternates, problems = clean_alternates(entry.alternates)
    news = entry.news
    return Rendered(
        alternates,
        url_extensions_xml(entry.images, entry.videos),
        "" if news is None else news.publication_date,
        "" if news is None else news_xml(news),
        problems,
    )


# --- items, JSON Lines records and stored entries ----------------------------------------
def rich_fields(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """The extension fields of an item or a JSON Lines record as RichEntry values; None when it has none."""
    if all(not record.get(name) for name in FIELDS):
        return None
    try:
        return {
            "alternates": tuple(_alternate(value) for value in record.get("alternates") or ()),
            "images": tuple(_image(value) for value in record.get("images") or ()),
            "videos": tuple(_video(value) for value in record.get("videos") or ()),
            "news": _news(record.get("news")),
        }
    except KeyError as exc:  # an object without one of its required fields
        raise InvalidEntryError(f"bad extension field: no {exc.args[0]!r} in an object that needs it") from None
    except (TypeError, ValueError, AttributeError) as exc:
        raise InvalidEntryError(f"bad extension field: {exc}") from None


def with_extensions(entry: SitemapEntry, record: Mapping[str, Any]) -> SitemapEntry:
    """``entry``, a RichEntry when ``record`` has extension fields."""
    fields = rich_fields(record)
    if fields is None:
        return entry
    return RichEntry(entry.loc, entry.lastmod, entry.changefreq, entry.priority, entry.content_digest, **fields)


def extension_record(entry: SitemapEntry) -> dict[str, Any] | None:
    """The extension fields of ``entry`` as JSON values (the shape ``rich_fields`` reads); None without any."""
    if not isinstance(entry, RichEntry):
        return None
    record = {
        "alternates": [{"hreflang": a.hreflang, "href": a.href} for a in entry.alternates],
        "images": list(entry.images),
        "videos": [vars(video) for video in entry.videos],
        "news": None if entry.news is None else vars(entry.news),
    }
    if isinstance(entry, SummarizedEntry) and entry.page is not None:  # the text of others stays as it was
        record["page"] = vars(entry.page)
    return record


def fields_json(fields: Mapping[str, Any]) -> str | None:
    """RichEntry field values (``alternates``, ..., ``page``) as ``extensions_json`` text; None without any."""
    names = (*FIELDS, "page")
    if not any(fields.get(name) for name in names):
        return None
    kind = SummarizedEntry if fields.get("page") else RichEntry
    return extensions_json(kind("", **{name: fields[name] for name in names if fields.get(name)}))


def page_summary_of(record: Mapping[str, Any]) -> PageSummary | None:
    """The page summary (llms.txt) of a crawl's stored extension record; None without one.

    Read from our own stored text only, never from items or input lines, where a field named
    ``page`` is often something else (a page number)."""
    value = record.get("page")
    if not isinstance(value, Mapping):
        return None
    return PageSummary(str(value.get("title") or ""), str(value.get("description") or ""), str(value.get("site_name") or ""))


def _alternate(value: Any) -> Alternate:
    if isinstance(value, Alternate):
        return value
    if isinstance(value, Mapping):
        return Alternate(str(value["hreflang"]), str(value["href"]))
    hreflang, href = value  # a [hreflang, href] pair
    return Alternate(str(hreflang), str(href))


def _image(value: Any) -> str:
    if isinstance(value, Mapping):  # {"loc": ...}, as image:loc
        value = value["loc"]
    if not isinstance(value, str):
        raise TypeError(f"an image is a URL string, not {type(value).__name__}")
    return value


def _video(value: Any) -> Video:
    if isinstance(value, Video):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"a video is an object, not {type(value).__name__}")
    duration = value.get("duration")
    return Video(
        thumbnail_loc=str(value.get("thumbnail_loc") or ""),
        title=str(value.get("title") or ""),
        description=str(value.get("description") or ""),
        content_loc=value.get("content_loc") or None,
        player_loc=value.get("player_loc") or None,
        duration=None if duration is None else int(duration),
        publication_date=value.get("publication_date") or None,
        expiration_date=value.get("expiration_date") or None,
    )


def _news(value: Any) -> News | None:
    if value is None or isinstance(value, News):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"news is an object, not {type(value).__name__}")
    return News(str(value["name"]), str(value["language"]), str(value["publication_date"]), str(value["title"]))


def namespace_declaration(prefix: str) -> str:
    """The ``xmlns:`` attribute of an extension prefix, with its leading space."""
    return f' xmlns:{prefix}="{NAMESPACES[prefix]}"'


def urlset_open(prefixes: Iterable[str]) -> bytes:
    """The head of a ``<urlset>`` declaring the extension namespaces ``prefixes`` use, in a fixed order."""
    declarations = "".join(namespace_declaration(prefix) for prefix in NAMESPACES if prefix in set(prefixes))
    return URLSET_OPEN[: -len(b">\n")] + declarations.encode() + b">\n"


def prefixes_in(xml: str) -> tuple[str, ...]:
    """The extension prefixes the elements of ``xml`` use."""
    return tuple(prefix for prefix in NAMESPACES if f"<{prefix}:" in xml)


def extensions_json(entry: SitemapEntry) -> str | None:
    """The extension fields of ``entry`` as JSON text, for a crawl's stored state; None without any."""
    record = extension_record(entry)
    return None if record is None else json.dumps(record, sort_keys=True)


def with_extensions_json(entry: SitemapEntry, text: str | None) -> SitemapEntry:
    """``entry`` with the extension fields of ``extensions_json`` text (None: as it is)."""
    if text is None:
        return entry
    record = json.loads(text)
    page = page_summary_of(record)
    if page is None:
        return with_extensions(entry, record)
    fields = rich_fields(record) or {}
    return SummarizedEntry(
        entry.loc, entry.lastmod, entry.changefreq, entry.priority, entry.content_digest, **fields, page=page
    )
