"""Benchmark of the HTML report: its size and writing time for N excluded URLs, and its load in Chromium.

    .venv/bin/python bench/report_bench.py --rows 200000 1000000 --open --memory

Feeds the report writer (sitemap_spider/report/) directly, not through a crawl: N exclusions
shaped like a crawl's (URLs of a site with sections, words and ids; reasons in the proportions
of the generated benchmark site, with their details: redirect targets, canonical URLs, status
codes), the five charts of a crawl report, and 1,000 audit findings. For each N it prints the
file's size and the seconds of writing it, with ``--memory`` the peak memory traced while writing
it again (tracemalloc), and with ``--open`` the
seconds headless Chromium (/usr/bin/chromium) takes until every table is drawn, with any console
error or request other than the file itself.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from sitemap_spider.crawl.report_facts import ListedFacts, html_report

SITE = "https://www.example-shop.com"
SECTIONS = ("products", "blog", "docs", "category", "tag", "search", "account", "news", "help", "de", "fr")
WORDS = ("red", "shoe", "winter", "guide", "review", "best", "cheap", "size", "running", "jacket", "how-to",
         "install", "release", "notes", "2024", "sale", "new", "classic", "leather", "wool")  # fmt: skip
# (reason, weight): roughly the generated site's mix, redirects and canonicals first.
REASONS = (("redirect", 30), ("canonical", 25), ("noindex", 15), ("http_error", 10), ("duplicate_content", 8),
           ("non_html", 5), ("robots", 4), ("pattern", 2), ("error", 1))  # fmt: skip


def url(rng: random.Random) -> str:
    words = "-".join(rng.sample(WORDS, rng.randint(2, 4)))
    query = f"?page={rng.randint(2, 40)}" if rng.random() < 0.15 else ""
    return f"{SITE}/{rng.choice(SECTIONS)}/{words}-{rng.randint(1, 999_999)}{query}"


def exclusions(count: int, seed: int = 1) -> Iterator[tuple[str, str, str | None]]:
    rng = random.Random(seed)
    names = [name for name, _ in REASONS]
    weights = [weight for _, weight in REASONS]
    for _ in range(count):
        reason = rng.choices(names, weights)[0]
        detail = {
            "redirect": lambda: f"301 to {url(rng)}",
            "canonical": lambda: f"names {url(rng)}",
            "http_error": lambda: rng.choice(("404", "410", "500", "503")),
            "non_html": lambda: "application/pdf",
            "error": lambda: "TCP connection timed out: 110: Connection timed out.",
        }.get(reason, lambda: None)()
        yield url(rng), reason, detail


def findings(count: int) -> Iterator[dict[str, object]]:
    rng = random.Random(2)
    for n in range(count):
        yield {"rule": rng.choice(("lastmod-future", "loc-not-200", "orphan", "not-listed")),
               "severity": rng.choice(("error", "warning")), "url": url(rng),
               "file": f"sitemap-{n % 7 + 1:05d}.xml", "line": rng.randint(2, 200_000), "detail": "synthetic"}


def head(rows: int) -> dict[str, object]:
    return {
        "urls": rows * 4, "files": rows * 4 // 50_000 + 1, "index": "/srv/www/sitemaps/sitemap_index.xml",
        "index_url": f"{SITE}/sitemap_index.xml", "finish_reason": "finished",
        "start_time": datetime(2026, 11, 24, 8, tzinfo=UTC),
        "excluded": {name: rows * weight // 100 for name, weight in REASONS},
        "counts": {"fetched": rows * 5, "status/200": rows * 4, "status/301": rows // 3, "status/404": rows // 10,
                   **{f"depth/{d}": rows // (d + 1) for d in range(12)}},
    }  # fmt: skip


def listed_facts(rows: int) -> ListedFacts:
    facts = ListedFacts()
    rng = random.Random(3)
    for _ in range(min(rows * 4, 200_000)):  # the shape of the chart, not its totals, matters here
        facts.add(url(rng), rng.choice((None, "2026-11-20", "2025-01-01T10:00:00+00:00", "2019-05-05")))
    return facts


def measure(rows: int, out_dir: Path, open_it: bool, memory: bool) -> None:
    from sitemap_spider.crawl.report import REASONS as MEANINGS
    from sitemap_spider.report import write_html

    path = out_dir / f"report-{rows}.html"
    facts = listed_facts(rows)
    rows_in = list(exclusions(rows))  # made before the clock starts: the writer is measured, not the data
    started = time.perf_counter()
    size = write_html(path, html_report(head(rows), facts, iter(rows_in), MEANINGS, findings(1_000)))
    seconds = time.perf_counter() - started
    line = f"{rows:>9,} exclusions: {size / 1e6:6.2f} MB written in {seconds:5.2f} s"
    if memory:
        # Again under tracemalloc (which slows it down), rows made on the fly: what the writer holds.
        tracemalloc.start()
        write_html(path, html_report(head(rows), facts, exclusions(rows), MEANINGS, findings(1_000)))
        line += f", peak {tracemalloc.get_traced_memory()[1] / 1e6:.1f} MB traced while writing"
        tracemalloc.stop()
    if open_it:
        line += "; " + open_in_chromium(path)
    print(line, flush=True)


def open_in_chromium(path: Path) -> str:
    from playwright.sync_api import expect, sync_playwright

    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox"] if os.geteuid() == 0 else []
        )
        page = browser.new_page()
        page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("request", lambda r: problems.append(r.url) if r.url != path.as_uri() else None)
        started = time.perf_counter()
        page.goto(path.as_uri())
        expect(page.locator("section.table:not([data-ready])")).to_have_count(0, timeout=300_000)
        loaded = time.perf_counter() - started
        started = time.perf_counter()
        page.click('#excluded th button[data-col="0"]')
        expect(page.locator("#excluded th").nth(0)).to_have_attribute("aria-sort", "ascending")
        sorted_in = time.perf_counter() - started
        info = page.locator("#excluded .pageinfo").inner_text()
        browser.close()
    return f"Chromium: tables drawn in {loaded:.2f} s, sorted by URL in {sorted_in:.2f} s ({info}); problems: {problems}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[200_000])
    parser.add_argument("--open", action="store_true", help="load each report in headless Chromium")
    parser.add_argument("--memory", action="store_true", help="write again under tracemalloc, for the peak")
    parser.add_argument("--keep", type=Path, help="write the reports here instead of a temporary directory")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        out_dir = args.keep or Path(scratch)
        out_dir.mkdir(parents=True, exist_ok=True)
        for rows in args.rows:
            measure(rows, out_dir, args.open, args.memory)


if __name__ == "__main__":
    main()
