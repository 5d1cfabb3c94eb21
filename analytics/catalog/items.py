"""Items and products: top sellers, ABC and XYZ classes, units and prices, movers, baskets, price-volume."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analytics import blocks, charts
from analytics.catalog.base import TOP_N, Analysis, Param
from analytics.catalog.rows import MONTHS, breakdown_row, ratio_trend_row, recent_windows, trend_row
from analytics.compare import drivers
from analytics.result import TABLE_MAX_ROWS, empty_result, kpi, num, rounded, table


def abc_items(data: dict, p: dict) -> dict:
	out = blocks.abc(
		data["sales"],
		"item",
		"amount",
		label="Revenue",
		noun="item",
		a=p["a_share"] / 100,
		b=p["b_share"] / 100,
	)
	out.pop("classes", None)
	return out


def xyz(data: dict, p: dict) -> dict:
	frame = data["sales"]
	if not len(frame):
		return empty_result()
	month = frame["date"].to_numpy().astype("datetime64[M]")
	months = np.arange(month.min(), month.max() + 1)
	grid = (
		pd.DataFrame({"item": frame["item"].to_numpy(), "month": month, "q": frame["quantity"].to_numpy()})
		.pivot_table(index="item", columns="month", values="q", aggfunc="sum", fill_value=0.0)
		.reindex(columns=months, fill_value=0.0)
	)
	values = grid.to_numpy(dtype=float)
	mean = values.mean(axis=1)
	std = values.std(axis=1)
	with np.errstate(divide="ignore", invalid="ignore"):
		cv = np.where(mean > 0, std / mean, np.inf)
	classes = np.where(cv <= p["x_cv"], "X", np.where(cv <= p["y_cv"], "Y", "Z"))
	order = np.argsort(-values.sum(axis=1), kind="stable")
	rows = [
		[str(grid.index[i]), rounded(mean[i]), rounded(cv[i]) if np.isfinite(cv[i]) else None, classes[i]]
		for i in order
	]
	counts = {c: int((classes == c).sum()) for c in "XYZ"}
	warnings = (
		[] if len(months) >= 6 else [f"Only {len(months)} months of data: demand variability is rough."]
	)
	return {
		"kpis": [kpi(f"Class {c} items", counts[c], "count") for c in "XYZ"],
		"observations": [
			f"Over {len(months)} months: {counts['X']} steady items (CV ≤ {p['x_cv']}), {counts['Y']} variable, "
			f"{counts['Z']} erratic (CV > {p['y_cv']})."
		],
		"recommendations": ["Keep safety stock for class Z items or make them to order."]
		if counts["Z"]
		else [],
		"table": table(["item", "average monthly quantity", "coefficient of variation", "class"], rows),
		"chart": charts.bar(
			"Items by demand variability", ["X", "Y", "Z"], [counts[c] for c in "XYZ"], "Items"
		),
		"warnings": warnings,
	}


def _item_filter(frame: pd.DataFrame, p: dict) -> pd.DataFrame:
	if p.get("item"):
		return frame[frame["item"] == p["item"]]
	return frame


def _windows(frame: pd.DataFrame, p: dict) -> tuple[pd.DataFrame, pd.DataFrame, str, str]:
	prior_start, current_start, current_end = recent_windows(frame["date"], p["months"], p.get("end"))
	dates = frame["date"]
	prior = frame[(dates >= prior_start) & (dates < current_start)]
	current = frame[(dates >= current_start) & (dates < current_end)]
	last = current_end - pd.Timedelta(days=1)
	prior_text = f"{prior_start.date()} to {(current_start - pd.Timedelta(days=1)).date()}"
	return prior, current, prior_text, f"{current_start.date()} to {last.date()}"


def movers(data: dict, p: dict) -> dict:
	frame = data["sales"]
	if not len(frame):
		return empty_result()
	prior, current, prior_text, current_text = _windows(frame, p)
	found = drivers(prior, current, "item", "amount", p["top_n"])
	before, after = float(prior["amount"].sum()), float(current["amount"].sum())
	rows = [
		[r["name"], rounded(r["before"]), rounded(r["after"]), rounded(r["change"])] for r in found["all"]
	]
	observations = [f"Revenue {num(after)} in {current_text} against {num(before)} in {prior_text}."]
	if found["up"]:
		observations.append(
			"Biggest risers: "
			+ ", ".join(f"{r['name']} ({r['change']:+,.0f})" for r in found["up"][:3])
			+ "."
		)
	if found["down"]:
		observations.append(
			"Biggest fallers: "
			+ ", ".join(f"{r['name']} ({r['change']:+,.0f})" for r in found["down"][:3])
			+ "."
		)
	return {
		"kpis": [
			kpi("Revenue, current window", after, "currency", prior=before),
			kpi("Items rising", found["rising"], "count"),
			kpi("Items falling", found["falling"], "count"),
		],
		"observations": observations,
		"table": table(["item", "before", "after", "change"], rows),
		"chart": charts.bar(
			"Change in revenue by item",
			[r[0] for r in rows[:15]],
			[r[3] for r in rows[:15]],
			"Change",
			horizontal=True,
		),
	}


def _round(value: float) -> float | None:
	"""`rounded` for a plain float, inlined for the thousands of pair rows."""
	if not math.isfinite(value):
		return None
	return round(value, 2 if abs(value) >= 1 or value == 0 else 4)


def bought_together(data: dict, p: dict) -> dict:
	frame = data["sales"]
	if not len(frame):
		return empty_result()
	# Integer codes keep the self-join and the pair count cheap on large line tables.
	doc_codes, _ = pd.factorize(frame["document"])
	item_codes, item_names = pd.factorize(frame["item"])
	# Distinct (document, item) lines as one integer each, sorted: a line's key orders by
	# document and then item, so one sort both finds the distinct lines and groups them.
	stride = len(item_names) + 1
	line_keys = np.sort((doc_codes.astype(np.int64) + 1) * stride + item_codes + 1)
	line_keys = line_keys[np.r_[True, line_keys[1:] != line_keys[:-1]]] if line_keys.size else line_keys
	line_docs, line_items = line_keys // stride - 1, line_keys % stride - 1
	per_doc = np.bincount(line_docs + 1)
	documents = int(np.count_nonzero(per_doc))
	sizes = per_doc[line_docs + 1]
	# Very large documents would square the work; their pairs say little about baskets anyway.
	multi = (sizes > 1) & (sizes <= p["max_lines"])
	# Every pair within a document from positions in the sorted lines (no self-join): line i is
	# paired with each later line of its document.
	ordered = line_keys[multi]
	doc, item = ordered // stride - 1, ordered % stride - 1
	starts = np.r_[0, np.flatnonzero(np.diff(doc)) + 1] if doc.size else np.array([], dtype=np.int64)
	ends = np.r_[starts[1:], doc.size] if doc.size else starts
	end_of_line = np.repeat(ends, ends - starts)
	later = end_of_line - np.arange(doc.size) - 1
	first = np.repeat(np.arange(doc.size), later)
	offsets = np.arange(first.size) - np.repeat(np.cumsum(later) - later, later)
	second = first + 1 + offsets
	if not first.size:
		return {**empty_result("items bought together"), "kpis": [kpi("Invoices", documents, "count")]}
	width = len(item_names)
	key = item[first] * width + item[second]
	if width * width <= 50_000_000:
		# Counting into a table of every pair is linear; sorting millions of keys is not.
		table_counts = np.bincount(key, minlength=width * width)
		unique = np.flatnonzero(table_counts)
		counts = table_counts[unique]
	else:
		unique, counts = np.unique(key, return_counts=True)
	keep = counts >= p["min_count"]
	unique, counts = unique[keep], counts[keep]
	order = np.lexsort((unique, -counts))
	item_docs = np.bincount(line_items, minlength=width)
	names = np.array([str(n) for n in item_names], dtype=object)
	# Rows only for what the table keeps; the count covers them all.
	pair_count = int(order.size)
	order = order[:TABLE_MAX_ROWS]
	a, b = np.divmod(unique[order], width)
	swap = names[a] > names[b]
	first, second = np.where(swap, names[b], names[a]), np.where(swap, names[a], names[b])
	together = counts[order]
	support = together / documents
	lift = support / ((item_docs[a] / documents) * (item_docs[b] / documents))
	rows = [
		[f"{x} + {y}", int(n), _round(s * 100), _round(v)]
		for x, y, n, s, v in zip(
			first, second, together.tolist(), support.tolist(), lift.tolist(), strict=True
		)
	]
	observations = [
		f"{pair_count} item pairs appear together on at least {p['min_count']} of {documents} invoices."
	]
	if rows:
		observations.append(f"Most frequent pair: {rows[0][0]} on {rows[0][1]} invoices (lift {rows[0][3]}).")
	return {
		"kpis": [kpi("Invoices", documents, "count"), kpi("Frequent pairs", pair_count, "count")],
		"observations": observations,
		"recommendations": ["Bundle or cross-sell the pairs with lift above 1."] if rows else [],
		"table": table(["pair", "invoices", "support %", "lift"], rows, total_rows=pair_count),
		"chart": charts.bar(
			"Items bought together",
			[r[0] for r in rows[:15]],
			[r[1] for r in rows[:15]],
			"Invoices",
			horizontal=True,
		),
	}


def price_volume(data: dict, p: dict) -> dict:
	frame = data["sales"]
	if not len(frame):
		return empty_result()
	prior, current, prior_text, current_text = _windows(frame, p)
	a = prior.groupby("item")[["amount", "quantity"]].sum()
	b = current.groupby("item")[["amount", "quantity"]].sum()
	both = a.merge(b, left_index=True, right_index=True, suffixes=("_0", "_1"))
	both = both[(both["quantity_0"] != 0) & (both["quantity_1"] != 0)]
	p0 = both["amount_0"] / both["quantity_0"]
	p1 = both["amount_1"] / both["quantity_1"]
	price = ((p1 - p0) * both["quantity_1"]).sum()
	volume = ((both["quantity_1"] - both["quantity_0"]) * p0).sum()
	new = b.loc[~b.index.isin(both.index), "amount"].sum()
	lost = a.loc[~a.index.isin(both.index), "amount"].sum()
	before, after = float(a["amount"].sum()), float(b["amount"].sum())
	parts = [("Price", price), ("Volume", volume), ("New items", new), ("Lost items", -lost)]
	return {
		"kpis": [
			kpi("Revenue change", after - before, "currency"),
			kpi("Price effect", price, "currency"),
			kpi("Volume effect", volume, "currency"),
			kpi("New items", new, "currency"),
			kpi("Lost items", -lost, "currency"),
		],
		"observations": [
			f"Revenue moved from {num(before)} ({prior_text}) to {num(after)} ({current_text}): "
			+ ", ".join(f"{name.lower()} {v:+,.0f}" for name, v in parts)
			+ "."
		],
		"table": table(["effect", "amount"], [[n, rounded(v)] for n, v in parts]),
		"chart": charts.bar(
			"Revenue change: price, volume, new and lost items",
			[n for n, _ in parts],
			[rounded(v) for _, v in parts],
			"Change",
		),
	}


ANALYSES = [
	breakdown_row(
		"items.top",
		"Top items",
		"Items ranked by revenue with units sold, shares and concentration; the best sellers.",
		"sales",
		"item",
		("amount", "quantity"),
		"amount",
		label="Revenue",
		unit="currency",
		noun="item",
		extra={"quantity": ("quantity", "sum")},
		tags=("best sellers", "products", "pareto"),
	),
	Analysis(
		"items.abc",
		"items",
		"ABC classification of items",
		"Items classed A (first 80% of revenue), B (next 15%) and C (last 5%); where to focus stock and sales effort.",
		{"sales": ("item", "amount")},
		abc_items,
		(
			Param(
				"a_share",
				"float",
				80.0,
				"cumulative revenue share (%) that closes class A",
				minimum=1,
				maximum=99,
			),
			Param(
				"b_share",
				"float",
				95.0,
				"cumulative revenue share (%) that closes class B",
				minimum=1,
				maximum=100,
			),
		),
		tags=("pareto", "classification"),
	),
	Analysis(
		"items.xyz",
		"items",
		"XYZ demand variability",
		"Items classed by how steady their monthly demand is (coefficient of variation): X steady, Y variable, Z erratic.",
		{"sales": ("date", "item", "quantity")},
		xyz,
		(
			Param("x_cv", "float", 0.5, "largest CV for class X", minimum=0),
			Param("y_cv", "float", 1.0, "largest CV for class Y", minimum=0),
		),
		tags=("variability", "forecastability", "demand"),
	),
	trend_row(
		"items.quantity_trend",
		"Units sold per month",
		"Quantity sold per period with a forecast; volume rather than value.",
		"sales",
		("quantity",),
		"quantity",
		label="Units sold",
		unit="units",
		tags=("volume", "quantity"),
	),
	ratio_trend_row(
		"items.price_trend",
		"Average selling price",
		"Revenue per unit sold per period, for one item (parameter item) or all; are prices holding?",
		"sales",
		("amount", "quantity", "item"),
		"amount",
		"quantity",
		label="Average price",
		unit="currency",
		scale=1.0,
		extra_params=(Param("item", "str", None, "item code (default: all items)"),),
		filter_by=_item_filter,
		tags=("pricing", "unit price"),
	),
	Analysis(
		"items.movers",
		"items",
		"Rising and falling items",
		"Items whose revenue rose or fell most in the last N months (default 3) against the N months before.",
		{"sales": ("date", "item", "amount")},
		movers,
		(MONTHS, TOP_N),
		tags=("growth", "decline", "winners", "losers"),
	),
	Analysis(
		"items.bought_together",
		"items",
		"Items bought together",
		"Pairs of items that appear on the same invoice, with support and lift; for bundles and cross-selling.",
		{"sales": ("document", "item")},
		bought_together,
		(
			Param("min_count", "int", 2, "least number of invoices a pair must share", minimum=1),
			Param("max_lines", "int", 50, "skip invoices with more distinct items than this", minimum=2),
		),
		tags=("basket", "cross-sell", "market basket", "affinity"),
	),
	Analysis(
		"items.price_volume",
		"items",
		"Price, volume and mix of the revenue change",
		"Splits the change in revenue between the last N months and the N before into price, volume, new items and "
		"lost items.",
		{"sales": ("date", "item", "amount", "quantity")},
		price_volume,
		(MONTHS,),
		tags=("bridge", "variance", "price effect"),
	),
]
