"""End-to-end tests of ``scrapy publish`` (sitemap_spider/commands/publish.py): the real command
in a subprocess, on input files written here, every produced set validated and read back."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sitemap_check import read_sitemap_set

from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.options import OutputOptions
from sitemap_spider.sitemaps.shards.set_builder import SitemapSetBuilder
from tests.crawl_fixtures import folder_files

REPO_ROOT = Path(__file__).resolve().parent.parent
BASE = "https://www.example.com/"


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str
    output_dir: Path

    def describe(self) -> str:
        return f"exit code {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr[-4000:]}"

    def urls(self, base_url: str = BASE) -> list[dict[str, str]]:
        """The published set, validated against the XSDs and read back by Scrapy."""
        return read_sitemap_set(self.output_dir, base_url)


def publish(
    tmp_path: Path,
    source: str | Path,
    *options: str,
    stdin: bytes | None = None,
    base_url: str | None = BASE,
    output: str = "out",
) -> Run:
    output_dir = tmp_path / output
    args = [sys.executable, "-m", "scrapy", "publish", str(source), "-s", f"SITEMAP_OUTPUT_DIR={output_dir}"]
    if base_url is not None:
        args += ["-s", f"SITEMAP_BASE_URL={base_url}"]
    done = subprocess.run(
        [*args, *options],
        check=False,  # asserted by each test, with the output in the message
        cwd=REPO_ROOT,
        env=dict(os.environ),
        input=stdin if stdin is not None else b"",
        capture_output=True,
        timeout=120,
    )
    return Run(done.returncode, done.stdout.decode(), done.stderr.decode(), output_dir)


def write_lines(path: Path, lines: list[str]) -> Path:
    data = "".join(line + "\n" for line in lines).encode()
    path.write_bytes(gzip.compress(data, mtime=0) if path.name.endswith(".gz") else data)
    return path


def jsonl(*items: Mapping[str, object]) -> list[str]:
    return [json.dumps(item) for item in items]


def locs(run: Run) -> list[str]:
    return [url["loc"] for url in run.urls()]


# What `scrapy crawl sitemap -o entries.jl` writes: every field, null when unknown.
CRAWL_LINES = jsonl(
    {"loc": BASE + "b", "lastmod": "2024-05-01T10:20:30+00:00", "changefreq": None, "priority": None,
     "content_digest": "d1"},
    {"loc": BASE, "lastmod": None, "changefreq": None, "priority": None, "content_digest": "d0"},
    {"loc": BASE + "index.html", "lastmod": None, "changefreq": None, "priority": None, "content_digest": "d0"},
    {"loc": BASE + "a?x=1&y=2", "lastmod": "2024-05-02", "changefreq": "daily", "priority": 0.8,
     "content_digest": "d2"},
)


def test_jsonl_as_a_crawl_writes_it(tmp_path: Path) -> None:
    run = publish(tmp_path, write_lines(tmp_path / "entries.jl", CRAWL_LINES))
    assert run.returncode == 0, run.describe()
    assert run.urls() == [
        {"loc": BASE},  # /index.html has the same content and sorts after /
        {"loc": BASE + "a?x=1&y=2", "lastmod": "2024-05-02", "changefreq": "daily", "priority": "0.8"},
        {"loc": BASE + "b", "lastmod": "2024-05-01T10:20:30+00:00"},
    ]
    assert "Published 3 URLs in 1 sitemap file(s)" in run.stdout
    assert "1 page(s) with the content of another left out" in run.stdout
    assert run.stdout.rstrip().endswith(f"Sitemap: {BASE}sitemap_index.xml")


def test_same_bytes_as_the_builder_of_a_crawl(tmp_path: Path) -> None:
    entries = [
        SitemapEntry(f"{BASE}p/{i}", lastmod=f"2024-05-{i % 28 + 1:02d}" if i % 3 else None) for i in range(250)
    ]
    options = OutputOptions(tmp_path / "direct", BASE, max_urls=100, gzip=True)
    with SitemapSetBuilder(options) as builder:
        for entry in entries:
            builder.add(entry)
        builder.publish()
    lines = jsonl(*({"loc": e.loc, "lastmod": e.lastmod} for e in reversed(entries)))
    run = publish(tmp_path, write_lines(tmp_path / "e.jl", lines), "-s", "SITEMAP_MAX_URLS=100", "-s", "SITEMAP_GZIP=true")
    assert run.returncode == 0, run.describe()
    assert folder_files(run.output_dir) == folder_files(tmp_path / "direct")
    assert len(run.urls()) == 250
    assert sorted(path.name for path in run.output_dir.glob("sitemap-*")) == [
        "sitemap-00001.xml.gz",
        "sitemap-00002.xml.gz",
        "sitemap-00003.xml.gz",
    ]


def test_csv_with_a_loc_column(tmp_path: Path) -> None:
    lines = [
        "title,LOC,priority,lastmod,changefreq",
        f'"Home, sweet home",{BASE},1.0,2024-05-01,',
        f'"A title\non two lines",{BASE}about,,,monthly',
        "",
        f"Shop,{BASE}shop?a=1&b=2,0.25,,",
    ]
    run = publish(tmp_path, write_lines(tmp_path / "pages.csv", lines))
    assert run.returncode == 0, run.describe()
    assert run.urls() == [
        {"loc": BASE, "lastmod": "2024-05-01", "priority": "1.0"},
        {"loc": BASE + "about", "changefreq": "monthly"},
        {"loc": BASE + "shop?a=1&b=2", "priority": "0.25"},
    ]


def test_text_one_url_per_line(tmp_path: Path) -> None:
    lines = ["# exported from the CMS", f"{BASE}b", "", f"  {BASE}a  ", f"{BASE}b"]
    run = publish(tmp_path, write_lines(tmp_path / "urls.txt", lines))
    assert run.returncode == 0, run.describe()
    assert locs(run) == [BASE + "a", BASE + "b"]
    assert "1 repeated URL(s) listed once" in run.stdout


@pytest.mark.parametrize(
    ("lines", "kind"),
    [
        (jsonl({"loc": BASE + "x"}, {"loc": BASE + "y"}), "jsonl"),
        (["loc,other", f"{BASE}x,1", f"{BASE}y,2"], "csv"),
        ([f"{BASE}x", f"{BASE}y"], "txt"),
    ],
)
def test_standard_input_and_sniffed_format(tmp_path: Path, lines: list[str], kind: str) -> None:
    data = "".join(line + "\n" for line in ["", *lines]).encode()
    run = publish(tmp_path, "-", stdin=data)
    assert run.returncode == 0, run.describe()
    assert f"as {kind}" in run.stderr
    assert locs(run) == [BASE + "x", BASE + "y"]


def test_gzip_input_file_and_stdin(tmp_path: Path) -> None:
    lines = jsonl({"loc": BASE + "z", "lastmod": "2024-01-02"}, {"loc": BASE + "y"})
    run = publish(tmp_path, write_lines(tmp_path / "entries.jl.gz", lines))
    assert run.returncode == 0, run.describe()
    assert locs(run) == [BASE + "y", BASE + "z"]
    piped = publish(tmp_path, "-", stdin=gzip.compress("\n".join(lines).encode()), output="piped")
    assert piped.returncode == 0, piped.describe()
    assert folder_files(piped.output_dir) == folder_files(run.output_dir)


def test_format_option_overrides_the_extension(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "export.txt", jsonl({"loc": BASE + "q"}))
    assert publish(tmp_path, path).returncode == 1  # read as URLs: '{"loc": ...}' is no URL
    run = publish(tmp_path, path, "--format", "jsonl")
    assert run.returncode == 0, run.describe()
    assert locs(run) == [BASE + "q"]


def test_bad_lines_are_reported_with_their_number_and_skipped(tmp_path: Path) -> None:
    lines = [
        json.dumps({"loc": BASE + "good/1"}),
        "{not json",
        json.dumps({"lastmod": "2024-05-01"}),
        json.dumps({"loc": "/relative/url"}),
        json.dumps({"loc": BASE + "bad-date", "lastmod": "yesterday"}),
        json.dumps({"loc": BASE + "bad-priority", "priority": "high"}),
        json.dumps({"loc": BASE + "out-of-range", "priority": 1.5}),
        json.dumps(["a", "list"]),
        json.dumps({"loc": BASE + "good/2"}),
    ]
    run = publish(tmp_path, write_lines(tmp_path / "entries.jl", lines))
    assert run.returncode == 0, run.describe()
    assert locs(run) == [BASE + "good/1", BASE + "good/2"]
    for number, reason in [
        (2, "not JSON"),
        (3, "no loc"),
        (4, "absolute http(s) URL"),
        (5, "lastmod 'yesterday'"),
        (6, "priority 'high'"),
        (7, "outside 0.0-1.0"),
        (8, "not a JSON object"),
    ]:
        assert f"line {number}: " in run.stderr and reason in run.stderr, (number, reason, run.stderr)
    assert "line 1:" not in run.stderr and "line 9:" not in run.stderr
    assert "7 bad line(s) skipped" in run.stdout


def test_many_bad_lines_are_counted_not_all_printed(tmp_path: Path) -> None:
    lines = [f"{BASE}ok"] + [f"not-a-url-{i}" for i in range(50)]
    run = publish(tmp_path, write_lines(tmp_path / "urls.txt", lines))
    assert run.returncode == 0, run.describe()
    assert run.stderr.count("; skipped") == 20
    assert "line 21: " in run.stderr and "line 22: " not in run.stderr
    assert "30 more bad lines skipped (50 in all)" in run.stderr


def test_strict_mode_stops_and_keeps_the_previous_set(tmp_path: Path) -> None:
    first = publish(tmp_path, write_lines(tmp_path / "old.txt", [f"{BASE}old/{i}" for i in range(30)]),
                    "-s", "SITEMAP_MAX_URLS=10", "-s", "SITEMAP_GZIP=true")
    assert first.returncode == 0, first.describe()
    before = folder_files(first.output_dir)
    lines = [f"{BASE}new/{i}" for i in range(5)] + ["relative"] + [f"{BASE}new/{i}" for i in range(5, 9)]
    run = publish(tmp_path, write_lines(tmp_path / "new.txt", lines), "-s", "SITEMAP_STOP_ON_BAD_INPUT=true")
    assert run.returncode == 1, run.describe()
    assert "line 6: " in run.stderr and "SITEMAP_STOP_ON_BAD_INPUT" in run.stderr
    assert folder_files(first.output_dir) == before
    assert not list(first.output_dir.glob(".sitemap-staging-*"))
    assert len(first.urls()) == 30


def test_base_url_defaults_to_the_origin_of_the_first_valid_entry(tmp_path: Path) -> None:
    lines = ["relative", "https://Shop.Example.org:8443/b?x=1", "https://shop.example.org:8443/a"]
    run = publish(tmp_path, write_lines(tmp_path / "urls.txt", lines), base_url=None)
    assert run.returncode == 0, run.describe()
    base = "https://shop.example.org:8443/"
    assert "SITEMAP_BASE_URL not set: using https://shop.example.org:8443/" in run.stderr
    assert [url["loc"] for url in run.urls(base)] == ["https://Shop.Example.org:8443/b?x=1", base + "a"]
    assert f"Sitemap: {base}sitemap_index.xml" in run.stdout


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("empty.jl", b""),
        ("blank.txt", b"\n\n# only a comment\n"),
        ("all-bad.jl", b'{"loc": "nope"}\n{broken\n'),
        ("no-loc-column.csv", b"url,lastmod\nhttps://www.example.com/,2024-05-01\n"),
    ],
)
def test_nothing_to_publish_exits_1_and_keeps_the_old_set(tmp_path: Path, name: str, content: bytes) -> None:
    old = publish(tmp_path, write_lines(tmp_path / "old.txt", [BASE]))
    assert old.returncode == 0, old.describe()
    before = folder_files(old.output_dir)
    (tmp_path / name).write_bytes(content)
    run = publish(tmp_path, tmp_path / name)
    assert run.returncode == 1, run.describe()
    assert "error: nothing published" in run.stderr
    assert folder_files(old.output_dir) == before


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["-s", "SITEMAP_MAX_URLS=50001"], "error: SITEMAP_MAX_URLS: "),
        (["-s", "SITEMAP_GZIP=maybe"], "error: SITEMAP_GZIP: "),
        (["-s", "SITEMAP_STOP_ON_BAD_INPUT=sometimes"], "error: SITEMAP_STOP_ON_BAD_INPUT: "),
        (["-s", "SITEMAP_BASE_URL=ftp://example.com/"], "error: SITEMAP_BASE_URL: "),
        (["--format", "xml"], "invalid choice"),
        (["second-file.txt"], "exactly one input file"),
    ],
)
def test_bad_usage_exits_2(tmp_path: Path, arguments: list[str], message: str) -> None:
    run = publish(tmp_path, write_lines(tmp_path / "urls.txt", [BASE]), *arguments)
    assert run.returncode == 2, run.describe()
    assert message in run.stderr
    assert not run.output_dir.exists()


def test_missing_input_file_exits_2(tmp_path: Path) -> None:
    run = publish(tmp_path, tmp_path / "nowhere.jl")
    assert run.returncode == 2, run.describe()
    assert "error: " in run.stderr and "nowhere.jl" in run.stderr


def big_input(count: int, bad_every: int, odd_chunk: bool = False) -> list[str]:
    """``odd_chunk``: lines 2,000-2,099 have locs the XML escapes and lastmods without seconds."""
    lines = []
    for i in range(count):
        if i % bad_every == bad_every - 1:
            lines.append(json.dumps({"loc": f"relative/{i}"}))
            continue
        page = (i * 7919) % (count - 500)  # unsorted, and the last 500 repeat earlier pages
        odd = odd_chunk and 2000 <= i < 2100
        query = f"?a={i}&b='{i % 3}'" if odd else ""
        seconds = "" if odd else ":00"
        lines.append(json.dumps({
            "loc": f"{BASE}s{page % 7}/p{page}.html{query}",
            "lastmod": f"2024-0{page % 9 + 1}-1{page % 10}T10:00{seconds}+0{page % 3}:00" if page % 4 else None,
            "content_digest": f"{page % 3000:x}",  # some pages share content
        }))
    return lines


def test_big_input_parsed_in_worker_processes_gives_the_same_set(tmp_path: Path) -> None:
    # SITEMAP_SORT_RUN_SIZE=1000: 5,500 lines are five batches for the worker processes; with the
    # default run size the same input is read in this process alone.
    path = write_lines(tmp_path / "big.jl", big_input(5500, bad_every=700))
    batched = publish(tmp_path, path, "-s", "SITEMAP_SORT_RUN_SIZE=1000", "-s", "SITEMAP_MAX_URLS=1000", output="batched")
    single = publish(tmp_path, path, "-s", "SITEMAP_MAX_URLS=1000", output="single")
    assert batched.returncode == single.returncode == 0, batched.describe() + single.describe()
    assert folder_files(batched.output_dir) == folder_files(single.output_dir)
    assert batched.stdout.replace("batched", "single") == single.stdout
    bad = [f"line {n}: " for n in range(700, 5501, 700)]
    assert all(line in batched.stderr for line in bad), batched.stderr
    assert "7 bad line(s) skipped" in batched.stdout
    urls = batched.urls()
    assert len(urls) == len({url["loc"] for url in urls}) > 2000


def test_lines_are_counted_to_the_last_entry_however_many_chunks(tmp_path: Path) -> None:
    # Blank lines and comments after the last entry are not counted, in one chunk or in many.
    path = write_lines(tmp_path / "big.jl", [*big_input(5500, bad_every=700), "", "", ""])
    batched = publish(tmp_path, path, "-s", "SITEMAP_SORT_RUN_SIZE=1000", output="batched")
    single = publish(tmp_path, path, output="single")
    assert batched.returncode == single.returncode == 0, batched.describe() + single.describe()
    assert "(5,500 lines; 7 bad line(s) skipped" in batched.stdout, batched.stdout
    assert "(5,500 lines; 7 bad line(s) skipped" in single.stdout, single.stdout


def test_nesting_too_deep_is_bad_wherever_the_line_is_read(tmp_path: Path) -> None:
    # Where a decoder hits Python's recursion limit depends on the stack of the process that
    # reads the line (the main one, or a worker forked from deep in it): a fixed limit instead.
    lines = []
    for i in range(3000):
        depth = 499 if i % 600 == 1 else 501 if i % 600 == 2 else 0
        nested = "[" * depth + "]" * depth if depth else "1"
        lines.append(f'{{"loc": "https://www.example.com/{i}", "x": {nested}}}')
    path = write_lines(tmp_path / "deep.jl", lines)
    batched = publish(tmp_path, path, "-s", "SITEMAP_SORT_RUN_SIZE=1000", output="batched")
    single = publish(tmp_path, path, output="single")
    for run in (batched, single):
        assert run.returncode == 0, run.describe()
        assert "Published 2,995 URLs" in run.stdout and "5 bad line(s) skipped" in run.stdout, run.stdout
        assert "line 3: not JSON (nested more than 500 levels deep); skipped" in run.stderr, run.stderr


def test_a_byte_order_mark_alone_on_the_first_line_is_a_blank_line(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf\n" + "".join(f'{{"loc": "https://www.example.com/{i}"}}\n' for i in range(3)).encode()
    piped = publish(tmp_path, "-", stdin=data, output="piped")
    assert piped.returncode == 0, piped.describe()
    assert "Reading - as jsonl" in piped.stderr and "Published 3 URLs" in piped.stdout, piped.describe()


def test_a_byte_order_mark_is_dropped_on_the_first_line_only(tmp_path: Path) -> None:
    # Each worker numbers its chunk's lines from 1: a mark at the start of a chunk was read as
    # the input's own, and which lines were bad depended on where the chunks were cut.
    bom = b"\xef\xbb\xbf"
    lines = [bom + json.dumps({"loc": f"https://www.example.com/{i}"}).encode() for i in range(1, 5001)]
    path = tmp_path / "bom.jl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    run = publish(tmp_path, path, "-s", "SITEMAP_SORT_RUN_SIZE=1000")
    assert run.returncode == 0, run.describe()
    assert "Published 1 URLs" in run.stdout and "4,999 bad line(s) skipped" in run.stdout, run.stdout


def test_a_digest_no_file_can_hold_is_a_bad_line(tmp_path: Path) -> None:
    # json.loads makes a lone surrogate of "\\ud800"; writing the sort run then failed with a traceback.
    lines = [json.dumps({"loc": f"https://www.example.com/{i}", "content_digest": "\ud800" if i == 2 else f"d{i}"})
             for i in range(1, 4)]
    run = publish(tmp_path, write_lines(tmp_path / "s.jl", lines))
    assert run.returncode == 0, run.describe()
    assert "line 2: content_digest '\\ud800' is not valid Unicode; skipped" in run.stderr, run.stderr
    assert "Published 2 URLs" in run.stdout


def test_strict_mode_stops_at_the_first_bad_line_of_a_big_input(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "big.jl", big_input(5500, bad_every=3456))
    run = publish(tmp_path, path, "-s", "SITEMAP_SORT_RUN_SIZE=1000", "-s", "SITEMAP_STOP_ON_BAD_INPUT=true")
    assert run.returncode == 1, run.describe()
    assert "line 3456: " in run.stderr and "SITEMAP_STOP_ON_BAD_INPUT" in run.stderr
    assert not list(run.output_dir.glob("sitemap*"))
    assert not list(run.output_dir.glob(".sitemap-staging-*"))


def test_big_gzipped_standard_input_is_spooled_to_the_workers(tmp_path: Path) -> None:
    lines = big_input(4200, bad_every=1000)
    path = write_lines(tmp_path / "big.jl", lines)
    from_file = publish(tmp_path, path, "-s", "SITEMAP_SORT_RUN_SIZE=1000", output="file")
    data = gzip.compress("".join(line + "\n" for line in lines).encode())
    piped = publish(tmp_path, "-", "-s", "SITEMAP_SORT_RUN_SIZE=1000", stdin=data, output="piped")
    assert from_file.returncode == piped.returncode == 0, from_file.describe() + piped.describe()
    assert folder_files(piped.output_dir) == folder_files(from_file.output_dir)
    assert all(f"line {n}: " in piped.stderr for n in (1000, 2000, 3000, 4000)), piped.stderr
    assert "(4,200 lines; 4 bad line(s) skipped" in piped.stdout
    assert not list(piped.output_dir.glob(".sitemap-staging-*"))


def test_shards_compressed_after_writing_are_the_bytes_a_gzip_writer_makes(tmp_path: Path) -> None:
    # Publishing writes plain shards and gzips them afterwards, from the bytes read back in one
    # write (files.write_document) or, past 8 MiB, from the file (files.gzip_file); the
    # published bytes must stay those of a ShardWriter that compresses as it writes.
    from sitemap_spider.sitemaps.shards.files import gzip_file, write_document
    from sitemap_spider.sitemaps.shards.writer import ShardWriter

    entries = [SitemapEntry(f"{BASE}p/{i:07d}?q={i * 7919}", lastmod="2024-05-01") for i in range(60_000)]
    for name, compress in (("gz", True), ("plain", False)):
        (tmp_path / name).mkdir()
        writer = ShardWriter(tmp_path / name, max_urls=50_000, max_bytes=52_428_800, gzip=compress)
        for entry in entries:
            writer.write(entry)
        writer.close()
    for number in (1, 2):
        plain = tmp_path / "plain" / f"sitemap-0000{number}.xml"
        expected = (tmp_path / "gz" / f"sitemap-0000{number}.xml.gz").read_bytes()
        gzip_file(plain, tmp_path / f"{number}.gz")
        assert (tmp_path / f"{number}.gz").read_bytes() == expected
        write_document(tmp_path / f"{number}-whole.gz", plain.read_bytes(), gzip=True)
        assert (tmp_path / f"{number}-whole.gz").read_bytes() == expected


@pytest.mark.parametrize("odd_chunk", [False, True])
def test_worker_processes_publish_what_the_builder_of_a_crawl_publishes(tmp_path: Path, odd_chunk: bool) -> None:
    # Lines of the crawl's shape (the fast paths), others (the general path), bad lines, pages
    # sharing content and repeated URLs, parsed in chunks by worker processes: the set is the
    # one a crawl's builder makes of the same entries, byte for byte. Without the odd chunk,
    # every run says its locs and lastmods go into the XML as they are, and the publishing
    # loop skips its looks for characters to escape and lastmods to complete
    # (tests/test_set_builder.py compares the bytes either way); with it, one run does not, and
    # the loop looks at every block.
    lines = big_input(6000, bad_every=900, odd_chunk=odd_chunk)
    entries = []
    for i, line in enumerate(lines):
        record = json.loads(line)
        if i % 5 == 0:  # the crawl's shape, all five fields
            record = {"loc": record["loc"], "lastmod": record.get("lastmod"), "changefreq": None,
                      "priority": None, "content_digest": record.get("content_digest")}
        elif i % 5 == 1:
            record["priority"] = 0.5
        lines[i] = json.dumps(record)
        if not record["loc"].startswith("relative"):
            entries.append(SitemapEntry(**record))
    options = OutputOptions(tmp_path / "direct", BASE, max_urls=1000, gzip=True)
    with SitemapSetBuilder(options) as builder:
        for entry in entries:
            builder.add(entry)
        direct = builder.publish()
    run = publish(tmp_path, write_lines(tmp_path / "e.jl", lines), "-s", "SITEMAP_SORT_RUN_SIZE=1000",
                  "-s", "SITEMAP_MAX_URLS=1000", "-s", "SITEMAP_GZIP=true")
    assert run.returncode == 0, run.describe()
    assert folder_files(run.output_dir) == folder_files(tmp_path / "direct")
    urls = run.urls()
    assert any("&b='" in url["loc"] for url in urls) == odd_chunk  # read back unescaped
    assert any(url.get("lastmod", "").endswith("T10:00:00+01:00") for url in urls)
    assert f"{direct.content_duplicates:,} page(s) with the content of another left out" in run.stdout
    assert direct.content_duplicates > 1000


@pytest.mark.parametrize("regular", [True, False])
def test_chunks_of_long_lines_are_cut_by_bytes_not_only_by_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, regular: bool
) -> None:
    # A worker holds about three times its chunk: with the longest URLs, chunks of
    # SITEMAP_SORT_RUN_SIZE lines took 665 MB. Chunks stop at MAX_CHUNK_BYTES (and a line end).
    from sitemap_spider.sitemaps.ingest import feed as ingest

    monkeypatch.setattr(ingest, "MAX_CHUNK_BYTES", 64 * 1024)
    # More than the 1 MiB read first to measure the lines, so that it is cut too.
    lines = [json.dumps({"loc": f"https://www.example.com/{i}/" + "x" * 2000}).encode() + b"\n" for i in range(1000)]
    source = tmp_path / "long.jl"
    source.write_bytes(b"".join(lines))
    spool = tmp_path / "spool"
    spool.mkdir()
    with open(source, "rb") as stream:
        chunks = list(ingest._chunks(stream, str(source) if regular else None, 100_000, spool))
        pieces = [Path(name).read_bytes()[start : start + length] for name, start, length, _ in chunks]
    longest = max(map(len, lines))
    assert len(chunks) > 25
    assert all(len(piece) <= 64 * 1024 + longest for piece in pieces)
    assert b"".join(pieces) == source.read_bytes()  # every line once, each chunk ends at a line end
    assert all(piece.endswith(b"\n") for piece in pieces)


def test_iris_and_spaces_are_percent_encoded_as_the_crawl_does(tmp_path: Path) -> None:
    # A CMS's export: raw UTF-8 and spaces are published in the crawl's normal form and counted;
    # a loc that is valid as given is published as given; a control character is a bad line.
    items = [{"loc": f"{BASE}s20/caf\u00e9-{i}.html"} for i in range(3000)]
    items += [{"loc": f"{BASE}my page-{i}.html", "lastmod": "2024-05-01"} for i in range(3000)]
    items += [{"loc": "https://WWW.Example.com:443/./kept"}, {"loc": BASE + "bad\u00e9\u0001"}]
    for name, lines in (("cms.jl", jsonl(*items)), ("cms.txt", [str(item["loc"]) for item in items])):
        run = publish(tmp_path, write_lines(tmp_path / name, lines), "-s", "SITEMAP_SORT_RUN_SIZE=1000", output="out-" + name)
        assert run.returncode == 0, run.describe()
        published = locs(run)
        assert BASE + "s20/caf%C3%A9-7.html" in published and BASE + "my%20page-7.html" in published
        assert "https://WWW.Example.com:443/./kept" in published and len(published) == 6001
        assert "(6,002 lines; 1 bad line(s) skipped, 6,000 URL(s) with raw UTF-8 or spaces percent-encoded" in run.stdout
        assert "line 6002: " in run.stderr


def test_lastmods_before_the_web_or_after_now_are_published_as_given_and_counted(tmp_path: Path) -> None:
    """A CMS export's zeroed or clock-skewed dates are the user's to fix: published, counted, named."""
    ahead = (datetime.now(UTC) + timedelta(days=3)).strftime("%Y-%m-%d")
    soon = (datetime.now(UTC) + timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M:%SZ")  # clock drift: fine
    odd = {"a": "1970-01-01", "b": "0001-01-01T00:00:00Z", "c": ahead, "d": "1990-12-31", "e": soon,
           "f": "1991-01-01", "g": "2024-05-01"}
    lines = jsonl(*({"loc": BASE + name, "lastmod": lastmod} for name, lastmod in odd.items()))
    lines += [json.dumps({"loc": f"{BASE}p{page}", "lastmod": "2024-01-02"}) for page in range(3000)]
    path = write_lines(tmp_path / "cms.jl", lines)
    batched = publish(tmp_path, path, "-s", "SITEMAP_SORT_RUN_SIZE=1000", output="batched")
    single = publish(tmp_path, path, output="single")
    for run in (batched, single):
        assert run.returncode == 0, run.describe()
        said = "lastmods published as given but distrusted by search engines: 3 before 1991 and 1 later than now"
        assert said in run.stdout, run.stdout
        listed = {url["loc"]: url.get("lastmod") for url in run.urls()}
        assert {name: listed[BASE + name] for name in odd} == odd
    clean = publish(tmp_path, write_lines(tmp_path / "clean.jl", CRAWL_LINES), output="clean")
    assert clean.returncode == 0 and "distrusted" not in clean.stdout, clean.describe()


def _children(pid: int) -> set[int]:
    try:
        return {int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}
    except OSError:
        return set()


def _group(pgid: int) -> list[int]:
    """The live processes of process group ``pgid``."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rsplit(") ", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] not in "ZX":
                members.append(int(stat.parent.name))
    return sorted(members)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the worker processes in /proc")
@pytest.mark.parametrize(
    ("name", "group"),
    [
        ("SIGTERM", False),  # a timeout, a stopped container: to the main process
        ("SIGINT", True),  # Ctrl-C on a terminal: to every process of the group, the workers too
    ],
)
def test_a_stopped_publish_cleans_up_workers_and_staging_included(
    tmp_path: Path, name: str, group: bool
) -> None:
    """A publish whose lines are parsed by worker processes, stopped as they start. Killed by
    SIGTERM, it left its staging directory inside the output directory and its workers waiting for
    work for ever; stopped by Ctrl-C, a worker could keep the lock of the result queue and the
    publish waited for ever. Now either stops it cleanly, exit code 1, the old set as it was."""
    first = publish(tmp_path, write_lines(tmp_path / "old.txt", [f"{BASE}old/{n}" for n in range(10)]))
    assert first.returncode == 0, first.describe()
    before = folder_files(first.output_dir)
    big = write_lines(tmp_path / "big.txt", [f"{BASE}p/{n}" for n in range(400_000)])
    args = [sys.executable, "-m", "scrapy", "publish", str(big), "-s", f"SITEMAP_BASE_URL={BASE}",
            "-s", f"SITEMAP_OUTPUT_DIR={first.output_dir}", "-s", "SITEMAP_SORT_RUN_SIZE=1000"]
    # Files, not pipes: a worker left running would hold a pipe open, and reading it would hang.
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            args, cwd=REPO_ROOT, stdout=stdout, stderr=stderr, start_new_session=True,
            # Python leaves SIGINT ignored in a process started with it ignored (a background job).
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    workers: set[int] = set()
    deadline = time.monotonic() + 60
    while not workers and process.poll() is None and time.monotonic() < deadline:
        workers = _children(process.pid)
        time.sleep(0.01)
    assert workers, "the publish ended before its worker processes were seen"
    sent = getattr(signal, name)
    os.killpg(process.pid, sent) if group else process.send_signal(sent)
    try:
        process.wait(timeout=60)
        deadline = time.monotonic() + 10
        while _group(process.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = _group(process.pid)
    finally:  # nothing left behind by a failing run of this test either
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    described = f"exit code {process.returncode}\n{out.read_text()}\n{err.read_text()[-3000:]}"
    assert process.returncode == 1, described
    assert "nothing published: interrupted" in err.read_text(), described
    assert not left, f"worker processes left running: {left}"
    assert [p.name for p in first.output_dir.iterdir() if p.name.startswith(".")] == [], described
    assert folder_files(first.output_dir) == before


def test_urls_outside_the_base_url_are_published_as_given_and_counted(tmp_path: Path) -> None:
    """A CMS export still holding http:// URLs after a move to https, or another host's: the protocol
    takes them only by cross-submission, which publish cannot see; it says how many."""
    inside = [BASE + "a", "HTTPS://WWW.Example.COM:443/b", BASE + "blog/c"]  # the second: another spelling
    outside = ["http://www.example.com/d", "https://shop.example.com/e", "https://www.example.com:8443/f"]
    lines = inside + outside + [f"{BASE}p{page}" for page in range(3000)]
    path = write_lines(tmp_path / "cms.txt", lines)
    batched = publish(tmp_path, path, "-s", "SITEMAP_SORT_RUN_SIZE=1000", output="batched")
    single = publish(tmp_path, path, output="single")
    for run in (batched, single):
        assert run.returncode == 0, run.describe()
        assert f"3 URL(s) not under {BASE} published as given" in run.stdout, run.stdout
        assert {url["loc"] for url in read_sitemap_set(run.output_dir, BASE)} >= set(inside[::2] + outside)
    blog = publish(tmp_path, path, "-s", f"SITEMAP_BASE_URL={BASE}blog/", output="blog", base_url=None)
    assert blog.returncode == 0, blog.describe()
    assert f"3,005 URL(s) not under {BASE}blog/ published as given" in blog.stdout, blog.stdout
    clean = publish(tmp_path, write_lines(tmp_path / "clean.jl", CRAWL_LINES), output="clean")
    assert clean.returncode == 0 and "not under" not in clean.stdout, clean.describe()
