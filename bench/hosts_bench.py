"""Several hosts against one process (#29): a shared crawl by workers in network namespaces.

    .venv/bin/python bench/hosts_bench.py --pages 20000           # as root, with iproute2 and nginx
    .venv/bin/python bench/hosts_bench.py --site <kept dir>/site --workers 3

Generates a static site (bench/sitegen.py, or takes a kept one) and serves it with nginx on an
address of a private bridge (tests/hosts.py). Then, in one run: the site crawled by one process
(``SITEMAP_WORKERS=1``, this namespace), then by ``--workers`` workers, each a host of its own
(a network namespace, a private ``/tmp`` and folder) sharing the crawl through a redis-server on
another address of the bridge. Each crawl keeps every default but the history (off: a first
crawl) and rendering (never: the site has no scripts). Prints JSON: wall time, pages fetched
(Scrapy's ``downloader/response_count``), CPU and peak memory of each process (``wait4``), and
whether both published the same files. The workers share the machine's 2 cores with nginx and
Redis: a figure of fetches and memory, not of what more machines would gain.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "bench"))

from bytecode import compile_project  # noqa: E402
from server import nginx  # noqa: E402
from sitegen import GeneratedSite, generate  # noqa: E402

from tests.crawl_fixtures import folder_files  # noqa: E402
from tests.hosts import HostNetwork, namespaces_work  # noqa: E402

SETTINGS = {"SITEMAP_HISTORY": "off", "LOG_LEVEL": "INFO"}


def _wait(process: subprocess.Popen[str]) -> dict[str, float]:
    """Wait for ``process``; its exit code, CPU seconds and peak RSS (MB) from wait4."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return {"exit": process.returncode, "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
            "peak_mb": round(usage.ru_maxrss / 1024)}  # fmt: skip


def _fetched(log: str) -> int:
    found = re.search(r"'downloader/response_count': (\d+)", log)
    return int(found.group(1)) if found else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=20000)
    parser.add_argument("--site", type=Path, help="a site directory kept by bench/run.py --keep")
    parser.add_argument("--workers", type=int, default=3)
    options = parser.parse_args()
    why_not = namespaces_work()
    if why_not:
        sys.exit(f"cannot build hosts here: {why_not}")
    compile_project()
    work = Path(tempfile.mkdtemp(prefix="sitemap-hosts-"))
    site = GeneratedSite.load(options.site.resolve() / "www") if options.site else generate(work / "site", options.pages)
    # Files of one age, well before either crawl: a Last-Modified within seconds of a crawl is
    # not believed (crawl/dates.py), and the two crawls run at different times.
    for path in site.root.rglob("*"):
        os.utime(path, (1_767_225_600, 1_767_225_600))  # 2026-01-01
    result: dict[str, object] = {"pages": len(site.expected), "workers": options.workers}
    with HostNetwork(work / "hosts") as net, nginx(site.root, site.redirects, work / "nginx", host=net.site_address) as base:
        # One process, in this namespace.
        single_dir = work / "single"
        single_dir.mkdir()
        args = [sys.executable, "-m", "scrapy", "crawl", "sitemap", "-a", f"url={base}/", "-a", "render=never",
                "-s", f"SITEMAP_OUTPUT_DIR={single_dir / 'sitemaps'}", "-s", "SITEMAP_WORKERS=1",
                "-s", "REMOTE_CONTROL_ENABLED=False", "-s", "TELNETCONSOLE_ENABLED=False"]  # fmt: skip
        for name, value in SETTINGS.items():
            args += ["-s", f"{name}={value}"]
        log = single_dir / "crawl.log"
        started = time.monotonic()
        with log.open("w") as out:
            process = subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=out, text=True)
        single = _wait(process)
        single.update(wall_s=round(time.monotonic() - started, 1), fetched=_fetched(log.read_text()))
        result["one_process"] = single
        # The same site by workers on hosts of their own.
        redis_url = net.start_redis()
        hosts = [net.host() for _ in range(options.workers)]
        settings = {**SETTINGS, "SITEMAP_REDIS_URL": redis_url}
        started = time.monotonic()
        running = [(host, host.crawl(f"{base}/", settings, work / f"{host.name}.log", quick=False)) for host in hosts]
        workers = []
        for host, process in running:
            figures = _wait(process)
            figures["fetched"] = _fetched((work / f"{host.name}.log").read_text())
            workers.append(figures)
        wall = round(time.monotonic() - started, 1)
        fetched = sum(int(w["fetched"]) for w in workers)
        published = [folder_files(host.folder / "sitemaps") for host in hosts if (host.folder / "sitemaps").is_dir()]
        result["hosts"] = {"wall_s": wall, "fetched": fetched, "per_worker": workers,
                           "fetched_vs_one_process": round(fetched / max(1, int(single["fetched"])), 3)}  # fmt: skip
        result["same_files"] = len(published) == 1 and published[0] == folder_files(single_dir / "sitemaps")
    result["work"] = str(work)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
