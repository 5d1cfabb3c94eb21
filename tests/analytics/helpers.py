"""Reading analysis results in known-answer tests: a KPI, a table row, a series by label."""

from __future__ import annotations


def kpi(result: dict, label: str):
	for item in result["kpis"]:
		if item["label"] == label:
			return item["value"]
	raise AssertionError(f"no KPI {label!r} in {[k['label'] for k in result['kpis']]}")


def row(result: dict, name: str) -> list:
	for r in result["table"]["rows"]:
		if r[0] == name:
			return r
	raise AssertionError(f"no row {name!r} in {[r[0] for r in result['table']['rows']]}")


def series(result: dict) -> dict:
	return dict(zip(result["series"]["labels"], result["series"]["values"], strict=True))
