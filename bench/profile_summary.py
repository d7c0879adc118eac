"""Where a crawler's time goes, from a py-spy ``--format raw`` profile (collapsed stacks).

    .venv/bin/python bench/profile_summary.py profile.txt [pages] [cpu_ms_per_page]

Two views: self time by area (each sample counted once, by the file of its innermost Python
frame, so the shares add up to 100%), and inclusive time of the functions the issue asks
about (a sample counts for each of them on its stack, so those shares overlap). Given the
pages fetched and the CPU ms per page, shares are also turned into ms per page.
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

# (area, substrings of a frame's file) - first match wins, so specific paths come first.
AREAS = (
    ("LinkExtractor", ("scrapy/linkextractors/",)),
    ("w3lib URL functions", ("w3lib/",)),
    ("urllib.parse", ("urllib/parse.py",)),
    ("HTML parsing, XPath (parsel, lxml)", ("parsel/", "lxml/", "cssselect/")),
    ("Request / Response objects", ("scrapy/http/",)),
    # json: Scrapy's request fingerprint is a SHA1 of json.dumps() of the request.
    ("fingerprint + dupefilter", ("scrapy/utils/request.py", "scrapy/dupefilters.py", "hashlib", "json/")),
    ("per-request caches (weakref)", ("weakref.py", "_weakrefset.py")),
    ("scheduler + priority queues", ("scrapy/core/scheduler.py", "scrapy/pqueues.py", "scrapy/squeues.py", "queuelib/")),
    ("spider middlewares", ("scrapy/spidermiddlewares/", "scrapy/core/spidermw.py")),
    ("downloader middlewares", ("scrapy/downloadermiddlewares/", "scrapy/core/downloader/middleware.py")),
    ("AutoThrottle", ("scrapy/extensions/throttle.py",)),
    ("HTTP download (handler, Twisted web)", ("scrapy/core/downloader/", "twisted/web/", "scrapy/core/http2/")),
    ("engine + scraper", ("scrapy/core/engine.py", "scrapy/core/scraper.py", "scrapy/utils/defer.py",
                          "scrapy/utils/asyncgen.py", "scrapy/utils/asyncio.py")),
    ("signals, stats, logging", ("scrapy/signalmanager.py", "scrapy/statscollectors.py", "pydispatch/",
                                 "logging/", "scrapy/utils/signal.py", "scrapy/extensions/")),
    ("event loop (Twisted, asyncio)", ("twisted/", "asyncio/", "selectors.py")),
    ("browser rendering (playwright)", ("scrapy_playwright/", "playwright/")),
    ("ours: URL normalisation", ("sitemap_spider/sitemaps/urls.py", "sitemap_spider/crawl/urls.py")),
    ("ours: middlewares", ("sitemap_spider/crawl/middlewares.py",)),
    ("ours: spider", ("sitemap_spider/crawl/", "sitemap_spider/render/")),
    ("ours: pipeline, modes, sitemap output", ("sitemap_spider/pipeline.py", "sitemap_spider/crawl_end.py",
                                              "sitemap_spider/modes/", "sitemap_spider/sitemaps/")),
    ("start-up (imports)", ("<frozen importlib", "importlib/")),
    ("other Scrapy", ("scrapy/",)),
)
# (label, substring of a frame "function (file:line)") - inclusive.
FUNCTIONS = (
    ("LinkExtractor.extract_links", "extract_links (scrapy/linkextractors"),
    ("Request.__init__", "Request.__init__ (scrapy/http/request/__init__.py"),
    ("request fingerprint", "fingerprint (scrapy/utils/request.py"),
    ("dupefilter request_seen", "request_seen (scrapy/dupefilters.py"),
    ("scheduler enqueue_request", "enqueue_request (scrapy/core/scheduler.py"),
    ("our normalize_url", "normalize_url (sitemap_spider/sitemaps/urls.py"),
    ("our _requests_for (link -> Request)", "_requests_for (sitemap_spider/crawl/spider.py"),
    ("our _judge (robots meta, canonical, entry)", "_judge (sitemap_spider/crawl/spider.py"),
    ("robots meta + canonical XPath", "(sitemap_spider/crawl/pages.py"),
    ("render decision (auto mode)", "(sitemap_spider/render/renderer.py"),
    ("HtmlResponse.selector (parse HTML)", "selector (scrapy/http/response/text.py"),
    ("OffsiteMiddleware / SiteScopeMiddleware", "offsite.py"),
    ("robots.txt middleware", "(scrapy/downloadermiddlewares/robotstxt.py"),
    ("AutoThrottle", "(scrapy/extensions/throttle.py"),
)


def _file_of(frame: str) -> str:
    return frame[frame.rfind("(") + 1 :] if "(" in frame else frame


def summarise(path: Path, pages: int = 0, cpu_ms_per_page: float = 0.0, top: int = 12) -> str:
    areas: collections.Counter[str] = collections.Counter()
    functions: collections.Counter[str] = collections.Counter()
    self_time: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        count = int(count_text)
        frames = stack.split(";")
        leaf = frames[-1]
        if ("(threading.py" in leaf and "wait" in leaf) or "_do_waitpid" in leaf:
            continue  # an idle thread (py-spy's idle detection misses these blocking waits)
        total += count
        self_time[leaf] += count
        where = _file_of(leaf)
        areas[next((area for area, needles in AREAS if any(n in where for n in needles)), "other")] += count
        for label, needle in FUNCTIONS:
            if any(needle in frame for frame in frames):
                functions[label] += count
    if not total:
        return "(no samples)"

    def cell(count: int) -> str:
        share = count / total
        per_page = f" | {share * cpu_ms_per_page:.2f}" if cpu_ms_per_page else ""
        return f"{100 * share:.1f}%{per_page}"

    unit = " | ms/page" if cpu_ms_per_page else ""
    rule = " | ---:" if cpu_ms_per_page else ""
    lines = [f"{total:,} samples" + (f" ({total / pages:.1f} per page fetched)" if pages else ""), ""]
    lines += [f"| self time by area | share{unit} |", f"| --- | ---:{rule} |"]
    lines += [f"| {area} | {cell(count)} |" for area, count in areas.most_common()]
    lines += ["", f"| inclusive, per function | share{unit} |", f"| --- | ---:{rule} |"]
    lines += [f"| {label} | {cell(count)} |" for label, count in functions.most_common()]
    lines += ["", "| top frames by self time | share |", "| --- | ---: |"]
    lines += [f"| `{frame[:110]}` | {100 * count / total:.1f}% |" for frame, count in self_time.most_common(top)]
    return "\n".join(lines)


if __name__ == "__main__":
    print(
        summarise(
            Path(sys.argv[1]),
            int(sys.argv[2]) if len(sys.argv) > 2 else 0,
            float(sys.argv[3]) if len(sys.argv) > 3 else 0.0,
        )
    )
