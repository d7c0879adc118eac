"""Whether two checkouts publish the same bytes: ``scrapy publish`` of the benchmark inputs, and
crawls of the real sites of tests/data/sites, each gzipped and plain, compared file by file.

    .venv/bin/python bench/same_bytes.py --base /tmp/old-checkout [--entries 200000] [--no-crawl]

A refactoring of sitemaps/ must leave every published byte as it was: this runs the code of
``--base`` and of this checkout (or ``--repo``) on the same inputs, into separate directories,
and compares the directories (names and bytes, as ``cmp`` does). The inputs are those of
bench/publish_bench.py (``crawl`` and ``cms``), its ``text`` input, and a JSON Lines input
with extension fields (hreflang alternates, images, videos, news). Exit status 1 when any
file differs.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from publish_bench import GENERATORS
from server import python_server

SITES = REPO_ROOT / "tests" / "data" / "sites"
BASE_URL = "https://www.example.com/"


def generate_rich(path: Path, count: int, seed: int = 7) -> None:
    """JSON Lines with extension fields on some lines; news published an hour ago (kept by both runs)."""
    fresh = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    with open(path, "w", encoding="utf-8") as out:
        for n in range(count):
            page = (n * 2654435761 + seed) % (count * 4)
            loc = f"{BASE_URL}s{page % 37:02d}/p{page:09d}.html"
            record: dict[str, object] = {"loc": loc, "lastmod": f"2024-05-{page % 28 + 1:02d}" if n % 3 else None}
            if n % 50 == 0:  # a language cluster of three pages, one alternate not listed
                cluster = [f"{BASE_URL}{lang}/c{n}.html" for lang in ("en", "fr", "de")]
                for lang, href in zip(("en", "fr"), cluster):
                    alternates = [{"hreflang": code, "href": other} for code, other in zip(("en", "fr", "de"), cluster)]
                    out.write(json.dumps({"loc": href, "alternates": alternates}) + "\n")
            if n % 7 == 0:
                record["images"] = [f"{BASE_URL}img/{page}.png", f"https://cdn.example.net/{page}&x.jpg"]
            if n % 97 == 0:
                record["videos"] = [
                    {"thumbnail_loc": f"{BASE_URL}t{page}.jpg", "title": f"Video <{page}>", "description": "How – to",
                     "content_loc": f"{BASE_URL}v{page}.mp4", "duration": 300}
                ]  # fmt: skip
            if n % 211 == 0:
                record["news"] = {"name": "The Daily", "language": "en", "publication_date": fresh, "title": f"N {n}"}
            if n % 1000 == 5:
                record["changefreq"], record["priority"] = "daily", 0.8
            out.write(json.dumps(record) + "\n")


def publish(repo: Path, entries: Path, output: Path, gzip: bool) -> None:
    args = [
        sys.executable, "-m", "scrapy", "publish", str(entries),
        "-s", f"SITEMAP_OUTPUT_DIR={output}",
        "-s", f"SITEMAP_BASE_URL={BASE_URL}",
        "-s", f"SITEMAP_GZIP={gzip}",
        "-s", "SITEMAP_SORT_RUN_SIZE=20000",  # several runs and merges at these sizes
    ]  # fmt: skip
    _run(args, repo)


def crawl(repo: Path, start: str, work: Path, gzip: bool) -> None:
    args = [
        sys.executable, "-m", "scrapy", "crawl", "sitemap", "-a", f"url={start}",
        "-s", f"SITEMAP_OUTPUT_DIR={work / 'sitemaps'}",
        "-s", f"SITEMAP_REPORT={work / 'report.json'}",
        "-s", f"SITEMAP_HISTORY={work / 'history.sqlite'}",
        "-s", f"SITEMAP_GZIP={gzip}",
        "-s", "LOG_LEVEL=INFO",
        "-s", "TELNETCONSOLE_ENABLED=False",
    ]  # fmt: skip
    _run(args, repo)


def _run(args: list[str], repo: Path) -> None:
    done = subprocess.run(args, cwd=repo, capture_output=True, text=True, timeout=1800, check=False)
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} in {repo} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")


def differences(first: Path, second: Path) -> list[str]:
    """The file names that are not in both directories, or whose bytes differ."""
    names = sorted({p.name for p in first.iterdir()} | {p.name for p in second.iterdir()})
    found = []
    for name in names:
        a, b = first / name, second / name
        if not (a.is_file() and b.is_file() and filecmp.cmp(a, b, shallow=False)):
            found.append(name)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, required=True, help="the checkout of the commit before")
    parser.add_argument("--repo", type=Path, default=REPO_ROOT, help="the checkout compared with it (default this one)")
    parser.add_argument("--entries", type=int, default=200_000, help="entries of each publish input (default 200000)")
    parser.add_argument("--no-crawl", action="store_true", help="compare the publishes only")
    parser.add_argument("--work", type=Path, help="directory for inputs and outputs (default: a temp dir)")
    options = parser.parse_args()
    work = options.work or Path(tempfile.mkdtemp(prefix="sitemap-same-bytes-"))
    work.mkdir(parents=True, exist_ok=True)
    inputs = {}
    for kind, (generator, name) in GENERATORS.items():
        inputs[kind] = work / name.format(options.entries)
        if not inputs[kind].exists():
            generator(inputs[kind], options.entries)
    inputs["rich"] = work / f"rich-{options.entries // 10}.jl"
    generate_rich(inputs["rich"], options.entries // 10)
    failed = 0
    checks: list[tuple[str, Path, Path]] = []
    for kind, entries in inputs.items():
        for gzip in (False, True):
            label = f"publish {kind} {'gzip' if gzip else 'plain'}"
            outputs = [work / f"{kind}-{gzip}-{side}" for side in ("base", "repo")]
            for repo, output in zip((options.base, options.repo), outputs):
                shutil.rmtree(output, ignore_errors=True)
                publish(repo, entries, output, gzip)
            checks.append((label, *outputs))
    if not options.no_crawl:
        for site in sorted(p for p in SITES.iterdir() if p.is_dir()):
            with python_server(site, {}) as base:
                for gzip in (False, True):
                    label = f"crawl {site.name} {'gzip' if gzip else 'plain'}"
                    outputs = [work / f"{site.name}-{gzip}-{side}" for side in ("base", "repo")]
                    for repo, output in zip((options.base, options.repo), outputs):
                        shutil.rmtree(output, ignore_errors=True)
                        crawl(repo, base + "/", output, gzip)
                    checks.append((label, outputs[0] / "sitemaps", outputs[1] / "sitemaps"))
    for label, first, second in checks:
        files = len(list(first.iterdir()))
        different = differences(first, second)
        failed += bool(different)
        print(f"{label}: {files} files, {'DIFFERENT: ' + ', '.join(different) if different else 'same bytes'}", flush=True)
    if options.work is None:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
