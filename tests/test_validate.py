"""Tests of sitemap_spider/sitemaps/xml/validate.py: XSD validation, limits, streaming."""

from __future__ import annotations

import gzip
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

import sitemap_spider
from sitemap_spider.sitemaps.errors import SitemapValidationError
from sitemap_spider.sitemaps.xml.validate import MAX_CHILDREN, MAX_UNCOMPRESSED_BYTES, validate_file
from sitemap_spider.sitemaps.xml.elements import (
    SITEMAPINDEX_CLOSE,
    SITEMAPINDEX_OPEN,
    URLSET_CLOSE,
    URLSET_OPEN,
)

URL = b"<url><loc>https://example.com/%d</loc></url>\n"
PROJECT_ROOT = Path(sitemap_spider.__file__).parent.parent


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(gzip.compress(data, compresslevel=1, mtime=0) if path.name.endswith(".gz") else data)
    return path


def urlset(count: int) -> bytes:
    return URLSET_OPEN + b"".join(URL % i for i in range(count)) + URLSET_CLOSE


@pytest.mark.parametrize("name", ["s.xml", "s.xml.gz"])
@pytest.mark.parametrize("whole", [True, False], ids=["tree", "streamed"])
def test_valid_urlset(tmp_path: Path, name: str, whole: bool) -> None:
    assert validate_file(write(tmp_path / name, urlset(3)), whole=whole) == 3


def test_valid_urlset_with_all_fields(tmp_path: Path) -> None:
    data = (
        URLSET_OPEN
        + (
            b"<url><loc>https://example.com/?a=1&amp;b=2</loc><lastmod>2024-05-01T10:20:30Z"
            b"</lastmod><changefreq>daily</changefreq><priority>0.5</priority></url>\n"
        )
        + URLSET_CLOSE
    )
    assert validate_file(write(tmp_path / "s.xml", data)) == 1


def test_valid_index(tmp_path: Path) -> None:
    data = (
        SITEMAPINDEX_OPEN
        + (
            b"<sitemap><loc>https://example.com/sitemap-00001.xml.gz</loc>"
            b"<lastmod>2024-05-01</lastmod></sitemap>\n"
            b"<sitemap><loc>https://example.com/sitemap-00002.xml.gz</loc></sitemap>\n"
        )
        + SITEMAPINDEX_CLOSE
    )
    assert validate_file(write(tmp_path / "sitemap_index.xml", data)) == 2


def test_exactly_the_limits_are_fine(tmp_path: Path) -> None:
    assert validate_file(write(tmp_path / "s.xml.gz", urlset(MAX_CHILDREN))) == MAX_CHILDREN


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (
            URLSET_OPEN
            + b"<url><loc>https://example.com/</loc><lastmod>2024</lastmod></url>\n"
            + URLSET_CLOSE,
            "lastmod",
        ),
        (URLSET_OPEN + b"<url><lastmod>2024-05-01</lastmod></url>\n" + URLSET_CLOSE, "loc"),
        (
            URLSET_OPEN
            + b"<url><loc>https://example.com/</loc><priority>1.5</priority></url>\n"
            + URLSET_CLOSE,
            "priority",
        ),
        (
            URLSET_OPEN + b"<url><loc>https://example.com/</loc><changefreq>often</changefreq>"
            b"</url>\n" + URLSET_CLOSE,
            "changefreq",
        ),
        (URLSET_OPEN + b"<url><loc>https://example.com/%zz</loc></url>\n" + URLSET_CLOSE, "loc"),
        (URLSET_OPEN + URLSET_CLOSE, "url"),  # a sitemap lists at least one URL
        (URLSET_OPEN + b"<url><loc>https://example.com/</loc>", "Premature end"),  # truncated
        (urlset(1).replace(b"0.9", b"0.8"), "namespace"),
        (urlset(1).replace(b'xmlns="http://', b'xmlns="https://'), "namespace"),
        (urlset(1).replace(b' xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"', b""), "namespace"),
        (b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"/>', "feed"),
        (b"", "readable"),
        (b"not xml at all", "readable"),
        (
            SITEMAPINDEX_OPEN + b"<sitemap><lastmod>2024-05-01</lastmod></sitemap>\n" + SITEMAPINDEX_CLOSE,
            "loc",
        ),
        (SITEMAPINDEX_OPEN + b"<url><loc>https://example.com/</loc></url>\n" + SITEMAPINDEX_CLOSE, "url"),
    ],
)
@pytest.mark.parametrize("name", ["bad.xml", "bad.xml.gz"])
@pytest.mark.parametrize("whole", [True, False], ids=["tree", "streamed"])
def test_invalid_files(tmp_path: Path, data: bytes, problem: str, name: str, whole: bool) -> None:
    path = write(tmp_path / name, data)
    with pytest.raises(SitemapValidationError, match=problem) as caught:
        validate_file(path, whole=whole)
    assert str(path) in str(caught.value)


def test_too_many_urls(tmp_path: Path) -> None:
    with pytest.raises(SitemapValidationError, match="more than 50000 <url>"):
        validate_file(write(tmp_path / "s.xml.gz", urlset(MAX_CHILDREN + 1)))


def test_too_many_sitemaps_in_an_index(tmp_path: Path) -> None:
    entry = b"<sitemap><loc>https://example.com/s.xml</loc></sitemap>\n"
    data = SITEMAPINDEX_OPEN + entry * (MAX_CHILDREN + 1) + SITEMAPINDEX_CLOSE
    with pytest.raises(SitemapValidationError, match="more than 50000 <sitemap>"):
        validate_file(write(tmp_path / "i.xml.gz", data))


@pytest.mark.parametrize("name", ["big.xml", "big.xml.gz"])
def test_too_many_bytes(tmp_path: Path, name: str) -> None:
    # Few URLs but long ones: only the byte limit is crossed.
    loc = b"<url><loc>https://example.com/" + b"a" * 2000 + b"%d</loc></url>\n"
    count = MAX_UNCOMPRESSED_BYTES // len(loc) + 1
    data = URLSET_OPEN + b"".join(loc % i for i in range(count)) + URLSET_CLOSE
    assert count < MAX_CHILDREN
    with pytest.raises(SitemapValidationError, match="52428800 uncompressed bytes"):
        validate_file(write(tmp_path / name, data))


@pytest.mark.parametrize("cut", [2, 10, 100])  # 1 would only drop the final newline
def test_truncated_files_are_invalid(tmp_path: Path, cut: int) -> None:
    # lxml with schema= and resolve_entities=False once accepted a truncated document.
    path = write(tmp_path / "s.xml", urlset(20)[:-cut])
    with pytest.raises(SitemapValidationError):
        validate_file(path)


def test_corrupt_gzip(tmp_path: Path) -> None:
    path = tmp_path / "s.xml.gz"
    path.write_bytes(gzip.compress(urlset(100))[:-20])
    with pytest.raises(SitemapValidationError, match=str(path)):
        validate_file(path)


def test_memory_stays_small_on_a_50_mib_file(tmp_path: Path) -> None:
    # In a fresh process, so the peak RSS reflects this validation alone.
    script = textwrap.dedent(
        """
        import resource, sys
        from pathlib import Path
        from sitemap_spider.sitemaps.xml.validate import validate_file
        from sitemap_spider.sitemaps.xml.elements import URLSET_CLOSE, URLSET_OPEN
        path = Path(sys.argv[1])
        line = b"<url><loc>https://example.com/%05d" + b"a" * 1000 + b"</loc></url>\\n"
        with open(path, "wb") as out:
            out.write(URLSET_OPEN)
            for i in range(50_000):
                out.write(line % i)
            out.write(URLSET_CLOSE)
        assert path.stat().st_size > 50_000_000
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert validate_file(path) == 50_000
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print((after - before) // 1024)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "big.xml")],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    growth_mib = int(done.stdout)
    assert growth_mib < 20, f"validation of a 50 MiB file grew RSS by {growth_mib} MiB"


def test_schemas_load_from_a_zipped_package(tmp_path: Path) -> None:
    # Under Scrapyd the project is a zipped egg: package files have no filesystem path.
    archive = tmp_path / "project.egg"
    package = PROJECT_ROOT / "sitemap_spider"
    with zipfile.ZipFile(archive, "w") as egg:
        for path in package.rglob("*"):
            if path.is_file() and path.suffix in {".py", ".xsd", ".typed"}:
                egg.write(path, path.relative_to(PROJECT_ROOT))
    sitemap = write(tmp_path / "s.xml", urlset(2))
    script = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, sys.argv[1])
        from sitemap_spider.sitemaps.xml import validate
        assert validate.__file__.startswith(sys.argv[1]), validate.__file__
        print(validate.validate_file(__import__("pathlib").Path(sys.argv[2])))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(archive), str(sitemap)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "2"


def test_a_document_in_memory() -> None:
    from sitemap_spider.sitemaps.xml.validate import validate_document

    assert validate_document(urlset(3), "s.xml") == 3
    # Comments, processing instructions and blank text are no children.
    data = URLSET_OPEN + b"<!-- c -->\n  <?pi x?>" + (URL % 1) + b"\n\n" + (URL % 2) + b"<!-- d -->" + URLSET_CLOSE
    assert validate_document(data, "s.xml") == 2
    with pytest.raises(SitemapValidationError, match=r"s\.xml: sitemap\.xsd: .*loc"):
        validate_document(URLSET_OPEN + b"<url><loc>bad</loc></url>" + URLSET_CLOSE, "s.xml")
    with pytest.raises(SitemapValidationError, match="more than 50000"):
        validate_document(urlset(MAX_CHILDREN + 1), "s.xml")
    with pytest.raises(SitemapValidationError, match="s.xml"):
        validate_document(URLSET_OPEN + (URL % 1), "s.xml")  # cut short
    with pytest.raises(SitemapValidationError, match="s.xml"):
        validate_document(URLSET_OPEN + b"text" + (URL % 1) + URLSET_CLOSE, "s.xml")
