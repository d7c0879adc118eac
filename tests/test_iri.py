"""Tests of sitemap_spider/sitemaps/ingest/iri.py: IRIs and spaces take the crawl's normal form, nothing else changes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_spider.sitemaps.ingest.iri import encode_iris, normal_fields, normal_loc
from sitemap_spider.sitemaps.ingest.plain_values import plain_locs
from sitemap_spider.sitemaps.urls import normalize_url
from sitemap_spider.sitemaps.rules import check_loc

BASE = "https://www.example.com/"


@pytest.mark.parametrize(
    ("loc", "normal"),
    [
        # Valid as given: written as given (None: no normal form asked for), whatever the crawl would make of it.
        (BASE + "a", None),
        ("https://WWW.Example.COM:443/a/./b/../c?q=%7e", None),
        # A fragment is dropped, and nothing else of a loc valid as given changes.
        ("https://WWW.Example.COM:443/a/./b/../c?q=%7e#top", "https://WWW.Example.COM:443/a/./b/../c?q=%7e"),
        (BASE + "a#top#2", BASE + "a"),
        (BASE + "#", BASE),
        (BASE + "caf%c3%a9", None),
        # Raw UTF-8 (an IRI) or spaces: the crawl's normal form, all of it.
        (BASE + "s20/caf\u00e9-0.html", BASE + "s20/caf%C3%A9-0.html"),
        (BASE + "my page.html", BASE + "my%20page.html"),
        (BASE + "\u65e5\u672c?q=\u00e9&r=a b", BASE + "%E6%97%A5%E6%9C%AC?q=%C3%A9&r=a%20b"),
        ("HTTPS://WWW.Example.com:443/a/./b/../caf\u00e9#top", BASE + "a/caf%C3%A9"),
        (BASE + "%7euser/caf\u00e9?", BASE + "~user/caf%C3%A9"),
        (BASE + "caf\u00e9?q='x'", BASE + "caf%C3%A9?q=%27x%27"),
        (BASE + "a%zz b", BASE + "a%25zz%20b"),
        ("https://b\u00fccher.example/caf\u00e9", "https://xn--bcher-kva.example/caf%C3%A9"),
        # What cannot be made a loc: left as it is, for the checks to refuse.
        (BASE + "caf\u00e9\x01", None),
        (BASE + "tab\there", None),
        (BASE + "caf\ud800", None),
        ("ftp://www.example.com/caf\u00e9", None),
        ("/relative/caf\u00e9", None),
    ],
)
def test_normal_loc(loc: str, normal: str | None) -> None:
    assert normal_loc(loc) == normal
    if normal is not None:
        check_loc(normal)
    fields, changed = normal_fields((loc, "2024-05-01", None, None, "d"))
    assert fields == (normal or loc, "2024-05-01", None, None, "d")
    assert changed == (normal is not None and normal != loc)


# Characters that matter to one step or another of normalize_url.
_PATH_CHARS = st.sampled_from(list("ab/.?&='%#~ !$()*+,;:@[]|\\\"<>^`{}\t\x01") + ["\u00e9", "\u65e5", "\u00a0", "\ud800"])


@settings(max_examples=500, deadline=None)
@given(paths=st.lists(st.text(alphabet=_PATH_CHARS, max_size=12), min_size=1, max_size=6))
def test_the_block_encoding_is_the_normal_form(paths: list[str]) -> None:
    locs = [BASE + "x/" + path for path in paths]
    encoded = encode_iris(locs)
    if encoded is None or not plain_locs(encoded[0]):
        return  # the block goes to the general path (jsonl_entries.encode_columns, chunk._encode_txt_fast)
    normal, count = encoded
    assert normal == [normal_loc(loc) or loc for loc in locs]
    assert count == sum(normal_loc(loc) not in (None, loc) for loc in locs)


def test_a_block_without_iris_is_left_as_it_is() -> None:
    locs = [BASE + "a", BASE + "b?x=1&y=2"]
    assert encode_iris(locs) == (locs, 0)
    assert normalize_url(BASE + "caf\u00e9") == encode_iris([BASE + "caf\u00e9"])[0][0]  # type: ignore[index]
