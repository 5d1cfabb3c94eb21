"""Record links under the desk's prefix of the running release (`/app` on Frappe 15, `/desk` on 16)."""

from __future__ import annotations

import pytest

from noviz_agent.connectors import model


@pytest.fixture
def desk16():
	model.use_desk_prefix("/desk")
	yield
	model.use_desk_prefix("/app")


def test_links_are_built_under_the_prefix_the_edge_names(desk16):
	assert model.doc_url("Sales Invoice", "ACC-SINV-2026/1") == "/desk/sales-invoice/ACC-SINV-2026%2F1"
	assert model.desk_path("noviz-goals") == "/desk/noviz-goals"
	assert model.load_model().entity("customer").link("Acme") == "/desk/customer/Acme"


def test_frappe_15s_prefix_is_the_default_and_anything_else_is_refused():
	assert model.doc_url("Customer", "Acme") == "/app/customer/Acme"
	with pytest.raises(model.MapError):
		model.use_desk_prefix("/admin")
