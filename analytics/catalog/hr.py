"""People and HR: headcount, attrition, departments, tenure, hiring, absence and leave."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics import blocks, charts
from analytics.catalog.base import AS_OF, Analysis, Param
from analytics.catalog.rows import as_of, as_of_note, breakdown_row, ratio_by_row, ratio_trend_row, trend_row
from analytics.result import empty_result, kpi, num, rounded, table

MONTHS_BACK = Param("months", "int", 12, "months to look back from as_of", minimum=1, maximum=120)


def _month_ends(when: np.datetime64, months: int) -> np.ndarray:
	last = np.datetime64(when, "M")
	starts = np.arange(last - months + 1, last + 1)
	ends = (starts + 1).astype("datetime64[D]") - np.timedelta64(1, "D")
	ends[-1] = np.datetime64(when, "D")
	return ends


def headcount_at(frame: pd.DataFrame, days: np.ndarray) -> np.ndarray:
	"""Employees on the books at the end of each day: joined on or before it, not relieved by it."""
	joined = np.sort(frame["joining_date"].dropna().to_numpy().astype("datetime64[D]"))
	left = (
		np.sort(frame["relieving_date"].dropna().to_numpy().astype("datetime64[D]"))
		if "relieving_date" in frame
		else np.array([], dtype="datetime64[D]")
	)
	# Someone relieved on a day is counted that day (their last working day) and gone after it.
	return np.searchsorted(joined, days, side="right") - np.searchsorted(left, days, side="left")


def _when(frame: pd.DataFrame, p: dict) -> np.datetime64:
	return as_of(frame, p, "joining_date", "relieving_date")


def headcount_trend(data: dict, p: dict) -> dict:
	frame = data["employees"]
	if not len(frame):
		return empty_result("employees")
	when = _when(frame, p)
	ends = _month_ends(when, p["months"])
	counts = headcount_at(frame, ends).astype(float)
	labels = [str(np.datetime64(e, "M")) for e in ends]
	out = blocks.trend(
		pd.DataFrame({"date": ends.astype("datetime64[ns]"), "n": counts}),
		"date",
		"n",
		agg="sum",
		label="Headcount",
		unit="count",
		horizon=p["horizon"],
	)
	out["kpis"] = [
		kpi("Headcount now", counts[-1], "count", prior=counts[0]),
		kpi("Peak headcount", counts.max(), "count"),
	] + [k for k in out["kpis"] if k["label"].startswith("Forecast")]
	out["observations"] = [
		f"Headcount {int(counts[-1])} on {str(when)[:10]}, {int(counts[-1] - counts[0]):+d} since {labels[0]}; peak {int(counts.max())}."
	] + [o for o in out["observations"] if o.startswith(("Forecast", "Shift", "Trend"))]
	out["warnings"] = [w for w in out.get("warnings", []) if "incomplete" not in w] + as_of_note(p, when)
	return out


def attrition(data: dict, p: dict) -> dict:
	frame = data["employees"]
	if not len(frame):
		return empty_result("employees")
	when = _when(frame, p)
	ends = _month_ends(when, p["months"])
	start = (np.datetime64(ends[0], "M")).astype("datetime64[D]")
	average = float(headcount_at(frame, ends).mean())
	left = frame[frame["relieving_date"].notna()]
	leavers = left[
		(left["relieving_date"] >= pd.Timestamp(start)) & (left["relieving_date"] <= pd.Timestamp(when))
	]
	rate = len(leavers) / average * 100 if average else None
	annual = rate * 12 / p["months"] if rate is not None else None
	by_dept = (
		leavers.groupby("department").size().sort_values(ascending=False)
		if "department" in leavers
		else pd.Series(dtype=int)
	)
	rows = [[str(k), int(v)] for k, v in by_dept.items()]
	return {
		"kpis": [
			kpi("Attrition rate", rate, "%"),
			kpi("Annualised attrition", annual, "%"),
			kpi("Leavers", len(leavers), "count"),
			kpi("Average headcount", average, None),
		],
		"observations": [
			f"{len(leavers)} people left between {start} and {str(when)[:10]} against an average headcount of "
			f"{average:.1f}: {num(rate, '%')} ({num(annual, '%')} a year)."
		]
		+ ([f"Most leavers: {rows[0][0]} ({rows[0][1]})."] if rows else []),
		"table": table(["department", "leavers"], rows),
		"chart": charts.bar("Leavers by department", [r[0] for r in rows], [r[1] for r in rows], "Leavers"),
		"warnings": as_of_note(p, when),
	}


def _active(frame: pd.DataFrame, when: np.datetime64) -> pd.DataFrame:
	stamp = pd.Timestamp(when)
	joined = frame["joining_date"].notna() & (frame["joining_date"] <= stamp)
	still = (
		frame["relieving_date"].isna() | (frame["relieving_date"] >= stamp)
		if "relieving_date" in frame
		else True
	)
	return frame[joined & still]


def headcount_by_department(data: dict, p: dict) -> dict:
	frame = data["employees"]
	if not len(frame):
		return empty_result("employees")
	when = _when(frame, p)
	out = blocks.breakdown(
		_active(frame, when),
		"department",
		None,
		agg="count",
		label="Headcount",
		unit="count",
		noun="department",
		chart="pie",
		top_n=p["top_n"] if "top_n" in p else 10,
	)
	out.pop("metrics", None)
	out["warnings"] = as_of_note(p, when)
	return out


def tenure(data: dict, p: dict) -> dict:
	frame = data["employees"]
	if not len(frame):
		return empty_result("employees")
	when = _when(frame, p)
	active = _active(frame, when)
	years = (np.datetime64(when, "D") - active["joining_date"].to_numpy().astype("datetime64[D]")).astype(
		float
	) / 365.25
	out = blocks.distribution(years, label="Tenure in years", unit=None, noun="employee", bins=8)
	short = float((years < 1).mean() * 100) if years.size else None
	out["kpis"].append(kpi("Under one year", short, "%"))
	out["warnings"] = as_of_note(p, when)
	return out


def _absence(frame: pd.DataFrame) -> np.ndarray:
	status = frame["status"].astype(str).str.strip().str.lower()
	return np.where(status == "absent", 1.0, np.where(status == "half day", 0.5, 0.0))


def _ones(frame: pd.DataFrame) -> np.ndarray:
	return np.ones(len(frame))


ANALYSES = [
	Analysis(
		"hr.headcount_trend",
		"hr",
		"Headcount trend",
		"Employees on the books at each month end over the last N months (default 24) with a forecast.",
		{"employees": ("joining_date", "relieving_date")},
		headcount_trend,
		(
			Param("months", "int", 24, "months to show", minimum=2, maximum=120),
			Param("horizon", "int", 3, "months to forecast", minimum=0, maximum=24),
			AS_OF,
		),
		tags=("staff", "workforce", "employees"),
		period_filter=False,
	),
	Analysis(
		"hr.attrition",
		"hr",
		"Attrition",
		"Leavers over the last N months (default 12) divided by the average headcount, annualised, by department.",
		{"employees": ("joining_date", "relieving_date", "department")},
		attrition,
		(MONTHS_BACK, AS_OF),
		tags=("turnover", "leavers", "retention"),
		period_filter=False,
	),
	Analysis(
		"hr.headcount_by_department",
		"hr",
		"Headcount by department",
		"Active employees per department at the as-of date with shares.",
		{"employees": ("department", "joining_date")},
		headcount_by_department,
		(AS_OF,),
		uses={"employees": ("relieving_date",)},
		tags=("staff", "organisation"),
		period_filter=False,
	),
	Analysis(
		"hr.tenure",
		"hr",
		"Tenure of active employees",
		"How long active employees have been with the company: distribution, median and share under a year.",
		{"employees": ("joining_date",)},
		tenure,
		(AS_OF,),
		uses={"employees": ("relieving_date",)},
		tags=("seniority", "length of service"),
		period_filter=False,
	),
	trend_row(
		"hr.new_hires_trend",
		"New hires per month",
		"Employees joining per period with a forecast.",
		"employees",
		(),
		None,
		label="New hires",
		unit="count",
		agg="count",
		tags=("hiring", "recruitment", "joiners"),
	),
	ratio_trend_row(
		"hr.absence_rate",
		"Absence rate",
		"Absent days (half days count half) as a percent of attendance records per period.",
		"attendance",
		("status",),
		_absence,
		_ones,
		label="Absence rate",
		higher_is_better=False,
		tags=("absenteeism", "attendance"),
	),
	ratio_by_row(
		"hr.absence_by_department",
		"Absence by department",
		"Absence rate per department, highest first.",
		"attendance",
		"department",
		("status",),
		_absence,
		_ones,
		label="Absence rate",
		noun="department",
		weight_label="attendance records",
		higher_is_better=False,
		tags=("absenteeism",),
	),
	breakdown_row(
		"hr.leave_by_type",
		"Leave by type",
		"Days of leave taken per leave type (approved and open applications) with shares.",
		"leave",
		"leave_type",
		("days",),
		"days",
		label="Leave days",
		unit="days",
		noun="leave type",
		chart="pie",
		where=lambda f: (
			(f["status"].astype(str).str.lower() != "rejected").to_numpy()
			if "status" in f
			else np.ones(len(f), bool)
		),
		tags=("holidays", "time off", "sick leave"),
	),
]

__all__ = ["ANALYSES", "rounded"]
