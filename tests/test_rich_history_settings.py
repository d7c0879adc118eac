"""The settings that shape what a page's history record keeps of its extensions (the image filter,
the news language, how URLs are written): changed between two crawls, the pages are read again,
as when a kind is turned on (real crawls of tests/site_rich.py on 127.0.0.1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sitemap_spider.crawl.enrich import Enricher, url_form
from sitemap_spider.crawl.urls import Site
from sitemap_spider.default_settings import SITEMAP_STRIP_PARAMS
from sitemap_spider.rich_config import RichConfig, noted_kinds
from sitemap_spider.sitemaps.entry import News
from tests.crawl_fixtures import run_crawl
from tests.fault_server import FaultPlan, FaultServer
from tests.site_rich import SETTINGS, RichSite, build_rich_site
from tests.site_server import SiteServer
from tests.sitemap_check import read_sitemap_set
from tests.test_rich_site import check, url_lines



QUICK = {"SITEMAP_RETRY_TIMES": "1", "SITEMAP_RETRY_DELAY": "0.1", "SITEMAP_RETRY_LAST_PASS_DELAY": "1"}
#: The filter of the first crawl, each unlike SETTINGS's: without the CDN (its og:image, d.png and
#: the thousand of /many-images left out), or keeping icons (/icons/star.png, 16 pixels, listed).
OLD_FILTERS = {
    "hosts": {"SITEMAP_IMAGE_HOSTS": ""},
    "min_size": {"SITEMAP_IMAGE_MIN_SIZE": "0"},
}


@pytest.mark.parametrize("changed", sorted(OLD_FILTERS))
def test_a_changed_image_filter_reads_the_pages_again_once(
    changed: str, rich_site: tuple[RichSite, SiteServer], tmp_path: Path
) -> None:
    site, server = rich_site
    server.validators = True  # ETags and 304s, as a static file server gives them
    old = run_crawl(site.spec.start_url, tmp_path, settings=SETTINGS | OLD_FILTERS[changed])
    assert old.returncode == 0, old.describe()
    gallery = url_lines(old.output_dir, "sitemap")[site.spec.origin + "/gallery"]
    assert gallery != site.expected[site.spec.origin + "/gallery"]  # the old filter lists other images

    seen = len(server.requests)
    new = run_crawl(site.spec.start_url, tmp_path, settings=SETTINGS)
    check(new, site)  # what a crawl without a history lists
    without_history = run_crawl(site.spec.start_url, tmp_path / "without", settings=SETTINGS)
    check(without_history, site)
    assert new.files() == without_history.files()
    listed = {entry["loc"][len(site.spec.origin) :] for entry in site.spec.expected_listed()}
    conditional = {r.target for r in server.requests[seen:] if "If-None-Match" in dict(r.headers)}
    assert not conditional & listed, conditional
    assert "Extension settings changed since the last crawl (images)" in new.stderr

    again = run_crawl(site.spec.start_url, tmp_path, settings=SETTINGS)
    assert again.returncode == 0, again.describe()
    read_sitemap_set(again.output_dir, site.spec.origin + "/")
    assert again.files() == new.files()
    assert again.stats.get("sitemap/history/not_modified", 0) >= len(listed), again.stats


def test_a_page_kept_while_the_image_filter_changed_is_read_again_later(tmp_path: Path) -> None:
    """The crawl that adds the CDN to SITEMAP_IMAGE_HOSTS lists /gallery from its old record while
    it fails (kept, without the CDN's images): the history then does not claim the new filter for
    images, and the next crawl reads the listed pages again, /gallery with the CDN's images."""
    with FaultServer() as server:
        site = build_rich_site(server.origin)
        server.serve(site.spec)
        server.validators = True
        old = run_crawl(site.spec.start_url, tmp_path, settings={**SETTINGS, **QUICK, "SITEMAP_IMAGE_HOSTS": ""})
        assert old.returncode == 0, old.describe()
        server.inject(FaultPlan(share=0, outage_after=0, refuse_after=0, fixed=(("/gallery", "503", 10**9),)))
        failing = run_crawl(site.spec.start_url, tmp_path, settings={**SETTINGS, **QUICK})
        assert failing.returncode == 0, failing.describe()
        gallery = site.spec.origin + "/gallery"
        kept = url_lines(failing.output_dir, "sitemap")[gallery]  # from its old record
        assert "/img/a.jpg" in kept and "cdn.example.net" not in kept
        server.inject(FaultPlan(share=0, outage_after=0, refuse_after=0))
        seen = len(server.requests)
        back = run_crawl(site.spec.start_url, tmp_path, settings={**SETTINGS, **QUICK})
        check(back, site)
        asked = [r for r in server.requests[seen:] if r.target == "/gallery"]
        assert asked and "If-None-Match" not in dict(asked[0].headers)


# --- the history's note, and what a record gives back ---------------------------------------
ORIGIN = "http://127.0.0.1:8000"
SITE = Site(ORIGIN, ORIGIN)
STRIP = tuple(SITEMAP_STRIP_PARAMS)


def test_the_note_names_each_kind_and_a_digest_of_settings_unlike_the_defaults() -> None:
    assert RichConfig().kinds() == RichConfig.DEFAULT_KINDS == "h"
    assert RichConfig(images=True, videos=True, news_name="The Daily").kinds() == "hivn"
    hosts = ("cdn.example.net", "img.example.org")
    assert RichConfig(images=True, image_hosts=hosts).kinds() == RichConfig(images=True, image_hosts=hosts[::-1]).kinds()
    changed = [
        RichConfig(images=True, image_min_size=0),
        RichConfig(images=True, image_hosts=("cdn.example.net",)),
        RichConfig(news_name="The Daily", news_language="en"),
    ]
    notes = [rich.kinds() for rich in changed]
    assert [noted_kinds(note) for note in notes] == [["h", note[1:]] for note in notes]
    assert all(len(note) == len("hi(12345678)") for note in notes) and len(set(notes)) == len(notes)
    # Read a letter at a time (as an older version does), a note still names only its kinds.
    assert set(notes[0]) & set("hivn") == {"h", "i"}
    # The name of the publication is not in it: a record's news is listed under the setting's.
    assert RichConfig(news_name="Another").kinds() == "hn"
    # How URLs are written concerns every kind: another public origin, other parameters stripped.
    assert url_form(SITE, STRIP[::-1]) == ""
    assert url_form(SITE, ("utm_*",)) != "" and url_form(Site(ORIGIN, "https://www.example.com"), STRIP) != ""
    assert noted_kinds(RichConfig(videos=True).kinds(url_form(SITE, ())))[1].startswith("v(")


def _enricher(rich: RichConfig, history_kinds: str, strip: tuple[str, ...] = STRIP) -> Enricher:
    return Enricher(rich, SITE, strip, lambda *problem: None, history_kinds)


def test_a_history_of_another_filter_or_none_noted_is_read_again_or_not() -> None:
    rich = RichConfig(images=True, image_hosts=("cdn.example.net",))
    assert not _enricher(rich, "hi").knows(None)  # kept with the defaults' filter
    assert _enricher(rich, "hi").unknown_to_history == "Extension settings changed since the last crawl (images)"
    assert _enricher(rich, "h").unknown_to_history == "Extensions turned on since the last crawl (images)"
    same = _enricher(rich, rich.kinds())
    assert same.knows(None) and same.unknown_to_history == ""
    # A history kept before the digests: the defaults' filter and URLs.
    assert _enricher(RichConfig(images=True), "hi").knows(None)
    assert not _enricher(RichConfig(images=True), "hi", ("utm_*",)).knows(None)


def test_a_record_s_news_is_listed_under_the_publication_s_name_of_the_settings() -> None:
    stored = json.dumps({"news": {"name": "The Old Daily", "language": "en", "publication_date": "2024-05-01",
                                  "title": "T"}})  # fmt: skip
    restored = _enricher(RichConfig(news_name="The Daily"), "hn").restored(stored)
    assert restored["news"] == News("The Daily", "en", "2024-05-01", "T")
