"""sitemap_spider/checking/local.py: an index and its sitemaps read from disk (#25)."""

from __future__ import annotations

from pathlib import Path

from sitemap_spider.checking.local import validate_paths
from sitemap_spider.checking.report import exit_code
from sitemap_spider.checking.session import Session

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def urlset(*locs: str) -> str:
    return f"<urlset {NS}>" + "".join(f"<url><loc>{loc}</loc></url>" for loc in locs) + "</urlset>"


def index(*locs: str) -> str:
    return f"<sitemapindex {NS}>" + "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs) + "</sitemapindex>"


def run(paths: list[Path], base_url: str | None = None) -> Session:
    session = Session()
    validate_paths(session, [str(path) for path in paths], base_url)
    session.resolve_cross_submission(None)
    return session


def test_an_index_s_sitemaps_have_no_location_without_base_url(tmp_path: Path) -> None:
    """The URL an index gives its sitemaps is not where a local copy is served (#25: a copy of a
    site whose index lists https://example.com/sitemaps/... gave an error for every URL)."""
    (tmp_path / "index.xml").write_text(index("https://example.com/sitemaps/posts.xml"))
    (tmp_path / "sitemaps").mkdir()
    (tmp_path / "sitemaps" / "posts.xml").write_text(urlset("https://www.example.com/a", "https://www.example.com/b"))
    session = run([tmp_path / "index.xml"])
    assert [d.location for d in session.documents] == [None, None]
    assert session.log.by_rule == {}
    assert exit_code(session) == 0
    # Where it is served is known with --base-url: then the rule applies.
    session = run([tmp_path / "index.xml"], base_url="https://example.com/")
    assert session.log.by_rule == {"loc.cross_submission": 2}


def test_sitemaps_of_the_same_name_in_folders(tmp_path: Path) -> None:
    """Hugo's multilingual sites list en/sitemap.xml and fr/sitemap.xml from /sitemap.xml."""
    (tmp_path / "sitemap.xml").write_text(index("https://www.example.com/en/sitemap.xml", "https://www.example.com/fr/sitemap.xml"))
    for language in ("en", "fr"):
        (tmp_path / language).mkdir()
        (tmp_path / language / "sitemap.xml").write_text(urlset(f"https://www.example.com/{language}/"))
    session = run([tmp_path / "sitemap.xml"])
    assert session.log.by_rule == {}  # no index.loop: the index did not list itself
    assert [Path(d.name).relative_to(tmp_path).as_posix() for d in session.documents] == [
        "sitemap.xml",
        "en/sitemap.xml",
        "fr/sitemap.xml",
    ]


def test_a_flat_copy_is_read_by_file_name(tmp_path: Path) -> None:
    (tmp_path / "index.xml").write_text(index("https://www.example.com/sitemaps/deep/posts.xml"))
    (tmp_path / "posts.xml").write_text(urlset("https://www.example.com/a"))
    session = run([tmp_path / "index.xml"])
    assert [Path(d.name).name for d in session.documents] == ["index.xml", "posts.xml"]
