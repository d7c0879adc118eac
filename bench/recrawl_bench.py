"""Recrawl benchmark (issue #24): what a second crawl of an unchanged site costs against the first.

    .venv/bin/python bench/recrawl_bench.py --pages 2000                       # a generated site
    .venv/bin/python bench/recrawl_bench.py --site tests/data/sites/javadoc    # a real one
    .venv/bin/python bench/recrawl_bench.py --site tests/data/sites/hexo-blog --ours-setting SITEMAP_RENDER=never

In one run, on one site served by nginx (or the Python fallback; both answer conditional
requests with 304), as subprocesses: the bare Scrapy spider, our first crawl (``scrapy crawl
sitemap`` with a fresh history file), our recrawl (the same command, the same history,
the site unchanged), and the recrawl's floor in Scrapy: a bare spider that sends the same
conditional requests and does nothing with the answers (bench/bare_revalidation.py). Reports wall time, CPU seconds (user + sys of the crawl and its
children), peak RSS, page responses (Scrapy's responses less robots.txt's; on a first crawl
with render=auto they include the script files it reads, ``sitemap/render/scripts_read``),
how many were 200 and 304 (Scrapy's ``downloader/response_status_count/...``, robots.txt's
left out) and our ``sitemap/history/not_modified``, and whether the recrawl published the
same set as the first crawl (the same <loc> and <lastmod> pairs). Then the ratios recrawl /
first and first / bare, against the issue's targets.

``--change-home`` adds a paragraph to the home page before the recrawl: the daily recrawl that
finds one page changed (the recrawl's set then differs from the first crawl's by that page's
lastmod). ``--site DIR`` takes a directory kept by ``bench/run.py --keep`` (DIR/manifest.json and
DIR/www: the first crawl is also checked against the pages it must list) or any directory of
served files, such as the real sites in tests/data/sites/ (see SOURCES.md there). Each crawl
is stopped after ``--timeout`` seconds (SIGINT, as Ctrl-C: the stats are still dumped, but an
interrupted crawl publishes nothing).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bytecode import compile_project
from run import REPO_ROOT, Result, crawl_bare, crawl_ours, published_entries, run_bare_spider
from server import measure_rate, serve
from sitegen import GeneratedSite, generate, page_path

# The targets for a recrawl of an unchanged site.
WALL_TARGET = 0.5
CPU_TARGET = 0.3
NOT_MODIFIED_TARGET = 0.9


@dataclass
class Crawl:
    """One crawl's figures: the process's and the Scrapy stats' that matter for a recrawl."""

    result: Result
    responses: int
    page_responses: int
    ok: int
    not_modified: int
    history_not_modified: int

    @property
    def share_304(self) -> float:
        return self.not_modified / self.page_responses if self.page_responses else 0.0

    @property
    def requests_per_second(self) -> float:
        return self.responses / self.result.wall if self.result.wall else 0.0


def crawl_bare_revalidation(history: Path, work: Path, timeout: float, settings: tuple[str, ...] = ()) -> Result:
    """A bare Scrapy spider that sends the recrawl's conditional requests and does nothing else."""
    spider = REPO_ROOT / "bench" / "bare_revalidation.py"
    name = "bare revalidation" + (f" ({', '.join(settings)})" if settings else "")
    return run_bare_spider(name, spider, (f"history={history}",), work, work / f"{name}.log", None, timeout, settings)


def last_stat(log: str, key: str) -> int:
    """The value of ``key`` in the last stats dump of a crawl's log (0 when absent)."""
    matches = re.findall(rf"'{re.escape(key)}': (\d+)", log)
    return int(matches[-1]) if matches else 0


def read_crawl(result: Result, log: Path) -> Crawl:
    text = log.read_text(errors="replace")
    responses = last_stat(text, "downloader/response_count")
    return Crawl(
        result=result,
        responses=responses,
        # Exact counts: scripts_read also counts scripts that were never fetched.
        page_responses=responses - last_stat(text, "robotstxt/response_count"),
        ok=last_stat(text, "downloader/response_status_count/200")
        - last_stat(text, "robotstxt/response_status_count/200"),
        not_modified=last_stat(text, "downloader/response_status_count/304"),
        history_not_modified=last_stat(text, "sitemap/history/not_modified"),
    )


def compare_sets(first: Path, second: Path) -> str:
    """Whether two published sets hold the same (loc, lastmod) pairs, and if not, how they differ."""
    if not (first / "sitemap_index.xml").exists() or not (second / "sitemap_index.xml").exists():
        return "not comparable: a crawl published nothing"
    a, b = set(published_entries(first)), set(published_entries(second))
    if a == b:
        return f"same set ({len(a):,} URLs, same lastmod)"
    dates_a, dates_b = dict(a), dict(b)
    locs_a, locs_b = set(dates_a), set(dates_b)
    redated = sorted((loc, dates_a[loc], dates_b[loc])
                     for loc in locs_a & locs_b if dates_a[loc] != dates_b[loc])
    return (
        f"DIFFERENT: {len(locs_a - locs_b)} URLs only in the first (e.g. {sorted(locs_a - locs_b)[:2]}), "
        f"{len(locs_b - locs_a)} only in the recrawl (e.g. {sorted(locs_b - locs_a)[:2]}), "
        f"{len(redated)} with another lastmod (e.g. {redated[:2]})"
    )


def load_site(directory: Path) -> tuple[GeneratedSite | None, Path, int]:
    """(the generated site or None for a real one, its root, its HTML page count)."""
    directory = directory.resolve()
    if (directory / "manifest.json").exists():
        site = GeneratedSite.load(directory / "www")
        return site, site.root, site.pages
    return None, directory, sum(1 for _ in directory.rglob("*.html"))


def table(crawls: dict[str, Crawl]) -> str:
    rows = ["| crawl | exit | wall s | CPU s | peak MB | page responses | 200 | 304 | 304 share "
            "| history not_modified | responses/s | published |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for name, c in crawls.items():
        r = c.result
        exit_code = f"{r.returncode} (timed out)" if r.timed_out else str(r.returncode)
        rows.append(
            f"| {name} | {exit_code} | {r.wall:.1f} | {r.cpu:.1f} | {r.peak_mb:.0f} | {c.page_responses:,} | "
            f"{c.ok:,} | {c.not_modified:,} | {c.share_304:.1%} | {c.history_not_modified:,} | "
            f"{c.requests_per_second:,.1f} | {r.check} |"
        )
    return "\n".join(rows)


def ratios(crawls: dict[str, Crawl], same: str) -> str:
    first, recrawl = crawls["first"].result, crawls["recrawl"].result
    wall, cpu = recrawl.wall / first.wall, recrawl.cpu / first.cpu
    share = crawls["recrawl"].share_304
    lines = ["| ratio | wall | CPU | target |", "| --- | ---: | ---: | --- |",
             f"| recrawl / first | {wall:.2f}x | {cpu:.2f}x | wall <= {WALL_TARGET}x: "
             f"{'met' if wall <= WALL_TARGET else 'NOT met'}; CPU <= {CPU_TARGET}x: "
             f"{'met' if cpu <= CPU_TARGET else 'NOT met'} |"]
    notes = []
    if "bare" in crawls:
        bare = crawls["bare"].result
        lines.append(f"| first / bare | {first.wall / bare.wall:.2f}x | {first.cpu / bare.cpu:.2f}x | |")
        ours, theirs = crawls["first"].page_responses, crawls["bare"].page_responses
        if abs(ours - theirs) > 0.1 * max(ours, theirs):
            # A javadoc's frameset, for one: Scrapy's LinkExtractor does not follow <frame src>.
            notes.append(f"note: page responses: the bare spider's {theirs:,}, our first crawl's {ours:,}: "
                         "first / bare compares different work")
    for name in [name for name in crawls if name.startswith("bare revalidation")]:
        floor = crawls[name].result
        lines.append(f"| recrawl / {name} | {recrawl.wall / floor.wall:.2f}x | {recrawl.cpu / floor.cpu:.2f}x | |")
        lines.append(f"| {name} / first | {floor.wall / first.wall:.2f}x | {floor.cpu / first.cpu:.2f}x | "
                     "Scrapy's own cost of the recrawl's requests |")
    timed_out = " (the recrawl timed out: these are its figures until then)" if recrawl.timed_out else ""
    lines += ["", f"recrawl: {share:.1%} of page responses answered 304 (target >= {NOT_MODIFIED_TARGET:.0%}: "
              f"{'met' if share >= NOT_MODIFIED_TARGET else 'NOT met'}){timed_out}; {same}", *notes]
    return "\n".join(lines)


def change_home(root: Path) -> None:
    """Add a paragraph to the home page, a second later than the first crawl (a new Last-Modified)."""
    time.sleep(1.1)  # HTTP dates have whole seconds
    index = root / "index.html"
    text = index.read_text(encoding="utf-8")
    paragraph = "<p>A new post today.</p>"
    index.write_text(text.replace("</body>", paragraph + "</body>", 1) if "</body>" in text else text + paragraph,
                     encoding="utf-8")
    print("changed the home page (index.html)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=2_000, help="pages of the generated site (default 2000)")
    parser.add_argument("--site", type=Path, help="a kept generated site or a directory of served files")
    parser.add_argument("--server", choices=("auto", "nginx", "python"), default="auto")
    parser.add_argument("--skip-bare", action="store_true", help="leave out the bare spider (the bare revalidation still runs)")
    parser.add_argument("--ours-setting", action="append", default=[], metavar="NAME=VALUE",
                        help="extra -s for both of our crawls (repeatable)")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds after which a crawl is stopped (default 300)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the work directory (site, logs, sitemaps, history)")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument("--change-home", action="store_true",
                        help="before the recrawl, add a paragraph to the home page (index.html): the "
                             "daily recrawl that finds a page changed (a --site is served from a copy)")
    options = parser.parse_args()
    compile_project()

    work = Path(tempfile.mkdtemp(prefix="recrawl-bench-"))
    try:
        if options.site:
            site, root, pages = load_site(options.site)
            redirects = site.redirects if site else {}
            print(f"site: {root} ({pages:,} HTML files)")
        else:
            started = time.monotonic()
            site = generate(work / "site", options.pages)
            root, pages, redirects = site.root, site.pages, site.redirects
            print(f"generated {pages:,} pages in {time.monotonic() - started:.1f} s: "
                  f"{len(site.expected):,} indexable; {work / 'site'}")
        if options.change_home and options.site:
            root = Path(shutil.copytree(root, work / "served"))  # the page changed is a copy's
        kind, server = serve(root, redirects, work / "server", options.server)
        history = work / "history.sqlite"
        crawls: dict[str, Crawl] = {}
        with server as base:
            rate, how = measure_rate(base, page_path(min(7, pages - 1)) if site else "/")
            print(f"server: {kind} at {base}, {rate:,.0f} requests/s for one page ({how})")
            print(f"load average before: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores, shared)",
                  flush=True)
            if not options.skip_bare:
                crawls["bare"] = read_crawl(crawl_bare(base, work, None, options.timeout), work / "bare.log")
            for name in ("first", "recrawl"):
                if name == "recrawl" and options.change_home:
                    change_home(root)
                result = crawl_ours(base, work, site, name, options.ours_setting, None,
                                    history=history, timeout=options.timeout)
                crawls[name] = read_crawl(result, work / f"{name}.log")
                print(f"{name}: {result.wall:.1f} s, exit {result.returncode}", flush=True)
            if (work / "sitemaps-first").exists():  # the history holds what the first crawl saw
                # Scrapy's defaults, and its floor: CONCURRENT_ITEMS=1, as our crawl runs (the
                # default 100 starts 100 asyncio tasks for each response's output).
                for settings in ((), ("CONCURRENT_ITEMS=1",)):
                    result = crawl_bare_revalidation(history, work, options.timeout, settings)
                    crawls[result.name] = read_crawl(result, work / f"{result.name}.log")
                    print(f"{result.name}: {result.wall:.1f} s, exit {result.returncode}", flush=True)
            print(f"load average after: {os.getloadavg()[0]:.2f}")
        same = compare_sets(work / "sitemaps-first", work / "sitemaps-recrawl")
        print()
        print(table(crawls))
        print()
        print(ratios(crawls, same))
        if options.json:
            options.json.write_text(json.dumps({
                "server": [kind, rate, how], "pages": pages, "same_set": same,
                "crawls": {name: {**asdict(c.result), **{k: v for k, v in asdict(c).items() if k != "result"}}
                           for name, c in crawls.items()},
            }, indent=2))
    finally:
        if options.keep:
            print(f"\nkept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
