"""The forecast's 80% range: coverage on long simulations with known noise, and the backtest
errors it is drawn from (those of the whole procedure, selection included, with no look-ahead)."""

from __future__ import annotations

import numpy as np
import pytest

from analytics import backtest
from analytics.backtest import range_from_errors
from analytics.forecast import CANDIDATES, MIN_ORIGINS_FOR_SELECTION, forecast, procedure_errors, top

TOP = top(len(CANDIDATES))

# The target for the share of held-out points inside the 80% range, at every frequency.
BAND = (0.75, 0.85)
REPLICATIONS = 150


def _random_walk(n: int, rng: np.random.Generator) -> np.ndarray:
	return 100 + np.cumsum(rng.normal(0, 1, n))


def _trend_ar(n: int, rng: np.random.Generator) -> np.ndarray:
	noise = np.zeros(n)
	for t in range(1, n):
		noise[t] = 0.6 * noise[t - 1] + rng.normal()
	return 50 + 0.2 * np.arange(n) + 3 * noise


def _seasonal(m: int):
	def make(n: int, rng: np.random.Generator) -> np.ndarray:
		t = np.arange(n)
		return 200 + 0.5 * t + 20 * np.sin(2 * np.pi * t / m) + rng.normal(0, 4, n)

	return make


def _white_noise(n: int, rng: np.random.Generator) -> np.ndarray:
	return 100 + rng.normal(0, 5, n)


@pytest.mark.parametrize(
	("make", "season", "n", "horizon"),
	[
		(_random_walk, None, 30, 6),  # a short annual series: few backtest errors per step
		(_trend_ar, None, 60, 6),
		(_seasonal(12), 12, 120, 12),
		(_seasonal(4), 4, 60, 8),
		(_white_noise, None, 200, 10),
	],
	ids=["short annual random walk", "trend with AR(1) noise", "monthly season", "quarterly season", "noise"],
)
def test_forecast_range_neither_too_wide_nor_too_narrow_on_a_long_simulation(make, season, n, horizon):
	rng = np.random.default_rng(2024)
	shares, methods = [], set()
	for _ in range(REPLICATIONS):
		y = make(n + horizon, rng)
		out = forecast(y[:n], horizon, season)
		actual = y[n:]
		shares.append(float(np.mean((actual >= out["lower"]) & (actual <= out["upper"]))))
		methods.add("backtest errors" in out["method"])
	assert methods == {True}  # the range under test is the backtest one, not the in-sample fallback
	coverage = float(np.mean(shares))
	standard_error = float(np.std(shares, ddof=1) / np.sqrt(REPLICATIONS))
	assert standard_error < 0.025  # the simulation is long enough for the band to mean something
	assert BAND[0] <= coverage <= BAND[1], f"coverage {coverage:.3f} (+- {standard_error:.3f})"


def _errors(rows: int, steps: int, scale: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
	rng = np.random.default_rng(0)
	return {c: scale[c][:, None] * (1 + 0.1 * rng.random((rows, steps))) for c in CANDIDATES}


def test_forecast_range_selection_bias_procedure_errors_choose_from_what_was_known_at_each_origin():
	rows, steps = 14, 2
	good, bad = np.ones(rows), np.full(rows, 10.0)
	scale = {c: np.full(rows, 5.0) for c in CANDIDATES}
	# "ses" and "damped" missed least up to origin 10, then "ses" missed by far the most.
	scale["ses"] = np.r_[good[:10], bad[10:] * 5]
	scale["damped"] = 2 * good
	errors = _errors(rows, steps, scale)
	out = procedure_errors(errors)
	assert TOP == 2 and MIN_ORIGINS_FOR_SELECTION <= 10
	# Before enough origins precede it, the procedure forecast with the combination.
	for row in range(MIN_ORIGINS_FOR_SELECTION):
		assert np.allclose(out[row], errors["combination"][row])
	# At origins 10 and 11 only the errors of targets already seen count: ses still looked best, so
	# the procedure's error there is that of ses and damped, large as it turned out (no look-ahead).
	for row in (10, 11):
		assert np.allclose(out[row], (errors["ses"][row] + errors["damped"][row]) / 2)
	# At origin 13 the one-step errors of origins 0-12 and the two-step errors of 0-11 are known,
	# ses's misses among them: it is dropped.
	known = {c: np.abs(np.r_[errors[c][:13, 0], errors[c][:12, 1]]).mean() for c in CANDIDATES}
	last = sorted(CANDIDATES, key=known.__getitem__)[:TOP]
	assert "ses" not in last
	assert np.allclose(out[13], np.mean([errors[c][13] for c in last], axis=0))


def test_forecast_range_selection_bias_wider_than_the_chosen_pairs_own_errors():
	# Candidates equally good in truth: whichever pair missed least did so by luck, so the errors of
	# that pair over the same origins understate what the procedure misses by out of sample. Over
	# many draws the procedure's errors are the larger, as large as an unselected pair's.
	rng = np.random.default_rng(5)
	rows, steps = 12, 2
	later = slice(MIN_ORIGINS_FOR_SELECTION, rows)
	own, honest, unselected = [], [], []
	for _ in range(400):
		errors = {c: rng.normal(0, 1, (rows, steps)) for c in CANDIDATES}
		chosen = sorted(CANDIDATES, key=lambda c: float(np.mean(np.abs(errors[c]))))[:TOP]
		own.append(np.mean(np.abs(np.mean([errors[c][later] for c in chosen], axis=0))))
		honest.append(np.mean(np.abs(procedure_errors(errors)[later])))
		unselected.append(np.mean(np.abs((errors["ses"][later] + errors["theta"][later]) / 2)))
	spread = np.std(np.subtract(honest, own), ddof=1) / np.sqrt(len(own))
	assert np.mean(honest) - np.mean(own) > 3 * spread
	assert abs(np.mean(honest) - np.mean(unselected)) < 3 * np.std(unselected, ddof=1) / np.sqrt(len(own))


@pytest.mark.parametrize("k", [5, 8, 16])
def test_forecast_range_overshoot_no_wider_than_the_split_conformal_bound(k):
	# Split conformal prediction (Vovk et al.; Lei et al. 2018): the j-th smallest of k
	# exchangeable |errors| covers a new one with probability j / (k + 1), here j = ceil(0.8 (k + 1)).
	# A width that also took the larger of this and a normal width of the same errors covered more.
	rng = np.random.default_rng(11)
	draws = 6000
	errors = rng.standard_t(4, size=(draws, k))
	fresh = np.abs(rng.standard_t(4, size=draws))
	widths = np.array([range_from_errors(row[:, None], 1)[0] for row in errors])
	theory = np.ceil(0.8 * (k + 1)) / (k + 1)
	coverage = float(np.mean(fresh <= widths))
	assert abs(coverage - theory) < 3 * np.sqrt(theory * (1 - theory) / draws), (coverage, theory)


def test_forecast_range_overshoot_one_huge_backtest_miss_does_not_set_the_width():
	# Fifteen misses of about 1 and one of 50: the 80% width is the conformal one (about 1), not a
	# normal width of the same errors, which the one miss would blow up to about 16.
	column = np.r_[np.linspace(0.8, 1.2, 15), 50.0]
	width = range_from_errors(column[:, None], 1)[0]
	assert width == pytest.approx(np.sort(column)[13], abs=0.03)
	assert width < 1.3


# --- the conformal level, calibrated on the series' own backtest ----------------------


def test_forecast_range_calibrated_level_stays_at_80_where_errors_are_exchangeable():
	rng = np.random.default_rng(5)
	levels = [backtest.calibrated_level(rng.normal(0, 1, (40, 6)))[0] for _ in range(40)]
	assert np.median(levels) <= 0.83


def test_forecast_range_calibrated_level_rises_where_misses_grow():
	# The later origins miss by three times the earlier ones: a range from the earlier errors
	# would have held far fewer than 80% of the later misses, and the level says so.
	rng = np.random.default_rng(6)
	growing = rng.normal(0, 1, (40, 6)) * np.linspace(1, 3, 40)[:, None]
	level, score = backtest.calibrated_level(growing)
	assert level >= 0.9 and np.isfinite(score)
	wider = backtest.range_from_errors(growing, 6, level)
	assert np.all(wider > backtest.range_from_errors(growing, 6, 0.8))


def _growing_walk(n: int, rng: np.random.Generator) -> np.ndarray:
	return 100 + np.cumsum(rng.normal(0, 1, n) * np.exp(np.linspace(0, 1.5, n)))


def test_forecast_range_covers_a_series_whose_steps_grow(monkeypatch):
	# A calendar-free series whose period-to-period steps grow fourfold: ranges at the plain
	# conformal level, from misses smaller than the next ones, held about 0.71 of the points.
	def coverage() -> float:
		rng = np.random.default_rng(2024)
		shares = []
		for _ in range(REPLICATIONS):
			y = _growing_walk(110, rng)
			out = forecast(y[:100], 10)
			shares.append(float(np.mean((y[100:] >= out["lower"]) & (y[100:] <= out["upper"]))))
		return float(np.mean(shares))

	calibrated = coverage()
	monkeypatch.setattr(backtest, "LEVELS", np.array([0.8]))
	plain = coverage()
	assert calibrated >= 0.74 and calibrated - plain >= 0.02, (calibrated, plain)
