"""``scrapy audit -s SITEMAP_REPORT=...`` (commands/audit.py, modes/collecting.py): the crawl's report
with the audit's findings, HTML opened in the real headless Chromium, or JSON; on the real local
site with the planted stale sitemaps of tests/test_audit_command.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.report_browser import open_report
from tests.site_server import SiteServer
from tests.test_audit_command import audit, plant, plant_trap_site, planted_findings

FIELDS = ("rule", "severity", "url", "file", "line", "detail")


def audit_with_report(tmp_path: Path, name: str) -> tuple[Path, dict[str, Any], str, str, str]:
    """Audit the planted site with SITEMAP_REPORT=``name``: the report, what --json printed, and both origins."""
    path = tmp_path / name
    with SiteServer() as server, SiteServer() as other:
        plant(server, other.origin)
        code, printed, described = audit(server.origin + "/", "-s", f"SITEMAP_REPORT={path}", tmp_path=tmp_path)
    assert code == 1, described  # unchanged by the report
    assert sorted(((f["rule"], f["url"]) for f in printed["findings"]), key=str) == planted_findings(
        server.origin, other.origin
    ), described
    assert path.is_file(), described
    assert not (tmp_path / "out").exists()  # nothing published
    return path, printed, server.origin, other.origin, described


def as_cells(finding: dict[str, Any]) -> tuple[str, ...]:
    """A finding as the table's cells show it: text, empty for none."""
    return tuple("" if finding[name] is None else str(finding[name]) for name in FIELDS)


def test_audit_writes_an_html_report_with_its_findings(tmp_path: Path) -> None:
    path, printed, origin, _, described = audit_with_report(tmp_path, "audit.html")
    with open_report(path) as report:
        page = report.page
        assert page.locator("h1").inner_text() == f"Sitemap audit report \u2014 {origin}/"
        summary = page.locator("#summary").inner_text()
        assert "Not published\tSITEMAP_PUBLISH is False" in summary, summary
        assert "Audit\t7 error(s), 7 warning(s) in 3 sitemap file(s) listing 12 URL(s)" in summary, summary
        assert "Finish reason\tfinished" in summary, summary
        assert page.locator("figure.chart h3").count() == 5
        assert page.locator("#excluded").count() == 1
        assert page.locator("#findings .pageinfo").inner_text().endswith(f"{len(printed['findings'])} rows")
        cells = page.locator("#findings tbody tr").evaluate_all(
            "rows => rows.map(row => Array.from(row.cells, cell => cell.textContent))"
        )
        # Exactly the findings the audit printed, each row with its file, line and detail.
        assert sorted(tuple(row) for row in cells) == sorted(as_cells(f) for f in printed["findings"]), described
        rows = {(row[0], row[2]): row for row in cells}
        assert rows[("audit.redirect", f"{origin}/old")][1] == "error"
        assert rows[("audit.redirect", f"{origin}/old")][5] == f"redirect: 301 to {origin}/a"
        assert rows[("audit.redirect", f"{origin}/old")][3].endswith("/sitemap-a.xml")
        assert rows[("audit.redirect", f"{origin}/old")][4].isdigit()
        assert rows[("audit.lastmod_uniform", "")][3:5] == ["", ""]
        report.screenshot("report-audit.png")
        assert report.problems() == []


def test_audit_writes_a_json_report_with_its_findings(tmp_path: Path) -> None:
    path, printed, origin, _, described = audit_with_report(tmp_path, "audit.json")
    report = json.loads(path.read_text(encoding="utf-8"))
    assert report["findings"] == printed["findings"], described
    assert report["audit"] == printed["summary"]
    assert report["not_published"].startswith("SITEMAP_PUBLISH is False") and report["files"] == 0
    assert report["site"] == origin + "/" and report["finish_reason"] == "finished"
    # The crawl's own side: what it fetched and left out (robots.txt forbids /private/x).
    assert report["counts"]["fetched"] > 0
    assert {"url": f"{origin}/private/x", "reason": "robots"} in report["excluded_urls"]
    assert len(report["excluded_urls"]) == sum(report["excluded"].values())


def test_an_audit_that_could_not_crawl_reports_its_findings_alone(tmp_path: Path) -> None:
    path = tmp_path / "audit.html"
    with SiteServer() as server:  # no robots.txt Sitemap: line, no /sitemap.xml
        code, printed, described = audit(server.origin + "/", "-s", f"SITEMAP_REPORT={path}", tmp_path=tmp_path)
    assert code == 2, described
    with open_report(path) as report:
        page = report.page
        summary = page.locator("#summary").inner_text()
        assert "Not crawled\tno sitemap could be read" in summary, summary
        assert "Audit\t1 error(s)" in summary, summary
        assert page.locator("figure.chart").count() == 0 and page.locator("#excluded").count() == 0
        cells = page.locator("#findings tbody tr").evaluate_all(
            "rows => rows.map(row => Array.from(row.cells, cell => cell.textContent))"
        )
        assert sorted(tuple(row) for row in cells) == sorted(as_cells(f) for f in printed["findings"]), described
        assert report.problems() == []


def test_an_audit_cut_short_says_so_on_the_terminal_and_in_the_html_report(tmp_path: Path) -> None:
    path = tmp_path / "audit.html"
    with SiteServer() as server:
        plant_trap_site(server)
        code, printed, described = audit(
            server.origin + "/", "-s", "CLOSESPIDER_PAGECOUNT=12", "-s", f"SITEMAP_REPORT={path}",
            tmp_path=tmp_path, as_json=False,
        )  # fmt: skip
    assert code == 0, described
    lines = printed.splitlines()
    incomplete = "-: warning [audit.crawl_incomplete] the crawl was cut short: CLOSESPIDER_PAGECOUNT ended it"
    assert lines[0].startswith(incomplete), described
    assert any(line.startswith("crawl: INCOMPLETE (CLOSESPIDER_PAGECOUNT ended it); so far ") for line in lines)
    with open_report(path) as report:
        page = report.page
        summary = page.locator("#summary").inner_text()
        assert "Audit's crawl\tINCOMPLETE (CLOSESPIDER_PAGECOUNT ended it); so far " in summary, summary
        assert "Finish reason\tclosespider_pagecount" in summary, summary
        first = page.locator("#findings tbody tr").first.evaluate(
            "row => Array.from(row.cells, cell => cell.textContent)"
        )
        assert first[:2] == ["audit.crawl_incomplete", "warning"], first
        assert first[5].startswith("the crawl was cut short: CLOSESPIDER_PAGECOUNT ended it"), first
        assert report.problems() == []
