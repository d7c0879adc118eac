"""Transient faults on the site cost nothing: the same sitemap set, byte for byte, as without them.

The site is tests/generated_site.py's, served by tests/fault_server.py's FaultServer (a real
HTTP server on 127.0.0.1), crawled by the real ``scrapy crawl sitemap`` with its defaults:
once as it is, once with a share of its URLs failing for a while (503 with Retry-After, 502,
504, 429, reset and dropped connections, truncated bodies, slow answers, a page down for five
requests), a 15-second spell of 503 on the whole site and a spell of refused connections.
"""

from __future__ import annotations

import resource
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitemap_spider import default_settings as defaults
from tests.crawl_fixtures import run_crawl
from tests.fault_server import KINDS, FaultPlan, FaultServer, is_faulty
from tests.generated_site import build_generated_site
from tests.site_spec import SiteSpec
from tests.sitemap_check import read_sitemap_set

#: Pages of the generated site: a few hundred, so that the test stays well under two minutes.
PAGES = 300
#: The defaults (crawl_fixtures.QUICK_RETRIES set back to them), but for one pause: the first
#: back-off (SITEMAP_RETRY_DELAY, 0.5 s by default, doubled at each retry) is a quarter of a
#: second, which halves what a page down for four requests, found late in the crawl, adds to the
#: test's length (3.75 s instead of 7.5), and the site's pauses after the 15-second outage.
SETTINGS = {
    "SITEMAP_RETRY_TIMES": str(defaults.SITEMAP_RETRY_TIMES),
    "SITEMAP_RETRY_LAST_PASS_DELAY": str(defaults.SITEMAP_RETRY_LAST_PASS_DELAY),
    "SITEMAP_RETRY_DELAY": "0.25",
}


@pytest.fixture
def fault_site() -> Iterator[tuple[FaultServer, SiteSpec]]:
    with FaultServer() as server:
        spec = build_generated_site(server.origin, PAGES)
        server.serve(spec)
        yield server, spec


def _count(stats: dict[str, object], key: str) -> int:
    value = stats.get(key, 0)
    assert isinstance(value, int), (key, value)
    return value


def _peak_rss_mib() -> float:
    # The largest resident set of any crawl this test process has run and waited for.
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def test_the_share_of_faulty_urls_is_fixed() -> None:
    site = build_generated_site("http://127.0.0.1:1", PAGES)
    faulty = [target for target in site.routes if is_faulty(target, FaultPlan.share)]
    assert 2 * len(KINDS) <= len(faulty) <= len(site.routes) * 1.5 * FaultPlan.share / 100


@pytest.mark.slow
@pytest.mark.parametrize("share", [20])
def test_transient_faults_cost_nothing(share: int, fault_site: tuple[FaultServer, SiteSpec], tmp_path: Path) -> None:
    server, spec = fault_site
    clean = run_crawl(spec.start_url, tmp_path / "clean", settings=SETTINGS)
    assert clean.returncode == 0, clean.describe()
    clean_rss = _peak_rss_mib()

    # The infinite URL spaces are chains of a hundred pages, each found on the one before: a
    # fault on every fifth would add its back-off a hundred times over to the crawl's length.
    plan = FaultPlan(share=share, spared=tuple(spec.traps))
    server.inject(plan)
    faulty = run_crawl(spec.start_url, tmp_path / "faulty", settings=SETTINGS, timeout=240)
    assert faulty.returncode == 0, faulty.describe()

    # Every kind of fault was injected, the outage and the refusals included.
    assert set(server.injected) == {*KINDS, "outage"}, server.injected
    assert server.injected["outage"] >= 3, server.injected
    assert len(server.refusals) == 1 and server.refusals[0][1] - server.refusals[0][0] >= plan.refuse_seconds

    # Byte for byte the same set, every file valid (XSDs, Scrapy's reader), exact lastmod.
    assert faulty.files() == clean.files()
    entries = read_sitemap_set(faulty.output_dir, spec.origin + "/")
    assert entries == read_sitemap_set(clean.output_dir, spec.origin + "/")
    expected = [e for e in spec.expected_listed() if not spec.is_trap(e["loc"])]
    assert [e for e in entries if not spec.is_trap(e["loc"])] == expected

    stats = faulty.stats
    assert "sitemap/not_fetched" not in stats, stats
    assert clean.stats.get("sitemap/retry/held") is None
    # Every faulty answer to a page was retried after a back-off (Twisted itself retries a GET
    # once on a kept-alive connection that closes before answering: resets and drops may not be):
    # as one of its page's tries, as a try again without using one (the site was in trouble), or in
    # the last pass.
    waited = ("sitemap/retry/held", "sitemap/retry/site_trouble", "sitemap/retry/last_pass")
    held = sum(_count(stats, key) for key in waited)
    answers = sum(n for kind, n in server.injected.items() if kind not in ("slow", "reset", "drop"))
    assert held >= answers, ({key: stats.get(key) for key in waited}, server.injected)
    assert "could not be fetched" not in faulty.stderr
    assert "Traceback" not in faulty.stderr, faulty.describe()
    print(
        f"\nfaults injected: {dict(server.injected)}; pages listed {len(entries)}, lost 0\n"
        f"crawl time: {clean.seconds:.1f} s without faults, {faulty.seconds:.1f} s with them; "
        f"retries held {held}, recovered pages {stats.get('sitemap/retry/recovered')}, "
        f"last pass {stats.get('sitemap/retry/last_pass', 0)}; back-offs "
        f"{ {k: v for k, v in stats.items() if k.startswith('sitemap/backoff/')} }\n"
        f"peak RSS of the crawl processes: {clean_rss:.0f} MiB (clean), {_peak_rss_mib():.0f} MiB (both)"
    )
