"""Cases of the case site about links: which URLs the spider finds, follows and leaves alone.

Link discovery (image maps, frames, iframes, meta refresh, <base href>), other schemes and
off-site links (and the public origin), URL normalisation, robots.txt and nofollow, a deep
chain, and the two infinite URL spaces (also part of tests/generated_site.py). Each
``add_*`` adds its pages to the builder and returns the hrefs the home page links to.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import urlsplit

from tests.site_builder import LISTED, SiteBuilder
from tests.site_server import HTML, html_page, links
from tests.site_spec import Excluded, Route, SiteRequest

CALENDAR: Final = re.compile(r"/calendar\?month=(\d+)")
MORE: Final = re.compile(r"/a/(?:more/)+")


def _calendar(request: SiteRequest) -> Route:
    match = CALENDAR.fullmatch(request.target)
    month = int(match.group(1)) if match else 1
    body = html_page(
        f"Calendar {month}",
        links(f"/calendar?month={month + 1}", f"/calendar?month={max(month - 1, 1)}"),
    )
    return Route(headers=(("Content-Type", HTML),), body=body)


def _more(request: SiteRequest) -> Route:
    # The relative href makes every page one segment deeper than the last: a classic trap.
    body = html_page("More", links("more/", "./"))
    return Route(headers=(("Content-Type", HTML),), body=body)


def add_traps(b: SiteBuilder) -> list[str]:
    b.spec.dynamic.extend([(CALENDAR, _calendar), (MORE, _more)])
    b.spec.traps.extend([CALENDAR, MORE])
    b.page("/a/", html_page("A", links("more/")))
    return ["/calendar?month=1", "/a/"]


def add_discovery(b: SiteBuilder) -> list[str]:
    """Every element the spider must follow, and <base href>."""
    b.page("/about", html_page("About"))
    b.page(
        "/map",
        html_page(
            "Image map",
            '<img src="/map.png" usemap="#m" alt="map"><map name="m">'
            '<area shape="rect" coords="0,0,10,10" href="/area-target" alt="a"></map>',
        ),
    )
    b.page("/area-target", html_page("Area target"))
    b.page(
        "/frameset",
        b'<!DOCTYPE html><html><head><meta charset="utf-8"><title>Frames</title></head>'
        b'<frameset cols="50%,50%"><frame src="/frame-left"><frame src="/frame-right">'
        b"</frameset></html>",
    )
    b.page("/frame-left", html_page("Left frame"))
    b.page("/frame-right", html_page("Right frame"))
    b.page("/with-iframe", html_page("Iframe", '<iframe src="/iframe-content"></iframe>'))
    b.page("/iframe-content", html_page("Iframe content"))
    # delay < 100 s: Scrapy's MetaRefreshMiddleware treats it as a redirect.
    b.page(
        "/refresh",
        html_page("Refresh", head='<meta http-equiv="refresh" content="0; url=/refresh-target">'),
        expect=Excluded("redirect"),
    )
    b.page("/refresh-target", html_page("Refresh target"))
    # A delayed refresh is not a redirect: the page stays, and its target is a link.
    b.page(
        "/refresh-slow",
        html_page(
            "Slow refresh",
            head='<meta http-equiv="Refresh" content="300; URL=\'/refresh-slow-target\'">',
        ),
    )
    b.page("/refresh-slow-target", html_page("Slow refresh target"))
    b.page(
        "/based/page",
        html_page(
            "Base href",
            links("child", "../top-from-base", "/abs-from-base"),
            head='<base href="/sub/">',
        ),
    )
    b.page("/sub/child", html_page("Child through base"))
    b.page("/top-from-base", html_page("Parent through base"))
    b.page("/abs-from-base", html_page("Absolute from base"))
    # What a crawler that ignores <base> would fetch instead: must stay untouched.
    b.never("/based/child")
    return ["/map", "/frameset", "/with-iframe", "/refresh", "/refresh-slow", "/based/page"]


def add_schemes_and_offsite(b: SiteBuilder, other_origin: str) -> list[str]:
    host_port = urlsplit(b.origin).netloc
    port = urlsplit(b.origin).port
    public = b.spec.public_origin
    b.page(
        "/schemes",
        html_page(
            "Other schemes",
            links(
                "mailto:someone@example.com",
                "MAILTO:other@example.com",
                "tel:+15550100",
                "javascript:void(0)",
                "javascript:location.href='/js-only'",
                "data:text/html,%3Ca%20href=%22/data-only%22%3E",
                f"ftp://{host_port}/ftp-only",
            ),
        ),
    )
    for target in ("/js-only", "/data-only", "/ftp-only"):
        b.never(target)

    localhost = f"http://localhost:{port}"
    offsite_links = [
        f"{localhost}/offsite-localhost",
        f"//localhost:{port}/offsite-scheme-relative",
        f"{other_origin}/offsite-port",
        f"https://{host_port}/offsite-https",
        "http://127.0.0.1:80/offsite-default-port",
    ]
    for url in (
        f"{localhost}/offsite-localhost",
        f"{localhost}/offsite-scheme-relative",
        f"{other_origin}/offsite-port",
        f"https://{host_port}/offsite-https",
        "http://127.0.0.1/offsite-default-port",
    ):
        b.off_site(url)
    # Same paths on this server: if the spider wrongly follows localhost links it lands here.
    b.never("/offsite-localhost")
    b.never("/offsite-scheme-relative")
    b.never("/offsite-https")

    # Links written with the public origin: off-site by default, local pages with public_url.
    public_links = [
        f"{public}/pub-only",
        f"{public.upper()}/pub-upper",
        f"{public}:443/pub-default-port",
    ]
    for target in ("/pub-only", "/pub-upper", "/pub-default-port"):
        key = b.page(target, html_page(f"Public {target}"), expect=None, public=LISTED)
        b.spec.never_fetched.add(key)
    # With public_url these are the local pages above, judged under their crawled URL.
    for url in (f"{public}/pub-only", f"{public}/pub-upper", f"{public}/pub-default-port"):
        b.off_site(url, public=None)
    # Canonical written with the public origin: another (off-site) URL by default, itself
    # with public_url.
    b.page(
        "/pub-self-canon",
        html_page("Public self canonical", head=f'<link rel="canonical" href="{public}/pub-self-canon">'),
        expect=Excluded("canonical"),
        public=LISTED,
    )
    b.off_site(f"{public}/pub-self-canon", public=None)
    b.page(
        "/pub-canon-other",
        html_page(
            "Public canonical elsewhere",
            head=f'<link rel="canonical" href="{public}/canon-target">',
        ),
        expect=Excluded("canonical"),
    )
    # An absolute redirect to the public origin (what many static hosts send).
    b.redirect(
        "/r-public",
        f"{public}/pub-redirect-target",
        status=301,
        expect=Excluded("redirect", also=frozenset({"offsite"})),
    )
    key = b.page("/pub-redirect-target", html_page("Public redirect target"), expect=None, public=LISTED)
    b.spec.never_fetched.add(key)
    b.off_site(f"{public}/pub-redirect-target", public=None)
    b.page("/offsite", html_page("Off-site links", links(*offsite_links, *public_links)))
    return ["/schemes", "/offsite", "/pub-self-canon", "/pub-canon-other", "/r-public"]


def add_normalisation(b: SiteBuilder) -> list[str]:
    origin = b.origin
    upper = "HTTP://" + urlsplit(origin).netloc
    b.page(
        "/norm/page",
        html_page(
            "Normalisation",
            links(
                f"{upper}/upper-scheme",
                "./sibling",
                "../up-target",
                "/norm/./x/../dot-segments",
                "/frag#top",
                "/frag#bottom",
                "/frag",
                "#here",
                "",
                "/about",
                "/about",
                "/about#team",
                "  /padded  ",
                "/café menu/",
                "/categories/Docker篇/",
                "/categories/Docker%E7%AF%87/",
                "/categories/Docker%e7%af%87/",
                "/Case",
                "/case",
                "/search?a=1&amp;b=2",
            ),
        ),
    )
    b.page("/upper-scheme", html_page("Upper-case scheme"))
    b.page("/norm/sibling", html_page("Sibling"))
    b.page("/up-target", html_page("Up"))
    b.page("/norm/dot-segments", html_page("Dot segments"))
    b.page("/frag", html_page("Fragments"))
    b.page("/padded", html_page("Padded href"))
    b.page("/café menu/", html_page("Café menu"))
    b.page("/categories/Docker篇/", html_page("Docker 篇"))
    b.page("/Case", html_page("Upper-case path"))
    b.page("/case", html_page("Lower-case path"))
    b.page("/search?a=1&b=2", html_page("Search with &"))
    # A Latin-1 document: the URL standard encodes the path in UTF-8 whatever the page's charset.
    b.page(
        "/latin/page",
        (
            '<!DOCTYPE html><html><head><title>Latin-1</title></head><body><a href="/latin/caf\u00e9">x</a>'
            "</body></html>"
        ).encode("latin-1"),
        content_type="text/html; charset=iso-8859-1",
    )
    b.page("/latin/caf\u00e9", html_page("Latin-1 link target"))
    return ["/norm/page", "/latin/page"]


def add_robots_and_nofollow(b: SiteBuilder) -> list[str]:
    b.page(
        "/robots-links",
        html_page(
            "Robots",
            links(
                "/private/secret",
                "/private",
                "/article?print=1",
                "/article",
                "/legacy.php",
                "/legacy.php?page=2",
            ),
        ),
    )
    for target in ("/private/secret", "/article?print=1", "/legacy.php"):
        key = b.page(target, html_page("Disallowed"), expect=Excluded("robots"))
        b.spec.never_fetched.add(key)
    # "/private" does not match "Disallow: /private/"; "$" anchors "*.php" at the end.
    b.page("/private", html_page("Not under /private/"))
    b.page("/article", html_page("Article"))
    b.page("/legacy.php?page=2", html_page("Legacy page 2"))

    b.page(
        "/nofollow",
        html_page(
            "Nofollow links",
            '<a rel="nofollow" href="/nofollow-only">n</a>'
            '<a rel="ugc NoFollow" href="/nofollow-only-2">n2</a>',
        ),
    )
    b.page("/nofollow-only", html_page("Only through nofollow"))
    b.page("/nofollow-only-2", html_page("Only through nofollow too"))
    # A page-wide nofollow directive: followed by default like rel=nofollow links.
    b.page(
        "/meta-nofollow",
        html_page(
            "Meta nofollow",
            links("/via-meta-nofollow"),
            head='<meta name="robots" content="nofollow">',
        ),
    )
    b.page("/via-meta-nofollow", html_page("Only through a nofollow page"))
    b.spec.nofollow_only.update(
        {b.origin + "/nofollow-only", b.origin + "/nofollow-only-2", b.origin + "/via-meta-nofollow"}
    )
    return ["/robots-links", "/nofollow", "/meta-nofollow"]


def add_deep_chain(b: SiteBuilder, length: int = 40) -> list[str]:
    for n in range(1, length + 1):
        nxt = links(f"/deep/{n + 1}") if n < length else "<p>The end.</p>"
        b.page(f"/deep/{n}", html_page(f"Deep {n}", nxt))
    return ["/deep/1"]
