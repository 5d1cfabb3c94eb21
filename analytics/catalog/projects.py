"""Projects and operations: budget against actual, overdue projects, hours, utilisation, support issues."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics import charts, periods
from analytics.catalog.base import AS_OF, Analysis, Param
from analytics.catalog.rows import as_of, as_of_note, breakdown_row, freq_param, ratio_by_row, ratio_trend_row
from analytics.result import empty_result, kpi, num, rounded, table

CLOSED = {"completed", "cancelled", "closed"}


def budget_vs_actual(data: dict, p: dict) -> dict:
	frame = data["projects"]
	frame = frame[frame["budget"] > 0]
	if not len(frame):
		return {
			**empty_result("projects with a budget"),
			"warnings": ["No project has a budget (estimated cost)."],
		}
	per = frame.set_index("project")[["budget", "actual_cost"]].copy()
	per["variance"] = per["actual_cost"] - per["budget"]
	per["used"] = per["actual_cost"] / per["budget"] * 100
	if "progress" in frame:
		per["progress"] = frame.set_index("project")["progress"]
	else:
		per["progress"] = np.nan
	per = per.sort_values("variance", ascending=False)
	over = per[per["variance"] > 0]
	# Spending well ahead of progress is the early sign of an overrun.
	ahead = per[
		per["progress"].notna() & (per["used"] > per["progress"] + p["tolerance"]) & (per["variance"] <= 0)
	]
	total_budget, total_actual = float(per["budget"].sum()), float(per["actual_cost"].sum())
	rows = [
		[
			str(k),
			rounded(r.budget),
			rounded(r.actual_cost),
			rounded(r.variance),
			rounded(r.used),
			rounded(r.progress),
		]
		for k, r in per.iterrows()
	]
	return {
		"kpis": [
			kpi("Budget", total_budget, "currency"),
			kpi("Actual cost", total_actual, "currency"),
			kpi("Projects over budget", len(over), "count"),
			kpi("Projects spending ahead of progress", len(ahead), "count"),
		],
		"observations": [
			f"{len(per)} projects: {num(total_actual)} spent against {num(total_budget)} budgeted "
			f"({num(total_actual / total_budget * 100, '%')}); {len(over)} over budget."
		]
		+ (
			[f"Most over: {rows[0][0]} by {num(rows[0][3])} ({rows[0][4]:.0f}% of budget)."]
			if len(over)
			else []
		),
		"watch_outs": [
			f"{k} has used {r.used:.0f}% of its budget at {r.progress:.0f}% progress."
			for k, r in ahead.head(3).iterrows()
		],
		"table": table(["project", "budget", "actual", "variance", "used %", "progress %"], rows),
		"chart": charts.grouped(
			"Budget against actual cost",
			[r[0] for r in rows[:15]],
			{"Budget": [r[1] for r in rows[:15]], "Actual": [r[2] for r in rows[:15]]},
			"Cost",
		),
	}


def overdue(data: dict, p: dict) -> dict:
	frame = data["projects"]
	if not len(frame):
		return empty_result("projects")
	when = as_of(frame, p, "start_date", "end_date")
	open_ = frame[~frame["status"].astype(str).str.lower().isin(CLOSED)]
	late = open_[open_["end_date"].notna() & (open_["end_date"] < pd.Timestamp(when))].copy()
	late["days_late"] = (
		np.datetime64(when, "D") - late["end_date"].to_numpy().astype("datetime64[D]")
	).astype(int)
	late = late.sort_values("days_late", ascending=False)
	has_progress = "progress" in late
	rows = [
		[r.project, str(r.end_date.date()), int(r.days_late), rounded(r.progress) if has_progress else None]
		for r in late.itertuples()
	]
	return {
		"kpis": [
			kpi("Overdue projects", len(late), "count"),
			kpi("Open projects", len(open_), "count"),
			kpi("Average days late", late["days_late"].mean() if len(late) else None, "days"),
		],
		"observations": [f"{len(late)} of {len(open_)} open projects are past their expected end date."]
		+ ([f"Latest: {rows[0][0]}, {rows[0][2]} days past {rows[0][1]}."] if rows else []),
		"table": table(["project", "expected end", "days late", "progress %"], rows),
		"chart": charts.bar(
			"Overdue projects (days late)",
			[r[0] for r in rows[:20]],
			[r[2] for r in rows[:20]],
			"Days late",
			horizontal=True,
		),
		"warnings": as_of_note(p, when),
	}


def _billable(frame: pd.DataFrame) -> np.ndarray:
	return np.where(frame["billable"].to_numpy(dtype=bool), frame["hours"].to_numpy(dtype=float), 0.0)


def issue_resolution(data: dict, p: dict) -> dict:
	frame = data["issues"]
	done = frame[frame["resolved"].notna()].copy() if len(frame) else frame
	if not len(done):
		return empty_result("resolved issues")
	done["days"] = (done["resolved"] - done["opened"]).dt.days.astype(float)
	within = float((done["days"] <= p["target_days"]).mean() * 100)
	per = (
		done.groupby("priority")["days"].agg(["size", "mean", "median"]).sort_values("mean", ascending=False)
	)
	rows = [[str(k), int(r["size"]), rounded(r["mean"]), rounded(r["median"])] for k, r in per.iterrows()]
	return {
		"kpis": [
			kpi("Median days to resolve", done["days"].median(), "days"),
			kpi("Average days to resolve", done["days"].mean(), "days"),
			kpi(f"Resolved within {p['target_days']} days", within, "%"),
			kpi("Resolved issues", len(done), "count"),
		],
		"observations": [
			f"{len(done)} resolved issues: median {num(done['days'].median(), 'days')}, "
			f"{within:.1f}% within {p['target_days']} days."
		]
		+ ([f"Slowest priority: {rows[0][0]} (average {num(rows[0][2], 'days')})."] if rows else []),
		"table": table(["priority", "issues", "average days", "median days"], rows),
		"chart": charts.bar(
			"Average days to resolve by priority", [r[0] for r in rows], [r[2] for r in rows], "Days"
		),
	}


def issue_backlog(data: dict, p: dict) -> dict:
	frame = data["issues"]
	if not len(frame):
		return empty_result("issues")
	freq = p["freq"]
	starts, opened = periods.aggregate(frame["opened"].to_numpy(), None, freq, "count")
	resolved_dates = frame["resolved"].dropna().to_numpy()
	closed_starts = periods.start_of(resolved_dates, freq)
	resolved = np.array([(closed_starts == s).sum() for s in starts], dtype=float)
	ends = np.array([periods.end_of(s, freq) for s in starts])
	opened_sorted = np.sort(frame["opened"].to_numpy().astype("datetime64[D]"))
	resolved_sorted = np.sort(resolved_dates.astype("datetime64[D]"))
	backlog = np.searchsorted(opened_sorted, ends, side="right") - np.searchsorted(
		resolved_sorted, ends, side="right"
	)
	labels = periods.labels(starts, freq)
	rows = [
		[lab, int(o), int(r), int(b)] for lab, o, r, b in zip(labels, opened, resolved, backlog, strict=True)
	]
	figure = charts.grouped(
		"Issues opened and resolved", labels, {"Opened": list(opened), "Resolved": list(resolved)}, "Issues"
	)
	growing = len(backlog) > 1 and backlog[-1] > backlog[0]
	return {
		"kpis": [
			kpi("Open at the end", backlog[-1], "count", prior=backlog[-2] if len(backlog) > 1 else None),
			kpi(f"Opened {labels[-1]}", opened[-1], "count"),
			kpi(f"Resolved {labels[-1]}", resolved[-1], "count"),
		],
		"observations": [
			f"{int(opened.sum())} issues opened and {int(resolved.sum())} resolved over {len(labels)} "
			f"{periods.NOUN[freq]}s; {int(backlog[-1])} open at the end of {labels[-1]}."
		],
		"watch_outs": [f"The backlog grew from {int(backlog[0])} to {int(backlog[-1])}."] if growing else [],
		"table": table([periods.NOUN[freq], "opened", "resolved", "open at end"], rows[::-1]),
		"chart": charts.with_line(figure, "Open", labels, [int(b) for b in backlog]),
	}


ANALYSES = [
	Analysis(
		"projects.budget_vs_actual",
		"projects",
		"Project budget against actual",
		"Each project's cost so far against its budget (estimated cost), overruns, and spend running ahead of progress.",
		{"projects": ("project", "budget", "actual_cost")},
		budget_vs_actual,
		(Param("tolerance", "float", 10.0, "points by which budget used may exceed progress", minimum=0),),
		uses={"projects": ("progress",)},
		tags=("overrun", "cost control"),
	),
	Analysis(
		"projects.overdue",
		"projects",
		"Overdue projects",
		"Open projects past their expected end date, latest first.",
		{"projects": ("project", "status", "end_date")},
		overdue,
		(AS_OF,),
		uses={"projects": ("progress", "start_date")},
		tags=("late", "delays", "schedule"),
	),
	breakdown_row(
		"projects.hours_by_project",
		"Hours by project",
		"Timesheet hours per project with billable hours and shares.",
		"timesheets",
		"project",
		("hours", "billable"),
		"hours",
		label="Hours",
		unit="hours",
		noun="project",
		extra={"billable hours": (_billable, "sum")},
		tags=("time", "effort", "timesheets"),
	),
	ratio_by_row(
		"projects.utilisation",
		"Billable utilisation by employee",
		"Billable hours as a percent of hours logged, per employee.",
		"timesheets",
		"employee",
		("hours", "billable"),
		_billable,
		"hours",
		label="Billable utilisation",
		noun="employee",
		weight_label="hours",
		tags=("utilization", "billability"),
	),
	ratio_trend_row(
		"projects.billable_trend",
		"Billable share per month",
		"Billable hours as a percent of all hours logged per period.",
		"timesheets",
		("hours", "billable"),
		_billable,
		"hours",
		label="Billable share",
		tags=("utilisation",),
	),
	breakdown_row(
		"projects.hours_by_activity",
		"Hours by activity",
		"Timesheet hours per activity type with shares.",
		"timesheets",
		"activity",
		("hours",),
		"hours",
		label="Hours",
		unit="hours",
		noun="activity",
		chart="pie",
		tags=("time allocation",),
	),
	Analysis(
		"projects.issue_resolution",
		"projects",
		"Support issue resolution time",
		"Days from opening to resolution of support issues, by priority, and the share resolved within a target.",
		{"issues": ("opened", "resolved", "priority")},
		issue_resolution,
		(Param("target_days", "int", 3, "target days to resolve", minimum=0),),
		tags=("sla", "support", "helpdesk", "tickets"),
	),
	Analysis(
		"projects.issue_backlog",
		"projects",
		"Support issue backlog",
		"Issues opened and resolved per period and how many were open at each period end.",
		{"issues": ("opened", "resolved")},
		issue_backlog,
		(freq_param("month"),),
		tags=("support", "tickets", "open issues"),
	),
]
