"""The HTML report: one self-contained file (inline CSS, SVG and script) any crawl or audit can write.

Like :mod:`sitemap_spider.sitemaps`, it imports nothing from the rest of the package: a caller
gives it the summary, the charts and the tables (excluded URLs, audit findings) as data.
"""

from __future__ import annotations

from sitemap_spider.report.charts import Bar, Chart
from sitemap_spider.report.html import FINDING_FIELDS, Column, HtmlReport, Table, findings_table, write_html

__all__ = ["FINDING_FIELDS", "Bar", "Chart", "Column", "HtmlReport", "Table", "findings_table", "write_html"]
