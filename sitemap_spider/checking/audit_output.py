"""What ``scrapy audit`` prints on the terminal: every rule's first findings, and where the rest are.

``--json`` and ``SITEMAP_REPORT`` hold every finding; a terminal cut at a few per rule still
shows each kind of problem, however many trap-like pages follow.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Final

from sitemap_spider.checking.findings import Finding

#: Findings of one rule the terminal shows.
TERMINAL_PER_RULE: Final = 20


def where_all_are(report_path: Path | None) -> str:
    """Where a reader finds every finding."""
    if report_path is None:
        return "--json lists them all, and so does -s SITEMAP_REPORT=audit.html"
    return f"--json lists them all, and so does {report_path}"


def terminal_line(finding: Finding) -> str:
    """A finding as the terminal shows it. One about a listed URL names the file and line that
    list it; the URL is said too, unless its detail says it already: "sitemap-00001.xml:62: error
    [audit.http_error] http_error: 503" alone left the reader to look the line up."""
    if finding.file is not None and finding.url and finding.url not in finding.detail:
        return replace(finding, detail=f"{finding.url}: {finding.detail}").as_text()
    return finding.as_text()


def terminal_lines(findings: list[Finding], everything: str) -> list[str]:
    """The findings, in their order, TERMINAL_PER_RULE of each rule at most; after the last shown
    of a rule, how many more there are and ``everything`` (where they all are)."""
    totals = Counter(finding.rule for finding in findings)
    shown: Counter[str] = Counter()
    lines: list[str] = []
    for finding in findings:
        shown[finding.rule] += 1
        if shown[finding.rule] <= TERMINAL_PER_RULE:
            lines.append(terminal_line(finding))
        if shown[finding.rule] == TERMINAL_PER_RULE and totals[finding.rule] > TERMINAL_PER_RULE:
            more = totals[finding.rule] - TERMINAL_PER_RULE
            lines.append(f"... and {more:,} more {finding.rule} finding(s), not shown: {everything}")
    return lines

