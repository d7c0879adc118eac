"""The HTML report (sitemap_spider/report/, crawl/report_facts.py), opened in the real headless Chromium.

The page must load with no console error and no request but its own file, and its tables must
sort, filter and paginate when clicked; a screenshot of each report goes to test-artifacts/.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from playwright.sync_api import expect

from sitemap_spider.crawl.report_facts import ListedFacts, lastmod_age, section_of
from sitemap_spider.report import Bar, Chart, Column, HtmlReport, Table, findings_table, write_html
from sitemap_spider.report.html import _write_rows
from tests.crawl_fixtures import RunningSite, run_crawl
from tests.report_browser import OpenReport, open_report
from tests.sitemap_check import read_sitemap_set

REASONS = ("canonical", "http_error", "noindex", "redirect")
# Text a crawled site controls: it must show as text, never become markup or a request.
HOSTILE = 'https://www.example.com/<img src="https://evil.example/x.png" onerror="console.error(1)">'
ROWS = 1_000


def synthetic_exclusions() -> list[tuple[str, str, str | None]]:
    rows: list[tuple[str, str, str | None]] = [
        (f"https://www.example.com/s{i % 7}/page-{i:04d}.html", REASONS[i % 4], f"names /x/{i}" if i % 4 == 0 else None)
        for i in range(ROWS - 1)
    ]
    rows.append((HOSTILE, "noindex", "</script><script>console.error('escaped')</script>"))
    return rows


def synthetic_findings() -> list[dict[str, object]]:
    findings: list[dict[str, object]] = [
        {"rule": f"rule-{i % 3}", "severity": "error" if i % 5 == 0 else "warning",
         "url": f"https://www.example.com/f{i}", "file": "sitemap-00001.xml", "line": (i * 37) % 101 + 1,
         "detail": f"detail {i}"}
        for i in range(40)
    ]  # fmt: skip
    findings.append({"rule": "no-line", "severity": "info", "url": None, "file": "robots.txt", "detail": "x"})
    return findings


def page_info(report: OpenReport, section: str) -> str:
    return report.page.locator(f"#{section} .pageinfo").inner_text()


def column(report: OpenReport, section: str, index: int) -> list[str]:
    return report.page.locator(f"#{section} tbody tr td:nth-child({index + 1})").all_inner_texts()


def test_section_and_lastmod_age() -> None:
    now = datetime(2026, 6, 1, 12, tzinfo=UTC)
    assert section_of("https://e.com/") == "/"
    assert section_of("https://e.com/about.html") == "/"
    assert section_of("https://e.com/blog/2024/post") == "/blog/"
    assert [lastmod_age(value, now) for value in (
        None, "2026-06-01T11:00:00+00:00", "2026-05-28", "2026-05-10T00:00:00Z", "2025-07-01", "2020-01-01",
        "2026-06-02", "not a date",
    )] == ["no lastmod", "under a day", "under a week", "under a month", "under a year", "a year or more",
           "in the future", "no lastmod"]  # fmt: skip
    facts = ListedFacts(now)
    for n in range(3):
        facts.add(f"https://e.com/blog/{n}", None)
    facts.add("https://e.com/blog/0", None, -1)  # a page the set dropped
    assert facts.sections == {"/blog/": 2}


@pytest.mark.parametrize("count", [0, 1, 999, 1000, 1001, 2500])
def test_rows_are_one_gzipped_json_array(count: int) -> None:
    rows = [[f"https://e.com/{i}", "noindex", None if i % 2 else "caf\u00e9 </script>"] for i in range(count)]
    out = io.StringIO()
    assert _write_rows(out, iter(rows)) == count
    assert json.loads(gzip.decompress(base64.b64decode(out.getvalue()))) == rows


def test_report_sorts_filters_and_pages_in_chromium(tmp_path: Path) -> None:
    exclusions = synthetic_exclusions()
    findings = synthetic_findings()
    path = tmp_path / "report.html"
    write_html(path, HtmlReport(
        title="Synthetic report",
        summary=[("Listed URLs", "12"), ("Note", "<b>not bold</b>")],
        charts=[Chart("Status codes", [Bar("200", 900, "ok"), Bar("404", 80, "warn")]), Chart("Empty", [], "none")],
        tables=[
            Table("excluded", "Excluded URLs", [Column("url"), Column("reason", "category"), Column("detail")],
                  iter(exclusions)),
            findings_table(iter(findings)),
        ],
    ))  # fmt: skip
    html = path.read_text(encoding="utf-8")
    assert "<b>not bold</b>" not in html and "evil.example" not in html  # escaped, and rows are packed
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), "the page names an outside resource"

    with open_report(path) as report:
        page = report.page
        assert page.locator("#summary").inner_text().count("Listed URLs") == 1
        assert page.locator("figure.chart svg rect.bar").count() == 2
        assert page.locator("figure.chart p.nodata").count() == 1
        assert page_info(report, "excluded") == f"page 1 of 10 \u00b7 {ROWS:,} of {ROWS:,} rows"
        assert len(column(report, "excluded", 0)) == 100

        page.click("#excluded .nav button.next")
        assert page_info(report, "excluded").startswith("page 2 of 10")
        assert column(report, "excluded", 0)[0] == exclusions[100][0]
        page.click("#excluded .nav button.last")
        assert page_info(report, "excluded").startswith("page 10 of 10")
        assert page.locator("#excluded .nav button.next").is_disabled()

        page.click('#excluded th button[data-col="0"]')
        assert page_info(report, "excluded").startswith("page 1 of 10")
        urls = sorted(url for url, _, _ in exclusions)
        assert column(report, "excluded", 0) == urls[:100]
        assert page.locator("#excluded th").nth(0).get_attribute("aria-sort") == "ascending"
        page.click('#excluded th button[data-col="0"]')
        assert column(report, "excluded", 0) == urls[::-1][:100]

        page.select_option('#excluded select[data-col="1"]', "noindex")
        noindex = sum(reason == "noindex" for _, reason, _ in exclusions)
        assert page_info(report, "excluded") == f"page 1 of 3 \u00b7 {noindex} of {ROWS:,} rows"
        assert set(column(report, "excluded", 1)) == {"noindex"}
        page.click('#excluded th button[data-col="0"]')  # ascending again: "<" sorts before letters
        assert column(report, "excluded", 0)[0] == HOSTILE  # shown as text, fetched by no one
        page.select_option('#excluded select[data-col="1"]', "")
        page.fill("#excluded input[type=search]", "page-07")
        matching = sorted(url for url, _, _ in exclusions if "page-07" in url)
        expect(page.locator("#excluded .pageinfo")).to_contain_text(f" {len(matching)} of", timeout=10_000)
        assert column(report, "excluded", 0) == matching  # still sorted

        page.click('#findings th button[data-col="4"]')  # line: numbers, rows without one last
        lines = column(report, "findings", 4)
        numbers = [int(line) for line in lines if line]
        assert numbers == sorted(numbers) and lines[-1] == "" and len(lines) == len(findings)
        page.select_option('#findings select[data-col="1"]', "error")
        assert set(column(report, "findings", 1)) == {"error"}

        shot = report.screenshot("report-synthetic.png")
        assert report.problems() == []
    assert shot.stat().st_size > 10_000


def test_crawl_writes_an_html_report(case_site: RunningSite, tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    result = run_crawl(case_site.start_url, tmp_path, settings={"SITEMAP_REPORT": str(path)})
    assert result.returncode == 0, result.describe()
    assert not result.report_path.exists() and path.is_file()
    listed = read_sitemap_set(result.output_dir, case_site.origin + "/")
    with open_report(path) as report:
        page = report.page
        summary = page.locator("#summary").inner_text()
        assert f"Listed URLs\t{len(listed):,}" in summary, summary
        titles = page.locator("figure.chart h3").all_inner_texts()
        assert titles == ["Status codes", "Exclusions by reason", "Pages by depth", "lastmod age",
                          "Largest sections"]  # fmt: skip
        assert page.locator("figure.chart svg").count() == 5  # every chart has data on this site
        status_bars = page.locator("figure.chart").nth(0).locator("text.label").all_text_contents()
        assert {"200", "301", "404"} <= set(status_bars), status_bars
        section_total = sum(
            int(value.replace(",", ""))
            for value in page.locator("figure.chart").nth(4).locator("text.value").all_text_contents()
        )
        assert section_total <= len(listed)
        excluded_total = re.search(r"Excluded URLs\t([\d,]+)", summary)
        assert excluded_total is not None
        total = int(excluded_total.group(1).replace(",", ""))
        assert page_info(report, "excluded").endswith(f"{total:,} of {total:,} rows")
        assert page.locator("#findings").count() == 0  # a crawl has no audit findings
        report.screenshot("report-case-site.png")
        assert report.problems() == []
