"""The corpus of tests/data/validate: each broken file gives exactly its finding, each valid file none.

The checks (sitemap_spider/checking/) run in this process on local files; the command and URL
inputs are tested in test_validate_command.py. Hostile files (XXE, billion laughs, a gzip bomb,
a huge line) must end with their finding; tests/data/validate/make_corpus.py says how each was made.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sitemap_spider.checking.findings import AUDIT_RULES, VALIDATE_RULES
from sitemap_spider.checking.local import validate_paths
from sitemap_spider.checking.report import exit_code, rules_table
from sitemap_spider.checking.session import Session

DATA = Path(__file__).parent / "data" / "validate"
BROKEN = DATA / "broken"
WILD = Path(__file__).parent / "data" / "wild"

# inputs (relative to BROKEN) -> exactly the findings (rule, file name, line), and the exit code
CORPUS: dict[str, tuple[list[tuple[str, str, int | None]], int]] = {
    "xml.not_well_formed.xml": ([("xml.not_well_formed", "xml.not_well_formed.xml", 3)], 1),
    "xml.not_well_formed-huge_text.xml.gz": (
        [("xml.not_well_formed", "xml.not_well_formed-huge_text.xml.gz", 3)],
        1,
    ),
    "xml.not_well_formed-deep.xml": ([("xml.not_well_formed", "xml.not_well_formed-deep.xml", 3)], 1),
    "xml.dtd-xxe.xml": ([("xml.dtd", "xml.dtd-xxe.xml", 2)], 2),
    "xml.dtd-behind_long_comment.xml": (
        [("xml.not_well_formed", "xml.dtd-behind_long_comment.xml", 2)],
        2,
    ),
    "xml.dtd-billion_laughs.xml": ([("xml.dtd", "xml.dtd-billion_laughs.xml", 2)], 2),
    "xml.encoding.xml": ([("xml.encoding", "xml.encoding.xml", 1)], 1),
    "xml.root.xml": ([("xml.root", "xml.root.xml", 2)], 2),
    "xml.root-html.xml": ([("xml.root", "xml.root-html.xml", 1)], 2),
    "xml.namespace.xml": ([("xml.namespace", "xml.namespace.xml", 2)], 1),
    "xsd.xml": ([("xsd", "xsd.xml", 4)], 1),
    "xsd.unknown_extension.xml": ([("xsd.unknown_extension", "xsd.unknown_extension.xml", 3)], 0),
    "file.empty.xml": ([("file.empty", "file.empty.xml", 2)], 1),
    "loc.not_absolute.xml": ([("loc.not_absolute", "loc.not_absolute.xml", 3)], 1),
    "loc.scheme.xml": ([("loc.scheme", "loc.scheme.xml", 3)], 1),
    "loc.too_long.xml": ([("loc.too_long", "loc.too_long.xml", 3)], 1),
    "loc.not_encoded.xml": ([("loc.not_encoded", "loc.not_encoded.xml", 3)], 1),
    "loc.invalid.xml": ([("loc.invalid", "loc.invalid.xml", 3)], 1),
    "loc.double_escaped.xml": ([("loc.double_escaped", "loc.double_escaped.xml", 3)], 0),
    "loc.fragment.xml": ([("loc.fragment", "loc.fragment.xml", 3)], 0),
    "lastmod.format.xml": ([("lastmod.format", "lastmod.format.xml", 3)], 1),
    "lastmod.timezone.xml": ([("lastmod.timezone", "lastmod.timezone.xml", 3)], 1),
    "lastmod.future.xml": ([("lastmod.future", "lastmod.future.xml", 3)], 0),
    "lastmod.placeholder.xml": ([("lastmod.placeholder", "lastmod.placeholder.xml", 3)], 0),
    "changefreq.invalid.xml": ([("changefreq.invalid", "changefreq.invalid.xml", 3)], 1),
    "priority.invalid.xml": ([("priority.invalid", "priority.invalid.xml", 3)], 1),
    "duplicate.in_file.xml": ([("duplicate.in_file", "duplicate.in_file.xml", 5)], 0),
    "link.ignored.xml": ([("link.ignored", "link.ignored.xml", 3)], 0),
    "link.hreflang.xml": ([("link.hreflang", "link.hreflang.xml", 3)], 0),
    "link.not_absolute.xml": ([("link.not_absolute", "link.not_absolute.xml", 3)], 0),
    "link.href.xml": ([("link.href", "link.href.xml", 3)], 0),
    "file.binary.png": ([("file.binary", "file.binary.png", None)], 2),
    "duplicate.across_files/a.xml duplicate.across_files/b.xml": (
        [("duplicate.across_files", "b.xml", 4)],
        0,
    ),
    "text.line_too_long.txt.gz": ([("text.line_too_long", "text.line_too_long.txt.gz", 2)], 1),
    "text.encoding.txt": ([("text.encoding", "text.encoding.txt", 2)], 1),
    "read.gzip.xml.gz": ([("read.gzip", "read.gzip.xml.gz", None)], 2),
    "limits.bytes-gzip_bomb.xml.gz": ([("limits.bytes", "limits.bytes-gzip_bomb.xml.gz", None)], 1),
    "limits.urls.xml.gz": ([("limits.urls", "limits.urls.xml.gz", 50_003)], 1),
    "limits.sitemaps.xml.gz": (
        [
            ("limits.sitemaps", "limits.sitemaps.xml.gz", 50_003),
            ("index.child_not_local", "limits.sitemaps.xml.gz", 3),
        ],
        1,
    ),
    "index.nested/index.xml": ([("index.nested", "index.xml", 3)], 1),
    "index.loop/index.xml": ([("index.loop", "index.xml", 4)], 1),
    "index.duplicate/index.xml": ([("index.duplicate", "index.xml", 4)], 0),
    "index.child_not_local/index.xml": ([("index.child_not_local", "index.xml", 4)], 0),
    "no-such-file.xml": ([("read.missing", "no-such-file.xml", None)], 2),
}


def run(inputs: list[str], base_url: str | None = None, max_depth: int = 3) -> Session:
    session = Session(max_depth=max_depth)
    validate_paths(session, inputs, base_url)
    session.resolve_cross_submission(None)
    return session


def found(session: Session) -> list[tuple[str, str, int | None]]:
    return sorted(
        ((f.rule, Path(f.file).name, f.line) for f in session.log.listed),
        key=lambda f: (f[0], f[1], f[2] or 0),
    )


@pytest.mark.parametrize("inputs", sorted(CORPUS))
def test_broken_file_gives_exactly_its_finding(inputs: str) -> None:
    expected, code = CORPUS[inputs]
    session = run([str(BROKEN / name) for name in inputs.split()])
    assert found(session) == sorted(expected, key=lambda f: (f[0], f[1], f[2] or 0))
    assert exit_code(session) == code


def test_every_rule_of_a_local_file_has_a_corpus_file() -> None:
    covered = {rule for findings, _ in CORPUS.values() for rule, _, _ in findings}
    covered |= {"loc.cross_submission", "index.depth"}  # tested below, with options
    covered |= {"limits.entry"}  # test_validate_hostile.py: a <url> of 500,000 images
    over_http = {
        "read.fetch",
        "read.redirects",
        "read.robots",
        "robots.no_sitemap",
    }  # test_validate_command.py
    assert set(VALIDATE_RULES) - covered == over_http


def test_cross_submission_needs_the_location() -> None:
    path = str(BROKEN / "loc.cross_submission.xml")
    assert found(run([path])) == []  # where the file is served is unknown: no scope to check
    session = run([path], base_url="https://www.example.com/catalog/")
    assert found(session) == [
        ("loc.cross_submission", "loc.cross_submission.xml", 4),
        ("loc.cross_submission", "loc.cross_submission.xml", 5),
    ]
    assert all("(not checked)" in f.detail for f in session.log.listed)
    assert exit_code(session) == 1


def test_depth_limit() -> None:
    session = run([str(BROKEN / "index.nested" / "index.xml")], max_depth=1)
    assert found(session) == [("index.depth", "inner.xml", 3), ("index.nested", "index.xml", 3)]
    assert [d.kind for d in session.documents] == ["sitemapindex", "sitemapindex"]


def test_valid_files_have_no_finding() -> None:
    valid = DATA / "valid"
    for inputs in (["extensions.xml"], ["urls.txt"], ["set/sitemap_index.xml"]):
        session = run([str(valid / name) for name in inputs])
        assert found(session) == [], inputs
        assert exit_code(session) == 0
    session = run([str(valid / "set" / "sitemap_index.xml")])
    assert [(Path(d.name).name, d.kind, d.entries) for d in session.documents] == [
        ("sitemap_index.xml", "sitemapindex", 2),
        ("sitemap-1.xml.gz", "urlset", 1),
        ("sitemap-2.xml", "urlset", 1),
    ]
    text = run([str(valid / "urls.txt")]).documents[0]
    assert (text.kind, text.entries) == ("text", 3)


def test_the_gzip_bomb_stops_at_50_mib() -> None:
    session = run([str(BROKEN / "limits.bytes-gzip_bomb.xml.gz")])
    assert session.documents[0].bytes == 52_428_800  # read up to the limit, not one block more


WILD_FINDINGS = {
    "hugo-00derek-blog.xml": [],
    "nextjs-coding-global-web.xml": [],
    "yoast-6annonce-index.xml": [("loc.not_absolute", 4)],
    "yoast-adcert-post-sitemap.xml": [
        ("loc.not_absolute", 4),
        ("loc.not_absolute", 8),
        ("loc.not_absolute", 12),
    ],
    "empty-index-4what.xml": [("file.empty", 5)],  # libxml2 gives the line where the start tag ends
}


@pytest.mark.parametrize("name", sorted(WILD_FINDINGS))
def test_sitemaps_from_the_wild(name: str) -> None:
    session = run([str(WILD / name)])
    assert session.documents[0].kind in ("urlset", "sitemapindex")
    assert [(f.rule, f.line) for f in session.log.listed] == WILD_FINDINGS[name]


def test_manual_rules_table_is_up_to_date() -> None:
    page = (Path(__file__).parent.parent / "docs" / "validate.md").read_text(encoding="utf-8")
    assert rules_table() in page


def test_manual_audit_rules_table_is_up_to_date() -> None:
    page = (Path(__file__).parent.parent / "docs" / "audit.md").read_text(encoding="utf-8")
    assert rules_table(AUDIT_RULES) in page
