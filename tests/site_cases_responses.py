"""Cases of the case site about responses: what the spider makes of each page it fetches.

noindex (meta and X-Robots-Tag), canonical links, redirects, HTTP statuses and content
types, and Last-Modified dates. Each ``add_*`` adds its pages to the builder and returns
the hrefs the home page links to.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from tests.site_builder import AUTO, SiteBuilder
from tests.site_server import html_page, links
from tests.site_spec import SAME, Excluded, Listed, Route


def add_noindex(b: SiteBuilder) -> list[str]:
    meta = '<meta name="{name}" content="{content}">'
    b.page(
        "/noindex-meta",
        html_page("noindex", links("/via-noindex-1"), head=meta.format(name="robots", content="noindex")),
        expect=Excluded("noindex"),
    )
    # Found only through the noindex page (noindex pages are still followed).
    b.page("/via-noindex-1", html_page("Via noindex", links("/via-noindex-2")))
    b.page("/via-noindex-2", html_page("Via noindex, one more"))
    noindex_meta = {
        "/noindex-none": meta.format(name="robots", content="NONE"),
        "/noindex-order": '<meta content="noindex,follow" name="ROBOTS">',
        "/noindex-googlebot": meta.format(name="googlebot", content="noindex"),
    }
    for target, head in noindex_meta.items():
        b.page(target, html_page(target, head=head), expect=Excluded("noindex"))
    noindex_headers = {
        "/noindex-header": "noindex",
        "/noindex-header-googlebot": "googlebot: noindex",
        "/noindex-header-mixed": "noarchive, NOINDEX",
    }
    for target, value in noindex_headers.items():
        b.page(target, html_page(target), headers=[("X-Robots-Tag", value)], expect=Excluded("noindex"))
    b.page("/otherbot-header", html_page("otherbot"), headers=[("X-Robots-Tag", "otherbot: noindex")])
    b.page(
        "/otherbot-meta",
        html_page("otherbot meta", head=meta.format(name="otherbot", content="noindex")),
    )
    b.page(
        "/index-follow",
        html_page("index, follow", head=meta.format(name="robots", content="index, follow")),
    )
    return [
        "/noindex-meta",
        *noindex_meta,
        *noindex_headers,
        "/otherbot-header",
        "/otherbot-meta",
        "/index-follow",
    ]


def add_canonical(b: SiteBuilder) -> list[str]:
    origin = b.origin
    canon = '<link rel="canonical" href="{}">'
    b.page(
        "/canon-from",
        html_page("Canonical elsewhere", head=canon.format("/canon-target")),
        expect=Excluded("canonical"),
    )
    b.page("/canon-target", html_page("Canonical target (linked nowhere)"))
    b.page(
        "/canon-abs",
        html_page("Absolute canonical elsewhere", head=canon.format(f"{origin}/canon-abs-target")),
        expect=Excluded("canonical"),
    )
    b.page("/canon-abs-target", html_page("Absolute canonical target"))
    b.page("/self", html_page("Self canonical", head=canon.format(f"{origin}/self")))
    b.page("/promo", html_page("Promo"))
    b.page("/product?id=5", html_page("Product 5"))
    b.page(
        "/hdr-canon",
        html_page("Link header canonical"),
        headers=[("Link", f'<{origin}/hdr-canon-target>; rel="canonical"')],
        expect=Excluded("canonical"),
    )
    b.page("/hdr-canon-target", html_page("Link header canonical target"))
    # Tracking variants are never separate URLs: the stripped form is what is fetched.
    for target in (
        "/self?utm_source=x&utm_medium=y",
        "/promo?gclid=abc&fbclid=def",
        "/product?id=5&utm_campaign=z",
    ):
        b.never(target)
    return [
        "/canon-from",
        "/canon-abs",
        "/self",
        "/self?utm_source=x&amp;utm_medium=y",
        "/promo?gclid=abc&amp;fbclid=def",
        "/product?id=5&amp;utm_campaign=z",
        "/hdr-canon",
    ]


def add_redirects(b: SiteBuilder) -> list[str]:
    port = urlsplit(b.origin).port
    for status in (301, 302, 303, 307, 308):
        # 302 uses a relative Location; 307 carries a Last-Modified of its own that must
        # not leak onto the target.
        location = f"/r{status}-target" if status == 302 else f"{b.origin}/r{status}-target"
        extra = [("Last-Modified", "Mon, 01 Jan 2001 00:00:00 GMT")] if status == 307 else []
        b.redirect(f"/r{status}", location, status=status, headers=extra)
        b.page(
            f"/r{status}-target",
            html_page(f"Target of {status}"),
            last_modified=None if status == 307 else AUTO,
        )
    b.redirect("/hop1", "/hop2", status=301)
    b.redirect("/hop2", "/hop3", status=302, expect=Excluded("redirect", reported=False))
    b.redirect("/hop3", "/hop-end", status=307, expect=Excluded("redirect", reported=False))
    b.page("/hop-end", html_page("End of the chain"))
    b.redirect("/dir", "/dir/", status=301)
    b.page("/dir/", html_page("Directory"))
    loop = Excluded("redirect", also=frozenset({"duplicate", "error"}), reported=False)
    b.redirect("/loop-a", "/loop-b", status=302, expect=loop)
    b.redirect("/loop-b", "/loop-a", status=302, expect=loop)
    b.redirect(
        "/r-offsite",
        f"http://localhost:{port}/offsite-redirect-target",
        status=302,
        expect=Excluded("redirect", also=frozenset({"offsite"})),
    )
    b.never("/offsite-redirect-target")
    b.spec.extra[f"http://localhost:{port}/offsite-redirect-target"] = (
        Excluded("offsite", also=frozenset({"redirect"}), reported=False),
        SAME,
    )
    b.redirect("/r-dup", "/about", status=301)
    b.redirect(
        "/r-private",
        "/private/redirected",
        status=302,
        expect=Excluded("redirect", also=frozenset({"robots"})),
    )
    key = b.page(
        "/private/redirected",
        html_page("Disallowed redirect target"),
        expect=Excluded("robots", reported=False),
    )
    b.spec.never_fetched.add(key)
    return [
        "/r301",
        "/r302",
        "/r303",
        "/r307",
        "/r308",
        "/hop1",
        "/dir",
        "/loop-a",
        "/r-offsite",
        "/r-dup",
        "/r-private",
    ]


def add_statuses_and_types(b: SiteBuilder) -> list[str]:
    for status in (404, 410, 500, 503):
        b.page(
            f"/s{status}",
            html_page(f"Status {status}"),
            status=status,
            expect=Excluded("http_error"),
        )
    b.page("/s204", b"", status=204, content_type=None, expect=Excluded("status"))
    b.spec.routes["/broken"] = Route(drop=True, expect=Excluded("error"))
    pdf = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
    png = bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
    b.page("/download", pdf, content_type="application/pdf", expect=Excluded("non_html"))
    b.page(
        "/notes",
        "Plain text, not a page.\n",
        content_type="text/plain; charset=utf-8",
        expect=Excluded("non_html"),
    )
    b.page("/image", png, content_type="image/png", expect=Excluded("non_html"))
    b.page("/api/data", b'{"a": 1}', content_type="application/json", expect=Excluded("non_html"))
    # An extension Scrapy's LinkExtractor skips without fetching: any handling is fine.
    b.page(
        "/files/report.pdf",
        pdf,
        content_type="application/pdf",
        expect=Excluded("non_html", reported=False),
    )
    b.page(
        "/xhtml",
        b'<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'
        b"<head><title>XHTML</title></head><body><p>XHTML page</p></body></html>",
        content_type="application/xhtml+xml; charset=utf-8",
    )
    b.page(
        "/upper-ctype",
        html_page("Upper-case content type"),
        content_type="Text/HTML; Charset=UTF-8",
    )
    return [
        "/s404",
        "/s410",
        "/s500",
        "/s503",
        "/s204",
        "/broken",
        "/download",
        "/notes",
        "/image",
        "/api/data",
        "/files/report.pdf",
        "/xhtml",
        "/upper-ctype",
    ]


def add_lastmod(b: SiteBuilder) -> list[str]:
    cases = {
        # RFC 7231 IMF-fixdate, obsolete RFC 850 and asctime: all the same kind of instant.
        "/lm-rfc7231": ("Wed, 01 May 2024 10:20:30 GMT", "2024-05-01T10:20:30+00:00"),
        "/lm-rfc850": ("Sunday, 06-Nov-94 08:49:37 GMT", "1994-11-06T08:49:37+00:00"),
        "/lm-asctime": ("Sun Nov  6 08:49:37 1994", "1994-11-06T08:49:37+00:00"),
        "/lm-bad": ("the day before yesterday", None),
    }
    for target, (header, lastmod) in cases.items():
        b.page(target, html_page(target), last_modified=header, expect=Listed(lastmod))
    b.page(
        "/lm-date-only",
        html_page("Date header, no Last-Modified"),
        last_modified=None,
        headers=[("Date", "Mon, 01 Jan 2024 00:00:00 GMT")],
        expect=Listed(None),
    )
    # Later than the response's Date, which RFC 9110 section 8.8.2.1 says an origin never sends:
    # a clock ahead, or a CMS's bug. The second is in the past but a day after its own Date.
    b.page(
        "/lm-future",
        html_page("Last-Modified in 2100"),
        last_modified="Fri, 01 Jan 2100 00:00:00 GMT",
        expect=Listed(None),
    )
    b.page(
        "/lm-after-date",
        html_page("Last-Modified after Date"),
        last_modified="Tue, 02 Jan 2024 00:00:00 GMT",
        headers=[("Date", "Mon, 01 Jan 2024 00:00:00 GMT")],
        expect=Listed(None),
    )
    return [*cases, "/lm-date-only", "/lm-future", "/lm-after-date"]
