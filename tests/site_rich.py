"""A fixture site for rich sitemaps (issue 17): language clusters, image-heavy pages, videos, news.

``build_rich_site(origin)`` returns the site and, per page, the extension XML its ``<url>``
must carry (``RichSite.expected``), exactly; ``RichSite.news`` the articles of the news files.
Pages carry no Last-Modified: each ``<url>`` is its loc and its extensions.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final

import pytest

from tests.site_server import HTML, SiteServer, html_page, links
from tests.site_spec import Excluded, Listed, Route, SiteSpec

CDN: Final = "https://cdn.example.net"
NEWS_NAME: Final = "The Daily"
SETTINGS: Final = {
    "SITEMAP_IMAGES": "True",
    "SITEMAP_IMAGE_HOSTS": "cdn.example.net",
    "SITEMAP_VIDEOS": "True",
    "SITEMAP_NEWS_NAME": NEWS_NAME,
    "SITEMAP_NEWS_LANGUAGE": "en",
}


@dataclass
class RichSite:
    spec: SiteSpec
    expected: dict[str, str] = field(default_factory=dict)  # loc -> extension XML of its <url>
    news: dict[str, str] = field(default_factory=dict)  # loc -> its news:news element
    problems: set[tuple[str, str, str]] = field(default_factory=set)  # (kind, reason, page)


def _link(hreflang: str, href: str) -> str:
    return f'<link rel="alternate" hreflang="{hreflang}" href="{href}">'


def _xlinks(origin: str, pairs: list[tuple[str, str]]) -> str:
    return "".join(
        f'<xhtml:link rel="alternate" hreflang="{h}" href="{href if "://" in href else origin + href}"/>'
        for h, href in sorted(pairs)
    )


def _images(*urls: str) -> str:
    return "".join(f"<image:image><image:loc>{url}</image:loc></image:image>" for url in urls)


def _ld(data: object) -> str:
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


def build_rich_site(origin: str, now: datetime | None = None, plain_pages: int = 0) -> RichSite:
    """The site; ``plain_pages`` more pages without extensions (enough of them and a crawl
    starts its second process)."""
    now = now or datetime.now(UTC).replace(microsecond=0)
    site = RichSite(SiteSpec(origin))
    routes = site.spec.routes

    def page(path: str, body: bytes, headers: tuple[tuple[str, str], ...] = ()) -> None:
        routes[path] = Route(headers=(("Content-Type", HTML), *headers), body=body, expect=Listed())

    # --- hreflang ------------------------------------------------------------------
    cluster = [("en", "/en/"), ("fr", "/fr/"), ("de-AT", "/at/"), ("x-default", "/en/")]
    head = "".join(_link(h, p) for h, p in cluster)
    for path in ("/en/", "/fr/"):
        page(path, html_page(path, head=head))
    # /at/ names the others through its Link header only (relative URLs, resolved against the page).
    header = ", ".join(f'<{p}>; rel="alternate"; hreflang="{h}"' for h, p in cluster)
    page("/at/", html_page("at"), (("Link", header),))
    for path in ("/en/", "/fr/", "/at/"):
        site.expected[origin + path] = _xlinks(origin, cluster)
    # /it/ names /en/, which does not name it back; and /es/, which is a 404.
    page("/it/", html_page("it", head=_link("it", "/it/") + _link("en", "/en/") + _link("es", "/es/")))
    routes["/es/"] = Route(status=404, body=b"gone", expect=Excluded("http_error"))
    site.problems |= {("hreflang", "not_reciprocal", origin + "/it/"), ("hreflang", "target_not_listed", origin + "/it/")}
    # /nl/ and /sv/ name each other; /nl/ also has a bad and a duplicate hreflang, /sv/ a ccTLD site.
    page(
        "/nl/",
        html_page(
            "nl",
            head=_link("nl", "/nl/") + _link("sv", "/sv/") + _link("dutch", "/nl/") + _link("nl-BE", "/be1/") + _link("nl-BE", "/be2/"),
        ),
    )
    page("/sv/", html_page("sv", head=_link("sv", "/sv/") + _link("nl", "/nl/") + _link("da", "https://www.example.dk/")))
    site.expected[origin + "/nl/"] = _xlinks(origin, [("nl", "/nl/"), ("sv", "/sv/")])
    site.expected[origin + "/sv/"] = _xlinks(origin, [("da", "https://www.example.dk/"), ("nl", "/nl/"), ("sv", "/sv/")])
    site.problems |= {("hreflang", "bad_hreflang", origin + "/nl/"), ("hreflang", "duplicate_hreflang", origin + "/nl/")}
    # A noindex page names /en/: it is not in the set, so nothing of it is written.
    routes["/noindex/"] = Route(
        headers=(("Content-Type", HTML),),
        body=html_page("noindex", head='<meta name="robots" content="noindex">' + _link("en", "/en/")),
        expect=Excluded("noindex"),
    )

    # --- images --------------------------------------------------------------------
    page(
        "/gallery",
        html_page(
            "Gallery",
            head=f'<meta property="og:image" content="{CDN}/og.jpg">',
            body=(
                '<img src="/img/a.jpg" alt="a">'
                '<img src="/img/b-small.jpg" srcset="/img/b-400.jpg 400w, /img/b-1200.jpg 1200w, /img/b-800.jpg 800w">'
                '<picture><source srcset="/img/c.webp 1x, /img/c@2x.webp 2x"><img src="/img/c.jpg"></picture>'
                f'<img src="{CDN}/d.png">'
                '<img src="https://images.other.org/e.png">'  # not an allowed host
                '<img src="/pixel.gif" width="1" height="1">'
                '<img src="/icons/star.png" width="16" height="16">'
                '<img src="data:image/png;base64,iVBORw0KGgo=">'
                '<img src="/img/a.jpg" alt="again">'
                f'<img src="/img/{"x" * 2100}.jpg">'  # too long for a sitemap: left out, the page still listed
                # Lazy-loaded: the real image, not the placeholder shown until it is in view.
                '<img src="/img/f.jpg" srcset="/img/loading.gif" lazyload>'  # Hexo's Fluid theme
                '<img src="data:image/svg+xml,%3Csvg%3E%3C/svg%3E" data-lazy-src="/img/g.jpg">'  # WordPress
            ),
        ),
    )
    site.expected[origin + "/gallery"] = _images(
        f"{CDN}/og.jpg", origin + "/img/a.jpg", origin + "/img/b-1200.jpg", origin + "/img/c@2x.webp",
        origin + "/img/c.jpg", f"{CDN}/d.png", origin + "/img/f.jpg", origin + "/img/g.jpg",
    )
    many = [f"{CDN}/many/{n:04d}.jpg" for n in range(1100)]
    page("/many-images", html_page("Many", body="".join(f'<img src="{url}">' for url in many)))
    site.expected[origin + "/many-images"] = _images(*many[:1000])
    site.problems.add(("images", "over_limit", origin + "/many-images"))

    # --- videos --------------------------------------------------------------------
    video = {
        "@context": "https://schema.org",
        "@type": "VideoObject",
        "name": "Grilling steaks",
        "description": "How to grill steaks & more",
        "thumbnailUrl": ["/thumbs/steak.jpg"],
        "contentUrl": "/video/steak.mp4",
        "embedUrl": "/player?v=steak",
        "duration": "PT1M33S",
        "uploadDate": "2024-02-05T08:00:00+08:00",
    }
    page("/video-ld", html_page("Video", head=_ld(video), body='<video src="/video/steak.mp4"></video>'))
    site.expected[origin + "/video-ld"] = (
        f"<video:video><video:thumbnail_loc>{origin}/thumbs/steak.jpg</video:thumbnail_loc>"
        "<video:title>Grilling steaks</video:title><video:description>How to grill steaks &amp; more</video:description>"
        f"<video:content_loc>{origin}/video/steak.mp4</video:content_loc><video:player_loc>{origin}/player?v=steak</video:player_loc>"
        "<video:duration>93</video:duration><video:publication_date>2024-02-05T08:00:00+08:00</video:publication_date></video:video>"
    )
    # Half of a character in the JSON-LD ("\ud83d": a lone surrogate once parsed): no XML can hold
    # it. It is left out of the title; it used to fail the validation of the whole set.
    half = {**video, "name": "Grilling \ud83d steaks", "contentUrl": "/video/half.mp4"}
    del half["embedUrl"], half["duration"], half["uploadDate"]
    page("/video-half-character", html_page("Half", head=_ld(half)))
    site.expected[origin + "/video-half-character"] = (
        f"<video:video><video:thumbnail_loc>{origin}/thumbs/steak.jpg</video:thumbnail_loc>"
        "<video:title>Grilling  steaks</video:title><video:description>How to grill steaks &amp; more</video:description>"
        f"<video:content_loc>{origin}/video/half.mp4</video:content_loc></video:video>"
    )
    page(
        "/video-micro",
        html_page(
            "Micro",
            body=(
                '<div itemscope itemtype="https://schema.org/VideoObject"><h2 itemprop="name">Baking bread</h2>'
                '<meta itemprop="description" content="Bread in an hour"><link itemprop="thumbnailUrl" href="/thumbs/bread.jpg">'
                '<link itemprop="embedUrl" href="/player?v=bread"><meta itemprop="duration" content="PT10M"></div>'
            ),
        ),
    )
    site.expected[origin + "/video-micro"] = (
        f"<video:video><video:thumbnail_loc>{origin}/thumbs/bread.jpg</video:thumbnail_loc>"
        "<video:title>Baking bread</video:title><video:description>Bread in an hour</video:description>"
        f"<video:player_loc>{origin}/player?v=bread</video:player_loc><video:duration>600</video:duration></video:video>"
    )
    page(
        "/video-element",
        html_page(
            "Element",
            body='<video src="/video/cat.mp4" poster="/thumbs/cat.jpg" title="A cat" aria-description="A cat sleeps"></video>',
        ),
    )
    site.expected[origin + "/video-element"] = (
        f"<video:video><video:thumbnail_loc>{origin}/thumbs/cat.jpg</video:thumbnail_loc>"
        "<video:title>A cat</video:title><video:description>A cat sleeps</video:description>"
        f"<video:content_loc>{origin}/video/cat.mp4</video:content_loc></video:video>"
    )
    no_description = {key: value for key, value in video.items() if key != "description"} | {"contentUrl": "/video/x.mp4"}
    page("/video-missing", html_page("Missing", head=_ld(no_description)))
    site.problems.add(("video", "missing_field", origin + "/video-missing"))

    # --- news ----------------------------------------------------------------------
    fresh = (now - timedelta(hours=5)).isoformat()
    recent = (now - timedelta(hours=30)).isoformat()
    old = (now - timedelta(days=3)).isoformat()
    article = {"@context": "https://schema.org", "@type": "NewsArticle", "headline": "Rain & sun", "datePublished": fresh}
    page("/news/fresh", html_page("Fresh", head=_ld(article)).replace(b"<html>", b'<html lang="en-GB">'))
    og = f'<meta property="og:title" content="Élection"><meta property="article:published_time" content="{recent}">'
    page("/news/og", html_page("OG", head=og).replace(b"<html>", b'<html lang="fr">'))
    page("/news/old", html_page("Old", head=_ld(article | {"datePublished": old, "@type": "BlogPosting"})))
    site.news[origin + "/news/fresh"] = _news("en", fresh, "Rain &amp; sun")
    site.news[origin + "/news/og"] = _news("fr", recent, "&#201;lection")

    rich = sorted(routes)
    if plain_pages:
        # The rich pages are met only on the last plain page, after a second crawling process
        # has started: their URLs are shared out between the two.
        for number in range(plain_pages):
            page(f"/plain/{number}", html_page(f"Plain {number}", links(*rich) if number == plain_pages - 1 else ""))
        rich = [f"/plain/{number}" for number in range(plain_pages)]
    routes["/"] = Route(headers=(("Content-Type", HTML),), body=html_page("Home", links(*rich)), expect=Listed())
    return site


def _news(language: str, date: str, title: str) -> str:
    return (
        f"<news:news><news:publication><news:name>{NEWS_NAME}</news:name><news:language>{language}</news:language>"
        f"</news:publication><news:publication_date>{date}</news:publication_date><news:title>{title}</news:title></news:news>"
    )


@pytest.fixture
def rich_site() -> Iterator[tuple[RichSite, SiteServer]]:
    """The rich site served by a local server (a fixture of every test module, through conftest.py)."""
    with SiteServer() as server:
        site = build_rich_site(server.origin)
        server.serve(site.spec)
        yield site, server
