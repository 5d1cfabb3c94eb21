"""A PDF of a dashboard, drawn with matplotlib from the same figure data the chat shows.

Plotly's own image export needs a Chrome binary that servers rarely have; matplotlib is a
plain wheel, so the PDF works wherever the package installs. Only the trace types this
package produces are drawn (scatter, bar, pie, heatmap); anything else is listed, not drawn.
"""

from __future__ import annotations

import io
import textwrap

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.backends.backend_pdf import PdfPages  # noqa: E402

from analytics.charts import PALETTE  # noqa: E402
from analytics.result import num  # noqa: E402

PAGE = (8.27, 11.69)  # A4 portrait, inches


def _draw(ax, figure: dict) -> None:
	title = ((figure.get("layout") or {}).get("title") or {}).get("text", "")
	ax.set_title(textwrap.shorten(title, 70), fontsize=10)
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


def _cover(pdf: PdfPages, dashboard: dict) -> None:
	fig = plt.figure(figsize=PAGE)
	fig.text(0.08, 0.95, dashboard.get("title", "Dashboard"), fontsize=18, weight="bold")
	y = 0.9
	for kpi in dashboard.get("kpis", [])[:24]:
		value = kpi.get("value")
		text = value if isinstance(value, str) else num(value, kpi.get("unit"))
		change = f"  ({kpi['change']:+.1f}%)" if isinstance(kpi.get("change"), int | float) else ""
		fig.text(0.08, y, textwrap.shorten(f"{kpi.get('label')}: {text}{change}", 95), fontsize=9)
		y -= 0.022
	y -= 0.02
	for panel in dashboard.get("panels", []):
		if y < 0.08:
			break
		fig.text(0.08, y, panel.get("title") or "", fontsize=10, weight="bold")
		y -= 0.02
		for sentence in (panel.get("observations") or []) + (panel.get("watch_outs") or []):
			for line in textwrap.wrap(sentence, 100)[:2]:
				if y < 0.05:
					break
				fig.text(0.1, y, line, fontsize=8)
				y -= 0.017
		y -= 0.01
	pdf.savefig(fig)
	plt.close(fig)


def render(dashboard: dict) -> bytes:
	"""The dashboard as PDF bytes: a cover page of KPIs and findings, then two charts per page."""
	buffer = io.BytesIO()
	with PdfPages(buffer) as pdf:
		_cover(pdf, dashboard)
		panels = [p for p in dashboard.get("panels", []) if p.get("chart")]
		for start in range(0, len(panels), 2):
			fig, axes = plt.subplots(2, 1, figsize=PAGE)
			for ax, panel in zip(axes, panels[start : start + 2], strict=False):
				_draw(ax, panel["chart"])
			if len(panels[start : start + 2]) == 1:
				axes[1].axis("off")
			fig.tight_layout(pad=2.0)
			pdf.savefig(fig)
			plt.close(fig)
		info = pdf.infodict()
		info["Title"] = dashboard.get("title", "Dashboard")
	return buffer.getvalue()
