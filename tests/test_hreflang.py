"""hreflang clusters (sitemaps/xml/hreflang.py): only reciprocal alternates are written, each page of
a cluster names every member and itself, and every other alternate is reported with its reason."""

from __future__ import annotations

import re
from pathlib import Path

from sitemap_check import file_bytes, read_sitemap_set

from sitemap_spider.sitemaps.entry import Alternate, RichEntry, SitemapEntry
from sitemap_spider.sitemaps.options import OutputOptions
from sitemap_spider.sitemaps.shards.set_builder import SitemapSetBuilder

BASE = "https://www.example.com/"
_LINK = re.compile(r'<xhtml:link rel="alternate" hreflang="([^"]+)" href="([^"]+)"/>')


def page(path: str, **alternates: str) -> RichEntry:
    """The entry of ``BASE + path`` naming ``hreflang=path`` alternates (x_default for x-default)."""
    named = tuple(
        Alternate(hreflang.replace("_", "-"), href if "://" in href else BASE + href) for hreflang, href in alternates.items()
    )
    return RichEntry(BASE + path, alternates=named)


def publish(tmp_path: Path, entries: list[SitemapEntry], run_size: int = 100_000) -> tuple[dict[str, list[tuple[str, str]]], list[tuple[str, ...]]]:
    """The links written on each loc, and what was reported."""
    problems: list[tuple[str, ...]] = []
    output = tmp_path / "out"
    builder = SitemapSetBuilder(OutputOptions(output, BASE, sort_run_size=run_size), lambda *p: problems.append(p))
    for entry in entries:
        builder.add(entry)
    builder.publish()
    assert [url["loc"] for url in read_sitemap_set(output, BASE)] == sorted({entry.loc for entry in entries})
    links: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(output.glob("sitemap-0*.xml")):
        for line in file_bytes(path).decode().splitlines():
            if line.startswith("<url>"):
                loc = line[len("<url><loc>") : line.index("</loc>")]
                links[loc] = _LINK.findall(line)
    return links, sorted(problems)


def test_a_reciprocal_cluster_names_every_member_on_every_member(tmp_path: Path) -> None:
    cluster = {"en": "en/", "fr": "fr/", "de_AT": "at/", "x_default": "en/"}
    links, problems = publish(tmp_path, [page("en/", **cluster), page("fr/", **cluster), page("at/", **cluster)])
    expected = [("de-AT", BASE + "at/"), ("en", BASE + "en/"), ("fr", BASE + "fr/"), ("x-default", BASE + "en/")]
    assert links == {BASE + "at/": expected, BASE + "en/": expected, BASE + "fr/": expected}
    assert problems == []


def test_a_page_that_does_not_name_itself_is_named_as_the_others_call_it(tmp_path: Path) -> None:
    links, _ = publish(tmp_path, [page("en/", fr="fr/"), page("fr/", en="en/")])
    expected = [("en", BASE + "en/"), ("fr", BASE + "fr/")]
    assert links == {BASE + "en/": expected, BASE + "fr/": expected}


def test_only_reciprocal_alternates_are_written_and_the_others_reported(tmp_path: Path) -> None:
    entries: list[SitemapEntry] = [
        page("en/", en="en/", fr="fr/", de="de/", es="es/"),
        page("fr/", fr="fr/", en="en/"),
        page("de/", de="de/"),  # listed, but does not name en/
        SitemapEntry(BASE + "plain"),
        # es/ is not in the set (a 404, noindex, ...)
    ]
    links, problems = publish(tmp_path, entries)
    expected = [("en", BASE + "en/"), ("fr", BASE + "fr/")]
    assert links == {BASE + "de/": [], BASE + "en/": expected, BASE + "fr/": expected, BASE + "plain": []}
    assert problems == [
        (BASE + "en/", BASE + "de/", "de", "not_reciprocal"),
        (BASE + "en/", BASE + "es/", "es", "target_not_listed"),
    ]


def test_a_page_naming_only_itself_is_no_cluster(tmp_path: Path) -> None:
    links, problems = publish(tmp_path, [page("en/", en="en/", x_default="en/")])
    assert links == {BASE + "en/": []}
    assert problems == []


def test_other_hosts_are_written_unchecked(tmp_path: Path) -> None:
    links, problems = publish(tmp_path, [page("en/", en="en/", fr="https://www.example.fr/")])
    assert links == {BASE + "en/": [("en", BASE + "en/"), ("fr", "https://www.example.fr/")]}
    assert problems == [(BASE + "en/", "https://www.example.fr/", "fr", "unchecked")]


def test_bad_and_duplicate_hreflangs_are_reported_and_left_out(tmp_path: Path) -> None:
    entries: list[SitemapEntry] = [
        RichEntry(
            BASE + "en/",
            alternates=(
                Alternate("en", BASE + "en/"),
                Alternate("fr", BASE + "fr/"),
                Alternate("fr", BASE + "fr-2/"),
                Alternate("en_GB", BASE + "gb/"),
            ),
        ),
        page("fr/", fr="fr/", en="en/"),
        page("fr-2/", fr="fr-2/", en="en/"),
        page("gb/", en="en/"),
    ]
    links, problems = publish(tmp_path, entries)
    assert links[BASE + "en/"] == []  # fr/, fr-2/ and gb/ all unusable: en/ names only itself
    assert problems == [
        (BASE + "en/", BASE + "fr-2/", "fr", "duplicate_hreflang"),
        (BASE + "en/", BASE + "fr/", "fr", "duplicate_hreflang"),
        (BASE + "en/", BASE + "gb/", "en_GB", "bad_hreflang"),
        (BASE + "fr-2/", BASE + "en/", "en", "not_reciprocal"),
        (BASE + "fr/", BASE + "en/", "en", "not_reciprocal"),
        (BASE + "gb/", BASE + "en/", "en", "not_reciprocal"),
    ]


def test_many_clusters_in_small_sorted_runs(tmp_path: Path) -> None:
    entries: list[SitemapEntry] = []
    for n in range(300):
        cluster = {"en": f"{n}/en", "fr": f"{n}/fr", "x_default": f"{n}/en"}
        entries += [page(f"{n}/en", **cluster), page(f"{n}/fr", **cluster)]
    entries.reverse()
    links, problems = publish(tmp_path, entries, run_size=7)
    assert problems == []
    assert len(links) == 600
    assert links[BASE + "17/fr"] == [("en", BASE + "17/en"), ("fr", BASE + "17/fr"), ("x-default", BASE + "17/en")]
