"""crawl/fingerprint.py: the main content's fingerprint ignores per-request noise and sees real changes."""

from __future__ import annotations

import pytest
from parsel import Selector

from sitemap_spider.crawl.fingerprint import VERSION, content_fingerprint, same_content

BASE = """<!DOCTYPE html><html><head><title>Post</title>
<meta name="csrf-token" content="{token}"><script nonce="{token}">var t = "{token}";</script>
<style>.x{{color:red}}</style><link rel="stylesheet" href="/s.css?v={token}"></head>
<body><header><a href="/">Home</a> <span>Hello visitor {token}</span></header>
<nav><a href="/new-{token}">Newest</a></nav>
<main><h1>{title}</h1><p>First <b>paragraph</b> of the post.</p>{extra}
<img src="/img/photo.jpg?cb={token}" alt="photo"></main>
<aside class="related"><a href="/r/{token}">Related {token}</a></aside>
<form><input type="hidden" name="csrfmiddlewaretoken" value="{token}"><button>Go</button></form>
<footer>Page generated at 2026-11-24 10:{minute}:07 in 0.0{minute}s</footer></body></html>"""


def fingerprint(html: str) -> str:
    return content_fingerprint(Selector(text=html).root)


def page(token: str = "a1", minute: str = "01", title: str = "A post", extra: str = "") -> str:
    return BASE.format(token=token, minute=minute, title=title, extra=extra)


@pytest.mark.parametrize(
    ("label", "other"),
    [
        ("CSRF tokens, nonces, related links, cache-busters, stamps", page(token="zz9", minute="59")),
        ("whitespace only", page().replace("First <b>", "First\n   <b>")),
        ("a generated-at line inside main", page(extra="<p>Generated at 10:11:12</p>")),
        ("a rendered-in stamp inside main", page(extra="<p>Rendered in 0.0123 s at 10:11:12.</p>")),
        ("a clock time inside main", page(extra="<p>10:11:12</p>").replace("10:11:12", "23:59:58")),
        ("a hidden box", page(extra='<div hidden>token 1234</div>')),
        ("a sidebar widget by class", page(extra='<div class="widget sidebar">Popular: X</div>')),
        ("a comment", page(extra="<!-- cache hit 123 -->")),
    ],
)
def test_noise_does_not_change_the_fingerprint(label: str, other: str) -> None:
    base_extra = ""
    if "clock" in label:
        base_extra = "<p>10:11:12</p>"
    elif "generated-at" in label:
        base_extra = "<p>Generated at 09:00:00</p>"
    elif "rendered-in" in label:
        base_extra = "<p>Rendered in 0.9876 s at 09:00:00.</p>"
    assert fingerprint(page(extra=base_extra)) == fingerprint(other), label


@pytest.mark.parametrize(
    ("label", "other"),
    [
        ("the title", page(title="Another post")),
        ("a new paragraph", page(extra="<p>An update.</p>")),
        ("a changed word", page().replace("First", "Second")),
        ("another image", page().replace("/img/photo.jpg", "/img/other.jpg")),
    ],
)
def test_content_changes_change_the_fingerprint(label: str, other: str) -> None:
    assert fingerprint(page()) != fingerprint(other), label


def test_without_main_the_single_article_then_the_body_count() -> None:
    article = "<html><body><nav>n {n}</nav><article><p>Text</p></article><p>outside {n}</p></body></html>"
    assert fingerprint(article.format(n=1)) == fingerprint(article.format(n=2))
    body = "<html><body><nav>n {n}</nav><div><p>Text {n}</p></div></body></html>"
    assert fingerprint(body.format(n=1)) != fingerprint(body.format(n=2))


def test_text_after_a_skipped_element_counts() -> None:
    html = "<html><body><main><p>a <script>x</script> tail {n}</p></main></body></html>"
    assert fingerprint(html.format(n=1)) != fingerprint(html.format(n=2))


@pytest.mark.parametrize(
    ("before", "now", "same"),
    [("v1:aa", "v1:aa", True), ("v1:aa", "v1:bb", False), ("v0:aa", "v1:bb", True), ("aa", "v1:bb", True),
     (None, "v1:aa", False), (None, None, True)],
)
def test_fingerprints_of_another_version_count_as_unchanged(before: str | None, now: str | None, same: bool) -> None:
    assert same_content(before, now) is same
    assert fingerprint(page()).startswith(VERSION)


def test_the_tree_is_left_as_it_was() -> None:
    selector = Selector(text=page())
    before = selector.get()
    content_fingerprint(selector.root)
    assert selector.get() == before
