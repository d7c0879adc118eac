"""Fault-weather benchmark (issue #24): a crawl through a site that faults a share of its URLs, against the same crawl without faults.

    .venv/bin/python bench/faults_bench.py --pages 5000 --share 20

The generated site of the tests (tests/generated_site.py) is served by the tests' fault server
(tests/fault_server.py, a real HTTP server on 127.0.0.1), and crawled twice in one run by the
real ``scrapy crawl sitemap`` with its defaults (history off, so that both crawls fetch
everything): once as it is, then with ``--share`` percent of its URLs faulting for their first
few requests (503 with Retry-After, 502, 504, 429, reset and dropped connections, truncated
bodies, 3-second answers, pages down for four requests), a 15-second outage of the whole site
a third of the way in and 3 seconds of refused connections at two thirds. Prints both wall
times, the ratio, whether the two published sets are byte for byte the same (recall 1.0 and
the same lastmods), the faults injected and the crawl's retry and back-off counts.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
from sitemap_spider import default_settings  # noqa: E402
from tests.crawl_fixtures import QUICK_RETRIES, run_crawl  # noqa: E402
from tests.fault_server import FaultPlan, FaultServer  # noqa: E402
from tests.generated_site import build_generated_site  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--share", type=int, default=20, help="percent of URLs with faults of their own")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--setting", action="append", default=[], metavar="NAME=VALUE",
                        help="an extra -s for both crawls (repeatable), e.g. SITEMAP_WORKERS=1")
    args = parser.parse_args()
    # The product's defaults for the retries, which run_crawl otherwise replaces with the tests'
    # quick ones (it pinned SITEMAP_RETRY_DELAY=1 here after the default became 0.5 s, 872e2c3).
    settings = {
        **{name: str(getattr(default_settings, name)) for name in QUICK_RETRIES},
        "SITEMAP_HISTORY": "off",
        **dict(setting.split("=", 1) for setting in args.setting),
    }
    with tempfile.TemporaryDirectory() as scratch, FaultServer() as server:
        out = Path(scratch)
        spec = build_generated_site(server.origin, args.pages)
        server.serve(spec)
        clean = run_crawl(spec.start_url, out / "clean", settings=settings, timeout=args.timeout)
        plan = FaultPlan(
            share=args.share,
            spared=tuple(spec.traps),
            outage_after=args.pages // 3,
            refuse_after=args.pages * 2 // 3,
        )
        server.inject(plan)
        faulty = run_crawl(spec.start_url, out / "faulty", settings=settings, timeout=args.timeout)
        stats = faulty.report["stats"] if faulty.report else {}
        result = {
            "pages": args.pages,
            "share": args.share,
            "settings": args.setting,
            "clean_seconds": round(clean.seconds, 1),
            "faulty_seconds": round(faulty.seconds, 1),
            "ratio": round(faulty.seconds / clean.seconds, 2),
            "target_seconds": round(5 * clean.seconds + plan.outage_seconds, 1),
            "exit_codes": [clean.returncode, faulty.returncode],
            "same_files": bool(clean.files()) and clean.files() == faulty.files(),
            "injected": dict(server.injected),
            "crawl": {k: v for k, v in stats.items() if k.startswith(("sitemap/retry", "sitemap/backoff", "sitemap/not_fetched"))},
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
