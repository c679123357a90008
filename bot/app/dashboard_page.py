"""The failure dashboard as one HTML page with an inline SVG plot (pure: data in, text out).

No script runs on the page: tables and SVG are rendered here, every value from the
index (job names, log lines, reasons) is escaped, and a link is only made from an
http(s) URL, so a hostile log line or job name cannot inject markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from html import escape
from urllib.parse import urlsplit

from bot.evidence.trends import KINDS, Trends
from bot.store.base import WaiverRow

PLOT_W, PLOT_H, PAD_L, PAD_B, PAD_T = 760, 220, 36, 28, 10
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#17becf")
LINE_CHARS = 160

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:4px 6px;
text-align:left;vertical-align:top}td.n{text-align:right}code{font-size:12px;word-break:break-all}
.kind-broken-trunk{color:#b00020}.kind-flaky{color:#a06000}.kind-new{color:#1f5fbf}
.legend span{display:inline-block;margin-right:14px}.muted{color:#777}
#weeks th:not(:first-child){text-align:right}
"""


def _text(value: object, limit: int | None = None) -> str:
    text = "" if value is None else str(value)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return escape(text, quote=True)


def _link(url: str | None, label: str) -> str:
    if not url or urlsplit(url).scheme not in {"http", "https"}:
        return _text(label)
    return f'<a href="{_text(url)}" rel="noreferrer">{_text(label)}</a>'


def _time(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def signature_plot(trends: Trends) -> str:
    """Failures per day of the most frequent signatures: one line and its marks each."""
    days = len(trends.days)
    top = max((max(s.per_day) for s in trends.signatures), default=0)
    if not trends.signatures or top == 0:
        return '<p class="muted" id="no-plot">No failures in the window.</p>'
    inner_w, inner_h = PLOT_W - PAD_L - 8, PLOT_H - PAD_B - PAD_T

    def x(i: int) -> float:
        return PAD_L + (inner_w * i / max(days - 1, 1))

    def y(count: int) -> float:
        return PAD_T + inner_h - inner_h * count / top

    parts = [f'<svg id="signature-plot" xmlns="http://www.w3.org/2000/svg" role="img" '
             f'width="{PLOT_W}" height="{PLOT_H}" viewBox="0 0 {PLOT_W} {PLOT_H}">',
             "<title>Failures per day by signature</title>",
             f'<line x1="{PAD_L}" y1="{y(0):.1f}" x2="{PLOT_W - 8}" y2="{y(0):.1f}" '
             'stroke="#999"/>',
             f'<text x="4" y="{y(top) + 4:.1f}" font-size="11">{top}</text>',
             f'<text x="4" y="{y(0):.1f}" font-size="11">0</text>']
    for i, day in enumerate(trends.days):
        if i % 7 == 0 or i == days - 1:
            anchor = "end" if i == days - 1 else "middle"
            parts.append(f'<text x="{x(i):.1f}" y="{PLOT_H - 8}" font-size="11" '
                         f'text-anchor="{anchor}">{day:%m-%d}</text>')
    for n, series in enumerate(trends.signatures):
        colour = PALETTE[n % len(PALETTE)]
        points = " ".join(f"{x(i):.1f},{y(c):.1f}" for i, c in enumerate(series.per_day))
        parts.append(f'<polyline class="series" fill="none" stroke="{colour}" '
                     f'stroke-width="1.5" points="{points}"/>')
        for i, count in enumerate(series.per_day):
            if count:
                parts.append(
                    f'<circle class="mark" data-signature="{_text(series.signature)}" '
                    f'data-count="{count}" cx="{x(i):.1f}" cy="{y(count):.1f}" r="3" '
                    f'fill="{colour}"><title>{_text(series.signature, 120)}: {count} on '
                    f"{trends.days[i]:%Y-%m-%d}</title></circle>")
    parts.append("</svg>")
    legend = "".join(
        f'<span><svg width="10" height="10"><rect width="10" height="10" '
        f'fill="{PALETTE[n % len(PALETTE)]}"/></svg> {_text(s.signature, 80)} ({s.total})</span>'
        for n, s in enumerate(trends.signatures))
    return "".join(parts) + f'<p class="legend">{legend}</p>'


def _failure_rows(trends: Trends) -> str:
    rows = []
    for failure in trends.failures:
        job = failure.job
        where = f"line {job.line_no}: " if job.line_no is not None else ""
        cause = (f"<code>{_text(where + (job.line or ''), LINE_CHARS)}</code>" if job.line
                 else f'<span class="muted">{_text(job.log_note or "no root cause")}</span>')
        kind_class = "kind-" + failure.kind.replace(" ", "-")
        rows.append(
            f'<tr class="failure"><td>{_time(failure.when)}</td><td>{_text(job.repo)}</td>'
            f"<td>{_link(job.url, job.job_name)}</td>"
            f'<td class="{kind_class}">{_text(failure.kind)}</td>'
            f"<td>{_text(job.category or '—')}</td><td>{cause}</td></tr>")
    if not rows:
        return '<tr><td colspan="6" class="muted">No failing jobs indexed in the window.</td></tr>'
    return "".join(rows)


def _week_rows(trends: Trends) -> str:
    return "".join(
        f'<tr class="week"><td>{week.start:%Y-%m-%d}</td>'
        + "".join(f'<td class="n">{week.counts.get(k, 0)}</td>' for k in KINDS) + "</tr>"
        for week in trends.weeks)


def _waiver_rows(waivers: Sequence[WaiverRow]) -> str:
    if not waivers:
        return '<tr><td colspan="5" class="muted">No waivers.</td></tr>'
    return "".join(
        f'<tr class="waiver"><td>{_text(w.repo)}#{w.number}</td><td>{_text(w.rule)}</td>'
        f"<td>{_text(w.path or 'all files')}</td><td>{_text(w.reason, 300)}</td>"
        f"<td>{_text(w.by)}, {_time(datetime.fromtimestamp(w.at, UTC))}</td></tr>"
        for w in waivers)


def render_dashboard(trends: Trends, waivers: Sequence[WaiverRow], *, now: datetime) -> str:
    days = len(trends.days)
    kinds = "".join(f"<th>{_text(k)}</th>" for k in KINDS)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>CI failures — ci-stability</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>{_STYLE}</style></head>
<body><h1>CI failures</h1>
<p class="muted">Last {days} days up to {_time(now)} UTC; {trends.jobs_seen} jobs indexed,
{sum(1 for _ in trends.failures)} failures listed.</p>
<h2>Signatures over time</h2>{signature_plot(trends)}
<h2>Per week</h2>
<table id="weeks"><thead><tr><th>week of</th>{kinds}</tr></thead>
<tbody>{_week_rows(trends)}</tbody></table>
<h2>Failing jobs</h2>
<table id="failures"><thead><tr><th>finished</th><th>repository</th><th>job</th><th>kind</th>
<th>class</th><th>root cause</th></tr></thead><tbody>{_failure_rows(trends)}</tbody></table>
<h2>Current waivers</h2>
<table id="waivers"><thead><tr><th>pull request</th><th>rule</th><th>path</th><th>reason</th>
<th>by</th></tr></thead><tbody>{_waiver_rows(waivers)}</tbody></table>
</body></html>
"""
