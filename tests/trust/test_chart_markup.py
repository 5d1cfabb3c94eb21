"""Markup inside data never renders in a chart: Plotly shows it literally."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from analytics import charts
from noviz_agent.engine.gateway import ToolResult
from noviz_agent.engine.responses import build, safe_chart

pytestmark = pytest.mark.attack("injection")

EVIL = '<a href="https://evil.example/x">Acme</a>'


def test_a_customer_named_like_a_link_is_shown_as_text_not_a_link():
	figure = charts.pareto(f"Top customers incl. {EVIL}", [EVIL, "Globex & Sons"], [70.0, 30.0], 100.0)
	safe = safe_chart(figure)
	text = repr(safe)
	assert "<a " not in text and "&lt;a href" in text
	assert "Globex &amp; Sons" in text
	# Still a valid figure; the original (used for the PDF) is untouched.
	go.Figure(safe)
	assert EVIL in repr(figure)


@pytest.mark.attack(None)  # not an attack: the ordinary path
def test_builder_templates_survive_escaping():
	figure = {
		"data": [{"type": "bar", "x": ["<b>x</b>"], "y": [1], "hovertemplate": "%{x}<br>%{y}<extra></extra>"}]
	}
	safe = safe_chart(figure)
	assert safe["data"][0]["hovertemplate"] == "%{x}<br>%{y}<extra></extra>"
	assert safe["data"][0]["x"] == ["&lt;b&gt;x&lt;/b&gt;"]


def test_every_chart_in_a_response_is_escaped():
	figure = charts.bar("Sales", [EVIL], [5.0])
	result = ToolResult("analytics.build", {}, "ok", data={"chart": figure, "kpis": []})
	response = build("Here it is.", [result], question="sales")
	assert response["chart"] is not None and "<a " not in repr(response["chart"])
