"""Time and peak memory of ``scrapy validate`` on sitemaps of growing size, up to the 50 MiB limit.

    python bench/validate_bench.py [--runs 3]

Each file holds 50,000 <url> (the limit) with locs padded to reach its size, and a lastmod; it is
validated as .xml and as .xml.gz in a fresh process. Memory should not grow with the file: each
<url> is checked and dropped as it is read.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
URLS = 50_000


def write_sitemap(path: Path, megabytes: int) -> None:
    per_url = megabytes * 1024 * 1024 // URLS
    pad = max(0, per_url - 120)
    with path.open("wb") as out:
        out.write(b'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n')
        for i in range(URLS):
            loc = f"https://www.example.com/p/{i}/{'a' * min(pad, 1900)}"
            out.write(f"<url><loc>{loc}</loc><lastmod>2024-05-01T10:20:30+00:00</lastmod></url>\n".encode())
        out.write(b"</urlset>\n")


def run_once(path: Path) -> tuple[float, float]:
    """Seconds and the peak RSS in MB of one `scrapy validate` process."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"validate failed on {path}: {done.stdout[-2000:]} {done.stderr[-2000:]}")
    return seconds, float(done.stdout.split()[-1])


# The command in-process, so that the peak RSS is its own (not a wrapper's).
_CHILD = """
import resource, sys
from scrapy.cmdline import execute
try:
    execute(["scrapy", "validate", sys.argv[1], "-s", "LOG_LEVEL=ERROR"])
except SystemExit as exit:
    code = exit.code
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
sys.exit(code)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print("| file | bytes | seconds (median) | peak RSS MB (max) |")
    print("| --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for megabytes in (5, 25, 49):
            plain = Path(tmp) / f"s{megabytes}.xml"
            write_sitemap(plain, megabytes)
            packed = Path(tmp) / f"s{megabytes}.xml.gz"
            packed.write_bytes(gzip.compress(plain.read_bytes(), 6))
            for path in (plain, packed):
                results = [run_once(path) for _ in range(args.runs)]
                seconds = statistics.median(r[0] for r in results)
                peak = max(r[1] for r in results)
                print(f"| {path.name} | {path.stat().st_size:,} | {seconds:.2f} | {peak:.0f} |")


if __name__ == "__main__":
    main()
