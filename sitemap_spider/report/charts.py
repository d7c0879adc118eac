"""Bar charts as inline SVG: the HTML report draws its own, so the file needs nothing from elsewhere."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

# Geometry of one horizontal bar chart, in SVG user units (1 unit = 1 CSS px at scale 1).
_ROW = 22
_LABEL = 170
_BARS = 290
_VALUE = 80
_LABEL_CHARS = 24


@dataclass(frozen=True)
class Bar:
    """One bar: its label, its value, and a tone (a CSS class: ok, moved, warn, bad) or none."""

    label: str
    value: int
    tone: str = ""


@dataclass(frozen=True)
class Chart:
    """A titled bar chart; ``note`` says what the numbers are, or why there are none."""

    title: str
    bars: Sequence[Bar] = field(default_factory=tuple)
    note: str = ""


def _short(label: str) -> str:
    return label if len(label) <= _LABEL_CHARS else label[: _LABEL_CHARS - 1] + "\u2026"


def chart_svg(chart: Chart) -> str:
    """The chart as a <figure> holding an inline SVG (or a sentence when it has no bars)."""
    title = escape(chart.title)
    note = f"<figcaption>{escape(chart.note)}</figcaption>" if chart.note else ""
    if not chart.bars:
        return f'<figure class="chart"><h3>{title}</h3><p class="nodata">No data.</p>{note}</figure>'
    top = max(bar.value for bar in chart.bars) or 1
    width = _LABEL + _BARS + _VALUE
    height = _ROW * len(chart.bars) + 4
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{title}" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">'
    )
    parts = [f'<figure class="chart"><h3>{title}</h3>{svg}']
    for row, bar in enumerate(chart.bars):
        y = row * _ROW + 2
        length = round(_BARS * bar.value / top) if bar.value > 0 else 0
        label = escape(bar.label)
        tone = f" {escape(bar.tone)}" if bar.tone else ""
        parts.append(
            f'<g><title>{label}: {bar.value:,}</title>'
            f'<text class="label" x="{_LABEL - 6}" y="{y + 15}" text-anchor="end">{escape(_short(bar.label))}</text>'
            f'<rect class="bar{tone}" x="{_LABEL}" y="{y + 2}" width="{max(length, 1)}" height="{_ROW - 6}"/>'
            f'<text class="value" x="{_LABEL + length + 5}" y="{y + 15}">{bar.value:,}</text></g>'
        )
    parts.append(f"</svg>{note}</figure>")
    return "".join(parts)
