"""The crawl history of a shared crawl lives in Redis (#29): a worker on any host reads the same one.

The workers here run each in a directory of its own, with a history file of its own, as on
separate hosts: before, a worker read only its own file, so a crawl started where the last
set was not published sent no conditional request at all.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
import redis

from sitemap_spider.history.record import PageRecord
from sitemap_spider.history.store import HistoryStore
from sitemap_spider.modes.shared.crawl import CrawlKeys
from sitemap_spider.modes.shared.history import SharedHistory
from tests.crawl_fixtures import REPO_ROOT, crawl_command, log_count
from tests.dynamic_site import DynamicSite
from tests.site_server import SiteServer
from tests.sitemap_check import read_sitemap_set

pytestmark = pytest.mark.slow

PAGES = 120
SHARED = {"SITEMAP_REDIS_IDLE_SECONDS": "0.5", "SITEMAP_REDIS_LEASE_SECONDS": "2", "SITEMAP_MAX_BACKOFF": "0"}


def _record(url: str, etag: str) -> PageRecord:
    return PageRecord(url=url, loc=url, fingerprint=None, last_modified=None, etag=etag, first_seen=1.0,
                      changed_at=None, lastmod=None, status=200, last_ok=2.0, outlinks=b"\x01\x02")  # fmt: skip


def _workers(origin: str, dirs: list[Path], redis_url: str) -> list[tuple[int, str, Path]]:
    """One crawl by ``len(dirs)`` workers, each in its own directory (history, output, report)."""
    running = []
    for n, home in enumerate(dirs):
        home.mkdir(parents=True, exist_ok=True)
        args = crawl_command(origin + "/", home, "-a", "render=never",
                             settings={"SITEMAP_REDIS_URL": redis_url, **SHARED})  # fmt: skip
        log = home / f"worker-{n}.log"
        with log.open("w", encoding="utf-8") as out:
            running.append((subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=out), log, home))
    return [(process.wait(timeout=300), log.read_text(encoding="utf-8"), home) for process, log, home in running]


def _published(results: list[tuple[int, str, Path]]) -> Path:
    assert [code for code, _, _ in results] == [0] * len(results), [log[-3000:] for _, log, _ in results]
    homes = [home for _, log, home in results if "Sitemap published:" in log]
    assert len(homes) == 1, [log[-2000:] for _, log, _ in results]
    return homes[0]


def test_a_shared_recrawl_started_on_other_hosts_gets_its_304s(tmp_path: Path, redis_url: str) -> None:
    site = DynamicSite(PAGES)
    client = redis.Redis.from_url(redis_url)
    with SiteServer() as server:
        site.serve(server)
        keys = CrawlKeys(server.origin)
        first = _workers(server.origin, [tmp_path / "a1", tmp_path / "b1"], redis_url)
        home = _published(first)
        listed = {e["loc"]: e.get("lastmod") for e in read_sitemap_set(home / "sitemaps", server.origin + "/")}
        in_file = list(HistoryStore(home / "history.sqlite").records(server.origin))
        assert len(in_file) >= len(listed) > 0
        # The publisher's records are Redis's too, and kept after the crawl's other keys are gone.
        assert client.hlen(keys.past) == len(in_file)
        size = sum(int(client.memory_usage(key) or 0) for key in (keys.past, keys.past_meta))
        print(f"\nRedis history: {len(in_file)} records, {size} bytes, {size / len(in_file):.0f} bytes a page")

        # The second crawl runs on two "hosts" with no history file at all: all it knows is Redis's.
        site.statuses.clear()
        second = _workers(server.origin, [tmp_path / "a2", tmp_path / "b2"], redis_url)
        home2 = _published(second)
    relisted = {e["loc"]: e.get("lastmod") for e in read_sitemap_set(home2 / "sitemaps", server.origin + "/")}
    assert relisted == listed
    # Nothing changed on the site: the pages with an ETag answered 304, to both workers.
    not_modified = site.statuses["etag 304"]
    assert not_modified >= 0.9 * sum(n for status, n in site.statuses.items() if status.startswith("etag ")), site.statuses
    # Each worker that fetched pages judged them against Redis's records. (Only one page in six
    # has an ETag: a worker that took 26 pages once got none of them, so its own 304s are no proof.)
    for _, log, _ in second:
        if log_count(log, "scheduler/dequeued/redis") > 10:
            known = log_count(log, "sitemap/history/not_modified") + log_count(log, "sitemap/history/unchanged")
            assert known > 0, log[-3000:]
    assert sum(log_count(log, "downloader/response_status_count/304") for _, log, _ in second) == not_modified


def test_the_newest_history_is_the_one_shared(tmp_path: Path, redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    keys = CrawlKeys("https://site.test")
    origin = "https://site.test"
    older, newer = HistoryStore(tmp_path / "older.sqlite"), HistoryStore(tmp_path / "newer.sqlite")
    older.commit([_record(origin + "/a", '"old"')], origin, lambda: "h")
    time.sleep(0.01)
    newer.commit([_record(origin + "/a", '"new"'), _record(origin + "/b", '"b"')], origin, lambda: "hi")
    empty = SharedHistory(tmp_path / "none.sqlite", client, keys, origin)
    assert empty.load() == 0 and not client.exists(keys.past_meta)  # no file: Redis is left alone
    first = SharedHistory(tmp_path / "older.sqlite", client, keys, origin)
    assert first.load() == 1
    assert (first.get(origin + "/a") or _record("", "")).etag == '"old"' and first.extension_kinds(origin, "x") == "h"
    # A worker whose file is newer (a one-process crawl ran since) shares its records instead ...
    second = SharedHistory(tmp_path / "newer.sqlite", client, keys, origin)
    assert second.load() == 2
    assert (first.get(origin + "/a") or _record("", "")).etag == '"new"' and len(first) == 2
    assert first.extension_kinds(origin, "x") == "hi"
    # ... and one whose file is older leaves the newer ones.
    assert SharedHistory(tmp_path / "older.sqlite", client, keys, origin).load() == 0
    assert len(first) == 2
    # The publisher's commit goes to its file and to Redis, whole: a page not listed is gone from both.
    written = first.commit([_record(origin + "/c", '"c"')], origin, lambda: "v")
    assert written == 1 and len(first) == 1 and first.get(origin + "/a") is None
    assert [r.url for r in HistoryStore(tmp_path / "older.sqlite").records(origin)] == [origin + "/c"]
    assert first.extension_kinds(origin, "x") == "v"
    assert [key.decode() for key in client.keys(keys.past + ":new:*")] == []  # no staging key left
    # An empty commit empties the shared history too.
    assert first.commit([], origin, lambda: "h") == 0 and len(first) == 0
    for store in (older, newer, empty, first, second):
        store.close()


def test_workers_started_together_share_the_newest_file_whichever_swaps_last(tmp_path: Path, redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    origin = "https://site.test"
    keys = CrawlKeys(origin)
    files = {}
    for name, etag in (("older", '"old"'), ("newer", '"new"')):
        store = HistoryStore(tmp_path / f"{name}.sqlite")
        store.commit([_record(origin + "/a", etag)], origin, lambda: "h")
        store.close()
        files[name] = SharedHistory(tmp_path / f"{name}.sqlite", client, keys, origin)
        time.sleep(0.01)
    # Both read "Redis has none" before either swaps; the newer one swaps first.
    staged = {name: history._stage(HistoryStore.records(history, origin)) for name, history in files.items()}
    published = {name: HistoryStore.published_at(history, origin) or 0.0 for name, history in files.items()}
    assert files["newer"]._swap(*staged["newer"], "h", published["newer"], only_if_newer=True)
    assert not files["older"]._swap(*staged["older"], "h", published["older"], only_if_newer=True)
    assert (files["older"].get(origin + "/a") or _record("", "")).etag == '"new"'
    assert [key.decode() for key in client.keys(keys.past + ":new:*")] == []
    # A crawl under way, or stopped to be resumed, reads what it read: no worker loads then.
    client.hset(keys.meta, "status", "running")
    assert files["newer"].crawl_running()


def test_a_commit_redis_cannot_take_is_reported_and_leaves_the_history_as_it_was(tmp_path: Path, redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    origin = "https://site.test"
    history = SharedHistory(tmp_path / "h.sqlite", client, CrawlKeys(origin), origin)
    history.commit([_record(origin + "/a", '"a"')], origin, lambda: "h")
    client.shutdown(nosave=True)  # Redis gone before the publisher commits
    with pytest.raises(OSError, match="Redis"):  # crawl_end.py reports it as history_not_updated
        history.commit([_record(origin + "/b", '"b"')], origin, lambda: "h")
    # The records go to Redis as the file's transaction reads them: its failure rolls the file back.
    assert [r.url for r in HistoryStore(tmp_path / "h.sqlite").records(origin)] == [origin + "/a"]
