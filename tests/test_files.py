"""Tests of sitemap_spider/sitemaps/shards/files.py: the reproducible gzip layer at its slice edges.

That a ShardWriter compressing as it writes gives the same bytes is tested in test_writer.py.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from sitemap_spider.sitemaps.shards.files import _COMPRESS_BLOCK, gzip_file, write_document
from tests.sitemap_check import check_gzip

SLICE = _COMPRESS_BLOCK  # every file is deflated in slices of this size


def sitemap_like(size: int) -> bytes:
    """``size`` bytes of varied, compressible text."""
    rng = random.Random(size)
    text = "".join(
        f"<url><loc>https://example.com/{rng.randrange(10**9)}/{'ab' * rng.randrange(60)}</loc></url>\n"
        for _ in range(size // 40 + 1)
    )
    return text.encode()[:size]


@pytest.mark.parametrize("size", [0, 1, SLICE - 1, SLICE, SLICE + 1, 2 * SLICE, 3 * SLICE + 777])
def test_gzip_bytes_at_the_edges_of_the_compression_slices(tmp_path: Path, size: int) -> None:
    # One write of the whole content against reads of one slice each, on both sides of a
    # slice's end; the content decompresses back exactly.
    plain = sitemap_like(size)
    (tmp_path / "plain").write_bytes(plain)
    write_document(tmp_path / "whole.gz", plain, gzip=True)
    gzip_file(tmp_path / "plain", tmp_path / "file.gz")
    data = (tmp_path / "whole.gz").read_bytes()
    check_gzip(data, plain)
    assert (tmp_path / "file.gz").read_bytes() == data
