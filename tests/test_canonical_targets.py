"""A page whose canonical URL cannot be listed is listed itself (crawl/canonicals.py).

rel=canonical is a hint: a search engine ignores one that names a URL it cannot index and
indexes the page. Each page of the site below names another URL; the crawl lists it unless that
URL (or where its chain of canonicals and redirects leads) is listed, in every crawl mode, and a
recrawl answered with 304s decides the same. A page was left out as soon as it named another URL:
a loop of canonicals, a canonical that redirects back, or one to a 404 lost the page.
"""

from __future__ import annotations

import re
import sqlite3
import ssl
import subprocess
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sitemap_spider.crawl.canonicals import LOOP, NOT_LISTED, listed_candidates, redirect_moves
from sitemap_spider.history.record import RENDER_UNDECIDED
from sitemap_spider.history.store import HistoryStore
from tests.crawl_fixtures import REPO_ROOT, CrawlResult, crawl_command, run_crawl
from tests.site_server import SiteServer, html_page, links
from tests.site_spec import Route
from tests.sitemap_check import read_sitemap_set

HTML = (("Content-Type", "text/html; charset=utf-8"),)
ROBOTS = Route(headers=(("Content-Type", "text/plain"),), body=b"User-agent: *\nDisallow: /private/\n")
OFFSITE = "http://elsewhere.example/page"
#: A page each, which names the canonical URL given (None: none).
CANONICALS = {
    "/cn-a": "/cn-b",  # a loop of canonicals: /cn-a is listed, the first in URL order
    "/cn-b": "/cn-a",
    "/cn-trailing": "/cn-trailing/",  # which redirects back here
    "/cn-robots": "/private/page",  # disallowed by robots.txt
    "/canon-404": "/missing",
    "/canon-noindex": "/noindexed",
    "/canon-ok": "/target",  # listed: left out, as before
    "/chain1": "/chain2",  # a chain to a listed page: both left out
    "/chain2": "/chain3",
    "/chain3": "/chain3",
    "/c1": "/c2",  # a chain to a 404: /c2 is listed, /c1 leads to it
    "/c2": "/gone",
    "/canon-redirect": "/old",  # which redirects to /target, listed
    "/canon-offsite": OFFSITE,  # another site's: believed, left out
    "/target": None,
    "/noindexed": None,
}
#: Pages before the hub that links to the cases: with two processes, the second one starts after 32
#: responses, and the cases and their targets are shared between the two.
FILLERS = [f"/f/{n}" for n in range(40)]
LISTED = {"/", "/hub", *FILLERS, "/cn-a", "/cn-trailing", "/cn-robots", "/canon-404", "/canon-noindex",
          "/target", "/chain3", "/c2", "/hdr-404", "/canon-scheme"}  # fmt: skip
LEFT_OUT = {"/cn-b": "/cn-a", "/canon-ok": "/target", "/chain1": "/chain2", "/chain2": "/chain3",
            "/c1": "/c2", "/canon-redirect": "/old", "/canon-offsite": OFFSITE}  # fmt: skip
#: The pages listed although they name another URL: the URL named, and why.
UNLISTABLE = {"/cn-a": ("/cn-b", LOOP), "/cn-trailing": ("/cn-trailing/", LOOP),
              "/cn-robots": ("/private/page", NOT_LISTED), "/canon-404": ("/missing", NOT_LISTED),
              "/canon-noindex": ("/noindexed", NOT_LISTED), "/c2": ("/gone", NOT_LISTED),
              "/hdr-404": ("/nowhere", NOT_LISTED)}  # fmt: skip


def _page(path: str, head: str = "", body: str = "", headers: tuple[tuple[str, str], ...] = ()) -> Route:
    text = f"<p>This page is about {path}, and nothing else.</p>{body}"  # pages alike would be duplicates
    return Route(headers=(*HTML, *headers), body=html_page(path, text, head))


def site_routes(origin: str, other_scheme: str) -> dict[str, Route]:
    """The site on ``origin``; ``other_scheme``: its origin under the other scheme (never fetched)."""
    routes = {
        "/robots.txt": ROBOTS,
        "/": _page("/", body=links(*FILLERS)),
        **{path: _page(path, body=links("/hub") if path == FILLERS[-1] else "") for path in FILLERS},
        "/hub": _page("/hub", body=links(*CANONICALS, "/hdr-404", "/canon-scheme")),
        "/cn-trailing/": Route(status=301, headers=(("Location", "/cn-trailing"),)),
        "/old": Route(status=301, headers=(("Location", "/target"),)),
        "/private/page": _page("/private/page"),
        "/hdr-404": _page("/hdr-404", headers=(("Link", '</nowhere>; rel="canonical"'),)),
        # Its own URL under the other scheme: itself, as on a site moved to https.
        "/canon-scheme": _page("/canon-scheme", f'<link rel="canonical" href="{other_scheme}/canon-scheme">'),
    }
    for path, canonical in CANONICALS.items():
        head = "" if canonical is None else f'<link rel="canonical" href="{canonical}">'
        if path == "/noindexed":
            head = '<meta name="robots" content="noindex">'
        routes[path] = _page(path, head)
    return routes


def _listed(result: CrawlResult, origin: str) -> set[str]:
    assert result.returncode == 0, result.describe()
    return {url["loc"][len(origin) :] for url in read_sitemap_set(result.output_dir, origin + "/")}


def _left_out(report: dict[str, Any], origin: str) -> dict[str, str]:
    return {
        row["url"][len(origin) :]: row["detail"].removeprefix("names ").removeprefix(origin)
        for row in report["excluded_urls"]
        if row["reason"] == "canonical"
    }


def _unlistable(report: dict[str, Any], origin: str) -> dict[str, tuple[str, str]]:
    found = {}
    for row in report["extension_problems"]:
        if (row["kind"], row["reason"]) == ("canonical", "target_unlistable"):
            target, _, why = row["detail"].partition(" ")
            found[row["page"][len(origin) :]] = (target.removeprefix(origin), why)
    return found


def _check(result: CrawlResult, origin: str) -> None:
    assert _listed(result, origin) == LISTED
    report = result.report
    assert report is not None
    assert _left_out(report, origin) == LEFT_OUT
    assert _unlistable(report, origin) == UNLISTABLE
    stats = report["stats"]
    assert stats["sitemap/canonical/target_unlistable"] == len(UNLISTABLE)
    assert stats["sitemap/excluded/canonical"] == len(LEFT_OUT)
    assert stats["sitemap/entries"] == len(LISTED)


MODES = {
    "one": {"SITEMAP_WORKERS": "1"},
    "two": {"SITEMAP_WORKERS": "2", "SITEMAP_WORKERS_AFTER": "0"},
    "jobdir": {},
    "redis": {"SITEMAP_REDIS_IDLE_SECONDS": "0.5"},
}


@pytest.mark.parametrize("mode", list(MODES))
def test_a_page_is_left_out_only_when_its_canonical_url_is_listed(
    mode: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    settings = dict(MODES[mode])
    if mode == "jobdir":
        settings["JOBDIR"] = str(tmp_path / "job")
    if mode == "redis":
        settings["SITEMAP_REDIS_URL"] = request.getfixturevalue("redis_url")
    with SiteServer() as server:
        server.routes = site_routes(server.origin, f"https://127.0.0.1:{server.port + 1}")
        result = run_crawl(server.origin + "/", tmp_path, "-a", "render=never", settings=settings)
        targets = server.targets()
    _check(result, server.origin)
    assert result.stats["sitemap/canonical/other_scheme"] == 1
    assert "/private/page" not in targets
    if mode == "two":
        assert result.stats["sitemap/workers"] == 2, "the second process never started"


def test_a_crawl_that_publishes_nothing_decides_the_same(tmp_path: Path) -> None:
    """SITEMAP_PUBLISH=False (scrapy audit's crawl, modes/collecting.py) settles the candidates as a
    publishing crawl does: its report leaves out and lists the same pages."""
    with SiteServer() as server:
        server.routes = site_routes(server.origin, f"https://127.0.0.1:{server.port + 1}")
        settings = {"SITEMAP_PUBLISH": "False"}
        result = run_crawl(server.origin + "/", tmp_path, "-a", "render=never", settings=settings)
    assert result.returncode == 0, result.describe()
    report = result.report
    assert report is not None
    assert _left_out(report, server.origin) == LEFT_OUT
    assert _unlistable(report, server.origin) == UNLISTABLE
    assert report["stats"]["sitemap/collected"] == len(LISTED)


@pytest.mark.parametrize("mode", ["one", "two"])
def test_without_a_report_the_redirects_are_followed_too(mode: str, tmp_path: Path) -> None:
    """SITEMAP_REPORT is not set by default: a one-process crawl (or a leader) has then no spool of
    exclusions, and the redirects the chains follow were not known: /canon-redirect, whose canonical
    URL redirects to /target, listed, was listed too."""
    with SiteServer() as server:
        server.routes = site_routes(server.origin, f"https://127.0.0.1:{server.port + 1}")
        args = crawl_command(server.origin + "/", tmp_path, "-a", "render=never", settings=MODES[mode])
        report = args.index(f"SITEMAP_REPORT={tmp_path / 'report.json'}")
        del args[report - 1 : report + 1]
        proc = subprocess.run(args, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    listed = read_sitemap_set(tmp_path / "sitemaps", server.origin + "/")
    assert {url["loc"][len(server.origin) :] for url in listed} == LISTED


def test_a_recrawl_answered_with_304s_decides_the_same(tmp_path: Path) -> None:
    with SiteServer() as server:
        server.validators = True
        server.routes = site_routes(server.origin, f"https://127.0.0.1:{server.port + 1}")
        first = run_crawl(server.origin + "/", tmp_path, "-a", "render=never")
        _check(first, server.origin)
        server.clear()
        second = run_crawl(server.origin + "/", tmp_path, "-a", "render=never")
        asked = {r.target: r.headers for r in server.requests}
    _check(second, server.origin)
    assert second.files() == first.files()
    # Listed or not, every page that names another URL was asked for conditionally, and answered 304.
    for path in (*UNLISTABLE, *LEFT_OUT):
        assert any(name.lower() == "if-none-match" for name, _ in asked[path]), path
    assert second.stats["sitemap/history/not_modified"] >= len(UNLISTABLE) + len(LEFT_OUT)


def test_a_history_of_the_earlier_version_judges_such_pages_again(tmp_path: Path) -> None:
    """The earlier version recorded every page naming another URL as left out ('canonical'): a 304 of
    one would leave it out again for good. Such a page is fetched whole once, and judged anew."""
    with SiteServer() as server:
        server.validators = True
        server.routes = site_routes(server.origin, f"https://127.0.0.1:{server.port + 1}")
        first = run_crawl(server.origin + "/", tmp_path, "-a", "render=never")
        _check(first, server.origin)
        with closing(sqlite3.connect(tmp_path / "history.sqlite")) as db, db:
            # The records as that version wrote them, in a file without the canonical column.
            db.execute(
                "UPDATE pages SET loc = '', fingerprint = NULL, lastmod = NULL, content_digest = NULL,"
                " extensions = NULL, changed_at = NULL,"
                " excluded = 'canonical' || char(9) || 'names ' || canonical"
                " WHERE canonical IS NOT NULL"
            )
            db.execute("ALTER TABLE pages DROP COLUMN canonical")
        server.clear()
        second = run_crawl(server.origin + "/", tmp_path, "-a", "render=never")
        asked = {r.target: r.headers for r in server.requests}
    _check(second, server.origin)
    assert second.files() == first.files()
    for path in UNLISTABLE:
        assert not any(name.lower() == "if-none-match" for name, _ in asked[path]), path


#: The pages table of the history file as earlier releases created it: before the render column
#: (524b2db), and with it, before the canonical column (37ad5b1).
_EARLIER_TABLE = (
    "CREATE TABLE pages (url TEXT PRIMARY KEY, loc TEXT NOT NULL, fingerprint TEXT, last_modified TEXT,"
    " etag TEXT, first_seen REAL NOT NULL, changed_at REAL, lastmod TEXT, status INTEGER NOT NULL,"
    " last_ok REAL NOT NULL, outlinks BLOB, content_digest TEXT, outcome TEXT, extensions TEXT,"
    " excluded TEXT{})"
    " WITHOUT ROWID"
)
EARLIER_LAYOUTS = {"no render, no canonical": "", "render, no canonical": ", render TEXT"}


def _write_as_an_earlier_release(history: Path, render_column: str) -> None:
    """Replace the file ``history`` with one of an earlier release's layout holding the same records,
    as that release wrote them: a page naming another URL as canonical was left out for it."""
    earlier = history.with_name("earlier.sqlite")
    with closing(sqlite3.connect(earlier)) as db, db:
        db.execute(_EARLIER_TABLE.format(render_column))
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        db.execute("ATTACH DATABASE ? AS now", (str(history),))
        columns = [row[1] for row in db.execute("PRAGMA main.table_info(pages)")]
        db.execute(f"INSERT INTO main.pages SELECT {', '.join(columns)} FROM now.pages")
        db.execute("INSERT INTO main.meta SELECT * FROM now.meta")
        if render_column:  # as a crawl that could render, and decided from the static HTML, wrote them
            db.execute("UPDATE main.pages SET render = NULL")
        db.execute(
            "UPDATE main.pages SET loc = '', fingerprint = NULL, lastmod = NULL, content_digest = NULL,"
            " extensions = NULL, changed_at = NULL, excluded = 'canonical' || char(9) || 'names ' || ("
            "SELECT canonical FROM now.pages AS p WHERE p.url = main.pages.url)"
            " WHERE url IN (SELECT url FROM now.pages WHERE canonical IS NOT NULL)"
        )
    for suffix in ("", "-wal", "-shm"):
        history.with_name(history.name + suffix).unlink(missing_ok=True)
    earlier.rename(history)


@pytest.mark.parametrize("layout", list(EARLIER_LAYOUTS))
def test_a_history_file_of_an_earlier_layout_opens_and_recrawls(layout: str, tmp_path: Path) -> None:
    """A history written before the canonical column, with or without the render column, gains the
    columns it lacks (render not known without one; no canonical URL): its pages left out for a
    canonical are fetched whole once and judged anew, the others answer 304, and the next crawl asks
    every page for a 304."""
    history = tmp_path / "history.sqlite"
    with SiteServer() as server:
        server.validators = True
        server.routes = site_routes(server.origin, f"https://127.0.0.1:{server.port + 1}")
        first = run_crawl(server.origin + "/", tmp_path, "-a", "render=never")
        _check(first, server.origin)
        _write_as_an_earlier_release(history, EARLIER_LAYOUTS[layout])
        store = HistoryStore(history)
        try:
            records = {record.url: record for record in store.records()}
        finally:
            store.close()
        assert all(record.canonical is None for record in records.values())
        # The render decision is the record's, or not known without the column.
        renders = {record.render for record in records.values()}
        assert renders == ({None} if layout.startswith("render") else {RENDER_UNDECIDED})
        with closing(sqlite3.connect(history)) as db:
            assert [row[1] for row in db.execute("PRAGMA table_info(pages)")][-2:] == ["render", "canonical"]
        server.clear()
        second = run_crawl(server.origin + "/", tmp_path, "-a", "render=never")
        asked_second = {r.target: r.headers for r in server.requests}
        server.clear()
        third = run_crawl(server.origin + "/", tmp_path, "-a", "render=never")
        asked_third = {r.target: r.headers for r in server.requests}
    for result, asked, whole in (
        (second, asked_second, {*UNLISTABLE, *LEFT_OUT}),
        (third, asked_third, set()),
    ):
        _check(result, server.origin)
        assert result.files() == first.files()
        for path in (*UNLISTABLE, *LEFT_OUT, "/target", "/hub", *FILLERS[:3]):
            conditional = any(name.lower() == "if-none-match" for name, _ in asked[path])
            assert conditional == (path not in whole), (path, asked[path])


def _certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (PEM files); the crawl does not verify it."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.now(UTC)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=1)).sign(key, hashes.SHA256())
    )  # fmt: skip
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


@pytest.fixture
def https_server(tmp_path: Path) -> Iterator[SiteServer]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*_certificate(tmp_path))
    server = SiteServer()
    server.socket = context.wrap_socket(server.socket, server_side=True)
    with server:
        yield server


def test_an_https_site_whose_canonicals_name_its_http_urls_is_listed(
    https_server: SiteServer, tmp_path: Path
) -> None:
    """A site moved to https whose pages still name their http URLs, which redirect back to them:
    each names itself. Every page was left out, and nothing was published. The http origin is
    never asked."""
    origin = f"https://127.0.0.1:{https_server.port}"
    with SiteServer() as http:
        http.dynamic = [(re.compile(".*"), lambda r: Route(301, (("Location", origin + r.target),)))]
        pages = ("/", "/a", "/b/", "/c")
        https_server.routes = {"/robots.txt": ROBOTS}
        for path in pages:
            head = f'<link rel="canonical" href="{http.origin}{path}">'
            https_server.routes[path] = _page(path, head, links(*pages))
        result = run_crawl(origin + "/", tmp_path / "crawl", "-a", "render=never")
        assert not http.requests
    assert _listed(result, origin) == set(pages)
    assert result.stats["sitemap/canonical/other_scheme"] == len(pages)


def test_the_chain_from_each_candidate_decides_which_is_listed() -> None:
    names = {"a": "b", "b": "a", "c": "d", "d": "x", "e": "f", "f": "e", "g": "r1", "h": "listed", "i": "h",
             "j": "r2", "k": "j"}  # fmt: skip
    moves = {"r1": "g", "r2": "r3", "r3": "r2"}  # g's target redirects back; r2 and r3 redirect in a loop
    chosen = listed_candidates(names, {"listed"}, moves, str)
    assert chosen == {"a": LOOP, "d": NOT_LISTED, "e": LOOP, "g": LOOP, "j": NOT_LISTED}
    # A candidate that is also listed for itself is none; a chain that reaches it stops there.
    assert listed_candidates({"a": "b", "b": "c"}, {"b"}, {}, str) == {}


def test_candidates_whose_chains_meet_past_the_last_candidate_are_each_listed() -> None:
    """Two pages name one URL that redirects to a URL that cannot be listed (or into a loop of
    redirects): neither chain reaches a page listed, so each page is listed. The second was left
    out, its chain meeting the first's redirects, marked decided."""
    both = {"a": NOT_LISTED, "b": NOT_LISTED}
    assert listed_candidates({"a": "old", "b": "old"}, set(), {"old": "404"}, str) == both
    assert listed_candidates({"a": "r1", "b": "r2"}, set(), {"r1": "r2", "r2": "r1"}, str) == both
    # Past the last candidate only: a page whose chain leads to a candidate listed is left out.
    assert listed_candidates({"a": "old", "b": "a"}, set(), {"old": "404"}, str) == {"a": NOT_LISTED}


def test_only_the_redirects_of_the_chains_are_kept_a_hop_a_reading() -> None:
    recorded = [
        ("http://s/r1", "/r2"),  # relative, as a Location may be: resolved by the crawled form below
        ("http://s/r2", "http://S:80/end#x"),
        ("http://s/loop1", "http://s/loop2"),
        ("http://s/loop2", "http://s/loop1"),
        ("http://s/other", "http://s/elsewhere"),
        ("http://s/bad", "file:///etc/passwd: not followed"),
    ]
    readings = []

    def redirects() -> list[tuple[str, str]]:
        readings.append(1)
        return recorded

    def crawled(url: str) -> str | None:
        spelled = {"/r2": "http://s/r2", "http://S:80/end#x": "http://s/end"}
        return url if url.startswith("http://s/") else spelled.get(url)

    moves = redirect_moves(redirects, ["http://s/r1", "http://s/loop1", "http://s/bad"], str, crawled)
    assert moves == {
        "http://s/r1": "http://s/r2", "http://s/r2": "http://s/end",
        "http://s/loop1": "http://s/loop2", "http://s/loop2": "http://s/loop1",
    }  # fmt: skip
    assert len(readings) == 3  # r1 and loop1; r2 and loop2; end: nothing
