"""The forecast's 80% range: coverage on long simulations with known noise, and the backtest
errors it is drawn from (those of the whole procedure, selection included, with no look-ahead)."""

from __future__ import annotations

import numpy as np
import pytest

from analytics.forecast import CANDIDATES, MIN_ORIGINS_FOR_SELECTION, TOP, forecast, procedure_errors

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
