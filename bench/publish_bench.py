"""Benchmark of ``scrapy publish``: N generated entries into a sorted, gzipped, sharded, validated set.

    .venv/bin/python bench/publish_bench.py --entries 1000000 10000000
    .venv/bin/python bench/publish_bench.py --input cms --repo /tmp/old-checkout

The input (``--input crawl``, the default) looks like what ``scrapy crawl sitemap -o
entries.jl`` writes: every field (null when unknown), a content digest on every line, 70% with
a lastmod, URLs in crawl order (not sorted), 1% of them twice. ``--input cms`` is an export
as a CMS writes it: loc and lastmod only, a query string with "&" on a fifth of the URLs,
percent-encoded paths on 15% and raw UTF-8 paths (IRIs, which are percent-encoded) on 10%,
a space in one path in 1,000, no lastmod on a third, dates alone, and date-times in "+02:00"
and in UTC. ``--input text``: the crawl input's URLs, one per line. Each size runs ``scrapy publish`` as a subprocess with the
defaults plus ``SITEMAP_GZIP=true`` (validation is on by default) and reports entries per
second end to end (wall time of the whole command, start-up included), CPU seconds and the
peak RSS of the process (from wait4). ``--republish`` publishes each input once first, then
measures a second publish into the same directory: the one that compares the new set with
the previous one (sitemaps/changes/compare.py).
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bytecode import compile_project


def _pages(count: int, seed: int) -> Iterator[tuple[int, str]]:
    """``(page number, loc)`` of ``count`` entries: crawl order, not sorted; 1% repeat an earlier URL."""
    rng = random.Random(seed)
    for i in range(count):
        n = rng.randrange(count) if i % 100 == 0 else i
        page = (n * 2654435761) % (count * 4)
        yield page, f"https://www.example.com/s{page % 37:02d}/t{page % 997:03d}/p{page:09d}.html"


# Section names of the CMS input: some need percent-encoding.
_SECTIONS = ("café", "über-uns", "niños", "straße", "日本語", "news", "produits", "blog")


def _cms_loc(page: int) -> str:
    """A URL as a CMS exports it: ``page``'s section percent-encoded, raw UTF-8 or plain ASCII."""
    section = _SECTIONS[page % len(_SECTIONS)]
    kind = page % 20
    if kind < 3:  # 15%: percent-encoded
        section = quote(section)
    elif kind < 5:  # 10%: raw UTF-8, an IRI
        pass
    else:
        section = f"s{page % 37:02d}"
    name = f"my page-{page}" if page % 1000 == 999 else f"p{page:09d}"
    query = f"?id={page % 9973}&lang=en" if page % 5 == 0 else ""
    return f"https://www.example.com/{section}/t{page % 997:03d}/{name}.html{query}"


def _write_lines(path: Path, lines: Iterator[str]) -> None:
    with open(path, "w", encoding="utf-8") as out:
        while block := list(itertools.islice(lines, 10_000)):
            out.writelines(block)


def generate(path: Path, count: int, seed: int = 7) -> None:
    """Write ``count`` JSON lines; plain string formatting, as json.dumps would be the bottleneck."""

    def line(page: int, loc: str) -> str:
        lastmod = (
            f'"2024-{page % 12 + 1:02d}-{page % 28 + 1:02d}T{page % 24:02d}:{page % 60:02d}:{page % 59:02d}+00:00"'
            if page % 10 < 7
            else "null"
        )
        return (
            f'{{"loc": "{loc}", "lastmod": {lastmod}, "changefreq": null, "priority": null, '
            f'"content_digest": "{page:020x}"}}\n'
        )

    _write_lines(path, itertools.starmap(line, _pages(count, seed)))


def generate_cms(path: Path, count: int, seed: int = 7) -> None:
    """``count`` JSON lines of a CMS export (see the module docstring), 1% repeated as in ``generate``."""

    def line(page: int, _loc: str) -> str:
        loc = _cms_loc(page)
        form = page % 3
        if form == 0:  # no lastmod: the key is left out
            return f'{{"loc": "{loc}"}}\n'
        if form == 1 or page % 2:
            lastmod = f"2024-{page % 12 + 1:02d}-{page % 28 + 1:02d}"
        else:
            zone = "+02:00" if page % 4 else "Z"
            lastmod = f"2024-{page % 12 + 1:02d}-{page % 28 + 1:02d}T{page % 24:02d}:{page % 60:02d}:{page % 59:02d}{zone}"
        return f'{{"loc": "{loc}", "lastmod": "{lastmod}"}}\n'

    _write_lines(path, itertools.starmap(line, _pages(count, seed)))


def generate_text(path: Path, count: int, seed: int = 7) -> None:
    """The URLs of ``generate`` (the same ones, in the same order), one per line."""
    _write_lines(path, (loc + "\n" for _, loc in _pages(count, seed)))


GENERATORS = {"crawl": (generate, "entries-{}.jl"), "cms": (generate_cms, "cms-{}.jl"), "text": (generate_text, "urls-{}.txt")}


def run(entries: Path, output: Path, repo: Path = REPO_ROOT) -> dict[str, float | int | str]:
    args = [
        sys.executable, "-m", "scrapy", "publish", str(entries),
        "-s", f"SITEMAP_OUTPUT_DIR={output}",
        "-s", "SITEMAP_BASE_URL=https://www.example.com/",
        "-s", "SITEMAP_GZIP=true",
    ]
    started = time.monotonic()
    process = subprocess.Popen(args, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # wait4 gives this child's own CPU time and peak RSS; drain the pipes first (they are small).
    stdout, stderr = process.stdout.read(), process.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - started
    summary = stdout.decode(errors="replace")
    match = re.search(r"Published ([\d,]+) URLs in (\d+) sitemap", summary)
    if os.waitstatus_to_exitcode(status) != 0 or match is None:
        sys.exit(f"scrapy publish failed:\n{summary}\n{stderr.decode(errors='replace')[-3000:]}")
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_mb": round(usage.ru_maxrss / 1024),
        "urls": int(match.group(1).replace(",", "")),
        "files": int(match.group(2)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, nargs="+", default=[1_000_000], help="sizes to run (default 1000000)")
    parser.add_argument("--input", choices=sorted(GENERATORS), default="crawl", help="the kind of input (default crawl)")
    parser.add_argument("--text", action="store_true", help="the same as --input text")
    parser.add_argument(
        "--repo", type=Path, default=REPO_ROOT, help="the checkout whose code runs (default this one), to alternate with another commit"
    )
    parser.add_argument("--work", type=Path, help="directory for the generated input (default: a temp dir)")
    parser.add_argument(
        "--republish", action="store_true", help="measure a second publish over the first one's set (the comparison)"
    )
    options = parser.parse_args()
    kind = "text" if options.text else options.input
    generator, name = GENERATORS[kind]
    compile_project(options.repo)
    work = options.work or Path(tempfile.mkdtemp(prefix="sitemap-publish-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"{kind} input, code of {options.repo}; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f} before")
    print("| entries | input MB | wall s | entries/s | CPU s | peak MB | URLs | files |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    try:
        for count in options.entries:
            entries = work / name.format(count)
            if not entries.exists():
                generator(entries, count)
            output = work / f"out-{count}"
            shutil.rmtree(output, ignore_errors=True)
            if options.republish:
                run(entries, output, options.repo)
            result = run(entries, output, options.repo)
            print(
                f"| {count:,} | {entries.stat().st_size / 2**20:,.0f} | {result['wall_s']} | "
                f"{count / float(result['wall_s']):,.0f} | {result['cpu_s']} | {result['peak_mb']} | "
                f"{result['urls']:,} | {result['files']} |",
                flush=True,
            )
            shutil.rmtree(output, ignore_errors=True)
    finally:
        if options.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
