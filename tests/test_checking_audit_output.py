"""sitemap_spider/checking/audit_output.py: the terminal shows a few findings of each rule, and where
the rest are."""

from __future__ import annotations

from pathlib import Path

from sitemap_spider.checking.audit_output import TERMINAL_PER_RULE, terminal_lines, where_all_are
from sitemap_spider.checking.findings import Finding

SITE = "https://www.example.com/"


def test_the_terminal_shows_the_first_findings_of_each_rule_then_how_many_more() -> None:
    findings = [Finding("audit.unlisted", None, None, "missing", f"{SITE}p{n}") for n in range(3)]
    more = TERMINAL_PER_RULE + 5
    findings += [Finding("audit.unlisted_trap", None, None, "trap", f"{SITE}c{n}") for n in range(more)]
    lines = terminal_lines(findings, "see the report")
    assert lines[:3] == [f"{SITE}p{n}: warning [audit.unlisted] missing" for n in range(3)]
    assert len(lines) == 3 + TERMINAL_PER_RULE + 1
    assert lines[-2] == f"{SITE}c{TERMINAL_PER_RULE - 1}: warning [audit.unlisted_trap] trap"
    assert lines[-1] == "... and 5 more audit.unlisted_trap finding(s), not shown: see the report"


def test_exactly_the_cap_needs_no_more_line() -> None:
    findings = [Finding("audit.orphan", "s.xml", n, "no link", f"{SITE}{n}") for n in range(TERMINAL_PER_RULE)]
    assert len(terminal_lines(findings, "")) == TERMINAL_PER_RULE


def test_a_finding_about_a_listed_url_names_it_beside_its_file_and_line() -> None:
    listed = Finding("audit.http_error", f"{SITE}sitemap-00001.xml", 62, "http_error: 503", f"{SITE}links/")
    said = Finding("audit.redirect", "s.xml", 3, f"redirect: 301 to {SITE}a from {SITE}b", f"{SITE}b")
    assert terminal_lines([listed, said], "") == [
        f"{SITE}sitemap-00001.xml:62: error [audit.http_error] {SITE}links/: http_error: 503",
        f"s.xml:3: error [audit.redirect] redirect: 301 to {SITE}a from {SITE}b",
    ]


def test_where_all_the_findings_are() -> None:
    assert where_all_are(None) == "--json lists them all, and so does -s SITEMAP_REPORT=audit.html"
    assert where_all_are(Path("out/audit.json")) == "--json lists them all, and so does out/audit.json"
