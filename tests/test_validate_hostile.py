"""Hostile inputs to ``scrapy validate`` stay bounded (#25): each at most 5 s of CPU and 200 MB.

Each input is generated here, streamed (a gzip bomb is never held whole, in memory or on disk),
and checked in a fresh Python process that reports its own CPU time and peak memory, so that
one input's cost is not hidden by another's (or by pytest's). The bound is CPU time, not wall
time: these tests run beside others on a loaded machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from tests.crawl_fixtures import REPO_ROOT

MAX_CPU_SECONDS = 5.0
MAX_MEMORY_MB = 200

# The child: builds the input as a stream (a file-like object of generated, gzip-compressed
# blocks), checks it as one document and prints what it found, its CPU time and peak memory.
_CHILD = textwrap.dedent(
    """
    import gzip, io, json, resource, sys, time, zlib

    from sitemap_spider.checking.session import Session
    from sitemap_spider.checking.document import check_document

    NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
    HEAD = f'<?xml version="1.0" encoding="UTF-8"?>\\n<urlset {NS}>\\n'.encode()
    kind = sys.argv[1]

    def blocks():
        if kind == "zeros":  # a gzip bomb of NUL bytes
            yield from (b"\\0" * 1048576 for _ in range(2048))
        elif kind == "whitespace":  # 2 GiB of blanks inside a well-formed urlset
            yield HEAD + b"<url><loc>https://www.example.com/</loc></url>\\n"
            yield from (b" " * 1048576 for _ in range(2048))
            yield b"</urlset>\\n"
        elif kind == "duplicates":  # 1.09 M tiny duplicate URLs
            yield HEAD
            yield from (b"<url><loc>https://a.co/x</loc></url>\\n" * 10_000 for _ in range(109))
            yield b"</urlset>\\n"
        elif kind == "text_lines":  # a text sitemap of 1.2 M distinct URLs
            yield from (
                "".join(f"https://www.example.com/p/{i}-{j}\\n" for j in range(10_000)).encode()
                for i in range(120)
            )
        elif kind == "deep":
            yield HEAD + b"<a>" * 1_000_000
        elif kind == "huge_text":
            yield HEAD + b"<url><loc>https://www.example.com/"
            yield from (b"a" * 1048576 for _ in range(60))
            yield b"</loc></url></urlset>\\n"
        elif kind == "one_huge_url":  # one <url> of 40 MB of image elements
            yield HEAD.replace(b"<urlset ", b'<urlset xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" ')
            yield b"<url><loc>https://www.example.com/</loc>"
            image = b"<image:image><image:loc>https://www.example.com/i.png</image:loc></image:image>"
            yield from (image * 10_000 for _ in range(50))
            yield b"</url></urlset>\\n"
        elif kind == "binary":
            yield bytes(range(256)) * 200_000

    class GzipStream(io.RawIOBase):
        \"\"\"The blocks, gzip-compressed as they are read.\"\"\"
        def __init__(self):
            self._blocks = blocks()
            self._zip = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
            self._out = b""
        def readable(self):
            return True
        def readinto(self, buffer):
            while not self._out and self._blocks is not None:
                block = next(self._blocks, None)
                if block is None:
                    self._out, self._blocks = self._zip.flush(), None
                else:
                    self._out = self._zip.compress(block)
            size = min(len(buffer), len(self._out))
            buffer[:size], self._out = self._out[:size], self._out[size:]
            return size

    session = Session()
    start = time.process_time()
    document = check_document(io.BufferedReader(GzipStream()), kind, None, session)
    cpu = time.process_time() - start
    print(json.dumps({
        "rules": dict(session.log.by_rule), "kind": document.kind, "entries": document.entries,
        "bytes": document.bytes, "cpu": cpu,
        # VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec from the process that forked
        # this one (a pytest worker that ran crawls before), VmHWM is this program's own peak.
        "memory_mb": next(
            int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")
        ) / 1024,
    }))
    """
)

# input -> (the rules found, with their counts where they matter; the document's kind)
HOSTILE: dict[str, tuple[dict[str, int], str | None]] = {
    "zeros": ({"file.binary": 1}, None),
    "whitespace": ({"limits.bytes": 1}, "urlset"),
    "duplicates": ({"limits.urls": 1, "duplicate.in_file": 49_999}, "urlset"),
    "text_lines": ({"limits.urls": 1}, "text"),
    "deep": ({"xml.not_well_formed": 1}, "urlset"),
    "huge_text": ({"xml.not_well_formed": 1}, "urlset"),
    "one_huge_url": ({"limits.entry": 1}, "urlset"),
    "binary": ({"file.binary": 1}, None),
}


def run_hostile(kind: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, kind], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_input_is_bounded(kind: str) -> None:
    result = run_hostile(kind)
    rules, document_kind = HOSTILE[kind]
    assert result["rules"] == rules, result
    assert result["kind"] == document_kind
    assert result["cpu"] <= MAX_CPU_SECONDS, result
    assert result["memory_mb"] <= MAX_MEMORY_MB, result


def test_entries_past_the_limit_are_counted() -> None:
    result = run_hostile("duplicates")
    assert result["entries"] == 1_090_000  # counted by their start tags, after the 50,000 checked
    assert result["bytes"] == 40_330_110
