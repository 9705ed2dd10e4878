"""Inline SVG charts for the HTML report: grouped horizontal bars with their numbers, no script needed.

One chart draws one value per (category, contender): ``bars(categories,
series)`` with ``series`` a list of ``(contender label, {category: value in
0..1 or None})``. Values print beside their bars, so the chart reads without
hovering and survives printing. ``intervals`` (one mapping per contender,
``{category: [low, high]}``) draws each value's 95% interval as a whisker
across its bar, so a difference smaller than the noise shows as overlap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

__all__ = ["PALETTE", "bars"]

PALETTE = ("#2563eb", "#d97706", "#059669", "#db2777", "#7c3aed", "#0891b2", "#65a30d", "#dc2626")
"""One colour per contender, in order (repeats after eight)."""

_LABEL_WIDTH = 230
_BAR_WIDTH = 320
_BAR_HEIGHT = 14
_GAP = 10


def bars(
    title: str,
    categories: Sequence[str],
    series: Sequence[tuple[str, Mapping[str, float | None]]],
    *,
    percent: bool = True,
    subtitles: Mapping[str, str] | None = None,
    intervals: Sequence[Mapping[str, Sequence[float] | None]] | None = None,
) -> str:
    """A horizontal grouped bar chart: a ``<figure>`` with its caption and an ``<svg role="img">``."""
    per_category = max(1, len(series)) * (_BAR_HEIGHT + 2) + _GAP
    height = 24 + len(categories) * per_category
    width = _LABEL_WIDTH + _BAR_WIDTH + 70
    parts = [
        f"<figure><figcaption>{escape(title)}</figcaption>",
        f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'data-chart="{escape(title, quote=True)}"><title>{escape(title)}</title>',
        f'<line x1="{_LABEL_WIDTH}" y1="18" x2="{_LABEL_WIDTH}" y2="{height - _GAP}" class="axis"/>',
    ]
    y = 24.0
    for category in categories:
        label = escape(category)
        hint = escape((subtitles or {}).get(category, ""), quote=True)
        parts.append(
            f'<text x="{_LABEL_WIDTH - 8}" y="{y + _BAR_HEIGHT - 3}" class="cat" text-anchor="end">'
            f"<title>{hint}</title>{label}</text>"
        )
        for index, (name, values) in enumerate(series):
            value = values.get(category)
            colour = PALETTE[index % len(PALETTE)]
            if value is None:
                parts.append(f'<text x="{_LABEL_WIDTH + 6}" y="{y + _BAR_HEIGHT - 3}" class="na">n/a</text>')
            else:
                length = max(0.0, min(1.0, value)) * _BAR_WIDTH if percent else value
                shown = f"{value * 100:.1f}%" if percent else f"{value:g}"
                span = (intervals[index].get(category) if intervals and index < len(intervals) else None) or None
                whisker, end = _whisker(span, y) if percent and span else ("", length)
                parts.append(
                    f'<rect x="{_LABEL_WIDTH + 1}" y="{y:.1f}" width="{length:.1f}" height="{_BAR_HEIGHT}" '
                    f'fill="{colour}"><title>{escape(name)}: {shown}</title></rect>{whisker}'
                    f'<text x="{_LABEL_WIDTH + max(length, end) + 6:.1f}" y="{y + _BAR_HEIGHT - 3:.1f}" class="val">'
                    f"{shown}</text>"
                )
            y += _BAR_HEIGHT + 2
        y += _GAP
    parts.append("</svg></figure>")
    return "".join(parts)


def _whisker(span: Sequence[float], y: float) -> tuple[str, float]:
    """The 95% interval as a line with end ticks across a bar, and where it ends (x past the axis)."""
    low, high = (max(0.0, min(1.0, float(v))) * _BAR_WIDTH for v in span[:2])
    x1, x2, mid = _LABEL_WIDTH + 1 + low, _LABEL_WIDTH + 1 + high, y + _BAR_HEIGHT / 2
    tip = f"95% interval: {span[0] * 100:.1f}% to {span[1] * 100:.1f}%"
    top, bottom = y + 2, y + _BAR_HEIGHT - 2
    ticks = "".join(f'<line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}"/>' for x in (x1, x2))
    line = f'<line x1="{x1:.1f}" y1="{mid:.1f}" x2="{x2:.1f}" y2="{mid:.1f}"/>'
    return f'<g class="ci"><title>{tip}</title>{line}{ticks}</g>', high
