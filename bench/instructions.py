"""Instructions per page of a crawl, counted by valgrind's callgrind: a cost that does not move with
the machine's load, for comparing commits within a few percent (#27: a crawl that uses none of
its features costs at most 2% more per page; wall-clock CPU time here scatters by +-15%).

    .venv/bin/python bench/instructions.py --checkout /tmp/base --checkout /tmp/head
    .venv/bin/python bench/instructions.py --checkout . --pages 100 400 --jobs 2
    .venv/bin/python bench/instructions.py --small --checkout . --checkout ".::NAME=VALUE;NAME2=VALUE2"
    .venv/bin/python bench/instructions.py --checkout "/tmp/base::JOBDIR={work}/job" --checkout ".::JOBDIR={work}/job"

For each checkout (a git worktree of the commit to measure; its own ``sitemap_spider`` is imported,
since the crawl runs from its directory), the whole default crawl of two generated sites (bench/
sitegen.py, served by nginx) runs under callgrind in one process (``SITEMAP_WORKERS=1``), with
the history off, and publishes. Start-up (imports, settings, the reactor) costs the same on both
sites, so ``(I(large) - I(small)) / (pages(large) - pages(small))`` is what one more page costs:
fetching, reading, the pipeline and its share of publishing. Pages are Scrapy's responses, so
robots.txt and redirects count as on the bare spider's side of bench/run.py.

callgrind counts the instructions of the Python interpreter, Scrapy and lxml alike: the same
binary and input give the same total within about 0.2% (two runs of one commit here differed
by 11 million of 5.5 billion). A crawl under callgrind runs about 60 times slower: 100 s for
100 pages on this machine, 140 s for 400.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bytecode import compile_project
from server import serve
from sitegen import generate

_COLLECTED = re.compile(r"Collected : (\d+)")
_RESPONSES = re.compile(r"'downloader/response_count': (\d+)")
_PUBLISHED = re.compile(r"Published \S+: (\d+) URLs")


def crawl(checkout: Path, settings: list[str], base: str, work: Path, tag: str) -> tuple[int, int, int]:
    """Instructions, responses and URLs published by one crawl of ``base`` under callgrind."""
    out = work / f"out-{tag}"
    log = work / f"{tag}.log"
    args = [
        "valgrind", "--tool=callgrind", f"--callgrind-out-file={work / (tag + '.cg')}", "--trace-children=no",
        sys.executable, "-m", "scrapy", "crawl", "sitemap", "-a", f"url={base}/",
        "-s", "REMOTE_CONTROL_ENABLED=False", "-s", "TELNETCONSOLE_ENABLED=False", "-s", "LOG_LEVEL=INFO",
        "-s", "SITEMAP_HISTORY=off", "-s", "SITEMAP_WORKERS=1", "-s", f"SITEMAP_OUTPUT_DIR={out}",
    ]
    for setting in settings:
        # "{work}" is this crawl's own directory: JOBDIR={work}/job gives each crawl its own job.
        args += ["-s", setting.replace("{work}", str(work / f"work-{tag}"))]
    with open(log, "wb") as stream:
        subprocess.run(args, cwd=checkout, stdout=stream, stderr=subprocess.STDOUT, check=False)
    (work / f"{tag}.cg").unlink(missing_ok=True)
    text = log.read_text(errors="replace")
    found = [_COLLECTED.findall(text), _RESPONSES.findall(text), _PUBLISHED.findall(text)]
    if not all(found):
        raise SystemExit(f"{tag}: the crawl did not finish and publish; see {log}")
    return int(found[0][-1]), int(found[1][-1]), int(found[2][-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkout", action="append", required=True,
                        help="a checkout of the commit to measure (repeat for each); PATH::NAME=VALUE;NAME=VALUE "
                             "adds settings to its crawls, to price a component on one checkout")
    parser.add_argument("--pages", type=int, nargs=2, default=[100, 400], metavar=("SMALL", "LARGE"))
    parser.add_argument("--jobs", type=int, default=2, help="crawls under callgrind at once (default 2)")
    parser.add_argument("--small", action="store_true", help="small pages with few links (sitegen's small=True)")
    options = parser.parse_args()
    small, large = options.pages
    variants = []
    for spec in options.checkout:
        path, _, settings = spec.partition("::")
        variants.append((Path(path).resolve(), [s for s in settings.split(";") if s]))
    for checkout, _ in variants:
        compile_project(checkout)  # compiling the package at import would count too
    with tempfile.TemporaryDirectory(prefix="instructions-") as scratch:
        work = Path(scratch)
        sites = {n: generate(work / f"site-{n}", n, small=options.small) for n in (small, large)}
        with ExitStack() as stack:
            bases = {
                n: stack.enter_context(serve(site.root, site.redirects, work / f"server-{n}", "nginx")[1])
                for n, site in sites.items()
            }
            jobs = [(i, checkout, settings, n) for i, (checkout, settings) in enumerate(variants) for n in (small, large)]
            with ThreadPoolExecutor(options.jobs) as pool:
                counts = dict(zip(
                    [(i, n) for i, _, _, n in jobs],
                    pool.map(lambda job: crawl(job[1], job[2], bases[job[3]], work, f"{job[0]}-{job[3]}"), jobs),
                    strict=True,
                ))
    print("| checkout | instructions, small site | instructions, large site | responses | URLs | per page (millions) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for i, spec in enumerate(options.checkout):
        (a, ra, ua), (b, rb, ub) = counts[(i, small)], counts[(i, large)]
        per_page = (b - a) / (rb - ra)
        print(f"| {spec} | {a:,} | {b:,} | {ra} / {rb} | {ua} / {ub} | {per_page / 1e6:.3f} |")


if __name__ == "__main__":
    main()
