"""The fixture HTTP server itself, checked with plain http.client / urllib (no Scrapy).

If these fail, an end-to-end crawl failure says nothing about the spider.
"""

from __future__ import annotations

import http.client
import threading
import urllib.request
from collections.abc import Callable, Iterator
from datetime import UTC
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

import pytest

from tests.crawl_fixtures import RunningSite, case_site, serve_site  # noqa: F401 - fixture
from tests.generated_site import build_generated_site
from tests.site_cases import build_case_site
from tests.site_cases_links import CALENDAR
from tests.site_server import SiteServer, html_page
from tests.site_spec import Excluded, Listed, SiteSpec


@pytest.fixture
def conn(case_site: RunningSite) -> Iterator[http.client.HTTPConnection]:  # noqa: F811
    connection = http.client.HTTPConnection("127.0.0.1", case_site.server.port, timeout=5)
    yield connection
    connection.close()


def fetch(
    conn: http.client.HTTPConnection, target: str, method: str = "GET"
) -> tuple[int, http.client.HTTPMessage, bytes]:
    conn.request(method, target)
    response = conn.getresponse()
    return response.status, response.headers, response.read()


def test_robots_txt_has_the_wildcard_rules(conn: http.client.HTTPConnection) -> None:
    status, headers, body = fetch(conn, "/robots.txt")
    assert status == 200
    assert headers["Content-Type"].startswith("text/plain")
    rules = body.decode().splitlines()
    assert {"Disallow: /private/", "Disallow: /*?print=", "Disallow: /*.php$"} <= set(rules)


def test_get_sends_content_length_and_keeps_the_connection(conn: http.client.HTTPConnection) -> None:
    first = fetch(conn, "/")
    sock = conn.sock
    second = fetch(conn, "/about")
    # Same socket for both: HTTP/1.1 keep-alive works because every body has a length.
    assert conn.sock is sock
    for status, headers, body in (first, second):
        assert status == 200
        assert int(headers["Content-Length"]) == len(body) > 0
        assert headers["Content-Type"] == "text/html; charset=utf-8"


def test_head_has_the_headers_of_get_and_no_body(conn: http.client.HTTPConnection) -> None:
    _, get_headers, get_body = fetch(conn, "/lm-rfc7231")
    status, headers, body = fetch(conn, "/lm-rfc7231", method="HEAD")
    assert status == 200 and body == b""
    assert headers["Content-Length"] == str(len(get_body))
    assert headers["Last-Modified"] == get_headers["Last-Modified"] == "Wed, 01 May 2024 10:20:30 GMT"


@pytest.mark.parametrize(
    ("target", "status", "location"),
    [
        ("/r301", 301, "/r301-target"),
        ("/r302", 302, "/r302-target"),
        ("/r303", 303, "/r303-target"),
        ("/r307", 307, "/r307-target"),
        ("/r308", 308, "/r308-target"),
        ("/dir", 301, "/dir/"),
        ("/hop1", 301, "/hop2"),
        ("/loop-a", 302, "/loop-b"),
        ("/loop-b", 302, "/loop-a"),
    ],
)
def test_redirects_are_not_followed_by_the_server(
    conn: http.client.HTTPConnection, target: str, status: int, location: str
) -> None:
    got, headers, _ = fetch(conn, target)
    assert got == status
    assert headers["Location"].endswith(location)


def test_urllib_follows_a_chain_to_its_end(case_site: RunningSite) -> None:  # noqa: F811
    with urllib.request.urlopen(case_site.origin + "/hop1", timeout=5) as response:
        assert response.url == case_site.origin + "/hop-end"
    assert case_site.server.targets()[-4:] == ["/hop1", "/hop2", "/hop3", "/hop-end"]


@pytest.mark.parametrize("status", [404, 410, 500, 503])
def test_error_statuses(conn: http.client.HTTPConnection, status: int) -> None:
    got, headers, body = fetch(conn, f"/s{status}")
    assert got == status
    assert int(headers["Content-Length"]) == len(body)


def test_204_has_no_body_and_no_content_length(conn: http.client.HTTPConnection) -> None:
    status, headers, body = fetch(conn, "/s204")
    assert (status, body, headers["Content-Length"]) == (204, b"", None)


def test_unknown_path_is_404(conn: http.client.HTTPConnection) -> None:
    assert fetch(conn, "/no/such/page")[0] == 404


def test_broken_drops_the_connection(conn: http.client.HTTPConnection) -> None:
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        fetch(conn, "/broken")


@pytest.mark.parametrize(
    ("target", "name", "value"),
    [
        ("/noindex-header", "X-Robots-Tag", "noindex"),
        ("/noindex-header-googlebot", "X-Robots-Tag", "googlebot: noindex"),
        ("/otherbot-header", "X-Robots-Tag", "otherbot: noindex"),
        ("/download", "Content-Type", "application/pdf"),
        ("/xhtml", "Content-Type", "application/xhtml+xml; charset=utf-8"),
        ("/lm-date-only", "Date", "Mon, 01 Jan 2024 00:00:00 GMT"),
        ("/lm-date-only", "Last-Modified", None),
    ],
)
def test_headers(conn: http.client.HTTPConnection, target: str, name: str, value: str | None) -> None:
    assert fetch(conn, target)[1][name] == value


def test_link_header_canonical(conn: http.client.HTTPConnection, case_site: RunningSite) -> None:  # noqa: F811
    header = fetch(conn, "/hdr-canon")[1]["Link"]
    assert header == f'<{case_site.origin}/hdr-canon-target>; rel="canonical"'


@pytest.mark.parametrize(
    "target",
    [
        "/caf%C3%A9%20menu/",
        "/categories/Docker%E7%AF%87/",
        # A real server decodes the path, so lower-case escapes reach the same page.
        "/categories/Docker%e7%af%87/",
        "/search?a=1&b=2",
    ],
)
def test_encoded_targets(conn: http.client.HTTPConnection, target: str) -> None:
    assert fetch(conn, target)[0] == 200


def test_dynamic_calendar_links_onwards(conn: http.client.HTTPConnection) -> None:
    status, _, body = fetch(conn, "/calendar?month=41")
    assert status == 200
    assert b'href="/calendar?month=42"' in body
    status, _, body = fetch(conn, "/a/more/more/more/more/")
    assert status == 200 and b'href="more/"' in body


def test_requests_are_recorded_from_many_threads() -> None:
    page = build_case_site("http://127.0.0.1:1").routes["/about"]
    with SiteServer({f"/?n={n}": page for n in range(40)}) as server:

        def hit(n: int) -> None:
            with urllib.request.urlopen(f"{server.origin}/?n={n}", timeout=5) as response:
                response.read()

        threads = [threading.Thread(target=hit, args=(n,)) for n in range(40)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(server.targets()) == sorted(f"/?n={n}" for n in range(40))
        assert {r.host for r in server.requests} == {f"127.0.0.1:{server.port}"}
        server.clear()
        assert server.requests == []


def test_decoy_records_and_serves(case_site: RunningSite) -> None:  # noqa: F811
    with urllib.request.urlopen(case_site.decoy.origin + "/about", timeout=5) as response:
        assert response.status == 200
    assert case_site.decoy.targets() == ["/about"]


def _expected_lastmod(header: str | None, date: str) -> str | None:
    """An independent reading of Last-Modified: RFC 9110 dates are UTC, asctime has no zone, and
    one later than the response's Date is not believed (RFC 9110 section 8.8.2.1)."""
    if header is None:
        return None
    try:
        instant = parsedate_to_datetime(header)
    except ValueError:
        return None
    instant = instant.replace(tzinfo=UTC) if instant.tzinfo is None else instant
    return None if instant > parsedate_to_datetime(date) else instant.isoformat()


@pytest.mark.parametrize("build", [build_case_site, build_generated_site], ids=["case", "generated"])
def test_expectations_agree_with_what_is_served(build: Callable[[str], SiteSpec]) -> None:
    """Every Listed URL answers 200 HTML with a matching Last-Modified; exclusions fit their route."""
    with serve_site(lambda origin, _other: build(origin)) as site:
        connection = http.client.HTTPConnection("127.0.0.1", site.server.port, timeout=5)
        try:
            for url, outcome in site.spec.outcomes().items():
                parts = urlsplit(url)
                if parts.netloc != urlsplit(site.origin).netloc:
                    assert isinstance(outcome, Excluded) and outcome.reason == "offsite", url
                    continue
                target = parts.path + (f"?{parts.query}" if parts.query else "")
                route = site.server.resolve_target(target)
                if isinstance(outcome, Listed):
                    status, headers, _ = fetch(connection, target)
                    assert status == 200, url
                    assert headers["Content-Type"].lower().split(";")[0] in (
                        "text/html",
                        "application/xhtml+xml",
                    ), url
                    assert _expected_lastmod(headers["Last-Modified"], headers["Date"]) == outcome.lastmod, url
                elif outcome.reason == "http_error":
                    assert route.status >= 400, url
                elif outcome.reason == "redirect":
                    refresh = b'http-equiv="refresh"' in route.body.lower()
                    assert 300 <= route.status < 400 or refresh, url
                elif outcome.reason == "non_html":
                    assert "html" not in dict(route.headers)["Content-Type"], url
        finally:
            connection.close()


def test_html_page_is_utf8() -> None:
    assert "é".encode() in html_page("é")


def test_calendar_pattern_is_a_trap() -> None:
    spec = build_case_site("http://127.0.0.1:1")
    assert CALENDAR.fullmatch("/calendar?month=7")
    assert spec.is_trap("http://127.0.0.1:1/calendar?month=7")
    assert spec.is_trap("https://www.example.com/a/more/more/")
    assert not spec.is_trap("http://127.0.0.1:1/a/")
