"""Speed, memory and forecast accuracy of the analytics engine. Prints figures; asserts nothing.

    .venv/bin/python benchmarks/analytics.py [--sizes 10000,100000,1000000] [--skip-catalogue-above N]
        [--sections 1,2,3] [--only KEY,KEY] [--each] [--repeat N]

`--sections` runs only the numbered parts below; `--only` limits part 2 to the analyses named
(e.g. `--sections 2 --sizes 1000000 --only items.bought_together,customers.rfm`), `--each`
prints every analysis's time in it, slowest first, and `--repeat N` takes the best of N runs
of each (on a shared machine one run can be several times too slow).

1. The monthly revenue trend with forecast, anomalies and change point (`sales.monthly_trend`,
   normalisation included) on generated sales lines, against a baseline that does what the
   published reference sample does: monthly resample-sum with pandas, month-on-month growth
   and a least-squares line (numpy polyfit) projected one month ahead.
2. The whole catalogue (all 100 analyses) on generated datasets sized from the sales rows,
   with the slowest analyses named and, for each over 1 s, how much of it is normalising the
   data (the contract) and how much the analysis itself; then the same analyses in one run
   sharing each dataset's normalisation (`runner.Shared`, as a dashboard runs them).
3. Forecast accuracy: sMAPE on a held-out final year over public monthly series shipped with
   statsmodels (CO2, El Niño) and generated ones, for this forecast, the seasonal-naive
   forecast and a straight-line projection.

Times are the best of a few runs after a warm-up; peak memory is tracemalloc's peak (numpy
and pandas report their buffers to it) in a separate run, so tracing does not slow the timing.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analytics import catalog, generate  # noqa: E402
from analytics.forecast import forecast  # noqa: E402
from analytics.runner import Shared, prepare, run, run_prepared  # noqa: E402


def timed(fn, repeat: int = 3) -> float:
	best = float("inf")
	for _ in range(repeat):
		gc.collect()
		start = time.perf_counter()
		fn()
		best = min(best, time.perf_counter() - start)
	return best


def peak_mib(fn) -> float:
	gc.collect()
	tracemalloc.start()
	fn()
	_, peak = tracemalloc.get_traced_memory()
	tracemalloc.stop()
	return peak / 2**20


def baseline(frame: pd.DataFrame) -> float:
	"""The reference sample: monthly resample-sum, month-on-month growth, polyfit line one month ahead."""
	monthly = frame.set_index("date")["amount"].resample("MS").sum()
	growth = monthly.pct_change() * 100
	slope, intercept = np.polyfit(np.arange(len(monthly)), monthly.to_numpy(), 1)
	next_month = intercept + slope * len(monthly)
	return float(next_month + growth.iloc[-1] * 0)


def trend_figures(sizes: list[int]) -> None:
	print("== Monthly trend + forecast + anomalies + change point (sales.monthly_trend) ==")
	print(f"{'rows':>10} {'time s':>8} {'peak MiB':>9} {'baseline s':>11} {'ratio':>6}")
	for n in sizes:
		frame = generate.sales(n, seed=1)
		frame["id"] = np.arange(
			n
		)  # integer line ids; string ids add about 1 s per million rows to the duplicate check
		run("sales.monthly_trend", frame.head(1000))
		ours = timed(lambda frame=frame: run("sales.monthly_trend", frame))
		memory = peak_mib(lambda frame=frame: run("sales.monthly_trend", frame))
		base = timed(lambda frame=frame: baseline(frame))
		print(f"{n:>10,} {ours:>8.3f} {memory:>9.1f} {base:>11.3f} {ours / base:>6.1f}")


def catalogue_figures(
	sizes: list[int], skip_above: int, only: list[str] | None = None, each: bool = False, repeat: int = 1
) -> None:
	analyses = [a for a in catalog.all_analyses() if not only or a.key in only]
	unknown = sorted(set(only or ()) - {a.key for a in analyses})
	if unknown:
		raise SystemExit(f"--only: no analysis {', '.join(unknown)}")
	print(f"\n== {'Whole catalogue' if not only else 'Catalogue analyses'} ({len(analyses)} analyses) ==")
	print(f"{'sales rows':>10} {'total s':>8} {'peak MiB':>9} {'slowest (s)':<60}")
	for n in sizes:
		if n > skip_above:
			print(f"{n:>10,} skipped (--skip-catalogue-above {skip_above:,})")
			continue
		data = generate.all_datasets(n, seed=0)
		times, parts = {}, {}
		for analysis in analyses:
			inputs = {name: data[name] for name in analysis.needs}
			run(analysis.key, {k: v.head(200) for k, v in inputs.items()})
			times[analysis.key] = timed(
				lambda key=analysis.key, inputs=inputs: run(key, inputs), repeat=repeat
			)
			if times[analysis.key] > 1.0:
				prepared = prepare(analysis, inputs)
				parts[analysis.key] = (
					timed(lambda a=analysis, i=inputs: prepare(a, i), repeat=repeat),
					timed(lambda a=analysis, p=prepared: run_prepared(a, p), repeat=repeat),
				)

		def everything(data=data):
			for analysis in analyses:
				run(analysis.key, {name: data[name] for name in analysis.needs})

		def shared_run(data=data):
			shared = Shared(analyses)
			for analysis in analyses:
				run(analysis.key, {name: data[name] for name in analysis.needs}, shared=shared)

		together = timed(shared_run, repeat=1)
		memory = peak_mib(everything)
		slowest = sorted(times.items(), key=lambda kv: -kv[1])[:3]
		text = ", ".join(f"{k} {v:.2f}" for k, v in slowest)
		print(f"{n:>10,} {sum(times.values()):>8.2f} {memory:>9.1f} {text:<60}")
		over = [k for k, v in times.items() if v > 1.0]
		largest = max(len(d) for d in data.values())
		print(f"{'':>10} largest dataset {largest:,} rows; analyses over 1 s: {len(over)}")
		print(
			f"{'':>10} all of them in one run, each dataset normalised once (as a dashboard does): {together:.2f} s"
		)
		for key in sorted(over, key=lambda k: -times[k]):
			normalise, compute = parts[key]
			print(
				f"{'':>10}   {key:<40} {times[key]:>6.2f} s (normalise {normalise:.2f}, compute {compute:.2f})"
			)
		if each:
			print(f"{'':>10} every analysis, slowest first:")
			for key, seconds in sorted(times.items(), key=lambda kv: -kv[1]):
				print(f"{'':>10}   {key:<40} {seconds:>6.2f} s")


def smape(actual: np.ndarray, predicted: np.ndarray) -> float:
	actual, predicted = np.asarray(actual, float), np.asarray(predicted, float)
	denominator = np.abs(actual) + np.abs(predicted)
	ratio = np.where(
		denominator == 0, 0.0, 2 * np.abs(actual - predicted) / np.where(denominator == 0, 1, denominator)
	)
	return float(ratio.mean() * 100)


def public_series() -> list[tuple[str, np.ndarray]]:
	import statsmodels.api as sm

	out = []
	co2 = sm.datasets.co2.load_pandas().data["co2"].resample("MS").mean().interpolate().to_numpy()
	for start in range(0, len(co2) - 96, 60):
		out.append(("CO2 (Mauna Loa, monthly)", co2[start : start + 96]))
	nino = sm.datasets.elnino.load_pandas().data.iloc[:, 1:].to_numpy().ravel()
	for start in range(0, len(nino) - 72, 72):
		out.append(("El Nino sea temperature", nino[start : start + 72]))
	return out


def accuracy_figures() -> None:
	print("\n== Forecast accuracy: sMAPE % on the held-out final 12 months (lower is better) ==")
	with warnings.catch_warnings():
		warnings.simplefilter("ignore")
		series = public_series() + [("generated", s) for s in generate.monthly_series(40, seed=7)]
	scores: dict[str, dict[str, list[float]]] = {}
	for name, values in series:
		train, test = values[:-12], values[-12:]
		line = np.polyfit(np.arange(len(train)), train, 1)
		methods = {
			"this forecast": forecast(train, 12, season_length=12)["point"],
			"seasonal naive": train[-12:],
			"straight line": np.polyval(line, np.arange(len(train), len(train) + 12)),
		}
		for method, predicted in methods.items():
			scores.setdefault(name, {}).setdefault(method, []).append(smape(test, predicted))
	methods = ["this forecast", "seasonal naive", "straight line"]
	print(f"{'series set':<26} {'n':>3} " + " ".join(f"{m:>15}" for m in methods))
	overall: dict[str, list[float]] = {m: [] for m in methods}
	for name, by_method in scores.items():
		count = len(by_method[methods[0]])
		print(f"{name:<26} {count:>3} " + " ".join(f"{np.mean(by_method[m]):>15.2f}" for m in methods))
		for m in methods:
			overall[m] += by_method[m]
	print(
		f"{'all series':<26} {len(overall[methods[0]]):>3} "
		+ " ".join(f"{np.mean(overall[m]):>15.2f}" for m in methods)
	)


def main() -> None:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	parser.add_argument("--sizes", default="10000,100000,1000000")
	parser.add_argument("--skip-catalogue-above", type=int, default=1_000_000)
	parser.add_argument("--sections", default="1,2,3", help="which parts to run, e.g. 2")
	parser.add_argument("--only", default="", help="part 2: only these analyses (KEY,KEY)")
	parser.add_argument("--each", action="store_true", help="part 2: print every analysis's time")
	parser.add_argument("--repeat", type=int, default=1, help="part 2: best of this many runs per analysis")
	args = parser.parse_args()
	sizes = [int(s) for s in args.sizes.split(",")]
	sections = {s.strip() for s in args.sections.split(",")}
	only = [k.strip() for k in args.only.split(",") if k.strip()] or None
	print(
		f"python {sys.version.split()[0]}, pandas {pd.__version__}, numpy {np.__version__}, {os.cpu_count()} CPUs"
	)
	start = time.perf_counter()
	run("sales.monthly_trend", generate.sales(500))
	print(f"first call (imports statsmodels): {time.perf_counter() - start:.2f} s\n")
	if "1" in sections:
		trend_figures(sizes)
	if "2" in sections:
		catalogue_figures(sizes, args.skip_catalogue_above, only, args.each, max(1, args.repeat))
	if "3" in sections:
		accuracy_figures()


if __name__ == "__main__":
	main()
