"""One self-contained HTML file: summary, inline-SVG charts, and paginated tables.

Nothing in the file is fetched from elsewhere: CSS and JavaScript are inline, the
charts are SVG drawn here, and a Content-Security-Policy forbids any request. The
rows of each table (a million excluded URLs, say) are not HTML: they are one JSON
array of arrays, gzipped and base64-encoded inside a non-executed <script>, which
the page's script unpacks once and shows one page at a time. Rows are streamed into
the compressor, so writing holds no more than one row in memory.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from importlib import resources
from pathlib import Path
from typing import IO

from sitemap_spider.report.charts import Chart, chart_svg
from sitemap_spider.report.files import replacing

#: The fields of one audit finding, in the order the findings table shows them.
FINDING_FIELDS = ("rule", "severity", "url", "file", "line", "detail")
# Bytes of compressed rows encoded at once: a multiple of 3, so base64 needs no padding between pieces.
_B64_CHUNK = 3 * 64 * 1024
# Rows encoded and compressed together: one call per row made writing 200,000 rows take seconds.
_ROWS_PER_BATCH = 1_000
_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


@dataclass(frozen=True)
class Column:
    """A table column: ``kind`` text (searched by the filter box), category (a select) or number."""

    name: str
    kind: str = "text"


@dataclass(frozen=True)
class Table:
    """A sortable, filterable, paginated table whose rows are written as data, not HTML."""

    key: str
    title: str
    columns: Sequence[Column]
    rows: Iterable[Sequence[str | int | None]]
    intro: str = ""


@dataclass(frozen=True)
class HtmlReport:
    """What the page shows, top to bottom."""

    title: str
    summary: Sequence[tuple[str, str]]
    charts: Sequence[Chart] = ()
    tables: Sequence[Table] = ()
    #: Short explanations shown under the summary (a reason and what it means).
    legend: Mapping[str, str] = field(default_factory=dict)


def findings_table(findings: Iterable[Mapping[str, object]]) -> Table:
    """The table of audit findings, each a mapping of :data:`FINDING_FIELDS` (missing ones empty)."""

    def rows() -> Iterable[list[str | int | None]]:
        for finding in findings:
            line = finding.get("line")
            yield [
                *(_text(finding.get(name)) for name in FINDING_FIELDS[:4]),
                line if isinstance(line, int) else None,
                _text(finding.get("detail")),
            ]

    columns = [Column("rule", "category"), Column("severity", "category"), Column("url"), Column("file"),
               Column("line", "number"), Column("detail")]
    return Table("findings", "Audit findings", columns, rows(), "What the audit found wrong, one row per finding.")


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def write_html(path: Path, report: HtmlReport) -> int:
    """Write the report to ``path`` atomically (a temporary file, then a rename); the bytes written."""
    with replacing(path) as out:
        out.write(_head(report))
        for table in report.tables:
            _write_table(out, table)
        out.write(f"<script>{_asset('report.js')}</script>\n</body>\n</html>\n")
    return path.stat().st_size


def _asset(name: str) -> str:
    # importlib.resources: Scrapyd runs the package from a zipped egg.
    return resources.files("sitemap_spider.report").joinpath("assets", name).read_text(encoding="utf-8")


def _head(report: HtmlReport) -> str:
    title = escape(report.title)
    summary = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in report.summary)
    legend = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in report.legend.items())
    legend_html = f'<details><summary>What the reasons mean</summary><table class="kv">{legend}</table></details>'
    charts = "".join(chart_svg(chart) for chart in report.charts)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<link rel="icon" href="data:,">\n'
        f"<title>{title}</title>\n<style>{_asset('report.css')}</style>\n</head>\n<body>\n"
        f"<h1>{title}</h1>\n<section id=\"summary\"><h2>Summary</h2><table class=\"kv\">{summary}</table>"
        f"{legend_html if legend else ''}</section>\n"
        + (f'<section id="charts"><h2>Charts</h2><div class="charts">{charts}</div></section>\n' if charts else "")
        + "<noscript><p>The tables need JavaScript; the summary and charts above do not.</p></noscript>\n"
    )


def _write_table(out: IO[str], table: Table) -> None:
    columns = json.dumps([{"name": c.name, "kind": c.kind} for c in table.columns])
    out.write(
        f'<section class="table" id="{escape(table.key)}" data-columns="{escape(columns)}">'
        f"<h2>{escape(table.title)}</h2><p>{escape(table.intro)}</p>"
        '<p class="status" role="status">Loading\u2026</p>'
        f'<script type="application/octet-stream" class="rows">'
    )
    count = _write_rows(out, table.rows)
    out.write(f'</script><p class="total">{count:,} rows in all</p></section>\n')


def _write_rows(out: IO[str], rows: Iterable[Sequence[str | int | None]]) -> int:
    """Rows as one gzipped, base64-encoded JSON array; the number of rows."""
    gzip = zlib.compressobj(9, zlib.DEFLATED, 31)  # wbits 31: a gzip stream, as DecompressionStream reads
    pending = bytearray()
    batch: list[str] = []
    count = 0

    def emit(data: bytes, final: bool = False) -> None:
        pending.extend(data)
        cut = len(pending) if final else len(pending) - len(pending) % 3
        if cut >= _B64_CHUNK or final:
            out.write(base64.b64encode(bytes(pending[:cut])).decode("ascii"))
            del pending[:cut]

    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    for row in rows:
        batch.append(encode(list(row)))
        count += 1
        if len(batch) == _ROWS_PER_BATCH:
            emit(gzip.compress((("[" if count == len(batch) else ",") + ",".join(batch)).encode("utf-8")))
            batch.clear()
    head = "[" if count == len(batch) else ","
    tail = (head + ",".join(batch) if batch else ("[" if count == 0 else "")) + "]"
    emit(gzip.compress(tail.encode("utf-8")) + gzip.flush(), final=True)
    return count
