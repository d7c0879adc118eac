"""crawl/fingerprint.py: the main content's fingerprint ignores per-request noise and sees real changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from parsel import Selector

from sitemap_spider.crawl.fingerprint import VERSION, content_fingerprint, is_noise_name, same_content

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
        ("a page-created stamp over two lines", page(extra="<p>Page\n  created in 0.4567 s</p>")),
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


def test_a_record_of_the_version_before_counts_as_unchanged() -> None:
    # v2 reads forms, article headers and noise names token by token: the same page gives
    # another fingerprint than v1 did, and an upgrade must not date every page anew.
    assert VERSION == "v2:"
    assert same_content("v1:0123456789abcdef01234567", fingerprint(page()))


def test_the_tree_is_left_as_it_was() -> None:
    selector = Selector(text=page())
    before = selector.get()
    content_fingerprint(selector.root)
    assert selector.get() == before


# --- real pages of real CMSs (tests/data/cms/SOURCES.md) ------------------------------
CMS = Path(__file__).parent / "data" / "cms"


def cms_page(name: str) -> str:
    return (CMS / name).read_text(encoding="utf-8")


def edit(html: str, old: str, new: str) -> str:
    """The page with its one ``old`` replaced: a string found twice or not at all would test nothing."""
    assert html.count(old) == 1, old
    return html.replace(old, new)


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        # MediaWiki puts a category's members in <div class="mw-category-generated">.
        ("mediawiki_category.html", '<a href="/index.php/Venus" title="Venus">Venus</a>',
         '<a href="/index.php/Vesta" title="Vesta">Vesta</a>'),
        ("mediawiki_category.html",
         '<li><a href="/index.php/Wastelands" title="Wastelands">Wastelands</a></li>', ""),
        ("mediawiki_category.html", "out of 245 total.", "out of 246 total."),
        # The history list is inside the compare <form>.
        ("mediawiki_history.html", "(add a Paranid navbox)", "(add a Paranid navbox, fix the links)"),
        ('mediawiki_history.html', '<ul id="pagehistory">',
         '<ul id="pagehistory">\n<li><a href="/index.php?title=Agamemnon&amp;oldid=16222" title="Agamemnon"'
         ' class="mw-changeslist-date">09:00, 1 May 2018</a>'
         ' <span class="comment">(new revision)</span></li>'),
        ("wordpress_tag.html", "Helpful Docker Shell Script Aliases and Functions",
         "Helpful Docker Shell Script Aliases"),
        ("wordpress_archive.html", "Sublime Text 3 Snippets", "Sublime Text 4 Snippets"),
        # A views row's title is in the <header> of its <article>.
        ("drupal_views.html", '<a href="node/117.html">Silly train, escalators are for people!</a></h2>',
         '<a href="node/117.html">Silly train!</a></h2>'),
        ("hugo_list.html", "Notes on POIS", "Notes on POIs"),
    ],
)
def test_a_changed_member_of_a_real_list_page_changes_the_fingerprint(name: str, old: str, new: str) -> None:
    page = cms_page(name)
    assert fingerprint(page).startswith(VERSION)
    assert fingerprint(edit(page, old, new)) != fingerprint(page)


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        # Per request: MediaWiki's request id, its parser cache stamps, the ad slot.
        ("mediawiki_category.html", "WShIrlkfZokAAE6XKZ0AAAAT", "XAbcdefghijklmnopqrstuv0"),
        ("mediawiki_category.html", "Cached time: 20170525180947", "Cached time: 20170601000102"),
        ("mediawiki_category.html", "and timestamp 20170525180947", "and timestamp 20170601000102"),
        ("mediawiki_category.html", 'data-ad-slot="4173455889"', 'data-ad-slot="1111111111"'),
        ("mediawiki_category.html", 'accesskey="r">Recent changes', 'accesskey="r">Recent changes (3 new)'),
        ("mediawiki_history.html", "Wg5OEVkfZokAAAzd56EAAAAH", "Wg9zzzzzzzzzzzzzzzzzzzzz"),
        # The year field's default is the year of the request.
        ("mediawiki_history.html", 'type="number" value="2017"', 'type="number" value="2018"'),
        # A newer post in the sidebar's Recent Posts widget; WP Rocket's per-build hashes.
        ("wordpress_tag.html", "Yabai and SKHD Configs</a>", "A newer post</a>"),
        ("wordpress_tag.html", 'data-rocket-location-hash="996a5cb79ed5501cccd550f7cacf7222"',
         'data-rocket-location-hash="00000000000000000000000000000000"'),
        ("wordpress_tag.html", "?ver=a3aac00bd94deba0cf72546dc56a221a", "?ver=b0b0"),
        # Drupal's form token, its random view DOM id, and another sponsor drawn for the block.
        ("drupal_views.html", "form-qcNIy6yHVCZAalvIk8CU31Cqxms_1VCkYWBT-UpxWCU", "form-A1b2C3d4E5f6"),
        ("drupal_views.html", "view-dom-id-6b24829bfdd7e97b511a6fba7b8034ed", "view-dom-id-0123456789abcdef"),
        ("drupal_views.html", "palantir-logo.png%3Fitok=xlDBTrWT", "other-logo.png%3Fitok=AAAAAAAA"),
        ("hugo_list.html", "copyrightYear>2022 - 2026</span>", "copyrightYear>2022 - 2027</span>"),
    ],
)
def test_noise_on_a_real_page_leaves_the_fingerprint(name: str, old: str, new: str) -> None:
    page = cms_page(name)
    assert fingerprint(edit(page, old, new)) == fingerprint(page)


@pytest.mark.parametrize(
    ("name", "inside", "noise"),
    [
        ("mediawiki_category.html", '<div class="mw-category-generated" lang="en" dir="ltr">',
         '<p class="timestamp">Generated at 10:11:12 for {n}</p>'),
        ("wordpress_tag.html", '<h1 class="page-title">Tag: <span>docker</span></h1>',
         '<div class="widget related-posts">Related: {n}</div>'),
        ("drupal_views.html", 'view-display-id-page view-dom-id-6b24829bfdd7e97b511a6fba7b8034ed">',
         '<div class="share-buttons">Shared {n} times</div>'),
        ("hugo_list.html", "<h3 class=group-title>2025</h3>", "<p>Page generated in 0.0{n} s</p>"),
    ],
)
def test_noise_inside_the_main_content_of_a_real_page_is_left_out(name: str, inside: str, noise: str) -> None:
    page = cms_page(name)
    first = edit(page, inside, inside + noise.format(n=1))
    assert fingerprint(first) == fingerprint(edit(page, inside, inside + noise.format(n=7)))


def test_a_post_tagged_with_a_noise_word_still_counts() -> None:
    # WordPress writes each post's tags into its class: tag-social-media is a tag, not a share box.
    page = edit(cms_page("wordpress_tag.html"), "tag-docker tag-linux", "tag-social-media tag-linux")
    title = "Installing CLI Tools (fish, php, composer, nvm) with Arch Linux and"
    assert fingerprint(edit(page, title, "Installing CLI Tools with Arch Linux and")) != fingerprint(page)


@pytest.mark.parametrize(
    ("names", "noise"),
    [
        ("widget widget_recent_entries", True),
        ("related-posts", True),
        ("relatedPosts", True),
        ("yarpp-related", True),
        ("left-sidebar", True),
        ("generated-sidebar portlet", True),
        ("sidebar-first", True),
        ("share-buttons", True),
        ("social", True),
        ("csrf-token", True),
        ("cookie-notice-container", True),
        ("ad-slot", True),
        ("timestamp", True),
        ("mw-category-generated", False),  # MediaWiki's category member list
        ("tag-share tag-social-media category-ads", False),  # WordPress post classes
        ("has-sidebar", False),
        ("no-sidebars", False),  # Drupal's body class
        ("content-sidebar-wrap", False),  # Genesis: the content and its sidebar
        ("elementor-widget elementor-widget-text-editor", False),  # Elementor: every element
        ("ui-widget ui-widget-content", False),  # jQuery UI tabs
        ("token keyword", False),  # Prism's highlighted code
        ("node-promoted node-teaser", False),
        ("adsbygoogle", False),
        ("", False),
    ],
)
def test_noise_names_are_read_token_by_token(names: str, noise: bool) -> None:
    assert is_noise_name(names) is noise


def test_a_sentence_with_a_stamp_word_but_no_number_is_content() -> None:
    # Stamps carry a time, a date or a duration; "How this blog is built" is a title.
    html = "<html><body><main><h2>How this {what} is built</h2></main></body></html>"
    assert fingerprint(html.format(what="blog")) != fingerprint(html.format(what="site"))
