"""Tests of sitemap_spider/engine.py: wake_engine against a real Scrapy engine.

wake_engine reaches into Scrapy's private ``engine._slot.nextcall.schedule`` and, by design,
does nothing when it is not there. A Scrapy upgrade that renames it would not break a crawl,
only slow it down (news from outside the process waits for the engine's 5 s heartbeat), so
this test is what notices.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.site_server import HTML, SiteServer, html_page
from tests.site_spec import Route

PROJECT_ROOT = Path(__file__).resolve().parent.parent

# Scrapy's engine looks at an idle spider again every 5 s (ExecutionEngine._SLOT_HEARTBEAT_INTERVAL);
# a request woken into the engine is fetched in milliseconds. The request is put in about 0.3 s
# after the engine went idle, so without the wake it would wait some 4.5 s for the heartbeat.
WOKEN_WITHIN_SECONDS = 2.0

# A spider that fetches one page, is kept open while idle, and then, as work that arrives
# from outside the process would (a shared queue, the other process's links), has a request
# put straight into the scheduler, which the engine is not told of, and wakes the engine.
# It prints what it saw as JSON. A script in its own process: Twisted's reactor cannot be
# restarted inside the test process.
_SCRIPT = textwrap.dedent(
    """
    import json
    import sys
    import time

    import scrapy
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess
    from scrapy.exceptions import DontCloseSpider

    from sitemap_spider.modes.engine import wake_engine

    ORIGIN = sys.argv[1]
    seen = {}


    class Waker(scrapy.Spider):
        name = "waker"

        @classmethod
        def from_crawler(cls, crawler, *args, **kwargs):
            spider = super().from_crawler(crawler, *args, **kwargs)
            crawler.signals.connect(spider.idle, signal=signals.spider_idle)
            return spider

        async def start(self):
            yield scrapy.Request(ORIGIN + "/first")

        def parse(self, response):
            if response.url.endswith("/from-outside"):
                seen["fetched_after"] = time.monotonic() - seen["put_in_at"]

        def idle(self):
            if "idle_at" not in seen:
                seen["idle_at"] = time.monotonic()
                from twisted.internet import reactor

                reactor.callLater(0.3, self.put_in)
            # Kept open until the request put in is fetched, or for 15 s at the most.
            if "fetched_after" not in seen and time.monotonic() - seen["idle_at"] < 15:
                raise DontCloseSpider

        def put_in(self):
            engine = self.crawler.engine
            seen["engine_open"] = engine.running and engine.spider is not None
            try:
                schedule = engine._slot.nextcall.schedule
            except AttributeError as exc:
                seen["missing"] = repr(exc)
            else:
                seen["schedule_callable"] = callable(schedule)
            engine.scheduler.enqueue_request(scrapy.Request(ORIGIN + "/from-outside"))
            seen["put_in_at"] = time.monotonic()
            wake_engine(engine)


    process = CrawlerProcess(settings={
        "LOG_LEVEL": "WARNING",
        "REMOTE_CONTROL_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
    })
    process.crawl(Waker)
    process.start()
    print(json.dumps(seen))
    """
)


def test_wake_engine_has_the_engine_fetch_a_request_put_in_from_outside_at_once(tmp_path: Path) -> None:
    page = Route(headers=(("Content-Type", HTML),), body=html_page("A page"))
    with SiteServer({"/first": page, "/from-outside": page}) as server:
        done = subprocess.run(
            [sys.executable, "-c", _SCRIPT, server.origin],
            check=False,  # the return code is asserted below, with stderr in the message
            cwd=tmp_path,  # no scrapy.cfg: Scrapy's defaults, not the project's settings
            env={"PYTHONPATH": str(PROJECT_ROOT), "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        fetched = server.targets("GET")
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["engine_open"], seen
    assert "missing" not in seen, f"Scrapy's engine no longer has _slot.nextcall.schedule: {seen['missing']}"
    assert seen["schedule_callable"], seen
    assert fetched == ["/first", "/from-outside"]
    assert seen["fetched_after"] < WOKEN_WITHIN_SECONDS, (
        f"the request put in was fetched {seen['fetched_after']:.2f} s later: wake_engine did not wake "
        "the engine, which found it at its heartbeat"
    )
