"""Several analyses on the same data normalise each dataset once (`runner.Shared`), and every
analysis still gets exactly what normalising for it alone gives."""

from __future__ import annotations

import pandas as pd
import pytest

from analytics import catalog, dashboard, generate
from analytics.contract import normalise, restrict
from analytics.errors import AnalyticsError
from analytics.runner import Shared, prepare, run
from tests.analytics.test_catalog_speedups_same_results import _messy


@pytest.mark.parametrize("messy", [False, True])
def test_every_analysis_prepared_from_shared_data_same_as_alone(messy):
	data = generate.all_datasets(2_000, seed=7)
	if messy:
		data = _messy(data)
	analyses = list(catalog.all_analyses())
	shared = Shared(analyses)
	for analysis in analyses:
		inputs = {name: data[name] for name in analysis.needs}
		alone = prepare(analysis, inputs, {"start": "2022-03-01"})
		together = prepare(analysis, inputs, {"start": "2022-03-01"}, shared=shared)
		assert together.dropped == alone.dropped, analysis.key
		assert together.warnings == alone.warnings, analysis.key
		assert together.rows == alone.rows, analysis.key
		for name, frame in alone.frames.items():
			pd.testing.assert_frame_equal(together.frames[name], frame, check_exact=True)
	# One normalisation per dataset, not one per analysis.
	assert len(shared._done) == len({name for a in analyses for name in a.needs})


def test_dashboard_of_shared_data_same_as_each_analysis_run_alone():
	data = _messy(generate.all_datasets(2_000, seed=8))
	keys = [
		"sales.monthly_trend",
		"customers.top",
		"customers.rfm",
		"finance.unusual_entries",
		"cash.balance",
	]
	keys = [k for k in keys if k in {a.key for a in catalog.all_analyses()}]
	assert len(keys) >= 4
	board = dashboard.run_many(keys, data)
	for panel, key in zip(board["panels"], keys, strict=True):
		alone = run(key, {name: data[name] for name in catalog.get(key).needs})
		assert panel["kpis"] == alone["kpis"][:4] and panel["table"] == alone["table"], key


def test_an_analysis_changing_its_frame_leaves_the_next_ones_unchanged():
	sales = generate.sales(2_000, seed=2)
	base = normalise("sales", sales, (), ["amount", "party", "date"])
	first = restrict(base, "sales", sales.columns, len(sales), ["amount"], ["party"])
	first.frame.loc[0, "amount"] = -1e9
	first.dropped["outside period"] = 5
	second = restrict(base, "sales", sales.columns, len(sales), ["amount"], ["party"])
	assert second.frame.loc[0, "amount"] != -1e9 and "outside period" not in second.dropped


def test_shared_data_missing_a_required_column_same_error_as_alone():
	rows = [{"date": "2025-01-01", "party": "A"}]
	with pytest.raises(AnalyticsError) as alone:
		normalise("sales", rows, ["date", "amount"], ())
	base = normalise("sales", rows, (), ["party"])
	with pytest.raises(AnalyticsError) as shared:
		restrict(base, "sales", ["date", "party"], 1, ["date", "amount"], ())
	assert str(shared.value) == str(alone.value)
	with pytest.raises(AnalyticsError, match="no column 'price'"):
		restrict(base, "sales", ["date", "party"], 1, ["price"], ())
