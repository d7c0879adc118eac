from __future__ import annotations

import pytest
from parsel import Selector

from sitemap_spider.crawl.pages import (
    canonical_from_header,
    canonical_from_html,
    is_html,
    robots_from_header,
    robots_from_meta,
)

AGENTS = ("googlebot",)


def page(head: str) -> Selector:
    return Selector(text=f"<html><head>{head}</head><body>x</body></html>")


@pytest.mark.parametrize(
    ("head", "noindex", "nofollow"),
    [
        ("", False, False),
        ('<meta name="robots" content="noindex">', True, False),
        ('<meta name="robots" content="NOINDEX, NOFOLLOW">', True, True),
        ('<meta content="noindex,follow" name="ROBOTS">', True, False),
        ('<META NAME="Robots" CONTENT="none">', True, True),
        ('<meta name="googlebot" content="noindex">', True, False),
        ('<meta name="otherbot" content="noindex">', False, False),
        ('<meta name="robots" content="index, nofollow">', False, True),
        ('<meta name="robots" content="max-snippet:-1, noarchive">', False, False),
        ('<meta name="description" content="noindex">', False, False),
        ('<meta name="robots" content="unavailable_after: 2010-06-25">', True, False),
        ('<meta name="robots" content="unavailable_after: Friday, 25-Jun-10 15:00:00 PST, nofollow">', True, True),
        ('<meta name="robots" content="unavailable_after: 2999-06-25">', False, False),
    ],
)
def test_robots_from_meta(head: str, noindex: bool, nofollow: bool) -> None:
    directives = robots_from_meta(page(head), AGENTS)
    assert (directives.noindex, directives.nofollow) == (noindex, nofollow)


@pytest.mark.parametrize(
    ("values", "noindex"),
    [
        ([], False),
        (["noindex"], True),
        ([b"NoIndex, nofollow"], True),
        (["googlebot: noindex"], True),
        (["GoogleBot:noindex"], True),
        (["otherbot: noindex"], False),
        (["otherbot: noindex", "none"], True),
        (["unavailable_after: 25 Jun 2999 15:00:00 PST"], False),
        (["noarchive, unavailable_after: 25 Jun 2999 15:00:00 PST"], False),
        (["noarchive, unavailable_after: 25 Jun 2010 15:00:00 PST"], True),
        (["max-snippet: 20, noindex"], True),
        # Header values a proxy or CDN merged into one line: each agent's items apply to it alone.
        (["bingbot: noindex, googlebot: noindex"], True),
        (["noarchive, googlebot: noindex"], True),
        (["otherbot: noarchive, googlebot: noindex"], True),
        (["googlebot: noarchive, otherbot: noindex"], False),
        (["otherbot: noindex, nofollow"], False),
        (["googlebot: nofollow", "otherbot: noindex"], False),
        # unavailable_after: a date passed is noindex; a date to come or one unreadable is not.
        (["unavailable_after: 2010-06-25"], True),
        (["unavailable_after: Friday, 25-Jun-10 15:00:00 PST"], True),
        (["googlebot: unavailable_after: Fri, 25 Jun 2010 15:00:00 GMT, nofollow"], True),
        (["otherbot: unavailable_after: 2010-06-25"], False),
        (["unavailable_after: 2999-01-01T00:00:00Z"], False),
        (["unavailable_after: Friday, 25-Jun-2999 15:00:00 GMT"], False),
        (["unavailable_after: soon"], False),
    ],
)
def test_robots_from_header(values: list[str | bytes], noindex: bool) -> None:
    assert robots_from_header(values, AGENTS).noindex is noindex


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        ("", None),
        ('<link rel="canonical" href="/a">', "/a"),
        ('<link href=" https://h/b " REL="Canonical">', "https://h/b"),
        ('<link rel="alternate canonical" href="/c">', "/c"),
        ('<link rel="canonical" href="">', None),
        ('<link rel="alternate" href="/fr/">', None),
        # Two different canonical URLs: conflicting hints, which Google ignores; the same one twice is one.
        ('<link rel="canonical" href="/first"><link rel="canonical" href="/second">', None),
        ('<link rel="canonical" href="/same"><link rel="canonical" href=" /same ">', "/same"),
    ],
)
def test_canonical_from_html(head: str, expected: str | None) -> None:
    assert canonical_from_html(page(head)) == expected


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([], None),
        (['<https://h/a>; rel="canonical"'], "https://h/a"),
        ([b"<https://h/p.pdf>; rel=canonical"], "https://h/p.pdf"),
        (['<https://h/s.css>; rel="preload"; as="style", <https://h/c>; rel="canonical"'], "https://h/c"),
        (['<https://h/fr>; rel="alternate"; hreflang="fr"'], None),
    ],
)
def test_canonical_from_header(values: list[str | bytes], expected: str | None) -> None:
    assert canonical_from_header(values) == expected


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        ("text/html", True),
        (b"text/html; charset=utf-8", True),
        ("Application/XHTML+XML", True),
        ("application/pdf", False),
        ("text/plain", False),
        ("", False),
        (None, False),
    ],
)
def test_is_html(content_type: str | bytes | None, expected: bool) -> None:
    assert is_html(content_type) is expected


def test_each_page_is_read_for_itself_when_pages_alternate() -> None:
    # page_tags keeps the last page's tags: a page read between two reads of another must not
    # lend its tags to it, and a page's own tags are found in the body as in the head.
    listed = page('<link rel="canonical" href="/a">')
    hidden = Selector(text='<html><head></head><body><meta name="robots" content="noindex">'
                           '<link rel="canonical" href="/b"></body></html>')
    for _ in range(2):
        assert canonical_from_html(listed) == "/a"
        assert not robots_from_meta(listed, AGENTS).noindex
        assert canonical_from_html(hidden) == "/b"
        assert robots_from_meta(hidden, AGENTS).noindex
    # The same tree reached through its lxml root is the same page.
    assert canonical_from_html(listed.root) == "/a"


def test_tags_after_a_stray_closing_html_tag_count() -> None:
    # libxml2 parses what follows </html> into a sibling of the root element.
    stray = Selector(text='<p>x</p></html><meta name="robots" content="noindex"><link rel="canonical" href="/c">')
    assert robots_from_meta(stray, AGENTS).noindex
    assert canonical_from_html(stray) == "/c"
