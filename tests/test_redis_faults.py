"""A shared crawl whose Redis restarts or goes away: it survives, or stops and publishes nothing.

A real redis-server is really stopped and started again on the same port mid-crawl:
- with ``appendonly yes`` the crawl survives the restart and publishes the whole set;
- without persistence Redis comes back empty: the workers stop with a clear error and
  the set published before stays byte for byte;
- gone for longer than SITEMAP_REDIS_WAIT_SECONDS: the same, also for a worker whose page in
  flight comes in after Redis is gone, its links to be scheduled.
"""

from __future__ import annotations

import re
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
import redis

from sitemap_spider.config import ConfigError, SharedConfig
from sitemap_spider.modes.shared.connection import PatientRedis, RedisLost
from sitemap_spider.modes.shared.crawl import SharedCrawl
from tests.crawl_fixtures import RunningSite, crawl_command, serve_site
from tests.generated_site import build_generated_site
from tests.redis_fixtures import RedisServer
from tests.site_server import HTML, SiteServer, html_page, links
from tests.site_spec import Route, SiteRequest, SiteSpec
from tests.test_config import config
from tests.test_resumable import publish_earlier_set, wait_for_fetches
from tests.test_shared import SHARED, Worker, run_workers
from tests.test_sigterm import output_listing

pytestmark = pytest.mark.slow

PAGES = 1500


@pytest.fixture
def site() -> Iterator[RunningSite]:
    with serve_site(lambda origin, _other: build_generated_site(origin, PAGES)) as running:
        yield running


def start(site: RunningSite, directory: Path, server: RedisServer, wait: float = 30.0, **more: str) -> list[Worker]:
    """Two workers of one shared crawl; they wait ``wait`` s for an unreachable Redis."""
    settings = {"SITEMAP_REDIS_URL": server.url, "SITEMAP_REDIS_WAIT_SECONDS": str(wait), **SHARED, **more}
    return run_workers(crawl_command(site.start_url, directory, settings=settings), directory, 2)


def peak_mb(logs: list[str]) -> list[int]:
    """Each worker's peak memory, from Scrapy's memusage/max stat in its log."""
    return [int(found[-1]) // 2**20 for log in logs if (found := re.findall(r"'memusage/max': (\d+)", log))]


def finish(workers: list[Worker], timeout: float = 240) -> tuple[list[int | None], list[str]]:
    """Each worker's exit code (None: still running after ``timeout`` s, then killed) and log."""
    results: list[tuple[int | None, str]] = []
    try:
        for worker in workers:
            try:
                results.append(worker.finish(timeout=timeout))
            except subprocess.TimeoutExpired:
                results.append((None, worker.log.read_text(encoding="utf-8")))
    finally:
        for worker in workers:
            if worker.process.poll() is None:
                worker.process.kill()
    return [code for code, _ in results], [log for _, log in results]


def wait_until(ready: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


# Redis restarted with its appendonly file is tested between separate hosts in tests/test_hosts.py.
@pytest.mark.parametrize("restarted", [True, False], ids=["restarted-empty", "gone"])
def test_a_lost_redis_publishes_nothing(site: RunningSite, tmp_path: Path, restarted: bool) -> None:
    server = RedisServer(tmp_path, appendonly=False)
    server.start()
    output = tmp_path / "crawl" / "sitemaps"
    earlier = publish_earlier_set(site, output)
    try:
        workers = start(site, tmp_path / "crawl", server, wait=3.0)
        wait_for_fetches(site, PAGES // 3, workers[0].process)
        server.stop()
        stopped = time.monotonic()
        if restarted:
            time.sleep(1.0)
            server.start()  # empty: no persistence
        codes, logs = finish(workers)
        seconds = time.monotonic() - stopped
    finally:
        server.stop()
    assert codes == [1, 1], [log[-3000:] for log in logs]
    expected = "Redis lost the data of shared crawl" if restarted else "(SITEMAP_REDIS_WAIT_SECONDS)"
    assert all(expected in log for log in logs), [log[-3000:] for log in logs]
    assert all("Sitemap NOT published" in log for log in logs), [log[-3000:] for log in logs]
    assert output_listing(output) == earlier
    print(
        f"\nRedis {'restarted empty' if restarted else 'gone'}: both workers stopped {seconds:.1f} s later, "
        f"peak memory per worker {peak_mb(logs)} MB"
    )


def test_a_pipeline_waits_for_redis_and_gives_up_as_a_command_does(tmp_path: Path) -> None:
    """A batch of commands (the report's counts, the history's records) is no way around the wait:
    it waits out a restart, and Redis gone for longer stops the crawl as a command does."""
    server = RedisServer(tmp_path, appendonly=False)
    server.start()
    failures: list[str] = []
    client = PatientRedis.connect(server.url, 3.0, failures.append)
    restart = threading.Timer(1.0, server.start)
    try:
        client.ping()
        server.stop()
        restart.start()
        pipe = client.pipeline(transaction=False)
        pipe.hincrby("counts", "fetched", 2)
        assert pipe.execute() == [2] and client.hget("counts", "fetched") == b"2" and failures == []
        # The restart's own wait for a PONG may still be going (our client can get in first): killed
        # then, the restarted server read as one that "did not start", in the timer's thread.
        restart.join()
        server.kill()
        pipe.hincrby("counts", "fetched", 1)
        with pytest.raises(RedisLost):
            pipe.execute()
        assert len(failures) == 1 and "(SITEMAP_REDIS_WAIT_SECONDS)" in failures[0], failures
        with pytest.raises(RedisLost):  # at once, from now on
            client.ping()
    finally:
        restart.cancel()
        restart.join()
        client.close()
        server.kill()


class ReplyLosingProxy:
    """A TCP proxy to Redis on 127.0.0.1 that, once armed, lets a command matching ``marker``
    reach Redis and cuts the connection before its reply comes back: the client cannot know
    whether the command ran, and sends it again."""

    def __init__(self, upstream_port: int, marker: bytes) -> None:
        self.upstream_port = upstream_port
        self.marker = marker
        self.armed = False
        self.cut = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        with client, upstream:
            # Redis answers each command (or pipelined batch) before the client sends the next.
            while data := client.recv(1 << 16):
                upstream.sendall(data)
                reply = upstream.recv(1 << 16)
                if self.armed and self.marker in data:
                    self.armed = False
                    self.cut += 1
                    time.sleep(0.2)  # Redis has run it; the reply is lost with the connection
                    return
                client.sendall(reply)

    def close(self) -> None:
        self.listener.close()


def test_counts_and_exclusions_sent_again_after_a_lost_reply_are_counted_once(tmp_path: Path) -> None:
    """The report's counts and exclusions reach Redis once even when a write is sent again: the
    connection was cut after Redis had stored them, before its reply (they used to be added twice)."""
    server = RedisServer(tmp_path, appendonly=False)
    server.start()
    proxy = ReplyLosingProxy(server.port, b"counts")
    site = SimpleNamespace(crawl_origin="http://127.0.0.1:9")
    target = SimpleNamespace(site=site, start_urls=["http://127.0.0.1:9/"])
    shared_config = SharedConfig(f"redis://127.0.0.1:{proxy.port}/0", "counts-test", False, 2.0, 10.0, 5.0)
    try:
        workers = [SharedCrawl(None, shared_config, target) for _ in range(2)]  # type: ignore[arg-type]
        workers[0].add_counts({"listed": 3, "fetched": 5})
        workers[1].add_counts({"listed": 1})
        proxy.armed = True
        workers[0].add_counts({"listed": 2, "excluded/status": 1})
        assert proxy.cut == 1
        workers[1].add_counts({"listed": 4})
        assert workers[0].counts() == {"listed": 10, "fetched": 5, "excluded/status": 1}
        # An exclusion is stored and counted in one step: sent again, it is counted once.
        proxy.marker, proxy.armed = b"exclusions", True
        workers[0].add_exclusion("http://127.0.0.1:9/a", "status", "404")
        assert proxy.cut == 2
        workers[1].add_exclusion("http://127.0.0.1:9/a", "status", "404")  # the page fetched again elsewhere
        workers[1].add_exclusion("http://127.0.0.1:9/b", "noindex", None)
        assert workers[0].exclusion_counts() == {"noindex": 1, "status": 1}
        assert list(workers[1].exclusions()) == [
            ("http://127.0.0.1:9/a", "status", "404"), ("http://127.0.0.1:9/b", "noindex", None)
        ]
        assert workers[0].redis.failure is None
    finally:
        proxy.close()
        server.kill()


def test_a_redis_that_refuses_to_store_for_now_is_waited_for_and_an_error_gives_up_at_once(tmp_path: Path) -> None:
    """Out of memory (maxmemory with noeviction) is waited for as a restart is: Redis did not run
    the command, and takes it once it has room. Any other error reply gives up at once, rather
    than reach Scrapy's engine, where it could leave the worker open for ever."""
    server = RedisServer(tmp_path, appendonly=False)
    server.start()
    failures: list[str] = []
    client = PatientRedis.connect(server.url, 3.0, failures.append)
    admin = redis.Redis.from_url(server.url)
    room_again = threading.Timer(1.0, lambda: admin.config_set("maxmemory", "0"))
    try:
        client.set("before", b"x")
        admin.config_set("maxmemory-policy", "noeviction")
        admin.config_set("maxmemory", "1")
        assert client.get("before") == b"x"  # reads go on
        room_again.start()
        pipe = client.pipeline(transaction=False)
        pipe.hset("entries", "https://example.com/", b"{}")
        assert pipe.execute() == [1] and failures == []
        admin.config_set("maxmemory", "1")
        started = time.monotonic()
        with pytest.raises(RedisLost):
            client.hset("entries", "https://example.com/b", b"{}")
        assert 2.5 < time.monotonic() - started < 6, "not the 3 s wait"
        assert len(failures) == 1 and "(SITEMAP_REDIS_WAIT_SECONDS)" in failures[0] and "maxmemory" in failures[0], failures

        admin.config_set("maxmemory", "0")
        failures.clear()
        other = PatientRedis.connect(server.url, 30.0, failures.append)
        started = time.monotonic()
        with pytest.raises(RedisLost):
            other.hset("before", "field", b"1")  # WRONGTYPE: "before" is a string
        assert time.monotonic() - started < 2 and len(failures) == 1 and "WRONGTYPE" in failures[0], failures
        with pytest.raises(RedisLost):  # every command, from now on
            other.get("before")
        other.close()
    finally:
        room_again.cancel()
        client.close()
        admin.close()
        server.kill()


LINKS = 200


def test_a_worker_whose_redis_is_lost_while_it_schedules_a_page_s_links_stops(tmp_path: Path) -> None:
    """The page a worker is fetching when Redis is lost for good comes in after, its links to be
    scheduled. The scheduler's error used to escape into Scrapy's engine, which then waited for that
    page for ever: the worker said it stopped, and never exited."""
    release = threading.Event()

    def home(_request: SiteRequest) -> Route:
        release.wait(timeout=60)  # held until Redis is gone
        body = html_page("Home", links(*(f"/p/{n}" for n in range(LINKS))))
        return Route(headers=(("Content-Type", HTML),), body=body)

    server = RedisServer(tmp_path, appendonly=False)
    server.start()
    with SiteServer(dynamic=[(re.compile("/"), home)]) as site_server:
        site = RunningSite(spec=SiteSpec(origin=site_server.origin), server=site_server, decoy=site_server)
        output = tmp_path / "crawl" / "sitemaps"
        earlier = publish_earlier_set(site, output)
        try:
            # No history: the spider's own lookups would meet the lost Redis before the scheduler does.
            workers = start(site, tmp_path / "crawl", server, wait=3.0, SITEMAP_HISTORY="off")

            def logs_say(text: str) -> bool:
                return all(text in worker.log.read_text(encoding="utf-8") for worker in workers)

            wait_until(lambda: "/" in site_server.targets("GET") and logs_say(" as worker "), "the crawl did not start")
            server.kill()  # lost for good
            wait_until(lambda: logs_say("stops: Redis did not answer"), "the workers did not give up on Redis")
            release.set()
            released = time.monotonic()
            codes, logs = finish(workers, timeout=60)
            seconds = time.monotonic() - released
        finally:
            release.set()
            server.kill()
    assert codes == [1, 1], [log[-3000:] for log in logs]
    assert all("(SITEMAP_REDIS_WAIT_SECONDS)" in log and "Sitemap NOT published" in log for log in logs), [
        log[-3000:] for log in logs
    ]
    assert output_listing(output) == earlier
    print(f"\nRedis lost with a page in flight: both workers exited {seconds:.1f} s after it came in")


@pytest.mark.parametrize("value", ["-1", "soon", "7200"])
def test_a_bad_wait_setting_names_it(value: str) -> None:
    with pytest.raises(ConfigError) as error:
        config(SITEMAP_REDIS_URL="redis://127.0.0.1:1/0", SITEMAP_REDIS_WAIT_SECONDS=value)
    assert str(error.value).startswith("SITEMAP_REDIS_WAIT_SECONDS")
