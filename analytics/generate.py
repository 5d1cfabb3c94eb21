"""Deterministic generated datasets (seeded numpy) for tests, benchmarks and demos.

Sales have a trend, a yearly season, a few large customers and returns; the other datasets
are shaped so that every analysis in the catalogue has something to find.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

START = np.datetime64("2022-01-01")


def _names(prefix: str, count: int) -> np.ndarray:
	return np.array([f"{prefix}-{i:04d}" for i in range(count)], dtype=object)


def _dates(rng: np.random.Generator, n: int, days: int, growth: float = 0.3) -> np.ndarray:
	"""Dates over `days` with more activity later (growth) and a yearly season."""
	grid = np.arange(days)
	weight = (1 + growth * grid / days) * (1 + 0.25 * np.sin(2 * np.pi * grid / 365.25 - 1.2))
	weight /= weight.sum()
	return (START + rng.choice(grid, size=n, p=weight).astype("timedelta64[D]")).astype("datetime64[ns]")


def sales(
	n: int = 10_000,
	seed: int = 1,
	days: int = 3 * 365,
	customers: int | None = None,
	items: int | None = None,
) -> pd.DataFrame:
	rng = np.random.default_rng(seed)
	customers = customers or max(5, min(2000, n // 50))
	items = items or max(5, min(500, n // 100))
	# Zipf-like weights: a few customers and items carry most of the revenue.
	cw = 1 / np.arange(1, customers + 1) ** 1.1
	iw = 1 / np.arange(1, items + 1) ** 0.9
	party = rng.choice(customers, size=n, p=cw / cw.sum())
	item = rng.choice(items, size=n, p=iw / iw.sum())
	price = np.round(rng.lognormal(3.5, 0.6, items), 2)
	margin = rng.uniform(-0.05, 0.5, items)
	quantity = rng.integers(1, 20, n).astype(float)
	returns = rng.random(n) < 0.02
	quantity[returns] *= -1
	amount = np.round(quantity * price[item] * rng.uniform(0.9, 1.1, n), 2)
	cost = np.round(amount * (1 - margin[item]), 2)
	documents = np.maximum(1, n // 4)
	document = rng.integers(0, documents, n)
	date = _dates(rng, n, days)
	# Lines of one document share its date.
	doc_date = _dates(rng, documents, days)
	date = doc_date[document]
	territories = np.array(["North", "South", "East", "West", "Export"], dtype=object)
	groups = np.array(["Hardware", "Software", "Services", "Consumables", "Spares"], dtype=object)
	return pd.DataFrame(
		{
			"id": np.arange(n).astype(str),
			"document": np.char.add("SINV-", document.astype(str)).astype(object),
			"date": date,
			"party": _names("CUST", customers)[party],
			"item": _names("ITEM", items)[item],
			"item_group": groups[item % groups.size],
			"territory": territories[party % territories.size],
			"amount": amount,
			"quantity": quantity,
			"cost": cost,
			"docstatus": np.where(rng.random(n) < 0.01, 2, 1),
		}
	)


def purchases(n: int = 5_000, seed: int = 2, days: int = 3 * 365) -> pd.DataFrame:
	rng = np.random.default_rng(seed)
	suppliers, items = max(3, min(300, n // 40)), max(5, min(400, n // 60))
	sw = 1 / np.arange(1, suppliers + 1) ** 1.2
	party = rng.choice(suppliers, size=n, p=sw / sw.sum())
	item = rng.integers(0, items, n)
	date = _dates(rng, n, days, growth=0.2)
	# Prices drift upward over time to give price analyses something to measure.
	drift = 1 + 0.08 * (date - date.min()).astype("timedelta64[D]").astype(float) / days
	price = rng.lognormal(3.0, 0.5, items)
	quantity = rng.integers(1, 50, n).astype(float)
	groups = np.array(["Raw material", "Packaging", "Services", "Spares"], dtype=object)
	return pd.DataFrame(
		{
			"id": np.arange(n).astype(str),
			"document": np.char.add("PINV-", (np.arange(n) // 3).astype(str)).astype(object),
			"date": date,
			"party": _names("SUPP", suppliers)[party],
			"item": _names("ITEM", items)[item],
			"item_group": groups[item % groups.size],
			"amount": np.round(quantity * price[item] * drift, 2),
			"quantity": quantity,
		}
	)


def purchase_orders(n: int = 3_000, seed: int = 3, days: int = 2 * 365) -> pd.DataFrame:
	rng = np.random.default_rng(seed)
	suppliers = max(3, min(100, n // 30))
	party = rng.integers(0, suppliers, n)
	date = _dates(rng, n, days)
	promised = rng.integers(5, 30, n)
	slowness = rng.uniform(0.7, 1.6, suppliers)
	actual = np.round(promised * slowness[party] * rng.uniform(0.8, 1.3, n)).astype(int)
	expected = date + promised.astype("timedelta64[D]")
	received = date + actual.astype("timedelta64[D]")
	last = date.max()
	open_ = received > last
	quantity = rng.integers(1, 100, n).astype(float)
	received_quantity = np.where(open_, 0.0, np.round(quantity * rng.choice([1.0, 1.0, 1.0, 0.9, 0.5], n)))
	received = received.astype("datetime64[ns]").astype(object)
	received[open_] = None
	return pd.DataFrame(
		{
			"id": np.arange(n).astype(str),
			"document": np.char.add("PO-", (np.arange(n) // 2).astype(str)).astype(object),
			"date": date,
			"party": _names("SUPP", suppliers)[party],
			"item": _names("ITEM", 200)[rng.integers(0, 200, n)],
			"quantity": quantity,
			"amount": np.round(quantity * rng.uniform(5, 80, n), 2),
			"expected_date": expected,
			"received_date": pd.to_datetime(pd.Series(received)),
			"received_quantity": received_quantity,
		}
	)


def stock(items: int = 300, seed: int = 4) -> pd.DataFrame:
	rng = np.random.default_rng(seed)
	warehouses = np.array(["Stores", "Finished Goods", "Transit"], dtype=object)
	rows = items * 2
	item = np.arange(rows) % items
	quantity = np.maximum(0, np.round(rng.normal(50, 40, rows)))
	value = np.round(quantity * rng.lognormal(3.0, 0.6, items)[item], 2)
	groups = np.array(["Hardware", "Software", "Services", "Consumables", "Spares"], dtype=object)
	return pd.DataFrame(
		{
			"item": _names("ITEM", items)[item],
			"item_group": groups[item % groups.size],
			"warehouse": warehouses[(np.arange(rows) // items) % warehouses.size],
			"quantity": quantity,
			"value": value,
			"reorder_level": np.where(rng.random(rows) < 0.5, rng.integers(10, 60, rows), 0).astype(float),
		}
	)


def stock_moves(n: int = 10_000, items: int = 300, seed: int = 5, days: int = 2 * 365) -> pd.DataFrame:
	rng = np.random.default_rng(seed)
	# Some items stop moving part-way, so slow and dead stock exist.
	item = rng.integers(0, items, n)
	date = _dates(rng, n, days)
	stop = np.datetime64("2022-01-01") + (rng.uniform(0.3, 1.2, items) * days).astype("timedelta64[D]")
	keep = date.astype("datetime64[D]") <= stop[item]
	item, date = item[keep], date[keep]
	m = item.size
	quantity = np.where(rng.random(m) < 0.45, 1, -1) * rng.integers(1, 30, m)
	return pd.DataFrame(
		{
			"id": np.arange(m).astype(str),
			"date": date,
			"item": _names("ITEM", items)[item],
			"warehouse": np.array(["Stores", "Finished Goods"], dtype=object)[item % 2],
			"quantity": quantity.astype(float),
			"value": np.round(quantity * rng.uniform(5, 50, m), 2),
		}
	)


def _ledger(n: int, seed: int, prefix: str, party_prefix: str, days: int) -> pd.DataFrame:
	rng = np.random.default_rng(seed)
	parties = max(3, min(400, n // 20))
	pw = 1 / np.arange(1, parties + 1)
	party = rng.choice(parties, size=n, p=pw / pw.sum())
	posting = _dates(rng, n, days)
	terms = rng.choice([15, 30, 45, 60], n)
	due = posting + terms.astype("timedelta64[D]")
	amount = np.round(rng.lognormal(7, 1, n), 2)
	age = (posting.max() - posting).astype("timedelta64[D]").astype(int)
	# Older invoices are more likely paid; a slow tail stays open.
	paid = rng.random(n) < np.clip(age / 120, 0, 0.97)
	partly = rng.random(n) < 0.1
	outstanding = np.where(paid, 0.0, np.where(partly, np.round(amount * 0.5, 2), amount))
	territories = np.array(["North", "South", "East", "West"], dtype=object)
	return pd.DataFrame(
		{
			"document": np.char.add(prefix, np.arange(n).astype(str)).astype(object),
			"party": _names(party_prefix, parties)[party],
			"territory": territories[party % territories.size],
			"posting_date": posting,
			"due_date": due,
			"amount": amount,
			"outstanding": outstanding,
		}
	)


def receivables(n: int = 5_000, seed: int = 6, days: int = 2 * 365) -> pd.DataFrame:
	return _ledger(n, seed, "SINV-", "CUST", days)


def payables(n: int = 3_000, seed: int = 7, days: int = 2 * 365) -> pd.DataFrame:
	return _ledger(n, seed, "PINV-", "SUPP", days).drop(columns=["territory"])


def payments(n: int = 5_000, seed: int = 8, days: int = 2 * 365) -> pd.DataFrame:
	rng = np.random.default_rng(seed)
	incoming = rng.random(n) < 0.55
	amount = np.round(rng.lognormal(7, 1, n), 2)
	amount[rng.random(n) < 0.003] *= 40
	return pd.DataFrame(
		{
			"document": np.char.add("PE-", np.arange(n).astype(str)).astype(object),
			"date": _dates(rng, n, days),
			"party": np.where(
				incoming,
				_names("CUST", 300)[rng.integers(0, 300, n)],
				_names("SUPP", 100)[rng.integers(0, 100, n)],
			),
			"party_type": np.where(incoming, "Customer", "Supplier").astype(object),
			"direction": np.where(incoming, "in", "out").astype(object),
			"amount": amount,
			"mode": np.array(["Bank Transfer", "Cash", "Card", "Cheque"], dtype=object)[
				rng.choice(4, n, p=[0.6, 0.1, 0.2, 0.1])
			],
		}
	)


INCOME_ACCOUNTS = ["Sales - Products", "Sales - Services", "Other Income"]
EXPENSE_ACCOUNTS = [
	"Cost of Goods Sold",
	"Salaries",
	"Rent",
	"Utilities",
	"Marketing",
	"Travel",
	"Software",
	"Freight",
]


def gl(n: int = 10_000, seed: int = 9, days: int = 2 * 365) -> pd.DataFrame:
	rng = np.random.default_rng(seed)
	is_income = rng.random(n) < 0.35
	accounts = np.where(
		is_income,
		np.array(INCOME_ACCOUNTS, dtype=object)[rng.integers(0, len(INCOME_ACCOUNTS), n)],
		np.array(EXPENSE_ACCOUNTS, dtype=object)[rng.integers(0, len(EXPENSE_ACCOUNTS), n)],
	)
	amount = np.round(rng.lognormal(6.5, 0.9, n) * np.where(is_income, 1.6, 1.0), 2)
	amount[rng.random(n) < 0.002] *= 30
	return pd.DataFrame(
		{
			"id": np.arange(n).astype(str),
			"date": _dates(rng, n, days),
			"account": accounts,
			"root_type": np.where(is_income, "Income", "Expense").astype(object),
			"debit": np.where(is_income, 0.0, amount),
			"credit": np.where(is_income, amount, 0.0),
			"cost_center": np.array(["Main", "Sales", "Operations", "Admin"], dtype=object)[
				rng.integers(0, 4, n)
			],
			"voucher_type": np.where(is_income, "Sales Invoice", "Journal Entry").astype(object),
			"document": np.char.add("JV-", (np.arange(n) // 2).astype(str)).astype(object),
			"party": None,
		}
	)


def budget(seed: int = 10, scale: float = 1.0) -> pd.DataFrame:
	rng = np.random.default_rng(seed)
	return pd.DataFrame(
		{
			"account": EXPENSE_ACCOUNTS,
			"cost_center": "Main",
			"amount": np.round(rng.uniform(0.5e6, 2e6, len(EXPENSE_ACCOUNTS)) * scale, 2),
		}
	)


def employees(n: int = 300, seed: int = 11, days: int = 6 * 365) -> pd.DataFrame:
	rng = np.random.default_rng(seed)
	joined = (np.datetime64("2019-01-01") + rng.integers(0, days, n).astype("timedelta64[D]")).astype(
		"datetime64[ns]"
	)
	leaves = rng.random(n) < 0.3
	stay = rng.integers(60, 1500, n).astype("timedelta64[D]")
	relieved = (joined + stay).astype(object)
	end = np.datetime64("2024-12-31")
	gone = leaves & ((joined + stay) <= end)
	relieved[~gone] = None
	return pd.DataFrame(
		{
			"employee": _names("EMP", n),
			"department": np.array(["Sales", "Operations", "Finance", "IT", "HR"], dtype=object)[
				rng.choice(5, n, p=[0.3, 0.35, 0.1, 0.15, 0.1])
			],
			"designation": np.array(["Staff", "Senior", "Manager"], dtype=object)[
				rng.choice(3, n, p=[0.6, 0.3, 0.1])
			],
			"branch": np.array(["HQ", "Plant"], dtype=object)[rng.integers(0, 2, n)],
			"joining_date": joined,
			"relieving_date": pd.to_datetime(pd.Series(relieved)),
			"status": np.where(gone, "Left", "Active").astype(object),
		}
	)


def attendance(employees_count: int = 60, days: int = 180, seed: int = 12) -> pd.DataFrame:
	rng = np.random.default_rng(seed)
	dates = np.arange(np.datetime64("2024-07-01"), np.datetime64("2024-07-01") + days)
	dates = dates[np.is_busday(dates)]
	emp = np.repeat(np.arange(employees_count), dates.size)
	day = np.tile(dates, employees_count)
	status = np.array(["Present", "Absent", "On Leave", "Half Day", "Work From Home"], dtype=object)[
		rng.choice(5, emp.size, p=[0.82, 0.04, 0.05, 0.02, 0.07])
	]
	return pd.DataFrame(
		{
			"id": np.arange(emp.size).astype(str),
			"employee": _names("EMP", employees_count)[emp],
			"department": np.array(["Sales", "Operations", "Finance", "IT"], dtype=object)[emp % 4],
			"date": day.astype("datetime64[ns]"),
			"status": status,
		}
	)


def leave(n: int = 800, seed: int = 13) -> pd.DataFrame:
	rng = np.random.default_rng(seed)
	start = (np.datetime64("2024-01-01") + rng.integers(0, 365, n).astype("timedelta64[D]")).astype(
		"datetime64[ns]"
	)
	days = rng.integers(1, 10, n).astype(float)
	return pd.DataFrame(
		{
			"id": np.arange(n).astype(str),
			"employee": _names("EMP", 120)[rng.integers(0, 120, n)],
			"department": np.array(["Sales", "Operations", "Finance", "IT"], dtype=object)[
				rng.integers(0, 4, n)
			],
			"leave_type": np.array(
				["Casual Leave", "Sick Leave", "Privilege Leave", "Leave Without Pay"], dtype=object
			)[rng.choice(4, n, p=[0.4, 0.3, 0.25, 0.05])],
			"from_date": start,
			"to_date": start + (days - 1).astype("timedelta64[D]"),
			"days": days,
			"status": np.where(rng.random(n) < 0.1, "Rejected", "Approved").astype(object),
		}
	)


def projects(n: int = 60, seed: int = 14) -> pd.DataFrame:
	rng = np.random.default_rng(seed)
	start = (np.datetime64("2023-01-01") + rng.integers(0, 600, n).astype("timedelta64[D]")).astype(
		"datetime64[ns]"
	)
	end = start + rng.integers(30, 300, n).astype("timedelta64[D]")
	budget_ = np.round(rng.uniform(1e4, 5e5, n), 2)
	return pd.DataFrame(
		{
			"project": _names("PROJ", n),
			"status": np.array(["Open", "Completed", "Cancelled"], dtype=object)[
				rng.choice(3, n, p=[0.5, 0.45, 0.05])
			],
			"start_date": start,
			"end_date": end,
			"budget": budget_,
			"actual_cost": np.round(budget_ * rng.uniform(0.2, 1.4, n), 2),
			"progress": np.round(rng.uniform(0, 100, n), 0),
		}
	)


def timesheets(n: int = 5_000, seed: int = 15, days: int = 365) -> pd.DataFrame:
	rng = np.random.default_rng(seed)
	return pd.DataFrame(
		{
			"id": np.arange(n).astype(str),
			"date": _dates(rng, n, days),
			"employee": _names("EMP", 40)[rng.integers(0, 40, n)],
			"project": _names("PROJ", 30)[rng.integers(0, 30, n)],
			"activity": np.array(["Development", "Design", "Support", "Meetings", "Testing"], dtype=object)[
				rng.integers(0, 5, n)
			],
			"hours": np.round(rng.uniform(0.5, 8, n), 1),
			"billable": rng.random(n) < 0.7,
			"billing_amount": np.round(rng.uniform(20, 800, n), 2),
			"cost_amount": np.round(rng.uniform(10, 400, n), 2),
		}
	)


def issues(n: int = 2_000, seed: int = 16, days: int = 365) -> pd.DataFrame:
	rng = np.random.default_rng(seed)
	opened = _dates(rng, n, days)
	priority = np.array(["Low", "Medium", "High", "Urgent"], dtype=object)[
		rng.choice(4, n, p=[0.3, 0.4, 0.2, 0.1])
	]
	took = rng.exponential(4, n).round().astype(int)
	resolved = (opened + took.astype("timedelta64[D]")).astype(object)
	still_open = (opened + took.astype("timedelta64[D]")) > opened.max()
	resolved[still_open] = None
	return pd.DataFrame(
		{
			"document": np.char.add("ISS-", np.arange(n).astype(str)).astype(object),
			"opened": opened,
			"resolved": pd.to_datetime(pd.Series(resolved)),
			"status": np.where(still_open, "Open", "Resolved").astype(object),
			"priority": priority,
			"party": _names("CUST", 100)[rng.integers(0, 100, n)],
		}
	)


def all_datasets(sales_rows: int = 10_000, seed: int = 0) -> dict[str, pd.DataFrame]:
	"""One of every dataset, sized from the number of sales lines."""
	scale = max(1, sales_rows // 10)
	return {
		"sales": sales(sales_rows, seed + 1),
		"purchases": purchases(max(100, scale * 5), seed + 2),
		"purchase_orders": purchase_orders(max(100, scale * 3), seed + 3),
		"stock": stock(300, seed + 4),
		"stock_moves": stock_moves(max(500, scale * 10), 300, seed + 5),
		"receivables": receivables(max(100, scale * 5), seed + 6),
		"payables": payables(max(100, scale * 3), seed + 7),
		"payments": payments(max(100, scale * 5), seed + 8),
		"gl": gl(max(200, scale * 10), seed + 9),
		"budget": budget(seed + 10),
		"employees": employees(300, seed + 11),
		"attendance": attendance(60, 180, seed + 12),
		"leave": leave(800, seed + 13),
		"projects": projects(60, seed + 14),
		"timesheets": timesheets(max(100, scale * 5), seed + 15),
		"issues": issues(max(100, scale * 2), seed + 16),
	}


def monthly_series(count: int = 40, seed: int = 7) -> list[np.ndarray]:
	"""Monthly series with level, trend, yearly season, noise, random walk and occasional level shifts."""
	rng = np.random.default_rng(seed)
	out = []
	for i in range(count):
		n = int(rng.integers(36, 84))
		t = np.arange(n)
		level = rng.uniform(50, 500)
		slope = rng.uniform(-0.01, 0.02) * level
		season = 1 + rng.uniform(0, 0.4) * np.sin(2 * np.pi * (t + rng.integers(0, 12)) / 12)
		walk = np.cumsum(rng.normal(0, rng.uniform(0, 0.03) * level, n))
		y = (level + slope * t + walk) * season * (1 + rng.normal(0, rng.uniform(0.02, 0.15), n))
		if i % 5 == 0:
			y[n // 2 :] *= rng.uniform(0.6, 1.4)
		out.append(np.maximum(y, 0))
	return out
