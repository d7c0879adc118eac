"""LinkFinder hands out exactly the links Scrapy's LinkExtractor finds, each once per crawl."""

from __future__ import annotations

from html import escape

from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy.http import HtmlResponse
from scrapy.linkextractors import LinkExtractor

from sitemap_spider.crawl.links import LinkFinder

HREFS = [
    "/about", "/about", "/a/../b", "/x y", "/caf\u00e9", "//127.0.0.1/proto-relative", "//other.example/x",
    "page.html", "../up.html", "./same", "?q=1", "#top", "", " /padded \n", "\t../sub/ ", "page.html#part",
    "../up.html#m()", "?q=1#x", "/about#team", "http://127.0.0.1/abs#f", "caf\u00e9.html",
    "http://127.0.0.1/abs", "HTTP://127.0.0.1/upper", "https://127.0.0.1/secure", "http:relative.html",
    "http:///triple", "http://[::1", "mailto:someone@example.com", "javascript:void(0)", "tel:+100",
    "/file.pdf", "/image.JPG", "/doc.html?x=\u00e9", "/100%", "data:text/html,hi", "ftp://127.0.0.1/f",
]
# Two pages of one folder: a path-relative href is resolved once per folder (and encoding).
PAGE_URLS = [
    "http://127.0.0.1/", "http://127.0.0.1/dir/page", "http://127.0.0.1/dir/other", "http://127.0.0.1/dir/sub/",
    "https://127.0.0.1/s/",
]
BASES = [None, "http://127.0.0.1/based/", "/rel-base/", "http://elsewhere.example/b/"]
TAGS = [("a", "href"), ("area", "href"), ("frame", "src"), ("iframe", "src")]

link = st.tuples(st.sampled_from(TAGS), st.sampled_from(HREFS), st.booleans())
page = st.tuples(
    st.sampled_from(PAGE_URLS),
    st.sampled_from(BASES),
    st.sampled_from(["utf-8", "cp1252"]),
    st.lists(link, max_size=12),
)


def _response(url: str, base: str | None, encoding: str, links: list[tuple[tuple[str, str], str, bool]]) -> HtmlResponse:
    head = f'<base href="{escape(base)}">' if base else ""
    body = "".join(
        f'<{tag} {attr}="{escape(href)}"{" rel=nofollow" if nofollow else ""}>x</{tag}>'
        for (tag, attr), href, nofollow in links
    )
    html = f"<html><head><meta charset={encoding}>{head}</head><body>{body}</body></html>"
    return HtmlResponse(url, body=html.encode(encoding, "xmlcharrefreplace"), encoding=encoding)


def _extractor_urls(extractor: LinkExtractor, response: HtmlResponse, follow_nofollow: bool) -> list[str]:
    """LinkExtractor's http(s) links, without their fragments (LinkFinder drops them: the crawl fetches pages)."""
    return [
        link.url.partition("#")[0]
        for link in extractor.extract_links(response)
        if link.url.startswith(("http://", "https://")) and (follow_nofollow or not link.nofollow)
    ]


@settings(max_examples=300, deadline=None)
@given(pages=st.lists(page, min_size=1, max_size=6), follow_nofollow=st.booleans())
def test_a_crawl_gets_each_link_of_link_extractor_once(pages: list, follow_nofollow: bool) -> None:  # type: ignore[type-arg]
    extractor = LinkExtractor(
        # unique=False: LinkExtractor keeps the first of equal links, nofollow or not; a URL
        # linked with and without rel="nofollow" is followed (the first time without it).
        tags=("a", "area", "frame", "iframe"), attrs=("href", "src"), canonicalize=False, unique=False
    )
    finder = LinkFinder(follow_nofollow)
    expected: list[str] = []
    handed_out: list[str] = []
    for url, base, encoding, links in pages:
        response = _response(url, base, encoding, links)
        for found in _extractor_urls(extractor, response, follow_nofollow):
            if found not in expected:
                expected.append(found)
        handed_out.extend(finder.new_links(response))
    assert handed_out == expected


def test_navigation_met_before_is_not_resolved_again() -> None:
    finder = LinkFinder()
    first = _response("http://127.0.0.1/a", None, "utf-8", [(("a", "href"), "/nav", False), (("a", "href"), "x", False)])
    second = _response("http://127.0.0.1/b/", None, "utf-8", [(("a", "href"), "/nav", False), (("a", "href"), "x", False)])
    assert finder.new_links(first) == ["http://127.0.0.1/nav", "http://127.0.0.1/x"]
    # "x" is relative: on another directory it is another page.
    assert finder.new_links(second) == ["http://127.0.0.1/b/x"]


def test_a_relative_link_is_resolved_once_per_folder_and_in_each_page_s_encoding() -> None:
    finder = LinkFinder()
    links = [(("a", "href"), "caf\u00e9.html?q=\u00e9#menu", False), (("a", "href"), "../up.html", False)]
    utf8 = finder.new_links(_response("http://127.0.0.1/dir/a", None, "utf-8", links))
    assert utf8 == ["http://127.0.0.1/dir/caf%C3%A9.html?q=%C3%A9", "http://127.0.0.1/up.html"]
    # Same folder, a page in cp1252: the query is quoted in the page's encoding (the path in UTF-8).
    latin = finder.new_links(_response("http://127.0.0.1/dir/b", None, "cp1252", links))
    assert latin == ["http://127.0.0.1/dir/caf%C3%A9.html?q=%E9"]
    # Another folder: the same hrefs lead elsewhere.
    assert finder.new_links(_response("http://127.0.0.1/dir/sub/c", None, "utf-8", links)) == [
        "http://127.0.0.1/dir/sub/caf%C3%A9.html?q=%C3%A9", "http://127.0.0.1/dir/up.html"
    ]


def test_hrefs_that_depend_on_the_page_s_own_path_are_not_shared_by_its_folder() -> None:
    """A query, a network path and a scheme-relative form resolve against the page, not its folder."""
    finder = LinkFinder()
    hrefs = ["http:?page=2", "//?sort=asc", "\x0b?view=list", "?q=1", "h\ttp:?x=1", ";?page=3"]
    links = [(("a", "href"), href, False) for href in hrefs]
    extractor = LinkExtractor(tags=("a",), attrs=("href",), canonicalize=False, unique=False)
    for url in ("http://127.0.0.1/d/list", "http://127.0.0.1/d/other"):
        response = _response(url, None, "utf-8", links)
        expected = list(dict.fromkeys(_extractor_urls(extractor, response, True)))
        assert finder.new_links(response) == expected
        assert all(found.startswith(url + "?") for found in expected), expected


def test_a_nofollow_link_does_not_hide_the_same_link_without_it() -> None:
    finder = LinkFinder(follow_nofollow=False)
    first = _response("http://127.0.0.1/", None, "utf-8", [(("a", "href"), "/t", True)])
    second = _response("http://127.0.0.1/", None, "utf-8", [(("a", "href"), "/t", False)])
    assert finder.new_links(first) == []
    assert finder.new_links(second) == ["http://127.0.0.1/t"]


def test_mark_records_other_spellings() -> None:
    finder = LinkFinder()
    assert finder.new_links(_response("http://127.0.0.1/", None, "utf-8", [(("a", "href"), "/p?utm_source=x", False)]))
    assert finder.mark("http://127.0.0.1/p")
    assert not finder.mark("http://127.0.0.1/p")
