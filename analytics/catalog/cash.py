"""Cash and payments: money in and out over time, modes, payers and payees, balance, unusual payments."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics import anomalies, charts, periods
from analytics.catalog.base import THRESHOLD, Analysis, Param
from analytics.catalog.rows import breakdown_row, freq_param, trend_row
from analytics.result import TABLE_MAX_ROWS, empty_result, kpi, num, rounded, table

INCOMING = {"in", "receive", "received", "incoming"}
OUTGOING = {"out", "pay", "paid", "outgoing"}


def sign(frame: pd.DataFrame) -> np.ndarray:
	"""+1 for money received, -1 for money paid, 0 for anything else (e.g. internal transfers)."""
	codes, uniques = pd.factorize(frame["direction"])
	words = [str(u).strip().lower() for u in uniques]
	signs = np.array([1.0 if w in INCOMING else -1.0 if w in OUTGOING else 0.0 for w in words] + [0.0])
	return signs[codes]


def net(frame: pd.DataFrame) -> np.ndarray:
	return sign(frame) * frame["amount"].to_numpy(dtype=float)


def incoming(frame: pd.DataFrame) -> np.ndarray:
	return sign(frame) > 0


def outgoing(frame: pd.DataFrame) -> np.ndarray:
	return sign(frame) < 0


def running_balance(data: dict, p: dict) -> dict:
	frame = data["payments"]
	if not len(frame):
		return empty_result()
	starts, flows = periods.aggregate(frame["date"].to_numpy(), net(frame), p["freq"])
	labels = periods.labels(starts, p["freq"])
	balance = p["opening_balance"] + np.cumsum(flows)
	low = int(np.argmin(balance))
	negative = int((flows < 0).sum())
	rows = [[lab, rounded(f), rounded(b)] for lab, f, b in zip(labels, flows, balance, strict=True)]
	watch = (
		[f"The balance went below zero: lowest {num(balance[low])} in {labels[low]}."]
		if balance[low] < 0
		else []
	)
	return {
		"kpis": [
			kpi("Closing balance", balance[-1], "currency", prior=p["opening_balance"]),
			kpi("Lowest balance", balance[low], "currency"),
			kpi(f"{periods.NOUN[p['freq']].capitalize()}s with net outflow", negative, "count"),
		],
		"observations": [
			f"From {num(p['opening_balance'])} the payments move the balance to {num(balance[-1])} by {labels[-1]}; "
			f"lowest {num(balance[low])} in {labels[low]}; {negative} of {len(labels)} {periods.NOUN[p['freq']]}s had a net outflow."
		],
		"watch_outs": watch,
		"table": table([periods.NOUN[p["freq"]], "net flow", "balance"], rows[::-1]),
		"chart": charts.line(
			"Running balance from payments", labels, {"Balance": [rounded(b) for b in balance]}, "Balance"
		),
		"warnings": [
			"Balance from payment entries only, starting at opening_balance; journal entries are not included."
		],
	}


def large_payments(data: dict, p: dict) -> dict:
	frame = data["payments"]
	if len(frame) < 3:
		return empty_result("payments to compare")
	hits = []
	for direction, mask in (("in", incoming(frame)), ("out", outgoing(frame))):
		part = frame[mask]
		if len(part) < 3:
			continue
		z = anomalies.robust_z(part["amount"].to_numpy(dtype=float))
		big = part[z > p["threshold"]].assign(z=z[z > p["threshold"]], flow=direction)
		hits.append(big)
	found = pd.concat(hits) if hits else frame.iloc[:0].assign(z=[], flow=[])
	found = found.sort_values("amount", ascending=False)
	# The table shows the first rows only; the rest would be built to be thrown away.
	rows = [
		[
			r.document if "document" in found else None,
			str(r.date.date()),
			r.party if "party" in found else None,
			r.flow,
			rounded(r.amount),
			rounded(r.z),
		]
		for r in found.head(TABLE_MAX_ROWS).itertuples()
	]
	return {
		"kpis": [
			kpi("Unusually large payments", len(found), "count"),
			kpi("Their total", found["amount"].sum(), "currency"),
		],
		"observations": [
			f"{len(found)} payments are unusually large for their direction (robust z above {p['threshold']})."
			+ (
				f" Largest: {rows[0][0]} to/from {rows[0][2]} for {num(rows[0][4])} on {rows[0][1]}."
				if rows
				else ""
			)
		],
		"recommendations": ["Check the unusually large payments have approvals and supporting documents."]
		if rows
		else [],
		"table": table(
			["payment", "date", "party", "direction", "amount", "robust z"], rows, total_rows=len(found)
		),
		"chart": charts.bar(
			"Unusually large payments",
			[str(r[0]) for r in rows[:20]],
			[r[4] for r in rows[:20]],
			"Amount",
			horizontal=True,
		),
	}


ANALYSES = [
	trend_row(
		"cash.net_flow_trend",
		"Net cash flow per month",
		"Payments received minus payments made per period, with a forecast; is the business generating cash?",
		"payments",
		("amount", "direction"),
		net,
		label="Net cash flow",
		unit="currency",
		tags=("cash flow", "liquidity"),
	),
	trend_row(
		"cash.receipts_trend",
		"Cash received per month",
		"Payments received per period with a forecast.",
		"payments",
		("amount", "direction"),
		"amount",
		label="Receipts",
		unit="currency",
		where=incoming,
		tags=("collections", "cash in"),
	),
	trend_row(
		"cash.payments_trend",
		"Cash paid out per month",
		"Payments made per period with a forecast.",
		"payments",
		("amount", "direction"),
		"amount",
		label="Payments",
		unit="currency",
		where=outgoing,
		tags=("cash out", "disbursements"),
	),
	breakdown_row(
		"cash.by_mode",
		"Payments by mode",
		"Payment volume per mode of payment (bank transfer, cash, card...) with shares.",
		"payments",
		"mode",
		("amount",),
		"amount",
		label="Amount",
		unit="currency",
		noun="mode",
		chart="pie",
		tags=("payment method", "channels"),
	),
	breakdown_row(
		"cash.top_payers",
		"Largest payers",
		"Parties who paid us the most in the period, with shares.",
		"payments",
		"party",
		("amount", "direction"),
		"amount",
		label="Received",
		unit="currency",
		noun="payer",
		where=incoming,
		tags=("customers", "receipts"),
	),
	breakdown_row(
		"cash.top_payees",
		"Largest payees",
		"Parties we paid the most in the period, with shares.",
		"payments",
		"party",
		("amount", "direction"),
		"amount",
		label="Paid",
		unit="currency",
		noun="payee",
		where=outgoing,
		tags=("suppliers", "payments"),
	),
	Analysis(
		"cash.running_balance",
		"cash",
		"Running balance from payments",
		"Cumulative net payments per period from an opening balance; when cash would run low.",
		{"payments": ("date", "amount", "direction")},
		running_balance,
		(freq_param("month"), Param("opening_balance", "float", 0.0, "balance before the first period")),
		tags=("cash position", "runway"),
	),
	Analysis(
		"cash.large_payments",
		"cash",
		"Unusually large payments",
		"Individual payments far above the usual size for their direction (robust z-score); for review and control.",
		{"payments": ("date", "amount", "direction")},
		large_payments,
		(THRESHOLD,),
		uses={"payments": ("document", "party")},
		tags=("outliers", "fraud", "controls", "anomalies"),
	),
]
