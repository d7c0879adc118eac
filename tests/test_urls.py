from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_spider.crawl.urls import Site, repeated_segment_count
from sitemap_spider.sitemaps import urls as urls_module
from sitemap_spider.sitemaps.urls import normalize_url, remove_dot_segments, strip_query_params

TRACKING = ("utm_*", "gclid", "fbclid", "jsessionid", "phpsessid")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("http://example.com", "http://example.com/"),
        ("HTTP://Example.COM:80/a", "http://example.com/a"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("https://example.com:8443/a", "https://example.com:8443/a"),
        ("http://127.0.0.1:8000/a/./b/../c/", "http://127.0.0.1:8000/a/c/"),
        ("http://h/a/b/../../../c", "http://h/c"),
        ("http://h/page#section", "http://h/page"),
        ("http://h/caf\u00e9 menu/", "http://h/caf%C3%A9%20menu/"),
        ("http://h/categories/Docker\u7bc7/", "http://h/categories/Docker%E7%AF%87/"),
        ("http://h/categories/Docker%e7%af%87/", "http://h/categories/Docker%E7%AF%87/"),
        ("http://h/%7Euser/%41", "http://h/~user/A"),
        ("http://h/a%2Fb", "http://h/a%2Fb"),
        ("http://h/100%", "http://h/100%25"),
        ("http://h/a%zz?q=5%&r=%2", "http://h/a%25zz?q=5%25&r=%252"),
        ("http://h/p?utm_source=x&id=3&utm_medium=y", "http://h/p?id=3"),
        ("http://h/p?UTM_Source=x", "http://h/p"),
        ("http://h/p?b=2&a=1&gclid=z", "http://h/p?b=2&a=1"),
        ("http://h/p?", "http://h/p"),
        ("http://h/search?q=a b&x=\u00e9", "http://h/search?q=a%20b&x=%C3%A9"),
        ("http://EXÄMPLE.com/", "http://xn--exmple-cua.com/"),
        ("  http://h/x  ", "http://h/x"),
        # Session ids, in the query and as a path parameter (a Java server's), when their names are stripped.
        ("http://h/p;jsessionid=A1B2?id=3&PHPSESSID=9", "http://h/p?id=3"),
        ("http://h/a;jsessionid=A1B2/b;v=1;JSESSIONID=x", "http://h/a/b;v=1"),
        ("http://h/a;b=c/", "http://h/a;b=c/"),
    ],
)
def test_normalize_url(raw: str, expected: str) -> None:
    assert normalize_url(raw, TRACKING) == expected


@pytest.mark.parametrize(
    "raw",
    ["mailto:a@b.c", "tel:+123", "javascript:void(0)", "data:text/html,hi", "ftp://h/f", "/relative", "http://", "http://h:notaport/"],
)
def test_normalize_url_refuses_non_web_urls(raw: str) -> None:
    assert normalize_url(raw) is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # Already normal: returned as they are (the regex of the plain case).
        ("http://127.0.0.1:8000/s01/p1.html", "http://127.0.0.1:8000/s01/p1.html"),
        ("https://example.com/a;b=c/(x)!*'+,$&=:@/", "https://example.com/a;b=c/(x)!*'+,$&=:@/"),
        ("http://h/p?a=1&b=/?:@!$()*+,;", "http://h/p?a=1&b=/?:@!$()*+,;"),
        # Just outside it: each must take the full path and come out as the full path spells it.
        ("http://h:80/a", "http://h/a"),
        ("https://h:443/a", "https://h/a"),
        ("http://h:443/a", "http://h:443/a"),
        ("http://h:65535/a", "http://h:65535/a"),
        ("http://h:080/a", "http://h/a"),
        ("http://h/a/./b/../c", "http://h/a/c"),
        ("http://h/a/.", "http://h/a/"),
        ("http://h/.well-known/x", "http://h/.well-known/x"),
        ("http://h/p?q='x'", "http://h/p?q=%27x%27"),
        ("http://h/p?utm_source=a", "http://h/p"),
        ("http://h/p?x=1&utm_source=a", "http://h/p?x=1"),
        ("http://h/p?utm_source=a&x=1", "http://h/p?x=1"),
        ("http://h/p?&", "http://h/p"),  # with tracking parameters to strip, empty pairs go too
        ("http://H/p", "http://h/p"),
        ("http://h/%7e", "http://h/~"),
        ("http://h/p#f", "http://h/p"),
    ],
)
def test_normalize_url_at_the_plain_case_edges(raw: str, expected: str) -> None:
    assert normalize_url(raw, TRACKING) == expected


def test_normalize_url_refuses_a_port_out_of_range() -> None:
    assert normalize_url("http://h:65536/a") is None


def test_normalize_url_is_idempotent() -> None:
    once = normalize_url("HTTP://H:80/a/../caf\u00e9?utm_source=1&x=%e9#f", TRACKING)
    assert once is not None
    assert normalize_url(once, TRACKING) == once


@pytest.mark.parametrize(
    ("path", "expected"),
    [("/a/b/c/./../../g", "/a/g"), ("/a/./", "/a/"), ("/..", "/"), ("/a/..", "/"), ("/plain", "/plain"), ("/a.b/c", "/a.b/c")],
)
def test_remove_dot_segments(path: str, expected: str) -> None:
    assert remove_dot_segments(path) == expected


def test_strip_query_params_keeps_order_and_blank_values() -> None:
    assert strip_query_params("z=1&utm_x=2&a=&b", ("utm_*",)) == "z=1&a=&b"


@pytest.mark.parametrize(
    ("url", "count"),
    [("http://h/", 0), ("http://h/a/b", 1), ("http://h/a/more/more/more/", 3), ("http://h/x/a/x/b/x", 3)],
)
def test_repeated_segment_count(url: str, count: int) -> None:
    assert repeated_segment_count(url) == count


def test_site_scope_is_scheme_host_and_port() -> None:
    site = Site("http://127.0.0.1:8000", "http://127.0.0.1:8000")
    assert site.in_scope("http://127.0.0.1:8000/")
    assert site.in_scope("http://127.0.0.1:8000?x=1")
    assert not site.in_scope("http://127.0.0.1:80001/")
    assert not site.in_scope("http://127.0.0.1:8001/")
    assert not site.in_scope("https://127.0.0.1:8000/")
    assert not site.in_scope("http://localhost:8000/")


def test_site_maps_public_and_crawled_origins() -> None:
    site = Site("http://127.0.0.1:8000", "https://www.example.com")
    assert site.to_crawl("https://www.example.com/a?b=1") == "http://127.0.0.1:8000/a?b=1"
    assert site.to_crawl("https://other.example.com/a") == "https://other.example.com/a"
    assert site.to_public("http://127.0.0.1:8000/a") == "https://www.example.com/a"
    assert site.to_public("http://127.0.0.1:8000") == "https://www.example.com"


class _NoPlainCase:
    @staticmethod
    def fullmatch(_url: str) -> None:
        return None


def _full_path(url: str, strip_params: tuple[str, ...]) -> str | None:
    """normalize_url without its plain case: w3lib's and urllib's passes for every URL."""
    plain = urls_module._NORMAL
    urls_module._NORMAL = _NoPlainCase()  # type: ignore[assignment]
    try:
        return normalize_url(url, strip_params)
    finally:
        urls_module._NORMAL = plain


_EDGES = [
    *"aZ09-._~!$&'()*+,;=:@/%?#[]|\\\" <>`{}^\té",
    "/.", "/..", "/./", "/../", ":80", ":443", ":0", "%2e", "%7e", "xn--",
]
_STRIPS = st.lists(st.sampled_from(["utm_*", "gclid", "*", "", "a", "[ab]*", "?"]), max_size=2).map(tuple)


@settings(max_examples=300, deadline=None)
@given(
    url=st.from_regex(urls_module._NORMAL, fullmatch=True),
    at=st.integers(0, 200),
    edit=st.lists(st.sampled_from(_EDGES), max_size=2).map("".join),
    strip_params=_STRIPS,
)
def test_normalize_url_plain_case_is_the_full_path(
    url: str, at: int, edit: str, strip_params: tuple[str, ...]
) -> None:
    """The plain case returns what w3lib and urllib would, in it and just outside it (a w3lib
    upgrade that spells a plain URL otherwise fails here)."""
    url = url[:at] + edit + url[at:]
    assert normalize_url(url, strip_params) == _full_path(url, strip_params)
