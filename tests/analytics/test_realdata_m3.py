"""The M3 block of benchmarks/realdata.py on a small made-up file in M3C's layout: the sheets are
read, the sample is the same every time, and every sampled series is forecast from its last
origin with the competition's horizon and scored as the other sets are."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("realdata", ROOT / "benchmarks" / "realdata.py")
realdata = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(realdata)


def _m3_csv(path: Path, per_sheet: int = 6) -> Path:
	"""Series in M3C.xls's columns (Series, N, NF, Category, two start columns, 1, 2, ...), the four
	sheets stacked with a `sheet` column, as m3_series reads a CSV."""
	rng = np.random.default_rng(1)
	frames, number = [], 0
	for sheet, freq in realdata.M3_SHEETS.items():
		m = realdata.SEASON[freq]
		rows = []
		for _ in range(per_sheet):
			number += 1
			n = int(rng.integers(20, 40)) if freq == "year" else int(rng.integers(48, 80))
			t = np.arange(n)
			y = 100 + 0.5 * t + (10 * np.sin(2 * np.pi * t / m) if m > 1 else 0) + rng.normal(0, 2, n)
			row = {"Series": f"N {number:>4}", "N": n, "NF": realdata.M3_HORIZON[freq], "Category": "MICRO "}
			row.update({"Starting Year": 1980, "Starting Period": 1})
			row.update({str(i + 1): v for i, v in enumerate(y)})
			rows.append(row)
		frames.append(pd.DataFrame(rows).assign(sheet=sheet))
	target = path / "M3C.csv"
	pd.concat(frames).to_csv(target, index=False)
	return target


def test_m3_file_read_and_sampled_the_same_way_every_time(tmp_path):
	items = realdata.m3_series(_m3_csv(tmp_path))
	assert [sum(i["freq"] == f for i in items) for f in realdata.M3_SHEETS.values()] == [6, 6, 6, 6]
	assert items[0]["name"] == "N1" and items[0]["category"] == "MICRO"
	first = realdata.m3_sample(items, 4)
	assert [i["name"] for i in first] == [i["name"] for i in realdata.m3_sample(items, 4)]
	smaller = {i["name"] for i in realdata.m3_sample(items, 2)}
	assert len(first) == 16 and smaller <= {i["name"] for i in first}
	assert len(realdata.m3_sample(items, 100)) == 24


def test_m3_missing_file_names_where_to_get_it(tmp_path):
	with pytest.raises(SystemExit, match="forecasters.org"):
		realdata.m3_series(tmp_path / "M3C.xls")


def test_m3_last_origin_competition_horizons_and_seasonal_naive(tmp_path, capsys):
	items = realdata.m3_sample(realdata.m3_series(_m3_csv(tmp_path, per_sheet=2)), 2)
	task_list = realdata.tasks(items, role="M3", horizons=realdata.M3_HORIZON, origins=1)
	assert [t["h"] for t in task_list] == [6, 6, 8, 8, 18, 18, 8, 8]
	assert all(t["origin"] == t["y"].size - t["h"] for t in task_list)
	realdata.run_forecasts(task_list, skip_anchors=True, naive=True)
	monthly = task_list[4]
	point = realdata.seasonal_naive(monthly)[0]
	assert np.allclose(point[:12], monthly["y"][monthly["origin"] - 12 : monthly["origin"]])
	assert monthly["mase SeasonalNaive"] != monthly["mase ours"]
	realdata.m3_summary(task_list)
	lines = capsys.readouterr().out.splitlines()
	assert [line.split()[0] for line in lines[1:]] == ["year", "quarter", "month", "none", "all"]
	assert all(0 <= float(line.split()[6]) <= 1 for line in lines[1:])


def test_coverage_per_frequency_pools_the_sets_and_resamples_whole_series(capsys):
	def rows(prefix, freq, covers):
		return [{"name": f"{prefix}{i // 2}", "freq": freq, "cover ours": c} for i, c in enumerate(covers)]

	first = rows("a", "month", [1.0, 1.0, 0.5, 0.5]) + rows("b", "year", [0.6, 0.6])
	second = rows("c", "month", [0.75, 0.75])
	realdata.coverage_by_frequency([("first", first), ("second", second)])
	lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.strip()}
	assert "0.750 +- " in lines["first"] and "(2)" in lines["first"]
	assert lines["second"].split()[1:5] == ["0.750", "+-", "0.000", "(1)"]  # one series: no spread
	assert "-" in lines["second"].split()[5:]  # no yearly series in the second set
	month = lines["pooled"].split()[1:5]
	assert month[0] == "0.750" and month[3] == "(3)" and float(month[2]) > 0
	assert "0.600 +- 0.000 (1)" in lines["pooled"]
	# whole series resampled: the pooled spread is that of the three series' means, not of six forecasts
	means = np.array([1.0, 0.5, 0.75])
	assert float(month[2]) == pytest.approx(means.std() / np.sqrt(3), rel=0.15)
