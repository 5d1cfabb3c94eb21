"""Change points on real series with documented shifts (benchmarks/data/changepoints, SOURCES.md
there), several changes in one series, their size and confidence, and no false alarms on noise."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analytics import blocks, changepoint
from analytics.result import num

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "changepoints"


def _csv(name: str) -> pd.DataFrame:
	return pd.read_csv(DATA / name)


def _indexes(values, season_length=None) -> list[int]:
	return [c["index"] for c in changepoint.locate_all(values, season_length=season_length)]


@pytest.mark.xfail(
	strict=True,
	reason="by the criterion, AR(1) noise with rho about 0.5 explains the league's eras as well as shifts",
)
def test_changepoint_designated_hitter_1973_found_in_al_minus_nl_runs_per_game():
	# The American League adopted the designated hitter in 1973: its runs per game rose against the
	# National League's. Found while rho was estimated apart from the shifts (about 0.27); chosen
	# together with them, AR(1) noise of rho 0.4 to 0.6 without shifts fits better, and there the
	# 1973 rise is within the noise: a known miss, kept so that finding it again is noticed.
	teams = _csv("lahman_teams_runs.csv").groupby(["yearID", "lgID"])[["R", "G"]].sum()
	runs = (teams["R"] / teams["G"]).unstack()
	gap = (runs["AL"] - runs["NL"]).loc[1901:2021]
	found = changepoint.locate_all(gap.to_numpy())
	years = gap.index.to_numpy()
	near = [c for c in found if abs(years[c["index"]] - 1973) <= 2]
	assert near and near[0]["shift"] > 0
	assert len(found) >= 2  # the league's earlier eras are shifts too


def test_changepoint_end_of_coffee_export_quotas_in_july_1989_found():
	# The International Coffee Agreement's export quotas were suspended on 4 July 1989 and the
	# arabica price fell: a sharp shift in a wandering price, which the t test on means missed.
	coffee = _csv("stevedata_coffee_price.csv")
	dates = pd.to_datetime(coffee["date"])
	found = changepoint.locate_all(coffee["arabica"].to_numpy(), season_length=12)
	when = [dates[c["index"]] for c in found]
	hits = [c for c, d in zip(found, when, strict=True) if abs((d - pd.Timestamp("1989-07-01")).days) <= 62]
	assert hits and hits[0]["shift"] < 0 and hits[0]["confidence"] >= 0.95


def test_changepoint_beaver_leaving_its_lodge_is_placed_at_the_first_reading_outside():
	# Reynolds' beaver: body temperature jumps when it leaves the lodge (activ becomes 1); the
	# temperature wanders either side, which dragged the split of means four readings early.
	beaver = _csv("MASS_beav2.csv")
	out = int(np.argmax(beaver["activ"].to_numpy() == 1))
	found = changepoint.locate_all(beaver["temp"].to_numpy())
	assert any(abs(c["index"] - out) <= 1 for c in found)


def test_changepoint_seat_belt_law_found_in_front_seat_casualties_with_its_size():
	# Front seat belts compulsory from 31 Jan 1983 (Harvey and Durbin 1986); monthly, strong season.
	front = _csv("datasets_Seatbelts.csv")["front"].to_numpy(dtype=float)
	found = changepoint.locate_all(front, season_length=12)
	law = 169  # 1983-02, the first month under the law
	hit = [c for c in found if abs(c["index"] - law) <= 2]
	assert hit, [c["index"] for c in found]
	change = hit[0]
	assert change["season"] in ("additive", "multiplicative")
	assert change["shift"] == pytest.approx(change["after"] - change["before"])
	assert -0.4 < change["relative"] < -0.15  # Harvey and Durbin: about a quarter fewer
	assert change["range"][0] <= change["index"] <= change["range"][1]


def _seasonal(n: int, seed: int) -> np.ndarray:
	rng = np.random.default_rng(seed)
	t = np.arange(n)
	return 500 + 120 * np.sin(2 * np.pi * t / 12) + rng.normal(0, 20, n)


def test_changepoint_two_shifts_under_a_strong_season_both_found():
	values = _seasonal(120, 1)
	values[40:] += 60
	values[85:] -= 90
	found = changepoint.locate_all(values, season_length=12)
	assert [c["index"] for c in found] == [40, 85]
	assert [round(c["shift"] / 10) * 10 for c in found] == [60, -90]
	assert all(c["kind"] == "level shift" for c in found)


def test_changepoint_short_seasonal_noise_is_not_cut_into_shifts():
	# Two to four cycles: a season estimated from two values per month follows their noise, and
	# the forecast's season test misses a clean season on so few cycles.
	flagged = sum(
		bool(_indexes(_seasonal(int(n), seed), 12)) for seed, n in enumerate(np.linspace(24, 48, 30))
	)
	assert flagged <= 1


def test_changepoint_autocorrelated_noise_is_not_cut_into_shifts():
	# Candidates drawn as if the noise were white over-split AR(1) noise; the confirmation, which
	# allows for the autocorrelation, must prune them (as many flagged as the t test on means did).
	flagged = 0
	for seed in range(30):
		rng = np.random.default_rng(100 + seed)
		noise = np.zeros(96)
		for i in range(1, 96):
			noise[i] = 0.5 * noise[i - 1] + rng.normal(0, 5)
		flagged += bool(_indexes(100 + noise))
	assert flagged <= 3


def test_trend_block_lists_every_change_point_with_size_and_confidence():
	dates = pd.date_range("2015-01-01", periods=120, freq="MS")
	values = _seasonal(120, 1)
	values[40:] += 60
	values[85:] -= 90
	frame = pd.DataFrame({"date": dates, "amount": values})
	out = blocks.trend(frame, "date", "amount", freq="month", horizon=3, unit="currency")
	points = out["series"]["change_points"]
	assert [p["label"] for p in points] == ["2018-05", "2022-02"]
	assert out["series"]["change_point"]["label"] in ("2018-05", "2022-02")
	sentences = [o for o in out["observations"] if o.startswith("Shift from")]
	assert len(sentences) == 2
	assert "seasonally adjusted level" in sentences[0] and "confidence" in sentences[0]
	assert f"+{num(points[0]['shift'], 'currency')}" in sentences[0] and 50 < points[0]["shift"] < 70
	assert any("stepped down from 2022-02" in w for w in out["watch_outs"])


def _flagged(make, count: int = 40) -> int:
	return sum(bool(_indexes(make(np.random.default_rng(200 + seed)))) for seed in range(count))


def _ar1(rng: np.random.Generator, n: int, rho: float) -> np.ndarray:
	noise = np.zeros(n)
	shocks = rng.normal(0, 5, n)
	for i in range(1, n):
		noise[i] = rho * noise[i - 1] + shocks[i]
	return 100 + noise


def test_changepoint_white_noise_is_not_cut_into_shifts():
	assert _flagged(lambda rng: rng.normal(100, 5, int(rng.integers(24, 200)))) <= 2


def test_changepoint_random_walk_is_not_cut_into_shifts():
	# A random walk has no level to shift: with rho estimated apart from the shifts (biased low on a
	# short walk) 16 of these 40 were cut into steps.
	assert _flagged(lambda rng: 100 + np.cumsum(rng.normal(0, 5, int(rng.integers(24, 200))))) <= 4


def test_changepoint_strongly_autocorrelated_noise_is_not_cut_into_shifts():
	# With rho estimated apart from the shifts, 9 of these 40 were cut into steps.
	assert _flagged(lambda rng: _ar1(rng, int(rng.integers(24, 200)), 0.8)) <= 5


def test_changepoint_straight_line_with_autocorrelated_noise_is_not_cut_into_steps():
	# A steady rise is no shift: without a noise model about a straight line, 11% of such series in
	# benchmarks/realdata.py, and 12 of these 60, were cut into steps (now 4; in shorter series a
	# rise and a step are harder to tell apart).
	def line(rng):
		n = int(rng.integers(60, 200))
		return 0.3 * np.arange(n) + _ar1(rng, n, 0.5)

	assert _flagged(line, count=60) <= 6


def test_changepoint_shift_on_a_trend_found_and_the_trend_named():
	rng = np.random.default_rng(14)
	values = 20 + 0.5 * np.arange(120) + rng.normal(0, 2, 120)
	values[75:] -= 15
	found = changepoint.locate_all(values)
	assert [c["index"] for c in found] == [75]
	assert found[0]["trend"] and found[0]["noise"].startswith("trend + ")


def test_changepoint_sharp_shift_in_a_random_walk_found_alone_and_named():
	rng = np.random.default_rng(12)
	values = 100 + np.cumsum(rng.normal(0, 1, 150))
	values[90:] += 12
	found = changepoint.locate_all(values)
	assert [c["index"] for c in found] == [90]
	# Tested as the wandering noise it is (a random walk, or AR(1) close to one), not as white noise.
	assert found[0]["noise"] in ("random walk", "AR(1)") and found[0]["rho"] >= 0.9
	assert found[0]["shift"] > 0


def test_changepoint_shift_in_white_noise_is_tested_as_white_noise():
	values = np.random.default_rng(13).normal(50, 4, 120)
	values[70:] -= 8
	found = changepoint.locate_all(values)
	assert len(found) == 1 and abs(found[0]["index"] - 70) <= 3
	assert found[0]["noise"] == "white noise" and found[0]["rho"] == 0.0


def test_changepoint_black_monday_found_alone_in_the_dows_daily_closes():
	# 19 October 1987: the Dow fell 22.6% in a day; the rest of the year is a random walk's wander.
	djia = _csv("AER_DJIA8012_1987.csv")
	found = changepoint.locate_all(djia["dat"].to_numpy())
	assert [djia["rownames"][c["index"]] for c in found] == ["1987-10-19"]
	assert found[0]["relative"] < -0.15
