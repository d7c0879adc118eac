"""The report of a ``scrapy audit`` whose crawl never ran (no sitemap could be read, none lists
a URL, or the crawl could not start): the summary and findings alone, so ``SITEMAP_REPORT``
never keeps an older audit's.

When the crawl ran, its own report carries the findings (``CollectingMode.write_report``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sitemap_spider.crawl.report_facts import audit_row
from sitemap_spider.report import HtmlReport, findings_table, write_html
from sitemap_spider.report.files import replacing

#: Why such a report has no crawl in it.
NOT_CRAWLED = "no sitemap could be read, none lists a URL of the site, or the crawl could not start"


def write_without_crawl(
    path: Path, site: str, audit: Mapping[str, Any], findings: Sequence[Mapping[str, object]]
) -> None:
    """Write ``path`` (HTML for ``.html``/``.htm``, else JSON) atomically: summary and findings."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() in (".html", ".htm"):
        summary = [("Site", site), ("Not crawled", NOT_CRAWLED), audit_row(audit)]
        write_html(path, HtmlReport(f"Sitemap audit report \u2014 {site}", summary, tables=[findings_table(findings)]))
        return
    report = {"site": site, "finish_reason": None, "not_crawled": NOT_CRAWLED, "audit": audit, "findings": findings}
    with replacing(path) as out:
        out.write(json.dumps(report, ensure_ascii=False, indent=1, default=str) + "\n")
