"""Publishing to object storage (SITEMAP_OUTPUT_URI, sitemaps/shards/bucket.py) against a real
S3-compatible server: moto's standalone server, on 127.0.0.1, started by a fixture.

``scrapy publish`` and a crawl publish into a bucket; every object is read back, validated against
the XSDs and read with Scrapy's reader (``read_sitemap_set`` on a download of the bucket). A second
publish from a fresh working copy compares with the set the bucket serves; a failure in mid-upload
(a proxy in front of the server refusing one file) leaves the bucket's old index in place.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from botocore.session import get_session  # type: ignore[import-untyped]
from moto.server import ThreadedMotoServer

from sitemap_spider.sitemaps.names import LLMS_TXT_NAME
from tests.crawl_fixtures import REPO_ROOT, RunningSite, crawl_command, run_crawl, serve_site
from tests.generated_site import build_generated_site
from tests.site_server import closed_port
from tests.sitemap_check import read_sitemap_set
from tests.test_crawl import assert_same_entries, without_traps

BASE = "https://www.example.com/"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION_NAME": "us-east-1"}


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    port = closed_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


def client(endpoint: str) -> Any:
    return get_session().create_client(
        "s3", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id="testing", aws_secret_access_key="testing",
    )  # fmt: skip


@pytest.fixture
def bucket(moto_url: str, request: pytest.FixtureRequest) -> str:
    name = "sitemaps-" + request.node.name.lower().replace("_", "-")[:40].strip("-")
    client(moto_url).create_bucket(Bucket=name)
    return str(name)


def publish(tmp_path: Path, work: str, pages: dict[str, str | None], *settings: str) -> subprocess.CompletedProcess[str]:
    source = tmp_path / "entries.jl"
    with source.open("w", encoding="utf-8") as out:
        for path, lastmod in pages.items():
            out.write(json.dumps({"loc": BASE + path, "lastmod": lastmod}) + "\n")
    args = [sys.executable, "-m", "scrapy", "publish", str(source), "-s", f"SITEMAP_OUTPUT_DIR={tmp_path / work}"]
    args += ["-s", f"SITEMAP_BASE_URL={BASE}"]
    for name, value in CREDENTIALS.items():
        args += ["-s", f"{name}={value}"]
    for setting in settings:
        args += ["-s", setting]
    return subprocess.run(args, check=False, cwd=REPO_ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=300)


def download(endpoint: str, bucket: str, prefix: str, into: Path) -> dict[str, dict[str, Any]]:
    """Every object under ``prefix``, written into ``into``; name -> its head (ContentType, ...)."""
    s3 = client(endpoint)
    into.mkdir(parents=True, exist_ok=True)
    heads = {}
    for item in s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", []):
        name = item["Key"][len(prefix) :]
        answer = s3.get_object(Bucket=bucket, Key=item["Key"])
        (into / name).write_bytes(answer["Body"].read())
        heads[name] = {"ContentType": answer["ContentType"], "ContentEncoding": answer.get("ContentEncoding")}
    return heads


def pages(count: int, lastmod: str = "2026-05-01") -> dict[str, str | None]:
    return {f"p/{i:04d}.html": lastmod for i in range(count)}


def test_publish_then_republish_from_another_machine(tmp_path: Path, moto_url: str, bucket: str) -> None:
    uri = f"SITEMAP_OUTPUT_URI=s3://{bucket}/site/"
    endpoint = f"AWS_ENDPOINT_URL={moto_url}"
    first = publish(tmp_path, "work-a", pages(25), uri, endpoint, "SITEMAP_MAX_URLS=10")
    assert first.returncode == 0, first.stderr[-3000:]
    heads = download(moto_url, bucket, "site/", tmp_path / "bucket-1")
    assert sorted(heads) == ["sitemap-00001.xml", "sitemap-00002.xml", "sitemap-00003.xml", "sitemap_index.xml"]
    assert {head["ContentType"] for head in heads.values()} == {"application/xml; charset=utf-8"}
    assert len(read_sitemap_set(tmp_path / "bucket-1", BASE)) == 25

    # Another working copy (another machine, or a wiped disk): the previous set is the bucket's.
    after = pages(18)
    after["p/0003.html"] = "2026-06-01"
    after["new.html"] = None
    second = publish(tmp_path, "work-b", after, uri, endpoint, "SITEMAP_MAX_URLS=10", "SITEMAP_MAX_SHRINK=0")
    assert second.returncode == 0, second.stderr[-3000:]
    assert "Changed since the previous set: 1 added, 1 changed, 7 removed" in second.stdout, second.stdout
    heads = download(moto_url, bucket, "site/", tmp_path / "bucket-2")
    # The third file of the first set is gone, after the new index.
    assert sorted(heads) == ["sitemap-00001.xml", "sitemap-00002.xml", "sitemap_index.xml"]
    got = read_sitemap_set(tmp_path / "bucket-2", BASE)
    assert [entry["loc"] for entry in got] == sorted(BASE + path for path in after)
    # The working copy is the published set too.
    assert (tmp_path / "work-b" / "sitemap_index.xml").read_bytes() == (tmp_path / "bucket-2" / "sitemap_index.xml").read_bytes()


def test_gzip_objects_are_gzip_files(tmp_path: Path, moto_url: str, bucket: str) -> None:
    done = publish(
        tmp_path, "work", pages(5), f"SITEMAP_OUTPUT_URI=s3://{bucket}/", f"AWS_ENDPOINT_URL={moto_url}", "SITEMAP_GZIP=True"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    heads = download(moto_url, bucket, "", tmp_path / "bucket")
    assert heads["sitemap-00001.xml.gz"] == {"ContentType": "application/gzip", "ContentEncoding": None}
    assert heads["sitemap_index.xml"]["ContentType"] == "application/xml; charset=utf-8"
    assert len(read_sitemap_set(tmp_path / "bucket", BASE)) == 5


def objects(endpoint: str, bucket: str, prefix: str) -> dict[str, tuple[str, Any]]:
    """Each object under ``prefix`` (its name after it) -> (ETag, LastModified)."""
    listed = client(endpoint).list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    return {item["Key"][len(prefix) :]: (item["ETag"], item["LastModified"]) for item in listed}


@pytest.mark.parametrize("gzip", ["False", "True"])
def test_objects_of_unchanged_files_are_left_as_they_are(tmp_path: Path, moto_url: str, bucket: str, gzip: str) -> None:
    """A republish of the same set uploads nothing: every object keeps its ETag and Last-Modified
    (what a search engine's conditional GET compares); one changed page replaces its file and the
    index, and nothing else."""
    settings = (
        f"SITEMAP_OUTPUT_URI=s3://{bucket}/kept/", f"AWS_ENDPOINT_URL={moto_url}", "SITEMAP_MAX_URLS=10",
        f"SITEMAP_GZIP={gzip}", "SITEMAP_XSL=on",
    )  # fmt: skip
    first = publish(tmp_path, "work-a", pages(25), *settings)
    assert first.returncode == 0, first.stderr[-3000:]
    before = objects(moto_url, bucket, "kept/")
    suffix = ".gz" if gzip == "True" else ""
    shards = [f"sitemap-0000{n}.xml{suffix}" for n in (1, 2, 3)]
    assert sorted(before) == sorted([*shards, "sitemap.xsl", "sitemap_index.xml"])
    time.sleep(1.1)  # Last-Modified counts seconds: a replaced object would show it

    # The same set from another working copy (another machine): compared with the bucket's objects.
    again = publish(tmp_path, "work-b", pages(25), *settings)
    assert again.returncode == 0, again.stderr[-3000:]
    assert objects(moto_url, bucket, "kept/") == before
    assert "5 unchanged left in place" in again.stderr, again.stderr[-3000:]

    changed = pages(25)
    changed["p/0012.html"] = "2026-06-01"  # in the second file
    third = publish(tmp_path, "work-b", changed, *settings)
    assert third.returncode == 0, third.stderr[-3000:]
    after = objects(moto_url, bucket, "kept/")
    assert {name for name in after if after[name] != before[name]} == {shards[1], "sitemap_index.xml"}
    download(moto_url, bucket, "kept/", tmp_path / "bucket")
    got = read_sitemap_set(tmp_path / "bucket", BASE)
    assert [entry["lastmod"] for entry in got if entry["loc"] == BASE + "p/0012.html"] == ["2026-06-01"]
    assert len(got) == 25


class _RefusingProxy(ThreadingHTTPServer):
    """A proxy to the S3 server that answers 500 to every upload of one file."""

    daemon_threads = True

    def __init__(self, upstream: str, refused: str) -> None:
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        self.upstream = upstream.removeprefix("http://")
        self.refused = refused
        self.refusals = 0
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _ProxyHandler(BaseHTTPRequestHandler):
    server: _RefusingProxy

    def log_message(self, *args: object) -> None:
        pass

    def _forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.command == "PUT" and self.path.split("?")[0].endswith("/" + self.server.refused):
            self.server.refusals += 1
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        upstream = http.client.HTTPConnection(self.server.upstream, timeout=30)
        upstream.request(self.command, self.path, body=body, headers=dict(self.headers.items()))
        answer = upstream.getresponse()
        data = answer.read()
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        upstream.close()

    do_GET = do_PUT = do_DELETE = do_HEAD = do_POST = _forward


def test_a_failure_in_mid_upload_leaves_the_old_index(tmp_path: Path, moto_url: str, bucket: str) -> None:
    uri = f"SITEMAP_OUTPUT_URI=s3://{bucket}/"
    first = publish(tmp_path, "work", pages(25), uri, f"AWS_ENDPOINT_URL={moto_url}", "SITEMAP_MAX_URLS=10")
    assert first.returncode == 0, first.stderr[-3000:]
    old_index = client(moto_url).get_object(Bucket=bucket, Key="sitemap_index.xml")["Body"].read()

    proxy = _RefusingProxy(moto_url, "sitemap-00002.xml")
    try:
        changed = pages(25, "2026-07-01")
        failed = publish(tmp_path, "work", changed, uri, f"AWS_ENDPOINT_URL={proxy.url}", "SITEMAP_MAX_URLS=10")
    finally:
        proxy.shutdown()
    assert failed.returncode != 0
    assert proxy.refusals >= 1
    assert f"publishing to s3://{bucket}/ failed" in failed.stderr, failed.stderr[-3000:]
    s3 = client(moto_url)
    assert s3.get_object(Bucket=bucket, Key="sitemap_index.xml")["Body"].read() == old_index
    # The upload failed beside the live set: the bucket serves the old set, whole, and no staging file.
    heads = download(moto_url, bucket, "", tmp_path / "bucket")
    assert sorted(heads) == ["sitemap-00001.xml", "sitemap-00002.xml", "sitemap-00003.xml", "sitemap_index.xml"]
    assert {e["lastmod"] for e in read_sitemap_set(tmp_path / "bucket", BASE)} == {"2026-05-01"}

    # The next publish, with the bucket back, puts the whole new set in place.
    again = publish(tmp_path, "work", changed, uri, f"AWS_ENDPOINT_URL={moto_url}", "SITEMAP_MAX_URLS=10")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "25 changed" in again.stdout, again.stdout
    download(moto_url, bucket, "", tmp_path / "bucket-2")
    assert {entry["lastmod"] for entry in read_sitemap_set(tmp_path / "bucket-2", BASE)} == {"2026-07-01"}


def test_a_crawl_publishes_into_the_bucket(case_site: RunningSite, tmp_path: Path, moto_url: str, bucket: str) -> None:
    settings = {"SITEMAP_OUTPUT_URI": f"s3://{bucket}/crawl/", "AWS_ENDPOINT_URL": moto_url, **CREDENTIALS}
    result = run_crawl(case_site.spec.start_url, tmp_path, settings=settings)
    assert result.returncode == 0, result.describe()
    download(moto_url, bucket, "crawl/", tmp_path / "bucket")
    got = read_sitemap_set(tmp_path / "bucket", case_site.origin + "/")
    assert got == read_sitemap_set(result.output_dir, case_site.origin + "/")
    assert got, result.describe()


def test_llms_txt_is_compared_with_the_bucket_s(
    case_site: RunningSite, tmp_path: Path, moto_url: str, bucket: str
) -> None:
    """The previous llms.txt, like the previous set, is the one the bucket serves: a crawl from
    another working copy (another machine) compares with it, not with a local file it lacks."""
    settings = {
        "SITEMAP_OUTPUT_URI": f"s3://{bucket}/llms/", "AWS_ENDPOINT_URL": moto_url, "SITEMAP_LLMS_TXT": "on",
        **CREDENTIALS,
    }
    first = run_crawl(case_site.spec.start_url, tmp_path / "machine-a", settings=settings)
    assert first.returncode == 0, first.describe()
    assert first.report is not None and first.report["llms_txt"]["added"] is None, first.report
    listed = first.report["llms_txt"]["listed"]
    assert listed > 0
    second = run_crawl(case_site.spec.start_url, tmp_path / "machine-b", settings=settings)
    assert second.returncode == 0, second.describe()
    assert second.report is not None
    assert second.report["llms_txt"] == {"listed": listed, "pages": listed, "added": 0, "removed": 0}
    download(moto_url, bucket, "llms/", tmp_path / "bucket")
    assert (tmp_path / "bucket" / LLMS_TXT_NAME).read_bytes() == (second.output_dir / LLMS_TXT_NAME).read_bytes()


def test_llms_txt_turned_off_is_taken_down_from_the_bucket(
    case_site: RunningSite, tmp_path: Path, moto_url: str, bucket: str
) -> None:
    """The llms.txt a crawl published lists that crawl's set: once SITEMAP_LLMS_TXT is off, the next
    publish from another working copy takes it down with the set it listed."""
    settings = {"SITEMAP_OUTPUT_URI": f"s3://{bucket}/off/", "AWS_ENDPOINT_URL": moto_url, **CREDENTIALS}
    first = run_crawl(case_site.spec.start_url, tmp_path / "machine-a", settings={**settings, "SITEMAP_LLMS_TXT": "on"})
    assert first.returncode == 0, first.describe()
    assert LLMS_TXT_NAME in download(moto_url, bucket, "off/", tmp_path / "before")
    second = run_crawl(case_site.spec.start_url, tmp_path / "machine-b", settings=settings)
    assert second.returncode == 0, second.describe()
    assert LLMS_TXT_NAME not in download(moto_url, bucket, "off/", tmp_path / "after")
    assert not (second.output_dir / LLMS_TXT_NAME).exists()


@pytest.mark.parametrize("uri", ["http://example.com/", "s3://", "s3://bucket/?x=1"])
def test_a_bad_uri_names_the_setting(tmp_path: Path, uri: str) -> None:
    done = publish(tmp_path, "work", pages(1), f"SITEMAP_OUTPUT_URI={uri}")
    assert done.returncode != 0
    assert "SITEMAP_OUTPUT_URI" in done.stderr, done.stderr[-2000:]


def test_shared_workers_without_a_shared_disk_publish_into_the_bucket(
    tmp_path: Path, moto_url: str, bucket: str, redis_url: str
) -> None:
    """Two workers of one Redis crawl, each with a working directory of its own (two hosts, no
    shared disk): the one that publishes puts the whole set in the bucket."""
    settings = {
        "SITEMAP_REDIS_URL": redis_url, "SITEMAP_REDIS_IDLE_SECONDS": "0.5", "SITEMAP_REDIS_LEASE_SECONDS": "2",
        "SITEMAP_OUTPUT_URI": f"s3://{bucket}/", "AWS_ENDPOINT_URL": moto_url, **CREDENTIALS,
    }  # fmt: skip
    with serve_site(lambda origin, _other: build_generated_site(origin, 300)) as site:
        processes = []
        for host in ("host-a", "host-b"):
            work = tmp_path / host
            work.mkdir()
            log = (work / "crawl.log").open("w", encoding="utf-8")
            args = crawl_command(site.start_url, work, settings=settings)
            processes.append(subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=log, text=True))
        codes = [process.wait(timeout=240) for process in processes]
        logs = [(tmp_path / host / "crawl.log").read_text(encoding="utf-8") for host in ("host-a", "host-b")]
        assert codes == [0, 0], [log[-3000:] for log in logs]
        assert sum("Sitemap published:" in log for log in logs) == 1, [log[-3000:] for log in logs]
        assert all("scheduler/dequeued/redis" in log for log in logs)
        download(moto_url, bucket, "", tmp_path / "bucket")
        urls = read_sitemap_set(tmp_path / "bucket", site.origin + "/")
        assert_same_entries(without_traps(site.spec, urls), site.spec.expected_listed())
