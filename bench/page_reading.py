"""Where a page's CPU goes in our own reading of it, on the saved real sites (issue #28).

    .venv/bin/python bench/page_reading.py                     # every site under tests/data/sites
    .venv/bin/python bench/page_reading.py --pages 100 --repeat 5

For each site of tests/data/sites (see SOURCES.md there), parses its first ``--pages`` HTML
files once, as Scrapy's response does, then times each reader the crawl runs on every page
over those trees, best of ``--repeat`` rounds, in microseconds per page:

- parse: lxml's tree, built by parsel (``response.selector``), every crawl pays it once;
- judge: the robots meta tags, the canonical link and the page's metadata date;
- links: the links the crawl follows (crawl/links.py's LinkFinder, one per round, as one crawl
  has one: links met on an earlier page are not resolved again);
- render reason, site scripts, template: ``render=auto``'s decision on a static page;
- fingerprint: the content fingerprint a crawl with history keeps;
- all, in a row: every reader above on one page before the next page, as the crawl runs them.

The readers share one walk of the page for its meta, link, time and script elements
(crawl/pages.py ``page_tags``, kept for the last page): timed alone over all pages, each pays
that walk; in a row, only the first does. The caches the crawl keeps across pages (a script's
lexing and verdict) are warm after the first round, as they are after a site's first pages.

No server and no crawl: the figures are the readers alone, to see which one a change should
go after. What a whole crawl costs is bench/run.py's and bench/recrawl_bench.py's.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from scrapy.http import HtmlResponse
from scrapy.utils.response import get_base_url

from sitemap_spider.crawl.dates import metadata_date
from sitemap_spider.crawl.fingerprint import content_fingerprint
from sitemap_spider.crawl.links import LinkFinder
from sitemap_spider.crawl.pages import canonical_from_html, robots_from_meta
from sitemap_spider.render.learning import template_signature
from sitemap_spider.render.signs import site_script_urls, static_render_reason

SITES = Path(__file__).resolve().parent.parent / "tests" / "data" / "sites"
ORIGIN = "http://127.0.0.1:8000"
NOW = datetime(2030, 1, 1, tzinfo=UTC)


def responses(site: Path, pages: int) -> list[HtmlResponse]:
    files = sorted(site.rglob("*.html"))[:pages]
    return [
        HtmlResponse(url=f"{ORIGIN}/{path.relative_to(site).as_posix()}", body=path.read_bytes(), encoding="utf-8")
        for path in files
    ]


def judge(response: HtmlResponse) -> Any:
    return (
        robots_from_meta(response.selector, ["sitemap_spider"]),
        canonical_from_html(response.selector),
        metadata_date(response.selector.root, NOW),
    )


class Links:
    """The crawl's reading of a page's links (crawl/links.py), with the links kept for the history.

    One finder for a round over a site's pages, as one crawl has: a link met on an earlier
    page is not resolved again. Each round starts with a new finder.
    """

    def __init__(self) -> None:
        self.finder = LinkFinder()

    def reset(self) -> None:
        self.finder = LinkFinder()

    def __call__(self, response: HtmlResponse) -> Any:
        return self.finder.new_links(response, [])


LINKS = Links()


def all_readers(response: HtmlResponse) -> None:
    """Every reader on one page in a row, as the crawl runs them: what one page costs in all."""
    for reader in READERS.values():
        if reader is not all_readers:
            reader(response)


READERS: dict[str, Callable[[HtmlResponse], Any]] = {
    "judge": judge,
    "links": LINKS,
    "render reason": lambda r: static_render_reason(r.selector, get_base_url(r)),
    "site scripts": lambda r: site_script_urls(r.selector, get_base_url(r), ORIGIN),
    "template": lambda r: template_signature(r.selector, []),
    "fingerprint": lambda r: content_fingerprint(r.selector.root),
    "all, in a row": all_readers,
}


def per_page(items: list[HtmlResponse], reader: Callable[[HtmlResponse], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        LINKS.reset()
        started = time.perf_counter()
        for response in items:
            reader(response)  # page_tags keeps one page's tags: each page is walked anew
        best = min(best, time.perf_counter() - started)
    return best / len(items) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=300, help="HTML files per site (default 300)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the best is kept (default 3)")
    options = parser.parse_args()
    rows = ["| site | pages | KiB per page | parse | " + " | ".join(READERS) + " |",
            "| --- | ---: | ---: | ---: |" + " ---: |" * len(READERS)]
    for site in sorted(path for path in SITES.iterdir() if path.is_dir()):
        items = responses(site, options.pages)
        if not items:
            continue
        best = float("inf")
        for _ in range(options.repeat):
            fresh = responses(site, options.pages)
            started = time.perf_counter()
            for response in fresh:
                response.selector  # noqa: B018  # the parse, as the crawl's first reader pays it
            best = min(best, time.perf_counter() - started)
        for response in items:
            response.selector  # noqa: B018
        size = sum(len(response.body) for response in items) / len(items) / 1024
        figures = [per_page(items, reader, options.repeat) for reader in READERS.values()]
        rows.append(f"| {site.name} | {len(items)} | {size:.0f} | {best / len(items) * 1e6:,.0f} | "
                    + " | ".join(f"{figure:,.0f}" for figure in figures) + " |")
    print("microseconds per page, best of", options.repeat, "rounds")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
