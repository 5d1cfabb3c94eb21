"""A run's findings grouped for the person: a title, plain text (desk notification and chat), e-mail HTML
and the chat's response object. Every figure is written with its unit and currency, every finding
with its company and period; the model's explanation comes after the computed findings, labelled."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from noviz_agent.engine import responses
from noviz_agent.goals.findings import Changes, Finding
from noviz_agent.goals.spec import GoalSpec

MAX_LISTED = 20


@dataclass
class Digest:
	title: str
	text: str
	html: str
	response: dict
	counts: dict = field(default_factory=dict)


def figure_text(figure: dict, currency: str | None) -> str:
	value, unit = figure.get("value"), figure.get("unit")
	if value is None:
		shown = "n/a"
	elif unit == "currency":
		shown = f"{float(value):,.2f}" + (f" {currency}" if currency else "")
	elif unit == "%":
		shown = f"{float(value):+.1f}%"
	elif unit == "days":
		shown = f"{float(value):,.0f} days"
	elif unit == "count":
		shown = f"{int(value):,}"
	elif isinstance(value, float):
		shown = f"{value:,.2f}".rstrip("0").rstrip(".")
	else:
		shown = str(value)
	return f"{figure.get('label')}: {shown}"


def period_text(period: dict) -> str:
	if period.get("start") and period.get("end"):
		text = f"{period.get('label') or period['start']} ({period['start']} to {period['end']})"
	elif period.get("label"):
		text = str(period["label"])
	elif period.get("as_of"):
		text = f"as of {period['as_of']}"
	else:
		return ""
	return text + (" (partial)" if period.get("partial") else "")


def scope_text(finding: Finding) -> str:
	parts = [finding.company, finding.currency, period_text(finding.period)]
	return ", ".join(p for p in parts if p)


def _finding_line(finding: Finding, changed: bool) -> str:
	figures = "; ".join(figure_text(f, finding.currency) for f in finding.figures)
	records = ", ".join(str(r.get("name")) for r in finding.records[:5])
	line = f"- **{finding.title}**{' (changed)' if changed else ''} — {scope_text(finding)}. {figures}. {finding.why}"
	return line + (f" Records: {records}." if records else "")


def build(
	goal: GoalSpec,
	changes: Changes,
	*,
	explanation: str = "",
	proposals: list[dict] | None = None,
	problems: list[str] | None = None,
	base_url: str = "",
) -> Digest:
	"""The digest of one run; `proposals` are proposal blocks (responses.proposal_block) awaiting the person."""
	proposals = list(proposals or [])
	problems = list(problems or [])
	new, changed, resolved = changes.new, changes.changed, changes.resolved
	counts = {
		"new": len(new),
		"changed": len(changed),
		"resolved": len(resolved),
		"proposals": len(proposals),
	}
	said = [
		f"{n} {word}"
		for n, word in ((len(new), "new"), (len(changed), "changed"), (len(resolved), "resolved"))
		if n
	]
	title = f"{goal.label}: {', '.join(said)}" if said else f"{goal.label}: nothing new"
	lines = [
		f"**{goal.label}** — {goal.schedule.describe()}" + (f", {goal.company}" if goal.company else "") + "."
	]
	reported = [(f, False) for f in new] + [(f, True) for f in changed]
	if reported:
		lines += ["", "What changed since the last run:"]
		lines += [_finding_line(f, c) for f, c in reported[:MAX_LISTED]]
		if len(reported) > MAX_LISTED:
			lines.append(f"- … and {len(reported) - MAX_LISTED} more on the goal's page.")
	if resolved:
		lines += ["", "No longer the case:"]
		lines += [f"- {entry.get('title')}" for entry in resolved[:MAX_LISTED]]
	if explanation.strip():
		lines += ["", "The agent's reading of it:", explanation.strip()]
	if proposals:
		lines += ["", "Prepared for you to confirm (nothing is written until you do):"]
		lines += [f"- {p.get('title') or p.get('tool')}" for p in proposals]
	if problems:
		lines += ["", "Not checked this time:"]
		lines += [f"- {p}" for p in problems]
	text = "\n".join(lines)
	response = responses.empty_response()
	response["text"] = text
	rows = [
		{
			"finding": f.title,
			"figures": "; ".join(figure_text(x, f.currency) for x in f.figures),
			"scope": scope_text(f),
			"records": ", ".join(str(r.get("name")) for r in f.records[:5]),
		}
		for f, _ in reported[:MAX_LISTED]
	]
	if rows:
		response["type"] = "table"
		response["table"] = responses.table_from(
			{
				"title": title,
				"columns": [
					{"key": "finding", "label": "Finding"},
					{"key": "figures", "label": "Figures"},
					{"key": "scope", "label": "Company, currency, period"},
					{"key": "records", "label": "Records"},
				],
				"rows": rows,
			}
		)
	if proposals:
		response["type"] = "proposal"
		response["proposal"] = proposals[-1]
	return Digest(
		title=title,
		text=text,
		html=_html(goal, reported, resolved, explanation, proposals, problems, base_url),
		response=response,
		counts=counts,
	)


def _html(goal, reported, resolved, explanation, proposals, problems, base_url: str) -> str:
	e = html.escape
	parts = [
		f"<h3>{e(goal.label)}</h3>",
		f"<p>{e(goal.schedule.describe())}" + (f", {e(goal.company)}" if goal.company else "") + "</p>",
	]
	if reported:
		parts.append("<p><b>What changed since the last run</b></p><ul>")
		for finding, changed in reported[:MAX_LISTED]:
			figures = "; ".join(figure_text(f, finding.currency) for f in finding.figures)
			records = ", ".join(
				f'<a href="{e(base_url + r["link"]) if r.get("link") else "#"}">{e(str(r.get("name")))}</a>'
				for r in finding.records[:5]
			)
			parts.append(
				f"<li><b>{e(finding.title)}</b>{' (changed)' if changed else ''}<br>{e(scope_text(finding))}. "
				f"{e(figures)}.<br>{e(finding.why)}"
				+ (f"<br>Records: {records}" if records else "")
				+ "</li>"
			)
		parts.append("</ul>")
	if resolved:
		parts.append("<p><b>No longer the case</b></p><ul>")
		parts += [f"<li>{e(str(entry.get('title')))}</li>" for entry in resolved[:MAX_LISTED]]
		parts.append("</ul>")
	if explanation.strip():
		parts.append(f"<p><b>The agent's reading of it</b></p><p>{e(explanation.strip())}</p>")
	if proposals:
		parts.append("<p><b>Prepared for you to confirm</b> (nothing is written until you do):</p><ul>")
		parts += [f"<li>{e(str(p.get('title') or p.get('tool')))}</li>" for p in proposals]
		parts.append(
			f'</ul><p><a href="{e(base_url)}/app/noviz-goals">Open your goals to confirm or cancel</a></p>'
		)
	if problems:
		parts.append(
			"<p><b>Not checked this time</b></p><ul>"
			+ "".join(f"<li>{e(p)}</li>" for p in problems)
			+ "</ul>"
		)
	return "\n".join(parts)
