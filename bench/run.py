"""Crawl benchmark: a bare Scrapy spider and ``scrapy crawl sitemap`` on the same local site, in one run.

    .venv/bin/python bench/run.py --pages 20000

Generates a static site (or takes ``--site DIR`` from an earlier ``--keep`` run), serves it
with nginx (or a Python fallback), measures the server alone, then runs each crawler as a
subprocess and reports wall time, CPU seconds (user + sys of the child), peak RSS and pages
fetched (Scrapy's ``downloader/response_count``), checks that our sitemap lists every
indexable page once and nothing else, and prints the table with the ratios ours / bare.
``--profile`` also samples each crawler with py-spy and prints where its time goes. ``--floor``
adds Scrapy's own cost of the pages our crawl fetched (bench/bare_revalidation.py with
``conditional=no``): what no crawl built on
Scrapy's engine and HTTP client can go below, in the same run as the bare spider.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

from lxml import etree

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bytecode import compile_project
from profile_summary import summarise
from server import measure_rate, serve
from sitegen import GeneratedSite, add_script_links, generate, page_path

REPO_ROOT = Path(__file__).resolve().parent.parent
BARE_SPIDER = REPO_ROOT / "bench" / "bare_spider.py"
BARE_REVALIDATION = REPO_ROOT / "bench" / "bare_revalidation.py"
NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
# Neither crawler may open a control port: several benchmarks or tests may run at once.
QUIET = ["-s", "REMOTE_CONTROL_ENABLED=False", "-s", "TELNETCONSOLE_ENABLED=False", "-s", "LOG_LEVEL=INFO"]


@dataclass
class Result:
    """One crawler's run."""

    name: str
    returncode: int
    wall: float
    cpu: float
    peak_mb: float
    pages: int
    check: str = ""
    timed_out: bool = False

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.wall if self.wall else 0.0

    @property
    def cpu_ms_per_page(self) -> float:
        return 1000 * self.cpu / self.pages if self.pages else 0.0


def run_child(
    name: str, args: list[str], cwd: Path, log: Path, profile: Path | None, timeout: float | None = None
) -> Result:
    """Run one crawler; its own CPU time and peak RSS come from wait4(), not from sampling.

    After ``timeout`` seconds the crawler's process group gets SIGINT, as from Ctrl-C (Scrapy
    stops gracefully and still dumps its stats), and SIGKILL a minute later.
    """
    if profile is not None:
        args = ["py-spy", "record", "--rate", "250", "--format", "raw", "-o", str(profile), "--", *args]
    started = time.monotonic()
    timers: list[threading.Timer] = []
    stopped = threading.Event()
    with open(log, "wb") as output:
        # Its own process group when timed: the signal must reach a second crawling process too.
        process = subprocess.Popen(args, cwd=cwd, stdout=output, stderr=subprocess.STDOUT,
                                   start_new_session=timeout is not None)
        if timeout is not None:
            timers = [threading.Timer(delay, _signal_group, (process.pid, sig, stopped))
                      for delay, sig in ((timeout, signal.SIGINT), (timeout + 60, signal.SIGKILL))]
            for timer in timers:
                timer.start()
        _, status, usage = os.wait4(process.pid, 0)
        for timer in timers:
            timer.cancel()
    wall = time.monotonic() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    text = log.read_text(errors="replace")
    # The last stats dump: a two-process crawl's leader dumps after its helper, with both counted.
    matches = re.findall(r"'downloader/response_count': (\d+)", text)
    match = matches[-1] if matches else None
    return Result(
        name=name,
        returncode=process.returncode,
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        peak_mb=usage.ru_maxrss / 1024,
        pages=int(match) if match else 0,
        timed_out=stopped.is_set(),
    )


def _signal_group(pid: int, sig: int, sent: threading.Event) -> None:
    sent.set()
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:  # it ended meanwhile
        pass


def published_entries(output_dir: Path) -> list[tuple[str, str | None]]:
    """(loc, lastmod) of every <url> in the published set, in file order."""
    index = etree.parse(str(output_dir / "sitemap_index.xml"))
    entries = []
    for loc in index.iter(f"{NS}loc"):
        shard = output_dir / loc.text.rsplit("/", 1)[1]
        data = shard.read_bytes()
        tree = etree.fromstring(gzip.decompress(data) if shard.name.endswith(".gz") else data)
        entries += [(url.findtext(f"{NS}loc"), url.findtext(f"{NS}lastmod")) for url in tree.iter(f"{NS}url")]
    return entries


def published_paths(output_dir: Path) -> list[str]:
    """The URL paths of every <loc> in the published set, in file order."""
    return [urlsplit(loc).path or "/" for loc, _ in published_entries(output_dir)]


def check_output(output_dir: Path, site: GeneratedSite) -> str:
    """'ok' when every expected page is listed once and nothing else, else what is wrong."""
    if not (output_dir / "sitemap_index.xml").exists():
        return "NOTHING PUBLISHED"
    paths = published_paths(output_dir)
    listed = set(paths)
    missing, extra = site.expected - listed, listed - site.expected
    duplicates = len(paths) - len(listed)
    if not (missing or extra or duplicates):
        return f"ok ({len(paths):,} URLs, each expected page once)"
    return (
        f"WRONG: {len(missing)} missing (e.g. {sorted(missing)[:3]}), {len(extra)} extra "
        f"(e.g. {sorted(extra)[:3]}), {duplicates} duplicates"
    )


def crawl_ours(
    base: str, work: Path, site: GeneratedSite | None, name: str, settings: list[str], profile: Path | None,
    spider: str = "sitemap", history: Path | None = None, timeout: float | None = None,
) -> Result:
    """``scrapy crawl``; its published set is checked against ``site``'s expected paths, if given."""
    output = work / f"sitemaps-{name}"
    args = [sys.executable, "-m", "scrapy", "crawl", spider, "-a", f"url={base}/",
            "-s", f"SITEMAP_OUTPUT_DIR={output}", *QUIET,
            # A fresh crawl history per run (a first crawl's cost), not the project's .scrapy.
            "-s", f"SITEMAP_HISTORY={history or work / f'history-{name}.sqlite'}"]
    for setting in settings:
        args += ["-s", setting]
    result = run_child(name, args, REPO_ROOT, work / f"{name}.log", profile, timeout)
    if site is not None:
        result.check = check_output(output, site)
    elif (output / "sitemap_index.xml").exists():
        result.check = f"{len(published_entries(output)):,} URLs"
    else:
        result.check = "NOTHING PUBLISHED"
    return result


def crawl_bare(base: str, work: Path, profile: Path | None, timeout: float | None = None) -> Result:
    return run_bare_spider("bare", BARE_SPIDER, (f"url={base}/",), work, work / "bare.log", profile, timeout)


def run_bare_spider(
    name: str, spider: Path, arguments: tuple[str, ...], work: Path, log: Path, profile: Path | None,
    timeout: float | None, settings: tuple[str, ...] = (),
) -> Result:
    """``scrapy runspider`` of a bench spider file with its ``-a`` arguments; it publishes nothing."""
    # From an empty directory: no scrapy.cfg, so only Scrapy's defaults (and the spider's own).
    cwd = work / "bare-cwd"
    cwd.mkdir(exist_ok=True)
    args = [sys.executable, "-m", "scrapy", "runspider", str(spider), *QUIET]
    for argument in arguments:
        args += ["-a", argument]
    for setting in settings:
        args += ["-s", setting]
    result = run_child(name, args, cwd, log, profile, timeout)
    result.check = "(no output)"
    return result


def table(results: list[Result], bare: Result | None) -> str:
    rows = ["| crawler | exit | pages fetched | wall s | pages/s | CPU s | CPU ms/page | peak MB | output |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in results:
        rows.append(
            f"| {r.name} | {r.returncode} | {r.pages:,} | {r.wall:.1f} | {r.pages_per_second:,.0f} | {r.cpu:.1f} | "
            f"{r.cpu_ms_per_page:.2f} | {r.peak_mb:.0f} | {r.check} |"
        )
    if bare is not None and bare.wall:
        rows += ["", "| ours / bare | wall-time speed-up (bare wall / ours wall) | pages/s | CPU per page | peak memory |",
                 "| --- | ---: | ---: | ---: | ---: |"]
        for r in results:
            if r is not bare and r.wall and r.pages:
                rows.append(
                    f"| {r.name} | {bare.wall / r.wall:.2f}x | {r.pages_per_second / bare.pages_per_second:.2f}x | "
                    f"{r.cpu_ms_per_page / bare.cpu_ms_per_page:.2f}x | {r.peak_mb / bare.peak_mb:.2f}x |"
                )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=20_000, help="pages of the generated site (default 20000)")
    parser.add_argument("--small", action="store_true",
                        help="small pages with few links (sitegen.generate's small=True) instead of 20-60 links a page")
    parser.add_argument("--js-share", type=float, default=0.0, metavar="SHARE",
                        help="give this share of the pages a link built by a script, to a page of its own "
                             "(0.003: 0.3%%); the bare spider cannot see those pages")
    parser.add_argument("--site", type=Path, help="a site directory kept by an earlier --keep run")
    parser.add_argument("--server", choices=("auto", "nginx", "python"), default="auto")
    parser.add_argument("--skip-bare", action="store_true", help="run only our crawl")
    parser.add_argument("--ours-setting", action="append", default=[], metavar="NAME=VALUE",
                        help="extra -s for our crawl (repeatable)")
    parser.add_argument("--ours-spider", default="sitemap",
                        help="spider name for our crawl (prototypes: add their module with "
                             "--ours-setting SPIDER_MODULES=sitemap_spider.crawl.spider,proto and PYTHONPATH)")
    parser.add_argument("--autothrottle-off", action="store_true",
                        help="also run our crawl with AUTOTHROTTLE_ENABLED=False, to see what AutoThrottle costs")
    parser.add_argument("--floor", action="store_true",
                        help="after our crawl, Scrapy's floor: a bare spider fetching the pages our crawl fetched "
                             "(its history) and doing nothing with them (bench/bare_revalidation.py, conditional=no)")
    parser.add_argument("--profile", action="store_true", help="sample each crawler with py-spy and summarise")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (site, logs, sitemaps)")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    options = parser.parse_args()
    compile_project()

    work = Path(tempfile.mkdtemp(prefix="sitemap-bench-"))
    try:
        if options.site:
            site = GeneratedSite.load(options.site.resolve() / "www")
        else:
            started = time.monotonic()
            site = generate(work / "site", options.pages, small=options.small)
            if options.js_share:
                site, hidden = add_script_links(site, options.js_share)
                site.save_manifest()
                print(f"{len(hidden):,} pages reached only through a script")
            print(f"generated {site.pages:,} pages in {time.monotonic() - started:.1f} s: "
                  f"{len(site.expected):,} indexable, {len(site.redirects)} redirects; {work / 'site'}")
        kind, server = serve(site.root, site.redirects, work / "server", options.server)
        with server as base:
            rate, how = measure_rate(base, page_path(min(7, site.pages - 1)))
            print(f"server: {kind} at {base}, {rate:,.0f} requests/s for one page ({how})")
            print(f"load average before: {os.getloadavg()[0]:.2f} (other processes share this machine's {os.cpu_count()} cores)")
            profiles = work / "profiles" if options.profile else None
            if profiles:
                profiles.mkdir()
            results: list[Result] = []
            bare = None
            if not options.skip_bare:
                bare = crawl_bare(base, work, profiles and profiles / "bare.txt")
                results.append(bare)
            results.append(crawl_ours(base, work, site, "ours", options.ours_setting,
                                      profiles and profiles / "ours.txt", options.ours_spider))
            if options.floor:
                results.append(run_bare_spider(
                    "bare fetch (floor)", BARE_REVALIDATION, (f"history={work / 'history-ours.sqlite'}", "conditional=no"),
                    work, work / "bare-fetch.log", profiles and profiles / "bare fetch (floor).txt", None,
                    ("CONCURRENT_ITEMS=1",),  # as our crawl runs
                ))
            if options.autothrottle_off:
                results.append(crawl_ours(base, work, site, "ours-no-autothrottle",
                                          [*options.ours_setting, "AUTOTHROTTLE_ENABLED=False"],
                                          profiles and profiles / "ours-no-autothrottle.txt", options.ours_spider))
            print(f"load average after: {os.getloadavg()[0]:.2f}")
        print()
        print(table(results, bare))
        if profiles:
            for result in results:
                print(f"\n## py-spy: {result.name}\n" + summarise(profiles / f"{result.name}.txt", result.pages, result.cpu_ms_per_page))
        if options.json:
            options.json.write_text(json.dumps({"server": [kind, rate, how], "results": [asdict(r) for r in results]}, indent=2))
    finally:
        if options.keep:
            print(f"\nkept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
