"""A PDF of a dashboard, drawn with matplotlib from the same figure data the chat shows.

Plotly's own image export needs a Chrome binary that servers rarely have; matplotlib is a
plain wheel. It is the `pdf` extra (`pip install 'noviz_agent[pdf]'`, about 75 MB with its
font tools): without it everything else works and `render` says how to add it. Only the trace
types this package produces are drawn (scatter, bar, pie, heatmap); anything else is left out.

Every page names whose figures they are: the company, currency and period of its analysis
(from the panel, else its chart's scope, else `meta`), a last period still running marked as
such, and "not given" where nobody said; an amount is never printed beside a missing currency.

`meta` (all optional) is what the site knows: `company`, `currency`, `period`, `generated_on`,
`generated_by`, `letter_head` (its name, as text) or `letter_head_image` (an image array), and
`format(value, unit, currency) -> str`, the site's own number formatting.
"""

from __future__ import annotations

import io
import textwrap

from analytics.charts import PALETTE, scope_of
from analytics.errors import AnalyticsError
from analytics.result import num

PAGE = (8.27, 11.69)  # A4 portrait, inches
NEEDS_MATPLOTLIB = (
	"The analysis PDF needs matplotlib, which is not installed here: pip install 'noviz_agent[pdf]' "
	"(on a bench: bench pip install 'matplotlib>=3.7'). Everything else works without it."
)
NOT_GIVEN = "not given"


class PdfUnavailable(AnalyticsError):
	"""The PDF cannot be drawn here: its library is not installed (the message says how to add it)."""


def _pyplot():
	"""matplotlib's pyplot and PdfPages on the Agg backend, or PdfUnavailable saying what to install."""
	try:
		import matplotlib
	except ImportError:
		raise PdfUnavailable(NEEDS_MATPLOTLIB) from None
	matplotlib.use("Agg")
	import matplotlib.pyplot as plt
	from matplotlib.backends.backend_pdf import PdfPages

	return plt, PdfPages


def _draw(plt, ax, figure: dict) -> None:
	heading = (figure.get("layout") or {}).get("title") or {}
	title = textwrap.shorten(heading.get("text", ""), 70)
	below = (heading.get("subtitle") or {}).get("text")
	ax.set_title(
		f"{title}\n{textwrap.shorten(below, 90)}" if below else title, fontsize=10 if not below else 9
	)
	data = figure.get("data") or []
	bars = [t for t in data if t.get("type") == "bar"]
	stacked = (figure.get("layout") or {}).get("barmode") == "stack"
	secondary = None
	for index, trace in enumerate(data):
		color = PALETTE[index % len(PALETTE)]
		kind = trace.get("type")
		if kind == "pie":
			values = [v or 0 for v in trace.get("values", [])]
			if sum(values) > 0:
				ax.pie(
					values,
					labels=trace.get("labels"),
					autopct="%1.0f%%",
					textprops={"fontsize": 7},
					colors=PALETTE,
				)
			ax.axis("equal")
		elif kind == "heatmap":
			z = [[float("nan") if v is None else v for v in row] for row in trace.get("z", [])]
			if z and z[0]:
				image = ax.imshow(z, aspect="auto", cmap="Blues")
				ax.set_xticks(range(len(trace.get("x", []))), trace.get("x", []), fontsize=6, rotation=90)
				ax.set_yticks(range(len(trace.get("y", []))), trace.get("y", []), fontsize=6)
				plt.colorbar(image, ax=ax)
		elif kind == "bar":
			position = bars.index(trace)
			if trace.get("orientation") == "h":
				ax.barh(trace.get("y", []), [v or 0 for v in trace.get("x", [])], color=color)
				ax.tick_params(axis="y", labelsize=6)
			else:
				xs = list(range(len(trace.get("x", []))))
				width = 0.8 if stacked or len(bars) == 1 else 0.8 / len(bars)
				offset = 0 if stacked or len(bars) == 1 else (position - (len(bars) - 1) / 2) * width
				bottom = None
				if stacked and position:
					bottom = [sum((b.get("y") or [0] * len(xs))[i] or 0 for b in bars[:position]) for i in xs]
				ax.bar(
					[x + offset for x in xs],
					[v or 0 for v in trace.get("y", [])],
					width,
					bottom=bottom,
					color=color,
					label=trace.get("name"),
				)
				ax.set_xticks(xs, trace.get("x", []), fontsize=6, rotation=60, ha="right")
		elif kind == "scatter":
			target = ax
			if trace.get("yaxis") == "y2":
				secondary = secondary or ax.twinx()
				target = secondary
			xs = [str(x) for x in trace.get("x", [])]
			ys = [float("nan") if v is None else v for v in trace.get("y", [])]
			if trace.get("fill") == "toself":
				target.fill(xs, ys, alpha=0.15, color=PALETTE[0], linewidth=0)
				continue
			style = "--" if (trace.get("line") or {}).get("dash") else "-"
			marker = "o" if "markers" in trace.get("mode", "") else None
			line = "none" if trace.get("mode") == "markers" else style
			target.plot(
				xs, ys, linestyle=line, marker=marker, markersize=3, color=color, label=trace.get("name")
			)
			if len(xs) > 12:
				step = max(1, len(xs) // 12)
				target.set_xticks(range(0, len(xs), step), xs[::step], fontsize=6, rotation=60, ha="right")
			else:
				target.tick_params(axis="x", labelsize=6, rotation=60)
	if len(data) > 1 and not any(t.get("type") == "pie" for t in data):
		ax.legend(fontsize=6, loc="best")
	ax.tick_params(axis="y", labelsize=7)


# --- the report page ---------------------------------------------------------------------

LANDSCAPE = (11.69, 8.27)  # A4 landscape, inches: figures left, chart beside them
TABLE_ROWS = 14
TABLE_COLUMNS = 5


def default_format(value, unit: str | None = None, currency: str | None = None) -> str:
	"""A value as the chat shows it when the site gives no formatter: separators, %, the currency code."""
	if isinstance(value, str):
		return value
	if unit == "currency":
		if value is None:
			return "n/a"
		return f"{currency} {num(value)}" if currency else num(value)
	if unit in ("count", "people", "documents") and value is not None:
		return f"{round(value):,}"
	return num(value, unit)


def change_text(kpi: dict) -> str:
	if isinstance(kpi.get("change"), int | float):
		text = f"{kpi['change']:+.0f}%" if abs(kpi["change"]) >= 10 else f"{kpi['change']:+.1f}%"
	elif isinstance(kpi.get("change_points"), int | float):
		text = f"{kpi['change_points']:+.1f} pts"
	else:
		return ""
	return f"{text} vs {kpi['prior_label']}" if kpi.get("prior_label") else text


def _header(plt, fig, meta: dict, title: str, subtitle: str, company: str | None) -> None:
	letter_head = meta.get("letter_head_image")
	if letter_head is not None:
		ax = fig.add_axes([0.03, 0.915, 0.3, 0.07])
		ax.imshow(letter_head)
		ax.axis("off")
	else:
		fig.text(0.03, 0.95, meta.get("letter_head") or company or "", fontsize=12, weight="bold")
	made = " ".join(
		p
		for p in (
			f"Generated on {meta['generated_on']}" if meta.get("generated_on") else "",
			f"by {meta['generated_by']}" if meta.get("generated_by") else "",
		)
		if p
	)
	fig.text(0.97, 0.95, made, fontsize=7, ha="right", color="#555555")
	fig.add_artist(plt.Line2D([0.03, 0.97], [0.905, 0.905], color="#bbbbbb", linewidth=0.6))
	fig.text(0.03, 0.865, textwrap.shorten(title, 90), fontsize=15, weight="bold")
	fig.text(0.03, 0.835, subtitle, fontsize=8.5, color="#333333")


def panel_scope(panel: dict, meta: dict) -> dict:
	"""Whose figures a page shows: the panel's own company, currency and period, else those its
	chart carries, else the site's (`meta`); `partial` is the label of a last period still running."""
	chart = scope_of(panel.get("chart"))
	scope = {}
	for key in ("company", "currency", "period"):
		scope[key] = panel.get(key) or chart.get(key) or meta.get(key)
	scope["partial"] = panel.get("partial") or chart.get("partial")
	return scope


def _facts(scope: dict) -> str:
	period = scope.get("period") or NOT_GIVEN
	if scope.get("partial"):
		period = f"{period} ({scope['partial']} is not over: figures so far)"
	parts = [
		("Company", scope.get("company") or NOT_GIVEN),
		("Period", period),
		("Currency", scope.get("currency") or NOT_GIVEN),
	]
	return "    ".join(f"{label}: {value}" for label, value in parts)


def _grid(ax, rows: list[list[str]], header: list[str], numeric: list[bool], font: float) -> None:
	ax.axis("off")
	if not rows:
		return
	table = ax.table(cellText=rows, colLabels=header, loc="upper left", cellLoc="left", colLoc="left")
	table.auto_set_font_size(False)
	table.set_fontsize(font)
	table.scale(1, 1.25)
	for (row, col), cell in table.get_celld().items():
		cell.set_edgecolor("#dddddd")
		cell.set_linewidth(0.4)
		if numeric[col]:
			cell.set_text_props(ha="right")
			cell._loc = "right"
		if row == 0:
			cell.set_text_props(weight="bold", color="#333333")
			cell.set_facecolor("#f4f5f6")


def _kpi_rows(kpis: list[dict], fmt, currency) -> list[list[str]]:
	return [
		[
			textwrap.shorten(str(k.get("label", "")), 38),
			fmt(k.get("value"), k.get("unit"), currency),
			change_text(k),
		]
		for k in kpis
	]


def _table_rows(table: dict | None, fmt, currency) -> tuple[list[str], list[list[str]], list[bool]]:
	if not isinstance(table, dict) or not table.get("columns"):
		return [], [], []
	header = [str(c).replace("_", " ").capitalize() for c in table["columns"]][:TABLE_COLUMNS]
	raw = [list(r)[:TABLE_COLUMNS] for r in (table.get("rows") or [])[:TABLE_ROWS]]
	numeric = [
		bool(raw) and all(isinstance(r[i], int | float) for r in raw if i < len(r) and r[i] is not None)
		for i in range(len(header))
	]
	money = [
		any(w in h.lower() for w in ("amount", "revenue", "sales", "total", "value", "spend", "outstanding"))
		for h in header
	]
	percent = [any(w in h.lower() for w in ("%", "pct", "share", "rate")) for h in header]

	def unit(i: int) -> str | None:
		return "%" if percent[i] else "currency" if money[i] else None

	rows = [
		[
			fmt(v, unit(i), currency)
			if numeric[i] and v is not None
			else textwrap.shorten(str(v if v is not None else ""), 28)
			for i, v in enumerate(r)
		]
		for r in raw
	]
	return header, rows, numeric


def _page(plt, pdf, meta: dict, title: str, panel: dict, number: int, pages: int) -> None:
	fmt = meta.get("format") or default_format
	scope = panel_scope(panel, meta)
	currency = scope["currency"]
	fig = plt.figure(figsize=LANDSCAPE)
	subtitle = _facts(scope)
	heading = title if not panel.get("title") or panel.get("title") == title else f"{title}: {panel['title']}"
	_header(plt, fig, meta, heading, subtitle, scope["company"])
	kpis = panel.get("kpis") or []
	kpi_height = min(0.3, 0.033 * (len(kpis) + 1)) if kpis else 0
	if kpis:
		_grid(
			fig.add_axes([0.03, 0.8 - kpi_height, 0.44, kpi_height]),
			_kpi_rows(kpis, fmt, currency),
			["Figure", "Value", "Change"],
			[False, True, True],
			8,
		)
	header, rows, numeric = _table_rows(panel.get("table"), fmt, currency)
	top = 0.8 - kpi_height - 0.04
	if rows:
		_grid(fig.add_axes([0.03, 0.1, 0.44, top - 0.1]), rows, header, numeric, 6.5)
	notes = (panel.get("observations") or []) + (panel.get("watch_outs") or [])
	if panel.get("chart"):
		_draw(plt, fig.add_axes([0.55, 0.3, 0.41, 0.5]), panel["chart"])
	y = 0.2 if panel.get("chart") else 0.8
	for sentence in notes[:5]:
		for line in textwrap.wrap(sentence, 80)[:2]:
			fig.text(0.53, y, line, fontsize=7.5)
			y -= 0.022
	fig.text(0.5, 0.03, f"Page {number} of {pages}", fontsize=7, ha="center", color="#555555")
	pdf.savefig(fig)
	plt.close(fig)


def render(dashboard: dict, meta: dict | None = None) -> bytes:
	"""The dashboard as a report: per analysis one landscape page with the site's letter head, title,
	company, period, currency, who generated it and when, its KPIs and table formatted as in the chat,
	its chart beside them, and page numbers. `meta` comes from the site (see the module docstring).
	Raises PdfUnavailable when matplotlib (the `pdf` extra) is not installed."""
	plt, PdfPages = _pyplot()
	meta = dict(meta or {})
	panels = dashboard.get("panels") or [{"title": "", "kpis": dashboard.get("kpis") or []}]
	title = dashboard.get("title", "Dashboard")
	buffer = io.BytesIO()
	with PdfPages(buffer) as pdf:
		for number, panel in enumerate(panels, start=1):
			_page(plt, pdf, meta, title, panel, number, len(panels))
		info = pdf.infodict()
		info["Title"] = title
		if meta.get("generated_by"):
			info["Author"] = meta["generated_by"]
	return buffer.getvalue()
